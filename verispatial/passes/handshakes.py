"""``synthesize-handshakes``: the engine programs, derived from the sized section's stages, edges and plan.

Per site and engine it emits the op sequence each edge's hand-off demands (DESIGN §6, reference §2.5):

- reader: once-per-item loads first, then the K-block loads inside the ``k`` loop (in dataflow order: in0, then
  in1) — a multicast sender reads, waits for every receiver's ready increment, resets the counter, multicasts the
  data, [flushes where the target does not keep writes ordered], multicasts the valid flag [and flushes after it
  where it does, before the slot is refilled], pushes; a receiver reserves, invalidates its flag, increments the
  sender's ready counter, waits for valid, pushes — then the per-sub-block loads (a bias row); the flag's source is a
  word created VALID on the sender's site and never written, and each receiver resets its flag once more after its
  last wait, so every word ends at its initial value (a later phase of a composed program may take its slot); the
  kernel ends with a write barrier and an atomic barrier so no NoC transaction is outstanding;
- compute: the matmul with its first and last K block peeled (no runtime ``if``): block 0 packs fresh partials to
  the spill, each middle block reloads and re-spills, the last reloads and packs to the hand-off; the fused chain
  runs inside the last block's sub-block nest, on each page the turn it is produced (emitting the chain's nest after
  the matmul's would need a hand-off as deep as the whole block); every page is popped by its last reader;
- writer: per sub-block, wait, write its rows, write barrier, pop.

Elementwise sections run reader → compute → writer over each site's chunks, every hand-off double-buffered.

Where ``place`` put loads and stores on one data-movement engine, the reader's and writer's programs merge into one
with their adjacent loop nests interleaved (``programs/fuse.py``: fused only across the two programs, over one index
space, and never where the later nest drains what the earlier fills).
"""

from __future__ import annotations

import attrs

from verispatial.ir import rules as R
from verispatial.ir.core import Engine, SemRole, Site
from verispatial.ir.ops import (
    Loop,
    Op,
)
from verispatial.ir.program import Buffer, BufferAt, EngineProgram, Group, Program, Semaphore, Trip
from verispatial.ir.section import (
    AttentionPlan,
    FoldPlan,
    MatmulPlan,
    MovePlan,
    Phase,
    Section,
    StageKind,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse
from verispatial.passes.programs.attention import attention_programs
from verispatial.passes.programs.common import INVALID, VALID, Ctx, stage_ranks
from verispatial.passes.programs.eltwise import eltwise_programs
from verispatial.passes.programs.fold import fold_programs
from verispatial.passes.programs.fuse import merge_movers
from verispatial.passes.programs.matmul import matmul_compute, matmul_reader, matmul_writer
from verispatial.passes.programs.move import move_programs

__all__ = ["SynthesizeHandshakes", "stage_ranks"]


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
        if isinstance(plan, MatmulPlan) and plan.k_trip is not None:
            refuse(self.name, section, "a matmul whose K blocks run to a trip — its accumulate-and-spill forms peel "
                                       "blocks a count read from the data may not have")
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
        for tb, prefix in ((0, "in0"), (1, "in1")):
            if any(g.buffer == tb for g in pl.groups):
                # The flag multicast's source: a word created VALID on each sender's site and never written
                # (noc_semaphore_set_multicast(src, ...) copies it), so it ends where it started — a later phase of
                # a composed program may take its slot (docs/checker.md, "Semaphore slots").
                senders = [x for x in pl.sites if any(g.buffer == tb and g.sender == x for g in pl.groups)]
                sems[f"{prefix}_valid"] = len(semaphores)
                semaphores.append(Semaphore(len(semaphores), f"{prefix}_valid_sem", tuple(senders), VALID,
                                            SemRole.MCAST_VALID))
        if len(semaphores) > target.max_semaphores:
            refuse(self.name, section, f"needs {len(semaphores)} semaphores per site; target {target.name} has {target.max_semaphores}")
        groups = tuple(Group(i, g.sender, g.rect) for i, g in enumerate(pl.groups))
        group_of = {(g.buffer, g.sender): i for i, g in enumerate(pl.groups)}
        rank = stage_ranks(tpl)
        aliased = any(sb.alias_of is not None for sb in layout.buffers)
        programs: list[EngineProgram] = []
        for index, site in enumerate(pl.sites):
            buf = {sb.buffer: gid[(site, sb.buffer)] for sb in layout.buffers}
            c = Ctx(tpl, target, site, buf, sems, group_of, pl.groups, rank, aliased)
            if isinstance(plan, MatmulPlan):
                progs = {Engine.READER: matmul_reader(c, plan), Engine.COMPUTE: matmul_compute(c, plan),
                         Engine.WRITER: matmul_writer(c, plan)}
            elif isinstance(plan, FoldPlan):
                progs = fold_programs(c, plan, index)
            elif isinstance(plan, MovePlan):
                progs = move_programs(c, plan, index)
            elif isinstance(plan, AttentionPlan):
                progs = attention_programs(c, plan, index)
            else:
                progs = eltwise_programs(c, plan, index)
            if any(pl.engine_of(s.id) == Engine.READER for s in tpl.stages if s.kind == StageKind.STORE):
                # Loads and stores share one data-movement engine: one program, adjacent nests fused.
                progs[Engine.READER] = merge_movers(progs[Engine.READER], progs.pop(Engine.WRITER))
            programs += [EngineProgram(site, e, progs[e]) for e in (Engine.READER, Engine.COMPUTE, Engine.WRITER)
                         if e in progs]
        program = Program(
            name=section.name,
            target=target,
            tensors=tpl.tensors,
            buffers=tuple(buffers),
            semaphores=tuple(semaphores),
            groups=groups,
            trips=(Trip(plan.trip, plan.max_blocks),) if isinstance(plan, AttentionPlan) else (),
            programs=tuple(programs),
            memory=tuple(memory),
        )
        frag: Fragment = {
            "pass": self.name,
            "engine_programs": len(programs),
            **({"trips": [{"name": t.name, "max": t.max} for t in program.trips]} if program.trips else {}),
            "ops": sum(_count(ep.ops) for ep in programs),
            "handshakes": [{"buffer": tpl.buffers[e.buffer].name, "kind": e.handshake.value,
                            "producer": pl.engine_of(e.producer).value,
                            "consumers": sorted({pl.engine_of(x).value for x in e.consumers})} for e in tpl.edges],
            "multicast": [{"group": i, "sender": [g.sender.x, g.sender.y], "ready_count": len(g.destinations()),
                           "flush": "between data and flag"
                           if target.flush_before_flag or not target.ordered_writes else "after flag"}
                          for i, g in enumerate(pl.groups)],
            "obligations": [
                {"name": R.DEADLOCK, "claim": "every engine reaches its end for every interleaving"},
                {"name": "semaphore:exact", "claim": "each ready counter is incremented exactly once per receiver per K block"},
                {"name": "balance", "claim": "every circular buffer ends empty and every semaphore at its initial value"},
                {"name": "async-noc", "claim": "reads published after a read barrier; flag after data on this target; "
                                               "no transaction outstanding at the end"},
            ],
        }
        return attrs.evolve(section, program=program), frag


def _count(ops: tuple[Op, ...]) -> int:
    return sum(1 + (_count(o.body) if isinstance(o, Loop) else 0) for o in ops)

