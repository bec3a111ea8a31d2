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

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from verispatial.certify.cache import ProofCache
from verispatial.certify.ordering import _coverage, _may_share_tile, _output_coverage_query
from verispatial.certify.replay import confirm_rule
from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.certify.structure import Leaf, LoopCtx
from verispatial.ir.boundaries import closing_sections, section_bounds
from verispatial.ir.core import Engine, Role, Site, WaitCond
from verispatial.ir.ids import Renaming, op_ids
from verispatial.ir.ops import (
    ID_BUFFER,
    ID_GROUP,
    ID_SEMAPHORE,
    ID_TENSOR,
    AtomicBarrier,
    If,
    Loop,
    Op,
    ReadTiles,
    SemInc,
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
)
from verispatial.ir.serialize import dumps

Progress = Callable[[str], None]
#: ``certify`` itself, passed in by checker.py (it imports this module).
Certify = Callable[..., Report]

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
    starts: dict[str, list[int]] = {ep.key: [] for ep in parts}
    for k, b in enumerate(closing, start=1):
        for ep in parts:
            want = expected_tail(gather, release, root.site, tuple(sites), k, n_parts, ep is root)
            lo, hi = section_bounds(ep, n)[b]
            if hi - lo < len(want) or ep.ops[hi - len(want):hi] != want:
                return f"{ep.key} does not end section {b} with the rendezvous of boundary {k}"
            starts[ep.key].append(hi - len(want))
    return Rendezvous(gather, release, tuple(ep.key for ep in parts), tuple(sites), tuple(closing),
                      {k: tuple(v) for k, v in starts.items()})


# ---------------------------------------------------------------------------------------------------------- slices


@attrs.frozen
class Access:
    """A ``ReadTiles``/``WriteTiles`` of the composed program: its leaf (composed op path; ``index`` unused), its
    phase, and whether it sits under an ``If`` (its occurrences are then not all executed)."""

    leaf: Leaf
    phase: int
    guarded: bool

    @property
    def write(self) -> bool:
        return isinstance(self.leaf.op, WriteTiles)


@attrs.frozen
class Slice:
    """Phase ``index`` of a composed program as a standalone program (its canonical form, see module docstring).

    ``tensors[i]`` / ``trips[i]`` are the composed names of ``%t<i>`` / ``%k<i>``; ``buffers[i]``,
    ``semaphores[i]``, ``groups[i]`` the composed ids of the slice's ids; ``offsets[engine]`` the composed top-level
    index of the engine's first op in the slice. ``key`` is the SHA-256 of ``program``'s JSON."""

    index: int
    sections: tuple[int, ...]
    names: tuple[str, ...]
    program: Program
    key: str
    tensors: tuple[str, ...]
    trips: tuple[str, ...]
    buffers: tuple[int, ...]
    semaphores: tuple[int, ...]
    groups: tuple[int, ...]
    offsets: dict[str, int]

    @property
    def title(self) -> str:
        return ", ".join(self.names)


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
        return sorted(self.index, key=self.index.__getitem__)


@attrs.frozen
class Cut:
    """A composed program cut into slices: the slices (one per phase), every tensor access with its phase, and
    per tensor the phases that read and write it."""

    slices: tuple[Slice, ...]
    accesses: tuple[Access, ...]
    reads: dict[str, frozenset[int]]
    writes: dict[str, frozenset[int]]


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


