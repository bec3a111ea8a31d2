"""Property: a random single-op model graph over small shapes, dtypes and targets either compiles to a section the
checker proves, or is refused by a named pass naming the op — never a crash, never a refuted certificate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import BLACKHOLE, GPU, WORMHOLE, Target
from verispatial.ir.graph import ModelGraph
from verispatial.ir.validate import validate
from verispatial.passes import PASSES, Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.persist import Persist
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.strategies import single_op_graphs

#: A 2x2 grid at most keeps each proof near a second.
PIPE = Pipeline((Lower(), Tile(max_cols=2, max_rows=2, max_sites=4), Place(), Size(), SynthesizeHandshakes(),
                 Persist()))


@settings(max_examples=25, deadline=None)
@given(graph=single_op_graphs(), target=st.sampled_from([WORMHOLE, BLACKHOLE, GPU]))
def test_random_single_op_graphs_prove_or_are_refused_by_name(graph: ModelGraph, target: Target) -> None:
    refusal: PassRefused | None = None
    try:
        program, frags = compile_section(graph, 0, target, PIPE)
    except PassRefused as e:
        refusal = e
    if refusal is not None:
        assert refusal.pass_name in PASSES
        assert refusal.reason.startswith(f"op 'op' ({graph.ops[0].kind}): ")
        assert "Traceback" not in refusal.reason
        return
    assert [f["pass"] for f in frags] == list(PASSES)
    assert validate(program) == []
    report = certify(program)
    not_proved = [(r.family, r.name, r.verdict.value, r.reason) for r in report.results if r.verdict.value != "proved"]
    assert not_proved == []
