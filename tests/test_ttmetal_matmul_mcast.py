"""ttnn's 2D-multicast matmul (examples/ttmetal/matmul_2d_mcast), read from the pinned wheel's Metal 2.0 kernels:
the in1 receiver writer's semaphore increments are left unacknowledged at kernel end (refuted, replayed), and the
same kernel with the atomic barrier its siblings issue proves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal import EXAMPLES, _certify, _kernel, _refuted

HOST = EXAMPLES / "matmul_2d_mcast" / "host.yaml"
RECEIVER = "ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout_in1_receiver_writer_padding_metal2.cpp"



def test_in1_receiver_ends_with_its_atomics_pending(ttnn_cpp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each in1 receiver (row 1) tells its sender ``sender_sem.up(...)`` per block, a non-posted NoC atomic, and
    ends with no atomic barrier (the in0 receiver ends with one, :104 of its file; the in1 sender's comment cites
    tt-metal #53329 for the same rule): ``async-pending-at-end`` on both, at the increment's line; nothing else."""
    rc, report = _certify(HOST, capsys)
    assert rc == 1
    refuted = _refuted(report)
    assert sorted((r["counterexample"]["rule"], r["counterexample"]["engine"]) for r in refuted) == [
        ("async-pending-at-end", "(0,1).writer"), ("async-pending-at-end", "(1,1).writer")]
    assert {r["counterexample"]["outstanding"][0]["source"]["line"] for r in refuted} == {135}
    assert sum(r["verdict"] == "proved" for r in report["results"]) == 88


def test_in1_receiver_with_an_atomic_barrier_proves(ttnn_cpp: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The receiver as shipped plus ``noc.async_atomic_barrier();`` before its end: the whole program proves."""
    text = (ttnn_cpp / RECEIVER).read_text()
    end = text.rstrip().rfind("}")
    (tmp_path / "receiver.cpp").write_text(text[:end] + "    noc.async_atomic_barrier();\n}\n")
    d = yaml.safe_load(HOST.read_text())
    d["kernel_root"] = str(ttnn_cpp)
    d["include_dirs"] = [str(ttnn_cpp / Path(RECEIVER).parent)]
    _kernel(d, "in1_receiver_writer")["source"] = os.path.relpath(tmp_path / "receiver.cpp", ttnn_cpp)
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump(d))
    rc, report = _certify(fixed, capsys)
    assert rc == 0, _refuted(report)
