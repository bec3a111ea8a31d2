"""A composed program stored as its distinct sections and their instances (program format version 3, issue 19
goal 4; docs/semantics.md "Templated programs").

A decode step composes the same sections once per layer: sixteen copies of each of a layer's fifteen sections differ
only in the names of the tensors they read and write. ``TemplatedProgram`` keeps each distinct section once, as a
*template* — a scheduled one-section ``Program`` in its own ids — and the step as a list of *instances*: the
template each section instantiates, the global tensor (and trip) each of the template's tensors (and trips) stands
for, and whether a rendezvous closes it.

Its meaning is its expansion (``expand``), exactly the program ``compose`` joins from the instantiated sections with
``stacked`` placement and every boundary but the last closed:

- instance ``k`` is its template with every tensor and trip renamed to the instance's, buffers, semaphores and
  groups shifted past those of instances ``0 .. k-1`` (buffer ``b`` of the template is ``b + buffers_before(k)``),
  named ``s<k>.<name>``, owned by section ``k``; sites, circular-buffer indices and byte offsets unchanged (each
  section is its own phase, so nothing of one phase is moved past another's);
- the participants are every (site, engine) some template runs, in site order (row, column) then reader, compute,
  writer; each participant's op list is, per instance, its template's ops for that (site, engine) (none when the
  template does not run there), then — for every instance but the last — the rendezvous tail of ``rendezvous_tail``;
- two program-wide semaphores follow the sections' ones: ``rendezvous_gather`` (one word on the root's site) and
  ``rendezvous_release`` (one word on each participating site), both initially 0 and re-initialized by the host;
- tensors, trips and resident tensors are the document's own (the tensors already unified as ``compose`` unifies
  them).

So a 300,000-op step is stored, loaded, validated and certified in the size of its distinct sections plus a line per
section. ``expand`` builds the whole program on demand (the interpreter, the exports and a refutation's replay need
it); the checker proves a templated program from its templates (``certify/compositional.py``) and never expands it
to do so.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Container, Iterable, Iterator, Mapping

import attrs

from verispatial.ir.core import Engine, Role, SemRole, Site, WaitCond
from verispatial.ir.ids import Renaming
from verispatial.ir.ops import AtomicBarrier, Op, SemInc, SemWait
from verispatial.ir.program import (
    Buffer,
    BufferAt,
    EngineProgram,
    Group,
    Program,
    Resident,
    SectionSpan,
    Semaphore,
    Tensor,
    Trip,
    tensor_accesses,
    walk,
)
from verispatial.ir.source import Sources, merged, shifted
from verispatial.ir.target import Target

#: The program format version that stores templates (``serialize``); documents without templates stay version 2.
TEMPLATED_VERSION = 3

#: Engine order inside a site for the participant order: reader, compute, writer.
ENGINE_ORDER = {Engine.READER: 0, Engine.COMPUTE: 1, Engine.WRITER: 2}

Participant = tuple[Site, Engine]


def participant_order(p: Participant) -> tuple[int, int, int]:
    """The rendezvous order of a participant: site row, site column, then reader, compute, writer."""
    return (p[0].y, p[0].x, ENGINE_ORDER[p[1]])


def rendezvous_tail(gather: int, release: int, root_site: Site, sites: tuple[Site, ...], participants: int,
                    root: bool, k: int) -> tuple[Op, ...]:
    """The ops a participant ends the section closing the ``k``-th boundary (``k = 1, 2, ...``) with: its arrival
    ``SemInc(gather, root_site, 1)``, ``AtomicBarrier()``; on the root only the wait for every arrival
    ``SemWait(gather, ge, k * participants)``, one ``SemInc(release, s, 1)`` per site ``s`` in ``sites``,
    ``AtomicBarrier()``; then the wait for its site's ``k``-th release ``SemWait(release, ge, k)``. The one shape
    ``compose`` emits and the compositional checker recognises (``passes/compose.py`` ``rendezvous_ops``)."""
    out: list[Op] = [SemInc(gather, root_site, 1), AtomicBarrier()]
    if root:
        out += [SemWait(gather, WaitCond.GE, k * participants), *[SemInc(release, s, 1) for s in sites],
                AtomicBarrier()]
    out.append(SemWait(release, WaitCond.GE, k))
    return tuple(out)


@attrs.frozen
class Instance:
    """Section ``name`` of a templated program: template ``template`` with its tensor ``i`` standing for the
    program's tensor ``tensors[i]`` and its trip ``i`` for the program's trip ``trips[i]``; ``barrier_after``: a
    rendezvous closes it (every instance but the last)."""

    name: str
    template: int
    tensors: tuple[str, ...]
    trips: tuple[str, ...] = ()
    barrier_after: bool = False


@attrs.frozen(slots=False)
class TemplatedProgram:
    """A composed program as ``templates`` (scheduled one-section programs, each in its own ids) and ``instances``
    (one per section, in order); ``tensors`` and ``trips`` are the program's, ``resident`` its resident tensors
    (module docstring). Relations between the parts are checked by ``validate_templated``."""

    name: str
    target: Target
    tensors: tuple[Tensor, ...]
    trips: tuple[Trip, ...]
    templates: tuple[Program, ...]
    instances: tuple[Instance, ...]
    resident: tuple[Resident, ...] = ()

    # ------------------------------------------------------------------------------------------- the shape

    @functools.cached_property
    def sections(self) -> tuple[SectionSpan, ...]:
        return tuple(SectionSpan(i.name, i.barrier_after) for i in self.instances)

    def phase_of_section(self) -> list[int]:
        """Phase index of each section: sections between two barriers run concurrently in one phase."""
        return self.shell.phase_of_section()

    @functools.cached_property
    def shell(self) -> Program:
        """The program-wide parts as a ``Program`` with no engine programs, buffers, semaphores or groups: its
        tensors, trips, sections and resident tensors (what the cross-phase obligations read)."""
        return Program(self.name, self.target, self.tensors, trips=self.trips, sections=self.sections,
                       resident=self.resident)

    def tensor(self, name: str) -> Tensor:
        return self.shell.tensor(name)

    def trip_max(self) -> dict[str, int]:
        return {t.name: t.max for t in self.trips}

    def tensor_bytes(self, t: Tensor) -> int:
        return self.shell.tensor_bytes(t)

    def resident_phases(self, r: Resident) -> set[int]:
        """The phases resident tensor ``r`` is live in: its sections' (each section its own phase)."""
        return set(range(max(r.first_section, 0), min(r.last_section, len(self.instances) - 1) + 1))

    @functools.cached_property
    def shifts(self) -> tuple[tuple[int, int, int], ...]:
        """Per instance, the (buffers, semaphores, groups) of the instances before it: its id shifts. One more entry
        at the end: the totals."""
        out = [(0, 0, 0)]
        for inst in self.instances:
            t = self.templates[inst.template]
            b, s, g = out[-1]
            out.append((b + len(t.buffers), s + len(t.semaphores), g + len(t.groups)))
        return tuple(out)

    def buffer_name(self, b: int) -> str:
        """The name buffer ``b`` (an id of the expansion) has in the expansion: ``s<k>.<its template's name>``, with
        ``k`` the instance it belongs to. Found without expanding (one bisection of the shifts); raises IndexError for
        an id past the last buffer."""
        shifts = self.shifts
        k = bisect.bisect_right(shifts, b, key=lambda x: x[0]) - 1
        if not 0 <= b < shifts[-1][0] or k >= len(self.instances):
            raise IndexError(f"buffer b{b} is not one of the {shifts[-1][0]} buffers of {self.name}")
        t = self.templates[self.instances[k].template]
        return f"s{k}.{t.buffers[b - shifts[k][0]].name}"

    @property
    def gather(self) -> int:
        """The id of the rendezvous gather semaphore (after every section's)."""
        return self.shifts[-1][1]

    @property
    def release(self) -> int:
        return self.shifts[-1][1] + 1

    @functools.cached_property
    def participants(self) -> tuple[Participant, ...]:
        """Every (site, engine) some template runs, in rendezvous order (the root first)."""
        seen = {(ep.site, ep.engine) for t in self.templates for ep in t.programs}
        return tuple(sorted(seen, key=participant_order))

    @functools.cached_property
    def sites(self) -> tuple[Site, ...]:
        """The distinct participating sites in site order (row, column)."""
        return tuple(sorted({s for s, _ in self.participants}, key=lambda s: (s.y, s.x)))

    @functools.cached_property
    def rendezvous_semaphores(self) -> tuple[Semaphore, Semaphore]:
        """The gather and release semaphores of the expansion."""
        root = self.participants[0][0]
        return (Semaphore(self.gather, "rendezvous_gather", (root,), 0, SemRole.RENDEZVOUS_GATHER, None, host_init=True),
                Semaphore(self.release, "rendezvous_release", self.sites, 0, SemRole.RENDEZVOUS_RELEASE, None,
                          host_init=True))

    def names(self, k: int) -> tuple[dict[str, str], dict[str, str]]:
        """Instance ``k``'s tensor and trip maps: template name -> program name."""
        inst = self.instances[k]
        t = self.templates[inst.template]
        return (dict(zip((x.name for x in t.tensors), inst.tensors, strict=True)),
                dict(zip((x.name for x in t.trips), inst.trips, strict=True)))

    def instance_ops(self, k: int, ops: tuple[Op, ...]) -> tuple[Op, ...]:
        """``ops`` of instance ``k``'s template as they read in the expansion: tensors (the index tensor of an
        indirect address included) and trips renamed, buffers, semaphores and groups shifted."""
        tmap, kmap = self.names(k)
        b, s, g = self.shifts[k]
        ren = Renaming(buffer=lambda x: x + b, semaphore=lambda x: x + s, group=lambda x: x + g,
                       tensor=tmap.__getitem__, trip=kmap.__getitem__)
        out = ren.ops(ops)
        if self._dynamic[self.instances[k].template]:
            out = tuple(dynamic_renamed(op, tmap) for op in out)
        return out

    @functools.cached_property
    def _dynamic(self) -> tuple[bool, ...]:
        """Per template, whether some op has an indirect address."""
        return tuple(any(indirect(op) for ep in t.programs for op in walk(ep.ops)) for t in self.templates)

    @functools.cached_property
    def template_ops(self) -> tuple[dict[Participant, int], ...]:
        """Per template, the top-level op count of each (site, engine) it runs."""
        return tuple({(ep.site, ep.engine): len(ep.ops) for ep in t.programs} for t in self.templates)

    @functools.cached_property
    def section_starts(self) -> dict[str, tuple[int, ...]]:
        """Per participant key (``(x,y).engine``), the top-level index of each section's first op in the
        expansion (``EngineProgram.section_starts``)."""
        n_sites = len(self.sites)
        root = self.participants[0]
        out: dict[str, tuple[int, ...]] = {}
        last = len(self.instances) - 1
        of = [inst.template for inst in self.instances]
        closes = [inst.barrier_after and k < last for k, inst in enumerate(self.instances)]
        for who in self.participants:
            tail = 3 + (n_sites + 2 if who == root else 0)
            ops = [t.get(who, 0) for t in self.template_ops]
            # Each section's ops, plus the rendezvous tail after a closing one; the starts are the sums before it.
            steps = [ops[t] + tail if c else ops[t] for t, c in zip(of, closes, strict=True)]
            out[f"{who[0]}.{who[1].value}"] = tuple(itertools.accumulate(steps[:-1], initial=0)) if steps else ()
        return out

    @functools.cached_property
    def boundaries(self) -> tuple[int, ...]:
        """The closing sections (a rendezvous after each), in order."""
        last = len(self.instances) - 1
        return tuple(k for k, inst in enumerate(self.instances) if inst.barrier_after and k < last)

    def rendezvous_starts(self) -> dict[str, tuple[int, ...]]:
        """Per participant key, the top-level index of its arrival at each closing boundary (its first rendezvous
        op after the section's own ops)."""
        out: dict[str, tuple[int, ...]] = {}
        closing = [(b, self.instances[b].template) for b in self.boundaries]
        for who in self.participants:
            key = f"{who[0]}.{who[1].value}"
            starts = self.section_starts[key]
            ops = [t.get(who, 0) for t in self.template_ops]
            out[key] = tuple([starts[b] + ops[t] for b, t in closing])
        return out

    def summary(self) -> tuple[int, int]:
        """(engine programs, ops) of the expansion (``program_summary``), from the templates alone."""
        per = [sum(1 for ep in t.programs for _ in walk(ep.ops)) for t in self.templates]
        ops = sum(per[i.template] for i in self.instances)
        ops += len(self.boundaries) * (3 * len(self.participants) + len(self.sites) + 2)
        return len(self.participants), ops

    # ------------------------------------------------------------------------------------------- expansion

    def instance_program(self, k: int) -> Program:
        """Section ``k`` alone in the program's tensor and trip names (its template renamed; the template's own ids):
        what ``compose`` was given for it."""
        tmap, kmap = self.names(k)
        return renamed(self.templates[self.instances[k].template], tmap, kmap, self.instances[k].name)

    def expand(self) -> Program:
        """The program this document stands for (module docstring), built once and kept."""
        return self._expanded

    @functools.cached_property
    def _expanded(self) -> Program:
        parts = self.participants
        index = {p: i for i, p in enumerate(parts)}
        root = parts[0]
        gather, release = self.gather, self.release
        n_parts = len(parts)
        ops: list[list[Op]] = [[] for _ in parts]
        sources: list[list[Sources]] = [[] for _ in parts]
        starts: list[list[int]] = [[] for _ in parts]
        buffers: list[Buffer] = []
        memory: list[BufferAt] = []
        semaphores: list[Semaphore] = []
        groups: list[Group] = []
        last = len(self.instances) - 1
        kclose = 0
        for k, inst in enumerate(self.instances):
            t = self.templates[inst.template]
            nb, ns, ng = self.shifts[k]
            mem = {m.buf: m for m in t.memory}
            for b in t.buffers:
                buffers.append(Buffer(b.id + nb, f"s{k}.{b.name}", b.site, b.cb, b.page_tiles, b.capacity, b.dtype,
                                      b.space, None if b.alias_of is None else b.alias_of + nb, k, b.persistent))
                m = mem.get(b.id)
                if m is not None:
                    memory.append(BufferAt(m.buf + nb, m.offset, m.size))
            semaphores += [Semaphore(s.id + ns, f"s{k}.{s.name}", s.sites, s.init, s.role, k, s.host_init)
                           for s in t.semaphores]
            groups += [Group(g.id + ng, g.sender, g.rect, g.loopback) for g in t.groups]
            for i in range(n_parts):
                starts[i].append(len(ops[i]))
            for ep in t.programs:
                i = index[(ep.site, ep.engine)]
                sources[i].append(shifted(ep.sources, len(ops[i])))
                ops[i].extend(self.instance_ops(k, ep.ops))
            if inst.barrier_after and k < last:
                kclose += 1
                for i, who in enumerate(parts):
                    ops[i].extend(rendezvous_tail(gather, release, root[0], self.sites, n_parts, who == root, kclose))
        semaphores += self.rendezvous_semaphores
        programs = tuple(EngineProgram(p[0], p[1], tuple(ops[i]), tuple(starts[i]), merged(sources[i]))
                         for i, p in enumerate(parts))
        return Program(self.name, self.target, self.tensors, tuple(buffers), tuple(semaphores), tuple(groups),
                       self.trips, programs, self.sections, tuple(memory), self.resident)

    # ------------------------------------------------------------------------------------------- accesses

    def accesses(self, t: int) -> tuple[frozenset[str], frozenset[str]]:
        """(tensors read, tensors written) by template ``t``'s ops, in the template's names."""
        return self._accesses[t]

    @functools.cached_property
    def _accesses(self) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
        return tuple(tensor_accesses(t) for t in self.templates)

    def instance_accesses(self, k: int) -> tuple[frozenset[str], frozenset[str]]:
        """(tensors read, tensors written) by instance ``k``, in the program's names."""
        tmap, _ = self.names(k)
        reads, writes = self.accesses(self.instances[k].template)
        return frozenset(tmap[x] for x in reads if x in tmap), frozenset(tmap[x] for x in writes if x in tmap)

    def roles(self) -> dict[str, Role]:
        return {t.name: t.role for t in self.tensors}


