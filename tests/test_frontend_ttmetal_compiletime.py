"""The tt-metal front end on C++ that is decided when the kernel is compiled: the JIT's own defines, template
disambiguators, attributes, parameter packs built from integer sequences and the like. Each small kernel written
here is read into the ops it stands for, or refused by name at its line. The vendor corpus figures these constructs
move are in benchmarks/README.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Pop, Push, ReadTiles, Reserve, Wait
from verispatial.ir.program import walk


def _read(tmp_path: Path, source: str, kernel: dict[str, Any] | None = None, args: dict[str, Any] | None = None,
          files: dict[str, str] | None = None) -> Any:
    """The one engine program of ``source`` (a whole kernel file, with ``files`` beside it) on core (0,0): a reader
    on NoC 0, buffer c_0 (one bf16 tile a page, 8 pages), tensors ``t`` and ``u`` (32 x 256) at runtime args
    ``addr`` and ``addr2``."""
    (tmp_path / "k.cpp").write_text(source)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    k = {"name": "k", "source": "k.cpp", "processor": "reader", "noc": 0, "runtime_args": ["addr", "addr2"],
         **(kernel or {})}
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "snippet", "kernel_root": str(tmp_path),
            "tensors": [{"name": n, "shape": [32, 256], "dtype": "bf16", "role": "input"} for n in ("t", "u")],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [k],
            "work_units": [{"cores": "0,0", "kernels": ["k"],
                            "runtime_args": {"k": {"addr": {"tensor": "t"}, "addr2": {"tensor": "u"},
                                                   **(args or {})}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _main(*body: str, prelude: tuple[str, ...] = ()) -> str:
    return "\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude, "void kernel_main() {", *body, "}"])


def _ops(ep: Any) -> list[tuple[str, int]]:
    return [(type(op).__name__, op.pages) for op in walk(ep.ops) if isinstance(op, (Reserve, Push, Wait, Pop))]


# ------------------------------------------------------------------ the JIT's KERNEL_BUILD


#: a compile-time-arg struct as deepseek_prefill's combine_fabric2d_collector_ct_args.hpp:34-76 writes it: the host's
#: constructor under ``#ifndef KERNEL_BUILD``, the kernel's reading the args under ``#else``
_CT_ARGS_HEADER = "\n".join([
    "#pragma once",
    "struct CtArgs {",
    "    uint32_t pages;",
    "#ifndef KERNEL_BUILD",
    "    CtArgs(uint32_t n) : pages(n) {}",
    "#else",
    "    constexpr CtArgs() : pages(get_compile_time_arg_val(0)) {}",
    "#endif",
    "};"])


def test_kernel_build_is_defined_for_every_kernel(tmp_path: Path) -> None:
    """The JIT compiles a kernel with ``-DKERNEL_BUILD``: a shared header's kernel side is the one read, and its
    constructor reads the compile-time arg (3 pages, not a field of no initializer)."""
    ep = _read(tmp_path, _main("    constexpr CtArgs ct{};", "    cb_reserve_back(0, ct.pages);",
                               "    cb_push_back(0, ct.pages);", prelude=('#include "ct_args.hpp"',)),
               kernel={"compile_time_args": [3]}, files={"ct_args.hpp": _CT_ARGS_HEADER})
    assert _ops(ep) == [("Reserve", 3), ("Push", 3)]


def test_kernel_build_host_side_is_not_read(tmp_path: Path) -> None:
    """What only the host compiles is left out: a kernel that named the host's constructor does not build."""
    with pytest.raises(Refused, match="constructor of CtArgs not chosen"):
        _read(tmp_path, _main("    CtArgs ct(3);", "    cb_reserve_back(0, ct.pages);",
                              prelude=('#include "ct_args.hpp"',)),
              kernel={"compile_time_args": [3]}, files={"ct_args.hpp": _CT_ARGS_HEADER})


# ------------------------------------------------------------------ the ``template`` disambiguator


def test_template_keyword_after_a_scope_is_the_member(tmp_path: Path) -> None:
    """``R::template get<2>()`` and ``R::template put(n)`` (grid_sample_reader_common.hpp:338) call ``R``'s static
    members: the keyword only tells the compiler a member of a dependent type is a template."""
    ep = _read(tmp_path, _main("    cb_reserve_back(0, R::template get<2>());", "    R::template put(3);", prelude=(
        "struct R {",
        "    template <uint32_t N> static uint32_t get() { return N; }",
        "    static void put(uint32_t n) { cb_push_back(0, n); }",
        "};")))
    assert _ops(ep) == [("Reserve", 2), ("Push", 3)]


