"""The compute API's tilize and untilize block calls (verispatial/frontends/ttmetal/tilize.py): each read into the ops
the wheel's headers issue (api/compute/tilize.h, pack_untilize.h) — per DST section an acquire, the unpack of the
input's front pages, the pack into the output's back, a release — or refused by name at its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import AcquireAcc, Compute, Operand, PackAcc, ReleaseAcc
from verispatial.ir.program import walk

#: the program's buffer ids of c_0 and c_16 (ids are dense, in the host's order)
IN, OUT = 0, 1


def _compute(tmp_path: Path, *body: str, target: str = "wormhole_b0", fp32: bool = False) -> Any:
    """The compute engine's program of ``body`` (c_0 and c_16: 32 pages of one bf16 tile; runtime arg 0, ``n``, a
    value in 1..8 known only at run time)."""
    (tmp_path / "compute.cpp").write_text("\n".join(['#include "api/compute/tilize.h"',
                                                     '#include "api/compute/pack_untilize.h"',
                                                     "void kernel_main() {", *body, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "tilize", "kernel_root": str(tmp_path),
            "target": target, "tensors": [],
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 32, "data_format": "bf16"}
                        for n, i in (("in", 0), ("out", 16))],
            "kernels": [{"name": "compute", "source": "compute.cpp", "processor": "compute",
                         "fp32_dest_acc_en": fp32, "runtime_args": ["n"]}],
            "work_units": [{"cores": "0,0", "kernels": ["compute"], "runtime_args": {"compute": {"n": "1..8"}}}]}
    (tmp_path / "host.json").write_text(json.dumps(host))
    return import_host(tmp_path / "host.json").programs[0]


def _dst_ops(ep: Any) -> list[Any]:
    return [op for op in walk(ep.ops) if isinstance(op, (AcquireAcc, Compute, PackAcc, ReleaseAcc))]


def _around(call: str, tiles: int = 4) -> tuple[str, ...]:
    """``call`` between the waits and reserves a tilize of ``tiles`` tiles needs (the call on line 6)."""
    return (f"    cb_wait_front(0, {tiles});", f"    cb_reserve_back(16, {tiles});", f"    {call}",
            f"    cb_push_back(16, {tiles});", f"    cb_pop_front(0, {tiles});")


def test_tilize_block_is_a_dst_section_per_tile(tmp_path: Path) -> None:
    """tilize.h:160-182: per tile, acquire, unpack-tilize and copy into DST 0, pack at the tile's index, release."""
    ops = _dst_ops(_compute(tmp_path, *_around("tilize_block(0, 4, 16);")))
    section = [AcquireAcc(1, "bf16"), Compute("tilize", 1, (Operand(IN, 4),)), PackAcc(OUT, 1), ReleaseAcc()]
    assert ops == section * 4


@pytest.mark.parametrize(("target", "fp32", "block", "sections"), [
    # Wormhole: dest-sized sections, the last two split evenly (tilize.h:371-433)
    ("wormhole_b0", False, 20, [8, 6, 6]),
    ("wormhole_b0", False, 3, [3]),
    ("wormhole_b0", True, 20, [4, 4, 4, 4, 4]),
    ("wormhole_b0", True, 10, [4, 4, 2]),
    # Blackhole: chunks of at most four, a five split 2 + 3, a block of one tilize_block's (tilize.h:325-369)
    ("blackhole", False, 7, [4, 3]),
    ("blackhole", False, 5, [2, 3]),
    ("blackhole", False, 1, [1]),
])
def test_fast_tilize_block_sections_follow_the_header(tmp_path: Path, target: str, fp32: bool, block: int,
                                                      sections: list[int]) -> None:
    ops = _dst_ops(_compute(tmp_path, *_around(f"fast_tilize_block(0, {block}, 16);", block), target=target,
                            fp32=fp32))
    assert [op.tiles for op in ops if isinstance(op, PackAcc)] == sections
    assert [op.tiles for op in ops if isinstance(op, AcquireAcc)] == sections
    assert all(op.ins == (Operand(IN, block),) for op in ops if isinstance(op, Compute))


def test_tilize_of_the_second_row_band_reads_its_pages(tmp_path: Path) -> None:
    """``input_tile_index`` 4 of a 4-tile block: the second band of rows, pages [4, 8) of the front."""
    ops = _dst_ops(_compute(tmp_path, *_around("tilize_block(0, 4, 16, 4, 0);", 8)))
    assert {op.ins for op in ops if isinstance(op, Compute)} == {(Operand(IN, 8),)}


def test_pack_untilize_block_of_a_whole_row(tmp_path: Path) -> None:
    ops = _dst_ops(_compute(tmp_path, *_around("pack_untilize_block<4, 4>(0, 1, 16);")))
    assert ops == [AcquireAcc(4, "bf16"), Compute("untilize", 4, (Operand(IN, 4),)), PackAcc(OUT, 4), ReleaseAcc()]


