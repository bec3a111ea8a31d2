"""The CLI on good input: human and JSON reports, SARIF, exit codes, certificates, simulate, validate, schema.

The checker and the simulator are replaced by fakes (installed in ``sys.modules``) so these tests pin the CLI's
own behaviour; two tests run the real interpreter on a tiny program.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from verispatial.certify.certificate import TEMPLATED_VERSION, check_certificate_shape
from verispatial.certify.report import Report, Result, Verdict
from verispatial.cli import main
from verispatial.ir.serialize import schema
from verispatial.report import progress as progress_module
from verispatial.report.sarif import SARIF_SCHEMA
from verispatial.report.text import counterexample_lines, render_value

HERE = Path(__file__).parent
VALID = str(HERE / "badinput" / "small_valid.json")

DEADLOCK_CEX: dict[str, Any] = {
    "kind": "deadlock",
    "summary": "2 engines stuck",
    "trips": {"t": 3},
    "stuck": [{"engine": "(0,0).reader", "op": "reserve(b0, 1)", "iteration": {"i": 2}},
              {"engine": "(0,0).compute", "op": "wait(b0, 1)", "iteration": {"j": 0}}],
    "counters": {"b0": {"pushed": 2, "popped": 0}},
    "path": [0, 1],
}

MIXED = Report(
    program="small",
    target="wormhole_b0",
    results=(
        Result("circular-buffer", "cb-reserve-capacity", Verdict.PROVED, "ok", seconds=0.25),
        Result("circular-buffer", "cb-push-covered", Verdict.PROVED, "ok", seconds=0.5),
        Result("deadlock", "section-0", Verdict.REFUTED, "a reachable state blocks every engine", DEADLOCK_CEX, 1.0),
        Result("memory", "site-(0,0)", Verdict.FAILED, "unknown (rlimit 5000000 exhausted)", seconds=2.0),
        Result("bounds", "x", Verdict.ERROR, "encoder has no rule for op frob", seconds=0.0),
    ),
    seconds=3.75,
)

# The counterexample's texts name the program's buffers (c_0), as explain does; its keys stay as the checker wrote them.
MIXED_TEXT = """\
program small  target wormhole_b0  engines 2  ops 8
  circular-buffer     2 proved    0 refuted    0 failed-to-prove    0 error      0.75 s
  bounds              0 proved    0 refuted    0 failed-to-prove    1 error      0.00 s
  memory              0 proved    0 refuted    1 failed-to-prove    0 error      2.00 s
  deadlock            0 proved    1 refuted    0 failed-to-prove    0 error      1.00 s
refuted deadlock/section-0: a reachable state blocks every engine
    2 engines stuck
    kind: deadlock
    trips:
      t: 3
    stuck:
      - engine: (0,0).reader
        op: reserve(c_0, 1)
        iteration:
          i: 2
      - engine: (0,0).compute
        op: wait(c_0, 1)
        iteration:
          j: 0
    counters:
      b0:
        pushed: 2
        popped: 0
    path: [0, 1]
