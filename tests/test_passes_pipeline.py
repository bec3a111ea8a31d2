"""The pass registry, phases and refusals by name, the verify-each hook, the model-graph front end, and the
elementwise section's golden op sequences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from verispatial.driver.run import certify
from verispatial.errors import InvalidProgram, ParseError, PassRefused
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    Compute,
    Engine,
    Loop,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Site,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph, dumps_graph, graph_from_dict, load_graph
from verispatial.ir.section import Phase, Section
from verispatial.passes import PASSES, Pipeline, compile_section, default_passes, get_pass
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"


def _eltwise(fn: str, shape: list[int], same: bool = False) -> ModelGraph:
    b = GraphBuilder("e")
    b.tensor("x", shape, role="input")
    b.tensor("y", shape, role="input")
    b.tensor("z", shape, role="output")
    b.binary("op", fn, "x", "x" if same else "y", "z")
    return b.build()


def test_registry_keys_match_pass_names() -> None:
    assert list(PASSES) == ["lower", "tile", "place", "size", "synthesize-handshakes", "persist"]
    for key in PASSES:
        assert get_pass(key).name == key
    assert [p.name for p in default_passes()] == list(PASSES)


def test_pass_given_the_wrong_phase_refuses_by_name() -> None:
    g = _eltwise("add", [32, 32])
    sec = Section("e.op", g, g.ops[0])
    assert sec.phase == Phase.OP
    with pytest.raises(PassRefused, match=r"^size: op 'op' \(binary\): expects a section in phase 'placed', got 'op'$"):
        Size().run(sec, WORMHOLE)
    sec, _ = Lower().run(sec, WORMHOLE)
    assert sec.phase == Phase.TEMPLATE
    with pytest.raises(PassRefused, match=r"^lower: op 'op' \(binary\): expects a section in phase 'op', got 'template'$"):
        Lower().run(sec, WORMHOLE)


def test_pipeline_hook_sees_every_pass_and_verify_each_catches_a_broken_pass() -> None:
    seen: list[tuple[str, str]] = []
    g = _eltwise("add", [32, 32])

    def hook(p: Any, before: Section, after: Section, frag: dict[str, Any], seconds: float) -> None:
        seen.append((p.name, after.phase.value))
        assert seconds >= 0

    Pipeline(hooks=(hook,)).run(Section("e.op", g, g.ops[0]), WORMHOLE)
    assert seen == [("lower", "template"), ("tile", "tiled"), ("place", "placed"), ("size", "sized"),
                    ("synthesize-handshakes", "scheduled"), ("persist", "scheduled")]

    @attrs.frozen
    class BadSize:
        """Puts the first buffer below the reserved base: the sized phase's rules must catch it."""

        name: str = "bad-size"

        def run(self, section: Section, target: Any) -> tuple[Section, dict[str, Any]]:
            s, frag = Size().run(section, target)
            assert s.layout is not None
            first = attrs.evolve(s.layout.buffers[0], offset=0)
            return attrs.evolve(s, layout=attrs.evolve(s.layout, buffers=(first, *s.layout.buffers[1:]))), frag

    with pytest.raises(InvalidProgram, match=r"buffer c_0: \[0, 4096\) is not aligned inside \[103712, 1499136\)"):
        Pipeline((Lower(), Tile(), Place(), BadSize(), SynthesizeHandshakes())).run(Section("e.op", g, g.ops[0]), WORMHOLE)


def test_elementwise_section_golden() -> None:
    # 16 tiles on one site, chunks of 8 (the accumulator), two chunks, every hand-off double-buffered.
    g = _eltwise("add", [32, 32 * 16])
    p, frags = compile_section(g, 0, WORMHOLE, Pipeline((Lower(), Tile(max_sites=1), Place(), Size(), SynthesizeHandshakes())))
    assert frags[1]["plan"] == {"kind": "EltwisePlan", "sites": 1, "per_site": 16, "chunk": 8}
    assert [(b.name, b.cb, b.capacity) for b in p.buffers] == [("c_0", 0, 16), ("c_1", 1, 16), ("c_16", 16, 16)]
    at = Addr(0, (Term("t", 8),))
    by = {ep.engine: ep.ops for ep in p.programs}
    assert by[Engine.READER] == (Loop("t", 2, (
        Reserve(0, 8), Reserve(1, 8), ReadTiles("x", at, 8, 0), ReadTiles("y", at, 8, 1), ReadBarrier(),
        Push(0, 8), Push(1, 8))),)
    assert by[Engine.COMPUTE] == (Loop("t", 2, (
        Wait(0, 8), Wait(1, 8), AcquireAcc(8, "bf16"), Compute("add", 8, (Operand(0, 8), Operand(1, 8))), Reserve(2, 8),
        PackAcc(2, 8), Push(2, 8), ReleaseAcc(), Pop(0, 8), Pop(1, 8))),)
    assert by[Engine.WRITER] == (Loop("t", 2, (Wait(2, 8), WriteTiles(2, "z", at, 8), WriteBarrier(), Pop(2, 8))),)
    assert certify(p).exit_code == 0


