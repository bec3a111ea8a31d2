"""Deadlock freedom from a schedule witness (DESIGN §7, "certificates carry witnesses; the checker evaluates them").

The search of ``families/deadlock/encoding.py`` asks one query over every engine of a component at once; on a wide
multicast grid (32-64 sites, ~100-200 engines) that query exhausts its resource limit. Here a *schedule* is checked instead, one
small query per blocking leaf and one per engine, none of which grows with the grid.

Witness. ``R`` are the leaves that block (Reserve, Wait, SemWait) or change a counter (Push, Pop, SemInc, SemIncMcast,
SemSet, McastSetValid). A schedule gives every occurrence of an ``R`` leaf a time, affine in its loop indices:

    tau(leaf, i) = offset[leaf] + sum_L period[L] * i_L        (L over the leaf's enclosing loops)

Checked obligations (all symbolic over loop indices and trip values; never unrolled):

- *order* (one query per engine): two ``R`` positions of one engine in program order have strictly increasing
  times;
- *enabling* (one query per blocking leaf ``o``): with ``o``'s engine about to execute ``o`` in any iteration, and
  every engine that moves a counter ``o`` tests at any position whose next ``R`` occurrence has a time
  ``>= tau(o)`` (or finished), ``o``'s condition holds in the counter model (an equality wait read as ``>=``).

Theorem. If both hold, no reachable state is a deadlock. Proof: take a deadlocked state ``s`` and, among the ``R``
occurrences not executed in ``s``, one ``o`` of least time (one exists: an unfinished engine is blocked at an
``R`` leaf). Every ``R`` occurrence of smaller time was executed, so by *order* every engine has executed all its
``R`` occurrences of time ``< tau(o)``; ``o``'s engine executed exactly those before ``o``, so (its first
unexecuted op being an ``R`` leaf at which it is blocked) it is blocked at ``o`` itself. Non-``R`` ops change no
counter, so ``o``'s own contribution to every counter is the one of the *enabling* query and every other engine's
is at least it. ``o``'s condition is monotone in the other engines' progress: a buffer has one producer and one
consumer (the coverage rules, ``trusted``), so only the consumer raises free space and only the producer raises
data; increments are non-negative; a reset word is consumed only by its owner, the waiter; a flag word's waits
are the owner's own. So ``o`` is enabled in ``s`` under the counter model, which is faithful in a deadlocked
state (every issued write landed) once the exact-counting obligations are proved — and they also exclude
overshoot, so an equality wait holding as ``>=`` holds as ``==``. Contradiction.

Where it applies: components whose buffers are all ``trusted``, with no data-movement engine waiting on a buffer
another engine pops (a sharing waiter's wait falls as the consumer pops: ``deadlock._falling_waits``), and whose
semaphore words are exact (the caller checks), counts linear in the loop indices. The witness is derived here
from one concrete as-soon-as-possible run of the counter abstraction (unit time per op) by fitting one period per
loop and one offset per leaf; the derivation is untrusted, only the checks prove. A run that gets stuck, a fit
that does not check, or a solver that answers unknown makes the caller fall back to the search — never a pass.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator

import attrs
import z3

from verispatial import budget
from verispatial.certify import smt
from verispatial.certify.canon import Canon, canonical_form
from verispatial.certify.counters import CounterModel
from verispatial.certify.positions import Encoder, SymPos
from verispatial.certify.reach import Analysis, Decoded
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, any_of
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    INCREMENTS,
    If,
    Loop,
    McastSetValid,
    Op,
    Pop,
    Push,
    Reserve,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Wait,
    count_trip,
    count_value,
)
from verispatial.ir.program import walk
from verispatial.petri.explore import lazy_product

#: Occurrences of R leaves the derivation run may execute before giving up (then the search is used).
DERIVE_LIMIT = 400_000
#: R occurrences (summed over trip assignments) the *order* check may enumerate per engine instead of asking Z3.
ORDER_ENUMERATION_LIMIT = 200_000
#: Budget of each per-leaf / per-engine query: they are small, a fraction of the search's budget suffices.
CHECK_RLIMIT = DEFAULT_RLIMIT // 4

BLOCKING = (Reserve, Wait, SemWait)
COUNTING = (Push, Pop, *INCREMENTS, SemSet, McastSetValid)


@attrs.frozen
class Schedule:
    """A schedule witness: ``offset[(engine, leaf index)]`` and ``period[(engine, loop path)]`` (time units)."""

    offset: dict[tuple[str, int], int]
    period: dict[tuple[str, tuple[int, ...]], int]

    def to_json(self) -> dict[str, object]:
        return {"offset": {f"{e}#{i}": v for (e, i), v in sorted(self.offset.items())},
                "period": {f"{e}#{list(p)}": v for (e, p), v in sorted(self.period.items())}}


@attrs.frozen
class Outcome:
    """What the schedule route concluded: ``proved`` or not, why, how many order and enabling obligations it
    checked, and how many of those it settled without a query of its own (enumerated, or proved up to renaming);
    ``exhaustive``: proved by a run that executed every occurrence (``by_run``), not by a symbolic check;
    ``candidate``: where that run got stuck, for the interpreter to replay (not proved); ``deferred``: not tried
    to the end, the derivation run being longer than ``LONG_RUN`` (``prove(long_runs=False)``)."""

    proved: bool
    reason: str
    queries: int = 0
    settled: int = 0
    exhaustive: bool = False
    candidate: Stuck | None = None
    deferred: bool = False


def r_leaves(view: EngineView) -> list[Leaf]:
    return [lf for lf in view.leaves if isinstance(lf.op, BLOCKING + COUNTING)]


# ----------------------------------------------------------------------------------------------- derivation
def _occurrences(ops: tuple[Op, ...], trips: dict[str, int], prefix: tuple[int, ...],
                 idx: tuple[int, ...], env: dict[str, tuple[int, int]] | None = None,
                 wanted: frozenset[tuple[int, ...]] | None = None, cap: int | None = None,
                 ) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(path, iteration vector over the enclosing loops) of every leaf occurrence, in program order; an ``If``
    runs its body when its guard admits the current iteration of its loop (``env``: var -> (index, count)).

    ``wanted``: the paths of the leaves asked for and every prefix of them; an op outside it is skipped, subtree
    and all (a loop of 2**31 reads around no wanted leaf costs nothing). A loop whose middle iteration (neither
    first nor last) yields nothing is not iterated further: every middle iteration runs the same ops (an ``If``
    reads only whether its iteration is the first or the last), so the rest jump to the last. Checks the budget
    at every iteration of a loop. ``cap``: every loop runs at most that many iterations (the shrunk run of
    ``derive_stretched``; an ``If`` then reads first and last of the shrunk count)."""
    env = env or {}
    for i, op in enumerate(ops):
        path = (*prefix, i)
        if wanted is not None and path not in wanted:
            continue
        if isinstance(op, Loop):
            n = count_value(op.count, trips)
            if cap is not None:
                n = min(n, cap)
            k = 0
            while k < n:
                budget.check()
                got = False
                for occ in _occurrences(op.body, trips, path, (*idx, k), {**env, op.var: (k, n)}, wanted, cap):
                    got = True
                    yield occ
                k = n - 1 if not got and 0 < k < n - 1 else k + 1
        elif isinstance(op, If):
            k, n = env[op.var]
            if op.when.holds(k, n):
                yield from _occurrences(op.body, trips, path, idx, env, wanted, cap)
        else:
            yield path, idx


