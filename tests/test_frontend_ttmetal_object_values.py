"""Objects of a class read where C++ runs its code with no call written, in the positions a new user found read as
doing nothing after the first rule (nu14 W3, ``tests/test_frontend_ttmetal_implicit_calls.py``): an array of objects
whose class has a destructor or a default constructor that does something (``G g[1]``, an array member,
``std::array<G, 1>``), a range-``for`` that copies each element, a conversion function (``operator uint32_t()``)
where an object is a loop bound, an index, an assigned, initialised or returned number, a default member initialiser
by ``=`` (``M m = 1u;`` runs ``M(uint32_t)``) and an overloaded comma operator. Each ran a second pop (or a wait of 3
pages on a 2-page ring) per tile on the device (g++ counts in the nu14 folders' oracle.txt) and was proved; each is
now refused by name at its line or run as the device runs it. Correct twins keep proving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_implicit_calls import _certify
from verispatial.cli import main

_DTOR_POP = "struct G { ~G() { cb_pop_front(0, 1); } };"
_DTOR_WAIT3 = "struct G { ~G() { cb_wait_front(0, 3); } };"
_COPY_POP = "struct X { X() {} X(const X&) { cb_pop_front(0, 1); } };"
_CONV_POP = "struct X { operator uint32_t() { cb_pop_front(0, 1); return 0; } };"
_COMMA_POP = "struct X { X& operator,(uint32_t) { cb_pop_front(0, 1); return *this; } };"
_OBJECT = "object whose class runs code no call names"
_CONVERSION = "conversion of an object of class X that declares operator uint32_t()"
_OPERATOR = "operator on an object"

#: nu14 folder: (class at line 3, before the loop at line 8, in the loop at line 10, the line refused, the words)
REFUSED = {
    "c14_array_of_objects": (_DTOR_POP, "", "{ G g[1]; (void)g; }", 10, _OBJECT),
    "d13_arr_obj_wait3": (_DTOR_WAIT3, "", "{ G g[1]; (void)g; }", 10, _OBJECT),
    "d15_arr_obj_ctor": ("struct G { G() { cb_pop_front(0, 1); } };", "", "{ G g[1]; (void)g; }", 10, _OBJECT),
    "d19_array_destroyed_at_kernel_end": (_DTOR_POP, "G arr[1];", "for (auto& e : arr) { (void)e; }", 8, _OBJECT),
    "f11_array_member": (_DTOR_POP + " struct H { G g[1]; };", "", "{ H h; (void)h; }", 10, _OBJECT),
    "f13_std_array": (_DTOR_POP, "", "{ std::array<G, 1> g; (void)g; }", 10, _OBJECT),
    "two_dimensional_array": (_DTOR_POP, "", "{ G g[1][1]; (void)g; }", 10, _OBJECT),
    # the array is made of a class that copies with a pop: refused where it is made, like ``X x;``
    "c25_range_for_copy": (_COPY_POP, "X arr[1];", "for (X e : arr) { (void)e; }", 8, _OBJECT),
    "d18_range_for_auto": (_COPY_POP, "X arr[1];", "for (auto e : arr) { (void)e; }", 8, _OBJECT),
    "f15_range_for_const_copy": (_COPY_POP, "X arr[1];", "for (const X e : arr) { (void)e; }", 8, _OBJECT),
    "c08_conversion_in_a_loop_bound": (_CONV_POP, "X x;", "for (uint32_t j = 0; j < x; ++j) { }", 10, _CONVERSION),
    "d28_conversion_on_a_bound's_left": (_CONV_POP, "X x;", "for (uint32_t j = 0; x > j; ++j) { }", 10,
                                         _CONVERSION),
    "c56_conversion_as_an_index": (_CONV_POP, "X x; uint32_t arr[2] = {0, 0};", "(void)arr[x];", 10, _CONVERSION),
    "d25_conversion_as_a_pointer's_index": (_CONV_POP, "X x; uint32_t arr[2] = {0, 0}; uint32_t* pa = arr;",
                                            "(void)pa[x];", 10, _CONVERSION),
    "d26_conversion_as_a_stored_index": (_CONV_POP, "X x; uint32_t arr[2] = {0, 0};", "arr[x] = 1;", 10,
                                         _CONVERSION),
    "d30_member_as_an_index": (_CONV_POP + " struct H { X x; };", "H h; uint32_t arr[2] = {0, 0};",
                               "(void)arr[h.x];", 10, _CONVERSION),
    "f06_index_in_a_condition": (_CONV_POP, "X x; uint32_t arr[2] = {0, 0};", "if (arr[x]) { }", 10, _CONVERSION),
    "f07_nested_index": (_CONV_POP, "X x; uint32_t arr[2][2] = {{0, 0}, {0, 0}};", "(void)arr[0][x];", 10,
                         _CONVERSION),
    "f01_assigned": (_CONV_POP, "X x; uint32_t v = 0;", "v = x; (void)v;", 10, _CONVERSION),
    "d05_parenthesised_initialiser": (_CONV_POP, "X x;", "uint32_t v(x); (void)v;", 10, _CONVERSION),
    "braced_initialiser": (_CONV_POP, "X x;", "uint32_t v{x}; (void)v;", 10, _CONVERSION),
    "while_condition": (_CONV_POP, "X x;", "while (x) { }", 10, _CONVERSION),
    # the conversion runs in the function (line 3), called at line 10
    "d09_returned": (_CONV_POP + " static uint32_t f(X& a) { return a; }", "X x;", "(void)f(x);", 3, _CONVERSION),
    "f09_member_returned": (_CONV_POP + " struct H { X x; uint32_t get() { return x; } };", "H h;",
                            "(void)h.get();", 3, _CONVERSION),
    "passed_to_a_number_parameter": (_CONV_POP + " static uint32_t g(uint32_t v) { return v; }", "X x;",
                                     "(void)g(x);", 10, _CONVERSION),
    "switch_on_an_object": (_CONV_POP, "X x;", "switch (x) { default: break; }", 10, _CONVERSION),
    "loop_initialiser": (_CONV_POP, "X x;", "for (uint32_t j = x; j < 1; ++j) { }", 10, _CONVERSION),
    "ternary_branch_as_an_index": (_CONV_POP, "X x; uint32_t arr[2] = {0, 0};", "(void)arr[i > 9 ? x : x];", 10,
                                   _CONVERSION),
    "d10_api_argument": (_CONV_POP, "X x;", "noc_async_write_tile(x, so, get_read_ptr(0)); noc_async_write_barrier();",
                         10, _CONVERSION),
    "c67_comma": (_COMMA_POP, "X x;", "(void)(x, 1u);", 10, _OPERATOR),
    "d23_comma_of_two_objects": ("struct X { X& operator,(const X&) { cb_pop_front(0, 1); return *this; } };",
                                 "X x; X y;", "(void)(x, y);", 10, _OPERATOR),
    "d24_comma_in_a_for_step": (_COMMA_POP, "X x;", "for (uint32_t j = 0; j < 1; x, ++j) { }", 10, _OPERATOR),
    "f10_comma_in_a_condition": ("struct X { bool operator,(uint32_t) { cb_pop_front(0, 1); return false; } };",
                                 "X x;", "if ((x, 1u)) { }", 10, _OPERATOR),
    "comma_of_a_base's_operator": ("struct B { B& operator,(uint32_t) { cb_pop_front(0, 1); return *this; } }; "
                                   "struct X : B { };", "X x;", "(void)(x, 1u);", 10, _OPERATOR),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_object_where_its_class_runs_code_is_refused_at_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    cls, before, body, line, words = REFUSED[case]
    rc, out = _certify(tmp_path, capsys, cls, before, body)
    assert rc == 2, out
    assert f"writer.cpp:{line}:" in out, out
    assert words in out, out


@pytest.mark.parametrize("cls", [
    "struct M { M(uint32_t) { cb_pop_front(0, 1); } }; struct H { M m = 1u; };",
    "struct M { M(uint32_t) { cb_wait_front(0, 3); } }; struct H { M m = 1u; };",
    "struct M { M(uint32_t) { cb_pop_front(0, 1); } }; struct H { M m{1u}; };",
], ids=["c64_pop", "d22_wait3", "d20_braced"])
def test_a_default_member_initialiser_runs_the_converting_constructor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cls: str) -> None:
    """``struct H { M m = 1u; };``: ``H h;`` copy-initialises ``m`` from ``1u`` through ``M(uint32_t)``, whose pop
    is a second per tile (or whose wait of 3 pages never ends on a 2-page ring): refuted, as ``M m{1u}`` was."""
    rc, out = _certify(tmp_path, capsys, cls, "", "H h; (void)h;")
    assert rc == 1, out


#: (class, before the loop, in the loop) the device runs as the reading does: each keeps proving
PROVED = {
    "array_of_plain_structs": ("struct P { uint32_t k; };", "P ps[2];", "ps[1].k = 2; (void)ps[1].k;"),
    "array_of_trivial_guards": ("struct G { ~G() {} G() = default; };", "", "{ G g[2]; (void)g; }"),
    "std_array_of_plain_structs": ("struct P { uint32_t k; };", "", "{ std::array<P, 2> a{}; (void)a; }"),
    "d17_range_for_by_reference": ("struct X { X() {} };", "X arr[1];", "for (X& e : arr) { (void)e; }"),
    "range_for_by_value_over_plain_structs": ("struct P { uint32_t k; };", "P ps[2];",
                                              "for (P e : ps) { (void)e; }"),
    "a_member_as_an_index": ("struct P { uint32_t k; };", "P p{1}; uint32_t arr[2] = {0, 0};", "(void)arr[p.k];"),
    "a_member_as_a_bound": ("struct P { uint32_t k; };", "P p{1};", "for (uint32_t j = 0; j < p.k; ++j) { }"),
    "a_member_returned": ("struct H { uint32_t k = 1; uint32_t get() { return k; } };", "H h;", "(void)h.get();"),
    "an_object_returned": ("struct P { uint32_t k; }; static P f(P& a) { return a; }", "P p{1};", "(void)f(p);"),
    "builtin_comma": (_COMMA_POP, "X x; uint32_t j = 0;", "(void)(j, 1u);"),
    "plain_struct_comma": ("struct P { uint32_t k; };", "P p{1};", "(void)(p, 1u);"),
    "default_member_initialiser_doing_nothing": ("struct M { M(uint32_t) { } }; struct H { M m = 1u; };", "",
                                                 "H h; (void)h;"),
}


@pytest.mark.parametrize("case", sorted(PROVED))
def test_an_object_whose_class_runs_nothing_there_reads_as_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    cls, before, body = PROVED[case]
    rc, out = _certify(tmp_path, capsys, cls, before, body)
    assert rc == 0, out


def test_a_case_range_is_refused_by_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GCC's ``case 0 ... 2:`` (tree-sitter parses an expansion of a pack ``0``) was refused as a "pack
    expansion", a construct the kernel does not write."""
    rc, out = _certify(tmp_path, capsys, "", "", "switch (i) { case 0 ... 2: break; default: break; }")
    assert rc == 2, out
    assert "writer.cpp:10: case range" in out, out


