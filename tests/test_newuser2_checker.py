"""A second new user's small programs against the semaphore family's witness-first path (``encoding._witness``:
the interpreter's runs asked before the wide queries) and the placement of patches (``FillTiles`` kind ``patch``),
each compared with the interpreter: a refutation replays, and nothing the explorer or a seeded run drives into a
violation is proved (2026-12-06, branch ``newuser2``)."""

from __future__ import annotations

import pytest
from builders import A, ep, prog
from test_fill_tiles import SCALER, reduce_with_scaler

from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    Engine,
    FillTiles,
    Loop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    SectionSpan,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Trip,
    WaitCond,
)
from verispatial.ir import rules as R
from verispatial.ir.ops import PATCH, Addr
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate

B = Site(1, 0)
GE = WaitCond.GE


def _refuted(report: Report) -> dict[str, dict[str, object]]:
    """Each refuted result's counterexample by name."""
    return {r.name: r.counterexample or {} for r in report.results if r.verdict is Verdict.REFUTED}


def _sem(b: tuple, a: tuple, max_trip: int, ack: bool = False) -> Program:
    sems = (Semaphore(0, "s", (B,)), *((Semaphore(1, "ack", (A,)),) if ack else ()))
    return prog(ep(A, Engine.READER, *a), ep(B, Engine.READER, *b), sems=sems, trips=(Trip("t", max_trip),))


#: A increments B's word t times; B waits for it and resets it t times: from t = 2 on, the second increment can land
#: before the first reset (a lost update), after which B waits forever
_INC = (Loop("k", "t", (SemInc(0, B, 1),)), AtomicBarrier())
_WAIT_RESET = (Loop("j", "t", (SemWait(0, GE, 1), SemSet(0, 0))),)
#: A waits for B's acknowledgement after each increment: exact whatever t
_ACKED_A = (Loop("k", "t", (SemInc(0, B, 1), AtomicBarrier(), SemWait(1, GE, 1), SemSet(1, 0))),)
_ACKED_B = (Loop("j", "t", (SemWait(0, GE, 1), SemSet(0, 0), SemInc(1, A, 1), AtomicBarrier())),)
#: B acknowledges before it resets: A's next increment can land before the reset
_EARLY_ACK_B = (Loop("j", "t", (SemWait(0, GE, 1), SemInc(1, A, 1), AtomicBarrier(), SemSet(0, 0))),)


def test_a_lost_update_at_the_top_trip_only_is_refuted_with_that_trip() -> None:
    """The witness run shows the lost update at the reset; its counterexample (no solver state, no trips of its
    own) replays at t = 2, the only value where it happens, and the deadlock it leads to is refuted at t = 2."""
    p = _sem(_WAIT_RESET, _INC, 2)
    assert sorted({f.violation.rule for f in explore(p).violations}) == [R.SEM_SET_RACE]
    report = certify(p, cache=False)
    got = _refuted(report)
    assert set(got) == {"sem-set-race:sem0@(1,0)", "deadlock:(0,0).reader+1"}
    sem = got["sem-set-race:sem0@(1,0)"]
    replay = sem["replay"]
    assert isinstance(replay, dict)
    assert (replay["violation"]["rule"], replay["trips"]) == (R.SEM_SET_RACE, {"t": 2})
    assert got["deadlock:(0,0).reader+1"]["trips"] == {"t": 2}


