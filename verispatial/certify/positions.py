"""Symbolic engine positions and occurrence counts, symbolic over loops (no unrolling).

An engine's position is "about to execute leaf ``sel`` in iteration ``i_L`` of each enclosing loop ``L``", or
``sel == finished``. Leaves are numbered in pre-order, so the leaves inside a container (loop or ``If``) form a
contiguous range ``[lo_C, hi_C)`` and "inside C" is ``lo_C <= sel < hi_C``. The position domain says: inside a
loop, its index is in ``[0, count)`` (else 0); inside an ``If``, its guard holds for the tested loop's index.

**Admitted iterations.** A leaf ``q`` under loops ``L_1 ⊃ ... ⊃ L_d`` runs in iteration ``i`` of ``L_j`` only if
every enclosing ``If`` that tests ``L_j``'s index admits ``i``. Each guard admits an interval of ``[0, c)``
(``c`` the loop's count): ``first`` ``[0, 1)``, ``last`` ``[c - 1, c)``, ``not_first`` ``[1, c)``, ``not_last``
``[0, c - 1)``; so the guards on ``L_j`` admit the interval ``A_j = [lo_j, hi_j)``, their intersection (``[0, c)``
without guards). Write ``|A_j| = max(0, hi_j - lo_j)``, ``before_j(i) = max(0, min(hi_j, i) - lo_j)`` (admitted
iterations before ``i``: ``min(i, 1)`` for ``first``, ``0`` for ``last``, ``max(i - 1, 0)`` for ``not_first``,
``i`` for ``not_last``) and ``adm_j(i) = lo_j <= i < hi_j``.

**Executed count.** Let ``W_j = prod_{l > j} |A_l|`` (executions of ``q`` in one admitted iteration of ``L_j``;
``W_0`` is q's total) and ``m`` the deepest of q's loops that encloses the position. Executions of ``q`` before
the position:

    sum_{j <= m} [adm_1(i_1) ∧ ... ∧ adm_{j-1}(i_{j-1})] * before_j(i_j) * W_j
      + [adm_1(i_1) ∧ ... ∧ adm_m(i_m)] * [q.index < sel] * W_m

Term ``j`` counts the iterations of ``L_j`` before ``i_j`` in the current iterations of ``L_1 .. L_{j-1}`` (q ran in
none of them unless those current iterations are admitted); the last term is the current iteration of ``L_m``
(q ran there, W_m times, iff it is admitted and q precedes the position). Without guards this is the mixed-radix
count ``sum_j [inside L_j] * i_j * W_j + [q.index < sel] * W_m``. It is linear in the loop indices when the counts
are constants (DESIGN §7, route step 1); a count affine in a trip (``TripCount``: ``max(0, scale * t + offset)``)
and the guards' ``min``/``max`` are ``z3.If`` terms, still linear while at most one trip count multiplies an index.
``tests/test_positions.py`` checks the formula against the interpreter on every position of small nests.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import z3

from verispatial import budget
from verispatial.certify.smt import Query, all_of, any_of
from verispatial.certify.structure import Ctx, EngineView, Leaf, LoopCtx
from verispatial.ir.core import Guard
from verispatial.ir.ops import SemWait, TripCount, count_trip
from verispatial.ir.program import Program

CountFn = Callable[[int | str | TripCount], z3.ArithRef]


@attrs.define
class SymPos:
    """The symbolic position of one engine in one query."""

    view: EngineView
    sel: z3.ArithRef
    idx: dict[tuple[int, ...], z3.ArithRef]
    ranges: dict[tuple[int, ...], tuple[int, int]]
    #: leaves a question mentions; a query restricted to relevant positions must keep them (reach.py)
    referenced: set[int] = attrs.field(factory=set)

    def inside(self, lc: Ctx) -> z3.BoolRef:
        lo, hi = self.ranges[lc.path]
        return z3.And(self.sel >= lo, self.sel < hi)

    def at(self, leaf: Leaf) -> z3.BoolRef:
        """About to execute ``leaf``."""
        self.referenced.add(leaf.index)
        return self.sel == leaf.index

    def passed(self, leaf: Leaf) -> z3.BoolRef:
        """Beyond ``leaf`` in program order (it ran, or its loop ran zero times, or its ``If`` was skipped)."""
        self.referenced.add(leaf.index)
        return self.sel > leaf.index

    @property
    def finished(self) -> z3.BoolRef:
        return self.sel == self.view.finished


def loop_ranges(view: EngineView) -> dict[tuple[int, ...], tuple[int, int]]:
    """Leaf-index range ``[lo, hi)`` of every non-empty container (loop or ``If``) of ``view``."""
    out: dict[tuple[int, ...], tuple[int, int]] = {}
    for leaf in view.leaves:
        for lc in leaf.containers:
            lo, hi = out.get(lc.path, (leaf.index, leaf.index + 1))
            out[lc.path] = (min(lo, leaf.index), max(hi, leaf.index + 1))
    return out


def is_linear(views: dict[str, EngineView]) -> bool:
    """True when every occurrence count is linear: no trip loop nested inside another loop and no leaf under
    two trip loops (then ``i_j * W_j`` and totals multiply a variable by constants only)."""
    for v in views.values():
        for leaf in v.leaves:
            trips = [j for j, lc in enumerate(leaf.loops) if count_trip(lc.count) is not None]
            if len(trips) > 1 or (trips and trips[0] != 0):
                return False
    return True


def trip_assignments(p: Program, limit: int) -> list[dict[str, int]] | None:
    """Every assignment of the program's trips (the explorer's enumeration), or None if more than ``limit``."""
    from verispatial.petri.explore import trip_assignments as every_assignment

    if math.prod(t.max + 1 for t in p.trips) > limit:
        return None
    return every_assignment(p)


def count_expr(q: Query, c: int | str | TripCount, trips: dict[str, z3.ArithRef]) -> z3.ArithRef:
    """A loop count as a term: a constant, a trip's variable, or ``max(0, scale * t + offset)``."""
    if isinstance(c, int):
        return q.val(c)
    if isinstance(c, str):
        return trips[c]
    e = trips[c.trip] * c.scale + c.offset
    return z3.If(e > 0, e, q.val(0)) if c.offset < 0 else e


