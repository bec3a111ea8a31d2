"""Real hangs from released code (issue 18 item 5): a hang's *before* kernels from a ttnn release older than its
fix and its *after* kernels from a newer one, each read by the tt-metal front end with a host description
(``examples/ttmetal/hangs/<report>/{before,after}.yaml``; their notes.md say what the hang is).

A pair is staged before the front end reads it: its test pins what the reading says today (the construct refused
and its file:line), so the day the constructs land the test fails and becomes the verdict assertion (before refuted
in the hang's family, after proved). The pinned release 0.81.1 is downloaded like the other wheel tests (skipped
offline); an older release only under the ``thorough`` profile or when already cached (``$VERISPATIAL_TTNN_0_72_0``
or the user cache), so CI downloads nothing more."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

HANGS = Path(__file__).resolve().parent.parent / "examples" / "ttmetal" / "hangs"


def _release(version: str) -> Path:
    download = version == TTNN_VERSION or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
    root = wheel_root(download=download, version=version)
    if root is None:
        pytest.skip(f"the ttnn {version} wheel is not cached" + (" and could not be downloaded" if download else
                                                                 " (downloaded under HYPOTHESIS_PROFILE=thorough)"))
    return root


ARGMAX = "ttnn/operations/reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp"


@pytest.mark.parametrize(("side", "version", "line", "construct"), [
    ("before", "0.72.0", 453, "remote write from scratch L1"),
    ("after", TTNN_VERSION, 505, "remote write from scratch L1"),
])
def test_argmax_50314_is_staged(side: str, version: str, line: int, construct: str) -> None:
    """tt-metal #50314 (PR #50315): the reduce_all start handshake of reader_argmax_interleaved_multicore.cpp, exact
    ``start_sem.wait(k + 1)`` in 0.72.0 (line 379), ``wait_min`` in 0.81.1 (line 417). Both readings pass the
    handshake and the scratch L1 of find_argmax_for_core (each page of a row read into the same bytes of a buffer no
    circular-buffer op names: scratch buffers, 0.72.0 line 58, 0.81.1 line 68); on the worker core they stop at the
    write of its scratch partial into the reduce core's scratch (0.72.0 :453, 0.81.1 :505), a landing in another
    core's scratch bytes ordered by a semaphore, which no op says yet: notes.md."""
    _release(version)
    with pytest.raises(Refused, match=construct) as e:
        import_host(HANGS / "argmax_50314" / f"{side}.yaml")
    assert (e.value.loc.file, e.value.loc.line) == (ARGMAX, line)


SORT_DM = "ttnn/operations/data_movement/sort/device/kernels/dataflow/"


def _violations(side: str, seeds: range) -> list[tuple[str, str, str, int]]:
    """The reference interpreter's violations of ``sort_50312/{side}.yaml`` over the round-robin run and the seeded
    random runs ``seeds``: (rule, engine, file, line), the op's kernel line."""
    from verispatial.petri.interp import simulate

    p = import_host(HANGS / "sort_50312" / f"{side}.yaml")
    eps = {ep.key: ep for ep in p.programs}
    out = set()
    for seed in (None, *seeds):
        run = simulate(p) if seed is None else simulate(p, seed=seed)
        for v in run.violations:
            loc = eps[v.position.engine].source_of(v.position.path)
            out.add((v.rule, v.position.engine, loc.file, loc.line))
    return sorted(out)


def test_sort_50312_before_overshoots_the_shared_counter() -> None:
    """tt-metal #50312: in 0.72.0 the readers' "ready" and the writers' "done" increments share the coordinator's
    one ``cores_to_coordinator`` word, which it waits for exactly (``noc_semaphore_wait(semaphore_ptr,
    number_of_confirmations)``, coordinator_single_row_multi_core.cpp:116): a reader of the next row announces
    itself while the coordinator still counts the last sub-stage's dones, the count passes Wt / 2 and the wait never
    returns. The interpreter reaches it (``sem-overshoot`` at :116) on its round-robin run."""
    _release("0.72.0")
    found = _violations("before", range(0))
    assert ("sem-overshoot", "(1,1).reader", SORT_DM + "coordinator_single_row_multi_core.cpp", 116) in found


