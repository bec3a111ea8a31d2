"""JUnit XML (the format CI systems read as test results): ``certify --junit`` and ``gate --junit``.

One ``<testsuite>`` per program, one ``<testcase>`` per obligation family in it (``classname`` the program,
``name`` the family, ``time`` the family's seconds). A certify case fails (``<failure>``) when an obligation of the
family is refuted or failed to prove, and errs (``<error>``) on a checker error; the message names each obligation
not proved. The gate's cases say whether the family matches the manifest (``gate.py``). The document validates
against the Jenkins xUnit plugin's JUnit schema (``junit-10.xsd``, ``tests/test_report_ci.py``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence

import attrs

from verispatial.certify.report import Report, Verdict
from verispatial.errors import SourceRefusal
from verispatial.ir.source import SourceLoc


@attrs.frozen
class Case:
    """One test case: ``suite`` (the program), ``name`` (the family), seconds, and at most one of ``failure`` /
    ``error`` / ``skipped`` (a message; ``detail`` is the element's text)."""

    suite: str
    name: str
    seconds: float = 0.0
    failure: str | None = None
    error: str | None = None
    skipped: str | None = None
    detail: str = ""


def report_cases(report: Report, suite: str | None = None, sources: Mapping[str, SourceLoc] | None = None,
                 name: Callable[[str], str] = str) -> list[Case]:
    """The cases of one certify report: one per family (report order). Each obligation not proved is named in the
    failure's text with, for a program a front end read, the host arguments its counterexample's trips stand for
    (``hostargs``) and the user-source lines it names (a helper's line with its call in the kernel); with none, the
    line of the op it is about (``sources``: ``sources.obligation_sources``). ``name`` puts the program's names into
    each reason (``names.namer``)."""
    from verispatial.report.hostargs import arg_lines
    from verispatial.report.text import at_lines

    out = []
    for fam, results in report.by_family().items():
        secs = sum(r.seconds for r in results)
        bad = [r for r in results if r.verdict != Verdict.PROVED]
        detail = "\n".join(f"{r.verdict.value} {r.family}/{r.name}: {name(r.reason)}"
                           + "".join(f"\n    {line}" for line in arg_lines(r.counterexample))
                           + "".join(f"\n    {line}" for line in at_lines(r.counterexample,
                                                                          (sources or {}).get(r.name)))
                           for r in bad)
        names = ", ".join(r.name for r in bad[:5]) + (f" (+{len(bad) - 5} more)" if len(bad) > 5 else "")
        errors = [r for r in bad if r.verdict == Verdict.ERROR]
        if any(r.verdict != Verdict.ERROR for r in bad):
            out.append(Case(suite or report.program, fam, secs,
                            failure=f"{len(bad)} of {len(results)} obligations not proved: {names}", detail=detail))
        elif errors:
            out.append(Case(suite or report.program, fam, secs, error=f"checker error: {names}", detail=detail))
        else:
            out.append(Case(suite or report.program, fam, secs))
    return out


def refusal_case(refusal: SourceRefusal, suite: str) -> Case:
    """The one failing case of a front end's refusal of the source ``suite`` (the file given to certify): named by the
    refusal's kind (``ttmetal-refused``), its message the refusal's one line, its text the user's file:line and
    statement."""
    at = refusal.at
    return Case(suite, refusal.kind, failure=refusal.line(),
                detail=f"{at.file}:{at.line}" + (f": {at.text}" if at.text else ""))


def junit_xml(cases: Sequence[Case], name: str = "verispatial") -> str:
    """The XML document: ``<testsuites name=...>`` with one ``<testsuite>`` per suite, in first-appearance order."""
    suites: dict[str, list[Case]] = {}
    for c in cases:
        suites.setdefault(c.suite, []).append(c)
    # No ``skipped`` on <testsuites>: the Jenkins JUnit schema (xunit-plugin junit-10.xsd) does not allow it there;
    # each <testsuite> carries its own count.
    root = ET.Element("testsuites", name=name, tests=str(len(cases)),
                      failures=str(sum(1 for c in cases if c.failure is not None)),
                      errors=str(sum(1 for c in cases if c.error is not None)),
                      time=f"{sum(c.seconds for c in cases):.3f}")
    for suite, cs in suites.items():
        el = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cs)),
                           failures=str(sum(1 for c in cs if c.failure is not None)),
                           errors=str(sum(1 for c in cs if c.error is not None)),
                           skipped=str(sum(1 for c in cs if c.skipped is not None)),
                           time=f"{sum(c.seconds for c in cs):.3f}")
        for c in cs:
            tc = ET.SubElement(el, "testcase", classname=suite, name=c.name, time=f"{c.seconds:.3f}")
            for tag, msg in (("failure", c.failure), ("error", c.error), ("skipped", c.skipped)):
                if msg is not None:
                    sub = ET.SubElement(tc, tag, message=msg)
                    if tag != "skipped":
                        sub.set("type", "verispatial." + tag)
                    if c.detail:
                        sub.text = c.detail
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
