"""A barrier that may pass early under a ``num_dests`` below the group's (docs/semantics.md "Acknowledgement counts",
too few: acknowledgements received equal those expected while a landing is still due) proves nothing that reads it as
"the writes before it landed" — including the ops where the checker found nothing. Found by the differential test once
the generators drew remote writes of ``num_dests`` 0 (``strategies/programs.py`` ``_remote``): the interpreter reached
``async-inc-overtake`` at an increment after the write barrier, and the checker, which had refuted only the increment
before the barrier, had no obligation left that spoke of the later one (its other findings stood for "nowhere else")."""

from __future__ import annotations

import attrs
import pytest
from test_differential import claims, disagreements

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Buffer,
    Engine,
    EngineProgram,
    Group,
    McastSend,
    Program,
    Semaphore,
    SemInc,
    Site,
    WriteBarrier,
)
from verispatial.ir import rules as R
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.strategies.programs import packed_memory

A, B = Site(0, 0), Site(1, 0)


def _remote_write_then_two_increments(num_dests: int) -> Program:
    """(0,0)'s reader writes a page of b1 into (1,0)'s b2 at its pointer of its copy b0 (a remote write: a multicast on
    the one-core group of (1,0), ``McastSend(dst=...)``) stating ``num_dests``, increments a word of (1,0), waits for
    the write (``WriteBarrier``) and increments another."""
    buffers = (Buffer(0, "cb0", A, 0, 1, 2, "bf16"), Buffer(1, "cb1", A, 1, 1, 2, "bf16"),
               Buffer(2, "cb2", B, 0, 1, 2, "bf16"))
    reader = EngineProgram(A, Engine.READER, (McastSend(1, 1, 0, num_dests, dst=0), SemInc(0, B, 1), WriteBarrier(),
                                              SemInc(1, B, 1)))
    p = Program("remote_write_count", WORMHOLE, buffers=buffers,
                semaphores=(Semaphore(0, "sem0", (B,), 0), Semaphore(1, "sem1", (B,), 0)),
                groups=(Group(0, A, (1, 0, 1, 0)),), programs=(reader,))
    return attrs.evolve(p, memory=packed_memory(p))


@pytest.mark.parametrize("num_dests", [0, 1])
def test_an_increment_after_a_barrier_that_may_pass_early_is_not_claimed(num_dests: int) -> None:
    p = _remote_write_then_two_increments(num_dests)
    assert validate(p) == []
    oracle = explore(p)
    report = certify(p, cache=False)
    assert disagreements(oracle, report, p) == []
    late = [f.violation for f in oracle.violations
            if f.violation.rule == R.ASYNC_INC_OVERTAKE and f.violation.position.path == (3,)]
    if num_dests == 1:  # the exact count: the barrier lands the write, the later increment is safe
        assert late == []
        return
    assert late, oracle.text()
    mine = claims(p, report, late[0])
    assert mine, [r.name for r in report.results]
    assert all(r.verdict != Verdict.PROVED for r in mine)
