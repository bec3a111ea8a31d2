"""NoC reads of a core's own L1 that the tt-metal front end reads as what they land: a read of the hardware zeros
region (``MEM_ZEROS_BASE``, ``zero_tile`` in ttnn/kernel_lib/l1_helpers.hpp:47-65 of ttnn 0.71.2 / 0.72.0) is part
of a constant page, landed by the read barrier; a read of the page this engine is building in another buffer, whose
bytes a read of a tensor landed (SDPA decode's copy of the position stick from c_8 into c_15,
reader_decode_all.cpp:128-131 of 0.72.0), is a read of those tensor bytes. Refused by name at their line: the
page pushed or stored into before the zeros have landed, a copy of bytes not landed yet, a source pushed before the
copy has landed. Small C++ snippets written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import FillTiles, Part, ReadTiles
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', '#include "api/dataflow/noc.h"', "void kernel_main() {",
         "    const uint32_t tile_bytes = get_tile_size(0);",
         "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);")

#: the writer drains c_0's 8 pages into ``dst`` and, with ``also_c1``, waits for and pops c_1's too
_WRITER = ("    for (uint32_t i = 0; i < 8; ++i) {",
           "        cb_wait_front(0, 1);",
           "        noc_async_write_tile(i, s, get_read_ptr(0));",
           "        noc_async_write_barrier();",
           "        cb_pop_front(0, 1);",
           "        cb_wait_front(1, 1);",
           "        cb_pop_front(1, 1);",
           "    }")

#: zero each page of c_0 as zero_tile does (the stateful Metal 2.0 form, 512 B a read), then push it
ZEROS = ("    Noc noc;",
         "    UnicastEndpoint ep;",
         "    const auto zsrc = noc_traits_t<UnicastEndpoint>::src_args_type{.noc_x = my_x[noc_index], "
         ".noc_y = my_y[noc_index], .addr = MEM_ZEROS_BASE};",
         "    noc.set_async_read_state<NocOptions::DEFAULT, MEM_ZEROS_SIZE>(ep, MEM_ZEROS_SIZE, zsrc);",
         "    for (uint32_t i = 0; i < 8; ++i) {",
         "        cb_reserve_back(0, 1);",
         "        uint32_t l1 = get_write_ptr(0);",
         "        for (uint32_t k = 0; k < tile_bytes / MEM_ZEROS_SIZE; ++k) {",
         "            noc.async_read_with_state<NocOptions::DEFAULT, 1>(ep, CoreLocalMem<uint32_t>(l1), 0, "
         "zsrc, {});",
         "            l1 += MEM_ZEROS_SIZE;",
         "        }",
         "        noc.async_read_barrier();",
         "        cb_push_back(0, 1);",
         "    }")

#: read tile i of ``src`` into c_1, copy c_1's page into c_0 by a NoC read of the own L1, push both
COPY = ("    for (uint32_t i = 0; i < 8; ++i) {",
        "        cb_reserve_back(1, 1);",
        "        uint32_t c1 = get_write_ptr(1);",
        "        noc_async_read_tile(i, s, c1);",
        "        noc_async_read_barrier();",
        "        cb_reserve_back(0, 1);",
        "        noc_async_read(get_noc_addr(c1 + 64), get_write_ptr(0), 128);",
        "        noc_async_read_barrier();",
        "        cb_push_back(1, 1);",
        "        cb_push_back(0, 1);",
        "    }")


def _host(tmp_path: Path, reader: tuple[str, ...], writer: tuple[str, ...] = _WRITER[:5] + _WRITER[7:]) -> Path:
    """Core (0,0): ``reader`` fills c_0 (4 pages) and c_1 (1 page) from ``src`` (8 bf16 tiles), ``writer`` drains c_0
    into ``dst``."""
    (tmp_path / "reader.cpp").write_text("\n".join([*_HEAD, *reader, "}"]))
    (tmp_path / "writer.cpp").write_text("\n".join([*_HEAD, *writer, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "local_reads", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "out", "index": 0, "entry_size": 2048, "entries": 4, "data_format": "bf16"},
                        {"name": "stage", "index": 1, "entry_size": 2048, "entries": 1, "data_format": "bf16"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader",
                         "compile_time_args": [2, 2048], "runtime_args": ["src"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer",
                         "compile_time_args": [2, 2048], "runtime_args": ["dst"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader", "writer"],
                            "runtime_args": {"reader": {"src": {"tensor": "src"}},
                                             "writer": {"dst": {"tensor": "dst"}}}}]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


def _refused(path: Path, construct: str, line: int) -> None:
    with pytest.raises(Refused, match=construct) as e:
        import_host(path)
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", line), e.value


def _line(body: tuple[str, ...], text: str) -> int:
    """The kernel line of the first statement of ``body`` containing ``text``."""
    return len(_HEAD) + next(i for i, s in enumerate(body) if text in s) + 1


def test_a_zeros_region_read_is_a_constant_page(tmp_path: Path) -> None:
    """Four 512 B reads of MEM_ZEROS_BASE per page, landed by the read barrier: one FillTiles of c_0 at each push,
    no ReadTiles (no tensor is read)."""
    p = import_host(_host(tmp_path, ZEROS))
    ops = [op for ep in p.programs for op in walk(ep.ops)]
    assert not [op for op in ops if isinstance(op, ReadTiles)]
    (fill,) = [op for op in ops if isinstance(op, FillTiles)]  # in the loop's body
    assert isinstance(fill, FillTiles)
    assert fill.tiles == 1


@pytest.mark.parametrize(("change", "construct", "at"), [
    # the push before the barrier: the zeros may not have landed
    ({"        noc.async_read_barrier();": None}, "push before the read barrier of a NoC read inside the page",
     "cb_push_back(0, 1)"),
    # a store into the page before the barrier: the read may still overwrite it
    ({"        noc.async_read_barrier();": "        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0))"
      "[0] = 1;\n        noc.async_read_barrier();"}, "plain store into a buffer page", "[0] = 1"),
])
def test_zeros_not_landed_are_refused(tmp_path: Path, change: dict[str, str | None], construct: str,
                                      at: str) -> None:
    body = []
    for line in ZEROS:
        if line in change:
            new = change[line]
            body += new.split("\n") if new is not None else []
        else:
            body.append(line)
    _refused(_host(tmp_path, tuple(body)), construct, _line(tuple(body), at))


@pytest.mark.parametrize("read", [
    # the report's zeros_big: one read of the whole 2048-B page from MEM_ZEROS_BASE
    "noc_async_read(get_noc_addr(MEM_ZEROS_BASE), get_write_ptr(0), 2048);",
    "noc_async_read(get_noc_addr(MEM_ZEROS_BASE), get_write_ptr(0), MEM_ZEROS_SIZE + 4);",
])
def test_a_read_past_the_zeros_region_is_refused(tmp_path: Path, read: str) -> None:
    """Only ``MEM_ZEROS_SIZE`` (512) bytes at ``MEM_ZEROS_BASE`` are zeros; the next are ``MEM_LLK_DEBUG_BASE``'s and
    then the firmware's (ttnn 0.81.1 tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h:80, 94, 96, 98): a
    longer read lands them, not zeros."""
    body = ("    for (uint32_t i = 0; i < 8; ++i) {", "        cb_reserve_back(0, 1);", f"        {read}",
            "        noc_async_read_barrier();", "        cb_push_back(0, 1);", "    }")
    _refused(_host(tmp_path, body), "NoC read past the zeros region", _line(body, "MEM_ZEROS_BASE"))


def test_a_copy_of_landed_tensor_bytes_is_a_read_of_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The copy of bytes [64, 192) of c_1's page, which tile i of ``src`` landed, into c_0: a ReadTiles of bytes
    [64, 192) of tile i of ``src`` into c_0; the program (the writer also draining c_1) is read fully."""
    p = import_host(_host(tmp_path, COPY, _WRITER))
    reads = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    c0 = next(b.id for b in p.buffers if b.name == "out")
    (copy,) = [op for op in reads if op.into == c0]
    assert (copy.tensor, copy.addr, copy.part) == ("src", reads[0].addr, Part(64, 128, 0))
    rc = main(["certify", str(tmp_path / "host.yaml"), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    # the writer writes 128 B parts' tiles whole: only the output's coverage is the copy's to answer
    assert {r["name"].split(":")[0] for r in report["results"] if r["verdict"] != "proved"} <= {"output-unwritten"}
    assert rc in (0, 1)


def test_a_copy_before_its_source_landed_is_refused(tmp_path: Path) -> None:
    body = tuple(line for k, line in enumerate(COPY) if k != 4)  # no barrier after the tensor read
    _refused(_host(tmp_path, body, _WRITER), "local NoC copy of bytes not landed from a tensor",
             _line(body, "get_noc_addr(c1"))


def test_a_source_pushed_before_the_copy_landed_is_refused(tmp_path: Path) -> None:
    body = (*COPY[:6], COPY[6], COPY[8], COPY[7], *COPY[9:])  # push c_1, then the barrier
    _refused(_host(tmp_path, body, _WRITER), "push of a local copy's source before its read barrier",
             _line(body, "cb_push_back(1, 1)"))


#: two pages of c_0 reserved at once and zeroed one at a time through the pointer taken before the first push (the
#: documented "old pointer plus a page" form), 512 B a read
ZEROS_TWO_PAGES = ("    for (uint32_t i = 0; i < 4; ++i) {",
                   "        cb_reserve_back(0, 2);",
                   "        uint32_t l1 = get_write_ptr(0);",
                   "        for (uint32_t k = 0; k < 4; ++k) {",
                   "            noc_async_read(get_noc_addr(MEM_ZEROS_BASE), l1 + k * 512, 512);",
                   "        }",
                   "        noc_async_read_barrier();",
                   "        cb_push_back(0, 1);",
                   "        for (uint32_t k = 0; k < 4; ++k) {",
                   "            noc_async_read(get_noc_addr(MEM_ZEROS_BASE), l1 + 2048 + k * 512, 512);",
                   "        }",
                   "        noc_async_read_barrier();",
                   "        cb_push_back(0, 1);",
                   "    }")


def test_zeros_reads_into_the_second_reserved_page_end_inside_the_ring(tmp_path: Path) -> None:
    """The ring check counts each read's own 512 bytes: the second page's last read ends at byte 4096 past the
    pointer, inside the 8192-B ring wherever it was taken (it counted the page's 2048 B from the read's start, as
    if the read reached byte 5632 and wrapped, and refused the kernel)."""
    p = import_host(_host(tmp_path, ZEROS_TWO_PAGES))
    assert sum(1 for ep in p.programs for op in walk(ep.ops) if isinstance(op, FillTiles)) == 2


def test_a_zeros_read_past_the_second_reserved_page_stays_refused(tmp_path: Path) -> None:
    body = tuple(line.replace("l1 + 2048 + k * 512", "l1 + 2048 + k * 512 + 4") for line in ZEROS_TWO_PAGES)
    # the last read's 4 bytes past the second page: where the pushes since put the model's page, it is not
    _refused(_host(tmp_path, body), "L1 pointer taken before a push used after it", _line(body, "l1 + 2048 + k * 512 + 4"))
