"""The interpreter's runs from launch as witnesses for obligations the solver left undecided (refute only).

Before a result is reported failed-to-prove, the interpreter's runs from launch — round robin, the seeded random
schedules (``replay.launch_runs``), the explorer for small programs (``replay.explored``); each computed once per
program and shared by every result — are asked whether one of them breaks *that* obligation: one of the interpreter rules its
refutation replays as (``ir/rules.py``'s ``replays_as``; for a word's ``sem-protocol`` or ``sem-exact``, the
exact-counting rules) at *that* obligation's subject (its op, buffer, word, tensor, aliased pair, boundary, or for a
deadlock a run that ends stuck in its component). Such a run is the counterexample, replayed by construction; a
violation elsewhere or of another rule refutes nothing here. This path only ever turns failed-to-prove into
refuted: it never proves, and a run that shows nothing leaves the result as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import attrs

from verispatial import budget
from verispatial.budget import BudgetExhausted
from verispatial.certify.reach import Analysis
from verispatial.certify.replay import (
    EXPLORE_ENGINES,
    EXPLORE_STATES,
    deadlock_cex,
    explored,
    in_component,
    launch_runs,
)
from verispatial.certify.report import Result, Verdict
from verispatial.ir import obligation
from verispatial.ir import rules as R
from verispatial.ir.obligation import (
    AliasRef,
    BoundaryRef,
    BufferRef,
    ComponentRef,
    OpRef,
    OrderingRef,
    TensorRef,
    WordRef,
)
from verispatial.ir.ops import SemRmw, SemSet, SemWait
from verispatial.ir.program import Program, walk
from verispatial.petri.explore import ExploreResult
from verispatial.petri.interp import SimResult, replay
from verispatial.petri.position import Position, Violation

#: The interpreter rules that break a word's exact counting (``sem-protocol`` / ``sem-exact``: the protocol the
#: word's counter model needs; docs/semantics.md "Semaphores"). A lost flag shows as ``sem-set-race`` at its reset.
EXACT_COUNTING = frozenset({R.SEM_SET_RACE, R.SEM_OVERSHOOT, R.SEM_RMW_RACE})

#: States times ops the explorer may spend before failed-to-prove (``explore_states``): 1,086 states for
#: examples/broken/za_remote_read_unpublished.json (46 ops, about 0.1 ms a state, certified in 0.4 s), where a whole
#: search (11,737 states) turns nothing.
EXPLORE_WORK = 50_000

#: Families whose results name no rule of the program (a certificate section, a spent budget, a fragment).
_NOT_RULES = frozenset({R.CERTIFICATE, R.BUDGET, R.FRAGMENT})


@attrs.frozen
class Sought:
    """What a run must show to refute one obligation: a violation of one of ``rules`` that ``at`` accepts (at the
    obligation's subject), or for a deadlock obligation (``component`` not None) a deadlock with an engine of that
    component stuck."""

    rules: frozenset[str]
    at: Callable[[Violation], bool]
    component: frozenset[str] | None = None


def word_of(a: Analysis, v: Violation) -> WordRef | None:
    """The semaphore word violation ``v`` is about: its subject when it names one (``balance-sem``), else the word of
    the semaphore op it is reported at — a SemSet, SemWait or SemRmw reaches only the word of its own site (the
    interpreter reports ``sem-set-race``, ``sem-overshoot`` and ``sem-rmw-race`` there). None otherwise."""
    if isinstance(v.subject, WordRef):
        return v.subject
    view = a.views.get(v.position.engine)
    if view is None or v.position.path is None:
        return None
    leaf = next((lf for lf in view.leaves if lf.path == v.position.path), None)
    if leaf is None or not isinstance(leaf.op, (SemSet, SemWait, SemRmw)):
        return None
    return WordRef(leaf.op.sem, view.program.site)


def sought(a: Analysis, r: Result) -> Sought | None:
    """What refutes the failed result ``r`` from a run, read from its typed obligation id; None when no run can
    (rules decided by arithmetic on the text, a certificate section, a spent budget, a subject no violation names)."""
    if r.family in _NOT_RULES:
        return None
    try:
        oid = obligation.parse(r.name)
    except obligation.BadObligationId:
        return None
    s = oid.subject
    if oid.kind == R.DEADLOCK:
        if not isinstance(s, ComponentRef):
            return None
        comp = next((c for c in a.components if s.engine in c), None)
        return None if comp is None else Sought(frozenset(), lambda _v: False, comp)
    rules = EXACT_COUNTING if oid.kind in (R.SEM_PROTOCOL, R.SEM_EXACT) else frozenset(oid.rule.replays_as)
    if not rules or oid.rule.replay in (R.Replay.STATIC, R.Replay.DEADLOCK):
        return None
    if isinstance(s, WordRef):
        return Sought(rules, lambda v: word_of(a, v) == s)
    if isinstance(s, OpRef):
        return Sought(rules, lambda v: v.position.engine == s.engine and v.position.path == s.path)
    if isinstance(s, (BufferRef, AliasRef, TensorRef, BoundaryRef)):
        return Sought(rules, lambda v: v.subject == s)
    if isinstance(s, OrderingRef):
        ops = {(s.first.engine, s.first.path)} | (set() if s.second is None else {(s.second.engine, s.second.path)})
        return Sought(rules, lambda v: v.subject == TensorRef(s.tensor)
                      and (v.position.engine, v.position.path) in ops)
    return None


def _named(oid: obligation.ObligationId, v: dict[str, Any] | None) -> str:
    """The refuted result's name: the obligation's own, but a word's protocol (never refuted on its own, rule
    registry ``Replay.NONE``) by the exact-counting rule the run breaks (as ``each_exact`` names a refuted word)."""
    if oid.kind in (R.SEM_PROTOCOL, R.SEM_EXACT) and v is not None:
        return str(attrs.evolve(oid, kind=str(v["rule"])))
    return str(oid)


def refute_by_runs(a: Analysis, results: list[Result]) -> list[Result]:
    """``results`` with every failed-to-prove one that a run from launch breaks (``sought``) refuted, that run as
    its counterexample; the others as they were. The results are asked together, one run at a time, and no further
    run is made once each has been refuted: the runs from launch first (``replay.launch_runs``, shared with the
    runs certify made already), then the explorer within ``explore_states`` for a program of at most
    ``EXPLORE_ENGINES`` engines. The run's budget holds (``budget.check`` in the interpreter): once spent, the
    results not yet refuted stay failed-to-prove."""
    asked = {i: w for i, r in enumerate(results) if r.verdict == Verdict.FAILED and (w := sought(a, r)) is not None}
    if not asked:
        return results
    out = list(results)
    t0 = time.perf_counter()

    def found(shows: Callable[[Sought], dict[str, Any] | None]) -> None:
        for i in list(asked):
            got = shows(asked[i])
            if got is not None:
                out[i] = _refuted(a, results[i], asked.pop(i), got, results[i].seconds + time.perf_counter() - t0)

    try:
        for how, run in launch_runs(a.program):
            found(partial(_run_shows, how=how, run=run))
            if not asked:
                return out
            budget.check()
        if len(a.program.programs) <= EXPLORE_ENGINES:
            cap = explore_states(a.program)
            ex = explored(a.program, None, cap)
            found(partial(_search_shows, a, ex=ex, cap=cap))
    except BudgetExhausted:
        pass
    return out


def explore_states(program: Program) -> int:
    """The states the explorer may visit here: ``EXPLORE_WORK`` divided by the program's ops (every engine's, loop
    bodies once), at most ``replay.EXPLORE_STATES``. A bound on states times ops, the work of the search (a state's
    key and its enabled transitions grow with the program), fixed before the search: a search that runs to the cap
    where nothing turns costs far more than the certification it follows (the sharded layernorm with its read before
    the VALID flag, 292 ops: 60,000 states, 18 s, on a program certified in 6 s)."""
    ops = sum(1 for ep in program.programs for _ in walk(ep.ops))
    return min(EXPLORE_STATES, EXPLORE_WORK // max(ops, 1))


def _run_shows(want: Sought, how: str, run: SimResult) -> dict[str, Any] | None:
    """What run ``run`` (made as ``how``) shows of what ``want`` seeks, as ``confirm_rule`` reports one (the
    violation, or under ``DEADLOCK`` the deadlock's counterexample; its trips, steps and how it was run), else None.
    The runs are whole (never stopped at a violation), so every result asks the same ones."""
    comp = want.component
    if comp is not None:
        if run.status == R.DEADLOCK and in_component(comp, run.stuck):
            return {R.DEADLOCK: deadlock_cex(run, how), "trips": dict(run.trips), "replayed_by": how}
        return None
    for v in run.violations:
        if v.rule in want.rules and want.at(v):
            return {"violation": v.to_json(), "trips": dict(run.trips), "steps": run.steps, "replayed_by": how}
    return None


def _search_shows(a: Analysis, want: Sought, ex: ExploreResult, cap: int) -> dict[str, Any] | None:
    """What the explorer's violations and deadlocks ``ex`` found within ``cap`` states show of what ``want`` seeks
    (a deadlock fired again in the interpreter, as ``confirm_rule`` does), else None."""
    how = "explicit-state search"
    comp = want.component
    if comp is not None:
        for dl in ex.deadlocks:
            if dl.states > cap:
                continue
            run = replay(a.program, dl.trips, dl.trace)
            if run.status == R.DEADLOCK and in_component(comp, run.stuck):
                return {R.DEADLOCK: dl.to_json(), "trips": dict(dl.trips), "replayed_by": how}
        return None
    for f in ex.violations:
        if f.states <= cap and f.violation.rule in want.rules and want.at(f.violation):
            return {"violation": f.violation.to_json(), "trips": dict(f.trips), "trace": list(f.trace_text),
                    "replayed_by": how}
    return None


def _refuted(a: Analysis, r: Result, want: Sought, got: dict[str, Any], seconds: float) -> Result:
    oid = obligation.parse(r.name)
    if want.component is not None:
        dl = got[R.DEADLOCK]
        if "kind" not in dl:  # the explorer's deadlock: its transitions, which ``replay_schedule`` fires again
            stuck = ", ".join(str(Position.from_json(st["position"])) for st in dl["stuck"][:3])
            dl = {"kind": R.DEADLOCK, "trips": dl["trips"], "stuck": dl["stuck"], "schedule": dl["trace"],
                  "trace": dl["trace_text"], "replayed_by": got["replayed_by"],
                  "summary": f"deadlock after {len(dl['trace'])} transitions: {stuck}"}
        return Result(r.family, r.name, Verdict.REFUTED, str(dl["summary"]), dl, seconds)
    v = got["violation"]
    pos = v["position"]
    summary = f"a run of the interpreter from launch ({got['replayed_by']}) breaks it: {v['message']}"
    if oid.rule.replay == R.Replay.AT_OP:  # as the per-engine rules' refutations (``checker._rule_results``)
        cex: dict[str, Any] = {"kind": "rule", "rule": oid.kind, "engine": pos["engine"], "path": pos["path"],
                               "summary": summary, **got}
        return Result(r.family, r.name, Verdict.REFUTED, summary, cex, seconds)
    name = _named(oid, v)
    # ``rule``: the interpreter's, as ``checker._claim`` reads it to replay again (``replay_refutation``).
    cex = {"kind": "state", "rule": str(v["rule"]), "summary": summary, "trips": got["trips"],
           "engine": pos["engine"], "path": pos["path"], "replay": got}
    if oid.word is not None:
        cex["word"] = str(oid.word)
    if isinstance(oid.subject, BoundaryRef):  # the boundary ``checker._claim`` holds a replay to
        cex["boundary"] = oid.subject.section
    return Result(r.family, name, Verdict.REFUTED, summary, cex, seconds)
