"""DIFFERENTIAL for the restarting VALID sequence (``semaphores.Epochs``; the sharded layernorm's sender and receiver,
``reader_mcast_sender_unary_sharded_ln.cpp`` :138-141, 272-299, ``reader_mcast_receiver_unary_sharded_ln.cpp``
:155-157, 255-260): the checker against the explicit-state oracle on the handshake of
``strategies.protocols.epochs_handshake``, correct and broken in each of ``EPOCH_BREAKS``, alone and added to random
programs. Agreement is ``test_differential.disagreements``, per obligation (no obligation the oracle breaks is proved,
every refutation is real, deadlock verdicts agree). Programs: 25 under ``ci``, 1000 under ``thorough``."""

from __future__ import annotations

import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_differential import MAX_STATES, disagreements

from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import WORMHOLE, Engine, EngineProgram, Program, Site
from verispatial.ir import rules as R
from verispatial.ir.serialize import dumps
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.strategies.programs import programs
from verispatial.strategies.protocols import EPOCH_BREAKS, _epochs, epochs_handshake

EXAMPLES = {"thorough": 1000, "ci": 25}.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 15)

A, B = Site(0, 0), Site(1, 0)
BASE = Program("epochs", WORMHOLE, programs=(EngineProgram(A, Engine.READER, ()), EngineProgram(B, Engine.READER, ())))


def handshake(passes: int, values: int, broken: str | None = None, bad_pass: int = 0, looped: bool = False) -> Program:
    return epochs_handshake(BASE, BASE.programs[0], BASE.programs[1], passes, values, broken, bad_pass=bad_pass,
                            bad_value=2, looped=looped)


def _verdicts(p: Program) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in certify(p).results}


@pytest.mark.parametrize(("passes", "values"), [(1, 2), (2, 2), (2, 3), (3, 2)])
def test_the_restarting_sequence_proves_every_obligation(passes: int, values: int) -> None:
    """Correct, unrolled as the kernels are: every obligation proved (one pass too, since its destination's reset
    makes it a one-epoch restarting sequence), the explorer agreeing."""
    p = handshake(passes, values)
    assert validate(p) == []
    assert explore(p, max_states=MAX_STATES).verdict == "ok"
    assert {n: v for n, v in _verdicts(p).items() if v is not Verdict.PROVED} == {}
    words = analyse(p).words
    assert (words[(0, A)].kind, words[(0, B)].kind) == ("epochs", "epochs")


def test_the_passes_as_a_loop_are_never_proved_by_the_protocol() -> None:
    """The same passes as one loop: the sets are inside a loop, outside the restarting protocol (``_epoch_source``);
    the explorer finds nothing, the checker fails to prove the word's protocol (never refutes, never proves it)."""
    p = handshake(2, 2, looped=True)
    assert explore(p, max_states=MAX_STATES).verdict == "ok"
    got = _verdicts(p)
    assert got["sem-protocol:sem0@(1,0)"] is Verdict.FAILED
    assert Verdict.REFUTED not in got.values()


def test_acknowledging_before_the_reset_of_a_single_pass_is_refuted() -> None:
    """One pass, the receiver acknowledging before it resets its copy: the sender's VALID may land before the reset
    wipes it and the receiver waits for ever. ``sem-flag-early`` is refuted, replayed as the interpreter's
    ``sem-set-race`` at the reset, and the deadlock refuted."""
    p = handshake(1, 2, "inc-first")
    assert R.SEM_SET_RACE in explore(p, max_states=MAX_STATES).rules()
    res = {r.name: r for r in certify(p).results}
    x = res["sem-flag-early:sem0@(1,0)"]
    assert x.verdict is Verdict.REFUTED
    assert x.counterexample["replay"]["violation"]["rule"] == R.SEM_SET_RACE  # type: ignore[index]
    assert any(n.startswith("deadlock") and r.verdict is Verdict.REFUTED for n, r in res.items())


CASES = [(b, n, m, k) for b in EPOCH_BREAKS for (n, m, k) in ((1, 2, 0), (2, 3, 1), (3, 2, 1))]


@pytest.mark.parametrize(("broken", "passes", "values", "bad_pass"), CASES)
def test_each_break_of_the_restarting_sequence_agrees_with_the_explorer(broken: str, passes: int, values: int,
                                                                       bad_pass: int) -> None:
    """Every break at one, two or three passes: no obligation the explorer breaks is proved and every refutation is
    real (a break the hardware forgives, e.g. two resets before the acknowledgement, may fail to prove)."""
    p = handshake(passes, values, broken, bad_pass)
    oracle = explore(p, max_states=MAX_STATES)
    assert oracle.verdict != "inconclusive"
    found = disagreements(oracle, certify(p), p)
    assert found == [], "\n".join([*found, dumps(p)])


@st.composite
def _epochs_programs(draw: st.DrawFn) -> Program:
    p = draw(programs())
    q = draw(_epochs(p))
    assume(q is not p and not validate(q) and len(q.programs) <= 6)
    return q


@settings(max_examples=EXAMPLES, deadline=None)
@given(_epochs_programs())
def test_checker_agrees_with_the_oracle_on_restarting_sequences(p: Program) -> None:
    oracle = explore(p, max_states=MAX_STATES)
    assume(oracle.verdict != "inconclusive")
    found = disagreements(oracle, certify(p), p)
    assert found == [], "\n".join([*found, dumps(p)])
