"""The as-soon-as-possible run with repeated periods skipped (``schedule._periodic_run``): it finishes exactly when
the run executing every occurrence one by one (``schedule._asap``) finishes, and its cost does not grow with the loop
counts. Near misses where no skip may reach past the fault: an engine whose counts per iteration differ from its
partner's, a trip one iteration off, a ring one page short. Each is refuted by the checker as before."""

from __future__ import annotations

import pytest
from builders import A, buf, ep, prog
from hypothesis import given, settings

from verispatial.certify import schedule
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import Engine, Loop, Op, Pop, Program, Push, Reserve, Wait
from verispatial.ir.program import walk
from verispatial.strategies import programs

#: Iterations of the long loops: their runs are far longer than the one-by-one limit the tests give.
N = 3000


def ring(fill: tuple[Op, ...], drain: tuple[Op, ...], cap: int = 2, fills: int = N, drains: int = N,
         after: tuple[tuple[Op, ...], tuple[Op, ...]] = ((), ())) -> Program:
    """Buffer 0 of ``cap`` pages on A: the reader runs ``fill`` ``fills`` times, then ``after[0]``; compute runs
    ``drain`` ``drains`` times, then ``after[1]``."""
    return prog(ep(A, Engine.READER, Loop("k", fills, fill), *after[0]),
                ep(A, Engine.COMPUTE, Loop("k", drains, drain), *after[1]), buffers=(buf(0, cap=cap),))


ONE_IN = (Reserve(0, 1), Push(0, 1))
ONE_OUT = (Wait(0, 1), Pop(0, 1))


def component(p: Program) -> tuple[object, frozenset[str]]:
    a = analyse(p)
    (comp,) = a.components
    return a, comp


def skips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every period count ``_repeats`` grants, recorded."""
    got: list[int] = []
    real = schedule._repeats

    def spy(stream: list[int], start: int, step: int) -> int:
        got.append(real(stream, start, step))
        return got[-1]
    monkeypatch.setattr(schedule, "_repeats", spy)
    return got


def test_a_long_balanced_ring_proves_by_skipping_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    a, comp = component(ring(ONE_IN, ONE_OUT))
    granted = skips(monkeypatch)
    skipped = schedule._periodic_run(a, comp, limit=100)  # type: ignore[arg-type]
    assert skipped is not None
    assert skipped > 4 * N - 100  # all but at most ``limit`` of the 4 N occurrences skipped
    assert max(granted) > 1
    got = schedule.by_run(a, comp, limit=100)  # type: ignore[arg-type]
    assert got is not None
    assert (got.proved, got.exhaustive) == (True, True)
    assert got.reason == (f"every one of its {4 * N} counter occurrences executed in an as-soon-as-possible run "
                          "(an exhaustive schedule witness)")
    assert not isinstance(schedule._asap(a, comp, {}), schedule.Stuck)  # type: ignore[arg-type]


@pytest.mark.parametrize(("why", "p"), [
    # the reader fills two pages an iteration, compute drains one: the ring fills, the reader waits for space
    ("counts per iteration differ", ring(ONE_IN + ONE_IN, ONE_OUT)),
    # compute runs one iteration more than the reader fills: its last wait never passes
    ("compute's trip one longer", ring(ONE_IN, ONE_OUT, drains=N + 1)),
    # after the loop the reader reserves two pages at once in a ring of one
    ("a ring one page short", ring(ONE_IN, ONE_OUT, cap=1, after=((Reserve(0, 2), Push(0, 2)), (Wait(0, 2), Pop(0, 2))))),
])
def test_no_skip_reaches_past_a_deadlock(monkeypatch: pytest.MonkeyPatch, why: str, p: Program) -> None:
    a, comp = component(p)
    assert isinstance(schedule._asap(a, comp, {}), schedule.Stuck), why  # type: ignore[arg-type]
    granted = skips(monkeypatch)
    assert schedule._periodic_run(a, comp, limit=200) is None, why  # type: ignore[arg-type]
    assert max(granted, default=0) > 1, why  # it did skip periods before the fault, and still got stuck
    got = schedule.by_run(a, comp, limit=200)  # type: ignore[arg-type]
    assert got is None or not got.proved
    monkeypatch.undo()
    (dl,) = [r for r in certify(p).results if r.family == "deadlock"]
    assert dl.verdict == Verdict.REFUTED, why


def test_a_reader_one_iteration_longer_ends_and_proves() -> None:
    # The reader fills one page more than compute drains: it ends holding it (the launch resets the ring), no wait.
    a, comp = component(ring(ONE_IN, ONE_OUT, fills=N + 1))
    assert schedule._periodic_run(a, comp, limit=100) is not None  # type: ignore[arg-type]
    assert not isinstance(schedule._asap(a, comp, {}), schedule.Stuck)  # type: ignore[arg-type]


def _constant_loops(p: Program) -> bool:
    return all(isinstance(op.count, int) for ep_ in p.programs for op in walk(ep_.ops) if isinstance(op, Loop))


@settings(max_examples=max(10, settings().max_examples // 20))
@given(programs())
def test_the_periodic_run_finishes_exactly_when_the_full_run_does(p: Program) -> None:
    if not _constant_loops(p):
        return
    a = analyse(p)
    for comp in a.components:
        if schedule._run_length(a, comp, {}) is None:
            continue  # an If: the periodic run does not apply
        full = schedule._asap(a, comp, {})
        fast = schedule._periodic_run(a, comp, limit=schedule.DERIVE_LIMIT)
        if isinstance(full, schedule.Stuck):
            assert fast is None
        elif not isinstance(full, str) and not any(
                lf.op.terms for e in comp for lf in a.views[e].leaves if isinstance(lf.op, schedule.SemWait)):
            assert fast is not None