def _prefixes(paths: Iterable[tuple[int, ...]]) -> frozenset[tuple[int, ...]]:
    """Every non-empty prefix of every path (the ``wanted`` set of ``_occurrences``)."""
    return frozenset(q[:j] for q in paths for j in range(1, len(q) + 1))


def _stream(view: EngineView, leaves: dict[tuple[int, ...], Leaf],
            trips: dict[str, int], cap: int | None = None) -> Iterator[tuple[Leaf, tuple[int, ...]]]:
    """Occurrences of ``view``'s R leaves in program order (every loop run at most ``cap`` times, if given)."""
    for path, it in _occurrences(view.program.ops, trips, (), (), wanted=_prefixes(leaves), cap=cap):
        if path in leaves:
            yield leaves[path], it


class _Concrete:
    """The counter model on concrete occurrence counts (the derivation's run). Its state is, per buffer, its
    occupancy (pages pushed less popped) and, per semaphore word, its *level*: the one count its value is a function
    of (monotone: the increments; reset: the increments less what consuming waits took; flag: the flags set less the
    waits passed; any other kind keeps a constant value). Firing an R leaf changes them by amounts fixed per leaf,
    so two states with equal ``levels`` enable the same leaves and change alike (``_periodic_run`` relies on it)."""

    def __init__(self, a: Analysis, comp: frozenset[str]) -> None:
        self.a = a
        self.occupancy: dict[int, int] = {}
        self.level: dict[tuple[int, Site], int] = {}
        # Per R leaf (engine, index): the levels its firing moves and by how much.
        self.moves: dict[tuple[str, int], list[tuple[tuple[int, Site], int]]] = {}
        for key, w in a.words.items():
            changes: list[tuple[Leaf, int]] = []
            if w.kind in ("monotone", "reset"):
                changes += [(lf, lf.op.by) for lf in w.incs if isinstance(lf.op, INCREMENTS)]
            if w.kind == "reset":
                changes += [(lf, -c) for lf, c in w.consumed_by()]
            if w.kind == "flag":
                changes += [(lf, 1) for lf in w.flags] + [(lf, -1) for lf in w.waits]
            if changes:
                self.level[key] = 0
            for lf, by in changes:
                self.moves.setdefault((lf.engine, lf.index), []).append((key, by))
        for e in sorted(comp):
            for lf in a.views[e].leaves:
                if isinstance(lf.op, (Push, Pop)):
                    self.occupancy[lf.op.buf] = 0

    def value(self, key: tuple[int, Site]) -> int:
        w = self.a.words[key]
        if w.kind in ("monotone", "reset"):
            return w.init + self.level.get(key, 0)
        if w.kind == "flag":
            assert w.value is not None
            assert w.reset_value is not None
            return w.value if self.level.get(key, 0) >= 1 else w.reset_value
        return w.value if w.value is not None else w.init

    def levels(self) -> tuple[int, ...]:
        """Every occupancy and level, in an order fixed at construction: what ``enabled`` and ``fire`` read."""
        return (*self.occupancy.values(), *self.level.values())

    def enabled(self, lf: Leaf, it: tuple[int, ...]) -> bool:
        op = lf.op
        if isinstance(op, Reserve):
            return self.occupancy.get(op.buf, 0) + op.pages <= self.a.program.buffers[op.buf].capacity
        if isinstance(op, Wait):
            return self.occupancy.get(op.buf, 0) >= op.pages
        if isinstance(op, SemWait):
            key = (op.sem, self.a.views[lf.engine].program.site)
            w = self.a.words[key]
            want = op.threshold({lc.var: k for lc, k in zip(lf.loops, it, strict=True)})
            if op.cond == WaitCond.EQ and w.kind not in ("monotone", "reset"):
                return self.value(key) == want
            return self.value(key) >= want  # equality read as >= (exactness excludes overshoot)
        return True

    def fire(self, lf: Leaf) -> None:
        if isinstance(lf.op, Push):
            self.occupancy[lf.op.buf] = self.occupancy.get(lf.op.buf, 0) + lf.op.pages
        elif isinstance(lf.op, Pop):
            self.occupancy[lf.op.buf] = self.occupancy.get(lf.op.buf, 0) - lf.op.pages
        for key, by in self.moves.get((lf.engine, lf.index), ()):
            self.level[key] += by


