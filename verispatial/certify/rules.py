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

import attrs

from verispatial.certify.facts import LATE as LATE
from verispatial.certify.facts import RULE_FAMILY as RULE_FAMILY
from verispatial.certify.facts import EngineRun, Finding, State, map_facts, pairs, run_paths, shift, tile_pages
from verispatial.certify.structure import EngineView, op_at
from verispatial.errors import UnhandledOp
from verispatial.families import assemble
from verispatial.families.accumulator import encoding as accumulator
from verispatial.families.cb import encoding as cb
from verispatial.families.semaphores import encoding as semaphores
from verispatial.ir import rules as R
from verispatial.ir.ids import op_ids
from verispatial.ir.limits import ring_slots
from verispatial.ir.ops import (
    ID_BUFFER,
    AtomicBarrier,
    Compute,
    FillTiles,
    Flush,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Wait,
    WriteBarrier,
    WriteTiles,
    named_index_buffer,
)
from verispatial.ir.program import IndexKey, Program, walk
from verispatial.ir.shards import sharded, written_shards

#: op class -> its family's per-engine handler ``(run, op, path, state) -> state`` (``verispatial/families``).
_HANDLERS = assemble("the per-engine rules", cb.HANDLERS, semaphores.HANDLERS, accumulator.HANDLERS)

@attrs.frozen
class EngineFacts:
    """What the abstract interpretation of one engine found.

    ``findings``: candidate violations. ``written``: for each ReadTiles/PackAcc leaf (by path), the page offsets
    (relative to the write pointer, in pages) it may write. ``reserve_from``: for each Reserve leaf, the least
    window size (pages) held before it, so its new pages are ``[from, pages)`` past the write pointer."""

    findings: tuple[Finding, ...]
    written: dict[tuple[int, ...], frozenset[int]]
    reserve_from: dict[tuple[int, ...], int]


_run = run_paths
_map, _pairs, _shift, _tile_pages = map_facts, pairs, shift, tile_pages


def data_buffers(p: Program, index_bufs: dict[IndexKey, int] | None = None) -> set[int]:
    """Buffers whose pages some op reads (WriteTiles source, Compute operand, multicast source, the index buffer of an
    indirect address: ``Dynamic.buf`` or ``Program.index_buffers``): their pushes publish data
    (``cb-push-unfilled``); the others are synchronisation channels whose pushes publish tokens only. A sharded
    buffer's pages are its tensor's bytes (``ir/shards.py``): one its producer writes into publishes what it wrote,
    so it is a data buffer; one it never writes publishes the tensor's tiles as they are, so it is not."""
    written = written_shards(p)
    read_shards = set(sharded(p)) - written
    out: set[int] = set(written)
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
    return (out | set((p.index_buffers() if index_bufs is None else index_bufs).values())) - read_shards


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
    index_bufs = p.index_buffers() if index_bufs is None else index_bufs
    caps = {b.id: b.capacity for b in p.buffers}
    # The most pages a window of each buffer can hold (saturation bound of the tile counts: finite lattice).
    most = dict(caps)
    for lf in view.leaves:
        if isinstance(lf.op, (Reserve, Wait)):
            most[lf.op.buf] = max(most[lf.op.buf], lf.op.pages)
    c = EngineRun(p, view, data_buffers(p, index_bufs) if data is None else data,
                  multicast_destinations(p) if dests is None else dests, index_bufs, p.phase_of_section(), caps, most,
                  {lf.path: lf.index for lf in view.leaves})

    def step(op: Op, path: tuple[int, ...], s: State) -> State:
        c.reached.add(path)
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            return handler(c, op, path, s)
        return _step_other(c, op, path, s)

    # Window facts of the buffers this engine names (an op's own ids, ``ir.ids.op_ids``, and the index buffer of
    # an indirect address): every handler reads and changes only the facts of the buffers its op names, so the
    # other buffers' facts would stay at their initial value all run long, in every state — carrying them made
    # each step linear in the program's buffers (320 on the 64-node TT-Lang matmul tutorial, for 192 engines).
    bufs = {v for lf in view.leaves for kind, v in op_ids(lf.op) if kind == ID_BUFFER}
    for lf in view.leaves:
        if isinstance(lf.op, (ReadTiles, WriteTiles)):
            ib = p.index_buffer(view.program, lf.path[0], lf.op, index_bufs, c.phases)
            if ib is not None:
                bufs.add(ib)
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
        c.flag(R.ASYNC_PENDING_AT_END, None, "ends with outstanding NoC " + ", ".join(pend))
    cb.capacity(c)
    findings = tuple(sorted(c.found.values(), key=lambda f: (f.rule, f.path or ())))
    return EngineFacts(findings, {k: frozenset(v) for k, v in c.written.items()}, c.reserve_from)


