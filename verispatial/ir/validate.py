"""Structural validation: every relation between entities, each violation named (DESIGN §4).

``validate`` never raises on a structurally bad program; it returns every ``IrViolation`` it finds.
Semantic obligations (deadlock, ordering, overlap, ...) are the checker's, not this module's.
"""

from __future__ import annotations

import math
import operator
import typing
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from verispatial.errors import IrViolation, UnhandledOp
from verispatial.ir.core import Addr, Engine, Role, SemRole, Site, Space
from verispatial.ir.limits import (
    MESH_MAX,
    NAME_MAX,
    NEST_MAX,
    PAGES_MAX,
    RANK_MAX,
    TILES_MAX,
    U32,
    clip,
    name_rule,
    too_large,
)
from verispatial.ir.ops import (
    CONTAINERS,
    ID_BUFFER,
    ID_GROUP,
    ID_OPERANDS,
    ID_SEMAPHORE,
    ID_TENSOR,
    NOC_VCS,
    OP_TAGS,
    PATCH,
    AcquireAcc,
    AtomicBarrier,
    Compute,
    CopyTiles,
    FillTiles,
    Flush,
    If,
    InlineWrite,
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
    RemoteRead,
    Reserve,
    ScratchAccess,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
    count_max,
    count_trip,
    named_index_buffer,
    op_text,
)
from verispatial.ir.program import Buffer, EngineProgram, Group, IndexKey, Program, Semaphore, Tensor, shard_size, walk
from verispatial.ir.source import SourceLoc
from verispatial.ir.target import TARGETS, Target
from verispatial.ir.templated import TemplatedProgram

#: Reports one violation: (entity, rule).
Report = Callable[[str, str], None]

_DATA_MOVEMENT = frozenset({Engine.READER, Engine.WRITER})
_EVERY_ENGINE = frozenset(Engine)
#: Per op class, the engines that can issue it (docs/semantics.md, "Which engine issues an op"). NoC transactions —
#: reads, writes, multicasts, atomic increments, inline writes and their barriers — only the two data-movement RISCs:
#: a compute kernel (TRISC) is built without the NoC API (ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/
#: circular_buffer.h:7-19``: under ``COMPILE_FOR_TRISC`` only the circular-buffer interface and ``llk_io`` are
#: included, ``api/dataflow/noc.h`` only in the ``!COMPILE_FOR_TRISC`` branch); so are a data-movement RISC's own
#: stores into a circular buffer (``FillTiles``) and its own loads and stores between two (``CopyTiles``). The
#: accumulator (DST) ops only the compute engine, whose TRISCs own DST (``tt_metal/hw/inc/api/compute/reg_api.h``:
#: ``tile_regs_acquire`` ... ``tile_regs_release``). Circular-buffer ops and a semaphore word's local set and wait
#: (plain L1 stores and loads) every engine: compute kernels spin on and set L1 words themselves
#: (``reduce_scatter_minimal_direct_compute.cpp:25-30``, ``moe_gpt/device/kernels/compute.cpp:23-26``:
#: "Compute-side semaphore wait: spin on L1 value (no NOC API needed)").
#:
#: One exception, the compose pass's own convention: its rendezvous has every engine, compute too, increment the
#: gather word and wait for its increments (``templated.rendezvous_tail``), so a ``SemInc`` of a rendezvous word and an
#: ``AtomicBarrier`` pass on the compute engine (``engine_rule``). On tt-metal the compute kernel would hand its
#: arrival to a data-movement kernel of its core (a circular-buffer token); docs/semantics.md says so.
ISSUED_BY: dict[type, frozenset[Engine]] = {
    **{cls: _DATA_MOVEMENT for cls in (ReadTiles, WriteTiles, RemoteRead, McastSend, McastSetValid, SemInc,
                                       SemIncMcast, InlineWrite, ReadBarrier, WriteBarrier, Flush, AtomicBarrier,
                                       FillTiles, CopyTiles, ScratchAccess, SemRmw)},
    **{cls: frozenset({Engine.COMPUTE}) for cls in (AcquireAcc, Compute, PackAcc, ReleaseAcc)},
    **{cls: _EVERY_ENGINE for cls in (Reserve, Push, Wait, Pop, SemSet, SemWait, Loop, If)},
}
_RENDEZVOUS_WORDS = frozenset({SemRole.RENDEZVOUS_GATHER, SemRole.RENDEZVOUS_RELEASE})


def engine_rule(op: Op, engine: Engine, semaphores: Sequence[Semaphore] = ()) -> str | None:
    """Why ``engine`` cannot issue ``op`` (``ISSUED_BY``; ``semaphores``: the program's, for the rendezvous
    exception), or None when it can. Raises ``UnhandledOp`` for an op class the table does not know (fail closed)."""
    kinds = ISSUED_BY.get(type(op))
    if kinds is None:
        raise UnhandledOp("validate (engine kinds)", op)
    if engine in kinds:
        return None
    if engine is Engine.COMPUTE and (isinstance(op, AtomicBarrier) or (
            isinstance(op, SemInc) and 0 <= op.sem < len(semaphores) and semaphores[op.sem].role in _RENDEZVOUS_WORDS)):
        return None
    tag = OP_TAGS[type(op)]
    if engine is Engine.COMPUTE:
        return (f"{tag} is a data-movement op (a NoC transaction or a data-movement RISC's own stores): the compute "
                "engine cannot issue it")
    return (f"{tag} is a compute op (the accumulator, DST, belongs to the compute engine's TRISCs): a data-movement "
            f"engine ({engine.value}) cannot issue it")
#: A semaphore is one 32-bit word per site (reference §1.2: L1 semaphores are uint32); larger values wrap.
WORD_MAX = 2**32 - 1


def _in_mesh(p: Program, s: Site) -> bool:
    return 0 <= s.x < p.target.mesh[0] and 0 <= s.y < p.target.mesh[1]


def name_violations(p: Program) -> list[IrViolation]:
    """A violation per bad name (``limits.name_rule``), each entity named by kind and position with the name quoted
    safely (escaped, cut to 40 characters)."""
    # Every name at once first: when their text is printable ASCII and none is too long, no name breaks a rule (a
    # fixed cost of every load, worth one join and two C calls rather than a call per name).
    loop_vars = [_loop_vars(ep.ops, []) for ep in p.programs]
    if _names_pass(_entity_names(p)) and _names_pass([var for vs in loop_vars for var in vs]):
        return []
    # (kind, position, name): the entity is worded only for a bad name (thousands of buffers per load).
    named: list[tuple[str, int | str, str]] = [("program", "", p.name)]
    named += [("tensor #", i, t.name) for i, t in enumerate(p.tensors)]
    named += [("buffer ", b.id, b.name) for b in p.buffers]
    named += [("semaphore ", x.id, x.name) for x in p.semaphores]
    named += [("trip #", i, t.name) for i, t in enumerate(p.trips)]
    named += [("section ", i, x.name) for i, x in enumerate(p.sections)]
    out = []
    for kind, at, name in named:
        rule = name_rule(name)
        if rule is not None:
            out.append(IrViolation(f"{kind}{at} {clip(ascii(name), 40)}", rule))
    # Loop variables: thousands of loops reuse a few names, so each distinct name is judged once and the entity is
    # worded only for a bad one.
    rules: dict[str, str | None] = {}
    for ep, vs in zip(p.programs, loop_vars, strict=True):
        for var in vs:
            if var not in rules:
                rules[var] = name_rule(var)
            rule = rules[var]
            if rule is not None:
                out.append(IrViolation(f"{ep.site}.{ep.engine.value} loop {clip(ascii(var), 40)}", rule))
    return out


def _entity_names(p: Program) -> list[str]:
    """The names ``name_violations`` judges but the loop variables: the program's, its tensors', buffers',
    semaphores', trips' and sections'."""
    # by ``map`` of a C getter, an empty list passed over: no comprehension frame per list (a fixed cost of every
    # load, most lists short or empty)
    out = [p.name]
    for items in (p.tensors, p.buffers, p.semaphores, p.trips, p.sections):
        if items:
            out += map(_NAME, items)
    return out


_NAME = operator.attrgetter("name")


def _names_pass(names: list[str]) -> bool:
    """Whether no name of ``names`` can break ``name_rule``: their text is printable ASCII and none is too long (a
    fixed cost of every load, worth one join and two C calls rather than a call per name). False decides nothing:
    ``name_rule`` judges each name then."""
    text = "".join(names)
    # no name is longer than all of them together (most programs: no length to take)
    return text.isascii() and text.isprintable() and (len(text) <= NAME_MAX or max(map(len, names)) <= NAME_MAX)


def _loop_vars(ops: Sequence[Op], out: list[str]) -> list[str]:
    """``out`` with the variable of every loop in ``ops`` appended, in program order (``walk``'s, without a generator
    per op)."""
    leaves = _LEAVES
    for op in ops:
        if type(op) in leaves:  # most ops: one set lookup instead of two isinstance calls
            continue
        if isinstance(op, (Loop, If)):
            if isinstance(op, Loop):
                out.append(op.var)
            _loop_vars(op.body, out)
    return out


def _slots_by_init(slots: int, target: Target, by_init: dict[int, int], wide: Sequence[Semaphore | str]) -> str:
    """The slot rule's message: ``by_init`` maps an initial value to the most section words of that value in any one
    phase on the site; ``wide`` are its program-wide words (semaphores, or the names of the rendezvous words a
    templated program's composition adds), held in every phase; ``target`` gives the slot count and its source."""
    inits = ", ".join(f"{k} starting at {v}" for v, k in sorted(by_init.items()))
    names = [w if isinstance(w, str) else w.name for w in wide]
    rendezvous = all(isinstance(w, str) or w.role in (SemRole.RENDEZVOUS_GATHER, SemRole.RENDEZVOUS_RELEASE)
                     for w in wide)
    named = f"compose's rendezvous words: {', '.join(names)}" if rendezvous else ", ".join(names)
    held = f", plus {len(names)} program-wide word{'s' if len(names) != 1 else ''} held in every phase ({named})" \
        if names else ", and no program-wide word"
    source = target.sources.get("max_semaphores")
    return (f"needs {slots} semaphore slots, more than the {target.max_semaphores} of target {target.name} "
            f"(max_semaphores{': ' + source if source else ''}): per initial value, the most section words of that "
            f"value in any one phase ({inits}){held}; a later phase takes only the slot of a word with its own initial "
            "value")


def validate(p: Program) -> list[IrViolation]:
    """All structural violations of ``p`` (empty when it is well formed). A bad name (``name_violations``) is
    reported alone: every other message would print it."""
    return _validate(p)[0]


def _validate(p: Program) -> tuple[list[IrViolation], _OpPass | None]:
    """``validate``'s violations and its op walk (None when a bad name stopped it before the walk): what the walk
    saw on the way (``_OpPass.names_non_loop``) spares ``validate_templated`` a walk of its own."""
    # The loop variables' names are gathered by the op walk (``_OpPass.loop_vars``, judged after it: a bad name
    # discards every other finding), the other names judged here; only a name that may be bad is worded, by
    # ``name_violations`` (which finds the loop variables by a walk of its own).
    names = name_violations(p) if not _names_pass(_entity_names(p)) else []
    if names:
        return names, None
    out: list[IrViolation] = []

    def bad(entity: str, rule: str) -> None:
        out.append(IrViolation(entity, rule))

    dense: tuple[tuple[str, Sequence[Buffer | Semaphore | Group]], ...] = (
        ("buffer", p.buffers), ("semaphore", p.semaphores), ("group", p.groups))
    for kind, items in dense:
        for i, it in enumerate(items):
            if it.id != i:
                bad(f"{kind} {it.id}", f"ids are dense: expected id {i} at position {i}")
    _check_tensors_and_trips(p, bad, _check_target)

    phases = p.phase_of_section()

    # Sites keyed by their coordinates (a tuple of ints hashes in C; a ``Site`` through its Python ``__hash__``):
    # thousands of buffers per load.
    seen_cb: set[tuple[int, int, int | None, int]] = set()
    # A finding names a buffer by its name and site (``c_0@(0,0)``): two alike would make it name either.
    named_at: set[tuple[str, int, int, int | None]] = set()
    mesh_x, mesh_y = p.target.mesh[0], p.target.mesh[1]
    tile_bytes, max_cbs, n_sections, n_phases = p.target.tile_bytes, p.target.max_cbs, len(p.sections), len(phases)
    for b in p.buffers:
        site, section = b.site, b.section
        key = (b.name, site.x, site.y, section)
        if key in named_at:
            bad(_buffer_name(b), f"buffer names are unique on a site (within a section): another buffer on {site} is named "
                   f"{b.name!r}")
        named_at.add(key)
        if not (0 <= site.x < mesh_x and 0 <= site.y < mesh_y):  # _in_mesh
            bad(_buffer_name(b), f"site {site} is outside the {mesh_x}x{mesh_y} mesh")
        if b.page_tiles < 1:
            bad(_buffer_name(b), f"page_tiles must be >= 1, got {b.page_tiles}")
        elif b.page_tiles > U32:
            bad(_buffer_name(b), f"page_tiles {clip(str(b.page_tiles))} is too large for the model (at most {U32})")
        if not 1 <= b.capacity < 65536:
            bad(_buffer_name(b), f"capacity must be in [1, 65535] pages (16-bit CB counters), got {b.capacity}")
        if b.dtype not in tile_bytes:
            bad(_buffer_name(b), f"dtype {b.dtype!r} is not one of target {p.target.name}'s")
        if not 0 <= b.cb < max_cbs:
            bad(_buffer_name(b), f"cb index must be in [0, {max_cbs}), got {b.cb}")
        # Buffers of different phases may reuse a cb index, as they reuse bytes: no op of one phase names the other's.
        cb_key = (site.x, site.y, phases[section] if 0 <= section < n_phases else None, b.cb)  # the buffer's phase
        if cb_key in seen_cb:
            bad(_buffer_name(b), f"cb index {b.cb} is used twice on site {site} in one phase")
        seen_cb.add(cb_key)
        if not 0 <= section < n_sections:
            bad(_buffer_name(b), f"section {section} does not exist ({n_sections} sections)")
        if b.alias_of is not None:
            if not 0 <= b.alias_of < len(p.buffers) or b.alias_of == b.id:
                bad(_buffer_name(b), f"alias_of {b.alias_of} is not another buffer")
            else:
                a = p.buffers[b.alias_of]
                if a.site != b.site or a.space != b.space:
                    bad(_buffer_name(b), f"alias_of {a.id} lives on another site or space")
                elif b.dtype in p.target.tile_bytes and a.dtype in p.target.tile_bytes:
                    if p.buffer_bytes(a) != p.buffer_bytes(b) or a.page_tiles != b.page_tiles:
                        bad(_buffer_name(b), f"alias_of {a.id} must have the same page size and capacity (page for page)")
                if a.alias_of is not None:
                    bad(_buffer_name(b), f"alias_of {a.id} which is itself an alias (alias the root buffer)")

    # Hardware semaphore slots per site: a program-wide semaphore holds one in every phase, a section's only in its
    # own phase. The next phase may take the slot, but only for a word of the same initial value: the earlier word
    # is back at its initial value by then (the checker's balance obligation shows it), which is where the later one
    # must start. So a site needs, per initial value, the most words of that value in one phase (``_semaphore_slots``).
    # Sites keyed by coordinates (a tuple of ints hashes in C, a ``Site`` through its Python ``__hash__``), each
    # semaphore's entity worded only for a finding.
    twice = False  # some semaphore lists a site twice
    for s in p.semaphores:
        sites, sem_section = s.sites, s.section
        if not sites:
            bad(f"semaphore {s.id} ({s.name})", "has no site")
        if sem_section is not None and not 0 <= sem_section < n_sections:
            bad(f"semaphore {s.id} ({s.name})", f"section {sem_section} does not exist ({n_sections} sections)")
        xys = [(site.x, site.y) for site in sites]
        for site, xy in zip(sites, xys, strict=True):
            if not (0 <= xy[0] < mesh_x and 0 <= xy[1] < mesh_y):  # _in_mesh
                bad(f"semaphore {s.id} ({s.name})", f"site {site} is outside the mesh")
        if len(set(xys)) != len(xys):
            bad(f"semaphore {s.id} ({s.name})", "lists a site twice")
            twice = True
    # With every site listed once by each semaphore, a site holds at most every semaphore in one phase and takes at
    # most one slot per semaphore: no program of at most ``max_semaphores`` semaphores breaks the slot rules (each
    # needs more on one site), which are counted only for one that might.
    if twice or len(p.semaphores) > p.target.max_semaphores or not _SLOTS_QUICK:
        _semaphore_slots(p, phases, bad)

    # Each group's destinations, listed once (``_OpPass`` reads them too); only a rectangle inside the mesh is listed
    # (one reaching 2**32 columns out would be 2**32 sites; the rule below reports it).
    dests: list[tuple[Site, ...]] = []
    for g in p.groups:
        in_mesh = _rect_in_mesh(p, g)
        dests.append(g.destinations() if in_mesh else ())
        if not (0 <= g.sender.x < mesh_x and 0 <= g.sender.y < mesh_y):  # _in_mesh
            bad(f"group {g.id}", f"sender {g.sender} is outside the mesh")
        if g.rect != g.corners:
            # docs/semantics.md "Acknowledgement counts": a kernel's corners against its NoC's direction are a
            # wrap-around multicast to cores outside the rectangle (internal/debug/sanitize.h:563-564), and the format
            # carries no NoC to tell which was meant, so only the lower corner first is a rectangle
            bad(f"group {g.id}", f"rect {list(g.rect)} is not lower corner first (x0 <= x1, y0 <= y1): corners in the "
                                 "other order may be a wrap-around multicast, which the format cannot say (the "
                                 f"sites' rectangle is {list(g.corners)})")
        if not in_mesh:
            bad(f"group {g.id}", f"rectangle {list(g.rect)} leaves the mesh")
        elif not dests[-1]:
            # dataflow_api.h:921-922 (ttnn 0.81.1): "The destination range must not be just self"; the headers do not
            # say what the NoC does then, so no program holds it
            bad(f"group {g.id}", "its rectangle holds no site but its non-loopback sender: a multicast's range must "
                                 "not be just the sender (dataflow_api.h:921-922)")
        elif g.loopback and dests[-1] == (g.sender,):
            bad(f"group {g.id}", "a loopback multicast to the sender alone is undefined (hangs or no-ops have been "
                                 "seen): the rectangle needs another site")

    if p.memory:
        mapped = [m.buf for m in p.memory]
        once = set(mapped)
        # Every buffer mapped once (the common case) when the entries are distinct and name exactly the buffers' ids.
        if len(once) != len(mapped) or once != {b.id for b in p.buffers}:
            idx = Counter(mapped)
            for b in p.buffers:
                if idx[b.id] != 1:
                    bad(f"buffer {b.id} ({b.name})", f"appears {idx[b.id]} times in the memory map, expected once")
        buffers, nb = p.buffers, len(p.buffers)
        for m in p.memory:
            if not 0 <= m.buf < nb:
                bad(f"memory entry for buffer {m.buf}", "no such buffer")
                continue
            b = buffers[m.buf]
            if not -U32 <= m.offset <= U32:  # too_large
                bad(f"buffer {b.id} ({b.name})", f"memory offset {clip(str(m.offset))} is too large for the model "
                                                 f"(local addresses are 32-bit: at most {U32})")
            per_tile = tile_bytes.get(b.dtype)
            if per_tile is not None and m.size != b.capacity * b.page_tiles * per_tile:  # Program.buffer_bytes
                bad(f"buffer {b.id} ({b.name})",
                    f"memory map size {m.size} B != capacity x page bytes = {p.buffer_bytes(b)} B")

    if p.resident:  # every rule is about a resident tensor
        _check_resident(p, bad)
    if p.buffers:  # every rule is about a sharded buffer
        _check_shards(p, bad)
    # With no scratch buffer the scratch rules come down to "a scratch_access names a scratch buffer", decided below
    # from the scratch_access ops the op pass meets (its walk, not one of their own: 1.2 of validate's 15 ms on the
    # 16-layer decode step) and put here, in their place among the violations.
    scratch_at = len(out) if not p.buffers or not any([b.scratch for b in p.buffers]) else None
    if scratch_at is None:
        _check_scratch(p, bad)

    # keyed by coordinates and the engine's text (a Site and an Enum hash through Python code)
    for (x, y, eng), _n in _repeated([(ep.site.x, ep.site.y, ep.engine._value_) for ep in p.programs]) \
            if len(p.programs) > 1 else ():
        bad(f"program {Site(x, y)}.{eng}", "one program per (site, engine)")
    ops = _OpPass(p, dests, phases)
    for ep in p.programs:
        if not (0 <= ep.site.x < mesh_x and 0 <= ep.site.y < mesh_y):  # _in_mesh
            bad(f"program {ep.key}", f"site {ep.site} is outside the mesh")
        if ep.section_starts:
            if len(ep.section_starts) != len(p.sections):
                bad(f"program {ep.key}",
                    f"section_starts has {len(ep.section_starts)} entries for {len(p.sections)} sections")
            if list(ep.section_starts) != sorted(ep.section_starts) or ep.section_starts[0] != 0:
                bad(f"program {ep.key}", "section_starts start at 0 and never decrease")
            if ep.section_starts and ep.section_starts[-1] > len(ep.ops):
                bad(f"program {ep.key}", "section_starts point past the end of the op list")
        if ep.sources:
            _check_sources(ep, bad)
        ops.program(ep)
        out.extend(ops.found)
        ops.found = []
    if ops.cut_short or not _names_pass(ops.loop_vars):  # a body not walked (nested too deep): every name again
        names = name_violations(p)
        if names:
            return names, None
    if ops.incs:  # no increment, no total to judge
        ops.word_totals()
    out.extend(ops.words)
    if ops.index_uses:  # no indirect address, no index buffer rule
        ops.index_rules()
        out.extend(ops.found)
    if scratch_at is not None:
        late: list[IrViolation] = []
        if ops.cut_short:  # some body nested too deep was not walked: the rules' own walk
            _check_scratch(p, lambda entity, rule: late.append(IrViolation(entity, rule)))
        else:
            for ep, op in ops.scratch_access:
                _scratch_access_rule(p, {}, ep, op, lambda entity, rule: late.append(IrViolation(entity, rule)))
        out[scratch_at:scratch_at] = late
    return out, ops


