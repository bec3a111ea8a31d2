"""Two data-movement kernels of one core on one NoC (tt-metal front end, host descriptions).

In the dedicated-NoC mode every tt-metal data-movement kernel runs in, a barrier compares the NoC interface's counter
of responses received (``NIU_MST_RD_RESP_RECEIVED``, ``NIU_MST_WR_ACK_RECEIVED``: one per NoC of the core) with the
calling processor's own count of what it issued (``noc_reads_num_issued[noc]``, ``noc_nonposted_writes_acked[noc]``;
ttnn 0.81.1 ``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc_nonblocking_api.h:450-452``, ``:593-595``). Two kernels
of one core on one NoC count each other's transfers in the other's barrier, and tt-metal's host refuses to build such
a program: "Illegal NOC usage: data movement kernels on logical core {} cannot use the same NOC, doing so results in
hangs!" (``ttnn/build/lib/libtt_metal.so``). The reading proved the copy host with its reader moved onto the writer's
NoC 0 (every transfer a single processor's own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_host_badinput import bad, host
from verispatial.cli import main

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

_READER = "processor: reader, noc: 1"


@pytest.mark.parametrize(("edit", "noc"), [
    ((_READER, "processor: reader, noc: 0"), 0),
    (("processor: writer, noc: 0", "processor: writer, noc: 1"), 1),
    # a reader that gives no NoC is on NoC 0, a writer on NoC 1 (ReaderDataMovementConfig, WriterDataMovementConfig)
    ((_READER, "processor: reader"), 0),
    (("processor: writer, noc: 0", "processor: writer"), 1),
], ids=["both-0", "both-1", "reader-default", "writer-default"])
def test_two_data_movement_kernels_of_a_core_on_one_noc_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    edit: tuple[str, str], noc: int) -> None:
    path = host(tmp_path, edit)
    out = tmp_path / "o.json"
    err = bad(["certify", str(path), "--write-certificate", str(out)], capsys)
    assert err == (f"verispatial: error: {path}: work_units[0].kernels: core (0,0) runs 'reader' and 'writer' on NoC "
                   f"{noc}: the data-movement kernels of a core must use different NoCs (a barrier compares the NoC's "
                   "counters, which both kernels' transfers move, with its own kernel's count; tt-metal refuses it: "
                   "'data movement kernels on logical core ... cannot use the same NOC, doing so results in hangs')\n")
    assert not out.exists()


def _edited(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    path = host(tmp_path)
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return path


_WRITER = "processor: writer, noc: 0"


@pytest.mark.parametrize("edits", [
    (),  # reader on NoC 1, writer on NoC 0
    (("processor: compute, compile_time_args", "processor: compute, noc: 0, compile_time_args"),),  # never issues
    ((_READER, "processor: reader, noc: 0"), (_WRITER, "processor: writer, noc: 1")),
    # neither names one: the reader's is 0 and the writer's 1, as ReaderDataMovementConfig and
    # WriterDataMovementConfig give them
    ((_READER, "processor: reader"), (_WRITER, "processor: writer")),
], ids=["shipped", "compute-on-the-writers-noc", "swapped", "defaults"])
def test_data_movement_kernels_on_different_nocs_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          edits: tuple[tuple[str, str], ...]) -> None:
    assert main(["certify", str(_edited(tmp_path, *edits)), "-q", "--no-cache"]) == 0
    capsys.readouterr()
