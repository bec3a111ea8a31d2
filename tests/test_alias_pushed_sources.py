"""Pages already pushed whose bytes an alias refills (found by the new-user run).

``mcast-source-unpublished`` (docs/semantics.md, "Multicast of pages already pushed") asks that the sender has not
reserved the source pages' slots again; a page is its bytes, "ring slot ``j`` of a buffer and slot ``j`` of every
buffer aliasing it" (docs/semantics.md, "Sources of asynchronous writes"). Here (0,0)'s reader pushes b0's page,
the writer pops it and then reserves, fills and pushes b2 — an alias of b0 — in the same slot, and only then (told
by word 1) the reader multicasts b0's page from the address it took before its push: the multicast sends b2's
bytes, not the page the reader published. The interpreter checks only the sender's own reserve, so the explorer
finds nothing (the gap, pinned as a strict xfail); the checker does not prove the program (never proved while the
interpreter is silent)."""

from __future__ import annotations

import attrs
import pytest
from builders import GE, A, B, ep, prog, sem

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    FillTiles,
    Group,
    McastSend,
    Pop,
    Program,
    Push,
    Reserve,
    SemInc,
    SemSet,
    SemWait,
    Wait,
    WriteBarrier,
)
from verispatial.ir import rules as R
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore


def refilled_by_alias(alias: bool = True) -> Program:
    """The program above; ``alias`` False: b2 has bytes of its own (then nothing refills b0's slot)."""
    bufs = (Buffer(0, "b0", A, 0, 1, 1, "bf16"), Buffer(1, "b1", B, 0, 1, 1, "bf16"),
            Buffer(2, "b2", A, 2, 1, 1, "bf16", alias_of=0 if alias else None))
    reader = ep(A, Engine.READER, Reserve(0, 1), FillTiles(0, 1, drain=True), Push(0, 1), SemWait(1, GE, 1),
                McastSend(0, 1, 0, 1, behind=1), WriteBarrier(), SemInc(0, B, 1), AtomicBarrier(), SemSet(1, 0))
    writer = ep(A, Engine.WRITER, Wait(0, 1), Pop(0, 1), Reserve(2, 1), FillTiles(2, 1, drain=True), Push(2, 1),
                SemInc(1, A, 1), AtomicBarrier())
    p = prog(reader, writer, ep(A, Engine.COMPUTE, Wait(2, 1), Pop(2, 1)),
             ep(B, Engine.READER, Reserve(1, 1), SemWait(0, GE, 1), Push(1, 1), SemSet(0, 0)),
             ep(B, Engine.COMPUTE, Wait(1, 1), Pop(1, 1)),
             buffers=bufs, groups=(Group(0, A, (1, 0, 1, 0)),), sems=(sem(0, B), sem(1, A)))
    base = WORMHOLE.reserved_base
    return attrs.evolve(p, memory=(BufferAt(0, base, 2048), BufferAt(1, base, 2048),
                                   BufferAt(2, base if alias else base + 4096, 2048)))


def test_the_checker_does_not_prove_a_multicast_of_a_slot_an_alias_refilled() -> None:
    p = refilled_by_alias()
    assert validate(p) == []
    assert [r.name for r in certify(p).results if r.verdict is not Verdict.PROVED], "proved while the bytes sent are b2's"


def test_without_the_alias_every_obligation_proves() -> None:
    p = refilled_by_alias(alias=False)
    assert explore(p).rules() == []
    assert [r.name for r in certify(p).results if r.verdict is not Verdict.PROVED] == []


@pytest.mark.xfail(strict=True, reason="the interpreter's mcast-source-unpublished checks only the sender's own "
                                       "reserve, not an alias's refill of the slot (report of h/fresh2)")
def test_the_interpreter_finds_the_alias_refill_of_a_pushed_source() -> None:
    assert R.MCAST_SOURCE_UNPUBLISHED in explore(refilled_by_alias()).rules()
