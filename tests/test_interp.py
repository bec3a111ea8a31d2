"""The reference interpreter (DESIGN §5): one test per op semantic and per rule, each on a tiny program with the
exact expected outcome."""

from __future__ import annotations

import pytest
from builders import CA, EQ, GE, RA, RB, WA, A, B, buf, ep, prog, sem

from verispatial.errors import InvalidProgram
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Compute,
    Dynamic,
    Engine,
    EngineProgram,
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
    SemInc,
    SemSet,
    SemWait,
    Site,
    Target,
    Tensor,
    Term,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.petri.interp import Interp, SimResult, Transition, drive, replay, rule_at, simulate
from verispatial.petri.position import Position, Violation, enclosing_loops, op_at, path_text


def only(r: SimResult) -> Violation:
    assert len(r.violations) == 1, r.text()
    return r.violations[0]


def where(v: Violation) -> tuple[str, str, tuple[int, ...] | None, tuple[tuple[str, int], ...]]:
    return (v.rule, v.position.engine, v.position.path, v.position.iteration)


# A reader that fills b0 two pages at a time, eight times, and a compute engine that drains it.
def producer_consumer(k: int = 8, extra_wait: int = 0) -> Program:
    reader = ep(A, Engine.READER, Loop("k", k, (Reserve(0, 2), Push(0, 2))))
    tail = (Wait(0, extra_wait),) if extra_wait else ()
    compute = ep(A, Engine.COMPUTE, Loop("k", k, (Wait(0, 2), Pop(0, 2))), *tail)
    return prog(reader, compute, buffers=(buf(0),))


# ---------------------------------------------------------------------------------------------- positions


def test_position_text_json_and_equality() -> None:
    p = Position(RA, (1, 2), (("k", 3),), op="reserve(b0, 64)")
    assert str(p) == "(0,0).reader at ops[1].body[2] reserve(b0, 64) k=3"
    assert Position.from_json(p.to_json()) == p
    assert p.to_json() == {"engine": RA, "path": [1, 2], "iteration": [["k", 3]], "op": "reserve(b0, 64)"}
    assert p == Position(RA, (1, 2), (("k", 3),))  # the op text is display only
    assert str(Position(RA, None)) == "(0,0).reader finished"
    assert Position(RA, None).finished


def test_position_order_follows_execution() -> None:
    early = Position(RA, (1, 2), (("k", 0),))
    later_iter = Position(RA, (1, 0), (("k", 1),))
    loop_itself = Position(RA, (1,), ())
    assert loop_itself.order_key() < early.order_key() < later_iter.order_key() < Position(RA, None).order_key()


def test_paths() -> None:
    ops = (Compute("x"), Loop("k", 2, (Compute("y"), Loop("i", 3, (Reserve(0, 1),)))))
    assert path_text((1, 1, 0)) == "ops[1].body[1].body[0]"
    assert op_at(ops, (1, 1, 0)) == Reserve(0, 1)
    assert [lp.var for lp in enclosing_loops(ops, (1, 1, 0))] == ["k", "i"]


# ---------------------------------------------------------------------------------------------- CB ops


def test_producer_consumer_terminates() -> None:
    r = simulate(producer_consumer())
    assert r.status == "terminated"
    assert r.violations == ()
    assert r.steps == 32
    assert r.pushed == {0: 16}
    assert r.popped == {0: 16}
    assert r.positions[RA] == Position(RA, None)


def test_reserve_blocks_when_full() -> None:
    r = simulate(prog(ep(A, Engine.READER, Reserve(0, 4), Push(0, 4), Reserve(0, 1)), buffers=(buf(0),)))
    assert r.status == "deadlock"
    assert [str(s) for s in r.stuck] == [
        "(0,0).reader at ops[2] reserve(b0, 1): waits for space in b0: capacity-(pushed-popped)=4-(4-0)=0 < 1"
    ]


def test_reserve_again_with_larger_count_is_legal() -> None:
    r = simulate(prog(ep(A, Engine.READER, Reserve(0, 1), Reserve(0, 3), Push(0, 3)),
                      ep(A, Engine.COMPUTE, Wait(0, 3), Pop(0, 3)), buffers=(buf(0),)))
    assert (r.status, r.violations) == ("terminated", ())


