"""Small sections and composed programs the compositional checker's tests share (built with the real ``compose``).

A *copy section* moves tiles of one tensor into another through a one-tile-page circular buffer on each site:
the reader reads, the writer writes. ``exchange(k)`` is section ``k`` of a two-site chain in which every site reads
the half of ``A<k>`` the OTHER site wrote in section ``k - 1`` and writes its own half of ``A<k+1>``: every
participant has work in every section, and the rendezvous alone orders each section's reads after the previous
section's writes.
"""

from __future__ import annotations

import attrs

from verispatial.certify.compositional import Rendezvous, recognise
from verispatial.ir import (
    WORMHOLE,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Op,
    Program,
    Role,
    Site,
    Tensor,
)
from verispatial.ir.ids import Renaming
from verispatial.passes import compose
from verispatial.strategies.sections import copy_programs, tensor

S0, S1, S2 = Site(0, 0), Site(1, 0), Site(2, 0)
#: tiles each site copies per section
HALF = 1


def section(name: str, copies: list[tuple[Site, str, int, str, int]], tensors: list[Tensor],
            tiles: int = HALF) -> Program:
    """One section: per entry ``(site, src, src_base, dst, dst_base)`` a reader and a writer on that site copying
    ``tiles`` tiles through its own two-page buffer (one per site: cb index 0), memory from the reserved base."""
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    memory: list[BufferAt] = []
    for i, (site, src, sb, dst, db) in enumerate(copies):
        buffers.append(Buffer(i, f"cb{i}", site, 0, 1, 2, "bf16"))
        programs += copy_programs(site, (Engine.READER, Engine.WRITER), i, src, sb, dst, db, tiles, barrier=True)
        memory.append(BufferAt(i, WORMHOLE.reserved_base, 2 * WORMHOLE.bytes_per_tile("bf16")))
    return Program(name, WORMHOLE, tensors=tuple(tensors), buffers=tuple(buffers), programs=tuple(programs),
                   memory=tuple(memory))


def exchange(k: int) -> Program:
    """Section ``k`` of the exchange chain ``A0 -> A1 -> ... -> A<last+1>`` on sites S0 and S1 (module docstring):
    site s reads tiles of the other site's half of ``A<k>`` and writes its own half of ``A<k+1>``."""
    src, dst = f"A{k}", f"A{k + 1}"
    # As compile leaves a section: it reads an input and writes an output (compose derives the joined roles).
    ts = [tensor(src, 2 * HALF, Role.INPUT), tensor(dst, 2 * HALF, Role.OUTPUT)]
    return section(f"exchange{k}", [(S0, src, HALF, dst, 0), (S1, src, 0, dst, HALF)], ts)


def exchange_chain(n: int = 3, barrier_after: list[bool] | None = None) -> Program:
    """The composed exchange chain of ``n`` sections (every boundary closed unless ``barrier_after`` says)."""
    p, _ = compose([exchange(k) for k in range(n)], target=WORMHOLE, barrier_after=barrier_after)
    return p


def rendezvous_of(p: Program) -> Rendezvous:
    rv = recognise(p)
    assert isinstance(rv, Rendezvous), rv
    return rv


def with_ops(p: Program, key: str, ops: list[Op], starts: list[int]) -> Program:
    """``p`` with engine ``key``'s op list and section starts replaced."""
    progs = tuple(attrs.evolve(ep, ops=tuple(ops), section_starts=tuple(starts)) if ep.key == key else ep
                  for ep in p.programs)
    return attrs.evolve(p, programs=progs)


def engine(p: Program, key: str) -> EngineProgram:
    return next(ep for ep in p.programs if ep.key == key)


def shift_sites(p: Program, dx: int) -> Program:
    """``p`` with every site moved ``dx`` columns to the right (ops, buffers, semaphores, groups)."""

    def move(s: Site) -> Site:
        return Site(s.x + dx, s.y)

    ren = Renaming(site=move)
    return attrs.evolve(
        p,
        programs=tuple(attrs.evolve(ep, site=move(ep.site), ops=ren.ops(ep.ops)) for ep in p.programs),
        buffers=tuple(attrs.evolve(b, site=move(b.site)) for b in p.buffers),
        semaphores=tuple(attrs.evolve(s, sites=tuple(move(x) for x in s.sites)) for s in p.semaphores),
        groups=tuple(attrs.evolve(g, sender=move(g.sender), rect=(g.rect[0] + dx, g.rect[1], g.rect[2] + dx,
                                                                  g.rect[3])) for g in p.groups))
