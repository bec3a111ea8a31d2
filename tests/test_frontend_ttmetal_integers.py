"""The tt-metal front end's integer arithmetic against C++'s: 32-bit words that wrap, narrow types that convert,
comparisons whose result depends on signedness, and counted loops whose count the body or the index's type changes.
Each kernel here is one a board runs differently from a naive reading (a loop of the wrong count, a branch taken the
wrong way) and that the reading once proved; the expected value is what the C++ computes, or a refusal by name where
the reading cannot know it (the reading keeps numbers without their C++ type)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.core import Guard
from verispatial.ir.ops import Loop, Push, Reserve, TripCount
from verispatial.ir.program import walk


def _read(tmp_path: Path, *body: str, prelude: tuple[str, ...] = (), args: dict[str, Any] | None = None) -> Any:
    """The reader engine of a kernel ``body`` (statements of ``kernel_main``) on core (0,0), buffer c_0 (one bf16
    tile a page, 8 pages); runtime arg ``n`` (default 8; a range ``"lo..hi"`` makes it a trip)."""
    src = "\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude, "void kernel_main() {",
                     "    uint32_t n = get_arg_val<uint32_t>(0);", *body, "}"])
    (tmp_path / "k.cpp").write_text(src)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "ints", "kernel_root": str(tmp_path),
            "tensors": [{"name": "t", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader", "runtime_args": ["n"]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": {"n": 8, **(args or {})}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _pushes(ep: Any) -> int:
    """How many pages the engine pushes in all (loops of constant counts multiplied out)."""
    def count(ops: Any) -> int:
        total = 0
        for op in ops:
            if isinstance(op, Loop):
                assert isinstance(op.count, int)
                total += op.count * count(op.body)
            elif isinstance(op, Push):
                total += op.pages
        return total
    return count(ep.ops)


def _reserved(ep: Any) -> list[int]:
    return [op.pages for op in walk(ep.ops) if isinstance(op, Reserve)]


# ------------------------------------------------------------------ loops


def test_unsigned_index_counting_down_to_zero_never_ends_and_is_refused(tmp_path: Path) -> None:
    """``for (uint32_t i = 7; i >= 0; --i)``: an unsigned ``i`` is always >= 0, the loop wraps and runs forever (the
    reading once counted 8 iterations and proved it); with ``int`` it runs 8 times."""
    with pytest.raises(Refused, match="index wraps before its condition ends it") as e:
        _read(tmp_path, "    for (uint32_t i = 7; i >= 0; --i) { cb_push_back(0, 1); }")
    assert e.value.loc.line == 4
    with pytest.raises(Refused, match="index wraps"):  # over a runtime range: the same at every value
        _read(tmp_path, "    for (uint32_t i = n - 1; i >= 0; --i) { cb_push_back(0, 1); }", args={"n": "1..8"})
    with pytest.raises(Refused, match="index wraps"):  # stepping over 0: 15, 13, ..., 1, then 2**32 - 1
        _read(tmp_path, "    for (uint32_t i = 15; i > 0; i -= 2) { cb_push_back(0, 1); }")
    with pytest.raises(Refused, match="index wraps"):  # i <= UINT32_MAX always holds
        _read(tmp_path, "    for (uint32_t i = 4294967288u; i <= 4294967295u; ++i) { cb_push_back(0, 1); }")
    assert _pushes(_read(tmp_path, "    for (int i = 7; i >= 0; --i) { cb_push_back(0, 1); }")) == 8
    assert _pushes(_read(tmp_path, "    for (uint32_t i = 8; i > 0; --i) { cb_push_back(0, 1); }")) == 8


def test_narrow_index_that_cannot_reach_its_bound_never_ends_and_is_refused(tmp_path: Path) -> None:
    """``for (uint8_t i = 0; i < 300; ++i)``: ``i`` wraps from 255 to 0, ``i < 300`` always holds and the loop runs
    forever (the reading once counted 300 iterations and proved a reader that hangs on its reserve); the same over a
    runtime range reaching past 255, and for a signed ``int8_t`` past 127. Where the index can hold every value up
    to the one that ends the loop, the count is the condition's."""
    with pytest.raises(Refused, match=r"index wraps before its condition ends it \(i < 300: a uint8_t i holds "
                                      r"0\.\.255, and reaches 300\)") as e:
        _read(tmp_path, "    for (uint8_t i = 0; i < 300; ++i) { cb_reserve_back(0, 1); cb_push_back(0, 1); }")
    assert e.value.loc.line == 4
    with pytest.raises(Refused, match=re.escape("a uint8_t i holds 0..255, and reaches 256")):  # i <= 255 always holds
        _read(tmp_path, "    for (uint8_t i = 0; i <= 255; ++i) { cb_push_back(0, 1); }")
    with pytest.raises(Refused, match=re.escape("a uint8_t i holds 0..255, and reaches 300")):
        _read(tmp_path, "    for (uint8_t i = 0; i < n; ++i) { cb_push_back(0, 1); }", args={"n": "1..300"})
    with pytest.raises(Refused, match=re.escape("a int8_t i holds -128..127, and reaches 200")):
        _read(tmp_path, "    for (int8_t i = 0; i < 200; ++i) { cb_push_back(0, 1); }")
    with pytest.raises(Refused, match=re.escape("a uint16_t j holds 0..65535, and reaches 65536")):  # an index of an outer loop
        _read(tmp_path, "    for (uint32_t k = 0; k < 2; ++k) {",
              "        for (uint16_t j = k * 65535; j < 65536; ++j) { cb_push_back(0, 1); } }")
    assert _pushes(_read(tmp_path, "    for (uint8_t i = 0; i < 255; ++i) { cb_push_back(0, 1); }")) == 255
    ep = _read(tmp_path, "    for (uint8_t i = 0; i < n; ++i) { cb_push_back(0, 1); }", args={"n": "1..255"})
    assert [op.count for op in ep.ops if isinstance(op, Loop)] == [TripCount("n", 1, 1)]  # n is 1 + trip n


