"""What every op family's engine programs share: the per-site context, dataflow ranks, plain loads and the
chain of compute stages on one page each."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from verispatial.ir.core import Addr, Site
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
)
from verispatial.ir.section import (
    FoldLevel,
    GroupSpec,
    Level,
    MatmulPlan,
    SectionTemplate,
    Stage,
    StageKind,
)
from verispatial.ir.target import Target

#: Semaphore values of the multicast protocol (tt-metal common_values.hpp).
INVALID, VALID = 0, 1


def acc_dtype(tpl: SectionTemplate, target: Target) -> str:
    """The accumulator precision of a section: fp32 (fp32_dest_acc_en, half the DST tiles) when any of its buffers
    is a 32-bit float, else bf16."""
    wide = any(target.bytes_per_tile(b.dtype) >= 2 * target.bytes_per_tile("bf16") for b in tpl.buffers
               if b.dtype.startswith("fp"))
    return "fp32" if wide else "bf16"


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
class Ctx:
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

    @property
    def acc(self) -> str:
        """The dtype every accumulator acquire of this section takes (``acc_dtype``)."""
        return acc_dtype(self.tpl, self.target)

    def stages(self, kind: StageKind, level: Level | None = None) -> list[Stage]:
        out = [s for s in self.tpl.stages if s.kind == kind and (level is None or s.level == level)]
        return sorted(out, key=lambda s: self.rank[s.id])


def _nest(plan: MatmulPlan, body: Sequence[Op]) -> Op:
    """The sub-block nest: ``i`` over sub-blocks along M, ``j`` along N (the writer's order too)."""
    return Loop("i", plan.sub_h, (Loop("j", plan.sub_w, tuple(body)),))


def tensor_cols(c: Ctx, name: str) -> int:
    """Tiles per row of tensor ``name`` (row-major tile addresses)."""
    t = next(t for t in c.tpl.tensors if t.name == name)
    cols = t.shape[-1]
    return -(-cols // c.target.tile[1])


def plain_load(c: Ctx, s: Stage, addr: Addr, tiles: int) -> list[Op]:
    assert s.tensor is not None
    b = c.buf[s.outs[0]]
    return [Reserve(b, tiles), ReadTiles(s.tensor, addr, tiles, b), ReadBarrier(), Push(b, tiles)]


def chain_ops(c: Ctx, stages: list[Stage], pages: Callable[[int], int], tiles: int) -> list[Op]:
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
        ins = tuple(Operand(c.buf[tb], pages(tb)) for tb in reads)
        ops += [AcquireAcc(tiles, c.acc), Compute(s.op, tiles, ins), Reserve(out, tiles), PackAcc(out, tiles),
                Push(out, tiles), ReleaseAcc()]
        ops += [Pop(c.buf[tb], pages(tb)) for tb in reads if last_use[tb] == i]
    return ops
