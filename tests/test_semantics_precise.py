"""docs/semantics.md read precisely: one test per point a reader implementing the document had to guess (issue 20,
item 13). Each runs the reference interpreter (``petri/interp.py``) or the shared definition on the smallest
program that tells the readings apart, and, where the checker decides the point itself, the checker too."""

from __future__ import annotations

from pathlib import Path

import attrs
from builders import EQ, GE, A, B, buf, copy_section, ep, prog
from test_explore import mcast_program

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Dynamic,
    Engine,
    Flush,
    Group,
    Loop,
    McastSend,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.boundaries import work_ends
from verispatial.ir.program import EngineProgram, SectionSpan
from verispatial.ir.serialize import load_program
from verispatial.passes import compose
from verispatial.petri.explore import explore
from verispatial.petri.interp import Interp, State, Transition


def t(name: str, tiles: int, role: Role = Role.INPUT) -> Tensor:
    return Tensor(name, (32, 32 * tiles), "bf16", role)


def refuted(p: Program) -> list[str]:
    return [r.name for r in certify(p).results if r.verdict == Verdict.REFUTED]


def steps(it: Interp, s: State, e: int, n: int) -> State:
    """``s`` after engine ``e`` runs its next ``n`` ops, its own transactions landing only when it waits for them."""
    for _ in range(n):
        while not it.can_step(s, e):
            s = it.fire(s, next(x for x in it.landings(s) if x.engine == e))
        s = it.fire(s, Transition("step", e))
    return s


# 1. A back multicast reads the pages [pushed, pushed + pages) and does not grow ``fill``.
def test_a_back_multicast_does_not_grow_fill() -> None:
    r = ep(A, Engine.READER, Reserve(0, 2), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), McastSend(0, 1, 0, 1),
           ReadTiles("X", Addr(1), 1, 0), ReadBarrier(), WriteBarrier(), Push(0, 2))
    w = ep(A, Engine.WRITER, Wait(0, 2), Pop(0, 2))
    p = prog(r, w, buffers=(buf(0, A, 2), buf(1, B, 2, 0)), tensors=(t("X", 2),),
             groups=(Group(0, A, (1, 0, 1, 0)),))
    it = Interp(p)
    s = steps(it, it.initial(), 0, 4)
    assert s.fill[0] == 1  # the ReadTiles' tile only
    # Were the multicast's page counted, the second read would fall outside the two reserved pages.
    assert "cb-write-unreserved" not in explore(p).rules()


# 2. A Pop(b, n) shrinks ``drain`` by n * page_tiles, never below 0.
def test_a_pop_shrinks_drain_by_its_pages_tiles() -> None:
    wide = Buffer(0, "wide", A, 0, 2, 2, "bf16")  # two tiles a page
    r = ep(A, Engine.READER, Reserve(0, 2), ReadTiles("X", Addr(0), 4, 0), ReadBarrier(), Push(0, 2))
    w = ep(A, Engine.WRITER, Wait(0, 2), WriteTiles(0, "Y", Addr(0), 3), Flush(), Pop(0, 1),
           WriteTiles(0, "Y", Addr(3), 1), WriteBarrier(), Pop(0, 1))
    p = prog(r, w, buffers=(wide,), tensors=(t("X", 4), t("Y", 4, Role.OUTPUT)))
    it = Interp(p)
    s = steps(it, it.initial(), 0, 4)
    s = steps(it, s, 1, 2)
    assert s.drain[0] == 3
    s = steps(it, s, 1, 2)
    assert s.drain[0] == 1  # 3 - 1 page of 2 tiles
    assert explore(p).verdict == "ok"


