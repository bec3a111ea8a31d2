"""The tt-metal front end's folding of values known statically: GCC builtins on known numbers, ``std::optional``
built by a call, and, beside each, the refusal kept for the value that is not known. Small kernels written here
(the corpus figures these move are in benchmarks/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_constructs import _main, _ops, _read

from verispatial.frontends.ttmetal import Refused
from verispatial.ir.ops import Compute
from verispatial.ir.program import walk

# ------------------------------------------------------------------ GCC builtins


@pytest.mark.parametrize(("expr", "pages"), [
    ("32 - __builtin_clz(5 - 1)", 3),  # ceil(log2(5)), sdpa_flash_decode.cpp:144
    ("31 - __builtin_clz(8u)", 3),  # ilog2(8), sort_common.hpp:207
    ("__builtin_clz(1)", 31),
    ("__builtin_clzll(1ull) - 60", 3),  # 64-bit operand
    ("__builtin_ctz(32)", 5),  # x >> ctz(32) is x / 32, gather_reader.cpp:111
    ("__builtin_popcount(0xF0u)", 4),
    ("__builtin_ffs(0) + __builtin_ffs(4)", 3),
    ("__builtin_clz(0xFFFFFFFF) + 2", 2),
    ("__builtin_clz(-1) + 1", 1),  # -1 converted to unsigned: all ones
    ("__builtin_expect(6, 1)", 6),
])
def test_bit_builtins_fold_on_known_values(tmp_path: Path, expr: str, pages: int) -> None:
    ep = _read(tmp_path, _main(f"    constexpr uint32_t n = {expr};", "    cb_reserve_back(0, n);"))
    assert _ops(ep) == [("Reserve", pages)]


def test_bit_builtin_of_a_compile_time_arg(tmp_path: Path) -> None:
    """sdpa_flash_decode.cpp:143-144's form: the log of a count the host gives, inside a choice."""
    src = _main("    constexpr uint32_t n = get_compile_time_arg_val(0);",
                "    constexpr uint32_t lg = n <= 1 ? 0 : 32 - __builtin_clz(n - 1);",
                "    cb_reserve_back(0, lg + 1);")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [8]})) == [("Reserve", 4)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [1]})) == [("Reserve", 1)]


def test_clz_of_zero_is_refused(tmp_path: Path) -> None:
    """GCC leaves ``__builtin_clz(0)`` undefined: no value is made up for it."""
    with pytest.raises(Refused, match=r"__builtin_clz of 0 \(undefined") as e:
        _read(tmp_path, _main("    uint32_t n = 31 - __builtin_clz(0);", "    cb_reserve_back(0, n);"))
    assert e.value.loc.line == 3


def test_builtin_of_a_value_not_known_is_refused_where_used(tmp_path: Path) -> None:
    src = _main("    uint32_t v = *reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
                "    uint32_t n = __builtin_popcount(v);", "    cb_reserve_back(0, n);")
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, src)
    assert e.value.loc.line == 5
    assert "__builtin_popcount of a value not known statically" in str(e.value)


# ------------------------------------------------------------------ std::optional built by a call


def _window(arg: str) -> str:
    """rt_args_common.hpp:40's form: a helper taking an optional, called with one built by a call."""
    return _main(
        f"    uint32_t w = {arg};",
        "    put(w > 0 ? std::optional<uint32_t>(w) : std::nullopt);",
        prelude=("inline void put(std::optional<uint32_t> win = std::nullopt) {",
                 "    if (win.has_value()) { cb_reserve_back(0, win.value()); } else { cb_reserve_back(0, 1); }",
                 "}"))


def test_optional_built_by_a_call(tmp_path: Path) -> None:
    assert _ops(_read(tmp_path, _window("3"))) == [("Reserve", 3)]
    assert _ops(_read(tmp_path, _window("0"))) == [("Reserve", 1)]
    ep = _read(tmp_path, _main("    auto o = std::make_optional(5u);", "    auto e = std::optional<uint32_t>();",
                               "    cb_reserve_back(0, o.value_or(1) + e.value_or(2));"))
    assert _ops(ep) == [("Reserve", 7)]


