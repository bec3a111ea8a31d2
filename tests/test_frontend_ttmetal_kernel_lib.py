"""The tt-metal front end on the constructs ttnn's kernel_lib helpers are written in, each on a small kernel written
here: struct values (aggregates, constructors, static member functions, methods that change fields), overloads told
apart by their argument types, default arguments of forward declarations, ``std::optional``, type traits and
variable templates, includes read with the macros in force at their line, and the ``eltwise_chain`` model, whose
vendor declarations are stood in for by a small header written here (kernel_lib/eltwise/core/chain.inl). The corpus
figures these constructs move are in benchmarks/README.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import AcquireAcc, Compute, Loop, Operand, PackAcc, Pop, Push, ReleaseAcc, Reserve, Wait


def _read(tmp_path: Path, source: str, processor: str = "compute", kernel: dict[str, Any] | None = None,
          args: dict[str, Any] | None = None, fp32: bool = False) -> Any:
    """The one engine program of ``source`` on core (0,0): buffers c_0, c_1, c_2 and c_16 (one bf16 tile a page, 8
    pages; c_2 fp32), runtime arg ``n``."""
    (tmp_path / "k.cpp").write_text(source)
    k = {"name": "k", "source": "k.cpp", "processor": processor, "runtime_args": ["n"],
         "fp32_dest_acc_en": fp32, **(kernel or {})}
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "snippet", "kernel_root": str(tmp_path),
            "tensors": [{"name": "t", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": n, "index": i, "entry_size": 4096 if i == 2 else 2048, "entries": 8,
                         "data_format": "fp32" if i == 2 else "bf16"}
                        for n, i in (("c_0", 0), ("c_1", 1), ("c_2", 2), ("c_16", 16))],
            "kernels": [k],
            "work_units": [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": {"n": 3, **(args or {})}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


#: c_16's buffer id in the imported program (ids are dense: c_0, c_1, c_2, c_16)
OUT = 3


def _main(*body: str, prelude: tuple[str, ...] = ()) -> str:
    return "\n".join(['#include "api/compute/common.h"', *prelude, "void kernel_main() {", *body, "}"])


def _flat(ops: Any) -> list[Any]:
    out: list[Any] = []
    for op in ops:
        if isinstance(op, Loop):
            out.append(("Loop", op.count))
            out.extend(("  ", x) for x in _flat(op.body))
        else:
            out.append(op)
    return out


def _cb(ep: Any) -> list[tuple[str, int, int]]:
    """The buffer ops in program order, loops flattened once."""
    def walk(ops: Any) -> list[tuple[str, int, int]]:
        out = []
        for op in ops:
            if isinstance(op, Loop):
                out.extend(walk(op.body))
            elif isinstance(op, (Reserve, Push, Wait, Pop)):
                out.append((type(op).__name__, op.buf, op.pages))
        return out
    return walk(ep.ops)


# ------------------------------------------------------------------ struct values


SHAPE = (
    "enum class Tail : uint8_t { Valid, Full };",
    "struct Shape {",
    "    uint32_t h;",
    "    uint32_t w;",
    "    uint32_t blk;",
    "    Tail tail;",
    "    constexpr Shape(uint32_t H, uint32_t W) : h(H), w(W), blk(1), tail(Tail::Valid) {}",
    "    explicit constexpr Shape(uint32_t n) : Shape(1, n) {}",
    "    static constexpr Shape tiles(uint32_t n) { return {1, n}; }",
    "    constexpr Shape block(uint32_t b, Tail t = Tail::Valid) { blk = b; tail = t; return *this; }",
    "};",
    "struct Pair { uint32_t a; uint32_t b = 7; static constexpr Pair of(uint32_t x) { return {x}; } };",
)


def test_struct_built_by_static_factory_constructor_and_method(tmp_path: Path) -> None:
    """kernel_lib's ``IterationShape::tiles(n).block_size(b)`` (eltwise/api/chain.hpp:146-173): a static member
    function returning a braced list builds the struct through its constructor (a delegating one included); a method
    sets fields and returns ``*this``; an aggregate takes its fields in order and the rest from their defaults."""
    ep = _read(tmp_path, _main(
        "    Shape s = Shape::tiles(4).block(2);",
        "    cb_reserve_back(0, s.w); cb_reserve_back(0, s.blk); cb_reserve_back(0, s.h);",
        "    Shape t(3);",
        "    t.block(5);",
        "    cb_reserve_back(0, t.w); cb_reserve_back(0, t.blk);",
        "    Pair p = Pair::of(2);",
        "    cb_reserve_back(0, p.a); cb_reserve_back(0, p.b);",
        prelude=SHAPE))
    assert _cb(ep) == [("Reserve", 0, n) for n in (4, 2, 1, 3, 5, 2, 7)]


def test_struct_field_without_initializer_is_not_followed(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    Pair p{};", "    cb_reserve_back(0, p.a);", prelude=SHAPE))
    assert e.value.loc.line == len(SHAPE) + 4


def test_overloads_are_told_apart_by_enumerator_types_and_declared_defaults(tmp_path: Path) -> None:
    """chain.inl:210-242 defines five ``input`` overloads; chain.hpp:381-402 declares the defaults. A 4-argument
    call whose last argument is a ``Reconfig`` takes the 4-parameter overload, one whose second is a ``Bcast`` the
    broadcasting one; the defaults a forward declaration gives are used."""
    prelude = (
        "enum class Wait : uint8_t { None, PerTile, Upfront };",
        "enum class Reconfig : bool { Off, On };",
        "enum class Mapping : uint8_t { Block, Scalar };",
        "enum class Bcast : uint8_t { None, Col };",
        "constexpr uint32_t pick(uint32_t cb, Wait w = Wait::PerTile, Mapping m = Mapping::Scalar,"
        " Reconfig r = Reconfig::On);",
        "constexpr uint32_t pick(uint32_t cb, Wait w, Mapping m, Reconfig r) { return cb + 1; }",
        "constexpr uint32_t pick(uint32_t cb, Wait w, Reconfig r) { return cb + 2; }",
        "constexpr uint32_t pick(uint32_t cb, Bcast b, Wait w = Wait::PerTile) { return cb + 3; }",
    )
    ep = _read(tmp_path, _main(
        "    cb_reserve_back(0, pick(0));",
        "    cb_reserve_back(0, pick(0, Wait::Upfront, Reconfig::Off));",
        "    cb_reserve_back(0, pick(0, Bcast::Col));",
        "    cb_reserve_back(0, pick(0, Bcast::Col, Wait::None));",
        "    cb_reserve_back(0, pick(0, Wait::None, Mapping::Block));",
        prelude=prelude))
    assert _cb(ep) == [("Reserve", 0, n) for n in (1, 2, 3, 3, 1)]


# ------------------------------------------------------------------ std::optional, traits, variable templates


def test_optional_parameter_defaults_to_nullopt(tmp_path: Path) -> None:
    """kernel_lib/tilize_helpers.inl:66: ``std::optional<uint32_t> total_input_pages`` (``= std::nullopt`` in the
    .hpp declaration), ``has_value()``, ``value_or(0)`` and ``*opt``."""
    prelude = (
        "inline void put(uint32_t n, std::optional<uint32_t> total = std::nullopt);",
        "inline void put(uint32_t n, std::optional<uint32_t> total) {",
        "    const bool asym = total.has_value();",
        "    if (asym) { cb_reserve_back(0, *total); } else { cb_reserve_back(0, n); }",
        "    cb_reserve_back(0, total.value_or(6));",
        "}")
    ep = _read(tmp_path, _main("    put(2);", "    put(2, 5);", prelude=prelude))
    assert _cb(ep) == [("Reserve", 0, 2), ("Reserve", 0, 6), ("Reserve", 0, 5), ("Reserve", 0, 5)]


def test_type_trait_and_variable_template(tmp_path: Path) -> None:
    """kernel_lib/reduce_helpers_compute.hpp: ``is_accumulate<T>`` derives ``std::false_type`` but for its
    specialization ``is_accumulate<Accumulate> : std::true_type``; ``is_accumulate_v<T>`` reads it; the type is
    deduced from the argument; ``std::is_same_v`` compares two types."""
    prelude = (
        "struct Accumulate { uint32_t cb = 4; };",
        "struct NoAccumulation {};",
        "template <typename T> struct is_accumulate : std::false_type {};",
        "template <> struct is_accumulate<Accumulate> : std::true_type {};",
        "template <typename T> inline constexpr bool is_accumulate_v = is_accumulate<T>::value;",
        "template <typename A = NoAccumulation> void run(A acc = A{}) {",
        "    if constexpr (is_accumulate_v<A>) { cb_reserve_back(0, acc.cb); } else { cb_reserve_back(0, 1); }",
        "    if constexpr (std::is_same_v<A, NoAccumulation>) { cb_push_back(0, 1); }",
        "}")
    ep = _read(tmp_path, _main("    run();", "    run(Accumulate{});", prelude=prelude))
    assert _cb(ep) == [("Reserve", 0, 1), ("Push", 0, 1), ("Reserve", 0, 4)]


def test_static_member_of_a_struct_template_instance(tmp_path: Path) -> None:
    """kernel_lib/untilize_helpers.inl:78-89,164: ``using dispatch = UntilizeDispatchConfig<w, in, out>;`` then
    ``dispatch::use_block_based_pack_path``, whose initializer reads ``DEST_AUTO_LIMIT`` and an earlier member."""
    prelude = (
        "template <uint32_t W>",
        "struct Config {",
        "    static constexpr uint32_t limit = 8;",
        "    static constexpr bool wide = W > limit;",
        "};")
    src = _main("    using cfg = Config<get_compile_time_arg_val(0)>;",
                "    if constexpr (cfg::wide) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 1); }",
                prelude=prelude)
    assert _cb(_read(tmp_path, src, kernel={"compile_time_args": [9]})) == [("Reserve", 0, 2)]
    assert _cb(_read(tmp_path, src, kernel={"compile_time_args": [3]})) == [("Reserve", 0, 1)]


def test_jit_descriptors_and_dst_accum_mode(tmp_path: Path) -> None:
    """A compute kernel's ``unpack_src_format[cb]`` is the host buffer's data format (the JIT's
    chlkc_descriptors.h, kernel_lib/tilize_helpers.inl:16-23), ``DST_ACCUM_MODE`` its ``fp32_dest_acc_en``, and
    kernel_lib/dest_helpers.hpp's ``DEST_AUTO_LIMIT`` follows (half sync: 8 tiles, 4 at fp32)."""
    prelude = (
        "constexpr bool full_sync() {",
        "#if defined(DST_SYNC_MODE)",
        "    return (DST_SYNC_MODE == DstSync::SyncFull);",
        "#else",
        "    static_assert(false);",
        "#endif",
        "}",
        "constexpr uint32_t limit() {",
        "#if defined(UCK_CHLKC_MATH)",
        "    constexpr bool fp32 = DST_ACCUM_MODE;",
        "#endif",
        "    if constexpr (full_sync()) { return fp32 ? 8 : 16; } else { return fp32 ? 4 : 8; }",
        "}")
    src = _main(
        "    if constexpr (unpack_src_format[2] == DataFormat::Float32) { cb_reserve_back(2, 1); }",
        "    if constexpr (unpack_src_format[0] == DataFormat::Float32) { cb_reserve_back(0, 1); }",
        "    cb_reserve_back(1, limit());",
        prelude=prelude)
    assert _cb(_read(tmp_path, src)) == [("Reserve", 2, 1), ("Reserve", 1, 8)]
    assert _cb(_read(tmp_path, src, fp32=True)) == [("Reserve", 2, 1), ("Reserve", 1, 4)]