def _keys(a: Analysis, lf: Leaf) -> list[object]:
    """The counters an R leaf changes (buffers by id, words by (sem, site))."""
    op = lf.op
    if isinstance(op, (Push, Pop)):
        return [("cb", op.buf)]
    if isinstance(op, SemInc):
        return [(op.sem, op.at)]
    if isinstance(op, SemRmw):
        return [(op.sem, a.views[lf.engine].program.site)]
    if isinstance(op, (McastSetValid, SemIncMcast)):
        return [(op.sem, d) for d in a.program.groups[op.group].destinations()]
    return []


def _tests(a: Analysis, lf: Leaf) -> object:
    """The counter a blocking leaf tests."""
    op = lf.op
    if isinstance(op, (Reserve, Wait)):
        return ("cb", op.buf)
    assert isinstance(op, SemWait)
    return (op.sem, a.views[lf.engine].program.site)


Occ = tuple[int, tuple[int, ...]]  # (leaf index, iteration vector) of one engine


def _run_length(a: Analysis, comp: frozenset[str], trips: dict[str, int], cap: int | None = None) -> int | None:
    """How many R occurrences a run of ``comp`` to its end executes under ``trips`` (each R leaf as often as its
    loops run), or None when an If guards some of them (then only the run itself knows)."""
    total = 0
    for e in comp:
        if any(not isinstance(op, Loop) and hasattr(op, "body") for op in walk(a.views[e].program.ops)):
            return None
        for lf in r_leaves(a.views[e]):
            n = 1
            for lc in lf.loops:
                c = count_value(lc.count, trips)
                n *= c if cap is None else min(c, cap)
            total += n
    return total


Times = dict[tuple[str, int], dict[tuple[int, ...], int]]
Precedences = list[tuple[tuple[str, int, tuple[int, ...]], tuple[str, int, tuple[int, ...]]]]


def derive(a: Analysis, comp: frozenset[str], trips: dict[str, int]) -> Schedule | str:
    """A candidate schedule from one as-soon-as-possible run (unit time per R op, all engines in lockstep rounds),
    or why none was derived (the run got stuck, is longer than ``DERIVE_LIMIT``, or no offsets fit)."""
    run = _asap(a, comp, trips)
    if isinstance(run, Stuck):
        return run.reason
    return run if isinstance(run, str) else _fit(a, comp, *run)


#: Iterations per loop of the shrunk run ``derive_stretched`` derives from (at least 2: a period needs two).
STRETCH_CAP = 4


def derive_stretched(a: Analysis, comp: frozenset[str], trips: dict[str, int],
                     cap: int = STRETCH_CAP) -> Schedule | None:
    """A candidate schedule from the as-soon-as-possible run of the program with every loop cut to at most ``cap``
    iterations, stretched to the full counts (``_stretch``), or None when that run gets stuck or no offsets fit.
    Like ``derive``, untrusted: only ``check`` proves, and a candidate that does not check sends the caller to
    ``derive``. Its cost does not grow with the loop counts (``derive``'s run executes every occurrence: 199,683 on
    the TT-Lang matmul tutorial step 3)."""
    run = _asap(a, comp, trips, cap)
    if isinstance(run, (Stuck, str)):
        return None
    s = _fit(a, comp, *run)
    return None if isinstance(s, str) else _stretch(a, comp, s, trips, cap)


def _stretch(a: Analysis, comp: frozenset[str], s: Schedule, trips: dict[str, int], cap: int) -> Schedule:
    """``s`` (fitted to a run whose loops ran at most ``cap`` iterations) stretched to the loops' counts under
    ``trips``: each loop ``M`` of count ``n`` run ``n' = min(n, cap)`` times, whose body's own loops grew by ``cs``
    time units (the sum of their extras), gets period ``p + cs`` and delays every later op of its engine by its
    extra ``(n - n') * p + n * cs`` (its last occurrence ends that much later); a leaf's offset grows by the extras
    of the loops before it in its enclosing bodies. Matched loops of two engines (equal periods in the shrunk run:
    a producer's and its consumer's) stretch alike, so the shrunk run's precedences keep their slack."""
    offset = dict(s.offset)
    period = dict(s.period)
    for e in sorted(comp):
        leaf_at = {lf.path: lf for lf in a.views[e].leaves}

        def body(ops: tuple[Op, ...], prefix: tuple[int, ...], base: int, e: str = e,
                 leaf_at: dict[tuple[int, ...], Leaf] = leaf_at) -> int:
            shift = 0
            for i, op in enumerate(ops):
                path = (*prefix, i)
                if isinstance(op, Loop):
                    cs = body(op.body, path, base + shift)
                    n = count_value(op.count, trips)
                    if n <= 0:
                        continue
                    p = s.period[(e, path)]
                    period[(e, path)] = p + cs
                    shift += (n - min(n, cap)) * p + n * cs
                elif isinstance(op, If):
                    shift += body(op.body, path, base + shift)
                elif (key := (e, leaf_at[path].index)) in offset:
                    offset[key] = s.offset[key] + base + shift
            return shift

        body(a.views[e].program.ops, (), 0)
    return Schedule(offset, period)


@attrs.frozen
class Stuck:
    """Where the as-soon-as-possible run of the counter model got stuck: each engine of the component at its next
    R occurrence (None: finished) — a deadlock candidate for the interpreter to replay, never a verdict."""

    reason: str
    at: dict[str, tuple[Leaf | None, tuple[tuple[str, int], ...]]]

    def decoded(self) -> Decoded:
        return Decoded({}, dict(self.at))


