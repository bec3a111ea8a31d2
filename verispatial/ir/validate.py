"""Structural validation: every relation between entities, each violation named (DESIGN §4).

``validate`` never raises on a structurally bad program; it returns every ``IrViolation`` it finds.
Semantic obligations (deadlock, ordering, overlap, ...) are the checker's, not this module's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from verispatial.errors import IrViolation
from verispatial.ir.core import Role, Site
from verispatial.ir.ids import op_ids
from verispatial.ir.ops import (
    ID_BUFFER,
    ID_GROUP,
    ID_SEMAPHORE,
    AcquireAcc,
    Compute,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    ReadTiles,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    TripCount,
    WriteTiles,
    count_max,
    count_trip,
)
from verispatial.ir.program import Buffer, EngineProgram, Group, Program, Semaphore, walk

#: Reports one violation: (entity, rule).
Report = Callable[[str, str], None]


def _in_mesh(p: Program, s: Site) -> bool:
    return 0 <= s.x < p.target.mesh[0] and 0 <= s.y < p.target.mesh[1]


def validate(p: Program) -> list[IrViolation]:
    """All structural violations of ``p`` (empty when it is well formed)."""
    out: list[IrViolation] = []

    def bad(entity: str, rule: str) -> None:
        out.append(IrViolation(entity, rule))

    dense: tuple[tuple[str, Sequence[Buffer | Semaphore | Group]], ...] = (
        ("buffer", p.buffers), ("semaphore", p.semaphores), ("group", p.groups))
    for kind, items in dense:
        for i, it in enumerate(items):
            if it.id != i:
                bad(f"{kind} {it.id}", f"ids are dense: expected id {i} at position {i}")
    for name, n in Counter(t.name for t in p.tensors).items():
        if n > 1:
            bad(f"tensor {name}", "tensor names are unique")
    for name, n in Counter(t.name for t in p.trips).items():
        if n > 1:
            bad(f"trip {name}", "trip names are unique")
    for trip in p.trips:
        if trip.max < 0:
            bad(f"trip {trip.name}", f"max must be >= 0, got {trip.max}")
    for t in p.tensors:
        if t.dtype not in p.target.tile_bytes:
            bad(f"tensor {t.name}", f"dtype {t.dtype!r} is not one of target {p.target.name}'s")
        if any(d <= 0 for d in t.shape):
            bad(f"tensor {t.name}", f"every dimension is positive, got {list(t.shape)}")

    phases = p.phase_of_section()

    def phase(section: int | None) -> int | None:
        return phases[section] if section is not None and 0 <= section < len(phases) else None

    seen_cb: set[tuple[Site, int | None, int]] = set()
    for b in p.buffers:
        e = f"buffer {b.id} ({b.name})"
        if not _in_mesh(p, b.site):
            bad(e, f"site {b.site} is outside the {p.target.mesh[0]}x{p.target.mesh[1]} mesh")
        if b.page_tiles < 1:
            bad(e, f"page_tiles must be >= 1, got {b.page_tiles}")
        if not 1 <= b.capacity < 65536:
            bad(e, f"capacity must be in [1, 65535] pages (16-bit CB counters), got {b.capacity}")
        if b.dtype not in p.target.tile_bytes:
            bad(e, f"dtype {b.dtype!r} is not one of target {p.target.name}'s")
        if not 0 <= b.cb < p.target.max_cbs:
            bad(e, f"cb index must be in [0, {p.target.max_cbs}), got {b.cb}")
        # Buffers of different phases may reuse a cb index, as they reuse bytes: no op of one phase names the other's.
        if (b.site, phase(b.section), b.cb) in seen_cb:
            bad(e, f"cb index {b.cb} is used twice on site {b.site} in one phase")
        seen_cb.add((b.site, phase(b.section), b.cb))
        if not 0 <= b.section < len(p.sections):
            bad(e, f"section {b.section} does not exist ({len(p.sections)} sections)")
        if b.alias_of is not None:
            if not 0 <= b.alias_of < len(p.buffers) or b.alias_of == b.id:
                bad(e, f"alias_of {b.alias_of} is not another buffer")
            else:
                a = p.buffers[b.alias_of]
                if a.site != b.site or a.space != b.space:
                    bad(e, f"alias_of {a.id} lives on another site or space")
                elif b.dtype in p.target.tile_bytes and a.dtype in p.target.tile_bytes:
                    if p.buffer_bytes(a) != p.buffer_bytes(b) or a.page_tiles != b.page_tiles:
                        bad(e, f"alias_of {a.id} must have the same page size and capacity (page for page)")
                if a.alias_of is not None:
                    bad(e, f"alias_of {a.id} which is itself an alias (alias the root buffer)")

    # Hardware semaphore slots per site: a program-wide semaphore holds one in every phase, a section's only in its
    # own phase (the next phase may take the slot; its words must then be back at their initial values, which the
    # checker's balance obligation shows).
    wide: Counter[Site] = Counter()
    per_phase: Counter[tuple[Site, int]] = Counter()
    for s in p.semaphores:
        e = f"semaphore {s.id} ({s.name})"
        if not s.sites:
            bad(e, "has no site")
        if s.section is not None and not 0 <= s.section < len(p.sections):
            bad(e, f"section {s.section} does not exist ({len(p.sections)} sections)")
        for site in s.sites:
            ph = phase(s.section)
            if s.section is None:
                wide[site] += 1
            elif ph is not None:
                per_phase[(site, ph)] += 1
            if not _in_mesh(p, site):
                bad(e, f"site {site} is outside the mesh")
        if len(set(s.sites)) != len(s.sites):
            bad(e, "lists a site twice")
    sites_used = set(wide) | {site for site, _ in per_phase}
    for site in sorted(sites_used, key=lambda x: (x.y, x.x)):
        most = max([per_phase[(site, ph)] for ph in set(phases)] or [0])
        n = wide[site] + most
        if n > p.target.max_semaphores:
            bad(f"site {site}", f"{n} semaphores live at once (in one phase) exceed the target's {p.target.max_semaphores}")

    for g in p.groups:
        e = f"group {g.id}"
        if not _in_mesh(p, g.sender):
            bad(e, f"sender {g.sender} is outside the mesh")
        x0, y0, x1, y1 = g.rect
        if not (_in_mesh(p, Site(x0, y0)) and _in_mesh(p, Site(x1, y1))):
            bad(e, f"rectangle {list(g.rect)} leaves the mesh")
        elif not g.destinations():
            bad(e, "a multicast has at least one destination (num_dests = 0 hangs)")
        elif g.loopback and g.destinations() == (g.sender,):
            bad(e, "a loopback multicast to the sender alone is undefined (hangs or no-ops have been seen): "
                   "the rectangle needs another site")

    if p.memory:
        idx = Counter(m.buf for m in p.memory)
        for b in p.buffers:
            if idx[b.id] != 1:
                bad(f"buffer {b.id} ({b.name})", f"appears {idx[b.id]} times in the memory map, expected once")
        for m in p.memory:
            if not 0 <= m.buf < len(p.buffers):
                bad(f"memory entry for buffer {m.buf}", "no such buffer")
                continue
            b = p.buffers[m.buf]
            if b.dtype in p.target.tile_bytes and m.size != p.buffer_bytes(b):
                bad(f"buffer {b.id} ({b.name})",
                    f"memory map size {m.size} B != capacity x page bytes = {p.buffer_bytes(b)} B")

    _check_resident(p, bad)

    keys = Counter((ep.site, ep.engine) for ep in p.programs)
    for (site, eng), n in keys.items():
        if n > 1:
            bad(f"program {site}.{eng.value}", "one program per (site, engine)")
    trips = {t.name for t in p.trips}
    tensors = {t.name for t in p.tensors}
    for ep in p.programs:
        if not _in_mesh(p, ep.site):
            bad(f"program {ep.key}", f"site {ep.site} is outside the mesh")
        if ep.section_starts:
            if len(ep.section_starts) != len(p.sections):
                bad(f"program {ep.key}",
                    f"section_starts has {len(ep.section_starts)} entries for {len(p.sections)} sections")
            if list(ep.section_starts) != sorted(ep.section_starts) or ep.section_starts[0] != 0:
                bad(f"program {ep.key}", "section_starts start at 0 and never decrease")
            if ep.section_starts and ep.section_starts[-1] > len(ep.ops):
                bad(f"program {ep.key}", "section_starts point past the end of the op list")
        _check_ops(p, ep, ep.ops, (), "ops", trips, tensors, bad)
        _check_uses(p, ep, bad)
    _check_word_range(p, bad)
    return out


def _check_resident(p: Program, report: Report) -> None:
    """Each resident tensor is declared and resident once, on a site that runs an engine program, over sections that
    exist, inside the site's usable local memory ``[reserved_base, local_bytes)``, aligned, and ``size`` is the
    tensor's bytes. Whether it is disjoint from the buffers and other resident tensors of its phases is the memory
    obligation's (certify/memory.py)."""
    tensors = {t.name: t for t in p.tensors}
    sites = {ep.site for ep in p.programs}
    times = Counter(r.tensor for r in p.resident)
    t = p.target
    for r in p.resident:
        e = f"resident {r.tensor}"
        if r.tensor not in tensors:
            report(e, "is not a declared tensor")
            continue
        if times[r.tensor] > 1:
            report(e, f"is resident {times[r.tensor]} times, expected once")
        if r.site not in sites:
            report(e, f"site {r.site} runs no engine program (a resident tensor lives on a participating site)")
        if not 0 <= r.first_section <= r.last_section < len(p.sections):
            report(e, f"sections {r.first_section}..{r.last_section} are not a range of the {len(p.sections)} "
                      "sections")
        if r.offset < t.reserved_base or r.offset + r.size > t.local_bytes:
            report(e, f"occupies [{r.offset}, {r.offset + r.size}) outside usable local memory "
                      f"[{t.reserved_base}, {t.local_bytes})")
        if r.offset % t.alignment:
            report(e, f"offset {r.offset} is not {t.alignment}-byte aligned")
        tensor = tensors[r.tensor]
        if tensor.dtype in t.tile_bytes and r.size != p.tensor_bytes(tensor):
            report(e, f"size {r.size} B != the tensor's {tensor.tiles(t.tile)} tiles x "
                      f"{t.bytes_per_tile(tensor.dtype)} B = {p.tensor_bytes(tensor)} B")


