"""Which function a call names: a definition of the call's bare name in another namespace, or an overload the
reading cannot tell apart, is never read in its place. The reader of ``test_frontend_ttmetal_newuser``'s one-core
pipeline pushes as many pages as the function it calls returns; compute and writer consume ``n``. g++ -std=c++17
gives the value each call returns (noted per case): a reading of another definition pushes another count and proves
a kernel that hangs (or refutes one that runs). What the reading cannot resolve as C++ does is refused by name at
the call's line."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_newuser import FIRST, PUSH, _pipeline, _refused, _verdict


def _loop(bound: str) -> tuple[str, ...]:
    return (f"    for (uint32_t j = 0; j < {bound}; ++j) {{", f"        {PUSH}", "    }")


_A_B = ("namespace a { inline uint32_t f() { return 1; } }", "namespace b { inline uint32_t f() { return 3; } }")
_GLOBAL_C = ("inline uint32_t h() { return 1; }", "namespace c { inline uint32_t h() { return 3; } }")


@pytest.mark.parametrize(("top", "bound", "pages"), [
    ((*_A_B,), "a::f()", 1),
    ((*_A_B,), "b::f()", 3),
    ((*_GLOBAL_C,), "::h()", 1),  # the global h, not c's defined after it
    ((*_GLOBAL_C,), "c::h()", 3),
    (("namespace x { namespace c { inline uint32_t h() { return 2; } } }", *_GLOBAL_C), "x::c::h()", 2),
    (("namespace b { inline uint32_t f() { return 3; } }", "inline uint32_t f() { return 1; }"), "b::f()", 3),
], ids=["a-f", "b-f", "global-h", "c-h", "nested-ns", "ns-before-global"])
def test_a_qualified_call_reads_the_definition_of_its_namespace(tmp_path: Path, top: tuple[str, ...], bound: str,
                                                                pages: int, capsys: pytest.CaptureFixture[str]) -> None:
    """``::h()`` is the global ``h`` (g++: 1); it was read as the last ``h`` defined anywhere (c's, 3), and a reader
    pushing 1 page to consumers of 3 was proved."""
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages + 1, top=top), capsys) == (1, {"deadlock"})


@pytest.mark.parametrize(("top", "bound", "call", "line"), [
    # g++: 1 (using namespace a); read as b's f, 3
    ((*_A_B, "using namespace a;"), "f()", "f", 3 + FIRST),
    # g++: 1 (the global h; c's is not visible); read as c's, 3
    (_GLOBAL_C, "h()", "h", 2 + FIRST),
    # g++: 3 (inside c, c's h hides the global one); read as the global, 1
    (("inline uint32_t h() { return 1; }", "namespace c { inline uint32_t h() { return 3; }",
      "inline uint32_t g() { return h(); } }"), "c::g()", "h", 3),
    (("namespace c { inline uint32_t h() { return 3; }", "inline uint32_t g() { return h(); } }",
      "inline uint32_t h() { return 1; }"), "c::g()", "h", 2),
], ids=["using-directive", "global-and-namespace", "inner-hides-global", "global-defined-last"])
def test_an_unqualified_call_of_a_name_several_namespaces_define_is_refused(tmp_path: Path, top: tuple[str, ...],
                                                                            bound: str, call: str, line: int) -> None:
    """Which of them C++ finds depends on the scopes and using-directives in force where the call stands; the
    reading took the last definition of the name anywhere."""
    e = _refused(_pipeline(tmp_path, _loop(bound), 1, top=top), f"call to {call} not resolved", "reader.cpp", line)
    assert "2 definitions" in e.detail


@pytest.mark.parametrize(("top", "bound"), [
    # g++: 5 (the uint8_t overload is exact); read as the last, 2
    (("inline uint32_t f(uint8_t a) { return 5; }", "inline uint32_t f(uint32_t a) { return a; }"), "f((uint8_t)2)"),
    # g++: 2 (the uint32_t overload is exact); read as the last, 5
    (("inline uint32_t f(uint32_t a) { return a; }", "inline uint32_t f(float a) { return 5; }"), "f(2u)"),
], ids=["uint8-uint32", "uint32-float"])
def test_overloads_of_one_arity_on_arithmetic_types_are_refused(tmp_path: Path, top: tuple[str, ...],
                                                                bound: str) -> None:
    """Overloads are told apart by arity and by enumerator and struct arguments; numbers of different types bind
    either, and the call was read as the last definition."""
    e = _refused(_pipeline(tmp_path, _loop(bound), 2, top=top), "call to f not resolved", "reader.cpp", FIRST + len(top))
    assert "2 definitions" in e.detail


def test_a_qualified_call_of_overloads_of_one_arity_on_arithmetic_types_is_refused(tmp_path: Path) -> None:
    """g++: ``a::f((uint8_t)2)`` is 5 (the uint8_t overload is exact); it was read as the last ``f`` of one argument
    a defines (2), as the unqualified call no longer is."""
    top = ("namespace a { inline uint32_t f(uint8_t x) { return 5; } inline uint32_t f(uint32_t x) { return x; } }",)
    e = _refused(_pipeline(tmp_path, _loop("a::f((uint8_t)2)"), 5, top=top), "call to f not resolved", "reader.cpp",
                 FIRST + 1)
    assert "2 definitions" in e.detail


def test_a_qualified_call_reads_the_overload_its_arguments_choose(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """g++: ``a::f(2)`` is ``f(2, 4)``, 6; it was read as the last ``f`` a defines, ``f()`` (1)."""
    top = ("namespace a { inline uint32_t f(uint32_t x, uint32_t y = 4) { return x + y; } "
           "inline uint32_t f() { return 1; } }",)
    assert _verdict(_pipeline(tmp_path, _loop("a::f(2)"), 6, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("a::f(2)"), 7, top=top), capsys) == (1, {"deadlock"})


def test_one_definition_in_the_namespace_the_call_stands_in_is_read(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The near-miss: a helper calling a sibling of its namespace whose name nothing else defines."""
    top = ("namespace c { inline uint32_t h() { return 3; }", "inline uint32_t g() { return h(); } }")
    assert _verdict(_pipeline(tmp_path, _loop("c::g()"), 3, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("c::g()"), 4, top=top), capsys) == (1, {"deadlock"})


def test_overloads_of_different_arities_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = ("inline uint32_t f(uint32_t a) { return a; }", "inline uint32_t f(uint32_t a, uint32_t b) { return a + b; }")
    assert _verdict(_pipeline(tmp_path, _loop("f(2, 1)"), 3, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("f(2)"), 3, top=top), capsys) == (1, {"deadlock"})


# --- variables declared at namespace scope ------------------------------------------------------------------------

_K_AB = ("namespace a { constexpr uint32_t K = 1; }", "namespace b { constexpr uint32_t K = 3; }")
_K_GLOBAL_B = ("constexpr uint32_t K = 1;", "namespace b { constexpr uint32_t K = 3; }")


@pytest.mark.parametrize(("top", "pre", "bound", "pages"), [
    (_K_AB, (), "a::K", 1),  # was b's K, 3
    (_K_AB, (), "b::K", 3),
    (_K_GLOBAL_B, (), "::K", 1),  # was b's K, 3
    (_K_AB, (), "::a::K", 1),  # was refused as the bare K of two namespaces
    (("namespace a { constexpr uint32_t K = 1; }",), ("    uint32_t K = 3;",), "a::K + K - 3", 1),  # was the local K
    (("namespace x { namespace a { constexpr uint32_t K = 2; } }",), (), "a::K", 2),
    (("namespace a { uint32_t K = 1; inline void bump() { K++; } }",), ("    a::bump();",), "a::K", 2),
], ids=["a-K", "b-K", "global-K", "absolute-a-K", "local-hides-bare", "nested", "stored-by-bare-name"])
def test_a_qualified_variable_is_its_namespaces(tmp_path: Path, top: tuple[str, ...], pre: tuple[str, ...], bound: str,
                                               pages: int, capsys: pytest.CaptureFixture[str]) -> None:
    """``a::K`` is a's ``K`` (g++: 1), read before as whatever the bare name ``K`` held where it was named: the last
    namespace-scope ``K`` declared (b's, 3) or a local ``K``."""
    body = (*pre, *_loop(bound))
    assert _verdict(_pipeline(tmp_path, body, pages, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, pages + 1, top=top), capsys) == (1, {"deadlock"})


@pytest.mark.parametrize(("top", "bound", "pages"), [
    (("namespace a { enum { K1 = 1 }; }", "namespace b { constexpr uint32_t K1 = 3; }"), "a::K1", 1),
    (("namespace a { enum class E { K1 = 1 }; }", "constexpr uint32_t K1 = 3;"), "(uint32_t)a::E::K1", 1),
], ids=["unscoped-enumerator", "enum-class-enumerator"])
def test_a_qualified_enumerator_is_not_a_variable_of_its_bare_name(tmp_path: Path, top: tuple[str, ...], bound: str,
                                                                  pages: int,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """g++: ``a::K1`` is a's enumerator, 1; it was read as the variable ``K1`` another namespace declares (3), and a
    reader pushing 1 page proved against consumers of 2."""
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages + 1, top=top), capsys) == (1, {"deadlock"})