def _asap(a: Analysis, comp: frozenset[str], trips: dict[str, int],
          cap: int | None = None) -> tuple[Times, Precedences] | Stuck | str:
    """The as-soon-as-possible run of the counter model under ``trips``: in each round every engine of ``comp``
    whose next R occurrence is enabled in the state at the round's start (every occurrence of an earlier round
    executed, none of a later one) executes it. Returns each occurrence's round and the precedences the run
    exhibits, or why it did not finish (stuck, or longer than ``DERIVE_LIMIT``). ``cap``: every loop runs at most
    that many iterations (a run of a shrunk program, for ``derive_stretched``; never a proof)."""
    total = _run_length(a, comp, trips, cap)
    if total is not None and total > DERIVE_LIMIT:
        return f"the derivation run would execute {total} occurrences, more than {DERIVE_LIMIT}"
    by_path = {e: {lf.path: lf for lf in r_leaves(a.views[e])} for e in comp}
    streams = {e: _stream(a.views[e], by_path[e], trips, cap) for e in sorted(comp)}
    nxt: dict[str, tuple[Leaf, tuple[int, ...]] | None] = {e: next(s, None) for e, s in streams.items()}
    state = _Concrete(a, comp)
    times: dict[tuple[str, int], dict[tuple[int, ...], int]] = {}
    # Precedences the run exhibits: (earlier occurrence, later occurrence), each (engine, leaf index, iteration).
    before: list[tuple[tuple[str, int, tuple[int, ...]], tuple[str, int, tuple[int, ...]]]] = []
    prev: dict[str, tuple[str, int, tuple[int, ...]]] = {}
    last: dict[object, dict[str, tuple[str, int, tuple[int, ...]]]] = {}
    t = fired = 0
    while any(v is not None for v in nxt.values()):
        if not t & 1023:
            budget.check()
        go = [e for e, v in nxt.items() if v is not None and state.enabled(v[0], v[1])]
        if not go:
            at: dict[str, tuple[Leaf | None, tuple[tuple[str, int], ...]]] = {
                e: (None, ()) if v is None else (v[0], tuple((lc.var, k) for lc, k in zip(v[0].loops, v[1], strict=True)))
                for e, v in nxt.items()}
            return Stuck(f"the derivation run is stuck at round {t}", at)
        fresh: list[tuple[Leaf, tuple[str, int, tuple[int, ...]]]] = []
        for e in go:
            lf, it = nxt[e]  # type: ignore[misc]
            occ = (e, lf.index, it)
            times.setdefault((e, lf.index), {})[it] = t
            if e in prev:
                before.append((prev[e], occ))
            prev[e] = occ
            if isinstance(lf.op, BLOCKING):
                for other, x in last.get(_tests(a, lf), {}).items():
                    if other != e:
                        before.append((x, occ))
            state.fire(lf)
            fresh.append((lf, occ))
            nxt[e] = next(streams[e], None)
        for lf, occ in fresh:
            for k in _keys(a, lf):
                last.setdefault(k, {})[occ[0]] = occ
        fired += len(go)
        t += 1
        if fired > DERIVE_LIMIT:
            return f"the derivation run exceeds {DERIVE_LIMIT} occurrences"
    return times, before


def _fit(a: Analysis, comp: frozenset[str], times: Times, before: Precedences) -> Schedule | str:
    """Periods: per loop, the largest step between consecutive iterations the run shows for any of its leaves.
    Offsets: the least solution of the difference constraints ``tau(x) + 1 <= tau(y)`` for every precedence the
    run exhibits (longest paths, Bellman-Ford); a positive cycle means no affine schedule with these periods."""
    period: dict[tuple[str, tuple[int, ...]], int] = {}
    for e in sorted(comp):
        for lc in a.views[e].loops:
            steps = [0]
            for lf in r_leaves(a.views[e]):
                if lc not in lf.loops:
                    continue
                j = lf.loops.index(lc)
                samples = times.get((e, lf.index), {})
                for it, tt in samples.items():
                    if it[j] >= 1:
                        prev = samples.get((*it[:j], it[j] - 1, *it[j + 1:]))
                        if prev is not None:
                            steps.append(tt - prev)
            period[(e, lc.path)] = max(steps)

    def lin(e: str, i: int, it: tuple[int, ...]) -> int:
        return sum(period[(e, lc.path)] * k for lc, k in zip(a.views[e].leaves[i].loops, it, strict=True))

    edges: dict[tuple[tuple[str, int], tuple[str, int]], int] = {}
    for (ex, ix, itx), (ey, iy, ity) in before:
        w = 1 + lin(ex, ix, itx) - lin(ey, iy, ity)  # b_y - b_x >= w
        key = ((ex, ix), (ey, iy))
        if edges.get(key, -(10**18)) < w:
            edges[key] = w
    offset: dict[tuple[str, int], int] = {(e, lf.index): 0 for e in comp for lf in r_leaves(a.views[e])}
    for _ in range(len(offset) + 1):
        changed = False
        for (u, v), w in edges.items():
            if offset[u] + w > offset[v]:
                offset[v] = offset[u] + w
                changed = True
        if not changed:
            return Schedule(offset, period)
    return "no affine schedule with the run's periods (a positive cycle of precedences)"


# ----------------------------------------------------------------------------------------------- checking
def _tau(s: Schedule, pos: SymPos, leaf: Leaf) -> z3.ArithRef:
    """The time of ``leaf``'s occurrence at ``pos`` (which must be at ``leaf``)."""
    t: z3.ArithRef = z3.IntVal(s.offset[(leaf.engine, leaf.index)], pos.sel.ctx)
    for lc in leaf.loops:
        t = t + pos.idx[lc.path] * s.period[(leaf.engine, lc.path)]
    return t


def _tau_at(s: Schedule, pos: SymPos, leaves: list[Leaf]) -> z3.ArithRef:
    """The time of the occurrence an engine at ``pos`` is about to execute (``pos`` restricted to ``leaves``)."""
    expr: z3.ArithRef = _tau(s, pos, leaves[-1])
    for lf in reversed(leaves[:-1]):
        expr = z3.If(pos.sel == lf.index, _tau(s, pos, lf), expr)
    return expr


def _buffer_movers(a: Analysis) -> dict[int, set[str]]:
    """Buffer -> the engines that push or pop it (one walk over every leaf)."""
    out: dict[int, set[str]] = {}
    for v in a.views.values():
        for x in v.leaves:
            if isinstance(x.op, (Push, Pop)):
                out.setdefault(x.op.buf, set()).add(x.engine)
    return out


