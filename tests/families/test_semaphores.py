"""The semaphore family (verispatial/families/semaphores/): its rules in the reference interpreter, each on a tiny
program with the exact expected outcome, and the same finding from each chain that gives SemInc, SemIncMcast, SemSet
and SemWait their meaning (interpreter, per-engine rules, Promela model)."""

from __future__ import annotations

import re

import attrs
import pytest
from builders import EQ, GE, RA, RB, A, B, buf, ep, prog, sem
from family_checks import only, where

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.families.semaphores import encoding, promela, semantics
from verispatial.ir import (
    AtomicBarrier,
    Buffer,
    Engine,
    FillTiles,
    Group,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    RemoteRead,
    Reserve,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Term,
    Wait,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir import rules as R
from verispatial.petri.explore import explore
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


# ------------------------------------------------------------------- the non-atomic read-modify-write (SemRmw)


def test_sem_rmw_is_a_load_then_a_store() -> None:
    """``Semaphore.up(2)`` of the own word (semaphore_dm_impl.h:79-93): the first step loads and holds the engine at
    the op, the second stores the loaded value + 2 and moves on."""
    p = prog(ep(A, Engine.READER, SemRmw(0, 2), SemWait(0, EQ, 2), SemSet(0, 0)), sems=(sem(0, A),))
    it = Interp(p)
    s = it.initial()
    assert it.describe(s, Transition("step", 0)) == "(0,0).reader at ops[0] sem_rmw(sem0, 2): loads 0"
    s = it.fire(s, Transition("step", 0))
    assert (s.words, s.rmw, s.pcs[0]) == ([0], [(0, 0, False)], ((0,), ()))
    assert it.describe(s, Transition("step", 0)) == "(0,0).reader at ops[0] sem_rmw(sem0, 2): stores 0 + 2"
    s = it.fire(s, Transition("step", 0))
    assert (s.words, s.rmw, s.pcs[0]) == ([2], [None], ((1,), ()))
    assert simulate(p).violations == ()


def test_a_remote_increment_between_load_and_store_is_lost() -> None:
    """(1,0)'s increment lands after (0,0)'s load: the store writes 0 + 1 over 1 (``sem-rmw-race`` at the RMW), and
    the wait for 2 hangs."""
    p = prog(ep(A, Engine.READER, SemRmw(0, 1), SemWait(0, GE, 2), SemSet(0, 0)),
             ep(B, Engine.READER, SemInc(0, A, 1), AtomicBarrier()), sems=(sem(0, A),))
    it = Interp(p)
    s, out = it.initial(), []
    for t in (Transition("step", 0), Transition("step", 1), Transition("land", 1, 0), Transition("step", 0)):
        s, vs = it.step(s, t)
        out += vs
    assert [where(v) for v in out] == [(R.SEM_RMW_RACE, RA, (0,), ())]
    assert out[0].message == ("sem_rmw(sem0, 1) stores 0 + 1 into sem0@(0,0)=1, which a write changed between its "
                              "load and its store (lost update)")
    assert s.words == [1]
    ex = explore(p)
    assert {f.violation.rule for f in ex.violations} == {R.SEM_RMW_RACE}
    assert ex.deadlocks


@pytest.mark.parametrize(("other", "lost"), [
    ((SemSet(0, 5),), True),  # another engine's store between them
    ((SemRmw(0, 1),), True),  # two engines' ups of one word
    ((SemSet(0, 0),), False),  # a store leaving the value as it is loses nothing
    ((SemWait(0, GE, 1), SemSet(0, 0)), False),  # the reset waits for the up's store
])
def test_a_store_of_another_engine_of_the_site(other: tuple[Op, ...], lost: bool) -> None:
    p = prog(ep(A, Engine.READER, SemRmw(0, 1)), ep(A, Engine.WRITER, *other), sems=(sem(0, A),))
    ex = explore(p)
    assert (R.SEM_RMW_RACE in {f.violation.rule for f in ex.violations}) is lost


def test_each_chain_checks_the_lost_update_at_the_rmw() -> None:
    """The interpreter and the Promela model report ``sem-rmw-race`` at the RMW (its op id escapes the assertion);
    the per-engine rules find nothing (its store is synchronous: nothing outstanding); the checker refutes
    ``sem-rmw-race`` of the word with a replayed run."""
    p = prog(ep(A, Engine.READER, SemRmw(0, 1), SemWait(0, GE, 2), SemSet(0, 0)),
             ep(B, Engine.READER, SemInc(0, A, 1), AtomicBarrier()), sems=(sem(0, A),))
    assert re.findall(r"assert\(R_sem_rmw_race \|\| (O_\d+_\d+) \|\|", to_promela(p)) == ["O_0_0"]
    assert [f for v in engine_views(p).values() for f in engine_facts(p, v).findings] == []
    got = _verdicts(p)["sem-rmw-race:sem0@(0,0)"]
    assert got.verdict.value == "refuted"
    assert got.counterexample["replay"]["violation"]["rule"] == R.SEM_RMW_RACE


def test_an_rmw_only_its_own_engine_and_the_owners_reset_write_proves() -> None:
    """argmax's secondary hand-off (reader_argmax_interleaved_multicore.cpp:443, 449, 551) with a final wait: the
    ups count, the owner's reset follows its wait for the last store. Every obligation proved; the explorer finds
    no violation."""
    p = prog(ep(A, Engine.WRITER, Loop("k", 3, (SemRmw(0, 1),))),
             ep(A, Engine.READER, Loop("k", 3, (SemWait(0, GE, 1, (Term("k", 1),)),)), SemWait(0, GE, 3),
                SemSet(0, 0)), sems=(sem(0, A),))
    assert [n for n, r in _verdicts(p).items() if r.verdict.value != "proved"] == []
    ex = explore(p)
    assert ex.complete
    assert (ex.violations, ex.deadlocks) == ((), ())


def _secondary_hand_off(*extra: Op) -> Program:
    """argmax's secondary hand-off as shipped (reader_argmax_interleaved_multicore.cpp:443, 449, 551, ``reduce_all``
    false): the secondary ups the primary's word once per row, the primary waits ``wait_min(k + 1)`` in each row and
    resets the word after the loop, with no final constant wait. ``extra``: the secondary's ops after its loop."""
    return prog(ep(A, Engine.WRITER, Loop("k", 3, (SemRmw(0, 1),)), *extra),
                ep(A, Engine.READER, Loop("k", 3, (SemWait(0, GE, 1, (Term("k", 1),)),)), SemSet(0, 0)),
                sems=(sem(0, A),))


def test_the_shipped_secondary_hand_off_proves() -> None:
    """The reset after the loop carries what the loop's last wait saw (``semaphores._last_pass``: >= 3, every up
    issued), so nothing can land between that wait and the reset: every obligation proved, the explorer agrees."""
    from verispatial.certify.reach import analyse

    p = _secondary_hand_off()
    w = analyse(p).words[(0, A)]
    assert (w.kind, [lf.path for lf in w.consuming], w.consumes) == ("reset", [(1,)], (3,))
    ex = explore(p)
    assert ex.complete
    assert (ex.violations, ex.deadlocks) == ((), ())
    assert [n for n, r in _verdicts(p).items() if r.verdict.value != "proved"] == []


def test_an_up_after_the_last_growing_wait_is_never_proved() -> None:
    """The near-miss: one more up after the secondary's loop may load before the reset and store after it (the reset
    is lost: ``sem-rmw-race``), or store before it (``sem-set-race``), or after it (the word ends at 1:
    ``balance-sem``). The checker refutes the reset (more ups issued than the last wait saw) and the balance."""
    p = _secondary_hand_off(SemRmw(0, 1))
    ex = explore(p)
    assert ex.complete
    assert {f.violation.rule for f in ex.violations} >= {R.SEM_RMW_RACE, R.SEM_SET_RACE}
    v = _verdicts(p)
    assert v["sem-set-race:sem0@(0,0)"].verdict.value == "refuted"
    assert v["balance-sem:sem0@(0,0)"].verdict.value == "refuted"
    assert v["deadlock:(0,0).reader+1"].verdict.value == "failed-to-prove"


@pytest.mark.parametrize("late", [
    (SemInc(0, A, 1), AtomicBarrier()),  # another site's increment, issued at any time
    (Loop("j", 1, (SemRmw(0, 1),)),),  # a fourth up of the secondary
])
def test_a_write_beyond_what_the_last_growing_wait_saw_is_refuted(late: tuple[Op, ...]) -> None:
    """The last wait returns at >= 3 while four increments are issued: one may land after it and the reset wipes it
    (or the up's store lands after the reset). Never proved; the reset's ``sem-set-race`` is refuted."""
    if isinstance(late[0], SemInc):
        p = prog(*_secondary_hand_off().programs, ep(B, Engine.READER, *late), sems=(sem(0, A),))
    else:
        p = _secondary_hand_off(*late)
    assert explore(p).violations
    v = _verdicts(p)
    assert v["sem-set-race:sem0@(0,0)"].verdict.value == "refuted"
    assert not any(r.verdict.value == "proved" for n, r in v.items() if n.startswith(("sem-", "deadlock")))


def test_an_increment_after_the_consuming_reset_leaves_the_word_unbalanced() -> None:
    """The owner signals (1,0) after its reset, and (1,0) then increments the word: no update is lost (the reset
    saw every up), but the word ends at 1. ``balance-sem`` is refuted: the word gets no past state after such a reset
    (``reach._add_history``), which would have let everything acknowledged by the end count as seen by it."""
    p = prog(ep(A, Engine.WRITER, Loop("k", 3, (SemRmw(0, 1),))),
             ep(A, Engine.READER, Loop("k", 3, (SemWait(0, GE, 1, (Term("k", 1),)),)), SemSet(0, 0), SemInc(1, B, 1),
                AtomicBarrier()),
             ep(B, Engine.READER, SemWait(1, GE, 1), SemSet(1, 0), SemInc(0, A, 1), AtomicBarrier()),
             sems=(sem(0, A), sem(1, B)))
    assert R.BALANCE_SEM in {f.violation.rule for f in explore(p).violations}
    v = _verdicts(p)
    assert v["balance-sem:sem0@(0,0)"].verdict.value == "refuted"
    # The remote increment may still be in flight when the ups run, which the counter model does not say.
    assert v["sem-rmw-race:sem0@(0,0)"].verdict.value == "failed-to-prove"


def test_an_rmw_a_remote_write_may_overlap_in_flight_is_not_proved() -> None:
    """(1,0)'s increment is issued only after (0,0)'s up (a handshake orders it): no run loses it, but the counter
    model does not say when an increment in flight lands, so ``sem-rmw-race`` is failed-to-prove (never proved) and
    the deadlock proof leaning on the word's counting with it."""
    p = prog(ep(A, Engine.READER, SemRmw(0, 1), SemInc(1, B, 1), AtomicBarrier(), SemWait(0, GE, 2), SemSet(0, 0)),
             ep(B, Engine.READER, SemWait(1, GE, 1), SemSet(1, 0), SemInc(0, A, 1), AtomicBarrier()),
             sems=(sem(0, A), sem(1, B)))
    v = _verdicts(p)
    assert v["sem-rmw-race:sem0@(0,0)"].verdict.value == "failed-to-prove"
    assert not any(r.verdict.value == "refuted" for r in v.values())
    ex = explore(p)
    assert ex.complete
    assert (ex.violations, ex.deadlocks) == ((), ())


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
    ops = {SemInc, SemIncMcast, SemRmw, SemSet, SemWait}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops
    assert McastSetValid not in ops  # the flag multicast is the multicast family's


# ---------------------------------------------------------------- words outside the protocols: what every run shows


def valid_then_values_program(wait_first: bool = True, late_valid: bool = False, resets: int = 1) -> Program:
    """The sharded layernorm's VALID handshake in small (``reader_mcast_sender_unary_sharded_ln.cpp:135-141``,
    ``reader_mcast_receiver_unary_sharded_ln.cpp:155-157``, ``:180``): (0,0)'s writer fills and pushes its partial
    (b0); its reader waits for it, sets its word 0 to VALID (1) and multicasts it to (1,0), then sends 2 the same
    way, each after (1,0) increments its word 1. (1,0)'s reader resets its copy to INVALID (0), increments, waits for
    VALID, reads the partial remotely (at its own read pointer of its c_0, b1) into b2, increments again and waits
    for at least 2: a one-pass restarting sequence (``semaphores.Epochs``, one epoch its destination resets).
    ``resets``: how many times (1,0) resets its copy first; with two the word follows no decided protocol (one reset
    per epoch is decided), so only ``semaphores.landings`` orders the read after the push. ``wait_first`` False: the
    read comes before the wait for VALID. ``late_valid``: the sender sets 2, multicasts it, sets VALID before any
    flush (that flag may leave carrying VALID), and only then fills and pushes the partial itself; the receiver waits
    for VALID and reads."""
    g = Group(0, A, (1, 0, 1, 0))
    fill: list[Op] = [Reserve(0, 1), FillTiles(0, 1, "x", drain=True), Push(0, 1)]
    read: list[Op] = [Reserve(2, 1), RemoteRead(1, A, 1, 2), ReadBarrier(), Push(2, 1)]
    valid: list[Op] = [SemWait(0, EQ, 1)]
    if late_valid:
        engines = [ep(A, Engine.READER, SemSet(0, 2), McastSetValid(0, 0, 1), SemSet(0, 1), WriteBarrier(), *fill),
                   ep(B, Engine.READER, SemSet(0, 0), *valid, *read)]
    else:
        sender: list[Op] = [Wait(0, 1), SemWait(1, GE, 1), SemSet(0, 1), McastSetValid(0, 0, 1), WriteBarrier(),
                            SemWait(1, GE, 2), SemSet(0, 2), McastSetValid(0, 0, 1), WriteBarrier(), Pop(0, 1)]
        rest = [*valid, *read] if wait_first else [*read, *valid]
        engines = [ep(A, Engine.READER, *sender), ep(A, Engine.WRITER, *fill),
                   ep(B, Engine.READER, *[SemSet(0, 0)] * resets, SemInc(1, A, 1), *rest, SemInc(1, A, 1),
                      AtomicBarrier(), SemWait(0, GE, 2))]
    return prog(*engines, ep(B, Engine.WRITER, Wait(2, 1), Pop(2, 1)),
                buffers=(buf(0, A, cap=1, cb=0), buf(1, B, cap=1, cb=0), buf(2, B, cap=1, cb=1)),
                # set by the host at each launch, as the layernorm's (so neither word need end where it started)
        sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def _verdicts(p: Program) -> dict[str, object]:
    from verispatial.driver.run import certify

    return {x.name: x for x in certify(p).results}


def test_a_one_pass_restarting_sequence_proves_the_read_after_its_valid() -> None:
    """One reset of the receiver's copy before the one pass: the restarting sequence of one epoch (the destination
    resets it), so the word's protocol proves and the remote read after the wait for VALID proves with it, the
    explorer finding nothing (before, the word was outside the protocols: ``sem-protocol`` failed to prove)."""
    from verispatial.certify.reach import analyse
    from verispatial.certify.report import Verdict

    p = valid_then_values_program()
    w = analyse(p).words[(0, B)]
    assert w.kind == "epochs"
    assert explore(p).rules() == []
    got = _verdicts(p)
    assert "sem-protocol:sem0@(1,0)" not in got  # a decided word has no protocol obligation
    for name in ("sem-exact:sem0@(1,0)", "balance-sem:sem0@(1,0)", "remote-read-unpublished:(1,0).reader:[4]",
                 "async-source-reuse:(1,0).reader:[4]", "deadlock:(0,0).reader+3"):
        assert got[name].verdict is Verdict.PROVED, name  # type: ignore[attr-defined]


def test_a_wait_only_a_flag_landing_passes_shows_the_flag_issued() -> None:
    """The receiver resets its word twice, so it follows no decided protocol, but its wait for VALID, right after
    its resets, accepts no value a set stores: it passes only on a flag landing since the reset, and only the first
    flag may carry VALID. The counter model knows it (``landings``), so the remote read after the wait proves, with
    the explorer finding nothing; the word's protocol obligation still fails to prove (never proved)."""
    from verispatial.certify.reach import analyse
    from verispatial.certify.report import Verdict

    p = valid_then_values_program(resets=2)
    w = analyse(p).words[(0, B)]
    assert w.kind == "unsupported"
    assert [([x.path for x in ws], [f.path for f in fs]) for ws, fs in w.landed_by] == [([(3,)], [(3,)])]
    assert explore(p).rules() == []
    got = _verdicts(p)
    assert got["remote-read-unpublished:(1,0).reader:[5]"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
    assert got["async-source-reuse:(1,0).reader:[5]"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
    assert got["sem-protocol:sem0@(1,0)"].verdict is Verdict.FAILED  # type: ignore[attr-defined]


def test_a_read_before_the_valid_wait_is_refuted() -> None:
    """The broken neighbour: the receiver reads before it waits for VALID (``remote-read-unpublished``, refuted and
    replayed)."""
    from verispatial.certify.report import Verdict

    p = valid_then_values_program(wait_first=False)
    assert R.REMOTE_READ_UNPUBLISHED in explore(p).rules()
    x = _verdicts(p)["remote-read-unpublished:(1,0).reader:[3]"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    assert x.counterexample["replay"]["violation"]["rule"] == R.REMOTE_READ_UNPUBLISHED  # type: ignore[attr-defined]


def test_a_flag_counts_for_every_value_its_source_may_hold_until_it_left() -> None:
    """A flag reads its source when it leaves (before the next flush or write barrier): multicast while holding 2,
    then set to VALID with no flush between, it may carry VALID, so the receiver's VALID wait may pass on it before
    the partial is pushed. ``landings`` counts that flag for VALID; the read is refuted and replayed, never proved."""
    from verispatial.certify.reach import analyse
    from verispatial.certify.report import Verdict

    p = valid_then_values_program(late_valid=True)
    w = analyse(p).words[(0, B)]
    assert [[f.path for f in fs] for _ws, fs in w.landed_by] == [[(1,)]]
    assert R.REMOTE_READ_UNPUBLISHED in explore(p).rules()
    x = _verdicts(p)["remote-read-unpublished:(1,0).reader:[3]"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]


def valid_source_reuse_program(ack_after_valid: bool = True) -> Program:
    """The sharded layernorm's sender sets its word to 2 (``reader_mcast_sender_unary_sharded_ln.cpp:272``) after its
    VALID multicast (``:141``) with no flush between, ordered only by the handshake: (0,0) sets VALID, multicasts it
    to (1,0) once (1,0) reset its copy and incremented (0,0)'s word 1, waits for a second increment, sets 2 and
    multicasts it (then a write barrier); (1,0) waits for VALID, increments again and waits for at least 2. The
    increment shows VALID landed, so its flag had left. ``ack_after_valid`` False: (1,0) increments before its
    VALID wait, so the set may come while the VALID flag has not left (it would carry 2: ``async-source-reuse``)."""
    g = Group(0, A, (1, 0, 1, 0))
    ack: list[Op] = [SemInc(1, A, 1)]
    valid: list[Op] = [SemWait(0, EQ, 1)]
    mid = [*valid, *ack] if ack_after_valid else [*ack, *valid]
    return prog(ep(A, Engine.READER, SemSet(0, 1), SemWait(1, GE, 1), McastSetValid(0, 0, 1), SemWait(1, GE, 2),
                   SemSet(0, 2), McastSetValid(0, 0, 1), WriteBarrier()),
                ep(B, Engine.READER, SemSet(0, 0), SemInc(1, A, 1), *mid, AtomicBarrier(), SemWait(0, GE, 2)),
                sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def test_a_flag_source_set_again_after_the_handshake_shows_it_left() -> None:
    """The set of 2 is flagged per engine (no flush since the VALID multicast); the query discharges it with
    ``landings``: the sender passed its wait, so the receiver passed its VALID wait after its reset, which only the
    VALID flag's landing allows, so that flag had left. Proved, the explorer agreeing; the broken neighbour (the
    increment before the VALID wait) is refuted and replayed."""
    from verispatial.certify.report import Verdict

    p = valid_source_reuse_program()
    assert explore(p).rules() == []
    got = _verdicts(p)
    # the per-engine flag at [4] discharged: no obligation of its own left, the family's proved
    assert "async-source-reuse:(0,0).reader:[4]" not in got
    assert got["async-source-reuse"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
    broken = valid_source_reuse_program(ack_after_valid=False)
    assert R.ASYNC_SOURCE_REUSE in explore(broken).rules()
    x = _verdicts(broken)["async-source-reuse:(0,0).reader:[4]"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    assert x.counterexample["violation"]["rule"] == R.ASYNC_SOURCE_REUSE  # type: ignore[attr-defined]
    assert x.counterexample["replayed_by"]  # type: ignore[attr-defined]


def valid_then_loop_program(read_after_loop: bool = True) -> Program:
    """The layernorm's result loop in small (``reader_mcast_sender_unary_sharded_ln.cpp:270-299``,
    ``reader_mcast_receiver_unary_sharded_ln.cpp:255-261``): (0,0) multicasts VALID once (1,0) reset its copy and
    incremented word 1, waits for a second increment, fills and pushes its partial, then for ``block`` < 2 sets
    ``block + 2``, multicasts it and waits for the write. (1,0) waits for VALID, increments, waits
    ``wait_min(block + 2)`` in its loop and then reads the partial. Only the latest occurrence of the growing wait,
    at 3, orders the read after the push: no set stores 3, so a flag that may carry it (the loop's) was issued.
    ``read_after_loop`` False: the read comes right after the VALID wait, before the increment the push waits for."""
    g = Group(0, A, (1, 0, 1, 0))
    read: list[Op] = [Reserve(2, 1), RemoteRead(1, A, 1, 2), ReadBarrier(), Push(2, 1)]
    loop = Loop("block", 2, (SemWait(0, GE, 2, (Term("block", 1),)),))
    tail: list[Op] = [SemInc(1, A, 1), AtomicBarrier(), loop, *read] if read_after_loop else [
        *read, SemInc(1, A, 1), AtomicBarrier(), loop]
    sender = ep(A, Engine.READER, SemSet(0, 1), SemWait(1, GE, 1), McastSetValid(0, 0, 1), WriteBarrier(),
                SemWait(1, GE, 2), Reserve(0, 1), FillTiles(0, 1, "x", drain=True), Push(0, 1),
                Loop("block", 2, (SemSet(0, 2, (Term("block", 1),)), McastSetValid(0, 0, 1), WriteBarrier())))
    return prog(sender, ep(A, Engine.WRITER, Wait(0, 1), Pop(0, 1)),
                ep(B, Engine.READER, SemSet(0, 0), SemInc(1, A, 1), SemWait(0, EQ, 1), *tail),
                ep(B, Engine.WRITER, Wait(2, 1), Pop(2, 1)),
                buffers=(buf(0, A, cap=1, cb=0), buf(1, B, cap=1, cb=0), buf(2, B, cap=1, cb=1)),
                sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def test_the_latest_pass_of_a_growing_wait_shows_a_flag_that_may_carry_it() -> None:
    """``wait_min(block + 2)`` at its latest occurrence (3) accepts no stored value (the reset's 0), so a flag that
    may carry 3 was issued: the loop's, after the push. The read proves, the explorer agreeing; read before the
    loop it is refuted and replayed."""
    from verispatial.certify.report import Verdict

    p = valid_then_loop_program()
    assert explore(p).rules() == []
    assert _verdicts(p)["remote-read-unpublished:(1,0).reader:[7]"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
    broken = valid_then_loop_program(read_after_loop=False)
    assert R.REMOTE_READ_UNPUBLISHED in explore(broken).rules()
    x = _verdicts(broken)["remote-read-unpublished:(1,0).reader:[4]"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]


# ---------------------------------------------------------------- a restarting sequence (semaphores.Epochs)


def restart_program(data: bool = False, broken: str = "") -> Program:
    """The sharded layernorm's VALID word over its two passes, in small (``reader_mcast_sender_unary_sharded_ln.cpp``
    :138-141, 272-299; ``reader_mcast_receiver_unary_sharded_ln.cpp`` :155-157, 255-260): in each pass (0,0) waits for
    (1,0)'s increment of its word 1 and resets it, sets its word 0 to VALID (1), multicasts it to (1,0) and waits for
    the write, waits for a second increment, sets 2, multicasts it and waits for the write; so word 0 at (0,0) holds
    1, 2, 1, 2 (a sequence that restarts). (1,0) resets its copy to INVALID (0), increments, waits for VALID,
    increments again and waits ``wait_min(2)``. ``data``: (0,0) also fills and pushes a page each pass and
    multicasts it (pages already pushed) right before the 2 flag; (1,0) reserves that page before its second
    increment and pushes it after its ``wait_min(2)``, its writer popping it. ``broken``: ``inc_first`` — in the second
    pass (1,0) increments before it resets, so the VALID flag may land before the reset wipes it; ``reset_early`` —
    (1,0)'s second reset comes before its first ``wait_min(2)``; ``push_early`` — (1,0) pushes before its
    ``wait_min(2)``."""
    g = Group(0, A, (1, 0, 1, 0))
    snd: list[Op] = []
    rcv: list[Op] = []
    for k in range(2):
        snd += [SemWait(1, EQ, 1), SemSet(1, 0), SemSet(0, 1), McastSetValid(0, 0, 1), WriteBarrier(),
                SemWait(1, EQ, 1), SemSet(1, 0)]
        if data:
            snd += [Reserve(0, 1), FillTiles(0, 1, "x", drain=True), Push(0, 1)]
        snd += [SemSet(0, 2), *([McastSend(0, 1, 0, 1, behind=1)] if data else []), McastSetValid(0, 0, 1),
                WriteBarrier()]
        reset: list[Op] = [SemInc(1, A, 1), SemSet(0, 0)] if broken == "inc_first" and k == 1 else [
            SemSet(0, 0), SemInc(1, A, 1)]
        got: list[Op] = [Reserve(1, 1), SemInc(1, A, 1), SemWait(0, GE, 2), Push(1, 1)] if data else [
            SemInc(1, A, 1), SemWait(0, GE, 2)]
        if broken == "push_early":
            got = [Reserve(1, 1), SemInc(1, A, 1), Push(1, 1), SemWait(0, GE, 2)]
        if broken == "reset_early":
            # pass 0 ends with the second pass's reset before its wait_min(2); pass 1 starts with its increment
            got = [*got[:-1], SemSet(0, 0), got[-1]] if k == 0 else got
            reset = reset if k == 0 else reset[1:]
        rcv += [*reset, SemWait(0, EQ, 1), *got]
    rcv.append(AtomicBarrier())
    engines = [ep(A, Engine.READER, *snd), ep(B, Engine.READER, *rcv)]
    bufs: tuple[Buffer, ...] = ()
    if data:
        engines += [ep(A, Engine.WRITER, Loop("k", 2, (Wait(0, 1), Pop(0, 1)))),
                    ep(B, Engine.WRITER, Loop("k", 2, (Wait(1, 1), Pop(1, 1))))]
        bufs = (buf(0, A, cap=1, cb=0), buf(1, B, cap=1, cb=0))
    return prog(*engines, buffers=bufs,
                sems=tuple(attrs.evolve(x, host_init=True) for x in (sem(0, A, B), sem(1, A))), groups=(g,))


def test_a_restarting_sequence_proves() -> None:
    """Both words follow the restarting sequence (``Epochs``): the sender's own word, set 1, 2, 1, 2 at top level,
    and the receiver's copy it resets once per pass, whose ``wait_min(2)`` before the second reset accepts only the
    first pass's last flag. Every obligation proves (the deadlock with the word's counter model), the explorer
    agreeing; before, both words were outside the protocols and the deadlock failed to prove."""
    from verispatial.certify.reach import analyse
    from verispatial.certify.report import Verdict

    p = restart_program()
    words = analyse(p).words
    assert (words[(0, A)].kind, words[(0, B)].kind) == ("epochs", "epochs")
    e = words[(0, A)].epochs
    assert e is not None
    assert (e.epoch_of, e.carried, e.flag_epoch) == ((0, 0, 1, 1), (1, 2, 1, 2), (0, 0, 1, 1))
    assert explore(p).rules() == []
    got = _verdicts(p)
    assert {n: r.verdict for n, r in got.items() if r.verdict is not Verdict.PROVED} == {}  # type: ignore[attr-defined]
    assert got["sem-exact:sem0@(1,0)"].verdict is Verdict.PROVED  # type: ignore[attr-defined]
    assert "deadlock:(0,0).reader+1" in got


def test_a_flag_issued_before_its_epochs_reset_is_refuted() -> None:
    """The broken neighbour: in the second pass the receiver increments before it resets, so the sender's second
    VALID may land before that reset wipes it. ``sem-flag-early`` of the receiver's word is refuted and replayed as
    the interpreter's ``sem-set-race`` at the reset."""
    from verispatial.certify.report import Verdict

    p = restart_program(broken="inc_first")
    assert R.SEM_SET_RACE in explore(p).rules()
    x = _verdicts(p)["sem-flag-early:sem0@(1,0)"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    assert x.counterexample["replay"]["violation"]["rule"] == R.SEM_SET_RACE  # type: ignore[attr-defined]


def test_a_reset_before_the_epochs_last_flag_stays_outside_the_protocol() -> None:
    """The receiver resets its copy for the second pass before it waited for the first pass's last flag (2), which
    may then land after the reset. The word is outside the protocol (never proved); the explorer's run from launch
    in which that flag lands as the receiver resets the word refutes it as ``sem-set-race`` at the reset
    (certify/witness.py), and the interpreter's search finds the deadlock, replayed."""
    from verispatial.certify.reach import analyse
    from verispatial.certify.report import Verdict

    p = restart_program(broken="reset_early")
    w = analyse(p).words[(0, B)]
    assert w.kind == "unsupported"
    assert "does not accept only epoch 0's last flag" in w.why
    assert explore(p).rules() != []
    got = _verdicts(p)
    assert "sem-protocol:sem0@(1,0)" not in got
    race = got["sem-set-race:sem0@(1,0)"]
    assert race.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    v = race.counterexample["replay"]["violation"]  # type: ignore[attr-defined]
    assert (v["rule"], v["position"]["engine"], v["position"]["path"]) == ("sem-set-race", "(1,0).reader", [4])
    assert not any(r.verdict is Verdict.PROVED for n, r in got.items()  # type: ignore[attr-defined]
                   if n.startswith("deadlock"))


def test_the_flag_a_wait_saw_shows_its_epochs_data_landed() -> None:
    """With data: the receiver's ``wait_min(2)`` in pass ``k`` passed on pass ``k``'s flag 2, which lands after the
    multicast issued before it, so each push publishes a landed page (``mcast-publish`` by the restarting sequence),
    and each multicast lands on a free page (``mcast-slot``). Proved, the explorer agreeing; pushing before the wait
    is refuted and replayed (``mcast-publish-early``)."""
    from verispatial.certify.report import Verdict

    p = restart_program(data=True)
    assert explore(p).rules() == []
    got = _verdicts(p)
    for name in ("mcast-publish:(1,0).reader:[6]", "mcast-publish:(1,0).reader:[13]",
                 "mcast-slot:(0,0).reader:[11]", "mcast-slot:(0,0).reader:[25]", "sem-exact:sem0@(1,0)"):
        assert got[name].verdict is Verdict.PROVED, name  # type: ignore[attr-defined]
    broken = restart_program(data=True, broken="push_early")
    assert R.MCAST_PUBLISH_EARLY in explore(broken).rules()
    x = _verdicts(broken)["mcast-publish:(1,0).reader:[5]"]
    assert x.verdict is Verdict.REFUTED  # type: ignore[attr-defined]
    assert x.counterexample["replay"]["violation"]["rule"] == R.MCAST_PUBLISH_EARLY  # type: ignore[attr-defined]


def test_every_adjacent_swap_of_the_restarting_receiver_agrees_with_the_explorer() -> None:
    """Each program one adjacent swap away from the restarting receiver (``restart_program``): the checker proves it
    only where the exhaustive explorer finds nothing, and refutes only where the explorer finds a deadlock or a
    violation (a fallback fails to prove, never proves)."""
    from verispatial.certify.report import Verdict

    p = restart_program()
    k = next(i for i, x in enumerate(p.programs) if x.key == RB)
    ops = p.programs[k].ops
    seen = set()
    for j in range(len(ops) - 1):
        swapped = (*ops[:j], ops[j + 1], ops[j], *ops[j + 2:])
        q = attrs.evolve(p, programs=tuple(attrs.evolve(x, ops=swapped) if i == k else x
                                           for i, x in enumerate(p.programs)))
        ex = explore(q)
        assert ex.complete or ex.verdict != "ok"
        verdicts = [r.verdict for r in _verdicts(q).values()]
        if all(v is Verdict.PROVED for v in verdicts):
            assert ex.verdict == "ok", j
            seen.add("proved")
        if Verdict.REFUTED in verdicts:
            assert ex.verdict != "ok", j
            seen.add("refuted")
    assert seen == {"proved", "refuted"}
