"""Compositional certification of composed programs (DESIGN §7 "Compositional"; docs/checker.md, "Compositional
certification").

A composed program — sections joined per (site, engine) with the ``compose`` pass's rendezvous at every closing
boundary — is proved from the proofs of its *slices* plus rendezvous obligations, never by one query over the
whole program:

1. ``recognise`` checks the rendezvous, by structure only, against exactly the shape ``compose`` emits (the module
   docstring of ``Rendezvous``). Anything else — a hand-written rendezvous with resets, a mutant — is not this
   shape, and the whole-program checker decides it.
2. ``cut`` makes one standalone ``Program`` per *phase* (the sections between two closing rendezvous; an open
   boundary keeps its sections in one phase, checked together): each engine's ops of that phase minus the
   rendezvous, the phase's buffers and semaphores renumbered densely in order of first appearance, tensors and
   trips renamed likewise (``%t<i>``, ``%k<i>``) with roles adjusted for the slice, its memory map. The slice *is*
   its canonical form: two slices equal up to renaming are byte-identical, and the SHA-256 of the slice is its key.
3. Each distinct slice is certified once with ``certify``; a slice equal to an earlier one whose every obligation
   proved reuses that report, each result naming its source.
4. Cross-phase obligations follow from the rendezvous lemma (docs/checker.md): one per closing boundary
   (``rendezvous:after-section-<b>``), one per (tensor, boundary) that data crosses (``hb-cross:<T>:after-section-<b>``),
   coverage of reads by writes of earlier phases, coverage of every whole-program output, the composed
   ``deadlock:composition`` and the rendezvous words' balance. Each records the obligations it assumes and is
   failed-to-prove when one of them is not proved.

A slice obligation is reported as ``slice<j>/<name>``: tensor, trip, buffer and semaphore names are mapped back to
the composed program's, leaf references ``engine[path]`` to its op paths. A slice refutation is replayed on the
slice; it is reported as refuted only where it is a violation of the composition too (docs), else failed-to-prove.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import itertools
import operator
import re
import time
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs

from verispatial.certify.canon import ProofMemo
from verispatial.certify.replay import confirm_rule
from verispatial.certify.report import (
    Columns,
    Parts,
    Rendered,
    Report,
    Result,
    Verdict,
    chain,
    count_of,
    selected_verdicts,
    timed_result,
    verdict_set,
)
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.certify.structure import Leaf, LoopCtx
from verispatial.families.memory.encoding import _resident_ranges
from verispatial.families.tensors.ordering_encoding import _coverage, _output_coverage_query
from verispatial.ir import obligation
from verispatial.ir import rules as R
from verispatial.ir.boundaries import closing_sections, section_bounds
from verispatial.ir.core import Addr, Engine, Role, Site, Space, WaitCond
from verispatial.ir.ids import Renaming
from verispatial.ir.obligation import TensorRef
from verispatial.ir.ops import (
    ID_BUFFER,
    ID_GROUP,
    ID_OPERANDS,
    ID_SEMAPHORE,
    ID_SITE,
    ID_TENSOR,
    OP_TAGS,
    AtomicBarrier,
    Compute,
    If,
    Loop,
    Op,
    Operand,
    ReadTiles,
    SemInc,
    SemSet,
    SemWait,
    WriteTiles,
)
from verispatial.ir.program import (
    Buffer,
    BufferAt,
    EngineProgram,
    Group,
    Program,
    SectionSpan,
    Semaphore,
    Tensor,
    Trip,
    walk,
)
from verispatial.ir.templated import TemplatedProgram, dynamic_renamed, indirect

if TYPE_CHECKING:  # concurrent.futures is imported by the pool that runs one (``driver.workers``)
    from concurrent.futures import Executor

Progress = Callable[[str], None]
#: ``certify`` itself, passed in by checker.py (it imports this module).
Certify = Callable[..., Report]
#: Worker pools the kernel is handed (``driver.workers.worker_pool``): ``jobs`` -> a pool, stopped when the block ends.
Pool = Callable[[int], AbstractContextManager["Executor"]]

#: Engines of one site in participant order (the compose pass's order: reader, compute, writer).
ENGINE_ORDER = {Engine.READER: 0, Engine.COMPUTE: 1, Engine.WRITER: 2}


def participant_order(ep: EngineProgram) -> tuple[int, int, int]:
    """Sort key of a rendezvous participant: site row, site column, engine (reader, compute, writer)."""
    return (ep.site.y, ep.site.x, ENGINE_ORDER[ep.engine])


def host_initialised(s: Semaphore) -> bool:
    """Whether the host re-initializes ``s``'s words at every launch (``Semaphore.host_init``)."""
    return bool(getattr(s, "host_init", False))


@attrs.frozen
class Rendezvous:
    """The rendezvous of a composed program, exactly as ``compose`` emits it.

    ``participants``: every engine program, sorted by (site.y, site.x, engine reader, compute, writer); ``P`` of
    them; the root is the first; ``sites``: the ``S`` distinct participant sites in that order. ``gather`` (one
    word, on the root's site) and ``release`` (a word on each of the ``S`` sites): program-wide, initial value 0,
    re-initialized by the host at launch, used by no other op. At the ``k``-th closing boundary (``k = 1, 2, ...``;
    section ``b`` closes when ``barrier_after`` is set and it is not the last), the last top-level ops of section
    ``b`` on every participant are ``SemInc(gather, at=root site, by=1)``, ``AtomicBarrier()``, then on the root
    only ``SemWait(gather, ge, k*P)``, one ``SemInc(release, at=s, by=1)`` per site ``s`` in site order,
    ``AtomicBarrier()``; then on every participant ``SemWait(release, ge, k)``. ``starts[engine][k-1]`` is the
    top-level index of that engine's arrival at boundary ``k``.
    """

    gather: int
    release: int
    participants: tuple[str, ...]
    sites: tuple[Site, ...]
    boundaries: tuple[int, ...]
    starts: dict[str, tuple[int, ...]]

    @property
    def root(self) -> str:
        return self.participants[0]


def expected_tail(gather: int, release: int, root_site: Site, sites: tuple[Site, ...], k: int, p: int,
                  root: bool) -> tuple[Op, ...]:
    """The ops a participant ends the section closing boundary ``k`` with (see ``Rendezvous``)."""
    out: list[Op] = [SemInc(gather, root_site, 1), AtomicBarrier()]
    if root:
        out += [SemWait(gather, WaitCond.GE, k * p), *[SemInc(release, s, 1) for s in sites], AtomicBarrier()]
    out.append(SemWait(release, WaitCond.GE, k))
    return tuple(out)


def recognise(p: Program) -> Rendezvous | str:
    """The program's rendezvous if it has exactly the compose pass's shape (``Rendezvous``), else why not (a
    sentence). Purely structural; linear in the number of top-level ops of the closing sections."""
    closing = closing_sections(p)
    if not closing:
        return "no closing boundary"
    if not p.programs:
        return "no engine programs"
    n = len(p.sections)
    for ep in p.programs:
        if len(ep.section_starts) != n:
            return f"{ep.key} has {len(ep.section_starts)} section starts for {n} sections"
    parts = sorted(p.programs, key=participant_order)
    root = parts[0]
    sites: list[Site] = []
    for ep in parts:
        if ep.site not in sites:
            sites.append(ep.site)
    n_parts, n_sites = len(parts), len(sites)
    lo, hi = section_bounds(root, n)[closing[0]]
    width = 5 + n_sites
    if hi - lo < width:
        return f"the root {root.key} ends section {closing[0]} with fewer than {width} ops"
    first, last = root.ops[hi - width], root.ops[hi - 1]
    if not isinstance(first, SemInc) or not isinstance(last, SemWait):
        return f"the root {root.key} does not end section {closing[0]} with an arrival and a release wait"
    gather, release = first.sem, last.sem
    if gather == release or not (0 <= gather < len(p.semaphores) and 0 <= release < len(p.semaphores)):
        return "the gather and release words are not two semaphores"
    g, r = p.semaphores[gather], p.semaphores[release]
    for s, where in ((g, (root.site,)), (r, tuple(sites))):
        if s.section is not None or s.init != 0 or not host_initialised(s):
            return f"semaphore {s.id} ({s.name}) is not program-wide, initially 0 and re-initialized by the host"
        if sorted(s.sites, key=lambda x: (x.y, x.x)) != list(where):
            return f"semaphore {s.id} ({s.name}) does not have exactly one word on each of its sites"
    starts: dict[str, list[int]] = {}
    for ep in parts:
        bd = section_bounds(ep, n)
        mine = starts[ep.key] = []
        for k, b in enumerate(closing, start=1):
            want = expected_tail(gather, release, root.site, tuple(sites), k, n_parts, ep is root)
            lo, hi = bd[b]
            if hi - lo < len(want) or ep.ops[hi - len(want):hi] != want:
                return f"{ep.key} does not end section {b} with the rendezvous of boundary {k}"
            mine.append(hi - len(want))
    return Rendezvous(gather, release, tuple(ep.key for ep in parts), tuple(sites), tuple(closing),
                      {k: tuple(v) for k, v in starts.items()})


def rendezvous_places(p: Program, rv: Rendezvous) -> list[dict[str, Any]]:
    """The marked-graph places of the rendezvous: per closing boundary ``P`` arrival places (each participant's
    arrival into the root's gather wait, threshold ``k*P``) and ``S`` release places (the root's release of a site,
    read by the release wait of every participant there, threshold ``k``) — ``P + S`` per boundary, as the compose
    fragment states them."""
    n_parts, n_sites = len(rv.participants), len(rv.sites)
    root = rv.root
    site_of = {ep.key: ep.site for ep in p.programs}
    at_site: dict[Site, list[str]] = {}
    for key in rv.participants:
        at_site.setdefault(site_of[key], []).append(key)
    gather = f"sem{rv.gather}@{site_of[root]}"
    out: list[dict[str, Any]] = []
    for i, b in enumerate(rv.boundaries):
        k = i + 1
        first = {key: rv.starts[key][i] for key in rv.participants}
        wait_at = first[root] + 2
        for key in rv.participants:
            out.append({"kind": "rendezvous-arrival", "boundary": b, "k": k, "counter": gather,
                        "from": {"engine": key, "path": [first[key]], "op": "SemInc"},
                        "to": {"engine": root, "path": [wait_at], "op": "SemWait"},
                        "tokens": 0, "weight": "increments", "threshold": k * n_parts})
        for j, site in enumerate(rv.sites):
            out.append({"kind": "rendezvous-release", "boundary": b, "k": k, "counter": f"sem{rv.release}@{site}",
                        "from": {"engine": root, "path": [first[root] + 3 + j], "op": "SemInc"},
                        "to": [{"engine": r, "path": [first[r] + (2 if r != root else 4 + n_sites)], "op": "SemWait"}
                               for r in at_site[site]],
                        "arcs": "read", "tokens": 0, "weight": "increments", "threshold": k})
    return out


# ---------------------------------------------------------------------------------------------------------- slices


#: ``Access.listed`` of an access whose tiles its maker did not list.
_UNLISTED: Any = object()


@attrs.frozen
class Access:
    """A ``ReadTiles``/``WriteTiles`` of the composed program: its leaf (composed op path; ``index`` unused), its
    phase, and whether it sits under an ``If`` (its occurrences are then not all executed)."""

    leaf: Leaf
    phase: int
    guarded: bool
    #: ``_tiles`` of the access when its maker knew it (a templated program's instance access: its template
    #: access's, ``cut_templated``), else ``_UNLISTED``. Not part of the access's value.
    listed: Any = attrs.field(default=_UNLISTED, eq=False, repr=False)

    @property
    def write(self) -> bool:
        return isinstance(self.leaf.op, WriteTiles)