def test_optional_of_a_value_not_known(tmp_path: Path) -> None:
    """An optional built from a value read from L1 holds a value (``has_value`` is 1); the value itself is not
    followed, so a page count from it is refused."""
    src = _main("    uint32_t v = *reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
                "    auto o = std::optional<uint32_t>(v);",
                "    if (o.has_value()) { cb_reserve_back(0, 1); }",
                "    cb_reserve_back(0, o.value());")
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, src)
    assert e.value.loc.line == 6


# ------------------------------------------------------------------ next_compile_time_args_offset


def _after_accessor(*body: str) -> str:
    return _main("    constexpr auto a = TensorAccessorArgs<1>();", *body)


@pytest.mark.parametrize(("cfg", "rest", "pages"), [
    (2, [9, 3], 3),  # interleaved DRAM: config word + page size, the next arg is index 3
    (0x82, [9, 3], 9),  # RuntimePageSize: no page-size word, the next arg is index 2
    # sharded, rank 2, 3 banks: config, page size, rank, banks, 2 + 2 shape words, 2 bank-coordinate words
    (1, [2048, 2, 3, 1, 1, 1, 1, 7, 7, 5], 5),
    (1 | 1 << 6, [2048, 2, 3, 1, 1, 1, 1, 6], 6),  # runtime bank coordinates: none among the compile-time args
    (0x102, [9, 3], 3),  # the config word is 8 bits (ArgsConfig::Underlying is uint8_t)
])
def test_next_compile_time_args_offset(tmp_path: Path, cfg: int, rest: list[int], pages: int) -> None:
    """tensor_accessor_args.h:21-111's ``NumArgsCT``: the compile-time arg after an accessor's is read at the right
    index (reader_bmm_tile_layout_in0_sender_padding.cpp:96 reads it with ``decltype(args)::``)."""
    for form in ("a.next_compile_time_args_offset()", "decltype(a)::next_compile_time_args_offset()",
                 "1 + a.num_compile_time_args()"):
        src = _after_accessor(f"    constexpr uint32_t n = get_compile_time_arg_val({form});",
                              "    cb_reserve_back(0, n);")
        assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0, cfg, *rest]})) == [("Reserve", pages)]


def test_next_offset_of_a_config_word_not_known_is_refused(tmp_path: Path) -> None:
    src = _after_accessor("    constexpr uint32_t n = get_compile_time_arg_val(a.next_compile_time_args_offset());",
                          "    cb_reserve_back(0, n);")
    with pytest.raises(Refused, match="compile-time arg index not known statically") as e:
        _read(tmp_path, src, kernel={"compile_time_args": [0]})  # the accessor's words left out
    assert "config word of TensorAccessorArgs<1>" in str(e.value)
    with pytest.raises(Refused, match="compile-time arg index"):
        _read(tmp_path, src, kernel={"compile_time_args": [0, "0..3"]})


# ------------------------------------------------------------------ arrays of runtime args


def test_runtime_args_read_through_get_arg_addr(tmp_path: Path) -> None:
    """``(uint32_t*)get_arg_addr(i)`` is the address of runtime arg i (dataflow_api.h:108-113): ``p[k]``, ``*p`` and
    ``p + k`` read the args after it, as reader_decode_all.cpp:203-205 reads its cores' coordinates."""
    src = _main("    uint32_t idx = 1;",
                "    tt_l1_ptr uint32_t* xs = (tt_l1_ptr uint32_t*)(get_arg_addr(idx));",
                "    idx += 2;",
                "    uint32_t* ys = (uint32_t*)get_arg_addr(idx);",
                "    cb_reserve_back(0, xs[1]);",
                "    cb_reserve_back(0, *ys);",
                "    cb_reserve_back(0, *(xs + 1) + ys[1]);",
                "    xs++;",
                "    cb_reserve_back(0, xs[0]);",
                "    uint32_t a = get_arg_addr(0);",
                "    cb_reserve_back(0, ((uint32_t*)(a + 8))[0]);")
    ep = _read(tmp_path, src, kernel={"runtime_args": ["addr", "x0", "x1", "y0", "y1"]},
               args={"x0": 3, "x1": 5, "y0": 6, "y1": 7})
    assert _ops(ep) == [("Reserve", 5), ("Reserve", 6), ("Reserve", 12), ("Reserve", 5), ("Reserve", 5)]


