"""The semaphore family (verispatial/families/semaphores/): its rules in the reference interpreter, each on a tiny
program with the exact expected outcome, and the same finding from each chain that gives SemInc, SemIncMcast, SemSet
and SemWait their meaning (interpreter, per-engine rules, Promela model)."""

from __future__ import annotations

import re

from builders import EQ, GE, RA, RB, A, B, ep, prog, sem
from family_checks import only, where

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.families.semaphores import encoding, promela, semantics
from verispatial.ir import AtomicBarrier, Engine, McastSetValid, ReadBarrier, SemInc, SemIncMcast, SemSet, SemWait, WaitCond
from verispatial.ir import rules as R
from verispatial.petri.interp import Interp, Transition, simulate
from verispatial.petri.promela import to_promela


def test_sem_inc_is_asynchronous_and_atomic_barrier_waits_for_it() -> None:
    p = prog(ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier()), ep(B, Engine.READER, SemWait(0, GE, 2)),
             sems=(sem(0, B),))
    it = Interp(p)
    s = it.initial()
    assert it.enabled(s) == [Transition("step", 0)]
    s = it.fire(s, Transition("step", 0))
    assert s.words == [0]  # issued, not landed
    assert it.block_detail(s, RA) == "waits for 1 outstanding sem_inc(s)"
    assert it.block_detail(s, RB) == "sem0@(1,0)=0, waits >=2"
    assert it.enabled(s) == [Transition("land", 0, 0)]
    assert it.describe(s, Transition("land", 0, 0)) == (
        "(0,0).reader's sem_inc(sem0, (1,0), 2) (issued at ops[0]) lands: sem0@(1,0) 0 -> 2")
    s2, vs = it.step(s, Transition("land", 0, 0))
    assert (s2.words, vs, s.words) == ([2], [], [0])  # fire never changes its input state
    assert it.enabled(s2) == [Transition("step", 0), Transition("step", 1)]


def test_sem_wait_eq_and_ge() -> None:
    def run(cond: WaitCond, value: int) -> str:
        p = prog(ep(A, Engine.READER, SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier()),
                 ep(B, Engine.READER, SemWait(0, cond, value), SemSet(0, 0)), sems=(sem(0, B),))
        return simulate(p).status

    assert run(GE, 2) == "terminated"
    assert run(GE, 3) == "deadlock"
    assert run(EQ, 2) == "terminated"
    # Round robin: both increments land before the waiter looks, so ==1 is overshot for good.
    r = simulate(prog(ep(A, Engine.READER, SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier()),
                      ep(B, Engine.READER, ReadBarrier(), SemWait(0, EQ, 1), SemSet(0, 0)), sems=(sem(0, B),)))
    assert r.status == "deadlock"
    assert r.rules() == ["sem-overshoot"]
    assert r.stuck[0].reason == "sem0@(1,0)=2, waits ==1"
    assert r.sems == {(0, B): 2}


def test_sem_set_is_a_local_store_and_a_reset_word_is_balanced() -> None:
    r = simulate(prog(ep(A, Engine.READER, SemSet(0, 3), SemWait(0, EQ, 3)), sems=(sem(0),)))
    assert (r.status, r.violations, r.sems) == ("terminated", (), {(0, A): 3})  # re-armed: first op is a set


def test_sem_overshoot_when_an_enabled_eq_wait_is_passed() -> None:
    p = prog(ep(B, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0)),
             ep(A, Engine.READER, SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier()), sems=(sem(0, B),))
    it = Interp(p)
    s = it.initial()
    for t in (Transition("step", 1), Transition("land", 1, 0), Transition("step", 1)):
        s, vs = it.step(s, t)
        assert vs == []
    s, vs = it.step(s, Transition("land", 1, 0))
    assert [where(v) for v in vs] == [("sem-overshoot", RB, (0,), ())]
    assert vs[0].message == ("sem0@(1,0) goes 1 -> 2 while this wait for ==1 is enabled "
                             "(sem_inc(sem0, (1,0), 1) issued by (0,0).reader at ops[1] lands)")


def test_sem_set_race() -> None:
    # The increment lands after the waiter's last look at the word; its reset then loses it.
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1), AtomicBarrier()),
             ep(B, Engine.READER, ReadBarrier(), SemSet(0, 0)), sems=(sem(0, B),))
    r = simulate(p)
    v = only(r)
    assert where(v) == ("sem-set-race", RB, (1,), ())
    assert v.message == ("sem_set(sem0, 0) overwrites sem0@(1,0)=1, which received a remote write since this engine "
                         "last observed it (lost update)")


def test_sem_set_after_observing_wait_is_not_a_race() -> None:
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1), AtomicBarrier()),
             ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0)), sems=(sem(0, B),))
    assert simulate(p).violations == ()


def test_balance_sem() -> None:
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1), AtomicBarrier()), ep(B, Engine.READER, SemWait(0, GE, 1)),
             sems=(sem(0, B),))
    v = only(simulate(p))
    assert where(v) == ("balance-sem", RB, None, ())
    assert v.message == "sem0 (s0)@(1,0) ends at 1, expected its initial 0 (the word is not re-armed by a SemSet)"


# ---------------------------------------------------------------------------------------------- every chain


def test_each_chain_checks_the_lost_update_at_the_reset() -> None:
    """``sem-set-race`` at the reset of a word an increment lands on after the owner last looked: the interpreter
    reports it at the SemSet, ops[1] of the site-B reader; the Promela model asserts it there (its escape is the
    op's id) and the per-engine rules, which decide no semaphore rule, only note the increment outstanding until the
    atomic barrier (no finding)."""
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1), AtomicBarrier()),
             ep(B, Engine.READER, ReadBarrier(), SemSet(0, 0)), sems=(sem(0, B),))
    assert where(only(simulate(p))) == (R.SEM_SET_RACE, RB, (1,), ())
    assert re.findall(r"assert\(R_sem_set_race \|\| (O_\d+_\d+) \|\|", to_promela(p)) == ["O_1_1"]
    assert [f for v in engine_views(p).values() for f in engine_facts(p, v).findings] == []


def test_an_increment_left_outstanding_is_found_by_the_per_engine_rules() -> None:
    """A SemInc with no AtomicBarrier after it: ``async-pending-at-end`` from the per-engine rules (the family's
    handler notes the increment) and from the interpreter."""
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1)), ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0)),
             sems=(sem(0, B),))
    found = [(f.engine, f.rule, f.path) for v in engine_views(p).values() for f in engine_facts(p, v).findings]
    assert found == [(RA, R.ASYNC_PENDING_AT_END, None)]
    assert [where(v) for v in simulate(p).violations] == [(R.ASYNC_PENDING_AT_END, RA, None, ())]


def test_the_family_tables_cover_the_family_op_classes() -> None:
    ops = {SemInc, SemIncMcast, SemSet, SemWait}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops
    assert McastSetValid not in ops  # the flag multicast is the multicast family's