def indirect(op: Op) -> bool:
    """Whether ``op`` has an indirect address (``Dynamic``: an index read at run time)."""
    addr = getattr(op, "addr", None)
    return addr is not None and addr.dynamic is not None


def renamed(p: Program, tensors: dict[str, str], trips: dict[str, str], name: str) -> Program:
    """``p`` named ``name`` with its tensors and trips renamed by ``tensors`` / ``trips`` (one to one; every name
    ``p`` declares is a key), its declarations and every op that names one (the index tensor of an indirect address
    included); ids, sites and everything else as they are."""
    ren = Renaming(tensor=tensors.__getitem__, trip=trips.__getitem__)
    dynamic = any(indirect(op) for ep in p.programs for op in walk(ep.ops))

    def ops(xs: tuple[Op, ...]) -> tuple[Op, ...]:
        out = ren.ops(xs)
        return tuple(dynamic_renamed(op, tensors) for op in out) if dynamic else out

    return attrs.evolve(p, name=name, tensors=tuple(attrs.evolve(x, name=tensors[x.name]) for x in p.tensors),
                        trips=tuple(attrs.evolve(x, name=trips[x.name]) for x in p.trips),
                        programs=tuple(attrs.evolve(ep, ops=ops(ep.ops)) for ep in p.programs))


