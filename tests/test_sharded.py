"""Sharded (globally allocated) circular buffers (issue 16 item 2; docs/semantics.md "Sharded buffers"): a buffer whose
pages are a tensor's L1 shard (``Buffer.shard``). A read shard's push publishes the tensor's tiles with no data
movement (eltwise binary's reader under ``IN0_SHARDED``), a write shard's push writes them (its ``OUT_SHARDED``
writer only waits), and a push past the shard is ``cb-shard-overrun``. Each rule has a proved correct form and a
refuted broken one here, the refutation replayed by the interpreter and the explorer agreeing; the vendor
transcription proves, its tt-metal #15337 variant is refuted at the vendor line; validate refuses what the model does
not say by name; Promela, compose and mutation know the field."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.driver.shared import canonical
from verispatial.errors import ComposeRefused, InvalidProgram, ParseError
from verispatial.families.memory.encoding import check_memory
from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Compute,
    Engine,
    EngineProgram,
    Group,
    Loop,
    McastSend,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Resident,
    Role,
    SectionSpan,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Shard,
    Site,
    Space,
    Tensor,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.program import shard_pages
from verispatial.ir.serialize import dumps, loads, program_from_dict, program_to_dict
from verispatial.ir.shards import shard_tiles, written_shards
from verispatial.ir.templated import Instance
from verispatial.ir.validate import validate
from verispatial.mutate import judge, mutants
from verispatial.passes.compose import compose, compose_templated
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import PromelaUnsupported, run_spin, spin_available, to_promela
from verispatial.strategies import programs

ROOT = Path(__file__).resolve().parent.parent
S0, S1 = Site(0, 0), Site(1, 0)
BF16 = WORMHOLE.bytes_per_tile("bf16")


def _vendor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_build", ROOT / "examples" / "vendor" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VENDOR = _vendor()


def laid_out(p: Program) -> Program:
    """``p`` with each site's buffers packed from the reserved base in id order (one L1 address per tensor's shard
    when every site creates its buffers in the same order, as a program factory does)."""
    nxt: dict[Site, int] = {}
    out = []
    for b in p.buffers:
        at = nxt.get(b.site, WORMHOLE.reserved_base)
        size = p.buffer_bytes(b)
        out.append(BufferAt(b.id, at, size))
        nxt[b.site] = at + -(-size // WORMHOLE.alignment) * WORMHOLE.alignment
    return attrs.evolve(p, memory=tuple(out))


A_SHARD, O_SHARD = Shard("a"), Shard("o")


def copy_through(*, shard_in: Shard | None = A_SHARD, shard_out: Shard | None = O_SHARD, blocks: int = 2,
                 reader: tuple = (), in_role: Role = Role.INPUT, out_role: Role = Role.OUTPUT) -> Program:
    """One core: c_0 on input ``a``'s shard (the reader reserves and pushes it whole), compute copies it block by
    block into c_2 on output ``o``'s shard, the writer waits for and pops what compute pushed (eltwise binary's sharded
    paths, one operand); with no output shard the writer writes c_2's pages to ``o`` (the interleaved writer)."""
    r = reader or (Reserve(0, blocks), Push(0, blocks))
    c = (Loop("k", blocks, (Wait(0, 1), Reserve(1, 1), AcquireAcc(1, "bf16"), Compute("copy", 1, (Operand(0, 1),)),
                            PackAcc(1, 1), ReleaseAcc(), Pop(0, 1), Push(1, 1))),)
    w = (Wait(1, blocks), Pop(1, blocks)) if shard_out is not None else (
        Wait(1, blocks), WriteTiles(1, "o", Addr(0), blocks), WriteBarrier(), Pop(1, blocks))
    return laid_out(Program(
        "copy_through", WORMHOLE,
        tensors=(Tensor("a", (32, 32 * blocks), "bf16", in_role), Tensor("o", (32, 32 * blocks), "bf16", out_role)),
        buffers=(Buffer(0, "c_0", S0, 0, 1, blocks, "bf16", shard=shard_in),
                 Buffer(1, "c_2", S0, 2, 1, blocks, "bf16", shard=shard_out)),
        programs=(EngineProgram(S0, Engine.READER, r), EngineProgram(S0, Engine.COMPUTE, c),
                  EngineProgram(S0, Engine.WRITER, w))))