def cut(p: Program, rv: Rendezvous) -> Cut | str:
    """Cut ``p`` into one slice per phase (module docstring), or say why it cannot be cut (a buffer, semaphore or
    group used from another phase than its own; a rendezvous word used by an op of a section). Linear in the ops."""
    phases = p.phase_of_section()
    n_phases = max(phases) + 1
    secs: list[list[int]] = [[] for _ in range(n_phases)]
    for b, ph in enumerate(phases):
        secs[ph].append(b)
    closing_of = {phases[b]: k for k, b in enumerate(rv.boundaries)}
    rendezvous_sems = {rv.gather, rv.release}
    bounds = {ep.key: section_bounds(ep, len(p.sections)) for ep in p.programs}
    # Pass 1: per phase, each engine's op range; ids by first appearance; every tensor access.
    accesses: list[Access] = []
    raw: list[dict[str, Any]] = []
    for j in range(n_phases):
        bufs, sems, groups, tensors, trips = _Namer(), _Namer(), _Namer(), _Namer(), _Namer()
        engines: list[tuple[EngineProgram, int, int]] = []
        for ep in p.programs:
            bd = bounds[ep.key]
            lo = bd[secs[j][0]][0]
            hi = rv.starts[ep.key][closing_of[j]] if j in closing_of else bd[secs[j][-1]][1]
            if hi <= lo:
                continue
            engines.append((ep, lo, hi))
            why = _walk(p, ep, ep.ops[lo:hi], lo, j, phases, rendezvous_sems, bufs, sems, groups, tensors, trips,
                        accesses)
            if why:
                return why
        raw.append({"engines": engines, "bufs": bufs, "sems": sems, "groups": groups, "tensors": tensors,
                    "trips": trips})
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
    phase_buffers: list[list[int]] = [[] for _ in range(n_phases)]
    for x in p.buffers:
        phase_buffers[phases[x.section]].append(x.id)
    phase_sems: list[list[int]] = [[] for _ in range(n_phases)]
    for y in p.semaphores:
        if y.section is not None:
            phase_sems[phases[y.section]].append(y.id)
    # Pass 2: build each slice.
    slices: list[Slice] = []
    for j in range(n_phases):
        r = raw[j]
        bufs, sems, groups, tensors, trips = r["bufs"], r["sems"], r["groups"], r["tensors"], r["trips"]
        for bid in phase_buffers[j]:  # the phase's buffers no op names still take memory
            bufs(bid)
        for sid in phase_sems[j]:
            sems(sid)
        sec_map = {b: i for i, b in enumerate(secs[j])}
        tnames = {name: f"%t{i}" for name, i in tensors.index.items()}
        knames = {name: f"%k{i}" for name, i in trips.index.items()}
        ren = Renaming(buffer=bufs.index.__getitem__, semaphore=sems.index.__getitem__,
                       group=groups.index.__getitem__, tensor=tnames.__getitem__, trip=knames.__getitem__)
        programs = []
        offsets: dict[str, int] = {}
        for ep, lo, hi in r["engines"]:
            starts = tuple(bounds[ep.key][b][0] - lo for b in secs[j])
            programs.append(EngineProgram(ep.site, ep.engine, ren.ops(ep.ops[lo:hi]), starts))
            offsets[ep.key] = lo
        buffers = []
        for i, bid in enumerate(bufs.order()):
            x = p.buffers[bid]
            if x.alias_of is not None and x.alias_of not in bufs.index:
                return f"buffer {x.id} aliases buffer {x.alias_of} of another phase"
            buffers.append(Buffer(i, f"b{i}", x.site, x.cb, x.page_tiles, x.capacity, x.dtype, x.space,
                                  None if x.alias_of is None else bufs.index[x.alias_of], sec_map[x.section]))
        semaphores = [Semaphore(i, f"sem{i}", p.semaphores[s].sites, p.semaphores[s].init, p.semaphores[s].role,
                                sec_map[p.semaphores[s].section])  # type: ignore[index]
                      for i, s in enumerate(sems.order())]
        grps = [Group(i, p.groups[g].sender, p.groups[g].rect, p.groups[g].loopback)
                for i, g in enumerate(groups.order())]
        ts = []
        for name in tensors.order():
            t = by_name[name]
            ts.append(Tensor(tnames[name], t.shape, t.dtype,
                             _slice_role(t, j, fr.get(name, frozenset()), fw.get(name, frozenset())), t.init))
        at = {m.buf: m for m in p.memory}
        memory = tuple(BufferAt(i, at[b].offset, at[b].size) for i, b in enumerate(bufs.order()) if b in at)
        program = Program("slice", p.target, tuple(ts), tuple(buffers), tuple(semaphores), tuple(grps),
                          tuple(Trip(knames[t], trip_max[t]) for t in trips.order()), tuple(programs),
                          tuple(SectionSpan(f"s{i}") for i in range(len(secs[j]))), memory)
        key = hashlib.sha256(dumps(program).encode()).hexdigest()
        slices.append(Slice(j, tuple(secs[j]), tuple(p.sections[b].name for b in secs[j]), program, key,
                            tuple(tensors.order()), tuple(trips.order()), tuple(bufs.order()), tuple(sems.order()),
                            tuple(groups.order()), offsets))
    return Cut(tuple(slices), tuple(accesses), fr, fw)


