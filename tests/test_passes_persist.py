"""``persist``: the item loop. A site whose block does not fit local memory takes it as several work items along N
(chosen by ``tile``); ``persist`` wraps each engine program in ``Loop("item", n)`` and advances in1's, the bias's and
the output's addresses by ``item * per_site_n`` tiles. Golden programs on a small local memory, certified PROVED on
Wormhole and Blackhole with the loops symbolic and run to termination; the in-place form's item-start reserve shown
necessary by a refuted mutant; real model matmuls that did not fit one site now prove as items."""

from __future__ import annotations

import attrs
import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Compute,
    Engine,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Target,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.section import Section
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.persist import Persist
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.petri.interp import simulate


def small(t: Target) -> Target:
    """``t`` with 64 KiB of usable local memory: 32 bf16 pages."""
    return attrs.evolve(t, name=f"{t.name}_64k", local_bytes=t.reserved_base + 65536)


def graph() -> ModelGraph:
    """out (64 x 256) = in0 (64 x 128) @ in1 (128 x 256): a 2 x 8-tile block, K 4 tiles."""
    b = GraphBuilder("g")
    b.tensor("in0", [64, 128], role="input")
    b.tensor("in1", [128, 256], role="param")
    b.tensor("out", [64, 256], role="output")
    b.matmul("mm", "in0", "in1", "out")
    return b.build()


def pipe(form: str | None = None, persist: bool = True) -> Pipeline:
    passes = (Lower(), Tile(max_cols=1, max_rows=1, acc_form=form), Place(), Size(), SynthesizeHandshakes())
    return Pipeline((*passes, Persist()) if persist else passes)


def ops_of(p: Program, engine: Engine) -> tuple[Op, ...]:
    (ep,) = [ep for ep in p.programs if ep.engine == engine]
    return ep.ops


#: The in-place form on the 64 KiB target: two items of 2 x 4 tiles (one 8-tile sub-block), K in 2 blocks of 2.
#: b0 = c_0 (4 pages a block), b1 = c_1 (8), b2 = c_24, b3 = c_16 (8 pages, the alias of c_24).
READER: tuple[Op, ...] = (
    Loop("item", 2, (Loop("k", 2, (
        Reserve(0, 4), Loop("r", 2, (ReadTiles("in0", Addr(0, (Term("r", 4), Term("k", 2))), 2, 0),)), ReadBarrier(),
        Push(0, 4),
        Reserve(1, 8), Loop("r", 2, (ReadTiles("in1", Addr(0, (Term("item", 4), Term("r", 8), Term("k", 16))), 4, 1),)),
        ReadBarrier(), Push(1, 8))),)),
    WriteBarrier(), AtomicBarrier())


def _nest(*body: Op) -> Op:
    return Loop("i", 1, (Loop("j", 1, body),))


#: Every matmul step unpacks the waited in0 (b0) and in1 (b1) blocks.
INS = (Operand(0, 4), Operand(1, 8))

COMPUTE: tuple[Op, ...] = (Loop("item", 2, (
    Reserve(3, 8),
    Wait(0, 4), Wait(1, 8),
    _nest(AcquireAcc(8, "bf16"), Compute("matmul", 8, INS), Reserve(2, 8), PackAcc(2, 8), Push(2, 8), ReleaseAcc()),
    Wait(2, 8), Pop(2, 8), Pop(0, 4), Pop(1, 8),
    Wait(0, 4), Wait(1, 8),
    _nest(AcquireAcc(8, "bf16"), Compute("matmul", 8, INS), Reserve(3, 8), PackAcc(3, 8, True), Push(3, 8),
          ReleaseAcc()),
    Pop(0, 4), Pop(1, 8))),)