def test_runtime_arg_array_in_a_loop_is_read_iteration_by_iteration(tmp_path: Path) -> None:
    """``ns[i]`` over a loop of constant count: each iteration reads its own arg."""
    src = _main("    uint32_t* ns = (uint32_t*)get_arg_addr(1);",
                "    for (uint32_t i = 0; i < 2; i++) { cb_reserve_back(0, ns[i]); }")
    ep = _read(tmp_path, src, kernel={"runtime_args": ["addr", "n0", "n1"]}, args={"n0": 2, "n1": 4})
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 4)]


def test_runtime_arg_array_beyond_the_args_or_misread_is_refused(tmp_path: Path) -> None:
    """An index past the declared args, a half word, an index read from L1; and a store into an arg (every read of it
    is the host's value, so a kernel that changes its args is not read)."""
    kernel = {"runtime_args": ["addr", "n0"]}
    for store in ("ns[0] = 4;", "*ns = 4;", "ns[0]++;"):
        with pytest.raises(Refused, match="store into a runtime arg") as e:
            _read(tmp_path, _main("    uint32_t* ns = (uint32_t*)get_arg_addr(1);", f"    {store}"),
                  kernel=kernel, args={"n0": 2})
        assert e.value.loc.line == 4
    with pytest.raises(Refused, match="runtime arg the host does not declare") as e:
        _read(tmp_path, _main("    uint32_t* ns = (uint32_t*)get_arg_addr(1);", "    cb_reserve_back(0, ns[1]);"),
              kernel=kernel, args={"n0": 2})
    assert e.value.loc.line == 4
    # a half word of an arg, an index read from L1: not followed, refused where a count needs them
    for body in ("    uint16_t* h = (uint16_t*)get_arg_addr(1);\n    cb_reserve_back(0, h[0]);",
                 "    uint32_t* ns = (uint32_t*)get_arg_addr(1);\n"
                 "    uint32_t j = *reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));\n"
                 "    cb_reserve_back(0, ns[j]);"):
        with pytest.raises(Refused, match="page count not known statically"):
            _read(tmp_path, _main(body), kernel=kernel, args={"n0": 2})


# ------------------------------------------------------------------ constant tables


def test_constant_tables_are_read(tmp_path: Path) -> None:
    """``constexpr uint32_t step_inc[6] = {...}`` (writer_decode_all.cpp:88), at file scope and in the body, one and
    two dimensions, ``std::array``, elements past the list zero."""
    ep = _read(tmp_path, _main(
        "    constexpr uint32_t inc[4] = {1, 16, 256};",
        "    const uint32_t rows[2][2] = {{2, 3}, {4, 5}};",
        "    constexpr std::array<uint32_t, 3> arr = {7, 8, 9};",
        "    cb_reserve_back(0, inc[1] / 8 + g[2]);",
        "    cb_reserve_back(0, rows[1][0] + inc[3] + arr[2]);",
        "    for (uint32_t i = 0; i < 2; i++) { cb_reserve_back(0, g[i]); }",
        prelude=("constexpr uint32_t g[] = {1, 2, 6};",)))
    assert _ops(ep) == [("Reserve", 8), ("Reserve", 13), ("Reserve", 1), ("Reserve", 2)]


def test_tables_not_constant_or_read_past_their_end_are_refused(tmp_path: Path) -> None:
    """An array that is not const may have been written: its elements are not followed; a read past a constant
    table's end is undefined."""
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    uint32_t a[2] = {1, 2};", "    a[0] = 5;", "    cb_reserve_back(0, a[0]);"))
    with pytest.raises(Refused, match=r"index past the end of a constant table \(2 of 2") as e:
        _read(tmp_path, _main("    constexpr uint32_t a[2] = {1, 2};", "    cb_reserve_back(0, a[2]);"))
    assert e.value.loc.line == 4


# ------------------------------------------------------------------ enumerators as numbers


