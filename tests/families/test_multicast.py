"""The multicast family (verispatial/families/multicast/): McastSend and McastSetValid leaving their source and
landing at each destination, the receiver's slot and what it publishes — each rule on a tiny program with the exact
expected outcome in the reference interpreter, and the same op found by each chain (interpreter, per-engine rules,
Promela model)."""

from __future__ import annotations

import attrs
import pytest
from builders import EQ, GE, RA, RB, UNORDERED, A, B, buf, ep, prog, sem
from family_checks import asserted, findings, only, where

from verispatial.certify.report import Result
from verispatial.families.multicast import encoding, promela, semantics
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    BufferAt,
    Compute,
    Engine,
    FillTiles,
    Flush,
    Group,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    Site,
    Target,
    Tensor,
    Wait,
    WriteBarrier,
)
from verispatial.ir import rules as R
from verispatial.ir.program import landing_order, may_reorder
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import Interp, Transition, simulate
from verispatial.petri.position import Position
from verispatial.petri.promela import to_promela

IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


C = Site(2, 0)
GROUP0 = Group(0, A, (1, 0, 1, 0))  # the data multicast's: (0,0) to (1,0)


# Multicast: sender (0,0) sends b0 (cb 0) into receiver (1,0)'s b1 (cb 0) and a flag into its sem1 word.
def mcast_program(target: Target = WORMHOLE, flush: bool = True, receiver_waits: bool = True,
                  vcs: tuple[int | None, int | None] = (None, None), between: Op | None = None,
                  flag_rect: tuple[int, int, int, int] | None = None) -> Program:
    """``vcs``: the data multicast's and the flag's virtual channels; ``between``: the op between them when
    ``flush`` (default a Flush); ``flag_rect``: the flag goes to a group of its own with this rectangle (the data's
    group otherwise); one reaching (2,0) as well, where a reader only waits for the flag."""
    flag_group = Group(1, A, flag_rect) if flag_rect is not None else None
    wide = flag_group is not None and C in flag_group.destinations()
    sender: list[Op] = [Reserve(0, 2), ReadTiles("in", Addr(0), 2, 0), ReadBarrier(), SemWait(0, EQ, 2 if wide else 1),
                        SemSet(0, 0), McastSend(0, 2, 0, 1, vc=vcs[0])]
    sender += [between or Flush()] if flush else []
    sender += [McastSetValid(1, 0 if flag_group is None else 1, len((flag_group or GROUP0).destinations()), vc=vcs[1]), Push(0, 2),
               WriteBarrier()]
    receiver: list[Op] = [Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1)]
    receiver += [SemWait(1, EQ, 1)] if receiver_waits else []
    receiver += [Push(1, 2), AtomicBarrier()]
    flag_only = [ep(C, Engine.READER, SemSet(1, 0), SemInc(0, A, 1), SemWait(1, EQ, 1), AtomicBarrier())] if wide else []
    words = (A, B, C) if wide else (A, B)
    return prog(
        ep(A, Engine.READER, SemSet(1, 1), *sender),
        ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)),
        ep(B, Engine.READER, *receiver),
        ep(B, Engine.COMPUTE, Wait(1, 2), Pop(1, 2)),
        *flag_only,
        buffers=(buf(0, A, cb=0), buf(1, B, cb=0)),
        sems=(sem(0, *words), sem(1, *words)),
        groups=(GROUP0, *([flag_group] if flag_group is not None else [])),
        tensors=(IN,),
        target=target,
    )


def test_multicast_protocol_runs_clean() -> None:
    for target in (WORMHOLE, BLACKHOLE, UNORDERED):
        r = simulate(mcast_program(target))
        assert (r.status, r.violations) == ("terminated", ()), r.text()
        assert r.sems == {(0, A): 0, (0, B): 0, (1, A): 1, (1, B): 1}


def _to_send(flush: bool) -> list[Transition]:
    """Receiver reserves, resets its flag and increments; the increment lands; the sender reads (the read lands)
    and runs through its McastSend (and, without a flush, its McastSetValid)."""
    head = [Transition("step", 2)] * 3 + [Transition("land", 2, 0)] + [Transition("step", 0)] * 3
    return head + [Transition("land", 0, 0)] + [Transition("step", 0)] * (4 if flush else 5)


def test_multicast_leaves_then_lands_and_barriers_track_each_stage() -> None:
    p = mcast_program()
    it = Interp(p)
    s = it.initial()
    for t in _to_send(flush=True):
        s = it.fire(s, t)
    assert it.position(s, 0) == Position(RA, (7,))  # at the Flush, the McastSend issued
    assert it.enabled(s) == [Transition("leave", 0, 0)]
    assert it.block_detail(s, 0) == "waits for 1 write(s)/multicast(s) to leave the source"
    s = it.fire(s, Transition("leave", 0, 0))
    assert it.can_step(s, 0)  # Flush: the data left
    assert Transition("land", 0, 0, 1) in it.enabled(s)
    s = it.fire(s, Transition("step", 0))  # Flush
    s = it.fire(s, Transition("step", 0))  # McastSetValid issued
    # Wormhole orders multicasts: the flag cannot land before the data at (1,0).
    assert [t for t in it.enabled(s) if t.engine == 0] == [Transition("step", 0), Transition("land", 0, 0, 1),
                                                           Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))
    assert Transition("land", 0, 1, 3) not in it.enabled(s)  # word 3 is sem1@(1,0)
    s = it.fire(s, Transition("land", 0, 0, 1))
    assert s.landed == [0, 0b11]  # pages 0 and 1 of b1 landed, not yet published
    assert Transition("land", 0, 0, 3) in it.enabled(s)  # the flag is now first in flight


def test_unordered_target_lets_the_flag_land_first() -> None:
    p = mcast_program(UNORDERED, flush=False)
    it = Interp(p)
    s = it.initial()
    for t in _to_send(flush=False):
        s = it.fire(s, t)
    assert it.position(s, 0) == Position(RA, (8,))  # at the Push: data and flag issued
    lands = [t for t in it.enabled(s) if t.kind != "step"]
    assert lands == [Transition("leave", 0, 0), Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))  # the flag leaves first and moves ahead of the data
    assert [t for t in it.enabled(s) if t.kind != "step"] == [Transition("land", 0, 0, 3), Transition("leave", 0, 1)]
    s = it.fire(s, Transition("leave", 0, 1))
    # Once on the network they keep the order they left in: the data cannot land at (1,0) before the flag.
    assert [t for t in it.enabled(s) if t.kind != "step"] == [Transition("land", 0, 0, 3)]


def test_set_valid_reads_the_word_when_it_leaves() -> None:
    p = prog(ep(A, Engine.READER, SemSet(0, 1), McastSetValid(0, 0, 1), SemSet(0, 2), WriteBarrier()),
             ep(B, Engine.READER, SemSet(0, 0), SemWait(0, GE, 1)), sems=(sem(0, A, B),),
             groups=(Group(0, A, (1, 0, 1, 0)),))
    it = Interp(p)
    s = it.initial()
    s = it.fire(s, Transition("step", 1))  # receiver resets its word
    s = it.fire(s, Transition("step", 0))
    s = it.fire(s, Transition("step", 0))  # flag issued
    s, vs = it.step(s, Transition("step", 0))  # the source changes before it left
    assert [where(v) for v in vs] == [("async-source-reuse", RA, (2,), ())]
    s = it.fire(s, Transition("leave", 0, 0))
    assert it.describe(s, Transition("land", 0, 0, 1)) == (
        "(0,0).reader's mcast_set_valid(sem0, g0, 1 dests) (issued at ops[1]) lands: sem0@(1,0) 0 -> 2")
    s = it.fire(s, Transition("land", 0, 0, 1))
    assert s.words == [2, 2]


