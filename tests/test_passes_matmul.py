"""Golden tests of the matmul section: the compiled reuse-multicast protocol is op for op the hand-written
reference of ``examples/build_examples.py`` on both targets (flush between data and flag on Blackhole, after the
flag on Wormhole), the fused chain runs inside the last K block's sub-block nest, and a shape that cannot fit is
refused by name."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import attrs
import pytest

from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import (
    BLACKHOLE,
    GPU,
    WORMHOLE,
    AcquireAcc,
    Compute,
    Engine,
    EngineProgram,
    Flush,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReleaseAcc,
    Reserve,
    Semaphore,
    SemSet,
    SemWait,
    Site,
    Target,
    Wait,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.program import walk
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.pipeline import capped_passes
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_examples_ref", EXAMPLES / "build_examples.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pipe(cols: int, rows: int) -> Pipeline:
    return Pipeline((Lower(), Tile(max_cols=cols, max_rows=rows), Place(), Size(), SynthesizeHandshakes()))


def _mm_graph(m: int, n: int, k: int, **chain: str) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("in0", [m, k], role="input")
    b.tensor("in1", [k, n], role="param")
    if "bias" in chain:
        b.tensor(chain["bias"], [n], role="param")
    b.tensor("out", [m, n], role="output")
    b.matmul("mm", "in0", "in1", "out", **chain)
    return b.build()


def _prog(p: Program, x: int, y: int, e: Engine) -> tuple[Op, ...]:
    (ep,) = [ep for ep in p.programs if ep.site == Site(x, y) and ep.engine == e]
    return ep.ops


def _pipe_form(cols: int, rows: int, form: str) -> Pipeline:
    return Pipeline((Lower(), Tile(max_cols=cols, max_rows=rows, acc_form=form), Place(), Size(),
                     SynthesizeHandshakes()))


def _constant_flag_source(ref: Program) -> Program:
    """The reference program in the compiler's form of the flag words (verispatial/passes/handshakes.py): the
    vendor kernel stores VALID into the sender's own copy of the receiver flag at kernel start and multicasts that
    word; the compiler multicasts a word created VALID and never written (``<in>_valid_sem``, on the sender sites,
    after the other semaphores), and each receiver resets its flag once more after its last wait — so every word ends
    at its initial value and a later phase of a composed program may take its slot."""
    valid_of: dict[int, int] = {}
    sems = list(ref.semaphores)
    for s in ref.semaphores:
        if s.name.endswith("_receiver_sem"):
            senders = tuple(ep.site for ep in ref.programs if any(
                isinstance(o, McastSetValid) and o.sem == s.id for o in walk(ep.ops)))
            valid_of[s.id] = len(sems)
            sems.append(Semaphore(len(sems), s.name.replace("_receiver_sem", "_valid_sem"), senders, 1, s.role))

    def ops(ep: EngineProgram) -> tuple[Op, ...]:
        body = list(ep.ops)
        while body and isinstance(body[0], SemSet) and body[0].sem in valid_of:
            body.pop(0)
        out = tuple(_src(o) for o in body)
        waited = [o.sem for o in walk(out) if isinstance(o, SemWait) and o.sem in valid_of]
        return out + tuple(SemSet(x, 0) for x in dict.fromkeys(waited))

    def _src(o: Op) -> Op:
        if isinstance(o, McastSetValid) and o.sem in valid_of:
            return attrs.evolve(o, src=valid_of[o.sem])
        if isinstance(o, Loop):
            return attrs.evolve(o, body=tuple(_src(x) for x in o.body))
        return o

    return attrs.evolve(ref, semaphores=tuple(sems), programs=tuple(
        attrs.evolve(ep, ops=ops(ep)) if ep.engine == Engine.READER else ep for ep in ref.programs))


@pytest.mark.parametrize(("target", "flush"), [(WORMHOLE, "after_flag"), (BLACKHOLE, "between")])
def test_matmul_is_the_reference_protocol(target: Target, flush: str) -> None:
    # The vendor example spills and reloads with c_16 aliased onto c_24; the compiler's spill_reload is the plain
    # form (the alias is the in_place form's): the same reader, writer, semaphores and groups, the same compute but
    # for the cumulative c_16 reserve of block 0, and c_16 in its own bytes.
    ref_mod = _builder()
    cfg = ref_mod.MatmulConfig(m=128, n=128, k=192, cols=2, rows=2, sb_h=2, sb_w=2, in0_block_w=2)
    ref: Program = _constant_flag_source(ref_mod.matmul_reuse_mcast("ref", target, flush, cfg))
    assert certify(ref).exit_code == 0
    got, frags = compile_section(_mm_graph(128, 128, 192), 0, target, _pipe_form(2, 2, "spill_reload"))
    assert [f["pass"] for f in frags] == ["lower", "tile", "place", "size", "synthesize-handshakes"]
    assert frags[1]["plan"] == {"kind": "MatmulPlan", "cols": 2, "rows": 2, "per_site_m": 2, "per_site_n": 2,
                                "block_w": 2, "num_blocks": 3, "sb_h": 2, "sb_w": 2, "form": "spill_reload", "items": 1}
    for ep, rp in zip(got.programs, ref.programs, strict=True):
        assert (ep.site, ep.engine) == (rp.site, rp.engine)
        if ep.engine != Engine.COMPUTE:
            assert ep.ops == rp.ops
            continue
        # Reference block 0: two waits, the one 2x2 sub-block unrolled (seven ops, one of them the cumulative
        # reserve of c_16), two pops; then the middle-block loop and the last block, op for op.
        c16 = 4 * (ep.site.y * 2 + ep.site.x) + 3
        first = tuple(o for o in rp.ops[2:9] if not (isinstance(o, Reserve) and o.buf == c16))
        assert len(first) == 6
        assert ep.ops[:5] == (*rp.ops[:2], Loop("i", 1, (Loop("j", 1, first),)), *rp.ops[9:11])
        assert ep.ops[5:] == rp.ops[11:]
    assert [b.alias_of for b in got.buffers] == [None] * len(got.buffers)
    # c_16 double-buffers two sub-blocks in its own bytes instead of sharing the spill's whole block.
    assert [(b.name, b.capacity) for b in got.buffers[:4]] == [("c_0", 8), ("c_1", 8), ("c_24", 4), ("c_16", 8)]
    assert [(b.name, b.capacity) for b in ref.buffers[:4]] == [("c_0", 8), ("c_1", 8), ("c_24", 4), ("c_16", 4)]
    assert got.semaphores == ref.semaphores
    assert got.groups == ref.groups
    assert got.tensors == ref.tensors
    report = certify(got)
    assert report.exit_code == 0


@pytest.mark.parametrize(("target", "expected"), [
    (WORMHOLE, [McastSend, McastSetValid, Flush, Push]),
    (BLACKHOLE, [McastSend, Flush, McastSetValid, Push]),
])
def test_flush_placement_per_target(target: Target, expected: list[type]) -> None:
    got, _ = compile_section(_mm_graph(64, 64, 128), 0, target, _pipe(2, 2))
    (k_loop,) = [op for op in _prog(got, 0, 0, Engine.READER) if isinstance(op, Loop)]
    kinds = [type(op) for op in k_loop.body]
    # in0 half then in1 half; each sender half ends data multicast ... push.
    first_mcast = kinds.index(McastSend)
    assert kinds[first_mcast:first_mcast + 4] == expected
    assert got.groups[0].sender == Site(0, 0)
    assert got.groups[0].rect == (1, 0, 1, 0)


def test_fused_chain_runs_inside_the_last_block_nest() -> None:
    g = _mm_graph(32, 64, 128, bias="b", activation="silu")
    got, frags = compile_section(g, 0, WORMHOLE, _pipe_form(1, 1, "spill_reload"))
    # Buffers at the one site: c_0, c_1, c_2 (bias), c_3 (matmul hand-off), c_4 (bias out), c_24, c_16.
    assert [(b.name, b.cb, b.capacity, b.alias_of) for b in got.buffers] == [
        ("c_0", 0, 4, None), ("c_1", 1, 8, None), ("c_2", 2, 4, None), ("c_3", 3, 4, None), ("c_4", 4, 4, None),
        ("c_24", 24, 2, None), ("c_16", 16, 4, None)]
    t = 2
    head: list[Op] = [Wait(0, 2), Wait(1, 4)]
    tail: list[Op] = [Pop(0, 2), Pop(1, 4)]
    ins = (Operand(0, 2), Operand(1, 4))  # every matmul step unpacks the waited in0 and in1 blocks
    nest_body: tuple[Op, ...] = (
        AcquireAcc(t, "bf16"), Wait(5, t), Compute("copy", t, (Operand(5, t),)), Pop(5, t), Compute("matmul", t, ins),
        Reserve(3, t), PackAcc(3, t), Push(3, t), ReleaseAcc(),
        Wait(3, t), Wait(2, 2), AcquireAcc(t, "bf16"), Compute("bias", t, (Operand(3, t), Operand(2, 2))),
        Reserve(4, t), PackAcc(4, t), Push(4, t), ReleaseAcc(), Pop(3, t), Pop(2, 2),
        Wait(4, t), AcquireAcc(t, "bf16"), Compute("silu", t, (Operand(4, t),)), Reserve(6, t), PackAcc(6, t),
        Push(6, t), ReleaseAcc(), Pop(4, t),
    )
    assert _prog(got, 0, 0, Engine.COMPUTE) == (
        *head, Loop("i", 1, (Loop("j", 1, (AcquireAcc(t, "bf16"), Compute("matmul", t, ins), Reserve(5, t),
                                           PackAcc(5, t), Push(5, t), ReleaseAcc())),)), *tail,
        *head, Loop("i", 1, (Loop("j", 1, nest_body),)), *tail,
    )
    assert frags[2]["groups"] == []
    assert certify(got).exit_code == 0


def test_register_resident_accumulator_on_gpu() -> None:
    # GPU tiles are 16x16: 32x32 @ 32x64 over K = 64 is a 2x4-tile block, 4 K tiles in 2 blocks of 2.
    got, frags = compile_section(_mm_graph(32, 64, 64), 0, GPU, _pipe(1, 1))
    assert frags[1]["plan"]["form"] == "registers"
    assert _prog(got, 0, 0, Engine.COMPUTE) == (
        AcquireAcc(8, "bf16"),
        Loop("k", 2, (Wait(0, 4), Wait(1, 8), Compute("matmul", 8, (Operand(0, 4), Operand(1, 8))), Pop(0, 4),
                      Pop(1, 8))),
        Reserve(2, 8), PackAcc(2, 8), Push(2, 8), ReleaseAcc(),
    )
    assert certify(got).exit_code == 0


def test_shape_that_cannot_fit_is_refused_by_name() -> None:
    # M = 1021 tiles (prime, > 8 rows): one row of sites holds every output row; in0 alone is 4 MB, and a site's
    # one tile column cannot be split into items.
    g = _mm_graph(32 * 1021, 32, 64)
    with pytest.raises(PassRefused) as e:
        compile_section(g, 0, WORMHOLE)
    assert e.value.pass_name == "tile"
    assert e.value.reason == (
        "op 'mm' (matmul): per-site block 1021x1 tiles on a 1x1 grid (K 2 tiles) needs 6277120 B of local memory "
        "at the smallest K block; target wormhole_b0 has 1395424 B usable")
    # With 64 tile columns on the one site, not even 64 one-column items fit.
    with pytest.raises(PassRefused) as e:
        compile_section(_mm_graph(32 * 1021, 32 * 64, 64), 0, WORMHOLE, _pipe(1, 1))
    assert e.value.reason == (
        "op 'mm' (matmul): per-site block 1021x64 tiles on a 1x1 grid (K 2 tiles) needs 138268672 B of local memory "
        "at the smallest K block (nor as up to 64 items along N); target wormhole_b0 has 1395424 B usable")


def test_gpu_refuses_a_block_that_cannot_stay_in_registers() -> None:
    # 16 x 16-tile output on one site with K in more than one block: no spill, no fitting single block.
    g = _mm_graph(16 * 9, 16 * 9, 16 * 600)
    with pytest.raises(PassRefused) as e:
        compile_section(g, 0, GPU, _pipe(1, 1))
    assert e.value.pass_name == "tile"
    assert e.value.reason.startswith("op 'mm' (matmul): per-site block 9x9 tiles on a 1x1 grid (K 600 tiles) needs ")


def test_gpu_block_too_big_for_the_registers_runs_as_items() -> None:
    # 128 x 9600 @ 9600 x 64 on one SM with 16x16 tiles: an 8x4-tile block (32 tiles) cannot stay in 8 accumulator
    # tiles across the K loop, the GPU cannot spill, and K (600 tiles) as one block does not fit shared memory; four
    # items of 8x1 tiles can, each resident in registers over 300 K blocks of 2 tiles.
    with pytest.raises(PassRefused) as e:
        compile_section(_mm_graph(128, 64, 16 * 600), 0, GPU, _pipe(1, 1))
    assert (e.value.pass_name, e.value.reason) == ("persist", "op 'mm' (matmul): the plan gives each site 4 work items "
                                                   "but the pipeline has no persist pass: the programs would compute "
                                                   "the first item only")
    got, frags = compile_section(_mm_graph(128, 64, 16 * 600), 0, GPU, Pipeline(capped_passes(1, 1)))
    plan = frags[1]["plan"]
    assert (plan["form"], plan["items"], plan["per_site_m"], plan["per_site_n"], plan["num_blocks"]) == (
        "registers", 4, 8, 1, 300)
    compute = _prog(got, 0, 0, Engine.COMPUTE)
    assert compute == (Loop("item", 4, (
        AcquireAcc(8, "bf16"),
        Loop("k", 300, (Wait(0, 16), Wait(1, 2), Compute("matmul", 8, (Operand(0, 16), Operand(1, 2))), Pop(0, 16),
                        Pop(1, 2))),
        Reserve(2, 8), PackAcc(2, 8), Push(2, 8), ReleaseAcc(),
    )),)
    assert certify(got).exit_code == 0
