"""The human report of one certify run: a header line (program, target, engine programs, ops), one line per
obligation family (proved / refuted / failed-to-prove / error and seconds), each refutation with its counterexample
and the failures to prove it explains (its consequences, ``consequences.py``), every other failure to prove and each
error with its reason, and the verdict line."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.summary import FamilyRow, exit_code, family_rows
from verispatial.report.hostargs import arg_lines
from verispatial.report.summary import STYLE, VERDICT_WORD, family_lines, header_lines, tally_text, verdict_line

if TYPE_CHECKING:
    from verispatial.ir.program import Program
    from verispatial.report.consequences import Grouping

__all__ = ["STYLE", "VERDICT_WORD", "family_rows", "report_lines", "tally"]


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _has_object(v: Any) -> bool:
    if isinstance(v, dict):
        return True
    return isinstance(v, list) and any(_has_object(x) for x in v)


def render_value(key: str | None, v: Any, indent: str) -> list[str]:
    """A JSON value as indented YAML-like lines: ``key: value``; an object's fields one level deeper; an array
    of objects as ``- `` items; an array without objects inline as JSON (``path: [2, 6]``)."""
    head = f"{indent}{key}:" if key is not None else f"{indent}-"
    if isinstance(v, dict):
        if not v:
            return [f"{head} {{}}"]
        lines = [head]
        for k, x in v.items():
            lines += render_value(str(k), x, indent + "  ")
        return lines
    if isinstance(v, list):
        if not _has_object(v):
            return [f"{head} {json.dumps(v)}"]
        lines = [head]
        for x in v:
            if isinstance(x, dict) and x:
                # YAML style: the item's first field shares the "- " line.
                sub = render_value(None, x, indent + "  ")[1:]
                inner = indent + "    "
                lines.append(indent + "  - " + sub[0][len(inner):])
                lines += sub[1:]
            else:
                lines += render_value(None, x, indent + "  ")
        return lines
    return [f"{head} {_scalar(v)}"]


def counterexample_lines(cex: dict[str, Any], indent: str = "    ", reason: str = "",
                         name: Callable[[str], str] = str) -> list[str]:
    """A counterexample: its ``summary`` first (when present and not the same as ``reason``, which was already
    printed), then every other field; ``name`` puts the program's names into each text (``names.named``)."""
    lines = []
    summary = cex.get("summary")
    if isinstance(summary, str) and summary != reason:
        lines.append(indent + name(summary))
    for k, v in cex.items():
        if k == "summary" and isinstance(v, str):
            continue
        lines += render_value(str(k), _named_value(v, name), indent)
    return lines


def _named_value(v: Any, name: Callable[[str], str]) -> Any:
    """``v`` (a counterexample's JSON value) with ``name`` applied to every string in it (keys stay)."""
    if isinstance(v, str):
        return name(v)
    if isinstance(v, dict):
        return {k: _named_value(x, name) for k, x in v.items()}
    if isinstance(v, list):
        return [_named_value(x, name) for x in v]
    return v


def source_lines(cex: Any) -> list[str]:
    """Every user-source location (``source`` fields, ``report/sources.py``) a counterexample names, in order and
    without repeats, as ``file:line:column: text``: the lines of TT-Lang or C++ the refutation is about."""
    from verispatial.report.sources import located_sources

    return [str(loc) for loc in located_sources(cex)]


def at_lines(cex: Any, fallback: Any = None) -> list[str]:
    """``at FILE:LINE:COL: TEXT`` per user-source location a counterexample names (``source_lines``), each op read
    inside an included helper followed by ``  called at ...``, its call in the kernel; with none, ``fallback`` (the
    line of the op the obligation is about, ``sources.obligation_sources``) when given."""
    from verispatial.report.sources import located_sources

    out: list[str] = []
    for loc in located_sources(cex) or ([fallback] if fallback is not None else []):
        out.append(f"at {loc}")
        if getattr(loc, "called_at", None) is not None:
            out.append(f"  called at {loc.called_at}")
    return out


def family_counts(report: Report) -> dict[str, dict[Verdict, int]]:
    """Per family (report order), how many obligations got each verdict."""
    return {fam: {v: sum(1 for r in results if r.verdict == v) for v in Verdict}
            for fam, results in report.by_family().items()}


def tally(report: Report, grouping: Grouping | None = None, rows: Sequence[FamilyRow] | None = None) -> str:
    """``N proved, N refuted, N failed-to-prove, N error of N obligations in S s``; with ``grouping``, when anything
    was refuted, also ``; N findings with N consequences, N other failed-to-prove`` (a consequence is one of the
    failures to prove, counted once there and once here). ``rows``: ``family_rows(report)`` when the caller has
    it."""
    out = tally_text(family_rows(report) if rows is None else rows, report.seconds)
    if grouping is not None and grouping.findings:
        c = grouping.counts()
        out += (f"; {_n(c['findings'], 'finding')} with {_n(c['consequences'], 'consequence')}, "
                f"{c['other_failed_to_prove']} other failed-to-prove")
    return out


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _unproved(r: Result, indent: str = "", sources: Mapping[str, Any] | None = None,
              name: Callable[[str], str] = str) -> list[tuple[str, str]]:
    out = [(f"{indent}{r.verdict.value} {r.family}/{r.name}: {name(r.reason) if r.reason else '(no reason given)'}",
            STYLE[r.verdict.value])]
    if sources and r.name in sources:  # the line of the op the obligation names (sources.obligation_sources)
        out.append((f"{indent}    at {sources[r.name]}", "bold"))
    if r.assumes:
        out.append((f"{indent}    assumes: {', '.join(r.assumes)}", ""))
    return out


