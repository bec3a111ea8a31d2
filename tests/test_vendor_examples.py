"""The vendor transcriptions (``examples/vendor/``, ``examples/vendor/README.md``): each correct one proves with no
obligation left failed-to-prove; each broken one is refuted in the family that names its hang, its counterexample
replayed by the interpreter and pointing at the vendor line; every op cites its kernel file and line, and (when the
vendor wheels are at hand) that line holds the statement quoted and the front ends read the same program."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import attrs
import pytest
from builders import A, B, ep, prog, sem

from verispatial.certify.pending import outstanding_ops
from verispatial.certify.report import Report, Verdict
from verispatial.certify.structure import Leaf, engine_views
from verispatial.driver.run import certify
from verispatial.ir import (
    AtomicBarrier,
    Engine,
    EngineProgram,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Push,
    ReadTiles,
    Reserve,
    SemInc,
    TripCount,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.core import Addr
from verispatial.ir.program import Program, walk
from verispatial.ir.serialize import load_program
from verispatial.ir.source import SourceLoc
from verispatial.petri.explore import explore
from verispatial.petri.interp import drive
from verispatial.petri.position import Position
from verispatial.report.sources import located, source_locations

VENDOR = Path(__file__).resolve().parent.parent / "examples" / "vendor"

#: file -> None (proved, every obligation) or the families it must be refuted in.
EXPECTED: dict[str, tuple[str, ...] | None] = {
    "eltwise_binary.json": None,
    "eltwise_binary_sharded.json": None,
    "broken/eltwise_binary_sharded_cb_overrun.json": ("circular-buffer", "happens-before"),
    "ttlang_multinode_matmul.json": None,
    # The reduce scalers' stores are pushed with no drain (docs/semantics.md "Local-store fills"): async-read-publish.
    "softmax_w.json": ("async-noc",),
    "broken/move_overlap_atomic_pending.json": ("async-noc",),
    "broken/move_overlap_num_dests.json": ("deadlock", "async-noc"),
    "broken/sampling_wt1_wait2.json": ("deadlock",),
    "sort_exchange_wait_min.json": None,
    "broken/sort_exchange_exact_wait.json": ("semaphore", "deadlock"),
    "broken/argmax_start_exact_wait.json": ("semaphore", "deadlock"),
    "argmax_start_wait_min.json": None,
    "sort_exchange_data.json": None,
    "dispatch_mailbox.json": None,
    "broken/dispatch_mailbox_no_barrier.json": ("async-noc",),
    # Not proved as written: examples/vendor/README.md, "Sharded layernorm" (one pending atomic the vendor kernel
    # really leaves).
    "layernorm_sharded.json": ("async-noc",),
    "broken/layernorm_sharded_read_before_valid.json": ("async-noc",),
    # tt-metal's contributed multicast example: with PR #50183's drain and the contract's statements it proves; as
    # shipped it is refuted at the lines README "The contributed multicast example" names.
    "contributed_multicast.json": None,
    "broken/contributed_multicast_as_shipped.json": ("circular-buffer", "async-noc"),
    "sdpa_decode_cur_pos.json": None,
    "broken/sdpa_decode_cur_pos_shared.json": ("deadlock",),
    "softmax_w_scale_mask.json": ("async-noc",),
    "softmax_w_causal_mask.json": ("async-noc",),
    "broken/softmax_w_causal_compute_batch_mask_reader.json": ("deadlock", "async-noc"),
}


def _build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_build", VENDOR / "build.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _build()


def leaves_of(e: EngineProgram) -> list[Leaf]:
    return next(iter(engine_views(prog(e)).values())).leaves


@functools.cache
def _program(rel: str) -> Program:
    return load_program(VENDOR / rel)


@functools.cache
def _report(rel: str) -> Report:
    return certify(_program(rel))


def test_the_catalogue_is_the_directory() -> None:
    on_disk = sorted(p.relative_to(VENDOR).as_posix() for p in VENDOR.rglob("*.json"))
    assert on_disk == sorted(EXPECTED)
    assert sorted(BUILD.build_vendor()) == on_disk


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_every_op_cites_its_vendor_line(rel: str) -> None:
    p = _program(rel)
    for e in p.programs:
        table = dict(e.sources)
        for lf in leaves_of(e):
            loc = table.get(lf.path)
            assert loc is not None, (rel, e.key, lf.path)
            assert loc.line > 0
            assert loc.text
            # A kernel's own file, or the kernel_lib helper it calls (expanded to the ops the helper issues).
            # tt-metal's contributed multicast example: the tt-metal repository at the commits ``TT_METAL_COMMITS`` names.
            assert loc.file.startswith(("ttnn/operations/", "ttnn/kernel_lib/", "ttnn/kernel/", "ttl/tutorials/",
                                        "tt_metal/programming_examples/")), loc.file


@pytest.mark.parametrize("rel", [r for r, want in EXPECTED.items() if want is None])
def test_vendor_transcription_proves_with_nothing_left(rel: str) -> None:
    r = _report(rel)
    assert r.exit_code == 0
    assert [x.name for x in r.results if x.verdict is not Verdict.PROVED] == []


@pytest.mark.parametrize("rel", [r for r, want in EXPECTED.items() if want is not None])
def test_broken_variant_is_refuted_in_its_family_and_replayed(rel: str) -> None:
    want = EXPECTED[rel]
    assert want is not None
    r = _report(rel)
    refuted = [x for x in r.results if x.verdict is Verdict.REFUTED]
    assert {x.family for x in refuted} >= set(want)
    for x in refuted:
        if x.family in want:
            assert x.counterexample is not None
            replay = x.counterexample.get("replay") or {}  # a state rule's replay is nested under its name
            assert (x.counterexample.get("replayed_by") or replay.get("replayed_by")
                    or x.counterexample.get("kind") == "deadlock"), x.name


def test_pending_atomic_names_the_vendor_increment() -> None:
    """tt-metal #40879's class in ``move_interleaved_with_overlap.cpp`` as shipped: each worker ends with its
    ``sem.up`` unacknowledged, and the counterexample points at that line (88), not at the engine's end."""
    p = _program("broken/move_overlap_atomic_pending.json")
    r = _report("broken/move_overlap_atomic_pending.json")
    pending = [x for x in r.results if x.verdict is Verdict.REFUTED and x.name.startswith("async-pending-at-end")]
    assert sorted(x.counterexample["engine"] for x in pending if x.counterexample) == ["(1,0).reader", "(2,0).reader"]
    for x in pending:
        assert x.counterexample is not None
        assert x.counterexample["replayed_by"]
        assert [(o["kind"], o["path"]) for o in x.counterexample["outstanding"]] == [("atomic", [3])]
        lines = [(loc.file.rsplit("/", 1)[1], loc.line) for loc in source_locations(p, x)]
        assert lines == [("move_interleaved_with_overlap.cpp", 88)]
    # Nothing else is refuted: the increments themselves are ordered (the release waits for them).
    assert {x.family for x in r.results if x.verdict is Verdict.REFUTED} == {"async-noc"}


