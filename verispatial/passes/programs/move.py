"""Gather and scatter: data movement with an indirect tile address read from an index buffer."""

from __future__ import annotations

from verispatial.ir.core import Addr, Dynamic, Engine, Term
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
    MovePlan,
)
from verispatial.passes.programs.common import Ctx


def move_programs(c: Ctx, plan: MovePlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    """Reader and writer of a gather or scatter; there is no compute.

    The reader loads the index first (what is loaded once is loaded first) and publishes it. A gather's reader waits
    for that page before its first indirect read — the table row each read takes is the index's value, a ``Dynamic``
    address part over the index's range — and retires it after its last. A scatter's writer waits for the index
    before its first indirect write and retires it after its last. Every block is double-buffered between the two.
    """
    tpl, bw, rows = c.tpl, plan.block_w, plan.rows
    ix_stage, load, store = tpl.stages
    assert ix_stage.tensor is not None
    assert load.tensor is not None
    assert store.tensor is not None
    ix, blk = c.buf[0], c.buf[1]
    it = plan.index_tiles
    kcols = tpl.k_tiles

    def tile_rows(name: str) -> int:
        t = next(t for t in tpl.tensors if t.name == name)
        return 1 if len(t.shape) == 1 else -(-t.shape[0] // c.target.tile[0])

    direct = Addr(index * rows * kcols, (Term("r", kcols), Term("k", bw)))
    gather = tpl.op_kind == "gather"
    big = load.tensor if gather else store.tensor
    # The indirect side's tile row: any value that keeps every row of the site's rows inside the tensor.
    dyn = Dynamic(ix_stage.tensor, 0, tile_rows(big) - (1 if gather else rows), kcols, buf=ix)
    indirect = Addr(0, (Term("k", bw),) if gather else (Term("r", kcols), Term("k", bw)), dyn)

    def nest(body: list[Op]) -> Op:
        return Loop("r", rows, (Loop("k", plan.num_blocks, tuple(body)),))

    reader: list[Op] = [Reserve(ix, it), ReadTiles(ix_stage.tensor, Addr(0), it, ix), ReadBarrier(), Push(ix, it)]
    reads = nest([Reserve(blk, bw), ReadTiles(load.tensor, indirect if gather else direct, bw, blk), ReadBarrier(),
                  Push(blk, bw)])
    reader += [Wait(ix, it), reads, Pop(ix, it)] if gather else [reads]
    writes = nest([Wait(blk, bw), WriteTiles(blk, store.tensor, direct if gather else indirect, bw), WriteBarrier(),
                   Pop(blk, bw)])
    writer: list[Op] = [writes] if gather else [Wait(ix, it), writes, Pop(ix, it)]
    return {Engine.READER: tuple(reader), Engine.WRITER: tuple(writer)}