def test_sort_50312_after_counts_apart_but_loses_a_go() -> None:
    """0.81.1 splits the word into ``cores_to_coordinator_ready`` and ``_done``: no run overshoots either. What
    stays is a race of both releases on the workers' ``coordinator_to_cores`` word: the coordinator multicasts "go"
    twice in a row (coordinator_single_row_multi_core.cpp:204 then :222, its write barrier in between waiting only
    for the first to land), and a reader resets the word to VALID after the first (``coordinator_to_cores_sem.set
    (VALID)``, reader_single_row_multi_core.cpp:74): a second "go" landing before that store is overwritten and the
    reader waits at :87 forever. The interpreter finds it in seeded runs (``sem-set-race`` at :74); notes.md."""
    _release(TTNN_VERSION)
    found = _violations("after", range(12))
    assert not [f for f in found if f[0] == "sem-overshoot"]
    assert {f[0] for f in found} == {"sem-set-race"}
    assert {(f[2], f[3]) for f in found} == {(SORT_DM + "reader_single_row_multi_core.cpp", 74)}


def _go_words(side: str) -> list[tuple[str, str, str, int]]:
    """The checker's exact counting of the workers' go words (``coordinator_to_cores``) of ``sort_50312/{side}.yaml``:
    per word, its result's name and verdict and where its replayed violation is (kernel file and line)."""
    import time

    from verispatial.certify.checker import _confirm
    from verispatial.certify.reach import analyse
    from verispatial.certify.witness import explore_states
    from verispatial.families.semaphores.encoding import _exact_word

    p = import_host(HANGS / "sort_50312" / f"{side}.yaml")
    a = analyse(p)
    eps = {ep.key: ep for ep in p.programs}
    go = next(s.id for s in p.semaphores if s.name == "coordinator_to_cores")
    out = []
    for w in sorted((w for (sem, _), w in a.words.items() if sem == go and w.kind == "flag"), key=lambda w: w.name):
        engines = frozenset(lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits))
        # the probe as the checker asks it (``checker._certify``): runs from launch and a search within the
        # program's work bound, before the wide queries
        r = _exact_word(a, w, engines, {b.id for b in p.buffers}, 20_000_000, time.perf_counter(),
                        lambda r: _confirm(a, r), lambda r: _confirm(a, r, explore_states(p)))
        v = (r.counterexample or {}).get("replay", {}).get("violation")
        loc = eps[v["position"]["engine"]].source_of(tuple(v["position"]["path"])) if v else None
        out.append((r.name, r.verdict.value, v["rule"] if v else "", f"{loc.file}:{loc.line}" if loc else ""))
    return out


@pytest.mark.parametrize(("side", "version", "line"), [("before", "0.72.0", 55), ("after", TTNN_VERSION, 74)])
def test_sort_50312_go_word_lost_update_is_refuted_by_a_run(side: str, version: str, line: int) -> None:
    """Each worker's go word, in both releases: ``sem-flag-early`` (the coordinator's second go issued before the
    reader's reset meant for it) refuted with a run of the interpreter from the launch showing the lost update,
    ``sem-set-race`` at the reader's ``coordinator_to_cores_sem.set(VALID)`` (0.81.1 :74, 0.72.0 :55). The
    interpreter's runs are asked before the component-wide queries (``encoding._witness``): each word in seconds,
    where those queries were cancelled after 15-30 s each and the run's budget spent (notes.md)."""
    _release(version)
    got = _go_words(side)
    assert len(got) == 3  # three workers
    for name, verdict, rule, where in got:
        assert name.startswith("sem-flag-early:sem0@")
        assert (verdict, rule) == ("refuted", "sem-set-race")
        assert where == f"{SORT_DM}reader_single_row_multi_core.cpp:{line}"


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE") != "thorough", reason="a certify of minutes (thorough)")
def test_sort_50312_after_certify_refutes_the_lost_go_and_its_hang() -> None:
    """The whole certify of the after side within a 300 s budget: the three go words refuted (the lost update,
    replayed) and the hang it leads to, the deadlock family refuted by the interpreter's run (a reader waiting for
    go on a word at VALID); no exact-counting obligation of a go word proved (its balance is: the word is re-armed,
    set before every use)."""
    from verispatial import budget
    from verispatial.driver.run import certify

    _release(TTNN_VERSION)
    p = import_host(HANGS / "sort_50312" / "after.yaml")
    with budget.deadline(300):
        rep = certify(p, cache=False)
    refuted = {r.name for r in rep.results if r.verdict.value == "refuted"}
    assert {n for n in refuted if n.startswith("sem-flag-early:")} == {
        "sem-flag-early:sem0@(0,0)", "sem-flag-early:sem0@(1,0)", "sem-flag-early:sem0@(0,1)"}
    assert any(n.startswith("deadlock:") for n in refuted)
    assert not [r.name for r in rep.results if r.family == "semaphore" and r.name.endswith(":sem0@(0,0)")
                and r.verdict.value == "proved"]



