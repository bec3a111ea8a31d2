"""The circular-buffer family (verispatial/families/cb/): its rules in the reference interpreter, each on a tiny
program with the exact expected outcome, and the same op found by each chain (interpreter, per-engine rules, Promela
model) that gives Reserve, Push, Wait and Pop their meaning."""

from __future__ import annotations

import re

from builders import CA, RA, WA, A, buf, ep, prog
from family_checks import only, where

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.families.cb import encoding, promela, semantics
from verispatial.ir import (
    Addr,
    CopyTiles,
    Engine,
    FillTiles,
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
from verispatial.ir.data import data_buffers
from verispatial.petri.interp import Interp, simulate
from verispatial.petri.promela import _Gen, to_promela


def test_cb_capacity_reserve_5_on_4() -> None:
    r = simulate(prog(ep(A, Engine.READER, Reserve(0, 5), Push(0, 5)), buffers=(buf(0),)))
    v = only(r)
    assert where(v) == ("cb-capacity", RA, (0,), ())
    assert v.message == "reserve(b0, 5) asks for 5 pages of b0, whose capacity is 4"
    assert r.status == "deadlock"
    assert r.stuck[0].reason == "waits for space in b0: asks 5 pages of a 4-page buffer (never fits)"


def test_cb_capacity_wait_reported_when_reached() -> None:
    r = simulate(prog(ep(A, Engine.WRITER, ReadBarrier(), Wait(0, 6)), buffers=(buf(0),)))
    assert where(only(r)) == ("cb-capacity", WA, (1,), ())


def test_cb_single_producer() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 1), Push(0, 1)),
             ep(A, Engine.WRITER, ReadBarrier(), Reserve(0, 1), Push(0, 1)),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)), buffers=(buf(0),))
    r = simulate(p)
    assert [where(v) for v in r.violations] == [("cb-single-producer", WA, (1,), ()),
                                                ("cb-single-producer", WA, (2,), ())]
    assert r.violations[0].message == "b0 already has (0,0).reader as the engine that produces it"


def test_cb_single_consumer() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 2), Push(0, 2)), ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1)),
             ep(A, Engine.WRITER, ReadBarrier(), ReadBarrier(), Wait(0, 1), Pop(0, 1)), buffers=(buf(0),))
    r = simulate(p)
    assert r.status == "terminated"
    assert [where(v) for v in r.violations] == [("cb-single-consumer", WA, (2,), ()),
                                                ("cb-single-consumer", WA, (3,), ())]


def test_cb_push_uncovered() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 2), Push(0, 2), Reserve(0, 1), Push(0, 2)),
             ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)), buffers=(buf(0),))
    v = only(simulate(p))
    assert where(v) == ("cb-push-uncovered", RA, (3,), ())
    assert v.message == "push(b0, 2) publishes pages [2, 4) but the reserved window is [2, 3)"


def test_one_reserve_covers_two_pushes_and_one_wait_two_pops() -> None:
    """cb_reserve_back is only a wait (reference §1.1): the window [pushed, rsv_end) a Reserve(4) opens covers two
    Push(2); likewise a Wait(4) covers two Pop(2)."""
    p = prog(ep(A, Engine.READER, Reserve(0, 4), Push(0, 2), Push(0, 2)),
             ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 2), Pop(0, 2)), buffers=(buf(0),))
    assert simulate(p).violations == ()


def test_cb_pop_uncovered() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 4), Push(0, 4)),
             ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2), Pop(0, 2)), buffers=(buf(0),))
    v = only(simulate(p))
    assert where(v) == ("cb-pop-uncovered", CA, (2,), ())
    assert v.message == "pop(b0, 2) frees pages [2, 4) but the waited window is [2, 2)"