def test_move_overlap_with_the_barrier_raises_no_alarm() -> None:
    """The fix (``noc_async_atomic_barrier()`` after line 88) leaves nothing refuted: no false alarm. What stays
    failed-to-prove is the controller's word being both waited on and the flag's source (README); the words' end
    values are the host's to reset (it writes every semaphore at launch), so balance is proved."""
    p = _program("broken/move_overlap_atomic_pending.json")
    fixed = []
    for e in p.programs:
        if e.site != A:
            e = attrs.evolve(e, ops=(*e.ops[:4], AtomicBarrier(), *e.ops[4:]), sources=())
        fixed.append(e)
    r = certify(attrs.evolve(p, programs=tuple(fixed)))
    assert [x.name for x in r.results if x.verdict is Verdict.REFUTED] == []
    assert {x.name.split(":")[0] for x in r.results if x.verdict is Verdict.FAILED} == {
        "async-source-reuse", "sem-protocol", "deadlock"}
    assert all(x.verdict is Verdict.PROVED for x in r.results if x.name.startswith("balance-sem:"))


def test_a_wrong_flag_count_hangs_the_controllers_write_barrier() -> None:
    """tt-metal #42100's kind: ``range_0_size`` = 3 for a region of 2 cores. The controller's write barrier after its
    first tile write (line 98) waits for an acknowledgement that never comes; the counterexample replays (drive the
    stuck engine there) and points at that line."""
    rel = "broken/move_overlap_num_dests.json"
    p, r = _program(rel), _report(rel)
    (dl,) = [x for x in r.results if x.family == "deadlock"]
    assert dl.verdict is Verdict.REFUTED
    assert dl.counterexample is not None
    assert [(st["position"]["engine"], st["position"]["path"]) for st in dl.counterexample["stuck"]] == [
        ("(0,0).reader", [6, 1])]
    assert [(loc.file.rsplit("/", 1)[1], loc.line, loc.text) for loc in source_locations(p, dl)] == [
        ("move_interleaved_with_overlap.cpp", 98, "noc.async_write_barrier();")]
    targets = {st["position"]["engine"]: Position.from_json(st["position"]) for st in dl.counterexample["stuck"]}
    run = drive(p, dl.counterexample["trips"], targets)
    assert run.status == "deadlock"
    assert run.reached
    # The shipped count (2) does not hang there: only the workers' pending increments stay refuted.
    ok = _report("broken/move_overlap_atomic_pending.json")
    assert [x.verdict for x in ok.results if x.family == "deadlock"] != [Verdict.REFUTED]


def test_sampling_hangs_at_the_two_page_wait() -> None:
    """tt-metal #52348: with Wt = 1 the compute kernel waits for 2 value tiles (sampling.cpp:252) while its reader
    pushed 1 (reader_values_indices_tensor.cpp:51)."""
    p = _program("broken/sampling_wt1_wait2.json")
    r = _report("broken/sampling_wt1_wait2.json")
    (dl,) = [x for x in r.results if x.family == "deadlock" and x.verdict is Verdict.REFUTED]
    assert dl.counterexample is not None
    (stuck,) = dl.counterexample["stuck"]
    assert stuck["position"]["engine"] == "(0,0).compute"
    assert [(loc.file.rsplit("/", 1)[1], loc.line, loc.text) for loc in source_locations(p, dl)] == [
        ("sampling.cpp", 252, "input_dfb.wait_front(2);")]
    # With Wt = 2 the same kernels run to the end.
    ok = certify(BUILD.sampling_wt1("sampling_wt2", wt=2))
    assert not [x.name for x in ok.results if x.family == "deadlock" and x.verdict is not Verdict.PROVED]


def test_exact_exchange_wait_hangs_when_the_peer_passes_its_value() -> None:
    """tt-metal #54590: each core of a sort exchange pair waits ``==`` 1 then ``==`` 2 on the word its peer
    increments; a fast peer's second increment lands before the slow core sampled 1. The overshoot is refuted at
    the first wait (cross_core_data_exchange_common.hpp:79, as it was before the fix), the hang is replayed with one
    core stuck at ``== 1`` reading 2; the wheel's ``wait_min`` proves (above)."""
    rel = "broken/sort_exchange_exact_wait.json"
    p, r = _program(rel), _report(rel)
    over = [x for x in r.results if x.name.startswith("sem-overshoot") and x.verdict is Verdict.REFUTED]
    assert len(over) == 2
    for x in over:
        assert x.counterexample is not None
        # Replayed as the overshoot itself, or as the hang it leads to: the waiter stuck at its wait with the word
        # past the value (a run that reached the word's 2 before the waiter reached its wait, the interpreter's
        # witness runs asked first: families/semaphores/encoding.py, _witness)
        replay = x.counterexample["replay"]
        if "violation" in replay:
            assert replay["violation"]["rule"] == "sem-overshoot"
        else:
            at = x.counterexample["deadlock_at"]
            assert any(s["position"]["engine"] == at["engine"] and s["position"]["path"] == at["path"]
                       and s["reason"].endswith("waits ==1") for s in replay["deadlock"]["stuck"])
        assert [(loc.file.rsplit("/", 1)[1], loc.line, loc.text) for loc in source_locations(p, x)][:1] == [
            ("cross_core_data_exchange_common.hpp", 79, "sem_self.wait(sem_counter);")]
    (dl,) = [x for x in r.results if x.family == "deadlock" and x.verdict is Verdict.REFUTED]
    assert dl.counterexample is not None
    assert dl.counterexample["replayed_by"]
    reasons = sorted(s["reason"] for s in dl.counterexample["stuck"])
    assert "sem0@(1,0)=2, waits ==1" in reasons or "sem0@(0,0)=2, waits ==1" in reasons, reasons
    # The fix is only the two waits: everything else is the same program.
    fixed = _program("sort_exchange_wait_min.json")
    assert [[type(o).__name__ for o in e.ops] for e in fixed.programs] == [
        [type(o).__name__ for o in e.ops] for e in p.programs]


