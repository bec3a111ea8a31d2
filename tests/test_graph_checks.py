"""Model-graph checks that concern the graph as a whole: ops run in the order listed, so an activation is read only
after the op that writes it (a cycle is refused at its first read), every activation and output is written, and
the JSON reader refuses what program.json refuses (duplicate keys, directories, empty files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verispatial.cli import main
from verispatial.errors import ParseError
from verispatial.ir.graph import GraphBuilder, load_graph


def _two_relus(first: tuple[str, str], second: tuple[str, str], roles: dict[str, str]) -> GraphBuilder:
    b = GraphBuilder("g")
    for n in ("a", "b", "c"):
        b.tensor(n, [32, 64], role=roles.get(n, "activation"))
    b.unary("u1", "relu", *first)
    b.unary("u2", "relu", *second)
    return b


def test_a_cycle_is_refused_at_its_first_read() -> None:
    b = _two_relus(("a", "b"), ("b", "a"), {"c": "input"})
    with pytest.raises(ParseError) as e:
        b.build()
    assert str(e.value) == "op u1: reads activation 'a' before any op writes it (op 'u2' writes it later; ops run in " \
                           "the order listed)"


def test_reading_before_the_writer_runs_is_refused() -> None:
    b = _two_relus(("b", "c"), ("a", "b"), {"a": "input", "c": "output"})
    with pytest.raises(ParseError) as e:
        b.build()
    assert str(e.value) == "op u1: reads activation 'b' before any op writes it (op 'u2' writes it later; ops run in " \
                           "the order listed)"
    # In dataflow order the same graph is fine.
    _two_relus(("a", "b"), ("b", "c"), {"a": "input", "c": "output"}).build()


def test_an_activation_or_output_nobody_writes_is_refused() -> None:
    b = _two_relus(("a", "b"), ("b", "c"), {"a": "input"})
    b.tensor("spare", [32, 64], role="output")
    with pytest.raises(ParseError) as e:
        b.build()
    assert str(e.value) == "tensor spare: an output tensor is written by some op; none writes it"
    b = _two_relus(("a", "b"), ("c", "b"), {"a": "input"})
    with pytest.raises(ParseError) as e:
        b.build()
    assert str(e.value) == "op u2: reads activation 'c' before any op writes it (no op writes it)"


@pytest.mark.parametrize(("text", "message"), [
    ('{"name": "g", "name": "h", "tensors": [], "ops": []}',
     "(document): key 'name' appears twice in one object (readers disagree on which wins)"),
    ("", "the file is empty"),
    ('{"name": "g",', "(document): not valid JSON: Expecting property name enclosed in double quotes (line 1, column 14)"),
])
def test_graph_json_reader_refuses_like_the_program_reader(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "g.json"
    f.write_text(text)
    with pytest.raises(ParseError) as e:
        load_graph(f)
    assert str(e.value).removeprefix(f"{f}: ") == message


def test_compile_names_a_directory_and_a_duplicate_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(tmp_path), "--target", "wormhole"]) == 2
    assert capsys.readouterr().err == f"verispatial: error: {tmp_path}: is a directory, expected a model graph .json file\n"
    f = tmp_path / "dup.json"
    f.write_text(json.dumps({"name": "g"})[:-1] + ', "name": "h", "tensors": [], "ops": []}')
    assert main(["compile", str(f), "--target", "wormhole"]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {f}: (document): key 'name' appears twice in one object "
                                       "(readers disagree on which wins)\n")