_PAGE_GAP_READER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    for (uint32_t t = 0; t < 1; ++t) {
        cb_reserve_back(0, 4);
        volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
        for (uint32_t i = 0; i < 6; ++i) { p[(i >> 1) * 768] = t; }
        ckernel::load_blocking(p + 1536);
        cb_push_back(0, 1);
        cb_push_back(0, 1);
        cb_push_back(0, 1);
        cb_push_back(0, 1);
    }
}
"""


def test_a_reserved_page_no_store_builds_is_the_one_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's q02: stores at words 0, 768 and 1536 of 4 reserved 2 KiB pages build pages 0, 1 and 3; the
    refusal named page 0 (built, in a loop) where page 2 is the one no store builds."""
    rc, out = _certify(tmp_path, capsys, "", "", "")
    (tmp_path / "reader.cpp").write_text(_PAGE_GAP_READER)
    host = json.loads((tmp_path / "host.yaml").read_text())
    host["buffers"][0]["entries"] = 4
    (tmp_path / "host.yaml").write_text(json.dumps(host))
    rc = main(["certify", str(tmp_path / "host.yaml"), "-q", "--no-cache"])
    out = capsys.readouterr().err
    assert rc == 2, out
    assert "reader.cpp:7:" in out, out
    assert "page 2 of the reservation is built by no store (they build pages 0, 1, 3)" in out, out


