"""The stateful NoC API in the tt-metal front end (issue 18, ``frontends/ttmetal/nocstate.py``): a ``set_state`` call
programs the command buffer's coordinate (and, one-packet, its length), each ``with_state`` call is an ordinary read or
write of that place. Each form is read from a small kernel written here onto the op its plain twin gives (proved
where the kernel is correct, refuted at its C++ line where it races); where the state is not known — never set,
reprogrammed by an ordinary transfer, another place, a length not known, changed by a loop that uses it — the call
is refused by name at its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import FIRST, _host, _ops, _proved, _pull, _push, _refused, _refuted
from verispatial.ir.core import Addr, Site
from verispatial.ir.ops import McastSend, ReadTiles, RemoteRead

_EP = "{.noc_x = 1, .noc_y = 0, .addr = get_read_ptr(0)}"

#: (0,0)'s read of (1,0)'s c_0 front page into c_1, in each stateful form (one line: the read's line)
STATEFUL_READS = {
    "classic one packet": "    { noc_async_read_one_packet_set_state(get_noc_addr(1, 0, get_read_ptr(0)), tile_bytes); "
                          "noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1)); }",
    "classic": "    { noc_async_read_set_state(get_noc_addr(1, 0, 0)); "
               "noc_async_read_with_state(get_read_ptr(0), get_write_ptr(1), tile_bytes); }",
    "object one packet": "    { Noc noc; DataflowBuffer c1(1); "
                         "noc.set_async_read_state<NocOptions::DEFAULT, NOC_MAX_BURST_SIZE>(UnicastEndpoint{}, "
                         f"tile_bytes, {_EP}); "
                         "noc.async_read_with_state<NocOptions::DEFAULT, NOC_MAX_BURST_SIZE>(UnicastEndpoint{}, c1, 0, "
                         f"{_EP}, {{}}); }}",
    "object": "    { Noc noc; DataflowBuffer c1(1); "
              f"noc.set_async_read_state(UnicastEndpoint{{}}, 0, {_EP}); "
              f"noc.async_read_with_state(UnicastEndpoint{{}}, c1, tile_bytes, {_EP}, {{}}); }}",
}


@pytest.mark.parametrize("form", sorted(STATEFUL_READS))
def test_stateful_remote_read_is_the_plain_read(tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The set_state / with_state pair is one RemoteRead of (1,0)'s page 0 into c_1, as ``noc_async_read`` of the
    same place; the one-packet forms take the length from the state (the object form's own size, 0, is not
    sent: noc.h:366-372). The program proves."""
    path = _pull(tmp_path, STATEFUL_READS[form])
    assert _ops(path, RemoteRead) == [(Site(0, 0), RemoteRead(0, Site(1, 0), 1, 1, 0))]
    _proved(path, capsys)


