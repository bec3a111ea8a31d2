"""A fault of the restarting-sequence protocol (``semaphores.Epochs``, docs/checker.md "Words that carry a sequence
which restarts"), found by the sharded layernorm on four cores (examples/ttmetal/layernorm_sharded/notes.md): an exact
wait for an epoch's *first* flag is proved exact although a later flag of the same epoch may land before the wait
reads the word.

The protocol's argument covers the receiver's resets (each epoch's flags land before the next reset) and its last
wait of an epoch (it accepts only the epoch's last flag), but not an earlier exact wait in the epoch. In the sharded
layernorm on two cores every receiver is an all-to-all worker whose second increment orders the sender's later
flags after its VALID wait; a receiver that only waits for the multicast (a non-all-to-all worker,
``reader_mcast_receiver_unary_sharded_ln.cpp:157`` then ``:259``) has no such increment, and the sender may set and
multicast ``block + 2`` before the receiver read VALID: its ``wait(VALID)`` waits forever. The reference interpreter
finds it (``sem-overshoot``, a deadlock); the program's verdict is refuted (the deadlock family replays it), but the
obligation ``sem-exact`` of the receiver's word is reported proved, which it is not.

Expected: ``sem-exact:sem0@(1,0)`` is refuted or failed-to-prove, never proved. Marked strict xfail until the
checker asks, per exact wait of an epoch, that the epoch's next flag of another value is issued after the wait
returned (a query like ``sem-flag-early``'s); the whole program stays refuted meanwhile (asserted below)."""

from __future__ import annotations

import attrs
import pytest
from builders import EQ, GE, A, B, ep, prog, sem

from verispatial.ir import AtomicBarrier, Engine, Group, McastSetValid, SemInc, SemSet, SemWait, WriteBarrier
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.petri.explore import explore


def unacknowledged_receiver() -> Program:
    """Two passes of the layernorm's VALID word in small, the receiver not acknowledging VALID: (0,0) waits for
    (1,0)'s increment, resets its count, sets its word 0 to VALID (1) and multicasts it, then at once sets 2 and
    multicasts it; (1,0) resets its copy to INVALID (0), increments, waits for VALID exactly, then ``wait_min(2)``."""
    g = Group(0, A, (1, 0, 1, 0))
    snd: list = []
    rcv: list = []
    for _ in range(2):
        snd += [SemWait(1, EQ, 1), SemSet(1, 0), SemSet(0, 1), McastSetValid(0, 0, 1), WriteBarrier(),
                SemSet(0, 2), McastSetValid(0, 0, 1), WriteBarrier()]
        rcv += [SemSet(0, 0), SemInc(1, A, 1), SemWait(0, EQ, 1), SemWait(0, GE, 2)]
    rcv.append(AtomicBarrier())
    return prog(ep(A, Engine.READER, *snd), ep(B, Engine.READER, *rcv),
                sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def _verdicts(p: Program) -> dict[str, object]:
    from verispatial.driver.run import certify

    return {x.name: x for x in certify(p).results}


def test_the_interpreter_overshoots_the_exact_wait_and_the_program_is_refuted() -> None:
    from verispatial.certify.report import Verdict

    p = unacknowledged_receiver()
    assert R.SEM_OVERSHOOT in explore(p).rules()
    got = _verdicts(p)
    assert any(n.startswith("deadlock") and r.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
               for n, r in got.items())


@pytest.mark.xfail(strict=True, reason="checker fault: the Epochs protocol proves an exact wait for an epoch's "
                                       "first flag that a later flag of the epoch may overtake (module docstring)")
def test_the_exact_wait_for_the_first_flag_is_not_proved() -> None:
    from verispatial.certify.report import Verdict

    got = _verdicts(unacknowledged_receiver())
    assert got["sem-exact:sem0@(1,0)"].verdict is not Verdict.PROVED  # type: ignore[attr-defined]