_NESTED_POP = "struct I { ~I() { cb_pop_front(0, 1); } };"

#: nu17 item 5 (d20_nested_dtor_pop, d10b): a class nested in another, as a member, base or element, whose
#: destructor pops a second page per tile on the device; it was read as doing nothing (the member's class not found
#: under its bare name) and proved. Each is refused by name at the object's line (the class at line 3, the loop
#: body at line 10)
NESTED_REFUSED = {
    "d20_nested_member": (f"struct O {{ {_NESTED_POP} I i; }};", "{ O o; (void)o; }"),
    "defined_with_the_member": ("struct O { struct I { ~I() { cb_pop_front(0, 1); } } i; };", "{ O o; (void)o; }"),
    "qualified_member_of_another_class": (f"struct O {{ {_NESTED_POP} }}; struct P {{ O::I i; }};",
                                          "{ P p; (void)p; }"),
    "member_of_a_nested_member": (f"struct O {{ {_NESTED_POP} struct J {{ I i; }}; J j; }};", "{ O o; (void)o; }"),
    "nested_base": (f"struct O {{ {_NESTED_POP} struct E : I {{ }}; }};", "{ O::E e; (void)e; }"),
    "array_member_of_a_nested_class": (f"struct O {{ {_NESTED_POP} I i[1]; }};", "{ O o; (void)o; }"),
    "nested_object_itself": (f"struct O {{ {_NESTED_POP} }};", "{ O::I i; (void)i; }"),
    "through_an_alias": (f"struct O {{ {_NESTED_POP} }}; using J = O::I;", "{ J j; (void)j; }"),
    "member_through_an_alias": (f"struct O {{ {_NESTED_POP} }}; using J = O::I; struct P {{ J j; }};",
                                "{ P p; (void)p; }"),
    "member_through_a_typedef": (f"struct O {{ {_NESTED_POP} }}; typedef O::I J; struct P {{ J j; }};",
                                 "{ P p; (void)p; }"),
    # ``W<I>``'s member ``v`` is an ``I``: the reading does not keep the template argument with the object
    "template_parameter_member": (f"{_NESTED_POP} template <class T> struct W {{ T v; }};", "{ W<I> w; (void)w; }"),
    # C++ finds a::I through the using-directive; the reading, seeing two classes I, resolves neither: the member's
    # class is not known, so the object is refused, never read as doing nothing
    "member_of_a_class_not_resolved": ("namespace a { struct I { ~I() { cb_pop_front(0, 1); } }; } "
                                       "namespace b { struct I { }; } using namespace a; struct O { I i; };",
                                       "{ O o; (void)o; }"),
}