# 3. sem-overshoot's "pending": the waiter is at the equality wait when the write lands. A word already past the
# value when its waiter arrives is no sem-overshoot for the interpreter — the wait blocks: a deadlock. The checker's
# sem-overshoot obligation covers both and replays the second as that deadlock.
def test_a_word_past_its_value_before_the_waiter_arrives_is_a_deadlock() -> None:
    go = Semaphore(1, "go", (B,))
    a = ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier(), SemInc(1, B, 1), AtomicBarrier())
    b = ep(B, Engine.READER, SemWait(1, GE, 1), SemSet(1, 0), SemWait(0, EQ, 1), SemSet(0, 0))
    p = prog(a, b, sems=(Semaphore(0, "s", (B,)), go))
    ex = explore(p)
    assert ex.verdict == "deadlock"
    assert "sem-overshoot" not in ex.rules()
    report = certify(p)
    (r,) = [r for r in report.results if r.name == "sem-overshoot:sem0@(1,0)"]
    assert r.verdict == Verdict.REFUTED
    # Pending at the landing: the interpreter reports the rule itself.
    pending = prog(ep(A, Engine.READER, SemInc(0, B, 2), AtomicBarrier()),
                   ep(B, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0)), sems=(Semaphore(0, "s", (B,)),))
    assert "sem-overshoot" in explore(pending).rules()


# 4. sem-set-race: "observed" is this engine's own SemWait returning on the word, or its own SemSet of it; "remote"
# is any landing on the word (SemInc, SemIncMcast, a flag) by any engine, its own site's included, whatever value
# it leaves. Another engine's SemSet is a local store, not a remote write.
def test_an_increment_from_the_own_site_is_remote_and_a_local_set_is_not() -> None:
    own = prog(ep(A, Engine.READER, SemInc(0, A, 1), AtomicBarrier()), ep(A, Engine.WRITER, SemSet(0, 0)),
               sems=(Semaphore(0, "s", (A,)),))
    assert "sem-set-race" in explore(own).rules()
    local = prog(ep(A, Engine.READER, SemSet(0, 0)), ep(A, Engine.WRITER, SemSet(0, 0)),
                 sems=(Semaphore(0, "s", (A,)),))
    assert "sem-set-race" not in explore(local).rules()
    # A zero increment and a wait that observed the word: tests/test_sem_consumption.py.


# 5. async-read-publish is decided per buffer: a Push (any pages) of a buffer the engine read into since its last
# ReadBarrier, even when the pages pushed were read before that barrier.
def test_read_publish_is_per_buffer() -> None:
    r = ep(A, Engine.READER, Reserve(0, 2), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(),
           ReadTiles("X", Addr(1), 1, 0), Push(0, 1), ReadBarrier(), Push(0, 1))
    w = ep(A, Engine.WRITER, Wait(0, 2), WriteTiles(0, "Y", Addr(0), 2), WriteBarrier(), Pop(0, 2))
    p = prog(r, w, buffers=(buf(0, A, 2),), tensors=(t("X", 2), t("Y", 2, Role.OUTPUT)))
    assert explore(p).rules() == ["async-read-publish"]
    assert refuted(p) == ["async-read-publish:(0,0).reader:[4]"]


# 6. balance-sem re-arming: an engine program "uses" a semaphore when it holds a SemSet, SemWait or McastSetValid
# naming it (``sem``; a flag's source word is read, not used); "first" is first in the program's text (pre-order),
# whether or not it runs: a SemSet inside a loop that may run zero times still re-arms.
def test_rearming_looks_at_the_first_use_in_text() -> None:
    owner = ep(B, Engine.READER, Loop("k", "t", (SemSet(0, 3),)), SemWait(0, GE, 0))
    p = prog(owner, sems=(Semaphore(0, "s", (B,)),), trips=(Trip("t", 1),))
    assert p.rearmed_words() == {(0, B)}
    assert explore(p).verdict == "ok"  # t = 1 leaves the word at 3: re-armed, no balance-sem