@pytest.mark.parametrize(("loop", "pushes"), [
    ("for (uint8_t i = 250; i != 4; ++i)", 10), ("for (uint8_t i = 250; i != 4; i += 2)", 5),
    ("for (uint8_t i = 2; i != 254; --i)", 4), ("for (int8_t i = 120; i != -126; ++i)", 10),
    ("for (uint16_t i = 65534; i != 1; ++i)", 3)])
def test_a_narrow_index_that_wraps_to_its_not_equal_bound_is_read_as_it_runs(tmp_path: Path, loop: str,
                                                                          pushes: int) -> None:
    """g++: a ``uint8_t`` index from 250 wraps past 255 to 0 and reaches 4 after 10 iterations. The reading refused
    it as a bound stepped over, 246 behind the start (the 32-bit index's case, which runs 2**32 - 246 times)."""
    assert _pushes(_read(tmp_path, f"    {loop} {{ cb_push_back(0, 1); }}")) == pushes


def test_a_narrow_index_that_never_meets_its_not_equal_bound_is_refused_as_wrapping(tmp_path: Path) -> None:
    """g++: odd values of a uint8_t never equal 4; the loop never ends."""
    with pytest.raises(Refused, match="for loop whose index wraps before its condition ends it"):
        _read(tmp_path, "    for (uint8_t i = 1; i != 4; i += 2) { cb_push_back(0, 1); }")


def test_loop_index_changed_through_a_reference_parameter(tmp_path: Path) -> None:
    """``bump(i)`` with ``void bump(uint32_t& x)`` steps the index a second time each iteration: 4 pushes, not 8."""
    ep = _read(tmp_path, "    for (uint32_t i = 0; i < 8; ++i) { cb_push_back(0, 1); bump(i); }",
               prelude=("void bump(uint32_t& x) { x++; }",))
    assert _pushes(ep) == 4


def test_loop_bound_changed_in_the_body(tmp_path: Path) -> None:
    """The condition is evaluated each iteration: ``n = 7`` in the body ends the loop after 7 iterations;
    ``n--; n++;`` leaves it 8."""
    assert _pushes(_read(tmp_path, "    uint32_t m = 8;",
                         "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); m = 7; }")) == 7
    assert _pushes(_read(tmp_path, "    uint32_t m = 8;",
                         "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); m--; m++; }")) == 8
    with pytest.raises(Refused, match="loop bound assigned in its body"):  # a runtime count: not read as it runs
        _read(tmp_path, "    uint32_t m = n;",
              "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); m = 7; }", args={"n": "1..8"})


def test_loop_bound_past_the_word_wraps(tmp_path: Path) -> None:
    """``(1u << 31) * 2 + 3`` is 3 as a uint32_t (once a loop count of 2**32 + 3 the IR rejected without a line)."""
    ep = _read(tmp_path, "    uint32_t z = (1u << 31) * 2 + 3;", "    for (uint32_t i = 0; i < z; ++i) { cb_push_back(0, 1); }")
    assert _pushes(ep) == 3
    with pytest.raises(Refused, match="loop between a negative and a non-negative number"):
        # 0u - 1u is UINT32_MAX unsigned (2**32 - 1 iterations), -1 signed (none): the reading keeps no type
        _read(tmp_path, "    uint32_t z = 0u - 1u;", "    for (uint32_t i = 0; i < z; ++i) { cb_push_back(0, 1); }")


# ------------------------------------------------------------------ comparisons and operators


def test_order_of_a_negative_and_a_non_negative_number_is_refused(tmp_path: Path) -> None:
    """``int a = -1; uint32_t b = 3; a < b`` is false in C++ (a converts to 4294967295); the reading once took it
    true. With b declared uint32_t it is read as C++ reads it; where no operand's type is known (``auto``, a literal
    ``3u``) it is refused."""
    ep = _read(tmp_path, "    int a = -1;", "    uint32_t b = 3;",
               "    if (a < b) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")
    assert _reserved(ep) == [2]
    # an auto variable's type is deduced (``auto a = -1`` is an int, since 2026-12-08; it counted as possibly 64
    # bits wide): the order of -1 and 3u is refused as any such order of a literal is
    with pytest.raises(Refused, match="order of a negative and a non-negative number"):
        _read(tmp_path, "    auto a = -1;", "    if (a < 3u) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")
    # one deduced from what the reading does not type may be 64 bits wide: refused as such
    with pytest.raises(Refused, match="comparison of a 64-bit value past 32 bits"):
        _read(tmp_path, "    auto a = f();", "    if (a < 3u) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
              prelude=("template <typename T = int64_t> T f() { return -1; }",))
    with pytest.raises(Refused, match="order of a negative and a non-negative number"):
        _read(tmp_path, "    if (-1 < 3u) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")
    ep = _read(tmp_path, "    int a = -1;", "    int b = -3;",
               "    if (b < a) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")
    assert _reserved(ep) == [1]  # both negative: the same order signed or unsigned


