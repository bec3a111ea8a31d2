"""Deadlock freedom (DESIGN §7 route step 2): is there a choice of one position per engine, consistent with
every reachability fact, in which every unfinished engine is blocked for good?

One query per independent component of engines, symbolic over every loop index and trip value. unsat proves
freedom for every trip value at once. sat is a candidate: the interpreter replays it; a replayed deadlock is a
refutation with its concrete stuck positions, a candidate that does not replay is excluded and the search
repeats (at most ``REFINEMENTS`` times), then the obligation fails to prove — never passes.

Before the search, a component whose buffers are all trusted is tried with a schedule witness (``schedule.py``):
one small query per blocking op and per engine instead of one query over every engine, which is what lets wide
multicast grids prove. A witness that is not derived or does not check falls back to the search.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import z3

from verispatial.certify import schedule
from verispatial.certify.canon import ProofMemo
from verispatial.certify.reach import Analysis, Decoded, StateQuery
from verispatial.certify.replay import (
    EXPLORE_STATES,
    Search,
    _simulate,
    deadlock_cex,
    explored,
    in_component,
    replay_deadlock,
    replay_schedule,
    search_confirmed,
)
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, all_of, any_of
from verispatial.ir import rules as R
from verispatial.ir.ops import AtomicBarrier, McastSend, McastSetValid, Pop, SemIncMcast, SemWait, WriteBarrier
from verispatial.ir.sharing import sees_own_pops_only, sharing_waiters
from verispatial.petri.explore import DeadlockFound, ViolationFound

REFINEMENTS = 6
#: How components are decided: "auto" (schedule witness, else the search), "search" (the search only), "schedule"
#: (the witness only: a witness that does not check fails to prove).
METHODS = ("auto", "search", "schedule")


def _stuck(sq: StateQuery, loose: bool = False) -> z3.BoolRef:
    """Every engine of the component finished or blocked, and at least one not finished. ``loose``: a wait on a
    word without a counter model (outside the decided protocols) may be blocked or not — for candidates only."""
    conj = []
    unfinished = []
    for e in sorted(sq.engines):
        pos = sq.enc.position(e)
        blocked = []
        for lf in pos.view.leaves:
            try:
                en = sq.cm.enabled(lf)
            except ValueError:
                if not loose:
                    raise
                en = z3.Bool(f"free-wait[{e}]{list(lf.path)}", sq.q.ctx)
            if en is not None:
                blocked.append(z3.And(pos.at(lf), z3.Not(en)))
        conj.append(z3.Or(pos.finished, *blocked) if blocked else pos.finished)
        unfinished.append(z3.Not(pos.finished))
    return z3.And(*conj, any_of(sq.q.ctx, unfinished))


def check_deadlock(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT,
                   inexact: set[str] | None = None, method: str = "auto",
                   cache: ProofMemo | None = None, search: Search | None = None) -> list[Result]:
    """One result per component that has a blocking op. ``inexact`` names semaphore words whose exact-counting
    obligations were not proved: their counter model is not known faithful, so a component using one fails to
    prove (its deadlock, if any, is reported through those obligations and the interpreter). ``method`` is one of
    ``METHODS`` (raises ValueError otherwise). With ``cache``, a component isomorphic to one already proved
    (``canon.py``; its inexact words and the method are part of the key) reuses that proof. ``search``: the
    interpreter's deadlock search where the counter model cannot decide (``replay.search_confirmed``: what it
    proposes refutes only when the interpreter reproduces it; without one such a component fails to prove)."""
    if method not in METHODS:
        raise ValueError(f"unknown deadlock method {method!r}: one of {', '.join(METHODS)}")
    inexact = inexact or set()
    out: list[Result] = []
    trip_sets = a.trip_sets()
    miscounted = miscounted_barriers(a)
    for comp in a.components:
        counted = {e: miscounted[e] for e in sorted(comp) if e in miscounted}
        if not counted and not any(lf.op.__class__.__name__ in ("Reserve", "Wait", "SemWait")
                                   for e in comp for lf in a.views[e].leaves):
            continue
        name = f"{R.DEADLOCK}:{min(comp)}" + (f"+{len(comp) - 1}" if len(comp) > 1 else "")
        if counted:
            # Outside the counter model and outside the proof cache (whose canonical form ignores num_dests).
            out.append(_miscounted(a, comp, name, counted, trip_sets, search))
            continue

        def compute(comp: frozenset[str] = comp, name: str = name) -> Result:
            return _decide(a, comp, name, trusted, trip_sets, rlimit, inexact or set(), method, search)
        if cache is None:
            out.append(compute())
            continue
        c = cache.canon(a, comp, trusted)
        bad = sorted(i for w, i in c.words.items() if w in inexact)
        out.append(cache.run(R.DEADLOCK, c, [method, bad, rlimit], name, compute))
    return out


def miscounted_barriers(a: Analysis) -> dict[str, str]:
    """Engine -> why its barriers count acknowledgements the counter model does not: the engine issues a multicast
    whose ``num_dests`` differs from its group's destinations and has a barrier of the kind that counts them
    (``WriteBarrier`` for ``McastSend``/``McastSetValid``, ``AtomicBarrier`` for ``SemIncMcast``). Such a barrier
    waits for acknowledged == expected exactly (noc_nonblocking_api.h ``ncrisc_noc_nonposted_writes_flushed``,
    ``ncrisc_noc_nonposted_atomics_flushed``): with a larger count it never passes once the multicast is issued,
    with a smaller one only while landings are due (docs/semantics.md "Acknowledgement counts"). The counter
    model treats barriers as never blocking, so these engines' components are decided by the interpreter alone.
    A barrier anywhere on the engine counts (even one before the multicast in the text): an over-approximation,
    which can only turn a proof into a replayed refutation or a failure to prove."""
    out: dict[str, str] = {}
    for e, view in a.views.items():
        kinds = {type(lf.op) for lf in view.leaves}
        for lf in view.leaves:
            op = lf.op
            if not isinstance(op, (McastSend, McastSetValid, SemIncMcast)):
                continue
            have = len(a.program.groups[op.group].destinations())
            barrier = AtomicBarrier if isinstance(op, SemIncMcast) else WriteBarrier
            if op.num_dests != have and barrier in kinds:
                out[e] = (f"{e}'s {type(op).__name__} at {list(lf.path)} states num_dests {op.num_dests} for group "
                          f"{op.group}'s {have} destinations and the engine has a {barrier.__name__}, whose "
                          "acknowledgement count the counter model does not track")
                break
    return out


#: Schedules tried on a component with a miscounted multicast: the seeds of random runs after the round robin.
MISCOUNT_SEEDS = (1, 2, 3)


def _miscounted(a: Analysis, comp: frozenset[str], name: str, counted: dict[str, str],
                trip_sets: list[dict[str, int] | None], search: Search | None) -> Result:
    """A component with a miscounted multicast (``miscounted_barriers``): refuted by a deadlock the interpreter
    reaches (round robin with landings first — every acknowledgement returns before the barrier looks, so a count
    off in either direction hangs it —, seeded random runs, the explorer on small programs, the driver's search),
    else failed to prove. Never proved: the counter model cannot see the barrier block."""
    t0 = time.perf_counter()
    for trips in trip_sets:
        runs = [("round robin, landings first", _simulate(a.program, trips, None))]
        runs += [(f"random schedule (seed {sd})", _simulate(a.program, trips, sd)) for sd in MISCOUNT_SEEDS]
        for how, r in runs:
            if r.status == R.DEADLOCK and in_component(comp, r.stuck):
                cex = deadlock_cex(r, how)
                return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, cex["summary"], cex,
                              seconds=time.perf_counter() - t0)
        def wanted(f: DeadlockFound | ViolationFound) -> bool:
            return isinstance(f, DeadlockFound) and in_component(comp, f.stuck) and replay_schedule(
                a.program, {"trips": f.trips, "schedule": [t.to_json() for t in f.trace]}) is not None
        x = explored(a.program, trips, EXPLORE_STATES, wanted)
        for d in x.deadlocks:
            if in_component(comp, d.stuck):
                again = replay_schedule(a.program, {"trips": d.trips, "schedule": [t.to_json() for t in d.trace]})
                if again is not None:
                    return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, again["summary"], again,
                                  seconds=time.perf_counter() - t0)
    found = search_confirmed(search, a.program, comp)
    if found is not None:
        return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, found["summary"], found,
                      seconds=time.perf_counter() - t0)
    return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED,
                  "; ".join(counted.values()) + "; the interpreter found no deadlock",
                  seconds=time.perf_counter() - t0)


def _decide(a: Analysis, comp: frozenset[str], name: str, trusted: set[int],
            trip_sets: list[dict[str, int] | None], rlimit: int, inexact: set[str], method: str,
            search: Search | None = None) -> Result:
    t0 = time.perf_counter()
    # A wait of the component on an unsupported word counts even when the word's ops (in loops that never run,
    # say) leave it with no engine of the component: the stuck query asks that wait's counter model, which it lacks.
    waited = {(lf.op.sem, a.views[e].program.site) for e in comp for lf in a.views[e].leaves
              if isinstance(lf.op, SemWait)}
    outside = sorted({w.name: w.why for key, w in a.words.items()
                      if w.kind == "unsupported" and (key in waited or {lf.engine for lf in (
                          *w.incs, *w.sets, *w.waits, *w.flags)} & comp)}.items())
    unsupported = [f"{n}: {why}" for n, why in outside]
    # A monotone word counts too: its equality waits are read as >= only because overshoot was excluded.
    inexact_here = sorted(w.name for w in a.words.values()
                          if w.name in inexact and w.kind in ("reset", "flag", "monotone", "sequence", "epochs")
                          and {lf.engine for lf in (*w.incs, *w.sets, *w.waits, *w.flags)} & comp)
    if unsupported or inexact_here:
        found = search_confirmed(search, a.program, comp, _candidates(a, comp, trusted, trip_sets, rlimit))
        if found is not None:
            return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, found["summary"], found,
                          seconds=time.perf_counter() - t0)
        why = []
        if unsupported:
            why.append("semaphore word outside the decided protocols: " + "; ".join(unsupported))
        if inexact_here:
            why.append("exact counting of " + ", ".join(inexact_here) + " did not prove (see the semaphore family), "
                       "so the counter model is not known faithful; the interpreter's search found no deadlock")
        # Failed because those words' counting did not prove (``sem-exact:W`` names the word's exact counting,
        # which ``assume.assumptions`` lists for this component too): the report groups it under their findings.
        blocked = tuple(f"{R.SEM_EXACT}:{n}" for n in sorted({n for n, _ in outside} | set(inexact_here)))
        return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED, "; ".join(why), seconds=time.perf_counter() - t0,
                      blocked_by=blocked)
    if method != "search":
        witness, deferred = _by_schedule(a, comp, name, trusted, trip_sets, t0, long_runs=method == "schedule")
        if witness.verdict in (Verdict.PROVED, Verdict.REFUTED) or method == "schedule":
            return witness
        if deferred:
            # The witness's derivation run is long (schedule.LONG_RUN): the search first, the long run only if the
            # search does not decide. Either proof is sound on its own, so the order changes only the cost.
            searched = _component(a, comp, name, trusted, trip_sets, rlimit, t0, search)
            if searched.verdict in (Verdict.PROVED, Verdict.REFUTED):
                return searched
            witness, _ = _by_schedule(a, comp, name, trusted, trip_sets, t0)
            return witness if witness.verdict in (Verdict.PROVED, Verdict.REFUTED) else searched
    return _component(a, comp, name, trusted, trip_sets, rlimit, t0, search)


#: Candidates the directed search follows where the counter model is not known faithful.
CANDIDATES = 4


def _candidates(a: Analysis, comp: frozenset[str], trusted: set[int], trip_sets: list[dict[str, int] | None],
                rlimit: int) -> Iterator[Decoded]:
    """Deadlock candidates of ``comp`` from its counter model although that model is not known faithful (a word
    outside the decided protocols blocks or not as the solver likes): only hints for the interpreter's directed
    search (``replay.search_confirmed``), which alone may refute; never a proof. Lazily, at most ``CANDIDATES``."""
    n = 0
    for trips in trip_sets:
        sq = StateQuery(a, "deadlock-candidates", comp, trusted, trips, rlimit)
        sq.q.add(_stuck(sq, loose=True), "stuck")
        sq.restrict()
        while n < CANDIDATES:
            res = sq.q.check()
            if res.status != Status.SAT or res.model is None:
                break
            n += 1
            yield sq.decode(res.model)
            sq.q.add(z3.Not(all_of(sq.q.ctx, [sq.enc.position(e).sel == res.model.eval(sq.enc.position(e).sel,
                                                                                model_completion=True)
                                     for e in sorted(comp)])), "next-candidate")


def _falling_waits(a: Analysis, comp: frozenset[str]) -> str:
    """Why the schedule theorem does not apply to ``comp`` ("" when it does): a data-movement engine of it waits on a
    buffer another engine pops (a sharing waiter, ir/sharing.py), so that wait is not monotone in the other engines'
    progress — the consumer's pops take pages from what it counts."""
    for b, engines in sorted(sharing_waiters(a.program).items()):
        pops = {lf.engine for v in a.views.values() for lf in v.leaves if isinstance(lf.op, Pop) and lf.op.buf == b}
        for e in sorted(engines & comp):
            if pops - {e} and not sees_own_pops_only(a.views[e].program.engine):
                return (f"{e} waits on b{b}, which {', '.join(sorted(pops - {e}))} pops: its wait falls as they progress "
                        "(the search decides)")
    return ""


def _sequence_waits(a: Analysis, comp: frozenset[str]) -> str:
    """Why the schedule theorem does not apply to ``comp`` ("" when it does): it waits on a word that carries a
    sequence (``semaphores.Sequence``), whose value falls back to its initial one at the sequence's reset, so its
    waits are not monotone in the other engines' progress (the search decides)."""
    for w in sorted(a.words.values(), key=lambda x: x.name):
        if w.kind == "sequence" and any(lf.engine in comp for lf in w.waits):
            return f"{w.name} carries the sequence of {w.seq.name if w.seq else w.name}: its waits are not monotone (the search decides)"
        if w.kind == "epochs" and any(lf.engine in comp for lf in w.waits):
            return (f"{w.name} carries the restarting sequence of {w.epochs.name if w.epochs else w.name}: its waits "
                    "are not monotone (the search decides)")
    return ""


def _by_schedule(a: Analysis, comp: frozenset[str], name: str, trusted: set[int],
                 trip_sets: list[dict[str, int] | None], t0: float, long_runs: bool = True) -> tuple[Result, bool]:
    """PROVED when a schedule witness derived for ``comp`` checks (``schedule.py``), REFUTED when the exhaustive run
    got stuck and the interpreter replays a deadlock there, else FAILED with the reason (a witness that does not
    check says nothing about the program); and whether the attempt was deferred (``schedule.prove``'s
    ``long_runs``)."""
    untrusted = sorted({b for e in comp for lf in a.views[e].leaves
                        if isinstance(b := getattr(lf.op, "buf", None), int) and b not in trusted})
    if untrusted:
        return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED,
                      f"schedule witness needs trusted buffers; untrusted: {untrusted}",
                      seconds=time.perf_counter() - t0), False
    shared = _falling_waits(a, comp) or _sequence_waits(a, comp)
    if shared:
        return Result(R.DEADLOCK, name, Verdict.FAILED, f"schedule witness: {shared}",
                      seconds=time.perf_counter() - t0), False
    got = schedule.prove(a, comp, trip_sets, long_runs=long_runs)
    if got.candidate is not None:
        # The exhaustive run got stuck: the interpreter driven to where it stuck may replay the deadlock.
        cex = replay_deadlock(a.program, got.candidate.decoded(), comp)
        if cex is not None:
            return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, cex.get("summary", R.DEADLOCK), cex,
                          seconds=time.perf_counter() - t0), False
    verdict = Verdict.PROVED if got.proved else Verdict.FAILED
    if not got.proved:
        reason = f"schedule witness: {got.reason}"
    elif got.exhaustive:
        reason = f"{len(comp)} engines, {got.reason}"
    else:
        reason = (f"{len(comp)} engines, schedule witness checked symbolically over loop indices"
                  + (" and trip values" if a.linear and a.program.trips else ""))
    return Result(R.Family.DEADLOCK.value, name, verdict, reason, seconds=time.perf_counter() - t0), got.deferred


