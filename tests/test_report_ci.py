"""CI outputs of ``certify`` and ``gate``: SARIF 2.1.0 validated against the official schema
(``tests/data/sarif-schema-2.1.0.json``, source in ``tests/data/README.md``), located by the JSON pointer of each op,
one rule per rule kind; JUnit XML with one test case per program and family."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from verispatial.cli import main
from verispatial.report.sarif import SARIF_SCHEMA, locate, rule_kind

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "examples" / "broken"
FAST_BROKEN = [BROKEN / f"{n}.json" for n in ("a_reserve_over_capacity", "b_ring_straddle", "e_read_no_barrier",
                                             "f_memory_overlap")]
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def valid_sarif(doc: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(doc)


def resolve(doc: Any, pointer: str) -> Any:
    """RFC 6901."""
    if pointer in ("", "/"):
        return doc
    for tok in pointer.split("/")[1:]:
        tok = tok.replace("~1", "/").replace("~0", "~")
        doc = doc[int(tok)] if isinstance(doc, list) else doc[tok]
    return doc


def test_the_schema_is_the_official_one() -> None:
    assert SCHEMA["id"] == SARIF_SCHEMA
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-04/schema#"


def test_certify_sarif_is_valid_and_locates_every_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.sarif"
    assert main(["certify", *map(str, FAST_BROKEN), "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert {"cb-capacity", "cb-straddle", "deadlock", "async-read-publish", "memory-disjoint"} <= set(ids)
    assert [a["location"]["uri"] for a in run["artifacts"]] == [p.as_posix() for p in FAST_BROKEN]
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"] == rule_kind(res["properties"]["obligation"])
        loc = res["locations"][0]
        uri = loc["physicalLocation"]["artifactLocation"]["uri"]
        program = json.loads(Path(uri).read_text())
        pointer = loc["logicalLocations"][0]["fullyQualifiedName"]
        assert pointer == (res["properties"]["jsonPointer"] or "/")
        target = resolve(program, pointer)
        assert isinstance(target, dict)
        line = loc["physicalLocation"]["region"]["startLine"]
        col = loc["physicalLocation"]["region"]["startColumn"]
        assert Path(uri).read_text().splitlines()[line - 1][col - 1] in "{["
    by = {r["properties"]["obligation"]: r for r in run["results"]}
    # The op of a rule violation: engine (0,0).reader is engine program 0, the push at ops[0].body[2].
    e = by["async-read-publish:(0,0).reader:[0, 2]"]
    assert e["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/programs/0/ops/0/body/2"
    assert resolve(json.loads(FAST_BROKEN[2].read_text()), "/programs/0/ops/0/body/2")["op"] == "push"
    # A memory overlap points at the first of its two buffers.
    f = by["memory-disjoint:(0,0).local.phase0"]
    assert f["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].startswith("/buffers/")
    assert {r["level"] for r in run["results"]} <= {"error", "warning"}


def test_locate_finds_values_by_pointer() -> None:
    text = '{\n "a": [1, {"b~/c": 2}],\n "d": {"e": [true, null]}\n}'
    got = locate(text, ["", "/a/1", "/a/1/b~0~1c", "/d/e/1", "/nope"])
    assert got == {"": (1, 1), "/a/1": (2, 11), "/a/1/b~0~1c": (2, 20), "/d/e/1": (3, 20)}


def test_certify_junit_has_a_case_per_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.xml"
    progs = [ROOT / "examples" / "pipeline_small.json", FAST_BROKEN[3]]
    assert main(["certify", *map(str, progs), "--junit", str(out), "-q"]) == 1
    capsys.readouterr()
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(p) for p in progs]
    small = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert "deadlock" in small
    assert all(c.find("failure") is None for c in small.values())
    overlap = {c.get("name"): c for c in suites[1].findall("testcase")}
    failure = overlap["memory"].find("failure")
    assert failure is not None
    assert "memory-disjoint:(0,0).local.phase0" in (failure.get("message") or "")
    assert int(root.get("failures") or 0) == sum(1 for c in overlap.values() if c.find("failure") is not None)


def _corpus(tmp_path: Path) -> Path:
    d = tmp_path / "proofs"
    names = ("examples/pipeline_small", "examples/broken/f_memory_overlap")
    shipped = json.loads((ROOT / "proofs" / "manifest.json").read_text())["programs"]
    for n in names:
        for kind in ("program", "certificate"):
            dest = d / f"{n}.{kind}.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "proofs" / f"{n}.{kind}.json", dest)
    (d / "manifest.json").write_text(json.dumps({"format": "verispatial.proof-manifest", "version": 1,
                                                 "programs": {n: shipped[n] for n in names}}))
    return d


def test_gate_sarif_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _corpus(tmp_path)
    sarif, junit = tmp_path / "g.sarif", tmp_path / "g.xml"
    assert main(["gate", str(d), "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 0
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    assert doc["runs"][0]["results"] == []  # an expected refutation is not a finding
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert ("examples/broken/f_memory_overlap", "memory") in cases
    assert ("examples/pipeline_small", "deadlock") in cases
    assert all(c.find("failure") is None for c in cases.values())
    # Now lose a proof and miss a program: both are findings.
    cert = d / "examples/pipeline_small.certificate.json"
    c = json.loads(cert.read_text())
    c["places"].pop()
    cert.write_text(json.dumps(c))
    (d / "examples/broken/f_memory_overlap.program.json").unlink()
    assert main(["gate", str(d), "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    got = sorted((r["ruleId"], r["properties"]["program"]) for r in doc["runs"][0]["results"])
    assert got == [("certificate", "pipeline_small"), ("gate-missing", "examples/broken/f_memory_overlap")]
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases[("examples/pipeline_small", "certificate")].find("failure") is not None
    assert cases[("examples/broken/f_memory_overlap", "program")].find("failure") is not None
