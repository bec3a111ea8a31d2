"""In-bounds tensor accesses: every tile a ReadTiles/WriteTiles touches lies inside its tensor, for every loop
index and trip value (affine addresses) and every value of an indirect (dynamic) part in its declared range.

An address is affine in the loop indices and the indirect value, each ranging over an interval, so its least
and greatest values over that box are attained at corners: the access's tile hull (``tile_hull``). A hull
inside the tensor proves the access in bounds by that arithmetic alone (``smt.shortcuts``); otherwise the Z3
query decides, and its model is the counterexample.
"""

from __future__ import annotations

import itertools
import math
import time

import z3

from verispatial.certify import smt
from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, model_int
from verispatial.certify.structure import Leaf
from verispatial.ir import rules as R
from verispatial.ir.ops import ReadTiles, WriteTiles, count_max, count_trip, count_value
from verispatial.ir.program import Program, Tensor
from verispatial.ir.source import iteration_words


def tile_hull(p: Program, lf: Leaf) -> tuple[int, int] | None:
    """Tiles ``[lo, hi)`` containing every tile any occurrence of access ``lf`` can touch, for every trip and
    indirect value (each loop index over ``[0, max(count - 1, 0)]``, a trip's count at most its max): a superset,
    so disjoint hulls prove two accesses share no tile and a hull inside a tensor proves the access in bounds.
    None when a term names no enclosing loop or a count names no trip of the program."""
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    trip_max = p.trip_max()
    top: dict[str, int] = {}
    for lc in lf.loops:  # an inner loop's variable shadows an outer one of the same name, as in the encoding
        trip = count_trip(lc.count)
        if trip is not None and trip not in trip_max:
            return None
        n = count_max(lc.count, trip_max)
        top[lc.var] = max(n - 1, 0)
    lo = hi = op.addr.base
    for t in op.addr.terms:
        if t.var not in top:
            return None
        lo += min(0, t.coef * top[t.var])
        hi += max(0, t.coef * top[t.var])
    d = op.addr.dynamic
    if d is not None:
        lo += min(d.scale * d.lo, d.scale * d.hi)
        hi += max(d.scale * d.lo, d.scale * d.hi)
    return lo, hi + op.tiles


#: Most trip-value combinations ``_inside_at_every_trip`` enumerates (past it the solver decides).
TRIP_VALUES_LIMIT = 4096


def tile_hull_at(lf: Leaf, trips: dict[str, int]) -> tuple[int, int] | None:
    """``tile_hull`` at the trip values ``trips`` (every trip of the program): each loop index over
    ``[0, max(count - 1, 0)]`` with its count at those values, an address term naming a trip (``ir.core.Addr``) at its
    value. A superset of the tiles the occurrences at those values touch; None for an indirect address."""
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    if op.addr.dynamic is not None:
        return None
    top = {lc.var: max(count_value(lc.count, trips) - 1, 0) for lc in lf.loops}
    lo = hi = op.addr.base
    for t in op.addr.terms:
        if t.var in top:
            lo += min(0, t.coef * top[t.var])
            hi += max(0, t.coef * top[t.var])
        else:  # a trip (validate): one value here
            lo += t.coef * trips[t.var]
            hi += t.coef * trips[t.var]
    return lo, hi + op.tiles


def _inside_at_every_trip(p: Program, lf: Leaf, tensor: Tensor) -> bool:
    """Every occurrence of access ``lf`` is inside ``tensor`` at every combination of trip values (at most
    ``TRIP_VALUES_LIMIT`` of them): its ``tile_hull_at`` each value inside the tensor's tiles at that value. A sound
    shortcut for a tensor sized by a trip or an address naming one, where ``tile_hull`` (at the trips' max) says
    nothing; False when it cannot tell (the solver decides)."""
    values = [range(t.max + 1) for t in p.trips]
    if math.prod(len(v) for v in values) > TRIP_VALUES_LIMIT:
        return False
    names = [t.name for t in p.trips]
    for combo in itertools.product(*values):
        at = dict(zip(names, combo, strict=True))
        hull = tile_hull_at(lf, at)
        if hull is None or hull[0] < 0 or hull[1] > tensor.tiles_at(p.target.tile, at):
            return False
    return True


