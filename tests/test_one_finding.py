"""One root cause, one finding (issue 16, item 8): identical obligations get identical verdicts.

Three buffers left holding a page each, alike in everything but their index, are three refuted ``balance-cb``
obligations, each replayed by the interpreter — not one refuted and two failed to prove because the interpreter
kept one violation per (rule, engine, op) and dropped the other buffers'."""

from __future__ import annotations

from builders import A, ep

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    Engine,
    Op,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
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


def _never_popped(n: int) -> Program:
    """``n`` persistent one-page buffers on one site, each filled once and waited once, none popped."""
    bufs = tuple(Buffer(i, f"c_{i}", A, i, 1, 2, "bf16", persistent=True) for i in range(n))
    reader: list[Op] = []
    writer: list[Op] = []
    for i in range(n):
        reader += [Reserve(i, 1), ReadTiles("X", Addr(i, ()), 1, i), ReadBarrier(), Push(i, 1)]
        writer += [Wait(i, 1), WriteTiles(i, "Y", Addr(i, ()), 1), WriteBarrier()]
    tensors = (Tensor("X", (32, 32 * n), "bf16", Role.INPUT), Tensor("Y", (32, 32 * n), "bf16", Role.OUTPUT))
    return Program("never_popped", WORMHOLE, tensors=tensors, buffers=bufs,
                   programs=(ep(A, Engine.READER, *reader), ep(A, Engine.WRITER, *writer)))


def test_the_interpreter_reports_each_buffer_left_holding_pages() -> None:
    got = simulate(_never_popped(3))
    subjects = [v.subject for v in got.violations if v.rule == R.BALANCE_CB]
    assert subjects == [BufferRef(0), BufferRef(1), BufferRef(2)]


def test_identical_obligations_get_identical_verdicts() -> None:
    report = certify(_never_popped(3))
    balance = {r.name: r for r in report.results if r.name.startswith(f"{R.BALANCE_CB}:")}
    assert sorted(balance) == [f"{R.BALANCE_CB}:b{i}" for i in range(3)]
    assert {r.verdict for r in balance.values()} == {Verdict.REFUTED}
    assert all(r.counterexample is not None and "replay" in r.counterexample for r in balance.values())
