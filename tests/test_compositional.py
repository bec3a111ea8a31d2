"""Compositional certification of composed programs (verispatial/certify/compositional.py, docs/checker.md
"Compositional certification"): recognising the compose rendezvous, cutting slices, reusing proofs of equal slices,
the cross-phase obligations and the interpreter's ``rendezvous-early`` rule.
"""

from __future__ import annotations

import attrs
import pytest
from composed import (
    HALF,
    S0,
    S1,
    engine,
    exchange,
    exchange_chain,
    rendezvous_of,
    section,
    tensor,
    with_ops,
)

from verispatial.certify import compositional as comp
from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Compute,
    Loop,
    Op,
    Program,
    Role,
    Semaphore,
    SemSet,
    SemWait,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.program import walk
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.passes import compose
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate


def named(report: Report, name: str) -> Result:
    got = [r for r in report.results if r.name == name]
    assert len(got) == 1, (name, [r.name for r in report.results])
    return got[0]


def not_proved(report: Report) -> list[str]:
    return [r.name for r in report.results if r.verdict != Verdict.PROVED]


def copy_chain(*steps: tuple[str, str], state: tuple[str, ...] = (), barrier_after: list[bool] | None = None,
               tiles: tuple[int, ...] = ()) -> Program:
    """Sections copying ``src -> dst`` on S0, one per step (``tiles[k]`` tiles, default ``2 * HALF``)."""
    secs = []
    for k, (src, dst) in enumerate(steps):
        n = tiles[k] if k < len(tiles) else 2 * HALF
        secs.append(section(f"copy{k}", [(S0, src, 0, dst, 0)],
                            [tensor(src, 2 * HALF, Role.INPUT), tensor(dst, 2 * HALF, Role.OUTPUT)], tiles=n))
    p, _ = compose(secs, target=WORMHOLE, state=state, barrier_after=barrier_after)
    return p


# ---------------------------------------------------------------------------------------------- recognition


def test_the_compose_rendezvous_is_recognised() -> None:
    p = exchange_chain(3)
    rv = rendezvous_of(p)
    assert rv.participants == ("(0,0).reader", "(0,0).writer", "(1,0).reader", "(1,0).writer")
    assert rv.root == "(0,0).reader"
    assert rv.sites == (S0, S1)
    assert rv.boundaries == (0, 1)
    assert (p.semaphores[rv.gather].name, p.semaphores[rv.release].name) == ("rendezvous_gather", "rendezvous_release")
    for key, starts in rv.starts.items():
        ep = engine(p, key)
        for k, (b, start) in enumerate(zip(rv.boundaries, starts, strict=True), start=1):
            tail = ep.ops[start:ep.section_starts[b + 1]]
            assert tail == comp.expected_tail(rv.gather, rv.release, S0, rv.sites, k, 4, key == rv.root)


def test_the_certificate_states_the_rendezvous_places_compose_states() -> None:
    """P arrival and S release places per boundary (never every increment against every wait), as the compose
    fragment lists them."""
    from verispatial.certify.certificate import derive_places
    from verispatial.certify.reach import analyse

    p, frag = compose([exchange(k) for k in range(3)], target=WORMHOLE)
    rv = rendezvous_of(p)
    assert comp.rendezvous_places(p, rv) == frag["rendezvous"]["places"]
    places = derive_places(analyse(p))
    mine = [x for x in places if x["kind"].startswith("rendezvous-")]
    assert mine == frag["rendezvous"]["places"]
    assert len(mine) == 2 * (4 + 2)
    assert not any(x["counter"].startswith((f"sem{rv.gather}@", f"sem{rv.release}@")) for x in places
                   if not x["kind"].startswith("rendezvous-"))


def test_a_rendezvous_with_resets_goes_to_the_whole_program_checker() -> None:
    """examples/three_sections.json resets its rendezvous words: not the compose shape, and it still proves."""
    p = load_program("examples/three_sections.json")
    why = comp.recognise(p)
    assert isinstance(why, str)
    assert "does not end section 0 with" in why or "re-initialized by the host" in why
    lines: list[str] = []
    report = certify(p, progress=lines.append)
    assert report.exit_code == 0
    assert lines[0].startswith("whole-program check (not the compose rendezvous: ")
    assert named(report, "hb-rendezvous:after-section-0").verdict == Verdict.PROVED
    assert not any(r.name.startswith("slice") for r in report.results)


