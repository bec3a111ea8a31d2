"""A matmul reading its b transposed (``transpose_b``: b stored N x K, ``a @ b^T``) — how a tied LM head reads the
embedding table: the graph check, the in1 reads (a stored row of K tiles per output column), the item stride, and a
proof on every target."""

from __future__ import annotations

import pytest

from verispatial.driver.run import certify
from verispatial.errors import ParseError
from verispatial.ir import GPU, WORMHOLE, ReadTiles, Target, Term
from verispatial.ir.graph import GraphBuilder, ModelGraph, graph_from_dict, graph_to_dict
from verispatial.ir.program import walk
from verispatial.passes import Pipeline, capped_passes, compile_section


def graph(n_rows: int = 256) -> ModelGraph:
    b = GraphBuilder("tb")
    b.tensor("a", [64, 128], role="input")
    b.tensor("table", [n_rows, 128], role="param")
    b.tensor("o", [64, 256], role="output")
    b.matmul_transposed("head", "a", "table", "o")
    return b.build()


def test_transpose_b_round_trips_and_checks_its_shapes() -> None:
    g = graph()
    assert graph_from_dict(graph_to_dict(g)) == g
    assert graph_to_dict(g)["ops"][0]["transpose_b"] is True
    with pytest.raises(ParseError, match=r"op head: shapes do not multiply: \[64, 128\] @ \[128, 128\]\^T -> "
                                         r"\[64, 256\], expected \[64, 128\] \(transpose_b: b is N x K\)"):
        graph(128)


@pytest.mark.parametrize(("target", "caps", "items"), [(WORMHOLE, (1, 1, 1), 1), (WORMHOLE, (2, 2, 4), 1),
                                                        (GPU, (1, 1, 1), 2)])
def test_transposed_in1_reads_a_stored_row_per_output_column_and_proves(target: Target, caps: tuple[int, int, int],
                                                                        items: int) -> None:
    p, frags = compile_section(graph(), 0, target, Pipeline(capped_passes(*caps)))
    persist = next(f for f in frags if f["pass"] == "persist")
    assert persist["items"] == items
    kt = 128 // target.tile[1]
    reads = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, ReadTiles) and op.tensor == "table"]
    assert reads
    for r in reads:
        # One stored row (kt tiles) per output column n; the next item is per_site_n stored rows further.
        assert Term("n", kt) in r.addr.terms
        item = [t.coef for t in r.addr.terms if t.var == "item"]
        assert item == ([persist["stride_tiles"] * kt] if items > 1 else [])
    if items > 1:
        assert persist["stride_tiles_of"] == {"table": persist["stride_tiles"] * kt}
    report = certify(p)
    assert report.exit_code == 0
