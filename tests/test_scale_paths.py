"""The walks of a large report done once (issue 19 goal 3: an 80-layer step has 377,074 results): family rows in
one pass, the human report's walks only where a count needs them, and the freeze of what a composed certify makes
while the collector is paused."""

from __future__ import annotations

import gc

from verispatial.certify import compositional as comp
from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.summary import FamilyRow, exit_code, family_rows
from verispatial.report.text import report_lines, tally


def _report(*results: Result) -> Report:
    return Report("p", "wormhole_b0", tuple(results), 1.5)


def test_family_rows_count_each_verdict_in_report_order_with_seconds_summed() -> None:
    rep = _report(
        Result("deadlock", "d0", Verdict.PROVED, seconds=0.25),
        Result("memory", "m0", Verdict.REFUTED, seconds=0.5),
        Result("deadlock", "d1", Verdict.FAILED, seconds=0.125),
        Result("a-family-of-its-own", "x", Verdict.ERROR, seconds=1.0),
        Result("memory", "m1", Verdict.PROVED),
        Result("circular-buffer", "c", Verdict.PROVED, seconds=0.1),
    )
    assert family_rows(rep) == (
        FamilyRow("circular-buffer", 1, 0, 0, 0, 0.1),
        FamilyRow("memory", 1, 1, 0, 0, 0.5),
        FamilyRow("deadlock", 1, 0, 1, 0, 0.375),
        FamilyRow("a-family-of-its-own", 0, 0, 0, 1, 1.0),
    )
    assert exit_code(family_rows(rep)) == rep.exit_code == 1
    assert family_rows(_report()) == ()


def test_report_lines_list_every_finding_and_the_verdict_of_the_counts() -> None:
    rep = _report(
        Result("deadlock", "d0", Verdict.PROVED),
        Result("memory", "m0", Verdict.REFUTED, "two buffers share byte 0"),
        Result("deadlock", "d1", Verdict.FAILED, "unknown"),
        Result("balance", "b0", Verdict.ERROR, "checker fault"),
    )
    text = [t for t, _ in report_lines(rep, (2, 10))]
    assert "refuted memory/m0: two buffers share byte 0" in text
    assert "failed-to-prove deadlock/d1: unknown" in text
    assert "error balance/b0: checker fault" in text
    assert text[-1] == f"verdict: refuted ({tally(rep)})"
    proved = _report(Result("deadlock", "d0", Verdict.PROVED), Result("memory", "m0", Verdict.PROVED))
    lines = [t for t, _ in report_lines(proved, (2, 10))]
    assert not any(t.startswith(("refuted ", "failed-to-prove ", "error ")) for t in lines)
    assert lines[-1] == "verdict: proved (2 proved, 0 refuted, 0 failed-to-prove, 0 error of 2 obligations in 1.50 s)"


def test_objects_made_while_paused_are_frozen_only_inside_a_frozen_heap_that_owns_the_freeze() -> None:
    """``keep_made`` freezes within an owned ``frozen_heap`` with the collector paused, and nowhere else; the block's
    end unfreezes everything (a caller's own freeze is left alone: tests/test_templated.py)."""
    was = gc.isenabled()
    try:
        with comp.collection(False):
            comp.keep_made()  # no frozen_heap: nothing frozen
            assert gc.get_freeze_count() == 0
        with comp.frozen_heap():
            comp.keep_made()  # the collector is on: nothing frozen
            assert gc.get_freeze_count() == 0
            with comp.collection(False):
                made = [[i] for i in range(1000)]
                comp.keep_made()
                assert gc.get_freeze_count() >= len(made)
            assert made[999] == [999]
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
