"""Several engines waiting on one circular buffer (issue 16, item 3): SDPA decode's ``cur_pos`` page waited on by
compute and the writer, popped by compute (tt-metal #44366). The correct sharing — the writer tells compute it has
read the position before compute pops — proves; the vendor's bug — compute pops before the writer waits — is
refuted as a deadlock that replays."""

from __future__ import annotations

import attrs
from hypothesis import HealthCheck, given, settings

from tests.shared_wait_programs import COMPUTE, CUR_POS, SITE, WRITER, sdpa_cur_pos
from tests.test_differential import check_agreement, disagreements
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import rules as R
from verispatial.ir.core import Engine
from verispatial.ir.ops import Pop, Wait
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.ir.sharing import sharing_waiters
from verispatial.petri.explore import explore
from verispatial.strategies.programs import programs


def _verdicts(p):  # type: ignore[no-untyped-def]
    return {r.name: r.verdict for r in certify(p, cache=False).results}


def test_the_writer_shares_the_page_compute_pops() -> None:
    assert sharing_waiters(sdpa_cur_pos(handshake=True)) == {CUR_POS: frozenset({WRITER})}


def test_correct_sharing_proves_and_the_oracle_agrees() -> None:
    p = sdpa_cur_pos(handshake=True)
    got = _verdicts(p)
    assert all(v is Verdict.PROVED for v in got.values()), {k: v for k, v in got.items() if v is not Verdict.PROVED}
    r = explore(p)
    assert r.complete
    assert not r.deadlocks
    assert not r.violations


def test_issue_44366_compute_pops_before_the_writer_waits_is_a_replayed_deadlock() -> None:
    p = sdpa_cur_pos(handshake=False)
    r = explore(p)
    assert r.deadlocks
    stuck = r.deadlocks[0].stuck
    assert [s.position.engine for s in stuck] == [WRITER]
    assert stuck[0].position.op == "wait(b0, 1)"
    assert "pushed-popped=1-1=0 < 1" in stuck[0].reason
    got = certify(p, cache=False)
    dead = [x for x in got.results if x.family == R.DEADLOCK]
    assert dead
    assert dead[0].verdict is Verdict.REFUTED
    assert (dead[0].counterexample or {}).get("kind") == "deadlock"
    # ... and the writer's read of the position from a slot compute already freed is the other face of the race
    reads = [x for x in got.results if x.name.startswith(f"{R.CB_READ_UNWAITED}:{WRITER}")]
    assert reads
    assert reads[0].verdict is Verdict.REFUTED


def test_two_engines_popping_is_still_two_consumers() -> None:
    """#55996 (moe tilize ``total_chunks``): compute and the writer both wait and pop the one page; only one RISC may
    pop a buffer (cb_api.h, cb_pop_front)."""
    p = sdpa_cur_pos(handshake=False, writer_pops=True)
    assert sharing_waiters(p) == {}
    r = explore(p)
    assert any(v.violation.rule == R.CB_SINGLE_CONSUMER for v in r.violations)
    report = certify(p, cache=False)
    got = {x.name: x.verdict for x in report.results}
    assert any(k.startswith(R.CB_SINGLE_CONSUMER) and v is Verdict.REFUTED for k, v in got.items())
    # the two pops free two pages of one pushed: the interpreter's cb-pop-uncovered is not proved away
    assert R.CB_POP_UNCOVERED not in got
    assert disagreements(r, report, p) == []


def test_a_compute_waiter_counts_only_its_own_pops() -> None:
    """The unpacker's llk_wait_tiles compares tiles_received with its own tiles_acked copy: a compute engine that waits
    on a page the writer pops never sees that pop, so waiting after it does not hang (a data-movement waiter does)."""
    p = sdpa_cur_pos(handshake=False)
    # swap the roles: the writer pops c_8 right after its wait, compute only waits and reads it, later
    progs = []
    for ep in p.programs:
        if ep.engine is Engine.COMPUTE:
            ep = attrs.evolve(ep, ops=tuple(o for o in ep.ops if not isinstance(o, Pop)))
        elif ep.engine is Engine.WRITER:
            ep = attrs.evolve(ep, ops=(Wait(CUR_POS, 1), Pop(CUR_POS, 1)))
        progs.append(ep)
    q = attrs.evolve(p, programs=tuple(progs), tensors=p.tensors[:1])
    assert sharing_waiters(q) == {CUR_POS: frozenset({COMPUTE})}
    r = explore(q)
    assert not r.deadlocks
    # its read of the freed slot is still a finding: the writer's pop freed the page it reads
    assert any(v.violation.rule == R.CB_READ_UNWAITED and v.violation.position.engine == COMPUTE for v in r.violations)
    got = _verdicts(q)
    assert all(v is not Verdict.REFUTED for k, v in got.items() if k.startswith(R.DEADLOCK))
    assert any(k.startswith(f"{R.CB_READ_UNWAITED}:{COMPUTE}") and v is Verdict.REFUTED for k, v in got.items())