def test_a_word_the_host_does_not_reinitialise_is_not_the_shape() -> None:
    p = exchange_chain(2)
    rv = rendezvous_of(p)
    sems = tuple(attrs.evolve(s, host_init=False) if s.id == rv.gather else s for s in p.semaphores)
    why = comp.recognise(attrs.evolve(p, semaphores=sems))
    assert why == ("semaphore 0 (rendezvous_gather) is not program-wide, initially 0 and re-initialized by the "
                   "host")


# ---------------------------------------------------------------------------------------------- slices


def test_slices_are_the_phases_minus_the_rendezvous_with_roles_for_the_slice() -> None:
    p = exchange_chain(3)
    c = comp.cut(p, rendezvous_of(p))
    assert isinstance(c, comp.Cut)
    assert [s.sections for s in c.slices] == [(0,), (1,), (2,)]
    mid = c.slices[1].program
    assert validate(mid) == []
    # A1 is written by the phase before: an input here; A2 is written here and read later: an activation of the
    # slice (no output coverage obligation on it); ids are dense, names canonical.
    assert [(t.name, t.role) for t in mid.tensors] == [("%t0", Role.INPUT), ("%t1", Role.ACTIVATION)]
    assert c.slices[1].tensors == ("A1", "A2")
    assert [b.id for b in mid.buffers] == [0, 1]
    assert c.slices[1].buffers == (2, 3)
    assert mid.semaphores == ()  # the rendezvous words stay out of every slice
    for ep in mid.programs:
        assert not any(isinstance(op, (SemWait, SemSet)) for op in walk(ep.ops))
    assert c.slices[1].offsets == {k: engine(p, k).section_starts[1] for k in rendezvous_of(p).participants}
    last = c.slices[2].program
    assert [(t.name, t.role) for t in last.tensors] == [("%t0", Role.INPUT), ("%t1", Role.ACTIVATION)]


def test_equal_slices_have_equal_keys_and_programs() -> None:
    p = exchange_chain(3)
    c = comp.cut(p, rendezvous_of(p))
    assert isinstance(c, comp.Cut)
    # Slices 0 and 1 hand their buffers' counters on to the next slice at the same index (persistent in their
    # slice); the last slice's are reset by the launch's end, so it is a class of its own, equal but for that.
    assert c.slices[0].key == c.slices[1].key != c.slices[2].key
    assert c.slices[0].program == c.slices[1].program
    assert [b.persistent for b in c.slices[0].program.buffers] == [True, True]
    assert [b.persistent for b in c.slices[2].program.buffers] == [False, False]
    assert attrs.evolve(c.slices[2].program, buffers=c.slices[0].program.buffers) == c.slices[0].program
    # A different section (tiles shifted) is another slice class.
    q = copy_chain(("X", "A"), ("A", "Y"), tiles=(2, 1))
    cq = comp.cut(q, rendezvous_of(q))
    assert isinstance(cq, comp.Cut)
    assert cq.slices[0].key != cq.slices[1].key
    assert cq.slices[0].program != cq.slices[1].program


def test_an_op_naming_another_phases_entity_cannot_be_cut() -> None:
    p = exchange_chain(2)
    rv = rendezvous_of(p)
    key = "(0,0).reader"
    ep = engine(p, key)
    ops = list(ep.ops)
    ops.insert(0, SemWait(rv.release, WaitCond.GE, 0))  # a rendezvous word used by section 0's work
    bad = with_ops(p, key, ops, [0, *[s + 1 for s in ep.section_starts[1:]]])
    rv2 = rendezvous_of(bad)
    assert comp.cut(bad, rv2) == f"{key} at [0] uses rendezvous word {rv.release} in a section's work"


# ------------------------------------------------------------------------------------------- certification