class _Namer:
    """Renumbers ids of one kind in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, x: Any) -> int:
        got = self.index.get(x)
        if got is None:
            got = self.index[x] = len(self.index)
        return got

    def order(self) -> list[Any]:
        return list(self.index)  # dicts keep insertion order: first appearance


@attrs.define
class Slice:
    """Phase ``index`` of a composed program as a standalone program (its canonical form, see module docstring).

    ``tensors[i]`` / ``trips[i]`` are the composed names of ``%t<i>`` / ``%k<i>``; ``buffers[i]``,
    ``semaphores[i]``, ``groups[i]`` the composed ids of the slice's ids; ``offsets[engine]`` the composed top-level
    index of the engine's first op in the slice. ``key`` is the SHA-256 of the canonical form: every op (ids
    renumbered, everything else verbatim) and every table the checker reads (buffers, memory map, semaphores,
    groups, trips, tensors with their slice roles, sections, target) — equal keys give equal
    ``program``s up to ``UNREAD_FIELDS``. ``program`` is built on first use (a slice whose key was certified already is never built)."""

    index: int
    sections: tuple[int, ...]
    names: tuple[str, ...]
    key: str
    tensors: tuple[str, ...]
    trips: tuple[str, ...]
    buffers: tuple[int, ...]
    semaphores: tuple[int, ...]
    groups: tuple[int, ...]
    offsets: dict[str, int]
    _build: Callable[[], Program]
    _program: Program | None = None
    #: The key with every buffer taken as handed on (``key`` but for the buffers' ``persistent`` flags), and per
    #: buffer slot of the slice whether it is handed on: ``_stronger_source`` (empty: not cut from templates).
    loose: str = ""
    handed_on: tuple[bool, ...] = ()

    @property
    def title(self) -> str:
        return ", ".join(self.names)

    @property
    def program(self) -> Program:
        if self._program is None:
            self._program = self._build()
        return self._program


class Use(NamedTuple):
    """What ``cross_phase`` reads of one tensor access of the composed program (an ``Access`` without its leaf):
    its tensor, phase, whether it writes, whether it moves whole pages (no ``part``), whether it sits under an
    ``If``, its ``_tiles`` when its maker listed them (else ``_UNLISTED``), its engine and composed op path, and
    ``at``, what ``Cut.leaf_of`` builds its leaf from. A plain tuple: an 80-layer step has 72,413 of them, and a
    leaf, a renamed op and loop contexts each cost several times what the tuple does."""

    tensor: str
    phase: int
    write: bool
    whole: bool
    guarded: bool
    tiles: Any
    engine: str
    path: tuple[int, ...]
    at: Any


@attrs.frozen
class Cut:
    """A composed program cut into slices: the slices (one per phase), every tensor access with its phase but the
    reads of inputs and params (no phase writes them, so no obligation across phases reads them: ``cross_phase``'s
    crossings, coverage and outputs are of tensors some phase writes) as ``uses`` (``leaf_of(use.at)`` its leaf,
    built on request), and per tensor the phases that read and write it (those reads left out likewise)."""

    slices: tuple[Slice, ...]
    uses: tuple[Use, ...]
    reads: dict[str, frozenset[int]]
    writes: dict[str, frozenset[int]]
    leaf_of: Callable[[Any], Leaf] = attrs.field(eq=False, repr=False)

    @property
    def accesses(self) -> tuple[Access, ...]:
        """Every access of ``uses`` as an ``Access`` (its leaf built by ``leaf_of``)."""
        return tuple(Access(self.leaf_of(u.at), u.phase, u.guarded, u.tiles) for u in self.uses)

    def tiles(self, u: Use) -> frozenset[int] | None:
        """``_tiles`` of use ``u``: as its maker listed them, else of its access."""
        return u.tiles if u.tiles is not _UNLISTED else _tiles(Access(self.leaf_of(u.at), u.phase, u.guarded))


def _use(acc: Access, at: Any) -> Use:
    """The ``Use`` of access ``acc`` (``at``: what ``Cut.leaf_of`` gives its leaf from)."""
    lf = acc.leaf
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    return Use(op.tensor, acc.phase, isinstance(op, WriteTiles), op.part is None, acc.guarded, acc.listed, lf.engine,
               lf.path, at)


def _slice_role(t: Tensor, j: int, reads: frozenset[int], writes: frozenset[int]) -> Role:
    """A tensor's role in slice ``j`` (docs/checker.md): inputs and params stay; a state stays a state; an
    activation the slice writes is an activation of the slice (its reads there are checked against its writes
    there), one it only reads is an input of the slice (written by an earlier phase: the cross-phase coverage
    obligation checks that); a whole-program output is an activation of the slice, so the slice puts no coverage
    obligation on it (an output may be written over several phases: its coverage is a whole-program obligation)."""
    if t.role in (Role.INPUT, Role.PARAM, Role.STATE):
        return t.role
    if t.role == Role.ACTIVATION and j not in writes:
        return Role.INPUT
    return Role.ACTIVATION


#: Op fields no obligation and no interpreter rule reads, left out of a slice's key: ``Compute.kind`` only labels
#: the math step (matmul, add, mul, ...), so the element-wise sections of one shape are one slice class. A rule that
#: starts reading one must take it out of here (tests/test_compositional.py checks verdicts do not depend on it).
UNREAD_FIELDS = frozenset({(Compute, "kind")})

#: Per op class: its fields (``body`` and ``UNREAD_FIELDS`` excluded) with the id space each names (None: a value).
_FIELDS: dict[type, tuple[tuple[str, str | None], ...]] = {
    cls: tuple((f.name, f.metadata.get("id")) for f in attrs.fields(cls)
               if f.name != "body" and (cls, f.name) not in UNREAD_FIELDS) for cls in OP_TAGS}


class _Phase:
    """What the walk over one phase's ops gathers: ids in order of first appearance, the canonical op tokens, the
    engines' op ranges."""

    def __init__(self) -> None:
        self.bufs, self.sems, self.groups, self.tensors, self.trips = _Namer(), _Namer(), _Namer(), _Namer(), _Namer()
        self.tokens: list[Any] = []
        self.engines: list[tuple[EngineProgram, int, int]] = []


class _BadCut(Exception):
    """An op names an entity of another phase (or a rendezvous word): the program cannot be cut."""


def cut(p: Program, rv: Rendezvous) -> Cut | str:
    """Cut ``p`` into one slice per phase (module docstring), or say why it cannot be cut (a buffer, semaphore or
    group used from another phase than its own; a rendezvous word used by an op of a section). One walk over the
    ops; a slice's program is built only when asked for. Every indirect address's index buffer is named first
    (``Program.with_index_buffers``): the slice renames tensors, and an index buffer derived by the index tensor's
    name would be lost there."""
    p = p.with_index_buffers()
    scratch = next((b for b in p.buffers if b.scratch), None)
    if scratch is not None:
        # A slice rebuilds its buffers as rings; the scratch rules are per engine and decided on the whole program.
        return (f"buffer {scratch.id} is a scratch buffer (private L1 of one engine, no ring): the whole-program "
                "obligations decide it")
    shards = [b for b in p.buffers if b.shard is not None]
    if shards:
        return (f"buffer {shards[0].id} is sharded (its pushes read or write tensor {shards[0].shard.tensor!r}, which "  # type: ignore[union-attr]
                "a slice would rename away): the whole-program obligations decide it")
    phases = p.phase_of_section()
    n_phases = max(phases) + 1
    secs: list[list[int]] = [[] for _ in range(n_phases)]
    for b, at_phase in enumerate(phases):
        secs[at_phase].append(b)
    closing_of = {phases[b]: k for k, b in enumerate(rv.boundaries)}
    bounds = {ep.key: section_bounds(ep, len(p.sections)) for ep in p.programs}
    accesses: list[Access] = []
    walker = _Walker(p, phases, {rv.gather, rv.release}, accesses)
    raw = [_Phase() for _ in range(n_phases)]
    try:
        for ep in p.programs:
            bd = bounds[ep.key]
            for j in range(n_phases):
                lo = bd[secs[j][0]][0]
                hi = rv.starts[ep.key][closing_of[j]] if j in closing_of else bd[secs[j][-1]][1]
                if hi <= lo:
                    continue
                ph = raw[j]
                ph.engines.append((ep, lo, hi))
                ph.tokens.append(("E", ep.site.x, ep.site.y, ep.engine.value,
                                  tuple(bd[b][0] - lo for b in secs[j]), hi - lo))
                walker.run(ep, lo, hi, j, bd, secs[j][0], ph)
    except _BadCut as e:
        return str(e)
    fixed = {t.name for t in p.tensors if t.role in (Role.INPUT, Role.PARAM)}
    accesses = [a for a in accesses if a.write or a.leaf.op.tensor not in fixed]  # type: ignore[union-attr]
    reads: dict[str, set[int]] = {}
    writes: dict[str, set[int]] = {}
    for acc in accesses:
        op = acc.leaf.op
        assert isinstance(op, (ReadTiles, WriteTiles))
        (writes if acc.write else reads).setdefault(op.tensor, set()).add(acc.phase)
    fr = {t: frozenset(v) for t, v in reads.items()}
    fw = {t: frozenset(v) for t, v in writes.items()}
    by_name = {t.name: t for t in p.tensors}
    trip_max = p.trip_max()
    at = {m.buf: m for m in p.memory}
    phase_buffers: list[list[int]] = [[] for _ in range(n_phases)]
    for x in p.buffers:
        phase_buffers[phases[x.section]].append(x.id)
    phase_sems: list[list[int]] = [[] for _ in range(n_phases)]
    for y in p.semaphores:
        if y.section is not None:
            phase_sems[phases[y.section]].append(y.id)
    target = repr(p.target)
    slices: list[Slice] = []
    # A buffer whose index a later phase reuses hands its counters on: in its slice alone it is persistent.
    reused = p.counters_reused()
    for j in range(n_phases):
        ph = raw[j]
        for bid in phase_buffers[j]:  # the phase's buffers no op names still take memory
            ph.bufs(bid)
        for sid in phase_sems[j]:
            ph.sems(sid)
        sec_map = {b: i for i, b in enumerate(secs[j])}
        for bid in ph.bufs.index:
            x = p.buffers[bid]
            if x.alias_of is not None and x.alias_of not in ph.bufs.index:
                return f"buffer {x.id} aliases buffer {x.alias_of} of another phase"
        tnames = {name: f"%t{i}" for name, i in ph.tensors.index.items()}
        knames = {name: f"%k{i}" for name, i in ph.trips.index.items()}
        roles = [_slice_role(by_name[t], j, fr.get(t, frozenset()), fw.get(t, frozenset())) for t in ph.tensors.index]
        rows = [(x.site.x, x.site.y, x.cb, x.page_tiles, x.capacity, x.dtype, x.space.value,
                 None if x.alias_of is None else ph.bufs.index[x.alias_of], sec_map[x.section],
                 None if x.id not in at else (at[x.id].offset, at[x.id].size)) for x in (p.buffers[b] for b in ph.bufs.index)]
        handed_on = tuple([b in reused for b in ph.bufs.index])
        rest = (
            [(tuple((s.x, s.y) for s in y.sites), y.init, y.role.value, sec_map[y.section],  # type: ignore[index]
              host_initialised(y)) for y in (p.semaphores[s] for s in ph.sems.index)],
            [(g.sender.x, g.sender.y, g.rect, g.loopback) for g in (p.groups[i] for i in ph.groups.index)],
            [trip_max[t] for t in ph.trips.index],
            [(by_name[t].shape, by_name[t].dtype, r.value, by_name[t].init) for t, r in zip(ph.tensors.index, roles,
                                                                                             strict=True)],
            len(secs[j]), target)
        key = _keyed(ph.tokens, rows, handed_on, rest)
        every = (True,) * len(handed_on)
        loose = key if handed_on == every else _keyed(ph.tokens, rows, every, rest)

        def build(ph: _Phase = ph, j: int = j, tnames: dict[str, str] = tnames, knames: dict[str, str] = knames,
                  roles: list[Role] = roles, sec_map: dict[int, int] = sec_map) -> Program:
            bi, si, gi = ph.bufs.index, ph.sems.index, ph.groups.index
            ren = Renaming(buffer=bi.__getitem__, semaphore=si.__getitem__, group=gi.__getitem__,
                           tensor=tnames.__getitem__, trip=knames.__getitem__)
            programs = tuple(EngineProgram(ep.site, ep.engine, ren.ops(ep.ops[lo:hi]),
                                           tuple(bounds[ep.key][b][0] - lo for b in secs[j]))
                             for ep, lo, hi in ph.engines)
            buffers = tuple(Buffer(i, f"b{i}", x.site, x.cb, x.page_tiles, x.capacity, x.dtype, x.space,
                                   None if x.alias_of is None else bi[x.alias_of], sec_map[x.section],
                                   persistent=x.id in reused, scratch=x.scratch)
                            for i, x in enumerate(p.buffers[b] for b in bi))
            semaphores = tuple(Semaphore(i, f"sem{i}", y.sites, y.init, y.role, sec_map[y.section],  # type: ignore[index]
                                         host_init=host_initialised(y))
                               for i, y in enumerate(p.semaphores[s] for s in si))
            grps = tuple(Group(i, g.sender, g.rect, g.loopback) for i, g in enumerate(p.groups[x] for x in gi))
            ts = tuple(Tensor(tnames[t], by_name[t].shape, by_name[t].dtype, r, by_name[t].init)
                       for t, r in zip(ph.tensors.index, roles, strict=True))
            memory = tuple(BufferAt(i, at[b].offset, at[b].size) for i, b in enumerate(bi) if b in at)
            return Program("slice", p.target, ts, buffers, semaphores, grps,
                           tuple(Trip(knames[t], trip_max[t]) for t in ph.trips.index), programs,
                           tuple(SectionSpan(f"s{i}") for i in range(len(secs[j]))), memory)

        slices.append(Slice(j, tuple(secs[j]), tuple(p.sections[b].name for b in secs[j]), key,
                            tuple(ph.tensors.order()), tuple(ph.trips.order()), tuple(ph.bufs.order()),
                            tuple(ph.sems.order()), tuple(ph.groups.order()),
                            {ep.key: lo for ep, lo, _ in ph.engines}, build, loose=loose, handed_on=handed_on))
    kept = tuple(accesses)
    return Cut(tuple(slices), tuple(_use(a, n) for n, a in enumerate(kept)), fr, fw,
               lambda n: kept[n].leaf)


def _keyed(tokens: Any, rows: Iterable[tuple[Any, ...]], flags: tuple[bool, ...], rest: tuple[Any, ...]) -> str:
    """A slice key: the SHA-256 of ``repr((tokens, tables))``, the tables its buffer ``rows`` each with its handed-on
    flag of ``flags``, then ``rest`` (semaphores, groups, trips, tensors, sections, target)."""
    return hashlib.sha256(repr((tokens, (_table(rows, flags), *rest))).encode()).hexdigest()


def _table(rows: Iterable[tuple[Any, ...]], flags: tuple[bool, ...]) -> list[tuple[Any, ...]]:
    """A slice key's buffer table: each buffer's row followed by whether it is handed on."""
    return [(*row, flag) for row, flag in zip(rows, flags, strict=True)]


# ------------------------------------------------------------------------------------------- templated programs


