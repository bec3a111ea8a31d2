"""A second new user's attack on what changed on 2026-12-06 (branch ``newuser2``): near-misses of the front end's new
refusals that must still read (and prove when correct), a ``static_assert`` GCC evaluates off the read path, and the
host argument a counterexample names replayed by hand (the printed value put into the host file as a number: still
refuted). The kernels are the one-core pipeline of ``test_frontend_ttmetal_newuser`` (reader -> c_0 -> compute ->
c_16 -> writer, compute and writer consuming exactly ``n`` pages) and the reader/helper/writer of
``test_frontend_ttmetal_cexargs``."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from tests.test_frontend_ttmetal_cexargs import HELPERS, HOST, READER, WRITER  # noqa: E402
from tests.test_frontend_ttmetal_newuser import PUSH, _pipeline, _refused, _verdict  # noqa: E402
from verispatial.cli import main  # noqa: E402

LOOP2 = ("    for (uint32_t j = 0; j < 2; ++j) {", f"        {PUSH}", "    }")


# --- near-misses of the new refusals: read, and proved when correct ------------------------------------------------

@pytest.mark.parametrize(("body", "n", "want"), [
    # '!=' loops whose bound is not behind the start
    (("    for (uint32_t i = 5; i != 5; ++i) {", f"        {PUSH}", "    }"), 0, (0, set())),
    (("    for (uint32_t i = 5; i != 2; --i) {", f"        {PUSH}", "    }"), 3, (0, set())),
    (("    for (uint32_t i = 5; i != 2; --i) {", f"        {PUSH}", "    }"), 4, (1, {"deadlock"})),
    (("    for (uint32_t i = 0; i != 4; i += 2) {", f"        {PUSH}", "    }"), 2, (0, set())),
    (("    for (uint32_t i = 0; 3 != i; ++i) {", f"        {PUSH}", "    }"), 3, (0, set())),
    # #include and #error in groups GCC skips
    (("    for (uint32_t j = 0; j < 2; ++j) {", "#if 0", '#include "extra.inc"', "#endif", f"        {PUSH}", "    }"),
     2, (0, set())),
    (("#if 1", *LOOP2, "#else", "#error not this branch", "#endif"), 2, (0, set())),
    (('    const char* msg = "#error in a string";', *LOOP2), 2, (0, set())),
], ids=["ne-no-iteration", "ne-down", "ne-down-short", "ne-step-2-lands", "ne-bound-first", "include-if0",
        "error-else", "error-in-string"])
def test_a_near_miss_of_a_refusal_is_read(tmp_path: Path, body: tuple[str, ...], n: int, want: tuple[int, set[str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _pipeline(tmp_path, body, n, {"extra.inc": "cb_push_back(0, 1);\n"})
    assert _verdict(path, capsys) == want


@pytest.mark.parametrize(("top", "extra", "n", "want"), [
    # #undef with a comment, in several spellings: the group under #ifdef is skipped, the one under #ifndef read
    (("#define EXTRA 1", "#undef EXTRA // gone"), "#ifdef EXTRA", 2, (0, set())),
    (("#define EXTRA 1", "#undef EXTRA/*x*/"), "#ifndef EXTRA", 4, (0, set())),
    (("#define EXTRA 1", "#undef \\", "EXTRA"), "#ifndef EXTRA", 4, (0, set())),
    (("#define EXTRA 1", "#undef EXTRA // gone"), "#if defined(EXTRA)", 2, (0, set())),
    (("#define EXTRA // defined, empty",), "#ifdef EXTRA", 4, (0, set())),
    (("#define EXTRA // defined, empty",), "#ifdef EXTRA", 5, (1, {"deadlock"})),
], ids=["undef-comment", "undef-block-comment", "undef-continued", "undef-defined", "define-comment",
        "define-comment-short"])
def test_undef_and_define_with_comments(tmp_path: Path, top: tuple[str, ...], extra: str, n: int,
                                        want: tuple[int, set[str]], capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    for (uint32_t j = 0; j < 2; ++j) {", f"        {PUSH}", extra, f"        {PUSH}", "#endif", "    }")
    assert _verdict(_pipeline(tmp_path, body, n, top=top), capsys) == want


def test_an_include_at_namespace_scope_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A namespace body is no function body: its header's constant is ``cfg::K`` (2 pushes: 2 proved, 3 hang)."""
    body = ("    for (uint32_t j = 0; j < cfg::K; ++j) {", f"        {PUSH}", "    }")
    files = {"consts.hpp": "constexpr uint32_t K = 2;\n"}
    top = ("namespace cfg {", '#include "consts.hpp"', "}")
    assert _verdict(_pipeline(tmp_path, body, 2, files, top), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, 3, files, top), capsys) == (1, {"deadlock"})


