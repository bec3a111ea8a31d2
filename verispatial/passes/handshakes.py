"""``synthesize-handshakes``: the engine programs, derived from the sized section's stages, edges and plan.

Per site and engine it emits the op sequence each edge's hand-off demands (DESIGN §6, reference §2.5):

- reader: once-per-item loads first, then the K-block loads inside the ``k`` loop (in dataflow order: in0, then
  in1) — a multicast sender reads, waits for every receiver's ready increment, resets the counter, multicasts the
  data, [flushes where the target does not keep writes ordered], multicasts the valid flag [and flushes after it
  where it does, before the slot is refilled], pushes; a receiver reserves, invalidates its flag, increments the
  sender's ready counter, waits for valid, pushes — then the per-sub-block loads (a bias row); the kernel ends with
  a write barrier and an atomic barrier so no NoC transaction is outstanding;
- compute: the matmul with its first and last K block peeled (no runtime ``if``): block 0 packs fresh partials to
  the spill, each middle block reloads and re-spills, the last reloads and packs to the hand-off; the fused chain
  runs inside the last block's sub-block nest, on each page the turn it is produced (emitting the chain's nest after
  the matmul's would need a hand-off as deep as the whole block); every page is popped by its last reader;
- writer: per sub-block, wait, write its rows, write barrier, pop.

Elementwise sections run reader → compute → writer over each site's chunks, every hand-off double-buffered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from verispatial.ir.core import Addr, Dynamic, Engine, SemRole, Site, Term, WaitCond
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
from verispatial.ir.program import Buffer, BufferAt, EngineProgram, Group, Program, Semaphore
from verispatial.ir.section import (
    AccForm,
    BufferRole,
    EltwisePlan,
    FoldLevel,
    FoldPlan,
    GroupSpec,
    Level,
    MatmulPlan,
    MovePlan,
    Phase,
    Section,
    SectionTemplate,
    Stage,
    StageKind,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse

#: Semaphore values of the multicast protocol (tt-metal common_values.hpp).
INVALID, VALID = 0, 1


def stage_ranks(tpl: SectionTemplate) -> list[int]:
    """A dataflow rank per stage: a stage that fills a buffer ranks before every stage that drains it; ties keep
    stage-id order. An engine program is serial, so a stage that waits on a later stage of its own engine would
    never run: ordering by rank makes that impossible to build.

    A carry is read before it is updated: inside a K block every other reader of a fold's carry sees the value the
    block started with, so it ranks ahead of the carry's update (the update -> reader arc would be the wrong way round
    inside the block); readers after the blocks (the epilogue) rank after the update."""
    n = len(tpl.stages)
    update_of = dict(tpl.carries)
    producers: dict[int, list[int]] = {}
    for st in tpl.stages:
        for b in st.outs:
            producers.setdefault(b, []).append(st.id)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for st in tpl.stages:
        for b in dict.fromkeys(st.ins):
            for pr in producers.get(b, []):
                if pr == st.id:
                    continue
                a, z = (st.id, pr) if update_of.get(b) == pr and st.fold == FoldLevel.BODY else (pr, st.id)
                succ[a].append(z)
                indeg[z] += 1
    ready = sorted(i for i in range(n) if indeg[i] == 0)
    rank = [-1] * n
    k = 0
    while ready:
        i = ready.pop(0)
        rank[i] = k
        k += 1
        for t in succ[i]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
                ready.sort()
    return [r if r >= 0 else k + i for i, r in enumerate(rank)]


@attrs.frozen
class _Ctx:
    """Everything one site's programs need: global buffer ids by template buffer, pages per hand-off, semaphores."""

    tpl: SectionTemplate
    target: Target
    site: Site
    buf: dict[int, int]
    sems: dict[str, int]
    groups: dict[tuple[int, Site], int]
    specs: tuple[GroupSpec, ...]
    rank: list[int]
    aliased: bool

    def stages(self, kind: StageKind, level: Level | None = None) -> list[Stage]:
        out = [s for s in self.tpl.stages if s.kind == kind and (level is None or s.level == level)]
        return sorted(out, key=lambda s: self.rank[s.id])


def _nest(plan: MatmulPlan, body: Sequence[Op]) -> Op:
    """The sub-block nest: ``i`` over sub-blocks along M, ``j`` along N (the writer's order too)."""
    return Loop("i", plan.sub_h, (Loop("j", plan.sub_w, tuple(body)),))