def _step_other(c: EngineRun, op: Op, path: tuple[int, ...], s: State) -> State:
    """The per-engine rules of the op classes whose family has no folder yet (``verispatial/families``)."""
    if isinstance(op, ReadTiles):
        cb.index_window(c, s, op, path)
        s = cb.fill(c, s, op.into, op.tiles, path, "read_tiles")
        return s | {("rd", op.into)}
    if isinstance(op, ReadBarrier):
        return frozenset(t for t in s if t[0] not in ("rd", "rdp"))
    if isinstance(op, WriteTiles):
        cb.index_window(c, s, op, path)
        b = op.src
        pt = c.p.buffers[b].page_tiles
        top = c.most[b] * pt + 1
        srcs: set[tuple[object, ...]] = set()
        for v, r in _pairs(s, "wt", b):
            if r + op.tiles > v * pt:
                c.flag(R.CB_READ_UNWAITED, path, f"write_tiles reads tiles past the waited window of b{b}")
            srcs |= {("sf", b, x % c.caps[b], c.leaf_at[path]) for x in _tile_pages(r, op.tiles, pt)}
        s = _map(s, "wt", b, lambda v, r: (v, min(r + op.tiles, top)))
        return s | srcs | {("w",)}
    if isinstance(op, McastSend):
        b = op.buf
        if ("rd", b) in s:
            c.flag(R.ASYNC_READ_PUBLISH, path, f"mcast_send of b{b} while reads into it may not have landed (no read "
                                             "barrier since)")
        if op.front:
            if any(v < op.pages for v, _ in _pairs(s, "wt", b)):
                c.flag(R.CB_READ_UNWAITED, path, f"mcast_send of {op.pages} pages from the front of b{b} beyond its "
                                               "waited window")
            tag = "sf"
        else:
            if any(v < op.pages for v, _ in _pairs(s, "rsv", b)):
                c.flag(R.CB_WRITE_UNRESERVED, path, f"mcast_send of {op.pages} pages from the back of b{b} beyond "
                                                  "its reserved window")
            tag = "sb"
            mine = ring_slots(0, op.pages, c.caps[b])
            for t in s:
                if t[0] == "rdp" and t[1] == b and t[2] in mine:
                    # The read lands after the multicast was issued from its pages: the landing rewrites them.
                    c.flag(R.ASYNC_SOURCE_REUSE, t[3], f"read_tiles into b{b} may land in pages a mcast_send issued "  # type: ignore[arg-type]
                                                      "after it reads (no read barrier between them)", (LATE,))
        srcs = {(tag, b, j, c.leaf_at[path]) for j in ring_slots(0, op.pages, c.caps[b])}
        return s | srcs | {("mw",), ("w",)}
    if isinstance(op, McastSetValid):
        if not c.p.target.ordered_writes and ("mw",) in s:
            c.flag(R.ASYNC_FLAG_OVERTAKE, path,
                 f"flag multicast of sem{op.sem} may overtake the data multicast before it: target {c.p.target.name} "
                 "does not keep writes ordered and there is no flush between them")
        return s | {("sw", op.source, c.leaf_at[path]), ("w",)}
    if isinstance(op, (Flush, WriteBarrier)):
        drop = ("sb", "sf", "sw", "mw") + (("w",) if isinstance(op, WriteBarrier) else ())
        return frozenset(t for t in s if t[0] not in drop)
    if isinstance(op, AtomicBarrier):
        return frozenset(t for t in s if t[0] != "a")
    raise UnhandledOp("the per-engine rules", op)


def engine_findings(p: Program, view: EngineView) -> list[Finding]:
    """The findings of ``engine_facts`` alone."""
    return list(engine_facts(p, view).findings)


def _filled(op: Op) -> int | None:
    """The buffer whose reserved back ``op`` writes (a ReadTiles, PackAcc or FillTiles), or None."""
    if isinstance(op, (ReadTiles, FillTiles)):
        return op.into
    if isinstance(op, PackAcc):
        return op.buf
    return None


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
