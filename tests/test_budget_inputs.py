"""No input outlasts its budget (issue 19, goal 5): deep constant loop nests, loops of 2**31 iterations without a
blocking op, loops of 10**7 reads and 100,000-op straight-line programs end under ``certify --budget 5`` with their
verdict or a failed-to-prove naming the budget (never a wrong verdict); the loops that walked them op by op are
derived, and each checks the budget; a bad-input report on a large file names the offending op at once.

Wall times are asserted only as a generous bound that the fixed code meets many times over (the old code ran past
300 s on these inputs); the figures themselves are measured in ``benchmarks/bench_budget.py``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import budget_programs as bp
import jsonschema
import pytest

from verispatial import budget
from verispatial.certify import rules, schedule
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.certify.structure import engine_views
from verispatial.cli import main
from verispatial.driver.search import propose_deadlock
from verispatial.families.deadlock.encoding import check_deadlock
from verispatial.ir.serialize import (
    ParseError,
    _cut,
    _program_validator,
    check_program_schema,
    loads,
    schema,
)

#: A bound no run of these programs comes near (they end in seconds), generous for a loaded 2-core CI machine.
ENDS_WITHIN = 90.0


def _certify(tmp_path: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    t0 = time.perf_counter()
    rc = main(["certify", "--no-cache", "-q", "--json", "--budget", "5", str(path)])
    assert time.perf_counter() - t0 < ENDS_WITHIN
    return rc, json.loads(capsys.readouterr().out)


def _budget_cut(report: dict[str, Any]) -> bool:
    """Whether the report says the budget was spent: failed-to-prove results in the ``budget`` family only."""
    cut = [r for r in report["results"] if r["family"] == "budget"]
    assert all(r["verdict"] == "failed-to-prove" and "time budget of 5 s was spent" in r["reason"] for r in cut)
    return bool(cut)


# The expected verdict of each program (exit code), or the budget's failed-to-prove (exit 3).
CASES: list[tuple[str, Any, int]] = [
    ("nested_32_two_iteration_loops", lambda: bp.nested(32), 0),
    ("reads_2_31", lambda: bp.reads(2**31), 1),
    ("reads_10_7", lambda: bp.reads(10**7), 1),
    ("computes_2_31", lambda: bp.computes(2**31), 0),
    ("straight_100k", lambda: bp.straight(100_000), 0),
    ("straight_100k_hang", lambda: bp.straight(100_000, hang=True), 1),
]


@pytest.mark.parametrize(("name", "make", "expected"), CASES, ids=[c[0] for c in CASES])
def test_ends_under_its_budget_with_its_verdict_or_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              name: str, make: Any, expected: int) -> None:
    rc, report = _certify(tmp_path, make(), capsys)
    assert report["exit_code"] == rc
    if _budget_cut(report):
        assert rc in (3, expected), name
        assert rc != 0, name  # a budget result is never a pass
    else:
        assert rc == expected, (name, [(r["name"], r["verdict"]) for r in report["results"] if r["verdict"] != "proved"])
    if expected:  # a broken program is never proved, budget or not
        assert rc != 0
    if rc == 1:  # what is refuted is refuted for the reason built in, replayed
        refuted = [r for r in report["results"] if r["verdict"] == "refuted"]
        want = "cb-write-unreserved" if name.startswith("reads") else "deadlock"
        assert refuted, report
        assert all(want in r["name"] for r in refuted), [r["name"] for r in refuted]


def test_nested_constant_loops_are_walked_once_per_state() -> None:
    """The rules' abstract interpretation of 32 nested two-iteration loops runs each body once per distinct state
    (it ran the innermost body 2**32 times), and still finds a fault at the bottom of the nest."""
    p = loads(json.dumps(bp.nested(32)))
    views = engine_views(p)
    t0 = time.perf_counter()
    facts = rules.all_engine_facts(p, views)
    assert time.perf_counter() - t0 < ENDS_WITHIN
    assert all(not f.findings for f in facts.values())
    broken = bp.nested(32)
    inner = broken["programs"][1]["ops"]
    while inner[0]["op"] == "loop":
        inner = inner[0]["body"]
    inner[:] = [{"op": "pop", "buf": 0, "pages": 1}]  # pops with no wait
    p = loads(json.dumps(broken))
    got = rules.all_engine_facts(p, engine_views(p))
    assert {f.rule for fs in got.values() for f in fs.findings} == {"cb-pop-uncovered"}


def test_a_loop_around_no_counter_op_is_not_walked() -> None:
    """The schedule witness's occurrence stream skips a loop of 2**31 reads (no R leaf inside: nothing to yield),
    and a loop whose middle iterations yield nothing jumps to its last."""
    p = loads(json.dumps(bp.reads(2**31)))
    views = engine_views(p)
    reader = views["(0,0).reader"]
    leaves = {lf.path: lf for lf in schedule.r_leaves(reader)}
    t0 = time.perf_counter()
    got = [(lf.path, it) for lf, it in schedule._stream(reader, leaves, {})]
    assert time.perf_counter() - t0 < ENDS_WITHIN
    assert got == [((0,), ()), ((2,), ())]
    # Every occurrence of every leaf (none wanted skipped) of a loop with an If in its last iteration only.
    doc = bp.reads(2**31)
    doc["programs"][0]["ops"][1]["body"].append({"op": "if", "var": "i", "when": "last", "body": [bp.BARRIER]})
    ep = loads(json.dumps(doc)).programs[0]
    occ = schedule._occurrences(ep.ops, {}, (), (), wanted=frozenset({(1,), (1, 2), (1, 2, 0)}))
    assert list(occ) == [((1, 2, 0), (2**31 - 1,))]


def test_a_straight_line_component_is_proved_by_its_run() -> None:
    """A component of more than ``RUN_PROOF_LEAVES`` counter ops whose loops read no trip is proved deadlock-free by
    the as-soon-as-possible run executing every occurrence; a run that gets stuck proves nothing, and the
    interpreter driven to where it stuck refutes."""
    p = loads(json.dumps(bp.straight(36_000)))
    a = analyse(p)
    comp = next(iter(a.components))
    got = schedule.by_run(a, comp)
    assert got is not None
    assert got.proved
    assert got.exhaustive
    assert "24000 counter occurrences" in got.reason
    p = loads(json.dumps(bp.straight(36_000, hang=True)))
    a = analyse(p)
    stuck = schedule.by_run(a, next(iter(a.components)))
    assert stuck is not None
    assert not stuck.proved
    assert stuck.candidate is not None  # where it stuck: compute at its last wait, the reader finished
    compute = stuck.candidate.at["(0,0).compute"][0]
    assert compute is not None
    assert compute.path == (12_000,)
    assert stuck.candidate.at["(0,0).reader"] == (None, ())
    (dl,) = check_deadlock(a, {b.id for b in p.buffers}, search=propose_deadlock)
    assert dl.verdict == Verdict.REFUTED  # the interpreter driven there replays the deadlock
    assert "(0,0).compute at ops[12000] wait(b0, 1)" in dl.reason


def test_a_trip_loop_is_never_decided_by_one_run() -> None:
    doc = bp.straight(6)
    doc["trips"] = [{"name": "t", "max": 4}]
    doc["programs"][0]["ops"] = [{"op": "loop", "var": "i", "count": "t", "body": doc["programs"][0]["ops"]}]
    doc["programs"][1]["ops"] = [{"op": "loop", "var": "j", "count": "t", "body": doc["programs"][1]["ops"]}]
    a = analyse(loads(json.dumps(doc)))
    assert schedule.by_run(a, next(iter(a.components))) is None


@pytest.mark.parametrize("where", ["rules", "occurrences", "run"])
def test_each_long_loop_checks_the_budget(where: str) -> None:
    """Past the deadline each of these loops raises ``BudgetExhausted`` at its next check (the checker turns it into
    failed-to-prove results of the ``budget`` family)."""
    p = loads(json.dumps(bp.straight(6_000) if where == "run" else bp.nested(8)))
    views = engine_views(p)
    a = analyse(p) if where == "run" else None

    def walk() -> object:
        if where == "rules":
            return rules.all_engine_facts(p, views)
        if where == "occurrences":
            v = views["(0,0).reader"]
            return list(schedule._stream(v, {lf.path: lf for lf in schedule.r_leaves(v)}, {}))
        assert a is not None
        return schedule.by_run(a, next(iter(a.components)))

    assert walk()  # within no budget it ends with its answer
    with budget.deadline(1e-9):
        time.sleep(0.01)
        with pytest.raises(budget.BudgetExhausted):
            walk()


# ------------------------------------------------------------------------------------------ bad input, large files


def _reference_message(d: dict[str, Any]) -> tuple[str, str]:
    """The error the reference validator words from the whole document (path, message)."""
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema()).iter_errors(d))
    assert err is not None
    path = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in err.absolute_path).lstrip(".")
    return path, str(err.message)


def _mutants() -> list[tuple[str, dict[str, Any]]]:
    base = bp.straight(600)
    out = [("misspelt_last_op", bp.misspelt(base))]
    d = json.loads(json.dumps(base))
    d["programs"][1]["ops"][57]["pages"] = 0
    out.append(("pages_0_in_the_middle", d))
    d = json.loads(json.dumps(base))
    d["programs"][0]["ops"][3]["buf"] = "zero"
    d["programs"][1]["ops"][150] = {"op": "wait", "buf": 0}
    out.append(("two_errors_in_two_lists", d))
    d = json.loads(json.dumps(base))
    d["programs"][0]["ops"][41]["addr"]["terms"] = [{"var": "i", "coef": 1}] * 20 + [{"var": 3, "coef": 1}]
    out.append(("deep_in_a_long_list", d))
    d = json.loads(json.dumps(base))
    d["sections"] = []
    d["programs"][0]["ops"][99]["op"] = "pushh"
    out.append(("an_empty_list_and_an_op", d))
    d = json.loads(json.dumps(base))
    for op in d["programs"][0]["ops"][::10]:
        op["op"] += "x"
    out.append(("every_tenth_op_misspelt", d))
    d = json.loads(json.dumps(base))
    del d["programs"][0]["ops"][4]["buf"]  # an error at the op itself: shallower than a misspelt tag's
    for op in d["programs"][0]["ops"][100::7]:
        op["op"] += "x"
    out.append(("a_shallow_error_before_deep_ones", d))
    d = json.loads(json.dumps(base))
    for op in d["programs"][0]["ops"][:300:7]:
        op["op"] += "x"
    del d["programs"][0]["ops"][352]["buf"]
    d["programs"][1]["ops"][10]["pages"] = -1
    out.append(("deep_errors_before_a_shallow_one", d))
    return out


@pytest.mark.parametrize(("name", "doc"), _mutants(), ids=[m[0] for m in _mutants()])
def test_a_large_file_gets_the_message_of_the_whole_document(name: str, doc: dict[str, Any]) -> None:
    """The message is worded from the document cut to the parts in error, and is the one the reference validator
    words from the whole document, with the original indices."""
    with pytest.raises(ParseError) as got:
        check_program_schema(doc)
    path, message = _reference_message(doc)
    assert got.value.field == path, name
    assert message[:150] in str(got.value), name


def test_the_cut_keeps_a_handful_of_elements_whatever_the_number_of_errors() -> None:
    """With every op of a 3,000-op program misspelt, the reference validator is given a few ops per list to word the
    message from (the last of each depth of error), not 3,000: wording bad input costs what validating it costs."""
    d = json.loads(json.dumps(bp.straight(3_000)))  # a copy: the generator shares its op objects
    for ep in d["programs"]:
        for op in ep["ops"]:
            op["op"] += "x"
    at = {tuple(e.instance_path) for e in _program_validator().iter_errors(d)}
    assert len(at) >= 3_000
    where: dict[int, list[int]] = {}
    small = _cut(d, at, _program_validator(), where)
    # the last op of the last program: every error is a misspelt tag, equally deep
    assert [len(ep["ops"]) for ep in small["programs"]] == [1]
    assert (where[id(small["programs"])], where[id(small["programs"][0]["ops"])]) == ([1], [999])
    with pytest.raises(ParseError) as got:
        check_program_schema(d)
    path, message = _reference_message(d)
    assert (got.value.field, message[:150] in str(got.value)) == (path, True)


def test_a_misspelt_op_in_100k_ops_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bp.misspelt(bp.straight(100_000))))
    t0 = time.perf_counter()
    rc = main(["validate", str(path)])
    assert time.perf_counter() - t0 < ENDS_WITHIN  # it took 64 s: the reference validator walked every op
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"verispatial: error: {path}: programs[0].ops[66663].op: 'reserv' is not one of")
    assert len(err.splitlines()) == 1