def test_argmax_exact_start_wait_hangs_the_lapped_worker() -> None:
    """tt-metal #50314: the reduce core sets its start word to ``k + 1`` (line 394) and multicasts it; on the
    reduce_all path nothing holds it back inside the loop, so it sets 3 before the worker sampled 2 and the worker's
    ``start_sem.wait(k + 1)`` (line 417 before the fix) never returns; the reduce core hangs at ``done_sem.wait``
    (526). The copy of 3 landing while the worker waits for ``== 2`` is the finding (``sem-overshoot`` at line 417,
    replayed); the fix (``wait_min``) proves (the start word carries a sequence) and the explorer agrees."""
    rel = "broken/argmax_start_exact_wait.json"
    p, r = _program(rel), _report(rel)
    (over,) = [x for x in r.results if x.name.startswith("sem-overshoot") and x.verdict is Verdict.REFUTED]
    assert over.name == "sem-overshoot:sem0@(1,0)"
    assert over.counterexample is not None
    assert over.counterexample["replay"]["violation"]["rule"] == "sem-overshoot"
    assert [(loc.file.rsplit("/", 1)[1], loc.line) for loc in source_locations(p, over)][:1] == [
        ("reader_argmax_interleaved_multicore.cpp", 417)]
    (dl,) = [x for x in r.results if x.family == "deadlock" and x.verdict is Verdict.REFUTED]
    assert dl.counterexample is not None
    assert dl.counterexample["replayed_by"]
    stuck = {s["position"]["engine"]: s for s in dl.counterexample["stuck"]}
    assert stuck["(1,0).reader"]["position"]["op"] == "sem_wait(sem0, eq, 1+1*k)"
    assert [(loc.file.rsplit("/", 1)[1], loc.line, loc.text) for loc in source_locations(p, dl)] == [
        ("reader_argmax_interleaved_multicore.cpp", 526, "done_sem.wait(num_cores);"),
        ("reader_argmax_interleaved_multicore.cpp", 417, "start_sem.wait(k + 1);")]
    fixed = _program("argmax_start_wait_min.json")
    assert explore(fixed).verdict == "ok"
    # The fix is only the waits: everything else is the same program.
    assert [[type(o).__name__ for o in e.ops] for e in fixed.programs] == [
        [type(o).__name__ for o in e.ops] for e in p.programs]
    words = {x.name: x.reason for x in _report("argmax_start_wait_min.json").results}
    assert words["sem-exact:sem0@(0,0)"].startswith("sequence protocol of sem0@(0,0)")
    assert words["sem-exact:sem0@(1,0)"].startswith("sequence protocol of sem0@(1,0)")


def test_eltwise_binary_ops_follow_the_kernels() -> None:
    p = _program("eltwise_binary.json")
    (reader,) = [e for e in p.programs if e.site == A and e.engine is Engine.READER]
    loop = reader.ops[0]
    assert isinstance(loop, Loop)
    assert [type(op).__name__ for op in loop.body] == [
        "Reserve", "ReadTiles", "Reserve", "ReadTiles", "ReadBarrier", "Push", "Push"]
    (writer,) = [e for e in p.programs if e.site == B and e.engine is Engine.WRITER]
    assert isinstance(writer.ops[-1], WriteBarrier)
    assert writer.source_of((1,)) is not None
    assert writer.source_of((1,)).line == 56  # type: ignore[union-attr]


# --- the ops an unacknowledged transaction comes from ------------------------------------------------------


def test_outstanding_ops_name_the_uncovered_increment() -> None:
    p = prog(ep(A, Engine.READER, Loop("k", 2, (SemInc(0, B, 1), AtomicBarrier())), SemInc(0, B, 1)),
             sems=(sem(0, A, B),))
    (e,) = p.programs
    assert outstanding_ops(leaves_of(e)) == [{"engine": "(0,0).reader", "path": [1], "kind": "atomic"}]
    covered = prog(ep(A, Engine.READER, SemInc(0, B, 1), AtomicBarrier()), sems=(sem(0, A, B),))
    assert outstanding_ops(leaves_of(covered.programs[0])) == []


def test_pending_at_end_counterexample_is_located() -> None:
    p = prog(ep(A, Engine.READER, SemInc(0, B, 1)), ep(B, Engine.READER), sems=(sem(0, A, B),))
    e = p.programs[0]
    p = attrs.evolve(p, programs=(attrs.evolve(e, sources=(((0,), SourceLoc("k.cpp", 7, 0, "sem.up(...)")),)),
                                  p.programs[1]))
    r = certify(p)
    (x,) = [x for x in r.results if x.name.startswith("async-pending-at-end") and x.verdict is Verdict.REFUTED]
    assert x.counterexample is not None
    cex, locs = located(p, x.counterexample)
    assert [str(loc) for loc in locs] == ["k.cpp:7: sem.up(...)"]
    assert cex["outstanding"][0]["source"]["line"] == 7


# --- against the vendor files, when they are at hand ------------------------------------------------------


def _ttnn_cpp(version: str | None = None) -> Path | None:
    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    root = wheel_root(version=version or TTNN_VERSION)
    return None if root is None else root / "ttnn" / "ttnn" / "cpp"


