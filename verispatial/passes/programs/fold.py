"""Folds: a reduction that carries a value across K blocks (prologue, body, epilogue, apply)."""

from __future__ import annotations

from collections.abc import Callable

from verispatial.ir.core import Addr, Engine, Term
from verispatial.ir.ops import (
    AcquireAcc,
    Compute,
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
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.section import (
    BufferRole,
    FoldLevel,
    FoldPlan,
    Stage,
    StageKind,
)
from verispatial.passes.programs.common import Ctx, tensor_cols


def fold_compute(c: Ctx, pages: Callable[[int], int], var: str, count: int | str, apply_count: int | None = None,
                 ) -> list[Op]:
    """The compute ops of one fold over one row (or unit): the prologue once, the body in ``Loop(var, count)``, the
    epilogue once, the apply stages in ``Loop(var, apply_count)`` (default ``count``). ``pages(tb)`` is the pages
    of template buffer ``tb`` one stage moves (each stage acquires its output's pages as accumulator tiles).

    ``count`` may be a trip's name: the body then runs any number of times in ``[0, max]``, including none (the
    prologue's pages go straight to the epilogue), and every page is still popped exactly once.

    Stages run in dataflow rank (a carry's body readers before its update). Every page is popped once, where its
    last reader runs: a body page by its last body reader; a carry's page from before the block by the carry's update
    once the new page is pushed, and the page the last block leaves by its last apply reader after the apply loop,
    else its last epilogue reader, else waited and popped right after the blocks; a page made once (prologue,
    epilogue) and read by every block of a later loop is waited and popped after that loop."""
    tpl = c.tpl
    update_of = dict(tpl.carries)
    computes = c.stages(StageKind.COMPUTE)
    at = {lvl: [s for s in computes if s.fold == lvl] for lvl in FoldLevel}

    def level(tb: int) -> FoldLevel:
        lv = tpl.producer(tb).fold
        assert lv is not None
        return lv

    def last_reader(lvl: FoldLevel, tb: int) -> int | None:
        return next((s.id for s in reversed(at[lvl]) if tb in s.ins), None)

    pops: dict[int, list[int]] = {}
    after: dict[FoldLevel, list[int]] = {FoldLevel.BODY: [], FoldLevel.APPLY: []}
    for tb in dict.fromkeys(b for s in computes for b in s.ins):
        epi, app = last_reader(FoldLevel.EPILOGUE, tb), last_reader(FoldLevel.APPLY, tb)
        if tb in update_of:
            pops.setdefault(update_of[tb], []).append(tb)
            if app is not None:
                after[FoldLevel.APPLY].append(tb)
            elif epi is not None:
                pops.setdefault(epi, []).append(tb)
            else:
                after[FoldLevel.BODY].append(tb)
            continue
        lvl = level(tb)
        if lvl in (FoldLevel.PROLOGUE, FoldLevel.EPILOGUE) and app is not None:
            after[FoldLevel.APPLY].append(tb)
        elif lvl == FoldLevel.PROLOGUE and last_reader(FoldLevel.BODY, tb) is not None and epi is None:
            after[FoldLevel.BODY].append(tb)
        else:
            r = last_reader(lvl if lvl != FoldLevel.PROLOGUE or epi is None else FoldLevel.EPILOGUE, tb)
            if r is not None:
                pops.setdefault(r, []).append(tb)

    def stage_ops(s: Stage) -> list[Op]:
        out = c.buf[s.outs[0]]
        t = pages(s.outs[0])
        ops: list[Op] = [Wait(c.buf[tb], pages(tb)) for tb in dict.fromkeys(s.ins)]
        ins = tuple(Operand(c.buf[tb], pages(tb)) for tb in dict.fromkeys(s.ins))
        ops += [AcquireAcc(t, c.acc), Compute(s.op, t, ins), Reserve(out, t), PackAcc(out, t), Push(out, t), ReleaseAcc()]
        return ops + [Pop(c.buf[tb], pages(tb)) for tb in pops.get(s.id, [])]

    def loop(body: list[Op], n: int | str) -> list[Op]:
        return [Loop(var, n, tuple(body))] if body else []

    def drain(tbs: list[int]) -> list[Op]:
        return [op for tb in tbs for op in (Wait(c.buf[tb], pages(tb)), Pop(c.buf[tb], pages(tb)))]

    compute: list[Op] = [op for s in at[FoldLevel.PROLOGUE] for op in stage_ops(s)]
    compute += loop([op for s in at[FoldLevel.BODY] for op in stage_ops(s)], count) + drain(after[FoldLevel.BODY])
    compute += [op for s in at[FoldLevel.EPILOGUE] for op in stage_ops(s)]
    compute += loop([op for s in at[FoldLevel.APPLY] for op in stage_ops(s)],
                    count if apply_count is None else apply_count) + drain(after[FoldLevel.APPLY])
    return compute


def fold_programs(c: Ctx, plan: FoldPlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    """A fold over each of the site's ``plan.rows`` tile rows (every engine loops ``i`` over them).

    Compute: ``fold_compute`` over ``plan.num_blocks`` K blocks of ``plan.block_w`` tiles (a carry or a per-row
    statistic is one tile). Reader: the body's K-block loads, then the apply pass's. Writer: per apply K block, wait, write, barrier, pop.
    """
    tpl, bw = c.tpl, plan.block_w

    def pages(tb: int) -> int:
        b = tpl.buffers[tb]
        once = b.role in (BufferRole.CARRY, BufferRole.STAT) or tpl.producer(tb).fold in (
            FoldLevel.PROLOGUE, FoldLevel.EPILOGUE)
        return 1 if once else bw

    compute = fold_compute(c, pages, "k", plan.num_blocks)

    def loop(body: list[Op]) -> list[Op]:
        return [Loop("k", plan.num_blocks, tuple(body))] if body else []

    def addr(tensor: str) -> Addr:
        kcols = tensor_cols(c, tensor)
        t = next(t for t in tpl.tensors if t.name == tensor)
        if len(t.shape) == 1 or -(-t.shape[0] // c.target.tile[0]) == 1:
            # One tile row (the weight, or a one-row x on one site): every row reads the same blocks.
            return Addr(0, (Term("k", bw),))
        return Addr(index * plan.rows * kcols, (Term("i", kcols), Term("k", bw)))

    reader: list[Op] = []
    for lvl in (FoldLevel.BODY, FoldLevel.APPLY):
        loads = [s for s in c.stages(StageKind.LOAD) if s.fold == lvl]
        if loads:
            body: list[Op] = [Reserve(c.buf[s.outs[0]], bw) for s in loads]
            body += [ReadTiles(s.tensor or "", addr(s.tensor or ""), bw, c.buf[s.outs[0]]) for s in loads]
            body += [ReadBarrier(), *(Push(c.buf[s.outs[0]], bw) for s in loads)]
            reader += loop(body)
    st = c.stages(StageKind.STORE)[0]
    assert st.tensor is not None
    out = c.buf[st.ins[0]]
    writer = loop([Wait(out, bw), WriteTiles(out, st.tensor, addr(st.tensor), bw), WriteBarrier(), Pop(out, bw)])

    def rows(ops: list[Op]) -> tuple[Op, ...]:
        return (Loop("i", plan.rows, tuple(ops)),)

    return {Engine.READER: rows(reader), Engine.COMPUTE: rows(compute), Engine.WRITER: rows(writer)}