#: Whether ``validate`` passes over the slot rules of a program that cannot break them (``_semaphore_slots``); off, every
#: program is counted (tests/test_load_agreement.py loads documents both ways).
_SLOTS_QUICK = True


def _semaphore_slots(p: Program, phases: list[int], bad: Report) -> None:
    """The semaphore slot rules of ``p`` (``phases``: ``p.phase_of_section()``), per site in row order: at most
    ``max_semaphores`` words live in one phase, and, since a later phase takes only the slot of a word with its own
    initial value, at most that many slots counted per initial value (the most words of it in one phase)."""
    # Plain dicts, not Counters: two Counters per validate were a fixed cost of every small program. Sites keyed by
    # coordinates (a tuple of ints hashes in C, a ``Site`` through its Python ``__hash__``).
    wide: dict[tuple[int, int], int] = {}
    per_phase: dict[tuple[int, int, int], int] = {}
    per_init: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    n_phases = len(phases)
    for s in p.semaphores:
        sem_section = s.section
        ph = phases[sem_section] if sem_section is not None and 0 <= sem_section < n_phases else None
        for site in s.sites:
            xy = (site.x, site.y)
            if sem_section is None:
                wide[xy] = wide.get(xy, 0) + 1
            elif ph is not None:
                key3 = (*xy, ph)
                per_phase[key3] = per_phase.get(key3, 0) + 1
                counts = per_init.setdefault(xy, {})
                counts[(ph, s.init)] = counts.get((ph, s.init), 0) + 1
    sites_used = set(wide) | {(x, y) for x, y, _ in per_phase}
    every_phase = set(phases)
    max_semaphores = p.target.max_semaphores
    for x, y in sorted(sites_used, key=lambda xy: (xy[1], xy[0])):
        if (x, y) not in per_init:  # program-wide words only (per_phase and per_init hold the same sites): one rule
            if wide[(x, y)] > max_semaphores:
                bad(f"site {Site(x, y)}", f"{wide[(x, y)]} semaphores live at once (in one phase) exceed the target's "
                                          f"{max_semaphores}")
            continue
        most = max([per_phase.get((x, y, ph), 0) for ph in every_phase] or [0])
        n = wide.get((x, y), 0) + most
        if n > max_semaphores:
            bad(f"site {Site(x, y)}", f"{n} semaphores live at once (in one phase) exceed the target's {max_semaphores}")
            continue
        by_init: dict[int, int] = {}
        for (_ph, init), k in per_init.get((x, y), {}).items():
            by_init[init] = max(by_init.get(init, 0), k)
        slots = wide.get((x, y), 0) + sum(by_init.values())
        if slots > max_semaphores:
            bad(f"site {Site(x, y)}", _slots_by_init(slots, p.target, by_init,
                                                     [s for s in p.semaphores
                                                      if s.section is None and Site(x, y) in s.sites]))


def validate_templated(tp: TemplatedProgram) -> list[IrViolation]:
    """All structural violations of a templated program (``ir/templated.py``), in the size of its templates plus a
    line per section: each template as the one-section program it is (``validate``), each section's binding of its
    template's tensors and trips to the program's (declared, one to one, the same shape, tile size and trip maximum,
    no input or param written and no output read), every section but the last closed by a rendezvous, and the
    program-wide parts (names, tensors, trips, target, the rendezvous words' semaphore slots and 32-bit range,
    resident tensors). Whatever passes here expands (``TemplatedProgram.expand``) to a program ``validate`` accepts:
    per phase the expansion is one instance of one template, renamed one to one, and what the rendezvous adds is
    checked here (tests/test_templated.py)."""
    out: list[IrViolation] = []

    def bad(entity: str, rule: str) -> None:
        out.append(IrViolation(entity, rule))

    shell = tp.shell
    # (kind, position, name): the entity is worded only for a bad name (``name_violations``).
    named: list[tuple[str, int | str, str]] = [("program", "", tp.name)]
    named += [("tensor #", i, t.name) for i, t in enumerate(tp.tensors)]
    named += [("trip #", i, t.name) for i, t in enumerate(tp.trips)]
    named += [("section ", i, x.name) for i, x in enumerate(tp.instances)]
    last_use = {inst.template: k for k, inst in enumerate(tp.instances)}
    for j, t in enumerate(tp.templates):
        # The expansion names a section's buffers and semaphores s<k>.<name>: the longest k must still fit.
        prefix = f"s{last_use.get(j, 0)}."
        buffer_kind, semaphore_kind = f"template {j} buffer ", f"template {j} semaphore "
        named += [(buffer_kind, b.id, prefix + b.name) for b in t.buffers]
        named += [(semaphore_kind, x.id, prefix + x.name) for x in t.semaphores]
    for kind, at, name in named:
        rule = name_rule(name)
        if rule is not None:
            bad(f"{kind}{at} {clip(ascii(name), 40)}", rule)
    if out:
        return out
    _check_tensors_and_trips(shell, bad, _check_target)
    # Each template's op walk where it saw every op (what its ReadTiles and WriteTiles name, gathered on the way):
    # the bindings' and resident tensors' rules read it rather than walk the template again.
    walks: list[_OpPass | None] = []
    for j, t in enumerate(tp.templates):
        where = f"template {j} ({clip(t.name, 40)})"
        if t.buffers and not t.memory:
            bad(where, f"has {len(t.buffers)} buffers and no memory map (a section is scheduled before it is composed)")
        for b in t.buffers:
            if b.shard is not None:
                # compose refuses a sharded section (section-sharded), and neither the expansion nor the slices
                # carry a shard: its rules would go unchecked.
                bad(f"{where} buffer {b.id} ({clip(b.name, 40)})",
                    f"sits on a shard of tensor {clip(repr(b.shard.tensor), 40)}: a templated program's sections are "
                    "compose's, which moves no sharded buffer (section-sharded); state the program in full (version 2)")
        found, walk = _validate(t)
        walks.append(walk if walk is not None and not walk.cut_short else None)
        for v in found:
            out.append(IrViolation(f"{where} {v.entity}", v.rule))
        # The walk saw every address unless it stopped (a bad name, a nest too deep): then ``_names_trips`` looks.
        if any(x.trip_rows is not None for x in t.tensors) or (
                walk.names_non_loop if walk is not None and not walk.cut_short else _names_trips(t)):
            # an op taken out of its template (the cut of a composition) cannot tell a trip's term from a loop's
            bad(where, "an address names a trip, or a tensor is sized by one: not supported in a templated program")
    n = len(tp.instances)
    tensors = {t.name: t for t in tp.tensors}
    trips = tp.trip_max()
    tb = tp.target.tile_bytes
    for k, inst in enumerate(tp.instances):
        e = f"section {k} ({clip(inst.name, 40)})"
        if inst.barrier_after != (k < n - 1):
            bad(e, "every section but the last is closed by a rendezvous (barrier_after true), the last is not: a "
                   "version-3 program has one section per phase")
        if not 0 <= inst.template < len(tp.templates):
            bad(e, f"template {inst.template} does not exist ({len(tp.templates)} templates)")
            continue
        t = tp.templates[inst.template]
        if len(inst.tensors) != len(t.tensors):
            bad(e, f"binds {len(inst.tensors)} tensors, its template declares {len(t.tensors)}")
            continue
        if len(inst.trips) != len(t.trips):
            bad(e, f"binds {len(inst.trips)} trips, its template declares {len(t.trips)}")
            continue
        if len(set(inst.tensors)) != len(inst.tensors) or len(set(inst.trips)) != len(inst.trips):
            bad(e, "binds two of its template's tensors (or trips) to one of the program's: the binding is one to one")
        walk = walks[inst.template]
        reads, writes = (walk.reads, walk.writes) if walk is not None else tp.accesses(inst.template)
        for local, name in zip(t.tensors, inst.tensors, strict=True):
            g = tensors.get(name)
            if g is None:
                bad(e, f"binds template tensor {local.name!r} to {clip(repr(name))}, which is not a declared tensor")
                continue
            if g.shape != local.shape:
                bad(e, f"binds template tensor {local.name!r} {list(local.shape)} to {name!r} {list(g.shape)}: the "
                       "shapes differ")
            if tb.get(g.dtype) != tb.get(local.dtype):
                bad(e, f"binds template tensor {local.name!r} ({local.dtype}) to {name!r} ({g.dtype}): a NoC transfer "
                       "moves the tensor's tiles as they are, so the tile sizes agree")
            if local.name in writes and g.role in (Role.INPUT, Role.PARAM):
                bad(e, f"writes {g.role.value} tensor {name!r}: inputs and params are read-only")
            if local.name in reads and g.role == Role.OUTPUT:
                bad(e, f"reads output tensor {name!r}: a tensor that is written and read is an activation")
        for local_trip, name in zip(t.trips, inst.trips, strict=True):
            if name not in trips:
                bad(e, f"binds template trip {local_trip.name!r} to {clip(repr(name))}, which is not a declared trip")
            elif trips[name] != local_trip.max:
                bad(e, f"binds template trip {local_trip.name!r} (max {local_trip.max}) to {name!r} (max "
                       f"{trips[name]}): the maxima differ")
    if out or not tp.participants:
        return out
    # The rendezvous: one program-wide word on the root's site, one on every participating site.
    root = tp.participants[0][0]
    closing = len(tp.boundaries)
    # Per site, the most semaphores one template has a word of there (each template's counted once per semaphore,
    # not per word; the most over templates kept as they are counted, not looked up per site and template).
    most_at: dict[Site, int] = {}
    # Per site and initial value, the most words of that value one template has there: a later phase takes only the
    # slot of a word with its own initial value (validate's slot rule).
    most_init: dict[tuple[Site, int], int] = {}
    for t in tp.templates:
        for site, n in Counter(site for x in t.semaphores for site in set(x.sites)).items():
            if n > most_at.get(site, 0):
                most_at[site] = n
        for key, n in Counter((site, x.init) for x in t.semaphores for site in set(x.sites)).items():
            if n > most_init.get(key, 0):
                most_init[key] = n
    slots_at: dict[Site, dict[int, int]] = {}
    for (site, init), n in most_init.items():
        slots_at.setdefault(site, {})[init] = n
    for site in tp.sites:
        wide = 1 + (site == root)
        most = most_at.get(site, 0)
        if wide + most > tp.target.max_semaphores:
            bad(f"site {site}", f"{wide + most} semaphores live at once (in one phase) exceed the target's "
                                f"{tp.target.max_semaphores}")
            continue
        by_init = slots_at.get(site, {})
        if wide + sum(by_init.values()) > tp.target.max_semaphores:
            words = ("rendezvous_gather", "rendezvous_release") if site == root else ("rendezvous_release",)
            bad(f"site {site}", _slots_by_init(wide + sum(by_init.values()), tp.target, by_init, words))
    if closing * len(tp.participants) > WORD_MAX:
        bad("rendezvous", f"the gather word counts to {closing * len(tp.participants)}, past the 32-bit word "
                          f"(max {WORD_MAX})")
    used: dict[str, set[int]] = {}
    # The tensors a template's ops name, found once per template (by its op walk), not once per section (243 walks
    # of the 16-layer step's templates made validate_templated 18x json.loads: 150 ms of its 157 ms).
    template_tensors: dict[int, dict[str, set[int]]] = {}
    for k, inst in enumerate(tp.instances if tp.resident else ()):
        names = dict(zip((x.name for x in tp.templates[inst.template].tensors), inst.tensors, strict=True))
        own_named = template_tensors.get(inst.template)
        if own_named is None:
            walk = walks[inst.template]
            own_named = template_tensors[inst.template] = (
                walk.tensor_sections if walk is not None else _tensor_sections(tp.templates[inst.template].programs))
        for own in own_named:
            used.setdefault(names.get(own, own), set()).add(k)
    _check_resident(shell, bad, set(tp.sites), used)
    return out