def test_a_qualified_name_is_not_a_local_variable_of_its_bare_name(tmp_path: Path) -> None:
    """``a::K`` with no ``K`` in a (g++ rejects it) was read as the kernel's local ``K``."""
    top = ("namespace a { constexpr uint32_t Q = 1; }",)
    _refused(_pipeline(tmp_path, ("    uint32_t K = 2;", *_loop("a::K")), 2, top=top), "loop bound not known statically",
             "reader.cpp", FIRST + 2)


def test_a_bare_name_several_namespaces_declare_is_not_followed(tmp_path: Path) -> None:
    """``K`` at the kernel's scope is the global one (g++: 1); it was read as b's (3) and a hang proved."""
    e = _refused(_pipeline(tmp_path, _loop("K"), 1, top=_K_GLOBAL_B), "loop bound not known statically", "reader.cpp",
                 2 + FIRST)
    assert "declared in b, the global namespace" in str(e)


def test_a_store_to_a_bare_name_several_namespaces_declare_is_refused(tmp_path: Path) -> None:
    top = ("uint32_t K = 1;", "namespace b { uint32_t K = 3; }", "inline void bump() { K++; }")
    _refused(_pipeline(tmp_path, ("    bump();", *_loop("2")), 2, top=top), "store to a variable several namespaces declare",
             "reader.cpp", 3)