# 7. One value per Dynamic name per run: every access and iteration naming it takes the same value, in [lo, hi].
# Two writers of tiles d and 1 - d never meet (they would, were each access free to take its own value).
def test_a_dynamic_name_takes_one_value_per_run() -> None:
    def site(at: Site, addr: Addr, b: int) -> tuple[EngineProgram, EngineProgram]:
        return (ep(at, Engine.READER, Reserve(b, 1), ReadTiles("X", Addr(b), 1, b), ReadBarrier(), Push(b, 1)),
                ep(at, Engine.WRITER, Wait(b, 1), WriteTiles(b, "Y", addr, 1), WriteBarrier(), Pop(b, 1)))
    d = Dynamic("d", 0, 1)
    minus = Dynamic("d", 0, 1, scale=-1)
    p = prog(*site(A, Addr(0, (), d), 0), *site(B, Addr(1, (), minus), 1), buffers=(buf(0, A, 2), buf(1, B, 2, 0)),
             tensors=(t("X", 2), t("Y", 2, Role.OUTPUT), t("d", 1)))
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert [r.name for r in report.results if r.verdict != Verdict.PROVED] == ["memory-map"]  # no memory map given


# 8. A Dynamic's index tensor is the tensor ``Dynamic.name`` names (not the tensor the op accesses): the derived
# index buffer is keyed by (site, phase, Dynamic.name).
def test_the_index_tensor_is_the_dynamic_name() -> None:
    section = (Path(__file__).resolve().parent.parent / "proofs" / "models" / "llama3_2_1b_prefill.blackhole"
               / "v_cache_update.program.json")
    p = load_program(section)
    dyn = [(op.tensor, op.addr.dynamic) for e in p.programs for op in _walk(e.ops)
           if isinstance(op, (ReadTiles, WriteTiles)) and op.addr.dynamic is not None]
    assert dyn
    names = {d.name for _, d in dyn if d is not None}
    assert {tensor for tensor, _ in dyn}.isdisjoint(names)
    unnamed = attrs.evolve(p, programs=tuple(attrs.evolve(e, ops=tuple(_unname(o) for o in e.ops)) for e in p.programs))
    assert {k[2] for k in unnamed.index_buffers()} == names


def _walk(ops: tuple[object, ...]) -> list[object]:
    out: list[object] = []
    for op in ops:
        out.append(op)
        out += _walk(getattr(op, "body", ()))
    return out


def _unname(op: object) -> object:
    if isinstance(op, Loop):
        return attrs.evolve(op, body=tuple(_unname(o) for o in op.body))  # type: ignore[misc]
    addr = getattr(op, "addr", None)
    if isinstance(addr, Addr) and addr.dynamic is not None:
        return attrs.evolve(op, addr=attrs.evolve(addr, dynamic=attrs.evolve(addr.dynamic, buf=None)))  # type: ignore[misc]
    return op


# 9. A state tile written and read back in one section is a tensor-race: a read in section r sees the version of
# the sections before r, so every write of the tile in section >= r must follow the read's landing.
def test_a_state_tile_read_back_in_its_own_section_races() -> None:
    r = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
           Reserve(1, 1), ReadTiles("S", Addr(0), 1, 1), ReadBarrier(), Push(1, 1))
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "S", Addr(0), 1), WriteBarrier(), Pop(0, 1),
           Wait(1, 1), Pop(1, 1))
    p = prog(r, w, buffers=(buf(0, A, 1), buf(1, A, 1)), tensors=(t("X", 1), t("S", 1, Role.STATE)))
    assert explore(p).rules() == ["tensor-race"]
    assert refuted(p) == ["hb-state:S:(0,0).writer[1]<(0,0).reader[5]"]