def not_proved(r: Report) -> dict[str, str]:
    return {x.name: x.verdict.value for x in r.results if x.verdict is not Verdict.PROVED}


def replayed(r: Report, name: str) -> dict:
    x = next(x for x in r.results if x.name == name)
    assert x.verdict is Verdict.REFUTED, (name, x.verdict, x.reason)
    cex = x.counterexample or {}
    got = cex.get("replay") if cex.get("kind") != "rule" else cex
    assert got, cex
    return got


# --------------------------------------------------------------------------------------------- IR and format


def test_a_shard_round_trips_and_is_written_only_when_set() -> None:
    p = copy_through(shard_in=Shard("a", 1, 1, 2, 1), blocks=1)
    p = attrs.evolve(p, tensors=(Tensor("a", (64, 64), "bf16", Role.INPUT), p.tensors[1]))
    assert validate(p) == []
    assert loads(dumps(p)) == p
    d = program_to_dict(p)
    assert d["buffers"][0]["shard"] == {"tensor": "a", "start": 1, "width": 1, "stride": 2, "tiles": 1}
    plain = copy_through(shard_in=None, shard_out=None)
    assert all("shard" not in b for b in program_to_dict(plain)["buffers"])
    d["buffers"][0]["shard"]["start"] = -1
    with pytest.raises(Exception, match="shard"):
        program_from_dict(d)


def test_the_shard_maps_buffer_tiles_to_tensor_tiles() -> None:
    rows = Buffer(0, "b", S0, 0, 1, 4, "bf16", shard=Shard("t", 6, 2, 12))  # 2 rows of 2 tiles, 12 apart, from 6
    assert shard_tiles(rows, 0, 4) == [6, 7, 18, 19]
    assert shard_tiles(rows, 4, 1) == [6]  # a lap past the ring: the same bytes again
    small = attrs.evolve(rows, shard=Shard("t", 6, 2, 12, tiles=3))  # a ring larger than its shard
    assert shard_pages(small) == 3
    assert shard_tiles(small, 2, 2) == [18]  # page 3 is off the shard: no tile of the tensor
    assert shard_pages(attrs.evolve(rows, page_tiles=2, capacity=2, shard=Shard("t", tiles=3))) == 1


def _two_sites(**b1: object) -> Program:
    """Input ``a`` sharded over two cores, tiles [0, 2) on S0 and [2, 4) on S1, each pushed and popped."""
    progs = []
    for i, s in enumerate((S0, S1)):
        progs += [EngineProgram(s, Engine.READER, (Reserve(i, 2), Push(i, 2))),
                  EngineProgram(s, Engine.COMPUTE, (Wait(i, 2), Pop(i, 2)))]
    bufs = (Buffer(0, "c_0", S0, 0, 1, 2, "bf16", shard=Shard("a", 0)),
            attrs.evolve(Buffer(1, "c_0", S1, 0, 1, 2, "bf16", shard=Shard("a", 2)), **b1))
    return laid_out(Program("two", WORMHOLE, tensors=(Tensor("a", (32, 128), "bf16", Role.INPUT),), buffers=bufs,
                            programs=tuple(progs)))


