"""One program from a host description: the host's tensors, buffers (one per core that has it) and semaphores, the
multicast groups and trips the kernels' reading found, and one engine program per (core, processor)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from verispatial.errors import InvalidProgram, IrViolation, ParseError
from verispatial.frontends.ttmetal import stated
from verispatial.frontends.ttmetal.cpp import Program as CppProgram
from verispatial.frontends.ttmetal.cpp import read_kernel
from verispatial.frontends.ttmetal.host import HostSpec, load_host
from verispatial.frontends.ttmetal.lower import Shared, read_scratch
from verispatial.ir.core import Engine, Role, SemRole, Site
from verispatial.ir.ids import Renaming
from verispatial.ir.program import (
    Buffer,
    BufferAt,
    EngineProgram,
    Group,
    Program,
    Semaphore,
    Tensor,
    Trip,
)
from verispatial.ir.serialize import schema_violations
from verispatial.ir.validate import validate


def import_host(path: str | Path) -> Program:
    """The program the host description at ``path`` and its kernels make. Raises ``ParseError`` for a bad host
    file (naming the field), ``Refused`` for a kernel construct not read (naming it and its file:line) and
    ``InvalidProgram`` when the program read breaks a structural rule (a kernel naming a buffer on a core the host
    gives it none, more semaphores than the target has)."""
    host = load_host(path)
    return assemble(host)


def assemble(host: HostSpec) -> Program:
    shared = Shared(host)
    cores = host.all_cores()
    programs: list[EngineProgram | None] = []
    parsed: dict[str, CppProgram] = {}
    later: list[tuple[int, int, str, Site]] = []  # kernels that load a buffer whose filler was not read yet

    def read(u: int, kname: str, site: Site) -> EngineProgram:
        k = host.kernel(kname)
        block = read_scratch(shared, k, site, host.work_units[u].runtime_args.get(kname, {}), parsed[kname])
        return EngineProgram(site, k.engine, tuple(block.ops), sources=tuple(block.locs))

    for u, unit in enumerate(host.work_units):
        for kname in unit.kernels:
            k = host.kernel(kname)
            if kname not in parsed:
                parsed[kname] = read_kernel(k.source, k.display, k.defines, host.kernel_root, host.include_dirs,
                                            compute=k.engine == Engine.COMPUTE)
            for site in unit.cores:
                try:
                    programs.append(read(u, kname, site))
                except stated.LandingNotRead:
                    later.append((len(programs), u, kname, site))
                    programs.append(None)
    for i, u, kname, site in later:
        programs[i] = read(u, kname, site)
    read_programs = [ep for ep in programs if ep is not None]
    stated.check(shared.claims, read_programs,
                 {(site, b.index): b.entry_size // b.page_tiles for site in host.all_cores() for b in host.buffers},
                 {(site, b.index): b.page_tiles for site in host.all_cores() for b in host.buffers})
    target = host.target
    buffers: list[Buffer] = []
    memory: list[BufferAt] = []
    # A sharded tensor's buffer is allocated before the program, at one L1 address on every core of its grid: here
    # one after another from the L1 base, each as large as a shard; the program's own circular buffers follow.
    shard_at: dict[str, int] = {}
    first = target.reserved_base
    for t in host.tensors:
        spec = host.shards.get(t["name"])
        if spec is not None:
            shard_at[t["name"]] = first
            size = spec.rows * spec.cols * target.bytes_per_tile(_dtype(t["dtype"]))
            first += -(-size // target.alignment) * target.alignment
    by_index: dict[tuple[Site, int], int] = {}
    for site in cores:
        offset = first
        on_shard: dict[str, int] = {}
        here = [b for b in host.buffers if b.cores is None or site in b.cores]
        # a scratchpad takes the highest buffer indices the site's circular buffers leave free (its host index is the
        # reading's own handle, past 63); the IR's indices are the target's (``max_cbs``)
        free = sorted(set(range(target.max_cbs)) - {b.index for b in here if not b.scratchpad}, reverse=True)
        for b in here:
            size = b.entries * b.page_tiles * target.bytes_per_tile(b.dtype)
            if b.tensor is not None:
                # its pages are the tensor's shard there; a second buffer on the shard is the same bytes (an alias)
                buf = Buffer(len(buffers), b.name, site, b.index, b.page_tiles, b.entries, b.dtype,
                             alias_of=on_shard.get(b.tensor), shard=host.shards[b.tensor].shard_on(b.tensor, site))
                on_shard.setdefault(b.tensor, buf.id)
                memory.append(BufferAt(buf.id, shard_at[b.tensor], size))
            else:
                if b.scratchpad and not free:
                    raise ParseError("scratchpads", f"core {site} has circular buffers at every one of its "
                                                    f"{target.max_cbs} indices: none is left for scratchpad {b.name!r}")
                # a buffer a kernel uses as scratch L1 there (lower.read_scratch): private bytes, no ring
                buf = Buffer(len(buffers), b.name, site, free.pop(0) if b.scratchpad else b.index, b.page_tiles,
                             b.entries, b.dtype, scratch=b.scratchpad or (site, b.index) in shared.scratch)
                # tt-metal's allocator places a program's circular buffers one after another from the L1 base
                memory.append(BufferAt(buf.id, offset, size))
                offset += -(-size // target.alignment) * target.alignment
            buffers.append(buf)
            by_index[(site, b.index)] = buf.id
    renumbered = [_renumber(ep, by_index) for ep in read_programs]
    sems = tuple(Semaphore(i, s.name, s.cores if s.cores is not None else cores, s.initial_value, SemRole.COUNTER,
                           host_init=True)
                 for i, s in enumerate(host.semaphores))
    groups = tuple(Group(g, sender, rect, loopback) for (sender, rect, loopback), g in
                   sorted(shared.groups.items(), key=lambda kv: kv[1]))
    tensors = tuple(Tensor(t["name"], tuple(t["shape"]), _dtype(t["dtype"]), Role(t["role"])) for t in host.tensors)
    trips = tuple(Trip(n, m) for n, m in sorted(shared.trips.items()))
    order = sorted(renumbered, key=lambda ep: (ep.site.y, ep.site.x, ep.engine.value))
    p = Program(host.name, target, tensors, tuple(buffers), sems, groups, trips, tuple(order), memory=tuple(memory))
    # the schema too: a value a kernel computes (an increment of 0) may be one no document may hold
    vs = validate(p) or schema_violations(p)
    if vs:
        raise InvalidProgram([_located(p, host, v) for v in vs])
    return p


def _located(p: Program, host: HostSpec, v: IrViolation) -> IrViolation:
    """``v`` with the kernel's file:line it was read from in front of its entity, where an op breaks it (a kernel
    multicasting a flag to a core the host gives no word of the semaphore): the user wrote the line, not the op.
    A rule a buffer breaks names the host description's field instead (``buffers[1] (out) on core (0,0)``): the
    program's buffer ids (one per core and index) are not the ones the user wrote."""
    loc = p.source_of(v.engine, v.path) if v.engine is not None and v.path is not None else None
    if loc is not None:
        return IrViolation(f"{loc.file}:{loc.line}: {v.entity}", v.rule, v.engine, v.path)
    m = _BUFFER_ENTITY.match(v.entity)
    if m is not None and int(m[1]) < len(p.buffers):
        b = p.buffers[int(m[1])]
        at = [i for i, hb in enumerate(host.buffers) if hb.name == b.name]
        if at:
            return IrViolation(f"buffers[{at[0]}] ({b.name}, index {b.cb}) on core ({b.site.x},{b.site.y})"
                               f"{v.entity[m.end():]}", v.rule, v.engine, v.path)
    return v


#: how ``validate`` names a buffer (``buffer 3 (out)``): its id in the program, then its name
_BUFFER_ENTITY = re.compile(r"buffer (\d+) \([^)]*\)")


def _dtype(name: str) -> str:
    from verispatial.frontends.ttmetal.host import DATA_FORMATS

    return DATA_FORMATS.get(name, name)


def _renumber(ep: EngineProgram, by_index: dict[tuple[Site, int], int]) -> EngineProgram:
    """The kernel's ops name buffers by CB index; the program names them by id (one buffer per core and index)."""
    return attrs.evolve(ep, ops=Renaming(buffer=lambda cb: by_index[(ep.site, cb)]).ops(ep.ops))