def test_thread_wrapper_of_a_check_only_helper(tmp_path: Path) -> None:
    """``UNPACK((assert_input_dfb_size<...>(...)))`` (kernel_lib/reduce_helpers_compute.inl:414): a helper whose
    body only asserts runs on one TRISC and is no op; one that moves pages is refused as the LLK wrappers are."""
    prelude = ("inline void check(uint32_t cb) { ASSERT(cb < 32); }",
               "inline void move(uint32_t cb) { cb_pop_front(cb, 1); }")
    ep = _read(tmp_path, _main("    UNPACK((check(0)));", "    cb_reserve_back(0, 1);", prelude=prelude))
    assert _cb(ep) == [("Reserve", 0, 1)]
    with pytest.raises(Refused, match="call to UNPACK"):
        _read(tmp_path, _main("    UNPACK((move(0)));", prelude=prelude))


def test_immediately_invoked_lambda(tmp_path: Path) -> None:
    ep = _read(tmp_path, _main("    const uint32_t k = [&]() -> uint32_t { return 3; }();", "    cb_wait_front(0, k);"))
    assert _cb(ep) == [("Wait", 0, 3)]


def test_include_reads_with_the_macros_at_its_line(tmp_path: Path) -> None:
    """kernel_lib/eltwise/binary/sfpu/basic.inl: ``#define CKL_..._BASIC``, ``#include "sfpu.inl"``, ``#undef``;
    sfpu.inl (no ``#pragma once``) defines each part under its macro and is read again by the next includer."""
    (tmp_path / "parts.inl").write_text("\n".join([
        "#if defined(PART_A)", "inline uint32_t a() { return 2; }", "#endif",
        "#if defined(PART_B)", "inline uint32_t b() { return 5; }", "#endif"]))
    (tmp_path / "a.hpp").write_text('#pragma once\n#define PART_A\n#include "parts.inl"\n#undef PART_A\n')
    (tmp_path / "b.hpp").write_text('#pragma once\n#define PART_B\n#include "parts.inl"\n#undef PART_B\n')
    ep = _read(tmp_path, _main("    cb_reserve_back(0, a()); cb_reserve_back(0, b());",
                               prelude=('#include "a.hpp"', '#include "b.hpp"', '#include "a.hpp"')))
    assert _cb(ep) == [("Reserve", 0, 2), ("Reserve", 0, 5)]


