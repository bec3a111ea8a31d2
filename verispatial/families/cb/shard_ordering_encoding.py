"""The happens-before obligations of sharded buffers (docs/semantics.md "Sharded buffers"): a sharded buffer as one
access of its tensor made of pages (``shard_encoding.Pages``), against the tensor's ``ReadTiles``/``WriteTiles`` and
its other shards. The method is ``shard_encoding``'s module docstring; the queries are ``tensors/ordering_encoding.py``'s
(``_Access``, ``_run``), which this module uses, so ordering itself never imports it (``check_shard_orderings`` runs
beside ``check_ordering`` in the checker's happens-before stage).

Obligations name a sharded buffer by its first push (``ENGINE[path]``); their counterexamples list every push of it,
where the interpreter reports the race.
"""

from __future__ import annotations

import time

import z3

from verispatial.certify.reach import Analysis, StateQuery
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, all_of, model_int
from verispatial.certify.structure import Leaf
from verispatial.families.cb.shard_encoding import Pages, ShardSide, WriteCover, shard_sides
from verispatial.families.tensors.ordering_encoding import _Access, _completion, _footprint, _run, _static_count
from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.ops import CopyTiles, FillTiles, PackAcc, ReadTiles, WriteTiles
from verispatial.ir.program import Program


def check_shard_orderings(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """Every tensor's ordering obligations that involve one of its sharded buffers."""
    out: list[Result] = []
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    for tensor, sides in sorted(shard_sides(a).items()):
        reads = [lf for lf in leaves if isinstance(lf.op, ReadTiles) and lf.op.tensor == tensor]
        writes = [lf for lf in leaves if isinstance(lf.op, WriteTiles) and lf.op.tensor == tensor]
        out += shard_orderings(a, trusted, tensor, reads, writes, sides, rlimit)
    return out


def shard_orderings(a: Analysis, trusted: set[int], tensor: str, reads: list[Leaf], writes: list[Leaf],
                    sides: tuple[list[ShardSide], list[ShardSide]], rlimit: int) -> list[Result]:
    """The ordering obligations of ``tensor`` that involve a sharded buffer (the others are ``ordering.py``'s):
    ``reads`` / ``writes`` are its ``ReadTiles`` / ``WriteTiles`` leaves, ``sides`` its read and write shards. A state
    is never sharded (``validate``), so these are an activation's (every read after the writes of its tiles
    completed) and every tensor's write-write pairs."""
    p = a.program
    t = p.tensor(tensor)
    rs, ws = sides
    out: list[Result] = []
    cover = WriteCover(tuple(ws)) if ws else None
    if t.role is Role.ACTIVATION:
        for r in rs:
            out.append(_shard_coverage(a, tensor, r, writes, cover, rlimit))
            both: list[Leaf | ShardSide] = [*writes, *ws]
            for w in both:
                out += _read_before_write(a, trusted, tensor, r, w, rlimit)
        for rl in reads:
            for sw in ws:
                out += _read_before_write(a, trusted, tensor, rl, sw, rlimit)
    for w in writes:
        for sw in ws:
            if w.engine not in sw.engines:
                out += _write_write(a, trusted, tensor, w, sw, rlimit)
    return out


def _shares(p: Program, x: Leaf | ShardSide, y: ShardSide, rlimit: int) -> bool | None:
    """Whether access ``x`` (a leaf or a shard) may touch a tile of shard ``y`` (a superset test: ``None`` unknown)."""

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
                       rlimit: int) -> list[Result]:
    """``hb-activation:T:R<W``: no tile of read ``r`` is taken before the completion of write ``w``'s occurrence of it
    (a write shard's page: its push). At least one of them is a shard (``ordering._read_after_write`` decides two
    leaves)."""

    p = a.program
    pair = f"{R.HB_ACTIVATION}:{tensor}:{_name(r)}<{_name(w)}"
    shard, other = (w, r) if isinstance(w, ShardSide) else (r, w)
    assert isinstance(shard, ShardSide)
    if _shares(p, other, shard, rlimit) is False:
        return []
    at = _spots(r)
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
        return all_of(sq.q.ctx, conj)

    def why(m: z3.ModelRef) -> str:
        x = model_int(m, held["tile"])
        return (f"{_name(r)} can take activation {tensor} tile {x} before {_name(w)}'s write of it completed"
                + (" (a sharded buffer's push publishes its tensor's tiles)" if isinstance(r, ShardSide) else ""))

    return [_run(a, trusted, pair, sorted({*_engines(r), *_engines(w)}), build,
                 f"{_name(r)} takes each tile of {tensor} after {_name(w)}'s write of it completed",
                 why, R.TENSOR_RACE, rlimit, at=at, read=_first(r), write=_first(w))]