def _walk(p: Program, ep: EngineProgram, ops: tuple[Op, ...], top: int, j: int, phases: list[int],
          rendezvous_sems: set[int], bufs: _Namer, sems: _Namer, groups: _Namer, tensors: _Namer, trips: _Namer,
          accesses: list[Access]) -> str:
    """Number the ids ``ops`` (top-level ops ``top``, ``top + 1``, ... of ``ep``) name, in order of first
    appearance, and collect their tensor accesses (composed op paths); a reason when an op names an entity of
    another phase or a rendezvous word (then the program cannot be cut), else ''."""

    def visit(op: Op, path: tuple[int, ...], loops: tuple[LoopCtx, ...], guarded: bool, section: int) -> str:
        for kind, x in op_ids(op):
            if kind == ID_BUFFER:
                if not 0 <= x < len(p.buffers) or phases[p.buffers[x].section] != j:
                    return f"{ep.key} at {list(path)} uses buffer {x} outside its phase"
                bufs(x)
            elif kind == ID_SEMAPHORE:
                if x in rendezvous_sems:
                    return f"{ep.key} at {list(path)} uses rendezvous word {x} in a section's work"
                s = p.semaphores[x] if 0 <= x < len(p.semaphores) else None
                if s is None or s.section is None or phases[s.section] != j:
                    return f"{ep.key} at {list(path)} uses semaphore {x} outside its phase"
                sems(x)
            elif kind == ID_GROUP:
                groups(x)
            elif kind == ID_TENSOR:
                tensors(x)
            elif kind == "trip":
                trips(x)
        if isinstance(op, Loop):
            inner = (*loops, LoopCtx(path, op.var, op.count))
            for i, o in enumerate(op.body):
                why = visit(o, (*path, i), inner, guarded, section)
                if why:
                    return why
        elif isinstance(op, If):
            for i, o in enumerate(op.body):
                why = visit(o, (*path, i), loops, True, section)
                if why:
                    return why
        elif isinstance(op, (ReadTiles, WriteTiles)):
            accesses.append(Access(Leaf(ep.key, -1, path, op, loops, section), j, guarded))
        return ""

    bd = section_bounds(ep, len(p.sections))
    section = 0
    for i, op in enumerate(ops):
        t = top + i
        while bd[section][1] <= t and section + 1 < len(bd):
            section += 1
        why = visit(op, (t,), (), False, section)
        if why:
            return why
    return ""


# ---------------------------------------------------------------------------------------------- name mapping


_TOKEN = re.compile(r"%t(\d+)|%k(\d+)|(?<![\w%])b(\d+)(?!\d)|(?<![\w%])sem(\d+)(?!\d)|(?<![\w%])g(\d+)(?!\d)"
                    r"|(\(\d+,\d+\)\.(?:reader|compute|writer))\[(\d+)")


def demangler(sl: Slice, paths: bool) -> Callable[[str], str]:
    """Text of slice ``sl`` in the composed program's names: ``%t<i>``/``%k<i>`` -> tensor/trip names, ``b<i>``,
    ``sem<i>``, ``g<i>`` -> composed ids and, with ``paths``, leaf references ``engine[i, ...]`` -> composed op
    paths (the top-level index shifted by the engine's offset)."""

    def one(m: re.Match[str]) -> str:
        t, k, b, s, g, eng, top = m.groups()
        if t is not None:
            return sl.tensors[int(t)]
        if k is not None:
            return sl.trips[int(k)]
        if b is not None:
            return f"b{sl.buffers[int(b)]}" if int(b) < len(sl.buffers) else m.group(0)
        if s is not None:
            return f"sem{sl.semaphores[int(s)]}" if int(s) < len(sl.semaphores) else m.group(0)
        if g is not None:
            return f"g{sl.groups[int(g)]}" if int(g) < len(sl.groups) else m.group(0)
        if paths and eng in sl.offsets:
            return f"{eng}[{int(top) + sl.offsets[eng]}"
        return m.group(0)

    def run(text: str) -> str:
        return _TOKEN.sub(one, text) if text else text

    return run


