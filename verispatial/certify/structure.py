"""Flattened view of engine programs: every leaf op with its loop context, in program order.

A *leaf* is a non-loop op. Leaves of one engine are numbered densely in pre-order; this number is what the
symbolic encodings select a position by. Loops are identified by their path.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from verispatial.ir.core import Guard
from verispatial.ir.ops import If, Loop, Op, Pop, Push, Reserve, TripCount, Wait
from verispatial.ir.program import EngineProgram, Program


@attrs.frozen
class LoopCtx:
    """An enclosing loop: its path in the engine program, index variable and count (int, trip name or
    ``TripCount``)."""

    path: tuple[int, ...]
    var: str
    count: int | str | TripCount


@attrs.frozen
class IfCtx:
    """An enclosing ``If``: its path, the guard ``when`` and the path of the loop whose index it tests (the
    innermost enclosing loop named ``var``; validation refuses shadowed loop variables, so it is unique)."""

    path: tuple[int, ...]
    var: str
    when: Guard
    loop: tuple[int, ...]


Ctx = LoopCtx | IfCtx


@attrs.frozen
class Leaf:
    """A non-container op of engine ``engine`` at ``path``; ``index`` is its pre-order number on that engine;
    ``containers`` its enclosing loops and ifs, outer first; ``section`` the section of its top-level op.

    ``loops`` are the enclosing loops alone (one index each: an occurrence of the leaf is a vector over them);
    ``guards`` the enclosing ifs. Two leaves are in the same body (run together in every iteration) exactly when
    their ``containers`` are equal."""

    engine: str
    index: int
    path: tuple[int, ...]
    op: Op
    containers: tuple[Ctx, ...]
    section: int

    @property
    def loops(self) -> tuple[LoopCtx, ...]:
        return tuple(c for c in self.containers if isinstance(c, LoopCtx))

    @property
    def guards(self) -> tuple[IfCtx, ...]:
        return tuple(c for c in self.containers if isinstance(c, IfCtx))

    def guards_on(self, lc: LoopCtx) -> frozenset[Guard]:
        """The guards of the enclosing ifs that test loop ``lc``'s index."""
        return frozenset(g.when for g in self.containers if isinstance(g, IfCtx) and g.loop == lc.path)

    def iteration(self, idx: dict[tuple[int, ...], int]) -> tuple[tuple[str, int], ...]:
        """The interpreter's iteration vector (``petri.position.Position``) of the occurrence with loop indices
        ``idx`` (by loop path): one entry per container, ``("", 0)`` for an ``If``."""
        return tuple((c.var, idx[c.path]) if isinstance(c, LoopCtx) else ("", 0) for c in self.containers)


@attrs.frozen
class EngineView:
    """One engine program flattened: ``leaves`` in program order, every loop and every ``If`` of it."""

    key: str
    program: EngineProgram
    leaves: tuple[Leaf, ...]
    loops: tuple[LoopCtx, ...]
    ifs: tuple[IfCtx, ...] = ()

    @property
    def finished(self) -> int:
        """The position number meaning "ran to the end" (one past the last leaf)."""
        return len(self.leaves)


def _flatten(ep: EngineProgram) -> tuple[list[Leaf], list[LoopCtx], list[IfCtx]]:
    leaves: list[Leaf] = []
    loops: list[LoopCtx] = []
    ifs: list[IfCtx] = []
    key = ep.key
    # The section of each top-level op (``EngineProgram.section_of``), in one pass.
    top_section = [0] * len(ep.ops)
    k = 0
    starts = ep.section_starts
    for i in range(len(ep.ops)):
        while k + 1 < len(starts) and i >= starts[k + 1]:
            k += 1
        top_section[i] = k

    def go(ops: tuple[Op, ...], prefix: tuple[int, ...], ctx: tuple[Ctx, ...], section: int | None) -> None:
        for i, op in enumerate(ops):
            path = (*prefix, i)
            sec = top_section[i] if section is None else section
            if isinstance(op, Loop):
                lc = LoopCtx(path, op.var, op.count)
                loops.append(lc)
                go(op.body, path, (*ctx, lc), sec)
            elif isinstance(op, If):
                tested = next(c for c in reversed(ctx) if isinstance(c, LoopCtx) and c.var == op.var)
                ic = IfCtx(path, op.var, op.when, tested.path)
                ifs.append(ic)
                go(op.body, path, (*ctx, ic), sec)
            else:
                leaves.append(Leaf(key, len(leaves), path, op, ctx, sec))

    go(ep.ops, (), (), None)
    return leaves, loops, ifs


def unsupported_features(p: Program) -> list[str]:
    """Constructs of the op semantics the checker does not decide yet; a program using one is answered
    failed-to-prove for every obligation (fail closed: never a proof of an unmodelled construct).

    None today: the last one, a multicast from a buffer's front (a forwarder), is decided by the obligations that
    concern it — ``mcast-slot`` (the read pointer against each receiver's write pointer), ``mcast-publish``,
    ``cb-read-unwaited`` (inside the waited window), ``async-read-publish``, ``async-source-reuse`` at the Pop and at
    the producer's reserves and fills a premature pop lets through (``noc.encoding.reuse_consequences``), and the flag
    word's exactness. A construct added to the IR before the checker decides it is listed here."""
    del p
    return []


def engine_views(p: Program) -> dict[str, EngineView]:
    """Every engine program of ``p`` flattened, keyed by ``EngineProgram.key``."""
    out: dict[str, EngineView] = {}
    for ep in p.programs:
        leaves, loops, ifs = _flatten(ep)
        out[ep.key] = EngineView(ep.key, ep, tuple(leaves), tuple(loops), tuple(ifs))
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
        ops = op.body if isinstance(op, (Loop, If)) else ()
    assert op is not None
    return op