@pytest.mark.parametrize("rel", [r for r in sorted(EXPECTED) if not r.startswith("ttlang")])
def test_cited_lines_hold_the_quoted_statements(rel: str) -> None:
    cpp = _ttnn_cpp()
    if cpp is None:
        pytest.skip("the ttnn 0.81.1 wheel is not unpacked ($VERISPATIAL_TTNN; examples/ttmetal/README.md)")
    for file, line, text in BUILD.vendor_lines(_program(rel)):
        if file in BUILD.TT_METAL_COMMITS:
            continue  # not in any wheel: the tt-metal repository at that commit (checked by hand, README)
        older = BUILD.OLDER_WHEEL.get(file)
        root = cpp if older is None else _ttnn_cpp(older)
        if root is None:
            pytest.skip(f"the ttnn {older} wheel is not unpacked ($VERISPATIAL_TTNN_{str(older).replace('.', '_')})")
        got = (root / file).read_text(encoding="utf-8").splitlines()[line - 1].strip()
        if rel.startswith("broken/") and (file, line) in BUILD.PRE_FIX:
            # A statement quoted as it was before the vendor's fix: the wheel holds the fixed one there.
            before, after = BUILD.PRE_FIX[(file, line)]
            assert text == before, (file, line, text)
            text = after
        assert got.startswith(text.strip()) or text.strip() in got, (file, line, got, text)


def test_the_fix_a_broken_variant_leaves_out_is_in_the_wheel() -> None:
    """A broken variant built by leaving out the statement a vendor fix added (``FIX_ADDED``: PR #43507's write
    barrier at ``writer_untilize_dispatch.cpp:100``) leaves out exactly that line: the fixed form cites it, the broken
    one does not, and the wheel holds it there."""
    for (file, line), text in BUILD.FIX_ADDED.items():
        fixed = {(f, n) for f, n, _ in BUILD.vendor_lines(_program("dispatch_mailbox.json"))}
        broken = {(f, n) for f, n, _ in BUILD.vendor_lines(_program("broken/dispatch_mailbox_no_barrier.json"))}
        assert (file, line) in fixed - broken
        root = _ttnn_cpp(BUILD.OLDER_WHEEL.get(file))
        if root is None:
            pytest.skip("the ttnn wheel holding the fix is not unpacked")
        assert (root / file).read_text(encoding="utf-8").splitlines()[line - 1].strip() == text


def test_pr_43507_is_refuted_at_the_increment_before_the_write_landed() -> None:
    """The pre-fix dispatch handshake: each idle core's ``noc_semaphore_inc`` (line 103) is refuted by
    ``async-inc-overtake``, the interpreter issuing it while the inline write (99) has not landed at the sender; the
    counterexample points at line 103. With the barrier every obligation proves (above)."""
    r = _report("broken/dispatch_mailbox_no_barrier.json")
    got = {x.name: x for x in r.results if x.verdict is Verdict.REFUTED}
    for core in ("(1,0).writer", "(2,0).writer"):
        x = got[f"async-inc-overtake:{core}:[1]"]
        assert x.family == "async-noc"
        assert x.counterexample is not None
        v = x.counterexample["violation"]
        assert (v["rule"], v["position"]["path"]) == ("async-inc-overtake", [1])
    loc = dict(_program("broken/dispatch_mailbox_no_barrier.json").programs[1].sources)[(1,)]
    assert (loc.line, loc.text) == (103, "noc_semaphore_inc(sender_mbox_ready_noc_addr, 1);")


def test_sort_exchange_with_its_data_proves_and_its_barrier_is_needed() -> None:
    """The sort exchange with its remote writes into the peer's buffers proves (above); without the write barrier
    (line 103) the increment that announces the writes (109) is refuted (``async-inc-overtake``) and the explorer
    finds the peer publishing a page that has not landed (``mcast-publish-early``) and the pop freeing a page a write
    still reads (``async-source-reuse``)."""
    broken = BUILD.sort_exchange_data("sort_no_barrier", barrier=False)
    r = certify(broken)
    assert r.exit_code == 1
    assert {x.name for x in r.results if x.verdict is Verdict.REFUTED} >= {
        "async-inc-overtake:(0,0).reader:[11]", "async-inc-overtake:(1,0).reader:[11]"}
    assert not [x for x in r.results if x.verdict is Verdict.PROVED and x.name.startswith("mcast-publish:")]


def test_eltwise_binary_is_what_the_ttmetal_front_end_reads() -> None:
    if _ttnn_cpp() is None:
        pytest.skip("the ttnn 0.81.1 wheel is not unpacked ($VERISPATIAL_TTNN; examples/ttmetal/README.md)")
    pytest.importorskip("tree_sitter_cpp")
    from verispatial.frontends.ttmetal import import_host

    host = VENDOR.parent / "ttmetal" / "eltwise_binary" / "host.yaml"
    got = import_host(host)
    mine = _program("eltwise_binary.json")
    key = {e.key: e for e in mine.programs}
    for e in got.programs:
        assert e.ops == key[e.key].ops, e.key
        assert [(p, loc.line) for p, loc in e.sources] == [(p, loc.line) for p, loc in key[e.key].sources], e.key
    assert [(b.site, b.cb, b.capacity) for b in got.buffers] == [(b.site, b.cb, b.capacity) for b in mine.buffers]


