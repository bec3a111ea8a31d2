"""The asynchronous-NoC family (verispatial/families/noc/): reads and writes issued now and landing later, their
barriers, the sources a write reads after it was issued and what an engine leaves outstanding — each rule on a tiny
program with the exact expected outcome in the reference interpreter, and the same op found by each chain
(interpreter, per-engine rules, Promela model) that gives ReadTiles, WriteTiles and the barriers their meaning."""

from __future__ import annotations

import pytest
from builders import EQ, RA, WA, A, B, buf, ep, prog, sem
from family_checks import asserted, findings, only, where

from verispatial.families.noc import encoding, promela, semantics
from verispatial.ir import (
    Addr,
    AtomicBarrier,
    Engine,
    FillTiles,
    Flush,
    Group,
    InlineWrite,
    McastSend,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    Reserve,
    Role,
    SemInc,
    SemSet,
    SemWait,
    Tensor,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.petri.explore import explore
from verispatial.petri.interp import Interp, State, Transition, simulate
from verispatial.petri.position import Violation
from verispatial.petri.promela import to_promela

IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


def test_read_tiles_lands_before_read_barrier() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    it = Interp(p)
    s = it.initial()
    s = it.fire(it.fire(s, Transition("step", 0)), Transition("step", 0))
    assert not it.can_step(s, 0)
    assert it.block_detail(s, 0) == "waits for 1 outstanding read(s)"
    s = it.fire(s, Transition("land", 0, 0))
    assert it.can_step(s, 0)
    assert simulate(p).violations == ()


def test_async_read_publish() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), Push(0, 1), ReadBarrier()),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    v = only(simulate(p))
    assert where(v) == ("async-read-publish", RA, (2,), ())
    assert v.message == "push(b0, 1) publishes pages read into b0 by read_tiles with no read_barrier since"


def test_async_pending_at_end() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), SemInc(0, B, 1)),
             ep(B, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0)), buffers=(buf(0),), tensors=(IN,), sems=(sem(0, B),))
    r = simulate(p)
    assert [where(v) for v in r.violations] == [("async-pending-at-end", RA, None, ())]
    assert r.violations[0].message == ("ends with outstanding NoC transactions: read_tiles into b0 with no "
                                       "read_barrier after; sem_inc with no atomic_barrier after")


def test_write_tiles_completes_at_write_barrier() -> None:
    out1 = Tensor("out", (32, 32), "bf16", Role.OUTPUT)

    def copy(*writer: Op) -> Program:
        return prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
                    ep(A, Engine.WRITER, *writer), buffers=(buf(0),), tensors=(IN, out1))

    p = copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), WriteBarrier(), Pop(0, 1))
    it = Interp(p)
    s = it.initial()
    for t in (Transition("step", 0), Transition("step", 0), Transition("land", 0, 0), Transition("step", 0),
              Transition("step", 0), Transition("step", 1), Transition("step", 1)):
        s = it.fire(s, t)
    assert it.block_detail(s, 1) == "waits for 1 outstanding write(s)/multicast(s)"
    assert it.describe(s, Transition("land", 1, 0)) == (
        "(0,0).writer's write_tiles(b0, out, 1) (issued at ops[1]) completes")
    assert simulate(p).status == "terminated"
    # A flush waits for the unicast write to leave its source too (noc_async_writes_flushed): then the page may go.
    flushed = copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), Flush(), Pop(0, 1), WriteBarrier())
    it = Interp(flushed)
    s = it.initial()
    for t in (Transition("step", 0), Transition("step", 0), Transition("land", 0, 0), Transition("step", 0),
              Transition("step", 0), Transition("step", 1), Transition("step", 1)):
        s = it.fire(s, t)
    assert it.block_detail(s, 1) == "waits for 1 write(s)/multicast(s) to leave the source"
    assert simulate(flushed).violations == ()
    r = simulate(copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), Pop(0, 1)))
    assert where(only(r)) == ("async-pending-at-end", WA, None, ())


def test_async_source_reuse_per_page_read_and_fill() -> None:
    """A page multicast from the back is not rewritten before the multicast left (dataflow_api.h: the source may be
    reused once noc_async_writes_flushed returns); other pages of the same buffer may be written meanwhile."""
    g = (Group(0, A, (1, 0, 1, 0)),)
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0))
    # Page 0 is multicast; a read then lands in page 0 (the reuse) and a local-store fill writes page 1 (another
    # page: fine).
    sender = ep(A, Engine.READER, Reserve(0, 3), McastSend(0, 1, 0, 1), ReadTiles("in", Addr(0), 1, 0),
                FillTiles(0, 1, drain=True), Flush(), FillTiles(0, 1, drain=True), ReadBarrier(), WriteBarrier(), Push(0, 3))
    p = prog(sender, ep(A, Engine.COMPUTE, Wait(0, 3), Pop(0, 3)), ep(B, Engine.READER, Reserve(1, 1)),
             buffers=bufs, groups=g, tensors=(IN,))
    it = Interp(p)
    s = it.initial()
    seen: list[Violation] = []
    for t in [Transition("step", 0)] * 3 + [Transition("land", 0, 1)] + [Transition("step", 0)]:
        s, vs = it.step(s, t)
        seen += vs
    assert [where(v) for v in seen] == [("async-source-reuse", RA, (2,), ())]
    assert seen[0].message == ("read_tiles(in, 1, b0) lands in page 0 of b0, the source of (0,0).reader's "
                               "mcast_send(b0, 1, g0, 1 dests) at ops[1], which has not left it (no flush/write_barrier "
                               "since)")
    # Round robin lets the multicast leave at once: no reuse there.
    assert simulate(p).violations == ()


# ---------------------------------------------------------------------------------------------- every chain


def test_each_chain_finds_the_unbarriered_read_published_at_its_op() -> None:
    """``async-read-publish``: a push (ops[2]) of a page whose read has no ReadBarrier before it. The interpreter
    reports it at the push, the per-engine rules find it there and the Promela model asserts it there (its escape is
    the op's id); the NoC rule is applied by the circular-buffer family's push through the interpreter it is handed."""
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), Push(0, 1), ReadBarrier()),
             ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    assert [where(v) for v in simulate(p).violations] == [(R.ASYNC_READ_PUBLISH, RA, (2,), ())]
    assert findings(p) == [(R.ASYNC_READ_PUBLISH, RA, (2,))]
    assert asserted(to_promela(p), R.ASYNC_READ_PUBLISH) == ["O_0_2"]


def test_each_chain_checks_a_write_source_freed_before_it_left() -> None:
    """``async-source-reuse``: the writer pops (ops[2]) the page its write_tiles still reads, with no flush or write
    barrier between them. Round robin lands every write before the next step, so the run is clean; the schedule in
    which the pop comes first shows the violation at the pop. The per-engine rules find it at the pop; the Promela
    model asserts the rule wherever a source may be reused: the reserve (ops[0] of the reader), the pop, and the
    read's landing (reported at the read, ops[1])."""
    out1 = Tensor("out", (32, 32), "bf16", Role.OUTPUT)
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)),
             ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), Pop(0, 1), WriteBarrier()),
             buffers=(buf(0),), tensors=(IN, out1))
    assert simulate(p).violations == ()
    it = Interp(p)
    s = it.initial()
    seen: list[Violation] = []
    for t in [Transition("step", 0)] * 2 + [Transition("land", 0, 0)] + [Transition("step", 0)] * 2 \
            + [Transition("step", 1)] * 3:
        s, vs = it.step(s, t)
        seen += vs
    assert [where(v) for v in seen] == [(R.ASYNC_SOURCE_REUSE, WA, (2,), ())]
    assert seen[0].message == ("pop(b0, 1) frees page 0 of b0, the source of (0,0).writer's write_tiles(b0, out, 1) "
                               "at ops[1], which has not left it (no flush/write_barrier since)")
    assert findings(p) == [(R.ASYNC_SOURCE_REUSE, WA, (2,))]
    assert asserted(to_promela(p), R.ASYNC_SOURCE_REUSE) == ["O_0_0", "O_1_2", "O_0_1"]


# ---------------------------------------------------------------------------------------------- one-word writes


def inline_program(barrier_first: bool = True, waited: bool = False) -> Program:
    """(1,0) writes 7 into a word of (0,0) (noc_inline_dw_write) and increments (0,0)'s ``ready`` word; (0,0) waits
    for the increment and resets it. ``barrier_first``: the write barrier sits between the write and the increment
    (tt-metal PR #43699's fix), else after the increment. ``waited``: (0,0) also waits for the word to hold 7."""
    w = [InlineWrite(1, A, 7)]
    w += [WriteBarrier(), SemInc(0, A, 1), AtomicBarrier()] if barrier_first else [
        SemInc(0, A, 1), AtomicBarrier(), WriteBarrier()]
    mine: list[Op] = [SemWait(0, EQ, 1), SemSet(0, 0)] + ([SemWait(1, EQ, 7), SemSet(1, 0)] if waited else [])
    return prog(ep(A, Engine.READER, *mine), ep(B, Engine.READER, *w), sems=(sem(0, A), sem(1, A)))


def test_inline_write_lands_as_a_remote_write_of_its_word() -> None:
    """An inline write is issued by its step and lands later, on its own, storing its value; the write barrier waits
    for it, the atomic barrier does not; the word only inline writes write and nothing reads ends at 7 (a mailbox:
    no balance-sem)."""
    p = inline_program()
    it = Interp(p)
    s = it.fire(it.initial(), Transition("step", 1))  # (1,0) issues the write
    w = it.word_id[(1, A)]
    assert s.words[w] == 0
    assert not it.can_step(s, 1)  # its write barrier waits for the landing
    assert it.describe(s, Transition("land", 1, 0)) == ("(1,0).reader's inline_write(sem1, (0,0), 7) (issued at ops[0]) "
                                                        "lands: sem1@(0,0) 0 -> 7")
    s = it.fire(s, Transition("land", 1, 0))
    assert s.words[w] == 7
    assert it.can_step(s, 1)
    r = simulate(p)
    assert (r.status, r.violations, r.sems[(1, A)]) == ("terminated", (), 7)
    assert p.mailbox_words() == frozenset({(1, A)})
    assert inline_program(waited=True).mailbox_words() == frozenset()


def test_async_inc_overtake_in_every_chain() -> None:
    """``async-inc-overtake``: the increment (ops[1]) issued while the inline write to its core has not landed (the
    barrier after it, not before). The interpreter reports it when the write is still in flight (not in round robin,
    which lands it first), the per-engine rules find it at the increment, the Promela model asserts it there; with the
    barrier first, no chain does."""
    p = inline_program(barrier_first=False)
    assert simulate(p).violations == ()  # landings first: the write landed before the increment
    it = Interp(p)
    s, vs = it.step(it.initial(), Transition("step", 1))
    s, vs = it.step(s, Transition("step", 1))
    assert [where(v) for v in vs] == [(R.ASYNC_INC_OVERTAKE, "(1,0).reader", (1,), ())]
    assert vs[0].message == ("sem_inc(sem0, (0,0), 1) is issued while this engine's inline_write(sem1, (0,0), 7) at "
                             "ops[0] has not landed at (0,0) (no write_barrier between: the atomic may land first)")
    assert findings(p) == [(R.ASYNC_INC_OVERTAKE, "(1,0).reader", (1,))]
    assert asserted(to_promela(p), R.ASYNC_INC_OVERTAKE) == ["O_1_1"]
    fixed = inline_program()
    assert findings(fixed) == []
    assert asserted(to_promela(fixed), R.ASYNC_INC_OVERTAKE) == ["O_1_2"]  # asserted there, and holds
    assert explore(fixed).rules() == []
    assert set(explore(p).rules()) == {R.ASYNC_INC_OVERTAKE}


def test_a_flush_is_not_a_landing() -> None:
    """A flush says the write left its source, not that it landed: an increment after it may still overtake it
    (the interpreter's landing is one transition after the flush may pass)."""
    p = prog(ep(A, Engine.READER, SemWait(0, EQ, 1), SemSet(0, 0)),
             ep(B, Engine.READER, InlineWrite(1, A, 7), Flush(), SemInc(0, A, 1), AtomicBarrier(), WriteBarrier()),
             sems=(sem(0, A), sem(1, A)))
    assert findings(p) == [(R.ASYNC_INC_OVERTAKE, "(1,0).reader", (2,))]


def test_an_inline_write_lands_on_a_waited_word_as_a_remote_write() -> None:
    """The word's owner waits ``== 7`` and resets it: the inline write is a remote write (``sem-set-race`` when it
    lands after the owner's wait and before a reset it has not seen), decided by no protocol (``sem-protocol`` fails
    to prove, never proved)."""
    from verispatial.driver.run import certify

    p = inline_program(waited=True)
    assert simulate(p).violations == ()
    report = certify(p)
    (proto,) = [r for r in report.results if r.name == "sem-protocol:sem1@(0,0)"]
    assert proto.verdict.value == "failed-to-prove"
    assert "one-word remote writes" in proto.reason


# ---------------------------------------------------------------------------------------------- remote reads


def remote_read_program(wait: bool = True, refill: bool = False, ack_first: bool = False,
                        pop_first: bool = False) -> Program:
    """(1,0) fills a page of its c_0 (b1), pushes it and increments (0,0)'s word 0; (0,0) waits for it (``wait``),
    reads the page at its own read pointer of c_0 (b0) into b2, waits for the read to land, pushes it and
    increments (1,0)'s word 1; (1,0)'s consumer waits for that before it pops. ``refill``: then (1,0)'s producer fills
    the slot again. ``ack_first``: (0,0) increments before its read barrier, so the pop and the refill may come
    while the read is in flight. ``pop_first``: the consumer pops before it waits for the increment (the sharded
    layernorm's coordinator, ``reader_mcast_sender_unary_sharded_ln.cpp:226`` before ``:229``), so the read may be
    issued after the pop."""
    owner: list[Op] = [Reserve(1, 1), FillTiles(1, 1, drain=True), Push(1, 1), SemInc(0, A, 1), AtomicBarrier()]
    if refill:
        owner += [Reserve(1, 1), FillTiles(1, 1, drain=True), Push(1, 1)]
    handshake: list[Op] = [SemWait(1, EQ, 1), SemSet(1, 0)]
    drain = ([Wait(1, 1), Pop(1, 1), *handshake] if pop_first else [Wait(1, 1), *handshake, Pop(1, 1)]) + (
        [Wait(1, 1), Pop(1, 1)] if refill else [])
    ack: list[Op] = [SemInc(1, B, 1), AtomicBarrier()]
    landed: list[Op] = [*ack, ReadBarrier()] if ack_first else [ReadBarrier(), *ack]
    read: list[Op] = [Reserve(2, 1), RemoteRead(0, B, 1, 2), *landed, Push(2, 1)]
    reader = ([SemWait(0, EQ, 1), SemSet(0, 0)] if wait else []) + read
    return prog(ep(A, Engine.READER, *reader), ep(A, Engine.WRITER, Wait(2, 1), Pop(2, 1)),
                ep(B, Engine.READER, *owner), ep(B, Engine.WRITER, *drain),
                buffers=(buf(0, A, cb=0, cap=1), buf(1, B, cb=0, cap=1), buf(2, A, cb=1)), sems=(sem(0, A), sem(1, B)))


def test_remote_read_reads_the_owners_published_page() -> None:
    """The read takes its pages from the owner (the buffer of ``buf``'s cb index at ``at``), lands by the read
    barrier into ``into``; run after the owner's push it breaks nothing, and the owner's buffer is a data buffer
    (its push must be filled)."""
    p = remote_read_program()
    it = Interp(p)
    assert it.remote_of == {(0, B): 1}
    assert 1 in it.data_bufs
    assert simulate(p).violations == ()
    assert explore(p).rules() == []


