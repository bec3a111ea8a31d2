"""Several engines waiting on one circular buffer (issue 16, item 3): SDPA decode's ``cur_pos`` page waited on by
compute and the writer, popped by compute (tt-metal #44366). The correct sharing — the writer tells compute it has
read the position before compute pops — proves; the vendor's bug — compute pops before the writer waits — is
refuted as a deadlock that replays."""

from __future__ import annotations

import attrs

from tests.shared_wait_programs import COMPUTE, CUR_POS, WRITER, sdpa_cur_pos
from verispatial.certify.checker import certify
from verispatial.certify.report import Verdict
from verispatial.ir import rules as R
from verispatial.ir.core import Engine
from verispatial.ir.ops import Pop, Wait
from verispatial.ir.sharing import sharing_waiters
from verispatial.petri.explore import explore


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
    got = _verdicts(p)
    assert any(k.startswith(R.CB_SINGLE_CONSUMER) and v is Verdict.REFUTED for k, v in got.items())


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
    assert not any(d.stuck and d.stuck[0].position.engine == WRITER and d.stuck[0].position.path == (0,)
                   for d in r.deadlocks)
