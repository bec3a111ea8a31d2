"""Transfers of part of a page (``Part`` on ``ReadTiles`` / ``WriteTiles``): a byte range of one tensor page moved to or
from a byte range of one buffer tile — a row-major stick read out of a tile-sized page
(``get_noc_addr(page, s, offset)``, ``dataflow_api.h``; ``TensorAccessor::get_noc_addr(page_id, offset)``), or landed at
a byte offset into a buffer page (the paged-cache writer, ``writer_update_cache_interleaved_start_id.cpp:102-103``).
docs/semantics.md, "Part-page transfers".

The rules decided per byte: two unordered writes of one tile race only where their bytes meet, an activation read
needs completed writes of its own bytes, and an output tile counts as written only once part writes cover its bytes.
The checker decides coverage from whole writes alone and takes a part as its whole tile for write-write order: it
never proves what a part-page program breaks, every refutation is replayed by the byte-exact interpreter, and what it
cannot decide is failed-to-prove."""

from __future__ import annotations

import attrs
import jsonschema
import pytest
from builders import A, B, copy_section, ep, prog

from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    Loop,
    Part,
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
from verispatial.ir.ops import op_text
from verispatial.ir.serialize import dumps, loads, program_to_dict, schema
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import PromelaUnsupported, to_promela

TILE = WORMHOLE.tile_bytes["bf16"]  # 2048: a 32x32 bf16 tile, the tensor's page
STICK = 64  # one row of a 32-wide bf16 tile
#: A row stick at the start of a page, into the start of a buffer tile.
ROW = Part(0, STICK, 0)


def stick_reader(part: Part | None = ROW) -> Program:
    """``copy_section`` of two tiles X -> Y whose reader reads only ``part`` of each X page into its buffer tile
    (a row stick of a tile-sized page); the writer writes whole tiles."""
    p = copy_section("sticks", A, "X", "Y")
    reader = p.programs[0]
    loop = reader.ops[0]
    assert isinstance(loop, Loop)
    body = tuple(attrs.evolve(o, part=part) if isinstance(o, ReadTiles) else o for o in loop.body)
    return attrs.evolve(p, programs=(attrs.evolve(reader, ops=(attrs.evolve(loop, body=body),)), *p.programs[1:]))


def halves(second: Part | None, role: Role = Role.OUTPUT) -> Program:
    """Output Y, one tile, written in parts by two cores with no order between them: site A's writer writes bytes
    [0, 1024) of tile 0; site B's (when ``second``) writes ``second``'s bytes. Each reads tile 0 of X whole first."""
    def core(site: object, b: int, part: Part) -> tuple[object, object]:
        reader = ep(site, Engine.READER, Reserve(b, 1), ReadTiles("X", Addr(0), 1, b), ReadBarrier(),  # type: ignore[arg-type]
                    Push(b, 1))
        writer = ep(site, Engine.WRITER, Wait(b, 1), WriteTiles(b, "Y", Addr(0), 1, part), WriteBarrier(),  # type: ignore[arg-type]
                    Pop(b, 1))
        return reader, writer

    progs = [*core(A, 0, Part(0, 1024, 0))]
    bufs = [Buffer(0, "c_0", A, 0, 1, 1, "bf16")]
    mem = [BufferAt(0, WORMHOLE.reserved_base, TILE)]
    if second is not None:
        progs += core(B, 1, second)
        bufs.append(Buffer(1, "c_0", B, 0, 1, 1, "bf16"))
        mem.append(BufferAt(1, WORMHOLE.reserved_base, TILE))
    tensors = (Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", role))
    return prog(*progs, buffers=tuple(bufs), tensors=tensors, memory=tuple(mem))  # type: ignore[arg-type]


def _bad(report: Report) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in report.results if r.verdict != Verdict.PROVED}


# ---------------------------------------------------------------------------------------------------- IR and format


def test_a_part_round_trips_is_written_only_when_set_and_meets_the_schema() -> None:
    p = stick_reader()
    d = program_to_dict(p)
    read = d["programs"][0]["ops"][0]["body"][1]
    assert read["part"] == {"offset": 0, "size": STICK, "at": 0}
    assert "part" not in d["programs"][1]["ops"][0]["body"][1]  # a whole-tile write keeps its bytes
    assert loads(dumps(p)) == p
    jsonschema.Draft202012Validator(schema()).validate(d)
    del read["part"]["at"]
    jsonschema.Draft202012Validator(schema()).validate(d)  # at defaults to 0
    assert op_text(ReadTiles("X", Addr(0), 1, 0, Part(128, 64, 32))) == "read_tiles(X, 1, b0, bytes [128, 192) at +32)"


