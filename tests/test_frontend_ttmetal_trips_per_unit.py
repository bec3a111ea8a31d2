"""A runtime-arg range given in several work units: one trip per unit unless the file names the trip.

Each work unit is its own ``SetRuntimeArgs`` on its own cores, and the host may give each a different value (core
groups 1 and 2 of ``split_work_to_cores`` get different counts). A new user's sender (core (0,0)) and receiver
(core (1,0)) each took ``n: '1..4'``; read as one trip they proved, where 3 against 4 hangs the receiver at its
semaphore wait (``noc_semaphore_wait_min``, dataflow_api.h).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verispatial.cli import main
from verispatial.frontends.ttmetal.host import TripRange, load_host

pytest.importorskip("tree_sitter_cpp")

SND = (
    "#include \"api/dataflow/dataflow_api.h\"\n"
    "void kernel_main() {\n"
    "    uint32_t src_addr = get_arg_val<uint32_t>(0);\n"
    "    uint32_t n = get_arg_val<uint32_t>(1);\n"
    "    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));\n"
    "    uint32_t data_addr = get_semaphore(get_compile_time_arg_val(1));\n"
    "    volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_addr);\n"
    "    const InterleavedAddrGenFast<true> s = {.bank_base_address = src_addr, .page_size = 2048, .data_format = DataFormat::Float16_b};\n"
    "    for (uint32_t i = 0; i < n; ++i) {\n"
    "        cb_reserve_back(0, 1);\n"
    "        uint32_t l1 = get_write_ptr(0);\n"
    "        noc_async_read_tile(i, s, l1);\n"
    "        noc_async_read_barrier();\n"
    "        noc_semaphore_wait_min(ready, i + 1);\n"
    "        noc_async_write(l1, get_noc_addr(1, 0, l1), 2048);\n"
    "        noc_async_write_barrier();\n"
    "        noc_semaphore_inc(get_noc_addr(1, 0, data_addr), 1);\n"
    "        noc_async_atomic_barrier();\n"
    "        cb_push_back(0, 1);\n"
    "    }\n"
    "    noc_async_write_barrier();\n"
    "}\n"
)
RCV = (
    "#include \"api/dataflow/dataflow_api.h\"\n"
    "void kernel_main() {\n"
    "    uint32_t n = get_arg_val<uint32_t>(0);\n"
    "    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));\n"
    "    uint32_t data_addr = get_semaphore(get_compile_time_arg_val(1));\n"
    "    volatile tt_l1_ptr uint32_t* data = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(data_addr);\n"
    "    for (uint32_t i = 0; i < n; ++i) {\n"
    "        cb_reserve_back(0, 1);\n"
    "        noc_semaphore_inc(get_noc_addr(0, 0, ready_addr), 1);\n"
    "        noc_semaphore_wait_min(data, i + 1);\n"
    "        cb_push_back(0, 1);\n"
    "    }\n"
    "    noc_async_atomic_barrier();\n"
    "}\n"
)
WRITER = (
    "#include \"api/dataflow/dataflow_api.h\"\n"
    "void kernel_main() {\n"
    "    const uint32_t dst_addr = get_arg_val<uint32_t>(0);\n"
    "    const uint32_t start = get_arg_val<uint32_t>(1);\n"
    "    const uint32_t n = get_arg_val<uint32_t>(2);\n"
    "    const InterleavedAddrGenFast<true> s = {.bank_base_address = dst_addr, .page_size = 2048, .data_format = DataFormat::Float16_b};\n"
    "    for (uint32_t i = 0; i < n; ++i) {\n"
    "        cb_wait_front(0, 1);\n"
    "        noc_async_write_tile(start + i, s, get_read_ptr(0));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(0, 1);\n"
    "    }\n"
    "}\n"
)


def _host(tmp_path: Path, n0: Any, n1: Any, one_unit: bool = False) -> Path:
    """The sender and a writer on (0,0), the receiver and a writer on (1,0), each count given as ``n0`` / ``n1``."""
    for name, text in (("snd.cpp", SND), ("rcv.cpp", RCV), ("writer.cpp", WRITER)):
        (tmp_path / name).write_text(text)
    sems = [{"semaphore": "ready"}, {"semaphore": "data"}]
    units = [{"cores": "0,0", "kernels": ["snd", "writer"],
              "runtime_args": {"snd": {"src_addr": {"tensor": "src"}, "n": n0},
                               "writer": {"dst_addr": {"tensor": "dst"}, "start": 0, "n": n0}}},
             {"cores": "1,0", "kernels": ["rcv", "writer"],
              "runtime_args": {"rcv": {"n": n1}, "writer": {"dst_addr": {"tensor": "dst"}, "start": 4, "n": n1}}}]
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "fwd",
            "tensors": [{"name": "src", "shape": [32, 128], "dtype": "bf16", "role": "input"},
                        {"name": "dst", "shape": [32, 256], "dtype": "bf16", "role": "activation"}],
            "buffers": [{"name": "in", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "Float16_b"}],
            "semaphores": [{"name": "ready", "initial_value": 0}, {"name": "data", "initial_value": 0}],
            "kernels": [{"name": "snd", "source": "snd.cpp", "processor": "reader", "compile_time_args": sems,
                         "runtime_args": ["src_addr", "n"]},
                        {"name": "rcv", "source": "rcv.cpp", "processor": "reader", "compile_time_args": sems,
                         "runtime_args": ["n"]},
                        {"name": "writer", "source": "writer.cpp", "processor": "writer",
                         "runtime_args": ["dst_addr", "start", "n"]}],
            "work_units": units[:1] if one_unit else units}
    path = tmp_path / "host.yaml"  # JSON is YAML
    path.write_text(json.dumps(host))
    return path


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, set[str]]:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    cexs = [r["counterexample"] for r in json.loads(capsys.readouterr().out)["results"] if r["verdict"] == "refuted"]
    return rc, {c["violation"]["rule"] if "violation" in c else c["kind"] for c in cexs}


def test_a_range_in_two_units_is_two_trips_and_the_hang_is_refuted(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _host(tmp_path, "1..4", "1..4")
    host = load_host(path)
    assert host.work_units[0].runtime_args["snd"]["n"] == TripRange("n@work_units[0]", 1, 4)
    assert host.work_units[1].runtime_args["rcv"]["n"] == TripRange("n@work_units[1]", 1, 4)
    # within a unit the same name is one value (one host variable passed to each kernel of those cores)
    assert host.work_units[1].runtime_args["writer"]["n"] == host.work_units[1].runtime_args["rcv"]["n"]
    assert _certify(path, capsys) == (1, {"deadlock"})


def test_a_trip_named_in_the_file_is_one_value_across_units(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    shared = {"range": "1..4", "trip": "n"}
    assert _certify(_host(tmp_path, shared, shared), capsys) == (0, set())


def test_a_range_in_one_unit_keeps_the_args_name(tmp_path: Path) -> None:
    host = load_host(_host(tmp_path, "1..4", "1..4", one_unit=True))
    assert host.work_units[0].runtime_args["snd"]["n"] == TripRange("n", 1, 4)


def test_a_named_compile_time_range_of_two_kernels_is_two_trips(tmp_path: Path) -> None:
    """A named compile-time arg is its kernel's own (``CreateKernel``'s ``named_compile_args``), as a positional
    one is: two kernels given ``n: '1..4'`` are two values unless the trip is named in both."""
    path = _host(tmp_path, 2, 2)
    d = json.loads(path.read_text())
    d["kernels"][0]["named_compile_time_args"] = {"k": "1..4"}
    d["kernels"][1]["named_compile_time_args"] = {"k": "1..4"}
    d["kernels"][2]["named_compile_time_args"] = {"k": {"range": "1..4", "trip": "k"}}
    path.write_text(json.dumps(d))
    got = {k.name: k.named_compile_time_args["k"] for k in load_host(path).kernels}
    assert got == {"snd": TripRange("snd.k", 1, 4), "rcv": TripRange("rcv.k", 1, 4), "writer": TripRange("k", 1, 4)}


@pytest.mark.parametrize(("n0", "n1"), [({"range": "1..4", "trip": "n"}, "1..4"), ("1..4", {"range": "1..4", "trip": "n"})])
def test_an_unnamed_range_never_joins_a_trip_named_elsewhere(tmp_path: Path, n0: Any, n1: Any,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's unit 0 named trip ``n`` and unit 1's unnamed ``n: 1..4`` became that trip: one value where the
    host may give two (3 against 4 hangs the receiver)."""
    path = _host(tmp_path, n0, n1)
    host = load_host(path)
    assert host.work_units[0].runtime_args["snd"]["n"] != host.work_units[1].runtime_args["rcv"]["n"]
    assert _certify(path, capsys) == (1, {"deadlock"})