def test_wait_for_more_than_pushed_deadlocks_with_positions_and_counters() -> None:
    r = simulate(producer_consumer(extra_wait=1))
    assert r.status == "deadlock"
    assert len(r.stuck) == 1
    st = r.stuck[0]
    assert st.position == Position(CA, (1,), ())
    assert st.reason == "waits for b0: pushed-popped=16-16=0 < 1"
    it = Interp(producer_consumer(extra_wait=1))
    s = it.initial()
    assert it.blocked_reason(s, CA) == (
        "(0,0).compute at ops[0].body[0] wait(b0, 2) k=0: waits for b0: pushed-popped=0-0=0 < 2")


def test_stuck_inside_a_loop_names_the_iteration() -> None:
    reader = ep(A, Engine.READER, Loop("k", 3, (Reserve(0, 2), Push(0, 2))))
    compute = ep(A, Engine.COMPUTE, Loop("k", 4, (Wait(0, 2), Pop(0, 2))))
    r = simulate(prog(reader, compute, buffers=(buf(0),)))
    assert r.status == "deadlock"
    assert r.stuck[0].position == Position(CA, (0, 0), (("k", 3),))
    assert str(r.stuck[0]) == "(0,0).compute at ops[0].body[0] wait(b0, 2) k=3: waits for b0: pushed-popped=6-6=0 < 2"


def test_loop_counts_trips_and_zero() -> None:
    reader = ep(A, Engine.READER, Loop("k", "t", (Reserve(0, 1), Push(0, 1))), Loop("z", 0, (Reserve(0, 9),)))
    compute = ep(A, Engine.COMPUTE, Loop("k", "t", (Wait(0, 1), Pop(0, 1))))
    p = prog(reader, compute, buffers=(buf(0),), trips=(Trip("t", 5),))
    r = simulate(p)
    assert (r.status, r.trips, r.pushed) == ("terminated", {"t": 5}, {0: 5})  # trips default to their max
    r0 = simulate(p, trips={"t": 0})
    assert (r0.status, r0.steps, r0.pushed) == ("terminated", 0, {0: 0})
    with pytest.raises(ValueError, match=r"trip t = 6 is outside \[0, 5\]"):
        simulate(p, trips={"t": 6})
    with pytest.raises(ValueError, match="trip 'u' is not declared"):
        simulate(p, trips={"u": 1})


def test_invalid_program_is_refused() -> None:
    with pytest.raises(InvalidProgram, match="Push: buffer 3 is not a buffer"):
        simulate(prog(ep(A, Engine.READER, Push(3, 1)), buffers=(buf(0),)))


# ---------------------------------------------------------------------------------------------- async NoC


IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles
OUT = Tensor("out", (32, 256), "bf16", Role.OUTPUT)


def test_read_tiles_lands_before_read_barrier() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    it = Interp(p)
    s = it.initial()
    s = it.fire(it.fire(s, Transition("step", 0)), Transition("step", 0))
    assert not it.can_step(s, 0)
    assert it.block_detail(s, 0) == "waits for 1 outstanding read(s)"
    s = it.fire(s, Transition("land", 0, 0))
    assert it.can_step(s, 0)
    assert simulate(p).violations == ()


def test_async_read_publish() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), Push(0, 1), ReadBarrier()),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    v = only(simulate(p))
    assert where(v) == ("async-read-publish", RA, (2,), ())
    assert v.message == "push(b0, 1) publishes pages read into b0 by read_tiles with no read_barrier since"


def test_async_pending_at_end() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), SemInc(0, B, 1)),
             ep(B, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0)), buffers=(buf(0),), tensors=(IN,), sems=(sem(0, B),))
    r = simulate(p)
    assert [where(v) for v in r.violations] == [("async-pending-at-end", RA, None, ())]
    assert r.violations[0].message == ("ends with outstanding NoC transactions: read_tiles into b0 with no "
                                       "read_barrier after; sem_inc with no atomic_barrier after")