@pytest.mark.parametrize(("part", "tiles", "message"), [
    (Part(2000, 64, 0), 1, "part: offset + size = 2064 bytes passes the end of a page of 'X' (2048 bytes)"),
    (Part(0, 64, 2000), 1, "part: at + size = 2064 bytes passes the end of a tile of b0 (c_0, 2048 bytes)"),
    (Part(0, 64, 0), 2, "part: a transfer of part of a page moves one tile, got tiles=2"),
    (Part(-1, 64, 0), 1, "part: offset and at must be >= 0 and size >= 1, got offset=-1, size=64, at=0"),
])
def test_validate_refuses_a_range_past_either_page_naming_the_field(part: Part, tiles: int, message: str) -> None:
    p = stick_reader(part)
    if tiles != 1:
        loop = p.programs[0].ops[0]
        assert isinstance(loop, Loop)
        body = tuple(attrs.evolve(o, tiles=tiles) if isinstance(o, ReadTiles) else o for o in loop.body)
        p = attrs.evolve(p, programs=(attrs.evolve(p.programs[0], ops=(attrs.evolve(loop, body=body),)),
                                      *p.programs[1:]))
    got = [v.rule for v in validate(p)]
    assert message in got, got


def test_a_stick_of_a_page_may_land_in_a_buffer_of_another_tile_size() -> None:
    """The whole-tile rule (a transfer moves the tensor's tiles as they are) does not bind a part: a 64-byte stick of
    a bf16 page lands in an fp32 buffer's tile."""
    p = stick_reader()
    b = attrs.evolve(p.buffers[0], dtype="fp32")
    q = attrs.evolve(p, buffers=(b,), memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * WORMHOLE.tile_bytes["fp32"]),))
    assert not [v for v in validate(q) if "programs[0]" in v.entity], validate(q)


def test_validate_refuses_part_transfers_of_state_tensors() -> None:
    p = halves(None, role=Role.STATE)
    assert any("part-page transfers of carried state are not modelled" in v.rule for v in validate(p))


def test_the_promela_export_refuses_a_part_transfer_by_name() -> None:
    with pytest.raises(PromelaUnsupported, match="moves part of a page"):
        to_promela(stick_reader())


# ------------------------------------------------------------------------------------------------ proved and refuted


def test_a_row_stick_read_out_of_each_page_proves() -> None:
    """The smallest proved form: the reader reads a 64-byte stick of each X page into its buffer tile; every output
    tile is written whole."""
    p = stick_reader()
    assert validate(p) == []
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"
    report = certify(p, cache=False)
    assert report.exit_code == 0, _bad(report)


def test_two_cores_writing_overlapping_bytes_of_a_tile_is_a_race_refuted_and_replayed() -> None:
    p = halves(Part(512, 1024, 0))  # bytes [512, 1536) meet [0, 1024)
    assert R.TENSOR_RACE in simulate(p).rules() or any(
        f.violation.rule == R.TENSOR_RACE for f in explore(p).violations)
    report = certify(p, cache=False)
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED and r.name.startswith(R.HB_WRITE_WRITE)]
    assert refuted, _bad(report)
    cex = refuted[0].counterexample
    assert cex is not None
    assert "replay" in cex or "replayed_by" in cex


def test_two_cores_writing_disjoint_halves_of_a_tile_is_no_race_and_never_refuted() -> None:
    """Bytes [0, 1024) and [1024, 2048) of one tile by two unordered cores: no byte is written twice, and together
    they cover the tile, so the interpreter (every interleaving) finds nothing. The checker does not decide per-byte
    coverage or per-byte write order: it fails to prove those two obligations (its candidates do not replay), it
    never refutes them."""
    p = halves(Part(1024, 1024, 1024))
    assert validate(p) == []
    ex = explore(p)
    assert ex.complete
    assert ex.verdict == "ok", [f.violation for f in ex.violations]
    report = certify(p, cache=False)
    bad = _bad(report)
    assert Verdict.REFUTED not in bad.values(), bad
    assert bad.get(f"{R.OUTPUT_UNWRITTEN}:Y") == Verdict.FAILED
    assert report.exit_code != 0  # not a pass: failed-to-prove is never accepted


def test_an_output_tile_written_only_in_part_is_unwritten_refuted_and_replayed() -> None:
    """Bytes [0, 1024) of Y's only tile and nothing else: the part does not count as the tile."""
    p = halves(None)
    assert [v.rule for v in simulate(p).violations] == [R.OUTPUT_UNWRITTEN]
    report = certify(p, cache=False)
    r = next(r for r in report.results if r.name == f"{R.OUTPUT_UNWRITTEN}:Y")
    assert r.verdict == Verdict.REFUTED, (r.verdict, r.reason)
    assert r.counterexample is not None


