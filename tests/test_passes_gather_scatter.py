"""Gather (embedding lookup: a ``ReadTiles`` whose tile row is a ``Dynamic`` part over the index's range, issued
after the reader has waited for its index page) and scatter (KV-cache update: a ``WriteTiles`` at a runtime position,
issued after the writer has waited for its index): golden programs, proofs on every target, and an index range past
the tensor's end refuted by the bounds obligation."""

from __future__ import annotations

import attrs
import pytest

from verispatial.driver.run import certify
from verispatial.errors import ParseError
from verispatial.ir import (
    BLACKHOLE,
    GPU,
    WORMHOLE,
    Addr,
    Dynamic,
    Engine,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Target,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.passes import Pipeline, capped_passes, compile_section
from verispatial.petri.interp import simulate

PIPE = Pipeline(capped_passes(max_sites=2))


def _graph() -> ModelGraph:
    b = GraphBuilder("g")
    # A 512-row table of 256 columns (16 x 8 tiles) and 64 token ids: two output tile rows.
    b.tensor("table", [512, 256], role="param")
    b.tensor("ids", [64], "int32", role="input")
    b.tensor("emb", [64, 256], role="output")
    b.gather("embed", "table", "ids", "emb")
    # Two tile rows of new keys written into a 256-row cache (8 tile rows) at a runtime tile row.
    b.tensor("k", [64, 256], role="input")
    b.tensor("pos", [1], "int32", role="input")
    b.tensor("cache", [256, 256], role="state")
    b.scatter("kv_update", "k", "pos", "cache")
    return b.build()


def _ops(p: Program, x: int, e: Engine) -> tuple[Op, ...]:
    (ep,) = [ep for ep in p.programs if ep.site.x == x and ep.engine == e]
    return ep.ops


def _with_dynamic_hi(p: Program, hi: int) -> Program:
    def fix(op: Op) -> Op:
        if isinstance(op, Loop):
            return attrs.evolve(op, body=tuple(fix(o) for o in op.body))
        if isinstance(op, ReadTiles | WriteTiles) and op.addr.dynamic is not None:
            return attrs.evolve(op, addr=attrs.evolve(op.addr, dynamic=attrs.evolve(op.addr.dynamic, hi=hi)))
        return op

    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=tuple(fix(o) for o in ep.ops)) for ep in p.programs))


def test_gather_golden_the_reader_waits_for_its_index_first() -> None:
    p, frags = compile_section(_graph(), 0, WORMHOLE, PIPE)
    assert frags[1]["plan"] == {"kind": "MovePlan", "sites": 2, "rows": 1, "block_w": 8, "num_blocks": 1,
                                "index_tiles": 2}
    assert [(ep.site.x, ep.engine.value) for ep in p.programs] == [(0, "reader"), (0, "writer"), (1, "reader"),
                                                                   (1, "writer")]
    # The index is read from the front page of buffer 2, which the address names (``Dynamic.buf``).
    table_row = Addr(0, (Term("k", 8),), Dynamic("ids", 0, 15, 8, buf=2))
    assert _ops(p, 1, Engine.READER) == (
        Reserve(2, 2), ReadTiles("ids", Addr(0), 2, 2), ReadBarrier(), Push(2, 2),
        Wait(2, 2),
        Loop("r", 1, (Loop("k", 1, (Reserve(3, 8), ReadTiles("table", table_row, 8, 3), ReadBarrier(), Push(3, 8))),)),
        Pop(2, 2))
    assert _ops(p, 1, Engine.WRITER) == (Loop("r", 1, (Loop("k", 1, (
        Wait(3, 8), WriteTiles(3, "emb", Addr(8, (Term("r", 8), Term("k", 8))), 8), WriteBarrier(), Pop(3, 8))),)),)
    assert simulate(p, dyn={"ids": 15}).status == "terminated"
    assert certify(p).exit_code == 0


def test_scatter_golden_the_writer_waits_for_its_index() -> None:
    p, frags = compile_section(_graph(), 1, WORMHOLE, PIPE)
    # One site: the rows share one runtime position.
    assert frags[1]["plan"] == {"kind": "MovePlan", "sites": 1, "rows": 2, "block_w": 8, "num_blocks": 1,
                                "index_tiles": 1}
    assert next(t for t in p.tensors if t.name == "cache").role.value == "state"
    at = Addr(0, (Term("r", 8), Term("k", 8)), Dynamic("pos", 0, 6, 8, buf=0))
    assert _ops(p, 0, Engine.WRITER) == (
        Wait(0, 1),
        Loop("r", 2, (Loop("k", 1, (Wait(1, 8), WriteTiles(1, "cache", at, 8), WriteBarrier(), Pop(1, 8))),)),
        Pop(0, 1))
    assert certify(p).exit_code == 0


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE, GPU])
@pytest.mark.parametrize("op", [0, 1])
def test_gather_and_scatter_prove_on_every_target(target: Target, op: int) -> None:
    p, _ = compile_section(_graph(), op, target, PIPE)
    report = certify(p)
    assert [(r.name, r.verdict.value) for r in report.results if r.verdict.value != "proved"] == []


@pytest.mark.parametrize(("op", "hi", "name", "reason"), [
    # The table has 16 tile rows: an id of 16 reads one row past its end.
    (0, 16, "bounds:table", "(0,0).reader ReadTiles touches tiles [128, 136) of table, which has 128 tiles, "
                            "at loop iteration r=0 k=0"),
    # The cache has 8 tile rows and two are written: a position of 7 writes the second one past its end.
    (1, 7, "bounds:cache", "(0,0).writer WriteTiles touches tiles [64, 72) of cache, which has 64 tiles, "
                           "at loop iteration r=1 k=0"),
])
def test_index_range_past_the_end_is_refuted_by_bounds(op: int, hi: int, name: str, reason: str) -> None:
    p, _ = compile_section(_graph(), op, WORMHOLE, PIPE)
    report = certify(_with_dynamic_hi(p, hi))
    assert report.exit_code == 1
    assert [(r.family, r.name, r.reason) for r in report.results if r.verdict.value != "proved"] == [
        ("bounds", name, reason)]


def test_index_must_be_integer() -> None:
    b = GraphBuilder("g")
    b.tensor("table", [512, 256], role="param")
    b.tensor("ids", [64], "bf16", role="input")
    b.tensor("emb", [64, 256], role="output")
    b.gather("embed", "table", "ids", "emb")
    with pytest.raises(ParseError) as e:
        b.build()
    assert (e.value.field, e.value.rule) == ("op embed", "index 'ids' is a 1-D tensor of int32 or uint32, got [64] bf16")
