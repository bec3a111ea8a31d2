"""Proofs cached by content (DESIGN §7, ``verispatial/certify/canon.py``, ``verispatial/driver/cache.py``):
components equal up to renaming are proved once; components that differ in anything a cached family reads are never shared.

Two independent sites, (0,0) and (1,0), run the same choreography on their own buffers, trip and semaphore:
the reader pushes ``t`` pages into the 4-page b_long (t a trip of max 4), then one page into b_go; the writer waits
for b_go before draining b_long (so t > 4 deadlocks), then both move two pages through the 2-page b_pair, and the
writer waits for its word to equal 0 (a monotone word nobody increments).
"""

from __future__ import annotations

import json

import attrs
import pytest

from verispatial.certify.canon import canonical_form
from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Buffer,
    BufferAt,
    Compute,
    Engine,
    EngineProgram,
    Group,
    Loop,
    McastSetValid,
    Op,
    Operand,
    Pop,
    Program,
    Push,
    Reserve,
    Semaphore,
    SemSet,
    SemWait,
    Site,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.validate import validate

A, B = Site(0, 0), Site(1, 0)
TILE = 2048


def site_ops(b0: int, sem: int, trip: str, pair_pops: int = 2) -> tuple[tuple[Op, ...], tuple[Op, ...]]:
    b_long, b_go, b_pair = b0, b0 + 1, b0 + 2
    reader = (Loop("i", trip, (Reserve(b_long, 1), Push(b_long, 1))), Reserve(b_go, 1), Push(b_go, 1),
              Loop("k", 2, (Reserve(b_pair, 1), Push(b_pair, 1))))
    writer = (Wait(b_go, 1), Pop(b_go, 1), Loop("i", trip, (Wait(b_long, 1), Pop(b_long, 1))),
              Loop("k", pair_pops, (Wait(b_pair, 1), Pop(b_pair, 1))), SemWait(sem, WaitCond.EQ, 0))
    return reader, writer


def two_sites(cap_b: int = 4, init_b: int = 0, pops_b: int = 2, max_b: int = 4) -> Program:
    """The two-site program; the keyword arguments mutate site (1,0) only."""
    ra, wa = site_ops(0, 0, "ta")
    rb, wb = site_ops(3, 1, "tb", pops_b)
    buffers = []
    for site, b0, cap in ((A, 0, 4), (B, 3, cap_b)):
        for j, (name, c) in enumerate((("long", cap), ("go", 1), ("pair", 2))):
            # persistent: each buffer's balance is a query (and so a cached proof), not the launch's reset
            buffers.append(Buffer(b0 + j, f"{name}{site.x}", site, j, 1, c, "bf16", persistent=True))
    memory, off = [], {A: WORMHOLE.reserved_base, B: WORMHOLE.reserved_base}  # each site laid out from its base
    for b in buffers:
        memory.append(BufferAt(b.id, off[b.site], b.capacity * TILE))
        off[b.site] += b.capacity * TILE
    p = Program("two-sites", WORMHOLE, buffers=tuple(buffers),
                semaphores=(Semaphore(0, "sa", (A,)), Semaphore(1, "sb", (B,), init_b)),
                trips=(Trip("ta", 4), Trip("tb", max_b)),
                programs=(EngineProgram(A, Engine.READER, ra), EngineProgram(A, Engine.WRITER, wa),
                          EngineProgram(B, Engine.READER, rb), EngineProgram(B, Engine.WRITER, wb)),
                memory=tuple(memory))
    assert validate(p) == []
    return p


def verdicts(r: Report) -> dict[str, Verdict]:
    return {x.name: x.verdict for x in r.results}


def site_of(name: str) -> Site:
    if "(1,0)" in name or any(name.endswith(f":b{b}") for b in (3, 4, 5)):
        return B
    return A


CACHED = {"cb-straddle:b0", "cb-straddle:b1", "cb-straddle:b2", "balance-cb:b0", "balance-cb:b1", "balance-cb:b2",
          "balance-sem:sem0@(0,0)", "sem-exact:sem0@(0,0)", "deadlock:(0,0).reader+1"}