def _default_channels(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """``ops`` with every write's virtual channel the default (``McastSend.vc`` None)."""
    return tuple(attrs.evolve(op, vc=None) if isinstance(op, (McastSend, McastSetValid))
                 else attrs.evolve(op, body=_default_channels(op.body)) if isinstance(op, (Loop, If)) else op
                 for op in ops)


def test_move_overlap_is_what_the_ttmetal_front_end_reads() -> None:
    if _ttnn_cpp() is None:
        pytest.skip("the ttnn 0.81.1 wheel is not unpacked ($VERISPATIAL_TTNN; examples/ttmetal/README.md)")
    pytest.importorskip("tree_sitter_cpp")
    from verispatial.frontends.ttmetal import import_host

    got = import_host(VENDOR.parent / "ttmetal" / "move_overlap" / "host.yaml")
    mine = _program("broken/move_overlap_atomic_pending.json")
    # The front end records each write's virtual channel (noc_semaphore_set_multicast's NOC_MULTICAST_WRITE_VC 4); the
    # transcription names none, one channel for the engine's one flag multicast: the same program.
    assert [op.vc for e in got.programs for op in walk(e.ops) if isinstance(op, (McastSend, McastSetValid))] == [4]
    assert [_default_channels(e.ops) for e in got.programs] == [e.ops for e in mine.programs]
    assert [[(p, loc.line) for p, loc in e.sources] for e in got.programs] == [
        [(p, loc.line) for p, loc in e.sources] for e in mine.programs]
    assert (got.semaphores, got.groups) == (mine.semaphores, mine.groups)


def test_ttlang_matmul_is_what_the_ttlang_front_end_reads() -> None:
    root = BUILD.ttlang_root()
    if root is None:
        pytest.skip("the tt-lang-sim 1.1.6 tutorials are not unpacked ($VERISPATIAL_TTLANG)")
    built = BUILD.multinode_matmul(root, VENDOR / "ttlang_multinode_matmul.json")
    assert built == _program("ttlang_multinode_matmul.json")
    assert os.path.basename(BUILD.TTLANG_MATMUL) == "step_3_multinode.py"


def test_without_the_tutorial_the_committed_matmul_is_kept() -> None:
    committed = VENDOR / "ttlang_multinode_matmul.json"
    kept = BUILD.multinode_matmul(None, committed)
    assert kept == _program("ttlang_multinode_matmul.json")
    assert [e.sources for e in kept.programs] == [e.sources for e in _program("ttlang_multinode_matmul.json").programs]


def test_certify_prints_the_vendor_lines() -> None:
    """What a kernel engineer reads: each refutation's first line after the verdict is the vendor statement."""
    want = {
        "broken/sampling_wt1_wait2.json": "    at ttnn/operations/reduction/sampling/device/kernels/compute/sampling.cpp:252: "
                                          "input_dfb.wait_front(2);",
        "broken/move_overlap_atomic_pending.json": "    at ttnn/operations/data_movement/move/device/kernels/dataflow/"
                                                   "move_interleaved_with_overlap.cpp:88: sem.up(noc, controller_noc_x, "
                                                   "controller_noc_y, 1);",
        "broken/sort_exchange_exact_wait.json": "    at ttnn/operations/data_movement/sort/device/kernels/dataflow/"
                                                "cross_core_data_exchange_common.hpp:79: sem_self.wait(sem_counter);",
    }
    for rel, line in want.items():
        run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(VENDOR / rel), "-q"],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 1, run.stderr
        out = run.stdout.splitlines()
        first = next(i for i, ln in enumerate(out) if ln.startswith("refuted "))
        assert out[first + 1] == line, out[first:first + 3]


def _drained(p: Program) -> Program:
    """``p`` with every ``FillTiles`` drained (a blocking load of its last word before the push), which the vendor's
    scaler and broadcast helpers do not issue on Wormhole and Blackhole."""
    from verispatial.ir import FillTiles, If

    def fix(ops: tuple[Op, ...]) -> tuple[Op, ...]:
        out: list[Op] = []
        for op in ops:
            if isinstance(op, FillTiles):
                op = attrs.evolve(op, drain=True)
            elif isinstance(op, (Loop, If)):
                op = attrs.evolve(op, body=fix(op.body))
            out.append(op)
        return tuple(out)

    return attrs.evolve(p, programs=tuple(attrs.evolve(e, ops=fix(e.ops)) for e in p.programs))


def _findings_beside_the_fills(rel: str) -> list[str]:
    """The refuted results of ``rel`` other than ``async-read-publish`` at a push right after an undrained fill (the
    vendor helpers' pushes), each of those checked to cite the helper's push."""
    p, r = _program(rel), _report(rel)
    out = []
    for x in r.results:
        if x.verdict is not Verdict.REFUTED:
            continue
        if x.name.startswith("async-read-publish:"):
            (loc,) = source_locations(p, x)
            assert (loc.file.rsplit("/", 1)[1], loc.text) in {
                ("reduce_helpers_dataflow.inl", "dfb.push_back(1);"),
                ("generate_bcast_scalar.hpp", "cb.push_back(1);"),
                ("generate_bcast_scalar_metal2.hpp", "dfb.push_back(1);")}, (x.name, loc)
            continue
        out.append(x.name)
    return out


def test_softmax_fills_its_scalers_by_local_stores_and_waits_for_them_once() -> None:
    """Softmax along W as the vendor writes it: the reader's two reduce scalers are FillTiles between reserve and
    push (prepare_reduce_scaler), no NoC read; compute waits for each once before its row loop and pops it after.
    The helper pushes its stores with no drain, so each scaler push is async-read-publish (the unpacker may read the
    page before the stores land); with the drain the transcription proves."""
    from verispatial.ir import FillTiles, Pop, Wait

    p = _program("softmax_w.json")
    reader, compute = p.programs[0], p.programs[1]
    fills = [(path, loc) for path, loc in reader.sources if isinstance(reader.ops[path[0]], FillTiles)]
    assert [loc.line for _, loc in fills] == [176, 176]
    assert all(loc.file.endswith("reduce_helpers_dataflow.inl") for _, loc in fills)
    assert [type(o).__name__ for o in reader.ops[:6]] == ["Reserve", "FillTiles", "Push"] * 2
    assert compute.ops[:2] == (Wait(1, 1), Wait(2, 1))
    assert compute.ops[-2:] == (Pop(1, 1), Pop(2, 1))
    assert _findings_beside_the_fills("softmax_w.json") == []
    assert [x.name for x in _report("softmax_w.json").results if x.verdict is Verdict.REFUTED] == [
        "async-read-publish:(0,0).reader:[2]", "async-read-publish:(0,0).reader:[5]"]
    report = certify(_drained(p))
    assert [r.name for r in report.results if r.verdict != Verdict.PROVED] == []