def test_async_flag_overtake_on_unordered_target_only() -> None:
    v = only(simulate(mcast_program(UNORDERED, flush=False)))
    assert where(v) == ("async-flag-overtake", RA, (7,), ())
    assert v.message == ("mcast_set_valid(sem1, g0) may overtake the mcast_send of b0: no flush/write_barrier "
                         "between them and blackhole_cmd_fifo does not order writes")
    assert simulate(mcast_program(WORMHOLE, flush=False)).violations == ()


def test_seeded_runs_reach_the_same_end() -> None:
    for seed in range(5):
        r = simulate(mcast_program(), seed=seed)
        assert (r.status, r.violations) == ("terminated", ())



def test_mcast_slot_free_pages_and_write_offset() -> None:
    g = (Group(0, A, (1, 0, 1, 0)),)
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0))
    # The receiver publishes its slot before the data comes: its ring is full when the data lands.
    p = prog(ep(A, Engine.READER, Reserve(0, 4), FillTiles(0, 4, drain=True), McastSend(0, 4, 0, 1), WriteBarrier(), Push(0, 4)),
             ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)),
             ep(B, Engine.READER, Reserve(1, 4), Push(1, 4)), buffers=bufs, groups=g)
    r = simulate(p)
    # (b1's pages left at the end fault nothing: the launch's end resets the buffer.)
    assert [where(v) for v in r.violations] == [("mcast-publish-early", RB, (1,), ()), ("mcast-slot", RA, (2,), ())]
    assert r.violations[1].message == ("mcast_send of 4 pages lands in b1 at (1,0) 0 pages past its write pointer but "
                                       "b1 has only 0 free pages (it overwrites page 0, pushed and not popped)")
    # The sender's ring is one push ahead of the receiver's: the data lands on free pages past the receiver's write
    # pointer (no fault: the hardware writes an address), but the pages the receiver publishes never got it.
    p2 = prog(ep(A, Engine.READER, Reserve(0, 4), FillTiles(0, 4, drain=True), Push(0, 2), McastSend(0, 2, 0, 1), WriteBarrier(),
                 Push(0, 2)),
              ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)),
              ep(B, Engine.READER, Reserve(1, 2)), ep(B, Engine.WRITER, ReadBarrier()), buffers=bufs, groups=g)
    assert simulate(p2).violations == ()
    p3 = attrs.evolve(p2, programs=(*p2.programs[:2], ep(B, Engine.READER, Reserve(1, 2), ReadBarrier(), Push(1, 2)),
                                    ep(B, Engine.COMPUTE, Wait(1, 2), Pop(1, 2))))
    assert set(explore(p3).rules()) == {R.MCAST_PUBLISH_EARLY}


def test_mcast_publish_early() -> None:
    r = simulate(mcast_program(receiver_waits=False))
    v = r.violations[0]
    assert where(v) == ("mcast-publish-early", RB, (3,), ())
    assert v.message == "push(b1, 2) publishes pages [0, 2) but no remote write has landed in page 0 of b1 yet"


# ---------------------------------------------------------------------------------------------- explicit places


def exchange(dst: bool = True, offset: int = 0, barrier: bool = True, twice: bool = False) -> Program:
    """(0,0)'s reader fills a page of its b0 and writes it from the front into (1,0)'s cb 2 (``McastSend`` on the
    one-core group of (1,0), ``dst`` b2: its own copy of cb 2, which it reserves, so the address is its write pointer
    of b2 plus ``offset``), waits for the write to land, then increments (1,0)'s word; (1,0) reserves its cb 2, waits
    for the increment and publishes the page for its compute. ``dst`` False: the page goes to cb 0 of (1,0) at the
    source's own address. ``twice``: the sender writes the page a second time into the same slot before the
    receiver publishes it. ``barrier`` False: a flush instead of the barrier before the increment."""
    send: list[Op] = [Reserve(0, 1), FillTiles(0, 1, drain=True), Push(0, 1), Wait(0, 1), Reserve(2, 1)]
    send += [McastSend(0, 1, 0, 1, front=True, dst=2 if dst else None, offset=offset)] * (2 if twice else 1)
    send += [WriteBarrier() if barrier else Flush(), SemInc(0, B, 1), AtomicBarrier(), Pop(0, 1), Push(2, 1)]
    if not barrier:
        send.append(WriteBarrier())
    into = 3 if dst else 1
    recv = [Reserve(into, 1), SemWait(0, EQ, 1), SemSet(0, 0), Push(into, 1)]
    drain = [Wait(into, 1), AcquireAcc(1, "bf16"), Compute("copy", 1, (Operand(into, 1),)), ReleaseAcc(),
             Pop(into, 1)]
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0), buf(2, A, cb=2), buf(3, B, cb=2))
    p = prog(ep(A, Engine.READER, *send), ep(B, Engine.READER, *recv), ep(B, Engine.COMPUTE, *drain),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B),))
    at = [WORMHOLE.reserved_base, WORMHOLE.reserved_base]  # each site's buffers one after another
    memory = []
    for b in bufs:
        size = b.capacity * WORMHOLE.tile_bytes[b.dtype]
        memory.append(BufferAt(b.id, at[b.site.x], size))
        at[b.site.x] += size
    return attrs.evolve(p, memory=tuple(memory))


def test_a_remote_write_lands_in_dst_at_the_senders_write_pointer_of_it() -> None:
    """With ``dst`` the data lands in the receiver's buffer of dst's cb index, at the sender's write pointer of its
    own dst; the receiver publishes pages that landed. The sender is dst's producer (its pointer is the address)."""
    p = exchange()
    it = Interp(p)
    r = simulate(p)
    assert (r.status, r.violations) == ("terminated", ())
    assert r.pushed[3] == 1
    assert explore(p).rules() == []
    assert it._mcast_bufs == {(2, 0): (3,)}


def test_an_offset_moves_the_landing_past_the_write_pointer() -> None:
    """``offset`` 1: the page lands one page past the receiver's write pointer, so the page the receiver publishes
    never landed (``mcast-publish-early``, per page: a count of landed pages would see one page landed and one
    published)."""
    p = exchange(offset=1)
    assert validate(p) == []
    assert set(simulate(p).rules()) == {R.MCAST_PUBLISH_EARLY}
    (why,) = validate(exchange(offset=4))
    assert "lands 1 pages 4 pages past its address, past the end of the 4-page ring of cb 2" in str(why)