def test_equality_compares_32_bit_words(tmp_path: Path) -> None:
    """``0u - 1u == UINT32_MAX`` and ``(1u << 31) * 2 == 0`` hold on the RISC."""
    ep = _read(tmp_path, "    uint32_t z = 0u - 1u;",
               "    if (z == UINT32_MAX) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
               "    if ((1u << 31) * 2 == 0) { cb_reserve_back(0, 3); } else { cb_reserve_back(0, 4); }")
    assert _reserved(ep) == [1, 3]


def test_shift_and_division_of_a_negative_number_are_not_followed(tmp_path: Path) -> None:
    """``(0u - 1u) >> 29`` is 7 unsigned and -1 signed; the reading once made it -1 (a loop of no iteration). Exact
    folds stay: ``7 / 2``, ``17 % 5``, a shift by a known amount."""
    with pytest.raises(Refused, match=r"page count not known statically.*negative operand of '>>'"):
        _read(tmp_path, "    uint32_t z = 0u - 1u;", "    cb_reserve_back(0, z >> 29);")
    with pytest.raises(Refused, match="negative operand of '/'"):
        _read(tmp_path, "    int z = -17 / 2;", "    cb_reserve_back(0, z + 9);")
    with pytest.raises(Refused, match=r"a shift by 32 \(undefined\)"):
        _read(tmp_path, "    cb_reserve_back(0, 1u << 32);")
    ep = _read(tmp_path, "    cb_reserve_back(0, 7 / 2);", "    cb_reserve_back(0, 17 % 5);",
               "    uint32_t w = 4294967295u;", "    w /= 4294967294u;", "    cb_reserve_back(0, w + (1u << 2));")
    assert _reserved(ep) == [3, 2, 5]


# ------------------------------------------------------------------ narrow types


def test_narrow_integer_variables_convert_on_initialisation_and_assignment(tmp_path: Path) -> None:
    """``uint8_t z = 264`` holds 8; ``z = 250; z += 14`` holds 8; ``bool b = 5`` holds 1; ``++`` of a uint8_t 255
    is 0 (the reading once kept 264, 256, 5: a loop of the wrong count, a branch the wrong way)."""
    ep = _read(tmp_path, "    uint8_t z = 264;", "    cb_reserve_back(0, z);",
               "    uint8_t y = 250;", "    y += 14;", "    cb_reserve_back(0, y);",
               "    bool b = 5;", "    cb_reserve_back(0, 6 + b);",
               "    uint8_t c = 255;", "    if (++c == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
               "    uint16_t h = 256;", "    h = h * 256 + 7;", "    cb_reserve_back(0, h);")
    assert _reserved(ep) == [8, 8, 7, 1, 7]


def test_a_static_member_holds_its_value_converted_to_its_type(tmp_path: Path) -> None:
    """g++ -std=c++17: ``P<258>::v`` is 2 and ``P<258>::w`` (``v + 1``) 3, ``Q<255>::v`` (``N + 1`` as uint8_t) 0,
    ``S::v`` (uint16_t of 65538) 2, ``6 + S::b`` 7, ``R<255>::v + 4`` (int8_t) 3. A static member of a class
    template was read as its initializer's number (258, 259, 256) and a reader pushing 2 pages proved against
    consumers of 258; a struct's static member (not a template) was refused as not defined."""
    prelude = ("template <uint32_t N> struct P { static constexpr uint8_t v = N; static constexpr uint32_t w = v + 1; };",
               "template <uint8_t N> struct Q { static constexpr uint8_t v = N + 1; };",
               "struct S { static constexpr uint16_t v = 65538; static constexpr bool b = 5; };",
               "template <uint32_t N> struct R { static constexpr int8_t v = N; };")
    ep = _read(tmp_path, "    cb_reserve_back(0, P<258>::v);", "    cb_reserve_back(0, P<258>::w);",
               "    cb_reserve_back(0, Q<255>::v + 1);", "    cb_reserve_back(0, S::v);", "    cb_reserve_back(0, 6 + S::b);",
               "    cb_reserve_back(0, R<255>::v + 4);", prelude=prelude)
    assert _reserved(ep) == [2, 3, 1, 2, 7, 3]


