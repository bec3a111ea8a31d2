"""Protocols of issue 7 deliverable 2 (docs/semantics.md "Protocols"): interpreter semantics, checker support, a
proved correct form and a refuted mutant (replayed) for each, and the shipped examples' golden verdicts.

- ``If`` guards and loop counts affine in a trip (a runtime-count K loop that peels its last block);
- ``SemIncMcast`` (one atomic per destination) and wait thresholds growing with a loop index;
- a flag multicast from a constant VALID word (``McastSetValid.src``);
- per-tile versions of a state across sections (the KV-cache update, then attention over ``[0, p]``).

Programs live on row 0 of the Wormhole target; one page = one bf16 tile.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest
from builders import EQ, GE, RA, A, B, buf, ep, sem
from builders import prog as bare_prog

from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.structure import unsupported_features
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    AtomicBarrier,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Guard,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    SectionSpan,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Trip,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import Interp, simulate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
C = Site(2, 0)
RC = "(2,0).reader"


def _load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_examples", EXAMPLES / "build_examples.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _load_builder()


@functools.cache
def report_of(rel: str) -> Report:
    return certify(load_program(EXAMPLES / rel))


def verdicts(r: Report) -> dict[str, Verdict]:
    return {x.name: x.verdict for x in r.results}


def not_proved(r: Report) -> dict[str, str]:
    return {x.name: f"{x.verdict.value}: {x.reason}" for x in r.results if x.verdict != Verdict.PROVED}


def refuted(r: Report) -> list[Result]:
    return [x for x in r.results if x.verdict == Verdict.REFUTED]


def assert_replayed(r: Report) -> None:
    for x in refuted(r):
        c = x.counterexample
        assert c is not None
        if c.get("kind") in ("memory", "mcast-address", "certificate"):
            continue
        assert "replay" in c or "replayed_by" in c, x.name


def prog(*programs: EngineProgram, **kw: Any) -> Program:
    """``builders.prog`` with every buffer laid out one after another from the target's reserved base."""
    p = bare_prog(*programs, **kw)
    return attrs.evolve(p, memory=BUILD.pack_memory(p.target, p.buffers))


def checked(p: Program) -> Program:
    assert validate(p) == [], validate(p)
    return p


def t2(name: str, n: int, role: Role = Role.INPUT) -> Tensor:
    return Tensor(name, (32, 32 * n), "bf16", role)


# ------------------------------------------------------------------------------------------ fail closed


def test_front_multicast_no_longer_fails_closed() -> None:
    """Nothing in the IR is outside the decided fragment any more: a forwarder's multicast from the front of its
    buffer is decided obligation by obligation. Here the receiver publishes without any handshake: the multicast
    may land in a slot the receiver has not reserved (mcast-slot, refuted and replayed) and its push may come before
    any write barrier of the sender shows the data landed (mcast-publish, refuted: the interpreter publishes first)."""
    guarded = checked(prog(ep(A, Engine.READER, Loop("k", TripCount("t", 2, -1), (If("k", Guard.LAST, (ReadBarrier(),)),))),
                           trips=(Trip("t", 2),)))
    assert unsupported_features(guarded) == []
    front = checked(prog(
        ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
        ep(A, Engine.WRITER, Wait(0, 1), McastSend(0, 1, 0, 1, front=True), WriteBarrier(), Pop(0, 1)),
        ep(B, Engine.READER, Reserve(1, 1), Push(1, 1)), ep(B, Engine.WRITER, Wait(1, 1), Pop(1, 1)),
        buffers=(buf(0), buf(1, B, cb=0)), groups=(Group(0, A, (1, 0, 1, 0)),), tensors=(t2("X", 1),)))
    assert unsupported_features(front) == []
    report = certify(front)
    assert {r.name: r.verdict for r in report.results if r.verdict != Verdict.PROVED} == {
        "mcast-slot:(0,0).writer:[1]": Verdict.REFUTED, "mcast-publish:(1,0).reader:[1]": Verdict.REFUTED}
    (slot,) = [r for r in report.results if r.name == "mcast-slot:(0,0).writer:[1]"]
    assert slot.counterexample is not None
    assert slot.counterexample["replay"]["violation"]["rule"] == "mcast-slot"


# ------------------------------------------------------------------------------------------ interpreter


