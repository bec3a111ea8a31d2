"""Elementwise sections: reader -> compute -> writer over each site's chunks, every hand-off double-buffered."""

from __future__ import annotations

from verispatial.ir.core import Addr, Engine, Term
from verispatial.ir.ops import (
    Loop,
    Op,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.section import (
    EltwisePlan,
    StageKind,
)
from verispatial.passes.programs.common import Ctx, chain_ops


def eltwise_programs(c: Ctx, plan: EltwisePlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    ch = plan.chunk
    base = index * plan.per_site
    at = Addr(base, (Term("t", ch),))
    loads = c.stages(StageKind.LOAD)
    reserves: list[Op] = [Reserve(c.buf[s.outs[0]], ch) for s in loads]
    reads: list[Op] = [ReadTiles(s.tensor or "", at, ch, c.buf[s.outs[0]]) for s in loads]
    pushes: list[Op] = [Push(c.buf[s.outs[0]], ch) for s in loads]
    reader = (Loop("t", plan.steps, (*reserves, *reads, ReadBarrier(), *pushes)),)
    compute = (Loop("t", plan.steps, tuple(chain_ops(c, c.stages(StageKind.COMPUTE), lambda _b: ch, ch))),)
    st = c.stages(StageKind.STORE)[0]
    out = c.buf[st.ins[0]]
    writer = (Loop("t", plan.steps, (Wait(out, ch), WriteTiles(out, st.tensor or "", at, ch), WriteBarrier(), Pop(out, ch))),)
    return {Engine.READER: reader, Engine.COMPUTE: compute, Engine.WRITER: writer}
