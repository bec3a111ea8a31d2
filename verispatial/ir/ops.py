"""Choreography ops: what each (site, engine) runs, in order. Semantics are DESIGN §5.

Every op is a frozen value; ``Loop`` nests a body. Page counts are in pages of the named buffer;
tile counts in tiles of the target's tile shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import attrs

from verispatial.ir.core import Addr, Guard, Site, Term, WaitCond

#: ``metadata["id"]`` of an op field that names an entity: the id space it indexes. Every pass or tool that moves
#: ops between programs (compose, slicing) maps exactly the fields tagged here (``verispatial.ir.ids``); a test walks
#: every op class so a field added without a tag fails it.
ID_BUFFER, ID_SEMAPHORE, ID_GROUP, ID_TENSOR, ID_COUNT, ID_SITE, ID_OPERANDS = (
    "buffer", "semaphore", "group", "tensor", "count", "site", "operands")


#: The NoC virtual channel field of a write (``McastSend.vc``, ``McastSetValid.vc``): two writes of one engine leave
#: and land in issue order only on a target whose writes stay ordered *and* when they share a channel (equal ``vc``;
#: None is one channel of its own, the one every write naming none shares, so a program naming none means what it
#: meant before the field). The unicast calls travel on ``NOC_UNICAST_WRITE_VC`` 1, the multicast calls on
#: ``NOC_MULTICAST_WRITE_VC`` 4 (ttnn 0.81.1 ``tt_metal/hw/inc/internal/dataflow/dataflow_api_common.h:62-64``); across
#: channels the NoC keeps no order (tt-metal #55555). A channel is a number below ``NOC_VCS``, 16
#: (``internal/tt-1xx/wormhole/noc/noc_parameters.h:230``).
NOC_VCS = 16


def vc_text(vc: int | None) -> str:
    """A write's virtual channel as messages name it: ``VC 4``, or ``the default channel`` for None."""
    return "the default channel" if vc is None else f"VC {vc}"


@attrs.frozen
class Reserve:
    """Block until ``pushed - popped + pages <= capacity`` of ``buf`` (cb_reserve_back). No effect."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()


@attrs.frozen
class Push:
    """``pushed += pages`` on ``buf`` (cb_push_back)."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()


@attrs.frozen
class Wait:
    """Block until ``pushed - popped >= pages`` on ``buf`` (cb_wait_front). No effect."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()


@attrs.frozen
class Pop:
    """``popped += pages`` on ``buf`` (cb_pop_front)."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()


@attrs.frozen
class SemInc:
    """Asynchronous remote atomic: the word of ``sem`` at site ``at`` += ``by`` (noc_semaphore_inc).

    Lands no later than the issuing engine's next ``AtomicBarrier``.
    """

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    at: Site = attrs.field(metadata={"id": ID_SITE})
    by: int = 1


