"""``verispatial compose`` (verispatial/cli/compose.py): programs users wrote themselves joined into one,
certified and written with their certificate; every refusal exits 2 with one line naming the rule."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from builders import chain, copy_section

from verispatial.cli import main
from verispatial.cli.compose import PLACEMENTS
from verispatial.ir import Loop, Site
from verispatial.ir.serialize import dumps, load_program

S0, S1 = Site(0, 0), Site(1, 0)


def write(tmp_path: Path, *programs: object) -> list[str]:
    paths = []
    for i, p in enumerate(programs):
        f = tmp_path / f"s{i}.json"
        f.write_text(dumps(p) + "\n")  # type: ignore[arg-type]
        paths.append(str(f))
    return paths


def test_compose_joins_certifies_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = write(tmp_path, *chain(S0, S1, S0))
    out = tmp_path / "joined.json"
    assert main(["compose", *paths, "-o", str(out), "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"{paths[0]}: copy0, 2 engine programs, proved in " + lines[0].split(" in ")[1],
                         f"{paths[1]}: copy1, 2 engine programs, proved in " + lines[1].split(" in ")[1],
                         f"{paths[2]}: copy2, 2 engine programs, proved in " + lines[2].split(" in ")[1]]
    assert lines[3].startswith("Y_3_sections: 3 sections, 4 engine programs, composed in ")
    assert " proved in " in lines[3]
    p = load_program(out)
    assert [s.barrier_after for s in p.sections] == [True, True, False]
    cert = json.loads((tmp_path / "joined.certificate.json").read_text())
    assert cert["compose"]["rendezvous"]["boundaries"][0]["ops"] == 2 * 4 + 2 + 1
    capsys.readouterr()
    assert main(["certify", str(out), "--certificate", str(tmp_path / "joined.certificate.json")]) == 0


def test_state_placement_and_open_boundaries_from_the_command_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from verispatial.ir import Role

    secs = [copy_section("read_s", S0, "S", "A", init="zeros"), copy_section("y", S0, "Y", "B"),
            copy_section("write_s", S0, "A", "S", dst_role=Role.STATE)]
    paths = write(tmp_path, *secs)
    out = tmp_path / "o.json"
    assert main(["compose", *paths, "-o", str(out), "--state", "S", "--placement", "round_robin", "--open", "0",
                 "-q"]) == 0
    p = load_program(out)
    assert p.tensor("S").role.value == "state"
    assert [b.site for b in p.buffers] == [Site(0, 0), Site(1, 0), Site(2, 0)]
    assert [s.barrier_after for s in p.sections] == [False, True, False]
    capsys.readouterr()


@pytest.mark.parametrize(("argv", "line"), [
    (["--open", "5"], "verispatial: error: --open: boundary 5 does not exist: 2 sections have boundaries 0..0\n"),
    (["--placement", "spiral"], "verispatial: error: --placement: 'spiral' is not one of 'stacked', 'round_robin'.\n"),
    (["--open", "x"], "verispatial: error: --open: 'x' is not a valid integer.\n"),
    (["--state", "nope"], "verispatial: error: compose: unknown-state: carried state 'nope' is not a tensor of any "
                          "section\n"),
])
def test_refusals_exit_2_with_one_line(argv: list[str], line: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    paths = write(tmp_path, *chain(S0, S1))
    assert main(["compose", *paths, "-o", str(tmp_path / "o.json"), "-q", *argv]) == 2
    assert capsys.readouterr().err == line
    assert not (tmp_path / "o.json").exists()


def test_a_tensor_conflict_exits_2_naming_the_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Section b declares A with twice the rows; its output Y keeps a's shape, so b certifies on its own (every tile of
    # Y is written: output-unwritten) and compose refuses the tensor conflict, not the section.
    b = copy_section("b", S0, "A", "Y", rows=64)
    b = attrs.evolve(b, tensors=(b.tensors[0], attrs.evolve(b.tensors[1], shape=(32, b.tensors[1].shape[1]))))
    paths = write(tmp_path, copy_section("a", S0, "X", "A"), b)
    assert main(["compose", *paths, "-o", str(tmp_path / "o.json"), "-q"]) == 2
    assert capsys.readouterr().err == ("verispatial: error: compose: tensor-conflict: tensor 'A': section 0 declares "
                                       "[32, 64] bf16, section 1 [64, 64] bf16 (the shapes differ)\n")


def test_an_input_that_does_not_certify_is_refused_naming_the_section(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    good = copy_section("a", S0, "X", "A")
    # The writer no longer pops what it waited for: the buffer never drains (refuted on its own).
    writer = good.programs[1]
    loop = writer.ops[0]
    assert isinstance(loop, Loop)
    body = loop.body[:-1]
    broken = attrs.evolve(good, name="broken", programs=(good.programs[0], attrs.evolve(
        writer, ops=(attrs.evolve(loop, body=body),))))
    paths = write(tmp_path, good, broken)
    assert main(["compose", *paths, "-o", str(tmp_path / "o.json"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"verispatial: error: compose: section-not-certified: section 1 ({paths[1]}) does not "
                          "certify on its own: ")
    assert err.count("\n") == 1


def test_bad_input_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = write(tmp_path, *chain(S0, S1))
    missing = str(tmp_path / "missing.json")
    assert main(["compose", paths[0], missing, "-o", str(tmp_path / "o.json")]) == 2
    assert capsys.readouterr().err == f"verispatial: error: {missing}: no such file\n"
    assert main(["compose", *paths, "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"verispatial: error: {tmp_path}: is a directory, expected a file path for the " \
                                      "program\n"
    assert main(["compose", *paths]) == 2
    assert capsys.readouterr().err == "verispatial: error: -o/--out: missing (required)\n"
    assert main(["compose", "-o", str(tmp_path / "o.json")]) == 2
    assert capsys.readouterr().err == "verispatial: error: SECTION.json...: missing (required)\n"


def test_a_composition_that_does_not_prove_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two copies of ``pipeline_small`` run side by side (boundary 0 open) both write C: refuted (a write-write race),
    and neither the program nor a certificate is written — a certificate exists for proved programs only. With
    ``--no-certify`` the program is written with compose's fragment."""
    src = str(Path(__file__).resolve().parent.parent / "examples" / "pipeline_small.json")
    out = tmp_path / "c.json"
    argv = ["compose", "-q", src, src, "--placement", "round_robin", "--open", "0", "-o", str(out)]
    assert main(argv) == 1
    said = capsys.readouterr().out
    assert "REFUTED" in said
    assert f"nothing written to {out}" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert main([*argv, "--no-certify"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.certificate.json", "c.json"]


def test_the_placements_offered_are_the_ones_compose_knows() -> None:
    """``--placement``'s choices are spelled in the CLI (``--help`` does not load the passes): the same as the pass's."""
    from verispatial.passes.compose import PLACEMENTS as KNOWN

    assert tuple(PLACEMENTS) == tuple(KNOWN)