# --- a static_assert off the read path ----------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "top", "line"), [
    (("    if (false) {", "        static_assert(1 == 2);", "    }", *LOOP2), (), 7),
    (("    if (start_id == 7) {", "        static_assert(1 == 2);", "    }", *LOOP2), (), 7),  # start_id is 0
    (("    for (uint32_t z = 0; z < 0; ++z) {", "        static_assert(false, \"never\");", "    }", *LOOP2), (), 7),
    ((*LOOP2, "    return;", "    static_assert(0);"), (), 10),
    (LOOP2, ("inline void unused() { static_assert(1 == 2); }",), 1),
], ids=["if-false", "if-host-value", "no-iteration", "after-return", "uncalled-function"])
def test_a_false_static_assert_off_the_read_path_is_refused(tmp_path: Path, body: tuple[str, ...],
                                                            top: tuple[str, ...], line: int) -> None:
    """GCC evaluates a static_assert in a non-template body wherever it stands (g++ -std=c++17: 'static assertion
    failed' for each of these): no kernel is built. The reading saw only those on the path it read, and proved
    these kernels (which push their 2 pages)."""
    _refused(_pipeline(tmp_path, body, 2, top=top), "static_assert failed", "reader.cpp", line)


@pytest.mark.parametrize(("body", "top"), [
    (("    if (false) {", "        static_assert(1 == 1);", "    }", *LOOP2), ()),
    # a template's discarded branch is not instantiated
    (("    helper<2>();", *LOOP2),
     ("template <uint32_t N>", "void helper() {", "    if constexpr (N == 3) { static_assert(false); }", "}")),
], ids=["true", "template-discarded"])
def test_a_static_assert_gcc_passes_is_no_refusal(tmp_path: Path, body: tuple[str, ...], top: tuple[str, ...],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert _verdict(_pipeline(tmp_path, body, 2, top=top), capsys) == (0, set())


@pytest.mark.parametrize(("body", "line"), [
    (("    constexpr uint32_t k = 2;", "    if constexpr (k == 3) {", "        static_assert(k == 3);", "    }", *LOOP2), 8),
    (("    constexpr uint32_t k = 2;", "    if constexpr (k == 2) {", "    } else {", "        static_assert(k == 3);",
      "    }", *LOOP2), 9),
], ids=["then", "else"])
def test_a_false_static_assert_naming_a_constant_in_a_branch_not_taken_is_refused(tmp_path: Path,
                                                                                 body: tuple[str, ...],
                                                                                 line: int) -> None:
    """``if constexpr`` discards nothing outside a template: GCC fails ``static_assert(k == 3)`` with ``k`` 2."""
    _refused(_pipeline(tmp_path, body, 2), "static_assert failed", "reader.cpp", line)


def test_a_static_assert_of_a_name_its_branch_declares_is_left_to_that_branch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The branch's own ``k`` (3) shadows the outer one (2): GCC passes it (g++ -std=c++17 builds this); folded in
    the scope of the ``if`` it would read 2 and refuse a kernel GCC builds."""
    body = ("    constexpr uint32_t k = 2;", "    if constexpr (k == 3) {", "        constexpr uint32_t k = 3;",
            "        static_assert(k == 3);", "    }", *LOOP2)
    assert _verdict(_pipeline(tmp_path, body, 2), capsys) == (0, set())


# --- the host argument a counterexample names, replayed by hand ---------------------------------------------------

def _set(d: Any, field: str, value: int) -> None:
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", field)
    for part in parts[:-1]:
        d = d[int(part[1:-1])] if part.startswith("[") else d[part]
    last = parts[-1]
    if last.startswith("["):
        d[int(last[1:-1])] = value
    else:
        d[last] = value


def _certify(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    rc = main(["certify", "host.yaml", "-q", "--no-cache", "--json"])
    return rc, [r for r in json.loads(capsys.readouterr().out)["results"] if r["verdict"] == "refuted"]


def _host_reader_range(lo_hi: str) -> dict[str, Any]:
    d = yaml.safe_load(HOST)
    d["tensors"][0]["shape"] = [32, 256]
    d["work_units"][0]["runtime_args"]["reader"]["num_tiles"] = lo_hi
    return d


def _host_two_ranges() -> dict[str, Any]:
    d = _host_reader_range("5..6")
    d["tensors"][1].update(shape=[32, 256], role="activation")
    d["work_units"][0]["runtime_args"]["reader"]["num_tiles"] = {"range": "5..6", "trip": "r"}
    d["work_units"][0]["runtime_args"]["writer"]["num_tiles"] = {"range": "3..7", "trip": "w"}
    return d


def _host_named_ct() -> dict[str, Any]:
    d = yaml.safe_load(HOST)
    d["kernels"][1].update(runtime_args=["dst_addr"], named_compile_time_args={"n_out": "2..5"})
    d["work_units"][0]["runtime_args"] = {"reader": {"src_addr": {"tensor": "src"}, "num_tiles": 4},
                                          "writer": {"dst_addr": {"tensor": "dst"}}}
    d["tensors"][1]["role"] = "activation"
    return d


def _host_vararg_and_ct() -> dict[str, Any]:
    d = yaml.safe_load(HOST)
    d["kernels"][0].update(runtime_args=["src_addr"], varargs=1)
    d["kernels"][1].update(runtime_args=["dst_addr"], compile_time_args=[7, "3..5"])
    d["tensors"][0]["shape"] = d["tensors"][1]["shape"] = [32, 256]
    d["tensors"][1]["role"] = "activation"
    d["work_units"][0]["runtime_args"] = {"reader": {"src_addr": {"tensor": "src"}},
                                          "writer": {"dst_addr": {"tensor": "dst"}}}
    d["work_units"][0]["varargs"] = {"reader": ["1..6"]}
    return d


_NAMED = WRITER.replace("uint32_t num_tiles = get_arg_val<uint32_t>(1);",
                        'constexpr uint32_t num_tiles = get_named_compile_time_arg_val("n_out");')


@pytest.mark.parametrize(("host", "reader", "writer", "names"), [
    (_host_reader_range("2..6"), READER, WRITER, ["num_tiles"]),
    (_host_two_ranges(), READER, WRITER, ["num_tiles", "num_tiles"]),
    (_host_named_ct(), READER, _NAMED, ["n_out"]),
    (_host_vararg_and_ct(), READER.replace("get_arg_val<uint32_t>(1)", "get_vararg(0)"),
     WRITER.replace("uint32_t num_tiles = get_arg_val<uint32_t>(1);",
                    "constexpr uint32_t num_tiles = get_compile_time_arg_val(1);"),
     ["get_compile_time_arg_val(1)", "get_vararg(0)"]),
], ids=["runtime", "two-trips", "named-compile-time", "vararg-and-positional"])
def test_the_named_value_replayed_as_a_number_is_still_refuted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: dict[str, Any],
        reader: str, writer: str, names: list[str]) -> None:
    """Each refutation's ``host_args`` value, written into the host file in place of its range, is a program the
    checker still refutes in the same family (a reader and a writer disagreeing on the page count: a deadlock)."""
    for name, text in (("reader.cpp", reader), ("reader_helpers.hpp", HELPERS), ("writer.cpp", writer)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    Path("host.yaml").write_text(yaml.safe_dump(host, sort_keys=False))
    rc, refuted = _certify(capsys)
    assert rc == 1
    assert refuted
    for r in refuted:
        args = r["counterexample"]["host_args"]
        assert [a["name"] for a in args] == names
        concrete = copy.deepcopy(host)
        for a in args:
            lo = int(a["range"].split("..")[0])
            assert a["value"] == lo + a["trip_value"] == lo + r["counterexample"]["trips"][a["trip"]]
            for field in a["fields"]:
                _set(concrete, field, a["value"])
        Path("host.yaml").write_text(yaml.safe_dump(concrete, sort_keys=False))
        rc2, again = _certify(capsys)
        assert rc2 == 1
        assert r["family"] in {x["family"] for x in again}, (args, again)


# --- a witness refutation of a host description: its arguments are its replay's --------------------------------

_INC = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t sem_id = get_arg_val<uint32_t>(0);
    uint32_t n = get_arg_val<uint32_t>(1);
    for (uint32_t i = 0; i < n; ++i) {
        noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(sem_id)), 1);
    }
    noc_async_atomic_barrier();
}
"""
_WAITER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t sem_id = get_arg_val<uint32_t>(0);
    uint32_t n = get_arg_val<uint32_t>(1);
    volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_id));
    for (uint32_t i = 0; i < n; ++i) {
        noc_semaphore_wait_min(w, 1);
        noc_semaphore_set(w, 0);
    }
}
"""
_SEM_HOST = """format: verispatial.ttmetal-host
version: 1
name: semh
semaphores:
  - {name: w, initial_value: 0, cores: "0,0-1,0"}
