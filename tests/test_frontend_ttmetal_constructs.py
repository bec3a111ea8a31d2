"""The tt-metal front end, construct by construct: small kernels written here, each read into the ops it stands
for (or refused by name at its line). The vendor corpus figures these constructs move are in benchmarks/README.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import AcquireAcc, Compute, FillTiles, Pop, Push, ReadTiles, Reserve, Wait
from verispatial.ir.program import walk


def _read(tmp_path: Path, source: str, processor: str = "reader", kernel: dict[str, Any] | None = None,
          args: dict[str, Any] | None = None) -> Any:
    """The one engine program of ``source`` (a whole kernel file) on core (0,0), buffers c_0, c_1 and c_16 (one
    bf16 tile a page, 8 pages), tensor ``t`` (32 x 256) at runtime arg ``addr``."""
    (tmp_path / "k.cpp").write_text(source)
    k = {"name": "k", "source": "k.cpp", "processor": processor, "runtime_args": ["addr"], **(kernel or {})}
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "snippet", "kernel_root": str(tmp_path),
            "tensors": [{"name": "t", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 8, "data_format": "bf16"}
                        for n, i in (("c_0", 0), ("c_1", 1), ("c_16", 16))],
            "kernels": [k],
            "work_units": [{"cores": "0,0", "kernels": ["k"],
                            "runtime_args": {"k": {"addr": {"tensor": "t"}, **(args or {})}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _main(*body: str, prelude: tuple[str, ...] = ()) -> str:
    return "\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude, "void kernel_main() {", *body, "}"])


def _ops(ep: Any) -> list[tuple[str, int]]:
    out = []
    for op in walk(ep.ops):
        if isinstance(op, (Reserve, Push, Wait, Pop)):
            out.append((type(op).__name__, op.pages))
    return out


# ------------------------------------------------------------------ default arguments


def test_default_argument_is_read_in_the_callee(tmp_path: Path) -> None:
    """``void put(uint32_t cb, uint32_t n = 2, bool reserve = true)`` called as ``put(0)`` and ``put(0, 3, false)``
    (moreh_common.hpp's ``do_reserve``)."""
    ep = _read(tmp_path, _main("    put(0);", "    put(0, 3, false);", prelude=(
        "inline void put(uint32_t cb, uint32_t n = 2, bool reserve = true) {",
        "    if (reserve) { cb_reserve_back(cb, n); }",
        "    cb_push_back(cb, n);",
        "}")))
    assert _ops(ep) == [("Reserve", 2), ("Push", 2), ("Push", 3)]


def test_default_argument_sees_earlier_parameters_not_the_caller(tmp_path: Path) -> None:
    """A default reads the callee's earlier parameters; the caller's local of the same name is not in scope."""
    ep = _read(tmp_path, _main("    uint32_t n = 7;", "    put(3);", prelude=(
        "inline void put(uint32_t m, uint32_t k = m + 1) { cb_reserve_back(0, k); }",)))
    assert _ops(ep) == [("Reserve", 4)]
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    uint32_t n = 7;", "    put();", prelude=(
            "inline void put(uint32_t k = n) { cb_reserve_back(0, k); }",)))


def test_default_template_argument(tmp_path: Path) -> None:
    ep = _read(tmp_path, _main("    put();", "    put<5>();", prelude=(
        "template <uint32_t N = 2> void put() { cb_reserve_back(0, N); }",)))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 5)]


# ------------------------------------------------------------------ switch


def test_switch_on_a_folded_value_takes_its_case_and_falls_through(tmp_path: Path) -> None:
    src = _main(
        "    constexpr uint32_t mode = get_compile_time_arg_val(0);",
        "    switch (mode) {",
        "        case 0: cb_reserve_back(0, 1); break;",
        "        case 1: cb_reserve_back(0, 2);",
        "        case 2: cb_push_back(0, 2); break;",
        "        default: cb_reserve_back(0, 8);",
        "    }")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [1]})) == [("Reserve", 2), ("Push", 2)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0]})) == [("Reserve", 1)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [9]})) == [("Reserve", 8)]


def test_switch_on_an_enumerator(tmp_path: Path) -> None:
    ep = _read(tmp_path, _main("    get<Fmt::B>();", prelude=(
        "template <Fmt F> void get() {",
        "    switch (F) { case Fmt::A: cb_reserve_back(0, 1); break; case Fmt::B: cb_reserve_back(0, 3); break; }",
        "}")))
    assert _ops(ep) == [("Reserve", 3)]


