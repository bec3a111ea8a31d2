"""Several engines waiting on one circular buffer: which engines of a site share a buffer's front without popping it.

On the hardware each circular buffer has one ``tiles_received`` / ``tiles_acked`` pair per core, and every RISC of
the core reads them; the read and write pointers are private to each RISC (``LocalCBInterface``, set up per RISC by
``tt_metal/hw/inc/internal/circular_buffer_init.h``). ``cb_wait_front`` changes no state, so any number of RISCs may
wait on one buffer; only one may pop it (``tt_metal/hw/inc/api/compute/cb_api.h``, cb_pop_front: "Per circular buffer
index, only have one thread pop tiles to update the read pointer"). How a wait counts differs by engine:

- a data-movement RISC (``cb_wait_front`` in ``tt_metal/hw/inc/api/dataflow/dataflow_api.h``) reads the shared
  ``tiles_acked`` once and spins until ``received - acked >= n``: it sees the pops of whichever engine pops;
- the compute engine's unpacker (``llk_wait_tiles`` in ``tt_metal/hw/ckernels/*/metal/llk_io/llk_io_unpack.h``)
  compares ``received`` with its *own* copy of ``tiles_acked`` (``get_local_cb_interface(cb).tiles_acked``, zeroed
  at launch, advanced only by its own ``llk_pop_tiles``): it sees only its own pops.

This module names the *sharing waiters* of each buffer (docs/semantics.md, "Several engines waiting on one buffer"),
shared by the interpreter, the checker and the Promela export.
"""

from __future__ import annotations

from verispatial.ir.core import Engine
from verispatial.ir.ops import Compute, Op, Pop, Wait, WriteTiles, named_index_buffer
from verispatial.ir.program import Program, walk


def _front_uses(op: Op) -> list[tuple[int, bool]]:
    """(buffer, shareable) for each buffer ``op`` uses from the front: a Wait, a read through ``get_read_ptr`` (a
    WriteTiles source, a Compute operand, a named index buffer) is shareable; a Pop, a front multicast and a local
    copy's source are not (the copy's source tiles follow the consumer's read cursor)."""
    from verispatial.ir.ops import CopyTiles, McastSend

    if isinstance(op, Wait):
        return [(op.buf, True)]
    if isinstance(op, Pop):
        return [(op.buf, False)]
    out: list[tuple[int, bool]] = []
    if isinstance(op, WriteTiles):
        out.append((op.src, True))
    if isinstance(op, Compute):
        out += [(o.buf, True) for o in op.ins]
    if isinstance(op, McastSend) and op.front:
        out.append((op.buf, False))
    if isinstance(op, CopyTiles):
        out.append((op.src, False))
    named = named_index_buffer(op)
    if named is not None:
        out.append((named, True))
    return out


#: The last program asked and its answer, held by identity (a frozen program): the checker asks once per family of
#: the same program (six walks of every op of a 192-engine slice), one entry so no finished slice is kept alive.
_LAST: list[tuple[Program, dict[int, frozenset[str]]]] = []


def sharing_waiters(p: Program) -> dict[int, frozenset[str]]:
    """Per buffer, the keys of the engines that share its front without popping it: an engine of the buffer's site
    whose program waits on the buffer, never pops it and uses it from the front only through waits and reads (no
    front multicast), when another engine of the site also waits on or pops it. Buffers with none have no entry.

    Every other engine using the buffer's front is its *consumer* (at most one: ``cb-single-consumer``). The dict is
    shared by every caller asking of the same program: read, never changed."""
    if _LAST and _LAST[0][0] is p:
        return _LAST[0][1]
    out = _sharing_waiters(p)
    _LAST[:] = [(p, out)]
    return out


def _sharing_waiters(p: Program) -> dict[int, frozenset[str]]:
    waits: dict[int, set[str]] = {}
    other: dict[int, set[str]] = {}  # engines with a front use that cannot be shared (a pop, a front multicast)
    users: dict[int, set[str]] = {}
    for ep in p.programs:
        for op in walk(ep.ops):
            for b, shareable in _front_uses(op):
                if not 0 <= b < len(p.buffers) or p.buffers[b].site != ep.site:
                    continue
                users.setdefault(b, set()).add(ep.key)
                if isinstance(op, Wait):
                    waits.setdefault(b, set()).add(ep.key)
                if not shareable:
                    other.setdefault(b, set()).add(ep.key)
    out: dict[int, frozenset[str]] = {}
    for b, ws in waits.items():
        sharing = {k for k in ws if k not in other.get(b, set())}
        poppers = users.get(b, set()) - sharing
        if not poppers:
            # Nobody pops: the first waiter (by key) is the consumer, the others share it.
            first = min(sharing)
            sharing.discard(first)
        if sharing:
            out[b] = frozenset(sharing)
    return out


def sees_own_pops_only(engine: Engine) -> bool:
    """Whether ``engine``'s waits compare ``tiles_received`` with its own pops (the compute engine's unpacker,
    ``llk_wait_tiles``) rather than with the shared ``tiles_acked`` word (a data-movement RISC's ``cb_wait_front``)."""
    return engine is Engine.COMPUTE
