"""A tensor sized by a trip (``Tensor.trip_rows``): at trip value ``t`` it has ``trip_rows.value(t)`` rows of tiles.
Its accesses are bounds-checked against that size and an output's every tile of it is written, for every trip value;
the checker and the interpreter agree on each (docs/semantics.md)."""

from __future__ import annotations

import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Site,
    Tensor,
    Term,
    Trip,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.program import walk
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate
from verispatial.petri.interp import simulate

A = Site(0, 0)
ROWS = TripCount("t", 1, 1)  # t + 1 rows of tiles: 1..4 for t in 0..3
COLS = 2


def _rows_prog(rows: int | str | TripCount, trip_rows: TripCount | None = ROWS) -> Program:
    """The reader copies ``rows`` rows of 2 tiles of X into a 4-page ring, the writer drains them to Y; X and Y have
    ``trip_rows`` rows (4 at the trip's max)."""
    def row(k: str) -> Addr:
        return Addr(0, (Term("r", COLS), Term(k, 1)))
    rd: tuple[Op, ...] = (Reserve(0, 1), ReadTiles("X", row("c"), 1, 0), ReadBarrier(), Push(0, 1))
    wr: tuple[Op, ...] = (Wait(0, 1), WriteTiles(0, "Y", row("c"), 1), WriteBarrier(), Pop(0, 1))
    tensors = tuple(Tensor(n, (32 * 4, 32 * COLS), "bf16", role, trip_rows=trip_rows)
                    for n, role in (("X", Role.INPUT), ("Y", Role.OUTPUT)))
    p = Program("rows", WORMHOLE, tensors=tensors, buffers=(Buffer(0, "c0", A, 0, 1, 4, "bf16"),),
                trips=(Trip("t", 3),), memory=(BufferAt(0, WORMHOLE.reserved_base, 4 * 2048),),
                programs=(EngineProgram(A, Engine.READER, (Loop("r", rows, (Loop("c", COLS, rd),)),)),
                          EngineProgram(A, Engine.WRITER, (Loop("r", rows, (Loop("c", COLS, wr),)),))))
    assert validate(p) == []
    return p


def _verdicts(p: Program) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in certify(p).results if r.verdict != Verdict.PROVED}


def test_rows_counted_by_the_trip_prove_for_every_trip_value() -> None:
    p = _rows_prog(ROWS)
    assert [simulate(p, {"t": t}).status for t in range(4)] == ["terminated"] * 4
    assert all(not simulate(p, {"t": t}).violations for t in range(4))
    report = certify(p)
    assert report.exit_code == 0, _verdicts(p)


def test_one_row_short_is_unwritten_at_every_trip_value() -> None:
    p = _rows_prog("t")
    report = certify(p)
    (r,) = [r for r in report.results if r.name == "output-unwritten:Y"]
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    t = r.counterexample["trips"]["t"]  # type: ignore[index]
    run = simulate(p, {"t": t})
    assert [v.rule for v in run.violations] == ["output-unwritten"]


def test_constant_rows_leave_the_tensor_below_the_max() -> None:
    # four rows are inside the tensor at the trip's max only: the accesses leave it for t < 3
    p = _rows_prog(4)
    assert [bool(simulate(p, {"t": t}).violations) for t in range(4)] == [True, True, True, False]
    assert {v.rule for v in simulate(p, {"t": 1}).violations} == {"bounds"}
    report = certify(p)
    bad = [r for r in report.results if r.verdict != Verdict.PROVED]
    assert {r.name for r in bad} == {"bounds:X", "bounds:Y"}
    for r in bad:
        assert r.verdict == Verdict.REFUTED
        assert r.counterexample is not None
        t = r.counterexample["trips"]["t"]  # type: ignore[index]
        assert t < 3
        assert r.counterexample["tensor_tiles"] == (t + 1) * COLS
        assert "bounds" in {v.rule for v in simulate(p, {"t": t}).violations}
    # the same program with tensors of one size is correct: only trip_rows makes them smaller
    assert certify(_rows_prog(4, trip_rows=None)).exit_code == 0