@attrs.frozen
class SemSet:
    """Local store: this site's word of ``sem`` := ``value + sum(coef * index)`` over ``terms`` (enclosing loop
    indices; noc_semaphore_set). ``terms`` say a word set to a different value in each iteration, e.g. argmax's
    reduce core setting its start word to the iteration number, ``start_sem.set(k + 1)`` (ttnn
    ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp:394``): ``value`` 1, ``terms``
    ``(Term("k", 1),)``. Written to the document only when there are any (older documents have none)."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    value: int = attrs.field()
    terms: tuple[Term, ...] = ()

    def value_at(self, env: Mapping[str, int]) -> int:
        """The value stored with loop indices ``env``."""
        return self.value + sum(t.coef * env[t.var] for t in self.terms)


@attrs.frozen
class SemRmw:
    """Non-atomic read-modify-write of this site's word of ``sem``: a load, then a store of the loaded value plus
    ``by`` (``Semaphore.up(value)`` of the own word: on Wormhole and Blackhole every data-movement binding resolves to
    ``LOCAL_NONATOMIC``, tt_metal/hw/inc/api/dataflow/semaphore_binding_token.h:13-18, whose ``up`` is the plain
    ``*local_ptr(l1_offset, scope) += value``, semaphore_dm_impl.h:79-93). Two steps of the engine: a write landing
    on the word between them (an increment, a set, a flag multicast, another engine's store) is lost
    (``sem-rmw-race``). Synchronous: the store is done before the engine's next op, no barrier waits for it."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    by: int = 1


@attrs.frozen
class SemWait:
    """Block until this site's word of ``sem`` equals (``eq``, noc_semaphore_wait) or is at least (``ge``,
    noc_semaphore_wait_min) the threshold ``value + sum(coef * index)`` over ``terms`` (enclosing loop indices:
    ``noc_semaphore_wait_min(sem, ++expected)`` on a monotone counter is ``ge 1 + 1*k``)."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    cond: WaitCond = attrs.field()
    value: int = attrs.field()
    terms: tuple[Term, ...] = ()

    def threshold(self, env: dict[str, int]) -> int:
        """The value waited for with loop indices ``env``."""
        return self.value + sum(t.coef * env[t.var] for t in self.terms)


@attrs.frozen
class McastSend:
    """Asynchronous multicast of ``pages`` pages of ``buf`` into the buffer with the same ``cb`` index at every
    destination of ``group``, at the same address (noc_async_write_multicast(src, mcast_addr, size, num_dests)).

    The source pages are the reserved back (``front`` false: the producer multicasts what it filled, from its write
    pointer) or the waited front (``front`` true: a forwarder multicasts pages another engine filled, from its read
    pointer). ``num_dests`` is the vendor API's destination count: a write barrier waits until the acknowledgements
    received equal it (one comes back per destination of the group), so a count other than the group's hangs that
    barrier — a finding, not bad input (docs/semantics.md "Acknowledgement counts"). The source pages are read no
    later than the next ``Flush``/``WriteBarrier``; the data lands no later than the next ``WriteBarrier``.

    A unicast remote write of buffer pages (``noc_async_write(src, get_noc_addr(x, y, addr), size)``; Metal 2.0
    ``noc.async_write(src, UnicastEndpoint{}, size, {}, {.noc_x, .noc_y, .addr})``) is this op on a group whose
    rectangle is the one destination core: the NoC acknowledges it once, as a one-destination multicast.

    Where it lands (docs/semantics.md, "Remote writes to an explicit place"): with no ``dst``, at the source pages'
    own address in the buffer of the same cb index, the source pages starting ``offset`` pages past the source
    pointer; with ``dst`` (a buffer of this site, which this engine produces), in the buffer of ``dst``'s cb index at
    each destination, at this engine's write pointer of ``dst`` plus ``offset`` pages — the address the kernel
    computes from its own copy of that buffer (``get_write_ptr(dst) + offset * page_size``: sort's peer exchange,
    ``cross_core_data_exchange_common.hpp:73-74, 90-101``), the source pages then starting at the source pointer.

    Pages already pushed (``behind`` > 0, docs/semantics.md "Multicast of pages already pushed"): the source pointer is
    ``behind`` pages before this engine's write pointer of ``buf`` — the address it took before pushing them — and
    the source pages, ``offset`` pages past it, must be pages it pushed whose slots it has not reserved again
    (``mcast-source-unpublished``); they land at their own address (no ``dst``, no ``front``). The sharded
    layernorm's sender pushes ``ex_global`` and then multicasts it block by block from the address it took before the
    push (``reader_mcast_sender_unary_sharded_ln.cpp:267-282``, ttnn 0.81.1); the contributed multicast example's
    coordinator pushes the tile it read and multicasts it from the same address (``coordinator_kernel.cpp:28, 38,
    58``, tt-metal).

    ``vc``: the NoC virtual channel it travels on (``NOC_VCS``); None, the one channel every write naming none shares.
    """

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()
    group: int = attrs.field(metadata={"id": ID_GROUP})
    num_dests: int = attrs.field()
    front: bool = False
    dst: int | None = attrs.field(default=None, metadata={"id": ID_BUFFER})
    offset: int = 0
    behind: int = 0
    vc: int | None = None

    @property
    def dest(self) -> int:
        """The buffer of this site whose circular-buffer index the data lands in at each destination (``dst``, else
        the source buffer itself)."""
        return self.buf if self.dst is None else self.dst


@attrs.frozen
class McastSetValid:
    """Asynchronous multicast of this site's word of ``src`` (default: ``sem`` itself) into the word of ``sem`` at
    every destination of ``group`` (noc_semaphore_set_multicast(src_l1, dst_mcast_addr, num_dests)). The source
    word is read when the write leaves. ``num_dests`` counts acknowledgements as ``McastSend``'s does; ``vc`` is its
    virtual channel as ``McastSend``'s is (``NOC_VCS``). A unicast flag (``noc_semaphore_set_remote``) is this op on a
    one-core group."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    group: int = attrs.field(metadata={"id": ID_GROUP})
    num_dests: int = attrs.field()
    src: int | None = attrs.field(default=None, metadata={"id": ID_SEMAPHORE})
    vc: int | None = None

    @property
    def source(self) -> int:
        """The semaphore whose local word is read."""
        return self.sem if self.src is None else self.src


@attrs.frozen
class SemIncMcast:
    """Asynchronous atomic ``+= by`` on the word of ``sem`` at every destination of ``group``
    (noc_semaphore_inc_multicast(mcast_addr, incr, num_dests)). Lands no later than the issuing engine's next
    ``AtomicBarrier``, which waits until the responses received equal ``num_dests`` (a count other than the group's
    hangs it). The sender is never inside the rectangle (reference §1.2)."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    group: int = attrs.field(metadata={"id": ID_GROUP})
    num_dests: int = attrs.field()
    by: int = 1


@attrs.frozen
class InlineWrite:
    """Asynchronous one-word remote write of the immediate ``value`` into the word of ``sem`` at site ``at``
    (``noc_inline_dw_write(get_noc_addr(x, y, addr), value)``, ``dataflow_api.h:2216``: the value travels in the
    command, no local source). A NoC write: the engine's next ``WriteBarrier`` waits for its acknowledgement (one,
    ``NIU_MST_WR_ACK_RECEIVED``), a ``Flush`` for its departure; an increment aimed at ``at`` before that barrier may
    land first (``async-inc-overtake``, tt-metal PR #43699). It lands as a remote write of the word
    (``sem-set-race``, ``sem-overshoot``). The word may be a semaphore's or any L1 word a kernel exchanges (a mailbox
    slot: ``Semaphore`` declares the 32-bit word and its sites)."""

    sem: int = attrs.field(metadata={"id": ID_SEMAPHORE})
    at: Site = attrs.field(metadata={"id": ID_SITE})
    value: int = attrs.field()


@attrs.frozen
class RemoteRead:
    """Asynchronous read of ``pages`` pages of another core's buffer into the reserved back of ``into``:
    ``noc_async_read(get_noc_addr(x, y, get_read_ptr(buf) + offset * page_size), get_write_ptr(into), size)`` (Metal
    2.0 ``noc.async_read(UnicastEndpoint{}, into, size, {.noc_x, .noc_y, .addr}, {...})``). The pages are those of the
    buffer with ``buf``'s cb index at site ``at`` (the owner), starting ``offset`` pages past this engine's read pointer
    of ``buf`` — the address the kernel computes from its own copy, which it consumes (the sharded layernorm's
    partials, ``reader_mcast_sender_unary_sharded_ln.cpp:164, 179-184``). They must hold pages the owner published
    and keep them until the read lands (``remote-read-unpublished``, ``async-source-reuse``); it lands no later than
    the engine's next ``ReadBarrier`` and fills ``into`` as a ``ReadTiles`` of ``pages`` pages would."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    at: Site = attrs.field(metadata={"id": ID_SITE})
    pages: int = attrs.field()
    into: int = attrs.field(metadata={"id": ID_BUFFER})
    offset: int = 0


