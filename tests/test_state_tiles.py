"""Carried state updated in place, and tensor ordering decided per tile (DESIGN §5 "Tensors").

``s = s + x`` elementwise over a state: every chunk of ``s`` is read, added and written back, chunk after chunk, so
later tiles are still read after earlier ones are rewritten, but each tile's old value is read before its own write.
The interpreter (ground truth) accepts it and the checker proves it; a writer that rewrites a tile before its old
value is read, and two sites that write one tile unordered, are refuted with replayed counterexamples."""

from __future__ import annotations

import functools
from pathlib import Path

import attrs
import pytest

from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.run import certify
from verispatial.errors import ParseError
from verispatial.ir.core import Addr, Role, Term
from verispatial.ir.graph import GraphBuilder, ModelGraph, load_graph
from verispatial.ir.ops import Loop, WriteTiles
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
from verispatial.ir.target import BLACKHOLE, WORMHOLE, Target
from verispatial.passes.compile import compile_model, compile_section
from verispatial.passes.pipeline import Pipeline, capped_passes
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"


def in_place(rows: int = 256, cols: int = 512) -> ModelGraph:
    b = GraphBuilder("state")
    b.tensor("x", [rows, cols], role="input")
    b.tensor("s", [rows, cols], role="state")
    b.binary("update", "add", "s", "x", "s")
    return b.build()


@functools.cache
def section(sites: int = 2, rows: int = 256, cols: int = 512, target: str = "wormhole") -> Program:
    """256 x 512 elements = 128 tiles over ``sites`` sites, 8-tile chunks: 8 steps per site on two sites."""
    t = {"wormhole": WORMHOLE, "blackhole": BLACKHOLE}[target]
    p, _ = compile_section(in_place(rows, cols), 0, t, Pipeline(capped_passes(max_sites=sites)))
    return p


def with_writer(p: Program, key: str, addr: Addr) -> Program:
    """``p`` with engine ``key``'s WriteTiles at ``addr``."""
    progs = []
    for ep in p.programs:
        if ep.key == key:
            (lp,) = ep.ops
            assert isinstance(lp, Loop)
            body = tuple(attrs.evolve(o, addr=addr) if isinstance(o, WriteTiles) else o for o in lp.body)
            ep = attrs.evolve(ep, ops=(attrs.evolve(lp, body=body),))
        progs.append(ep)
    return attrs.evolve(p, programs=tuple(progs))


def reversed_writer(p: Program) -> Program:
    """Site (0,0) writes its chunks last first: step t rewrites chunk 7 - t, whose old value is read at step 7 - t."""
    return with_writer(p, "(0,0).writer", Addr(56, (Term("t", -8),)))


def shared_writer(p: Program) -> Program:
    """Site (1,0) writes site (0,0)'s chunks (tiles 0..63) instead of its own."""
    return with_writer(p, "(1,0).writer", Addr(0, (Term("t", 8),)))


def hb(report: Report) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in report.results if r.family == "happens-before"}


def named(report: Report, name: str) -> Result:
    (r,) = [r for r in report.results if r.name == name]
    return r


# ---------------------------------------------------------------------------------------------- the model graph


def test_graph_allows_an_in_place_update_of_a_state_only() -> None:
    g = in_place(64, 64)
    assert (g.ops[0].inputs, g.ops[0].output) == (("s", "x"), "s")
    b = GraphBuilder("bad")
    b.tensor("x", [64, 64], role="input")
    b.tensor("a", [64, 64])
    b.binary("update", "add", "a", "x", "a")
    with pytest.raises(ParseError, match=r"op update: reads its own output 'a' \(only a unary or binary op updates a "
                                         r"state tensor in place\)"):
        b.build()
    m = GraphBuilder("mm")
    m.tensor("s", [64, 64], role="state")
    m.matmul("mm", "s", "s", "s")
    with pytest.raises(ParseError, match="op mm: reads its own output 's'"):
        m.build()


def test_lowered_section_keeps_the_state_role() -> None:
    p = section()
    assert [(t.name, t.role) for t in p.tensors] == [("x", Role.INPUT), ("s", Role.STATE)]
    reads = {ep.key: [o.tensor for o in ep.ops[0].body if hasattr(o, "tensor")] for ep in p.programs  # type: ignore[union-attr]
             if ep.key.endswith("reader") or ep.key.endswith("writer")}
    assert reads == {"(0,0).reader": ["s", "x"], "(0,0).writer": ["s"], "(1,0).reader": ["s", "x"],
                     "(1,0).writer": ["s"]}
    assert [ep.ops[0].count for ep in p.programs] == [8] * 6  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------- interpreter