# 10. mcast-address (the checker's, on the memory map; the interpreter has no addresses and lands a multicast in the
# destination's buffer of the same cb index): that buffer has the sender buffer's byte offset, page size and capacity.
def test_mcast_address_compares_the_memory_map() -> None:
    size = 4 * WORMHOLE.bytes_per_tile("bf16")
    base = WORMHOLE.reserved_base

    def names(offset: int) -> dict[str, Verdict]:
        p = attrs.evolve(mcast_program(), memory=(BufferAt(0, base, size), BufferAt(1, offset, size)))
        return {r.name: r.verdict for r in certify(p).results if r.name.startswith("mcast-address")}

    assert names(base) == {"mcast-address:(0,0).reader:[1, 5]": Verdict.PROVED}
    assert names(base + size) == {"mcast-address:(0,0).reader:[1, 5]": Verdict.REFUTED}


# 11. mcast-publish-early counts pages: a receiver's Push(b, n) is early when fewer than pushed + n pages have landed
# in b by multicast in all (cumulative), whichever slots they landed in (where they land is mcast-slot's).
def test_publish_early_counts_landed_pages() -> None:
    def receiver(body: tuple[object, ...]) -> Program:
        p = mcast_program()
        progs = tuple(attrs.evolve(e, ops=(Loop("k", 2, body), AtomicBarrier())) if e.key == "(1,0).reader" else e  # type: ignore[arg-type]
                      for e in p.programs)
        return attrs.evolve(p, programs=progs)

    halves = receiver((Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1), SemWait(1, EQ, 1), Push(1, 1), Push(1, 1)))
    assert explore(halves).verdict == "ok"
    early = receiver((Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1), Push(1, 1), SemWait(1, EQ, 1), Push(1, 1)))
    assert "mcast-publish-early" in explore(early).rules()


# 12. A tile counts as written for the read rules at its writer's next WriteBarrier, not when the write left (a
# Flush): an activation read after the flush but before the barrier races. For output-unwritten an issued write
# counts (at termination every issued write has landed).
def test_a_flushed_write_is_not_yet_written() -> None:
    go = Semaphore(0, "go", (A,))
    r = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
           SemWait(0, GE, 1), SemSet(0, 0), Reserve(1, 1), ReadTiles("Act", Addr(0), 1, 1), ReadBarrier(), Push(1, 1))
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "Act", Addr(0), 1), Flush(), SemInc(0, A, 1), AtomicBarrier(),
           WriteBarrier(), Pop(0, 1), Wait(1, 1), WriteTiles(1, "Y", Addr(0), 1), WriteBarrier(), Pop(1, 1))
    p = prog(r, w, buffers=(buf(0, A, 1), buf(1, A, 1)), sems=(go,),
             tensors=(t("X", 1), t("Act", 1, Role.ACTIVATION), t("Y", 1, Role.OUTPUT)))
    assert explore(p).rules() == ["tensor-race"]
    assert refuted(p) == ["hb-activation:Act:(0,0).reader[7]<(0,0).writer[1]"]
    fixed = attrs.evolve(p, programs=(r, attrs.evolve(w, ops=(
        Wait(0, 1), WriteTiles(0, "Act", Addr(0), 1), WriteBarrier(), SemInc(0, A, 1), AtomicBarrier(), Pop(0, 1),
        Wait(1, 1), WriteTiles(1, "Y", Addr(0), 1), WriteBarrier(), Pop(1, 1)))))
    assert explore(fixed).verdict == "ok"


