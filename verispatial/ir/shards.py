"""Sharded (globally allocated) circular buffers: which tensor tiles a sharded buffer's pages are, and whether its
pushes publish the tensor's tiles or write them (docs/semantics.md "Sharded buffers"). One definition the interpreter
(``families/cb/shard_semantics.py``), the checker (``families/cb/shard_encoding.py``), ``validate`` and the memory
obligation share.

A sharded buffer's ring starts at the tensor shard's first byte at every launch (``fifo_wr_ptr`` / ``fifo_rd_ptr`` :=
the buffer's address: ttnn 0.81.1 ``tt_metal/hw/inc/internal/circular_buffer_init.h:54-59``), so ring slot ``k`` is
the same bytes of the tensor in every lap: page ``k`` (``0 <= k < shard_pages``) holds the buffer's tiles
``[k * page_tiles, (k + 1) * page_tiles)``, which are the tensor tiles ``Shard.tile`` gives. A push of a page past
``shard_pages`` (a lap past the ring's end, or a ring larger than its shard) is ``cb-shard-overrun``.

- A **read shard** is one whose producer never writes into its back (no ``ReadTiles`` into it, no ``FillTiles`` or ``CopyTiles``, no
  ``PackAcc``): its producer only reserves and pushes, as eltwise binary's reader does under ``IN0_SHARDED``
  (``reader_binary_interleaved_start_id.cpp:46-48``). Each push publishes the tensor's tiles as they are: it is a read
  of those tiles, complete at once (no NoC transfer, no barrier).
- A **write shard** is one whose producer writes into its back (compute packs into a sharded output: the writer under
  ``OUT_SHARDED`` only waits and pops, ``writer_unary_interleaved_start_id.cpp:32-36``). Its tiles change from the
  producer's first write into a page (the write is issued then) and the push that publishes the page completes the
  write (the packer's ``cb_push_back`` raises ``tiles_received`` once its packs are done).
"""

from __future__ import annotations

from verispatial.ir.core import Role
from verispatial.ir.ids import op_ids
from verispatial.ir.ops import ID_BUFFER, Compute, CopyTiles, FillTiles, McastSend, PackAcc, ReadTiles
from verispatial.ir.program import Buffer, Program, shard_pages, walk


def shard_tiles(b: Buffer, first_page: int, pages: int) -> list[int]:
    """The tensor tiles of pages ``[first_page, first_page + pages)`` of sharded buffer ``b``, each page taken at its
    ring slot (``page mod capacity``: the bytes the page occupies), in order; a slot past the shard
    (``shard_pages``) holds no tile of the tensor and adds none. ``ValueError`` for a buffer with no shard."""
    return page_tiles_of(b, first_page * b.page_tiles, pages * b.page_tiles)


def page_tiles_of(b: Buffer, first: int, tiles: int) -> list[int]:
    """The tensor tiles of the buffer's tiles ``[first, first + tiles)`` (counted from its first page over every lap:
    tile ``j`` is in ring slot ``(j // page_tiles) mod capacity``), in order, those of slots past the shard left out.
    ``ValueError`` for a buffer with no shard."""
    if b.shard is None:
        raise ValueError(f"b{b.id} ({b.name}) is not sharded")
    on, ring = shard_pages(b), b.capacity * b.page_tiles
    out: list[int] = []
    for j in range(first, first + tiles):
        slot = j % ring
        if slot // b.page_tiles < on:
            out.append(b.shard.tile(slot))
    return out


def written_shards(p: Program) -> frozenset[int]:
    """The sharded buffers some op writes into (``ReadTiles`` into it, ``FillTiles``, ``CopyTiles``, ``PackAcc``): their pushes write
    the tensor's tiles. Every other sharded buffer is a read shard (its pushes publish the tensor's tiles)."""
    sharded = {b.id for b in p.buffers if b.shard is not None}
    if not sharded:
        return frozenset()
    out: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            cls = type(op)  # by class first (a set lookup): most ops write no buffer
            if cls in _WRITES_INTO and op.into in sharded:  # type: ignore[union-attr]
                out.add(op.into)  # type: ignore[union-attr]
            elif cls is PackAcc and op.buf in sharded:  # type: ignore[union-attr]
                out.add(op.buf)  # type: ignore[union-attr]
    return frozenset(out)


#: The op classes that write into the buffer ``into`` names (``written_shards``).
_WRITES_INTO = frozenset((ReadTiles, FillTiles, CopyTiles))


def sharded(p: Program) -> dict[int, Buffer]:
    """Every sharded buffer of ``p``, by id."""
    return {b.id: b for b in p.buffers if b.shard is not None}


def resident_shards(p: Program) -> frozenset[int]:
    """The *resident* input shards of ``p``: buffers globally allocated on a shard of an ``INPUT`` tensor that no op
    names except as an ``InPlace`` read (no reserve, push, wait, pop, fill, landing or front read of any engine), that
    no multicast lands on (no ``McastSend`` names a buffer of its cb index) and that no alias shares. Their pages hold
    the tensor's bytes from launch to end (``circular_buffer_init.h:54-59``: the ring starts at the shard; nothing
    writes it), so a read in place of page ``k`` is published exactly when ``0 <= k < shard_pages`` — the layernorm's
    ``in0`` without ``FUSE_PRE_ADD`` (``layernorm_sharded.cpp:373-375`` in ttnn 0.81.1: "nothing ever pushes it, so
    it is read by index and never popped"). docs/semantics.md "Reads in place"."""
    inputs = {t.name for t in p.tensors if t.role == Role.INPUT}
    cands = {b.id for b in p.buffers if b.shard is not None and b.shard.tensor in inputs and b.alias_of is None}
    cands -= {b.alias_of for b in p.buffers if b.alias_of is not None}
    if not cands:
        return frozenset()
    landed: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            if isinstance(op, Compute):
                named = [o.buf for o in op.ins]
            else:
                named = [v for kind, v in op_ids(op) if kind == ID_BUFFER]
            cands -= set(named)
            if isinstance(op, McastSend):
                landed |= {p.buffers[x].cb for x in (op.buf, op.dst) if x is not None and 0 <= x < len(p.buffers)}
    return frozenset(b for b in cands if p.buffers[b].cb not in landed)