@attrs.frozen
class Part:
    """A byte range of one tensor page and of one buffer tile: what a transfer of part of a page moves.

    ``offset`` (bytes) is where the range starts inside the tensor page (tile) the op's ``addr`` names, ``size``
    (bytes, >= 1) its length, ``at`` (bytes) where it starts inside the buffer tile the op takes (the next unfilled
    tile of a read's reserved back, the next unread tile of a write's waited front). ``validate``: ``offset + size``
    is at most the tensor's bytes per tile and ``at + size`` the buffer's (``part-range``). tt-metal says it as
    ``noc_async_read(get_noc_addr(page, s, offset), get_write_ptr(cb) + at, size)`` (``dataflow_api.h``
    ``get_noc_addr(id, AddrGen, offset)``; ``TensorAccessor::get_noc_addr(page_id, offset)``, ``tensor_accessor.h``):
    a row-major stick inside a tile-sized page, or a stick landed at a byte offset into a buffer page (the paged-cache
    writer, ``writer_update_cache_interleaved_start_id.cpp:102-103``). docs/semantics.md, "Part-page transfers"."""

    offset: int = attrs.field()
    size: int = attrs.field()
    at: int = 0
    #: The offset grows with enclosing loops' indices: ``offset + sum(coef * index)`` bytes (a row's chunks read one
    #: after another, ``{.page_id = row, .offset_bytes = chunk * chunk_bytes}``); each ``var`` names an enclosing loop.
    terms: tuple[Term, ...] = ()

    def offset_at(self, env: Mapping[str, int]) -> int:
        """The offset in bytes at loop indices ``env``."""
        return self.offset + sum(t.coef * env[t.var] for t in self.terms)


