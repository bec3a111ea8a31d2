"""The schedule witness (certify/schedule.py) on a wide multicast grid: the 8x4 matmul section proves, and broken
variants of it are refuted with replayed counterexamples (a witness that does not check never passes)."""

from __future__ import annotations

import functools

import attrs
import pytest

from verispatial.certify.deadlock import check_deadlock
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.ir.graph import GraphBuilder
from verispatial.ir.ops import Loop, Op, SemInc, SemWait
from verispatial.ir.program import Program
from verispatial.ir.target import WORMHOLE
from verispatial.passes.compile import compile_section
from verispatial.passes.pipeline import Pipeline, capped_passes
from verispatial.petri.interp import simulate


@functools.cache
def grid(cols: int, rows: int) -> Program:
    """The prefill-like matmul [128,256] @ [256,256] (bf16) on a ``cols`` x ``rows`` Wormhole grid, accumulating by
    spill and reload over its 4 K blocks (the vendor example's form: the longest compute programs, the case the
    whole-component search cannot decide; the default streaming form of a 1x1-tile site block it can)."""
    b = GraphBuilder("g")
    b.tensor("a", [128, 256], role="input")
    b.tensor("w", [256, 256], role="param")
    b.tensor("o", [128, 256], role="output")
    b.matmul("mm", "a", "w", "o")
    p, _ = compile_section(b.build(), 0, WORMHOLE, Pipeline(capped_passes(max_cols=cols, max_rows=rows,
                                                                                  acc_form="spill_reload")))
    return p


def _edit(p: Program, key: str, f: object) -> Program:
    progs = tuple(attrs.evolve(ep, ops=f(ep.ops)) if ep.key == key else ep for ep in p.programs)  # type: ignore[operator]
    return attrs.evolve(p, programs=progs)


def _map(ops: tuple[Op, ...], fn: object) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Loop):
            out.append(attrs.evolve(op, body=_map(op.body, fn)))
        else:
            new = fn(op)  # type: ignore[operator]
            if new is not None:
                out.append(new)
    return tuple(out)


def test_8x4_matmul_deadlock_proves_by_schedule_witness() -> None:
    p = grid(8, 4)
    assert len(p.programs) == 96
    a = analyse(p)
    trusted = {b.id for b in p.buffers}
    (search,) = check_deadlock(a, trusted, method="search")
    assert search.verdict == Verdict.FAILED  # the whole-component query exhausts its budget
    (dl,) = check_deadlock(a, trusted, method="schedule")
    assert (dl.name, dl.verdict) == ("deadlock:(0,0).compute+95", Verdict.PROVED)
    assert dl.reason == "96 engines, schedule witness checked symbolically over loop indices"
    assert dl.seconds < 60
    assert simulate(p).status == "terminated"


def _drop_ready_inc(p: Program) -> Program:
    """Receiver (3,0) never increments its sender's ready counter (in0 row multicast)."""
    return _edit(p, "(3,0).reader", lambda ops: _map(ops, lambda op: None if isinstance(op, SemInc) and op.sem == 0 else op))


def _ready_count_off(p: Program) -> Program:
    """The row sender (0,1) waits for one more ready increment than it has receivers."""
    return _edit(p, "(0,1).reader", lambda ops: _map(
        ops, lambda op: attrs.evolve(op, value=op.value + 1) if isinstance(op, SemWait) and op.sem == 0 else op))


def cut(p: Program, buf: int, capacity: int) -> Program:
    """Buffer ``buf`` with ``capacity`` pages (its memory map entry shrunk to match)."""
    old = p.buffers[buf].capacity
    return attrs.evolve(
        p, buffers=tuple(attrs.evolve(x, capacity=capacity) if x.id == buf else x for x in p.buffers),
        memory=tuple(attrs.evolve(m, size=m.size * capacity // old) if m.buf == buf else m for m in p.memory))


def _depth_cut(p: Program) -> Program:
    """Receiver (2,1)'s in0 buffer cut to 2 pages: its 4-page reservation can never be granted."""
    (in0,) = [b.id for b in p.buffers if b.name == "c_0" and (b.site.x, b.site.y) == (2, 1)]
    return cut(p, in0, 2)


@pytest.mark.parametrize("mutate", [_drop_ready_inc, _ready_count_off, _depth_cut],
                         ids=["ready-inc-dropped", "ready-wait-off-by-one", "cb-depth-cut"])
def test_broken_wide_grid_is_refuted_with_a_replayed_deadlock(mutate: object) -> None:
    p = mutate(grid(8, 2))  # type: ignore[operator]
    assert simulate(p).status == "deadlock"
    a = analyse(p)
    (dl,) = check_deadlock(a, {b.id for b in p.buffers})
    assert dl.verdict == Verdict.REFUTED
    assert dl.counterexample is not None
    assert dl.counterexample["kind"] == "deadlock"
    assert dl.counterexample["replayed_by"]