def test_sem_inc_mcast_lands_one_atomic_per_destination() -> None:
    p = checked(prog(ep(A, Engine.READER, SemIncMcast(0, 0, 2, by=3), AtomicBarrier()),
                     ep(B, Engine.READER, SemWait(0, EQ, 3), SemSet(0, 0)),
                     ep(C, Engine.READER, SemWait(0, EQ, 3), SemSet(0, 0)),
                     sems=(sem(0, B, C),), groups=(Group(0, A, (1, 0, 2, 0)),)))
    it = Interp(p)
    s = it.fire(it.initial(), it.enabled(it.initial())[0])  # the root issues the multicast increment
    assert [t.kind for t in it.landings(s)] == ["land", "land"]  # two atomics in flight, one per destination
    r = simulate(p)
    assert (r.status, r.violations, r.steps) == ("terminated", (), 8)
    assert not_proved(certify(p)) == {}


def test_flag_multicast_reads_its_source_word_when_it_leaves() -> None:
    """noc_semaphore_set_multicast(src, dst): the destination word gets the source word's value, read as the
    write leaves the sender (the source semaphore 1 holds 5; the flag semaphore 0 at the sender holds 0)."""
    p = checked(prog(ep(A, Engine.READER, McastSetValid(0, 0, 1, src=1), WriteBarrier()),
                     ep(B, Engine.READER, SemWait(0, EQ, 5)),
                     sems=(sem(0, A, B), sem(1, A, init=5)), groups=(Group(0, A, (1, 0, 1, 0)),)))
    r = simulate(p)
    assert (r.status, r.sems[(0, B)], r.sems[(0, A)]) == ("terminated", 5, 0)


def test_growing_threshold_is_read_at_the_loop_index() -> None:
    """wait_min(sem, ++expected): iteration k waits for k + 1 increments."""
    inc = ep(A, Engine.READER, Loop("k", 3, (SemInc(0, B, 1),)), AtomicBarrier())
    wait = ep(B, Engine.READER, Loop("k", 3, (SemWait(0, GE, 1, (Term("k", 1),)),)), SemWait(0, EQ, 3), SemSet(0, 0))
    p = checked(prog(inc, wait, sems=(sem(0, B),)))
    assert simulate(p).status == "terminated"
    assert explore(p).verdict == "ok"
    short = checked(prog(ep(A, Engine.READER, Loop("k", 2, (SemInc(0, B, 1),)), AtomicBarrier()), wait,
                         sems=(sem(0, B),)))
    r = simulate(short)
    assert r.status == "deadlock"
    assert str(r.stuck[0]) == "(1,0).reader at ops[0].body[0] sem_wait(sem0, ge, 1+1*k) k=2: sem0@(1,0)=2, waits >=3"


def _kv(rendezvous: bool) -> Program:
    return BUILD.kv_cache_update("kv", rendezvous=rendezvous)  # type: ignore[no-any-return]


def test_state_tile_read_in_a_later_section_sees_the_new_version() -> None:
    """Row pos written in section 0, rows [0, p] read in section 1 after the rendezvous: no race, for every
    position of the scatter (both ends of the indirect range) and every p."""
    p = _kv(True)
    for pos in (0, 7):
        for t in (0, 3, 7):
            r = simulate(p, {"p": t}, dyn={"pos": pos})
            assert (r.status, r.violations) == ("terminated", ()), (pos, t)
    assert explore(p, trips={"p": 1}).verdict == "ok"


def test_state_tile_read_concurrent_with_an_earlier_section_write_is_a_race() -> None:
    """Without the rendezvous the read of row 0 (section 1) can be issued before section 0's write of it is
    issued (reported at the write: that read saw the old version) or while it is incomplete (at the read)."""
    p = _kv(False)
    seen = {(v.position.engine, v.position.path, v.message) for seed in (None, 4)
            for v in simulate(p, {"p": 0}, seed=seed).violations}
    assert seen == {
        ("(0,0).reader", (4, 1), "read_tiles(kv, 1, b1) reads state kv tile 0 (section 1) while the write of it by "
                                 "(0,0).writer in section 0 is not complete"),
        ("(0,0).writer", (1,), "write_tiles(b0, kv, 1) writes state kv tile 0 (section 0) after a read of it in the "
                               "later section 1 was issued (that read must see this version)")}
    assert explore(p, trips={"p": 0}).verdict == "violation"