# ------------------------------------------------------------------ attributes on statements


def test_likely_attribute_on_a_branch_is_a_hint(tmp_path: Path) -> None:
    """``if (c) [[unlikely]] { ... }`` (strided_ring_reduce_scatter_common.hpp:77): the attribute tells the compiler
    which way to lay the code out; the branch is the branch."""
    ep = _read(tmp_path, _main("    uint32_t n = 3;", "    if (n > 2) [[unlikely]] { n = 5; }",
                               "    [[likely]] cb_reserve_back(0, n);"))
    assert _ops(ep) == [("Reserve", 5)]


# ------------------------------------------------------------------ Noc objects


def test_noc_of_the_kernels_own_noc(tmp_path: Path) -> None:
    """``Noc noc_obj(noc_index);`` (moe_gpt/device/kernels/tilize_reader.cpp:252) parses as a function declaration,
    C++'s most vexing parse; it and ``Noc()`` are the kernel's NoC, whose barrier the reading follows."""
    ep = _read(tmp_path, _main("    Noc noc_obj(noc_index);", "    cb_reserve_back(0, 1);",
                               "    noc_obj.async_read_barrier();", "    Noc().async_read_barrier();",
                               "    cb_push_back(0, 1);"))
    assert _ops(ep) == [("Reserve", 1), ("Push", 1)]


def test_noc_of_another_noc_is_not_followed(tmp_path: Path) -> None:
    """A Noc object of the other NoC: its transfers and barriers are not the kernel's NoC's."""
    with pytest.raises(Refused, match="a Noc of another NoC than the kernel's NoC 0"):
        _read(tmp_path, _main("    Noc noc_alt(1 - noc_index);", "    noc_alt.async_read_barrier();"))
    with pytest.raises(Refused, match="a Noc of another NoC than the kernel's NoC 0"):
        _read(tmp_path, _main("    Noc noc_alt(1);", "    noc_alt.async_read_barrier();"))


# ------------------------------------------------------------------ conversions to an enum


def test_functional_cast_to_an_enum_is_its_number(tmp_path: Path) -> None:
    """``ReplicateGroup(cluster_axis)`` of a kernel enum (moe_gpt/device/kernels/tilize_reader.cpp:326) and
    ``tt::tt_fabric::Topology(get_compile_time_arg_val(0))`` of a device enum (fabric_edm_types.hpp:11) compare with
    their enumerators by value."""
    ep = _read(tmp_path, _main(
        "    constexpr Group axis = Group(get_compile_time_arg_val(1));",
        "    constexpr auto topology = tt::tt_fabric::Topology(get_compile_time_arg_val(0));",
        "    if constexpr (topology == tt::tt_fabric::Topology::Ring) { cb_reserve_back(0, 2); }",
        "    if constexpr (axis == Group::COLS) { cb_reserve_back(0, 3); } else { cb_reserve_back(0, 4); }",
        prelude=("enum class Group : int { NONE = 0, ROWS = 1, COLS = 2 };",)),
        kernel={"compile_time_args": [2, 1]})
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 4)]


def test_functional_cast_to_an_enum_of_a_value_not_followed(tmp_path: Path) -> None:
    """The conversion of a runtime value is no enumerator: a branch on it is refused, never taken either way."""
    with pytest.raises(Refused, match="branch on a value not known statically"):
        _read(tmp_path, _main("    Group g = Group(get_arg_val<uint32_t>(2));",
                              "    if (g == Group::COLS) { cb_reserve_back(0, 3); }",
                              prelude=("enum class Group : int { NONE = 0, ROWS = 1, COLS = 2 };",)),
              kernel={"runtime_args": ["addr", "addr2", "g"]}, args={"g": "0..2"})


# ------------------------------------------------------------------ parameter packs from integer sequences


#: minimal_matmul/device/kernels/matmul_dataflow_common.hpp:29-52: a tuple of accessors built by expanding the packs
#: an integer sequence and a tuple type deduce
_ACCESSOR_TUPLE = (
    "template <typename... Args, uint32_t... Indexes>",
    "auto make_impl(const std::tuple<Args...>& args_tuple, uint32_t start, uint32_t page_size,",
    "               std::integer_sequence<uint32_t, Indexes...>) {",
    "    return std::make_tuple(TensorAccessor(",
    "        std::get<Indexes>(args_tuple), get_arg_val<uint32_t>(start + Indexes), page_size)...);",
    "}",
    "template <typename... Args>",
    "auto make_uniform(const std::tuple<Args...>& args_tuple, uint32_t start, uint32_t page_size) {",
    "    return make_impl(args_tuple, start, page_size, std::make_integer_sequence<uint32_t, sizeof...(Args)>());",
    "}")


