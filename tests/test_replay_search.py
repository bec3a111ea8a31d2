"""How the checker replays what it cannot decide by the solver alone (certify/replay.py): the runs from launch, the
departures-last run among them, and the explorer's one shared search per program, stopped at the finding a caller
seeks and bounded by the work a probe may spend.

The input: tests/data/ttmetal/mcast/ as shipped (four blocks, the copy-out writers) with each receiver's tile sent by
a multicast on VC 4 and its flag by ``noc_semaphore_set_remote`` on VC 1 (test_frontend_ttmetal_write_vcs.py cuts
the same host to one block). Two findings on it:

- the sender re-reserves (and reads into) the page of block 0 at block 2 while block 0's multicast may not have left
  it (``async-source-reuse``): the flag on the other channel lets the receivers publish and ask for the next block
  before the data departs. Only a run that keeps that multicast unleft for two blocks shows it, 59 transitions deep:
  no round-robin or seeded random run does, nor a breadth-first search of 60,000 states (failed-to-prove before);
- the semaphore words' protocols hold, but a probe asked before the wider queries replays candidates the interpreter
  cannot reach; the queries prove them. The probe's search is bounded by the work fixed for the program, not
  60,000 states (29 s of search before, shared with the findings above)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from test_frontend_ttmetal_write_vcs import DATA, DATA_MCAST, FLAG_MCAST, _per_core  # noqa: E402

from verispatial.certify import checker, replay, witness  # noqa: E402
from verispatial.certify.report import Verdict  # noqa: E402
from verispatial.certify.witness import explore_states  # noqa: E402
from verispatial.driver.run import certify  # noqa: E402
from verispatial.frontends.ttmetal import import_host  # noqa: E402
from verispatial.ir import rules as R  # noqa: E402
from verispatial.ir.program import Program  # noqa: E402
from verispatial.ir.serialize import load_program  # noqa: E402
from verispatial.petri.explore import DeadlockFound, Exploration, ViolationFound, explore  # noqa: E402
from verispatial.petri.interp import simulate  # noqa: E402

SENDER = "(0,0).reader"
REUSE = ((1, 0), (1, 1))  # the sender's cb_reserve_back and noc_async_read_tile


def _mcast(tmp_path: Path, calls: str) -> Program:
    """tests/data/ttmetal/mcast/ as shipped, the sender's data and flag multicasts replaced by ``calls``."""
    (tmp_path / "mcast").mkdir()
    (tmp_path / "copy").mkdir()
    text = (DATA / "mcast" / "sender.cpp").read_text()
    pair = f"{DATA_MCAST}\n        {FLAG_MCAST}"
    assert pair in text
    (tmp_path / "mcast" / "sender.cpp").write_text(text.replace(pair, calls))
    (tmp_path / "mcast" / "receiver.cpp").write_text((DATA / "mcast" / "receiver.cpp").read_text())
    (tmp_path / "copy" / "writer.cpp").write_text((DATA / "copy" / "writer.cpp").read_text())
    d = yaml.safe_load((DATA / "mcast" / "host.yaml").read_text())
    d["kernel_root"] = str(tmp_path)
    d["target"] = "wormhole_b0"
    (tmp_path / "host.yaml").write_text(yaml.safe_dump(d))
    return import_host(tmp_path / "host.yaml")


def _reuses(violations: object) -> set[tuple[int, ...]]:
    return {v.position.path for v in violations  # type: ignore[attr-defined]
            if v.rule == R.ASYNC_SOURCE_REUSE and v.position.engine == SENDER}


def test_a_source_reused_only_when_its_multicast_is_held_is_refuted_by_the_departures_last_run(
        tmp_path: Path) -> None:
    """Refuted at both ops, each with the departures-last run as its counterexample, which the interpreter shows
    again; no other run from launch shows it (the interleaving is an unusual one)."""
    program = _mcast(tmp_path, _per_core(""))
    others = [s for s in replay.launch_schedules(program) if not s.hold]
    assert not any(_reuses(simulate(program, seed=s.seed).violations) & set(REUSE) for s in others)
    report = certify(program)
    got = {r.name: r for r in report.results if r.name.startswith(f"{R.ASYNC_SOURCE_REUSE}:{SENDER}:")}
    assert {n: r.verdict for n, r in got.items()} == {
        f"{R.ASYNC_SOURCE_REUSE}:{SENDER}:{list(p)}": Verdict.REFUTED for p in REUSE}
    for r in got.values():
        assert r.counterexample is not None
        assert r.counterexample["replayed_by"] == "round-robin run, departures last"
        assert r.counterexample["violation"]["position"]["iteration"] == [["b", 2]]
    assert _reuses(simulate(program, hold=True).violations) == set(REUSE)


