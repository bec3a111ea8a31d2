"""Tensor data the host states (``tensors[i].values``, frontends/ttmetal/stated.py): a kernel's 32-bit load from a
buffer page that the program fills only with a stated tensor's bytes is read as the stated word, so control flow on
it is followed (SDPA decode's ``cur_pos``, reader_decode_all.cpp:111-112 of ttnn 0.71.2). Anything else stays a value
not known statically, refused where it decides control flow; a claim the program breaks is refused at the load.
Small C++ snippets written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.errors import ParseError
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Loop, ReadTiles, Wait, WriteTiles
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', "void kernel_main() {",
         "    const uint32_t tile_bytes = get_tile_size(0);")

#: the position word read into c_1 (lines 4-11), loaded after the push (line 11), then ``n`` tiles of ``src`` into c_0
READER = ("    const auto pos = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1), 4);",
          "    cb_reserve_back(1, 1);",
          "    uint32_t wr = get_write_ptr(1);",
          "    noc_async_read(pos.get_noc_addr(0), wr, 4);",
          "    noc_async_read_barrier();",
          "    cb_push_back(1, 1);",
          "    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(wr);",
          "    uint32_t n = p[0];",
          "    const auto s = TensorAccessor(TensorAccessorArgs<2>(), get_arg_val<uint32_t>(0), tile_bytes);",
          "    for (uint32_t i = 0; i < n; ++i) {",
          "        cb_reserve_back(0, 1);",
          "        noc_async_read_tile(i, s, get_write_ptr(0));",
          "        noc_async_read_barrier();",
          "        cb_push_back(0, 1);",
          "    }")
#: the writer waits for the position page and loads the word itself (line 7), then drains ``n`` tiles into ``dst``
WRITER = ("    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
          "    cb_wait_front(1, 1);",
          "    volatile tt_l1_ptr uint32_t* q = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(1));",
          "    uint32_t n = q[0];",
          "    for (uint32_t i = 0; i < n; ++i) {",
          "        cb_wait_front(0, 1);",
          "        noc_async_write_tile(i, d, get_read_ptr(0));",
          "        noc_async_write_barrier();",
          "        cb_pop_front(0, 1);",
          "    }",
          "    cb_pop_front(1, 1);")


def _host(tmp_path: Path, reader: tuple[str, ...] = READER, writer: tuple[str, ...] = WRITER,
          pos: dict[str, Any] | None = None) -> Path:
    """Core (0,0): the reader fills c_1 with the position word and c_0 with ``n`` tiles of ``src``, the writer drains
    them into ``dst``. ``pos`` replaces fields of the ``pos`` tensor (stated ``values: [3]`` by default)."""
    (tmp_path / "reader.cpp").write_text("\n".join([*_HEAD, *reader, "}"]))
    (tmp_path / "writer.cpp").write_text("\n".join([*_HEAD, *writer, "}"]))
    tensor = {"name": "pos", "shape": [32, 32], "dtype": "int32", "role": "input", "values": [3]} | (pos or {})
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "stated", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 256], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "output"}, tensor],
            "buffers": [{"name": "in", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "bf16"},
                        {"name": "cur_pos", "index": 1, "entry_size": 4096, "entries": 1, "data_format": "int32"}],
            "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader",
                         "compile_time_args": [2, 4, 2, 2048], "runtime_args": ["src", "pos"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer",
                         "compile_time_args": [2, 2048], "runtime_args": ["dst"]}],
            "work_units": [{"cores": "0,0", "kernels": ["writer", "reader"],  # the loading writer is read first
                            "runtime_args": {"reader": {"src": {"tensor": "src"}, "pos": {"tensor": "pos"}},
                                             "writer": {"dst": {"tensor": "dst"}}}}]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


def _count(path: Path, cls: type) -> int:
    p = import_host(path)
    return sum(1 for ep in p.programs for op in walk(ep.ops) if isinstance(op, cls) and op.tensor in ("src", "dst"))


def test_a_stated_word_loaded_by_the_filler_and_a_waiter_is_followed(tmp_path: Path) -> None:
    """Both loads read 3: three tiles read and three written (the writer, read first, is read again after the
    reader lands the word); the position read is a 4-byte part of page 0."""
    p = import_host(_host(tmp_path))
    reads = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert [(op.tensor, op.part is not None) for op in reads if op.tensor == "pos"] == [("pos", True)]
    loops = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, Loop)]
    assert sorted(op.count for op in loops) == [3, 3]
    assert {op.tensor for op in walk(next(ep for ep in p.programs if ep.engine.value == "writer").ops)
            if isinstance(op, WriteTiles)} == {"dst"}


def test_another_stated_value_gives_another_trip(tmp_path: Path) -> None:
    p = import_host(_host(tmp_path, pos={"values": [5]}))
    assert sorted(op.count for ep in p.programs for op in walk(ep.ops) if isinstance(op, Loop)) == [5, 5]


def test_without_stated_data_the_loop_is_refused(tmp_path: Path) -> None:
    path = _host(tmp_path, pos={"values": [3]})
    data = json.loads(path.read_text())
    del data["tensors"][2]["values"]
    path.write_text(json.dumps(data))
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(path)
    assert e.value.loc.file == "writer.cpp"


def test_a_word_past_the_stated_ones_stays_unknown(tmp_path: Path) -> None:
    """The load reads word 1 (``p[1]``), the host states word 0 only."""
    reader = tuple(line.replace("p[0]", "p[1]").replace("wr, 4)", "wr, 8)") for line in READER)
    writer = (*WRITER[:2], "    uint32_t n = 2;", *WRITER[4:])
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(_host(tmp_path, reader, writer))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 13)


def test_a_load_before_the_push_is_not_decided(tmp_path: Path) -> None:
    """The filler's load before its own push (and before its read landed): not a published page."""
    reader = (*READER[:4], READER[6], READER[7], *READER[4:6], *READER[8:])
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(_host(tmp_path, reader))
    assert e.value.loc.file == "reader.cpp"


