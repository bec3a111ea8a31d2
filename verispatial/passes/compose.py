"""``compose``: verified sections become ONE deployable program — the persistent-decoder form (DESIGN §6, issue 8).

The unit of lowering is a section; the unit of deployment is a program. Each section arrives scheduled and certified
on its own; this pass joins them without re-deriving any of it:

- tensors are unified BY NAME. The producing section's declaration decides the dtype (it is the fact about the bytes
  in memory); a carried state keeps its source declaration's initial value (the writer's placeholder never
  overwrites it); readers alone may disagree only in float width, and the wider wins; anything else is a
  ``tensor-conflict``. A reader whose buffer then holds tiles of another size than the tensor's is refused by
  the joined program's validation (a NoC transfer moves the tensor's tiles as they are: no rounding on the way
  in). Trips and ``Dynamic`` address parts are unified by name
  too (they name one runtime value); a trip declared with two maxima is a ``trip-conflict``.
- roles are derived from what the sections do: carried (``state``) -> state; written and read -> activation; written
  only -> output; otherwise the first declared input/param role.
- every id space is shifted — buffers (and ``alias_of``), semaphores, multicast groups — through the one generic
  renamer ``verispatial.ir.ids.Renaming``, which maps exactly the op fields tagged ``metadata["id"]``; under
  ``round_robin`` placement the sites are renamed by the same renamer.
- engine programs are concatenated per (site, engine) in section order, and every closing boundary gets the
  rendezvous of :func:`rendezvous_ops`. ``barrier_after[k] = False`` leaves boundary ``k`` open: section ``k`` runs
  concurrently with ``k + 1`` (one phase).
- memory: sections a rendezvous separates reuse the same local memory (buffers of different phases may share bytes
  and circular-buffer indices, as ``validate`` counts them per (site, phase)); sections of ONE phase that share a
  site get distinct cb indices and their buffers laid out one past another per memory space, and the phase's
  high-water mark is held against the site's usable memory.
- residency (``verispatial.passes.residency``) keeps the activations that fit in local memory over their live
  ranges and places carried state once for the whole deployment.

It refuses by name (``ComposeRefused``, one line naming the rule), never by dropping a section. Sources: the seed
``compose.rs`` (behaviour), tt-metal ``tt_metal/hw/inc/dataflow_api.h`` (``noc_semaphore_inc``,
``noc_semaphore_wait_min``, ``noc_async_atomic_barrier``: the rendezvous ops).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from verispatial.errors import ComposeRefused
from verispatial.ir.core import Engine, Role, SemRole, Site, Space
from verispatial.ir.ids import Renaming
from verispatial.ir.limits import NAME_MAX
from verispatial.ir.ops import Op, ReadTiles, WriteTiles
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
    tensor_accesses,
    walk,
)
from verispatial.ir.source import Sources, merged, shifted
from verispatial.ir.target import Target
from verispatial.ir.templated import Instance, TemplatedProgram, canonical_template, rendezvous_tail
from verispatial.ir.validate import validate

PLACEMENTS = ("stacked", "round_robin")

#: Engine order inside a site for the participant order: reader, compute, writer.
ENGINE_ORDER = {Engine.READER: 0, Engine.COMPUTE: 1, Engine.WRITER: 2}

#: Float dtypes and their widths in bits (a reader of another float width rounds on the way in).
FLOAT_BITS = {"bf16": 16, "fp16": 16, "fp32": 32, "bfp8_b": 8, "bfp4_b": 4}

Participant = tuple[Site, Engine]
Fragment = dict[str, Any]


def participant_order(p: Participant) -> tuple[int, int, int]:
    """The rendezvous order of a participant: site row, site column, then reader, compute, writer."""
    return (p[0].y, p[0].x, ENGINE_ORDER[p[1]])


def participant_key(p: Participant) -> str:
    """The engine-program key of a participant, e.g. ``(0,1).reader``."""
    return f"{p[0]}.{p[1].value}"


@attrs.frozen
class Rendezvous:
    """The program-wide rendezvous of a composed program: semaphore ids of the ``gather`` word (on the root's site)
    and the ``release`` words (one on each participating site), the participants in order (the root first) and the
    distinct participating sites in site order."""

    gather: int
    release: int
    participants: tuple[Participant, ...]
    sites: tuple[Site, ...]

    @property
    def root(self) -> Participant:
        return self.participants[0]


def rendezvous_ops(rv: Rendezvous, who: Participant, k: int) -> tuple[Op, ...]:
    """The ops participant ``who`` appends, as the LAST top-level ops of the section it closes, at the ``k``-th
    closing boundary (``k = 1, 2, ...``) of a composed program. This exact shape is what the compositional checker
    recognises; it must not change without changing that checker.

    Every participant arrives at the root: ``SemInc(gather, at=root_site, by=1)``, ``AtomicBarrier()``. The root then
    waits for all ``P`` arrivals of this boundary, ``SemWait(gather, ge, k * P)``, releases each of the ``S``
    participating sites once in site order, ``SemInc(release, at=s, by=1)``, and ``AtomicBarrier()``. Finally every
    participant waits for its own site's ``k``-th release, ``SemWait(release, ge, k)``. Per boundary that is
    ``2P + S + 1`` increments and waits (barriers are neither), and ``P + S`` marked-graph places: ``P`` arrivals
    into the root's gather wait, ``S`` releases each read by the waits of its site — never ``P * S``.

    Both words only count up (the thresholds are cumulative, so nothing resets them inside the kernel and no reset
    can race an increment); they end at ``k_max * P`` and ``k_max`` and are re-initialized by the host at the next
    launch (``Semaphore.host_init``; docs/checker.md). Vendor calls: ``noc_semaphore_inc``,
    ``noc_async_atomic_barrier``, ``noc_semaphore_wait_min`` (tt-metal ``tt_metal/hw/inc/dataflow_api.h``).
    """
    # One definition with the templated form's expansion (``ir/templated.py``), which emits the same ops.
    return rendezvous_tail(rv.gather, rv.release, rv.root[0], rv.sites, len(rv.participants), who == rv.root, k)


# ------------------------------------------------------------------------------------------------ tensors


@attrs.define
class _Decl:
    """A merged tensor declaration while the sections are read in order."""

    tensor: Tensor
    section: int  # the section whose declaration it came from
    has_writer: bool


def _wider_float(a: str, b: str) -> str | None:
    """The wider of two floats of different widths (it holds every value the narrower does); None otherwise."""
    wa, wb = FLOAT_BITS.get(a), FLOAT_BITS.get(b)
    if wa is None or wb is None or wa == wb:
        return None
    return a if wa > wb else b


def _conflict(name: str, have: Tensor, have_k: int, got: Tensor, got_k: int, why: str) -> ComposeRefused:
    return ComposeRefused("tensor-conflict",
                          f"tensor {name!r}: section {have_k} declares {list(have.shape)} {have.dtype}, section {got_k} "
                          f"{list(got.shape)} {got.dtype} ({why})", section=got_k)


def unify_tensors(sections: Sequence[Program], state: Sequence[str]) -> tuple[Tensor, ...]:
    """The composed program's tensors, in order of first declaration, with their dtypes, initial values and roles
    decided as the module docstring says; ``ComposeRefused`` (``tensor-conflict``, ``unknown-state``)."""
    return unify_declarations([(sec.tensors, *tensor_accesses(sec)) for sec in sections], state)


#: One section's tensors as ``unify_declarations`` reads them: its declarations, the names it reads, the names it writes.
Declared = tuple[Sequence[Tensor], set[str] | frozenset[str], set[str] | frozenset[str]]


def unify_declarations(sections: Sequence[Declared], state: Sequence[str]) -> tuple[Tensor, ...]:
    """``unify_tensors`` of sections given as (declarations, tensors read, tensors written) each."""
    merged: dict[str, _Decl] = {}
    reads_in: dict[str, list[int]] = {}
    writes_in: dict[str, list[int]] = {}
    first_role: dict[str, Role] = {}
    for k, (decls, reads, writes) in enumerate(sections):
        for name in reads:
            reads_in.setdefault(name, []).append(k)
        for name in writes:
            writes_in.setdefault(name, []).append(k)
        for t in decls:
            writes_it = t.name in writes
            if t.role in (Role.INPUT, Role.PARAM):
                first_role.setdefault(t.name, t.role)
            d = merged.get(t.name)
            if d is None:
                merged[t.name] = _Decl(t, k, writes_it)
                continue
            have = d.tensor
            if have.shape != t.shape:
                raise _conflict(t.name, have, d.section, t, k, "the shapes differ")
            if writes_it and not d.has_writer:
                # The producer decides the bytes; the source declaration's initial value survives the writer's
                # placeholder (a section always declares what it fills without one).
                if have.dtype != t.dtype and (FLOAT_BITS.get(have.dtype) is None or FLOAT_BITS.get(t.dtype) is None):
                    raise _conflict(t.name, have, d.section, t, k, "a reader and the producer disagree beyond a "
                                                                   "float's width")
                init = t.init if t.init is not None else have.init
                merged[t.name] = _Decl(attrs.evolve(t, init=init), k, True)
            elif have.dtype != t.dtype:
                if writes_it and d.has_writer:
                    raise _conflict(t.name, have, d.section, t, k, "two producers write it at different dtypes")
                if d.has_writer:
                    # A later reader of another float width rounds on the way in; an integer never does.
                    if FLOAT_BITS.get(have.dtype) is None or FLOAT_BITS.get(t.dtype) is None:
                        raise _conflict(t.name, have, d.section, t, k, "a reader and the producer disagree beyond "
                                                                       "a float's width")
                    continue
                wider = _wider_float(have.dtype, t.dtype)
                if wider is None:
                    raise _conflict(t.name, have, d.section, t, k, "readers alone may differ only in a float's width")
                if wider != have.dtype:
                    merged[t.name] = _Decl(attrs.evolve(have, dtype=wider), d.section, False)
    carried = set(state)
    unknown = sorted(carried - set(merged))
    if unknown:
        raise ComposeRefused("unknown-state", f"carried state {unknown[0]!r} is not a tensor of any section")
    out: list[Tensor] = []
    for name, d in merged.items():
        written, read = bool(writes_in.get(name)), bool(reads_in.get(name))
        if name in carried:
            role = Role.STATE
        elif written and read:
            role = Role.ACTIVATION
        elif written:
            role = Role.OUTPUT
        else:
            role = first_role.get(name, Role.INPUT)
        out.append(attrs.evolve(d.tensor, role=role))
    return tuple(out)


def unify_trips(sections: Sequence[Program]) -> tuple[Trip, ...]:
    """Trips unified by name (one runtime count); ``ComposeRefused`` (``trip-conflict``) for one name with two
    maxima."""
    out: dict[str, tuple[Trip, int]] = {}
    for k, sec in enumerate(sections):
        for t in sec.trips:
            have = out.get(t.name)
            if have is None:
                out[t.name] = (t, k)
            elif have[0].max != t.max:
                raise ComposeRefused("trip-conflict", f"trip {t.name!r}: section {have[1]} declares max {have[0].max}, "
                                                      f"section {k} max {t.max}", section=k)
    return tuple(t for t, _ in out.values())


# ------------------------------------------------------------------------------------------------ layout


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _sites_of(sec: Program) -> set[Site]:
    out = {ep.site for ep in sec.programs} | {b.site for b in sec.buffers}
    for s in sec.semaphores:
        out.update(s.sites)
    return out


def _site_map(placement: str, k: int, sec: Program, target: Target) -> Callable[[Site], Site] | None:
    """The site renaming of section ``k`` (None: identity)."""
    if placement == "stacked":
        return None
    sites = _sites_of(sec)
    if len(sites) > 1:
        raise ComposeRefused("round-robin-one-site", f"section {k} ({sec.name}) runs on {len(sites)} sites; "
                                                     "round_robin moves one-site sections only", section=k)
    cols, rows = target.mesh
    dest = Site((k % (cols * rows)) % cols, (k % (cols * rows)) // cols)
    if sites == {dest}:
        return None
    return lambda _s: dest


@attrs.frozen
class _Shift:
    """How section ``k``'s ids, sites, cb indices and byte offsets move into the composed program."""

    buffer: int
    semaphore: int
    group: int
    site: Callable[[Site], Site] | None
    cb: dict[int, int]
    offset: dict[Space, int]

    def renaming(self) -> Renaming:
        b, s, g = self.buffer, self.semaphore, self.group
        ren = Renaming(buffer=lambda x: x + b, semaphore=lambda x: x + s, group=lambda x: x + g)
        return ren if self.site is None else attrs.evolve(ren, site=self.site)

    def identity(self) -> bool:
        return not (self.buffer or self.semaphore or self.group) and self.site is None

    def at(self, s: Site) -> Site:
        return s if self.site is None else self.site(s)


def _phases(n: int, barrier_after: Sequence[bool] | None) -> tuple[list[bool], list[int]]:
    """(closes[k], phase[k]): whether a rendezvous closes section ``k``, and its phase index."""
    if barrier_after is not None and len(barrier_after) not in (n - 1, n):
        raise ComposeRefused("barrier-after", f"barrier_after has {len(barrier_after)} entries for {n} sections "
                                              f"(expected {n - 1} or {n})")
    closes = [k < n - 1 and (barrier_after is None or bool(barrier_after[k])) for k in range(n)]
    phase, p = [], 0
    for k in range(n):
        phase.append(p)
        if closes[k]:
            p += 1
    return closes, phase


def _layout(sections: Sequence[Program], sites: list[Callable[[Site], Site] | None], phase: list[int],
            target: Target) -> tuple[list[dict[int, int]], list[dict[Space, int]]]:
    """Per section: its cb index map and its byte shift per memory space. Sections of one phase that share a site
    get distinct cb indices and their buffers moved past the earlier ones' — by one amount over all the section's
    sites, so a multicast still lands at its sender's address and in the buffer of its cb index. Refuses a phase
    that needs more cb indices than a site has (``phase-overflows-cbs``)."""
    used_cb: dict[tuple[Site, int], set[int]] = {}
    end: dict[tuple[Site, Space, int], int] = {}
    cbmaps: list[dict[int, int]] = []
    shifts: list[dict[Space, int]] = []
    for k, sec in enumerate(sections):
        ph = phase[k]

        def at(s: Site, k: int = k) -> Site:
            f = sites[k]
            return s if f is None else f(s)
        mine = {at(b.site) for b in sec.buffers}
        taken = set().union(*(used_cb.get((s, ph), set()) for s in mine)) if mine else set()
        needed = sorted({b.cb for b in sec.buffers})
        cbmap = {cb: cb for cb in needed if cb not in taken}
        free = [i for i in range(target.max_cbs) if i not in taken and i not in cbmap]
        for cb in needed:
            if cb in cbmap:
                continue
            if not free:
                raise ComposeRefused("phase-overflows-cbs",
                                     f"section {k} ({sec.name}) shares a site with earlier sections of its phase and "
                                     f"needs more than the site's {target.max_cbs} circular-buffer indices", section=k)
            cbmap[cb] = free.pop(0)
        cbmaps.append(cbmap)
        for b in sec.buffers:
            used_cb.setdefault((at(b.site), ph), set()).add(cbmap[b.cb])
        mem = {m.buf: m for m in sec.memory}
        shift: dict[Space, int] = {}
        for space in (Space.LOCAL, Space.ACC):
            bufs = [b for b in sec.buffers if b.space == space and b.id in mem]
            if not bufs:
                continue
            prior = max((end.get((at(b.site), space, ph), 0) for b in bufs), default=0)
            low = min(mem[b.id].offset for b in bufs)
            shift[space] = _align(prior - low, target.alignment) if prior > low else 0
            for b in bufs:
                key = (at(b.site), space, ph)
                end[key] = max(end.get(key, 0), mem[b.id].offset + shift[space] + mem[b.id].size)
        shifts.append(shift)
    return cbmaps, shifts


def _check_phase_memory(p: Program) -> None:
    """The high-water mark of every (site, phase) held against the site's usable local memory."""
    phases = p.phase_of_section()
    at = {m.buf: m for m in p.memory}
    high: dict[tuple[Site, int], int] = {}
    for b in p.buffers:
        m = at.get(b.id)
        if m is None or b.space != Space.LOCAL:
            continue
        key = (b.site, phases[b.section])
        high[key] = max(high.get(key, 0), m.offset + m.size)
    t = p.target
    for (site, ph), top in sorted(high.items(), key=lambda kv: (kv[0][1], kv[0][0].y, kv[0][0].x)):
        if top > t.local_bytes:
            secs = [k for k, x in enumerate(phases) if x == ph]
            raise ComposeRefused("phase-overflows-memory",
                                 f"phase {ph} (sections {secs[0]}..{secs[-1]}) needs {top - t.reserved_base} bytes of "
                                 f"local memory on site {site}, which has {t.local_bytes - t.reserved_base} usable "
                                 f"(space local)", section=secs[-1])


# ------------------------------------------------------------------------------------------------ certificate fragment

_TOKEN = re.compile(r"sem(\d+)@\((\d+),(\d+)\)|\((\d+),(\d+)\)\.(reader|compute|writer)(\[(\d+)|\+\d+)?|"
                    r"\bcb(\d+)\b|\bb(\d+)\b|\bg(\d+)\b|\((\d+),(\d+)\)|\bphase(\d+)\b")


@attrs.frozen
class _Relabel:
    """How one section's names (counters, engine keys, op paths, sites, phases) read in the composed program."""

    shift: _Shift
    starts: dict[str, int]  # composed engine key -> index of the section's first top-level op there
    phase: int
    tensors: frozenset[str] = frozenset()  # names kept as they are (a tensor called b1 is not buffer 1)

    def site(self, x: int, y: int) -> Site:
        return self.shift.at(Site(x, y))

    def key(self, key: str) -> str:
        m = re.fullmatch(r"\((\d+),(\d+)\)\.(reader|compute|writer)", key)
        if m is None:
            return key
        return f"{self.site(int(m[1]), int(m[2]))}.{m[3]}"

    def op(self, ref: Mapping[str, Any]) -> dict[str, Any]:
        key = self.key(str(ref["engine"]))
        path = list(ref["path"])
        if path:
            path[0] += self.starts.get(key, 0)
        return {**ref, "engine": key, "path": path}

    def text(self, s: str) -> str:
        """``s`` (an obligation name or counter) with every id, engine key, op path, site and phase in it read in
        the composed program; ``:``-separated parts that are tensor names are kept."""
        return ":".join(part if part in self.tensors else self._tokens(part) for part in s.split(":"))

    def _tokens(self, s: str) -> str:
        def sub(m: re.Match[str]) -> str:
            if m[1] is not None:
                return f"sem{int(m[1]) + self.shift.semaphore}@{self.site(int(m[2]), int(m[3]))}"
            if m[4] is not None:
                key = f"{self.site(int(m[4]), int(m[5]))}.{m[6]}"
                tail = m[7] or ""
                if m[8] is not None:
                    tail = f"[{int(m[8]) + self.starts.get(key, 0)}"
                return key + tail
            if m[9] is not None:
                return f"cb{int(m[9]) + self.shift.buffer}"
            if m[10] is not None:
                return f"b{int(m[10]) + self.shift.buffer}"
            if m[11] is not None:
                return f"g{int(m[11]) + self.shift.group}"
            if m[12] is not None:
                return str(self.site(int(m[12]), int(m[13])))
            return f"phase{self.phase}"
        return _TOKEN.sub(sub, s)


@attrs.frozen
class _Views:
    """What ``derive_places`` reads of an analysis: the program, its engine views and its semaphore words (no
    solver context is needed to name the places)."""

    program: Program
    views: dict[str, Any]
    words: dict[Any, Any]


def _section_places(sec: Program, cert: Mapping[str, Any] | None) -> list[Any]:
    """The section's places, grouped (``certificate.derive_place_groups``): its certificate's (a version-1
    certificate's op pairs grouped), else derived from the section."""
    from verispatial.certify.certificate import derive_place_groups, group_places

    if cert is not None and isinstance(cert.get("places"), list):
        places = list(cert["places"])
        return group_places(places) if cert.get("version") == 1 else places
    from verispatial.certify.semaphores import classify
    from verispatial.certify.structure import engine_views

    views = engine_views(sec)
    return derive_place_groups(_Views(sec, views, classify(sec, views)))  # type: ignore[arg-type]


def content_key(x: Any) -> str:
    """SHA-256 of ``x``'s canonical JSON (sorted keys, no spaces): the content address of a certificate part."""
    return hashlib.sha256(json.dumps(x, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _rendezvous_places(rv: Rendezvous, boundaries: list[tuple[int, int, dict[str, int]]]) -> list[dict[str, Any]]:
    """``P`` arrival places and ``S`` release places per closing boundary, naming the composed ops."""
    root = participant_key(rv.root)
    p, s = len(rv.participants), len(rv.sites)
    keys = [participant_key(w) for w in rv.participants]
    at_site: dict[Site, list[str]] = {}
    for w, key in zip(rv.participants, keys, strict=True):
        at_site.setdefault(w[0], []).append(key)
    gather = f"sem{rv.gather}@{rv.root[0]}"
    release = [f"sem{rv.release}@{site}" for site in rv.sites]
    out: list[dict[str, Any]] = []
    for b, k, first in boundaries:
        # Top-level op indices (rendezvous_ops): every participant's arrival at first[key]; the root's gather wait 2
        # further, its release of site j 3 + j further, its release wait 4 + S further; anyone else's release wait 2
        # further.
        wait_at = first[root] + 2
        for key in keys:
            out.append({"kind": "rendezvous-arrival", "boundary": b, "k": k, "counter": gather,
                        "from": {"engine": key, "path": [first[key]], "op": "SemInc"},
                        "to": {"engine": root, "path": [wait_at], "op": "SemWait"},
                        "tokens": 0, "weight": "increments", "threshold": k * p})
        for j, site in enumerate(rv.sites):
            readers = at_site[site]
            out.append({"kind": "rendezvous-release", "boundary": b, "k": k, "counter": release[j],
                        "from": {"engine": root, "path": [first[root] + 3 + j], "op": "SemInc"},
                        "to": [{"engine": r, "path": [first[r] + (2 if r != root else 4 + s)], "op": "SemWait"}
                               for r in readers],
                        "arcs": "read", "tokens": 0, "weight": "increments", "threshold": k})
    return out


# ------------------------------------------------------------------------------------------------ the pass


def _check_section(k: int, sec: Program, target: Target) -> None:
    """``ComposeRefused`` naming section ``k`` when it cannot be composed as it is: another target, itself composed,
    not scheduled, or holding a sharded buffer (its bytes are its tensor's shard: the layout would move it)."""
    if sec.target != target:
        raise ComposeRefused("target", f"section {k} ({sec.name}) is for target {sec.target.name}, not "
                                       f"{target.name}", section=k)
    if len(sec.sections) > 1:
        raise ComposeRefused("section-composed", f"section {k} ({sec.name}) is itself composed of "
                                                 f"{len(sec.sections)} sections: compose those instead", section=k)
    if not sec.programs:
        raise ComposeRefused("section-not-scheduled", f"section {k} ({sec.name}) has no engine programs",
                             section=k)
    if sec.buffers and not sec.memory:
        raise ComposeRefused("section-not-scheduled", f"section {k} ({sec.name}) has {len(sec.buffers)} buffers "
                                                      "and no memory map", section=k)
    sharded = next((b for b in sec.buffers if b.shard is not None), None)
    if sharded is not None:
        # Its bytes are its tensor's shard (docs/semantics.md "Sharded buffers"): moving it to another site, cb
        # index or offset, as the layout below does, would place it off the tensor.
        raise ComposeRefused("section-sharded", f"section {k} ({sec.name}) has sharded buffer {sharded.id} "
                                                f"({sharded.name}) on tensor {sharded.shard.tensor!r}: compose "  # type: ignore[union-attr]
                                                "does not move a buffer that sits on a tensor's shard", section=k)


def compose(sections: Sequence[Program], *, state: Sequence[str] = (), placement: str = "stacked",
            barrier_after: Sequence[bool] | None = None, target: Target,
            certificates: Sequence[Mapping[str, Any] | None] | None = None,
            residency: bool = True) -> tuple[Program, Fragment]:
    """Join scheduled, individually certified ``sections`` into one program on ``target`` and return it with its
    certificate fragment.

    ``state`` names the tensors carried across steps (role ``state``). ``placement``: ``stacked`` (every section keeps
    its sites; sequential sections reuse local memory across the rendezvous) or ``round_robin`` (section ``k`` moved
    onto mesh site ``k mod |mesh|``, row-major; one-site sections only). ``barrier_after[k]`` False leaves boundary
    ``k`` open (``None``: every boundary closes; ``N - 1`` or ``N`` entries). ``certificates``, one per section (or
    ``None`` entries), supply the sections' places and obligations for the fragment; a section without one has its
    places derived from its program and its obligations listed as unknown. ``residency`` runs the residency pass.

    The fragment lists each section's obligations with their ids shifted into the composed program and its places by
    content address: ``sections[k].places`` is the SHA-256 (``content_key``) of the section's grouped places in its
    own ids and op paths (its ``shift`` and the program's ``section_starts`` place them in the composed program), and
    ``places`` maps each address to those places once, so identical sections (every layer of a decode step) share
    one entry; then the participants and the rendezvous places (``P`` arrivals and ``S`` releases per boundary).

    Raises ``ComposeRefused`` naming the rule: ``no-sections``; ``placement``; ``barrier-after``; ``target``;
    ``section-composed``; ``section-not-scheduled`` (no engine programs, or buffers without a memory map);
    ``section-sharded`` (a buffer on a tensor's shard, which the layout would move off it);
    ``round-robin-one-site``; ``tensor-conflict`` (name, both shapes and dtypes); ``unknown-state``;
    ``trip-conflict``; ``phase-overflows-cbs``; ``phase-overflows-memory`` (site, space, bytes, capacity);
    ``invalid-program`` (every violation of the joined program).
    """
    n = len(sections)
    if n == 0:
        raise ComposeRefused("no-sections", "nothing to compose")
    if placement not in PLACEMENTS:
        raise ComposeRefused("placement", f"placement {placement!r} is not one of {', '.join(PLACEMENTS)}")
    if certificates is not None and len(certificates) != n:
        raise ComposeRefused("certificates", f"{len(certificates)} certificates for {n} sections")
    for k, sec in enumerate(sections):
        _check_section(k, sec, target)
    closes, phase = _phases(n, barrier_after)
    tensors = unify_tensors(sections, state)
    trips = unify_trips(sections)
    site_maps = [_site_map(placement, k, sec, target) for k, sec in enumerate(sections)]
    cbmaps, offsets = _layout(sections, site_maps, phase, target)

    shifts: list[_Shift] = []
    nb = ns = ng = 0
    for k, sec in enumerate(sections):
        shifts.append(_Shift(nb, ns, ng, site_maps[k], cbmaps[k], offsets[k]))
        nb, ns, ng = nb + len(sec.buffers), ns + len(sec.semaphores), ng + len(sec.groups)
    order, rv = _participants(sections, shifts, ns, any(closes))
    buffers, memory, semaphores, groups = _shifted_entities(sections, shifts, rv)
    programs, boundaries, section_starts = _joined_programs(sections, shifts, order, closes, rv)
    program = Program(
        name=_composed_name(sections, tensors), target=target, tensors=tensors, buffers=buffers,
        semaphores=semaphores, groups=groups, trips=trips, programs=programs,
        sections=tuple(SectionSpan(sec.name, closes[k]) for k, sec in enumerate(sections)), memory=memory)
    _check_phase_memory(program)
    res_frag: Fragment | None = None
    if residency:
        from verispatial.passes.residency import Residency

        program, res_frag = Residency().run(program, target)
    violations = validate(program)
    if violations:
        raise ComposeRefused("invalid-program", f"the joined program breaks {len(violations)} structural rule(s): "
                                                + "; ".join(str(v) for v in violations), violations=violations)

    frag_sections, place_table = _fragment_sections(sections, shifts, section_starts, phase, closes, certificates)
    fragment: Fragment = {
        "pass": "compose",
        "placement": placement,
        "sections": frag_sections,
        "places": place_table,
        "participants": [participant_key(p) for p in order],
        "rendezvous": None if rv is None else _rendezvous_fragment(rv, boundaries),
        "residency": res_frag,
    }
    return program, fragment


def _rendezvous_fragment(rv: Rendezvous, boundaries: list[tuple[int, int, dict[str, int]]]) -> dict[str, Any]:
    """The fragment's rendezvous: its words, root and sites, each closing boundary's ops and places (``P`` arrivals
    and ``S`` releases) and the places themselves."""
    order = rv.participants
    return {
        "gather": rv.gather, "release": rv.release, "root": participant_key(rv.root),
        "sites": [[s.x, s.y] for s in rv.sites],
        "boundaries": [{"after_section": b, "k": k, "ops": 2 * len(order) + len(rv.sites) + 1,
                        "places": len(order) + len(rv.sites)} for b, k, _ in boundaries],
        "places": _rendezvous_places(rv, boundaries),
        "reinit": "host: both words only count up and are re-initialized at launch (Semaphore.host_init)",
    }


def _participants(sections: Sequence[Program], shifts: list[_Shift], semaphores: int, closes: bool,
                  ) -> tuple[tuple[Participant, ...], Rendezvous | None]:
    """The participants: every (site, engine) that runs any section, in site order, then reader, compute, writer; and
    the rendezvous when some boundary ``closes``, its two words numbered after the sections' ``semaphores``."""
    seen: set[Participant] = set()
    for k, sec in enumerate(sections):
        seen.update((shifts[k].at(ep.site), ep.engine) for ep in sec.programs)
    order = tuple(sorted(seen, key=participant_order))
    rv_sites = tuple(sorted({s for s, _ in order}, key=lambda s: (s.y, s.x)))
    return order, (Rendezvous(semaphores, semaphores + 1, order, rv_sites) if closes else None)


def _shifted_entities(sections: Sequence[Program], shifts: list[_Shift], rv: Rendezvous | None,
                      ) -> tuple[tuple[Buffer, ...], tuple[BufferAt, ...], tuple[Semaphore, ...], tuple[Group, ...]]:
    """The buffers (with their memory map), semaphores and groups of the composed program: each section's, shifted
    into the composed ids, sites, cb indices and bytes (``shifts[k]``), then the rendezvous's two words (``rv``)."""
    buffers: list[Buffer] = []
    memory: list[BufferAt] = []
    semaphores: list[Semaphore] = []
    groups: list[Group] = []
    for k, sec in enumerate(sections):
        sh = shifts[k]
        mem = {m.buf: m for m in sec.memory}
        for b in sec.buffers:
            buffers.append(Buffer(b.id + sh.buffer, f"s{k}.{b.name}", sh.at(b.site), sh.cb[b.cb], b.page_tiles,
                                  b.capacity, b.dtype, b.space,
                                  None if b.alias_of is None else b.alias_of + sh.buffer, k, b.persistent,
                                  scratch=b.scratch))
            m = mem.get(b.id)
            if m is not None:
                memory.append(BufferAt(m.buf + sh.buffer, m.offset + sh.offset.get(b.space, 0), m.size))
        for s in sec.semaphores:
            semaphores.append(Semaphore(s.id + sh.semaphore, f"s{k}.{s.name}", tuple(sh.at(x) for x in s.sites),
                                        s.init, s.role, k, s.host_init))
        for g in sec.groups:
            x0, y0, x1, y1 = g.rect
            a, c = sh.at(Site(x0, y0)), sh.at(Site(x1, y1))
            groups.append(Group(g.id + sh.group, sh.at(g.sender), (a.x, a.y, c.x, c.y), g.loopback))
    if rv is not None:
        semaphores.append(Semaphore(rv.gather, "rendezvous_gather", (rv.root[0],), 0, SemRole.RENDEZVOUS_GATHER, None,
                                    host_init=True))
        semaphores.append(Semaphore(rv.release, "rendezvous_release", rv.sites, 0, SemRole.RENDEZVOUS_RELEASE, None,
                                    host_init=True))
    return tuple(buffers), tuple(memory), tuple(semaphores), tuple(groups)


def _joined_programs(sections: Sequence[Program], shifts: list[_Shift], order: tuple[Participant, ...],
                     closes: list[bool], rv: Rendezvous | None,
                     ) -> tuple[tuple[EngineProgram, ...], list[tuple[int, int, dict[str, int]]], list[dict[str, int]]]:
    """The engine programs of the participants (``order``), joined section by section, each closing section ending in
    the rendezvous; with the boundaries (section, closing count ``k``, each participant's first rendezvous op) and
    each section's first op per participant key (``section_starts``)."""
    index = {p: i for i, p in enumerate(order)}
    ops: list[list[Op]] = [[] for _ in order]
    sources: list[list[Sources]] = [[] for _ in order]
    starts: list[list[int]] = [[] for _ in order]
    boundaries: list[tuple[int, int, dict[str, int]]] = []
    section_starts: list[dict[str, int]] = []
    kclose = 0
    for k, sec in enumerate(sections):
        sh = shifts[k]
        ren = None if sh.identity() else sh.renaming()
        for i in range(len(order)):
            starts[i].append(len(ops[i]))
        section_starts.append({participant_key(p): starts[i][k] for i, p in enumerate(order)})
        for ep in sec.programs:
            i = index[(sh.at(ep.site), ep.engine)]
            sources[i].append(shifted(ep.sources, len(ops[i])))
            ops[i].extend(ep.ops if ren is None else ren.ops(ep.ops))
        if closes[k]:
            assert rv is not None
            kclose += 1
            first: dict[str, int] = {}
            for i, who in enumerate(order):
                first[participant_key(who)] = len(ops[i])
                ops[i].extend(rendezvous_ops(rv, who, kclose))
            boundaries.append((k, kclose, first))
    programs = tuple(EngineProgram(p[0], p[1], tuple(ops[i]), tuple(starts[i]), merged(sources[i]))
                     for i, p in enumerate(order))
    return programs, boundaries, section_starts


def _composed_name(sections: Sequence[Program], tensors: tuple[Tensor, ...]) -> str:
    """The composed program's name: the one section's, else the output the last section writes (or the first
    output), ``_<n>_sections``; a label of at most NAME_MAX characters (an output tensor's name may take them all)."""
    n = len(sections)
    _, last_writes = tensor_accesses(sections[-1])
    outputs = [t.name for t in tensors if t.role == Role.OUTPUT]
    out_name = next((t for t in outputs if t in last_writes), outputs[0] if outputs else "result")
    return sections[0].name if n == 1 else f"{out_name[: NAME_MAX - len(f'_{n}_sections')]}_{n}_sections"


def _fragment_sections(sections: Sequence[Program], shifts: list[_Shift], section_starts: list[dict[str, int]],
                       phase: list[int], closes: list[bool], certificates: Sequence[Mapping[str, Any] | None] | None,
                       ) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """The fragment's per-section entries (index, name, phase, shift, places by content address, obligations with
    their names shifted into the composed program) and the table of places by content address, each once."""
    frag_sections = []
    place_table: dict[str, list[Any]] = {}
    for k, sec in enumerate(sections):
        cert = certificates[k] if certificates is not None else None
        rl = _Relabel(shifts[k], section_starts[k], phase[k], frozenset(t.name for t in sec.tensors))
        own = _section_places(sec, cert)
        key = content_key(own)
        place_table.setdefault(key, own)
        obligations = None
        if cert is not None and isinstance(cert.get("obligations"), list):
            obligations = [{**o, "name": rl.text(str(o.get("name", "")))} for o in cert["obligations"]
                           if isinstance(o, Mapping)]
        frag_sections.append({
            "index": k, "name": sec.name, "phase": phase[k], "barrier_after": closes[k],
            "shift": {"buffers": shifts[k].buffer, "semaphores": shifts[k].semaphore, "groups": shifts[k].group,
                      "cb": {str(a): b for a, b in shifts[k].cb.items() if a != b},
                      "bytes": {sp.value: v for sp, v in shifts[k].offset.items() if v}},
            "places": key,
            "obligations": obligations,
        })
    return frag_sections, place_table


@attrs.frozen
class Compose:
    """The compose pass as an object (DESIGN §6): its options as fields, one entry point ``run(sections, target)``
    -> ``(program, fragment)``; valid (scheduled, certified sections) in, valid (one scheduled program) out. See
    :func:`compose` for the behaviour and the refusals."""

    name: str = "compose"
    state: tuple[str, ...] = ()
    placement: str = "stacked"
    barrier_after: tuple[bool, ...] | None = None

    def run(self, sections: Sequence[Program], target: Target) -> tuple[Program, Fragment]:
        return compose(sections, state=self.state, placement=self.placement, barrier_after=self.barrier_after,
                       target=target)


# ------------------------------------------------------------------------------------------- the templated form


def compose_templated(templates: Sequence[Program], instances: Sequence[Instance], *, state: Sequence[str] = (),
                      target: Target, certificates: Sequence[Mapping[str, Any] | None] | None = None,
                      residency: bool = True) -> tuple[TemplatedProgram, Fragment]:
    """``compose`` of the sections ``instances`` make of ``templates`` (each instance: a template, the tensors and
    trips its template's stand for, and whether a rendezvous closes it), with ``stacked`` placement and every
    boundary but the last closed — kept as a ``TemplatedProgram`` (``ir/templated.py``), whose expansion is the program
    ``compose`` joins from the instantiated sections, never built here: its tensors are unified, its memory checked
    per phase, its resident tensors decided and the result validated (``validate_templated``) from the templates and a
    line per section. ``certificates`` (one per template, in the template's names, or None) supply the fragment's
    places and obligations, once per template.

    Raises ``ComposeRefused`` as ``compose`` does (``no-sections``, ``target``, ``section-composed``,
    ``section-not-scheduled``, ``tensor-conflict``, ``unknown-state``, ``trip-conflict``,
    ``phase-overflows-memory``, ``invalid-program``), and ``templated-form`` for instances that are not one per
    phase with every boundary but the last closed (``compose`` joins those)."""
    from verispatial.ir.validate import validate_templated
    from verispatial.passes.residency import Residency

    n = len(instances)
    if n < 2:
        raise ComposeRefused("templated-form", f"{n} section(s): the templated form joins two or more")
    if certificates is not None and len(certificates) != len(templates):
        raise ComposeRefused("certificates", f"{len(certificates)} certificates for {len(templates)} templates")
    for k, inst in enumerate(instances):
        if inst.barrier_after != (k < n - 1):
            raise ComposeRefused("templated-form", f"section {k} ({inst.name}): every section but the last is closed "
                                                   "by a rendezvous in the templated form", section=k)
        if not 0 <= inst.template < len(templates):
            raise ComposeRefused("templated-form", f"section {k} ({inst.name}) names template {inst.template} of "
                                                   f"{len(templates)}", section=k)
    tpl: list[Program] = []
    for j, sec in enumerate(templates):
        k = next((i for i, inst in enumerate(instances) if inst.template == j), 0)
        _check_section(k, sec, target)
        # A template is one section, of the default name (the document writes none: its section is its instances').
        tpl.append(attrs.evolve(sec, sections=(SectionSpan("main"),)))
    accessed = [tensor_accesses(t) for t in tpl]
    declared: list[Declared] = []
    for inst in instances:
        t = tpl[inst.template]
        tmap = dict(zip((x.name for x in t.tensors), inst.tensors, strict=True))
        reads, writes = accessed[inst.template]
        declared.append((tuple(attrs.evolve(x, name=tmap[x.name]) for x in t.tensors),
                         {tmap[x] for x in reads}, {tmap[x] for x in writes}))
    tensors = unify_declarations(declared, state)
    trips = unify_trips([attrs.evolve(tpl[inst.template], trips=tuple(
        attrs.evolve(x, name=name) for x, name in zip(tpl[inst.template].trips, inst.trips, strict=True)))
        for inst in instances])
    # The name compose gives a joined program: its output the last section writes, else its first output.
    outputs = [t.name for t in tensors if t.role == Role.OUTPUT]
    out_name = next((t for t in outputs if t in declared[-1][2]), outputs[0] if outputs else "result")
    name = f"{out_name[: NAME_MAX - len(f'_{n}_sections')]}_{n}_sections"
    phases = list(range(n))
    ends = [_template_ends(t, target) for t in tpl]
    for k, inst in enumerate(instances):  # each phase one section: its high-water mark is its template's
        for site, top in sorted(ends[inst.template].items(), key=lambda kv: (kv[0].y, kv[0].x)):
            if top > target.local_bytes:
                raise ComposeRefused("phase-overflows-memory",
                                     f"phase {k} (sections {k}..{k}) needs {top - target.reserved_base} bytes of "
                                     f"local memory on site {site}, which has {target.local_bytes - target.reserved_base}"
                                     f" usable (space local)", section=k)
    # Each template as the templated form states it (``canonical_template``: the roles, order and sections its
    # expansion implies), so upgrading the written program to version 2 and back gives it again.
    roles = {t.name: t.role for t in tensors}
    rebind: dict[int, tuple[list[int], list[int]]] = {}
    for j in range(len(tpl)):
        first = next((i for i, inst in enumerate(instances) if inst.template == j), None)
        if first is None:
            continue
        bound = dict(zip((x.name for x in tpl[j].tensors), instances[first].tensors, strict=True))
        tpl[j], ti, ki = canonical_template(tpl[j], {x: roles[bound[x]] for x in bound})
        rebind[j] = (ti, ki)
    instances = [attrs.evolve(inst, tensors=tuple(inst.tensors[i] for i in rebind[inst.template][0]),
                              trips=tuple(inst.trips[i] for i in rebind[inst.template][1])) for inst in instances]
    tp = TemplatedProgram(name, target, tensors, trips, tuple(tpl), tuple(instances))
    res_frag: Fragment | None = None
    if residency:
        end = {(site, k): max(top, target.reserved_base) for k, inst in enumerate(instances)
               for site, top in ends[inst.template].items()}
        placed, res_frag = Residency().decide(tensors, phases, end, list(tp.sites), _templated_ranges(tp), target,
                                              tp.tensor_bytes)
        tp = attrs.evolve(tp, resident=placed)
    violations = validate_templated(tp)
    if violations:
        raise ComposeRefused("invalid-program", f"the joined program breaks {len(violations)} structural rule(s): "
                                                + "; ".join(str(v) for v in violations), violations=violations)
    place_table: dict[str, list[Any]] = {}
    frag_templates = []
    for j, t in enumerate(tpl):
        cert = certificates[j] if certificates is not None else None
        own = _section_places(t, cert)
        key = content_key(own)
        place_table.setdefault(key, own)
        obligations: dict[str, list[str]] | None = None
        if cert is not None and isinstance(cert.get("obligations"), list):
            # The section's own certificate's obligations, names by family (each template once).
            obligations = {}
            for o in sorted((o for o in cert["obligations"] if isinstance(o, Mapping)),
                            key=lambda o: (str(o.get("family")), str(o.get("name")))):
                obligations.setdefault(str(o.get("family")), []).append(str(o.get("name")))
        frag_templates.append({"index": j, "name": t.name, "places": key, "obligations": obligations})
    gather, release = tp.gather, tp.release
    fragment: Fragment = {
        "pass": "compose",
        "placement": "stacked",
        "form": "templated",
        "templates": frag_templates,
        "sections": [{"index": k, "name": inst.name, "template": inst.template, "phase": k,
                      "barrier_after": inst.barrier_after,
                      "shift": {"buffers": tp.shifts[k][0], "semaphores": tp.shifts[k][1], "groups": tp.shifts[k][2]}}
                     for k, inst in enumerate(instances)],
        "places": place_table,
        "participants": [participant_key(p) for p in tp.participants],
        "rendezvous": {
            "gather": gather, "release": release, "root": participant_key(tp.participants[0]),
            "sites": [[s.x, s.y] for s in tp.sites],
            "boundaries": [{"after_section": b, "k": k + 1, "ops": 2 * len(tp.participants) + len(tp.sites) + 1,
                            "places": len(tp.participants) + len(tp.sites)} for k, b in enumerate(tp.boundaries)],
            "places": "places: the entry of kind rendezvous",
            "reinit": "host: both words only count up and are re-initialized at launch (Semaphore.host_init)",
        },
        "residency": res_frag,
    }
    return tp, fragment


def _template_ends(t: Program, target: Target) -> dict[Site, int]:
    """Per site, one past the highest local-memory byte of template ``t``'s buffers (its phase's high-water mark)."""
    at = {m.buf: m for m in t.memory}
    out: dict[Site, int] = {}
    for b in t.buffers:
        m = at.get(b.id)
        if m is not None and b.space == Space.LOCAL:
            out[b.site] = max(out.get(b.site, 0), m.offset + m.size)
    return out


def _templated_ranges(tp: TemplatedProgram) -> dict[str, tuple[int, int, Site | None]]:
    """``residency.live_ranges`` of the expansion of ``tp``, from its templates: per accessed tensor the first and
    last section reading or writing it and the site (row, column order) of the first section's first writer."""
    per: list[tuple[frozenset[str], dict[str, Site]]] = []
    for t in tp.templates:
        touched: set[str] = set()
        writer: dict[str, Site] = {}
        for ep in t.programs:
            for op in walk(ep.ops):
                if isinstance(op, (ReadTiles, WriteTiles)):
                    touched.add(op.tensor)
                if isinstance(op, WriteTiles):
                    have = writer.get(op.tensor)
                    if have is None or (ep.site.y, ep.site.x) < (have.y, have.x):
                        writer[op.tensor] = ep.site
        per.append((frozenset(touched), writer))
    spans: dict[str, tuple[int, int]] = {}
    first_writer: dict[tuple[str, int], Site] = {}
    for k, inst in enumerate(tp.instances):
        t = tp.templates[inst.template]
        tmap = dict(zip((x.name for x in t.tensors), inst.tensors, strict=True))
        touched_by, writer = per[inst.template]
        for local in touched_by:
            g = tmap[local]
            lo, hi = spans.get(g, (k, k))
            spans[g] = (min(lo, k), max(hi, k))
            if local in writer:
                first_writer[(g, k)] = writer[local]
    return {g: (lo, hi, first_writer.get((g, lo))) for g, (lo, hi) in spans.items()}
