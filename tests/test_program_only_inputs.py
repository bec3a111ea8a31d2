"""Commands that read program.json documents only (``compose``, ``validate``, ``simulate``, ``throughput``,
``export``, ``upgrade``) given a source a front end reads — a tt-metal host description or a TT-Lang source — name
the document, say what the command takes and which command turns that source into a program. (A new user's find:
``compose host.yaml`` said "not valid JSON" and nothing else.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from verispatial.cli import main

HOST = "tests/data/ttmetal/copy/host.yaml"
TTLANG = "tests/data/ttlang/eltwise.py"


def _argv(command: str, path: str, out: Path) -> list[str]:
    return {
        "compose": ["compose", "examples/local_copy.json", path, "-o", str(out)],
        "validate": ["validate", path],
        "simulate": ["simulate", path],
        "throughput": ["throughput", path],
        "export": ["export", "--dot", path, "-o", str(out)],
        "upgrade": ["upgrade", path, "-o", str(out)],
    }[command]


@pytest.mark.parametrize("command", ["compose", "validate", "simulate", "throughput", "export", "upgrade"])
@pytest.mark.parametrize(("path", "what", "fix"), [
    (HOST, "a tt-metal host description", f"verispatial import ttmetal {HOST} -o PROGRAM.json"),
    (TTLANG, "a TT-Lang source", f"verispatial import ttlang {TTLANG} -o PROGRAM.json"),
])
def test_a_source_given_to_a_program_only_command_names_the_import(
        command: str, path: str, what: str, fix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    assert main(_argv(command, path, out)) == 2
    err = capsys.readouterr().err
    assert err == (f"verispatial: error: {path}: {what}, not a program.json document: verispatial {command} takes "
                   f"program.json documents only; import it first: {fix}\n")
    assert list(tmp_path.iterdir()) == []


def test_json_that_is_not_a_source_still_says_what_is_wrong_with_it(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A ``.json`` file that is not valid JSON keeps the parser's message: the suffix says it is meant as a program."""
    bad = tmp_path / "p.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["validate", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