def test_trip_rows_round_trips_and_is_omitted_when_unset() -> None:
    p = _rows_prog(ROWS)
    text = dumps(p)
    assert '"trip_rows"' in text
    q = loads(text)
    assert q.tensor("Y").trip_rows == ROWS
    assert '"trip_rows"' not in dumps(_rows_prog(4, trip_rows=None))


@pytest.mark.parametrize(("trip_rows", "message"), [
    (TripCount("u", 1, 1), "trip_rows names trip 'u', which the program does not declare"),
    (TripCount("t", 1, 0), "trip_rows gives 3 tile rows at trip t's max 3, but its shape has 4 (shape is the tensor at the trip's max)"),
])
def test_trip_rows_must_name_a_trip_and_match_the_shape(trip_rows: TripCount, message: str) -> None:
    p = _rows_prog(ROWS)
    bad = Program(p.name, p.target, tensors=(Tensor("X", (128, 64), "bf16", Role.INPUT, trip_rows=trip_rows),
                                             p.tensors[1]),
                  buffers=p.buffers, trips=p.trips, memory=p.memory, programs=p.programs)
    assert [str(e) for e in validate(bad)] == [f"tensor X: {message}"]


def _halves(shift: int) -> Program:
    """Y has 2t + 2 rows of 2 tiles; the writer drains the first t + 1 rows, then the next t + 1 at an address that
    names the trip: row ``r2 + 1 + t`` for ``shift`` 1 (``Addr`` base 2 and term ``shift * 2 * t``)."""
    def rd(r: str) -> tuple[Op, ...]:
        return (Loop("c", COLS, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term(r, COLS), Term("c", 1))), 1, 0),
                                 ReadBarrier(), Push(0, 1))),)

    def wr(addr: Addr) -> tuple[Op, ...]:
        return (Loop("c", COLS, (Wait(0, 1), WriteTiles(0, "Y", addr, 1), WriteBarrier(), Pop(0, 1))),)
    rows = TripCount("t", 2, 2)
    second = Addr(COLS, (Term("r2", COLS), Term("c", 1), Term("t", shift * COLS)))
    tensors = tuple(Tensor(n, (32 * 8, 32 * COLS), "bf16", role, trip_rows=rows)
                    for n, role in (("X", Role.INPUT), ("Y", Role.OUTPUT)))
    p = Program("halves", WORMHOLE, tensors=tensors, buffers=(Buffer(0, "c0", A, 0, 1, 4, "bf16"),),
                trips=(Trip("t", 3),), memory=(BufferAt(0, WORMHOLE.reserved_base, 4 * 2048),),
                programs=(EngineProgram(A, Engine.READER, (Loop("r", rows, rd("r")),)),
                          EngineProgram(A, Engine.WRITER, (
                              Loop("r", ROWS, wr(Addr(0, (Term("r", COLS), Term("c", 1))))),
                              Loop("r2", ROWS, wr(second))))))
    assert validate(p) == []
    return p


def test_an_address_may_name_a_trip() -> None:
    """The second half's rows start t + 1 rows down: proved for every t, and run clean at each."""
    p = _halves(1)
    assert all(simulate(p, {"t": t}).status == "terminated" and not simulate(p, {"t": t}).violations
               for t in range(4))
    assert certify(p).exit_code == 0, _verdicts(p)


@pytest.mark.parametrize(("shift", "rule", "bad_trips"), [(0, "output-unwritten", {1, 2, 3}),
                                                           (2, "bounds", {1, 2, 3})])
def test_a_trip_term_off_is_refuted_where_it_breaks(shift: int, rule: str, bad_trips: set[int]) -> None:
    """Shift 0: the second half starts one row down whatever t, so rows t + 2 .. 2t + 1 stay unwritten (for t >= 1;
    at t = 0 it is right). Shift 2: it starts 2t + 1 rows down and leaves the tensor for t >= 1."""
    p = _halves(shift)
    assert {t for t in range(4) if rule in {v.rule for v in simulate(p, {"t": t}).violations}} == bad_trips
    report = certify(p)
    bad = [r for r in report.results if r.verdict != Verdict.PROVED]
    assert bad
    assert {r.verdict for r in bad} == {Verdict.REFUTED}
    (r,) = [r for r in bad if r.name == f"{rule}:Y"]
    assert r.counterexample is not None
    t = r.counterexample["trips"]["t"]  # type: ignore[index]
    assert t in bad_trips
    assert rule in {v.rule for v in simulate(p, {"t": t}).violations}


