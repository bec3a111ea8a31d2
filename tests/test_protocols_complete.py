"""Completeness on common correct protocols (issue 7, deliverable 3): the receiver's vendor order and resets that
do not directly follow their wait prove; their broken forms are refuted with the violation they claim, replayed.

The handshake: a sender on (0,0) reads a page into c0, waits for its ready counter (sem1), resets it, multicasts
the page to (1,0) (after a flush, on either target), multicasts its own word of the flag (sem0, set to VALID once at
its start) and pushes the page to its writer; the receiver on (1,0) reserves the slot, runs its flag protocol and
pushes the page to its writer. ``K`` blocks.
"""

from __future__ import annotations

import pytest
from builders import EQ, GE, RA, RB, A, B, buf, ep, prog, sem
from verdicts import not_proved, one

from verispatial.certify import reach
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    BufferAt,
    Engine,
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
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore

K = 3
FLAG, READY = 0, 1
VALID, INVALID = 1, 0


def handshake(receiver: list[Op], sender_tail: list[Op] | None = None, target: Target = WORMHOLE) -> Program:
    """``receiver``: the receiver's ops between its reserve and its push. ``sender_tail``: the sender's ops from the
    wait for its ready counter to the flag (default: wait, reset, multicast, flush, flag)."""
    tail = sender_tail if sender_tail is not None else [
        SemWait(READY, EQ, 1), SemSet(READY, 0), McastSend(0, 1, 0, 1), Flush(), McastSetValid(FLAG, 0, 1)]
    at = Addr(0, (Term("k", 1),))
    sender = ep(A, Engine.READER, SemSet(FLAG, VALID), Loop("k", K, (
        Reserve(0, 1), ReadTiles("x", at, 1, 0), ReadBarrier(), *tail, Push(0, 1))), WriteBarrier())
    recv = ep(B, Engine.READER, Loop("k", K, (Reserve(1, 1), *receiver, Push(1, 1))), AtomicBarrier())
    drains = [ep(s, Engine.WRITER, Loop("k", K, (Wait(b, 1), Pop(b, 1)))) for s, b in ((A, 0), (B, 1))]
    p = prog(sender, recv, *drains, buffers=(buf(0, A, cap=2, cb=0), buf(1, B, cap=2, cb=0)),
             sems=(sem(FLAG, A, B), sem(READY, A)), groups=(Group(0, A, (1, 0, 1, 0)),),
             tensors=(Tensor("x", (32, 32 * K), "bf16", Role.INPUT),), target=target)
    p = Program(p.name, p.target, tensors=p.tensors, buffers=p.buffers, semaphores=p.semaphores, groups=p.groups,
                programs=p.programs,
                memory=(BufferAt(0, target.reserved_base, 4096), BufferAt(1, target.reserved_base, 4096)))
    assert validate(p) == []
    return p


#: The reference order (reference §2.5): invalidate, say ready, wait for VALID.
REFERENCE: list[Op] = [SemSet(FLAG, INVALID), SemInc(READY, A, 1), SemWait(FLAG, EQ, VALID)]
#: The vendor order: say ready, wait for VALID, then invalidate (the flag starts INVALID).
VENDOR: list[Op] = [SemInc(READY, A, 1), SemWait(FLAG, EQ, VALID), SemSet(FLAG, INVALID)]


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=lambda t: t.name)
@pytest.mark.parametrize("receiver", [REFERENCE, VENDOR], ids=["reference", "vendor"])
def test_both_receiver_orders_prove(receiver: list[Op], target: Target) -> None:
    p = handshake(receiver, target=target)
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert not_proved(report) == {}
    # The lockstep lemma covers both orders.
    assert "lockstep multicast handshake" in one(report, "sem-exact:sem0@(1,0)").reason
    assert "lockstep multicast handshake" in one(report, "sem-exact:sem1@(0,0)").reason


def test_the_vendor_flag_word_ends_at_its_initial_value() -> None:
    report = certify(handshake(VENDOR))
    r = one(report, "balance-sem:sem0@(1,0)")
    assert r.verdict == Verdict.PROVED
    assert "every flag issued is waited for" in r.reason


