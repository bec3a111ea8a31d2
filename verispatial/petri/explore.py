"""The oracle: explicit-state search over every interleaving of a small program (DESIGN §9).

Breadth first over the states of ``Interp`` (engine steps and landing transitions alike), with a visited set of
state keys, once per trip assignment (every value in ``[0, max]`` of every trip, unless fixed). Breadth first
makes every reported trace a shortest one. Dynamic addresses are checked for ``bounds`` at both ends of their
range.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from verispatial import budget
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.petri.interp import Interp, State, Stuck, Transition, Violation, resolve_trips


@attrs.frozen(eq=False)
class DeadlockFound:
    """A reachable deadlock: the trip values, the transitions from the initial state (and their text), and
    every unfinished engine's position with the counters that block it. ``states``: the states the search had
    visited when it found it (a search capped at that many or more finds it too)."""

    trips: dict[str, int]
    trace: tuple[Transition, ...]
    trace_text: tuple[str, ...]
    stuck: tuple[Stuck, ...]
    states: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "trips": dict(self.trips),
            "trace": [t.to_json() for t in self.trace],
            "trace_text": list(self.trace_text),
            "stuck": [st.to_json() for st in self.stuck],
        }


@attrs.frozen(eq=False)
class ViolationFound:
    """A reachable rule violation: the violation, the trip values and the transitions that lead to it (the last
    transition is the one that breaks the rule; empty when reaching the first ops already does, and for the
    end-of-run rules the trace ends in the terminated state). ``states``: the states the search had visited when it
    found it (a search capped at that many or more finds it too)."""

    violation: Violation
    trips: dict[str, int]
    trace: tuple[Transition, ...]
    trace_text: tuple[str, ...]
    states: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "violation": self.violation.to_json(),
            "trips": dict(self.trips),
            "trace": [t.to_json() for t in self.trace],
            "trace_text": list(self.trace_text),
        }


@attrs.frozen(eq=False)
class ExploreResult:
    """What the search found.

    ``deadlocks``: the first deadlock found per trip assignment. ``violations``: the first violation found per
    rule at each op (rule, engine, op path; in the order found), so every place a rule breaks can be replayed.
    ``complete``: every reachable state of every assignment was visited (False when
    ``max_states`` ran out or the search stopped; then "no deadlock" proves nothing). ``states``: states visited in
    all. ``assignments``: the trip assignments searched (in order; the last may be partial when incomplete).
    ``stopped``: the search ended at a finding its ``stop`` accepted (``Exploration.run``); what it found is then
    what a search without ``stop`` finds first.
    """

    program: str
    deadlocks: tuple[DeadlockFound, ...]
    violations: tuple[ViolationFound, ...]
    complete: bool
    states: int
    assignments: tuple[dict[str, int], ...]
    stopped: bool = False

    @property
    def verdict(self) -> str:
        """``deadlock`` or ``violation`` when one was found (a found one is definite even if the search was cut
        short), else ``ok`` when complete, else ``inconclusive``."""
        if self.deadlocks:
            return R.DEADLOCK
        if self.violations:
            return "violation"
        return "ok" if self.complete else "inconclusive"

    def rules(self) -> list[str]:
        """Every rule broken, each once, in the order first found."""
        return list(dict.fromkeys(f.violation.rule for f in self.violations))

    def violation(self, rule: str) -> ViolationFound | None:
        """The violation found for ``rule``, if any."""
        for f in self.violations:
            if f.violation.rule == rule:
                return f
        return None

    def text(self) -> str:
        lines = [f"{self.program}: {self.verdict} ({self.states} states, {len(self.assignments)} trip assignment(s)"
                 f"{'' if self.complete else ', search cut short'})"]
        for d in self.deadlocks:
            trips = " ".join(f"{k}={v}" for k, v in sorted(d.trips.items()))
            lines.append(f"deadlock{' with ' + trips if trips else ''} after {len(d.trace)} transitions:")
            lines += [f"  {st}" for st in d.stuck]
        for f in self.violations:
            lines.append(f"{f.violation} (after {len(f.trace)} transitions)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "verdict": self.verdict,
            "complete": self.complete,
            "states": self.states,
            "assignments": [dict(a) for a in self.assignments],
            "deadlocks": [d.to_json() for d in self.deadlocks],
            "violations": [f.to_json() for f in self.violations],
        }


def trip_assignments(program: Program, trips: dict[str, int] | None = None) -> list[dict[str, int]]:
    """Every trip assignment: the product of ``[0, max]`` over the trips not fixed by ``trips``.

    Raises ``ValueError`` for an unknown trip or a fixed value out of range."""
    return list(each_assignment(program, trips))


def each_assignment(program: Program, trips: dict[str, int] | None = None) -> Iterator[dict[str, int]]:
    """``trip_assignments`` one at a time, in the same order, without building the product (a trip of maximum
    2**32 - 1 has that many values: a caller stops early). Raises ``ValueError`` as ``trip_assignments`` does."""
    fixed = resolve_trips(program, trips)
    free = [t for t in program.trips if t.name not in (trips or {})]
    for values in lazy_product([range(t.max + 1) for t in free]):
        a = dict(fixed)
        a.update({t.name: v for t, v in zip(free, values, strict=True)})
        yield a


def lazy_product(ranges: Sequence[range]) -> Iterator[tuple[int, ...]]:
    """``itertools.product(*ranges)`` without materializing its arguments (``product`` turns each into a tuple
    first: a ``range(2**32)`` would be four billion ints before the first tuple)."""
    if not ranges:
        yield ()
        return
    head, rest = ranges[0], ranges[1:]
    for v in head:
        for tail in lazy_product(rest):
            yield (v, *tail)


def _trace(parent: dict[Any, tuple[Any, Transition] | None], key: Any) -> list[Transition]:
    out: list[Transition] = []
    link = parent[key]
    while link is not None:
        key, t = link
        out.append(t)
        link = parent[key]
    out.reverse()
    return out


def _texts(it: Interp, trace: list[Transition]) -> tuple[str, ...]:
    s, _ = it.start()
    out = []
    for t in trace:
        out.append(it.describe(s, t))
        s = it.fire(s, t)
    return tuple(out)


def explore(
    program: Program,
    trips: dict[str, int] | None = None,
    max_states: int = 200_000,
    dyn: dict[str, int] | None = None,
) -> ExploreResult:
    """Search every interleaving of ``program`` for every trip assignment (trips named in ``trips`` are fixed).

    ``max_states`` bounds the states visited over all assignments together; when it runs out the result is
    incomplete. ``dyn`` fixes the values dynamic addresses take for tensor tracking (default ``lo``; ``bounds``
    is checked at ``lo`` and ``hi`` regardless). Raises ``InvalidProgram`` for a structurally invalid program,
    ``ValueError`` for bad trip values.
    """
    return Exploration(program, trips, dyn).run(max_states)


Finding = DeadlockFound | ViolationFound


class Exploration:
    """One breadth-first search of ``program`` (``explore``), made as far as it is asked and resumed from there:
    ``run(max_states, stop)`` goes on until ``max_states`` states in all, or until a finding ``stop`` accepts, or
    until every state was visited. The order of the states does not depend on where the search paused, so what a
    run reports within ``max_states`` — each finding with the states visited when it was found — is what one search
    capped at ``max_states`` reports, whatever was asked of it before (callers asking for different findings share
    one walk instead of each walking the same states). Raises as ``explore`` does (``InvalidProgram`` at once,
    ``ValueError`` for bad trip values at the first run)."""

    def __init__(self, program: Program, trips: dict[str, int] | None = None,
                 dyn: dict[str, int] | None = None) -> None:
        self.program = program
        self.deadlocks: list[DeadlockFound] = []
        self.found: dict[tuple[str, str, tuple[int, ...] | None], ViolationFound] = {}
        self.visited = 0
        self.finished = False
        self.done: list[dict[str, int]] = []
        self._cap = 0
        self._blocked = False  # the walk waits to visit a state past ``_cap``
        self._fresh: list[Finding] = []
        self._walk = self._search(trips, dyn)

    def run(self, max_states: int, stop: Callable[[Finding], bool] | None = None) -> ExploreResult:
        """The search within ``max_states`` states, stopped early at the first finding ``stop`` accepts (the
        result's ``stopped``): made on from where it paused when it has not yet gone as far. Findings past
        ``max_states`` (of an earlier, larger run) are left out."""
        if stop is not None and any(stop(f) for f in self._within(max_states)):
            return self._result(max_states, stopped=True)
        self._fresh.clear()  # every finding so far was just offered to ``stop`` (or none is asked for)
        self._cap = max_states
        while not self.finished and self.visited <= max_states and not (self._blocked and self.visited >= max_states):
            got = next(self._walk, None)
            if got is None:
                self.finished = True
            self._blocked = bool(got)
            fresh, self._fresh = self._fresh, []
            if stop is not None and any(f.states <= max_states and stop(f) for f in fresh):
                return self._result(max_states, stopped=True)
        return self._result(max_states)

    def _within(self, max_states: int) -> list[Finding]:
        found: list[Finding] = [*self.deadlocks, *self.found.values()]
        return [f for f in found if f.states <= max_states]

    def _result(self, max_states: int, *, stopped: bool = False) -> ExploreResult:
        return ExploreResult(
            program=self.program.name,
            deadlocks=tuple(d for d in self.deadlocks if d.states <= max_states),
            violations=tuple(f for f in self.found.values() if f.states <= max_states),
            complete=self.finished and self.visited <= max_states and not stopped,
            states=min(self.visited, max_states),
            assignments=tuple(self.done),
            stopped=stopped,
        )

    def _search(self, trips: dict[str, int] | None, dyn: dict[str, int] | None) -> Iterator[bool]:
        """The walk: yields False after each new finding (``_fresh``) and True whenever it would visit a state past
        ``_cap`` (it waits there until ``_cap`` is raised)."""
        program = self.program
        for assignment in each_assignment(program, trips):
            while self.visited >= self._cap:
                yield True
            self.done.append(assignment)
            it = Interp(program, assignment, dyn, dyn_extremes=True)
            s0, first = it.start()
            k0 = s0.key()
            parent: dict[Any, tuple[Any, Transition] | None] = {k0: None}
            self.visited += 1
            queue: deque[tuple[Any, State]] = deque([(k0, s0)])
            deadlocked = False

            def note(vs: list[Violation], trace_of: Any, last: Transition | None, states: int,
                     it: Interp = it, parent: dict[Any, Any] = parent, assignment: dict[str, int] = assignment) -> None:
                for v in vs:
                    where = (v.rule, v.position.engine, v.position.path)
                    if where in self.found:
                        continue
                    trace = _trace(parent, trace_of) + ([last] if last is not None else [])
                    self.found[where] = f = ViolationFound(v, dict(assignment), tuple(trace), _texts(it, trace), states)
                    self._fresh.append(f)

            note(first, k0, None, self.visited)
            if self._fresh:
                yield False
            while queue:
                key, s = queue.popleft()
                moves = it.enabled(s)
                if not moves:
                    if it.all_finished(s):
                        note(it.final_violations(s), key, None, self.visited)
                    elif not deadlocked:
                        deadlocked = True
                        trace = _trace(parent, key)
                        dl = DeadlockFound(dict(assignment), tuple(trace), _texts(it, trace), it.stuck(s), self.visited)
                        self.deadlocks.append(dl)
                        self._fresh.append(dl)
                    if self._fresh:
                        yield False
                    continue
                for t in moves:
                    s2, vs = it.step(s, t, check=False)
                    if vs:
                        note(vs, key, t, self.visited)
                        if self._fresh:
                            yield False
                    k2 = s2.key()
                    if k2 in parent:
                        continue
                    while self.visited >= self._cap:
                        yield True
                    parent[k2] = (key, t)
                    self.visited += 1
                    if not self.visited & 1023:
                        budget.check()
                    queue.append((k2, s2))
