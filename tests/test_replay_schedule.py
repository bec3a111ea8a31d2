"""A deadlock found by the explicit-state search carries its schedule (the transitions fired), and a later replay
of that refutation — the gate's warm run over a cached candidate — fires exactly that schedule in the interpreter
instead of searching again; a schedule that does not end in a deadlock is never taken on its word."""

from __future__ import annotations

from pathlib import Path

from verispatial.certify.checker import replay_refutation
from verispatial.certify.replay import replay_schedule
from verispatial.certify.report import Result, Verdict
from verispatial.driver.run import certify
from verispatial.driver.search import propose_deadlock
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program

BROKEN = Path(__file__).resolve().parent.parent / "examples" / "broken" / "s_flag_reset_late.json"


def _deadlock() -> tuple[Program, Result]:
    p = load_program(BROKEN)
    (r,) = [r for r in certify(p).results if r.verdict == Verdict.REFUTED and r.name.startswith("deadlock:")]
    return p, r


def test_the_searched_deadlock_is_replayed_from_its_schedule() -> None:
    p, r = _deadlock()
    cex = r.counterexample
    assert cex is not None
    assert cex["replayed_by"] == "explicit-state search"
    assert len(cex["schedule"]) == len(cex["trace"]) > 0
    again = replay_refutation(p, r, search=propose_deadlock)
    assert again is not None
    assert again.verdict == Verdict.REFUTED
    assert again.counterexample is not None
    assert again.counterexample["replayed_by"] == "recorded schedule"
    assert again.counterexample["stuck"] == cex["stuck"]


def test_a_schedule_that_stops_short_of_the_deadlock_is_not_a_replay() -> None:
    p, r = _deadlock()
    cex = dict(r.counterexample or {})
    assert replay_schedule(p, {**cex, "schedule": cex["schedule"][:-1]}) is None
    assert replay_schedule(p, {**cex, "schedule": [{"kind": "step", "engine": 99}]}) is None
    assert replay_schedule(p, {**cex, "schedule": "garbage"}) is None
    # The refutation still stands, re-established by the search rather than by the broken schedule.
    again = replay_refutation(p, Result(r.family, r.name, r.verdict, r.reason,
                                        {**cex, "schedule": cex["schedule"][:-1]}), search=propose_deadlock)
    assert again is not None
    assert again.counterexample is not None
    assert again.counterexample["replayed_by"] != "recorded schedule"
