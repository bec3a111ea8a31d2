"""Scratch buffers in the reference interpreter: ``ScratchAccess`` and what a ``ReadTiles`` into or a ``WriteTiles``
from a scratch buffer checks (``families/noc/semantics.py`` calls ``read_into`` and ``write_from`` for those).

A scratch buffer is private L1 of one data-movement engine (``Buffer.scratch``; ``validate``: no other engine and
no circular-buffer op names it), so both rules are decided in the engine's program order, from its own barriers —
what the kernel itself can know — and not from when the NoC happens to land or leave:

- ``scratch-unlanded``: the engine loads, stores, reads into again or writes from the buffer while a read of its own
  into it has no ReadBarrier since (``State.rb_mask``: ``noc_async_read`` returns at issue and the data is in L1
  only after ``noc_async_read_barrier``, tt_metal/hw/inc/dataflow_api.h; argmax reads, barriers, then loads:
  ``reader_argmax_interleaved_multicore.cpp:68-74, 85`` in ttnn 0.81.1);
  and a write from it of bytes the engine stored with no drain since is one too (``State.st_mask``, as for
  ``FillTiles``: a store retires before it lands in L1, and the NoC is another L1 client, ttnn
  ``data_movement/common/kernels/common.hpp:91-96``);
- ``scratch-reuse``: the engine stores into, or reads into, the buffer while a write of its own from it has no Flush
  or WriteBarrier since (``State.sc_mask``: the NoC reads a write's source after issue, until it left:
  ``noc_async_writes_flushed``, dataflow_api.h).

Decided per buffer, not per byte: every op of the family uses the whole buffer (its pages are not counted), so a
load of bytes a barrier covered is still reported while another read into the same buffer is outstanding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.ir import rules as R
from verispatial.ir.ops import Op, ScratchAccess, op_text
from verispatial.petri.position import Violation

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State


def _unlanded(it: Interp, s: State, e: int, pc: PC, b: int, what: str, out: list[Violation]) -> None:
    if s.rb_mask[e] >> b & 1:
        it._v(out, R.SCRATCH_UNLANDED, e, pc,
              f"{what} scratch b{b} while this engine's read_tiles into it has no read_barrier since (the read "
              "may not have landed)")


def _reuse(it: Interp, s: State, e: int, pc: PC, b: int, what: str, out: list[Violation]) -> None:
    if s.sc_mask[e] >> b & 1:
        it._v(out, R.SCRATCH_REUSE, e, pc,
              f"{what} scratch b{b} while this engine's write_tiles from it has no flush/write_barrier since (the "
              "write may still be reading it)")


def slots(it: Interp, b: int) -> tuple[int, ...]:
    """Every ring slot of scratch buffer ``b``: each op of the family uses the whole buffer."""
    return it._page_slots(b, 0, it.caps[b])


def read_into(it: Interp, s: State, e: int, pc: PC, op: Op, b: int, out: list[Violation]) -> tuple[int, ...]:
    """A NoC read into scratch ``b`` is issued: its bytes must not be in flight either way (``scratch-unlanded``: two
    reads into the same bytes land in either order; ``scratch-reuse``). Returns the slots it lands in."""
    _unlanded(it, s, e, pc, b, f"{op_text(op)} reads into", out)
    _reuse(it, s, e, pc, b, f"{op_text(op)} reads into", out)
    if s.st_mask[e] >> b & 1:
        it._v(out, R.SCRATCH_REUSE, e, pc,
              f"{op_text(op)} reads into scratch b{b}, which this engine stored into with no drain since (a retired "
              "store may land after the read)")
    return slots(it, b)


def write_from(it: Interp, s: State, e: int, pc: PC, op: Op, b: int, out: list[Violation]) -> tuple[int, ...]:
    """A NoC write from scratch ``b`` is issued: what it sends must have landed (``scratch-unlanded``); the bytes are
    its source until a Flush or WriteBarrier of the engine (``State.sc_mask``). Returns the slots it reads."""
    _unlanded(it, s, e, pc, b, f"{op_text(op)} sends", out)
    if s.st_mask[e] >> b & 1:
        it._v(out, R.SCRATCH_UNLANDED, e, pc,
              f"{op_text(op)} sends scratch b{b}, which this engine stored into with no drain since (a retired store "
              "may not have landed in L1 for the NoC)")
    s.sc_mask[e] |= 1 << b
    return slots(it, b)


def scratch_access(it: Interp, s: State, e: int, pc: PC, op: ScratchAccess, out: list[Violation]) -> None:
    """Loads or stores of the engine's own scratch bytes (``ScratchAccess``): complete for this engine when the op is
    (plain RISC-V loads and stores of its L1, retired in program order); stores land for the NoC at a drain."""
    verb = "stores into" if op.store else "loads"
    _unlanded(it, s, e, pc, op.buf, f"{op_text(op)} {verb}", out)
    if op.store:
        _reuse(it, s, e, pc, op.buf, f"{op_text(op)} {verb}", out)
        s.st_mask[e] = 0 if op.drain else s.st_mask[e] | 1 << op.buf


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {ScratchAccess: scratch_access}
