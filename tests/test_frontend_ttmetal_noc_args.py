"""Two arguments of NoC calls the tt-metal front end dropped (new-user report nu15, items 3 and 4).

A ``Noc`` argument of a ``Semaphore`` method: ``set_multicast(noc, ...)``, ``inc_multicast(noc, ...)`` and ``up(noc,
x, y, value)`` issue on *that* Noc's index (ttnn 0.81.1 ``tt_metal/hw/inc/api/semaphore.h:197-203, 240-251,
300-309``). With ``Noc other(1)`` in a NoC-0 kernel the multicast's corners are NoC 1's (a rectangle in order on NoC 0
is a wrap-around one on NoC 1, ``sanitize.h:563-564``) and its acknowledgements are counted on NoC 1, which the
kernel's NoC-0 barrier does not wait for. The reading took every such argument as the kernel's NoC and proved; now a
``Noc`` argument not the kernel's is refused by name at the call (the model keeps one set of counters per engine).

The ``linked`` flag of a multicast (``noc_async_write_multicast(..., linked)``, ``noc_semaphore_set_multicast(...,
linked)``, ``Semaphore.set_multicast(..., linked)``): after a linked multicast the NoC's next transaction must be a
multicast on the same VC, else the NoC initiates no new transaction (tenstorrent/tt-metal#24453, PR #25307;
tenstorrent/tt-isa-documentation#7). The flag was never read and each kernel below that leaves its path open proved.
Now it is read as a value, and a linked multicast must be followed at once (its next statement) by a multicast on
the same NoC and VC; anything else is refused by name. The vendor's use, a linked data multicast followed by its flag
multicast, reads as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import _certify, _refused
from verispatial.frontends.ttmetal import import_host
from verispatial.ir.ops import McastSetValid
from verispatial.ir.program import walk

# ------------------------------------------------------------------ a Noc argument of a Semaphore method

_SEM_HEAD = ('#include "api/dataflow/dataflow_api.h"', '#include "api/dataflow/noc.h"', '#include "api/semaphore.h"',
             "void kernel_main() {", "    Noc noc;", "    Semaphore<> s(get_compile_time_arg_val(0));")
#: the line of a semaphore kernel's first body statement
SEM_FIRST = len(_SEM_HEAD) + 1


def _sem_host(tmp_path: Path, body: tuple[str, ...], at: str, waiters: str, engine: str = "writer") -> Path:
    """Kernel ``snd`` (``body``, NoC 0) on core ``at``; a kernel on each core of ``waiters`` waits for its word ``s``
    to be 1."""
    (tmp_path / "snd.cpp").write_text("\n".join([*_SEM_HEAD, *body, "}"]))
    (tmp_path / "rcv.cpp").write_text("\n".join([*_SEM_HEAD, "    s.wait(1);", "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "sem", "kernel_root": str(tmp_path),
            "semaphores": [{"name": "s", "initial_value": 0}],
            "kernels": [{"name": "snd", "source": "snd.cpp", "processor": engine, "noc": 0,
                         "compile_time_args": [{"semaphore": "s"}]},
                        {"name": "rcv", "source": "rcv.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "s"}]}],
            "work_units": [{"cores": at, "kernels": ["snd"]}, {"cores": waiters, "kernels": ["rcv"]}]}
    path = tmp_path / "host.yaml"  # JSON is YAML
    path.write_text(json.dumps(host))
    return path


def _mcast_set(noc: str, decl: str = "", linked: str = "") -> tuple[str, ...]:
    return (*((decl,) if decl else ()), "    s.set(1);", f"    s.set_multicast({noc}, 1, 0, 2, 0, 2{linked});",
            "    noc.async_write_barrier();")


@pytest.mark.parametrize("body", [
    _mcast_set("other", "    Noc other(1);"),  # t11_sem_setmcast_othernoc
    _mcast_set("other", "    Noc other{1};"),
    _mcast_set("Noc(1)"),
    ("    Noc other(1);", "    s.inc_multicast(other, 1, 0, 2, 0, 1, 2);", "    noc.async_atomic_barrier();"),
])
def test_a_semaphore_multicast_on_another_noc_is_refused(tmp_path: Path, body: tuple[str, ...]) -> None:
    """Proved before: the multicast was read on NoC 0 and its barrier as waiting for it."""
    line = SEM_FIRST + next(i for i, s in enumerate(body) if "multicast" in s)
    e = _refused(_sem_host(tmp_path, body, "0,0", "1,0-2,0"), "Semaphore method on another NoC than the kernel's",
                 "snd.cpp", line)
    assert "NoC 0" in e.detail


def test_a_semaphore_up_on_another_noc_is_refused(tmp_path: Path) -> None:
    """t10_sem_up_othernoc: the increment on NoC 1, its atomic barrier on NoC 0."""
    body = ("    Noc other(1);", "    s.up(other, 0, 0, 1);", "    noc.async_atomic_barrier();")
    _refused(_sem_host(tmp_path, body, "1,0", "0,0", "reader"), "Semaphore method on another NoC than the kernel's",
             "snd.cpp", SEM_FIRST + 1)


@pytest.mark.parametrize("body", [
    _mcast_set("noc"),
    _mcast_set("own", "    Noc own(0);"),
    _mcast_set("own", "    Noc own{noc_index};"),
    _mcast_set("noc", linked=", false"),
])
def test_a_semaphore_multicast_on_the_kernels_noc_is_proved(tmp_path: Path, body: tuple[str, ...],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    rc, results = _certify(_sem_host(tmp_path, body, "0,0", "1,0-2,0"), capsys)
    assert rc == 0, [r for r in results if r["verdict"] != "proved"]


def test_a_semaphore_up_on_the_kernels_noc_is_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    s.up(noc, 0, 0, 1);", "    noc.async_atomic_barrier();")
    rc, results = _certify(_sem_host(tmp_path, body, "1,0", "0,0", "reader"), capsys)
    assert rc == 0, [r for r in results if r["verdict"] != "proved"]



def test_a_semaphore_multicast_including_its_sender_is_a_loopback_group(tmp_path: Path) -> None:
    """``set_multicast<NocOptions::MCAST_INCL_SRC>`` is ``noc_semaphore_set_multicast_loopback_src``: the sender's own
    word is written too (api/dataflow/semaphore_dm_impl.h:278-282). It was read as a group without the sender."""
    body = ("    s.set(1);", "    s.set_multicast<NocOptions::MCAST_INCL_SRC>(noc, 0, 0, 2, 0, 3);",
            "    noc.async_write_barrier();")
    p = import_host(_sem_host(tmp_path, body, "0,0", "1,0-2,0"))
    (op,) = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, McastSetValid)]
    assert p.groups[op.group].loopback
    assert p.groups[op.group].rect == (0, 0, 2, 0)
    body = ("    s.set(1);", "    s.inc_multicast<NocOptions::MCAST_INCL_SRC>(noc, 1, 0, 2, 0, 1, 2);",
            "    noc.async_atomic_barrier();")
    _refused(_sem_host(tmp_path, body, "0,0", "1,0-2,0"), "Semaphore.inc_multicast with NocOptions::MCAST_INCL_SRC",
             "snd.cpp", SEM_FIRST + 1)


@pytest.mark.parametrize("call", [
    # tree-sitter reads ``(s.set_multicast < A) | (B > (noc, ...))``: the multicast was dropped (a new user's s11)
    "    s.set_multicast<NocOptions::MCAST_INCL_SRC | NocOptions::POSTED>(noc, 0, 0, 2, 0, 3);",
    "    s.set_multicast<NocOptions::DEFAULT | NocOptions::DEFAULT>(noc, 1, 0, 2, 0, 2);",
])
def test_a_call_parsed_as_comparisons_is_refused_not_dropped(tmp_path: Path, call: str) -> None:
    body = ("    s.set(1);", call, "    noc.async_write_barrier();")
    _refused(_sem_host(tmp_path, body, "0,0", "1,0-2,0"), "statement read as a comparison whose value is discarded",
             "snd.cpp", SEM_FIRST + 1)

# ------------------------------------------------------------------ the linked flag


@pytest.mark.parametrize("body", [
    _mcast_set("noc", linked=", true"),  # k02_sem_linked: the path is left open at the kernel's end
    ("    constexpr bool link = 1 > 0;", *_mcast_set("noc", linked=", link")),  # the flag as a value
])
def test_a_linked_semaphore_multicast_left_open_is_refused(tmp_path: Path, body: tuple[str, ...]) -> None:
    line = SEM_FIRST + next(i for i, s in enumerate(body) if "multicast" in s)
    e = _refused(_sem_host(tmp_path, body, "0,0", "1,0-2,0"), "linked multicast not followed by a multicast",
                 "snd.cpp", line)
    assert "tt-metal#24453" in e.detail


def test_a_linked_semaphore_multicast_closed_by_the_next_is_read(tmp_path: Path) -> None:
    """A comment between the two is no statement; the two multicasts are read as before."""
    body = ("    s.set(1);", "    s.set_multicast(noc, 1, 0, 2, 0, 2, true);",
            "    // the second closes the path", "    s.set_multicast(noc, 1, 0, 2, 0, 2);",
            "    noc.async_write_barrier();")
    p = import_host(_sem_host(tmp_path, body, "0,0", "1,0-2,0"))
    assert [type(op) for ep in p.programs for op in walk(ep.ops) if isinstance(op, McastSetValid)] == \
        [McastSetValid, McastSetValid]


#: k01 / k03's sender: each block read from DRAM, multicast to (1,0)-(2,0) with its flag; ``{data}`` and ``{flag}``
#: the two calls' trailing arguments, ``{between}`` statements between them
_SENDER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t src_addr = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb = 16;
    constexpr uint32_t num_dests = 2;
    uint32_t sender_sem_addr = get_semaphore(get_compile_time_arg_val(0));
    uint32_t receiver_sem_addr = get_semaphore(get_compile_time_arg_val(1));
    volatile tt_l1_ptr uint32_t* sender_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem_addr);
    volatile tt_l1_ptr uint32_t* receiver_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem_addr);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = src_addr, .page_size = get_tile_size(cb)};
    *receiver_sem = VALID;
    for (uint32_t b = 0; b < 4; b++) {
        cb_reserve_back(cb, 1);
        uint32_t l1 = get_write_ptr(cb);
        noc_async_read_tile(b, s, l1);
        noc_async_read_barrier();
        noc_semaphore_wait(sender_sem, num_dests);
        noc_semaphore_set(sender_sem, 0);
        noc_async_write_multicast(l1, get_noc_multicast_addr(1, 0, 2, 0, l1), get_tile_size(cb), num_dests{data});
{between}        noc_semaphore_set_multicast(receiver_sem_addr, get_noc_multicast_addr(1, 0, 2, 0, receiver_sem_addr), \
num_dests{flag});
        cb_push_back(cb, 1);
    }
    noc_async_write_barrier();
}
"""
#: the lines of the data multicast and of the flag multicast (with nothing between them)
DATA_LINE, FLAG_LINE = 19, 20