def test_switch_case_block_ending_in_break(tmp_path: Path) -> None:
    """``case X: { ...; break; }`` (ttnn 0.81.1 ttnn/kernel/dataflow/cb_fill_helpers.hpp:25-40): the block's
    statements, in its own scope, then the switch ends (it was refused at the break, nested in the block)."""
    src = _main(
        "    constexpr uint32_t mode = get_compile_time_arg_val(0);",
        "    uint32_t n = 4;",
        "    switch (mode) {",
        "        case 0: { uint32_t n = 1; cb_reserve_back(0, n); break; }",
        "        case 1: { cb_reserve_back(0, 2); }",
        "        case 2: { cb_reserve_back(0, 3); /* why */ break; }",
        "        default: cb_reserve_back(0, 8);",
        "    }",
        "    cb_push_back(0, n);")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0]})) == [("Reserve", 1), ("Push", 4)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [1]})) == [("Reserve", 2), ("Reserve", 3),
                                                                              ("Push", 4)]
    # a break not last in the block, or nested deeper in it, ends the switch where it runs (refused until 2026-12-07)
    for block in ("{ break; cb_reserve_back(0, 1); }", "{ if (true) { break; } cb_reserve_back(0, 1); break; }"):
        assert _ops(_read(tmp_path, _main(f"    switch (1) {{ case 1: {block} }}"))) == []


def test_switch_not_decided_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="switch on a value not known statically") as e:
        _read(tmp_path, _main(
            "    uint32_t v = *reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
            "    switch (v) { case 0: cb_reserve_back(0, 1); break; }"))
    assert e.value.loc.line == 4
    # a break deeper than the case, under a branch decided statically, ends the switch where it runs (it was
    # refused until 2026-12-07; tests/test_frontend_ttmetal_leftovers.py)
    assert _ops(_read(tmp_path, _main("    switch (1) { case 1: if (true) { break; } cb_reserve_back(0, 1); }"))) == []


# ------------------------------------------------------------------ named-arg entry point


def test_tt_kernel_entry_binds_named_args(tmp_path: Path) -> None:
    """``template <uint32_t Kt> TT_KERNEL void compute(uint32_t n)``: the JIT's generated kernel_main passes the
    named compile-time arg Kt and the runtime arg n (experimental/kernel_args.h)."""
    src = "\n".join([
        '#include "experimental/kernel_args.h"',
        "template <uint32_t Kt>",
        "TT_KERNEL void dataflow(uint32_t n) {",
        "    for (uint32_t i = 0; i < n; i++) { cb_reserve_back(0, Kt); cb_push_back(0, Kt); }",
        "}"])
    ep = _read(tmp_path, src, kernel={"named_compile_time_args": {"Kt": 2}, "runtime_args": ["addr", "n"]},
               args={"n": 3})
    (loop,) = ep.ops
    assert loop.count == 3
    assert _ops(ep) == [("Reserve", 2), ("Push", 2)]
    with pytest.raises(Refused, match="compile-time arg the host does not give"):
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "n"]}, args={"n": 3})


# ------------------------------------------------------------------ constants, sizes, template arguments


def test_tile_constants_and_sizeof(tmp_path: Path) -> None:
    """``tt::constants::TILE_HEIGHT`` (constants.hpp) and ``sizeof(uint16_t)``, also of a type template argument."""
    ep = _read(tmp_path, _main(
        "    cb_reserve_back(0, tt::constants::TILE_HEIGHT / 16);",
        "    cb_reserve_back(0, sizeof(uint32_t));",
        "    put<uint16_t>();", prelude=("template <typename T> void put() { cb_reserve_back(0, sizeof(T)); }",)))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 4), ("Reserve", 2)]


def test_buffer_token_as_template_argument(tmp_path: Path) -> None:
    """``fill<dfb::c_16>()`` names buffer c_16 (Metal 2.0's dfb:: tokens), not an enumerator."""
    ep = _read(tmp_path, _main("    fill<dfb::c_16>();", prelude=(
        "template <uint32_t id> void fill() { DataflowBuffer b(id); b.reserve_back(1); b.push_back(1); }",)))
    # buffer ids are positions in the host's list: c_16 is the third
    assert [(type(op).__name__, op.buf) for op in walk(ep.ops)] == [("Reserve", 2), ("Push", 2)]