# ------------------------------------------------------------------ eltwise_chain


def _chain_lib(root: Path) -> None:
    """The declarations of kernel_lib/eltwise/api/chain.hpp and core/chain.inl the model reads (names, enumerators,
    struct layouts and defaults as the vendor's), and a DEST-only element as unary/math.hpp declares them."""
    d = root / "ttnn" / "cpp" / "ttnn" / "kernel_lib" / "eltwise" / "core"
    d.mkdir(parents=True, exist_ok=True)
    (d / "chain.inl").write_text("\n".join([
        "#pragma once",
        "namespace compute_kernel_lib {",
        "enum class BlockTailSync : uint8_t { ValidTiles, FullBlock };",
        "struct IterationShape {",
        "    uint32_t Ht; uint32_t Wt; uint32_t block_tiles; BlockTailSync tail_sync;",
        "    constexpr IterationShape(uint32_t H, uint32_t W) : Ht(H), Wt(W), block_tiles(1),"
        " tail_sync(BlockTailSync::ValidTiles) {}",
        "    static constexpr IterationShape tiles(uint32_t n) { return {1, n}; }",
        "    static constexpr IterationShape grid(uint32_t H, uint32_t W) { return {H, W}; }",
        "    constexpr IterationShape block_size(uint32_t value, BlockTailSync tail = BlockTailSync::ValidTiles) {",
        "        block_tiles = value; tail_sync = tail; return *this; }",
        "};",
        "enum class WaitPolicy : uint8_t { None, PerTile, PerBlockSize, Upfront, Cumulative };",
        "enum class PopPolicy : uint8_t { None, PerTile, PerBlockSize, AtEnd };",
        "enum class ReservePolicy : uint8_t { None, PerTile, PerBlockSize, Upfront, PerOuter, OneUpfront };",
        "enum class PushPolicy : uint8_t { None, PerTile, PerBlockSize, AtEnd, PerOuter, OneAtEnd };",
        "enum class InputTileMapping : uint8_t { Block, Row, Col, Scalar };",
        "enum class TileAddressing : uint8_t { Direct, Offset, Strided };",
        "enum class DataFormatReconfig : bool { Disabled = false, Enabled = true };",
        "enum class L1Accumulation : uint8_t { Disabled, Enabled, AddToExisting };",
        "enum class DestAccumulation : uint8_t { Disabled, PerRow, WholeShape };",
        "enum class PackRelu : bool { Disabled = false, Zero = true };",
        "enum class BroadcastDim : uint8_t { None = 0, Col = 1, Row = 2, Scalar = 3 };",
        "enum class BinaryFpuOp : uint8_t { Add, Sub, Mul };",
        "enum class Dst : uint32_t { D0 = 0, D1 = 1, D2 = 2, D3 = 3 };",
        "struct InputSpec { uint32_t cb_id; WaitPolicy wait; PopPolicy pop; InputTileMapping mapping;"
        " DataFormatReconfig reconfig; TileAddressing addressing; };",
        "struct BroadcastInputSpec { InputSpec input_spec; BroadcastDim broadcast;",
        "    constexpr BroadcastInputSpec(InputSpec spec, BroadcastDim dim) noexcept : input_spec(spec),"
        " broadcast(dim) {}",
        "    constexpr BroadcastInputSpec(InputSpec spec) noexcept : input_spec(spec),"
        " broadcast(BroadcastDim::None) {} };",
        "struct OutputSpec { uint32_t cb_id; ReservePolicy reserve; PushPolicy push; DataFormatReconfig reconfig;",
        "    TileAddressing addressing; DestAccumulation dest_accumulation; L1Accumulation l1_accumulation;"
        " PackRelu relu; };",
        "constexpr InputSpec input(uint32_t cb_id, WaitPolicy wait = WaitPolicy::PerTile, PopPolicy pop ="
        " PopPolicy::PerTile, InputTileMapping mapping = InputTileMapping::Scalar, DataFormatReconfig reconfig ="
        " DataFormatReconfig::Enabled, TileAddressing addressing = TileAddressing::Direct) noexcept {",
        "    return {cb_id, wait, pop, mapping, reconfig, addressing}; }",
        "constexpr BroadcastInputSpec input(uint32_t cb_id, BroadcastDim broadcast, WaitPolicy wait ="
        " WaitPolicy::PerTile, PopPolicy pop = PopPolicy::PerTile) noexcept {",
        "    return {input(cb_id, wait, pop), broadcast}; }",
        "constexpr OutputSpec output(uint32_t cb_id, ReservePolicy reserve = ReservePolicy::PerTile, PushPolicy"
        " push = PushPolicy::PerTile, DataFormatReconfig reconfig = DataFormatReconfig::Enabled, TileAddressing"
        " addressing = TileAddressing::Direct, DestAccumulation dest_accumulation = DestAccumulation::Disabled,"
        " L1Accumulation l1_accumulation = L1Accumulation::Disabled, PackRelu relu = PackRelu::Disabled)"
        " noexcept {",
        "    return {cb_id, reserve, push, reconfig, addressing, dest_accumulation, l1_accumulation, relu}; }",
        "template <class Derived, Dst Slot> struct UnaryOp : UnaryOpTag {};",
        "template <class Derived, Dst In0, Dst In1, Dst Out> struct BinaryOp : BinaryOpTag {};",
        "template <Dst Slot = Dst::D0> struct Exp : UnaryOp<Exp<Slot>, Slot> { static void init() {} };",
        "template <Dst In0 = Dst::D0, Dst In1 = Dst::D1, Dst Out = Dst::D0>",
        "struct MulBinary : BinaryOp<MulBinary<In0, In1, Out>, In0, In1, Out> {};",
        "template <Dst Slot = Dst::D0> struct Sneaky : UnaryOp<Sneaky<Slot>, Slot> {",
        "    static void exec_impl(uint32_t o) { cb_wait_front(1, 1); } };",
        "template <class... Es> void eltwise_chain(IterationShape shape, Es... elts) { }",
        "}"]))


