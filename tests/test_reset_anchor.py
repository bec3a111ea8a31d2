"""A reset word whose reset does not directly follow its consuming wait (ops between them, semaphores.py): the
positions between the wait and the reset are reachable. The past-state anchor of reach.py once placed the owner *at
the reset* right after its latest consuming wait, which made every position in between unreachable — and proved
a race there (found by the differential test: the writer waits for the reader's increment, then reads an
activation the reader wrote without a write barrier before the increment). The program as found had its compute
engine issue the NoC reads and increments; the two data-movement engines now do (``validate``: the compute engine
cannot), and the compute engine hands its token to the writer through a buffer page instead of an increment."""

from __future__ import annotations

from pathlib import Path

from verispatial.certify.reach import analyse, solve_each
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir.serialize import load_program
from verispatial.petri.explore import explore

PROGRAM = Path(__file__).parent / "data" / "reset_after_ops.json"


def test_positions_between_a_consuming_wait_and_its_reset_are_reachable() -> None:
    p = load_program(PROGRAM)
    a = analyse(p)
    view = a.views["(0,0).writer"]
    for lf in view.leaves:
        if lf.path in ((4,), (5,), (6,), (7,)):  # after the wait on sem1 at [3], before its reset at [8]
            o, _d, _sq = solve_each(a, lambda sq, lf=lf: sq.enc.position("(0,0).writer").at(lf), "at",
                                    list(a.views), {b.id for b in p.buffers}, 10**7)
            assert o.status.value == "sat", lf.path


def test_the_race_there_is_refuted_and_replayed() -> None:
    p = load_program(PROGRAM)
    ex = explore(p)
    assert any(f.violation.rule == "tensor-race" and f.violation.position.path == (5,) for f in ex.violations)
    r = next(x for x in certify(p, cache=False).results
             if x.name == "hb-activation:act1:(0,0).writer[5]<(0,0).reader[1, 3]")
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    assert "replay" in r.counterexample
