"""Hardware-fidelity rules (issue 7): precise circular-buffer windows, source reuse per page and across engines,
accumulator pairing, compute windows, outputs written whole, pushes of filled pages, alias clobbers on writes and
multicasts published like pushes.

Each rule: the interpreter's verdict on a tiny program, the checker's proof of the correct form and its refutation of
a mutant, replayed by the interpreter (docs/semantics.md names the vendor source of each rule). Programs live on
(0,0) and (1,0) of Wormhole (Blackhole where the target matters); one page = one bf16 tile = 2048 B; buffers are
laid out from ``reserved_base`` per site.
"""

from __future__ import annotations

from builders import CA, RA, A, B, buf
from builders import prog as bare_prog
from verdicts import not_proved

from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    BufferAt,
    Compute,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
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

EQ, GE = WaitCond.EQ, WaitCond.GE
TILE = 2048
IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


def out(n: int, name: str = "out", role: Role = Role.OUTPUT) -> Tensor:
    return Tensor(name, (32, 32 * n), "bf16", role)


def ep(site: Site, engine: Engine, *ops: Op) -> EngineProgram:
    return EngineProgram(site, engine, tuple(ops))


def prog(*programs: EngineProgram, target: Target = WORMHOLE, **kw: object) -> Program:
    """A program with a memory map: each site's buffers one after another from ``reserved_base`` (a buffer with the
    cb index of a buffer on another site at the same offset, as multicast congruence needs)."""
    p = bare_prog(*programs, target=target, **kw)  # type: ignore[arg-type]
    mem: list[BufferAt] = []
    for b in p.buffers:
        below = [x for x in p.buffers if x.site == b.site and x.cb < b.cb]
        mem.append(BufferAt(b.id, target.reserved_base + sum(x.capacity * TILE for x in below), b.capacity * TILE))
    import attrs

    p = attrs.evolve(p, memory=tuple(mem))
    assert validate(p) == [], validate(p)
    return p


def named(report: Report, name: str) -> Result:
    (r,) = [r for r in report.results if r.name == name]
    return r


def replayed(r: Result, rule: str) -> dict[str, object]:
    """The interpreter's violation that replays refutation ``r``."""
    assert r.verdict == Verdict.REFUTED, (r.name, r.verdict, r.reason)
    assert r.counterexample is not None
    c = r.counterexample
    v = c.get("violation") or c["replay"]["violation"]  # type: ignore[index]
    assert isinstance(v, dict)
    assert v["rule"] == rule
    return v


def reader(n: int = 2, per_push: int = 1, reads: int | None = None) -> EngineProgram:
    """Fills b0 one reserve of ``per_push`` pages at a time from ``in`` (``reads`` tiles per reserve: all of them
    by default)."""
    k = per_push if reads is None else reads
    return ep(A, Engine.READER, Loop("k", n, (Reserve(0, per_push), ReadTiles("in", Addr(0, (Term("k", per_push),)), k, 0),
                                              ReadBarrier(), Push(0, per_push))))


def copy(*writer: Op, n: int = 2, src: EngineProgram | None = None, tiles: int | None = None) -> Program:
    return prog(src or reader(n), ep(A, Engine.WRITER, *writer), buffers=(buf(0, cap=2),),
                tensors=(IN, out(tiles if tiles is not None else n)))


BARRIER = WriteBarrier()


def wr(k: str = "k", leave: Op | None = BARRIER) -> tuple[Op, ...]:
    """The writer's block: wait, write the page out, let it leave (``leave``), pop."""
    body: list[Op] = [Wait(0, 1), WriteTiles(0, "out", Addr(0, (Term(k, 1),)), 1)]
    body += [leave] if leave is not None else []
    return (*body, Pop(0, 1))


# ---------------------------------------------------------------------------------------------- windows


