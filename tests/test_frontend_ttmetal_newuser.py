"""A new user's small adversarial kernels against the tt-metal front end (2026-12-06, branch ``newuser``): a one-core
pipeline reader -> c_0 -> compute -> c_16 -> writer whose reader is written here with the construct under test, and
whose compute and writer consume exactly ``n`` pages. Each reader pushes a known number of pages, so the expected
verdict is C++'s: proved when it pushes at least ``n`` filled pages in order, refuted (deadlock, or a push past the
reserved window) when it does not; what the reading cannot follow is refused by name at its file:line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.cli import main
from verispatial.frontends.ttmetal import Refused, import_host

_HEAD = ('#include "api/dataflow/dataflow_api.h"',
         "void kernel_main() {",
         "    uint32_t src_addr = get_arg_val<uint32_t>(0);",
         "    uint32_t start_id = get_arg_val<uint32_t>(2);",
         "    const auto s = TensorAccessor(TensorAccessorArgs<0>(), src_addr, 2048);")
#: the line of the reader's first body statement
FIRST = len(_HEAD) + 1
#: one page of src read into c_0 and published
PUSH = ("cb_reserve_back(0, 1); noc_async_read_tile(start_id, s, get_write_ptr(0)); noc_async_read_barrier(); "
        "cb_push_back(0, 1);")

_COMPUTE = """#include "api/compute/tile_move_copy.h"
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    copy_tile_to_dst_init_short(0);
    for (uint32_t b = 0; b < n; ++b) {
        cb_wait_front(0, 1);
        cb_reserve_back(16, 1);
        tile_regs_acquire();
        copy_tile(0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, 16);
        tile_regs_release();
        cb_pop_front(0, 1);
        cb_push_back(16, 1);
    }
}
"""
_WRITER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(1);
    const auto s = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(16, 1);
        noc_async_write_tile(i, s, get_read_ptr(16));
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
"""


def _pipeline(tmp_path: Path, body: tuple[str, ...], n: int, files: dict[str, str] | None = None,
              top: tuple[str, ...] = ()) -> Path:
    """The host of the pipeline: ``top`` lines before the reader's ``kernel_main``, ``body`` its statements after
    ``_HEAD``; ``files`` more files beside the kernels; compute and writer move ``n`` pages."""
    (tmp_path / "reader.cpp").write_text("\n".join([*top, *_HEAD, *body, "}", ""]))
    (tmp_path / "compute.cpp").write_text(_COMPUTE)
    (tmp_path / "writer.cpp").write_text(_WRITER)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    host: dict[str, Any] = {
        "format": "verispatial.ttmetal-host", "version": 1, "name": "newuser", "kernel_root": str(tmp_path),
        "tensors": [{"name": "src", "shape": [64, 256], "dtype": "bf16", "role": "input"},
                    {"name": "dst", "shape": [64, 256], "dtype": "bf16", "role": "state"}],
        "buffers": [{"name": "in", "index": 0, "entry_size": 2048, "entries": 2, "data_format": "bf16"},
                    {"name": "out", "index": 16, "entry_size": 2048, "entries": 2, "data_format": "bf16"}],
        "kernels": [{"name": "reader", "source": "reader.cpp", "processor": "reader", "noc": 1,
                     "runtime_args": ["src_addr", "n", "start_id"]},
                    {"name": "compute", "source": "compute.cpp", "processor": "compute", "runtime_args": ["n"]},
                    {"name": "writer", "source": "writer.cpp", "processor": "writer", "noc": 0,
                     "runtime_args": ["dst_addr", "n"]}],
        "work_units": [{"cores": "0,0", "kernels": ["reader", "compute", "writer"],
                        "runtime_args": {"reader": {"src_addr": {"tensor": "src"}, "n": n, "start_id": 0},
                                         "compute": {"n": n},
                                         "writer": {"dst_addr": {"tensor": "dst"}, "n": n}}}]}
    path = tmp_path / "host.yaml"  # JSON is YAML
    path.write_text(json.dumps(host))
    return path


def _verdict(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, set[str]]:
    """certify's exit code and, per refutation, its counterexample's kind (``deadlock``) or its violation's rule."""
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    cexs = [r["counterexample"] for r in json.loads(capsys.readouterr().out)["results"] if r["verdict"] == "refuted"]
    return rc, {c["violation"]["rule"] if "violation" in c else c["kind"] for c in cexs}