def test_the_acknowledged_loop_proves_and_an_early_acknowledgement_is_refuted() -> None:
    p = _sem(_ACKED_B, _ACKED_A, 3, ack=True)
    assert explore(p).verdict == "ok"
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict is not Verdict.PROVED]
    p = _sem(_EARLY_ACK_B, _ACKED_A, 3, ack=True)
    assert R.SEM_SET_RACE in {f.violation.rule for f in explore(p).violations}
    got = _refuted(certify(p, cache=False))
    replay = got["sem-set-race:sem0@(1,0)"]["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == R.SEM_SET_RACE


def _eight_engines(b: tuple) -> Program:
    """Eight readers on a 4 x 2 grid: A increments B's word twice, 30 steps apart, and waits for both to land; B
    runs ``b``; the six others idle on their own word. No seeded run (round robin, seeds 0-3) shows a violation: the
    one that does holds B back, which only the wider query finds."""
    sites = [Site(x, y) for y in range(2) for x in range(4)]
    a = (SemInc(0, B, 1), Loop("k", 30, (SemSet(1, 0),)), SemInc(0, B, 1), AtomicBarrier())
    rest = tuple(ep(s, Engine.READER, Loop("k", 5, (SemSet(1, 0),))) for s in sites[2:])
    p = Program("unit", WORMHOLE, semaphores=(Semaphore(0, "s", (B,)), Semaphore(1, "own", tuple(sites))),
                programs=(ep(A, Engine.READER, *a), ep(B, Engine.READER, *b), *rest),
                sections=(SectionSpan("main"),))
    assert validate(p) == []
    assert all(simulate(p, None, seed=s).violations == () for s in (None, 0, 1, 2, 3))
    return p


def test_a_lost_update_the_seeded_runs_miss_is_refuted_by_the_solver_and_replayed() -> None:
    """Eight engines (past the explorer's six): A's second increment comes 30 local steps after its first, so the
    round-robin and seeded runs see B reset long before it; only a schedule that holds B at its reset shows the lost
    update. The witness finds nothing, the wider query does, and the interpreter replays it directed at its state.
    The hang that follows is never proved."""
    b = (SemWait(0, GE, 1), SemSet(0, 0), SemWait(0, GE, 1), SemSet(0, 0))
    report = certify(_eight_engines(b), cache=False)
    got = _refuted(report)
    replay = got["sem-set-race:sem0@(1,0)"]["replay"]
    assert isinstance(replay, dict)
    assert (replay["violation"]["rule"], replay["violation"]["position"]["path"]) == (R.SEM_SET_RACE, [1])
    assert all(r.verdict is not Verdict.PROVED for r in report.results if r.family == "deadlock")


# --- patches placed around their read's barrier and push ---------------------------------------------------------

def _patch(drain: bool = True) -> FillTiles:
    return FillTiles(SCALER, 0, PATCH, drain=drain)


def _read(tile: int) -> ReadTiles:
    return ReadTiles("X", Addr(tile), 1, SCALER)


@pytest.mark.parametrize(("ops", "pages", "rule", "at"), [
    # the second read into the reservation still in flight: it may land over the stores
    ((Reserve(SCALER, 2), _read(0), ReadBarrier(), _read(1), _patch(), ReadBarrier(), Push(SCALER, 2)), 2,
     R.CB_WRITE_UNRESERVED, [4]),
    # the read's tile pushed, the rest of the reservation not read yet: no filled tile in the window
    ((Reserve(SCALER, 2), _read(0), ReadBarrier(), Push(SCALER, 1), _patch(), _read(1), ReadBarrier(),
      Push(SCALER, 1)), 2, R.CB_WRITE_UNRESERVED, [4]),
    # a fresh reservation after the push, before its read
    ((Reserve(SCALER, 1), _read(0), ReadBarrier(), Push(SCALER, 1), Reserve(SCALER, 1), _patch(), _read(1),
      ReadBarrier(), Push(SCALER, 1)), 2, R.CB_WRITE_UNRESERVED, [5]),
    # in a loop, before the barrier of this iteration's read
    ((Loop("j", 2, (Reserve(SCALER, 1), ReadTiles("X", Addr(0), 1, SCALER), _patch(), ReadBarrier(),
                    Push(SCALER, 1))),), 2, R.CB_WRITE_UNRESERVED, [0, 2]),
    # an undrained patch pushed
    ((Reserve(SCALER, 1), _read(0), ReadBarrier(), _patch(False), Push(SCALER, 1)), 1, R.ASYNC_READ_PUBLISH, [4]),
], ids=["read-in-flight", "after-partial-push", "fresh-reservation", "loop-before-barrier", "undrained"])
def test_a_misplaced_patch_is_refuted_where_the_interpreter_shows_it(ops: tuple, pages: int, rule: str,
                                                                      at: list[int]) -> None:
    p = reduce_with_scaler(ops, scaler_pages=pages, wait=pages)
    assert isinstance(p, Program)
    assert validate(p) == []
    assert [(v.rule, list(v.position.path)) for v in simulate(p).violations] == [(rule, at)]
    got = _refuted(certify(p, cache=False))
    assert f"{rule}:(0,0).reader:{at}" in got
    replay = got[f"{rule}:(0,0).reader:{at}"].get("replay")
    assert replay is None or replay["violation"]["rule"] == rule


@pytest.mark.parametrize("ops", [
    # the second tile read and landed after the first was pushed: the window holds a landed read's tile
    (Reserve(SCALER, 2), _read(0), ReadBarrier(), Push(SCALER, 1), _read(1), ReadBarrier(), _patch(),
     Push(SCALER, 1)),
    (Reserve(SCALER, 1), _read(0), ReadBarrier(), _patch(False), _patch(), Push(SCALER, 1)),
    (Loop("j", 2, (Reserve(SCALER, 1), ReadTiles("X", Addr(0), 1, SCALER), ReadBarrier(), _patch(),
                   Push(SCALER, 1))),),
], ids=["after-partial-push-and-read", "undrained-then-drained", "loop"])
def test_a_patch_after_its_reads_barrier_proves(ops: tuple) -> None:
    pages = 2 if len(ops) != 6 else 1
    p = reduce_with_scaler(ops, scaler_pages=pages, wait=pages)
    assert isinstance(p, Program)
    assert explore(p).verdict == "ok"
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict is not Verdict.PROVED]


def test_an_overshoot_the_seeded_runs_miss_is_refuted_and_its_hang_replayed() -> None:
    """Eight engines: B idles 10 steps, then waits for its word to equal 1, then 2; A's second increment comes 30
    steps after its first, so every seeded run sees B pass ``== 1`` first. Held back until both land, B reads 2
    at ``== 1`` and hangs: the wider query finds the overshoot, the interpreter replays it, and the deadlock is
    refuted (not proved)."""
    b = (Loop("k", 10, (SemSet(1, 0),)), SemWait(0, WaitCond.EQ, 1), SemWait(0, WaitCond.EQ, 2), SemSet(0, 0))
    report = certify(_eight_engines(b), cache=False)
    got = _refuted(report)
    replay = got["sem-overshoot:sem0@(1,0)"]["replay"]
    assert isinstance(replay, dict)
    assert (replay["violation"]["rule"], replay["violation"]["position"]["path"]) == (R.SEM_OVERSHOOT, [1])
    assert got["deadlock:(0,0).reader+1"]["stuck"][0]["reason"] == "sem0@(1,0)=2, waits ==1"
