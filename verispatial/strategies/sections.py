"""Hypothesis strategies for section graphs and composed programs (``verispatial.passes.compose``).

A *section graph* is what ``compose`` takes: scheduled sections in execution order, which boundaries close with a
rendezvous (``barrier_after``: a closed boundary starts a new phase; sections of one phase run concurrently) and the
carried ``state`` tensors. ``section_graphs()`` draws 2-4 tiny sections on the Wormhole target over a pool of at most
four (site, engine) slots on 1-3 sites. Each section copies 1-2 tiles per site from a source tensor to a target
tensor through a one-tile-page circular buffer (the reader fills, the writer drains; one engine alone does both),
so that

- in a ``dag`` the sections read and write a shared pool (input ``X``, activations ``A0``, ``A1``, state ``S``,
  outputs ``Y``, ``Z``): activations cross boundaries (read before, after or in the phase that writes them),
  the state is read and rewritten in place by several sections, outputs are written by one or several;
- in a ``chain`` section ``k`` reads ``A<k>`` (``X`` for the first) and writes ``A<k+1>`` (``Y`` for the last).

Sometimes (``broken``) a section is mutated (``programs.mutate``: an op dropped, a count changed, two ops
swapped). ``composed_programs()`` joins a section graph with the real ``compose``; draws compose refuses are
rejected (``assume``). Tile counts are tiles; memory offsets are bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from hypothesis import assume
from hypothesis import strategies as st

from verispatial.errors import ComposeRefused
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Site,
    Tensor,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate
from verispatial.strategies.programs import mutate

#: Tiles of every tensor of the pool.
TILES = 2
SITES = (Site(0, 0), Site(1, 0), Site(2, 0))
#: The tensor pool of a ``dag``: what a section may read and write. Roles are what compose derives from use.
SOURCES = ("X", "A0", "A1", "S")
DESTINATIONS = ("A0", "A1", "S", "Y", "Z")
STATE = ("S",)


@attrs.frozen
class SectionGraph:
    """Scheduled ``sections`` in execution order, ``barrier_after[k]`` (boundary ``k`` closes with a rendezvous)
    and the carried ``state`` tensors: ``compose(sections, barrier_after=..., state=..., target=WORMHOLE)``."""

    sections: tuple[Program, ...]
    barrier_after: tuple[bool, ...]
    state: tuple[str, ...]

    def compose(self) -> Program:
        """The composed program (raises ``ComposeRefused`` naming the rule)."""
        from verispatial.passes import compose

        p, _ = compose(list(self.sections), target=WORMHOLE, barrier_after=list(self.barrier_after),
                       state=list(self.state))
        return p


def tensor(name: str, tiles: int, role: Role) -> Tensor:
    """A bf16 tensor of one tile row and ``tiles`` tiles."""
    return Tensor(name, (32, 32 * tiles), "bf16", role)


def copy_programs(site: Site, engines: Sequence[Engine], buf: int, src: str, src_base: int, dst: str, dst_base: int,
                  count: int, barrier: bool) -> list[EngineProgram]:
    """``count`` tiles ``src[src_base + k] -> dst[dst_base + k]`` through buffer ``buf`` (one-tile pages): the first
    engine fills, the second drains; one engine alone does both, one tile at a time. Without ``barrier`` the write
    barrier before each pop is missing (``async-source-reuse``: only a final barrier)."""
    fill: tuple[Op, ...] = (Reserve(buf, 1), ReadTiles(src, Addr(src_base, (Term("k", 1),)), 1, buf), ReadBarrier(),
                            Push(buf, 1))
    drain: tuple[Op, ...] = (Wait(buf, 1), WriteTiles(buf, dst, Addr(dst_base, (Term("k", 1),)), 1),
                             *((WriteBarrier(),) if barrier else ()), Pop(buf, 1))
    tail: tuple[Op, ...] = () if barrier else (WriteBarrier(),)
    if len(engines) == 1:
        return [EngineProgram(site, engines[0], (Loop("k", count, fill + drain), *tail))]
    return [EngineProgram(site, engines[0], (Loop("k", count, fill),)),
            EngineProgram(site, engines[1], (Loop("k", count, drain), *tail))]


@st.composite
def copy_sections(draw: st.DrawFn, slots: dict[Site, list[Engine]], k: int, route: tuple[str, str] | None = None,
                  broken: bool = True) -> Program:
    """Section ``k``: on one or two of ``slots``' sites, each copies 1-2 tiles from a source to a destination
    tensor (``route`` fixes both; else drawn from the pool, a state rewritten in place). With ``broken`` a barrier
    may be missing and, one time in six, the section is mutated."""
    sites = draw(st.lists(st.sampled_from(sorted(slots, key=lambda s: s.x)), min_size=1, max_size=2, unique=True))
    tensors: dict[str, Tensor] = {}
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    memory: list[BufferAt] = []
    for i, site in enumerate(sites):
        if route is not None:
            src, dst = route
        else:
            src = draw(st.sampled_from(SOURCES))
            dst = draw(st.sampled_from([t for t in DESTINATIONS if t != src or t in STATE]))
        count = draw(st.integers(1, TILES))
        sb = draw(st.integers(0, TILES - count))
        db = sb if src == dst else draw(st.integers(0, TILES - count))  # a state is rewritten in place
        if route is not None:
            # A chain's section writes the whole tensor its successor reads: one site copies every tile, two
            # sites one tile each (no two sites write one tile).
            count, sb, db = (TILES, 0, 0) if len(sites) == 1 else (1, i, i)
        cap = draw(st.integers(1, 2))
        barrier = not broken or draw(st.integers(0, 5)) > 0
        engines = slots[site] if draw(st.booleans()) else slots[site][:1]
        buffers.append(Buffer(i, f"cb{i}", site, 0, 1, cap, "bf16"))
        memory.append(BufferAt(i, WORMHOLE.reserved_base, cap * WORMHOLE.bytes_per_tile("bf16")))
        programs += copy_programs(site, engines, i, src, sb, dst, db, count, barrier)
        tensors.setdefault(src, tensor(src, TILES, Role.STATE if src in STATE else Role.INPUT))
        tensors.setdefault(dst, tensor(dst, TILES, Role.STATE if dst in STATE else Role.OUTPUT))
        if dst == src:
            tensors[src] = tensor(src, TILES, Role.STATE)
    p = Program(f"sec{k}", WORMHOLE, tensors=tuple(tensors.values()), buffers=tuple(buffers),
                programs=tuple(programs), memory=tuple(memory))
    if broken and draw(st.integers(0, 5)) == 0:
        p = draw(mutate(p))
    return p


@st.composite
def section_graphs(draw: st.DrawFn, shape: str | None = None, broken: bool = True, min_sections: int = 2,
                   max_sections: int = 4) -> SectionGraph:
    """A section graph (module docstring): ``shape`` ``"dag"`` or ``"chain"`` (``None``: either), 2-4 sections,
    each boundary closed three times in four. With ``broken=False`` no section is mutated and no barrier is
    missing (a ``chain`` of such sections always composes into a correct program)."""
    kind = shape if shape is not None else draw(st.sampled_from(("dag", "chain")))
    if kind not in ("dag", "chain"):
        raise ValueError(f"shape {shape!r} is not 'dag' or 'chain'")
    n_sites = draw(st.integers(1, 3))
    slots: dict[Site, list[Engine]] = {}
    budget = 4
    for s in SITES[:n_sites]:
        two = budget - 1 >= n_sites - len(slots) and draw(st.booleans())
        slots[s] = [Engine.READER, Engine.WRITER] if two else [Engine.READER]
        budget -= len(slots[s])
    n = draw(st.integers(min_sections, max_sections))
    if kind == "chain":
        names = ["X", *(f"A{k}" for k in range(n - 1)), "Y"]
        secs = [draw(copy_sections(slots, k, (names[k], names[k + 1]), broken)) for k in range(n)]
    else:
        secs = [draw(copy_sections(slots, k, None, broken)) for k in range(n)]
    if kind == "chain" and not broken:
        barrier_after = [True] * (n - 1)  # each section reads what the one before wrote: every boundary closes
    else:
        barrier_after = [draw(st.integers(0, 3)) > 0 for _ in range(n - 1)]
    used = {t.name for s in secs for t in s.tensors}
    return SectionGraph(tuple(secs), tuple(barrier_after), tuple(t for t in STATE if t in used))


@st.composite
def composed_programs(draw: st.DrawFn, shape: str | None = None, broken: bool = True) -> Program:
    """A composed program: ``section_graphs(shape, broken)`` joined by ``compose`` (draws it refuses are rejected).
    Every program drawn passes ``validate``."""
    graph = draw(section_graphs(shape=shape, broken=broken))
    try:
        p = graph.compose()
    except ComposeRefused:
        assume(False)
        raise  # pragma: no cover - assume(False) does not return
    errs = validate(p)
    assert errs == [], errs
    return p
