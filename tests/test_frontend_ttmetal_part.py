"""The tt-metal front end reads transfers of part of a page (docs/semantics.md, "Part-page transfers") into
``ReadTiles`` / ``WriteTiles`` with a ``Part``: an offset into a tensor page (``get_noc_addr(page, s, offset)``,
``TensorAccessor::get_noc_addr(page_id, offset)``: tensor_accessor.h:155; Metal 2.0 ``{.page_id, .offset_bytes}``;
``noc_async_write_page(page, s, l1, size, offset)``: dataflow_api.h:1416-1422), a size that is not a whole number of
pages, and an L1 address inside the next unfilled (unread) tile. Refused by name, at the kernel's line: an offset that
is not a number, a whole page from an offset (it reaches into the next page), an L1 address outside the model's tile.
Small C++ snippets written here; each correct form proved end to end with its host."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_l1addr import _PLAIN_READER, _PLAIN_WRITER, _READER, _WRITER, _host, _proved, _refused

from verispatial.frontends.ttmetal import import_host
from verispatial.ir import Part, ReadTiles, WriteTiles
from verispatial.ir.program import walk

#: a reader of one 64-byte row stick (row 3) of each of the 8 pages into row 5 of each buffer tile
STICK_READER = (*_READER,
                "    for (uint32_t i = 0; i < 8; ++i) {",
                "        cb_reserve_back(0, 1);",
                "        uint64_t a = get_noc_addr(i, s, 3 * 64);",
                "        noc_async_read(a, get_write_ptr(0) + 5 * 64, 64);",
                "        noc_async_read_barrier();",
                "        cb_push_back(0, 1);",
                "    }")


def _ops(path: Path, cls: type) -> list[object]:
    p = import_host(path)
    return [o for ep in p.programs for o in walk(ep.ops) if isinstance(o, cls)]


def test_a_row_stick_read_at_an_offset_into_the_page_is_a_part(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _host(tmp_path, STICK_READER)
    (read,) = _ops(path, ReadTiles)
    assert isinstance(read, ReadTiles)
    assert (read.tiles, read.part) == (1, Part(192, 64, 320))
    _proved(path, capsys)


def test_the_accessor_method_and_metal2_offset_bytes_say_the_same(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    method = (*_READER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_reserve_back(0, 1);",
              "        noc_async_read(s.get_noc_addr(i, 128), get_write_ptr(0), 64);",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    metal2 = (*_READER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        dfb.reserve_back(1);",
              "        noc.async_read(s, dfb, 64, {.page_id = i, .offset_bytes = 128}, {});",
              "        noc.async_read_barrier();",
              "        dfb.push_back(1);",
              "    }")
    for k, reader in enumerate((method, metal2)):
        d = tmp_path / str(k)
        d.mkdir()
        (read,) = _ops(_host(d, reader), ReadTiles)
        assert isinstance(read, ReadTiles)
        assert read.part == Part(128, 64, 0), k
        _proved(_host(d, reader), capsys)


def test_a_part_write_of_each_page_leaves_the_output_unwritten(tmp_path: Path) -> None:
    """``noc_async_write_page(i, d, l1, 64, 0)``: one stick of each output page — a ``WriteTiles`` with a part, and
    the output tiles are not covered (the interpreter: ``output-unwritten``; never proved)."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.ir import rules as R
    from verispatial.petri.interp import simulate

    writer = (*_WRITER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_wait_front(0, 1);",
              "        noc_async_write_page(i, d, get_read_ptr(0), 64, 0);",
              "        noc_async_write_barrier();",
              "        cb_pop_front(0, 1);",
              "    }")
    path = _host(tmp_path, _PLAIN_READER, writer)
    (write,) = _ops(path, WriteTiles)
    assert isinstance(write, WriteTiles)
    assert write.part == Part(0, 64, 0)
    p = import_host(path)
    assert R.OUTPUT_UNWRITTEN in simulate(p).rules()
    report = certify(p, cache=False)
    verdicts = {r.name: r.verdict for r in report.results}
    assert verdicts[f"{R.OUTPUT_UNWRITTEN}:dst"] != Verdict.PROVED


