"""The tt-metal front end on what the sharded layernorm's kernels need (ttnn 0.81.1 ``normalization/layernorm/device/
kernels/dataflow/reader_mcast_*_unary_sharded_ln.cpp``): Metal 2.0 varargs, a local array of them read through a
pointer, an array type alias filled through a reference parameter, ``NOC_MAX_BURST_SIZE``, a multicast of pages the
sender already pushed and a compute read of a buffer its kernel never waits on. Small kernels written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.errors import ParseError
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Compute, InPlace, McastSend, Operand, Push, Reserve, Wait
from verispatial.ir.program import walk


def _host(tmp_path: Path, source: str, processor: str = "reader", varargs: list[int] | None = None,
          extra: dict[str, Any] | None = None, two_cores: bool = False) -> Path:
    """A host of kernel ``k`` (``source``) on core (0,0): named runtime arg ``n`` = 5, ``len(varargs)`` varargs;
    buffers c_0 and c_1 (one bf16 tile a page, 2 pages). With ``two_cores`` an idle kernel runs on (1,0)."""
    (tmp_path / "k.cpp").write_text(source)
    (tmp_path / "idle.cpp").write_text("void kernel_main() {}\n")
    vs = varargs if varargs is not None else []
    k = {"name": "k", "source": "k.cpp", "processor": processor, "runtime_args": ["n"], "varargs": len(vs)}
    units: list[dict[str, Any]] = [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": {"n": 5}},
                                    "varargs": {"k": vs}}]
    kernels = [k]
    if two_cores:
        kernels.append({"name": "idle", "source": "idle.cpp", "processor": processor})
        units.append({"cores": "1,0", "kernels": ["idle"]})
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "snippet", "kernel_root": str(tmp_path),
            "buffers": [{"name": f"c_{i}", "index": i, "entry_size": 2048, "entries": 2, "data_format": "bf16"}
                        for i in (0, 1)],
            "kernels": kernels, "work_units": units, **(extra or {})}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return tmp_path / "h.json"


def _read(tmp_path: Path, source: str, **kw: Any) -> Any:
    return import_host(_host(tmp_path, source, **kw)).programs[0]


def _main(*body: str, prelude: tuple[str, ...] = ()) -> str:
    return "\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude, "void kernel_main() {", *body, "}"])


def _pages(ep: Any) -> list[tuple[str, int]]:
    return [(type(op).__name__, op.pages) for op in walk(ep.ops) if isinstance(op, (Reserve, Push, Wait))]


# ------------------------------------------------------------------ varargs


def test_vararg_is_the_positional_arg_after_the_named_ones(tmp_path: Path) -> None:
    """``get_vararg(i)`` reads the i-th of the host's varargs (``num_runtime_varargs``), never the named arg at
    position i: ``n`` is 5, vararg 0 is 1, vararg 1 is 2."""
    ep = _read(tmp_path, _main("    cb_reserve_back(0, get_vararg(1));", "    cb_push_back(0, get_vararg(0));",
                               "    cb_reserve_back(1, get_arg(args::n) - 3);"), varargs=[1, 2])
    assert _pages(ep) == [("Reserve", 2), ("Push", 1), ("Reserve", 2)]


def test_vararg_past_the_declared_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match=r"vararg the host does not declare.*index 2; kernel k declares 2 varargs"):
        _read(tmp_path, _main("    cb_reserve_back(0, get_vararg(2));"), varargs=[1, 2])


def test_varargs_of_another_count_than_the_kernel_declares_are_bad_input(tmp_path: Path) -> None:
    h = _host(tmp_path, _main(), varargs=[1, 2])
    d = json.loads(h.read_text())
    d["work_units"][0]["varargs"]["k"] = [1, 2, 3]
    h.write_text(json.dumps(d))
    with pytest.raises(ParseError, match=r"work_units\[0\]\.varargs\.k.*declares 2 varargs, got 3 values"):
        import_host(h)


# ------------------------------------------------------------------ a local array read through a pointer

_FILL = ("    uint32_t xs[2];",
         "    for (uint32_t i = 0; i < 2; ++i) {",
         "        xs[i] = get_vararg(i);",
         "    }",
         "    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(xs);")


def test_local_array_of_varargs_read_through_a_pointer_in_a_callee(tmp_path: Path) -> None:
    """The layernorm readers' coordinate block (reader_mcast_sender_unary_sharded_ln.cpp:79-88): a local array filled
    from ``get_vararg`` in a loop, cast to a word pointer and read through it, here and in an inlined function."""
    ep = _read(tmp_path, _main(*_FILL, "    cb_reserve_back(0, pick(p, 1));", "    cb_push_back(0, p[0]);",
                               prelude=("inline uint32_t pick(volatile tt_l1_ptr uint32_t* q, uint32_t i) {",
                                        "    return q[i];", "}")), varargs=[1, 2])
    assert _pages(ep) == [("Reserve", 2), ("Push", 1)]


def test_the_pointer_reads_the_array_as_it_is_now(tmp_path: Path) -> None:
    """A store into the array after the pointer was taken is seen through the pointer (it is the array's address,
    never a copy)."""
    ep = _read(tmp_path, _main(*_FILL, "    xs[1] = 1;", "    cb_reserve_back(0, p[1]);"), varargs=[1, 2])
    assert _pages(ep) == [("Reserve", 1)]


def test_a_store_through_the_pointer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="store through a pointer to a local array"):
        _read(tmp_path, _main(*_FILL, "    p[0] = 2;", "    cb_reserve_back(0, xs[0]);"), varargs=[1, 2])
    with pytest.raises(Refused, match="store through a pointer to a local array"):
        _read(tmp_path, _main(*_FILL, "    p[0]++;", "    cb_reserve_back(0, xs[0]);"), varargs=[1, 2])


def test_any_other_use_of_the_pointer_ends_what_is_known_of_the_array(tmp_path: Path) -> None:
    """``p + 1`` (which may then be written through) or ``p`` as an integer address (which a NoC read may land
    in): the array is not followed any more, through the pointer or by name. A function neither inlined nor modelled
    is refused by its name. A store through ``p + 1`` cast to a pointer type is refused where it stands (the cast
    address is no longer known to be the kernel's own words: ``unnamed_store``)."""
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main(*_FILL, "    volatile tt_l1_ptr uint32_t* q = p + 1;",
                              "    cb_reserve_back(0, xs[1]);"), varargs=[1, 2])
    with pytest.raises(Refused, match="plain store through a pointer not followed"):
        _read(tmp_path, _main(*_FILL, "    volatile tt_l1_ptr uint32_t* q = p + 1;", "    *q = 2;",
                              "    cb_reserve_back(0, xs[1]);"), varargs=[1, 2])
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main(*_FILL, "    uint32_t addr = (uint32_t)p;", "    cb_reserve_back(0, p[1]);"),
              varargs=[1, 2])
    with pytest.raises(Refused, match="call to opaque_fill"):
        _read(tmp_path, _main(*_FILL, "    opaque_fill(p);", "    cb_reserve_back(0, p[1]);"), varargs=[1, 2])


