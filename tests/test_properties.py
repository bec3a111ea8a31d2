"""PROPERTIES of the whole tool chain over the public strategies (``verispatial.strategies``, issue 9 deliverable 2).

- A random model graph compiled, composed and certified proves every obligation, or is refused by name (a pass
  naming the op, or compose naming its rule): never refuted, never a checker error, never failed-to-prove.
- A graph whose shapes do not fit is refused by ``check_graph`` naming the op.
- Programs correct by construction (``correct_programs``, a correct ``chain`` of sections composed) prove, and the
  explorer finds no deadlock and no violation in them.
- Every refutation replays: the explorer, at the counterexample's trip values, reaches that rule at that op (or a
  deadlock).
- Certificates are deterministic and JSON round-trips are the identity (programs, model graphs, certificates).

The checker's verdict against the explorer's on small programs is ``test_differential.py`` (300 programs under
``ci``, 20,000 under ``thorough``). Example counts scale with the Hypothesis profile (``tests/conftest.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from verispatial.certify.certificate import derive_certificate
from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.errors import ComposeRefused, ParseError, PassRefused
from verispatial.ir import WORMHOLE, Program, Target
from verispatial.ir.graph import GraphBuilder, ModelGraph, check_graph, dumps_graph, graph_from_dict, graph_to_dict
from verispatial.ir.serialize import dumps, loads
from verispatial.passes import PASSES, Pipeline, capped_passes, compile_model
from verispatial.passes.compile import compose_step
from verispatial.petri.explore import ExploreResult, explore
from verispatial.strategies import (
    composed_programs,
    correct_programs,
    misshapen_graphs,
    model_graphs,
    programs,
    targets,
)

#: A 2x2 grid at most (4 sites for an elementwise op) keeps each section's proof near a second.
PIPE = Pipeline(capped_passes(max_cols=2, max_rows=2, max_sites=4))
PROFILE_EXAMPLES = settings().max_examples


def _not_proved(report: Report) -> list[tuple[str, str, str]]:
    return [(r.name, r.verdict.value, r.reason) for r in report.results if r.verdict != Verdict.PROVED]


def compile_compose_certify(graph: ModelGraph, target: Target) -> PassRefused | Report:
    """The composed step's report, or the refusal (``PassRefused`` of a pass, or ``ComposeRefused``)."""
    try:
        sections = compile_model(graph, target, pipeline=PIPE, check=False)
        step = compose_step(graph, sections, target)
    except PassRefused as e:
        return e
    assert step.report is not None
    return step.report


