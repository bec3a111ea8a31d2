"""DIFFERENTIAL at scale: the checker against the explicit-state explorer on compiled sections and large programs.

Every earlier comparison used programs of at most about a hundred ops and seven sites, which the checker decides by
routes large programs never take. Here:

- ``large_programs()`` (``verispatial.strategies.scale``): small drawn programs side by side on disjoint sites,
  each engine's ops repeated, trips raised — at least 1,000 ops on at least 8 sites with trips up to 64 under the
  ``thorough`` profile;
- compiled sections: one graph op of large shapes compiled by the real pipeline (tile capped to a 4x2 grid or 8
  sites), as ``compile_model`` leaves it, with its own report.

The explorer runs under a state cap (``MAX_STATES``). What it finds is definite even when the search is cut short,
so soundness is compared on every program (``test_differential.disagreements``: nothing the explorer breaks is
proved); refutations are compared with a complete search only. An ``inconclusive`` search that found nothing is
its own class, not a skip: the program still counts, and ``benchmarks/bench_differential_scale.py`` reports how
many programs fall in each class.

Examples per test: 100 under ``thorough`` (a large program takes one to six minutes to certify on a shared core),
2 under ``ci``/``dev`` at a reduced scale (200 ops, 4 sites, trips up to 8) so the route stays exercised.
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st
from test_differential import disagreements

from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import BLACKHOLE, WORMHOLE, Program, Target
from verispatial.ir.graph import ModelGraph
from verispatial.ir.serialize import dumps
from verispatial.passes import Pipeline, capped_passes, compile_model
from verispatial.petri.explore import explore
from verispatial.strategies import single_op_graphs
from verispatial.strategies.scale import large_programs, op_count

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "thorough"
EXAMPLES = 100 if THOROUGH else 2
#: (min_ops, min_sites, max_trip) of the large programs
SCALE = (1000, 8, 64) if THOROUGH else (200, 4, 8)
#: the explorer's state cap per program (over all trip assignments)
MAX_STATES = 20_000 if THOROUGH else 2_000
#: shapes of the compiled sections' graph op (large enough to spread over the capped grid)
DIMS = (256, 512, 1024) if THOROUGH else (256,)


@settings(max_examples=EXAMPLES, deadline=None)
@given(large_programs(*SCALE))
def test_checker_agrees_with_the_capped_oracle_on_large_programs(p: Program) -> None:
    assert op_count(p) >= SCALE[0]
    oracle = explore(p, max_states=MAX_STATES)
    found = disagreements(oracle, certify(p), p)
    assert found == [], "\n".join([*found, dumps(p)])


@settings(max_examples=EXAMPLES, deadline=None)
@given(single_op_graphs(dims=DIMS), st.sampled_from([WORMHOLE, BLACKHOLE]))
def test_checker_agrees_with_the_capped_oracle_on_compiled_sections(graph: ModelGraph, target: Target) -> None:
    try:
        sections = compile_model(graph, target, pipeline=Pipeline(capped_passes(4, 2, 8)))
    except PassRefused:
        return  # refused by name: nothing compiled to compare
    for s in sections:
        assert s.report is not None
        oracle = explore(s.program, max_states=MAX_STATES)
        found = disagreements(oracle, s.report, s.program)
        assert found == [], "\n".join([*found, dumps(s.program)])
