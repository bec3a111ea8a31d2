"""Data ops stay inside circular-buffer windows: writes in the reserved back, reads from the waited front."""

from __future__ import annotations

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
    Wait,
    WriteBarrier,
    WriteTiles,
)

S = Site(0, 0)


def copy(reader_extra: tuple = (), writer_first: tuple = ()) -> Program:
    reader = (Reserve(0, 2), Loop("r", 2, (ReadTiles("X", Addr(0, (Term("r", 1),)), 1, 0),)), *reader_extra,
              ReadBarrier(), Push(0, 2))
    writer = (*writer_first, Wait(0, 2), WriteTiles(0, "Y", Addr(), 2), WriteBarrier(), Pop(0, 2))
    return Program("window", WORMHOLE,
                   tensors=(Tensor("X", (32, 128), "bf16", Role.INPUT), Tensor("Y", (32, 64), "bf16", Role.OUTPUT)),
                   buffers=(Buffer(0, "c_0", S, 0, 1, 2, "bf16"),),
                   programs=(EngineProgram(S, Engine.READER, reader), EngineProgram(S, Engine.WRITER, writer)),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, 4096),))


def test_a_loop_of_reads_filling_its_reservation_proves() -> None:
    report = certify(copy())
    assert report.exit_code == 0
    assert {r.name for r in report.results if r.family == "circular-buffer"} >= {"cb-write-unreserved",
                                                                                  "cb-read-unwaited"}


def test_one_tile_too_many_is_refuted_and_replayed() -> None:
    report = certify(copy(reader_extra=(ReadTiles("X", Addr(2), 1, 0),)))
    bad = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in bad] == ["cb-write-unreserved:(0,0).reader:[2]"]
    cex = bad[0].counterexample
    assert cex is not None
    assert cex["violation"]["rule"] == "cb-write-unreserved"
    assert cex["violation"]["position"]["path"] == [2]


def test_reading_the_front_before_waiting_is_refuted() -> None:
    report = certify(copy(writer_first=(WriteTiles(0, "Y", Addr(0), 1),)))
    bad = [r.name for r in report.results if r.verdict == Verdict.REFUTED]
    # The early read, and then the proper read which now goes one tile past what the wait covers; the early write
    # reads page 0 while it is still the reader's, so the reader's reserve and its read landing there rewrite the
    # source of an outstanding write (each replayed by the interpreter).
    assert bad == ["cb-read-unwaited:(0,0).writer:[0]", "cb-read-unwaited:(0,0).writer:[2]",
                   "async-source-reuse:(0,0).reader:[0]", "async-source-reuse:(0,0).reader:[1, 0]"]
