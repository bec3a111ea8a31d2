"""Softmax (an online fold with two carries) and decode attention (a fold over KV blocks whose count is a runtime
trip): golden op sequences, proofs on Wormhole and Blackhole, the interpreter at trip values 0, 1 and max, mutants
refuted with replayed counterexamples, and the refusals by name."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.errors import ParseError, PassRefused
from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    Compute,
    Engine,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Target,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.program import Program, Trip
from verispatial.ir.section import MatmulPlan, Section
from verispatial.passes import Pipeline, capped_passes, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes, stage_ranks
from verispatial.passes.lower import Lower
from verispatial.petri.interp import simulate


def _softmax(m: int, h: int) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("x", [m, h], role="input")
    b.tensor("y", [m, h], role="output")
    b.softmax("sm", "x", "y")
    return b.build()


def _attention(heads: int, kv_heads: int, head_dim: int, max_seq: int) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("q", [1, heads * head_dim], role="input")
    b.tensor("k_cache", [max_seq, kv_heads * head_dim], role="input")
    b.tensor("v_cache", [max_seq, kv_heads * head_dim], role="input")
    b.tensor("o", [1, heads * head_dim], role="output")
    b.attention("attn", "q", "k_cache", "v_cache", "o", heads=heads, kv_heads=kv_heads)
    return b.build()


def _st(kind: str, out: int, t: int, waits: tuple[tuple[int, int], ...], pops: tuple[tuple[int, int], ...] = ()
        ) -> tuple[Op, ...]:
    """One fold stage: wait (buffer, pages) operands, compute ``t`` tiles from them (its ``ins``) into ``out``, pop
    (buffer, pages). The sections here carry fp32 buffers, so every acquire is an fp32 accumulator."""
    return (*(Wait(b, n) for b, n in waits), AcquireAcc(t, "fp32"), Compute(kind, t, tuple(Operand(b, n) for b, n in waits)),
            Reserve(out, t), PackAcc(out, t), Push(out, t), ReleaseAcc(), *(Pop(b, n) for b, n in pops))


def test_softmax_golden_compute_and_proofs() -> None:
    # Two tile rows of 8 tiles on two sites; fp32 carries: blocks of 4 tiles, 2 K blocks.
    p, frags = compile_section(_softmax(64, 256), 0, WORMHOLE, Pipeline(capped_passes(max_sites=2)))
    assert frags[0]["carries"] == [{"buffer": "c_2", "update": "max_update"}, {"buffer": "c_3", "update": "sum_update"}]
    assert frags[1]["plan"] == {"kind": "FoldPlan", "sites": 2, "rows": 1, "block_w": 4, "num_blocks": 2}
    assert [(b.name, b.capacity, b.dtype) for b in p.buffers[:7]] == [
        ("c_0", 8, "bf16"), ("c_1", 8, "bf16"), ("c_2", 2, "fp32"), ("c_3", 2, "fp32"), ("c_4", 2, "fp32"),
        ("c_5", 2, "fp32"), ("c_16", 8, "bf16")]
    by = {(ep.site.x, ep.engine): ep.ops for ep in p.programs}
    x, x2, m, ll, mn, inv, out = 0, 1, 2, 3, 4, 5, 6
    assert by[(0, Engine.COMPUTE)] == (Loop("i", 1, (
        *_st("fill_neg_inf", m, 1, ()),
        *_st("zero", ll, 1, ()),
        Loop("k", 2, (
            # m' = max(m, rowmax(x_k)): a reader of the max the block started with
            *_st("row_max", mn, 1, ((x, 4), (m, 1))),
            # l = l * exp(m - m') + rowsum(exp(x_k - m')): the sum's update (pops its old page), a reader of m
            *_st("rescale_add_rowsum_exp", ll, 1, ((x, 4), (m, 1), (mn, 1), (ll, 1)), ((x, 4), (ll, 1))),
            # m = m': the max's update after both of its readers; retires the old max and m'
            *_st("copy", m, 1, ((mn, 1), (m, 1)), ((m, 1), (mn, 1))),
        )),
        # the last sum page's reader is the epilogue: it retires it
        *_st("recip", inv, 1, ((ll, 1),), ((ll, 1),)),
        Loop("k", 2, _st("exp_sub_mul", out, 4, ((x2, 4), (m, 1), (inv, 1)), ((x2, 4),))),
        # the final max and 1/l are read by every block of the apply pass: retired after it
        Wait(m, 1), Pop(m, 1), Wait(inv, 1), Pop(inv, 1),
    )),)
    assert simulate(p).status == "terminated"
    assert certify(p).exit_code == 0


def test_softmax_proves_on_blackhole() -> None:
    p, frags = compile_section(_softmax(128, 896), 0, BLACKHOLE, Pipeline(capped_passes(max_sites=4)))
    assert frags[1]["plan"] == {"kind": "FoldPlan", "sites": 4, "rows": 1, "block_w": 4, "num_blocks": 7}
    report = certify(p)
    assert [(r.name, r.verdict.value) for r in report.results if r.verdict != Verdict.PROVED] == []


def test_softmax_readers_of_the_max_rank_before_its_update() -> None:
    g = _softmax(32, 256)
    sec, _ = Lower().run(Section("g.sm", g, g.ops[0]), WORMHOLE)
    tpl = sec.template
    assert tpl is not None
    names = [s.name for s in tpl.stages]
    assert sorted(names, key=lambda n: stage_ranks(tpl)[names.index(n)]) == [
        "read_x", "read_x_again", "init_max", "init_sum", "block_max", "sum_update", "max_update", "recip",
        "normalize", "write_out"]


def _small_attention() -> Program:
    """Two query heads sharing one kv head, head dim 64 (2 tiles), 64 cache positions: one unit on one site, a KV
    loop of at most 2 blocks."""
    p, frags = compile_section(_attention(2, 1, 64, 64), 0, WORMHOLE, Pipeline(capped_passes(max_sites=1)))
    assert frags[1]["plan"] == {"kind": "AttentionPlan", "sites": 1, "units": 1, "group": 2, "q_heads_per_kv": 2,
                                "head_tiles": 2, "kv_row_tiles": 2, "max_blocks": 2, "trip": "kv_blocks"}
    return p


def test_attention_golden_programs() -> None:
    p = _small_attention()
    assert p.trips == (Trip("kv_blocks", 2),)
    assert [(b.name, b.capacity, b.dtype) for b in p.buffers] == [
        ("c_0", 4, "bf16"), ("c_1", 4, "bf16"), ("c_2", 4, "bf16"), ("c_3", 4, "fp32"), ("c_4", 4, "fp32"),
        ("c_5", 8, "fp32"), ("c_6", 4, "fp32"), ("c_7", 4, "fp32"), ("c_8", 4, "fp32"), ("c_9", 4, "fp32"),
        ("c_16", 4, "bf16")]
    by = {ep.engine: ep.ops for ep in p.programs}
    q, k, v, m, ll, o, s, mn, corr, pr, out = range(11)
    kv = Addr(0, (Term("j", 2),))
    # The loads of K_j and V_j run inside the trip loop; q is loaded once before it.
    assert by[Engine.READER] == (
        Reserve(q, 4), ReadTiles("q", Addr(0), 4, q), ReadBarrier(), Push(q, 4),
        Loop("j", "kv_blocks", (Reserve(k, 2), Reserve(v, 2), ReadTiles("k_cache", kv, 2, k),
                                ReadTiles("v_cache", kv, 2, v), ReadBarrier(), Push(k, 2), Push(v, 2))),
    )
    assert by[Engine.COMPUTE] == (
        *_st("fill_neg_inf", m, 2, ()), *_st("zero", ll, 2, ()), *_st("zero", o, 4, ()),
        Loop("j", "kv_blocks", (
            *_st("matmul_bt_scale_mask", s, 2, ((q, 4), (k, 2)), ((k, 2),)),
            *_st("row_max", mn, 2, ((s, 2), (m, 2))),
            *_st("exp_sub", corr, 2, ((m, 2), (mn, 2))),
            *_st("exp_sub_bcast", pr, 2, ((s, 2), (mn, 2)), ((s, 2),)),
            *_st("rescale_add_rowsum", ll, 2, ((ll, 2), (corr, 2), (pr, 2)), ((ll, 2),)),
            *_st("rescale_add_matmul", o, 4, ((o, 4), (corr, 2), (pr, 2), (v, 2)),
                 ((corr, 2), (pr, 2), (o, 4), (v, 2))),
            # the max's update runs after its two readers (block_max, correction) and retires the old page
            *_st("copy", m, 2, ((mn, 2), (m, 2)), ((m, 2), (mn, 2))),
        )),
        # after any number of blocks (none included): q and the last max are retired, o / l retires o and l
        Wait(q, 4), Pop(q, 4), Wait(m, 2), Pop(m, 2),
        *_st("div_bcast", out, 4, ((o, 4), (ll, 2)), ((ll, 2), (o, 4))),
    )
    assert by[Engine.WRITER] == (Wait(out, 4), WriteTiles(out, "o", Addr(0), 4), WriteBarrier(), Pop(out, 4))


def test_attention_terminates_for_every_trip_extreme() -> None:
    p = _small_attention()
    assert [(t, simulate(p, trips={"kv_blocks": t}).status) for t in (0, 1, 2)] == [
        (0, "terminated"), (1, "terminated"), (2, "terminated")]
    for seed in range(3):
        assert simulate(p, trips={"kv_blocks": 1}, seed=seed).status == "terminated"


@pytest.mark.parametrize(("target", "plan"), [
    (WORMHOLE, (2, 2, 2, 4)),
    (BLACKHOLE, (2, 2, 2, 4)),
])
def test_attention_proves_symbolic_in_the_trip(target: Target, plan: tuple[int, int, int, int]) -> None:
    # 4 query heads over 2 kv heads, 128 positions (at most 4 KV blocks): two units on two sites.
    p, frags = compile_section(_attention(4, 2, 64, 128), 0, target, Pipeline(capped_passes(max_sites=2)))
    got = frags[1]["plan"]
    assert (got["sites"], got["units"], got["group"], got["max_blocks"]) == plan
    (synth,) = [f for f in frags if f["pass"] == "synthesize-handshakes"]
    assert synth["trips"] == [{"name": "kv_blocks", "max": 4}]
    report = certify(p)
    assert report.exit_code == 0
    assert [(r.name, r.verdict.value) for r in report.results if r.verdict != Verdict.PROVED] == []
    dl = [r for r in report.results if r.name.startswith("deadlock")]
    assert dl
    # by the schedule witness or by the search, trips symbolic either way (never enumerated assignments)
    assert all(r.reason.endswith(("symbolic over loop indices and trip values",
                                  "symbolically over loop indices and trip values")) for r in dl)
    for t in (0, 1, 4):
        assert simulate(p, trips={"kv_blocks": t}).status == "terminated"


def test_attention_grouped_query_units_and_addresses() -> None:
    # Llama-3.2-1B's heads on 4 sites: 16 units of 2 query heads (the fp32 running output of 2 heads is the
    # accumulator's 4 tiles); kv head 3's second unit reads q tiles (3*4 + 2)*2 = 28..31 and cache tiles 6, 7 of row j.
    p, frags = compile_section(_attention(32, 8, 64, 2048), 0, WORMHOLE, Pipeline(capped_passes(max_sites=4)))
    assert frags[1]["plan"] == {"kind": "AttentionPlan", "sites": 4, "units": 16, "group": 2, "q_heads_per_kv": 4,
                                "head_tiles": 2, "kv_row_tiles": 16, "max_blocks": 64, "trip": "kv_blocks"}
    reader = next(ep.ops for ep in p.programs if ep.site.x == 1 and ep.engine == Engine.READER)
    reads = [op for op in reader if isinstance(op, ReadTiles)]
    loops = [op for op in reader if isinstance(op, Loop)]
    assert [r.addr.base for r in reads] == [16, 20, 24, 28]
    assert [(lp.count, next((r.tensor, r.addr) for r in lp.body if isinstance(r, ReadTiles))) for lp in loops] == [
        ("kv_blocks", ("k_cache", Addr(4, (Term("j", 16),)))), ("kv_blocks", ("k_cache", Addr(4, (Term("j", 16),)))),
        ("kv_blocks", ("k_cache", Addr(6, (Term("j", 16),)))), ("kv_blocks", ("k_cache", Addr(6, (Term("j", 16),))))]


def _segments(ops: tuple[Op, ...]) -> list[list[Op]]:
    """A compute loop body cut into its stages (each starts at its first Wait)."""
    segs: list[list[Op]] = []
    for op in ops:
        if isinstance(op, Wait) and (not segs or not isinstance(segs[-1][-1], Wait)):
            segs.append([])
        segs[-1].append(op)
    return segs


def _kind(seg: list[Op]) -> str:
    return next(op.kind for op in seg if isinstance(op, Compute))


def _mutate_body(p: Program, f: Callable[[list[list[Op]]], None]) -> Program:
    progs = []
    for ep in p.programs:
        if ep.engine == Engine.COMPUTE:
            def body(lp: Loop) -> Loop:
                segs = _segments(lp.body)
                f(segs)
                return attrs.evolve(lp, body=tuple(op for s in segs for op in s))
            ep = attrs.evolve(ep, ops=tuple(body(op) if isinstance(op, Loop) else op for op in ep.ops))
        progs.append(ep)
    return attrs.evolve(p, programs=tuple(progs))


def test_mutant_max_update_before_its_reader_is_refuted_and_replayed() -> None:
    def early(segs: list[list[Op]]) -> None:
        kinds = [_kind(s) for s in segs]
        upd = segs.pop(kinds.index("copy"))
        segs.insert(kinds.index("exp_sub"), upd)

    p = _mutate_body(_small_attention(), early)
    # The update retires m' before the correction reads it: no block can finish; zero blocks still terminate.
    assert simulate(p, trips={"kv_blocks": 0}).status == "terminated"
    assert simulate(p, trips={"kv_blocks": 1}).status == "deadlock"
    report = certify(p)
    assert report.exit_code == 1
    bad = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in bad] == ["deadlock:(0,0).compute+2"]
    cex = bad[0].counterexample
    assert cex is not None
    assert cex["replayed_by"] == "drive to the candidate positions"
    assert cex["trips"]["kv_blocks"] >= 1
    stuck = {st["position"]["engine"]: st["position"]["path"] for st in cex["stuck"]}
    # compute waits on m' (b7) inside the KV loop at the correction's first Wait; the writer on the output.
    assert stuck == {"(0,0).compute": [18, 28], "(0,0).writer": [0]}


def test_mutant_carry_never_popped_is_refuted_and_replayed() -> None:
    def keep(segs: list[list[Op]]) -> None:
        s = segs[[_kind(x) for x in segs].index("rescale_add_rowsum")]
        s[:] = [op for op in s if not (isinstance(op, Pop) and op.buf == 4)]

    report = certify(_mutate_body(_small_attention(), keep))
    bad = {r.name: r.counterexample for r in report.results if r.verdict == Verdict.REFUTED}
    # With one KV block the carry is left holding its pages, which the launch's end resets (no balance finding);
    # with two the producer's reserve waits on them for ever.
    assert sorted(bad) == ["deadlock:(0,0).compute+2"]
    dl = bad["deadlock:(0,0).compute+2"]
    assert dl is not None
    assert dl["trips"] == {"kv_blocks": 2}
    assert dl["replayed_by"] == "drive to the candidate positions"


def test_matmul_whose_k_runs_to_a_trip_is_refused_by_name() -> None:
    b = GraphBuilder("g")
    b.tensor("a", [32, 128], role="input")
    b.tensor("w", [128, 64], role="param")
    b.tensor("y", [32, 64], role="output")
    b.matmul("mm", "a", "w", "y")
    g = b.build()
    sec = Section("g.mm", g, g.ops[0])
    passes = capped_passes(1, 1, 1)
    for ps in passes:
        if ps.name == "synthesize-handshakes":
            break
        sec, _ = ps.run(sec, WORMHOLE)
    assert isinstance(sec.plan, MatmulPlan)
    sec = attrs.evolve(sec, plan=attrs.evolve(sec.plan, k_trip="kv_blocks"))
    with pytest.raises(PassRefused) as e:
        SynthesizeHandshakes().run(sec, WORMHOLE)
    assert (e.value.pass_name, e.value.reason) == (
        "synthesize-handshakes", "op 'mm' (matmul): a matmul whose K blocks run to a trip — its accumulate-and-spill "
                                 "forms peel blocks a count read from the data may not have")


def test_attention_head_dim_off_the_tile_is_refused_by_name() -> None:
    g = _attention(4, 2, 48, 128)
    with pytest.raises(PassRefused) as e:
        Lower().run(Section("g.attn", g, g.ops[0]), WORMHOLE)
    assert e.value.reason == ("op 'attn' (attention): head_dim 48 is not a multiple of target wormhole_b0's tile "
                              "width 32 (a head's tiles would straddle its neighbour's)")


@pytest.mark.parametrize(("change", "rule"), [
    ({"heads": 3}, "an attention names heads and kv_heads, heads a multiple of kv_heads, got heads 3, kv_heads 2"),
    ({"q_rows": 2}, "an attention is one decode step: q has one row, got 2"),
    ({"v_cols": 64}, "k_cache and v_cache have shape [max_seq, 128] (kv_heads x head_dim 64), got [128, 128] and "
                     "[128, 64]: v_cache's columns 64 != k_cache's columns 128"),
    ({"o_cols": 128}, "the output has q's shape [1, 256], got [1, 128]: the output's columns 128 != q's columns 256"),
])
def test_attention_graph_is_checked(change: dict[str, int], rule: str) -> None:
    b = GraphBuilder("g")
    b.tensor("q", [change.get("q_rows", 1), 256], role="input")
    b.tensor("k_cache", [128, 128], role="input")
    b.tensor("v_cache", [128, change.get("v_cols", 128)], role="input")
    b.tensor("o", [change.get("q_rows", 1), change.get("o_cols", 256)], role="output")
    b.attention("attn", "q", "k_cache", "v_cache", "o", heads=change.get("heads", 4), kv_heads=2)
    with pytest.raises(ParseError) as e:
        b.build()
    assert (e.value.field, e.value.rule) == ("op attn", rule)


def test_heads_belong_to_attention_and_round_trip() -> None:
    from verispatial.ir.graph import graph_from_dict, graph_to_dict

    g = _attention(4, 2, 64, 128)
    d = graph_to_dict(g)
    assert d["ops"] == [{"name": "attn", "kind": "attention", "inputs": ["q", "k_cache", "v_cache"], "output": "o",
                         "heads": 4, "kv_heads": 2}]
    assert graph_from_dict(d) == g
    sm = graph_to_dict(_softmax(32, 64))
    sm["ops"][0]["heads"] = 2
    with pytest.raises(ParseError) as e:
        graph_from_dict(sm)
    assert (e.value.field, e.value.rule) == ("op sm", "heads and kv_heads belong to an attention op only")
