"""Exact arithmetic shortcuts (``smt.shortcuts``) give the verdicts, reasons and counterexamples of the reference
route that asks Z3 every query: tile hulls for bounds, an interval sweep for memory, page multiples for ring
alignment, constant totals for balance, an enumerated occurrence stream for the schedule's order check.

Each case sits on a boundary (last tile inside / first tile outside, touching / overlapping byte ranges, pages that
divide the capacity / do not); a refutation must still come from the solver's model, identical to the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from builders import A, buf, ep, prog
from hypothesis import given, settings

from verispatial.certify import schedule, smt
from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.families.cb import encoding as ring_family
from verispatial.families.memory import encoding as memory
from verispatial.families.tensors import encoding as bounds
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Dynamic,
    Engine,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Tensor,
    Term,
    Trip,
    Wait,
)
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.strategies import programs

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def results(r: Report) -> list[tuple[str, str, str, str, str]]:
    return [(x.family, x.name, x.verdict.value, _method_free(x.family, x.verdict, x.reason),
             json.dumps(x.counterexample, sort_keys=True, default=str)) for x in r.results]


def _method_free(family: str, verdict: Verdict, reason: str) -> str:
    """``reason``, less the method of a deadlock proof: a short constant-count run proves by itself with the shortcuts
    (``schedule.RUN_PER_LEAF``, an exhaustive witness) where the reference route checks the affine witness or, when no
    witness applies, asks the stuck-state reachability query (``families/deadlock/encoding._component``); each reason
    names its own method, so what is compared of a deadlock proof is its verdict and its component's size."""
    if family == "deadlock" and verdict == Verdict.PROVED and reason.split(", ")[0].endswith(" engines"):
        return reason.split(", ")[0] + ", (method)"
    return reason


def same_as_reference(p: Program) -> Report:
    """Certify ``p`` with the shortcuts and on the reference route; every result must be identical."""
    fast = certify(p)
    with smt.reference_route():
        assert not smt.shortcuts()
        ref = certify(p)
    assert smt.shortcuts()
    assert results(fast) == results(ref)
    return fast


class NoQuery:
    """Stands in for ``smt.Query`` where a shortcut must decide without asking the solver."""

    def __init__(self, *_a: Any, **_k: Any) -> None:
        raise AssertionError("a query was asked where the arithmetic decides")


def reader(addr: Addr, count: int | str = 4, tiles: int = 1, trips: tuple[Trip, ...] = ()) -> Program:
    """One site: the reader reads ``tiles`` tiles of X (16 tiles) at ``addr`` per iteration, the compute engine pops."""
    fill: tuple[Op, ...] = (Loop("k", count, (Reserve(0, 1), ReadTiles("X", addr, tiles, 0), ReadBarrier(), Push(0, 1))),)
    drain: tuple[Op, ...] = (Loop("k", count, (Wait(0, 1), Pop(0, 1))),)
    p = prog(ep(A, Engine.READER, *fill), ep(A, Engine.COMPUTE, *drain),
             buffers=(Buffer(0, "c0", A, 0, 4, 2, "bf16"),), trips=trips,
             tensors=(Tensor("X", (32, 32 * 16), "bf16", Role.INPUT),))
    p = Program(p.name, p.target, p.tensors, p.buffers, p.semaphores, p.groups, p.trips, p.programs,
                memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * 4 * 2048),))
    assert validate(p) == []
    return p


def bounds_verdict(p: Program) -> Verdict:
    r = same_as_reference(p)
    (res,) = [x for x in r.results if x.family == "bounds"]
    return res.verdict


