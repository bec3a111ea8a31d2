"""A wide program's per-site components share one proof by content address (``certify/canon.py``), and components
that differ in anything a verdict depends on never do.

``row(n)``: ``n`` sites in a row, ``(x,0)`` for ``x < n``, each the same copy — its reader reads ``TILES`` tiles of
``in`` into its own 2-page buffer, its writer writes them to ``out``, then signals its reader on its own semaphore
word, which the reader waits for — and nothing shared between sites: ``n`` independent components equal up to the
site (the shape of the decode step's attention slice, 64 such sites of 3 engines). Each mutant changes one thing on
the last site only: where a NoC transaction goes (the signal's destination), a neighbour's site in a multicast
rectangle, a semaphore slot a later phase takes, a DRAM address; each breaks that site in a run the interpreter
finds, and each must stay refuted however many equal sites were proved before it.
"""

from __future__ import annotations

import pytest

from verispatial.certify.canon import canonical_form
from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Group,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.program import SectionSpan
from verispatial.ir.validate import validate
from verispatial.petri.interp import simulate

TILES = 2
#: Obligations of one site proved by a cached family (``canon.FAMILIES``): its buffer's ring alignment, its word's
#: exact counting and balance, its component's deadlock freedom (the buffer's balance needs no proof: the launch's
#: end resets it).
PER_SITE = 4


def row(n: int, *, signal_at: Site | None = None, read_base: int | None = None,
        mcast_rect: tuple[int, int, int, int] | None = None, later_slot: bool = False) -> Program:
    """The ``n``-site row; the keyword arguments change site ``(n-1,0)`` only (module docstring). Site ``x`` has
    buffer ``x``. ``signal_at``: where the last writer's increment goes (its own site otherwise);
    ``read_base``: the first tile the last reader reads (``x * TILES`` otherwise); ``mcast_rect``: every site's
    reader is signalled instead by a writer of the row above (``(x,1)``) multicasting onto the rectangle of its own
    site, the last one onto ``mcast_rect``; ``later_slot``: a second phase has a semaphore word on the last site, so
    it may take the slot of that site's word. Semaphore 0 has a word on every site of the row (one slot, as
    ``compile`` allots it): the words are apart, so the sites stay independent. With ``later_slot`` the reader leaves
    its word at 1 and the host re-initializes it at every launch (``host_init``)."""
    programs: list[EngineProgram] = []
    buffers: list[Buffer] = []
    memory: list[BufferAt] = []
    sems: list[Semaphore] = []
    groups: list[Group] = []
    for x in range(n):
        last = x == n - 1
        here = Site(x, 0)
        base = read_base if last and read_base is not None else x * TILES
        reader = (Loop("k", TILES, (Reserve(x, 1), ReadTiles("in", Addr(base, (Term("k", 1),)), 1, x), ReadBarrier(),
                                    Push(x, 1))),
                  SemWait(0, WaitCond.EQ, 1), *(() if later_slot else (SemSet(0, 0),)))
        copy: tuple[Op, ...] = (Loop("k", TILES, (Wait(x, 1), WriteTiles(x, "out", Addr(x * TILES, (Term("k", 1),)), 1),
                                                  WriteBarrier(), Pop(x, 1))),)
        programs.append(EngineProgram(here, Engine.READER, reader))
        if mcast_rect is None:
            to = signal_at if last and signal_at is not None else here
            programs.append(EngineProgram(here, Engine.WRITER, (*copy, SemInc(0, to), AtomicBarrier())))
        else:
            above = Site(x, 1)
            programs.append(EngineProgram(here, Engine.WRITER, copy))
            programs.append(EngineProgram(above, Engine.WRITER, (SemIncMcast(0, x, 1), AtomicBarrier())))
            groups.append(Group(x, above, mcast_rect if last else (x, 0, x, 0)))
        buffers.append(Buffer(x, f"c{x}", here, 0, 1, 2, "bf16"))
        memory.append(BufferAt(x, WORMHOLE.reserved_base, 2 * WORMHOLE.tile_bytes["bf16"]))
    # with ``later_slot`` the word is left at 1, which the host's write at each launch puts right where no later
    # phase may take its slot
    sems.append(Semaphore(0, "signal", tuple(Site(x, 0) for x in range(n)), section=0 if later_slot else None,
                          host_init=later_slot))
    sections: tuple[SectionSpan, ...] = (SectionSpan("main"),)
    if later_slot:
        sections = (SectionSpan("main", barrier_after=True), SectionSpan("next"))
        sems.append(Semaphore(1, "later", (Site(n - 1, 0),), section=1))
    shape = (32, 32 * TILES * n)
    p = Program("row", WORMHOLE, tensors=(Tensor("in", shape, "bf16", Role.INPUT), Tensor("out", shape, "bf16", Role.OUTPUT)),
                buffers=tuple(buffers), semaphores=tuple(sems), groups=tuple(groups), programs=tuple(programs),
                sections=sections, memory=tuple(memory))
    assert validate(p) == []
    return p


