"""What a tt-metal counterexample says about the user's source: a loop's iteration as the C++ variable's value (the
program's loop index named as such beside it), the line of a macro call as written in the file (not its expanded
tokens). The kernels are tests/data/ttmetal/copy's, edited in a temporary copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.cli import main  # noqa: E402

COPY = Path(__file__).resolve().parent / "data" / "ttmetal" / "copy"
READ = "        noc_async_read_tile(i, s, l1_write_addr);"


def _copy(tmp_path: Path, reader: tuple[str, str] | None = None, host: tuple[str, str] | None = None) -> Path:
    """tests/data/ttmetal/copy in ``tmp_path``/copy with one edit of the reader and one of the host."""
    root = tmp_path / "copy"
    shutil.copytree(COPY, root)
    for name, edit in (("reader.cpp", reader), ("host.yaml", host)):
        if edit is not None:
            text = (root / name).read_text()
            assert edit[0] in text, edit[0]
            (root / name).write_text(text.replace(edit[0], edit[1]))
    return root / "host.yaml"


#: core (1, 0) reads 8 tiles from tile 9 of a 16-tile tensor: its loop's 8th iteration (index 7) reads tile i = 16
PAST_END = ("num_tiles: 8, start_id: 8}", "num_tiles: 8, start_id: 9}")


def test_a_bounds_refutation_names_the_cxx_index_and_the_iteration(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``for (i = start_id; ...)`` with start_id 9: the refutation said ``at {'i': 7}`` (the program's loop index
    under the C++ variable's name, which is 16 there)."""
    host = _copy(tmp_path, host=PAST_END)
    assert main(["certify", "-q", str(host)]) == 1
    out = capsys.readouterr().out
    (head,) = [ln for ln in out.splitlines() if ln.startswith("refuted bounds/")]
    assert head.endswith("touches tiles [16, 17) of src, which has 16 tiles, at i = 16 (loop iteration i=7)"), head
    assert "{'i': 7}" not in out


def test_the_line_of_a_macro_call_is_shown_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = _copy(tmp_path, reader=(READ, "        READ_TILE(i);"), host=PAST_END)
    reader = host.parent / "reader.cpp"
    reader.write_text(reader.read_text().replace(
        '#include "api/dataflow/dataflow_api.h"\n',
        '#include "api/dataflow/dataflow_api.h"\n#define READ_TILE(t) noc_async_read_tile(t, s, l1_write_addr)\n'))
    assert main(["certify", "-q", str(host)]) == 1
    out = capsys.readouterr().out
    assert ":19:9: READ_TILE(i);" in out
    assert "noc_async_read_tile(i, s, l1_write_addr)" not in out