def _chain(*body: str) -> str:
    return "\n".join(['#include "ttnn/cpp/ttnn/kernel_lib/eltwise/core/chain.inl"', "namespace ckl = compute_kernel_lib;",
                      "void kernel_main() {", "    uint32_t n = get_arg_val<uint32_t>(0);",
                      "    DataflowBuffer in(0); DataflowBuffer b(1); DataflowBuffer out(16);", *body, "}"])


def test_chain_streaming_unary_per_tile(tmp_path: Path) -> None:
    """``CopyTile<input(in)>``, ``Exp<>``, ``PackTile<output(out)>`` over ``tiles(n)``: per tile, acquire, the copy's
    wait 1, copy and pop 1, exp, reserve 1, pack, push 1, release (chain.inl:2784-2932, 3278-3352) — a loop over the
    trip."""
    _chain_lib(tmp_path)
    ep = _read(tmp_path, _chain(
        "    ckl::eltwise_chain(ckl::IterationShape::tiles(n),",
        "        ckl::CopyTile<ckl::input(0)>{in},",
        "        ckl::Exp<>{},",
        "        ckl::PackTile<ckl::output(16)>{out});"), args={"n": "0..4"})
    (loop,) = ep.ops
    assert loop.count == "n"
    assert list(loop.body) == [AcquireAcc(1, "bf16"), Wait(0, 1), Compute("copy", 1, (Operand(0, 1),)), Pop(0, 1),
                               Compute("exp"), Reserve(OUT, 1), PackAcc(OUT, 1), Push(OUT, 1), ReleaseAcc()]
    lines = {ep.sources[i][1].line for i in range(len(ep.sources))}
    assert lines == {6, 7, 8, 9}  # each op at the element it comes from, the loop at the call