def _refused(path: Path, construct: str, file: str, line: int) -> Refused:
    with pytest.raises(Refused, match=construct) as e:
        import_host(path)
    assert (e.value.loc.file, e.value.loc.line) == (file, line), e.value
    return e.value


# --- #include inside a body -------------------------------------------------------------------------------------

def test_an_include_inside_a_loop_body_is_refused(tmp_path: Path) -> None:
    """The preprocessor pastes ``extra.inc``'s second push into the loop: the kernel pushes two pages per reserve
    (``cb-push-uncovered``). The reading followed the header as a unit of its own, dropped its statement and proved
    the kernel; now the include is refused at its line."""
    body = ("    for (uint32_t j = 0; j < 2; ++j) {",
            "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(start_id + j, s, get_write_ptr(0));",
            "        noc_async_read_barrier();",
            '#include "extra.inc"',
            "        cb_push_back(0, 1);",
            "    }")
    e = _refused(_pipeline(tmp_path, body, 2, {"extra.inc": "cb_push_back(0, 1);\n"}),
                 "#include inside a body", "reader.cpp", FIRST + 4)
    assert "compound statement" in e.detail


def test_the_same_push_written_in_place_is_refuted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the include above stands for, written out: refuted, as the refused kernel would have to be."""
    body = ("    for (uint32_t j = 0; j < 2; ++j) {",
            "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(start_id + j, s, get_write_ptr(0));",
            "        noc_async_read_barrier();",
            "        cb_push_back(0, 1);",
            "        cb_push_back(0, 1);",
            "    }")
    rc, rules = _verdict(_pipeline(tmp_path, body, 2), capsys)
    assert rc == 1
    assert "cb-push-uncovered" in rules


def test_an_include_inside_an_initializer_is_refused(tmp_path: Path) -> None:
    """``const uint32_t counts[] = {\\n#include "counts.inc"\\n};`` (an X-macro table): its elements are the header's
    text, which the reading would not see (an empty table)."""
    top = ("const uint32_t counts[] = {", '#include "counts.inc"', "};")
    body = ("    for (uint32_t j = 0; j < counts[0]; ++j) {", f"        {PUSH}", "    }")
    _refused(_pipeline(tmp_path, body, 2, {"counts.inc": "2, 3\n"}, top), "#include inside a body", "reader.cpp", 2)


def test_an_include_at_file_scope_and_in_a_namespace_is_read(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A helper header of definitions, included at file scope (twice: the guard keeps one) and inside a namespace,
    is read as before: proved with 3 pages pushed and consumed, refuted with 4 consumed."""
    helper = "#ifndef PUSH_H\n#define PUSH_H\ntemplate <typename A>\nvoid push_one(const A& s, uint32_t start_id) {\n" \
             f"    {PUSH}\n}}\n#endif\n"
    top = ('#include "push.hpp"', '#include "push.hpp"', "namespace ns {", '#include "three.hpp"', "}")
    body = ("    for (uint32_t j = 0; j < ns::kThree; ++j) {", "        push_one(s, start_id);", "    }")
    files = {"push.hpp": helper, "three.hpp": "constexpr uint32_t kThree = 3;\n"}
    assert _verdict(_pipeline(tmp_path, body, 3, files, top), capsys) == (0, set())
    rc, rules = _verdict(_pipeline(tmp_path, body, 4, files, top), capsys)
    assert (rc, rules) == (1, {"deadlock"})


# --- #error ----------------------------------------------------------------------------------------------------

def test_a_taken_error_directive_is_refused(tmp_path: Path) -> None:
    """GCC stops at a taken ``#error``: there is no kernel to certify (ttnn's hybrid_merged_prologue.hpp:21-24 uses
    one to stop a build whose arguments would be read at base 0). The reading went on past it."""
    top = ("#ifndef NEEDED", '#error "NEEDED must be defined by the program factory"', "#endif")
    e = _refused(_pipeline(tmp_path, (f"    {PUSH}",), 1, top=top), "#error", "reader.cpp", 2)
    assert "NEEDED must be defined" in e.detail


def test_an_error_directive_in_a_skipped_group_is_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = ("#define NEEDED 1", "#ifndef NEEDED", '#error "NEEDED must be defined"', "#endif")
    assert _verdict(_pipeline(tmp_path, (f"    {PUSH}",), 1, top=top), capsys) == (0, set())


# --- the DST hand-over between MATH and PACK ------------------------------------------------------------------------

def _compute_body(*section: str) -> str:
    """The pipeline's compute kernel with ``section`` (between the waits and the pops) as its per-page DST work."""
    return "\n".join(['#include "api/compute/tile_move_copy.h"', "void kernel_main() {",
                      "    uint32_t n = get_arg_val<uint32_t>(0);", "    copy_tile_to_dst_init_short(0);",
                      "    for (uint32_t b = 0; b < n; ++b) {",
                      "        cb_wait_front(0, 1);", "        cb_reserve_back(16, 1);",
                      *(f"        {x}" for x in section),
                      "        cb_pop_front(0, 1);", "        cb_push_back(16, 1);", "    }", "}", ""])


def _with_compute(tmp_path: Path, *section: str) -> Path:
    path = _pipeline(tmp_path, ("    for (uint32_t j = 0; j < 2; ++j) {", f"        {PUSH}", "    }"), 2)
    (tmp_path / "compute.cpp").write_text(_compute_body(*section))
    return path


#: the line of the section's first statement in ``_compute_body``
SECTION = 8


@pytest.mark.parametrize(("section", "construct", "line"), [
    # no hand-over at all: PACK packs DST while MATH may still be writing it
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "pack_tile(0, 16);", "tile_regs_release();"),
     "pack before tile_regs_wait", SECTION + 2),
    # MATH commits before its compute: the compute writes the section PACK is already packing
    (("tile_regs_acquire();", "tile_regs_commit();", "copy_tile(0, 0, 0);", "tile_regs_wait();", "pack_tile(0, 16);",
      "tile_regs_release();"), "compute after tile_regs_commit", SECTION + 2),
    # PACK never waits: its pack races MATH's copy
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "pack_tile(0, 16);",
      "tile_regs_release();"), "pack before tile_regs_wait", SECTION + 3),
    # MATH never commits: PACK's wait never returns (llk_packer_wait_for_math_done)
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_wait();", "pack_tile(0, 16);",
      "tile_regs_release();"), "tile_regs_release without the DST hand-over", SECTION + 4),
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "tile_regs_commit();",
      "tile_regs_wait();", "pack_tile(0, 16);", "tile_regs_release();"), "tile_regs_commit twice", SECTION + 3),
    # the deprecated pair: release_dst is MATH's commit and PACK's release; a commit before it is a second one
    (("acquire_dst();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "pack_tile(0, 16);", "release_dst();"),
     "compute after tile_regs_commit|tile_regs_release without the DST hand-over", SECTION + 4),
])
def test_a_section_out_of_the_dst_hand_over_is_refused(tmp_path: Path, section: tuple[str, ...], construct: str,
                                                       line: int) -> None:
    """api/compute/reg_api.h:41-110: MATH computes between ``tile_regs_acquire`` and ``tile_regs_commit``, PACK packs
    between ``tile_regs_wait`` and ``tile_regs_release``. Each section here was proved until 2026-12-06: the reading
    kept the hand-over's state and never looked at it."""
    _refused(_with_compute(tmp_path, *section), construct, "compute.cpp", line)