def _map_json(x: Any, dm: Callable[[str], str]) -> Any:
    if isinstance(x, str):
        return dm(x)
    if isinstance(x, list):
        return [_map_json(v, dm) for v in x]
    if isinstance(x, dict):
        return {k: _map_json(v, dm) for k, v in x.items()}
    return x


# -------------------------------------------------------------------------------------------- certification


def _assumed(name: str, what: str, needs: list[str], results: dict[str, Result], family: str, reason: str,
             t0: float) -> Result:
    """PROVED with ``reason`` when every obligation in ``needs`` is proved, else FAILED naming the first that is not
    (per-obligation soundness: a proof resting on an unproved assumption is no proof)."""
    missing = [n for n in needs if n not in results or results[n].verdict != Verdict.PROVED]
    shown = ", ".join(needs[:6]) + (f" (+{len(needs) - 6} more)" if len(needs) > 6 else "")
    if missing:
        got = results.get(missing[0])
        state = got.verdict.value if got is not None else "missing"
        return Result(family, name, Verdict.FAILED,
                      f"{what}: rests on {missing[0]}, which is {state}"
                      + (f" ({len(missing) - 1} more assumption(s) not proved)" if len(missing) > 1 else ""),
                      seconds=time.perf_counter() - t0)
    return Result(family, name, Verdict.PROVED, f"{reason} (assumes {shown})", seconds=time.perf_counter() - t0)


def certify_composed(p: Program, rv: Rendezvous, c: Cut, certify: Certify, *, jobs: int = 1,
                     progress: Progress | None = None, rlimit: int = DEFAULT_RLIMIT,
                     cache: ProofCache | bool = True) -> list[Result]:
    """Every obligation of the composed program ``p``: its slices' (certified once per class of equal slices when
    ``cache`` is not False) and the cross-phase ones (module docstring). ``certify`` is the checker's entry point."""
    say = progress or (lambda _m: None)
    reuse = cache is not False
    pc = (ProofCache() if cache else None) if isinstance(cache, bool) else cache
    n = len(c.slices)
    last = n - 1
    proved_reports: dict[str, int] = {}
    own: dict[int, Report] = {}
    results: list[Result] = []
    deadlock_ok: list[bool] = []
    exempt_cache: dict[tuple[str, tuple[tuple[int, Site], ...]], list[Result]] = {}
    latest = _latest_semaphore_phase(p)
    for sl in c.slices:
        j = sl.index
        t0 = time.perf_counter()
        src = proved_reports.get(sl.key) if reuse else None
        if src is not None:
            report = own[src]
        else:
            report = certify(sl.program, jobs=jobs, rlimit=rlimit, cache=pc if reuse else False, compositional=False)
            own[j] = report
            if reuse and report.exit_code == 0:
                proved_reports.setdefault(sl.key, j)
        slot = _slot_reuse(p, sl, latest, rlimit, exempt_cache)
        mapped = _map_slice(p, c, sl, report, src, c.slices[src] if src is not None else None, slot,
                            all(deadlock_ok), last)
        deadlock_ok.append(all(r.verdict == Verdict.PROVED for r in report.results if r.family == "deadlock"))
        results += mapped
        bad = sum(1 for r in mapped if r.verdict != Verdict.PROVED)
        how = f"equal up to renaming to slice {src}, {len(mapped)} proofs reused" if src is not None else (
            f"{len(mapped)} obligations" + (f", {bad} not proved" if bad else ", all proved"))
        say(f"slice {j + 1}/{n} ({sl.title}): {how} ({time.perf_counter() - t0:.2f} s)")
    say("rendezvous and cross-phase obligations")
    results += cross_phase(p, rv, c, {r.name: r for r in results}, rlimit)
    return results


