"""Failed-to-prove obligations refuted by the interpreter's runs from launch (certify/witness.py): a run that breaks
the obligation's own rule at its own subject refutes it, with that run as its counterexample; a run breaking
another obligation's rule, or the same rule at another subject, refutes nothing; nothing is ever proved this way.

The input (found by a new user): tests/data/ttmetal/flag/ with the semaphore's ``initial_value: 1`` (= VALID). Each
receiver's wait passes at once and its reset may overwrite the sender's flag multicast as it lands (``sem-set-race``)
or land before it (the word ends at 0, not 1: ``balance-sem``); no run deadlocks. The checker's protocols do not
cover the word (a reset before any wait from an initial value other than its resets), so the solver decides none
of it: before, ``sem-protocol``, ``balance-sem`` and the deadlock were all failed-to-prove."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.certify.checker import check, replay_refutation  # noqa: E402
from verispatial.certify.reach import analyse  # noqa: E402
from verispatial.certify.report import Result, Verdict  # noqa: E402
from verispatial.certify.witness import refute_by_runs, sought  # noqa: E402
from verispatial.frontends.ttmetal import import_host  # noqa: E402
from verispatial.ir import rules as R  # noqa: E402
from verispatial.ir.program import Program  # noqa: E402
from verispatial.petri.interp import simulate  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"
WORDS = ("sem0@(1,0)", "sem0@(2,0)")


def _flag(tmp_path: Path, initial: int) -> Program:
    """tests/data/ttmetal/flag/host.yaml with the flag semaphore's initial value changed."""
    src = DATA / "flag" / "host.yaml"
    d = yaml.safe_load(src.read_text())
    d["kernel_root"] = str((src.parent / d["kernel_root"]).resolve())
    d["semaphores"][0]["initial_value"] = initial
    out = tmp_path / "flag.yaml"
    out.write_text(yaml.safe_dump(d))
    return import_host(out)


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
        bal = by_name[f"{R.BALANCE_SEM}:{w}"]
        assert bal.verdict == Verdict.REFUTED, bal
        assert bal.counterexample is not None
        assert bal.counterexample["replay"]["violation"]["subject"]["text"] == w
        # the gate's warm run re-establishes each from the program and the interpreter alone
        for r in (race, bal):
            again = replay_refutation(p, r)
            assert again is not None, r.name
            assert again.verdict == Verdict.REFUTED, r.name
    # Every run ends: the runs' set races and unbalanced words are other obligations' rules, never a deadlock.
    dl = [r for r in by_name.values() if r.family == R.DEADLOCK]
    assert [r.verdict for r in dl] == [Verdict.FAILED]


def test_a_violation_of_another_subject_or_rule_refutes_nothing(tmp_path: Path) -> None:
    p = _flag(tmp_path, 1)
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
