"""The scheduled program: every entity a certificate speaks of (DESIGN §4).

Ids are dense per kind: ``buffers[i].id == i``, ``semaphores[i].id == i``, ``groups[i].id == i``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator

import attrs

from verispatial.ir.core import Engine, Role, SemRole, Site, Space, site_at
from verispatial.ir.ops import (
    CONTAINERS,
    OP_TAGS,
    McastSend,
    McastSetValid,
    Op,
    ReadTiles,
    TripCount,
    WriteTiles,
    count_value,
    named_index_buffer,
    vc_text,
)
from verispatial.ir.source import OpPath, SourceLoc, Sources
from verispatial.ir.target import Target

FORMAT = "verispatial.program"
#: 2: multicast ops state num_dests, compute names its operand pages, acquires their precision; sem_inc_mcast,
#: if, trip-affine loop counts, growing wait thresholds, front multicasts, semaphore sections.
VERSION = 2


@attrs.frozen
class Tensor:
    """A named tensor in device memory. ``shape`` in elements (the last two dims are tiled)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: Role
    init: str | None = None
    #: A tensor whose size a trip sets (a front end's ``--range`` over a dimension): at trip value ``t`` it has
    #: ``trip_rows.value(t)`` rows of tiles, the first rows of its row-major tiles, each of its ``shape``'s tile
    #: columns; ``shape`` is its shape at the trip's max (``validate``: two dimensions, as many tile rows as
    #: ``trip_rows`` gives at the max). None: ``shape`` at every trip value.
    trip_rows: TripCount | None = None

    def tiles(self, tile: tuple[int, int]) -> int:
        """Number of tiles when the last two dims are cut into ``tile``-shaped tiles (padded up); at the trips' max
        for a tensor with ``trip_rows`` (``tiles_at``)."""
        dims = list(self.shape) if self.shape else [1]
        if len(dims) == 1:
            dims = [1, *dims]
        lead = math.prod(dims[:-2]) if len(dims) > 2 else 1
        # Integer ceiling division: exact for every size (a float quotient overflows past 10**308).
        return lead * -(-dims[-2] // tile[0]) * -(-dims[-1] // tile[1])

    def col_tiles(self, tile: tuple[int, int]) -> int:
        """Tiles per row of tiles (the last dimension cut into ``tile[1]``-wide tiles, padded up)."""
        return -(-(self.shape[-1] if self.shape else 1) // tile[1])

    def tiles_at(self, tile: tuple[int, int], trips: dict[str, int]) -> int:
        """Number of tiles at trip values ``trips`` (every trip of the program): ``tiles`` unless ``trip_rows``."""
        if self.trip_rows is None:
            return self.tiles(tile)
        return count_value(self.trip_rows, trips) * self.col_tiles(tile)


@attrs.frozen
class Shard:
    """The tiles of tensor ``tensor`` that a sharded (globally allocated) circular buffer's pages are: tile ``j`` of
    the buffer (page ``j // page_tiles``, counted from the ring's first page) is the tensor's tile ``tile(j)``.

    tt-metal places such a buffer on the tensor's L1 shard (host: ``CircularBufferConfig(...)
    .set_globally_allocated_address(*tensor.buffer())``, ttnn's sharded program factories, e.g. eltwise binary's
    ``element_wise_multi_core_program_factory.cpp``): the ring starts at the shard's first byte (each launch sets
    ``fifo_wr_ptr`` and ``fifo_rd_ptr`` to the buffer's address, ``tt_metal/hw/inc/internal/circular_buffer_init.h``
    ``setup_local_cb_read_write_interfaces``), so ring slot ``k`` holds fixed bytes of the tensor.

    ``start`` is the tensor tile of the shard's tile 0. ``width`` 0: the shard is one run of consecutive tensor tiles
    (a height-sharded tensor's rows); else the shard is rows of ``width`` consecutive tiles, each ``stride`` tensor
    tiles after the one before (a block- or width-sharded tensor: ``stride`` is the tensor's width in tiles).
    ``tiles``: the shard's size on its core (the bank's part of the tensor buffer, ``aligned_size_per_bank``); 0 means
    the ring's own ``capacity x page_tiles``. A ring larger than its shard is allowed, as tt-metal allows it with a
    warning ("Circular buffer size exceeds allocated L1 buffer bank size", tt-metal #15337): its pages past the shard
    are not the tensor's bytes, and a push of them is ``cb-shard-overrun``. Counts are tiles of the target's tile
    shape."""

    tensor: str
    start: int = 0
    width: int = 0
    stride: int = 0
    tiles: int = 0

    def tile(self, j: int) -> int:
        """The tensor tile that tile ``j`` (``>= 0``) of the buffer is."""
        if self.width <= 0:
            return self.start + j
        return self.start + (j // self.width) * self.stride + j % self.width


def shard_pages(b: Buffer) -> int:
    """Pages of sharded buffer ``b``'s ring that lie on its shard: ring slots ``[0, shard_pages)`` are the tensor's
    bytes (the shard's tiles, or its whole ring when ``Shard.tiles`` is 0, in pages of ``page_tiles``, a page
    reaching past the shard's end not counted; at most ``capacity``). 0 for a buffer with no shard."""
    if b.shard is None:
        return 0
    if b.shard.tiles <= 0 or b.page_tiles < 1:
        return b.capacity
    return min(b.capacity, b.shard.tiles // b.page_tiles)


def shard_size(b: Buffer) -> int:
    """Tiles of sharded buffer ``b``'s shard (``Shard.tiles``, or its ring's ``capacity x page_tiles`` for 0)."""
    if b.shard is None:
        return 0
    return b.shard.tiles if b.shard.tiles > 0 else b.capacity * b.page_tiles


@attrs.frozen
class Buffer:
    """A circular buffer at ``site``: ``capacity`` pages of ``page_tiles`` tiles of ``dtype``.

    ``cb`` is its index on the site (the same index on every site names congruent buffers: a multicast
    writes the buffer of the same index at each destination). ``alias_of`` shares another buffer's bytes
    page for page. ``section`` is the section that owns it (buffers of different phases may share bytes).
    ``shard``: its pages are tiles of a tensor (a globally allocated buffer), not bytes of its own.
    """

    id: int
    name: str
    site: Site
    cb: int
    page_tiles: int
    capacity: int
    dtype: str
    space: Space = Space.LOCAL
    alias_of: int | None = None
    section: int = 0
    #: Its pages counters outlive the program: the next user of its circular-buffer index counts on from them
    #: without the launch's reset (a persistent kernel, or a composed program's phase cut out alone whose later
    #: phase reuses the index). Such a buffer must end empty (``balance-cb``).
    persistent: bool = False
    #: Its pages are a tensor's bytes (a sharded, globally allocated buffer: ``Shard``), or None: an allocation of its
    #: own (docs/semantics.md "Sharded buffers").
    shard: Shard | None = None
    #: Private scratch L1 of one data-movement engine, not a circular buffer: the engine reads tensor pages into it
    #: (``ReadTiles``), loads and stores its bytes through raw pointers (``ScratchAccess``) and writes from it
    #: (``WriteTiles``), with no Reserve, Push, Wait or Pop — ``get_write_ptr`` taken once and used as an address
    #: (ttnn ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp:339-360``). Each op uses the
    #: whole buffer (its pages are not counted); no other engine binds it (docs/semantics.md "Scratch buffers").
    scratch: bool = False


@attrs.frozen
class Semaphore:
    """A semaphore: one 32-bit word per site in ``sites``, each starting at ``init``.

    ``section`` is the section that owns it (its words are used only in that section's phase, and a later phase may
    take its hardware slot); ``None`` means the whole program uses it (a rendezvous).

    ``host_init``: the host writes ``init`` into every word at each launch of the program (tt-metal writes every
    ``CreateSemaphore`` initial value into the kernel config buffer at each launch, see docs/checker.md "How the
    rendezvous words start again"), so a word that only counts up (no ``SemSet`` on it) need not end at ``init``
    for the next run to start from it. A word a kernel ``SemSet``s gets no such allowance.
    """

    id: int
    name: str
    sites: tuple[Site, ...]
    init: int = 0
    role: SemRole = SemRole.COUNTER
    section: int | None = None
    host_init: bool = False


@attrs.frozen
class Group:
    """A multicast rectangle ``rect = (x0, y0, x1, y1)`` (inclusive) and its ``sender``.

    The rectangle is a set of sites, lower corner first (``validate`` refuses the other order). The order a kernel
    must give its corners in is its NoC's (start <= end on NoC 0, end <= start on NoC 1; the other order is a
    wrap-around multicast), an encoding the program format does not carry: the tt-metal front end checks it and writes
    the lower corner first (``frontends/ttmetal/api.py`` ``mcast_rect``, docs/semantics.md "Acknowledgement counts").
    Non-loopback (the default) excludes the sender from the destinations (reference §1.2).
    """

    id: int
    sender: Site
    rect: tuple[int, int, int, int]
    loopback: bool = False

    def destinations(self) -> tuple[Site, ...]:
        """The sites written, in row-major order."""
        x0, y0, x1, y1 = self.rect
        sx, sy, loopback = self.sender.x, self.sender.y, self.loopback
        out = []
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                if loopback or x != sx or y != sy:  # by coordinates: a Site compares through Python code
                    out.append(site_at(x, y))  # shared, not built: a frozen attrs class's __init__ is slow
        return tuple(out)

    @property
    def corners(self) -> tuple[int, int, int, int]:
        """``rect`` with the lower corner first ``(min x, min y, max x, max y)``: the rectangle as coordinates, the
        same for either order of its corners."""
        x0, y0, x1, y1 = self.rect
        return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


#: The landing order of a NoC write (``landing_order``): its virtual channel and its destination rectangle's corners.
LandingOrder = tuple[int | None, tuple[int, int, int, int]]


def landing_order(groups: tuple[Group, ...], op: McastSend | McastSetValid) -> LandingOrder:
    """The key under which two writes of one engine land at a core they both reach in issue order, on a target whose
    writes stay ordered (``Target.ordered_writes``): equal keys, one virtual channel (``op.vc``) *and* one destination
    rectangle (``Group.corners`` of ``groups[op.group]``: two groups with equal rectangles are one destination, a
    loopback multicast's rectangle is its rectangle). Writes to other destinations keep no landing order: linked
    commands "targeting the same destination" complete in order, "for commands targeting different destinations, it
    is not possible to provide this guarantee" (ttnn 0.81.1 ``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc/noc.h:23-30``,
    the same in ``blackhole/noc/noc.h``); the VC a write travels on depends on its target address (tt-metal #17294).
    Leaving their source in issue order needs only the channel. Raises ``IndexError`` for a group not in ``groups``."""
    return landing_order_of(groups, op.group, op.vc)


def landing_order_of(groups: tuple[Group, ...], group: int, vc: int | None) -> LandingOrder:
    """The landing order (``landing_order``) of a write to ``groups[group]`` on virtual channel ``vc``. Raises
    ``IndexError`` for a group not in ``groups``."""
    return vc, groups[group].corners


def landings_may_reorder(key: LandingOrder, dests: Iterable[Site], other_key: LandingOrder,
                         other_dests: Iterable[Site]) -> bool:
    """Whether two writes of one engine, both left, one of landing order ``key`` to the sites ``dests`` and one of
    ``other_key`` to ``other_dests``, may land at a core in the other order than they left: they reach a core in
    common under two landing orders. Only a shared core sees an order; writes that share none have none to keep."""
    return key != other_key and not set(dests).isdisjoint(other_dests)


def may_reorder(groups: tuple[Group, ...], a: McastSend | McastSetValid, b: McastSend | McastSetValid) -> bool:
    """``landings_may_reorder`` of two writes of one engine (their ``landing_order`` and ``Group.destinations``)."""
    return landings_may_reorder(landing_order(groups, a), groups[a.group].destinations(),
                                landing_order(groups, b), groups[b.group].destinations())


def unordered_pair(groups: tuple[Group, ...], ops: list[McastSend | McastSetValid]
                   ) -> tuple[McastSend | McastSetValid, McastSetValid | McastSend] | None:
    """Two writes of ``ops`` (one engine's) that may land at a core they share in either order (``may_reorder``),
    the earlier first in ``ops``; None when every core the writes share sees them in one landing order."""
    for i, a in enumerate(ops):
        for b in ops[i + 1:]:
            if may_reorder(groups, a, b):
                return a, b
    return None


def write_noun(groups: tuple[Group, ...], ids: Iterable[int], plural: bool = False) -> str:
    """What NoC writes to the groups ``ids`` of ``groups`` are called in messages: ``write`` when each reaches one
    core (a unicast call, ``noc_async_write`` or ``noc_semaphore_set_remote``, is a write to a one-core group),
    ``multicast`` when each reaches several, ``write or multicast`` for some of each (``multicast`` for none);
    ``plural``: ``writes``, ``multicasts`` (the verb of one op too), ``writes or multicasts``. Raises ``IndexError``
    for a group not in ``groups``."""
    nouns = sorted({"write" if len(groups[g].destinations()) == 1 else "multicast" for g in ids}, reverse=True)
    return " or ".join(n + "s" if plural else n for n in nouns or ["multicast"])


def landing_order_text(key: LandingOrder) -> str:
    """A landing order as messages name it: ``VC 4 to (1,0)-(3,2)`` (``vc_text``)."""
    x0, y0, x1, y1 = key[1]
    return f"{vc_text(key[0])} to ({x0},{y0})-({x1},{y1})"


def apart_text(flag: LandingOrder, data: LandingOrder) -> str:
    """What separates two landing orders (a flag's and its data's), as reasons say it: ``another channel (no order
    across channels)``, ``another rectangle (...)``, or both; "" for one landing order."""
    channel, rect = flag[0] != data[0], flag[1] != data[1]
    if channel and rect:
        return "another channel and another rectangle (no order across channels or destinations)"
    if channel:
        return "another channel (no order across channels)"
    return "another rectangle (no order across destinations)" if rect else ""


@attrs.frozen
class Trip:
    """A loop count read from data at run time: any value in ``[0, max]``."""

    name: str
    max: int


#: An ``index_buffers`` key: (site, phase, index tensor).
IndexKey = tuple[Site, int, str]


@attrs.frozen
class EngineProgram:
    """The op list of one (site, engine). ``section_starts[k]`` is the index of the first top-level op of
    section ``k`` (empty: the whole list is section 0)."""

    site: Site
    engine: Engine
    ops: tuple[Op, ...]
    section_starts: tuple[int, ...] = ()
    #: Where each op was read from (``ir/source.py``); not part of the program's value (``eq=False``).
    sources: Sources = attrs.field(default=(), eq=False)

    def source_of(self, path: OpPath) -> SourceLoc | None:
        """The source location of the op at ``path``, or of its nearest enclosing op that has one; None without."""
        table = dict(self.sources)
        for n in range(len(path), 0, -1):
            loc = table.get(tuple(path[:n]))
            if loc is not None:
                return loc
        return None

    @property
    def key(self) -> str:
        return f"{self.site}.{self.engine.value}"

    def section_of(self, top_index: int) -> int:
        """The section a top-level op index belongs to (the last section starting at or before it)."""
        if not self.section_starts:
            return 0
        return max(bisect.bisect_right(self.section_starts, top_index) - 1, 0)


@attrs.frozen
class SectionSpan:
    """A section of a composed program; ``barrier_after`` closes it with a rendezvous."""

    name: str
    barrier_after: bool = False


@attrs.frozen
class BufferAt:
    """Where buffer ``buf`` lives: byte ``offset`` in its site's space, ``size`` bytes."""

    buf: int
    offset: int
    size: int


@attrs.frozen
class Resident:
    """Tensor ``tensor`` kept in local memory of ``site`` at byte ``offset`` (``size`` bytes: the whole tensor, tiles x
    bytes per tile of its dtype) over sections ``first_section`` .. ``last_section`` (inclusive: its producer to its
    last reader; every section for carried state), instead of a round trip through device memory. Its bytes are
    taken in every phase those sections run in; the memory obligations keep them apart from every buffer and
    resident tensor live in the same phase on the site."""

    tensor: str
    site: Site
    offset: int
    size: int
    first_section: int
    last_section: int


@attrs.frozen
class Program:
    """A scheduled spatial program on ``target``."""

    name: str
    target: Target
    tensors: tuple[Tensor, ...] = ()
    buffers: tuple[Buffer, ...] = ()
    semaphores: tuple[Semaphore, ...] = ()
    groups: tuple[Group, ...] = ()
    trips: tuple[Trip, ...] = ()
    programs: tuple[EngineProgram, ...] = ()
    sections: tuple[SectionSpan, ...] = (SectionSpan("main"),)
    memory: tuple[BufferAt, ...] = ()
    resident: tuple[Resident, ...] = ()

    def source_of(self, engine: str, path: OpPath) -> SourceLoc | None:
        """Where the op at ``path`` of engine program ``engine`` (its ``key``, ``"(x,y).reader"``) came from, or
        None when no front end recorded it."""
        for ep in self.programs:
            if ep.key == engine:
                return ep.source_of(path)
        return None

    def tensor(self, name: str) -> Tensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def trip_max(self) -> dict[str, int]:
        return {t.name: t.max for t in self.trips}

    def buffer_bytes(self, b: Buffer) -> int:
        """Bytes of buffer ``b``: capacity x page_tiles x bytes per tile of its dtype."""
        return b.capacity * b.page_tiles * self.target.bytes_per_tile(b.dtype)

    def alias_partners(self) -> dict[int, tuple[int, ...]]:
        """For every buffer that shares bytes with others (``alias_of`` either way, or a common root): those
        others. The interpreter's ``alias-clobber`` rule and the checker's alias obligation both use this."""
        roots: dict[int, list[int]] = {}
        for b in self.buffers:
            roots.setdefault(b.alias_of if b.alias_of is not None else b.id, []).append(b.id)
        return {b: tuple(o for o in group if o != b) for group in roots.values() if len(group) > 1 for b in group}

    def index_buffers(self) -> dict[IndexKey, int]:
        """The derived index buffer of each indirect address that names none (``Dynamic.buf`` None), by
        ``index_key`` (site, phase, index tensor): the one buffer that some ``ReadTiles`` of the tensor on that
        site in that phase fills (buffers are used only in their own phase). An address that names its buffer
        reads the index from that buffer, whatever other addresses do. The kernel reads the index from the
        buffer's front page (tt-metal gather/scatter and KV-cache writers: ``cb_wait_front`` of the index CB, then
        ``get_read_ptr``), so the address is only as good as that page. Keys whose tensor fills no buffer have no
        entry (the value is a host-set one); ``validate`` refuses an unnamed address whose tensor fills several.
        Shared by the interpreter (``cb-read-unwaited`` at the op, an index buffer is a data buffer for
        ``cb-push-unfilled``) and the checker."""
        fills, unnamed = self.index_candidates()
        return {k: next(iter(fills[k])) for k in sorted(unnamed, key=lambda k: (k[0].x, k[0].y, k[1], k[2]))
                if len(fills.get(k, ())) == 1}

    def index_buffer(self, ep: EngineProgram, top_index: int, op: Op, derived: dict[IndexKey, int],
                     phases: list[int] | None = None) -> int | None:
        """The index buffer of ``op``'s indirect address (in top-level op ``top_index`` of ``ep``): the one it names,
        else ``derived`` (``index_buffers()``) at its key; None for an op with no indirect address, or a host-set
        index. The one lookup the interpreter and the checker share."""
        named = named_index_buffer(op)
        if named is not None:
            return named
        addr = getattr(op, "addr", None)
        if addr is None or addr.dynamic is None:
            return None
        return derived.get(self.index_key(ep, top_index, addr.dynamic.name, phases))

    def index_key(self, ep: EngineProgram, top_index: int, name: str, phases: list[int] | None = None) -> IndexKey:
        """The ``index_buffers`` key of an indirect address reading ``name`` in top-level op ``top_index`` of
        ``ep``: (site, phase of its section, name); phase -1 for a section the program does not declare.
        ``phases``: ``phase_of_section()``, when the caller has it."""
        phases = self.phase_of_section() if phases is None else phases
        sec = ep.section_of(top_index)
        return ep.site, phases[sec] if 0 <= sec < len(phases) else -1, name

    def index_candidates(self) -> tuple[dict[IndexKey, set[int]], set[IndexKey]]:
        """What ``index_buffers`` is derived from, by key: the buffers ``ReadTiles`` of each tensor fill, and the
        keys some indirect address naming no buffer uses."""
        from verispatial.ir.ops import ReadTiles

        phases = self.phase_of_section()
        fills: dict[IndexKey, set[int]] = {}
        unnamed: set[IndexKey] = set()
        for ep in self.programs:
            for t, top in enumerate(ep.ops):
                for op in walk((top,)):
                    if isinstance(op, ReadTiles):
                        fills.setdefault(self.index_key(ep, t, op.tensor, phases), set()).add(op.into)
                    addr = getattr(op, "addr", None)
                    if addr is not None and addr.dynamic is not None and addr.dynamic.buf is None:
                        unnamed.add(self.index_key(ep, t, addr.dynamic.name, phases))
        return fills, unnamed

    def with_index_buffers(self) -> Program:
        """This program with every indirect address's index buffer named (``Dynamic.buf`` from
        ``index_buffers``), so that a part of it cut out (a compositional slice, whose tensors are renamed) keeps
        the buffer its addresses read the index from."""
        from verispatial.ir.ops import ReadTiles, WriteTiles

        table = self.index_buffers()
        if not table:
            return self
        phases = self.phase_of_section()

        def fix(ep: EngineProgram, t: int, op: Op) -> Op:
            if isinstance(op, CONTAINERS):
                return attrs.evolve(op, body=tuple(fix(ep, t, o) for o in op.body))
            if not isinstance(op, (ReadTiles, WriteTiles)) or op.addr.dynamic is None or op.addr.dynamic.buf is not None:
                return op
            b = table.get(self.index_key(ep, t, op.addr.dynamic.name, phases))
            if b is None:
                return op
            return attrs.evolve(op, addr=attrs.evolve(op.addr, dynamic=attrs.evolve(op.addr.dynamic, buf=b)))

        return attrs.evolve(self, programs=tuple(
            attrs.evolve(ep, ops=tuple(fix(ep, t, o) for t, o in enumerate(ep.ops))) for ep in self.programs))

    def slot_reused_words(self) -> frozenset[tuple[int, Site]]:
        """Words of a section semaphore whose site has a section semaphore's word in a later phase: that phase may
        take the word's hardware slot (``validate`` counts slots per site and phase) and would start from the value
        it was left at, with no host write in between, so no end-balance exemption applies to them (docs/checker.md,
        "Semaphore slots")."""
        phases = self.phase_of_section()

        def phase(sem: Semaphore) -> int | None:
            return phases[sem.section] if sem.section is not None and 0 <= sem.section < len(phases) else None

        # per site, the latest phase in which some section semaphore has a word there
        latest: dict[Site, int] = {}
        for sem in self.semaphores:
            ph = phase(sem)
            if ph is not None:
                for site in sem.sites:
                    latest[site] = max(latest.get(site, ph), ph)
        return frozenset((sem.id, site) for sem in self.semaphores if (ph := phase(sem)) is not None
                         for site in sem.sites if latest.get(site, ph) > ph)

    def rearmed_words(self) -> frozenset[tuple[int, Site]]:
        """Semaphore words exempt from end balance: no SemInc (or SemRmw: an increment) ever targets the word, at least one engine program
        of its site uses the semaphore, and the first op on it of every such program is a SemSet (so whatever
        value it ends with, the next run sets it before use). Shared by the interpreter and the checker.

        A word of a section whose phase is followed by a phase with a semaphore word on the same site gets no
        exemption: that later phase may take its hardware slot (validate counts slots per site and phase) and would
        start from whatever value it was left at, so it must end at its initial value (docs/checker.md, "Semaphore
        slots")."""
        from verispatial.ir.ops import McastSetValid, SemInc, SemIncMcast, SemRmw, SemSet, SemWait

        slot_reused = self.slot_reused_words()

        # One walk: the words some increment targets, and per (semaphore, site) whether each engine program there
        # that uses the semaphore starts with a SemSet on it.
        incs: set[tuple[int, Site]] = set()
        starts_with_set: dict[tuple[int, Site], list[bool]] = {}
        for ep in self.programs:
            seen: set[int] = set()
            for op in walk(ep.ops):
                if isinstance(op, SemInc):
                    incs.add((op.sem, op.at))
                elif isinstance(op, SemRmw):
                    incs.add((op.sem, ep.site))
                elif isinstance(op, SemIncMcast) and 0 <= op.group < len(self.groups):
                    incs.update((op.sem, d) for d in self.groups[op.group].destinations())
                if isinstance(op, (SemSet, SemWait, McastSetValid)) and op.sem not in seen:
                    seen.add(op.sem)
                    starts_with_set.setdefault((op.sem, ep.site), []).append(isinstance(op, SemSet))
        out: set[tuple[int, Site]] = set()
        for sem in self.semaphores:
            for site in sem.sites:
                if (sem.id, site) in incs or (sem.id, site) in slot_reused:
                    continue
                used = starts_with_set.get((sem.id, site), [])
                if used and all(used):
                    out.add((sem.id, site))
        return frozenset(out)

    def tensor_bytes(self, t: Tensor) -> int:
        """Bytes of tensor ``t`` laid out in tiles: tiles x bytes per tile of its dtype (``ParseError`` for a dtype
        the target lacks)."""
        return t.tiles(self.target.tile) * self.target.bytes_per_tile(t.dtype)

    def resident_phases(self, r: Resident) -> set[int]:
        """The phases resident tensor ``r`` is live in (those of its sections that exist)."""
        phases = self.phase_of_section()
        return {phases[k] for k in range(max(r.first_section, 0), min(r.last_section, len(phases) - 1) + 1)}

    def host_initialized_words(self) -> frozenset[tuple[int, Site]]:
        """Words of ``host_init`` semaphores, whatever lands on them: the host writes ``init`` into each at every
        launch, so the value a run leaves there reaches nothing the next launch does. Exempt from end balance;
        shared by the interpreter and the checker. tt-metal keeps a program's semaphores in the kernel config buffer
        that dispatch writes for every launch: the firmware takes their base from the launch message
        (``sem_l1_base = kernel_config_base + sem_offset``, ``tt_metal/hw/inc/internal/firmware_common.h:149-152``;
        ``get_semaphore``, ``api/dataflow/dataflow_api.h:1689-1691``), and dispatch writes every ``CreateSemaphore``
        initial value there (``tt_metal/impl/program/dispatch.cpp``, ``SemphoreCommandGenerator``). A write still in
        flight at a kernel's end could land after the host's write: that is ``async-pending-at-end``'s, not balance's.
        A word whose slot a later phase may take (``slot_reused_words``) is not in it: no host write comes between
        the phases."""
        host = [s for s in self.semaphores if s.host_init]
        if not host:
            return frozenset()
        reused = self.slot_reused_words()
        return frozenset((s.id, site) for s in host for site in s.sites if (s.id, site) not in reused)

    def remote_buffer(self, buf: int, at: Site) -> int | None:
        """The buffer a ``RemoteRead`` of ``buf`` at site ``at`` reads: the one with ``buf``'s cb index on ``at`` in
        ``buf``'s phase (None when there is none; ``validate`` refuses such a read)."""
        phases = self.phase_of_section()
        if not 0 <= buf < len(self.buffers):
            return None
        src = self.buffers[buf]
        ph = phases[src.section] if 0 <= src.section < len(phases) else 0
        return next((b.id for b in self.buffers if b.site == at and b.cb == src.cb
                     and (phases[b.section] if 0 <= b.section < len(phases) else 0) == ph), None)

    def mailbox_words(self) -> frozenset[tuple[int, Site]]:
        """The ``inline_only_words`` exempt from end balance: all but a word whose slot a later phase may take
        (``slot_reused_words``), since that phase's word would start from the value written there. Shared by the
        interpreter and the checker."""
        words = self.inline_only_words()
        return frozenset(words - self.slot_reused_words()) if words else frozenset()

    def inline_only_words(self) -> frozenset[tuple[int, Site]]:
        """Words only one-word remote writes write (``InlineWrite``: a mailbox slot a kernel fills on another core
        with ``noc_inline_dw_write``) and no op of the program reads — no ``SemWait`` on it, no flag multicast from or
        onto it, no ``SemSet``, no increment. Its value reaches nothing the format says (a kernel reads it with plain
        loads, each launch after the write that fills it), so its landing decides no blocking (the P/T net), and it
        is exempt from end balance unless a later phase may take its slot (``mailbox_words``; docs/semantics.md,
        "One-word remote writes")."""
        from verispatial.ir.ops import InlineWrite, McastSetValid, SemInc, SemIncMcast, SemRmw, SemSet, SemWait

        written: set[tuple[int, Site]] = set()
        other: set[tuple[int, Site]] = set()
        for ep in self.programs:
            for op in walk(ep.ops):
                if isinstance(op, InlineWrite):
                    written.add((op.sem, op.at))
                elif isinstance(op, SemInc):
                    other.add((op.sem, op.at))
                elif isinstance(op, (SemSet, SemRmw, SemWait)):
                    other.add((op.sem, ep.site))
                elif isinstance(op, McastSetValid):
                    other.add((op.source, ep.site))
                    if 0 <= op.group < len(self.groups):
                        other.update((op.sem, d) for d in self.groups[op.group].destinations())
                elif isinstance(op, SemIncMcast) and 0 <= op.group < len(self.groups):
                    other.update((op.sem, d) for d in self.groups[op.group].destinations())
        return frozenset(written - other)

    def counters_reused(self) -> dict[int, str]:
        """Per buffer whose pages counters (``tiles_received`` / ``tiles_acked``) outlive its section, who counts on
        from them: the first buffer of a later phase at the same site and circular-buffer index, or the next launch
        of a ``persistent`` buffer. Buffers absent here may end holding pages.

        The firmware zeroes every buffer's received and acked counters after each launch
        (``tt_metal/hw/firmware/src/tt-1xx/trisc.cc`` ``init_sync_registers``, triggered by ``brisc.cc`` once the
        kernels finished) and sets its read and write pointers at the next launch
        (``tt_metal/hw/inc/internal/circular_buffer_init.h`` ``setup_local_cb_read_write_interfaces``): pages left in a
        buffer at the end of the launch fault nothing, while pages left by one section are still counted by the
        buffer a later section of the same launch uses at that index (docs/semantics.md ``balance-cb``)."""
        phases = self.phase_of_section()

        def phase(b: Buffer) -> int:
            return phases[b.section] if 0 <= b.section < len(phases) else 0

        # The buffers of each (site, cb index) by (phase, id): the first of a later phase is one bisection away
        # (a pairwise search was quadratic: 116 s of a 300,000-op decode step's compile).
        at: dict[tuple[Site, int], list[tuple[int, int, int]]] = {}
        for i, b in enumerate(self.buffers):
            at.setdefault((b.site, b.cb), []).append((phase(b), b.id, i))
        for users in at.values():
            users.sort()
        out: dict[int, str] = {}
        for b in self.buffers:
            users = at[(b.site, b.cb)]
            i = bisect.bisect_right(users, (phase(b), math.inf))
            if i < len(users):
                after = self.buffers[users[i][2]]
                out[b.id] = f"b{after.id} ({after.name}) of a later section counts on from them"
            elif b.persistent:
                out[b.id] = "the buffer is persistent: its next user counts on from them"
        return out

    def phase_of_section(self) -> list[int]:
        """Phase index of each section: sections between two barriers run concurrently in one phase."""
        phases, p = [], 0
        for s in self.sections:
            phases.append(p)
            if s.barrier_after:
                p += 1
        return phases


def walk(ops: tuple[Op, ...]) -> Iterator[Op]:
    """Every op, loops and ifs included, in program order (pre-order)."""
    for op in ops:
        yield op
        if isinstance(op, CONTAINERS):
            yield from walk(op.body)


#: The op classes that are neither a tensor access nor a container (``tensor_accesses`` passes over them).
_OTHER_LEAVES = frozenset(c for c in OP_TAGS if not issubclass(c, (ReadTiles, WriteTiles, *CONTAINERS)))


def tensor_accesses(p: Program) -> tuple[frozenset[str], frozenset[str]]:
    """(the tensors ``p``'s ``ReadTiles`` read, the tensors its ``WriteTiles`` write), by name: what a section of a
    composed program reads and writes (``compose``'s roles and ``TemplatedProgram.instance_accesses``)."""
    reads: set[str] = set()
    writes: set[str] = set()
    bodies = [ep.ops for ep in p.programs]  # a stack of op lists, not ``walk``'s generators: it runs on every load
    other = _OTHER_LEAVES
    while bodies:
        for op in bodies.pop():
            if type(op) in other:  # most ops: one set lookup instead of three isinstance calls
                continue
            if isinstance(op, ReadTiles):
                reads.add(op.tensor)
            elif isinstance(op, WriteTiles):
                writes.add(op.tensor)
            elif isinstance(op, CONTAINERS):
                bodies.append(op.body)
    return frozenset(reads), frozenset(writes)


def program_summary(p: Program) -> tuple[int, int]:
    """(engine programs, ops) of ``p``; ops count every op once in the text, loops and their bodies included."""
    return len(p.programs), sum(1 for ep in p.programs for _ in walk(ep.ops))
