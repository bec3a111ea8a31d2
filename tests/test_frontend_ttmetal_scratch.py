"""Scratch L1 in tt-metal kernels (issue 16, issue 18): a data-movement kernel that uses a circular buffer's L1 as
private scratch — ``get_write_ptr`` with no reserve or push, NoC reads into it, loads of it, NoC writes from it
(argmax's ``find_argmax_for_core``, ttnn 0.81.1 ``reader_argmax_interleaved_multicore.cpp:65-131``) — is read with
the buffer as a scratch buffer (``Buffer.scratch``, ``lower.read_scratch``) and judged by the scratch rules: the
correct form proves, each broken form is refuted at its line; a buffer that a circular-buffer op also names is
refused as before, at the read that made it look like scratch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import ReadTiles, ScratchAccess, WriteTiles
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
         "    const uint32_t tile_bytes = get_tile_size(1);",
         "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
         "    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1), tile_bytes);",
         "    uint32_t l1 = get_write_ptr(1);",
         "    volatile tt_l1_ptr uint16_t* vals = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(l1);",
         "    uint32_t acc = 0;")
#: per tile: read it into the same scratch bytes, barrier, load a value, send the bytes on, wait for the write
GOOD = ("    for (uint32_t i = 0; i < 8; ++i) {",
        "        noc_async_read_tile(i, s, l1);",       # line 10
        "        noc_async_read_barrier();",
        "        acc += vals[0];",
        "        noc_async_write_tile(i, d, l1);",      # line 13
        "        noc_async_write_barrier();",
        "    }")


def _host(tmp_path: Path, body: tuple[str, ...]) -> Path:
    """Core (0,0): one reader kernel of ``body`` over c_1 (one bf16 tile, no producer or consumer declared), ``src``
    and ``dst`` of 8 tiles."""
    (tmp_path / "reader.cpp").write_text("\n".join([*_HEAD, *body, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "scratch", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "scratch", "index": 1, "entry_size": 2048, "entries": 1, "data_format": "bf16"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader",
                         "runtime_args": ["src", "dst"]}],
            "work_units": [{"cores": "0,0", "kernels": ["reader"],
                            "runtime_args": {"reader": {"src": {"tensor": "src"}, "dst": {"tensor": "dst"}}}}]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict[str, object]]]:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    return rc, {r["name"]: r for r in report["results"]}


def test_reads_into_the_same_bytes_read_as_scratch_prove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _host(tmp_path, GOOD)
    p = import_host(path)
    assert [b.scratch for b in p.buffers] == [True]
    ops = [op for ep in p.programs for op in walk(ep.ops)]
    assert sum(isinstance(op, ReadTiles) for op in ops) == sum(isinstance(op, WriteTiles) for op in ops) == 1
    assert ScratchAccess(0) in ops
    rc, results = _certify(path, capsys)
    assert rc == 0, [r for r in results.values() if r["verdict"] != "proved"]
    assert any(name.startswith("scratch-unlanded") for name in results)


@pytest.mark.parametrize(("body", "rule", "line"), [
    # the value loaded before the read barrier
    ((*GOOD[:2], GOOD[3], GOOD[2], *GOOD[4:]), "scratch-unlanded", 11),
    # ... by a dereference
    ((*GOOD[:2], "        acc += *vals;", GOOD[2], *GOOD[4:]), "scratch-unlanded", 11),
    # ... as the value of a store into the same bytes (the store is unlanded too, and sent undrained)
    ((*GOOD[:2], "        vals[1] = vals[0];", GOOD[2], *GOOD[4:]), "scratch-unlanded", 11),
    # a constant stored into the bytes while the read into them may still land (no ring op names the buffer: scratch)
    ((*GOOD[:2], "        vals[1] = 7;", GOOD[2], *GOOD[4:]), "scratch-unlanded", 11),
    # the next tile read into the bytes before the write from them left
    ((*GOOD[:5], *GOOD[6:], "    noc_async_write_barrier();"), "scratch-reuse", 10),
    # a partial stored into the bytes and sent with no drain (argmax 0.81.1 :500-505, :529-536)
    ((*GOOD, "    vals[0] = acc;", "    noc_async_write_tile(0, d, l1);", "    noc_async_write_barrier();"),
     "scratch-unlanded", 17),
])
def test_scratch_bytes_used_early_are_refuted_at_their_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             body: tuple[str, ...], rule: str, line: int) -> None:
    rc, results = _certify(_host(tmp_path, body), capsys)
    assert rc == 1
    refuted = [r for r in results.values() if r["verdict"] == "refuted"]
    assert {r["name"].split(":")[0] for r in refuted} <= {"scratch-unlanded", "scratch-reuse"}
    assert (rule, line) in {(r["name"].split(":")[0], r["counterexample"]["violation"]["position"]["source"]["line"])
                            for r in refuted}


def test_a_store_into_bytes_a_read_filled_makes_the_buffer_scratch(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """argmax's reader (ttnn 0.81.1 reduction/argmax/device/kernels/reader_argmax_interleaved.cpp:71-86) stores into
    bytes of a buffer no ring op names after reading into them: scratch, its store a ``ScratchAccess``; after the
    barrier and after the last write from them, nothing reads the store again, and the kernel proves."""
    path = _host(tmp_path, (*GOOD, "    vals[0] = 7;"))
    p = import_host(path)
    assert [b.scratch for b in p.buffers] == [True]
    assert ScratchAccess(0, store=True) in [op for ep in p.programs for op in walk(ep.ops)]
    rc, results = _certify(path, capsys)
    assert rc == 0, [r for r in results.values() if r["verdict"] != "proved"]


def test_a_scratch_store_at_an_index_bounded_inside_the_buffer_is_read(tmp_path: Path) -> None:
    """The guard of the bounded store past the buffer below: ``j / 2`` over ``j < 2048`` stays in its 2048 B."""
    p = import_host(_host(tmp_path, (*GOOD, "    for (uint32_t j = 0; j < 2048; j++) { vals[j / 2] = acc; }")))
    assert ScratchAccess(0, store=True) in [op for ep in p.programs for op in walk(ep.ops)]


def test_a_buffer_a_ring_op_also_names_is_refused_at_the_read(tmp_path: Path) -> None:
    """Two tiles read into the same bytes, then pushed: not scratch; refused at the second read, as before."""
    body = ("    noc_async_read_tile(0, s, l1);", "    noc_async_read_tile(1, s, l1);", "    noc_async_read_barrier();",
            "    cb_push_back(1, 1);")
    with pytest.raises(Refused, match="read into L1 not at the buffer's next unfilled tile") as e:
        import_host(_host(tmp_path, body))
    assert e.value.loc.line == 10


def test_a_remote_write_from_scratch_is_refused_by_name(tmp_path: Path) -> None:
    """argmax's workers send their scratch partials into the reduce core's scratch (0.81.1 :505-517): the landing
    there is not said yet."""
    body = (*GOOD, "    vals[0] = acc;",
            "    noc_async_write(l1, get_noc_addr(1, 0, get_write_ptr(1)), tile_bytes);",
            "    noc_async_write_barrier();")
    with pytest.raises(Refused, match="remote write from scratch L1") as e:
        import_host(_host(tmp_path, body))
    assert e.value.loc.line == 17


@pytest.mark.parametrize(("body", "line", "where"), [
    # a store one element past a one-tile buffer (uint16_t: byte 2048): L1 the buffer does not hold
    ((*GOOD, "    vals[1024] = acc;"), 16, "vals[1024] = acc: bytes [2048, 2050)"),
    # a load past it in the loop's last iteration (i = 7: byte 2048)
    ((*GOOD[:3], "        acc += vals[i + 1017];", *GOOD[4:]), 12, "vals[i + 1017]: bytes [2048, 2050)"),
    # a dereference of a pointer moved past it
    ((*GOOD, "    acc += *(vals + 1024);"), 16, "bytes [2048, 2050)"),
    # a store at an index bounded by its loop, the last value one element past
    ((*GOOD, "    for (uint32_t j = 0; j < 2050; j++) { vals[j / 2] = acc; }"), 16, "bytes [0, 2050)"),
])
def test_a_scratch_load_or_store_outside_the_buffer_is_refused(tmp_path: Path, body: tuple[str, ...], line: int,
                                                                where: str) -> None:
    """The scratch rules take the buffer's bytes as the access's, so a plain store past the buffer's end (into L1
    another buffer may hold) was read as a private store and proved; it is refused like a NoC transfer outside it."""
    with pytest.raises(Refused, match="scratch L1 access outside the buffer") as e:
        import_host(_host(tmp_path, body))
    assert e.value.loc.line == line
    assert where in str(e.value)
    assert "which holds 2048 B" in str(e.value)


def test_a_scratch_transfer_outside_the_buffer_names_the_bytes_it_reaches(tmp_path: Path) -> None:
    with pytest.raises(Refused, match=r"scratch L1 transfer outside the buffer .*bytes \[1024, 3072\) past scratch's "
                                      r"base, which holds 2048 B"):
        import_host(_host(tmp_path, (GOOD[0], "        noc_async_read_tile(i, s, l1 + 1024);", *GOOD[2:])))