# --- structs of one name in several namespaces --------------------------------------------------------------------

_S_AB = ("namespace a { struct S { static uint32_t f() { return 1; } uint32_t get() const { return 1; } }; }",
         "namespace b { struct S { static uint32_t f() { return 3; } uint32_t get() const { return 3; } }; }")


def test_a_static_member_call_reads_the_struct_its_qualification_names(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``a::S::f()`` is a's (g++: 1); it was read as the last ``S`` defined (b's, 3) and a hang proved."""
    assert _verdict(_pipeline(tmp_path, _loop("a::S::f()"), 1, top=_S_AB), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("a::S::f()"), 3, top=_S_AB), capsys) == (1, {"deadlock"})
    assert _verdict(_pipeline(tmp_path, _loop("b::S::f()"), 3, top=_S_AB), capsys) == (0, set())


@pytest.mark.parametrize("bound", ["a::S{}.get()", "S{}.get()"], ids=["qualified", "unqualified"])
def test_a_value_of_a_struct_several_namespaces_define_is_not_read_as_another(tmp_path: Path, bound: str) -> None:
    """g++: ``a::S{}.get()`` is 1; it was read as b's ``S`` (3). Its type is named by its bare name where the
    value is built, so the reading follows neither (an unqualified ``S`` is either, by the scopes in force)."""
    _refused(_pipeline(tmp_path, _loop(bound), 1, top=_S_AB), "loop bound not known statically|not followed",
             "reader.cpp", 2 + FIRST)


def test_a_struct_one_namespace_defines_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = ("namespace a { struct S { uint32_t n; uint32_t get() const { return n + 1; } }; }",)
    assert _verdict(_pipeline(tmp_path, _loop("a::S{2}.get()"), 3, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("a::S{2}.get()"), 4, top=top), capsys) == (1, {"deadlock"})


def test_a_bare_name_of_one_constant_value_in_each_namespace_is_that_value(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``constexpr uint32_t TILE_MAX_ROWS = fused_msda_tile_layout::TILE_MAX_ROWS;`` (fused_msda_reader_common.hpp:
    109): whichever C++ finds, the value is the same."""
    top = ("namespace layout { constexpr uint32_t K = 2; }", "constexpr uint32_t K = layout::K;")
    assert _verdict(_pipeline(tmp_path, _loop("K"), 2, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop("K"), 3, top=top), capsys) == (1, {"deadlock"})


