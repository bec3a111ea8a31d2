"""C++ runs some of a class's code with no call written: a destructor where an object's scope ends, a copy
constructor at a copy, a base class's constructor with the derived one, an operator where an expression applies it
to an object, a conversion function where an object becomes a number, a converting constructor at ``X x = 3u;``. A
new user found every one of these read as doing nothing, so a writer popping a page twice per tile in a guard's
destructor (ttnn's integral_image guards, ``integral_image/device/kernels/common.hpp:83, 123``, pop and push in
theirs) was proved. Each is now followed exactly (a converting constructor is run) or refused by name at its line;
a class whose special members do nothing (``= default``, an empty body) is read as before. Also a declaration that
names a function (``ok`` + newline + ``cb_wait_front(0, 3);``, a variable ``cb_wait_front`` of a type ``ok``) is
refused, not read as dropping the call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main

_READER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    const InterleavedAddrGenFast<true> sa = {.bank_base_address = a_addr, .page_size = 2048,
                                             .data_format = DataFormat::Float16_b};
    for (uint32_t i = 0; i < 4; ++i) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(i, sa, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
"""

#: the class at file scope (line 3), ``%s`` before the loop (line 8) and in it (line 10)
_WRITER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
%s
void kernel_main() {
    uint32_t out_addr = get_arg_val<uint32_t>(0);
    const InterleavedAddrGenFast<true> so = {.bank_base_address = out_addr, .page_size = 2048,
                                             .data_format = DataFormat::Float16_b};
    %s
    for (uint32_t i = 0; i < 4; ++i) {
        cb_wait_front(0, 1); noc_async_write_tile(i, so, get_read_ptr(0)); noc_async_write_barrier(); %s
        cb_pop_front(0, 1);
    }
}
"""


def _certify(tmp_path: Path, capsys: pytest.CaptureFixture[str], cls: str, before: str, body: str) -> tuple[int, str]:
    (tmp_path / "reader.cpp").write_text(_READER)
    (tmp_path / "writer.cpp").write_text(_WRITER % (cls, before, body))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "implicit", "kernel_root": str(tmp_path),
            "tensors": [{"name": "a", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                        {"name": "out", "shape": [32, 128], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "bf16"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "runtime_args": ["a_addr"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer",
                         "runtime_args": ["out_addr"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "writer"],
                            "runtime_args": {"reader": {"a_addr": {"tensor": "a"}},
                                             "writer": {"out_addr": {"tensor": "out"}}}}]}
    (tmp_path / "host.yaml").write_text(json.dumps(host))
    rc = main(["certify", str(tmp_path / "host.yaml"), "-q", "--no-cache"])
    out = capsys.readouterr()
    return rc, out.out + out.err


#: (class, before the loop, in the loop): each runs a second pop or a wait past the buffer per tile on the device
REFUSED = {
    "destructor_in_the_loop": ("struct G { ~G() { cb_pop_front(0, 1); } };", "", "{ G g; }"),
    "destructor_at_kernel_end": ("struct G { ~G() { cb_wait_front(0, 3); } };", "G g;", ""),
    "temporary's_destructor": ("struct G { ~G() { cb_pop_front(0, 1); } };", "", "G();"),
    "destructor_declared_only": ("struct G { ~G(); };", "", "{ G g; }"),
    "a_field's_destructor": ("struct G { ~G() { cb_pop_front(0, 1); } }; struct H { G g; };", "", "{ H h; }"),
    "copy_constructor": ("struct X { X() {} X(const X&) { cb_pop_front(0, 1); } };", "X x;", "X y = x; (void)y;"),
    "base_constructor": ("struct B { B() { cb_pop_front(0, 1); } }; struct D : B { };", "", "D d; (void)d;"),
    "prefix_increment": ("struct X { X& operator++() { cb_pop_front(0, 1); return *this; } };", "X x;", "++x;"),
    "copy_assignment": ("struct X { X& operator=(const X&) { cb_pop_front(0, 1); return *this; } };", "X x; X y;",
                        "x = y;"),
    "binary_operator": ("struct X { uint32_t operator+(uint32_t) { cb_pop_front(0, 1); return 0; } };", "X x;",
                        "x + 1;"),
    "compound_assignment": ("struct X { X& operator+=(uint32_t) { cb_pop_front(0, 1); return *this; } };", "X x;",
                            "x += 1;"),
    "subscript": ("struct X { uint32_t operator[](uint32_t) { cb_pop_front(0, 1); return 0; } };", "X x;", "x[0];"),
    "conversion_to_bool": ("struct X { explicit operator bool() { cb_pop_front(0, 1); return true; } };", "X x;",
                           "if (x) { }"),
    "conversion_to_a_word": ("struct X { operator uint32_t() { cb_pop_front(0, 1); return 0; } };", "X x;",
                             "uint32_t v = x; (void)v;"),
    "comparison": ("struct X { bool operator==(const X&) const { cb_pop_front(0, 1); return true; } };", "X x;",
                   "x == x;"),
    "assignment_through_a_converting_constructor": ("struct X { X(uint32_t) { } };", "X x(1u);", "x = 4u;"),
    "dereference": ("struct X { uint32_t operator*() { cb_pop_front(0, 1); return 0; } };", "X x;", "*x;"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_code_a_class_runs_with_no_call_written_is_refused_at_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    cls, before, body = REFUSED[case]
    rc, out = _certify(tmp_path, capsys, cls, before, body)
    assert rc == 2, out
    # the object is refused where it is made (``X x;`` before the loop: line 8), an operator where it is applied
    line = 8 if case in ("destructor_at_kernel_end", "copy_constructor") else 10
    assert f"writer.cpp:{line}:" in out, out
    assert ("object whose class runs code no call names" in out or "operator on an object" in out), out


def test_a_converting_constructor_runs_at_copy_initialization(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``X x = 3u;`` runs ``X(uint32_t)``: its pop is the writer's second per tile, a pop past what it waited
    (``cb-pop-uncovered``); read as the number 3 it proved."""
    rc, out = _certify(tmp_path, capsys, "struct X { X(uint32_t) { cb_pop_front(0, 1); } };", "",
                       "X x = 3u; (void)x;")
    assert rc == 1, out
    rc, out = _certify(tmp_path, capsys, "struct X { X(uint32_t) { } };", "", "X x = 3u; (void)x;")
    assert rc == 0, out