def _movers(a: Analysis, lf: Leaf, by_buf: dict[int, set[str]] | None = None) -> set[str]:
    """Engines other than ``lf``'s whose R ops change a counter ``lf`` tests (``by_buf``: ``_buffer_movers(a)``
    when the caller asks for many leaves; each call walks every leaf of the program otherwise)."""
    op = lf.op
    out: set[str] = set()
    if isinstance(op, (Reserve, Wait)):
        out = set((by_buf if by_buf is not None else _buffer_movers(a)).get(op.buf, set()))
    elif isinstance(op, SemWait):
        w = a.words[(op.sem, a.views[lf.engine].program.site)]
        out = {x.engine for x in (*w.incs, *w.flags, *w.sets, *w.waits)}
    return out - {lf.engine}


def _enabled(cm: CounterModel, a: Analysis, lf: Leaf) -> z3.BoolRef:
    op = lf.op
    if isinstance(op, SemWait) and op.cond == WaitCond.EQ:
        w = a.words[(op.sem, a.views[lf.engine].program.site)]
        if w.kind in ("monotone", "reset"):
            # Exact counting (proved before this runs) excludes overshoot: ">=" at the wait is "==" there.
            return cm.value(w) >= cm.enc.threshold_now(lf)
    en = cm.enabled(lf)
    assert en is not None
    return en


class _Shared(Query):
    """One Z3 context whose terms (positions, occurrence counts, counters) every query of a component reuses.
    Facts the encoders assert (domains) are collected per engine, not asserted: each query is a fresh solver in
    this context holding only the domains of the engines it mentions and its own question."""

    def __init__(self, name: str, rlimit: int) -> None:
        super().__init__(name, rlimit)
        self.facts: list[z3.BoolRef] = []

    def add(self, fact: object, label: str | None = None) -> None:
        self.facts.append(fact)  # type: ignore[arg-type]


def order_by_enumeration(a: Analysis, e: str, s: Schedule, trips: dict[str, int] | None) -> bool:
    """Whether the *order* obligation of engine ``e`` is shown by enumerating its R occurrences: for every trip
    assignment its loops can see (``trips`` when fixed, else every value in ``[0, max]`` of each trip its counts
    read), the times of its R occurrences, in program order, strictly increase. That is the obligation itself over
    a finite set (consecutive occurrences suffice: ``<`` is transitive), so True proves it. False means not shown
    this way (an If, more than ``ORDER_ENUMERATION_LIMIT`` occurrences, or a pair out of order): ask the query.

    The occurrences are those of ``_occurrences`` (``_ordered_run``: the same walk, the same occurrences in the same
    order, with the same skip of middle iterations that run no R leaf), each one's time its leaf's offset plus the
    sum, over the loops enclosing it, of the loop's period times its index, carried down the walk."""
    view = a.views[e]
    if any(not isinstance(op, Loop) and hasattr(op, "body") for op in walk(view.program.ops)):
        return False  # guarded bodies: the occurrence stream below does not model them
    leaves = {lf.path: lf for lf in r_leaves(view)}
    maxes = a.program.trip_max()
    read = sorted({t for lc in view.loops if (t := count_trip(lc.count)) is not None})
    assignments: Iterable[dict[str, int]]
    if trips is not None:
        assignments = [trips]
    elif any(t not in maxes for t in read):
        return False
    else:
        assignments = (dict(zip(read, vs, strict=True)) for vs in lazy_product([range(maxes[t] + 1) for t in read]))
    offset = {path: s.offset[(e, lf.index)] for path, lf in leaves.items()}
    wanted = _prefixes(leaves)
    left = ORDER_ENUMERATION_LIMIT
    for env in assignments:
        left -= 1  # an assignment whose loops run no occurrence still costs (a trip of max 2**32 - 1 has that many)
        if left < 0:
            return False
        run = _OrderedRun(e, s, offset, wanted, env, left)
        try:
            run.ops(view.program.ops, (), 0)
        except _OutOfOrder:
            return False
        left = run.left
    return True


class _OutOfOrder(Exception):
    """An occurrence whose time is not above its predecessor's, or past the enumeration's limit (``_OrderedRun``)."""


class _OrderedRun:
    """``order_by_enumeration``'s walk of one trip assignment: ``_occurrences`` of the leaves whose paths are in
    ``offset`` (``wanted``: those paths and their prefixes), in program order, every loop run ``count_value`` times
    and a middle iteration that runs no wanted leaf followed by the last one, as there. Each occurrence costs one of
    ``left``; raises ``_OutOfOrder`` when that runs out or an occurrence's time is not above the one before.
    A plain recursion with each loop's share of the time carried down: ``_occurrences``' nested generators and the
    per-occurrence sum over its loops were most of a certify's enumeration (185,646 occurrences in the 16-layer
    decode step). Only loops and leaves (``order_by_enumeration`` gives up on an ``If`` first)."""

    def __init__(self, e: str, s: Schedule, offset: dict[tuple[int, ...], int],
                 wanted: frozenset[tuple[int, ...]], trips: dict[str, int], left: int) -> None:
        self.e = e
        self.period = s.period
        self.offset = offset
        self.wanted = wanted
        self.trips = trips
        self.left = left
        self.last: int | None = None

    def ops(self, ops: tuple[Op, ...], prefix: tuple[int, ...], base: int) -> bool:
        """Run ``ops`` (at ``prefix``) with the enclosing loops' share ``base`` of each time; whether any wanted
        leaf occurred."""
        got = False
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if path not in self.wanted:
                continue
            if isinstance(op, Loop):
                n = count_value(op.count, self.trips)
                p = self.period[(self.e, path)]
                k = 0
                while k < n:
                    budget.check()
                    ran = self.ops(op.body, path, base + p * k)
                    got = got or ran
                    k = n - 1 if not ran and 0 < k < n - 1 else k + 1
            else:
                assert not hasattr(op, "body"), "order_by_enumeration gives up on an If before walking"
                self.left -= 1
                if self.left < 0:
                    raise _OutOfOrder
                tau = self.offset[path] + base
                if self.last is not None and tau <= self.last:
                    raise _OutOfOrder
                self.last = tau
                got = True
        return got


