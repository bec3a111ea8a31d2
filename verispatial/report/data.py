"""The JSON report of one certify run (``certify --json``)."""

from __future__ import annotations

from typing import Any

from verispatial.certify.report import Report


def report_json(report: Report) -> dict[str, Any]:
    """The JSON report of ``report`` (``Report.to_json``: ``program``, ``target``, ``exit_code``, ``seconds``, every
    result and, for a report from the proof cache, ``cached``)."""
    return report.to_json()
