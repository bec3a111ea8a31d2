"""The throughput bound (verispatial/petri/throughput.py) against the timed run of the interpreter with the same
latencies: on small pipelines the bound is never beaten — no run of N work items ends before
``floor((N - 1) / k) * w`` cycles for the critical cycle (``w`` cycles over ``k`` tokens), and the steady cycles per
item are at least the bound — and on a chain of stages it is met exactly."""

from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from builders import A, buf, ep, prog

from verispatial import cli
from verispatial.ir import Engine, Pop, Push, Reserve, Wait
from verispatial.ir.serialize import dumps, load_program, program_from_dict
from verispatial.ir.target import LATENCIES, latencies_of
from verispatial.petri.throughput import (
    Edge,
    ThroughputError,
    max_cycle_ratio,
    throughput_bound,
    timed_run,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL = ["pipeline_small", "peeled_k_loop", "mcast_pair", "counter_release", "valid_source", "vendor_receiver"]


def chain(k: int, caps: tuple[int, int], tiles: int, reads: int = 1) -> dict[str, Any]:
    """reader -> c_0 -> compute (a matmul step of ``tiles`` tiles) -> c_16 -> writer on (0,0), ``k`` pages."""
    lp = {"op": "loop", "var": "k", "count": k}
    addr = {"base": 0, "terms": [{"var": "k", "coef": 1}], "dynamic": None}
    reader = [{**lp, "body": [{"op": "reserve", "buf": 0, "pages": 1},
                              *[{"op": "read_tiles", "tensor": "A", "addr": addr, "tiles": 1, "into": 0}] * reads,
                              {"op": "read_barrier"}, {"op": "push", "buf": 0, "pages": 1}]}]
    compute = [{**lp, "body": [{"op": "wait", "buf": 0, "pages": 1}, {"op": "reserve", "buf": 1, "pages": 1},
                               {"op": "acquire_acc", "tiles": 1, "dtype": "bf16"},
                               {"op": "compute", "kind": "matmul", "tiles": tiles, "ins": [{"buf": 0, "pages": 1}]},
                               {"op": "pack_acc", "buf": 1, "tiles": 1}, {"op": "release_acc"},
                               {"op": "pop", "buf": 0, "pages": 1}, {"op": "push", "buf": 1, "pages": 1}]}]
    writer = [{**lp, "body": [{"op": "wait", "buf": 1, "pages": 1},
                              {"op": "write_tiles", "src": 1, "tensor": "C", "addr": addr, "tiles": 1},
                              {"op": "write_barrier"}, {"op": "pop", "buf": 1, "pages": 1}]}]
    buf = {"site": [0, 0], "page_tiles": 1, "dtype": "bf16", "space": "local", "alias_of": None, "section": 0}
    return {
        "format": "verispatial.program", "version": 2, "name": f"chain_{k}_{caps[0]}_{caps[1]}_{tiles}_{reads}",
        "target": "wormhole_b0",
        "tensors": [{"name": "A", "shape": [32, 32 * k], "dtype": "bf16", "role": "input", "init": None},
                    {"name": "C", "shape": [32, 32 * k], "dtype": "bf16", "role": "output", "init": None}],
        "buffers": [{"id": 0, "name": "c_0", "cb": 0, "capacity": caps[0], **buf},
                    {"id": 1, "name": "c_16", "cb": 16, "capacity": caps[1], **buf}],
        "semaphores": [], "groups": [], "trips": [],
        "programs": [{"site": [0, 0], "engine": e, "ops": ops, "section_starts": []}
                     for e, ops in (("reader", reader), ("compute", compute), ("writer", writer))],
        "sections": [{"name": "main", "barrier_after": False}],
        "memory": [{"buf": 0, "offset": 103712, "size": 2048 * caps[0]},
                   {"buf": 1, "offset": 103712 + 2048 * caps[0], "size": 2048 * caps[1]}],
    }


def assert_never_beaten(program: Any, items: tuple[int, ...] = (1, 2, 3, 5, 8)) -> tuple[Fraction, Fraction]:
    b = throughput_bound(program)
    for n in items:
        t = timed_run(program, n).makespan
        assert t >= ((n - 1) // b.tokens) * b.weight, (program.name, n, t, b.cycles)
    steady = Fraction(timed_run(program, 16).makespan - timed_run(program, 8).makespan, 8)
    assert steady >= b.cycles, (program.name, steady, b.cycles)
    return b.cycles, steady


@pytest.mark.parametrize("stem", SMALL)
def test_the_bound_is_never_beaten_on_the_small_examples(stem: str) -> None:
    assert_never_beaten(load_program(EXAMPLES / f"{stem}.json"))


@pytest.mark.parametrize(("k", "caps", "tiles", "reads"),
                         [(4, (2, 1), 1, 1), (3, (1, 1), 2, 1), (6, (2, 2), 16, 1), (5, (3, 1), 1, 3), (4, (1, 2), 8, 2)])
def test_the_bound_is_tight_on_a_chain(k: int, caps: tuple[int, int], tiles: int, reads: int) -> None:
    program = program_from_dict(chain(k, caps, tiles, reads))
    bound, steady = assert_never_beaten(program)
    assert steady == bound


def test_the_critical_cycle_is_the_busiest_stage() -> None:
    lat = latencies_of(load_program(EXAMPLES / "pipeline_small.json").target)
    # A compute step of 16 tiles (256 cycles) outweighs the reader's read (118 cycles) and the writer's write.
    b = throughput_bound(program_from_dict(chain(4, (2, 2), 16)))
    assert {o.engine for o, _e in b.critical} == {"(0,0).compute"}
    assert b.cycles == 4 * (16 * lat.matmul_tile + lat.pack_tile + 4 * lat.cb_update)
    # A slow reader (three reads a page) moves the critical cycle there.
    b = throughput_bound(program_from_dict(chain(4, (2, 2), 1, reads=3)))
    assert {o.engine for o, _e in b.critical} == {"(0,0).reader"}


def test_max_cycle_ratio_is_exact() -> None:
    a, b, c = ("x", 0), ("x", 1), ("y", 0)
    edges = [Edge(a, b, 3, 0, "p"), Edge(b, a, 5, 2, "p"),  # ratio 8/2 = 4
             Edge(a, c, 7, 1, "q"), Edge(c, a, 6, 2, "q")]  # ratio 13/3
    ratio, cyc = max_cycle_ratio(edges)
    assert ratio == Fraction(13, 3)
    assert {e.why for e in cyc} == {"q"}


def test_a_cycle_without_tokens_is_not_live() -> None:
    a, b = ("x", 0), ("x", 1)
    with pytest.raises(ThroughputError, match="not live: a cycle of dependencies without tokens"):
        max_cycle_ratio([Edge(a, b, 1, 0, "p"), Edge(b, a, 1, 0, "p")])


def test_every_latency_names_its_source() -> None:
    for lat in LATENCIES.values():
        assert set(lat.sources) == {"noc_bytes_per_cycle", "noc_base", "noc_hop", "dram_hops", "issue", "cb_update",
                                    "matmul_tile", "eltwise_tile", "pack_tile"}


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def test_cli_throughput() -> None:
    code, out, _ = run(["throughput", str(EXAMPLES / "pipeline_small.json")])
    assert code == 0
    assert out.startswith("program pipeline_small: at least 512.0 cycles per work item")
    assert "critical cycle: 28 ops, 512 cycles over 1 token(s)" in out
    code, out, _ = run(["throughput", str(EXAMPLES / "mcast_pair.json"), "--json"])
    assert code == 0
    got = json.loads(out)
    assert got["cycles_per_item"] == float(throughput_bound(load_program(EXAMPLES / "mcast_pair.json")).cycles)
    assert got["critical_cycle"][0]["op"].startswith("(0,0).")
    code, _, err = run(["throughput", str(EXAMPLES / "broken" / "a_reserve_over_capacity.json")])
    assert code == 1
    assert "not live: the interpreter's run ends in deadlock" in err


def test_cli_throughput_json_without_a_bound_prints_why(tmp_path: Path) -> None:
    """``--json`` prints one document also when there is no bound (it printed nothing): exit 1 for a run that does
    not terminate, with the run's status and stuck engines; exit 3 when no bound can be derived."""
    code, out, err = run(["throughput", str(EXAMPLES / "broken" / "a_reserve_over_capacity.json"), "--json"])
    assert code == 1
    doc = json.loads(out)
    assert {k: doc[k] for k in ("program", "exit_code", "bound")} == {
        "program": "a_reserve_over_capacity", "exit_code": 1, "bound": None}
    assert doc["reason"].startswith("not live: the interpreter's run ends in deadlock (")
    assert err.endswith(f"{doc['reason']}\n")
    assert doc["run"]["status"] == "deadlock"
    assert [(s["position"]["engine"], s["position"]["op"]) for s in doc["run"]["stuck"]] == [
        ("(0,0).reader", "reserve(b0, 8)"), ("(0,0).writer", "wait(b0, 8)")]
    # Pushes 2 pages a run and pops 1: the run terminates, but the marked graph is not periodic.
    p = prog(ep(A, Engine.READER, Reserve(0, 2), Push(0, 2)), ep(A, Engine.WRITER, Wait(0, 1), Pop(0, 1)),
             buffers=(buf(0),))
    path = tmp_path / "unbalanced.json"
    path.write_text(dumps(p))
    code, out, err = run(["throughput", str(path), "--json"])
    assert code == 3
    assert json.loads(out) == {"program": "t", "exit_code": 3, "bound": None,
                               "reason": "not periodic: b0 (buf0) pushes 2 pages per run and pops 1"}
    assert err == f"verispatial: {path}: not periodic: b0 (buf0) pushes 2 pages per run and pops 1\n"
