"""The gate, compile and --smt2 entry points of the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verispatial.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _small_proofs(tmp_path: Path) -> Path:
    d = tmp_path / "proofs"
    d.mkdir()
    for suffix in ("program.json", "certificate.json"):
        shutil.copy(ROOT / "proofs" / "examples" / f"pipeline_small.{suffix}", d / f"pipeline_small.{suffix}")
    return d


def test_gate_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _small_proofs(tmp_path)
    assert main(["gate", str(d), "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    # Without a manifest every program is expected to prove.
    name, verdict, outcome, count = out[2].split()[:4]
    proved, total = count.split("/")
    assert (name, verdict, outcome) == ("pipeline_small", "proved", "holds")
    assert proved == total
    assert int(total) > 20
    assert out[-1].startswith("gate: 1 passed, 0 failed in ")


def test_gate_reports_a_lost_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _small_proofs(tmp_path)
    cert = d / "pipeline_small.certificate.json"
    c = json.loads(cert.read_text())
    c["places"] = c["places"][:-1]
    cert.write_text(json.dumps(c))
    assert main(["gate", str(d), "-q"]) == 1
    assert ("LOST pipeline_small: lost proof in certificate: 1 obligations not proved: "
            "certificate/certificate:places (refuted)") in capsys.readouterr().out


def test_gate_bad_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err == f"verispatial: error: {tmp_path / 'nope'}: is not a directory of proofs\n"


def test_certify_writes_smt2(tmp_path: Path) -> None:
    out = tmp_path / "q"
    assert main(["certify", str(ROOT / "examples" / "pipeline_small.json"), "--smt2", str(out)]) == 0
    files = list(out.glob("*.smt2"))
    # The three buffers' balance needs no query (the launch's end resets them), nor does output coverage with constant
    # counts (its writes' tiles are enumerated). Exporting takes the reference route, so the two computes' unpacks
    # inside the ring are asked too, and each access from a pointer (two reads and a pack into the back, a write
    # from the front: cb-straddle's 6 ring queries, 2 unpack queries and 4 access queries), not decided by arithmetic.
    assert len(files) == 25
    assert sum("cb-straddle" in f.name for f in files) == 12
    assert all(f.read_text().startswith("; verispatial obligation ") for f in files)


def test_compile_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["compile", str(ROOT / "examples" / "models" / "mlp_block.json"), "--target", "blackhole",
               "--sections", str(tmp_path / "out"), "-q"])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "mlp_block: 3 sections on blackhole"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"{op}.{kind}.json" for op in ("down", "residual", "up") for kind in ("certificate", "program")]


def test_outputs_that_cannot_be_written_are_refused_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    readme = str(ROOT / "README.md")
    assert main(["certify", str(ROOT / "examples" / "pipeline_small.json"), "--smt2", readme]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {readme}: exists and is not a directory, expected a "
                                       "directory for the SMT-LIB2 queries\n")
    assert main(["compile", str(ROOT / "examples" / "models" / "mlp_block.json"), "--target", "wormhole",
                 "--sections", readme]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {readme}: exists and is not a directory, expected a "
                                       "directory for the sections\n")


@pytest.mark.parametrize(("field", "length", "expect"), [
    ("op", 300, "op #0 'up_zzz"),                 # the op's own name past NAME_MAX
    ("graph", 300, "graph 'mlp_block_zzz"),       # the graph's
    ("both", 200, "its section is named <graph>.<op>"),  # each fits, the section name does not
])
def test_a_graph_name_too_long_for_a_program_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          field: str, length: int, expect: str) -> None:
    """Found by the thorough fuzz run (seed 10): a 300-character op name compiled into a section program that
    validate refused (names at most 256 characters), a checker error (exit 4). Now the graph is refused."""
    import json

    g = json.loads((ROOT / "examples" / "models" / "mlp_block.json").read_text())
    if field in ("op", "both"):
        g["ops"][0]["name"] += "_" + "z" * ((length if field == "op" else 100) - len(g["ops"][0]["name"]) - 1)
    if field in ("graph", "both"):
        g["name"] += "_" + "z" * (length - len(g["name"]) - 1)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(g))
    rc = main(["compile", str(path), "--target", "wormhole", "--no-certify", "-q", "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.splitlines()) == 1
    assert expect in err
    assert "at most 256 characters" in err
    assert not (tmp_path / "o.json").exists()


def test_a_composed_programs_name_fits_whatever_its_output_is_called() -> None:
    """compose names the program after its last output tensor, ``<tensor>_<n>_sections``: cut to NAME_MAX."""
    import attrs

    from verispatial.ir import WriteTiles
    from verispatial.ir.limits import NAME_MAX
    from verispatial.ir.serialize import load_program
    from verispatial.ir.validate import validate
    from verispatial.passes import compose

    p = load_program(ROOT / "examples" / "pipeline_small.json")
    long = "y" * NAME_MAX
    out = next(t.name for t in p.tensors if t.role.value == "output")
    renamed = attrs.evolve(p, tensors=tuple(attrs.evolve(t, name=long) if t.name == out else t for t in p.tensors),
                           programs=tuple(attrs.evolve(ep, ops=tuple(
                               attrs.evolve(o, tensor=long) if isinstance(o, WriteTiles) and o.tensor == out else o
                               for o in ep.ops)) for ep in p.programs))
    q, _ = compose([renamed, renamed], target=p.target)
    assert len(q.name) <= NAME_MAX
    assert q.name == "y" * (NAME_MAX - len("_2_sections")) + "_2_sections"
    assert not [v for v in validate(q) if "name" in str(v)]