def test_two_landings_in_one_slot_before_it_is_published() -> None:
    """Without a push of dst between its two writes the sender's address does not move: the second landing writes
    the page the first filled before the receiver published it (``mcast-slot``), found by the interpreter and by the
    checker's static scan of the sender (refuted, replayed)."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = exchange(twice=True)
    v = next(v for v in simulate(p).violations if v.rule == R.MCAST_SLOT)
    assert v.message == ("mcast_send of 1 pages lands in b3 at (1,0) on page 0, which an earlier landing filled and b3 "
                         "has not published yet")
    report = certify(p)
    slot = next(r for r in report.results if r.name == "mcast-slot:(0,0).reader:[6]")
    assert slot.verdict is Verdict.REFUTED
    assert slot.counterexample is not None
    assert "the landing of its multicast at [5]" in slot.reason


def test_a_push_between_two_landings_moves_the_first_behind_the_pointer() -> None:
    """Two writes of a 2-page ring with a push of one page of the sender's copy between them: the first write's page
    is behind the pointer once pushed, so the second lands on a fresh page (no overlap: the scan keeps the first
    landing's leaf while it shifts it, then drops it)."""
    from verispatial.certify.reach import analyse
    from verispatial.families.multicast.encoding import _landing_twice

    p = exchange()
    a = analyse(p)
    sends = [lf for v in a.views.values() for lf in v.leaves if isinstance(lf.op, McastSend)]
    send = list(p.programs[0].ops)
    i = next(k for k, x in enumerate(send) if isinstance(x, McastSend))
    twice = (*send[:i + 1], Push(2, 1), Reserve(2, 1), send[i], *send[i + 1:])
    q = attrs.evolve(p, programs=(attrs.evolve(p.programs[0], ops=twice), *p.programs[1:]))
    assert _landing_twice(a, sends) == {}
    qa = analyse(q)
    assert _landing_twice(qa, [lf for v in qa.views.values() for lf in v.leaves if isinstance(lf.op, McastSend)]) == {}


def test_the_exchange_proves_and_the_increment_needs_the_barrier() -> None:
    """The correct exchange proves every obligation (the page published only once a write barrier of the sender
    passed over it); with a flush instead of the barrier before the increment, ``async-inc-overtake`` is refuted
    at the increment and the publication is not proved."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    good = certify(exchange())
    assert [r.name for r in good.results if r.verdict is not Verdict.PROVED] == []
    bad = exchange(barrier=False)
    assert findings(bad) == [(R.ASYNC_INC_OVERTAKE, RA, (7,))]
    # The early increment lets (1,0) publish before the page landed, which then finds its write pointer moved.
    assert set(explore(bad).rules()) == {R.ASYNC_INC_OVERTAKE, R.MCAST_PUBLISH_EARLY, R.MCAST_SLOT}
    report = certify(bad)
    assert {r.name for r in report.results if r.verdict is Verdict.REFUTED} >= {"async-inc-overtake:(0,0).reader:[7]"}
    assert all(r.verdict is not Verdict.PROVED for r in report.results if r.name.startswith("mcast-publish:"))


def test_a_landing_overlapping_another_engines_is_not_decided() -> None:
    """Two engines whose writes land in one buffer at overlapping offsets: which lands first is not decided by the
    checker (never proved); a run from launch in which each lands on the page the other's filled refutes that
    multicast's ``mcast-slot``, at its own op (certify/witness.py), as the explorer finds."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    c = Site(2, 0)
    bufs = (buf(0, A, cb=0), buf(1, B, cb=0), buf(2, c, cb=0))
    send = (Reserve(0, 1), FillTiles(0, 1, drain=True), McastSend(0, 1, 0, 1), WriteBarrier(), SemInc(0, B, 1), AtomicBarrier(),
            Push(0, 1))
    p = prog(ep(A, Engine.READER, *send), ep(c, Engine.READER, *(attrs.evolve(x, buf=2) if isinstance(x, (
        Reserve, Push)) else FillTiles(2, 1, drain=True) if isinstance(x, FillTiles) else McastSend(2, 1, 1, 1)
        if isinstance(x, McastSend) else x for x in send)),
        ep(B, Engine.READER, Reserve(1, 1), SemWait(0, GE, 2), SemSet(0, 0), Push(1, 1)),
        buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)), Group(1, c, (1, 0, 1, 0))), sems=(sem(0, B),))
    assert validate(p) == []
    report = certify(p)
    for eng in ("(0,0).reader", "(2,0).reader"):
        r = next(x for x in report.results if x.name == f"mcast-slot:{eng}:[2]")
        assert r.verdict is Verdict.REFUTED, r
        assert r.counterexample is not None
        v = r.counterexample["replay"]["violation"]
        assert (v["rule"], v["position"]["engine"], v["position"]["path"]) == (R.MCAST_SLOT, eng, [2])
    assert R.MCAST_SLOT in set(explore(p).rules())


# ---------------------------------------------------------------------------------------------- landing past the pointer


def blocks(offsets: tuple[int, ...] = (0, 1), own_page: bool = False, pushes: int = 2, cap: int = 2) -> Program:
    """The sharded layernorm's result multicast in small (reader_mcast_sender_unary_sharded_ln.cpp:270-282,
    reader_mcast_receiver_unary_sharded_ln.cpp:254-261, ttnn 0.81.1): (0,0)'s reader reserves ``len(offsets)`` pages
    of b0 and sends page ``k`` at ``offsets[k]`` past its write pointer, a write barrier and an increment of (1,0)'s
    word after each, then pushes them; (1,0)'s reader, per page, reserves one page of b1, waits for the count (at
    most the pages sent) and pushes it (``pushes`` pages in all), so its write pointer runs ahead of the sender's.
    ``own_page``: (1,0)'s reader first publishes a page of its own that its compute pops only at the end."""
    send: list[Op] = [Reserve(0, len(offsets)), FillTiles(0, len(offsets), drain=True)]
    for off in offsets:
        send += [McastSend(0, 1, 0, 1, offset=off), WriteBarrier(), SemInc(0, B, 1), AtomicBarrier()]
    send.append(Push(0, len(offsets)))
    recv: list[Op] = [Reserve(1, 1), FillTiles(1, 1, drain=True), Push(1, 1)] if own_page else []
    for k in range(pushes):
        recv += [Reserve(1, 1), SemWait(0, GE, min(k + 1, len(offsets))), Push(1, 1)]
    recv.append(SemSet(0, 0))  # the word ends as it started (``balance-sem``)
    held = pushes + (1 if own_page else 0)
    bufs = (buf(0, A, cap=cap, cb=0), buf(1, B, cap=cap, cb=0))
    p = prog(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, Wait(0, len(offsets)), Pop(0, len(offsets))),
             ep(B, Engine.READER, *recv), ep(B, Engine.COMPUTE, *((Wait(1, held), Pop(1, held)) if held else ())),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B),))
    memory = [BufferAt(b.id, WORMHOLE.reserved_base, b.capacity * WORMHOLE.tile_bytes[b.dtype]) for b in bufs]
    return attrs.evolve(p, memory=tuple(memory))


def _slot_results(p: Program) -> list[Result]:
    from verispatial.driver.run import certify

    return [r for r in certify(p).results if r.name.startswith(f"{R.MCAST_SLOT}:")]


def _replayed(r: Result) -> bool:
    cex = r.counterexample or {}
    return bool(cex.get("replayed_by") or (cex.get("replay") or {}).get("replayed_by") or cex.get("kind") == "rule")


