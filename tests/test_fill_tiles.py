"""``FillTiles``: pages a data-movement engine writes by its own L1 stores (reduce scalers, broadcast scalars,
masks), no NoC transaction and no tensor read. Counted in the producer's fill as a landed read, under the same window
rules; the stores land for the other agents of the core only at a drain (a blocking load of the last word written),
as a ``CopyTiles``'s do (tt-isa-documentation ``WormholeB0/TensixTile/BabyRISCV/MemoryOrdering.md``; docs/semantics.md
"Local-store fills"). A reduce scaler filled once and drained, waited once, never popped proves; the vendor helper as
written on Wormhole and Blackhole (``reduce_helpers_dataflow.inl:163-203``: stores, then ``push_back``, no drain) is
refuted by ``async-read-publish`` at its push; a fill before its reserve and a push of more pages than were filled are
refuted and replayed."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from builders import A, ep, prog
from hypothesis import Phase, find, settings
from hypothesis.strategies import SearchStrategy

from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    Buffer,
    BufferAt,
    Compute,
    Engine,
    FillTiles,
    If,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    Tensor,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.ops import op_text
from verispatial.ir.program import Program, walk
from verispatial.ir.serialize import dumps, load_program, loads, program_from_dict, program_to_dict, schema
from verispatial.mutate import judge, mutants
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import run_spin, spin_available, to_promela
from verispatial.report.consequences import group
from verispatial.strategies import blueprints, correct_programs

SCALER = 2  # c_2, the scaler buffer (one page), as softmax's program factory numbers it


def reduce_with_scaler(scaler_ops: tuple[Op, ...] | None = None, scaler_pages: int = 1, wait: int = 1) -> object:
    """Reader: the scaler tile by local stores into c_2 (``scaler_ops``; default reserve, fill, push), then 4 tiles
    of X through c_0. Compute: waits for the scaler once, reduces each X tile with it into c_16, never pops c_2.
    Writer: c_16 to Y."""
    if scaler_ops is None:
        scaler_ops = (Reserve(SCALER, 1), FillTiles(SCALER, 1, "reduce_scaler", drain=True), Push(SCALER, 1))
    reader = ep(A, Engine.READER, *scaler_ops,
                Loop("k", 4, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("k", 1),)), 1, 0), ReadBarrier(),
                              Push(0, 1))))
    compute = ep(A, Engine.COMPUTE, Wait(SCALER, wait),
                 Loop("k", 4, (Wait(0, 1), AcquireAcc(1, "bf16"),
                               Compute("reduce_row_sum", 1, (Operand(0, 1), Operand(SCALER, 1))),
                               Reserve(16, 1), PackAcc(16, 1), Push(16, 1), ReleaseAcc(), Pop(0, 1))))
    writer = ep(A, Engine.WRITER,
                Loop("k", 4, (Wait(16, 1), WriteTiles(16, "Y", Addr(0, (Term("k", 1),)), 1), WriteBarrier(),
                              Pop(16, 1))))
    tensors = (Tensor("X", (32, 128), "bf16", Role.INPUT), Tensor("Y", (32, 128), "bf16", Role.OUTPUT))
    bufs = [Buffer(i, f"c_{cb}", A, cb, 1, 2, "bf16") for i, cb in ((0, 0), (1, 1), (16, 16))]
    by_id = {b.id: b for b in bufs}
    # Buffer ids are dense: pad with the ids the program does not use as one-page buffers of their own cb index.
    allb = tuple(by_id.get(i, Buffer(i, f"c_{i}", A, i, 1, scaler_pages if i == SCALER else 1, "bf16"))
                 for i in range(17))
    p = prog(reader, compute, writer, buffers=allb, tensors=tensors)
    base, page = WORMHOLE.reserved_base, 2048
    mem, at = [], base
    for b in allb:
        mem.append(BufferAt(b.id, at, b.capacity * page))
        at += b.capacity * page
    return attrs.evolve(p, memory=tuple(mem))


def _verdicts(report: Report) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in report.results}


def _not_proved(report: Report) -> dict[str, Verdict]:
    return {n: v for n, v in _verdicts(report).items() if v != Verdict.PROVED}


def test_a_reduce_scaler_filled_once_waited_once_never_popped_proves() -> None:
    p = reduce_with_scaler()
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"


def test_the_fill_needs_no_barrier_before_its_push_and_reads_no_tensor() -> None:
    p = reduce_with_scaler()
    run = simulate(p)
    assert run.violations == ()
    # No pending NoC entry: removing every read barrier of the reader leaves the scaler push clean, only the
    # X pushes (whose pages a NoC read fills) publish unlanded data.
    reader = p.programs[0]  # type: ignore[attr-defined]
    loop = reader.ops[3]
    no_barrier = attrs.evolve(loop, body=tuple(o for o in loop.body if not isinstance(o, ReadBarrier)))
    q = attrs.evolve(p, programs=(attrs.evolve(reader, ops=(*reader.ops[:3], no_barrier)), *p.programs[1:]))  # type: ignore[attr-defined]
    found = simulate(q).violations
    publish = [v for v in found if v.rule == R.ASYNC_READ_PUBLISH]
    assert publish
    # the loop's push (path [3, ...]), never the scaler's (path [2])
    assert all(v.position.path is not None and v.position.path[0] == 3 for v in publish)


def test_a_fill_before_its_reserve_is_refuted_cb_write_unreserved() -> None:
    p = reduce_with_scaler((FillTiles(SCALER, 1, "reduce_scaler"), Reserve(SCALER, 1), Push(SCALER, 1)))
    report = certify(p, cache=False)
    bad = _not_proved(report)
    name = next(n for n in bad if n.startswith(R.CB_WRITE_UNRESERVED))
    assert bad[name] == Verdict.REFUTED
    r = next(r for r in report.results if r.name == name)
    assert r.counterexample is not None
    assert R.CB_WRITE_UNRESERVED in simulate(p).rules()


def test_a_push_of_more_pages_than_filled_is_refuted_cb_push_unfilled() -> None:
    p = reduce_with_scaler((Reserve(SCALER, 2), FillTiles(SCALER, 1, "reduce_scaler"), Push(SCALER, 2)),
                           scaler_pages=2)
    report = certify(p, cache=False)
    bad = _not_proved(report)
    name = next(n for n in bad if n.startswith(R.CB_PUSH_UNFILLED))
    assert bad[name] == Verdict.REFUTED
    assert R.CB_PUSH_UNFILLED in simulate(p).rules()


def test_fill_tiles_round_trips_and_its_document_meets_the_schema() -> None:
    p = reduce_with_scaler()
    text = dumps(p)
    assert '"op": "fill_tiles"' in text or '"op":"fill_tiles"' in text
    assert loads(text) == p
    jsonschema.Draft202012Validator(schema()).validate(program_to_dict(p))
    assert op_text(FillTiles(2, 1, "reduce_scaler")) == "fill_tiles(b2, 1, reduce_scaler)"


def test_a_fill_tiles_document_without_kind_takes_the_default() -> None:
    p = reduce_with_scaler()
    d = program_to_dict(p)
    fill = d["programs"][0]["ops"][1]
    assert fill == {"op": "fill_tiles", "into": SCALER, "tiles": 1, "kind": "reduce_scaler", "drain": True}
    del fill["kind"], fill["drain"]
    assert program_from_dict(d).programs[0].ops[1] == FillTiles(SCALER, 1)
    assert not FillTiles(SCALER, 1).drain  # a document without it says the stores are not drained


def test_the_promela_model_carries_the_fill_and_its_window_check() -> None:
    model = to_promela(reduce_with_scaler())
    assert "/* fill_tiles(b2, 1, reduce_scaler, drain) */" in model
    assert "st_mask[0] = 0;" in model
    broken = to_promela(reduce_with_scaler((FillTiles(SCALER, 1), Reserve(SCALER, 1), Push(SCALER, 1))))
    assert "fill[2] + 1 <= (rsv_end[2] - pushed[2])" in broken


def test_every_mutant_of_the_fill_is_killed_or_shown_correct() -> None:
    """Mutation testing (verispatial/mutate.py) over the ops around the fill: dropping it, one tile more, swapping it
    with its reserve or its push, each is rejected, refuted or failed-to-prove with the oracle showing it broken —
    never proved while broken."""
    p = load_program(Path(__file__).resolve().parent.parent / "examples" / "reduce_scaler.json")
    near = [m for m in mutants(p) if m.engine == "(0,0).reader" and m.path in ((0,), (1,), (2,))
            and "FillTiles" in m.what]
    assert {m.kind for m in near} >= {"drop", "pages+1", "swap"}
    for m in near:
        o = judge(m)
        assert o.killed, (m.what, o.status, o.verdict, o.detail)


def _fills(p: Program) -> bool:
    return any(isinstance(op, FillTiles) for ep in p.programs for op in walk(ep.ops))


def _first(strategy: SearchStrategy[Program], pred: Callable[[Program], bool]) -> Program:
    """The first program ``strategy`` draws (derandomized, no shrinking) that ``pred`` admits."""
    return find(strategy, pred, settings=settings(database=None, max_examples=3000, derandomize=True,
                                                  phases=(Phase.generate,)))


def test_the_correct_strategy_draws_fills_and_the_checker_proves_them() -> None:
    """``correct_programs`` (blueprints, not broken) builds pages by ``FillTiles``: such a program proves."""
    p = _first(correct_programs(), lambda p: _fills(p) and len(p.programs) <= 3)
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert simulate(p).violations == ()


def test_the_broken_strategy_draws_faulty_fills_and_the_checker_refutes_them() -> None:
    """``blueprints(broken=True)`` draws a fill before its reserve (that runs): refuted ``cb-write-unreserved``."""

    def early(p: Program) -> bool:
        return any(isinstance(a, FillTiles) and isinstance(b, Reserve) and a.into == b.buf
                   for ep in p.programs for body in _bodies(ep.ops) for a, b in pairwise(body)) \
            and R.CB_WRITE_UNRESERVED in simulate(p).rules()

    p = _first(blueprints(broken=True), early)
    report = certify(p, cache=False)
    assert any(r.verdict == Verdict.REFUTED and r.name.startswith(R.CB_WRITE_UNRESERVED) for r in report.results)


def _bodies(ops: tuple[Op, ...]) -> list[tuple[Op, ...]]:
    out = [ops]
    for op in ops:
        if isinstance(op, (Loop, If)):
            out += _bodies(op.body)
    return out


def spin_agrees_with_explorer(p: Program) -> tuple[Any, Any]:
    """SPIN's run of ``p``'s Promela model and the explorer's run of ``p``, after asserting that both finished and
    that their violated rules and the sites of those rules are equal (every interleaving)."""
    sp = run_spin(to_promela(p), timeout=60)
    ex = explore(p, max_states=200_000)
    assert sp.finished, sp.detail
    assert ex.complete
    keys = [e.key for e in p.programs]
    assert sp.rules == {f.violation.rule for f in ex.violations}
    assert {(r, keys[e], path) for r, e, path in sp.sites} == {
        (f.violation.rule, f.violation.position.engine, f.violation.position.path)
        for f in ex.violations if f.violation.position.path is not None}
    return sp, ex


@pytest.mark.skipif(not spin_available(), reason="spin is not installed (apt-get install -y spin)")
@pytest.mark.parametrize("variant", ["proved", "early", "short", "undrained"])
def test_spin_agrees_with_the_explorer_on_the_fill(variant: str) -> None:
    """The Promela model's fill: SPIN's violated rules and their sites equal the explorer's (every interleaving)."""
    ops = {"proved": None,
           "undrained": (Reserve(SCALER, 1), FillTiles(SCALER, 1), Push(SCALER, 1)),
           "early": (FillTiles(SCALER, 1), Reserve(SCALER, 1), Push(SCALER, 1)),
           "short": (Reserve(SCALER, 2), FillTiles(SCALER, 1), Push(SCALER, 2))}[variant]
    p = reduce_with_scaler(ops, scaler_pages=2 if variant == "short" else 1)
    sp, ex = spin_agrees_with_explorer(p)
    assert sp.deadlock == bool(ex.deadlocks)
    assert (sp.rules == set()) == (variant == "proved")