def test_one_reserve_covers_two_pushes_and_one_wait_two_pops() -> None:
    """cb_reserve_back is only a wait (cb_api.h / dataflow_api.h): a Reserve(2) opens the window [pushed, pushed+2)
    and the two Push(1) inside it are covered; likewise a Wait(2) covers two Pop(1)."""
    src = ep(A, Engine.READER, Reserve(0, 2), ReadTiles("in", Addr(0), 2, 0), ReadBarrier(), Push(0, 1), Push(0, 1))
    p = copy(Wait(0, 2), WriteTiles(0, "out", Addr(0), 2), WriteBarrier(), Pop(0, 1), Pop(0, 1), src=src)
    assert explore(p).verdict == "ok"
    assert certify(p).exit_code == 0
    # The window a Wait(1) opens covers only the first Pop(1) (and only the first page of the write).
    bad = copy(Wait(0, 1), WriteTiles(0, "out", Addr(0), 2), WriteBarrier(), Pop(0, 1), Pop(0, 1), src=src)
    report = certify(bad)
    # With the pops uncovered, b0's occupancy is not trusted, and the write reads a page outside its window: whether
    # the writer's source pages stay put is not decided either (failed to prove, never proved) — the reader's
    # reserve and read of b0 are candidates the interpreter does not replay.
    assert not_proved(report) == {"cb-read-unwaited:(0,0).writer:[1]": Verdict.REFUTED,
                                  "cb-pop-uncovered:(0,0).writer:[4]": Verdict.REFUTED,
                                  "async-source-reuse:b0": Verdict.FAILED,
                                  "async-source-reuse:(0,0).reader:[0]": Verdict.FAILED,
                                  "async-source-reuse:(0,0).reader:[1]": Verdict.FAILED}
    v = replayed(named(report, "cb-pop-uncovered:(0,0).writer:[4]"), "cb-pop-uncovered")
    assert v["message"] == "pop(b0, 1) frees pages [1, 2) but the waited window is [1, 1)"


# ---------------------------------------------------------------------------------------------- source reuse


def test_writer_lets_a_page_go_only_after_its_write_left() -> None:
    """tt-metal writers call noc_async_write_barrier() or noc_async_writes_flushed() before cb_pop_front
    (dataflow_api.h: writes_flushed = the writes departed, the source may be reused)."""
    barrier = copy(Loop("k", 2, wr()))
    flush = copy(Loop("k", 2, wr(leave=Flush())), WriteBarrier())
    for p in (barrier, flush):
        assert explore(p).verdict == "ok"
        assert certify(p).exit_code == 0
    early = copy(Loop("k", 2, wr(leave=None)), WriteBarrier())
    assert explore(early).rules() == ["async-source-reuse"]
    report = certify(early)
    assert not_proved(report) == {"async-source-reuse:(0,0).writer:[0, 2]": Verdict.REFUTED}
    v = replayed(named(report, "async-source-reuse:(0,0).writer:[0, 2]"), "async-source-reuse")
    assert str(v["message"]).startswith("pop(b0, 1) frees page 0 of b0, the source of (0,0).writer's "
                                        "write_tiles(b0, out, 1) at ops[0].body[1]")


def test_a_page_popped_before_its_write_left_is_reused_by_the_producer() -> None:
    """The writer pops a page whose write has not left; the reader (b0's producer, another engine of the site) then
    re-reserves that page and reads into it while the write still reads it. The pop is the cause, but the reserve and
    the landing break the rule too (the interpreter reports each): the checker refutes all three ops, each replayed,
    and proves none of them (a found fault on another engine's op is never left unspoken)."""
    early = copy(Loop("k", 3, wr(leave=None)), WriteBarrier(), n=3)
    got = {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in explore(early).violations}
    assert got == {("async-source-reuse", "(0,0).writer", (0, 2)), ("async-source-reuse", "(0,0).reader", (0, 0)),
                   ("async-source-reuse", "(0,0).reader", (0, 1))}
    report = certify(early)
    assert not_proved(report) == {"async-source-reuse:(0,0).writer:[0, 2]": Verdict.REFUTED,
                                  "async-source-reuse:(0,0).reader:[0, 0]": Verdict.REFUTED,
                                  "async-source-reuse:(0,0).reader:[0, 1]": Verdict.REFUTED}
    v = replayed(named(report, "async-source-reuse:(0,0).reader:[0, 0]"), "async-source-reuse")
    assert str(v["message"]).startswith("reserve(b0, 1) re-reserves page 0 of b0, the source of (0,0).writer's")
    # With the write barrier before the pop, the producer's reserves are safe too.
    ok = copy(Loop("k", 3, wr()), n=3)
    assert explore(ok).verdict == "ok"
    assert certify(ok).exit_code == 0


