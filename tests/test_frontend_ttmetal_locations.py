"""What a tt-metal counterexample says about the user's source: a loop's iteration as the C++ variable's value (the
program's loop index named as such beside it), the line of a macro call as written in the file (not its expanded
tokens). The kernels are tests/data/ttmetal/copy's, edited in a temporary copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.cli import main

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


def shown(full: Path) -> str:
    """A kernel file as reports print it: relative to the working directory when under it, else absolute."""
    full = full.resolve()
    try:
        return full.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(full)


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


def test_a_runtime_arg_the_host_leaves_out_names_the_host_field(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A work unit without ``num_tiles`` for its reader was refused at the kernel's line naming the core only: the
    refusal names the host field to add too."""
    host = _copy(tmp_path, host=("reader: {src_addr: {tensor: src}, num_tiles: 8, start_id: 8}",
                                 "reader: {src_addr: {tensor: src}, start_id: 8}"))
    assert main(["certify", "-q", str(host)]) == 2
    err = capsys.readouterr().err
    assert "runtime arg the host gives no value" in err
    assert f"{host}: work_units[1].runtime_args.reader.num_tiles is missing" in err


def _kernel_root_elsewhere(tmp_path: Path, host_edit: tuple[str, str]) -> tuple[Path, Path]:
    """The copy's kernels under ``tmp_path``/kernels, its host in ``tmp_path``/hosts naming them by ``kernel_root``;
    returns (host, kernels)."""
    host = _copy(tmp_path, host=host_edit)
    kernels, hosts = tmp_path / "kernels", tmp_path / "hosts"
    host.parent.rename(kernels)
    hosts.mkdir()
    text = (kernels / "host.yaml").read_text().replace("name: copy\n", f"name: copy\nkernel_root: {kernels}\n", 1)
    (hosts / "host.yaml").write_text(text)
    return hosts / "host.yaml", kernels


@pytest.mark.parametrize("cwd", ["inside", "outside"])
def test_kernel_paths_are_printed_as_the_user_can_open_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str], cwd: str) -> None:
    """Kernel paths were printed relative to the host's kernel_root (``reader.cpp:19``), which opens from nowhere
    but that directory: relative to the working directory when the kernel is under it, else absolute; the SARIF log
    points at the same file."""
    import json

    host, kernels = _kernel_root_elsewhere(tmp_path, PAST_END)
    here = tmp_path if cwd == "inside" else tmp_path / "hosts"
    monkeypatch.chdir(here)
    expected = "kernels/reader.cpp" if cwd == "inside" else str(kernels / "reader.cpp")
    assert shown(kernels / "reader.cpp") == expected
    sarif = tmp_path / "r.sarif"
    assert main(["certify", "-q", str(host), "--sarif", str(sarif)]) == 1
    out = capsys.readouterr().out
    assert f"    at {expected}:18:9: noc_async_read_tile(i, s, l1_write_addr);" in out
    (res,) = [r for r in json.loads(sarif.read_text())["runs"][0]["results"] if r["ruleId"] == "bounds"]
    log = json.loads(sarif.read_text())["runs"][0]
    art = res["locations"][0]["physicalLocation"]["artifactLocation"]
    base = log["originalUriBaseIds"].get(art["uriBaseId"], {}).get("uri", "")
    assert (base + art["uri"]).endswith("kernels/reader.cpp")
    # a refusal at a kernel line names the kernel the same way
    host, kernels = _kernel_root_elsewhere(tmp_path / "r", ("reader: {src_addr: {tensor: src}, num_tiles: 8, start_id: 8}",
                                                          "reader: {src_addr: {tensor: src}, start_id: 8}"))
    assert main(["certify", "-q", str(host)]) == 2
    err = capsys.readouterr().err
    expected = "r/kernels/reader.cpp" if cwd == "inside" else str(kernels / "reader.cpp")
    assert f"verispatial: error: {expected}:7: " in err
