"""``compose`` (verispatial/passes/compose.py): sections joined into one program, each refusal by name, the
rendezvous shape and its counts, placements, open boundaries, residency, and the host re-initialization of the
rendezvous words (issue 8)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import attrs
import pytest
from builders import chain, copy_section

from verispatial.certify.certificate import derive_place_groups
from verispatial.certify.report import Verdict
from verispatial.certify.semaphores import classify
from verispatial.certify.structure import engine_views
from verispatial.driver.run import certify
from verispatial.errors import ComposeRefused
from verispatial.ir import (
    GPU,
    WORMHOLE,
    AtomicBarrier,
    Engine,
    EngineProgram,
    InlineWrite,
    Op,
    Program,
    Resident,
    Role,
    Semaphore,
    SemInc,
    SemSet,
    SemWait,
    Site,
    Trip,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.graph import load_graph
from verispatial.ir.ids import op_ids
from verispatial.ir.program import walk
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate
from verispatial.passes import PROGRAM_PASSES, Pipeline, capped_passes, compile_section, compose
from verispatial.passes.compose import Compose, Rendezvous, _Views, content_key, rendezvous_ops
from verispatial.petri.interp import next_launch_words, simulate

ROOT = Path(__file__).resolve().parent.parent
S0, S1, S2 = Site(0, 0), Site(1, 0), Site(2, 0)
TILES = 2


@functools.cache
def mlp_sections() -> tuple[Program, ...]:
    g = load_graph(ROOT / "examples" / "models" / "mlp_block.json")
    pipe = Pipeline(capped_passes(max_cols=1, max_rows=1, max_sites=1))
    return tuple(compile_section(g, i, WORMHOLE, pipe)[0] for i in range(len(g.ops)))


def proved(p: Program) -> None:
    r = certify(p)
    bad = [(x.name, x.verdict.value, x.reason) for x in r.results if x.verdict != Verdict.PROVED]
    assert bad == []
    assert r.exit_code == 0


def refused(rule: str, sections: list[Program], **kw: object) -> ComposeRefused:
    with pytest.raises(ComposeRefused) as info:
        compose(sections, target=kw.pop("target", WORMHOLE), **kw)  # type: ignore[arg-type]
    e = info.value
    assert e.rule == rule
    assert "\n" not in str(e)
    assert str(e).startswith(f"compose: {rule}: ")
    return e


# ------------------------------------------------------------------------------------------------ the joined program


def test_mlp_block_three_sections_compose_and_certify_whole_program() -> None:
    p, frag = compose(mlp_sections(), target=WORMHOLE)
    assert p.name == "out_3_sections"
    assert [(t.name, t.role) for t in p.tensors] == [
        ("x", Role.INPUT), ("w_up", Role.PARAM), ("b_up", Role.PARAM), ("h", Role.ACTIVATION),
        ("w_down", Role.PARAM), ("y", Role.ACTIVATION), ("out", Role.OUTPUT)]
    assert [s.barrier_after for s in p.sections] == [True, True, False]
    assert [s.name for s in p.sections] == ["mlp_block.up", "mlp_block.down", "mlp_block.residual"]
    assert [b.section for b in p.buffers] == [0] * 7 + [1] * 3 + [2] * 3
    assert [(s.name, s.section, s.host_init) for s in p.semaphores] == [
        ("rendezvous_gather", None, True), ("rendezvous_release", None, True)]
    assert all(len(ep.section_starts) == 3 for ep in p.programs)
    assert frag["participants"] == ["(0,0).reader", "(0,0).compute", "(0,0).writer"]
    assert loads(dumps(p)) == p
    proved(p)


def test_one_section_keeps_its_name_and_has_no_rendezvous() -> None:
    sec = mlp_sections()[0]
    p, frag = compose([sec], target=WORMHOLE)
    assert p.name == sec.name
    assert p.semaphores == ()
    assert frag["rendezvous"] is None
    assert [ep.ops for ep in p.programs] == [ep.ops for ep in sorted(sec.programs, key=lambda e: (
        e.site.y, e.site.x, ["reader", "compute", "writer"].index(e.engine.value)))]


def test_every_op_names_entities_of_its_own_section() -> None:
    """The ids of every op were shifted with its section: each buffer or semaphore it names belongs to the section
    the op sits in, or is a rendezvous word (section None)."""
    p, _ = compose(mlp_sections(), target=WORMHOLE)
    checked = 0
    for ep in p.programs:
        for i, top in enumerate(ep.ops):
            k = ep.section_of(i)
            for op in walk((top,)):
                for kind, x in op_ids(op):
                    if kind == "buffer":
                        assert p.buffers[x].section == k
                    elif kind == "semaphore":
                        assert p.semaphores[x].section in (k, None)
                    checked += 1
    assert checked > 50


def test_sections_of_one_site_in_separate_phases_reuse_bytes_and_cb_indices() -> None:
    p, _ = compose(chain(S0, S0, S0), target=WORMHOLE)
    assert [b.cb for b in p.buffers] == [0, 0, 0]
    assert {m.offset for m in p.memory} == {WORMHOLE.reserved_base}
    proved(p)


# ------------------------------------------------------------------------------------------------ the rendezvous


def _is_rendezvous(op: Op, rv_sems: set[int]) -> bool:
    return isinstance(op, (SemInc, SemWait)) and op.sem in rv_sems


def test_rendezvous_counts_2p_plus_s_plus_1_ops_and_p_plus_s_places_per_boundary() -> None:
    sections = chain(S0, S1, S0, S1)  # 3 closing boundaries, P = 4 participants on S = 2 sites
    p, frag = compose(sections, target=WORMHOLE)
    rv = frag["rendezvous"]
    assert frag["participants"] == ["(0,0).reader", "(0,0).writer", "(1,0).reader", "(1,0).writer"]
    P, S = 4, 2
    ops = [op for ep in p.programs for op in walk(ep.ops) if _is_rendezvous(op, {rv["gather"], rv["release"]})]
    assert len(ops) == 3 * (2 * P + S + 1)
    assert [b["ops"] for b in rv["boundaries"]] == [2 * P + S + 1] * 3
    assert [b["places"] for b in rv["boundaries"]] == [P + S] * 3
    assert len(rv["places"]) == 3 * (P + S)
    arrivals = [pl for pl in rv["places"] if pl["kind"] == "rendezvous-arrival"]
    releases = [pl for pl in rv["places"] if pl["kind"] == "rendezvous-release"]
    assert len(arrivals) == 3 * P
    assert len(releases) == 3 * S
    # Every place names the op it says, in the composed program.
    by_key = {ep.key: ep for ep in p.programs}
    for pl in rv["places"]:
        ends = [pl["from"], *(pl["to"] if isinstance(pl["to"], list) else [pl["to"]])]
        for end in ends:
            op = by_key[end["engine"]].ops[end["path"][0]]
            assert type(op).__name__ == end["op"]
    assert [pl["threshold"] for pl in arrivals[::P]] == [P, 2 * P, 3 * P]
    proved(p)


def test_rendezvous_ops_are_the_fixed_shape() -> None:
    rv = Rendezvous(7, 8, ((S0, Engine.READER), (S0, Engine.WRITER), (S1, Engine.READER)), (S0, S1))
    assert rendezvous_ops(rv, (S0, Engine.READER), 2) == (
        SemInc(7, S0, 1), AtomicBarrier(), SemWait(7, WaitCond.GE, 6), SemInc(8, S0, 1), SemInc(8, S1, 1),
        AtomicBarrier(), SemWait(8, WaitCond.GE, 2))
    assert rendezvous_ops(rv, (S1, Engine.READER), 1) == (
        SemInc(7, S0, 1), AtomicBarrier(), SemWait(8, WaitCond.GE, 1))


def test_the_rendezvous_is_the_last_ops_of_the_section_it_closes_on_every_participant() -> None:
    p, frag = compose(chain(S0, S1, S0), target=WORMHOLE)
    rv = frag["rendezvous"]
    for ep in p.programs:
        for b in (0, 1):
            end = ep.section_starts[b + 1]
            tail = ep.ops[ep.section_starts[b]:end]
            n = 7 if ep.key == rv["root"] else 3
            assert all(_is_rendezvous(o, {rv["gather"], rv["release"]}) or isinstance(o, AtomicBarrier)
                       for o in tail[-n:])
            assert isinstance(tail[-1], SemWait)
            assert tail[-1].sem == rv["release"]
            assert tail[-1].value == b + 1
    # A participant with no work in a section still takes part: (1,0) runs nothing in sections 0 and 2.
    b1 = next(ep for ep in p.programs if ep.key == "(1,0).reader")
    assert b1.section_starts == (0, 3, 7)
    proved(p)


def test_sections_certificates_are_shifted_into_the_fragment() -> None:
    secs = chain(S0, S1, S0)
    certs = [{"places": [], "obligations": [{"family": "balance", "name": "balance-cb:b0", "reason": "r"},
                                            {"family": "deadlock", "name": "deadlock:(0,0).reader+1", "reason": "r"},
                                            {"family": "memory", "name": "memory-disjoint:(0,0).local.phase0",
                                             "reason": "r"}]} for _ in secs]
    certs[2]["obligations"].append({"family": "bounds", "name": "bounds:A1", "reason": "r"})
    _, frag = compose(secs, target=WORMHOLE, certificates=certs)
    assert [o["name"] for o in frag["sections"][2]["obligations"]] == [
        "balance-cb:b2", "deadlock:(0,0).reader+1", "memory-disjoint:(0,0).local.phase2", "bounds:A1"]
    # A tensor whose name reads like an id keeps it.
    b1 = [copy_section("s0", S0, "X", "b1"), copy_section("s1", S1, "b1", "Y")]
    _, frag = compose(b1, target=WORMHOLE, certificates=[
        {"obligations": [{"family": "bounds", "name": "bounds:b1"}, {"family": "balance", "name": "balance-cb:b0"}]}
        for _ in b1])
    assert [o["name"] for o in frag["sections"][1]["obligations"]] == ["bounds:b1", "balance-cb:b1"]
    # Without a certificate the places are derived from the section, in its own ids, by content address: equal
    # sections share one entry.
    _, frag = compose(secs, target=WORMHOLE)
    keys = [s["places"] for s in frag["sections"]]
    assert set(keys) == set(frag["places"])
    assert keys[2] == content_key(frag["places"][keys[2]])
    pl = frag["places"][keys[2]][0]
    assert pl["counter"] == "cb0"
    assert pl["from"] == [{"engine": "(0,0).reader", "path": [0, 3], "op": "Push"}]
    own = secs[2]
    views = engine_views(own)
    assert frag["places"][keys[2]] == derive_place_groups(_Views(own, views, classify(own, views)))
    assert frag["sections"][2]["obligations"] is None
    _, frag = compose(chain(S0, S0, S0), target=WORMHOLE)
    assert len({s["places"] for s in frag["sections"]}) == len(frag["places"]) == 1


# ------------------------------------------------------------------------------------------------ placement, phases


def test_round_robin_moves_section_k_onto_site_k_mod_mesh() -> None:
    p, frag = compose(chain(S0, S0, S0), placement="round_robin", target=WORMHOLE)
    assert [b.site for b in p.buffers] == [S0, S1, S2]
    assert frag["participants"] == ["(0,0).reader", "(0,0).writer", "(1,0).reader", "(1,0).writer",
                                    "(2,0).reader", "(2,0).writer"]
    assert p.semaphores[1].sites == (S0, S1, S2)
    proved(p)


def test_round_robin_refuses_a_section_on_several_sites() -> None:
    two = mlp_sections()[0]
    wide = attrs.evolve(two, programs=(*two.programs, EngineProgram(S1, Engine.READER, ())))
    e = refused("round-robin-one-site", [wide, two], placement="round_robin")
    assert "section 0" in str(e)


def test_open_boundary_runs_two_sections_in_one_phase_with_separate_cb_indices_and_bytes() -> None:
    secs = [copy_section("x_to_a", S0, "X", "A"), copy_section("y_to_b", S0, "Y", "B"),
            copy_section("a_to_c", S0, "A", "C")]
    p, frag = compose(secs, barrier_after=[False, True], target=WORMHOLE)
    assert [s.barrier_after for s in p.sections] == [False, True, False]
    assert p.phase_of_section() == [0, 0, 1]
    assert [b.cb for b in p.buffers] == [0, 1, 0]
    assert [m.offset for m in p.memory] == [WORMHOLE.reserved_base, WORMHOLE.reserved_base + 4096,
                                           WORMHOLE.reserved_base]
    assert len(frag["rendezvous"]["boundaries"]) == 1
    proved(p)


def test_all_boundaries_open_means_no_rendezvous() -> None:
    secs = [copy_section("x_to_a", S0, "X", "A"), copy_section("y_to_b", S1, "Y", "B")]
    p, frag = compose(secs, barrier_after=[False], target=WORMHOLE)
    assert frag["rendezvous"] is None
    assert p.semaphores == ()
    proved(p)


# ------------------------------------------------------------------------------------------------ tensors


def test_state_keeps_its_source_init() -> None:
    # Section 0 reads the state S (declared with its initial value); section 1 writes it (its placeholder: none).
    s0 = copy_section("read_s", S0, "S", "A", src_role=Role.INPUT, init="zeros", dtype="fp32")
    s1 = copy_section("write_s", S0, "A", "S", dst_role=Role.STATE, dtype="fp32")
    p, _ = compose([s0, s1], state=["S"], target=WORMHOLE)
    s = p.tensor("S")
    assert (s.role, s.dtype, s.init) == (Role.STATE, "fp32", "zeros")
    assert p.tensor("A").role == Role.ACTIVATION


def test_a_reader_of_another_width_than_the_producer_is_refused() -> None:
    """The producer's declaration decides the tensor's dtype; a reader that declared it narrower reads the wider
    tiles into pages of its own width, which overruns them on the board (a NoC transfer moves the tensor's tiles as
    they are): the joined program is refused, naming the transfer."""
    s0 = copy_section("read_s", S0, "S", "A", src_role=Role.INPUT, init="zeros")
    s1 = copy_section("write_s", S0, "A", "S", dst_role=Role.STATE, dtype="fp32")
    e = refused("invalid-program", [s0, s1], state=["S"])
    assert "moves fp32 tiles of 'S' (4096 bytes) through b0 (s0.c_0), whose bf16 pages hold 2048-byte tiles" in str(e)


def test_readers_alone_at_two_widths_are_refused() -> None:
    """Readers alone may disagree in float width, and the wider wins as the tensor's dtype, so the narrower reader's
    pages would be overrun: refused by name."""
    s0 = copy_section("r16", S0, "W", "A", dtype="bf16", src_role=Role.PARAM)
    s1 = copy_section("r32", S0, "W", "B", dtype="fp32", src_role=Role.PARAM)
    e = refused("invalid-program", [s0, s1])
    assert "moves fp32 tiles of 'W'" in str(e)


def test_tensor_conflict_names_both_shapes_and_dtypes() -> None:
    e = refused("tensor-conflict", [copy_section("a", S0, "X", "A"), copy_section("b", S0, "A", "Y", rows=64)])
    assert str(e) == ("compose: tensor-conflict: tensor 'A': section 0 declares [32, 64] bf16, section 1 [64, 64] "
                      "bf16 (the shapes differ)")
    assert e.section == 1


def test_tensor_conflict_two_producers_at_different_dtypes() -> None:
    e = refused("tensor-conflict", [copy_section("a", S0, "X", "A"),
                                    copy_section("b", S0, "Y", "A", dst_dtype="fp32")], barrier_after=[True])
    assert "two producers" in str(e)


def test_tensor_conflict_readers_of_one_width_or_an_integer() -> None:
    e = refused("tensor-conflict", [copy_section("a", S0, "W", "A", src_dtype="bf16"),
                                    copy_section("b", S0, "W", "B", src_dtype="fp16")])
    assert str(e) == ("compose: tensor-conflict: tensor 'W': section 0 declares [32, 64] bf16, section 1 [32, 64] fp16 "
                      "(readers alone may differ only in a float's width)")
    refused("tensor-conflict", [copy_section("a", S0, "W", "A", src_dtype="int32"),
                                copy_section("b", S0, "W", "B", src_dtype="fp32")])


def test_trip_conflict_names_both_maxima() -> None:
    a = attrs.evolve(copy_section("a", S0, "X", "A"), trips=(Trip("kv_blocks", 64),))
    b = attrs.evolve(copy_section("b", S0, "A", "Y"), trips=(Trip("kv_blocks", 32),))
    e = refused("trip-conflict", [a, b])
    assert str(e) == "compose: trip-conflict: trip 'kv_blocks': section 0 declares max 64, section 1 max 32"
    c = attrs.evolve(b, trips=(Trip("kv_blocks", 64),))
    p, _ = compose([a, c], target=WORMHOLE)
    assert p.trips == (Trip("kv_blocks", 64),)


# ------------------------------------------------------------------------------------------------ refusals


def test_no_sections() -> None:
    assert str(refused("no-sections", [])) == "compose: no-sections: nothing to compose"


def test_a_section_without_engine_programs_is_not_scheduled() -> None:
    a = copy_section("a", S0, "X", "A")
    e = refused("section-not-scheduled", [a, attrs.evolve(a, name="b", programs=())])
    assert str(e) == "compose: section-not-scheduled: section 1 (b) has no engine programs"


def test_a_section_without_a_memory_map_is_not_scheduled() -> None:
    a = copy_section("a", S0, "X", "A")
    e = refused("section-not-scheduled", [attrs.evolve(a, memory=())])
    assert str(e) == "compose: section-not-scheduled: section 0 (a) has 1 buffers and no memory map"


def test_a_phase_that_overflows_a_sites_memory() -> None:
    big = 700_000 // 2048
    a = copy_section("a", S0, "X", "A", capacity=big)
    b = copy_section("b", S0, "Y", "B", capacity=big)
    e = refused("phase-overflows-memory", [a, b], barrier_after=[False])
    usable = WORMHOLE.local_bytes - WORMHOLE.reserved_base
    assert str(e) == (f"compose: phase-overflows-memory: phase 0 (sections 0..1) needs {2 * big * 2048} bytes of "
                      f"local memory on site (0,0), which has {usable} usable (space local)")
    # Behind a rendezvous the same two sections reuse the bytes.
    compose([a, b], target=WORMHOLE)


def test_the_joined_program_invalid_lists_every_violation() -> None:
    a = copy_section("a", S0, "X", "A")
    bad = attrs.evolve(a, buffers=(attrs.evolve(a.buffers[0], capacity=0),))
    e = refused("invalid-program", [bad, a])
    assert len(e.violations) >= 2
    assert "capacity must be in [1, 65535] pages" in str(e)
    assert str(e).count(";") == len(e.violations) - 1


def test_other_refusals_name_their_rule() -> None:
    a = copy_section("a", S0, "X", "A")
    refused("placement", [a], placement="diagonal")
    refused("barrier-after", [a, a], barrier_after=[True, True, True])
    refused("target", [a], target=GPU)
    refused("unknown-state", [a], state=["nope"])
    p, _ = compose([a, copy_section("b", S0, "A", "Y")], target=WORMHOLE)
    refused("section-composed", [p])


def test_the_pass_objects_are_registered_under_their_names() -> None:
    assert list(PROGRAM_PASSES) == ["compose", "residency"]
    for key, cls in PROGRAM_PASSES.items():
        assert cls().name == key
    p, frag = Compose(barrier_after=(True,)).run(chain(S0, S1), WORMHOLE)
    assert frag["pass"] == "compose"
    assert len(p.sections) == 2


# ------------------------------------------------------------------------------------------------ residency


def test_residency_keeps_fitting_activations_in_local_memory_over_their_live_range() -> None:
    p, frag = compose(mlp_sections(), target=WORMHOLE)
    res = {r.tensor: r for r in p.resident}
    assert sorted(res) == ["h", "y"]
    assert (res["h"].first_section, res["h"].last_section) == (0, 1)
    assert (res["y"].first_section, res["y"].last_section) == (1, 2)
    assert res["h"].size == 16 * 2048
    assert frag["residency"]["device_memory"] == []
    names = {r.name for r in certify(p).results}
    assert {"memory-range:resident:h", "memory-range:resident:y"} <= names


def test_carried_state_is_resident_in_every_phase() -> None:
    s0 = copy_section("read_s", S0, "S", "A", init="zeros")
    s1 = copy_section("write_s", S0, "A", "S", dst_role=Role.STATE)
    p, _ = compose([s0, s1, copy_section("c", S0, "A", "Y")], state=["S"], target=WORMHOLE)
    r = next(r for r in p.resident if r.tensor == "S")
    assert (r.first_section, r.last_section) == (0, 2)
    assert p.resident_phases(r) == {0, 1, 2}


def test_memory_refutes_a_resident_tensor_that_overlaps_a_buffer() -> None:
    p, _ = compose(mlp_sections(), target=WORMHOLE)
    h = next(r for r in p.resident if r.tensor == "h")
    bad = attrs.evolve(p, resident=tuple(attrs.evolve(r, offset=p.memory[1].offset) if r is h else r
                                         for r in p.resident))
    assert validate(bad) == []
    r = certify(bad)
    refuted = {x.name: x for x in r.results if x.verdict == Verdict.REFUTED}
    # h is live in phases 0 and 1 (sections 0..1); the bytes it now takes are a buffer's in both.
    assert sorted(refuted) == ["memory-disjoint:(0,0).local.phase0", "memory-disjoint:(0,0).local.phase1"]
    cex = refuted["memory-disjoint:(0,0).local.phase0"].counterexample
    assert cex is not None
    assert cex["residents"] == ["h"]
    assert cex["buffers"] == [1]
    a = cex["address"]
    assert p.memory[1].offset <= a < p.memory[1].offset + p.memory[1].size  # type: ignore[operator]
    assert r.exit_code == 1


def test_validate_names_each_broken_resident_rule() -> None:
    p, _ = compose(mlp_sections(), target=WORMHOLE)
    h = p.resident[0]

    def msgs(r: Resident) -> list[str]:
        return [str(v) for v in validate(attrs.evolve(p, resident=(r,)))]
    assert msgs(attrs.evolve(h, offset=h.offset + 8)) == [f"resident h: offset {h.offset + 8} is not 16-byte aligned"]
    assert msgs(attrs.evolve(h, size=1)) == ["resident h: size 1 B != the tensor's 16 tiles x 2048 B = 32768 B"]
    assert msgs(attrs.evolve(h, offset=0)) == [f"resident h: occupies [0, {h.size}) outside usable local memory "
                                               f"[{WORMHOLE.reserved_base}, {WORMHOLE.local_bytes})"]
    assert msgs(attrs.evolve(h, site=S1)) == ["resident h: site (1,0) runs no engine program (a resident tensor "
                                              "lives on a participating site)"]
    assert msgs(attrs.evolve(h, last_section=3)) == ["resident h: sections 0..3 are not a range of the 3 sections"]
    assert msgs(attrs.evolve(h, tensor="nope")) == ["resident nope: is not a declared tensor"]


# ------------------------------------------------------------------------------------------------ host re-initialization


def test_a_second_launch_from_the_host_initialized_state_has_the_same_outcome() -> None:
    """The rendezvous words end at k_max * P and k_max; the host writes their initial value at the next launch,
    and the second run from that state ends exactly as the first (same status, no violation, same words)."""
    p, frag = compose(chain(S0, S1, S0), target=WORMHOLE)
    first = simulate(p)
    assert first.status == "terminated"
    assert first.violations == ()
    g, rel = frag["rendezvous"]["gather"], frag["rendezvous"]["release"]
    assert first.sems[(g, S0)] == 2 * 4
    assert first.sems[(rel, S1)] == 2
    again = simulate(p, start_words=next_launch_words(p, first.sems))
    assert (again.status, again.violations, again.sems) == (first.status, first.violations, first.sems)
    for seed in range(3):
        run = simulate(p, seed=seed, start_words=next_launch_words(p, first.sems))
        assert (run.status, run.violations, run.sems) == (first.status, (), first.sems)
    # Without the host's write the words would start where the last run left them, and end elsewhere.
    stale = simulate(p, start_words=dict(first.sems))
    assert stale.sems[(g, S0)] == 2 * 2 * 4


def test_balance_of_a_host_initialized_word_that_a_kernel_sets_is_exempt_too() -> None:
    """The host writes a host_init word's initial value at every launch, whatever a kernel left in it (tt-metal:
    the words live in the kernel config buffer dispatch writes per launch, firmware_common.h:149-152): a kernel's
    reset at the end changes nothing the next launch sees, and the second launch ends as the first."""
    p, frag = compose(chain(S0, S1, S0), target=WORMHOLE)
    names = {r.name: r for r in certify(p).results}
    g = frag["rendezvous"]["gather"]
    assert names[f"balance-sem:sem{g}@(0,0)"].reason == (f"sem{g}@(0,0) only counts up and is re-initialized by the "
                                                        "host at launch (to 0)")
    assert p.host_initialized_words() == {(g, S0), (g + 1, S0), (g + 1, S1)}
    root = p.programs[0]
    reset = attrs.evolve(p, programs=(attrs.evolve(root, ops=(*root.ops, SemSet(g, 5))), *p.programs[1:]))
    assert (g, S0) in reset.host_initialized_words()
    r = {x.name: x for x in certify(reset).results}[f"balance-sem:sem{g}@(0,0)"]
    assert (r.verdict, r.reason) == (Verdict.PROVED, f"sem{g}@(0,0) is re-initialized by the host at launch (to 0)")
    first = simulate(reset)
    assert first.sems[(g, S0)] == 5
    assert "balance-sem" not in first.rules()
    again = simulate(reset, start_words=next_launch_words(reset, first.sems))
    assert (again.status, again.violations, again.sems) == (first.status, first.violations, first.sems)
    # Without the flag the same reset is a word the next run starts from where this one left it: not exempt.
    plain = attrs.evolve(reset, semaphores=tuple(attrs.evolve(s, host_init=False) for s in reset.semaphores))
    assert plain.host_initialized_words() == frozenset()
    assert {x.name: x for x in certify(plain).results}[f"balance-sem:sem{g}@(0,0)"].verdict != Verdict.PROVED
    assert "balance-sem" in simulate(plain).rules()


def _counter_section(name: str) -> Program:
    """One site counting its own word up once (an atomic increment, its barrier, a wait for it) and never resetting
    it: alone, the host's write at launch is what brings the word back (``host_init``)."""
    return Program(name, WORMHOLE, semaphores=(Semaphore(0, name, (S0,), 0, host_init=True),),
                   programs=(EngineProgram(S0, Engine.READER, (SemInc(0, S0, 1), AtomicBarrier(),
                                                               SemWait(0, WaitCond.GE, 1))),))


