"""Symbolic engine positions and occurrence counts, symbolic over loops (no unrolling).

An engine's position is "about to execute leaf ``sel`` in iteration ``i_L`` of each enclosing loop ``L``", or
``sel == finished``. Leaves are numbered in pre-order, so the leaves inside a loop form a contiguous range
``[lo_L, hi_L)`` and "inside L" is ``lo_L <= sel < hi_L``.

The number of earlier executions of leaf ``q`` (loops ``L_1 ⊃ ... ⊃ L_d``) at a position of its engine is

    sum_j [inside L_j] * i_{L_j} * W_j   +   [q.index < sel] * W_m

where ``W_j`` is the product of the counts of ``q``'s loops strictly inside ``L_j`` (``W_0`` is q's total) and
``m`` the deepest of q's loops that also encloses the position: mixed-radix counting, linear in the loop indices
when the counts are constants (DESIGN §7, route step 1).
"""

from __future__ import annotations

import math

import attrs
import z3

from verispatial.certify.smt import Query
from verispatial.certify.structure import EngineView, Leaf, LoopCtx
from verispatial.ir.ops import TripCount
from verispatial.ir.program import Program


@attrs.define
class SymPos:
    """The symbolic position of one engine in one query."""

    view: EngineView
    sel: z3.ArithRef
    idx: dict[tuple[int, ...], z3.ArithRef]
    ranges: dict[tuple[int, ...], tuple[int, int]]
    #: leaves a question mentions; a query restricted to relevant positions must keep them (reach.py)
    referenced: set[int] = attrs.field(factory=set)

    def inside(self, lc: LoopCtx) -> z3.BoolRef:
        lo, hi = self.ranges[lc.path]
        return z3.And(self.sel >= lo, self.sel < hi)

    def at(self, leaf: Leaf) -> z3.BoolRef:
        """About to execute ``leaf``."""
        self.referenced.add(leaf.index)
        return self.sel == leaf.index

    def passed(self, leaf: Leaf) -> z3.BoolRef:
        """Beyond ``leaf`` in program order (it ran, or its loop ran zero times)."""
        self.referenced.add(leaf.index)
        return self.sel > leaf.index

    @property
    def finished(self) -> z3.BoolRef:
        return self.sel == self.view.finished


def loop_ranges(view: EngineView) -> dict[tuple[int, ...], tuple[int, int]]:
    """Leaf-index range ``[lo, hi)`` of every non-empty loop of ``view``."""
    out: dict[tuple[int, ...], tuple[int, int]] = {}
    for leaf in view.leaves:
        for lc in leaf.loops:
            lo, hi = out.get(lc.path, (leaf.index, leaf.index + 1))
            out[lc.path] = (min(lo, leaf.index), max(hi, leaf.index + 1))
    return out


def is_linear(views: dict[str, EngineView]) -> bool:
    """True when every occurrence count is linear: no trip loop nested inside another loop and no leaf under
    two trip loops (then ``i_j * W_j`` and totals multiply a variable by constants only)."""
    for v in views.values():
        for leaf in v.leaves:
            trips = [j for j, lc in enumerate(leaf.loops) if isinstance(lc.count, str)]
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
        self._pos: dict[str, SymPos] = {}
        self._executed: dict[tuple[str, int], z3.ArithRef] = {}

    def count_val(self, c: int | str | TripCount) -> z3.ArithRef:
        return count_expr(self.q, c, self.trip_vars)

    def _prod(self, loops: tuple[LoopCtx, ...]) -> z3.ArithRef:
        const = 1
        syms: list[z3.ArithRef] = []
        for lc in loops:
            if isinstance(lc.count, int):
                const *= lc.count
            else:
                syms.append(self.count_val(lc.count))
        out: z3.ArithRef = self.q.val(const)
        for s in syms:
            out = out * s
        return out

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
        for lc in view.loops:
            if lc.path not in ranges:
                continue
            i = self.q.int_var(f"{self.prefix}i[{key}]{list(lc.path)}")
            idx[lc.path] = i
            self.q.add(z3.If(pos.inside(lc), z3.And(i >= 0, i < self.count_val(lc.count)), i == 0), "loop-domain")
        self._pos[key] = pos
        return pos

    def total(self, leaf: Leaf) -> z3.ArithRef:
        """How many times ``leaf`` runs in a whole run."""
        return self._prod(leaf.loops)

    def executed(self, leaf: Leaf) -> z3.ArithRef:
        """Executions of ``leaf`` completed before its engine's current position (memoized per leaf)."""
        key = (leaf.engine, leaf.index)
        self.position(leaf.engine).referenced.add(leaf.index)
        if key not in self._executed:
            self._executed[key] = self._executed_expr(leaf)
        return self._executed[key]

    def _executed_expr(self, leaf: Leaf) -> z3.ArithRef:
        pos = self.position(leaf.engine)
        d = len(leaf.loops)
        weights = [self._prod(leaf.loops[j + 1:]) for j in range(d)]  # W_1..W_d (W_d = 1)
        terms: list[z3.ArithRef] = []
        for j, lc in enumerate(leaf.loops):
            terms.append(z3.If(pos.inside(lc), pos.idx[lc.path] * weights[j], 0))
        wm: z3.ArithRef = self.total(leaf)  # W_0
        for j, lc in enumerate(leaf.loops):
            wm = z3.If(pos.inside(lc), weights[j], wm)
        terms.append(z3.If(pos.sel > leaf.index, wm, 0))
        return z3.Sum(terms) if len(terms) > 1 else terms[0]

    def started(self, leaf: Leaf) -> z3.BoolRef:
        """At least one execution of ``leaf`` completed."""
        return self.executed(leaf) >= 1