def test_a_field_holds_its_value_converted_to_its_type(tmp_path: Path) -> None:
    """g++ -std=c++17: a ``uint8_t`` field holds 2 of 258 whether its default member initializer, a constructor's
    member initializer, a store by its bare name in a constructor or method body, or a store through the object
    gives it. The first four were read as 258 (a reader pushing 2 pages proved against consumers of 258)."""
    prelude = ("struct D { uint8_t x = 258; };", "struct I { uint8_t x; I(uint32_t v) : x(v) {} };",
               "struct B { uint8_t x; B(uint32_t v) { x = v; } };",
               "struct M { uint8_t x = 0; void set(uint32_t v) { x = v; } };")
    ep = _read(tmp_path, "    cb_reserve_back(0, D{}.x);", "    cb_reserve_back(0, I(258).x);",
               "    cb_reserve_back(0, B(258).x);", "    M m;", "    m.set(258);", "    cb_reserve_back(0, m.x);",
               "    m.x = 259;", "    cb_reserve_back(0, m.x);", prelude=prelude)
    assert _reserved(ep) == [2, 2, 2, 2, 3]


@pytest.mark.parametrize("lines", [
    ("    uint64_t b = 5000000000ull;", "    cb_reserve_back(0, (uint32_t)(b / 2000000000ull));"),  # g++: 2
    ("    uint64_t b = 4294967296ull + 7;", "    cb_reserve_back(0, (uint32_t)(b % 5));"),  # g++: 3
    ("    uint64_t b = 65536ull * 65536ull;", "    if (b != 0) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 1); }"),
], ids=["literal-past-the-word", "sum-past-the-word", "product-past-the-word"])
def test_a_64_bit_value_past_the_32_bit_word_is_not_followed(tmp_path: Path, lines: tuple[str, ...]) -> None:
    """The reading's arithmetic is on 32-bit words: ``5000000000ull / 2000000000ull`` (g++: 2) was read through the
    word's wrap, and ``65536ull * 65536ull != 0`` (true) as false: a branch taken the wrong way."""
    with pytest.raises(Refused, match=r"not known statically|on a value not known"):
        _read(tmp_path, *lines)


def test_an_octal_literal_is_read(tmp_path: Path) -> None:
    """``010`` is 8 (it was refused as a number not followed)."""
    assert _reserved(_read(tmp_path, "    cb_reserve_back(0, 010 - 6);")) == [2]


def test_a_word_of_2_31_or_more_converted_to_a_signed_32_bit_type_is_negative(tmp_path: Path) -> None:
    """g++ (and GCC's modular conversion): ``int32_t k = 4294967295u`` is -1, so ``k < 0`` holds; it was read as
    4294967295 and the branch taken the other way."""
    ep = _read(tmp_path, "    int32_t k = 4294967295u;", "    if (k < 0) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 1); }",
               "    int32_t h = 2147483648u;", "    cb_reserve_back(0, (uint32_t)(h + 2147483650));")
    assert _reserved(ep) == [2, 2]


@pytest.mark.parametrize("t", ["uint8_t", "uint16_t", "uint64_t", "const uint8_t"])
def test_get_arg_val_of_a_type_not_4_bytes_wide_is_refused(tmp_path: Path, t: str) -> None:
    """api/dataflow/dataflow_api.h:150 static_asserts ``sizeof(T) == 4``: GCC stops. ``get_arg_val<uint8_t>(0)``
    was read as the whole word."""
    with pytest.raises(Refused, match="get_arg_val of a type not 4 bytes wide") as e:
        _read(tmp_path, f"    uint32_t m = get_arg_val<{t}>(0);", "    cb_reserve_back(0, m);")
    assert "dataflow_api.h:150" in e.value.detail


def test_a_narrow_type_named_through_an_alias_converts(tmp_path: Path) -> None:
    """g++: each holds 2 of 258 -- a variable of a ``typedef``'s type, of ``decltype`` of a ``uint8_t``, a
    template's ``T`` bound to ``uint8_t``, a field of a ``using`` alias's type. Each was read as 258 (only a
    ``using`` alias of a variable's type converted)."""
    prelude = ("typedef uint8_t T8;", "using U8 = uint8_t;", "struct S { U8 x = 258; };",
               "template <typename T> inline T conv(uint32_t v) { T t = v; return t; }")
    ep = _read(tmp_path, "    T8 a = 258;", "    cb_reserve_back(0, a);", "    uint8_t b0 = 1;", "    decltype(b0) b = 258;",
               "    cb_reserve_back(0, b);", "    cb_reserve_back(0, conv<uint8_t>(258));", "    cb_reserve_back(0, S{}.x);",
               "    typedef uint16_t T16;", "    T16 c = 65538;", "    cb_reserve_back(0, c);", prelude=prelude)
    assert _reserved(ep) == [2, 2, 2, 2, 2]


def test_a_name_declared_narrow_and_wide_is_not_followed_past_the_narrow_range(tmp_path: Path) -> None:
    """An outer ``uint32_t z`` and an inner ``uint8_t z``: an assignment after the inner block writes the outer one,
    whose type the declaration in scope gives (``KernelReader.type_of``, since 2026-12-08; until then the reading did
    not know which and refused a value a uint8_t would wrap): 264, C++'s."""
    ep = _read(tmp_path, "    uint32_t z = 250;", "    { uint8_t z = 3; (void)z; }", "    z += 14;",
               "    cb_reserve_back(0, z - 256);")
    assert _reserved(ep) == [8]
    ep = _read(tmp_path, "    uint32_t z = 20;", "    { uint8_t z = 3; (void)z; }", "    z += 14;",
               "    cb_reserve_back(0, z - 26);")
    assert _reserved(ep) == [8]


