"""Re-checking the checker's exported queries with a second solver (cvc5), issue 9 deliverable 4.

Every program of the ``proofs/`` corpus and of ``examples/`` (broken ones included) is certified with its queries
exported (``export_smt2``: plain SMT-LIB 2.6, ``(set-logic ALL)``, no Z3 option); each exported script is then
answered by Z3 (a fresh context, the checker's ``rlimit``) and by cvc5 (PyPI ``cvc5``, a per-query time limit), and
the two answers are compared. ``unsat`` means the query's obligation holds; ``sat`` is a refuted obligation's
counterexample query. A solver that gives up (``unknown``: Z3's resource limit, cvc5's time limit) is counted, never
compared. Used by ``tests/test_second_solver.py`` and ``benchmarks/second_solver.py``.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import attrs
import z3

from verispatial.certify.report import Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, export_smt2
from verispatial.driver.run import certify
from verispatial.ir.serialize import load_program

ROOT = Path(__file__).resolve().parent.parent
_OBLIGATION = re.compile(r"^; verispatial obligation (.*): unsat means it holds$", re.M)


def corpus() -> list[Path]:
    """Every program of ``proofs/`` (``NAME.program.json``) and ``examples/`` (broken ones too), each program text
    once (the corpus copies the examples byte for byte), sorted by path."""
    paths = sorted((ROOT / "proofs").rglob("*.program.json")) + sorted((ROOT / "examples").glob("*.json")) \
        + sorted((ROOT / "examples" / "broken").glob("*.json"))
    seen: set[str] = set()
    out: list[Path] = []
    for p in paths:
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(p)
    return out


def z3_answer(text: str, rlimit: int = DEFAULT_RLIMIT) -> str:
    """Z3's answer to one exported script (``sat``, ``unsat`` or ``unknown``), in a fresh context."""
    s = z3.Solver(ctx=z3.Context())
    s.set("rlimit", rlimit)
    s.from_string(text)
    try:
        return str(s.check())
    except z3.Z3Exception:
        return "unknown"


def cvc5_answer(text: str, tlimit_ms: int) -> str:
    """cvc5's answer to one exported script (``sat``, ``unsat``, ``unknown``), through its SMT-LIB 2.6 parser; a
    script cvc5 cannot parse raises ``RuntimeError`` with cvc5's message (the export must be plain SMT-LIB)."""
    import cvc5  # the test extra's second solver; imported here so the rest of the suite does not need it

    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("tlimit-per", str(tlimit_ms))
    sm = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    answers: list[str] = []
    while True:
        try:
            cmd = parser.nextCommand()
        except RuntimeError as e:
            raise RuntimeError(f"cvc5 cannot parse the script: {e}") from None
        if cmd.isNull():
            break
        out = cmd.invoke(solver, sm).strip()
        if out.startswith("(error"):
            raise RuntimeError(f"cvc5 refuses the script: {out[:200]}")
        if out:
            answers.append(out)
    # cvc5 says why it gave up: ``unknown (TIMEOUT)``.
    if len(answers) != 1 or answers[0].split()[0] not in ("sat", "unsat", "unknown"):
        raise RuntimeError(f"cvc5 answered {answers!r}, expected one check-sat answer")
    return answers[0].split()[0]


@attrs.define
class Tally:
    """What the re-check saw: programs certified, queries exported, compared (both solvers definite), agreeing,
    skipped as too large, each solver's unknowns, the disagreements (one line each) and the time spent (seconds)."""

    programs: int = 0
    queries: int = 0
    compared: int = 0
    agreed: int = 0
    skipped_large: int = 0
    z3_unknown: int = 0
    cvc5_unknown: int = 0
    unsat: int = 0
    sat: int = 0
    disagreements: list[str] = attrs.Factory(list)
    seconds: float = 0.0

    def line(self) -> str:
        return (f"second solver: {self.programs} programs, {self.queries} queries, {self.compared} compared, "
                f"{self.agreed} agreed ({self.unsat} unsat, {self.sat} sat), {self.skipped_large} skipped (large), "
                f"z3 unknown {self.z3_unknown}, cvc5 unknown {self.cvc5_unknown}, "
                f"{len(self.disagreements)} disagreements, {self.seconds:.1f} s")


def recheck(programs: Iterable[Path], *, max_bytes: int | None, tlimit_ms: int, tally: Tally | None = None) -> Tally:
    """Certify each program with its queries exported and answer each query with Z3 and cvc5 (see the module
    docstring). ``max_bytes``: queries larger than this are counted as skipped (None: none skipped). Also checks the
    scripts against the report: a proved obligation has a query Z3 answers unsat (only unsat proves; an obligation
    may ask several, the earlier ones sat)."""
    t = tally or Tally()
    t0 = time.perf_counter()
    for path in programs:
        t.programs += 1
        with tempfile.TemporaryDirectory() as d:
            with export_smt2(d):
                report = certify(load_program(path))
            verdict = {r.name: r.verdict for r in report.results}
            answers: dict[str, set[str]] = {}
            for f in sorted(Path(d).glob("*.smt2")):
                t.queries += 1
                text = f.read_text()
                m = _OBLIGATION.search(text)
                name = m[1] if m else f.name
                if max_bytes is not None and len(text) > max_bytes:
                    t.skipped_large += 1
                    answers.setdefault(name, set()).add("skipped")
                    continue
                a = z3_answer(text)
                b = cvc5_answer(text, tlimit_ms)
                where = f"{path.relative_to(ROOT)} {name}"
                if a == "unknown":
                    t.z3_unknown += 1
                if b == "unknown":
                    t.cvc5_unknown += 1
                answers.setdefault(name, set()).add(a)
                if "unknown" in (a, b):
                    continue
                t.compared += 1
                if a == b:
                    t.agreed += 1
                    t.unsat += a == "unsat"
                    t.sat += a == "sat"
                else:
                    t.disagreements.append(f"{where}: z3 {a}, cvc5 {b}")
            # Only unsat proves: a proved obligation has an unsat query (an obligation may ask several, e.g. first
            # without, then with a recorded assumption; the earlier ones may be sat).
            for name, seen in answers.items():
                if verdict.get(name) == Verdict.PROVED and not seen & {"unsat", "skipped"}:
                    t.disagreements.append(f"{path.relative_to(ROOT)} {name}: proved, but no exported query of it is "
                                           f"unsat for Z3 ({', '.join(sorted(seen))})")
    t.seconds += time.perf_counter() - t0
    return t