def test_the_vendor_scaler_helper_pushes_stores_no_drain_has_landed() -> None:
    """``prepare_reduce_scaler`` and ``generate_bcast_unary_scalar`` as the ttnn 0.72.0 and 0.81.1 wheels write them
    for Wormhole and Blackhole: stores, then ``push_back``, nothing between (only Quasar flushes). The push's
    stream-register store may be processed before the stores land in L1 ("Store then store", different regions), so
    the unpacker may read the old bytes: ``async-read-publish`` at the push, replayed; the explorer finds it too.
    With the drain (a blocking load of the last word, ``ckernel::load_blocking``) it proves, and ``undrain`` is the
    mutant that breaks it."""
    undrained = reduce_with_scaler((Reserve(SCALER, 1), FillTiles(SCALER, 1, "reduce_scaler"), Push(SCALER, 1)))
    assert [(v.rule, v.position.path) for v in simulate(undrained).violations] == [(R.ASYNC_READ_PUBLISH, (2,))]
    report = certify(undrained, cache=False)
    (r,) = [r for r in report.results if r.verdict is Verdict.REFUTED]
    assert r.name == f"{R.ASYNC_READ_PUBLISH}:(0,0).reader:[2]"
    assert "fill_tiles or copy_tiles" in r.reason
    assert r.counterexample is not None
    assert "replay" in r.counterexample or "replayed_by" in r.counterexample
    # what assumed the publish (the source-reuse proof) is grouped under it, nothing else fails
    grouping = group(report, undrained)
    assert grouping.others == ()
    assert any(f.violation.rule == R.ASYNC_READ_PUBLISH for f in explore(undrained).violations)
    drained = reduce_with_scaler()
    (m,) = [m for m in mutants(drained) if m.kind == "undrain"]
    assert m.path == (1,)
    assert judge(m).status == "refuted"


