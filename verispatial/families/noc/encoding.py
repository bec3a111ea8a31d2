"""The checker's encoding of the asynchronous NoC: the per-engine rules of ReadTiles, WriteTiles, InlineWrite,
ReadBarrier, WriteBarrier, Flush and AtomicBarrier (``certify/rules.py`` runs them over every path of an engine),
``async-pending-at-end`` at an engine's end, the ``async-source-reuse`` candidates other findings let happen on other
engines (``reuse_consequences``) and the queries that discharge or decide a reuse across occurrences and engines.

Facts of the per-engine abstract state this family keeps (``certify/rules.py`` lists every family's):

- ``("rd", b)``: reads into ``b`` not yet barriered; ``("rdp", b, slot, path)``: ring slot ``slot`` (relative to the
  write pointer) the read at ``path`` may still land in (``cb.fill`` adds it, ``cb.push`` moves it);
- ``("sb", b, slot, leaf)``: ring slot ``(pushed + slot) mod capacity`` is the source of this engine's multicast
  from the back (leaf index ``leaf``) that may not have left; ``("sf", b, slot, leaf)`` the same relative to the
  read pointer for a write or multicast from the front; ``("sw", sem, leaf)`` the engine's word of ``sem`` is the
  source of a flag multicast that may not have left; ``("mw", vc, group, path)``: the data multicast at op path
  ``path`` on virtual channel ``vc`` to ``group`` (its landing order, ``ir.program.landing_order``) since the last
  Flush or WriteBarrier, ``("mwf", vc, group, path)`` one a Flush saw leave and no WriteBarrier followed;
- ``("w",)``: a write or multicast not yet covered by a WriteBarrier; ``("a",)``: an increment not yet covered by an
  AtomicBarrier; ``("rw", site, leaf)``: the remote write or data multicast at ``leaf`` may not have landed at core
  ``site`` (no WriteBarrier since), so an increment aimed there may overtake it (``async-inc-overtake``).

``async-source-reuse`` across occurrences and engines (docs/semantics.md, "Sources of asynchronous writes"): the
per-engine rules flag every op that may free, re-reserve or rewrite a page (or a flag source word) while a write or
multicast of the same engine issued from it may not have left. A flagged op is often safe for a reason the
per-engine view cannot see: on a target whose writes stay ordered (``Target.ordered_writes``, Wormhole) a *later*
flag multicast that some receiver has seen land implies that every earlier multicast of the engine left its source.
``discharge`` asks, with one reachability query per (flagged op, source leaf), whether an occurrence ``I`` of the
source leaf can still be at home when the op runs:

- ``at``: a second position of the issuing engine, at the source leaf in occurrence ``I`` (its page arithmetic: the
  pages ``I`` read are ``[pushed, pushed + pages)`` of its buffer at that moment, ``behind`` pages back for pages
  already pushed);
- ``I`` issued (the engine executed it) and no Flush/WriteBarrier of the engine passed since it;
- on ordered targets, a *leave frontier* ``L``: a third position of the engine such that the multicasts it issued
  on the source's virtual channel before ``L`` are exactly those that left (they leave in issue order; only flags on
  that channel are evidence). ``L`` is at or before now and at or after
  every Flush/WriteBarrier the engine passed; every passed wait of a flag word all of whose flags are this
  engine's needed a flag that landed, so left: ``waits_done(w) <= sum of flags to w issued before L``. ``I`` has not
  left: ``I`` is not before ``L``;
- the flagged op's pages (or word) meet ``I``'s.

Unsat discharges the candidate for that source; sat (or unknown) leaves it to the interpreter's replay.

The same query, with the flagged op on *another* engine of the site, decides a SemSet of a flag source word by an
engine that did not issue the flag (``cross_engine``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3

from verispatial.certify.facts import LATE, EngineFacts, EngineRun, Finding, State, map_facts, pairs, tile_pages
from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, all_of, any_of
from verispatial.certify.structure import EngineView, Leaf, op_at
from verispatial.families.cb import encoding as cb
from verispatial.families.scratch import encoding as scratch
from verispatial.families.semaphores.encoding import loopback_reuse
from verispatial.ir import rules as R
from verispatial.ir.ops import (
    AtomicBarrier,
    CopyTiles,
    FillTiles,
    Flush,
    InlineWrite,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    Reserve,
    SemInc,
    SemIncMcast,
    SemSet,
    WriteBarrier,
    WriteTiles,
    count_max,
)
from verispatial.ir.program import Program, write_noun

# ---------------------------------------------------------------- per-engine rules (certify/rules.py runs these)


def read_tiles(c: EngineRun, op: ReadTiles, path: tuple[int, ...], s: State) -> State:
    """noc_async_read into the reserved back of ``op.into`` (``cb.fill``: ``cb-write-unreserved``; an indirect
    address's index page, ``cb.index_window``), or into a scratch buffer (``scratch.read_into``): outstanding until a
    ReadBarrier."""
    cb.index_window(c, s, op, path)
    if c.p.buffers[op.into].scratch:
        return scratch.read_into(c, s, op.into, path)
    s = cb.fill(c, s, op.into, op.tiles, path, "read_tiles")
    return s | {("rd", op.into)}


def remote_read(c: EngineRun, op: RemoteRead, path: tuple[int, ...], s: State) -> State:
    """noc_async_read of another core's pages into the reserved back of ``op.into`` (``cb.fill``:
    ``cb-write-unreserved``): outstanding until a ReadBarrier. What it reads at its owner is ``check_remote_reads``'."""
    owner = c.p.remote_buffer(op.buf, op.at)
    pt = c.p.buffers[owner].page_tiles if owner is not None else 1
    s = cb.fill(c, s, op.into, op.pages * pt, path, "remote_read")
    return s | {("rd", op.into)}