def test_a_landing_past_the_receivers_write_pointer_on_a_free_page_is_sound() -> None:
    """Block 1 lands one page past the sender's write pointer, which is where the receiver's write pointer already is
    once it pushed block 0 (or one page past it, before): a free page no landing holds, so no interleaving faults
    and the checker proves ``mcast-slot`` at both sends (the false alarm of the sharded layernorm)."""
    from verispatial.certify.report import Verdict

    p = blocks()
    assert validate(p) == []
    assert explore(p).rules() == []
    slots = _slot_results(p)
    assert [r.verdict for r in slots] == [Verdict.PROVED, Verdict.PROVED], slots


def test_a_landing_on_a_page_the_receiver_pushed_and_not_popped() -> None:
    """The receiver publishes a page of its own first: the sender's page 0 lands on it (pushed, not popped)."""
    from verispatial.certify.report import Verdict

    p = blocks(offsets=(0,), own_page=True, pushes=1)
    assert validate(p) == []
    found = explore(p).violation(R.MCAST_SLOT)
    assert found is not None
    assert found.violation.message == ("mcast_send of 1 pages lands in b1 at (1,0) 1 pages past its write pointer but "
                                       "b1 has only 1 free pages (it overwrites page 0, pushed and not popped)")
    (r,) = _slot_results(p)
    assert r.verdict is Verdict.REFUTED, r
    assert _replayed(r), r.counterexample


def test_a_landing_partly_outside_the_free_pages() -> None:
    """Two pages at offset 0 into a 2-page ring whose receiver holds one page of its own: the second page lands on
    it."""
    from verispatial.certify.report import Verdict

    bufs_p = blocks(offsets=(0,), own_page=True, pushes=1)
    send = [Reserve(0, 2), FillTiles(0, 2, drain=True), McastSend(0, 2, 0, 1), WriteBarrier(), SemInc(0, B, 1),
            AtomicBarrier(), Push(0, 2)]
    p = attrs.evolve(bufs_p, programs=(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)),
                                       *bufs_p.programs[2:]))
    assert validate(p) == []
    found = explore(p).violation(R.MCAST_SLOT)
    assert found is not None
    assert found.violation.message == ("mcast_send of 2 pages lands in b1 at (1,0) 1 pages past its write pointer but b1 has only 1 "
                         "free pages (it overwrites page 0, pushed and not popped)")
    (r,) = _slot_results(p)
    assert r.verdict is Verdict.REFUTED, r
    assert _replayed(r), r.counterexample


def test_two_blocks_landing_on_one_page_before_it_is_published() -> None:
    """Both blocks at offset 0 with no push of the sender between: the second lands on the page the first filled
    (the receiver may not have published it yet)."""
    from verispatial.certify.report import Verdict

    p = blocks(offsets=(0, 0))
    assert validate(p) == []
    assert R.MCAST_SLOT in set(explore(p).rules())
    slots = _slot_results(p)
    assert Verdict.REFUTED in {r.verdict for r in slots}
    assert Verdict.PROVED not in {r.verdict for r in slots[1:]}
    assert all(_replayed(r) for r in slots if r.verdict is Verdict.REFUTED)


def test_a_receiver_a_whole_ring_behind_is_not_proved_by_the_congruence() -> None:
    """A one-page ring: the sender sends two pages with a push between and no flow control; the receiver publishes
    only after both increments, so the second lands on the first, unpublished (``mcast-slot`` in the interpreter).
    Its write pointer is congruent with the sender's modulo 1 and has the room, so the congruence query alone proved
    it (before the window question); the window refutes it, replayed."""
    from verispatial.certify.report import Verdict

    send: list[Op] = []
    for _ in range(2):
        send += [Reserve(0, 1), FillTiles(0, 1, drain=True), McastSend(0, 1, 0, 1), WriteBarrier(), SemInc(0, B, 1),
                 AtomicBarrier(), Push(0, 1)]
    bufs = (buf(0, A, cap=1, cb=0), buf(1, B, cap=1, cb=0))
    p = prog(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1), Wait(0, 1), Pop(0, 1)),
             ep(B, Engine.READER, Reserve(1, 1), SemWait(0, GE, 2), SemSet(0, 0), Push(1, 1)),
             ep(B, Engine.COMPUTE, Wait(1, 1), Pop(1, 1)),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B),))
    p = attrs.evolve(p, memory=tuple(BufferAt(b.id, WORMHOLE.reserved_base, WORMHOLE.tile_bytes[b.dtype])
                                     for b in bufs))
    assert validate(p) == []
    found = explore(p).violation(R.MCAST_SLOT)
    assert found is not None
    assert found.violation.message == ("mcast_send of 1 pages lands in b1 at (1,0) on page 0, which an earlier "
                                       "landing filled and b1 has not published yet")
    first, second = _slot_results(p)
    assert first.verdict is Verdict.PROVED
    assert second.verdict is Verdict.REFUTED, second
    assert _replayed(second), second.counterexample