def verdicts(r: Report) -> dict[str, Verdict]:
    return {x.name: x.verdict for x in r.results}


def refuted(r: Report) -> set[str]:
    return {x.name for x in r.results if x.verdict == Verdict.REFUTED}



N = 8


def test_equal_sites_are_proved_once_each_obligation() -> None:
    p = row(N)
    a = analyse(p)
    assert len(a.components) == N
    trusted = {b.id for b in p.buffers}
    keys = {canonical_form(a, c, trusted)[1].key for c in a.components}
    assert len(keys) == 1
    assert simulate(p).status == "terminated"
    pc = ProofCache()
    r = certify(p, cache=pc)
    assert r.exit_code == 0
    # one site's cached obligations are proved; each of the other N - 1 sites reuses every one of them
    assert pc.computed == PER_SITE
    assert len(pc.reused) == PER_SITE * (N - 1)
    assert {u.component for u in pc.reused} == {"(0,0).reader+1"}
    by = {x.name: x for x in r.results}
    for x in range(1, N):
        assert by[f"deadlock:({x},0).reader+1"].reason.startswith(
            "proved as deadlock:(0,0).reader+1 for the isomorphic component (0,0).reader+1 (equal up to renaming")
    # the same verdicts, obligation for obligation, as proving every site on its own
    assert verdicts(certify(p, cache=False)) == verdicts(r)


#: One mutant per respect a shared proof must not ignore, on the last site only: the keyword of ``row``, what the
#: interpreter finds, and the obligations refuted.
MUTANTS: dict[str, tuple[dict[str, object], str, set[str], set[str]]] = {
    # the NoC route: the last writer's increment goes to its neighbour's word (the same slot one core over), so its
    # own reader never sees it and the neighbour's reader sees two (one component of both sites then)
    "noc destination": ({"signal_at": Site(N - 2, 0)}, "deadlock", {"sem-overshoot"},
                        {f"deadlock:({N - 2},0).reader+3", f"sem-overshoot:sem0@({N - 2},0)"}),
    # a neighbour's site in a multicast rectangle: the last signal lands on the neighbour's word (its sender joins
    # that component), and the last reader, now a component of its own with its writer, waits for ever
    "multicast rectangle": ({"mcast_rect": (N - 2, 0, N - 2, 0)}, "deadlock", set(),
                            {f"deadlock:({N - 2},0).reader+3", f"deadlock:({N - 1},0).reader+1",
                             f"sem-overshoot:sem0@({N - 2},0)"}),
    # a semaphore slot: a later phase has a word on the last site, which may take the slot of that site's word, so
    # the word must end where it started (no host-write exemption): it ends at 1
    "semaphore slot": ({"later_slot": True}, "terminated", {"balance-sem"}, {f"balance-sem:sem0@({N - 1},0)"}),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_site_that_differs_shares_nothing_and_stays_refuted(mutant: str) -> None:
    kw, status, rules, want = MUTANTS[mutant]
    p = row(N, **kw)  # type: ignore[arg-type]
    a = analyse(p)
    trusted = {b.id for b in p.buffers}
    last = a.component_of([f"({N - 1},0).reader"])
    # The route and the rectangle are in the component's canonical form; the slot is in the balance obligation's
    # item (whether the host's write exempts the word), the component being otherwise equal to site (0,0)'s.
    equal = canonical_form(a, last, trusted)[1].key == canonical_form(a, a.components[0], trusted)[1].key
    assert equal == (mutant == "semaphore slot")
    run = simulate(p)
    assert run.status == status
    assert {v.rule for v in run.violations} == rules
    pc = ProofCache()
    r = certify(p, cache=pc)
    assert refuted(r) == want
    assert not want & {u.name for u in pc.reused}
    assert verdicts(certify(p, cache=False)) == verdicts(r)


def test_a_dram_address_is_never_shared() -> None:
    # The last reader reads past the end of ``in`` (tiles 2N, 2N+1 of 2N). The cached families never read a tile
    # address (its base is left out of the canonical form: the site's counters are the same), so the last site
    # still reuses site (0,0)'s proofs of them; bounds reads the address and is decided for every op itself.
    p = row(N, read_base=TILES * N)
    a = analyse(p)
    trusted = {b.id for b in p.buffers}
    assert len({canonical_form(a, c, trusted)[1].key for c in a.components}) == 1
    assert {v.rule for v in simulate(p).violations} == {"bounds"}
    pc = ProofCache()
    r = certify(p, cache=pc)
    assert refuted(r) == {"bounds:in"}
    assert (pc.computed, len(pc.reused)) == (PER_SITE, PER_SITE * (N - 1))
    assert verdicts(certify(p, cache=False)) == verdicts(r)
