"""A loop body read once stands for every iteration only when what one iteration changes is followed. A new user
found three ways a change escaped the reading, each proving a reader whose page count the device makes smaller (the
writer's fourth ``cb_wait_front`` spins forever, ``dataflow_api.h:488-490``): a ``static`` local set up again each
iteration (C++ sets it up once), a store through a name declared or captured in the body (a reference, a lambda
capturing by reference, a reference to a reference), and a field stored. Each is now read iteration by iteration
(a loop of a constant count: exact) or refused by name; a correct loop of the same shapes still proves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main

_READER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
struct Ctr { uint32_t k; void dec() { k--; } void inc() { k++; } };
void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    const InterleavedAddrGenFast<true> sa = {.bank_base_address = a_addr, .page_size = 2048,
                                             .data_format = DataFormat::Float16_b};
    %s
    for (uint32_t i = 0; i < K; ++i) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(i %% 4, sa, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
"""
#: the line of the loop under test in ``_READER``
LINE = 8

_WRITER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t out_addr = get_arg_val<uint32_t>(0);
    const InterleavedAddrGenFast<true> so = {.bank_base_address = out_addr, .page_size = 2048,
                                             .data_format = DataFormat::Float16_b};
    for (uint32_t i = 0; i < 4; ++i) {
        cb_wait_front(0, 1);
        noc_async_write_tile(i, so, get_read_ptr(0));
        noc_async_write_barrier();
        cb_pop_front(0, 1);
    }
}
"""


def _certify(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str) -> tuple[int, str]:
    """The reader pushes K pages (K computed by ``line``), the writer pops 4: right only when K is 4."""
    (tmp_path / "reader.cpp").write_text(_READER % line)
    (tmp_path / "writer.cpp").write_text(_WRITER)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "alias", "kernel_root": str(tmp_path),
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


#: K is 3 on the device (two decrements of 5), 4 only in a reading that applies one
HANGS = {
    "reference_in_the_body": "uint32_t K = 5; for (uint32_t q = 0; q < 2; ++q) { uint32_t& r = K; r--; }",
    "reference_before_the_loop": "uint32_t K = 5; uint32_t& r = K; for (uint32_t q = 0; q < 2; ++q) { r--; }",
    "lambda_capture": "uint32_t K = 5; auto dec = [&K]() { K--; }; for (uint32_t q = 0; q < 2; ++q) { dec(); }",
    "nested_loops": "uint32_t K = 7; for (uint32_t q = 0; q < 2; ++q) { for (uint32_t w = 0; w < 2; ++w) { "
                    "uint32_t& r = K; r--; } }",
    "field": "Ctr c{5}; for (uint32_t q = 0; q < 2; ++q) { c.k--; } uint32_t K = c.k;",
    "method": "Ctr c{5}; for (uint32_t q = 0; q < 2; ++q) { c.dec(); } uint32_t K = c.k;",
}


@pytest.mark.parametrize("form", sorted(HANGS))
def test_a_change_through_another_name_in_a_loop_is_counted_every_iteration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    rc, out = _certify(tmp_path, capsys, HANGS[form])
    assert rc == 1, out
    assert "refuted deadlock" in out, out


@pytest.mark.parametrize("line", [
    "uint32_t K = 1; for (uint32_t q = 0; q < 3; ++q) { uint32_t& r = K; r++; }",
    "Ctr c{1}; for (uint32_t q = 0; q < 3; ++q) { c.k++; } uint32_t K = c.k;",
    "Ctr c{1}; for (uint32_t q = 0; q < 3; ++q) { c.inc(); } uint32_t K = c.k;",
])
def test_the_same_shapes_with_the_right_count_prove(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    line: str) -> None:
    """K = 4: the field form was refuted as a deadlock the device does not have (its one increment read)."""
    rc, out = _certify(tmp_path, capsys, line)
    assert rc == 0, out


@pytest.mark.parametrize(("line", "construct"), [
    ("uint32_t K = 5; for (uint32_t q = 0; q < 2; ++q) { static uint32_t s = 5; s--; K = s; }",
     "static local variable in a loop body"),
])
def test_what_the_reading_cannot_hold_is_refused_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             line: str, construct: str) -> None:
    """A static local in a loop (C++ keeps its value from one iteration to the next; the reading would set it up
    again)."""
    rc, out = _certify(tmp_path, capsys, line)
    assert rc == 2, out
    assert f"reader.cpp:{LINE}: {construct}" in out, out


#: one object under three names (``T& r0 = K; T& r = r0;``): a store through any name is a store through all. Until
#: 2026-12-07 the link was one name to one name and the third name was refused; each form here makes K 3 on the
#: device (the writer's fourth wait spins) and 4 with the right count
THREE_NAMES = {
    "reference_to_a_reference_in_a_loop":
        "uint32_t K = {k}; uint32_t& r0 = K; for (uint32_t q = 0; q < 2; ++q) {{ uint32_t& r = r0; r{op}; }}",
    "store_through_the_third_name": "uint32_t K = 9; uint32_t& r0 = K; uint32_t& r = r0; r = {k} - 2;",
    "store_through_the_middle_name_read_through_the_third":
        "uint32_t n = 9; uint32_t& r0 = n; uint32_t& r = r0; r0 = {k} - 2; uint32_t K = r;",
    "store_through_the_variable_read_through_the_third":
        "uint32_t n = 9; uint32_t& r0 = n; uint32_t& r = r0; n = {k} - 2; uint32_t K = r;",
}


@pytest.mark.parametrize("form", sorted(THREE_NAMES))
def test_three_names_of_one_object_are_read_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    form: str) -> None:
    wrong = THREE_NAMES[form].format(k=5, op="--")
    rc, out = _certify(tmp_path, capsys, wrong)
    assert rc == 1, out
    assert "refuted deadlock" in out, out
    right = THREE_NAMES[form].format(k=2 if "loop" in form else 6, op="++")
    rc, out = _certify(tmp_path, capsys, right)
    assert rc == 0, out


def test_a_store_through_a_reference_to_a_hidden_variable_is_refused(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``r`` is bound to the outer K; the inner K hides it, so binding the name ``K`` would store into the wrong
    object (the loop would read K = 4 where the device has 3): refused at the store's line."""
    rc, out = _certify(tmp_path, capsys, "uint32_t K = 4; uint32_t& r = K; { uint32_t K = 9; r = 3; }")
    assert rc == 2, out
    assert f"reader.cpp:{LINE}: store through a reference to a hidden variable" in out, out