def test_equal_slices_are_proved_once_and_name_their_source() -> None:
    p = exchange_chain(3)
    lines: list[str] = []
    report = certify(p, progress=lines.append)
    assert report.exit_code == 0
    assert lines[0] == "compositional: 3 slices, 2 rendezvous, 4 participants"
    assert lines[1] == "slice 0 of 3 (exchange0): rules: ownership, coverage, asynchronous NoC, accumulator"
    done = [x for x in lines if "obligations" in x]
    assert done[0].startswith("slice 0 of 3 (exchange0): 26 obligations, all proved")
    assert done[1].startswith("slice 1 of 3 (exchange1): equal up to renaming to slice 0: 26 obligations, proofs "
                              "reused, all proved")
    assert lines[-1] == "rendezvous and cross-phase obligations"
    r = named(report, "slice1/balance-cb:b2")
    c = comp.cut(p, rendezvous_of(p))
    assert isinstance(c, comp.Cut)
    assert r.reason == (f"proved as slice0/balance-cb:b0 of slice 0 (exchange0) (equal up to renaming; canonical "
                        f"form {c.slices[1].key[:12]})")
    # Slices 0 and 1 hand their buffers' counters on to the next slice at the same index (persistent in their
    # slice), the last slice's the launch's end resets: alone it may end holding pages, so its key is not the others'.
    # It differs from slice 0 in those flags alone, and slice 0's proof that b0 ends empty is the stronger answer.
    assert named(report, "slice0/balance-cb:b0").reason == "b0 ends empty"
    assert done[2].startswith("slice 2 of 3 (exchange2): equal up to renaming (and handing on fewer buffers) to slice "
                              "0: 26 obligations, proofs reused, all proved")
    assert c.slices[2].key != c.slices[0].key
    assert named(report, "slice2/balance-cb:b4").reason == (
        "proved as slice0/balance-cb:b0 of slice 0 (exchange0) (equal up to renaming but for buffers only it hands on, "
        f"whose balance it proves stronger; canonical form {c.slices[0].key[:12]})")
    alone = {r.name: r for r in certify(c.slices[2].program).results}
    assert alone["balance-cb:b0"].reason.startswith("b0 may end holding pages: the launch's end resets")
    assert all(r.verdict == Verdict.PROVED for r in alone.values())
    # Names speak of the composed program: tensors, buffer ids, op paths.
    assert named(report, "slice1/bounds:A2").verdict == Verdict.PROVED
    assert named(report, "hb-activation:A1:(1,0).reader[4, 1]").verdict == Verdict.PROVED
    assert named(report, "deadlock:composition").verdict == Verdict.PROVED
    assert named(report, "rendezvous:after-section-1").verdict == Verdict.PROVED
    for w in ("sem0@(0,0)", "sem1@(0,0)", "sem1@(1,0)"):
        assert "re-initialized by the host at launch" in named(report, f"balance-sem:{w}").reason


def test_the_cross_phase_obligations_rest_on_the_last_result_of_each_slice_name_they_assume() -> None:
    """``cross_phase`` reads of the slices' results only their deadlock and async-pending-at-end obligations: the
    composition's deadlock freedom fails when a slice's deadlock obligation is not proved, a happens-before across
    a boundary when an earlier phase's async-pending-at-end is not, and of a name given twice the last counts (as
    indexing every result by name had it)."""
    p = exchange_chain(3)
    rv = rendezvous_of(p)
    c = comp.cut(p, rv)
    assert isinstance(c, comp.Cut)
    slices = [r for r in certify(p).results if r.name.startswith("slice")]
    deadlock = next(r for r in slices if r.family == "deadlock" and r.name.startswith("slice1/"))
    pending = named(Report("p", "t", tuple(slices)), "slice0/async-pending-at-end")

    def cross(results: list[Result]) -> dict[str, Result]:
        return {r.name: r for r in comp.cross_phase(p, rv, c, results, 10**6)}

    proved = cross(slices)
    assert proved["deadlock:composition"].verdict == Verdict.PROVED
    hb = [n for n, r in proved.items() if n.startswith("hb-cross:")]
    assert hb
    assert all(proved[n].verdict == Verdict.PROVED for n in hb)

    failed = cross([*slices, attrs.evolve(deadlock, verdict=Verdict.FAILED)])
    assert failed["deadlock:composition"].verdict == Verdict.FAILED
    assert f"rests on {deadlock.name}, which is failed-to-prove" in failed["deadlock:composition"].reason
    assert all(failed[n].verdict == Verdict.PROVED for n in hb)

    late = cross([*slices, attrs.evolve(pending, verdict=Verdict.FAILED)])
    assert "rests on slice0/async-pending-at-end, which is failed-to-prove" in late["deadlock:composition"].reason
    assert any(late[n].verdict == Verdict.FAILED for n in hb)
    # The last of a name counts: a proved result after the failed one stands.
    assert cross([*slices, attrs.evolve(deadlock, verdict=Verdict.FAILED), deadlock])["deadlock:composition"].verdict \
        == Verdict.PROVED


