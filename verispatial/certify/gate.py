"""The pre-merge proof gate (DESIGN §1 use 3): every program under a directory is re-certified against the
certificate stored beside it; a lost proof fails the gate.

Layout: ``NAME.program.json`` with ``NAME.certificate.json`` next to it.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from verispatial.certify.checker import certify
from verispatial.certify.report import Report
from verispatial.errors import ParseError
from verispatial.ir.serialize import load_program, parse_json


@attrs.frozen
class GateEntry:
    program: Path
    report: Report

    @property
    def ok(self) -> bool:
        return self.report.exit_code == 0


def gate(directory: str | Path) -> list[GateEntry]:
    """Re-certify every ``*.program.json`` of ``directory`` with its certificate. Raises ``ParseError`` when the
    directory holds no program or a program has no certificate beside it."""

    d = Path(directory)
    if not d.is_dir():
        raise ParseError(str(d), "is not a directory of proofs")
    programs = sorted(d.glob("*.program.json"))
    if not programs:
        raise ParseError(str(d), "holds no *.program.json")
    out: list[GateEntry] = []
    for prog in programs:
        cert_path = prog.with_name(prog.name.replace(".program.json", ".certificate.json"))
        if not cert_path.exists():
            raise ParseError(str(cert_path), "missing: every program under the gate carries its certificate")
        try:
            cert = parse_json(cert_path.read_bytes())
        except ParseError as e:
            raise ParseError(str(cert_path), e.rule) from None
        out.append(GateEntry(prog, certify(load_program(prog), certificate=cert)))
    return out