@pytest.mark.parametrize(("addr", "count", "tiles", "trips", "verdict"), [
    (Addr(12, (Term("k", 1),)), 4, 1, (), Verdict.PROVED),          # tiles 12..15 of 16: the last one inside
    (Addr(13, (Term("k", 1),)), 4, 1, (), Verdict.REFUTED),         # tile 16
    (Addr(11, (Term("k", 1),)), 4, 2, (), Verdict.PROVED),          # two tiles each, up to tile 15
    (Addr(3, (Term("k", -1),)), 4, 1, (), Verdict.PROVED),          # 3 down to 0
    (Addr(2, (Term("k", -1),)), 4, 1, (), Verdict.REFUTED),         # down to tile -1
    (Addr(13, (Term("k", 1),)), "t", 1, (Trip("t", 3),), Verdict.PROVED),   # k <= 2 (t at most 3)
    (Addr(14, (Term("k", 1),)), "t", 1, (Trip("t", 3),), Verdict.REFUTED),  # k = 2 reaches tile 16 when t = 3
    (Addr(0, (), Dynamic("i", 0, 7, 2)), 4, 2, (), Verdict.PROVED),         # 0..14, two tiles: up to 15
    (Addr(0, (), Dynamic("i", 0, 8, 2)), 4, 1, (), Verdict.REFUTED),        # 16 when i = 8
    (Addr(40, (Term("k", 1),)), 0, 1, (), Verdict.PROVED),          # a loop that never runs: the hull is not
])                                                                  # inside, so the query proves it
def test_bounds_by_hull_agree_with_the_query(addr: Addr, count: int | str, tiles: int, trips: tuple[Trip, ...],
                                             verdict: Verdict) -> None:
    assert bounds_verdict(reader(addr, count, tiles, trips)) == verdict


def test_a_hull_inside_the_tensor_asks_no_query(monkeypatch: pytest.MonkeyPatch) -> None:
    p = reader(Addr(12, (Term("k", 1),)))
    monkeypatch.setattr(bounds, "Query", NoQuery)
    (res,) = bounds.check_bounds(analyse(p))
    assert res.verdict == Verdict.PROVED


def two_buffers(off0: int, size0: int, off1: int, size1: int, alias: bool = False) -> Program:
    """Two buffers on site A at the given byte ranges (b1 may alias b0); each filled by the reader, drained by compute."""
    b0 = Buffer(0, "c0", A, 0, 1, 2, "bf16")
    b1 = Buffer(1, "c1", A, 1, 1, 2, "bf16", alias_of=0 if alias else None)
    ops_r: list[Op] = []
    ops_c: list[Op] = []
    for b in (0, 1):
        ops_r += [Reserve(b, 1), Push(b, 1)]
        ops_c += [Wait(b, 1), Pop(b, 1)]
    p = prog(ep(A, Engine.READER, *ops_r), ep(A, Engine.COMPUTE, *ops_c), buffers=(b0, b1))
    return Program(p.name, p.target, p.tensors, p.buffers, p.semaphores, p.groups, p.trips, p.programs,
                   memory=(BufferAt(0, off0, size0), BufferAt(1, off1, size1)))


def disjoint_verdict(p: Program) -> Verdict:
    r = same_as_reference(p)
    (res,) = [x for x in r.results if x.name.startswith("memory-disjoint")]
    return res.verdict


def test_memory_sweep_agrees_with_the_query() -> None:
    base, size = WORMHOLE.reserved_base, 2 * 2048
    assert disjoint_verdict(two_buffers(base, size, base + size, size)) == Verdict.PROVED   # touching ranges
    assert disjoint_verdict(two_buffers(base + size, size, base, size)) == Verdict.PROVED   # listed out of order
    assert disjoint_verdict(two_buffers(base, size, base + size - 32, size)) == Verdict.REFUTED  # one alignment step
    assert disjoint_verdict(two_buffers(base + 64, size, base, 2 * size)) == Verdict.REFUTED  # one inside the other
    assert disjoint_verdict(two_buffers(base, size, base, size, alias=True)) == Verdict.PROVED  # same root: no pair


def test_disjoint_ranges_ask_no_query(monkeypatch: pytest.MonkeyPatch) -> None:
    base, size = WORMHOLE.reserved_base, 2 * 2048
    monkeypatch.setattr(memory, "Query", NoQuery)
    got = memory.check_memory(two_buffers(base, size, base + size, size))
    assert [r.verdict for r in got if r.name.startswith("memory-disjoint")] == [Verdict.PROVED]


