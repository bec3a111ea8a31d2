"""A counterexample of a host description in the terms of the source the kernel engineer wrote (issue 18).

A runtime or compile-time arg the host gives as a range ``lo..hi`` is a trip ``t`` in ``[0, hi - lo]`` of the
program; the checker's counterexample names the trip, and every output of ``certify HOST.yaml`` (text, ``--json``,
SARIF, JUnit, ``explain``) also names the argument and its value ``lo + t`` with the host field it came from. Every
op a counterexample or an explained step names points at its C++ file:line; an op read inside a helper of an
included header points at the header's line and at the call in the kernel. The kernels are written here."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from tests.test_frontend_ttmetal_locations import shown  # noqa: E402
from verispatial.cli import main  # noqa: E402
from verispatial.frontends.ttmetal import import_host  # noqa: E402
from verispatial.ir.serialize import dumps, loads  # noqa: E402
from verispatial.ir.source import SourceLoc  # noqa: E402

READER = """\
// Reads num_tiles tiles of src into c_0, one at a time, through a helper of the op.
#include "api/dataflow/dataflow_api.h"
#include "reader_helpers.hpp"

void kernel_main() {
    uint32_t src_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    const InterleavedAddrGenFast<true> s = {
        .bank_base_address = src_addr, .page_size = get_tile_size(0), .data_format = get_dataformat(0)};
    for (uint32_t i = 0; i < num_tiles; ++i) {
        read_one_tile(0, s, i);
    }
}
"""

HELPERS = """\
// The op's helper: one tile into the back of cb.
#pragma once
inline void read_one_tile(uint32_t cb, const InterleavedAddrGenFast<true>& s, uint32_t tile) {
    cb_reserve_back(cb, 1);
    noc_async_read_tile(tile, s, get_write_ptr(cb));
#ifndef NO_BARRIER
    noc_async_read_barrier();
#endif
    cb_push_back(cb, 1);
}
"""

WRITER = """\
// Writes num_tiles tiles of c_0 to dst, one at a time.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    const InterleavedAddrGenFast<true> d = {
        .bank_base_address = dst_addr, .page_size = get_tile_size(0), .data_format = get_dataformat(0)};
    for (uint32_t i = 0; i < num_tiles; ++i) {
        cb_wait_front(0, 1);
        noc_async_write_tile(i, d, get_read_ptr(0));
        noc_async_write_barrier();
        cb_pop_front(0, 1);
    }
}
"""

#: the writer with its count a compile-time arg
WRITER_CT = WRITER.replace("uint32_t num_tiles = get_arg_val<uint32_t>(1);",
                           "constexpr uint32_t num_tiles = get_compile_time_arg_val(0);")

HOST = """\
format: verispatial.ttmetal-host
version: 1
name: pass
tensors:
  - {name: src, shape: [32, 128], dtype: bf16, role: input}
  - {name: dst, shape: [32, 128], dtype: bf16, role: output}
buffers:
  - {name: in, index: 0, entry_size: 2048, entries: 2, data_format: bf16}
kernels:
  - {name: reader, source: reader.cpp, processor: reader, noc: 0, runtime_args: [src_addr, num_tiles]}
  - {name: writer, source: writer.cpp, processor: writer, noc: 1, runtime_args: [dst_addr, num_tiles]}
work_units:
  - cores: "0,0"
    kernels: [reader, writer]
    runtime_args:
      reader: {src_addr: {tensor: src}, num_tiles: "3..4"}
      writer: {dst_addr: {tensor: dst}, num_tiles: 4}
