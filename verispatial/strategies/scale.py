"""Hypothesis strategies for programs at scale: many small drawn programs side by side on disjoint sites.

``large_programs()`` draws ``parts`` programs of ``programs()`` (each 1-2 sites), repeats every engine's op list
until the whole holds at least ``min_ops`` ops, raises every trip's maximum to a value up to ``max_trip``, and
places the parts on disjoint sites of one target (``side_by_side``), so the whole has at least ``min_sites`` sites.
The parts share no buffer, semaphore, group, tensor or trip, so what each part breaks is what the whole breaks;
what the checker decides symbolically at scale (trips up to 64, long op lists, many components) meets the
explicit-state explorer, which under a state cap finds the violations and deadlocks near the start of a run or
gives up (``inconclusive``).
"""

from __future__ import annotations

import attrs
from hypothesis import assume
from hypothesis import strategies as st

from verispatial.ir import BufferAt, EngineProgram, Program, Site, Trip
from verispatial.ir.ids import Renaming
from verispatial.ir.program import walk
from verispatial.ir.validate import validate
from verispatial.strategies.programs import programs


def op_count(p: Program) -> int:
    """Every op of every engine program, containers and their bodies included."""
    return sum(1 for ep in p.programs for _ in walk(ep.ops))


def _sites(p: Program) -> set[Site]:
    return {ep.site for ep in p.programs} | {b.site for b in p.buffers} | {s for x in p.semaphores for s in x.sites}


def side_by_side(parts: list[Program], name: str = "large") -> Program:
    """One program running ``parts`` at once on disjoint sites, with the first part's target: part ``i``'s sites move
    to the ``i``-th free block of columns (rows kept), its buffer, semaphore and group ids follow those of the parts
    before it, and its tensors and trips get the suffix ``_<i>``. Raises ValueError when the parts do not fit the
    target's mesh or have more than one section."""
    target = parts[0].target
    width, height = target.mesh
    out = Program(name, target)
    x0 = 0
    for i, p in enumerate(parts):
        if len(p.sections) != 1 or any(ep.section_starts for ep in p.programs):
            raise ValueError(f"part {i} has sections; side_by_side joins single-section programs")
        sites = _sites(p) | {d for g in p.groups for d in g.destinations()} | {g.sender for g in p.groups}
        span = max(s.x for s in sites) - min(s.x for s in sites) + 1 if sites else 1
        if x0 + span > width or (sites and max(s.y for s in sites) >= height):
            raise ValueError(f"part {i} does not fit the {width}x{height} mesh at column {x0}")
        dx = x0 - (min(s.x for s in sites) if sites else 0)
        nb, ns, ng = len(out.buffers), len(out.semaphores), len(out.groups)

        def move(s: Site, dx: int = dx) -> Site:
            return Site(s.x + dx, s.y)

        ren = Renaming(buffer=lambda b, nb=nb: b + nb, semaphore=lambda s, ns=ns: s + ns,  # type: ignore[misc]
                       group=lambda g, ng=ng: g + ng, tensor=lambda t, i=i: f"{t}_{i}",  # type: ignore[misc]
                       trip=lambda t, i=i: f"{t}_{i}", site=move)  # type: ignore[misc]
        programs_ = tuple(EngineProgram(move(ep.site), ep.engine, ren.ops(ep.ops)) for ep in p.programs)
        out = attrs.evolve(
            out,
            tensors=(*out.tensors, *(attrs.evolve(t, name=f"{t.name}_{i}") for t in p.tensors)),
            buffers=(*out.buffers, *(attrs.evolve(b, id=b.id + nb, site=move(b.site),
                                                  alias_of=None if b.alias_of is None else b.alias_of + nb)
                                     for b in p.buffers)),
            semaphores=(*out.semaphores, *(attrs.evolve(s, id=s.id + ns, sites=tuple(move(x) for x in s.sites))
                                           for s in p.semaphores)),
            groups=(*out.groups, *(attrs.evolve(g, id=g.id + ng, sender=move(g.sender),
                                                rect=(g.rect[0] + dx, g.rect[1], g.rect[2] + dx, g.rect[3]))
                                   for g in p.groups)),
            trips=(*out.trips, *(attrs.evolve(t, name=f"{t.name}_{i}") for t in p.trips)),
            programs=(*out.programs, *programs_),
            memory=(*out.memory, *(BufferAt(m.buf + nb, m.offset, m.size) for m in p.memory)),
        )
        x0 += span
    return out


def _repeated(p: Program, times: int) -> Program:
    """Every engine's op list run ``times`` times in a row (the ops themselves, not a loop: the op count grows)."""
    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=ep.ops * times) for ep in p.programs))


@st.composite
def large_programs(draw: st.DrawFn, min_ops: int = 1000, min_sites: int = 8, max_trip: int = 64) -> Program:
    """A valid program of at least ``min_ops`` ops on at least ``min_sites`` sites whose trips reach up to
    ``max_trip`` (module docstring). Parts that fail ``validate`` once enlarged are dropped."""
    target = None
    parts: list[Program] = []
    used = 0
    for _ in range(32):
        if len(parts) >= 2 and used >= min_sites:
            break
        p = draw(programs())
        if target is None:
            target = p.target
        if p.target != target or not p.programs or len(p.sections) != 1:
            continue
        trips = tuple(Trip(t.name, draw(st.integers(min(t.max, max_trip), max_trip))) for t in p.trips)
        p = attrs.evolve(p, trips=trips)
        if validate(p):
            continue
        parts.append(p)
        used += len(_sites(p))
    assume(len(parts) >= 2 and used >= min_sites)
    ops = sum(op_count(p) for p in parts)
    times = max(1, -(-min_ops // max(ops, 1)))
    grown = []
    for p in parts:
        q = _repeated(p, times)
        grown.append(q if not validate(q) else p)
    try:
        whole = side_by_side(grown)
    except ValueError:
        assume(False)
        raise
    assume(op_count(whole) >= min_ops and not validate(whole))
    return whole