@pytest.mark.parametrize(("count", "top"), [
    ("uint8_t m = n;", 300), ("uint32_t m = static_cast<uint8_t>(n);", 300), ("uint32_t m = uint8_t(n);", 300),
    ("uint32_t m = (int8_t)n;", 300), ("bool m = n;", 300), ("int32_t m = n;", 2**32 - 1), ("int m = n;", 2**31)])
def test_a_runtime_range_converted_to_a_narrow_type_it_overflows_is_not_followed(tmp_path: Path, count: str,
                                                                                top: int) -> None:
    """``uint8_t m = n`` with ``n`` in ``0..300`` is 0 at n = 256 (``int32_t m`` of ``0..2**32 - 1`` is negative from
    2**31): the loop it counts runs no iteration there. The reading kept ``n`` (a conversion of a number that is not
    a constant was the number), so a reader pushing ``m`` pages to a kernel waiting for ``n`` was proved; the
    hardware hangs at n = 256 (2**31). Its count is refused."""
    with pytest.raises(Refused, match="loop bound not known statically") as e:
        _read(tmp_path, f"    {count}", "    for (int32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }",
              args={"n": f"0..{top}"})
    assert "converted from a number known only at run time" in e.value.detail


@pytest.mark.parametrize(("prelude", "body"), [
    ((), ("    uint8_t m = 0;", "    m = n;", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }")),
    (("void f(uint8_t k) { for (uint32_t i = 0; i < k; ++i) { cb_push_back(0, 1); } }",), ("    f(n);",)),
    (("uint8_t g(uint32_t k) { return k; }",),
     ("    uint32_t m = g(n);", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }")),
])
def test_a_runtime_range_assigned_passed_or_returned_narrow_is_not_followed(tmp_path: Path, prelude: tuple[str, ...],
                                                                           body: tuple[str, ...]) -> None:
    """The same conversion by an assignment, a ``uint8_t`` parameter and a ``uint8_t`` result: each converted only
    constants, so ``n`` of ``0..300`` passed through them was read as ``n``."""
    with pytest.raises(Refused, match="loop bound not known statically"):
        _read(tmp_path, *body, prelude=prelude, args={"n": "0..300"})


@pytest.mark.parametrize(("count", "top"), [("uint8_t m = n;", 255), ("uint16_t m = n;", 300), ("bool m = n;", 1),
                                            ("int8_t m = n;", 127), ("int32_t m = n;", 2**31 - 1)])
def test_a_runtime_range_a_narrow_type_holds_is_kept(tmp_path: Path, count: str, top: int) -> None:
    """The same conversion where every value of the range fits the type (``n`` in ``0..top``): the count stays the
    trip."""
    ep = _read(tmp_path, f"    {count}", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }",
               args={"n": f"0..{top}"})
    loop = ep.ops[0]
    assert isinstance(loop, Loop)
    assert not isinstance(loop.count, int)


@pytest.mark.parametrize(("body", "top"), [
    (("    uint32_t m = n + 1;", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }"), 2**32 - 1),
    (("    for (uint32_t i = 0; i < 2 * n; ++i) { cb_push_back(0, 1); }",), 2**31),
    (("    uint32_t m = n + 1;", "    for (uint32_t i = 0; i <= m; ++i) { cb_push_back(0, 1); }"), 2**32 - 1),
])
def test_loop_bound_past_the_word_at_a_runtime_range_high_end_is_refused(tmp_path: Path, body: tuple[str, ...],
                                                                         top: int) -> None:
    """``m = n + 1`` with ``n`` in ``0..2**32 - 1``: at the range's top ``m`` is 0 as a uint32_t and ``i < m`` runs no
    iteration; the reading counted 2**32 and proved a reader of ``m`` pages against a consumer waiting for ``n`` and
    one more page, which hangs at that value. Refused (also ``2 * n`` from ``0..2**31``)."""
    with pytest.raises(Refused, match=r"loop bound past 2\*\*32 - 1 at a runtime range's high end"):
        _read(tmp_path, *body, args={"n": f"0..{top}"})


def test_loop_bound_inside_the_word_at_a_runtime_range_high_end_is_read(tmp_path: Path) -> None:
    """From ``0..2**32 - 2``, ``i < n + 1`` is ``n + 1`` iterations at every value: one loop over the trip."""
    ep = _read(tmp_path, "    uint32_t m = n + 1;", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }",
               args={"n": f"0..{2**32 - 2}"})
    assert [type(op).__name__ for op in ep.ops] == ["Loop"]


def test_loop_bound_below_zero_at_a_runtime_range_low_end_is_refused(tmp_path: Path) -> None:
    """``for (uint32_t i = 0; i <= n - 1; ++i)`` with ``n`` in ``0..8``: at n = 0 the bound is 2**32 - 1 and the loop
    never ends (the reading once counted n iterations, none at 0, and proved it); from ``1..8`` it is n iterations."""
    for cond in ("i <= n - 1", "i < n - 1"):
        with pytest.raises(Refused, match="loop bound below 0 at a runtime range's low end"):
            _read(tmp_path, f"    for (uint32_t i = 0; {cond}; ++i) {{ cb_push_back(0, 1); }}", args={"n": "0..8"})
    ep = _read(tmp_path, "    for (uint32_t i = 0; i <= n - 1; ++i) { cb_push_back(0, 1); }", args={"n": "1..8"})
    assert [type(op).__name__ for op in ep.ops] == ["Loop"]


def test_order_of_a_loop_index_expression_below_zero_is_refused(tmp_path: Path) -> None:
    """``if (i - 1 < 7)`` for a uint32_t i in 0..7: at i = 0, ``i - 1`` is 2**32 - 1 and the branch is not taken (7
    pushes); the reading once took it in every iteration (8) and proved a program the board hangs on."""
    with pytest.raises(Refused, match="order of a negative and a non-negative number"):
        _read(tmp_path, "    for (uint32_t i = 0; i < 8; ++i) { if (i - 1 < 7) { cb_push_back(0, 1); } }")
    ep = _read(tmp_path, "    for (uint32_t i = 0; i < 8; ++i) { if (i + 1 < 8) { cb_push_back(0, 1); } }")
    assert ep.ops[0].body[0].when == Guard.NOT_LAST  # 7 of the 8 iterations


def test_switch_case_label_inside_a_nested_block_is_refused(tmp_path: Path) -> None:
    """``switch (3) { case 1: { ...; case 3: ; } break; default: ... }`` jumps to the inner ``case 3`` and runs no
    reserve; the reading once saw no top-level ``case 3``, ran ``default`` and proved a program the board hangs on.
    A case label of -1 matches a uint32_t of 2**32 - 1."""
    with pytest.raises(Refused, match="switch case label inside a nested statement"):
        _read(tmp_path, "    switch (3) { case 1: { cb_reserve_back(0, 1); case 3: ; } break; "
                        "default: cb_reserve_back(0, 2); }")
    ep = _read(tmp_path, "    switch (4294967295u) { case -1: cb_reserve_back(0, 1); break; default: cb_reserve_back(0, 2); }")
    assert _reserved(ep) == [1]


def test_a_statement_the_parser_completed_is_refused(tmp_path: Path) -> None:
    """``noc_async_read_barrier() cb_push_back(0, 1);`` lacks a ';' (GCC rejects the kernel); tree-sitter's recovery
    inserted one and the reading once proved what it made of it. Likewise a block missing its '}'."""
    with pytest.raises(Refused, match=r"C\+\+ the parser could not read") as e:
        _read(tmp_path, "    cb_reserve_back(0, 1);", "    noc_async_read_barrier()", "    cb_push_back(0, 1);")
    assert "missing ';'" in e.value.detail
    with pytest.raises(Refused, match="missing '}'"):
        _read(tmp_path, "    for (uint32_t i = 0; i < 2; ++i) { cb_push_back(0, 1);")


def test_not_equal_bound_below_the_start_at_a_runtime_range_low_end_is_refused(tmp_path: Path) -> None:
    """``for (uint32_t i = 5; i != n; ++i)`` with n in ``0..8``: at n < 5 the index passes n and wraps (about 2**32
    iterations); the reading once counted n - 5, none there. With ``<`` it is n - 5 (none below 5)."""
    with pytest.raises(Refused, match="'!=' bound is stepped over"):
        _read(tmp_path, "    for (uint32_t i = 5; i != n; ++i) { cb_push_back(0, 1); }", args={"n": "0..8"})
    ep = _read(tmp_path, "    for (uint32_t i = 5; i < n; ++i) { cb_push_back(0, 1); }", args={"n": "0..8"})
    assert [type(op).__name__ for op in ep.ops] == ["Loop"]
    ep = _read(tmp_path, "    for (uint32_t i = 5; i != n; ++i) { cb_push_back(0, 1); }", args={"n": "5..8"})
    assert [type(op).__name__ for op in ep.ops] == ["Loop"]


def test_signed_index_from_below_zero_at_a_runtime_range_low_end(tmp_path: Path) -> None:
    """``for (int i = n - 1; i >= 0; --i)``: at n = 0, i starts at -1 and the loop runs no iteration (n in all);
    with a uint32_t index it never ends (refused above)."""
    ep = _read(tmp_path, "    for (int i = n - 1; i >= 0; --i) { cb_push_back(0, 1); }", args={"n": "0..8"})
    assert [type(op).__name__ for op in ep.ops] == ["Loop"]
    assert ep.ops[0].count == "n"


def test_order_of_two_signed_operands_is_read_as_numbers(tmp_path: Path) -> None:
    """``int`` variables and literals compare as numbers in C++ (``int x = -2; x > 0`` is false): no refusal. The
    vendor's reverse loops ``for (int i = d - 1; i >= 0; --i)`` (permute's readers) read as they run."""
    ep = _read(tmp_path, "    int x = -2;", "    if (x > 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
               "    for (int i = 3; i >= 0; --i) { cb_reserve_back(0, i % 2 + 3); }",
               "    for (int i = 0 - 1; i >= 0; --i) { cb_reserve_back(0, 7); }")
    assert _reserved(ep) == [2, 4, 3, 4, 3]
    ep = _read(tmp_path, "    int x = -2;", "    uint32_t z = 0;", "    if (x > z) { cb_reserve_back(0, 1); }")
    assert _reserved(ep) == [1]  # against a uint32_t: unsigned, x is 2**32 - 2


def test_order_with_a_uint32_variable_compares_words(tmp_path: Path) -> None:
    """``uint32_t r = 2 - 4; r < 32`` is false in C++ (r is 2**32 - 2), read as such, not refused; the same with a
    uint32_t declared in an inner scope shadowing an int."""
    ep = _read(tmp_path, "    uint32_t r = 2 - 4;", "    if (r < 32) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
               "    int k = -1;", "    { uint32_t k = 0 - 1; if (k > 5) { cb_reserve_back(0, 3); } }")
    assert _reserved(ep) == [2, 3]


# ------------------------------------------------------------------ references and addresses of locals


@pytest.mark.parametrize(("body", "pushes"), [
    # a store through a local reference is a store to the variable it names (read once as a copy: 8, proved)
    (("    uint32_t m = n;", "    uint32_t& r = m;", "    r = r + 1;"), 9),
    (("    uint32_t m = n;", "    auto& r = m;", "    r += 2;"), 10),
    # ... and the other way round: the reference sees the variable's stores
    (("    uint32_t m = 1;", "    uint32_t& r = m;", "    m = n;", "    m = r * 2;"), 16),
    # stepped in a loop through the reference
    (("    uint32_t m = 0;", "    uint32_t& r = m;", "    for (uint32_t j = 0; j < 3; ++j) { r++; }"), 3),
    # a reference in an inner scope ends with it; a new variable of the name there is another object
    (("    uint32_t m = n;", "    { uint32_t& r = m; r = 5; }", "    { uint32_t r = 7; r++; }"), 5),
    (("    uint32_t m = n;", "    uint32_t& r = m;", "    { uint32_t m = 3; m++; }", "    r = r - 1;"), 7),
    # a reference to const, and a copy, change nothing
    (("    uint32_t m = n;", "    const uint32_t& r = m;", "    uint32_t c = r;", "    c = 1;"), 8),
])
def test_local_reference_is_the_variable_it_names(tmp_path: Path, body: tuple[str, ...], pushes: int) -> None:
    ep = _read(tmp_path, *body, "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }")
    assert _pushes(ep) == pushes


def test_address_of_a_local_leaves_it_not_followed(tmp_path: Path) -> None:
    """``uint32_t* p = &m; *p = 9;`` changes ``m`` through the pointer, which the reading does not follow: a loop over
    ``m`` was counted 8 times (its value before) and proved; it is refused by name now, at the loop."""
    with pytest.raises(Refused, match=r"loop bound not known statically \(i < m: m, whose address is taken \(&m\)") \
            as e:
        _read(tmp_path, "    uint32_t m = n;", "    uint32_t* p = &m;", "    *p = 9;",
              "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }")
    assert e.value.loc.line == 7
    # taking the address after the loop leaves the loop as it is
    ep = _read(tmp_path, "    uint32_t m = n;", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }",
               "    uint32_t* p = &m;", "    *p = 9;")
    assert _pushes(ep) == 8