def test_stateful_read_before_the_owner_published_is_refuted(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The broken twin: without the wait for (1,0)'s word the stateful read may run before (1,0) pushed its page:
    remote-read-unpublished, its counterexample at the read's line."""
    path = _pull(tmp_path, STATEFUL_READS["classic one packet"], wait=False)
    hit = _refuted(path, capsys, "remote-read-unpublished")
    assert "puller.cpp:" + str(FIRST + 1) in json.dumps(hit)


@pytest.mark.parametrize(("read", "construct"), [
    # no set_state at all: the registers hold whatever the firmware or an earlier kernel left
    ("    noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1));", "NoC read with state not known"),
    # an ordinary read reprograms the read command buffer's coordinate and length (noc_nonblocking_api.h:433-437)
    ("    { noc_async_read_one_packet_set_state(get_noc_addr(1, 0, get_read_ptr(0)), tile_bytes); "
     "noc_async_read_tile(0, s, get_write_ptr(2)); "
     "noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1)); }", "NoC read with state not known"),
    # the object API's address names another core than the state's: the NoC goes to the state's
    ("    { Noc noc; DataflowBuffer c1(1); noc.set_async_read_state(UnicastEndpoint{}, 0, "
     "{.noc_x = 0, .noc_y = 0, .addr = get_read_ptr(0)}); "
     f"noc.async_read_with_state(UnicastEndpoint{{}}, c1, tile_bytes, {_EP}, {{}}); }}",
     "NoC read with state at another place than its state's"),
    # the multi-packet set_state leaves the length register as it was: a one-packet with_state sends that
    ("    { noc_async_read_set_state(get_noc_addr(1, 0, 0)); "
     "noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1)); }",
     "NoC read with state of a length not known"),
    # the low address of a tensor page is a bank's, which the reading does not follow
    ("    { noc_async_read_one_packet_set_state(get_noc_addr(0, s), tile_bytes); "
     "noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1)); }",
     "NoC read with state of an address in a tensor's bank"),
    # not counted: no read barrier waits for it
    ("    { noc_async_read_one_packet_set_state(get_noc_addr(1, 0, get_read_ptr(0)), tile_bytes); "
     "noc_async_read_one_packet_with_state<false>(get_read_ptr(0), get_write_ptr(1)); }",
     "noc_async_read_one_packet_with_state not counted"),
    # a state kept for another NoC than the kernel's
    ("    { noc_async_read_set_state(get_noc_addr(1, 0, 0), 1); "
     "noc_async_read_with_state(get_read_ptr(0), get_write_ptr(1), tile_bytes); }",
     "stateful NoC call on a NoC named explicitly"),
])
def test_stateful_reads_without_a_known_state_are_refused(tmp_path: Path, read: str, construct: str) -> None:
    _refused(_pull(tmp_path, read), construct, "puller.cpp", FIRST + 3)


def _owner(tmp_path: Path, read: str) -> Path:
    """(0,0)'s reader reads tile 0 of ``src`` into c_0 with ``read`` (a line) and publishes it; its writer writes
    it to ``dst``."""
    body = ("    cb_reserve_back(0, 1);", read, "    noc_async_read_barrier();", "    cb_push_back(0, 1);")
    sink = ("    cb_wait_front(0, 1);", "    noc_async_write_tile(0, d, get_read_ptr(0));",
            "    noc_async_write_barrier();", "    cb_pop_front(0, 1);")
    return _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", sink)}, {"0,0": ("reader", "writer")})


def test_stateful_tensor_page_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The object API's stateful read of a tensor page: the state's bank is the page's, and the read is the page's
    ReadTiles; a with_state naming another page (possibly another bank) is refused at its line."""
    same = ("    { Noc noc; DataflowBuffer c0(0); noc.set_async_read_state(s, tile_bytes, {.page_id = 0}); "
            "noc.async_read_with_state(s, c0, tile_bytes, {.page_id = 0}, {}); }")
    path = _owner(tmp_path, same)
    assert [op for _, op in _ops(path, ReadTiles)] == [ReadTiles("src", Addr(0), 1, 0)]
    _proved(path, capsys)
    other = same.replace("async_read_with_state(s, c0, tile_bytes, {.page_id = 0}",
                         "async_read_with_state(s, c0, tile_bytes, {.page_id = 1}")
    _refused(_owner(tmp_path, other), "NoC read with state at another place than its state's", "reader.cpp",
             FIRST + 1)


def test_state_set_in_a_loop_flows_to_the_next_iteration(tmp_path: Path) -> None:
    """A loop of two iterations whose body reads with the state, then sets another core's: the second iteration
    reads at the new state's core (the reading once gave every iteration the state the loop was entered with)."""
    read = ("    { noc_async_read_one_packet_set_state(get_noc_addr(1, 0, 0), tile_bytes); "
            "for (uint32_t i = 0; i < 2; i++) { cb_reserve_back(1, 1); "
            "noc_async_read_one_packet_with_state(get_read_ptr(0), get_write_ptr(1)); noc_async_read_barrier(); "
            "cb_push_back(1, 1); cb_wait_front(0, 1); cb_pop_front(0, 1); "
            "noc_async_read_one_packet_set_state(get_noc_addr(0, 0, 0), tile_bytes); } }")
    body = ("    cb_reserve_back(0, 2);", "    cb_push_back(0, 2);", read)
    path = _host(tmp_path, {"k": ("reader", body)}, {"0,0": ("k",), "1,0": ()})
    assert [op.at for _, op in _ops(path, RemoteRead)] == [Site(1, 0), Site(0, 0)]


def test_stateful_remote_write_is_the_plain_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``noc_async_write_one_packet_set_state`` / ``_with_state`` of c_0's front page into (1,0)'s c_2 at its write
    pointer: the McastSend to the one-core group the plain ``noc_async_write`` gives; a posted one is refused."""
    write = ("    { noc_async_write_one_packet_set_state(get_noc_addr(1, 0, 0), tile_bytes); "
             "noc_async_write_one_packet_with_state(get_read_ptr(0), get_write_ptr(2)); }")
    path = _push(tmp_path, write)
    sends = [op for _, op in _ops(path, McastSend) if op.dst == 2]
    assert len(sends) == 1
    _proved(path, capsys)
    _refused(_push(tmp_path, write.replace("one_packet_set_state(", "one_packet_set_state<true>(")),
             "posted noc_async_write_one_packet_set_state", "sender.cpp", FIRST + 3)


@pytest.mark.parametrize("read", [
    # C++'s most vexing parse: tree-sitter reads ``CoreLocalMem<uint32_t> dst(w);`` as a function declaration
    "    { Noc noc; uint32_t w = get_write_ptr(1); CoreLocalMem<uint32_t> dst(w); "
    f"noc.async_read(UnicastEndpoint{{}}, dst, tile_bytes, {_EP}, {{}}); }}",
    # the endpoint's arguments spelled with their type (pool's experimental_device_api.hpp:37-39)
    "    { Noc noc; DataflowBuffer c1(1); UnicastEndpoint ep; noc.async_read(ep, c1, tile_bytes, "
    "noc_traits_t<UnicastEndpoint>::src_args_type{.noc_x = 1, .noc_y = 0, .addr = get_read_ptr(0)}, {}); }",
])
def test_object_api_spellings_of_a_remote_read(tmp_path: Path, read: str) -> None:
    """Two spellings the stateful kernels use around their reads (transpose's ``CoreLocalMem<uint32_t>
    dst(l1_write_addr)``, the pool helpers' typed ``src_args_type``): the RemoteRead of the plain form (once
    ``read into L1 not a buffer's pages`` and ``UnicastEndpoint without its core and address``)."""
    assert _ops(_pull(tmp_path, read), RemoteRead) == [(Site(0, 0), RemoteRead(0, Site(1, 0), 1, 1, 0))]


_WEP = "{.noc_x = 1, .noc_y = 0, .addr = get_write_ptr(2)}"


def test_object_api_stateful_write_and_its_lost_state(tmp_path: Path) -> None:
    """``noc.set_async_write_state`` / ``async_write_with_state`` of c_0's front page into (1,0)'s c_2: the McastSend
    the plain ``noc.async_write`` gives; an ordinary NoC write between them reprograms the write command buffer, so
    the with_state is refused by name."""
    write = ("    { Noc noc; DataflowBuffer c0(0); "
             f"noc.set_async_write_state(UnicastEndpoint{{}}, 0, {_WEP}); "
             f"noc.async_write_with_state(c0, UnicastEndpoint{{}}, tile_bytes, {{}}, {_WEP}); }}")
    sends = [op for _, op in _ops(_push(tmp_path, write), McastSend)]
    assert [(op.buf, op.pages, op.front, op.dst, op.offset) for op in sends] == [(0, 1, True, 2, 0)]
    lost = write.replace("noc.async_write_with_state(",
                         "noc_async_write_tile(0, d, get_read_ptr(0)); noc.async_write_with_state(")
    _refused(_push(tmp_path, lost), "NoC write with state not known", "sender.cpp", FIRST + 3)


def test_one_packet_transfers_are_the_plain_ones(tmp_path: Path) -> None:
    """``noc_async_read_one_packet`` / ``noc_async_write_one_packet`` (dataflow_api.h:515, :840) are the plain read
    and write issued as one packet: the same ops; a size past ``NOC_MAX_BURST_SIZE`` (8,192 B on Wormhole) and a
    posted write are refused by name (once ``call to noc_async_read_one_packet``)."""
    read = "    noc_async_read_one_packet(get_noc_addr(1, 0, get_read_ptr(0)), get_write_ptr(1), tile_bytes);"
    assert _ops(_pull(tmp_path, read), RemoteRead) == [(Site(0, 0), RemoteRead(0, Site(1, 0), 1, 1, 0))]
    _refused(_pull(tmp_path, read.replace("tile_bytes", "4 * 4096")),
             "noc_async_read_one_packet of a size not known to fit one packet", "puller.cpp", FIRST + 3)
    write = "    noc_async_write_one_packet(get_read_ptr(0), get_noc_addr(1, 0, get_write_ptr(2)), tile_bytes);"
    sends = [op for _, op in _ops(_push(tmp_path, write), McastSend)]
    assert [(op.buf, op.dst) for op in sends] == [(0, 2)]
    _refused(_push(tmp_path, write.replace("one_packet(", "one_packet<true, true>(")),
             "posted noc_async_write_one_packet", "sender.cpp", FIRST + 3)
