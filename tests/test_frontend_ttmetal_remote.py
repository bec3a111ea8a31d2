"""Remote L1 data movement in the tt-metal front end (issue 18): a NoC read of another core's buffer pages
(``RemoteRead``), a NoC write of this core's pages into another core's buffer pages (``McastSend`` to a one-core
group, with ``dst`` / ``offset``), a one-word remote write (``noc_inline_dw_write``: ``InlineWrite``). Each construct
is read from a small kernel written here, proved where the kernel is correct and refuted, with a counterexample at
its C++ line, where it is broken; what cannot be mapped exactly is refused by name at its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.core import Site
from verispatial.ir.ops import InlineWrite, McastSend, RemoteRead
from verispatial.ir.program import walk

_HEAD = ('#include "api/dataflow/dataflow_api.h"', '#include "api/dataflow/noc.h"',
         '#include "api/dataflow/dataflow_buffer.h"', "void kernel_main() {",
         "    const uint32_t tile_bytes = get_tile_size(0);",
         "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), tile_bytes);",
         "    const auto d = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(1), tile_bytes);",
         "    volatile tt_l1_ptr uint32_t* sem0 = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));",
         "    volatile tt_l1_ptr uint32_t* sem1 = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(1));")
#: the line of a kernel's first body statement
FIRST = len(_HEAD) + 1

#: (1,0)'s reader: tile 0 of src into its c_0, published, then (0,0)'s word 0 incremented
OWNER = ("    cb_reserve_back(0, 1);",
         "    noc_async_read_tile(0, s, get_write_ptr(0));",
         "    noc_async_read_barrier();",
         "    cb_push_back(0, 1);",
         "    noc_semaphore_inc(get_noc_addr(0, 0, get_semaphore(0)), 1);",
         "    noc_async_atomic_barrier();")
#: (1,0)'s writer: pops c_0 once (0,0) said its read landed (word 1)
DRAIN = ("    cb_wait_front(0, 1);",
         "    noc_semaphore_wait(sem1, 1);",
         "    noc_semaphore_set(sem1, 0);",
         "    cb_pop_front(0, 1);")
#: (0,0)'s writer: c_1's page to dst
WRITER = ("    cb_wait_front(1, 1);",
          "    noc_async_write_tile(0, d, get_read_ptr(1));",
          "    noc_async_write_barrier();",
          "    cb_pop_front(1, 1);")


def _puller(read: str, wait: bool = True) -> tuple[str, ...]:
    """(0,0)'s reader: waits for (1,0)'s word (``wait``), reads (1,0)'s c_0 page into c_1 with ``read``, tells
    (1,0) the read landed, publishes c_1."""
    return (*(("    noc_semaphore_wait(sem0, 1);", "    noc_semaphore_set(sem0, 0);") if wait else ()),
            "    cb_reserve_back(1, 1);",
            read,
            "    noc_async_read_barrier();",
            "    noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(1)), 1);",
            "    noc_async_atomic_barrier();",
            "    cb_push_back(1, 1);")


def _host(tmp_path: Path, kernels: dict[str, tuple[str, tuple[str, ...]]],
          units: dict[str, tuple[str, ...]], io: bool = True) -> Path:
    """Cores (0,0) and (1,0), each with c_0, c_1 and c_2 (two pages of one bf16 tile) and words 0 and 1 (initially
    0); ``kernels`` by name: processor and body; ``units``: per core, its kernels (an empty body where none is
    given). Every kernel's runtime args are the tensors ``src`` and ``dst`` (one tile each; without ``io``, no
    tensors and the args 0)."""
    kernels = {**kernels, "idle": ("reader", ())}
    units = {core: ks or ("idle",) for core, ks in units.items()}
    for name, (_, body) in kernels.items():
        (tmp_path / f"{name}.cpp").write_text("\n".join([*_HEAD, *body, "}"]))
    args: dict[str, Any] = {"src": {"tensor": "src"}, "dst": {"tensor": "dst"}} if io else {"src": 0, "dst": 0}
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "remote", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 32], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 32], "dtype": "bf16", "role": "output"}] if io else [],
            "buffers": [{"name": f"c_{i}", "index": i, "entry_size": 2048, "entries": 2, "data_format": "bf16"}
                        for i in (0, 1, 2)],
            "semaphores": [{"name": "w0", "initial_value": 0}, {"name": "w1", "initial_value": 0}],
            "kernels": [{"name": k, "source": f"{k}.cpp", "processor": p, "runtime_args": ["src", "dst"]}
                        for k, (p, _) in kernels.items()],
            "work_units": [{"cores": core, "kernels": list(ks),
                            "runtime_args": {k: args for k in ks}}
                           for core, ks in units.items()]}
    path = tmp_path / "host.yaml"  # JSON is YAML
    path.write_text(json.dumps(host))
    return path


def _pull(tmp_path: Path, read: str, wait: bool = True) -> Path:
    return _host(tmp_path, {"owner": ("reader", OWNER), "drain": ("writer", DRAIN),
                            "puller": ("reader", _puller(read, wait)), "writer": ("writer", WRITER)},
                 {"0,0": ("puller", "writer"), "1,0": ("owner", "drain")})


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    return rc, json.loads(capsys.readouterr().out)["results"]


def _proved(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, results = _certify(path, capsys)
    assert rc == 0, [r for r in results if r["verdict"] != "proved"]


def _refuted(path: Path, capsys: pytest.CaptureFixture[str], rule: str) -> dict[str, Any]:
    rc, results = _certify(path, capsys)
    assert rc != 0
    hits = [r for r in results if r["verdict"] == "refuted" and rule in r["name"]]
    assert hits, [(r["name"], r["verdict"]) for r in results if r["verdict"] != "proved"]
    return hits[0]


def _refused(path: Path, construct: str, file: str, line: int) -> Refused:
    with pytest.raises(Refused, match=construct) as e:
        import_host(path)
    assert (e.value.loc.file, e.value.loc.line) == (file, line), e.value
    return e.value


def _ops(path: Path, cls: type) -> list[tuple[Site, Any]]:
    return [(ep.site, op) for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, cls)]


# ------------------------------------------------------------------ remote reads

READS = {
    "classic": "    noc_async_read(get_noc_addr(1, 0, get_read_ptr(0)), get_write_ptr(1), tile_bytes);",
    "endpoint": "    { Noc noc; DataflowBuffer c1(1); DataflowBuffer c0(0); noc.async_read(UnicastEndpoint{}, c1, "
                "tile_bytes, {.noc_x = 1, .noc_y = 0, .addr = c0.get_read_ptr()}, {}); }",
}


@pytest.mark.parametrize("form", sorted(READS))
def test_remote_read_of_a_published_page_is_proved(tmp_path: Path, form: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """(0,0) reads (1,0)'s c_0 page at its own read pointer of c_0 after (1,0) announced it: one RemoteRead of
    (1,0)'s page 0 into c_1, located at the read's line; the program proves."""
    path = _pull(tmp_path, READS[form])
    ((site, op),) = _ops(path, RemoteRead)
    assert (site, op) == (Site(0, 0), RemoteRead(0, Site(1, 0), 1, 1, 0))
    _proved(path, capsys)


def test_remote_read_before_the_owner_published_is_refuted(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Without the wait for (1,0)'s word, the read may run before (1,0) pushed its page: remote-read-unpublished,
    its counterexample at the read's line."""
    path = _pull(tmp_path, READS["classic"], wait=False)
    hit = _refuted(path, capsys, "remote-read-unpublished")
    assert "puller.cpp:" + str(FIRST + 1) in json.dumps(hit)