def _latest_semaphore_phase(p: Program) -> dict[Site, int]:
    """Per site, the latest phase with a section semaphore word there (``Program.rearmed_words``' slot rule)."""
    phases = p.phase_of_section()
    out: dict[Site, int] = {}
    for s in p.semaphores:
        if s.section is not None:
            for site in s.sites:
                out[site] = max(out.get(site, 0), phases[s.section])
    return out


def _slot_reuse(p: Program, sl: Slice, latest: dict[Site, int], rlimit: int,
                memo: dict[tuple[str, tuple[tuple[int, Site], ...]], list[Result]]) -> list[Result]:
    """``balance-sem`` of the slice's words that the slice alone would exempt as re-armed but the composition does
    not (a later phase may take their semaphore slot, ``Program.rearmed_words``): proved without the exemption."""
    lost = tuple(sorted(((s, site) for s, site in sl.program.rearmed_words() if latest.get(site, -1) > sl.index),
                        key=lambda w: (w[0], w[1].y, w[1].x)))
    if not lost:
        return []
    got = memo.get((sl.key, lost))
    if got is None:
        from verispatial.certify.exact import _sem_balance
        from verispatial.certify.reach import analyse

        a = analyse(sl.program)
        got = []
        for w in lost:
            r = _sem_balance(a, a.words[w], False, rlimit)
            got.append(attrs.evolve(r, reason=f"{r.reason} (no re-armed exemption: a later phase may take this "
                                                f"word's semaphore slot and would start from its final value)"))
        memo[(sl.key, lost)] = got
    return got


def _map_slice(p: Program, c: Cut, sl: Slice, report: Report, src: int | None, src_slice: Slice | None,
               slot: list[Result], earlier_live: bool, last: int) -> list[Result]:
    """Slice ``sl``'s results in the composed program's names (``slice<j>/...``), with every refutation kept only
    where it is a violation of the composition too (docs/checker.md), and the slot-reuse balance results."""
    j = sl.index
    dm = demangler(sl, True)
    dm_src = demangler(src_slice, True) if src_slice is not None else None
    replaced = {r.name: r for r in slot}
    roles = {t.name: t.role for t in p.tensors}
    # Activations the slice writes that an earlier phase writes too: the slice sees only its own writes, so its
    # coverage obligation on them is replaced by the composed one (``cross_phase``) and its refutations on them
    # may be artifacts.
    earlier = [f"hb-activation:%t{i}:" for i, t in enumerate(sl.tensors)
               if roles[t] == Role.ACTIVATION and j in c.writes.get(t, ()) and min(c.writes[t]) < j]
    out: list[Result] = []
    for r in report.results:
        r = replaced.get(r.name, r)
        hit = next((e for e in earlier if r.name.startswith(e)), None)
        if hit is not None and "<" not in r.name[len(hit):]:
            continue  # coverage: decided over the writes of every phase up to this one instead
        name = f"slice{j}/{dm(r.name)}"
        reason = dm(r.reason)
        if src is not None and dm_src is not None and src_slice is not None:
            reason = (f"proved as slice{src}/{dm_src(r.name)} of slice {src} ({src_slice.title}) (equal up to "
                      f"renaming; canonical form {sl.key[:12]}): {reason}")
        verdict, cex = r.verdict, r.counterexample
        if cex is not None:
            cex = {**_map_json(cex, dm), "slice": {"index": j, "sections": list(sl.names), "top_offset": sl.offsets,
                                                   "replayed_on": "the slice program"}}
        if verdict == Verdict.REFUTED:
            why = ""
            if not earlier_live:
                why = "an earlier slice is not proved deadlock-free, so this slice's start may be unreachable"
            elif r.name.startswith("async-pending-at-end") and j < last:
                why = ("in the composition the engine goes on to the rendezvous, so outstanding NoC transactions at "
                       "the end of the phase are no violation there; the cross-phase orderings assume there are none")
            elif hit is not None:
                why = "the tensor is also written by an earlier phase, whose writes the slice does not model"
            if why:
                verdict, reason = Verdict.FAILED, f"refuted in slice {j} as a standalone program ({reason}), but {why}"
        out.append(Result(r.family, name, verdict, reason, cex, r.seconds))
    return out


# ------------------------------------------------------------------------------------------ cross-phase


