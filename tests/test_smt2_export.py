"""Obligations exported as SMT-LIB2 re-check on their own: each proved query parses back and is unsat."""

from __future__ import annotations

from pathlib import Path

import z3

from verispatial.certify.smt import export_smt2
from verispatial.driver.run import certify
from verispatial.ir.serialize import load_program

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_exported_queries_recheck(tmp_path: Path) -> None:
    p = load_program(EXAMPLES / "pipeline_small.json")
    with export_smt2(tmp_path):
        report = certify(p)
    assert report.exit_code == 0
    files = sorted(tmp_path.glob("*.smt2"))
    assert len(files) >= 10
    names = {f.name.split("-", 2)[2] for f in files}
    assert any(n.startswith("deadlock") for n in names)
    assert any(n.startswith("cb-straddle") for n in names)
    for f in files:
        s = z3.Solver(ctx=z3.Context())
        s.from_string(f.read_text())
        assert s.check() == z3.unsat, f.name


def test_a_refuted_obligation_exports_a_sat_query(tmp_path: Path) -> None:
    p = load_program(EXAMPLES / "broken" / "b_ring_straddle.json")
    with export_smt2(tmp_path):
        report = certify(p)
    assert report.exit_code == 1
    straddle = [f for f in sorted(tmp_path.glob("*.smt2")) if "cb-straddle" in f.name]
    verdicts = []
    for f in straddle:
        s = z3.Solver(ctx=z3.Context())
        s.from_string(f.read_text())
        verdicts.append(s.check())
    assert z3.sat in verdicts