def test_cb_straddle_push_sizes_2_2_1_2_2() -> None:
    sizes = (2, 2, 1, 2, 2)
    reader = ep(A, Engine.READER, *[o for n in sizes for o in (Reserve(0, n), Push(0, n))])
    compute = ep(A, Engine.COMPUTE, *[o for n in sizes for o in (Wait(0, n), Pop(0, n))])
    r = simulate(prog(reader, compute, buffers=(buf(0),)))
    assert r.status == "terminated"
    assert [where(v) for v in r.violations] == [("cb-straddle", RA, (9,), ()), ("cb-straddle", CA, (9,), ())]
    assert r.violations[0].message == "push(b0, 2) at write offset 3 of a 4-page ring straddles its end (3+2 > 4)"
    assert r.violations[1].message == "pop(b0, 2) at read offset 3 of a 4-page ring straddles its end (3+2 > 4)"


def test_balance_cb() -> None:
    p = prog(ep(A, Engine.READER, Reserve(0, 3), Push(0, 3)), ep(A, Engine.COMPUTE, Wait(0, 2), Pop(0, 2)),
             buffers=(buf(0, persistent=True),))
    r = simulate(p)
    v = only(r)
    assert r.status == "terminated"
    assert where(v) == ("balance-cb", CA, None, ())
    assert v.message == ("b0 (buf0) ends with pushed 3 != popped 2; cb 0 at (0,0): the buffer is persistent: its "
                         "next user counts on from them")
    # Launched once, the page left faults nothing: the launch's end resets the buffer.
    once = prog(*p.programs, buffers=(buf(0),))
    assert simulate(once).violations == ()


# ---------------------------------------------------------------------------------------------- every chain


def _uncovered() -> Program:
    return prog(ep(A, Engine.READER, Reserve(0, 2), Push(0, 2), Reserve(0, 1), Push(0, 2)),
                ep(A, Engine.COMPUTE, Wait(0, 4), Pop(0, 4)), buffers=(buf(0),))


def test_each_chain_finds_the_uncovered_push_at_its_op() -> None:
    """The interpreter and the per-engine abstract interpretation report ``cb-push-uncovered`` at the reader's
    second push, ops[3], and nowhere else; the Promela model asserts it at each of the reader's pushes (its escape
    is the op's id, ``O_engine_path``)."""
    p = _uncovered()
    assert where(only(simulate(p))) == (R.CB_PUSH_UNCOVERED, RA, (3,), ())
    found = [(f.rule, f.path) for v in engine_views(p).values() for f in engine_facts(p, v).findings]
    assert found == [(R.CB_PUSH_UNCOVERED, (3,))]
    model = to_promela(p)
    asserts = re.findall(r"assert\(R_cb_push_uncovered \|\| (O_\d+_\d+) \|\|", model)
    assert sorted(asserts) == ["O_0_1", "O_0_3"]


def test_the_family_tables_cover_the_family_op_classes() -> None:
    """Each chain's table of this family holds exactly Reserve, Push, Wait, Pop, FillTiles and CopyTiles (the
    dispatch of ``petri/interp.py``, ``petri/promela.py`` and ``certify/rules.py`` is assembled from them)."""
    ops = {Reserve, Push, Wait, Pop, FillTiles, CopyTiles}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops


def test_the_interpreter_and_the_promela_model_take_the_one_definition_of_data_buffers() -> None:
    """b0 carries tiles the writer writes out (a data buffer: its push must publish filled pages); b1 only signals
    (nothing reads its pages: a token channel). The interpreter and the Promela export use ``ir/data.py``'s set, as
    the checker's per-engine rules do (``certify/rules.py``)."""
    tensors = (Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT))
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("X", Addr(), 1, 0), ReadBarrier(), Push(0, 1),
                Reserve(1, 1), Push(1, 1)),
             ep(A, Engine.WRITER, Wait(0, 1), WriteTiles(0, "Y", Addr(), 1), WriteBarrier(), Pop(0, 1),
                Wait(1, 1), Pop(1, 1)),
             buffers=(buf(0), buf(1)), tensors=tensors)
    assert data_buffers(p) == {0}
    assert Interp(p).data_bufs == data_buffers(p)
    assert _Gen(p).data_bufs == data_buffers(p)