def read_barrier(c: EngineRun, op: ReadBarrier, path: tuple[int, ...], s: State) -> State:
    """noc_async_read_barrier: every read landed."""
    return frozenset(t for t in s if t[0] not in ("rd", "rdp"))


def write_tiles(c: EngineRun, op: WriteTiles, path: tuple[int, ...], s: State) -> State:
    """noc_async_write of tiles from the front of ``op.src``: inside the waited window (``cb-read-unwaited``); the
    pages it reads are its source until it leaves (``("sf", ...)``); from a scratch buffer, ``scratch.write_from``."""
    cb.index_window(c, s, op, path)
    b = op.src
    if c.p.buffers[b].scratch:
        return scratch.write_from(c, s, b, path)
    pt = c.p.buffers[b].page_tiles
    top = c.most[b] * pt + 1
    srcs: set[tuple[object, ...]] = set()
    for v, r in pairs(s, "wt", b):
        if r + op.tiles > v * pt:
            c.flag(R.CB_READ_UNWAITED, path, f"write_tiles reads tiles past the waited window of b{b}")
        else:
            c.inside_read.setdefault(path, set()).update(tile_pages(r, op.tiles, pt))
        srcs |= {("sf", b, x % c.caps[b], c.leaf_at[path]) for x in tile_pages(r, op.tiles, pt)}
    s = map_facts(s, "wt", b, lambda v, r: (v, min(r + op.tiles, top)))
    return s | srcs | {("w",)}


def inline_write(c: EngineRun, op: InlineWrite, path: tuple[int, ...], s: State) -> State:
    """noc_inline_dw_write: a write outstanding until a WriteBarrier (``async-pending-at-end``) that may not have
    landed at its core until then (``async-inc-overtake``); it has no local source."""
    return s | {("w",), ("rw", op.at, c.leaf_at[path])}


def flush(c: EngineRun, op: Flush, path: tuple[int, ...], s: State) -> State:
    """noc_async_writes_flushed: every write and multicast left its source (a data multicast's ``("mw", ...)`` becomes
    ``("mwf", ...)``: left, maybe not landed)."""
    return frozenset(("mwf", *t[1:]) if t[0] == "mw" else t for t in s if t[0] not in ("sb", "sf", "sw", "sc"))


def write_barrier(c: EngineRun, op: WriteBarrier, path: tuple[int, ...], s: State) -> State:
    """noc_async_write_barrier: every write and multicast left and landed."""
    return frozenset(t for t in s if t[0] not in ("sb", "sf", "sw", "mw", "mwf", "w", "rw", "sc"))


def atomic_barrier(c: EngineRun, op: AtomicBarrier, path: tuple[int, ...], s: State) -> State:
    """noc_async_atomic_barrier: every increment landed."""
    return frozenset(t for t in s if t[0] != "a")


def pending_at_end(c: EngineRun, end: State) -> None:
    """``async-pending-at-end``: some path ends the engine with reads, writes/multicasts or increments no barrier of
    their kind covered (``end``: the state at the engine's end)."""
    pend = []
    if any(t[0] == "rd" for t in end):
        pend.append("reads (no read barrier)")
    if ("w",) in end:
        pend.append("writes or multicasts (no write barrier)")
    if ("a",) in end:
        pend.append("atomic increments (no atomic barrier)")
    if pend:
        c.flag(R.ASYNC_PENDING_AT_END, None, "ends with outstanding NoC " + ", ".join(pend))


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., State]] = {ReadTiles: read_tiles, ReadBarrier: read_barrier, WriteTiles: write_tiles, Flush: flush,
            WriteBarrier: write_barrier, AtomicBarrier: atomic_barrier, InlineWrite: inline_write,
            RemoteRead: remote_read}


# ---------------------------------------------------------------- source reuse on other engines


def _filled(op: Op) -> int | None:
    """The buffer whose reserved back ``op`` writes (a ReadTiles, PackAcc, FillTiles or CopyTiles), or None."""
    if isinstance(op, (ReadTiles, FillTiles, CopyTiles)):
        return op.into
    if isinstance(op, PackAcc):
        return op.buf
    return None