def test_a_second_filler_of_other_bytes_breaks_the_claim(tmp_path: Path) -> None:
    """The reader also reads a tile of ``src`` into the position buffer: the stated word no longer decides what the
    page holds, and the load is refused at its line."""
    reader = (*READER, "    cb_reserve_back(1, 1);", "    noc_async_read_tile(0, s, get_write_ptr(1));",
              "    noc_async_read_barrier();", "    cb_push_back(1, 1);")
    with pytest.raises(Refused, match="stated tensor data does not decide") as e:
        import_host(_host(tmp_path, reader))
    assert e.value.loc.file in ("reader.cpp", "writer.cpp")


@pytest.mark.parametrize(("fields", "rule"), [
    ({"role": "output"}, "only of an input or param"),
    ({"dtype": "bf16", "values": [3]}, "32-bit"),
    ({"values": [0] * 1025}, "past the"),
])
def test_bad_stated_data_is_refused_naming_the_field(tmp_path: Path, fields: dict[str, Any], rule: str) -> None:
    with pytest.raises(ParseError, match=rule) as e:
        import_host(_host(tmp_path, pos=fields))
    assert "tensors[2].values" in str(e.value)


def test_a_load_after_the_pop_is_not_decided(tmp_path: Path) -> None:
    """The writer pops the position page and then loads through its read pointer: the page is the producer's again
    (its bytes may be rewritten), so the word is not known."""
    writer = (WRITER[0], WRITER[1], "    cb_pop_front(1, 1);", *WRITER[2:-1])
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(_host(tmp_path, writer=writer))
    assert e.value.loc.file == "writer.cpp"


def test_a_write_pointer_taken_after_the_push_is_not_decided(tmp_path: Path) -> None:
    """The reader takes c_1's write pointer again after its push: it points at the next page, which nothing filled."""
    reader = (*READER[:6], "    wr = get_write_ptr(1);", *READER[6:])
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(_host(tmp_path, reader))
    assert e.value.loc.file == "reader.cpp"


def _compute_host(tmp_path: Path, body: tuple[str, ...]) -> Path:
    """The stated-data host with a compute kernel on c_1 instead of the writer's load: ``body`` reads the position."""
    path = _host(tmp_path, writer=(WRITER[0], "    uint32_t n = 3;", *WRITER[4:-1]))
    (tmp_path / "compute.cpp").write_text("\n".join(['#include "api/compute/cb_api.h"', "void kernel_main() {", *body,
                                                      "}"]))
    data = json.loads(path.read_text())
    data["kernels"].append({"name": "compute", "source": "compute.cpp", "processor": "compute"})
    data["work_units"][0]["kernels"].append("compute")
    path.write_text(json.dumps(data))
    return path