def _check_tensors_and_trips(p: Program, bad: Report,
                             target: Callable[[Program, Report], None] | None = None) -> None:
    """Tensor and trip names unique, trip maxima in range, tensor dtypes the target's and shapes in the model
    (``target``, when given, checks the target between the names and the rest: the order of ``validate``'s
    messages)."""
    tensors, trips = p.tensors, p.trips
    # no name twice in a list of at most one (most small programs: their tensors and trips)
    for name, _n in _repeated(list(map(_NAME, tensors))) if len(tensors) > 1 else ():
        bad(f"tensor {name}", "tensor names are unique")
    for name, _n in _repeated(list(map(_NAME, trips))) if len(trips) > 1 else ():
        bad(f"trip {name}", "trip names are unique")
    if target is not None:
        target(p, bad)
    if not tensors and not trips:
        return
    for trip in trips:
        if trip.max < 0:
            bad(f"trip {trip.name}", f"max must be >= 0, got {trip.max}")
        elif trip.max > U32:
            bad(f"trip {trip.name}", f"max {clip(str(trip.max))} is too large for the model (trips are 32-bit "
                                     f"runtime arguments: at most {U32})")
    tile = p.target.tile
    # A tile of each shape holds at least one element (every dimension at least 1, checked first): at most as many
    # tiles as elements, so a tensor of at most U32 elements passes the tile rule without counting its tiles.
    whole = bool(tile) and min(tile) >= 1
    for t in tensors:
        if t.dtype not in p.target.tile_bytes:
            bad(f"tensor {t.name}", f"dtype {t.dtype!r} is not one of target {p.target.name}'s")
        if len(t.shape) > RANK_MAX:
            bad(f"tensor {t.name}", f"has {len(t.shape)} dimensions, more than the model's {RANK_MAX}")
        elif t.shape and min(t.shape) <= 0:
            bad(f"tensor {t.name}", f"every dimension is positive, got {clip(str(list(t.shape)))}")
        elif not (whole and math.prod(t.shape) <= U32) and t.tiles(tile) > U32:
            bad(f"tensor {t.name}", f"shape {clip(str(list(t.shape)))} is too large for the model (at most {U32} "
                                    "tiles: tile ids are 32-bit)")
        elif t.trip_rows is not None:
            _check_trip_rows(p, t, bad)


def _repeated(keys: list[Any]) -> list[tuple[Any, int]]:
    """Each key of ``keys`` that occurs more than once, with its count, in order of first occurrence (``Counter``'s
    order); a set's size decides the common case, no key twice, without building the Counter."""
    if len(set(keys)) == len(keys):
        return []
    return [(k, n) for k, n in Counter(keys).items() if n > 1]


def _names_trips(p: Program) -> bool:
    """Whether some ``ReadTiles`` / ``WriteTiles`` address of ``p`` has a term naming no enclosing loop (a trip's,
    ``ir.core.Addr``) or some tensor is sized by a trip (``Tensor.trip_rows``)."""
    if any(t.trip_rows is not None for t in p.tensors):
        return True

    def nest(ops: tuple[Op, ...], loops: frozenset[str]) -> bool:
        for op in ops:
            if isinstance(op, (ReadTiles, WriteTiles)) and any(t.var not in loops for t in op.addr.terms):
                return True
            if isinstance(op, (Loop, If)) and nest(op.body, loops | {op.var} if isinstance(op, Loop) else loops):
                return True
        return False
    return any(nest(ep.ops, frozenset()) for ep in p.programs)


