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
    Operand,
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
    elif c.tpl.transpose_b:
        # in1 stored N x K (kcols = K tiles per stored row): stored row x*site_n + n of the site's per_site_n
        # columns, block_w tiles from column k*block_w (persist adds item*per_site_n rows). The unpacker transposes
        # each tile (matmul_tiles with transpose, tt-metal compute_kernel_api/matmul.h).
        addr = Addr(c.site.x * plan.site_n * kcols, (Term("n", kcols), Term("k", plan.block_w)))
        reads = Loop("n", plan.per_site_n, (ReadTiles(s.tensor, addr, plan.block_w, b),))
    else:
        # Row k*block_w + r of in1, per_site_n tiles from column x*site_n (persist adds item*per_site_n).
        addr = Addr(c.site.x * plan.site_n, (Term("r", kcols), Term("k", plan.block_w * kcols)))
        reads = Loop("r", plan.block_w, (ReadTiles(s.tensor, addr, plan.per_site_n, b),))
    ops: list[Op] = [Reserve(b, pages), reads, ReadBarrier()]
    if spec is not None:
        g = c.groups[(tb, spec.sender)]
        ready, valid = c.sems[f"{prefix}_sender"], c.sems[f"{prefix}_receiver"]
        ops += [SemWait(ready, WaitCond.EQ, len(spec.destinations())), SemSet(ready, 0),
                McastSend(b, pages, g, len(spec.destinations()))]
        # Data then flag to the same rectangle: a target that may reorder the two needs the flush between them, and
        # Blackhole's vendor kernels put it there too (Target.flush_before_flag); elsewhere the flush goes after the
        # flag, so the slot is not refilled before it left.
        between = c.target.flush_before_flag or not c.target.ordered_writes
        if between:
            ops.append(Flush())
        ops.append(McastSetValid(valid, g, len(spec.destinations()), src=c.sems[f"{prefix}_valid"]))
        if not between:
            ops.append(Flush())
    ops.append(Push(b, pages))
    return ops


def matmul_reader(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    # The flag multicast's source is the sender's constant VALID word (``<prefix>_valid``, created VALID and never
    # written): no kernel-start store, and it ends at its initial value.
    ops: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.ONCE):
        ops += plain_load(c, s, Addr(0), 1)
    k_body: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.K_BLOCK):
        k_body += _k_load(c, plan, s)
    ops.append(Loop("k", plan.num_blocks, tuple(k_body)))
    sub: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.SUB_BLOCK):
        # A bias row: sb_w tiles of the site's columns, once per output sub-block.
        sub += plain_load(c, s, Addr(c.site.x * plan.site_n, (Term("j", plan.sb_w),)), plan.sb_w)
    if sub:
        ops.append(_nest(plan, sub))
    # No engine may finish with NoC transactions outstanding (reference §2.5 end, PR #55119).
    ops += [WriteBarrier(), AtomicBarrier()]
    # A receiver resets its flag once more after its last wait (no flag follows it: the sender sends flag k+1 only
    # after this receiver's ready increment k+1), so the word ends at its initial value INVALID — once per kernel,
    # after every item (``persist`` keeps trailing resets outside the item loop).
    for tb, prefix in ((0, "in0"), (1, "in1")):
        spec = next((g for g in c.specs if g.buffer == tb and (c.site.y == g.sender.y if tb == 0
                                                                 else c.site.x == g.sender.x)), None)
        if spec is not None and c.site != spec.sender and any(s.outs[0] == tb for s in c.stages(
                StageKind.LOAD, Level.K_BLOCK)):
            ops.append(SemSet(c.sems[f"{prefix}_receiver"], INVALID))
    return tuple(ops)


