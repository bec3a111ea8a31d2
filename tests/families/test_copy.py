"""``CopyTiles``: a data-movement engine's own L1 loads and stores copying pages of one buffer's waited front into
another's reserved back (tt-metal's contributed multicast example, ``inbound_kernel.cpp:9-15``:
``copy_tile_between_cb``). The receiver's form — wait the source, reserve the destination, copy, push, pop — proves;
a copy before the source's wait or after its pop (``cb-read-unwaited``), before the destination's reserve
(``cb-write-unreserved``) or a push ahead of the copy (``cb-push-unfilled``) is refuted in the interpreter, the
per-engine rules, the checker (replayed) and the Promela model, at the op."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import jsonschema
import pytest
from builders import RA, A, buf, ep, prog
from family_checks import asserted, findings
from hypothesis import Phase, find, settings
from hypothesis.strategies import SearchStrategy

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.families.cb import encoding, promela, semantics
from verispatial.ir import (
    WORMHOLE,
    Addr,
    BufferAt,
    CopyTiles,
    Engine,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Tensor,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.ops import op_text
from verispatial.ir.program import walk
from verispatial.ir.serialize import dumps, load_program, loads, program_to_dict, schema
from verispatial.ir.validate import validate
from verispatial.mutate import judge, mutants
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import to_promela
from verispatial.strategies import blueprints, correct_programs

SRC, DST = 0, 1  # c_0 (what the NoC read fills) and c_16's stand-in (what the copy fills)
K = (Term("k", 1),)
COPY = (Wait(SRC, 1), Reserve(DST, 1), CopyTiles(SRC, DST, 1, drain=True), Push(DST, 1), Pop(SRC, 1))


def copier(copy: tuple[Op, ...] = COPY, tiles: int = 3) -> Program:
    """Reader: per tile, X into c_0 by a NoC read, then ``copy`` (default the receiver's after tt-metal PR #50183:
    wait c_0, reserve c_1, copy one tile ending with a drain, push c_1, pop c_0). Writer: c_1 to Y."""
    reader = ep(A, Engine.READER, Loop("k", tiles, (Reserve(SRC, 1), ReadTiles("X", Addr(0, K), 1, SRC), ReadBarrier(),
                                                    Push(SRC, 1), *copy)))
    writer = ep(A, Engine.WRITER, Loop("k", tiles, (Wait(DST, 1), WriteTiles(DST, "Y", Addr(0, K), 1), WriteBarrier(),
                                                    Pop(DST, 1))))
    tensors = (Tensor("X", (32, 32 * tiles), "bf16", Role.INPUT), Tensor("Y", (32, 32 * tiles), "bf16", Role.OUTPUT))
    return mapped(prog(reader, writer, buffers=(buf(SRC, cap=2), buf(DST, cap=2)), tensors=tensors))


def mapped(p: Program) -> Program:
    """``p`` with its buffers laid out one after another from the target's first free L1 byte."""
    at, mem = WORMHOLE.reserved_base, []
    for b in p.buffers:
        size = b.capacity * b.page_tiles * WORMHOLE.tile_bytes[b.dtype]
        mem.append(BufferAt(b.id, at, size))
        at += size
    return attrs.evolve(p, memory=tuple(mem))


def _bad(p: Program) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in certify(p, cache=False).results if r.verdict != Verdict.PROVED}


def test_the_receivers_copy_between_two_buffers_proves() -> None:
    p = copier()
    assert validate(p) == []
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]


def test_two_copies_take_successive_tiles_of_the_waited_front() -> None:
    """Two one-tile copies after one two-page wait read tiles 0 and 1 (the read cursor a WriteTiles moves); a third
    reads past the window. The second copy's drain lands the first's stores too (same-region stores are processed
    in order, ``common.hpp:166-179``)."""
    two = (Wait(SRC, 2), Reserve(DST, 2), CopyTiles(SRC, DST, 1), CopyTiles(SRC, DST, 1, drain=True), Push(DST, 2),
           Pop(SRC, 2))
    reader = ep(A, Engine.READER, Reserve(SRC, 2), ReadTiles("X", Addr(0), 2, SRC), ReadBarrier(), Push(SRC, 2), *two)
    writer = ep(A, Engine.WRITER, Wait(DST, 2), WriteTiles(DST, "Y", Addr(0), 2), WriteBarrier(), Pop(DST, 2))
    tensors = (Tensor("X", (32, 64), "bf16", Role.INPUT), Tensor("Y", (32, 64), "bf16", Role.OUTPUT))
    p = mapped(prog(reader, writer, buffers=(buf(SRC, cap=2), buf(DST, cap=4)), tensors=tensors))
    assert simulate(p).violations == ()
    assert certify(p, cache=False).exit_code == 0
    three = (*two[:4], CopyTiles(SRC, DST, 1, drain=True), Push(DST, 3), Pop(SRC, 2))
    q = attrs.evolve(p, programs=(ep(A, Engine.READER, *reader.ops[:4], Reserve(DST, 3), *three[:1], *three[2:]),
                                  writer))
    assert (R.CB_READ_UNWAITED, RA, (8,)) in findings(q)
    assert R.CB_READ_UNWAITED in simulate(q).rules()


