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


def unpack_from_slot_1(pages: int) -> Program:
    """Compute pops one page of b0 (a 3-page ring, four pages filled and pushed one by one), waits for three, and
    unpacks the first ``pages`` of its front: from slot 1, three pages pass the ring's end, which the unpacker does
    not wrap (``llk_unpack_A_api.h:78-82``; ``cb_access_within_bounds``, ``circular_buffer_interface.h:139-143``).
    Its pops 1, 2, 1 land on the ring's multiples, so the pops themselves do not straddle."""
    from test_copy import mapped

    from verispatial.ir import AcquireAcc, Compute, Loop, Operand, ReleaseAcc

    writer = ep(A, Engine.WRITER, Loop("k", 4, (Reserve(0, 1), FillTiles(0, 1, "mask", drain=True), Push(0, 1))))
    compute = ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1), Wait(0, 3), AcquireAcc(1, "bf16"),
                 Compute("add_tiles", 1, (Operand(0, pages),)), ReleaseAcc(), Pop(0, 2), Wait(0, 1), Pop(0, 1))
    return mapped(prog(writer, compute, buffers=(buf(0, cap=3),)))


def test_an_unpack_inside_the_ring_from_the_read_pointer_proves() -> None:
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.explore import explore

    p = unpack_from_slot_1(2)
    assert explore(p).rules() == []
    assert {r.name: r.verdict for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"] is Verdict.PROVED


def test_an_unpack_past_the_ring_end_from_the_read_pointer_is_a_straddle_refuted_and_replayed() -> None:
    """Three waited pages from slot 1 of a 3-page ring: the wait is legal (its pages wrap), the indexed unpack of
    page 2 is not. It was proved before (no rule looked at an unpack's ring position)."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.explore import explore

    p = unpack_from_slot_1(3)
    v = only(simulate(p))
    assert where(v) == (R.CB_STRADDLE, CA, (4,), ())
    assert v.message == ("compute(add_tiles, 1, b0[3]) unpacks pages 0..2 of b0 from read offset 1 of a 3-page ring: "
                         "past its end (1+3 > 3; the unpacker does not wrap)")
    assert explore(p).rules() == [R.CB_STRADDLE]
    r = {r.name: r for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"]
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE


# ---------------------------------------------------------------- accesses from a pointer do not wrap (past_end)


def fill_two_then_push_one_by_one(cap: int) -> Program:
    """The reader reserves two pages, fills both with one FillTiles (stores from ``get_write_ptr`` on), and pushes
    them one at a time, twice; the compute engine waits and pops page by page. The pushes of 1 never straddle, but
    in a 3-page ring the second fill starts at slot 2 and its second tile lands past the ring's end: the write pointer
    wraps only at ``cb_push_back`` (``dataflow_api.h``), not inside the stores."""
    from test_copy import mapped

    from verispatial.ir import Loop

    reader = ep(A, Engine.READER, Loop("k", 2, (Reserve(0, 2), FillTiles(0, 2, "mask", drain=True), Push(0, 1),
                                                 Push(0, 1))))
    compute = ep(A, Engine.COMPUTE, Loop("k", 4, (Wait(0, 1), Pop(0, 1))))
    return mapped(prog(reader, compute, buffers=(buf(0, cap=cap),)))


def write_two_then_pop_one_by_one(cap: int) -> Program:
    """The writer waits for two pages and writes both to the output with one WriteTiles (``get_read_ptr`` plus a
    tile's bytes per tile), then pops them one at a time, twice: in a 3-page ring the second write reads from slot 2
    past the ring's end (the read pointer wraps only at ``cb_pop_front``)."""
    from test_copy import mapped

    from verispatial.ir import Loop, Term

    out = Tensor("out", (32, 128), "bf16", Role.OUTPUT)
    reader = ep(A, Engine.READER, Loop("k", 4, (Reserve(0, 1), FillTiles(0, 1, "x", drain=True), Push(0, 1))))
    writer = ep(A, Engine.WRITER, Loop("k", 2, (Wait(0, 2), WriteTiles(0, "out", Addr(0, (Term("k", 2),)), 2),
                                                 WriteBarrier(), Pop(0, 1), Pop(0, 1))))
    return mapped(prog(reader, writer, buffers=(buf(0, cap=cap),), tensors=(out,)))


def test_an_access_inside_the_ring_from_its_pointer_proves() -> None:
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.explore import explore

    for p in (fill_two_then_push_one_by_one(4), write_two_then_pop_one_by_one(4)):
        assert explore(p).rules() == []
        got = {r.name: r.verdict for r in certify(p, cache=False).results}
        assert got[f"{R.CB_STRADDLE}:b0"] is Verdict.PROVED
        assert {n: v for n, v in got.items() if v is not Verdict.PROVED} == {}


def test_stores_past_the_ring_end_from_the_write_pointer_are_a_straddle_refuted_and_replayed() -> None:
    """Proved before: the model wrapped a write into the back at the ring's end, which the hardware does not."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.explore import explore

    p = fill_two_then_push_one_by_one(3)
    v = only(simulate(p))
    assert where(v) == (R.CB_STRADDLE, RA, (0, 1), (("k", 1),))
    assert v.message == ("fill_tiles(b0, 2, mask, drain) writes tiles [0, 2) past the write pointer of b0, at slot 2 "
                         "of a 3-page ring of 1-tile pages: past its end (2*1+2 > 3; the pointer does not wrap inside "
                         "an access)")
    assert explore(p).rules() == [R.CB_STRADDLE]
    r = {r.name: r for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"]
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["path"] == [0, 1]
    assert r.counterexample["running_sum"] == 2
    assert r.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE
    text = to_promela(p)
    assert "(pushed[0] % 3) * 1 + fill[0] + 2 <= 3" in text


def test_a_write_past_the_ring_end_from_the_read_pointer_is_a_straddle_refuted_and_replayed() -> None:
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.petri.explore import explore

    p = write_two_then_pop_one_by_one(3)
    v = only(simulate(p))
    assert where(v) == (R.CB_STRADDLE, WA, (0, 1), (("k", 1),))
    assert explore(p).rules() == [R.CB_STRADDLE]
    r = {r.name: r for r in certify(p, cache=False).results}[f"{R.CB_STRADDLE}:b0"]
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == R.CB_STRADDLE
    assert "(popped[0] % 3) * 1 + drain[0] + 2 <= 3" in to_promela(p)


def shared_write(tiles: int) -> Program:
    """The reader fills and pushes two pages of b0 (a 2-page ring); the writer waits for both without popping (a
    sharing waiter: ``ir/sharing.py``) and writes ``tiles`` tiles to the output from its read pointer, then tells the
    compute engine, which waited too, and pops them."""
    from builders import GE, sem
    from test_copy import mapped

    from verispatial.ir import AtomicBarrier, SemInc, SemSet, SemWait

    out = Tensor("out", (32, 32 * tiles), "bf16", Role.OUTPUT)
    reader = ep(A, Engine.READER, Reserve(0, 2), FillTiles(0, 2, "x", drain=True), Push(0, 2))
    writer = ep(A, Engine.WRITER, Wait(0, 2), WriteTiles(0, "out", Addr(0), tiles), WriteBarrier(), SemInc(0, A, 1),
                AtomicBarrier())
    compute = ep(A, Engine.COMPUTE, Wait(0, 2), SemWait(0, GE, 1), SemSet(0, 0), Pop(0, 2))
    return mapped(prog(reader, writer, compute, buffers=(buf(0, cap=2),), tensors=(out,), sems=(sem(0, A),)))


def test_a_sharing_waiters_read_never_passes_the_ring_end_inside_its_window() -> None:
    """A sharing waiter's read pointer stays at the ring's start (it never pops) and its waited window holds at most
    the capacity (a larger Wait never returns: ``cb-capacity``), so a read inside the window ends by the ring's end
    and ``cb-straddle`` needs no case of its own: reading past the end is reading past the window,
    ``cb-read-unwaited``, in the interpreter, the explorer and the checker alike (refuted, replayed), while the
    straddle obligation proves."""
    from verispatial.certify.report import Verdict
    from verispatial.driver.run import certify
    from verispatial.ir.sharing import sharing_waiters
    from verispatial.ir.validate import validate
    from verispatial.petri.explore import explore

    ok, bad = shared_write(2), shared_write(3)
    assert sharing_waiters(bad) == {0: frozenset({WA})}
    assert validate(ok) == validate(bad) == []
    assert explore(ok).rules() == []
    assert {r.name: r.verdict for r in certify(ok, cache=False).results if r.verdict is not Verdict.PROVED} == {}
    v = only(simulate(bad))
    assert where(v) == (R.CB_READ_UNWAITED, WA, (1,), ())
    assert R.CB_STRADDLE not in explore(bad).rules()
    got = {r.name: r for r in certify(bad, cache=False).results}
    assert got[f"{R.CB_STRADDLE}:b0"].verdict is Verdict.PROVED
    r = got[f"{R.CB_READ_UNWAITED}:{WA}:[1]"]
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["violation"]["rule"] == R.CB_READ_UNWAITED
    assert r.counterexample["replayed_by"]
