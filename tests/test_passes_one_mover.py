"""Loads and stores on ONE data-movement engine (``Place(one_mover=True)``): the reader's and the writer's programs
become one, and their adjacent loop nests interleave (DESIGN §6: "adjacent loop nests fused only when that cannot
deadlock"). Concatenating the two nests instead runs every load before the first store: the operand and output
buffers fill at depth two and the engine deadlocks against itself. The interpreter shows it, the checker refutes
it, and the fused program the pass emits terminates and proves."""

from __future__ import annotations

import attrs
import pytest

from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Engine,
    Loop,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.place import Place
from verispatial.passes.programs.fuse import fuse_adjacent_loops, merge_movers
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.petri.interp import simulate


def _pipe(one_mover: bool) -> Pipeline:
    return Pipeline((Lower(), Tile(max_cols=1, max_rows=1, max_sites=1), Place(one_mover=one_mover), Size(),
                     SynthesizeHandshakes()))


def _unary() -> ModelGraph:
    # 1 site, 40 tiles in chunks of 8 (one 16-bit accumulator acquire on Wormhole): five chunks, rings of two
    # (four chunks fit in the two rings, so five are needed to show the concatenation stuck).
    b = GraphBuilder("g")
    b.tensor("a", [160, 256], role="input")
    b.tensor("o", [160, 256], role="output")
    b.unary("act", "silu", "a", "o")
    return b.build()


def _engines(p: Program) -> list[str]:
    return [f"({ep.site.x},{ep.site.y}).{ep.engine.value}" for ep in p.programs]


def test_eltwise_on_one_mover_interleaves_load_and_store_per_chunk() -> None:
    p, frags = compile_section(_unary(), 0, WORMHOLE, _pipe(True))
    assert frags[1]["plan"] == {"kind": "EltwisePlan", "sites": 1, "per_site": 40, "chunk": 8}
    assert frags[2]["engines"] == {"read_a": "reader", "silu": "compute", "write_out": "reader"}
    assert _engines(p) == ["(0,0).reader", "(0,0).compute"]
    reader = p.programs[0]
    at = Addr(0, (Term("t", 8),))
    assert reader.ops == (Loop("t", 5, (Reserve(0, 8), ReadTiles("a", at, 8, 0), ReadBarrier(), Push(0, 8),
                                        Wait(1, 8), WriteTiles(1, "o", at, 8), WriteBarrier(), Pop(1, 8))),)
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


def test_eltwise_nests_concatenated_on_one_mover_deadlock_and_are_refuted() -> None:
    split, _ = compile_section(_unary(), 0, WORMHOLE, _pipe(False))
    reader, compute, writer = split.programs
    naive = attrs.evolve(split, programs=(attrs.evolve(reader, ops=merge_movers(reader.ops, writer.ops, fuse=False)),
                                          compute))
    run = simulate(naive)
    assert run.status == "deadlock"
    # Chunks 0 and 1 fill the output ring; the compute holds chunk 2 and blocks reserving its output; chunks 2 and
    # 3 fill the input ring and the reader blocks on chunk 4 — the store that would drain the output never started.
    assert [str(s) for s in run.stuck] == [
        "(0,0).reader at ops[0].body[0] reserve(b0, 8) t=4: waits for space in b0: capacity-(pushed-popped)=16-(32-16)=0 < 8",
        "(0,0).compute at ops[0].body[3] reserve(b1, 8) t=2: waits for space in b1: capacity-(pushed-popped)=16-(16-0)=0 < 8",
    ]
    report = certify(naive)
    assert report.exit_code == 1
    refuted = [r for r in report.results if r.verdict.value == "refuted"]
    assert [r.family for r in refuted] == ["deadlock"]
    assert refuted[0].counterexample is not None