def test_enumerators_of_the_kernel_are_numbers(tmp_path: Path) -> None:
    """Scoped and unscoped enums the kernel defines: implicit and explicit values, a compile-time arg compared with
    an enumerator, a switch on a converted enumerator, an unscoped enumerator as a template argument."""
    src = _main(
        "    constexpr auto mode = static_cast<Mode>(get_compile_time_arg_val(0));",
        "    if constexpr (mode == Mode::Sharded) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
        "    cb_reserve_back(0, static_cast<uint32_t>(Mode::Last) + (uint32_t)OP_SUB);",
        "    switch ((uint32_t)Mode::Sharded & 0x3) { case 2: cb_reserve_back(0, 7); break; default: break; }",
        "    op<OP_SUB>();",
        prelude=("namespace k { enum class Mode : uint8_t { Interleaved = 0, Other, Sharded = Other << 1, Last }; }",
                 "enum BinaryOp { OP_ADD, OP_SUB = 4 };",
                 "template <BinaryOp OP> void op() { if constexpr (OP == OP_SUB) { cb_reserve_back(0, 5); } }"))
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [2]})) == [
        ("Reserve", 1), ("Reserve", 7), ("Reserve", 7), ("Reserve", 5)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0]}))[0] == ("Reserve", 2)


def test_device_enumerators_are_numbers(tmp_path: Path) -> None:
    """moreh_common.hpp:98's ``switch ((uint)data_format & 0x1F)`` on a buffer's DataFormat (tensix_types.h:214-234:
    Float16_b is 5), and a layout arg compared with ``TensorMemoryLayout::INTERLEAVED`` (buffer_types.hpp:12-20)."""
    src = _main(
        "    DataflowBuffer cb(0);",
        "    const DataFormat f = cb.get_dataformat();",
        "    switch ((uint)f & 0x1F) {",
        "        case ((uint8_t)DataFormat::Float32): cb_reserve_back(0, 4); break;",
        "        case ((uint8_t)DataFormat::Float16_b): cb_reserve_back(0, 2); break;",
        "        default: cb_reserve_back(0, 8); break;",
        "    }",
        "    constexpr auto layout = static_cast<TensorMemoryLayout>(get_compile_time_arg_val(0));",
        "    if constexpr (layout == tt::tt_metal::TensorMemoryLayout::INTERLEAVED) { cb_reserve_back(0, 1); }",
        "    cb_reserve_back(0, (bool)DataFormat::Float16_b + (uint8_t)DataFormat::Invalid - 254);")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0]})) == [
        ("Reserve", 2), ("Reserve", 1), ("Reserve", 2)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [3]})) == [("Reserve", 2), ("Reserve", 2)]


def test_enumerators_whose_value_is_not_known_are_refused(tmp_path: Path) -> None:
    """An enumerator of an enum neither the kernel nor the transcribed headers define, or one after an initializer
    that is not a constant expression, is no number: a branch comparing it with a number is refused."""
    for prelude, name in (("", "Unknown::A"), ("enum class E { A = SOME_FN(), B };", "E::B")):
        with pytest.raises(Refused, match="branch on a value not known statically") as e:
            _read(tmp_path, _main("    constexpr uint32_t x = get_compile_time_arg_val(0);",
                                  f"    if (x == (uint32_t){name}) {{ cb_reserve_back(0, 1); }}", prelude=(prelude,)),
                  kernel={"compile_time_args": [0]})
        assert e.value.loc.line == 5


def test_integer_conversions_of_constants(tmp_path: Path) -> None:
    """Casts and functional casts (``uint16_t(value >> 16)``, moreh_common.hpp:78 ``T(0)``) convert a constant as C++
    does: modulo the type's width, signed or not; to bool 0 or 1."""
    ep = _read(tmp_path, _main(
        "    cb_reserve_back(0, uint16_t(0x30002));",
        "    cb_reserve_back(0, (uint8_t)259 + (bool)7);",
        "    cb_reserve_back(0, static_cast<int8_t>(0xFF) + 4);",
        "    put<uint16_t>(0x10003);",
        prelude=("template <typename T> void put(uint32_t v) { cb_reserve_back(0, T(v)); }",)))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 4), ("Reserve", 3), ("Reserve", 3)]
    with pytest.raises(Refused, match="branch on a value not known statically"):  # 3.5 > 3 in floating point
        _read(tmp_path, _main("    if (float(7) / 2 > 3) { cb_reserve_back(0, 1); }"))