@pytest.mark.parametrize("section", [
    ("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "tile_regs_wait();", "pack_tile(0, 16);",
     "tile_regs_release();"),
    # each TRISC runs only its own calls: PACK's wait may stand before MATH's compute and commit in the source
    ("tile_regs_acquire();", "tile_regs_wait();", "copy_tile(0, 0, 0);", "pack_tile(0, 16);", "tile_regs_commit();",
     "tile_regs_release();"),
    ("acquire_dst();", "copy_tile(0, 0, 0);", "pack_tile(0, 16);", "release_dst();"),
    # a second wait returns at once (layernorm_sharded.cpp:521-525 waits twice in one section)
    ("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_wait();", "tile_regs_commit();", "tile_regs_wait();",
     "pack_tile(0, 16);", "tile_regs_release();"),
])
def test_a_section_in_the_dst_hand_over_is_proved(tmp_path: Path, section: tuple[str, ...],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert _verdict(_with_compute(tmp_path, *section), capsys) == (0, set())


@pytest.mark.parametrize(("section", "line"), [
    # one pack past the page reserved, after the in-order one (a new user's c_pack_extra: refused at the next
    # iteration's first pack, a line the kernel's author did not get wrong)
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "tile_regs_wait();", "pack_tile(0, 16);",
      "pack_tile(0, 16);", "tile_regs_release();"), SECTION + 5),
    # the same by its index (pack_tile<true>, llk_pack_common_api.h:93-95) at the next tile, past the one reserved
    (("tile_regs_acquire();", "copy_tile(0, 0, 0);", "tile_regs_commit();", "tile_regs_wait();", "pack_tile(0, 16);",
      "pack_tile<true>(0, 16, 1);", "tile_regs_release();"), SECTION + 5),
])
def test_a_pack_past_the_reserved_pages_is_refused_at_its_line(tmp_path: Path, section: tuple[str, ...],
                                                               line: int) -> None:
    """The packer writes wherever its position points: a pack past the reserved page writes a page the consumer may
    still read (cb-write-unreserved). The refusal names the pack that runs past, not a later one."""
    e = _refused(_with_compute(tmp_path, *section), "pack past the reserved pages", "compute.cpp", line)
    assert "tile 1 from out's write pointer, past the 1 reserved at compute.cpp:7" in str(e)