def test_a_push_publishing_a_page_no_landing_filled() -> None:
    """One page lands; the receiver publishes two: ``mcast-publish-early`` at its second push, in the interpreter and
    refuted (replayed) by the checker."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = blocks(offsets=(0,), pushes=2)
    assert validate(p) == []
    assert set(explore(p).rules()) >= {R.MCAST_PUBLISH_EARLY}
    assert R.MCAST_SLOT not in set(explore(p).rules())
    pub = [r for r in certify(p).results if r.name.startswith(f"{R.MCAST_PUBLISH}:")]
    assert Verdict.REFUTED in {r.verdict for r in pub}, pub
    assert all(_replayed(r) for r in pub if r.verdict is Verdict.REFUTED)


# ---------------------------------------------------------------------------------------------- every chain


def test_each_chain_finds_the_flag_that_may_overtake_its_data() -> None:
    """``async-flag-overtake``: with no Flush between the data multicast and its flag (ops[7]), a target whose writes
    are not ordered (Blackhole with command-buffer FIFOs) may land the flag first. The interpreter reports it at the
    flag, the per-engine rules find it there and the Promela model asserts it there; on Wormhole, which keeps writes
    ordered, no chain does."""
    m = mcast_program(UNORDERED, flush=False)
    assert [where(v) for v in simulate(m).violations] == [(R.ASYNC_FLAG_OVERTAKE, RA, (7,), ())]
    assert findings(m) == [(R.ASYNC_FLAG_OVERTAKE, RA, (7,))]
    assert asserted(to_promela(m), R.ASYNC_FLAG_OVERTAKE) == ["O_0_7"]
    ordered = mcast_program(WORMHOLE, flush=False)
    assert (simulate(ordered).violations, findings(ordered)) == ((), [])
    assert asserted(to_promela(ordered), R.ASYNC_FLAG_OVERTAKE) == []


# ---------------------------------------------------------------------------------------------- virtual channels


def test_a_flag_on_another_virtual_channel_than_its_data_may_land_first_after_a_flush() -> None:
    """Across virtual channels the NoC keeps no order (tt-metal #55555): on Wormhole, with the data multicast on VC 4
    and the flag on VC 1, the flag may leave before the data, and once both left (the Flush saw the data leave) it may
    still land first. On one channel neither happens (test above)."""
    p = mcast_program(flush=True, vcs=(4, 1))
    it = Interp(p)
    s = it.initial()
    for t in _to_send(flush=True):
        s = it.fire(s, t)
    s = it.fire(s, Transition("leave", 0, 0))
    s = it.fire(s, Transition("step", 0))  # Flush: the data left
    s = it.fire(s, Transition("step", 0))  # McastSetValid issued
    s = it.fire(s, Transition("leave", 0, 1))
    assert Transition("land", 0, 1, 3) in it.enabled(s)  # the flag lands on sem1@(1,0) before the data
    unflushed = mcast_program(flush=False, vcs=(4, 1))
    it = Interp(unflushed)
    s = it.initial()
    for t in _to_send(flush=False):
        s = it.fire(s, t)
    assert [t for t in it.enabled(s) if t.kind != "step"] == [Transition("leave", 0, 0), Transition("leave", 0, 1)]


def _not_proved(p: Program) -> dict[str, tuple[str, bool]]:
    """Each result of the checker that is not proved, but for the memory map's (these programs have none): its
    verdict and whether the interpreter replayed its counterexample."""
    from verispatial.driver.run import certify

    return {r.name: (r.verdict.value, _replayed(r)) for r in certify(p).results
            if r.verdict.value != "proved" and not r.name.startswith(("memory-map", f"{R.MCAST_ADDRESS}:"))}


def test_a_flag_on_another_virtual_channel_needs_a_write_barrier_after_its_data() -> None:
    """Data multicast on VC 4 (``noc_async_write_multicast``), flag on VC 1 (``noc_semaphore_set_remote``), to the
    same core on Wormhole. With nothing between, ``async-flag-overtake`` is refuted at the flag and the receiver may
    publish pages no data landed in (a run of the interpreter: the flag landed first). A Flush between is not enough
    across channels (it sees the data leave, not land: ``NIU_MST_NONPOSTED_WR_REQ_SENT``); a WriteBarrier is
    (``NIU_MST_WR_ACK_RECEIVED``), and so is one channel for both, which Wormhole keeps in order."""
    overtake = {f"{R.ASYNC_FLAG_OVERTAKE}:{RA}:[7]": ("refuted", True),
                f"{R.MCAST_SLOT}:{RA}:[6]": ("refuted", True), f"{R.MCAST_PUBLISH}:{RB}:[4]": ("refuted", True)}
    assert _not_proved(mcast_program(flush=False, vcs=(4, 1))) == overtake
    flushed = _not_proved(mcast_program(flush=True, vcs=(4, 1)))
    assert flushed[f"{R.ASYNC_FLAG_OVERTAKE}:{RA}:[8]"] == ("refuted", True)
    assert flushed[f"{R.MCAST_PUBLISH}:{RB}:[4]"] == ("refuted", True)
    assert _not_proved(mcast_program(flush=True, vcs=(4, 1), between=WriteBarrier())) == {}
    assert _not_proved(mcast_program(flush=False, vcs=(4, 4))) == {}
    assert _not_proved(mcast_program(flush=False, vcs=(None, None))) == {}


def test_each_chain_finds_the_flag_on_another_virtual_channel() -> None:
    """The interpreter, the per-engine rules and the Promela model find the flag on VC 1 after the data on VC 4 at
    the flag (ops[7]) with nothing or a Flush between, none of them with a WriteBarrier between."""
    for flush, between, at in ((False, Flush(), (7,)), (True, Flush(), (8,))):
        m = mcast_program(flush=flush, vcs=(4, 1), between=between)
        v = only(simulate(m))
        assert where(v) == (R.ASYNC_FLAG_OVERTAKE, RA, at, ())
        assert v.message == ("mcast_set_valid(sem1, g0) may overtake the mcast_send of b0: no write_barrier between "
                             "them and it travels on VC 1 to (1,0)-(1,0), b0's on VC 4 to (1,0)-(1,0): another "
                             "channel (no order across channels)")
        assert findings(m) == [(R.ASYNC_FLAG_OVERTAKE, RA, at)]
        assert asserted(to_promela(m), R.ASYNC_FLAG_OVERTAKE) == ["O_0_" + "_".join(map(str, at))]
    barrier = mcast_program(flush=True, vcs=(4, 1), between=WriteBarrier())
    assert (simulate(barrier).violations, findings(barrier)) == ((), [])
    assert asserted(to_promela(barrier), R.ASYNC_FLAG_OVERTAKE) == ["O_0_8"]  # asserted, holds: mw_mask is clear


def test_the_overtake_reason_names_the_data_its_landing_order_and_what_differs() -> None:
    """A new user's find: the reason said "the data on another channel or to another rectangle" whichever it was.
    It names the data op, the data's channel and rectangle beside the flag's, and which of the two differs."""
    from verispatial.driver.run import certify

    def reason(vcs: tuple[int | None, int | None]) -> str:
        (r,) = [r for r in certify(mcast_program(flush=False, vcs=vcs)).results
                if r.name.startswith(f"{R.ASYNC_FLAG_OVERTAKE}:") and r.verdict.value == "refuted"]
        return r.reason

    assert ("it travels on VC 1 to (1,0)-(1,0), the data (mcast_send at ops[6]) on VC 4 to (1,0)-(1,0), another "
            "channel (no order across channels), and there is no write barrier between them") in reason((4, 1))
    assert "it travels on the default channel to (1,0)-(1,0), the data (mcast_send at ops[6]) on VC 4" in reason(
        (4, None))


def _two_receivers(order: tuple[int, ...], flag_vc: int = 4) -> Program:
    """tests/data/mcast_two_receivers.json: (0,0) sends each block to (1,0) and to (2,0), each by a multicast to a
    one-core rectangle on VC 4, and sets each receiver's flag by one more (ops 5-8 of its loop: data 1, data 2,
    flag 1, flag 2), its sender's ops 5-8 put in ``order`` and flag 1 on ``flag_vc``."""
    import json
    from pathlib import Path

    from verispatial.ir.serialize import program_from_dict

    d = json.loads((Path(__file__).resolve().parent.parent / "data" / "mcast_two_receivers.json").read_text())
    body = d["programs"][0]["ops"][1]["body"]
    body[7]["vc"] = flag_vc
    body[5:9] = [body[5 + i] for i in order]
    return program_from_dict(d)


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (0, 2, 1, 3), (1, 0, 3, 2)])
def test_each_flag_after_its_own_receivers_data_proves_whatever_goes_to_the_other(order: tuple[int, ...]) -> None:
    """A new user's find: data 1, data 2, flag 1, flag 2 (one channel, each flag to its own data's core) failed to
    prove (``mcast-publish``: candidate not replayed) where data 1, flag 1, data 2, flag 2 proved. A write to the
    other core lands nothing at this one: the flag is paired with the data before it that reaches its core."""
    assert _not_proved(_two_receivers(order)) == {}


def test_a_flag_before_its_own_data_or_on_another_channel_stays_refuted() -> None:
    """The broken neighbours: flag 1 issued before data 1 (data 2, flag 1, data 1, flag 2), and flag 1 on VC 1
    after both data (another channel than data 1's): each refuted with a run the interpreter replayed."""
    early = _not_proved(_two_receivers((1, 2, 0, 3)))
    assert ("refuted", True) in early.values(), early
    assert any(n.startswith(f"{R.MCAST_PUBLISH}:") for n, v in early.items() if v == ("refuted", True)), early
    other = _not_proved(_two_receivers((0, 1, 2, 3), flag_vc=1))
    assert other[f"{R.ASYNC_FLAG_OVERTAKE}:(0,0).reader:[1, 7]"] == ("refuted", True), other