#: A candidate of ``reuse_consequences``: the finding, the buffer whose source it may rewrite, and the premature pops
#: that may let it through (None: kept unconditionally).
Consequence = tuple[Finding, int, tuple[Finding, ...] | None]


def reuse_consequences(p: Program, views: dict[str, EngineView], findings: list[Finding]) -> list[Consequence]:
    """``async-source-reuse`` on other engines' ops that another finding lets happen (the interpreter reports each:
    ``families/noc/semantics.py`` ``source_reuse``), each with the buffer b whose source it may rewrite and, for a
    reserve or fill after a premature pop, every such pop's finding (``may_reach_source`` then asks, per pop, whether
    the op can reach an outstanding source's slot at all; None: no such question, the candidate stays):

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
    c = _Consequences(p, views)
    cases = {R.CB_WRITE_UNRESERVED: c.after_unreserved_fill, R.CB_READ_UNWAITED: c.after_unwaited_read,
             R.ASYNC_READ_PUBLISH: c.after_early_publish, R.ASYNC_SOURCE_REUSE: c.after_early_pop}
    for f in findings:
        case = cases.get(f.rule)
        if f.path is not None and case is not None:
            case(f, f.path, op_at(views[f.engine].program, f.path))
    return list(c.out.values())


class _Consequences:
    """The candidates of ``reuse_consequences`` as they are found, one per op (``out``), and what the four cases
    read: the aliases of each buffer, the engines reading each buffer's front asynchronously (``front_readers``)."""

    def __init__(self, p: Program, views: dict[str, EngineView]) -> None:
        self.p, self.views = p, views
        self.partners = p.alias_partners()
        self.phases = p.phase_of_section()
        self.by_site_cb = {(x.site, self.phases[x.section], x.cb): x.id for x in p.buffers}
        self.front_readers: dict[int, set[str]] = {}
        for v in views.values():
            for lf in v.leaves:
                if isinstance(lf.op, WriteTiles):
                    self.front_readers.setdefault(lf.op.src, set()).add(v.key)
                elif isinstance(lf.op, McastSend) and lf.op.front:
                    self.front_readers.setdefault(lf.op.buf, set()).add(v.key)
        self.out: dict[tuple[str, tuple[int, ...]], Consequence] = {}

    def add(self, engine: str, path: tuple[int, ...], msg: str, b: int, after: Finding | None) -> None:
        """One candidate per op, with every premature pop that may let it through (None: kept unconditionally)."""
        old = self.out.get((engine, path))
        if old is None:
            self.out[(engine, path)] = (Finding(R.ASYNC_SOURCE_REUSE, engine, path, msg, (LATE,)), b,
                                        None if after is None else (after,))
        elif old[2] is not None:
            self.out[(engine, path)] = (old[0], old[1], None if after is None else (*old[2], after))

    def lands_in(self, x: McastSend, shared: set[int], site: object) -> bool:
        """Whether multicast ``x`` lands in one of ``shared`` (the buffer of its cb index at ``site``)."""
        src = self.p.buffers[x.dest]
        return site in self.p.groups[x.group].destinations() and self.by_site_cb.get(
            (site, self.phases[src.section], src.cb)) in shared  # type: ignore[comparison-overlap]

    def after_unreserved_fill(self, f: Finding, path: tuple[int, ...], op: Op) -> None:
        """A fill past the reserved window may land in a page b's consumer still writes or multicasts out."""
        b = _filled(op)
        if b is None:
            return
        if any(self.front_readers.get(x, set()) - {f.engine} for x in (b, *self.partners.get(b, ()))):
            self.add(f.engine, path, f"writes into b{b} pages outside its reserved window, which a write or "
                                     "multicast issued from them may still read", b, None)

    def after_unwaited_read(self, f: Finding, path: tuple[int, ...], op: Op) -> None:
        """A write or front multicast of pages outside the waited window reads pages b's producer still owns (or
        may reserve while the write is out): its reserves and fills of b are candidates, with no question asked."""
        if not (isinstance(op, WriteTiles) or (isinstance(op, McastSend) and op.front)):
            return
        b = op.src if isinstance(op, WriteTiles) else op.buf
        site = self.views[f.engine].program.site
        for v in self.views.values():
            if v.key == f.engine or v.program.site != site:
                continue
            for lf in v.leaves:
                x = lf.op
                if (isinstance(x, Reserve) and x.buf == b) or _filled(x) == b:
                    self.add(v.key, lf.path, f"{'re-reserves' if isinstance(x, Reserve) else 'writes into'} b{b} "
                                             f"pages {f.engine}'s op at {list(path)} reads outside its waited window",
                             b, None)

    def after_early_publish(self, f: Finding, path: tuple[int, ...], op: Op) -> None:
        """A push of a page whose read may not have landed: the pushing engine's reads into b are candidates when
        another engine reads b's front asynchronously."""
        if not isinstance(op, Push) or not self.front_readers.get(op.buf, set()) - {f.engine}:
            return
        for lf in self.views[f.engine].leaves:
            if isinstance(lf.op, ReadTiles) and lf.op.into == op.buf:
                self.add(f.engine, lf.path, f"read_tiles into b{op.buf} may land after the push at {list(path)} "
                                            "published its page and a write or multicast was issued from it", op.buf,
                         None)

    def after_early_pop(self, f: Finding, path: tuple[int, ...], op: Op) -> None:
        """A pop that may free a front source before it left: other engines' reserves and fills of b's bytes at its
        site (each with the pop, for ``may_reach_source``) and multicasts landing in them are candidates."""
        if not isinstance(op, Pop):
            return
        b = op.buf
        site = self.views[f.engine].program.site
        shared = {b, *self.partners.get(b, ())}
        for v in self.views.values():
            if v.key == f.engine:
                continue
            for lf in v.leaves:
                x = lf.op
                here = v.program.site == site
                hit = (here and ((isinstance(x, Reserve) and x.buf == b) or _filled(x) in shared)) or (
                    isinstance(x, McastSend) and self.lands_in(x, shared, site))
                if not hit:
                    continue
                what = "re-reserves" if isinstance(x, Reserve) else "lands in" if isinstance(x, McastSend) else \
                    "writes into"
                self.add(v.key, lf.path, f"{what} b{b} pages {f.engine}'s pop at {list(path)} may free before a "
                                         "write or multicast issued from them left (no flush/write_barrier before that "
                                         "pop)", b, None if isinstance(x, McastSend) else f)


