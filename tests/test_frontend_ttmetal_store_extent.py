"""Plain stores into a page being built are held to the reserved page, byte for byte: a store of a ``w``-byte element
at byte offset ``off`` past the page's start must have ``[off, off + w)`` inside ``[0, page_size)`` for every loop
index, whichever way the kernel spells the address (a subscript ``p[k]``, ``*(p + k)``, a pointer advanced in a loop,
a wider or narrower element type, the store side of a copy). ``get_write_ptr`` is valid only for the pages requested by
the ``cb_reserve_back`` before it (ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:309-313``); a store
past them lands in the ring's other slots (a page another engine may be reading) or past the ring. Until 2026-12-07
only the pointer of a subscript was checked, so an off-by-one fill loop ``i <= 512`` was read as a fill of the page
and proved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_l1addr import _proved
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import FillTiles
from verispatial.ir.program import walk

_HEAD = ("#include <stdint.h>", '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {")

#: the writer of c_0's four pages (lines 4-11)
_WRITER = ("    uint32_t out_addr = get_arg_val<uint32_t>(0);",
           "    const InterleavedAddrGenFast<true> so = {.bank_base_address = out_addr, .page_size = 2048, "
           ".data_format = DataFormat::Float16_b};",
           "    for (uint32_t t = 0; t < 4; ++t) {",
           "        cb_wait_front(0, 1);",
           "        noc_async_write_tile(t, so, get_read_ptr(0));",
           "        noc_async_write_barrier();",
           "        cb_pop_front(0, 1);",
           "    }")


def _reader(*fill: str) -> tuple[str, ...]:
    """Four 2048-B pages of c_0 built by ``fill`` (from line 7), ``p`` the write pointer as ``uint32_t*``."""
    return ("    for (uint32_t t = 0; t < 4; ++t) {",
            "        cb_reserve_back(0, 1);",
            "        volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));",
            *fill,
            "        cb_push_back(0, 1);",
            "    }")


def _host(tmp_path: Path, reader: tuple[str, ...], writer: tuple[str, ...] = _WRITER) -> Path:
    """Core (0,0): ``reader`` builds c_0 (2 entries of 2048 B), ``writer`` writes it to ``out``; ``a`` is an input
    the reader may read into c_1 (2 entries)."""
    (tmp_path / "reader.cpp").write_text("\n".join([*_HEAD, *reader, "}"]))
    (tmp_path / "writer.cpp").write_text("\n".join([*_HEAD, *writer, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "store_extent", "kernel_root": str(tmp_path),
            "tensors": [{"name": "a", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                        {"name": "out", "shape": [32, 128], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "Float16_b"},
                        {"name": "c_1", "index": 1, "entry_size": 2048, "entries": 2, "data_format": "Float16_b"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "noc": 0,
                         "runtime_args": ["a_addr"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer", "noc": 1,
                         "runtime_args": ["out_addr"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "writer"],
                            "runtime_args": {"reader": {"a_addr": {"tensor": "a"}},
                                             "writer": {"out_addr": {"tensor": "out"}}}}]}
    path = tmp_path / "host.yaml"  # JSON is YAML; certify tells a host description by its suffix
    path.write_text(json.dumps(host))
    return path


GOOD_FILLS = {
    # every word of the page, the loop's last store drained
    "loop": ("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
             "        ckernel::load_blocking(p + 511);"),
    # the page's last word exactly
    "last_word": ("        p[511] = t;", "        ckernel::load_blocking(p + 511);"),
    # the last word through pointer arithmetic, and a pointer advanced a word per store
    "ptr_arith": ("        *(p + 511) = t;", "        ckernel::load_blocking(p + 511);"),
    "advanced": ("        volatile tt_l1_ptr uint32_t* q = p;",
                 "        for (uint32_t i = 0; i < 512; ++i) { *q = t; q++; }",
                 "        ckernel::load_blocking(p + 511);"),
    # the drain's address as &p[k]: the same word as p + k (the report's load_amp)
    "address_of": ("        p[0] = t;", "        ckernel::load_blocking(&p[0]);"),
    "address_of_last": ("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
                        "        ckernel::load_blocking(&p[511]);"),
    # narrower and wider elements reaching the page's last byte (the drain loads the last store's word)
    "bytes": ("        volatile tt_l1_ptr uint8_t* b = reinterpret_cast<volatile tt_l1_ptr uint8_t*>(p);",
              "        b[2047] = 1;", "        p[0] = t;", "        ckernel::load_blocking(p);"),
    "doubles": ("        volatile tt_l1_ptr uint64_t* d = reinterpret_cast<volatile tt_l1_ptr uint64_t*>(p);",
                "        d[255] = 1;", "        p[0] = t;", "        ckernel::load_blocking(p);"),
}


@pytest.mark.parametrize("form", sorted(GOOD_FILLS))
def test_stores_inside_the_reserved_page_are_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    form: str) -> None:
    _proved(_host(tmp_path, _reader(*GOOD_FILLS[form])), capsys)


#: stores reaching past the reserved page; the line of the store refused
BAD_FILLS = {
    # the report's inputs: an off-by-one fill loop, one word past, one word before, a whole page too many
    "off_by_one": (("        for (uint32_t i = 0; i <= 512; ++i) { p[i] = t; }",
                    "        ckernel::load_blocking(p + 512);"), 7),
    "one_past": (("        p[0] = t;", "        p[512] = t;", "        ckernel::load_blocking(p + 512);"), 8),
    "before": (("        p[0] = t;", "        p[-1] = t;", "        ckernel::load_blocking(p - 1);"), 8),
    "page_too_many": (("        for (uint32_t i = 0; i < 1024; ++i) { p[i] = t; }",
                       "        ckernel::load_blocking(p + 1023);"), 7),
    # the same through the other spellings of the address
    "ptr_arith": (("        p[0] = t;", "        *(p + 512) = t;", "        ckernel::load_blocking(p + 512);"), 8),
    "advanced": (("        volatile tt_l1_ptr uint32_t* q = p;",
                  "        for (uint32_t i = 0; i < 513; ++i) { *q = t; q++; }",
                  "        ckernel::load_blocking(p + 512);"), 8),
    "bytes": (("        volatile tt_l1_ptr uint8_t* b = reinterpret_cast<volatile tt_l1_ptr uint8_t*>(p);",
               "        b[2048] = 1;", "        ckernel::load_blocking(p + 512);"), 8),
    # an 8-B store starting in the page's last word: its last 4 bytes are past the page
    "straddle": (("        volatile tt_l1_ptr uint64_t* d = reinterpret_cast<volatile tt_l1_ptr uint64_t*>(p + 511);",
                  "        d[0] = 1;", "        ckernel::load_blocking(p + 511);"), 8),
}


def _refused_past_the_page(tmp_path: Path, fill: tuple[str, ...], line: int) -> None:
    with pytest.raises(Refused, match="plain store not into the buffer's next unfilled page") as e:
        import_host(_host(tmp_path, _reader(*fill)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", line), e.value


@pytest.mark.parametrize("form", sorted(BAD_FILLS))
def test_stores_past_the_reserved_page_are_refused_at_their_line(tmp_path: Path, form: str) -> None:
    _refused_past_the_page(tmp_path, *BAD_FILLS[form])


_COPY_READER = ("    uint32_t a_addr = get_arg_val<uint32_t>(0);",
                "    const InterleavedAddrGenFast<true> sa = {.bank_base_address = a_addr, .page_size = 2048, "
                ".data_format = DataFormat::Float16_b};",
                "    for (uint32_t t = 0; t < 4; ++t) {",
                "        cb_reserve_back(1, 1);",
                "        noc_async_read_tile(t, sa, get_write_ptr(1));",
                "        noc_async_read_barrier();",
                "        cb_push_back(1, 1);",
                "    }")


def _copy_writer(store: str, drained: str) -> tuple[str, ...]:
    """Copies each c_1 front page into c_0's back with ``store`` (line 11), then writes c_0's page to ``out``."""
    return ("    uint32_t out_addr = get_arg_val<uint32_t>(0);",
            "    const InterleavedAddrGenFast<true> so = {.bank_base_address = out_addr, .page_size = 2048, "
            ".data_format = DataFormat::Float16_b};",
            "    for (uint32_t t = 0; t < 4; ++t) {",
            "        cb_wait_front(1, 1);",
            "        cb_reserve_back(0, 1);",
            "        volatile tt_l1_ptr uint32_t* src = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(1));",
            "        volatile tt_l1_ptr uint32_t* dst = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));",
            f"        for (uint32_t i = 0; i < 512; ++i) {{ {store} }}",
            f"        ckernel::load_blocking(dst + {drained});",
            "        cb_push_back(0, 1);",
            "        cb_pop_front(1, 1);",
            "        cb_wait_front(0, 1);",
            "        noc_async_write_tile(t, so, get_read_ptr(0));",
            "        noc_async_write_barrier();",
            "        cb_pop_front(0, 1);",
            "    }")


def test_a_copy_inside_the_page_is_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _proved(_host(tmp_path, _COPY_READER, _copy_writer("dst[i] = src[i];", "511")), capsys)


def test_a_copy_whose_stores_leave_the_page_is_refused(tmp_path: Path) -> None:
    """The report's ``copy_over``: shifted by one word, the last store is word 512, one past c_0's page."""
    with pytest.raises(Refused, match="plain store not into the buffer's next unfilled page") as e:
        import_host(_host(tmp_path, _COPY_READER, _copy_writer("dst[i + 1] = src[i];", "512")))
    assert (e.value.loc.file, e.value.loc.line) == ("writer.cpp", 11), e.value


def test_the_refusal_says_the_range_of_starts_the_page_allows(tmp_path: Path) -> None:
    """A 4-B store into a 2048-B page may start at bytes 0 to 2044 past the write pointer: said as that range (it
    read 'at the 2045 B from 0 B past it', a count of valid starts nobody could parse)."""
    fill, _ = BAD_FILLS["off_by_one"]
    with pytest.raises(Refused, match="plain store not into the buffer's next unfilled page") as e:
        import_host(_host(tmp_path, _reader(*fill)))
    assert "the model's transfer is at a start in [0 B, 2044 B] past it" in str(e.value), e.value


#: stores through an array whose elements point into L1, or through a pointer or reference to an array: a store past
#: the array's own dimensions goes through a pointer, never into the kernel's own words (until 2026-12-07 a name
#: declared with ``[...]`` made every store through it one into the kernel's stack, and each of these proved)
THROUGH_ARRAYS = {
    "array_of_pointers": ("        volatile tt_l1_ptr uint32_t* ptrs[1] = {p};", "        ptrs[0][512] = t;"),
    "deref_of_element": ("        volatile tt_l1_ptr uint32_t* ptrs[2] = {p, p + 512};", "        *ptrs[1] = t;"),
    "pointer_to_array": ("        volatile tt_l1_ptr uint32_t (*rows)[16] = "
                         "reinterpret_cast<volatile tt_l1_ptr uint32_t (*)[16]>(p);", "        rows[32][0] = t;"),
    "reference_to_array": ("        volatile tt_l1_ptr uint32_t (&arr)[512] = "
                           "*reinterpret_cast<volatile tt_l1_ptr uint32_t (*)[512]>(p);", "        arr[512] = t;"),
}


@pytest.mark.parametrize("form", sorted(THROUGH_ARRAYS))
def test_a_store_through_an_array_element_pointer_is_not_the_kernels_own(tmp_path: Path, form: str) -> None:
    decl, store = THROUGH_ARRAYS[form]
    fill = ("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }", decl, store,
            "        ckernel::load_blocking(p + 511);")
    with pytest.raises(Refused, match="plain store") as e:
        import_host(_host(tmp_path, _reader(*fill)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 9), e.value


@pytest.mark.parametrize("decl", ["        uint32_t buf[4][4];", "        std::array<std::array<uint32_t, 4>, 4> buf;"])
def test_a_store_into_the_kernels_own_array_of_two_dimensions_is_read(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     decl: str) -> None:
    """The guard: an element of the kernel's own two-dimensional array is its stack word, stored and read back."""
    fill = (decl, "        buf[1][2] = t;", "        for (uint32_t i = 0; i < 512; ++i) { p[i] = buf[1][2]; }",
            "        ckernel::load_blocking(p + 511);")
    _proved(_host(tmp_path, _reader(*fill)), capsys)