def test_state_read_while_an_earlier_section_write_is_incomplete_is_reported_at_the_read() -> None:
    """Section 0's writer signals the reader before its write barrier: section 1's read of the tile can be issued
    while that write is incomplete (the explorer finds it, reported at the read)."""
    st = Tensor("s", (32, 32), "bf16", Role.STATE)
    # The first page is filled from x (a pushed page of a data buffer holds data: cb-push-unfilled).
    x = Tensor("x", (32, 32), "bf16", Role.INPUT)
    rd = EngineProgram(A, Engine.READER, (Reserve(0, 1), ReadTiles("x", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
                                          SemWait(0, GE, 1), SemSet(0, 0), Reserve(0, 1), ReadTiles("s", Addr(0), 1, 0),
                                          ReadBarrier(), Push(0, 1)), (0, 4))
    wr = EngineProgram(A, Engine.WRITER, (Wait(0, 1), WriteTiles(0, "s", Addr(0), 1), Pop(0, 1), SemInc(0, A, 1),
                                          AtomicBarrier(), WriteBarrier(),
                                          Wait(0, 1), Pop(0, 1)), (0, 6))
    p = checked(Program("t", WORMHOLE, tensors=(st, x), buffers=(buf(0),), semaphores=(sem(0),), programs=(rd, wr),
                        sections=(SectionSpan("write"), SectionSpan("read")),
                        memory=BUILD.pack_memory(WORMHOLE, (buf(0),))))
    ex = explore(p)
    (race,) = [f.violation for f in ex.violations if f.violation.rule == "tensor-race"]
    assert (race.position.engine, race.position.path) == (RA, (7,))
    assert race.message == ("read_tiles(s, 1, b0) reads state s tile 0 (section 1) while the write of it by "
                            "(0,0).writer in section 0 is not complete")
    r = certify(p)
    (hb,) = [x for x in r.results if x.family == "happens-before" and x.name.startswith("hb-state")]
    assert (hb.name, hb.verdict) == ("hb-state:s:(0,0).reader[7]<(0,0).writer[1]", Verdict.REFUTED)
    assert_replayed(r)
    fixed = attrs.evolve(p, programs=(rd, attrs.evolve(wr, ops=(*wr.ops[:2], WriteBarrier(), *wr.ops[2:5],
                                                                  *wr.ops[6:]))))
    assert validate(fixed) == []
    assert explore(fixed).verdict == "ok"
    assert [x.name for x in certify(fixed).results if x.verdict != Verdict.PROVED] == []


# ------------------------------------------------------------------------------------------ checker units


def _copy(reader_count: Any, writer_count: Any, pop: int = 1, t_max: int = 3, persistent: bool = False) -> Program:
    """(0,0)'s reader pushes one page per iteration, its writer pops ``pop`` pages per iteration; ``persistent``:
    the buffer must end empty (its counters outlive the program)."""
    r = ep(A, Engine.READER, Loop("k", reader_count, (Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(),
                                                      Push(0, 1))))
    w = ep(A, Engine.WRITER, Loop("k", writer_count, (Wait(0, pop), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(),
                                                      Pop(0, pop))))
    # Y is a state: with t = 0 nothing writes it, which an output forbids (output-unwritten).
    return checked(prog(r, w, buffers=(buf(0, persistent=persistent),), tensors=(t2("X", 1), t2("Y", 1, Role.STATE)),
                        trips=(Trip("t", t_max),)))


def test_trip_affine_counts_balance() -> None:
    """2t pushes of one page against t pops of two: proved for every t; t pops of one: refuted (replayed)."""
    ok = certify(_copy(TripCount("t", 2), "t", pop=2, persistent=True))
    assert not_proved(ok) == {}
    bad = certify(_copy(TripCount("t", 2), "t", pop=1, persistent=True))
    assert verdicts(bad)["balance-cb:b0"] == Verdict.REFUTED
    # Launched once, the pages left fault nothing (the launch's end resets the buffer).
    assert verdicts(certify(_copy(TripCount("t", 2), "t", pop=1)))["balance-cb:b0"] == Verdict.PROVED
    c = next(x for x in bad.results if x.name == "balance-cb:b0").counterexample
    assert c is not None
    assert c["trips"]["t"] >= 1
    assert_replayed(bad)


def test_t_minus_one_loops() -> None:
    """A peeled loop of t - 1 (max(0, t - 1)) plus one unconditional block on both sides balances for every t;
    against t on the writer it does not (t = 0: one page pushed, none popped)."""
    r = ep(A, Engine.READER, Loop("k", TripCount("t", 1, -1), (Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0),
                                                                ReadBarrier(), Push(0, 1))),
           Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1))
    w_ok = ep(A, Engine.WRITER, Loop("k", TripCount("t", 1, -1), (Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1),
                                                                   WriteBarrier(), Pop(0, 1))),
              Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1))
    w_bad = ep(A, Engine.WRITER, Loop("k", "t", (Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(),
                                                 Pop(0, 1))))
    kw: dict[str, Any] = {"buffers": (buf(0, persistent=True),), "tensors": (t2("X", 1), t2("Y", 1, Role.OUTPUT)),
                          "trips": (Trip("t", 3),)}
    assert not_proved(certify(checked(prog(r, w_ok, **kw)))) == {}
    bad = certify(checked(prog(r, w_bad, **kw)))
    assert verdicts(bad)["balance-cb:b0"] == Verdict.REFUTED
    assert_replayed(bad)


