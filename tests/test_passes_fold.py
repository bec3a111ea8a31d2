"""The fold: RMSNorm's sum of squares carried across a row's K blocks. Golden op sequences of its engine programs
(prologue, body per K block with the carry popped by its update, epilogue, the apply pass), proofs on every target,
and the carry's readers ranked before its update inside a block."""

from __future__ import annotations

import attrs
import pytest

from verispatial.driver.run import certify
from verispatial.errors import ParseError
from verispatial.ir import (
    BLACKHOLE,
    GPU,
    WORMHOLE,
    AcquireAcc,
    Addr,
    Compute,
    Engine,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Target,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.section import FoldLevel, Level, Section, Stage, StageKind
from verispatial.passes import Pipeline, capped_passes, compile_section
from verispatial.passes.handshakes import stage_ranks
from verispatial.passes.lower import Lower
from verispatial.petri.interp import simulate


def _norm(m: int, h: int) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("x", [m, h], role="input")
    b.tensor("w", [h], role="param")
    b.tensor("y", [m, h], role="output")
    b.rmsnorm("norm", "x", "w", "y")
    return b.build()


def _stage(s: Stage, t: int) -> tuple[Op, ...]:
    return (AcquireAcc(t, "bf16"), Compute(s.op, t), Reserve(s.outs[0], t), PackAcc(s.outs[0], t), Push(s.outs[0], t),
            ReleaseAcc())


def test_rmsnorm_golden_programs() -> None:
    # Two tile rows of 8 tiles on two sites; fp32 carry: blocks of 4 tiles (the fp32 accumulator), 2 K blocks.
    p, frags = compile_section(_norm(64, 256), 0, WORMHOLE, Pipeline(capped_passes(max_sites=2)))
    assert frags[0]["carries"] == [{"buffer": "c_4", "update": "sum"}]
    assert frags[1]["plan"] == {"kind": "FoldPlan", "sites": 2, "rows": 1, "block_w": 4, "num_blocks": 2}
    assert [(b.name, b.capacity, b.dtype) for b in p.buffers[:7]] == [
        ("c_0", 8, "bf16"), ("c_1", 8, "bf16"), ("c_2", 8, "bf16"), ("c_3", 8, "bf16"), ("c_4", 2, "fp32"),
        ("c_5", 1, "bf16"), ("c_16", 8, "bf16")]
    by = {(ep.site.x, ep.engine): ep.ops for ep in p.programs}
    x1 = Addr(8, (Term("i", 8), Term("k", 4)))
    assert by[(1, Engine.READER)] == (Loop("i", 1, (
        Loop("k", 2, (Reserve(7, 4), ReadTiles("x", x1, 4, 7), ReadBarrier(), Push(7, 4))),
        Loop("k", 2, (Reserve(8, 4), Reserve(9, 4), ReadTiles("x", x1, 4, 8), ReadTiles("w", Addr(0, (Term("k", 4),)), 4, 9),
                      ReadBarrier(), Push(8, 4), Push(9, 4))),
    )),)
    # Every acquire of this section is fp32 (the carry c_4 is a 32-bit float); each compute names the pages it unpacks.
    assert by[(0, Engine.COMPUTE)] == (Loop("i", 1, (
        # prologue: the carry's first page
        AcquireAcc(1, "fp32"), Compute("zero", 1), Reserve(4, 1), PackAcc(4, 1), Push(4, 1), ReleaseAcc(),
        Loop("k", 2, (
            Wait(0, 4), AcquireAcc(4, "fp32"), Compute("square", 4, (Operand(0, 4),)), Reserve(3, 4), PackAcc(3, 4),
            Push(3, 4), ReleaseAcc(), Pop(0, 4),
            # the update reads the page the block started with, pushes the new one, then retires the old
            Wait(3, 4), Wait(4, 1), AcquireAcc(1, "fp32"), Compute("reduce_add", 1, (Operand(3, 4), Operand(4, 1))),
            Reserve(4, 1), PackAcc(4, 1), Push(4, 1), ReleaseAcc(), Pop(3, 4), Pop(4, 1))),
        # epilogue: its last reader retires the carry's final page
        Wait(4, 1), AcquireAcc(1, "fp32"), Compute("rsqrt_mean", 1, (Operand(4, 1),)), Reserve(5, 1), PackAcc(5, 1),
        Push(5, 1), ReleaseAcc(), Pop(4, 1),
        Loop("k", 2, (
            Wait(1, 4), Wait(5, 1), Wait(2, 4), AcquireAcc(4, "fp32"),
            Compute("mul_bcast_mul", 4, (Operand(1, 4), Operand(5, 1), Operand(2, 4))), Reserve(6, 4),
            PackAcc(6, 4), Push(6, 4), ReleaseAcc(), Pop(1, 4), Pop(2, 4))),
        # 1/rms is read by every block of the apply pass: retired after it
        Wait(5, 1), Pop(5, 1),
    )),)
    assert by[(0, Engine.WRITER)] == (Loop("i", 1, (Loop("k", 2, (
        Wait(6, 4), WriteTiles(6, "y", Addr(0, (Term("i", 8), Term("k", 4))), 4), WriteBarrier(), Pop(6, 4))),)),)
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


@pytest.mark.parametrize(("target", "m", "h", "plan"), [
    (WORMHOLE, 1, 2048, (1, 1, 4, 16)),     # a Llama-3.2-1B decode row
    (BLACKHOLE, 128, 896, (4, 1, 4, 7)),    # a Qwen2.5-0.5B prefill
    (GPU, 128, 896, (4, 2, 8, 7)),          # 16x16 tiles, fp32 accumulators in registers: blocks of 8
])
def test_rmsnorm_proves(target: Target, m: int, h: int, plan: tuple[int, int, int, int]) -> None:
    p, frags = compile_section(_norm(m, h), 0, target, Pipeline(capped_passes(max_sites=4)))
    got = frags[1]["plan"]
    assert (got["sites"], got["rows"], got["block_w"], got["num_blocks"]) == plan
    report = certify(p)
    assert [(r.name, r.verdict.value) for r in report.results if r.verdict.value != "proved"] == []


def test_carry_readers_rank_before_its_update_in_a_block() -> None:
    g = _norm(32, 256)
    sec, _ = Lower().run(Section("g.norm", g, g.ops[0]), WORMHOLE)
    tpl = sec.template
    assert tpl is not None
    names = [s.name for s in tpl.stages]
    order = sorted(names, key=lambda n: stage_ranks(tpl)[names.index(n)])
    assert order == ["read_x", "read_x_again", "read_weight", "zero", "square", "sum", "rsqrt", "scale", "write_out"]
    # A second body reader of the carry (e.g. an online softmax's exp reading the running max) sees the value the
    # block started with: it ranks before the update even though the update produces the carry; an epilogue reader
    # ranks after it.
    peek = Stage(len(tpl.stages), "peek", StageKind.COMPUTE, "peek", (4,), (3,), Level.K_BLOCK, None, FoldLevel.BODY)
    tpl2 = attrs.evolve(tpl, stages=(*tpl.stages, peek))
    r = stage_ranks(tpl2)
    assert r[peek.id] < r[5] < r[6]
    assert r[3] < r[peek.id]


def test_rmsnorm_weight_shape_is_checked() -> None:
    b = GraphBuilder("g")
    b.tensor("x", [32, 256], role="input")
    b.tensor("w", [128], role="param")
    b.tensor("y", [32, 256], role="output")
    b.rmsnorm("norm", "x", "w", "y")
    with pytest.raises(ParseError) as e:
        b.build()
    assert (e.value.field, e.value.rule) == ("op norm", "an rmsnorm weight has shape [256] or [1, 256], got [1, 128]")