def test_chain_blocks_upfront_broadcast_and_tail(tmp_path: Path) -> None:
    """softmax.cpp:382-386's multiply: A waited upfront (Block mapping) and popped at the end, B a column
    broadcast of one tile, the output per block of ``ndst``; 5 tiles in blocks of 2 (two full blocks, a tail of 1),
    each block's DST lanes 0 and 1."""
    _chain_lib(tmp_path)
    ep = _read(tmp_path, _chain(
        "    ckl::eltwise_chain(ckl::IterationShape::tiles(5).block_size(2),",
        "        ckl::BinaryFpu<ckl::BinaryFpuOp::Mul,",
        "            ckl::input(0, ckl::WaitPolicy::Upfront, ckl::PopPolicy::AtEnd, ckl::InputTileMapping::Block),",
        "            ckl::input(1, ckl::BroadcastDim::Col, ckl::WaitPolicy::Upfront, ckl::PopPolicy::AtEnd)>{in, b},",
        "        ckl::PackTile<ckl::output(16, ckl::ReservePolicy::PerBlockSize, ckl::PushPolicy::PerBlockSize)>"
        "{out});"))
    mul = Compute("mul_bcast_col", 1, (Operand(0, 5), Operand(1, 1)))
    block = [AcquireAcc(2, "bf16"), mul, mul, Reserve(OUT, 2), PackAcc(OUT, 1), PackAcc(OUT, 1), Push(OUT, 2),
             ReleaseAcc()]
    assert _flat(ep.ops) == [Wait(0, 5), Wait(1, 1), ("Loop", 2), *(("  ", x) for x in block),
                             AcquireAcc(1, "bf16"), mul, Reserve(OUT, 1), PackAcc(OUT, 1), Push(OUT, 1), ReleaseAcc(),
                             Pop(0, 5), Pop(1, 1)]