@pytest.mark.parametrize("compositional", [True, False])
def test_a_host_initialized_word_whose_slot_a_later_phase_takes_is_not_exempt(compositional: bool) -> None:
    """Two sequential sections on one site, each a host_init counter that ends at 1: the first's word ends at 1 and
    the second phase may take its semaphore slot with no host write between, so the first's balance is refuted — by
    the slices (the default, compositional route) as by the whole program — and the interpreter agrees. (A new
    user's find: the slices kept the host's exemption, and the composition was proved.)"""
    p, _ = compose([_counter_section("left"), _counter_section("right")], target=WORMHOLE)
    assert [s.section for s in p.semaphores[:2]] == [0, 1]  # then the rendezvous words, program-wide
    assert (0, S0) in p.slot_reused_words()
    assert (0, S0) not in p.host_initialized_words()
    assert "balance-sem" in simulate(p).rules()
    report = certify(p, compositional=compositional)
    bal = [r for r in report.results if r.name.endswith("balance-sem:sem0@(0,0)")]
    assert bal
    assert all(r.verdict is Verdict.REFUTED for r in bal), [(r.name, r.verdict, r.reason) for r in bal]
    assert report.exit_code == 1


def _flag_section(name: str, init: int, words: int) -> Program:
    """One site with ``words`` semaphores starting at ``init``; its reader waits for the first to be >= ``init``
    (nothing increments it: only a word that starts there lets the wait return)."""
    sems = tuple(Semaphore(i, f"{name}{i}", (S0,), init) for i in range(words))
    return Program(name, WORMHOLE, semaphores=sems,
                   programs=(EngineProgram(S0, Engine.READER, (SemWait(0, WaitCond.GE, init),)),))