def test_an_offset_from_a_runtime_arg_is_refused_by_name(tmp_path: Path) -> None:
    reader = (*_READER,
              "    uint32_t off = get_arg_val<uint32_t>(1);",
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_reserve_back(0, 1);",
              "        noc_async_read(get_noc_addr(i, s, off), get_write_ptr(0), 64);",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    _refused(_host(tmp_path, reader), "tensor page offset not a number", "reader.cpp", 11)


def test_a_whole_page_from_an_offset_is_refused(tmp_path: Path) -> None:
    reader = (*_READER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_reserve_back(0, 1);",
              "        noc_async_read_tile(i, s, get_write_ptr(0), 64);",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    _refused(_host(tmp_path, reader), "transfer at an offset into a tensor page", "reader.cpp", 10)


def test_a_stick_landing_past_its_tile_is_refused(tmp_path: Path) -> None:
    """The stick's 64 bytes at 2000 bytes past the write pointer cross the end of the tile the model gives it."""
    reader = (*_READER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_reserve_back(0, 1);",
              "        noc_async_read(get_noc_addr(i, s, 0), get_write_ptr(0) + 2000, 64);",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    _refused(_host(tmp_path, reader), "read into L1 not inside the buffer's next unfilled tile", "reader.cpp", 10)


def test_whole_pages_read_as_before(tmp_path: Path) -> None:
    """A transfer at offset 0 of whole pages keeps no part (documents and digests of whole-tile programs unchanged)."""
    path = _host(tmp_path, _PLAIN_READER, _PLAIN_WRITER)
    assert all(o.part is None for o in _ops(path, ReadTiles) + _ops(path, WriteTiles))  # type: ignore[attr-defined]


def test_two_sticks_packed_into_one_tile_are_refused_at_the_second(tmp_path: Path) -> None:
    """Each part takes a tile of its own (docs/semantics.md, "Part-page transfers"): the second stick at ``l1 + 64``
    lies before the next unfilled tile, refused at its line, not read as a second tile."""
    reader = (*_READER,
              "    for (uint32_t i = 0; i < 4; ++i) {",
              "        cb_reserve_back(0, 1);",
              "        uint32_t l1 = get_write_ptr(0);",
              "        noc_async_read(get_noc_addr(2 * i, s, 0), l1, 64);",
              "        noc_async_read(get_noc_addr(2 * i + 1, s, 0), l1 + 64, 64);",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    _refused(_host(tmp_path, reader), "read into L1 not inside the buffer's next unfilled tile", "reader.cpp", 12)


def test_a_row_read_in_chunks_at_a_growing_offset_is_read(tmp_path: Path) -> None:
    """``{.page_id = i, .offset_bytes = c * 512}`` in a loop over the chunks (typecast's ``reader_typecast_rm_chunked``
    form): a part whose offset grows with the chunk loop, each chunk into a tile of its own."""
    reader = (*_READER,
              "    for (uint32_t i = 0; i < 2; ++i) {",
              "        for (uint32_t c = 0; c < 4; ++c) {",
              "            dfb.reserve_back(1);",
              "            noc.async_read(s, dfb, 512, {.page_id = i, .offset_bytes = c * 512}, {});",
              "            noc.async_read_barrier();",
              "            dfb.push_back(1);",
              "        }",
              "    }")
    (read,) = _ops(_host(tmp_path, reader), ReadTiles)
    assert isinstance(read, ReadTiles)
    assert read.part is not None
    assert (read.part.offset, read.part.size, read.part.at) == (0, 512, 0)
    assert [(t.coef,) for t in read.part.terms] == [(512,)]


@pytest.mark.parametrize(("call", "construct", "said"), [
    # the accessor's offset is a uint32_t (tensor_accessor.h:155): -64 wraps far past the page, not 64 B before it
    ("noc_async_read(get_noc_addr(i, s, -64), get_write_ptr(0), 64);", "transfer at an offset into a tensor page",
     "offset -64 B, before the page's start"),
    ("noc_async_read(get_noc_addr(i, s, 64), get_write_ptr(0), 0);", "transfer of no bytes", "size 0"),
])
def test_a_negative_offset_or_an_empty_part_is_refused_at_its_line(tmp_path: Path, call: str, construct: str,
                                                                    said: str) -> None:
    """Both were read into a ``Part`` that ``validate`` then refused with no kernel line (exit 2 naming the IR's
    ``part``); the reading refuses them by name at the call."""
    reader = (*_READER,
              "    for (uint32_t i = 0; i < 8; ++i) {",
              "        cb_reserve_back(0, 1);",
              f"        {call}",
              "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);",
              "    }")
    e = _refused(_host(tmp_path, reader), construct, "reader.cpp", 10)
    assert said in str(e)