@pytest.mark.parametrize(("copy", "rule", "at"), [
    # the copy before c_0's wait: get_read_ptr is valid only between cb_wait_front and cb_pop_front
    ((Reserve(DST, 1), CopyTiles(SRC, DST, 1, True), Wait(SRC, 1), Push(DST, 1), Pop(SRC, 1)), R.CB_READ_UNWAITED, 5),
    # c_0 popped before the copy reads it
    ((Wait(SRC, 1), Reserve(DST, 1), Pop(SRC, 1), CopyTiles(SRC, DST, 1, True), Push(DST, 1)), R.CB_READ_UNWAITED, 7),
    # the copy before c_1's reserve: get_write_ptr is valid only between cb_reserve_back and cb_push_back
    ((Wait(SRC, 1), CopyTiles(SRC, DST, 1, True), Reserve(DST, 1), Push(DST, 1), Pop(SRC, 1)), R.CB_WRITE_UNRESERVED, 5),
    # no drain before the push: tt-metal PR #50183, the contributed multicast example's copy before its fix
    ((Wait(SRC, 1), Reserve(DST, 1), CopyTiles(SRC, DST, 1), Push(DST, 1), Pop(SRC, 1)), R.ASYNC_READ_PUBLISH, 7),
])
def test_a_copy_outside_its_windows_is_refuted_at_the_copy(copy: tuple[Op, ...], rule: str, at: int) -> None:
    p = copier(copy)
    assert validate(p) == []
    sim = simulate(p)
    assert rule in sim.rules()
    assert any(v.rule == rule and v.position.path == (0, at) for v in sim.violations)
    assert (rule, RA, (0, at)) in findings(p)
    bad = _bad(p)
    name = next(n for n in bad if n.startswith(rule))
    assert bad[name] == Verdict.REFUTED
    assert asserted(to_promela(p), rule)


def test_a_push_before_the_copy_publishes_an_unfilled_page() -> None:
    p = copier((Wait(SRC, 1), Reserve(DST, 1), Push(DST, 1), CopyTiles(SRC, DST, 1, True), Pop(SRC, 1)))
    sim = simulate(p)
    assert R.CB_PUSH_UNFILLED in sim.rules()
    bad = _bad(p)
    assert any(n.startswith(R.CB_PUSH_UNFILLED) and v == Verdict.REFUTED for n, v in bad.items())


def test_a_drained_copy_needs_no_noc_barrier_before_its_push() -> None:
    """A drained copy leaves nothing outstanding (no pending NoC entry, no ``async-pending-at-end``), unlike a NoC
    read of the same page; a later undrained copy into the same buffer is unlanded again at the push."""
    p = copier()
    assert [f for f in findings(p) if f[1] == RA] == []
    assert "/* copy_tiles(b0, b1, 1, drain) */" in to_promela(p)
    again = copier((Wait(SRC, 1), Reserve(DST, 2), CopyTiles(SRC, DST, 1, True), Push(DST, 1), Pop(SRC, 1)))
    assert findings(again) == []


def test_a_drain_lands_every_earlier_store_of_the_engine() -> None:
    """An undrained copy then a drained one of another buffer: the drain (a blocking load of the last word) lands
    the earlier stores too, so the push after it is clean; the push between them is not."""
    def with_second(first_push: bool) -> Program:
        copies = (Wait(SRC, 2), Reserve(DST, 1), CopyTiles(SRC, DST, 1), *((Push(DST, 1),) if first_push else ()),
                  Reserve(2, 1), CopyTiles(SRC, 2, 1, True), *(() if first_push else (Push(DST, 1),)), Push(2, 1),
                  Pop(SRC, 2))
        reader = ep(A, Engine.READER, Reserve(SRC, 2), ReadTiles("X", Addr(0), 2, SRC), ReadBarrier(), Push(SRC, 2),
                    *copies)
        writer = ep(A, Engine.WRITER, Wait(DST, 1), WriteTiles(DST, "Y", Addr(0), 1), WriteBarrier(), Pop(DST, 1))
        sink = ep(A, Engine.COMPUTE, Wait(2, 1), Pop(2, 1))
        tensors = (Tensor("X", (32, 64), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT))
        return mapped(prog(reader, writer, sink, buffers=(buf(SRC, cap=2), buf(DST, cap=2), buf(2, cap=2)),
                           tensors=tensors))
    assert simulate(with_second(False)).violations == ()
    assert findings(with_second(False)) == []
    late = with_second(True)
    assert [v.rule for v in simulate(late).violations] == [R.ASYNC_READ_PUBLISH]
    assert (R.ASYNC_READ_PUBLISH, RA, (7,)) in findings(late)
    assert certify(late, cache=False).exit_code == 1
    assert certify(with_second(False), cache=False).exit_code == 0


