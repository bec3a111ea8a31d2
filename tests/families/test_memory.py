"""The memory family (verispatial/families/memory/): the memory map's rules — buffers live at once disjoint
(``memory-disjoint``, refuted as ``memory-overlap``), inside usable memory (``memory-range``) and aligned
(``memory-align``) — and aliased buffers, which share bytes page for page: nothing may write (pack, read landing,
multicast landing) or publish a page of one while the other still holds it unconsumed (``alias-clobber``,
``alias_encoding.py``); each on a tiny program with the exact expected verdicts and counterexample."""

from __future__ import annotations

import attrs
import pytest
from builders import A, B, buf, ep, prog
from verdicts import cex, not_proved, one

from verispatial.certify.canon import ProofMemo
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.families.memory.encoding import check_memory
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Loop,
    Op,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    Semaphore,
    SemInc,
    SemWait,
    Site,
    Tensor,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.ids import Renaming
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore

BASE = WORMHOLE.reserved_base
TILE = 2048  # one bf16 tile, one page


def two_bufs(mem: tuple[int, int]) -> Program:
    """(0,0)'s reader fills two 2-page buffers from X, its writer drains them to Y; ``mem``: their byte offsets."""
    r = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
           Reserve(1, 1), ReadTiles("X", Addr(1), 1, 1), ReadBarrier(), Push(1, 1))
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1),
           Wait(1, 1), WriteTiles(1, "Y", Addr(1), 1), WriteBarrier(), Pop(1, 1))
    p = prog(r, w, buffers=(buf(0, cap=2), buf(1, cap=2)),
             tensors=(Tensor("X", (32, 64), "bf16", Role.INPUT), Tensor("Y", (32, 64), "bf16", Role.OUTPUT)),
             memory=(BufferAt(0, mem[0], 2 * TILE), BufferAt(1, mem[1], 2 * TILE)))
    assert validate(p) == []
    return p


def test_disjoint_buffers_prove_the_memory_family() -> None:
    got = {r.name: r.verdict for r in check_memory(two_bufs((BASE, BASE + 2 * TILE)))}
    assert got == {"memory-disjoint:(0,0).local.phase0": Verdict.PROVED}  # memory-range: only for a buffer out of place
    assert certify(two_bufs((BASE, BASE + 2 * TILE))).exit_code == 0


def test_memory_overlap_names_both_buffers_and_a_shared_byte() -> None:
    p = two_bufs((BASE, BASE + TILE))
    report = certify(p)
    assert not_proved(report) == {"memory-disjoint:(0,0).local.phase0": Verdict.REFUTED}
    c = cex(one(report, "memory-disjoint:(0,0).local.phase0"))
    assert (c["rule"], c["site"], c["space"], c["buffers"]) == (R.MEMORY_OVERLAP, [0, 0], "local", [0, 1])
    addr = c["address"]
    assert isinstance(addr, int)
    assert all(m.offset <= addr < m.offset + m.size for m in p.memory)


@pytest.mark.parametrize(("mem", "name", "rule", "address", "reason"), [
    ((BASE, BASE + 2 * TILE + 8), "memory-range:b1", R.MEMORY_ALIGN, BASE + 2 * TILE + 8,
     f"b1 at offset {BASE + 2 * TILE + 8} is not 16-byte aligned"),
    ((BASE - 16, BASE + 2 * TILE), "memory-range:b0", R.MEMORY_RANGE, BASE - 16,
     f"b0 (buf0) on (0,0) occupies [{BASE - 16}, {BASE - 16 + 2 * TILE}) outside usable [{BASE}, 1499136)"),
    ((BASE, WORMHOLE.local_bytes - TILE), "memory-range:b1", R.MEMORY_RANGE, WORMHOLE.local_bytes,
     f"b1 (buf1) on (0,0) occupies [{WORMHOLE.local_bytes - TILE}, {WORMHOLE.local_bytes + TILE}) outside usable "
     f"[{BASE}, 1499136)"),
], ids=["misaligned", "below-reserved-base", "past-the-end"])
def test_memory_alignment_and_range(mem: tuple[int, int], name: str, rule: str, address: int, reason: str) -> None:
    report = certify(two_bufs(mem))
    assert not_proved(report) == {name: Verdict.REFUTED}
    r = one(report, name)
    assert r.reason == reason
    assert (cex(r)["rule"], cex(r)["address"]) == (rule, address)


