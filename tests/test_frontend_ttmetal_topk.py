"""The topk family of the compute API (api/compute/topk.h): calls that work on DST tiles their arguments do not
name, read with the tiles their LLK reads and writes (``sfpu.TOPK_DST_TILES``) so the accumulator's count holds
them, and certified through the accumulator-capacity rule as every other DST use."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.frontends.ttmetal.sfpu import TOPK_DST_TILES
from verispatial.ir.ops import AcquireAcc, Compute
from verispatial.ir.program import walk

#: MATH's commit, PACK's wait and release after a section's computes (api/compute/reg_api.h)
_HANDOVER = " tile_regs_commit(); tile_regs_wait(); tile_regs_release();"


def _compute(tmp_path: Path, *body: str, args: dict[str, Any] | None = None) -> Any:
    """The compute engine program of ``void kernel_main() { body }`` on core (0,0), buffers c_0 and c_16."""
    (tmp_path / "k.cpp").write_text("\n".join(['#include "api/compute/topk.h"', "void kernel_main() {", *body, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "topk", "kernel_root": str(tmp_path),
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 8, "data_format": "bf16"}
                        for n, i in (("c_0", 0), ("c_16", 16))],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "compute", "runtime_args": list(args or {})}],
            "work_units": [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": args or {}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _held(ep: Any) -> list[int]:
    return [op.tiles for op in walk(ep.ops) if isinstance(op, AcquireAcc)]


@pytest.mark.parametrize(("call", "tiles"), [
    ("topk_local_sort(0, 1, 5);", 4),                  # values 0..1, indices 2..3
    ("topk_local_sort(2, 1, 5);", 6),                  # first pass at idst: 2..5; the others at 0..3
    ("ckernel::topk_merge<false, false>(0, 1, 32);", 4),
    ("topk_rebuild(1, false, 1, 32, 5, 0);", 5),
    ("topk_fuse_tile<true>(2);", 4),                   # set_dst_write_addr(0): tiles 0..3 whatever idst
    ("topk_defuse_tile<true>(0, 3);", 5),              # values 0..2, indices 2..4
    ("topk_stamp_local_positions<true>(0);", 2),
    ("topk_stamp_tile_rank_range<true>(0, 1, 32);", 2),  # the tile is the second argument
    ("topk_canonicalize_negzero_values(0);", 2),
    ("topk_strip_rank_tags(5);", 2),                   # tile 0 if idst == 0 else 1
    ("topk_finalize_uint16_indices(5);", 6),
    ("topk_uint16_prepare_value_tile_for_pack(0);", 1),
    ("topk_uint16_move_dest_tile_to_pack_half(2);", 3),
    ("topk_uint16_move_dest_tile_to_pack_half(7);", 4),  # the switch's default: tile 3
])
def test_topk_call_counts_the_tiles_its_llk_touches(tmp_path: Path, call: str, tiles: int) -> None:
    ep = _compute(tmp_path, "    topk_tile_init();", f"    tile_regs_acquire(); {call}" + _HANDOVER)
    assert _held(ep) == [tiles]
    (c,) = [op for op in walk(ep.ops) if isinstance(op, Compute)]
    assert c.kind == re.sub(r"^ckernel::|[<(].*$", "", call)


def test_topk_tile_count_not_known_statically_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="topk_defuse_tile of a tile count not known statically"):
        _compute(tmp_path, "    uint32_t n = get_arg_val<uint32_t>(0);",
                 "    tile_regs_acquire(); topk_defuse_tile<true>(0, n);" + _HANDOVER, args={"n": "1..3"})
    with pytest.raises(Refused, match="call to topk_stamp_tile_rank_range with too few arguments"):
        _compute(tmp_path, "    tile_regs_acquire(); topk_stamp_tile_rank_range<true>(0);" + _HANDOVER)


def test_blackhole_only_and_unpacking_relatives_stay_refused(tmp_path: Path) -> None:
    for call in ("block_max8(0);", "csa_index_remap<0>(0);", "topk_xl_local_sort(0, true);",
                 "sfpu_reduce<PoolType::SUM, DataFormat::Float16_b>(0);"):
        name = re.sub(r"[<(].*$", "", call)
        with pytest.raises(Refused, match=f"call to {name}"):
            _compute(tmp_path, f"    tile_regs_acquire(); {call}" + _HANDOVER)


def test_tie_order_from_global_direction_is_an_enumerator(tmp_path: Path) -> None:
    """``topk_tie_order_from_global_direction(descending)`` (topk.h:26-28): ``Descending`` or ``Ascending``."""
    ep = _compute(tmp_path,
                  "    constexpr auto t = ckernel::topk_tie_order_from_global_direction(true);",
                  "    if constexpr (t == ckernel::TopkTieOrder::Descending) { cb_reserve_back(16, 1); }",
                  "    constexpr auto u = ckernel::topk_tie_order_from_global_direction(false);",
                  "    if constexpr (u == ckernel::TopkTieOrder::Descending) { cb_reserve_back(16, 2); }")
    assert [op.pages for op in walk(ep.ops)] == [1]


def test_topk_table_cites_the_wheels_header_lines(ttnn_cpp: Path) -> None:
    """Each row's ``topk.h:N`` is the line of the wheel's header that declares the function."""
    header = (ttnn_cpp.parent.parent / "tt_metal/hw/inc/api/compute/topk.h").read_text().splitlines()
    for name, spec in TOPK_DST_TILES.items():
        m = re.match(r"topk\.h:(\d+)", spec.source)
        assert m is not None, name
        assert f"void {name}(" in header[int(m.group(1)) - 1], (name, spec.source)


def _pipeline(tmp_path: Path, dst: int, fp32: bool, sfpu: str = "topk_local_sort") -> Path:
    """Reader -> c_0 (2 value and 2 index tiles) -> compute (into DST 0..3, a topk call at ``dst``, pack 0..3)
    -> c_16 -> writer, on one core."""
    (tmp_path / "reader.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
        "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
        "    cb_reserve_back(0, 4);", "    uint32_t l1 = get_write_ptr(0);",
        "    for (uint32_t j = 0; j < 4; ++j) { noc_async_read_page(j, s, l1); l1 += 2048; }",
        "    noc_async_read_barrier();", "    cb_push_back(0, 4);", "}"]))
    call = f"topk_local_sort({dst}, 1, 5);" if sfpu == "topk_local_sort" else f"{sfpu}({dst});"
    (tmp_path / "compute.cpp").write_text("\n".join([
        '#include "api/compute/topk.h"', "void kernel_main() {",
        "    topk_tile_init();", "    cb_wait_front(0, 4); cb_reserve_back(16, 4);", "    tile_regs_acquire();",
        "    for (uint32_t j = 0; j < 4; ++j) { copy_tile(0, j, j); }",
        f"    {call}", "    tile_regs_commit(); tile_regs_wait();",
        "    for (uint32_t j = 0; j < 4; ++j) { pack_tile(j, 16); }",
        "    tile_regs_release();", "    cb_pop_front(0, 4); cb_push_back(16, 4);", "}"]))
    (tmp_path / "writer.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
        "    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
        "    for (uint32_t i = 0; i < 4; ++i) {",
        "        cb_wait_front(16, 1);", "        noc_async_write_tile(i, d, get_read_ptr(16));",
        "        noc_async_write_barrier();", "        cb_pop_front(16, 1);", "    }", "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "topk", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [128, 32], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [128, 32], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 4, "data_format": "bf16"}
                        for n, i in (("in", 0), ("out", 16))],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "runtime_args": ["a"]},
                        {"name": "compute", "source": "compute.cpp", "processor": "compute",
                         "fp32_dest_acc_en": fp32},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer", "runtime_args": ["a"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "compute", "writer"],
                            "runtime_args": {"reader": {"a": {"tensor": "src"}},
                                             "writer": {"a": {"tensor": "dst"}}}}]}
    (tmp_path / "host.yaml").write_text(json.dumps(host))
    return tmp_path / "host.yaml"


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    capsys.readouterr()
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    return rc, [r for r in report["results"] if r["verdict"] != "proved"]


@pytest.mark.parametrize(("dst", "fp32", "sfpu"), [
    (0, False, "topk_local_sort"), (0, True, "topk_local_sort"),  # tiles 0..3: 4 <= 8 (bf16), 4 <= 4 (fp32)
    (4, False, "topk_local_sort"),                                # tiles 0..7: 8 <= 8
])
def test_topk_within_the_acquired_tiles_is_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str], dst: int,
                                                  fp32: bool, sfpu: str) -> None:
    rc, open_ = _certify(_pipeline(tmp_path, dst, fp32, sfpu), capsys)
    assert rc == 0, open_


@pytest.mark.parametrize(("dst", "fp32", "sfpu", "held"), [
    (1, True, "topk_local_sort", "acquire_acc(5, fp32)"),   # idst + 3 = 4: a fifth 32-bit tile
    (5, False, "topk_local_sort", "acquire_acc(9, bf16)"),  # idst + 3 = 8: a ninth 16-bit tile
    (4, True, "exp_tile", "acquire_acc(5, fp32)"),          # the one-tile rule, the same refutation
])
def test_topk_past_the_acquired_tiles_is_refuted_as_one_tile_sfpu_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], dst: int, fp32: bool, sfpu: str, held: str) -> None:
    rc, open_ = _certify(_pipeline(tmp_path, dst, fp32, sfpu), capsys)
    assert rc == 1
    assert [(r["name"].split(":")[0], r["verdict"]) for r in open_] == [("acc-capacity", "refuted")]
    assert held in json.dumps(open_[0])


# ------------------------------------------------------------------ per-kernel tensor bindings (sort's factories)


def _bound(tmp_path: Path, kernel: dict[str, Any]) -> Any:
    (tmp_path / "k.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', '#include "experimental/kernel_args.h"', "void kernel_main() {",
        "    const auto s = TensorAccessor(tensor::input_tensor);", "    cb_reserve_back(0, 1);",
        "    noc_async_read_tile(3, s, get_write_ptr(0));", "    noc_async_read_barrier();", "    cb_push_back(0, 1);",
        "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "bind", "kernel_root": str(tmp_path),
            "tensors": [{"name": "value", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader", **kernel}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json")


def test_tensor_binding_names_the_host_tensor_of_an_accessor(tmp_path: Path) -> None:
    """``TensorBinding{.tensor_parameter_name = VALUE_PARAM, .accessor_name = "input_tensor"}``
    (sort_program_factory.cpp:2019 in 0.81.1): the reader's ``tensor::input_tensor`` is the host tensor ``value``."""
    p = _bound(tmp_path, {"tensor_bindings": {"input_tensor": "value"}})
    (read,) = [op for op in walk(p.programs[0].ops) if type(op).__name__ == "ReadTiles"]
    assert read.tensor == "value"
    with pytest.raises(Refused, match="tensor the host does not declare"):
        _bound(tmp_path, {})


def test_tensor_binding_to_an_undeclared_tensor_is_a_host_error(tmp_path: Path) -> None:
    from verispatial.errors import ParseError

    with pytest.raises(ParseError, match=r"kernels\[0\]\.tensor_bindings\.input_tensor: no tensor 'nope'"):
        _bound(tmp_path, {"tensor_bindings": {"input_tensor": "nope"}})
