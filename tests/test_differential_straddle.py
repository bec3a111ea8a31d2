"""DIFFERENTIAL for ``cb-straddle``'s accesses from a ring pointer (docs/semantics.md ``cb-straddle``): the checker
against the explicit-state oracle on the pipelines of ``strategies.straddles.straddle_pipeline`` — every access kind
the rule covers (``STRADDLE_ACCESSES``), correct and broken in each of ``STRADDLE_BREAKS`` — alone, and added to
random programs. Agreement is ``test_differential.disagreements``, per obligation (no obligation the oracle breaks
is proved, every refutation is real, deadlock verdicts agree). Programs: 15 + 15 under ``ci``, 1000 + 1000 under
``thorough``."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import assume, given, settings
from test_differential import MAX_STATES, disagreements

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import WORMHOLE, Program
from verispatial.ir import rules as R
from verispatial.ir.serialize import dumps
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.strategies.straddles import (
    STRADDLE_ACCESSES,
    STRADDLE_BREAKS,
    straddle_pipeline,
    straddle_programs,
)

EXAMPLES = {"thorough": 1000, "ci": 15}.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 15)

EMPTY = Program("straddle", WORMHOLE)

#: The explorer's budget for the named pipelines: a remote read's shifted break takes about 11,000 states.
STATES = 20_000

#: One shape per break (and the correct one): a 3-page ring for the blocks that do not divide it, a 4-page ring for
#: the shifted one; two laps pass the ring's end once.
SHAPES: dict[str | None, dict[str, int]] = {
    None: {"cap": 4, "block": 2, "step": 1, "chunk": 1, "laps": 2},
    "block": {"cap": 3, "block": 2, "step": 2, "chunk": 2, "laps": 2},
    "span": {"cap": 3, "block": 2, "step": 1, "chunk": 2, "laps": 2},
    "piecewise": {"cap": 3, "block": 2, "step": 1, "chunk": 1, "laps": 2},
    "shift": {"cap": 4, "block": 2, "step": 1, "chunk": 2, "laps": 2},
}


def pipeline(access: str, broken: str | None, looped: bool = False) -> Program:
    return straddle_pipeline(EMPTY, access, broken=broken, looped=looped, **SHAPES[broken])


@pytest.mark.parametrize("access", STRADDLE_ACCESSES)
def test_each_correct_pipeline_is_never_refuted(access: str) -> None:
    """Correct (the block divides the ring): the oracle finds every interleaving ok and the checker refutes nothing
    (a remote read's source it may fail to prove: the owner waits for ``done`` before it reserves again, which the
    counters do not see); ``cb-straddle`` proves on every ring."""
    p = pipeline(access, None)
    assert validate(p) == []
    assert explore(p, max_states=STATES).verdict == "ok"
    got = {r.name: r.verdict for r in certify(p).results}
    assert Verdict.REFUTED not in got.values(), got
    assert {n: v for n, v in got.items() if n.startswith(R.CB_STRADDLE) and v is not Verdict.PROVED} == {}


@pytest.mark.parametrize("broken", STRADDLE_BREAKS)
@pytest.mark.parametrize("access", STRADDLE_ACCESSES)
def test_each_break_is_a_straddle_the_checker_refutes_as_the_oracle_does(access: str, broken: str) -> None:
    """Every break of every access kind, unrolled: the oracle reaches ``cb-straddle`` and the checker refutes it on
    the ring, by a counterexample the interpreter replays, and agrees with the oracle on every other obligation."""
    p = pipeline(access, broken)
    assert validate(p) == []
    oracle = explore(p, max_states=STATES)
    assert oracle.verdict != "inconclusive"
    assert R.CB_STRADDLE in oracle.rules()
    report = certify(p)
    ring = {r.name: r for r in report.results}[f"{R.CB_STRADDLE}:b0"]
    assert ring.verdict is Verdict.REFUTED, ring
    assert ring.counterexample is not None
    assert ring.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE
    found = disagreements(oracle, report, p)
    assert found == [], "\n".join([*found, dumps(p)])


@pytest.mark.parametrize("broken", [None, *STRADDLE_BREAKS])
def test_the_groups_as_a_loop_agree_with_the_explorer(broken: str | None) -> None:
    """The same pipelines with the groups as one loop (the checker symbolic over its index), for the kinds of one
    site and of two."""
    for access in ("fill", "write", "mcast-front"):
        p = pipeline(access, broken, looped=True)
        oracle = explore(p, max_states=STATES)
        assert oracle.verdict != "inconclusive"
        assert (R.CB_STRADDLE in oracle.rules()) is (broken is not None)
        found = disagreements(oracle, certify(p), p)
        assert found == [], "\n".join([*found, dumps(p)])


@pytest.mark.parametrize("broken", [None, *STRADDLE_BREAKS])
def test_accesses_of_one_tile_of_two_tile_pages_agree_with_the_explorer(broken: str | None) -> None:
    """Two-tile pages moved one tile per access (an access may end inside a page: the checker's reach counts pages,
    the interpreter tiles), for the kinds that move tiles."""
    for access in ("read", "fill", "pack", "copy", "write"):
        p = straddle_pipeline(EMPTY, access, broken=broken, page_tiles=2, by_tile=True, **SHAPES[broken])
        oracle = explore(p, max_states=STATES)
        assert oracle.verdict != "inconclusive"
        assert (R.CB_STRADDLE in oracle.rules()) is (broken is not None)
        found = disagreements(oracle, certify(p), p)
        assert found == [], "\n".join([*found, dumps(p)])


def test_an_unknown_access_or_break_or_a_shape_it_cannot_take_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown straddle access 'scatter'"):
        straddle_pipeline(EMPTY, "scatter", 4, 2, 1, 1, 2)
    with pytest.raises(ValueError, match="unknown straddle break 'wrap'"):
        straddle_pipeline(EMPTY, "fill", 3, 2, 1, 1, 2, broken="wrap")
    with pytest.raises(ValueError, match=re.escape("a correct pipeline needs block | cap")):
        straddle_pipeline(EMPTY, "fill", 3, 2, 1, 1, 2)
    with pytest.raises(ValueError, match="span needs a block that does not divide the capacity"):
        straddle_pipeline(EMPTY, "fill", 4, 2, 1, 2, 2, broken="span")


def _agree(p: Program) -> None:
    oracle = explore(p, max_states=MAX_STATES)
    assume(oracle.verdict != "inconclusive")
    found = disagreements(oracle, certify(p), p)
    assert found == [], "\n".join([*found, dumps(p)])


@settings(max_examples=EXAMPLES, deadline=None)
@given(straddle_programs(alone=True))
def test_checker_agrees_with_the_oracle_on_random_pipelines(p: Program) -> None:
    _agree(p)


@settings(max_examples=EXAMPLES, deadline=None)
@given(straddle_programs())
def test_checker_agrees_with_the_oracle_on_pipelines_added_to_random_programs(p: Program) -> None:
    _agree(p)