# --- Semaphore.up of the own word -----------------------------------------------------------------------------------

def _semup_host(tmp_path: Path, remote: bool, want: int) -> Path:
    """(0,0)'s reader ``s.up(1)`` of its own word; with ``remote`` (1,0) increments the same word over the NoC;
    (0,0)'s writer waits for ``want`` and resets it."""
    kernels = {
        "local_up": ('#include "api/semaphore.h"', "void kernel_main() {",
                     "    Semaphore s(get_arg_val<uint32_t>(0));", "    s.up(1);", "    noc_async_atomic_barrier();",
                     "}"),
        "waiter": ("void kernel_main() {", "    volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr "
                   "uint32_t*>(get_semaphore(get_arg_val<uint32_t>(0)));",
                   f"    noc_semaphore_wait(w, {want});", "    noc_semaphore_set(w, 0);", "}"),
        "remote": ("void kernel_main() {",
                   "    noc_semaphore_inc(get_noc_addr(0, 0, get_semaphore(get_arg_val<uint32_t>(0))), 1);",
                   "    noc_async_atomic_barrier();", "}")}
    for name, lines in kernels.items():
        (tmp_path / f"{name}.cpp").write_text("\n".join(['#include "api/dataflow/dataflow_api.h"', *lines, ""]))
    arg = {"sem_id": {"semaphore": "w"}}
    units: list[dict[str, Any]] = [{"cores": "0,0", "kernels": ["local_up", "waiter"],
                                    "runtime_args": {"local_up": arg, "waiter": arg}}]
    if remote:
        units.append({"cores": "1,0", "kernels": ["remote"], "runtime_args": {"remote": arg}})
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "semup", "kernel_root": str(tmp_path),
            "semaphores": [{"name": "w", "initial_value": 0, "cores": "0,0-1,0"}],
            "kernels": [{"name": k, "source": f"{k}.cpp", "processor": p, "noc": noc, "runtime_args": ["sem_id"]}
                        for k, p, noc in (("local_up", "reader", 0), ("waiter", "writer", 1), ("remote", "writer", 1))],
            "work_units": units}
    (tmp_path / "host.yaml").write_text(json.dumps(host))
    return tmp_path / "host.yaml"