def test_a_later_phase_takes_only_the_slot_of_a_word_with_its_initial_value() -> None:
    """Semaphore slots (docs/checker.md): a later phase's word starts from the value the earlier word of its slot
    ends at, its initial value by the balance rule, so only a word of the same initial value may take it. Two phases
    on a 4-slot site: two words starting at 0, then two starting at 1 (the first waited for >= 1 and never
    incremented). Each phase fits alone, and the checker proves the program — it starts the second phase's words at
    1 — but with 4 slots the second phase would take the first's and start at 0, its wait never returning. So the
    program needs 2 + 2 slots plus the rendezvous words: validate refuses it by name. (A new user's find: a composed
    counter_release whose second section's word was given another initial value was accepted and proved.)"""
    small = attrs.evolve(WORMHOLE, name="wormhole_4_semaphores", max_semaphores=4)
    # The message counts what the user can change: per initial value the most section words of that value in any
    # one phase, the program-wide words by name (here compose's rendezvous words), and the target's slot count with
    # its source (a new user read "at most ... in one phase" as a limit and could not tell what "program-wide" was).
    why = ("needs 6 semaphore slots, more than the 4 of target wormhole_4_semaphores (max_semaphores: NUM_SEMAPHORES "
           "= 16: tt_metal/impl/buffers/semaphore.hpp): per initial value, the most section words of that value in "
           "any one phase (2 starting at 0, 2 starting at 1), plus 2 program-wide words held in every phase "
           "(compose's rendezvous words: rendezvous_gather, rendezvous_release); a later phase takes only the slot "
           "of a word with its own initial value")
    with pytest.raises(ComposeRefused, match=re.escape(why)):
        compose([attrs.evolve(_flag_section("a", 0, 2), target=small),
                 attrs.evolve(_flag_section("b", 1, 2), target=small)], target=small)
    # The same program written by hand (composed where it fits, then given the 4-slot target): validate refuses it.
    roomy = attrs.evolve(WORMHOLE, name="wormhole_6_semaphores", max_semaphores=6)
    p, _ = compose([attrs.evolve(_flag_section("a", 0, 2), target=roomy),
                    attrs.evolve(_flag_section("b", 1, 2), target=roomy)], target=roomy)
    assert validate(p) == []
    assert certify(p).exit_code == 0
    assert [str(v) for v in validate(attrs.evolve(p, target=small))] == [f"site (0,0): {why}"]
    # With one initial value throughout, the later phase may take the earlier one's slots: 2 + 2 fit.
    same, _ = compose([attrs.evolve(_flag_section("a", 1, 2), target=small),
                       attrs.evolve(_flag_section("b", 1, 2), target=small)], target=small)
    assert validate(same) == []