def _two_pages_reader(second_from: int) -> tuple[str, ...]:
    """Two pages reserved at once, built and pushed one at a time through the pointer taken before the first push
    (the documented "old pointer plus a page" form); the second page's stores from word ``second_from``."""
    return ("    for (uint32_t t = 0; t < 2; ++t) {",
            "        cb_reserve_back(0, 2);",
            "        volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));",
            "        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
            "        ckernel::load_blocking(p + 511);",
            "        cb_push_back(0, 1);",
            f"        for (uint32_t i = {second_from}; i < 1024; ++i) {{ p[i] = t; }}",
            "        ckernel::load_blocking(p + 1023);",
            "        cb_push_back(0, 1);",
            "    }")


def _ring_of(path: Path, entries: int) -> Path:
    d = json.loads(path.read_text())
    d["buffers"][0]["entries"] = entries
    path.write_text(json.dumps(d))
    return path


def test_a_store_in_the_second_reserved_page_ends_inside_a_ring_of_four(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The ring check counts the store's own 4 bytes: the last word of the second page ends at byte 4096 of a
    8192-B ring, wherever the pointer was taken (it was refused as reaching "byte 4092 from page 0" past the ring's
    end, adding the count of the page's starts instead of the store's width)."""
    _proved(_ring_of(_host(tmp_path, _two_pages_reader(512)), 4), capsys)


def test_a_store_into_the_page_already_pushed_stays_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="L1 pointer taken before a push used after it") as e:
        import_host(_ring_of(_host(tmp_path, _two_pages_reader(511)), 2))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 10), e.value


# ------------------------------------------------------------------ indices bounded by their loops

#: a 16-bit view of the page (1,024 elements), declared at line 7
_HALF = "        volatile tt_l1_ptr uint16_t* q = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(p);"


def _indexed(*body: str, half: bool = False) -> tuple[str, ...]:
    """``body`` (the stores, from line 7, or 8 after the 16-bit view ``q``), then a store to word 0 and its blocking
    load, which drains the page whatever word ``body`` stored last."""
    return (*((_HALF,) if half else ()), *body, "        p[0] = t;", "        ckernel::load_blocking(p);")


#: moreh's fills (ttnn 0.81.1 ``ttnn/kernel/dataflow/moreh_common.hpp:56-88, 300-330``) and the arithmetic an index
#: is read through, each storing inside the 2,048-B page for every value its index takes
GOOD_INDICES = {
    # ``for (int j = 0; j < num_of_elems; j++) ptr[j] = ...``: a signed index converts by its loop's range
    "signed_index": _indexed("        for (int j = 0; j < 512; j++) { p[j] = t; }"),
    # a tile's face rows: ``ptr[h * 16 + w]`` over h < 32, w < 16 of 4-B words
    "face_rows": _indexed("        for (int h = 0; h < 32; h++) { for (int w = 0; w < 16; w++) { p[h * 16 + w] = t; } }"),
    # the four faces of a 16-bit tile: ``ptr[face * 256 + h * 16 + w]``
    "faces": _indexed("        for (uint32_t f = 0; f < 4; f++) { for (int h = 0; h < 16; h++) {",
                      "            for (int w = 0; w < 16; w++) { q[f * 256 + h * 16 + w] = 1; } } }", half=True),
    # the odd 16-bit halves of the words: ``ptr[i * 2 + 1]``
    "odd_halves": _indexed("        for (int i = 0; i < 512; i++) { q[i * 2 + 1] = 1; }", half=True),
    # generate_bcast_scaler's first row of each face: ``ptr[k * 256 + j]``, k < 4, j < 16
    "face_first_rows": _indexed("        for (int k = 0; k < 4; k++) { for (int j = 0; j < 16; j++) { q[k * 256 + j] = 1; } }",
                                half=True),
    # a loop past the unrolled length whose index is divided, reduced, masked or shifted
    "divided": _indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i / 2] = t; }"),
    "modulo": _indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i % 512] = t; }"),
    "masked": _indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i & 511] = t; }"),
    "shifted": _indexed("        for (uint32_t i = 0; i < 1018; i++) { p[(i >> 1) + 3] = t; }",
                        "        for (uint32_t i = 0; i < 300; i++) { q[i << 1] = 1; }", half=True),
    "row_of_divided": _indexed("        for (uint32_t i = 0; i < 512; i++) { p[(i / 32) * 32 + i % 32] = t; }"),
    "reversed": _indexed("        for (uint32_t i = 0; i < 1024; i++) { p[511 - i / 2] = t; }"),
    # a bounded number plus another loop's index, and one kept in a variable of a type that holds its bounds
    "plus_index": _indexed("        for (uint32_t j = 0; j < 2; j++) { for (uint32_t i = 0; i < 512; i++) "
                           "{ p[j * 256 + i / 2] = t; } }"),
    "narrow_holds": _indexed("        for (uint32_t i = 0; i < 1024; i++) { uint8_t k = i / 4; p[k + 256] = t; }"),
}


@pytest.mark.parametrize("form", sorted(GOOD_INDICES))
def test_stores_at_an_index_bounded_by_its_loops_are_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            form: str) -> None:
    _proved(_host(tmp_path, _reader(*GOOD_INDICES[form])), capsys)


#: the off-by-one of each: one value of the index reaches past the page; the line of the store refused
BAD_INDICES = {
    "signed_index": (_indexed("        for (int j = 0; j <= 512; j++) { p[j] = t; }"), 7),
    "face_rows": (_indexed("        for (int h = 0; h <= 32; h++) { for (int w = 0; w < 16; w++) { p[h * 16 + w] = t; } }"),
                  7),
    "faces": (_indexed("        for (uint32_t f = 0; f <= 4; f++) { for (int h = 0; h < 16; h++) {",
                       "            for (int w = 0; w < 16; w++) { q[f * 256 + h * 16 + w] = 1; } } }", half=True), 9),
    "odd_halves": (_indexed("        for (int i = 0; i <= 512; i++) { q[i * 2 + 1] = 1; }", half=True), 8),
    "face_first_rows": (_indexed("        for (int k = 0; k < 4; k++) { for (int j = 0; j <= 256; j++) "
                                 "{ q[k * 256 + j] = 1; } }", half=True), 8),
    "divided": (_indexed("        for (uint32_t i = 0; i < 1026; i++) { p[i / 2] = t; }"), 7),
    "modulo": (_indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i % 513] = t; }"), 7),
    "modulo_shifted": (_indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i % 512 + 1] = t; }"), 7),
    "masked": (_indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i & 512] = t; }"), 7),
    "shifted": (_indexed("        for (uint32_t i = 0; i < 1018; i++) { p[(i >> 1) + 4] = t; }"), 7),
    "shifted_left": (_indexed("        for (uint32_t i = 0; i < 300; i++) { q[i << 2] = 1; }", half=True), 8),
    "reversed": (_indexed("        for (uint32_t i = 0; i < 1024; i++) { p[512 - i / 2] = t; }"), 7),
    "below": (_indexed("        for (uint32_t i = 0; i < 1024; i++) { p[i / 2 - 1] = t; }"), 7),
    "plus_index": (_indexed("        for (uint32_t j = 0; j < 2; j++) { for (uint32_t i = 0; i < 514; i++) "
                            "{ p[j * 256 + i / 2] = t; } }"), 7),
}


@pytest.mark.parametrize("form", sorted(BAD_INDICES))
def test_stores_at_an_index_reaching_past_the_page_are_refused(tmp_path: Path, form: str) -> None:
    _refused_past_the_page(tmp_path, *BAD_INDICES[form])


#: indices the reading does not bound: refused as not followed, never read as inside the page
UNBOUNDED_INDICES = {
    # a value from memory
    "loaded": _indexed("        for (uint32_t i = 0; i < 1024; i++) { p[p[0] % 512] = t; }"),
    # a divisor known only at run time
    "runtime_divisor": ("        uint32_t d = get_arg_val<uint32_t>(0);",
                        "        for (uint32_t i = 0; i < 1024; i++) { p[i / d] = t; }",
                        "        ckernel::load_blocking(p);"),
    # a variable the body changes other than by a constant step
    "doubled": ("        uint32_t k = 1;",
                "        for (uint32_t i = 0; i < 1024; i++) { p[k % 512] = t; k = k * 2; }",
                "        ckernel::load_blocking(p);"),
    # a bounded number converted to a type that does not hold its bounds: int8_t wraps 128..199 below 0, before
    # the page
    "narrow_wraps": _indexed("        for (uint32_t i = 0; i < 400; i++) { int8_t k = i / 2; p[k] = t; }"),
    # a product of two indices
    "product": _indexed("        for (uint32_t i = 0; i < 300; i++) { for (uint32_t j = 0; j < 300; j++) "
                        "{ p[(i * j) / 256] = t; } }"),
}


@pytest.mark.parametrize("form", sorted(UNBOUNDED_INDICES))
def test_stores_at_an_index_not_bounded_are_refused(tmp_path: Path, form: str) -> None:
    with pytest.raises(Refused, match="L1 address at an offset not followed"):
        import_host(_host(tmp_path, _reader(*UNBOUNDED_INDICES[form])))


#: stores building both pages of a 2-page reservation at once (the second report's ``ok_two_pages``,
#: ``ok_second_page_only``, ``ok_tile_loop``); the line of the first store into the second page
TWO_PAGES_AT_ONCE = {
    "one_loop": (("        for (uint32_t i = 0; i < 1024; ++i) { p[i] = t; }",
                  "        ckernel::load_blocking(p + 1023);"), 7),
    "page_by_page": (("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
                      "        for (uint32_t i = 512; i < 1024; ++i) { p[i] = t; }",
                      "        ckernel::load_blocking(p + 1023);"), 8),
    "tile_loop": (("        uint32_t l1 = get_write_ptr(0);",
                   "        for (uint32_t k = 0; k < 2; ++k) {",
                   "            volatile tt_l1_ptr uint32_t* q = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(l1);",
                   "            for (uint32_t i = 0; i < 512; ++i) { q[i] = t; }",
                   "            l1 += 2048;",
                   "        }",
                   "        ckernel::load_blocking(p + 1023);"), 10),
    # the page chosen by a bounded index: i / 2 takes every word of both pages (refused until 2026-12-07); which
    # word it stored last is not followed, so a store to a known word and its load drain them (``_indexed``)
    "bounded_index": (("        for (uint32_t i = 0; i < 2048; ++i) { p[i / 2] = t; }", "        p[1023] = t;",
                       "        ckernel::load_blocking(p + 1023);"), 7),
    "bounded_shift": (("        for (uint32_t i = 0; i < 4096; ++i) { p[(i >> 2) + 0] = t; }", "        p[1023] = t;",
                       "        ckernel::load_blocking(p + 1023);"), 7),
    # two stores a page apart and more, in a loop read as it runs: one in each page
    "page_stride": (("        for (uint32_t i = 0; i < 2; ++i) { p[i * 600] = t; }",
                     "        ckernel::load_blocking(p + 600);"), 7),
}


def _two_at_once(fill: tuple[str, ...]) -> tuple[str, ...]:
    return ("    for (uint32_t t = 0; t < 2; ++t) {",
            "        cb_reserve_back(0, 2);",
            "        volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));",
            *fill,
            "        cb_push_back(0, 2);",
            "    }")


def _fills(path: Path) -> list[int]:
    return [op.tiles for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, FillTiles)]


@pytest.mark.parametrize("form", sorted(TWO_PAGES_AT_ONCE))
def test_stores_into_two_reserved_pages_at_once_are_a_fill_of_both(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   form: str) -> None:
    """A reservation of two pages makes both writable (``dataflow_api.h:309-313``: "the amount of valid memory is
    equal to the number of tiles requested"); stores building each of them, pushed at once, are a ``FillTiles`` of
    both. They were refused, first as stores outside the reservation (citing the rule the kernel keeps), then as
    stores of several pages not followed."""
    fill, _ = TWO_PAGES_AT_ONCE[form]
    path = _host(tmp_path, _two_at_once(fill))
    assert set(_fills(path)) == {2}
    _proved(path, capsys)


#: stores into two reserved pages the reading does not take as a fill of both; the construct and the line refused
TWO_PAGES_NOT_BUILT = {
    # the second page never stored into: its bytes are what L1 held
    "first_only": (("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }", "        ckernel::load_blocking(p + 511);"),
                   "plain stores into a push of more than one page", 9),
    "second_only": (("        for (uint32_t i = 512; i < 1024; ++i) { p[i] = t; }",
                     "        ckernel::load_blocking(p + 1023);"), "plain stores into a push of more than one page", 9),
    # the second page stored into in the second iteration of the loop around the reserve only (t = 1: word 512)
    "second_in_a_later_reservation": (("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
                                       "        p[t * 512] = t;", "        ckernel::load_blocking(p + t * 512);"),
                                      "plain stores into a push of more than one page", 10),
    # a bounded index that reaches the first page only (i / 2 of 0..1023)
    "bounded_first_only": (("        for (uint32_t i = 0; i < 1024; ++i) { p[i / 2] = t; }",
                            "        ckernel::load_blocking(p + 511);"), "plain stores into a push of more than one page", 9),
    # a bounded index whose values the reading does not know to leave no page out (a remainder: only its bounds)
    "bounded_remainder": (("        for (uint32_t i = 0; i < 1024; ++i) { p[(i % 512) * 2] = t; }",
                           "        ckernel::load_blocking(p + 1022);"), "plain stores into more than one reserved page", 7),
    # the second page's stores on some paths only
    "second_in_a_branch": (("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
                            "        if (t == 0) { for (uint32_t i = 512; i < 1024; ++i) { p[i] = t; } }",
                            "        ckernel::load_blocking(p + 511);"),
                           "plain stores into a push of more than one page", 10),
}


@pytest.mark.parametrize("form", sorted(TWO_PAGES_NOT_BUILT))
def test_stores_that_do_not_build_each_reserved_page_are_refused(tmp_path: Path, form: str) -> None:
    fill, construct, line = TWO_PAGES_NOT_BUILT[form]
    with pytest.raises(Refused, match=construct) as e:
        import_host(_host(tmp_path, _two_at_once(fill)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", line), e.value


_BYTE_PTR = "volatile tt_l1_ptr uint8_t* b = reinterpret_cast<volatile tt_l1_ptr uint8_t*>(get_write_ptr(0));"

#: ``b[t * 7]`` reaches the second page only from t = 293 on (the loop, too long to read as it runs, is read once), so
#: its range over t is not what one reservation's stores touch: the reader, the construct refused and what it says
ALONG_A_LOOP_AROUND = {
    # each iteration of t reserves and pushes its own two pages
    "reserve_in_the_loop": (("    for (uint32_t t = 0; t < 300; ++t) {", "        cb_reserve_back(0, 2);",
                             f"        {_BYTE_PTR}", "        for (uint32_t i = 0; i < 2048; ++i) { b[i] = 1; }",
                             "        b[t * 7] = 1;", "        ckernel::load_blocking(b + t * 7);",
                             "        cb_push_back(0, 2);", "    }"),
                            "plain stores into more than one reserved page", "one open before the reserve"),
    # reserved once before the loop, pushed and reserved again in each iteration
    "push_in_the_loop": (("    cb_reserve_back(0, 2);", "    for (uint32_t t = 0; t < 300; ++t) {", f"        {_BYTE_PTR}",
                          "        b[t * 7] = 1;", "        ckernel::load_blocking(b + t * 7);",
                          "        cb_push_back(0, 2);", "        cb_reserve_back(0, 2);", "    }"),
                         "plain stores into a push of more than one page", "along a loop the push is in"),
}


@pytest.mark.parametrize("form", sorted(ALONG_A_LOOP_AROUND))
def test_stores_over_two_pages_along_a_loop_around_the_reservation_are_no_fill_of_each(tmp_path: Path,
                                                                                     form: str) -> None:
    reader, construct, why = ALONG_A_LOOP_AROUND[form]
    with pytest.raises(Refused, match=construct) as e:
        import_host(_host(tmp_path, reader))
    assert why in str(e.value), e.value


def _one_by_one(fill: tuple[str, ...], *between: str) -> tuple[str, ...]:
    """``_two_at_once`` with the two pages pushed one at a time, ``between`` the pushes."""
    return tuple(y for x in _two_at_once(fill) for y in (
        ("        cb_push_back(0, 1);", *between, "        cb_push_back(0, 1);") if "cb_push_back(0, 2)" in x else (x,)))


@pytest.mark.parametrize("form", sorted(TWO_PAGES_AT_ONCE))
def test_two_reserved_pages_built_at_once_and_pushed_one_by_one_are_a_fill_of_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    """Both pages built before the first push, then pushed one at a time: refused by name. A reading as a
    ``FillTiles`` of one page per push was tried and proved a reservation of 2 pages at a 2-page ring's last page
    (a new user's v01): the stores build the pages contiguously from the write pointer, past the ring's end (a
    reservation does not wrap, ``dataflow_api.h:218-220``), where a fill per push puts the second at the ring's
    start, so the reservation's straddle went unseen; pushed as one, ``cb-straddle`` refutes it."""
    fill, _ = TWO_PAGES_AT_ONCE[form]
    with pytest.raises(Refused, match="plain store not into the pages pushed") as e:
        import_host(_host(tmp_path, _one_by_one(fill)))
    assert "pushed a part at a time" in str(e.value), e.value


def test_the_second_page_built_between_the_pushes_is_a_fill_of_each(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The second page's stores after the first push, through the pointer taken before it: built before its push."""
    fill = ("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }", "        p[512] = t;",
            "        ckernel::load_blocking(p + 512);")
    with pytest.raises(Refused, match="plain store not into the pages pushed"):
        import_host(_host(tmp_path, _one_by_one(fill, "        for (uint32_t i = 513; i < 1024; ++i) { p[i] = t; }",
                                                "        ckernel::load_blocking(p + 1023);")))


#: stores of two reserved pages pushed one at a time where a page pushed is not built before its push: the
#: construct, its line and what the refusal says
ONE_BY_ONE_NOT_BUILT = {
    # the first page pushed never stored into
    "second_only": ((("        for (uint32_t i = 512; i < 1024; ++i) { p[i] = t; }",
                      "        ckernel::load_blocking(p + 1023);"), ()),
                    "plain store not into the pages pushed", 7, "page 0, which it publishes, is not built"),
    # the second page's store in the first iteration of a loop only (a branch on its index): its push publishes a
    # page not built on every path
    "second_in_a_branch": ((("        for (uint32_t i = 0; i < 512; ++i) { p[i] = t; }",
                             "        for (uint32_t j = 0; j < 300; ++j) { if (j == 0) { p[512] = t; } }",
                             "        ckernel::load_blocking(p + 511);"), ()),
                           "plain store not into the pages pushed", 8, "pushed a part at a time"),
}


@pytest.mark.parametrize("form", sorted(ONE_BY_ONE_NOT_BUILT))
def test_a_page_pushed_before_it_is_built_stays_refused(tmp_path: Path, form: str) -> None:
    (fill, between), construct, line, why = ONE_BY_ONE_NOT_BUILT[form]
    with pytest.raises(Refused, match=construct) as e:
        import_host(_host(tmp_path, _one_by_one(fill, *between)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", line), e.value
    assert why in str(e.value), e.value


def test_a_copy_into_two_reserved_pages_is_refused_by_name(tmp_path: Path) -> None:
    writer = tuple(x.replace("cb_reserve_back(0, 1)", "cb_reserve_back(0, 2)").replace(
        "dst[i] = src[i];", "dst[i + 512] = src[i];") for x in _copy_writer("dst[i] = src[i];", "1023"))
    with pytest.raises(Refused, match="plain stores into more than one reserved page") as e:
        import_host(_host(tmp_path, _COPY_READER, writer))
    assert "a copy of one page per push" in str(e.value), e.value


def test_stores_past_both_reserved_pages_still_break_the_reservation(tmp_path: Path) -> None:
    fill = ("        for (uint32_t i = 0; i <= 1024; ++i) { p[i] = t; }", "        ckernel::load_blocking(p + 1024);")
    with pytest.raises(Refused, match="plain store not into the buffer's next unfilled page") as e:
        import_host(_host(tmp_path, _two_at_once(fill)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 7), e.value