@attrs.frozen
class ReadTiles:
    """Asynchronous read of ``tiles`` tiles of ``tensor`` at ``addr`` into the reserved back of ``into``.

    Lands no later than the engine's next ``ReadBarrier`` (noc_async_read + noc_async_read_barrier). ``part``: only
    a byte range of one page (``tiles`` is 1): ``Part``'s bytes of tensor tile ``addr`` into its bytes of the next
    unfilled tile of ``into``, which the op takes as a whole-tile read does (the fill pointer moves one tile).
    """

    tensor: str = attrs.field(metadata={"id": ID_TENSOR})
    addr: Addr = attrs.field()
    tiles: int = attrs.field()
    into: int = attrs.field(metadata={"id": ID_BUFFER})
    part: Part | None = None


@attrs.frozen
class FillTiles:
    """Local stores by this data-movement engine's own RISC of ``tiles`` tiles into the reserved back of ``into``:
    a constant tile built in place (reduce scalers, broadcast scalars, masks, index tiles; ``kind`` names which),
    no NoC transaction and no tensor read.

    The stores retire in program order but land in L1 for the other agents of the core only at a drain, as a
    ``CopyTiles``'s do: a store can retire before its write-request is processed, and ``cb_push_back`` is a store
    to a stream register, another memory region, which may be processed first — so a consumer, the NoC or the
    unpacker alike, may read the page before the stores land (tt-isa-documentation
    ``WormholeB0/TensixTile/BabyRISCV/MemoryOrdering.md``, "Store then store" and "Cross-core signalling using
    mailboxes"; tt-metal PR #50183, #50374; docs/semantics.md, "Local-store fills"). ``drain``: the fill ends with
    a blocking load of the last word it wrote (``ckernel::load_blocking``, as ``generate_index_tile`` does,
    ``kernel_lib/index_tile_dataflow.hpp``), which lands every earlier store of the engine; without it a ``Push`` or
    multicast of ``into`` before a later drain of the engine publishes the stores early (``async-read-publish``).
    The vendor's scaler and broadcast helpers drain nothing on Wormhole and Blackhole (``generate_bcast_scalar.hpp:
    49-55``: reserve_back, one store, push_back; ``reduce_helpers_dataflow.inl:163-203``, in 0.72.0 and 0.81.1
    alike: only Quasar flushes). A helper that zeroes the tile first by a NoC loopback (``noc.async_write_zeros``
    then ``write_zeros_l1_barrier``, ``kernel_lib/reduce_helpers_dataflow.inl:167-168``) waits for it inside,
    before its stores, so the whole helper is one ``FillTiles``; a zero read with no barrier before the push is a
    NoC read, not this op.

    ``tiles`` 0 with ``kind`` ``PATCH``: stores into tiles this engine already filled by a read that has landed
    (matmul's padding of its last K tile after the read's barrier, ``kernel_helper_functions/pad_tile.hpp:91``): no
    tile is counted (the read's ``ReadTiles`` filled it), but the stores are unlanded until a drain as any fill's
    (``async-read-publish`` at a push or multicast of ``into`` before one). Nothing orders them against a read still in
    flight into the same bytes: whoever emits one does so after that read's ``ReadBarrier`` (the tt-metal front end);
    a patch with no filled tile in the reserved window (after the push, before the read) or a read into ``into`` in
    flight is ``cb-write-unreserved``.
    """

    into: int = attrs.field(metadata={"id": ID_BUFFER})
    tiles: int = attrs.field()
    kind: str = "const"
    drain: bool = False


#: ``FillTiles.kind`` of stores into tiles already filled (``tiles`` 0: a patch of a landed read's tile)
PATCH = "patch"


