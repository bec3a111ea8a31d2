"""Every verdict stands on its own (issue 7, deliverables 4 and 5).

- A proof records the obligations it leans on (``Result.assumes``) and is proved only while they are
  (``report.settle``): a deadlock proof that read a flag word through the constant of its source word fails to
  prove when the source is rewritten before the flag left, and the interpreter's search refutes the deadlock.
- A refutation's replay shows that violation, at that op: a lost-flag obligation is not confirmed by a deadlock
  elsewhere, a deadlock obligation not by another component's deadlock.
- A deadlock candidate of a program too wide for the explorer (more than six engines) is replayed by the directed
  search that follows the candidate's positions, where round robin and seeded random schedules miss it.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from builders import EQ, GE, RA, RB, A, B, buf, ep, prog, sem
from verdicts import one

from verispatial.certify.assume import COVERAGE_RULES
from verispatial.certify.checker import _confirm
from verispatial.certify.reach import analyse
from verispatial.certify.report import Result, Verdict, settle
from verispatial.driver.run import certify
from verispatial.driver.search import search_deadlock
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    BufferAt,
    Engine,
    EngineProgram,
    Group,
    Loop,
    McastSetValid,
    Op,
    Pop,
    Program,
    Push,
    Reserve,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Wait,
    WriteBarrier,
)
from verispatial.ir.program import program_summary
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.report.sarif import Artifact, sarif_log
from verispatial.report.text import report_lines


def leans_on(r: Result) -> tuple[str, ...]:
    """What ``r`` assumes besides the coverage rules every reachability query lists."""
    return tuple(x for x in r.assumes if x not in COVERAGE_RULES)


# ------------------------------------------------------------------------------------------------- settle


def test_settle_downgrades_along_chains_and_names_the_assumption() -> None:
    rs = [
        Result("semaphore", "b", Verdict.REFUTED, "lost update"),
        Result("deadlock", "a", Verdict.PROVED, "unsat", assumes=("b",)),
        Result("balance", "c", Verdict.PROVED, "totals", assumes=("a",)),
        Result("memory", "d", Verdict.PROVED, "disjoint", assumes=("nowhere",)),
        Result("async-noc", "x", Verdict.PROVED, "px", assumes=("y",)),
        Result("async-noc", "y", Verdict.PROVED, "py", assumes=("x",)),
    ]
    got = {r.name: r for r in settle(rs)}
    assert got["b"].verdict == Verdict.REFUTED
    assert (got["a"].verdict, got["a"].reason) == (
        Verdict.FAILED, "not proved on its own: it assumes b (refuted); proved only under that assumption: unsat")
    assert got["c"].verdict == Verdict.FAILED
    assert "it assumes a (failed-to-prove)" in got["c"].reason
    assert got["d"].verdict == Verdict.FAILED
    assert "it assumes nowhere (no such obligation)" in got["d"].reason
    # Mutual assumptions of proved results are one joint induction: they stay proved.
    assert (got["x"].verdict, got["y"].verdict) == (Verdict.PROVED, Verdict.PROVED)
    assert [r.name for r in settle(rs)] == [r.name for r in rs]


# ------------------------------------------------------------------------------ a flag source rewritten early

F, R = 0, 1  # the flag semaphore (a word on both sites: the sender's is the flag's source) and the ready counter


def flag_source_reused(flush: bool) -> Program:
    """The receiver invalidates its flag and says it is ready; the sender waits for that, multicasts its own word of
    the flag (VALID, set once at its start) and then sets that word back to 0 — without a flush in between
    (``flush`` False) the multicast may read 0 when it leaves, the flag never arrives and the receiver hangs."""
    g = Group(0, A, (1, 0, 1, 0))
    sender = ep(A, Engine.READER, SemSet(F, 1), SemWait(R, EQ, 1), SemSet(R, 0), McastSetValid(F, 0, 1),
                *((WriteBarrier(),) if flush else ()), SemSet(F, 0), WriteBarrier())
    receiver = ep(B, Engine.READER, SemSet(F, 0), SemInc(R, A, 1), SemWait(F, EQ, 1), AtomicBarrier())
    p = prog(sender, receiver, sems=(sem(F, A, B), sem(R, A)), groups=(g,))
    assert validate(p) == []
    return p


def test_a_deadlock_proof_through_a_rewritten_flag_source_does_not_stand() -> None:
    p = flag_source_reused(flush=False)
    ex = explore(p)
    assert ex.deadlocks
    assert "async-source-reuse" in ex.rules()
    report = certify(p)
    reuse = one(report, f"async-source-reuse:{RA}:[4]")
    assert reuse.verdict == Verdict.REFUTED
    flag = one(report, "sem-exact:sem0@(1,0)")
    assert leans_on(flag) == (f"async-source-reuse:{RA}:[4]",)
    assert flag.verdict == Verdict.FAILED
    assert flag.reason.startswith(f"not proved on its own: it assumes async-source-reuse:{RA}:[4] (refuted)")
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    # The deadlock proof (which assumed sem-exact:sem0@(1,0)) is lost and the interpreter's search, asked again,
    # finds the hang: a refutation stands on its replay and assumes nothing.
    assert (dl.verdict, dl.assumes) == (Verdict.REFUTED, ())
    assert dl.counterexample is not None
    assert dl.counterexample["kind"] == "deadlock"
    assert [s["position"]["engine"] for s in dl.counterexample["stuck"]] == [RB]


def test_the_flushed_source_proves_with_its_assumptions_recorded() -> None:
    p = flag_source_reused(flush=True)
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert leans_on(one(report, "sem-exact:sem0@(1,0)")) == ("async-source-reuse",)
    (dl,) = [r for r in report.results if r.family == "deadlock"]
    assert set(dl.assumes) >= {"sem-exact:sem0@(1,0)", "sem-exact:sem1@(0,0)"}


def test_assumptions_appear_in_json_sarif_and_text() -> None:
    p = flag_source_reused(flush=False)
    report = certify(p)
    doc = report.to_json()
    row = next(x for x in doc["results"] if x["name"] == "sem-exact:sem0@(1,0)")
    assert row["assumes"][-1] == f"async-source-reuse:{RA}:[4]"
    json.dumps(doc)
    props = next(x["properties"] for x in sarif_log([Artifact("p.json", report)], report.exit_code)["runs"][0]["results"]
                 if x["properties"]["obligation"] == "sem-exact:sem0@(1,0)")
    assert props["assumes"] == row["assumes"]
    lines = [t for t, _ in report_lines(report, program_summary(p))]
    i = lines.index(next(t for t in lines if t.startswith("failed-to-prove semaphore/sem-exact:sem0@(1,0)")))
    assert lines[i + 1] == "    assumes: " + ", ".join(row["assumes"])


# ----------------------------------------------------------------------------------- replays of that violation


def test_a_lost_flag_is_not_confirmed_by_a_hang_elsewhere() -> None:
    """The receiver waits for VALID, invalidates and then waits for a page nobody pushes: it hangs at that wait.
    No flag is lost, so a "merged flags" candidate for its flag word must not replay (it used to, through any
    deadlock with the owner stuck anywhere)."""
    g = Group(0, A, (1, 0, 1, 0))
    sender = ep(A, Engine.READER, SemSet(F, 1), McastSetValid(F, 0, 1), WriteBarrier())
    receiver = ep(B, Engine.READER, SemWait(F, EQ, 1), SemSet(F, 0), Wait(0, 1), Pop(0, 1))
    producer = ep(B, Engine.WRITER, Reserve(0, 1))
    p = prog(sender, receiver, producer, buffers=(buf(0, B),), sems=(sem(F, A, B),), groups=(g,))
    assert validate(p) == []
    dl = explore(p).deadlocks[0]
    assert [str(s.position.path) for s in dl.stuck if s.position.engine == RB] == ["(2,)"]
    a = analyse(p)
    claim: dict[str, Any] = {"kind": "state", "rule": "sem-flag-early", "flag": "merged", "engine": RB, "trips": {},
             "positions": {RA: "finished", RB: {"path": [0], "iteration": {}, "op": "SemWait"},
                           "(1,0).writer": "finished"},
             "summary": "two flags for sem0@(1,0) can be issued before (1,0).reader saw the first"}
    got = _confirm(a, Result("semaphore", "sem-flag-early:sem0@(1,0)", Verdict.REFUTED, str(claim["summary"]), claim))
    assert got.verdict == Verdict.FAILED
    assert got.reason.startswith("candidate not replayed by the interpreter")


def test_a_deadlock_obligation_is_refuted_only_by_a_hang_of_its_own_component() -> None:
    hang = ep(A, Engine.READER, Wait(0, 1), Pop(0, 1))
    idle = ep(A, Engine.WRITER, Reserve(0, 1))
    fine = [ep(B, Engine.READER, Loop("k", 2, (Reserve(1, 1), Push(1, 1)))),
            ep(B, Engine.WRITER, Loop("k", 2, (Wait(1, 1), Pop(1, 1))))]
    p = prog(hang, idle, *fine, buffers=(buf(0, A), buf(1, B, cb=0)))
    assert validate(p) == []
    a = analyse(p)
    (mine,) = [c for c in a.components if RA in c]
    (other,) = [c for c in a.components if RB in c]
    assert search_deadlock(p, mine) is not None
    assert search_deadlock(p, other) is None
    report = certify(p)
    assert {r.name: r.verdict for r in report.results if r.family == "deadlock"} == {
        f"deadlock:{RA}+1": Verdict.REFUTED, f"deadlock:{RB}+1": Verdict.PROVED}


# ------------------------------------------------------------------------------ the directed deadlock search

WIDE_SITES = tuple(Site(x, y) for y in range(2) for x in range(2))


def late_waiter(gap: int = 160, work: int = 40) -> Program:
    """Eight engines on four sites, each site a producer and a consumer of its own two-page buffer. The waiter
    (0,0).reader does ``work`` reserve/push pairs, then waits for its word to equal 1 and then to reach 2; (1,0).reader
    increments that word, does ``gap`` reserve/push pairs and increments again. If the waiter is more than
    ``gap - work`` pairs behind, both increments landed before its equality wait: it hangs. Round robin keeps them in
    step and a random schedule is that far behind with a probability of about one in ten thousand; the candidate the
    solver proposes (the waiter at its equality wait, the incrementer finished) is a state the directed search
    reaches by driving every engine there."""
    s = attrs.evolve(sem(0, A), host_init=True)  # only counts up: the host re-initializes it at launch
    programs: list[EngineProgram] = []
    buffers = []
    for i, site in enumerate(WIDE_SITES):
        buffers.append(buf(i, site, cap=2, cb=0))
        n = work if site == A else gap if site == B else 50
        body = (Reserve(i, 1), Push(i, 1))
        ops: tuple[Op, ...]
        if site == A:
            ops = (Loop("k", n, body), SemWait(0, EQ, 1), SemWait(0, GE, 2))
        elif site == B:
            ops = (SemInc(0, A, 1), Loop("k", n, body), SemInc(0, A, 1), AtomicBarrier())
        else:
            ops = (Loop("k", n, body),)
        programs.append(EngineProgram(site, Engine.READER, ops))
        programs.append(EngineProgram(site, Engine.WRITER, (Loop("k", n, (Wait(i, 1), Pop(i, 1))),)))
    p = attrs.evolve(prog(*programs, buffers=tuple(buffers), sems=(s,)),
                     memory=tuple(BufferAt(b.id, WORMHOLE.reserved_base, 2 * 2048) for b in buffers))
    assert validate(p) == []
    return p


def test_a_wide_deadlock_that_round_robin_and_random_schedules_miss_is_refuted() -> None:
    p = late_waiter()
    assert len(p.programs) == 8
    assert simulate(p).status == "terminated"
    assert all(simulate(p, seed=s).status == "terminated" for s in range(12))
    report = certify(p)
    over = one(report, "sem-overshoot:sem0@(0,0)")
    assert over.verdict == Verdict.REFUTED
    assert over.counterexample is not None
    replay = over.counterexample["replay"]
    assert replay["replayed_by"].startswith("drive to the candidate positions")
    # Driven there, the waiter sits at its equality wait when the second increment lands: that very violation.
    assert (replay["violation"]["rule"], replay["violation"]["position"]["engine"],
            replay["violation"]["position"]["path"]) == ("sem-overshoot", RA, [1])
    (dl,) = [r for r in report.results if r.name.startswith("deadlock:(0,0).reader")]
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None
    assert dl.counterexample["replayed_by"].startswith("drive to the candidate positions")
    assert [x.name for x in report.results if x.verdict != Verdict.PROVED] == [
        "sem-overshoot:sem0@(0,0)", "deadlock:(0,0).reader+3"]
    # Waiting for at least 1 instead of exactly 1 proves.
    fixed = attrs.evolve(p, programs=tuple(
        attrs.evolve(e, ops=(e.ops[0], SemWait(0, GE, 1), SemWait(0, GE, 2))) if e.key == RA else e
        for e in p.programs))
    assert certify(fixed).exit_code == 0


def test_plain_results_equal_the_constructors() -> None:
    # ``plain_results`` builds a reused slice's results through the fields' slots; each must be the very value the
    # constructor makes (every field, defaults included), hash and immutability alike.
    from verispatial.certify.report import plain_results

    rows = [("deadlock", "slice3/deadlock:(0,0).reader+2", Verdict.PROVED, "proved as ..."),
            ("balance", "slice4/balance-cb:b7", Verdict.FAILED, "")]
    got = plain_results(*(iter(column) for column in zip(*rows, strict=True)))
    want = [Result(*row) for row in rows]
    assert got == want
    assert [attrs.astuple(x, recurse=False) for x in got] == [attrs.astuple(x, recurse=False) for x in want]
    assert [hash(x) for x in got] == [hash(x) for x in want]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        got[0].name = "x"  # type: ignore[misc]


def test_a_timed_result_equals_the_constructors() -> None:
    # ``timed_result`` (a cross-phase coverage proof) is built through the slots too: the constructor's value.
    from verispatial.certify.report import timed_result

    got = timed_result("happens-before", "hb-activation:t:(0,0).reader[3, 1]", Verdict.PROVED, "exact", 0.25)
    want = Result("happens-before", "hb-activation:t:(0,0).reader[3, 1]", Verdict.PROVED, "exact", seconds=0.25)
    assert got == want
    assert attrs.astuple(got, recurse=False) == attrs.astuple(want, recurse=False)
    assert hash(got) == hash(want)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        got.seconds = 0.0  # type: ignore[misc]
