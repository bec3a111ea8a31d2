"""Scratchpads in tt-metal kernels (issue 18): a Program-scope ``ScratchpadSpec`` on the host (``scratchpads[]``), a
``Scratchpad<T> pad(scratch::NAME)`` in a data-movement kernel (api/scratchpad.h:43-179) — private L1 of that kernel
on each core, read as a scratch buffer (``Buffer.scratch``, docs/semantics.md "Scratch buffers") from the start:
NoC reads into its bytes and writes from them are ``ReadTiles`` / ``WriteTiles``, loads and stores through
``pad[i]`` or a pointer from ``pad.get_base_address()`` are ``ScratchAccess``; the scratch rules judge them. The
correct form proves, a load before the read barrier is refuted at its line, and what is not said is refused by
name at its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.errors import ParseError
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import ReadTiles, ScratchAccess, WriteTiles
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', '#include "api/dataflow/noc.h"', '#include "api/scratchpad.h"',
         "void kernel_main() {",
         "    const uint32_t tile_bytes = 2048;",
         "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
         "    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1), tile_bytes);",
         "    Noc noc;",
         "    Scratchpad<uint16_t> pad(scratch::pad);",
         "    uint32_t acc = 0;")
#: the line of a kernel's first body statement
FIRST = len(_HEAD) + 1
#: per tile: read it into the pad's first tile, barrier, load a value, write the bytes on, wait for the write
GOOD = ("    for (uint32_t i = 0; i < 8; ++i) {",
        "        noc_async_read_tile(i, s, pad.get_base_address());",          # FIRST + 1
        "        noc_async_read_barrier();",
        "        acc += pad[0];",                                               # FIRST + 3
        "        CoreLocalMem<uint32_t> src(pad.get_base_address());",
        "        noc.async_write(src, d, tile_bytes, {.offset_bytes = 0}, {.page_id = i});",
        "        noc_async_write_barrier();",
        "    }")


def _host(tmp_path: Path, body: tuple[str, ...], scratchpads: list[dict[str, Any]] | None = None,
          processor: str = "reader") -> Path:
    """Core (0,0): one kernel of ``body`` with scratchpad ``pad`` (two bf16 tiles), tensors ``src`` and ``dst`` of 8
    tiles."""
    (tmp_path / "k.cpp").write_text("\n".join([*_HEAD, *body, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "scratchpad", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}],
            "scratchpads": scratchpads if scratchpads is not None else
            [{"name": "pad", "size": 4096, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": processor, "runtime_args": ["src", "dst"]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"],
                            "runtime_args": {"k": {"src": {"tensor": "src"}, "dst": {"tensor": "dst"}}}}]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    return rc, json.loads(capsys.readouterr().out)["results"]


def test_a_scratchpad_is_read_as_scratch_and_proves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _host(tmp_path, GOOD)
    p = import_host(path)
    # the highest index no circular buffer of the core holds (the IR's are 0..31)
    assert [(b.name, b.cb, b.scratch, b.page_tiles, b.capacity) for b in p.buffers] == [("pad", 31, True, 1, 2)]
    ops = [op for ep in p.programs for op in walk(ep.ops)]
    assert [type(op).__name__ for op in ops if isinstance(op, (ReadTiles, WriteTiles, ScratchAccess))] == \
        ["ReadTiles", "ScratchAccess", "WriteTiles"]
    assert next(op for op in ops if isinstance(op, ReadTiles)).tiles == 1
    rc, results = _certify(path, capsys)
    assert rc == 0, [r for r in results if r["verdict"] != "proved"]
    assert any(r["name"].startswith("scratch-unlanded") for r in results)


def test_a_load_before_the_read_barrier_is_refuted_at_its_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    body = (GOOD[0], GOOD[1], GOOD[3], GOOD[2], *GOOD[4:])
    rc, results = _certify(_host(tmp_path, body), capsys)
    assert rc == 1
    refuted = [r for r in results if r["verdict"] == "refuted"]
    assert {(r["name"].split(":")[0], r["counterexample"]["violation"]["position"]["source"]["line"])
            for r in refuted} == {("scratch-unlanded", FIRST + 2)}


@pytest.mark.parametrize(("body", "construct", "line"), [
    # the third tile of a two-tile scratchpad: L1 it does not hold
    (("    noc_async_read_tile(0, s, pad.get_base_address() + 2 * tile_bytes);",), "scratch L1 transfer outside the "
     "buffer", FIRST),
    # the pad as a circular buffer: its index is the reading's own, no CB id names it
    (("    cb_reserve_back(64, 1);",), "circular buffer the host does not declare", FIRST),
    (("    auto lock = pad.scoped_lock(0, 1);", "    pad.get_dataformat();"), "Scratchpad.get_dataformat", FIRST + 1),
])
def test_what_a_scratchpad_does_not_say_is_refused(tmp_path: Path, body: tuple[str, ...], construct: str,
                                                   line: int) -> None:
    with pytest.raises(Refused, match=construct) as e:
        import_host(_host(tmp_path, body))
    assert e.value.loc.line == line


def test_a_scratchpad_the_host_does_not_declare_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="scratchpad the host does not declare") as e:
        import_host(_host(tmp_path, GOOD, scratchpads=[{"name": "other", "size": 2048, "data_format": "bf16"}]))
    assert e.value.loc.line == FIRST - 2
    assert e.value.detail == "pad (declared on (0,0): other)"


def test_a_scratchpad_in_a_compute_kernel_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.cpp").write_text("\n".join(['#include "api/compute/common.h"', "void kernel_main() {",
                                               "    Scratchpad<uint32_t> pad(scratch::pad);", "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "c", "kernel_root": str(tmp_path),
            "scratchpads": [{"name": "pad", "size": 2048, "data_format": "bf16"}],
            "kernels": [{"name": "c", "source": "c.cpp", "processor": "compute"}],
            "work_units": [{"cores": "0,0", "kernels": ["c"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    with pytest.raises(Refused, match="Scratchpad in a compute kernel") as e:
        import_host(tmp_path / "h.json")
    assert e.value.loc.line == 3


def test_a_scratchpad_size_not_whole_tiles_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=r"scratchpads\[0\]\.size.*1000 B is not a whole number of bf16 tiles"):
        import_host(_host(tmp_path, GOOD, scratchpads=[{"name": "pad", "size": 1000, "data_format": "bf16"}]))