def _tensors_read(ep: Any) -> list[tuple[str, Any]]:
    return [(op.tensor, op.tiles) for op in walk(ep.ops) if isinstance(op, ReadTiles)]


def test_pack_expansion_over_an_integer_sequence(tmp_path: Path) -> None:
    """``make_uniform(args, 0, 2048)`` expands ``TensorAccessor(std::get<Is>(args), get_arg_val(start + Is), ...)...``
    over ``Is = 0, 1``: element 1 is the accessor of runtime arg 1, tensor ``u`` (once ``call to
    make_integer_sequence``)."""
    ep = _read(tmp_path, _main(
        "    constexpr auto args = make_tensor_accessor_args_tuple<2, 0>();",
        "    auto accs = make_uniform(args, 0, 2048);",
        "    cb_reserve_back(0, 2);",
        "    noc_async_read_tile(0, std::get<1>(accs), get_write_ptr(0));",
        "    noc_async_read_tile(1, std::get<0>(accs), get_write_ptr(0) + 2048);",
        "    noc_async_read_barrier();",
        "    cb_push_back(0, 2);", prelude=_ACCESSOR_TUPLE))
    assert [t for t, _ in _tensors_read(ep)] == ["u", "t"]


def test_sizeof_of_a_pack_and_explicit_pack_arguments(tmp_path: Path) -> None:
    """``sizeof...(Is)`` of a pack given explicitly (``total<1, 2, 4>()``) and of one deduced from
    ``std::make_index_sequence<3>()``; an expansion in the arguments of a function the kernel defines."""
    ep = _read(tmp_path, _main(
        "    cb_reserve_back(0, total<1, 2, 4>());",
        "    cb_reserve_back(0, count(std::make_index_sequence<3>()));",
        "    cb_reserve_back(0, twice(std::make_index_sequence<3>()));", prelude=(
            "template <uint32_t... Is> uint32_t total() { return sizeof...(Is); }",
            "template <size_t... Is> uint32_t count(std::index_sequence<Is...>) { return sizeof...(Is) + 1; }",
            "uint32_t sum3(uint32_t a, uint32_t b, uint32_t c) { return a + b + c; }",
            "template <size_t... Is> uint32_t twice(std::index_sequence<Is...>) { return sum3((2 * Is)...); }")))
    assert _ops(ep) == [("Reserve", 3), ("Reserve", 4), ("Reserve", 6)]


def test_integer_sequence_of_a_length_not_known_is_refused(tmp_path: Path) -> None:
    """A sequence as long as a runtime arg: which elements there are is not known when the kernel is read."""
    with pytest.raises(Refused, match="integer sequence of a length not known statically"):
        _read(tmp_path, _main("    auto s = std::make_integer_sequence<uint32_t, get_arg_val<uint32_t>(2)>();"),
              kernel={"runtime_args": ["addr", "addr2", "n"]}, args={"n": "0..3"})


def test_pack_expansion_of_no_pack_is_refused(tmp_path: Path) -> None:
    """An expansion whose pattern names no pack the reading bound (here a plain variable) is refused by name, never
    read as one argument."""
    with pytest.raises(Refused, match="pack expansion of a pack not followed"):
        _read(tmp_path, _main("    uint32_t x = 1;", "    cb_reserve_back(0, one(x...));", prelude=(
            "uint32_t one(uint32_t a) { return a; }",)))


# ------------------------------------------------------------------ compile-time args by template


def test_get_ct_arg_and_the_compile_time_arg_array(tmp_path: Path) -> None:
    """``get_ct_arg<I>()`` is ``get_compile_time_arg_val(I)`` (api/compile_time_args.h:26-29, :64), and
    ``kernel_compile_time_args`` the host's args as a constant array (:23): sdpa's ring_joint_reader.cpp:514 reads
    its last arg as ``get_ct_arg<kernel_compile_time_args.size() - 1>()``."""
    ep = _read(tmp_path, _main("    cb_reserve_back(0, get_ct_arg<1>());",
                               "    cb_reserve_back(0, get_ct_arg<kernel_compile_time_args.size() - 1>());",
                               "    cb_reserve_back(0, kernel_compile_time_args[0] + kernel_compile_time_args.size());"),
               kernel={"compile_time_args": [5, 3, 7]})
    assert _ops(ep) == [("Reserve", 3), ("Reserve", 7), ("Reserve", 8)]
    with pytest.raises(Refused, match="compile-time arg the host does not give"):
        _read(tmp_path, _main("    cb_reserve_back(0, get_ct_arg<3>());"), kernel={"compile_time_args": [5, 3, 7]})