def test_interpreter_accepts_the_in_place_update() -> None:
    r = simulate(section())
    assert (r.status, r.violations) == ("terminated", ())
    for seed in range(4):
        assert simulate(section(), seed=seed).violations == ()
    small = section(1, 64, 256)  # one site, two 8-tile chunks: every interleaving
    ex = explore(small)
    assert (ex.verdict, ex.complete) == ("ok", True)


def test_interpreter_refutes_a_write_before_the_read_of_the_old_value() -> None:
    r = simulate(reversed_writer(section()))
    assert r.rules() == ["tensor-race"]
    (v,) = r.violations
    assert (v.position.engine, v.position.path, v.position.iteration) == ("(0,0).reader", (0, 2), (("t", 5),))
    assert v.message == ("reads state s tile 40 after a write to it by (0,0).writer was issued (a state is written "
                         "only after every read of its old value)")


def test_interpreter_refutes_two_sites_writing_one_tile_unordered() -> None:
    r = simulate(shared_writer(section()))
    assert [(v.rule, v.position.engine, v.position.path) for v in r.violations] == [
        ("tensor-race", "(1,0).writer", (0, 1))]
    assert r.violations[0].message == ("write_tiles(b5, s, 8) writes s tile 0 while a write to it by (0,0).writer is "
                                       "not complete")


# ---------------------------------------------------------------------------------------------- checker


@pytest.mark.parametrize("target", ["wormhole", "blackhole"])
def test_checker_proves_the_in_place_update(target: str) -> None:
    report = certify(section(target=target))
    assert report.exit_code == 0
    assert hb(report) == {
        "hb-state:s:(0,0).writer[0, 1]<(0,0).reader[0, 2]": Verdict.PROVED,
        "hb-state:s:(1,0).writer[0, 1]<(1,0).reader[0, 2]": Verdict.PROVED,
    }
    assert named(report, "hb-state:s:(0,0).writer[0, 1]<(0,0).reader[0, 2]").reason == (
        "every tile (0,0).writer writes of state s is written after (0,0).reader's reads of its old value landed")


def test_checker_refutes_a_write_before_the_read_of_the_old_value() -> None:
    report = certify(reversed_writer(section()))
    assert report.exit_code == 1
    assert hb(report) == {
        "hb-state:s:(0,0).writer[0, 1]<(0,0).reader[0, 2]": Verdict.REFUTED,
        "hb-state:s:(1,0).writer[0, 1]<(1,0).reader[0, 2]": Verdict.PROVED,
    }
    r = named(report, "hb-state:s:(0,0).writer[0, 1]<(0,0).reader[0, 2]")
    c = r.counterexample
    assert c is not None
    assert (c["rule"], c["read"], c["write"]) == ("tensor-race", {"engine": "(0,0).reader", "path": [0, 2]},
                                                  {"engine": "(0,0).writer", "path": [0, 1]})
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == "tensor-race"
    assert replay["violation"]["position"]["engine"] == "(0,0).reader"
    assert replay["violation"]["position"]["path"] == [0, 2]


def test_checker_refutes_two_sites_writing_one_tile_unordered() -> None:
    report = certify(shared_writer(section()))
    assert report.exit_code == 1
    assert hb(report) == {
        "hb-state:s:(0,0).writer[0, 1]<(0,0).reader[0, 2]": Verdict.PROVED,
        "hb-state:s:(1,0).writer[0, 1]<(0,0).reader[0, 2]": Verdict.REFUTED,
        "hb-write-write:s:(0,0).writer[0, 1]~(1,0).writer[0, 1]": Verdict.REFUTED,
    }
    ww = named(report, "hb-write-write:s:(0,0).writer[0, 1]~(1,0).writer[0, 1]")
    c = ww.counterexample
    assert c is not None
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == "tensor-race"
    assert replay["violation"]["position"]["engine"] == "(1,0).writer"


# ---------------------------------------------------------------------------------------------- example graph


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=lambda t: t.name)
def test_state_accumulate_example_proves(target: Target) -> None:
    secs = compile_model(load_graph(MODELS / "state_accumulate.json"), target)
    assert [(s.name, s.report.exit_code if s.report else None) for s in secs] == [("project", 0), ("accumulate", 0)]
    acc = secs[1].program
    assert [(t.name, t.role) for t in acc.tensors] == [("u", Role.INPUT), ("s", Role.STATE)]