def test_tile_geometry_queries(tmp_path: Path) -> None:
    """``get_tile_hw(cb)`` (dataflow_api.h:292-295) and the DataflowBuffer methods: the host's 32 x 32 tiles."""
    ep = _read(tmp_path, _main("    DataflowBuffer b(1);",
                               "    cb_reserve_back(0, get_tile_hw(1) / 512 + get_tile_num_faces(0));",
                               "    cb_reserve_back(0, b.get_tile_r_dim() / 16 + b.get_tile_hw() / 1024);"))
    assert _ops(ep) == [("Reserve", 6), ("Reserve", 3)]
    with pytest.raises(Refused, match="circular buffer the host does not declare"):
        _read(tmp_path, _main("    cb_reserve_back(0, get_tile_hw(5));"))


def test_named_arg_given_as_a_compile_time_arg(tmp_path: Path) -> None:
    """``constexpr auto w = get_arg(args::block_w)`` with ``block_w`` a named compile-time arg of the host
    (experimental/kernel_args.h:17-19: the host chooses the kind); a name given as neither stays refused."""
    src = _main("    constexpr auto w = get_arg(args::block_w);", "    cb_reserve_back(0, w + get_arg(args::n));")
    ep = _read(tmp_path, src, kernel={"runtime_args": ["addr", "n"], "named_compile_time_args": {"block_w": 3}},
               args={"n": 1})
    assert _ops(ep) == [("Reserve", 4)]
    with pytest.raises(Refused, match="runtime arg the host does not declare"):
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "n"]}, args={"n": 1})


def test_zero_page_buffer_calls_do_nothing(tmp_path: Path) -> None:
    """``wait_front(0)`` / ``pop_front(0)`` (matmul's writers with no padded tiles to skip) hold at once and move
    nothing (dataflow_api.h:479-490): no op, where a Wait of 0 pages is no program."""
    ep = _read(tmp_path, _main("    DataflowBuffer b(0);", "    constexpr uint32_t skip = get_compile_time_arg_val(0);",
                               "    b.wait_front(skip);", "    b.pop_front(skip);", "    cb_reserve_back(0, skip);",
                               "    cb_push_back(0, skip + 1);"), kernel={"compile_time_args": [0]})
    assert _ops(ep) == [("Push", 1)]


def test_copy_block_is_its_copy_tiles(tmp_path: Path) -> None:
    """``copy_block(cb, 1, 0, 2)`` (tile_move_copy.h:136-176): copies of front tiles 1 and 2 into DST 0 and 1."""
    from verispatial.ir.ops import AcquireAcc, Operand

    src = "\n".join(['#include "api/compute/tile_move_copy.h"', "void kernel_main() {",
                     "    cb_wait_front(0, 3);", "    tile_regs_acquire();", "    copy_block(0, 1, 0, 2);",
                     "    tile_regs_commit();", "    tile_regs_wait();", "    pack_tile(0, 16);", "    pack_tile(1, 16);",
                     "    tile_regs_release();", "    cb_pop_front(0, 3);", "}"])
    ep = _read(tmp_path, src, processor="compute")
    ops = list(walk(ep.ops))
    assert [o.ins for o in ops if isinstance(o, Compute)] == [(Operand(0, 2),), (Operand(0, 3),)]
    assert next(o for o in ops if isinstance(o, AcquireAcc)).tiles == 2
    with pytest.raises(Refused, match="copy_block tile count from a runtime range"):
        _read(tmp_path, src.replace("copy_block(0, 1, 0, 2)", "copy_block(0, 1, 0, get_arg_val<uint32_t>(1))"),
              processor="compute", kernel={"runtime_args": ["addr", "n"]}, args={"n": "1..2"})


