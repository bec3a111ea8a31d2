"""The parts of the human report that a report's counts decide: its header, the proof cache line, one line per
obligation family and the verdict line (``text.report_lines`` prints them around a report's findings).

A report whose every obligation proved prints nothing else, so its whole text follows from its
``certify.summary.Summary`` — program, target, the program's shape, per family the count of each verdict and the
seconds spent, the run's seconds and the proof cache entry it came from — which the proof store keeps beside the
report (``driver/store.py``, kind ``summary``). A warm ``certify`` (``cli/warm.py``) prints it from that entry alone,
through these very functions, so its text is the text ``report_lines`` prints for the full report. Light on purpose:
this module imports only ``certify.summary`` (a warm run imports no IR, attrs or rich)."""

from __future__ import annotations

from collections.abc import Sequence

from verispatial.certify.summary import FamilyRow, Summary, exit_code

__all__ = ["STYLE", "VERDICT_WORD", "FamilyRow", "Summary", "family_lines", "header_lines", "summary_lines",
           "tally_text", "verdict_line"]

#: Styles (rich) per verdict.
STYLE = {"proved": "green", "refuted": "bold red", "failed-to-prove": "yellow", "error": "bold magenta"}

#: The verdict word per exit code (README "Exit codes").
VERDICT_WORD = {0: "proved", 1: "refuted", 3: "failed-to-prove (not accepted)", 4: "checker error"}


def header_lines(program: str, target: str, shape: tuple[int, int], cached: str) -> list[tuple[str, str]]:
    """The header line (program, target, engine programs, ops) and, for a report from the proof cache, the line
    naming its entry."""
    engines, ops = shape
    out = [(f"program {program}  target {target}  engines {engines}  ops {ops}", "bold")]
    if cached:
        out.append((f"  every obligation from the proof cache ({cached})", ""))
    return out


def family_lines(rows: Sequence[FamilyRow]) -> list[tuple[str, str]]:
    """One line per family: its count of each verdict and its seconds, the names padded to the longest."""
    width = max((len(r.family) for r in rows), default=0)
    return [(f"  {r.family:<{width}}  {r.proved:>4} proved  {r.refuted:>3} refuted  "
             f"{r.failed:>3} failed-to-prove  {r.error:>3} error  {r.seconds:8.2f} s", "")
            for r in rows]


def tally_text(rows: Sequence[FamilyRow], seconds: float) -> str:
    """``N proved, N refuted, N failed-to-prove, N error of N obligations in S s``."""
    p, x, f, e = (sum(r.proved for r in rows), sum(r.refuted for r in rows), sum(r.failed for r in rows),
                  sum(r.error for r in rows))
    return (f"{p} proved, {x} refuted, {f} failed-to-prove, {e} error "
            f"of {p + x + f + e} obligations in {seconds:.2f} s")


def verdict_line(code: int, tally: str) -> tuple[str, str]:
    """The last line: the verdict word of exit ``code`` and the ``tally``."""
    word = VERDICT_WORD.get(code, "error")
    style = {0: "proved", 1: "refuted", 3: "failed-to-prove"}.get(code, "error")
    return (f"verdict: {word} ({tally})", "bold " + STYLE[style])


def summary_lines(s: Summary) -> list[tuple[str, str]]:
    """The whole human report of a run with no finding (nothing refuted, failed or in error), as
    ``text.report_lines`` prints it. Raises ``ValueError`` for a summary with a finding: its lines need the
    results."""
    code = exit_code(s.families)
    if code != 0:
        raise ValueError("a summary with findings: print the report")
    return [*header_lines(s.program, s.target, s.shape, s.cached), *family_lines(s.families),
            verdict_line(code, tally_text(s.families, s.seconds))]