# --- namespace aliases --------------------------------------------------------------------------------------------

_ALIAS_AB = ("namespace a { inline uint32_t f() { return 1; } constexpr uint32_t K = 1; }",
             "namespace b { inline uint32_t f() { return 5; } constexpr uint32_t K = 5; }")
_X_C = "namespace x { namespace c { inline uint32_t f() { return 2; } } }"


@pytest.mark.parametrize(("top", "pre", "bound", "pages"), [
    ((*_ALIAS_AB, "namespace n = a;"), (), "n::f()", 1),
    ((*_ALIAS_AB, "namespace n = b;"), (), "n::K", 5),
    ((*_ALIAS_AB, "namespace n = ::a;"), (), "n::f() + n::K", 2),
    ((*_ALIAS_AB, "namespace m = b;", "namespace n = m;"), (), "n::f()", 5),  # an alias of an alias
    (_ALIAS_AB, ("    namespace n = a;",), "n::f() + n::K", 2),  # declared in the kernel's body
    ((*_ALIAS_AB, _X_C, "namespace n = x::c;"), (), "n::f()", 2),
    # one alias declared twice, naming one namespace two ways (the norm kernels' headers: ``namespace generic =
    # norm::kernel_util::generic;`` and ``namespace generic = kutil::generic;``): whichever C++ finds, it is x::c
    ((*_ALIAS_AB, _X_C, "namespace k = x;", "namespace n = x::c;", "namespace y { namespace n = k::c; }"), (),
     "n::f()", 2),
    ((*_ALIAS_AB, "namespace n = a;", "namespace y { namespace n = ::a; }"), (), "n::f()", 1),
    # an alias named as the namespace it names (``namespace generic = norm::kernel_util::generic;``): either is x::c
    ((*_ALIAS_AB, _X_C, "namespace c = x::c;"), (), "c::f()", 2),
], ids=["call", "variable", "absolute", "alias-of-alias", "local", "nested-target", "one-namespace-two-spellings",
        "one-namespace-absolute", "alias-named-as-its-namespace"])