def test_a_reserve_reaching_only_the_second_premature_pops_page_is_refuted() -> None:
    """Two premature pops per block; the first page's write is flushed before the second pop, the second page's is
    not. The reader's Reserve(2) needs both pages free, so it can reach only the second pop's source: the candidate is
    asked of every pop that may let it through (not only the first one found), and refuted at the reserve and the
    read."""
    src = ep(A, Engine.READER, Loop("k", 2, (Reserve(0, 2), ReadTiles("in", Addr(0, (Term("k", 2),)), 2, 0),
                                             ReadBarrier(), Push(0, 2))))
    body = (Wait(0, 1), WriteTiles(0, "out", Addr(0, (Term("k", 2),)), 1), Pop(0, 1), Wait(0, 1), Flush(),
            WriteTiles(0, "out", Addr(1, (Term("k", 2),)), 1), Pop(0, 1))
    p = copy(Loop("k", 2, body), WriteBarrier(), src=src, tiles=4)
    got = {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in explore(p).violations}
    assert got == {("async-source-reuse", "(0,0).writer", (0, 2)), ("async-source-reuse", "(0,0).writer", (0, 6)),
                   ("async-source-reuse", "(0,0).reader", (0, 0)), ("async-source-reuse", "(0,0).reader", (0, 1))}
    report = certify(p)
    assert not_proved(report) == {f"async-source-reuse:{e}:{list(q or ())}": Verdict.REFUTED for _, e, q in got}


def test_a_write_before_its_wait_reads_a_page_the_producer_may_reserve() -> None:
    """The writer writes its page out before waiting for it (cb-read-unwaited): the page is still the producer's,
    which reserves and fills it while the write reads it. Those ops break async-source-reuse too; the checker speaks
    of each (refuted or failed to prove, never proved)."""
    src = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1))
    p = copy(WriteTiles(0, "out", Addr(0), 1), Wait(0, 1), Pop(0, 1), WriteBarrier(), src=src, tiles=1)
    got = {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in explore(p).violations}
    assert {("async-source-reuse", "(0,0).reader", (0,)), ("async-source-reuse", "(0,0).reader", (1,)),
            ("cb-read-unwaited", "(0,0).writer", (0,))} <= got
    report = certify(p)
    bad = not_proved(report)
    for rule, e, q in got:
        assert f"{rule}:{e}:{list(q or ())}" in bad, (rule, e, q, bad)


def test_a_fill_past_its_reservation_may_rewrite_the_consumers_outstanding_write_source() -> None:
    """The reader reads a second page into b0 without reserving it (cb-write-unreserved): with capacity 2 the page
    is free, but with capacity 1 it is the page the writer is still writing out (its write barrier comes later).
    The fill itself breaks async-source-reuse; the checker speaks of it (refuted with a replay, never proved)."""
    src = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
             ReadTiles("in", Addr(1), 1, 0), ReadBarrier())
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), WriteBarrier(), Pop(0, 1))
    p = prog(src, w, buffers=(buf(0, cap=1),), tensors=(IN, out(1)))
    got = {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in explore(p).violations}
    assert {("cb-write-unreserved", "(0,0).reader", (4,)), ("async-source-reuse", "(0,0).reader", (4,))} <= got
    bad = not_proved(certify(p))
    assert bad.get("cb-write-unreserved:(0,0).reader:[4]") == Verdict.REFUTED
    assert bad.get("async-source-reuse:(0,0).reader:[4]") == Verdict.REFUTED, bad


def test_a_read_published_before_it_landed_may_land_under_the_consumers_write() -> None:
    """The reader pushes a page before its read barrier; the writer may then issue its write from that page before
    the read lands, so the landing rewrites the source of an outstanding write (the interpreter reports
    async-source-reuse at the read as well as async-read-publish at the push). The checker never proves
    async-source-reuse there: the read is a candidate, refuted by the replay."""
    src = ep(A, Engine.READER, Loop("k", 2, (Reserve(0, 1), ReadTiles("in", Addr(0, (Term("k", 1),)), 1, 0), Push(0, 1),
                                             ReadBarrier())))
    p = copy(Loop("k", 2, wr()), src=src)
    got = {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in explore(p).violations}
    assert got == {("async-read-publish", "(0,0).reader", (0, 2)), ("async-source-reuse", "(0,0).reader", (0, 1))}
    report = certify(p)
    assert not_proved(report) == {"async-read-publish:(0,0).reader:[0, 2]": Verdict.REFUTED,
                                  "async-source-reuse:(0,0).reader:[0, 1]": Verdict.REFUTED}
    v = replayed(named(report, "async-source-reuse:(0,0).reader:[0, 1]"), "async-source-reuse")
    assert str(v["message"]).startswith("read_tiles(in, 1, b0) lands in page 0 of b0, the source of (0,0).writer's")


