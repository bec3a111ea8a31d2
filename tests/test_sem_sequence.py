"""The ``sequence`` protocol (issue 16 item 6; docs/checker.md, "Semaphore protocols"): a word only its owner sets,
to values that rise with the loop, copied by flag multicasts (a loopback group included) to words other engines wait
on with thresholds that follow the sequence, and reset after the loop — argmax's reduce_all start handshake (ttnn
0.81.1 ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp:378-417, 520-563``) — and a flag
source set to a different constant before each send (item 2).

Each program is small enough for the explicit-state explorer: the checker's verdict is compared with it obligation
by obligation (``test_differential.disagreements``), and the verdict itself is pinned: correct forms prove with
nothing left, broken ones are refuted in the family that names what breaks, with a replayed counterexample.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_differential import disagreements

from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AtomicBarrier,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Guard,
    If,
    Loop,
    McastSetValid,
    Op,
    Program,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Target,
    Term,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.serialize import dumps
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.promela import run_spin, spin_available, to_promela
from verispatial.strategies.protocols import _seq

A, B = Site(0, 0), Site(1, 0)
START, DONE = 0, 1


def argmax(cond: WaitCond = WaitCond.GE, k: int = 3, *, barrier: bool = True, done: bool = True,
           reset: bool = True, thr: int = 1, coef: int = 1, wait_coef: int | None = None, flag_first: bool = False,
           flush: bool = False,
           copy_reset: bool = True, target: Target = WORMHOLE, host_init: bool = True) -> Program:
    """argmax's start handshake on two cores (the reduce core (0,0) and a worker (1,0)): in iteration ``k`` the
    reduce core sets its start word to ``1 + coef*k`` (line 394), from the second iteration multicasts it to both
    cores (loopback, line 398) and waits for the write (406), and both wait for ``thr + coef*k`` (417); after the loop
    every core increments ``done`` at the reduce core (520), which waits for both (526), resets ``done`` (also reset
    in the loop from the second iteration, line 392, before any increment) and its start
    word and copies the reset to both (555-563). The keywords break one piece at a time."""
    mc: tuple[Op, ...] = (McastSetValid(START, 0, 2), *((Flush(),) if flush else ()),
                          *((WriteBarrier(),) if barrier else ()))
    setk: Op = SemSet(START, 1, (Term("k", coef),))
    kk = (Term("k", coef if wait_coef is None else wait_coef),)
    body: list[Op] = [setk, If("k", Guard.NOT_FIRST, mc)]
    if flag_first:
        body.reverse()
    body = [If("k", Guard.NOT_FIRST, (SemSet(DONE, 0),)), *body,  # line 392: before any increment is issued
            If("k", Guard.NOT_FIRST, (SemWait(START, cond, thr, kk),))]
    red: list[Op] = [Loop("k", k, tuple(body)), SemInc(DONE, A, 1), AtomicBarrier()]
    if done:
        red += [SemWait(DONE, WaitCond.EQ, 2), SemSet(DONE, 0)]
    if reset:
        red += [SemSet(START, 0), *((McastSetValid(START, 0, 2), WriteBarrier()) if copy_reset else ())]
    wrk = (Loop("k", k, (If("k", Guard.NOT_FIRST, (SemWait(START, cond, thr, kk),)),)), SemInc(DONE, A, 1),
           AtomicBarrier())
    return Program("argmax", target, semaphores=(Semaphore(START, "start", (A, B), 0, host_init=host_init),
                                                 Semaphore(DONE, "done", (A, B), 0, host_init=host_init)),
                   groups=(Group(0, A, (0, 0, 1, 0), loopback=True),),
                   programs=(EngineProgram(A, Engine.READER, tuple(red)), EngineProgram(B, Engine.READER, wrk)))


def steps(values: tuple[int, ...] = (1, 2), *, between: tuple[Op, ...] = (WriteBarrier(),),
          waits: tuple[int, ...] | None = None) -> Program:
    """Item 2: the sender sets its flag source to a different constant before each send (no loop) and the receiver
    waits for each value in turn; then a done handshake, and the source reset and copied once more."""
    send: list[Op] = []
    for v in values:
        send += [SemSet(START, v), McastSetValid(START, 0, 1), *between]
    send += [SemWait(DONE, WaitCond.EQ, 1), SemSet(DONE, 0), SemSet(START, 0), McastSetValid(START, 0, 1),
             WriteBarrier()]
    recv = (*(SemWait(START, WaitCond.GE, v) for v in (waits or values)), SemInc(DONE, A, 1), AtomicBarrier())
    return Program("steps", WORMHOLE, semaphores=(Semaphore(START, "flag", (A, B), 0),
                                                  Semaphore(DONE, "done", (A,), 0)),
                   groups=(Group(0, A, (1, 0, 1, 0)),),
                   programs=(EngineProgram(A, Engine.READER, tuple(send)), EngineProgram(B, Engine.READER, recv)))


def _check(p: Program) -> tuple[Report, str]:
    """Certify ``p`` and explore it: the report and the oracle's verdict, after asserting they agree."""
    assert validate(p) == []
    oracle = explore(p, max_states=200_000)
    assert oracle.complete
    r = certify(p)
    assert disagreements(oracle, r, p) == []
    return r, oracle.verdict