def _check_trip_rows(p: Program, t: Tensor, bad: Report) -> None:
    """A tensor sized by a trip (``Tensor.trip_rows``): a trip of the program, two dimensions, and as many tile rows
    at the trip's max as ``shape`` has (``shape`` is the tensor at the max)."""
    tr = t.trip_rows
    assert tr is not None
    trips = {x.name: x.max for x in p.trips}
    if tr.trip not in trips:
        bad(f"tensor {t.name}", f"trip_rows names trip {tr.trip!r}, which the program does not declare")
    elif tr.scale < 1:
        bad(f"tensor {t.name}", f"trip_rows scale must be >= 1, got {tr.scale}")
    elif len(t.shape) != 2:
        bad(f"tensor {t.name}", f"trip_rows needs a 2-dimensional shape, got {len(t.shape)} dimensions")
    elif tr.value(trips[tr.trip]) != -(-t.shape[0] // p.target.tile[0]):
        bad(f"tensor {t.name}", f"trip_rows gives {tr.value(trips[tr.trip])} tile rows at trip {tr.trip}'s max "
                                f"{trips[tr.trip]}, but its shape has {-(-t.shape[0] // p.target.tile[0])} (shape is "
                                "the tensor at the trip's max)")
    # where a tensor's bytes sit in local memory its size is fixed: not modelled for a tensor sized by a trip
    if any(r.tensor == t.name for r in p.resident) or any(b.shard is not None and b.shard.tensor == t.name
                                                          for b in p.buffers):
        bad(f"tensor {t.name}", "a tensor sized by a trip (trip_rows) cannot be resident or sharded")


def _check_target(p: Program, report: Report) -> None:
    """An inline target's numbers lie in the model's range (``limits.py``): a mesh of at most ``MESH_MAX`` columns and
    rows, 32-bit memory sizes, tile shapes and per-tile byte counts (the built-in targets always do)."""
    t = p.target
    if t is TARGETS.get(t.name):  # a built-in target (the very object): in range (tests/test_validate_fast_path.py)
        return
    e = f"target {t.name}"
    if not all(1 <= d <= MESH_MAX for d in t.mesh):
        report(e, f"mesh {clip(str(list(t.mesh)))} is outside the model's range (1 to {MESH_MAX} columns and rows)")
    fields = {"tile": t.tile, "local_bytes": (t.local_bytes,), "reserved_base": (t.reserved_base,),
              "alignment": (t.alignment,), "acc_tiles": (t.acc_tiles,), "acc_tiles_fp32": (t.acc_tiles_fp32,),
              "max_cbs": (t.max_cbs,), "max_semaphores": (t.max_semaphores,), "tile_bytes": tuple(t.tile_bytes.values())}
    for name, values in fields.items():
        if any(too_large(v, U32) for v in values):
            report(e, f"{name} {clip(str(list(values)))} is too large for the model (at most {U32})")


def _tensor_sections(programs: Sequence[EngineProgram]) -> dict[str, set[int]]:
    """Per tensor name, the sections whose ops (a read, a write: the op fields tagged ``ID_TENSOR``, as
    ``ir.ids.op_ids`` reads them) name it."""
    out: dict[str, set[int]] = {}
    fields = _TENSOR_FIELDS
    for ep in programs:
        for i, top in enumerate(ep.ops):
            k = ep.section_of(i)
            stack = [top]  # a stack, not ``walk``'s generator per op: every op of every template, on every load
            while stack:
                op = stack.pop()
                cls = type(op)
                names = fields.get(cls)
                if names is None:
                    names = fields[cls] = _tensor_field_names(cls)
                for name in names:
                    v = getattr(op, name)
                    if v is not None:
                        out.setdefault(v, set()).add(k)
                if cls in CONTAINERS:
                    stack.extend(op.body)  # type: ignore[union-attr]
    return out


def _tensor_field_names(cls: type) -> tuple[str, ...]:
    """The fields of op class ``cls`` that name a tensor (``metadata["id"] == ID_TENSOR``)."""
    return tuple(f.name for f in attrs.fields(cls) if f.metadata.get("id") == ID_TENSOR)


#: Per op class, its fields naming a tensor (``_tensor_field_names``; filled for a class the first time it is met).
_TENSOR_FIELDS: dict[type, tuple[str, ...]] = {cls: _tensor_field_names(cls) for cls in OP_TAGS}


def _check_resident(p: Program, report: Report, sites: set[Site] | None = None,
                    used: dict[str, set[int]] | None = None) -> None:
    """Each resident tensor is declared and resident once, on a site that runs an engine program (``sites``: those
    sites, by default ``p``'s), over sections that exist and that hold every section whose ops name it (``used``:
    tensor -> sections, by default ``p``'s; its bytes are free outside its sections, so a buffer of another phase may
    sit on them while an op reads or writes the tensor there), inside the site's usable local memory
    ``[reserved_base, local_bytes)``, aligned, and ``size`` is the tensor's bytes. Whether it is disjoint from the
    buffers and other resident tensors of its phases is the memory obligation's (families/memory/encoding.py)."""
    if not p.resident:  # every rule is about a resident tensor
        return
    tensors = {t.name: t for t in p.tensors}
    if sites is None:
        sites = {ep.site for ep in p.programs}
    if used is None:
        used = _tensor_sections(p.programs) if p.resident else {}  # one more walk of the ops only where it matters
    times = Counter(r.tensor for r in p.resident)
    t = p.target
    for r in p.resident:
        e = f"resident {r.tensor}"
        if r.tensor not in tensors:
            report(e, "is not a declared tensor")
            continue
        if too_large(r.offset, U32) or too_large(r.size, U32):
            report(e, f"offset {clip(str(r.offset))} or size {clip(str(r.size))} is too large for the model (local "
                      f"addresses are 32-bit: at most {U32})")
            continue
        if times[r.tensor] > 1:
            report(e, f"is resident {times[r.tensor]} times, expected once")
        if r.site not in sites:
            report(e, f"site {r.site} runs no engine program (a resident tensor lives on a participating site)")
        if not 0 <= r.first_section <= r.last_section < len(p.sections):
            report(e, f"sections {r.first_section}..{r.last_section} are not a range of the {len(p.sections)} "
                      "sections")
        outside = sorted(k for k in used.get(r.tensor, ()) if not r.first_section <= k <= r.last_section)
        if outside:
            report(e, f"is read or written in section {outside[0]}, outside its sections {r.first_section}.."
                      f"{r.last_section} (its bytes are free there: a buffer of that phase may hold them)")
        if r.offset < t.reserved_base or r.offset + r.size > t.local_bytes:
            report(e, f"occupies [{r.offset}, {r.offset + r.size}) outside usable local memory "
                      f"[{t.reserved_base}, {t.local_bytes})")
        if r.offset % t.alignment:
            report(e, f"offset {r.offset} is not {t.alignment}-byte aligned")
        tensor = tensors[r.tensor]
        if tensor.dtype in t.tile_bytes and r.size != p.tensor_bytes(tensor):
            report(e, f"size {r.size} B != the tensor's {tensor.tiles(t.tile)} tiles x "
                      f"{t.bytes_per_tile(tensor.dtype)} B = {p.tensor_bytes(tensor)} B")


#: Most tensor tiles ``_check_shards`` enumerates over the sharded buffers of one tensor (to find a tile two shards
#: hold); more is too large for the model.
SHARD_TILES_MAX = 1 << 20


def _check_shards(p: Program, report: Report) -> None:
    """The rules of sharded buffers (``Buffer.shard``; docs/semantics.md "Sharded buffers"), each from what tt-metal's
    host and device code require of a globally allocated circular buffer:

    - its tensor is declared and not also resident; the buffer lives in local memory (``set_globally_allocated_address``
      throws "Only L1 buffers can have an associated circular buffer!"); its dtype is the tensor's (its pages are the
      tensor's bytes: the host gives the CB the tensor's data format);
    - its shard's tiles (``Shard.tiles``, else the ring's ``capacity x page_tiles``) lie inside the tensor and its
      rows do not overlap (``stride >= width``); a ring larger than the shard is allowed, as tt-metal allows it with
      a warning (tt-metal #15337): a push past the shard is the finding ``cb-shard-overrun``;
    - a tensor's tile lives on one core: two sharded buffers hold a common tile only on one site and only when one
      aliases the other with the same shard (the same bytes, ``alias_of``); an alias of a sharded buffer is sharded alike;
    - a producer that writes into its back writes the tensor (not an input or param), one that only pushes publishes
      it (not an output); the tensor is not a state (its versions would change while a page is held); no multicast
      lands in it and none is sent from its back before a push (a remote write into a tensor's shard is not said by
      the model yet);
    - its ring starts at the shard's first tile: no buffer of an earlier phase hands it its counters at the same site
      and cb index (the launch sets the pointers, ``circular_buffer_init.h``; a later phase would start where that
      buffer left off);
    - with a memory map, every sharded buffer of one tensor sits at one offset on every site (a sharded L1 buffer has
      one address on all its cores: ``buffer.address()`` is the CB's address)."""
    if all(b.shard is None for b in p.buffers):  # every rule is about a sharded buffer
        return
    from verispatial.ir.shards import sharded, written_shards

    shards = sharded(p)
    tensors = {t.name: t for t in p.tensors}
    resident = {r.tensor for r in p.resident}
    written = written_shards(p)
    phases = p.phase_of_section()
    holders: dict[str, dict[int, list[Buffer]]] = {}
    # per tensor, its sharded buffers that pass their own rules with their shards' sizes, in buffer order
    held: dict[str, list[tuple[Buffer, int]]] = {}
    counted: Counter[str] = Counter()
    for b in shards.values():
        sh = b.shard
        assert sh is not None
        size = _check_shard_buffer(p, b, tensors, sh.tensor in resident, b.id in written, phases, report)
        if size is None:
            continue
        counted[sh.tensor] += size
        if counted[sh.tensor] > SHARD_TILES_MAX:
            report(_buffer_name(b), f"the shards of tensor {sh.tensor!r} hold more than {SHARD_TILES_MAX} tiles: too "
                                    "large for the model")
            continue
        held.setdefault(sh.tensor, []).append((b, size))
    for tensor, bs in held.items():
        # Only a tile two shards hold can break the holder rules: shards of one tensor that hold no tile in common
        # (the common case, a tensor split over its cores) are told by a set of their tiles, made of ranges (a row
        # of a shard at a time), not a dict entry per tile.
        if _SHARD_DISJOINT_QUICK:
            tiles: set[int] = set()
            for b, size in bs:
                tiles.update(_shard_tile_set(b, size))
            if len(tiles) == sum(size for _b, size in bs):
                continue
        per = holders[tensor] = {}
        for b, size in bs:
            assert b.shard is not None
            for j in range(size):
                per.setdefault(b.shard.tile(j), []).append(b)
    for b in p.buffers:
        if b.shard is None and b.alias_of is not None and 0 <= b.alias_of < len(p.buffers) \
                and p.buffers[b.alias_of].shard is not None:
            report(_buffer_name(b), f"aliases sharded buffer {b.alias_of}: its pages are that tensor's bytes, so it is "
                                    "sharded alike (the same shard)")
    _check_shard_holders(holders, report)
    _check_shard_multicasts(p, shards, phases, report)
    if p.memory:
        _check_shard_offsets(p, shards, report)


#: Whether ``_check_shards`` tells a tensor whose shards hold no tile in common by a set of their tiles (else every
#: tile of every shard goes through the holder rules).
_SHARD_DISJOINT_QUICK = True


def _shard_tile_set(b: Buffer, size: int) -> set[int]:
    """The tensor tiles ``Shard.tile(j)`` of the buffer's tiles ``j`` in ``[0, size)``, as a set: a width-0 shard is
    one range, else a range per row of ``width`` tiles (the last row cut at ``size``)."""
    sh = b.shard
    assert sh is not None
    if sh.width <= 0:
        return set(range(sh.start, sh.start + size))
    out: set[int] = set()
    for row in range(0, size, sh.width):
        first = sh.start + (row // sh.width) * sh.stride
        out.update(range(first, first + min(sh.width, size - row)))
    return out


def _rect_in_mesh(p: Program, g: Group) -> bool:
    """Whether both corners of ``g``'s rectangle are in the mesh: only then may its sites be listed (a fuzzed corner
    of 2**32 would list billions)."""
    x0, y0, x1, y1 = g.rect
    mx, my = p.target.mesh[0], p.target.mesh[1]  # ``_in_mesh`` of each corner, by coordinates (no Site built)
    return 0 <= x0 < mx and 0 <= y0 < my and 0 <= x1 < mx and 0 <= y1 < my


def _check_scratch(p: Program, report: Report) -> None:
    """The rules of scratch buffers (``Buffer.scratch``; docs/semantics.md "Scratch buffers"): private L1 of one
    data-movement engine, which the scratch family's rules decide in that engine's program order, so nothing else may
    reach its bytes:

    - it is its own allocation in local memory: not an alias nor aliased, not sharded, not persistent (it has no ring
      counters to carry);
    - only ``ReadTiles`` into it, ``WriteTiles`` from it and ``ScratchAccess`` name it, and all on one program, of
      its own site — no Reserve, Push, Wait, Pop, compute operand, pack, fill, copy, multicast or remote read (those
      move ring counters or reach the bytes from another engine), and no index read of an indirect address;
    - no multicast or remote read names it from another core (a buffer of its cb index at a multicast destination, the
      owner of a remote read): a remote write into, or read of, scratch bytes is not said yet;
    - a read into it or a write from it moves at most its ``capacity x page_tiles`` tiles;
    - a ``ScratchAccess`` names a scratch buffer."""
    scratch = {b.id: b for b in p.buffers if b.scratch}
    aliased = {x.alias_of for x in p.buffers if x.alias_of is not None} if scratch else set()
    for b in scratch.values():  # each buffer's name worded only for a finding
        if b.alias_of is not None or b.id in aliased:
            report(_buffer_name(b), "a scratch buffer is its own bytes: it neither aliases nor is aliased by another "
                                    "buffer")
        if b.shard is not None:
            report(_buffer_name(b), "a scratch buffer is not sharded: its bytes are its own, not a tensor's")
        if b.persistent:
            report(_buffer_name(b), "a scratch buffer has no ring counters to outlive the program: it is not persistent")
        if b.space != Space.LOCAL:
            report(_buffer_name(b), "a scratch buffer lives in local memory (L1)")
    # Per buffer id its phase, and the scratch buffers by (site, cb index, phase): built for the first multicast that
    # might land in one (a ``Site`` hashes through its Python ``__hash__``).
    ph: dict[int, int | None] = {}
    at: dict[tuple[Site, int, int | None], int] | None = None
    # The index-buffer rule's findings come first; whether any indirect address names no buffer (the only kind whose
    # buffer is derived, ``Program.index_buffers``: a walk of its own) is seen on the walk below, whose findings wait.
    ops_found: list[tuple[str, str]] = []
    by_op: Report = lambda entity, rule: ops_found.append((entity, rule))  # noqa: E731
    derived = False
    owner: dict[int, EngineProgram] = {}  # the first program to use each scratch buffer
    scratch_ids = frozenset(scratch)
    for ep in p.programs:
        for op in walk(ep.ops):
            addr = getattr(op, "addr", None)  # as ``Program.index_candidates`` reads every op
            if addr is not None and addr.dynamic is not None and addr.dynamic.buf is None:
                derived = True
            cls = type(op)  # an op class of OP_TAGS below: none subclasses another, so a class test is isinstance's
            if cls not in OP_TAGS:
                continue  # the op pass refuses an op class it does not know (UnhandledOp), by its name
            if cls is ScratchAccess:
                _scratch_access_rule(p, scratch, ep, op, by_op)  # type: ignore[arg-type]
            if not scratch:
                # Every rule below is about a buffer of ``scratch``: with none, only the one above can break. (The
                # op's name is worded only for a report: formatting it per op was most of validate's time on the
                # 16-layer decode step, 7,440 ops in templates walked 16 times: validate 4.2x json.loads -> 1.9x.)
                continue
            if not _SHAPE_IDS.get(cls, True) and addr is None:
                continue  # names no buffer (a barrier, a flush): no rule below can break
            if isinstance(op, McastSend) and 0 <= op.group < len(p.groups) and 0 <= op.buf < len(p.buffers) \
                    and _rect_in_mesh(p, p.groups[op.group]):  # a rectangle leaving the mesh is reported, not walked
                cb = p.buffers[op.dst if op.dst is not None and 0 <= op.dst < len(p.buffers) else op.buf].cb
                if at is None:
                    phases = p.phase_of_section()
                    ph = {b.id: phases[b.section] if 0 <= b.section < len(phases) else None for b in p.buffers}
                    at = {(b.site, b.cb, ph[b.id]): b.id for b in scratch.values()}
                for d in p.groups[op.group].destinations():
                    hit = at.get((d, cb, ph[op.buf]))
                    if hit is not None:
                        by_op(_op_where(ep, op), f"lands in scratch buffer {hit} on {d}: a remote write into scratch "
                                                  "bytes is not said yet (only its own engine's NoC reads fill a "
                                                  "scratch buffer)")
            if isinstance(op, RemoteRead):
                hit = p.remote_buffer(op.buf, op.at)
                if hit in scratch:
                    by_op(_op_where(ep, op), f"reads scratch buffer {hit} on {op.at}: a remote read of scratch bytes "
                                              "is not said yet")
            # the set of the named scratch buffers, made in the order they are named (a list argument is walked)
            named = scratch_ids.intersection(_NAMED[cls](op))
            for i in named:
                x = scratch[i]
                allowed = (isinstance(op, ReadTiles) and op.into == i and named_index_buffer(op) != i) \
                    or (isinstance(op, WriteTiles) and op.src == i and named_index_buffer(op) != i) \
                    or isinstance(op, ScratchAccess)
                if not allowed:
                    by_op(_op_where(ep, op), f"names scratch buffer {i} ({x.name}): a scratch buffer is not a circular "
                                              "buffer; only read_tiles into it, write_tiles from it and scratch_access "
                                              "use it")
                    continue
                if ep.site is not x.site and ep.site != x.site:  # read sites are shared objects (a Site compares in
                    # Python code)
                    by_op(_op_where(ep, op), f"uses scratch buffer {i} ({x.name}) of site {x.site} from site "
                                              f"{ep.site}")
                first = owner.setdefault(i, ep)
                if first is not ep and first.key != ep.key:  # programs told by their keys, formatted only here
                    by_op(_op_where(ep, op), f"uses scratch buffer {i} ({x.name}), which program {first.key} uses: a "
                                              "scratch buffer is private to one engine")
                if isinstance(op, (ReadTiles, WriteTiles)) and op.tiles > x.capacity * x.page_tiles:
                    by_op(_op_where(ep, op), f"moves {op.tiles} tiles, more than scratch buffer {i}'s {x.capacity} "
                                              f"x {x.page_tiles}")
    for i in sorted(set(p.index_buffers().values()) & set(scratch) if scratch and derived else ()):
        report(_buffer_name(scratch[i]), "a scratch buffer is no index buffer: an indirect address reads its index "
                                         "from a waited page")
    for entity, rule in ops_found:
        report(entity, rule)


def _buffers_named(op: Op) -> list[int]:
    """The buffer ids ``op`` names itself (not its body), in field order: the buffers of ``ir.ids.op_ids``, read
    through the class's id fields (``_SHAPE``) rather than every attrs field of the op, then its indirect address's
    index buffer (``named_index_buffer``). Raises ``KeyError`` for a class not in ``OP_TAGS``."""
    return _NAMED[type(op)](op)


def _namer(cls: type) -> Callable[[Op], list[int]]:
    """``_buffers_named`` of the ops of ``cls``, generated from its id fields (``_SHAPE``): no loop over the fields,
    no ``getattr`` by name, per op."""
    ids, _pages, _tiles = _SHAPE.get(cls) or _shape(cls)
    lines = ["def named(op):", "    out = []"]
    for fname, kind in ids:
        if kind == ID_OPERANDS:
            lines += [f"    v = op.{fname}", "    if v is not None:", "        out.extend([o.buf for o in v])"]
        elif kind == ID_BUFFER:
            lines += [f"    v = op.{fname}", "    if v is not None:", "        out.append(v)"]
    if "addr" in attrs.fields_dict(cls):  # as ``named_index_buffer`` reads it
        lines += ["    a = op.addr", "    if a is not None and a.dynamic is not None and a.dynamic.buf is not None:",
                  "        out.append(a.dynamic.buf)"]
    env: dict[str, Any] = {}
    exec("\n".join([*lines, "    return out", ""]), env)  # from the class's fields
    return env["named"]  # type: ignore[no-any-return]


def _scratch_access_rule(p: Program, scratch: dict[int, Buffer], ep: EngineProgram, op: ScratchAccess,
                         report: Report) -> None:
    """A ``ScratchAccess`` names a scratch buffer (of ``scratch``, the program's, by id)."""
    if op.buf not in scratch and 0 <= op.buf < len(p.buffers):
        report(_op_where(ep, op), f"scratch_access names buffer {op.buf}, which is not a scratch buffer (scratch: true)")


def _op_where(ep: EngineProgram, op: Op) -> str:
    """How a scratch rule names an op: its program and its text."""
    return f"program {ep.key} {op_text(op)}"


def _buffer_name(b: Buffer) -> str:
    return f"buffer {b.id} ({b.name})"


def _check_shard_buffer(p: Program, b: Buffer, tensors: dict[str, Tensor], resident: bool, written: bool,
                        phases: list[int], report: Report) -> int | None:
    """The rules of one sharded buffer ``b`` on its own (``_check_shards``: its shard's numbers, its tensor, space,
    dtype, role and alias, no earlier phase at its cb index); ``resident``: its tensor is resident too; ``written``:
    its producer writes into it. The tiles its shard holds, or None when a rule stops the tensor-wide checks."""
    sh = b.shard
    assert sh is not None
    e = _buffer_name(b)
    if not (-U32 <= sh.start <= U32 and -U32 <= sh.width <= U32 and -U32 <= sh.stride <= U32
            and -U32 <= sh.tiles <= U32):  # too_large of each
        report(e, f"shard start {clip(str(sh.start))}, width {clip(str(sh.width))}, stride {clip(str(sh.stride))} or "
                  f"tiles {clip(str(sh.tiles))} is too large for the model (tile ids are 32-bit: at most {U32})")
        return None
    if sh.start < 0 or sh.width < 0 or sh.stride < 0 or sh.tiles < 0:
        report(e, "shard start, width, stride and tiles are >= 0")
        return None
    if sh.width == 0 and sh.stride != 0:
        report(e, "shard stride needs a width (width 0: the shard is one run of consecutive tiles)")
        return None
    if sh.width > 0 and sh.stride < sh.width:
        report(e, f"shard stride {sh.stride} is less than its width {sh.width}: the shard's rows overlap")
        return None
    t = tensors.get(sh.tensor)
    if t is None:
        report(e, f"shard names tensor {clip(repr(sh.tensor))}, which is not declared")
        return None
    if resident:
        report(e, f"tensor {sh.tensor!r} is both resident and sharded: one placement of its bytes")
    if b.space is not Space.LOCAL:
        report(e, "a sharded buffer lives in local memory (tt-metal: only L1 buffers can have an associated "
                  "circular buffer)")
    if b.dtype != t.dtype:
        report(e, f"its pages are tiles of tensor {sh.tensor!r}: its dtype must be the tensor's {t.dtype!r}, got "
                  f"{b.dtype!r}")
    if b.page_tiles < 1 or not 1 <= b.capacity < 65536 or t.dtype not in p.target.tile_bytes:
        return None  # the buffer's own rules say what is wrong
    ntiles = t.tiles(p.target.tile)
    size = shard_size(b)
    last = sh.tile(size - 1)
    if last >= ntiles:
        report(e, f"its shard's {size} tiles reach tile {last} of tensor {sh.tensor!r}, past its {ntiles} tiles")
        return None
    if t.role is Role.STATE:
        report(e, f"its pages are tiles of state tensor {sh.tensor!r}: a shard of a state is not said yet (its "
                  "per-tile versions would change while a page is held, between the pack and the push or the push "
                  "and the pop)")
    if written and t.role.value in ("input", "param"):
        report(e, f"is written into, and its pages are tiles of {t.role.value} tensor {sh.tensor!r}: inputs and "
                  "params are read-only")
    if not written and t.role.value == "output":
        report(e, f"publishes tiles of output tensor {sh.tensor!r} without writing them: a tensor that is written "
                  "and read is an activation")
    if b.alias_of is not None and 0 <= b.alias_of < len(p.buffers) and p.buffers[b.alias_of].shard != sh:
        report(e, f"aliases buffer {b.alias_of}, whose pages are not the same shard: an alias of a sharded buffer "
                  "is the same bytes")
    # only a buffer of a phase after the first has an earlier phase (phases count up from 0)
    for x in p.buffers if 0 <= b.section < len(phases) and phases[b.section] > 0 else ():
        if x.site == b.site and x.cb == b.cb and 0 <= x.section < len(phases) and 0 <= b.section < len(phases) \
                and phases[x.section] < phases[b.section]:
            report(e, f"buffer {x.id} ({x.name}) of an earlier phase uses cb index {b.cb} on {b.site}: the ring "
                      "would start where that buffer left its pointers, not at the shard's first tile (the launch "
                      "sets them: circular_buffer_init.h)")
            break
    return size


def _check_shard_holders(holders: dict[str, dict[int, list[Buffer]]], report: Report) -> None:
    """A tensor's tile lives on one core: two sharded buffers holding one tile (``holders``: tensor -> tile -> the
    buffers whose shard holds it) are on one site and one aliases the other."""
    for tensor, per in sorted(holders.items()):
        said: set[tuple[int, int]] = set()
        for tile, bs in sorted(per.items()):
            for i, b1 in enumerate(bs):
                for b2 in bs[i + 1:]:
                    if (b1.id, b2.id) in said:
                        continue
                    if b1.site != b2.site:
                        said.add((b1.id, b2.id))
                        report(_buffer_name(b2), f"holds tile {tile} of tensor {tensor!r}, which {_buffer_name(b1)} on "
                                                 f"{b1.site} holds too: a sharded tensor's tile lives on one core")
                    elif b2.alias_of != b1.id and b1.alias_of != b2.id and (
                            b1.alias_of is None or b1.alias_of != b2.alias_of):
                        said.add((b1.id, b2.id))
                        report(_buffer_name(b2), f"holds tile {tile} of tensor {tensor!r} on {b2.site}, as "
                                                 f"{_buffer_name(b1)} does: two buffers on one shard share its bytes, so "
                                                 "one aliases the other (alias_of)")


def _check_shard_multicasts(p: Program, shards: dict[int, Buffer], phases: list[int], report: Report) -> None:
    """No multicast is sent from a sharded buffer's back (before a push publishes its tiles), and none lands in a
    sharded buffer (a remote write into a tensor's shard is not modelled)."""
    dests: dict[tuple[Site, int, int], Buffer] = {(b.site, b.cb, phases[b.section]): b for b in shards.values()
                                                 if 0 <= b.section < len(phases)}
    for ep in p.programs:
        for op in walk(ep.ops):
            if type(op) is not McastSend:  # by class first: most ops are of another
                continue
            assert isinstance(op, McastSend)
            if not 0 <= op.buf < len(p.buffers) or not 0 <= op.group < len(p.groups):
                continue
            src = p.buffers[op.buf]
            if src.shard is not None and not op.front and not op.behind:
                report(f"program {ep.key} McastSend", f"multicasts from the back of sharded buffer {src.id} "
                       f"({src.name}): it would send tiles of tensor {src.shard.tensor!r} before a push publishes them")
            if not 0 <= src.section < len(phases):
                continue
            g = p.groups[op.group]
            if not _rect_in_mesh(p, g):
                continue
            for d in g.destinations():
                hit = dests.get((d, src.cb, phases[src.section]))
                if hit is not None:
                    report(f"program {ep.key} McastSend", f"lands in sharded buffer {hit.id} ({hit.name}) on {d}: "
                           f"a multicast into a tensor's shard (a remote write of tensor {hit.shard.tensor!r}) is not "  # type: ignore[union-attr]
                           "modelled")


def _check_shard_offsets(p: Program, shards: dict[int, Buffer], report: Report) -> None:
    """With a memory map: every sharded buffer of one tensor sits at one offset on every site (a sharded L1 buffer
    has one address on all its cores). Compared where each site holds one buffer of the tensor's shard (its aliases
    sit on its bytes: memory-alias); two buffers on parts of one core's shard sit at different offsets of it."""
    at = {m.buf: m.offset for m in p.memory}
    roots: dict[str, dict[Site, list[Buffer]]] = {}
    for b in shards.values():
        assert b.shard is not None
        if b.alias_of is None and b.id in at:
            roots.setdefault(b.shard.tensor, {}).setdefault(b.site, []).append(b)
    for tensor, by_site in sorted(roots.items()):
        if any(len(bs) > 1 for bs in by_site.values()):
            continue
        bs = sorted((x[0] for x in by_site.values()), key=lambda x: x.id)
        for b in bs[1:]:
            if at[b.id] != at[bs[0].id]:
                report(_buffer_name(b), f"sits at offset {at[b.id]} on {b.site} and {_buffer_name(bs[0])} at "
                                        f"{at[bs[0].id]} on {bs[0].site}, both on the shards of tensor {tensor!r}: a "
                                        "sharded L1 buffer has one address on every core")


#: The empty set, made once (a walk's tables before its first program).
_NOTHING: frozenset[Any] = frozenset()
#: A site's coordinates as a tuple (a C getter).
_XY = operator.attrgetter("x", "y")
#: ``_OpPass.program``'s phase before its first op: equal to no phase.
_NO_PHASE = object()


class _OpPass:
    """Every per-op rule in one walk over each engine program: ids in range and on the right site, page and tile
    counts, loop variables, trips, tensors and multicast groups (``found``, in program order), each op's use of
    buffers and semaphores of its own phase and of tensors by role (after the program's id rules, as before), and
    the 32-bit range of every semaphore value (``words``, after every program). An op's entity name is formatted
    only when it breaks a rule."""

    # slots: a walk is made per validate, and setting its forty attributes in a dict was a fixed cost of each
    __slots__ = (
        "_by_site", "_cb_at", "_good_sems", "_goods", "_landings", "cut_short", "dests", "found", "gb", "gs", "incs", "index_ambiguous",
        "index_derived", "index_fills", "index_uses", "issues", "loop_vars", "names_non_loop", "nb", "ng", "ns", "p", "phases", "quiet",
        "reads", "scratch_access", "sec", "sem_engine", "sem_xy", "sharded", "start", "tensor_of",
        "tensor_sections", "transfer_engine", "trip_max", "uses", "words", "writes",
    )

    def __init__(self, p: Program, dests: list[tuple[Site, ...]], phases: list[int] | None = None) -> None:
        """The walk of ``p``; ``dests``: each group's destinations (``Group.destinations``; none for a rectangle that
        leaves the mesh); ``phases``: ``p.phase_of_section()`` when the caller has it."""
        self.p = p
        self.found: list[IrViolation] = []
        self.uses: list[IrViolation] = []
        self.words: list[IrViolation] = []
        # the declared trips and tensors by name (a name declared twice: the last, as a dict keeps it; the rule of
        # unique names refuses the program)
        self.trip_max = {t.name: t.max for t in p.trips} if p.trips else {}
        self.tensor_of = {t.name: t for t in p.tensors} if p.tensors else {}
        self.sharded = {b.shard.tensor for b in p.buffers if b.shard is not None} if p.buffers else set()
        self.phases = p.phase_of_section() if phases is None else phases
        # (site, cb, phase) of every buffer whose section exists: a multicast destination needs its cb index there
        # (``_cbs``: built for the first multicast that asks)
        self._cb_at: set[tuple[int, int, int, int]] | None = None
        # each semaphore's sites by coordinates: a tuple of ints hashes in C, a ``Site`` through its Python ``__hash__``
        self.sem_xy = [frozenset(map(_XY, x.sites)) for x in p.semaphores]
        # Index buffers, checked after every program (``index_rules``): the buffers ReadTiles of each tensor fill and
        # the indirect addresses, per (site, phase, index tensor), gathered by the walk (no walk of its own).
        self.index_fills: dict[IndexKey, set[int]] = {}
        self.index_uses: list[tuple[EngineProgram, ReadTiles | WriteTiles, tuple[int, ...], int, int | None]] = []
        self.index_derived: dict[IndexKey, int] = {}
        self.index_ambiguous: dict[IndexKey, set[int]] = {}
        self.nb, self.ns = len(p.buffers), len(p.semaphores)
        #: Some ReadTiles / WriteTiles address has a term naming no enclosing loop (``_names_trips``'s question,
        #: answered on the way); ``cut_short``: some body was not walked (nested too deep), so the answer is partial.
        self.names_non_loop = False
        self.cut_short = False
        #: The variable of every loop walked, in walk order (``_validate`` judges their names after the walk).
        self.loop_vars: list[str] = []
        #: Every ``ScratchAccess`` leaf, in walk order (``_validate`` checks them when the program has no scratch buffer).
        self.scratch_access: list[tuple[EngineProgram, ScratchAccess]] = []
        #: The tensors ReadTiles read and WriteTiles write (``program.tensor_accesses``), and per tensor the sections
        #: whose ops name it (``_tensor_sections``), as the walk met them: complete unless ``cut_short``.
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.tensor_sections: dict[str, set[int]] = {}
        self.sec = 0  # the section of the top-level op being walked
        self.dests = dests
        # Per word (semaphore id, site column, site row): its start and its increments (``_word_range``). Keyed by
        # coordinates, which hash in C (a ``Site`` hashes through its Python ``__hash__``, once per semaphore op).
        self.start: dict[tuple[int, int, int], int] = {}
        self.incs: dict[tuple[int, int, int], int] = {}
        # The ids an op of the program being walked may name without a finding (``_good``: its site's and phase's
        # buffers, its phase's semaphores), and the ``_QUIET`` classes its engine issues with their ``_quick``.
        self.ng = len(p.groups)
        self.gb: frozenset[int] = _NOTHING
        self.gs: frozenset[int] = _NOTHING
        self.quiet: dict[type, Quick] = {}
        self.sem_engine: frozenset[type] = _NOTHING  # the ``_SEM_QUICK`` classes its engine issues (``_SEM_OF``)
        self.transfer_engine: frozenset[type] = _NOTHING  # the same of ``_TRANSFER_QUICK`` (``_TRANSFER_OF``)
        self.issues: frozenset[type] = _NOTHING  # the op classes its engine issues (``_ISSUES_OF``)
        self._goods: dict[tuple[int, int, int | None], tuple[frozenset[int], frozenset[int]]] = {}
        self._good_sems: dict[int | None, frozenset[int]] = {}
        self._by_site: dict[tuple[int, int], list[int]] | None = None
        # Per (group, landing buffer or -1 - semaphore): whether every destination of the group has the buffer's cb
        # index in its phase, or the semaphore's word (``_mcast_passes``: a loop multicasts to one group many times).
        self._landings: dict[tuple[int, int], bool] = {}
        start = self.start
        for x in p.semaphores:
            if x.init > WORD_MAX:
                self.words.append(IrViolation(f"semaphore {x.id} ({x.name})",
                                              f"init {x.init} exceeds the 32-bit word (max {WORD_MAX})"))
            sem, init = x.id, x.init
            for site in x.sites:
                start[(sem, site.x, site.y)] = init

    def _sem_passes(self, op: Op, ep: EngineProgram, loops: tuple[str, ...], times: int,
                    ranges: dict[str, int]) -> bool:
        """Whether a ``SemInc``, ``SemWait``, ``SemSet``, ``SemRmw`` or ``InlineWrite`` (``_SEM_QUICK``) passes every
        rule of ``_leaf`` and of ``_word_range``: its engine issues it without the rendezvous exception
        (``sem_engine``), its semaphore is one the op may name (``gs``, ``_good``), the word it aims at is on the site
        it names (an increment's or inline write's ``at``, else its own site), a wait's or set's terms name enclosing
        loops, and its values stay in the 32-bit word. When it does, its part of the word totals (run ``times``
        times, loop indices up to ``ranges``; an inline write's value as a start) is counted here, as
        ``_word_range`` counts it; False changes nothing and sends it through ``_leaf`` and ``_word_range``, which
        word each violation (a composed program's rendezvous is a run of these ops)."""
        cls = type(op)
        if cls not in self.sem_engine or op.sem not in self.gs:  # type: ignore[union-attr]
            return False
        if cls is SemInc or cls is SemRmw:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, (SemInc, SemRmw))
            at = op.at if isinstance(op, SemInc) else ep.site  # a read-modify-write's word is its own site's
            word = (op.sem, at.x, at.y)
            if (at.x, at.y) not in self.sem_xy[op.sem] or op.by > WORD_MAX:
                return False
            self.incs[word] = self.incs.get(word, 0) + op.by * times
            return True
        if cls is InlineWrite:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, InlineWrite)
            at = op.at
            if (at.x, at.y) not in self.sem_xy[op.sem] or op.value > WORD_MAX:
                return False
            word = (op.sem, at.x, at.y)
            self.start[word] = max(self.start.get(word, 0), op.value)
            return True
        if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
            assert isinstance(op, (SemWait, SemSet))
        site = ep.site
        if (site.x, site.y) not in self.sem_xy[op.sem]:
            return False
        lo = hi = op.value
        for t in op.terms:
            if t.var not in loops:
                return False
            top = t.coef * ranges.get(t.var, 0)
            lo, hi = lo + min(0, top), hi + max(0, top)
        if hi > WORD_MAX or lo < 0:
            return False
        if cls is SemSet:
            word = (op.sem, site.x, site.y)
            self.start[word] = max(self.start.get(word, 0), hi)
        return True

    def _transfer_passes(self, op: Op, ep: EngineProgram, loops: tuple[str, ...], phase: int | None,
                         at: tuple[int, ...], j: int, top: int) -> bool:
        """Whether a ``ReadTiles`` or ``WriteTiles`` (``_TRANSFER_QUICK``) of whole tiles passes every rule of
        ``_leaf``: its engine issues it, its buffer is one the op may name (``gb``, ``_good``), its tiles are in
        ``[1, TILES_MAX]``, its tensor is declared and not of a role it may not read or write, its address's base and
        coefficients are 32-bit and its terms name enclosing loops (an indirect address's range 32-bit and not
        empty, its scale 32-bit), and the tensor's tiles are the buffer's size. When it does, what the walk records of
        it (the tensors read and written, the sections naming each, the buffers each tensor fills, an indirect
        address for the index-buffer rules, ``index_rules``, at path ``(*at, j)`` under top-level op ``top``) is
        recorded here, as ``_leaf`` records it; False records nothing and sends it through ``_leaf``, which words each
        violation (every data-movement program is mostly these)."""
        cls = type(op)
        if cls not in self.transfer_engine:
            return False
        if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
            assert isinstance(op, (ReadTiles, WriteTiles))
        addr = op.addr
        if op.part is not None or not -U32 <= addr.base <= U32 or not 1 <= op.tiles <= TILES_MAX:
            return False
        dyn = addr.dynamic
        if dyn is not None and not (-U32 <= dyn.lo <= dyn.hi <= U32 and -U32 <= dyn.scale <= U32):
            return False
        for t in addr.terms:
            if t.var not in loops or not -U32 <= t.coef <= U32:
                return False
        name = op.tensor
        tensor = self.tensor_of.get(name)
        if tensor is None:
            return False
        reads = cls is ReadTiles
        bid = op.into if reads else op.src  # type: ignore[union-attr]
        if bid not in self.gb or tensor.role in (_READ_ONLY if not reads else _WRITE_ONLY):
            return False
        tile_bytes = self.p.target.tile_bytes
        if tile_bytes.get(tensor.dtype) != tile_bytes.get(self.p.buffers[bid].dtype):
            return False
        (self.reads if reads else self.writes).add(name)
        sections = self.tensor_sections.get(name)
        if sections is None:
            sections = self.tensor_sections[name] = set()
        sections.add(self.sec)
        if reads:
            site = ep.site
            self.index_fills.setdefault((site, -1 if phase is None else phase, name), set()).add(bid)
        if dyn is not None:  # its index buffer's rules wait for every program's fills (``index_rules``)
            self.index_uses.append((ep, op, (*at, j), top, phase))
        return True

    def _mcast_passes(self, op: Op, ep: EngineProgram, times: int) -> bool:
        """Whether a ``McastSend``, ``McastSetValid`` or ``SemIncMcast`` (``_MCAST_QUICK``) passes every rule of
        ``_leaf`` (and a ``SemIncMcast`` of ``_word_range``): its engine issues it (``issues``), its ids, pages and
        tiles pass (``_quick``), ``num_dests`` is a uint32_t and ``vc`` a channel or None, the group's sender is this
        engine's site and every destination has the landing cb index in this phase (a ``McastSend``) or the
        semaphore's word (the others, whose word and source word are on this site too; ``SemIncMcast``'s group is not
        loopback and its increment fits the word), and a ``McastSend`` lands at its own place (``_mcast_place``: no
        pages already pushed, the offset and pages inside the landing ring, ``dst``'s pages of the source's size).
        When it does, a ``SemIncMcast``'s increments of every destination's word (run ``times`` times) are counted
        here, as ``_word_range`` counts them; False changes nothing and sends it through ``_leaf`` and
        ``_word_range``, which word each violation."""
        cls = type(op)
        if cls not in self.issues or not _QUICK[cls](op, self.gb, self.gs, self.ng):
            return False
        if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
            assert isinstance(op, (McastSend, McastSetValid, SemIncMcast))
        if not 0 <= op.num_dests <= U32:
            return False
        site, group = ep.site, op.group  # the group is in range: ``_quick``
        g = self.p.groups[group]
        if g.sender.x != site.x or g.sender.y != site.y:
            return False
        if cls is McastSend:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, McastSend)
            if op.vc is not None and not 0 <= op.vc < NOC_VCS:
                return False
            buffers = self.p.buffers
            land = buffers[op.dest]  # ``buf`` and ``dst`` are good buffers (``_quick``): in range
            if op.behind or not 0 <= op.offset <= PAGES_MAX or op.offset + op.pages > land.capacity:
                return False
            if op.dst is not None:
                src, tb = buffers[op.buf], self.p.target.tile_bytes
                if src.page_tiles != land.page_tiles or tb.get(src.dtype) != tb.get(land.dtype):
                    return False
            key = (group, op.dest)
            ok = self._landings.get(key)
            if ok is None:
                phases = self.phases
                # a landing buffer of no section: the generic rule words it (for each destination)
                ok = 0 <= land.section < len(phases) and all(
                    [(d.x, d.y, land.cb, phases[land.section]) in self._cbs() for d in self.dests[group]])
                self._landings[key] = ok
            return ok
        if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
            assert isinstance(op, (McastSetValid, SemIncMcast))
        xy = self.sem_xy[op.sem]  # a good semaphore (``_quick``): in range
        if cls is McastSetValid:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, McastSetValid)
            if (op.vc is not None and not 0 <= op.vc < NOC_VCS) or (site.x, site.y) not in xy or (
                    op.src is not None and (site.x, site.y) not in self.sem_xy[op.src]):
                return False
        else:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, SemIncMcast)
            if g.loopback or op.by > WORD_MAX:
                return False
        key = (group, -1 - op.sem)
        ok = self._landings.get(key)
        if ok is None:
            ok = self._landings[key] = all([(d.x, d.y) in xy for d in self.dests[group]])
        if ok and cls is SemIncMcast:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, SemIncMcast)
            incs, by = self.incs, op.by * times
            for d in self.dests[group]:
                word = (op.sem, d.x, d.y)
                incs[word] = incs.get(word, 0) + by
        return ok

    def _acc_passes(self, op: Op) -> bool:
        """Whether an ``AcquireAcc`` (``_ACC_QUICK``) passes every rule of ``_leaf``: its engine issues it
        (``issues``), its tiles are in ``[1, TILES_MAX]`` and its dtype is the target's. It records nothing; False
        sends it through ``_leaf``, which words each violation (every compute program acquires in each step)."""
        if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
            assert isinstance(op, AcquireAcc)
        return AcquireAcc in self.issues and 1 <= op.tiles <= TILES_MAX and op.dtype in self.p.target.tile_bytes

    def _cbs(self) -> set[tuple[int, int, int, int]]:
        """(site column, site row, cb, phase) of every buffer whose section exists (coordinates: a tuple of ints hashes
        in C, a ``Site`` through its Python ``__hash__``)."""
        if self._cb_at is None:
            ph = self.phases
            self._cb_at = {(b.site.x, b.site.y, b.cb, ph[b.section]) for b in self.p.buffers
                           if 0 <= b.section < len(ph)}
        return self._cb_at

    def _good(self, site: Site, phase: int | None) -> tuple[frozenset[int], frozenset[int]]:
        """(the buffers, the semaphores) an op at ``site`` in ``phase`` may name without a finding of ``_leaf``'s id
        rules: a buffer of ``site`` whose section is not of another phase, a semaphore whose section is not of another
        phase (each by its position, as ``_leaf`` looks them up). Built once per site and phase."""
        key = (site.x, site.y, phase)
        got = self._goods.get(key)
        if got is not None:
            return got
        p, phases = self.p, self.phases
        nph = len(phases)
        if self._by_site is None:
            self._by_site = {}
            for i, b in enumerate(p.buffers):
                self._by_site.setdefault((b.site.x, b.site.y), []).append(i)
        # ``_leaf``'s phase rule: a section that exists and is of another phase (none with no phase)
        ours = self._by_site.get((site.x, site.y), ())
        if phase is None:
            gb = frozenset(ours)
        else:
            buffers = p.buffers
            gb = frozenset([i for i in ours if not 0 <= (sec := buffers[i].section) < nph or phases[sec] == phase])
        gs = self._good_sems.get(phase)  # the same for every site: once per phase
        if gs is None:
            gs = self._good_sems[phase] = frozenset(
                [i for i, x in enumerate(p.semaphores) if phase is None or x.section is None
                 or not 0 <= x.section < nph or phases[x.section] == phase])
        self._goods[key] = got = (gb, gs)
        return got

    def program(self, ep: EngineProgram) -> None:
        phases, starts = self.phases, ep.section_starts
        engine = ep.engine  # an Enum hashes through Python code: looked up once per program
        self.quiet = quiet = _QUIET_OF[engine]
        self.sem_engine = _SEM_OF[engine]
        self.transfer_engine = _TRANSFER_OF[engine]
        self.issues = _ISSUES_OF[engine]
        ng, sem_quick, transfer_quick, mcast_quick, acc_quick = self.ng, _SEM_QUICK, _TRANSFER_QUICK, _MCAST_QUICK, _ACC_QUICK
        # One section (every template's programs, a straight line): every op is in section 0, of one phase, so the
        # ids it may name are looked up once, not per top-level op.
        one = len(starts) <= 1
        in_order = one or list(starts) == sorted(starts)
        k, sec = 0, 0
        phase = phases[0] if phases else None
        self.sec = 0
        last: object = _NO_PHASE  # the phase of the previous top-level op
        gb, gs = self.gb, self.gs
        for i, top in enumerate(ep.ops):
            if not one:
                if in_order:
                    while k + 1 < len(starts) and i >= starts[k + 1]:
                        k += 1
                    sec = k if starts and i >= starts[0] else 0
                else:
                    sec = ep.section_of(i)
                phase = phases[sec] if sec < len(phases) else None
                self.sec = sec
            if phase != last:
                site = ep.site  # ``_good``'s table looked up here first (most programs: their site's phase is known)
                got = self._goods.get((site.x, site.y, phase))
                self.gb, self.gs = gb, gs = got if got is not None else self._good(site, phase)
                last = phase
            cls = type(top)
            if cls is Loop:  # ``op``'s loop case without its call (first: no quick path takes a loop)
                self._loop(ep, top, (i,), (), 1, _NO_RANGES, i, phase)  # type: ignore[arg-type]
                continue
            q = quiet.get(cls)
            if q is not None and q(top, gb, gs, ng):  # no rule of ``_leaf`` can fail: pass over it
                continue
            if cls in sem_quick and self._sem_passes(top, ep, (), 1, _NO_RANGES):  # no rule can fail: counted
                continue
            if cls in transfer_quick and self._transfer_passes(top, ep, (), phase, (), i, i):  # no rule can fail: recorded
                continue
            if cls in mcast_quick and self._mcast_passes(top, ep, 1):  # no rule can fail: counted
                continue
            if cls in acc_quick and self._acc_passes(top):  # no rule can fail
                continue
            if cls in _LEAVES:  # ``op``'s leaf case without its call (most ops are leaves)
                self._leaf(ep, top, (i,), (), i, phase)
                if cls in _WORD_OPS:
                    self._word_range(ep, top, (i,), 1, {})
            else:
                self.op(ep, top, (i,), (), 1, {}, i, phase)
        self.found.extend(self.uses)
        self.uses = []

    def op(self, ep: EngineProgram, op: Op, at: tuple[int, ...], loops: tuple[str, ...], times: int,
           ranges: dict[str, int], top: int, phase: int | None) -> None:
        """Check ``op`` (at path ``at``, under loop variables ``loops`` run ``times`` times with index ranges
        ``ranges``; its top-level op is ``top``, in phase ``phase``) and, for a loop or if, its body."""
        cls = type(op)
        if cls not in OP_TAGS:
            raise UnhandledOp("validate", op)
        if cls is Loop:
            assert isinstance(op, Loop)
            self._loop(ep, op, at, loops, times, ranges, top, phase)
            return
        if cls is If:
            assert isinstance(op, If)
            if len(at) > NEST_MAX:
                self._report(ep, at, op, f"nests {len(at)} loops and ifs deep, more than the model's {NEST_MAX}")
                self.cut_short = True
                return
            if op.var not in loops:
                self._report(ep, at, op, f"if tests {op.var!r}, which is not an enclosing loop variable")
            for j, x in enumerate(op.body):
                self.op(ep, x, (*at, j), loops, times, ranges, top, phase)
            return
        self._leaf(ep, op, at, loops, top, phase, ranges)
        if cls in _WORD_OPS:
            self._word_range(ep, op, at, times, ranges)

    def _report(self, ep: EngineProgram, at: tuple[int, ...], op: Op, rule: str, to: list[IrViolation] | None = None) -> None:
        name = f"program {ep.key} ops" + "".join(f"[{j}]" if n == 0 else f".body[{j}]" for n, j in enumerate(at))
        (self.found if to is None else to).append(IrViolation(f"{name} {type(op).__name__}", rule, ep.key, at))

    def _use(self, ep: EngineProgram, top: int, op: Op, rule: str) -> None:
        self.uses.append(IrViolation(f"program {ep.key} ops[{top}] {type(op).__name__}", rule, ep.key, (top,)))

    def _loop(self, ep: EngineProgram, op: Loop, at: tuple[int, ...], loops: tuple[str, ...], times: int,
              ranges: dict[str, int], top: int, phase: int | None) -> None:
        var = op.var
        self.loop_vars.append(var)
        if var in loops:
            self._report(ep, at, op, f"loop variable {var!r} shadows an enclosing loop's")
        if len(at) > NEST_MAX:
            self._report(ep, at, op, f"nests {len(at)} loops and ifs deep, more than the model's {NEST_MAX}")
            self.cut_short = True
            return
        count = op.count
        # a constant in range (most loops): no rule to test
        n = count if type(count) is int and 0 <= count <= U32 else self._count_rules(ep, op, at)
        inner = {**ranges, var: n - 1 if n > 0 else 0}
        body_loops = (*loops, var)
        times *= n  # each op of the body runs n times per run of the loop
        # the module's tables read as globals: a body holds a few ops, too few to repay copying them to locals
        quiet, gb, gs, ng = self.quiet, self.gb, self.gs, self.ng
        for j, x in enumerate(op.body):
            cls = type(x)
            if cls is Loop:  # ``op``'s loop case without its call (first: no quick path takes a loop)
                self._loop(ep, x, (*at, j), body_loops, times, inner, top, phase)  # type: ignore[arg-type]
                continue
            q = quiet.get(cls)
            if q is not None and q(x, gb, gs, ng):  # no rule of ``_leaf`` can fail: pass over it
                continue
            if cls in _SEM_QUICK and self._sem_passes(x, ep, body_loops, times, inner):  # no rule can fail
                continue
            if cls in _TRANSFER_QUICK and self._transfer_passes(x, ep, body_loops, phase, at, j, top):  # no rule can fail
                continue
            if cls in _MCAST_QUICK and self._mcast_passes(x, ep, times):  # no rule can fail
                continue
            if cls in _ACC_QUICK and self._acc_passes(x):  # no rule can fail
                continue
            if cls in _LEAVES:  # ``op``'s leaf case without its call
                where = (*at, j)
                self._leaf(ep, x, where, body_loops, top, phase, inner)
                if cls in _WORD_OPS:
                    self._word_range(ep, x, where, times, inner)
            else:
                self.op(ep, x, (*at, j), body_loops, times, inner, top, phase)

    def _count_rules(self, ep: EngineProgram, op: Loop, at: tuple[int, ...]) -> int:
        """The rules of a loop's count that is not a constant in ``[0, U32]`` (``_loop`` passes those over); returns
        the most iterations the loop runs (``count_max``, at least 0; 0 for a trip that is not declared)."""
        if isinstance(op.count, str):
            if op.count not in self.trip_max:
                self._report(ep, at, op, f"count {op.count!r} is not a declared trip")
        elif isinstance(op.count, TripCount):
            if op.count.trip not in self.trip_max:
                self._report(ep, at, op, f"count reads trip {op.count.trip!r}, which is not declared")
            if op.count.scale < 1:
                self._report(ep, at, op, f"count scale must be >= 1, got {op.count.scale}")
            if too_large(op.count.scale, U32) or too_large(op.count.offset, U32):
                self._report(ep, at, op, f"count scale {clip(str(op.count.scale))} or offset "
                                         f"{clip(str(op.count.offset))} is too large for the model (at most {U32})")
        elif op.count < 0:
            self._report(ep, at, op, f"count must be >= 0, got {op.count}")
        elif op.count > U32:
            self._report(ep, at, op, f"count {clip(str(op.count))} is too large for the model (loop counts are 32-bit: "
                                     f"at most {U32})")
        return max(count_max(op.count, self.trip_max), 0) if count_trip(op.count) in self.trip_max or isinstance(
            op.count, int) else 0

    def index_rules(self) -> None:
        """The index buffer rules of every indirect address the walk saw (``_index_buffer``), into ``found``."""
        for ep, op, _at, _top, phase in self.index_uses:
            assert op.addr.dynamic is not None
            k = (ep.site, -1 if phase is None else phase, op.addr.dynamic.name)
            got = self.index_fills.get(k, set())
            if len(got) == 1:
                self.index_derived[k] = next(iter(got))
            elif len(got) > 1:
                self.index_ambiguous[k] = got
        for ep, op, at, top, phase in self.index_uses:
            self._index_buffer(ep, op, at, top, phase)
        self.found.extend(self.uses)
        self.uses = []

    def _index_buffer(self, ep: EngineProgram, op: ReadTiles | WriteTiles, at: tuple[int, ...], top: int,
                      phase: int | None) -> None:
        """The index buffer of an indirect address (``Dynamic.buf``, else derived: ``Program.index_buffers``): a
        buffer of the op's site and phase; an unnamed address's tensor fills at most one buffer there."""
        dyn = op.addr.dynamic
        assert dyn is not None
        p, site = self.p, ep.site
        key = (site, -1 if phase is None else phase, dyn.name)
        name = clip(repr(dyn.name))
        if dyn.buf is None:
            if key in self.index_ambiguous:
                self._report(ep, at, op, f"index tensor {name} is read into buffers "
                                         f"{sorted(self.index_ambiguous[key])} of {site}: an indirect address reading "
                                         "it must name its index buffer (dynamic buf)")
                return
            b = self.index_derived.get(key)
            if b is None:
                return  # a value the host sets (docs/semantics.md, "index buffer")
        else:
            b = dyn.buf  # its own, whatever other addresses of the tensor read from
        if not 0 <= b < self.nb:
            self._report(ep, at, op, f"index buffer {b} is not a buffer")
            return
        x = p.buffers[b]
        if x.site != site:
            self._report(ep, at, op, f"index buffer {b} lives on {x.site}, not on this engine's site {site}")
        elif phase is not None and 0 <= x.section < len(self.phases) and self.phases[x.section] != phase:
            self.uses.append(IrViolation(
                f"program {ep.key} ops[{top}] {type(op).__name__}",
                f"reads its index from buffer {b} of section {x.section} (phase {self.phases[x.section]}) from phase "
                f"{phase}: a buffer is used only in its own phase"))

    def _ids(self, ep: EngineProgram, op: Op, at: tuple[int, ...], top: int, phase: int | None) -> None:
        """``_leaf``'s rules of the ids ``op`` names (in range, on its site, of its phase), its pages and its tiles."""
        p = self.p
        nb, ns, phases, nph = self.nb, self.ns, self.phases, len(self.phases)
        site = ep.site
        cls = type(op)
        ids, has_pages, has_tiles = _SHAPE.get(cls) or _shape(cls)
        for fname, kind in ids:
            x = getattr(op, fname)
            if x is None:
                continue
            if kind == ID_OPERANDS:
                xs = [o.buf for o in x]
                kind = ID_BUFFER
            else:
                xs = [x]
            for x in xs:
                if kind == ID_BUFFER:
                    if not 0 <= x < nb:
                        self._report(ep, at, op, f"buffer {x} is not a buffer")
                        continue
                    b = p.buffers[x]
                    if b.site is not site and b.site != site:
                        self._report(ep, at, op, f"buffer {x} lives on {b.site}, not on this engine's site {site}")
                    sec: int | None = b.section
                    what = "buffer"
                elif kind == ID_SEMAPHORE:
                    if not 0 <= x < ns:
                        self._report(ep, at, op, f"sem {x} is not a semaphore")
                        continue
                    sec, what = p.semaphores[x].section, "semaphore"
                else:
                    if kind == ID_GROUP and not 0 <= x < len(p.groups):
                        self._report(ep, at, op, f"group {x} is not a multicast group")
                    continue
                if phase is not None and sec is not None and 0 <= sec < nph and phases[sec] != phase:
                    self._use(ep, top, op, f"uses {what} {x} of section {sec} (phase {phases[sec]}) from phase {phase}: a {what} "
                        "is used only in its own phase")
        if has_pages and op.pages < 1:  # type: ignore[union-attr]
            self._report(ep, at, op, f"pages must be >= 1, got {op.pages}")  # type: ignore[union-attr]
        elif has_pages and op.pages > PAGES_MAX:  # type: ignore[union-attr]
            self._report(ep, at, op, f"pages {clip(str(op.pages))} is too large for the model (16-bit CB counters: at most "  # type: ignore[union-attr]
                   f"{PAGES_MAX})")
        if isinstance(op, FillTiles) and op.tiles == 0 and op.kind == PATCH:
            pass  # stores into tiles the engine already filled: a patch (docs/semantics.md "Local-store fills")
        elif has_tiles and op.tiles < 1:  # type: ignore[union-attr]
            self._report(ep, at, op, f"tiles must be >= 1, got {op.tiles}"  # type: ignore[union-attr]
                         + (" (0 only for a fill_tiles of kind 'patch')" if isinstance(op, FillTiles) else ""))
        elif has_tiles and op.tiles > TILES_MAX:  # type: ignore[union-attr]
            self._report(ep, at, op, f"tiles {clip(str(op.tiles))} is too large for the model (one op moves at most "  # type: ignore[union-attr]
                   f"{TILES_MAX} tiles)")

    def _leaf(self, ep: EngineProgram, op: Op, at: tuple[int, ...], loops: tuple[str, ...], top: int,
              phase: int | None, ranges: dict[str, int] | None = None) -> None:
        """The rules of a leaf op. Besides its own rules (``found``): a buffer or semaphore is used only in its own
        phase (the memory proof lets buffers of different phases share bytes); inputs and params are never
        written, outputs never read (a tensor both written and read is an activation) — ``uses``, named by the
        top-level op."""
        p = self.p
        nb, ns, phases, nph = self.nb, self.ns, self.phases, len(self.phases)
        site = ep.site

        # No closures per leaf (two per op were a tenth of a templated program's validation): the rare report
        # builds its message through ``_report`` / ``_use``.
        cls = type(op)
        if cls is ScratchAccess:
            self.scratch_access.append((ep, op))  # type: ignore[arg-type]
        if cls not in self.issues:  # the common case decided here (``_ISSUES_OF``), the rest by ``engine_rule``
            wrong_engine = engine_rule(op, ep.engine, p.semaphores)
            if wrong_engine is not None:
                self._report(ep, at, op, wrong_engine)

        quick = _QUICK.get(cls)
        if quick is None or not quick(op, self.gb, self.gs, self.ng):  # else every id, pages and tiles pass
            self._ids(ep, op, at, top, phase)
        if cls in _PLAIN:
            return
        # The commonest classes with rules of their own first, each returning: no branch after applies to it (one
        # isinstance chain per op was a tenth of validation).
        if cls is Compute:
            if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
                assert isinstance(op, Compute)
            for o in op.ins:
                if o.pages < 1:
                    self._report(ep, at, op, f"operand pages must be >= 1, got {o.pages}")
                elif o.pages > PAGES_MAX:
                    self._report(ep, at, op, f"operand pages {clip(str(o.pages))} is too large for the model (16-bit CB counters: at "
                           f"most {PAGES_MAX})")
            for r in op.in_place:
                # A read in place names a page past the read pointer: a negative base or a term over anything but an
                # enclosing loop's index has no page (docs/semantics.md "Reads in place").
                if not 0 <= r.page <= PAGES_MAX:
                    self._report(ep, at, op, f"in-place page must be in [0, {PAGES_MAX}], got {clip(str(r.page))}")
                for t in r.terms:
                    if t.var not in loops:
                        self._report(ep, at, op, f"in-place page uses {t.var!r}, which is not an enclosing loop variable")
                    elif abs(t.coef) > PAGES_MAX:
                        self._report(ep, at, op, f"in-place page coefficient {clip(str(t.coef))} is too large for the "
                                                 f"model (at most {PAGES_MAX})")
            return
        if cls is ReadTiles or cls is WriteTiles:
            assert isinstance(op, (ReadTiles, WriteTiles))
            (self.reads if cls is ReadTiles else self.writes).add(op.tensor)
            sections = self.tensor_sections.get(op.tensor)
            if sections is None:
                sections = self.tensor_sections[op.tensor] = set()
            sections.add(self.sec)
            if op.tensor not in self.tensor_of:
                self._report(ep, at, op, f"tensor {clip(repr(op.tensor))} is not declared")
            if _addr_too_large(op.addr):
                self._report(ep, at, op, f"address {clip(_addr_text(op.addr))} is too large for the model (tile ids are 32-bit: base, "
                       f"coefficients and dynamic range at most {U32} in magnitude)")
            for t in op.addr.terms:
                # a trip's value may take part too (a block whose place a front end's --range moves): an enclosing
                # loop of the same name shadows it, as everywhere
                if t.var not in loops:
                    self.names_non_loop = True
                if t.var not in loops and t.var not in self.trip_max:
                    self._report(ep, at, op, f"address uses {t.var!r}, which is neither an enclosing loop variable "
                                 "nor a trip")
            if op.addr.dynamic is not None and op.addr.dynamic.lo > op.addr.dynamic.hi:
                self._report(ep, at, op, "dynamic address range has lo > hi")
            bid = op.into if isinstance(op, ReadTiles) else op.src
            tensor = self.tensor_of.get(op.tensor)
            if tensor is not None and 0 <= bid < nb:
                # The NoC moves whole tiles of the tensor's format (its page size) to or from the buffer's pages: a
                # tile of another size overruns the page or leaves it part filled (get_tile_size, dataflow_api.h).
                tb, bb = p.target.tile_bytes.get(tensor.dtype), p.target.tile_bytes.get(p.buffers[bid].dtype)
                if op.part is not None:
                    self._part(op, tb, bb, p.buffers[bid].name, loops, ranges or {},
                               lambda rule: self._report(ep, at, op, rule))
                elif tb is not None and bb is not None and tb != bb:
                    self._report(ep, at, op, f"moves {tensor.dtype} tiles of {op.tensor!r} ({tb} bytes) through b{bid} "
                           f"({p.buffers[bid].name}), whose {p.buffers[bid].dtype} pages hold {bb}-byte tiles: a NoC "
                           "transfer moves the tensor's tiles as they are")
            if isinstance(op, ReadTiles):
                self.index_fills.setdefault((site, -1 if phase is None else phase, op.tensor), set()).add(op.into)
            if op.addr.dynamic is not None:
                self.index_uses.append((ep, op, at, top, phase))
            role = tensor.role if tensor is not None else None
            if isinstance(op, WriteTiles) and role in (Role.INPUT, Role.PARAM):
                self._use(ep, top, op, f"writes {role.value} tensor {op.tensor!r}: inputs and params are read-only")
            if isinstance(op, ReadTiles) and role == Role.OUTPUT:
                self._use(ep, top, op, f"reads output tensor {op.tensor!r}: a tensor that is written and read is an activation")
            if op.part is not None and op.tensor in self.sharded:
                # A sharded buffer's pages are the tensor's tiles, ordered against its transfers per tile
                # (families/cb/shard_semantics.py): a part of one is not counted there.
                self._use(ep, top, op, f"part: moves part of a page of {op.tensor!r}, which a sharded buffer holds: "
                          "part-page transfers of a sharded tensor are not modelled (its shards are whole tiles)")
            if op.part is not None and role == Role.STATE:
                # A state tile's versions are counted per tile and section (docs/semantics.md, "Tensors"): a part of
                # one is a version of some of its bytes, which no rule counts yet.
                self._use(ep, top, op, f"part: moves part of a page of state tensor {op.tensor!r}: part-page "
                          "transfers of carried state are not modelled (a state's versions are whole tiles)")
            return
        if cls is AcquireAcc:
            assert isinstance(op, AcquireAcc)
            if op.tiles < 1:
                self._report(ep, at, op, "tiles must be >= 1")
            if op.dtype not in p.target.tile_bytes:
                self._report(ep, at, op, f"dtype {op.dtype!r} is not one of target {p.target.name}'s")
            return
        if cls is SemInc or cls is SemWait or cls is SemSet:
            # The commonest semaphore ops (a rendezvous is a run of them) have two rules of the branches below: their
            # word's site, and a wait's or a set's terms.
            assert isinstance(op, (SemInc, SemWait, SemSet))
            if 0 <= op.sem < ns:
                here = op.at if isinstance(op, SemInc) else site
                if (here.x, here.y) not in self.sem_xy[op.sem]:
                    sem = p.semaphores[op.sem]
                    self._report(ep, at, op, f"semaphore {sem.id} ({sem.name}) has no word on site {here}")
            if not isinstance(op, SemInc):
                what = "threshold" if isinstance(op, SemWait) else "value"
                for t in op.terms:
                    if t.var not in loops:
                        self._report(ep, at, op, f"{what} uses {t.var!r}, which is not an enclosing loop variable")
            return
        if isinstance(op, (SemInc, SemSet, SemRmw, SemWait, McastSetValid, InlineWrite)) and 0 <= op.sem < ns:
            here = op.at if isinstance(op, (SemInc, InlineWrite)) else site
            if (here.x, here.y) not in self.sem_xy[op.sem]:
                sem = p.semaphores[op.sem]
                self._report(ep, at, op, f"semaphore {sem.id} ({sem.name}) has no word on site {here}")
        if isinstance(op, McastSetValid) and op.src is not None and 0 <= op.src < ns \
                and (site.x, site.y) not in self.sem_xy[op.src]:
            self._report(ep, at, op, f"source semaphore {op.src} has no word on this engine's site {site}")
        if isinstance(op, SemWait):
            for t in op.terms:
                if t.var not in loops:
                    self._report(ep, at, op, f"threshold uses {t.var!r}, which is not an enclosing loop variable")
        if isinstance(op, SemSet):
            for t in op.terms:
                if t.var not in loops:
                    self._report(ep, at, op, f"value uses {t.var!r}, which is not an enclosing loop variable")
        # 0 is a count, not bad input: the barrier expects that many acknowledgements while every destination sends
        # one (the too-few case of docs/semantics.md "Acknowledgement counts", which the deadlock family decides)
        if isinstance(op, (McastSend, McastSetValid, SemIncMcast)) and not 0 <= op.num_dests <= U32:
            self._report(ep, at, op, f"num_dests must be in [0, {U32}] (a uint32_t count of the acknowledgements the "
                         f"engine's barrier expects), got {clip(str(op.num_dests))}")
        if isinstance(op, (McastSend, McastSetValid)) and op.vc is not None and not 0 <= op.vc < NOC_VCS:
            self._report(ep, at, op, f"vc must be a NoC virtual channel in [0, {NOC_VCS - 1}] (or null: the default "
                         f"channel), got {clip(str(op.vc))}")
        if isinstance(op, (McastSend, McastSetValid, SemIncMcast)) and 0 <= op.group < len(p.groups):
            g = p.groups[op.group]
            dests = self.dests[op.group]
            if g.sender.x != site.x or g.sender.y != site.y:  # by coordinates (a Site compares through Python code)
                self._report(ep, at, op, f"group {g.id}'s sender is {g.sender}, not this engine's site {site}")
            # A num_dests other than the group's destinations is a finding, not bad input: the barrier that counts
            # the acknowledgements hangs (docs/semantics.md "Acknowledgement counts"; the deadlock family decides it).
            if isinstance(op, SemIncMcast) and g.loopback:
                self._report(ep, at, op, f"group {g.id} is loopback: noc_semaphore_inc_multicast's sender is never in its rectangle")
            for d in dests:
                if isinstance(op, McastSend) and 0 <= op.dest < nb:
                    src = p.buffers[op.dest]
                    if not 0 <= src.section < nph or (d.x, d.y, src.cb, phases[src.section]) not in self._cbs():
                        self._report(ep, at, op, f"destination {d} has no buffer with cb index {src.cb} in this phase")
                if isinstance(op, (McastSetValid, SemIncMcast)) and 0 <= op.sem < ns and (d.x, d.y) not in self.sem_xy[op.sem]:
                    self._report(ep, at, op, f"destination {d} has no word of semaphore {op.sem}")
        if isinstance(op, McastSend):
            self._mcast_place(op, lambda rule: self._report(ep, at, op, rule))
        if isinstance(op, RemoteRead) and 0 <= op.buf < nb and 0 <= op.into < nb:
            self._remote_read(op, lambda rule: self._report(ep, at, op, rule))
        if isinstance(op, CopyTiles) and op.src == op.into:
            # One buffer's pages copied onto themselves is an in-place update, not a copy between two windows.
            self._report(ep, at, op, f"copies b{op.src} into itself: a copy reads one buffer's waited front and "
                         "stores into another's reserved back")

    def _part(self, op: ReadTiles | WriteTiles, tb: int | None, bb: int | None, bname: str, loops: tuple[str, ...],
              ranges: dict[str, int], report: Callable[[str], None]) -> None:
        """A transfer of part of a page moves one tile's byte range (``Part``): ``offset + size`` inside the tensor's
        page (``tb`` bytes per tile of its dtype) at every index of the enclosing loops (``ranges``: each loop's
        greatest index), ``at + size`` inside the buffer's tile (``bb``); a range past either end reaches into the
        next page (``get_noc_addr(page, s, offset)``, dataflow_api.h). ``None``: a dtype the target lacks, reported
        elsewhere."""
        part = op.part
        assert part is not None
        if op.tiles != 1:
            report(f"part: a transfer of part of a page moves one tile, got tiles={op.tiles}")
        bad = [t.var for t in part.terms if t.var not in loops]
        if bad:
            report(f"part: offset term {bad[0]!r} is not an enclosing loop variable")
            return
        # The offset's least and greatest value over the loops' index ranges (each term is monotone in its index).
        lo = part.offset + sum(min(0, t.coef * ranges.get(t.var, 0)) for t in part.terms)
        hi = part.offset + sum(max(0, t.coef * ranges.get(t.var, 0)) for t in part.terms)
        if lo < 0 or part.at < 0 or part.size < 1:
            report(f"part: offset and at must be >= 0 and size >= 1, got offset={lo}{' at its least' if part.terms else ''}, "
                   f"size={part.size}, at={part.at}")
            return
        if tb is not None and hi + part.size > tb:
            report(f"part: offset + size = {hi + part.size} bytes{' at its greatest' if part.terms else ''} passes "
                   f"the end of a page of {op.tensor!r} ({tb} bytes)")
        if bb is not None and part.at + part.size > bb:
            bid = op.into if isinstance(op, ReadTiles) else op.src
            report(f"part: at + size = {part.at + part.size} bytes passes the end of a tile of b{bid} ({bname}, "
                   f"{bb} bytes)")

    def _remote_read(self, op: RemoteRead, report: Callable[[str], None]) -> None:
        """A remote read names a buffer of its cb index at ``at`` (in its phase), reads inside that ring, and moves
        pages of one size (docs/semantics.md, "Remote reads")."""
        p = self.p
        owner = p.remote_buffer(op.buf, op.at)
        b = p.buffers[op.buf]
        if owner is None:
            report(f"site {op.at} has no buffer with cb index {b.cb} in this phase to read from")
            return
        if not (0 <= owner < len(p.buffers) and p.buffers[owner].id == owner):
            return  # an id that is not its position: the dense-id rule has refused the program
        r, into = p.buffers[owner], p.buffers[op.into]
        if not 0 <= op.offset <= PAGES_MAX:
            report(f"offset must be in [0, {PAGES_MAX}] pages (16-bit CB counters), got {clip(str(op.offset))}")
        elif op.offset + op.pages > r.capacity:
            report(f"reads pages [{op.offset}, {op.offset + op.pages}) past its read pointer, past the end of the "
                   f"{r.capacity}-page ring of cb {r.cb} at {op.at}")
        tb = p.target.tile_bytes
        if (r.page_tiles, tb.get(r.dtype)) != (b.page_tiles, tb.get(b.dtype)) or tb.get(r.dtype) != tb.get(into.dtype):
            report(f"reads pages of cb {r.cb} at {op.at} ({r.page_tiles} {r.dtype} tiles) into b{into.id} "
                   f"({into.dtype}) through b{b.id} ({b.page_tiles} {b.dtype} tiles): a read moves whole tiles of one "
                   "size")

    def _mcast_place(self, op: McastSend, report: Callable[[str], None]) -> None:
        """Where a multicast or remote write lands (docs/semantics.md, "Remote writes to an explicit place"): an
        ``offset`` in ``[0, PAGES_MAX]`` that leaves its pages inside the destination's ring, and with ``dst`` pages of
        the source's size (a transfer moves whole pages of one size: ``get_tile_size``). Pages already pushed
        (``behind``, "Multicast of pages already pushed"): no ``front`` or ``dst``, the source pages inside the
        ``behind`` pages before the write pointer, ``behind`` at most the capacity."""
        p, nb = self.p, self.nb
        if not 0 <= op.offset <= PAGES_MAX:
            report(f"offset must be in [0, {PAGES_MAX}] pages (16-bit CB counters), got {clip(str(op.offset))}")
            return
        if 0 <= op.dest < nb and op.offset + op.pages > p.buffers[op.dest].capacity:
            d = p.buffers[op.dest]
            report(f"lands {op.pages} pages {op.offset} pages past its address, past the end of the {d.capacity}-page "
                   f"ring of cb {d.cb} ({d.name}): no destination can hold them")
        if not 0 <= op.behind <= PAGES_MAX:
            report(f"behind must be in [0, {PAGES_MAX}] pages (16-bit CB counters), got {clip(str(op.behind))}")
            return
        if op.behind:
            # Pages already pushed are this engine's own (its write pointer) and land at their own address.
            if op.front or op.dst is not None:
                report(f"behind {op.behind} names pages already pushed, before this engine's write pointer: not with "
                       "front (the read pointer) or dst (a landing at another buffer's write pointer)")
            elif op.offset + op.pages > op.behind:
                report(f"sends pages [{op.offset}, {op.offset + op.pages}) past a pointer {op.behind} pages behind the "
                       "write pointer: the source pages must be pages already pushed (offset + pages <= behind)")
            elif 0 <= op.buf < nb and op.behind > p.buffers[op.buf].capacity:
                report(f"behind {op.behind} pages is more than the {p.buffers[op.buf].capacity}-page ring of "
                       f"b{op.buf} holds pushed")
        if op.dst is not None and 0 <= op.dst < nb and 0 <= op.buf < nb:
            src, dst = p.buffers[op.buf], p.buffers[op.dst]
            tb = p.target.tile_bytes
            if src.page_tiles != dst.page_tiles or tb.get(src.dtype) != tb.get(dst.dtype):
                report(f"moves pages of b{src.id} ({src.page_tiles} {src.dtype} tiles) into cb {dst.cb} "
                       f"({dst.page_tiles} {dst.dtype} tiles a page): a remote write moves whole pages of one size")

    def _word_range(self, ep: EngineProgram, op: Op, at: tuple[int, ...], times: int, ranges: dict[str, int]) -> None:
        """Every semaphore value a program names fits the 32-bit word, and no word can be counted past it: the
        initial value (or the largest value a SemSet writes) plus every increment aimed at the word, each counted
        as often as its loops can run (trips at their max), stays <= 2**32 - 1 (``word_totals``). Bounds the
        interpreter's unbounded integers to what the hardware word holds, so a wrap can never be proved away."""
        p = self.p
        if isinstance(op, (SemInc, SemIncMcast, SemRmw)):
            if op.by > WORD_MAX:
                self._report(ep, at, op, f"by {op.by} exceeds the 32-bit word (max {WORD_MAX})", self.words)
            targets = (op.at,) if isinstance(op, SemInc) else (ep.site,) if isinstance(op, SemRmw) else (
                self.dests[op.group] if 0 <= op.group < len(p.groups) else ())
            for site in targets:
                word = (op.sem, site.x, site.y)
                self.incs[word] = self.incs.get(word, 0) + op.by * times
        elif isinstance(op, InlineWrite):
            # A remote store of a value: the word starts a count from it as from a SemSet's value.
            if op.value > WORD_MAX:
                self._report(ep, at, op, f"value {op.value} exceeds the 32-bit word (max {WORD_MAX})", self.words)
            word = (op.sem, op.at.x, op.at.y)
            self.start[word] = max(self.start.get(word, 0), op.value)
        elif isinstance(op, (SemSet, SemWait)):
            lo = hi = op.value
            for t in op.terms:
                top = t.coef * ranges.get(t.var, 0)
                lo, hi = lo + min(0, top), hi + max(0, top)
            if hi > WORD_MAX:
                self._report(ep, at, op, f"value {hi} exceeds the 32-bit word (max {WORD_MAX})", self.words)
            if lo < 0:
                what = "threshold" if isinstance(op, SemWait) else "value"
                self._report(ep, at, op, f"{what} {lo} is negative in some iteration (a word is never below 0)",
                             self.words)
            if isinstance(op, SemSet):
                word = (op.sem, ep.site.x, ep.site.y)
                self.start[word] = max(self.start.get(word, 0), hi)

    def word_totals(self) -> None:
        start = self.start
        for word in sorted(self.incs):  # by semaphore, then column, then row
            total = self.incs[word]
            if start.get(word, 0) + total > WORD_MAX:
                sem, site = word[0], Site(word[1], word[2])
                self.words.append(IrViolation(
                    f"semaphore {sem} at {site}", f"can be counted to {start.get(word, 0) + total} (start + every "
                                                  f"increment, loops at their max), past the 32-bit word (max {WORD_MAX})"))