MIRROR = {"cb-straddle:b0": "cb-straddle:b3", "cb-straddle:b1": "cb-straddle:b4", "cb-straddle:b2": "cb-straddle:b5",
          "balance-cb:b0": "balance-cb:b3", "balance-cb:b1": "balance-cb:b4", "balance-cb:b2": "balance-cb:b5",
          "balance-sem:sem0@(0,0)": "balance-sem:sem1@(1,0)", "sem-exact:sem0@(0,0)": "sem-exact:sem1@(1,0)",
          "deadlock:(0,0).reader+1": "deadlock:(1,0).reader+1"}


def test_identical_sites_are_proved_once_and_reused_once() -> None:
    p = two_sites()
    a = analyse(p)
    assert a.components == (frozenset({"(0,0).reader", "(0,0).writer"}), frozenset({"(1,0).reader", "(1,0).writer"}))
    trusted = {b.id for b in p.buffers}
    fa, ca = canonical_form(a, a.components[0], trusted)
    fb, cb = canonical_form(a, a.components[1], trusted)
    assert fa == fb
    assert ca.key == cb.key
    assert cb.buffers == {3: 0, 4: 1, 5: 2}
    assert cb.words == {"sem1@(1,0)": 0}
    pc = ProofCache()
    r = certify(p, cache=pc)
    assert r.exit_code == 0
    assert all(v == Verdict.PROVED for v in verdicts(r).values())
    assert pc.computed == 9
    assert sorted((u.name, u.source, u.component) for u in pc.reused) == sorted(
        (MIRROR[n], n, "(0,0).reader+1") for n in CACHED)
    by = {x.name: x for x in r.results}
    assert by["deadlock:(1,0).reader+1"].reason.startswith(
        "proved as deadlock:(0,0).reader+1 for the isomorphic component (0,0).reader+1 (equal up to renaming; "
        f"canonical form {ca.key[:12]}): 2 engines, schedule witness")
    assert by["cb-straddle:b3"].reason == (
        f"proved as cb-straddle:b0 for the isomorphic component (0,0).reader+1 (equal up to renaming; canonical form "
        f"{ca.key[:12]}): every push and pop of b0 lands inside the 4-page ring")
    assert "isomorphic" not in by["deadlock:(0,0).reader+1"].reason
    # Same verdicts, obligation for obligation, as proving every component separately.
    assert verdicts(certify(p, cache=False)) == verdicts(r)


