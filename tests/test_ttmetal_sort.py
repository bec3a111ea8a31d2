"""ttnn.sort end to end (issue 18 item 4): ``examples/ttmetal/sort/host.yaml`` reads the single-row single-core
sort's three kernels from the pinned wheel, topk family included, and the reference interpreter runs them.
``examples/ttmetal/sort/notes.md`` says what the verdict is and why."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.frontends.ttmetal import import_host
from verispatial.ir.ops import AcquireAcc, Compute
from verispatial.ir.program import walk
from verispatial.petri.interp import simulate

SORT = Path(__file__).resolve().parent.parent / "examples" / "ttmetal" / "sort" / "host.yaml"
COMPUTE = "ttnn/operations/data_movement/sort/device/kernels/compute/sort_single_row_single_core.cpp"


def test_sort_reads_fully_with_topk_on_four_dst_tiles(ttnn_cpp: Path) -> None:
    """Every kernel of both cores reads; each pair's ``topk_local_sort(0, dir, 5)`` (sort_common.hpp:94) is one
    compute under an acquire of the 4 DST tiles it touches (values 0..1, indices 2..3)."""
    p = import_host(SORT)
    assert sorted(ep.key for ep in p.programs) == [f"({x},0).{k}" for x in (0, 1)
                                                   for k in ("compute", "reader", "writer")]
    compute = next(ep for ep in p.programs if ep.key == "(0,0).compute")
    kinds = [op.kind for op in walk(compute.ops) if isinstance(op, Compute)]
    assert kinds.count("topk_local_sort") == 1
    assert [op.tiles for op in walk(compute.ops) if isinstance(op, AcquireAcc)] == [4, 1, 1]


def test_sort_republication_deadlocks_the_one_thread_compute_model(ttnn_cpp: Path) -> None:
    """sort_single_row_single_core.cpp:294-301 reserves Wt pages of the Wt-page transposed buffer before popping
    the Wt it holds: the model's compute engine, one thread, waits at :294 for space its own pop at :298 would free
    (on the device the packer's reserve and the unpacker's pop are separate threads, cb_api.h:76, 92-94: notes.md).
    This pins the model's verdict; the day the compute engine's packer and unpacker are modelled apart it changes."""
    p = import_host(SORT)
    run = simulate(p)
    assert run.deadlock
    compute = {s.position.engine: s for s in run.stuck if s.position.engine.endswith(".compute")}
    assert sorted(compute) == ["(0,0).compute", "(1,0).compute"]
    for s in compute.values():
        ep = next(ep for ep in p.programs if ep.key == s.position.engine)
        loc = ep.source_of(s.position.path)
        assert (loc.file, loc.line) == (COMPUTE, 294), loc
        assert s.position.op.startswith("reserve(")