def ring(cap: int, pushes: tuple[int, ...], pops: tuple[int, ...], count: int | str = 3,
         trips: tuple[Trip, ...] = ()) -> Program:
    """Buffer 0 (``cap`` pages) on A: each iteration the reader reserves and pushes each of ``pushes``, compute
    waits and pops each of ``pops``. The buffer is persistent, so its balance is asked (a buffer the launch's end
    resets may end holding pages)."""
    fill: list[Op] = []
    for n in pushes:
        fill += [Reserve(0, n), Push(0, n)]
    drain: list[Op] = []
    for n in pops:
        drain += [Wait(0, n), Pop(0, n)]
    return prog(ep(A, Engine.READER, Loop("k", count, tuple(fill))), ep(A, Engine.COMPUTE, Loop("k", count, tuple(drain))),
                buffers=(buf(0, cap=cap, persistent=True),), trips=trips)


P, R = Verdict.PROVED, Verdict.REFUTED


@pytest.mark.parametrize(("cap", "pushes", "pops", "count", "straddle", "balance"), [
    (4, (2,), (2,), 3, P, P),             # 2 divides 4: both by arithmetic
    (4, (4,), (1, 1, 1, 1), 3, P, P),
    (6, (4,), (4,), 3, R, P),             # 4 does not divide 6: the query refutes (running sum 4, 4 + 4 > 6)
    (4, (1, 2, 1), (2, 2), 3, P, P),      # mixed sizes: the query proves (sums 0, 1, 3: every block fits)
    (4, (3,), (3,), 0, P, P),             # never runs, 3 does not divide 4: the query proves
    (4, (2,), (2,), "t", P, P),           # a trip count: balance by the query
    (4, (2,), (1,), 3, P, R),             # unbalanced constant totals (6 and 3): refuted from the query's model
])
def test_ring_and_balance_shortcuts_agree_with_the_queries(cap: int, pushes: tuple[int, ...], pops: tuple[int, ...],
                                                           count: int | str, straddle: Verdict, balance: Verdict) -> None:
    r = same_as_reference(ring(cap, pushes, pops, count, (Trip("t", 3),) if count == "t" else ()))
    got = {x.name: x.verdict for x in r.results}
    assert (got["cb-straddle:b0"], got["balance-cb:b0"]) == (straddle, balance)


def test_page_multiples_and_constant_totals_ask_no_query(monkeypatch: pytest.MonkeyPatch) -> None:
    from verispatial.certify.checker import facts_getter

    p = ring(4, (2,), (1, 1), 3)
    monkeypatch.setattr(ring_family, "Query", NoQuery)
    a = analyse(p)
    assert [r.verdict for r in ring_family.check_straddle(a, facts_getter(a, None))] == [Verdict.PROVED]
    assert [r.verdict for r in ring_family.check_cb_balance(a, trusted={0})] == [Verdict.PROVED]


def test_order_by_enumeration_is_the_order_obligation() -> None:
    p = ring(4, (2,), (2,), "t", (Trip("t", 3),))
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive(a, comp, {"t": 3})
    assert isinstance(s, schedule.Schedule)
    for e in sorted(comp):
        assert schedule.order_by_enumeration(a, e, s, None)
        assert schedule.order_by_enumeration(a, e, s, {"t": 2})
    # A schedule whose period is too short for the loop body puts iteration 1's reserve before iteration 0's push.
    e = "(0,0).reader"
    bad = schedule.Schedule(dict(s.offset), {**s.period, (e, (0,)): 1})
    assert not schedule.order_by_enumeration(a, e, bad, None)
    with smt.reference_route():
        assert not schedule.check(a, comp, bad, None).proved
    assert not schedule.check(a, comp, bad, None).proved


def _order_by_stream(a: Any, e: str, s: schedule.Schedule, trips: dict[str, int]) -> bool:
    """The order obligation over one trip assignment read off ``schedule._stream`` (the occurrence generator the
    derivation runs on): each occurrence's time from its own loop indices, in program order, strictly increasing."""
    view = a.views[e]
    last = None
    for lf, it in schedule._stream(view, {lf.path: lf for lf in schedule.r_leaves(view)}, trips):
        tau = s.offset[(e, lf.index)] + sum(s.period[(e, lc.path)] * k for lc, k in zip(lf.loops, it, strict=True))
        if last is not None and tau <= last:
            return False
        last = tau
    return True