@attrs.frozen
class CopyTiles:
    """Local loads and stores by this data-movement engine's own RISC: ``tiles`` tiles read from the waited front of
    ``src`` and stored into the reserved back of ``into``, both buffers of this site (a copy of one buffer's pages
    into another's with ``volatile tt_l1_ptr`` pointers: ``src_ptr = get_read_ptr(src)``, ``dst_ptr =
    get_write_ptr(into)``, ``dst_ptr[i] = src_ptr[i]``; tt-metal's contributed multicast example,
    ``inbound_kernel.cpp:9-15``, ``copy_tile_between_cb``). No NoC transaction and no tensor. Tile for tile: the stores
    may convert each element, so the two buffers' tile sizes may differ (sort's fp32 -> uint16 staging, ttnn
    ``data_movement/sort/device/kernels/dataflow/writer_single_row_single_core.cpp:78-96``).

    The source tiles are the next ``tiles`` past what this engine already read from the front since its pop (as
    ``WriteTiles`` counts them) and must lie in the waited window (``cb-read-unwaited``); the stores land at the fill
    pointer, inside the reserved window (``cb-write-unreserved``), counted in ``into``'s fill. Complete when the
    stores retire, in program order for this engine (``tt_l1_ptr`` is ``__attribute__((rvtt_l1_ptr))``,
    ``risc_attribs.h:19``: plain loads and stores of the core's RISC-V into its L1): a ``Pop`` of ``src`` after it
    frees pages already read, no barrier between.

    A retired store is not yet in L1 for the other agents: "a store can retire before its write-request lands in L1,
    and the RISCV core and the NoC are different L1 clients with no program-order guarantee between them"
    (``ttnn/operations/data_movement/common/kernels/common.hpp:91-96``), and ``cb_push_back`` is a store to a stream
    register, another region (``dataflow_api.h:208-213``), which may be processed first — tt-metal PR #50183, the
    contributed example's own copy. ``drain``: the copy ends with a blocking load of the last word it wrote
    (``ckernel::load_blocking``; same-region stores are processed in order, so every earlier store of the engine has
    landed: ``common.hpp:166-179``, PR #50183's fix). Without it the stores stay unlanded until a later drained copy
    of the engine, and a ``Push`` or multicast of ``into`` before that publishes them early (``async-read-publish``)."""

    src: int = attrs.field(metadata={"id": ID_BUFFER})
    into: int = attrs.field(metadata={"id": ID_BUFFER})
    tiles: int = attrs.field()
    drain: bool = False


@attrs.frozen
class ScratchAccess:
    """Local loads (``store`` false) or stores (``store`` true) by this data-movement engine's own RISC of the bytes
    of ``buf``, a scratch buffer (``Buffer.scratch``: private L1 of this engine, no Reserve/Push/Wait/Pop): values
    read from or written into it through a ``volatile tt_l1_ptr`` pointer taken from ``get_write_ptr`` (argmax's
    ``in_vals[i]`` and ``red_idxs[0] = max_idx``, ttnn ``reduction/argmax/device/kernels/
    reader_argmax_interleaved_multicore.cpp:85, 500-501``). No NoC transaction; the whole buffer, not counted pages.

    The engine's NoC reads into ``buf`` must have landed first — a ReadBarrier of this engine since its last read
    into ``buf`` (``scratch-unlanded``: ``noc_async_read`` returns at issue, the data is in L1 only after
    ``noc_async_read_barrier``, ``dataflow_api.h``) — and a store may not rewrite bytes a NoC write of this engine
    still reads (``scratch-reuse``: no Flush or WriteBarrier since the write). Stores retire before they land in L1
    for the NoC, a different L1 client (ttnn ``data_movement/common/kernels/common.hpp:91-96``): a NoC write from
    ``buf`` before a drain of the engine may send stale bytes (``scratch-unlanded``). ``drain``: the stores end with a
    blocking load of the last word written (``ckernel::load_blocking``), which lands every earlier store of the
    engine, as ``FillTiles.drain`` does. docs/semantics.md "Scratch buffers"."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    store: bool = False
    drain: bool = False


@attrs.frozen
class WriteTiles:
    """Asynchronous write of ``tiles`` tiles from the front of buffer ``src`` to ``tensor`` at ``addr``.

    Complete (acknowledged) no later than the engine's next ``WriteBarrier``. ``part``: only a byte range of one page
    (``tiles`` is 1): ``Part``'s bytes of the next unread tile of ``src`` into its bytes of tensor tile ``addr``; the
    tile counts as written only once such writes cover all its bytes (docs/semantics.md, "Part-page transfers").
    """

    src: int = attrs.field(metadata={"id": ID_BUFFER})
    tensor: str = attrs.field(metadata={"id": ID_TENSOR})
    addr: Addr = attrs.field()
    tiles: int = attrs.field()
    part: Part | None = None


@attrs.frozen
class ReadBarrier:
    """Block until every read this engine issued has landed (noc_async_read_barrier)."""


@attrs.frozen
class WriteBarrier:
    """Block until every write and multicast this engine issued is acknowledged (noc_async_write_barrier)."""


@attrs.frozen
class Flush:
    """Block until every write this engine issued has left its source (noc_async_writes_flushed)."""


@attrs.frozen
class AtomicBarrier:
    """Block until every atomic increment this engine issued is acknowledged (noc_async_atomic_barrier)."""


@attrs.frozen
class AcquireAcc:
    """Take ``tiles`` accumulator tiles of precision ``dtype`` (tile_regs_acquire / acquire_dst). A 32-bit dtype
    (fp32, int32, uint32: fp32_dest_acc_en) takes twice the DST room of a 16-bit one, so ``tiles`` must fit the
    target's capacity at that precision (``Target.acc_capacity``)."""

    tiles: int
    dtype: str