def test_the_explicit_state_search_agrees_on_virtual_channels() -> None:
    """Every interleaving (``explore``): the flag on another channel reaches ``mcast-publish-early`` at the receiver's
    push unless a WriteBarrier separates it from its data; on one channel no run does."""
    def rules(p: Program) -> set[str]:
        return {f.violation.rule for f in explore(p).violations}

    assert R.MCAST_PUBLISH_EARLY in rules(mcast_program(flush=True, vcs=(4, 1)))
    assert R.MCAST_PUBLISH_EARLY not in rules(mcast_program(flush=True, vcs=(4, 1), between=WriteBarrier()))
    assert rules(mcast_program(flush=False, vcs=(4, 4))) == set()


# ---------------------------------------------------------------------------------------------- destinations

def wide_flag_program(flag_rect: tuple[int, int, int, int] = (1, 0, 2, 0), between: Op | None = None) -> Program:
    """(0,0) multicasts b0 into (1,0)'s b1 (group 0, rectangle (1,0)-(1,0)), then its flag on the same channel to
    group 1, ``flag_rect``: by default wider, (1,0)-(2,0), so the flag also reaches (2,0), which only waits for it;
    ``between``: the op between the data multicast and the flag (none by default)."""
    return mcast_program(flush=between is not None, between=between, flag_rect=flag_rect)


def test_a_flag_to_a_wider_rectangle_than_its_data_may_land_first() -> None:
    """One engine's writes on one virtual channel land at a core in issue order only when they go to the same
    destinations (ttnn 0.81.1 ``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc/noc.h:23-30``: "for commands targeting
    different destinations, it is not possible to provide this guarantee"; tt-metal #17294). On Wormhole the flag to
    (1,0)-(2,0) after the data to (1,0) alone, both on the default channel, may land at (1,0) first: a run of the
    interpreter where both left and the flag is the one to land at (1,0)."""
    p = wide_flag_program(between=Flush())
    assert validate(p) == []
    it = Interp(p)
    s = it.initial()
    for t in [Transition("step", 2)] * 3 + [Transition("land", 2, 0)] + [Transition("step", 4)] * 2 \
            + [Transition("land", 4, 0)] + [Transition("step", 0)] * 3 + [Transition("land", 0, 0)] \
            + [Transition("step", 0)] * 4:
        s = it.fire(s, t)
    assert it.position(s, 0) == Position(RA, (7,))  # at the Flush, the McastSend issued
    s = it.fire(s, Transition("leave", 0, 0))
    s = it.fire(s, Transition("step", 0))  # Flush: the data left
    s = it.fire(s, Transition("step", 0))  # McastSetValid issued
    s = it.fire(s, Transition("leave", 0, 1))
    flag_at_b = it.word_id[(1, B)]
    assert Transition("land", 0, 1, flag_at_b) in it.enabled(s)  # before the data at (1,0)
    assert Transition("land", 0, 0, 1) in it.enabled(s)


def test_a_flag_to_a_wider_rectangle_needs_a_write_barrier_after_its_data() -> None:
    """The checker refutes ``async-flag-overtake`` at the flag to the wider rectangle with nothing or only a Flush
    between it and the data (a Flush sees the data leave, not land), each with a counterexample the interpreter
    replays, and the receiver may publish pages no data landed in; a WriteBarrier between, or the flag to the data's
    own rectangle (Wormhole keeps that order), is proved."""
    for between, at in ((None, 7), (Flush(), 8)):
        p = wide_flag_program(between=between)
        assert [where(v) for v in simulate(p).violations] == [(R.ASYNC_FLAG_OVERTAKE, RA, (at,), ())]
        assert findings(p) == [(R.ASYNC_FLAG_OVERTAKE, RA, (at,))]
        assert asserted(to_promela(p), R.ASYNC_FLAG_OVERTAKE) == [f"O_0_{at}"]
        got = _not_proved(p)
        assert got[f"{R.ASYNC_FLAG_OVERTAKE}:{RA}:[{at}]"] == ("refuted", True)
        assert got[f"{R.MCAST_PUBLISH}:{RB}:[4]"] == ("refuted", True)
        assert {verdict for verdict, _ in got.values()} == {"refuted"}
    assert _not_proved(wide_flag_program(between=WriteBarrier())) == {}
    assert _not_proved(wide_flag_program(flag_rect=(1, 0, 1, 0))) == {}
    assert _not_proved(wide_flag_program(flag_rect=(1, 0, 1, 0), between=Flush())) == {}


def test_two_groups_with_one_rectangle_are_one_destination() -> None:
    """The landing order is the channel and the rectangle as coordinates (``landing_order``): the flag on a group of
    its own with the data's rectangle keeps behind the data on Wormhole (no finding in any chain); corners given the
    other way round name the same rectangle, a loopback group's rectangle is its rectangle."""
    same = wide_flag_program(flag_rect=(1, 0, 1, 0))
    assert (simulate(same).violations, findings(same)) == ((), [])
    assert asserted(to_promela(same), R.ASYNC_FLAG_OVERTAKE) == []
    groups = (Group(0, A, (1, 0, 2, 1)), Group(1, B, (2, 1, 1, 0)), Group(2, A, (1, 0, 2, 1), loopback=True),
              Group(3, A, (1, 0, 2, 0)))
    orders = [landing_order(groups, McastSetValid(0, g.id, 1, vc=4)) for g in groups]
    assert orders[:3] == [(4, (1, 0, 2, 1))] * 3
    assert orders[3] == (4, (1, 0, 2, 0))
    assert landing_order(groups, McastSend(0, 1, 0, 1)) == (None, (1, 0, 2, 1))


def test_writes_that_share_no_core_have_no_order_to_keep() -> None:
    """Only a core both writes reach sees an order (``may_reorder``): the flag to (2,0) after the data to (1,0) alone
    overtakes nothing (a matmul corner sender's row data and column flag), in the interpreter, the per-engine rules
    and the Promela model; to (1,0)-(2,0) it may overtake the data at (1,0)."""
    p = mcast_program(flush=False, flag_rect=(2, 0, 2, 0))
    assert R.ASYNC_FLAG_OVERTAKE not in {v.rule for v in simulate(p).violations}
    assert [f for f in findings(p) if f[0] == R.ASYNC_FLAG_OVERTAKE] == []
    assert asserted(to_promela(p), R.ASYNC_FLAG_OVERTAKE) == []
    groups = (Group(0, A, (1, 0, 1, 0)), Group(1, A, (2, 0, 2, 0)), Group(2, A, (1, 0, 2, 0)), Group(3, A, (0, 0, 1, 0)))
    data = McastSend(0, 1, 0, 1)
    assert not may_reorder(groups, data, McastSetValid(0, 1, 1))  # no core in common
    assert may_reorder(groups, data, McastSetValid(0, 2, 2))  # (1,0) in common, another rectangle
    assert may_reorder(groups, data, McastSetValid(0, 3, 1))  # the same one core, another rectangle
    assert may_reorder(groups, data, McastSetValid(0, 0, 1, vc=4))  # the same rectangle, another channel
    assert not may_reorder(groups, data, McastSetValid(0, 0, 1))


