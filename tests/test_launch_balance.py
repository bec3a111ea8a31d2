"""Pages left in a buffer at the end of a launch (issue 16, "constant and persistent buffers"). A launch resets every
circular buffer (trisc.cc init_sync_registers zeroes the received/acked counters after each run;
circular_buffer_init.h sets the pointers at the next launch), so a constant tile waited once and never popped — a
reduce scaler, a mask — is correct as the vendor writes it; pages a section leaves where a later section of the same
launch reuses the circular-buffer index, or in a buffer marked persistent, are a finding: refuted and replayed."""

from __future__ import annotations

import attrs
from builders import A, chain, copy_section, ep, prog

from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    Loop,
    Pop,
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
from verispatial.ir.serialize import dumps, loads
from verispatial.passes.compose import compose
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate


def _verdicts(report: Report) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in report.results}


def constant_scaler(persistent: bool = False) -> object:
    """The reader fills a one-page scaler buffer once (b1) and streams 4 tiles through b0; the writer waits for the
    scaler once and never pops it, as reduce kernels wait for generate_reduce_scaler's page."""
    at = Addr(0, ())
    reader = ep(A, Engine.READER, Reserve(1, 1), ReadTiles("S", at, 1, 1), ReadBarrier(), Push(1, 1),
                Loop("k", 4, (Reserve(0, 1), ReadTiles("X", Addr(0, ()), 1, 0), ReadBarrier(), Push(0, 1))))
    writer = ep(A, Engine.WRITER, Wait(1, 1),
                Loop("k", 4, (Wait(0, 1), WriteTiles(0, "Y", Addr(0, ()), 1), WriteBarrier(), Pop(0, 1))))
    tensors = (Tensor("S", (32, 32), "bf16", Role.INPUT), Tensor("X", (32, 32), "bf16", Role.INPUT),
               Tensor("Y", (32, 32), "bf16", Role.OUTPUT))
    bufs = (Buffer(0, "c_0", A, 0, 1, 2, "bf16"), Buffer(1, "c_2", A, 2, 1, 1, "bf16", persistent=persistent))
    p = prog(reader, writer, buffers=bufs, tensors=tensors)
    return attrs.evolve(p, memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * 2048),
                                   BufferAt(1, WORMHOLE.reserved_base + 2 * 2048, 2048)))


def test_a_constant_tile_waited_once_and_never_popped_proves() -> None:
    p = constant_scaler()
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert "the launch's end resets its counters" in next(r.reason for r in report.results
                                                          if r.name == "balance-cb:b1")
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"


def test_a_persistent_buffer_left_holding_a_page_is_refuted() -> None:
    p = constant_scaler(persistent=True)
    assert loads(dumps(p)).buffers[1].persistent  # the flag survives JSON
    report = certify(p, cache=False)
    assert _verdicts(report)["balance-cb:b1"] == Verdict.REFUTED
    r = next(r for r in report.results if r.name == "balance-cb:b1")
    assert r.counterexample is not None
    assert "replay" in r.counterexample
    assert simulate(p).rules() == ["balance-cb"]
    assert explore(p).verdict != "ok"


def test_a_flag_written_only_when_set_keeps_older_documents_byte_for_byte() -> None:
    p = constant_scaler()
    assert '"persistent"' not in dumps(p)


def _leaves_a_page(name: str) -> object:
    """A copy section whose reader pushes one page more than its writer pops."""
    sec = copy_section(name, A, "X", "A0")
    reader = sec.programs[0]
    extra = (Reserve(0, 1), ReadTiles("X", Addr(0, ()), 1, 0), ReadBarrier(), Push(0, 1))
    return attrs.evolve(sec, programs=(attrs.evolve(reader, ops=(*reader.ops, *extra)), *sec.programs[1:]))


def test_pages_a_section_leaves_for_a_later_section_at_the_same_index_are_refuted() -> None:
    first = _leaves_a_page("copy0")
    second = chain(A, A)[1]
    p, _ = compose([first, second], target=WORMHOLE)
    assert [b.cb for b in p.buffers] == [0, 0]
    assert p.counters_reused() == {0: "b1 (s1.c_0) of a later section counts on from them"}
    report = certify(p)
    bad = {n: v for n, v in _verdicts(report).items() if v != Verdict.PROVED}
    assert bad.get("slice0/balance-cb:b0") == Verdict.REFUTED or bad.get("balance-cb:b0") == Verdict.REFUTED, bad
    sim = simulate(p)
    assert "balance-cb" in sim.rules()
    # The same section alone, launched once, leaves its page harmlessly.
    alone = certify(first, cache=False)
    assert _verdicts(alone)["balance-cb:b0"] == Verdict.PROVED
    assert simulate(first).rules() == []
