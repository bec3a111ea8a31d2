"""A fault of the restarting-sequence protocol (``semaphores.Epochs``, docs/checker.md "Words that carry a sequence
which restarts"), found by the sharded layernorm on four cores (examples/ttmetal/layernorm_sharded/notes.md): an exact
wait for an epoch's *first* flag was proved exact although a later flag of the same epoch may land before the wait
reads the word.

The protocol's argument covered the receiver's resets (each epoch's flags land before the next reset) and its last
wait of an epoch (it accepts only the epoch's last flag), not an earlier exact wait in the epoch. In the sharded
layernorm on two cores every receiver is an all-to-all worker whose second increment orders the sender's later
flags after its VALID wait; a receiver that only waits for the multicast (a non-all-to-all worker,
``reader_mcast_receiver_unary_sharded_ln.cpp:157`` then ``:259``) has no such increment, and the sender may set and
multicast ``block + 2`` before the receiver read VALID: its ``wait(VALID)`` waits forever. The reference interpreter
finds it (``sem-overshoot``, a deadlock); the program's verdict was refuted (the deadlock family), but ``sem-exact`` of
the receiver's word was reported proved.

Fixed (``families/semaphores/encoding._epoch_overtakes``): per exact wait of an epoch, the checker asks that none of
the epoch's later flags of another value is issued while the owner is still at the wait (``sem-overshoot``, a
candidate replayed by the interpreter); the acknowledged form (the two-core layernorm's) still proves."""

from __future__ import annotations

import attrs
from builders import EQ, GE, A, B, ep, prog, sem

from verispatial.ir import AtomicBarrier, Engine, Group, McastSetValid, SemInc, SemSet, SemWait, WriteBarrier
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.petri.explore import explore


def two_passes(acknowledged: bool) -> Program:
    """Two passes of the layernorm's VALID word in small: (0,0) waits for (1,0)'s increment, resets its count, sets
    its word 0 to VALID (1) and multicasts it, then sets 2 and multicasts it; (1,0) resets its copy to INVALID (0),
    increments, waits for VALID exactly, then ``wait_min(2)``. ``acknowledged``: (1,0) increments again after its
    VALID wait and (0,0) waits for that before it sets 2 (the all-to-all worker's :248, the sender's :229)."""
    g = Group(0, A, (1, 0, 1, 0))
    snd: list = []
    rcv: list = []
    for _ in range(2):
        ack_wait = [SemWait(1, EQ, 1), SemSet(1, 0)] if acknowledged else []
        ack_inc = [SemInc(1, A, 1)] if acknowledged else []
        snd += [SemWait(1, EQ, 1), SemSet(1, 0), SemSet(0, 1), McastSetValid(0, 0, 1), WriteBarrier(),
                *ack_wait, SemSet(0, 2), McastSetValid(0, 0, 1), WriteBarrier()]
        rcv += [SemSet(0, 0), SemInc(1, A, 1), SemWait(0, EQ, 1), *ack_inc, SemWait(0, GE, 2)]
    rcv.append(AtomicBarrier())
    return prog(ep(A, Engine.READER, *snd), ep(B, Engine.READER, *rcv),
                sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def _verdicts(p: Program) -> dict[str, object]:
    from verispatial.driver.run import certify

    return {x.name: x for x in certify(p).results}


def test_the_unacknowledged_exact_wait_is_refuted_and_replayed() -> None:
    """The interpreter overshoots the exact wait; the checker refutes ``sem-overshoot`` of the receiver's word (the
    flag 2 of the pass issued while the receiver still waits to read VALID), replayed, and the deadlock."""
    from verispatial.certify.report import Verdict

    p = two_passes(acknowledged=False)
    assert R.SEM_OVERSHOOT in explore(p).rules()
    got = _verdicts(p)
    assert "sem-exact:sem0@(1,0)" not in got
    x = got["sem-overshoot:sem0@(1,0)"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    assert x.counterexample["replay"]["violation"]["rule"] == R.SEM_OVERSHOOT  # type: ignore[attr-defined]
    assert any(n.startswith("deadlock") and r.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
               for n, r in got.items())


def test_the_acknowledged_exact_wait_still_proves() -> None:
    from verispatial.certify.report import Verdict

    p = two_passes(acknowledged=True)
    assert explore(p).rules() == []
    assert _verdicts(p)["sem-exact:sem0@(1,0)"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