def test_accessor_offset_named_by_an_enumerator(tmp_path: Path) -> None:
    """``TensorAccessorArgs<ct_arg::END>()`` (sparse_sdpa_reader.cpp:67): the enumerator's value is the offset; an
    offset that is no number (an enumerator not defined) leaves the next offset not followed, refused where used
    (before, a crash of the reader)."""
    body = ("    constexpr auto a = TensorAccessorArgs<ct_arg::END>();",
            "    cb_reserve_back(0, get_compile_time_arg_val(a.next_compile_time_args_offset()));")
    ep = _read(tmp_path, _main(*body, prelude=("namespace ct_arg { enum : uint32_t { A, END }; }",)),
               kernel={"compile_time_args": [0, 2, 9, 5]})
    assert _ops(ep) == [("Reserve", 5)]
    with pytest.raises(Refused, match="compile-time arg index not known statically"):
        _read(tmp_path, _main(*body), kernel={"compile_time_args": [0, 2, 9, 5]})


# ------------------------------------------------------------------ structured bindings


def test_structured_bindings(tmp_path: Path) -> None:
    """``auto [a, b, c] = f();`` of a braced tuple return (rt_args_common.hpp:91), ``std::make_pair`` and a struct:
    each name its element (before, the first name took the whole value and the others were not defined)."""
    ep = _read(tmp_path, _main(
        "    auto [a, b, c] = work(2);",
        "    const auto& [p, q] = std::make_pair(4u, 5u);",
        "    auto [x, y] = Pt{6, 7};",
        "    cb_reserve_back(0, a + c);",
        "    cb_reserve_back(0, b + p + q + x + y);",
        prelude=("struct Pt { uint32_t x; uint32_t y; };",
                 "inline std::tuple<uint32_t, uint32_t, uint32_t> work(uint32_t n) { return {n, n + 1, n * 3}; }")))
    assert _ops(ep) == [("Reserve", 8), ("Reserve", 25)]
    with pytest.raises(Refused, match=r"structured binding of another number of elements \(2 names, 3 elements\)"):
        _read(tmp_path, _main("    auto [a, b] = std::make_tuple(1, 2, 3);"))


def test_casts_to_the_word_keep_negative_numbers(tmp_path: Path) -> None:
    """``(uint32_t)(-(int32_t)n)`` (writer_untilize.cpp:349, a semaphore decrement) stays ``-n``: the reading's
    numbers stand for 32-bit words, and an increment by it must be the ``-n`` it adds, not 2**32 - n."""
    ep = _read(tmp_path, _main("    constexpr uint32_t n = 3;", "    cb_reserve_back(0, (uint32_t)(-(int32_t)n) + 5);",
                               "    cb_reserve_back(0, static_cast<uint32_t>(-1) + 2);"))
    assert _ops(ep) == [("Reserve", 2), ("Reserve", 1)]


# ------------------------------------------------------------------ SDPA decode's kernels (issue 18 item 4)


def test_tensor_address_against_zero_is_an_allocated_buffer(tmp_path: Path) -> None:
    """``if (q_addr == 0) return;`` (reader_decode_all.cpp:110-113, "idle core"): a host tensor's base address is an
    allocated buffer's, never 0, so the early return is not taken; a literal 0 from the host takes it; another
    comparison of the address is still not followed."""
    src = _main("    uint32_t a = get_arg_val<uint32_t>(0);", "    if (a == 0) { return; }",
                "    if (0 != a) { cb_reserve_back(0, 2); }")
    assert _ops(_read(tmp_path, src)) == [("Reserve", 2)]
    assert _ops(_read(tmp_path, src, args={"addr": 0})) == []
    with pytest.raises(Refused, match="branch on a value not known statically") as e:
        _read(tmp_path, _main("    uint32_t a = get_arg_val<uint32_t>(0);", "    if (a > 4) { return; }"))
    assert e.value.loc.line == 4


