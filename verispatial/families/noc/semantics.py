"""The asynchronous NoC in the reference interpreter: the handlers of ReadTiles, WriteTiles, InlineWrite, ReadBarrier,
WriteBarrier, Flush and AtomicBarrier (issue, barrier and landing), and the NoC rules other families' handlers share:
``async-read-publish`` (``read_publish``), ``async-source-reuse`` (``source_reuse``, ``word_reuse``) and
``async-pending-at-end`` (``pending_at_end``).

Each handler takes the interpreter, the state it changes, the engine index ``e``, its program counter ``pc``, the op
and the list violations are appended to (docs/semantics.md, "Asynchronous NoC" and "Sources of asynchronous
writes"; dataflow_api.h noc_async_read, noc_async_write, noc_async_read_barrier, noc_async_write_barrier,
noc_async_writes_flushed, noc_async_atomic_barrier). A read or write is issued by its engine step and lands later
(``LANDINGS``); the in-flight entries are ``petri/pending.py``'s. A barrier's step is enabled only once what it
waits for is done (``ENABLED``, ``Interp.can_step``), so its handler only clears what the engine has outstanding. The tensor
rules a read or write applies are the tensors family's (``families/tensors/semantics.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import semantics as cb
from verispatial.families.cb.shared_semantics import shared_read
from verispatial.families.scratch import semantics as scratch
from verispatial.families.semaphores import semantics as semaphores
from verispatial.families.tensors import semantics as tensors
from verispatial.ir import rules as R
from verispatial.ir.ops import (
    AtomicBarrier,
    Flush,
    InlineWrite,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    WriteBarrier,
    WriteTiles,
    op_text,
)
from verispatial.petri.pending import INC, MCAST, READ, VALID, WRITE
from verispatial.petri.position import Violation, iteration_text, path_text

if TYPE_CHECKING:
    from verispatial.ir.core import Site
    from verispatial.petri.interp import PC, Entry, Interp, State


# ---------------------------------------------------------------------- rules other families' handlers share


def read_publish(it: Interp, s: State, e: int, pc: PC, b: int, what: str, out: list[Violation]) -> None:
    """``async-read-publish``: ``what`` (a Push or a multicast of ``b``) publishes pages of ``b`` while a read into
    ``b`` by this engine may not have landed (no ReadBarrier since: data is in L1 only after noc_async_read_barrier,
    dataflow_api.h), or while its own stores into ``b`` by a ``CopyTiles`` have not been drained. Decided per buffer,
    not per page."""
    if s.rb_mask[e] >> b & 1:
        it._v(out, R.ASYNC_READ_PUBLISH, e, pc,
              f"{what} publishes pages read into b{b} by read_tiles with no read_barrier since")
    elif s.st_mask[e] >> b & 1:
        # The engine's own L1 stores (FillTiles, CopyTiles) retire before they land; the push's stream-register store
        # may be processed first (tt-metal PR #50183): only a drain (a blocking load of the last word) orders them.
        it._v(out, R.ASYNC_READ_PUBLISH, e, pc,
              f"{what} publishes pages of b{b} stored by fill_tiles or copy_tiles with no drain since (a retired "
              "store may not have landed in L1)")


def source_reuse(it: Interp, s: State, e: int, pc: PC, b: int, slots: tuple[int, ...], what: str,
                 out: list[Violation], *, pop: bool = False, ring: bool = False) -> None:
    """``async-source-reuse`` on pages: ``slots`` of ``b`` (its root's bytes) are freed (``pop``: only the
    sources of reads from the front of ``b`` itself, the popping engine's own), re-reserved (``ring``: sources
    read from ``b`` itself — a reserve is an operation of ``b``'s ring) or rewritten (any buffer sharing the
    bytes) while they are the source of a write or multicast of any engine that has not left it
    (dataflow_api.h: noc_async_writes_flushed waits until the writes departed; the source may be reused only
    then)."""
    if not slots:
        return
    root, want = it.root[b], set(slots)
    for e2 in range(it.n):
        for en in s.pending[e2]:
            if en[0] == WRITE:
                src, front = en[3], True
                if src is None:  # a one-word write carries its value: no source in local memory
                    continue
            elif en[0] == READ and len(en) > 6:  # a remote read: the owner's pages, until it lands
                src, front = en[6], False
            elif en[0] == MCAST and not en[6]:
                src, front = en[8], en[9]
            else:
                continue
            if (pop and not (front and src[2] == b)) or (ring and src[2] != b) or src[0] != root \
                    or not want & set(src[1]):
                continue
            page = min(want & set(src[1]))
            issued = op_text(it._ops[e2][en[1]])
            it._v(out, R.ASYNC_SOURCE_REUSE, e, pc,
                  f"{what} page {page} of b{b}, the source of {it.keys[e2]}'s {issued} at {path_text(en[1])} "
                  f"{iteration_text(it.pos(e2, (en[1], en[2])).iteration)}".rstrip()
                  + ", which has not left it (no flush/write_barrier since)")
            return


def inc_overtake(it: Interp, s: State, e: int, pc: PC, sites: tuple[Site, ...], what: str,
                 out: list[Violation]) -> None:
    """``async-inc-overtake``: an atomic increment (``what``) of engine ``e`` aimed at one of ``sites`` is issued while
    a remote write of the same engine into that core — a data multicast or remote page write not yet landed there, or
    a one-word write (``InlineWrite``) to a word there — is still in flight (no WriteBarrier between). Writes and
    atomics are acknowledged by different counters (``NIU_MST_WR_ACK_RECEIVED`` / ``NIU_MST_ATOMIC_RESP_RECEIVED``,
    noc_nonblocking_api.h) and travel unordered, so the increment may land first and wake its waiter before the data
    it announces (tt-metal PR #43507, #43699)."""
    for en in s.pending[e]:
        if en[0] == MCAST:
            late = [it.program.buffers[d].site for d in en[7] if it.program.buffers[d].site in sites]
        elif en[0] == WRITE and en[3] is None:  # a one-word write (InlineWrite): (WRITE, path, iters, None, word, value)
            late = [it.word_site[en[4]]] if it.word_site[en[4]] in sites else []
        else:
            continue
        if late:
            issued = op_text(it._ops[e][en[1]])
            site = late[0]
            it._v(out, R.ASYNC_INC_OVERTAKE, e, pc,
                  f"{what} is issued while this engine's {issued} at {path_text(en[1])} "
                  f"{iteration_text(it.pos(e, (en[1], en[2])).iteration)}".rstrip()
                  + f" has not landed at {site} (no write_barrier between: the atomic may land first)")
            return


def word_reuse(it: Interp, s: State, e: int, pc: PC, w: int, new: int, what: str, out: list[Violation]) -> None:
    """``async-source-reuse`` on a semaphore word: ``w`` changes while a flag multicast reading it (its
    ``source``) has not left (the value is read when the write departs, reference §1.2). ``new`` is the value the
    store or landing leaves: the value the word holds rewrites no byte the flag could read differently."""
    if new == s.words[w]:
        return
    for e2 in range(it.n):
        for en in s.pending[e2]:
            if en[0] == VALID and not en[6] and en[3] == w:
                issued = op_text(it._ops[e2][en[1]])
                it._v(out, R.ASYNC_SOURCE_REUSE, e, pc,
                      f"{what} sem{it.word_sem[w]}@{it.word_site[w]}, the source word of {it.keys[e2]}'s "
                      f"{issued} at {path_text(en[1])}, which has not left (no flush/write_barrier since)")
                return


def pending_at_end(it: Interp, s: State, e: int, out: list[Violation]) -> None:
    """``async-pending-at-end``: engine ``e`` finishes with reads, writes/multicasts or atomics no final barrier of
    their kind covers (the watcher reports pending NoC transactions: tt-metal PR #55119)."""
    left = []
    if s.rb_mask[e]:
        bufs = ", ".join(f"b{b}" for b in range(len(it.caps)) if s.rb_mask[e] >> b & 1)
        left.append(f"read_tiles into {bufs} with no read_barrier after")
    if s.wb[e]:
        left.append("writes/multicasts with no write_barrier after")
    if s.ab[e]:
        left.append("sem_inc with no atomic_barrier after")
    if left:
        it._v(out, R.ASYNC_PENDING_AT_END, e, None, "ends with outstanding NoC transactions: " + "; ".join(left))


# ---------------------------------------------------------------------- engine steps


def read_tiles(it: Interp, s: State, e: int, pc: PC, op: ReadTiles, out: list[Violation]) -> None:
    """noc_async_read into the reserved back of ``op.into`` (``cb-write-unreserved``: ``cb.fill``), or into the whole
    of a scratch buffer (``scratch.read_into``), issued now and landing later; the tensor rules of the read
    (``tensors.read_issued``)."""
    path, iters = pc
    cb.index_window(it, s, e, pc, op, out)
    if op.into in it.scratch:
        slots = scratch.read_into(it, s, e, pc, op, op.into, out)
    else:
        cb.role(it, s, e, pc, op.into, True, out)
        slots = cb.fill(it, s, e, pc, op.into, op.tiles, op, out)
    state_tiles = tensors.read_issued(it, s, e, pc, op, out)
    s.pending[e] = (*s.pending[e], (READ, path, iters, state_tiles, op.into, slots))
    s.rb_mask[e] |= 1 << op.into


def write_tiles(it: Interp, s: State, e: int, pc: PC, op: WriteTiles, out: list[Violation]) -> None:
    """noc_async_write of tiles read from the front of ``op.src``, which must lie in the waited window
    (``cb-read-unwaited``; a sharing waiter's in its own, ``shared_read``), or of a scratch buffer
    (``scratch.write_from``): its source pages stay in use until it
    leaves (``source_reuse``); the tensor rules of the write (``tensors.write_issued``)."""
    path, iters = pc
    cb.index_window(it, s, e, pc, op, out)
    b, pt = op.src, it.page_tiles[op.src]
    share = it.share_id.get((e, b))
    if b in it.scratch:
        src = (it.root[b], scratch.write_from(it, s, e, pc, op, b, out), b)
    elif share is not None:
        shared_read(it, s, e, pc, op, b, s.share_drain[share], op.tiles, out)
        src = (it.root[b], it._tile_slots(b, s.share_drain[share], op.tiles), b)
        s.share_drain[share] += op.tiles
    else:
        cb.role(it, s, e, pc, b, False, out)
        room = (s.wait_end[b] - s.popped[b]) * pt
        if s.drain[b] + op.tiles > room:
            it._v(out, R.CB_READ_UNWAITED, e, pc,
                  f"{op_text(op)} reads tiles [{s.drain[b]}, {s.drain[b] + op.tiles}) past the read pointer of "
                  f"b{b}, but its waited window holds {max(room, 0)} tiles")
        else:
            cb.past_end(it, e, pc, b, s.popped[b], s.drain[b], op.tiles, f"{op_text(op)} reads", "read", out)
        src = (it.root[b], it._tile_slots(b, s.popped[b] * pt + s.drain[b], op.tiles), b)
        s.drain[b] += op.tiles
    tensors.write_issued(it, s, e, pc, op, out)
    s.pending[e] = (*s.pending[e], (WRITE, path, iters, src))
    s.wb[e] = True


def inline_write(it: Interp, s: State, e: int, pc: PC, op: InlineWrite, out: list[Violation]) -> None:
    """noc_inline_dw_write of ``op.value`` into the word of ``op.sem`` at ``op.at``: a NoC write with no local source
    (the value travels in the command), landing later on its own (``LANDINGS``); the engine's write barrier waits
    for its one acknowledgement, a flush for its departure."""
    path, iters = pc
    s.pending[e] = (*s.pending[e], (WRITE, path, iters, None, it.word_id[(op.sem, op.at)], op.value))
    s.wb[e] = True


def published(s: State, b: int, slot: int, cap: int) -> bool:
    """Whether ring slot ``slot`` of buffer ``b`` holds bytes its producer published: the latest page that slot held
    — among the ``cap`` pages below ``max(rsv_end, pushed)`` — was pushed (not still in the producer's reserved
    window, and not a page never written). A popped page keeps its bytes until the producer reserves it again."""
    top = max(s.rsv_end[b], s.pushed[b])
    page = top - cap + (slot - (top - cap)) % cap
    return 0 <= page < s.pushed[b]


def remote_read(it: Interp, s: State, e: int, pc: PC, op: RemoteRead, out: list[Violation]) -> None:
    """noc_async_read of another core's pages: those of the owner buffer (``buf``'s cb index at ``at``) at this
    engine's own read pointer of ``buf`` plus ``offset`` (it consumes ``buf``, ``cb.role``, unless it is a sharing
    waiter of it, whose pointer never moves), into the reserved back of
    ``into`` (``cb.fill``: ``cb-write-unreserved``). ``remote-read-unpublished`` when a page it reads is not one the
    owner published; its pages are a source until it lands (``source_reuse``: a rewrite or re-reserve by the owner's
    engines is ``async-source-reuse``); they must end by the ring's end from this engine's read pointer's slot
    (``cb-straddle``: the address does not wrap). Landing: ``read_lands``."""
    path, iters = pc
    b, owner = op.buf, it.remote_of[(op.buf, op.at)]
    cb.role(it, s, e, pc, b, False, out)
    cb.role(it, s, e, pc, op.into, True, out)
    # Read pointers are private to each RISC (circular_buffer_init.h): the consumer's moves with its pops; a sharing
    # waiter never pops, so its pointer stays at the ring's start whatever the consumer popped.
    first = (0 if (e, b) in it.share_id else s.popped[b]) + op.offset
    if (e, b) not in it.share_id:
        # the source address is get_read_ptr(buf) + offset * page_size, which nothing wraps: pages past the ring's
        # end are bytes past it, not the ring's first pages (a sharing waiter's pointer stays at the start, where
        # validate bounds offset + pages by the owner's ring)
        pt = it.page_tiles[b]
        cb.past_end(it, e, pc, b, s.popped[b], op.offset * pt, op.pages * pt, f"{op_text(op)} reads", "read", out)
    slots = it._page_slots(owner, first, op.pages)
    cap = it.caps[owner]
    stale = [j for j in slots if not published(s, owner, j, cap)]
    if stale:
        it._v(out, R.REMOTE_READ_UNPUBLISHED, e, pc,
              f"{op_text(op)} reads slot {stale[0]} of b{owner} at {op.at}, which holds no page its producer published "
              f"(pushed {s.pushed[owner]}, reserved to {max(s.rsv_end[owner], s.pushed[owner])})")
    filled = cb.fill(it, s, e, pc, op.into, op.pages * it.page_tiles[owner], op, out)
    s.pending[e] = (*s.pending[e], (READ, path, iters, (), op.into, filled, (it.root[owner], slots, owner)))
    s.rb_mask[e] |= 1 << op.into


def read_barrier(it: Interp, s: State, e: int, pc: PC, op: ReadBarrier, out: list[Violation]) -> None:
    """noc_async_read_barrier: every read of the engine has landed (the step waits for it)."""
    s.rb_mask[e] = 0


def write_barrier(it: Interp, s: State, e: int, pc: PC, op: WriteBarrier, out: list[Violation]) -> None:
    """noc_async_write_barrier: every write and multicast of the engine has landed (the step waits for its
    acknowledgements), so its writes' tiles are complete (``tensors.writes_complete``)."""
    s.wb[e] = False
    s.mc_since[e], s.sc_mask[e] = frozenset(), 0
    tensors.writes_complete(it, s, e)


def flush(it: Interp, s: State, e: int, pc: PC, op: Flush, out: list[Violation]) -> None:
    """noc_async_writes_flushed: every write and multicast of the engine has left its source (not landed: one on
    another virtual channel or to another rectangle may still land after a later flag, ``State.mc_since``)."""
    s.mc_since[e] = (frozenset() if it.one_order[e]
                     else frozenset((b, g, vc, True) for b, g, vc, _left in s.mc_since[e]))
    s.sc_mask[e] = 0


def atomic_barrier(it: Interp, s: State, e: int, pc: PC, op: AtomicBarrier, out: list[Violation]) -> None:
    """noc_async_atomic_barrier: every atomic increment of the engine has landed."""
    s.ab[e] = False


# ---------------------------------------------------------------------- when a barrier may pass


def write_acks_due(s: State, e: int) -> int:
    """The write acknowledgements engine ``e``'s in-flight ops have yet to return: one per unicast write, one per
    destination a multicast has not landed at yet."""
    return sum(1 if en[0] == WRITE else len(en[7]) for en in s.pending[e] if en[0] in (WRITE, MCAST, VALID))


def read_barrier_passes(it: Interp, s: State, e: int, pc: PC, op: ReadBarrier) -> bool:
    """Every read of the engine landed."""
    return not any(en[0] == READ for en in s.pending[e])


def write_barrier_passes(it: Interp, s: State, e: int, pc: PC, op: WriteBarrier) -> bool:
    """Every write and multicast of the engine landed everywhere; with a miscounted multicast (``State.wack``), the
    acknowledgements received equal those expected (docs/semantics.md, "Acknowledgement counts")."""
    if s.wack[e]:
        return write_acks_due(s, e) + s.wack[e] == 0
    return not any(en[0] in (WRITE, MCAST, VALID) for en in s.pending[e])


def flush_passes(it: Interp, s: State, e: int, pc: PC, op: Flush) -> bool:
    """Every write and multicast of the engine left its source."""
    return all(en[6] if en[0] >= MCAST else en[0] != WRITE for en in s.pending[e])


def atomic_barrier_passes(it: Interp, s: State, e: int, pc: PC, op: AtomicBarrier) -> bool:
    """Every increment of the engine landed, and no acknowledgement is expected beyond them (``State.aack``)."""
    return sum(1 for en in s.pending[e] if en[0] == INC) + s.aack[e] == 0


def barrier_blocked(it: Interp, s: State, e: int, pc: PC, op: ReadBarrier | WriteBarrier | AtomicBarrier) -> str:
    """What a blocked barrier waits for: its outstanding operations, or the acknowledgements a miscounted multicast
    leaves it expecting."""
    what, ks = _BARRIER_KINDS[type(op)]
    k = sum(1 for en in s.pending[e] if en[0] in ks)
    off = s.wack[e] if isinstance(op, WriteBarrier) else s.aack[e] if isinstance(op, AtomicBarrier) else 0
    if off:
        due = write_acks_due(s, e) if isinstance(op, WriteBarrier) else k
        why = (f"its multicasts' num_dests state {abs(off)} destination(s) "
               f"{'more' if off > 0 else 'fewer'} than their groups hold, and the acked counter must equal "
               "the expected count exactly")
        if due + off > 0:
            return f"expects {due + off} acknowledgement(s) but only {due} can come ({why})"
        return f"has {-(due + off)} acknowledgement(s) more than it expects ({why})"
    return f"waits for {k} outstanding {what}"


#: What each barrier waits for: its words and the in-flight kinds it counts.
_BARRIER_KINDS: dict[type, tuple[str, tuple[int, ...]]] = {
    ReadBarrier: ("read(s)", (READ,)), WriteBarrier: ("write(s)/multicast(s)", (WRITE, MCAST, VALID)),
    AtomicBarrier: ("sem_inc(s)", (INC,))}


def flush_blocked(it: Interp, s: State, e: int, pc: PC, op: Flush) -> str:
    k = sum(1 for en in s.pending[e] if (en[0] >= MCAST and not en[6]) or en[0] == WRITE)
    return f"waits for {k} write(s)/multicast(s) to leave the source"


# ---------------------------------------------------------------------- landings


def read_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """A read lands in its pages of ``into``: the tensor rule of its state tiles (``tensors.read_lands``); the bytes
    change now, so an alias's unconsumed page or an outstanding source is clobbered now."""
    issue_pc: PC = (en[1], en[2])
    tensors.read_lands(it, s, e, en, out)
    what = f"{op_text(it._ops[e][en[1]])} lands in"
    it._alias_write(s, e, issue_pc, en[4], en[5], what, out)
    if en[4] not in it.scratch:  # a scratch buffer's sources are its engine's own, decided at issue (scratch-reuse)
        source_reuse(it, s, e, issue_pc, en[4], en[5], what, out)


def write_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """A unicast write leaves its source and lands in one transition (``petri/pending.py``): nothing to check; its
    tiles count as written at the engine's WriteBarrier."""


def inline_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """A one-word write leaves and lands in one transition: a remote write of its word with its value
    (``semaphores.remote_write``: ``sem-overshoot``, ``sem-set-race``)."""
    semaphores.remote_write(it, s, en[4], en[5], e, (en[1], en[2]), out)


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {ReadTiles: read_tiles, WriteTiles: write_tiles, ReadBarrier: read_barrier,
                                            WriteBarrier: write_barrier, Flush: flush, AtomicBarrier: atomic_barrier,
                                            InlineWrite: inline_write, RemoteRead: remote_read}

#: When a step of each blocking op class is enabled ``(interp, state, engine, pc, op) -> bool`` (``Interp.can_step``).
ENABLED: dict[type, Callable[..., bool]] = {ReadBarrier: read_barrier_passes, WriteBarrier: write_barrier_passes,
                                            Flush: flush_passes, AtomicBarrier: atomic_barrier_passes}

#: What blocks a step of each blocking op class, with the counts (``Interp.block_detail``).
BLOCKED: dict[type, Callable[..., str]] = {ReadBarrier: barrier_blocked, WriteBarrier: barrier_blocked,
                                           AtomicBarrier: barrier_blocked, Flush: flush_blocked}

#: The landing of what each op class issues ``(interp, state, engine, entry, destination, violations)``.
LANDINGS: dict[type, Callable[..., Any]] = {ReadTiles: read_lands, WriteTiles: write_lands, InlineWrite: inline_lands,
                                            RemoteRead: read_lands}
