"""The matmul's reader (multicast sender and receiver protocols), compute (the accumulation forms, the chain fused
inside the sub-block nest) and writer programs."""

from __future__ import annotations

from collections.abc import Sequence

from verispatial.ir.core import Addr, Term, WaitCond
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
    Compute,
    Flush,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    SemInc,
    SemSet,
    SemWait,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.section import (
    AccForm,
    BufferRole,
    Level,
    MatmulPlan,
    Stage,
    StageKind,
)
from verispatial.passes.programs.common import INVALID, VALID, Ctx, chain_ops, plain_load, tensor_cols


def _nest(plan: MatmulPlan, body: Sequence[Op]) -> Op:
    """The sub-block nest: ``i`` over sub-blocks along M, ``j`` along N (the writer's order too)."""
    return Loop("i", plan.sub_h, (Loop("j", plan.sub_w, tuple(body)),))



def _k_load(c: Ctx, plan: MatmulPlan, s: Stage) -> list[Op]:
    """One K block of load stage ``s`` (in0 or in1) at this site, as sender, receiver, or plain reader."""
    tb = s.outs[0]
    b = c.buf[tb]
    in0 = tb == 0
    pages = plan.n0 if in0 else plan.n1
    spec = next((g for g in c.specs if g.buffer == tb and (c.site.y == g.sender.y if in0 else c.site.x == g.sender.x)), None)
    prefix = "in0" if in0 else "in1"
    if spec is not None and c.site != spec.sender:
        return [
            Reserve(b, pages),
            SemSet(c.sems[f"{prefix}_receiver"], INVALID),
            SemInc(c.sems[f"{prefix}_sender"], at=spec.sender, by=1),
            SemWait(c.sems[f"{prefix}_receiver"], WaitCond.EQ, VALID),
            Push(b, pages),
        ]
    assert s.tensor is not None
    kcols = tensor_cols(c, s.tensor)
    if in0:
        # Row r of the site's per_site_m tile rows, block_w tiles from column k*block_w.
        addr = Addr(c.site.y * plan.per_site_m * kcols, (Term("r", kcols), Term("k", plan.block_w)))
        reads: Op = Loop("r", plan.per_site_m, (ReadTiles(s.tensor, addr, plan.block_w, b),))
    else:
        # Row k*block_w + r of in1, per_site_n tiles from column x*per_site_n.
        addr = Addr(c.site.x * plan.per_site_n, (Term("r", kcols), Term("k", plan.block_w * kcols)))
        reads = Loop("r", plan.block_w, (ReadTiles(s.tensor, addr, plan.per_site_n, b),))
    ops: list[Op] = [Reserve(b, pages), reads, ReadBarrier()]
    if spec is not None:
        g = c.groups[(tb, spec.sender)]
        ready, valid = c.sems[f"{prefix}_sender"], c.sems[f"{prefix}_receiver"]
        ops += [SemWait(ready, WaitCond.EQ, len(spec.destinations())), SemSet(ready, 0), McastSend(b, pages, g)]
        # Data then flag to the same rectangle: a target that may reorder the two needs the flush between them; on
        # one that keeps them ordered the flush goes after the flag, so the slot is not refilled before it left.
        if not c.target.ordered_writes:
            ops.append(Flush())
        ops.append(McastSetValid(valid, g))
        if c.target.ordered_writes:
            ops.append(Flush())
    ops.append(Push(b, pages))
    return ops


def matmul_reader(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    start: list[Op] = []
    # A sender's own copy of the valid flag holds VALID: it is the source of the flag multicast.
    for tb, prefix in ((0, "in0"), (1, "in1")):
        if any(g.buffer == tb and g.sender == c.site for g in c.specs):
            start.append(SemSet(c.sems[f"{prefix}_receiver"], VALID))
    ops: list[Op] = list(start)
    for s in c.stages(StageKind.LOAD, Level.ONCE):
        ops += plain_load(c, s, Addr(0), 1)
    k_body: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.K_BLOCK):
        k_body += _k_load(c, plan, s)
    ops.append(Loop("k", plan.num_blocks, tuple(k_body)))
    sub: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.SUB_BLOCK):
        # A bias row: sb_w tiles of the site's columns, once per output sub-block.
        sub += plain_load(c, s, Addr(c.site.x * plan.per_site_n, (Term("j", plan.sb_w),)), plan.sb_w)
    if sub:
        ops.append(_nest(plan, sub))
    # No engine may finish with NoC transactions outstanding (reference §2.5 end, PR #55119).
    ops += [WriteBarrier(), AtomicBarrier()]
    return tuple(ops)



