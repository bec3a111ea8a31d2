"""The tensors family (verispatial/families/tensors/): the tiles an access touches (``bounds``), the order of the reads
and writes of a tile (``tensor-race``) and the output written by the end (``output-unwritten``) — each rule on a tiny
program with the exact expected outcome in the reference interpreter, and the same access checked by the Promela
model; and the tile-range hull that spares the happens-before queries (``ordering_encoding.py``) a solver query for
write pairs that cannot share a tile."""

from __future__ import annotations

import re

from builders import GE, RA, RB, WA, A, B, buf, ep, prog, sem
from family_checks import asserted, only, where

from verispatial.certify.reach import analyse
from verispatial.certify.structure import Leaf
from verispatial.families.tensors import promela, semantics
from verispatial.families.tensors.ordering_encoding import _hull, _may_share_tile
from verispatial.ir import (
    WORMHOLE,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Dynamic,
    Engine,
    EngineProgram,
    FillTiles,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.validate import validate
from verispatial.petri.interp import simulate
from verispatial.petri.promela import to_promela

IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


def test_bounds_affine_and_dynamic() -> None:
    loop = Loop("k", 3, (Reserve(0, 2), ReadTiles("in", Addr(5, (Term("k", 1),)), 2, 0), ReadBarrier(), Push(0, 2)))
    p = prog(ep(A, Engine.READER, loop), ep(A, Engine.COMPUTE, Loop("k", 3, (Wait(0, 2), Pop(0, 2)))),
             buffers=(buf(0),), tensors=(IN,))
    v = only(simulate(p))
    assert where(v) == ("bounds", RA, (0, 1), (("k", 2),))
    assert v.message == "read_tiles(in, 2, b0) touches tiles [7, 9) of in, which has 8 tiles"
    dyn = Addr(0, (), Dynamic("idx", 0, 9))
    p2 = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", dyn, 1, 0), ReadBarrier(), Push(0, 1)),
              ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=(buf(0),), tensors=(IN,))
    assert simulate(p2).violations == ()  # lo = 0 is inside
    assert where(only(simulate(p2, dyn={"idx": 8}))) == ("bounds", RA, (1,), ())


ACT = Tensor("act", (32, 64), "bf16", Role.ACTIVATION)  # 2 tiles
ST = Tensor("st", (32, 64), "bf16", Role.STATE)



def test_bounds_range_is_said_as_certify_says_it() -> None:
    """A negative address: the interpreter's range and certify's counterexample name the same half-open tiles."""
    from verispatial.driver.run import certify

    p = prog(ep(A, Engine.READER, Reserve(0, 2), ReadTiles("in", Addr(-1), 2, 0), ReadBarrier(), Push(0, 2)),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)), buffers=(buf(0),), tensors=(IN,))
    assert only(simulate(p)).message == "read_tiles(in, 2, b0) touches tiles [-1, 1) of in, which has 8 tiles"
    bounds = [r for r in certify(p).results if r.family == "bounds" and r.verdict.value == "refuted"]
    assert len(bounds) == 1
    assert "touches tiles [-1, 1) of in, which has 8 tiles" in bounds[0].reason


def _writer(site: Site, tensor: str, *, barrier: bool = True, signal: bool = True) -> EngineProgram:
    b = 0 if site == A else 1
    # The page is filled (by the engine's own stores: a data-movement engine packs nothing) before it is
    # published: its consumer writes it out.
    ops: list[Op] = [Reserve(b, 1), FillTiles(b, 1, drain=True), Push(b, 1), Wait(b, 1), WriteTiles(b, tensor, Addr(0), 1)]
    ops += [WriteBarrier()] if barrier else []
    ops += [SemInc(0, B, 1), AtomicBarrier()] if signal else []
    ops += [Pop(b, 1)] + ([] if barrier else [WriteBarrier()])
    return ep(site, Engine.WRITER, *ops)


def _reader(tensor: str) -> EngineProgram:
    return ep(B, Engine.READER, Reserve(2, 1), SemWait(0, GE, 1), SemSet(0, 0), ReadTiles(tensor, Addr(0), 1, 2),
              ReadBarrier(), Push(2, 1), Wait(2, 1), Pop(2, 1))


