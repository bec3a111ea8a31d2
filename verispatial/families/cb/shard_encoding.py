"""The checker's encoding of sharded (globally allocated) circular buffers (docs/semantics.md "Sharded buffers";
``ir/shards.py``; the interpreter's side is ``shard_semantics.py`` beside this file).

- ``cb-shard-overrun:bN``: the running sum of pages pushed into sharded buffer ``N`` stays within its shard
  (``program.shard_pages``: the ring's pages on the shard): a push past it publishes ring slot 0 again, the same bytes
  of the tensor (the ring starts at the shard at every launch, ``circular_buffer_init.h``), or pages of a ring larger
  than its shard, L1 that is not the tensor's (tt-metal #15337). One query per push op: "at this push, the pages
  pushed before plus its own exceed the shard's pages" (the running sum is linear in the loop indices, as
  ``cb-straddle``'s); constant totals within the shard prove without Z3.
- Tensor ordering: a sharded buffer is one *access* of its tensor made of pages. Its pushes publish pages ``0, 1, ...``
  in order (within its shard, which ``cb-shard-overrun`` proves), so page ``k`` has been published in a state exactly
  when the pages pushed so far exceed ``k``, and a run publishes pages ``[0, min(total, shard pages))``: no occurrence
  ordinal is needed. Page ``k`` holds the tensor tiles ``Shard.tile(k * page_tiles + t)`` for ``t`` in
  ``[0, page_tiles)``. A shard's read or write is complete when its page is published, so

  * a read shard's page is published before the completion of a write sharing its tile (``hb-activation``, and
    ``hb-state`` for a write of an earlier section) exactly when some reachable state has the page published and the
    write incomplete (published stays published, complete stays complete);
  * a write of a later section is issued before a read of the old value completed exactly when some reachable state
    has the write issued and the read's page not yet published (``hb-state``);
  * a shard's write races another engine's ``WriteTiles`` when its push runs while that write is issued and
    incomplete (``hb-write-write``; a shard's write is never incomplete itself);
  * coverage: every tile a read takes is written by some write in the same run, and every output tile is written
    (``output-unwritten``), with the write shards' pages among the writes (``WriteCover``).

  Obligations name a sharded buffer by its first push (``ENGINE[path]``); their counterexamples list every push of
  it, where the interpreter reports the race.
"""

from __future__ import annotations

import time

import attrs
import z3

from verispatial import budget
from verispatial.certify import smt
from verispatial.certify.positions import Encoder, LoopMath
from verispatial.certify.reach import Analysis, StateQuery
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, any_of, model_int
from verispatial.certify.structure import Leaf
from verispatial.families.cb.encoding import _constant_total, _iteration
from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.ops import Push
from verispatial.ir.program import Buffer, Program, shard_pages
from verispatial.ir.shards import shard_tiles, written_shards
from verispatial.petri.position import Cause


@attrs.frozen
class ShardSide:
    """A sharded buffer as one access of its tensor: every page its pushes publish. ``pushes``: its push leaves, in
    program order (one producer: ``cb-single-producer``); ``write``: a write shard (its producer writes into it)."""

    buf: Buffer
    pushes: tuple[Leaf, ...]
    write: bool

    @property
    def ref(self) -> str:
        """How obligations name it: its first push, ``ENGINE[path]``."""
        lf = self.pushes[0]
        return f"{lf.engine}{list(lf.path)}"

    @property
    def engines(self) -> list[str]:
        return sorted({lf.engine for lf in self.pushes})

    @property
    def tensor(self) -> str:
        assert self.buf.shard is not None
        return self.buf.shard.tensor

    def spots(self, cause: str = "") -> list[dict[str, object]]:
        """Every push, as the places where the interpreter may report the access's race."""
        return [{"engine": lf.engine, "path": list(lf.path), **({"cause": cause} if cause else {})}
                for lf in self.pushes]

    def first(self) -> dict[str, object]:
        return {"engine": self.pushes[0].engine, "path": list(self.pushes[0].path)}

    def tile_set(self) -> frozenset[int]:
        """Every tensor tile of its ring (a superset of what a run publishes)."""
        return frozenset(shard_tiles(self.buf, 0, shard_pages(self.buf)))


