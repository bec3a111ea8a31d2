"""L1 addresses inside a buffer's pages (issue 18): the model lands a ReadTiles one tile after another from the write
pointer (families/cb/semantics.py ``fill``) and reads a WriteTiles likewise from the read pointer (``drain``), and a
multicast sends whole pages from the pointer; a kernel passes an address. The front end follows that address (the
pointer it was taken from, the pushes and pops since, the offset added) and refuses, at its line, a transfer whose
address is not where the model puts it: a forgotten advance (two tiles read into the same bytes, two pages pushed:
stale data published), a doubled offset, a pointer kept from before a push, and the front-side kinds. Each correct form
is proved end to end with a host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import PATCH, FillTiles, PackAcc, ReadTiles, SemSet, WriteTiles
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', '#include "api/dataflow/noc.h"',
         '#include "api/dataflow/dataflow_buffer.h"', "void kernel_main() {",
         "    const uint32_t tile_bytes = get_tile_size(0);")
#: the reader's accessor over ``src`` and the writer's over ``dst`` (lines 6-7 of every kernel)
_READER = ("    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
           "    Noc noc; DataflowBuffer dfb(0);")
_WRITER = ("    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
           "    Noc noc; DataflowBuffer dfb(0);")

#: a writer of the 8 tiles one page at a time, in the Metal 2.0 form (proved with every correct reader below)
_PLAIN_WRITER = (*_WRITER,
                 "    for (uint32_t i = 0; i < 8; ++i) {",
                 "        dfb.wait_front(1);",
                 "        noc.async_write(dfb, d, tile_bytes, {}, {.page_id = i});",
                 "        noc.async_write_barrier();",
                 "        dfb.pop_front(1);",
                 "    }")
#: a reader of the 8 tiles one page at a time (proved with every correct writer below)
_PLAIN_READER = (*_READER,
                 "    for (uint32_t i = 0; i < 8; ++i) {",
                 "        cb_reserve_back(0, 1);",
                 "        noc_async_read_tile(i, s, get_write_ptr(0));",
                 "        noc_async_read_barrier();",
                 "        cb_push_back(0, 1);",
                 "    }")


def _kernel(*body: str) -> str:
    return "\n".join([*_HEAD, *body, "}"])


def _host(tmp_path: Path, reader: tuple[str, ...], writer: tuple[str, ...] = _PLAIN_WRITER, entries: int = 4) -> Path:
    """Core (0,0): ``reader`` fills c_0 (``entries`` pages of one bf16 tile) from ``src`` (8 tiles), ``writer`` drains
    it into ``dst``. The reader's runtime arg 1 is ``n``, a value in 1..8 known only at run time (a trip)."""
    (tmp_path / "reader.cpp").write_text(_kernel(*reader))
    (tmp_path / "writer.cpp").write_text(_kernel(*writer))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "l1addr", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "in", "index": 0, "entry_size": 2048, "entries": entries, "data_format": "bf16"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "runtime_args": ["src", "n"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer", "runtime_args": ["dst"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "writer"],
                            "runtime_args": {"reader": {"src": {"tensor": "src"}, "n": "1..8"},
                                             "writer": {"dst": {"tensor": "dst"}}}}]}
    path = tmp_path / "host.yaml"  # JSON is YAML; certify tells a host description by its suffix
    path.write_text(json.dumps(host))
    return path


def _proved(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, [r for r in report["results"] if r["verdict"] != "proved"]


def _refused(path: Path, construct: str, file: str, line: int) -> Refused:
    with pytest.raises(Refused, match=construct) as e:
        import_host(path)
    assert (e.value.loc.file, e.value.loc.line) == (file, line), e.value
    return e.value


# ------------------------------------------------------------------ reads into the back

#: correct readers of the 8 tiles in blocks of two pages
GOOD_READERS = {
    # the vendor form: the write pointer taken once after the reserve, advanced a tile per tile
    "advanced": ("    for (uint32_t b = 0; b < 4; ++b) {",
                 "        cb_reserve_back(0, 2);",
                 "        uint32_t l1 = get_write_ptr(0);",
                 "        for (uint32_t j = 0; j < 2; ++j) {",
                 "            noc_async_read_tile(b * 2 + j, s, l1);",
                 "            l1 += tile_bytes;",
                 "        }",
                 "        noc_async_read_barrier();",
                 "        cb_push_back(0, 2);",
                 "    }"),
    # the address computed from the index
    "indexed": ("    for (uint32_t b = 0; b < 4; ++b) {",
                "        cb_reserve_back(0, 2);",
                "        for (uint32_t j = 0; j < 2; ++j) {",
                "            noc_async_read_tile(b * 2 + j, s, get_write_ptr(0) + j * tile_bytes);",
                "        }",
                "        noc_async_read_barrier();",
                "        cb_push_back(0, 2);",
                "    }"),
    # Metal 2.0: the buffer as the destination, {.offset_bytes = j * tile}
    "offset_bytes": ("    for (uint32_t b = 0; b < 4; ++b) {",
                     "        dfb.reserve_back(2);",
                     "        for (uint32_t j = 0; j < 2; ++j) {",
                     "            noc.async_read(s, dfb, tile_bytes, {.page_id = b * 2 + j}, {.offset_bytes = j * tile_bytes});",
                     "        }",
                     "        noc.async_read_barrier();",
                     "        dfb.push_back(2);",
                     "    }"),
    # a typed pointer: uint16_t* advanced by a tile's elements
    "typed_pointer": ("    for (uint32_t b = 0; b < 4; ++b) {",
                      "        cb_reserve_back(0, 2);",
                      "        volatile uint16_t* p = reinterpret_cast<volatile uint16_t*>(get_write_ptr(0));",
                      "        for (uint32_t j = 0; j < 2; ++j) {",
                      "            noc_async_read_tile(b * 2 + j, s, (uint32_t)(p + j * 1024));",
                      "        }",
                      "        noc_async_read_barrier();",
                      "        cb_push_back(0, 2);",
                      "    }"),
    # a CoreLocalMem<T> declared from the address (tilize's reader_unary_stick_layout_split_rows_multicore.cpp:42:
    # parsed as a function declaration, the most vexing parse), and one declared with =
    "core_local_mem": ("    for (uint32_t b = 0; b < 4; ++b) {",
                       "        dfb.reserve_back(2);",
                       "        uint32_t l1 = dfb.get_write_ptr();",
                       "        for (uint32_t j = 0; j < 2; ++j) {",
                       "            CoreLocalMem<uint32_t> dst(l1);",
                       "            noc.async_read(s, dst, tile_bytes, {.page_id = b * 2 + j}, {.offset_bytes = 0});",
                       "            l1 += tile_bytes;",
                       "        }",
                       "        noc.async_read_barrier();",
                       "        dfb.push_back(2);",
                       "    }"),
    "core_local_mem_typed": ("    for (uint32_t b = 0; b < 4; ++b) {",
                             "        dfb.reserve_back(2);",
                             "        CoreLocalMem<uint16_t> dst = dfb.get_write_ptr();",
                             "        for (uint32_t j = 0; j < 2; ++j) {",
                             "            noc.async_read(s, dst + j * 1024, tile_bytes, {.page_id = b * 2 + j}, {});",
                             "        }",
                             "        noc.async_read_barrier();",
                             "        dfb.push_back(2);",
                             "    }"),
}


@pytest.mark.parametrize("form", sorted(GOOD_READERS))
def test_reads_at_the_next_unfilled_tile_are_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    form: str) -> None:
    path = _host(tmp_path, (*_READER, *GOOD_READERS[form]))
    reads = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert [op.tiles for op in reads] == [1]
    _proved(path, capsys)