def test_order_by_enumeration_walks_the_occurrence_stream() -> None:
    # Nested loops, an inner count read from a trip (0: its outer loop's middle iterations run no R leaf and are
    # skipped to the last), leaves before and after the inner loop: every period and offset moved by -1, 0 and +1
    # gives schedules in and out of order, each decided as the occurrence stream decides it.
    inner = Loop("j", "t", (Reserve(0, 1), Push(0, 1)))
    p = prog(ep(A, Engine.READER, Loop("k", 3, (Reserve(0, 1), inner, Push(0, 1)))),
             ep(A, Engine.COMPUTE, Loop("k", 3, (Wait(0, 1), Pop(0, 1), Loop("j", "t", (Wait(0, 1), Pop(0, 1)))))),
             buffers=(buf(0, cap=8),), trips=(Trip("t", 2),))
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive(a, comp, {"t": 2})
    assert isinstance(s, schedule.Schedule)
    seen = set()
    for e in sorted(comp):
        for d in (-1, 0, 1):
            for key in [None, *s.period, *s.offset]:
                moved = schedule.Schedule(
                    {k: v + d if k == key else v for k, v in s.offset.items()},
                    {k: v + d if k in (key, None) else v for k, v in s.period.items()})
                want = all(_order_by_stream(a, e, moved, {"t": t}) for t in range(3))
                assert schedule.order_by_enumeration(a, e, moved, None) == want
                for t in range(3):
                    assert schedule.order_by_enumeration(a, e, moved, {"t": t}) == _order_by_stream(a, e, moved, {"t": t})
                seen.add(want)
    assert seen == {True, False}


@pytest.mark.parametrize("name", ["pipeline_small.json", "broken/a_reserve_over_capacity.json",
                                  "broken/b_ring_straddle.json", "broken/f_memory_overlap.json"])
def test_examples_certify_as_on_the_reference_route(name: str) -> None:
    same_as_reference(load_program(EXAMPLES / name))


