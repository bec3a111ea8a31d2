"""Unit tests of the checker's obligation families on tiny hand-built programs (DESIGN §5, §7).

One correct and one broken program per family, each with its exact verdicts and counterexample fields; the
oracle (``simulate``/``explore``) is asked where a verdict depends on reachability. Programs live on (0,0) and
(1,0) of the Wormhole target; one page = one bf16 tile = 2048 B; buffers are laid out from ``reserved_base``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from builders import witnessed
from verdicts import cex, not_proved, one

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Compute,
    Dynamic,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    SectionSpan,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Target,
    Tensor,
    Term,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate

A, B = Site(0, 0), Site(1, 0)
EQ, GE = WaitCond.EQ, WaitCond.GE
BASE = WORMHOLE.reserved_base
TILE = 2048

def ep(site: Site, engine: Engine, *ops: Op, starts: tuple[int, ...] = ()) -> EngineProgram:
    return EngineProgram(site, engine, tuple(ops), starts)

def buf(i: int, site: Site = A, cap: int = 4, cb: int | None = None, persistent: bool = False) -> Buffer:
    return Buffer(i, f"c{i}", site, i if cb is None else cb, 1, cap, "bf16", persistent=persistent)

def prog(*programs: EngineProgram, buffers: tuple[Buffer, ...] = (), sems: tuple[Semaphore, ...] = (),
         groups: tuple[Group, ...] = (), tensors: tuple[Tensor, ...] = (), trips: tuple[Trip, ...] = (),
         memory: list[BufferAt] | None = None, sections: tuple[SectionSpan, ...] = (SectionSpan("main"),),
         target: Target = WORMHOLE) -> Program:
    """A program; without ``memory`` the buffers are laid out one after another from ``reserved_base``."""
    if memory is None:
        off, memory = BASE, []
        for b in buffers:
            memory.append(BufferAt(b.id, off, b.capacity * TILE))
            off += b.capacity * TILE
    p = Program("unit", target, tensors=tensors, buffers=buffers, semaphores=sems, groups=groups, trips=trips,
                programs=programs, memory=tuple(memory), sections=sections)
    assert validate(p) == []
    return p

def t2(name: str, n: int, role: Role = Role.INPUT) -> Tensor:
    """A 1 x n-tile bf16 tensor."""
    return Tensor(name, (32, 32 * n), "bf16", role)

def copy(reader_ops: tuple[Op, ...], writer_ops: tuple[Op, ...], n: int = 4) -> Program:
    """(0,0)'s reader fills the 4-page c0 from X, its writer drains it to Y (both n tiles)."""
    return prog(ep(A, Engine.READER, *reader_ops), ep(A, Engine.WRITER, *writer_ops), buffers=(buf(0),),
                tensors=(t2("X", n), t2("Y", n, Role.OUTPUT)))

def rd(k: str = "k", tiles: int = 1, addr: Addr | None = None) -> tuple[Op, ...]:
    return (Reserve(0, tiles), ReadTiles("X", addr or Addr(0, (Term(k, tiles),)), tiles, 0), ReadBarrier(), Push(0, tiles))

def wr(k: str = "k", tiles: int = 1) -> tuple[Op, ...]:
    return (Wait(0, tiles), WriteTiles(0, "Y", Addr(0, (Term(k, tiles),)), tiles), WriteBarrier(), Pop(0, tiles))

def good_copy(n: int = 4) -> Program:
    return copy((Loop("k", n, rd()),), (Loop("k", n, wr()),), n=n)

# coverage
def push_uncovered() -> Program:  # the reserve asks 1 page, the push publishes 2
    return copy((Loop("k", 2, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("k", 2),)), 2, 0), ReadBarrier(), Push(0, 2))),),
                (Loop("k", 4, wr()),))

# straddle: pushes 3 into a 4-page ring: the second lands at running sum 3
def straddle() -> Program:
    r = (Loop("k", 2, (Reserve(0, 3), ReadTiles("X", Addr(0, (Term("k", 3),)), 3, 0), ReadBarrier(), Push(0, 3))),)
    return copy(r, (Loop("k", 6, wr()),), n=6)