def test_write_tiles_completes_at_write_barrier() -> None:
    out1 = Tensor("out", (32, 32), "bf16", Role.OUTPUT)

    def copy(*writer: Op) -> Program:
        return prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
                    ep(A, Engine.WRITER, *writer), buffers=(buf(0),), tensors=(IN, out1))

    p = copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), WriteBarrier(), Pop(0, 1))
    it = Interp(p)
    s = it.initial()
    for t in (Transition("step", 0), Transition("step", 0), Transition("land", 0, 0), Transition("step", 0),
              Transition("step", 0), Transition("step", 1), Transition("step", 1)):
        s = it.fire(s, t)
    assert it.block_detail(s, 1) == "waits for 1 outstanding write(s)/multicast(s)"
    assert it.describe(s, Transition("land", 1, 0)) == (
        "(0,0).writer's write_tiles(b0, out, 1) (issued at ops[1]) completes")
    assert simulate(p).status == "terminated"
    # A flush waits for the unicast write to leave its source too (noc_async_writes_flushed): then the page may go.
    flushed = copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), Flush(), Pop(0, 1), WriteBarrier())
    it = Interp(flushed)
    s = it.initial()
    for t in (Transition("step", 0), Transition("step", 0), Transition("land", 0, 0), Transition("step", 0),
              Transition("step", 0), Transition("step", 1), Transition("step", 1)):
        s = it.fire(s, t)
    assert it.block_detail(s, 1) == "waits for 1 write(s)/multicast(s) to leave the source"
    assert simulate(flushed).violations == ()
    r = simulate(copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), Pop(0, 1)))
    assert where(only(r)) == ("async-pending-at-end", WA, None, ())


# Multicast: sender (0,0) sends b0 (cb 0) into receiver (1,0)'s b1 (cb 0) and a flag into its sem1 word.
def mcast_program(target: Target = WORMHOLE, flush: bool = True, receiver_waits: bool = True) -> Program:
    sender: list[Op] = [Reserve(0, 2), ReadTiles("in", Addr(0), 2, 0), ReadBarrier(), SemWait(0, EQ, 1), SemSet(0, 0),
              McastSend(0, 2, 0, 1)]
    sender += [Flush()] if flush else []
    sender += [McastSetValid(1, 0, 1), Push(0, 2), WriteBarrier()]
    receiver: list[Op] = [Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1)]
    receiver += [SemWait(1, EQ, 1)] if receiver_waits else []
    receiver += [Push(1, 2), AtomicBarrier()]
    return prog(
        ep(A, Engine.READER, SemSet(1, 1), *sender),
        ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)),
        ep(B, Engine.READER, *receiver),
        ep(B, Engine.COMPUTE, Wait(1, 2), Pop(1, 2)),
        buffers=(buf(0, A, cb=0), buf(1, B, cb=0)),
        sems=(sem(0, A, B), sem(1, A, B)),
        groups=(Group(0, A, (1, 0, 1, 0)),),
        tensors=(IN,),
        target=target,
    )


def test_multicast_protocol_runs_clean() -> None:
    for target in (WORMHOLE, BLACKHOLE):
        r = simulate(mcast_program(target))
        assert (r.status, r.violations) == ("terminated", ()), r.text()
        assert r.sems == {(0, A): 0, (0, B): 0, (1, A): 1, (1, B): 1}


def _to_send(flush: bool) -> list[Transition]:
    """Receiver reserves, resets its flag and increments; the increment lands; the sender reads (the read lands)
    and runs through its McastSend (and, without a flush, its McastSetValid)."""
    head = [Transition("step", 2)] * 3 + [Transition("land", 2, 0)] + [Transition("step", 0)] * 3
    return head + [Transition("land", 0, 0)] + [Transition("step", 0)] * (4 if flush else 5)


def test_multicast_leaves_then_lands_and_barriers_track_each_stage() -> None:
    p = mcast_program()
    it = Interp(p)
    s = it.initial()
    for t in _to_send(flush=True):
        s = it.fire(s, t)
    assert it.position(s, 0) == Position(RA, (7,))  # at the Flush, the McastSend issued
    assert it.enabled(s) == [Transition("leave", 0, 0)]
    assert it.block_detail(s, 0) == "waits for 1 write(s)/multicast(s) to leave the source"
    s = it.fire(s, Transition("leave", 0, 0))
    assert it.can_step(s, 0)  # Flush: the data left
    assert Transition("land", 0, 0, 1) in it.enabled(s)
    s = it.fire(s, Transition("step", 0))  # Flush
    s = it.fire(s, Transition("step", 0))  # McastSetValid issued
    # Wormhole orders multicasts: the flag cannot land before the data at (1,0).
    assert [t for t in it.enabled(s) if t.engine == 0] == [Transition("step", 0), Transition("land", 0, 0, 1),
                                                           Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))
    assert Transition("land", 0, 1, 3) not in it.enabled(s)  # word 3 is sem1@(1,0)
    s = it.fire(s, Transition("land", 0, 0, 1))
    assert s.landed == [0, 2]
    assert Transition("land", 0, 0, 3) in it.enabled(s)  # the flag is now first in flight


