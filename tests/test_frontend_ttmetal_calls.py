"""The tt-metal front end's inlining against C++'s call semantics: reference parameters that alias one variable,
parameters and results of narrow integer types, and lambdas capturing by value. Each kernel here once read into a
program of another count than the board runs (one proved where the board hangs); the expected value is C++'s, or a
refusal by name where the reading does not model the construct."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Reserve
from verispatial.ir.program import walk


def _reserved(tmp_path: Path, *body: str, prelude: tuple[str, ...] = ()) -> list[int]:
    """The page counts of the reserves the reader kernel ``body`` (statements of ``kernel_main``, after the
    functions of ``prelude``) issues on core (0,0), buffer c_0 of 8 one-tile pages."""
    src = "\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude, "void kernel_main() {", *body, "}"])
    (tmp_path / "k.cpp").write_text(src)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "calls", "kernel_root": str(tmp_path),
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    ep: Any = import_host(tmp_path / "h.json").programs[0]
    return [op.pages for op in walk(ep.ops) if isinstance(op, Reserve)]


def test_one_variable_passed_to_two_reference_parameters_is_refused(tmp_path: Path) -> None:
    """``set2(x, x)`` with ``void set2(uint32_t& a, uint32_t& b) { b = 8; a = 7; }`` leaves x = 7 (the reading once
    wrote back a, then b: 8); ``addto(x, x)`` with a ``const uint32_t& b`` sees its own writes through b (x = 8 from
    2, the reading once made 6). Distinct variables are read as before."""
    prelude = ("void set2(uint32_t& a, uint32_t& b) { b = 8; a = 7; }",
               "void addto(uint32_t& a, const uint32_t& b) { a += b; a += b; }")
    for call in ("set2(x, x);", "addto(x, x);"):
        with pytest.raises(Refused, match="one variable passed to two reference parameters") as e:
            _reserved(tmp_path, "    uint32_t x = 2;", f"    {call}", "    cb_reserve_back(0, x);", prelude=prelude)
        assert e.value.loc.line == 6
    assert _reserved(tmp_path, "    uint32_t x = 2, y = 3;", "    set2(x, y);", "    cb_reserve_back(0, x);",
                     "    addto(y, x);", "    cb_reserve_back(0, y);", prelude=prelude) == [7, 22]


def test_narrow_parameters_and_results_convert(tmp_path: Path) -> None:
    """``uint32_t p(uint8_t x) { return x; }`` of 264 is 8; ``uint8_t r(uint32_t x) { return x; }`` of 256 is 0
    (the reading once kept 264 and 256)."""
    prelude = ("uint32_t p(uint8_t x) { return x; }", "uint8_t r(uint32_t x) { return x; }")
    assert _reserved(tmp_path, "    cb_reserve_back(0, p(264));",
                     "    if (r(256) == 0) { cb_reserve_back(0, 7); } else { cb_reserve_back(0, 6); }",
                     prelude=prelude) == [8, 7]


def test_lambda_capturing_by_value_sees_the_values_it_was_made_with(tmp_path: Path) -> None:
    """``[=]`` copies ``n`` when the lambda is made: a later ``n = 8`` is not seen (the reading once read every lambda
    as capturing by reference); ``[&]`` sees it; a ``mutable`` copy changes only the copy; both kinds at once are
    refused by name."""
    assert _reserved(tmp_path, "    uint32_t n = 7;", "    auto f = [=]() { return n; };", "    n = 8;",
                     "    cb_reserve_back(0, f());") == [7]
    assert _reserved(tmp_path, "    uint32_t n = 7;", "    auto f = [&]() { return n; };", "    n = 8;",
                     "    cb_reserve_back(0, f());") == [8]
    assert _reserved(tmp_path, "    uint32_t n = 7;", "    auto f = [n]() mutable { n = 3; return n; };",
                     "    cb_reserve_back(0, f());", "    cb_reserve_back(0, n);") == [3, 7]
    with pytest.raises(Refused, match="lambda capturing by value and by reference"):
        _reserved(tmp_path, "    uint32_t n = 7, m = 1;", "    auto f = [=, &m]() { return n + m; };",
                  "    cb_reserve_back(0, f());")


def test_a_namespaced_function_of_the_kernel_is_not_the_device_api_of_its_name(tmp_path: Path) -> None:
    """``my::cb_reserve_back(0, 4)`` calls the kernel's ``my::cb_reserve_back``, here one that reserves 2 pages;
    the reading once took it for the device API's (4 pages; an empty ``my::noc_async_read_barrier`` likewise for a
    barrier, so a race was proved)."""
    prelude = ("namespace my {", "inline void cb_reserve_back(uint32_t cb, uint32_t n) { ::cb_reserve_back(cb, 2); }",
               "}")
    assert _reserved(tmp_path, "    my::cb_reserve_back(0, 4);", "    cb_reserve_back(0, 4);", prelude=prelude) == [2, 4]


@pytest.mark.parametrize(("loop", "mirrored"), [
    ("for (uint32_t i = 0; i < 3; ++i)", "for (uint32_t i = 0; 3 > i; ++i)"),
    ("for (uint32_t i = 0; i <= 3; ++i)", "for (uint32_t i = 0; 3 >= i; ++i)"),
    ("for (uint32_t i = 5; i > 1; --i)", "for (uint32_t i = 5; 1 < i; --i)"),
    ("for (uint32_t i = 5; i >= 1; --i)", "for (uint32_t i = 5; 1 <= i; --i)"),
    ("for (uint32_t i = 0; i != 4; i += 2)", "for (uint32_t i = 0; 4 != i; i += 2)"),
])
def test_a_condition_with_the_index_on_the_right_is_the_mirrored_comparison(tmp_path: Path, loop: str,
                                                                             mirrored: str) -> None:
    """``n > i`` is ``i < n`` (C++ [expr.rel]: the operands swapped, the operator mirrored): the index is the variable
    the step updates, on either side. Each loop reserves ``i + 1`` pages per iteration, so a wrong count, order or
    start shows."""
    body = ("        cb_reserve_back(0, i + 1);", "    }")
    assert _reserved(tmp_path, f"    {mirrored} {{", *body) == _reserved(tmp_path, f"    {loop} {{", *body) != []


def test_a_mirrored_condition_that_never_ends_the_loop_is_refused(tmp_path: Path) -> None:
    """``3 > i`` with ``--i`` is ``i < 3`` stepping down: from 0 it wraps and never ends, refused as the unmirrored
    form is."""
    with pytest.raises(Refused, match="for loop whose condition never ends it"):
        _reserved(tmp_path, "    for (uint32_t i = 0; 3 > i; --i) {", "        cb_reserve_back(0, 1);", "    }")