def _ack_protocol(wait_for_ack: bool) -> Program:
    """A producer increments a monotone counter once per item; the consumer waits for it to *equal* k + 1 in
    iteration k (an equality wait with a growing threshold) and acknowledges. The producer waits for k
    acknowledgements before item k, so the counter never runs more than one ahead; without that wait it can
    overshoot. Both owners wait for the final count and reset their word."""
    prod_body = (SemWait(1, GE, 0, (Term("k", 1),)),) if wait_for_ack else ()
    producer = ep(A, Engine.READER, Loop("k", 3, (*prod_body, SemInc(0, B, 1))), AtomicBarrier(),
                  SemWait(1, EQ, 3), SemSet(1, 0))
    consumer = ep(B, Engine.READER, Loop("k", 3, (SemWait(0, EQ, 1, (Term("k", 1),)), SemInc(1, A, 1))),
                  AtomicBarrier(), SemWait(0, EQ, 3), SemSet(0, 0))
    return checked(prog(producer, consumer, sems=(sem(0, B), sem(1, A))))


def test_equality_wait_with_a_growing_threshold() -> None:
    ok = certify(_ack_protocol(True))
    assert not_proved(ok) == {}
    assert explore(_ack_protocol(True)).verdict == "ok"
    bad = certify(_ack_protocol(False))
    r = next(x for x in bad.results if x.name == "sem-overshoot:sem0@(1,0)")
    assert r.verdict == Verdict.REFUTED
    assert "can exceed 1+1*k while (1,0).reader waits for it to equal 1+1*k at [0, 0]" in r.reason
    assert_replayed(bad)
    assert explore(_ack_protocol(False)).verdict != "ok"


# ------------------------------------------------------------------------------------------ shipped examples


@pytest.mark.parametrize("rel", ["peeled_k_loop.json", "counter_release.json", "valid_source.json",
                                 "kv_cache_update.json"])
def test_protocol_examples_prove_every_obligation(rel: str) -> None:
    r = report_of(rel)
    assert (r.exit_code, not_proved(r)) == (0, {})


def test_peeled_k_loop_reload_on_the_first_block_deadlocks() -> None:
    r = report_of("broken/q_peel_reload_first.json")
    assert r.exit_code == 1
    assert {x.family for x in refuted(r)} == {"deadlock"}
    (dl,) = refuted(r)
    c = dl.counterexample
    assert c is not None
    stuck = {st["position"]["engine"]: st["position"] for st in c["stuck"]}
    # Block 0 waits for a partial sum nothing packed: inside the If (its iteration entry is ("", 0)).
    assert stuck["(0,0).compute"]["op"] == "wait(b2, 1)"
    assert stuck["(0,0).compute"]["iteration"] == [["k", 0], ["", 0]]
    assert_replayed(r)


def test_release_overshoot_is_refuted() -> None:
    r = report_of("broken/r_release_overshoot.json")
    assert r.exit_code == 1
    assert {x.name for x in refuted(r)} == {"sem-overshoot:sem1@(1,0)", "sem-overshoot:sem1@(2,0)",
                                            "deadlock:(0,0).reader+2"}
    assert_replayed(r)