# ---------------------------------------------------------------------------------------------- activation tiles


def _signalled(write_at: int, read_at: int, loop: int = 1) -> Program:
    """(0,0).writer writes ``loop`` tiles of the 2-tile activation ``act`` from ``write_at`` on (one per iteration,
    each completed), then signals (1,0).reader, which then reads tile ``read_at``."""
    from verispatial.ir.core import Engine, Site, WaitCond
    from verispatial.ir.ops import (
        AtomicBarrier,
        FillTiles,
        Op,
        Pop,
        Push,
        ReadBarrier,
        ReadTiles,
        Reserve,
        SemInc,
        SemSet,
        SemWait,
        Wait,
        WriteBarrier,
    )
    from verispatial.ir.program import Buffer, BufferAt, EngineProgram, Semaphore, Tensor

    a, b = Site(0, 0), Site(1, 0)
    # The writer fills its page (by its own stores) before publishing it, then writes it out.
    body: tuple[Op, ...] = (Reserve(0, 1), FillTiles(0, 1, drain=True), Push(0, 1), Wait(0, 1),
                            WriteTiles(0, "act", Addr(write_at, (Term("i", 1),)), 1), WriteBarrier(), Pop(0, 1))
    writer = EngineProgram(a, Engine.WRITER, (Loop("i", loop, body), SemInc(0, b, 1), AtomicBarrier()))
    reader = EngineProgram(b, Engine.READER, (Reserve(1, 1), SemWait(0, WaitCond.GE, 1), SemSet(0, 0),
                                              ReadTiles("act", Addr(read_at), 1, 1), ReadBarrier(), Push(1, 1)))
    compute = EngineProgram(b, Engine.COMPUTE, (Wait(1, 1), Pop(1, 1)))
    bufs = (Buffer(0, "c0", a, 0, 1, 1, "bf16"), Buffer(1, "c1", b, 0, 1, 1, "bf16"))
    return Program("act", WORMHOLE, tensors=(Tensor("act", (32, 64), "bf16", Role.ACTIVATION),), buffers=bufs,
                   semaphores=(Semaphore(0, "s0", (b,), 0),), programs=(writer, reader, compute),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, 2048), BufferAt(1, WORMHOLE.reserved_base, 2048)))


def test_activation_tile_read_but_never_written_is_refuted() -> None:
    """The writer writes tile 0 only; the reader reads tile 1. Some write of ``act`` exists and completes before the
    read, so a per-tensor order holds — but tile 1 has no write, and the interpreter flags the read."""
    ok = certify(_signalled(0, 1, loop=2))
    assert ok.exit_code == 0
    assert hb(ok) == {"hb-activation:act:(1,0).reader[3]": Verdict.PROVED,
                      "hb-activation:act:(1,0).reader[3]<(0,0).writer[0, 4]": Verdict.PROVED}
    p = _signalled(0, 1)
    (v,) = simulate(p).violations
    assert (v.rule, v.position.engine, v.message) == (
        "tensor-race", "(1,0).reader", "read_tiles(act, 1, b1) reads activation act tile 1 before any completed write to it")
    report = certify(p)
    assert report.exit_code == 1
    assert hb(report) == {"hb-activation:act:(1,0).reader[3]": Verdict.REFUTED}  # the one write shares no tile
    r = named(report, "hb-activation:act:(1,0).reader[3]")
    assert r.reason == "(1,0).reader reads act tile 1 at [3], which no write of act writes"
    c = r.counterexample
    assert c is not None
    replay = c["replay"]
    assert isinstance(replay, dict)
    assert replay["violation"]["rule"] == "tensor-race"


def test_tensor_order_reasons_word_loop_iterations_as_messages_do() -> None:
    """A tensor-ordering refutation names each occurrence's loop indices as every other message does ("loop
    iteration k=1", ``ir.source.iteration_words``), not as a Python dict (``{'k': 1}``), and says nothing for an
    op in no loop."""
    root = Path(__file__).resolve().parents[1] / "proofs" / "examples" / "broken"
    state = named(certify(load_program(root / "t_kv_no_rendezvous.program.json")), "hb-state:kv:(0,0).reader[4, 1]<(0,0).writer[1]")
    assert state.verdict is Verdict.REFUTED
    assert state.reason == ("(0,0).reader can read state kv tile 0 at [4, 1] (loop iteration r=0) before "
                            "(0,0).writer's write of it at [1] completed")