def _refusals() -> list[tuple[str, Program, str]]:
    base = copy_through()
    alias_p = attrs.evolve(base, buffers=(*base.buffers, Buffer(2, "c_3", S0, 3, 1, 2, "bf16", alias_of=0)))
    mcast = attrs.evolve(
        _two_sites(), groups=(Group(0, S0, (1, 0, 1, 0)),),
        programs=(EngineProgram(S0, Engine.READER, (Reserve(0, 2), McastSend(0, 2, 0, 1), WriteBarrier(), Push(0, 2))),
                  *_two_sites().programs[1:]))
    phased = attrs.evolve(base, sections=(SectionSpan("s0", True), SectionSpan("s1")),
                          buffers=(attrs.evolve(base.buffers[0], shard=None, section=0),
                                   attrs.evolve(base.buffers[1], cb=0, section=1)))
    return [
        ("undeclared", attrs.evolve(base, buffers=(attrs.evolve(base.buffers[0], shard=Shard("zz")), base.buffers[1])),
         "shard names tensor 'zz', which is not declared"),
        ("dtype", attrs.evolve(base, tensors=(attrs.evolve(base.tensors[0], dtype="fp32"), base.tensors[1])),
         "its dtype must be the tensor's 'fp32'"),
        ("past", attrs.evolve(base, buffers=(attrs.evolve(base.buffers[0], shard=Shard("a", 1)), base.buffers[1])),
         "reach tile 2 of tensor 'a', past its 2 tiles"),
        ("rows", attrs.evolve(base, buffers=(attrs.evolve(base.buffers[0], shard=Shard("a", 0, 2, 1)), base.buffers[1])),
         "the shard's rows overlap"),
        ("state", copy_through(in_role=Role.STATE), "a shard of a state is not said yet"),
        ("space", attrs.evolve(base, buffers=(attrs.evolve(base.buffers[0], space=Space.ACC), base.buffers[1])),
         "a sharded buffer lives in local memory"),
        ("input written", copy_through(in_role=Role.INPUT, out_role=Role.INPUT),
         "inputs and params are read-only"),
        ("output read", copy_through(in_role=Role.OUTPUT), "a tensor that is written and read is an activation"),
        ("two cores", _two_sites(shard=Shard("a", 1)), "a sharded tensor's tile lives on one core"),
        ("unaliased", _two_sites(site=S0, cb=1, shard=Shard("a", 1)), "so one aliases the other (alias_of)"),
        ("plain alias", alias_p, "aliases sharded buffer 0"),
        ("multicast into", mcast, "lands in sharded buffer 1"),
        ("multicast from the back", mcast, "multicasts from the back of sharded buffer 0"),
        ("earlier phase", phased, "of an earlier phase uses cb index 0"),
        ("resident", attrs.evolve(base, resident=(Resident("a", S0, WORMHOLE.reserved_base + 65536, 2 * BF16, 0, 0),)),
         "is both resident and sharded"),
        ("addresses", attrs.evolve(_two_sites(), memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * BF16),
                                                         BufferAt(1, WORMHOLE.reserved_base + 4096, 2 * BF16))),
         "a sharded L1 buffer has one address on every core"),
    ]


@pytest.mark.parametrize(("what", "program", "rule"), _refusals(), ids=[x[0] for x in _refusals()])
def test_validate_refuses_what_the_hardware_does_not_allow_by_name(what: str, program: Program, rule: str) -> None:
    found = [str(v) for v in validate(program)]
    assert any(rule in f for f in found), (what, found)


def test_aliases_on_one_shard_and_two_cores_sharing_a_tensor_are_valid() -> None:
    assert validate(_two_sites()) == []
    base = copy_through()
    same = attrs.evolve(base, buffers=(*base.buffers, Buffer(2, "c_3", S0, 3, 1, 2, "bf16", alias_of=0,
                                                             shard=Shard("a"))))
    assert validate(laid_out(same)) == []
    assert written_shards(base) == frozenset({1})


# --------------------------------------------------------------------------------------------- the interpreter


def test_a_read_shard_publishes_its_tensor_unfilled_and_a_plain_buffer_does_not() -> None:
    assert simulate(copy_through()).violations == ()
    plain = simulate(copy_through(shard_in=None))
    assert R.CB_PUSH_UNFILLED in plain.rules()


def test_a_write_shard_must_be_filled_before_its_push() -> None:
    """Compute packs one tile and pushes two pages of the output's shard: the second page is not the output's."""
    p = copy_through()
    one = (Wait(0, 2), Reserve(1, 2), AcquireAcc(2, "bf16"), Compute("copy", 2, (Operand(0, 2),)), PackAcc(1, 1),
           ReleaseAcc(), Pop(0, 2), Push(1, 2))
    broken = attrs.evolve(p, programs=(p.programs[0], attrs.evolve(p.programs[1], ops=one), p.programs[2]))
    assert R.CB_PUSH_UNFILLED in simulate(broken).rules()
    assert R.CB_PUSH_UNFILLED in {r.split(":")[0] for r in not_proved(certify(broken, cache=False))}