def test_a_slot_reused_word_the_composed_run_breaks_is_refuted_in_the_compositional_route() -> None:
    """The first section's host_init counter is set to 6 at its end and the second phase may take its slot: its
    balance, decided again without the host's exemption, is not decided by counting (a set to a value other than the
    initial one), and the slice has no run of the composition to show it. The whole program's interpreter ends the
    word at 6 in every run, so the compositional route refutes it with that run, as the whole-program route does (a
    new user's find: it stayed failed-to-prove)."""
    left = _counter_section("left")
    left = attrs.evolve(left, programs=(attrs.evolve(left.programs[0], ops=(*left.programs[0].ops, SemSet(0, 6))),))
    p, _ = compose([left, _counter_section("right")], target=WORMHOLE)
    assert (0, S0) in p.slot_reused_words()
    _ends_unbalanced_and_refuted(p, 6)


def _ends_unbalanced_and_refuted(p: Program, end: int) -> None:
    """Every run of ``p`` ends sem0@(0,0) at ``end`` (``balance-sem`` in the interpreter), and both certify routes
    refute that word's balance with a counterexample."""
    sim = simulate(p)
    assert sim.sems[(0, S0)] == end
    assert "balance-sem" in sim.rules()
    for compositional in (True, False):
        report = certify(p, compositional=compositional)
        (bal,) = [r for r in report.results if r.name.endswith("balance-sem:sem0@(0,0)")]
        assert bal.verdict is Verdict.REFUTED, (compositional, bal.reason)
        assert bal.counterexample is not None
        assert report.exit_code == 1


def test_a_mailbox_word_whose_slot_a_later_phase_takes_is_not_exempt() -> None:
    """A word only one-word remote writes write (a mailbox: ``Program.mailbox_words``) is exempt from end balance,
    but not when a later phase may take its slot: that phase's word (same initial value, so validate lets it) would
    start at the 5 written there, and its wait for 0 would never return. Refuted in both routes with a run of the
    whole program, as the interpreter ends the word at 5 (a new user's find: proved as a mailbox)."""
    s1 = Site(1, 0)
    mbox = Program("m", WORMHOLE, semaphores=(Semaphore(0, "mbox", (S0,), 0),),
                   programs=(EngineProgram(s1, Engine.WRITER, (InlineWrite(0, S0, 5), WriteBarrier())),))
    waits = Program("v", WORMHOLE, semaphores=(Semaphore(0, "v0", (S0,), 0),),
                    programs=(EngineProgram(S0, Engine.READER, (SemWait(0, WaitCond.EQ, 0),)),))
    p, _ = compose([mbox, waits], target=WORMHOLE)
    assert (0, S0) in p.slot_reused_words()
    assert (0, S0) not in p.mailbox_words()
    assert validate(p) == []
    _ends_unbalanced_and_refuted(p, 5)
