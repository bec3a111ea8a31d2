"""A ``ge`` wait before a reset consumes what it saw, not its threshold (docs/checker.md "Semaphore protocols").

An increment that jumps past a ``ge`` threshold, or several increments that must all land for the wait to return,
leave the word above the threshold when the wait returns; the reset after it wipes all of it and no update is lost.
Each correct program is confirmed by the explicit-state explorer and proved; each broken variant (a ``ge`` wait
overshot into a deadlock, a balance that really fails, an increment that really lands between wait and reset) is
refuted with a counterexample the interpreter replayed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from builders import GE, A, B, ep, prog
from verdicts import not_proved

from verispatial.certify.certificate import derive_certificate
from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.certify.semaphores import LANDING_EXACT_LIMIT, least_landing
from verispatial.driver.run import certify
from verispatial.ir import AtomicBarrier, Engine, Group, Loop, Program, Semaphore, SemInc, SemIncMcast, SemSet, SemWait
from verispatial.petri.explore import explore

WORD = Semaphore(0, "s", (B,))
ACK = Semaphore(1, "ack", (A,))


def jump_past() -> Program:
    """One increment by 2 past a ``ge 1`` wait, then a reset: the wait sees 2 and the reset wipes 2."""
    return prog(ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier()),
                ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0)), sems=(WORD,))


def jump_past_acked() -> Program:
    """Three rounds of ``jump_past``, each increment acknowledged before the next."""
    a = Loop("k", 3, (SemInc(0, B, 2), AtomicBarrier(), SemWait(1, GE, 1), SemSet(1, 0)))
    b = Loop("k", 3, (SemWait(0, GE, 1), SemSet(0, 0), SemInc(1, A, 1), AtomicBarrier()))
    return prog(ep(A, Engine.READER, a), ep(B, Engine.READER, b), sems=(WORD, ACK))


def two_past() -> Program:
    """Two increments by 2 against ``ge 3``: both must land (2 < 3), the wait sees 4."""
    return prog(ep(A, Engine.READER, SemInc(0, B, 2), SemInc(0, B, 2), AtomicBarrier()),
                ep(B, Engine.READER, SemWait(0, GE, 3), SemSet(0, 0)), sems=(WORD,))


def signalled() -> Program:
    """Two increments by 1 land before the waiter arrives: the sender's atomic barrier acknowledges both before it
    raises ``go``, which the waiter passes first; its ``ge 1`` wait then sees 2."""
    go = Semaphore(1, "go", (B,))
    a = ep(A, Engine.READER, SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier(), SemInc(1, B, 1), AtomicBarrier())
    b = ep(B, Engine.READER, SemWait(1, GE, 1), SemSet(1, 0), SemWait(0, GE, 1), SemSet(0, 0))
    return prog(a, b, sems=(WORD, go))


def jump_past_mcast() -> Program:
    """``jump_past`` with the increment multicast (one atomic by 2 per destination)."""
    g = Group(0, A, (1, 0, 1, 0))
    return prog(ep(A, Engine.READER, SemIncMcast(0, 0, 1, 2), AtomicBarrier()),
                ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0)), sems=(WORD,), groups=(g,))


@pytest.mark.parametrize("build", [jump_past, jump_past_acked, two_past, signalled, jump_past_mcast],
                         ids=["jump-past", "jump-past-acked", "two-past", "signalled", "jump-past-mcast"])
def test_correct_ge_consumption_proves(build: Callable[[], Program]) -> None:
    p = build()
    ex = explore(p)
    assert (ex.verdict, ex.complete) == ("ok", True)
    report = certify(p)
    assert not_proved(report) == {}
    assert report.exit_code == 0


def test_consumption_is_what_the_wait_saw() -> None:
    """The reset word's consuming wait takes the least landing at or past its threshold."""
    w = analyse(jump_past()).words[(0, B)]
    assert w.kind == "reset"
    assert [c for _, c in w.consumed_by()] == [2]
    w = analyse(two_past()).words[(0, B)]
    assert [c for _, c in w.consumed_by()] == [4]


@pytest.mark.parametrize(("need", "bys", "least"), [
    (1, {2}, 2), (3, {2}, 4), (2, {1, 2}, 2), (4, {3, 5}, 5), (7, {3, 5}, 8), (0, {2}, 0), (-1, {1}, 0),
    (5, set(), 5), (1, {4, 6}, 4), (LANDING_EXACT_LIMIT + 1, {2}, LANDING_EXACT_LIMIT + 2)])
def test_least_landing(need: int, bys: set[int], least: int) -> None:
    assert least_landing(need, frozenset(bys)) == least