def test_source_reuse_is_decided_per_page() -> None:
    """Two pages waited together: the first page's write is flushed before the page goes, while the second page's
    write is still outstanding: that page is not freed, so nothing is reused."""
    per_page = copy(Wait(0, 2), WriteTiles(0, "out", Addr(0), 1), Flush(), WriteTiles(0, "out", Addr(1), 1),
                    Pop(0, 1), Flush(), Pop(0, 1), WriteBarrier())
    assert explore(per_page).verdict == "ok"
    assert certify(per_page).exit_code == 0
    both = copy(Wait(0, 2), WriteTiles(0, "out", Addr(0), 1), WriteTiles(0, "out", Addr(1), 1), Pop(0, 1), Flush(),
                Pop(0, 1), WriteBarrier())
    report = certify(both)
    assert not_proved(report) == {"async-source-reuse:(0,0).writer:[3]": Verdict.REFUTED}


def mcast(target: Target = WORMHOLE, flush: str = "none", sender_pages: int = 4, blocks: int = 3) -> Program:
    """The reuse-multicast handshake (reference §2.5) between a sender (0,0) and one receiver (1,0), 2 pages a
    block, c0 holding ``sender_pages`` on both sites (congruent); ``flush``: where the sender flushes (``between`` data
    and flag, ``after`` the flag, ``none``)."""
    body: list[Op] = [Reserve(0, 2), ReadTiles("in", Addr(0, (Term("k", 2),)), 2, 0), ReadBarrier(),
                      SemWait(0, EQ, 1), SemSet(0, 0), McastSend(0, 2, 0, 1)]
    body += [Flush()] if flush == "between" else []
    body += [McastSetValid(1, 0, 1)]
    body += [Flush()] if flush == "after" else []
    body += [Push(0, 2)]
    drain: tuple[Op, ...] = (Loop("k", blocks, (Wait(0, 2), AcquireAcc(2, "bf16"),
                                                 Compute("copy", 2, (Operand(0, 2),)), ReleaseAcc(), Pop(0, 2))),)
    return prog(
        ep(A, Engine.READER, SemSet(1, 1), Loop("k", blocks, tuple(body)), WriteBarrier()),
        ep(A, Engine.COMPUTE, *drain),
        ep(B, Engine.READER, Loop("k", blocks, (Reserve(1, 2), SemSet(1, 0), SemInc(0, A, 1), SemWait(1, EQ, 1),
                                                Push(1, 2))), AtomicBarrier()),
        ep(B, Engine.COMPUTE, Loop("k", blocks, (Wait(1, 2), AcquireAcc(2, "bf16"),
                                                 Compute("copy", 2, (Operand(1, 2),)), ReleaseAcc(), Pop(1, 2)))),
        buffers=(buf(0, A, cap=sender_pages, cb=0), buf(1, B, cap=sender_pages, cb=0)),
        sems=(Semaphore(0, "ready", (A, B)), Semaphore(1, "valid", (A, B))),
        groups=(Group(0, A, (1, 0, 1, 0)),),
        tensors=(Tensor("in", (32, 32 * 2 * blocks), "bf16", Role.INPUT),),
        target=target,
    )


def test_multicast_source_slot_reuse_uses_the_write_order_on_wormhole() -> None:
    """Double-buffered, no flush: block k+1 re-reserves block k-1's pages after the ready wait of block k, which
    needed the receiver to see block k-1's flag land; on Wormhole the flag left after the data (ordered writes), so
    the data had left (reference §2.6 item 5). Proved without the extra per-block flush."""
    p = mcast(WORMHOLE, "none")
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert not_proved(report) == {}
    r = named(report, "async-source-reuse")
    assert "op(s) flagged per engine run only once the source left" in r.reason


