"""What a report's counts decide, apart from its results: per obligation family the count of each verdict and the
seconds spent (``FamilyRow``), and a ``Summary`` of a report — program, target, the program's shape, its family rows,
the run's seconds and the proof cache entry it came from. The proof store keeps a proved report's summary beside the
report (``driver/store.py``, kind ``summary``) and a warm ``certify`` prints it (``report/summary.py``,
``cli/warm.py``): the human report of a report with no finding follows from its summary alone.

Light on purpose: this module imports nothing at its top (a warm run imports no attrs, IR or solver module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from verispatial.certify.report import Report


class FamilyRow(NamedTuple):
    """One obligation family: how many obligations got each verdict, and the seconds spent on them (the sum of their
    ``Result.seconds``, in report order)."""

    family: str
    proved: int
    refuted: int
    failed: int
    error: int
    seconds: float


class Summary(NamedTuple):
    """What the human report of a run with no finding prints: ``program``, ``target``, ``shape`` (engine programs,
    ops), ``families`` in report order, ``seconds`` of the run and ``cached`` (the proof cache entry, empty for a
    computed report)."""

    program: str
    target: str
    shape: tuple[int, int]
    families: tuple[FamilyRow, ...]
    seconds: float
    cached: str


def family_rows(report: Report) -> tuple[FamilyRow, ...]:
    """Per family of ``report`` (report order, ``Report.by_family``) its count of each verdict and its seconds."""
    from verispatial.certify.report import FAMILIES, Verdict, family_verdict_counts

    # One pass over the results (an 80-layer step has 377,074; a reused slice's counted once per family and verdict,
    # off its columns): per family the count of each verdict and the seconds, summed in report order as ``sum`` over
    # ``Report.by_family``'s lists would (a reused result's seconds are 0).
    column = {Verdict.PROVED: 0, Verdict.REFUTED: 1, Verdict.FAILED: 2, Verdict.ERROR: 3}
    acc: dict[str, list[Any]] = {f: [0, 0, 0, 0, 0] for f in FAMILIES}
    for family, verdict, count, seconds in family_verdict_counts(report.results):
        row = acc.get(family)
        if row is None:
            row = acc[family] = [0, 0, 0, 0, 0]
        row[column[verdict]] += count
        row[4] += seconds
    return tuple(FamilyRow(fam, *row) for fam, row in acc.items() if row[0] or row[1] or row[2] or row[3])


def exit_code(rows: Sequence[FamilyRow]) -> int:
    """As ``Report.exit_code``: 1 something refuted, 4 a checker error, 3 something failed to prove, else 0."""
    if any(r.refuted for r in rows):
        return 1
    if any(r.error for r in rows):
        return 4
    if any(r.failed for r in rows):
        return 3
    return 0
