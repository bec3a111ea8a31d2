"""Per-engine rules of DESIGN §5 decided by abstract interpretation over every path of an engine program.

The abstract state is a set of may-facts; loops are run to a fixpoint (a trip loop may also run zero times), so
every path the program can take is covered and no rule violation is missed. A finding is only a candidate:
the checker refutes with it only after the interpreter reproduces it (``replay.py``); otherwise it fails to prove.

Facts, per buffer ``b`` and relative to the engine's own pointers (docs/semantics.md, "Circular-buffer windows"):

- ``("rsv", b, ahead, fill)``: the producer's reserved window ``[pushed, pushed + ahead)`` and the tiles written into
  it from the write pointer; ``("wt", b, ahead, drain)`` the consumer's waited window and the tiles read from it;
- ``("sb", b, slot, leaf)``: ring slot ``(pushed + slot) mod capacity`` is the source of this engine's multicast
  from the back (leaf index ``leaf``) that may not have left; ``("sf", b, slot, leaf)`` the same relative to the
  read pointer for a write or multicast from the front; ``("sw", sem, leaf)`` the engine's word of ``sem`` is the
  source of a flag multicast that may not have left;
- ``("acc", held)``: whether an accumulator is acquired; ``("acct", n)``: a held acquire took ``n`` tiles;
  ``("rd", b)`` reads into ``b`` not yet barriered and ``("rdp", b, slot, path)`` the ring slots (relative to the
  write pointer) the read at ``path`` may still land in.

Slots are kept modulo the capacity (the bytes a page occupies), so the lattice is finite.

Rule names are shared with the interpreter (``verispatial.petri.interp``).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from verispatial import budget
from verispatial.certify.structure import EngineView, op_at
from verispatial.errors import UnhandledOp
from verispatial.ir import rules as R
from verispatial.ir.core import Guard
from verispatial.ir.limits import ring_slots
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
    Compute,
    FillTiles,
    Flush,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
    count_trip,
    count_value,
    named_index_buffer,
)
from verispatial.ir.program import IndexKey, Program, walk
from verispatial.ir.rules import PER_ENGINE_RULES

#: rule -> obligation family, of the rules this abstract interpretation decides (from the rule registry).
RULE_FAMILY = PER_ENGINE_RULES


@attrs.frozen
class Finding:
    """A possible violation of ``rule`` at ``path`` of engine ``engine`` (path None: at the engine's end).

    ``sources``: for ``async-source-reuse``, the leaf indices of this engine's writes or multicasts whose source
    may not have left when the op at ``path`` runs (the reuse query in ``reuse.py`` may discharge them); ``LATE``
    when the op is a read whose landing may rewrite a multicast issued after it (never discharged)."""

    rule: str
    engine: str
    path: tuple[int, ...] | None
    message: str
    sources: tuple[int, ...] = ()

    @property
    def family(self) -> str:
        return RULE_FAMILY.get(self.rule, "structure")


@attrs.frozen
class EngineFacts:
    """What the abstract interpretation of one engine found.

    ``findings``: candidate violations. ``written``: for each ReadTiles/PackAcc leaf (by path), the page offsets
    (relative to the write pointer, in pages) it may write. ``reserve_from``: for each Reserve leaf, the least
    window size (pages) held before it, so its new pages are ``[from, pages)`` past the write pointer."""

    findings: tuple[Finding, ...]
    written: dict[tuple[int, ...], frozenset[int]]
    reserve_from: dict[tuple[int, ...], int]


State = frozenset[tuple[object, ...]]

#: A ``Finding.sources`` entry for a reuse no query discharges: a read issued before the multicast it rewrites.
LATE = -1

#: Constant loops up to this count are iterated exactly; longer ones (and trip loops) run to a fixpoint.
EXACT_LOOP = 256


#: What is known of an enclosing loop's current iteration: (is it the first, is it the last); None: unknown.
Phase = tuple[bool | None, bool | None]


def _admits(when: Guard, phase: Phase) -> bool | None:
    """Whether an ``If`` with guard ``when`` runs in an iteration of the known ``phase`` (None: either)."""
    first, last = phase
    if when is Guard.FIRST:
        return first
    if when is Guard.LAST:
        return last
    if when is Guard.NOT_FIRST:
        return None if first is None else not first
    return None if last is None else not last


def _counts(count: int | str | TripCount, trip_max: dict[str, int] | None) -> tuple[bool, bool, bool]:
    """Whether a loop of ``count`` may run 0 times, exactly once, at least twice (over every trip value; every
    case is possible for a trip whose maximum is unknown)."""
    if isinstance(count, int):
        return count == 0, count == 1, count >= 2
    name = count_trip(count)
    if trip_max is None or name not in trip_max:
        return True, True, True
    lo, hi = count_value(count, {name: 0}), count_value(count, {name: trip_max[name]})
    return lo == 0, lo <= 1 <= hi, hi >= 2


def _run(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State,
         step: Callable[[Op, tuple[int, ...], State], State], trip_max: dict[str, int] | None = None,
         env: dict[str, Phase] | None = None) -> State:
    """Every path of ``ops`` from state ``s``. An ``If`` runs when the iteration of its loop that is known
    (first / middle / last: loops are run in those classes) admits it, and may run or not when unknown. A loop
    runs 0 times, once (first and last), or a first iteration, any number of middle ones and a last one, as its
    count allows (``trip_max``: each trip's maximum); a constant loop up to ``EXACT_LOOP`` iterations is
    iterated exactly.

    ``step(op, path, state)`` must be a function of its arguments whose side effects (findings noted) are the same
    however often it is called with them: a loop body run again from a state it was already run from, in the same
    class of the iterations its ``If``s read, is not run again (its result is remembered). Without that, 32 nested
    two-iteration loops ran their innermost body 2**32 times; with it each body runs once per distinct state. The
    run checks the budget (``budget.check``) at every loop iteration."""
    memo: dict[tuple[object, ...], State] = {}
    guards: dict[tuple[int, ...], tuple[str, ...]] = {}

    def guarded(loop: Loop, path: tuple[int, ...]) -> tuple[str, ...]:
        """The loop variables the ``If``s inside ``loop``'s body read: the only part of ``env`` the body sees."""
        got = guards.get(path)
        if got is None:
            got = guards[path] = tuple(sorted({op.var for op in walk(loop.body) if isinstance(op, If)}))
        return got

    def run(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State, env: dict[str, Phase]) -> State:
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if isinstance(op, If):
                runs = _admits(op.when, env.get(op.var, (None, None)))
                if runs is True:
                    s = run(op.body, path, s, env)
                elif runs is None:
                    s = s | run(op.body, path, s, env)
                continue
            if isinstance(op, Loop):
                reads = guarded(op, path)

                def body(x: State, first: bool, last: bool, op: Loop = op, path: tuple[int, ...] = path,
                         reads: tuple[str, ...] = reads) -> State:
                    inner = {**env, op.var: (first, last)}
                    key = (path, x, *(inner.get(v, (None, None)) for v in reads))
                    got = memo.get(key)
                    if got is None:
                        budget.check()
                        got = memo[key] = run(op.body, path, x, inner)
                    return got

                if op.count == 0:
                    continue
                if isinstance(op.count, int) and op.count <= EXACT_LOOP:
                    # A constant loop runs its body exactly count times: iterate (stopping the middle iterations
                    # early once the state is stable), so counts that depend on the trip number (tiles written into
                    # a reservation) stay exact.
                    n = op.count
                    s = body(s, True, n == 1)
                    for _ in range(n - 2):
                        nxt = body(s, False, False)
                        if nxt == s:
                            break
                        s = nxt
                    if n >= 2:
                        s = body(s, False, True)
                    continue
                zero, one, many = _counts(op.count, trip_max)
                out: State = s if zero else frozenset()
                if one:
                    out = out | body(s, True, True)
                if many:
                    acc = body(s, True, False)
                    while True:
                        nxt = acc | body(acc, False, False)
                        if nxt == acc:
                            break
                        acc = nxt
                    out = out | body(acc, False, True)
                s = out
            else:
                s = step(op, path, s)
        return s

    return run(ops, prefix, s, env or {})


def _map(s: State, tag: str, b: int, f: Callable[[int, int], tuple[int, int]]) -> State:
    """Apply ``f(pages, tiles) -> (pages, tiles)`` to the ``tag`` facts of buffer ``b``."""
    return frozenset((tag, b, *f(int(t[2]), int(t[3]))) if t[0] == tag and t[1] == b else t  # type: ignore[call-overload]
                     for t in s)


def _pairs(s: State, tag: str, b: int) -> list[tuple[int, int]]:
    return [(int(t[2]), int(t[3])) for t in s if t[0] == tag and t[1] == b]  # type: ignore[call-overload]


def _shift(s: State, tag: str, b: int, n: int, cap: int) -> State:
    """Move the source slots of ``b`` (tag ``sb``/``sf``) as the pointer they are relative to advances ``n`` pages."""
    return frozenset((tag, b, (int(t[2]) - n) % cap, t[3]) if t[0] == tag and t[1] == b else t  # type: ignore[call-overload]
                     for t in s)


def _tile_pages(start: int, tiles: int, pt: int) -> range:
    """Pages (relative) holding tiles ``[start, start + tiles)`` of a ``pt``-tile page."""
    return range(start // pt, (start + tiles - 1) // pt + 1) if tiles > 0 else range(0)


def data_buffers(p: Program, index_bufs: dict[IndexKey, int] | None = None) -> set[int]:
    """Buffers whose pages some op reads (WriteTiles source, Compute operand, multicast source, the index buffer of an
    indirect address: ``Dynamic.buf`` or ``Program.index_buffers``): their pushes publish data
    (``cb-push-unfilled``); the others are synchronisation channels whose pushes publish tokens only."""
    out: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            named = named_index_buffer(op)
            if named is not None:
                out.add(named)
            if isinstance(op, WriteTiles):
                out.add(op.src)
            elif isinstance(op, Compute):
                out.update(o.buf for o in op.ins)
            elif isinstance(op, McastSend):
                out.add(op.buf)
    return out | set((p.index_buffers() if index_bufs is None else index_bufs).values())


def multicast_destinations(p: Program) -> set[int]:
    """Buffers some multicast lands in (the buffer of the sender's cb index at each destination, in its phase)."""
    phases = p.phase_of_section()
    by_site_cb = {(b.site, phases[b.section], b.cb): b.id for b in p.buffers}
    out: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            if isinstance(op, McastSend):
                src = p.buffers[op.buf]
                for d in p.groups[op.group].destinations():
                    got = by_site_cb.get((d, phases[src.section], src.cb))
                    if got is not None:
                        out.add(got)
    return out


def all_engine_facts(p: Program, views: dict[str, EngineView]) -> dict[str, EngineFacts]:
    """``engine_facts`` of every view, the program-wide tables (data buffers, multicast destinations) computed once
    (each is a walk over every engine's ops)."""
    index_bufs = p.index_buffers()
    data, dests = data_buffers(p, index_bufs), multicast_destinations(p)
    return {k: engine_facts(p, v, data, dests, index_bufs) for k, v in views.items()}


def engine_facts(p: Program, view: EngineView, data: set[int] | None = None,
                 dests: set[int] | None = None, index_bufs: dict[IndexKey, int] | None = None) -> EngineFacts:
    """Coverage, windows, asynchronous-NoC and accumulator findings for one engine, over every path. ``data`` and
    ``dests``, ``index_bufs``: ``data_buffers(p)``, ``multicast_destinations(p)`` and ``p.index_buffers()`` when the
    caller has them (each walks every engine program: computed once per program, not once per engine)."""
    found: dict[tuple[str, tuple[int, ...] | None], Finding] = {}
    key = view.key
    ordered = p.target.ordered_writes
    index_bufs = p.index_buffers() if index_bufs is None else index_bufs
    phases = p.phase_of_section()
    data = data_buffers(p, index_bufs) if data is None else data
    dests = multicast_destinations(p) if dests is None else dests
    caps = {b.id: b.capacity for b in p.buffers}
    leaf_at = {lf.path: lf.index for lf in view.leaves}
    # The most pages a window of each buffer can hold (saturation bound of the tile counts: finite lattice).
    most = dict(caps)
    for lf in view.leaves:
        if isinstance(lf.op, (Reserve, Wait)):
            most[lf.op.buf] = max(most[lf.op.buf], lf.op.pages)
    written: dict[tuple[int, ...], set[int]] = {}
    reserve_from: dict[tuple[int, ...], int] = {}

    def flag(rule: str, path: tuple[int, ...] | None, msg: str, sources: tuple[int, ...] = ()) -> None:
        old = found.get((rule, path))
        if old is None:
            found[(rule, path)] = Finding(rule, key, path, msg, tuple(sorted(set(sources))))
        elif sources:
            found[(rule, path)] = attrs.evolve(old, sources=tuple(sorted(set(old.sources) | set(sources))))

    def reuse(s: State, tag: str, b: int, slots: set[int], path: tuple[int, ...], what: str) -> None:
        hit = sorted({int(t[3]) for t in s if t[0] == tag and t[1] == b and int(t[2]) in slots})  # type: ignore[call-overload]
        if hit:
            flag(R.ASYNC_SOURCE_REUSE, path, f"{what} b{b} pages that a write or multicast issued from them may not "
                                             "have left (no flush/write_barrier since)", tuple(hit))

    def index_window(s: State, op: ReadTiles | WriteTiles, path: tuple[int, ...]) -> None:
        """``cb-read-unwaited`` for an indirect address: its index buffer's front page (``Program.index_buffers``)
        must be in this engine's waited window (some path may have no page there)."""
        dyn = op.addr.dynamic
        b = p.index_buffer(view.program, path[0], op, index_bufs, phases)
        if dyn is not None and b is not None and any(v < 1 for v, _ in _pairs(s, "wt", b)):
            flag(R.CB_READ_UNWAITED, path, f"{type(op).__name__.lower()} reads its index {dyn.name} from the front "
                                           f"of b{b} outside its waited window")

    def overrun(s: State, tiles: int, path: tuple[int, ...], what: str) -> None:
        """``acc-overrun``: more tiles than some held acquire (a path reaching here) took."""
        took = sorted(int(t[1]) for t in s if t[0] == "acct" and int(t[1]) < tiles)  # type: ignore[call-overload]
        if took:
            flag(R.ACC_OVERRUN, path, f"{what} uses {tiles} accumulator tiles, but the held acquire took {took[0]}")

    def fill(s: State, b: int, tiles: int, path: tuple[int, ...], what: str) -> State:
        pt = p.buffers[b].page_tiles
        top = most[b] * pt + 1
        pages: set[int] = set()
        for v, f in _pairs(s, "rsv", b):
            if f + tiles > v * pt:
                flag(R.CB_WRITE_UNRESERVED, path, f"{what} writes tiles past the reserved window of b{b}")
            pages.update(_tile_pages(f, tiles, pt))
        written.setdefault(path, set()).update(pages)
        reuse(s, "sb", b, {x % caps[b] for x in pages}, path, f"{what} rewrites")
        s = _map(s, "rsv", b, lambda v, f: (v, min(f + tiles, top)))
        if what == "read_tiles":  # it lands later: a multicast issued from those pages meanwhile is rewritten then
            s = s | {("rdp", b, x % caps[b], path) for x in pages}
        return s

    reached: set[tuple[int, ...]] = set()

    def step(op: Op, path: tuple[int, ...], s: State) -> State:
        reached.add(path)
        if isinstance(op, Reserve):
            b = op.buf
            froms = [v for v, _ in _pairs(s, "rsv", b)]
            lo = min(froms, default=0)
            reserve_from[path] = min(reserve_from.get(path, lo), lo)
            new = ring_slots(lo, op.pages - lo, caps[b])
            reuse(s, "sb", b, new, path, "re-reserves")
            return _map(s, "rsv", b, lambda v, f: (max(v, op.pages), f))
        if isinstance(op, Wait):
            return _map(s, "wt", op.buf, lambda v, r: (max(v, op.pages), r))
        if isinstance(op, Push):
            b, n = op.buf, op.pages
            pt = p.buffers[b].page_tiles
            pairs = _pairs(s, "rsv", b)
            if any(v < n for v, _ in pairs):
                flag(R.CB_PUSH_UNCOVERED, path, f"push of {n} pages on b{b} beyond its reserved window")
            if b in data and b not in dests and any(f < n * pt for _, f in pairs):
                flag(R.CB_PUSH_UNFILLED, path, f"push of {n} pages on b{b} publishes pages nothing wrote since they "
                                               "were reserved")
            if ("rd", b) in s:
                flag(R.ASYNC_READ_PUBLISH, path, f"push of b{b} while reads into it may not have landed (no read barrier since)")
            s = _shift(s, "sb", b, n, caps[b])
            s = frozenset(("rdp", b, (int(t[2]) - n) % caps[b], t[3]) if t[0] == "rdp" and t[1] == b else t  # type: ignore[call-overload]
                          for t in s)
            return _map(s, "rsv", b, lambda v, f: (max(v - n, 0), max(f - n * pt, 0)))
        if isinstance(op, Pop):
            b, n = op.buf, op.pages
            pt = p.buffers[b].page_tiles
            if any(v < n for v, _ in _pairs(s, "wt", b)):
                flag(R.CB_POP_UNCOVERED, path, f"pop of {n} pages on b{b} beyond its waited window")
            reuse(s, "sf", b, ring_slots(0, n, caps[b]), path, "frees")
            s = _shift(s, "sf", b, n, caps[b])
            return _map(s, "wt", b, lambda v, r: (max(v - n, 0), max(r - n * pt, 0)))
        if isinstance(op, ReadTiles):
            index_window(s, op, path)
            s = fill(s, op.into, op.tiles, path, "read_tiles")
            return s | {("rd", op.into)}
        if isinstance(op, ReadBarrier):
            return frozenset(t for t in s if t[0] not in ("rd", "rdp"))
        if isinstance(op, FillTiles):
            # Local stores: they count in the fill as a landed read does, and leave nothing outstanding.
            return fill(s, op.into, op.tiles, path, "fill_tiles")
        if isinstance(op, PackAcc):
            if ("acc", False) in s:
                flag(R.ACC_UNACQUIRED, path, f"pack_acc into b{op.buf} with no accumulator acquired")
            overrun(s, op.tiles, path, f"pack_acc into b{op.buf}")
            return fill(s, op.buf, op.tiles, path, "pack_acc")
        if isinstance(op, Compute):
            if ("acc", False) in s:
                flag(R.ACC_UNACQUIRED, path, f"compute {op.kind} with no accumulator acquired")
            overrun(s, op.tiles, path, f"compute {op.kind}")
            for o in op.ins:
                if any(v < o.pages for v, _ in _pairs(s, "wt", o.buf)):
                    flag(R.CB_READ_UNWAITED, path, f"compute {op.kind} unpacks {o.pages} pages of b{o.buf} beyond its "
                                                   "waited window")
            return s
        if isinstance(op, WriteTiles):
            index_window(s, op, path)
            b = op.src
            pt = p.buffers[b].page_tiles
            top = most[b] * pt + 1
            srcs: set[tuple[object, ...]] = set()
            for v, r in _pairs(s, "wt", b):
                if r + op.tiles > v * pt:
                    flag(R.CB_READ_UNWAITED, path, f"write_tiles reads tiles past the waited window of b{b}")
                srcs |= {("sf", b, x % caps[b], leaf_at[path]) for x in _tile_pages(r, op.tiles, pt)}
            s = _map(s, "wt", b, lambda v, r: (v, min(r + op.tiles, top)))
            return s | srcs | {("w",)}
        if isinstance(op, McastSend):
            b = op.buf
            if ("rd", b) in s:
                flag(R.ASYNC_READ_PUBLISH, path, f"mcast_send of b{b} while reads into it may not have landed (no read "
                                                 "barrier since)")
            if op.front:
                if any(v < op.pages for v, _ in _pairs(s, "wt", b)):
                    flag(R.CB_READ_UNWAITED, path, f"mcast_send of {op.pages} pages from the front of b{b} beyond its "
                                                   "waited window")
                tag = "sf"
            else:
                if any(v < op.pages for v, _ in _pairs(s, "rsv", b)):
                    flag(R.CB_WRITE_UNRESERVED, path, f"mcast_send of {op.pages} pages from the back of b{b} beyond "
                                                      "its reserved window")
                tag = "sb"
                mine = ring_slots(0, op.pages, caps[b])
                for t in s:
                    if t[0] == "rdp" and t[1] == b and t[2] in mine:
                        # The read lands after the multicast was issued from its pages: the landing rewrites them.
                        flag(R.ASYNC_SOURCE_REUSE, t[3], f"read_tiles into b{b} may land in pages a mcast_send issued "  # type: ignore[arg-type]
                                                          "after it reads (no read barrier between them)", (LATE,))
            srcs = {(tag, b, j, leaf_at[path]) for j in ring_slots(0, op.pages, caps[b])}
            return s | srcs | {("mw",), ("w",)}
        if isinstance(op, McastSetValid):
            if not ordered and ("mw",) in s:
                flag(R.ASYNC_FLAG_OVERTAKE, path,
                     f"flag multicast of sem{op.sem} may overtake the data multicast before it: target {p.target.name} "
                     "does not keep writes ordered and there is no flush between them")
            return s | {("sw", op.source, leaf_at[path]), ("w",)}
        if isinstance(op, (Flush, WriteBarrier)):
            drop = ("sb", "sf", "sw", "mw") + (("w",) if isinstance(op, WriteBarrier) else ())
            return frozenset(t for t in s if t[0] not in drop)
        if isinstance(op, SemSet):
            hit = tuple(int(t[2]) for t in s if t[0] == "sw" and t[1] == op.sem)  # type: ignore[call-overload]
            if hit:
                flag(R.ASYNC_SOURCE_REUSE, path, f"sets sem{op.sem} while a flag multicast reading it may not have left "
                                                 "(no flush since)", hit)
            return s
        if isinstance(op, (SemInc, SemIncMcast)):
            return s | {("a",)}
        if isinstance(op, AtomicBarrier):
            return frozenset(t for t in s if t[0] != "a")
        if isinstance(op, AcquireAcc):
            if op.tiles > p.target.acc_capacity(op.dtype):
                flag(R.ACC_CAPACITY, path, f"acquires {op.tiles} {op.dtype} accumulator tiles; target {p.target.name} "
                                           f"holds {p.target.acc_capacity(op.dtype)} at that precision")
            if ("acc", True) in s:
                flag(R.ACC_UNACQUIRED, path, "acquire_acc while an accumulator is already held")
            return frozenset(t for t in s if t[0] not in ("acc", "acct")) | {("acc", True), ("acct", op.tiles)}
        if isinstance(op, ReleaseAcc):
            if ("acc", False) in s:
                flag(R.ACC_UNACQUIRED, path, "release_acc with no accumulator acquired")
            return frozenset(t for t in s if t[0] not in ("acc", "acct")) | {("acc", False)}
        if isinstance(op, SemWait):
            return s  # a wait changes none of these facts
        raise UnhandledOp("the per-engine rules", op)

    bufs = {b.id for b in p.buffers}
    init: State = frozenset({("rsv", b, 0, 0) for b in bufs} | {("wt", b, 0, 0) for b in bufs} | {("acc", False)})
    end = _run(view.program.ops, (), init, step, p.trip_max())
    pend = []
    if any(t[0] == "rd" for t in end):
        pend.append("reads (no read barrier)")
    if ("w",) in end:
        pend.append("writes or multicasts (no write barrier)")
    if ("a",) in end:
        pend.append("atomic increments (no atomic barrier)")
    if pend:
        flag(R.ASYNC_PENDING_AT_END, None, "ends with outstanding NoC " + ", ".join(pend))
    for lf in view.leaves:
        op = lf.op
        # Only ops some path reaches (the run steps every op that can execute: an op under a loop of count 0 or an
        # If no iteration admits never runs, so it never asks for anything).
        if isinstance(op, (Reserve, Wait)) and op.pages > p.buffers[op.buf].capacity and lf.path in reached:
            cap = p.buffers[op.buf].capacity
            flag(R.CB_CAPACITY, lf.path,
                 f"{type(op).__name__.lower()} of {op.pages} pages on b{op.buf} whose capacity is {cap}: it can never return")
    findings = tuple(sorted(found.values(), key=lambda f: (f.rule, f.path or ())))
    return EngineFacts(findings, {k: frozenset(v) for k, v in written.items()}, reserve_from)


def engine_findings(p: Program, view: EngineView) -> list[Finding]:
    """The findings of ``engine_facts`` alone."""
    return list(engine_facts(p, view).findings)


def reuse_consequences(p: Program, views: dict[str, EngineView],
                       findings: list[Finding]) -> list[tuple[Finding, int, tuple[Finding, ...] | None]]:
    """``async-source-reuse`` on other engines' ops that another finding lets happen (the interpreter reports each,
    ``Interp._source_reuse``), each with the buffer b whose source it may rewrite and, for a reserve or fill after a
    premature pop, every such pop's finding (``reuse.may_reach_source`` then asks, per pop, whether the op can reach
    an outstanding source's slot at all; None: no such question, the candidate stays):

    - after a pop that may free a page still the source of its engine's write or multicast from the front (an
      ``async-source-reuse`` finding at a ``Pop`` of b): b's producer may re-reserve that page, and a read, pack or
      multicast may land in it (into b or a buffer sharing its bytes), while the write still reads it. Candidates:
      every Reserve of b and ReadTiles/PackAcc into b's bytes by another engine of the site, and every multicast
      landing in them (reported at its issue op);
    - after a write or front multicast outside its engine's waited window (a ``cb-read-unwaited`` finding): the
      pages it reads are not protected by the window, so b's producer's reserves and fills of b are candidates;
    - after a read or pack outside its engine's reserved window (a ``cb-write-unreserved`` finding at a ReadTiles
      or PackAcc into b): the pages it fills are not protected by the window, so when another engine reads b (or a
      buffer sharing its bytes) from the front asynchronously (WriteTiles, front multicast), the fill itself is a
      candidate;
    - after a push that may publish a page whose read has not landed (an ``async-read-publish`` finding at a
      ``Push`` of b): b's consumer may issue a write or multicast from that page before the read lands, and the
      landing rewrites it. Candidates: the pushing engine's ReadTiles into b, when another engine reads b's front
      asynchronously (WriteTiles, front multicast).

    ``LATE``: no query discharges them; the interpreter's replay decides each, else it fails to prove. Without
    such a finding no other engine reaches a front source's page before it left: only the reading engine, the
    single consumer, frees it (``cb-single-consumer``), its pops are checked per engine, and every page it reads
    landed before it was published."""
    partners = p.alias_partners()
    phases = p.phase_of_section()
    by_site_cb = {(x.site, phases[x.section], x.cb): x.id for x in p.buffers}
    front_readers: dict[int, set[str]] = {}
    for v in views.values():
        for lf in v.leaves:
            if isinstance(lf.op, WriteTiles):
                front_readers.setdefault(lf.op.src, set()).add(v.key)
            elif isinstance(lf.op, McastSend) and lf.op.front:
                front_readers.setdefault(lf.op.buf, set()).add(v.key)

    def lands_in(x: McastSend, shared: set[int], site: object) -> bool:
        """Whether multicast ``x`` lands in one of ``shared`` (the buffer of its cb index at ``site``)."""
        src = p.buffers[x.buf]
        return site in p.groups[x.group].destinations() and by_site_cb.get(
            (site, phases[src.section], src.cb)) in shared  # type: ignore[comparison-overlap]

    out: dict[tuple[str, tuple[int, ...]], tuple[Finding, int, tuple[Finding, ...] | None]] = {}

    def add(engine: str, path: tuple[int, ...], msg: str, b: int, after: Finding | None) -> None:
        """One candidate per op, with every premature pop that may let it through (None: kept unconditionally)."""
        old = out.get((engine, path))
        if old is None:
            out[(engine, path)] = (Finding(R.ASYNC_SOURCE_REUSE, engine, path, msg, (LATE,)), b,
                                   None if after is None else (after,))
        elif old[2] is not None:
            out[(engine, path)] = (old[0], old[1], None if after is None else (*old[2], after))

    for f in findings:
        if f.path is None or f.rule not in (R.ASYNC_SOURCE_REUSE, R.ASYNC_READ_PUBLISH, R.CB_READ_UNWAITED,
                                            R.CB_WRITE_UNRESERVED):
            continue
        op = op_at(views[f.engine].program, f.path)
        if f.rule == R.CB_WRITE_UNRESERVED:
            # A fill past the reserved window may land in a page b's consumer still writes or multicasts out.
            b_filled = _filled(op)
            if b_filled is None:
                continue
            b = b_filled
            if any(front_readers.get(x, set()) - {f.engine} for x in (b, *partners.get(b, ()))):
                add(f.engine, f.path, f"writes into b{b} pages outside its reserved window, which a write or "
                                      "multicast issued from them may still read", b, None)
            continue
        if f.rule == R.CB_READ_UNWAITED:
            # A write or front multicast of pages outside the waited window reads pages b's producer still owns (or
            # may reserve while the write is out): its reserves and fills of b are candidates, with no question asked.
            if not (isinstance(op, WriteTiles) or (isinstance(op, McastSend) and op.front)):
                continue
            b = op.src if isinstance(op, WriteTiles) else op.buf
            site = views[f.engine].program.site
            for v in views.values():
                if v.key == f.engine or v.program.site != site:
                    continue
                for lf in v.leaves:
                    x = lf.op
                    if (isinstance(x, Reserve) and x.buf == b) or _filled(x) == b:
                        add(v.key, lf.path, f"{'re-reserves' if isinstance(x, Reserve) else 'writes into'} b{b} pages "
                                            f"{f.engine}'s op at {list(f.path)} reads outside its waited window",
                            b, None)
            continue
        if f.rule == R.ASYNC_READ_PUBLISH:
            if not isinstance(op, Push) or not front_readers.get(op.buf, set()) - {f.engine}:
                continue
            for lf in views[f.engine].leaves:
                if isinstance(lf.op, ReadTiles) and lf.op.into == op.buf:
                    add(f.engine, lf.path, f"read_tiles into b{op.buf} may land after the push at {list(f.path)} "
                                           "published its page and a write or multicast was issued from it", op.buf, None)
            continue
        if not isinstance(op, Pop):
            continue
        b = op.buf
        site = views[f.engine].program.site
        shared = {b, *partners.get(b, ())}
        for v in views.values():
            if v.key == f.engine:
                continue
            for lf in v.leaves:
                x = lf.op
                here = v.program.site == site
                hit = (here and ((isinstance(x, Reserve) and x.buf == b) or _filled(x) in shared)) or (
                    isinstance(x, McastSend) and lands_in(x, shared, site))
                if not hit:
                    continue
                what = "re-reserves" if isinstance(x, Reserve) else "lands in" if isinstance(x, McastSend) else \
                    "writes into"
                add(v.key, lf.path, f"{what} b{b} pages {f.engine}'s pop at {list(f.path)} may free before a write or "
                                    "multicast issued from them left (no flush/write_barrier before that pop)", b,
                    None if isinstance(x, McastSend) else f)
    return list(out.values())


def _filled(op: Op) -> int | None:
    """The buffer whose reserved back ``op`` writes (a ReadTiles, PackAcc or FillTiles), or None."""
    if isinstance(op, (ReadTiles, FillTiles)):
        return op.into
    if isinstance(op, PackAcc):
        return op.buf
    return None


def _roles(op: Op) -> list[tuple[int, bool]]:
    """(buffer, produces) for each buffer the op uses as its producer (reserves, pushes, writes into the back,
    multicasts from the back) or consumer (waits, pops, reads from the front): the read and write pointers are
    private to the thread that owns that end (reference §1.1)."""
    if isinstance(op, (Reserve, Push)):
        return [(op.buf, True)]
    if isinstance(op, (Wait, Pop)):
        return [(op.buf, False)]
    if isinstance(op, ReadTiles):
        return [(op.into, True)]
    if isinstance(op, PackAcc):
        return [(op.buf, True)]
    if isinstance(op, FillTiles):
        return [(op.into, True)]
    if isinstance(op, WriteTiles):
        return [(op.src, False)]
    if isinstance(op, McastSend):
        return [(op.buf, not op.front)]
    if isinstance(op, Compute):
        return [(o.buf, False) for o in op.ins]
    return []


def ownership_findings(p: Program, views: dict[str, EngineView]) -> list[Finding]:
    """One producing and one consuming engine per buffer (reference §1.1: pointers are per thread)."""
    prod: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    cons: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    for v in views.values():
        for lf in v.leaves:
            for b, produces in _roles(lf.op):
                (prod if produces else cons).setdefault(b, []).append((v.key, lf.path))
    out: list[Finding] = []
    for rule, table, what in ((R.CB_SINGLE_PRODUCER, prod, "produce"), (R.CB_SINGLE_CONSUMER, cons, "consume")):
        for b, uses in sorted(table.items()):
            engines = sorted({e for e, _ in uses})
            if len(engines) > 1:
                second = next(u for u in uses if u[0] == engines[1])
                out.append(Finding(rule, second[0], second[1], f"b{b} has {len(engines)} engines that {what} it: {', '.join(engines)}"))
    return out
