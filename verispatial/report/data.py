"""The JSON report of one certify run (``certify --json``)."""

from __future__ import annotations

from typing import Any

from verispatial.certify.report import Report


def report_json(report: Report) -> dict[str, Any]:
    """``program``, ``target``, ``exit_code``, ``seconds`` and every result (family, name, verdict, reason,
    counterexample, the obligations its proof assumes, seconds); ``cached`` names the proof cache entry when every result came from it."""
    out: dict[str, Any] = {
        "program": report.program,
        "target": report.target,
        "exit_code": report.exit_code,
        "seconds": round(report.seconds, 3),
        "results": [
            {
                "family": r.family,
                "name": r.name,
                "verdict": r.verdict.value,
                "reason": r.reason,
                "counterexample": r.counterexample,
                "assumes": list(r.assumes),
                "seconds": round(r.seconds, 3),
            }
            for r in report.results
        ],
    }
    if report.cached:
        out["cached"] = report.cached
    return out