def _write_write(a: Analysis, trusted: set[int], tensor: str, w: Leaf, sw: ShardSide, rlimit: int) -> list[Result]:
    """``hb-write-write:T:W~S``: write shard ``sw``'s write of a tile (from the first write into its page to the push
    that publishes it) and ``WriteTiles`` ``w`` of another engine (issued, not yet past its write barrier) are never
    both incomplete: "some state holds a tile of page ``k`` written into and not pushed, and an occurrence of ``w`` of
    that tile issued and incomplete" is unsat (whichever began second is where the interpreter reports the race)."""

    p = a.program
    if _shares(p, w, sw, rlimit) is False:
        return []
    name = f"{R.HB_WRITE_WRITE}:{tensor}:{_name(w)}~{sw.ref}"
    cw = _completion(a, w)
    into = _writes_into(a, sw.buf.id)
    held: dict[str, z3.ArithRef] = {}

    def build(sq: StateQuery) -> z3.BoolRef:
        enc = sq.enc
        wa = _Access(sq.q, enc.math, w, "w", {})
        sp = Pages(sq.q, sw, "s")
        written = z3.Sum([sq.q.val(0)] + [enc.executed(x) * _tiles(x) for x in into])
        held["tile"] = sp.tile
        return z3.And(sp.member, written > sp.j, z3.Not(sp.published(enc)), wa.domain(), wa.issued(enc),
                      z3.Not(wa.complete(enc, cw)), sp.tile >= wa.lo, sp.tile < wa.hi)

    def why(m: z3.ModelRef) -> str:
        return (f"{sw.ref} can write {tensor} tile {model_int(m, held['tile'])} of its shard while {w.engine}'s write "
                f"of it at {list(w.path)} is incomplete")

    return [_run(a, trusted, name, sorted({w.engine, *sw.engines}), build,
                 f"{sw.ref} never writes a tile of {tensor} while {w.engine}'s write of it is incomplete", why,
                 R.TENSOR_RACE, rlimit, at=[*_spots(w), *sw.spots(), *_spots_of(into)])]


def _writes_into(a: Analysis, b: int) -> list[Leaf]:
    """The leaves that write into the back of buffer ``b`` (``ReadTiles`` into it, ``FillTiles``, ``CopyTiles``,
    ``PackAcc``)."""
    out: list[Leaf] = []
    for v in a.views.values():
        for lf in v.leaves:
            op = lf.op
            if (isinstance(op, (ReadTiles, FillTiles, CopyTiles)) and op.into == b) or (isinstance(op, PackAcc) and op.buf == b):
                out.append(lf)
    return out


def _tiles(lf: Leaf) -> int:
    op = lf.op
    assert isinstance(op, (ReadTiles, FillTiles, CopyTiles, PackAcc))
    return op.tiles


def _spots_of(leaves: list[Leaf]) -> list[dict[str, object]]:
    return [{"engine": lf.engine, "path": list(lf.path)} for lf in leaves]


def _shard_coverage(a: Analysis, tensor: str, r: ShardSide, writes: list[Leaf], cover: WriteCover | None,
                    rlimit: int) -> Result:
    """``hb-activation:T:S``: every tile read shard ``r``'s pushes publish in a run is written by some write of
    ``tensor`` in the same run (a ``WriteTiles`` occurrence or a write shard's page)."""

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
