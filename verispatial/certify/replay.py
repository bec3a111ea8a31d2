"""Turning solver candidates into concrete, replayed counterexamples (DESIGN §7: every refutation carries a
counterexample the reference interpreter replays).

The checker never calls a candidate refuted on the solver's word: the interpreter must reach the deadlock or the
rule violation the obligation claims — that rule at that op (``confirm_rule``'s ``at``), or a deadlock that shows
it (``hang``), never a violation or a hang elsewhere. Attempts, cheapest first: the directed search, which drives
every engine toward the candidate positions under several schedules (``directed``); deterministic and seeded
random runs that stop at the first violation of the rule; for small programs the explicit-state explorer.

Where the solver cannot propose a deadlock, the driver's untrusted search (``verispatial/driver/search.py``) may:
it hands back a ``Lead`` — how to run the interpreter, never a verdict — and ``confirm_lead`` runs it again here,
so only a deadlock the interpreter reaches in its own run refutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from verispatial.certify.reach import Decoded
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.petri.explore import DeadlockFound, Exploration, ExploreResult, ViolationFound
from verispatial.petri.interp import SimResult, Transition, drive, replay, simulate
from verispatial.petri.position import Position, Violation

#: Random schedules tried before giving up on replaying a rule violation.
SEEDS = 12
#: Programs with at most this many engines may be explored exhaustively to confirm a candidate.
EXPLORE_ENGINES = 6
EXPLORE_STATES = 60_000


#: One search per (program, trips), made as far as it was asked (``Exploration``): several candidates of one run, and
#: the families that ask after them, share its states instead of each walking them again.
_EXPLORED: dict[tuple[str, tuple[tuple[str, int], ...] | None], Exploration] = {}


def explored(program: Program, trips: dict[str, int] | None, max_states: int = EXPLORE_STATES,
             wanted: Callable[[DeadlockFound | ViolationFound], bool] | None = None) -> ExploreResult:
    """The explorer's answer within ``max_states`` states, stopped at the first finding ``wanted`` accepts when
    given (a caller that seeks one finding need not walk the rest of the states). The search of (program, trips) is
    made once and resumed as far as each caller asks; breadth first in a fixed order, what it reports within
    ``max_states`` — and the first finding ``wanted`` accepts — is what a search capped at ``max_states`` reports,
    so the answer does not depend on what was searched before."""
    key = (dumps(program), tuple(sorted(trips.items())) if trips else None)
    ex = _EXPLORED.get(key)
    if ex is None:
        if len(_EXPLORED) > 16:
            _EXPLORED.clear()
        ex = _EXPLORED[key] = Exploration(program, trips or None)
    return ex.run(max_states, wanted)


def candidate_targets(d: Decoded) -> dict[str, Position]:
    """The positions a solver candidate names, one per engine (a finished engine has no path)."""
    out: dict[str, Position] = {}
    for e, (lf, it) in d.at.items():
        out[e] = Position(e, None if lf is None else lf.path, it)
    return out


#: Whole runs (no stop) per (program, trips, seed, hold): several candidates of one program replay against the same
#: runs. The program object itself is kept with each entry, so its ``id`` stays unique while cached.
_RUNS: dict[tuple[int, tuple[tuple[str, int], ...] | None, int | None, bool], tuple[Program, SimResult]] = {}


def _simulate(program: Program, trips: dict[str, int] | None, seed: int | None,
              stop_on: Callable[[Violation], bool] | None = None, *, hold: bool = False) -> SimResult:
    """``simulate(program, trips, seed=seed, hold=hold)``, stopped at the first violation ``stop_on`` accepts. The
    schedule does not depend on where a run stops, so the whole run (computed once per (program, trips, seed, hold)
    and cached)
    tells whether a stopped one would stop: a run with no such violation is the whole run itself; one with it is
    run again with the stop, which ends at that violation (a loop of 2**31 reads shows its first overfull read at
    once instead of after the 100,000 probed steps). Either way the result does not depend on what the cache held
    (a certificate is a function of the program)."""
    key = (id(program), tuple(sorted(trips.items())) if trips else None, seed, hold)
    got = _RUNS.get(key)
    whole = got[1] if got is not None and got[0] is program else None
    if whole is not None and (stop_on is None or not any(stop_on(v) for v in whole.violations)):
        return whole
    if len(_RUNS) > 64:
        _RUNS.clear()
    r = simulate(program, trips, seed=seed, stop_on=stop_on, hold=hold)
    if r.status != "violation" or stop_on is None:
        _RUNS[key] = (program, r)
    return r


def targets_of(cex: dict[str, Any]) -> dict[str, Position]:
    """The candidate positions a state counterexample names (``Decoded.counterexample``'s ``positions``)."""
    out: dict[str, Position] = {}
    pos = cex.get("positions")
    if not isinstance(pos, dict):
        return out
    for e, p in pos.items():
        if p == "finished":
            out[str(e)] = Position(str(e), None)
        elif isinstance(p, dict) and isinstance(p.get("path"), list):
            got = p.get("iteration")
            it: dict[str, int] = got if isinstance(got, dict) else {}
            out[str(e)] = Position(str(e), tuple(p["path"]), tuple((str(k), int(v)) for k, v in it.items()))
    return out


#: Drives toward one candidate tried by the directed search: (how, lazy landings, priority engine, seed).
DIRECTED_ORDERS = 6
DIRECTED_SEEDS = 3


def directed(program: Program, trips: dict[str, int] | None, targets: dict[str, Position],
             stop_on: Callable[[Violation], bool] | None = None) -> Iterator[tuple[str, SimResult]]:
    """Runs that follow a candidate's positions (issue 7): every engine is driven toward its target op and
    iteration and never past it, under several schedules — round robin with landings first, landings only when
    no engine may step (a late landing is what some races need), each of the first ``DIRECTED_ORDERS`` engines
    given priority (it runs ahead, the others catch up), and ``DIRECTED_SEEDS`` random orders. Each run drops the
    targets once nothing allowed may move (``drive(release=True)``), so an engine parked in front of the op its
    candidate breaks goes on to break it. Yields (how, result); a run with bad trip values is skipped."""
    if not targets:
        return
    for how, kw in directed_plans(targets):
        try:
            r = drive(program, trips, targets, stop_on=stop_on, release=True, **kw)
        except ValueError:
            return
        yield how, r


def directed_plans(targets: dict[str, Position]) -> list[tuple[str, dict[str, Any]]]:
    """The schedules ``directed`` drives toward ``targets`` under, as (how, keyword arguments of ``drive``)."""
    named = sorted(targets)
    plans: list[tuple[str, dict[str, Any]]] = [
        ("drive to the candidate positions", {}),
        ("drive to the candidate positions, landings last", {"lazy": True}),
    ]
    for e in named[:DIRECTED_ORDERS]:
        plans.append((f"drive to the candidate positions, {e} first", {"priority": [e]}))
        plans.append((f"drive to the candidate positions, {e} first, landings last", {"priority": [e], "lazy": True}))
    plans += [(f"drive to the candidate positions, random order seed {s}", {"seed": s}) for s in range(DIRECTED_SEEDS)]
    plans.append(("drive to the candidate positions, departures last", {"hold": True}))
    return plans


def trip_words(trips: Mapping[str, int], shape: Mapping[str, int] | None = None) -> str:
    """The run's trips as a deadlock's summary names them, ``M=1`` (empty without trips); with ``shape`` (the value
    each trip stands for, ``report.sources.with_shape_values``) the shape's values first, ``M=96 (trip M=1)``: the
    value the user passed, and the trip the counterexample ran."""
    said = " ".join(f"{k}={v}" for k, v in sorted(trips.items()))
    if not shape or not said:
        return said
    return " ".join(f"{k}={v}" for k, v in sorted(shape.items())) + f" (trip {said})"


def deadlock_cex(r: SimResult, how: str) -> dict[str, Any]:
    """The counterexample of the deadlocked run ``r``, found by ``how``: its trips, stuck engines and steps."""
    stuck = [st.to_json() for st in r.stuck]
    names = ", ".join(str(st) for st in r.stuck[:3]) + (f" (+{len(r.stuck) - 3} more)" if len(r.stuck) > 3 else "")
    trips = trip_words(r.trips)
    return {
        "kind": R.DEADLOCK,
        "trips": dict(r.trips),
        "stuck": stuck,
        "steps": r.steps,
        "replayed_by": how,
        "summary": f"deadlock{' with ' + trips if trips else ''} after {r.steps} steps: {names}",
    }


def in_component(comp: frozenset[str] | None, stuck: Any) -> bool:
    """The deadlock is one of ``comp``'s: an engine of it is stuck (engines of other components share no counter
    with it, so they neither block nor free it). Any deadlock when ``comp`` is None."""
    return comp is None or any(st.position.engine in comp for st in stuck)


def replay_deadlock(program: Program, d: Decoded, comp: frozenset[str] | None = None) -> dict[str, Any] | None:
    """Drive the interpreter toward the candidate positions (``directed``); a reached deadlock of ``comp`` (the
    candidate's or another one met on the way) is returned as a counterexample, else None."""
    for how, r in directed(program, d.trips, candidate_targets(d)):
        if r.status == R.DEADLOCK and in_component(comp, r.stuck):
            return deadlock_cex(r, how)
    return None


def replay_schedule(program: Program, cex: dict[str, Any]) -> dict[str, Any] | None:
    """Fire a deadlock counterexample's recorded ``schedule`` (the explorer's transitions, ``confirm_lead``) in
    the interpreter from the initial state with its trip values; the counterexample again when the state reached is
    a deadlock, else None (no schedule, a transition not enabled, or no deadlock at its end). The verdict comes from
    the interpreter's run alone, never from the recorded stuck positions."""
    sched = cex.get("schedule")
    if not isinstance(sched, list):
        return None
    trips = {str(k): int(v) for k, v in (cex.get("trips") or {}).items()}
    try:
        r = replay(program, trips or None, [Transition.from_json(t) for t in sched])
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    if r.status != R.DEADLOCK:
        return None
    names = ", ".join(str(st) for st in r.stuck[:3])
    return {**cex, "stuck": [st.to_json() for st in r.stuck], "replayed_by": "recorded schedule",
            "summary": f"deadlock after {len(sched)} transitions: {names}"}


@attrs.frozen
class Lead:
    """A run of the interpreter that an untrusted search (``verispatial/driver/search.py``) says ends in a deadlock:
    data only, never a verdict. ``confirm_lead`` runs it again in the interpreter and builds the counterexample from
    that run alone. Exactly one way to run it applies, first that is given: ``schedule`` (fire exactly these
    transitions from the initial state, ``replay``), ``targets`` (``drive`` toward them with ``release`` and the
    keyword ``options`` of one ``directed_plans`` entry), else ``simulate`` with ``seed`` (None: round robin) and
    ``hold`` (departures last), as a run from launch (``launch_schedules``) names them.
    ``trips``: the trip values (None: each trip's default). ``trace``: the search's text of the schedule's
    transitions, shown with the counterexample (not read by the confirmation)."""

    how: str
    trips: dict[str, int] | None = None
    seed: int | None = None
    targets: dict[str, Position] | None = None
    options: dict[str, Any] = attrs.Factory(dict)
    schedule: tuple[Transition, ...] | None = None
    trace: tuple[str, ...] = ()
    hold: bool = False


#: An untrusted deadlock search the kernel is handed (``driver.search.propose_deadlock``): given the program, the
#: component whose deadlock is asked for (None: any) and solver candidates to follow, a run that deadlocks, or None.
Search = Callable[[Program, "frozenset[str] | None", Iterable[Decoded]], "Lead | None"]


def confirm_lead(program: Program, lead: Lead | None, comp: frozenset[str] | None = None) -> dict[str, Any] | None:
    """The counterexample of ``lead`` when the interpreter, running it again, ends in a deadlock of ``comp`` (any
    deadlock when ``comp`` is None), else None: a lead that does not reproduce, names a transition that is not
    enabled or bad trip values refutes nothing. The counterexample is built from this run, never from the lead's
    word (only its ``trace`` text is carried along for display)."""
    if lead is None:
        return None
    try:
        if lead.schedule is not None:
            r = replay(program, lead.trips, lead.schedule)
        elif lead.targets is not None:
            r = drive(program, lead.trips, lead.targets, release=True, **lead.options)
        else:
            r = simulate(program, lead.trips, seed=lead.seed, hold=lead.hold)
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    if r.status != R.DEADLOCK or not in_component(comp, r.stuck):
        return None
    if lead.schedule is None:
        return deadlock_cex(r, lead.how)
    names = ", ".join(str(st) for st in r.stuck[:3])
    # ``schedule``: the transitions themselves, so a later replay (the gate's warm run) fires exactly them instead
    # of searching again (``replay_schedule``).
    return {"kind": R.DEADLOCK, "trips": dict(r.trips), "stuck": [st.to_json() for st in r.stuck],
            "trace": list(lead.trace), "schedule": [t.to_json() for t in lead.schedule],
            "replayed_by": lead.how, "summary": f"deadlock after {len(lead.schedule)} transitions: {names}"}


def search_confirmed(search: Search | None, program: Program, comp: frozenset[str] | None = None,
                     candidates: Iterable[Decoded] = ()) -> dict[str, Any] | None:
    """Ask the untrusted ``search`` for a deadlock of ``comp`` and keep what the interpreter confirms
    (``confirm_lead``); None without a search (nothing is refuted then: the obligation fails to prove)."""
    return None if search is None else confirm_lead(program, search(program, comp, candidates), comp)


Hang = Callable[[SimResult], bool]


class Launch(NamedTuple):
    """One schedule of a run from launch: ``how`` the counterexample names it by, ``seed`` (None: round robin),
    ``hold`` (departures last: ``simulate``'s ``hold``) and ``land_last`` (None: landings as ``simulate`` fires
    them; else round robin with landings only when no engine may step, those of these engines after every
    other's: ``drive``'s ``lazy`` and ``land_last``)."""

    how: str
    seed: int | None
    hold: bool = False
    land_last: tuple[str, ...] | None = None


#: how the run with landings last is named (``Launch.land_last``)
LANDINGS_LAST = "round-robin run, landings last"


def launch_schedules(program: Program, land_last: Sequence[str] | None = None) -> list[Launch]:
    """The schedules of the runs from launch: round robin, ``SEEDS`` random orders (only 2 for a program of more
    than 12 engines: each run costs as much as the whole program), then round robin with departures last. The last
    is the adversary of a source reused before its flush: a random order lets a multicast leave at any of its turns,
    so a run that keeps one unleft across a block of the sender's loop is rare among them (the tt-metal mcast host
    with four blocks reuses the source of block 0 at block 2 only in such a run, 59 transitions deep, past 60,000
    states of a breadth-first search).

    With ``land_last`` (the engines whose landings come last, possibly none), one more: landings last, those
    engines' after every other's. It is the adversary of an op left in flight across the op that needs it landed (a
    page freed before its write left, a push before its read landed): the runs above land eagerly or at random, and
    the explorer walked 200,000 states for it (a TT-Lang writer's ``tx.wait()`` after its wait block). The checker's
    replay of a violation (``confirm_rule``) and explain's (``report.explain.reproduce``) name the flagged engine."""
    seeds = SEEDS if len(program.programs) <= 12 else 2
    out = [Launch("round-robin run", None), *(Launch(f"random schedule seed {s}", s) for s in range(seeds)),
           Launch("round-robin run, departures last", None, hold=True)]
    if land_last is not None:
        out.append(Launch(LANDINGS_LAST, None, land_last=tuple(land_last)))
    return out


def run_launch(program: Program, launch: Launch, trips: dict[str, int] | None,
               stop_on: Callable[[Violation], bool] | None = None, *, record: bool = False) -> SimResult:
    """The run of ``launch`` (with ``trips``, None: each trip's default), stopped at the first violation ``stop_on``
    accepts; ``record`` keeps its schedule (explain). Raises ``ValueError`` for bad trip values."""
    if launch.land_last is not None:
        return drive(program, trips, {}, stop_on=stop_on, lazy=True, land_last=list(launch.land_last), record=record)
    if record:
        return simulate(program, trips, seed=launch.seed, stop_on=stop_on, record=True, hold=launch.hold)
    return _simulate(program, trips, launch.seed, stop_on, hold=launch.hold)


def launch_runs(program: Program) -> Iterator[tuple[str, SimResult]]:
    """The whole runs from launch with each trip at its default (``launch_schedules``), each made when first asked
    for and once per program (``_simulate``'s cache: the runs ``confirm_rule`` and the deadlock family already made
    are not made again); a schedule whose run raises ``ValueError`` (bad trip values) is left out."""
    for launch in launch_schedules(program):
        try:
            run = run_launch(program, launch, None)
        except ValueError:
            continue
        yield launch.how, run


def confirm_rule(program: Program, rules: set[str], trips: dict[str, int] | None,
                 engine: str | None = None, path: tuple[int, ...] | None = None,
                 d: Decoded | None = None, *, at: list[dict[str, Any]] | None = None,
                 also: Callable[[Violation], bool] | None = None, hang: Hang | None = None,
                 targets: dict[str, Position] | None = None,
                 explore_cap: int = EXPLORE_STATES, unreached_cap: int | None = None) -> dict[str, Any] | None:
    """Find a run in which the interpreter reports one of ``rules`` (by ``engine``, at ``path``, when given; at one
    of the ops ``at`` lists — each an ``engine``, a ``path`` and optionally the ``subject`` the violation must be
    about (``Violation.subject``: a buffer, word, tensor, aliased pair) — when given: a race between two ops shows
    at whichever of them the interpreter reaches second), and accepted by ``also`` when given.

    Returns the interpreter's violation (and how it was found) or None when no attempt reproduced it. ``hang``
    accepts a deadlocked run that shows the claimed violation itself (an equality wait stuck at that op above its
    value; a flag word's owner stuck at its wait although more flags were issued to it than it saw): only such a
    deadlock confirms, never one elsewhere. Attempts: the directed search toward the candidate's positions (``d``
    or ``targets``), the runs from launch (``launch_schedules``), and the explorer for small programs within
    ``explore_cap`` states, stopped at the first violation it matches (``explored``: one search per program, shared
    with the other candidates and families, whose answer does not depend on what was searched before). With
    ``unreached_cap``, a candidate whose op none of those runs reached (``reached``) is explored within that many
    states at most (docs/checker.md "Counterexamples"): the explorer only confirms, so the bound turns no
    verdict into a proof, only a refutation the smaller search would miss into failed-to-prove.
    """
    def at_one(v: Violation) -> bool:
        if at is None:
            return True
        return any((x.get("engine") is None or v.position.engine == x["engine"])
                   and (x.get("path") is None or v.position.path == tuple(x["path"]))
                   and (x.get("subject") is None or v.subject == x["subject"])
                   and (x.get("cause") is None or v.cause == x["cause"]) for x in at)

    def matches(v: Violation) -> bool:
        return v.rule in rules and (engine is None or v.position.engine == engine) and (
            path is None or v.position.path == path) and at_one(v) and (also is None or also(v))

    def found(r: SimResult, how: str) -> dict[str, Any] | None:
        for v in r.violations:
            if matches(v):
                return {"violation": v.to_json(), "trips": dict(r.trips), "steps": r.steps, "replayed_by": how}
        if r.status == R.DEADLOCK and hang is not None and hang(r):
            return {R.DEADLOCK: deadlock_cex(r, how), "trips": dict(r.trips), "replayed_by": how}
        return None

    sites = [(x.get("engine"), x.get("path")) for x in at] if at is not None else [(engine, path)]
    ran = False  # some run reached the candidate's op (``reached``)

    def seen(r: SimResult) -> SimResult:
        nonlocal ran
        ran = ran or reached(r, sites)
        return r

    tgt = candidate_targets(d) if d is not None else (targets or {})
    for how, r in directed(program, d.trips if d is not None else trips, tgt, matches):
        got = found(seen(r), how)
        if got is not None:
            return got
    trip_sets: list[dict[str, int] | None] = [trips] if trips else []
    trip_sets.append(None)
    # the runs from launch, the flagged engine's landings last of all (``launch_schedules``); the run with landings
    # last is tried after every other run of every trip set, as the rarer adversary
    late = [engine] if engine is not None else sorted({x["engine"] for x in at or () if x.get("engine")})
    launches = launch_schedules(program, land_last=late)
    ordered = [(ts, la) for lazy in (False, True) for ts in trip_sets for la in launches
               if (la.land_last is not None) == lazy]
    for ts, launch in ordered:
        try:
            got = found(seen(run_launch(program, launch, ts, matches)), launch.how)
        except ValueError:
            continue
        if got is not None:
            return got
    if unreached_cap is not None and not ran:
        explore_cap = min(explore_cap, unreached_cap)
    if len(program.programs) <= EXPLORE_ENGINES:
        # Stopped at the first matching violation (those come before a hang here, as in the whole search's order).
        ex = explored(program, trips, explore_cap, lambda f: isinstance(f, ViolationFound) and matches(f.violation))
        for f in ex.violations:
            if f.states <= explore_cap and matches(f.violation):
                return {"violation": f.violation.to_json(), "trips": dict(f.trips), "trace": list(f.trace_text),
                        "replayed_by": "explicit-state search"}
        if hang is not None:
            for dl in ex.deadlocks:
                if dl.states > explore_cap:
                    continue
                r = replay(program, dl.trips, dl.trace)
                if r.status == R.DEADLOCK and hang(r):
                    return {R.DEADLOCK: dl.to_json(), "trips": dict(dl.trips), "replayed_by": "explicit-state search"}
    return None


def reached(r: SimResult, sites: list[tuple[str | None, Any]]) -> bool:
    """Whether run ``r`` brought an engine to one of ``sites`` (each an engine and an op path, as a list or tuple):
    the op ran in it (``SimResult.executed``) or the engine ended in front of it. A site naming no engine or no path
    counts as reached (nothing tells it apart)."""
    for e, p in sites:
        if e is None or p is None:
            return True
        path = tuple(p)
        if r.executed.get((e, path)) or (e in r.positions and r.positions[e].path == path):
            return True
    return False
