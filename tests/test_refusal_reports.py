"""A front end's refusal as ``certify`` reports it: ``--json`` gives each slot its own name (the construct, the user's
file and line, the rule, the one line), and ``--sarif`` / ``--junit`` write one result / one failing case at the
user's source line (exit 2 all the same). (A new user's find: ``--json`` put the construct in ``field`` and the source
line in ``rule``; ``--sarif`` and ``--junit`` wrote nothing, so a CI upload showed no refusal.)

Which inputs get a report file: a refusal names its source line, so it gets one; bad input without a location in the
user's source (a malformed program.json, a bad option, a host description that does not read) writes nothing.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from test_report_ci import JUNIT_XSD, ROOT, resolve_uri, valid_sarif

from verispatial.cli import main

HOST = "tests/data/ttmetal/refuse/host.yaml"  # its kernel while.cpp spins on a word another core writes (line 6)
KERNEL = "tests/data/ttmetal/refuse/while.cpp"
TTLANG = "tests/data/ttlang/refused_spin.py"  # a while loop at line 18

TTMETAL_LINE = (f"{KERNEL}:6: while loop (*flag == 0: *flag == 0: a value read from L1: *flag): not read by the "
                "tt-metal front end: while (*flag == 0) {  // a word another core writes: not a value the reading "
                "follows")
TTLANG_LINE = f"{TTLANG}:18: while: a while loop's count is not known statically: use for ... in range(n)"

CASES = [
    pytest.param(HOST, {
        "kind": "ttmetal-refused", "file": KERNEL, "line": 6, "field": "", "construct": "while loop",
        "detail": "*flag == 0: *flag == 0: a value read from L1: *flag", "rule": "not read by the tt-metal front end",
        "text": "while (*flag == 0) {  // a word another core writes: not a value the reading follows",
        "called_at": None, "message": TTMETAL_LINE, "violations": []}, id="ttmetal"),
    pytest.param(TTLANG, {
        "kind": "ttlang-refused", "file": TTLANG, "line": 18, "field": "", "construct": "while", "detail": "",
        "rule": "a while loop's count is not known statically: use for ... in range(n)", "text": "",
        "called_at": None, "message": TTLANG_LINE, "violations": []}, id="ttlang"),
]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(("source", "error"), CASES)
def test_json_names_each_slot_of_a_refusal(source: str, error: dict[str, Any],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", source, "--json", "-q"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"exit_code": 2, "error": error}
    assert err == f"verispatial: error: {error['message']}\n"  # the one line, its file as the user opens it


@pytest.mark.parametrize(("source", "error"), CASES)
def test_sarif_and_junit_hold_the_refusal_at_the_users_line(source: str, error: dict[str, Any], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    assert main(["certify", source, "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 2
    assert capsys.readouterr().err == f"verispatial: error: {error['message']}\n"
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    run = doc["runs"][0]
    assert run["invocations"] == [{"executionSuccessful": False, "exitCode": 2}]
    [result] = run["results"]
    assert result["ruleId"] == error["kind"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [error["kind"]]
    assert (result["level"], result["kind"]) == ("error", "fail")
    assert result["message"]["text"] == error["message"]
    [loc] = result["locations"]
    phys = loc["physicalLocation"]
    assert resolve_uri(run, phys["artifactLocation"], ROOT) == ROOT / error["file"]
    assert phys["region"]["startLine"] == error["line"]
    assert result["properties"]["construct"] == error["construct"]
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    suites = ET.parse(junit).getroot()
    assert (suites.get("tests"), suites.get("failures")) == ("1", "1")
    [case] = suites.iter("testcase")
    assert (case.get("classname"), case.get("name")) == (source, error["kind"])
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == error["message"]


def test_bad_input_without_a_source_line_writes_no_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing written half-way: a program.json that does not read names no line of the user's source, so neither
    report is written (the one line on stderr says what is wrong)."""
    bad = tmp_path / "p.json"
    bad.write_text("{", encoding="utf-8")
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    assert main(["certify", str(bad), "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not sarif.exists()
    assert not junit.exists()
