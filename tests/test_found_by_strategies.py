"""Faults the public strategies found (``verispatial.strategies``), each as the small program that shows it.

A write barrier under ``If(i, not_last)`` in a loop of one iteration never runs: the reader's write of ``act``
is still in flight when its increment lets the compute engine read ``act`` (the explorer reaches ``tensor-race``
at that read). The checker must not prove the ordering obligation of that read. Found by
``tests/test_differential_protocols.py`` (the ``guard`` rewrite wrapped a write barrier in an ``If``); reported to
the lead. Under ``If(i, last)`` the barrier runs and the program is correct.
"""

from __future__ import annotations

import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Guard,
    If,
    Loop,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore

ORDER = "hb-activation:act:(0,0).writer[2]<(0,0).reader[0, 1]"


def guarded_barrier(guard: Guard) -> Program:
    """The compute engine fills b0 (a pack); the reader writes it out to ``act`` (tile i), completes the write under
    ``If(i, guard)``, signals ``ready`` and pops; the writer waits for ``ready`` and reads ``act`` into b1, which the
    reader drains. (As found, the compute engine issued the read and the writer filled b0 by a read: the NoC read is
    a data-movement engine's, so the two swapped.)"""
    s = Site(0, 0)
    tile = WORMHOLE.bytes_per_tile("bf16")
    compute = EngineProgram(s, Engine.COMPUTE, (Reserve(0, 1), AcquireAcc(1, "bf16"), PackAcc(0, 1), ReleaseAcc(),
                                                Push(0, 1)))
    reader = EngineProgram(s, Engine.READER, (
        Loop("i", 1, (Wait(0, 1), WriteTiles(0, "act", Addr(0, (Term("i", 1),)), 1), If("i", guard, (WriteBarrier(),)),
                      SemInc(0, s, 1), Pop(0, 1))),
        Wait(1, 1), Pop(1, 1), AtomicBarrier(), WriteBarrier()))
    writer = EngineProgram(s, Engine.WRITER, (SemWait(0, WaitCond.GE, 1), Reserve(1, 1), ReadTiles("act", Addr(0), 1, 1),
                                              ReadBarrier(), Push(1, 1), SemSet(0, 0)))
    return Program("guarded_barrier", WORMHOLE,
                   tensors=(Tensor("act", (32, 32), "bf16", Role.ACTIVATION),),
                   buffers=(Buffer(0, "cb0", s, 0, 1, 1, "bf16"), Buffer(1, "cb1", s, 1, 1, 1, "bf16")),
                   semaphores=(Semaphore(0, "ready", (s,), 0),), programs=(compute, reader, writer),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, tile), BufferAt(1, WORMHOLE.reserved_base + tile, tile)))


@pytest.mark.xfail(strict=True, reason="precision, not soundness: since the reset word's past state is the one right "
                   "after its consuming wait (reach.py, a soundness fix), the read-after-write query here fails to "
                   "prove (its candidate does not replay); the program is correct (the explorer says ok)")
def test_a_barrier_that_runs_orders_the_read() -> None:
    p = guarded_barrier(Guard.LAST)
    assert validate(p) == []
    assert explore(p).verdict == "ok"
    report = certify(p)
    assert report.exit_code == 0
    assert next(r for r in report.results if r.name == ORDER).verdict == Verdict.PROVED


def test_a_barrier_that_never_runs_does_not_order_the_read() -> None:
    p = guarded_barrier(Guard.NOT_LAST)
    assert validate(p) == []
    oracle = explore(p)
    assert "tensor-race" in oracle.rules()  # the oracle reaches the race at the writer's read
    report = certify(p)
    assert next(r for r in report.results if r.name == ORDER).verdict != Verdict.PROVED
