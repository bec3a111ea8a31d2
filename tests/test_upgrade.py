"""Format 1 programs: refused with the upgrade named, and ``verispatial upgrade IN -o OUT`` converts them to the
current format, saying no more and no less than format 1 did (``verispatial/ir/upgrade.py``)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from verispatial import cli
from verispatial.errors import InvalidProgram
from verispatial.ir.ops import Compute, If, Loop, McastSend, McastSetValid, Op
from verispatial.ir.program import Program, walk
from verispatial.ir.serialize import dumps, load_program, loads, program_from_dict
from verispatial.ir.upgrade import upgrade_document

ROOT = Path(__file__).resolve().parent.parent
FORMAT1 = ROOT / "tests" / "data" / "format1"
SMALL_V1 = FORMAT1 / "pipeline_small.json"


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def _gz(name: str) -> Any:
    return json.loads(gzip.decompress((FORMAT1 / name).read_bytes()))


def _no_operands(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Compute):
            op = attrs.evolve(op, ins=())
        elif isinstance(op, (Loop, If)):
            op = attrs.evolve(op, body=_no_operands(op.body))
        out.append(op)
    return tuple(out)


def without_operands(p: Program) -> Program:
    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=_no_operands(ep.ops)) for ep in p.programs))


def test_a_format_1_program_is_refused_naming_the_upgrade() -> None:
    code, out, err = run(["certify", str(SMALL_V1)])
    assert (code, out) == (2, "")
    assert err == (f"verispatial: error: {SMALL_V1}: version: this verispatial reads versions 2 and 3, got 1 (format 1: "
                   "convert it with `verispatial upgrade IN.json -o OUT.json`)\n")


def test_the_upgrade_is_the_program_the_v2_change_wrote_but_for_operand_pages() -> None:
    """The IR v2 change rewrote the examples in version 2; upgrading their format 1 text gives the same programs,
    multicast destination counts, accumulator precision and all, except the operand pages of compute steps, which
    format 1 did not name (upgrade leaves them empty and counts them)."""
    up = upgrade_document(json.loads(SMALL_V1.read_text()))
    assert up.computes == 1
    assert up.program == without_operands(load_program(ROOT / "examples" / "pipeline_small.json"))
    big = upgrade_document(_gz("matmul_reuse_mcast_wormhole.json.gz"))
    want = program_from_dict(_gz("matmul_reuse_mcast_wormhole.v2.json.gz"))
    assert big.computes == 320
    assert big.program == without_operands(want)
    mcasts = [op for ep in big.program.programs for op in walk(ep.ops) if isinstance(op, (McastSend, McastSetValid))]
    assert len(mcasts) == 20
    assert all(op.num_dests == len(big.program.groups[op.group].destinations()) for op in mcasts)
    assert sorted({op.num_dests for op in mcasts}) == [1, 7]


def test_cli_upgrade_refuses_compute_steps_without_operands_unless_asked(tmp_path: Path) -> None:
    """Format 1 named no operand pages: upgraded, a compute step reads none, so a compute before its wait would be
    proved (a new user's review). Refused by default, naming the count and the flag; nothing written."""
    out_path = tmp_path / "small.json"
    code, out, err = run(["upgrade", str(SMALL_V1), "-o", str(out_path)])
    assert (code, out) == (2, "")
    assert "1 compute step names no operand pages" in err
    assert "--without-operands" in err
    assert not out_path.exists()


def test_cli_upgrade_writes_a_program_that_loads_and_certifies(tmp_path: Path) -> None:
    out_path = tmp_path / "small.json"
    code, out, err = run(["upgrade", str(SMALL_V1), "-o", str(out_path), "--without-operands"])
    assert code == 0
    assert out == f"{SMALL_V1}: format 1 upgraded to version 2: {out_path}\n"
    assert err == (f"verispatial: {SMALL_V1}: 1 compute step got no operand pages (ins: []): format 1 did not name "
                   "them, so the checker does not check their reads (cb-read-unwaited) until they are named\n")
    assert loads(out_path.read_bytes()) == upgrade_document(json.loads(SMALL_V1.read_text())).program
    assert out_path.read_text() == dumps(loads(out_path.read_bytes()))
    code, out, _ = run(["certify", "--no-cache", "-q", str(out_path)])
    assert code == 0
    assert out.splitlines()[-1].startswith("verdict: proved")


@pytest.mark.parametrize(("edit", "message"), [
    # Marked version 2, a format-1 text is read as version 2: its first break of that version's schema is named.
    (lambda d: d.update(version=2), "programs[1].ops[0]: 'dtype' is a required property"),
    (lambda d: d.update(format="other"), "format: expected 'verispatial.program', got 'other'"),
    (lambda d: d["buffers"][0].update(capacity="4"), "buffers[0].capacity: '4' is not of type 'integer'"),
])
def test_cli_upgrade_refuses_what_is_not_a_format_1_program(tmp_path: Path, edit: Any, message: str) -> None:
    d = json.loads(SMALL_V1.read_text())
    edit(d)
    src, dest = tmp_path / "in.json", tmp_path / "out.json"
    src.write_text(json.dumps(d))
    code, out, err = run(["upgrade", str(src), "-o", str(dest)])
    assert (code, out) == (2, "")
    assert err == f"verispatial: error: {src}: {message}\n"
    assert not dest.exists()


def test_a_version_2_program_of_one_section_needs_no_upgrade(tmp_path: Path) -> None:
    """Version 2 is read as it is; ``upgrade`` writes a composed one in its templated form (version 3,
    tests/test_templated.py) and refuses, in one line, a program that has none."""
    src, dest = tmp_path / "in.json", tmp_path / "out.json"
    src.write_text(dumps(upgrade_document(json.loads(SMALL_V1.read_text())).program))
    code, out, err = run(["upgrade", str(src), "-o", str(dest)])
    assert (code, out) == (2, "")
    assert err == (f"verispatial: error: {src}: version: version 2 is read as it is; it has no templated form: a "
                   "templated program joins two sections or more\n")
    assert not dest.exists()


def test_an_upgraded_program_that_breaks_a_structural_rule_is_refused() -> None:
    d = json.loads(SMALL_V1.read_text())
    d["programs"][0]["ops"][0]["body"][0]["buf"] = 9  # a reserve on a buffer the program does not have
    with pytest.raises(InvalidProgram) as e:
        upgrade_document(d)
    assert [(v.entity, v.rule) for v in e.value.violations] == [
        ("program (0,0).reader ops[0].body[0] Reserve", "buffer 9 is not a buffer")]