def _refuted_rules(rel: str) -> dict[str, set[tuple[str, int]]]:
    """Rule -> the (kernel file name, line) its refutations point at."""
    p, r = _program(rel), _report(rel)
    out: dict[str, set[tuple[str, int]]] = {}
    for x in r.results:
        if x.verdict is Verdict.REFUTED:
            rule = x.name.split(":", 1)[0].rsplit("/", 1)[-1]
            out.setdefault(rule, set()).update(
                (loc.file.rsplit("/", 1)[1], loc.line) for loc in source_locations(p, x))
    return out


def test_layernorm_sharded_findings_as_written() -> None:
    """The sharded layernorm as the vendor wrote it (2 cores) is refuted on one finding, at its vendor lines: the
    receiver's ``reduce_receiver_sem.up`` increments (lines 156, 248) are never acknowledged before the kernel ends
    (no atomic barrier: a finding of #40879's class). The sender's result multicast (278) lands block ``b`` one page
    past the receiver's write pointer, on a free page (the receiver pushes one page per block): no ``mcast-slot``
    refutation (it was a false alarm of the model until the rule asked for free pages, not a landing in step); it
    proves, as do the receiver's pushes (``mcast-publish``), by the VALID word's protocol: a sequence that restarts
    (VALID, 2, 3, then VALID again) on a word the receiver resets once per pass (``semaphores.Epochs``; README). The
    gather reads prove, in flight too: every read of a partial follows the handshake, and the owners' pops while
    others may still read rewrite nothing (docs/checker.md, "Remote writes"); so do ``reduce_receiver``'s resets and
    the sender's ``set(block + 2)`` after its VALID multicast (``semaphores.landings``). Nothing fails to prove."""
    rules = _refuted_rules("layernorm_sharded.json")
    assert rules == {"async-pending-at-end": {("reader_mcast_receiver_unary_sharded_ln.cpp", 156),
                                              ("reader_mcast_receiver_unary_sharded_ln.cpp", 248)},
                     # the writer's scalers and eps pushed with no drain of their stores (docs/semantics.md
                     # "Local-store fills")
                     "async-read-publish": {("generate_bcast_scalar_metal2.hpp", 24),
                                            ("reduce_helpers_dataflow.inl", 203)}}
    results = _report("layernorm_sharded.json").results
    slots = [x for x in results if x.name.startswith("mcast-slot:")]
    assert len(slots) == 4
    assert all(x.verdict is Verdict.PROVED for x in slots), slots
    reads = [x for x in results if x.name.startswith(("remote-read-unpublished:", "async-source-reuse:", "sem-set-race:"))]
    assert len([x for x in reads if x.name.startswith("remote-read-unpublished:")]) == 12
    assert all(x.verdict is Verdict.PROVED for x in reads), [x.name for x in reads if x.verdict is not Verdict.PROVED]
    assert [x.name for x in results if x.verdict is Verdict.FAILED] == []
    exact = {x.name: x.verdict for x in results if x.name.startswith("sem-exact:sem0@")}
    assert exact == {"sem-exact:sem0@(0,0)": Verdict.PROVED, "sem-exact:sem0@(1,0)": Verdict.PROVED}
    deadlock = [x for x in results if x.name.startswith("deadlock:")]
    assert [x.verdict for x in deadlock] == [Verdict.PROVED]


def test_layernorm_sender_pushes_then_multicasts_the_pages_it_pushed() -> None:
    """As the vendor wrote it (reader_mcast_sender_unary_sharded_ln.cpp:267-282): the sender pushes ``ex_global``
    (268) before its multicast loop and multicasts the pages already pushed (``behind``) from the read pointer it
    took at 267; the checker proves their source (``mcast-source-unpublished``: pushed, their slots not reserved
    again before the send). The transcription used to move the push after the loop."""
    p = _program("layernorm_sharded.json")
    sender = next(ep for ep in p.programs if ep.key == "(0,0).reader")
    exg = next(op.buf for op in walk(sender.ops) if isinstance(op, McastSend) and op.behind)
    order = [("push" if isinstance(op, Push) else f"send +{op.offset}, {op.behind} behind")
             for op in walk(sender.ops) if isinstance(op, (Push, McastSend)) and op.buf == exg]
    assert order == ["push", "send +0, 2 behind", "send +1, 2 behind"] * 2  # two passes
    results = [x for x in _report("layernorm_sharded.json").results
               if x.name.split(":")[0] == "mcast-source-unpublished"]
    assert [x.verdict for x in results] == [Verdict.PROVED]


def test_layernorm_read_before_valid_is_an_unpublished_remote_read() -> None:
    """The receiver gathering partials before it waits for the sender's VALID (line 157 after the gather) reads the
    sender's partial before compute pushed it: ``remote-read-unpublished`` at the receiver's read (line 180), in
    both passes, replayed; the correct order has no such refutation (above)."""
    r = _report("broken/layernorm_sharded_read_before_valid.json")
    rules = _refuted_rules("broken/layernorm_sharded_read_before_valid.json")
    assert rules["remote-read-unpublished"] == {("reader_mcast_receiver_unary_sharded_ln.cpp", 180)}
    unpublished = [x for x in r.results
                   if x.verdict is Verdict.REFUTED and "remote-read-unpublished" in x.name]
    assert len(unpublished) == 2
    for x in unpublished:
        assert x.counterexample is not None
        replay = x.counterexample.get("replay") or {}  # a state rule's replay is nested under its name
        assert replay.get("replayed_by"), x.name