def test_pack_untilize_block_over_the_row_s_blocks(tmp_path: Path) -> None:
    """The untilize helper's wide path (untilize_helpers.inl:246-254): a counted loop over the row's blocks, each
    unpacked after its own wait and popped after."""
    body = ("    cb_reserve_back(16, 4);",
            "    for (uint32_t b = 0; b < 2; ++b) {",
            "        cb_wait_front(0, 2);",
            "        pack_untilize_block<2, 4>(0, 1, 16, b);",
            "        cb_pop_front(0, 2);",
            "    }",
            "    cb_push_back(16, 4);")
    ops = _dst_ops(_compute(tmp_path, *body))
    assert [op.tiles for op in ops if isinstance(op, PackAcc)] == [2]  # once, in the loop


@pytest.mark.parametrize(("body", "construct", "line"), [
    # DST already held: the call acquires it itself
    (("    tile_regs_acquire();", *_around("tilize_block(0, 4, 16);"), "    tile_regs_release();"),
     "tilize_block while DST is held", 7),
    # the packs at output index 1 while the back holds nothing yet: tile 0 never written, the last past the push
    (_around("tilize_block(0, 4, 16, 0, 1);"), "pack not at the buffer's next unfilled tile", 6),
    # an input index inside a row band
    (_around("tilize_block(0, 4, 16, 2, 0);", 8), "tilize_block input_tile_index not a whole row band", 6),
    # a block of a row outside a loop over the row's blocks: its pages are filled only with the other blocks
    (_around("pack_untilize_block<2, 4>(0, 1, 16, 0);"),
     "pack_untilize_block of part of a row outside a loop over the row's blocks", 6),
    (("    cb_reserve_back(16, 6);", "    for (uint32_t b = 0; b < 3; ++b) {", "        cb_wait_front(0, 2);",
      "        pack_untilize_block<2, 4>(0, 1, 16, b);", "        cb_pop_front(0, 2);", "    }",
      "    cb_push_back(16, 6);"), "pack_untilize_block of part of a row outside a loop over the row's blocks", 7),
    # two tile rows unpack the same tiles (pack_untilize.h:253-260)
    (_around("pack_untilize_block<4, 4>(0, 2, 16);"), "pack_untilize_block of 2 tile rows", 6),
    (_around("tilize_block(0, get_arg_val<uint32_t>(0), 16);"), "tilize block from a runtime range", 6),
])
def test_tilize_and_untilize_not_placed_are_refused(tmp_path: Path, body: tuple[str, ...], construct: str,
                                                    line: int) -> None:
    with pytest.raises(Refused, match=construct) as e:
        _compute(tmp_path, *body)
    assert e.value.loc.line == line, e.value


def test_pack_untilize_dest_packs_what_dst_holds(tmp_path: Path) -> None:
    body = ("    cb_reserve_back(16, 4);", "    tile_regs_acquire(); tile_regs_commit(); tile_regs_wait();",
            "    pack_untilize_dest<4>(16);", "    tile_regs_release();", "    cb_push_back(16, 4);")
    ops = _dst_ops(_compute(tmp_path, *body))
    assert ops == [AcquireAcc(4, "bf16"), PackAcc(OUT, 4), ReleaseAcc()]
    with pytest.raises(Refused, match="pack_untilize_dest without tile_regs_acquire"):
        _compute(tmp_path, "    cb_reserve_back(16, 4);", "    pack_untilize_dest<4>(16);")
    with pytest.raises(Refused, match="pack_untilize_dest with narrow_row"):
        _compute(tmp_path, *(x.replace("<4>", "<4, 4, false, true>") for x in body))


def test_a_tilize_program_is_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reader -> c_0 -> tilize -> c_16 -> writer on one core, blocks of four tiles."""
    (tmp_path / "reader.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
        "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
        "    for (uint32_t b = 0; b < 2; ++b) {",
        "        cb_reserve_back(0, 4);",
        "        uint32_t l1 = get_write_ptr(0);",
        "        for (uint32_t j = 0; j < 4; ++j) { noc_async_read_page(b * 4 + j, s, l1); l1 += 2048; }",
        "        noc_async_read_barrier();",
        "        cb_push_back(0, 4);",
        "    }", "}"]))
    (tmp_path / "compute.cpp").write_text("\n".join([
        '#include "api/compute/tilize.h"', "void kernel_main() {",
        "    tilize_init(0, 4, 16);",
        "    for (uint32_t b = 0; b < 2; ++b) {", *(f"    {x}" for x in _around("fast_tilize_block(0, 4, 16);")),
        "    }", "}"]))
    (tmp_path / "writer.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
        "    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
        "    for (uint32_t i = 0; i < 8; ++i) {",
        "        cb_wait_front(16, 1);", "        noc_async_write_tile(i, d, get_read_ptr(16));",
        "        noc_async_write_barrier();", "        cb_pop_front(16, 1);", "    }", "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "tilize", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 4, "data_format": "bf16"}
                        for n, i in (("in", 0), ("out", 16))],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "runtime_args": ["a"]},
                        {"name": "compute", "source": "compute.cpp", "processor": "compute"},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer", "runtime_args": ["a"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "compute", "writer"],
                            "runtime_args": {"reader": {"a": {"tensor": "src"}},
                                             "writer": {"a": {"tensor": "dst"}}}}]}
    (tmp_path / "host.yaml").write_text(json.dumps(host))
    rc = main(["certify", str(tmp_path / "host.yaml"), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, [r for r in report["results"] if r["verdict"] != "proved"]