def test_a_name_qualified_by_a_namespace_alias_is_the_aliased_namespaces(
        tmp_path: Path, top: tuple[str, ...], pre: tuple[str, ...], bound: str, pages: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``namespace n = a;`` then ``n::f()`` is a's ``f`` (g++: 1); the alias was not read (the call of f, or the
    bare K, of several namespaces was refused)."""
    body = (*pre, *_loop(bound))
    assert _verdict(_pipeline(tmp_path, body, pages, top=top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, pages + 1, top=top), capsys) == (1, {"deadlock"})


_ALIAS_N = ("namespace a { inline uint32_t f() { return 1; } constexpr uint32_t K = 1; }",
            "namespace z { namespace n { inline uint32_t f() { return 5; } constexpr uint32_t K = 5; } }")


@pytest.mark.parametrize(("top", "bound"), [
    # g++: 1 and 1 (the alias, at the call's global scope); read as z::n's 5, a reader of 1 page proved against
    # consumers of 5
    ((*_ALIAS_N, "namespace n = a;"), "n::f()"),
    ((*_ALIAS_N, "namespace n = a;"), "n::K"),
    ((*_ALIAS_AB, "namespace n = a;", "namespace y { namespace n = b; }"), "n::f()"),
], ids=["alias-and-nested-namespace-call", "alias-and-nested-namespace-variable", "two-targets"])
def test_a_namespace_alias_of_several_meanings_is_refused(tmp_path: Path, top: tuple[str, ...], bound: str) -> None:
    """Which ``n`` C++ finds depends on the scopes where the name stands (inside ``z`` or ``y`` the inner one), which
    the reading does not follow: the name was matched to the namespace ``z::n`` by its last name."""
    e = _refused(_pipeline(tmp_path, _loop(bound), 1, top=top), "namespace alias of several meanings",
                 "reader.cpp", FIRST + len(top))
    assert e.detail.startswith("n in n::")


def test_a_namespace_alias_inside_a_qualification_is_refused(tmp_path: Path) -> None:
    top = (*_ALIAS_AB, "namespace y { namespace n = a; }")
    _refused(_pipeline(tmp_path, _loop("y::n::f()"), 1, top=top), "namespace alias inside a qualification",
             "reader.cpp", FIRST + len(top))


# --- a comparison tree-sitter reads as a template -----------------------------------------------------------------

_P = ("template <uint32_t N> struct P { static constexpr uint32_t v = N; };",
      "template <uint32_t N> inline uint32_t g() { return N + 1; }",
      "template <uint32_t N> struct S { uint32_t get() const { return N; } };")


@pytest.mark.parametrize(("pre", "bound", "line"), [
    ((), None, 0),  # the loop's own condition: ``j < P<2>::v``
    (("    uint32_t k = 3;", "    uint32_t m = k < P<2>::v;"), "m + 1", 2),
    (("    uint32_t a = 1, b = 2, c = 3;", "    uint32_t m = a < b > (c);"), "m + 1", 2),
    (("    for (uint32_t j = 0; j < S<2>{}.get(); ++j) {", f"        {PUSH}", "    }"), "1", 1),
], ids=["loop-condition", "member", "call", "loop-condition-of-a-value"])
def test_a_comparison_the_parser_reads_as_a_template_is_refused_as_such(tmp_path: Path, pre: tuple[str, ...],
                                                                        bound: str | None, line: int) -> None:
    """tree-sitter does not know which names are templates: ``j < P<2>::v`` parses as ``j<P<2>>::v`` and ``a < b >
    (c)`` as a call of ``a<b>``. They were refused as ``j<...>::v`` or ``a`` not defined, or a loop condition not
    'index OP bound'; the reason is the parse."""
    body = (*pre, *(_loop(bound) if bound else ("    for (uint32_t j = 0; j < P<2>::v; ++j) {", f"        {PUSH}",
                                                  "    }")))
    e = _refused(_pipeline(tmp_path, body, 2, top=_P), "comparison the parser reads as a template argument list",
                 "reader.cpp", FIRST + len(_P) + line - (1 if line else 0))
    assert "is a variable, not a template" in e.detail


@pytest.mark.parametrize(("bound", "pages"), [("(P<2>::v)", 2), ("(g<2>())", 3), ("(P<2>::v + g<1>())", 4)])
def test_a_template_member_or_call_in_parentheses_is_read(tmp_path: Path, bound: str, pages: int,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages, top=_P), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, _loop(bound), pages + 1, top=_P), capsys) == (1, {"deadlock"})


# --- explicit specializations -------------------------------------------------------------------------------------

_G = ("template <uint32_t N> inline uint32_t g() { return N; }", "template <> inline uint32_t g<2>() { return 7; }",
      "template <typename T> inline uint32_t sz() { return 4; }", "template <> inline uint32_t sz<uint8_t>() { return 1; }")


@pytest.mark.parametrize(("bound", "pages"), [("g<2>()", 7), ("g<3>()", 3), ("sz<uint8_t>()", 1), ("sz<uint16_t>()", 4)])
def test_a_call_of_a_function_template_reads_its_explicit_specialization(tmp_path: Path, bound: str, pages: int,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """g++: ``g<2>()`` is the specialization's 7 and ``sz<uint8_t>()`` 1; both were read as the primary template's
    (2, 4), and a reader pushing 7 pages proved against consumers of 2."""
    body = (f"    uint32_t m = {bound};", *_loop("m"))
    assert _verdict(_pipeline(tmp_path, body, pages, top=_G), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, pages + 1, top=_G), capsys) == (1, {"deadlock"})


def test_a_specialization_the_reading_cannot_tell_from_the_call_is_refused(tmp_path: Path) -> None:
    """``sz<unsigned>()`` against ``sz<uint32_t>``: on the RISC ``uint32_t`` is ``unsigned long``, another type."""
    top = ("template <typename T> inline uint32_t sz() { return 4; }",
           "template <> inline uint32_t sz<uint32_t>() { return 1; }")
    _refused(_pipeline(tmp_path, ("    uint32_t m = sz<unsigned>();", *_loop("m")), 4, top=top),
             "call of a function template with explicit specializations not resolved", "reader.cpp", FIRST + 2)


@pytest.mark.parametrize("use", ["    Q<2> q;\n    uint32_t m = q.get();", "    uint32_t m = Q<2>::f();"])
def test_a_class_template_with_explicit_specializations_is_refused(tmp_path: Path, use: str) -> None:
    """g++: ``Q<2>``'s ``get()`` and ``f()`` are the specialization's (7); ``q.get()`` was read as the primary
    template's (3)."""
    top = ("template <uint32_t N> struct Q { uint32_t get() const { return 3; } static uint32_t f() { return 3; } };",
           "template <> struct Q<2> { uint32_t get() const { return 7; } static uint32_t f() { return 7; } };")
    _refused(_pipeline(tmp_path, (*use.split("\n"), *_loop("m")), 7, top=top),
             "class template with explicit specializations", "reader.cpp", FIRST + 2)


