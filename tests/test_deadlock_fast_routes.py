"""The cheap routes of the deadlock proof (issue 17: the TT-Lang matmul tutorials): the schedule candidate from a
shrunk run stretched to the full counts (``schedule.derive_stretched``), the long derivation run made only after the
search (``schedule.LONG_RUN``), and the one symbolic query over every trip value before the trips are enumerated
(``deadlock._symbolic_unsat``). Each only changes what is tried first: a program the interpreter deadlocks is still
refuted, with a replayed counterexample."""

from __future__ import annotations

import pytest
from builders import A, buf, ep, prog

from verispatial.certify import deadlock, schedule
from verispatial.certify.deadlock import check_deadlock
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import Engine, Loop, Op, Pop, Program, Push, Reserve, Trip, Wait


def nested(outer: int | str, inner: int | str, extra_wait: bool = False, trips: tuple[Trip, ...] = ()) -> Program:
    """Reader reserves and pushes one page of buffer 0 (2 pages) ``outer`` x ``inner`` times, compute waits and
    pops as often, then (``extra_wait``) waits once more for a page nobody pushes: a deadlock at its end."""
    fill: tuple[Op, ...] = (Loop("m", outer, (Loop("k", inner, (Reserve(0, 1), Push(0, 1))),)),)
    drain: tuple[Op, ...] = (Loop("m", outer, (Loop("k", inner, (Wait(0, 1), Pop(0, 1))),)),)
    if extra_wait:
        drain = (*drain, Wait(0, 1))
    return prog(ep(A, Engine.READER, *fill), ep(A, Engine.COMPUTE, *drain), buffers=(buf(0, cap=2),), trips=trips)


def _no_full_run(*_: object) -> object:
    raise AssertionError("the full derivation run was made")


def test_a_stretched_candidate_proves_long_loops_without_the_full_run(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(40, 50)  # 2 x 40 x 50 x 2 = 8,000 occurrences; the shrunk run has 2 x 4 x 4 x 2
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive_stretched(a, comp, {})
    assert isinstance(s, schedule.Schedule)
    assert schedule.check(a, comp, s, {}).proved
    monkeypatch.setattr(schedule, "derive", _no_full_run)
    got = schedule.prove(a, comp, a.trip_sets())
    assert got.proved


def test_a_stretched_candidate_of_a_deadlock_never_checks() -> None:
    p = nested(40, 50, extra_wait=True)
    a = analyse(p)
    (comp,) = a.components
    s = schedule.derive_stretched(a, comp, {})
    assert s is None or not schedule.check(a, comp, s, {}).proved
    rep = certify(p)
    (dl,) = [r for r in rep.results if r.name.startswith("deadlock")]
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None


def test_a_long_derivation_run_comes_after_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(40, 50)
    a = analyse(p)
    monkeypatch.setattr(schedule, "derive_stretched", lambda *_args, **_kw: None)  # as if no candidate checked
    monkeypatch.setattr(schedule, "LONG_RUN", 100)
    calls: list[int] = []
    full = schedule.derive

    def counted(*args: object) -> object:
        calls.append(1)
        return full(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(schedule, "derive", counted)
    (auto,) = check_deadlock(a, {0})
    assert (auto.verdict, calls) == (Verdict.PROVED, [])  # the search proved it: the 8,000-occurrence run not made
    (only,) = check_deadlock(a, {0}, method="schedule")
    assert only.verdict == Verdict.PROVED
    assert calls == [1]  # the schedule method alone still makes the long run


def test_one_symbolic_query_proves_every_trip_value(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(3, "t", trips=(Trip("t", 20),))  # the count m * t + k is not linear: 21 trip values to enumerate
    a = analyse(p)
    assert not a.linear
    assert len(a.trip_sets()) == 21
    monkeypatch.setattr(schedule, "prove", lambda *_args, **_kw: schedule.Outcome(False, "not tried"))
    (dl,) = check_deadlock(a, {0})
    assert dl.verdict == Verdict.PROVED
    assert "one query over every trip value" in dl.reason


def test_a_deadlock_for_some_trip_value_is_still_refuted(monkeypatch: pytest.MonkeyPatch) -> None:
    p = nested(3, "t", extra_wait=True, trips=(Trip("t", 20),))
    assert not analyse(p).linear
    asked: list[bool] = []
    symbolic = deadlock._symbolic_unsat

    def spy(*args: object) -> bool:
        got = symbolic(*args)  # type: ignore[arg-type]
        asked.append(got)
        return got

    monkeypatch.setattr(deadlock, "_symbolic_unsat", spy)
    rep = certify(p)
    (dl,) = [r for r in rep.results if r.name.startswith("deadlock")]
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None
    assert asked == [False]
