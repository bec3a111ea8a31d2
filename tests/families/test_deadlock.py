"""The deadlock family (verispatial/families/deadlock/): the schedule witness (certify/schedule.py) on a wide
multicast grid — the 8x4 matmul section proves, and broken variants of it are refuted with replayed counterexamples
(a witness that does not check never passes) — and the cheap routes of the deadlock proof (issue 17: the TT-Lang
matmul tutorials): the schedule candidate from a shrunk run stretched to the full counts
(``schedule.derive_stretched``), the long derivation run made only after the search (``schedule.LONG_RUN``), and the
one symbolic query over every trip value before the trips are enumerated (``deadlock._symbolic_unsat``). Each only
changes what is tried first: a program the interpreter deadlocks is still refuted, with a replayed counterexample."""

from __future__ import annotations

import functools

import attrs
import pytest
from builders import A, buf, ep, prog

from verispatial.certify import schedule
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.driver.search import propose_deadlock
from verispatial.families.deadlock import encoding as deadlock
from verispatial.families.deadlock.encoding import check_deadlock
from verispatial.ir import Trip
from verispatial.ir.core import Engine, Site, WaitCond
from verispatial.ir.graph import GraphBuilder
from verispatial.ir.ops import AtomicBarrier, Loop, Op, Pop, Push, Reserve, SemInc, SemSet, SemWait, Wait
from verispatial.ir.program import Buffer, EngineProgram, Program, Semaphore
from verispatial.ir.target import WORMHOLE
from verispatial.passes.compile import compile_section
from verispatial.passes.pipeline import Pipeline, capped_passes
from verispatial.petri.interp import simulate


@functools.cache
def grid(cols: int, rows: int) -> Program:
    """The prefill-like matmul [128,256] @ [256,256] (bf16) on a ``cols`` x ``rows`` Wormhole grid, accumulating by
    spill and reload over its 4 K blocks (the vendor example's form: the longest compute programs, the case the
    whole-component search cannot decide; the default streaming form of a 1x1-tile site block it can)."""
    b = GraphBuilder("g")
    b.tensor("a", [128, 256], role="input")
    b.tensor("w", [256, 256], role="param")
    b.tensor("o", [128, 256], role="output")
    b.matmul("mm", "a", "w", "o")
    p, _ = compile_section(b.build(), 0, WORMHOLE, Pipeline(capped_passes(max_cols=cols, max_rows=rows,
                                                                                  acc_form="spill_reload")))
    return p


def _edit(p: Program, key: str, f: object) -> Program:
    progs = tuple(attrs.evolve(ep, ops=f(ep.ops)) if ep.key == key else ep for ep in p.programs)  # type: ignore[operator]
    return attrs.evolve(p, programs=progs)


def _map(ops: tuple[Op, ...], fn: object) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Loop):
            out.append(attrs.evolve(op, body=_map(op.body, fn)))
        else:
            new = fn(op)  # type: ignore[operator]
            if new is not None:
                out.append(new)
    return tuple(out)


def test_8x4_matmul_deadlock_proves_by_schedule_witness(monkeypatch: pytest.MonkeyPatch) -> None:
    p = grid(8, 4)
    assert len(p.programs) == 96
    a = analyse(p)
    trusted = {b.id for b in p.buffers}
    (search,) = check_deadlock(a, trusted, method="search", search=propose_deadlock)
    assert search.verdict == Verdict.FAILED  # the whole-component query exhausts its budget
    # Its loops have constant counts and its run is short (2,356 occurrences over 1,140 counter ops): the run proves.
    (run,) = check_deadlock(a, trusted, method="schedule", search=propose_deadlock)
    assert (run.name, run.verdict) == ("deadlock:(0,0).compute+95", Verdict.PROVED)
    assert run.reason == ("96 engines, every one of its 2356 counter occurrences executed in an as-soon-as-possible "
                          "run (an exhaustive schedule witness)")
    monkeypatch.setattr(schedule, "RUN_PER_LEAF", 0)  # the affine witness, checked symbolically, proves it too
    (dl,) = check_deadlock(a, trusted, method="schedule", search=propose_deadlock)
    assert (dl.name, dl.verdict) == ("deadlock:(0,0).compute+95", Verdict.PROVED)
    assert dl.reason == "96 engines, schedule witness checked symbolically over loop indices"
    assert simulate(p).status == "terminated"