def no_straddle() -> Program:
    r = (Loop("k", 2, (Reserve(0, 2), ReadTiles("X", Addr(0, (Term("k", 2),)), 2, 0), ReadBarrier(), Push(0, 2))),)
    return copy(r, (Loop("k", 4, wr()),), n=4)

# balance: 4 pushed, 3 popped
def unbalanced(persistent: bool = True) -> Program:
    """Four pages pushed, three popped, into a buffer whose counters outlive the program (``persistent``)."""
    return prog(ep(A, Engine.READER, Loop("k", 4, rd())), ep(A, Engine.WRITER, Loop("k", 3, wr())),
                buffers=(buf(0, persistent=persistent),), tensors=(t2("X", 4), t2("Y", 3, Role.OUTPUT)))

# bounds: affine over a loop
def bounds_bad() -> Program:
    return copy((Loop("k", 4, rd(addr=Addr(1, (Term("k", 1),)))),), (Loop("k", 4, wr()),))

# dynamic range
def dyn(hi: int) -> Program:
    r = (Loop("k", 4, (Reserve(0, 1), ReadTiles("X", Addr(0, (), Dynamic("idx", 0, hi)), 1, 0), ReadBarrier(), Push(0, 1))),)
    return copy(r, (Loop("k", 4, wr()),))

# memory
def two_bufs(mem: tuple[int, int]) -> Program:
    r = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
           Reserve(1, 1), ReadTiles("X", Addr(1), 1, 1), ReadBarrier(), Push(1, 1))
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1),
           Wait(1, 1), WriteTiles(1, "Y", Addr(1), 1), WriteBarrier(), Pop(1, 1))
    return prog(r, w, buffers=(buf(0, cap=2), buf(1, cap=2)), tensors=(t2("X", 2), t2("Y", 2, Role.OUTPUT)),
                memory=[BufferAt(0, mem[0], 2 * TILE), BufferAt(1, mem[1], 2 * TILE)])

# semaphore: A increments B's word twice, B's reader waits ==1 then ==2 (overshoot if both land first)
def sem_prog(b_ops: tuple[Op, ...], a_ops: tuple[Op, ...] | None = None,
             sems: tuple[Semaphore, ...] | None = None) -> Program:
    a_ops = a_ops if a_ops is not None else (SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier())
    return prog(ep(A, Engine.READER, *a_ops), ep(B, Engine.READER, *b_ops), sems=sems or (Semaphore(0, "s", (B,)),))
def overshoot() -> Program:
    return sem_prog((SemWait(0, EQ, 1), SemWait(0, EQ, 2), SemSet(0, 0)))
def exact_ok() -> Program:
    return sem_prog((SemWait(0, EQ, 2), SemSet(0, 0)))
# lost update: B resets after each ge-1 wait while A's second inc may already have landed
def lost_update() -> Program:
    return sem_prog((SemWait(0, GE, 1), SemSet(0, 0), SemWait(0, GE, 1), SemSet(0, 0)))
def acked() -> Program:  # A waits for B's ack (sem1 on A) before its second inc
    a = (SemInc(0, B, 1), AtomicBarrier(), SemWait(1, GE, 1), SemSet(1, 0), SemInc(0, B, 1), AtomicBarrier())
    b = (SemWait(0, GE, 1), SemSet(0, 0), SemInc(1, A, 1), AtomicBarrier(), SemWait(0, GE, 1), SemSet(0, 0))
    return sem_prog(b, a, (Semaphore(0, "s", (B,)), Semaphore(1, "ack", (A,))))

# deadlock with a trip: the producer pushes t pages, the consumer pops 2
def trip_prog(consumer_count: int | str) -> Program:
    r = ep(A, Engine.READER, Loop("k", "t", rd()))
    w = ep(A, Engine.WRITER, Loop("k", consumer_count, wr()))
    # Y gets a runtime number of tiles: a state (an output must be written whole for every trip value).
    return prog(r, w, buffers=(buf(0),), tensors=(t2("X", 2), t2("Y", 2, Role.STATE)), trips=(Trip("t", 2),))