def test_copy_tiles_round_trips_and_meets_the_schema() -> None:
    p = copier()
    text = dumps(p)
    assert loads(text) == p
    jsonschema.Draft202012Validator(schema()).validate(program_to_dict(p))
    assert op_text(CopyTiles(0, 1, 2)) == "copy_tiles(b0, b1, 2)"


def test_validate_refuses_a_copy_into_its_own_buffer_and_takes_a_converting_copy() -> None:
    """A copy of a buffer into itself is refused; a copy between tile sizes is a copy tile for tile whose stores
    convert each element (sort's fp32 -> uint16 staging, ``writer_single_row_single_core.cpp:78-96``) and is taken."""
    p = copier((Wait(SRC, 1), CopyTiles(SRC, SRC, 1), Pop(SRC, 1)))
    assert any("into itself" in v.rule for v in validate(p))
    q = copier()
    q = mapped(attrs.evolve(q, buffers=(attrs.evolve(q.buffers[0], dtype="fp32"), q.buffers[1]),
                            tensors=(attrs.evolve(q.tensors[0], dtype="fp32"), q.tensors[1])))
    assert validate(q) == []
    assert simulate(q).violations == ()


def test_the_family_tables_carry_the_copy() -> None:
    assert CopyTiles in semantics.HANDLERS
    assert CopyTiles in encoding.HANDLERS
    assert CopyTiles in promela.HANDLERS


def _copies(p: Program) -> bool:
    return any(isinstance(op, CopyTiles) for e in p.programs for op in walk(e.ops))


def _first(strategy: SearchStrategy[Program], pred: Callable[[Program], bool]) -> Program:
    """The first program ``strategy`` draws (derandomized, no shrinking) that ``pred`` admits."""
    return find(strategy, pred, settings=settings(database=None, max_examples=3000, derandomize=True,
                                                  phases=(Phase.generate,)))


def test_the_correct_strategy_draws_drained_copies_and_the_checker_proves_them() -> None:
    p = _first(correct_programs(), lambda p: _copies(p) and len(p.programs) <= 3)
    assert all(op.drain for e in p.programs for op in walk(e.ops) if isinstance(op, CopyTiles))
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert simulate(p).violations == ()


def test_the_broken_strategy_draws_undrained_copies_refuted_and_replayed() -> None:
    # an undrained copy the oracle shows publishing early (one in a loop that runs: a trip of max 0 runs it never)
    p = _first(blueprints(), lambda p: any(isinstance(op, CopyTiles) and not op.drain
                                           for e in p.programs for op in walk(e.ops)) and len(p.programs) <= 3
               and R.ASYNC_READ_PUBLISH in {v.violation.rule for v in explore(p).violations})
    report = certify(p, cache=False)
    refuted = [r for r in report.results if r.name.startswith(R.ASYNC_READ_PUBLISH) and r.verdict == Verdict.REFUTED]
    assert refuted
    assert all(r.counterexample is not None for r in refuted)


def test_every_mutant_of_the_copy_is_killed() -> None:
    """Mutation testing around the copy of ``examples/local_copy.json``: dropping it, a tile more or less, swapping it
    with its neighbours, dropping its drain (``undrain``) — each rejected, refuted or failed-to-prove with the oracle
    showing it broken, never proved while broken."""
    p = load_program(Path(__file__).resolve().parent.parent.parent / "examples" / "local_copy.json")
    near = [m for m in mutants(p) if m.engine == RA and m.path in ((0, 5), (0, 6)) and "CopyTiles" in m.what]
    assert {m.kind for m in near} >= {"drop", "pages+1", "swap", "undrain"}
    for m in near:
        o = judge(m)
        assert o.killed, (m.what, o.status, o.verdict, o.detail)