def test_a_local_semaphore_up_losing_a_remote_increment_is_refuted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On Wormhole ``up(1)`` is ``*p += 1`` (LOCAL_NONATOMIC, api/dataflow/semaphore_dm_impl.h:79-93): (1,0)'s
    increment may land between its load and its store and be lost, and the waiter hangs. Read as an atomic
    ``SemInc`` (with an atomic barrier after it) the program was proved; then refused by name; now read as a
    ``SemRmw`` and refuted (``sem-rmw-race``, at local_up.cpp:5, replayed by the interpreter)."""
    path = _semup_host(tmp_path, True, 2)
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    res = json.loads(capsys.readouterr().out)["results"]
    race = [r for r in res if r["verdict"] == "refuted" and r["name"].startswith("sem-rmw-race:")]
    assert rc == 1
    assert race, res
    assert "local_up.cpp:5" in json.dumps(race[0])


def test_a_local_semaphore_up_no_other_core_writes_is_proved(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The same without the remote incrementer: nothing else writes the word while the up runs (the waiter's reset
    follows its wait for the up's store), proved; waiting for 2 hangs (refuted)."""
    assert _verdict(_semup_host(tmp_path, False, 1), capsys) == (0, set())
    assert _verdict(_semup_host(tmp_path, False, 2), capsys) == (1, {"deadlock"})


@pytest.mark.parametrize("target", ["wormhole_b0", "blackhole"])
def test_a_semaphore_in_a_compute_kernel_is_refused_at_its_line(tmp_path: Path, target: str) -> None:
    """``Semaphore s(get_arg_val<uint32_t>(0)); s.up(1);`` in a compute kernel: a compile error (a compute semaphore
    from a runtime id is a static_assert, api/semaphore.h:60-70), and a compute binding is the Tensix Sync Unit's
    semaphore, not the L1 word (COMPUTE_ATOMIC, semaphore.h:25-27; Wormhole implements none, :40-42). The up was read
    as the data-movement SemRmw of the L1 word and validate said 'program (0,0).compute ops[0] SemRmw: sem_rmw is a
    data-movement op'."""
    host = _semup_host(tmp_path, False, 1)
    h = json.loads(host.read_text())
    h["target"] = target
    for k in h["kernels"]:
        if k["name"] == "local_up":
            k["processor"] = "compute"
            del k["noc"]
    host.write_text(json.dumps(h))
    src = (tmp_path / "local_up.cpp").read_text()
    (tmp_path / "local_up.cpp").write_text(src.replace("    noc_async_atomic_barrier();\n", ""))
    e = _refused(host, "Semaphore in a compute kernel", "local_up.cpp", 4)
    assert "api/semaphore.h" in e.detail


# --- a '!=' loop whose bound is behind its start ------------------------------------------------------------------

@pytest.mark.parametrize("loop", ["for (uint32_t i = 5; i != 2; i++) {", "for (uint32_t i = 2; i != 5; i--) {",
                                  "for (uint32_t i = 6; i != 2; i += 2) {"])
def test_a_not_equal_loop_behind_its_bound_is_refused(tmp_path: Path, loop: str) -> None:
    """The index starts past its bound and wraps: about 2**32 iterations, each a push into a two-page ring no one
    drains (n = 0), so the reader hangs. The reading counted no iteration and proved the program."""
    body = (f"    {loop}", f"        {PUSH}", "    }")
    _refused(_pipeline(tmp_path, body, 0), "for loop whose '!=' bound is stepped over", "reader.cpp", FIRST)


def test_a_not_equal_loop_ahead_of_its_bound_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    for (uint32_t i = 2; i != 5; i++) {", f"        {PUSH}", "    }")
    assert _verdict(_pipeline(tmp_path, body, 3), capsys) == (0, set())
    assert _verdict(_pipeline(tmp_path, body, 4), capsys) == (1, {"deadlock"})


# --- SARIF: a consequence relates its finding's source line -------------------------------------------------------