@attrs.frozen
class Operand:
    """Pages a ``Compute`` unpacks from buffer ``buf``: within the first ``pages`` pages of its waited front (the
    unpacker reads from the read pointer, valid between cb_wait_front and cb_pop_front)."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    pages: int = attrs.field()


@attrs.frozen
class InPlace:
    """One page a ``Compute`` unpacks from buffer ``buf`` by tile index, with no wait of its own: page
    ``page + sum(coef * index)`` over ``terms`` (enclosing loop indices) counted from the buffer's read pointer, as
    the unpacker addresses it (``get_read_ptr + index * page_size``: ``sub_tiles_bcast_cols(dfb_in_id, ..., index,
    ...)``, ``layernorm_sharded.cpp:357`` in ttnn 0.81.1). The page must hold published bytes when it is read
    (``cb-read-unpublished``, docs/semantics.md "Reads in place"): a resident input shard (the buffer on an input
    tensor's shard that no op but such reads names: its bytes are the tensor's from launch), else a page pushed and not
    popped (``pushed - popped > page``)."""

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    page: int = attrs.field(default=0)
    terms: tuple[Term, ...] = ()

    def at(self, env: Mapping[str, int]) -> int:
        """The page read with loop indices ``env`` (pages past the read pointer)."""
        return self.page + sum(t.coef * env[t.var] for t in self.terms)


@attrs.frozen
class Compute:
    """A math step on the accumulator (matmul tiles, elementwise, bias, ...); ``kind`` names it. ``ins`` are the
    circular-buffer pages it unpacks from their waited fronts (none: it works on the accumulator alone);
    ``in_place`` the pages it unpacks by index with no wait (``InPlace``)."""

    kind: str
    tiles: int = 1
    ins: tuple[Operand, ...] = attrs.field(default=(), metadata={"id": ID_OPERANDS})
    in_place: tuple[InPlace, ...] = attrs.field(default=(), metadata={"id": ID_OPERANDS})


@attrs.frozen
class PackAcc:
    """Pack ``tiles`` accumulator tiles into the reserved back of ``buf`` (pack_tile).

    With ``accumulate`` the packer adds the tiles to what those pages already hold instead of replacing it (packer
    L1 accumulation, tt-metal ``llk_pack_reconfig_l1_acc(1)``); a data effect only, the token rules are the same.
    """

    buf: int = attrs.field(metadata={"id": ID_BUFFER})
    tiles: int = attrs.field()
    accumulate: bool = False


@attrs.frozen
class ReleaseAcc:
    """Give the accumulator back (tile_regs_release)."""


@attrs.frozen
class TripCount:
    """A loop count affine in a trip: ``max(0, scale * t + offset)`` for the trip named ``trip`` (``t - 1`` is
    ``TripCount(t, 1, -1)``, ``2t`` is ``TripCount(t, 2)``); ``scale >= 1``."""

    trip: str
    scale: int = 1
    offset: int = 0

    def value(self, t: int) -> int:
        return max(0, self.scale * t + self.offset)


#: A loop count: a constant, a trip's name (its value), or an affine function of a trip.
Count: TypeAlias = "int | str | TripCount"


def count_value(count: int | str | TripCount, trips: dict[str, int]) -> int:
    """The number of iterations of a loop with ``count`` under trip values ``trips``."""
    if isinstance(count, int):
        return count
    if isinstance(count, str):
        return trips[count]
    return count.value(trips[count.trip])


def count_trip(count: int | str | TripCount) -> str | None:
    """The trip a count reads, if any."""
    if isinstance(count, str):
        return count
    if isinstance(count, TripCount):
        return count.trip
    return None


def count_max(count: int | str | TripCount, trip_max: dict[str, int]) -> int:
    """The most iterations a loop with ``count`` can run (trips at their max; counts grow with the trip)."""
    return count_value(count, trip_max)


@attrs.frozen
class Loop:
    """Run ``body`` ``count`` times with index ``var`` = 0, 1, ...

    ``count`` is a constant, the name of a trip (a runtime value in ``[0, max]``, see ``Trip``) or a ``TripCount``.
    """

    var: str
    count: int | str | TripCount = attrs.field(metadata={"id": ID_COUNT})
    body: tuple[Op, ...] = attrs.field()


@attrs.frozen
class If:
    """Run ``body`` only in the iterations of the enclosing loop with index ``var`` that ``when`` admits
    (``first``: ``var == 0``; ``last``: ``var == count - 1``; ``not_first``; ``not_last``): how a loop peels its
    first or last block, also when its count is a trip."""

    var: str
    when: Guard
    body: tuple[Op, ...]


Op: TypeAlias = (
    Reserve
    | Push
    | Wait
    | Pop
    | SemInc
    | SemSet
    | SemRmw
    | SemWait
    | McastSend
    | McastSetValid
    | ReadTiles
    | FillTiles
    | CopyTiles
    | ScratchAccess
    | WriteTiles
    | ReadBarrier
    | WriteBarrier
    | Flush
    | AtomicBarrier
    | AcquireAcc
    | Compute
    | PackAcc
    | ReleaseAcc
    | SemIncMcast
    | InlineWrite
    | RemoteRead
    | Loop
    | If
)

#: Ops that contain other ops (their ``body``).
CONTAINERS = (Loop, If)

#: Ops that add their ``by`` to a word: the atomics (``SemInc`` at ``at``, ``SemIncMcast`` at each destination) and
#: the non-atomic read-modify-write of the own word (``SemRmw``), which counts as one once no write lands between its
#: load and its store (``sem-rmw-race``).
INCREMENTS = (SemInc, SemIncMcast, SemRmw)


def body_at(ops: tuple[Op, ...], where: tuple[int, ...]) -> tuple[Op, ...]:
    """The op list at ``where``: ``ops`` itself for ``()``, else the body of the ``Loop`` or ``If`` that each index
    picks in turn. Raises ``IndexError`` past a list's end and ``TypeError`` when the path enters an op with no
    body."""
    for i in where:
        c = ops[i]
        if not isinstance(c, CONTAINERS):
            raise TypeError(f"path enters {type(c).__name__}, which has no body")
        ops = c.body
    return ops


def with_body(ops: tuple[Op, ...], where: tuple[int, ...], new: tuple[Op, ...]) -> tuple[Op, ...]:
    """``ops`` with the op list at ``where`` (as ``body_at`` finds it) replaced by ``new``, the containers on the way
    rebuilt; raises as ``body_at``."""
    if not where:
        return new
    i = where[0]
    c = ops[i]
    if not isinstance(c, CONTAINERS):
        raise TypeError(f"path enters {type(c).__name__}, which has no body")
    return (*ops[:i], attrs.evolve(c, body=with_body(c.body, where[1:], new)), *ops[i + 1:])

#: JSON tag of every op kind, and back.
OP_TAGS: dict[type, str] = {
    Reserve: "reserve",
    Push: "push",
    Wait: "wait",
    Pop: "pop",
    SemInc: "sem_inc",
    SemSet: "sem_set",
    SemRmw: "sem_rmw",
    SemWait: "sem_wait",
    McastSend: "mcast_send",
    McastSetValid: "mcast_set_valid",
    ReadTiles: "read_tiles",
    WriteTiles: "write_tiles",
    ReadBarrier: "read_barrier",
    WriteBarrier: "write_barrier",
    Flush: "flush",
    AtomicBarrier: "atomic_barrier",
    AcquireAcc: "acquire_acc",
    Compute: "compute",
    PackAcc: "pack_acc",
    ReleaseAcc: "release_acc",
    SemIncMcast: "sem_inc_mcast",
    FillTiles: "fill_tiles",
    InlineWrite: "inline_write",
    RemoteRead: "remote_read",
    CopyTiles: "copy_tiles",
    ScratchAccess: "scratch_access",
    Loop: "loop",
    If: "if",
}
TAG_OPS: dict[str, type] = {v: k for k, v in OP_TAGS.items()}


def op_text(op: Op, buffers: Mapping[int, str] | None = None, semaphores: Mapping[int, str] | None = None) -> str:
    """A short human form, e.g. ``reserve(b3, 8)``; with ``buffers`` / ``semaphores`` (id -> the program's name)
    buffers and semaphores are named as the program names them, e.g. ``reserve(c_0, 8)``."""
    tag = OP_TAGS[type(op)]

    def b(i: int) -> str:
        return buffers[i] if buffers is not None and i in buffers else f"b{i}"

    def sm(i: int) -> str:
        return semaphores[i] if semaphores is not None and i in semaphores else f"sem{i}"

    if isinstance(op, Loop):
        c = op.count
        if isinstance(c, TripCount):
            c = f"{c.scale}*{c.trip}" if c.scale != 1 else c.trip
            c += f"{op.count.offset:+d}" if isinstance(op.count, TripCount) and op.count.offset else ""  # type: ignore[union-attr]
        return f"loop {op.var} < {c}"
    if isinstance(op, If):
        return f"if {op.var} {op.when.value}"
    fields = []
    for a in attrs.fields(type(op)):
        v = getattr(op, a.name)
        if a.name in ("buf", "into") or (a.name == "src" and not isinstance(op, McastSetValid)):
            fields.append(b(v))
        elif a.name == "sem":
            fields.append(sm(v))
        elif a.name == "group":
            fields.append(f"g{v}")
        elif a.name == "cond":
            fields.append(v.value)
        elif a.name == "addr":
            continue
        elif a.name == "part":
            # A whole-tile transfer reads as it always has; a part names its bytes.
            if v is not None:
                grows = "".join(f"{t.coef:+d}*{t.var}" for t in v.terms)
                fields.append(f"bytes [{v.offset}{grows}, +{v.size}) at +{v.at}" if grows
                              else f"bytes [{v.offset}, {v.offset + v.size}) at +{v.at}")
        elif a.name in ("accumulate", "front", "drain", "store"):
            # Only the non-default form says so: the plain form reads as it always has.
            if v:
                fields.append(a.name)
        elif a.name == "src":
            if v is not None:
                fields.append(f"src={sm(v)}")
        elif a.name == "dst":
            if v is not None:
                fields.append(f"into {b(v)}")
        elif a.name == "offset":
            if v:
                fields.append(f"+{v} pages")
        elif a.name == "behind":
            if v:
                fields.append(f"pushed {v} back")
        elif a.name == "num_dests":
            fields.append(f"{v} dests")
        elif a.name == "vc":
            if v is not None:
                fields.append(f"vc {v}")
        elif a.name == "ins":
            fields.extend(f"{b(o.buf)}[{o.pages}]" for o in v)
        elif a.name == "in_place":
            fields.extend(f"{b(o.buf)}@{o.page}" + "".join(f"{t.coef:+d}*{t.var}" for t in o.terms) for o in v)
        elif a.name == "terms":
            fields[-1] += "".join(f"{t.coef:+d}*{t.var}" for t in v)
        elif a.name in ("dtype", "kind"):
            fields.append(v)
        else:
            fields.append(str(v))
    return f"{tag}({', '.join(fields)})"


def named_index_buffer(op: Op) -> int | None:
    """The index buffer ``op``'s indirect address names (``Dynamic.buf``), or None."""
    addr = getattr(op, "addr", None)
    return None if addr is None or addr.dynamic is None else addr.dynamic.buf