def _check_sources(ep: EngineProgram, bad: Report) -> None:
    """The rules of ``ep``'s source locations (``_source_rules``), in order. A location that plainly passes them (a
    path met once that names an op, line and column within 32 bits and printable file and text, its call site's too:
    ``_SOURCES_QUICK``) is passed over without wording its entity: a front end records one per op."""
    ops, quick = ep.ops, _SOURCES_QUICK
    n = len(ops)
    if quick and _sources_pass(ep.sources, ops):
        return
    seen_paths: set[tuple[int, ...]] = set()
    for path, loc in ep.sources:
        c = loc.called_at
        # printable text holds no control character (Cc is never printable): one C call for the common case
        if quick and path not in seen_paths and loc.line <= U32 and loc.column <= U32 and loc.file.isprintable() \
                and loc.text.isprintable() and (c is None or (c.line <= U32 and c.column <= U32 and c.file.isprintable()
                                                          and c.text.isprintable())) \
                and ((len(path) == 1 and 0 <= path[0] < n) or _names_an_op(ops, path)):
            seen_paths.add(path)
            continue
        _source_rules(ep, path, loc, path in seen_paths, bad)
        seen_paths.add(path)


def _sources_pass(sources: Sequence[tuple[tuple[int, ...], SourceLoc]], ops: tuple[Op, ...]) -> bool:
    """Whether every location of ``sources`` (an engine program's, of ``ops``) plainly passes the rules as
    ``_check_sources`` tests each, all at once: no path twice, every line and column within 32 bits, the text of every
    file and text (call sites' too) printable as one string, every path naming an op. False decides nothing (each
    location is then tested on its own)."""
    paths = [path for path, _loc in sources]
    if len(set(paths)) != len(paths):
        return False
    locs = [loc for _path, loc in sources]
    locs += [c for c in map(_CALLED_AT, locs) if c is not None]
    if max(map(_LINE, locs)) > U32 or max(map(_COLUMN, locs)) > U32:
        return False
    # printable text holds no control character (Cc is never printable), and a string is printable when each of its
    # parts is
    if not printable("".join([*map(_FILE, locs), *map(_TEXT, locs)])):
        return False
    # each path's body looked up once per distinct prefix (a loop's ops share theirs), not walked per path
    bodies: dict[tuple[int, ...], tuple[Op, ...] | None] = {(): ops}
    n = len(ops)
    for path in paths:
        if len(path) == 1:  # a top-level op (most): no prefix to look up
            if not 0 <= path[0] < n:
                return False
            continue
        if not path:
            continue  # names the program's ops (``_names_an_op``)
        prefix = path[:-1]
        if prefix in bodies:
            body = bodies[prefix]
        else:
            body = bodies[prefix] = _body_at(ops, prefix)
        if body is None or not 0 <= path[-1] < len(body):
            return False
    return True