# ------------------------------------------------------------------ enums defined in a function


def test_local_enum_enumerators_are_numbers(tmp_path: Path) -> None:
    """``enum SlotState : uint8_t { IDLE = 0, SRC_PENDING = 1, ... };`` in a function body
    (padded_slice_reader_rm_interleaved_start_id.cpp:91): its enumerators are numbers in that scope, the next one
    more than the one before; a scoped enum's compare by name (once ``statement enum_specifier``)."""
    ep = _read(tmp_path, _main(
        "    enum SlotState : uint8_t { IDLE = 0, SRC_PENDING = 2, READY };",
        "    enum class Mode { A, B };",
        "    SlotState s = READY;",
        "    Mode m = Mode::B;",
        "    if (s == READY && m == Mode::B) { cb_reserve_back(0, s); }",
        "    if (m == Mode::A) { cb_reserve_back(0, 7); }"))
    assert _ops(ep) == [("Reserve", 3)]


def test_local_enum_is_local_to_its_block(tmp_path: Path) -> None:
    """Its enumerators are not defined past the block that defines the enum."""
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    { enum E { ONE = 1 }; }", "    cb_reserve_back(0, ONE);"))


def test_source_place_builtins_are_values_not_followed(tmp_path: Path) -> None:
    """``uint32_t call_line = __builtin_LINE()`` (ternary_sfpu_copy_init.hpp:29): the caller's line, for a debug
    sentinel; a page count from it is refused by name (once ``call to __builtin_LINE``)."""
    ep = _read(tmp_path, _main("    note(2);", prelude=(
        "inline void note(uint32_t n, uint32_t call_line = __builtin_LINE()) { cb_reserve_back(0, n); }",)))
    assert _ops(ep) == [("Reserve", 2)]
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    cb_reserve_back(0, __builtin_LINE());"))


# ------------------------------------------------------------------ a buffer's extent


def test_dataflow_buffer_total_extent(tmp_path: Path) -> None:
    """``get_total_num_entries()`` and ``get_total_size_bytes()`` (api/dataflow/dataflow_buffer.h:169-172) are the
    host buffer's entries and ``entries * entry_size`` (8 pages of 2,048 B; once ``DataflowBuffer.
    get_total_size_bytes``, prefetcher's reader_dram_metal2.cpp:47)."""
    ep = _read(tmp_path, _main("    DataflowBuffer dfb(0);", "    cb_reserve_back(0, dfb.get_total_num_entries());",
                               "    cb_push_back(0, dfb.get_total_size_bytes() / 4096);"))
    assert _ops(ep) == [("Reserve", 8), ("Push", 4)]


def test_function_parameter_pack(tmp_path: Path) -> None:
    """``AdditionalCBs&... additional_dfbs`` (kernel_util/compute/numeric.h:168) binds every argument from its
    position on, none included: ``sizeof...`` of it and of its type pack, and its expansion into another call."""
    ep = _read(tmp_path, _main(
        "    put(0, 1, 2);", "    put(0);", prelude=(
            "inline uint32_t add(uint32_t a, uint32_t b) { return a + b; }",
            "inline uint32_t add() { return 5; }",
            "template <typename... Ns> void put(uint32_t cb, Ns... ns) {",
            "    cb_reserve_back(cb, sizeof...(ns) + sizeof...(Ns) + 1);",
            "    cb_push_back(cb, add(ns...));",
            "}")))
    assert _ops(ep) == [("Reserve", 5), ("Push", 3), ("Reserve", 1), ("Push", 5)]


# ------------------------------------------------------------------ fold expressions


def test_comma_fold_reads_each_element_in_order(tmp_path: Path) -> None:
    """``(f(Is), ...)`` (kernel_util/compute/numeric.h:106's ``(accumulate_cb(dfb_additional), ...)``) is ``f(0),
    f(1), f(2)``: every call's ops, in order. It was once read as one value not followed, its ops dropped."""
    ep = _read(tmp_path, _main("    each(std::make_index_sequence<3>());", prelude=(
        "template <size_t... Is> void each(std::index_sequence<Is...>) { (cb_reserve_back(0, Is + 1), ...); }",)))
    assert _ops(ep) == [("Reserve", 1), ("Reserve", 2), ("Reserve", 3)]