def overshoot_by2() -> Program:  # the only increment adds 2 to a word awaited ==1
    return sem_prog((SemWait(0, EQ, 1), SemSet(0, 0)), (SemInc(0, B, 2), AtomicBarrier()))
def overshoot_3() -> Program:
    return sem_prog((SemWait(0, EQ, 2), SemSet(0, 0), SemWait(0, EQ, 1), SemSet(0, 0)),
                    (SemInc(0, B, 1), SemInc(0, B, 1), SemInc(0, B, 1), AtomicBarrier()))

# flag handshake: (0,0) multicasts a page of X to (1,0) per block; ready = sem0 on A, valid = sem1 on A and B
def handshake(invalidate: bool = True) -> Program:
    send = (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("k", 1),)), 1, 0), ReadBarrier(), SemWait(0, EQ, 1),
            SemSet(0, 0), McastSend(0, 1, 0, 1), McastSetValid(1, 0, 1), Flush(), Push(0, 1))
    recv: tuple[Op, ...] = (Reserve(1, 1), *((SemSet(1, 0),) if invalidate else ()), SemInc(0, A, 1), SemWait(1, EQ, 1),
                            Push(1, 1))
    def drain(b: int, t: str) -> tuple[Op, ...]:
        return (Loop("k", 2, (Wait(b, 1), WriteTiles(b, t, Addr(0, (Term("k", 1),)), 1), WriteBarrier(), Pop(b, 1))),)
    return prog(ep(A, Engine.READER, SemSet(1, 1), Loop("k", 2, send), WriteBarrier()),
                ep(A, Engine.WRITER, *drain(0, "Y")),
                ep(B, Engine.READER, Loop("k", 2, recv), AtomicBarrier()),
                ep(B, Engine.WRITER, *drain(1, "Z")),
                buffers=(buf(0, A, 2, 0), buf(1, B, 2, 0)), tensors=(t2("X", 2), t2("Y", 2, Role.OUTPUT), t2("Z", 2, Role.OUTPUT)),
                sems=(Semaphore(0, "ready", (A,)), Semaphore(1, "valid", (A, B))), groups=(Group(0, A, (1, 0, 1, 0)),),
                memory=[BufferAt(0, BASE, 2 * TILE), BufferAt(1, BASE, 2 * TILE)])

# two sections joined by a rendezvous: (0,0) copies X to activation A, then (1,0) copies A to Y
def sections(arrivals: int = 4) -> Program:
    def arrive() -> tuple[Op, ...]:
        return (SemInc(0, A, 1), AtomicBarrier())
    def root() -> tuple[Op, ...]:
        return (SemWait(0, GE, arrivals), SemSet(0, 0), SemInc(1, A, 1), SemInc(2, A, 1), SemInc(1, B, 1), SemInc(2, B, 1), AtomicBarrier())
    def leave(s: int) -> tuple[Op, ...]:
        return (SemWait(s, GE, 1), SemSet(s, 0))
    def copy_in(b: int, t: str, k: str = "k") -> tuple[Op, ...]:
        return (Loop(k, 2, (Reserve(b, 1), ReadTiles(t, Addr(0, (Term(k, 1),)), 1, b), ReadBarrier(), Push(b, 1))),)
    def copy_out(b: int, t: str, k: str = "k") -> tuple[Op, ...]:
        return (Loop(k, 2, (Wait(b, 1), WriteTiles(b, t, Addr(0, (Term(k, 1),)), 1), WriteBarrier(), Pop(b, 1))),)
    ar = copy_in(0, "X") + arrive() + root() + leave(1)
    aw = copy_out(0, "A") + arrive() + leave(2)
    br = arrive() + leave(1) + copy_in(1, "A")
    bw = arrive() + leave(2) + copy_out(1, "Y")
    return prog(ep(A, Engine.READER, *ar, starts=(0, len(ar))), ep(A, Engine.WRITER, *aw, starts=(0, len(aw))),
                ep(B, Engine.READER, *br, starts=(0, 4)), ep(B, Engine.WRITER, *bw, starts=(0, 4)),
                buffers=(buf(0, A, 2, 0), Buffer(1, "c1", B, 0, 1, 2, "bf16", section=1)),
                tensors=(t2("X", 2), t2("A", 2, Role.ACTIVATION), t2("Y", 2, Role.OUTPUT)),
                sems=(Semaphore(0, "gather", (A,)), Semaphore(1, "release_reader", (A, B)), Semaphore(2, "release_writer", (A, B))),
                sections=(SectionSpan("s0", True), SectionSpan("s1")),
                memory=[BufferAt(0, BASE, 2 * TILE), BufferAt(1, BASE, 2 * TILE)])