def test_a_core_local_mem_read_pushed_before_its_barrier_is_refuted_at_the_push(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The declared ``CoreLocalMem`` reader with its read barrier moved after the push: the pages are published
    before the reads land, refuted at the push's line (16) with a counterexample."""
    body = list(GOOD_READERS["core_local_mem"])
    barrier = body.index("        noc.async_read_barrier();")
    body[barrier], body[barrier + 1] = body[barrier + 1], body[barrier]
    rc = main(["certify", str(_host(tmp_path, (*_READER, *body))), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 1
    refuted = [r for r in report["results"] if r["verdict"] == "refuted"]
    found = {(r["name"].split(":")[0], r["counterexample"]["violation"]["position"]["source"]["line"])
             for r in refuted}
    # the push publishes unlanded pages (line 16); the next block's read may land into a slot still being read
    assert ("async-read-publish", 16) in found
    assert {rule for rule, _ in found} <= {"async-read-publish", "async-source-reuse"}


def test_a_pointer_kept_across_pushes_is_placed_while_it_stays_in_the_ring(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """concatenate_heads' form (reader_tm_tile_layout_concat_heads.cpp:31-47): the write pointer taken once before
    the loop and advanced by the kernel across its pushes. In an 8-page ring it never wraps: each read is where the
    model puts it. In a 4-page ring the hardware pointer wraps after the second block while the kernel's address runs
    past the ring's end: refused."""
    body = ("    uint32_t l1 = get_write_ptr(0);",
            "    for (uint32_t b = 0; b < 4; ++b) {",
            "        cb_reserve_back(0, 2);",
            "        for (uint32_t j = 0; j < 2; ++j) {",
            "            noc_async_read_tile(b * 2 + j, s, l1);",
            "            l1 += tile_bytes;",
            "        }",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 2);",
            "    }")
    _proved(_host(tmp_path, (*_READER, *body), entries=8), capsys)
    e = _refused(_host(tmp_path, (*_READER, *body), entries=4), "L1 pointer taken before a push used after it",
                 "reader.cpp", 12)
    assert "past the 4-page ring's end" in e.detail


def test_a_one_page_ring_pointer_taken_once_is_placed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In a ring of one page every push brings the write pointer back to the same address: a pointer taken once
    before the loop points at the next page to fill in every iteration."""
    body = ("    uint32_t l1 = get_write_ptr(0);",
            "    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(i, s, l1);",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "    }")
    _proved(_host(tmp_path, (*_READER, *body), entries=1), capsys)
    # in a ring of four the same kernel reads every tile into page 0 and publishes pages 1..3 unfilled
    _refused(_host(tmp_path, (*_READER, *body), entries=4), "L1 pointer taken before a push used after it",
             "reader.cpp", 11)


#: wrong readers: (body, construct, line of the refusal)
BAD_READERS = {
    # two tiles read into the same bytes, two pages pushed: the second page publishes stale data
    "forgotten_advance": (("    for (uint32_t b = 0; b < 4; ++b) {",
                           "        cb_reserve_back(0, 2);",
                           "        uint32_t l1 = get_write_ptr(0);",
                           "        for (uint32_t j = 0; j < 2; ++j) {",
                           "            noc_async_read_tile(b * 2 + j, s, l1);",
                           "        }",
                           "        noc_async_read_barrier();",
                           "        cb_push_back(0, 2);",
                           "    }"), "read into L1 not at the buffer's next unfilled tile", 12),
    "doubled_offset": (("    for (uint32_t b = 0; b < 4; ++b) {",
                        "        cb_reserve_back(0, 2);",
                        "        for (uint32_t j = 0; j < 2; ++j) {",
                        "            noc_async_read_tile(b * 2 + j, s, get_write_ptr(0) + 2 * j * tile_bytes);",
                        "        }",
                        "        noc_async_read_barrier();",
                        "        cb_push_back(0, 2);",
                        "    }"), "read into L1 not at the buffer's next unfilled tile", 11),
    "offset_bytes_doubled": (("    for (uint32_t b = 0; b < 4; ++b) {",
                              "        dfb.reserve_back(2);",
                              "        for (uint32_t j = 0; j < 2; ++j) {",
                              "            noc.async_read(s, dfb, tile_bytes, {.page_id = b * 2 + j}, "
                              "{.offset_bytes = 2 * j * tile_bytes});",
                              "        }",
                              "        noc.async_read_barrier();",
                              "        dfb.push_back(2);",
                              "    }"), "read into L1 not at the buffer's next unfilled tile", 11),
    # page k read into slot 1 - k: the right pages, in the wrong order
    "swapped": (("    for (uint32_t b = 0; b < 4; ++b) {",
                 "        cb_reserve_back(0, 2);",
                 "        uint32_t l1 = get_write_ptr(0);",
                 "        noc_async_read_tile(b * 2, s, l1 + tile_bytes);",
                 "        noc_async_read_tile(b * 2 + 1, s, l1);",
                 "        noc_async_read_barrier();",
                 "        cb_push_back(0, 2);",
                 "    }"), "read into L1 not at the buffer's next unfilled tile", 11),
    # the pointer taken before the first push and used for every block after it
    "reused_after_push": (("    uint32_t l1 = get_write_ptr(0);",
                           "    for (uint32_t b = 0; b < 4; ++b) {",
                           "        cb_reserve_back(0, 2);",
                           "        noc_async_read_tile(b * 2, s, l1);",
                           "        noc_async_read_tile(b * 2 + 1, s, l1 + tile_bytes);",
                           "        noc_async_read_barrier();",
                           "        cb_push_back(0, 2);",
                           "    }"), "L1 pointer taken before a push used after it", 11),
    # the pointer taken after the push it should precede
    "taken_after_push": (("    for (uint32_t b = 0; b < 8; ++b) {",
                          "        cb_reserve_back(0, 1);",
                          "        uint32_t l1 = get_write_ptr(0);",
                          "        cb_push_back(0, 1);",
                          "        noc_async_read_tile(b, s, l1);",
                          "        noc_async_read_barrier();",
                          "    }"), "L1 pointer taken before a push used after it", 12),
    # the read pointer as a read's destination
    "into_the_front": (("    cb_reserve_back(0, 1);",
                        "    noc_async_read_tile(0, s, get_read_ptr(0));"), "read into a buffer's front pages", 9),
    # an address chosen in a branch on the index of a loop over a runtime count: which one the loop uses is not
    # followed (a loop of a constant count is read iteration by iteration, its first iteration refused as swapped)
    "chosen_in_a_branch": (("    for (uint32_t b = 0; b < get_arg_val<uint32_t>(1); ++b) {",
                            "        cb_reserve_back(0, 1);",
                            "        uint32_t l1 = get_write_ptr(0);",
                            "        if (b == 0) { l1 += tile_bytes; }",
                            "        noc_async_read_tile(b, s, l1);",
                            "        noc_async_read_barrier();",
                            "        cb_push_back(0, 1);",
                            "    }"), "L1 pointer not followed", 12),
    # a CoreLocalMem declared from the write pointer and never advanced: both tiles into the same bytes
    "core_local_mem_not_advanced": (("    for (uint32_t b = 0; b < 4; ++b) {",
                                     "        dfb.reserve_back(2);",
                                     "        CoreLocalMem<uint32_t> dst(dfb.get_write_ptr());",
                                     "        for (uint32_t j = 0; j < 2; ++j) {",
                                     "            noc.async_read(s, dst, tile_bytes, {.page_id = b * 2 + j}, {});",
                                     "        }",
                                     "        noc.async_read_barrier();",
                                     "        dfb.push_back(2);",
                                     "    }"), "read into L1 not at the buffer's next unfilled tile", 12),
    # ... and one of uint16_t stepped by a tile's bytes as elements: twice the distance
    "core_local_mem_stepped_in_bytes": (("    for (uint32_t b = 0; b < 4; ++b) {",
                                         "        dfb.reserve_back(2);",
                                         "        CoreLocalMem<uint16_t> dst(dfb.get_write_ptr());",
                                         "        for (uint32_t j = 0; j < 2; ++j) {",
                                         "            noc.async_read(s, dst + j * tile_bytes, tile_bytes, "
                                         "{.page_id = b * 2 + j}, {});",
                                         "        }",
                                         "        noc.async_read_barrier();",
                                         "        dfb.push_back(2);",
                                         "    }"), "read into L1 not at the buffer's next unfilled tile", 12),
}


@pytest.mark.parametrize("form", sorted(BAD_READERS))
def test_reads_not_at_the_next_unfilled_tile_are_refused_at_their_line(tmp_path: Path, form: str) -> None:
    body, construct, line = BAD_READERS[form]
    _refused(_host(tmp_path, (*_READER, *body)), construct, "reader.cpp", line)


def test_the_refusal_says_where_the_address_is_and_where_the_model_puts_it(tmp_path: Path) -> None:
    body, construct, line = BAD_READERS["forgotten_advance"]
    e = _refused(_host(tmp_path, (*_READER, *body)), construct, "reader.cpp", line)
    # the inner loop of two reads is read iteration by iteration once its symbolic reading is refused: j = 1
    assert ("the address is 0 B past in's write pointer taken at line 10, but the model's transfer is at 2048 B past "
            "it, after the 2048 B (1 tile) this engine's reads and stores already filled past it that no cb_push_back "
            "has published (2048 B a tile)") in e.detail


def test_a_read_longer_than_its_one_page_reservation_says_so(tmp_path: Path) -> None:
    """``noc_async_read(a, get_write_ptr(0), 4096)`` into a one-page (2048 B) reservation, in a loop: the second
    iteration's read is refused. It said only '0 B past in's write pointer ..., but the model's transfer is at 2048 B
    past it', which does not say why: the first read's second tile, which no push published, is still there."""
    body = ("    for (uint32_t i = 0; i < 2; ++i) {",
            "        dfb.reserve_back(1);",
            "        noc_async_read(get_noc_addr(i, s), get_write_ptr(0), 4096);",
            "        noc_async_read_barrier();",
            "        dfb.push_back(1);",
            "    }")
    e = _refused(_host(tmp_path, (*_READER, *body)), "read into L1 not at the buffer's next unfilled tile", "reader.cpp",
                 10)
    assert e.detail == ("noc_async_read(get_noc_addr(i, s), get_write_ptr(0), 4096): the address is 0 B past in's "
                        "write pointer taken at line 10, but the model's transfer is at 2048 B past it, after the "
                        "2048 B (1 tile) this engine's reads and stores already filled past it that no cb_push_back "
                        "has published (2048 B a tile); this transfer alone is 2 tiles (4096 B), more than a 2048 B "
                        "page of in")


# ------------------------------------------------------------------ writes from the front

GOOD_WRITERS = {
    "advanced": ("    for (uint32_t b = 0; b < 4; ++b) {",
                 "        cb_wait_front(0, 2);",
                 "        uint32_t l1 = get_read_ptr(0);",
                 "        for (uint32_t j = 0; j < 2; ++j) {",
                 "            noc_async_write_tile(b * 2 + j, d, l1);",
                 "            l1 += tile_bytes;",
                 "        }",
                 "        noc_async_write_barrier();",
                 "        cb_pop_front(0, 2);",
                 "    }"),
    "offset_bytes": ("    for (uint32_t b = 0; b < 4; ++b) {",
                     "        dfb.wait_front(2);",
                     "        for (uint32_t j = 0; j < 2; ++j) {",
                     "            noc.async_write(dfb, d, tile_bytes, {.offset_bytes = j * tile_bytes}, {.page_id = b * 2 + j});",
                     "        }",
                     "        noc.async_write_barrier();",
                     "        dfb.pop_front(2);",
                     "    }"),
    # untilize's writer_unary_stick_layout_split_rows_multi_core.cpp:62-66: a CoreLocalMem declared from the read
    # pointer, advanced by the bytes written
    "core_local_mem": ("    for (uint32_t b = 0; b < 4; ++b) {",
                       "        dfb.wait_front(2);",
                       "        uint32_t l1 = dfb.get_read_ptr();",
                       "        for (uint32_t j = 0; j < 2; ++j) {",
                       "            CoreLocalMem<uint32_t> src(l1);",
                       "            noc.async_write(src, d, tile_bytes, {.offset_bytes = 0}, {.page_id = b * 2 + j});",
                       "            l1 += tile_bytes;",
                       "        }",
                       "        noc.async_write_barrier();",
                       "        dfb.pop_front(2);",
                       "    }"),
}


@pytest.mark.parametrize("form", sorted(GOOD_WRITERS))
def test_writes_from_the_next_unread_tile_are_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     form: str) -> None:
    path = _host(tmp_path, _PLAIN_READER, (*_WRITER, *GOOD_WRITERS[form]))
    writes = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, WriteTiles)]
    assert [op.tiles for op in writes] == [1]
    _proved(path, capsys)


BAD_WRITERS = {
    # the same front page written to two tensor pages; the second page is never written out
    "same_page_twice": (("    for (uint32_t b = 0; b < 4; ++b) {",
                         "        cb_wait_front(0, 2);",
                         "        uint32_t l1 = get_read_ptr(0);",
                         "        for (uint32_t j = 0; j < 2; ++j) {",
                         "            noc_async_write_tile(b * 2 + j, d, l1);",
                         "        }",
                         "        noc_async_write_barrier();",
                         "        cb_pop_front(0, 2);",
                         "    }"), "write from L1 not at the buffer's next unread tile", 12),
    "offset_bytes_doubled": (("    for (uint32_t b = 0; b < 4; ++b) {",
                              "        dfb.wait_front(2);",
                              "        for (uint32_t j = 0; j < 2; ++j) {",
                              "            noc.async_write(dfb, d, tile_bytes, {.offset_bytes = 2 * j * tile_bytes}, "
                              "{.page_id = b * 2 + j});",
                              "        }",
                              "        noc.async_write_barrier();",
                              "        dfb.pop_front(2);",
                              "    }"), "write from L1 not at the buffer's next unread tile", 11),
    "reused_after_pop": (("    uint32_t l1 = get_read_ptr(0);",
                          "    for (uint32_t b = 0; b < 8; ++b) {",
                          "        cb_wait_front(0, 1);",
                          "        noc_async_write_tile(b, d, l1);",
                          "        noc_async_write_barrier();",
                          "        cb_pop_front(0, 1);",
                          "    }"), "L1 pointer taken before a pop used after it", 11),
    "from_the_back": (("    cb_wait_front(0, 1);",
                       "    noc_async_write_tile(0, d, get_write_ptr(0));"), "write from a buffer's back pages", 9),
}


@pytest.mark.parametrize("form", sorted(BAD_WRITERS))
def test_writes_not_from_the_next_unread_tile_are_refused_at_their_line(tmp_path: Path, form: str) -> None:
    body, construct, line = BAD_WRITERS[form]
    _refused(_host(tmp_path, _PLAIN_READER, (*_WRITER, *body)), construct, "writer.cpp", line)


# ------------------------------------------------------------------ a pointer kept across a push by a read

def test_a_second_read_after_a_push_of_part_of_the_reservation(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Reserve two pages, read the first, push it, read the second at the old pointer plus one tile: where the model
    puts it (the write pointer moved one page, the offset moved one tile: counts constant, the addresses agree)."""
    body = ("    for (uint32_t b = 0; b < 4; ++b) {",
            "        cb_reserve_back(0, 2);",
            "        uint32_t l1 = get_write_ptr(0);",
            "        noc_async_read_tile(b * 2, s, l1);",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "        noc_async_read_tile(b * 2 + 1, s, l1 + tile_bytes);",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "    }")
    _proved(_host(tmp_path, (*_READER, *body)), capsys)
    wrong = tuple(x.replace("l1 + tile_bytes", "l1") for x in body)
    _refused(_host(tmp_path, (*_READER, *wrong)), "L1 pointer taken before a push used after it", "reader.cpp", 14)


# ------------------------------------------------------------------ multicast sources and targets


def _mcast_reader(src: str, dst: str) -> tuple[str, ...]:
    return (*_READER,
            "    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_reserve_back(0, 1);",
            "        uint32_t l1 = get_write_ptr(0);",
            "        noc_async_read_tile(i, s, l1);",
            "        noc_async_read_barrier();",
            f"        noc_async_write_multicast({src}, get_noc_multicast_addr(1, 0, 1, 0, {dst}), tile_bytes, 1);",
            "        noc_async_write_barrier();",
            "        cb_push_back(0, 1);",
            "    }")


@pytest.mark.parametrize(("src", "dst", "construct"), [
    ("l1 + tile_bytes", "l1 + tile_bytes", "multicast from L1 not at the buffer's write pointer"),
    ("l1", "l1 + tile_bytes", "multicast target not at its source's address"),
    ("l1", "get_read_ptr(0)", "multicast target not at its source's address"),
])
def test_multicast_not_from_the_pointer_is_refused(tmp_path: Path, src: str, dst: str, construct: str) -> None:
    """A multicast sends whole pages from the write pointer (the reserved back) to the same address at each
    destination; tests/data/ttmetal/mcast/sender.cpp is the correct form, proved in test_frontend_ttmetal.py."""
    path = _host(tmp_path, _mcast_reader(src, dst))
    _refused(path, construct, "reader.cpp", 13)


# ------------------------------------------------------------------ stores building a constant page

def _store_reader(*fill: str) -> tuple[str, ...]:
    return (*_READER,
            "    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_reserve_back(0, 1);",
            *fill,
            "        cb_push_back(0, 1);",
            "    }")


def test_stores_into_the_page_being_built_are_read(tmp_path: Path) -> None:
    """Stores anywhere in the reserved page (face by face, as fill_each_face_row0 does) fill it."""
    fill = ("        volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
            "        for (uint32_t f = 0; f < 4; ++f) { volatile uint32_t* q = p + f * 128; q[0] = 7; }")
    assert import_host(_host(tmp_path, _store_reader(*fill))).programs


@pytest.mark.parametrize(("fill", "construct", "line"), [
    # a face past the page: the next page's first bytes
    (("        volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
      "        for (uint32_t f = 0; f < 5; ++f) { volatile uint32_t* q = p + f * 128; q[0] = 7; }"),
     "plain store not into the buffer's next unfilled page", 11),
    # a pointer taken once, before the first push
    (("        p[0] = 7;",), "L1 pointer taken before a push used after it", 10),
])
def test_stores_not_into_the_page_being_built_are_refused(tmp_path: Path, fill: tuple[str, ...], construct: str,
                                                          line: int) -> None:
    reader = _store_reader(*fill)
    if fill == ("        p[0] = 7;",):
        reader = (*reader[:2], "    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
                  *reader[2:])
        line += 1
    _refused(_host(tmp_path, reader), construct, "reader.cpp", line)


# ------------------------------------------------------------------ the tensor side: offsets into a page

@pytest.mark.parametrize(("call", "construct"), [
    # noc_async_read_tile(id, addrgen, l1, offset) reads from inside the page into the next (dataflow_api.h:1300)
    ("noc_async_read_tile(i, s, get_write_ptr(0), 1024);", "transfer at an offset into a tensor page"),
    ("noc_async_read(get_noc_addr(i, s, 64), get_write_ptr(0), tile_bytes);", "transfer at an offset into a tensor page"),
    ("noc_async_read(s.get_noc_addr(i, 64), get_write_ptr(0), tile_bytes);", "transfer at an offset into a tensor page"),
    # an offset added to a tensor page's NoC address
    ("noc_async_read(get_noc_addr(i, s) + 64, get_write_ptr(0), tile_bytes);", "read from an address not a tensor page"),
])
def test_reads_from_inside_a_tensor_page_are_refused(tmp_path: Path, call: str, construct: str) -> None:
    body = ("    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_reserve_back(0, 1);",
            f"        {call}",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "    }")
    _refused(_host(tmp_path, (*_READER, *body)), construct, "reader.cpp", 10)


@pytest.mark.parametrize(("call", "construct"), [
    # noc_async_write_page(id, addrgen, l1, size, offset) (dataflow_api.h:1416): a whole page from inside it reaches
    # into the next one (part of a page is read: tests/test_frontend_ttmetal_part.py)
    ("noc_async_write_page(i, d, get_read_ptr(0), 0, 64);", "transfer at an offset into a tensor page"),
    ("noc_async_write_page(i, d, get_read_ptr(0), 2048, 64);", "transfer at an offset into a tensor page"),
])
def test_writes_of_part_of_a_tensor_page_are_refused(tmp_path: Path, call: str, construct: str) -> None:
    body = ("    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_wait_front(0, 1);",
            f"        {call}",
            "        noc_async_write_barrier();",
            "        cb_pop_front(0, 1);",
            "    }")
    _refused(_host(tmp_path, _PLAIN_READER, (*_WRITER, *body)), construct, "writer.cpp", 10)


def test_a_whole_page_write_with_size_zero_is_read(tmp_path: Path) -> None:
    body = ("    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_wait_front(0, 1);",
            "        noc_async_write_page(i, d, get_read_ptr(0), 0, 0);",
            "        noc_async_write_barrier();",
            "        cb_pop_front(0, 1);",
            "    }")
    writes = [op for ep in import_host(_host(tmp_path, _PLAIN_READER, (*_WRITER, *body))).programs
              for op in walk(ep.ops) if isinstance(op, WriteTiles)]
    assert [op.tiles for op in writes] == [1]


def test_a_stride_from_the_buffer_interface_is_followed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """codegen/writer_interleaved.cpp:39: ``fifo_page_size << cb_addr_shift`` (0 on a data-movement RISC,
    internal/circular_buffer_interface.h:145-149) as the stride of ``{.offset_bytes}``."""
    body = ("    const uint32_t stride = get_local_cb_interface(0).fifo_page_size << cb_addr_shift;",
            "    for (uint32_t b = 0; b < 4; ++b) {",
            "        dfb.wait_front(2);",
            "        uint32_t off = 0;",
            "        for (uint32_t j = 0; j < 2; ++j) {",
            "            noc.async_write(dfb, d, tile_bytes, {.offset_bytes = off}, {.page_id = b * 2 + j});",
            "            off += stride;",
            "        }",
            "        noc.async_write_barrier();",
            "        dfb.pop_front(2);",
            "    }")
    _proved(_host(tmp_path, _PLAIN_READER, (*_WRITER, *body)), capsys)


# ------------------------------------------------------------------ packs into the back (compute)

def _compute(tmp_path: Path, *body: str, entry_size: int = 2048) -> Any:
    """The compute engine's program of ``body`` (c_0 and c_16: 4 pages of ``entry_size`` bytes of bf16)."""
    (tmp_path / "compute.cpp").write_text("\n".join(['#include "api/compute/pack.h"', "void kernel_main() {", *body,
                                                     "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "pack", "kernel_root": str(tmp_path),
            "tensors": [],
            "buffers": [{"name": n, "index": i, "entry_size": entry_size, "entries": 4, "data_format": "bf16"}
                        for n, i in (("in", 0), ("out", 16))],
            "kernels": [{"name": "compute", "source": "compute.cpp", "processor": "compute"}],
            "work_units": [{"cores": "0,0", "kernels": ["compute"]}]}
    (tmp_path / "host.json").write_text(json.dumps(host))
    return import_host(tmp_path / "host.json").programs[0]


#: two tiles packed into c_16 in one acquire, then pushed (lines 3-8 of the kernel)
def _pack_two(first: str, second: str, push_between: bool = False) -> tuple[str, ...]:
    return ("    cb_reserve_back(16, 2);",
            "    tile_regs_acquire(); tile_regs_commit(); tile_regs_wait();",
            f"    {first}",
            "    cb_push_back(16, 1);" if push_between else "",
            f"    {second}",
            "    tile_regs_release();",
            "    cb_push_back(16, 2);" if not push_between else "    cb_push_back(16, 1);")


def test_packs_in_order_and_at_their_index_are_read(tmp_path: Path) -> None:
    for first, second in (("pack_tile(0, 16);", "pack_tile(1, 16);"),
                          ("pack_tile<true>(0, 16, 0);", "pack_tile<true>(1, 16, 1);"),
                          ("pack_tile_block(0, 16, 1);", "pack_tile(1, 16);")):
        ep = _compute(tmp_path, *_pack_two(first, second))
        assert [op.tiles for op in walk(ep.ops) if isinstance(op, PackAcc)] == [1, 1], (first, second)


@pytest.mark.parametrize(("first", "second", "between", "line"), [
    # the second pack at index 0 again: the first tile is overwritten, the second page published unpacked
    ("pack_tile<true>(0, 16, 0);", "pack_tile<true>(1, 16, 0);", False, 7),
    # an indexed pack does not move the packer's own position: the in-order pack lands on tile 0 again
    ("pack_tile<true>(0, 16, 0);", "pack_tile(1, 16);", False, 7),
    # a push resets the packer's position (llk_io_pack.h:89) while the model's second tile is still unpushed
    ("pack_tile(0, 16); pack_tile(1, 16);", "pack_tile(2, 16);", True, 7),
])
def test_packs_not_at_the_next_unfilled_tile_are_refused(tmp_path: Path, first: str, second: str, between: bool,
                                                         line: int) -> None:
    with pytest.raises(Refused, match="pack not at the buffer's next unfilled tile") as e:
        _compute(tmp_path, *_pack_two(first, second, between))
    assert e.value.loc.line == line


def test_a_pack_into_pages_of_two_tiles_is_refused(tmp_path: Path) -> None:
    """The packer steps a page per tile (llk_pack_common_api.h:117-120): into 4096-byte bf16 pages it would skip
    every other tile where the model fills them one after another."""
    with pytest.raises(Refused, match="pack into a buffer of pages of several tiles"):
        _compute(tmp_path, *_pack_two("pack_tile(0, 16);", "pack_tile(1, 16);"), entry_size=4096)


# ------------------------------------------------------------------ extract_local_address


def test_the_local_address_of_this_cores_noc_address_is_the_address(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``noc_address_backend::extract_local_address(noc_addr)`` is the low 32 bits of a NoC address
    (internal/dataflow/noc_address_backend_xy.h:61): of ``get_noc_addr(0, 0, get_write_ptr(0))`` on core (0,0), the
    write pointer itself."""
    body = ("    for (uint32_t i = 0; i < 8; ++i) {",
            "        cb_reserve_back(0, 1);",
            "        uint32_t l1 = noc_address_backend::extract_local_address(get_noc_addr(0, 0, get_write_ptr(0)));",
            "        noc_async_read_tile(i, s, l1);",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "    }")
    path = _host(tmp_path, (*_READER, *body))
    reads = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert [op.tiles for op in reads] == [1]
    _proved(path, capsys)


def test_the_local_address_of_a_tensor_page_is_refused_where_it_is_used(tmp_path: Path) -> None:
    """ttnn's sharded kernels take their shard's L1 base as ``extract_local_address(s.get_noc_addr(0))``: a tensor's
    bytes, which are a buffer's pages only as a globally allocated buffer. Held, it is nothing; a read into it is
    refused at the read, saying where the address came from."""
    body = ("    uint32_t shard = noc_address_backend::extract_local_address(s.get_noc_addr(0));",
            "    cb_reserve_back(0, 1);",
            "    noc_async_read_tile(0, s, shard);")
    e = _refused(_host(tmp_path, (*_READER, *body)), "read into L1 not a buffer's pages", "reader.cpp", 10)
    assert "the L1 address of a page of tensor src on its bank (s.get_noc_addr(0))" in e.detail


# ------------------------------------------------------------------ stores on both sides of a branch on data

#: moreh_nll_loss_step1's reader (0.81.1 reader_moreh_nll_loss_step1.cpp:58-84): each page of c_0 built by a store in
#: every path of a branch on the waited c_1 page's data, then drained by a blocking load of its last word
_ON_DATA = ("    for (uint32_t b = 0; b < 8; ++b) {",
            "        cb_reserve_back(1, 1);",
            "        noc_async_read_tile(b, s, get_write_ptr(1));",
            "        noc_async_read_barrier();",
            "        cb_push_back(1, 1);",
            "        cb_reserve_back(0, 1);",
            "        cb_wait_front(1, 1);",
            "        volatile tt_l1_ptr uint16_t* out = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(get_write_ptr(0));",
            "        volatile tt_l1_ptr int32_t* t = reinterpret_cast<volatile tt_l1_ptr int32_t*>(get_read_ptr(1));",
            "        for (uint32_t i = 0; i < 1024; i++) {",
            "            int32_t v = t[i];",
            "            if (v != 7) {",
            "                if (v < 3) { out[i] = 1; } else { out[i] = 0; }",   # line 20
            "            } else {",
            "                out[i] = 0;",
            "            }",
            "        }",
            "        (void)ckernel::load_blocking(out + 1023);",
            "        cb_push_back(0, 1);",                                      # line 26
            "        cb_pop_front(1, 1);",
            "    }")


def _on_data_host(tmp_path: Path, body: tuple[str, ...]) -> Path:
    """``_host`` with c_1 (two pages) beside c_0, for ``_ON_DATA``'s reader."""
    path = _host(tmp_path, (*_READER, *body))
    host = json.loads(path.read_text())
    host["buffers"].append({"name": "t", "index": 1, "entry_size": 2048, "entries": 2, "data_format": "bf16"})
    path.write_text(json.dumps(host))
    return path


def test_stores_on_every_side_of_a_branch_on_data_build_the_page(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _on_data_host(tmp_path, _ON_DATA)
    fills = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, FillTiles)]
    assert fills == [FillTiles(0, 1, "stores", True)]
    _proved(path, capsys)


def test_stores_on_every_side_of_a_branch_on_data_pushed_undrained_are_refuted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = tuple(x for x in _ON_DATA if "load_blocking" not in x)
    rc = main(["certify", str(_on_data_host(tmp_path, body)), "--json", "-q", "--no-cache"])
    refuted = [r for r in json.loads(capsys.readouterr().out)["results"] if r["verdict"] == "refuted"]
    assert rc == 1
    assert {(r["name"].split(":")[0], r["counterexample"]["violation"]["position"]["source"]["line"])
            for r in refuted} == {("async-read-publish", 25)}


@pytest.mark.parametrize(("inner", "construct", "line"), [
    # a side without an else: the page is not stored on the path through neither
    ("                if (v < 3) { out[i] = 1; }", "plain stores into a buffer page on some paths only", 20),
    # ... or with an else that stores nothing (the other side's stores are not this side's)
    ("                if (v < 3) { out[i] = 1; } else { v = 2; }", "plain stores into a buffer page on some paths only",
     20),
    # one side a constant, the other a copy of the waited page: not a side without effect (the copy's source)
    ("                if (v < 3) { out[i] = 1; } else { out[i] = t[i]; }", "branch on a value not known statically",
     19),
])
def test_stores_on_some_paths_of_a_branch_on_data_stay_refused(tmp_path: Path, inner: str, construct: str,
                                                               line: int) -> None:
    body = tuple(inner if "v < 3" in x else x for x in _ON_DATA)
    _refused(_on_data_host(tmp_path, body), construct, "reader.cpp", line)


# ------------------------------------------------------------------ stores through addresses not followed


@pytest.mark.parametrize(("store", "detail"), [
    # a pointer of a type the reading does not know, declared from the address (C++'s most vexing parse)
    (("    Foo<uint16_t> ptr(l1);", "    ptr[3] = 0;"), "ptr[3] = 0: ptr is not defined"),
    # a raw number as an address
    (("    *reinterpret_cast<volatile uint32_t*>(0x20000) = 1;",), "0x20000"),
    # an address loaded from L1
    (("    volatile uint32_t* where = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));",
      "    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(where[0]);", "    p[0] = 1;"),
     "p[0] = 1"),
    # a tensor's base address (a DRAM bank address) taken as a local L1 pointer: any L1 word of the core
    (("    *reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(0)) = 1;",), "get_arg_val<uint32_t>(0)"),
    (("    reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(0))[2] = 1;",), "get_arg_val<uint32_t>(0)"),
    # a 64-bit NoC address taken as a local L1 pointer
    (("    reinterpret_cast<volatile uint32_t*>(get_noc_addr(1, 0, l1))[0] = 1;",), "get_noc_addr(1, 0, l1)"),
])
def test_a_store_through_an_address_not_followed_is_refused(tmp_path: Path, store: tuple[str, ...],
                                                            detail: str) -> None:
    """It may land in any L1, a page a NoC transfer or another engine reads: never read as having no effect (the
    moreh readers' ``const CoreLocalMem<uint16_t> ptr(l1_addr); ptr[i] = 0`` masks of a page a NoC read fills were
    unseen, and their kernels read fully, while the declaration was not followed)."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", *store, "    cb_push_back(0, 1);")
    e = _refused(_host(tmp_path, (*_READER, *body)), "plain store through a pointer not followed", "reader.cpp",
                 12 + len(store) - 1)
    assert detail in e.detail


@pytest.mark.parametrize("store", [
    "    sem[4] = 0;",  # 16 bytes on: the word of semaphore 1 (get_semaphore is base + id * L1_ALIGNMENT)
    "    sem[1] = 0;",  # inside semaphore 0's 16 bytes, past its word
    "    sem[get_arg_val<uint32_t>(1)] = 0;",  # an index known only at run time
])
def test_a_store_past_a_semaphore_word_is_refused(tmp_path: Path, store: str) -> None:
    """``get_semaphore(id)`` is ``sem_l1_base + id * L1_ALIGNMENT`` (ttnn 0.81.1 api/dataflow/dataflow_api.h:1689-1691),
    so ``sem[4] = 0`` through semaphore 0's pointer writes semaphore 1's word: it was dropped (the subscript form only;
    ``*(sem + 4) = 0`` was refused), and a sender that clobbered the flag it multicasts was proved."""
    body = ("    volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));", store,
            *GOOD_READERS["advanced"])
    path = _host(tmp_path, (*_READER, *body))
    host = json.loads(path.read_text())
    host["semaphores"] = [{"name": "a", "initial_value": 0}, {"name": "b", "initial_value": 0}]
    path.write_text(json.dumps(host))
    e = _refused(path, "plain store through a pointer not followed", "reader.cpp", 9)
    assert "an address past a semaphore" in e.detail


def test_a_store_into_a_semaphore_word_by_subscript_is_its_set(tmp_path: Path) -> None:
    """``sem[0] = v`` is ``*sem = v``: the semaphore's local set, read as ``noc_semaphore_set``."""
    body = ("    volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(1));", "    sem[0] = 3;",
            *GOOD_READERS["advanced"])
    path = _host(tmp_path, (*_READER, *body))
    host = json.loads(path.read_text())
    host["semaphores"] = [{"name": "a", "initial_value": 0}, {"name": "b", "initial_value": 0}]
    path.write_text(json.dumps(host))
    sets = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, SemSet)]
    assert [(op.sem, op.value) for op in sets] == [(1, 3)]


def test_a_store_through_a_declared_core_local_mem_is_seen(tmp_path: Path) -> None:
    """moreh_dot's mask (reader_moreh_dot.cpp:21-29) into the page a NoC read filled, after its barrier: a patch of
    the read's tile (``FillTiles`` of no tile, tests/test_frontend_ttmetal_patch.py), undrained here."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", "    const CoreLocalMem<uint16_t> ptr(l1);", "    ptr[5] = 0;",
            "    cb_push_back(0, 1);")
    ops = [op for ep in import_host(_host(tmp_path, (*_READER, *body))).programs for op in walk(ep.ops)]
    assert [op for op in ops if isinstance(op, FillTiles)] == [FillTiles(0, 0, PATCH, drain=False)]


def test_stores_into_local_arrays_not_followed_are_no_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A local array whose address was taken, or stored at an index not known, an array of pointers, of two
    dimensions, a ``std::array`` (ccl_wait_completion.cpp:17-24): the kernel's own words."""
    body = ("    uint32_t idx[4];", "    uint32_t* q = idx;", "    q[1] = 3;",
            "    idx[get_arg_val<uint32_t>(1)] = 2;", "    idx[0] = 1;",
            "    volatile uint32_t* ptrs[4];", "    ptrs[get_arg_val<uint32_t>(1)] = "
            "reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(1));",
            "    uint32_t grid[2][3];", "    grid[get_arg_val<uint32_t>(1)][1] = 4;",
            "    std::array<volatile uint32_t*, 3> sems;", "    sems[0] = nullptr;",
            *GOOD_READERS["advanced"])
    path = _host(tmp_path, (*_READER, *body))
    reads = [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert [op.tiles for op in reads] == [1]
    _proved(path, capsys)


def test_a_local_array_cast_to_an_address_is_no_longer_its_own_words(tmp_path: Path) -> None:
    """An array element not followed, or a local array's words taken as a number and cast to a pointer, may point
    anywhere: a store through it is refused."""
    body = ("    uint32_t addrs[4];", "    addrs[get_arg_val<uint32_t>(1)] = 2;",
            "    *reinterpret_cast<volatile uint32_t*>(addrs[0]) = 1;")
    _refused(_host(tmp_path, (*_READER, *body)), "plain store through a pointer not followed", "reader.cpp", 10)


@pytest.mark.parametrize(("store", "construct"), [
    # a field through a pointer the reading does not follow
    (("    volatile Hdr* h = reinterpret_cast<volatile Hdr*>(get_arg_val<uint32_t>(1));", "    h->b = 1;"),
     "plain store through a pointer not followed"),
    # a struct laid over a buffer's page: its layout is not followed, so neither is the store
    (("    volatile Hdr* h = reinterpret_cast<volatile Hdr*>(get_write_ptr(0));", "    h->b = 1;"),
     "plain store into a struct field in L1"),
    # a store to a name the reading does not hold (a qualified name)
    (("    ::scratch_word = 1;",), "store into a place not followed"),
])
def test_a_store_the_reading_cannot_place_is_refused_not_dropped(tmp_path: Path, store: tuple[str, ...],
                                                                 construct: str) -> None:
    """Three stores that fell through every case and were dropped (the kernel read as if it never stored): a field
    through a pointer not followed, a field of a struct laid over a buffer's page, a qualified name. Each may change a
    byte a NoC transfer or another engine reads, so each is refused at its line."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", *store, "    cb_push_back(0, 1);")
    path = _host(tmp_path, (*_READER, *body))
    reader = tmp_path / "reader.cpp"  # the struct and the word at file scope, one line above the kernel
    reader.write_text("struct Hdr { uint32_t a; uint32_t b; }; uint32_t scratch_word;\n" + reader.read_text())
    _refused(path, construct, "reader.cpp", 13 + len(store) - 1)


def test_a_parenthesised_store_is_the_store_it_wraps(tmp_path: Path) -> None:
    """``(*p) = v`` is ``*p = v``: into the tile a NoC read filled, seen as that store is (it was dropped)."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", "    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);",
            "    (*p) = 0;", "    cb_push_back(0, 1);")
    assert _patches(_host(tmp_path, (*_READER, *body))) == [FillTiles(0, 0, PATCH, drain=False)]


def _patches(path: Path) -> list[FillTiles]:
    """The ``FillTiles`` of a host's programs: a store into the tile a landed NoC read filled is a patch of it
    (``FillTiles`` of no tile, tests/test_frontend_ttmetal_patch.py), never dropped."""
    return [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, FillTiles)]


def test_a_field_of_the_kernels_own_variable_is_its_own_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``union { float f; uint32_t u; } scaler; scaler.f = 1.0f;`` (the moreh readers' scaler, reader_moreh_mean_nc.cpp:
    26) and a field of an element of a local array of structs change the kernel's own stack words: no op, the kernel
    proved; the same field store through a reference bound to a dereferenced address is refused."""
    body = ("    union { float f; uint32_t u; } scaler;", "    scaler.f = 1.0f;",
            "    Hdr levels[2];", "    levels[get_arg_val<uint32_t>(1) - 1].b = 3;", *GOOD_READERS["advanced"])
    path = _host(tmp_path, (*_READER, *body))
    reader = tmp_path / "reader.cpp"
    reader.write_text("struct Hdr { uint32_t a; uint32_t b; };\n" + reader.read_text())
    _proved(path, capsys)
    body = ("    volatile Hdr& h = *reinterpret_cast<volatile Hdr*>(get_arg_val<uint32_t>(1));", "    h.b = 1;")
    path = _host(tmp_path, (*_READER, *body))
    reader.write_text("struct Hdr { uint32_t a; uint32_t b; };\n" + reader.read_text())
    _refused(path, "plain store through a pointer not followed", "reader.cpp", 10)


@pytest.mark.parametrize(("store", "construct", "line"), [
    # an increment of a word of a page a NoC read fills: the same store as ptr[5] = ptr[5] + 1 (a patch of the tile)
    (("    volatile uint32_t* ptr = reinterpret_cast<volatile uint32_t*>(l1);", "    ptr[5]++;"),
     PATCH, 13),
    (("    volatile uint32_t* ptr = reinterpret_cast<volatile uint32_t*>(l1);", "    ++(*ptr);"),
     PATCH, 13),
    # through a pointer the reading does not follow
    (("    volatile uint32_t* q = reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(1));", "    q[0]--;"),
     "plain store through a pointer not followed", 13),
])
def test_an_increment_through_a_pointer_is_a_store(tmp_path: Path, store: tuple[str, ...], construct: str,
                                                   line: int) -> None:
    """``p[i]++`` / ``++(*p)`` store as ``p[i] = p[i] + 1`` does: into a buffer's page, or refused where the place is
    not followed. They were dropped (the kernel read as if nothing changed the page it then pushed)."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", *store, "    cb_push_back(0, 1);")
    if construct == PATCH:
        assert _patches(_host(tmp_path, (*_READER, *body))) == [FillTiles(0, 0, PATCH, drain=False)]
    else:
        _refused(_host(tmp_path, (*_READER, *body)), construct, "reader.cpp", line)


@pytest.mark.parametrize(("store", "construct"), [
    # an increment is a store as ``+= 1`` is: into the tile the NoC read filled, a patch of it
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    p[0]++;"), PATCH),
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    ++p[1];"), PATCH),
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    (*p)--;"), PATCH),
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    uint32_t was = p[0]++;"), PATCH),
    # ... and through a pointer not followed
    (("    volatile Hdr* h = reinterpret_cast<volatile Hdr*>(get_arg_val<uint32_t>(1));", "    h->b++;"),
     "plain store through a pointer not followed"),
    # a reference bound to an L1 word, then stored through (it was read as a new value of the reference alone)
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    volatile uint32_t& w = p[0];",
      "    w = 1;"), "store through a reference to a place not followed"),
    (("    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);", "    volatile uint32_t& w = p[0];",
      "    w += 1;"), "store through a reference to a place not followed"),
    # a placement new constructs at the address
    (("    new (reinterpret_cast<void*>(l1)) Hdr{1, 2};",), "new expression"),
    # an instruction that stores
    (('    asm volatile("sw x0, 0(%0)" :: "r"(l1));',), "inline assembly"),
])
def test_stores_once_dropped_by_other_forms_are_refused(tmp_path: Path, store: tuple[str, ...],
                                                        construct: str) -> None:
    """Stores into L1 that were read as having no effect: an increment (``p[0]++``, ``(*p)--``, ``h->b++``: the
    reading changed only a variable named by the place), a store through a reference bound to an element (``T& w =
    p[0]; w = 1``), a placement new and inline assembly that is not a fence or nop. Each may change the page the NoC
    read fills before it is pushed, so each is refused at its line."""
    body = ("    cb_reserve_back(0, 1);", "    uint32_t l1 = get_write_ptr(0);", "    noc_async_read_tile(0, s, l1);",
            "    noc_async_read_barrier();", *store, "    cb_push_back(0, 1);")
    path = _host(tmp_path, (*_READER, *body))
    reader = tmp_path / "reader.cpp"  # the struct at file scope, one line above the kernel
    reader.write_text("struct Hdr { uint32_t a; uint32_t b; };\n" + reader.read_text())
    if construct == PATCH:
        assert _patches(path) == [FillTiles(0, 0, PATCH, drain=False)]
    else:
        _refused(path, construct, "reader.cpp", 13 + len(store) - 1)


def test_fences_and_increments_of_own_words_stay_no_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fence, a nop or an empty compiler barrier in inline assembly (data_movement/common/kernels/common.hpp:164)
    stores nothing; an increment of a local array's element or of a field of the kernel's own struct is its own
    words: the reader proves."""
    body = ('    asm volatile("fence" ::: "memory");', '    __asm__ __volatile__("nop");',
            '    asm volatile("" ::: "memory");', "    uint32_t idx[4];", "    idx[get_arg_val<uint32_t>(1)] = 2;",
            "    idx[1]++;", "    Hdr h;", "    h.b++;", *GOOD_READERS["advanced"])
    path = _host(tmp_path, (*_READER, *body))
    reader = tmp_path / "reader.cpp"
    reader.write_text("struct Hdr { uint32_t a; uint32_t b; };\n" + reader.read_text())
    _proved(path, capsys)
