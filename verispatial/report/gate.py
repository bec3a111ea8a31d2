"""The gate's outputs: the summary table (text), JUnit cases and SARIF results of one gate run (``driver/gate.py``).

The table has one row per program — name, expected verdict, outcome, obligations (proved / not proved), seconds and
how the verdict was reached (``computed``; ``cache``: the proved report from the proof cache; ``replayed``: the
expected refutations re-established from cached candidates by the interpreter) — then every failing program's
detail, and a closing line ``gate: N passed, N failed`` (``, N skipped`` with ``--changed``) that CI reads.
"""

from __future__ import annotations

from verispatial.certify.report import Verdict
from verispatial.driver.gate import GateRun, Outcome
from verispatial.report.junit import Case, report_cases
from verispatial.report.sarif import Finding, escape


def _expected(o: Outcome) -> str:
    if o.expected is None:
        return "proved"
    return o.expected.expect + (f" ({', '.join(o.expected.refuted)})" if o.expected.refuted else "")


def _obligations(o: Outcome) -> str:
    if o.report is None:
        return f"{o.proved[0]}/{o.proved[1]}" if o.proved is not None else "-"
    if o.how == "replayed":
        return f"{len(o.report.results)} replayed"
    bad = sum(1 for r in o.report.results if r.verdict != Verdict.PROVED)
    return f"{len(o.report.results) - bad}/{len(o.report.results)}"


def gate_lines(run: GateRun) -> list[str]:
    """The summary table, the failures' details and the closing tally."""
    rows = [("program", "expected", "outcome", "proved", "seconds", "how")]
    for o in run.outcomes:
        rows.append((o.name, _expected(o), o.status if o.ok else o.status.upper(), _obligations(o),
                     f"{o.seconds:.2f}" if o.status not in ("missing", "extra", "skipped") else "-", o.how or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) if i != 4 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    failed = [o for o in run.outcomes if not o.ok]
    for o in failed:
        out.append(f"{o.status.upper()} {o.name}: {o.detail}")
    if run.changed_since is not None:
        out.append(f"--changed {run.changed_since}: " + ("the checker changed since then: every program re-checked"
                                                         if run.checker_changed else
                                                         f"{sum(1 for o in run.outcomes if o.status == 'skipped')} "
                                                         "unchanged programs skipped"))
    c = run.cache
    if c:
        out.append(f"proof cache: {c.get('hits', 0)} entries read, {c.get('written', 0)} written, "
                   f"{c.get('ignored', 0)} ignored (corrupt or foreign)")
    skipped = sum(1 for o in run.outcomes if o.status == "skipped")
    passed = sum(1 for o in run.outcomes if o.ok) - skipped
    tail = f"gate: {passed} passed, {len(failed)} failed" + (f", {skipped} skipped" if skipped else "")
    out.append(tail + f" in {run.seconds:.1f} s")
    return out


def gate_cases(run: GateRun) -> list[Case]:
    """JUnit cases: per program and family. An expected-proved program's families pass when every obligation
    proved; an expected-refuted program has one case per family that must be refuted; a program not run (missing,
    extra, no certificate, bad input, error) has one ``program`` case; a skipped program one skipped case."""
    out: list[Case] = []
    for o in run.outcomes:
        if o.status == "skipped":
            out.append(Case(o.name, "program", skipped=o.detail))
            continue
        if o.report is None:
            case = Case(o.name, "program", o.seconds, error=o.detail) if o.status == "error" else \
                Case(o.name, "program", o.seconds, failure=f"{o.status}: {o.detail}")
            out.append(case)
            continue
        if o.expected is None or o.expected.expect == "proved":
            out += report_cases(o.report, o.name)
            continue
        fams = o.report.by_family()
        for fam in o.expected.refuted:
            rs = fams.get(fam, [])
            refuted = [r for r in rs if r.verdict == Verdict.REFUTED]
            secs = sum(r.seconds for r in rs)
            if refuted:
                out.append(Case(o.name, fam, secs))
            else:
                out.append(Case(o.name, fam, secs, failure=f"expected refuted: {o.detail}"))
    return out


def gate_extra_results(run: GateRun, manifest_uri: str) -> list[Finding]:
    """SARIF findings of the gate that are not an obligation: a missing or extra program, a missing certificate, a
    file that does not load, a changed verdict, a checker error. A missing program sits at its entry in the
    manifest (``manifest_uri``, the file's path); every other at line 1 of the program file, its manifest entry (when
    it has one) a related location (docs/ci.md "SARIF for code scanning")."""
    out: list[Finding] = []
    listed = run.manifest.programs if run.manifest is not None and run.manifest.path is not None else {}
    for o in run.outcomes:
        if o.ok or o.status == "lost":
            continue
        entry = (manifest_uri, f"/programs/{escape(o.name)}") if o.name in listed else None
        if o.program is not None and o.status != "missing":
            path, pointer, related = str(o.program), None, (entry,) if entry is not None else ()
        elif entry is not None:
            path, pointer, related = entry[0], entry[1], ()
        else:
            path, pointer, related = manifest_uri, None, ()
        out.append(Finding(f"gate-{o.status}", f"{o.name}: {o.status}: {o.detail}", path, pointer, related,
                           {"program": o.name, "family": "gate", "status": o.status}))
    return out