def test_a_probe_the_interpreter_cannot_reproduce_is_bounded_and_the_queries_decide(tmp_path: Path) -> None:
    """The semaphore words hold (proved by the queries after the probe's candidates were not replayed); no search
    of the run visits more states than the work bound of the program allows."""
    program = _mcast(tmp_path, _per_core(""))
    replay._EXPLORED.clear()
    report = certify(program)
    sems = [r for r in report.results if r.family == R.Family.SEMAPHORE.value]
    assert sems
    assert all(r.verdict == Verdict.PROVED for r in sems), [(r.name, r.verdict) for r in sems]
    assert replay._EXPLORED, "the probe searched"
    assert max(x.visited for x in replay._EXPLORED.values()) <= explore_states(program) < replay.EXPLORE_STATES


def test_a_dropped_candidate_is_never_proved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every replay made to fail (no attempt of ``confirm_rule`` reproduces, no run from launch or search shows
    anything), each obligation refuted before is failed-to-prove: dropping a candidate never makes it proved."""
    program = _mcast(tmp_path, _per_core(""))
    refuted = {r.name for r in certify(program).results if r.verdict == Verdict.REFUTED}
    assert {f"{R.ASYNC_SOURCE_REUSE}:{SENDER}:{list(p)}" for p in REUSE} <= refuted
    monkeypatch.setattr(checker, "confirm_rule", lambda *_a, **_k: None)
    monkeypatch.setattr(witness, "launch_runs", lambda _p: iter(()))
    monkeypatch.setattr(witness, "explored", lambda p, *_a, **_k: explore(p, max_states=0))
    dropped = {r.name: r.verdict for r in certify(program).results if r.name in refuted}
    assert dropped
    assert set(dropped.values()) == {Verdict.FAILED}, dropped


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "broken"


@pytest.mark.parametrize("caps", [(268, 40, 2000, 267), (2000, 268, 267)])
def test_one_search_resumed_and_read_at_any_cap_answers_as_a_search_capped_there(caps: tuple[int, ...]) -> None:
    """``Exploration`` made as far as each run asks, in any order of caps and after a stopped run, reports what
    ``explore`` capped at that number reports (s_flag_reset_late's sem-set-race is found after 267 states)."""
    p = load_program(EXAMPLES / "s_flag_reset_late.json")
    x = Exploration(p)
    first = x.run(5000, lambda f: isinstance(f, ViolationFound) and f.violation.rule == R.SEM_SET_RACE)
    assert first.stopped
    assert not first.complete
    assert [f.violation.rule for f in first.violations][-1] == R.SEM_SET_RACE
    for cap in caps:
        assert x.run(cap).to_json() == explore(p, max_states=cap).to_json(), cap


def test_a_stopped_search_finds_what_the_whole_one_finds_first() -> None:
    """The first deadlock (p_flag_source_set_by_compute, after 9,506 states) and the first violation of a rule: the
    same finding, whether the search stops there or walks on."""
    p = load_program(EXAMPLES / "p_flag_source_set_by_compute.json")
    whole = explore(p, max_states=12_000)
    got = Exploration(p).run(12_000, lambda f: isinstance(f, DeadlockFound))
    assert got.stopped
    assert got.deadlocks[0].to_json() == whole.deadlocks[0].to_json()
    assert got.deadlocks[0].states == whole.deadlocks[0].states == 9506
    assert got.states < whole.states


def test_a_write_left_in_flight_across_the_pop_is_replayed_by_one_run() -> None:
    """A TT-Lang writer whose ``tx.wait()`` comes after its ``with y_dfb.wait()`` block frees each page before the
    write from it left (``async-source-reuse`` at the pop, and at the compute engine's re-reserve): the runs from
    launch land every write eagerly or at random, so four of the six findings were replayed only by the explorer,
    after about 200,000 states (12-18 s). The run with landings last, the flagged engine's after every other's,
    shows each in one run."""
    from verispatial.frontends.ttlang import import_file

    (imp,) = import_file(str(Path(__file__).resolve().parent / "data" / "ttlang" / "write_wait_after.py"))
    report = certify(imp.program, cache=False)
    refuted = [r for r in report.results if r.verdict is Verdict.REFUTED]
    assert len(refuted) == 6, [(r.name, r.verdict) for r in report.results if r.verdict is not Verdict.PROVED]
    assert {r.name.split(":")[0] for r in refuted} == {R.ASYNC_SOURCE_REUSE}
    ways = [r.counterexample["replayed_by"] for r in refuted]
    assert "explicit-state search" not in ways, ways