def _tensor_cols(c: _Ctx, name: str) -> int:
    """Tiles per row of tensor ``name`` (row-major tile addresses)."""
    t = next(t for t in c.tpl.tensors if t.name == name)
    cols = t.shape[-1]
    return -(-cols // c.target.tile[1])


# ------------------------------------------------------------------------------------------------ matmul reader


def _k_load(c: _Ctx, plan: MatmulPlan, s: Stage) -> list[Op]:
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
    kcols = _tensor_cols(c, s.tensor)
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


def _matmul_reader(c: _Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    start: list[Op] = []
    # A sender's own copy of the valid flag holds VALID: it is the source of the flag multicast.
    for tb, prefix in ((0, "in0"), (1, "in1")):
        if any(g.buffer == tb and g.sender == c.site for g in c.specs):
            start.append(SemSet(c.sems[f"{prefix}_receiver"], VALID))
    ops: list[Op] = list(start)
    for s in c.stages(StageKind.LOAD, Level.ONCE):
        ops += _plain_load(c, s, Addr(0), 1)
    k_body: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.K_BLOCK):
        k_body += _k_load(c, plan, s)
    ops.append(Loop("k", plan.num_blocks, tuple(k_body)))
    sub: list[Op] = []
    for s in c.stages(StageKind.LOAD, Level.SUB_BLOCK):
        # A bias row: sb_w tiles of the site's columns, once per output sub-block.
        sub += _plain_load(c, s, Addr(c.site.x * plan.per_site_n, (Term("j", plan.sb_w),)), plan.sb_w)
    if sub:
        ops.append(_nest(plan, sub))
    # No engine may finish with NoC transactions outstanding (reference §2.5 end, PR #55119).
    ops += [WriteBarrier(), AtomicBarrier()]
    return tuple(ops)


def _plain_load(c: _Ctx, s: Stage, addr: Addr, tiles: int) -> list[Op]:
    assert s.tensor is not None
    b = c.buf[s.outs[0]]
    return [Reserve(b, tiles), ReadTiles(s.tensor, addr, tiles, b), ReadBarrier(), Push(b, tiles)]


# ------------------------------------------------------------------------------------------------ compute


def _chain(c: _Ctx, stages: list[Stage], pages: Callable[[int], int], tiles: int) -> list[Op]:
    """The chain stages on one page each: wait operands, compute, pack the next page, pop each operand at its
    LAST reader in the chain (popping at the first would retire a page a later stage still waits on)."""
    last_use: dict[int, int] = {}
    for i, s in enumerate(stages):
        for tb in s.ins:
            last_use[tb] = i
    ops: list[Op] = []
    for i, s in enumerate(stages):
        reads = list(dict.fromkeys(s.ins))
        out = c.buf[s.outs[0]]
        ops += [Wait(c.buf[tb], pages(tb)) for tb in reads]
        ops += [AcquireAcc(tiles), Compute(s.op, tiles), Reserve(out, tiles), PackAcc(out, tiles), Push(out, tiles),
                ReleaseAcc()]
        ops += [Pop(c.buf[tb], pages(tb)) for tb in reads if last_use[tb] == i]
    return ops


def _matmul_compute(c: _Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    mm = next(s for s in c.stages(StageKind.COMPUTE) if s.op == "matmul")
    chain_stages = [s for s in c.stages(StageKind.COMPUTE) if s.op != "matmul"]
    t = plan.sbt

    def pages(tb: int) -> int:
        role = c.tpl.buffers[tb].role
        return plan.sb_w if role == BufferRole.SUB_OPERAND else t

    chain = _chain(c, chain_stages, pages, t)
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


# ------------------------------------------------------------------------------------------------ writer


def _matmul_writer(c: _Ctx, plan: MatmulPlan) -> tuple[Op, ...]:
    st = c.stages(StageKind.STORE)[0]
    assert st.tensor is not None
    out = c.buf[st.ins[0]]
    ncols = _tensor_cols(c, st.tensor)
    # Output tile (y*per_site_m + i*sb_h + r, x*per_site_n + j*sb_w), row-major over the output's tile columns.
    addr = Addr(c.site.y * plan.per_site_m * ncols + c.site.x * plan.per_site_n,
                (Term("i", plan.sb_h * ncols), Term("r", ncols), Term("j", plan.sb_w)))
    body: list[Op] = [Wait(out, plan.sbt), Loop("r", plan.sb_h, (WriteTiles(out, st.tensor, addr, plan.sb_w),)),
                      WriteBarrier(), Pop(out, plan.sbt)]
    return (_nest(plan, body),)


# ------------------------------------------------------------------------------------------------ elementwise


def _eltwise_programs(c: _Ctx, plan: EltwisePlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    ch = plan.chunk
    base = index * plan.per_site
    at = Addr(base, (Term("t", ch),))
    loads = c.stages(StageKind.LOAD)
    reserves: list[Op] = [Reserve(c.buf[s.outs[0]], ch) for s in loads]
    reads: list[Op] = [ReadTiles(s.tensor or "", at, ch, c.buf[s.outs[0]]) for s in loads]
    pushes: list[Op] = [Push(c.buf[s.outs[0]], ch) for s in loads]
    reader = (Loop("t", plan.steps, (*reserves, *reads, ReadBarrier(), *pushes)),)
    compute = (Loop("t", plan.steps, tuple(_chain(c, c.stages(StageKind.COMPUTE), lambda _b: ch, ch))),)
    st = c.stages(StageKind.STORE)[0]
    out = c.buf[st.ins[0]]
    writer = (Loop("t", plan.steps, (Wait(out, ch), WriteTiles(out, st.tensor or "", at, ch), WriteBarrier(), Pop(out, ch))),)
    return {Engine.READER: reader, Engine.COMPUTE: compute, Engine.WRITER: writer}


# ------------------------------------------------------------------------------------------------ fold


def _fold_programs(c: _Ctx, plan: FoldPlan, index: int) -> dict[Engine, tuple[Op, ...]]:
    """A fold over each of the site's ``plan.rows`` tile rows (every engine loops ``i`` over them).

    Compute: the prologue once, the body once per K block (``k``), the epilogue once, the apply stages once per K
    block of a second pass. Every page is popped once, where its last reader runs: a body page by its last body
    reader; the carry's page from before the block by the carry's update once the new page is pushed, and the page the
    last block leaves by its last epilogue reader (or waited and popped after the blocks); a page made once (prologue,
    epilogue) and read by every block of a later loop is waited and popped after that loop.
    Reader: the body's K-block loads, then the apply pass's. Writer: per apply K block, wait, write, barrier, pop.
    """
    tpl, bw = c.tpl, plan.block_w
    update_of = dict(tpl.carries)
    computes = c.stages(StageKind.COMPUTE)
    at = {lvl: [s for s in computes if s.fold == lvl] for lvl in FoldLevel}

    def level(tb: int) -> FoldLevel:
        lv = tpl.producer(tb).fold
        assert lv is not None
        return lv

    def pages(tb: int) -> int:
        once = tpl.buffers[tb].role == BufferRole.CARRY or level(tb) in (FoldLevel.PROLOGUE, FoldLevel.EPILOGUE)
        return 1 if once else bw

    def last_reader(lvl: FoldLevel, tb: int) -> int | None:
        return next((s.id for s in reversed(at[lvl]) if tb in s.ins), None)

    pops: dict[int, list[int]] = {}
    after: dict[FoldLevel, list[int]] = {FoldLevel.BODY: [], FoldLevel.APPLY: []}
    for tb in dict.fromkeys(b for s in computes for b in s.ins):
        epi, app = last_reader(FoldLevel.EPILOGUE, tb), last_reader(FoldLevel.APPLY, tb)
        if tb in update_of:
            pops.setdefault(update_of[tb], []).append(tb)
            if epi is not None:
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
        ops += [AcquireAcc(t), Compute(s.op, t), Reserve(out, t), PackAcc(out, t), Push(out, t), ReleaseAcc()]
        return ops + [Pop(c.buf[tb], pages(tb)) for tb in pops.get(s.id, [])]

    def loop(body: list[Op]) -> list[Op]:
        return [Loop("k", plan.num_blocks, tuple(body))] if body else []

    def drain(tbs: list[int]) -> list[Op]:
        return [op for tb in tbs for op in (Wait(c.buf[tb], pages(tb)), Pop(c.buf[tb], pages(tb)))]

    compute: list[Op] = [op for s in at[FoldLevel.PROLOGUE] for op in stage_ops(s)]
    compute += loop([op for s in at[FoldLevel.BODY] for op in stage_ops(s)]) + drain(after[FoldLevel.BODY])
    compute += [op for s in at[FoldLevel.EPILOGUE] for op in stage_ops(s)]
    compute += loop([op for s in at[FoldLevel.APPLY] for op in stage_ops(s)]) + drain(after[FoldLevel.APPLY])

    def addr(tensor: str) -> Addr:
        kcols = _tensor_cols(c, tensor)
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


# ------------------------------------------------------------------------------------------------ gather, scatter


def _move_programs(c: _Ctx, plan: MovePlan, index: int) -> dict[Engine, tuple[Op, ...]]:
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
    dyn = Dynamic(ix_stage.tensor, 0, tile_rows(big) - (1 if gather else rows), kcols)
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


# ------------------------------------------------------------------------------------------------ the pass


@attrs.frozen
class SynthesizeHandshakes:
    """Emit every engine program. Valid in (phase ``sized``), valid out (``scheduled``: a ``Program``)."""

    name: str = "synthesize-handshakes"

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.SIZED)
        tpl, plan, pl, layout = section.template, section.plan, section.placement, section.layout
        assert tpl is not None
        assert plan is not None
        assert pl is not None
        assert layout is not None
        buffers: list[Buffer] = []
        memory: list[BufferAt] = []
        gid: dict[tuple[Site, int], int] = {}
        for site in pl.sites:
            for sb in layout.buffers:
                gid[(site, sb.buffer)] = len(gid)
        for site in pl.sites:
            for sb in layout.buffers:
                i = gid[(site, sb.buffer)]
                alias = gid[(site, sb.alias_of)] if sb.alias_of is not None else None
                buffers.append(Buffer(i, sb.name, site, sb.cb, sb.page_tiles, sb.capacity, sb.dtype, alias_of=alias))
                memory.append(BufferAt(i, sb.offset, sb.size))
        sems: dict[str, int] = {}
        semaphores: list[Semaphore] = []
        for tb, prefix in ((0, "in0"), (1, "in1")):
            if any(g.buffer == tb for g in pl.groups):
                for suffix, role in (("sender", SemRole.MCAST_READY), ("receiver", SemRole.MCAST_VALID)):
                    sems[f"{prefix}_{suffix}"] = len(semaphores)
                    semaphores.append(Semaphore(len(semaphores), f"{prefix}_{suffix}_sem", pl.sites, INVALID, role))
        if len(semaphores) > target.max_semaphores:
            refuse(self.name, section, f"needs {len(semaphores)} semaphores per site; target {target.name} has {target.max_semaphores}")
        groups = tuple(Group(i, g.sender, g.rect) for i, g in enumerate(pl.groups))
        group_of = {(g.buffer, g.sender): i for i, g in enumerate(pl.groups)}
        rank = stage_ranks(tpl)
        aliased = any(sb.alias_of is not None for sb in layout.buffers)
        programs: list[EngineProgram] = []
        for index, site in enumerate(pl.sites):
            buf = {sb.buffer: gid[(site, sb.buffer)] for sb in layout.buffers}
            c = _Ctx(tpl, target, site, buf, sems, group_of, pl.groups, rank, aliased)
            if isinstance(plan, MatmulPlan):
                progs = {Engine.READER: _matmul_reader(c, plan), Engine.COMPUTE: _matmul_compute(c, plan),
                         Engine.WRITER: _matmul_writer(c, plan)}
            elif isinstance(plan, FoldPlan):
                progs = _fold_programs(c, plan, index)
            elif isinstance(plan, MovePlan):
                progs = _move_programs(c, plan, index)
            else:
                progs = _eltwise_programs(c, plan, index)
            programs += [EngineProgram(site, e, progs[e]) for e in (Engine.READER, Engine.COMPUTE, Engine.WRITER)
                         if e in progs]
        program = Program(
            name=section.name,
            target=target,
            tensors=tpl.tensors,
            buffers=tuple(buffers),
            semaphores=tuple(semaphores),
            groups=groups,
            programs=tuple(programs),
            memory=tuple(memory),
        )
        frag: Fragment = {
            "pass": self.name,
            "engine_programs": len(programs),
            "ops": sum(_count(ep.ops) for ep in programs),
            "handshakes": [{"buffer": tpl.buffers[e.buffer].name, "kind": e.handshake.value,
                            "producer": pl.engine_of(e.producer).value,
                            "consumers": sorted({pl.engine_of(x).value for x in e.consumers})} for e in tpl.edges],
            "multicast": [{"group": i, "sender": [g.sender.x, g.sender.y], "ready_count": len(g.destinations()),
                           "flush": "between data and flag" if not target.ordered_writes else "after flag"}
                          for i, g in enumerate(pl.groups)],
            "obligations": [
                {"name": "deadlock", "claim": "every engine reaches its end for every interleaving"},
                {"name": "semaphore:exact", "claim": "each ready counter is incremented exactly once per receiver per K block"},
                {"name": "balance", "claim": "every circular buffer ends empty and every semaphore at its initial value"},
                {"name": "async-noc", "claim": "reads published after a read barrier; flag after data on this target; "
                                               "no transaction outstanding at the end"},
            ],
        }
        return attrs.evolve(section, program=program), frag


def _count(ops: tuple[Op, ...]) -> int:
    return sum(1 + (_count(o.body) if isinstance(o, Loop) else 0) for o in ops)