def test_deduced_accessor_type_is_interleaved(tmp_path: Path) -> None:
    """``if constexpr (A::DSpec::is_interleaved)`` with ``A`` deduced from a tensor accessor
    (data_movement/common/kernels/common.hpp): every host tensor is interleaved, so the branch is taken."""
    ep = _read(tmp_path, _main(
        "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
        "    cb_reserve_back(0, 1);",
        "    rd(s, get_write_ptr(0), 5);",
        "    cb_push_back(0, 1);", prelude=(
            "template <typename A> void rd(A acc, uint32_t l1, uint32_t id) {",
            "    if constexpr (A::DSpec::is_interleaved) { noc_async_read_page(id, acc, l1); }",
            "    else { noc_async_read_sharded_thing(); }",
            "    noc_async_read_barrier();",
            "}")))
    (read,) = [op for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert (read.tensor, read.addr.base) == ("t", 5)


# ------------------------------------------------------------------ transfers at an offset, common args


def test_transfer_at_an_offset_into_a_tensor_page_is_refused(tmp_path: Path) -> None:
    """``{.page_id = p, .offset_bytes = 64}`` with a whole page reaches into page p + 1: not ReadTiles' pages (part
    of the page is read: tests/test_frontend_ttmetal_part.py)."""
    body = ("    Noc noc;", "    DataflowBuffer b(0);",
            "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
            "    b.reserve_back(1);")
    with pytest.raises(Refused, match="transfer at an offset into a tensor page") as e:
        _read(tmp_path, _main(*body, "    noc.async_read(s, b, 2048, {.page_id = 1, .offset_bytes = 64}, {});"))
    assert e.value.loc.line == 7
    ep = _read(tmp_path, _main(*body, "    noc.async_read(s, b, 2048, {.page_id = 1, .offset_bytes = 0}, {});"))
    assert [type(op).__name__ for op in walk(ep.ops)] == ["Reserve", "ReadTiles"]


def test_common_vararg_is_refused_with_a_host(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="common runtime arg"):
        _read(tmp_path, _main("    uint32_t n = get_common_vararg(0);"))


# ------------------------------------------------------------------ SFPU operations and DST


def _compute(*body: str) -> str:
    return "\n".join(['#include "api/compute/eltwise_binary_sfpu.h"', "void kernel_main() {", *body, "}"])


def test_binary_sfpu_counts_every_dst_index(tmp_path: Path) -> None:
    """``add_binary_tile(0, 1, 3)`` writes DST tile 3: the acquire holds 4 tiles, not 1 (the first index's)."""
    ep = _read(tmp_path, _compute(
        "    cb_wait_front(0, 2); cb_reserve_back(16, 1);",
        "    tile_regs_acquire(); copy_tile(0, 0, 0); copy_tile(0, 1, 1); add_binary_tile(0, 1, 3);",
        "    tile_regs_commit(); tile_regs_wait(); pack_tile(3, 16); tile_regs_release();",
        "    cb_pop_front(0, 2); cb_push_back(16, 1);"), processor="compute")
    (acq,) = [op for op in walk(ep.ops) if type(op).__name__ == "AcquireAcc"]
    assert acq.tiles == 4
    assert [op.kind for op in walk(ep.ops) if isinstance(op, Compute)] == ["copy", "copy", "add_binary"]


def test_dst_only_operations_without_the_tile_suffix(tmp_path: Path) -> None:
    """``fill_tile_int`` and ``silu_tile_pack`` (eltwise_unary/fill.h, compute_kernel_api.h) touch DST only."""
    ep = _read(tmp_path, _compute(
        "    cb_reserve_back(16, 1);",
        "    tile_regs_acquire(); fill_tile_int(2, 7); silu_tile_pack(2); tile_regs_commit();",
        "    tile_regs_wait(); pack_tile(2, 16); tile_regs_release();",
        "    cb_push_back(16, 1);"), processor="compute")
    assert [op.kind for op in walk(ep.ops) if isinstance(op, Compute)] == ["fill_tile_int", "silu_tile_pack"]
    (acq,) = [op for op in walk(ep.ops) if type(op).__name__ == "AcquireAcc"]
    assert acq.tiles == 3


def test_multi_tile_topk_counts_the_tiles_its_arguments_do_not_name(tmp_path: Path) -> None:
    """``topk_local_sort(0, ...)`` works on DST tiles 0..3 (values 0..1, indices 2..3), which its arguments do not
    name: the acquire holds 4 tiles, not 1 (tests/test_frontend_ttmetal_topk.py has the whole family)."""
    ep = _read(tmp_path, _compute("    tile_regs_acquire(); topk_local_sort(0, 0, 5); tile_regs_commit(); tile_regs_wait();"
                                             " tile_regs_release();"),
               processor="compute")
    (acq,) = [op for op in walk(ep.ops) if type(op).__name__ == "AcquireAcc"]
    assert acq.tiles == 4


def test_get_cb_id_is_the_buffer_index(tmp_path: Path) -> None:
    ep = _read(tmp_path, _main("    DataflowBuffer b(16);", "    cb_reserve_back(b.get_cb_id(), 1);"))
    assert [(type(op).__name__, op.buf) for op in walk(ep.ops)] == [("Reserve", 2)]


def test_thread_wrapped_assert_is_no_op_and_other_wrappers_are_refused(tmp_path: Path) -> None:
    """``PACK(ASSERT(...))`` is a debug assertion on the packer thread; ``PACK((llk_...))`` can move pages."""
    ep = _read(tmp_path, _compute("    PACK(ASSERT(!is_block_float_format(pack_dst_format[16])));",
                                  "    UNPACK((ASSERT(1)));", "    cb_reserve_back(16, 1);"), processor="compute")
    assert _ops(ep) == [("Reserve", 1)]
    with pytest.raises(Refused, match="call to PACK"):
        _read(tmp_path, _compute("    PACK((llk_pack_reconfig_l1_acc(0)));"), processor="compute")


def test_get_dataformat_is_the_host_buffer_format(tmp_path: Path) -> None:
    """``if constexpr (get_dataformat(cb) == DataFormat::Float16_b)`` takes the side of the host's format."""
    ep = _read(tmp_path, _main(
        "    const DataFormat f = get_dataformat(0);",
        "    if (f == DataFormat::Bfp8_b) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
        "    DataflowBuffer b(16);",
        "    if (b.get_dataformat() == DataFormat::Float16_b) { cb_reserve_back(16, 3); }"))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 3)]