def test_logical_and_arithmetic_folds(tmp_path: Path) -> None:
    """``(... && (Is < 5))``, ``(Is > 1 || ...)`` (stopping where C++ stops), ``(0 + ... + Is)`` and ``((Is + 1) *
    ...)`` of the pack 0, 1, 2 are numbers."""
    ep = _read(tmp_path, _main("    run(std::make_integer_sequence<uint32_t, 3>());", prelude=(
        "template <uint32_t... Is> void run(std::integer_sequence<uint32_t, Is...>) {",
        "    cb_reserve_back(0, (... && (Is < 5)) + (Is > 1 || ...));",
        "    cb_reserve_back(0, (0 + ... + Is));",
        "    cb_reserve_back(0, ((Is + 1) * ...));",
        "}")))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 3), ("Reserve", 6)]


def test_fold_refusals(tmp_path: Path) -> None:
    """A fold over a pack the reading did not bind is refused by name (never dropped with its calls' ops), as are a
    fold whose ``&&`` depends on a value not known before its last element and an arithmetic fold whose operands
    issue ops (C++ does not order them)."""
    with pytest.raises(Refused, match="fold expression over a pack not followed"):
        _read(tmp_path, _main("    each<uint32_t>(1);", prelude=(
            "template <typename T, size_t... Is> void each(T t) { (cb_reserve_back(0, Is), ...); }",)))
    with pytest.raises(Refused, match="fold of a value not known statically"):
        _read(tmp_path, _main("    run(std::make_index_sequence<2>(), get_arg_val<uint32_t>(2));", prelude=(
            "template <size_t... Is> void run(std::index_sequence<Is...>, uint32_t n) {",
            "    if ((... && (Is < n))) { cb_reserve_back(0, 1); }",
            "}")), kernel={"runtime_args": ["addr", "addr2", "n"]}, args={"n": "0..3"})
    with pytest.raises(Refused, match="fold expression whose operands issue ops"):
        _read(tmp_path, _main("    run(std::make_index_sequence<2>());", prelude=(
            "inline uint32_t take(uint32_t i) { cb_reserve_back(0, 1); return i; }",
            "template <size_t... Is> void run(std::index_sequence<Is...>) { cb_push_back(0, (take(Is) + ...)); }")))


def test_fold_choosing_a_tuple_element_on_a_runtime_index_is_refused(tmp_path: Path) -> None:
    """matmul_dataflow_common.hpp:394-410 writes through the accessor ``chunk_idx`` names, a runtime value, with
    ``((chunk_idx == Is ? (write(std::get<Is>(accs)), void()) : void()), ...)``: which write runs is not known, so the
    choice is refused by name, never read as no write."""
    with pytest.raises(Refused, match="branch on a runtime range"):
        _read(tmp_path, _main(
            "    pick(get_arg_val<uint32_t>(2), std::make_index_sequence<2>());", prelude=(
                "template <size_t... Is> void pick(uint32_t c, std::index_sequence<Is...>) {",
                "    ((c == Is ? (cb_reserve_back(0, Is + 1), void()) : void()), ...);",
                "}")), kernel={"runtime_args": ["addr", "addr2", "c"]}, args={"c": "0..1"})


def test_sequence_values_and_a_fold_dispatch_on_a_known_index(tmp_path: Path) -> None:
    """``std::index_sequence_for<Accessors...>{}`` (matmul_dataflow_common.hpp:473) is ``0 .. sizeof...(Accessors) -
    1`` and ``std::integer_sequence<uint32_t, 1, 4>{}`` its elements; the fold that picks a tuple element by an index
    known statically (:394-410) reads the one read it names, through element 1 (tensor ``u``)."""
    ep = _read(tmp_path, _main(
        "    constexpr auto args = make_tensor_accessor_args_tuple<2, 0>();",
        "    auto accs = make_uniform(args, 0, 2048);",
        "    cb_reserve_back(0, total(std::integer_sequence<uint32_t, 1, 4>{}));",
        "    read_chunk(accs, 1, get_write_ptr(0));",
        "    noc_async_read_barrier();", prelude=(
            *_ACCESSOR_TUPLE,
            "template <uint32_t... Is> uint32_t total(std::integer_sequence<uint32_t, Is...>) { return (Is + ...); }",
            "template <typename Tuple, size_t... Is>",
            "void pick(const Tuple& accs, uint32_t c, uint32_t l1, std::index_sequence<Is...>) {",
            "    ((c == Is ? (noc_async_read_tile(0, std::get<Is>(accs), l1), void()) : void()), ...);",
            "}",
            "template <typename... Accessors>",
            "void read_chunk(const std::tuple<Accessors...>& accs, uint32_t c, uint32_t l1) {",
            "    pick(accs, c, l1, std::index_sequence_for<Accessors...>{});",
            "}")))
    assert _ops(ep) == [("Reserve", 5)]
    assert [t for t, _ in _tensors_read(ep)] == ["u"]