_RECEIVER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr uint32_t cb = 16;
    uint32_t sender_sem_addr = get_semaphore(get_compile_time_arg_val(0));
    volatile tt_l1_ptr uint32_t* receiver_sem =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(1)));
    uint64_t sender_sem_noc = get_noc_addr(0, 0, sender_sem_addr);
    for (uint32_t b = 0; b < 4; b++) {
        cb_reserve_back(cb, 1);
        noc_semaphore_set(receiver_sem, INVALID);
        noc_semaphore_inc(sender_sem_noc, 1);
        noc_semaphore_wait(receiver_sem, VALID);
        cb_push_back(cb, 1);
    }
    noc_async_atomic_barrier();
}
"""

_WRITER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    uint32_t start_id = get_arg_val<uint32_t>(1);
    const InterleavedAddrGenFast<true> d = {.bank_base_address = dst_addr, .page_size = get_tile_size(16)};
    for (uint32_t i = start_id; i < start_id + 4; ++i) {
        cb_wait_front(16, 1);
        noc_async_write_tile(i, d, get_read_ptr(16));
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
"""


def _mcast_host(tmp_path: Path, data: str, flag: str, between: str = "") -> Path:
    """k01 / k03 (nu15): core (0,0) multicasts each tile of src to (1,0) and (2,0); every core writes its tiles to
    its part of dst."""
    (tmp_path / "sender.cpp").write_text(_SENDER.replace("{data}", data).replace("{flag}", flag)
                                         .replace("{between}", between))
    (tmp_path / "receiver.cpp").write_text(_RECEIVER)
    (tmp_path / "writer.cpp").write_text(_WRITER)
    sems = [{"semaphore": "sender_sem"}, {"semaphore": "receiver_sem"}]
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "mcast", "kernel_root": str(tmp_path),
            "tensors": [{"name": "src", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [96, 128], "dtype": "bf16", "role": "output"}],
            "buffers": [{"name": "out", "index": 16, "entry_size": 2048, "entries": 2, "data_format": "bf16"}],
            "semaphores": [{"name": "sender_sem", "initial_value": 0}, {"name": "receiver_sem", "initial_value": 0}],
            "kernels": [{"name": "sender", "source": "sender.cpp", "processor": "reader", "compile_time_args": sems,
                         "runtime_args": ["src_addr"]},
                        {"name": "receiver", "source": "receiver.cpp", "processor": "reader",
                         "compile_time_args": sems},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer",
                         "runtime_args": ["dst_addr", "start_id"]}],
            "work_units": [{"cores": "0,0", "kernels": ["sender", "writer"],
                            "runtime_args": {"sender": {"src_addr": {"tensor": "src"}},
                                             "writer": {"dst_addr": {"tensor": "dst"}, "start_id": 0}}}]
            + [{"cores": f"{x},0", "kernels": ["receiver", "writer"],
                "runtime_args": {"writer": {"dst_addr": {"tensor": "dst"}, "start_id": 4 * x}}} for x in (1, 2)]}
    path = tmp_path / "host.yaml"
    path.write_text(json.dumps(host))
    return path