def test_const_reference_parameter_takes_any_argument(tmp_path: Path) -> None:
    """``const bool& transpose`` (compute_common.hpp:1071, called with ``true``, sdpa_flash_decode.cpp:427): a
    reference to const cannot be assigned by the callee, so the argument need not be a variable; a reference the
    callee may assign still writes back and still needs one."""
    prelude = ("inline void put(const uint32_t& n, uint32_t& m) { m = n + 1; cb_reserve_back(0, n); }",)
    ep = _read(tmp_path, _main("    uint32_t m = 0;", "    put(2, m);", "    cb_push_back(0, m);", prelude=prelude))
    assert _ops(ep) == [("Reserve", 2), ("Push", 3)]
    with pytest.raises(Refused, match="reference argument not a variable"):
        _read(tmp_path, _main("    put(2, 3);", prelude=prelude))


def test_packer_relu_config_is_configuration(tmp_path: Path) -> None:
    """``PACK((llk_pack_relu_config(ReluConfig::zero())))`` (compute_common.hpp:372) programs a packer register
    only; another LLK call in the wrapper is still refused by name."""
    src = "\n".join(['#include "api/compute/compute_kernel_api.h"', "void kernel_main() {",
                     "    PACK((llk_pack_relu_config(ReluConfig::zero())));", "    cb_wait_front(0, 1);",
                     "    cb_pop_front(0, 1);", "}"])
    assert _ops(_read(tmp_path, src, processor="compute")) == [("Wait", 1), ("Pop", 1)]
    with pytest.raises(Refused, match="call to PACK"):
        _read(tmp_path, src.replace("llk_pack_relu_config", "llk_pack_init"), processor="compute")


def _children(args: dict[str, int], body: str = "") -> str:
    """writer_decode_all.cpp:92-198's form: a local array filled from runtime args in one loop and read in another."""
    return _main("    uint32_t arg_idx = 1;", "    uint32_t ch[6];",
                 "    for (uint32_t r = 0; r < 6; ++r) { ch[r] = get_arg_val<uint32_t>(arg_idx++); }",
                 "    uint32_t n = 0;",
                 "    for (uint32_t r = 0; r < 6; ++r) {",
                 "        uint32_t c = ch[r];",
                 "        if (c != UINT32_MAX && c < 3) { n++; }",
                 "    }", body, "    cb_reserve_back(0, n + 1);")


_CHILD_ARGS = {"runtime_args": ["addr", "a", "b", "c", "d", "e", "f"]}


def test_local_array_stored_and_read_at_known_indices(tmp_path: Path) -> None:
    """A local array's elements are what the kernel last stored at each index (the loops are read iteration by
    iteration); ``UINT32_MAX`` is <stdint.h>'s."""
    none = 0xFFFFFFFF
    args = {"a": 0, "b": none, "c": 2, "d": 5, "e": none, "f": 1}
    assert _ops(_read(tmp_path, _children(args), kernel=_CHILD_ARGS, args=args)) == [("Reserve", 4)]
    args = {"a": none, "b": none, "c": none, "d": none, "e": none, "f": none}
    assert _ops(_read(tmp_path, _children(args), kernel=_CHILD_ARGS, args=args)) == [("Reserve", 1)]
    ep = _read(tmp_path, _main("    uint32_t a[2];", "    a[1] = 3;", "    a[1] += 2;", "    a[1]++;",
                               "    cb_reserve_back(0, a[1]);"))
    assert _ops(ep) == [("Reserve", 6)]


def test_local_array_not_followed_where_it_could_have_changed(tmp_path: Path) -> None:
    """An element never stored, an array whose address is taken (a callee may store through it), an index past the
    end, a store at an index not known: refused or not followed, never a stale element."""
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    cb_reserve_back(0, a[1]);"))
    assert "never stored" in str(e.value)
    prelude = ("inline void set(uint32_t* p) { p[0] = 5; }",)
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    set(a);", "    cb_reserve_back(0, a[0]);",
                              prelude=prelude))
    assert "a value read from memory: a[0]" in str(e.value)  # the array itself is no longer followed
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    uint32_t* p = &a[0];", "    *p = 5;",
                              "    cb_reserve_back(0, a[0]);"))
    assert "a value read from memory: a[0]" in str(e.value)
    with pytest.raises(Refused, match="local array index out of bounds"):
        _read(tmp_path, _main("    uint32_t a[2];", "    a[2] = 1;"))
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    uint32_t a[2];", "    a[1] = 1;", "    cb_reserve_back(0, a[2]);"))
    assert "past its end" in str(e.value)
    with pytest.raises(Refused, match="page count not known statically") as e:
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    uint32_t i = get_arg_val<uint32_t>(1);",
                              "    a[i] = 4;", "    cb_reserve_back(0, a[0]);"),
              kernel={"runtime_args": ["addr", "i"]}, args={"i": "0..1"})
    assert "a value read from memory: a[0]" in str(e.value)


