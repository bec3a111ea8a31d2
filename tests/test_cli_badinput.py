"""Golden bad-input tests for the CLI (DESIGN §11): one bad file per case under tests/badinput/, each with the
exact one-line message it must produce. Every case exits 2, writes exactly one line on stderr, prints no
traceback, never says "proved", never calls the checker or simulator, and creates no output file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from verispatial.cli import main
from verispatial.errors import CertificateMismatch, ParseError

HERE = Path(__file__).parent
BAD = HERE / "badinput"
VALID = str(BAD / "small_valid.json")
OPS = repr(["reserve", "push", "wait", "pop", "sem_inc", "sem_set", "sem_rmw", "sem_wait", "mcast_send", "mcast_set_valid",
            "read_tiles", "write_tiles", "read_barrier", "write_barrier", "flush", "atomic_barrier", "acquire_acc",
            "compute", "pack_acc", "release_acc", "sem_inc_mcast", "fill_tiles", "inline_write", "remote_read",
            "copy_tiles", "scratch_access", "loop", "if"])


def bad(name: str) -> str:
    return str(BAD / name)


#: (program file, the message after "verispatial: error: <file>: ")
PROGRAM_CASES: list[tuple[str, str]] = [
    (bad("does_not_exist.json"), "no such file"),
    (str(BAD), "is a directory, expected a program.json file"),
    (bad("empty.json"), "the file is empty"),
    (bad("blank.json"), "the file is empty"),
    (bad("truncated.json"), "(document): not valid JSON: Expecting value (line 24, column 4)"),
    (bad("binary.json"), "(document): not UTF-8 text (a binary file?)"),
    # JSON's words for what the document is (it said 'got list', and 'got NoneType' for null)
    (bad("wrong_type_document.json"), "(document): expected a JSON object, got an array"),
    (bad("null_document.json"), "(document): expected a JSON object, got null"),
    (bad("number_document.json"), "(document): expected a JSON object, got a number"),
    (bad("wrong_format.json"), "format: expected 'verispatial.program', got 'tt.program'"),
    (bad("wrong_version.json"), "version: this verispatial reads versions 2 and 3, got 4"),
    (bad("missing_name.json"), "(document): 'name' is a required property"),
    (bad("capacity_string.json"), "buffers[0].capacity: '2' is not of type 'integer'"),
    (bad("capacity_zero.json"), "buffers[0].capacity: 0 is less than the minimum of 1"),
    (bad("site_short.json"), "buffers[0].site: [0] is too short"),
    (bad("negative_trip_max.json"), "trips[0].max: -1 is less than the minimum of 0"),
    (bad("bad_engine.json"), "programs[0].engine: 'dma' is not one of ['reader', 'writer', 'compute']"),
    (bad("pages_zero_in_loop.json"), "programs[0].ops[0].body[3].pages: 0 is less than the minimum of 1"),
    (bad("unknown_op.json"), f"programs[1].ops[0].body[1].op: 'pop_front' is not one of {OPS}"),
    (bad("op_missing_field.json"), "programs[1].ops[0].body[0]: 'pages' is a required property"),
    (bad("op_extra_field.json"),
     "programs[0].ops[0].body[0]: Additional properties are not allowed ('tiles' was unexpected)"),
    (bad("unknown_target.json"), "target: unknown target 'grayskull'; known: blackhole, gpu_sm80, wormhole_b0"),
    (bad("target_object_incomplete.json"), "target: 'tile' is a required property"),
    (bad("structural_one.json"), "program (0,0).compute ops[0] Loop: count 'u' is not a declared trip"),
    (bad("structural_many.json"), "buffer 0 (c_0): site (9,0) is outside the 8x8 mesh (+6 more)"),
    (bad("part_past_page.json"), "program (0,0).reader ops[0].body[1] ReadTiles: part: offset + size = 2064 bytes "
     "passes the end of a page of 'X' (2048 bytes)"),
    # docs/semantics.md: Group.rect lower corner first; the other order was proved as the normalised rectangle
    (bad("group_rect_inverted.json"), "group 0: rect [1, 0, 0, 0] is not lower corner first (x0 <= x1, y0 <= y1): "
     "corners in the other order may be a wrap-around multicast, which the format cannot say (the sites' rectangle "
     "is [0, 0, 1, 0])"),
    (bad("dm_op_on_compute.json"), "program (0,0).compute ops[0].body[1] ReadTiles: read_tiles is a data-movement op "
     "(a NoC transaction or a data-movement RISC's own stores): the compute engine cannot issue it (+1 more)"),
]

STRUCTURAL_MANY = [
    ("buffer 0 (c_0)", "site (9,0) is outside the 8x8 mesh"),
    ("program (0,0).reader ops[0].body[0] Reserve", "buffer 0 lives on (9,0), not on this engine's site (0,0)"),
    ("program (0,0).reader ops[0].body[1] ReadTiles", "buffer 0 lives on (9,0), not on this engine's site (0,0)"),
    ("program (0,0).reader ops[0].body[3] Push", "buffer 0 lives on (9,0), not on this engine's site (0,0)"),
    ("program (0,0).compute ops[0] Loop", "count 'u' is not a declared trip"),
    ("program (0,0).compute ops[0].body[0] Wait", "buffer 0 lives on (9,0), not on this engine's site (0,0)"),
    ("program (0,0).compute ops[0].body[1] Pop", "buffer 0 lives on (9,0), not on this engine's site (0,0)"),
]

STRUCTURAL = {
    "structural_one.json": [("program (0,0).compute ops[0] Loop", "count 'u' is not a declared trip")],
    "structural_many.json": STRUCTURAL_MANY,
    "part_past_page.json": [("program (0,0).reader ops[0].body[1] ReadTiles",
                             "part: offset + size = 2064 bytes passes the end of a page of 'X' (2048 bytes)")],
    "group_rect_inverted.json": [("group 0", "rect [1, 0, 0, 0] is not lower corner first (x0 <= x1, y0 <= y1): "
                                  "corners in the other order may be a wrap-around multicast, which the format cannot "
                                  "say (the sites' rectangle is [0, 0, 1, 0])")],
    "dm_op_on_compute.json": [
        (f"program (0,0).compute ops[0].body[{i}] {cls}", f"{tag} is a data-movement op (a NoC transaction or a "
         "data-movement RISC's own stores): the compute engine cannot issue it")
        for i, cls, tag in ((1, "ReadTiles", "read_tiles"), (2, "ReadBarrier", "read_barrier"))],
}


class Calls:
    """What the fake checker and simulator were asked to do."""

    def __init__(self) -> None:
        self.certify: list[dict[str, Any]] = []
        self.simulate: list[dict[str, Any]] = []
        self.raise_in_certify: BaseException | None = None
        self.raise_in_simulate: BaseException | None = None


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Install a fake ``verispatial.driver.run`` and ``verispatial.petri.interp`` that record their calls;
    on bad input neither may be reached."""
    calls = Calls()
    checker = types.ModuleType("verispatial.driver.run")
    interp = types.ModuleType("verispatial.petri.interp")

    def certify(program: Any, certificate: Any = None, *, jobs: int = 1, progress: Any = None,
                cache: Any = None) -> Any:
        calls.certify.append({"program": program, "certificate": certificate, "jobs": jobs})
        if calls.raise_in_certify is not None:
            raise calls.raise_in_certify
        raise AssertionError("the checker must not be reached in a bad-input test")

    def simulate(program: Any, trips: Any = None, seed: Any = None) -> Any:
        calls.simulate.append({"program": program, "trips": trips, "seed": seed})
        if calls.raise_in_simulate is not None:
            raise calls.raise_in_simulate
        raise AssertionError("the simulator must not be reached in a bad-input test")

    checker.certify = certify  # type: ignore[attr-defined]
    interp.simulate = simulate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "verispatial.driver.run", checker)
    monkeypatch.setitem(sys.modules, "verispatial.petri.interp", interp)
    return calls


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def assert_one_line(err: str, expected: str) -> None:
    assert err == f"verispatial: error: {expected}\n"
    assert "Traceback" not in err