def test_multicast_source_slot_reuse_without_a_later_flag_is_refuted() -> None:
    """Single-buffered, no flush: block 1 re-reserves block 0's pages before anything says block 0's data left."""
    p = mcast(WORMHOLE, "none", sender_pages=2)
    assert "async-source-reuse" in explore(p).rules()
    report = certify(p)
    r = named(report, "async-source-reuse:(0,0).reader:[1, 0]")
    v = replayed(r, "async-source-reuse")
    assert v["position"]["op"] == "reserve(b0, 2)"  # type: ignore[index]
    # A flush after the flag makes it correct again (the vendor kernel's timing, made explicit).
    assert certify(mcast(WORMHOLE, "after", sender_pages=2)).exit_code == 0


def test_blackhole_flush_between_data_and_flag_covers_the_reuse() -> None:
    p = mcast(BLACKHOLE, "between")
    assert explore(p).verdict == "ok"
    assert certify(p).exit_code == 0


def flag_source(set_by: Engine, handshake: bool) -> Program:
    """(0,0)'s reader multicasts a flag from its word of sem1 (VALID) to (1,0); then an engine of (0,0) resets that
    word (stores 0: a store of the value it holds would change no byte). With ``handshake`` the reader flushes first
    and signals the engine that stores."""
    send: list[Op] = [SemSet(1, 1), McastSetValid(1, 0, 1)]
    other: list[Op] = []
    if set_by is Engine.READER:
        send += [Flush()] if handshake else []
        send += [SemSet(1, 0)]
    else:
        send += [Flush(), SemInc(2, A, 1), AtomicBarrier()] if handshake else []
        other = [SemWait(2, GE, 1), SemSet(2, 0)] if handshake else []
        other += [SemSet(1, 0)]
    send += [WriteBarrier()]
    programs = [ep(A, Engine.READER, *send), ep(B, Engine.READER, SemWait(1, EQ, 1), SemSet(1, 0))]
    if other:
        programs.append(ep(A, set_by, *other))
    return prog(*programs, sems=(Semaphore(0, "unused", (A,)), Semaphore(1, "valid", (A, B)), Semaphore(2, "go", (A,))),
                groups=(Group(0, A, (1, 0, 1, 0)),))


def test_flag_source_word_rewritten_before_the_flag_left() -> None:
    """noc_semaphore_set_multicast reads its source word when the write departs (reference §1.2)."""
    early = flag_source(Engine.READER, handshake=False)
    assert explore(early).rules() == ["async-source-reuse"]
    report = certify(early)
    replayed(named(report, "async-source-reuse:(0,0).reader:[2]"), "async-source-reuse")
    assert named(certify(flag_source(Engine.READER, handshake=True)), "async-source-reuse").verdict == Verdict.PROVED


def test_flag_source_word_rewritten_by_another_engine_of_the_site() -> None:
    """The rule is site-wide: the compute engine of the sender's site stores into the word the reader's flag still
    has to read. With a flush and a handshake first it is safe, and the checker proves it across the two engines."""
    bad = flag_source(Engine.COMPUTE, handshake=False)
    assert explore(bad).rules() == ["async-source-reuse"]
    report = certify(bad)
    v = replayed(named(report, "async-source-reuse:(0,0).compute:[0]"), "async-source-reuse")
    assert v["position"]["engine"] == CA  # type: ignore[index]
    good = certify(flag_source(Engine.COMPUTE, handshake=True))
    assert named(good, "async-source-reuse:(0,0).compute:[2]").verdict == Verdict.PROVED
    assert explore(flag_source(Engine.COMPUTE, handshake=True)).verdict == "ok"


def test_multicast_publishes_only_landed_reads() -> None:
    """A multicast publishes its pages like a push: its reads must have landed (noc_async_read_barrier first)."""
    good = mcast(WORMHOLE, "none")
    body = good.programs[0].ops[1]
    assert isinstance(body, Loop)
    ops = list(body.body)
    ops.remove(ReadBarrier())
    ops.insert(ops.index(McastSetValid(1, 0, 1)), ReadBarrier())  # the barrier after the data multicast
    import attrs

    bad = attrs.evolve(good, programs=(attrs.evolve(good.programs[0], ops=(
        good.programs[0].ops[0], attrs.evolve(body, body=tuple(ops)), *good.programs[0].ops[2:])),
        *good.programs[1:]))
    assert "async-read-publish" in explore(bad).rules()
    report = certify(bad)
    replayed(named(report, "async-read-publish:(0,0).reader:[1, 4]"), "async-read-publish")