def test_a_page_pushed_for_each_lap_keeps_a_late_waiter_live() -> None:
    """Two pushes into a one-page buffer: the writer waiting after compute popped the first page sees the second one
    (the counters, not the order of the waits, decide); with no handshake its read may still meet a freed slot."""
    p = sdpa_cur_pos(handshake=False, pushes=2)
    r = explore(p)
    assert r.complete
    assert not r.deadlocks
    reads = {(v.violation.rule, v.violation.position.engine, v.violation.position.path) for v in r.violations}
    assert reads == {(R.CB_READ_UNWAITED, WRITER, (2,))}  # between compute's pop and the second push
    assert disagreements(r, certify(p, cache=False), p) == []


def test_promela_refuses_a_shared_front_by_name() -> None:
    import pytest

    from verispatial.petri.promela import PromelaUnsupported, to_promela

    with pytest.raises(PromelaUnsupported, match="several waiters on one buffer"):
        to_promela(sdpa_cur_pos(handshake=True))


def test_a_constant_page_waited_by_two_engines_and_never_popped_proves() -> None:
    """Nobody pops: compute (the consumer) and the writer (sharing) both wait on the one page, which the launch's end
    resets (balance-cb)."""
    p = sdpa_cur_pos(handshake=False, compute_pops=False)
    assert sharing_waiters(p) == {CUR_POS: frozenset({WRITER})}
    got = _verdicts(p)
    assert all(v is Verdict.PROVED for v in got.values()), {k: v for k, v in got.items() if v is not Verdict.PROVED}
    r = explore(p)
    assert not r.deadlocks
    assert not r.violations


def _early_entry(*, ordered: bool) -> Program:
    """A two-page token channel: the reader pushes three tokens, compute waits and pops one at a time, the writer
    waits for two without popping. ``ordered``: compute's first pop waits for the writer's word that says its wait
    returned."""
    from verispatial.ir import WORMHOLE, Buffer, BufferAt, EngineProgram, Push, Reserve, SemInc, SemWait, WaitCond
    from verispatial.ir.ops import AtomicBarrier
    from verispatial.ir.program import Semaphore

    site = SITE
    reader = (Reserve(0, 1), Push(0, 1)) * 3
    step = (Wait(0, 1), Pop(0, 1))
    compute = ((Wait(0, 1), SemWait(0, WaitCond.GE, 1), Pop(0, 1)) if ordered else step) + step * 2
    writer = (Wait(0, 2), *((SemInc(0, site, 1), AtomicBarrier()) if ordered else ()))
    sems = (Semaphore(0, "waited", (site,), 0, host_init=True),) if ordered else ()
    return Program("early_entry", WORMHOLE, buffers=(Buffer(0, "c_0", site, 0, 1, 2, "bf16"),), semaphores=sems,
                   programs=(EngineProgram(site, Engine.READER, reader), EngineProgram(site, Engine.COMPUTE, compute),
                             EngineProgram(site, Engine.WRITER, writer)),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * 2048),))


def test_a_pop_while_a_data_movement_waiter_is_blocked_is_a_finding() -> None:
    """cb_wait_front reads tiles_acked once on entry (dataflow_api.h): a writer blocked in its wait for two pages when
    compute pops the first may return once the second push lands, counting the freed page."""
    p = _early_entry(ordered=False)
    r = explore(p)
    hits = [v.violation for v in r.violations if v.violation.rule == R.CB_READ_UNWAITED]
    assert hits
    assert hits[0].position.engine == WRITER
    assert hits[0].position.path == (0,)
    got = _verdicts(p)
    assert got[f"{R.CB_READ_UNWAITED}:{WRITER}:[0]"] is Verdict.REFUTED


def test_a_pop_ordered_after_the_waiter_returned_proves() -> None:
    p = _early_entry(ordered=True)
    r = explore(p)
    assert not r.deadlocks
    assert not r.violations
    got = _verdicts(p)
    assert all(v is Verdict.PROVED for v in got.values()), {k: v for k, v in got.items() if v is not Verdict.PROVED}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(programs().filter(lambda p: bool(sharing_waiters(p))))