# ---------------------------------------------------------------- the reuse queries


def _pushed(enc: Encoder, pushes: list[Leaf]) -> z3.ArithRef:
    terms = [enc.executed(lf) * lf.op.pages for lf in pushes if isinstance(lf.op, Push)]
    if not terms:
        return enc.q.val(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def _within(x: z3.ArithRef, values: frozenset[int] | set[int]) -> z3.BoolRef:
    """``x`` is one of ``values`` (as a disjunction of maximal intervals)."""
    vs = sorted(values)
    parts: list[z3.BoolRef] = []
    i = 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        parts.append(z3.And(x >= vs[i], x <= vs[j]))
        i = j + 1
    return any_of(x.ctx, parts)


def _hazard_pages(facts: EngineFacts, lf: Leaf) -> tuple[int, set[int]] | None:
    """The buffer and the page offsets (past the write pointer) the op at ``lf`` may reach or write; None for an
    op that touches no page (a SemSet)."""
    op = lf.op
    if isinstance(op, Reserve):
        lo = facts.reserve_from.get(lf.path, 0)
        return op.buf, set(range(lo, op.pages))
    if isinstance(op, (ReadTiles, PackAcc, FillTiles, CopyTiles)):
        b = op.buf if isinstance(op, PackAcc) else op.into
        return b, set(facts.written.get(lf.path, frozenset()))
    return None


class _Reuse:
    """The query of one (flagged op, source leaf) pair."""

    def __init__(self, a: Analysis, issuer: str, src: Leaf, hazard: Leaf, pages: tuple[int, set[int]] | None) -> None:
        self.a = a
        self.issuer = issuer
        self.src = src
        self.hazard = hazard
        self.pages = pages
        view = a.views[issuer]
        self.covers = [lf for lf in view.leaves if isinstance(lf.op, (Flush, WriteBarrier))]
        # The leave frontier orders the source's own virtual channel only (tt-metal #55555): a flag on another
        # channel that landed shows nothing of the source, so only flags on its channel are evidence.
        assert isinstance(src.op, (McastSend, McastSetValid))
        vc = src.op.vc
        self.flags = [lf for lf in view.leaves if isinstance(lf.op, McastSetValid) and lf.op.vc == vc]
        flag_idx = {lf.index for lf in self.flags}
        # Flag words every flag of which this engine sends: a passed wait on one needed one of those flags to land.
        self.words = [w for w in a.words.values()
                      if w.kind == "flag" and w.flags and all(f.engine == issuer and f.index in flag_idx for f in w.flags)]
        # Destinations of this engine's sequence (semaphores.Sequence): a passed wait above the initial value saw a
        # copy land (only copies write the word), so some flag to it had left. Not which one: what a copy carries
        # is the source's value when it left, which a reuse elsewhere may have changed.
        self.copies = [w for w in a.words.values()
                       if w.kind == "sequence" and w.seq is not None and w.seq.owner == issuer
                       and not w.seq.is_source(w) and w.flags and w.waits and all(f.index in flag_idx for f in w.flags)]
        # Words outside the protocols that only sets and this engine's flags write (semaphores.landings): a passed
        # wait accepting no stored value saw a landing of a flag that may carry a value it accepts, so that flag left.
        self.landed = [w for w in a.words.values()
                       if w.kind in ("unsupported", "epochs") and w.carriers
                       and all(f.engine == issuer and f.index in flag_idx for f, _ in w.carriers)]

    def engines(self) -> frozenset[str]:
        return frozenset({self.issuer, self.hazard.engine} | {str(w.owner) for w in self.words if w.owner}
                         | {lf.engine for w in (*self.copies, *self.landed) for lf in w.waits})

    def build(self, sq: StateQuery) -> z3.BoolRef:
        p = self.a.program
        enc, q = sq.enc, sq.q
        at = Encoder(q, p, self.a.views, prefix="src.", trip_vars=enc.trip_vars)
        conds: list[z3.BoolRef] = [
            sq.enc.position(self.hazard.engine).at(self.hazard),
            at.position(self.issuer).at(self.src),
            enc.executed(self.src) > at.executed(self.src),  # occurrence I was issued
        ]
        conds += [enc.executed(c) == at.executed(c) for c in self.covers]  # no flush/write barrier since I
        if p.target.ordered_writes:
            left = Encoder(q, p, self.a.views, prefix="left.", trip_vars=enc.trip_vars)
            left.position(self.issuer)
            for x in [self.src, *self.flags, *self.covers]:
                conds.append(left.executed(x) <= enc.executed(x))
            conds += [left.executed(c) >= enc.executed(c) for c in self.covers]
            for w in self.words:
                landed = z3.Sum([left.executed(f) for f in w.flags]) if len(w.flags) > 1 else left.executed(w.flags[0])
                conds.append(sq.cm.waits_done(w) <= landed)
            for w in self.copies:
                gone = z3.Sum([left.executed(f) for f in w.flags]) if len(w.flags) > 1 else left.executed(w.flags[0])
                for lf in w.waits:
                    if lf.engine not in sq.engines:
                        continue
                    some, idx = enc.last_occurrence(lf)
                    conds.append(z3.Implies(z3.And(some, enc.threshold(lf, idx) > w.init), gone >= 1))
            for w in self.landed:
                conds += sq.cm.landings(w, left)
            conds.append(left.executed(self.src) <= at.executed(self.src))  # I has not left
        if self.pages is not None:
            op = self.src.op
            assert isinstance(op, McastSend)
            b, offsets = self.pages
            cap = p.buffers[b].capacity
            pushes = [lf for lf in self.a.views[self.issuer].leaves if isinstance(lf.op, Push) and lf.op.buf == b]
            j, h = q.int_var("reuse.j"), q.int_var("reuse.h")
            # Its source pages start this far past the write pointer (behind it for pages already pushed).
            skip = op.offset - op.behind if op.dst is None else 0
            conds += [j >= skip, j < skip + op.pages, _within(h, offsets),
                      (_pushed(at, pushes) + j) % cap == (_pushed(enc, pushes) + h) % cap]
        return all_of(q.ctx, conds)


def _applies(facts: EngineFacts, src: Leaf, hazard: Leaf) -> tuple[bool, tuple[int, set[int]] | None]:
    """Whether the query decides this (source, op) pair, and the op's pages."""
    op = src.op
    if isinstance(op, McastSetValid):
        return isinstance(hazard.op, SemSet) and hazard.op.sem == op.source, None
    if isinstance(op, McastSend) and not op.front:
        pages = _hazard_pages(facts, hazard)
        if pages is None or pages[0] != op.buf:
            return False, None
        return True, pages
    return False, None


def discharge(a: Analysis, facts: dict[str, EngineFacts], f: Finding, trusted: set[int],
              rlimit: int = DEFAULT_RLIMIT) -> bool:
    """Whether every source the finding names is shown to have left when its op runs (each query unsat)."""
    if f.rule != R.ASYNC_SOURCE_REUSE or f.path is None or not f.sources or LATE in f.sources:
        return False
    if not a.program.target.ordered_writes:
        # Without the write order only a flush or write barrier shows a source left, and the per-engine run already
        # saw every path's: the query would only repeat it (on a large grid, at the cost of the widest scope).
        return False
    view = a.views[f.engine]
    hazard = next((lf for lf in view.leaves if lf.path == f.path), None)
    if hazard is None:
        return False
    for s in f.sources:
        src = view.leaves[s]
        ok, pages = _applies(facts[f.engine], src, hazard)
        if not ok or (pages is not None and pages[0] not in trusted):
            return False
        r = _Reuse(a, f.engine, src, hazard, pages)
        o, _d, _ = solve_each(a, r.build, f"{R.ASYNC_SOURCE_REUSE}:{f.engine}:{list(f.path)}", r.engines(), trusted,
                              rlimit, extra=[hazard, src])
        if o.status != Status.UNSAT:
            return False
    return True


def cross_engine(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[tuple[Result, Leaf | None]]:
    """Flag source words another engine of the site sets, or remote writes land on: one candidate result each
    (proved by the query, else a refutation candidate the caller replays with the op it names)."""
    p = a.program
    out: list[tuple[Result, Leaf | None]] = []
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    site_of = {k: v.program.site for k, v in a.views.items()}
    for s in leaves:
        if not isinstance(s.op, McastSetValid):
            continue
        sem, site = s.op.source, site_of[s.engine]
        for h in leaves:
            if h.engine == s.engine or site_of[h.engine] != site or not isinstance(h.op, SemSet) or h.op.sem != sem:
                continue
            t0 = time.perf_counter()
            name = f"{R.ASYNC_SOURCE_REUSE}:{h.engine}:{list(h.path)}"
            r = _Reuse(a, s.engine, s, h, None)
            o, _d, _ = solve_each(a, r.build, name, r.engines(), trusted, rlimit, extra=[h, s])
            dt = time.perf_counter() - t0
            flag = write_noun(p.groups, [s.op.group])
            msg = f"{h.engine} sets sem{sem}@{site}, the source word of {s.engine}'s flag {flag} at {list(s.path)}"
            if o.status == Status.UNSAT:
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, msg + ", only once that flag has left",
                                   seconds=dt), None))
            else:
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED if o.status == Status.SAT else Verdict.FAILED,
                                   msg + " while it may not have left" if o.status == Status.SAT else
                                   f"solver: {o.reason}", seconds=dt), h))
        # Remote writes landing on a source word: decided for a sequence's loopback copies of its own word (the
        # owner's program order, families/semaphores/encoding.py ``loopback_reuse``), else not (the word's protocol
        # is outside the fragment).
        remote = [x for x in leaves if (isinstance(x.op, (SemInc, InlineWrite)) and x.op.sem == sem and x.op.at == site)
                  or (isinstance(x.op, (McastSetValid, SemIncMcast)) and x.op.sem == sem
                      and site in p.groups[x.op.group].destinations())]
        word = a.words.get((sem, site))
        seq = word.seq if word is not None and word.kind == "sequence" and word.seq is not None \
            and word.seq.is_source(word) else None
        hazards = dict((lf.path, why) for lf, why in loopback_reuse(a, word)) if seq is not None and word else {}
        for x in remote:
            name = f"{R.ASYNC_SOURCE_REUSE}:{x.engine}:{list(x.path)}"
            if any(r.name == name for r, _ in out):
                continue
            msg = (f"{x.engine}'s remote write lands on sem{sem}@{site}, the source word of {s.engine}'s flag "
                   f"{write_noun(p.groups, [s.op.group])}")
            if seq is not None and word is not None and x in word.flags and x.path not in hazards:
                flags = write_noun(p.groups, [y.op.group for y in word.flags if isinstance(y.op, McastSetValid)], True)
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                                   f"{x.engine}'s loopback copy of sequence word sem{sem}@{site} lands on it only once "
                                   f"every flag {flags} reading it issued before has left (each copy lands before the "
                                   "next flag reading the word is issued)"), None))
                continue
            why = f" ({hazards[x.path]})" if x.path in hazards else ""
            out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED,
                               f"{msg} at {list(s.path)}{why}"), x))
    return out