def test_contributed_multicast_as_shipped_findings() -> None:
    """tt-metal's contributed multicast example at the commits read (README, "The contributed multicast example"):
    the coordinator reads into c_0 and pushes it with no reserve (coordinator_kernel.cpp:31, 38), each receiver copies
    c_0 with no wait (inbound_kernel.cpp:68), pushes c_16 before the copy's stores landed (69, tt-metal PR #50183's
    race) and ends with its increment (41) unacknowledged; the coordinator's multicast of the page it pushed (58) is
    no finding (its source is proved)."""
    rules = _refuted_rules("broken/contributed_multicast_as_shipped.json")
    assert rules == {"cb-write-unreserved": {("coordinator_kernel.cpp", 31)},
                     "cb-push-uncovered": {("coordinator_kernel.cpp", 38)},
                     "cb-read-unwaited": {("inbound_kernel.cpp", 68)},
                     "async-read-publish": {("inbound_kernel.cpp", 69)},
                     "async-pending-at-end": {("inbound_kernel.cpp", 41)}}
    src = [x for x in _report("broken/contributed_multicast_as_shipped.json").results
           if x.name.split(":")[0] == "mcast-source-unpublished"]
    assert [x.verdict for x in src] == [Verdict.PROVED]


def test_contributed_multicast_pr_50183_race_alone() -> None:
    """With the contract's statements but not PR #50183's drain, the example is refuted by the PR's race alone: each
    receiver's push of c_16 (inbound_kernel.cpp:69) while the copy's stores may not have landed, replayed; with the
    drain every obligation proves (``contributed_multicast.json``, above)."""
    p = BUILD.contributed_multicast("contributed_multicast_undrained", contract=True)
    r = certify(p)
    refuted = [x for x in r.results if x.verdict is Verdict.REFUTED]
    assert sorted(x.name for x in refuted) == [f"async-read-publish:({i},0).writer:[9]" for i in (1, 2, 3)]
    for x in refuted:
        assert x.counterexample is not None
        assert x.counterexample.get("kind") == "rule", x.name
        assert {(loc.file.rsplit("/", 1)[1], loc.line) for loc in source_locations(p, x)} == {("inbound_kernel.cpp", 69)}


def test_contributed_multicast_coordinator_multicasts_the_page_it_pushed() -> None:
    """The coordinator's order as written: push c_0 (38), then multicast it from the address taken before the push
    (58: one page behind the write pointer), no reserve or wait of c_0 between."""
    p = _program("contributed_multicast.json")
    coord = next(ep for ep in p.programs if ep.key == "(0,0).writer")
    ops = [op for op in walk(coord.ops) if isinstance(op, (Push, McastSend))]
    assert [(type(op).__name__, getattr(op, "behind", None)) for op in ops] == [("Push", None), ("McastSend", 1)]


def test_issue_44366_the_writer_waits_for_the_page_compute_popped() -> None:
    """SDPA decode's cur_pos before tt-metal PR #45142: the writer shares c_8 with compute, which pops it; the
    deadlock is the writer at its ``cb_wait_front`` (``writer_decode_all.cpp:123``) after the pop, replayed. The fix
    gives each consumer its own buffer: no engine shares one, and every obligation proves."""
    from verispatial.ir.sharing import sharing_waiters

    broken = _program("broken/sdpa_decode_cur_pos_shared.json")
    assert sharing_waiters(broken) == {0: frozenset({"(0,0).writer"})}
    assert sharing_waiters(_program("sdpa_decode_cur_pos.json")) == {}
    dead = [x for x in _report("broken/sdpa_decode_cur_pos_shared.json").results if x.family == "deadlock"]
    assert [x.verdict for x in dead] == [Verdict.REFUTED]
    cex = dead[0].counterexample or {}
    assert cex.get("replayed_by")
    (stuck,) = cex["stuck"]
    assert stuck["position"]["engine"] == "(0,0).writer"
    assert [(loc.file.rsplit("/", 1)[1], loc.line, loc.text) for loc in source_locations(broken, dead[0])] == [
        ("writer_decode_all.cpp", 123, "cb_wait_front(cb_index_id, 1);")]
    r = explore(broken)
    assert r.complete
    assert [s.position.engine for s in r.deadlocks[0].stuck] == ["(0,0).writer"]
    assert not explore(_program("sdpa_decode_cur_pos.json")).deadlocks


def _without_end_pops(p: Program, bufs: set[int], *, persistent: bool) -> Program:
    """``p`` with compute's top-level pops of ``bufs`` left out (ttnn 0.72.0's ``softmax.cpp:317-318``, "// we don't
    actually have to do this"), the buffers ``persistent`` or not."""
    from verispatial.ir import Pop

    progs = tuple(attrs.evolve(e, ops=tuple(o for o in e.ops if not (isinstance(o, Pop) and o.buf in bufs)),
                               sources=()) if e.engine is Engine.COMPUTE else e for e in p.programs)
    buffers = tuple(attrs.evolve(b, persistent=persistent) if b.id in bufs else b for b in p.buffers)
    return attrs.evolve(p, programs=progs, buffers=buffers)


def test_softmax_batch_mask_is_read_once_and_held_across_the_rows() -> None:
    """FUSED_SCALE_MASK without CAUSAL_MASK: the reader reads the batch's mask row once (``read_mask``, line 138),
    compute waits for it on the batch's first row (241) and pops it after the last (281); the fused scale is a
    FillTiles (generate_bcast_unary_scalar) waited once (187) and popped at the end (411). Both forms are refuted only
    by the helpers' undrained pushes, and prove with the drain."""
    from verispatial.ir import FillTiles, If, Pop, Wait
    from verispatial.ir.program import walk

    p = _program("softmax_w_scale_mask.json")
    reader, compute = p.programs[0], p.programs[1]
    assert [o for o in walk(reader.ops) if isinstance(o, FillTiles)] == [
        FillTiles(6, 1, "bcast_scalar"), FillTiles(1, 1, "reduce_scaler"), FillTiles(2, 1, "reduce_scaler")]
    guards = [o for o in walk(compute.ops) if isinstance(o, If)]
    assert [(g.when.value, g.body) for g in guards] == [("first", (Wait(7, 4),)), ("last", (Pop(7, 4),))]
    causal = _program("softmax_w_causal_mask.json").programs[1]
    assert [o.pages for o in walk(causal.ops) if isinstance(o, Wait) and o.buf == 7] == [2, 4]  # cumulative
    for rel in ("softmax_w_scale_mask.json", "softmax_w_causal_mask.json"):
        assert _findings_beside_the_fills(rel) == []
        drained = certify(_drained(_program(rel)))
        assert [x.name for x in drained.results if x.verdict is not Verdict.PROVED] == []