def test_matmul_with_bias_on_one_mover_fuses_the_bias_loads_with_the_stores() -> None:
    b = GraphBuilder("g")
    b.tensor("a", [128, 64], role="input")
    b.tensor("w", [64, 512], role="param")
    b.tensor("bias", [512], role="param")
    b.tensor("o", [128, 512], role="output")
    b.matmul("mm", "a", "w", "o", bias="bias", activation="gelu")
    p, frags = compile_section(b.build(), 0, WORMHOLE, _pipe(True))
    # Eight 4x2 sub-blocks: more than the bias ring (two), the output ring (two) and the compute can hold.
    assert (frags[1]["plan"]["sb_h"], frags[1]["plan"]["sb_w"], frags[1]["plan"]["per_site_n"]) == (4, 2, 16)
    reader = p.programs[0]
    assert reader.engine == Engine.READER
    # The K loop, then ONE sub-block nest: the bias row for (i, j), then the store of (i, j); the closing barriers last.
    nest = reader.ops[-3]
    assert isinstance(nest, Loop)
    assert nest.var == "i"
    (inner,) = nest.body
    assert isinstance(inner, Loop)
    assert (inner.var, inner.count) == ("j", 8)
    assert [type(o).__name__ for o in inner.body] == [
        "Reserve", "ReadTiles", "ReadBarrier", "Push", "Wait", "Loop", "WriteBarrier", "Pop"]
    assert [type(o).__name__ for o in reader.ops[-2:]] == ["WriteBarrier", "AtomicBarrier"]
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0
    # The naive order: every bias row loaded before the first store.
    split, _ = compile_section(b.build(), 0, WORMHOLE, _pipe(False))
    r, c, w = split.programs
    naive = attrs.evolve(split, programs=(attrs.evolve(r, ops=merge_movers(r.ops, w.ops, fuse=False)), c))
    assert simulate(naive).status == "deadlock"
    assert [r.family for r in certify(naive).results if r.verdict.value == "refuted"] == ["deadlock"]


def test_rmsnorm_on_one_mover_fuses_only_across_programs() -> None:
    b = GraphBuilder("g")
    b.tensor("x", [64, 256], role="input")
    b.tensor("g", [256], role="param")
    b.tensor("o", [64, 256], role="output")
    b.rmsnorm("norm", "x", "g", "o")
    p, _ = compile_section(b.build(), 0, WORMHOLE, _pipe(True))
    (rows,) = p.programs[0].ops
    assert isinstance(rows, Loop)
    # The body loads and the apply loads (both the reader's) stay two loops; the stores join the apply loads.
    body_loads, apply = rows.body
    assert isinstance(body_loads, Loop)
    assert isinstance(apply, Loop)
    assert [type(o).__name__ for o in apply.body][-4:] == ["Wait", "WriteTiles", "WriteBarrier", "Pop"]
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


def test_gather_on_one_mover_is_refused_by_name() -> None:
    b = GraphBuilder("g")
    b.tensor("table", [256, 64], role="param")
    b.tensor("ids", [4], "int32", role="input")
    b.tensor("e", [32, 64], role="output")
    b.gather("embed", "table", "ids", "e")
    with pytest.raises(PassRefused) as e:
        compile_section(b.build(), 0, WORMHOLE, _pipe(True))
    assert e.value.pass_name == "place"
    assert "cannot share one data-movement engine" in e.value.reason


def test_loops_of_one_program_never_fuse_and_fills_before_drains_never_fuse() -> None:
    a = Loop("k", 2, (Reserve(0, 1), Push(0, 1)))
    b = Loop("k", 2, (Reserve(1, 1), Push(1, 1)))
    drain0 = Loop("k", 2, (Wait(0, 1), Pop(0, 1)))
    drain2 = Loop("k", 2, (Wait(2, 1), Pop(2, 1)))
    # Same program: kept apart.
    assert fuse_adjacent_loops((a, b), ()) == (a, b)
    # Across programs, the later drains what the earlier fills: kept apart.
    assert fuse_adjacent_loops((a,), (drain0,)) == (a, drain0)
    # Across programs, disjoint: fused.
    assert fuse_adjacent_loops((a,), (drain2,)) == (Loop("k", 2, (*a.body, *drain2.body)),)
    # Different counts or variables: kept apart.
    assert fuse_adjacent_loops((a,), (Loop("k", 3, drain2.body),)) == (a, Loop("k", 3, drain2.body))
    assert fuse_adjacent_loops((a,), (Loop("t", 2, drain2.body),)) == (a, Loop("t", 2, drain2.body))