def test_math_thread_sfpu_init_and_header_op(tmp_path: Path) -> None:
    """``MATH(SFPU_UNARY_INIT_FN(...))`` is the SFPU's configuration (llk_math_eltwise_unary_sfpu_macros.h:75-76);
    ``MATH((recip_tile_first_column(0)))``, defined for the MATH thread only (compute_common.hpp:306-312), is a
    compute on DST tile 0 (recip_block_inplace, compute_common.hpp:316-339); another MATH call is refused."""
    src = "\n".join(['#include "api/compute/compute_kernel_api.h"', "void kernel_main() {",
                     "    MATH(SFPU_UNARY_INIT_FN(reciprocal, sfpu::sfpu_reciprocal_init, (APPROX)));",
                     "    cb_wait_front(0, 1);", "    tile_regs_acquire();", "    copy_tile(0, 0, 0);",
                     "    MATH((recip_tile_first_column(0)));", "    tile_regs_commit();", "    tile_regs_wait();",
                     "    cb_reserve_back(16, 1);", "    pack_tile(0, 16);", "    tile_regs_release();",
                     "    cb_push_back(16, 1);", "    cb_pop_front(0, 1);", "}"])
    ep = _read(tmp_path, src, processor="compute")
    computes = [op for op in walk(ep.ops) if isinstance(op, Compute)]
    assert [op.kind for op in computes][-1] == "recip_tile_first_column"
    assert len(computes) == 2  # the copy, the reciprocal
    with pytest.raises(Refused, match="call to MATH"):
        _read(tmp_path, src.replace("recip_tile_first_column", "llk_math_foo"), processor="compute")


def test_local_array_in_loops_read_once(tmp_path: Path) -> None:
    """One symbolic reading of a loop body stands for every iteration, so a local array declared outside it and
    stored (or its address taken) inside is read iteration by iteration when the count is constant, else refused;
    one declared inside the body is followed in it."""
    rt = {"kernel": {"runtime_args": ["addr", "n"]}, "args": {"n": "0..3"}}
    ep = _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;",
                               "    for (uint32_t i = 0; i < 3; i++) { a[0] = a[0] + 1; }", "    cb_push_back(0, a[0]);"))
    assert _ops(ep) == [("Push", 4)]
    ep = _read(tmp_path, _main("    uint32_t a[4];", "    for (uint32_t i = 0; i < 4; i++) { a[i] = i * 2; }",
                               "    cb_push_back(0, a[3]);"))
    assert _ops(ep) == [("Push", 6)]
    with pytest.raises(Refused, match="store into a local array in a loop read once"):
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    uint32_t n = get_arg_val<uint32_t>(1);",
                              "    for (uint32_t i = 0; i < n; i++) {", "        a[0] = 2;", "    }",
                              "    cb_push_back(0, a[0]);"), **rt)
    with pytest.raises(Refused, match="local array's address taken in a loop read once"):
        _read(tmp_path, _main("    uint32_t a[2];", "    a[0] = 1;", "    uint32_t n = get_arg_val<uint32_t>(1);",
                              "    for (uint32_t i = 0; i < n; i++) {", "        cb_reserve_back(0, a[0]);",
                              "        set(a);", "    }", prelude=("inline void set(uint32_t* p) { p[0] = 5; }",)),
              **rt)
    ep = _read(tmp_path, _main("    uint32_t n = get_arg_val<uint32_t>(1);", "    for (uint32_t i = 0; i < n; i++) {",
                               "        uint32_t t[2];", "        t[1] = 3;", "        cb_reserve_back(0, t[1]);", "    }"),
               **rt)
    assert _ops(ep) == [("Reserve", 3)]