def test_chain_block_clamped_by_lane_width_and_optional(tmp_path: Path) -> None:
    """``MulBinary<D0, D1, D0>`` is 2 DEST lanes wide: a requested block of 8 is clamped to 8 / 2 = 4 at bf16
    (chain.inl:1557-1567, dest_helpers.hpp:87-96) and 2 at fp32; ``Optional<false, ...>`` is no element; per-tile
    lifecycles clamp the block to 1 (chain.inl:3240)."""
    _chain_lib(tmp_path)
    body = ("    ckl::eltwise_chain(ckl::IterationShape::tiles(8).block_size(8),",
            "        ckl::CopyTile<ckl::input(0, ckl::WaitPolicy::PerBlockSize, ckl::PopPolicy::PerBlockSize,"
            " ckl::InputTileMapping::Block)>{in},",
            "        ckl::Optional<false, ckl::Exp<>>{},",
            "        ckl::MulBinary<ckl::Dst::D0, ckl::Dst::D1, ckl::Dst::D0>{},",
            "        ckl::PackTile<ckl::output(16, ckl::ReservePolicy::PerBlockSize, ckl::PushPolicy::PerBlockSize)>"
            "{out});")
    for fp32, blk in ((False, 4), (True, 2)):
        ep = _read(tmp_path, _chain(*body), fp32=fp32)
        (loop,) = ep.ops
        assert loop.count == 8 // blk
        assert loop.body[0] == AcquireAcc(2 * blk, "fp32" if fp32 else "bf16")
        assert loop.body[1] == Wait(0, blk)
        assert [op.kind for op in loop.body if isinstance(op, Compute)] == ["copy"] * blk + ["mul_binary"] * blk
    per_tile = _read(tmp_path, _chain(
        "    ckl::eltwise_chain(ckl::IterationShape::tiles(4).block_size(4),",
        "        ckl::CopyTile<ckl::input(0)>{in}, ckl::PackTile<ckl::output(16)>{out});"))
    assert per_tile.ops[0].count == 4
    assert per_tile.ops[0].body[1] == Wait(0, 1)