def test_unordered_target_lets_the_flag_land_first() -> None:
    p = mcast_program(BLACKHOLE, flush=False)
    it = Interp(p)
    s = it.initial()
    for t in _to_send(flush=False):
        s = it.fire(s, t)
    assert it.position(s, 0) == Position(RA, (8,))  # at the Push: data and flag issued
    lands = [t for t in it.enabled(s) if t.kind != "step"]
    assert lands == [Transition("leave", 0, 0), Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))  # the flag leaves first and moves ahead of the data
    assert [t for t in it.enabled(s) if t.kind != "step"] == [Transition("land", 0, 0, 3), Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))
    # Once on the network they keep the order they left in: the data cannot land at (1,0) before the flag.
    assert [t for t in it.enabled(s) if t.kind != "step"] == [Transition("land", 0, 0, 3)]


def test_set_valid_reads_the_word_when_it_leaves() -> None:
    p = prog(ep(A, Engine.READER, SemSet(0, 1), McastSetValid(0, 0, 1), SemSet(0, 2), WriteBarrier()),
             ep(B, Engine.READER, SemSet(0, 0), SemWait(0, GE, 1)), sems=(sem(0, A, B),),
             groups=(Group(0, A, (1, 0, 1, 0)),))
    it = Interp(p)
    s = it.initial()
    s = it.fire(s, Transition("step", 1))  # receiver resets its word
    s = it.fire(s, Transition("step", 0))
    s = it.fire(s, Transition("step", 0))  # flag issued
    s, vs = it.step(s, Transition("step", 0))  # the source changes before it left
    assert [where(v) for v in vs] == [("async-source-reuse", RA, (2,), ())]
    s = it.fire(s, Transition("leave", 0, 0))
    assert it.describe(s, Transition("land", 0, 0, 1)) == (
        "(0,0).reader's mcast_set_valid(sem0, g0, 1 dests) (issued at ops[1]) lands: sem0@(1,0) 0 -> 2")
    s = it.fire(s, Transition("land", 0, 0, 1))
    assert s.words == [2, 2]


def test_async_flag_overtake_on_unordered_target_only() -> None:
    v = only(simulate(mcast_program(BLACKHOLE, flush=False)))
    assert where(v) == ("async-flag-overtake", RA, (7,), ())
    assert v.message == ("mcast_set_valid(sem1, g0) may overtake the mcast_send of b0: no flush/write_barrier "
                         "between them and blackhole does not order writes")
    assert simulate(mcast_program(WORMHOLE, flush=False)).violations == ()


def test_async_source_reuse_per_page_read_and_pack() -> None:
    """A page multicast from the back is not rewritten before the multicast left (dataflow_api.h: the source may be
    reused once noc_async_writes_flushed returns); other pages of the same buffer may be written meanwhile."""
    g = (Group(0, A, (1, 0, 1, 0)),)
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0))
    # Page 0 is multicast; a read then lands in page 0 (the reuse) and a pack writes page 1 (another page: fine).
    sender = ep(A, Engine.READER, Reserve(0, 3), McastSend(0, 1, 0, 1), ReadTiles("in", Addr(0), 1, 0),
                AcquireAcc(2, "bf16"), PackAcc(0, 1), Flush(), PackAcc(0, 1), ReleaseAcc(), ReadBarrier(),
                WriteBarrier(), Push(0, 3))
    p = prog(sender, ep(A, Engine.COMPUTE, Wait(0, 3), Pop(0, 3)), ep(B, Engine.READER, Reserve(1, 1)),
             buffers=bufs, groups=g, tensors=(IN,))
    it = Interp(p)
    s = it.initial()
    seen: list[Violation] = []
    for t in [Transition("step", 0)] * 3 + [Transition("land", 0, 1)] + [Transition("step", 0)] * 2:
        s, vs = it.step(s, t)
        seen += vs
    assert [where(v) for v in seen] == [("async-source-reuse", RA, (2,), ())]
    assert seen[0].message == ("read_tiles(in, 1, b0) lands in page 0 of b0, the source of (0,0).reader's "
                               "mcast_send(b0, 1, g0, 1 dests) at ops[1], which has not left it (no flush/write_barrier "
                               "since)")
    # Round robin lets the multicast leave at once: no reuse there.
    assert simulate(p).violations == ()


