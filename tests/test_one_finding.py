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


def _composed_never_popped(n: int) -> Program:
    """Section 0 leaves a page in each of ``n`` alike buffers whose circular-buffer indices section 1 reuses (its own
    ``n`` buffers, popped), so the counters are handed on within the launch: each left page is a finding."""
    from verispatial.ir import BufferAt, Pop
    from verispatial.passes.compose import compose

    def section(name: str, x: str, y: str, *, pop: bool) -> Program:
        bufs = tuple(Buffer(i, f"c_{i}", A, i, 1, 2, "bf16") for i in range(n))
        reader: list[Op] = []
        writer: list[Op] = []
        for i in range(n):
            reader += [Reserve(i, 1), ReadTiles(x, Addr(i, ()), 1, i), ReadBarrier(), Push(i, 1)]
            writer += [Wait(i, 1), WriteTiles(i, y, Addr(i, ()), 1), WriteBarrier(), *((Pop(i, 1),) if pop else ())]
        tensors = (Tensor(x, (32, 32 * n), "bf16", Role.INPUT), Tensor(y, (32, 32 * n), "bf16", Role.OUTPUT))
        memory = tuple(BufferAt(i, WORMHOLE.reserved_base + i * 2 * 2048, 2 * 2048) for i in range(n))
        return Program(name, WORMHOLE, tensors=tensors, buffers=bufs, memory=memory,
                       programs=(ep(A, Engine.READER, *reader), ep(A, Engine.WRITER, *writer)))

    p, _ = compose([section("s0", "X", "Y", pop=False), section("s1", "U", "V", pop=True)], target=WORMHOLE)
    return p


def test_alike_pages_a_section_hands_on_get_alike_verdicts() -> None:
    p = _composed_never_popped(3)
    assert sorted(p.counters_reused()) == [0, 1, 2]
    assert [v.subject for v in simulate(p).violations if v.rule == R.BALANCE_CB] == [BufferRef(i) for i in range(3)]
    report = certify(p, cache=False)
    bad = {r.name: r for r in report.results if r.verdict is not Verdict.PROVED}
    assert sorted(bad) == [f"slice0/{R.BALANCE_CB}:b{i}" for i in range(3)]
    assert {r.verdict for r in bad.values()} == {Verdict.REFUTED}
    assert all(r.counterexample is not None and "replay" in r.counterexample for r in bad.values())


def test_what_a_vendor_hang_leaves_unreached_is_grouped_under_it() -> None:
    """tt-metal #52348's transcription (``examples/vendor/broken/sampling_wt1_wait2.json``) with every buffer
    persistent: compute hangs at ``sampling.cpp:252`` before it packs into c_5 and before anything could drain it,
    so c_5's balance and the pack past its window are unreached: consequences of the one deadlock, no other
    failed-to-prove."""
    from pathlib import Path

    import attrs

    from verispatial.ir.serialize import load_program
    from verispatial.report.consequences import group

    vendor = Path(__file__).resolve().parent.parent / "examples" / "vendor" / "broken" / "sampling_wt1_wait2.json"
    p = load_program(vendor)
    p = attrs.evolve(p, buffers=tuple(attrs.evolve(b, persistent=True) for b in p.buffers))
    report = certify(p, cache=False)
    grouping = group(report, p)
    (finding,) = grouping.findings
    assert finding.startswith(f"{R.DEADLOCK}:")
    assert grouping.others == ()
    assert sorted(grouping.under(finding)) == sorted(
        r.name for r in report.results if r.verdict is Verdict.FAILED)
    assert f"{R.BALANCE_CB}:b1" in grouping.under(finding)