def test_a_drain_of_a_later_fill_lands_the_earlier_stores_too() -> None:
    """Same-region stores are processed in order: a drained fill of another buffer lands every earlier store of the
    engine (the blocking load reads the last word written), so only the first push, before it, is a finding."""
    other = 1
    ops = (Reserve(SCALER, 1), FillTiles(SCALER, 1), Reserve(other, 1), FillTiles(other, 1, drain=True),
           Push(SCALER, 1), Push(other, 1))
    p = reduce_with_scaler(ops)
    compute = p.programs[1]  # type: ignore[attr-defined]
    q = attrs.evolve(p, programs=(p.programs[0], attrs.evolve(compute, ops=(Wait(other, 1), Pop(other, 1),  # type: ignore[attr-defined]
                                                                             *compute.ops)), *p.programs[2:]))  # type: ignore[attr-defined]
    assert simulate(q).violations == ()
    late = attrs.evolve(q, programs=(attrs.evolve(q.programs[0], ops=(*ops[:2], Push(SCALER, 1), *ops[2:4],  # type: ignore[attr-defined]
                                                                      Push(other, 1), *q.programs[0].ops[6:])),  # type: ignore[attr-defined]
                                     *q.programs[1:]))  # type: ignore[attr-defined]
    assert [(v.rule, v.position.path) for v in simulate(late).violations] == [(R.ASYNC_READ_PUBLISH, (2,))]
