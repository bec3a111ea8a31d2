"""The tt-metal front end's C++ type of every named integer object it writes to, on small kernels written here (a new
user's nu14 W1, F1-F3 and messages): a variable deduced by ``auto`` / ``auto&`` / brace-init from its initializer's
type, a reference's referent's type (a reference to a reference is the one object; a ``const T&`` bound to a value of
another type is a temporary of type ``T``), a reference parameter's. Every store through any of its names converts to
that type as C++ does ([conv.integral], [expr.ass], [dcl.spec.auto]); where the type is not known, the value is not
followed and its use is refused by name. The expected values are g++'s (nu14's oracle.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_leftovers import INC_LINE, INCREMENTS, _inc_host, _increments, _pushed, _read

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Loop
from verispatial.ir.program import walk

# ------------------------------------------------------------------ 1. the increment C++ computes (the waiter waits 1)

#: (the statements before the increment, the increment's expression): C++ increments by exactly 1 in each (g++)
ONE = [
    ("    uint8_t a = 255; auto k = a; k += 2;", "k"),  # e25: auto of a uint8_t is a uint8_t
    ("    const uint8_t a = 255; auto k = a; k += 2;", "k"),  # r14: auto drops the const, not the width
    ("    uint8_t a = 255; auto k{a}; k += 2;", "k"),  # r15: brace-init deduces the same
    ("    uint16_t a = 65535; auto k = a; k = k + 2;", "k"),  # r08: k + 2 is an int, stored into a uint16_t
    ("    int8_t a = 127; auto k = a; k += 1;", "(uint32_t)(k + 129)"),  # r09: int8_t 127 + 1 is -128
    ("    uint8_t a = 255; uint8_t& r = a; r += 2;", "a"),  # e29
    ("    uint16_t a = 65535; uint16_t& r0 = a; uint16_t& r = r0; r += 2;", "a"),  # e30: a ref to a ref
    ("    uint16_t a = 0; uint16_t& r = a; r = 65537;", "a"),  # r01
    ("    uint8_t a = 255; uint8_t& r = a; ++r; ++r;", "a"),  # r02
    ("    uint8_t a = 255; uint8_t& r = a; r++; r++;", "a"),  # r03
    ("    uint8_t a = 255; uint8_t& r = a; r++; r++;", "r"),
    ("    uint8_t a = 255; auto& r = a; r += 2;", "a"),  # r07
    ("    uint8_t a = 250; uint8_t& r0 = a; auto& r = r0; r += 7;", "a"),  # r13
    ("    uint8_t a = 1; uint8_t& r = a; r <<= 8; r += 1;", "a"),  # r12: 256 is 0 in a uint8_t
    ("    const uint8_t& r = 257;", "r"),  # r06: a temporary uint8_t holds 1
    ("    uint32_t big = 513; const uint8_t& r = big;", "r"),  # a temporary uint8_t of a uint32_t: 1
    ("    uint8_t a = 248; uint8_t& r = a; for (uint32_t j = 0; j < 3; ++j) { r += 3; }", "(uint32_t)a + 0u"),  # r16
    ("    uint8_t a = 255; auto m = a; auto s = m + 2; s -= 256;", "s"),  # m + 2 is an int: 257, not 1
    ("    auto k = 0xFFFFFFFFu; k += 2;", "k"),  # s06 (F2): an unsigned int wraps; was refused as type not known
    ("    int16_t a = 32767; int16_t& r = a; r += 1;", "(uint32_t)(a + 32769)"),  # r11 (F1): -32768 + 32769
    ("    uint32_t k = uint32_t{5};", "k - 4u"),  # e20 (F3): a functional cast of a braced value
    ("    uint32_t n = 0x100000001ull;", "n"),  # l08/h05 (F2): the declaration converts to the word 1
    # ``uint8_t v(x);`` is a variable (its "parameter" names a variable), typed as ``uint8_t v = x;``: it read 257
    ("    uint32_t x = 255; uint8_t v(x); v += 2;", "v"),
    ("    uint32_t x = 255; uint8_t v(x); auto w = v; w += 2;", "w"),
]

_HELPER_REF = """static void bump(uint8_t& x) { x += 2; }
static uint32_t addref() { uint8_t a = 255; uint8_t& r = a; r += 2; return a; }
"""


@pytest.mark.parametrize("inc", INCREMENTS)
@pytest.mark.parametrize(("prelude", "value"), ONE)
def test_a_store_converts_to_the_deduced_or_referred_type(tmp_path: Path, inc: str, prelude: str, value: str) -> None:
    """The increment is g++'s 1 and the waiter's wait for 1 proves (each read the value unconverted: 257, 65537...
    and a wait for that proved a kernel that hangs)."""
    p = import_host(_inc_host(tmp_path, inc % value, prelude))
    assert _increments(p) == [1]
    assert certify(p).exit_code == 0


@pytest.mark.parametrize(("prelude", "value"), [
    ("    uint8_t a = 255; bump(a);", "a"),  # a reference parameter of a helper
    ("", "addref()"),  # r10: a local reference in a helper
    ("    uint8_t a = 255; uint8_t& r = a; bump(r);", "r"),
])
def test_a_store_in_a_helper_converts_to_the_referred_type(tmp_path: Path, prelude: str, value: str) -> None:
    host = _inc_host(tmp_path, INCREMENTS[0] % value, prelude)
    src = (tmp_path / "inc.cpp").read_text().replace("void kernel_main() {", _HELPER_REF + "void kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    p = import_host(host)
    assert _increments(p) == [1]
    assert certify(p).exit_code == 0


@pytest.mark.parametrize(("prelude", "value"), [
    ("    uint8_t a = 255; auto k = a; k += 2;", "k"),
    ("    uint8_t a = 255; uint8_t& r = a; r += 2;", "a"),
])
def test_the_unconverted_value_is_refuted(tmp_path: Path, prelude: str, value: str) -> None:
    """The naive twin: incremented by 1, a wait for 257 hangs on the device (dataflow_api.h's noc_semaphore_wait
    spins while the word differs) and must not prove."""
    p = import_host(_inc_host(tmp_path, INCREMENTS[0] % value, prelude))
    assert _increments(p) == [1]
    waiter = (tmp_path / "waiter.cpp").read_text().replace("noc_semaphore_wait(ready, 1)", "noc_semaphore_wait(ready, 257)")
    (tmp_path / "waiter.cpp").write_text(waiter)
    report = certify(import_host(tmp_path / "host.json"))
    assert report.exit_code == 1
    assert {r.family for r in report.results if r.verdict == Verdict.REFUTED} & {"semaphore", "deadlock"}


@pytest.mark.parametrize(("prelude", "value", "name"), [
    ("    auto k = ret(); k += 300;", "k", "k"),  # the type of a call's result not deduced
    ("    auto k = get_compile_time_arg_val(0) * 0 + ret(); k += 300;", "k", "k"),
])
def test_a_store_to_an_object_of_a_type_not_known_is_refused_by_name(tmp_path: Path, prelude: str, value: str,
                                                                     name: str) -> None:
    host = _inc_host(tmp_path, INCREMENTS[0] % value, prelude)
    src = (tmp_path / "inc.cpp").read_text().replace(
        "void kernel_main() {", "template <typename T = uint8_t> T ret() { return 1; }\nvoid kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    with pytest.raises(Refused, match=f"{name}.*type") as e:
        import_host(host)
    assert e.value.loc.line == INC_LINE + 1



@pytest.mark.parametrize(("prelude", "construct"), [
    # an lvalue reference to a ([dcl.ref]/6): read as a copy, the store was lost and an increment of 1 read as 4
    ("    uint32_t a = 4; auto&& r = a; r = 1;", "rvalue or forwarding reference variable"),
    ("    uint32_t a = 4; uint32_t&& r = static_cast<uint32_t&&>(a); r = 1;", "rvalue or forwarding reference variable"),
    # (a) is an lvalue: decltype(auto) makes r a uint32_t& ([dcl.type.decltype]/1)
    ("    uint32_t a = 4; decltype(auto) r = (a); r = 1;", "decltype\\(auto\\) variable"),
])
def test_a_binding_the_reading_does_not_link_is_refused(tmp_path: Path, prelude: str, construct: str) -> None:
    with pytest.raises(Refused, match=construct) as e:
        import_host(_inc_host(tmp_path, INCREMENTS[0] % "a", prelude))
    assert e.value.loc.line == INC_LINE - 1


@pytest.mark.parametrize("prelude", [
    "    uint8_t a = 255; uint8_t& r = ++a; r += 2;",  # a new user's a49: read 255 where g++ gives 1
    "    uint8_t a = 255; uint8_t b = 0; uint8_t& r = (a = b); r += 1;",
    "    uint8_t a = 255; uint8_t b = 0; uint8_t& r = true ? a : b; r = 1;",
    "    auto& r = get(); r = 1; uint32_t a = g;",  # a helper returning a reference to a global
])
def test_a_reference_to_an_expressions_result_is_refused(tmp_path: Path, prelude: str) -> None:
    host = _inc_host(tmp_path, INCREMENTS[0] % "a", prelude)
    src = (tmp_path / "inc.cpp").read_text().replace(
        "void kernel_main() {", "static uint8_t g = 255;\nstatic uint8_t& get() { return g; }\nvoid kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    with pytest.raises(Refused, match="reference to the result of an expression"):
        import_host(host)

# ------------------------------------------------------------------ 2. a page count built from such a value


@pytest.mark.parametrize("decl", [
    "uint8_t n = 255; auto m = n; m += 5;",  # x01
    "uint8_t n = 255; uint8_t m = 0; uint8_t& r = m; r = n; r += 5;",  # x02
    "uint8_t n = 255; uint8_t m = n; uint8_t& r0 = m; uint8_t& r = r0; r += 5;",  # x03
])
def test_a_page_count_from_a_narrow_value_is_the_count_cpp_computes(tmp_path: Path, decl: str) -> None:
    """m is the uint8_t 4: two pages pushed, not four (x01-x03 read 260 and proved a ring whose reader hangs)."""
    ep = _read(tmp_path, f"    {decl}", "    uint32_t tiles = (m == 260) ? 4 : 2;",
               "    for (uint32_t i = 0; i < tiles; ++i) { cb_reserve_back(0, 1); cb_push_back(0, 1); }")
    assert [op.count for op in walk(ep.ops) if isinstance(op, Loop)] == [2]


def test_a_loop_index_through_a_reference_wraps_as_its_type(tmp_path: Path) -> None:
    ep = _read(tmp_path, "    uint8_t a = 254; auto b = a; b += 3;",
               "    for (uint32_t i = 0; i < b; ++i) { cb_reserve_back(0, 1); cb_push_back(0, 1); }")
    assert [op.count for op in walk(ep.ops) if isinstance(op, Loop)] == [1]


# ------------------------------------------------------------------ 3. a switch's init-statement (F3 w10)


def test_a_switch_init_statement_declares_its_variable(tmp_path: Path) -> None:
    ep = _read(tmp_path, "    uint32_t k = 1;",
               "    switch (uint32_t m = k + 1; m) { case 2: cb_push_back(0, 2); break; default: cb_push_back(0, 1); }")
    assert _pushed(ep) == 2


# ------------------------------------------------------------------ 4. page counts C++ converts (messages)


@pytest.mark.parametrize(("call", "value"), [
    ("cb_reserve_back(0, 0xFFFFFFFFu);", "4294967295"),  # l11: int32_t num_pages -1
    ("cb_wait_front(0, -1);", "-1"),  # g02
    ("cb_wait_front(0, 65537);", "65537"),  # g03
    ("cb_wait_front(0, 0x10000);", "65536"),  # g09
])
def test_a_page_count_out_of_range_is_refused_at_the_kernels_line(tmp_path: Path, call: str, value: str) -> None:
    """Refused by the front end at the kernel's file:line, naming the value (it reached the IR validator and was
    reported against the host file)."""
    with pytest.raises(Refused, match=f"page count.*{value}") as e:
        _read(tmp_path, f"    {call}")
    assert e.value.loc.line == 3
    assert str(e.value.loc.file).endswith("k.cpp")


# ------------------------------------------------------------------ 5. every other look-up by name


_HELPER_USE = """static uint32_t bumped(uint8_t& x) { x += 2; return x; }
static uint32_t wrapped(uint8_t x) { uint8_t& r = x; r += 2; return r; }
"""


@pytest.mark.parametrize(("prelude", "value"), [
    ("    uint8_t a = 255;", "bumped(a)"),  # the reference parameter holds 1 in the callee too
    ("", "wrapped(255)"),
])
def test_a_reference_parameter_holds_its_type_in_the_callee(tmp_path: Path, prelude: str, value: str) -> None:
    host = _inc_host(tmp_path, INCREMENTS[0] % value, prelude)
    src = (tmp_path / "inc.cpp").read_text().replace("void kernel_main() {", _HELPER_USE + "void kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    assert _increments(import_host(host)) == [1]


@pytest.mark.parametrize(("decl", "count"), [
    ("uint8_t s = 250; for (auto i = s; i != 4; ++i)", 10),  # an auto index of a uint8_t wraps past 255 to 0
    ("uint8_t s = 250; uint8_t& r = s; for (auto i = r; i != 4; ++i)", 10),
])
def test_a_loop_index_deduced_narrow_wraps_as_its_type(tmp_path: Path, decl: str, count: int) -> None:
    ep = _read(tmp_path, f"    {decl} {{ cb_reserve_back(0, 1); cb_push_back(0, 1); }}")
    assert _pushed(ep) + sum(op.count * 0 for op in walk(ep.ops) if isinstance(op, Loop)) == count


@pytest.mark.parametrize("decl", [
    "uint8_t s = 0; for (auto i = s; i < 300; ++i)",  # never ends on the device: i wraps at 256
    "uint8_t s = 0; decltype(s) e = 0; for (auto i = e; i < 300; ++i)",
])
def test_a_loop_index_deduced_narrow_that_never_ends_is_refused(tmp_path: Path, decl: str) -> None:
    with pytest.raises(Refused, match="wraps before its condition ends it"):
        _read(tmp_path, f"    {decl} {{ cb_reserve_back(0, 1); cb_push_back(0, 1); }}")


def test_decltype_of_a_reference_is_its_referents_type(tmp_path: Path) -> None:
    """``decltype(r)`` of a ``uint8_t& r`` is ``uint8_t&``; a variable of ``decltype(a)`` of the referent a ``uint8_t``."""
    ep = _read(tmp_path, "    uint8_t a = 255; uint8_t& r = a; decltype(a) k = r; k += 2;",
               "    if (k == 1) { cb_push_back(0, 1); }")
    assert _pushed(ep) == 1


def test_auto_of_a_helpers_result_has_its_declared_type(tmp_path: Path) -> None:
    """``auto k = ret8(255)`` of ``uint8_t ret8(uint32_t)`` is a ``uint8_t``: ``k += 2`` holds 1."""
    host = _inc_host(tmp_path, INCREMENTS[0] % "k", "    auto k = ret8(255); k += 2;")
    src = (tmp_path / "inc.cpp").read_text().replace(
        "void kernel_main() {", "static uint8_t ret8(uint32_t v) { return v; }\nvoid kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    assert _increments(import_host(host)) == [1]


def test_decltype_of_a_reference_is_not_read_as_a_copy(tmp_path: Path) -> None:
    """``decltype(r) k = a;`` of a ``uint8_t& r`` makes ``k`` a reference to ``a``: a store through it changes ``a``,
    which a copy would not (main read it as a copy and pushed): refused by name."""
    with pytest.raises(Refused, match="decltype of a reference"):
        _read(tmp_path, "    uint8_t a = 1; uint8_t& r = a; decltype(r) k = a; k += 1;",
              "    if (a == 1) { cb_push_back(0, 1); }")

# ------------------------------------------------------------------ 4. every spelling of an integer type (nu17 1-3)

#: (file-scope code, the statements before the increment, the increment's expression): g++ increments by exactly 1
SPELLED = [
    ("", "    unsigned char a = 255; a += 2;", "a"),  # a28
    ("", "    unsigned short a = 65535; a += 2;", "a"),  # b01
    ("", "    unsigned short int a = 65535; a += 2;", "a"),
    ("", "    short a = 32767; a += 1;", "(uint32_t)(a + 32769)"),  # b03
    ("", "    signed char a = 127; a += 1;", "(uint32_t)(a + 129)"),  # b02
    ("typedef unsigned char u8;\n", "    u8 a = 255; a += 2;", "a"),  # a24
    ("", "    uint_least8_t a = 255; a += 2;", "a"),  # c01
    ("", "    std::uint_least16_t a = 65535; a += 2;", "a"),
    ("", "    uint_fast8_t a = 255; a += 2;", "a"),
    ("", "    int_least8_t a = 127; a += 1;", "(uint32_t)(a + 129)"),
    ("static void bump(unsigned short& x) { x += 2; }\n", "    unsigned short a = 65535; bump(a);", "a"),  # c11
    ("template <typename T> T f() { return 257; }\n", "", "f<uint8_t>()"),  # b06: the bound T converts the result
    ("", "    auto l = [](uint32_t x) -> uint8_t { return x; };", "l(257)"),  # b27
    ("", "    auto l = [](uint8_t x) { return x; };", "l(257)"),  # c13
]


@pytest.mark.parametrize("inc", INCREMENTS)
@pytest.mark.parametrize(("top", "prelude", "value"), SPELLED)
def test_every_spelling_of_an_integer_type_converts(tmp_path: Path, inc: str, top: str, prelude: str,
                                                    value: str) -> None:
    """A new user's nu17 items 1-3: each read the value unconverted (257 where g++ gives 1) and proved a waiter's
    wait for that, which hangs on the device."""
    host = _inc_host(tmp_path, inc % value, prelude)
    src = (tmp_path / "inc.cpp").read_text().replace("void kernel_main() {", top + "void kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    p = import_host(host)
    assert _increments(p) == [1]
    assert certify(p).exit_code == 0


#: (file-scope code, the statements before the increment, the increment's expression): a type the reading cannot
#: resolve (a deduced template parameter, an alias template, an ``auto`` parameter) is not known: refused by name
NOT_KNOWN = [
    ("template <class T> T f(T x) { return x + 2; }\n", "    uint8_t a = 255;", "f(a)"),  # a02
    ("template <typename T> auto f(T x) { T y = x; y += 2; return y; }\n", "    uint8_t a = 255;", "f(a)"),  # a31
    ("static auto f(auto x) { x += 2; return x; }\n", "    uint8_t a = 255;", "f(a)"),  # c15
    ("template <typename T> T f(T x) { T y = 255; y += 2; return y; }\n", "    uint8_t a = 0;", "f(a)"),  # b08
    ("template <class T> using A = T;\n", "    A<uint8_t> a = 255; a += 2;", "a"),  # b05
    ("template <typename T> struct W { T v; };\n", "    W<uint8_t> w{255}; w.v += 2;", "w.v"),  # c08
    ("template <typename T> struct W { static T add(T a) { return a + 2; } };\n", "", "W<uint8_t>::add(255)"),  # c09
    ("", "    uint_fast16_t a = 65535; a += 2;", "a"),  # 65537 or 1 as the C library's header says
]


@pytest.mark.parametrize(("top", "prelude", "value"), NOT_KNOWN)
def test_a_type_not_known_is_not_read_as_a_word(tmp_path: Path, top: str, prelude: str, value: str) -> None:
    host = _inc_host(tmp_path, INCREMENTS[0] % value, prelude)
    src = (tmp_path / "inc.cpp").read_text().replace("void kernel_main() {", top + "void kernel_main() {", 1)
    (tmp_path / "inc.cpp").write_text(src)
    with pytest.raises(Refused, match="not known"):
        import_host(host)
