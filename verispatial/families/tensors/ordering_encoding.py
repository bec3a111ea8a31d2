"""Happens-before obligations (DESIGN §7, route step 4): "b before a" is unsat under the reachability facts.

Tensor ordering is decided per tile. An access is an occurrence of a ``ReadTiles``/``WriteTiles`` leaf: a loop-index
vector over its loops' ranges (trip counts symbolic over ``[0, max]``), touching the affine tile range
``[base + sum(coef * index) [+ scale * dynamic], ... + tiles)`` — an indirect part ranges over its declared
``[lo, hi]``, one value per name and run, as in the interpreter. Occurrence ``I`` of leaf ``q`` has executed exactly
when its engine's count of earlier executions of ``q`` exceeds ``I``'s mixed-radix ordinal, which is linear in ``I``
(positions.py), so "can occurrence ``I`` of a write and occurrence ``J`` of a read touch a common tile while
unordered?" is one query over the reachable states, with ``I`` and ``J`` symbolic — nothing is unrolled.

- ``hb-activation:T:R``: every tile an occurrence of read ``R`` takes is written by some occurrence of some write
  of ``T`` (a static query, the writes' occurrences universally quantified).
- ``hb-activation:T:R<W``: no occurrence of ``R`` is issued while an occurrence of write ``W`` that shares a tile with
  it is not yet complete (its engine's next write barrier at the same or an outer loop level).
- ``hb-state:T:W<R``: no occurrence of write ``W`` of state ``T`` is issued while an occurrence of read ``R`` of a
  common tile is not yet complete (its engine's next read barrier): each tile's old value is read before that tile is
  rewritten, so ``s = f(s, x)`` in place proves even though later tiles are still read after earlier ones are written.
- ``hb-write-write:T:W1~W2``: two engines never write a common tile while the other's write of it is incomplete.
- ``hb-rendezvous``: the work of sections <= b on every engine (ir/boundaries.py) comes before any op of sections
  > b on any engine (interpreter rule ``rendezvous-early``).

A pair of accesses that can share no tile (a static query over every occurrence and indirect value) has no
obligation. Refutations are replayed by the interpreter (rule ``tensor-race``; ``rendezvous-early`` at the same
boundary for ``hb-rendezvous``); one that does not replay fails to prove (never passes).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

import attrs
import z3

from verispatial.certify.positions import Encoder, LoopMath, count_expr
from verispatial.certify.reach import Analysis, Decoded, StateQuery, solve_each
from verispatial.certify.replay import trip_words
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, any_of, model_int
from verispatial.certify.structure import Leaf
from verispatial.families.cb.shard_encoding import WriteCover, shard_sides
from verispatial.families.tensors.encoding import TRIP_VALUES_LIMIT
from verispatial.families.tensors.encoding import tile_hull as _hull
from verispatial.ir import rules as R
from verispatial.ir.boundaries import closing_sections, work_ends
from verispatial.ir.core import Role
from verispatial.ir.ops import (
    ReadBarrier,
    ReadTiles,
    WriteBarrier,
    WriteTiles,
    count_max,
    count_trip,
    count_value,
)
from verispatial.ir.program import Program, Tensor
from verispatial.ir.source import iteration_words
from verispatial.petri.position import Cause


def _cex(rule: str, d: Decoded, summary: str, **extra: object) -> dict[str, object]:
    return d.counterexample("race", rule, summary, **extra)


def _next_barrier(a: Analysis, lf: Leaf, kind: type) -> Leaf | None:
    """The first ``kind`` barrier after ``lf`` on its engine at the same or an outer container level (its loops and
    ifs enclose ``lf``): it completes every occurrence of ``lf`` — occurrence ``I`` at the barrier's occurrence
    ``I[:depth]``, which exists whenever ``I`` does (the barrier's guards are guards of ``lf``). A barrier deeper in
    a later loop or ``If`` is not taken (it might not run), which only makes the completion later (sound)."""
    for x in a.views[lf.engine].leaves[lf.index + 1:]:
        if isinstance(x.op, kind) and lf.containers[: len(x.containers)] == x.containers:
            return x
    return None


def _completion(a: Analysis, w: Leaf) -> Leaf | None:
    """The first write barrier after ``w`` on its engine at the same or an outer loop level."""
    return _next_barrier(a, w, WriteBarrier)


Build = Callable[[StateQuery], z3.BoolRef]


class _Access:
    """Occurrence ``idx`` (one variable per enclosing loop, outer first) of an access leaf inside a query, and the
    tile range ``[lo, hi)`` it touches. ``dyn`` maps an indirect part's name to its run-wide value. ``math`` gives
    loop counts, guards and ordinals (``positions.LoopMath``)."""

    def __init__(self, q: Query, math: LoopMath, lf: Leaf, tag: str, dyn: dict[str, z3.ArithRef],
                 idx: list[z3.ArithRef] | None = None) -> None:
        op = lf.op
        assert isinstance(op, (ReadTiles, WriteTiles))
        self.q = q
        self.math = math
        self.leaf = lf
        self.idx = idx if idx is not None else [q.int_var(f"{tag}.{lc.var}{list(lc.path)}") for lc in lf.loops]
        env: dict[str, z3.ArithRef] = {}
        for i, lc in zip(self.idx, lf.loops, strict=True):
            env[lc.var] = i  # an inner loop's variable shadows an outer one of the same name, as in the interpreter
        # a term naming no enclosing loop names a trip (validate): its term in this query (LoopMath.count)
        lo = q.val(op.addr.base) + z3.Sum([q.val(0)] + [(env[t.var] if t.var in env else math.count(t.var)) * t.coef
                                                         for t in op.addr.terms])
        d = op.addr.dynamic
        self.dyn_range: list[z3.BoolRef] = []
        if d is not None:
            if d.name not in dyn:
                dyn[d.name] = q.int_var(f"dyn[{d.name}]")
            v = dyn[d.name]
            self.dyn_range = [v >= d.lo, v <= d.hi]
            lo = lo + v * d.scale
        self.lo = lo
        self.hi = lo + op.tiles

    def domain(self) -> z3.BoolRef:
        """An occurrence that runs (indices in range, admitted by every enclosing ``If``) and its indirect value."""
        return z3.And(self.math.domain(self.leaf, self.idx), *self.dyn_range)

    def shares(self, other: _Access) -> z3.BoolRef:
        return z3.And(self.lo < other.hi, other.lo < self.hi)

    def issued(self, enc: Encoder) -> z3.BoolRef:
        """This occurrence has executed on its engine."""
        return enc.executed(self.leaf) > enc.math.ordinal(self.leaf, self.idx)

    def complete(self, enc: Encoder, barrier: Leaf | None) -> z3.BoolRef:
        """Its engine has passed the barrier occurrence that completes it (never, without a barrier)."""
        if barrier is None:
            return enc.q.false()
        return enc.executed(barrier) > enc.math.ordinal(barrier, self.idx[: len(barrier.loops)])

    def values(self, m: z3.ModelRef) -> dict[str, int]:
        return {lc.var: model_int(m, i) for lc, i in zip(self.leaf.loops, self.idx, strict=True)}

    def at(self, m: z3.ModelRef) -> str:
        """Where this occurrence is in a reason: ``at [4, 1] (loop iteration r=0)`` (its op path, then the loop indices
        of the model as every message words them, ``ir.source.iteration_words``); ``at [1]`` in no loop."""
        it = self.values(m)
        return f"at {list(self.leaf.path)}" + (f" ({iteration_words(it)})" if it else "")


def _count(enc: Encoder) -> LoopMath:
    return enc.math


def _static_count(q: Query, trips: dict[str, z3.ArithRef], program: Program) -> LoopMath:
    for t in program.trips:
        if t.name not in trips:
            v = q.int_var(f"trip[{t.name}]")
            q.add(z3.And(v >= 0, v <= t.max), "trip-range")
            trips[t.name] = v
    return LoopMath(q, lambda c: count_expr(q, c, trips))


#: Most occurrences ``_tile_set`` enumerates for one access (past it the solver decides).
TILE_SET_LIMIT = 4096


def _tile_set(p: Program, lf: Leaf) -> frozenset[int] | None:
    """Every tile some occurrence of access ``lf`` can touch, as ``tile_hull`` bounds them (each loop index over
    ``[0, max(count - 1, 0)]`` with trips at their max, guards ignored): a superset, so disjoint sets prove that two
    accesses share no tile. None for an indirect address, a term naming no enclosing loop, or more than
    ``TILE_SET_LIMIT`` occurrences. Measured: the 64-node elementwise tutorial asked the solver 3,587 tile-overlap
    queries at 17 ms of context each, all of them disjoint strided sets."""
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    if op.addr.dynamic is not None:
        return None
    trip_max = p.trip_max()
    tops: dict[str, int] = {}
    for lc in lf.loops:
        trip = count_trip(lc.count)
        if trip is not None and trip not in trip_max:
            return None
        tops[lc.var] = max(count_max(lc.count, trip_max), 1)
    if any(t.var not in tops for t in op.addr.terms):
        return None
    n = 1
    for v in {t.var for t in op.addr.terms}:
        n *= tops[v]
    if n * op.tiles > TILE_SET_LIMIT:
        return None
    starts = {op.addr.base}
    for t in op.addr.terms:
        starts = {s + t.coef * i for s in starts for i in range(tops[t.var])}
    return frozenset(s + k for s in starts for k in range(op.tiles))


#: Most tiles ``_exact_tiles`` enumerates for one write (past it the solver decides coverage).
EXACT_TILES_LIMIT = 1 << 18
#: Most tiles ``_output_by_trip_value`` enumerates over all trip values together (about a second of set work).
TRIP_TILES_LIMIT = 1 << 20


def _exact_tiles(lf: Leaf, trips: dict[str, int] | None = None, guards: bool = True) -> set[int] | None:
    """Exactly the tiles the occurrences of access ``lf`` touch, when that is a finite set known without the
    solver: constant loop counts (or every trip's value given in ``trips``), no enclosing ``If``, a direct address,
    at most ``EXACT_TILES_LIMIT`` tiles; else None. ``guards`` False: the enclosing ``If``s are ignored, so the set
    is a superset (for disjointness, never for coverage). Measured: the 256x256-tile single-tile matmul tutorial's output
    coverage (a quantified query) came back unknown after 9 s; its 65,536 tiles enumerate in milliseconds."""
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    if op.addr.dynamic is not None or (guards and lf.guards) or (
            trips is None and any(not isinstance(lc.count, int) for lc in lf.loops)):
        return None
    # an inner variable shadows an outer one, as in the encoding
    counts = {lc.var: count_value(lc.count, trips or {}) for lc in lf.loops}
    # a term naming no enclosing loop names a trip (validate): a constant part at the given trip values
    fixed = sum(t.coef * (trips or {})[t.var] for t in op.addr.terms if t.var not in counts and t.var in (trips or {}))
    if any(t.var not in counts and t.var not in (trips or {}) for t in op.addr.terms):
        return None
    total = op.tiles
    for lc in lf.loops:
        total *= count_value(lc.count, trips or {})
    if total > EXACT_TILES_LIMIT:
        return None
    if any(count_value(lc.count, trips or {}) == 0 for lc in lf.loops):
        return set()
    starts = {op.addr.base + fixed}
    for t in op.addr.terms:
        if t.var not in counts:
            continue
        n = counts[t.var]
        assert isinstance(n, int)
        starts = {x + t.coef * i for x in starts for i in range(n)}
    return {x + k for x in starts for k in range(op.tiles)}


Footprints = dict[tuple[str, int], tuple[tuple[int, int] | None, frozenset[int] | None]]


def _footprint(p: Program, lf: Leaf, memo: Footprints | None
               ) -> tuple[tuple[int, int] | None, frozenset[int] | None]:
    """``(tile_hull, _tile_set)`` of access ``lf``, computed once per leaf when ``memo`` is given."""
    if memo is None:
        return _hull(p, lf), _tile_set(p, lf)
    key = (lf.engine, lf.index)
    got = memo.get(key)
    if got is None:
        got = memo[key] = (_hull(p, lf), _tile_set(p, lf))
    return got


#: Per access (engine, leaf index): its tiles at each combination of trip values (``_disjoint_at_every_trip``).
TripSets = dict[tuple[str, int], list[set[int] | None]]


def _disjoint_at_every_trip(p: Program, l1: Leaf, l2: Leaf, memo: TripSets | None) -> bool:
    """True when at every combination of trip values (at most ``TRIP_VALUES_LIMIT``) the two accesses' tiles, each
    enumerated at those values (``_exact_tiles`` with the guards ignored: a superset), are disjoint; False when they
    meet at some value or cannot be enumerated (the solver decides). For addresses that name a trip, whose
    ``_tile_set`` (at the trips' max) is None. Measured: elementwise step 3 over 8 row counts asked the solver 1,824
    tile-overlap queries (43 s of fresh contexts) that this answers in milliseconds."""
    values = [range(t.max + 1) for t in p.trips]
    if not values or math.prod(len(v) for v in values) > TRIP_VALUES_LIMIT:
        return False
    names = [t.name for t in p.trips]
    combos = [dict(zip(names, c, strict=True)) for c in itertools.product(*values)]

    def sets(lf: Leaf) -> list[set[int] | None]:
        key = (lf.engine, lf.index)
        got = memo.get(key) if memo is not None else None
        if got is None:
            got = [_exact_tiles(lf, at, guards=False) for at in combos]
            if memo is not None:
                memo[key] = got
        return got

    for a, b in zip(sets(l1), sets(l2), strict=True):
        if a is None or b is None or not a.isdisjoint(b):
            return False
    return True


def _may_share_tile(p: Program, l1: Leaf, l2: Leaf, rlimit: int, memo: Footprints | None = None,
                    trip_memo: TripSets | None = None) -> bool | None:
    """Whether some occurrences of the two accesses (for some trips and indirect values) touch a common tile.
    ``memo``: footprints of the accesses already computed (``_footprint``), one dict per program; ``trip_memo``
    likewise their tiles at each trip value (``_disjoint_at_every_trip``)."""
    (h1, t1), (h2, t2) = _footprint(p, l1, memo), _footprint(p, l2, memo)
    if h1 is not None and h2 is not None and (h1[1] <= h2[0] or h2[1] <= h1[0]):
        return False  # disjoint hulls: no query needed (a fresh Z3 context per pair dominates wide grids)
    if t1 is not None and t2 is not None and t1.isdisjoint(t2):
        return False  # interleaved but disjoint (a grid's nodes striding over one tensor): no query either
    if (t1 is None or t2 is None) and _disjoint_at_every_trip(p, l1, l2, trip_memo):
        return False  # blocks placed by a trip (an address naming one): disjoint at each trip value
    q = Query("tile-overlap", rlimit)
    count = _static_count(q, {}, p)
    dyn: dict[str, z3.ArithRef] = {}
    x, y = _Access(q, count, l1, "a", dyn), _Access(q, count, l2, "b", dyn)
    q.add(z3.And(x.domain(), y.domain(), x.shares(y)))
    r = q.check()
    return None if r.status == Status.UNKNOWN else r.status == Status.SAT


def _run(a: Analysis, trusted: set[int], name: str, engines: list[str], build: Build,
         proved: str, refuted: str | Callable[[z3.ModelRef], str], rule: str, rlimit: int,
         **extra: object) -> Result:
    t0 = time.perf_counter()
    o, d, _ = solve_each(a, build, name, frozenset(engines), trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED, proved, seconds=dt)
    if o.status == Status.SAT and d is not None:
        assert o.model is not None
        why = refuted if isinstance(refuted, str) else refuted(o.model)
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.REFUTED, why, _cex(rule, d, why, **extra), dt)
    return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _part(lf: Leaf) -> bool:
    """Whether leaf ``lf`` transfers part of a page (``ReadTiles`` / ``WriteTiles`` with a ``part``)."""
    return isinstance(lf.op, (ReadTiles, WriteTiles)) and lf.op.part is not None


def _not_claimed(r: Result, tensor: str) -> Result:
    """A proof about ``tensor`` that counted a part-page write as its whole tile: failed-to-prove instead (fail
    closed). Refutations (replayed) and failures stand."""
    if r.verdict != Verdict.PROVED:
        return r
    return attrs.evolve(r, verdict=Verdict.FAILED, reason=f"{tensor} is written in parts of pages: a read's bytes "
                        "covered by completed part writes is outside the fragment the checker decides (the "
                        "interpreter decides it per byte)")


def _leaf_ref(lf: Leaf) -> str:
    return f"{lf.engine}{list(lf.path)}"


def check_ordering(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    p = a.program
    out: list[Result] = []
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    # Sharded buffers are accesses of their tensors too (their pushes read or write its tiles): their write shards count
    # among the writes here, and the pairs that involve one are decided beside this (families/cb/shard_ordering_encoding.py).
    shards = shard_sides(a)
    for t in p.tensors:
        reads = [lf for lf in leaves if isinstance(lf.op, ReadTiles) and lf.op.tensor == t.name]
        writes = [lf for lf in leaves if isinstance(lf.op, WriteTiles) and lf.op.tensor == t.name]
        sides = shards.get(t.name, ([], []))
        cover = WriteCover(tuple(sides[1])) if sides[1] else None
        # Part-page writes (docs/semantics.md, "Part-page transfers"): a tile counts as written only when parts cover
        # its bytes, which these queries do not count. Output coverage is asked of the whole writes alone (a proof
        # then never counts a part as its tile; a refutation is replayed by the byte-exact interpreter, else it fails
        # to prove); an activation's read-after-write proof would take a part for its tile, so it is not claimed. The
        # write-write queries take a part as its whole tile: stricter than per byte, so their proofs stand.
        whole = [w for w in writes if not _part(w)]
        if t.role == Role.OUTPUT:
            out.append(_output(a.program, t.name, whole, rlimit, cover, a))
        if t.role == Role.ACTIVATION:
            got = _activation(a, trusted, t.name, reads, writes, rlimit, cover)
            if len(whole) < len(writes):
                got = [_not_claimed(r, t.name) for r in got]
            out.extend(got)
        elif t.role == Role.STATE:
            out.extend(_state(a, trusted, t.name, reads, writes, rlimit))
        out.extend(_write_write(a, trusted, t.name, writes, rlimit))
    out.extend(_rendezvous(a, trusted, rlimit))
    return out


def _state(a: Analysis, trusted: set[int], tensor: str, reads: list[Leaf], writes: list[Leaf],
           rlimit: int) -> list[Result]:
    """Per (write, read) pair that may share a tile, per-tile versions by section (semantics.md ``tensor-race``):
    a read in section ``r`` sees the version the sections before ``r`` wrote. So a write of an earlier section
    ``w < r`` must be complete before the read is issued (``hb-state:T:R<W``, the activation question), and a write
    of a section ``w >= r`` is issued only after the read of the old version landed (``hb-state:T:W<R``)."""
    out: list[Result] = []
    for r in reads:
        done_r = _next_barrier(a, r, ReadBarrier)
        for w in writes:
            if w.section < r.section:
                out.extend(_read_after_write(a, trusted, tensor, r, w, f"{R.HB_STATE}:{tensor}:{_leaf_ref(r)}<{_leaf_ref(w)}",
                                             rlimit, "state"))
                continue
            name = f"{R.HB_STATE}:{tensor}:{_leaf_ref(w)}<{_leaf_ref(r)}"
            share = _may_share_tile(a.program, r, w, rlimit)
            if share is False:
                continue
            if share is None:
                out.append(Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED, "solver: unknown on the tile overlap"))
                continue
            held: dict[str, _Access] = {}

            def build(sq: StateQuery, r: Leaf = r, w: Leaf = w, done_r: Leaf | None = done_r,
                      held: dict[str, _Access] = held) -> z3.BoolRef:
                dyn: dict[str, z3.ArithRef] = {}
                wa = _Access(sq.q, _count(sq.enc), w, "w", dyn)
                ra = _Access(sq.q, _count(sq.enc), r, "r", dyn)
                held["w"], held["r"] = wa, ra
                return z3.And(wa.domain(), ra.domain(), wa.shares(ra), wa.issued(sq.enc),
                              z3.Not(ra.complete(sq.enc, done_r)))

            def why(m: z3.ModelRef, r: Leaf = r, w: Leaf = w, held: dict[str, _Access] = held) -> str:
                wa, ra = held["w"], held["r"]
                tile = max(model_int(m, wa.lo), model_int(m, ra.lo))
                return (f"{w.engine} can write state {tensor} tile {tile} {wa.at(m)} before "
                        f"{r.engine}'s read of its old value {ra.at(m)} landed")

            out.append(_run(
                a, trusted, name, [r.engine, w.engine], build,
                f"every tile {w.engine} writes of state {tensor} is written after {r.engine}'s reads of its old value "
                f"landed",
                why, R.TENSOR_RACE, rlimit, engine=r.engine, path=list(r.path),
                read={"engine": r.engine, "path": list(r.path)}, write={"engine": w.engine, "path": list(w.path)}))
    return out


def _coverage(p: Program, tensor: str, r: Leaf, writes: list[Leaf], rlimit: int,
              cover: WriteCover | None = None) -> Result:
    """Every tile any occurrence of ``r`` takes is written by some occurrence of some write of ``tensor`` in the
    same run (same trips and indirect values): "exists a read occurrence and a tile of it that no write occurrence
    covers" is unsat. The writes' occurrences are universally quantified (linear integer arithmetic)."""
    name = f"{R.HB_ACTIVATION}:{tensor}:{_leaf_ref(r)}"
    t0 = time.perf_counter()
    q = Query(name, rlimit)
    trips: dict[str, z3.ArithRef] = {}
    count = _static_count(q, trips, p)
    dyn: dict[str, z3.ArithRef] = {}
    ra = _Access(q, count, r, "r", dyn)
    tile = q.int_var("tile")
    q.add(z3.And(ra.domain(), tile >= ra.lo, tile < ra.hi))
    _no_write_covers(q, count, tile, writes, cover, dyn)
    o = q.check()
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED,
                      f"every tile {r.engine} reads of {tensor} is written by a write of it", seconds=dt)
    if o.status == Status.SAT:
        assert o.model is not None
        m = o.model
        x = model_int(m, tile)
        it = ra.values(m)
        why = (f"{r.engine} reads {tensor} tile {x} {ra.at(m)}, which no write of {tensor} writes"
               if writes else f"activation {tensor} is read but never written")
        cex: dict[str, object] = {
            "kind": "race", "rule": R.TENSOR_RACE, "engine": r.engine, "path": list(r.path), "iteration": it,
            "tile": x, "trips": {n: model_int(m, v) for n, v in trips.items()},
            "dynamic": {n: model_int(m, v) for n, v in dyn.items()}, "summary": why}
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.REFUTED, why, cex, dt)
    return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _no_write_covers(q: Query, count: LoopMath, tile: z3.ArithRef, writes: list[Leaf], cover: WriteCover | None,
                     dyn: dict[str, z3.ArithRef]) -> None:
    """Asserts that no occurrence of any of ``writes`` (quantified over its loop indices) and no page of the write
    shards ``cover`` writes tensor tile ``tile``: the shared half of the read-coverage and output-coverage queries."""
    for k, w in enumerate(writes):
        wa = _Access(q, count, w, f"w{k}", dyn)
        miss = z3.Implies(wa.domain(), z3.Or(tile < wa.lo, tile >= wa.hi))
        q.add(z3.ForAll(wa.idx, miss) if wa.idx else miss)
    for c in cover.misses(q, count, tile) if cover is not None else ():
        q.add(c)


def _output(p: Program, tensor: str, writes: list[Leaf], rlimit: int, cover: WriteCover | None = None,
            a: Analysis | None = None) -> Result:
    """``output-unwritten``: every tile of output ``tensor`` is written by some occurrence of some write of it, for
    every trip value and indirect value (docs/semantics.md): "exists a run and a tile no write occurrence covers" is
    unsat. The writes' occurrences are universally quantified (linear integer arithmetic), as in ``_coverage``.

    This is a static question on the occurrences a run executes; a run that deadlocks before writing is the deadlock
    obligation's. A refutation names the trips and the tile; the interpreter replays it (its end-of-run check)."""
    name = f"{R.OUTPUT_UNWRITTEN}:{tensor}"
    t0 = time.perf_counter()
    ntiles = p.tensor(tensor).tiles(p.target.tile)
    sets = [_exact_tiles(w) for w in writes]
    if cover is not None:  # the write shards' pages (``a``: the analysis their push counts come from)
        sets.append(cover.exact(p, a) if a is not None else None)
    if sets and all(x is not None for x in sets) and ntiles <= EXACT_TILES_LIMIT:
        written: set[int] = set().union(*(x for x in sets if x is not None))
        if written.issuperset(range(ntiles)):
            return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED, f"every tile of output {tensor} is written "
                          "(its writes' tiles enumerated: constant counts)", seconds=time.perf_counter() - t0)
    sized = _output_by_trip_value(p, tensor, writes, cover, t0)
    if sized is not None:
        return sized
    q = Query(name, rlimit)
    trips: dict[str, z3.ArithRef] = {}
    count = _static_count(q, trips, p)
    dyn: dict[str, z3.ArithRef] = {}
    tile = q.int_var("tile")
    t = p.tensor(tensor)
    # a tensor sized by a trip: its tiles at the run's trip value, a prefix of those at the max
    size = q.val(ntiles) if t.trip_rows is None else count_expr(q, t.trip_rows, trips) * t.col_tiles(p.target.tile)
    q.add(z3.And(tile >= 0, tile < size))
    _no_write_covers(q, count, tile, writes, cover, dyn)
    for d, v in dyn.items():
        lo, hi = next((w.op.addr.dynamic.lo, w.op.addr.dynamic.hi) for w in writes  # type: ignore[union-attr]
                      if isinstance(w.op, WriteTiles) and w.op.addr.dynamic is not None and w.op.addr.dynamic.name == d)
        q.add(z3.And(v >= lo, v <= hi))
    o = q.check()
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED,
                      f"every tile of output {tensor} is written, for every trip value", seconds=dt)
    if o.status == Status.SAT:
        assert o.model is not None
        m = o.model
        x = model_int(m, tile)
        ts = {n: model_int(m, v) for n, v in trips.items()}
        why = (f"output {tensor} tile {x} is written by no write of it"
               + (f" when {trip_words(ts)}" if ts else ""))
        # The interpreter reports it at the end, at the first engine that writes the tensor (else the first engine).
        engine = writes[0].engine if writes else cover.sides[0].pushes[0].engine if cover is not None else (
            p.programs[0].key if p.programs else "")
        cex: dict[str, object] = {"kind": "rule", "rule": R.OUTPUT_UNWRITTEN, "engine": engine, "path": None,
                                  "tile": x, "trips": ts, "dynamic": {n: model_int(m, v) for n, v in dyn.items()},
                                  "summary": why}
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.REFUTED, why, cex, dt)
    return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)