kernels:
  - {name: inc, source: inc.cpp, processor: reader, noc: 0, runtime_args: [sem_id, n]}
  - {name: waiter, source: waiter.cpp, processor: reader, noc: 0, runtime_args: [sem_id, n]}
work_units:
  - cores: "0,0"
    kernels: [inc]
    runtime_args:
      inc: {sem_id: {semaphore: w}, n: "1..3"}
  - cores: "1,0"
    kernels: [waiter]
    runtime_args:
      waiter: {sem_id: {semaphore: w}, n: "1..3"}
"""


def test_a_witness_refutation_relates_its_replays_ranges_in_sarif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """(0,0) increments (1,0)'s word n times, (1,0) waits for it and resets it n times: the lost update is shown by
    the interpreter's run before any wide query (its counterexample has no trips of its own, its replay's are n's).
    The text named the arguments (``arg_lines`` reads the replay's) but SARIF related no range: it read only the
    top level."""
    for name, text in (("inc.cpp", _INC), ("waiter.cpp", _WAITER), ("host.yaml", _SEM_HOST)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["certify", "host.yaml", "-q", "--no-cache", "--sarif", "out.sarif"]) == 1
    out = capsys.readouterr().out.splitlines()
    head = out.index("refuted semaphore/sem-set-race:sem0@(1,0): (1,0).reader resets w@(1,0) at [0, 1] after an "
                     "increment beyond those its wait consumed was issued (lost update)")
    lines = out[head + 1:head + 4]
    assert [ln.split(" from ")[0] for ln in lines[:2]] == ["    n = 3", "    n = 3"]
    assert lines[2] == "    at waiter.cpp:8:9: noc_semaphore_set(w, 0);"
    results = json.loads(Path("out.sarif").read_text())["runs"][0]["results"]
    (res,) = [r for r in results if r["ruleId"] == "sem-set-race"]
    ranges = [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
              for r in res["relatedLocations"] if r["message"]["text"].startswith("n = 3 from host.yaml")]
    assert ranges == [("host.yaml", 13), ("host.yaml", 17)]


# --- what g++ predefines ---------------------------------------------------------------------------------------------

_READ_NO_PUSH = "cb_reserve_back(0, 1); noc_async_read_tile(start_id + j, s, get_write_ptr(0));"


@pytest.mark.parametrize(("guard", "want"), [("#ifndef __cplusplus", (1, {"async-read-publish", "async-pending-at-end"})),
                                             ("#if !defined(__cplusplus) || __cplusplus < 201703L",
                                              (1, {"async-read-publish", "async-pending-at-end"})),
                                             ("#ifdef __cplusplus", (0, set())),
                                             ("#if __cplusplus >= 201703L && defined(__riscv)", (0, set()))])
def test_a_group_under_cplusplus_is_read_as_gcc_builds_it(tmp_path: Path, guard: str, want: tuple[int, set[str]],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The kernel's read barrier sits under a test of ``__cplusplus``, which riscv-tt-elf-g++ always defines (201703L
    under the JIT's ``-std=c++17``). The reading's preprocessor did not define it: under ``#ifndef __cplusplus`` it
    read a barrier GCC never builds and proved a push of pages whose reads may not have landed."""
    body = ("    for (uint32_t j = 0; j < 2; ++j) {", f"        {_READ_NO_PUSH}", guard,
            "        noc_async_read_barrier();", "#endif", "        cb_push_back(0, 1);", "    }")
    assert _verdict(_pipeline(tmp_path, body, 2), capsys) == want


def test_a_c_only_error_guard_is_no_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = ("#ifndef __cplusplus", "#error this header is C++ only", "#endif")
    assert _verdict(_pipeline(tmp_path, LOOP2, 2, top=top), capsys) == (0, set())


def test_a_not_equal_loop_behind_a_ranges_low_end_names_the_low_end(tmp_path: Path) -> None:
    """``for (i = 5; i != nn; ++i)`` with ``nn`` in 3..8: at 3 the index wraps. The refusal said ``at n = 0`` (the
    trip) beside the kernel's arithmetic (3 is 2 below 5): it names the range's low end and its trip."""
    body = ("    uint32_t nn = get_arg_val<uint32_t>(1);", "    for (uint32_t i = 5; i != nn; ++i) {", f"        {PUSH}",
            "    }")
    path = _pipeline(tmp_path, body, 2)
    host = json.loads(path.read_text())
    host["work_units"][0]["runtime_args"]["reader"]["n"] = "3..8"
    path.write_text(json.dumps(host))
    e = _refused(path, "for loop whose '!=' bound is stepped over", "reader.cpp", 7)
    assert e.detail.endswith("i != nn: at the range's low end (trip n = 0) the bound is 2 below the start")


def test_explain_tells_two_kernels_arguments_of_one_name_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The reader's ``num_tiles`` in 5..6 (trip r) and the writer's in 3..7 (trip w): explain's deadlock line said
    ``num_tiles = 6, num_tiles = 7``, naming neither kernel; each is now given with its kernel."""
    for name, text in (("reader.cpp", READER), ("reader_helpers.hpp", HELPERS), ("writer.cpp", WRITER)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    Path("host.yaml").write_text(yaml.safe_dump(_host_two_ranges(), sort_keys=False))
    assert main(["explain", "host.yaml", "-q", "--no-cache", "-o", "ex"]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("    deadlock with ")]
    assert len(lines) == 1
    m = re.match(r"    deadlock with reader\.num_tiles = (\d+), writer\.num_tiles = (\d+) \(trip r=(\d+) w=(\d+)\)",
                 lines[0])
    assert m is not None, lines[0]
    assert (int(m[1]), int(m[2])) == (5 + int(m[3]), 3 + int(m[4]))
    assert m[1] != m[2]


# --- a statement tree-sitter parsed around text it skipped ---------------------------------------------------------

def test_a_statement_with_text_the_parser_skipped_is_refused(tmp_path: Path) -> None:
    """g++: ``uint32_t m = (k = 3, k + 1);`` is 4. tree-sitter parses it as ``m = (k = k + 1)`` around an ``ERROR``
    node holding ``3,``: read as 1, and a reader pushing 4 pages proved against consumers of 1."""
    body = ("    uint32_t k = 0;", "    uint32_t m = (k = 3, k + 1);", "    for (uint32_t j = 0; j < m; ++j) {",
            f"        {PUSH}", "    }")
    e = _refused(_pipeline(tmp_path, body, 1), "C\\+\\+ the parser could not read", "reader.cpp", 7)
    assert e.detail == "'3,' skipped"


def test_a_comma_expression_the_parser_reads_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    uint32_t k = 1, m = 0;", "    m = (k, 4);", "    for (uint32_t j = 0; j < m; ++j) {", f"        {PUSH}",
            "    }")
    assert _verdict(_pipeline(tmp_path, body, 4), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, 5), capsys) == (1, {"deadlock"})


@pytest.mark.parametrize(("capture", "pages"), [("[c = k]() { return c; }", 2),
                                                ("[c = k]() mutable { return ++c; }", 4)])
def test_a_lambda_init_capture_is_a_copy_made_with_the_lambda(tmp_path: Path, capture: str, pages: int,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """g++: ``[c = k]`` copies k (2) when the lambda is made; a mutable body's copy lives on between calls (3, then
    4). It was refused as c not defined."""
    body = ("    uint32_t k = 2;", f"    auto f = {capture};", "    f();", "    k = 7;", "    uint32_t m = f();",
            "    for (uint32_t j = 0; j < m; ++j) {", f"        {PUSH}", "    }")
    assert _verdict(_pipeline(tmp_path, body, pages), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, pages + 1), capsys) == (1, {"deadlock"})


def test_a_lambda_init_capture_by_reference_is_refused(tmp_path: Path) -> None:
    body = ("    uint32_t k = 2;", "    auto f = [&c = k]() { return c; };", "    uint32_t m = f();",
            "    for (uint32_t j = 0; j < m; ++j) {", f"        {PUSH}", "    }")
    _refused(_pipeline(tmp_path, body, 2), "lambda init-capture by reference", "reader.cpp", 7)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz (Debian graphviz) not installed")
def test_explain_names_a_host_descriptions_pictures_by_its_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Host descriptions are one ``host.yaml`` per directory: two explained from one working directory wrote into one
    ``./host.explain/`` (the second replaced the first's pictures); each is now ``./DIR.host.explain/``."""
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        for name, text in (("reader.cpp", READER), ("reader_helpers.hpp", HELPERS), ("writer.cpp", WRITER)):
            (tmp_path / d / name).write_text(text)
        (tmp_path / d / "host.yaml").write_text(yaml.safe_dump(_host_two_ranges(), sort_keys=False))
    monkeypatch.chdir(tmp_path)
    for d in ("a", "b"):
        assert main(["explain", f"{d}/host.yaml", "-q", "--no-cache"]) == 1
        assert any(Path(f"{d}.host.explain").glob(f"{d}.host.*.svg"))
    capsys.readouterr()
    assert not Path("host.explain").exists()