#: Fraction of the budget of the one symbolic query ``_symbolic_unsat`` asks before the trips are enumerated.
SYMBOLIC_FIRST = 8


def _symbolic_unsat(a: Analysis, comp: frozenset[str], name: str, trusted: set[int], rlimit: int) -> bool:
    """Whether the stuck query over symbolic trips (each in ``[0, max]``: the very assignments ``Analysis.trip_sets``
    enumerates when counts are not linear in the loop indices) is unsat within ``rlimit // SYMBOLIC_FIRST``: then no
    assignment has a stuck state, which the enumeration would ask one query per assignment to show (64 queries of a
    TT-Lang ``--range K=128:8192:128``). Anything else (sat, unknown) says nothing: the caller enumerates as before."""
    sq = StateQuery(a, name, comp, trusted, None, max(rlimit // SYMBOLIC_FIRST, 1))
    sq.q.add(_stuck(sq), "stuck")
    sq.restrict()
    return sq.q.check().status == Status.UNSAT


def _component(a: Analysis, comp: frozenset[str], name: str, trusted: set[int],
               trip_sets: list[dict[str, int] | None], rlimit: int, t0: float, search: Search | None = None) -> Result:
    reason = f"{len(comp)} engines, symbolic over loop indices" + (
        " and trip values" if a.linear and a.program.trips else "")
    unreplayed = 0
    if len(trip_sets) > 1 and _symbolic_unsat(a, comp, name, trusted, rlimit):
        return Result(R.Family.DEADLOCK.value, name, Verdict.PROVED, reason + " (one query over every trip value)",
                      seconds=time.perf_counter() - t0)
    for trips in trip_sets:
        sq = StateQuery(a, name, comp, trusted, trips, rlimit)
        sq.q.add(_stuck(sq), "stuck")
        sq.restrict()
        for _ in range(REFINEMENTS + 1):
            res = sq.q.check()
            if res.status == Status.UNSAT:
                break
            if res.status == Status.UNKNOWN:
                return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED, f"solver: {res.reason}",
                              seconds=time.perf_counter() - t0)
            assert res.model is not None
            cand = sq.decode(res.model)
            cex = replay_deadlock(a.program, cand, comp)
            if cex is not None:
                return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, cex.get("summary", R.DEADLOCK), cex,
                              seconds=time.perf_counter() - t0)
            # Not replayable: exclude this choice of ops (and trips) and search on for one that replays. The
            # exclusion covers every loop iteration of those ops, and a failed replay does not show the candidate
            # unreachable, so from here on the component can be refuted but never proved.
            unreplayed += 1
            excl = [sq.enc.position(e).sel == res.model.eval(sq.enc.position(e).sel, model_completion=True)
                    for e in sorted(comp)]
            excl += [v == res.model.eval(v, model_completion=True) for v in sq.enc.trip_vars.values()
                     if not z3.is_int_value(v)]
            sq.q.add(z3.Not(all_of(sq.q.ctx, excl)), "refine")
        else:
            return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED,
                          f"{REFINEMENTS} candidate deadlocks of the counter abstraction did not replay",
                          seconds=time.perf_counter() - t0)
    if unreplayed:
        found = search_confirmed(search, a.program, comp)
        if found is not None:
            return Result(R.Family.DEADLOCK.value, name, Verdict.REFUTED, found["summary"], found, seconds=time.perf_counter() - t0)
        return Result(R.Family.DEADLOCK.value, name, Verdict.FAILED,
                      f"{unreplayed} candidate deadlock(s) of the counter abstraction did not replay in the "
                      "interpreter and none that does was found", seconds=time.perf_counter() - t0)
    return Result(R.Family.DEADLOCK.value, name, Verdict.PROVED, reason, seconds=time.perf_counter() - t0)