#: Tile occurrences an exact coverage check may enumerate per tensor before it asks Z3 instead.
ENUMERATE_LIMIT = 200_000


def _tiles(acc: Access) -> set[int] | None:
    """Every tile ``acc`` touches over all its occurrences, when that is a fixed finite set small enough to list:
    constant loop counts, no indirect part, no guard (else None: the caller asks Z3)."""
    lf = acc.leaf
    op = lf.op
    assert isinstance(op, (ReadTiles, WriteTiles))
    if acc.guarded or op.addr.dynamic is not None or any(not isinstance(lc.count, int) for lc in lf.loops):
        return None
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
    return {s + d for s in starts for d in range(op.tiles)}


class _Written:
    """Per tensor: the tiles written by the accesses of each phase (None when some write cannot be listed)."""

    def __init__(self, accesses: Iterable[Access]) -> None:
        self.by: dict[str, dict[int, list[Access]]] = {}
        for acc in accesses:
            if acc.write:
                op = acc.leaf.op
                assert isinstance(op, WriteTiles)
                self.by.setdefault(op.tensor, {}).setdefault(acc.phase, []).append(acc)
        self._sets: dict[tuple[str, int], set[int] | None] = {}

    def writes(self, tensor: str, upto: int) -> list[Access]:
        return [a for ph, accs in sorted(self.by.get(tensor, {}).items()) if ph <= upto for a in accs]

    def tiles(self, tensor: str, upto: int) -> set[int] | None:
        key = (tensor, upto)
        if key not in self._sets:
            out: set[int] | None = set()
            for a in self.writes(tensor, upto):
                got = None if a.guarded else _tiles(a)
                if got is None or out is None:
                    out = None
                    break
                out |= got
            self._sets[key] = out
        return self._sets[key]


def _ref(lf: Leaf) -> str:
    return f"{lf.engine}{list(lf.path)}"