def test_flag_reset_after_the_increment_is_refuted() -> None:
    r = report_of("broken/s_flag_reset_late.json")
    assert r.exit_code == 1
    assert {x.name for x in refuted(r) if x.family == "semaphore"} == {"sem-flag-early:sem1@(1,0)",
                                                                        "sem-flag-early:sem1@(2,0)"}
    assert_replayed(r)


def test_kv_cache_without_rendezvous_races() -> None:
    r = report_of("broken/t_kv_no_rendezvous.json")
    assert r.exit_code == 1
    (x,) = refuted(r)
    assert x.name == "hb-state:kv:(0,0).reader[4, 1]<(0,0).writer[1]"
    c = x.counterexample
    assert c is not None
    assert c["replay"]["violation"]["rule"] == "tensor-race"
    assert c["replay"]["violation"]["position"]["engine"] in ("(0,0).reader", "(0,0).writer")


def test_kv_cache_update_proves_the_version_order() -> None:
    r = report_of("kv_cache_update.json")
    hb = {x.name: x.verdict for x in r.results if x.family == "happens-before"}
    assert hb == {"hb-state:kv:(0,0).reader[13, 1]<(0,0).writer[1]": Verdict.PROVED,
                  "hb-rendezvous:after-section-0": Verdict.PROVED}


def test_certificate_places_state_thresholds_consumption_and_flag_sources() -> None:
    """A place into a growing wait states the threshold it needs; a reset word's wait that precedes no reset takes
    no tokens; a flag place names the word its multicast reads."""
    from verispatial.certify.certificate import derive_places
    from verispatial.certify.reach import analyse

    places = derive_places(analyse(load_program(EXAMPLES / "counter_release.json")))
    into = {(pl["counter"], tuple(pl["to"]["path"])): pl for pl in places if pl["kind"] == "sem-reset"}
    grow = into[("sem0@(0,0)", (0, 0))]
    assert (grow["threshold"], grow["consumes"]) == ({"value": 2, "terms": [["k", 2]]}, False)
    final = into[("sem0@(0,0)", (2,))]
    assert {"threshold", "consumes"}.isdisjoint(final)
    flags = [pl for pl in derive_places(analyse(load_program(EXAMPLES / "valid_source.json")))
             if pl["kind"] == "sem-flag"]
    assert {pl["source"] for pl in flags} == {"sem2@(0,0)"}
    assert len(flags) == 2


def forwarder(skip_first: bool = False) -> Program:
    """(0,0)'s reader fills c_0; its writer forwards each page from the front of c_0 (``McastSend(front=True)``:
    the read pointer, reference §1.1 get_read_ptr) to (1,0) after (1,0) is ready, flags it from a constant VALID
    word, flushes and pops. With ``skip_first`` the forwarder first drops one page it does not forward (the reader
    fills one more): its read pointer is then one page ahead of the receiver's write pointer."""
    n = 3 if skip_first else 2
    a0 = ep(A, Engine.READER, Loop("k", n, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("k", 1),)), 1, 0),
                                            ReadBarrier(), Push(0, 1))))
    skip = (Wait(0, 1), Pop(0, 1)) if skip_first else ()
    a1 = ep(A, Engine.WRITER, *skip, Loop("k", 2, (Wait(0, 1), SemWait(0, EQ, 1), SemSet(0, 0),
                                                   McastSend(0, 1, 0, 1, front=True), McastSetValid(1, 0, 1, src=2),
                                                   Flush(), Pop(0, 1))), WriteBarrier())
    b0 = ep(B, Engine.READER, Loop("k", 2, (Reserve(1, 1), SemSet(1, 0), SemInc(0, A, 1), SemWait(1, EQ, 1),
                                            Push(1, 1))), AtomicBarrier())
    b1 = ep(B, Engine.WRITER, Loop("k", 2, (Wait(1, 1), WriteTiles(1, "Y", Addr(0, (Term("k", 1),)), 1),
                                            WriteBarrier(), Pop(1, 1))))
    return checked(prog(a0, a1, b0, b1, buffers=(buf(0, cap=2), buf(1, B, cap=2, cb=0)),
                        sems=(sem(0), sem(1, A, B), sem(2, init=1)), groups=(Group(0, A, (1, 0, 1, 0)),),
                        tensors=(t2("X", 3), t2("Y", 2, Role.OUTPUT))))