def test_the_checker_agrees_with_the_oracle_on_drawn_sharing_waiters(p: Program) -> None:
    """The random programs' second waiter (strategies/programs.py ``_shared_wait``), correct and broken, mutated."""
    found = check_agreement(p)
    assert found == [], "\n".join([*found, dumps(p)])


def test_every_mutant_of_the_shared_cur_pos_hand_off_is_judged_soundly() -> None:
    """Mutation testing of the proved form: dropping the handshake's wait is the #44366 mutant, and no mutant is
    proved while the oracle breaks it."""
    from verispatial.mutate import judge, kill_rate, mutants

    p = sdpa_cur_pos(handshake=True)
    outcomes = [judge(m) for m in mutants(p)]
    assert not [o for o in outcomes if o.status in ("unsound", "error")]
    dropped = [o for o in outcomes if o.mutant.kind == "drop" and o.mutant.engine == COMPUTE
               and o.mutant.what == "drop SemWait"]
    assert dropped
    assert dropped[0].status == "refuted"
    killed, live = kill_rate(outcomes)
    assert killed == live  # measured: 41 of 41 (12 mutants still correct)


def _writes_the_shared_page(*, flushed: bool) -> Program:
    """The writer waits on c_0 (compute pops it) and writes its page out; it tells compute with a semaphore, after a
    write barrier (``flushed``) or before it, and the reader refills the one-page ring once compute popped."""
    from verispatial.ir import (
        WORMHOLE,
        Addr,
        Buffer,
        BufferAt,
        EngineProgram,
        Push,
        ReadBarrier,
        ReadTiles,
        Reserve,
        Role,
        SemInc,
        SemWait,
        Tensor,
        WaitCond,
        WriteBarrier,
        WriteTiles,
    )
    from verispatial.ir.ops import AtomicBarrier
    from verispatial.ir.program import Semaphore

    reader = (Reserve(0, 1), ReadTiles("x", Addr(0), 1, 0), ReadBarrier(), Push(0, 1)) * 2
    compute = (Wait(0, 1), SemWait(0, WaitCond.GE, 1), Pop(0, 1), Wait(0, 1), Pop(0, 1))
    write = (Wait(0, 1), WriteTiles(0, "y", Addr(0), 1))
    tell = (SemInc(0, SITE, 1), AtomicBarrier())
    writer = (*write, WriteBarrier(), *tell) if flushed else (*write, *tell, WriteBarrier())
    return Program("writes_the_shared_page", WORMHOLE,
                   tensors=(Tensor("x", (32, 64), "bf16", Role.INPUT), Tensor("y", (32, 32), "bf16", Role.OUTPUT)),
                   buffers=(Buffer(0, "c_0", SITE, 0, 1, 1, "bf16"),),
                   semaphores=(Semaphore(0, "written", (SITE,), 0, host_init=True),),
                   programs=(EngineProgram(SITE, Engine.READER, reader), EngineProgram(SITE, Engine.COMPUTE, compute),
                             EngineProgram(SITE, Engine.WRITER, writer)),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, 2048),))


def test_a_consumer_pop_of_a_page_a_sharing_waiter_still_writes_out_is_source_reuse() -> None:
    p = _writes_the_shared_page(flushed=False)
    r = explore(p)
    assert {(v.violation.rule, v.violation.position.engine) for v in r.violations} >= {
        (R.ASYNC_SOURCE_REUSE, COMPUTE)}
    report = certify(p, cache=False)
    got = {x.name: x.verdict for x in report.results}
    assert got[f"{R.ASYNC_SOURCE_REUSE}:{COMPUTE}:[2]"] is Verdict.REFUTED
    assert disagreements(r, report, p) == []  # the reader's refill after the pop is found too


def test_a_sharing_waiter_that_flushes_before_it_tells_proves() -> None:
    p = _writes_the_shared_page(flushed=True)
    r = explore(p)
    assert not r.violations
    assert not r.deadlocks
    got = _verdicts(p)
    assert all(v is Verdict.PROVED for v in got.values()), {k: v for k, v in got.items() if v is not Verdict.PROVED}


def test_the_schedule_witness_never_proves_a_falling_wait() -> None:
    """The schedule theorem needs every wait monotone in the other engines' progress; the consumer's pops take pages
    from what a data-movement sharing waiter counts, so such a component goes to the search."""
    from verispatial.certify.reach import analyse
    from verispatial.families.deadlock.encoding import check_deadlock

    for hs in (False, True):
        p = sdpa_cur_pos(handshake=hs)
        got = check_deadlock(analyse(p), {b.id for b in p.buffers}, method="schedule")
        assert got
        assert all(r.verdict is not Verdict.PROVED for r in got)
        assert "falls as they progress" in got[0].reason