def test_static_local_of_a_called_function_is_refused(tmp_path: Path) -> None:
    """``uint32_t calls() { static uint32_t c = 0; return ++c; }`` called twice returns 1, then 2; inlined at each call
    it was set up again and returned 1 both times, so ``n + calls() - 1`` was read as 8 iterations where the RISC runs
    9 (a read past the tensor, proved). A static const, and a static local of ``kernel_main`` (run once), are read."""
    with pytest.raises(Refused, match="static local variable of a called function") as e:
        _read(tmp_path, "    calls();", "    uint32_t extra = calls() - 1;",
              "    for (uint32_t i = 0; i < n + extra; ++i) { cb_push_back(0, 1); }",
              prelude=("uint32_t calls() {", "    static uint32_t c = 0;", "    return ++c;", "}"))
    assert e.value.loc.line == 3
    ep = _read(tmp_path, "    for (uint32_t i = 0; i < n + two(); ++i) { cb_push_back(0, 1); }",
               prelude=("uint32_t two() { static const uint32_t k = 2; return k; }",))
    assert _pushes(ep) == 10
    ep = _read(tmp_path, "    static uint32_t m = 3;", "    m++;", "    for (uint32_t i = 0; i < m; ++i) { cb_push_back(0, 1); }")
    assert _pushes(ep) == 4


