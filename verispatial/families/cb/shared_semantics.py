"""Several engines waiting on one circular buffer, in the reference interpreter (docs/semantics.md, "Several engines
waiting on one buffer"; which engines share a buffer's front: ``verispatial/ir/sharing.py``).

A sharing waiter waits on a buffer and reads its front without popping it: its read pointer never moves, so it reads
ring slots counted from slot 0, inside its own waited window ``[0, share_end)`` (``State.share_end``). What its wait
compares differs by engine: a data-movement RISC's ``cb_wait_front`` (``dataflow_api.h``) reads the shared
``tiles_acked``; the compute engine's ``llk_wait_tiles`` (``llk_io_unpack.h``) its own pops, none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.ir import rules as R
from verispatial.ir.ops import Op, Wait, op_text
from verispatial.petri.position import Violation, path_text

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State


def acked_seen(it: Interp, s: State, e: int, b: int) -> int:
    """The acked count engine ``e``'s Wait on ``b`` compares ``pushed`` with: the shared word (``popped``), except
    for a compute sharing waiter, whose unpacker counts its own pops only — none (``llk_wait_tiles``). A
    data-movement wait reads the shared word once on entry; the interpreter evaluates it with the current value, the
    schedule in which the waiter entered last (``pop_under_shared_wait`` reports the other)."""
    if it.own_pops_only[e] and (e, b) in it.share_id:
        return 0
    return s.popped[b]


def shared_read(it: Interp, s: State, e: int, pc: PC, op: Op, b: int, first_tile: int, tiles: int,
                out: list[Violation]) -> bool:
    """``cb-read-unwaited`` for a sharing waiter ``e`` of ``b`` reading tiles ``[first_tile, first_tile + tiles)``
    from its own read pointer (which never moves: it does not pop): they must lie in its own waited window
    ``[0, share_end)`` and in ring slots that hold a live page, one pushed and not yet popped by the consumer (a slot
    the consumer freed holds a page the producer may rewrite). False when ``e`` is not a sharing waiter of ``b``."""
    i = it.share_id.get((e, b))
    if i is None:
        return False
    pt, cap = it.page_tiles[b], it.caps[b]
    if first_tile + tiles > s.share_end[i] * pt:
        it._v(out, R.CB_READ_UNWAITED, e, pc,
              f"{op_text(op)} reads tiles [{first_tile}, {first_tile + tiles}) of b{b} from this engine's read "
              f"pointer, but its waited window holds {s.share_end[i] * pt} tiles")
        return True
    live = s.pushed[b] - s.popped[b]
    for page in range(first_tile // pt, -(-(first_tile + tiles) // pt)):
        slot = page % cap
        if (slot - s.popped[b]) % cap >= live:
            it._v(out, R.CB_READ_UNWAITED, e, pc,
                  f"{op_text(op)} reads ring slot {slot} of b{b}, which holds no live page: pushed-popped="
                  f"{s.pushed[b]}-{s.popped[b]} (its consumer popped it; this engine waited on b{b} without popping, "
                  "so its read pointer still points there)")
            break
    return True


def shared_wait(it: Interp, s: State, e: int, op: Wait) -> bool:
    """A sharing waiter's Wait: its window grows to ``pages`` from its own read pointer (page 0). False when ``e``
    is not a sharing waiter of the buffer (its Wait is the consumer's)."""
    i = it.share_id.get((e, op.buf))
    if i is None:
        return False
    s.share_end[i] = max(s.share_end[i], op.pages)
    return True


def pop_under_shared_wait(it: Interp, s: State, e: int, pc: PC, b: int, n: int, out: list[Violation]) -> None:
    """``cb-read-unwaited`` at the Wait of a data-movement sharing waiter of ``b`` blocked there while ``e`` pops
    ``b``: its cb_wait_front read tiles_acked once on entry (``dataflow_api.h``), before this pop, so it may return
    once ``pushed`` reaches what it read plus its count — a window that counts the pages this pop frees."""
    for (w, x) in it.share_id:
        wpc = s.pcs[w]
        if x != b or w == e or it.own_pops_only[w] or wpc is None:
            continue
        op = it._ops[w][wpc[0]]
        if isinstance(op, Wait) and op.buf == b and not it.can_step(s, w):
            it._v(out, R.CB_READ_UNWAITED, w, wpc,
                  f"{op_text(op)} may have read tiles_acked={s.popped[b]} on entry before {it.keys[e]}'s "
                  f"pop(b{b}, {n}) at {path_text(pc[0])}: it then returns counting the pages that pop frees")
