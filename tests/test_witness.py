"""Failed-to-prove obligations refuted by the interpreter's runs from launch (certify/witness.py): a run that breaks
the obligation's own rule at its own subject refutes it, with that run as its counterexample; a run breaking
another obligation's rule, or the same rule at another subject, refutes nothing; nothing is ever proved this way.

The input (found by a new user): tests/data/ttmetal/flag/ with the semaphore's ``initial_value: 1`` (= VALID). Each
receiver's wait passes at once and its reset may overwrite the sender's flag multicast as it lands (``sem-set-race``)
or land before it (the word ends at 0, not 1); no run deadlocks. The checker's protocols do not cover the word (a
reset before any wait from an initial value other than its resets), so the solver decides none of it: before,
``sem-protocol`` and the deadlock were failed-to-prove. The end value is the host's to reset (tt-metal writes every
semaphore's initial value at each launch: ``balance-sem`` is proved by that write); the same program with
semaphores no host writes (``host_init`` off) ends unbalanced, which the run from launch shows."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.certify import replay, witness  # noqa: E402
from verispatial.certify.checker import check, replay_refutation  # noqa: E402
from verispatial.certify.reach import analyse  # noqa: E402
from verispatial.certify.report import Result, Verdict  # noqa: E402
from verispatial.certify.witness import refute_by_runs, sought  # noqa: E402
from verispatial.frontends.ttmetal import import_host  # noqa: E402
from verispatial.ir import rules as R  # noqa: E402
from verispatial.ir.program import Program  # noqa: E402
from verispatial.ir.serialize import load_program  # noqa: E402
from verispatial.petri.interp import simulate  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"
WORDS = ("sem0@(1,0)", "sem0@(2,0)")


def _flag(tmp_path: Path, initial: int, host_init: bool = True) -> Program:
    """tests/data/ttmetal/flag/host.yaml with the flag semaphore's initial value changed; with ``host_init`` off,
    its semaphores are words no host writes at launch (as a hand-written program.json's)."""
    src = DATA / "flag" / "host.yaml"
    d = yaml.safe_load(src.read_text())
    d["kernel_root"] = str((src.parent / d["kernel_root"]).resolve())
    d["semaphores"][0]["initial_value"] = initial
    out = tmp_path / "flag.yaml"
    out.write_text(yaml.safe_dump(d))
    p = import_host(out)
    assert all(s.host_init for s in p.semaphores)
    if host_init:
        return p
    return attrs.evolve(p, semaphores=tuple(attrs.evolve(s, host_init=False) for s in p.semaphores))


def test_flag_from_valid_is_refuted_by_a_run_from_launch(tmp_path: Path) -> None:
    p = _flag(tmp_path, 1)
    by_name = {r.name: r for r in check(p).results}
    for w in WORDS:
        race = by_name[f"{R.SEM_SET_RACE}:{w}"]
        assert race.verdict == Verdict.REFUTED, race
        assert f"{R.SEM_PROTOCOL}:{w}" not in by_name
        assert race.counterexample is not None
        v = race.counterexample["replay"]["violation"]
        # at the receiver's reset of its own word (receiver.cpp:8, noc_semaphore_set(flag, INVALID))
        assert (v["rule"], v["position"]["engine"], v["position"]["path"]) == (
            R.SEM_SET_RACE, f"({w[-4]},0).reader", [1])
        # the gate's warm run re-establishes it from the program and the interpreter alone
        again = replay_refutation(p, race)
        assert again is not None
        assert again.verdict == Verdict.REFUTED
        # whatever the word ends at, the host writes VALID into it at the next launch
        assert by_name[f"{R.BALANCE_SEM}:{w}"].verdict == Verdict.PROVED
    # Every run ends: the runs' set races are another obligation's rule, never a deadlock.
    dl = [r for r in by_name.values() if r.family == R.DEADLOCK]
    assert [r.verdict for r in dl] == [Verdict.FAILED]


def test_an_end_no_host_resets_is_refuted_by_a_run_from_launch(tmp_path: Path) -> None:
    p = _flag(tmp_path, 1, host_init=False)
    by_name = {r.name: r for r in check(p).results}
    for w in WORDS:
        bal = by_name[f"{R.BALANCE_SEM}:{w}"]
        assert bal.verdict == Verdict.REFUTED, bal
        assert bal.counterexample is not None
        assert bal.counterexample["replay"]["violation"]["subject"]["text"] == w
        again = replay_refutation(p, bal)
        assert again is not None
        assert again.verdict == Verdict.REFUTED


def test_a_violation_of_another_subject_or_rule_refutes_nothing(tmp_path: Path) -> None:
    p = _flag(tmp_path, 1, host_init=False)
    a = analyse(p)
    # a run in which (1,0) alone loses the flag: its violations are all about sem0@(1,0)
    run = next(r for seed in range(32) if (r := simulate(p, seed=seed)).violations
               and all(v.position.engine == "(1,0).reader" for v in r.violations))
    rules = {v.rule for v in run.violations}
    assert rules == {R.SEM_SET_RACE, R.BALANCE_SEM}
    for kind in (R.SEM_PROTOCOL, R.BALANCE_SEM):
        mine = sought(a, Result(R.Family.SEMAPHORE.value, f"{kind}:sem0@(1,0)", Verdict.FAILED, "?"))
        other = sought(a, Result(R.Family.SEMAPHORE.value, f"{kind}:sem0@(2,0)", Verdict.FAILED, "?"))
        assert mine is not None
        assert other is not None
        assert any(v.rule in mine.rules and mine.at(v) for v in run.violations)
        assert not any(v.rule in other.rules and other.at(v) for v in run.violations)
    # a word's protocol is its exact counting: an unbalanced end is balance-sem's, not the protocol's
    proto = sought(a, Result(R.Family.SEMAPHORE.value, f"{R.SEM_PROTOCOL}:sem0@(1,0)", Verdict.FAILED, "?"))
    assert proto is not None
    assert R.BALANCE_SEM not in proto.rules


def test_runs_never_prove_nor_touch_a_decided_result(tmp_path: Path) -> None:
    p = _flag(tmp_path, 1)
    a = analyse(p)
    kept = [Result(R.Family.BALANCE.value, f"{R.BALANCE_SEM}:sem0@(1,0)", Verdict.PROVED, "given"),
            Result(R.Family.DEADLOCK.value, "deadlock:(0,0).writer+2", Verdict.FAILED, "given"),
            Result(R.BUDGET, f"{R.BUDGET}:deadlock", Verdict.FAILED, "given")]
    assert refute_by_runs(a, kept) == kept


def test_the_flag_from_invalid_keeps_its_verdicts(tmp_path: Path) -> None:
    """From INVALID (the shipped host) every run is clean: nothing is refuted, nothing failed becomes proved."""
    report = check(_flag(tmp_path, 0))
    assert not [r for r in report.results if r.verdict == Verdict.REFUTED]


def test_no_run_is_made_once_every_result_asked_is_refuted(tmp_path: Path) -> None:
    """The results are asked together, one run at a time: the round-robin run shows both words' lost flag, so no
    seeded run and no search is made."""
    p = _flag(tmp_path, 1)
    a = analyse(p)
    asked = [Result(R.Family.SEMAPHORE.value, f"{R.SEM_PROTOCOL}:{w}", Verdict.FAILED, "?") for w in WORDS]
    replay._RUNS.clear()
    replay._EXPLORED.clear()
    got = refute_by_runs(a, asked)
    assert [(r.name, r.verdict) for r in got] == [(f"{R.SEM_SET_RACE}:{w}", Verdict.REFUTED) for w in WORDS]
    assert [r.counterexample["replay"]["replayed_by"] for r in got if r.counterexample] == ["round-robin run"] * 2
    assert [(seed, hold) for (pid, _, seed, hold) in replay._RUNS if pid == id(p)] == [(None, False)]
    assert not replay._EXPLORED


def test_the_search_is_capped_by_the_programs_size_whatever_was_searched_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The explorer is asked within ``explore_states`` (work fixed before the search, not a cap every program runs
    to); a larger search made before (the deadlock family's) is read within that cap, so the answer does not
    depend on what was searched already. examples/broken/p_flag_source_set_by_compute.json (31 ops) deadlocks
    after 9,506 states of the search (work 294,686). The runs from launch are left out (the departures-last one hangs
    it too): the search alone is asked."""
    p = load_program(Path(__file__).resolve().parent.parent / "examples" / "broken" / "p_flag_source_set_by_compute.json")
    a = analyse(p)
    asked = [Result(R.Family.DEADLOCK.value, "deadlock:(0,0).compute+3", Verdict.FAILED, "?")]
    assert sought(a, asked[0]) is not None
    monkeypatch.setattr(witness, "launch_runs", lambda _p: iter(()))
    for work, turned in ((31 * 9506, Verdict.REFUTED), (31 * 9505, Verdict.FAILED)):
        monkeypatch.setattr(witness, "EXPLORE_WORK", work)
        for larger_before in (False, True):
            replay._RUNS.clear()
            replay._EXPLORED.clear()
            if larger_before:
                assert replay.explored(p, None).states > 9506
            (got,) = refute_by_runs(a, asked)
            assert got.verdict == turned, (work, larger_before)
            if turned == Verdict.REFUTED:
                assert got.counterexample is not None
                assert got.counterexample["replayed_by"] == "explicit-state search"
                assert replay.replay_schedule(p, got.counterexample) is not None
            if not larger_before:
                assert [x.visited for x in replay._EXPLORED.values()] == [work // 31]