def test_a_vendor_receiver_without_its_acknowledgement_loses_a_flag() -> None:
    """No ready counter: the sender may multicast block k+1's flag before the receiver reset block k's, and the
    reset wipes it — replayed as sem-set-race at that very reset."""
    p = handshake([SemWait(FLAG, EQ, VALID), SemSet(FLAG, INVALID)],
                  sender_tail=[McastSend(0, 1, 0, 1), Flush(), McastSetValid(FLAG, 0, 1)])
    assert "sem-set-race" in explore(p).rules()
    report = certify(p)
    r = one(report, "sem-flag-early:sem0@(1,0)")
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    v = r.counterexample["replay"]["violation"]
    assert (v["rule"], v["position"]["engine"], v["position"]["path"]) == ("sem-set-race", RB, [0, 2])


def test_a_reset_after_the_data_multicast_proves() -> None:
    """The sender resets its ready counter only after the data multicast (not right after its wait)."""
    p = handshake(REFERENCE, sender_tail=[SemWait(READY, GE, 1), McastSend(0, 1, 0, 1), SemSet(READY, 0), Flush(),
                                          McastSetValid(FLAG, 0, 1)])
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert not_proved(report) == {}
    assert one(report, "sem-exact:sem1@(0,0)").verdict == Verdict.PROVED


def test_a_reset_after_the_flag_loses_the_next_ready_increment() -> None:
    """Reset after the flag: the receiver's next increment may land before it — a lost update, replayed as
    sem-set-race at the sender's reset."""
    p = handshake(REFERENCE, sender_tail=[SemWait(READY, GE, 1), McastSend(0, 1, 0, 1), Flush(),
                                          McastSetValid(FLAG, 0, 1), SemSet(READY, 0)])
    assert "sem-set-race" in explore(p).rules()
    report = certify(p)
    r = one(report, "sem-set-race:sem1@(0,0)")
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    v = r.counterexample["replay"]["violation"]
    assert (v["rule"], v["position"]["engine"], v["position"]["path"]) == ("sem-set-race", RA, [1, 7])


def test_a_counter_reset_after_reading_what_it_announced_proves() -> None:
    """A waiter reads the activation its counter announced and only then resets the counter: the reset is the next
    op on the word after the wait, in the same body."""
    at = Addr(0, (Term("k", 1),))
    writer = ep(A, Engine.WRITER, Loop("k", 2, (Wait(0, 1), Pop(0, 1))), SemInc(0, B, 1), AtomicBarrier())
    reader = ep(A, Engine.READER, Loop("k", 2, (Reserve(0, 1), ReadTiles("x", at, 1, 0), ReadBarrier(),
                                                Push(0, 1))))
    waiter = ep(B, Engine.READER, SemWait(0, EQ, 1), Reserve(1, 1), Push(1, 1), SemSet(0, 0))
    drain = ep(B, Engine.WRITER, Wait(1, 1), Pop(1, 1))
    p = prog(reader, writer, waiter, drain, buffers=(buf(0, A), buf(1, B, cb=0)), sems=(sem(0, B),),
             tensors=(Tensor("x", (32, 64), "bf16", Role.INPUT),))
    p = Program(p.name, p.target, tensors=p.tensors, buffers=p.buffers, semaphores=p.semaphores,
                programs=p.programs, memory=(BufferAt(0, WORMHOLE.reserved_base, 8192),
                                             BufferAt(1, WORMHOLE.reserved_base, 8192)))
    assert validate(p) == []
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert not_proved(report) == {}
    assert one(report, "sem-exact:sem0@(1,0)").reason == "reset protocol of sem0@(1,0) holds (2 obligations)"