def test_a_cast_to_a_pointer_of_another_width_is_not_followed(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    uint32_t xs[2];", "    xs[0] = 1;",
                              "    volatile tt_l1_ptr uint16_t* p = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(xs);",
                              "    cb_reserve_back(0, p[0]);"))


# ------------------------------------------------------------------ an array type alias and a reference parameter

_COORDS = ("struct Coord {", "    uint32_t x;", "    uint32_t y;", "};",
           "template <uint32_t N>", "using Coords = Coord[N];",
           "template <uint32_t N>", "inline void fill(Coords<N>& c, uint32_t a) {",
           "    for (uint32_t i = 0; i < N; ++i) {", "        c[i] = {a + i, 1};", "    }", "}")


def test_array_alias_filled_through_a_reference_parameter(tmp_path: Path) -> None:
    """``df::RemoteNocCoords<num_blocks> remote_coords{};`` filled by ``compute_single_stage_noc_addrs`` through a
    reference parameter (layernorm_dataflow_utils.h:31-32, 123-151) and read as ``remote_coords[block].x``."""
    ep = _read(tmp_path, _main("    Coords<2> c{};", "    cb_reserve_back(0, c[1].y + 1);", "    fill<2>(c, 1);",
                               "    cb_reserve_back(1, c[1].x);", "    cb_push_back(1, c[0].x);",
                               "    for (uint32_t b = 0; b < 2; ++b) {", "        cb_wait_front(0, c[b].y);", "    }",
                               prelude=_COORDS))
    assert _pages(ep) == [("Reserve", 1), ("Reserve", 2), ("Push", 1), ("Wait", 1), ("Wait", 1)]