# ---------------------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("build", [good_copy, no_straddle, exact_ok, acked, handshake,
                                   lambda: two_bufs((BASE, BASE + 2 * TILE)), lambda: dyn(3),
                                   lambda: trip_prog("t")],
                         ids=["copy", "ring-aligned", "exact-eq-wait", "acked-reset", "flag-handshake",
                              "memory-disjoint", "dynamic-in-range", "trip-matched"])
def test_correct_programs_prove_every_obligation(build: Callable[[], Program]) -> None:
    p = build()
    report = certify(p)
    assert not_proved(report) == {}
    assert report.exit_code == 0
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    assert witnessed(dl.reason, len(p.programs), " and trip values" if p.trips else "")
    # The oracle agrees: every interleaving (and trip value) terminates without a violation.
    ex = explore(p)
    assert (ex.verdict, ex.complete) == ("ok", True)


# ---------------------------------------------------------------------------------------------- circular buffers


def test_push_not_covered_by_its_reserve() -> None:
    report = certify(push_uncovered())
    assert report.exit_code == 1
    r = one(report, "cb-push-uncovered:(0,0).reader:[0, 3]")
    assert (r.family, r.verdict) == ("circular-buffer", Verdict.REFUTED)
    assert r.reason == "push of 2 pages on b0 beyond its reserved window"
    c = cex(r)
    assert c["violation"] == {
        "rule": "cb-push-uncovered",
        "position": {"engine": "(0,0).reader", "path": [0, 3], "iteration": [["k", 0]], "op": "push(b0, 2)"},
        "message": "push(b0, 2) publishes pages [0, 2) but the reserved window is [0, 1)",
    }
    assert c["replayed_by"] == "round-robin run"


def test_straddle_names_running_sum_and_pages() -> None:
    report = certify(straddle())
    assert not_proved(report) == {"cb-straddle:b0": Verdict.REFUTED}
    c = cex(one(report, "cb-straddle:b0"))
    assert (c["engine"], c["path"], c["iteration"]) == ("(0,0).reader", [0, 3], {"k": 1})
    assert (c["buffer"], c["capacity"], c["running_sum"], c["pages"]) == (0, 4, 3, 3)
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["message"] == "push(b0, 3) at write offset 3 of a 4-page ring straddles its end (3+3 > 4)"


def test_buffer_not_empty_at_the_end() -> None:
    report = certify(unbalanced())
    assert not_proved(report) == {"balance-cb:b0": Verdict.REFUTED}
    r = one(report, "balance-cb:b0")
    assert r.family == "balance"
    assert r.reason == "b0 (c0) ends with 1 pages left (pushed 4, popped 3)"
    c = cex(r)
    assert (c["pushed"], c["popped"]) == (4, 3)
    assert simulate(unbalanced()).rules() == ["balance-cb"]


# ---------------------------------------------------------------------------------------------- bounds


def test_affine_address_leaves_the_tensor_on_the_last_iteration() -> None:
    report = certify(bounds_bad())
    assert not_proved(report) == {"bounds:X": Verdict.REFUTED}
    c = cex(one(report, "bounds:X"))
    assert (c["engine"], c["path"], c["iteration"]) == ("(0,0).reader", [0, 1], {"k": 3})
    assert (c["tensor"], c["first_tile"], c["tiles"], c["tensor_tiles"], c["dynamic"]) == ("X", 4, 1, 4, None)


