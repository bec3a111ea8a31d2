"""``verispatial compile`` (verispatial/cli/compile.py): the shipped model graphs compile for Wormhole and Blackhole
into sections that all prove, the written certificate is the one ``certify --certificate`` accepts, a refusal
exits 2 naming the pass, the op and the reason, and bad input exits 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verispatial.cli import main as cli_main
from verispatial.cli.compile import ACC_FORMS
from verispatial.ir.serialize import load_program

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"


def run_compile(argv: list[str]) -> int:
    """``verispatial compile ARGV...``: its exit code."""
    return cli_main(["compile", *argv])


@pytest.mark.parametrize("target", ["wormhole", "blackhole"])
def test_mlp_block_compiles_and_every_section_proves(target: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rc = run_compile([str(MODELS / "mlp_block.json"), "--target", target, "--sections", str(tmp_path), "--progress"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    lines = out.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["up", "down", "residual", "mlp_block"]
    assert all("proved in" in ln for ln in lines[:3])
    assert lines[0].startswith("up: matmul, 48 engine programs, ")
    assert lines[2].startswith("residual: binary, 24 engine programs, 192 ops, ")
    assert "[1/3] up: compile" in err
    for op in ("up", "down", "residual"):
        prog = load_program(tmp_path / f"{op}.program.json")
        assert prog.name == f"mlp_block.{op}"
        cert = json.loads((tmp_path / f"{op}.certificate.json").read_text())
        assert [f["pass"] for f in cert["passes"]] == ["lower", "tile", "place", "size", "synthesize-handshakes",
                                                       "persist"]
        assert cert["places"]


def test_written_certificate_is_accepted_by_certify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = json.loads((MODELS / "mlp_block.json").read_text())
    g["ops"] = g["ops"][2:]
    # Without the ops that wrote them, the residual's operands come from outside (inputs); the tensors only those
    # ops used are gone.
    used = {n for o in g["ops"] for n in (*o["inputs"], o["output"])}
    g["tensors"] = [t for t in g["tensors"] if t["name"] in used]
    for t in g["tensors"]:
        if t["role"] == "activation":
            t["role"] = "input"
    model = tmp_path / "residual.json"
    model.write_text(json.dumps(g))
    assert run_compile([str(model), "--target", "wormhole", "--sections", str(tmp_path / "out"), "-q"]) == 0
    assert capsys.readouterr().err == ""
    d = tmp_path / "out"
    rc = cli_main(["certify", str(d / "residual.program.json"), "--certificate", str(d / "residual.certificate.json"),
                   "--json", "-q"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert {r["name"]: r["verdict"] for r in report["results"] if r["family"] == "certificate"} == {
        "certificate:places": "proved", "certificate:obligations": "proved", "certificate:witnesses": "proved"}


def test_refusal_exits_2_naming_pass_op_and_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "big.json"
    model.write_text(json.dumps({
        "format": "verispatial.graph", "version": 1, "name": "big",
        "tensors": [{"name": "a", "shape": [32672, 64], "dtype": "bf16", "role": "input"},
                    {"name": "w", "shape": [64, 32], "dtype": "bf16", "role": "param"},
                    {"name": "o", "shape": [32672, 32], "dtype": "bf16", "role": "output"}],
        "ops": [{"name": "mm", "kind": "matmul", "inputs": ["a", "w"], "output": "o"}]}))
    rc = run_compile([str(model), "--target", "blackhole", "-q"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert err == (f"verispatial: error: {model}: pass 'tile' refused: op 'mm' (matmul): "
                   "per-site block 1021x1 tiles on a 1x1 grid (K 2 tiles) "
                   "needs 6277120 B of local memory at the smallest K block; target blackhole has 1469152 B usable\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.json", "--target", "wormhole"], "verispatial: error: missing.json: no such file\n"),
    ([str(MODELS / "mlp_block.json"), "--target", "tpu"],
     f"verispatial: error: {MODELS / 'mlp_block.json'}: target: unknown target 'tpu'; known: blackhole, gpu_sm80, "
     "wormhole_b0\n"),
])
def test_bad_input_exits_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_compile(argv) == 2
    assert capsys.readouterr().err == message


def test_tile_caps_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(MODELS / "qwen2_5_0_5b_decode.json")
    assert run_compile([model, "--target", "blackhole", "--max-cols", "2", "--max-rows", "2", "--max-sites", "4",
                        "--no-certify", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("attn_norm: rmsnorm, 3 engine programs, 68 ops, ")
    assert lines[1].startswith("q_proj: matmul, 6 engine programs, 162 ops, ")
    assert lines[1].endswith("not certified in 0.00 s")
    assert lines[-1] == "qwen2_5_0_5b_decode: 15 sections on blackhole"
    # On one site the MLP's gate/up projections run as two items each (persist's item loop) instead of refusing.
    llama = str(MODELS / "llama3_2_1b_decode.json")
    assert run_compile([llama, "--target", "blackhole", "--max-cols", "1", "--max-rows", "1", "--max-sites", "1",
                        "--no-certify", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[10].startswith("gate_proj: matmul, 3 engine programs, 73 ops, ")
    assert run_compile([model, "--target", "blackhole", "--max-sites", "0"]) == 2
    assert capsys.readouterr().err == "verispatial: error: --max-cols, --max-rows and --max-sites take a positive number\n"


def test_acc_form_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(MODELS / "mlp_block.json")
    assert run_compile([model, "--target", "wormhole", "--max-cols", "1", "--max-rows", "1", "--max-sites", "1",
                        "--acc-form", "pack_accumulate", "--sections", str(tmp_path), "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["up", "down", "residual", "mlp_block"]
    assert all("proved in" in ln for ln in lines[:3])
    cert = json.loads((tmp_path / "up.certificate.json").read_text())
    assert cert["passes"][1]["plan"]["form"] == "pack_accumulate"
    assert run_compile([model, "--target", "gpu", "--acc-form", "in_place", "--no-certify", "-q"]) == 2
    assert capsys.readouterr().err == (
        f"verispatial: error: {model}: pass 'tile' refused: op 'up' (matmul): accumulation form in_place cannot "
        "apply: target gpu_sm80 cannot spill the accumulator\n")
    assert run_compile([model, "--target", "gpu", "--acc-form", "fastest"]) == 2


def test_one_mover_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(MODELS / "mlp_block.json")
    caps = ["--max-cols", "2", "--max-rows", "2", "--max-sites", "4", "-q"]
    assert run_compile([model, "--target", "wormhole", "--one-mover", "--sections", str(tmp_path), *caps]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Two engine programs per site (mover, compute) on the 2x2 grid, every section proved.
    assert [ln.split(",")[1] for ln in lines[:-1]] == [" 8 engine programs"] * 3
    assert all(" proved in " in ln for ln in lines[:-1])
    up = load_program(tmp_path / "up.program.json")
    assert sorted({ep.engine.value for ep in up.programs}) == ["compute", "reader"]
    # A scatter cannot share one mover: refused by name, exit 2.
    decode = str(MODELS / "llama3_2_1b_decode.json")
    assert run_compile([decode, "--target", "wormhole", "--one-mover", "--no-certify", *caps]) == 2
    assert capsys.readouterr().err.startswith(
        f"verispatial: error: {decode}: pass 'place' refused: op 'k_cache_update' (scatter): a gather or scatter "
        "cannot share one data-movement engine")


def test_a_refusal_comes_before_any_certify_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The decode layer's scatter cannot run on one mover: refused at compile time, before any section is certified,
    # and the output directory is never created (stderr is not a terminal: a plain progress line per section
    # compiled, then one error line; no section reached certify).
    out = tmp_path / "out"
    decode = str(MODELS / "llama3_2_1b_decode.json")
    assert run_compile([decode, "--target", "wormhole", "--one-mover", "--sections", str(out), "-o",
                        str(tmp_path / "step.json")]) == 2
    *lines, last = capsys.readouterr().err.splitlines()
    assert last.startswith(f"verispatial: error: {decode}: pass 'place' refused: op 'k_cache_update' (scatter): ")
    assert lines[0].startswith(f"compile {decode}: [1/15] attn_norm: compile (")
    assert all(ln.startswith(f"compile {decode}: [") and ": compile (" in ln for ln in lines)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # neither the sections nor the composed program


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(MODELS / "mlp_block.json")
    assert run_compile([model, "--target", "wormhole", "--acc-form", "bogus"]) == 2
    assert capsys.readouterr().err == (
        "verispatial: error: --acc-form: 'bogus' is not one of 'single', 'streaming', 'spill_reload', 'in_place', "
        "'pack_accumulate', 'registers'.\n")
    assert run_compile([model]) == 2
    assert capsys.readouterr().err == "verispatial: error: --target: missing (required)\n"
    assert run_compile([]) == 2
    assert capsys.readouterr().err == "verispatial: error: MODEL.json: missing (required)\n"
    assert run_compile([model, "--target", "wormhole", "--max-cols", "x"]) == 2
    assert capsys.readouterr().err == "verispatial: error: --max-cols: 'x' is not a valid integer.\n"


def test_compile_writes_one_composed_program_and_its_certificate_for_gate(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proofs" / "mlp.program.json"
    out.parent.mkdir()
    rc = run_compile([str(MODELS / "mlp_block.json"), "--target", "wormhole", "--max-cols", "1", "--max-rows", "1",
                      "--max-sites", "1", "-o", str(out), "--sections", str(tmp_path / "secs"), "-q"])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert lines[3].startswith("out_3_sections: composed, 3 sections, 3 engine programs, 150 ops, composed in ")
    assert " proved in " in lines[3]
    assert lines[-1] == "mlp_block: 3 sections on wormhole_b0"
    prog = load_program(out)
    assert [s.name for s in prog.sections] == ["mlp_block.up", "mlp_block.down", "mlp_block.residual"]
    cert = json.loads((tmp_path / "proofs" / "mlp.certificate.json").read_text())
    assert cert["compose"]["pass"] == "compose"
    # The templated form (format version 3): each distinct section's obligations once, every section naming its own.
    assert cert["version"] == 4
    assert [len(t["obligations"]) > 0 for t in cert["compose"]["templates"]] == [True, True, True]
    assert [s["template"] for s in cert["compose"]["sections"]] == [0, 1, 2]
    assert sorted(cert["passes"]) == ["down", "residual", "up"]
    assert sorted(p.name for p in (tmp_path / "secs").iterdir()) == [
        f"{op}.{kind}.json" for op in ("down", "residual", "up") for kind in ("certificate", "program")]
    # gate re-certifies exactly what compile wrote: the composed program and, in the same layout, the sections.
    assert cli_main(["gate", str(out.parent), "-q"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[2].split()[:3] == ["mlp", "proved", "holds"]
    assert table[-1].startswith("gate: 1 passed, 0 failed in ")
    assert cli_main(["gate", str(tmp_path / "secs"), "-q"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("gate: 3 passed, 0 failed in ")


def test_recompiling_into_a_sections_directory_replaces_what_it_holds(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    secs = tmp_path / "secs"
    secs.mkdir()
    (secs / "stale.program.json").write_text("{}")
    (secs / "stale.certificate.json").write_text("{}")
    caps = ["--max-cols", "1", "--max-rows", "1", "--max-sites", "1", "--no-certify", "-q"]
    assert run_compile([str(MODELS / "mlp_block.json"), "--target", "wormhole", "--sections", str(secs), *caps]) == 0
    assert sorted(p.name for p in secs.iterdir()) == [
        f"{op}.{kind}.json" for op in ("down", "residual", "up") for kind in ("certificate", "program")]
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no temporary directory left behind
    capsys.readouterr()
    # A directory holding anything compile did not write is never replaced: refused before any work.
    (secs / "notes.txt").write_text("mine")
    assert run_compile([str(MODELS / "mlp_block.json"), "--target", "wormhole", "--sections", str(secs), *caps]) == 2
    assert capsys.readouterr().err == (
        f"verispatial: error: {secs}: holds files compile did not write (notes.txt): expected a sections directory "
        "(only <op>.program.json and <op>.certificate.json) or a new one\n")
    assert (secs / "notes.txt").read_text() == "mine"


def test_compile_output_path_that_is_a_directory_is_refused_before_any_work(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert run_compile([str(MODELS / "mlp_block.json"), "--target", "wormhole", "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {tmp_path}: is a directory, expected a file path for the "
                                       "program\n")
    assert run_compile([str(MODELS / "mlp_block.json"), "--target", "wormhole", "-o",
                        str(tmp_path / "no" / "step.json")]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {tmp_path / 'no' / 'step.json'}: cannot write: "
                                       f"directory {str(tmp_path / 'no')!r} does not exist\n")


def test_the_acc_forms_offered_are_the_ones_tile_knows() -> None:
    """``--acc-form``'s choices are spelled in the CLI (``--help`` does not load the IR's graph modules): the same
    forms, in the same order, as ``AccForm``."""
    from verispatial.ir.section import AccForm

    assert tuple(ACC_FORMS) == tuple(f.value for f in AccForm)
