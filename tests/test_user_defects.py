"""Defects a fresh user found on main, each as its small input with the right expected value.

1. A second engine claiming a circular buffer's end (``cb-single-consumer`` / ``cb-single-producer``) is reported
   by the interpreter at whichever engine reaches the buffer second; the checker's candidate named the other one, so
   the refutation was never replayed and the program failed to prove where ``simulate`` found the violation."""

from __future__ import annotations

import pytest
from builders import A, CA, WA, buf, ep, prog

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    AcquireAcc,
    Addr,
    Compute,
    Engine,
    FillTiles,
    Op,
    Operand,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReleaseAcc,
    RemoteRead,
    Reserve,
    Role,
    Tensor,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.obligation import BufferRef
from verispatial.petri.interp import simulate

# ---------------------------------------------------------------- 1. a second consumer replayed whichever comes first

#: The writer's uses of b0 that make it b0's consumer, each followed by a page of b2 that tells compute to go on:
#: compute (whose key sorts first) reaches b0 only after the writer claimed it.
_WRITER_CONSUMES: dict[str, tuple[Op, ...]] = {
    "remote_read": (Reserve(1, 1), RemoteRead(0, A, 1, 1), ReadBarrier(), Push(1, 1)),
    "write_tiles": (Wait(0, 1), WriteTiles(0, "Y", Addr(0, ()), 1), WriteBarrier(), Pop(0, 1)),
    "pop": (Wait(0, 1), Pop(0, 1)),
}

#: Compute's uses of b0 that make it a second consumer.
_COMPUTE_CONSUMES: dict[str, tuple[Op, ...]] = {
    "wait_pop": (Wait(0, 1), Pop(0, 1)),
    "compute": (AcquireAcc(1, "bf16"), Compute("add", 1, (Operand(0, 1),)), ReleaseAcc()),
}


def _two_consumers(writer: str, compute: str) -> Program:
    """b0 filled with two pages by the reader; the writer consumes it (``writer``), then hands compute a page of b2, after
    which compute consumes b0 too (``compute``). b1 takes a remote read's pages; compute drains it when it is used."""
    w_ops = _WRITER_CONSUMES[writer]
    reads_b1 = writer == "remote_read"
    c_ops: list[Op] = [Wait(2, 1), Pop(2, 1)]
    if reads_b1:
        c_ops += [Wait(1, 1), Pop(1, 1)]
    c_ops += _COMPUTE_CONSUMES[compute]
    return prog(
        ep(A, Engine.READER, Reserve(0, 2), FillTiles(0, 2), Push(0, 2)),
        ep(A, Engine.WRITER, *w_ops, Reserve(2, 1), FillTiles(2, 1), Push(2, 1)),
        ep(A, Engine.COMPUTE, *c_ops),
        buffers=(buf(0), buf(1), buf(2)),
        tensors=(Tensor("Y", (32, 32), "bf16", Role.OUTPUT),),
    )


@pytest.mark.parametrize("compute", sorted(_COMPUTE_CONSUMES))
@pytest.mark.parametrize("writer", sorted(_WRITER_CONSUMES))
def test_a_second_consumer_is_refuted_and_replayed_whichever_engine_comes_first(writer: str, compute: str) -> None:
    p = _two_consumers(writer, compute)
    seen = [v for v in simulate(p).violations if v.rule == R.CB_SINGLE_CONSUMER]
    assert seen and seen[0].position.engine == CA  # the interpreter meets compute second
    assert seen[0].subject == BufferRef(0)
    got = [r for r in certify(p).results if r.name.startswith(f"{R.CB_SINGLE_CONSUMER}:")]
    assert [r.verdict for r in got] == [Verdict.REFUTED]
    cex = got[0].counterexample
    assert cex is not None and cex["violation"]["rule"] == R.CB_SINGLE_CONSUMER
    assert cex["violation"]["position"]["engine"] in (CA, WA)


def test_a_second_producer_is_refuted_and_replayed_whichever_engine_comes_first() -> None:
    """The writer produces b0 first, then tells compute (through b2) to pack into b0 as well."""
    p = prog(
        ep(A, Engine.WRITER, Reserve(0, 1), FillTiles(0, 1), Push(0, 1), Reserve(2, 1), FillTiles(2, 1), Push(2, 1)),
        ep(A, Engine.COMPUTE, Wait(2, 1), Pop(2, 1), Reserve(0, 1), Push(0, 1)),
        ep(A, Engine.READER, Wait(0, 2), Pop(0, 2)),
        buffers=(buf(0), buf(1), buf(2)),
    )
    seen = [v for v in simulate(p).violations if v.rule == R.CB_SINGLE_PRODUCER]
    assert seen and seen[0].position.engine == CA and seen[0].subject == BufferRef(0)
    got = [r for r in certify(p).results if r.name.startswith(f"{R.CB_SINGLE_PRODUCER}:")]
    assert [r.verdict for r in got] == [Verdict.REFUTED]