def test_dynamic_address_range_one_past_the_end() -> None:
    report = certify(dyn(4))
    assert not_proved(report) == {"bounds:X": Verdict.REFUTED}
    c = cex(one(report, "bounds:X"))
    assert (c["tensor"], c["first_tile"], c["tensor_tiles"], c["dynamic"]) == ("X", 4, 4, 4)
    assert one(certify(dyn(3)), "bounds:X").reason == "every access of X is inside its 4 tiles"


# ---------------------------------------------------------------------------------------------- semaphores


def test_eq_wait_overshoot() -> None:
    """Three increments against waits ==2 then ==1: the third can land before the first wait returns."""
    p = overshoot_3()
    report = certify(p)
    assert report.exit_code == 1
    assert one(report, "sem-set-race:sem0@(1,0)").verdict == Verdict.REFUTED
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    assert dl.verdict != Verdict.PROVED  # the oracle deadlocks it
    ex = explore(p)
    assert ex.rules() == ["sem-overshoot", "sem-set-race"]
    assert [str(s) for s in ex.deadlocks[0].stuck] == [
        "(1,0).reader at ops[0] sem_wait(sem0, eq, 2): sem0@(1,0)=3, waits ==2"]


def test_reset_after_wait_loses_an_update() -> None:
    report = certify(lost_update())
    assert report.exit_code == 1
    r = one(report, "sem-set-race:sem0@(1,0)")
    assert (r.family, r.verdict) == ("semaphore", Verdict.REFUTED)
    assert r.reason == ("(1,0).reader resets sem0@(1,0) at [1] after an increment beyond those its wait consumed "
                        "was issued (lost update)")
    c = cex(r)
    assert c["word"] == "sem0@(1,0)"
    # The interpreter's run from the launch shows it before any wider query (encoding._witness): the counterexample
    # is that run, at the reset.
    assert (c["engine"], c["path"]) == ("(1,0).reader", [1])
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == "sem-set-race"
    assert replay["violation"]["position"]["path"] == [1]
    # The acknowledged version of the same exchange proves (test_correct_programs_prove_every_obligation).


def test_flag_handshake_without_invalidate() -> None:
    """The receiver never invalidates its flag, so its second wait passes on the first block's VALID: the sender
    multicasts into a slot the receiver has not reserved, and the receiver publishes a page that has not landed."""
    p = handshake(invalidate=False)
    report = certify(p)
    assert report.exit_code == 1
    r = one(report, "mcast-slot:(0,0).reader:[1, 5]")
    assert (r.family, r.verdict) == ("async-noc", Verdict.REFUTED)
    replay = cex(r)["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["position"] == {"engine": "(0,0).reader", "path": [1, 5], "iteration": [["k", 1]],
                                               "op": "mcast_send(b0, 1, g0, 1 dests)"}
    # The push is refuted too: no write barrier of the sender shows the page landed, and the interpreter publishes it
    # first (the flag it waited for was the first block's). And the receiver's flag ends at VALID: nothing resets it and
    # nothing re-initializes it (no host_init), which the round-robin run from launch shows (refuted, not left
    # failed-to-prove).
    assert {n for n, v in not_proved(report).items() if v == Verdict.REFUTED} == {
        "mcast-slot:(0,0).reader:[1, 5]", "mcast-publish:(1,0).reader:[0, 3]", "balance-sem:sem1@(1,0)"}
    assert cex(one(report, "mcast-publish:(1,0).reader:[0, 3]"))["replay"]["violation"]["rule"] == "mcast-publish-early"
    # The early multicast also lands in a page the receiver's writer is still sending from.
    assert sorted(explore(p).rules()) == ["async-source-reuse", "balance-sem", "mcast-publish-early", "mcast-slot"]


# ---------------------------------------------------------------------------------------------- happens-before