def _not_proved(r: Report) -> dict[str, str]:
    return {x.name: x.verdict.value for x in r.results if x.verdict is not Verdict.PROVED}


# ------------------------------------------------------------------------------------------------ classification


def test_argmax_words_are_a_sequence_and_its_destinations() -> None:
    a = analyse(argmax())
    own, dest, done = a.words[(START, A)], a.words[(START, B)], a.words[(DONE, A)]
    assert own.kind == dest.kind == "sequence"
    assert own.seq is not None
    assert own.seq is dest.seq
    assert own.seq.is_source(own)
    assert not own.seq.is_source(dest)
    assert [lf.path for lf in own.seq.rising] == [(0, 1)]
    assert [lf.path for lf in own.seq.resets] == [(5,)]
    # The loop's copy carries the set of its own iteration; the copy after the reset carries the initial value.
    assert [(c.kind, c.post) for c in own.seq.carriers] == [("same", False), ("init", True)]
    # done_sem.set(0) in the loop (line 392) has no wait before it: a reset that must find nothing due.
    assert done.kind == "reset"
    assert [lf.path for lf in done.fresh] == [(0, 0, 0)]
    assert [lf.path for lf in done.consuming] == [(3,)]


@pytest.mark.parametrize(("kw", "why"), [
    # the flag copies the word before the loop's set: the round-robin run from launch shows the set losing the
    # worker's landed write (certify/witness.py), so the word is refuted rather than left outside the protocols
    ({"flag_first": True}, None),
    ({"coef": 0}, "a later iteration of loop k stores a value no larger than an earlier one"),
])
def test_outside_the_protocol_is_named_and_never_proved(kw: dict[str, object], why: str | None) -> None:
    p = argmax(**kw)  # type: ignore[arg-type]
    r, _ = _check(p)
    assert r.exit_code != 0
    reasons = {x.name: x.reason for x in r.results if x.verdict is Verdict.FAILED}
    if why is not None:
        assert why in reasons.get("sem-protocol:sem0@(0,0)", ""), reasons
        return
    (race,) = [x for x in r.results if x.name == "sem-set-race:sem0@(0,0)"]
    assert race.verdict is Verdict.REFUTED
    assert race.counterexample is not None
    assert race.counterexample["replay"]["violation"]["rule"] == "sem-set-race"


# ------------------------------------------------------------------------------------------- argmax, both forms


@pytest.mark.parametrize("kw", [{}, {"k": 1}, {"k": 5}, {"coef": 2}, {"target": BLACKHOLE},
                                {"cond": WaitCond.EQ, "k": 2}])
def test_correct_forms_prove_with_nothing_left(kw: dict[str, object]) -> None:
    r, verdict = _check(argmax(**kw))  # type: ignore[arg-type]
    assert verdict == "ok"
    assert _not_proved(r) == {}


def test_the_exact_wait_is_overshot_by_the_next_copy() -> None:
    """tt-metal #50314: the copy of 3 lands while the worker waits for ``== 2`` (a replayed ``sem-overshoot``), and
    the run hangs there (a replayed deadlock)."""
    r, verdict = _check(argmax(WaitCond.EQ))
    assert verdict == "deadlock"
    refuted = {x.name: x for x in r.results if x.verdict is Verdict.REFUTED}
    assert set(refuted) == {"sem-overshoot:sem0@(1,0)", "deadlock:(0,0).reader+1"}
    cex = refuted["sem-overshoot:sem0@(1,0)"].counterexample
    assert cex is not None
    assert cex["replay"]["violation"]["rule"] == "sem-overshoot"