def test_expansion_in_a_braced_list_reads_each_element_or_is_refused(tmp_path: Path) -> None:
    """The C++11 form of a comma fold, ``std::initializer_list<int>{(f(Is), 0)...}``, issues ``f(0), f(1), f(2)`` in
    order ([dcl.init.list]/4); it was read as one value not followed and its ops dropped (as were those of ``int
    dummy[] = {(f(Is), 0)...}`` and ``std::array<int, N> a{(f(Is), 0)...}``, now refused by name)."""
    each = "template <size_t... Is> void each(std::index_sequence<Is...>) {{ {} }}"
    ep = _read(tmp_path, _main("    each(std::make_index_sequence<3>());", prelude=(
        each.format("(void)std::initializer_list<int>{(cb_reserve_back(0, Is + 1), 0)...};"),)))
    assert _ops(ep) == [("Reserve", 1), ("Reserve", 2), ("Reserve", 3)]
    for body in ("int dummy[] = {(cb_reserve_back(0, Is + 1), 0)...}; (void)dummy;",
                 "std::array<int, sizeof...(Is)> a{(cb_reserve_back(0, Is + 1), 0)...}; (void)a;"):
        with pytest.raises(Refused, match="pack expansion in a place not read"):
            _read(tmp_path, _main("    each(std::make_index_sequence<3>());", prelude=(each.format(body),)))


def test_fold_of_an_assignment_is_refused(tmp_path: Path) -> None:
    """``(n = ... = Is)`` stores 0, 1 then 2 into ``n`` (a binary left fold); it was read as a value not followed and
    ``n`` kept its 1: ``cb_reserve_back(0, n + 1)`` read as 2 pages where the kernel reserves 3."""
    with pytest.raises(Refused, match="fold expression of an assignment"):
        _read(tmp_path, _main("    each(std::make_index_sequence<3>());", prelude=(
            "template <size_t... Is> void each(std::index_sequence<Is...>) {",
            "    uint32_t n = 1; (n = ... = Is); cb_reserve_back(0, n + 1);",
            "}")))


def test_an_expression_the_reading_has_no_case_for_holding_a_call_is_refused(tmp_path: Path) -> None:
    """A GNU statement expression ``({ f(); 0u; })`` was read as one value not followed and the reserve inside it
    dropped; such a construct holding a statement, a call, a store or an increment is refused by name."""
    for body in ("    uint32_t x = ({ cb_reserve_back(0, 1); 0u; });", "    ({ cb_reserve_back(0, 1); });",
                 "    uint32_t x = ({ 0u; });"):
        with pytest.raises(Refused, match="expression not followed"):
            _read(tmp_path, _main(body))


def test_an_index_with_effects_into_an_array_not_followed_is_read(tmp_path: Path) -> None:
    """An array declared with an initializer (``uint32_t a[2] = {};``) is a value the reading does not index; a store
    ``a[i++] = 1`` or a load ``a[(f(), 0)]`` of it dropped its index, so ``i`` kept 0 and ``f``'s reserve was lost
    (``cb_reserve_back(0, i)`` read as no reserve where the kernel reserves 2 pages)."""
    ep = _read(tmp_path, _main("    uint32_t a[2] = {0, 0};", "    uint32_t i = 0;", "    a[i++] = 1;", "    a[i++] = 1;",
                               "    cb_reserve_back(0, i);"))
    assert _ops(ep) == [("Reserve", 2)]
    ep = _read(tmp_path, _main("    uint32_t a[2] = {};", "    uint32_t y = a[(cb_reserve_back(0, 1), 0)];", "    (void)y;",
                               "    a[(cb_reserve_back(0, 3), 1)] = 1;"))
    assert _ops(ep) == [("Reserve", 1), ("Reserve", 3)]