# ---------------------------------------------------------------------------------------------- aliases

S = Site(0, 0)


def aliased(pop_first: bool) -> Program:
    pop: tuple[Op, ...] = (Pop(0, 1),)
    pack: tuple[Op, ...] = (AcquireAcc(1, "bf16"), Reserve(1, 1), PackAcc(1, 1), Push(1, 1), ReleaseAcc())
    compute = (Wait(0, 1), *(pop + pack if pop_first else pack + pop))
    base = WORMHOLE.reserved_base
    return Program(
        "alias", WORMHOLE,
        tensors=(Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT)),
        buffers=(Buffer(0, "c_0", S, 0, 1, 1, "bf16"), Buffer(1, "c_16", S, 16, 1, 1, "bf16", alias_of=0)),
        programs=(EngineProgram(S, Engine.READER, (Reserve(0, 1), ReadTiles("X", Addr(), 1, 0), ReadBarrier(),
                                                   Push(0, 1))),
                  EngineProgram(S, Engine.COMPUTE, compute),
                  EngineProgram(S, Engine.WRITER, (Wait(1, 1), WriteTiles(1, "Y", Addr(), 1), WriteBarrier(),
                                                   Pop(1, 1)))),
        memory=(BufferAt(0, base, 2048), BufferAt(1, base, 2048)))


def test_consuming_before_reusing_the_bytes_proves() -> None:
    p = aliased(pop_first=True)
    report = certify(p)
    assert report.exit_code == 0
    names = [r.name for r in report.results if r.name.startswith("alias-clobber")]
    assert names == ["alias-clobber:b0~b1", "alias-clobber:b1~b0"]
    assert explore(p).verdict == "ok"


def test_publishing_over_unconsumed_alias_pages_is_refuted_and_replayed() -> None:
    p = aliased(pop_first=False)
    assert explore(p).rules() == ["alias-clobber"]
    report = certify(p)
    bad = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in bad] == ["alias-clobber:b1~b0"]
    cex = bad[0].counterexample
    assert cex is not None
    assert cex["engine"] == "(0,0).compute"
    assert cex["path"] == [3]  # the pack into c_16's page already clobbers c_0's unread page (before the push)
    assert cex["replay"]["violation"]["rule"] == "alias-clobber"


def never_packing() -> Program:
    """The aliased pair with the pack into c_16 inside a loop of trip ``t`` whose max is 0: no pack ever runs, so the
    offsets it writes are empty and the clobber query over them is an empty disjunction."""
    pack = (AcquireAcc(1, "bf16"), Reserve(1, 1), PackAcc(1, 1), Push(1, 1), ReleaseAcc())
    base = WORMHOLE.reserved_base
    return Program(
        "alias_trip0", WORMHOLE,
        tensors=(Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT)),
        buffers=(Buffer(0, "c_0", S, 0, 1, 1, "bf16"), Buffer(1, "c_16", S, 16, 1, 1, "bf16", alias_of=0)),
        programs=(EngineProgram(S, Engine.READER, (Reserve(0, 1), ReadTiles("X", Addr(), 1, 0), ReadBarrier(),
                                                   Push(0, 1))),
                  EngineProgram(S, Engine.COMPUTE, (Loop("i", "t", pack),)),
                  EngineProgram(S, Engine.WRITER, (Wait(0, 1), WriteTiles(0, "Y", Addr(), 1), WriteBarrier(),
                                                   Pop(0, 1), Loop("j", "t", (Wait(1, 1), Pop(1, 1)))))),
        memory=(BufferAt(0, base, 2048), BufferAt(1, base, 2048)), trips=(Trip("t", 0),))