# ------------------------------------------------------------------ loops read by running their condition


def test_while_loop_with_folded_values_is_read_iteration_by_iteration(tmp_path: Path) -> None:
    """``while (tiles_read < n) { k = min(n - tiles_read, 2); ...; tiles_read += k; }`` with n = 5: three
    iterations, of 2, 2 and 1 pages (reduce_scatter's reader)."""
    ep = _read(tmp_path, _main(
        "    uint32_t n = get_compile_time_arg_val(0);",
        "    uint32_t tiles_read = 0;",
        "    while (tiles_read < n) {",
        "        uint32_t k = std::min(n - tiles_read, 2u);",
        "        cb_reserve_back(0, k);",
        "        cb_push_back(0, k);",
        "        tiles_read += k;",
        "    }"), kernel={"compile_time_args": [5]})
    assert _ops(ep) == [("Reserve", 2), ("Push", 2), ("Reserve", 2), ("Push", 2), ("Reserve", 1), ("Push", 1)]
    assert str(ep.source_of((4,))).startswith("k.cpp:7:9: cb_reserve_back(0, k);")


def test_break_continue_and_compound_for_conditions(tmp_path: Path) -> None:
    ep = _read(tmp_path, _main(
        "    uint32_t done = 0;",
        "    for (uint32_t i = 0; i < 8 && done < 3; i++) {",
        "        if (i == 1) { continue; }",
        "        cb_reserve_back(0, i + 1);",
        "        done++;",
        "    }",
        "    while (true) { cb_push_back(0, 1); break; }",
        "    uint32_t m = 2;",
        "    do { cb_wait_front(0, m); } while (--m > 0);"))
    assert _ops(ep) == [("Reserve", 1), ("Reserve", 3), ("Reserve", 4), ("Push", 1), ("Wait", 2), ("Wait", 1)]


def test_while_on_a_value_not_followed_or_a_loop_index_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="while loop") as e:  # a flag polled in L1
        _read(tmp_path, _main(
            "    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
            "    while (*p == 0) { }"))
    assert e.value.loc.line == 4
    with pytest.raises(Refused, match="varies with a loop index"):  # i counts a runtime range: a symbol
        _read(tmp_path, _main(
            "    uint32_t n = get_arg_val<uint32_t>(1);",
            "    for (uint32_t i = 0; i < n; i++) { uint32_t j = 0; while (j < i) { j++; } }"),
            kernel={"runtime_args": ["addr", "n"]}, args={"n": "1..4"})
    with pytest.raises(Refused, match="more than 256 iterations"):
        _read(tmp_path, _main("    while (true) { cb_push_back(0, 1); }"))
    # a break inside a case ends the switch, the one after it the loop (the first was refused until 2026-12-07)
    assert _ops(_read(tmp_path, _main("    while (true) { switch (1) { case 1: if (true) { break; } "
                                      "cb_push_back(0, 1); } break; }"))) == []


def test_counted_loop_the_symbolic_reading_cannot_follow_is_read_iteration_by_iteration(tmp_path: Path) -> None:
    """``for (i = 0; i < 4; i++) read(i / 2 * 8 + i % 2)``: the page is not affine in i, so the loop of constant
    count is read as it runs (pages 0, 1, 8, 9); an affine one stays a Loop."""
    acc = "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);"
    ep = _read(tmp_path, _main(acc,
        "    for (uint32_t i = 0; i < 4; i++) {",
        "        cb_reserve_back(0, 1);",
        "        noc_async_read_page(i / 2 * 8 + i % 2, s, get_write_ptr(0));",
        "        noc_async_read_barrier();",
        "        cb_push_back(0, 1);",
        "    }"))
    assert [op.addr.base for op in walk(ep.ops) if isinstance(op, ReadTiles)] == [0, 1, 8, 9]
    assert not any(type(op).__name__ == "Loop" for op in ep.ops)
    ep = _read(tmp_path, _main(acc,
        "    for (uint32_t i = 0; i < 4; i++) {",
        "        cb_reserve_back(0, 1); noc_async_read_page(2 * i, s, get_write_ptr(0));",
        "        noc_async_read_barrier(); cb_push_back(0, 1);",
        "    }"))
    (loop,) = ep.ops
    assert loop.count == 4


