"""The interpreter's deadlock search (untrusted): runs of the reference interpreter that may end in a deadlock of
one component, used where the solver's counter model cannot be trusted — the directed search toward each solver
candidate (``certify.replay.directed_plans``), the checker's runs from launch (``certify.replay.launch_schedules``:
round robin, seeded random schedules, departures last), and the explicit-state
explorer for programs of at most ``replay.EXPLORE_ENGINES`` engines.

It only proposes: ``propose_deadlock`` returns a ``Lead`` (how to run the interpreter again), and the kernel refutes
only when its own run of that lead deadlocks (``certify.replay.confirm_lead``). A search that lies, or finds
nothing, can at most leave an obligation failed to prove; it never makes one proved.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from verispatial.certify.reach import Decoded
from verispatial.certify.replay import (
    EXPLORE_ENGINES,
    EXPLORE_STATES,
    Lead,
    candidate_targets,
    confirm_lead,
    directed_plans,
    explored,
    in_component,
    launch_schedules,
    run_launch,
)
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.petri.explore import DeadlockFound, ViolationFound
from verispatial.petri.interp import drive


def propose_deadlock(program: Program, comp: frozenset[str] | None = None,
                     candidates: Iterable[Decoded] = ()) -> Lead | None:
    """A run that ends in a deadlock of ``comp`` (any deadlock when None), or None when no attempt found one:
    the directed search toward each of ``candidates`` (positions the solver proposed from a counter model that may
    not be faithful), the runs from launch (``launch_schedules``), then the explorer for small programs."""
    for d in candidates:
        targets = candidate_targets(d)
        for how, kw in directed_plans(targets) if targets else []:
            try:
                r = drive(program, d.trips, targets, release=True, **kw)
            except ValueError:
                break
            if r.status == R.DEADLOCK and in_component(comp, r.stuck):
                return Lead(how, d.trips, targets=targets, options=kw)
    # the checker's runs from launch (one list, ``launch_schedules``; made once per program and shared with the
    # deadlock family's, ``run_launch``); the run with landings last is not among them: it names a flagged engine,
    # which a deadlock has not
    for launch in launch_schedules(program):
        r = run_launch(program, launch, None)
        if r.status == R.DEADLOCK and in_component(comp, r.stuck):
            return Lead(launch.how, seed=launch.seed, hold=launch.hold)
    if len(program.programs) <= EXPLORE_ENGINES:
        def wanted(f: DeadlockFound | ViolationFound) -> bool:
            return isinstance(f, DeadlockFound) and in_component(comp, f.stuck)
        for dl in explored(program, None, EXPLORE_STATES, wanted).deadlocks:
            if in_component(comp, dl.stuck):
                return Lead("explicit-state search", dict(dl.trips), schedule=tuple(dl.trace),
                            trace=tuple(dl.trace_text))
    return None


def search_deadlock(program: Program, comp: frozenset[str] | None = None,
                    candidates: Iterable[Decoded] = ()) -> dict[str, Any] | None:
    """The counterexample of the deadlock ``propose_deadlock`` finds, as the kernel confirms it by running the
    interpreter again (``confirm_lead``), or None."""
    return confirm_lead(program, propose_deadlock(program, comp, candidates), comp)