def matmul_compute(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    mm = next(s for s in c.stages(StageKind.COMPUTE) if s.op == "matmul")
    chain_stages = [s for s in c.stages(StageKind.COMPUTE) if s.op != "matmul"]
    t = plan.sbt

    def pages(tb: int) -> int:
        role = c.tpl.buffers[tb].role
        return plan.sb_w if role == BufferRole.SUB_OPERAND else t

    chain = chain_ops(c, chain_stages, pages, t)
    in0, in1 = c.buf[mm.ins[0]], c.buf[mm.ins[1]]
    hand = c.buf[mm.outs[0]]
    head: list[Op] = [Wait(in0, plan.n0), Wait(in1, plan.n1)]
    tail: list[Op] = [Pop(in0, plan.n0), Pop(in1, plan.n1)]

    def pack(to: int) -> list[Op]:
        return [Reserve(to, t), PackAcc(to, t), Push(to, t), ReleaseAcc()]

    if plan.form == AccForm.SINGLE:
        body = [AcquireAcc(t), Compute("matmul", t), *pack(hand), *chain]
        return (*head, _nest(plan, body), *tail)
    if plan.form == AccForm.REGISTERS:
        # The accumulator lives in registers for the whole K loop: one acquire, one pack (one sub-block per site).
        k_loop = Loop("k", plan.num_blocks, (*head, Compute("matmul", t), *tail))
        return (AcquireAcc(t), k_loop, *pack(hand), *chain)
    interm_tb = c.tpl.buffer(BufferRole.INTERM)[0].id
    interm = c.buf[interm_tb]
    out_tb = c.tpl.buffer(BufferRole.OUTPUT)[0].id
    aliased = c.aliased
    reload: list[Op] = [Wait(interm, t), Compute("copy", t), Pop(interm, t)]
    # Block 0: fresh accumulators, spilled. Where the output aliases the spill, each sub-block first reserves the
    # output cumulatively (never pushed): the writer must have drained the shared pages before a partial lands.
    block0: list[Op] = list(head)
    if aliased:
        for s in range(plan.sub_h * plan.sub_w):
            block0 += [AcquireAcc(t), Compute("matmul", t), Reserve(c.buf[out_tb], (s + 1) * t), *pack(interm)]
    else:
        block0.append(_nest(plan, [AcquireAcc(t), Compute("matmul", t), *pack(interm)]))
    block0 += tail
    ops: list[Op] = block0
    if plan.num_blocks > 2:
        middle = [*head, _nest(plan, [AcquireAcc(t), *reload, Compute("matmul", t), *pack(interm)]), *tail]
        ops.append(Loop("k", plan.num_blocks - 2, tuple(middle)))
    # Last block: reload, multiply, pack to the hand-off, and run the chain on that page in the same turn.
    ops += [*head, _nest(plan, [AcquireAcc(t), *reload, Compute("matmul", t), *pack(hand), *chain]), *tail]
    return tuple(ops)



def matmul_writer(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    st = c.stages(StageKind.STORE)[0]
    assert st.tensor is not None
    out = c.buf[st.ins[0]]
    ncols = tensor_cols(c, st.tensor)
    # Output tile (y*per_site_m + i*sb_h + r, x*per_site_n + j*sb_w), row-major over the output's tile columns.
    addr = Addr(c.site.y * plan.per_site_m * ncols + c.site.x * plan.per_site_n,
                (Term("i", plan.sb_h * ncols), Term("r", ncols), Term("j", plan.sb_w)))
    body: list[Op] = [Wait(out, plan.sbt), Loop("r", plan.sb_h, (WriteTiles(out, st.tensor, addr, plan.sb_w),)),
                      WriteBarrier(), Pop(out, plan.sbt)]
    return (_nest(plan, body),)