@pytest.mark.parametrize(("path", "message"), PROGRAM_CASES, ids=[Path(p).name for p, _ in PROGRAM_CASES])
@pytest.mark.parametrize("command", ["certify", "simulate", "validate"])
def test_bad_program_is_one_line_exit_2(command: str, path: str, message: str, fakes: Calls,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, [command, path])
    assert rc == 2
    assert_one_line(err, f"{path}: {message}")
    assert "proved" not in out + err
    assert fakes.certify == []
    assert fakes.simulate == []
    if command == "validate" and Path(path).name in STRUCTURAL:
        # validate prints every violation on stdout, one per line.
        assert out.splitlines() == [f"{path}: {e}: {r}" for e, r in STRUCTURAL[Path(path).name]]
    else:
        assert out == ""


@pytest.mark.parametrize(("path", "message"), PROGRAM_CASES, ids=[Path(p).name for p, _ in PROGRAM_CASES])
def test_bad_program_creates_no_output_file(path: str, message: str, fakes: Calls, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    sarif, cert = tmp_path / "out.sarif", tmp_path / "cert.json"
    rc, _out, err = run(capsys, ["certify", path, "--sarif", str(sarif), "--write-certificate", str(cert)])
    assert rc == 2
    assert_one_line(err, f"{path}: {message}")
    assert list(tmp_path.iterdir()) == []


def test_json_flag_gives_every_structural_violation(fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad("structural_many.json")
    rc, out, err = run(capsys, ["certify", path, "--json"])
    assert rc == 2
    assert_one_line(err, f"{path}: buffer 0 (c_0): site (9,0) is outside the 8x8 mesh (+6 more)")
    doc = json.loads(out)
    assert doc == {
        "exit_code": 2,
        "error": {"file": path, "field": "buffer 0 (c_0)", "rule": "site (9,0) is outside the 8x8 mesh",
                  "violations": [{"entity": e, "rule": r} for e, r in STRUCTURAL_MANY], "option": ""},
    }


def test_json_flag_on_parse_error(fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad("capacity_zero.json")
    rc, out, err = run(capsys, ["simulate", path, "--json"])
    assert rc == 2
    assert json.loads(out) == {"exit_code": 2, "error": {
        "file": path, "option": "", "field": "buffers[0].capacity", "rule": "0 is less than the minimum of 1",
        "violations": []}}
    assert_one_line(err, f"{path}: buffers[0].capacity: 0 is less than the minimum of 1")


CERTIFICATE_CASES: list[tuple[str, str]] = [
    (bad("no_such_certificate.json"), "no such file"),
    (str(BAD), "is a directory, expected a certificate JSON file"),
    (bad("empty.json"), "the file is empty"),
    (bad("binary.json"), "(document): not UTF-8 text (a binary file?)"),
    (bad("certificate_truncated.json"), "(document): not valid JSON: Expecting value (line 1, column 13)"),
    (bad("certificate_array.json"), "(document): expected a JSON object (certificate), got an array"),
]


@pytest.mark.parametrize(("path", "message"), CERTIFICATE_CASES, ids=[Path(p).name for p, _ in CERTIFICATE_CASES])
def test_bad_certificate_file(path: str, message: str, fakes: Calls, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    sarif = tmp_path / "out.sarif"
    rc, out, err = run(capsys, ["certify", VALID, "--certificate", path, "--sarif", str(sarif)])
    assert rc == 2
    assert_one_line(err, f"--certificate {path}: {message}")  # the file named with the option that gave it
    assert out == ""
    assert fakes.certify == []
    assert list(tmp_path.iterdir()) == []


TRIP_CASES: list[tuple[list[str], str]] = [
    (["t"], "--trip: t: expected NAME=VALUE"),
    (["=3"], "--trip: =3: expected NAME=VALUE"),
    (["t=x"], "--trip: t=x: value 'x' is not an integer"),
    (["t=1.5"], "--trip: t=1.5: value '1.5' is not an integer"),
    (["u=1"], "--trip: u=1: trip 'u' is not declared by the program (declared: t)"),
    (["t=5"], "--trip: t=5: 5 is outside trip t's range [0, 4]"),
    (["t=-1"], "--trip: t=-1: -1 is outside trip t's range [0, 4]"),
    (["t=1", "t=2"], "--trip: t=2: trip t is given twice"),
]


@pytest.mark.parametrize(("trips", "message"), TRIP_CASES, ids=[" ".join(t) for t, _ in TRIP_CASES])
def test_bad_trip(trips: list[str], message: str, fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", VALID]
    for t in trips:
        argv += ["--trip", t]
    rc, out, err = run(capsys, argv)
    assert rc == 2
    assert_one_line(err, message)
    assert out == ""
    assert fakes.simulate == []


# click words the rules itself: the test pins the option or argument named first (``<field>: <rule>``) and the
# one-line form, not click's phrasing of the rule.
@pytest.mark.parametrize(("argv", "fragment"), [
    (["certify", VALID, "--jobs", "0"], "error: --jobs: 0 is not in the range x>=1"),
    (["certify", VALID, "--jobs", "many"], "error: --jobs: 'many' is not a valid integer"),
    (["simulate", VALID, "--seed", "x"], "error: --seed: 'x' is not a valid integer"),
    (["certify"], "error: PROGRAM.json: missing (required)"),
    (["certify", VALID, "--frobnicate"], "--frobnicate"),
    (["prove", VALID], "No such command 'prove'"),
], ids=["jobs-zero", "jobs-word", "seed-word", "no-program", "unknown-option", "unknown-command"])
def test_bad_command_line(argv: list[str], fragment: str, fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, argv)
    assert rc == 2
    assert err.startswith("verispatial: error: ")
    assert fragment in err
    assert err.count("\n") == 1
    assert out == ""
    assert fakes.certify == []
    assert fakes.simulate == []


@pytest.mark.parametrize("flag", ["--sarif", "--write-certificate", "--smt2"])
def test_output_into_missing_directory_is_bad_input(flag: str, fakes: Calls, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nope" / "out.json"
    rc, _out, err = run(capsys, ["certify", VALID, flag, str(target)])
    assert rc == 2
    assert_one_line(err, f"{target}: cannot write: directory '{tmp_path / 'nope'}' does not exist")
    assert fakes.certify == []


def test_smt2_directory_that_cannot_be_created_is_bad_input(fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = run(capsys, ["certify", VALID, "--smt2", "/proc/verispatial-nope"])
    assert rc == 2
    assert_one_line(err, "/proc/verispatial-nope: cannot write: No such file or directory")
    assert fakes.certify == []


def test_written_reports_are_readable_by_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sarif = tmp_path / "r.sarif"
    assert main(["certify", VALID, "--sarif", str(sarif)]) == 0
    capsys.readouterr()
    umask = os.umask(0)
    os.umask(umask)
    assert sarif.stat().st_mode & 0o777 == 0o666 & ~umask


def test_output_onto_a_directory_is_bad_input(fakes: Calls, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = run(capsys, ["certify", VALID, "--sarif", str(tmp_path)])
    assert rc == 2
    assert_one_line(err, f"{tmp_path}: is a directory, expected an output file path")


def test_checker_crash_is_exit_4_one_line(fakes: Calls, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.raise_in_certify = RuntimeError("solver exploded")
    sarif = tmp_path / "out.sarif"
    rc, out, err = run(capsys, ["certify", VALID, "--sarif", str(sarif)])
    assert rc == 4
    assert err == "verispatial: checker error: RuntimeError: solver exploded\n"
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_simulator_crash_is_exit_4_one_line(fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.raise_in_simulate = KeyError("x")
    rc, out, err = run(capsys, ["simulate", VALID])
    assert rc == 4
    assert err == "verispatial: checker error: simulator: KeyError: 'x'\n"
    assert out == ""


def test_certificate_mismatch_raised_by_the_checker_blames_the_certificate(
        fakes: Calls, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cert = tmp_path / "c.json"  # any well-formed certificate will do: the fake checker refuses it
    cert.write_text(json.dumps({"format": "verispatial.certificate", "version": 1, "program_sha256": "ab"}))
    fakes.raise_in_certify = CertificateMismatch("place 3 is missing")
    rc, _out, err = run(capsys, ["certify", VALID, "--certificate", str(cert)])
    assert rc == 2
    assert_one_line(err, f"--certificate {cert}: certificate: place 3 is missing")
    assert fakes.certify[0]["certificate"]["program_sha256"] == "ab"


@pytest.mark.parametrize(("doc", "message"), [
    (None, "format: expected format 'verispatial.certificate' and version 3, got format 'verispatial.program' and "
           "version 2"),
    ({"places": 3}, "format: expected format 'verispatial.certificate' and version 3, got format missing and version "
                    "missing"),
    ({"format": "verispatial.certificate", "version": 1}, "program_sha256: a string (the digest of the program it "
                                                           "certifies)"),
    ({"format": "verispatial.certificate", "version": 1, "program_sha256": "ab", "places": 3}, "places: a list"),
])
def test_a_document_that_is_not_a_certificate_is_bad_input(doc: dict[str, Any] | None, message: str, fakes: Calls,
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cert = tmp_path / "c.json"
    cert.write_text(Path(VALID).read_text() if doc is None else json.dumps(doc))
    rc, _out, err = run(capsys, ["certify", VALID, "--certificate", str(cert)])
    assert rc == 2
    assert_one_line(err, f"--certificate {cert}: {message}")
    assert fakes.certify == []


def test_parse_error_raised_by_the_checker_without_certificate_blames_the_program(
        fakes: Calls, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.raise_in_certify = ParseError("buffers[0].dtype", "target wormhole_b0 has no dtype 'fp8'")
    rc, _out, err = run(capsys, ["certify", VALID])
    assert rc == 2
    assert_one_line(err, f"{VALID}: buffers[0].dtype: target wormhole_b0 has no dtype 'fp8'")


def test_a_real_process_prints_no_traceback() -> None:
    path = bad("truncated.json")
    proc = subprocess.run([sys.executable, "-m", "verispatial", "certify", path], capture_output=True, text=True,
                          cwd=HERE.parent, check=False, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"verispatial: error: {path}: (document): not valid JSON: "
                           "Expecting value (line 24, column 4)\n")


def test_interrupt_is_one_line_exit_130(fakes: Calls, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.raise_in_certify = KeyboardInterrupt()
    rc, out, err = run(capsys, ["certify", VALID, "--sarif", str(tmp_path / "r.sarif")])
    assert rc == 130
    # click ends the interrupted terminal line (after ^C) with a bare newline first.
    assert err.lstrip("\n") == "verispatial: interrupted\n"
    assert out == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["certify", "--json", "-q", VALID, "--bogus"], ["certify", "--json", "-q"],
                                  ["certify", "--json", "-q", VALID, "--trip", "x=1"], ["validate", "--json"]])
def test_a_refused_command_line_with_json_prints_one_json_document(capsys: pytest.CaptureFixture[str],
                                                                   argv: list[str]) -> None:
    """With ``--json`` every exit code 0-4 prints exactly one JSON document, a command line click refuses included
    (the command never ran); stderr still has its one line."""
    code, out, err = run(capsys, argv)
    assert code == 2
    doc = json.loads(out)
    assert doc["exit_code"] == 2
    assert doc["error"]["file"] == ""  # an option error names no file: the option (or the command line) has its slot
    assert doc["error"]["option"] in ("command line", "--trip", "PROGRAM.json")  # the part of the command line
    assert doc["error"]["rule"]
    assert err.startswith("verispatial: error: ")
    assert len(err.strip().splitlines()) == 1


def test_a_value_nested_past_the_compiled_validators_limit_is_bad_input(tmp_path: Path) -> None:
    """The compiled schema validator's error walk stops at its recursion limit (ValueError): the message is then
    worded from the whole document, exit 2, never a checker error (the fuzzer found exit 4)."""
    doc = json.loads((Path(__file__).resolve().parent.parent / "examples" / "pipeline_small.json").read_text())
    deep: object = 0
    for _ in range(600):
        deep = [deep]
    doc["programs"][2]["ops"][0]["var"] = deep
    p = tmp_path / "deep.json"
    p.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-m", "verispatial", "validate", str(p)], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 2, run.stderr
    assert "programs[2].ops[0]" in run.stderr


def test_an_option_error_has_its_own_slot_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    """``--trip t=99`` put the option in ``file`` (``{"file": "--trip", "field": "t=99"}``): the option has a slot of
    its own, its value is the field, and no file is named."""
    code, out, err = run(capsys, ["simulate", VALID, "--json", "--trip", "t=99"])
    assert code == 2
    error = json.loads(out)["error"]
    assert (error["file"], error["option"], error["field"]) == ("", "--trip", "t=99")
    assert_one_line(err, "--trip: t=99: " + error["rule"])


@pytest.mark.parametrize("as_json", [False, True])
def test_a_certificate_file_at_fault_is_named_with_its_option(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              as_json: bool) -> None:
    """``certify good.json --certificate empty.json`` said "empty.json: the file is empty", as if it were a program."""
    empty = tmp_path / "empty.json"
    empty.write_text("")
    code, out, err = run(capsys, ["certify", "-q", VALID, "--certificate", str(empty), *(["--json"] if as_json else [])])
    assert code == 2
    assert_one_line(err, f"--certificate {empty}: the file is empty")
    if as_json:
        error = json.loads(out)["error"]
        assert (error["file"], error["option"], error["rule"]) == (str(empty), "--certificate", "the file is empty")
