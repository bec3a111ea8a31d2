"""A classic call's ``noc`` argument: every transfer and barrier of ``dataflow_api.h`` takes ``uint8_t noc =
noc_index`` (ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/dataflow_api.h``: ``noc_async_read`` :547-551,
``noc_async_read_tile`` :1278-1283, ``noc_async_read_barrier`` :1919, ``noc_async_write_barrier`` :1949), and a
barrier waits on the counters of its own NoC only (``while (!ncrisc_noc_reads_flushed(noc))``, :1919-1931). The model
keeps one set of counters per engine, so a read on NoC 1 and a barrier on NoC 0 (or the reverse) would be read as
landed while the board may still be writing its bytes: the push publishes a stale tile. Until 2026-12-06 the
argument was ignored and each such kernel below was proved. Now a call on a NoC other than the kernel's is refused by
name at its line; ``noc_index`` and the kernel's NoC number read as before."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_patch import BARRIER, PUSH, READ
from tests.test_frontend_ttmetal_remote import FIRST, WRITER, _host, _proved, _refused

#: the reader's read of src's tile 0 into c_1 with a classic noc_async_read on NoC ``{noc}``
CLASSIC = ("    cb_reserve_back(1, 1);",
           "    noc_async_read(get_noc_addr(0, s), get_write_ptr(1), tile_bytes{noc});")


def _path(tmp_path: Path, body: tuple[str, ...]) -> Path:
    return _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", WRITER)},
                 {"0,0": ("reader", "writer"), "1,0": ()})


@pytest.mark.parametrize(("body", "line"), [
    ((*READ, "    noc_async_read_barrier(1);", PUSH), len(READ)),  # the read on NoC 0, its barrier on NoC 1
    ((*READ, "    noc_async_full_barrier(1);", PUSH), len(READ)),
    ((CLASSIC[0], CLASSIC[1].format(noc=", 1"), BARRIER, PUSH), 1),  # the read on NoC 1, its barrier on NoC 0
    ((READ[0], "    noc_async_read_tile(0, s, get_write_ptr(1), 0, 1);", BARRIER, PUSH), 1),
])
def test_a_read_and_its_barrier_on_two_nocs_are_refused(tmp_path: Path, body: tuple[str, ...], line: int) -> None:
    """Each was proved before: the barrier was read as landing the read whatever NoC either named."""
    e = _refused(_path(tmp_path, body), "NoC call on another NoC than the kernel's", "reader.cpp", FIRST + line)
    assert "NoC 1, the kernel's is NoC 0" in e.detail


def test_a_writes_barrier_on_the_other_noc_is_refused(tmp_path: Path) -> None:
    """The writer's NoC is the host's ``noc`` of the kernel, when not given a writer's 1 (a reader's 0: ``host.py``
    ``_DEFAULT_NOC``)."""
    writer = (WRITER[0], WRITER[1], "    noc_async_write_barrier(0);", WRITER[3])
    path = _host(tmp_path, {"reader": ("reader", (*READ, BARRIER, PUSH)), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer"), "1,0": ()})
    e = _refused(path, "NoC call on another NoC than the kernel's", "writer.cpp", FIRST + 2)
    assert "NoC 0, the kernel's is NoC 1" in e.detail


@pytest.mark.parametrize("noc", [", noc_index", ", 0", ""])
def test_the_kernels_own_noc_named_or_not_is_proved(tmp_path: Path, noc: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    body = (CLASSIC[0], CLASSIC[1].format(noc=noc), f"    noc_async_read_barrier({noc[2:]});", PUSH)
    _proved(_path(tmp_path, body), capsys)


def test_a_multicast_on_the_other_noc_is_refused_after_its_corners(tmp_path: Path) -> None:
    """``noc_async_write_multicast(src, dst, size, num_dests, linked, noc)`` (dataflow_api.h): the corners are checked
    against the NoC the call names (a one-core rectangle is in order on either), then the NoC against the kernel's,
    whose write barrier would not wait for the multicast's acknowledgements."""
    mcast = "    noc_async_write_multicast(get_read_ptr(1), get_noc_multicast_addr(1, 0, 1, 0, get_read_ptr(1)), " \
            "tile_bytes, 1, false, {noc});"
    writer = (WRITER[0], mcast.format(noc=0), "    noc_async_write_barrier();", WRITER[3])
    path = _host(tmp_path, {"reader": ("reader", (*READ, BARRIER, PUSH)), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer"), "1,0": ()})
    _refused(path, "NoC call on another NoC than the kernel's", "writer.cpp", FIRST + 1)