def test_a_push_past_the_shard_is_an_overrun_in_a_lap_and_in_a_ring_larger_than_its_shard() -> None:
    lap = copy_through(reader=(Reserve(0, 2), Push(0, 2), Reserve(0, 1), Push(0, 1)))
    v = [x for x in simulate(lap).violations if x.rule == R.CB_SHARD_OVERRUN]
    assert [x.position.path for x in v] == [(3,)]
    assert "ring slot 0 again" in v[0].message
    bigger = copy_through(shard_out=Shard("o", tiles=1))
    v = [x for x in simulate(bigger).violations if x.rule == R.CB_SHARD_OVERRUN]
    assert v
    assert "larger than its shard" in v[0].message
    assert R.OUTPUT_UNWRITTEN in simulate(bigger).rules()  # tile 1 of o is on no shard


# --------------------------------------------------------------------------------------------- vendor forms


def test_the_vendor_sharded_eltwise_binary_proves_with_nothing_left() -> None:
    for p in (VENDOR.eltwise_binary_sharded(), VENDOR.eltwise_binary_sharded(release="0.72.0")):
        r = certify(p, cache=False)
        assert r.exit_code == 0, not_proved(r)
        assert explore(p, max_states=200_000).verdict == "ok"


def test_the_vendor_072_writer_leaves_pages_a_handed_on_index_must_not() -> None:
    p = VENDOR.eltwise_binary_sharded(release="0.72.0")
    held = attrs.evolve(p, buffers=tuple(attrs.evolve(b, persistent=b.cb == 2) for b in p.buffers))
    r = certify(held, cache=False)
    assert set(not_proved(r)) == {"balance-cb:b2", "balance-cb:b5"}
    replayed(r, "balance-cb:b2")


def test_a_cb_twice_its_banks_shard_is_refuted_at_the_second_blocks_push() -> None:
    """tt-metal #15337's kind: c_2 keeps the inputs' 12 pages on an output shard of 6 tiles."""
    p = VENDOR.eltwise_binary_sharded("overrun", out_rows=1)
    r = certify(p, cache=False)
    assert r.exit_code == 1
    bad = not_proved(r)
    assert bad == {"cb-shard-overrun:b2": "refuted", "cb-shard-overrun:b5": "refuted",
                   "output-unwritten:out": "refuted"}
    x = next(x for x in r.results if x.name == "cb-shard-overrun:b2")
    cex = x.counterexample or {}
    assert (cex["path"], cex["iteration"], cex["running_sum"]) == ([0, 9], {"block": 1}, 6)
    loc = p.source_of(cex["engine"], tuple(cex["path"]))
    assert loc is not None
    assert (loc.line, loc.text) == (140, "dfb_out0.push_back(per_core_block_size);")
    replayed(r, "cb-shard-overrun:b2")


# --------------------------------------------------------------------------------------------- tensor rules


def _activation_read(wait: bool) -> Program:
    """Activation ``x`` written by S1's writer (a WriteTiles, barriered) and announced by a semaphore; S0's reader
    publishes it through a read shard of ``x`` after the semaphore (``wait``) or at once (the race)."""
    x, a = Tensor("x", (32, 64), "bf16", Role.ACTIVATION), Tensor("a", (32, 64), "bf16", Role.INPUT)
    bufs = (Buffer(0, "xs", S0, 0, 1, 2, "bf16", shard=Shard("x")), Buffer(1, "w", S1, 0, 1, 2, "bf16"))
    w = EngineProgram(S1, Engine.WRITER, (Wait(1, 2), WriteTiles(1, "x", Addr(0), 2), WriteBarrier(), Pop(1, 2),
                                          SemInc(0, S0, 1), AtomicBarrier()))
    r1 = EngineProgram(S1, Engine.READER, (Reserve(1, 2), ReadTiles("a", Addr(0), 2, 1), ReadBarrier(), Push(1, 2)))
    r0 = EngineProgram(S0, Engine.READER, ((SemWait(0, WaitCond.EQ, 1), SemSet(0, 0)) if wait else ())
                       + (Reserve(0, 2), Push(0, 2)))
    c0 = EngineProgram(S0, Engine.COMPUTE, (Wait(0, 2), AcquireAcc(2, "bf16"), Compute("copy", 2, (Operand(0, 2),)),
                                            ReleaseAcc(), Pop(0, 2)))
    return laid_out(Program("act_read", WORMHOLE, tensors=(x, a), buffers=bufs,
                            semaphores=(Semaphore(0, "done", (S0,), 0, host_init=not wait),),
                            programs=(r0, c0, r1, w)))