def test_without_the_cache_every_slice_is_proved_itself() -> None:
    p = exchange_chain(3)
    a, b = certify(p), certify(p, cache=False)
    assert [(r.name, r.verdict) for r in a.results] == [(r.name, r.verdict) for r in b.results]
    assert not any("proved as" in r.reason for r in b.results)


def test_distinct_slices_in_worker_processes_give_the_same_report() -> None:
    p = copy_chain(("X", "A"), ("A", "Y"), tiles=(2, 1))
    a, b = certify(p), certify(p, jobs=2)
    assert [(r.name, r.verdict, r.reason) for r in a.results] == [(r.name, r.verdict, r.reason) for r in b.results]


def test_verdicts_do_not_depend_on_compute_kinds() -> None:
    """``Compute.kind`` is left out of slice keys (``UNREAD_FIELDS``): relabelling every compute step changes no
    verdict and no key."""
    from verispatial.ir.graph import load_graph
    from verispatial.passes import Pipeline, capped_passes, compile_section

    g = load_graph("examples/models/mlp_block.json")
    pipe = Pipeline(capped_passes(max_cols=1, max_rows=1, max_sites=1))
    p, _ = compose([compile_section(g, i, WORMHOLE, pipe)[0] for i in range(len(g.ops))], target=WORMHOLE)

    def relabel(op: Op) -> Op:
        if isinstance(op, Compute):
            return attrs.evolve(op, kind="relabelled")
        if isinstance(op, Loop):
            return attrs.evolve(op, body=tuple(relabel(o) for o in op.body))
        return op

    q = attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=tuple(relabel(o) for o in ep.ops)) for ep in p.programs))
    assert q != p
    assert any(isinstance(op, Compute) for ep in p.programs for op in walk(ep.ops))
    cp, cq = comp.cut(p, rendezvous_of(p)), comp.cut(q, rendezvous_of(q))
    assert isinstance(cp, comp.Cut)
    assert isinstance(cq, comp.Cut)
    assert [s.key for s in cp.slices] == [s.key for s in cq.slices]
    rp, rq = certify(p, cache=False), certify(q, cache=False)
    assert rp.exit_code == 0
    assert [(r.name, r.verdict) for r in rp.results] == [(r.name, r.verdict) for r in rq.results]
    for sl in cp.slices:  # and each slice on its own, whole
        a, b = certify(sl.program), certify(cq.slices[sl.index].program)
        assert [(r.name, r.verdict) for r in a.results] == [(r.name, r.verdict) for r in b.results]


def test_the_routes_agree_on_a_correct_composition() -> None:
    p = exchange_chain(3)
    assert certify(p).exit_code == certify(p, compositional=False).exit_code == 0


def test_an_open_boundary_checks_its_sections_together() -> None:
    """exchange1 reads what exchange0 writes; with boundary 0 open they run concurrently: the slice of their phase
    finds the race, and so does the whole-program checker."""
    p = exchange_chain(3, barrier_after=[False, True])
    c = comp.cut(p, rendezvous_of(p))
    assert isinstance(c, comp.Cut)
    assert [s.sections for s in c.slices] == [(0, 1), (2,)]
    report = certify(p)
    races = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert races
    assert all(r.name.startswith("slice0/hb-activation:A1:") for r in races), [r.name for r in races]
    for r in races:
        assert r.counterexample is not None
        assert r.counterexample["replay"]["violation"]["rule"] == "tensor-race"
        assert r.counterexample["slice"]["index"] == 0
    assert certify(p, compositional=False).exit_code == 1


# ------------------------------------------------------------------------------------------- cross-phase