# ---------------------------------------------------------------------------------------------- compute


def pipeline(compute: tuple[Op, ...]) -> Program:
    """reader -> c0 (2 pages) -> compute -> c1 (1 page) -> writer on (0,0); ``compute`` sums the two tiles."""
    r = ep(A, Engine.READER, Loop("k", 2, (Reserve(0, 1), ReadTiles("in", Addr(0, (Term("k", 1),)), 1, 0), ReadBarrier(),
                                           Push(0, 1))))
    w = ep(A, Engine.WRITER, Wait(1, 1), WriteTiles(1, "out", Addr(0), 1), WriteBarrier(), Pop(1, 1))
    return prog(r, ep(A, Engine.COMPUTE, *compute), w, buffers=(buf(0, cap=2), buf(1, cap=1)), tensors=(IN, out(1)))


GOOD = (AcquireAcc(1, "bf16"), Loop("k", 2, (Wait(0, 1), Compute("add", 1, (Operand(0, 1),)), Pop(0, 1))),
        Reserve(1, 1), PackAcc(1, 1), Push(1, 1), ReleaseAcc())


def test_compute_reads_pages_only_inside_their_wait_window() -> None:
    """The unpacker reads from the read pointer, valid between cb_wait_front and cb_pop_front (cb_api.h)."""
    assert explore(pipeline(GOOD)).verdict == "ok"
    assert certify(pipeline(GOOD)).exit_code == 0
    before_wait = (AcquireAcc(1, "bf16"), Loop("k", 2, (Compute("add", 1, (Operand(0, 1),)), Wait(0, 1), Pop(0, 1))),
                   Reserve(1, 1), PackAcc(1, 1), Push(1, 1), ReleaseAcc())
    after_pop = (AcquireAcc(1, "bf16"), Loop("k", 2, (Wait(0, 1), Pop(0, 1), Compute("add", 1, (Operand(0, 1),)))),
                 Reserve(1, 1), PackAcc(1, 1), Push(1, 1), ReleaseAcc())
    for ops, path in ((before_wait, "[1, 0]"), (after_pop, "[1, 2]")):
        p = pipeline(ops)
        assert explore(p).rules() == ["cb-read-unwaited"]
        report = certify(p)
        assert not_proved(report) == {f"cb-read-unwaited:(0,0).compute:{path}": Verdict.REFUTED}
        replayed(named(report, f"cb-read-unwaited:(0,0).compute:{path}"), "cb-read-unwaited")


def test_compute_and_pack_run_inside_an_acquired_accumulator() -> None:
    """tile_regs_acquire .. tile_regs_release (reg_api.h) brackets every math and pack step."""
    dropped = GOOD[1:]
    p = pipeline(dropped)
    assert sorted(set(explore(p).rules())) == ["acc-unacquired"]
    report = certify(p)
    assert set(not_proved(report)) == {"acc-unacquired:(0,0).compute:[0, 1]", "acc-unacquired:(0,0).compute:[2]",
                                       "acc-unacquired:(0,0).compute:[4]"}
    v = replayed(named(report, "acc-unacquired:(0,0).compute:[0, 1]"), "acc-unacquired")
    assert v["message"] == "compute(add, 1, b0[1]) with no accumulator acquired (no acquire_acc before it)"
    twice = pipeline((AcquireAcc(1, "bf16"), *GOOD))
    report = certify(twice)
    assert not_proved(report) == {"acc-unacquired:(0,0).compute:[1]": Verdict.REFUTED}
    r = simulate(pipeline((*GOOD, ReleaseAcc())))
    assert [(v.rule, v.position.path) for v in r.violations] == [("acc-unacquired", (6,))]
    assert r.violations[0].message == "release_acc() with no accumulator acquired"