def matmul_compute(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    """The compute engine's program in the plan's accumulation form (``AccForm``): the first and last K block
    peeled, the middle blocks in a ``k`` loop, the chain fused inside the last block's sub-block nest (or after the
    single pack of a one-sub-block form)."""
    mm = next(s for s in c.stages(StageKind.COMPUTE) if s.op == "matmul")
    chain_stages = [s for s in c.stages(StageKind.COMPUTE) if s.op != "matmul"]
    t = plan.sbt
    nb = plan.num_blocks

    def pages(tb: int) -> int:
        role = c.tpl.buffers[tb].role
        return plan.sb_w if role == BufferRole.SUB_OPERAND else t

    chain = chain_ops(c, chain_stages, pages, t)
    in0, in1 = c.buf[mm.ins[0]], c.buf[mm.ins[1]]
    hand = c.buf[mm.outs[0]]
    head: list[Op] = [Wait(in0, plan.n0), Wait(in1, plan.n1)]
    tail: list[Op] = [Pop(in0, plan.n0), Pop(in1, plan.n1)]

    def pack(to: int, accumulate: bool = False) -> list[Op]:
        return [Reserve(to, t), PackAcc(to, t, accumulate), Push(to, t), ReleaseAcc()]

    def block(body: Sequence[Op], after: Sequence[Op] = ()) -> list[Op]:
        """One K block: wait for both operand blocks, the sub-block nest, ``after`` (a drain), pop the operands."""
        return [*head, _nest(plan, body), *after, *tail]

    operands = (Operand(in0, plan.n0), Operand(in1, plan.n1))
    mul: list[Op] = [AcquireAcc(t, c.acc), Compute("matmul", t, operands)]
    if plan.form == AccForm.SINGLE:
        return tuple(block([*mul, *pack(hand), *chain]))
    if plan.form in (AccForm.REGISTERS, AccForm.STREAMING):
        # One sub-block covers the site: the accumulator holds it over the whole K loop, one pack at the end.
        steps: list[Op] = [*head, Compute("matmul", t, operands), *tail]
        k_loop: list[Op] = [Loop("k", nb, tuple(steps))] if nb > 1 else steps
        return (AcquireAcc(t, c.acc), *k_loop, *pack(hand), *chain)
    interm = c.buf[c.tpl.buffer(BufferRole.INTERM)[0].id]
    # Reading every partial back returns the intermediate's read and write pointers to the page block 0 started at,
    # so the next block's sub-block s packs (accumulates) into the very pages sub-block s did.
    drain: list[Op] = [Wait(interm, plan.out_block), Pop(interm, plan.out_block)]
    reload: list[Op] = [AcquireAcc(t, c.acc), Wait(interm, t), Compute("copy", t, (Operand(interm, t),)), Pop(interm, t),
                        Compute("matmul", t, operands)]
    last = block([*reload, *pack(hand), *chain])
    if plan.form == AccForm.SPILL_RELOAD:
        ops = block([*mul, *pack(interm)])
        if nb > 2:
            ops.append(Loop("k", nb - 2, tuple(block([*reload, *pack(interm)]))))
        return (*ops, *last)
    if plan.form == AccForm.PACK_ACCUMULATE:
        if nb == 2:
            # Block 0 is also block nb-2: fresh partials left for the reload.
            return (*block([*mul, *pack(interm)]), *last)
        ops = block([*mul, *pack(interm)], drain)
        if nb > 3:
            ops.append(Loop("k", nb - 3, tuple(block([*mul, *pack(interm, True)], drain))))
        # Block nb-2 accumulates and leaves its pages for the single reload of the last block.
        return (*ops, *block([*mul, *pack(interm, True)]), *last)
    assert plan.form == AccForm.IN_PLACE
    # The intermediate shares the matmul output's pages. Reserve all of them before any partial lands there: that
    # waits until the consumer has drained the previous item's. The last block accumulates into those pages and
    # publishes them; each sub-block re-reserves its own pages (already free, so it never waits) because a push must
    # be covered by a reserve since the previous push.
    ops = [Reserve(hand, plan.out_block), *block([*mul, *pack(interm)], drain)]
    if nb > 2:
        ops.append(Loop("k", nb - 2, tuple(block([*mul, *pack(interm, True)], drain))))
    return (*ops, *block([*mul, *pack(hand, True), *chain]))


def matmul_writer(c: Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    st = c.stages(StageKind.STORE)[0]
    assert st.tensor is not None
    out = c.buf[st.ins[0]]
    ncols = tensor_cols(c, st.tensor)
    # Output tile (y*per_site_m + i*sb_h + r, x*site_n + j*sb_w) of item 0, row-major over the output's tile columns.
    addr = Addr(c.site.y * plan.per_site_m * ncols + c.site.x * plan.site_n,
                (Term("i", plan.sb_h * ncols), Term("r", ncols), Term("j", plan.sb_w)))
    body: list[Op] = [Wait(out, plan.sbt), Loop("r", plan.sb_h, (WriteTiles(out, st.tensor, addr, plan.sb_w),)),
                      WriteBarrier(), Pop(out, plan.sbt)]
    return (_nest(plan, body),)