@attrs.frozen
class _TemplateWalk:
    """What ``cut`` gathers of one phase, gathered once per template of a ``TemplatedProgram``: the walk's ids in
    order of first appearance (template ids), its canonical tokens (an indirect address's index tensor in the
    template's name: renamed per instance where ``dynamic``), its engines (participant order, those with ops) and
    its tensor accesses (template op paths and ops). ``head``: the SHA-256 of the start of a slice key, ``repr`` of
    the tokens included (``cut`` hashes ``repr((tokens, tables))``; the tables are the instance's)."""

    program: Program
    phase: _Phase
    accesses: tuple[Access, ...]
    dynamic: bool
    head: Any
    #: Per engine of ``phase.engines``, its key; per buffer of the walk's order, its table row but for the
    #: persistence flag and its (site, cb index); the semaphore and group rows (as ``cut`` writes them).
    keys: tuple[str, ...] = ()
    buffer_rows: tuple[tuple[Any, ...], ...] = ()
    buffer_slots: tuple[tuple[tuple[int, int, int], bool], ...] = ()
    sem_rows: tuple[tuple[Any, ...], ...] = ()
    group_rows: tuple[tuple[Any, ...], ...] = ()
    #: Per access, its enclosing loops (``Leaf.loops``).
    loops: tuple[tuple[LoopCtx, ...], ...] = ()


def _template_walk(t: Program) -> _TemplateWalk:
    q = t.with_index_buffers()
    ph = _Phase()
    local: list[Access] = []
    walker = _Walker(q, [0], set(), local)
    # The expansion puts every buffer and semaphore of a template in its instance's section (compose does).
    walker.buffer_phase = [0] * len(q.buffers)
    walker.sem_phase = [0] * len(q.semaphores)
    order = sorted((ep for ep in q.programs if ep.ops), key=participant_order)
    for ep in order:
        n = len(ep.ops)
        ph.engines.append((ep, 0, n))
        ph.tokens.append(("E", ep.site.x, ep.site.y, ep.engine.value, (0,), n))
        walker.run(ep, 0, n, 0, [(0, n)], 0, ph)
    for b in q.buffers:  # the phase's buffers no op names still take memory
        ph.bufs(b.id)
    for y in q.semaphores:
        ph.sems(y.id)
    dynamic = any(indirect(op) for ep in q.programs for op in walk(ep.ops))
    at = {m.buf: m for m in q.memory}
    bufs = [q.buffers[b] for b in ph.bufs.index]
    rows = tuple((x.site.x, x.site.y, x.cb, x.page_tiles, x.capacity, x.dtype, x.space.value,
                  None if x.alias_of is None else ph.bufs.index[x.alias_of], 0,
                  None if x.id not in at else (at[x.id].offset, at[x.id].size)) for x in bufs)
    return _TemplateWalk(
        q, ph, tuple(local), dynamic, hashlib.sha256(f"({ph.tokens!r}, ".encode()),
        tuple(ep.key for ep, _, _ in ph.engines), rows, tuple(((x.site.x, x.site.y, x.cb), x.persistent) for x in bufs),
        tuple((tuple((s.x, s.y) for s in y.sites), y.init, y.role.value, 0, host_initialised(y))
              for y in (q.semaphores[i] for i in ph.sems.index)),
        tuple((g.sender.x, g.sender.y, g.rect, g.loopback) for g in (q.groups[i] for i in ph.groups.index)),
        tuple(a.leaf.loops for a in local))


def _dynamic_tokens(tokens: list[Any], tmap: dict[str, str]) -> list[Any]:
    """``tokens`` with each indirect address's index tensor renamed by ``tmap`` (the expansion's names)."""
    out: list[Any] = []
    for tok in tokens:
        if isinstance(tok, tuple) and any(isinstance(v, Addr) and v.dynamic is not None for v in tok):
            tok = tuple(attrs.evolve(v, dynamic=attrs.evolve(v.dynamic, name=tmap.get(v.dynamic.name, v.dynamic.name)))
                        if isinstance(v, Addr) and v.dynamic is not None else v for v in tok)
        out.append(tok)
    return out


def rendezvous_of(tp: TemplatedProgram) -> Rendezvous:
    """The rendezvous of ``tp``'s expansion (``Rendezvous``), from its templates: the shape ``recognise`` finds in
    the expanded program, which the expansion emits by construction (``ir/templated.py``)."""
    keys = tuple(f"{s}.{e.value}" for s, e in tp.participants)
    return Rendezvous(tp.gather, tp.release, keys, tp.sites, tp.boundaries, tp.rendezvous_starts())


def cut_templated(tp: TemplatedProgram) -> Cut:
    """``cut`` of ``tp``'s expansion, from its templates: each template walked once (``_template_walk``), each
    section's slice keyed by the template's tokens and the section's tables — the very keys, tensor and id orders,
    offsets, accesses and slice programs ``cut(tp.expand(), rendezvous_of(tp))`` gives (tests/test_templated.py),
    in the size of the templates plus the section's tables and accesses. Slice programs are built on first use."""
    walks = [_template_walk(t) for t in tp.templates]
    n = len(tp.instances)
    by_name = {t.name: t for t in tp.tensors}
    trip_max = tp.trip_max()
    target = repr(tp.target)
    starts = tp.section_starts
    # Per (site, cb index) the last section using it: a buffer whose index a later phase reuses hands its counters on.
    last_use: dict[tuple[int, int, int], int] = {}
    for k, inst in enumerate(tp.instances):
        for b in tp.templates[inst.template].buffers:
            last_use[(b.site.x, b.site.y, b.cb)] = k
    fixed = {t.name for t in tp.tensors if t.role in (Role.INPUT, Role.PARAM)}  # their reads: no cross-phase concern
    reads: dict[str, set[int]] = {}
    writes: dict[str, set[int]] = {}
    for k in range(n):
        rd, wr = tp.instance_accesses(k)
        for t in rd:
            if t in fixed:
                continue
            reads.setdefault(t, set()).add(k)
        for t in wr:
            writes.setdefault(t, set()).add(k)
    fr = {t: frozenset(v) for t, v in reads.items()}
    fw = {t: frozenset(v) for t, v in writes.items()}
    # In the order ``cut`` walks the expansion: engine by engine (participant order), phase by phase (instances are
    # walked in phase order, so each engine's list is in phase order as it fills).
    rank = {f"{site}.{e.value}": i for i, (site, e) in enumerate(tp.participants)}
    by_engine: list[list[Use]] = [[] for _ in rank]
    # per instance with accesses: its template's ``_access_specs``, tensor and trip names, buffer shift and offsets
    made: dict[int, tuple[list[_AccessSpec], dict[str, str], dict[str, str], int, dict[str, int]]] = {}
    new_use = tuple.__new__
    slices: list[Slice] = []
    buffer_text: dict[tuple[int, tuple[bool, ...]], str] = {}
    specs: dict[int, list[_AccessSpec]] = {}  # per template, ``_access_specs``
    tiles_of: dict[int, dict[int, frozenset[int] | None]] = {}  # per template, per access index: ``_tiles``
    used_until: dict[int, list[tuple[bool, int]]] = {}
    kept_of: dict[tuple[int, frozenset[str]], list[_KeptAccess]] = {}  # per template and skipped tensors
    read_tensors: dict[int, set[str]] = {}  # per template, the tensors its accesses read
    columns_of: dict[int, list[tuple[int, ...]]] = {}  # per template, per engine key, its start in each instance
    for k, inst in enumerate(tp.instances):
        w = walks[inst.template]
        ph = w.phase
        tmap, kmap = tp.names(k)
        nb, ns, ng = tp.shifts[k]
        cols = columns_of.get(inst.template)
        if cols is None:
            cols = columns_of[inst.template] = [starts[key] for key in w.keys]
        offsets = dict(zip(w.keys, map(operator.itemgetter(k), cols), strict=True))
        if w.accesses:
            spec = specs.get(inst.template)
            if spec is None:
                spec = specs[inst.template] = _access_specs(w)
                read_tensors[inst.template] = {x[5] for x in spec if not x[6]}
            made[k] = (spec, tmap, kmap, nb, offsets)
            # The template's accesses this instance keeps (all but reads of its inputs and params), prepared once
            # per template and set of its tensors bound to inputs or params: every layer's instance has the same.
            skip = frozenset(x for x in read_tensors[inst.template] if tmap[x] in fixed)
            kept = kept_of.get((inst.template, skip))
            if kept is None:
                kept = kept_of[(inst.template, skip)] = _kept_accesses(spec, skip, tiles_of.setdefault(inst.template, {}),
                                                                       rank)
            for i, tensor, write, whole, guarded, got, engine, r, top, rest in kept:
                # ``tuple.__new__``: the named tuple's own ``__new__`` is a Python function, called 72,413 times here
                by_engine[r].append(new_use(Use, (tmap[tensor], k, write, whole, guarded, got, engine,
                                                  (top + offsets[engine], *rest), (k, i))))
        globals_ = [tmap[x] for x in ph.tensors.index]
        roles = [_slice_role(by_name[g], k, fr.get(g, frozenset()), fw.get(g, frozenset())) for g in globals_]
        tokens = _dynamic_tokens(ph.tokens, tmap) if w.dynamic else ph.tokens
        slots = used_until.get(inst.template)
        if slots is None:  # per buffer of the template: persistent, and the last section using its (site, cb index)
            slots = used_until[inst.template] = [(persistent, last_use[slot]) for slot, persistent in w.buffer_slots]
        handed_on = tuple([persistent or last > k for persistent, last in slots])
        tables: tuple[Any, ...] = (
            list(w.sem_rows),
            list(w.group_rows),
            [trip_max[kmap[t]] for t in ph.trips.index],
            [(by_name[g].shape, by_name[g].dtype, r.value, by_name[g].init) for g, r in zip(globals_, roles,
                                                                                           strict=True)],
            1, target)
        tail = None if w.dynamic else ", ".join(map(repr, tables))

        def keyed(flags: tuple[bool, ...], w: _TemplateWalk = w, template: int = inst.template,
                  tokens: Any = tokens, rest: tuple[Any, ...] = tables, tail: str | None = tail) -> str:
            """The SHA-256 of the slice's tokens and tables with buffer flags ``flags``: ``repr((tokens, tables))``,
            of a template without dynamic tokens from its hashed head and its buffer table's text once per
            template and flags (every layer's is equal, ``buffer_text``)."""
            if tail is None:
                return _keyed(tokens, w.buffer_rows, flags, rest)
            rows = buffer_text.get((template, flags))
            if rows is None:
                rows = buffer_text[(template, flags)] = repr(_table(w.buffer_rows, flags))
            h = w.head.copy()
            h.update(("(" + ", ".join([rows, tail]) + "))").encode())
            return h.hexdigest()
        key = keyed(handed_on)
        every = (True,) * len(handed_on)
        loose = key if handed_on == every else keyed(every)

        def build(w: _TemplateWalk = w, k: int = k, roles: list[Role] = roles, globals_: list[str] = globals_,
                  tmap: dict[str, str] = tmap, kmap: dict[str, str] = kmap) -> Program:
            ph, q = w.phase, w.program
            bi, si, gi = ph.bufs.index, ph.sems.index, ph.groups.index
            tnames = {name: f"%t{i}" for i, name in enumerate(ph.tensors.index)}
            knames = {name: f"%k{i}" for i, name in enumerate(ph.trips.index)}
            ren = Renaming(buffer=bi.__getitem__, semaphore=si.__getitem__, group=gi.__getitem__,
                           tensor=tnames.__getitem__, trip=knames.__getitem__)
            programs = tuple(EngineProgram(ep.site, ep.engine, tuple(dynamic_renamed(o, tmap) for o in ren.ops(ep.ops))
                                           if w.dynamic else ren.ops(ep.ops), (0,))
                             for ep, _, _ in ph.engines)
            at = {m.buf: m for m in q.memory}
            buffers = tuple(Buffer(i, f"b{i}", x.site, x.cb, x.page_tiles, x.capacity, x.dtype, x.space,
                                   None if x.alias_of is None else bi[x.alias_of], 0,
                                   persistent=x.persistent or last_use[(x.site.x, x.site.y, x.cb)] > k,
                                   scratch=x.scratch)
                            for i, x in enumerate(q.buffers[b] for b in bi))
            semaphores = tuple(Semaphore(i, f"sem{i}", y.sites, y.init, y.role, 0, host_init=host_initialised(y))
                               for i, y in enumerate(q.semaphores[s] for s in si))
            grps = tuple(Group(i, g.sender, g.rect, g.loopback) for i, g in enumerate(q.groups[x] for x in gi))
            ts = tuple(Tensor(tnames[local], by_name[g].shape, by_name[g].dtype, r, by_name[g].init)
                       for local, g, r in zip(ph.tensors.index, globals_, roles, strict=True))
            memory = tuple(BufferAt(i, at[b].offset, at[b].size) for i, b in enumerate(bi) if b in at)
            return Program("slice", q.target, ts, buffers, semaphores, grps,
                           tuple(Trip(knames[t], trip_max[kmap[t]]) for t in ph.trips.index), programs,
                           (SectionSpan("s0"),), memory)

        slices.append(Slice(k, (k,), (inst.name,), key, tuple(globals_), tuple(kmap[t] for t in ph.trips.index),
                            tuple(b + nb for b in ph.bufs.order()), tuple(x + ns for x in ph.sems.order()),
                            tuple(x + ng for x in ph.groups.order()), offsets, build, loose=loose,
                            handed_on=handed_on))
    uses = tuple(itertools.chain.from_iterable(by_engine))

    def leaf_of(at: tuple[int, int]) -> Leaf:
        """The leaf of instance ``k``'s copy of its template's access ``i`` as the expansion has it."""
        k, i = at
        spec, tmap, kmap, nb, offsets = made[k]
        ren = _instance_renaming(tp, k, tmap, kmap)
        _acc, engine, top, rest, op, _tensor, _write, nest = spec[i]
        off = offsets[engine]
        loops = tuple([LoopCtx((lp + off, *lrest), var, count if fixed_count else ren.count(count))
                       for lp, lrest, var, count, fixed_count in nest])
        return Leaf(engine, -1, (top + off, *rest), _access_op(op, nb, tmap, ren), loops, k)
    return Cut(tuple(slices), uses, fr, fw, leaf_of)


