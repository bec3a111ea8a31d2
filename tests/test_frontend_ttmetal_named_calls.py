"""Named calls and spellings the tt-metal front end reads as C++ does (issue 18's ranked refusals of the corpus):
each construct from a small kernel written here, its expected value C++'s."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_calls import _reserved
from test_frontend_ttmetal_remote import _host, _ops, _proved, _pull, _refuted

from verispatial.frontends.ttmetal import Refused
from verispatial.ir.core import Site
from verispatial.ir.ops import PATCH, FillTiles, ReadTiles, RemoteRead, WriteTiles


def test_comments_in_a_braced_initializer_are_no_elements(tmp_path: Path) -> None:
    """``return {/*nb=*/a, /*nq=*/b};`` (sdpa's q_chunk_remapping.hpp:83-87) initialises two fields; the reading once
    counted the comments as values (``initializer of GlobalQIndex with too many values``, 6 for 3)."""
    prelude = ("struct Pair { uint32_t a; uint32_t b; };",
               "Pair make(uint32_t x) { return { /*a=*/x + 1, /*b=*/x * 2, }; }")
    assert _reserved(tmp_path, "    const auto p = make(3);", "    cb_reserve_back(0, p.a);",
                     "    cb_reserve_back(0, p.b);", "    Pair q{/*a=*/1, /*b=*/2};", "    cb_reserve_back(0, q.b);",
                     prelude=prelude) == [4, 6, 2]


def test_bfloat16_conversions_are_values_not_followed(tmp_path: Path) -> None:
    """``bf16_to_fp32`` / ``fp32_to_bf16`` / ``fp32_to_bf16_truncate`` (api/numeric/bfloat16.h:23-53) convert a value
    and do nothing else: read as values not followed (once ``call to bf16_to_fp32``, groupnorm's welford_combine.h);
    a page count from one is refused by name."""
    assert _reserved(tmp_path, "    const float m = bf16_to_fp32(0x3f80);",
                     "    const uint16_t b = fp32_to_bf16(m) + fp32_to_bf16_truncate(m);",
                     "    cb_reserve_back(0, 1);") == [1]
    with pytest.raises(Refused, match="page count not known statically"):
        _reserved(tmp_path, "    cb_reserve_back(0, fp32_to_bf16_truncate(bf16_to_fp32(2)));")


def test_extract_local_address_of_a_core_address_is_its_local_address(tmp_path: Path) -> None:
    """``noc_address_backend::extract_local_address(get_noc_addr(x, y, a))`` is ``a`` (noc_address_backend_xy.h:61):
    a remote read at (1,0) of that address is the RemoteRead of (1,0)'s page (once ``call to
    extract_local_address``)."""
    read = ("    { Noc noc; DataflowBuffer c1(1); "
            "uint32_t a = noc_address_backend::extract_local_address(get_noc_addr(1, 0, get_read_ptr(0))); "
            "noc.async_read(UnicastEndpoint{}, c1, tile_bytes, {.noc_x = 1, .noc_y = 0, .addr = a}, {}); }")
    assert _ops(_pull(tmp_path, read), RemoteRead) == [(Site(0, 0), RemoteRead(0, Site(1, 0), 1, 1, 0))]


def test_tensor_accessor_tuples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``make_tensor_accessor_args_tuple<2, 0>()``, ``make_tensor_accessor_tuple(args, 0)`` (accessor ``i`` over runtime
    arg ``i``), ``make_abstract_tensor_accessor_wrappers`` indexed in a loop and ``std::get<1>`` (tensor_accessor.h:
    696-804; once ``call to make_tensor_accessor_args_tuple``): the reader reads ``src``'s tile through element 0, the
    writer writes ``dst``'s through element 1, and the program proves."""
    tup = ("    constexpr auto args = make_tensor_accessor_args_tuple<2, 0>();",
           "    const auto t = make_tensor_accessor_tuple(args, 0);")
    reader = (*tup, "    auto acc = make_abstract_tensor_accessor_wrappers(t);",
              "    for (uint32_t i = 0; i < 1; ++i) {", "        cb_reserve_back(0, 1);",
              "        noc_async_read_tile(0, acc[i], get_write_ptr(0));", "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);", "    }")
    writer = (*tup, "    cb_wait_front(0, 1);", "    noc_async_write_tile(0, std::get<1>(t), get_read_ptr(0));",
              "    noc_async_write_barrier();", "    cb_pop_front(0, 1);")
    path = _host(tmp_path, {"reader": ("reader", reader), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer")})
    assert [op.tensor for _, op in _ops(path, ReadTiles)] == ["src"]
    assert [op.tensor for _, op in _ops(path, WriteTiles)] == ["dst"]
    _proved(path, capsys)


def test_alignment_helpers_are_computed(tmp_path: Path) -> None:
    """api/alignment.h's ``align`` (round up to a multiple), ``align_power_of_2`` and ``is_power_of_2`` on numbers,
    as 32-bit words (once ``call to align``, reduce_to_root's receivers); ``align`` to 0 divides by zero: refused."""
    assert _reserved(tmp_path, "    cb_reserve_back(0, align(5, 4) / 4);", "    cb_reserve_back(0, align(12, 6));",
                     "    cb_reserve_back(0, align_power_of_2(5, 4) / 4 + is_power_of_2(8) + is_power_of_2(6));",
                     "    cb_reserve_back(0, align(0xFFFFFFFFu, 2) + 1);") == [2, 12, 3, 1]
    with pytest.raises(Refused, match="align to 0"):
        _reserved(tmp_path, "    cb_reserve_back(0, align(3, 0));")


def test_stores_through_a_core_local_mem_declared_by_its_address_are_seen(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``const CoreLocalMem<uint16_t> ptr(l1_addr); ptr[i] = 0;`` into the page a NoC read fills (moreh_dot's
    ``mask_tile_in_reader``, reader_moreh_dot.cpp:21-29): tree-sitter parses the declaration as a function's, and the
    reading once dropped the stores through the undeclared name and proved the reader; now the stores are seen: after
    the read's barrier they patch the read's tile (a ``FillTiles`` of no tile, tests/test_frontend_ttmetal_patch.py),
    and undrained before the push they are refuted there (``async-read-publish``)."""
    reader = ("    cb_reserve_back(0, 1);", "    uint32_t w = get_write_ptr(0);",
              "    noc_async_read_tile(0, s, w);", "    noc_async_read_barrier();",
              "    const CoreLocalMem<uint16_t> ptr(w);", "    ptr[3] = 0;", "    cb_push_back(0, 1);")
    writer = ("    cb_wait_front(0, 1);", "    noc_async_write_tile(0, d, get_read_ptr(0));",
              "    noc_async_write_barrier();", "    cb_pop_front(0, 1);")
    path = _host(tmp_path, {"reader": ("reader", reader), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer")})
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(0, 0, PATCH, drain=False)]
    _refuted(path, capsys, "async-read-publish")


def test_memcpy_into_a_variable_is_a_value_not_followed(tmp_path: Path) -> None:
    """``std::memcpy(&one_u, &one_f, sizeof(uint32_t))`` (a bit cast, batch_norm's reader_running_statistics.cpp:51):
    ``one_u`` holds bytes not followed, so a page count from it is refused by name; a memcpy into L1 or inside a loop
    read once is refused (once ``call to memcpy``)."""
    assert _reserved(tmp_path, "    uint32_t u = 0;", "    const float f = 1.0f;",
                     "    std::memcpy(&u, &f, sizeof(uint32_t));", "    cb_reserve_back(0, 1);") == [1]
    with pytest.raises(Refused, match="page count not known statically"):
        _reserved(tmp_path, "    uint32_t u = 0;", "    const float f = 1.0f;",
                  "    std::memcpy(&u, &f, sizeof(uint32_t));", "    cb_reserve_back(0, u);")
    with pytest.raises(Refused, match="memcpy into memory the reading does not follow"):
        _reserved(tmp_path, "    const float f = 1.0f;", "    std::memcpy((void*)get_write_ptr(0), &f, 4);")