@settings(max_examples=max(10, settings().max_examples // 80))
@given(programs())
def test_random_programs_certify_as_on_the_reference_route(p: Program) -> None:
    same_as_reference(p)


def test_exporting_queries_takes_the_reference_route(tmp_path: Path) -> None:
    with smt.export_smt2(tmp_path):
        assert not smt.shortcuts()
    assert smt.shortcuts()


def grid_matmul(cols: int, rows: int) -> Program:
    """A [128,256] @ [256,256] bf16 matmul on a ``cols`` x ``rows`` Wormhole grid (spill-and-reload accumulation):
    its columns and rows are isomorphic up to translation."""
    from verispatial.ir.graph import GraphBuilder
    from verispatial.ir.target import WORMHOLE as WH
    from verispatial.passes.compile import compile_section
    from verispatial.passes.pipeline import Pipeline, capped_passes

    b = GraphBuilder("g")
    b.tensor("a", [128, 256], role="input")
    b.tensor("w", [256, 256], role="param")
    b.tensor("o", [128, 256], role="output")
    b.matmul("mm", "a", "w", "o")
    p, _ = compile_section(b.build(), 0, WH, Pipeline(capped_passes(max_cols=cols, max_rows=rows, acc_form="spill_reload")))
    return p


def test_isomorphic_enabling_queries_are_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    p = grid_matmul(4, 2)
    a = analyse(p)
    (comp,) = a.components
    run = schedule.prove(a, comp, a.trip_sets())  # its run is short: it proves by itself, no query asked
    assert (run.proved, run.exhaustive, run.queries) == (True, True, 0)
    monkeypatch.setattr(schedule, "RUN_PER_LEAF", 0)  # the symbolic check, whose shortcuts are what is tested here
    fast = schedule.prove(a, comp, a.trip_sets())
    with smt.reference_route():
        ref = schedule.prove(a, comp, a.trip_sets())
    assert (fast.proved, fast.queries, ref.proved, ref.queries, ref.settled) == (True, ref.queries, True, ref.queries, 0)
    # every order check is enumerated; of the enabling checks the translated columns and rows reuse proofs
    orders = sum(1 for e in comp if len(schedule.r_leaves(a.views[e])) >= 2)
    assert fast.settled > orders


def enabling_keys(p: Program, rlimit: int = 1) -> dict[tuple[str, int], str]:
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive(a, comp, {})
    assert isinstance(s, schedule.Schedule)
    forms: dict[frozenset[str], Any] = {}
    keys = {}
    for e in sorted(comp):
        for lf in schedule.r_leaves(a.views[e]):
            if isinstance(lf.op, schedule.BLOCKING):
                movers = sorted(schedule._movers(a, lf))
                keys[(e, lf.index)] = schedule._enabling_key(a, e, lf, movers, s, None, rlimit, forms, p.rearmed_words())
    return keys


def test_enabling_keys_separate_what_the_query_reads() -> None:
    p = grid_matmul(4, 1)
    a = analyse(p)
    keys = enabling_keys(p)

    def twin(e: str) -> str:
        return e.replace("(2,0)", "(1,0)")

    # Blocking ops of column 2 whose query is column 1's translated (e.g. compute waiting on its own site's buffers).
    shared = [(e, i) for (e, i) in keys if e.startswith("(2,0)") and keys[(twin(e), i)] == keys[(e, i)]]
    assert shared
    assert set(enabling_keys(p, rlimit=2).values()).isdisjoint(keys.values())  # the budget is part of the key
    # One page more in a buffer such an op tests (same schedule): its key no longer equals its twin's.
    (comp,) = a.components
    s = schedule.derive(a, comp, {})
    assert isinstance(s, schedule.Schedule)
    e, i = next((e, i) for e, i in shared if isinstance(getattr(a.views[e].leaves[i].op, "buf", None), int))
    lf = a.views[e].leaves[i]
    movers = sorted(schedule._movers(a, lf))
    b = lf.op.buf  # type: ignore[union-attr]
    bigger = attrs.evolve(p, buffers=tuple(attrs.evolve(x, capacity=x.capacity + 1) if x.id == b else x for x in p.buffers))
    ab = analyse(bigger)
    assert schedule._enabling_key(ab, e, ab.views[e].leaves[i], movers, s, None, 1, {}, bigger.rearmed_words()) != keys[(e, i)]
    # A schedule offset moved by one on that leaf changes its key.
    shifted = schedule.Schedule({**s.offset, (e, i): s.offset[(e, i)] + 1}, s.period)
    assert schedule._enabling_key(a, e, lf, movers, shifted, None, 1, {}, p.rearmed_words()) != keys[(e, i)]


def test_a_derivation_longer_than_its_limit_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    p = ring(4, (2,), (2,), 3)
    a = analyse(p)
    (comp,) = a.components
    # 3 iterations x 2 R leaves per engine (reserve, push / wait, pop): 12 occurrences in all
    monkeypatch.setattr(schedule, "DERIVE_LIMIT", 11)
    monkeypatch.setattr(schedule, "_Concrete", NoQuery)  # the run must not start
    assert schedule.derive(a, comp, {}) == "the derivation run would execute 12 occurrences, more than 11"
    monkeypatch.undo()
    monkeypatch.setattr(schedule, "DERIVE_LIMIT", 12)
    assert isinstance(schedule.derive(a, comp, {}), schedule.Schedule)


def test_multicast_slots_by_lockstep_counts_agree_with_the_congruence(monkeypatch: pytest.MonkeyPatch) -> None:
    from verispatial.families.multicast import encoding as multicast

    p = grid_matmul(2, 2)
    asked: list[str] = []
    solve = multicast.solve_each

    def spy(a: Any, build: Any, name: str, *rest: Any, **kw: Any) -> Any:
        if smt.shortcuts():
            asked.append(name)
        return solve(a, build, name, *rest, **kw)

    monkeypatch.setattr(multicast, "solve_each", spy)
    r = same_as_reference(p)
    slots = [x for x in r.results if x.name.startswith("mcast-slot")]
    assert slots
    assert all(x.verdict == Verdict.PROVED for x in slots)
    # on the default route each was proved by the stronger, easier question alone
    assert [n for n in asked if n.startswith("mcast-slot")] == [f"{x.name}:lockstep" for x in slots]