def test_a_pack_under_a_trip_of_max_0_proves_instead_of_crashing() -> None:
    # This raised ``Z3Exception: Context mismatch`` (exit 4): ``z3.Or()`` of no offsets is built in Z3's global
    # context, not the query's.
    p = never_packing()
    assert validate(p) == []
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert [(r.name, r.verdict) for r in report.results if r.name.startswith("alias-clobber")] == [
        ("alias-clobber:b0~b1", Verdict.PROVED), ("alias-clobber:b1~b0", Verdict.PROVED)]
    assert report.exit_code == 0


def aliased_on_two_sites(pop_first: bool) -> Program:
    """``aliased`` on sites (0,0) and (1,0): translated copies, one component each (they share no counter)."""
    one_site = aliased(pop_first)
    t = Site(1, 0)
    moved = {0: 2, 1: 3}
    rename = Renaming(buffer=moved.__getitem__, tensor=lambda n: n + "1")
    buffers = (*one_site.buffers, *(attrs.evolve(b, id=moved[b.id], site=t, alias_of=None if b.alias_of is None
                                                 else moved[b.alias_of]) for b in one_site.buffers))
    programs = (*one_site.programs, *(attrs.evolve(ep, site=t, ops=rename.ops(ep.ops)) for ep in one_site.programs))
    memory = (*one_site.memory, *(attrs.evolve(m, buf=moved[m.buf]) for m in one_site.memory))
    tensors = (*one_site.tensors, *(attrs.evolve(x, name=x.name + "1") for x in one_site.tensors))
    return attrs.evolve(one_site, tensors=tensors, buffers=buffers, programs=programs, memory=memory)


def test_an_alias_proof_is_reused_for_a_translated_copy_and_a_refutation_never() -> None:
    p = aliased_on_two_sites(pop_first=True)
    got = [(r.name, r.verdict) for r in certify(p).results if r.name.startswith("alias-clobber")]
    assert got == [("alias-clobber:b0~b1", Verdict.PROVED), ("alias-clobber:b1~b0", Verdict.PROVED),
                   ("alias-clobber:b2~b3", Verdict.PROVED), ("alias-clobber:b3~b2", Verdict.PROVED)]
    reasons = {r.name: r.reason for r in certify(p).results if r.name.startswith("alias-clobber")}
    assert reasons["alias-clobber:b2~b3"].startswith("proved as alias-clobber:b0~b1 for the isomorphic component")
    assert reasons["alias-clobber:b3~b2"].startswith("proved as alias-clobber:b1~b0 for the isomorphic component")
    bad = aliased_on_two_sites(pop_first=False)
    refuted = [r for r in certify(bad).results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in refuted] == ["alias-clobber:b1~b0", "alias-clobber:b3~b2"]
    assert all(r.counterexample is not None and r.counterexample["replay"]["violation"]["rule"] == "alias-clobber"
               for r in refuted)


# The pairs of one component share a proof when the engines their queries start from are equal up to renaming and
# translation and share the same counters with engines outside them (``canon.scope_form``): their first scope asks
# the same query.

C = Site(2, 0)


