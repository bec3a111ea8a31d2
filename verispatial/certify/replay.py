"""Turning solver candidates into concrete, replayed counterexamples (DESIGN §7: every refutation carries a
counterexample the reference interpreter replays).

The checker never calls a candidate refuted on the solver's word: the interpreter must reach the deadlock or the
rule violation. Attempts, cheapest first: drive the engines to the candidate positions; deterministic and seeded
random runs that stop at the first violation of the rule; for small programs the explicit-state explorer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verispatial.certify.reach import Decoded
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.petri.explore import ExploreResult, explore
from verispatial.petri.interp import SimResult, drive, simulate
from verispatial.petri.position import Position, Violation

#: Random schedules tried before giving up on replaying a rule violation.
SEEDS = 12
#: Programs with at most this many engines may be explored exhaustively to confirm a candidate.
EXPLORE_ENGINES = 6
EXPLORE_STATES = 60_000


_EXPLORED: dict[tuple[str, tuple[tuple[str, int], ...] | None], ExploreResult] = {}


def _explore(program: Program, trips: dict[str, int] | None) -> ExploreResult:
    """The explorer's answer, computed once per (program, trips): several candidates of one run ask the same."""
    key = (dumps(program), tuple(sorted(trips.items())) if trips else None)
    if key not in _EXPLORED:
        if len(_EXPLORED) > 16:
            _EXPLORED.clear()
        _EXPLORED[key] = explore(program, trips=trips or None, max_states=EXPLORE_STATES)
    return _EXPLORED[key]


def _targets(d: Decoded) -> dict[str, Position]:
    out: dict[str, Position] = {}
    for e, (lf, it) in d.at.items():
        out[e] = Position(e, None if lf is None else lf.path, it)
    return out


def _deadlock_cex(r: SimResult, how: str) -> dict[str, Any]:
    stuck = [st.to_json() for st in r.stuck]
    names = ", ".join(str(st) for st in r.stuck[:3]) + (f" (+{len(r.stuck) - 3} more)" if len(r.stuck) > 3 else "")
    trips = " ".join(f"{k}={v}" for k, v in sorted(r.trips.items()))
    return {
        "kind": "deadlock",
        "trips": dict(r.trips),
        "stuck": stuck,
        "steps": r.steps,
        "replayed_by": how,
        "summary": f"deadlock{' with ' + trips if trips else ''} after {r.steps} steps: {names}",
    }


def replay_deadlock(program: Program, d: Decoded) -> dict[str, Any] | None:
    """Drive the interpreter to the candidate positions; a reached deadlock (the candidate's or another one met
    on the way) is returned as a counterexample, else None."""
    r = drive(program, d.trips, _targets(d))
    if r.status == "deadlock":
        return _deadlock_cex(r, "drive to the candidate positions")
    return None


def search_deadlock(program: Program) -> dict[str, Any] | None:
    """Look for a deadlock with the interpreter alone (round robin, seeded random schedules, and the explorer for
    small programs) — used where the solver's model cannot be trusted, so only a replayed hang may refute."""
    runs: list[tuple[str, Any]] = [("round-robin run", lambda: simulate(program))]
    runs += [(f"random schedule seed {s}", lambda s=s: simulate(program, seed=s)) for s in range(SEEDS)]
    for how, run in runs:
        r = run()
        if r.status == "deadlock":
            return _deadlock_cex(r, how)
    if len(program.programs) <= EXPLORE_ENGINES:
        ex = _explore(program, None)
        if ex.deadlocks:
            dl = ex.deadlocks[0]
            names = ", ".join(str(st) for st in dl.stuck[:3])
            return {"kind": "deadlock", "trips": dict(dl.trips), "stuck": [st.to_json() for st in dl.stuck],
                    "trace": list(dl.trace_text), "replayed_by": "explicit-state search",
                    "summary": f"deadlock after {len(dl.trace)} transitions: {names}"}
    return None


def confirm_rule(program: Program, rules: set[str], trips: dict[str, int] | None,
                 engine: str | None = None, path: tuple[int, ...] | None = None,
                 d: Decoded | None = None,
                 deadlock_at: tuple[str, tuple[int, ...] | None] | None = None,
                 also: Callable[[Violation], bool] | None = None) -> dict[str, Any] | None:
    """Find a run in which the interpreter reports one of ``rules`` (by ``engine``, at ``path``, when given, and
    accepted by ``also``: e.g. naming the boundary a ``rendezvous-early`` obligation speaks of).

    Returns the interpreter's violation (and how it was found) or None when no attempt reproduced it.
    With ``deadlock_at = (engine, path)``, a deadlock in which that engine is stuck (at that op, if a path is
    given) also confirms: an overshot equality wait or a merged flag shows as exactly that hang.
    """
    def matches(v: Any) -> bool:
        return v.rule in rules and (engine is None or v.position.engine == engine) and (
            path is None or v.position.path == path) and (also is None or also(v))

    def stuck_there(stuck: Any) -> bool:
        if deadlock_at is None:
            return False
        e, p = deadlock_at
        return any(st.position.engine == e and (p is None or st.position.path == p) for st in stuck)

    def found(r: SimResult, how: str) -> dict[str, Any] | None:
        for v in r.violations:
            if matches(v):
                return {"violation": v.to_json(), "trips": dict(r.trips), "steps": r.steps, "replayed_by": how}
        if r.status == "deadlock" and stuck_there(r.stuck):
            return {"deadlock": _deadlock_cex(r, how), "trips": dict(r.trips), "replayed_by": how}
        return None

    attempts: list[tuple[str, Any]] = []
    if d is not None:
        attempts.append(("drive to the candidate positions", lambda: drive(program, d.trips, _targets(d))))
    trip_sets: list[dict[str, int] | None] = [trips] if trips else []
    trip_sets.append(None)
    # Large programs get fewer random schedules: each run costs as much as the whole program.
    seeds = SEEDS if len(program.programs) <= 12 else 2
    for ts in trip_sets:
        attempts.append(("round-robin run", lambda ts=ts: simulate(program, ts, stop_on=matches)))
        for seed in range(seeds):
            attempts.append((f"random schedule seed {seed}",
                             lambda ts=ts, seed=seed: simulate(program, ts, seed=seed, stop_on=matches)))
    for how, run in attempts:
        try:
            got = found(run(), how)
        except ValueError:
            continue
        if got is not None:
            return got
    if len(program.programs) <= EXPLORE_ENGINES:
        ex = _explore(program, trips)
        for f in ex.violations:
            if matches(f.violation):
                return {"violation": f.violation.to_json(), "trips": dict(f.trips), "trace": list(f.trace_text),
                        "replayed_by": "explicit-state search"}
        for dl in ex.deadlocks:
            if stuck_there(dl.stuck):
                return {"deadlock": dl.to_json(), "trips": dict(dl.trips), "replayed_by": "explicit-state search"}
    return None
