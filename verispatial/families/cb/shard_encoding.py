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

  * a read shard's page is published before the completion of a write sharing its tile (``hb-activation``) exactly
    when some reachable state has the page published and the write incomplete (published stays published, complete
    stays complete); a write shard's page completes at its push;
  * a write shard's write of a tile is incomplete from the first write into its page (the tiles written into the
    buffer so far exceed the tile's index) to its push: it races another engine's ``WriteTiles`` when some reachable
    state has both incomplete (``hb-write-write``);
  * a state is never sharded (``validate``: its versions would change while a page is held);
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
from verispatial.certify.reach import Analysis
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, all_of, model_int
from verispatial.certify.structure import Leaf
from verispatial.families.cb.encoding import _constant_total, _iteration
from verispatial.ir import rules as R
from verispatial.ir.ops import Push
from verispatial.ir.program import Buffer, Program, shard_pages
from verispatial.ir.shards import shard_tiles, written_shards


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
        if total is not None and total <= cap:  # the reason the queries give: a shortcut changes no verdict or text
            return Result(fam, name, Verdict.PROVED, f"every push of b{b} stays within its {cap}-page shard of "
                          f"{side.tensor}", seconds=time.perf_counter() - t0)
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
        #: the buffer tile (counted from the ring's first page) that ``tile`` is
        self.j = j
        conj = [t >= 0, t < b.page_tiles, self.k >= 0, self.k < shard_pages(b)]
        self.qvars = [self.k, t, self.tile]
        if sh.width <= 0:
            conj.append(self.tile == j + sh.start)
        else:
            row, col = q.int_var(f"{tag}.row"), q.int_var(f"{tag}.col")
            self.qvars += [row, col]
            conj += [col >= 0, col < sh.width, row >= 0, j == row * sh.width + col,
                     self.tile == row * sh.stride + col + sh.start]
        self.member = all_of(q.ctx, conj)

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