def test_the_explicit_state_search_agrees_on_destinations() -> None:
    """Every interleaving (``explore``): the flag to the wider rectangle reaches ``mcast-publish-early`` at (1,0)'s
    push unless a WriteBarrier separates it from its data."""
    def rules(p: Program) -> set[str]:
        return {f.violation.rule for f in explore(p).violations}

    assert R.MCAST_PUBLISH_EARLY in rules(wide_flag_program(between=Flush()))
    assert R.MCAST_PUBLISH_EARLY not in rules(wide_flag_program(between=WriteBarrier()))
    assert R.MCAST_PUBLISH_EARLY not in rules(wide_flag_program(flag_rect=(1, 0, 1, 0)))


def test_validate_refuses_a_virtual_channel_past_the_nocs() -> None:
    (why,) = validate(mcast_program(vcs=(16, None)))
    assert (why.engine, why.path) == (RA, (6,))
    assert why.rule.endswith("vc must be a NoC virtual channel in [0, 15] (or null: the default channel), got 16")


def test_the_family_tables_cover_the_family_op_classes() -> None:
    ops = {McastSend, McastSetValid}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops
    assert set(semantics.LANDINGS) == set(promela.LANDINGS) == set(promela.QUEUES) == ops
    assert SemIncMcast not in ops  # the increment multicast is the semaphore family's


# ------------------------------------------------------------------------------------------ pages already pushed


def pushed(offsets: tuple[int, ...] = (0, 1), behind: int = 2, reserve_again: bool = False,
           pushes_first: int | None = None) -> Program:
    """The sharded layernorm's result multicast as the vendor wrote it (reader_mcast_sender_unary_sharded_ln.cpp:
    267-282, ttnn 0.81.1): (0,0)'s reader fills and pushes ``len(offsets)`` pages of b0 (``pushes_first`` pages only,
    when given), then multicasts page ``k`` from ``offsets[k]`` past the address it took before the push
    (``behind`` pages before its write pointer), a write barrier and an increment of (1,0)'s word after each; its
    compute waits and pops them meanwhile. ``reserve_again``: the reader reserves a page of b0 again before the
    multicasts (the slot of page 0, once the compute popped it)."""
    n = len(offsets)
    first = n if pushes_first is None else pushes_first
    send: list[Op] = [Reserve(0, n), FillTiles(0, n, drain=True), Push(0, first)]
    send += [Reserve(0, 1)] if reserve_again else []
    for off in offsets:
        send += [McastSend(0, 1, 0, 1, offset=off, behind=behind), WriteBarrier(), SemInc(0, B, 1), AtomicBarrier()]
    send += [FillTiles(0, 1, drain=True), Push(0, 1)] if reserve_again else []
    send += [Push(0, n - first)] if first < n else []
    popped = n + (1 if reserve_again else 0)
    recv: list[Op] = []
    for k in range(n):
        recv += [Reserve(1, 1), SemWait(0, GE, k + 1), Push(1, 1)]
    recv.append(SemSet(0, 0))
    bufs = (buf(0, A, cap=2, cb=0), buf(1, B, cap=2, cb=0))
    p = prog(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, Wait(0, popped), Pop(0, popped)) if popped <= 2 else
             ep(A, Engine.COMPUTE, Wait(0, n), Pop(0, n), Wait(0, 1), Pop(0, 1)),
             ep(B, Engine.READER, *recv), ep(B, Engine.COMPUTE, Wait(1, n), Pop(1, n)),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B),))
    memory = [BufferAt(b.id, WORMHOLE.reserved_base, b.capacity * WORMHOLE.tile_bytes[b.dtype]) for b in bufs]
    return attrs.evolve(p, memory=tuple(memory))


def _verdicts(p: Program, rule: str) -> list[Result]:
    from verispatial.driver.run import certify

    return [r for r in certify(p).results if r.name == rule or r.name.startswith(f"{rule}:")]