def test_a_read_of_an_activation_written_only_later_is_refuted_on_the_composition() -> None:
    p = copy_chain(("B", "Y"), ("X", "B"))
    report = certify(p)
    r = named(report, "hb-activation:B:(0,0).reader[0, 1]")
    assert r.verdict == Verdict.REFUTED
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == "tensor-race"
    assert "before any completed write" in r.counterexample["replay"]["violation"]["message"]


def test_a_state_is_ordered_across_a_rendezvous_in_either_direction() -> None:
    """Per-tile state versions (docs/semantics.md, ``tensor-race``): a state written in phase 0 and read in phase 1
    is read at its new version, read in phase 0 and written in phase 1 at its old one; the rendezvous orders both,
    so ``hb-cross`` proves them from the rendezvous lemma (no replay), as the whole-program checker and the
    interpreter agree. Without the rendezvous (one phase) the write-then-read pair races: refuted, replayed."""
    for steps in ((("X", "S"), ("S", "Y")), (("S", "Y"), ("X", "S"))):
        p = copy_chain(*steps, state=("S",))
        report = certify(p)
        assert not_proved(report) == []
        r = named(report, "hb-cross:S:after-section-0")
        assert r.reason.startswith("S is written in phase(s)")
        assert "per-tile versions" in r.reason
        assert "rendezvous:after-section-0" in r.reason
        assert "slice0/async-pending-at-end" in r.reason
        assert certify(p, compositional=False).exit_code == 0
        sim = simulate(p)
        assert sim.status == "terminated"
        assert not sim.violations
    racy = copy_chain(("X", "S"), ("S", "Y"), state=("S",), barrier_after=[False])
    report = certify(racy)
    bad = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert [r.name.split(":", 2)[:2] for r in bad] == [["hb-state", "S"]]
    assert bad[0].counterexample is not None
    assert bad[0].counterexample["replay"]["violation"]["rule"] == "tensor-race"


def test_an_output_written_over_two_phases_is_covered_by_both() -> None:
    """Each section writes half of the output Y: neither slice carries an output obligation, the composed one
    sees both halves; with one half missing it is not proved."""
    def two(second: int) -> Program:
        secs = [section("w0", [(S0, "X", 0, "Y", 0)], [tensor("X", 2, Role.INPUT), tensor("Y", 2, Role.OUTPUT)], 1),
                section("w1", [(S0, "X", 1, "Y", second)], [tensor("X", 2, Role.INPUT), tensor("Y", 2, Role.OUTPUT)],
                        1)]
        return compose(secs, target=WORMHOLE)[0]

    ok = certify(two(1))
    assert not_proved(ok) == []
    assert named(ok, "output-unwritten:Y").reason == "every one of the 2 tiles of output Y is written (exact)"
    half = certify(two(0))
    r = named(half, "output-unwritten:Y")
    assert r.verdict == Verdict.REFUTED
    assert r.reason.startswith("output Y tile 1 is written by no write of it")
    assert r.counterexample is not None
    assert r.counterexample["replay"]["violation"]["rule"] == "output-unwritten"
    assert "output Y ends with 1 of its 2 tiles never written" in r.counterexample["replay"]["violation"]["message"]


def test_a_later_slice_refutation_names_the_composed_op_paths() -> None:
    """A refutation found in slice 1 (the writer of section 1 pops its page before the write left:
    ``async-source-reuse``) is reported at the composed program's op path, in its name and in the replayed
    violation — the path the interpreter reports on the composed program."""
    p = copy_chain(("X", "A"), ("A", "Y"))
    ep = engine(p, "(0,0).writer")
    start = ep.section_starts[1]
    ops = list(ep.ops)
    at = next(i for i in range(start, len(ops)) if isinstance(ops[i], Loop))
    loop = ops[at]
    assert isinstance(loop, Loop)
    ops[at] = attrs.evolve(loop, body=tuple(o for o in loop.body if not isinstance(o, WriteBarrier)))
    ops.insert(at + 1, WriteBarrier())
    bad = with_ops(p, ep.key, ops, list(ep.section_starts))
    assert validate(bad) == []
    report = certify(bad)
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert [r.name for r in refuted] == [f"slice1/async-source-reuse:(0,0).writer:[{at}, 2]"]
    cex = refuted[0].counterexample
    assert cex is not None
    assert cex["path"] == [at, 2]
    assert cex["violation"]["position"]["path"] == [at, 2]
    assert cex["slice"]["top_offset"]["(0,0).writer"] == start
    oracle = explore(bad, max_states=20_000)
    assert oracle.complete
    assert {(f.violation.rule, f.violation.position.engine, f.violation.position.path) for f in oracle.violations} == {
        ("async-source-reuse", "(0,0).writer", (at, 2))}