def test_read_tile_value_of_the_waited_page_is_the_stated_word(tmp_path: Path) -> None:
    """Compute waits for the position page, ``read_tile_value``s word 0 and pops it; a branch on the word is
    followed: with the stated 3 its wait of c_0 is never reached, with 4 it is."""
    body = ("    cb_wait_front(1, 1);", "    uint32_t n = read_tile_value(1, 0, 0);", "    cb_pop_front(1, 1);",
            "    if (n != 3) { cb_wait_front(0, 1); }")

    def compute_waits(path: Path) -> list[str]:
        p = import_host(path)
        comp = next(ep for ep in p.programs if ep.engine.value == "compute")
        names = {b.id: b.name for b in p.buffers}
        return [names[op.buf] for op in walk(comp.ops) if isinstance(op, Wait)]

    assert compute_waits(_compute_host(tmp_path, body)) == ["cur_pos"]
    path = _compute_host(tmp_path, body)
    data = json.loads(path.read_text())
    data["tensors"][2]["values"] = [4]
    path.write_text(json.dumps(data))
    assert compute_waits(path) == ["cur_pos", "in"]


@pytest.mark.parametrize(("body", "construct"), [
    (("    uint32_t n = read_tile_value(1, 0, 0);",), "read_tile_value of a page not waited for"),
    (("    cb_wait_front(1, 1);", "    cb_pop_front(1, 1);", "    uint32_t n = read_tile_value(1, 0, 0);"),
     "read_tile_value of a page not waited for"),
    (("    cb_wait_front(1, 1);", "    uint32_t n = read_tile_value(1, 1, 0);", "    cb_pop_front(1, 1);"),
     "read_tile_value of a tile past the front page"),
])
def test_read_tile_value_of_a_page_not_waited_is_refused(tmp_path: Path, body: tuple[str, ...],
                                                          construct: str) -> None:
    with pytest.raises(Refused, match=construct) as e:
        import_host(_compute_host(tmp_path, body))
    assert e.value.loc.file == "compute.cpp"


def test_a_kernel_writing_the_stated_tensor_breaks_the_claim(tmp_path: Path) -> None:
    """The writer also writes a tile into ``pos``: its data is no longer only what the host stated."""
    writer = (*WRITER[:-1], "    const auto q2 = TensorAccessor(TensorAccessorArgs<2>(), get_arg_val<uint32_t>(1), 4096);",
              "    noc_async_write_tile(0, q2, get_read_ptr(1));", "    noc_async_write_barrier();", WRITER[-1])
    path = _host(tmp_path, writer=writer)
    data = json.loads(path.read_text())
    data["kernels"][1]["compile_time_args"] = [2, 2048, 2, 4096]
    data["kernels"][1]["runtime_args"] = ["dst", "pos"]
    data["work_units"][0]["runtime_args"]["writer"]["pos"] = {"tensor": "pos"}
    path.write_text(json.dumps(data))
    with pytest.raises(Refused, match="stated tensor data does not decide") as e:
        import_host(path)
    assert "writes pos" in str(e.value)


def test_an_int32_word_may_be_stated_signed(tmp_path: Path) -> None:
    """-1, the usual "skip" position of an int32 tensor, is the word 0xFFFFFFFF the L1 holds: stating it signed or
    unsigned reads the same program; a uint32 tensor's word is 0..4294967295 only."""
    def counts(values: list[int]) -> list[int]:
        p = import_host(_host(tmp_path, pos={"values": values}))
        return sorted(op.count for ep in p.programs for op in walk(ep.ops) if isinstance(op, Loop))

    assert counts([-2]) == counts([4294967294])
    with pytest.raises(ParseError, match="not a uint32 word") as e:
        import_host(_host(tmp_path, pos={"dtype": "uint32", "values": [-1]}))
    assert "tensors[2].values" in str(e.value)


# ------------------------------------------------------------------ which ring slot holds the stated word