def test_a_multicast_of_pages_already_pushed_proves() -> None:
    """Push, then multicast the pushed pages block by block from the address taken before the push: the compute's
    pop in between changes no byte, so no interleaving faults, and every obligation proves."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = pushed()
    assert validate(p) == []
    assert explore(p).rules() == []
    bad = [r for r in certify(p).results if r.verdict is not Verdict.PROVED]
    assert bad == []


def test_a_multicast_of_a_page_not_yet_pushed_is_refuted_at_the_send() -> None:
    """Only one page pushed before the multicasts: the address two pages behind the write pointer names a page the
    reader never pushed (nothing says it was filled or published), refuted at the first send."""
    from verispatial.certify.report import Verdict

    p = pushed(behind=2, pushes_first=1)
    assert validate(p) == []
    found = explore(p).violation(R.MCAST_SOURCE_UNPUBLISHED)
    assert found is not None
    assert found.violation.position.path == (3,)
    (r,) = [x for x in _verdicts(p, R.MCAST_SOURCE_UNPUBLISHED) if x.verdict is not Verdict.PROVED]
    assert r.verdict is Verdict.REFUTED, r
    assert r.name == f"{R.MCAST_SOURCE_UNPUBLISHED}:(0,0).reader:[3]"
    assert _replayed(r), r.counterexample


def test_a_multicast_of_pages_whose_slot_was_reserved_again_is_refuted() -> None:
    """The reader reserves a page again (page 2: page 0's slot, free once the compute popped it) before it
    multicasts page 0: that slot is now its own to refill, so page 0's bytes are not what it pushed."""
    from verispatial.certify.report import Verdict

    p = pushed(reserve_again=True)
    assert validate(p) == []
    found = explore(p).violation(R.MCAST_SOURCE_UNPUBLISHED)
    assert found is not None
    assert "page 0's slot is reserved again" in found.violation.message
    rs = [x for x in _verdicts(p, R.MCAST_SOURCE_UNPUBLISHED) if x.verdict is not Verdict.PROVED]
    assert [(x.name, x.verdict) for x in rs] == [(f"{R.MCAST_SOURCE_UNPUBLISHED}:(0,0).reader:[4]", Verdict.REFUTED)]
    assert _replayed(rs[0]), rs[0].counterexample


def test_validate_places_pages_already_pushed() -> None:
    """``behind`` names pages before the write pointer: not with front or dst, the pages inside them, at most a ring."""
    base = pushed()
    def with_send(op: McastSend) -> Program:
        reader = base.programs[0]
        return attrs.evolve(base, programs=(attrs.evolve(reader, ops=(*reader.ops[:3], op)), *base.programs[1:]))

    msgs = [validate(with_send(McastSend(0, 1, 0, 1, front=True, behind=1)))[0].rule,
            validate(with_send(McastSend(0, 1, 0, 1, offset=1, behind=1)))[0].rule,
            validate(with_send(McastSend(0, 1, 0, 1, behind=3)))[0].rule]
    assert msgs == ["behind 1 names pages already pushed, before this engine's write pointer: not with front (the read "
                    "pointer) or dst (a landing at another buffer's write pointer)",
                    "sends pages [1, 2) past a pointer 1 pages behind the write pointer: the source pages must be "
                    "pages already pushed (offset + pages <= behind)",
                    "behind 3 pages is more than the 2-page ring of b0 holds pushed"]


def test_promela_refuses_pages_already_pushed_by_name() -> None:
    import pytest

    from verispatial.petri.promela import PromelaUnsupported

    with pytest.raises(PromelaUnsupported, match="multicasts pages it already pushed"):
        to_promela(pushed())


def test_the_behind_mutants_are_refused_or_still_correct() -> None:
    """``behind+1``/``behind-1`` of the pushed-pages multicast (``mutate.py``): the address one page further back is
    past the 2-page ring (validate refuses it); one page nearer sends page 1 where page 0 was meant, so two landings
    fall on one page before the receiver publishes it — refused, never proved while broken."""
    from collections import Counter

    from verispatial.mutate import judge, mutants

    ms = [m for m in mutants(pushed()) if m.kind.startswith("behind")]
    assert Counter(m.kind for m in ms) == Counter({"behind+1": 2, "behind-1": 1})
    outs = [judge(m) for m in ms]
    assert {o.status for o in outs if o.mutant.kind == "behind+1"} == {"rejected"}
    assert [o.status for o in outs if o.mutant.kind == "behind-1"] == ["refuted"], [(o.mutant.what, o.detail)
                                                                               for o in outs]


def test_reserving_pages_already_pushed_again_before_the_multicast_left() -> None:
    """The reader pushes two pages, multicasts them (``behind`` 2) and reserves the ring again before its write
    barrier: once the compute popped them, the reserve hands their slots to the next fill while the multicast may
    still be reading them — ``async-source-reuse`` at the reserve, refuted by the checker and replayed (the consumer's
    pops before it are no reuse: pages already pushed are a back multicast's source)."""
    from verispatial.certify.report import Verdict

    send: list[Op] = [Reserve(0, 2), FillTiles(0, 2, drain=True), Push(0, 2), McastSend(0, 2, 0, 1, behind=2), Reserve(0, 2),
                      FillTiles(0, 2, drain=True), WriteBarrier(), SemInc(0, B, 1), AtomicBarrier(), Push(0, 2)]
    recv: list[Op] = [Reserve(1, 2), SemWait(0, GE, 1), Push(1, 2), SemSet(0, 0)]
    bufs = (buf(0, A, cap=2, cb=0), buf(1, B, cap=2, cb=0))
    p = prog(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2), Wait(0, 2), Pop(0, 2)),
             ep(B, Engine.READER, *recv), ep(B, Engine.COMPUTE, Wait(1, 2), Pop(1, 2)),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B),))
    p = attrs.evolve(p, memory=tuple(BufferAt(b.id, WORMHOLE.reserved_base, b.capacity * WORMHOLE.tile_bytes[b.dtype])
                                     for b in bufs))
    assert validate(p) == []
    found = explore(p).violation(R.ASYNC_SOURCE_REUSE)
    assert found is not None
    assert found.violation.position.path == (4,)
    rs = [x for x in _verdicts(p, R.ASYNC_SOURCE_REUSE) if x.name.endswith(":(0,0).reader:[4]")]
    assert [x.verdict for x in rs] == [Verdict.REFUTED], rs
    assert _replayed(rs[0]), rs[0].counterexample


def two_pages_behind_from_slot_2(split: bool) -> Program:
    """(0,0)'s reader fills and pushes pages of b0 (a 3-page ring) one by one, multicasting each of the first two from
    the address it took before its push (``behind`` 1), then pushes pages 2 and 3 (slots 2 and 0) and, once (1,0) is
    ready, multicasts both from the address it took before them (``behind`` 2): slot 2 plus two pages, past the
    ring's end — that address is ``get_write_ptr`` plus bytes, which nothing wraps (only ``cb_push_back`` wraps the
    write pointer, at the limit: ``dataflow_api.h``). ``split``: page 2 from ``behind`` 2 and page 3 from ``behind``
    1, each from the address taken before its own push."""
    one: list[Op] = [Reserve(0, 1), FillTiles(0, 1, drain=True), Push(0, 1)]
    ann: list[Op] = [WriteBarrier(), SemInc(0, B, 1), AtomicBarrier()]
    send = [*one, McastSend(0, 1, 0, 1, behind=1), *ann, *one, McastSend(0, 1, 0, 1, behind=1), *ann, *one, *one,
            SemWait(1, GE, 1), SemSet(1, 0)]
    send += ([McastSend(0, 1, 0, 1, behind=2), McastSend(0, 1, 0, 1, behind=1)] if split else
             [McastSend(0, 2, 0, 1, behind=2)])
    send += ann
    recv: list[Op] = [Reserve(1, 1), SemWait(0, GE, 1), Push(1, 1), Reserve(1, 1), SemWait(0, GE, 2), Push(1, 1),
                      Reserve(1, 2), SemInc(1, A, 1), AtomicBarrier(), SemWait(0, GE, 3), Push(1, 1), Push(1, 1),
                      SemSet(0, 0)]
    drain: list[Op] = [x for _ in range(4) for x in (Wait(0, 1), Pop(0, 1))]
    bufs = (buf(0, A, cap=3, cb=0), buf(1, B, cap=3, cb=0))
    p = prog(ep(A, Engine.READER, *send), ep(A, Engine.COMPUTE, *drain), ep(B, Engine.READER, *recv),
             ep(B, Engine.COMPUTE, *[attrs.evolve(x, buf=1) for x in drain]),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B), sem(1, A)))
    memory = [BufferAt(b.id, WORMHOLE.reserved_base, b.capacity * WORMHOLE.tile_bytes[b.dtype]) for b in bufs]
    return attrs.evolve(p, memory=tuple(memory))


def test_pages_already_pushed_sent_each_from_its_own_address_prove() -> None:
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = two_pages_behind_from_slot_2(split=True)
    assert validate(p) == []
    assert explore(p).rules() == []
    assert [(r.name, r.verdict) for r in certify(p, cache=False).results if r.verdict is not Verdict.PROVED] == []


def test_pages_already_pushed_sent_past_the_ring_end_are_a_straddle_refuted_and_replayed() -> None:
    """Two pages from the address taken at slot 2 of a 3-page ring: the second is past the ring's end. Proved before
    (the model wrapped the source pages of a multicast of pages already pushed, and the checker asked nothing of
    them)."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify

    p = two_pages_behind_from_slot_2(split=False)
    assert validate(p) == []
    v = only(simulate(p))
    assert where(v) == (R.CB_STRADDLE, RA, (22,), ())
    assert v.message == ("mcast_send(b0, 2, g0, 1 dests, pushed 2 back) sends tiles [0, 2) past the write pointer "
                         "of b0 taken 2 pages back, at slot 2 of a 3-page ring of 1-tile pages: past its end "
                         "(2*1+2 > 3; the pointer does not wrap inside an access)")
    assert explore(p).rules() == [R.CB_STRADDLE]
    r = {r.name: r for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"]
    assert r.verdict is Verdict.REFUTED, r
    assert r.counterexample is not None
    assert r.counterexample["path"] == [22]
    assert r.counterexample["running_sum"] == 4
    assert r.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE
