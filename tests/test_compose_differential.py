"""DIFFERENTIAL TEST OF COMPOSITION (issue 8, deliverable 5): the checker's verdict on random small composed programs
against the explicit-state explorer's on the whole composed program.

Each example draws 2-4 tiny sections over a pool of at most four (site, engine) slots on 1-3 sites, composes them
with the real ``compose`` (open and closed boundaries at random: sections of one phase run concurrently), and
certifies the result — compositionally whenever it has a closing rendezvous. Sections copy tiles between tensors of
a shared pool, so activations cross boundaries (read before, after or in the phase that writes them), carried
states are read and rewritten by several sections, and outputs are written by one or several sections; a section is
sometimes broken (a barrier dropped, a loop count changed, its ops swapped: ``strategies.mutate``). What must hold is
``test_differential.disagreements``: the checker is sound against the oracle, refutes only what the oracle breaks,
and agrees on deadlocks.

At least 300 programs in CI (the ``ci`` profile's 500 draws, less those the oracle cannot finish), more under
``thorough``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from composed import tensor
from hypothesis import HealthCheck, Phase, assume, event, find, given, settings
from hypothesis import strategies as st
from strategies import mutate
from test_differential import disagreements

from verispatial.certify.checker import certify
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
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.program import Tensor
from verispatial.ir.serialize import dumps
from verispatial.ir.validate import validate
from verispatial.passes import compose
from verispatial.petri.explore import explore

#: States the oracle may visit per program; past that the example is not counted.
MAX_STATES = 6_000
#: Tiles of every tensor of the pool.
TILES = 2
SITES = (Site(0, 0), Site(1, 0), Site(2, 0))
#: The tensor pool: inputs, activations, carried states, outputs. Roles are what compose derives from use.
SOURCES = ("X", "A0", "A1", "S")
TARGETS = ("A0", "A1", "S", "Y", "Z")
STATE = ("S",)


def _copy(site: Site, engines: list[Engine], buf: int, src: str, src_base: int, dst: str, dst_base: int,
          count: int, capacity: int, barrier: bool) -> list[EngineProgram]:
    """``count`` tiles ``src[src_base + k] -> dst[dst_base + k]`` through buffer ``buf`` (one-tile pages): the reader
    fills, the writer drains; one engine alone does both, one tile at a time."""
    fill: tuple[Op, ...] = (Reserve(buf, 1), ReadTiles(src, Addr(src_base, (Term("k", 1),)), 1, buf), ReadBarrier(),
                            Push(buf, 1))
    drain: tuple[Op, ...] = (Wait(buf, 1), WriteTiles(buf, dst, Addr(dst_base, (Term("k", 1),)), 1),
                             *((WriteBarrier(),) if barrier else ()), Pop(buf, 1))
    tail: tuple[Op, ...] = () if barrier else (WriteBarrier(),)
    if len(engines) == 1:
        return [EngineProgram(site, engines[0], (Loop("k", count, fill + drain), *tail))]
    del capacity
    return [EngineProgram(site, engines[0], (Loop("k", count, fill),)),
            EngineProgram(site, engines[1], (Loop("k", count, drain), *tail))]


@st.composite
def sections(draw: st.DrawFn, slots: dict[Site, list[Engine]], k: int) -> Program:
    """One tiny section on one or two of the pool's sites: each site copies 1-2 tiles from a source to a target
    tensor of the pool."""
    sites = draw(st.lists(st.sampled_from(sorted(slots, key=lambda s: s.x)), min_size=1, max_size=2, unique=True))
    tensors: dict[str, Tensor] = {}
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    memory: list[BufferAt] = []
    for i, site in enumerate(sites):
        src = draw(st.sampled_from(SOURCES))
        dst = draw(st.sampled_from([t for t in TARGETS if t != src or t in STATE]))
        count = draw(st.integers(1, TILES))
        sb = draw(st.integers(0, TILES - count))
        db = sb if src == dst else draw(st.integers(0, TILES - count))  # a state is rewritten in place
        cap = draw(st.integers(1, 2))
        barrier = draw(st.integers(0, 5)) > 0
        engines = slots[site] if draw(st.booleans()) else slots[site][:1]
        buffers.append(Buffer(i, f"cb{i}", site, 0, 1, cap, "bf16"))
        memory.append(BufferAt(i, WORMHOLE.reserved_base, cap * WORMHOLE.bytes_per_tile("bf16")))
        programs += _copy(site, engines, i, src, sb, dst, db, count, cap, barrier)
        tensors.setdefault(src, tensor(src, TILES, Role.STATE if src in STATE else Role.INPUT))
        tensors.setdefault(dst, tensor(dst, TILES, Role.STATE if dst in STATE else Role.OUTPUT))
        if dst == src:
            tensors[src] = tensor(src, TILES, Role.STATE)
    p = Program(f"sec{k}", WORMHOLE, tensors=tuple(tensors.values()), buffers=tuple(buffers),
                programs=tuple(programs), memory=tuple(memory))
    if draw(st.integers(0, 5)) == 0:
        p = draw(mutate(p))
    return p


@st.composite
def composed_programs(draw: st.DrawFn) -> Program:
    """A composed program of 2-4 sections over a pool of at most four (site, engine) slots on 1-3 sites."""
    n_sites = draw(st.integers(1, 3))
    slots: dict[Site, list[Engine]] = {}
    budget = 4
    for s in SITES[:n_sites]:
        two = budget - 1 >= n_sites - len(slots) and draw(st.booleans())
        slots[s] = [Engine.READER, Engine.WRITER] if two else [Engine.READER]
        budget -= len(slots[s])
    n = draw(st.integers(2, 4))
    secs = [draw(sections(slots, k)) for k in range(n)]
    barrier_after = [draw(st.integers(0, 3)) > 0 for _ in range(n - 1)]
    used = {t.name for s in secs for t in s.tensors}
    try:
        p, _ = compose(secs, target=WORMHOLE, barrier_after=barrier_after,
                       state=[t for t in STATE if t in used])
    except ComposeRefused:
        assume(False)
        raise  # pragma: no cover - assume(False) does not return
    assert validate(p) == [], validate(p)
    return p


def check(p: Program) -> list[str]:
    oracle = explore(p, max_states=MAX_STATES)
    assume(oracle.verdict != "inconclusive")
    return disagreements(oracle, certify(p))


#: Examples drawn: the profile's, but 340 under ``ci`` (each runs the explorer and the checker on a composed
#: program; 320 draws leave at least 300 the oracle finishes, within the CI budget).
EXAMPLES = 320 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else settings().max_examples


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(composed_programs())
def test_composed_checker_agrees_with_the_oracle(p: Program) -> None:
    phases = max(p.phase_of_section()) + 1
    event(f"{phases} phase(s), {len(p.sections)} sections")
    found = check(p)
    assert found == [], "\n".join([*found, dumps(p)])


def test_the_generator_draws_phases_open_boundaries_and_every_role() -> None:
    """The draws are composed programs with closing rendezvous, open boundaries, 1-3 sites and tensors of every
    role crossing boundaries (generation only, no shrinking)."""
    seen: dict[str, Program] = {}
    wants: dict[str, Callable[[Program], bool]] = {
        "rendezvous and an open boundary": lambda q: any(s.barrier_after for s in q.sections[:-1])
        and any(not s.barrier_after for s in q.sections[:-1]),
        "three sites": lambda q: len({ep.site for ep in q.programs}) == 3,
        "activation, state and output": lambda q: {Role.ACTIVATION, Role.STATE, Role.OUTPUT} <= {
            t.role for t in q.tensors},
    }
    for what, pred in wants.items():
        seen[what] = find(composed_programs(), pred, settings=settings(phases=[Phase.generate], max_examples=300,
                                                                       database=None))
    assert any(s.name == "rendezvous_gather" for s in seen["rendezvous and an open boundary"].semaphores)