def test_remote_read_unpublished_in_every_chain_that_models_it() -> None:
    """Read before the owner pushed: the slot holds no page its producer published (``remote-read-unpublished``,
    at the read); the checker refutes it and replays it; the Promela model refuses remote reads by name."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.promela import PromelaUnsupported

    p = remote_read_program(wait=False)
    r = simulate(p)
    v = next(v for v in r.violations if v.rule == R.REMOTE_READ_UNPUBLISHED)
    assert where(v) == (R.REMOTE_READ_UNPUBLISHED, RA, (1,), ())
    assert v.message == ("remote_read(b0, (1,0), 1, b2) reads slot 0 of b1 at (1,0), which holds no page its producer "
                         "published (pushed 0, reserved to 1)")
    got = {x.name: x for x in certify(p).results}
    x = got["remote-read-unpublished:(0,0).reader:[1]"]
    assert x.verdict is Verdict.REFUTED
    assert x.counterexample is not None
    assert x.counterexample["replay"]["violation"]["rule"] == R.REMOTE_READ_UNPUBLISHED
    with pytest.raises(PromelaUnsupported, match="remote reads are not modelled"):
        to_promela(p)


def test_a_popped_page_keeps_its_bytes_until_it_is_reserved_again() -> None:
    """``noc.published``: a page the owner's consumer popped still holds what its push published; once the
    producer reserves the slot again it does not (its new bytes are being written)."""
    p = remote_read_program(refill=True)
    it = Interp(p)

    def run(s: State, *engines: int) -> State:
        for e in engines:
            while not it.can_step(s, e):  # a barrier: land what it waits for
                s = it.fire(s, it.landings(s)[0])
            s = it.fire(s, Transition("step", e))
        return s

    s = run(it.initial(), 2, 2, 2)  # the owner reserves, fills, pushes
    assert semantics.published(s, 1, 0, 1)
    s = run(s, 2, 2, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3)  # its increment; the reader reads and acknowledges; it pops
    assert it.pos(3, s.pcs[3]).op == "wait(b1, 1)"
    assert semantics.published(s, 1, 0, 1)
    s = run(s, 2)  # the producer reserves the slot again
    assert not semantics.published(s, 1, 0, 1)


def test_a_rewrite_while_the_remote_read_is_in_flight() -> None:
    """The reader acknowledges before its read barrier, so the owner may pop the page and fill the slot again while
    the read is in flight: the refill rewrites the read's source (``async-source-reuse``); the checker proves the
    read published when issued but not that no reserve reaches it in flight (failed to prove, never proved). With the
    acknowledgement after the barrier both prove."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = remote_read_program(refill=True, ack_first=True)
    assert set(explore(p).rules()) == {R.ASYNC_SOURCE_REUSE}
    got = {x.name: x.verdict for x in certify(p).results}
    assert got["remote-read-unpublished:(0,0).reader:[3]"] is Verdict.PROVED
    assert got["async-source-reuse:(0,0).reader:[3]"] is Verdict.FAILED
    fixed = remote_read_program(refill=True)
    assert explore(fixed).rules() == []
    got = {x.name: x.verdict for x in certify(fixed).results}
    assert got["remote-read-unpublished:(0,0).reader:[3]"] is Verdict.PROVED
    assert got["async-source-reuse:(0,0).reader:[3]"] is Verdict.PROVED


def test_a_read_of_a_popped_page_nothing_reserves_again_proves() -> None:
    """The owner's consumer pops the page before the reader's acknowledgement, or while its read is in flight
    (the sharded layernorm's partials): a pop changes no byte and nothing reserves the slot again, so the explorer
    finds nothing and the checker proves both obligations by the interpreter's own rule (the slot's latest page was
    pushed; no reserve reached it again), where it used to ask the page to be live (pushed, not popped) and failed."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    for p, at in ((remote_read_program(pop_first=True), 3), (remote_read_program(ack_first=True), 3)):
        assert explore(p).rules() == []
        got = {x.name: x for x in certify(p).results}
        assert got[f"remote-read-unpublished:(0,0).reader:[{at}]"].verdict is Verdict.PROVED
        reuse = got[f"async-source-reuse:(0,0).reader:[{at}]"]
        assert reuse.verdict is Verdict.PROVED
        assert f"remote-read-unpublished:(0,0).reader:[{at}]" in reuse.assumes


def test_a_read_after_the_popped_slot_was_reserved_again_is_refuted() -> None:
    """The broken neighbour: the owner pops first and its producer reserves the slot again, so the read may be
    issued while the slot is in the producer's reserved window: ``remote-read-unpublished``, refuted and replayed."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = remote_read_program(pop_first=True, refill=True)
    assert R.REMOTE_READ_UNPUBLISHED in explore(p).rules()
    x = {x.name: x for x in certify(p).results}["remote-read-unpublished:(0,0).reader:[3]"]
    assert x.verdict is Verdict.REFUTED
    assert x.counterexample is not None
    assert x.counterexample["replay"]["violation"]["rule"] == R.REMOTE_READ_UNPUBLISHED


