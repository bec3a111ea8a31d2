"""Decode attention: per unit of query heads sharing a kv head, a fold over the KV blocks whose count is a trip."""

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
from verispatial.ir.section import AttentionPlan, FoldLevel, StageKind
from verispatial.passes.lower import attention_pages
from verispatial.passes.programs.common import Ctx
from verispatial.passes.programs.fold import fold_compute

#: The loop index of the KV blocks.
KV_VAR = "j"


def attention_programs(c: Ctx, plan: AttentionPlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    """The site's units one after another, each at the top level of every engine program (a trip loop nested in a
    constant loop over units would make the checker's occurrence counts non-linear in the trip).

    Per unit (``group`` heads of kv head ``g``): reader — q once (``group x head_tiles`` tiles), then
    ``Loop(j, <trip>)`` of K_j and V_j (``head_tiles`` tiles each, tile row ``j`` of the caches, read barrier before
    the pushes); compute — ``fold_compute`` with the body in the same trip loop (zero blocks: the prologue's pages go
    to the epilogue, q and the running max are drained after the empty loop); writer — wait, write the unit's output
    tiles, write barrier, pop.
    """
    ht, n = plan.head_tiles, plan.group * plan.head_tiles

    def pages(tb: int) -> int:
        return attention_pages(tb, plan.group, ht)

    loads = c.stages(StageKind.LOAD)
    once = [s for s in loads if s.fold == FoldLevel.PROLOGUE]
    blocks = [s for s in loads if s.fold == FoldLevel.BODY]
    st = c.stages(StageKind.STORE)[0]
    assert st.tensor is not None
    out = c.buf[st.ins[0]]
    per_unit = plan.q_heads_per_kv // plan.group
    reader: list[Op] = []
    compute: list[Op] = []
    writer: list[Op] = []
    for u in plan.units_of(index):
        g, sub = divmod(u, per_unit)
        # q and the output: the unit's heads are consecutive in the one (decode) tile row; the caches: kv head g's
        # tiles of tile row j.
        qbase, kvbase = (g * plan.q_heads_per_kv + sub * plan.group) * ht, g * ht
        for s in once:
            b = c.buf[s.outs[0]]
            reader += [Reserve(b, n), ReadTiles(s.tensor or "", Addr(qbase), n, b), ReadBarrier(), Push(b, n)]
        body: list[Op] = [Reserve(c.buf[s.outs[0]], ht) for s in blocks]
        body += [ReadTiles(s.tensor or "", Addr(kvbase, (Term(KV_VAR, plan.kv_row_tiles),)), ht, c.buf[s.outs[0]])
                 for s in blocks]
        body += [ReadBarrier(), *(Push(c.buf[s.outs[0]], ht) for s in blocks)]
        reader.append(Loop(KV_VAR, plan.trip, tuple(body)))
        compute += fold_compute(c, pages, KV_VAR, plan.trip)
        writer += [Wait(out, n), WriteTiles(out, st.tensor, Addr(qbase), n), WriteBarrier(), Pop(out, n)]
    return {Engine.READER: tuple(reader), Engine.COMPUTE: tuple(compute), Engine.WRITER: tuple(writer)}