def test_tensor_race_activation_read() -> None:
    bufs = (buf(0, A), buf(1, B), buf(2, B, cb=2))
    ok = prog(_writer(A, "act"), _reader("act"), buffers=bufs, sems=(sem(0, B),), tensors=(ACT,))
    assert simulate(ok).violations == ()
    early = prog(_writer(A, "act", barrier=False), _reader("act"), buffers=bufs, sems=(sem(0, B),), tensors=(ACT,))
    v = only(simulate(early))
    assert where(v) == ("tensor-race", RB, (3,), ())
    assert v.message == ("read_tiles(act, 1, b2) reads activation act tile 0 while a write to it by (0,0).writer "
                         "is not complete")
    never = prog(ep(B, Engine.READER, Reserve(2, 1), ReadTiles("act", Addr(0), 1, 2), ReadBarrier(), Push(2, 1),
                    Wait(2, 1), Pop(2, 1)), buffers=bufs, tensors=(ACT,))
    assert only(simulate(never)).message == (
        "read_tiles(act, 1, b2) reads activation act tile 0 before any completed write to it")


def test_tensor_race_two_writers() -> None:
    bufs = (buf(0, A), buf(1, B))
    out1 = Tensor("out", (32, 32), "bf16", Role.OUTPUT)
    p = prog(_writer(A, "out", barrier=False, signal=False), _writer(B, "out", barrier=False, signal=False),
             buffers=bufs, tensors=(out1,))
    v = only(simulate(p))
    assert where(v) == ("tensor-race", "(1,0).writer", (4,), ())
    assert v.message == "write_tiles(b1, out, 1) writes out tile 0 while a write to it by (0,0).writer is not complete"


def test_tensor_race_state_read_after_write() -> None:
    bufs = (buf(0, A), buf(1, B), buf(2, B, cb=2))
    p = prog(_writer(A, "st"), _reader("st"), buffers=bufs, sems=(sem(0, B),), tensors=(ST,))
    v = only(simulate(p))
    assert where(v) == ("tensor-race", RB, (3,), ())
    assert v.message == ("reads state st tile 0 after a write to it by (0,0).writer was issued (a state is written only "
                         "after every read of its old value)")


def test_output_unwritten_at_the_end() -> None:
    """An output of two tiles of which one is written: ``output-unwritten`` at the end of a terminated run, reported
    at the engine that writes it; the Promela model asserts every output tile written once every engine finished."""
    out2 = Tensor("out", (32, 64), "bf16", Role.OUTPUT)  # 2 tiles
    p = prog(_writer(A, "out", signal=False), buffers=(buf(0, A),), tensors=(out2,))
    r = simulate(p)
    v = only(r)
    assert (r.status, where(v)) == ("terminated", (R.OUTPUT_UNWRITTEN, WA, None, ()))
    assert v.message == "output out ends with 1 of its 2 tiles never written (first: tile 1)"
    assert re.findall(r"assert\(R_output_unwritten \|\| \(tiss_(\d+)\[h\d+\]\)\)", to_promela(p)) == ["0"]


# ---------------------------------------------------------------------------------------------- every chain


def test_the_promela_model_checks_each_access_where_the_interpreter_does() -> None:
    """The model asserts ``bounds`` at the read the interpreter reports it at (ops[0].body[1], the loop's read), an
    activation read's ``tensor-race`` at its issue and a state read's at its landing (both named by the read,
    ops[3] of the site-B reader), and a write's at the write (ops[4] of the writer)."""
    loop = Loop("k", 3, (Reserve(0, 2), ReadTiles("in", Addr(5, (Term("k", 1),)), 2, 0), ReadBarrier(), Push(0, 2)))
    p = prog(ep(A, Engine.READER, loop), ep(A, Engine.COMPUTE, Loop("k", 3, (Wait(0, 2), Pop(0, 2)))),
             buffers=(buf(0),), tensors=(IN,))
    assert where(only(simulate(p))) == (R.BOUNDS, RA, (0, 1), (("k", 2),))
    assert asserted(to_promela(p), R.BOUNDS) == ["O_0_0_1"]
    bufs = (buf(0, A), buf(1, B), buf(2, B, cb=2))
    for tensor in (ACT, ST):
        race = prog(_writer(A, tensor.name, barrier=False), _reader(tensor.name), buffers=bufs, sems=(sem(0, B),),
                    tensors=(tensor,))
        assert asserted(to_promela(race), R.TENSOR_RACE) == ["O_0_4", "O_1_3"]


def test_the_family_has_no_op_class_of_its_own() -> None:
    """Tensor rules are applied by the NoC family's reads and writes: the folder has no handler table."""
    assert not hasattr(semantics, "HANDLERS")
    assert not hasattr(promela, "HANDLERS")


# ---------------------------------------------------------------------------------------------- tile hull


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