def test_math_uses_no_more_accumulator_tiles_than_its_acquire_took() -> None:
    """DST tile indices stay inside the section tile_regs_acquire took (reg_api.h; dest_helpers.hpp get_dest_limit):
    a 2-tile math step under a 1-tile acquire is ``acc-overrun``; acquiring 2 tiles is the correct form, and a later,
    narrower acquire is judged by its own count, not the earlier one's."""
    wide = (AcquireAcc(1, "bf16"), Loop("k", 2, (Wait(0, 1), Compute("add", 2, (Operand(0, 1),)), Pop(0, 1))),
            *GOOD[2:])
    p = pipeline(wide)
    assert sorted(set(explore(p).rules())) == ["acc-overrun"]
    report = certify(p)
    assert not_proved(report) == {"acc-overrun:(0,0).compute:[1, 1]": Verdict.REFUTED}
    v = replayed(named(report, "acc-overrun:(0,0).compute:[1, 1]"), "acc-overrun")
    assert v["message"] == "compute(add, 2, b0[1]) uses 2 accumulator tiles, but the held acquire took 1"
    fixed = pipeline((AcquireAcc(2, "bf16"), *wide[1:]))
    assert explore(fixed).verdict == "ok"
    assert certify(fixed).exit_code == 0
    # Two acquires in turn: the second (1 tile) packs 1 tile; the first (2 tiles) computed 2.
    turns = (AcquireAcc(2, "bf16"), Compute("add", 2), ReleaseAcc(), *GOOD)
    assert explore(pipeline(turns)).verdict == "ok"
    assert certify(pipeline(turns)).exit_code == 0
    narrower = (AcquireAcc(2, "bf16"), Compute("add", 2), ReleaseAcc(), AcquireAcc(1, "bf16"), Compute("add", 2),
                *GOOD[1:])
    assert "acc-overrun" in explore(pipeline(narrower)).rules()
    assert not_proved(certify(pipeline(narrower))) == {"acc-overrun:(0,0).compute:[4]": Verdict.REFUTED}


# ---------------------------------------------------------------------------------------------- outputs, fills


def test_every_output_tile_is_written() -> None:
    """A mutant that drops the writer's data write: its output is never written (every trip value)."""
    dropped = prog(reader(2), ep(A, Engine.WRITER, Loop("k", 2, (Wait(0, 1), Pop(0, 1)))),
                   buffers=(buf(0, cap=2),), tensors=(IN, out(2)))
    assert explore(dropped).rules() == ["output-unwritten"]
    report = certify(dropped)
    assert not_proved(report) == {"output-unwritten:out": Verdict.REFUTED}
    v = replayed(named(report, "output-unwritten:out"), "output-unwritten")
    assert v["message"] == "output out ends with 2 of its 2 tiles never written (first: tile 0)"
    # A runtime number of blocks writes the whole output only at the trip's max: refuted, with the trip that misses.
    fill = (Reserve(0, 1), ReadTiles("in", Addr(0, (Term("k", 1),)), 1, 0), ReadBarrier(), Push(0, 1))
    trip = prog(ep(A, Engine.READER, Loop("k", "t", fill)),
                ep(A, Engine.WRITER, Loop("k", "t", wr())), buffers=(buf(0, cap=2),), tensors=(IN, out(2)),
                trips=(Trip("t", 2),))
    report = certify(trip)
    r = named(report, "output-unwritten:out")
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["trips"]["t"] < 2
    assert certify(copy(Loop("k", 2, wr()))).exit_code == 0