def _enabling_key(a: Analysis, e: str, lf: Leaf, movers: list[str], s: Schedule, trips: dict[str, int] | None,
                  rlimit: int, forms: dict[frozenset[str], Canon], rearmed: frozenset[tuple[int, Site]]) -> str:
    """A key that determines the *enabling* query of ``lf`` up to renaming its variables: the canonical form
    (``canon.canonical_form``: programs with buffer, semaphore, group and trip ids renamed and sites translated,
    buffer capacities, semaphore words with their protocol, trips) of ``lf``'s engine and its movers — every
    engine whose position or counter contribution the query reads —, which of them runs ``lf``, the schedule
    restricted to them (offsets less their least one: the query compares times only with each other), fixed
    trip values and the budget. Two blocking leaves with equal keys ask the same question of the same
    formula, so an unsat answer for one proves the other."""
    engines = frozenset([e, *movers])
    canon = forms.get(engines)
    if canon is None:
        canon = forms[engines] = canonical_form(a, engines, set(), rearmed)[1]
    order = sorted(engines)
    base = min((s.offset[(x, r.index)] for x in order for r in r_leaves(a.views[x])), default=0)
    sched = [[[[r.index, s.offset[(x, r.index)] - base] for r in r_leaves(a.views[x])],
              [[list(lc.path), s.period[(x, lc.path)]] for lc in a.views[x].loops]] for x in order]
    item = [canon.key, canon.engines[e], lf.index, [canon.engines[x] for x in movers], sched,
            None if trips is None else sorted(trips.items()), rlimit]
    return hashlib.sha256(json.dumps(item, separators=(",", ":")).encode()).hexdigest()


def check(a: Analysis, comp: frozenset[str], s: Schedule, trips: dict[str, int] | None,
          rlimit: int = CHECK_RLIMIT, proved: set[str] | None = None) -> Outcome:
    """Check ``s`` against the program: the *order* query per engine and the *enabling* query per blocking leaf
    (see the module docstring). ``trips`` fixes trip values (None: symbolic over ``[0, max]``).

    With ``smt.shortcuts``, an engine's order is shown by enumerating its occurrences where that is finite
    (``order_by_enumeration``), and a blocking leaf whose enabling query equals one already proved up to
    renaming (``_enabling_key``: engines isomorphic up to translation, e.g. the columns of a multicast grid)
    reuses that proof. ``proved``: the keys proved so far, shared by the candidates ``prove`` checks for one
    component (a key holds the schedule restricted to the query's engines, so an equal key is the same query)."""
    n = settled = 0
    rl = {e: r_leaves(a.views[e]) for e in comp}
    q = _Shared(f"schedule:{min(comp)}", rlimit)
    first = Encoder(q, a.program, a.views, trips, prefix="a.")
    second = Encoder(q, a.program, a.views, prefix="b.", trip_vars=first.trip_vars)
    cm = CounterModel(first, a.program, a.views, a.words)
    common = list(q.facts)  # trip ranges
    domain: dict[tuple[int, str], list[z3.BoolRef]] = {}

    def add_domain(k: int, e: str) -> None:
        """Create engine ``e``'s position in encoder ``k`` and keep the domain facts that creates (it must be new:
        a position created elsewhere would have left its facts unattributed)."""
        enc = (first, second)[k]
        mark = len(q.facts)
        pos = enc.position(e)
        assert len(q.facts) > mark, f"position of {e} in encoder {k} created before its domain was taken"
        domain[(k, e)] = [*q.facts[mark:], z3.Or(pos.finished, *[pos.sel == lf.index for lf in rl[e]])]

    # Every position of the first encoder up front (the enabling queries read other engines' counts through it);
    # the second encoder is only for order queries the enumeration did not settle.
    for e in sorted(comp):
        add_domain(0, e)

    def ask(name: str, engines: list[tuple[int, str]], *facts: z3.BoolRef) -> Status:
        solver = z3.Solver(ctx=q.ctx)
        solver.set("rlimit", rlimit)
        solver.add(*common, *[f for key in engines for f in domain[key]], *facts)
        if smt.is_exporting():
            smt.exporting(name, rlimit, str(solver.to_smt2()))
        try:
            r = smt.run_check(solver)
        except z3.Z3Exception:  # resource exhaustion surfaces as an exception in some builds
            return Status.UNKNOWN
        return Status.UNSAT if r == z3.unsat else Status.SAT if r == z3.sat else Status.UNKNOWN

    for e in sorted(comp):
        if len(rl[e]) < 2:
            continue
        n += 1
        if smt.shortcuts() and order_by_enumeration(a, e, s, trips):
            settled += 1
            continue
        add_domain(1, e)
        pa, pb = first.position(e), second.position(e)
        ord_a = z3.Sum([first.executed(lf) for lf in rl[e]])
        ord_b = z3.Sum([second.executed(lf) for lf in rl[e]])
        st = ask(f"deadlock-schedule-order:{e}", [(0, e), (1, e)], z3.Not(pa.finished), z3.Not(pb.finished), ord_a < ord_b,
                 _tau_at(s, pa, rl[e]) >= _tau_at(s, pb, rl[e]))
        if st != Status.UNSAT:
            return Outcome(False, f"schedule order of {e}: {st.value}", n)
    proved = set() if proved is None else proved
    by_buf = _buffer_movers(a)
    forms: dict[frozenset[str], Canon] = {}
    rearmed = a.program.rearmed_words() if smt.shortcuts() else frozenset()
    for e in sorted(comp):
        for lf in rl[e]:
            if not isinstance(lf.op, BLOCKING):
                continue
            n += 1
            key = _tests(a, lf)
            movers = sorted(_movers(a, lf, by_buf))
            outside = [other for other in movers if other not in comp]
            if outside:
                return Outcome(False, f"{outside[0]} moves a counter of {e} but is outside the component", n)
            same = _enabling_key(a, e, lf, movers, s, trips, rlimit, forms, rearmed) if smt.shortcuts() else None
            if same is not None and same in proved:
                settled += 1
                continue
            me = first.position(e)
            t_o = _tau(s, me, lf)
            facts = [me.at(lf), z3.Not(_enabled(cm, a, lf))]
            for other in movers:
                # Only the mover's leaves that change the tested counter matter: at any other position the
                # counter is what it is at the next such leaf, whose time is no smaller (order query).
                pos = first.position(other)
                moving = [x for x in rl[other] if key in _keys(a, x)]
                if not moving:
                    continue
                facts.append(z3.Or(pos.finished, z3.And(any_of(pos.sel.ctx, [pos.sel == x.index for x in moving]),
                                                        _tau_at(s, pos, moving) >= t_o)))
            st = ask(f"deadlock-schedule-enabling:{e}:{list(lf.path)}", [(0, x) for x in (e, *movers)], *facts)
            if st != Status.UNSAT:
                return Outcome(False, f"schedule enabling of {e} at {list(lf.path)}: {st.value}", n)
            if same is not None:
                proved.add(same)
    return Outcome(True, "", n, settled)


