"""The memory family (verispatial/families/memory/): the memory map's rules — buffers live at once disjoint
(``memory-disjoint``, refuted as ``memory-overlap``), inside usable memory (``memory-range``) and aligned
(``memory-align``) — each on a tiny program with the exact expected verdicts and counterexample."""

from __future__ import annotations

import pytest
from builders import A, buf, ep, prog

from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.run import certify
from verispatial.families.memory.encoding import check_memory
from verispatial.ir import (
    WORMHOLE,
    Addr,
    BufferAt,
    Engine,
    Pop,
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
from verispatial.ir.validate import validate

BASE = WORMHOLE.reserved_base
TILE = 2048  # one bf16 tile, one page


def two_bufs(mem: tuple[int, int]) -> Program:
    """(0,0)'s reader fills two 2-page buffers from X, its writer drains them to Y; ``mem``: their byte offsets."""
    r = ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1),
           Reserve(1, 1), ReadTiles("X", Addr(1), 1, 1), ReadBarrier(), Push(1, 1))
    w = ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1),
           Wait(1, 1), WriteTiles(1, "Y", Addr(1), 1), WriteBarrier(), Pop(1, 1))
    p = prog(r, w, buffers=(buf(0, cap=2), buf(1, cap=2)),
             tensors=(Tensor("X", (32, 64), "bf16", Role.INPUT), Tensor("Y", (32, 64), "bf16", Role.OUTPUT)),
             memory=(BufferAt(0, mem[0], 2 * TILE), BufferAt(1, mem[1], 2 * TILE)))
    assert validate(p) == []
    return p


def not_proved(report: Report) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in report.results if r.verdict != Verdict.PROVED}


def one(report: Report, name: str) -> Result:
    (r,) = [r for r in report.results if r.name == name]
    return r


def cex(r: Result) -> dict[str, object]:
    assert r.counterexample is not None, r.name
    return r.counterexample


def test_disjoint_buffers_prove_the_memory_family() -> None:
    got = {r.name: r.verdict for r in check_memory(two_bufs((BASE, BASE + 2 * TILE)))}
    assert got == {"memory-disjoint:(0,0).local.phase0": Verdict.PROVED}  # memory-range: only for a buffer out of place
    assert certify(two_bufs((BASE, BASE + 2 * TILE))).exit_code == 0


def test_memory_overlap_names_both_buffers_and_a_shared_byte() -> None:
    p = two_bufs((BASE, BASE + TILE))
    report = certify(p)
    assert not_proved(report) == {"memory-disjoint:(0,0).local.phase0": Verdict.REFUTED}
    c = cex(one(report, "memory-disjoint:(0,0).local.phase0"))
    assert (c["rule"], c["site"], c["space"], c["buffers"]) == (R.MEMORY_OVERLAP, [0, 0], "local", [0, 1])
    addr = c["address"]
    assert isinstance(addr, int)
    assert all(m.offset <= addr < m.offset + m.size for m in p.memory)


@pytest.mark.parametrize(("mem", "name", "rule", "address", "reason"), [
    ((BASE, BASE + 2 * TILE + 8), "memory-range:b1", R.MEMORY_ALIGN, BASE + 2 * TILE + 8,
     f"b1 at offset {BASE + 2 * TILE + 8} is not 16-byte aligned"),
    ((BASE - 16, BASE + 2 * TILE), "memory-range:b0", R.MEMORY_RANGE, BASE - 16,
     f"b0 (buf0) on (0,0) occupies [{BASE - 16}, {BASE - 16 + 2 * TILE}) outside usable [{BASE}, 1499136)"),
    ((BASE, WORMHOLE.local_bytes - TILE), "memory-range:b1", R.MEMORY_RANGE, WORMHOLE.local_bytes,
     f"b1 (buf1) on (0,0) occupies [{WORMHOLE.local_bytes - TILE}, {WORMHOLE.local_bytes + TILE}) outside usable "
     f"[{BASE}, 1499136)"),
], ids=["misaligned", "below-reserved-base", "past-the-end"])
def test_memory_alignment_and_range(mem: tuple[int, int], name: str, rule: str, address: int, reason: str) -> None:
    report = certify(two_bufs(mem))
    assert not_proved(report) == {name: Verdict.REFUTED}
    r = one(report, name)
    assert r.reason == reason
    assert (cex(r)["rule"], cex(r)["address"]) == (rule, address)