@pytest.mark.parametrize(("data", "flag", "between", "line"), [
    ("", ", true", "", FLAG_LINE),  # k01_linked_last: the next iteration's unicast read follows the linked flag
    (", true", ", true", "", FLAG_LINE),
    (", 2 > 1", "", "        noc_semaphore_set(sender_sem, 0);\n", DATA_LINE),  # a statement between the two
    (", true", "", "        noc_async_read_barrier();\n", DATA_LINE),  # not the vendor's pattern: refused
])
def test_a_linked_multicast_not_followed_by_a_multicast_is_refused(tmp_path: Path, data: str, flag: str,
                                                                   between: str, line: int) -> None:
    """Each proved before (the flag was never read); on the board the NoC stops initiating transactions."""
    _refused(_mcast_host(tmp_path, data, flag, between), "linked multicast not followed by a multicast",
             "sender.cpp", line)


@pytest.mark.parametrize(("data", "flag"), [
    (", true", ""),  # k03_ctrl_linked_data: the vendor's linked data multicast and its flag
    (", true", ", false"),
    (", false", ""),
    ("", ""),
])
def test_the_vendors_linked_data_then_flag_multicast_is_proved(tmp_path: Path, data: str, flag: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    rc, results = _certify(_mcast_host(tmp_path, data, flag), capsys)
    assert rc == 0, [r for r in results if r["verdict"] != "proved"]