def test_constant_pages_left_in_their_buffers_fault_only_a_persistent_program() -> None:
    """The scalers and the fused scale waited once and never popped (0.72.0; PR #46662 re-added the pops, claiming a
    program-cache hit skips the CB re-init): one launch proves, because the firmware zeroes every buffer's
    received/acked counters after each run (tt_metal/hw/firmware/src/tt-1xx/brisc.cc:550-556, trisc.cc:97-106),
    cache hit or not; where the counters are handed on (``persistent``) each left page is a balance-cb finding."""
    p = _drained(_program("softmax_w_scale_mask.json"))
    constants = {1, 2, 6}
    once = certify(_without_end_pops(p, constants, persistent=False))
    assert [x.name for x in once.results if x.verdict is not Verdict.PROVED] == []
    kept = certify(_without_end_pops(p, constants, persistent=True))
    bad = {x.name: x.verdict for x in kept.results if x.verdict is not Verdict.PROVED}
    assert bad == {f"balance-cb:b{b}": Verdict.REFUTED for b in sorted(constants)}, bad


def test_a_compute_kernel_built_causal_against_a_batch_mask_reader_hangs_on_the_second_row() -> None:
    """CAUSAL_MASK defined for compute only: compute pops the mask row after row 0 and waits cumulatively for a new one
    in row 1, which the batch-mask reader never sends: one deadlock, at the chain's wait (chain.inl:2514) of row 1."""
    rel = "broken/softmax_w_causal_compute_batch_mask_reader.json"
    p, r = _program(rel), _report(rel)
    assert [n.split(":", 1)[0] for n in _findings_beside_the_fills(rel)] == ["deadlock"]
    refuted = [x for x in r.results if x.verdict is Verdict.REFUTED and x.family == "deadlock"]
    drained = certify(_drained(p))
    assert [x.family for x in drained.results if x.verdict is not Verdict.PROVED] == ["deadlock"]
    stuck = {s["position"]["engine"]: s for s in (refuted[0].counterexample or {})["stuck"]}
    assert stuck["(0,0).compute"]["position"]["op"] == "wait(b7, 2)"
    assert stuck["(0,0).compute"]["position"]["iteration"] == [["ncht", 1], ["ht", 0]]
    assert ("chain.inl", 2514) in {(loc.file.rsplit("/", 1)[1], loc.line) for loc in source_locations(p, refuted[0])}


def test_the_vendor_fill_helpers_drain_nothing_on_wormhole_and_blackhole() -> None:
    """The evidence for ``FillTiles.drain`` (docs/semantics.md, "Local-store fills"), read from both wheels: between
    the stores and the ``push_back`` of ``prepare_reduce_scaler`` and ``generate_bcast_unary_scalar`` nothing drains
    them outside Quasar (``flush_l2_cache_range`` under ``ARCH_QUASAR`` only; no ``load_blocking``) in 0.72.0 or
    0.81.1, while 0.81.1's ``generate_index_tile`` drains its seed with ``ckernel::load_blocking`` before reading it
    by NoC loopback."""
    import re

    for version, (lo, hi) in (("0.72.0", (222, 302)), ("0.81.1", (139, 204))):
        root = _ttnn_cpp(version)
        if root is None:
            pytest.skip(f"the ttnn {version} wheel is not unpacked")
        lines = (root / "ttnn/kernel_lib/reduce_helpers_dataflow.inl").read_text(encoding="utf-8").splitlines()
        body = "\n".join(ln for ln in lines[lo - 1:hi] if not ln.strip().startswith("//"))  # code, not comments
        assert body.count("push_back(1);") == 1, version
        assert "load_blocking" not in body, version
        # the only flush sits under the Quasar guard
        guarded = re.search(r"#if defined\(ARCH_QUASAR\) && defined\(COMPILE_FOR_DM\)(.*?)#endif", body, re.S)
        assert guarded is not None, version
        assert "flush_l2_cache_range" in guarded.group(1), version
        assert "flush_l2_cache_range" not in body.replace(guarded.group(0), ""), version
        bcast = (root / "ttnn/kernel/dataflow/generate_bcast_scalar.hpp").read_text(encoding="utf-8")
        unary = bcast[bcast.index("generate_bcast_unary_scalar("):]
        unary = unary[:unary.index("}")]
        assert "ptr[0] = scalar" in unary, version  # one store (0.72.0: ``scalar >> 16``), then the push
        assert "push_back(" in unary, version
        assert "load_blocking" not in unary, version
    index = (_ttnn_cpp("0.81.1") or Path()) / "ttnn/kernel_lib/index_tile_dataflow.hpp"
    assert "(void)ckernel::load_blocking(seed + (seed_words - 1));" in index.read_text(encoding="utf-8")


def test_outstanding_ops_name_a_write_whose_barrier_may_not_run() -> None:
    """A write barrier in a loop over a trip covers nothing where the trip is 0 (the tt-metal kernel's
    ``for (j = 0; j < flag; ++j) noc_async_write_barrier();`` with ``flag`` in ``0..1``): the refutation
    ``async-pending-at-end`` named no kernel line; the write is named now. A loop of a constant count, or of
    ``t + 1``, covers it as before."""
    def body(count: object) -> EngineProgram:
        return ep(A, Engine.WRITER, Reserve(0, 1), ReadTiles("t", Addr(0), 1, 0), WriteTiles(0, "t", Addr(0), 1),
                  Loop("j", count, (WriteBarrier(),)))  # type: ignore[arg-type]

    assert outstanding_ops(leaves_of(body("flag"))) == [{"engine": "(0,0).writer", "path": [1], "kind": "read"},
                                                        {"engine": "(0,0).writer", "path": [2], "kind": "write"}]
    assert outstanding_ops(leaves_of(body(1))) == [{"engine": "(0,0).writer", "path": [1], "kind": "read"}]
    assert outstanding_ops(leaves_of(body(TripCount("flag", 1, 1)))) == [
        {"engine": "(0,0).writer", "path": [1], "kind": "read"}]