def _activation_written(wait: bool) -> Program:
    """Activation ``x`` packed by S0's compute into a write shard; S1's reader reads it over the NoC after S0's writer
    saw the pages and incremented S1's semaphore (``wait``), or at once (the race)."""
    x, o = Tensor("x", (32, 64), "bf16", Role.ACTIVATION), Tensor("o", (32, 64), "bf16", Role.OUTPUT)
    bufs = (Buffer(0, "xs", S0, 0, 1, 2, "bf16", shard=Shard("x")), Buffer(1, "r", S1, 0, 1, 2, "bf16"))
    c = EngineProgram(S0, Engine.COMPUTE, (Reserve(0, 2), AcquireAcc(2, "bf16"), Compute("fill", 2), PackAcc(0, 2),
                                           ReleaseAcc(), Push(0, 2)))
    w = EngineProgram(S0, Engine.WRITER, (Wait(0, 2), Pop(0, 2), SemInc(0, S1, 1), AtomicBarrier()))
    r = EngineProgram(S1, Engine.READER, ((SemWait(0, WaitCond.EQ, 1), SemSet(0, 0)) if wait else ())
                      + (Reserve(1, 2), ReadTiles("x", Addr(0), 2, 1), ReadBarrier(), Push(1, 2)))
    w1 = EngineProgram(S1, Engine.WRITER, (Wait(1, 2), WriteTiles(1, "o", Addr(0), 2), WriteBarrier(), Pop(1, 2)))
    return laid_out(Program("act_written", WORMHOLE, tensors=(x, o), buffers=bufs,
                            semaphores=(Semaphore(0, "done", (S1,), 0, host_init=not wait),),
                            programs=(c, w, r, w1)))


def _written_twice(wait: bool) -> Program:
    """Output ``o``: S1's writer writes its tile 0 (a WriteTiles, barriered) and signals S0, whose compute then packs
    tiles 0-1 into its write shard of ``o`` — or packs at once, while S1's write may be incomplete (the race: a shard's
    write runs from its pack to its push)."""
    o, a = Tensor("o", (32, 64), "bf16", Role.OUTPUT), Tensor("a", (32, 64), "bf16", Role.INPUT)
    bufs = (Buffer(0, "os", S0, 0, 1, 2, "bf16", shard=Shard("o")), Buffer(1, "w", S1, 0, 1, 1, "bf16"))
    c0 = EngineProgram(S0, Engine.COMPUTE, ((SemWait(0, WaitCond.EQ, 1), SemSet(0, 0)) if wait else ()) + (
        Reserve(0, 2), AcquireAcc(2, "bf16"), Compute("fill", 2), PackAcc(0, 2), ReleaseAcc(), Push(0, 2)))
    w0 = EngineProgram(S0, Engine.WRITER, (Wait(0, 2), Pop(0, 2)))
    r1 = EngineProgram(S1, Engine.READER, (Reserve(1, 1), ReadTiles("a", Addr(0), 1, 1), ReadBarrier(), Push(1, 1)))
    w1 = EngineProgram(S1, Engine.WRITER, (Wait(1, 1), WriteTiles(1, "o", Addr(0), 1), WriteBarrier(), Pop(1, 1),
                                           SemInc(0, S0, 1), AtomicBarrier()))
    return laid_out(Program("written_twice", WORMHOLE, tensors=(o, a), buffers=bufs,
                            semaphores=(Semaphore(0, "done", (S0,), 0, host_init=not wait),),
                            programs=(c0, w0, r1, w1)))


CASES = {"activation read by a shard": _activation_read, "activation written by a shard": _activation_written,
         "a tile written by a shard and by a WriteTiles": _written_twice}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shard_accesses_prove_when_ordered_and_race_when_not(case: str) -> None:
    ok, race = CASES[case](True), CASES[case](False)
    assert certify(ok, cache=False).exit_code == 0, not_proved(certify(ok, cache=False))
    assert explore(ok).verdict == "ok"
    r = certify(race, cache=False)
    bad = not_proved(r)
    hb = [n for n in bad if n.startswith(("hb-activation", "hb-write-write"))]
    assert hb, bad
    assert all(bad[n] == "refuted" for n in hb), bad
    got = replayed(r, hb[0])
    assert got["violation"]["rule"] == R.TENSOR_RACE
    assert R.TENSOR_RACE in explore(race).rules()