@pytest.mark.parametrize(("read", "construct"), [
    ("    noc_async_read(get_noc_addr(1, 0, get_write_ptr(0)), get_write_ptr(1), tile_bytes);",
     "remote L1 read at a buffer's write pointer"),
    ("    noc_async_read(get_noc_addr(1, 0, get_read_ptr(0) + 64), get_write_ptr(1), tile_bytes);",
     "remote L1 read at an offset not of whole pages"),
    ("    noc_async_read(get_noc_addr(1, 0, get_semaphore(1)), get_write_ptr(1), tile_bytes);",
     "remote L1 read of an address not a buffer's pages"),
    ("    noc_async_read(get_noc_addr(1, 0, get_read_ptr(0)), get_write_ptr(1) + tile_bytes, tile_bytes);",
     "read into L1 not at the buffer's next unfilled tile"),
])
def test_remote_reads_the_op_cannot_say_are_refused_at_their_line(tmp_path: Path, read: str, construct: str) -> None:
    _refused(_pull(tmp_path, read), construct, "puller.cpp", FIRST + 3)


@pytest.mark.parametrize("read", [
    "    noc_async_read(get_noc_addr(1, 0, get_read_ptr(0) + tile_bytes), get_write_ptr(1), tile_bytes);",
    # NoC-address arithmetic counts bytes, whatever the local pointer's type
    "    { uint64_t a = get_noc_addr(1, 0, get_read_ptr(0)); a += tile_bytes; "
    "noc_async_read(a, get_write_ptr(1), tile_bytes); }",
    "    noc_async_read(get_noc_addr(1, 0, get_read_ptr(0)) + tile_bytes, get_write_ptr(1), tile_bytes);",
])
def test_remote_read_a_page_on(tmp_path: Path, read: str) -> None:
    """The owner's page one past this engine's read pointer (offset 1)."""
    path = _pull(tmp_path, read)
    assert [op for _, op in _ops(path, RemoteRead)] == [RemoteRead(0, Site(1, 0), 1, 1, 1)]


