"""Tensors in the Promela model: ``bounds`` of a read or write, ``tensor-race`` at a read's issue and landing and at a
write's issue, the completion of an engine's writes at its WriteBarrier and ``output-unwritten`` at the run's end,
each rule an ``assert`` mirroring the interpreter's (``families/tensors/semantics.py``).

Per tensor ``ti`` the model keeps ``tm_ti[t]`` (bit mask of engines with an incomplete write of tile ``t``),
``tdone_ti[t]`` (a write of it completed) and ``tiss_ti[t]`` (a write of it was issued). Programs of one section
only (``PromelaUnsupported`` otherwise), so a state tile has one version."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.ops import ReadTiles, WriteTiles

if TYPE_CHECKING:
    from verispatial.petri.promela import _Gen


def tile_range(g: _Gen, e: int, path: tuple[int, ...], op: ReadTiles | WriteTiles,
               where: str) -> tuple[list[str], str, str]:
    """``bounds`` of the op's tiles; returns the lines and the first and last tile it touches inside the tensor."""
    ntiles = g.tiles[g.tix[op.tensor]]
    a = g._affine(op.addr.base, tuple((t.var, t.coef) for t in op.addr.terms), g._env(e, path))
    lo, hi = g._tmp(), g._tmp()
    lines = [g._assert(R.BOUNDS, f"{a} >= 0 && {a} + {op.tiles} <= {ntiles}", where),
             f"{lo} = ({a} > 0 -> {a} : 0);",
             f"{hi} = ({a} + {op.tiles} < {ntiles} -> {a} + {op.tiles} : {ntiles}) - 1;"]
    return lines, lo, hi


def read_issued(g: _Gen, e: int, path: tuple[int, ...], op: ReadTiles, where: str) -> tuple[list[str], dict[str, str]]:
    """A ReadTiles is issued: ``bounds``; ``tensor-race`` when an activation tile it reads has no completed write or
    an incomplete one. Returns the lines and the fields its queue entry carries (a state read's tiles, which its
    landing checks: ``read_lands``)."""
    lines, lo, hi = tile_range(g, e, path, op, where)
    ti = g.tix[op.tensor]
    role = g.p.tensors[ti].role
    t = g._tmp()
    if role is Role.ACTIVATION:
        race = g._tmp()
        lines += [f"{race} = 0;",
                  f"for ({t} : {lo} .. {hi}) {{ if :: !tdone_{ti}[{t}] || tm_{ti}[{t}] != 0 -> {race} = 1 :: else -> skip fi }};",
                  g._assert(R.TENSOR_RACE, f"{race} == 0", where)]
    return lines, ({"lo": lo, "hi": hi} if role is Role.STATE else {})


def write_issued(g: _Gen, e: int, path: tuple[int, ...], op: WriteTiles, where: str) -> list[str]:
    """A WriteTiles is issued: ``bounds``; ``tensor-race`` when another engine's write of one of its tiles is
    incomplete; each tile gains an incomplete write by ``e`` and counts as issued."""
    lines, lo, hi = tile_range(g, e, path, op, where)
    ti = g.tix[op.tensor]
    t, race = g._tmp(), g._tmp()
    return [*lines, f"{race} = 0;",
            f"for ({t} : {lo} .. {hi}) {{ if :: (tm_{ti}[{t}] & ~{1 << e}) != 0 -> {race} = 1 :: else -> skip fi; "
            f"tm_{ti}[{t}] = tm_{ti}[{t}] | {1 << e}; tiss_{ti}[{t}] = 1 }};",
            g._assert(R.TENSOR_RACE, f"{race} == 0", where)]


def writes_complete(g: _Gen, e: int) -> list[str]:
    """Engine ``e`` passes a WriteBarrier: every tile with an incomplete write by ``e`` has a completed write (only the
    tensors some WriteTiles of ``e`` writes)."""
    out = []
    for ti, tiles in enumerate(g.tiles):
        if not any(isinstance(x.op, WriteTiles) and x.e == e and g.tix[x.op.tensor] == ti for x in g.issues):
            continue
        t = g._tmp()
        out.append(f"for ({t} : 0 .. {tiles - 1}) {{ if :: (tm_{ti}[{t}] >> {e}) & 1 -> "
                   f"tm_{ti}[{t}] = tm_{ti}[{t}] & ~{1 << e}; tdone_{ti}[{t}] = 1 :: else -> skip fi }};")
    return out


def read_lands(g: _Gen, op: ReadTiles, lo: str, hi: str, where: str) -> list[str]:
    """A read of a state tensor lands (its tiles ``[lo, hi]``): ``tensor-race`` when a write of one of them was
    issued (one section: every write is in the read's section or a later one)."""
    ti = g.tix[op.tensor]
    if g.p.tensors[ti].role is not Role.STATE:
        return []
    t, race = g._tmp(), g._tmp()
    return [f"{race} = 0;",
            f"for ({t} : {lo} .. {hi}) {{ if :: tiss_{ti}[{t}] -> {race} = 1 :: else -> skip fi }};",
            g._assert(R.TENSOR_RACE, f"{race} == 0", where)]


def unwritten(g: _Gen) -> list[str]:
    """``output-unwritten`` at the run's end: every tile of every output tensor had a write issued."""
    out = []
    for ti, t in enumerate(g.p.tensors):
        if t.role is Role.OUTPUT:
            x = g._tmp()
            out.append(f"for ({x} : 0 .. {g.tiles[ti] - 1}) {{ {g._assert(R.OUTPUT_UNWRITTEN, f'tiss_{ti}[{x}]')} }};")
    return out
