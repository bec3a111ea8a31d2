"""Flattened view of engine programs: every leaf op with its loop context, in program order.

A *leaf* is a non-loop op. Leaves of one engine are numbered densely in pre-order; this number is what the
symbolic encodings select a position by. Loops are identified by their path.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from verispatial.ir.ops import If, Loop, McastSend, McastSetValid, Op, Pop, Push, Reserve, SemIncMcast, SemWait, TripCount, Wait
from verispatial.ir.program import EngineProgram, Program


@attrs.frozen
class LoopCtx:
    """An enclosing loop: its path in the engine program, index variable and count (int or trip name)."""

    path: tuple[int, ...]
    var: str
    count: int | str | TripCount


@attrs.frozen
class Leaf:
    """A non-loop op of engine ``engine`` at ``path``; ``index`` is its pre-order number on that engine;
    ``loops`` its enclosing loops, outer first; ``section`` the section of its top-level op."""

    engine: str
    index: int
    path: tuple[int, ...]
    op: Op
    loops: tuple[LoopCtx, ...]
    section: int


@attrs.frozen
class EngineView:
    """One engine program flattened: ``leaves`` in program order and every loop of it."""

    key: str
    program: EngineProgram
    leaves: tuple[Leaf, ...]
    loops: tuple[LoopCtx, ...]

    @property
    def finished(self) -> int:
        """The position number meaning "ran to the end" (one past the last leaf)."""
        return len(self.leaves)


def _flatten(ep: EngineProgram) -> tuple[list[Leaf], list[LoopCtx]]:
    leaves: list[Leaf] = []
    loops: list[LoopCtx] = []
    key = ep.key
    # The section of each top-level op (``EngineProgram.section_of``), in one pass.
    top_section = [0] * len(ep.ops)
    k = 0
    starts = ep.section_starts
    for i in range(len(ep.ops)):
        while k + 1 < len(starts) and i >= starts[k + 1]:
            k += 1
        top_section[i] = k

    def go(ops: tuple[Op, ...], prefix: tuple[int, ...], ctx: tuple[LoopCtx, ...], section: int | None) -> None:
        for i, op in enumerate(ops):
            path = (*prefix, i)
            sec = top_section[i] if section is None else section
            if isinstance(op, Loop):
                lc = LoopCtx(path, op.var, op.count)
                loops.append(lc)
                go(op.body, path, (*ctx, lc), sec)
            else:
                leaves.append(Leaf(key, len(leaves), path, op, ctx, sec))

    go(ep.ops, (), (), None)
    return leaves, loops


def unsupported_features(p: Program) -> list[str]:
    """Constructs of the op semantics the checker does not decide yet; a program using one is answered
    failed-to-prove for every obligation (fail closed: never a proof of an unmodelled construct)."""
    found: dict[str, None] = {}
    from verispatial.ir.program import walk

    for ep in p.programs:
        for op in walk(ep.ops):
            if isinstance(op, If):
                found["if (guarded iterations)"] = None
            elif isinstance(op, Loop) and isinstance(op.count, TripCount):
                found["loop count affine in a trip"] = None
            elif isinstance(op, SemWait) and op.terms:
                found["semaphore wait threshold growing with a loop index"] = None
            elif isinstance(op, SemIncMcast):
                found["sem_inc_mcast"] = None
            elif isinstance(op, McastSetValid) and op.src is not None and op.src != op.sem:
                found["flag multicast from another word"] = None
            elif isinstance(op, McastSend) and op.front:
                found["multicast from a buffer's front"] = None
    return list(found)


def engine_views(p: Program) -> dict[str, EngineView]:
    """Every engine program of ``p`` flattened, keyed by ``EngineProgram.key``."""
    out: dict[str, EngineView] = {}
    for ep in p.programs:
        leaves, loops = _flatten(ep)
        out[ep.key] = EngineView(ep.key, ep, tuple(leaves), tuple(loops))
    return out


def all_leaves(views: dict[str, EngineView]) -> Iterator[Leaf]:
    for v in views.values():
        yield from v.leaves


def pages(op: Op) -> int:
    """Pages moved or awaited by a circular-buffer op; ``TypeError`` for any other op."""
    if isinstance(op, (Reserve, Push, Wait, Pop)):
        return op.pages
    raise TypeError(f"{type(op).__name__} moves no pages")


def op_at(ep: EngineProgram, path: tuple[int, ...]) -> Op:
    """The op at ``path`` of ``ep`` (raises IndexError for a bad path)."""
    ops = ep.ops
    op: Op | None = None
    for i in path:
        op = ops[i]
        ops = op.body if isinstance(op, Loop) else ()
    assert op is not None
    return op