def dynamic_renamed(op: Op, tmap: dict[str, str]) -> Op:
    """``op`` with the index tensor of its indirect address renamed by ``tmap`` (a name not in it, a value the host
    sets, is kept), loop and if bodies included."""
    from verispatial.ir.ops import CONTAINERS

    if isinstance(op, CONTAINERS):
        return attrs.evolve(op, body=tuple(dynamic_renamed(o, tmap) for o in op.body))
    addr = getattr(op, "addr", None)
    if addr is None or addr.dynamic is None or addr.dynamic.name not in tmap:
        return op
    return attrs.evolve(op, addr=attrs.evolve(addr, dynamic=attrs.evolve(addr.dynamic, name=tmap[addr.dynamic.name])))


def iter_leaves(ops: tuple[Op, ...]) -> Iterator[Op]:
    """Every op of ``ops`` that is not a loop or an if, in program order (``walk`` without the containers)."""
    from verispatial.ir.ops import CONTAINERS

    for op in walk(ops):
        if not isinstance(op, CONTAINERS):
            yield op


def document_summary(p: Program | TemplatedProgram) -> tuple[int, int]:
    """(engine programs, ops) of a program or of a templated program's expansion (``program_summary``)."""
    from verispatial.ir.program import program_summary

    return p.summary() if isinstance(p, TemplatedProgram) else program_summary(p)