#: A semaphore is one 32-bit word per site (reference §1.2: L1 semaphores are uint32); larger values wrap.
WORD_MAX = 2**32 - 1


def _check_word_range(p: Program, report: Report) -> None:
    """Every semaphore value a program names fits the 32-bit word, and no word can be counted past it: the
    initial value (or the largest value a SemSet writes) plus every increment aimed at the word, each counted as
    often as its loops can run (trips at their max), stays <= 2**32 - 1. Bounds the interpreter's unbounded
    integers to what the hardware word holds, so a wrap can never be proved away."""
    trip_max = {t.name: t.max for t in p.trips}
    start: dict[tuple[int, Site], int] = {}
    incs: dict[tuple[int, Site], int] = {}
    for s in p.semaphores:
        if s.init > WORD_MAX:
            report(f"semaphore {s.id} ({s.name})", f"init {s.init} exceeds the 32-bit word (max {WORD_MAX})")
        for site in s.sites:
            start[(s.id, site)] = s.init

    def visit(ep: EngineProgram, ops: tuple[Op, ...], times: int, where: str, ranges: dict[str, int]) -> None:
        for i, op in enumerate(ops):
            e = f"program {ep.key} {where}[{i}] {type(op).__name__}"
            if isinstance(op, Loop):
                n = max(count_max(op.count, trip_max), 0) if count_trip(op.count) in trip_max or isinstance(
                    op.count, int) else 0
                visit(ep, op.body, times * n, f"{where}[{i}].body", {**ranges, op.var: max(n - 1, 0)})
            elif isinstance(op, If):
                visit(ep, op.body, times, f"{where}[{i}].body", ranges)
            elif isinstance(op, (SemInc, SemIncMcast)):
                if op.by > WORD_MAX:
                    report(e, f"by {op.by} exceeds the 32-bit word (max {WORD_MAX})")
                at = (op.at,) if isinstance(op, SemInc) else (
                    p.groups[op.group].destinations() if 0 <= op.group < len(p.groups) else ())
                for site in at:
                    key = (op.sem, site)
                    incs[key] = incs.get(key, 0) + op.by * times
            elif isinstance(op, (SemSet, SemWait)):
                lo = hi = op.value
                if isinstance(op, SemWait):
                    for t in op.terms:
                        top = t.coef * ranges.get(t.var, 0)
                        lo, hi = lo + min(0, top), hi + max(0, top)
                if hi > WORD_MAX:
                    report(e, f"value {hi} exceeds the 32-bit word (max {WORD_MAX})")
                if lo < 0:
                    report(e, f"threshold {lo} is negative in some iteration (a word is never below 0)")
                if isinstance(op, SemSet):
                    key = (op.sem, ep.site)
                    start[key] = max(start.get(key, 0), op.value)

    for ep in p.programs:
        visit(ep, ep.ops, 1, "ops", {})
    for (sem, site), total in sorted(incs.items(), key=lambda kv: (kv[0][0], kv[0][1].x, kv[0][1].y)):
        if start.get((sem, site), 0) + total > WORD_MAX:
            report(f"semaphore {sem} at {site}", f"can be counted to {start.get((sem, site), 0) + total} "
                                                 f"(start + every increment, loops at their max), past the 32-bit "
                                                 f"word (max {WORD_MAX})")