@pytest.mark.parametrize(("cls", "before", "body"), [
    ("struct G { ~G() {} G() = default; G(const G&) = default; };", "G g;", "{ G h = g; (void)h; }"),
    ("struct P { uint32_t k; };", "P p{1}; P q{2};", "p = q; (void)p;"),
    ("struct B { }; struct D : B { uint32_t v = 0; };", "", "D d; (void)d;"),
], ids=["special_members_that_do_nothing", "member_wise_copy", "empty_base"])
def test_a_class_whose_special_members_do_nothing_reads_as_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cls: str, before: str, body: str) -> None:
    rc, out = _certify(tmp_path, capsys, cls, before, body)
    assert rc == 0, out


def test_a_declaration_named_like_a_function_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ok`` then ``cb_wait_front(0, 3);`` on the next line parses as the declaration ``ok cb_wait_front(0, 3);``
    (a variable of a type ``ok``): the wait past the 2-page buffer would be gone and the writer proved."""
    rc, out = _certify(tmp_path, capsys, "", "", "ok\n        cb_wait_front(0, 3);")
    assert rc == 2, out
    assert "declaration named like a function" in out, out
    assert "writer.cpp:11:" in out, out
    # a variable named like a function and initialised with ``=`` is a declaration C++ and the reading agree on
    rc, out = _certify(tmp_path, capsys, "", "", "uint32_t cb_wait_front = 3; (void)cb_wait_front;")
    assert rc == 0, out