def section_role(program: Role, read: bool, written: bool) -> Role:
    """The role a tensor of a composed program has in one of its sections, as compile gives a section its tensors:
    one the section writes is its output (a state stays a state; one it also reads is an activation of it), one it
    only reads its input (a param stays a param). The inverse of what ``compose`` joins (``passes/compose.py``: a
    tensor written and read across sections is an activation, written only an output), so a templated program's
    templates say no more than its expansion (``templated_of``, ``canonical_template``)."""
    if written:
        if program == Role.STATE:
            return Role.STATE
        return Role.ACTIVATION if read else Role.OUTPUT
    return Role.PARAM if program == Role.PARAM else Role.INPUT


def _appearance(programs: Iterable[EngineProgram], tensors: Container[str]) -> tuple[list[str], list[str]]:
    """(tensor names, trip names) ``programs`` name, each once, in order of first appearance (programs in order, each
    op list walked in order; an op's tensor before the index tensor of its indirect address); tensors only those in
    ``tensors``."""
    named: dict[str, None] = {}
    trips: dict[str, None] = {}
    for ep in programs:
        for op in walk(ep.ops):
            t = getattr(op, "tensor", None)
            if isinstance(t, str):
                named[t] = None
            addr = getattr(op, "addr", None)
            if addr is not None and addr.dynamic is not None and addr.dynamic.name in tensors:
                named[addr.dynamic.name] = None
            c = getattr(op, "count", None)
            trip = c if isinstance(c, str) else getattr(c, "trip", None)
            if isinstance(trip, str):
                trips[trip] = None
    return [x for x in named if x in tensors], list(trips)