def cross_phase(p: Program, rv: Rendezvous, c: Cut, results: dict[str, Result], rlimit: int) -> list[Result]:
    """The obligations that cross phases: rendezvous, happens-before across each boundary, coverage of reads by
    earlier phases' writes and of whole-program outputs, the rendezvous words' balance, and deadlock freedom of
    the composition (each resting on the slices' obligations it names)."""
    out: list[Result] = []
    n_parts, root = len(rv.participants), rv.participants[0]
    g, r = p.semaphores[rv.gather], p.semaphores[rv.release]
    root_site = g.sites[0]
    for k, b in enumerate(rv.boundaries, start=1):
        out.append(Result(
            "happens-before", f"rendezvous:after-section-{b}", Verdict.PROVED,
            f"the compose rendezvous after section {b} ({p.sections[b].name}), boundary {k}: each of the {n_parts} "
            f"participants arrives once at the root {root} (sem{rv.gather}@{root_site} += 1), the root waits for "
            f">= {k}*{n_parts} arrivals and releases each of the {len(rv.sites)} sites once (sem{rv.release} += 1), "
            f"every participant waits for its site's release >= {k}, and no other op touches either word: no "
            f"participant executes an op after its release wait before every participant executed its arrival "
            f"(and all before it), and once all arrived every release wait is enabled (rendezvous lemma, "
            f"docs/checker.md)"))
    for s in (g, r):
        for site in s.sites:
            out.append(Result("balance", f"balance-sem:sem{s.id}@{site}", Verdict.PROVED,
                              f"sem{s.id}@{site} ({s.name}) is a rendezvous word: only increments land on it (no "
                              f"sem_set), and it is re-initialized by the host at launch (host_init)"))
    known = {**results, **{x.name: x for x in out}}
    phases = p.phase_of_section()
    n_phases = max(phases) + 1
    close_b = {k: b for k, b in enumerate(rv.boundaries)}  # phase k closes at section b
    apae = {j: f"slice{j}/async-pending-at-end" for j in range(n_phases)}
    roles = {t.name: t.role for t in p.tensors}
    written = _Written(c.accesses)

    # Happens-before across each closing boundary the data of a tensor crosses.
    by_tensor: dict[str, list[Access]] = {}
    for acc in c.accesses:
        op = acc.leaf.op
        assert isinstance(op, (ReadTiles, WriteTiles))
        by_tensor.setdefault(op.tensor, []).append(acc)
    for tensor in sorted(by_tensor):
        accs = by_tensor[tensor]
        w = sorted(c.writes.get(tensor, frozenset()))
        a = sorted({x.phase for x in accs})
        if not w:
            continue
        early_state = _state_read_after_write(p, tensor, accs, rlimit) if roles.get(tensor) == Role.STATE else []
        for j in range(n_phases - 1):
            if not ((w[0] <= j < a[-1]) or (a[0] <= j < w[-1])):
                continue
            b = close_b[j]
            t0 = time.perf_counter()
            name = f"hb-cross:{tensor}:after-section-{b}"
            bad = [(wa, ra, cex) for wa, ra, cex in early_state if wa.phase <= j < ra.phase]
            if bad:
                out.append(_refute_on_composition(p, name, bad[0][2], t0))
                continue
            before = sorted({x.phase for x in accs if x.phase <= j})
            needs = [f"rendezvous:after-section-{b}", *[apae[i] for i in before]]
            out.append(_assumed(
                name, f"{tensor} across the rendezvous after section {b}", needs, known, "happens-before",
                f"{tensor} is written in phase(s) {w} and accessed in phase(s) {a}: every access of phases <= {j} "
                f"completed before its engine arrived at the rendezvous after section {b} (nothing outstanding at "
                f"the end of its slice) and every access of phases > {j} is issued after that engine's release "
                f"(rendezvous lemma): reads after writes, writes after reads and writes after writes across the "
                f"boundary are ordered", t0))
    # Reads covered by the writes of phases up to their own.
    for acc in c.accesses:
        op = acc.leaf.op
        if not isinstance(op, ReadTiles) or roles.get(op.tensor) != Role.ACTIVATION:
            continue
        ws = c.writes.get(op.tensor, frozenset())
        if acc.phase in ws and min(ws) >= acc.phase:
            continue  # written in this phase only: the slice's own coverage obligation decides it
        out.append(_read_coverage(p, op.tensor, acc, written, rlimit))
    # Every tile of every output of the whole program is written by some phase.
    for t in p.tensors:
        if t.role == Role.OUTPUT:
            out.append(_output_coverage(p, t, written, rlimit))
    # Deadlock freedom of the whole composition.
    t0 = time.perf_counter()
    needs = [x.name for x in results.values() if x.family == "deadlock" and x.name.startswith("slice")]
    needs += [apae[j] for j in range(n_phases)]
    needs += [f"rendezvous:after-section-{b}" for b in rv.boundaries]
    known = {**known, **{x.name: x for x in out}}
    out.append(_assumed(
        "deadlock:composition", "deadlock freedom of the composition", needs, known, "deadlock",
        f"no reachable state of the composition of {n_phases} slices is a deadlock: each slice is deadlock-free "
        f"and ends with nothing in flight, the slices share no counter (every buffer and section semaphore is "
        f"used in its own phase only, checked when the program was cut) and every rendezvous is well formed "
        f"(composition theorem, docs/checker.md)", t0))
    return out


def _state_read_after_write(p: Program, tensor: str, accs: list[Access], rlimit: int) -> list[tuple[
        Access, Access, dict[str, Any]]]:
    """Pairs (write of phase i, read of phase i' > i) of a state that may share a tile: the read would see a
    value written in this run, not the carried one (the interpreter's ``tensor-race`` on states)."""
    out = []
    ws = [x for x in accs if x.write]
    rs = [x for x in accs if not x.write]
    for wa in ws:
        for ra in rs:
            if ra.phase <= wa.phase:
                continue
            share = _may_share_tile(p, wa.leaf, ra.leaf, rlimit)
            if share is False:
                continue
            cex = {"kind": "race", "rule": "tensor-race", "engine": ra.leaf.engine, "path": list(ra.leaf.path),
                   "read": {"engine": ra.leaf.engine, "path": list(ra.leaf.path)},
                   "write": {"engine": wa.leaf.engine, "path": list(wa.leaf.path)},
                   "summary": (f"{ra.leaf.engine} reads state {tensor} at {list(ra.leaf.path)} (phase {ra.phase}) "
                               f"after {wa.leaf.engine}'s write of it at {list(wa.leaf.path)} (phase {wa.phase}): "
                               f"it reads this run's value, not the carried one")
                   + ("" if share else " (the tile overlap is undecided)")}
            out.append((wa, ra, cex))
    return out