def test_the_family_tables_cover_the_family_op_classes() -> None:
    ops = {ReadTiles, WriteTiles, InlineWrite, RemoteRead, ReadBarrier, WriteBarrier, Flush, AtomicBarrier}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) | {RemoteRead} == set(encoding.HANDLERS) == ops
    # What the family issues lands through its own landings, in the interpreter and in the model's noc process (which
    # refuses remote reads by name).
    assert set(semantics.LANDINGS) == set(promela.LANDINGS) | {RemoteRead} == set(promela.QUEUES) | {RemoteRead} == {
        ReadTiles, WriteTiles, InlineWrite, RemoteRead}
    # The barriers block until what they wait for is done: their guards and what a stuck one reports live here too.
    assert set(semantics.ENABLED) == set(semantics.BLOCKED) == {ReadBarrier, WriteBarrier, Flush, AtomicBarrier}


def rereserve_program(ack_first: bool) -> Program:
    """(1,0)'s producer reserves two pages of its two-page c_0, pushes one and reserves one again (the reserved end
    stays at 2 while the reserves add up to 3), announces it; (0,0) reads slot 0 (page 0), acknowledges and lands the
    read; the owner then pushes page 1 and reserves page 2 — slot 0 again — and fills it. ``ack_first``: the
    acknowledgement comes before the read barrier, so that refill may rewrite the read's source in flight."""
    owner: list[Op] = [Reserve(1, 2), FillTiles(1, 1, drain=True), Push(1, 1), Reserve(1, 1), SemInc(0, A, 1),
                       AtomicBarrier(), SemWait(1, EQ, 1), SemSet(1, 0), FillTiles(1, 1, drain=True), Push(1, 1),
                       Reserve(1, 1), FillTiles(1, 1, drain=True), Push(1, 1)]
    drain: list[Op] = [Wait(1, 1), Pop(1, 1)] * 3
    ack: list[Op] = [SemInc(1, B, 1), AtomicBarrier()]
    landed: list[Op] = [*ack, ReadBarrier()] if ack_first else [ReadBarrier(), *ack]
    reader: list[Op] = [SemWait(0, EQ, 1), SemSet(0, 0), Reserve(2, 1), RemoteRead(0, B, 1, 2), *landed, Push(2, 1)]
    return prog(ep(A, Engine.READER, *reader), ep(A, Engine.WRITER, Wait(2, 1), Pop(2, 1)),
                ep(B, Engine.READER, *owner), ep(B, Engine.WRITER, *drain),
                buffers=(buf(0, A, cb=0, cap=2), buf(1, B, cb=0, cap=2), buf(2, A, cb=1)), sems=(sem(0, A), sem(1, B)))


def test_the_reserved_end_lies_between_pushed_and_popped_plus_capacity() -> None:
    """What ``check_remote_reads`` assumes of the producer's reserved end (``State.rsv_end``), checked in every state
    the interpreter reaches: ``pushed <= rsv_end <= popped + cap`` — here the reserves add up to 4 and the end never
    passes 3 (a reserve moves it to ``max(end, pushed + n)``)."""
    for ack_first in (False, True):
        p = rereserve_program(ack_first)
        it = Interp(p)
        s0, _ = it.start()
        seen, todo, ends = {s0.key()}, [s0], set()
        while todo:
            s = todo.pop()
            b = 1
            assert s.pushed[b] <= s.rsv_end[b]
            assert s.rsv_end[b] <= s.popped[b] + it.caps[b]
            ends.add(s.rsv_end[b])
            for t in it.enabled(s):
                s2, _ = it.step(s, t, check=False)
                if s2.key() not in seen:
                    seen.add(s2.key())
                    todo.append(s2)
        assert max(ends) == 3


