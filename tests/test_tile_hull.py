"""The tile-range hull that spares a solver query for write pairs that cannot share a tile (ordering.py)."""

from __future__ import annotations

from verispatial.certify.ordering import _hull, _may_share_tile
from verispatial.certify.reach import analyse
from verispatial.certify.structure import Leaf
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Dynamic,
    Engine,
    EngineProgram,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    Reserve,
    Role,
    Site,
    Tensor,
    Term,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate


def writer_pair(addr_a: Addr, addr_b: Addr, count: int | str = 4) -> Program:
    """Sites (0,0) and (1,0) each write ``count`` tiles of Y from their own buffer (one tile per iteration)."""
    progs: list[EngineProgram] = []
    bufs = []
    for b, (site, addr) in enumerate(((Site(0, 0), addr_a), (Site(1, 0), addr_b))):
        bufs.append(Buffer(b, f"c{b}", site, 0, 1, 2, "bf16"))
        fill: tuple[Op, ...] = (Loop("k", count, (Reserve(b, 1), Push(b, 1))),)
        drain: tuple[Op, ...] = (Loop("k", count, (Wait(b, 1), WriteTiles(b, "Y", addr, 1), WriteBarrier(), Pop(b, 1))),)
        progs += [EngineProgram(site, Engine.READER, fill), EngineProgram(site, Engine.WRITER, drain)]
    p = Program("pair", WORMHOLE, tensors=(Tensor("Y", (32, 32 * 16), "bf16", Role.OUTPUT),), buffers=tuple(bufs),
                trips=(Trip("t", 3),), programs=tuple(progs),
                memory=tuple(BufferAt(b.id, WORMHOLE.reserved_base, 2 * 2048) for b in bufs))
    assert validate(p) == []
    return p


def leaves(p: Program) -> list[Leaf]:
    a = analyse(p)
    return [lf for v in a.views.values() for lf in v.leaves if isinstance(lf.op, WriteTiles)]


def test_hull_is_exact_for_affine_counts_and_trips() -> None:
    p = writer_pair(Addr(0, (Term("k", 1),)), Addr(4, (Term("k", -1),)))
    a = analyse(p)
    w0, w1 = leaves(p)
    assert _hull(a.program, w0) == (0, 4)  # k in [0, 3]: tiles 0..3
    assert _hull(a.program, w1) == (1, 5)  # 4 - k: tiles 1..4
    assert _may_share_tile(a.program, w0, w1, 10**6) is True
    p = writer_pair(Addr(0, (Term("k", 1),)), Addr(4, (Term("k", 1),)))
    a = analyse(p)
    w0, w1 = leaves(p)
    assert (_hull(a.program, w0), _hull(a.program, w1)) == ((0, 4), (4, 8))
    assert _may_share_tile(a.program, w0, w1, 10**6) is False  # decided by the hulls, no query
    # a trip count runs up to its max (3): tiles 0..2 and 2..4 overlap at tile 2
    p = writer_pair(Addr(0, (Term("k", 1),)), Addr(2, (Term("k", 1),)), count="t")
    a = analyse(p)
    w0, w1 = leaves(p)
    assert (_hull(a.program, w0), _hull(a.program, w1)) == ((0, 3), (2, 5))
    assert _may_share_tile(a.program, w0, w1, 10**6) is True
    # an indirect part widens the hull by scale * [lo, hi]
    p = writer_pair(Addr(0, (), Dynamic("i", 0, 3, 2)), Addr(8, (Term("k", 1),)))
    a = analyse(p)
    w0, w1 = leaves(p)
    assert (_hull(a.program, w0), _hull(a.program, w1)) == ((0, 7), (8, 12))
    assert _may_share_tile(a.program, w0, w1, 10**6) is False
