"""Every field of an op that names an entity, found by its ``metadata["id"]`` tag (``ops.ID_*``), and one way to
rename them all — what ``compose`` (shifting a section's ids into the joined program) and the compositional
checker (cutting a composed program back into slices) both need. A field that names an id and is not tagged here
would silently point a moved op at another program's entity; ``tests/test_ids.py`` walks every op class so that
cannot go unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from verispatial.ir.core import Site
from verispatial.ir.ops import (
    CONTAINERS,
    ID_BUFFER,
    ID_COUNT,
    ID_GROUP,
    ID_OPERANDS,
    ID_SEMAPHORE,
    ID_SITE,
    ID_TENSOR,
    Loop,
    Op,
    ReadTiles,
    TripCount,
    WriteTiles,
    named_index_buffer,
)

IntMap = Callable[[int], int]
StrMap = Callable[[str], str]
SiteMap = Callable[[Site], Site]


def _same(x: Any) -> Any:
    return x


@attrs.frozen
class Renaming:
    """What each id space maps to; a missing map keeps that space's ids. ``trip`` renames the trip a loop count
    reads (a name, or a ``TripCount``'s trip)."""

    buffer: IntMap = _same
    semaphore: IntMap = _same
    group: IntMap = _same
    tensor: StrMap = _same
    trip: StrMap = _same
    site: SiteMap = _same

    def count(self, c: int | str | TripCount) -> int | str | TripCount:
        if isinstance(c, str):
            return self.trip(c)
        if isinstance(c, TripCount):
            return attrs.evolve(c, trip=self.trip(c.trip))
        return c

    def op(self, op: Op, loops: frozenset[str] | None = None) -> Op:
        """``op`` with every id field renamed, containers' bodies included. ``loops``: the enclosing loops' variables,
        when known (``ops`` gives them): an address term naming none of them names a trip (``ir.core.Addr``) and is
        renamed as one. None (an op taken out of its nest): address terms are kept, so a program whose addresses
        name trips is renamed through ``ops`` only (a templated program refuses them, ``validate_templated``)."""
        changes: dict[str, Any] = {}
        for f in attrs.fields(type(op)):
            kind = f.metadata.get("id")
            v = getattr(op, f.name)
            if kind is None or v is None:
                continue
            if kind == ID_BUFFER:
                changes[f.name] = self.buffer(v)
            elif kind == ID_SEMAPHORE:
                changes[f.name] = self.semaphore(v)
            elif kind == ID_GROUP:
                changes[f.name] = self.group(v)
            elif kind == ID_TENSOR:
                changes[f.name] = self.tensor(v)
            elif kind == ID_SITE:
                changes[f.name] = self.site(v)
            elif kind == ID_COUNT:
                changes[f.name] = self.count(v)
            elif kind == ID_OPERANDS:
                changes[f.name] = tuple(attrs.evolve(o, buf=self.buffer(o.buf)) for o in v)
            else:  # pragma: no cover - a new tag must be handled here (fail closed)
                raise TypeError(f"{type(op).__name__}.{f.name}: id kind {kind!r} has no renaming")
        if isinstance(op, (ReadTiles, WriteTiles)) and op.addr.dynamic is not None and op.addr.dynamic.buf is not None:
            # An indirect address's index buffer: the one id held inside a value class (tests/test_ids.py).
            changes["addr"] = attrs.evolve(op.addr, dynamic=attrs.evolve(op.addr.dynamic,
                                                                         buf=self.buffer(op.addr.dynamic.buf)))
        if loops is not None and isinstance(op, (ReadTiles, WriteTiles)) and any(t.var not in loops
                                                                                  for t in op.addr.terms):
            terms = tuple(t if t.var in loops else attrs.evolve(t, var=self.trip(t.var)) for t in op.addr.terms)
            if terms != op.addr.terms:
                changes["addr"] = attrs.evolve(changes.get("addr", op.addr), terms=terms)
        if isinstance(op, CONTAINERS):
            inner = None if loops is None else loops | {op.var} if isinstance(op, Loop) else loops
            changes["body"] = tuple(self.op(o, inner) for o in op.body)
        return attrs.evolve(op, **changes) if changes else op

    def ops(self, ops: tuple[Op, ...]) -> tuple[Op, ...]:
        """A whole op list (an engine's), renamed with its loops known (``op``)."""
        return tuple(self.op(o, frozenset()) for o in ops)


def op_ids(op: Op) -> Iterator[tuple[str, Any]]:
    """Every (id kind, value) ``op`` names itself (not its body): ``("buffer", 3)``, ``("trip", "t")``, ..."""
    for f in attrs.fields(type(op)):
        kind = f.metadata.get("id")
        v = getattr(op, f.name)
        if kind is None or v is None:
            continue
        if kind == ID_OPERANDS:
            for o in v:
                yield ID_BUFFER, o.buf
        elif kind == ID_COUNT:
            if isinstance(v, str):
                yield "trip", v
            elif isinstance(v, TripCount):
                yield "trip", v.trip
        else:
            yield kind, v
    named = named_index_buffer(op)
    if named is not None:
        yield ID_BUFFER, named