@settings(max_examples=max(12, PROFILE_EXAMPLES // 80), suppress_health_check=[HealthCheck.too_slow])
@given(graph=model_graphs(max_ops=3), target=targets())
def test_compile_compose_certify_proves_or_is_refused_by_name(graph: ModelGraph, target: Target) -> None:
    got = compile_compose_certify(graph, target)
    if isinstance(got, ComposeRefused):
        assert got.rule, got
        assert got.detail, got
        return
    if isinstance(got, PassRefused):
        # A pass refuses by its name, naming the op of the graph and its kind, in one line.
        assert got.pass_name in PASSES, got
        assert any(got.reason.startswith(f"op '{o.name}' ({o.kind}): ") for o in graph.ops), got.reason
        assert "Traceback" not in got.reason
        assert "\n" not in got.reason
        return
    assert _not_proved(got) == [], dumps_graph(graph)
    assert got.exit_code == 0


def test_a_state_read_after_an_earlier_ops_update_proves() -> None:
    """``s = s + x`` then ``y = relu(s)``: the second section reads the state the first rewrote, after the
    rendezvous — the new version (docs/semantics.md, per-tile state versions); the interpreter replays no race.
    (Found by the random model graphs: the cross-phase rule failed to prove it until the per-tile versions rule.)"""
    b = GraphBuilder("g")
    b.tensor("s", [32, 32], "bf16", "state")
    b.tensor("x", [32, 32], "bf16", "input")
    b.tensor("y", [32, 32], "bf16", "output")
    b.binary("upd", "add", "s", "x", "s")
    b.unary("use", "relu", "s", "y")
    got = compile_compose_certify(b.build(), WORMHOLE)
    assert isinstance(got, Report)
    assert _not_proved(got) == []


@settings(max_examples=max(50, PROFILE_EXAMPLES // 10))
@given(misshapen_graphs(max_ops=4))
def test_misshapen_graphs_are_refused_naming_the_op(drawn: tuple[ModelGraph, str]) -> None:
    graph, op = drawn
    with pytest.raises(ParseError) as info:
        check_graph(graph)
    assert info.value.field == f"op {op}"
    assert str(graph.tensor(next(o.output for o in graph.ops if o.name == op)).dims2()[1]) in info.value.rule


@settings(max_examples=max(20, PROFILE_EXAMPLES // 40))
@given(correct_programs())
def test_programs_correct_by_construction_prove_and_explore_clean(p: Program) -> None:
    report = certify(p)
    assert _not_proved(report) == [], dumps(p)
    oracle = explore(p, max_states=4_000)
    assert oracle.verdict in ("ok", "inconclusive"), (oracle.verdict, oracle.rules())


@settings(max_examples=max(10, PROFILE_EXAMPLES // 50), suppress_health_check=[HealthCheck.filter_too_much,
                                                                              HealthCheck.too_slow])
@given(composed_programs(shape="chain", broken=False))
def test_a_correct_chain_of_sections_composes_into_a_program_that_proves(p: Program) -> None:
    assert len(p.sections) >= 2
    assert _not_proved(certify(p)) == [], dumps(p)


def _claim(cex: dict[str, Any]) -> tuple[str, dict[str, int], tuple[str, str, tuple[int, ...] | None] | None] | None:
    """What a refutation's counterexample shows: ("violation", trips, (rule, engine, path)) or ("deadlock", trips,
    None); None when it carries no replay."""
    replayed = cex.get("replay") if isinstance(cex.get("replay"), dict) else cex
    if cex.get("kind") == "deadlock":
        return "deadlock", dict(cex.get("trips") or {}), None
    if not isinstance(replayed, dict):
        return None
    if isinstance(replayed.get("deadlock"), dict):
        return "deadlock", dict(replayed.get("trips") or {}), None
    v = replayed.get("violation")
    if not isinstance(v, dict):
        return None
    pos = v["position"]
    path = tuple(pos["path"]) if pos["path"] is not None else None
    return "violation", dict(replayed.get("trips") or {}), (v["rule"], pos["engine"], path)


@settings(max_examples=max(25, PROFILE_EXAMPLES // 40))
@given(programs())
def test_every_refutation_replays_on_the_explorer(p: Program) -> None:
    report = certify(p)
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assume(refuted)
    explored: dict[str, ExploreResult] = {}
    for r in refuted:
        claim = _claim(r.counterexample or {})
        assert claim is not None, (r.name, r.counterexample)
        kind, trips, at = claim
        key = json.dumps(trips, sort_keys=True)
        if key not in explored:
            explored[key] = explore(p, trips=trips or None, max_states=6_000)
        oracle = explored[key]
        if kind == "deadlock":
            assert oracle.deadlocks or not oracle.complete, (r.name, r.reason)
        else:
            seen = {(f.violation.rule, f.violation.position.engine, f.violation.position.path)
                    for f in oracle.violations}
            assert at in seen or not oracle.complete, (r.name, at, sorted(seen, key=str))


@settings(max_examples=max(20, PROFILE_EXAMPLES // 40))
@given(programs())
def test_certificates_are_deterministic_and_round_trip(p: Program) -> None:
    back = loads(dumps(p))
    assert back == p
    # Certified twice (the second time from the program read back, every obligation proved afresh): one certificate.
    first = derive_certificate(p, certify(p))
    again = derive_certificate(back, certify(back, cache=False))
    text = json.dumps(first, sort_keys=True)
    assert json.dumps(again, sort_keys=True) == text
    assert json.loads(text) == first


@settings(max_examples=max(50, PROFILE_EXAMPLES // 5))
@given(model_graphs(max_ops=4), st.booleans())
def test_model_graph_json_round_trip_is_the_identity(graph: ModelGraph, through_text: bool) -> None:
    d = graph_to_dict(graph)
    back = graph_from_dict(json.loads(dumps_graph(graph)) if through_text else d)
    assert back == graph
    assert graph_to_dict(back) == d
