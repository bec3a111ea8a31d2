"""DIFFERENTIAL for the protocols of issue 7: the checker against the explicit-state oracle on random programs that
use ``If`` guards, loop counts affine in a trip, wait thresholds growing with a loop index, ``SemIncMcast``,
flag multicasts from another source word and state tensors across sections.

Programs come from ``verispatial.strategies.protocol_programs``: ``programs()`` (correct by construction about half
of the time, then mutated) rewritten by one or more *protocol rewrites*, each of which may keep or break the program:

- ``guard``: wrap an op of a loop body (or a run of them) in ``If(var, guard)`` of an enclosing loop;
- ``affine``: a trip loop's count ``t`` becomes ``TripCount(t, scale, offset)``; a constant count may become one;
- ``grow``: a wait inside a loop gets a threshold ``value + coef * index``;
- ``setgrow``: a SemSet inside a loop stores ``value + coef * index`` (a word carrying several values);
- ``mcast``: an increment of another site's word becomes a ``SemIncMcast`` to that site;
- ``src``: a flag multicast reads a constant word other than its own (added as a handshake);
- ``sections``: an engine's ops are split into two sections (state reads see the versions of earlier sections);
- ``jump``: a counting word's increments double and each ``ge`` wait asks one less, so increments jump past it;
- ``seq``: argmax's start handshake, a word carrying a sequence copied to a receiver (the ``sequence`` protocol),
  correct or broken in one of ``protocols.SEQ_BREAKS``.

Agreement is ``test_differential.disagreements`` with the program, so per obligation: soundness (no obligation
that claims what the oracle breaks is proved), refutations are real, deadlock verdicts agree. The number of
programs comes from the Hypothesis profile: 60 under ``ci`` (about 30 s), 2000 under ``thorough`` (measured before
the comparison was per obligation: 2000 programs, zero disagreements, 35 minutes on a shared core).
"""

from __future__ import annotations

import os

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_differential import MAX_STATES, disagreements

from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    Engine,
    EngineProgram,
    Group,
    Loop,
    Program,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    Site,
    Trip,
    WaitCond,
)
from verispatial.ir.serialize import dumps
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.strategies.protocols import _jump, mcast_rewrite, protocol_programs

EXAMPLES = {"thorough": 2000, "ci": 60}.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 40)


@settings(max_examples=EXAMPLES, deadline=None)
@given(protocol_programs())
def test_checker_agrees_with_the_oracle_on_protocols(p: Program) -> None:
    oracle = explore(p, max_states=MAX_STATES)
    assume(oracle.verdict != "inconclusive")
    found = disagreements(oracle, certify(p), p)  # per obligation (issue 7: every verdict on its own)
    assert found == [], "\n".join([*found, dumps(p)])


def test_mcast_rewrite_keeps_the_program_valid() -> None:
    """The ``mcast`` rewrite turns a remote increment into a one-destination ``SemIncMcast`` with its own group."""
    base = Program(
        "p", WORMHOLE, semaphores=(Semaphore(0, "s", (Site(1, 0),), 0),), trips=(Trip("t", 2),),
        programs=(EngineProgram(Site(0, 0), Engine.READER, (Loop("k", "t", (SemInc(0, Site(1, 0), 1),)),)),
                  EngineProgram(Site(1, 0), Engine.READER, (Loop("k", "t", (SemWait(0, WaitCond.GE, 1),)),
                                                            SemSet(0, 0)))))
    m = mcast_rewrite(base)
    assert validate(m) == []
    assert m.groups == (Group(0, Site(0, 0), (1, 0, 1, 0)),)
    assert m.programs[0].ops == (Loop("k", "t", (SemIncMcast(0, 0, 1, 1),)),)


def _counter(wait: SemWait, inc: int = 1) -> Program:
    a, b = Site(0, 0), Site(1, 0)
    return Program(
        "p", WORMHOLE, semaphores=(Semaphore(0, "s", (b,), 1),),
        programs=(EngineProgram(a, Engine.READER, (Loop("k", 2, (SemInc(0, b, inc),)), AtomicBarrier())),
                  EngineProgram(b, Engine.READER, (wait, SemSet(0, 1)))))


@settings(max_examples=1, deadline=None)
@given(st.data())
def test_jump_rewrite_doubles_increments_and_asks_one_less(data: st.DataObject) -> None:
    """The ``jump`` rewrite: increments by 2, a ``ge 3`` wait (init 1) becomes ``ge 4`` (``1 + 2*2 - 1``), which the
    second increment jumps past; an ``eq`` wait scales exactly; both stay correct and prove."""
    for wait, want in ((SemWait(0, WaitCond.GE, 3), SemWait(0, WaitCond.GE, 4)),
                       (SemWait(0, WaitCond.EQ, 3), SemWait(0, WaitCond.EQ, 5))):
        j = data.draw(_jump(_counter(wait)))
        assert validate(j) == []
        assert j.programs[0].ops[0] == Loop("k", 2, (SemInc(0, Site(1, 0), 2),))
        assert j.programs[1].ops == (want, SemSet(0, 1))
        assert explore(j).verdict == "ok"
        assert certify(j).exit_code == 0