def test_iterations_read_one_by_one_are_bounded_in_the_kernel(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="iterations read one by one in the kernel"):
        _read(tmp_path, _main(
            "    for (uint32_t j = 0; j < 200; j++) {",
            "        if (j % 2 == 0) { cb_push_back(0, 1); }",
            "        for (uint32_t i = 0; i < 200; i++) { if (i % 3 == 0) { cb_reserve_back(0, 1); } }",
            "    }"))


def test_defaulted_type_parameter_is_named_and_sized(tmp_path: Path) -> None:
    """``template <typename T = uint16_t> void fill()`` (kernel_lib/index_tile_dataflow.hpp): ``fill<uint32_t>()``
    and ``fill()`` size their element by T."""
    ep = _read(tmp_path, _main("    fill<uint32_t>();", "    fill();", prelude=(
        "template <typename T = uint16_t> void fill() {",
        "    if constexpr (sizeof(T) == 2) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 4); }",
        "}")))
    assert _ops(ep) == [("Reserve", 4), ("Reserve", 2)]


def test_angle_bracket_op_header_alias_and_temporary_buffer(tmp_path: Path) -> None:
    """``#include <ttnn/operations/.../experimental_device_api.hpp>`` (an op's helper in angle brackets) is
    followed; its ``using CB = CircularBuffer;`` names the buffer class; ``CircularBuffer(0).push_back(1)`` is a
    temporary over buffer 0."""
    helper = tmp_path / "ttnn" / "operations" / "h.hpp"
    helper.parent.mkdir(parents=True)
    helper.write_text("#pragma once\nnamespace experimental { using CB = CircularBuffer; }\n")
    ep = _read(tmp_path, "\n".join([
        '#include "api/dataflow/dataflow_api.h"', "#include <ttnn/operations/h.hpp>", "void kernel_main() {",
        "    experimental::CB cb(0);", "    cb.reserve_back(2);", "    CircularBuffer(0).push_back(2);", "}"]))
    assert _ops(ep) == [("Reserve", 2), ("Push", 2)]


# ------------------------------------------------------------------ named tensor tokens (Metal 2.0)