failed-to-prove memory/site-(0,0): unknown (rlimit 5000000 exhausted)
error bounds/x: encoder has no rule for op frob
verdict: refuted (2 proved, 1 refuted, 1 failed-to-prove, 1 error of 5 obligations in 3.75 s; 1 finding with 0 \
consequences, 1 other failed-to-prove)
"""


def only(*verdicts: Verdict) -> Report:
    return Report("small", "wormhole_b0",
                  tuple(Result("deadlock", f"o{i}", v, "why") for i, v in enumerate(verdicts)), 0.5)


class Fake:
    """A fake checker, certificate module and simulator that record their calls."""

    def __init__(self) -> None:
        self.report: Report = only(Verdict.PROVED)
        self.certify_calls: list[dict[str, Any]] = []
        self.derived: dict[str, Any] = {"format": "verispatial.certificate", "places": []}
        self.sim: Any = None
        self.simulate_calls: list[dict[str, Any]] = []
        self.progress_messages = ["deadlock", "memory"]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Fake:
    f = Fake()
    checker = types.ModuleType("verispatial.driver.run")
    certificate = types.ModuleType("verispatial.certify.certificate")
    interp = types.ModuleType("verispatial.petri.interp")

    def certify(program: Any, certificate: Any = None, *, jobs: int = 1, progress: Any = None,
                cache: Any = None) -> Report:
        f.certify_calls.append({"program": program.name, "certificate": certificate, "jobs": jobs})
        for m in f.progress_messages:
            progress(m)
        return f.report

    def derive_certificate(program: Any, report: Any = None) -> dict[str, Any]:
        return {**f.derived, "program": program.name}

    def simulate(program: Any, trips: Any = None, seed: Any = None) -> Any:
        f.simulate_calls.append({"program": program.name, "trips": trips, "seed": seed})
        return f.sim

    checker.certify = certify  # type: ignore[attr-defined]
    certificate.derive_certificate = derive_certificate  # type: ignore[attr-defined]
    # The input check is the real one: only the checker's work is faked.
    certificate.check_certificate_shape = check_certificate_shape  # type: ignore[attr-defined]
    certificate.TEMPLATED_VERSION = TEMPLATED_VERSION  # type: ignore[attr-defined]
    interp.simulate = simulate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "verispatial.driver.run", checker)
    monkeypatch.setitem(sys.modules, "verispatial.certify.certificate", certificate)
    monkeypatch.setitem(sys.modules, "verispatial.petri.interp", interp)
    return f


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


# ------------------------------------------------------------------------------------------- certify


def test_human_report(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.report = MIXED
    rc, out, err = run(capsys, ["certify", VALID])
    assert rc == 1
    assert out == MIXED_TEXT
    # stderr is not a terminal here: one plain progress line per step of the checker
    assert [line.split(" (")[0] for line in err.splitlines()] == [f"certify {VALID}: deadlock",
                                                                  f"certify {VALID}: memory"]


def test_arguments_reach_the_checker(fake: Fake, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cert = tmp_path / "c.json"
    doc = {"format": "verispatial.certificate", "version": 1, "program_sha256": "0" * 64, "places": [1]}
    cert.write_text(json.dumps(doc))
    rc, _out, _err = run(capsys, ["certify", VALID, "--certificate", str(cert), "--jobs", "3"])
    assert rc == 0, _err
    assert fake.certify_calls == [{"program": "small", "jobs": 3, "certificate": doc}]


def test_json_report_is_report_to_json_and_its_counts(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.report = MIXED
    rc, out, err = run(capsys, ["certify", VALID, "--json", "-q"])
    assert rc == 1
    # ... plus the counts of findings and of the failures to prove they explain (report/consequences.py)
    assert json.loads(out) == {**MIXED.to_json(),
                               "summary": {"findings": 1, "consequences": 0, "other_failed_to_prove": 1}}
    assert err == ""


@pytest.mark.parametrize(("verdicts", "code", "verdict_line"), [
    ((Verdict.PROVED, Verdict.PROVED), 0,
     "verdict: proved (2 proved, 0 refuted, 0 failed-to-prove, 0 error of 2 obligations in 0.50 s)"),
    ((Verdict.PROVED, Verdict.REFUTED, Verdict.FAILED), 1,
     "verdict: refuted (1 proved, 1 refuted, 1 failed-to-prove, 0 error of 3 obligations in 0.50 s; 1 finding with "
     "0 consequences, 1 other failed-to-prove)"),
    ((Verdict.PROVED, Verdict.FAILED), 3,
     "verdict: failed-to-prove (not accepted) (1 proved, 0 refuted, 1 failed-to-prove, 0 error of 2 obligations "
     "in 0.50 s)"),
    ((Verdict.FAILED, Verdict.ERROR), 4,
     "verdict: checker error (0 proved, 0 refuted, 1 failed-to-prove, 1 error of 2 obligations in 0.50 s)"),
], ids=["proved", "refuted", "failed", "error"])
def test_exit_code_is_the_reports(verdicts: tuple[Verdict, ...], code: int, verdict_line: str, fake: Fake,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    fake.report = only(*verdicts)
    rc, out, _err = run(capsys, ["certify", VALID])
    assert rc == code
    assert out.splitlines()[-1] == verdict_line


def test_sarif(fake: Fake, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)  # inside the repository's work tree: locations are relative to its root
    fake.report = MIXED
    out_path = tmp_path / "r.sarif"
    rc, _out, _err = run(capsys, ["certify", VALID, "--sarif", str(out_path)])
    assert rc == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sarif"]  # no temporary file left behind
    doc = json.loads(out_path.read_text())
    assert doc["version"] == "2.1.0"
    assert doc["$schema"] == SARIF_SCHEMA
    (run0,) = doc["runs"]
    assert run0["tool"]["driver"]["name"] == "verispatial"
    # One rule per rule kind (the obligation name before its first ':'), each result naming its obligation.
    assert [r["id"] for r in run0["tool"]["driver"]["rules"]] == ["section-0", "site-(0,0)", "x"]
    # The checker error is an error notification: the run failed (SARIF §3.20.21).
    (inv,) = run0["invocations"]
    assert (inv["executionSuccessful"], inv["exitCode"]) == (False, 1)
    assert [(n["level"], n["associatedRule"]) for n in inv["toolExecutionNotifications"]] == [
        ("error", {"id": "x", "index": 2})]
    got = [(r["ruleId"], r["ruleIndex"], r["level"], r["kind"], r["properties"]["verdict"],
            r["properties"]["obligation"]) for r in run0["results"]]
    assert got == [("section-0", 0, "error", "fail", "refuted", "section-0"),
                   ("site-(0,0)", 1, "none", "open", "failed-to-prove", "site-(0,0)"),
                   ("x", 2, "none", "open", "error", "x")]
    first = run0["results"][0]
    assert first["message"]["text"] == ("refuted: deadlock/section-0: a reachable state blocks every engine "
                                        "(2 engines stuck)")
    assert first["properties"]["counterexample"] == DEADLOCK_CEX
    loc = first["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "tests/badinput/small_valid.json"
    assert loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    # The first stuck engine, (0,0).reader, is the program's engine program 0.
    assert loc["logicalLocations"] == [{"fullyQualifiedName": "/programs/0", "kind": "element"}]
    text = Path(VALID).read_text().splitlines()
    line, col = loc["physicalLocation"]["region"]["startLine"], loc["physicalLocation"]["region"]["startColumn"]
    assert text[line - 1][col - 1] == "{"
    assert '"programs"' in "".join(text[:line])


def test_sarif_of_a_proved_program_has_no_results(fake: Fake, capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    out_path = tmp_path / "r.sarif"
    rc, _out, _err = run(capsys, ["certify", VALID, "--sarif", str(out_path)])
    assert rc == 0
    doc = json.loads(out_path.read_text())
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_replaces_an_existing_file(fake: Fake, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_path = tmp_path / "r.sarif"
    out_path.write_text("old")
    assert run(capsys, ["certify", VALID, "--sarif", str(out_path)])[0] == 0
    assert json.loads(out_path.read_text())["version"] == "2.1.0"


def test_certificate_written_only_when_everything_is_proved(fake: Fake, capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    out_path = tmp_path / "cert.json"
    fake.report = only(Verdict.PROVED, Verdict.FAILED)
    assert run(capsys, ["certify", VALID, "--write-certificate", str(out_path)])[0] == 3
    assert not out_path.exists()
    fake.report = only(Verdict.PROVED)
    assert run(capsys, ["certify", VALID, "--write-certificate", str(out_path)])[0] == 0
    assert json.loads(out_path.read_text()) == {"format": "verispatial.certificate", "places": [], "program": "small"}


def test_plain_progress_lines_when_stderr_is_not_a_terminal(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, ["certify", VALID])
    assert rc == 0
    lines = err.splitlines()
    assert len(lines) == 2
    assert all(re.fullmatch(rf"certify {re.escape(VALID)}: (deadlock|memory) \(\d+\.\d s\)", x) for x in lines)
    assert "deadlock" not in out.splitlines()[0]
    rc, out, err = run(capsys, ["certify", VALID, "-q"])
    assert err == ""


def test_progress_on_a_terminal_stderr(fake: Fake, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    real = progress_module.progress

    @contextlib.contextmanager
    def on_a_terminal(label: str, total: int | None = None, *, quiet: bool = False) -> Iterator[Any]:
        with real(label, total, quiet=quiet, stream=screen, terminal=True) as p:
            yield p

    monkeypatch.setattr(progress_module, "progress", on_a_terminal)
    rc, out, err = run(capsys, ["certify", VALID])
    assert rc == 0
    # A rich bar redraws in place: the messages were on screen; nothing went to the plain stderr.
    assert "memory" in screen.getvalue()
    assert f"certify {VALID}" in screen.getvalue()
    assert err == ""
    assert "certify" not in out


# ------------------------------------------------------------------------------------------- rendering


def test_counterexample_lines_skip_a_summary_equal_to_the_reason() -> None:
    assert counterexample_lines({"summary": "x", "a": 1}, reason="x") == ["    a: 1"]
    assert counterexample_lines({"summary": "x", "a": 1}, reason="y") == ["    x", "    a: 1"]


def test_render_value_shapes() -> None:
    assert render_value("k", [["i", 0], ["j", 1]], "") == ['k: [["i", 0], ["j", 1]]']
    assert render_value("k", {}, "") == ["k: {}"]
    assert render_value("k", None, "") == ["k: null"]
    assert render_value("k", [{"a": 1}, 2], "") == ["k:", "  - a: 1", "  - 2"]


# ------------------------------------------------------------------------------------------- simulate


class FakeSim:
    def __init__(self, status: str, violations: tuple[str, ...] = ()) -> None:
        self.status = status
        self.violations = violations

    def text(self) -> str:
        return f"small: {self.status}"

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "violations": list(self.violations)}


@pytest.mark.parametrize(("status", "violations", "code"), [
    ("terminated", (), 0),
    ("terminated", ("balance-cb",), 1),
    ("deadlock", (), 1),
    ("step-limit", (), 1),
])
def test_simulate_exit_code(status: str, violations: tuple[str, ...], code: int, fake: Fake,
                            capsys: pytest.CaptureFixture[str]) -> None:
    fake.sim = FakeSim(status, violations)
    rc, out, err = run(capsys, ["simulate", VALID, "--trip", "t=2", "--seed", "7"])
    assert rc == code
    assert out == f"small: {status}\n"
    assert err == ""
    assert fake.simulate_calls == [{"program": "small", "trips": {"t": 2}, "seed": 7}]


def test_simulate_json(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    fake.sim = FakeSim("deadlock")
    rc, out, _err = run(capsys, ["simulate", VALID, "--json"])
    assert rc == 1
    assert json.loads(out) == {"status": "deadlock", "violations": []}
    assert fake.simulate_calls == [{"program": "small", "trips": {}, "seed": None}]


@pytest.mark.parametrize(("trip", "steps_text"), [("t=4", "trips t=4"), ("t=0", "trips t=0")])
def test_simulate_with_the_real_interpreter(trip: str, steps_text: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, ["simulate", VALID, "--trip", trip])
    assert rc == 0
    assert err == ""
    first = out.splitlines()[0]
    assert first.startswith("small: terminated after ")
    assert first.endswith(f"({steps_text})")


def test_simulate_names_buffers_and_words_as_certify_does(capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's find: simulate said ``reserve(b0, 8) asks for 8 pages of b0`` where certify says ``c_0@(0,0)``;
    a seed certify reports replayed here under other names. The text names them (``report/names.py``); --json keeps
    the ids."""
    path = str(HERE.parent / "examples" / "broken" / "a_reserve_over_capacity.json")
    rc, out, err = run(capsys, ["simulate", path])
    assert (rc, err) == (1, "")
    assert "(0,0).reader at ops[0] reserve(c_0, 8): waits for space in c_0@(0,0)" in out, out
    assert "b0" not in out, out
    rc, out, _err = run(capsys, ["simulate", path, "--json"])
    assert "reserve(b0, 8)" in out