# ------------------------------------------------------------------ remote writes into another core's pages

#: (0,0)'s writer: c_0's front page into (1,0)'s c_2 at its own write pointer of c_2, once (1,0) reserved it
#: (word 0), then tells (1,0) it landed (word 1): sort's peer exchange, one way
def _sender(write: str, barrier: bool = True) -> tuple[str, ...]:
    return ("    noc_semaphore_wait(sem0, 1);",
            "    noc_semaphore_set(sem0, 0);",
            "    cb_wait_front(0, 1);",
            write,
            *(("    noc_async_write_barrier();",) if barrier else ()),
            "    noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(1)), 1);",
            "    noc_async_atomic_barrier();",
            "    cb_pop_front(0, 1);",
            "    noc_async_write_barrier();")


SOURCE = ("    cb_reserve_back(0, 1);",
          "    noc_async_read_tile(0, s, get_write_ptr(0));",
          "    noc_async_read_barrier();",
          "    cb_push_back(0, 1);")
#: (1,0)'s reader: reserves c_2, says so, waits for the landing, publishes it
RECEIVER = ("    cb_reserve_back(2, 1);",
            "    noc_semaphore_inc(get_noc_addr(0, 0, get_semaphore(0)), 1);",
            "    noc_async_atomic_barrier();",
            "    noc_semaphore_wait(sem1, 1);",
            "    noc_semaphore_set(sem1, 0);",
            "    cb_push_back(2, 1);")
SINK = ("    cb_wait_front(2, 1);",
        "    noc_async_write_tile(0, d, get_read_ptr(2));",
        "    noc_async_write_barrier();",
        "    cb_pop_front(2, 1);")

WRITES = {
    "classic": "    noc_async_write(get_read_ptr(0), get_noc_addr(1, 0, get_write_ptr(2)), tile_bytes);",
    "endpoint": "    { Noc noc; DataflowBuffer c2(2); CoreLocalMem<uint32_t> src(get_read_ptr(0)); noc.async_write(src, "
                "UnicastEndpoint{}, tile_bytes, {.offset_bytes = 0}, {.noc_x = 1, .noc_y = 0, "
                ".addr = c2.get_write_ptr()}); }",
}


def _push(tmp_path: Path, write: str, barrier: bool = True) -> Path:
    return _host(tmp_path, {"source": ("reader", SOURCE), "sender": ("writer", _sender(write, barrier)),
                            "receiver": ("reader", RECEIVER), "sink": ("writer", SINK)},
                 {"0,0": ("source", "sender"), "1,0": ("receiver", "sink")})