def _check_uses(p: Program, ep: EngineProgram, report: Report) -> None:
    """Relations an op has with what it names beyond ids: a buffer is used only in its own phase (the memory
    proof lets buffers of different phases share bytes), inputs and params are never written, outputs never read
    (a tensor both written and read is an activation)."""
    phases = p.phase_of_section()
    roles = {t.name: t.role for t in p.tensors}
    for i, top in enumerate(ep.ops):
        phase = phases[ep.section_of(i)] if ep.section_of(i) < len(phases) else None
        for op in walk((top,)):
            e = f"program {ep.key} ops[{i}] {type(op).__name__}"
            for kind, x in op_ids(op):
                if phase is None or not isinstance(x, int):
                    continue
                if kind == ID_BUFFER and 0 <= x < len(p.buffers):
                    sec: int | None = p.buffers[x].section
                    what = "buffer"
                elif kind == ID_SEMAPHORE and 0 <= x < len(p.semaphores):
                    sec, what = p.semaphores[x].section, "semaphore"
                else:
                    continue
                if sec is not None and 0 <= sec < len(phases) and phases[sec] != phase:
                    report(e, f"uses {what} {x} of section {sec} (phase {phases[sec]}) from phase {phase}: a {what} "
                              "is used only in its own phase")
            if isinstance(op, WriteTiles) and roles.get(op.tensor) in (Role.INPUT, Role.PARAM):
                report(e, f"writes {roles[op.tensor].value} tensor {op.tensor!r}: inputs and params are read-only")
            if isinstance(op, ReadTiles) and roles.get(op.tensor) == Role.OUTPUT:
                report(e, f"reads output tensor {op.tensor!r}: a tensor that is written and read is an activation")