def _output_by_trip_value(p: Program, tensor: str, writes: list[Leaf], cover: WriteCover | None,
                          t0: float) -> Result | None:
    """``output-unwritten`` of an output sized by a trip (``Tensor.trip_rows``), decided exactly by enumerating its
    writes' tiles at every trip value, when every write's tiles enumerate (``_exact_tiles``) and the tiles of all the
    values together are at most ``EXACT_TILES_LIMIT``; None otherwise (the solver decides). Exact: the trips are the
    finite ranges ``[0, max]`` and each value's set is the writes' every occurrence at it. Measured: the coverage
    query of elementwise step 1 over 16 row counts (a quantified query) came back unknown; its 35,000 tiles
    enumerate in milliseconds."""
    t = p.tensor(tensor)
    if t.trip_rows is None or cover is not None or not writes:
        return None
    names = [x.name for x in p.trips]
    values = [range(x.max + 1) for x in p.trips]
    combos = list(itertools.product(*values)) if math.prod(len(v) for v in values) <= TRIP_VALUES_LIMIT else []
    if not combos or sum(t.tiles_at(p.target.tile, dict(zip(names, c, strict=True))) for c in combos) > \
            TRIP_TILES_LIMIT:
        return None
    name = f"{R.OUTPUT_UNWRITTEN}:{tensor}"
    for combo in combos:
        at = dict(zip(names, combo, strict=True))
        sets = [_exact_tiles(w, at) for w in writes]
        if any(x is None for x in sets):
            return None
        ntiles = t.tiles_at(p.target.tile, at)
        written: set[int] = set().union(*(x for x in sets if x is not None))
        missing = next((k for k in range(ntiles) if k not in written), None)  # at most len(written) + 1 steps
        if missing is not None:
            why = (f"output {tensor} tile {missing} is written by no write of it"
                   + (f" when {trip_words(at)}" if at else ""))
            cex: dict[str, object] = {"kind": "rule", "rule": R.OUTPUT_UNWRITTEN, "engine": writes[0].engine,
                                      "path": None, "tile": missing, "trips": at, "dynamic": {}, "summary": why}
            return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.REFUTED, why, cex, time.perf_counter() - t0)
    return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED, f"every tile of output {tensor} is written, "
                  "for every trip value (its writes' tiles enumerated at each)", seconds=time.perf_counter() - t0)