#: A template access as ``cut_templated`` copies it per instance: the access, its engine, its op path's top-level
#: index and the rest, its op and tensor, whether it writes, and per enclosing loop the top-level index of its path,
#: the rest, its variable, its count and whether the count is a constant.
_AccessSpec = tuple[Access, str, int, tuple[int, ...], ReadTiles | WriteTiles, str, bool,
                    tuple[tuple[int, tuple[int, ...], str, Any, bool], ...]]


def _access_specs(w: _TemplateWalk) -> list[_AccessSpec]:
    """Per access of template walk ``w``, its ``_AccessSpec`` (read once per template, not once per instance)."""
    out: list[_AccessSpec] = []
    for acc, nest in zip(w.accesses, w.loops, strict=True):
        lf = acc.leaf
        op = lf.op
        assert isinstance(op, (ReadTiles, WriteTiles))
        out.append((acc, lf.engine, lf.path[0], lf.path[1:], op, op.tensor, acc.write,
                    tuple((lc.path[0], lc.path[1:], lc.var, lc.count, type(lc.count) is int) for lc in nest)))
    return out


#: A template access an instance copies into ``Cut.uses`` (``_kept_accesses``): its index, tensor, whether it writes,
#: whether it moves whole pages, whether it sits under an ``If``, its ``_tiles``, its engine and the engine's rank
#: in participant order, and its op path's top-level index and the rest.
_KeptAccess = tuple[int, str, bool, bool, bool, Any, str, int, int, tuple[int, ...]]


def _kept_accesses(spec: list[_AccessSpec], skip: frozenset[str], listed: dict[int, frozenset[int] | None],
                   rank: dict[str, int]) -> list[_KeptAccess]:
    """The accesses of ``spec`` but the reads of a tensor in ``skip`` (an input or a param of the instance), as
    ``cut_templated`` copies them. ``listed`` memoizes each access's ``_tiles`` per template: every instance's copy
    touches the tiles its template access touches, of its own tensor (the same address, tile count, guard and loop
    counts; a trip count stays a trip: unlisted either way)."""
    out: list[_KeptAccess] = []
    for i, (acc, engine, top, rest, op, tensor, write, _nest) in enumerate(spec):
        if not write and tensor in skip:
            continue
        got = listed.get(i, _UNLISTED)
        if got is _UNLISTED:
            got = listed[i] = _tiles(acc)
        out.append((i, tensor, write, op.part is None, acc.guarded, got, engine, rank[engine], top, rest))
    return out


def _access_op(op: Op, nb: int, tmap: dict[str, str], ren: Renaming) -> Op:
    """A template's ``ReadTiles`` / ``WriteTiles`` as the expansion has it (``TemplatedProgram.instance_ops``): its
    tensor renamed, its buffer shifted by ``nb``; an indirect address through ``ren`` and ``dynamic_renamed``."""
    if type(op) is ReadTiles and op.addr.dynamic is None:
        return ReadTiles(tmap[op.tensor], op.addr, op.tiles, op.into + nb, op.part)
    if type(op) is WriteTiles and op.addr.dynamic is None:
        return WriteTiles(op.src + nb, tmap[op.tensor], op.addr, op.tiles, op.part)
    return dynamic_renamed(ren.op(op), tmap)


def _instance_renaming(tp: TemplatedProgram, k: int, tmap: dict[str, str], kmap: dict[str, str]) -> Renaming:
    b, s, g = tp.shifts[k]
    return Renaming(buffer=lambda x: x + b, semaphore=lambda x: x + s, group=lambda x: x + g,
                    tensor=tmap.__getitem__, trip=kmap.__getitem__)


class _Walker:
    """One pass over a phase's ops of an engine: ids numbered in order of first appearance (checked to belong to
    the phase), canonical tokens (the op with ids renumbered, every other field verbatim), tensor accesses with
    their composed op paths."""

    def __init__(self, p: Program, phases: list[int], rendezvous_sems: set[int], accesses: list[Access]) -> None:
        self.p = p
        self.buffer_phase = [phases[b.section] for b in p.buffers]
        self.sem_phase = [None if s.section is None else phases[s.section] for s in p.semaphores]
        self.rendezvous = rendezvous_sems
        self.accesses = accesses

    def run(self, ep: EngineProgram, lo: int, hi: int, j: int, bd: list[tuple[int, int]], first: int,
            ph: _Phase) -> None:
        """Walk top-level ops ``lo..hi`` of ``ep`` (phase ``j``, whose first section is ``first``)."""
        section = first
        path: list[int] = [0]
        for t in range(lo, hi):
            while bd[section][1] <= t and section + 1 < len(bd):
                section += 1
            path[0] = t
            self._visit(ep, ep.ops[t], path, (), False, section, j, ph)

    def _bad(self, ep: EngineProgram, path: list[int], what: str) -> _BadCut:
        return _BadCut(f"{ep.key} at {path} {what}")

    def _visit(self, ep: EngineProgram, op: Op, path: list[int], loops: tuple[LoopCtx, ...], guarded: bool,
               section: int, j: int, ph: _Phase) -> None:
        cls = type(op)
        toks = ph.tokens
        if cls is Loop or cls is If:
            assert isinstance(op, (Loop, If))
            if isinstance(op, Loop):
                c = op.count
                count: Any = c if isinstance(c, int) else ("k", ph.trips(c)) if isinstance(c, str) else (
                    "k", ph.trips(c.trip), c.scale, c.offset)
                toks.append(("L", op.var, count))
                inner = (*loops, LoopCtx(tuple(path), op.var, op.count))
            else:
                toks.append(("I", op.var, op.when.value))
                inner, guarded = loops, True
            path.append(0)
            for i, o in enumerate(op.body):
                path[-1] = i
                self._visit(ep, o, path, inner, guarded, section, j, ph)
            path.pop()
            toks.append(")")
            return
        vals: list[Any] = [cls.__name__]
        for name, kind in _FIELDS[cls]:
            v = getattr(op, name)
            if cls is SemSet and name == "terms" and not v:
                continue  # in the key only when there are any: keys of programs from before the field are unchanged
            if name == "part" and v is None:
                continue  # in the key only when set: keys of whole-tile transfers are what they were
            if kind is None or v is None:
                if isinstance(v, Addr) and v.dynamic is not None and v.dynamic.buf is not None:
                    v = attrs.evolve(v, dynamic=attrs.evolve(v.dynamic, buf=None))  # its renamed id is added below
                vals.append(v)
            elif kind == ID_BUFFER:
                if not 0 <= v < len(self.buffer_phase) or self.buffer_phase[v] != j:
                    raise self._bad(ep, path, f"uses buffer {v} outside its phase")
                vals.append(ph.bufs(v))
            elif kind == ID_SEMAPHORE:
                if v in self.rendezvous:
                    raise self._bad(ep, path, f"uses rendezvous word {v} in a section's work")
                if not 0 <= v < len(self.sem_phase) or self.sem_phase[v] != j:
                    raise self._bad(ep, path, f"uses semaphore {v} outside its phase")
                vals.append(ph.sems(v))
            elif kind == ID_GROUP:
                vals.append(ph.groups(v))
            elif kind == ID_TENSOR:
                vals.append(ph.tensors(v))
            elif kind == ID_OPERANDS:
                out = []
                for o in v:
                    if not 0 <= o.buf < len(self.buffer_phase) or self.buffer_phase[o.buf] != j:
                        raise self._bad(ep, path, f"uses buffer {o.buf} outside its phase")
                    # An Operand's page count, or an InPlace's index (page and loop terms).
                    out.append((ph.bufs(o.buf), o.pages) if isinstance(o, Operand)
                               else (ph.bufs(o.buf), o.page, tuple((t.var, t.coef) for t in o.terms)))
                vals.append(tuple(out))
            elif kind == ID_SITE:
                vals.append((v.x, v.y))
            else:  # pragma: no cover - a new id kind must be handled here (fail closed)
                raise TypeError(f"{cls.__name__}.{name}: id kind {kind!r} is not canonicalised")
        if isinstance(op, (ReadTiles, WriteTiles)):
            dyn = op.addr.dynamic
            if dyn is not None and dyn.buf is not None:
                # The index buffer, held inside the address: in the phase, renamed in the slice and its key.
                if not 0 <= dyn.buf < len(self.buffer_phase) or self.buffer_phase[dyn.buf] != j:
                    raise self._bad(ep, path, f"reads its index from buffer {dyn.buf} outside its phase")
                vals.append(("index", ph.bufs(dyn.buf)))
        toks.append(tuple(vals))
        if cls is ReadTiles or cls is WriteTiles:
            self.accesses.append(Access(Leaf(ep.key, -1, tuple(path), op, loops, section), j, guarded))


# ---------------------------------------------------------------------------------------------- name mapping


_TOKEN = re.compile(r"%t(\d+)|%k(\d+)|(?<![\w%])b(\d+)(?!\d)|(?<![\w%])sem(\d+)(?!\d)|(?<![\w%])g(\d+)(?!\d)"
                    r"|(\(\d+,\d+\)\.(?:reader|compute|writer))(:?)\[(\d+)|\.phase0(?!\d)")


Piece = str | tuple[str, Any]


@functools.lru_cache(maxsize=1 << 16)
def pieces(text: str) -> tuple[Piece, ...]:
    """``text`` of a slice cut at its slice-local names (``_TOKEN``): literal strings and ``(kind, value)`` pairs that
    ``render`` fills in for one slice. Compiled once per canonical text, rendered once per slice (a text: a pure
    function of it, kept for the next slice that renders the same text, e.g. every layer's slot-reuse reasons)."""
    out: list[Piece] = []
    at = 0
    for m in _TOKEN.finditer(text):
        if m.start() > at:
            out.append(text[at:m.start()])
        t, k, b, s, g, eng, sep, top = m.groups()
        if t is not None:
            out.append(("t", int(t)))
        elif k is not None:
            out.append(("k", int(k)))
        elif b is not None:
            out.append(("b", int(b)))
        elif s is not None:
            out.append(("s", int(s)))
        elif g is not None:
            out.append(("g", int(g)))
        elif eng is not None:
            out.append(("path", (eng + sep, int(top))))
        else:
            out.append(("phase", 0))
        at = m.end()
    if at < len(text):
        out.append(text[at:])
    return tuple(out)


def render(ps: tuple[Piece, ...], sl: Slice, paths: bool = True) -> str:
    """Text of slice ``sl`` in the composed program's names: ``%t<i>``/``%k<i>`` -> tensor/trip names, ``b<i>``,
    ``sem<i>``, ``g<i>`` -> composed ids, the slice's one phase ``.phase0`` -> ``.phase<j>`` and, with ``paths``,
    leaf references ``engine[i, ...]`` -> composed op paths (the top-level index shifted by the engine's offset)."""
    out: list[str] = []
    for x in ps:
        if isinstance(x, str):
            out.append(x)
            continue
        kind, v = x
        if kind == "t":
            out.append(sl.tensors[v])
        elif kind == "k":
            out.append(sl.trips[v])
        elif kind == "b":
            out.append(f"b{sl.buffers[v]}" if v < len(sl.buffers) else f"b{v}")
        elif kind == "s":
            out.append(f"sem{sl.semaphores[v]}" if v < len(sl.semaphores) else f"sem{v}")
        elif kind == "g":
            out.append(f"g{sl.groups[v]}" if v < len(sl.groups) else f"g{v}")
        elif kind == "phase":
            out.append(f".phase{sl.index}")
        else:
            eng, top = v
            off = sl.offsets.get(eng.rstrip(":")) if paths else None
            out.append(f"{eng}[{top if off is None else top + off}")
    return "".join(out)


def demangler(sl: Slice, paths: bool) -> Callable[[str], str]:
    """``render`` of any text of slice ``sl`` (compiled on the fly)."""
    return lambda text: render(pieces(text), sl, paths) if text else text


def _map_json(x: Any, dm: Callable[[str], str], offsets: dict[str, int] | None = None) -> Any:
    """``x`` (a counterexample) in the composed program's names: every string through ``dm``; with ``offsets``, every
    position (a dict naming an ``engine`` and an op ``path``) shifted to the composed op path (its top-level index
    plus the engine's offset)."""
    if isinstance(x, str):
        return dm(x)
    if isinstance(x, list):
        return [_map_json(v, dm, offsets) for v in x]
    if isinstance(x, dict):
        out = {k: _map_json(v, dm, offsets) for k, v in x.items()}
        eng, path = x.get("engine"), x.get("path")
        if (offsets is not None and isinstance(eng, str) and eng in offsets and isinstance(path, list) and path
                and all(isinstance(i, int) for i in path)):
            out["path"] = [path[0] + offsets[eng], *path[1:]]
        return out
    return x


# -------------------------------------------------------------------------------------------- certification


def _assumed(name: str, what: str, needs: list[str], verdicts: Mapping[str, Verdict], family: str, reason: str,
             t0: float) -> Result:
    """PROVED with ``reason`` when every obligation in ``needs`` is proved (``verdicts``: by name), else FAILED naming
    the first that is not (per-obligation soundness: a proof resting on an unproved assumption is no proof)."""
    proved = Verdict.PROVED
    missing = [n for n in needs if verdicts.get(n) is not proved]
    shown = ", ".join(needs[:6]) + (f" (+{len(needs) - 6} more)" if len(needs) > 6 else "")
    if missing:
        got = verdicts.get(missing[0])
        state = got.value if got is not None else "missing"
        return Result(family, name, Verdict.FAILED,
                      f"{what}: rests on {missing[0]}, which is {state}"
                      + (f" ({len(missing) - 1} more assumption(s) not proved)" if len(missing) > 1 else ""),
                      seconds=time.perf_counter() - t0)
    return Result(family, name, Verdict.PROVED, f"{reason} (assumes {shown})", seconds=time.perf_counter() - t0)


