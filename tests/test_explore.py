"""The explicit-state explorer: the oracle over every interleaving and every trip value."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from builders import CA, EQ, GE, RA, RB, UNORDERED, WA, A, B, buf, ep, prog

from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Compute,
    Dynamic,
    Engine,
    FillTiles,
    Flush,
    Group,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Target,
    Tensor,
    Term,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import load_program
from verispatial.petri.explore import explore, trip_assignments
from verispatial.petri.interp import replay, simulate
from verispatial.petri.position import Position

IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles
# Written 2 tiles per block for a runtime number of blocks: a state (an output must be written whole for every trip).
OUT = Tensor("out", (32, 256), "bf16", Role.STATE)


def pipeline(k: int | str = "t", barrier: bool = True) -> Program:
    """reader -> b0 -> compute -> b1 -> writer on one site, two pages per block, ``k`` blocks. Without ``barrier``
    the writer flushes its writes before each pop but never waits for their acknowledgement."""
    reader = ep(A, Engine.READER, Loop("k", k, (
        Reserve(0, 2), ReadTiles("in", Addr(0, (Term("k", 2),)), 2, 0), ReadBarrier(), Push(0, 2))))
    compute = ep(A, Engine.COMPUTE, Loop("k", k, (
        Wait(0, 2), AcquireAcc(2, "bf16"), Compute("copy", 2), Pop(0, 2), Reserve(1, 2), PackAcc(1, 2), ReleaseAcc(),
        Push(1, 2))))
    wtail: tuple[Op, ...] = (WriteBarrier(),) if barrier else (Flush(),)
    writer = ep(A, Engine.WRITER, Loop("k", k, (
        Wait(1, 2), WriteTiles(1, "out", Addr(0, (Term("k", 2),)), 2), *wtail, Pop(1, 2))))
    return prog(reader, compute, writer, buffers=(buf(0), buf(1)), tensors=(IN, OUT), trips=(Trip("t", 3),))


def mcast_program(target: Target = WORMHOLE, flush: bool = True, blocks: int = 2) -> Program:
    """The reuse-multicast handshake (reference §2.5) between a sender (0,0) and one receiver (1,0)."""
    body: list[Op] = [Reserve(0, 2), ReadTiles("in", Addr(0, (Term("k", 2),)), 2, 0), ReadBarrier(),
                      SemWait(0, EQ, 1), SemSet(0, 0), McastSend(0, 2, 0, 1)]
    body += [Flush()] if flush else []
    body += [McastSetValid(1, 0, 1), Push(0, 2)]
    return prog(
        ep(A, Engine.READER, SemSet(1, 1), Loop("k", blocks, tuple(body)), WriteBarrier()),
        ep(A, Engine.COMPUTE, Loop("k", blocks, (Wait(0, 2), Pop(0, 2)))),
        ep(B, Engine.READER, Loop("k", blocks, (Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1), SemWait(1, EQ, 1),
                                                Push(1, 2))), AtomicBarrier()),
        ep(B, Engine.COMPUTE, Loop("k", blocks, (Wait(1, 2), Pop(1, 2)))),
        buffers=(buf(0, A, cb=0), buf(1, B, cb=0)),
        sems=(Semaphore(0, "sender", (A, B)), Semaphore(1, "valid", (A, B))),
        groups=(Group(0, A, (1, 0, 1, 0)),),
        tensors=(IN,),
        target=target,
    )


def test_correct_three_engine_pipeline_is_ok_for_every_trip() -> None:
    r = explore(pipeline())
    assert r.verdict == "ok", r.text()
    assert r.complete
    assert r.assignments == ({"t": 0}, {"t": 1}, {"t": 2}, {"t": 3})
    assert (r.deadlocks, r.violations) == ((), ())


def test_correct_multicast_handshake_is_ok() -> None:
    for target in (WORMHOLE, BLACKHOLE, UNORDERED):
        r = explore(mcast_program(target))
        assert r.verdict == "ok", r.text()


def test_inconclusive_when_the_state_budget_runs_out() -> None:
    r = explore(pipeline(), max_states=10)
    assert r.verdict == "inconclusive"
    assert not r.complete
    assert r.states == 10
    assert r.assignments == ({"t": 0}, {"t": 1})  # t=0 has a single state; the budget ran out inside t=1
    assert r.text() == "t: inconclusive (10 states, 2 trip assignment(s), search cut short)"


def test_deadlock_with_stuck_positions_and_replayable_trace() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 2), Push(0, 2)), ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2), Wait(0, 1)),
             buffers=(buf(0),))
    r = explore(p)
    assert r.verdict == "deadlock"
    (d,) = r.deadlocks
    assert [(st.position, st.reason) for st in d.stuck] == [
        (Position(CA, (2,)), "waits for b0: pushed-popped=2-2=0 < 1")]
    assert d.trace_text == (
        "(0,0).reader at ops[0] reserve(b0, 2)",
        "(0,0).reader at ops[1] push(b0, 2)",
        "(0,0).compute at ops[0] wait(b0, 2)",
        "(0,0).compute at ops[1] pop(b0, 2)",
    )
    again = replay(p, d.trips, d.trace)
    assert again.status == "deadlock"
    assert again.stuck == d.stuck


def test_trip_dependent_deadlock_and_balance() -> None:
    p = prog(ep(A, Engine.READER, Loop("k", "t", (Reserve(0, 1), Push(0, 1)))),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0, persistent=True),), trips=(Trip("t", 2),))
    assert trip_assignments(p) == [{"t": 0}, {"t": 1}, {"t": 2}]
    r = explore(p)
    assert [d.trips for d in r.deadlocks] == [{"t": 0}]
    assert r.deadlocks[0].stuck[0].position == Position(CA, (0,))
    f = r.violation("balance-cb")
    assert f is not None
    assert f.trips == {"t": 2}
    assert f.violation.message == ("b0 (buf0) ends with pushed 2 != popped 1; cb 0 at (0,0): the buffer is "
                                   "persistent: its next user counts on from them")
    assert explore(p, trips={"t": 1}).verdict == "ok"
    # Launched once, the page left for t = 2 faults nothing: the launch's end resets the buffer.
    once = attrs.evolve(p, buffers=(buf(0),))
    assert explore(once).violation("balance-cb") is None


def test_eq_wait_overshot_by_an_extra_increment() -> None:
    # Two increments for two eq-waits: round robin happens to interleave them well, the explorer does not.
    waiter = ep(A, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0), SemWait(0, EQ, 1), SemSet(0, 0))
    incs = ep(B, Engine.READER, SemInc(0, A, 1), AtomicBarrier(), SemInc(0, A, 1), AtomicBarrier())
    p = prog(waiter, incs, sems=(Semaphore(0, "s", (A,)),))
    assert simulate(p).violations == ()
    r = explore(p)
    assert r.verdict == "deadlock"
    f = r.violation("sem-overshoot")
    assert f is not None
    assert (f.violation.position, f.violation.position.op) == (Position(RA, (0,)), "sem_wait(sem0, eq, 1)")
    assert f.violation.message == ("sem0@(0,0) goes 1 -> 2 while this wait for ==1 is enabled "
                                   "(sem_inc(sem0, (0,0), 1) issued by (1,0).reader at ops[2] lands)")
    race = r.violation("sem-set-race")
    assert race is not None
    assert race.violation.position == Position(RA, (1,))
    # The last step of each trace is the transition that breaks the rule.
    assert f.trace_text[-1] == "(1,0).reader's sem_inc(sem0, (0,0), 1) (issued at ops[2]) lands: sem0@(0,0) 1 -> 2"


def test_flag_multicast_overtakes_data_on_unordered_target() -> None:
    r = explore(mcast_program(UNORDERED, flush=False, blocks=1))
    assert r.verdict == "violation"
    assert r.rules() == ["async-flag-overtake", "mcast-publish-early", "mcast-slot"]
    early = r.violation("mcast-publish-early")
    assert early is not None
    assert early.violation.position == Position(RB, (0, 4), (("k", 0),))
    assert early.trace_text[-3:] == (
        "(0,0).reader's mcast_set_valid(sem1, g0, 1 dests) (issued at ops[1].body[6] k=0) lands: sem1@(1,0) 0 -> 1",
        "(1,0).reader at ops[0].body[3] sem_wait(sem1, eq, 1) k=0",
        "(1,0).reader at ops[0].body[4] push(b1, 2) k=0",
    )
    # Wormhole keeps the two multicasts in order: the same program is correct there.
    assert explore(mcast_program(WORMHOLE, flush=False, blocks=1)).verdict == "ok"


def test_multicast_source_reuse_is_decided_per_page_and_by_the_write_order() -> None:
    # Two blocks use different pages of the 4-page ring: nothing is reused. Block 2 re-reserves block 0's pages, but on
    # Wormhole block 1's ready increment came after the receiver saw block 0's flag land, and the flag left after the
    # data (ordered writes): the data had left. No flush is needed.
    assert explore(mcast_program(WORMHOLE, flush=False, blocks=2)).verdict == "ok"
    assert explore(mcast_program(WORMHOLE, flush=False, blocks=3)).verdict == "ok"


def test_read_published_without_barrier() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 2), ReadTiles("in", Addr(0), 2, 0), Push(0, 2), ReadBarrier()),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)), buffers=(buf(0),), tensors=(IN,))
    r = explore(p)
    assert r.rules() == ["async-read-publish"]
    assert r.violations[0].violation.position == Position(RA, (2,))


def test_pending_noc_op_at_end() -> None:
    r = explore(pipeline(k=1, barrier=False))
    assert r.rules() == ["async-pending-at-end"]
    assert r.violations[0].violation.position == Position(WA, None)


def test_balance_of_semaphores() -> None:
    p = prog(ep(B, Engine.READER, SemInc(0, A, 1), AtomicBarrier()), ep(A, Engine.READER, SemWait(0, GE, 1)),
             sems=(Semaphore(0, "s", (A,)),))
    r = explore(p)
    assert r.rules() == ["balance-sem"]
    assert r.violations[0].violation.position == Position(RA, None)


def test_state_read_landing_after_the_update_is_a_race() -> None:
    # The reader signals before its read has landed, so the writer may update the tile under it.
    st = Tensor("st", (32, 64), "bf16", Role.STATE)

    def program(barrier_first: bool) -> Program:
        read: list[Op] = [Reserve(0, 1), ReadTiles("st", Addr(0), 1, 0)]
        read += [ReadBarrier(), SemInc(0, B, 1)] if barrier_first else [SemInc(0, B, 1), ReadBarrier()]
        read += [AtomicBarrier(), Push(0, 1)]
        return prog(ep(A, Engine.READER, *read), ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)),
                    ep(B, Engine.WRITER, SemWait(0, GE, 1), SemSet(0, 0), Reserve(1, 1), FillTiles(1, 1, drain=True),
                       Push(1, 1), Wait(1, 1), WriteTiles(1, "st", Addr(0), 1), WriteBarrier(), Pop(1, 1)),
                    buffers=(buf(0, A), buf(1, B)), sems=(Semaphore(0, "s", (B,)),), tensors=(st,))

    assert simulate(program(False)).violations == ()  # landings are eager in a simulation
    r = explore(program(False))
    assert r.rules() == ["tensor-race"]
    assert r.violations[0].violation.position == Position(RA, (1,))
    assert explore(program(True)).verdict == "ok"


def test_dynamic_address_checked_at_both_ends() -> None:
    addr = Addr(0, (), Dynamic("idx", 0, 7))
    p = prog(ep(A, Engine.READER, Reserve(0, 2), ReadTiles("in", addr, 2, 0), ReadBarrier(), Push(0, 2)),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)), buffers=(buf(0),), tensors=(IN,))
    assert simulate(p).violations == ()
    r = explore(p)
    assert r.rules() == ["bounds"]
    assert r.violations[0].violation.message == (
        "read_tiles(in, 2, b0) touches tiles [7, 9) of in, which has 8 tiles")


def test_result_json() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 5)), buffers=(buf(0),))
    r = explore(p)
    j = r.to_json()
    assert (j["verdict"], j["complete"], j["states"]) == ("deadlock", True, 1)
    assert j["violations"][0]["violation"]["rule"] == "cb-capacity"
    assert j["violations"][0]["trace"] == []
    assert j["deadlocks"][0]["stuck"][0]["reason"] == (
        "waits for space in b0: asks 5 pages of a 4-page buffer (never fits)")


def test_flag_that_lands_before_the_receivers_reset_is_lost() -> None:
    p = prog(ep(A, Engine.READER, SemSet(0, 1), Reserve(0, 1), FillTiles(0, 1, drain=True),
                McastSend(0, 1, 0, 1), Flush(), McastSetValid(0, 0, 1), WriteBarrier(), Push(0, 1)),
             ep(A, Engine.COMPUTE, Wait(0, 1), AcquireAcc(1, "bf16"), Compute("x"), ReleaseAcc(), Pop(0, 1)),
             ep(B, Engine.READER, SemSet(0, 0), Reserve(1, 1), SemWait(0, EQ, 1), Push(1, 1)),
             ep(B, Engine.COMPUTE, Wait(1, 1), Pop(1, 1)),
             buffers=(buf(0, A, cb=0), buf(1, B, cb=0)), sems=(Semaphore(0, "v", (A, B)),),
             groups=(Group(0, A, (1, 0, 1, 0)),))
    r = explore(p)
    # The receiver's reset may land after the flag: it then overwrites it and waits forever.
    assert r.verdict == "deadlock"
    assert r.deadlocks[0].stuck[0].position == Position(RB, (2,))
    assert r.rules() == ["sem-set-race"]
    assert r.violations[0].violation.position == Position(RB, (0,))


@pytest.mark.parametrize("name", ["v2_ready_reset_after_flag", "u_forwarder_pops_early", "zo_local_up_lost_increment"])
def test_a_capped_search_finds_what_a_larger_one_found_within_its_cap(name: str) -> None:
    """Breadth first in a fixed order: a search capped at ``n`` states finds exactly the violations and deadlocks a
    larger search had found when it had visited ``n`` (their ``states``), with the same traces, so a caller may
    read a capped answer off a larger one (certify/witness.py)."""
    p = load_program(Path(__file__).resolve().parent.parent / "examples" / "broken" / f"{name}.json")
    full = explore(p)
    assert full.complete
    found = [f.states for f in full.violations] + [d.states for d in full.deadlocks]
    assert found
    for cap in sorted({1, *found, *(n - 1 for n in found), full.states // 2, full.states}):
        got = explore(p, max_states=cap)
        assert [(f.violation, f.trace, f.states) for f in got.violations] == [
            (f.violation, f.trace, f.states) for f in full.violations if f.states <= cap], cap
        assert [(d.trace, d.stuck, d.states) for d in got.deadlocks] == [
            (d.trace, d.stuck, d.states) for d in full.deadlocks if d.states <= cap], cap