def test_a_shards_write_runs_from_its_pack_to_its_push() -> None:
    """A WriteTiles of a tile issued between compute's pack into its shard's page and the push races the shard's write
    (the pack began it), and so does the pack of a tile whose WriteTiles is still incomplete."""
    p = _written_twice(True)
    c0 = (Reserve(0, 2), AcquireAcc(2, "bf16"), Compute("fill", 2), PackAcc(0, 2), ReleaseAcc(),
          SemWait(0, WaitCond.EQ, 1), SemSet(0, 0), Push(0, 2))  # packed, then waits for S1's write before its push
    held = attrs.evolve(p, programs=(attrs.evolve(p.programs[0], ops=c0), *p.programs[1:]))
    got = [v for v in explore(held).violations if v.violation.rule == R.TENSOR_RACE]
    # in either order: the WriteTiles issued while the pack's write is incomplete, or the pack while the WriteTiles is
    assert {(v.violation.position.engine, v.violation.position.path) for v in got} == {("(1,0).writer", (1,)),
                                                                                       ("(0,0).compute", (3,))}
    r = certify(held, cache=False)
    assert not_proved(r) == {"hb-write-write:o:(1,0).writer[1]~(0,0).compute[7]": "refuted"}
    replayed(r, "hb-write-write:o:(1,0).writer[1]~(0,0).compute[7]")


def _output_in_trip_loop(role: Role) -> Program:
    """Compute packs one page a trip iteration into a write shard of ``o`` (its shard: 3 pages at ``t``'s max)."""
    o = Tensor("o", (32, 96), "bf16", role)
    c = EngineProgram(S0, Engine.COMPUTE, (Loop("k", "t", (Reserve(0, 1), AcquireAcc(1, "bf16"), Compute("fill", 1),
                                                           PackAcc(0, 1), ReleaseAcc(), Push(0, 1))),))
    w = EngineProgram(S0, Engine.WRITER, (Loop("k", "t", (Wait(0, 1), Pop(0, 1))),))
    return laid_out(Program("trip_out", WORMHOLE, tensors=(o,), trips=(Trip("t", 3),),
                            buffers=(Buffer(0, "c_2", S0, 2, 1, 3, "bf16", shard=Shard("o")),), programs=(c, w)))


def test_a_shard_written_for_a_runtime_count_covers_an_activation_not_an_output() -> None:
    assert certify(_output_in_trip_loop(Role.ACTIVATION), cache=False).exit_code == 0
    r = certify(_output_in_trip_loop(Role.OUTPUT), cache=False)
    assert not_proved(r) == {"output-unwritten:o": "refuted"}
    x = next(x for x in r.results if x.name == "output-unwritten:o")
    assert x.counterexample is not None
    assert x.counterexample["trips"]["t"] < 3
    small = attrs.evolve(_output_in_trip_loop(Role.ACTIVATION), buffers=(
        attrs.evolve(_output_in_trip_loop(Role.ACTIVATION).buffers[0], shard=Shard("o", tiles=2)),))
    r = certify(small, cache=False)
    assert not_proved(r) == {"cb-shard-overrun:b0": "refuted"}
    assert next(x for x in r.results if x.name == "cb-shard-overrun:b0").counterexample["trips"] == {"t": 3}


# --------------------------------------------------------------------------------------------- memory


def test_a_shards_bytes_are_taken_in_every_phase() -> None:
    """A later phase's buffer on the bytes of an earlier phase's sharded buffer overlaps the tensor's shard; the same
    layout with a plain buffer reuses the bytes legally."""
    base = copy_through()
    two = attrs.evolve(base, sections=(SectionSpan("s0", True), SectionSpan("s1")),
                       buffers=(*base.buffers, Buffer(2, "later", S0, 5, 1, 2, "bf16", section=1)),
                       memory=(*base.memory, BufferAt(2, base.memory[0].offset, 2 * BF16)))
    got = {r.name: r.verdict for r in check_memory(two)}
    assert got["memory-disjoint:(0,0).local.phase1"] is Verdict.REFUTED
    plain = attrs.evolve(two, buffers=(attrs.evolve(two.buffers[0], shard=None), *two.buffers[1:]))
    assert {r.name: r.verdict for r in check_memory(plain)}["memory-disjoint:(0,0).local.phase1"] is Verdict.PROVED