def test_front_multicast_slot_reads_the_forwarders_read_pointer() -> None:
    """The slot rule of a forwarder asks the pages its read pointer (``popped % capacity``) names to be free at each
    receiver: proved when both move one page per handshake, refuted when the forwarder dropped a page first (the
    interpreter reports ``mcast-publish-early`` at the receiver's push and, in another interleaving, ``mcast-slot``
    at the forwarder's multicast)."""
    from verispatial.certify.reach import analyse
    from verispatial.families.multicast.encoding import check_multicast

    ok = forwarder()
    assert simulate(ok).violations == ()
    got = {r.name: r.verdict for r in check_multicast(analyse(ok), {0, 1})}
    assert got["mcast-slot:(0,0).writer:[0, 3]"] == Verdict.PROVED
    assert got["mcast-address:(0,0).writer:[0, 3]"] == Verdict.PROVED
    bad = forwarder(skip_first=True)
    (slot,) = [r for r in check_multicast(analyse(bad), {0, 1}) if r.name.startswith("mcast-slot")]
    assert slot.verdict == Verdict.REFUTED
    assert "the pages its read pointer names are not free at a receiver" in slot.reason
    # The page lands one past the receiver's write pointer, on a free page: the receiver then publishes a page that
    # never landed; in another interleaving the next landing overwrites the page the receiver published.
    assert [v.rule for v in simulate(bad).violations] == ["mcast-publish-early"]
    found = explore(bad).violation("mcast-slot")
    assert found is not None
    assert (found.violation.position.engine, found.violation.position.path) == ("(0,0).writer", (2, 3))


def test_an_op_no_iteration_admits_asks_for_nothing() -> None:
    """A wait larger than its buffer inside ``If(k, not_first)`` of a one-iteration loop never runs: no
    ``cb-capacity`` finding (it could not be replayed); in a two-iteration loop it runs and is refuted."""
    def build(n: int) -> Program:
        r = ep(A, Engine.READER, Loop("k", n, (Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1))))
        w = ep(A, Engine.WRITER, Loop("k", n, (If("k", Guard.NOT_FIRST, (Wait(0, 2),)), Wait(0, 1),
                                               WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1))))
        return checked(prog(r, w, buffers=(buf(0, cap=1),), tensors=(t2("X", 1), t2("Y", 1, Role.OUTPUT))))

    assert not_proved(certify(build(1))) == {}
    two = certify(build(2))
    assert verdicts(two)["cb-capacity:(0,0).writer:[0, 0, 0]"] == Verdict.REFUTED
    assert_replayed(two)


# ------------------------------------------------------------------------------------------ forwarder (front multicast)


def test_forwarder_multicasting_from_its_read_pointer_proves() -> None:
    """examples/forwarder.json: the writer multicasts each block from the front of c_0 (its read pointer), flushes,
    then pops; every obligation that concerns the front multicast is decided and proved."""
    r = report_of("forwarder.json")
    assert not_proved(r) == {}
    v = verdicts(r)
    for name in ("mcast-slot:(0,0).writer:[1, 3]", "mcast-publish:(1,0).reader:[0, 4]", "async-source-reuse",
                 "cb-read-unwaited", "async-read-publish", "sem-exact:sem1@(1,0)"):
        assert v[name] == Verdict.PROVED, name


def test_forwarder_popping_before_its_multicast_left_is_refuted() -> None:
    """examples/broken/u_forwarder_pops_early.json: the pop frees pages the multicast may still read; the reader
    then re-reserves and refills them. Each of the three ops is refuted and replayed at that op."""
    r = report_of("broken/u_forwarder_pops_early.json")
    assert r.exit_code == 1
    got = {x.name: x for x in refuted(r)}
    assert set(got) == {"async-source-reuse:(0,0).writer:[1, 5]", "async-source-reuse:(0,0).reader:[0, 0]",
                        "async-source-reuse:(0,0).reader:[0, 1]"}
    for name, x in got.items():
        c = x.counterexample
        assert c is not None
        viol = c["violation"]
        assert viol["rule"] == "async-source-reuse"
        assert (viol["position"]["engine"], viol["position"]["path"]) == (c["engine"], c["path"]), name
    assert "front) at ops[1].body[3]" in got["async-source-reuse:(0,0).writer:[1, 5]"].counterexample["violation"][  # type: ignore[index]
        "message"]
    assert_replayed(r)