def test_an_activation_read_needs_completed_writes_of_its_own_bytes() -> None:
    """Interpreter, per byte: after the first half of an activation tile is written and its barrier passed, a read
    of bytes inside that half is ordered; a read reaching into the unwritten half is a race."""
    from verispatial.families.tensors.semantics import covers

    assert covers([(0, 1024), (1024, 2048)], 0, 2048)
    assert covers([(0, 1024)], 100, 900)
    assert not covers([(0, 1024)], 900, 1100)
    assert not covers([(0, 512), (600, 2048)], 0, 2048)
    for read, ok in ((Part(0, 512, 0), True), (Part(512, 1024, 0), False)):
        w = ep(A, Engine.WRITER, Reserve(0, 1), Push(0, 1), Wait(0, 1), WriteTiles(0, "T", Addr(0), 1, Part(0, 1024, 0)),
               WriteBarrier(), Pop(0, 1), Reserve(1, 1), ReadTiles("T", Addr(0), 1, 1, read), ReadBarrier(), Push(1, 1),
               Wait(1, 1), Pop(1, 1))
        bufs = (Buffer(0, "c_0", A, 0, 1, 1, "bf16"), Buffer(1, "c_1", A, 1, 1, 1, "bf16"))
        p = prog(w, buffers=bufs, tensors=(Tensor("T", (32, 32), "bf16", Role.ACTIVATION),))
        rules = simulate(p).rules()
        assert (R.TENSOR_RACE not in rules) == ok, (read, rules)


# ------------------------------------------------------------------------------------------------ mutation testing


def test_every_mutant_of_a_part_is_killed_or_shown_correct() -> None:
    """``mutate``'s part edits on the stick reader and on the halves' writer: each is rejected, refuted, or failed to
    prove with the oracle showing it broken, or the oracle shows it correct — never proved while broken."""
    from verispatial.mutate import judge, mutants

    for p in (stick_reader(Part(64, STICK, 0)), halves(Part(1024, 1024, 1024))):
        near = [m for m in mutants(p) if m.kind.startswith(("part-", "unpart"))]
        assert {m.kind for m in near} >= {"part-offset+", "part-offset-", "part-size+", "unpart"}
        for m in near:
            o = judge(m)
            assert o.killed or o.status == "still-correct", (m.what, o.status, o.verdict, o.detail)
            assert not (o.verdict == "proved" and o.status != "still-correct"), (m.what, o.status)


def test_the_correct_strategy_draws_stick_reads_and_the_checker_proves_them() -> None:
    """``correct_programs`` sometimes reads a row stick of an input page (``ReadTiles.part``): such a program proves
    and the interpreter finds nothing."""
    from hypothesis import Phase, find, settings

    from verispatial.ir.program import walk
    from verispatial.strategies import correct_programs

    def sticks(p: Program) -> bool:
        return any(isinstance(o, ReadTiles) and o.part is not None for e in p.programs for o in walk(e.ops))

    p = find(correct_programs(), sticks, settings=settings(database=None, max_examples=3000, derandomize=True,
                                                           phases=(Phase.generate,)))
    assert validate(p) == []
    report = certify(p, cache=False)
    assert report.exit_code == 0, _bad(report)
    assert simulate(p).violations == ()


# ------------------------------------------------------------------------------------ offsets that grow with a loop


def _chunks(coef: int, count: int = 4) -> Program:
    """Y (one tile, an activation of site A's writer, then read back): the writer writes the tile in ``count``
    chunks of 512 bytes, chunk ``j`` at ``coef * j`` bytes (``{.page_id = 0, .offset_bytes = j * 512}``), one barrier
    after the loop; then it reads the whole tile back."""
    from verispatial.ir import Term

    bufs = (Buffer(0, "c_0", A, 0, 1, count, "bf16"), Buffer(1, "c_1", A, 1, 1, 1, "bf16"))
    w = ep(A, Engine.WRITER, Reserve(0, count), Push(0, count), Wait(0, count),
           Loop("j", count, (WriteTiles(0, "T", Addr(0), 1, Part(0, 512, 0, (Term("j", coef),))),)),
           WriteBarrier(), Pop(0, count), Reserve(1, 1), ReadTiles("T", Addr(0), 1, 1), ReadBarrier(), Push(1, 1),
           Wait(1, 1), Pop(1, 1))
    return prog(w, buffers=bufs, tensors=(Tensor("T", (32, 32), "bf16", Role.ACTIVATION),))


def test_an_offset_growing_with_a_loop_is_evaluated_per_occurrence() -> None:
    """Chunks at 512 * j cover the tile: the whole read after the barrier is ordered. At 256 * j they cover only
    [0, 1280): the read of the whole tile is a race (before any completed write of its other bytes)."""
    assert R.TENSOR_RACE not in simulate(_chunks(512)).rules()
    assert R.TENSOR_RACE in simulate(_chunks(256)).rules()
    assert op_text(_chunks(512).programs[0].ops[3].body[0]) == "write_tiles(b0, T, 1, bytes [0+512*j, +512) at +0)"  # type: ignore[attr-defined]


def test_validate_bounds_a_growing_offset_at_its_greatest() -> None:
    got = [v.rule for v in validate(_chunks(600))]
    assert "part: offset + size = 2312 bytes at its greatest passes the end of a page of 'T' (2048 bytes)" in got, got
    p = _chunks(512)
    d = program_to_dict(p)
    assert d["programs"][0]["ops"][3]["body"][0]["part"]["terms"] == [{"var": "j", "coef": 512}]
    assert loads(dumps(p)) == p
    jsonschema.Draft202012Validator(schema()).validate(d)
