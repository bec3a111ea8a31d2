"""ttnn's SDPA decode (examples/ttmetal/sdpa_decode), its three kernels read from the pinned wheel in the smallest
configuration they support (one core, one KV chunk, one tile of heads): refuted, each finding at its vendor line and
replayed (notes.md); with the missing wait before the compute kernel's last pop, that finding is gone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal import EXAMPLES, _certify, _kernel, _refuted

HOST = EXAMPLES / "sdpa_decode" / "host.yaml"
COMPUTE = "ttnn/operations/transformer/sdpa_decode/device/kernels/compute/sdpa_flash_decode.cpp"
FINDINGS = [
    ("async-read-publish", "(0,0).writer", "ttnn/kernel/dataflow/generate_bcast_scalar.hpp", 28),
    ("async-read-publish", "(0,0).writer", "ttnn/kernel_lib/l1_helpers.hpp", 68),
    ("async-read-publish", "(0,0).writer", "ttnn/kernel_lib/reduce_helpers_dataflow.inl", 203),
    ("cb-pop-uncovered", "(0,0).compute", COMPUTE, 700),
    ("cb-write-unreserved", "(0,0).compute",
     "ttnn/operations/transformer/sdpa/device/kernels/compute/compute_common.hpp", 334),
]



def _findings(report: dict, root: Path | None = None) -> list[tuple[str, str, str, int]]:
    """(rule, engine, file, line) of each refutation, the file relative to the kernel root ``root`` (the report names
    a kernel file as the user opens it: absolute when outside the working directory, as the wheel's cache is)."""
    out = []
    for r in _refuted(report):
        c = r["counterexample"]
        assert c["replayed_by"], c  # every refutation is replayed by the interpreter
        file = c["source"]["file"]
        if root is not None and Path(file).is_absolute():
            file = Path(file).relative_to(root).as_posix()
        out.append((c["rule"], c["engine"], file, c["source"]["line"]))
    return sorted(out)


def test_sdpa_decode_as_shipped(ttnn_cpp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The five findings at their lines (notes.md), 45 obligations proved; the one failed-to-prove is a consequence
    of them, never a pass."""
    rc, report = _certify(HOST, capsys)
    assert rc == 1
    assert _findings(report, ttnn_cpp) == FINDINGS
    assert sum(r["verdict"] == "proved" for r in report["results"]) == 45
    assert sum(r["verdict"] == "failed-to-prove" for r in report["results"]) == 1


def test_a_wait_before_the_last_pop_removes_that_finding(ttnn_cpp: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``CircularBuffer(cb_prev_max).pop_front(Sq_chunk_t)`` (:700) with the ``wait_front`` it lacks before it: the
    other four findings stay, cb-pop-uncovered is proved."""
    lines = (ttnn_cpp / COMPUTE).read_text().splitlines(keepends=True)
    assert "CircularBuffer(cb_prev_max).pop_front(Sq_chunk_t);" in lines[699]
    lines.insert(699, "            CircularBuffer(cb_prev_max).wait_front(Sq_chunk_t);\n")
    (tmp_path / "compute.cpp").write_text("".join(lines))
    d = yaml.safe_load(HOST.read_text())
    d["kernel_root"] = str(ttnn_cpp)
    d["include_dirs"] = [str(ttnn_cpp / Path(COMPUTE).parent)]
    _kernel(d, "compute")["source"] = os.path.relpath(tmp_path / "compute.cpp", ttnn_cpp)
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump(d))
    rc, report = _certify(fixed, capsys)
    assert rc == 1
    assert [f[:2] for f in _findings(report)] == [f[:2] for f in FINDINGS if f[0] != "cb-pop-uncovered"]