def linked_sites(early_go_at_b: bool) -> Program:
    """Sites A and B each hold an aliased pair (b0/b1 on A, b2/b3 on B): the reader fills b0 once started, the writer
    drains it, then says go (sem1 of its own site += 1), the compute waits for go and packs into the alias, the writer
    drains that. A third site's reader starts both readers (sem0), so A, B and C are one component. With
    ``early_go_at_b`` it also says go at B before anything: B's compute may pack over b2's unread page."""
    base = WORMHOLE.reserved_base

    def site(s: Site, first: int, out: str) -> tuple[EngineProgram, ...]:
        b0, b1 = first, first + 1
        return (
            EngineProgram(s, Engine.READER, (SemWait(0, WaitCond.GE, 1), Reserve(b0, 1), ReadTiles("X", Addr(), 1, b0),
                                             ReadBarrier(), Push(b0, 1))),
            EngineProgram(s, Engine.COMPUTE, (SemWait(1, WaitCond.GE, 1), AcquireAcc(1, "bf16"), Reserve(b1, 1),
                                              PackAcc(b1, 1), Push(b1, 1), ReleaseAcc())),
            EngineProgram(s, Engine.WRITER, (Wait(b0, 1), WriteTiles(b0, out, Addr(), 1), WriteBarrier(), Pop(b0, 1),
                                             SemInc(1, s), AtomicBarrier(), Wait(b1, 1),
                                             WriteTiles(b1, out, Addr(1), 1), WriteBarrier(), Pop(b1, 1))))

    go = (SemInc(0, A), SemInc(0, B), *((SemInc(1, B),) if early_go_at_b else ()), AtomicBarrier())
    buffers = tuple(Buffer(i, f"c{i}", s, 16 * (i % 2), 1, 1, "bf16", alias_of=None if i % 2 == 0 else i - 1)
                    for i, s in enumerate((A, A, B, B)))
    return Program(
        "alias_linked", WORMHOLE,
        tensors=(Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 64), "bf16", Role.OUTPUT),
                 Tensor("Z", (32, 64), "bf16", Role.OUTPUT)),
        buffers=buffers,
        semaphores=(Semaphore(0, "start", (A, B), host_init=True), Semaphore(1, "go", (A, B), host_init=True)),
        programs=(*site(A, 0, "Y"), *site(B, 2, "Z"), EngineProgram(C, Engine.READER, go)),
        memory=tuple(BufferAt(i, base, 2048) for i in range(4)))


def clobber_results(p: Program, cache: bool = True) -> dict[str, tuple[Verdict, str]]:
    return {r.name: (r.verdict, r.reason) for r in certify(p, cache=cache).results
            if r.name.startswith("alias-clobber")}


def test_equal_pairs_of_one_component_share_one_proof() -> None:
    p = linked_sites(early_go_at_b=False)
    assert validate(p) == []
    assert explore(p).verdict == "ok"
    memo = ProofMemo()
    got = {r.name: r for r in certify(p, cache=memo).results if r.name.startswith("alias-clobber")}
    assert {n: r.verdict for n, r in got.items()} == {n: Verdict.PROVED for n in (
        "alias-clobber:b0~b1", "alias-clobber:b1~b0", "alias-clobber:b2~b3", "alias-clobber:b3~b2")}
    # one component (the third site starts both readers): no component proof transfers, the engines' proofs do
    shared = {x.name: x.source for x in memo.reused if x.name.startswith("alias-clobber")}
    assert shared == {"alias-clobber:b2~b3": "alias-clobber:b0~b1", "alias-clobber:b3~b2": "alias-clobber:b1~b0"}
    assert got["alias-clobber:b2~b3"].reason.startswith(
        "proved as alias-clobber:b0~b1 for the isomorphic engines (0,0).compute+2")
    assert {n: v for n, (v, _) in clobber_results(p, cache=False).items()} == {
        n: r.verdict for n, r in got.items()}


def test_engines_sharing_a_counter_with_others_do_not_take_a_proof_of_engines_that_do_not() -> None:
    # B's engines are A's up to translation, but the third site also says go at B: the go word's facts are not
    # B's engines' alone, so A's proofs do not transfer, and the clobber the interpreter finds is refuted.
    p = linked_sites(early_go_at_b=True)
    assert validate(p) == []
    assert "alias-clobber" in explore(p).rules()
    memo = ProofMemo()
    report = certify(p, cache=memo)
    assert not any(x.name.startswith("alias-clobber:b2") or x.name.startswith("alias-clobber:b3")
                   for x in memo.reused)
    got = {r.name: r.verdict for r in report.results if r.name.startswith("alias-clobber")}
    assert got == {"alias-clobber:b0~b1": Verdict.PROVED, "alias-clobber:b1~b0": Verdict.PROVED,
                   "alias-clobber:b2~b3": Verdict.REFUTED, "alias-clobber:b3~b2": Verdict.REFUTED}
    refuted = [r for r in report.results if r.name.startswith("alias-clobber") and r.verdict == Verdict.REFUTED]
    assert all(r.counterexample is not None and r.counterexample["replay"]["violation"]["rule"] == "alias-clobber"
               for r in refuted)
    assert {n: v for n, (v, _) in clobber_results(p, cache=False).items()} == got