# --------------------------------------------------------------------------------------------- other tools


def test_promela_takes_a_read_shard_of_an_input_and_refuses_a_write_shard_by_name() -> None:
    with pytest.raises(PromelaUnsupported, match="b1 is sharded on output tensor 'o': the tensor tiles its pushes "
                                                 "write are not modelled in Promela"):
        to_promela(copy_through())
    read_only = copy_through(shard_out=None)
    lap = copy_through(shard_out=None, reader=(Reserve(0, 2), Push(0, 2), Reserve(0, 1), Push(0, 1)))
    assert "R_cb_shard_overrun" in to_promela(lap)
    if not spin_available():
        pytest.skip("spin is not installed (Debian package spin)")
    assert run_spin(to_promela(read_only)).verdict == explore(read_only).verdict == "ok"
    got = run_spin(to_promela(lap))
    assert R.CB_SHARD_OVERRUN in got.rules
    assert R.CB_SHARD_OVERRUN in explore(lap).rules()


def test_compose_refuses_a_sharded_section_and_the_canonical_form_renames_its_tensor() -> None:
    p = copy_through()
    with pytest.raises(ComposeRefused, match="section-sharded"):
        compose([p, attrs.evolve(p, name="again")], target=WORMHOLE)
    # The templated route (compile -o) checks its templates alike: it lacked the check.
    names = tuple(x.name for x in p.tensors)
    with pytest.raises(ComposeRefused, match="section-sharded"):
        compose_templated([p], [Instance("a", 0, names, barrier_after=True), Instance("b", 0, names)], target=WORMHOLE)
    c = canonical(p)
    assert c is not None
    assert [b.shard.tensor for b in c.program.buffers if b.shard is not None] == ["%t0", "%t1"]
    assert validate(c.program) == []


def test_every_shard_mutant_of_the_vendor_form_is_killed() -> None:
    p = VENDOR.eltwise_binary_sharded()
    ms = [m for m in mutants(p) if m.kind in ("unshard", "shard-1", "shard+1")]
    assert len(ms) == 18
    outcomes = [judge(m) for m in ms]
    assert all(o.killed for o in outcomes), [(o.mutant.what, o.status, o.detail) for o in outcomes if not o.killed]
    assert {o.detail.split("/")[1].split(":")[0] for o in outcomes if o.status == "refuted"} == {
        R.CB_PUSH_UNFILLED, R.CB_SHARD_OVERRUN, R.OUTPUT_UNWRITTEN}


# --------------------------------------------------------------------------------------------- the tt-metal host


DATA = ROOT / "tests" / "data" / "ttmetal" / "sharded"