def shard_sides(a: Analysis) -> dict[str, tuple[list[ShardSide], list[ShardSide]]]:
    """Per tensor, its read shards and its write shards that some push publishes."""
    p = a.program
    written = written_shards(p)
    pushes: dict[int, list[Leaf]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            if isinstance(lf.op, Push) and p.buffers[lf.op.buf].shard is not None:
                pushes.setdefault(lf.op.buf, []).append(lf)
    out: dict[str, tuple[list[ShardSide], list[ShardSide]]] = {}
    for b, leaves in sorted(pushes.items()):
        side = ShardSide(p.buffers[b], tuple(leaves), b in written)
        reads, writes = out.setdefault(side.tensor, ([], []))
        (writes if side.write else reads).append(side)
    return out


# ---------------------------------------------------------------------------------------------- cb-shard-overrun


def check_shard_overrun(a: Analysis, rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """``cb-shard-overrun:bN`` for every sharded buffer with pushes; a refutation names the push, its iteration, the
    trips and the running sum."""
    out: list[Result] = []
    for sides in shard_sides(a).values():
        for side in (*sides[0], *sides[1]):
            out.append(_wrap(a, side, rlimit))
    return out


def _wrap(a: Analysis, side: ShardSide, rlimit: int) -> Result:
    p = a.program
    t0 = time.perf_counter()
    b, cap = side.buf.id, shard_pages(side.buf)
    name = f"{R.CB_SHARD_OVERRUN}:b{b}"
    fam = R.Family.CIRCULAR_BUFFER.value
    if smt.shortcuts():
        total = _constant_total(a, list(side.pushes))
        if total is not None and total <= cap:
            return Result(fam, name, Verdict.PROVED, f"b{b}'s pushes publish {total} pages of its {cap}-page shard in "
                          "all (constant counts)", seconds=time.perf_counter() - t0)
    for lf in side.pushes:
        budget.check()
        q = Query(name, rlimit)
        enc = Encoder(q, p, a.views)
        pos = enc.position(lf.engine)
        before = z3.Sum([q.val(0)] + [enc.executed(x) * x.op.pages for x in side.pushes  # type: ignore[union-attr]
                                      if x.engine == lf.engine])
        n = lf.op.pages  # type: ignore[union-attr]
        q.add(pos.at(lf))
        q.add(before + n > cap)
        r = q.check()
        if r.status == Status.SAT:
            assert r.model is not None
            it = _iteration(enc, r.model, lf)
            trips = {k: model_int(r.model, v) for k, v in enc.trip_vars.items()}
            run = model_int(r.model, before)
            summary = (f"{lf.engine} pushes {n} pages of sharded b{b} at running sum {run}: pages [{run}, {run + n}) "
                       f"pass the end of its {cap}-page shard of {side.tensor}")
            cex = {"kind": R.CB_SHARD_OVERRUN, "engine": lf.engine, "path": list(lf.path), "iteration": it,
                   "trips": trips, "buffer": b, "shard_pages": cap, "running_sum": run, "pages": n, "summary": summary}
            return Result(fam, name, Verdict.REFUTED, summary, cex, time.perf_counter() - t0)  # type: ignore[arg-type]
        if r.status == Status.UNKNOWN:
            return Result(fam, name, Verdict.FAILED, f"solver: {r.reason}", seconds=time.perf_counter() - t0)
    return Result(fam, name, Verdict.PROVED, f"every push of b{b} stays within its {cap}-page shard of {side.tensor}",
                  seconds=time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------- pages as accesses


def total_pages(side: ShardSide, math: LoopMath) -> z3.ArithRef:
    """Pages the shard's pushes publish in a whole run (trips as ``math`` counts them)."""
    q = math.q
    return z3.Sum([q.val(0)] + [math.weights(lf)[0] * lf.op.pages for lf in side.pushes])  # type: ignore[union-attr]


def pushed_pages(side: ShardSide, enc: Encoder) -> z3.ArithRef:
    """Pages the shard's pushes have published in the encoded state."""
    q = enc.q
    return z3.Sum([q.val(0)] + [enc.executed(lf) * lf.op.pages for lf in side.pushes])  # type: ignore[union-attr]


class Pages:
    """One page ``k`` of a sharded buffer and one tensor tile ``tile`` of it, inside a query: ``member`` says the tile
    is the page's (``tile == Shard.tile(k * page_tiles + t)`` for some ``t`` in ``[0, page_tiles)``; ``qvars`` are its
    variables, to quantify over)."""

    def __init__(self, q: Query, side: ShardSide, tag: str) -> None:
        b = side.buf
        sh = b.shard
        assert sh is not None
        self.side = side
        self.q = q
        self.k = q.int_var(f"{tag}.page")
        self.tile = q.int_var(f"{tag}.tile")
        t = q.int_var(f"{tag}.t")
        j = self.k * b.page_tiles + t
        conj = [t >= 0, t < b.page_tiles, self.k >= 0, self.k < shard_pages(b)]
        self.qvars = [self.k, t, self.tile]
        if sh.width <= 0:
            conj.append(self.tile == j + sh.start)
        else:
            row, col = q.int_var(f"{tag}.row"), q.int_var(f"{tag}.col")
            self.qvars += [row, col]
            conj += [col >= 0, col < sh.width, row >= 0, j == row * sh.width + col,
                     self.tile == row * sh.stride + col + sh.start]
        self.member = z3.And(*conj)

    def in_run(self, math: LoopMath) -> z3.BoolRef:
        """Page ``k`` is one the run publishes."""
        return self.k < total_pages(self.side, math)

    def published(self, enc: Encoder) -> z3.BoolRef:
        """Page ``k`` has been published in the encoded state (its read or write is complete)."""
        return pushed_pages(self.side, enc) > self.k


@attrs.frozen
class WriteCover:
    """The write shards of a tensor, as the coverage queries (``ordering._coverage`` / ``_output``) count writes."""

    sides: tuple[ShardSide, ...]

    def exact(self, p: Program, a: Analysis) -> set[int] | None:
        """Every tile the shards write in every run, when their push totals are constants; else None."""
        out: set[int] = set()
        for side in self.sides:
            total = _constant_total(a, list(side.pushes))
            if total is None:
                return None
            out.update(shard_tiles(side.buf, 0, min(total, shard_pages(side.buf))))
        return out

    def misses(self, q: Query, math: LoopMath, tile: z3.ArithRef) -> list[z3.BoolRef]:
        """``tile`` is none of the tiles the shards' pushes write in the run (their pages universally quantified)."""
        out: list[z3.BoolRef] = []
        for i, side in enumerate(self.sides):
            pg = Pages(q, side, f"cover{i}")
            out.append(z3.ForAll(pg.qvars, z3.Implies(z3.And(pg.member, pg.in_run(math)), pg.tile != tile)))
        return out


# ---------------------------------------------------------------------------------------------- orderings




def shard_orderings(a: Analysis, trusted: set[int], tensor: str, reads: list[Leaf], writes: list[Leaf],
                    sides: tuple[list[ShardSide], list[ShardSide]], rlimit: int) -> list[Result]:
    """The ordering obligations of ``tensor`` that involve a sharded buffer (the others are ``ordering.py``'s):
    ``reads`` / ``writes`` are its ``ReadTiles`` / ``WriteTiles`` leaves, ``sides`` its read and write shards."""
    p = a.program
    t = p.tensor(tensor)
    rs, ws = sides
    out: list[Result] = []
    cover = WriteCover(tuple(ws)) if ws else None
    if t.role in (Role.ACTIVATION, Role.STATE):
        for r in rs:
            if t.role is Role.ACTIVATION:
                out.append(_shard_coverage(a, tensor, r, writes, cover, rlimit))
            for w in writes:
                if t.role is Role.STATE and min(x.section for x in r.pushes) <= w.section:
                    out += _write_before_read(a, trusted, tensor, r, w, rlimit)
                else:
                    out += _read_before_write(a, trusted, tensor, r, w, rlimit, t.role)
            for sw in ws:
                if t.role is Role.STATE and min(x.section for x in r.pushes) <= min(x.section for x in sw.pushes):
                    out += _write_before_read(a, trusted, tensor, r, sw, rlimit)
                else:
                    out += _read_before_write(a, trusted, tensor, r, sw, rlimit, t.role)
        for rl in reads:
            for sw in ws:
                if t.role is Role.STATE and rl.section <= min(x.section for x in sw.pushes):
                    out += _write_before_read(a, trusted, tensor, rl, sw, rlimit)
                else:
                    out += _read_before_write(a, trusted, tensor, rl, sw, rlimit, t.role)
    for w in writes:
        for sw in ws:
            if w.engine not in sw.engines:
                out += _write_write(a, trusted, tensor, w, sw, rlimit)
    return out


def _shares(p: Program, x: Leaf | ShardSide, y: ShardSide, rlimit: int) -> bool | None:
    """Whether access ``x`` (a leaf or a shard) may touch a tile of shard ``y`` (a superset test: ``None`` unknown)."""
    from verispatial.certify.ordering import _footprint

    ys = y.tile_set()
    if isinstance(x, ShardSide):
        return bool(x.tile_set() & ys)
    hull, tiles = _footprint(p, x, None)
    if hull is not None and (hull[1] <= min(ys) or max(ys) < hull[0]):
        return False
    if tiles is not None:
        return bool(tiles & ys)
    return True


def _name(x: Leaf | ShardSide) -> str:
    return x.ref if isinstance(x, ShardSide) else f"{x.engine}{list(x.path)}"


def _engines(x: Leaf | ShardSide) -> list[str]:
    return x.engines if isinstance(x, ShardSide) else [x.engine]


def _spots(x: Leaf | ShardSide, cause: str = "") -> list[dict[str, object]]:
    if isinstance(x, ShardSide):
        return x.spots(cause)
    return [{"engine": x.engine, "path": list(x.path), **({"cause": cause} if cause else {})}]


def _first(x: Leaf | ShardSide) -> dict[str, object]:
    return x.first() if isinstance(x, ShardSide) else {"engine": x.engine, "path": list(x.path)}


def _read_before_write(a: Analysis, trusted: set[int], tensor: str, r: Leaf | ShardSide, w: Leaf | ShardSide,
                       rlimit: int, role: Role) -> list[Result]:
    """``hb-activation:T:R<W`` (``hb-state`` for a write of an earlier section): no tile of read ``r`` is taken before
    the completion of write ``w``'s occurrence of it. At least one of them is a shard (``ordering._read_after_write``
    decides two leaves)."""
    from verispatial.certify.ordering import _Access, _completion, _run

    p = a.program
    kind = R.HB_ACTIVATION if role is Role.ACTIVATION else R.HB_STATE
    pair = f"{kind}:{tensor}:{_name(r)}<{_name(w)}"
    shard, other = (w, r) if isinstance(w, ShardSide) else (r, w)
    assert isinstance(shard, ShardSide)
    if _shares(p, other, shard, rlimit) is False:
        return []
    at = _spots(r)
    if role is Role.STATE:
        at += _spots(w, Cause.LATE_STATE_WRITE)
    cp = None if isinstance(w, ShardSide) else _completion(a, w)
    if isinstance(w, Leaf) and cp is None:
        return [Result(R.Family.HAPPENS_BEFORE.value, pair, Verdict.REFUTED,
                       f"the write of {tensor} by {w.engine} at {list(w.path)} is never completed by a write barrier",
                       {"kind": "race", "rule": R.TENSOR_RACE, "at": at,
                        "summary": f"{w.engine} never completes its write of {tensor}"})]
    held: dict[str, z3.ArithRef] = {}

    def build(sq: StateQuery) -> z3.BoolRef:
        enc = sq.enc
        dyn: dict[str, z3.ArithRef] = {}
        conj: list[z3.BoolRef] = []
        if isinstance(r, ShardSide):
            rp = Pages(sq.q, r, "r")
            conj += [rp.member, rp.published(enc)]
            tile = rp.tile
        else:
            pos = enc.position(r.engine)
            ra = _Access(sq.q, enc.math, r, "r", dyn, [pos.idx[lc.path] for lc in r.loops])
            tile = sq.q.int_var("r.tile")
            conj += [pos.at(r), ra.domain(), tile >= ra.lo, tile < ra.hi]
        if isinstance(w, ShardSide):
            wp = Pages(sq.q, w, "w")
            conj += [wp.member, wp.in_run(enc.math), z3.Not(wp.published(enc)), wp.tile == tile]
        else:
            wa = _Access(sq.q, enc.math, w, "w", dyn)
            conj += [wa.domain(), tile >= wa.lo, tile < wa.hi, z3.Not(wa.complete(enc, cp))]
        held["tile"] = tile
        return z3.And(*conj)

    def why(m: z3.ModelRef) -> str:
        x = model_int(m, held["tile"])
        return (f"{_name(r)} can take {role.value} {tensor} tile {x} before {_name(w)}'s write of it completed"
                + (" (a sharded buffer's push publishes its tensor's tiles)" if isinstance(r, ShardSide) else ""))

    return [_run(a, trusted, pair, sorted({*_engines(r), *_engines(w)}), build,
                 f"{_name(r)} takes each tile of {tensor} after {_name(w)}'s write of it completed",
                 why, R.TENSOR_RACE, rlimit, at=at, read=_first(r), write=_first(w))]


def _write_before_read(a: Analysis, trusted: set[int], tensor: str, r: Leaf | ShardSide, w: Leaf | ShardSide,
                       rlimit: int) -> list[Result]:
    """``hb-state:T:W<R``: a write of a section at or after the read's is issued only after the read of the old value
    completed (landed; a shard's read at its push). At least one of them is a shard."""
    from verispatial.certify.ordering import _Access, _next_barrier, _run
    from verispatial.ir.ops import ReadBarrier

    p = a.program
    shard, other = (r, w) if isinstance(r, ShardSide) else (w, r)
    assert isinstance(shard, ShardSide)
    if _shares(p, other, shard, rlimit) is False:
        return []
    name = f"{R.HB_STATE}:{tensor}:{_name(w)}<{_name(r)}"
    done_r = None if isinstance(r, ShardSide) else _next_barrier(a, r, ReadBarrier)
    held: dict[str, z3.ArithRef] = {}

    def build(sq: StateQuery) -> z3.BoolRef:
        enc = sq.enc
        dyn: dict[str, z3.ArithRef] = {}
        conj: list[z3.BoolRef] = []
        if isinstance(w, ShardSide):
            wp = Pages(sq.q, w, "w")
            conj += [wp.member, wp.published(enc)]
            tile = wp.tile
        else:
            wa = _Access(sq.q, enc.math, w, "w", dyn)
            tile = sq.q.int_var("w.tile")
            conj += [wa.domain(), wa.issued(enc), tile >= wa.lo, tile < wa.hi]
        if isinstance(r, ShardSide):
            rp = Pages(sq.q, r, "r")
            conj += [rp.member, rp.in_run(enc.math), z3.Not(rp.published(enc)), rp.tile == tile]
        else:
            ra = _Access(sq.q, enc.math, r, "r", dyn)
            conj += [ra.domain(), tile >= ra.lo, tile < ra.hi, z3.Not(ra.complete(enc, done_r))]
        held["tile"] = tile
        return z3.And(*conj)

    def why(m: z3.ModelRef) -> str:
        return (f"{_name(w)} can write state {tensor} tile {model_int(m, held['tile'])} before {_name(r)}'s read of its "
                "old value completed")

    here = _first(r)
    return [_run(a, trusted, name, sorted({*_engines(r), *_engines(w)}), build,
                 f"every tile {_name(w)} writes of state {tensor} is written after {_name(r)}'s reads of its old value "
                 "completed", why, R.TENSOR_RACE, rlimit, engine=here["engine"], path=here["path"],
                 read=_first(r), write=_first(w), at=_spots(r))]


def _write_write(a: Analysis, trusted: set[int], tensor: str, w: Leaf, sw: ShardSide, rlimit: int) -> list[Result]:
    """``hb-write-write:T:W~S``: shard ``sw``'s push never writes a tile while ``WriteTiles`` ``w`` of another engine
    has issued a write of it that is not complete (a shard's write is complete at its push, so the other order never
    races)."""
    from verispatial.certify.ordering import _Access, _completion, _run

    p = a.program
    if _shares(p, w, sw, rlimit) is False:
        return []
    name = f"{R.HB_WRITE_WRITE}:{tensor}:{_name(w)}~{sw.ref}"
    cw = _completion(a, w)
    held: dict[str, z3.ArithRef] = {}

    def build(sq: StateQuery) -> z3.BoolRef:
        enc = sq.enc
        wa = _Access(sq.q, enc.math, w, "w", {})
        sp = Pages(sq.q, sw, "s")
        now = pushed_pages(sw, enc)
        cases = []
        for lf in sw.pushes:
            pos = enc.position(lf.engine)
            cases.append(z3.And(pos.at(lf), sp.k >= now, sp.k < now + lf.op.pages))  # type: ignore[union-attr]
        held["tile"] = sp.tile
        return z3.And(any_of(sq.q.ctx, cases), sp.member, wa.domain(), wa.issued(enc),
                      z3.Not(wa.complete(enc, cw)), sp.tile >= wa.lo, sp.tile < wa.hi)

    def why(m: z3.ModelRef) -> str:
        return (f"{sw.ref} can write {tensor} tile {model_int(m, held['tile'])} of its shard while {w.engine}'s write "
                f"of it at {list(w.path)} is incomplete")

    return [_run(a, trusted, name, sorted({w.engine, *sw.engines}), build,
                 f"{sw.ref} never writes a tile of {tensor} while {w.engine}'s write of it is incomplete", why,
                 R.TENSOR_RACE, rlimit, at=[*_spots(w), *sw.spots()])]


def _shard_coverage(a: Analysis, tensor: str, r: ShardSide, writes: list[Leaf], cover: WriteCover | None,
                    rlimit: int) -> Result:
    """``hb-activation:T:S``: every tile read shard ``r``'s pushes publish in a run is written by some write of
    ``tensor`` in the same run (a ``WriteTiles`` occurrence or a write shard's page)."""
    from verispatial.certify.ordering import _Access, _static_count

    p = a.program
    name = f"{R.HB_ACTIVATION}:{tensor}:{r.ref}"
    t0 = time.perf_counter()
    q = Query(name, rlimit)
    trips: dict[str, z3.ArithRef] = {}
    count = _static_count(q, trips, p)
    dyn: dict[str, z3.ArithRef] = {}
    rp = Pages(q, r, "r")
    q.add(z3.And(rp.member, rp.in_run(count)))
    for k, w in enumerate(writes):
        wa = _Access(q, count, w, f"w{k}", dyn)
        miss = z3.Implies(wa.domain(), z3.Or(rp.tile < wa.lo, rp.tile >= wa.hi))
        q.add(z3.ForAll(wa.idx, miss) if wa.idx else miss)
    if cover is not None:
        for c in cover.misses(q, count, rp.tile):
            q.add(c)
    o = q.check()
    dt = time.perf_counter() - t0
    fam = R.Family.HAPPENS_BEFORE.value
    if o.status == Status.UNSAT:
        return Result(fam, name, Verdict.PROVED, f"every tile {r.ref} publishes of {tensor} is written by a write of it",
                      seconds=dt)
    if o.status == Status.SAT:
        assert o.model is not None
        m = o.model
        x = model_int(m, rp.tile)
        why = f"{r.ref} publishes {tensor} tile {x} of its shard (page {model_int(m, rp.k)}), which no write of it writes"
        cex: dict[str, object] = {
            "kind": "race", "rule": R.TENSOR_RACE, **r.first(), "tile": x, "at": r.spots(),
            "trips": {n: model_int(m, v) for n, v in trips.items()},
            "dynamic": {n: model_int(m, v) for n, v in dyn.items()}, "summary": why}
        return Result(fam, name, Verdict.REFUTED, why, cex, dt)
    return Result(fam, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)
