"""Golden tests of the matmul's accumulation forms (``AccForm``): the exact compute program of each form on a small
one-site section — K in 4 blocks (the middle loop exists), 3 and 2 (the edge cases) — each certified PROVED on
Wormhole and Blackhole (the GPU for ``registers``) and run by the interpreter to termination; the chain stays inside
the last block's sub-block nest in every form; ``tile``'s default choice and its refusals of a forced form that
cannot apply; one mutant per new form (the drain or an operand pop dropped) refuted with a replayed counterexample.

The section: out = in0 (64 x K) @ in1 (K x 256) on one site: a 2 x 8-tile block in two 2 x 4 sub-blocks of 8
accumulator tiles, K blocks of 2 tiles. Buffers: b0 = c_0 (4 pages a block), b1 = c_1 (16), b2 = c_24 (the spill),
b3 = c_16 (the output, 2 sub-blocks of 8 pages; the whole 16-page block when the spill shares it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import (
    BLACKHOLE,
    GPU,
    WORMHOLE,
    AcquireAcc,
    Compute,
    Engine,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReleaseAcc,
    Reserve,
    Site,
    Target,
    Wait,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.ops import op_text
from verispatial.ir.program import walk
from verispatial.ir.serialize import program_from_dict, program_to_dict
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.petri.interp import simulate

T = 8  # tiles (pages) per sub-block
OB = 16  # pages of the site's block
HEAD: tuple[Op, ...] = (Wait(0, 4), Wait(1, 16))
TAIL: tuple[Op, ...] = (Pop(0, 4), Pop(1, 16))
#: What every matmul step unpacks: the waited in0 (b0) and in1 (b1) blocks.
INS: tuple[Operand, ...] = (Operand(0, 4), Operand(1, 16))
MUL: tuple[Op, ...] = (AcquireAcc(T, "bf16"), Compute("matmul", T, INS))


def reload(interm: int) -> tuple[Op, ...]:
    """Read a spilled partial back from ``interm`` (the copy unpacks its pages), then multiply on top of it."""
    return (AcquireAcc(T, "bf16"), Wait(interm, T), Compute("copy", T, (Operand(interm, T),)), Pop(interm, T),
            Compute("matmul", T, INS))


RELOAD = reload(2)
DRAIN: tuple[Op, ...] = (Wait(2, OB), Pop(2, OB))


def pack(buf: int, accumulate: bool = False) -> tuple[Op, ...]:
    return (Reserve(buf, T), PackAcc(buf, T, accumulate), Push(buf, T), ReleaseAcc())


def block(body: tuple[Op, ...], after: tuple[Op, ...] = ()) -> tuple[Op, ...]:
    """One K block: the operand waits, the 1 x 2 sub-block nest, ``after``, the operand pops."""
    return (*HEAD, Loop("i", 1, (Loop("j", 2, body),)), *after, *TAIL)


def graph(m: int, n: int, k: int, in0: str = "bf16", **chain: str) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("in0", [m, k], dtype=in0, role="input")
    b.tensor("in1", [k, n], role="param")
    if "bias" in chain:
        b.tensor(chain["bias"], [n], role="param")
    b.tensor("out", [m, n], role="output")
    b.matmul("mm", "in0", "in1", "out", **chain)
    return b.build()


def compile_form(g: ModelGraph, target: Target, form: str | None) -> tuple[Program, str]:
    pipe = Pipeline((Lower(), Tile(max_cols=1, max_rows=1, acc_form=form), Place(), Size(), SynthesizeHandshakes()))
    p, frags = compile_section(g, 0, target, pipe)
    return p, frags[1]["plan"]["form"]


def compute_ops(p: Program) -> tuple[Op, ...]:
    (ep,) = [ep for ep in p.programs if ep.site == Site(0, 0) and ep.engine == Engine.COMPUTE]
    return ep.ops


def spill_reload(nb: int) -> tuple[Op, ...]:
    mid = (Loop("k", nb - 2, block((*RELOAD, *pack(2)))),) if nb > 2 else ()
    return (*block((*MUL, *pack(2))), *mid, *block((*RELOAD, *pack(3))))


def in_place(nb: int) -> tuple[Op, ...]:
    mid = (Loop("k", nb - 2, block((*MUL, *pack(2, True)), DRAIN)),) if nb > 2 else ()
    return (Reserve(3, OB), *block((*MUL, *pack(2)), DRAIN), *mid, *block((*MUL, *pack(3, True))))


def pack_accumulate(nb: int) -> tuple[Op, ...]:
    last = block((*RELOAD, *pack(3)))
    if nb == 2:
        return (*block((*MUL, *pack(2))), *last)
    mid = (Loop("k", nb - 3, block((*MUL, *pack(2, True)), DRAIN)),) if nb > 3 else ()
    return (*block((*MUL, *pack(2)), DRAIN), *mid, *block((*MUL, *pack(2, True))), *last)


GOLDEN: dict[str, Callable[[int], tuple[Op, ...]]] = {
    "spill_reload": spill_reload, "in_place": in_place, "pack_accumulate": pack_accumulate}


def proves_and_terminates(p: Program) -> None:
    report = certify(p)
    assert report.exit_code == 0, [(r.name, r.verdict.value) for r in report.results if r.verdict != Verdict.PROVED]
    assert simulate(p).status == "terminated"


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=["wormhole", "blackhole"])
@pytest.mark.parametrize(("form", "nb"), [(f, nb) for f in GOLDEN for nb in (4, 3, 2)])
def test_spilling_form_is_the_golden_sequence_and_proves(target: Target, form: str, nb: int) -> None:
    p, got = compile_form(graph(64, 256, 64 * nb), target, form)
    assert got == form
    assert compute_ops(p) == GOLDEN[form](nb)
    # The spill shares the output's bytes exactly in the in-place form (the output is its alias, whole-block deep).
    assert [(b.name, b.capacity, b.alias_of) for b in p.buffers] == [
        ("c_0", 8, None), ("c_1", 32, None), ("c_24", OB, None),
        ("c_16", OB, 2) if form == "in_place" else ("c_16", 2 * T, None)]
    proves_and_terminates(p)


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=["wormhole", "blackhole"])
def test_single_block_packs_once_per_sub_block(target: Target) -> None:
    p, form = compile_form(graph(64, 256, 64), target, None)
    assert form == "single"
    # No spill: the output c_16 is b2.
    assert compute_ops(p) == block((*MUL, *pack(2)))
    proves_and_terminates(p)


@pytest.mark.parametrize("target", [WORMHOLE, BLACKHOLE], ids=["wormhole", "blackhole"])
def test_streaming_holds_the_block_and_steps_k_one_tile_at_a_time(target: Target) -> None:
    # A 2 x 2-tile block fits one acquire: K (8 tiles) streams through it in 8 one-tile steps, one pack.
    p, form = compile_form(graph(64, 64, 256), target, None)
    assert form == "streaming"
    assert compute_ops(p) == (
        AcquireAcc(4, "bf16"),
        Loop("k", 8, (Wait(0, 2), Wait(1, 2), Compute("matmul", 4, (Operand(0, 2), Operand(1, 2))), Pop(0, 2),
                      Pop(1, 2))),
        Reserve(2, 4), PackAcc(2, 4), Push(2, 4), ReleaseAcc())
    assert [(b.name, b.capacity) for b in p.buffers] == [("c_0", 4), ("c_1", 4), ("c_16", 8)]
    proves_and_terminates(p)


def test_registers_on_the_gpu() -> None:
    # GPU tiles are 16 x 16: a 2 x 4-tile block over K = 4 tiles in 2 blocks, held in registers, packed once.
    p, form = compile_form(graph(32, 64, 64), GPU, None)
    assert form == "registers"
    assert compute_ops(p) == (
        AcquireAcc(8, "bf16"),
        Loop("k", 2, (Wait(0, 4), Wait(1, 8), Compute("matmul", 8, (Operand(0, 4), Operand(1, 8))), Pop(0, 4),
                      Pop(1, 8))),
        Reserve(2, 8), PackAcc(2, 8), Push(2, 8), ReleaseAcc())
    proves_and_terminates(p)


def chain(out: int) -> tuple[Op, ...]:
    """The bias + silu chain on one sub-block's page, as it follows the last pack (b3 = the matmul's hand-off c_3,
    b2 = the bias row c_2, b4 = c_4, ``out`` = c_16: b6 after the spill c_24 = b5, b5 without a spill)."""
    return (
        Wait(3, T), Wait(2, 4), AcquireAcc(T, "bf16"), Compute("bias", T, (Operand(3, T), Operand(2, 4))), Reserve(4, T),
        PackAcc(4, T), Push(4, T), ReleaseAcc(), Pop(3, T), Pop(2, 4),
        Wait(4, T), AcquireAcc(T, "bf16"), Compute("silu", T, (Operand(4, T),)), Reserve(out, T), PackAcc(out, T),
        Push(out, T), ReleaseAcc(), Pop(4, T))


@pytest.mark.parametrize("form", ["spill_reload", "in_place", "pack_accumulate", "single"])
def test_the_chain_stays_in_the_last_blocks_nest(form: str) -> None:
    p, got = compile_form(graph(64, 256, 256 if form != "single" else 64, bias="b", activation="silu"), WORMHOLE, form)
    assert got == form
    ops = compute_ops(p)
    last_nest = ops[-3]
    assert isinstance(last_nest, Loop)
    inner = last_nest.body[0]
    assert isinstance(inner, Loop)
    mm_pack = {"in_place": (*MUL, Reserve(3, T), PackAcc(3, T, True), Push(3, T), ReleaseAcc()),
               "single": (*MUL, *pack(3))}.get(form, (*reload(5), *pack(3)))
    assert inner.body == (*mm_pack, *chain(5 if form == "single" else 6))
    if form == "in_place":
        # The spill shares the matmul's own output, the chain hand-off c_3, which holds the whole block.
        assert [(b.name, b.capacity, b.alias_of) for b in p.buffers if b.name in ("c_3", "c_24", "c_16")] == [
            ("c_3", OB, None), ("c_24", OB, 3), ("c_16", 2 * T, None)]
    proves_and_terminates(p)


def test_streaming_chain_follows_the_single_pack() -> None:
    p, form = compile_form(graph(64, 64, 256, bias="b"), BLACKHOLE, None)
    assert form == "streaming"
    ops = compute_ops(p)
    assert ops[2:6] == (Reserve(3, 4), PackAcc(3, 4), Push(3, 4), ReleaseAcc())
    assert [type(o).__name__ for o in ops[6:]] == [
        "Wait", "Wait", "AcquireAcc", "Compute", "Reserve", "PackAcc", "Push", "ReleaseAcc", "Pop", "Pop"]
    proves_and_terminates(p)


@pytest.mark.parametrize(("m", "n", "k", "in0", "target", "form"), [
    (64, 256, 64, "bf16", WORMHOLE, "single"),           # K is one block
    (64, 64, 256, "bf16", WORMHOLE, "streaming"),        # the block fits one acquire
    (64, 256, 256, "bf16", WORMHOLE, "in_place"),        # packer accumulation, one tile size
    (64, 256, 256, "bf16", BLACKHOLE, "in_place"),
    (64, 256, 192, "fp32", WORMHOLE, "pack_accumulate"),  # fp32 partials, bf16 output: no shared pages, nb = 3
    (64, 256, 128, "fp32", WORMHOLE, "spill_reload"),     # the same at nb = 2
    (32, 64, 64, "bf16", GPU, "registers"),
])
def test_default_form(m: int, n: int, k: int, in0: str, target: Target, form: str) -> None:
    p, got = compile_form(graph(m, n, k, in0=in0), target, None)
    assert got == form
    # A section with a 32-bit float buffer accumulates in fp32 (half the DST tiles); every acquire says so and fits.
    acquires = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, AcquireAcc)]
    assert acquires
    assert {op.dtype for op in acquires} == {"fp32" if in0 == "fp32" else "bf16"}
    assert all(op.tiles <= target.acc_capacity(op.dtype) for op in acquires)


def test_spill_reload_without_packer_accumulation() -> None:
    plain = attrs.evolve(WORMHOLE, name="wormhole_no_l1_acc", packer_l1_acc=False)
    _, got = compile_form(graph(64, 256, 256), plain, None)
    assert got == "spill_reload"


@pytest.mark.parametrize(("g", "target", "form", "why"), [
    (graph(64, 256, 256), GPU, "in_place", "target gpu_sm80 cannot spill the accumulator"),
    (graph(64, 256, 256), GPU, "spill_reload", "target gpu_sm80 cannot spill the accumulator"),
    (graph(64, 256, 256), attrs.evolve(BLACKHOLE, name="bh_no_l1_acc", packer_l1_acc=False), "pack_accumulate",
     "target bh_no_l1_acc has no packer L1 accumulation"),
    (graph(64, 256, 256), WORMHOLE, "streaming",
     "the site's whole 2x8-tile block (16 tiles) must stay in one accumulator acquire; target wormhole_b0 holds 8"),
    (graph(64, 256, 32), WORMHOLE, "in_place",
     "K is 1 tile(s): no K block width <= 2 gives the 2 or more blocks it spills between"),
    (graph(64, 256, 256, in0="fp32"), WORMHOLE, "in_place",
     "the partials (fp32) and the matmul's output c_16 (bf16) differ in tile size, so they cannot share pages"),
])
def test_a_forced_form_that_cannot_apply_is_refused_by_name(g: ModelGraph, target: Target, form: str,
                                                            why: str) -> None:
    with pytest.raises(PassRefused) as e:
        compile_form(g, target, form)
    assert e.value.pass_name == "tile"
    assert e.value.reason == f"op 'mm' (matmul): accumulation form {form} cannot apply: {why}"


def test_an_unknown_form_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown accumulation form 'fastest'; known: single, streaming, "
                                         "spill_reload, in_place, pack_accumulate, registers"):
        Tile(acc_form="fastest")


def _drop(ops: tuple[Op, ...], pred: Callable[[Op], bool]) -> tuple[Op, ...]:
    out: list[Op] = []
    for o in ops:
        if isinstance(o, Loop):
            out.append(attrs.evolve(o, body=_drop(o.body, pred)))
        elif not pred(o):
            out.append(o)
    return tuple(out)


def _mutant(p: Program, pred: Callable[[Op], bool]) -> Program:
    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=_drop(ep.ops, pred)) if ep.engine == Engine.COMPUTE
                                          else ep for ep in p.programs))


def _is_drain(o: Op) -> bool:
    return isinstance(o, (Wait, Pop)) and o.buf == 2 and o.pages == OB


@pytest.mark.parametrize("form", ["in_place", "pack_accumulate"])
def test_without_the_drain_the_spill_fills_and_the_compute_engine_deadlocks(form: str) -> None:
    p, _ = compile_form(graph(64, 256, 256), WORMHOLE, form)
    bad = _mutant(p, _is_drain)
    run = simulate(bad)
    assert run.status == "deadlock"
    # Block 1's first sub-block cannot reserve the spill: block 0's 16 pages were never read back.
    assert "(0,0).compute at ops[" in str(run.stuck[1])
    assert str(run.stuck[1]).endswith("reserve(b2, 8) k=0 i=0 j=0: waits for space in b2: "
                                      "capacity-(pushed-popped)=16-(16-0)=0 < 8")
    report = certify(bad)
    assert report.exit_code == 1
    (refuted,) = [r for r in report.results if r.verdict != Verdict.PROVED]
    assert (refuted.family, refuted.verdict) == ("deadlock", Verdict.REFUTED)
    assert refuted.counterexample is not None
    assert refuted.counterexample["replayed_by"]
    assert ("(0,0).compute", "reserve(b2, 8)") in [(s["position"]["engine"], s["position"]["op"])
                                                   for s in refuted.counterexample["stuck"]]


def test_in_place_without_the_drain_publishes_over_live_partials() -> None:
    # nb = 2: no middle block to block on; the last block's output push lands on pages the spill still holds.
    p, _ = compile_form(graph(64, 256, 128), WORMHOLE, "in_place")
    bad = _mutant(p, _is_drain)
    report = certify(bad)
    refuted = {r.name: r for r in report.results if r.verdict != Verdict.PROVED}
    # async-source-reuse leans on alias-clobber (nothing else rewrites a page the writer sends): failed to prove. The
    # pages b2 is left holding fault nothing by themselves (the launch's end resets the buffer): no balance finding.
    assert sorted(refuted) == ["alias-clobber:b3~b2", "async-source-reuse"]
    assert refuted["async-source-reuse"].verdict == Verdict.FAILED
    cex = refuted["alias-clobber:b3~b2"].counterexample
    assert cex is not None
    assert cex["replay"]["violation"]["rule"] == "alias-clobber"
    assert cex["engine"] == "(0,0).compute"


def test_streaming_without_an_operand_pop_deadlocks() -> None:
    p, _ = compile_form(graph(64, 64, 256), WORMHOLE, "streaming")
    bad = _mutant(p, lambda o: isinstance(o, Pop) and o.buf == 1)
    assert simulate(bad).status == "deadlock"
    report = certify(bad)
    (refuted,) = [r for r in report.results if r.verdict != Verdict.PROVED]
    assert (refuted.family, refuted.verdict) == ("deadlock", Verdict.REFUTED)
    assert refuted.counterexample is not None
    assert [s["position"]["op"] for s in refuted.counterexample["stuck"]] == [
        "reserve(b1, 2)", "wait(b0, 2)", "wait(b2, 4)"]


def _packs(ops: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for o in ops:
        out += _packs(o["body"]) if o["op"] == "loop" else [o] if o["op"] == "pack_acc" else []
    return out


def test_accumulate_round_trips_and_is_written_only_when_true() -> None:
    p, _ = compile_form(graph(64, 256, 256), WORMHOLE, "in_place")
    d = program_to_dict(p)
    (compute,) = [ep for ep in d["programs"] if ep["engine"] == "compute"]
    assert [pk.get("accumulate") for pk in _packs(compute["ops"])] == [None, True, True]
    assert program_from_dict(json.loads(json.dumps(d))) == p
    # A document written before the field loads with plain packs, and its custom target without packer_l1_acc too.
    for pk in _packs(compute["ops"]):
        pk.pop("accumulate", None)
    custom = program_to_dict(attrs.evolve(p, target=attrs.evolve(WORMHOLE, name="custom")))["target"]
    assert custom["packer_l1_acc"] is True
    d["target"] = {k: v for k, v in custom.items() if k != "packer_l1_acc"}
    old = program_from_dict(d)
    assert not old.target.packer_l1_acc
    assert [op.accumulate for ep in old.programs for op in walk(ep.ops) if isinstance(op, PackAcc)] == [False] * 3
    assert op_text(PackAcc(3, 8, True)) == "pack_acc(b3, 8, accumulate)"
    assert op_text(PackAcc(3, 8)) == "pack_acc(b3, 8)"