def _host(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """``tests/data/ttmetal/sharded/host.yaml`` changed by ``edit``, its kernel root made absolute."""
    d = yaml.safe_load((DATA / "host.yaml").read_text())
    d["kernel_root"] = str(DATA.resolve())
    edit(d)
    out = tmp_path / "host.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


def test_a_globally_allocated_host_buffer_sits_on_its_tensors_shard() -> None:
    """``globally_allocated: TENSOR`` (``set_globally_allocated_address(*tensor.buffer())``) with the tensor's shard
    spec: each core's buffer holds that core's shard, at the tensor's one address; the copy proves."""
    pytest.importorskip("tree_sitter_cpp")
    from verispatial.frontends.ttmetal import import_host

    p = import_host(DATA / "host.yaml")
    assert [(b.site, b.shard) for b in p.buffers] == [
        (S0, Shard("src", 0, 0, 0, 4)), (S0, Shard("dst", 0, 0, 0, 4)),
        (S1, Shard("src", 4, 0, 0, 4)), (S1, Shard("dst", 4, 0, 0, 4))]
    at = {m.buf: m.offset for m in p.memory}
    assert at[0] == at[2] != at[1] == at[3]
    assert certify(p, cache=False).exit_code == 0


@pytest.mark.parametrize(("edit", "field", "rule"), [
    (lambda d: d["buffers"][0].update(globally_allocated=True), "buffers[0].globally_allocated",
     "names the sharded tensor whose buffer it sits on"),
    (lambda d: d["tensors"][0].pop("shard"), "buffers[0].globally_allocated", "got 'src' (sharded tensors: dst)"),
    (lambda d: (d["tensors"][0].update(shape=[32, 128]), d["tensors"][0]["shard"].update(cores="0,0")),
     "buffers[0].globally_allocated", "tensor 'src' has no shard on core (1,0)"),
    (lambda d: d["tensors"][0]["shard"].update(shape=[48, 128]), "tensors[0].shard.shape", "a shard is whole tiles"),
    (lambda d: d["tensors"][0].update(shape=[96, 128]), "tensors[0].shard", "height sharding takes whole rows"),
    (lambda d: d["tensors"][0]["shard"].update(layout="block"), "tensors[0].shard", "block sharding puts the 2x1"),
])
def test_bad_sharded_host_files_name_the_field(tmp_path: Path, edit: Callable[[dict[str, Any]], None], field: str,
                                               rule: str) -> None:
    from verispatial.frontends.ttmetal import import_host

    with pytest.raises(ParseError) as e:
        import_host(_host(tmp_path, edit))
    assert e.value.field == field
    assert rule in e.value.rule


def test_a_buffer_rule_broken_names_the_host_buffer_not_the_program_id(tmp_path: Path) -> None:
    """A structural rule a host buffer breaks on a core (``out`` globally allocated on the input tensor, which the
    compute kernel writes) names the host description's entry, ``buffers[1]``, and the core: the program's buffer ids
    (one per core and index) are not the ones the user wrote (a new user's report named ``buffer 1 (out)``)."""
    pytest.importorskip("tree_sitter_cpp")
    from verispatial.frontends.ttmetal import import_host

    with pytest.raises(InvalidProgram) as e:
        import_host(_host(tmp_path, lambda d: d["buffers"][1].update(globally_allocated="src")))
    entities = [v.entity for v in e.value.violations]
    assert "buffers[1] (out, index 16) on core (0,0)" in entities
    assert "buffers[1] (out, index 16) on core (1,0)" in entities
    assert not [x for x in entities if x.startswith("buffer ")]

def test_the_vendor_host_reads_what_the_transcription_says() -> None:
    """``examples/ttmetal/eltwise_binary_sharded/host.yaml`` through the front end, reading the wheel's kernels under
    ``IN0_SHARDED``/``IN1_SHARDED``/``OUT_SHARDED``: the ops, their lines, the buffers and shards and the memory map
    of ``examples/vendor/eltwise_binary_sharded.json``."""
    import os

    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    pytest.importorskip("tree_sitter_cpp")
    if os.environ.get("VERISPATIAL_TTNN") is None and wheel_root(download=False) is None:
        pytest.skip(f"the ttnn {TTNN_VERSION} wheel is not unpacked ($VERISPATIAL_TTNN; examples/ttmetal/README.md)")
    from verispatial.frontends.ttmetal import import_host

    got = import_host(ROOT / "examples" / "ttmetal" / "eltwise_binary_sharded" / "host.yaml")
    mine = VENDOR.eltwise_binary_sharded()
    key = {e.key: e for e in mine.programs}
    for e in got.programs:
        assert e.ops == key[e.key].ops, e.key
        assert [(q, loc.line) for q, loc in e.sources] == [(q, loc.line) for q, loc in key[e.key].sources], e.key
    assert [attrs.evolve(b, name="") for b in got.buffers] == [attrs.evolve(b, name="") for b in mine.buffers]
    assert got.memory == mine.memory
    assert certify(got, cache=False).exit_code == 0


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(programs().filter(lambda p: any(b.shard is not None for b in p.buffers)))
def test_random_programs_with_shards_agree_with_the_explorer(p: Program) -> None:
    from test_differential import check_agreement

    found = check_agreement(p)
    assert found == [], "\n".join([*found, dumps(p)])