def check_remote_reads(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """Two obligations per remote read (docs/semantics.md, "Remote reads"; docs/checker.md, "Remote writes"), each
    one reachability query over the interpreter's own rule (``noc.published``): the page ring slot ``slot`` holds is
    the latest among the ``cap`` pages below the owner's reserved end (a variable between its pushes and its
    reserves' pages added up), the slot being the reader's read pointer of its own copy plus ``offset``.

    - ``remote-read-unpublished``: when it is issued, every page it reads was published by the owner's producer
      (``>= 0`` and below ``pushed``). A popped page keeps its bytes until the producer reserves it again (the
      sharded layernorm's coordinator pops a partial others still read). Unsat proves it; sat is a candidate the
      interpreter replays;
    - ``async-source-reuse`` of the read: while it is in flight (occurrence ``I`` issued, no read barrier of its
      engine since) no page it read — published at ``I``'s issue (the obligation above, assumed by ``assume.py``) —
      is reserved again: the reserves' pages added up ``>= page + cap + 1`` now (and the page not live now). The
      owner's engines at ``I``'s issue are any positions no later than now (an over-approximation of that past
      state). Only a reserve rewrites them: the producer writes
      inside its reserved window (``cb-write-unreserved``), a landing there is ``mcast-slot``'s, an alias's
      ``alias-clobber``'s. Unsat proves it; anything else fails to prove (the interpreter's rule is at the rewrite).

    Both need the reader's and the owner's buffers to be trusted (coverage proved) and of one capacity."""
    p = a.program
    out: list[Result] = []
    trip_max = p.trip_max()
    for v in a.views.values():
        readers = [lf for lf in v.leaves if isinstance(lf.op, RemoteRead)]
        barriers = [lf for lf in v.leaves if isinstance(lf.op, ReadBarrier)]
        for lf in readers:
            op = lf.op
            assert isinstance(op, RemoteRead)
            owner = p.remote_buffer(op.buf, op.at)
            assert owner is not None  # validate
            names = (f"{R.REMOTE_READ_UNPUBLISHED}:{lf.engine}:{list(lf.path)}",
                     f"{R.ASYNC_SOURCE_REUSE}:{lf.engine}:{list(lf.path)}")
            if any(count_max(lc.count, trip_max) == 0 for lc in lf.loops):
                out += [Result(R.Family.ASYNC_NOC.value, n, Verdict.PROVED, "the read never runs (its loop runs no "
                                                                            "iteration)") for n in names]
                continue
            cap = p.buffers[owner].capacity
            if not {op.buf, owner} <= trusted or p.buffers[op.buf].capacity != cap:
                out += [Result(R.Family.ASYNC_NOC.value, n, Verdict.FAILED,
                               f"b{op.buf} and b{owner} must be of one capacity with their coverage proved") for n in names]
                continue
            pops = [x for x in v.leaves if isinstance(x.op, Pop) and x.op.buf == op.buf]
            engines = frozenset([lf.engine] + [x.engine for w in a.views.values() for x in w.leaves
                                               if getattr(x.op, "buf", None) == owner])

            owned = [x for w in a.views.values() for x in w.leaves
                     if isinstance(x.op, (Reserve, Push, Pop)) and x.op.buf == owner]
            rsv = [x for x in owned if isinstance(x.op, Reserve)]
            psh = [x for x in owned if isinstance(x.op, Push)]
            drained = [x for x in owned if isinstance(x.op, Pop)]

            def latest(enc: Encoder, slot: z3.ArithRef, tag: str, rsv: list[Leaf] = rsv, psh: list[Leaf] = psh,
                       drained: list[Leaf] = drained, cap: int = cap) -> tuple[z3.ArithRef, z3.ArithRef, z3.BoolRef]:
                # The page ring slot ``slot`` holds (the latest among the cap pages below the producer's reserved end,
                # negative when never written), the pages pushed, and what bounds that end, at the encoder's
                # positions (noc.published). The end (State.rsv_end) is no sum of counts — a reserve moves it to
                # max(end, pushed + n), not by n — so it is a variable between pushed (it never falls below) and
                # every reserve's pages added up (a covered push stays inside it: each reserve raises it by at most
                # its n), and at most popped + cap (a reserve returns only when pushed + n - popped <= cap, and the
                # pops only grow: cb.semantics.reserve_enabled).
                pu = _pages(enc, psh)
                top = enc.q.int_var(f"remote.rsv.{tag}")
                bound = z3.And(top >= pu, top <= _pages(enc, rsv), top <= _popped(enc, drained) + cap)
                return top - cap + (slot - (top - cap)) % cap, pu, bound

            def unpublished(enc: Encoder, first: z3.ArithRef, q: object, pages: int = op.pages) -> z3.BoolRef:
                k = q.int_var("remote.k")  # type: ignore[attr-defined]
                page, pu, bound = latest(enc, first + k, "now")
                return z3.And(k >= 0, k < pages, bound, z3.Or(page < 0, page >= pu))

            def issue(sq: StateQuery, lf: Leaf = lf, pops: list[Leaf] = pops, off: int = op.offset) -> z3.BoolRef:
                return z3.And(sq.enc.position(lf.engine).at(lf), unpublished(sq.enc, _popped(sq.enc, pops) + off, sq.q))

            def flight(sq: StateQuery, lf: Leaf = lf, pops: list[Leaf] = pops, off: int = op.offset,
                       barriers: list[Leaf] = barriers, pages: int = op.pages, rsv: list[Leaf] = rsv,
                       owned: list[Leaf] = owned, cap: int = cap, owner: int = owner) -> z3.BoolRef:
                enc, q = sq.enc, sq.q
                at = Encoder(q, p, a.views, prefix="rr.", trip_vars=enc.trip_vars)
                conds = [at.position(lf.engine).at(lf), enc.executed(lf) > at.executed(lf)]  # occurrence I issued
                conds += [enc.executed(x) == at.executed(x) for x in barriers]  # no read barrier since I
                # The owner's engines at I's issue: any positions no later than now (counts only grow).
                conds += [at.executed(x) <= enc.executed(x) for x in owned]
                # A page I read — published when I was issued (remote-read-unpublished, assumed) — whose ring slot
                # the owner's producer has reserved again since: a reserve reached page + cap.
                # Right after that reserve the page is also not live (pushed, not popped) now: asking both is
                # sound, and neither alone proves every case the other does.
                k = q.int_var("remote.k")
                first = _popped(at, pops) + off
                page, pu, bound = latest(at, first + k, "issue")
                po = sq.cm.popped(owner)
                # Reserved again: the end now reached page + cap (at most every reserve's pages added up).
                conds += [k >= 0, k < pages, bound, page >= 0, page < pu, _pages(enc, rsv) >= page + cap + 1,
                          (first + k - po) % cap >= sq.cm.pushed(owner) - po]
                return all_of(q.ctx, conds)

            for name, build, reuse in ((names[0], issue, False), (names[1], flight, True)):
                t0 = time.perf_counter()
                o, d, _ = solve_each(a, build, name, engines, trusted, rlimit, extra=[lf])
                dt = time.perf_counter() - t0
                if o.status == Status.UNSAT:
                    why = ("no page it reads is reserved again by its owner until the read landed" if reuse
                           else "every page it reads holds what its owner published when it is issued")
                    out.append(Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, why, seconds=dt))
                elif o.status == Status.SAT and d is not None and not reuse:
                    msg = f"{lf.engine} may read pages of b{owner} at {op.at} its owner has not pushed, or has reserved again"
                    out.append(Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, d.counterexample(
                        "state", R.REMOTE_READ_UNPUBLISHED, msg, engine=lf.engine, path=list(lf.path)), dt))
                else:
                    why = (f"b{owner}'s owner may reserve again pages {lf.engine}'s read has not landed from (a candidate "
                           "of the counters, not replayed)" if reuse else f"solver: {o.reason}")
                    out.append(Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, why, seconds=dt))
    return out