@contextlib.contextmanager
def collection(enabled: bool) -> Iterator[None]:
    """The cyclic garbage collector on (``enabled``) or paused for the block, then as it was. Paused while a composed
    program's slices are mapped and its cross-phase obligations built: hundreds of thousands of results and
    accesses, none in a cycle, whose allocations would otherwise set off collections that walk them all again
    (a third of an 80-layer step's cut). On again while a slice is certified (the solver's objects)."""
    was = gc.isenabled()
    freezing = enabled and bool(_FREEZING) and _FREEZING[-1]
    if enabled:
        if freezing:
            # Garbage made while the collector was paused (a slot-reuse query's solver objects) is young: collected
            # here, over the young objects only, before the freeze would keep it.
            gc.collect(0)
            gc.freeze()
        gc.enable()
    else:
        gc.disable()
    try:
        yield
    finally:
        if freezing:
            # The block's cyclic garbage (the solver's objects: Z3 contexts and terms in cycles), collected now over
            # the objects made since the freeze only, before the next freeze would keep it to the end (1.5 GB of a
            # 16-layer step's certify without this, 360 MB with it).
            gc.collect()
        if was:
            gc.enable()
        else:
            gc.disable()


#: Whether ``collection(True)`` freezes the heap first (inside ``frozen_heap``, when it owns the freeze).
_FREEZING: list[bool] = []