"""

#: the text line naming the reader's runtime arg: the trip is 0, the arg 3 (of the range 3..4), where the writer
#: waits for a fourth tile
NUM_TILES = ("num_tiles = 3 from host.yaml: kernels.reader.runtime_args (range 3..4 in work_units[0]; "
             "trip num_tiles = 0 in program.json)")


def test_refusal_in_a_helper_gives_the_kernels_call_its_own_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The same refusal under ``--json``: the header's line in ``file`` / ``line``, the kernel's call in
    ``called_at``; ``--sarif`` relates the call to the result at the header's line (docs/ci.md)."""
    host = _project(tmp_path, monkeypatch)
    Path("reader_helpers.hpp").write_text(HELPERS.replace("    cb_push_back(cb, 1);",
                                                          "    fabric_async_write(cb);\n    cb_push_back(cb, 1);"))
    assert main(["certify", str(host), "-q", "--no-cache", "--json", "--sarif", "out.sarif"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert {k: error[k] for k in ("kind", "file", "line", "construct", "text", "called_at")} == {
        "kind": "ttmetal-refused", "file": "reader_helpers.hpp", "line": 9,
        "construct": "call to fabric_async_write", "text": "fabric_async_write(cb);",
        "called_at": {"file": "reader.cpp", "line": 11, "text": "read_one_tile(0, s, i);"}}
    (res,) = json.loads(Path("out.sarif").read_text())["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "ops/pass/reader_helpers.hpp"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    (call,) = res["relatedLocations"]
    assert call["message"]["text"] == "called here: read_one_tile(0, s, i);"
    assert call["physicalLocation"]["artifactLocation"]["uri"] == "ops/pass/reader.cpp"
    assert call["physicalLocation"]["region"]["startLine"] == 11


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str = HOST, writer: str = WRITER) -> Path:
    """The kernels and ``host.yaml`` in ``tmp_path/proj/ops/pass``, run from ``tmp_path/proj`` (a git work tree:
    the SARIF source root). Returns the host's path relative to the run's directory."""
    proj = tmp_path / "proj"
    op = proj / "ops" / "pass"
    op.mkdir(parents=True)
    (proj / ".git").mkdir()
    for name, text in (("reader.cpp", READER), ("reader_helpers.hpp", HELPERS), ("writer.cpp", writer),
                       ("host.yaml", host)):
        (op / name).write_text(text)
    monkeypatch.chdir(op)
    return Path("host.yaml")


def _failure(family: str) -> str:
    """The text of the JUnit failure of ``family`` in ``out.xml``."""
    cases = {c.get("name"): c for c in ET.parse("out.xml").getroot().iter("testcase")}
    failure = cases[family].find("failure")
    assert failure is not None
    return failure.text or ""


def _no_barrier(host: str) -> str:
    """``HOST`` with the helper's read barrier left out and the count 4 (no deadlock): the push publishes a page
    whose read may not have landed (async-read-publish), at the helper's line."""
    return host.replace("runtime_args: [src_addr, num_tiles]}", "runtime_args: [src_addr, num_tiles], "
                        "defines: {NO_BARRIER: 1}}").replace('num_tiles: "3..4"', "num_tiles: 4")


# ------------------------------------------------------------------ the argument's name and value


def test_text_report_names_the_argument_and_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch)
    assert main(["certify", str(host), "-q", "--no-cache"]) == 1
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("refuted deadlock/"))
    assert "deadlock with num_tiles=0 after" in lines[head]  # the checker's words: the trip, as program.json has it
    assert lines[head + 1:head + 3] == [f"    {NUM_TILES}", "    at writer.cpp:10:9: cb_wait_front(0, 1);"]