def canonical_template(t: Program, roles: Mapping[str, Role]) -> tuple[Program, list[int], list[int]]:
    """Template ``t`` as a templated program states it: the tensors and trips its ops name, in order of first
    appearance (``_appearance``), each tensor with its ``section_role`` (``roles``: the program's role of each of
    ``t``'s tensors, by ``t``'s name), its semaphores of no section (the expansion puts each in its instance's).
    Everything else as it is. Also returns, per new tensor and per new trip, its index in ``t`` (to rebind an
    instance: ``Instance.tensors`` and ``trips`` follow the template's order). What ``templated_of`` derives from an
    expansion, so 3 -> 2 -> 3 is the identity."""
    tix = {x.name: i for i, x in enumerate(t.tensors)}
    kix = {x.name: i for i, x in enumerate(t.trips)}
    order, trip_order = _appearance(t.programs, tix)
    trip_order = [x for x in trip_order if x in kix]
    reads, writes = tensor_accesses(t)
    tensors = tuple(attrs.evolve(t.tensors[tix[x]], role=section_role(roles[x], x in reads, x in writes))
                    for x in order)
    sems = tuple(attrs.evolve(x, section=None) for x in t.semaphores)
    out = attrs.evolve(t, tensors=tensors, trips=tuple(t.trips[kix[x]] for x in trip_order), semaphores=sems)
    return out, [tix[x] for x in order], [kix[x] for x in trip_order]