def test_elementwise_operand_named_twice_is_loaded_once_and_popped_once() -> None:
    g = _eltwise("mul", [64, 64], same=True)
    p, _ = compile_section(g, 0, BLACKHOLE, Pipeline((Lower(), Tile(max_sites=2), Place(), Size(), SynthesizeHandshakes())))
    assert [ep.site for ep in p.programs] == [Site(0, 0)] * 3 + [Site(1, 0)] * 3
    compute = p.programs[4].ops
    assert compute == (Loop("t", 1, (
        # x * x unpacks the one buffer's pages once: the operand is named once
        Wait(2, 2), AcquireAcc(2, "bf16"), Compute("mul", 2, (Operand(2, 2),)), Reserve(3, 2), PackAcc(3, 2), Push(3, 2),
        ReleaseAcc(), Pop(2, 2))),)
    assert p.programs[3].ops == (Loop("t", 1, (
        Reserve(2, 2), ReadTiles("x", Addr(2, (Term("t", 2),)), 2, 2), ReadBarrier(), Push(2, 2))),)
    assert certify(p).exit_code == 0


def test_graph_json_round_trip_and_builder_agree() -> None:
    g = load_graph(MODELS / "mlp_block.json")
    assert [o.name for o in g.ops] == ["up", "down", "residual"]
    assert graph_from_dict(json.loads(dumps_graph(g))) == g
    b = GraphBuilder("mlp_block")
    for t in g.tensors:
        b.tensor(t.name, t.shape, t.dtype, t.role)
    b.matmul("up", "x", "w_up", "h", bias="b_up", activation="silu")
    b.matmul("down", "h", "w_down", "y")
    b.binary("residual", "add", "x", "y", "out")
    assert b.build() == g


@pytest.mark.parametrize(("mutate", "field", "rule"), [
    (lambda d: d["ops"][0].update(kind="conv"), "ops[0].kind", "'conv' is not one of "
                                                      "['matmul', 'unary', 'binary', 'rmsnorm', 'gather', 'scatter', 'softmax', "
                                                      "'attention']"),
    (lambda d: d["tensors"][0].update(shape=[64, 0]), "tensors[0].shape[1]", "0 is less than the minimum of 1"),
    (lambda d: d["ops"][1].update(inputs=["h", "w_up"]), "op down",
     "shapes do not multiply: [64, 256] @ [128, 256] -> [64, 128], expected [64, 256]: K: h's columns 256 != w_up's "
     "rows 128"),
    (lambda d: d["tensors"][3].update(shape=[32, 256]), "op up",
     "shapes do not multiply: [64, 128] @ [128, 256] -> [32, 256], expected [64, 256]: M: h's rows 32 != x's rows 64"),
    (lambda d: d["tensors"][3].update(shape=[64, 128]), "op up",
     "shapes do not multiply: [64, 128] @ [128, 256] -> [64, 128], expected [64, 256]: N: h's columns 128 != w_up's "
     "columns 256"),
    (lambda d: d["ops"][2].update(inputs=["x", "h"]), "op residual",
     "operands and output have one shape (no broadcasting), got x [64, 128], h [64, 256], out [64, 128]: h's columns "
     "256 != x's columns 128"),
    (lambda d: d["ops"][2].update(output="x"), "op residual", "writes input tensor 'x'"),
    (lambda d: d["ops"][0]["chain"].append({"op": "relu"}), "op up", "at most one activation in a chain"),
])
def test_graph_errors_name_field_and_rule(mutate: Any, field: str, rule: str) -> None:
    d = json.loads((MODELS / "mlp_block.json").read_text())
    mutate(d)
    with pytest.raises(ParseError) as e:
        graph_from_dict(d)
    assert (e.value.field, e.value.rule) == (field, rule)