def keep_made() -> None:
    """Inside a ``frozen_heap`` that owns the freeze, with the collector paused: the objects made since the last
    freeze (a composed program's mapped results, hundreds of thousands) frozen too, so turning the collector on
    again does not walk them all in a young collection at once (0.15 s of an 80-layer step's certify). The block's
    end (``gc.unfreeze``) hands them to the oldest generation, where any cyclic garbage among them is found by
    the next full collection as ever: nothing is kept longer than the block."""
    if _FREEZING and _FREEZING[-1] and not gc.isenabled():
        gc.freeze()


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Within the block, every ``collection(True)`` first moves the objects alive then out of the collector's
    generations (``gc.freeze``): a slice is certified with the collector on, and each collection it set off walked
    again every result, access and slice program of the slices before it, all alive, none garbage (the objects made
    while it was paused are all young, so the first collections walked each of them up to three times; 0.9 s of the
    80-layer step's certify, 0.5 s of the 16-layer step's). Objects freed by their reference count are freed as
    ever; cyclic garbage is never frozen: each ``collection(True)`` collects the young objects (what was made while
    the collector was paused) before it freezes and the objects made since the freeze when it ends; the block ends
    with ``gc.unfreeze``. A caller that froze objects of its own
    (``gc.get_freeze_count()``) is left alone: no freeze and no unfreeze here."""
    owner = not _FREEZING and gc.get_freeze_count() == 0
    _FREEZING.append(owner or (bool(_FREEZING) and _FREEZING[-1]))
    try:
        yield
    finally:
        _FREEZING.pop()
        if owner:
            gc.unfreeze()


def certify_composed(p: Program | TemplatedProgram, rv: Rendezvous, c: Cut, certify: Certify, *, jobs: int = 1,
                     progress: Progress | None = None, rlimit: int = DEFAULT_RLIMIT,
                     cache: ProofMemo | bool = True, pool: Pool | None = None) -> Sequence[Result]:
    """Every obligation of the composed program ``p``: its slices' (certified once per class of equal slices when
    ``cache`` is not False) and the cross-phase ones (module docstring), in order; a reused slice's results held as
    its source's columns (``report.Parts``). ``certify`` is the kernel's ``check`` (a top-level function, so worker
    processes of ``pool`` can run it); without ``pool`` the slices run here."""
    with collection(False), frozen_heap():
        out = _certify_composed(p, rv, c, certify, jobs, progress, rlimit, cache, pool)
        keep_made()
        return out


def _certify_composed(p: Program | TemplatedProgram, rv: Rendezvous, c: Cut, certify: Certify, jobs: int,
                      progress: Progress | None, rlimit: int, cache: ProofMemo | bool,
                      pool: Pool | None) -> Sequence[Result]:
    say = progress or (lambda _m: None)
    reuse = cache is not False
    pc = (ProofMemo() if cache else None) if isinstance(cache, bool) else cache
    n = len(c.slices)
    last = n - 1
    proved_reports: dict[str, int] = {}
    own: dict[int, Report] = {}
    parts: list[Sequence[Result] | Columns] = []
    deadlock_ok: list[bool] = []
    deadlock_proved: dict[int, bool] = {}  # id of a report in ``own`` (alive throughout) -> its deadlock proved
    exempt_cache: dict[tuple[str, tuple[int, ...]], list[Result]] = {}
    rearmed: dict[str, tuple[list[tuple[int, Site]], list[int]]] = {}
    latest = _latest_semaphore_phase(p)
    names = _Names()
    with collection(True):
        ready = _in_parallel(c, certify, pool, jobs, rlimit, reuse, say) if jobs > 1 and pool is not None else {}
    live = True  # every slice so far proved deadlock-free
    stronger: dict[str, list[int]] = {}  # loose key -> the slices of it whose report proved everything
    for sl in c.slices:
        j = sl.index
        t0 = time.perf_counter()
        src = proved_reports.get(sl.key) if reuse else None
        if src is None and reuse and j not in ready:
            src = _stronger_source(sl, stronger.get(sl.loose, ()), c.slices)
        if src is not None:
            report = own[src]
        else:
            with collection(True):
                report = ready[j] if j in ready else certify(
                    sl.program, rlimit=rlimit, cache=pc if reuse else False, compositional=False,
                    progress=lambda m, j=j, sl=sl: say(f"slice {j} of {n} ({sl.title}): {m}"))
            own[j] = report
            if reuse and report.exit_code == 0:
                proved_reports.setdefault(sl.key, j)
                if sl.loose:
                    stronger.setdefault(sl.loose, []).append(j)
        slot = _slot_reuse(p, sl, latest, rlimit, exempt_cache, rearmed)
        mapped = _map_slice(p, c, sl, report, src, c.slices[src] if src is not None else None, slot,
                            live, last, names)
        ok = deadlock_proved.get(id(report))  # per report, not per slice reusing it (1,203 slices, 12 reports)
        if ok is None:
            ok = deadlock_proved[id(report)] = all(r.verdict == Verdict.PROVED for r in report.results
                                                   if r.family == R.DEADLOCK)
        deadlock_ok.append(ok)
        live = live and deadlock_ok[-1]
        parts.append(mapped)
        bad = len(mapped) - count_of(mapped, Verdict.PROVED)
        how = (f"equal up to renaming{'' if c.slices[src].key == sl.key else ' (and handing on fewer buffers)'} to "
               f"slice {src}: {len(mapped)} obligations, proofs reused"
               if src is not None else f"{len(mapped)} obligations")
        how += f", {bad} not proved" if bad else ", all proved"
        say(f"slice {j} of {n} ({sl.title}): {how} ({time.perf_counter() - t0:.2f} s)")
    results = _balance_needs_an_end(Parts(parts), deadlock_ok)
    say("rendezvous and cross-phase obligations")
    return _refuted_by_runs(p, chain(results, cross_phase(p, rv, c, results, rlimit)))


#: The most ops a composed program may have for its failed results to be asked of the interpreter's runs of the
#: whole program (``witness.refute_by_runs``); a larger one (a decode step: 300,494 ops) keeps them failed-to-prove
#: rather than run it.
WITNESS_OPS = 20_000


def _refuted_by_runs(p: Program | TemplatedProgram, results: Sequence[Result]) -> Sequence[Result]:
    """``results`` with each failed-to-prove one that a run of the whole composed program from launch breaks
    refuted, that run its counterexample (the whole-program route's last step, ``witness.refute_by_runs``): a slice
    result re-decided for the composition (``_slot_reuse``) or failed for a reason of the composition is decided on
    no run of its own. Its name keeps its ``slice<j>/`` head; the subject after it is the composed program's. A
    templated program is left as it is (its instance names are not checked against an expansion here)."""
    if not isinstance(p, Program):  # before the scan for failed results: a templated step has hundreds of thousands
        return results
    failed = [i for i, r in enumerate(results) if r.verdict == Verdict.FAILED]
    if not failed or sum(1 for ep in p.programs for _ in walk(ep.ops)) > WITNESS_OPS:
        return results
    from verispatial.certify.reach import analyse
    from verispatial.certify.witness import refute_by_runs

    got = refute_by_runs(analyse(p), [results[i] for i in failed])
    out = list(results)
    for i, r in zip(failed, got, strict=True):
        out[i] = r
    return out


def _stronger_source(sl: Slice, proved: Iterable[int], slices: tuple[Slice, ...]) -> int | None:
    """A slice whose report proved everything and that equals ``sl`` up to renaming but for buffers it hands on and
    ``sl`` does not (equal ``loose`` keys; ``handed_on`` a superset of ``sl``'s), or None. Its proofs are ``sl``'s:
    a buffer's ``persistent`` flag changes no run of the slice program — the interpreter and every obligation read
    it only through ``Program.counters_reused``, and there only for ``balance-cb`` at the end of a run —, so every
    obligation but ``balance-cb`` is the same question of the same runs, and ``balance-cb`` of a buffer ``sl`` hands
    on is asked of both, while of one only the source hands on it is proved stronger there (the buffer ends empty in
    every run that ends) than ``sl`` asks (nothing: the launch's end resets it). Ties go to the first such slice."""
    if not sl.loose:
        return None
    for j in proved:
        mine, theirs = sl.handed_on, slices[j].handed_on
        if len(mine) == len(theirs) and all(t or not m for m, t in zip(mine, theirs, strict=True)):
            return j
    return None


def _balance_needs_an_end(results: Sequence[Result], deadlock_ok: list[bool]) -> Sequence[Result]:
    """Balance (``balance-cb``, ``balance-sem``) is a rule of runs that end (docs/semantics.md: checked at
    termination). A slice's balance refutation ends the slice's run, but the composed run ends only if every later
    slice ends too: it stands for the composition only when every later slice is proved deadlock-free, and fails to
    prove otherwise (the later slice's deadlock is reported on its own)."""
    if Verdict.REFUTED not in verdict_set(results):
        return results  # nothing refuted, nothing changes (a proved step's 377,074 results, read off their columns)
    out: list[Result] = []
    for r in results:
        if r.family != "balance" or r.verdict != Verdict.REFUTED:  # only a balance refutation changes: parse no other
            out.append(r)
            continue
        sl = obligation.parse(r.name).slice
        j = -1 if sl is None else sl
        if j >= 0 and not all(deadlock_ok[j + 1:]):
            later = next(k for k in range(j + 1, len(deadlock_ok)) if not deadlock_ok[k])
            r = Result(r.family, r.name, Verdict.FAILED,
                       f"refuted in slice {j} as a standalone program ({r.reason}), but slice {later} is not proved "
                       "deadlock-free, so the composed run may never end (balance is checked at the end of a run)",
                       r.counterexample, r.seconds)
        out.append(r)
    return out


def _in_parallel(c: Cut, certify: Certify, pool: Pool, jobs: int, rlimit: int, reuse: bool,
                 say: Progress) -> dict[int, Report]:
    """The reports of the first slice of every key (of every slice without ``reuse``), certified in ``jobs`` worker
    processes. A slice equal to one whose report did not prove everything is certified again afterwards."""
    from concurrent.futures import as_completed

    todo: list[Slice] = []
    seen: set[str] = set()
    for sl in c.slices:
        if not reuse or sl.key not in seen:
            todo.append(sl)
            seen.add(sl.key)
    out: dict[int, Report] = {}
    with pool(min(jobs, len(todo))) as workers:  # one worker per slice at most: a forked pool starts them all
        # ``certify`` is the kernel's top-level function, so it can be sent to a worker process.
        futures = {workers.submit(certify, sl.program, rlimit=rlimit, cache=reuse, compositional=False): sl
                   for sl in todo}
        for fut in as_completed(futures):
            sl = futures[fut]
            out[sl.index] = fut.result()
            say(f"slice {sl.index} ({sl.title}) certified ({len(out)} of {len(todo)} distinct)")
    return out


def _latest_semaphore_phase(p: Program | TemplatedProgram) -> dict[Site, int]:
    """Per site, the latest phase with a section semaphore word there (``Program.rearmed_words``' slot rule)."""
    if isinstance(p, TemplatedProgram):  # every semaphore of a template is its instance's, one phase per instance
        latest: dict[Site, int] = {}
        for k, inst in enumerate(p.instances):
            for y in p.templates[inst.template].semaphores:
                for site in y.sites:
                    latest[site] = k
        return latest
    phases = p.phase_of_section()
    out: dict[Site, int] = {}
    for s in p.semaphores:
        if s.section is not None:
            for site in s.sites:
                out[site] = max(out.get(site, 0), phases[s.section])
    return out


def _slot_reuse(p: Program | TemplatedProgram, sl: Slice, latest: dict[Site, int], rlimit: int,
                memo: dict[tuple[str, tuple[int, ...]], list[Result]],
                rearmed: dict[str, tuple[list[tuple[int, Site]], list[int]]] | None = None) -> list[Result]:
    """``balance-sem`` of the slice's words that the slice alone would exempt — as re-armed, as written by the
    host at launch (``Program.host_initialized_words``) or as a mailbox (``Program.mailbox_words``) — but the
    composition does not (a later phase may take their
    semaphore slot with no host write between, ``Program.slot_reused_words``): decided without the exemption.
    ``rearmed`` memoizes per key the slice programs' re-armed words in (semaphore, site) order with the latest
    phase of a section semaphore word on each one's site (equal keys: equal programs, same sites), so a slice equal
    to an earlier one is never built; ``memo`` the results per key and set of words lost (their positions there)."""
    got_words = rearmed.get(sl.key) if rearmed is not None else None
    if got_words is None:
        # a slice is one phase, the last of its own program: neither exemption sees the phases after it
        exempt = sl.program.rearmed_words() | sl.program.host_initialized_words() | sl.program.mailbox_words()
        words = sorted(exempt, key=lambda w: (w[0], w[1].y, w[1].x))
        got_words = (words, [latest.get(site, -1) for _, site in words])
        if rearmed is not None:
            rearmed[sl.key] = got_words
    words, last = got_words
    at = tuple([i for i, phase in enumerate(last) if phase > sl.index])
    if not at:
        return []
    got = memo.get((sl.key, at))
    if got is None:
        lost = [words[i] for i in at]
        from verispatial.certify.reach import analyse
        from verispatial.families.semaphores.encoding import _sem_balance

        a = analyse(sl.program)
        got = []
        for w in lost:
            if w not in a.words or a.words[w].kind == "unused":
                continue  # no op uses it: it ends where it starts, and the slice reports no balance of it
            r = _sem_balance(a, a.words[w], False, rlimit)
            got.append(attrs.evolve(r, reason=f"{r.reason} (no re-armed or host-write exemption: a later phase may "
                                                f"take this word's semaphore slot and would start from its final value)"))
        memo[(sl.key, at)] = got
    return got


class _Names:
    """Result names of the certified slice reports, compiled once (``pieces``), and the names they were given in
    the slice each report was certified for (what a reused result names as its source); the program's tensor
    roles, once."""

    def __init__(self) -> None:
        self.pieces: dict[int, list[tuple[Piece, ...]]] = {}
        self.source: dict[int, list[str]] = {}
        self._compiled: dict[int, _Compiled] = {}
        self._reasons: dict[tuple[int, bool], list[str]] = {}
        #: per report (by id: each is held alive by ``_certify_composed`` throughout), ``columns``
        self._columns: dict[int, tuple[list[str], list[Verdict], Counter[tuple[str, Verdict]]]] = {}
        self._roles: dict[str, Role] | None = None
        self._kept: dict[tuple[int, tuple[str, ...]], _Rows] = {}
        self._reasons_kept: dict[tuple[int, int], list[str]] = {}
        self._kept_rows: dict[tuple[int, int], dict[str, list[tuple[int, int]]]] = {}

    def roles(self, p: Program | TemplatedProgram) -> dict[str, Role]:
        if self._roles is None:
            self._roles = {t.name: t.role for t in p.tensors}
        return self._roles

    def of(self, j: int, report: Report) -> list[tuple[Piece, ...]]:
        got = self.pieces.get(j)
        if got is None:
            got = self.pieces[j] = [pieces(r.name) for r in report.results]
        return got

    def source_names(self, src: Slice, report: Report) -> list[str]:
        got = self.source.get(src.index)
        if got is None:
            got = self.source[src.index] = [render(ps, src) for ps in self.of(src.index, report)]
        return got

    def columns(self, report: Report) -> tuple[list[str], list[Verdict], Counter[tuple[str, Verdict]]]:
        """The families and verdicts of ``report``'s results, in order, and the count of each (family, verdict), once
        per report (every slice reusing it shares them: ``report.Columns``)."""
        got = self._columns.get(id(report))
        if got is None:
            families, verdicts = [r.family for r in report.results], [r.verdict for r in report.results]
            got = self._columns[id(report)] = (families, verdicts, Counter(zip(families, verdicts, strict=True)))
        return got

    def kept(self, report: Report, starts: tuple[str, ...], earlier: list[str]) -> _Rows:
        """The rows of ``report`` a reused slice keeps — all but the coverage of reads of activations an earlier phase
        writes too (``starts`` / ``earlier``: ``_map_slice``'s prefixes of them, ``_covered_later``) — with their
        families, verdicts and the count of each (family, verdict); once per report and ``starts``."""
        key = (id(report), starts)
        got = self._kept.get(key)
        if got is None:
            families, verdicts, counts = self.columns(report)
            if not starts:
                got = _Rows(None, families, verdicts, counts)
            else:
                keep = [not (r.name.startswith(starts) and _covered_later(r.name, earlier)) for r in report.results]
                fams, verds = list(itertools.compress(families, keep)), list(itertools.compress(verdicts, keep))
                got = _Rows(list(itertools.compress(range(len(keep)), keep)), fams, verds,
                            Counter(zip(fams, verds, strict=True)), keep)
            self._kept[key] = got
        return got

    def kept_rows(self, report: Report, rows: _Rows) -> dict[str, list[tuple[int, int]]]:
        """Per result name of ``report``, the rows ``rows`` keeps of it: (kept row, its index in ``report``); once per
        report and ``rows`` (a slot-reuse result replaces a row by its name: looked up, not scanned for, in each of
        the hundreds of slices reusing one report)."""
        key = (id(report), id(rows))
        got = self._kept_rows.get(key)
        if got is None:
            got = self._kept_rows[key] = {}
            for x, i in enumerate(range(len(report.results)) if rows.kept is None else rows.kept):
                got.setdefault(report.results[i].name, []).append((x, i))
        return got

    def reused_columns(self, report: Report, rows: _Rows, reasons: list[str], name_of: Callable[[int], str],
                       names: Callable[[], list[str]], overrides: dict[int, Result] | None = None) -> Columns:
        """A reused slice's ``Columns``: the ``rows`` it keeps of its source's ``report``, each with its reason in
        ``reasons`` (one per result of ``report``), its name ``name_of(i)`` of the source's row ``i`` (``names()``:
        all of them), and ``overrides`` (by kept row) for the results a slot-reuse result replaces."""
        kept = rows.kept
        if kept is None:
            reas, name_at, all_names = reasons, name_of, names
        else:
            rkey = (id(reasons), id(rows))
            reas = self._reasons_kept.get(rkey)  # type: ignore[assignment]
            if reas is None:
                reas = self._reasons_kept[rkey] = list(itertools.compress(reasons, rows.mask))
            name_at = functools.partial(_name_of_kept, name_of, kept)
            all_names = functools.partial(_names_kept, names, rows.mask)
        if not overrides:
            return Columns(rows.families, rows.verdicts, reas, rows.counts, name_at, all_names)
        fams, verds = list(rows.families), list(rows.verdicts)
        for x, r in overrides.items():
            fams[x], verds[x] = r.family, r.verdict
        plain = [x not in overrides for x in range(len(fams))]
        counts = Counter(zip(itertools.compress(fams, plain), itertools.compress(verds, plain), strict=True))
        return Columns(fams, verds, reas, counts, name_at, all_names, overrides)

    def compiled(self, j: int, report: Report) -> _Compiled:
        """The result names of slice ``j``'s report compiled for rendering (``_Compiled``), once."""
        got = self._compiled.get(j)
        if got is None:
            got = self._compiled[j] = _Compiled(self.of(j, report))
        return got

    def reused_reasons(self, src: Slice, report: Report, stronger: bool = False) -> list[str]:
        """Per result of ``src``'s report, the reason a slice equal to ``src`` gives for reusing its proof (the same
        text for every such slice: equal keys), built once and shared. ``stronger``: the slice hands on fewer
        buffers than ``src`` (``_stronger_source``)."""
        got = self._reasons.get((src.index, stronger))
        if got is None:
            how = "equal up to renaming" + (" but for buffers only it hands on, whose balance it proves stronger"
                                            if stronger else "")
            tail = f" of slice {src.index} ({src.title}) ({how}; canonical form {src.key[:12]})"
            got = self._reasons[(src.index, stronger)] = [f"proved as slice{src.index}/{n}{tail}"
                                                          for n in self.source_names(src, report)]
        return got


class _Rows(NamedTuple):
    """The rows of a report a reused slice keeps (``_Names.kept``): ``kept`` their indices in the report (None: all
    of them), their ``families`` and ``verdicts``, the ``counts`` of each (family, verdict) and ``mask``, per row of
    the report whether it is kept (empty when all are)."""

    kept: list[int] | None
    families: list[str]
    verdicts: list[Verdict]
    counts: Counter[tuple[str, Verdict]]
    mask: list[bool] = []


def _name_of_kept(name_of: Callable[[int], str], kept: list[int], x: int) -> str:
    return name_of(kept[x])


def _names_kept(names: Callable[[], list[str]], mask: list[bool]) -> list[str]:
    return list(itertools.compress(names(), mask))


class _Compiled:
    """Names of one report compiled for rendering in any slice of its key: the distinct slice-local names they
    mention (``tokens``) and per name a ``%`` format of its literal text with a ``%s`` per mention and a getter of
    the mentions' texts. A slice renders each distinct token once (``_token_text``) and each name with one format:
    what ``render(ps, sl)`` gives, at a fraction of its cost per name (hundreds of thousands of names in an
    80-layer step)."""

    def __init__(self, names: list[tuple[Piece, ...]]) -> None:
        index: dict[tuple[str, Any], int] = {}
        self.tokens: list[tuple[str, Any]] = []
        self.forms: list[tuple[str, Callable[[Any], Any]]] = []
        for ps in names:
            fmt: list[str] = []
            at: list[int] = []
            for x in ps:
                if isinstance(x, str):
                    fmt.append(x.replace("%", "%%"))
                    continue
                i = index.get(x)
                if i is None:
                    i = index[x] = len(self.tokens)
                    self.tokens.append(x)
                fmt.append("%s")
                at.append(i)
            # itemgetter of one index gives the text itself, which ``%`` takes as its one argument; of none, ().
            self.forms.append(("".join(fmt), operator.itemgetter(*at) if at else _no_tokens))

    def names(self, sl: Slice, head: str = "") -> list[str]:
        """Every name in slice ``sl``'s composed names (``render(ps, sl)`` of each), after ``head``."""
        return self.names_of(self.tokens_of(sl), head)

    def tokens_of(self, sl: Slice) -> _SliceTokens:
        """The text of each token in slice ``sl`` (what ``names_of`` and ``name`` take), each rendered when first
        read: ``certify -q`` of an 80-layer step reads a few names of each of its 1,203 slices (their deadlock
        obligations, ``_assumable``), each mentioning one or two of the slice's hundred tokens."""
        return _SliceTokens(self.tokens, sl)

    def names_of(self, vals: _SliceTokens, head: str) -> list[str]:
        """Every name, its tokens' texts ``vals`` (``tokens_of``), after ``head``."""
        texts = vals.texts()
        return [head + fmt % get(texts) for fmt, get in self.forms]

    def name(self, vals: _SliceTokens, head: str, i: int) -> str:
        """Name ``i`` of ``names_of(vals, head)`` alone."""
        fmt, get = self.forms[i]
        return head + fmt % get(vals)


class _SliceTokens:
    """The texts of a compiled report's ``tokens`` in slice ``sl`` (``_token_text``): ``[i]`` renders token ``i``
    once, when first read; ``texts()`` all of them."""

    __slots__ = ("_sl", "_texts", "_tokens")

    def __init__(self, tokens: list[tuple[str, Any]], sl: Slice) -> None:
        self._tokens = tokens
        self._sl = sl
        self._texts: list[str | None] = [None] * len(tokens)

    def __getitem__(self, i: int) -> str:
        got = self._texts[i]
        if got is None:
            got = self._texts[i] = _token_text(self._tokens[i], self._sl)
        return got

    def texts(self) -> list[str]:
        """Every token's text, in order."""
        return [self[i] for i in range(len(self._tokens))]


def _no_tokens(_vals: Sequence[str] | _SliceTokens) -> tuple[()]:
    return ()


def _token_text(x: tuple[str, Any], sl: Slice) -> str:
    """One slice-local name of ``pieces`` in slice ``sl``'s composed names (as ``render`` writes it, paths shifted)."""
    kind, v = x
    if kind == "t":
        return sl.tensors[v]
    if kind == "k":
        return sl.trips[v]
    if kind == "b":
        return f"b{sl.buffers[v]}" if v < len(sl.buffers) else f"b{v}"
    if kind == "s":
        return f"sem{sl.semaphores[v]}" if v < len(sl.semaphores) else f"sem{v}"
    if kind == "g":
        return f"g{sl.groups[v]}" if v < len(sl.groups) else f"g{v}"
    if kind == "phase":
        return f".phase{sl.index}"
    eng, top = v
    off = sl.offsets.get(eng.rstrip(":"))
    return f"{eng}[{top if off is None else top + off}"


def _map_slice(p: Program | TemplatedProgram, c: Cut, sl: Slice, report: Report, src: int | None, src_slice: Slice | None,
               slot: list[Result], earlier_live: bool, last: int, known: _Names | None = None) -> list[Result] | Columns:
    """Slice ``sl``'s results in the composed program's names (``slice<j>/...``), with every refutation kept only
    where it is a violation of the composition too (docs/checker.md), and the slot-reuse balance results. A result
    reused from slice ``src`` says ``proved as <its name there> of slice <src> (...)``. A reused slice none of whose
    results is replaced or dropped gives them as ``Columns``: its source's families and verdicts, names rendered
    when read."""
    j = sl.index
    known = known or _Names()
    replaced = {r.name: r for r in slot}
    roles = known.roles(p)
    # Activations the slice writes that an earlier phase writes too: the slice sees only its own writes, so its
    # coverage obligation on them is replaced by the composed one (``cross_phase``) and its refutations on them
    # may be artifacts.
    earlier = [f"{R.HB_ACTIVATION}:%t{i}:" for i, t in enumerate(sl.tensors)
               if roles[t] == Role.ACTIVATION and j in c.writes.get(t, ()) and min(c.writes[t]) < j]
    head = f"slice{j}/"
    compiled = known.compiled(j if src is None else src, report)
    reasons = known.reused_reasons(src_slice, report, src_slice.key != sl.key) if src_slice is not None else []
    reused = src is not None and src_slice is not None
    starts = tuple(earlier)
    tokens = compiled.tokens_of(sl)
    name_of = functools.partial(compiled.name, tokens, head)
    dm = demangler(sl, True)

    def mapped(i: int, r: Result) -> Result:
        """Result ``r`` (slice result ``i``, or the slot-reuse result replacing it) in the composed names."""
        name = name_of(i)
        reason = dm(r.reason)
        verdict, cex = r.verdict, r.counterexample
        if cex is not None:
            cex = {**_map_json(cex, dm, sl.offsets), "slice": {
                "index": j, "sections": list(sl.names), "top_offset": sl.offsets,
                "replayed_on": "the slice program (positions shifted to the composed op paths by top_offset)"}}
        if verdict == Verdict.REFUTED:
            why = ""
            if not earlier_live:
                why = "an earlier slice is not proved deadlock-free, so this slice's start may be unreachable"
            elif obligation.parse(r.name).kind == R.ASYNC_PENDING_AT_END and j < last:
                why = ("in the composition the engine goes on to the rendezvous, so outstanding NoC transactions at "
                       "the end of the phase are no violation there; the cross-phase orderings assume there are none")
            elif starts and r.name.startswith(starts):
                why = "the tensor is also written by an earlier phase, whose writes the slice does not model"
            if why:
                verdict, reason = Verdict.FAILED, f"refuted in slice {j} as a standalone program ({reason}), but {why}"
        return Result(r.family, name, verdict, reason, cex, r.seconds, unreplayed=r.unreplayed)

    # A result is dropped when it is the coverage of a read of an activation an earlier phase writes too (decided
    # over the writes of every phase up to this one instead, ``cross_phase``); a reused one (most of an 80-layer
    # step's 377,074 results) is the source slice's proof under this slice's name, unless a slot-reuse result
    # replaces it: kept as the source's columns (``report.Columns``), the names rendered and the objects built when
    # something reads them.
    if reused:
        rows = known.kept(report, starts, earlier)
        if not replaced:
            return known.reused_columns(report, rows, reasons, name_of, functools.partial(compiled.names_of, tokens, head))
        at = known.kept_rows(report, rows)
        overrides = dict(sorted((x, mapped(i, got)) for name, got in replaced.items() for x, i in at.get(name, ())))
        return known.reused_columns(report, rows, reasons, name_of, functools.partial(compiled.names_of, tokens, head),
                                    overrides)
    return [mapped(i, replaced.get(r.name, r)) for i, r in enumerate(report.results)
            if not (starts and r.name.startswith(starts) and _covered_later(r.name, earlier))]


def _covered_later(name: str, earlier: list[str]) -> bool:
    """Whether slice result ``name`` is the coverage of a read of an activation an earlier phase writes too (its
    first prefix in ``earlier``, with no ``<`` after it): ``cross_phase`` decides it over every phase's writes."""
    hit = next((e for e in earlier if name.startswith(e)), None)
    return hit is not None and "<" not in name[len(hit):]


# ------------------------------------------------------------------------------------------ cross-phase


#: Tile occurrences an exact coverage check may enumerate per tensor before it asks Z3 instead.
ENUMERATE_LIMIT = 200_000


def _tiles(acc: Access) -> frozenset[int] | None:
    """Every tile ``acc`` touches over all its occurrences, when that is a fixed finite set small enough to list:
    constant loop counts, no indirect part, no guard (else None: the caller asks Z3). Kept per address, tile count and
    loop nest (every layer's copy of an access touches the same tiles of its own tensor)."""
    if acc.listed is not _UNLISTED:
        return acc.listed  # type: ignore[no-any-return]
    lf = acc.leaf
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    if acc.guarded or op.addr.dynamic is not None or any(not isinstance(lc.count, int) for lc in lf.loops):
        return None
    key = (op.addr, op.tiles, tuple((lc.var, lc.count) for lc in lf.loops))
    got = _TILES.get(key, _MISSING)
    if got is _MISSING:
        if len(_TILES) > _TILES_KEPT:
            _TILES.clear()
        got = _TILES[key] = _tile_list(acc)
    return got  # type: ignore[return-value]


#: ``_tiles`` by (address, tiles, loops); cleared past ``_TILES_KEPT`` entries (a bound on the memory it keeps).
_TILES: dict[tuple[Any, ...], frozenset[int] | None] = {}
_TILES_KEPT = 100_000
_MISSING = object()


def _tile_list(acc: Access) -> frozenset[int] | None:
    lf = acc.leaf
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    counts = [lc.count for lc in lf.loops]
    occurrences = 1
    for k in counts:
        assert isinstance(k, int)
        occurrences *= k
    if occurrences * op.tiles > ENUMERATE_LIMIT:
        return None
    coef: dict[str, int] = {}
    for t in op.addr.terms:
        coef[t.var] = coef.get(t.var, 0) + t.coef
    # An inner loop's variable shadows an outer one of the same name (as in the interpreter).
    var_of = {lc.var: i for i, lc in enumerate(lf.loops)}
    weights = [0] * len(lf.loops)
    for v, cf in coef.items():
        if v not in var_of:
            return None
        weights[var_of[v]] += cf
    starts = {op.addr.base}
    for k, w in zip(counts, weights, strict=True):
        assert isinstance(k, int)
        starts = {s + w * i for s in starts for i in range(k)} if k else set()
    return frozenset(s + d for s in starts for d in range(op.tiles))


class _Written:
    """Per tensor: the tiles written by the accesses of each phase (None when some write cannot be listed)."""

    def __init__(self, c: Cut) -> None:
        self.c = c
        self.by: dict[str, dict[int, list[Use]]] = {}
        for u in c.uses:
            # A part of a page writes the tile only together with others (docs/semantics.md, "Part-page
            # transfers"): coverage rests on whole writes alone, so a proof never counts a part as the tile;
            # a tile written only in parts is a candidate the interpreter must replay, else failed-to-prove.
            if u.write and u.whole:
                self.by.setdefault(u.tensor, {}).setdefault(u.phase, []).append(u)
        self._sets: dict[tuple[str, int], set[int] | None] = {}

    def writes(self, tensor: str, upto: int) -> list[Use]:
        return [a for ph, accs in sorted(self.by.get(tensor, {}).items()) if ph <= upto for a in accs]

    def leaves(self, tensor: str, upto: int) -> list[Leaf]:
        """The leaves of ``writes(tensor, upto)``."""
        return [self.c.leaf_of(u.at) for u in self.writes(tensor, upto)]

    def tiles(self, tensor: str, upto: int) -> set[int] | None:
        key = (tensor, upto)
        if key not in self._sets:
            out: set[int] | None = set()
            for a in self.writes(tensor, upto):
                got = None if a.guarded else self.c.tiles(a)
                if got is None or out is None:
                    out = None
                    break
                out |= got
            self._sets[key] = out
        return self._sets[key]


def cross_phase(p: Program | TemplatedProgram, rv: Rendezvous, c: Cut, results: Sequence[Result],
                rlimit: int) -> Sequence[Result]:
    """The obligations that cross phases: rendezvous, happens-before across each boundary, coverage of reads by
    earlier phases' writes and of whole-program outputs, the rendezvous words' balance, and deadlock freedom of
    the composition (each resting on the slices' obligations it names: of ``results``, the slices' results, only
    their deadlock and async-pending-at-end obligations are read)."""
    out: list[Result] = []
    n_parts, root = len(rv.participants), rv.participants[0]
    g, r = p.rendezvous_semaphores if isinstance(p, TemplatedProgram) else (p.semaphores[rv.gather],
                                                                             p.semaphores[rv.release])
    root_site = g.sites[0]
    for k, b in enumerate(rv.boundaries, start=1):
        out.append(Result(
            "happens-before", f"{R.RENDEZVOUS}:after-section-{b}", Verdict.PROVED,
            f"the compose rendezvous after section {b} ({p.sections[b].name}), boundary {k}: each of the {n_parts} "
            f"participants arrives once at the root {root} (sem{rv.gather}@{root_site} += 1), the root waits for "
            f">= {k}*{n_parts} arrivals and releases each of the {len(rv.sites)} sites once (sem{rv.release} += 1), "
            f"every participant waits for its site's release >= {k}, and no other op touches either word: no "
            f"participant executes an op after its release wait before every participant executed its arrival "
            f"(and all before it), and once all arrived every release wait is enabled (rendezvous lemma, "
            f"docs/checker.md)"))
    for s in (g, r):
        for site in s.sites:
            # The wording of the semaphore encoding's host_init balance (the structure shows the word only counts up).
            out.append(Result(R.Family.BALANCE.value, f"{R.BALANCE_SEM}:sem{s.id}@{site}", Verdict.PROVED,
                              f"sem{s.id}@{site} only counts up and is re-initialized by the host at launch (to "
                              f"{s.init})"))
    phases = p.phase_of_section()
    n_phases = max(phases) + 1
    close_b = {k: b for k, b in enumerate(rv.boundaries)}  # phase k closes at section b
    apae = {j: f"slice{j}/async-pending-at-end" for j in range(n_phases)}
    assumed = _assumable(results, set(apae.values()))
    known = {**assumed, **{x.name: x.verdict for x in out}}  # what the obligations below rest on, by name
    roles = {t.name: t.role for t in p.tensors}
    written = _Written(c)

    # Happens-before across each closing boundary the data of a tensor crosses.
    # The phases accessing each tensor some phase writes: the phases of its uses, which are its reads' and writes'
    # (``Cut.reads``, ``Cut.writes``: of the same accesses), not gathered again use by use.
    by_tensor = {t: c.reads.get(t, frozenset()) | ws for t, ws in c.writes.items() if ws}
    for tensor in sorted(by_tensor):
        w = sorted(c.writes[tensor])
        a = sorted(by_tensor[tensor])
        state = roles.get(tensor) == Role.STATE
        # The boundaries the data crosses: j in [w[0], a[-1]) or [a[0], w[-1]) (the others it does not cross).
        crossed = sorted(set(range(w[0], min(a[-1], n_phases - 1))) | set(range(a[0], min(w[-1], n_phases - 1))))
        for j in crossed:
            b = close_b[j]
            t0 = time.perf_counter()
            name = f"{R.HB_CROSS}:{tensor}:after-section-{b}"
            before = [x for x in a if x <= j]
            needs = [f"{R.RENDEZVOUS}:after-section-{b}", *[apae[i] for i in before]]
            out.append(_assumed(
                name, f"{tensor} across the rendezvous after section {b}", needs, known, "happens-before",
                f"{tensor} is written in phase(s) {w} and accessed in phase(s) {a}: every access of phases <= {j} "
                f"completed before its engine arrived at the rendezvous after section {b} (nothing outstanding at "
                f"the end of its slice) and every access of phases > {j} is issued after that engine's release "
                f"(rendezvous lemma): reads after writes, writes after reads and writes after writes across the "
                f"boundary are ordered" + (
                    "; for a state (per-tile versions, docs/semantics.md `tensor-race`) a read of a later phase sees "
                    "the version of the earlier phases' completed writes and a write of a later phase is issued "
                    "after the earlier phases' reads landed" if state else ""), t0))
    # Reads covered by the writes of phases up to their own.
    head, out = out, []
    coverage = _read_coverages(p, covered_reads(p, c), written, rlimit)
    # Every tile of every output of the whole program is written by some phase.
    for t in p.tensors:
        if t.role == Role.OUTPUT:
            out.append(_output_coverage(p, t, written, rlimit))
    # Resident tensors: inside usable memory, aligned, disjoint from every buffer and resident tensor of each phase
    # they are live in (the slices hold the buffers only: their memory proofs do not depend on where the resident
    # tensors of the phase sit, so equal layers stay equal slices).
    out += _resident_ranges(_shell(p))
    out += resident_disjoint(p)
    # Deadlock freedom of the whole composition.
    t0 = time.perf_counter()
    pending = set(apae.values())
    needs = [n for n in assumed if n not in pending]  # every slice's deadlock obligations (``_assumable``)
    needs += [apae[j] for j in range(n_phases)]
    needs += [f"{R.RENDEZVOUS}:after-section-{b}" for b in rv.boundaries]
    out.append(_assumed(
        f"{R.DEADLOCK}:composition", "deadlock freedom of the composition", needs, known, R.DEADLOCK,
        f"no reachable state of the composition of {n_phases} slices is a deadlock: each slice is deadlock-free "
        f"and ends with nothing in flight, the slices share no counter (every buffer and section semaphore is "
        f"used in its own phase only, checked when the program was cut) and every rendezvous is well formed "
        f"(composition theorem, docs/checker.md)", t0))
    return Parts([head, coverage, out])


def _assumable(results: Sequence[Result], names: set[str]) -> dict[str, Verdict]:
    """By name, the verdicts of the results of ``results`` a cross-phase obligation may rest on: those named in
    ``names`` (each an ``async-pending-at-end`` obligation) and every slice's deadlock obligations (the last of a
    name, as indexing every result by name keeps it). Indexing only these, and reading the names and verdicts of only
    the results of those two families, building none (``report.selected_verdicts``): an 80-layer step has 377,074
    results, 21,364 of them deadlock obligations. Raises ValueError when a name in ``names`` is not an
    ``async-pending-at-end`` obligation."""
    pending = R.rule(R.ASYNC_PENDING_AT_END).family.value
    if any(obligation.parse(n).kind != R.ASYNC_PENDING_AT_END for n in names):
        raise ValueError(f"not {R.ASYNC_PENDING_AT_END} obligations: {sorted(names)}")
    deadlock = R.DEADLOCK

    def keep(family: str, n: str) -> bool:
        return n in names or (family == deadlock and _in_a_slice(n))

    return dict(selected_verdicts(results, frozenset({deadlock, pending}), keep))


def _in_a_slice(name: str) -> bool:
    """Whether obligation ``name`` is a slice's (``slice<j>/...``; ``obligation.parse(name).slice`` is not None)."""
    head, sep, _ = name.partition("/")
    return bool(sep) and head.startswith("slice") and head[5:].isdigit()


def _shell(p: Program | TemplatedProgram) -> Program:
    """What the cross-phase queries read of a program: its tensors, trips, target, sections and resident tensors (a
    templated program's ``shell``: no engine program is built)."""
    return p.shell if isinstance(p, TemplatedProgram) else p


def _refute_on_composition(p: Program | TemplatedProgram, name: str, cex: dict[str, Any], t0: float,
                           at: list[dict[str, Any]] | None = None) -> Result:
    """A candidate violation of the composed program, refuted only if the interpreter replays it on that program
    (that rule, that engine and op; with ``at``, a violation ``confirm_rule`` matches there), else failed-to-prove."""
    path = tuple(cex["path"]) if isinstance(cex.get("path"), list) else None
    engine = cex.get("engine") if isinstance(cex.get("engine"), str) else None
    if at is not None:
        engine, path = None, None  # the violation is matched by ``at`` alone
    full = p.expand() if isinstance(p, TemplatedProgram) else p  # a replay runs the whole program
    got = confirm_rule(full, {str(cex["rule"])}, cex.get("trips") or None, engine, path, at=at)
    if got is None:
        return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.FAILED,
                      f"candidate not replayed by the interpreter: {cex['summary']}",
                      seconds=time.perf_counter() - t0, unreplayed=True)
    return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.REFUTED, str(cex["summary"]), {**cex, "replay": got},
                  time.perf_counter() - t0)


_VERDICT = operator.attrgetter("verdict")


#: The family of the cross-phase coverage obligations (an enum member's ``value`` is a property: read once).
_HB = R.Family.HAPPENS_BEFORE.value


def covered_reads(p: Program | TemplatedProgram, c: Cut) -> list[Use]:
    """The reads of ``c`` whose coverage is a cross-phase obligation (``hb-activation``), in order: of an
    activation, which some phase other than the read's own, or only a later one, writes (written in its own phase
    only, the slice's own coverage obligation decides it)."""
    # Per activation, the first phase writing it (-1: none): a read of that very phase is its slice's to decide
    # (its phase writes the tensor and no earlier one does), any other read is the composition's.
    first = {t.name: min(c.writes.get(t.name) or (-1,)) for t in p.tensors if t.role == Role.ACTIVATION}
    return [u for u in c.uses if not u.write and (f := first.get(u.tensor)) is not None and u.phase != f]


def _read_coverages(p: Program | TemplatedProgram, reads: list[Use], written: _Written, rlimit: int) -> Columns:
    """``_read_coverage`` of each of ``reads``, in order, as columns: a read whose tiles are listed and all written
    is a row whose name and reason are rendered when something reads them (an 80-layer step has 36,883 such reads,
    and ``certify -q`` reads their verdicts and counts only); any other read's result is computed now and kept as
    an override of its row. A row's seconds are 0 (the check is a set inclusion)."""
    n = len(reads)
    families = [_HB] * n
    verdicts = [Verdict.PROVED] * n
    tiles: list[int] = [0] * n
    overrides: dict[int, Result] = {}
    have_of = written.tiles
    need_of = written.c.tiles
    for i, u in enumerate(reads):
        have = have_of(u.tensor, u.phase)
        need = u.tiles if u.tiles is not _UNLISTED else need_of(u)
        if have is not None and need is not None and need <= have:
            tiles[i] = len(need)
            continue
        r = overrides[i] = _read_coverage(p, u, written, rlimit)
        families[i], verdicts[i] = r.family, r.verdict

    def name_at(i: int) -> str:
        u = reads[i]
        return f"{R.HB_ACTIVATION}:{u.tensor}:{u.engine}{list(u.path)}"

    def reason_at(i: int) -> str:
        u = reads[i]
        return (f"every tile {u.engine} reads of {u.tensor} in phase {u.phase} is written by phases <= {u.phase} "
                f"(exact: {tiles[i]} tiles listed)")

    counts = Counter({(_HB, Verdict.PROVED): n - len(overrides)}) if n > len(overrides) else Counter()
    return Columns(families, verdicts, Rendered(n, reason_at), counts, name_at,
                   lambda: [name_at(i) for i in range(n)], overrides)


def _read_coverage(p: Program | TemplatedProgram, u: Use, written: _Written, rlimit: int) -> Result:
    """``hb-activation:<T>:<read>``: every tile the read ``u`` (of phase j) takes is written by a write of a phase
    <= j (writes of later phases excluded: they are issued after the read, by the rendezvous lemma)."""
    t0 = time.perf_counter()
    tensor, engine, path = u.tensor, u.engine, list(u.path)
    name = f"{R.HB_ACTIVATION}:{tensor}:{engine}{path}"
    have = written.tiles(tensor, u.phase)
    need = written.c.tiles(u)
    if have is not None and need is not None:
        miss = [] if need <= have else sorted(need - have)
        if not miss:
            return timed_result(_HB, name, Verdict.PROVED,
                                f"every tile {engine} reads of {tensor} in phase {u.phase} is written by phases <= "
                                f"{u.phase} (exact: {len(need)} tiles listed)", time.perf_counter() - t0)
        cex = {"kind": "race", "rule": R.TENSOR_RACE, "engine": engine, "path": path, "tile": miss[0],
               "summary": f"{engine} reads {tensor} tile {miss[0]} at {path} (phase {u.phase}), "
                          f"which no write of a phase <= {u.phase} writes"}
        return _refute_on_composition(p, name, cex, t0)
    if u.guarded or any(x.guarded for x in written.writes(tensor, u.phase)):
        return Result(_HB, name, Verdict.FAILED, "an access under an if: coverage is not decided",
                      seconds=time.perf_counter() - t0)
    r = _coverage(_shell(p), tensor, written.c.leaf_of(u.at), written.leaves(tensor, u.phase), rlimit)
    if r.verdict == Verdict.REFUTED and r.counterexample is not None:
        return _refute_on_composition(p, name, r.counterexample, t0)
    return attrs.evolve(r, name=name, reason=r.reason + f" (writes of phases <= {u.phase})")


def _output_coverage(p: Program | TemplatedProgram, t: Tensor, written: _Written, rlimit: int) -> Result:
    """``output-unwritten:<T>``: every tile of output ``T`` is written by some write of some phase."""
    t0 = time.perf_counter()
    name = f"{R.OUTPUT_UNWRITTEN}:{t.name}"
    ntiles = t.tiles(p.target.tile)
    last = 1 << 30
    have = written.tiles(t.name, last)
    if have is not None:
        # Count the tiles written (bounded by the writes), never walk the tensor: it may hold 2**32 tiles.
        unwritten = ntiles - len({x for x in have if 0 <= x < ntiles})
        if not unwritten:
            return Result(R.Family.HAPPENS_BEFORE.value, name, Verdict.PROVED,
                          f"every one of the {ntiles} tiles of output {t.name} is written (exact)",
                          seconds=time.perf_counter() - t0)
        first = next(x for x in range(ntiles) if x not in have)  # at most len(have) + 1 steps
        if isinstance(p, TemplatedProgram):
            where = f"{p.participants[0][0]}.{p.participants[0][1].value}" if p.participants else ""
        else:
            where = p.programs[0].key if p.programs else ""
        engine = next((x.engine for x in written.writes(t.name, last)), where)
        cex = {"kind": "rule", "rule": R.OUTPUT_UNWRITTEN, "engine": engine, "path": None, "tile": first,
               "summary": f"output {t.name} tile {first} is written by no write of it ({unwritten} tiles "
                          f"unwritten)"}
        return _refute_on_composition(p, name, cex, t0, at=[{"subject": TensorRef(t.name)}])
    r = attrs.evolve(_output_coverage_query(_shell(p), t, written.leaves(t.name, last), rlimit),
                     name=name)
    if r.verdict == Verdict.REFUTED and r.counterexample is not None:
        return _refute_on_composition(p, name, r.counterexample, t0, at=[{"subject": TensorRef(t.name)}])
    return r


def _local_buffers(p: Program | TemplatedProgram, phases: list[int],
                   wanted: Container[tuple[int, int, int]] | None = None,
                   ) -> Iterable[tuple[tuple[int, int, int], int, str, int, BufferAt]]:
    """Every buffer in local memory with a memory-map entry, in id order within each (site, phase): its (site row,
    site column, phase), id, name, the id of its alias root and its memory entry (a templated program's from its
    templates, as ``expand`` names and numbers them, instance by instance and site by site). With ``wanted``, only
    those whose (row, column, phase) it holds (a templated program's instances are then read per site, never
    buffer by buffer)."""
    if isinstance(p, TemplatedProgram):
        by_site: dict[int, dict[tuple[int, int], list[tuple[Buffer, BufferAt]]]] = {}
        for k, inst in enumerate(p.instances):
            sites = by_site.get(inst.template)
            if sites is None:
                t = p.templates[inst.template]
                at = {m.buf: m for m in t.memory}
                sites = by_site[inst.template] = {}
                for b in t.buffers:
                    if b.space == Space.LOCAL and b.id in at:
                        sites.setdefault((b.site.y, b.site.x), []).append((b, at[b.id]))
            nb = p.shifts[k][0]
            for (y, x), bufs in sites.items():
                if wanted is not None and (y, x, k) not in wanted:
                    continue
                for b, m in bufs:
                    root = (b.alias_of if b.alias_of is not None else b.id) + nb
                    yield (y, x, k), b.id + nb, f"s{k}.{b.name}", root, m
        return
    at = {m.buf: m for m in p.memory}
    for b in p.buffers:
        if b.space == Space.LOCAL and b.id in at:
            yield (b.site.y, b.site.x, phases[b.section]), b.id, b.name, b.alias_of if b.alias_of is not None else b.id, \
                at[b.id]


def resident_disjoint(p: Program | TemplatedProgram) -> list[Result]:
    """``memory-disjoint:(x,y).local.phase<j>`` for every (site, phase) a resident tensor is live in: the buffers of
    that phase on the site and the resident tensors live in it are pairwise disjoint (an alias and its root share
    bytes by declaration). An exact interval sweep over byte ranges, no solver; a refutation names the two
    occupants (``buffers``, ``residents``, as ``memory.py`` does) and a byte both hold."""
    if not p.resident:
        return []
    phases = p.phase_of_section()
    # per (site, phase): occupant -> (lo, hi, label, buffer id or None)
    items: dict[tuple[int, int, int], dict[tuple[str, object], tuple[int, int, str, int | None]]] = {}
    for rs in p.resident:
        for ph in p.resident_phases(rs):
            items.setdefault((rs.site.y, rs.site.x, ph), {})[("r", rs.tensor)] = (
                rs.offset, rs.offset + rs.size, f"resident {rs.tensor}", None)
    for key, b, name, root, m in _local_buffers(p, phases, items):
        if key in items:
            items[key].setdefault(("b", root), (m.offset, m.offset + m.size, f"b{b} ({name})", b))
    out: list[Result] = []
    for (y, x, ph), occ in sorted(items.items()):
        t0 = time.perf_counter()
        name = f"{R.MEMORY_DISJOINT}:({x},{y}).local.phase{ph}"
        ranges = sorted(occ.items(), key=lambda kv: (kv[1][0], kv[1][1]))
        hit: tuple[tuple[tuple[str, object], tuple[int, int, str, int | None]], ...] | None = None
        reach: tuple[tuple[str, object], tuple[int, int, str, int | None]] | None = None
        for cur in ranges:
            lo, hi = cur[1][0], cur[1][1]
            if lo >= hi:
                continue  # an empty range holds no byte
            if reach is not None and lo < reach[1][1]:
                hit = (reach, cur)
                break
            if reach is None or hi > reach[1][1]:
                reach = cur
        nr = sum(1 for k in occ if k[0] == "r")
        what = f"{len(occ) - nr} buffer(s) and {nr} resident tensor(s)"
        if hit is None:
            out.append(Result(R.Family.MEMORY.value, name, Verdict.PROVED, f"{what} pairwise disjoint (exact interval sweep)",
                              seconds=time.perf_counter() - t0))
            continue
        (k1, (lo1, _, l1, b1)), (k2, (lo2, _, l2, b2)) = hit
        addr = max(lo1, lo2)
        summary = f"{l1} and {l2} on ({x},{y}) both hold byte {addr} in phase {ph}"
        cex: dict[str, Any] = {"kind": "memory", "rule": R.MEMORY_OVERLAP, "site": [x, y], "space": "local",
                               "buffers": [i for i in (b1, b2) if i is not None], "address": addr,
                               "summary": summary}
        residents = [k[1] for k in (k1, k2) if k[0] == "r"]
        if residents:
            cex["residents"] = residents
        out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED, summary, cex, time.perf_counter() - t0))
    return out