def _body_at(ops: tuple[Op, ...], path: tuple[int, ...]) -> tuple[Op, ...] | None:
    """The body of the loop or if at ``path`` in ``ops`` (``ops`` for the empty path), or None when ``path`` names no
    loop or if."""
    for i in path:
        if not 0 <= i < len(ops) or not isinstance(ops[i], CONTAINERS):
            return None
        ops = ops[i].body  # type: ignore[union-attr]
    return ops


def printable(text: str) -> bool:
    """``text.isprintable()``; ASCII text is judged by deleting its printable bytes (space to tilde), a C loop several
    times faster than ``isprintable``'s lookup per character (a front end's source locations: a kilobyte per kernel)."""
    if text.isascii():
        return not text.encode().translate(None, _ASCII_PRINTABLE)
    return text.isprintable()


_ASCII_PRINTABLE = bytes(range(0x20, 0x7F))


_CALLED_AT, _LINE, _COLUMN = operator.attrgetter("called_at"), operator.attrgetter("line"), operator.attrgetter("column")
_FILE, _TEXT = operator.attrgetter("file"), operator.attrgetter("text")


def _source_rules(ep: EngineProgram, path: tuple[int, ...], loc: SourceLoc, again: bool, bad: Report) -> None:
    """The rules of one source location of ``ep`` (at op ``path``; ``again``: an earlier one named the path): it names
    an op of ``ep``, once; line and column fit 32 bits; file and text hold no control character (each of ``loc`` and
    of its call site)."""
    where = f"program {ep.key} sources {list(path)}"
    if not _names_an_op(ep.ops, path):
        bad(where, "a source location names an op of its program")
    if again:
        bad(where, "an op has one source location")
    for at in (loc, loc.called_at):
        if at is None:
            continue
        if at.line > U32 or at.column > U32:
            bad(where, f"line and column are at most {U32}")
        for what, text in (("file", at.file), ("text", at.text)):
            # printable text holds no control character (Cc is never printable): one C call for the common case
            if not text.isprintable() and any(unicodedata.category(c) == "Cc" for c in text):
                bad(where, f"a source {what} holds no control characters (newlines, tabs, escapes)")


