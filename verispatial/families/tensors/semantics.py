"""Tensors in the reference interpreter: the tiles a read or write touches (``bounds``), the order of the reads and
writes of each tile (``tensor-race``) and the output tiles written by the end (``output-unwritten``).

The asynchronous-NoC handlers (``families/noc/semantics.py``) call these where a ReadTiles or WriteTiles is issued,
a WriteBarrier completes its engine's writes and a read lands; ``Interp.final_violations`` calls ``unwritten``. The
interpreter's state keeps, per tensor tile, ``State.tiles`` (engines with an incomplete write of it, its last
completed writer, engines that issued a write of it) and per state tile ``State.swrites`` / ``State.sreads`` (its
versions by section; docs/semantics.md, "Tensors": a write is complete at its engine's next WriteBarrier,
``noc_async_write_barrier`` in ``dataflow_api.h``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.obligation import TensorRef
from verispatial.ir.ops import ReadTiles, WriteTiles, op_text
from verispatial.petri.position import Cause, Position, Violation

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Entry, Interp, State, TileKey


def engines_text(it: Interp, mask: int) -> str:
    """The keys of the engines in bit mask ``mask`` (bit ``e``: engine index ``e``), comma-separated."""
    return ", ".join(it.keys[i] for i in range(it.n) if mask >> i & 1)


def tile_range(it: Interp, e: int, pc: PC, op: ReadTiles | WriteTiles, out: list[Violation]) -> range:
    """The tiles of its tensor the op touches (an indirect part at its ``dyn`` value, else ``lo``), clipped to the
    tensor; ``bounds`` when they leave it (with ``dyn_extremes``: at ``lo`` and at ``hi``)."""
    env = {**it.trips, **it._env(e, pc)}  # an address may name a trip (Addr); an enclosing loop shadows it
    ntiles = it.tensor_tiles[it.tensor_index[op.tensor]]
    d = op.addr.dynamic
    start = op.addr.at(env, None if d is None else it.dyn.get(d.name, d.lo))
    starts = [start]
    if d is not None and it.dyn_extremes:
        starts = [op.addr.at(env, d.lo), op.addr.at(env, d.hi)]
    for a in starts:
        if a < 0 or a + op.tiles > ntiles:
            it._v(out, R.BOUNDS, e, pc,
                  # half-open, as certify's counterexample and every other tile range here says it
                  f"{op_text(op)} touches tiles [{a}, {a + op.tiles}) of {op.tensor}, "
                  f"which has {ntiles} tiles")
            break
    return range(max(start, 0), min(start + op.tiles, ntiles))


def byte_range(it: Interp, e: int, pc: PC, ti: int, op: ReadTiles | WriteTiles) -> tuple[int, int]:
    """The bytes of each tensor tile ``op`` touches, ``[lo, hi)``: its ``part``'s at this occurrence's loop indices,
    else the whole tile (the target's bytes per tile of the tensor's dtype)."""
    if op.part is not None:
        lo = op.part.offset_at(it._env(e, pc)) if op.part.terms else op.part.offset
        return lo, lo + op.part.size
    return 0, it.program.target.tile_bytes[it.program.tensors[ti].dtype]


def covers(ranges: list[tuple[int, int]], lo: int, hi: int) -> bool:
    """Whether the union of the half-open byte ranges ``ranges`` covers ``[lo, hi)``."""
    at = lo
    for a, b in sorted(ranges):
        if a > at:
            break
        at = max(at, b)
        if at >= hi:
            return True
    return at >= hi


def _part_overlap(s: State, key: TileKey, lo: int, hi: int, mask: int) -> int:
    """Engines in ``mask`` (a bit mask) with an incomplete part write of tile ``key`` that overlaps ``[lo, hi)``."""
    got = 0
    for pe, a, b, done in s.parts.get(key, ()):
        if not done and a < hi and lo < b and mask >> pe & 1:
            got |= 1 << pe
    return got


def read_issued(it: Interp, s: State, e: int, pc: PC, op: ReadTiles, out: list[Violation]) -> tuple[TileKey, ...]:
    """A ReadTiles is issued: ``bounds``; ``tensor-race`` for an activation tile with no completed write or an
    incomplete one, and for a state tile an incomplete write of an earlier section would have to complete first.
    Records the state tiles' read in its section; returns them (its landing checks the later sections' writes:
    ``read_lands``)."""
    rng = tile_range(it, e, pc, op, out)
    ti = it.tensor_index[op.tensor]
    role = it.program.tensors[ti].role
    if role is Role.ACTIVATION:
        lo, hi = byte_range(it, e, pc, ti, op)
        for t in rng:
            got = s.tiles.get((ti, t))
            # Per byte: the bytes read need completed writes (whole, or parts that cover them) and no incomplete
            # write over them (a part write of other bytes of the tile is no race).
            busy = (got[0] if got is not None else 0) | _part_overlap(s, (ti, t), lo, hi, -1)
            done = [(a, b) for _pe, a, b, fin in s.parts.get((ti, t), ()) if fin]
            if ((got is None or got[1] < 0) and not covers(done, lo, hi)) or busy:
                why = ("while a write to it by " + engines_text(it, busy) + " is not complete"
                       if busy else "before any completed write to it")
                if op.part is not None:
                    why = f"(bytes [{lo}, {hi})) {why}"
                it._v(out, R.TENSOR_RACE, e, pc, f"{op_text(op)} reads activation {op.tensor} tile {t} {why}",
                      TensorRef(op.tensor))
                break
        return ()
    if role is not Role.STATE:
        return ()
    state_tiles = tuple((ti, t) for t in rng)
    r = it._section(e, pc[0])
    nsec = len(it.program.sections)
    reported = False
    for key in state_tiles:
        _issued, inc = s.swrites.get(key, (0, 0))
        early = [(x // nsec, x % nsec) for x in range(inc.bit_length()) if inc >> x & 1 and x % nsec < r]
        if early and not reported:
            we, ws = early[0]
            it._v(out, R.TENSOR_RACE, e, pc,
                  f"{op_text(op)} reads state {op.tensor} tile {key[1]} (section {r}) while the write of "
                  f"it by {it.keys[we]} in section {ws} is not complete", TensorRef(op.tensor))
            reported = True
        s.sreads[key] = s.sreads.get(key, 0) | (1 << r)
    return state_tiles


def write_issued(it: Interp, s: State, e: int, pc: PC, op: WriteTiles, out: list[Violation]) -> None:
    """A WriteTiles is issued: ``bounds``; ``tensor-race`` when another engine's write of a tile it writes is
    incomplete, or (a state tile) a read of it in a later section was already issued. Each tile gains an incomplete
    write by ``e`` (complete at its WriteBarrier: ``writes_complete``)."""
    rng = tile_range(it, e, pc, op, out)
    ti = it.tensor_index[op.tensor]
    reported = False
    keys = []
    is_state = it.program.tensors[ti].role is Role.STATE
    w_sec = it._section(e, pc[0])
    nsec = len(it.program.sections)
    lo, hi = byte_range(it, e, pc, ti, op)
    tb = it.program.target.tile_bytes[it.program.tensors[ti].dtype]
    for t in rng:
        key = (ti, t)
        m, last, issuers = s.tiles.get(key, (0, -1, 0))
        # Per byte: another engine's incomplete write races with this one only where their bytes meet.
        others = (m & ~(1 << e)) | _part_overlap(s, key, lo, hi, ~(1 << e))
        if others and not reported:
            it._v(out, R.TENSOR_RACE, e, pc,
                  f"{op_text(op)} writes {op.tensor} tile {t} while a write to it by "
                  f"{engines_text(it, others)} is not complete", TensorRef(op.tensor))
            reported = True
        if is_state:
            later_reads = s.sreads.get(key, 0) >> (w_sec + 1)
            if later_reads and not reported:
                rs = w_sec + 1 + (later_reads & -later_reads).bit_length() - 1
                it._v(out, R.TENSOR_RACE, e, pc,
                      f"{op_text(op)} writes state {op.tensor} tile {t} (section {w_sec}) after a read of it "
                      f"in the later section {rs} was issued (that read must see this version)",
                      TensorRef(op.tensor), Cause.LATE_STATE_WRITE)
                reported = True
            issued, inc = s.swrites.get(key, (0, 0))
            bit_ew = 1 << (e * nsec + w_sec)
            s.swrites[key] = (issued | bit_ew, inc | bit_ew)
        if op.part is None:
            s.tiles[key] = (m | (1 << e), last, issuers | (1 << e))
        else:
            ps = tuple(sorted({*s.parts.get(key, ()), (e, lo, hi, False)}))
            s.parts[key] = ps
            # ``output-unwritten`` counts issued writes: a tile written in parts counts once they cover its bytes,
            # never for one part alone.
            if covers([(a, b) for _pe, a, b, _fin in ps], 0, tb):
                s.tiles[key] = (m, last, issuers | (1 << e))
        keys.append(key)
    s.wtiles[e] = (*s.wtiles[e], *keys)


def writes_complete(it: Interp, s: State, e: int) -> None:
    """Engine ``e`` passes a WriteBarrier: every tile it wrote since its last one has a completed write, by ``e``."""
    bit = 1 << e
    nsec = len(it.program.sections)
    mine = ((1 << nsec) - 1) << (e * nsec)
    for key in s.wtiles[e]:
        m, _last, issuers = s.tiles.get(key, (0, -1, 0))
        if m & bit:
            s.tiles[key] = (m & ~bit, e, issuers)
        ps = s.parts.get(key)
        if ps and any(pe == e and not fin for pe, _a, _b, fin in ps):
            ps = tuple(sorted({(pe, a, b, fin or pe == e) for pe, a, b, fin in ps}))
            s.parts[key] = ps
            tb = it.program.target.tile_bytes[it.program.tensors[key[0]].dtype]
            if covers([(a, b) for _pe, a, b, fin in ps if fin], 0, tb):
                m, _last, issuers = s.tiles.get(key, (0, -1, 0))
                s.tiles[key] = (m, e, issuers)
        if key in s.swrites:
            issued, inc = s.swrites[key]
            s.swrites[key] = (issued, inc & ~mine)
    s.wtiles[e] = ()


def read_lands(it: Interp, s: State, e: int, en: Entry, out: list[Violation]) -> None:
    """A read of engine ``e`` (its in-flight entry ``en``) lands: ``tensor-race`` when a write of one of its state
    tiles in its section or a later one was already issued.

    A read of a state tile in section r sees the version of the sections before r: it must land before any write of
    that tile in a section >= r is issued. Other tiles may already be rewritten (an in-place update rewrites tile t
    once t is read), and tiles written by earlier sections are new versions, not races."""
    r = it._section(e, en[1])
    nsec = len(it.program.sections)
    for key in en[3]:
        issued, _inc = s.swrites.get(key, (0, 0))
        later = [(x // nsec, x % nsec) for x in range(issued.bit_length()) if issued >> x & 1 and x % nsec >= r]
        if later:
            name = it.program.tensors[key[0]].name
            who = engines_text(it, sum(1 << we for we, _ in set(later)))
            where = "" if nsec == 1 else f" in section {later[0][1]} (the read is in section {r})"
            it._v(out, R.TENSOR_RACE, e, (en[1], en[2]),
                  f"reads state {name} tile {key[1]} after a write to it by {who}{where} was issued (a state "
                  f"is written only after every read of its old value)", TensorRef(name))
            break


def unwritten(it: Interp, s: State) -> list[Violation]:
    """``output-unwritten`` of a terminated state (every issued write has landed then): every tile of every output
    tensor was written. Reported at the first engine that writes the tensor (else engine 0)."""
    out: list[Violation] = []
    for ti, t in enumerate(it.program.tensors):
        if t.role is not Role.OUTPUT:
            continue
        # Walk the tiles written (at most the ops' work), never the tensor: it may hold 2**32 tiles.
        ntiles = it.tensor_tiles[ti]
        written = {k for (tj, k), got in s.tiles.items() if tj == ti and got[2] and 0 <= k < ntiles}
        if len(written) < ntiles:
            first = next(k for k in range(ntiles) if k not in written)  # at most len(written) + 1 tries
            e = it.writers.get(t.name, 0)
            out.append(Violation(R.OUTPUT_UNWRITTEN, Position(it.keys[e], None) if it.n else Position("", None),
                                 f"output {t.name} ends with {ntiles - len(written)} of its {ntiles} tiles "
                                 f"never written (first: tile {first})", TensorRef(t.name)))
    return out