def test_mcast_slot_free_pages_and_write_offset() -> None:
    g = (Group(0, A, (1, 0, 1, 0)),)
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0))
    # The receiver publishes its slot before the data comes: its ring is full when the data lands.
    p = prog(ep(A, Engine.READER, AcquireAcc(4, "bf16"), Reserve(0, 4), PackAcc(0, 4), McastSend(0, 4, 0, 1),
                ReleaseAcc(), WriteBarrier(), Push(0, 4)),
             ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)),
             ep(B, Engine.READER, Reserve(1, 4), Push(1, 4)), buffers=bufs, groups=g)
    r = simulate(p)
    # (b1's pages left at the end fault nothing: the launch's end resets the buffer.)
    assert [where(v) for v in r.violations] == [("mcast-publish-early", RB, (1,), ()), ("mcast-slot", RA, (3,), ())]
    assert r.violations[1].message == "mcast_send of 4 pages lands in b1 at (1,0) but b1 has only 0 free pages"
    # The sender's ring is one push ahead of the receiver's: the slots do not line up.
    p2 = prog(ep(A, Engine.READER, AcquireAcc(4, "bf16"), Reserve(0, 4), PackAcc(0, 4), Push(0, 2),
                 McastSend(0, 2, 0, 1), ReleaseAcc(), WriteBarrier(), Push(0, 2)),
              ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)),
              ep(B, Engine.READER, Reserve(1, 2)), ep(B, Engine.COMPUTE, ReadBarrier()), buffers=bufs, groups=g)
    v = only(simulate(p2))
    assert where(v) == ("mcast-slot", RA, (4,), ())
    assert v.message == "mcast_send of 2 pages lands in b1 at (1,0) at write offset 2 but b1's write offset is 0"


def test_mcast_publish_early() -> None:
    r = simulate(mcast_program(receiver_waits=False))
    v = r.violations[0]
    assert where(v) == ("mcast-publish-early", RB, (3,), ())
    assert v.message == "push(b1, 2) publishes 2 pages in total but multicasts have landed only 0 in b1"


# ---------------------------------------------------------------------------------------------- tensors, acc


def test_bounds_affine_and_dynamic() -> None:
    loop = Loop("k", 3, (Reserve(0, 2), ReadTiles("in", Addr(5, (Term("k", 1),)), 2, 0), ReadBarrier(), Push(0, 2)))
    p = prog(ep(A, Engine.READER, loop), ep(A, Engine.COMPUTE, Loop("k", 3, (Wait(0, 2), Pop(0, 2)))),
             buffers=(buf(0),), tensors=(IN,))
    v = only(simulate(p))
    assert where(v) == ("bounds", RA, (0, 1), (("k", 2),))
    assert v.message == "read_tiles(in, 2, b0) touches tiles [7, 9) of in, which has 8 tiles"
    dyn = Addr(0, (), Dynamic("idx", 0, 9))
    p2 = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", dyn, 1, 0), ReadBarrier(), Push(0, 1)),
              ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    assert simulate(p2).violations == ()  # lo = 0 is inside
    assert where(only(simulate(p2, dyn={"idx": 8}))) == ("bounds", RA, (1,), ())


ACT = Tensor("act", (32, 64), "bf16", Role.ACTIVATION)  # 2 tiles
ST = Tensor("st", (32, 64), "bf16", Role.STATE)