# 13. Balance is checked at the end of a run. In a composed program a slice's balance refutation stands only when
# every later slice is proved deadlock-free (else the composed run may never end): failed-to-prove otherwise.
def test_a_slice_balance_refutation_needs_the_later_slices_to_end() -> None:
    from composed import S0, engine, with_ops
    from test_compositional import copy_chain

    p = copy_chain(("X", "A"), ("A", "Y"))
    n = len(p.semaphores)
    p = attrs.evolve(p, semaphores=(*p.semaphores, Semaphore(n, "extra", (S0,), 0, section=0)))
    rd = engine(p, "(0,0).reader")
    p = with_ops(p, rd.key, [SemInc(n, S0, 1), AtomicBarrier(), *rd.ops],
                 [0, *(x + 2 for x in rd.section_starts[1:])])
    ok = certify(p)
    assert {r.name: r.verdict for r in ok.results if r.verdict != Verdict.PROVED} == {
        f"slice0/balance-sem:sem{n}@(0,0)": Verdict.REFUTED}
    wr = engine(p, "(0,0).writer")
    b1 = next(op.buf for op in _walk(wr.ops[wr.section_starts[1]:]) if isinstance(op, Wait))
    stuck = with_ops(p, wr.key, [*wr.ops, Wait(b1, 1)], list(wr.section_starts))
    report = certify(stuck)
    got = {r.name: r.verdict for r in report.results if r.verdict != Verdict.PROVED}
    assert got[f"slice0/balance-sem:sem{n}@(0,0)"] == Verdict.FAILED
    assert got["slice1/deadlock:(0,0).reader+1"] == Verdict.REFUTED
    ex = explore(stuck, max_states=50_000)
    assert (ex.verdict, ex.rules()) == ("deadlock", [])


# 14. The slot rule covers the words of section semaphores (``Semaphore.section`` set): such a word loses its
# re-armed exemption when a later phase has a word of a section semaphore on the same site. Program-wide
# semaphores neither lose it nor take a slot.
def test_the_slot_rule_covers_section_semaphores_only() -> None:
    p, _ = compose([copy_section("c0", A, "X", "T"), copy_section("c1", A, "T", "Y")], target=WORMHOLE)
    n = len(p.semaphores)
    rd = next(e for e in p.programs if e.key == "(0,0).reader")

    def with_sems(*sems: Semaphore) -> Program:
        ops = (SemSet(n, 0), *rd.ops)
        starts = (0, *(x + 1 for x in rd.section_starts[1:]))
        progs = tuple(attrs.evolve(e, ops=ops, section_starts=starts) if e is rd else e for e in p.programs)
        return attrs.evolve(p, semaphores=(*p.semaphores, *sems), programs=progs)

    mine = Semaphore(n, "mine", (A,), 0, section=0)
    assert (n, A) in with_sems(mine).rearmed_words()
    assert (n, A) in with_sems(mine, Semaphore(n + 1, "wide", (A,), 0)).rearmed_words()
    assert (n, A) not in with_sems(mine, Semaphore(n + 1, "later", (A,), 0, section=1)).rearmed_words()
    assert (n, A) in with_sems(Semaphore(n, "mine", (A,), 0), Semaphore(n + 1, "later", (A,), 0,
                                                                           section=1)).rearmed_words()


# 15. The closing region is the maximal run of top-level SemInc, SemIncMcast, SemSet, SemWait and AtomicBarrier that
# ends the section: a section ending with a WriteBarrier after its handshake has an empty region, so the handshake
# is work before the boundary.
def test_a_barrier_after_the_handshake_empties_the_closing_region() -> None:
    hand = [SemInc(0, A, 1), AtomicBarrier(), SemWait(1, GE, 1), SemSet(1, 0)]
    work = [Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)]
    sems = (Semaphore(0, "gather", (A,)), Semaphore(1, "release", (A,)))
    spans = (SectionSpan("s0", True), SectionSpan("s1"))

    def end(tail: list[object]) -> int:
        ops = (*work, *hand, *tail, Wait(0, 1), Pop(0, 1))
        e = attrs.evolve(ep(A, Engine.READER, *ops), section_starts=(0, len(work) + len(hand) + len(tail)))  # type: ignore[arg-type]
        p = attrs.evolve(prog(e, buffers=(buf(0, A, 1),), sems=sems, tensors=(t("X", 1),)), sections=spans)
        return work_ends(p, e)[0]

    assert end([]) == len(work)  # the handshake is the closing region
    assert end([WriteBarrier()]) == len(work) + len(hand) + 1  # nothing closes: all of section 0 is work