_CB_SLOTS: list[tuple[Program, list[int], frozenset[tuple[Site, int, int]]]] = []


def _cb_slots(p: Program) -> tuple[list[int], frozenset[tuple[Site, int, int]]]:
    """The phase of each section and every (site, cb index, phase) some buffer of ``p`` takes (remembered for the
    last program asked about: a multicast's destinations are checked against it once per op)."""
    if _CB_SLOTS and _CB_SLOTS[0][0] is p:
        return _CB_SLOTS[0][1], _CB_SLOTS[0][2]
    ph = p.phase_of_section()
    slots = frozenset((b.site, b.cb, ph[b.section]) for b in p.buffers if 0 <= b.section < len(ph))
    _CB_SLOTS[:] = [(p, ph, slots)]
    return ph, slots


def _check_ops(p: Program, ep: EngineProgram, ops: tuple[Op, ...], loops: tuple[str, ...], where: str,
               trips: set[str], tensors: set[str], report: Report) -> None:
    nb, ns = len(p.buffers), len(p.semaphores)
    for i, op in enumerate(ops):
        e = f"program {ep.key} {where}[{i}] {type(op).__name__}"
        if isinstance(op, Loop):
            if op.var in loops:
                report(e, f"loop variable {op.var!r} shadows an enclosing loop's")
            if isinstance(op.count, str):
                if op.count not in trips:
                    report(e, f"count {op.count!r} is not a declared trip")
            elif isinstance(op.count, TripCount):
                if op.count.trip not in trips:
                    report(e, f"count reads trip {op.count.trip!r}, which is not declared")
                if op.count.scale < 1:
                    report(e, f"count scale must be >= 1, got {op.count.scale}")
            elif op.count < 0:
                report(e, f"count must be >= 0, got {op.count}")
            _check_ops(p, ep, op.body, (*loops, op.var), f"{where}[{i}].body", trips, tensors, report)
            continue
        if isinstance(op, If):
            if op.var not in loops:
                report(e, f"if tests {op.var!r}, which is not an enclosing loop variable")
            _check_ops(p, ep, op.body, loops, f"{where}[{i}].body", trips, tensors, report)
            continue
        for kind, x in op_ids(op):
            if kind == ID_BUFFER:
                if not 0 <= x < nb:
                    report(e, f"buffer {x} is not a buffer")
                elif p.buffers[x].site != ep.site:
                    report(e, f"buffer {x} lives on {p.buffers[x].site}, not on this engine's site {ep.site}")
            elif kind == ID_SEMAPHORE and not 0 <= x < ns:
                report(e, f"sem {x} is not a semaphore")
            elif kind == ID_GROUP and not 0 <= x < len(p.groups):
                report(e, f"group {x} is not a multicast group")
        for field in ("pages", "tiles"):
            v = getattr(op, field, None)
            if v is not None and v < 1:
                report(e, f"{field} must be >= 1, got {v}")
        if isinstance(op, Compute):
            for o in op.ins:
                if o.pages < 1:
                    report(e, f"operand pages must be >= 1, got {o.pages}")
        if isinstance(op, (SemInc, SemSet, SemWait, McastSetValid)) and 0 <= op.sem < ns:
            sem = p.semaphores[op.sem]
            here = op.at if isinstance(op, SemInc) else ep.site
            if here not in sem.sites:
                report(e, f"semaphore {sem.id} ({sem.name}) has no word on site {here}")
        if isinstance(op, McastSetValid) and op.src is not None and 0 <= op.src < ns \
                and ep.site not in p.semaphores[op.src].sites:
            report(e, f"source semaphore {op.src} has no word on this engine's site {ep.site}")
        if isinstance(op, SemWait):
            for t in op.terms:
                if t.var not in loops:
                    report(e, f"threshold uses {t.var!r}, which is not an enclosing loop variable")
        if isinstance(op, (McastSend, McastSetValid, SemIncMcast)) and 0 <= op.group < len(p.groups):
            g = p.groups[op.group]
            dests = g.destinations()
            if g.sender != ep.site:
                report(e, f"group {g.id}'s sender is {g.sender}, not this engine's site {ep.site}")
            if op.num_dests != len(dests):
                report(e, f"num_dests {op.num_dests} disagrees with group {g.id}'s {len(dests)} destinations (a write "
                          "barrier waits for exactly num_dests acknowledgements)")
            if isinstance(op, SemIncMcast) and g.loopback:
                report(e, f"group {g.id} is loopback: noc_semaphore_inc_multicast's sender is never in its rectangle")
            for d in dests:
                if isinstance(op, McastSend) and 0 <= op.buf < nb:
                    src = p.buffers[op.buf]
                    ph, slots = _cb_slots(p)
                    if not 0 <= src.section < len(ph) or (d, src.cb, ph[src.section]) not in slots:
                        report(e, f"destination {d} has no buffer with cb index {src.cb} in this phase")
                if isinstance(op, (McastSetValid, SemIncMcast)) and 0 <= op.sem < ns and d not in p.semaphores[op.sem].sites:
                    report(e, f"destination {d} has no word of semaphore {op.sem}")
        if isinstance(op, (ReadTiles, WriteTiles)):
            if op.tensor not in tensors:
                report(e, f"tensor {op.tensor!r} is not declared")
            for t in op.addr.terms:
                if t.var not in loops:
                    report(e, f"address uses {t.var!r}, which is not an enclosing loop variable")
            if op.addr.dynamic is not None and op.addr.dynamic.lo > op.addr.dynamic.hi:
                report(e, "dynamic address range has lo > hi")
        if isinstance(op, AcquireAcc):
            if op.tiles < 1:
                report(e, "tiles must be >= 1")
            if op.dtype not in p.target.tile_bytes:
                report(e, f"dtype {op.dtype!r} is not one of target {p.target.name}'s")