def _output_coverage_query(p: Program, t: Tensor, writes: list[Leaf], rlimit: int) -> Result:
    """``_output`` for output ``t`` over the given writes (the compositional check passes every phase's)."""
    return _output(p, t.name, writes, rlimit)

def _activation(a: Analysis, trusted: set[int], tensor: str, reads: list[Leaf], writes: list[Leaf],
                rlimit: int, cover: WriteCover | None = None) -> list[Result]:
    out: list[Result] = []
    for r in reads:
        name = f"{R.HB_ACTIVATION}:{tensor}:{_leaf_ref(r)}"
        out.append(_coverage(a.program, tensor, r, writes, rlimit, cover))
        for w in writes:
            out.extend(_read_after_write(a, trusted, tensor, r, w, name + f"<{_leaf_ref(w)}", rlimit, "activation"))
    return out


def _read_after_write(a: Analysis, trusted: set[int], tensor: str, r: Leaf, w: Leaf, pair: str, rlimit: int,
                      what: str) -> list[Result]:
    """No occurrence of read ``r`` is issued while an occurrence of write ``w`` that shares a tile with it is not
    complete (not yet issued, or issued and not past its engine's next write barrier). The interpreter reports
    such a race at the read (the write was issued) or at the write (the read came first), so a counterexample
    replays at either op (``at``)."""
    share = _may_share_tile(a.program, r, w, rlimit)
    if share is False:
        return []
    if share is None:
        return [Result(R.Family.HAPPENS_BEFORE.value, pair, Verdict.FAILED, "solver: unknown on the tile overlap")]
    at: list[dict[str, object]] = [{"engine": r.engine, "path": list(r.path)}]
    if what == "state":
        at.append({"engine": w.engine, "path": list(w.path), "cause": Cause.LATE_STATE_WRITE})
    cp = _completion(a, w)
    if cp is None:
        return [Result(R.Family.HAPPENS_BEFORE.value, pair, Verdict.REFUTED,
                       f"the write of {tensor} by {w.engine} at {list(w.path)} is never completed by a write barrier",
                       {"kind": "race", "rule": R.TENSOR_RACE, "at": at,
                        "summary": f"{w.engine} never completes its write of {tensor}"})]
    held: dict[str, _Access] = {}

    def build(sq: StateQuery) -> z3.BoolRef:
        dyn: dict[str, z3.ArithRef] = {}
        pos = sq.enc.position(r.engine)
        ra = _Access(sq.q, _count(sq.enc), r, "r", dyn, [pos.idx[lc.path] for lc in r.loops])
        wa = _Access(sq.q, _count(sq.enc), w, "w", dyn)
        held["w"], held["r"] = wa, ra
        return z3.And(pos.at(r), ra.domain(), wa.domain(), ra.shares(wa), z3.Not(wa.complete(sq.enc, cp)))

    def why(m: z3.ModelRef) -> str:
        wa, ra = held["w"], held["r"]
        tile = max(model_int(m, wa.lo), model_int(m, ra.lo))
        return (f"{r.engine} can read {what} {tensor} tile {tile} {ra.at(m)} before "
                f"{w.engine}'s write of it {wa.at(m)} completed")

    return [_run(
        a, trusted, pair, [r.engine, w.engine], build,
        f"{r.engine} reads each tile of {tensor} after {w.engine}'s writes of it completed",
        why, R.TENSOR_RACE, rlimit, at=at,
        read={"engine": r.engine, "path": list(r.path)}, write={"engine": w.engine, "path": list(w.path)})]