#: Whether ``_check_sources`` passes over a location that plainly passes every rule (tests turn it off).
_SOURCES_QUICK = True


def _names_an_op(ops: tuple[Op, ...], path: tuple[int, ...]) -> bool:
    """Whether ``path`` (an index, then indices into enclosing loop or if bodies) names an op of ``ops``."""
    for depth, i in enumerate(path):
        if not 0 <= i < len(ops):
            return False
        if depth + 1 < len(path):
            op = ops[i]
            if not isinstance(op, CONTAINERS):
                return False
            ops = op.body
    return True


def _addr_too_large(a: Addr) -> bool:
    """Whether a part of ``a`` (its base, a coefficient, the dynamic range or scale) lies outside ``[-U32, U32]``
    (``limits.too_large``, written out: one call per ReadTiles and WriteTiles)."""
    if not -U32 <= a.base <= U32:
        return True
    for t in a.terms:
        if not -U32 <= t.coef <= U32:
            return True
    d = a.dynamic
    return d is not None and not (-U32 <= d.lo <= U32 and -U32 <= d.hi <= U32 and -U32 <= d.scale <= U32)


def _addr_text(a: Addr) -> str:
    terms = "".join(f" + {t.coef}*{t.var}" for t in a.terms)
    d = a.dynamic
    dyn = f" + {d.scale}*{d.name}[{d.lo}, {d.hi}]" if d is not None else ""
    return f"{a.base}{terms}{dyn}"