def test_outstanding_writes_at_a_phase_end_are_no_proof_of_the_crossing() -> None:
    """A writer that ends its phase with its last write not acknowledged: in the slice alone that breaks
    async-pending-at-end, in the composition it leaves the next phase's read unordered; neither route proves."""
    p = exchange_chain(2)
    key = "(1,0).writer"
    ep = engine(p, key)
    loop = ep.ops[0]
    assert isinstance(loop, Loop)
    body = tuple(op for op in loop.body if not isinstance(op, WriteBarrier))
    q = with_ops(p, key, [attrs.evolve(loop, body=body), *ep.ops[1:]], list(ep.section_starts))
    report = certify(q)
    r = named(report, "slice0/async-pending-at-end:(1,0).writer:end")
    assert r.verdict == Verdict.FAILED
    assert "in the composition the engine goes on to the rendezvous" in r.reason
    cross = named(report, "hb-cross:A1:after-section-0")
    assert cross.verdict == Verdict.FAILED
    assert "rests on slice0/async-pending-at-end" in cross.reason
    assert named(report, "deadlock:composition").verdict == Verdict.FAILED
    assert certify(q, compositional=False).exit_code != 0


def test_a_rearmed_word_of_an_earlier_phase_must_end_at_its_initial_value() -> None:
    """A word set before every use need not end at its initial value in a program of one phase; when a later phase
    has a semaphore on its site it may take the word's slot, so it must (both routes and the interpreter)."""
    def with_word(p: Program, owner: int) -> Program:
        sems = (*p.semaphores, Semaphore(len(p.semaphores), "flag", (S0,), 0, section=owner))
        key = "(0,0).writer"
        ep = engine(p, key)
        at = ep.section_starts[owner]
        s = len(p.semaphores)
        ops = [*ep.ops[:at], SemSet(s, 1), SemWait(s, WaitCond.GE, 1), *ep.ops[at:]]
        starts = [x + 2 if k > owner else x for k, x in enumerate(ep.section_starts)]
        return attrs.evolve(with_ops(p, key, ops, starts), semaphores=sems)

    base = exchange_chain(2)
    alone = with_word(base, 1)  # in the last phase: re-armed, exempt
    assert validate(alone) == []
    assert simulate(alone).rules() == []
    s = len(base.semaphores)
    r = named(certify(alone), f"slice1/balance-sem:sem{s}@(0,0)")
    assert (r.verdict, r.reason) == (Verdict.PROVED, f"sem{s}@(0,0) is re-armed: set before every use")
    second = attrs.evolve(base, semaphores=(*base.semaphores, Semaphore(len(base.semaphores), "other", (S0,), 0,
                                                                         section=1)))
    early = with_word(second, 0)  # phase 0, and phase 1 has a semaphore on (0,0)
    assert validate(early) == []
    assert "balance-sem" in simulate(early).rules()
    s = len(second.semaphores)
    r = named(certify(early), f"slice0/balance-sem:sem{s}@(0,0)")
    assert r.verdict != Verdict.PROVED
    assert "no re-armed or host-write exemption: a later phase may take this word's semaphore slot" in r.reason
    assert certify(early, compositional=False).exit_code != 0


def test_a_resident_tensor_overlapping_a_buffer_of_its_phase_is_refuted() -> None:
    p = exchange_chain(3)
    assert p.resident, "compose keeps the activations resident"
    res = p.resident[0]
    buf = next(b for b in p.buffers if b.site == res.site and p.phase_of_section()[b.section] in p.resident_phases(res))
    at = next(m for m in p.memory if m.buf == buf.id)
    moved = attrs.evolve(p, resident=(attrs.evolve(res, offset=at.offset), *p.resident[1:]))
    report = certify(moved)
    bad = [r for r in report.results if r.verdict == Verdict.REFUTED]
    # It is live in phases 0 and 1, and the buffers of both start at the reserved base.
    assert [r.name for r in bad] == [f"memory-disjoint:({res.site.x},{res.site.y}).local.phase{ph}"
                                     for ph in sorted(p.resident_phases(res))]
    assert bad[0].counterexample is not None
    assert bad[0].counterexample["address"] == at.offset
    assert f"resident {res.tensor}" in bad[0].reason