def test_activation_read_across_a_short_rendezvous() -> None:
    report = certify(sections(arrivals=3))
    assert report.exit_code == 1
    a = one(report, "hb-activation:A:(1,0).reader[4, 1]<(0,0).writer[0, 1]")
    assert (a.family, a.verdict) == ("happens-before", Verdict.REFUTED)
    c = cex(a)
    assert (c["rule"], c["read"], c["write"]) == ("tensor-race", {"engine": "(1,0).reader", "path": [4, 1]},
                                                  {"engine": "(0,0).writer", "path": [0, 1]})
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == "tensor-race"
    assert replay["violation"]["position"]["engine"] == "(1,0).reader"
    assert replay["violation"]["position"]["op"] == "read_tiles(A, 1, b1)"
    assert one(report, "hb-rendezvous:after-section-0").verdict == Verdict.REFUTED
    assert one(report, "sem-set-race:sem0@(0,0)").verdict == Verdict.REFUTED
    assert cex(one(report, "balance-sem:sem0@(0,0)"))["end_value"] == 1


def test_activation_read_across_a_full_rendezvous() -> None:
    p = sections()
    report = certify(p)
    assert one(report, "hb-activation:A:(1,0).reader[4, 1]<(0,0).writer[0, 1]").verdict == Verdict.PROVED
    assert one(report, "hb-activation:A:(1,0).reader[4, 1]").verdict == Verdict.PROVED
    assert [r.name for r in report.results if r.verdict == Verdict.REFUTED] == []
    assert (explore(p).verdict, explore(p).complete) == ("ok", True)


def test_full_rendezvous_proves_its_ordering() -> None:
    """The rendezvous is the run of semaphore ops closing each section, whatever its semaphores' roles."""
    p = sections()
    report = certify(p)
    assert one(report, "hb-rendezvous:after-section-0").verdict == Verdict.PROVED
    assert report.exit_code == 0
    assert (explore(p).verdict, explore(p).complete) == ("ok", True)


# ---------------------------------------------------------------------------------------------- deadlock


def test_deadlock_for_some_trip_values_only() -> None:
    """The reader pushes t in [0, 2] pages, the writer pops 2: t = 0 and t = 1 deadlock, t = 2 terminates."""
    p = trip_prog(2)
    assert [simulate(p, {"t": t}).status for t in (0, 1, 2)] == ["deadlock", "deadlock", "terminated"]
    report = certify(p)
    assert report.exit_code == 1
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    assert dl.verdict == Verdict.REFUTED
    c = cex(dl)
    trips = c["trips"]
    assert isinstance(trips, dict)
    assert set(trips) == {"t"}
    assert trips["t"] in (0, 1)
    sim = simulate(p, trips)
    assert sim.status == "deadlock"
    assert [st.to_json() for st in sim.stuck] == c["stuck"]
    assert c["stuck"] == [{"position": {"engine": "(0,0).writer", "path": [0, 0], "iteration": [["k", trips["t"]]],
                                        "op": "wait(b0, 1)"},
                           "reason": f"waits for b0: pushed-popped={trips['t']}-{trips['t']}=0 < 1"}]
    # Balance holds for the one trip value that terminates: it may fail to prove, never be refuted.
    assert one(report, "balance-cb:b0").verdict != Verdict.REFUTED


# ---------------------------------------------------------------------------------------------- accumulator


@pytest.mark.parametrize(("dtype", "tiles", "holds"), [("bf16", 8, None), ("bf16", 9, 8), ("fp32", 4, None),
                                                       ("fp32", 5, 4)])
def test_acc_capacity_is_per_precision(dtype: str, tiles: int, holds: int | None) -> None:
    # Wormhole's DST holds 8 16-bit tiles, 4 with fp32 accumulate: the checker judges each acquire at its dtype.
    p = prog(ep(A, Engine.COMPUTE, AcquireAcc(tiles, dtype), Compute("x"), ReleaseAcc()))
    report = certify(p)
    if holds is None:
        assert not_proved(report) == {}
        return
    assert not_proved(report) == {"acc-capacity:(0,0).compute:[0]": Verdict.REFUTED}
    r = one(report, "acc-capacity:(0,0).compute:[0]")
    assert r.reason == f"acquires {tiles} {dtype} accumulator tiles; target wormhole_b0 holds {holds} at that precision"
    assert cex(r)["violation"]["rule"] == "acc-capacity"  # type: ignore[index]
    assert [v.rule for v in simulate(p).violations] == ["acc-capacity"]