@pytest.mark.parametrize("case", sorted(NESTED_REFUSED))
def test_a_nested_class_that_runs_code_is_refused_at_the_object(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    cls, body = NESTED_REFUSED[case]
    rc, out = _certify(tmp_path, capsys, cls, "", body)
    assert rc == 2, out
    assert "writer.cpp:10:" in out, out
    assert _OBJECT in out, out


def test_a_nested_member_constructor_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nu17 d10c: ``O o;`` runs the nested ``I()`` of its member ``i``, here a second pop per tile: refuted, as
    the same class at file scope is (it was read as doing nothing and proved)."""
    cls = "struct O { struct I { I() { cb_pop_front(0, 1); } }; I i; };"
    rc, out = _certify(tmp_path, capsys, cls, "", "{ O o; (void)o; }")
    assert rc == 1, out
    rc, out = _certify(tmp_path, capsys, "struct I { I() { cb_pop_front(0, 1); } }; struct O { I i; };", "",
                       "{ O o; (void)o; }")
    assert rc == 1, out


@pytest.mark.parametrize(("cls", "before", "body"), [
    ("struct O { struct I { uint32_t k = 1; }; I i; };", "O o;", "(void)o.i.k;"),
    ("struct O { struct I { ~I() {} }; I i; };", "", "{ O o; (void)o; }"),
    ("struct O { struct I { I() {} }; I i; };", "", "{ O o; (void)o; }"),
    ("struct O { struct I { uint32_t k = 2; }; }; struct P { O::I i; };", "P p;", "(void)p.i.k;"),
    ("template <class T> struct W { T v; };", "W<uint8_t> w; w.v = 1;", "(void)w.v;"),
], ids=["nested_plain_member", "nested_trivial_destructor", "nested_empty_constructor", "qualified_plain_member",
        "template_parameter_member_of_no_class_that_runs_code"])
def test_a_nested_object_that_runs_nothing_keeps_proving(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cls: str, before: str, body: str) -> None:
    rc, out = _certify(tmp_path, capsys, cls, before, body)
    assert rc == 0, out
