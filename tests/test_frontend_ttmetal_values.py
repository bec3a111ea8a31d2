"""The tt-metal front end's folding of values known statically: GCC builtins on known numbers, ``std::optional``
built by a call, and, beside each, the refusal kept for the value that is not known. Small kernels written here
(the corpus figures these move are in benchmarks/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_constructs import _main, _ops, _read

from verispatial.frontends.ttmetal import Refused

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
    with pytest.raises(Refused, match="compile-time arg the host does not give"):
        _read(tmp_path, src, kernel={"compile_time_args": [0]})
    with pytest.raises(Refused, match="compile-time arg index"):
        _read(tmp_path, src, kernel={"compile_time_args": [0, "0..3"]})
