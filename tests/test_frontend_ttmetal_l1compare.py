"""Branches on L1 addresses in the tt-metal front end: ``tt_memmove``'s overlap test and its alignment test (ttnn
0.81.1 ``ttnn/operations/data_movement/common/kernels/common.hpp:195, 211, 237``), and unary_backward's
``cb_addr % a`` (``eltwise/unary_backward/device/kernels/dataflow/row_major_pages.hpp:86, 112``). Two ranges in two
different buffers' pages, each inside its ring, do not overlap (the memory map gives the buffers disjoint bytes: the
checker's ``memory-disjoint``); an address's low bits below the target's buffer alignment (16 B) are those of its
place in the ring. Where that cannot be said — one buffer, a range past its ring, a modulus past the alignment — the
branch is refused by name, as any branch on a value not known. Each case is a small kernel written here; a side the
reading must not take calls ``memmove``, which it refuses by name."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import FIRST, WRITER, _host, _proved, _refused

#: (0,0)'s reader: c_1 and c_2 reserved, ``dst`` and ``src`` their write pointers; then the branch, then c_1 filled
#: by a tensor read and pushed (``TAIL``)
COPY = ("    cb_reserve_back(1, 1);",
        "    cb_reserve_back(2, 1);",
        "    const uint32_t dst = get_write_ptr(1);",
        "    const uint32_t src = get_write_ptr(2);")
TAIL = ("    noc_async_read_tile(0, s, dst);",
        "    noc_async_read_barrier();",
        "    cb_push_back(1, 1);")


def _path(tmp_path: Path, cond: str) -> Path:
    body = (*COPY, f"    if ({cond}) {{", "        memmove((void*)dst, (void*)src, 64);", "    }", *TAIL)
    return _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", WRITER)},
                 {"0,0": ("reader", "writer"), "1,0": ()})


@pytest.mark.parametrize("cond", [
    "(dst < src + 64) && (src < dst + 64)",
    "(src < dst + 2048) && (dst < src + 2048)",  # a whole page each, the other order
    "(dst & 15) != (src & 15)",  # both buffers 16-B aligned, both pointers at a page start
    "(dst % 16) != 0",
    "((dst + 32) & 0xF) != 0",
])
def test_a_branch_on_l1_addresses_the_memory_map_decides_is_read(tmp_path: Path, cond: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _proved(_path(tmp_path, cond), capsys)


@pytest.mark.parametrize(("cond", "why"), [
    ("(dst < dst + 64) && (dst < dst + 64)", "not two numbers"),  # one buffer: no disjointness to rely on
    ("(dst < src + 8192) && (src < dst + 8192)", "not two numbers"),  # past the 2-page rings
    ("(dst & 31) != (src & 31)", "dst & 31"),  # a modulus past the 16 B alignment: placement decides
    ("((dst + 8) & 15) != 0", None),  # decided: 8, so the side that calls memmove
])
def test_a_branch_on_l1_addresses_not_decided_by_the_memory_map_is_refused(tmp_path: Path, cond: str,
                                                                         why: str | None) -> None:
    path = _path(tmp_path, cond)
    if why is None:
        _refused(path, "call to memmove", "reader.cpp", FIRST + len(COPY) + 1)
    else:
        e = _refused(path, "branch on a value not known statically", "reader.cpp", FIRST + len(COPY))
        assert why in e.detail