#: Most (tile, pair of writes) incidences ``_write_write`` enumerates to find the pairs whose tile sets meet
#: (writes sharing many tiles: then every pair is tested on its own).
MEET_LIMIT = 200_000


def _write_write(a: Analysis, trusted: set[int], tensor: str, writes: list[Leaf], rlimit: int) -> list[Result]:
    """Two engines' writes that may share a tile: neither issues an occurrence of a common tile while the other's
    occurrence of it is incomplete (DESIGN §5: no two sites write the same tile unordered)."""
    out: list[Result] = []
    memo: Footprints = {}
    trip_memo: TripSets = {}
    # Pairs whose tile sets (``_tile_set``) meet, from one map tile -> writes (linear in the tiles, where testing
    # every pair's sets is quadratic in the writes: 32,640 pairs on the 64-node matmul tutorial). A pair with
    # an unknown set (None) is left to ``_may_share_tile``, as is every pair that meets.
    sets = [_footprint(a.program, w, memo)[1] for w in writes]
    by_tile: dict[int, list[int]] = {}
    for i, ts in enumerate(sets):
        for tile in ts or ():
            by_tile.setdefault(tile, []).append(i)
    meet: set[tuple[int, int]] | None = None
    if sum(len(ws) * (len(ws) - 1) // 2 for ws in by_tile.values()) <= MEET_LIMIT:
        meet = {(i, j) for ws in by_tile.values() if len(ws) > 1 for k, i in enumerate(ws) for j in ws[k + 1:]}
    for i, w1 in enumerate(writes):
        for j in range(i + 1, len(writes)):
            w2 = writes[j]
            if w1.engine == w2.engine:
                continue
            if meet is not None and sets[i] is not None and sets[j] is not None and (i, j) not in meet:
                continue  # disjoint tile sets: what _may_share_tile would conclude first, without a query
            name = f"{R.HB_WRITE_WRITE}:{tensor}:{_leaf_ref(w1)}~{_leaf_ref(w2)}"
            share = _may_share_tile(a.program, w1, w2, rlimit, memo, trip_memo)
            if share is False:
                continue
            if share is None:
                out.append(Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED, "solver: unknown on the tile overlap"))
                continue
            c1, c2 = _completion(a, w1), _completion(a, w2)
            held: dict[str, tuple[_Access, _Access]] = {}

            def build(sq: StateQuery, w1: Leaf = w1, w2: Leaf = w2, c1: Leaf | None = c1, c2: Leaf | None = c2,
                      held: dict[str, tuple[_Access, _Access]] = held) -> z3.BoolRef:
                dyn: dict[str, z3.ArithRef] = {}
                cases = []
                for tag, now, other, co in (("a", w2, w1, c1), ("b", w1, w2, c2)):
                    pos = sq.enc.position(now.engine)
                    na = _Access(sq.q, _count(sq.enc), now, f"{tag}.now", dyn, [pos.idx[lc.path] for lc in now.loops])
                    oa = _Access(sq.q, _count(sq.enc), other, f"{tag}.other", dyn)
                    held[tag] = (na, oa)
                    cases.append(z3.And(pos.at(now), na.domain(), oa.domain(), na.shares(oa), oa.issued(sq.enc),
                                        z3.Not(oa.complete(sq.enc, co))))
                return any_of(sq.q.ctx, cases)

            def why(m: z3.ModelRef, w1: Leaf = w1, w2: Leaf = w2,
                    held: dict[str, tuple[_Access, _Access]] = held) -> str:
                for tag in ("a", "b"):
                    na, oa = held[tag]
                    if z3.is_true(m.eval(z3.And(na.domain(), oa.domain(), na.shares(oa)), model_completion=True)):
                        tile = max(model_int(m, na.lo), model_int(m, oa.lo))
                        return (f"{na.leaf.engine} can write {tensor} tile {tile} {na.at(m)} "
                                f"while {oa.leaf.engine}'s write of it {oa.at(m)} is incomplete")
                return f"{w1.engine} and {w2.engine} can write a common tile of {tensor} unordered"

            out.append(_run(a, trusted, name, [w1.engine, w2.engine], build,
                            f"{w1.engine} and {w2.engine} never write a common tile of {tensor} while the other's "
                            f"write of it is incomplete",
                            why, R.TENSOR_RACE, rlimit,
                            at=[{"engine": w1.engine, "path": list(w1.path)},
                                {"engine": w2.engine, "path": list(w2.path)}]))
    return out