# ------------------------------------------------------------------------------------------- validate, schema


def test_validate_a_valid_program(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, ["validate", VALID])
    assert rc == 0
    assert out == f"{VALID}: valid: program small, target wormhole_b0, 2 engine programs, 8 ops\n"
    assert err == ""


def test_validate_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _err = run(capsys, ["validate", VALID, "--json"])
    assert rc == 0
    assert json.loads(out) == {"file": VALID, "valid": True, "program": "small", "target": "wormhole_b0",
                               "engines": 2, "ops": 8, "violations": []}


def test_schema_command_prints_the_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _err = run(capsys, ["schema"])
    assert rc == 0
    assert json.loads(out) == schema()


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _err = run(capsys, ["--help"])
    assert rc == 0
    commands = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert commands == ["certify", "compile", "compose", "explain", "export", "gate", "import", "schema", "simulate",
                        "throughput", "upgrade", "validate"]
    rc, out, _err = run(capsys, ["--version"])
    assert rc == 0
    assert out == "verispatial, version 0.1.0\n"


def test_console_script_and_module_entry_points() -> None:
    (ep,) = [e for e in metadata.entry_points(group="console_scripts") if e.name == "verispatial"]
    assert ep.value == "verispatial.cli:main"
    assert ep.load() is main
    proc = subprocess.run([sys.executable, "-m", "verispatial", "validate", VALID], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout == f"{VALID}: valid: program small, target wormhole_b0, 2 engine programs, 8 ops\n"


def test_module_entry_point_under_a_profiler_writes_its_profile(tmp_path: Path) -> None:
    """``python -m verispatial`` skips the interpreter's teardown (``os._exit``) but not under a profiler: cProfile
    writes its file at exit (cProfile itself drops the exit code: its ``runctx`` swallows ``SystemExit``)."""
    out = tmp_path / "run.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "verispatial", "validate", VALID],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
    assert "validate" in out.read_bytes().decode("latin-1")  # the profile holds the command's calls


def test_certificate_derivation_failure_writes_no_file(fake: Fake, capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def derive_certificate(program: Any, report: Any = None) -> dict[str, Any]:
        raise ValueError("place 7 has no producer")

    broken = types.ModuleType("verispatial.certify.certificate")
    broken.derive_certificate = derive_certificate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "verispatial.certify.certificate", broken)
    rc, out, err = run(capsys, ["certify", VALID, "--sarif", str(tmp_path / "r.sarif"),
                                "--write-certificate", str(tmp_path / "c.json"), "-q"])
    assert rc == 4
    assert err == "verispatial: checker error: deriving the certificate: ValueError: place 7 has no producer\n"
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_failures_to_prove_with_one_reason_are_listed_under_it_once() -> None:
    """A num_dests mismatch leaves 17 obligations failed-to-prove, each printing the same long reason: the report
    prints that reason once with the obligations under it; a reason of one obligation stays on its line."""
    from verispatial.report.text import report_lines

    why = "(0,0).reader's McastSend states num_dests 1 for group 0's 2 destinations"
    rep = Report("p", "wormhole_b0", (
        Result("deadlock", "deadlock:(0,0).reader", Verdict.REFUTED, "deadlock after 9 steps"),
        Result("balance", "balance-cb:b0", Verdict.FAILED, why),
        Result("semaphore", "sem-exact:sem0@(0,0)", Verdict.FAILED, "solver: unknown"),
        Result("balance", "balance-cb:b1", Verdict.FAILED, why),
        Result("async-noc", "async-source-reuse", Verdict.FAILED, why)))
    lines = [t for t, _ in report_lines(rep, (1, 1))]
    start = lines.index(f"failed-to-prove (3 obligations): {why}")
    assert lines[start + 1:start + 4] == ["    balance/balance-cb:b0", "    balance/balance-cb:b1",
                                          "    async-noc/async-source-reuse"]
    assert "failed-to-prove semaphore/sem-exact:sem0@(0,0): solver: unknown" in lines
    assert sum(why in t for t in lines) == 1