def check_bounds(a: Analysis, rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """One result per tensor that is accessed."""
    p = a.program
    per_tensor: dict[str, list[Result]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            op = lf.op
            if not isinstance(op, (ReadTiles, WriteTiles)):
                continue
            t0 = time.perf_counter()
            tensor = p.tensor(op.tensor)
            tiles = tensor.tiles(p.target.tile)
            # a tensor sized by a trip has fewer tiles below the trip's max: its hull at each trip value instead
            hull = tile_hull(p, lf) if smt.shortcuts() and tensor.trip_rows is None else None
            if (hull is not None and hull[0] >= 0 and hull[1] <= tiles) or (
                    smt.shortcuts() and hull is None and _inside_at_every_trip(p, lf, tensor)):
                per_tensor.setdefault(op.tensor, []).append(Result(
                    R.BOUNDS, f"{R.BOUNDS}:{op.tensor}", Verdict.PROVED, f"every access of {op.tensor} is inside its {tiles} tiles",
                    seconds=time.perf_counter() - t0))
                continue
            q = Query(f"{R.BOUNDS}:{op.tensor}", rlimit)
            enc = Encoder(q, p, a.views)
            pos = enc.position(lf.engine)
            q.add(pos.at(lf))
            env = {**enc.trip_vars, **{lc.var: pos.idx[lc.path] for lc in lf.loops}}  # a term may name a trip
            addr = q.val(op.addr.base) + z3.Sum([q.val(0)] + [env[t.var] * t.coef for t in op.addr.terms])
            dyn = None
            if op.addr.dynamic is not None:
                d = op.addr.dynamic
                dyn = q.int_var(f"dyn[{d.name}]")
                q.add(z3.And(dyn >= d.lo, dyn <= d.hi))
                addr = addr + dyn * d.scale
            size = q.val(tiles) if tensor.trip_rows is None else (
                enc.count_val(tensor.trip_rows) * tensor.col_tiles(p.target.tile))  # its tiles at this run's trip value
            q.add(z3.Or(addr < 0, addr + op.tiles > size))
            r = q.check()
            res: Result
            if r.status == Status.SAT:
                assert r.model is not None
                m = r.model
                it = {lc.var: model_int(m, pos.idx[lc.path]) for lc in lf.loops}
                first = model_int(m, addr)
                has = tiles if tensor.trip_rows is None else model_int(m, size)
                cex = {"kind": R.BOUNDS, "rule": R.BOUNDS, "engine": lf.engine, "path": list(lf.path),
                       "iteration": it, "trips": {n: model_int(m, t) for n, t in enc.trip_vars.items()},
                       "tensor": op.tensor, "first_tile": first, "tiles": op.tiles,
                       "tensor_tiles": has,
                       "dynamic": None if dyn is None else model_int(m, dyn),
                       "summary": f"{lf.engine} {type(op).__name__} touches tiles [{first}, {first + op.tiles}) of "
                                  f"{op.tensor}, which has {has} tiles" + (f", at {iteration_words(it)}" if it else "")}
                res = Result(R.Family.BOUNDS.value, f"{R.BOUNDS}:{op.tensor}", Verdict.REFUTED, cex["summary"], cex)  # type: ignore[arg-type]
            elif r.status == Status.UNKNOWN:
                res = Result(R.Family.BOUNDS.value, f"{R.BOUNDS}:{op.tensor}", Verdict.FAILED, f"solver: {r.reason}")
            else:
                res = Result(R.Family.BOUNDS.value, f"{R.BOUNDS}:{op.tensor}", Verdict.PROVED,
                             f"every access of {op.tensor} is inside its {tiles} tiles")
            per_tensor.setdefault(op.tensor, []).append(
                Result(res.family, res.name, res.verdict, res.reason, res.counterexample, time.perf_counter() - t0))
    out = []
    for _name, rs in sorted(per_tensor.items()):
        worst = next((r for r in rs if r.verdict == Verdict.REFUTED), None) or next(
            (r for r in rs if r.verdict != Verdict.PROVED), None) or rs[0]
        out.append(Result(worst.family, worst.name, worst.verdict, worst.reason, worst.counterexample,
                          sum(r.seconds for r in rs)))
    return out
