"""Writes into a page an alias has filled but not pushed yet (found by the new-user run; a gap of the rule, pinned).

``alias-clobber`` (docs/semantics.md, "Aliases") protects the pages an aliased buffer *holds unconsumed*, its
``[popped, pushed)``. Here (0,0)'s reader reserves and fills b0's page, then waits for the writer, which reserves and
fills b2 — an alias of b0, same slot — and increments the reader's word; the reader then pushes b0: the compute
reads b2's bytes as b0's page. Undrained (``drain`` False), b2's stores may even land after that push, while b0
holds the page (a FillTiles lands at a drain, docs/semantics.md "Local-store fills"; the clobber is checked at the
op). Neither the interpreter nor the checker finds anything today (every obligation proves, the explorer agrees):
the expected values below are strict xfails until the rule covers a reserved, filled page and a fill's landing."""

from __future__ import annotations

import attrs
import pytest
from builders import GE, A, ep, prog, sem

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    FillTiles,
    Pop,
    Program,
    Push,
    Reserve,
    SemInc,
    SemSet,
    SemWait,
    Wait,
)
from verispatial.ir import rules as R
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore


def overwritten_before_push(drain: bool) -> Program:
    """The program above; ``drain``: whether the writer's fill of b2 ends with its drain."""
    bufs = (Buffer(0, "b0", A, 0, 1, 1, "bf16"), Buffer(1, "b2", A, 2, 1, 1, "bf16", alias_of=0))
    reader = ep(A, Engine.READER, Reserve(0, 1), FillTiles(0, 1, drain=True), SemWait(0, GE, 1), SemSet(0, 0),
                Push(0, 1))
    writer = ep(A, Engine.WRITER, Reserve(1, 1), FillTiles(1, 1, drain=drain), SemInc(0, A, 1), AtomicBarrier())
    p = prog(reader, writer, ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)), buffers=bufs, sems=(sem(0, A),))
    base = WORMHOLE.reserved_base
    return attrs.evolve(p, memory=(BufferAt(0, base, 2048), BufferAt(1, base, 2048)))


@pytest.mark.parametrize("drain", [True, False])
def test_the_program_is_valid(drain: bool) -> None:
    assert validate(overwritten_before_push(drain)) == []


@pytest.mark.xfail(strict=True, reason="alias-clobber protects [popped, pushed) only (report of h/fresh2)")
@pytest.mark.parametrize("drain", [True, False])
def test_the_interpreter_finds_the_overwrite(drain: bool) -> None:
    assert R.ALIAS_CLOBBER in explore(overwritten_before_push(drain)).rules()


@pytest.mark.xfail(strict=True, reason="alias-clobber protects [popped, pushed) only (report of h/fresh2)")
@pytest.mark.parametrize("drain", [True, False])
def test_the_checker_does_not_prove_the_overwrite(drain: bool) -> None:
    results = certify(overwritten_before_push(drain)).results
    assert [r.name for r in results if r.verdict is not Verdict.PROVED]
