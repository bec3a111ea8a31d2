"""The golden case of DESIGN §6 and the seed: the elementwise chain after a matmul runs inside the matmul's
sub-block nest. Emitting the matmul nest and then the chain nest one after the other at buffer depth two would
have the matmul push every sub-block of the item into a hand-off that holds two: the third reserve blocks the
compute engine against itself. The interpreter deadlocks on that order and the checker refutes it; the fused order
the pass emits terminates and proves."""

from __future__ import annotations

import attrs

from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Compute,
    Engine,
    EngineProgram,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReleaseAcc,
    Reserve,
    Site,
    Wait,
)
from verispatial.ir.graph import GraphBuilder
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.petri.interp import simulate

#: One site, one K block: a 4x8-tile block in four 4x2 sub-blocks (8 accumulator tiles each).
PIPE = Pipeline((Lower(), Tile(max_cols=1, max_rows=1), Place(), Size(), SynthesizeHandshakes()))

MM: tuple[Op, ...] = (AcquireAcc(8, "bf16"), Compute("matmul", 8, (Operand(0, 8), Operand(1, 16))), Reserve(2, 8),
                      PackAcc(2, 8), Push(2, 8), ReleaseAcc())
RELU: tuple[Op, ...] = (Wait(2, 8), AcquireAcc(8, "bf16"), Compute("relu", 8, (Operand(2, 8),)), Reserve(3, 8),
                        PackAcc(3, 8), Push(3, 8), ReleaseAcc(), Pop(2, 8))


def _fused() -> Program:
    b = GraphBuilder("g")
    b.tensor("a", [128, 64], role="input")
    b.tensor("w", [64, 256], role="param")
    b.tensor("o", [128, 256], role="output")
    b.matmul("mm", "a", "w", "o", activation="relu")
    p, frags = compile_section(b.build(), 0, WORMHOLE, PIPE)
    assert frags[1]["plan"] == {"kind": "MatmulPlan", "cols": 1, "rows": 1, "per_site_m": 4, "per_site_n": 8,
                                "block_w": 2, "num_blocks": 1, "sb_h": 4, "sb_w": 2, "form": "single", "items": 1}
    return p


def _with_compute(p: Program, ops: tuple[Op, ...]) -> Program:
    progs = tuple(attrs.evolve(ep, ops=ops) if ep.engine == Engine.COMPUTE else ep for ep in p.programs)
    return attrs.evolve(p, programs=progs)


def test_pass_emits_the_chain_inside_the_matmul_nest_at_depth_two() -> None:
    p = _fused()
    # The matmul -> relu hand-off (c_3, buffer 2) holds two sub-blocks of 8 pages: depth two.
    assert [(b.name, b.capacity) for b in p.buffers] == [("c_0", 16), ("c_1", 32), ("c_3", 16), ("c_16", 16)]
    compute: EngineProgram = next(ep for ep in p.programs if ep.engine == Engine.COMPUTE)
    assert compute.site == Site(0, 0)
    assert compute.ops == (Wait(0, 8), Wait(1, 16), Loop("i", 1, (Loop("j", 4, (*MM, *RELU)),)), Pop(0, 8), Pop(1, 16))
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


def test_matmul_nest_then_chain_nest_deadlocks_and_is_refuted() -> None:
    naive = _with_compute(_fused(), (Wait(0, 8), Wait(1, 16), Loop("i", 1, (Loop("j", 4, MM),)),
                                     Loop("i", 1, (Loop("j", 4, RELU),)), Pop(0, 8), Pop(1, 16)))
    run = simulate(naive)
    assert run.status == "deadlock"
    # The compute engine is stuck at the third sub-block's reserve (j=2): two sub-blocks pushed, none popped, because
    # the relu nest that pops them has not started; the writer waits for the relu's first page.
    assert [str(s) for s in run.stuck] == [
        "(0,0).compute at ops[2].body[0].body[2] reserve(b2, 8) i=0 j=2: waits for space in b2: "
        "capacity-(pushed-popped)=16-(16-0)=0 < 8",
        "(0,0).writer at ops[0].body[0].body[0] wait(b3, 8) i=0 j=0: waits for b3: pushed-popped=0-0=0 < 8",
    ]
    report = certify(naive)
    assert report.exit_code == 1
    (refuted,) = [r for r in report.results if r.verdict.value != "proved"]
    assert (refuted.family, refuted.verdict.value) == ("deadlock", "refuted")
    assert refuted.counterexample is not None
    assert [(s["position"]["engine"], s["position"]["op"], s["position"]["iteration"])
            for s in refuted.counterexample["stuck"]] == [
        ("(0,0).compute", "reserve(b2, 8)", [["i", 0], ["j", 2]]),
        ("(0,0).writer", "wait(b3, 8)", [["i", 0], ["j", 0]]),
    ]
