"""Property: a random single-op model graph over small shapes, dtypes and targets either compiles to a section the
checker proves, or is refused by a named pass naming the op — never a crash, never a refuted certificate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.certify.checker import certify
from verispatial.errors import PassRefused
from verispatial.ir import BLACKHOLE, GPU, WORMHOLE, Target
from verispatial.ir.graph import ACTIVATIONS, BINARY_FNS, UNARY_FNS, GraphBuilder, ModelGraph
from verispatial.ir.validate import validate
from verispatial.passes import PASSES, Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.persist import Persist
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile

#: Element sizes: whole tiles and ragged edges (padded up) for both 32x32 and 16x16 tiles.
DIMS = st.sampled_from([8, 16, 32, 40, 64, 96, 128])
DTYPES = st.sampled_from(["bf16", "bf16", "fp32", "bfp8_b"])
#: A 2x2 grid at most keeps each proof near a second.
PIPE = Pipeline((Lower(), Tile(max_cols=2, max_rows=2, max_sites=4), Place(), Size(), SynthesizeHandshakes(),
                 Persist()))


@st.composite
def single_op_graphs(draw: st.DrawFn) -> ModelGraph:
    kind = draw(st.sampled_from(["matmul", "unary", "binary", "rmsnorm", "softmax", "gather", "scatter", "attention",
                                 "state"]))
    b = GraphBuilder("h")
    m, n = draw(DIMS), draw(DIMS)
    out_dtype = draw(DTYPES)
    if kind == "matmul":
        k = draw(DIMS)
        b.tensor("a", [m, k], draw(DTYPES), "input")
        b.tensor("w", [k, n], draw(DTYPES), "param")
        bias = None
        if draw(st.booleans()):
            bias = b.tensor("bias", [n], draw(DTYPES), "param")
        b.tensor("o", [m, n], out_dtype, "output")
        act = draw(st.sampled_from([None, *ACTIVATIONS]))
        req = out_dtype if draw(st.booleans()) else None
        b.matmul("op", "a", "w", "o", bias=bias, activation=act, requantize=req)
    elif kind == "rmsnorm":
        b.tensor("a", [m, n], draw(DTYPES), "input")
        b.tensor("g", [n], draw(DTYPES), "param")
        b.tensor("o", [m, n], out_dtype, "output")
        b.rmsnorm("op", "a", "g", "o")
    elif kind in ("gather", "scatter"):
        # The moved side has at most as many rows as the indexed side (the table or the state).
        big = max(m, draw(DIMS))
        data_dtype = draw(DTYPES)
        b.tensor("ix", [draw(st.sampled_from([1, 4, 32]))], draw(st.sampled_from(["int32", "uint32"])), "input")
        if kind == "gather":
            b.tensor("table", [big, n], data_dtype, "param")
            b.tensor("o", [m, n], data_dtype, "output")
            b.gather("op", "table", "ix", "o")
        else:
            b.tensor("src", [m, n], data_dtype, "input")
            b.tensor("o", [big, n], data_dtype, "state")
            b.scatter("op", "src", "ix", "o")
    elif kind == "softmax":
        b.tensor("a", [m, n], draw(DTYPES), "input")
        b.tensor("o", [m, n], out_dtype, "output")
        b.softmax("op", "a", "o")
    elif kind == "attention":
        # One decode step: a single query row of heads x head_dim, a cache of seq positions per kv head.
        kv = draw(st.sampled_from([1, 2]))
        heads = kv * draw(st.sampled_from([1, 2, 3]))
        d = draw(st.sampled_from([32, 64]))
        seq = draw(st.sampled_from([32, 64, 128]))
        dt = draw(DTYPES)
        b.tensor("q", [1, heads * d], dt, "input")
        b.tensor("k", [seq, kv * d], dt, "state")
        b.tensor("v", [seq, kv * d], dt, "state")
        b.tensor("o", [1, heads * d], out_dtype, "output")
        b.attention("op", "q", "k", "v", "o", heads=heads, kv_heads=kv)
    elif kind == "state":
        # A carried state updated in place: s = fn(s, x).
        dt = draw(DTYPES)
        b.tensor("s", [m, n], dt, "state")
        b.tensor("x", [m, n], draw(DTYPES), "input")
        b.binary("op", draw(st.sampled_from(BINARY_FNS)), "s", "x", "s")
    elif kind == "unary":
        b.tensor("a", [m, n], draw(DTYPES), "input")
        b.tensor("o", [m, n], out_dtype, "output")
        b.unary("op", draw(st.sampled_from(UNARY_FNS)), "a", "o")
    else:
        b.tensor("a", [m, n], draw(DTYPES), "input")
        b.tensor("c", [m, n], draw(DTYPES), "input")
        b.tensor("o", [m, n], out_dtype, "output")
        b.binary("op", draw(st.sampled_from(BINARY_FNS)), "a", draw(st.sampled_from(["a", "c"])), "o")
    return b.build()


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
