"""The accumulator (DST) in the reference interpreter: the handlers of AcquireAcc, ReleaseAcc, Compute and PackAcc.

``s.acc[e]``: the tiles engine ``e``'s held acquire took, 0 when none is held. Each handler takes the interpreter,
the state it changes, the engine index ``e``, its program counter ``pc``, the op and the list violations are
appended to (docs/semantics.md, "Accumulator"; reg_api.h tile_regs_acquire .. tile_regs_release, dest_helpers.hpp
get_dest_limit())."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import semantics as cb
from verispatial.families.cb.shared_semantics import shared_read
from verispatial.ir import rules as R
from verispatial.ir.ops import AcquireAcc, Compute, Op, PackAcc, ReleaseAcc, op_text

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State
    from verispatial.petri.position import Violation


def held(it: Interp, s: State, e: int, pc: PC, op: Op, out: list[Violation]) -> None:
    """``acc-unacquired``: Compute and PackAcc run inside tile_regs_acquire .. tile_regs_release (reg_api.h); an
    acquire while one is held, or a release with none held, breaks the pairing. ``acc-overrun``: a Compute or PackAcc
    of more tiles than the held acquire took uses DST tiles past it (DST indices past the acquired section are the
    other half's, or past get_dest_limit: reg_api.h, dest_helpers.hpp)."""
    took = s.acc[e]
    if isinstance(op, AcquireAcc):
        if took:
            it._v(out, R.ACC_UNACQUIRED, e, pc, f"{op_text(op)} while this engine already holds an accumulator")
        s.acc[e] = op.tiles
    elif isinstance(op, ReleaseAcc):
        if not took:
            it._v(out, R.ACC_UNACQUIRED, e, pc, "release_acc() with no accumulator acquired")
        s.acc[e] = 0
    elif not took:
        it._v(out, R.ACC_UNACQUIRED, e, pc, f"{op_text(op)} with no accumulator acquired (no acquire_acc before it)")
    elif isinstance(op, (Compute, PackAcc)) and op.tiles > took:
        it._v(out, R.ACC_OVERRUN, e, pc, f"{op_text(op)} uses {op.tiles} accumulator tiles, but the held "
                                         f"acquire took {took}")


def acquire(it: Interp, s: State, e: int, pc: PC, op: AcquireAcc, out: list[Violation]) -> None:
    """tile_regs_acquire: ``acc-capacity`` when it takes more tiles than the target's accumulator holds at its
    precision."""
    held(it, s, e, pc, op, out)
    cap = it.program.target.acc_capacity(op.dtype)
    if op.tiles > cap:
        it._v(out, R.ACC_CAPACITY, e, pc,
              f"{op_text(op)} takes {op.tiles} {op.dtype} tiles; {it.program.target.name}'s accumulator "
              f"holds {cap} at that precision")


def release(it: Interp, s: State, e: int, pc: PC, op: ReleaseAcc, out: list[Violation]) -> None:
    """tile_regs_release."""
    held(it, s, e, pc, op, out)


def compute(it: Interp, s: State, e: int, pc: PC, op: Compute, out: list[Violation]) -> None:
    """Math into the held accumulator, unpacking its operand pages from the front of their buffers (the waited
    window: ``cb-read-unwaited``; a sharing waiter's operands from its own window, ``shared_read``), and its pages
    read in place from published bytes (``cb-read-unpublished``)."""
    held(it, s, e, pc, op, out)
    for o in op.ins:
        if shared_read(it, s, e, pc, op, o.buf, 0, o.pages * it.page_tiles[o.buf], out):
            continue
        cb.role(it, s, e, pc, o.buf, False, out)
        cb.waited(it, s, e, pc, o.buf, o.pages, f"{op_text(op)} unpacks", out)
        cb.unpack_in_ring(it, s, e, pc, op, o.buf, o.pages, out)
    for r in op.in_place:
        cb.read_in_place(it, s, e, pc, op, r, out)


def pack(it: Interp, s: State, e: int, pc: PC, op: PackAcc, out: list[Violation]) -> None:
    """pack_tile: the held accumulator's tiles into the reserved back of a buffer (``cb-write-unreserved``), which
    rewrites its bytes (``alias-clobber``, ``async-source-reuse``)."""
    held(it, s, e, pc, op, out)
    cb.role(it, s, e, pc, op.buf, True, out)
    slots = cb.fill(it, s, e, pc, op.buf, op.tiles, op, out)
    it._alias_write(s, e, pc, op.buf, slots, f"{op_text(op)} writes", out)
    it._source_reuse(s, e, pc, op.buf, slots, f"{op_text(op)} rewrites", out)


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {AcquireAcc: acquire, ReleaseAcc: release, Compute: compute, PackAcc: pack}