def _pages(enc: Encoder, leaves: list[Leaf]) -> z3.ArithRef:
    """The pages the Reserve or Push ``leaves`` moved at the encoder's positions."""
    terms = [enc.executed(lf) * lf.op.pages for lf in leaves if isinstance(lf.op, (Reserve, Push))]
    if not terms:
        return enc.q.val(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def _popped(enc: Encoder, pops: list[Leaf]) -> z3.ArithRef:
    terms = [enc.executed(lf) * lf.op.pages for lf in pops if isinstance(lf.op, Pop)]
    if not terms:
        return enc.q.val(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def may_reach_source(a: Analysis, facts: dict[str, EngineFacts], f: Finding, freed: int, pop: Finding,
                     trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> bool:
    """Whether the op of a ``reuse_consequences`` candidate ``f`` — a Reserve of b, or a ReadTiles/PackAcc into
    b, by b's producer, after the premature ``pop`` (a finding at a Pop of b, ``freed``, by its consumer) — may reach
    a page that is the source of an outstanding write or multicast of the consumer. One reachability query per source
    the pop names: the producer at its op, a second position of the consumer at the source leaf in occurrence ``I``
    (issued, no Flush/WriteBarrier of the consumer since), and the op's pages reaching ``I``'s ring slot again:
    ``pushed + reach > popped_at_I + capacity`` (``I`` reads pages from its read pointer ``popped_at_I`` on, waited so
    below ``pushed``; a later page in the same slot is at least one capacity further; ``reach``: the pages past the
    write pointer the op reserves or writes). A fill lands after it was issued, but the source it may rewrite was
    issued before its page could be reserved at all, so the condition at issue is necessary. Every query unsat clears
    the candidate (False). True (keep it) for a fill into an alias of b (its own ring says nothing of b's slots) or
    when a query is sat or unknown."""
    if f.path is None or pop.path is None or LATE in pop.sources:
        return True
    p = a.program
    view = a.views[f.engine]
    op = op_at(view.program, f.path)
    if isinstance(op, Reserve):
        b, reach = op.buf, op.pages
    elif isinstance(op, (ReadTiles, PackAcc, FillTiles, CopyTiles)):
        b = op.buf if isinstance(op, PackAcc) else op.into
        written = facts[f.engine].written.get(f.path, frozenset())
        reach = max(written, default=0) + 1
    else:
        return True
    if b != freed:
        return True
    lf = next(x for x in view.leaves if x.path == f.path)
    consumer = a.views[pop.engine]
    pushes = [x for x in view.leaves if isinstance(x.op, Push) and x.op.buf == b]
    pops = [x for x in consumer.leaves if isinstance(x.op, Pop) and x.op.buf == b]
    covers = [x for x in consumer.leaves if isinstance(x.op, (Flush, WriteBarrier))]
    cap = p.buffers[b].capacity
    for s in pop.sources:
        src = consumer.leaves[s]

        def build(sq: StateQuery, src: Leaf = src) -> z3.BoolRef:
            enc = sq.enc
            at = Encoder(sq.q, p, a.views, prefix="src.", trip_vars=enc.trip_vars)
            conds = [enc.position(f.engine).at(lf), at.position(pop.engine).at(src),
                     enc.executed(src) > at.executed(src)]
            conds += [enc.executed(c) == at.executed(c) for c in covers]
            conds.append(_pushed(enc, pushes) + reach > _popped(at, pops) + cap)
            return all_of(sq.q.ctx, conds)

        o, _d, _ = solve_each(a, build, f"{R.ASYNC_SOURCE_REUSE}:{f.engine}:{list(f.path)}:reach", {f.engine, pop.engine},
                              trusted, rlimit, extra=[lf, src])
        if o.status != Status.UNSAT:
            return True
    return False