_RING_HEAD = ("#include <stdint.h>", '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {")
#: the reader's accessors over ``idx`` (4096-B int32 pages) and ``a`` (lines 4-8)
_RING_ARGS = ("    uint32_t idx_addr = get_arg_val<uint32_t>(0);",
              "    uint32_t a_addr = get_arg_val<uint32_t>(1);",
              "    const InterleavedAddrGenFast<true> si = {.bank_base_address = idx_addr, .page_size = 4096, "
              ".data_format = DataFormat::Int32};",
              "    const InterleavedAddrGenFast<true> sa = {.bank_base_address = a_addr, .page_size = 2048, "
              ".data_format = DataFormat::Float16_b};")
#: the three pages of ``a`` the reader pushes into c_0
_RING_A = ("    for (uint32_t i = 0; i < 3; ++i) {", "        cb_reserve_back(0, 1);",
           "        noc_async_read_tile(i, sa, get_write_ptr(0));", "        noc_async_read_barrier();",
           "        cb_push_back(0, 1);", "    }")
_FILLED = ("    cb_reserve_back(1, 1);", "    noc_async_read_tile(0, si, get_write_ptr(1));",
           "    noc_async_read_barrier();", "    cb_push_back(1, 1);")
_UNFILLED = ("    cb_reserve_back(1, 1);", "    cb_push_back(1, 1);")
#: the writer: ``front`` brings c_1's page to its front, the load of line 7 decides how many pages of c_0 it writes
_RING_WRITER_TAIL = ("    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(1));",
                     "    uint32_t n = p[0];",
                     "    for (uint32_t i = 0; i < n; ++i) {", "        cb_wait_front(0, 1);",
                     "        noc_async_write_tile(i, so, get_read_ptr(0));", "        noc_async_write_barrier();",
                     "        cb_pop_front(0, 1);", "    }", "    cb_pop_front(1, 1);")
_SECOND_FRONT = ("    cb_wait_front(1, 1);", "    cb_pop_front(1, 1);", "    cb_wait_front(1, 1);")


def _ring_host(tmp_path: Path, reader: tuple[str, ...], front: tuple[str, ...] = _SECOND_FRONT,
               entries: int = 2, compute: tuple[str, ...] | None = None) -> Path:
    """Core (0,0): ``reader`` (after ``_RING_ARGS``) fills c_1 (``entries`` pages of 4096 B) from ``idx`` (stated
    word 0: 3) and c_0 from ``a``; the writer runs ``front`` and loads c_1's word 0 at line 7 (or, with ``compute``,
    a compute kernel of that body loads it and nothing writes ``out``)."""
    (tmp_path / "reader.cpp").write_text("\n".join([*_RING_HEAD, *_RING_ARGS, *reader, "}"]))
    writer = ("    uint32_t out_addr = get_arg_val<uint32_t>(0);",
              "    const InterleavedAddrGenFast<true> so = {.bank_base_address = out_addr, .page_size = 2048, "
              ".data_format = DataFormat::Float16_b};", *front, *_RING_WRITER_TAIL)
    (tmp_path / "writer.cpp").write_text("\n".join([*_RING_HEAD, *writer, "}"]))
    kernels = [{"name": "reader", "source": "reader.cpp", "processor": "reader", "noc": 0,
                "runtime_args": ["idx_addr", "a_addr"]}]
    args: dict[str, Any] = {"reader": {"idx_addr": {"tensor": "idx"}, "a_addr": {"tensor": "a"}}}
    if compute is None:
        kernels.append({"name": "writer", "source": "writer.cpp", "processor": "writer", "noc": 1,
                        "runtime_args": ["out_addr"]})
        args["writer"] = {"out_addr": {"tensor": "out"}}
    else:
        (tmp_path / "compute.cpp").write_text("\n".join(["#include <cstdint>", '#include "api/compute/cb_api.h"',
                                                         '#include "api/compute/common.h"', "void kernel_main() {",
                                                         *compute, "}"]))
        kernels.append({"name": "compute", "source": "compute.cpp", "processor": "compute"})
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "ring", "kernel_root": str(tmp_path),
            "tensors": [{"name": "idx", "shape": [32, 32], "dtype": "int32", "role": "input", "values": [3]},
                        {"name": "a", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                        {"name": "out", "shape": [32, 96], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "Float16_b"},
                        {"name": "c_1", "index": 1, "entry_size": 4096, "entries": entries, "data_format": "Int32"}],
            "kernels": kernels,
            "work_units": [{"cores": "0,0", "kernels": [k["name"] for k in kernels], "runtime_args": args}]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


def _loop_counts(path: Path) -> list[Any]:
    return sorted(op.count for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, Loop))


def test_a_stated_word_in_every_slot_of_the_ring_is_read(tmp_path: Path) -> None:
    """Both slots of the 2-page ring are filled by reads of idx's page 0: the second front holds the word too; so
    does a 1-page ring filled the same way each time."""
    assert _loop_counts(_ring_host(tmp_path, (*_FILLED, *_FILLED, *_RING_A))) == [3, 3]
    assert _loop_counts(_ring_host(tmp_path, (*_FILLED, *_FILLED, *_RING_A), entries=1)) == [3, 3]
    assert _loop_counts(_ring_host(tmp_path, (*_FILLED, *_RING_A), front=("    cb_wait_front(1, 1);",))) == [3, 3]


#: a page of c_1 nothing was read into is pushed: ``cb_push_back`` moves the counters only (ttnn 0.81.1
#: tt_metal/hw/inc/api/dataflow/dataflow_api.h:208-215), so the slot holds whatever L1 held there
UNFILLED_SLOTS = {
    # the report's st_unfilled: slot 0 read, slot 1 pushed unfilled, the writer loads at its second front
    "second_slot": ((*_FILLED, *_UNFILLED, *_RING_A), _SECOND_FRONT, None),
    # st_2nd_w: one read into a 2-page reservation, both pages pushed
    "two_page_push": (("    cb_reserve_back(1, 2);", "    noc_async_read_tile(0, si, get_write_ptr(1));",
                       "    noc_async_read_barrier();", "    cb_push_back(1, 2);", *_RING_A),
                      ("    cb_wait_front(1, 2);", "    cb_pop_front(1, 1);", "    cb_wait_front(1, 1);"), None),
    # the same unfilled page at the front of a 1-page ring
    "one_entry": ((*_FILLED, *_UNFILLED, *_RING_A), _SECOND_FRONT, None),
    # st_rtv: compute's read_tile_value at the second front
    "read_tile_value": ((*_FILLED, *_UNFILLED, *_RING_A), _SECOND_FRONT,
                        ("    cb_wait_front(tt::CBIndex::c_1, 1);", "    cb_pop_front(tt::CBIndex::c_1, 1);",
                         "    cb_wait_front(tt::CBIndex::c_1, 1);",
                         "    uint32_t n = read_tile_value(tt::CBIndex::c_1, 0, 0);",
                         "    for (uint32_t i = 0; i < n; ++i) {", "        cb_wait_front(tt::CBIndex::c_0, 1);",
                         "        cb_pop_front(tt::CBIndex::c_0, 1);", "    }",
                         "    cb_pop_front(tt::CBIndex::c_1, 1);")),
}


@pytest.mark.parametrize("form", sorted(UNFILLED_SLOTS))
def test_a_load_from_a_slot_nothing_was_read_into_is_refused(tmp_path: Path, form: str) -> None:
    reader, front, compute = UNFILLED_SLOTS[form]
    path = _ring_host(tmp_path, reader, front, entries=1 if form == "one_entry" else 2, compute=compute)
    with pytest.raises(Refused, match="stated tensor data does not decide") as e:
        import_host(path)
    assert "no read" in str(e.value), e.value
    assert e.value.loc.file == ("compute.cpp" if compute else "writer.cpp")


def test_a_load_through_the_fillers_earlier_write_pointer_of_an_unfilled_slot_is_refused(tmp_path: Path) -> None:
    """The report's st_wptr: the reader keeps slot 0's write pointer, pushes slot 0 unfilled, reads idx's page 0
    into slot 1, pushes it and loads through the kept pointer: no read landed at it."""
    reader = ("    cb_reserve_back(1, 1);", "    uint32_t wp0 = get_write_ptr(1);", "    cb_push_back(1, 1);",
              *_FILLED,
              "    volatile tt_l1_ptr uint32_t* q = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(wp0);",
              "    uint32_t m = q[0];",
              "    for (uint32_t i = 0; i < m; ++i) {", "        cb_reserve_back(0, 1);",
              "        noc_async_read_tile(i, sa, get_write_ptr(0));", "        noc_async_read_barrier();",
              "        cb_push_back(0, 1);", "    }")
    with pytest.raises(Refused, match="stated tensor data does not decide") as e:
        import_host(_ring_host(tmp_path, reader, front=("    cb_wait_front(1, 1);",)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 16), e.value


#: loads the stated data does not decide, and the condition the refusal names
UNDECIDED = {
    # word 1 of a tensor whose host states word 0 only
    "word_past": (tuple(line.replace("p[0]", "p[1]").replace("wr, 4)", "wr, 8)") for line in READER),
                  (*WRITER[:2], "    uint32_t n = 2;", *WRITER[4:]), "past its 1 stated word"),
    # the writer pops the page between taking its read pointer and loading through it
    "popped": (READER, (*WRITER[:3], "    cb_pop_front(1, 1);", *WRITER[3:-1]), "the page was popped"),
    # the writer loads with no wait
    "no_wait": (READER, (WRITER[0], *WRITER[2:-1]), "no cb_wait_front of c_1"),
    # the reader's write pointer taken again after its push: the next page
    "next_page": ((*READER[:6], "    wr = get_write_ptr(1);", *READER[6:]), WRITER, "not pushed yet"),
}


@pytest.mark.parametrize("form", sorted(UNDECIDED))
def test_a_load_the_stated_data_does_not_decide_says_which_condition_failed(tmp_path: Path, form: str) -> None:
    """docs/ttmetal.md's message, with the condition that failed, where the load decides control flow."""
    reader, writer, why = UNDECIDED[form]
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(_host(tmp_path, reader, writer))
    assert "the stated tensor data does not decide" in str(e.value), e.value
    assert why in str(e.value), e.value


def _two_words(tmp_path: Path, values: list[int]) -> Path:
    """The ring host with idx stating ``values`` and the writer summing words 0 and 1 in a constant loop (the first
    report's ``st_sum``)."""
    path = _ring_host(tmp_path, (*_FILLED, *_RING_A), front=("    cb_wait_front(1, 1);",))
    writer = (tmp_path / "writer.cpp").read_text().replace(
        "    uint32_t n = p[0];", "    uint32_t n = 0;\n    for (uint32_t k = 0; k < 2; ++k) { n += p[k]; }")
    (tmp_path / "writer.cpp").write_text(writer)
    data = json.loads(path.read_text())
    data["tensors"][0]["values"] = values
    path.write_text(json.dumps(data))
    return path


def test_stated_words_summed_in_a_constant_loop_are_followed(tmp_path: Path) -> None:
    """``for (k < 2) n += p[k]`` loads word k at each iteration: the loop is read as it runs, each load a stated
    word, so n is their sum (it was refused as a loop bound not known statically). 1 + 2 = 3 pages: the reader's."""
    for i, (values, counts) in enumerate((([1, 2], [3, 3]), ([3, 7], [3, 10]))):
        (tmp_path / str(i)).mkdir()
        assert _loop_counts(_two_words(tmp_path / str(i), values)) == counts


def test_a_load_from_a_sharded_stated_tensor_names_the_shard(tmp_path: Path) -> None:
    """The first report's ``st_shard``: c_1 is globally allocated on idx's shard, so its pages are what the host
    placed on each core, never landed by a read; the refusal says so (it said no kernel read lands bytes in c_1 yet,
    as if the filler had not been read)."""
    path = _ring_host(tmp_path, ("    cb_reserve_back(1, 1);", "    cb_push_back(1, 1);", *_RING_A),
                      front=("    cb_wait_front(1, 1);",), entries=1)
    data = json.loads(path.read_text())
    data["tensors"][0] |= {"shape": [64, 32], "shard": {"layout": "height", "cores": "0,0-1,0", "shape": [32, 32]}}
    data["buffers"][1]["globally_allocated"] = "idx"
    data["work_units"][0]["cores"] = "0,0-1,0"
    path.write_text(json.dumps(data))
    with pytest.raises(Refused, match="not known statically") as e:
        import_host(path)
    assert "the stated tensor data does not decide" in str(e.value), e.value
    assert "c_1 is globally allocated on idx's shard" in str(e.value), e.value
    assert (e.value.loc.file, e.value.loc.line) == ("writer.cpp", 9), e.value  # the loop the load bounds
