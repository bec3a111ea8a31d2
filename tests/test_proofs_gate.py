"""The proofs/ gate: every shipped proof still holds, and a tampered certificate is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verispatial.certify.gate import gate
from verispatial.certify.report import Verdict
from verispatial.errors import ParseError

PROOFS = Path(__file__).resolve().parent.parent / "proofs"


def test_every_shipped_proof_holds() -> None:
    entries = gate(PROOFS)
    assert [e.program.name for e in entries] == sorted(p.name for p in PROOFS.glob("*.program.json"))
    for e in entries:
        assert e.ok, (e.program, [r for r in e.report.results if r.verdict != Verdict.PROVED][:3])
        cert = [r for r in e.report.results if r.family == "certificate"]
        assert {r.name for r in cert} == {"certificate:places", "certificate:obligations", "certificate:witnesses"}


def _copy_small(tmp_path: Path) -> tuple[Path, Path]:
    prog = tmp_path / "pipeline_small.program.json"
    cert = tmp_path / "pipeline_small.certificate.json"
    shutil.copy(PROOFS / prog.name, prog)
    shutil.copy(PROOFS / cert.name, cert)
    return prog, cert


def test_a_certificate_that_omits_a_place_is_refused(tmp_path: Path) -> None:
    _, cert = _copy_small(tmp_path)
    c = json.loads(cert.read_text())
    dropped = c["places"].pop(0)
    cert.write_text(json.dumps(c))
    (entry,) = gate(tmp_path)
    assert entry.report.exit_code == 1
    bad = [r for r in entry.report.results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in bad] == ["certificate:places"]
    assert bad[0].counterexample is not None
    assert json.loads(bad[0].counterexample["omitted"][0]) == dropped


def test_a_certificate_claiming_an_extra_obligation_is_refused(tmp_path: Path) -> None:
    _, cert = _copy_small(tmp_path)
    c = json.loads(cert.read_text())
    c["obligations"].append({"family": "deadlock", "name": "deadlock:(9,9).reader", "reason": "made up"})
    cert.write_text(json.dumps(c))
    (entry,) = gate(tmp_path)
    bad = [r.name for r in entry.report.results if r.verdict == Verdict.REFUTED]
    assert bad == ["certificate:obligations"]


def test_a_certificate_of_another_program_is_refused(tmp_path: Path) -> None:
    prog, _ = _copy_small(tmp_path)
    p = json.loads(prog.read_text())
    p["name"] = "renamed"
    prog.write_text(json.dumps(p))
    (entry,) = gate(tmp_path)
    assert "certificate:program" in [r.name for r in entry.report.results if r.verdict == Verdict.REFUTED]


def test_gate_needs_certificates(tmp_path: Path) -> None:
    _prog, cert = _copy_small(tmp_path)
    cert.unlink()
    with pytest.raises(ParseError, match="missing: every program under the gate carries its certificate"):
        gate(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ParseError, match="holds no"):
        gate(empty)
