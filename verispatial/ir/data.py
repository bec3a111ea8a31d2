"""Data buffers: the buffers whose pushes publish data rather than tokens — the one definition the interpreter
(``cb-push-unfilled`` at the push, ``petri/interp.py``), the checker's per-engine rules (``certify/rules.py``) and
the Promela export's assertion (``families/cb/promela.py``) share, as ``ir/boundaries.py`` is shared.

A buffer is a data buffer when some op reads its pages: a ``WriteTiles`` source, a ``Compute`` operand, a
``CopyTiles`` source, a multicast source, the index buffer of an indirect address (``Dynamic.buf``, or the one ``Program.index_buffers``
derives), or the owner's buffer a ``RemoteRead`` takes pages from. Its pushes must publish pages that were written
(``cb-push-unfilled``). A buffer nothing reads is a synchronisation channel whose pushes publish tokens only. A
sharded buffer's pages are its tensor's bytes (``ir/shards.py``): one its producer writes into publishes what it
wrote, so it is a data buffer; one it never writes (a read shard) publishes the tensor's tiles as they are, so it is
not, whoever reads it.
"""

from __future__ import annotations

from verispatial.ir.ops import Compute, CopyTiles, McastSend, RemoteRead, WriteTiles, named_index_buffer
from verispatial.ir.program import IndexKey, Program, walk
from verispatial.ir.shards import sharded, written_shards


def data_buffers(p: Program, index_bufs: dict[IndexKey, int] | None = None) -> frozenset[int]:
    """The ids of the data buffers of ``p`` (module docstring). ``index_bufs``: ``p.index_buffers()`` when the caller
    has it (it walks every engine program). Linear in the ops."""
    written = written_shards(p)
    read_shards = set(sharded(p)) - written
    out: set[int] = set(written)
    for ep in p.programs:
        for op in walk(ep.ops):
            named = named_index_buffer(op)
            if named is not None:
                out.add(named)
            if isinstance(op, WriteTiles):
                out.add(op.src)
            elif isinstance(op, Compute):
                out.update(o.buf for o in op.ins)
                out.update(r.buf for r in op.in_place)  # read by index: its pushes must be filled too
            elif isinstance(op, CopyTiles):
                out.add(op.src)  # its loads read data the pushes published
            elif isinstance(op, McastSend):
                out.add(op.buf)
            elif isinstance(op, RemoteRead):
                owner = p.remote_buffer(op.buf, op.at)
                if owner is not None:
                    out.add(owner)  # its pages are read at the owner's site
    return frozenset((out | set((p.index_buffers() if index_bufs is None else index_bufs).values())) - read_shards)