def test_json_counterexample_carries_the_host_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch)
    assert main(["certify", str(host), "-q", "--no-cache", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (dl,) = [r for r in report["results"] if r["verdict"] == "refuted"]
    cex = dl["counterexample"]
    assert cex["trips"] == {"num_tiles": 0}
    assert cex["host_args"] == [{
        "name": "num_tiles", "kernel": "reader", "value": 3, "from": "host.yaml: kernels.reader.runtime_args",
        "range": "3..4",
        "fields": ["work_units[0].runtime_args.reader.num_tiles"], "trip": "num_tiles", "trip_value": 0,
        "text": NUM_TILES}]
    assert list(cex).index("host_args") == list(cex).index("trips") + 1  # right after the trips it explains


def test_compile_time_range_is_named_as_the_kernel_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``get_compile_time_arg_val(0)`` given as ``4..5``: the writer waits for a fifth tile the reader never
    pushes; its trip is named after the kernel and the field (``writer.compile_time_args[0]``), its value 4 + 1."""
    d = yaml.safe_load(HOST)
    d["kernels"][1].update(runtime_args=["dst_addr"], compile_time_args=["4..5"])
    d["work_units"][0]["runtime_args"] = {"reader": {"src_addr": {"tensor": "src"}, "num_tiles": 4},
                                          "writer": {"dst_addr": {"tensor": "dst"}}}
    host = _project(tmp_path, monkeypatch, yaml.safe_dump(d, sort_keys=False), WRITER_CT)
    assert main(["certify", str(host), "-q", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert ("    get_compile_time_arg_val(0) = 5 from host.yaml: kernels.writer.compile_time_args[0] (range 4..5; "
            "trip writer.compile_time_args[0] = 1 in program.json)\n    at writer.cpp:10:9: cb_wait_front(0, 1);") in out


def test_positional_compile_time_ranges_of_two_kernels_are_two_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Each kernel has its own ``compile_args`` (``DataMovementConfig``): the reader's ``get_compile_time_arg_val(0)``
    in ``3..4`` and the writer's in ``3..4`` are two values, and the reader reading 3 tiles where the writer waits
    for 4 hangs. Both were trip ``compile_time_args[0]``, one value, and the program was proved."""
    d = yaml.safe_load(HOST)
    d["kernels"][0].update(source="reader_ct.cpp", runtime_args=["src_addr"], compile_time_args=["3..4"])
    d["kernels"][1].update(runtime_args=["dst_addr"], compile_time_args=["3..4"])
    d["tensors"][1]["role"] = "activation"  # how much of it is written depends on the count
    d["work_units"][0]["runtime_args"] = {"reader": {"src_addr": {"tensor": "src"}},
                                          "writer": {"dst_addr": {"tensor": "dst"}}}
    host = _project(tmp_path, monkeypatch, yaml.safe_dump(d, sort_keys=False), WRITER_CT)
    Path("reader_ct.cpp").write_text(READER.replace("uint32_t num_tiles = get_arg_val<uint32_t>(1);",
                                                    "constexpr uint32_t num_tiles = get_compile_time_arg_val(0);"))
    assert [(t.name, t.max) for t in import_host(host).trips] == [("reader.compile_time_args[0]", 1),
                                                                   ("writer.compile_time_args[0]", 1)]
    assert main(["certify", str(host), "-q", "--no-cache", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (dl,) = [r for r in report["results"] if r["verdict"] == "refuted"]
    assert dl["family"] == "deadlock"
    assert [a["text"] for a in dl["counterexample"]["host_args"]] == [
        "get_compile_time_arg_val(0) = 3 from host.yaml: kernels.reader.compile_time_args[0] (range 3..4; trip "
        "reader.compile_time_args[0] = 0 in program.json)",
        "get_compile_time_arg_val(0) = 4 from host.yaml: kernels.writer.compile_time_args[0] (range 3..4; trip "
        "writer.compile_time_args[0] = 1 in program.json)"]


def test_shared_trip_names_every_argument(tmp_path: Path) -> None:
    """A trip several args name (``{range, trip}``) is one value: each arg is named with it."""
    from verispatial.frontends.ttmetal.host import load_host
    from verispatial.report.hostargs import host_args

    d = yaml.safe_load(HOST)
    d["work_units"][0]["runtime_args"]["reader"]["num_tiles"] = {"range": "3..4", "trip": "n"}
    d["work_units"][0]["runtime_args"]["writer"]["num_tiles"] = {"range": "3..4", "trip": "n"}
    (tmp_path / "h.yaml").write_text(yaml.safe_dump(d))
    for name, text in (("reader.cpp", READER), ("reader_helpers.hpp", HELPERS), ("writer.cpp", WRITER)):
        (tmp_path / name).write_text(text)
    got = host_args(load_host(tmp_path / "h.yaml"), "h.yaml", {"n": 1})
    assert [a["text"] for a in got] == [
        "num_tiles = 4 from h.yaml: kernels.reader.runtime_args (range 3..4 in work_units[0]; trip n = 1 in "
        "program.json)",
        "num_tiles = 4 from h.yaml: kernels.writer.runtime_args (range 3..4 in work_units[0]; trip n = 1 in "
        "program.json)"]
    assert [a["kernel"] for a in got] == ["reader", "writer"]  # what explain qualifies a shared name by
    assert host_args(load_host(tmp_path / "h.yaml"), "h.yaml", {"other": 1}) == []


def test_junit_failure_names_the_argument_and_the_kernel_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch)
    assert main(["certify", str(host), "-q", "--no-cache", "--junit", "out.xml"]) == 1
    failure = _failure("deadlock")
    assert failure.splitlines()[1:] == [f"    {NUM_TILES}", "    at writer.cpp:10:9: cb_wait_front(0, 1);"]


def test_sarif_message_names_the_argument_and_points_at_kernel_and_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The alert sits at the kernel's line (relative to the source root, line and column 1-based, the region the
    statement's line); the message names the argument, and a related location is the host's range."""
    host = _project(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path / "proj")
    assert main(["certify", f"ops/pass/{host}", "-q", "--no-cache", "--sarif", "out.sarif"]) == 1
    (res,) = [r for r in json.loads((tmp_path / "proj" / "out.sarif").read_text())["runs"][0]["results"]
              if r["ruleId"] == "deadlock"]
    assert res["message"]["text"].endswith(f"; {NUM_TILES.replace('host.yaml', 'ops/pass/host.yaml')}")
    phys = res["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "ops/pass/writer.cpp"
    assert phys["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert phys["region"] == {"startLine": 10, "startColumn": 9, "endLine": 10,
                              "endColumn": len("        cb_wait_front(0, 1);") + 1}
    ranges = [r for r in res["relatedLocations"] if r["message"]["text"].startswith("num_tiles = 3")]
    assert [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"],
             r["physicalLocation"]["region"]["startColumn"]) for r in ranges] == [("ops/pass/host.yaml", 16, 41)]
    assert HOST.splitlines()[15][40:].startswith('num_tiles: "3..4"')


def test_explain_names_the_argument_and_every_step_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch)
    assert main(["explain", str(host), "-q", "--no-cache", "-o", "ex", "--html", "ex.html"]) == 1
    out = capsys.readouterr().out.splitlines()
    page = Path("ex.html").read_text()
    assert (f'<pre class="source">{NUM_TILES}\nat writer.cpp:10:9: cb_wait_front(0, 1);</pre>') in page
    head = next(i for i, ln in enumerate(out) if ln.startswith("refuted deadlock/"))
    assert out[head + 1:head + 7] == [
        f"    {NUM_TILES}",
        "    at writer.cpp:10:9: cb_wait_front(0, 1);",
        "    deadlock with num_tiles = 3 (trip num_tiles=0): 1 engine(s) stuck, 1 finished (reached by the "
        "interpreter: drive to the candidate positions, 30 steps)",
        "    (0,0).writer is stuck at ops[0].body[0] (writer.cpp:10) wait(in, 1) i=3: in@(0,0) holds 0 page(s) "
        "(pushed 3, popped 3), the wait needs 1",
        "      (0,0).reader's push(in, 1) at ops[0].body[3] (reader_helpers.hpp:9, called at reader.cpp:11) ran 3 "
        "times; (0,0).reader has finished",
        "    no wait-for cycle: every chain of waits ends at an engine that finished, at a wait no op releases or at "
        "the engine's own later op"]


def test_explain_schedule_steps_name_their_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch, _no_barrier(HOST))
    assert main(["explain", str(host), "-q", "--no-cache", "-o", "ex"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(out) if ln.startswith("refuted async-noc/async-read-publish"))
    block = out[head:next(i for i in range(head + 1, len(out)) if out[i].startswith(("refuted", "verdict")))]
    assert block[1:3] == ["    at reader_helpers.hpp:9:5: cb_push_back(cb, 1);",
                          "      called at reader.cpp:11:9: read_one_tile(0, s, i);"]
    assert ("    rule async-read-publish (docs/semantics.md) broken at (0,0).reader at ops[0].body[2] "
            "(reader_helpers.hpp:9, called at reader.cpp:11) push(in, 1) i=0: push(in, 1) publishes pages read into "
            "in@(0,0) by read_tiles with no read_barrier since") in block
    steps = [ln for ln in block if ln.startswith("      #")]
    assert steps
    for ln in steps:
        assert "(reader_helpers.hpp:" in ln or "(writer.cpp:" in ln, ln


# ------------------------------------------------------------------ a helper's line and its call in the kernel


def test_op_in_a_helper_records_the_call_in_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = _project(tmp_path, monkeypatch)
    p = import_host(host)
    reader = next(ep for ep in p.programs if ep.engine.value == "reader")
    call = SourceLoc("reader.cpp", 11, 9, "read_one_tile(0, s, i);")
    assert [(path, str(loc), loc.called_at) for path, loc in reader.sources] == [
        ((0,), "reader.cpp:10:5: for (uint32_t i = 0; i < num_tiles; ++i) {", None),
        ((0, 0), "reader_helpers.hpp:4:5: cb_reserve_back(cb, 1);", call),
        ((0, 1), "reader_helpers.hpp:5:5: noc_async_read_tile(tile, s, get_write_ptr(cb));", call),
        ((0, 2), "reader_helpers.hpp:7:5: noc_async_read_barrier();", call),
        ((0, 3), "reader_helpers.hpp:9:5: cb_push_back(cb, 1);", call)]
    writer = next(ep for ep in p.programs if ep.engine.value == "writer")
    assert all(loc.called_at is None for _, loc in writer.sources)
    again = loads(dumps(p))  # program.json keeps the call
    assert next(ep for ep in again.programs if ep.engine.value == "reader").sources == reader.sources
    doc = json.loads(dumps(p))
    entry = next(e for ep in doc["programs"] for e in ep.get("sources", []) if e["path"] == [0, 3])
    assert entry["called_at"] == {"file": "reader.cpp", "line": 11, "column": 9, "text": "read_one_tile(0, s, i);"}
    assert all("called_at" not in e for ep in doc["programs"] for e in ep.get("sources", []) if len(e["path"]) == 1)


def test_text_junit_and_sarif_name_the_helper_line_and_its_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    host = _project(tmp_path, monkeypatch, _no_barrier(HOST))
    assert main(["certify", str(host), "-q", "--no-cache", "--junit", "out.xml", "--sarif", "out.sarif"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = out.index("refuted async-noc/async-read-publish:(0,0).reader:[0, 2]: push of in@(0,0) while reads into it "
                     "may not have landed (no read barrier since)")
    assert out[head + 1:head + 3] == ["    at reader_helpers.hpp:9:5: cb_push_back(cb, 1);",
                                      "      called at reader.cpp:11:9: read_one_tile(0, s, i);"]
    failure = _failure("async-noc")
    assert ("    at reader_helpers.hpp:9:5: cb_push_back(cb, 1);\n"
            "      called at reader.cpp:11:9: read_one_tile(0, s, i);") in failure
    run = json.loads(Path("out.sarif").read_text())["runs"][0]
    (res,) = [r for r in run["results"] if r["ruleId"] == "async-read-publish"]
    phys = res["locations"][0]["physicalLocation"]
    assert (phys["artifactLocation"]["uri"], phys["region"]["startLine"], phys["region"]["startColumn"]) == \
        ("ops/pass/reader_helpers.hpp", 9, 5)
    calls = [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"],
              r["physicalLocation"]["region"]["startColumn"], r["message"]["text"])
             for r in res["relatedLocations"] if r["message"]["text"].startswith("called")]
    assert calls == [("ops/pass/reader.cpp", 11, 9, "called here: read_one_tile(0, s, i);")]


def test_refutation_with_no_op_points_at_the_op_it_is_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An output left partly unwritten names no op (the writer finished): the text and JUnit still point at the
    kernel line of the first op writing that tensor, as SARIF does."""
    d = yaml.safe_load(HOST)
    d["work_units"][0]["runtime_args"]["reader"]["num_tiles"] = 3
    d["work_units"][0]["runtime_args"]["writer"]["num_tiles"] = 3
    host = _project(tmp_path, monkeypatch, yaml.safe_dump(d, sort_keys=False))
    assert main(["certify", str(host), "-q", "--no-cache", "--junit", "out.xml"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(out) if ln.startswith("refuted happens-before/output-unwritten:dst"))
    assert out[head + 1] == "    at writer.cpp:11:9: noc_async_write_tile(i, d, get_read_ptr(0));"
    failure = _failure("happens-before")
    assert failure.splitlines()[1] == "    at writer.cpp:11:9: noc_async_write_tile(i, d, get_read_ptr(0));"
    assert main(["explain", str(host), "-q", "--no-cache", "-o", "ex"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(out) if ln.startswith("refuted happens-before/output-unwritten:dst"))
    assert out[head + 1] == "    at writer.cpp:11:9: noc_async_write_tile(i, d, get_read_ptr(0));"



def test_column_counts_characters_not_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A SARIF column counts code points (the log's ``columnKind``), as an editor does; tree-sitter's are bytes: a
    two-byte character before the statement put the alert one column to its right."""
    writer = WRITER.replace("        cb_wait_front(0, 1);", "        /* ≥1 */ cb_wait_front(0, 1);")
    host = _project(tmp_path, monkeypatch, HOST, writer)
    assert main(["certify", str(host), "-q", "--no-cache", "--sarif", "out.sarif"]) == 1
    assert "    at writer.cpp:10:18: /* ≥1 */ cb_wait_front(0, 1);" in capsys.readouterr().out
    (res,) = [r for r in json.loads(Path("out.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
              if r["ruleId"] == "deadlock"]
    line = "        /* ≥1 */ cb_wait_front(0, 1);"
    assert res["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 10, "startColumn": line.index("cb_wait_front") + 1, "endLine": 10, "endColumn": len(line) + 1}


def test_vendor_softmax_is_refuted_at_the_helper_line_with_the_readers_call(capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' example: ttnn's softmax reader calls the wheel's reduce-scaler helper, whose push the finding is at."""
    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    if wheel_root(download=True) is None:
        pytest.skip(f"the ttnn {TTNN_VERSION} wheel is not cached and could not be downloaded (offline?)")
    host = Path(__file__).resolve().parents[1] / "examples" / "ttmetal" / "softmax_w" / "host.yaml"
    assert main(["certify", str(host), "-q", "--no-cache"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = out.index("refuted async-noc/async-read-publish:(0,0).reader:[2]: push of max_scaler@(0,0) while "
                     "fill_tiles or copy_tiles stores into it may not have landed (no drain since)")
    from verispatial.frontends.ttmetal.host import load_host

    root = load_host(str(host)).kernel_root
    assert out[head + 1:head + 3] == [  # the wheel's files named as the user opens them
        f"    at {shown(root / 'ttnn/kernel_lib/reduce_helpers_dataflow.inl')}:203:5: dfb.push_back(1);",
        f"      called at {shown(root / 'ttnn/operations/normalization/softmax/device/kernels/attention/dataflow')}/"
        "reader_unary_interleaved_sm.cpp:69:9: dataflow_kernel_lib::calculate_and_prepare_reduce_scaler<"]


#: the writer writing tiles start_id, start_id + 1, ... of dst: its C++ index is start_id plus the program's
WRITER_FROM = WRITER.replace("    uint32_t num_tiles = get_arg_val<uint32_t>(1);\n",
                             "    uint32_t num_tiles = get_arg_val<uint32_t>(1);\n"
                             "    uint32_t start_id = get_arg_val<uint32_t>(2);\n").replace(
    "for (uint32_t i = 0; i < num_tiles; ++i) {", "for (uint32_t i = start_id; i < start_id + num_tiles; ++i) {")


def test_loop_index_is_also_given_as_the_kernel_counts_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``for (i = start_id; ...)`` with ``start_id`` 8: the program's loop counts 0, 1, ...; where the writer is stuck
    at its iteration 3, the kernel's ``i`` is 11. The program keeps how the two relate (``sources[].index``)."""
    d = yaml.safe_load(HOST)
    d["tensors"][1].update(shape=[32, 384], role="activation")  # 12 tiles, the writer's are 8..11
    d["kernels"][1]["runtime_args"] = ["dst_addr", "num_tiles", "start_id"]
    d["work_units"][0]["runtime_args"]["writer"]["start_id"] = 8
    host = _project(tmp_path, monkeypatch, yaml.safe_dump(d, sort_keys=False), WRITER_FROM)
    doc = json.loads(dumps(import_host(host)))
    writer = next(ep for ep in doc["programs"] if ep["engine"] == "writer")
    assert [e["index"] for e in writer["sources"] if "index" in e] == [{"name": "i", "step": 1, "const": 8}]
    reader = next(ep for ep in doc["programs"] if ep["engine"] == "reader")
    assert all("index" not in e for e in reader["sources"])  # for (i = 0; ...; ++i): the program's own count
    assert main(["certify", str(host), "-q", "--no-cache", "--json"]) == 1
    (dl,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["verdict"] == "refuted"]
    (stuck,) = dl["counterexample"]["stuck"]
    assert (stuck["position"]["iteration"], stuck["position"]["source_iteration"]) == ([["i", 3]], "i = 11")
    assert main(["explain", str(host), "-q", "--no-cache", "-o", "ex"]) == 1
    assert ("    (0,0).writer is stuck at ops[0].body[0] (writer.cpp:11; i = 11) wait(in, 1) i=3: in@(0,0) holds 0 "
            "page(s) (pushed 3, popped 3), the wait needs 1") in capsys.readouterr().out.splitlines()


def test_schedule_steps_give_the_kernels_loop_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A reader stepping ``i += 2`` from ``start_id`` 4: its first iteration (0 in the program) is ``i = 4``."""
    d = yaml.safe_load(_no_barrier(HOST))
    d["tensors"][0]["shape"] = [32, 512]
    d["kernels"][0]["runtime_args"] = ["src_addr", "num_tiles", "start_id"]
    d["work_units"][0]["runtime_args"]["reader"].update(start_id=4, num_tiles=8)
    host = _project(tmp_path, monkeypatch, yaml.safe_dump(d, sort_keys=False))
    Path("reader.cpp").write_text(READER.replace(
        "    uint32_t num_tiles = get_arg_val<uint32_t>(1);\n",
        "    uint32_t num_tiles = get_arg_val<uint32_t>(1);\n    uint32_t start_id = get_arg_val<uint32_t>(2);\n").replace(
        "for (uint32_t i = 0; i < num_tiles; ++i) {", "for (uint32_t i = start_id; i < start_id + num_tiles; i += 2) {"))
    assert main(["explain", str(host), "-q", "--no-cache", "-o", "ex"]) == 1
    out = capsys.readouterr().out.splitlines()
    # the push is the schedule's third step: its read is still in flight there (no landing step before it)
    assert ("      #2 (0,0).reader at ops[0].body[2] (reader_helpers.hpp:9, called at reader.cpp:12; i = 4) push(in, 1) "
            "i=0   <-- here") in out


def test_refusal_in_a_helper_names_the_kernels_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """What the reading refuses inside an included helper is at the header's line and names the kernel's call."""
    host = _project(tmp_path, monkeypatch)
    Path("reader_helpers.hpp").write_text(HELPERS.replace("    cb_push_back(cb, 1);",
                                                          "    fabric_async_write(cb);\n    cb_push_back(cb, 1);"))
    assert main(["certify", str(host), "-q", "--no-cache"]) == 2
    assert capsys.readouterr().err == (
        "verispatial: error: reader_helpers.hpp:9: call to fabric_async_write (not modelled and not defined in the "
        "kernel or a followed header): not read by the tt-metal front end: fabric_async_write(cb); (called at "
        "reader.cpp:11: read_one_tile(0, s, i);)\n")
