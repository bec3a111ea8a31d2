"""Reading a certify report in tests: the obligations not proved, one result by name, a refutation's counterexample."""

from __future__ import annotations

from verispatial.certify.report import Report, Result, Verdict


def not_proved(report: Report) -> dict[str, Verdict]:
    """Each obligation whose verdict is not ``proved``, by name."""
    return {r.name: r.verdict for r in report.results if r.verdict != Verdict.PROVED}


def one(report: Report, name: str) -> Result:
    """The single result named ``name``; fails the test when there is none or more than one."""
    (r,) = [r for r in report.results if r.name == name]
    return r


def cex(r: Result) -> dict[str, object]:
    """``r``'s counterexample; fails the test when it has none."""
    assert r.counterexample is not None, f"{r.name} has no counterexample"
    return r.counterexample