def _max(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return z3.If(a >= b, a, b)


def _min(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return z3.If(a <= b, a, b)


class LoopMath:
    """Admitted intervals, sizes and ordinals of leaf occurrences in query ``q``, with loop counts as terms given
    by ``count`` (symbolic or fixed trips). Shared by the position encoder and by static occurrence queries."""

    def __init__(self, q: Query, count: CountFn) -> None:
        self.q = q
        self.count = count
        self._iv: dict[tuple[LoopCtx, frozenset[Guard]], tuple[z3.ArithRef, z3.ArithRef, bool]] = {}

    def interval(self, lc: LoopCtx, guards: frozenset[Guard]) -> tuple[z3.ArithRef, z3.ArithRef, bool]:
        """``(lo, hi, guarded)``: the iterations of ``lc`` that ``guards`` admit are ``[lo, hi)``; ``guarded``
        is False when no guard restricts ``[0, count)``."""
        key = (lc, guards)  # equal loops (path, var, count) of two engines have equal intervals
        got = self._iv.get(key)
        if got is not None:
            return got
        c = self.count(lc.count)
        if not z3.is_int_value(c) and not isinstance(lc.count, int):
            sc = z3.simplify(c)
            if z3.is_int_value(sc):
                c = sc  # a trip-affine count with the trip fixed
        lows: list[z3.ArithRef | int] = [0]
        highs: list[z3.ArithRef | int] = [c]
        for g in guards:
            if g is Guard.FIRST:
                highs.append(1)
            elif g is Guard.LAST:
                lows.append(c - 1)
            elif g is Guard.NOT_FIRST:
                lows.append(1)
            else:
                highs.append(c - 1)
        if z3.is_int_value(c):
            n = c.as_long()
            lo = max(int(x) if isinstance(x, int) else z3.simplify(x).as_long() for x in lows)  # type: ignore[union-attr]
            hi = min(int(x) if isinstance(x, int) else z3.simplify(x).as_long() for x in highs)  # type: ignore[union-attr]
            got = (self.q.val(lo), self.q.val(hi), (lo, hi) != (0, n))
        else:
            lo_t: z3.ArithRef = self.q.val(0)
            for x in lows[1:]:
                lo_t = _max(lo_t, x if not isinstance(x, int) else self.q.val(x))
            hi_t: z3.ArithRef = c
            for x in highs[1:]:
                hi_t = _min(hi_t, x if not isinstance(x, int) else self.q.val(x))
            got = (lo_t, hi_t, bool(guards))
        self._iv[key] = got
        return got

    def interval_of(self, leaf: Leaf, j: int) -> tuple[z3.ArithRef, z3.ArithRef, bool]:
        lc = leaf.loops[j]
        return self.interval(lc, leaf.guards_on(lc))

    def size(self, leaf: Leaf, j: int) -> z3.ArithRef:
        """``|A_j|``: admitted iterations of loop ``j`` of ``leaf`` (its count when unguarded)."""
        lo, hi, guarded = self.interval_of(leaf, j)
        if not guarded:
            return hi
        if z3.is_int_value(lo) and z3.is_int_value(hi):
            return self.q.val(max(0, hi.as_long() - lo.as_long()))
        return _max(hi - lo, self.q.val(0))

    def before(self, leaf: Leaf, j: int, i: z3.ArithRef) -> z3.ArithRef:
        """``before_j(i)``: admitted iterations of loop ``j`` of ``leaf`` before index ``i`` (``0 <= i < count``)."""
        lo, hi, guarded = self.interval_of(leaf, j)
        if not guarded:
            return i
        return _max(_min(hi, i) - lo, self.q.val(0))

    def admitted(self, leaf: Leaf, j: int, i: z3.ArithRef) -> z3.BoolRef | None:
        """``adm_j(i)``, or None when loop ``j`` of ``leaf`` is unguarded (every index admitted)."""
        lo, hi, guarded = self.interval_of(leaf, j)
        if not guarded:
            return None
        return z3.And(i >= lo, i < hi)

    def last(self, leaf: Leaf, j: int) -> z3.ArithRef:
        """The last admitted index of loop ``j`` of ``leaf`` (meaningful when ``size > 0``)."""
        return self.interval_of(leaf, j)[1] - 1

    def weights(self, leaf: Leaf) -> list[z3.ArithRef]:
        """``[W_0, W_1, ..., W_d]``: executions of ``leaf`` in one admitted iteration of its loop ``j``
        (``W_0``: in a whole run; ``W_d = 1``)."""
        d = len(leaf.loops)
        out: list[z3.ArithRef] = [self.q.val(1)]
        const = 1
        syms: list[z3.ArithRef] = []
        for j in range(d - 1, -1, -1):
            s = self.size(leaf, j)
            if z3.is_int_value(s):
                const *= s.as_long()
            else:
                syms.append(s)
            w: z3.ArithRef = self.q.val(const)
            for x in syms:
                w = w * x
            out.append(w)
        out.reverse()
        return out

    def ordinal(self, leaf: Leaf, idx: list[z3.ArithRef]) -> z3.ArithRef:
        """How many occurrences of ``leaf`` precede the admitted occurrence with loop indices ``idx`` (outer
        first, one per loop of ``leaf``): ``sum_j before_j(idx_j) * W_j``."""
        w = self.weights(leaf)
        out: z3.ArithRef = self.q.val(0)
        for j, i in enumerate(idx):
            out = out + self.before(leaf, j, i) * w[j + 1]
        return out

    def domain(self, leaf: Leaf, idx: list[z3.ArithRef]) -> z3.BoolRef:
        """``idx`` is an occurrence of ``leaf``: every index in its loop's range and admitted by the guards."""
        conj: list[z3.BoolRef] = [self.q.true()]
        for j, (i, lc) in enumerate(zip(idx, leaf.loops, strict=True)):
            conj += [i >= 0, i < self.count(lc.count)]
            a = self.admitted(leaf, j, i)
            if a is not None:
                conj.append(a)
        return all_of(self.q.ctx, conj)


class Encoder:
    """Builds positions and counts inside one ``Query``. ``trips`` fixes trip values (else they are symbolic
    over ``[0, max]``)."""

    def __init__(self, q: Query, program: Program, views: dict[str, EngineView],
                 trips: dict[str, int] | None = None, prefix: str = "",
                 trip_vars: dict[str, z3.ArithRef] | None = None) -> None:
        self.q = q
        self.prefix = prefix
        self.program = program
        self.views = views
        self.trip_vars: dict[str, z3.ArithRef] = dict(trip_vars or {})
        for t in program.trips if trip_vars is None else ():
            if trips is not None:
                self.trip_vars[t.name] = q.val(trips[t.name])
            else:
                v = q.int_var(f"trip[{t.name}]")
                q.add(z3.And(v >= 0, v <= t.max), "trip-range")
                self.trip_vars[t.name] = v
        self.math = LoopMath(q, self.count_val)
        self._pos: dict[str, SymPos] = {}
        self._executed: dict[tuple[str, int], z3.ArithRef] = {}

    def count_val(self, c: int | str | TripCount) -> z3.ArithRef:
        return count_expr(self.q, c, self.trip_vars)

    def position(self, key: str) -> SymPos:
        """The (memoized) symbolic position of engine ``key``, with its domain constraints asserted."""
        if key in self._pos:
            return self._pos[key]
        view = self.views[key]
        sel = self.q.int_var(f"{self.prefix}sel[{key}]")
        self.q.add(z3.And(sel >= 0, sel <= view.finished), "position-domain")
        ranges = loop_ranges(view)
        idx: dict[tuple[int, ...], z3.ArithRef] = {}
        pos = SymPos(view, sel, idx, ranges)
        loops = {lc.path: lc for lc in view.loops}
        for lc in view.loops:
            if lc.path not in ranges:
                continue
            i = self.q.int_var(f"{self.prefix}i[{key}]{list(lc.path)}")
            idx[lc.path] = i
            self.q.add(z3.If(pos.inside(lc), z3.And(i >= 0, i < self.count_val(lc.count)), i == 0), "loop-domain")
        for ic in view.ifs:
            if ic.path not in ranges:
                continue
            lo, hi, _ = self.math.interval(loops[ic.loop], frozenset({ic.when}))
            i = idx[ic.loop]
            self.q.add(z3.Implies(pos.inside(ic), z3.And(i >= lo, i < hi)), "guard-domain")
        self._pos[key] = pos
        return pos

    def total(self, leaf: Leaf) -> z3.ArithRef:
        """How many times ``leaf`` runs in a whole run."""
        return self.math.weights(leaf)[0]

    def executed(self, leaf: Leaf) -> z3.ArithRef:
        """Executions of ``leaf`` completed before its engine's current position (memoized per leaf)."""
        key = (leaf.engine, leaf.index)
        self.position(leaf.engine).referenced.add(leaf.index)
        if key not in self._executed:
            budget.check()  # building the terms of a large program is long work between two solver queries
            self._executed[key] = self._executed_expr(leaf)
        return self._executed[key]

    def _adm_now(self, pos: SymPos, leaf: Leaf, upto: int) -> list[z3.BoolRef]:
        """``adm_1(i_1) .. adm_upto(i_upto)`` at the position's current indices (unguarded loops omitted)."""
        out = []
        for j in range(upto):
            a = self.math.admitted(leaf, j, pos.idx[leaf.loops[j].path])
            if a is not None:
                out.append(a)
        return out

    def _executed_expr(self, leaf: Leaf) -> z3.ArithRef:
        pos = self.position(leaf.engine)
        w = self.math.weights(leaf)
        zero = self.q.val(0)
        terms: list[z3.ArithRef] = []
        for j, lc in enumerate(leaf.loops):
            cond = [pos.inside(lc), *self._adm_now(pos, leaf, j)]
            guard = cond[0] if len(cond) == 1 else all_of(self.q.ctx, cond)
            terms.append(z3.If(guard, self.math.before(leaf, j, pos.idx[lc.path]) * w[j + 1], zero))
        wm: z3.ArithRef = w[0]
        for j, lc in enumerate(leaf.loops):
            adm = self._adm_now(pos, leaf, j + 1)
            now = z3.If(all_of(self.q.ctx, adm), w[j + 1], zero) if adm else w[j + 1]
            wm = z3.If(pos.inside(lc), now, wm)
        terms.append(z3.If(pos.sel > leaf.index, wm, zero))
        return z3.Sum(terms) if len(terms) > 1 else terms[0]

    def started(self, leaf: Leaf) -> z3.BoolRef:
        """At least one execution of ``leaf`` completed."""
        return self.executed(leaf) >= 1

    def last_occurrence(self, leaf: Leaf) -> tuple[z3.BoolRef, list[z3.ArithRef]]:
        """``(some, idx)``: whether ``leaf`` has executed before its engine's position and, if so, the loop
        indices (outer first) of its most recent execution, as terms over the position.

        With ``m`` the deepest loop of ``leaf`` enclosing the position: the current iteration of ``L_1..L_m`` if
        it is admitted and ``leaf`` precedes the position (deeper loops at their last admitted index); else, for
        ``j = m, ..., 1``, the last admitted iteration of ``L_j`` before ``i_j`` inside the current iterations of
        ``L_1..L_{j-1}`` (if those are admitted); else none. Deeper loops must admit at least one iteration."""
        pos = self.position(leaf.engine)
        pos.referenced.add(leaf.index)
        m = self.math
        d = len(leaf.loops)
        cur = [pos.idx[lc.path] for lc in leaf.loops]
        last = [m.last(leaf, j) for j in range(d)]
        nonempty = [m.size(leaf, j) >= 1 for j in range(d)]
        cases: list[tuple[z3.BoolRef, list[z3.ArithRef]]] = []
        for level in range(d, -1, -1):
            exact = [pos.inside(leaf.loops[level - 1])] if level else []
            if level < d:
                exact.append(z3.Not(pos.inside(leaf.loops[level])))
            here = z3.And(self.q.true(), *exact)
            cases.append((z3.And(here, *self._adm_now(pos, leaf, level), pos.sel > leaf.index, *nonempty[level:]),
                          cur[:level] + last[level:]))
            for j in range(level - 1, -1, -1):
                _lo, hi, _ = m.interval_of(leaf, j)
                prev = _min(hi, cur[j]) - 1
                cases.append((z3.And(here, *self._adm_now(pos, leaf, j), m.before(leaf, j, cur[j]) >= 1,
                                     *nonempty[j + 1:]), [*cur[:j], prev, *last[j + 1:]]))
        some = any_of(self.q.ctx, [c for c, _ in cases])
        idx: list[z3.ArithRef] = []
        for k in range(d):
            e: z3.ArithRef = self.q.val(0)
            for c, vec in reversed(cases):
                e = z3.If(c, vec[k], e)
            idx.append(e)
        return some, idx

    def threshold_now(self, leaf: Leaf) -> z3.ArithRef:
        """The threshold of the ``SemWait`` ``leaf`` at its engine's current loop indices (for a position at it)."""
        op = leaf.op
        assert isinstance(op, SemWait)
        if not op.terms:
            return self.q.val(op.value)
        pos = self.position(leaf.engine)
        return self.threshold(leaf, [pos.idx[lc.path] for lc in leaf.loops])

    def threshold(self, leaf: Leaf, idx: list[z3.ArithRef]) -> z3.ArithRef:
        """The threshold of the ``SemWait`` ``leaf`` at its occurrence with loop indices ``idx``."""
        op = leaf.op
        assert isinstance(op, SemWait)
        env = {lc.var: i for lc, i in zip(leaf.loops, idx, strict=True)}
        return self.q.val(op.value) + z3.Sum([self.q.val(0)] + [env[t.var] * t.coef for t in op.terms])
