"""CI outputs of ``certify`` and ``gate`` checked against their consumers.

SARIF 2.1.0: validated against the official OASIS schema (``tests/data/sarif-schema-2.1.0.json``) and against what
GitHub code scanning documents as required ("SARIF support for code scanning": every rule's ``id``,
``shortDescription``, ``fullDescription`` and ``help``; every result's ``message.text``, a location whose
``artifactLocation.uri`` is relative to the repository root and whose ``region`` has its start and end line and
column, and ``partialFingerprints``); located by the JSON pointer of each op, one rule per rule kind, the failed-to-prove
results ``kind: open`` with ``level: none`` (SARIF §3.27.9, §3.27.10). JUnit XML: one test case per program and
family, validated against the Jenkins xUnit plugin's JUnit schema (``tests/data/junit-10.xsd``). Sources of both
schemas in ``tests/data/README.md``."""

from __future__ import annotations

import json
import re
import shutil
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema

from verispatial.certify.report import Report, Result, Verdict
from verispatial.cli import main
from verispatial.report.junit import Case, junit_xml
from verispatial.report.sarif import SARIF_SCHEMA, SRCROOT, Artifact, locate, rule_kind, sarif_log

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "examples" / "broken"
FAST_BROKEN = [BROKEN / f"{n}.json" for n in ("a_reserve_over_capacity", "b_ring_straddle", "e_read_no_barrier",
                                             "f_memory_overlap")]
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
JUNIT_XSD = Path(__file__).parent / "data" / "junit-10.xsd"

# A relative reference whose path has no scheme, no leading "/", no "." or ".." segment, and only RFC 3986 path
# characters (unreserved, percent-encoded, sub-delims, ":" and "@" past the first segment).
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-F]{2})"
_RELATIVE = re.compile(rf"(?!/)(?:[A-Za-z0-9\-._~!$&'()*+,;=@]|%[0-9A-F]{{2}})+(?:/{_PCHAR}+)*")


def valid_sarif(doc: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert github_problems(doc) == []


def _relative_uri_problem(uri: Any) -> str | None:
    if not isinstance(uri, str) or not _RELATIVE.fullmatch(uri):
        return f"not a relative, percent-encoded URI: {uri!r}"
    if any(seg in (".", "..") for seg in uri.split("/")):
        return f"has a dot segment: {uri!r}"
    return None


def github_problems(doc: dict[str, Any]) -> list[str]:
    """What GitHub code scanning's documented requirements find wrong with a SARIF log (empty: nothing)."""
    out: list[str] = []
    for run in doc.get("runs", []):
        driver = run.get("tool", {}).get("driver", {})
        if not driver.get("name"):
            out.append("tool.driver.name is missing")
        rules = driver.get("rules", [])
        ids = [r.get("id") for r in rules]
        bases = run.get("originalUriBaseIds", {})
        for r in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                text = r.get(key, {}).get("text")
                if not text:
                    out.append(f"rule {r.get('id')}: {key}.text is missing")
                elif key != "help" and len(text) > 1024:
                    out.append(f"rule {r.get('id')}: {key}.text is longer than 1024 characters")
            if not r.get("help", {}).get("markdown"):
                out.append(f"rule {r.get('id')}: help.markdown (recommended) is missing")
            if len(str(r.get("name", ""))) > 255:
                out.append(f"rule {r.get('id')}: name is longer than 255 characters")
        for k, res in enumerate(run.get("results", [])):
            where = f"result {k} ({res.get('ruleId')})"
            if res.get("ruleId") not in ids:
                out.append(f"{where}: ruleId names no rule")
            if not res.get("message", {}).get("text"):
                out.append(f"{where}: message.text is missing")
            if not res.get("partialFingerprints"):
                out.append(f"{where}: partialFingerprints is missing")
            locs = res.get("locations", [])
            if not 1 <= len(locs) <= 10:
                out.append(f"{where}: {len(locs)} locations (code scanning needs 1 to 10)")
            for loc in locs + res.get("relatedLocations", []):
                phys = loc.get("physicalLocation", {})
                art = phys.get("artifactLocation", {})
                bad = _relative_uri_problem(art.get("uri"))
                if bad:
                    out.append(f"{where}: artifactLocation.uri {bad}")
                if art.get("uriBaseId") not in bases:
                    out.append(f"{where}: uriBaseId {art.get('uriBaseId')!r} is not in originalUriBaseIds")
                region = phys.get("region", {})
                for key in ("startLine", "startColumn", "endLine", "endColumn"):
                    if not isinstance(region.get(key), int) or region[key] < 1:
                        out.append(f"{where}: region.{key} is missing")
                if all(isinstance(region.get(k), int) for k in ("startLine", "startColumn", "endLine", "endColumn")) \
                        and (region["endLine"], region["endColumn"]) <= (region["startLine"], region["startColumn"]):
                    out.append(f"{where}: the region is empty")
    return out


def resolve_uri(run: dict[str, Any], art: dict[str, Any], root: Path) -> Path:
    """The file an artifactLocation names: ``%SRCROOT%`` is ``root``; another base its ``file:`` URI."""
    base = run["originalUriBaseIds"][art["uriBaseId"]]
    top = root if art["uriBaseId"] == SRCROOT else Path(urllib.parse.unquote(urllib.parse.urlparse(base["uri"]).path))
    return top / urllib.parse.unquote(art["uri"])


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


def test_certify_sarif_is_valid_and_locates_every_result(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.sarif"
    # Absolute paths on the command line: the log still names them relative to the repository root.
    assert main(["certify", *map(str, FAST_BROKEN), "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    (run,) = doc["runs"]
    assert run["originalUriBaseIds"] == {SRCROOT: {"description": {"text": run["originalUriBaseIds"][SRCROOT]
                                                                    ["description"]["text"]}}}
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert {"cb-capacity", "cb-straddle", "deadlock", "async-read-publish", "memory-disjoint"} <= set(ids)
    assert [a["location"] for a in run["artifacts"]] == [
        {"uri": p.relative_to(ROOT).as_posix(), "uriBaseId": SRCROOT} for p in FAST_BROKEN]
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"] == rule_kind(res["properties"]["obligation"])
        refuted = res["properties"]["verdict"] == "refuted"
        assert (res["kind"], res["level"]) == (("fail", "error") if refuted else ("open", "none"))
        loc = res["locations"][0]
        art = loc["physicalLocation"]["artifactLocation"]
        path = resolve_uri(run, art, ROOT)
        assert path in FAST_BROKEN
        assert run["artifacts"][art["index"]]["location"]["uri"] == art["uri"]
        program = json.loads(path.read_text())
        pointer = loc["logicalLocations"][0]["fullyQualifiedName"]
        assert pointer == (res["properties"]["jsonPointer"] or "/")
        target = resolve(program, pointer)
        assert isinstance(target, dict)
        line = loc["physicalLocation"]["region"]["startLine"]
        col = loc["physicalLocation"]["region"]["startColumn"]
        assert path.read_text().splitlines()[line - 1][col - 1] in "{["
        # The region runs to the end of that line.
        region = loc["physicalLocation"]["region"]
        assert (region["endLine"], region["endColumn"]) == (line, len(path.read_text().splitlines()[line - 1]) + 1)
    # One identity per result, for code scanning to match alerts across runs by.
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]
    assert len(set(hashes)) == len(hashes)
    by = {r["properties"]["obligation"]: r for r in run["results"]}
    # The op of a rule violation: engine (0,0).reader is engine program 0, the push at ops[0].body[2].
    e = by["async-read-publish:(0,0).reader:[0, 2]"]
    assert e["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/programs/0/ops/0/body/2"
    assert resolve(json.loads(FAST_BROKEN[2].read_text()), "/programs/0/ops/0/body/2")["op"] == "push"
    # A memory overlap points at the first of its two buffers.
    f = by["memory-disjoint:(0,0).local.phase0"]
    assert f["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].startswith("/buffers/")


def _report(*results: Result) -> Report:
    return Report("p", "wormhole", results)


def test_failed_to_prove_is_open_with_level_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SARIF §3.27.10: a result whose kind is not ``fail`` has level ``none``; §3.27.9: ``open`` is the proof tool's
    "could not decide". A refutation is ``fail`` at level ``error``; a checker error decides nothing either (``open``)
    and is also reported as an error notification of the invocation."""
    monkeypatch.chdir(tmp_path)
    prog = tmp_path / "p.json"
    prog.write_text("{}\n")
    rep = _report(Result("deadlock", "deadlock:c0", Verdict.FAILED, "solver: unknown"),
                  Result("circular-buffer", "cb-capacity", Verdict.REFUTED, "b0 asks 3 of 2"),
                  Result("bounds", "bounds:x", Verdict.ERROR, "KeyError: 3"),
                  Result("balance", "balance-cb:b0", Verdict.PROVED, "ends empty"))
    doc = sarif_log([Artifact("p.json", rep, prog.read_text())], 1)
    valid_sarif(doc)
    (run,) = doc["runs"]
    got = {r["properties"]["obligation"]: (r["kind"], r["level"]) for r in run["results"]}
    assert got == {"deadlock:c0": ("open", "none"), "cb-capacity": ("fail", "error"), "bounds:x": ("open", "none")}
    (inv,) = run["invocations"]
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "bounds:x" in note["message"]["text"]
    assert inv["executionSuccessful"] is False  # §3.20.21: an error notification means the run failed


@pytest.mark.parametrize(("rel", "uri"), [
    ("dir with space/a#b/prog.json", "dir%20with%20space/a%23b/prog.json"),
    ("ünï/çödé.json", "%C3%BCn%C3%AF/%C3%A7%C3%B6d%C3%A9.json"),
    ("a:b/100%.json", "a%3Ab/100%25.json"),
])
def test_uris_are_relative_and_percent_encoded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, rel: str, uri: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)  # the source root is the work tree holding the current directory
    prog = repo / rel
    prog.parent.mkdir(parents=True)
    shutil.copy(FAST_BROKEN[0], prog)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    out = tmp_path / "r.sarif"
    # Given as "../<rel>" from a subdirectory: no ".." reaches the log.
    assert main(["certify", f"../{rel}", "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    (run,) = doc["runs"]
    assert run["artifacts"] == [{"location": {"uri": uri, "uriBaseId": SRCROOT}}]
    for res in run["results"]:
        art = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert (art["uri"], art["uriBaseId"]) == (uri, SRCROOT)
        assert resolve_uri(run, art, repo) == prog


def test_a_file_outside_the_source_root_gets_its_own_base(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A program outside the repository cannot be named relative to it: its URI is relative to a base of its own,
    whose absolute ``file:`` URI is in ``originalUriBaseIds`` (the one place SARIF keeps absolute URIs)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "else where"
    elsewhere.mkdir()
    prog = elsewhere / "p.json"
    shutil.copy(FAST_BROKEN[0], prog)
    monkeypatch.chdir(repo)
    out = tmp_path / "r.sarif"
    assert main(["certify", str(prog), "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    (run,) = doc["runs"]
    (art,) = [a["location"] for a in run["artifacts"]]
    assert art["uri"] == "p.json"
    assert art["uriBaseId"] != SRCROOT
    base = run["originalUriBaseIds"][art["uriBaseId"]]["uri"]
    assert base == prog.parent.as_uri() + "/"
    assert resolve_uri(run, art, repo) == prog


def test_github_problems_finds_what_code_scanning_needs() -> None:
    """The requirement check of the tests above can fail: on the log shape written before the fix it does."""
    old = {"runs": [{"tool": {"driver": {"name": "verispatial", "rules": [
        {"id": "gate-missing", "shortDescription": {"text": "x"}, "fullDescription": {"text": "x"}}]}},
        "results": [{"ruleId": "gate-missing", "message": {"text": "m"},
                     "locations": [{"physicalLocation": {"artifactLocation": {"uri": "/abs/proofs dir/manifest.json"}}}]}]}]}
    assert github_problems(old) == [
        "rule gate-missing: help.text is missing",
        "rule gate-missing: help.markdown (recommended) is missing",
        "result 0 (gate-missing): partialFingerprints is missing",
        "result 0 (gate-missing): artifactLocation.uri not a relative, percent-encoded URI: '/abs/proofs dir/manifest.json'",
        "result 0 (gate-missing): uriBaseId None is not in originalUriBaseIds",
        "result 0 (gate-missing): region.startLine is missing",
        "result 0 (gate-missing): region.startColumn is missing",
        "result 0 (gate-missing): region.endLine is missing",
        "result 0 (gate-missing): region.endColumn is missing",
    ]
    assert _relative_uri_problem("../x.json") == "has a dot segment: '../x.json'"
    assert _relative_uri_problem("a b.json") is not None
    assert _relative_uri_problem("file:///x.json") is not None
    assert _relative_uri_problem("a/b%20c.json") is None


def test_every_rule_has_help_from_the_docs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("VERISPATIAL_DOCS_URL", "https://example.org/verispatial/docs/")
    out = tmp_path / "r.sarif"
    assert main(["certify", str(FAST_BROKEN[0]), "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    cap = rules["cb-capacity"]
    semantics = (ROOT / "docs" / "semantics.md").read_text()
    # The help is the rule's definition in docs/semantics.md, and helpUri that section's anchor.
    assert "- `cb-capacity`: a Reserve or Wait asks for more pages than the capacity (it can never return)." in semantics
    assert cap["help"]["markdown"].startswith("`cb-capacity`: a Reserve or Wait asks for more pages than the capacity")
    assert cap["help"]["text"].startswith("cb-capacity: a Reserve or Wait asks for more pages than the capacity")
    assert cap["helpUri"] == "https://example.org/verispatial/docs/semantics.md#circular-buffers"
    assert "### Circular buffers" in semantics
    assert rules["deadlock"]["helpUri"].startswith("https://example.org/verispatial/docs/")
    before = [r["partialFingerprints"] for r in doc["runs"][0]["results"]]
    monkeypatch.delenv("VERISPATIAL_DOCS_URL")
    assert main(["certify", str(FAST_BROKEN[0]), "--sarif", str(out), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(out.read_text())
    valid_sarif(doc)
    assert [r["partialFingerprints"] for r in doc["runs"][0]["results"]] == before  # stable across runs
    for r in doc["runs"][0]["tool"]["driver"]["rules"]:
        # No absolute documentation address is known: no helpUri (it must be absolute), the doc named in the help.
        assert "helpUri" not in r
        assert r["properties"]["documentation"].startswith(("docs/", "README.md#"))


def test_locate_finds_values_by_pointer() -> None:
    text = '{\n "a": [1, {"b~/c": 2}],\n "d": {"e": [true, null]}\n}'
    got = locate(text, ["", "/a/1", "/a/1/b~0~1c", "/d/e/1", "/nope"])
    assert got == {"": (1, 1), "/a/1": (2, 11), "/a/1/b~0~1c": (2, 20), "/d/e/1": (3, 20)}


def test_certify_junit_has_a_case_per_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.xml"
    progs = [ROOT / "examples" / "pipeline_small.json", FAST_BROKEN[3]]
    assert main(["certify", *map(str, progs), "--junit", str(out), "-q"]) == 1
    capsys.readouterr()
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(out))
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
                                                 "programs": {n: shipped[n] for n in names}}, indent=1))
    return d


def test_gate_sarif_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    d = _corpus(tmp_path)
    (tmp_path / ".git").mkdir()  # tmp_path is the work tree, the log's source root
    monkeypatch.chdir(tmp_path)
    sarif, junit = tmp_path / "g.sarif", tmp_path / "g.xml"
    assert main(["gate", "proofs", "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 0
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    assert doc["runs"][0]["results"] == []  # an expected refutation is not a finding
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert ("examples/broken/f_memory_overlap", "memory") in cases
    assert ("examples/pipeline_small", "deadlock") in cases
    assert all(c.find("failure") is None for c in cases.values())
    # Now lose a proof, miss a program, add one the manifest does not list and one without its certificate.
    cert = d / "examples/pipeline_small.certificate.json"
    c = json.loads(cert.read_text())
    c["places"].pop()
    cert.write_text(json.dumps(c))
    (d / "examples/broken/f_memory_overlap.program.json").unlink()
    shutil.copy(ROOT / "proofs" / "examples" / "broken" / "b_ring_straddle.program.json", d / "stray #1.program.json")
    shutil.copy(ROOT / "proofs" / "examples" / "broken" / "b_ring_straddle.program.json", d / "nocert.program.json")
    shutil.copy(ROOT / "proofs" / "examples" / "broken" / "b_ring_straddle.certificate.json",
                d / "stray #1.certificate.json")
    assert main(["gate", "proofs", "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    (run,) = doc["runs"]
    got = sorted((r["ruleId"], r["properties"]["program"]) for r in run["results"])
    assert got == [("certificate", "pipeline_small"), ("gate-extra", "nocert"), ("gate-extra", "stray #1"),
                   ("gate-missing", "examples/broken/f_memory_overlap")]
    by = {(r["ruleId"], r["properties"]["program"]): r for r in run["results"]}
    for r in run["results"]:
        assert (r["kind"], r["level"]) == ("fail", "error")
        assert r["partialFingerprints"]
    # A missing program is placed at its entry in the manifest: the line of its key.
    loc = by[("gate-missing", "examples/broken/f_memory_overlap")]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "proofs/manifest.json", "uriBaseId": SRCROOT,
                                       "index": loc["artifactLocation"]["index"]}
    line = (d / "manifest.json").read_text().splitlines()[loc["region"]["startLine"] - 1]
    assert line.strip().startswith('"examples/broken/f_memory_overlap": {')
    # An extra program at line 1 of its file, its name percent-encoded.
    loc = by[("gate-extra", "stray #1")]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "proofs/stray%20%231.program.json"
    first = (d / "stray #1.program.json").read_text().split("\n")[0]
    assert loc["region"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": len(first) + 1}
    assert resolve_uri(run, loc["artifactLocation"], tmp_path) == d / "stray #1.program.json"
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases[("examples/pipeline_small", "certificate")].find("failure") is not None
    assert cases[("examples/broken/f_memory_overlap", "program")].find("failure") is not None


def test_gate_no_certificate_is_placed_at_the_program(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    d = _corpus(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (d / "examples/pipeline_small.certificate.json").unlink()
    sarif = tmp_path / "g.sarif"
    assert main(["gate", "proofs", "--sarif", str(sarif), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    (res,) = doc["runs"][0]["results"]
    assert res["ruleId"] == "gate-no-certificate"
    phys = res["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "proofs/examples/pipeline_small.program.json"
    first = (d / "examples/pipeline_small.program.json").read_text().split("\n")[0]
    assert phys["region"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": len(first) + 1}
    # ... with its manifest entry as a related location.
    (rel,) = res["relatedLocations"]
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "proofs/manifest.json"
    line = (d / "manifest.json").read_text().splitlines()[rel["physicalLocation"]["region"]["startLine"] - 1]
    assert line.strip().startswith('"examples/pipeline_small": {')


def test_gate_changed_verdict_is_placed_at_the_program(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    d = _corpus(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["programs"]["examples/pipeline_small"].update(expect="refuted", refuted=["deadlock"])
    (d / "manifest.json").write_text(json.dumps(manifest, indent=1))
    sarif, junit = tmp_path / "g.sarif", tmp_path / "g.xml"
    assert main(["gate", "proofs", "--sarif", str(sarif), "--junit", str(junit), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    (res,) = doc["runs"][0]["results"]
    assert (res["ruleId"], res["kind"], res["level"]) == ("gate-changed", "fail", "error")
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "proofs/examples/pipeline_small.program.json"
    (rel,) = res["relatedLocations"]
    line = (d / "manifest.json").read_text().splitlines()[rel["physicalLocation"]["region"]["startLine"] - 1]
    assert line.strip().startswith('"examples/pipeline_small": {')
    rule = doc["runs"][0]["tool"]["driver"]["rules"][res["ruleIndex"]]
    assert rule["shortDescription"]["text"] == ("gate-changed: an expected-refuted program no longer refuted in a "
                                                "family the manifest names")


def test_junit_validates_against_the_jenkins_schema() -> None:
    """Every case shape (passed, failed, error, skipped) validates; the ``skipped`` count the Jenkins schema does
    not allow on ``<testsuites>`` is not written there (it stays on each ``<testsuite>``, where it is allowed)."""
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    xml = junit_xml([Case("a", "deadlock", 1.5), Case("a", "memory", 0.25, failure="1 of 2 not proved", detail="x"),
                     Case("b", "program", error="checker error: KeyError"), Case("c", "program", skipped="unchanged")])
    schema.validate(xml)
    root = ET.fromstring(xml)
    assert root.get("skipped") is None
    assert [(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped"))
            for s in root.findall("testsuite")] == [("a", "2", "1", "0", "0"), ("b", "1", "0", "1", "0"),
                                                   ("c", "1", "0", "0", "1")]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    # The schema is what catches the fault: the same document with the count on <testsuites> is refused.
    root.set("skipped", "1")
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="skipped"):
        schema.validate(ET.tostring(root, encoding="unicode"))


def test_a_file_at_the_file_system_root_gets_the_root_directory_uri(tmp_path: Path) -> None:
    # A fresh user's find: a program at /p.json outside the source tree got the base URI file:////.
    from verispatial.report.sarif import _Places

    places = _Places(tmp_path)
    loc = places.location("/p.json")
    assert loc["uri"] == "p.json"
    assert places.original_uri_base_ids()[loc["uriBaseId"]]["uri"] == "file:///"
    inner = places.location(tmp_path.parent / "q.json")
    assert places.original_uri_base_ids()[inner["uriBaseId"]]["uri"] == tmp_path.parent.as_uri() + "/"


def test_gate_sarif_names_a_lost_programs_buffers_as_certify_does(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A program whose verdict moved (the manifest expects proved, the checker refutes) is written to the gate's
    SARIF log with the program's names (``c_0@(0,0)``), as ``certify --sarif`` writes it, not the ids (``b0``)."""
    d = _corpus(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    mani = json.loads((d / "manifest.json").read_text())
    entry = mani["programs"]["examples/broken/f_memory_overlap"]
    entry["expect"] = "proved"
    entry.pop("refuted", None)
    (d / "manifest.json").write_text(json.dumps(mani, indent=1))
    sarif = tmp_path / "g.sarif"
    assert main(["gate", "proofs", "--sarif", str(sarif), "-q"]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    texts = [r["message"]["text"] for r in doc["runs"][0]["results"] if r["ruleId"] == "memory-disjoint"]
    assert texts
    assert all("c_0@(0,0)" in t and "c_1@(0,0)" in t and "b0" not in t for t in texts), texts
    single = tmp_path / "c.sarif"
    assert main(["certify", str(d / "examples/broken/f_memory_overlap.program.json"), "--sarif", str(single),
                 "-q"]) == 1
    capsys.readouterr()
    alone = [r["message"]["text"] for r in json.loads(single.read_text())["runs"][0]["results"]
             if r["ruleId"] == "memory-disjoint"]
    assert texts == alone