def test_bounds_range_is_said_as_certify_says_it() -> None:
    """A negative address: the interpreter's range and certify's counterexample name the same half-open tiles."""
    from verispatial.driver.run import certify

    p = prog(ep(A, Engine.READER, Reserve(0, 2), ReadTiles("in", Addr(-1), 2, 0), ReadBarrier(), Push(0, 2)),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)), buffers=(buf(0),), tensors=(IN,))
    assert only(simulate(p)).message == "read_tiles(in, 2, b0) touches tiles [-1, 1) of in, which has 8 tiles"
    bounds = [r for r in certify(p).results if r.family == "bounds" and r.verdict.value == "refuted"]
    assert len(bounds) == 1
    assert "touches tiles [-1, 1) of in, which has 8 tiles" in bounds[0].reason


def _writer(site: Site, tensor: str, *, barrier: bool = True, signal: bool = True) -> EngineProgram:
    b = 0 if site == A else 1
    # The page is filled (packed) before it is published: its consumer writes it out.
    ops: list[Op] = [Reserve(b, 1), AcquireAcc(1, "bf16"), PackAcc(b, 1), ReleaseAcc(), Push(b, 1), Wait(b, 1),
                     WriteTiles(b, tensor, Addr(0), 1)]
    ops += [WriteBarrier()] if barrier else []
    ops += [SemInc(0, B, 1), AtomicBarrier()] if signal else []
    ops += [Pop(b, 1)] + ([] if barrier else [WriteBarrier()])
    return ep(site, Engine.WRITER, *ops)


def _reader(tensor: str) -> EngineProgram:
    return ep(B, Engine.READER, Reserve(2, 1), SemWait(0, GE, 1), SemSet(0, 0), ReadTiles(tensor, Addr(0), 1, 2),
              ReadBarrier(), Push(2, 1), Wait(2, 1), Pop(2, 1))


def test_tensor_race_activation_read() -> None:
    bufs = (buf(0, A), buf(1, B), buf(2, B, cb=2))
    ok = prog(_writer(A, "act"), _reader("act"), buffers=bufs, sems=(sem(0, B),), tensors=(ACT,))
    assert simulate(ok).violations == ()
    early = prog(_writer(A, "act", barrier=False), _reader("act"), buffers=bufs, sems=(sem(0, B),), tensors=(ACT,))
    v = only(simulate(early))
    assert where(v) == ("tensor-race", RB, (3,), ())
    assert v.message == ("read_tiles(act, 1, b2) reads activation act tile 0 while a write to it by (0,0).writer "
                         "is not complete")
    never = prog(ep(B, Engine.READER, Reserve(2, 1), ReadTiles("act", Addr(0), 1, 2), ReadBarrier(), Push(2, 1),
                    Wait(2, 1), Pop(2, 1)), buffers=bufs, tensors=(ACT,))
    assert only(simulate(never)).message == (
        "read_tiles(act, 1, b2) reads activation act tile 0 before any completed write to it")


def test_tensor_race_two_writers() -> None:
    bufs = (buf(0, A), buf(1, B))
    out1 = Tensor("out", (32, 32), "bf16", Role.OUTPUT)
    p = prog(_writer(A, "out", barrier=False, signal=False), _writer(B, "out", barrier=False, signal=False),
             buffers=bufs, tensors=(out1,))
    v = only(simulate(p))
    assert where(v) == ("tensor-race", "(1,0).writer", (6,), ())
    assert v.message == "write_tiles(b1, out, 1) writes out tile 0 while a write to it by (0,0).writer is not complete"


def test_tensor_race_state_read_after_write() -> None:
    bufs = (buf(0, A), buf(1, B), buf(2, B, cb=2))
    p = prog(_writer(A, "st"), _reader("st"), buffers=bufs, sems=(sem(0, B),), tensors=(ST,))
    v = only(simulate(p))
    assert where(v) == ("tensor-race", RB, (3,), ())
    assert v.message == ("reads state st tile 0 after a write to it by (0,0).writer was issued (a state is written only "
                         "after every read of its old value)")


# ---------------------------------------------------------------------------------------------- runs


def test_fifty_thousand_steps() -> None:
    r = simulate(producer_consumer(k=12_500))
    assert (r.status, r.steps, r.pushed) == ("terminated", 50_000, {0: 25_000})


