"""The multicast family (verispatial/families/multicast/): McastSend and McastSetValid leaving their source and
landing at each destination, the receiver's slot and what it publishes — each rule on a tiny program with the exact
expected outcome in the reference interpreter, and the same op found by each chain (interpreter, per-engine rules,
Promela model)."""

from __future__ import annotations

import re

from builders import EQ, GE, RA, RB, A, B, buf, ep, prog, sem

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.families.multicast import encoding, promela, semantics
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Engine,
    Flush,
    Group,
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
    SemIncMcast,
    SemSet,
    SemWait,
    Target,
    Tensor,
    Wait,
    WriteBarrier,
)
from verispatial.ir import rules as R
from verispatial.petri.interp import Interp, SimResult, Transition, simulate
from verispatial.petri.position import Position, Violation
from verispatial.petri.promela import to_promela


def only(r: SimResult) -> Violation:
    assert len(r.violations) == 1, r.text()
    return r.violations[0]


def where(v: Violation) -> tuple[str, str, tuple[int, ...] | None, tuple[tuple[str, int], ...]]:
    return (v.rule, v.position.engine, v.position.path, v.position.iteration)


def findings(p: Program) -> list[tuple[str, str, tuple[int, ...] | None]]:
    """The per-engine rules' findings on every engine: (rule, engine, path), sorted."""
    return sorted((f.rule, f.engine, f.path) for v in engine_views(p).values() for f in engine_facts(p, v).findings)


def asserted(model: str, rule: str) -> list[str]:
    """The op ids (``O_<engine>_<path>``) at which the Promela model asserts ``rule``, in order."""
    return re.findall(rf"assert\(R_{rule.replace('-', '_')} \|\| (O_\d+(?:_\d+)*) \|\|", model)


IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


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
    assert s.landed == [0, 0b11]  # pages 0 and 1 of b1 landed, not yet published
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


def test_seeded_runs_reach_the_same_end() -> None:
    for seed in range(5):
        r = simulate(mcast_program(), seed=seed)
        assert (r.status, r.violations) == ("terminated", ())



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
    assert v.message == "push(b1, 2) publishes pages [0, 2) but no multicast has landed in page 0 of b1 yet"


# ---------------------------------------------------------------------------------------------- every chain


def test_each_chain_finds_the_flag_that_may_overtake_its_data() -> None:
    """``async-flag-overtake``: with no Flush between the data multicast and its flag (ops[7]), a target whose writes
    are not ordered (Blackhole) may land the flag first. The interpreter reports it at the flag, the per-engine rules
    find it there and the Promela model asserts it there; on Wormhole, which keeps writes ordered, no chain does."""
    m = mcast_program(BLACKHOLE, flush=False)
    assert [where(v) for v in simulate(m).violations] == [(R.ASYNC_FLAG_OVERTAKE, RA, (7,), ())]
    assert findings(m) == [(R.ASYNC_FLAG_OVERTAKE, RA, (7,))]
    assert asserted(to_promela(m), R.ASYNC_FLAG_OVERTAKE) == ["O_0_7"]
    ordered = mcast_program(WORMHOLE, flush=False)
    assert (simulate(ordered).violations, findings(ordered)) == ((), [])
    assert asserted(to_promela(ordered), R.ASYNC_FLAG_OVERTAKE) == []


def test_the_family_tables_cover_the_family_op_classes() -> None:
    ops = {McastSend, McastSetValid}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops
    assert set(semantics.LANDINGS) == set(promela.LANDINGS) == set(promela.QUEUES) == ops
    assert SemIncMcast not in ops  # the increment multicast is the semaphore family's
