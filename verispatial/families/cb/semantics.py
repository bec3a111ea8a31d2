"""Circular buffers in the reference interpreter: the handlers of Reserve, Push, Wait and Pop, and the buffer checks
other ops share (one producer and one consumer per buffer, writes into the reserved back).

Each handler takes the interpreter, the state it changes, the engine index ``e``, its program counter ``pc``, the op
and the list violations are appended to (docs/semantics.md, "Circular buffers"; dataflow_api.h cb_reserve_back,
cb_push_back, cb_wait_front, cb_pop_front)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import shard_semantics as shards
from verispatial.families.cb import shared_semantics as sharing
from verispatial.ir import rules as R
from verispatial.ir.obligation import BufferRef
from verispatial.ir.ops import CopyTiles, FillTiles, InPlace, Op, Pop, Push, ReadTiles, Reserve, Wait, WriteTiles, op_text
from verispatial.ir.program import shard_pages
from verispatial.petri.position import Violation

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State


def capacity(it: Interp, e: int, pc: PC, op: Op, out: list[Violation]) -> None:
    """``cb-capacity``, on arriving at ``op``: a Reserve or Wait of more pages than the ring holds never returns."""
    if isinstance(op, (Reserve, Wait)) and op.pages > it.caps[op.buf]:
        it._v(out, R.CB_CAPACITY, e, pc,
              f"{op_text(op)} asks for {op.pages} pages of b{op.buf}, whose capacity is {it.caps[op.buf]}")


def role(it: Interp, s: State, e: int, pc: PC, b: int, producer: bool, out: list[Violation]) -> None:
    """``cb-single-producer`` / ``cb-single-consumer``: the first engine to produce (consume) ``b`` owns that end; a
    sharing waiter's waits and reads claim no end (``families/cb/shared_semantics.py``). The violation names the buffer
    and shows at whichever engine reaches it second (the checker's replay accepts either engine's uses)."""
    if not producer and (e, b) in it.share_id:
        return
    owners = s.producer if producer else s.consumer
    if owners[b] < 0:
        owners[b] = e
    elif owners[b] != e:
        rule, verb = (R.CB_SINGLE_PRODUCER, "produces") if producer else (R.CB_SINGLE_CONSUMER, "consumes")
        it._v(out, rule, e, pc, f"b{b} already has {it.keys[owners[b]]} as the engine that {verb} it", BufferRef(b))


def fill(it: Interp, s: State, e: int, pc: PC, b: int, tiles: int, op: Op, out: list[Violation]) -> tuple[int, ...]:
    """Writes into a buffer land in its reserved back, one after another from the write pointer: the tiles must
    lie inside the window ``[pushed, rsv_end)`` (reference §1.1: get_write_ptr is valid only between reserve and
    push; ``cb-write-unreserved``). Returns the ring slots written."""
    pt = it.page_tiles[b]
    room = (s.rsv_end[b] - s.pushed[b]) * pt
    if s.fill[b] + tiles > room:
        it._v(out, R.CB_WRITE_UNRESERVED, e, pc,
              f"{op_text(op)} writes tiles [{s.fill[b]}, {s.fill[b] + tiles}) past the write pointer of b{b}, but "
              f"its reserved window holds {max(room, 0)} tiles")
    else:  # a write past the window is cb-write-unreserved's, whatever else it does
        past_end(it, e, pc, b, s.pushed[b], s.fill[b], tiles, f"{op_text(op)} writes", "write", out)
    slots = it._tile_slots(b, s.pushed[b] * pt + s.fill[b], tiles)
    if b in it.write_shards:  # the write changes its tensor's bytes from here to its push (shard_semantics)
        shards.write_into(it, s, e, pc, b, tiles, out)
    s.fill[b] += tiles
    return slots


def past_end(it: Interp, e: int, pc: PC, b: int, counter: int, offset: int, tiles: int, what: str, end: str,
             out: list[Violation], back: int = 0) -> None:
    """``cb-straddle`` for an access of ``tiles`` tiles ``offset`` tiles past a pointer of ``b`` (``end``: "write" or
    "read"; ``counter``: the pages pushed or popped, which put the pointer at slot ``counter % capacity``). A kernel
    addresses such an access from ``get_write_ptr`` / ``get_read_ptr`` plus a byte offset, which nothing wraps: only
    ``cb_push_back`` / ``cb_pop_front`` wrap the pointers, at the ring's limit (``dataflow_api.h`` cb_push_back,
    cb_pop_front; ``tt_metal/hw/inc/internal/circular_buffer_interface.h``, ttnn 0.81.1). So the tiles must end by the
    ring's end: ``(counter % capacity) * page_tiles + offset + tiles <= capacity * page_tiles`` — the same rule as a
    block of pushes or pops and an indexed unpack (``unpack_in_ring``). Asked only of an access inside its window
    (one past it is ``cb-write-unreserved`` / ``cb-read-unwaited``'s, whatever else it does). ``back``: the pointer
    was taken that many pages before the counter (a multicast of pages already pushed: its address is the write
    pointer before the pushes of its ``behind`` pages), so its slot is ``(counter - back) % capacity``."""
    cap, pt = it.caps[b], it.page_tiles[b]
    at = (counter - back) % cap
    taken = f" taken {back} pages back" if back else ""
    if at * pt + offset + tiles > cap * pt:
        it._v(out, R.CB_STRADDLE, e, pc,
              f"{what} tiles [{offset}, {offset + tiles}) past the {end} pointer of b{b}{taken}, at slot {at} of a "
              f"{cap}-page ring of {pt}-tile pages: past its end ({at}*{pt}+{offset + tiles} > {cap * pt}; the pointer does not "
              "wrap inside an access)")


def waited(it: Interp, s: State, e: int, pc: PC, b: int, pages: int, what: str, out: list[Violation]) -> None:
    """``cb-read-unwaited`` for a read of ``pages`` whole pages from the front of ``b`` (``what`` says which op and
    verb): they must lie in the waited window ``[popped, wait_end)``."""
    if s.popped[b] + pages > s.wait_end[b]:
        it._v(out, R.CB_READ_UNWAITED, e, pc,
              f"{what} pages [{s.popped[b]}, {s.popped[b] + pages}) of b{b}, but the waited window is "
              f"[{s.popped[b]}, {max(s.wait_end[b], s.popped[b])})")


def unpack_in_ring(it: Interp, s: State, e: int, pc: PC, op: Op, b: int, pages: int, out: list[Violation]) -> None:
    """``cb-straddle`` for a Compute of the consumer unpacking the first ``pages`` pages of ``b``'s front: tile index
    ``k`` is read at ``fifo_rd_ptr + k * page_size`` with no wrap (``llk_unpack_A_api.h:78-82``; asserted by
    ``cb_access_within_bounds``, ``tt_metal/hw/inc/internal/circular_buffer_interface.h:139-143``, ttnn 0.81.1), so
    the pages must not pass the ring's end from the read pointer's slot: ``popped % capacity + pages <= capacity``.
    A ``cb_wait_front`` itself may span the end (its pages wrap); only an indexed read past it does not."""
    cap = it.caps[b]
    at = s.popped[b] % cap
    if s.consumer[b] == e and at + pages > cap:
        it._v(out, R.CB_STRADDLE, e, pc,
              f"{op_text(op)} unpacks pages 0..{pages - 1} of b{b} from read offset {at} of a {cap}-page ring: "
              f"past its end ({at}+{pages} > {cap}; the unpacker does not wrap)")


def read_in_place(it: Interp, s: State, e: int, pc: PC, op: Op, r: InPlace, out: list[Violation]) -> None:
    """``cb-read-unpublished`` for a page a Compute reads by index with no wait (docs/semantics.md "Reads in place").
    The page is ``r``'s index past this engine's read pointer (its own pops: the consumer's are the buffer's
    ``popped``, any other engine never pops it). A resident input shard (``ir/shards.resident_shards``) holds the
    tensor's bytes from launch: published for ``0 <= index < shard_pages``. Any other buffer: the page must be pushed
    and not popped, ``popped <= page < pushed`` (a popped slot may be reserved and rewritten; ``pushed - popped <=
    capacity`` keeps a live page's slot out of every reservation), and its index must not pass the ring's end from
    the read pointer's slot, ``read_slot + index < capacity``: the unpacker addresses ``fifo_rd_ptr + index *
    page_size`` with no wrap (``llk_unpack_A_api.h:78-82``; ``cb_access_within_bounds``,
    ``tt_metal/hw/inc/internal/circular_buffer_interface.h:139-143``, ttnn 0.81.1), so past it lies no page of the
    ring."""
    k = r.at(it._env(e, pc))
    b = r.buf
    if b in it.resident:
        on = shard_pages(it.program.buffers[b])
        if not 0 <= k < on:
            it._v(out, R.CB_READ_UNPUBLISHED, e, pc,
                  f"{op_text(op)} reads page {k} of resident shard b{b}, which holds pages [0, {on})")
        return
    own = s.popped[b] if s.consumer[b] == e else 0
    page = own + k
    if not s.popped[b] <= page < s.pushed[b]:
        it._v(out, R.CB_READ_UNPUBLISHED, e, pc,
              f"{op_text(op)} reads page {page} of b{b} in place, but its published pages are "
              f"[{s.popped[b]}, {max(s.pushed[b], s.popped[b])})")
    elif own % it.caps[b] + k >= it.caps[b]:
        # The unpacker adds index * page_size to its read pointer with no wrap: a page whose slot lies past the
        # ring's end is not where the index points (cb_access_within_bounds asserts it, circular_buffer_interface.h).
        it._v(out, R.CB_READ_UNPUBLISHED, e, pc,
              f"{op_text(op)} reads index {k} past the read pointer at slot {own % it.caps[b]} of b{b}'s "
              f"{it.caps[b]}-page ring: past the ring's end, not page {page}")


def index_window(it: Interp, s: State, e: int, pc: PC, op: ReadTiles | WriteTiles, out: list[Violation]) -> None:
    """``cb-read-unwaited`` for an indirect address: its index is read from the front page of its index buffer
    (``Program.index_buffers``), which must lie in this engine's waited window — waited and not yet popped, by
    this engine, the buffer's consumer (cb_wait_front .. cb_pop_front bracket get_read_ptr: ``dataflow_api.h``)."""
    dyn = op.addr.dynamic
    if dyn is None:
        return
    b = it.program.index_buffer(it.engines[e], pc[0][0], op, it.index_bufs, it._phases)
    if b is None:
        return
    if sharing.shared_read(it, s, e, pc, op, b, 0, 1, out):
        return
    if s.consumer[b] != e or s.wait_end[b] <= s.popped[b]:
        it._v(out, R.CB_READ_UNWAITED, e, pc,
              f"{op_text(op)} reads its index {dyn.name} from the front of b{b}, but this engine's waited window "
              f"of b{b} holds no page")


def balance(it: Interp, s: State) -> list[Violation]:
    """``balance-cb`` of a terminated state: pages left in a buffer whose counters a later section of the launch
    uses (``Program.counters_reused``; the firmware resets the others' at the next launch: trisc.cc
    init_sync_registers, circular_buffer_init.h)."""
    out: list[Violation] = []
    for b in it.program.buffers:
        after = it.reused.get(b.id)
        if s.pushed[b.id] != s.popped[b.id] and after is not None:
            e = s.consumer[b.id] if s.consumer[b.id] >= 0 else s.producer[b.id]
            msg = (f"b{b.id} ({b.name}) ends with pushed {s.pushed[b.id]} != popped {s.popped[b.id]}; cb {b.cb} "
                   f"at {b.site}: {after}")
            out.append(Violation(R.BALANCE_CB, it._site_pos(b.site, e), msg, BufferRef(b.id)))
    return out


def reserve(it: Interp, s: State, e: int, pc: PC, op: Reserve, out: list[Violation]) -> None:
    """cb_reserve_back: the producer's window grows to ``pushed + pages`` (it blocks until that many are free)."""
    b, n = op.buf, op.pages
    role(it, s, e, pc, b, True, out)
    first = max(s.rsv_end[b], s.pushed[b])
    it._source_reuse(s, e, pc, b, it._page_slots(b, first, s.pushed[b] + n - first),
                     f"{op_text(op)} re-reserves", out, ring=True)
    s.rsv_end[b] = max(s.rsv_end[b], s.pushed[b] + n)


def push(it: Interp, s: State, e: int, pc: PC, op: Push, out: list[Violation]) -> None:
    """cb_push_back: publishes ``pages`` reserved, filled pages; the write pointer wraps only on the ring's end. The
    pages must have landed: reads into them (``async-read-publish``) and multicasts into a destination buffer
    (``mcast-publish-early``), the NoC's and the multicast family's rules (reached through the interpreter)."""
    b, n, cap = op.buf, op.pages, it.caps[op.buf]
    pt = it.page_tiles[b]
    role(it, s, e, pc, b, True, out)
    if s.pushed[b] + n > s.rsv_end[b]:
        it._v(out, R.CB_PUSH_UNCOVERED, e, pc,
              f"push(b{b}, {n}) publishes pages [{s.pushed[b]}, {s.pushed[b] + n}) but the reserved window is "
              f"[{s.pushed[b]}, {max(s.rsv_end[b], s.pushed[b])})")
    # A read shard's pages are its tensor's bytes as they are: its push publishes them unfilled (shard_semantics).
    if b in it.data_bufs and b not in it.mcast_dests and b not in it.read_shards and s.fill[b] < n * pt:
        it._v(out, R.CB_PUSH_UNFILLED, e, pc,
              f"push(b{b}, {n}) publishes {n * pt} tiles but only {s.fill[b]} were written into its back "
              f"since they were reserved")
    if s.pushed[b] % cap + n > cap:
        it._v(out, R.CB_STRADDLE, e, pc,
              f"push(b{b}, {n}) at write offset {s.pushed[b] % cap} of a {cap}-page ring straddles its end "
              f"({s.pushed[b] % cap}+{n} > {cap})")
    it._read_publish(s, e, pc, b, f"push(b{b}, {n})", out)
    it._mcast_publish_early(s, e, pc, b, n, out)
    if b in it.shard_bufs:
        on = it.shard_pages[b]
        if s.pushed[b] + n > on:
            first = max(on, s.pushed[b])
            where = (f"ring slot {first % cap} again, bytes of tensor {it.shard_bufs[b].shard.tensor} already published"  # type: ignore[union-attr]
                     if first >= cap else f"past the {on} pages of its shard of {it.shard_bufs[b].shard.tensor}, L1 "  # type: ignore[union-attr]
                     "that is not the tensor's (the buffer is larger than its shard)")
            it._v(out, R.CB_SHARD_OVERRUN, e, pc,
                  f"push(b{b}, {n}) publishes pages [{s.pushed[b]}, {s.pushed[b] + n}) of sharded b{b}: page {first} is "
                  f"{where}", BufferRef(b))
        shards.push(it, s, e, pc, b, n, out)
    it._alias_clobber(s, e, pc, b, n, out)
    s.pushed[b] += n
    s.rsv_end[b] = max(s.rsv_end[b], s.pushed[b])
    s.fill[b] = max(0, s.fill[b] - n * pt)


def wait(it: Interp, s: State, e: int, pc: PC, op: Wait, out: list[Violation]) -> None:
    """cb_wait_front: the consumer's window grows to ``popped + pages`` (it blocks until that many arrived); a
    sharing waiter's from its own read pointer (``shared_semantics.shared_wait``)."""
    if sharing.shared_wait(it, s, e, op):
        return
    role(it, s, e, pc, op.buf, False, out)
    s.wait_end[op.buf] = max(s.wait_end[op.buf], s.popped[op.buf] + op.pages)


def pop(it: Interp, s: State, e: int, pc: PC, op: Pop, out: list[Violation]) -> None:
    """cb_pop_front: frees ``pages`` waited pages; the read pointer wraps only on the ring's end."""
    b, n, cap = op.buf, op.pages, it.caps[op.buf]
    role(it, s, e, pc, b, False, out)
    if s.popped[b] + n > s.wait_end[b]:
        it._v(out, R.CB_POP_UNCOVERED, e, pc,
              f"pop(b{b}, {n}) frees pages [{s.popped[b]}, {s.popped[b] + n}) but the waited window is "
              f"[{s.popped[b]}, {max(s.wait_end[b], s.popped[b])})")
    if s.popped[b] % cap + n > cap:
        it._v(out, R.CB_STRADDLE, e, pc,
              f"pop(b{b}, {n}) at read offset {s.popped[b] % cap} of a {cap}-page ring straddles its end "
              f"({s.popped[b] % cap}+{n} > {cap})")
    it._source_reuse(s, e, pc, b, it._page_slots(b, s.popped[b], n), f"{op_text(op)} frees", out, pop=True)
    if it.share_id:
        sharing.pop_under_shared_wait(it, s, e, pc, b, n, out)
    s.popped[b] += n
    s.wait_end[b] = max(s.wait_end[b], s.popped[b])
    s.drain[b] = max(0, s.drain[b] - n * it.page_tiles[b])


def fill_tiles(it: Interp, s: State, e: int, pc: PC, op: FillTiles, out: list[Violation]) -> None:
    """``FillTiles``: the engine's own stores into the reserved back of ``op.into`` (they retire in program order, so
    no pending entry and no barrier): counted in the producer's fill as a ReadTiles that landed, with the same window,
    alias and source-reuse rules; no tensor is read. The stores stay unlanded for the other agents until a drain of
    the engine (``st_mask``, as a ``CopyTiles``'s; docs/semantics.md, "Local-store fills"). A patch (``tiles`` 0)
    stores into a tile of the window a read filled and that landed: with no tile filled in the window (after the
    push, before the read) or a read into the buffer in flight (no read barrier since) it stores where the engine
    holds nothing landed, ``cb-write-unreserved``."""
    b = op.into
    role(it, s, e, pc, b, True, out)
    if op.tiles == 0 and not 1 <= s.fill[b] <= (s.rsv_end[b] - s.pushed[b]) * it.page_tiles[b]:
        it._v(out, R.CB_WRITE_UNRESERVED, e, pc,
              f"{op_text(op)} patches a tile of b{b}, but no tile of its reserved window is filled (a patch stores "
              "into a tile a read filled, after the read's barrier and before the push)")
    elif op.tiles == 0 and s.rb_mask[e] >> b & 1:
        it._v(out, R.CB_WRITE_UNRESERVED, e, pc,
              f"{op_text(op)} patches a tile of b{b} while a read_tiles into it may not have landed (no read_barrier "
              "since: the read may land over the stores)")
    slots = fill(it, s, e, pc, b, op.tiles, op, out)
    it._alias_write(s, e, pc, b, slots, f"{op_text(op)} writes", out)
    it._source_reuse(s, e, pc, b, slots, f"{op_text(op)} rewrites", out)
    s.st_mask[e] = 0 if op.drain else s.st_mask[e] | 1 << b


def copy_tiles(it: Interp, s: State, e: int, pc: PC, op: CopyTiles, out: list[Violation]) -> None:
    """``CopyTiles``: the engine's own loads from the front of ``op.src`` and stores into the reserved back of
    ``op.into``, complete at once (docs/semantics.md, "Local copies"). The loads take the next ``op.tiles`` tiles past
    what the engine read since its pop, inside the waited window (``cb-read-unwaited``, as a ``WriteTiles`` counts
    them; nothing stays a source: the loads are done when the op is); the stores are a ``FillTiles`` of as many tiles
    (``cb-write-unreserved``, alias and source-reuse rules), undrained until a drained copy (``st_mask``)."""
    b, pt = op.src, it.page_tiles[op.src]
    role(it, s, e, pc, b, False, out)
    room = (s.wait_end[b] - s.popped[b]) * pt
    if s.drain[b] + op.tiles > room:
        it._v(out, R.CB_READ_UNWAITED, e, pc,
              f"{op_text(op)} loads tiles [{s.drain[b]}, {s.drain[b] + op.tiles}) past the read pointer of b{b}, but "
              f"its waited window holds {max(room, 0)} tiles")
    else:
        past_end(it, e, pc, b, s.popped[b], s.drain[b], op.tiles, f"{op_text(op)} loads", "read", out)
    s.drain[b] += op.tiles
    role(it, s, e, pc, op.into, True, out)
    slots = fill(it, s, e, pc, op.into, op.tiles, op, out)
    it._alias_write(s, e, pc, op.into, slots, f"{op_text(op)} writes", out)
    it._source_reuse(s, e, pc, op.into, slots, f"{op_text(op)} rewrites", out)
    # Retired stores land in L1 only at a drain, which lands every earlier store of the engine too (``async-read-
    # publish`` at a push or multicast of a buffer with undrained stores: ``noc.read_publish``).
    s.st_mask[e] = 0 if op.drain else s.st_mask[e] | 1 << op.into


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {Reserve: reserve, Push: push, Wait: wait, Pop: pop, FillTiles: fill_tiles,
                                            CopyTiles: copy_tiles}


def reserve_enabled(it: Interp, s: State, e: int, pc: PC, op: Reserve) -> bool:
    """cb_reserve_back returns once ``pages`` pages of the ring are free."""
    return s.pushed[op.buf] - s.popped[op.buf] + op.pages <= it.caps[op.buf]


def wait_enabled(it: Interp, s: State, e: int, pc: PC, op: Wait) -> bool:
    """cb_wait_front returns once ``pages`` pages arrived past the acked count it reads (``acked_seen``)."""
    return s.pushed[op.buf] - sharing.acked_seen(it, s, e, op.buf) >= op.pages


def reserve_blocked(it: Interp, s: State, e: int, pc: PC, op: Reserve) -> str:
    b, cap = op.buf, it.caps[op.buf]
    if op.pages > cap:
        return f"waits for space in b{b}: asks {op.pages} pages of a {cap}-page buffer (never fits)"
    free = cap - (s.pushed[b] - s.popped[b])
    return (f"waits for space in b{b}: capacity-(pushed-popped)={cap}-({s.pushed[b]}-{s.popped[b]})"
            f"={free} < {op.pages}")


def wait_blocked(it: Interp, s: State, e: int, pc: PC, op: Wait) -> str:
    b = op.buf
    seen = sharing.acked_seen(it, s, e, b)
    if seen != s.popped[b]:  # a compute sharing waiter: it counts its own pops, none
        return f"waits for b{b}: pushed-(its own pops)={s.pushed[b]}-{seen}={s.pushed[b] - seen} < {op.pages}"
    return f"waits for b{b}: pushed-popped={s.pushed[b]}-{s.popped[b]}={s.pushed[b] - s.popped[b]} < {op.pages}"


#: When a step of each blocking op class is enabled ``(interp, state, engine, pc, op) -> bool`` (``Interp.can_step``).
ENABLED: dict[type, Callable[..., bool]] = {Reserve: reserve_enabled, Wait: wait_enabled}

#: What blocks a step of each blocking op class, with the counter values (``Interp.block_detail``).
BLOCKED: dict[type, Callable[..., str]] = {Reserve: reserve_blocked, Wait: wait_blocked}