def test_chain_refusals_name_the_policy(tmp_path: Path) -> None:
    """What the model does not cover is refused by name at the element: a tile base, a cumulative wait, L1
    accumulation, blocks over a runtime count, a buffer other than the spec's, a DEST-only element whose body
    touches buffer pages, DST already held."""
    _chain_lib(tmp_path)
    cases = {
        "eltwise_chain operand with a tile base": "ckl::CopyTile<ckl::input(0, ckl::WaitPolicy::Upfront,"
        " ckl::PopPolicy::AtEnd, ckl::InputTileMapping::Scalar, ckl::DataFormatReconfig::Enabled,"
        " ckl::TileAddressing::Offset)>{in, 2}",
        "eltwise_chain Cumulative wait": "ckl::CopyTile<ckl::input(0, ckl::WaitPolicy::Cumulative,"
        " ckl::PopPolicy::AtEnd, ckl::InputTileMapping::Block)>{in}",
        "eltwise_chain element CopyTile bound to another buffer": "ckl::CopyTile<ckl::input(0)>{b}",
    }
    for construct, elem in cases.items():
        with pytest.raises(Refused, match=construct):
            _read(tmp_path, _chain(f"    ckl::eltwise_chain(ckl::IterationShape::tiles(4), {elem},",
                                   "        ckl::PackTile<ckl::output(16)>{out});"))
    with pytest.raises(Refused, match="eltwise_chain L1 accumulation"):
        _read(tmp_path, _chain("    ckl::eltwise_chain(ckl::IterationShape::tiles(4), ckl::CopyTile<ckl::input(0)>{in},",
                               "        ckl::PackTile<ckl::output(16, ckl::ReservePolicy::OneUpfront,"
                               " ckl::PushPolicy::OneAtEnd, ckl::DataFormatReconfig::Enabled,"
                               " ckl::TileAddressing::Direct, ckl::DestAccumulation::Disabled,"
                               " ckl::L1Accumulation::Enabled)>{out});"))
    with pytest.raises(Refused, match="eltwise_chain blocks over a runtime count"):
        _read(tmp_path, _chain(
            "    ckl::eltwise_chain(ckl::IterationShape::tiles(n).block_size(2),",
            "        ckl::CopyTile<ckl::input(0, ckl::WaitPolicy::PerBlockSize, ckl::PopPolicy::PerBlockSize,"
            " ckl::InputTileMapping::Block)>{in},",
            "        ckl::PackTile<ckl::output(16, ckl::ReservePolicy::PerBlockSize,"
            " ckl::PushPolicy::PerBlockSize)>{out});"), args={"n": "1..4"})
    with pytest.raises(Refused, match="eltwise_chain element Sneaky touching buffer pages"):
        _read(tmp_path, _chain("    ckl::eltwise_chain(ckl::IterationShape::tiles(1), ckl::CopyTile<ckl::input(0)>{in},",
                               "        ckl::Sneaky<>{}, ckl::PackTile<ckl::output(16)>{out});"))
    with pytest.raises(Refused, match="eltwise_chain while DST is held"):
        _read(tmp_path, _chain("    tile_regs_acquire();",
                               "    ckl::eltwise_chain(ckl::IterationShape::tiles(1), ckl::CopyTile<ckl::input(0)>{in},",
                               "        ckl::PackTile<ckl::output(16)>{out});", "    tile_regs_release();"))