#: R leaves past which a component whose loops read no trip is decided by its run (``by_run``): the symbolic check
#: asks one query per blocking leaf over counters summing every leaf (quadratic: 66,666 leaves of a straight-line
#: program took minutes), the run is linear in the occurrences. (A multicast matmul of 96 engines has 1,140.)
RUN_PROOF_LEAVES = 5_000

#: Below ``RUN_PROOF_LEAVES``, a component whose run executes at most this many R occurrences per R leaf is first
#: tried ``by_run``: the run costs about 5 us an occurrence, the symbolic check about 3 ms a query (one per blocking
#: leaf and per engine). The decode step's 24-engine matmul slices: 5,439-22,567 occurrences over 127-295 leaves,
#: 0.03-0.11 s by the run against 0.36-0.52 s by the check (0.1 s to find the check deferred, then the search).
RUN_PER_LEAF = 200


def by_run(a: Analysis, comp: frozenset[str], limit: int | None = None) -> Outcome | None:
    """Deadlock freedom of ``comp`` by an exhaustive finite check, when its engines' loops all have constant counts
    (so every trip value gives the same occurrences) and every engine that moves a counter one of them tests is in
    ``comp``: the as-soon-as-possible run (``_asap``) executing every R occurrence is a schedule witness with
    ``tau`` = the round of each occurrence. *Order* holds (an engine executes at most one occurrence per round) and
    *enabling* holds by construction (each occurrence of round ``t`` was enabled in the state where exactly the
    occurrences of rounds ``< t`` were executed; the module docstring's monotonicity covers engines further on),
    so the theorem above applies as it does to an affine witness. None when this does not apply or the run is too
    long; not proved, with the ``candidate`` where it got stuck, when it got stuck (a stuck run of the counter model
    is no deadlock of the program until the interpreter replays it). ``limit``: None too when the run would execute
    more than that many occurrences, or when how many it executes is not known before it runs (an If guards some)."""
    by_buf = _buffer_movers(a)
    for e in comp:
        if any(isinstance(op, Loop) and not isinstance(op.count, int) for op in walk(a.views[e].program.ops)):
            return None
        for lf in r_leaves(a.views[e]):
            if isinstance(lf.op, BLOCKING) and not _movers(a, lf, by_buf) <= comp:
                return None
    if limit is not None:
        length = _run_length(a, comp, {})  # every count is a constant here: no trip is read
        if length is None:
            return None
        # The same run with repeated periods skipped (exact: ``_periodic_run``): its cost grows with the rounds
        # before the run repeats, not with the loop counts. One that does not finish leaves the run below to say
        # where it got stuck.
        skipped = _periodic_run(a, comp, limit) if length <= DERIVE_LIMIT else None
        if skipped is not None:  # the same run, so the same reason as the one below
            return Outcome(True, f"every one of its {length} counter occurrences executed in an as-soon-as-possible "
                                 "run (an exhaustive schedule witness)", exhaustive=True)
        if length > limit:
            return None
    run = _asap(a, comp, {})
    if isinstance(run, Stuck):
        return Outcome(False, run.reason, candidate=run)
    if isinstance(run, str):
        return None
    occurrences = sum(len(v) for v in run[0].values())
    return Outcome(True, f"every one of its {occurrences} counter occurrences executed in an as-soon-as-possible run "
                         "(an exhaustive schedule witness)", exhaustive=True)


def _flat_stream(view: EngineView, leaves: dict[tuple[int, ...], Leaf]) -> list[int]:
    """The indices of ``view``'s R leaves (``leaves``, by path) in the order its occurrences run: a loop's body once,
    repeated by its count. Every loop's count must be a constant and no ``If`` may guard a leaf (``_run_length`` is
    not None): then the order does not depend on any value of the run."""

    def flat(ops: tuple[Op, ...], prefix: tuple[int, ...]) -> list[int]:
        out: list[int] = []
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if isinstance(op, Loop):
                assert isinstance(op.count, int)
                out += flat(op.body, path) * op.count
            elif path in leaves:
                out.append(leaves[path].index)
        return out

    return flat(view.program.ops, ())


def _repeats(stream: list[int], start: int, step: int) -> int:
    """The largest ``k >= 0`` with ``stream[y] == stream[y - step]`` for every ``y`` in ``[start + step, start + (k +
    1) * step]`` and ``start + (k + 1) * step < len(stream)``: the engine's occurrences from ``start`` repeat the
    ``step`` of them before, ``k`` times over, with one to spare (the leaf an engine waits at after its last firing
    of a period is read too). ``step > 0``."""

    def holds(k: int) -> bool:
        end = start + (k + 1) * step + 1
        return end <= len(stream) and stream[start + step:end] == stream[start:end - step]

    lo, hi = 0, 1
    while holds(hi):  # gallop, then bisect: each test is one slice comparison
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return lo