# ------------------------------------------------------------------------------------------- the interpreter


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
def test_rendezvous_early_names_the_boundary(seed: int | None) -> None:
    """(1,0).reader skips its release wait after section 0: it starts section 1 before the others arrived."""
    p = exchange_chain(2)
    rv = rendezvous_of(p)
    key = "(1,0).reader"
    ep = engine(p, key)
    i = rv.starts[key][0] + 2
    assert isinstance(ep.ops[i], SemWait)
    q = with_ops(p, key, [*ep.ops[:i], *ep.ops[i + 1:]], [0, ep.section_starts[1] - 1])
    got = [v for v in simulate(q, seed=seed).violations if v.rule == "rendezvous-early"]
    if seed is None:  # round robin: the reader is first past the rendezvous while the writers still write
        assert got
    for v in got:
        assert v.position.engine == key
        assert "before every engine arrived at the rendezvous after section 0 (exchange0)" in v.message
    assert simulate(p, seed=seed).rules() == []


def test_every_compose_section_is_one_phase_of_its_own() -> None:
    assert len(exchange(0).sections) == 1


def test_compiled_names_are_the_rendered_names() -> None:
    """``_Compiled`` (a report's names as formats, each slice's tokens rendered once) writes every name as ``render``
    does: every kind of slice-local name, ids past the slice's tables, a path of an engine without an offset, and
    literal ``%`` signs."""
    texts = ["deadlock:component[(0,0).reader]", "balance-cb:b0@(1,2)", "x:%t1:(0,0).reader[3, 1]", "sem0 and sem9 g0 g4",
             "%k0 loops; 100% of b12 .phase0", "(5,5).writer:[2 %t0%", "", "plain", "b1b2 sem1x %%s %t0"]
    sl = comp.Slice(7, (7,), ("l0.q",), "k" * 64, ("T.a", "T.b"), ("K",), (40, 41), (9,), (3,),
                    {"(0,0).reader": 100}, lambda: None)  # type: ignore[arg-type,return-value]
    ps = [comp.pieces(t) for t in texts]
    assert comp._Compiled(ps).names(sl) == [comp.render(p, sl) for p in ps]
    assert any(isinstance(x, tuple) for p in ps for x in p)  # tokens were found
    # One name alone is the same text, and renders only the tokens it mentions (``certify -q`` reads a few names of
    # each reused slice: those of its deadlock obligations).
    for i, p in enumerate(ps):
        compiled = comp._Compiled(ps)
        vals = compiled.tokens_of(sl)
        assert compiled.name(vals, "slice7/", i) == "slice7/" + comp.render(p, sl)
        mentioned = {x for x in p if isinstance(x, tuple)}
        assert {compiled.tokens[j] for j, t in enumerate(vals._texts) if t is not None} == mentioned


def test_a_frozen_heap_keeps_no_cyclic_garbage() -> None:
    """Within ``frozen_heap`` each ``collection(True)`` block collects the cyclic garbage made while the collector
    was paused before it freezes the heap, and its own on the way out: a freeze never keeps garbage (a 16-layer
    step's certify reached 1.5 GB that way); live objects stay, and nothing is frozen afterwards."""
    import gc
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self

    def cycle() -> weakref.ref[Node]:
        return weakref.ref(Node())  # unreachable at once, freed only by a collection

    was = gc.isenabled()
    try:
        with comp.frozen_heap():
            with comp.collection(False):
                paused = cycle()
                kept = Node()
            assert paused() is not None  # the collector is paused
            with comp.collection(True):
                assert paused() is None  # collected before the freeze
                assert gc.get_freeze_count() > 0
                inside = cycle()
            assert inside() is None
            assert kept.me is kept
        assert gc.get_freeze_count() == 0
    finally:
        if was:
            gc.enable()