def test_chain_program_certifies_and_a_short_reader_deadlocks(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A reader pushing ``n`` tiles into c_0, the chain copying them to c_16, a writer draining c_16: proved; the
    reader pushing one tile fewer than the chain waits for is refuted as a deadlock at the chain's wait."""
    from verispatial.cli import main

    def certify(path: Path) -> tuple[int, dict[str, Any]]:
        capsys.readouterr()
        rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
        captured = capsys.readouterr()
        assert captured.out, captured.err
        return rc, json.loads(captured.out)

    _chain_lib(tmp_path)
    (tmp_path / "c.cpp").write_text(_chain(
        "    ckl::eltwise_chain(ckl::IterationShape::tiles(n), ckl::CopyTile<ckl::input(0)>{in},",
        "        ckl::PackTile<ckl::output(16)>{out});"))
    (tmp_path / "r.cpp").write_text("\n".join([
        "void kernel_main() {", "    uint32_t n = get_arg_val<uint32_t>(0);",
        "    for (uint32_t i = 0; i < n; i++) { cb_reserve_back(0, 1);"
        " noc_async_read_tile(i, get_arg_val<uint32_t>(1), get_write_ptr(0)); noc_async_read_barrier();"
        " cb_push_back(0, 1); }", "}"]).replace("get_arg_val<uint32_t>(1)", "s").replace(
        "    uint32_t n", "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1),"
        " 2048);\n    uint32_t n"))
    (tmp_path / "w.cpp").write_text("\n".join([
        "void kernel_main() {", "    uint32_t n = get_arg_val<uint32_t>(0);",
        "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1), 2048);",
        "    for (uint32_t i = 0; i < n; i++) { cb_wait_front(16, 1);"
        " noc_async_write_tile(i, s, get_read_ptr(16)); noc_async_write_barrier(); cb_pop_front(16, 1); }", "}"]))

    def host(reader_n: int) -> Path:
        h = {"format": "verispatial.ttmetal-host", "version": 1, "name": "chain", "kernel_root": str(tmp_path),
             "tensors": [{"name": "a", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                         {"name": "o", "shape": [32, 128], "dtype": "bf16", "role": "output"}],
             "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "bf16"},
                         {"name": "c_1", "index": 1, "entry_size": 2048, "entries": 2, "data_format": "bf16"},
                         {"name": "c_16", "index": 16, "entry_size": 2048, "entries": 2, "data_format": "bf16"}],
             "kernels": [{"name": "r", "source": "r.cpp", "processor": "reader", "runtime_args": ["n", "a"]},
                         {"name": "c", "source": "c.cpp", "processor": "compute", "runtime_args": ["n"]},
                         {"name": "w", "source": "w.cpp", "processor": "writer", "runtime_args": ["n", "o"]}],
             "work_units": [{"cores": "0,0", "kernels": ["r", "c", "w"], "runtime_args": {
                 "r": {"n": reader_n, "a": {"tensor": "a"}}, "c": {"n": 4}, "w": {"n": 4, "o": {"tensor": "o"}}}}]}
        p = tmp_path / f"h{reader_n}.yaml"  # certify takes a host description by its extension
        p.write_text(json.dumps(h))
        return p

    rc, report = certify(host(4))
    assert rc == 0, [r for r in report["results"] if r["verdict"] != "proved"]
    rc, report = certify(host(3))
    assert rc == 1
    dead = [r for r in report["results"] if r["verdict"] == "refuted" and r["family"] == "deadlock"]
    assert dead
    assert "c.cpp" in json.dumps(dead[0])