#: Ops whose values the 32-bit word rule reads.
_WORD_OPS = frozenset((SemInc, SemIncMcast, SemSet, SemRmw, SemWait, InlineWrite))
#: Every leaf op class (not a loop or an if): ``op`` sends each to ``_leaf``.
_LEAVES = frozenset(c for c in OP_TAGS if c not in (Loop, If))
#: Leaf ops with no rule beyond ids, pages and tiles.
_PLAIN = frozenset(c for c in OP_TAGS if c not in (Compute, SemInc, SemSet, SemRmw, SemWait, McastSetValid, McastSend, SemIncMcast,
                                                   ReadTiles, WriteTiles, AcquireAcc, InlineWrite, RemoteRead, CopyTiles,
                                                   Loop, If))
#: Per op class: its fields that name an id with their id space (``metadata["id"]``, as ``ir.ids.op_ids`` reads
#: them), whether it has ``pages`` and whether it has ``tiles``.
_SHAPE: dict[type, tuple[tuple[tuple[str, str], ...], bool, bool]] = {}


def _shape(cls: type) -> tuple[tuple[tuple[str, str], ...], bool, bool]:
    names = {f.name for f in attrs.fields(cls)}
    ids = tuple((f.name, f.metadata["id"]) for f in attrs.fields(cls) if f.metadata.get("id") is not None)
    _SHAPE[cls] = out = (ids, "pages" in names, "tiles" in names)
    return out


#: Whether a leaf op passes every rule of ``_OpPass._leaf``'s id, page and tile part: ``(op, good buffers, good
#: semaphores, groups) -> bool`` (``_quick``).
Quick = Callable[[Op, frozenset[int], frozenset[int], int], bool]


def _quick(cls: type) -> Quick:
    """A predicate generated from ``cls``'s fields (``_SHAPE``): true when every buffer it names is among the good
    buffers (``_OpPass._good``: a buffer of the op's site and phase), every semaphore among the good semaphores (of
    its phase; an optional one may be None), every group id below the group count, and ``pages`` and ``tiles`` in
    ``[1, PAGES_MAX]`` and ``[1, TILES_MAX]``: exactly when the generic checks of those (``_leaf``) would report
    nothing. False sends the op through them, which word each violation; so it may be false where they find none,
    never true where they would report one."""
    ids, has_pages, has_tiles = _SHAPE.get(cls) or _shape(cls)
    attrs.resolve_types(cls)
    optional = {f.name for f in attrs.fields(cls) if type(None) in typing.get_args(f.type)}
    terms = []
    for fname, kind in ids:
        if kind in (ID_BUFFER, ID_SEMAPHORE):
            test = f"op.{fname} in {'gb' if kind == ID_BUFFER else 'gs'}"
            # an id that may be None (a multicast's dst, a valid-multicast's src): None names nothing, which the
            # generic rules pass over (``_ids``)
            terms.append(f"(op.{fname} is None or {test})" if fname in optional else test)
        elif kind == ID_OPERANDS:
            terms.append(f"all([o.buf in gb for o in op.{fname}])")
        elif kind == ID_GROUP:
            terms.append(f"0 <= op.{fname} < ng")
        # a site, a tensor: no rule there
    if has_pages:
        terms.append(f"1 <= op.pages <= {PAGES_MAX}")
    if has_tiles:
        terms.append(f"1 <= op.tiles <= {TILES_MAX}")
    env: dict[str, Any] = {}
    exec(f"def quick(op, gb, gs, ng):\n    return {' and '.join(terms) or 'True'}\n", env)  # from the class's fields
    return env["quick"]  # type: ignore[no-any-return]


#: Per leaf op class, whether it has a field naming an id (``_SHAPE``): one without names no buffer but through an
#: address (``_check_scratch`` passes over it).
_SHAPE_IDS: dict[type, bool] = {cls: bool(_shape(cls)[0]) for cls in OP_TAGS if cls not in CONTAINERS}
#: ``_buffers_named`` of each op class (a loop's and an if's: none).
_NAMED: dict[type, Callable[[Op], list[int]]] = {cls: _namer(cls) for cls in OP_TAGS}
#: ``_quick`` of every leaf op class.
_QUICK: dict[type, Quick] = {cls: _quick(cls) for cls in OP_TAGS if cls not in CONTAINERS}
#: Leaf classes whose every rule is ``_quick``'s (``_PLAIN``) and that the walk records nothing of: when an engine may
#: issue one and ``_quick`` holds, the walk passes over it without calling ``_leaf``.
_QUIET = _PLAIN - {ScratchAccess}
#: The semaphore ops ``_OpPass._sem_passes`` passes over when no rule of ``_leaf`` can fail.
_SEM_QUICK = frozenset((SemInc, SemWait, SemSet, SemRmw, InlineWrite))
#: Per engine, the ``_SEM_QUICK`` classes it issues with no exception (``ISSUED_BY``).
_SEM_OF: dict[Engine, frozenset[type]] = {e: frozenset(c for c in _SEM_QUICK if e in ISSUED_BY[c]) for e in Engine}
#: The transfers ``_OpPass._transfer_passes`` passes over when no rule of ``_leaf`` can fail.
_TRANSFER_QUICK = frozenset((ReadTiles, WriteTiles))
#: Per engine, the ``_TRANSFER_QUICK`` classes it issues (``ISSUED_BY``).
_TRANSFER_OF: dict[Engine, frozenset[type]] = {
    e: frozenset(c for c in _TRANSFER_QUICK if e in ISSUED_BY[c]) for e in Engine}
#: The multicasts ``_OpPass._mcast_passes`` passes over when no rule of ``_leaf`` can fail.
_MCAST_QUICK = frozenset((McastSend, McastSetValid, SemIncMcast))
#: The roles of tensors a ``WriteTiles`` may not write and a ``ReadTiles`` may not read (``_leaf``'s use rules).
_READ_ONLY = frozenset((Role.INPUT, Role.PARAM))
_WRITE_ONLY = frozenset((Role.OUTPUT,))
#: No loop around a top-level op: its loop indices' ranges.
_NO_RANGES: dict[str, int] = {}
#: Per engine, the ``_QUIET`` classes it may issue with their ``_quick``: what ``_OpPass.program`` passes over.
_QUIET_OF: dict[Engine, dict[type, Quick]] = {
    e: {cls: _QUICK[cls] for cls in _QUIET if e in ISSUED_BY[cls]} for e in Engine}
#: Per engine, the op classes it issues with no exception (``ISSUED_BY``): a class set, hashed in C.
_ISSUES_OF: dict[Engine, frozenset[type]] = {e: frozenset(c for c, kinds in ISSUED_BY.items() if e in kinds)
                                             for e in Engine}


def _compute_quiet(op: Op, gb: frozenset[int], gs: frozenset[int], ng: int) -> bool:
    """Whether a ``Compute`` passes every rule of ``_OpPass._leaf`` but its engine's (which ``_QUIET_OF`` holds by
    construction): its ids and tiles (``_quick``), no page read in place and every operand's pages in ``[1,
    PAGES_MAX]``. ``Compute`` records nothing, so the walk may pass over it."""
    if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
        assert isinstance(op, Compute)
    return not op.in_place and _QUICK[Compute](op, gb, gs, ng) and all([1 <= o.pages <= PAGES_MAX for o in op.ins])


for _e in ISSUED_BY[Compute]:
    _QUIET_OF[_e][Compute] = _compute_quiet


def _copy_quiet(op: Op, gb: frozenset[int], gs: frozenset[int], ng: int) -> bool:
    """Whether a ``CopyTiles`` passes every rule of ``_OpPass._leaf`` but its engine's (which ``_QUIET_OF`` holds by
    construction): its ids and tiles (``_quick``) and two buffers, not one copied onto itself. ``CopyTiles`` records
    nothing, so the walk may pass over it."""
    if typing.TYPE_CHECKING:  # the class is known here (tested by the caller or above): narrowed for mypy only
        assert isinstance(op, CopyTiles)
    return op.src != op.into and _QUICK[CopyTiles](op, gb, gs, ng)


for _e in ISSUED_BY[CopyTiles]:
    _QUIET_OF[_e][CopyTiles] = _copy_quiet
#: The accumulator acquire ``_OpPass._acc_passes`` passes over when no rule of ``_leaf`` can fail.
_ACC_QUICK = frozenset((AcquireAcc,))