def unproved_lines(report: Report, grouping: Grouping | None = None,
                   sources: Mapping[str, Any] | None = None, name: Callable[[str], str] = str) -> list[tuple[str, str]]:
    """(text, style) per obligation that failed to prove or errored: its reason, the user's source line of the op it
    names (``sources``: ``sources.obligation_sources``, for a program a front end read), then what it assumes (shared
    by ``report_lines`` and ``explain``, which has no picture for these but must say why). With ``grouping``, the
    consequences of a refuted finding are left out (``report_lines`` lists them under it). Several with one verdict,
    reason and assumptions (a num_dests mismatch leaves every proof that relies on acknowledgement counts unproved,
    each saying so) print that once, the obligations under it, in report order. ``name`` puts the program's names
    into each reason (``names.named``)."""
    same: dict[tuple[Verdict, str, tuple[str, ...]], list[Result]] = {}
    for r in report.results:
        if r.verdict in (Verdict.FAILED, Verdict.ERROR) and (grouping is None or r.name not in grouping.of):
            same.setdefault((r.verdict, r.reason, tuple(r.assumes)), []).append(r)
    out: list[tuple[str, str]] = []
    for (verdict, reason, assumes), rs in same.items():
        if len(rs) == 1:
            out += _unproved(rs[0], sources=sources, name=name)
            continue
        out.append((f"{verdict.value} ({len(rs)} obligations): {name(reason) if reason else '(no reason given)'}",
                    STYLE[verdict.value]))
        for r in rs:
            out.append((f"    {r.family}/{r.name}", ""))
            if sources and r.name in sources:
                out.append((f"        at {sources[r.name]}", "bold"))
        if assumes:
            out.append((f"    assumes: {', '.join(assumes)}", ""))
    return out


def consequence_lines(report: Report, grouping: Grouping, finding: str,
                      name: Callable[[str], str] = str) -> list[tuple[str, str]]:
    """The failures to prove grouped under refuted ``finding``, indented under it: a heading, then each with its
    reason (they stay failed-to-prove: fixing the finding and certifying again decides them)."""
    names = grouping.under(finding)
    if not names:
        return []
    by = {r.name: r for r in report.results}
    out = [(f"    consequences ({len(names)} failed-to-prove, not proved because of this finding):", "")]
    for n in names:
        out += _unproved(by[n], "      ", name=name)
    return out


def report_lines(report: Report, shape: tuple[int, int], grouping: Grouping | None = None,
                 sources: Mapping[str, Any] | None = None, program: Program | None = None) -> list[tuple[str, str]]:
    """The human report as (text, style) lines: header, one line per family, each refutation with its
    counterexample (and, with ``grouping``, its consequences), each other failure to prove and each error with its
    reason, and the verdict. ``shape`` is ``program_summary`` of the program (engine programs, ops). With
    ``program`` (the one the report is on), reasons and counterexamples name its buffers and semaphore words as
    ``explain`` does (``names.named``: ``c_0@(1,0)``, not ``b0``); obligation ids stay as they are."""
    from verispatial.report.names import namer  # here: a proved report (the warm run's) names nothing

    name = namer(program)
    out = header_lines(report.program, report.target, shape, report.cached)
    rows = family_rows(report)  # once: the counts decide which walks of the results below are needed
    out += family_lines(rows)
    printed: dict[str, str] = {}  # a counterexample (its JSON) -> the refutation it was printed under
    for r in report.results if any(x.refuted for x in rows) else ():
        if r.verdict == Verdict.REFUTED:
            out.append((f"refuted {r.family}/{r.name}" + (f": {name(r.reason)}" if r.reason else ""),
                        STYLE["refuted"]))
            key = json.dumps(r.counterexample, sort_keys=True) if r.counterexample else ""
            if key in printed:  # one run refuting several obligations (each component's deadlock): shown once
                out.append((f"    counterexample: the one of {printed[key]} above", ""))
            elif r.counterexample:
                printed[key] = f"{r.family}/{r.name}"
                out += [(f"    {line}", "") for line in arg_lines(r.counterexample)]
                out += [(f"    {line}", "bold") for line in at_lines(r.counterexample, (sources or {}).get(r.name))]
                out += [(line, "") for line in counterexample_lines(r.counterexample, reason=r.reason, name=name)]
            if grouping is not None:
                out += consequence_lines(report, grouping, r.name, name)
    if any(x.failed or x.error for x in rows):
        out += unproved_lines(report, grouping, sources, name)
    out.append(verdict_line(exit_code(rows), tally(report, grouping, rows)))
    return out