SDPA = "ttnn/operations/transformer/sdpa_decode/device/kernels/"
#: the findings of ../sdpa_decode/notes.md §1-3 on this configuration's path, in both releases: the pop of
#: cb_prev_max never waited (one K chunk), the in-place add of the causal mask and the in-place reciprocal (packs
#: before their reserve), the writer's constant tiles (the scaler, the zero tile, the column identity) and the causal
#: mask published with no drain
SDPA_FINDINGS = {"cb-pop-uncovered": 1, "cb-write-unreserved": 2, "async-read-publish": 4}


def _sdpa(side: str) -> tuple[dict[str, str], list[tuple[str, str, int]]]:
    """certify of ``sdpa_44366/{side}.yaml``: each obligation's verdict by name, and per stuck engine of a refuted
    deadlock its op's (engine, kernel file, line)."""
    from verispatial.driver.run import certify

    p = import_host(HANGS / "sdpa_44366" / f"{side}.yaml")
    eps = {ep.key: ep for ep in p.programs}
    rep = certify(p, cache=False)
    stuck = []
    for r in rep.results:
        if r.name.startswith("deadlock") and r.verdict.value == "refuted":
            for s in (r.counterexample or {}).get("stuck", []):
                pos = s["position"]
                loc = eps[pos["engine"]].source_of(tuple(pos["path"]))
                stuck.append((pos["engine"], loc.file, loc.line))
    return {r.name: r.verdict.value for r in rep.results}, stuck


def test_sdpa_44366_before_deadlocks_on_the_shared_cur_pos_page() -> None:
    """tt-metal #44366 in ttnn 0.71.2: the writer waits for c_8 (writer_decode_all.cpp:102) after the compute kernel
    popped it (sdpa_flash_decode.cpp:152): refuted in the deadlock family, the writer stuck at :102 with the page
    given back. cur_pos is the host's stated word (before.yaml), followed through the reader's, the writer's and
    compute's loads."""
    _release("0.71.2")
    verdicts, stuck = _sdpa("before")
    assert [v for n, v in verdicts.items() if n.startswith("deadlock")] == ["refuted"]
    assert ("(0,0).writer", SDPA + "dataflow/writer_decode_all.cpp", 102) in stuck
    refuted = [n.split(":")[0] for n, v in verdicts.items() if v == "refuted" and not n.startswith("deadlock")]
    assert {k: refuted.count(k) for k in set(refuted)} == SDPA_FINDINGS


@pytest.mark.parametrize(("side", "version"), [("after", "0.72.0"), ("after_0_81_1", TTNN_VERSION)])
def test_sdpa_44366_after_does_not_deadlock(side: str, version: str) -> None:
    """ttnn 0.72.0 gives the writer c_8 and the compute kernel a copy in c_15 (reader_decode_all.cpp:73-79, the copy
    a NoC read of the reader's own L1 at :128-131, read as a read of the same tensor bytes; 0.81.1 :137-149): the
    deadlock is proved and each cur_pos buffer has one consumer. Not proved as a whole: the vendor findings of both
    releases stay (notes.md)."""
    _release(version)
    verdicts, _ = _sdpa(side)
    assert [v for n, v in verdicts.items() if n.startswith("deadlock")] == ["proved"]
    assert verdicts["cb-single-consumer"] == "proved"
    refuted = [n.split(":")[0] for n, v in verdicts.items() if v == "refuted"]
    assert {k: refuted.count(k) for k in set(refuted)} == SDPA_FINDINGS