def test_a_variable_an_iteration_leaves_as_it_was_is_known_after_a_runtime_loop(tmp_path: Path) -> None:
    """``cb`` passed to each call in a loop over a runtime range is a candidate induction (a reference parameter
    could step it) whose step the reading finds 0; after the loop it was still made unknown, so the next iteration of
    the enclosing loop (read iteration by iteration: the page pointer moves by a runtime count) refused
    ``cb_reserve_back(cb, 1)`` with "circular buffer index not known statically (cb: cb after a loop of a runtime
    count)". Any number of iterations leaves it 0: the reading now goes on, to the refusal that belongs to this
    kernel (its read at a write pointer the runtime push count moved)."""
    (tmp_path / "k.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"',
        "void kernel_main() {",
        "    uint32_t src = get_arg_val<uint32_t>(0);",
        "    uint32_t flag = get_arg_val<uint32_t>(1);",
        "    constexpr uint32_t cb = 0;",
        "    const InterleavedAddrGenFast<true> s = {.bank_base_address = src, .page_size = 2048};",
        "    for (uint32_t i = 0; i < 4; ++i) {",
        "        cb_reserve_back(cb, 1);",
        "        uint32_t l1 = get_write_ptr(cb);",
        "        noc_async_read_tile(i, s, l1);",
        "        noc_async_read_barrier();",
        "        for (uint32_t j = 0; j < flag; ++j) { cb_push_back(cb, 1); }",
        "    }",
        "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "ints", "kernel_root": str(tmp_path),
            "tensors": [{"name": "t", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader", "runtime_args": ["src", "flag"]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"],
                            "runtime_args": {"k": {"src": {"tensor": "t"}, "flag": "0..1"}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    with pytest.raises(Refused, match="read into L1 not at the buffer's next unfilled tile") as e:
        import_host(tmp_path / "h.json")
    assert "circular buffer index" not in str(e.value)
    assert e.value.loc.line == 10


def test_a_branch_on_a_runtime_range_outside_its_loop_is_refused_as_such(tmp_path: Path) -> None:
    """``if (n > 3) return;`` with ``n`` a runtime range: refused naming the range (it was named a branch on several
    loop indices, of which it has none)."""
    with pytest.raises(Refused, match="branch on a runtime range"):
        _read(tmp_path, "    if (n > 3) { return; }", "    for (uint32_t i = 0; i < n; ++i) { cb_push_back(0, 1); }",
              args={"n": "0..8"})


def test_a_loop_between_two_runtime_ranges_is_refused_by_its_own_name(tmp_path: Path) -> None:
    """``for (i = lo; i < hi; ++i)`` with both bounds runtime ranges: a count ``hi - lo`` of two trips is no one trip
    (and ``lo`` may pass ``hi``), so it is refused, but by that name, not as a bound "varying with an enclosing loop
    index" (there is no enclosing loop: the first name a new user was given)."""
    src = "\n".join(['#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
                     "    uint32_t lo = get_arg_val<uint32_t>(0);", "    uint32_t hi = get_arg_val<uint32_t>(1);",
                     "    for (uint32_t i = lo; i < hi; ++i) { cb_push_back(0, 1); }", "}"])
    (tmp_path / "k.cpp").write_text(src)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "ints", "kernel_root": str(tmp_path),
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader", "runtime_args": ["lo", "hi"]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": {
                "lo": {"range": "0..2", "trip": "lo"}, "hi": {"range": "2..4", "trip": "hi"}}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    with pytest.raises(Refused, match="loop count of two runtime ranges") as e:
        import_host(tmp_path / "h.json")
    assert e.value.loc.line == 5


def test_a_shift_of_a_64_bit_operand_by_32_to_63_is_defined(tmp_path: Path) -> None:
    """``1ull << 32`` is 2**32 (C++ [expr.shift]: a shift is undefined only by the width of the promoted left operand
    or more, and ``unsigned long long`` is 64 bits on the RV32 cores), a 64-bit value handled as the 64-bit rules say:
    an explicit ``(uint32_t)`` of it is the word (g++: 2 and 8). It was refused as "a shift by 32 (undefined)"; ``1u << 32``
    and ``1ull << 64`` stay undefined, and a comparison of 2**32 stays one past 32 bits."""
    ep = _read(tmp_path, "    cb_reserve_back(0, (uint32_t)((1ull << 32) + 2));",
               "    cb_reserve_back(0, (uint32_t)(((uint64_t)n << 32) >> 32));")
    assert _reserved(ep) == [2, 8]
    with pytest.raises(Refused, match=r"a shift by 64 \(undefined\)"):
        _read(tmp_path, "    cb_reserve_back(0, (uint32_t)((1ull << 64) + 2));")
    with pytest.raises(Refused, match=r"a shift by 32 \(undefined\)"):
        _read(tmp_path, "    cb_reserve_back(0, (uint32_t)(((uint64_t)1u << 32) + (1u << 32)));")
    with pytest.raises(Refused, match="comparison of a 64-bit value past 32 bits"):
        _read(tmp_path, "    if ((1ull << 32) != 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")


def test_a_64_bit_constant_past_the_word_converted_to_32_bits_is_the_truncated_word(tmp_path: Path) -> None:
    """``(uint32_t)(65536ull * 65536ull + 2)`` is 2 (g++); it was kept 4294967298, and a reserve of it was an invalid
    program (a semaphore increment of it would have counted 2**32 more than the kernel's). Signed: ``(int32_t)`` of
    2**32 + 2**32 - 1 is -1."""
    ep = _read(tmp_path, "    cb_reserve_back(0, (uint32_t)(65536ull * 65536ull + 2));",
               "    int32_t k = (int32_t)(65536ull * 65536ull * 2 - 1);",
               "    if (k < 0) { cb_reserve_back(0, 3); } else { cb_reserve_back(0, 4); }")
    assert _reserved(ep) == [2, 3]