def test_a_copy_not_waited_for_lands_after_the_next_set() -> None:
    """No write barrier after the loopback copy: the reduce core sets ``k + 2`` while its copy of ``k + 1`` is still
    due at its own word (``sem-set-race`` at the set, replayed), and the copy may leave after the set
    (``async-source-reuse``)."""
    r, verdict = _check(argmax(barrier=False))
    assert verdict == "deadlock"
    refuted = {x.name for x in r.results if x.verdict is Verdict.REFUTED}
    assert "sem-set-race:sem0@(0,0)" in refuted
    assert any(n.startswith("async-source-reuse:") for n in refuted)


def test_a_flush_is_not_a_landing() -> None:
    """A flush says the copy left, not that it landed: the reduce core's next set still races it."""
    r, _ = _check(argmax(barrier=False, flush=True, target=BLACKHOLE))
    assert "sem-set-race:sem0@(0,0)" in {x.name for x in r.results if x.verdict is Verdict.REFUTED}


@pytest.mark.parametrize(("kw", "finding"), [
    ({"reset": False, "host_init": False}, "balance-sem:sem0@(1,0)"),
    ({"copy_reset": False, "host_init": False}, "balance-sem:sem0@(1,0)"),
    ({"done": False}, "deadlock:(0,0).reader+1"),
    ({"thr": 2}, "deadlock:(0,0).reader+1"),
    ({"coef": 2, "wait_coef": 1}, "deadlock:(0,0).reader+1"),
])
def test_broken_forms_are_refuted(kw: dict[str, object], finding: str) -> None:
    """No reset (or the reset not copied) and no host write at launch: the worker's word ends at the last value; the reset copied before the
    worker's last wait (no ``done`` handshake): the worker hangs; a threshold one ahead of the sequence: a hang; waits
    that lag the sequence (``k + 1`` on ``2k + 1``) let the worker finish its loop one iteration early, and its
    ``done`` increment may land before the reduce core's last in-loop reset (line 392), which wipes it: a hang."""
    r, verdict = _check(argmax(**kw))  # type: ignore[arg-type]
    assert verdict != "ok"
    assert finding in {x.name for x in r.results if x.verdict is Verdict.REFUTED}


@pytest.mark.parametrize("kw", [{"reset": False}, {"copy_reset": False}])
def test_a_word_the_host_writes_at_launch_needs_no_reset(kw: dict[str, object]) -> None:
    """The same forms on tt-metal semaphores (``host_init``): the host writes every word's initial value at each
    launch (the kernel config buffer, firmware_common.h:149-152), so the value the last set leaves reaches nothing the
    next launch does: balance is proved by that write, and nothing else the forms do is a finding."""
    r, verdict = _check(argmax(**kw))  # type: ignore[arg-type]
    assert verdict == "ok"
    bal = {x.name: x for x in r.results}["balance-sem:sem0@(1,0)"]
    assert (bal.verdict, bal.reason) == (Verdict.PROVED, "sem0@(1,0) is re-initialized by the host at launch (to 0)")
    assert [x.name for x in r.results if x.verdict is Verdict.REFUTED] == []


def argmax_two_rectangles(k: int = 2) -> Program:
    """argmax's start handshake with a second multicast rectangle (``num_cores1 > 0``,
    reader_argmax_interleaved_multicore.cpp:398-406): the reduce core (0,0) copies its start word to the loopback
    rectangle (0,0)-(1,0), then to the rectangle of (2,0), then waits for both writes. The loopback copy lands on
    the reduce core's own word, with the value the word holds, while the second copy reading that word may not have
    left: the bytes do not change, so the second copy reads what the first did."""
    c = Site(2, 0)
    body: tuple[Op, ...] = (
        If("k", Guard.NOT_FIRST, (SemSet(DONE, 0),)),
        SemSet(START, 1, (Term("k", 1),)),
        If("k", Guard.NOT_FIRST, (McastSetValid(START, 0, 2), McastSetValid(START, 1, 1), WriteBarrier())),
        If("k", Guard.NOT_FIRST, (SemWait(START, WaitCond.GE, 1, (Term("k", 1),)),)))
    red: tuple[Op, ...] = (Loop("k", k, body), SemInc(DONE, A, 1), AtomicBarrier(), SemWait(DONE, WaitCond.EQ, 3),
                           SemSet(DONE, 0), SemSet(START, 0), McastSetValid(START, 0, 2), McastSetValid(START, 1, 1),
                           WriteBarrier())
    wrk = (Loop("k", k, (If("k", Guard.NOT_FIRST, (SemWait(START, WaitCond.GE, 1, (Term("k", 1),)),)),)),
           SemInc(DONE, A, 1), AtomicBarrier())
    return Program("argmax2", WORMHOLE, semaphores=(Semaphore(START, "start", (A, B, c), 0, host_init=True),
                                                    Semaphore(DONE, "done", (A, B, c), 0, host_init=True)),
                   groups=(Group(0, A, (0, 0, 1, 0), loopback=True), Group(1, A, (2, 0, 2, 0))),
                   programs=(EngineProgram(A, Engine.READER, red), EngineProgram(B, Engine.READER, wrk),
                             EngineProgram(c, Engine.READER, wrk)))