def test_step_limit_and_stop_on() -> None:
    r = simulate(producer_consumer(), max_steps=5)
    assert (r.status, r.steps) == ("step-limit", 5)
    sizes = (2, 2, 1, 2, 2)
    reader = ep(A, Engine.READER, *[o for n in sizes for o in (Reserve(0, n), Push(0, n))])
    compute = ep(A, Engine.COMPUTE, *[o for n in sizes for o in (Wait(0, n), Pop(0, n))])
    p = prog(reader, compute, buffers=(buf(0),))
    r2 = simulate(p, stop_on=rule_at("cb-straddle", (9,), RA))
    assert r2.status == "violation"
    assert r2.positions[RA] == Position(RA, None)  # stopped right after the offending push
    assert r2.positions[CA].path == (8,)


def test_seeded_runs_reach_the_same_end() -> None:
    for seed in range(5):
        r = simulate(mcast_program(), seed=seed)
        assert (r.status, r.violations) == ("terminated", ())


def test_drive_stops_at_targets_and_reports_deadlock() -> None:
    p = producer_consumer(k=3)
    # Both engines stopped at their k=1 ops: not a deadlock (both could move).
    r = drive(p, None, {RA: Position(RA, (0, 1), (("k", 1),)), CA: Position(CA, (0, 0), (("k", 1),))})
    assert (r.reached, r.status) == (True, "stopped")
    assert r.pushed == {0: 2}
    assert r.popped == {0: 2}
    # The real deadlock of the over-waiting consumer replays.
    r2 = drive(producer_consumer(extra_wait=1), None, {CA: Position(CA, (1,)), RA: Position(RA, None)})
    assert (r2.reached, r2.status) == (True, "deadlock")
    # A target that does not exist (iteration 5 of a 3-trip loop) is not reached and never passed.
    r3 = drive(p, None, {RA: Position(RA, (0, 0), (("k", 5),))})
    assert (r3.reached, r3.unreached, r3.status) == (False, (RA,), "stopped")
    assert r3.positions[RA] == Position(RA, (0, 1), (("k", 2),))  # its next step would end the program
    with pytest.raises(KeyError):
        drive(p, None, {"(9,9).reader": Position("(9,9).reader", None)})


def test_replay_checks_each_transition() -> None:
    p = producer_consumer(k=1)
    r = replay(p, None, [Transition("step", 0), Transition("step", 0), Transition("step", 1)])
    assert (r.status, r.positions[CA].path) == ("stopped", (0, 1))
    with pytest.raises(ValueError, match=r"transition 0 .*\(0,0\).compute cannot step: waits for b0"):
        replay(p, None, [Transition("step", 1)])


def test_result_text_and_json() -> None:
    r = simulate(producer_consumer(extra_wait=1))
    assert r.text() == ("t: deadlock after 32 steps\nstuck:\n"
                        "  (0,0).compute at ops[1] wait(b0, 1): waits for b0: pushed-popped=16-16=0 < 1")
    j = r.to_json()
    assert j["status"] == "deadlock"
    assert j["stuck"] == [{"position": {"engine": CA, "path": [1], "iteration": [], "op": "wait(b0, 1)"},
                           "reason": "waits for b0: pushed-popped=16-16=0 < 1"}]
    assert j["buffers"] == [{"id": 0, "pushed": 16, "popped": 16}]


def test_data_ops_stay_inside_their_reservation_and_wait() -> None:
    """Writes land in the reserved back (reference §1.1: get_write_ptr is valid between reserve and push), reads
    come from the waited front (get_read_ptr between wait and pop)."""
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadTiles("in", Addr(1), 1, 0),
                ReadBarrier(), Push(0, 1)),
             ep(A, Engine.WRITER, WriteTiles(0, "out", Addr(0), 1), Wait(0, 1), WriteBarrier(), Pop(0, 1)),
             buffers=(buf(0),), tensors=(IN, Tensor("out", (32, 32), "bf16", Role.OUTPUT)))
    r = simulate(p)
    assert sorted(where(v) for v in r.violations) == [("cb-read-unwaited", "(0,0).writer", (0,), ()),
                                                      ("cb-write-unreserved", RA, (2,), ())]
    (v,) = [v for v in r.violations if v.rule == "cb-write-unreserved"]
    assert v.message == ("read_tiles(in, 1, b0) writes tiles [1, 2) past the write pointer of b0, but its reserved "
                         "window holds 1 tiles")