def _drop_ready_inc(p: Program) -> Program:
    """Receiver (3,0) never increments its sender's ready counter (in0 row multicast)."""
    return _edit(p, "(3,0).reader", lambda ops: _map(ops, lambda op: None if isinstance(op, SemInc) and op.sem == 0 else op))


def _ready_count_off(p: Program) -> Program:
    """The row sender (0,1) waits for one more ready increment than it has receivers."""
    return _edit(p, "(0,1).reader", lambda ops: _map(
        ops, lambda op: attrs.evolve(op, value=op.value + 1) if isinstance(op, SemWait) and op.sem == 0 else op))


def cut(p: Program, buf: int, capacity: int) -> Program:
    """Buffer ``buf`` with ``capacity`` pages (its memory map entry shrunk to match)."""
    old = p.buffers[buf].capacity
    return attrs.evolve(
        p, buffers=tuple(attrs.evolve(x, capacity=capacity) if x.id == buf else x for x in p.buffers),
        memory=tuple(attrs.evolve(m, size=m.size * capacity // old) if m.buf == buf else m for m in p.memory))


def _depth_cut(p: Program) -> Program:
    """Receiver (2,1)'s in0 buffer cut to 2 pages: its 4-page reservation can never be granted."""
    (in0,) = [b.id for b in p.buffers if b.name == "c_0" and (b.site.x, b.site.y) == (2, 1)]
    return cut(p, in0, 2)


@pytest.mark.parametrize("mutate", [_drop_ready_inc, _ready_count_off, _depth_cut],
                         ids=["ready-inc-dropped", "ready-wait-off-by-one", "cb-depth-cut"])
def test_broken_wide_grid_is_refuted_with_a_replayed_deadlock(mutate: object) -> None:
    p = mutate(grid(8, 2))  # type: ignore[operator]
    assert simulate(p).status == "deadlock"
    a = analyse(p)
    (dl,) = check_deadlock(a, {b.id for b in p.buffers}, search=propose_deadlock)
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None
    assert dl.counterexample["kind"] == "deadlock"
    assert dl.counterexample["replayed_by"]


def _sem_program(name: str, programs: tuple[EngineProgram, ...], sites: tuple[Site, ...]) -> Program:
    sems = tuple(Semaphore(i, f"s{i}", sites) for i in range(2))
    return Program(name=name, target=WORMHOLE, semaphores=sems, programs=programs)


def test_an_overshot_equality_wait_is_never_read_as_at_least() -> None:
    # Two increments of one word, one ``== 1`` wait: whichever lands second overshoots and the wait never returns.
    # The schedule witness reads an equality as ">=" only where exact counting proved no overshoot; here it did
    # not, so the search decides and refutes (it used to be reported proved next to the refuted overshoot).
    # (The second increment comes from another core: a compute engine issues no NoC atomic.)
    a, b = Site(0, 0), Site(1, 0)
    p = _sem_program("overshoot", (
        EngineProgram(a, Engine.READER, (SemWait(0, WaitCond.EQ, 1),)),
        EngineProgram(a, Engine.WRITER, (SemInc(0, a, 1), AtomicBarrier())),
        EngineProgram(b, Engine.WRITER, (SemInc(0, a, 1), AtomicBarrier())),
    ), (a,))
    report = certify(p)
    deadlock = [r for r in report.results if r.family == "deadlock"]
    assert [(r.name, r.verdict) for r in deadlock] == [("deadlock:(0,0).reader+2", Verdict.REFUTED)]
    assert deadlock[0].reason.startswith("deadlock after ")
    assert "sem_wait(sem0, eq, 1): sem0@(0,0)=2, waits ==1" in deadlock[0].reason
    # Even when the witness is asked for, a word without proved exact counting sends the component to the search.
    (dl,) = check_deadlock(analyse(p), set(), inexact={"sem0@(0,0)"}, method="schedule", search=propose_deadlock)
    assert dl.verdict == Verdict.REFUTED
    assert dl.reason.startswith("deadlock after ")


def test_ping_pong_without_its_reset_is_a_refuted_deadlock() -> None:
    # (1,0) resets its word after each wait; (0,0) forgets to: its second ``== 1`` wait sees 2.
    a, b = Site(0, 0), Site(1, 0)
    p = _sem_program("pingpong", (
        EngineProgram(a, Engine.READER, (Loop("k", 2, (SemInc(0, b, 1), SemWait(1, WaitCond.EQ, 1))), AtomicBarrier())),
        EngineProgram(b, Engine.READER, (Loop("k", 2, (SemWait(0, WaitCond.EQ, 1), SemSet(0, 0), SemInc(1, a, 1))),
                                         AtomicBarrier())),
    ), (a, b))
    report = certify(p)
    deadlock = [r for r in report.results if r.family == "deadlock"]
    assert [(r.name, r.verdict) for r in deadlock] == [("deadlock:(0,0).reader+1", Verdict.REFUTED)]
    assert deadlock[0].counterexample is not None
    assert deadlock[0].counterexample["replayed_by"]


def test_a_search_that_excluded_an_unreplayed_candidate_never_proves() -> None:
    # Found by fuzzing: the first candidate the counter abstraction offers (the writer stuck at wait(b0) with k=0)
    # is unreachable and does not replay; excluding it for every iteration also hid the real deadlock at k=1, and
    # the next query's unsat used to be reported as proved. Now an exclusion forbids proving: the interpreter's own
    # search finds the real deadlock and refutes.
    a = Site(0, 0)
    p = Program(
        name="unreplayed", target=WORMHOLE,
        buffers=(Buffer(0, "c_0", a, 0, 1, 2, "bf16"), Buffer(1, "c_1", a, 1, 1, 4, "bf16")),
        programs=(
            EngineProgram(a, Engine.READER, (Loop("k", 2, (Push(0, 1),)),)),
            EngineProgram(a, Engine.COMPUTE, (Loop("k", 2, (Push(1, 2), Reserve(1, 2), Pop(0, 1))),)),
            EngineProgram(a, Engine.WRITER, (Loop("k", 2, (Pop(1, 1), Wait(0, 1))),)),
        ))
    assert simulate(p, seed=7).status == "deadlock"
    (dl,) = check_deadlock(analyse(p), {0, 1}, method="search", search=propose_deadlock)
    assert dl.verdict == Verdict.REFUTED
    assert dl.reason == ("deadlock after 11 steps: (0,0).writer at ops[0].body[1] wait(b0, 1) k=1: waits for b0: "
                         "pushed-popped=2-2=0 < 1")


def nested(outer: int | str, inner: int | str, extra_wait: bool = False, trips: tuple[Trip, ...] = ()) -> Program:
    """Reader reserves and pushes one page of buffer 0 (2 pages) ``outer`` x ``inner`` times, compute waits and
    pops as often, then (``extra_wait``) waits once more for a page nobody pushes: a deadlock at its end."""
    fill: tuple[Op, ...] = (Loop("m", outer, (Loop("k", inner, (Reserve(0, 1), Push(0, 1))),)),)
    drain: tuple[Op, ...] = (Loop("m", outer, (Loop("k", inner, (Wait(0, 1), Pop(0, 1))),)),)
    if extra_wait:
        drain = (*drain, Wait(0, 1))
    return prog(ep(A, Engine.READER, *fill), ep(A, Engine.COMPUTE, *drain), buffers=(buf(0, cap=2),), trips=trips)


def _no_full_run(*_: object) -> object:
    raise AssertionError("the full derivation run was made")


@pytest.mark.parametrize("extra_wait", [False, True])
def test_a_short_run_proves_alone_and_a_stuck_one_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                   extra_wait: bool) -> None:
    # A component of few counter ops whose loops have constant counts and whose run is short (schedule.RUN_PER_LEAF):
    # its as-soon-as-possible run proves it without a query. A run that gets stuck proves nothing and is dropped: the
    # result is the one of the route without the run, counterexample and all (the deadlock replayed).
    p = nested(3, 4, extra_wait=extra_wait)
    fast = [r for r in certify(p).results if r.family == "deadlock"]
    monkeypatch.setattr(schedule, "RUN_PER_LEAF", 0)
    slow = [r for r in certify(p).results if r.family == "deadlock"]
    if not extra_wait:
        assert [(r.name, r.verdict, r.reason) for r in fast] == [
            ("deadlock:(0,0).compute+1", Verdict.PROVED, "2 engines, every one of its 48 counter occurrences executed "
             "in an as-soon-as-possible run (an exhaustive schedule witness)")]
        assert [(r.name, r.verdict) for r in slow] == [("deadlock:(0,0).compute+1", Verdict.PROVED)]
        assert slow[0].reason != fast[0].reason
    else:
        assert [(r.name, r.verdict) for r in fast] == [("deadlock:(0,0).compute+1", Verdict.REFUTED)]
        assert [(r.name, r.verdict, r.reason, r.counterexample) for r in fast] == [
            (r.name, r.verdict, r.reason, r.counterexample) for r in slow]
        assert fast[0].counterexample is not None
        assert fast[0].counterexample["replayed_by"]


def test_a_stretched_candidate_proves_long_loops_without_the_full_run(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(40, 50)  # 2 x 40 x 50 x 2 = 8,000 occurrences; the shrunk run has 2 x 4 x 4 x 2
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive_stretched(a, comp, {})
    assert isinstance(s, schedule.Schedule)
    assert schedule.check(a, comp, s, {}).proved
    monkeypatch.setattr(schedule, "derive", _no_full_run)
    got = schedule.prove(a, comp, a.trip_sets())
    assert got.proved


def test_a_stretched_candidate_of_a_deadlock_never_checks() -> None:
    p = nested(40, 50, extra_wait=True)
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive_stretched(a, comp, {})
    assert s is None or not schedule.check(a, comp, s, {}).proved
    rep = certify(p)
    (dl,) = [r for r in rep.results if r.name.startswith("deadlock")]
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None


def test_a_long_derivation_run_comes_after_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(40, 50)
    a = analyse(p)
    monkeypatch.setattr(schedule, "derive_stretched", lambda *_args, **_kw: None)  # as if no candidate checked
    monkeypatch.setattr(schedule, "_periodic_run", lambda *_args, **_kw: None)  # as if the run never repeated
    monkeypatch.setattr(schedule, "LONG_RUN", 100)
    calls: list[int] = []
    full = schedule.derive

    def counted(*args: object) -> object:
        calls.append(1)
        return full(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(schedule, "derive", counted)
    (auto,) = check_deadlock(a, {0})
    assert (auto.verdict, calls) == (Verdict.PROVED, [])  # the search proved it: the 8,000-occurrence run not made
    (only,) = check_deadlock(a, {0}, method="schedule")
    assert only.verdict == Verdict.PROVED
    assert calls == [1]  # the schedule method alone still makes the long run


def test_one_symbolic_query_proves_every_trip_value(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(3, "t", trips=(Trip("t", 20),))  # the count m * t + k is not linear: 21 trip values to enumerate
    a = analyse(p)
    assert not a.linear
    assert len(a.trip_sets()) == 21
    monkeypatch.setattr(schedule, "prove", lambda *_args, **_kw: schedule.Outcome(False, "not tried"))
    (dl,) = check_deadlock(a, {0})
    assert dl.verdict == Verdict.PROVED
    assert "one query over every trip value" in dl.reason


def test_a_deadlock_for_some_trip_value_is_still_refuted(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(3, "t", extra_wait=True, trips=(Trip("t", 20),))
    assert not analyse(p).linear
    asked: list[bool] = []
    symbolic = deadlock._symbolic_unsat

    def spy(*args: object) -> bool:
        got = symbolic(*args)  # type: ignore[arg-type]
        asked.append(got)
        return got

    monkeypatch.setattr(deadlock, "_symbolic_unsat", spy)
    rep = certify(p)
    (dl,) = [r for r in rep.results if r.name.startswith("deadlock")]
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None
    assert asked == [False]