WRITER: tuple[Op, ...] = (Loop("item", 2, (_nest(
    Wait(3, 8), Loop("r", 2, (WriteTiles(3, "out", Addr(0, (Term("item", 4), Term("i", 16), Term("r", 8),
                                                          Term("j", 4))), 4),)),
    WriteBarrier(), Pop(3, 8)),)),)


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=["wormhole", "blackhole"])
def test_items_loop_golden_and_proved(target: Target) -> None:
    p, frags = compile_section(graph(), 0, small(target), pipe("in_place"))
    assert frags[1]["plan"] == {"kind": "MatmulPlan", "cols": 1, "rows": 1, "per_site_m": 2, "per_site_n": 4,
                                "block_w": 2, "num_blocks": 2, "sb_h": 2, "sb_w": 4, "form": "in_place", "items": 2}
    frag = frags[-1]
    assert (frag["pass"], frag["items"], frag["axis"], frag["item_tiles"], frag["stride_tiles"], frag["moving"]) == (
        "persist", 2, "n", [2, 4], 4, ["in1", "out"])
    assert [o["name"] for o in frag["obligations"]] == ["persist:covers", "persist:reuse", "persist:bounds"]
    assert [(b.name, b.capacity, b.alias_of) for b in p.buffers] == [
        ("c_0", 8, None), ("c_1", 16, None), ("c_24", 8, None), ("c_16", 8, 2)]
    assert ops_of(p, Engine.READER) == READER
    assert ops_of(p, Engine.COMPUTE) == COMPUTE
    assert ops_of(p, Engine.WRITER) == WRITER
    assert simulate(p).status == "terminated"
    report = certify(p)
    assert report.exit_code == 0, [(r.name, r.verdict.value) for r in report.results if r.verdict != Verdict.PROVED]


def test_default_form_per_item_is_streaming() -> None:
    # Each 2 x 4-tile item fits one acquire: K streams through in one-tile steps, two items.
    p, frags = compile_section(graph(), 0, small(WORMHOLE), pipe())
    plan = frags[1]["plan"]
    assert (plan["form"], plan["items"], plan["per_site_n"], plan["block_w"], plan["num_blocks"]) == (
        "streaming", 2, 4, 1, 4)
    assert ops_of(p, Engine.COMPUTE) == (Loop("item", 2, (
        AcquireAcc(8, "bf16"),
        Loop("k", 4, (Wait(0, 2), Wait(1, 4), Compute("matmul", 8, (Operand(0, 2), Operand(1, 4))), Pop(0, 2),
                      Pop(1, 4))),
        Reserve(2, 8), PackAcc(2, 8), Push(2, 8), ReleaseAcc())),)
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


def test_one_item_passes_through_unchanged() -> None:
    before, _ = compile_section(graph(), 0, WORMHOLE, pipe(persist=False))
    after, frags = compile_section(graph(), 0, WORMHOLE, pipe())
    assert after == before
    assert frags[-1]["items"] == 1
    assert [o["name"] for o in frags[-1]["obligations"]] == ["persist:one-item"]


def test_persist_refuses_a_section_before_handshakes() -> None:
    g = graph()
    with pytest.raises(PassRefused) as e:
        Persist().run(Section("g.mm", g, g.ops[0]), WORMHOLE)
    assert str(e.value) == "persist: op 'mm' (matmul): expects a section in phase 'scheduled', got 'op'"


def test_without_the_item_start_reserve_the_next_item_clobbers_unstored_output() -> None:
    # In place, item 1's first partial lands in the pages of item 0's output: only the reserve of every output page
    # at the item's start keeps it from overwriting tiles the writer has not stored yet.
    p, _ = compile_section(graph(), 0, small(WORMHOLE), pipe("in_place"))
    (loop,) = ops_of(p, Engine.COMPUTE)
    assert isinstance(loop, Loop)
    assert loop.body[0] == Reserve(3, 8)
    bad = attrs.evolve(p, programs=tuple(
        attrs.evolve(ep, ops=(attrs.evolve(loop, body=loop.body[1:]),)) if ep.engine == Engine.COMPUTE else ep
        for ep in p.programs))
    report = certify(bad)
    assert report.exit_code == 1
    (refuted,) = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert (refuted.name, refuted.verdict) == ("alias-clobber:b2~b3", Verdict.REFUTED)
    # The writer's source pages are safe only if nothing else rewrites them: that proof leans on alias-clobber.
    (leaning,) = [r for r in report.results if r.verdict == Verdict.FAILED]
    assert leaning.name == "async-source-reuse"
    assert "assumes alias-clobber:b2~b3" in leaning.reason
    cex = refuted.counterexample
    assert cex is not None
    violation = cex["replay"]["violation"]
    assert violation["rule"] == "alias-clobber"
    assert violation["position"]["engine"] == "(0,0).compute"
    assert violation["position"]["op"] == "push(b2, 8)"
    assert ["item", 1] in violation["position"]["iteration"]