def test_a_consequence_relates_the_source_line_of_its_finding(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A push with no read barrier in a helper header: the finding (``async-read-publish``) is reported at
    push.hpp:6, and the failures to prove it explains relate that place. They related the finding's op in the
    program's document instead, which for a host description is its line 1."""
    helper = ("#pragma once\ntemplate <typename A>\nvoid push_one(const A& s, uint32_t id) {\n"
              "    cb_reserve_back(0, 1);\n    noc_async_read_tile(id, s, get_write_ptr(0));\n"
              "    cb_push_back(0, 1);\n}\n")
    path = _pipeline(tmp_path, ("    for (uint32_t j = 0; j < 2; ++j) { push_one(s, start_id + j); }",), 2,
                     {"push.hpp": helper}, ('#include "push.hpp"',))
    sarif = tmp_path / "out.sarif"
    assert main(["certify", str(path), "-q", "--no-cache", "--sarif", str(sarif)]) == 1
    capsys.readouterr()
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    finding = next(r for r in results if r["properties"]["obligation"].startswith("async-read-publish"))
    at = finding["locations"][0]["physicalLocation"]
    assert (at["artifactLocation"]["uri"], at["region"]["startLine"]) == ("push.hpp", 6)
    consequences = [r for r in results if r["properties"].get("consequenceOf") == finding["properties"]["obligation"]]
    assert consequences
    for r in consequences:
        assert [x["physicalLocation"] for x in r["relatedLocations"]] == [at]


# --- static_assert --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("top", "body", "line"), [
    ((), ("    constexpr uint32_t k = 2;", '    static_assert(k > 4, "k must exceed 4");', f"    {PUSH}"), FIRST + 1),
    (("constexpr uint32_t kPages = 3;", 'static_assert(kPages % 2 == 0, "pages come in pairs");'), (f"    {PUSH}",), 2),
])
def test_a_static_assert_folded_false_is_refused(tmp_path: Path, top: tuple[str, ...], body: tuple[str, ...],
                                                 line: int) -> None:
    """GCC builds no kernel whose ``static_assert`` fails under the host's arguments (as for a taken ``#error``);
    the reading passed over every ``static_assert`` and proved the kernel."""
    e = _refused(_pipeline(tmp_path, body, 1, top=top), "static_assert failed", "reader.cpp", line)
    assert "is false" in e.detail


def test_a_static_assert_true_or_not_folded_is_passed_over(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    body = ("    constexpr uint32_t k = 2;", '    static_assert(k < 4, "k is small");',
            '    static_assert(std::is_trivially_copyable_v<decltype(s)>, "not folded");', f"    {PUSH}")
    assert _verdict(_pipeline(tmp_path, body, 1), capsys) == (0, set())


def test_a_computed_include_is_refused(tmp_path: Path) -> None:
    """``#include HDR`` with ``#define HDR "extra.inc"``: GCC includes the file the macro names; the reading matched
    only ``"..."`` and ``<...>`` and passed the directive over (here: a second push into the loop, dropped)."""
    body = ("    for (uint32_t j = 0; j < 2; ++j) {", "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(start_id + j, s, get_write_ptr(0));", "        noc_async_read_barrier();",
            '#define HDR "extra.inc"', "#include HDR", "        cb_push_back(0, 1);", "    }")
    _refused(_pipeline(tmp_path, body, 2, {"extra.inc": "cb_push_back(0, 1);\n"}), "computed #include", "reader.cpp",
             FIRST + 5)


@pytest.mark.parametrize("comment", ["// the reads are not waited for", "/* the reads are not waited for */"])
def test_an_undef_with_a_comment_undefines(tmp_path: Path, comment: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``#undef WAIT_READS  // ...`` undefines it (comments are removed before directives are read): the barrier under
    ``#ifdef WAIT_READS`` is not built and the push publishes a tile still landing. The reading kept the macro
    defined (it looked for a macro named with the comment) and proved the kernel."""
    top = ("#define WAIT_READS 1", f"#undef WAIT_READS  {comment}")
    body = ("    for (uint32_t j = 0; j < 2; ++j) {", "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(j, s, get_write_ptr(0));", "#ifdef WAIT_READS",
            "        noc_async_read_barrier();", "#endif", "        cb_push_back(0, 1);", "    }")
    rc, rules = _verdict(_pipeline(tmp_path, body, 2, top=top), capsys)
    assert rc == 1
    assert "async-read-publish" in rules


def test_ifdef_and_undef_name_their_first_token() -> None:
    """GCC reads ``#ifdef X extra`` as ``#ifdef X`` (a warning for the extra tokens), and ``#undef X junk`` undefines
    X; the reading looked for a macro named ``X extra`` and skipped a group GCC builds."""
    from verispatial.frontends.ttmetal.preprocess import host_macros, preprocess

    out = preprocess("\n".join(["#define X 1", "#ifdef X extra", "y();", "#endif", "#undef X junk", "#ifndef X",
                                "z();", "#endif"]), host_macros({}), "k.cpp").text.split("\n")
    assert (out[2], out[6]) == ("y();", "z();")