MUTANTS = {
    # b_long holds 3 pages: t = 4 pages pushed before the writer drains it -> deadlock
    "capacity": ({"cap_b": 3}, {"deadlock:(1,0).reader+1"}),
    # the word starts at 1: the writer's wait for 0 overshoots and hangs
    "semaphore init": ({"init_b": 1}, {"sem-overshoot:sem1@(1,0)", "deadlock:(1,0).reader+1"}),
    # the writer pops b_pair 3 times, the reader pushes it twice -> the writer hangs (a run that cannot end
    # is the deadlock's to report, not balance's)
    "loop count": ({"pops_b": 3}, {"deadlock:(1,0).reader+1"}),
    # tb may reach 5 > the 4 pages of b_long -> deadlock
    "trip max": ({"max_b": 5}, {"deadlock:(1,0).reader+1"}),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_mutant_site_is_not_shared(mutant: str) -> None:
    kw, refuted = MUTANTS[mutant]
    p = two_sites(**kw)
    a = analyse(p)
    trusted = {b.id for b in p.buffers}
    assert canonical_form(a, a.components[0], trusted)[1].key != canonical_form(a, a.components[1], trusted)[1].key
    pc = ProofCache()
    r = certify(p, cache=pc)
    v = verdicts(r)
    assert {n for n, x in v.items() if x == Verdict.REFUTED} == refuted
    assert all(v[n] == Verdict.PROVED for n in CACHED)  # site (0,0) stays proved
    assert pc.reused == []  # nothing of (1,0) borrowed from (0,0)
    assert r.exit_code == 1


def test_cache_key_changes_with_every_field_the_families_read() -> None:
    p = two_sites()
    a = analyse(p)
    base = canonical_form(a, a.components[0], {b.id for b in p.buffers})[1].key
    # an untrusted buffer is another component as far as the cache is concerned
    assert canonical_form(a, a.components[0], {1, 2})[1].key != base
    # page size
    q = attrs.evolve(p, buffers=tuple(attrs.evolve(b, page_tiles=2) if b.id == 2 else b for b in p.buffers))
    aq = analyse(q)
    assert canonical_form(aq, aq.components[0], {b.id for b in q.buffers})[1].key != base


def test_elementwise_section_on_the_8x8_mesh_is_proved_with_one_site_proved() -> None:
    from verispatial.ir.graph import load_graph
    from verispatial.passes.compile import compile_section

    g = load_graph("examples/models/llama3_2_1b_decode.json")
    p, _ = compile_section(g, [op.name for op in g.ops].index("attn_residual"), WORMHOLE)
    assert len(p.programs) == 192
    assert len({ep.site for ep in p.programs}) == 64
    pc = ProofCache()
    r = certify(p, cache=pc)
    assert r.exit_code == 0
    # 527 before the rules cb-push-unfilled, acc-unacquired, output-unwritten and acc-overrun (one obligation each)
    assert len(r.results) == 532
    assert all(x.verdict == Verdict.PROVED for x in r.results)
    # one site's 3 buffers (ring alignment) and its deadlock are proved; the other 63 sites reuse them (balance needs
    # no proof: the launch's end resets the buffers, which no later section uses)
    assert pc.computed == 4
    assert len(pc.reused) == 252
    dead = [x for x in r.results if x.family == "deadlock"]
    assert len(dead) == 64
    first = min(dead, key=lambda x: x.name)
    assert "isomorphic" not in first.reason
    src = first.name.split(":", 1)[1]
    assert sum(x.reason.startswith(f"proved as {first.name} for the isomorphic component {src} ") for x in dead) == 63


def test_one_cache_across_runs_reuses_and_names_the_program() -> None:
    p = two_sites()
    pc = ProofCache()
    certify(p, cache=pc)
    assert (pc.computed, len(pc.reused)) == (9, 9)
    again = attrs.evolve(p, name="two-sites-again")
    r = certify(again, cache=pc)
    assert (pc.computed, len(pc.reused)) == (9, 27)  # every cached obligation of both sites reused
    by = {x.name: x for x in r.results}
    assert by["deadlock:(0,0).reader+1"].reason.startswith(
        "proved as deadlock:(0,0).reader+1 for the isomorphic component (0,0).reader+1 of two-sites (equal up to")
    # a mutant run with the same cache borrows nothing for the mutated site
    r = certify(two_sites(cap_b=3), cache=pc)
    assert {x.name for x in r.results if x.verdict == Verdict.REFUTED} == {"deadlock:(1,0).reader+1"}



def test_ids_are_renamed_by_their_id_space_not_their_field_name() -> None:
    # mcast_set_valid's ``src`` names a semaphore (write_tiles' ``src`` a buffer): stated explicitly (src = sem,
    # inside the decided fragment) it is renamed as a semaphore, and a compute's operands as buffers.
    def flag(src: int | None) -> Program:
        q = Program("flag", WORMHOLE, buffers=(Buffer(0, "b", A, 0, 1, 2, "bf16"),),
                    semaphores=(Semaphore(0, "ready", (A,)), Semaphore(1, "valid", (A, B)), Semaphore(2, "v2", (A, B))),
                    groups=(Group(0, A, (1, 0, 1, 0)),),
                    programs=(EngineProgram(A, Engine.READER, (
                        SemSet(2, 1), McastSetValid(2, 0, 1, src=src), WriteBarrier(), Reserve(0, 1), Push(0, 1))),
                              # the compute engine reads the page (a reader cannot issue a Compute: ISSUED_BY)
                              EngineProgram(A, Engine.COMPUTE, (Wait(0, 1), Compute("x", 1, (Operand(0, 1),)),
                                                                Pop(0, 1))),
                              EngineProgram(B, Engine.READER, (SemWait(2, WaitCond.GE, 1), SemSet(2, 0)))))
        assert validate(q) == []
        return q

    forms = []
    for src in (None, 2):
        q = flag(src)
        a = analyse(q)
        (comp,) = a.components
        form, canon = canonical_form(a, comp, set())
        assert canon.buffers == {0: 0}  # semaphore 2 is not taken for a buffer
        forms.append(form)
    text = json.dumps(forms[1][1])
    assert '["src", ["s", 0]]' in text  # the flag's only semaphore, renumbered first
    assert '["ins", [[["b", 0], 1]]]' in text
    assert forms[0][2:] == forms[1][2:]  # the same buffer, word, group and trip tables