def _refute_on_composition(p: Program, name: str, cex: dict[str, Any], t0: float) -> Result:
    """A candidate violation of the composed program, refuted only if the interpreter replays it on that program
    (that rule, that engine and op), else failed-to-prove."""
    path = tuple(cex["path"]) if isinstance(cex.get("path"), list) else None
    engine = cex.get("engine") if isinstance(cex.get("engine"), str) else None
    got = confirm_rule(p, {str(cex["rule"])}, cex.get("trips") or None, engine, path)
    if got is None:
        return Result("happens-before", name, Verdict.FAILED,
                      f"candidate not replayed by the interpreter: {cex['summary']}",
                      seconds=time.perf_counter() - t0)
    return Result("happens-before", name, Verdict.REFUTED, str(cex["summary"]), {**cex, "replay": got},
                  time.perf_counter() - t0)


def _read_coverage(p: Program, tensor: str, acc: Access, written: _Written, rlimit: int) -> Result:
    """``hb-activation:<T>:<read>``: every tile the read (of phase j) takes is written by a write of a phase <= j
    (writes of later phases excluded: they are issued after the read, by the rendezvous lemma)."""
    t0 = time.perf_counter()
    lf = acc.leaf
    name = f"hb-activation:{tensor}:{_ref(lf)}"
    have = written.tiles(tensor, acc.phase)
    need = _tiles(acc)
    if have is not None and need is not None:
        miss = sorted(need - have)
        if not miss:
            return Result("happens-before", name, Verdict.PROVED,
                          f"every tile {lf.engine} reads of {tensor} in phase {acc.phase} is written by phases <= "
                          f"{acc.phase} (exact: {len(need)} tiles listed)", seconds=time.perf_counter() - t0)
        cex = {"kind": "race", "rule": "tensor-race", "engine": lf.engine, "path": list(lf.path), "tile": miss[0],
               "summary": f"{lf.engine} reads {tensor} tile {miss[0]} at {list(lf.path)} (phase {acc.phase}), "
                          f"which no write of a phase <= {acc.phase} writes"}
        return _refute_on_composition(p, name, cex, t0)
    if acc.guarded or any(x.guarded for x in written.writes(tensor, acc.phase)):
        return Result("happens-before", name, Verdict.FAILED, "an access under an if: coverage is not decided",
                      seconds=time.perf_counter() - t0)
    r = _coverage(p, tensor, lf, [x.leaf for x in written.writes(tensor, acc.phase)], rlimit)
    if r.verdict == Verdict.REFUTED and r.counterexample is not None:
        return _refute_on_composition(p, name, r.counterexample, t0)
    return attrs.evolve(r, name=name, reason=r.reason + f" (writes of phases <= {acc.phase})")


def _output_coverage(p: Program, t: Tensor, written: _Written, rlimit: int) -> Result:
    """``output-unwritten:<T>``: every tile of output ``T`` is written by some write of some phase."""
    t0 = time.perf_counter()
    name = f"output-unwritten:{t.name}"
    ntiles = t.tiles(p.target.tile)
    last = 1 << 30
    have = written.tiles(t.name, last)
    if have is not None:
        miss = [x for x in range(ntiles) if x not in have]
        if not miss:
            return Result("happens-before", name, Verdict.PROVED,
                          f"every one of the {ntiles} tiles of output {t.name} is written (exact)",
                          seconds=time.perf_counter() - t0)
        return Result("happens-before", name, Verdict.FAILED,
                      f"no write writes tile {miss[0]} of output {t.name} ({len(miss)} tiles unwritten; not "
                      f"replayed: the interpreter has no rule for an unwritten output yet)",
                      seconds=time.perf_counter() - t0)
    return attrs.evolve(_output_coverage_query(p, t, [x.leaf for x in written.writes(t.name, last)], rlimit),
                        name=name)