def _two_sites(shift_rows: int) -> Program:
    """Sites A and B each copy 2 rows of X to Y (4 rows of 2 tiles, one size): A rows 0-1, B rows from
    ``shift_rows + t`` on, an address naming trip t in [0, 1]."""
    b_site = Site(1, 0)

    def pair(site: Site, buf: int, at: Addr) -> tuple[EngineProgram, EngineProgram]:
        rd = (Loop("r", 2, (Loop("c", COLS, (Reserve(buf, 1), ReadTiles("X", at, 1, buf), ReadBarrier(),
                                             Push(buf, 1))),)),)
        wr = (Loop("r", 2, (Loop("c", COLS, (Wait(buf, 1), WriteTiles(buf, "Y", at, 1), WriteBarrier(),
                                             Pop(buf, 1))),)),)
        return EngineProgram(site, Engine.READER, rd), EngineProgram(site, Engine.WRITER, wr)
    rows = (Term("r", COLS), Term("c", 1))
    a = pair(A, 0, Addr(0, rows))
    b = pair(b_site, 1, Addr(shift_rows * COLS, (*rows, Term("t", COLS))))
    tensors = tuple(Tensor(n, (32 * 4, 32 * COLS), "bf16", role) for n, role in (("X", Role.INPUT),
                                                                              ("Y", Role.OUTPUT)))
    p = Program("two", WORMHOLE, tensors=tensors,
                buffers=(Buffer(0, "c0", A, 0, 1, 4, "bf16"), Buffer(1, "c0", b_site, 0, 1, 4, "bf16")),
                trips=(Trip("t", 1),), memory=(BufferAt(0, WORMHOLE.reserved_base, 4 * 2048),
                                               BufferAt(1, WORMHOLE.reserved_base, 4 * 2048)),
                programs=(*a, *b))
    assert validate(p) == []
    return p


def test_writes_placed_by_a_trip_that_meet_at_one_value_are_a_race() -> None:
    """B's rows start at 1 + t: at t = 1 the two sites write disjoint halves (proved for that value alone), at t = 0
    both write row 1. The per-value tile sets meet at t = 0, so the check goes to the solver, which refutes it there;
    the interpreter replays the race. Starting at 2 + t instead is disjoint at both values (and at t = 1 leaves the
    tensor, row 2 unwritten)."""
    p = _two_sites(1)
    assert not simulate(p, {"t": 1}).violations
    report = certify(p)
    (race,) = [r for r in report.results if r.name.startswith("hb-write-write") and r.verdict != Verdict.PROVED]
    assert race.verdict == Verdict.REFUTED  # kept only when the interpreter replayed it (checker._confirm)
    assert race.counterexample is not None
    assert race.counterexample["trips"] == {"t": 0}
    q = _two_sites(2)
    assert not [r for r in certify(q).results if r.name.startswith("hb-write-write") and r.verdict != Verdict.PROVED]
    assert {r.name for r in certify(q).results if r.verdict == Verdict.REFUTED} == {"bounds:X", "bounds:Y",
                                                                                 "output-unwritten:Y"}


def test_renaming_a_trip_renames_the_address_terms_that_name_it() -> None:
    """Through a whole op list (``Renaming.ops``) a term naming no enclosing loop is the trip's and is renamed with
    it; a loop's own term is not. An op taken out of its nest (``Renaming.op`` alone) keeps its terms: the cut of a
    templated program does that, and validate_templated refuses addresses naming trips."""
    from verispatial.ir.ids import Renaming

    p = _halves(1)
    ren = Renaming(trip={"t": "u"}.__getitem__)
    (_, second) = ren.ops(p.programs[1].ops)
    leaf = next(op for op in walk((second,)) if isinstance(op, WriteTiles))
    assert {t.var for t in leaf.addr.terms} == {"r2", "c", "u"}
    alone = next(op for op in walk(p.programs[1].ops[1:]) if isinstance(op, WriteTiles))
    assert ren.op(alone) == alone