def _rendezvous(a: Analysis, trusted: set[int], rlimit: int) -> list[Result]:
    """``hb-rendezvous:after-section-<b>`` per closing section ``b`` (ir/boundaries.py): no engine executes an op of
    a section ``> b`` while another has work before boundary ``b`` left. Replayed through ``rendezvous-early`` at
    that boundary only."""
    p = a.program
    out: list[Result] = []
    for b in closing_sections(p):
        sec = p.sections[b]
        before: dict[str, Leaf] = {}
        after: dict[str, Leaf] = {}
        for key, v in a.views.items():
            end = work_ends(p, v.program)[b]
            work = [lf for lf in v.leaves if lf.path[0] < end]
            later = [lf for lf in v.leaves if lf.section > b]
            if work:
                before[key] = work[-1]
            if later:
                after[key] = later[0]
        if not before or not after:
            continue
        name = f"{R.HB_RENDEZVOUS}:after-section-{b}"

        def build(sq: StateQuery, before: dict[str, Leaf] = before, after: dict[str, Leaf] = after) -> z3.BoolRef:
            unfinished = [z3.Not(sq.enc.position(e).passed(lf)) for e, lf in before.items()]
            started = [sq.enc.position(e).passed(lf) for e, lf in after.items()]
            return z3.And(any_of(sq.q.ctx, unfinished), any_of(sq.q.ctx, started))

        out.append(_run(a, trusted, name, [*before, *after], build,
                        f"the rendezvous after section {b} ({sec.name}) orders all {len(before)} engines' work before "
                        f"section {b + 1}",
                        f"an engine can start section {b + 1} while another has not finished section {b}",
                        R.RENDEZVOUS_EARLY, rlimit, boundary=b))
    return out