def templated_of(p: Program) -> TemplatedProgram | str:
    """The templated form of composed program ``p`` (stated in full, format version 2): each section cut out in its
    own ids (its buffers, semaphores and groups shifted back to 0, names without ``s<k>.``), sections equal up to
    their tensor names one template, bound by their own names — or why there is none (a sentence). Whatever is
    returned expands to ``p`` exactly (``expand`` is compared with ``p`` before it is returned), so the form says no
    more and no less than ``p``. Linear in ``p``'s ops."""
    n = len(p.sections)
    if n < 2:
        return "a templated program joins two sections or more"
    if [s.barrier_after for s in p.sections] != [True] * (n - 1) + [False]:
        return "a templated program closes every section but the last with a rendezvous (one section per phase)"
    if any(len(ep.section_starts) != n for ep in p.programs):
        return "an engine program does not state where each section starts"
    nb = _ranges([b.section for b in p.buffers], n)
    ns = _ranges([s.section for s in p.semaphores if s.section is not None], n)
    if nb is None or ns is None:
        return "the sections' buffers or semaphores are not numbered section by section"
    if [s.section for s in p.semaphores[ns[-1]:]] != [None, None]:
        return "the program-wide semaphores are not the rendezvous' two, after the sections' own"
    used = [-1] * n  # the highest group each section's ops name
    for ep in p.programs:
        for k in range(n):
            lo = ep.section_starts[k]
            hi = ep.section_starts[k + 1] if k + 1 < n else len(ep.ops)
            for op in walk(ep.ops[lo:hi]):
                g = getattr(op, "group", None)
                if isinstance(g, int):
                    used[k] = max(used[k], g)
    ng = [0]
    for k in range(n):
        ng.append(max(ng[-1], used[k] + 1))
    ng[-1] = len(p.groups)
    parts = sorted({(ep.site, ep.engine) for ep in p.programs}, key=participant_order)
    root = parts[0]
    sites = len({s for s, _ in parts})
    by_key = {(ep.site, ep.engine): ep for ep in p.programs}
    tensors = {t.name: t for t in p.tensors}
    trip_of = {t.name: t for t in p.trips}
    sections: list[tuple[Program, tuple[str, ...], tuple[str, ...]]] = []
    for k, sec in enumerate(p.sections):
        b0, s0, g0 = nb[k], ns[k], ng[k]
        ren = Renaming(buffer=_minus(b0), semaphore=_minus(s0), group=_minus(g0))
        programs = []
        for who in parts:
            ep = by_key[who]
            lo = ep.section_starts[k]
            hi = ep.section_starts[k + 1] if k + 1 < n else len(ep.ops)
            if k < n - 1:
                hi -= 3 + (sites + 2 if who == root else 0)  # the rendezvous tail the expansion adds back
            if hi > lo:
                local = tuple(((path[0] - lo, *path[1:]), loc) for path, loc in ep.sources if lo <= path[0] < hi)
                programs.append(EngineProgram(ep.site, ep.engine, ren.ops(ep.ops[lo:hi]), (), local))
        named, trips = _appearance(programs, tensors)
        prefix = f"s{k}."
        bufs = p.buffers[b0:nb[k + 1]]
        sems = p.semaphores[s0:ns[k + 1]]
        if any(not b.name.startswith(prefix) for b in bufs) or any(not y.name.startswith(prefix) for y in sems):
            return f"section {k} ({sec.name}) names its buffers or semaphores other than s{k}.<name>"
        reads, writes = tensor_accesses(Program(sec.name, p.target, programs=tuple(programs)))
        t = Program(
            sec.name, p.target, tuple(attrs.evolve(tensors[x], role=section_role(tensors[x].role, x in reads,
                                                                                 x in writes)) for x in named),
            tuple(Buffer(x.id - b0, x.name[len(prefix):], x.site, x.cb, x.page_tiles, x.capacity, x.dtype, x.space,
                         None if x.alias_of is None else x.alias_of - b0, 0, x.persistent, scratch=x.scratch)
                  for x in bufs),
            tuple(Semaphore(x.id - s0, x.name[len(prefix):], x.sites, x.init, x.role, None, x.host_init) for x in sems),
            tuple(Group(x.id - g0, x.sender, x.rect, x.loopback) for x in p.groups[g0:ng[k + 1]]),
            tuple(trip_of[x] for x in trips if x in trip_of), tuple(programs),
            memory=tuple(BufferAt(m.buf - b0, m.offset, m.size) for m in p.memory if b0 <= m.buf < nb[k + 1]))
        sections.append((t, tuple(x.name for x in t.tensors), tuple(x.name for x in t.trips)))
    templates: list[Program] = []
    index: dict[str, int] = {}
    instances: list[Instance] = []
    for k, (t, tnames, knames) in enumerate(sections):
        # Equal up to tensor and trip names: the same value (its repr: every field, sources too) once they are
        # numbered in order of declaration.
        shape = repr(renamed(t, {x: f"t{i}" for i, x in enumerate(tnames)},
                             {x: f"k{i}" for i, x in enumerate(knames)}, "section"))
        j = index.get(shape)
        if j is None:
            j = index[shape] = len(templates)
            templates.append(t)
        instances.append(Instance(p.sections[k].name, j, tnames, knames, k < n - 1))
    tp = TemplatedProgram(p.name, p.target, p.tensors, p.trips, tuple(templates), tuple(instances), p.resident)
    if tp.expand() != p:
        return "the program is not the expansion of its sections cut apart (not joined as compose joins them)"
    return tp


def _minus(d: int) -> Callable[[int], int]:
    return lambda x: x - d


def _ranges(owners: list[int | None], n: int) -> list[int] | None:
    """Where each of ``n`` sections' entities start in a list numbered section by section (one more entry: the end
    of the last), or None when ``owners`` is not ordered by section."""
    out = [0] * (n + 1)
    last = -1
    for i, k in enumerate(owners):
        if k is None or k < last or not 0 <= k < n:
            return None
        while last < k:
            last += 1
            out[last] = i
    for j in range(last + 1, n + 1):
        out[j] = len(owners)
    return out