def test_a_read_between_a_wait_and_its_later_reset_is_reachable() -> None:
    """The waiter's reset comes three ops after its wait, after the read the counter announced. The past state the
    reset protocol adds is the one right after the wait returned — not one at the reset, which would claim the
    waiter had already passed its read and push, make the read unreachable, and so prove its race vacuously. The
    writer signals without completing its write: the read races it, and the checker refutes, replayed."""
    writer = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "act", Addr(0), 1), SemInc(0, A, 1), Pop(0, 1),
                Wait(1, 1), Pop(1, 1), AtomicBarrier(), WriteBarrier())
    # The page the writer writes out is packed by the compute engine; the waiter, which reads over the NoC, is the
    # reader (a compute engine issues no NoC read).
    filler = ep(A, Engine.COMPUTE, Reserve(0, 1), AcquireAcc(1, "bf16"), PackAcc(0, 1), ReleaseAcc(), Push(0, 1))
    waiter = ep(A, Engine.READER, SemWait(0, GE, 1), Reserve(1, 1), ReadTiles("act", Addr(0), 1, 1), ReadBarrier(),
                Push(1, 1), SemSet(0, 0))
    p = prog(filler, writer, waiter, buffers=(buf(0, A, cap=1), buf(1, A, cap=1, cb=1)), sems=(sem(0, A),),
             tensors=(Tensor("act", (32, 32), "bf16", Role.ACTIVATION),))
    p = Program(p.name, p.target, tensors=p.tensors, buffers=p.buffers, semaphores=p.semaphores,
                programs=p.programs, memory=(BufferAt(0, WORMHOLE.reserved_base, 2048),
                                             BufferAt(1, WORMHOLE.reserved_base + 2048, 2048)))
    assert validate(p) == []
    assert "tensor-race" in explore(p).rules()
    report = certify(p)
    r = one(report, "hb-activation:act:(0,0).reader[2]<(0,0).writer[1]")
    assert r.verdict == Verdict.REFUTED, r.reason
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == "tensor-race"


def send_first(receivers: int = 2, blocks: int = 3) -> Program:
    """The sender multicasts first and then waits for every receiver's acknowledgement on its ack counter (sem1),
    which it resets — the ack word's only waiter. Each receiver, in the vendor order, waits for VALID, resets its
    flag, publishes the block, reserves its next slot and only then acknowledges (so the next multicast finds the
    slot free). Sites (0,0) .. (receivers,0)."""
    sites = [Site(x, 0) for x in range(receivers + 1)]
    at = Addr(0, (Term("k", 1),))
    sender = ep(A, Engine.READER, SemSet(FLAG, VALID), Loop("k", blocks, (
        Reserve(0, 1), ReadTiles("x", at, 1, 0), ReadBarrier(), McastSend(0, 1, 0, receivers), Flush(),
        McastSetValid(FLAG, 0, receivers), Push(0, 1), SemWait(READY, EQ, receivers), SemSet(READY, 0))),
        WriteBarrier())
    programs = [sender, ep(A, Engine.WRITER, Loop("k", blocks, (Wait(0, 1), Pop(0, 1))))]
    for i, s in enumerate(sites[1:], start=1):
        programs.append(ep(s, Engine.READER, Reserve(i, 1), Loop("k", blocks, (
            SemWait(FLAG, EQ, VALID), SemSet(FLAG, INVALID), Push(i, 1), Reserve(i, 1), SemInc(READY, A, 1))),
            AtomicBarrier()))
        programs.append(ep(s, Engine.WRITER, Loop("k", blocks, (Wait(i, 1), Pop(i, 1)))))
    p = prog(*programs, buffers=tuple(buf(i, s, cap=2, cb=0) for i, s in enumerate(sites)),
             sems=(sem(FLAG, *sites), sem(READY, A)), groups=(Group(0, A, (1, 0, receivers, 0)),),
             tensors=(Tensor("x", (32, 32 * blocks), "bf16", Role.INPUT),))
    p = Program(p.name, p.target, tensors=p.tensors, buffers=p.buffers, semaphores=p.semaphores, groups=p.groups,
                programs=p.programs, memory=tuple(BufferAt(i, WORMHOLE.reserved_base, 4096) for i in range(len(sites))))
    assert validate(p) == []
    return p


def test_an_acknowledgement_reset_by_its_only_waiter_needs_and_gets_past_states(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With two receivers, the state in which the sender issues flag k+1 does not tell whose acknowledgements its
    wait k counted (one receiver may be a block ahead, the other behind); the state at the sender's last reset
    does: every receiver had acknowledged exactly k blocks, so each had reset its flag k times."""
    p = send_first()
    assert explore(p, max_states=200_000).verdict == "ok"
    report = certify(p)
    assert not_proved(report) == {}
    for d in ("(1,0)", "(2,0)"):
        assert one(report, f"sem-exact:sem0@{d}").reason == f"flag protocol of sem0@{d} holds (2 obligations)"
    # Without the past states the flags' exactness does not prove (the single state is consistent with a lost flag).
    monkeypatch.setattr(reach.StateQuery, "_add_history", lambda self, trusted, names: None)
    alone = certify(p)
    assert {n for n in not_proved(alone) if n.startswith("sem-")} == {"sem-flag-early:sem0@(1,0)",
                                                                       "sem-flag-early:sem0@(2,0)"}