def test_a_loopback_copy_of_the_value_the_word_holds_rewrites_nothing() -> None:
    """The second rectangle's copy still reads the start word when the loopback copy lands on it with the same
    value: no byte changes, so it is no ``async-source-reuse`` (a false alarm before: examples/vendor/README.md,
    docs/checker.md known limits). The explorer finds every interleaving correct; the checker does not refute it."""
    p = argmax_two_rectangles()
    r, verdict = _check(p)
    assert verdict == "ok"
    assert [x.name for x in r.results if x.verdict is Verdict.REFUTED] == []
    if spin_available():  # the Promela model's assertion compares values alike
        assert run_spin(to_promela(p), timeout=120).verdict == "ok"


def test_a_set_of_the_value_the_word_holds_rewrites_nothing_but_a_new_value_does() -> None:
    """The same for a local store: setting a flag's source word to the value it holds while the flag has not left
    changes no byte; setting it to another value is the race."""
    same = steps((1, 1), between=(SemSet(START, 1), WriteBarrier()), waits=(1, 1))
    assert explore(same, max_states=200_000).verdict == "ok"
    other = steps((1, 2), between=(SemSet(START, 3), WriteBarrier()), waits=(1, 2))
    assert "async-source-reuse" in explore(other, max_states=200_000).rules()
    if spin_available():
        assert run_spin(to_promela(same), timeout=120).verdict == "ok"
        assert "async-source-reuse" in run_spin(to_promela(other), timeout=120).rules


# ---------------------------------------------------------------------------- item 2: a source set before each send


def test_a_flag_source_set_to_a_new_value_before_each_send_proves() -> None:
    r, verdict = _check(steps())
    assert verdict == "ok"
    assert _not_proved(r) == {}
    w = analyse(steps()).words[(START, A)]
    assert w.kind == "sequence"
    assert w.seq is not None
    assert [lf.path for lf in w.seq.rising] == [(0,), (3,)]


def test_a_source_changed_before_its_flag_left_is_refuted() -> None:
    """No flush or barrier between the copy of 1 and the set of 2: the flag may leave holding 2
    (``async-source-reuse`` at the set, as the per-engine rule sees it)."""
    r, verdict = _check(steps(between=()))
    assert verdict == "violation"
    assert "async-source-reuse:(0,0).reader:[2]" in {x.name for x in r.results if x.verdict is Verdict.REFUTED}


def test_a_value_that_falls_is_outside_the_protocol() -> None:
    r, _ = _check(steps((2, 1), waits=(1,)))
    reasons = {x.name: x.reason for x in r.results if x.verdict is Verdict.FAILED}
    assert "not above 2" in reasons["sem-protocol:sem0@(0,0)"]


def test_a_wait_ahead_of_the_sequence_hangs() -> None:
    r, verdict = _check(steps(waits=(1, 3)))
    assert verdict == "deadlock"
    assert "deadlock:(0,0).reader+1" in {x.name for x in r.results if x.verdict is Verdict.REFUTED}


# ------------------------------------------------------------------------------- the strategies draw the protocol


BASE = Program("base", WORMHOLE, programs=(EngineProgram(A, Engine.READER, ()), EngineProgram(B, Engine.READER, ()),
                                           EngineProgram(Site(1, 1), Engine.WRITER, ())))


#: Draws of the ``seq`` rewrite on idle engines: 25 under ``ci`` (about 10 s), 1,000 under ``thorough``.
SEQ_DRAWS = 1000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 25


@settings(max_examples=SEQ_DRAWS, deadline=None)
@given(st.data())
def test_the_seq_rewrite_draws_forms_the_checker_decides_as_the_explorer_does(data: st.DataObject) -> None:
    """``protocol_programs``' ``seq`` rewrite on engines that do nothing else: every draw is valid, a correct one
    (the explorer finds no violation) proves with nothing left, a broken one is refuted, and each agrees with the
    explorer obligation by obligation."""
    p = data.draw(_seq(BASE))
    r, verdict = _check(p)
    if verdict == "ok":
        assert _not_proved(r) == {}, dumps(p)
    else:
        assert r.exit_code == 1, dumps(p)
