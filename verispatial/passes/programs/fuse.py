"""Merging two data-movement programs onto one engine, and the loop fusion that keeps the merge live.

An engine program is serial. When a site's loads and stores run on ONE data-movement engine, emitting the reader's
loop nest and then the writer's runs the first to completion before the second starts: the loads fill the operand
buffer, the compute fills the output buffer behind it, and the store that would drain the output has not begun —
at depth two the pair deadlocks against each other. Interleaving the two nests per iteration (software pipelining,
the same move that keeps a fused compute chain live at depth two) is what makes bounded buffers sufficient.

Two adjacent loops fuse only when they run over the same index space (same variable, same constant or trip count)
and the later one does not drain a buffer the earlier one fills: that hand-off is a real dependence inside the
engine, and interleaving it would change which iteration waits on which (the seed's rule, kept as it states it).
"""

from __future__ import annotations

from collections.abc import Sequence

from verispatial.ir.ops import AtomicBarrier, Loop, Op, Pop, Push, Reserve, Wait, WriteBarrier


def touches(ops: Sequence[Op]) -> tuple[set[int], set[int]]:
    """(buffers ``ops`` fill — Reserve/Push —, buffers they drain — Wait/Pop), through nested loops."""
    fills: set[int] = set()
    drains: set[int] = set()
    for op in ops:
        if isinstance(op, Reserve | Push):
            fills.add(op.buf)
        elif isinstance(op, Wait | Pop):
            drains.add(op.buf)
        elif isinstance(op, Loop):
            f, d = touches(op.body)
            fills |= f
            drains |= d
    return fills, drains


def fuse_adjacent_loops(first: Sequence[Op], second: Sequence[Op]) -> tuple[Op, ...]:
    """``first`` then ``second`` as one program, a loop of ``second`` interleaved with the loop of ``first`` right
    before it wherever they meet, at every nesting level where they match.

    Two loops fuse only when they are adjacent, come one from each program, have the same ``var`` and ``count``, and
    the later drains no buffer the earlier fills. Loops of one program never fuse with each other: their order is
    that program's own order, which the compute relies on (a fold's body loads all come before its apply loads).
    Every buffer sees the same ops in the same order as before; only the interleaving between buffers changes."""
    return tuple(op for _, op in _fuse([(0, o) for o in first] + [(1, o) for o in second]))


#: Origin of an op in a merged program: 0 the first program, 1 the second, 2 a loop fused from both.
_Tagged = tuple[int, Op]


def _fuse(items: list[_Tagged]) -> list[_Tagged]:
    out: list[_Tagged] = []
    for origin, op in items:
        if out:
            p_origin, prev = out[-1]
            if (isinstance(prev, Loop) and isinstance(op, Loop) and {p_origin, origin} == {0, 1}
                    and prev.var == op.var and prev.count == op.count and not touches(prev.body)[0] & touches(op.body)[1]):
                body = _fuse([(p_origin, o) for o in prev.body] + [(origin, o) for o in op.body])
                out[-1] = (2, Loop(prev.var, prev.count, tuple(o for _, o in body)))
                continue
        out.append((origin, op))
    return out


def merge_movers(reader: Sequence[Op], writer: Sequence[Op], fuse: bool = True) -> tuple[Op, ...]:
    """One data-movement program doing the reader's and the writer's work.

    The reader's closing barriers (write barrier, atomic barrier: no NoC transaction outstanding at the end) move to
    the very end so they close the writer's transactions too; then, with ``fuse``, the writer's loop nests interleave
    with the reader's (``fuse=False`` is the naive concatenation, kept to show that it deadlocks)."""
    body = list(reader)
    closing: list[Op] = []
    while body and isinstance(body[-1], WriteBarrier | AtomicBarrier):
        closing.insert(0, body.pop())
    merged = fuse_adjacent_loops(body, writer) if fuse else (*body, *writer)
    return (*merged, *closing)