@pytest.mark.parametrize("form", sorted(WRITES))
def test_remote_write_into_the_peers_page_is_proved(tmp_path: Path, form: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A remote write of c_0's front page into (1,0)'s c_2 at (0,0)'s own write pointer of c_2 is a McastSend to
    the one-core group (1,0) with ``dst`` c_2 and one destination; barriered before the increment that announces it,
    the exchange proves."""
    path = _push(tmp_path, WRITES[form])
    ((site, op),) = _ops(path, McastSend)
    assert site == Site(0, 0)
    assert (op.buf, op.pages, op.num_dests, op.front, op.dst, op.offset) == (0, 1, 1, True, 2, 0)
    program = import_host(path)
    assert program.groups[op.group].destinations() == (Site(1, 0),)
    _proved(path, capsys)


def test_remote_write_announced_before_its_barrier_is_refuted(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The increment issued while the write is in flight may land first (tt-metal PR #43507's hang):
    async-inc-overtake, at the increment's line."""
    path = _push(tmp_path, WRITES["classic"], barrier=False)
    hit = _refuted(path, capsys, "async-inc-overtake")
    assert "sender.cpp:" + str(FIRST + 4) in json.dumps(hit)


@pytest.mark.parametrize(("write", "construct"), [
    ("    noc_async_write(get_read_ptr(0), get_noc_addr(1, 0, get_read_ptr(2)), tile_bytes);",
     "remote L1 write at a buffer's read pointer"),
    ("    noc_async_write(get_read_ptr(0), get_noc_addr(1, 0, get_write_ptr(2) + 8), tile_bytes);",
     "remote L1 write at an offset not of whole pages"),
    ("    noc_async_write(get_read_ptr(0), get_noc_addr(1, 0, get_semaphore(1)), tile_bytes);",
     "data write onto a semaphore word"),
    ("    noc_async_write(get_read_ptr(0) + tile_bytes, get_noc_addr(1, 0, get_write_ptr(2)), tile_bytes);",
     "remote L1 write from L1 not at the buffer's read pointer"),
])
def test_remote_writes_the_op_cannot_say_are_refused_at_their_line(tmp_path: Path, write: str,
                                                                   construct: str) -> None:
    _refused(_push(tmp_path, write), construct, "sender.cpp", FIRST + 3)


def test_remote_write_of_the_backs_own_page_lands_at_its_address(tmp_path: Path) -> None:
    """The back's own page to the same address on the peer (argmax's partial ``k`` at ``k`` pages on both sides):
    the op without ``dst``, at ``offset`` 1."""
    body = ("    cb_reserve_back(2, 2);",
            "    noc_async_write(get_write_ptr(2) + tile_bytes, get_noc_addr(1, 0, get_write_ptr(2) + tile_bytes), "
            "tile_bytes);",
            "    noc_async_write_barrier();")
    path = _host(tmp_path, {"k": ("writer", body)}, {"0,0": ("k",), "1,0": ()}, io=False)
    ((_, op),) = _ops(path, McastSend)
    assert (op.buf, op.pages, op.front, op.dst, op.offset) == (2, 1, False, None, 1)


# ------------------------------------------------------------------ one-word remote writes

def _mailbox(tmp_path: Path, barrier: bool) -> Path:
    """(0,0)'s writer writes 7 into (1,0)'s word 1 (a mailbox: no op reads it), then increments (1,0)'s word 0,
    which (1,0)'s reader waits for; ``barrier``: a write barrier between the two (tt-metal PR #43507's fix)."""
    sender = ("    noc_inline_dw_write(get_noc_addr(1, 0, get_semaphore(1)), 7);",
              *(("    noc_async_write_barrier();",) if barrier else ()),
              "    noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(0)), 1);",
              "    noc_async_atomic_barrier();",
              "    noc_async_write_barrier();")
    waiter = ("    noc_semaphore_wait(sem0, 1);",
              "    noc_semaphore_set(sem0, 0);")
    return _host(tmp_path, {"sender": ("writer", sender), "waiter": ("reader", waiter)},
                 {"0,0": ("sender",), "1,0": ("waiter",)}, io=False)


def test_inline_write_into_a_mailbox_then_barriered_increment_is_proved(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _mailbox(tmp_path, barrier=True)
    assert _ops(path, InlineWrite) == [(Site(0, 0), InlineWrite(1, Site(1, 0), 7))]
    _proved(path, capsys)


def test_inline_write_overtaken_by_its_increment_is_refuted(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    hit = _refuted(_mailbox(tmp_path, barrier=False), capsys, "async-inc-overtake")
    assert f"sender.cpp:{FIRST + 1}" in json.dumps(hit)


@pytest.mark.parametrize(("call", "construct"), [
    ("    noc_inline_dw_write<InlineWriteDst::DEFAULT, true>(get_noc_addr(1, 0, get_semaphore(1)), 7);",
     "posted or register noc_inline_dw_write"),
    ("    noc_inline_dw_write(get_noc_addr(1, 0, get_semaphore(1)), 7, 0x3);",
     "noc_inline_dw_write of part of a word"),
    ("    noc_inline_dw_write(get_noc_addr(1, 0, get_write_ptr(0)), 7);",
     "semaphore word not from get_semaphore"),
    ("    noc_inline_dw_write(get_noc_addr(1, 0, get_semaphore(1)), sem0[1]);",
     "inline write value"),
])
def test_inline_writes_the_op_cannot_say_are_refused(tmp_path: Path, call: str, construct: str) -> None:
    path = _host(tmp_path, {"k": ("writer", (call, "    noc_async_write_barrier();"))}, {"0,0": ("k",), "1,0": ()},
                 io=False)
    _refused(path, construct, "k.cpp", FIRST)


# ------------------------------------------------------------------ local copies between two buffers' pages

def _copier(*, drain: bool = True, wait: bool = True, pop_first: bool = False,
            store: str = "        dst[i] = src[i];") -> tuple[str, ...]:
    """(0,0)'s reader: tile 0 of src into c_0, then c_0's page copied word by word into c_1 through volatile
    pointers (tt-metal's contributed multicast ``inbound_kernel.cpp:9-15``), ``drain``: ended by a blocking load of
    the last word written (``common.hpp:166-179``, PR #50183), then c_1 pushed and c_0 popped (``pop_first``: the
    other order)."""
    tail = ("    cb_pop_front(0, 1);", "    cb_push_back(1, 1);") if pop_first else \
        ("    cb_push_back(1, 1);", "    cb_pop_front(0, 1);")
    return ("    cb_reserve_back(0, 1);",
            "    noc_async_read_tile(0, s, get_write_ptr(0));",
            "    noc_async_read_barrier();",
            "    cb_push_back(0, 1);",
            *(("    cb_wait_front(0, 1);",) if wait else ()),
            "    cb_reserve_back(1, 1);",
            "    volatile tt_l1_ptr uint32_t* src = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(0));",
            "    volatile tt_l1_ptr uint32_t* dst = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(1));",
            "    for (uint32_t i = 0; i < 512; i++) {",
            store,
            "    }",
            *(("    (void)ckernel::load_blocking(dst + 511);",) if drain else ()),
            *tail)


def _copy(tmp_path: Path, **kw: Any) -> Path:
    return _host(tmp_path, {"copier": ("reader", _copier(**kw)), "writer": ("writer", WRITER)},
                 {"0,0": ("copier", "writer"), "1,0": ()})


@pytest.mark.parametrize("pop_first", [False, True])
def test_drained_copy_between_two_buffers_is_proved(tmp_path: Path, pop_first: bool,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One CopyTiles of c_0's page into c_1, drained, located at the store; before the pop of c_0 when that comes
    first (the loads are done before the pages are freed)."""
    from verispatial.ir.ops import CopyTiles, Pop, Push

    path = _copy(tmp_path, pop_first=pop_first)
    (ep,) = [ep for ep in import_host(path).programs if ep.site == Site(0, 0) and ep.engine.value == "reader"]
    ops = [op for op in walk(ep.ops) if isinstance(op, (CopyTiles, Push, Pop))]
    tail = [Pop(0, 1), Push(1, 1)] if pop_first else [Push(1, 1), Pop(0, 1)]
    assert ops == [Push(0, 1), CopyTiles(0, 1, 1, True), *tail]
    _proved(path, capsys)


@pytest.mark.parametrize("pop_first", [False, True])
def test_copy_published_without_its_drain_is_refuted(tmp_path: Path, pop_first: bool,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Without the blocking load the push may publish the page before the stores land (tt-metal PR #50183):
    async-read-publish. Read as a constant fill before, this was proved."""
    _refuted(_copy(tmp_path, drain=False, pop_first=pop_first), capsys, "async-read-publish")


def test_copy_from_a_page_not_waited_is_refuted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refuted(_copy(tmp_path, wait=False), capsys, "cb-read-unwaited")


@pytest.mark.parametrize("store", ["        dst[i] = (src[i] >> 16) << 16;", "        dst[i] = (uint32_t)(*(src + i));",
                                   "        uint32_t v = src[i]; dst[i] = v;",
                                   "        uint32_t v = src[i] >> 16; v = v << 16; dst[i] = v;"])
def test_a_converting_copy_is_a_copy(tmp_path: Path, store: str) -> None:
    """The stores may convert each loaded element (sort's fp32 -> uint16 staging): still a copy of c_0's page, not
    a constant."""
    from verispatial.ir.ops import CopyTiles

    assert [op for _, op in _ops(_copy(tmp_path, store=store), CopyTiles)] == [CopyTiles(0, 1, 1, True)]


@pytest.mark.parametrize(("store", "construct"), [
    ("        dst[i] = dst[i + 1];", "plain store of a load from a buffer's back pages"),
    ("        dst[i] = src[i] + src[i + 1];", "plain store of loads from several buffer addresses"),
    ("        uint32_t v = src[i] + src[i + 1]; dst[i] = v;", "plain store of loads from several buffer addresses"),
    ("        dst[i] = src[i + 512];", "copy load not from the buffer's next unread page"),
])
def test_copies_the_op_cannot_say_are_refused(tmp_path: Path, store: str, construct: str) -> None:
    _refused(_copy(tmp_path, store=store), construct, "copier.cpp", FIRST + 9)


def test_a_load_not_of_the_last_stored_word_is_no_drain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A blocking load of word 0 lands only the stores up to the last store to word 0 (the first iteration's): the
    copy stays undrained and its push is refuted (docs/semantics.md "Local-store fills"; refused by name before)."""
    from verispatial.ir.ops import CopyTiles

    body = list(_copier())
    body[11] = "    (void)ckernel::load_blocking(dst);"
    path = _host(tmp_path, {"copier": ("reader", tuple(body)), "writer": ("writer", WRITER)},
                 {"0,0": ("copier", "writer"), "1,0": ()})
    assert [op for _, op in _ops(path, CopyTiles)] == [CopyTiles(0, 1, 1, False)]
    _refuted(path, capsys, "async-read-publish")


def test_stores_after_the_drain_are_not_drained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A blocking load lands only the stores before it: a copy store after it leaves the copy undrained, refuted."""
    body = list(_copier())
    body[12:12] = ["    dst[0] = src[0];"]
    path = _host(tmp_path, {"copier": ("reader", tuple(body)), "writer": ("writer", WRITER)},
                 {"0,0": ("copier", "writer"), "1,0": ()})
    from verispatial.ir.ops import CopyTiles

    assert [op for _, op in _ops(path, CopyTiles)] == [CopyTiles(0, 1, 1, False)]
    _refuted(path, capsys, "async-read-publish")


# ------------------------------------------------------------------ a NoC loopback read inside a constant page

def _seeded(*, drain: bool = True, barrier: bool = True) -> tuple[str, ...]:
    """(0,0)'s reader: builds c_1's page as ``generate_index_tile`` does (kernel_lib/index_tile_dataflow.hpp:85-115):
    seed words stored, drained by a blocking load (``drain``), copied down the page by NoC reads from its own L1,
    landed by a read barrier (``barrier``), pushed."""
    return ("    cb_reserve_back(1, 1);",
            "    const uint32_t page = get_write_ptr(1);",
            "    volatile tt_l1_ptr uint32_t* seed = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            "    for (uint32_t m = 0; m < 16; ++m) { seed[m] = m; }",
            *(("    (void)ckernel::load_blocking(seed + 15);",) if drain else ()),
            "    for (uint32_t k = 1; k < 32; ++k) {",
            "        noc_async_read(get_noc_addr(my_x[0], my_y[0], page), page + k * 64, 64);",
            "    }",
            *(("    noc_async_read_barrier();",) if barrier else ()),
            "    cb_push_back(1, 1);")


def test_loopback_reads_inside_a_seeded_page_are_part_of_its_fill(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from verispatial.ir.ops import FillTiles, ReadBarrier

    path = _host(tmp_path, {"seeder": ("reader", _seeded()), "writer": ("writer", WRITER)},
                 {"0,0": ("seeder", "writer"), "1,0": ()})
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 1, "stores", True)]  # the load drains it
    assert _ops(path, RemoteRead) == []
    assert len(_ops(path, ReadBarrier)) == 1
    # the blocking load of the seed's last stored word lands every store before the loopback reads and the push
    # (docs/ttmetal.md "Drains"): proved
    _proved(path, capsys)


@pytest.mark.parametrize(("kw", "construct", "line"), [
    ({"drain": False}, "NoC read of stores not drained", FIRST + 5),
    ({"barrier": False}, "push before the read barrier of a NoC read inside the page", FIRST + 8),
])
def test_loopback_reads_not_ordered_are_refused(tmp_path: Path, kw: dict[str, bool], construct: str,
                                                line: int) -> None:
    path = _host(tmp_path, {"seeder": ("reader", _seeded(**kw)), "writer": ("writer", WRITER)},
                 {"0,0": ("seeder", "writer"), "1,0": ()})
    _refused(path, construct, "seeder.cpp", line)


# ------------------------------------------------------------------ vendor kernels (the pinned ttnn wheel)

def _survey(path: Path, root: Path) -> Refused | None:
    """``path`` read as benchmarks/bench_ttmetal_corpus.py reads it (no host description: every arg 2, every buffer
    index and semaphore declared): None when it reads fully, else its first refusal."""
    from verispatial.frontends.ttmetal.cpp import read_kernel
    from verispatial.frontends.ttmetal.host import HostBuffer, HostKernel, HostSemaphore, HostSpec
    from verispatial.frontends.ttmetal.lower import KernelReader, Shared
    from verispatial.ir.core import Engine
    from verispatial.ir.target import WORMHOLE

    bufs = tuple(HostBuffer(f"c_{i}", i, 2048, 8, "bf16", 1, None, None, None) for i in range(64))
    sems = tuple(HostSemaphore(f"s{i}", 0, None) for i in range(16))
    host = HostSpec("survey", WORMHOLE, root, root, (), (), bufs, sems, (), ())
    display = path.relative_to(root).as_posix()
    kernel = HostKernel(path.stem, path, display, Engine.READER, 0, (), {}, (), {}, False)
    try:
        prog = read_kernel(path, display, {}, root, ())
        KernelReader(Shared(host), kernel, Site(0, 0), {}, prog, survey=True).read()
    except Refused as e:
        return e
    return None



SORT = "ttnn/operations/data_movement/sort/device/kernels/dataflow/"


@pytest.mark.parametrize("kernel", [
    SORT + "writer_cross_core_data_exchange.cpp",  # generate_index_tile: stores, drain, loopback reads, barrier
    SORT + "coordinator_single_row_multi_core.cpp",
    "ttnn/operations/reduction/topk/device/kernels/dataflow/reader_create_index_tensor.cpp",
])
def test_vendor_kernels_building_index_tiles_read_fully(ttnn_cpp: Path, kernel: str) -> None:
    assert _survey(ttnn_cpp / kernel, ttnn_cpp) is None


def test_vendor_loopback_read_of_undrained_stores_is_refused(ttnn_cpp: Path) -> None:
    """deepseek_grouped_gate's writer stores its group indices into a page, then copies them down the page by NoC
    reads of its own L1 with no blocking load between (the hazard tt-metal's audit #50154 fixed in
    generate_index_tile): refused by name at the read."""
    e = _survey(ttnn_cpp / "ttnn/operations/experimental/reduction/deepseek_grouped_gate/device/kernels/dataflow/"
                           "writer_deepseek_grouped_gate.cpp", ttnn_cpp)
    assert e is not None
    assert e.construct == "NoC read of stores not drained"
    assert e.loc.line == 120


def test_paged_cache_writer_stops_at_its_in_place_update(ttnn_cpp: Path) -> None:
    """PR #46658's paged-cache writer: its NoC read of its own L1 (``{.noc_x = my_noc_x, ...}``) is followed now, and
    it stops at what the read does, a row stick landed inside the waited ``untilized_cache`` page (an in-place
    update, which no op says), named at the read's line."""
    e = _survey(ttnn_cpp / "ttnn/operations/experimental/paged_cache/device/kernels/dataflow/"
                           "writer_update_cache_interleaved_start_id.cpp", ttnn_cpp)
    assert e is not None
    assert (e.construct, e.loc.line) == ("read into a buffer's front pages", 156)