def _periodic_run(a: Analysis, comp: frozenset[str], limit: int) -> int | None:
    """The as-soon-as-possible run of ``_asap`` to its end, with repeated periods skipped: how many occurrences it
    skipped, or None when it did not finish (stuck, or more than ``limit`` occurrences run one by one). Applies to
    components whose loops all have constant counts, no ``If`` and no wait threshold that reads a loop index (None
    otherwise): an engine's occurrences are then a fixed list (``_flat_stream``) and a round depends only on each
    engine's next leaf and the counter ``levels``.

    Skipping is exact, by induction over periods: if the rounds ``t1`` and ``t2 = t1 + P`` start with equal
    ``levels`` and each engine ``e`` advanced ``d_e`` occurrences between them, and each engine's list repeats with
    step ``d_e`` from where it stood at ``t1`` for ``k`` steps (``_repeats``: the same leaves, none past its end),
    then the run from ``t1 + j P`` (``j < k``) does what it did from ``t1``: every round sees the same next leaves
    and the same levels, so the same engines fire the same leaves and move the levels alike, and round ``t1 + (j +
    1) P`` again starts with the levels of ``t1``. So the run is at ``t1 + k P`` with each engine ``k d_e`` past its
    position at ``t1``, which the run reaches without executing the rounds in between. (An engine's counts per
    iteration differing from the others' changes the levels from period to period; a trip one iteration off ends a
    list before the others repeat: no skip reaches past either.)"""
    views = {e: a.views[e] for e in sorted(comp)}
    order = sorted(comp)
    by_path = {e: {lf.path: lf for lf in r_leaves(views[e])} for e in order}
    leaf = {(e, lf.index): lf for e in order for lf in by_path[e].values()}
    if any(isinstance(lf.op, SemWait) and lf.op.terms for lf in leaf.values()):
        return None
    streams = [_flat_stream(views[e], by_path[e]) for e in order]
    zeros = {k: (0,) * len(lf.loops) for k, lf in leaf.items()}  # no threshold reads an index
    state = _Concrete(a, comp)
    pos = [0] * len(order)
    live = [i for i, s in enumerate(streams) if s]
    seen: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}
    fired = skipped = t = 0
    while live:
        if not t & 1023:
            budget.check()
        t += 1
        key = (tuple([s[p] if p < len(s) else -1 for s, p in zip(streams, pos, strict=True)]), state.levels())
        before = seen.get(key)
        if before is not None:
            steps = [p - q for p, q in zip(pos, before, strict=True)]
            k = min((_repeats(streams[i], before[i], d) for i, d in enumerate(steps) if d > 0), default=0)
            if k > 1:  # the run is one period past ``before``: k - 1 more are skipped
                pos = [q + k * d for q, d in zip(before, steps, strict=True)]
                skipped += (k - 1) * sum(steps)
                seen.clear()
                continue
        seen[key] = list(pos)
        go = [i for i in live if state.enabled(leaf[(order[i], streams[i][pos[i]])],
                                                zeros[(order[i], streams[i][pos[i]])])]
        if not go:
            return None  # stuck: the run of ``_asap`` says where
        for i in go:
            state.fire(leaf[(order[i], streams[i][pos[i]])])
            pos[i] += 1
        fired += len(go)
        if fired > limit:
            return None
        live = [i for i in live if pos[i] < len(streams[i])]
    return skipped


#: Occurrences past which ``prove(long_runs=False)`` leaves a derivation run to the caller's later call: the
#: run costs about 20 us an occurrence (4 s for the 199,683 of the TT-Lang matmul tutorial step 3, whose run then
#: fits no affine schedule, while the search proves it in 0.1 s).
LONG_RUN = 20_000


def prove(a: Analysis, comp: frozenset[str], trip_sets: list[dict[str, int] | None],
          rlimit: int = CHECK_RLIMIT, long_runs: bool = True) -> Outcome:
    """Derive a schedule for ``comp`` and check it for every entry of ``trip_sets`` (None: symbolic trips; the
    derivation then runs at each trip's maximum). Proved only if every check is unsat. With ``smt.shortcuts``, a
    component of more than ``RUN_PROOF_LEAVES`` R leaves is first tried ``by_run``, and so is a smaller one whose run
    is short (at most ``RUN_PER_LEAF`` occurrences per R leaf): only its proof is taken, a stuck run leaves the
    component to the route below exactly as before (the run's proof is an exhaustive schedule witness: the theorem
    holds under the same conditions as for the affine one the checks prove). Each trip set is first tried with the
    cheap candidate of ``derive_stretched``, then with ``derive``'s; ``long_runs`` False: a ``derive`` run of more
    than ``LONG_RUN`` occurrences is not made, the outcome is ``deferred`` (not proved)."""
    if smt.shortcuts():
        leaves = sum(len(r_leaves(a.views[e])) for e in comp)
        if leaves > RUN_PROOF_LEAVES:
            got = by_run(a, comp)
            if got is not None:
                return got  # proved, or stuck: the derivation below would get stuck at the same round
        else:
            got = by_run(a, comp, limit=RUN_PER_LEAF * leaves)
            if got is not None and got.proved:
                return got
    total = settled = 0
    proved: set[str] = set()  # enabling keys proved (``_enabling_key``): a later candidate reuses them
    for trips in trip_sets:
        run_trips = trips if trips is not None else {t.name: t.max for t in a.program.trips}
        quick = derive_stretched(a, comp, run_trips)
        if quick is not None:
            out = check(a, comp, quick, trips, rlimit, proved)
            if out.proved:
                total += out.queries
                settled += out.settled
                continue
        length = _run_length(a, comp, run_trips)
        if not long_runs and length is not None and LONG_RUN < length <= DERIVE_LIMIT:
            return Outcome(False, f"the derivation run would execute {length} occurrences (deferred)", total,
                           settled, deferred=True)
        s = derive(a, comp, run_trips)
        if isinstance(s, str):
            return Outcome(False, s, total)
        out = check(a, comp, s, trips, rlimit, proved)
        total += out.queries
        settled += out.settled
        if not out.proved:
            return Outcome(False, out.reason, total, settled)
    return Outcome(True, "schedule witness checked", total, settled)