def test_a_refill_after_a_reserve_again_is_never_proved_harmless() -> None:
    """The source of an in-flight read rewritten by a reserve of the same slot, after the owner reserved more than it
    pushed and reserved again: the explorer finds ``async-source-reuse``; the checker must not prove it (a reserved
    end taken as the reserves' sum would put the read's page a ring above the real one and prove it). With the
    acknowledgement after the read barrier the explorer finds nothing and the checker refutes nothing."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    broken = rereserve_program(ack_first=True)
    assert set(explore(broken).rules()) == {R.ASYNC_SOURCE_REUSE}
    got = {x.name: x.verdict for x in certify(broken).results}
    assert got["async-source-reuse:(0,0).reader:[3]"] is not Verdict.PROVED
    fixed = rereserve_program(ack_first=False)
    assert explore(fixed).rules() == []
    assert all(x.verdict is not Verdict.REFUTED for x in certify(fixed).results)


def straddling_remote_read_program(popped: int, pages: int) -> Program:
    """(1,0) fills and pushes all three pages of its c_0 (b1) and tells (0,0); (0,0)'s writer, which consumes its own
    c_0 (b0, three pages, filled by (0,0)'s reader), pops ``popped`` pages, then reads ``pages`` pages of (1,0)'s c_0 at
    its read pointer (``get_read_ptr(c_0)``: slot ``popped``) into b2 and acknowledges; (1,0) pops once it has."""
    from test_copy import mapped

    owner: list[Op] = [Reserve(1, 3), FillTiles(1, 3, drain=True), Push(1, 3), SemInc(0, A, 1), AtomicBarrier()]
    drain: list[Op] = [Wait(1, 3), SemWait(1, EQ, 1), SemSet(1, 0), Pop(1, 3)]
    mine: list[Op] = [Reserve(0, popped), FillTiles(0, popped, drain=True), Push(0, popped)]
    reader: list[Op] = [Wait(0, popped), Pop(0, popped), SemWait(0, EQ, 1), SemSet(0, 0), Reserve(2, pages),
                        RemoteRead(0, B, pages, 2), ReadBarrier(), SemInc(1, B, 1), AtomicBarrier(), Push(2, pages)]
    return mapped(prog(ep(A, Engine.READER, *mine), ep(A, Engine.WRITER, *reader),
                       ep(A, Engine.COMPUTE, Wait(2, pages), Pop(2, pages)),
                       ep(B, Engine.READER, *owner), ep(B, Engine.WRITER, *drain),
                       buffers=(buf(0, A, cb=0, cap=3), buf(1, B, cb=0, cap=3), buf(2, A, cb=1)),
                       sems=(sem(0, A), sem(1, B))))


def test_a_remote_read_past_the_ring_end_from_the_read_pointer_is_a_straddle() -> None:
    """The source of a remote read is ``get_read_ptr(c_0) + offset * page_size`` on the owner, which nothing wraps:
    two pages from slot 2 of a three-page ring read a page past its end. The model read them as slots 2 and 0 (both
    published) and the program proved; now ``cb-straddle`` in the interpreter, the explorer and the checker, whose
    refutation replays. From slot 1 the two pages lie inside the ring: proved."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    ok = straddling_remote_read_program(1, 2)
    assert simulate(ok).violations == ()
    assert {r.name: r.verdict for r in certify(ok, cache=False).results if r.verdict is not Verdict.PROVED} == {}
    p = straddling_remote_read_program(2, 2)
    v = only(simulate(p))
    assert where(v) == (R.CB_STRADDLE, WA, (5,), ())
    assert explore(p).rules() == [R.CB_STRADDLE]
    r = {r.name: r for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"]
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE
