"""Source locations (ir/source.py): a front end records where each op came from; they survive JSON, compose keeps
them on the shifted ops, validate refuses one that names no op, and a refutation's report names the user's line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from verispatial.ir.serialize import dumps, load_program, loads, program_from_dict
from verispatial.ir.source import SourceLoc, merged, shifted, sliced
from verispatial.ir.validate import validate

ROOT = Path(__file__).resolve().parent.parent


def loads_unvalidated(text: str) -> object:
    """The program of a document the schema accepts, before ``validate`` (which ``loads`` runs)."""
    return program_from_dict(json.loads(text))
BROKEN = ROOT / "examples" / "broken" / "a_reserve_over_capacity.json"


def _with_sources(path: Path) -> str:
    p = load_program(path)
    programs = tuple(attrs.evolve(ep, sources=(((0,), SourceLoc("kernels/reader.cpp", 40 + i, 5,
                                                                  f"cb_reserve_back(cb_in, {i})")),))
                     for i, ep in enumerate(p.programs))
    return dumps(attrs.evolve(p, programs=programs))


def test_round_trip_keeps_sources_and_not_the_value() -> None:
    text = _with_sources(BROKEN)
    q = loads(text)
    assert q.programs[0].sources == (((0,), SourceLoc("kernels/reader.cpp", 40, 5, "cb_reserve_back(cb_in, 0)")),)
    assert q == load_program(BROKEN)  # locations are not part of the program's value
    assert json.loads(dumps(load_program(BROKEN))) == json.loads(BROKEN.read_text())  # others keep their bytes
    assert str(q.source_of(q.programs[0].key, (0, 2))) == "kernels/reader.cpp:40:5: cb_reserve_back(cb_in, 0)"


def test_table_helpers() -> None:
    loc = SourceLoc("a.py", 3)
    assert shifted((((1, 2), loc),), 4) == (((5, 2), loc),)
    assert sliced((((1,), loc), ((5, 0), loc)), 4, 6) == (((1, 0), loc),)
    assert merged([(((3,), loc),), (((1,), loc),)]) == (((1,), loc), ((3,), loc))
    assert str(loc) == "a.py:3"


def test_a_location_naming_no_op_is_refused() -> None:
    p = load_program(BROKEN)
    bad = attrs.evolve(p.programs[0], sources=(((7, 1), SourceLoc("a.py", 1)),))
    vs = validate(attrs.evolve(p, programs=(bad, *p.programs[1:])))
    assert [v.rule for v in vs] == ["a source location names an op of its program"]


def test_refutation_names_the_users_line(tmp_path: Path) -> None:
    prog = tmp_path / "kernel.json"
    prog.write_text(_with_sources(BROKEN))
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(prog), "-q"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert "    at kernels/reader.cpp:40:5: cb_reserve_back(cb_in, 0)" in run.stdout
    js = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(prog), "--json", "-q"],
                        capture_output=True, text=True, check=False)
    doc = json.loads(js.stdout)
    cex = next(r["counterexample"] for r in doc["results"] if r["name"].startswith("cb-capacity:(0,0).reader"))
    assert cex["source"] == {"file": "kernels/reader.cpp", "line": 40, "column": 5, "text": "cb_reserve_back(cb_in, 0)",
                             "at": "kernels/reader.cpp:40:5: cb_reserve_back(cb_in, 0)"}


@pytest.mark.parametrize("field", ["line", "file"])
def test_bad_location_is_bad_input(tmp_path: Path, field: str) -> None:
    d = json.loads(_with_sources(BROKEN))
    d["programs"][0]["sources"][0][field] = 0 if field == "line" else ""
    prog = tmp_path / "bad.json"
    prog.write_text(json.dumps(d))
    run = subprocess.run([sys.executable, "-m", "verispatial", "validate", str(prog)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert "sources" in run.stderr + run.stdout
    assert "Traceback" not in run.stderr


def test_sarif_and_junit_point_at_the_users_line(tmp_path: Path) -> None:
    from test_report_ci import valid_sarif

    prog = tmp_path / "kernel.json"
    prog.write_text(_with_sources(BROKEN))
    sarif, junit = tmp_path / "out.sarif", tmp_path / "out.xml"
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(prog), "-q", "--sarif", str(sarif),
                          "--junit", str(junit)], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    doc = json.loads(sarif.read_text())
    valid_sarif(doc)
    res = next(r for r in doc["runs"][0]["results"] if r["properties"]["obligation"] == "cb-capacity:(0,0).reader:[0]")
    where = res["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "kernels/reader.cpp"
    assert where["region"]["startLine"] == 40
    assert where["region"]["startColumn"] == 5
    assert res["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernel.json"
    assert "at kernels/reader.cpp:40:5: cb_reserve_back(cb_in, 0)" in junit.read_text()


@pytest.mark.parametrize(("entry", "rule"), [
    ({"line": 2**40}, "line and column are at most 4294967295"),
    ({"text": "x\n\x1b[31mred"}, "a source text holds no control characters (newlines, tabs, escapes)"),
    ({"file": "a\tb.cpp"}, "a source file holds no control characters (newlines, tabs, escapes)"),
])
def test_a_source_location_is_validated(entry: dict[str, object], rule: str) -> None:
    d = json.loads(_with_sources(BROKEN))
    d["programs"][0]["sources"][0].update(entry)
    p = loads_unvalidated(json.dumps(d))
    assert [v.rule for v in validate(p)] == [rule]


def test_an_op_has_one_source_location() -> None:
    d = json.loads(_with_sources(BROKEN))
    d["programs"][0]["sources"].append(dict(d["programs"][0]["sources"][0], line=99))
    assert [v.rule for v in validate(loads_unvalidated(json.dumps(d)))] == ["an op has one source location"]


def test_sarif_reads_no_device_a_location_names(tmp_path: Path) -> None:
    """A location may name any path: SARIF measures regions only in regular files of bounded size (a /dev/zero
    source made the writer read without end)."""
    d = json.loads(_with_sources(BROKEN))
    d["programs"][0]["sources"][0]["file"] = "/dev/zero"
    prog = tmp_path / "k.json"
    prog.write_text(json.dumps(d))
    sarif = tmp_path / "o.sarif"
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(prog), "-q", "--sarif", str(sarif)],
                         capture_output=True, text=True, check=False, timeout=120)
    assert run.returncode == 1, run.stderr
    res = next(r for r in json.loads(sarif.read_text())["runs"][0]["results"]
               if r["properties"]["obligation"] == "cb-capacity:(0,0).reader:[0]")
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 40


def test_a_result_with_no_counterexample_sits_at_the_line_of_the_op_it_names() -> None:
    """A failed-to-prove obligation carries no counterexample, yet its name says the op (``ObligationId.op``): SARIF
    places it at the line the engineer wrote, the op in program.json beside it — not at line 1 of the file."""
    from verispatial.certify.report import Result, Verdict
    from verispatial.driver.run import certify
    from verispatial.report.sarif import Artifact, sarif_log
    from verispatial.report.sources import obligation_sources

    text = _with_sources(BROKEN)
    p = loads(text)
    key = p.programs[0].key
    name = f"async-source-reuse:{key}:[0]"
    rep = attrs.evolve(certify(p), results=(Result("async-noc", name, Verdict.FAILED, "a candidate, not replayed"),))
    got = obligation_sources(p, rep)
    assert got == {name: SourceLoc("kernels/reader.cpp", 40, 5, "cb_reserve_back(cb_in, 0)")}
    assert obligation_sources(load_program(BROKEN), rep) == {}  # no front end: nothing to point at
    (res,) = sarif_log([Artifact("kernel.json", rep, text, None, got)], 1)["runs"][0]["results"]
    where = res["locations"][0]["physicalLocation"]
    assert (where["artifactLocation"]["uri"], where["region"]["startLine"]) == ("kernels/reader.cpp", 40)
    assert res["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernel.json"
    (bare,) = sarif_log([Artifact("kernel.json", rep, text)], 1)["runs"][0]["results"]
    assert bare["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernel.json"
    from verispatial.report.text import report_lines

    lines = [t for t, _ in report_lines(rep, (1, 1), None, got)]
    at = lines.index(f"failed-to-prove async-noc/{name}: a candidate, not replayed")
    assert lines[at + 1] == "    at kernels/reader.cpp:40:5: cb_reserve_back(cb_in, 0)"


def test_a_word_or_buffer_obligation_sits_at_the_line_of_an_op_it_is_about() -> None:
    """An obligation about a semaphore word (``sem-exact:sem0@(1,0)``) or a buffer (``balance-cb:b0``) names no op,
    yet the engineer wrote the ops it is about: a word's result sits at its first wait (before its sets and the
    remote writes landing on it), a buffer's at the first op naming it — not at line 1 of the program file."""
    from verispatial.certify.report import Report, Result, Verdict
    from verispatial.ir import (
        WORMHOLE,
        Buffer,
        Engine,
        EngineProgram,
        Program,
        Push,
        Reserve,
        Semaphore,
        SemInc,
        SemSet,
        SemWait,
        Site,
        WaitCond,
    )
    from verispatial.report.sources import obligation_sources, subject_ops

    a, b = Site(0, 0), Site(1, 0)
    inc, reset, wait = (SourceLoc("k/sender.cpp", 12, 0, "noc_semaphore_inc(addr, 1)"),
                        SourceLoc("k/receiver.cpp", 20, 0, "noc_semaphore_set(sem, 0)"),
                        SourceLoc("k/receiver.cpp", 21, 0, "noc_semaphore_wait(sem, 1)"))
    p = Program("w", WORMHOLE, semaphores=(Semaphore(0, "s", (b,), 0),),
                buffers=(Buffer(0, "c", a, 0, 1, 2, "bf16"),),
                programs=(EngineProgram(a, Engine.READER, (Reserve(0, 1), Push(0, 1), SemInc(0, b, 1)),
                                        sources=(((0,), SourceLoc("k/sender.cpp", 10, 0, "cb_reserve_back(c, 1)")),
                                                 ((2,), inc))),
                          EngineProgram(b, Engine.READER, (SemSet(0, 0), SemWait(0, WaitCond.EQ, 1)),
                                        sources=(((0,), reset), ((1,), wait)))))
    from verispatial.ir.obligation import BufferRef, WordRef

    assert subject_ops(p, WordRef(0, b)) == [("(1,0).reader", (1,)), ("(1,0).reader", (0,)), ("(0,0).reader", (2,))]
    assert subject_ops(p, WordRef(0, a)) == []
    assert subject_ops(p, BufferRef(0)) == [("(0,0).reader", (0,)), ("(0,0).reader", (1,))]
    rep = Report("w", "wormhole", (Result("semaphores", "sem-exact:sem0@(1,0)", Verdict.FAILED, "undecided"),
                                   Result("cb", "balance-cb:b0", Verdict.FAILED, "undecided"),
                                   Result("cb", "balance-cb:b1", Verdict.FAILED, "no op names it")))
    got = obligation_sources(p, rep)
    assert got == {"sem-exact:sem0@(1,0)": wait, "balance-cb:b0": SourceLoc("k/sender.cpp", 10, 0,
                                                                             "cb_reserve_back(c, 1)")}