def test_named_tensor_token_is_the_host_tensor(tmp_path: Path) -> None:
    """``TensorAccessor(tensor::t)`` (experimental/kernel_args.h: the named-arg form of a tensor's accessor, which
    the JIT binds to the host tensor of that name) reads the host tensor ``t``; a name the host does not declare
    is refused at its line."""
    body = ("    Noc noc;", "    DataflowBuffer b(0);", "    const auto s = TensorAccessor(tensor::t);",
            "    b.reserve_back(1);", "    noc.async_read(s, b, 2048, {.page_id = 3}, {});")
    ep = _read(tmp_path, _main(*body))
    (read,) = [op for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert (read.tensor, read.addr.base) == ("t", 3)
    with pytest.raises(Refused, match="tensor the host does not declare") as e:
        _read(tmp_path, _main(*body[:2], "    const auto s = TensorAccessor(tensor::u);", *body[3:]))
    assert e.value.loc.line == 5


def test_numeric_comparison_is_a_value_not_followed(tmp_path: Path) -> None:
    """``bfloat16_greater`` (api/numeric/bfloat16.h) compares two numbers and touches no memory: a call has no op,
    and a branch on its result is refused as a branch on a value not followed (argmax's comparator)."""
    ep = _read(tmp_path, _main("    bool g = bfloat16_greater(1, 2);", "    cb_reserve_back(0, 1);"))
    assert _ops(ep) == [("Reserve", 1)]
    with pytest.raises(Refused, match="branch on a value not known statically") as e:
        _read(tmp_path, _main("    if (float32_greater(1, 2)) { cb_reserve_back(0, 1); }"))
    assert e.value.loc.line == 3


# ------------------------------------------------------------------ branches on data whose sides issue no op


_L1 = "    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));"


def test_branch_on_data_with_quiet_sides_is_read_and_forgets_what_it_sets(tmp_path: Path) -> None:
    """``if (p[0] > best) { best = p[0]; n = 2; }`` (argmax's running maximum): either side runs, invisibly to the
    choreography, so the reading goes on; ``n`` is no longer followed, and an op that needs it is refused."""
    head = (_L1, "    uint32_t best = 0;", "    uint32_t n = 1;", "    cb_reserve_back(0, 1);",
            "    if (p[0] > best) { best = p[0]; n = 2; } else { best = best; }")
    ep = _read(tmp_path, _main(*head, "    cb_push_back(0, 1);"))
    assert _ops(ep) == [("Reserve", 1), ("Push", 1)]
    with pytest.raises(Refused, match="set in a branch on a value not followed") as e:
        _read(tmp_path, _main(*head, "    cb_push_back(0, n);"))
    assert e.value.loc.line == 8
    # a comparator the kernel defines, returning early on a NaN, is quiet too: only its value is not followed
    ep = _read(tmp_path, _main(*head[:4], "    if (gt(p[0], best)) { best = p[0]; }", "    cb_push_back(0, 1);",
                               prelude=("inline bool gt(uint32_t a, uint32_t b) {",
                                        "    if (a == 0x7fc0) { return false; }", "    return a > b;", "}")))
    assert _ops(ep) == [("Reserve", 1), ("Push", 1)]


def test_branch_on_data_that_issues_an_op_or_leaves_the_line_is_refused(tmp_path: Path) -> None:
    """A side with an op, a condition calling something not known to be quiet (a device call, a store through a
    pointer), or a side that breaks out of a loop: the branch is refused as before."""
    branch = "branch on a value not known statically"
    cases = [
        ("    if (p[0] > 3) { cb_push_back(0, 1); }", branch, 5),
        ("    if (p[0] > 3 && cb_pages_reservable_at_back(0, 1)) { }", branch, 5),
        # the store through a raw address is refused where it stands, in the callee (line 2), before the branch is
        ("    if (bump(reinterpret_cast<volatile uint32_t*>(4096)) > 3) { }", "plain store through a pointer not "
         "followed", 2),
        ("    for (uint32_t i = 0; i < 4; i++) { if (p[i] > 3) { break; } cb_reserve_back(0, 1); }", branch, 5),
    ]
    for line, construct, at in cases:
        with pytest.raises(Refused, match=construct) as e:
            _read(tmp_path, _main(_L1, line, prelude=("inline uint32_t bump(volatile uint32_t* q) { q[1] = 1; "
                                                      "return q[0]; }",)))
        assert e.value.loc.line == at, line


# ------------------------------------------------------------------ constant pages built by stores


_FILL = "    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));"
_ZERO = ("    Noc noc;", "    CircularBuffer cb(0);", "    noc.async_write_zeros(cb, 2048);")


def _fills(ep: Any) -> list[tuple[str, int]]:
    out = []
    for op in walk(ep.ops):
        if isinstance(op, (Reserve, Push, Wait, Pop)):
            out.append((type(op).__name__, op.pages))
        elif isinstance(op, FillTiles):
            out.append(("FillTiles", op.tiles))
    return out


def test_stores_into_the_reserved_page_are_one_fill_before_its_push(tmp_path: Path) -> None:
    """generate_reduce_scaler's shape: reserve one page, store into it through a pointer (a loop of 512 words), push:
    one ``FillTiles`` of the page's tiles just before the push, located at the first store."""
    ep = _read(tmp_path, _main("    cb_reserve_back(0, 1);", _FILL,
                               "    for (uint32_t k = 0; k < 512; k++) { p[k] = 0x3f803f80; }",
                               "    cb_push_back(0, 1);"))
    assert _fills(ep) == [("Reserve", 1), ("FillTiles", 1), ("Push", 1)]
    assert ep.source_of((1,)).line == 5


def test_zero_fill_then_stores_on_some_paths(tmp_path: Path) -> None:
    """``wh_generate_reduce_scaler``: a zero fill by NoC loopback, its barrier, then the scaler's words only
    ``if (scaler != 0)`` (a branch on a value not followed): the page is filled on every path."""
    ep = _read(tmp_path, _main("    uint32_t scaler = get_arg_val<uint32_t>(1);", "    cb_reserve_back(0, 1);", _FILL,
                               *_ZERO, "    noc.write_zeros_l1_barrier();",
                               "    if (scaler != 0) { for (int j = 0; j < 8; ++j) { p[j] = scaler; } }",
                               "    cb_push_back(0, 1);"), kernel={"runtime_args": ["addr", "scaler"]},
               args={"scaler": 7})
    assert _fills(ep) == [("Reserve", 1), ("FillTiles", 1), ("Push", 1)]


@pytest.mark.parametrize(("body", "construct", "line"), [
    # the stores only on some paths: the pushed page may hold what was there before
    (("    cb_reserve_back(0, 1);", _FILL, "    if (p[1] != 0) { p[0] = 5; }", "    cb_push_back(0, 1);"),
     "plain stores into a buffer page on some paths only", 5),
    # the zero fill's bytes are undefined until its barrier (api/dataflow/noc.h)
    (("    cb_reserve_back(0, 1);", *_ZERO, "    cb_push_back(0, 1);"), "push before write_zeros_l1_barrier", 7),
    (("    cb_reserve_back(0, 1);", _FILL, *_ZERO, "    p[0] = 1;", "    noc.write_zeros_l1_barrier();",
      "    cb_push_back(0, 1);"), "before write_zeros_l1_barrier", 8),
    # scratch use: stores into pages never reserved, or never published
    ((_FILL, "    p[0] = 1;", "    cb_reserve_back(0, 1);", "    cb_push_back(0, 1);"),
     "plain store into a buffer page before its reserve", 4),
    (("    cb_reserve_back(0, 1);", _FILL, "    p[0] = 1;"), "plain store into a buffer page never pushed", 5),
    # two pages pushed, the second built by no store
    (("    cb_reserve_back(0, 2);", _FILL, "    p[0] = 1;", "    cb_push_back(0, 2);"),
     "plain stores into a push of more than one page", 6),
    # a page a NoC read also fills, before its barrier (after it, a patch: tests/test_frontend_ttmetal_patch.py)
    (("    const auto t = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);",
      "    cb_reserve_back(0, 1);", "    noc_async_read_page(0, t, get_write_ptr(0));", _FILL, "    p[0] = 1;"),
     "before the read barrier of the NoC read that fills it", 7),
])
def test_stores_the_choreography_cannot_name_are_refused(tmp_path: Path, body: tuple[str, ...], construct: str,
                                                         line: int) -> None:
    with pytest.raises(Refused, match=construct) as e:
        _read(tmp_path, _main(*body), kernel={"runtime_args": ["addr", "s"]}, args={"s": 3})
    assert e.value.loc.line == line


def test_stores_into_the_waited_front_or_by_compute_are_refused(tmp_path: Path) -> None:
    """An in-place change of a page another engine may read (the waited front), and stores by a compute kernel."""
    with pytest.raises(Refused, match="into the waited front") as e:
        _read(tmp_path, _main("    cb_wait_front(0, 1);",
                              "    volatile uint32_t* q = reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));",
                              "    q[0] = 1;", "    cb_pop_front(0, 1);"))
    assert e.value.loc.line == 5


# ------------------------------------------------------------------ matmul_block, template defaults


def test_matmul_block_unpacks_the_rows_and_columns_of_its_block(tmp_path: Path) -> None:
    """``matmul_block(in0, in1, ia, ib, idst, transpose, ct, rt, kt)``: A's tiles ``ia + r * kt`` for each of the
    rt rows and B's ``ib + c`` for each of the ct columns (llk_unpack_AB_matmul.h), into DST idst .. idst + ct*rt-1."""
    ep = _read(tmp_path, "\n".join([
        '#include "api/compute/matmul.h"', "void kernel_main() {",
        "    cb_wait_front(0, 6); cb_wait_front(1, 4);",
        "    tile_regs_acquire();",
        "    matmul_block(0, 1, 1, 2, 0, false, 2, 2, 3);",
        "    tile_regs_commit(); tile_regs_wait(); tile_regs_release();",
        "    cb_pop_front(0, 6); cb_pop_front(1, 4);", "}"]), processor="compute")
    (mm,) = [op for op in walk(ep.ops) if isinstance(op, Compute)]
    # A: 1 + (2 - 1) * 3 = tile 4, so 5 pages; B: 2 + 2 - 1 = tile 3, so 4 pages (buffers c_0, c_1 are ids 0, 1)
    assert (mm.kind, mm.tiles, [(o.buf, o.pages) for o in mm.ins]) == ("matmul", 4, [(0, 5), (1, 4)])
    acq = [op for op in walk(ep.ops) if isinstance(op, AcquireAcc)]
    assert [op.tiles for op in acq] == [4]


def test_a_parameter_default_naming_a_template_parameter_default(tmp_path: Path) -> None:
    """``template <typename T = Plain> void f(T t = T{})`` called as ``f()``: the template parameter's default is
    bound before the function parameter's (reduce_helpers_compute.hpp:398-403: ``AccumulateT accumulate =
    AccumulateT{}``), so ``t`` is a ``Plain`` and a callee deducing its type from it decides ``is_special_v``."""
    ep = _read(tmp_path, _main("    f();", prelude=(
        "struct Plain {};", "struct Special {};",
        "template <typename T> struct is_special : std::false_type {};",
        "template <> struct is_special<Special> : std::true_type {};",
        "template <typename T> inline constexpr bool is_special_v = is_special<T>::value;",
        "template <typename U> void g(U u) {",
        "    if constexpr (is_special_v<U>) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 1); }",
        "}",
        "template <typename T = Plain> void f(T t = T{}) { g(t); }")))
    assert _ops(ep) == [("Reserve", 1)]


def test_a_comment_among_template_arguments_is_not_one(tmp_path: Path) -> None:
    """``pack_tile</*out_of_order_output=*/true>(0, 16, 0)`` (moe_gate_mm's compute.cpp)."""
    ep = _read(tmp_path, "\n".join([
        '#include "api/compute/pack.h"', "void kernel_main() {",
        "    cb_reserve_back(16, 1);", "    tile_regs_acquire(); tile_regs_commit(); tile_regs_wait();",
        "    pack_tile</*out_of_order_output=*/true>(0, 16, 0);", "    tile_regs_release();",
        "    cb_push_back(16, 1);", "}"]), processor="compute")
    assert _ops(ep) == [("Reserve", 1), ("Push", 1)]


def test_kernel_main_defined_twice_is_refused(tmp_path: Path) -> None:
    """A second ``kernel_main`` is a C++ error; the reading took the last definition silently (a kernel whose first
    definition pushed a page no one reserved was read as the second and proved)."""
    src = _main("    cb_reserve_back(0, 1);", "    cb_push_back(0, 1);",
                prelude=("void kernel_main() { cb_push_back(0, 1); }",))
    with pytest.raises(Refused, match=r"kernel_main defined twice \(first at line 2\)") as e:
        _read(tmp_path, src)
    assert e.value.loc.line == 3


# ------------------------------------------------------------------ buffer bindings (KernelSpec DFBBinding)

_DFB = ('#include "api/dataflow/dataflow_buffer.h"',)


def test_dfb_binding_names_the_buffer_an_accessor_is(tmp_path: Path) -> None:
    """ttnn's clone writer declares ``DataflowBuffer dst_dfb(dfb::dst)`` and its program factory binds accessor
    ``dst`` to the reader's buffer when no dtype is converted (clone_program_factory.cpp:113, 183-188): the
    kernel's ``dfb_bindings`` say so, and the accessor reads as that buffer."""
    src = _main("    DataflowBuffer d(dfb::dst);", "    d.reserve_back(1);", "    d.push_back(1);", prelude=_DFB)
    ep = _read(tmp_path, src, kernel={"dfb_bindings": {"dst": "c_16"}})
    # buffer ids are the program's, in the host's order: c_0, c_1, c_16
    assert [(type(op).__name__, op.buf) for op in walk(ep.ops) if isinstance(op, (Reserve, Push))] == [
        ("Reserve", 2), ("Push", 2)]


def test_an_accessor_bound_to_no_buffer_is_refused_at_its_line(tmp_path: Path) -> None:
    """Without a binding, ``dfb::dst`` names a buffer the host does not declare: refused at the declaration's line
    (line 4), which the most vexing parse of ``DataflowBuffer d(dfb::dst);`` re-reads alone (it was named at line 1,
    the re-parsed text's)."""
    src = _main("    DataflowBuffer d(dfb::dst);", "    d.reserve_back(1);", prelude=_DFB)
    with pytest.raises(Refused, match="circular buffer the host does not declare") as e:
        _read(tmp_path, src)
    assert e.value.loc.line == 4
    assert "dfb_bindings" in e.value.detail


def test_a_dfb_binding_to_a_buffer_not_declared_is_bad_input(tmp_path: Path) -> None:
    from verispatial.errors import ParseError

    with pytest.raises(ParseError, match=r"kernels\[0\]\.dfb_bindings\.dst: no buffer 'nope'"):
        _read(tmp_path, _main(prelude=_DFB), kernel={"dfb_bindings": {"dst": "nope"}})


@pytest.mark.parametrize(("decl", "kind"), [("    struct Row { uint32_t w[16]; };", "struct"),
                                            ("    class Row { public: uint32_t w[16]; };", "class"),
                                            ("    union Row { uint32_t w; uint16_t h[2]; };", "union")])
def test_a_type_declared_inside_a_function_is_refused_in_a_kernel_engineers_words(tmp_path: Path, decl: str,
                                                                                  kind: str) -> None:
    """The second report's ``bad_struct``: it was refused as ``statement struct_specifier``, the parser's node name."""
    with pytest.raises(Refused, match=f"a {kind} declared inside a function") as e:
        _read(tmp_path, _main("    cb_reserve_back(0, 1);", decl, "    cb_push_back(0, 1);"))
    assert e.value.loc.line == 4
    assert "at file scope" in e.value.detail