def test_a_push_publishes_filled_pages() -> None:
    """A reader loop issuing one ReadTiles fewer than the pages it pushes publishes a page nothing filled."""
    short = ep(A, Engine.READER, Reserve(0, 2), Loop("r", 1, (ReadTiles("in", Addr(0, (Term("r", 1),)), 1, 0),)),
               ReadBarrier(), Push(0, 2))
    p = copy(Wait(0, 2), WriteTiles(0, "out", Addr(0), 2), WriteBarrier(), Pop(0, 2), src=short)
    assert explore(p).rules() == ["cb-push-unfilled"]
    report = certify(p)
    assert not_proved(report) == {"cb-push-unfilled:(0,0).reader:[3]": Verdict.REFUTED}
    v = replayed(named(report, "cb-push-unfilled:(0,0).reader:[3]"), "cb-push-unfilled")
    assert v["message"] == "push(b0, 2) publishes 2 tiles but only 1 were written into its back since they were reserved"
    full = ep(A, Engine.READER, Reserve(0, 2), Loop("r", 2, (ReadTiles("in", Addr(0, (Term("r", 1),)), 1, 0),)),
              ReadBarrier(), Push(0, 2))
    assert certify(copy(Wait(0, 2), WriteTiles(0, "out", Addr(0), 2), WriteBarrier(), Pop(0, 2), src=full)).exit_code == 0
    # A buffer whose pages nothing reads is a synchronisation channel: its pushes publish tokens only.
    tokens = prog(ep(A, Engine.READER, Reserve(0, 1), Push(0, 1)), ep(A, Engine.WRITER, Wait(0, 1), Pop(0, 1)),
                  buffers=(buf(0, cap=1),))
    assert simulate(tokens).violations == ()
    assert certify(tokens).exit_code == 0


def test_a_read_landing_in_a_page_its_alias_still_holds_is_a_clobber() -> None:
    """c_16 aliases c_0 page for page (one CircularBufferConfig for two indices, reference §1.1): a read that lands
    in c_16's page while c_0 still holds that page unconsumed clobbers it, whether or not c_16 is pushed."""
    import attrs

    bufs = (buf(0, cap=1), attrs.evolve(buf(1, cap=1), alias_of=0))
    # The reader reads into c_16 once it has published c_0's page (a compute engine issues no NoC read).
    p = bare_prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
                     Reserve(1, 1), ReadTiles("in", Addr(1), 1, 1), ReadBarrier()),
                  ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "out", Addr(0), 1), WriteBarrier(), Pop(0, 1)),
                  buffers=bufs, tensors=(IN, out(1)))
    r = explore(p)
    f = r.violation("alias-clobber")
    assert f is not None
    assert (f.violation.position.engine, f.violation.position.path) == (RA, (5,))
    assert f.violation.message == ("read_tiles(in, 1, b1) lands in page 0 of b1, which is also page 0 of its alias "
                                   "b0 and still holds data not yet popped from b0")


def test_a_destination_count_mismatch_hangs_the_barrier_and_a_loopback_to_self_is_refused() -> None:
    """A write barrier waits until the acknowledgements received equal the num_dests issued (noc_nonblocking_api.h
    ``ncrisc_noc_nonposted_writes_flushed``): a count above the group's is a deadlock at the barrier, not bad input.
    A loopback multicast whose only destination is its sender is undefined (reference §1.2)."""
    g = Group(0, A, (1, 0, 1, 0))
    wrong = bare_prog(ep(A, Engine.READER, SemSet(0, 1), McastSetValid(0, 0, 2), WriteBarrier()),
                      ep(B, Engine.READER, SemWait(0, GE, 1), SemSet(0, 0)),
                      sems=(Semaphore(0, "v", (A, B)),), groups=(g,))
    assert validate(wrong) == []
    r = explore(wrong)
    assert [[(st.position.engine, st.position.path) for st in d.stuck] for d in r.deadlocks] == [[(RA, (2,))]]
    self_only = bare_prog(ep(A, Engine.READER, SemSet(0, 1), McastSetValid(0, 0, 1), WriteBarrier()),
                          sems=(Semaphore(0, "v", (A,)),), groups=(Group(0, A, (0, 0, 0, 0), loopback=True),))
    assert [v.rule for v in validate(self_only)] == [
        "a loopback multicast to the sender alone is undefined (hangs or no-ops have been seen): the rectangle needs "
        "another site"]


def test_the_ledger_names_every_rule() -> None:
    """docs/semantics.md defines every rule the interpreter reports, and its fidelity ledger places the hardware
    rules issue 7 lists."""
    from pathlib import Path

    from verispatial.petri.position import RULES

    text = (Path(__file__).resolve().parent.parent / "docs" / "semantics.md").read_text(encoding="utf-8")
    missing = [r for r in RULES if f"`{r}`" not in text]
    assert missing == []
    ledger = text.split("## Fidelity ledger", 1)[1]
    for item in ("65536", "50183", "NOC1", "32-bit", "num_dests", "loopback", "DST", "CB indices"):
        assert item in ledger, item
