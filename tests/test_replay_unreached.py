"""A rule candidate at an op no run of the interpreter reaches is explored only within the program's work bound
(certify/replay.py ``confirm_rule``'s ``unreached_cap``, docs/checker.md "Counterexamples").

The input: core (0,0)'s reader fills its two-page ring (pushing pages it never wrote) and reserves it again with
nothing popping it (a deadlock at the second reserve), then pushes again: the second push is a ``cb-push-unfilled``
candidate no run reaches; core (1,0) is a
producer and a consumer passing ``N`` pages, whose interleavings make the explorer's states. Before, the explorer
walked 60,000 states for such a candidate (examples/ttmetal/sort: 13 s of its 14.6 s of CPU) and found nothing; the
obligation was failed-to-prove and stays so."""

from __future__ import annotations

import json

from verispatial.certify import replay
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import rules as R
from verispatial.ir.program import Program
from verispatial.ir.serialize import loads

N = 60


def _program() -> Program:
    def buf(i: int, site: list[int]) -> dict[str, object]:
        return {"id": i, "name": f"c_{i}", "site": site, "cb": i, "page_tiles": 1, "capacity": 2, "dtype": "bf16",
                "space": "local", "alias_of": None, "section": 0}

    def loop(body: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{"op": "loop", "var": "k", "count": N, "body": body}]

    def engine(site: list[int], name: str, ops: list[dict[str, object]]) -> dict[str, object]:
        return {"site": site, "engine": name, "ops": ops, "section_starts": []}

    doc = {
        "format": "verispatial.program", "version": 2, "name": "push_behind_a_hang", "target": "wormhole_b0",
        "tensors": [{"name": "Y", "shape": [32, 64], "dtype": "bf16", "role": "output", "init": None}],
        "buffers": [buf(0, [0, 0]), buf(1, [1, 0])], "semaphores": [], "groups": [], "trips": [],
        "programs": [
            engine([0, 0], "reader", [{"op": "reserve", "buf": 0, "pages": 2}, {"op": "push", "buf": 0, "pages": 2},
                                      {"op": "reserve", "buf": 0, "pages": 2}, {"op": "push", "buf": 0, "pages": 2}]),
            engine([0, 0], "writer", [{"op": "wait", "buf": 0, "pages": 2},
                                      {"op": "write_tiles", "src": 0, "tensor": "Y", "addr": {"base": 0, "terms": [],
                                                                                        "dynamic": None}, "tiles": 2},
                                      {"op": "write_barrier"}]),
            engine([1, 0], "reader", loop([{"op": "reserve", "buf": 1, "pages": 1},
                                           {"op": "push", "buf": 1, "pages": 1}])),
            engine([1, 0], "writer", loop([{"op": "wait", "buf": 1, "pages": 1}, {"op": "pop", "buf": 1, "pages": 1}])),
        ],
        "sections": [{"name": "main", "barrier_after": False}],
        "memory": [{"buf": 0, "offset": 103712, "size": 4096}, {"buf": 1, "offset": 103712, "size": 4096}],
    }
    return loads(json.dumps(doc))


def test_a_candidate_no_run_reaches_is_explored_within_the_work_bound() -> None:
    program = _program()
    cap = 100
    replay._EXPLORED.clear()
    assert replay.confirm_rule(program, {R.CB_PUSH_UNFILLED}, None, "(0,0).reader", (3,), unreached_cap=cap) is None
    bounded = max(x.visited for x in replay._EXPLORED.values())
    assert bounded <= cap + 1
    # without the bound the same candidate is walked past it (the search the bound saves), and found nowhere
    replay._EXPLORED.clear()
    assert replay.confirm_rule(program, {R.CB_PUSH_UNFILLED}, None, "(0,0).reader", (3,)) is None
    assert max(x.visited for x in replay._EXPLORED.values()) > bounded


def test_a_candidate_behind_a_hang_stays_failed_to_prove_and_the_hang_refuted() -> None:
    """The bound turns nothing into a proof: the push is failed-to-prove (not replayed), the deadlock refuted."""
    report = certify(_program())
    got = {r.name: r.verdict for r in report.results}
    assert got[f"{R.CB_PUSH_UNFILLED}:(0,0).reader:[3]"] == Verdict.FAILED
    assert any(n.startswith("deadlock:") and v == Verdict.REFUTED for n, v in got.items()), got


def test_reached_is_the_op_run_or_the_engine_in_front_of_it() -> None:
    from verispatial.petri.interp import simulate

    run = simulate(_program())
    assert replay.reached(run, [("(0,0).reader", [2])])  # stuck in front of the second reserve
    assert replay.reached(run, [("(0,0).reader", (1,))])  # the first push ran
    assert not replay.reached(run, [("(0,0).reader", [3])])
    assert replay.reached(run, [(None, None)])