def test_array_alias_elements_never_stored_are_not_followed(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, _main("    Coords<2> c;", "    cb_reserve_back(0, c[0].x);", prelude=_COORDS))


# ------------------------------------------------------------------ NOC_MAX_BURST_SIZE


def test_noc_max_burst_size_is_the_targets(tmp_path: Path) -> None:
    """256 NoC words of 32 bytes on Wormhole (wormhole/noc/noc_parameters.h:215-221), of 64 on Blackhole."""
    src = _main("    if constexpr (2048 * 4 <= NOC_MAX_BURST_SIZE) {", "        cb_reserve_back(0, 1);",
                "    }", "    if constexpr (2048 * 5 <= NOC_MAX_BURST_SIZE) {", "        cb_reserve_back(1, 2);", "    }")
    assert _pages(_read(tmp_path, src)) == [("Reserve", 1)]
    assert _pages(_read(tmp_path, src, extra={"target": "blackhole"})) == [("Reserve", 1), ("Reserve", 2)]


# ------------------------------------------------------------------ a multicast of pages already pushed

_MCAST = ("    cb_reserve_back(0, 2);",
          "    cb_push_back(0, 2);",
          "    uint32_t a = get_read_ptr(0);",
          "    for (uint32_t b = 0; b < 2; ++b) {",
          "        uint32_t off = b * 2048;",
          "        noc_async_write_multicast(a + off, get_noc_multicast_addr(1, 0, 1, 0, a + off), {size}, 1);",
          "        noc_async_write_barrier();",
          "    }")


def test_multicast_from_the_producers_read_pointer_sends_pages_it_pushed(tmp_path: Path) -> None:
    """The layernorm sender's result multicast (reader_mcast_sender_unary_sharded_ln.cpp:267-289): the producer of
    ``ex_global`` pushes it and multicasts block by block from its read pointer, which it never pops: the pages one
    ring behind its write pointer, ``offset`` = the block (``McastSend.behind``)."""
    ep = _read(tmp_path, _main(*(x.replace("{size}", "2048") for x in _MCAST)), two_cores=True)
    sends = [op for op in walk(ep.ops) if isinstance(op, McastSend)]
    assert [(s.pages, s.offset, s.behind, s.front) for s in sends] == [(1, 0, 2, False), (1, 1, 2, False)]


def test_multicast_of_pages_past_the_last_ring_pushed_is_refused(tmp_path: Path) -> None:
    """Two pages from the second page on reach past the write pointer: refused as before, by name."""
    with pytest.raises(Refused, match="multicast from L1 not at the buffer's read pointer"):
        _read(tmp_path, _main(*(x.replace("{size}", "4096") for x in _MCAST)), two_cores=True)


# ------------------------------------------------------------------ a compute read of a buffer never waited


def test_compute_read_of_a_buffer_never_waited_is_in_place(tmp_path: Path) -> None:
    """layernorm_sharded.cpp:357 and :520: ``sub_tiles_bcast_cols(dfb_in_id, ...)`` of the resident input shard and
    ``add_tiles(dfb_ex2_id, dfb_eps, i, 0, dst0)`` of ``eps``, neither waited by the kernel: reads in place
    (``Compute.in_place``), which the checker asks to hold published bytes; a waited buffer stays an operand."""
    src = "\n".join(['#include "api/compute/eltwise_binary.h"', "void kernel_main() {",
                     "    cb_wait_front(1, 1);",
                     "    for (uint32_t i = 0; i < 2; ++i) {",
                     "        tile_regs_acquire();", "        add_tiles(1, 0, 0, i, 0);", "        tile_regs_commit();",
                     "        tile_regs_wait();", "        tile_regs_release();", "    }",
                     "    cb_pop_front(1, 1);", "}"])
    ep = _read(tmp_path, src, processor="compute")
    (c,) = [op for op in walk(ep.ops) if isinstance(op, Compute)]
    assert c.ins == (Operand(1, 1),)
    (read,) = c.in_place
    assert isinstance(read, InPlace)
    assert (read.buf, read.page, [t.coef for t in read.terms]) == (0, 0, [1])