# --- an object bound as its base class ----------------------------------------------------------------------------

_B_D = ("struct B { uint32_t get() const { return 1; } };", "struct D : B { uint32_t get() const { return 3; } };")


@pytest.mark.parametrize(("top", "pre"), [
    (_B_D, ("    D d;", "    const B& b = d;", "    uint32_t m = b.get();")),
    ((*_B_D, "inline uint32_t f(const B& b) { return b.get(); }"), ("    D d;", "    uint32_t m = f(d);")),
], ids=["reference", "parameter"])
def test_an_object_bound_as_its_base_class_is_refused(tmp_path: Path, top: tuple[str, ...],
                                                      pre: tuple[str, ...]) -> None:
    """g++: ``b.get()`` through a ``const B&`` bound to a ``D`` is B's (1, not virtual); it was read as D's (3), and a
    reader pushing 1 page proved against consumers of 3 (the value is a D, its declared type B)."""
    e = _refused(_pipeline(tmp_path, (*pre, *_loop("m")), 1, top=top), "object bound as another class", "reader.cpp",
                 FIRST + len(top) + 1)
    assert e.detail.startswith("a D bound where a B is declared")


def test_an_object_of_its_declared_class_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    D d;", "    const D& r = d;", "    uint32_t m = r.get();", *_loop("m"))
    assert _verdict(_pipeline(tmp_path, body, 3, top=_B_D), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, 4, top=_B_D), capsys) == (1, {"deadlock"})