def replayed(report: Report, name: str) -> dict[str, object]:
    (r,) = [r for r in report.results if r.name == name]
    assert r.verdict == Verdict.REFUTED, (name, r.reason)
    assert r.counterexample is not None
    replay = r.counterexample["replay"]
    assert isinstance(replay, dict)
    return replay


def test_unacknowledged_rounds_lose_an_update() -> None:
    """Without the acknowledgement the second increment can land between the wait and its reset."""
    a = Loop("k", 2, (SemInc(0, B, 2), AtomicBarrier()))
    b = Loop("k", 2, (SemWait(0, GE, 1), SemSet(0, 0)))
    p = prog(ep(A, Engine.READER, a), ep(B, Engine.READER, b), sems=(WORD,))
    assert "sem-set-race" in explore(p).rules()
    report = certify(p)
    assert report.exit_code == 1
    replay = replayed(report, "sem-set-race:sem0@(1,0)")
    assert replay["violation"]["rule"] == "sem-set-race"  # type: ignore[index]


def test_overshot_ge_wait_deadlocks() -> None:
    """One increment by 2 feeds two ``ge 1`` rounds: the first sees 2 and wipes it, the second waits forever."""
    p = prog(ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier()),
             ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0), SemWait(0, GE, 1), SemSet(0, 0)), sems=(WORD,))
    ex = explore(p)
    assert [str(s) for s in ex.deadlocks[0].stuck] == [
        "(1,0).reader at ops[2] sem_wait(sem0, ge, 1): sem0@(1,0)=0, waits >=1"]
    report = certify(p)
    assert report.exit_code == 1
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    assert dl.verdict == Verdict.REFUTED
    assert [s["position"]["path"] for s in dl.counterexample["stuck"]] == [[2]]  # type: ignore[index,union-attr]


def test_increment_after_the_reset_breaks_the_balance() -> None:
    """The wait sees the increment by 2 and wipes it; the acknowledged sender then adds 1 that nothing resets."""
    a = ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier(), SemWait(1, GE, 1), SemSet(1, 0), SemInc(0, B, 1),
           AtomicBarrier())
    b = ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0), SemInc(1, A, 1), AtomicBarrier())
    p = prog(a, b, sems=(WORD, ACK))
    assert explore(p).rules() == ["balance-sem"]
    report = certify(p)
    assert report.exit_code == 1
    replay = replayed(report, "balance-sem:sem0@(1,0)")
    assert replay["violation"]["rule"] == "balance-sem"  # type: ignore[index]
    assert "ends at 1" in replay["violation"]["message"]  # type: ignore[index]


def test_smaller_increment_can_land_after_a_ge_wait() -> None:
    """Increments by 1 and by 2 against ``ge 2``: the 2 alone returns the wait, the 1 lands before the reset."""
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1), SemInc(0, B, 2), AtomicBarrier()),
             ep(B, Engine.READER, SemWait(0, GE, 2), SemSet(0, 0)), sems=(WORD,))
    assert "sem-set-race" in explore(p).rules()
    report = certify(p)
    assert report.exit_code == 1
    replayed(report, "sem-set-race:sem0@(1,0)")


def test_zero_increment_on_a_reset_word_is_not_proved() -> None:
    """A multicast increment by 0 still lands as a remote write: between the wait and the reset it is a lost update
    the interpreter reports, though no count shows it — the word is outside the decided protocols, and the run from
    launch that shows the lost update refutes it (certify/witness.py)."""
    g = Group(0, A, (1, 0, 1, 0))
    p = prog(ep(A, Engine.READER, SemIncMcast(0, 0, 1, 0), AtomicBarrier()),
             ep(B, Engine.READER, SemWait(0, GE, 0), SemSet(0, 0)), sems=(WORD,), groups=(g,))
    assert explore(p).rules() == ["sem-set-race"]
    report = certify(p)
    assert report.exit_code == 1
    assert "sem-protocol:sem0@(1,0)" not in not_proved(report)
    assert replayed(report, "sem-set-race:sem0@(1,0)")["violation"]["rule"] == "sem-set-race"  # type: ignore[index]


def test_the_certificate_states_what_a_jumped_wait_takes() -> None:
    """The certificate's reset-word place of a ``ge`` wait an increment jumps past says what the wait takes (only
    when that differs from its threshold, so certificates of other programs are unchanged)."""
    jp, sg = jump_past(), signalled()
    (place,) = [pl for pl in derive_certificate(jp, certify(jp))["places"] if pl["kind"] == "sem-reset"]
    assert (place["counter"], place["takes"]) == ("sem0@(1,0)", 2)
    acked = [pl for pl in derive_certificate(sg, certify(sg))["places"] if pl["kind"] == "sem-reset"]
    assert all("takes" not in pl for pl in acked)
