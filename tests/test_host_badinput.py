"""Bad host descriptions a new user wrote by hand (tt-metal front end): each is one line of bad input naming the
field and the rule, exit 2, quickly, nothing written.

Found by trying them: a key given twice in the YAML silently took its last value (``name: z`` after ``name: a`` in a
tensor: the error then said ``no tensor 'a' (declared: z, ...)``, far from the mistake); a core range past any mesh
(``cores: "0,0-99999999,99999999"``) enumerated its 10**16 sites and never returned; and a document nested too deeply
said "a kernel nested too deeply", though no kernel was read yet.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from verispatial.cli import main

COPY = Path(__file__).parent / "data" / "ttmetal" / "copy"


def host(tmp_path: Path, edit: tuple[str, str] | None = None, suffix: str = ".yaml") -> Path:
    """The wheel-free copy host of ``tests/data/ttmetal/copy`` beside its kernels, with ``edit`` (old, new) applied."""
    for f in COPY.iterdir():
        shutil.copy(f, tmp_path / f.name)
    text = (COPY / "host.yaml").read_text(encoding="utf-8")
    if edit is not None:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    p = tmp_path / f"h{suffix}"
    p.write_text(text, encoding="utf-8")
    return p


def bad(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    return err


def test_the_copy_host_imports(tmp_path: Path) -> None:
    assert main(["import", "ttmetal", str(host(tmp_path)), "-o", str(tmp_path / "o.json")]) == 0


@pytest.mark.parametrize(("edit", "message"), [
    (("version: 1\n", "version: 1\nversion: 1\n"), "line 4: key 'version' appears twice in one mapping"),
    (("{name: src, shape", "{name: src, name: x, shape"), "line 6: key 'name' appears twice in one mapping"),
    (("num_tiles: 8, start_id: 0}", "num_tiles: 8, start_id: 0, num_tiles: 4}"),
     "line 21: key 'num_tiles' appears twice in one mapping"),
])
def test_a_key_given_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str],
                                      message: str) -> None:
    path = host(tmp_path, edit)
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err == f"verispatial: error: {path}: {message} (readers disagree on which wins)\n"
    assert not out.exists()


def test_a_key_given_twice_in_a_json_host_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import yaml

    d = yaml.safe_load((COPY / "host.yaml").read_text(encoding="utf-8"))
    path = host(tmp_path)
    jpath = tmp_path / "h.json"
    jpath.write_text(json.dumps(d, indent=1).replace('"version": 1,', '"version": 1,\n "version": 1,', 1),
                     encoding="utf-8")
    err = bad(["import", "ttmetal", str(jpath), "-o", str(tmp_path / "o.json")], capsys)
    assert err == (f"verispatial: error: {jpath}: (document): key 'version' appears twice in one object (readers "
                   "disagree on which wins)\n")
    assert path.exists()


@pytest.mark.parametrize("cores", ['"0,0-99999999,99999999"', '"300,0"', '["0,0", "1,0-1,70000"]'])
def test_a_core_past_any_mesh_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 cores: str) -> None:
    path = host(tmp_path, ('cores: "0,0"', f"cores: {cores}"))
    t0 = time.perf_counter()
    err = bad(["certify", "-q", "--no-cache", str(path)], capsys)
    assert time.perf_counter() - t0 < 30
    assert err.startswith(f"verispatial: error: {path}: work_units[0].cores: core (")
    assert "is past the largest mesh the model takes, 256 x 256" in err


def test_a_document_nested_too_deeply_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("x: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    err = bad(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")], capsys)
    assert err == f"verispatial: error: {path}: (document): nested too deeply to read\n"


@pytest.mark.parametrize(("edit", "message"), [
    (('  - cores: "1,0"', '  - cores: "8,0"'),
     "work_units[1].cores: core (8,0) is outside the target's 8x8 compute grid (logical cores 0,0-7,7)"),
    (('  - cores: "1,0"', '  - cores: ["1,0", "0,3-0,8"]'),
     "work_units[1].cores: core (0,8) is outside the target's 8x8 compute grid (logical cores 0,0-7,7)"),
    (("entries: 4, data_format: Float16_b, producer: reader,", 'entries: 4, cores: "9,9", data_format: Float16_b, '
                                                               "producer: reader,"),
     "buffers[0].cores: core (9,9) is outside the target's 8x8 compute grid (logical cores 0,0-7,7)"),
    (("name: copy\n", 'name: copy\ntarget: blackhole\nsemaphores: [{name: s, initial_value: 0, cores: "13,0"}]\n'),
     "semaphores[0].cores: core (13,0) is outside the target's 13x10 compute grid (logical cores 0,0-12,9)"),
])
def test_a_core_outside_the_target_grid_names_the_host_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             edit: tuple[str, str], message: str) -> None:
    """A work unit, buffer or semaphore on a core off the device's compute grid: the message once named the IR
    buffer or semaphore the core would hold (``buffer 0 (in): site (8,8) is outside the 8x8 mesh (+2 more)``), not
    the host field the user wrote."""
    path = host(tmp_path, edit)
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err == f"verispatial: error: {path}: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("target", ["gpu_sm80", "gpu"])
def test_a_gpu_target_is_not_a_tt_metal_device(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               target: str) -> None:
    """``target: gpu_sm80`` was read against a GPU's 16x16 tiles and shared memory, so the copy's 32x32 tiles were
    counted wrong (``output dst tile 11 is written by no write of it``); the certify verdict was about another
    machine."""
    path = host(tmp_path, ("name: copy\n", f"name: copy\ntarget: {target}\n"))
    err = bad(["certify", str(path), "-q", "--no-cache"], capsys)
    assert err == (f"verispatial: error: {path}: target: '{target}' is not a tt-metal device (known: blackhole, "
                   "wormhole_b0)\n")


def test_a_page_larger_than_l1_names_the_entry_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``entry_size: 2147483648`` (a whole number of bf16 tiles) was reported as ``program (0,0).reader ops[0].body[1]
    ReadTiles: tiles 1048576 is too large for the model``: an op of the program, not the field."""
    path = host(tmp_path, ("entry_size: 2048, entries: 4, data_format: Float16_b, producer: reader",
                           "entry_size: 2147483648, entries: 4, data_format: Float16_b, producer: reader"))
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err == (f"verispatial: error: {path}: buffers[0].entry_size: a page of 2147483648 B is larger than a core's "
                   "usable L1 (1395424 B on wormhole_b0)\n")
    assert not out.exists()


def test_a_kernel_op_the_host_does_not_allow_names_its_kernel_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The receivers' flag word declared on two of the three cores the sender multicasts it to: the program's
    validation named only the op it read (``program (0,0).reader ops[1].body[6] McastSetValid``); the kernel line
    it came from is in front of it now."""
    data = COPY.parent
    for sub in ("mcast", "copy"):
        shutil.copytree(data / sub, tmp_path / sub)
    text = (data / "mcast" / "host.yaml").read_text(encoding="utf-8")
    text = text.replace("  - {name: receiver_sem, initial_value: 0}",
                        '  - {name: receiver_sem, initial_value: 0, cores: "0,0-1,0"}')
    path = tmp_path / "mcast" / "host.yaml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err.startswith(f"verispatial: error: {path}: mcast/sender.cpp:29: program (0,0).reader ops[1].body[6] "
                          "McastSetValid: destination (2,0) has no word of semaphore 1")
    assert not out.exists()


@pytest.mark.parametrize(("args", "option", "kernel"), [
    (["import", "ttmetal", "{host}", "-o", "{kernel}"], "-o", "reader.cpp"),
    (["certify", "{host}", "-q", "--no-cache", "--sarif", "{kernel}"], "--sarif", "writer.cpp"),
    (["certify", "{host}", "-q", "--no-cache", "--write-certificate", "{kernel}"], "--write-certificate",
     "compute.cpp"),
])
def test_an_output_never_replaces_a_kernel_source(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  args: list[str], option: str, kernel: str) -> None:
    """``import ttmetal h.yaml -o reader.cpp`` wrote the program over the user's kernel (only the host file itself was
    counted as an input of the run): the kernels a host names are inputs too."""
    path = host(tmp_path)
    before = (tmp_path / kernel).read_bytes()
    argv = [a.format(host=path, kernel=tmp_path / kernel) for a in args]
    err = bad(argv, capsys)
    assert err == f"verispatial: error: {tmp_path / kernel}: {option}: is an input of this run, an output would " \
                  "replace it\n"
    assert (tmp_path / kernel).read_bytes() == before


def test_certify_of_a_json_host_says_how_to_read_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A host description may be JSON (docs/ttmetal.md), which ``import ttmetal`` reads; ``certify`` tells hosts from
    programs by the ``.yaml`` suffix, so it read ``h.json`` as a program and said only that its format was not a
    program's."""
    import yaml

    path = tmp_path / "h.json"
    host(tmp_path)
    path.write_text(json.dumps(yaml.safe_load((tmp_path / "h.yaml").read_text(encoding="utf-8"))), encoding="utf-8")
    err = bad(["certify", str(path), "-q", "--no-cache"], capsys)
    assert err == (f"verispatial: error: {path}: format: expected 'verispatial.program', got 'verispatial.ttmetal-host' "
                   "(a tt-metal host description: `verispatial import ttmetal HOST -o PROGRAM.json` reads it, and "
                   "certify reads it directly as HOST.yaml)\n")
    assert main(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")]) == 0


@pytest.mark.parametrize(("edit", "message"), [
    # a directory that is not there: a typo the kernel's #include would only show as a missing header, if ever
    (("name: copy\n", "name: copy\ninclude_dirs: [inc, nope]\n"),
     "include_dirs[1]: no such directory: nope"),
    # GCC refuses -D1BAD=1 ("macro names must be identifiers"): the kernel would not build
    (("compile_time_args: [2],", 'compile_time_args: [2], defines: {"1BAD": 1},'),
     "kernels[1].defines: '1BAD' is not a macro name (an identifier, or NAME(PARAMS) for a function-like one)"),
    (("compile_time_args: [2],", 'compile_time_args: [2], defines: {"F(x": 1},'),
     "kernels[1].defines: 'F(x' is not a macro name (an identifier, or NAME(PARAMS) for a function-like one)"),
])
def test_a_build_setting_the_kernels_cannot_have_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            edit: tuple[str, str], message: str) -> None:
    """Both were accepted silently: an include directory that does not exist and a define whose name no compiler
    takes."""
    (tmp_path / "inc").mkdir()
    path = host(tmp_path, edit)
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err == f"verispatial: error: {path}: {message}\n"
    assert not out.exists()


def test_a_function_like_define_is_a_macro_name(tmp_path: Path) -> None:
    """``"PROCESS_LHS_ACTIVATIONS(i)": ""`` (binary_ng's program factory) stays a define the host may give."""
    path = host(tmp_path, ("compile_time_args: [2],", 'compile_time_args: [2], defines: {"F(a, b)": "", "G()": 1},'))
    assert main(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")]) == 0


@pytest.mark.parametrize(("edit", "message"), [
    (('cores: "0,0"', 'cores: "\uff11,0"'),
     "work_units[0].cores: '\uff11,0' is not a core \"x,y\" or a rectangle \"x0,y0-x1,y1\" (inclusive, logical "
     "coordinates, non-negative)"),
    (("num_tiles: 8, start_id: 0}", 'num_tiles: "\uff11..8", start_id: 0}'),
     "work_units[0].runtime_args.reader.num_tiles: '\uff11..8' is not a range LO..HI (a trip); a value is an integer, "
     'a boolean, a range, {"range": LO..HI, "trip": NAME}, {"tensor": NAME} or {"semaphore": NAME}'),
    (("num_tiles: 8, start_id: 0}", 'num_tiles: {range: "1..\uff18"}, start_id: 0}'),
     "work_units[0].runtime_args.reader.num_tiles.range: '1..\uff18' is not a range LO..HI"),
    # a value of none of the forms a field takes
    (("num_tiles: 8, start_id: 0}", "num_tiles: 8.5, start_id: 0}"),
     "work_units[0].runtime_args.reader.num_tiles: 8.5 is not a value: an integer in [0, 4294967295], a boolean, a "
     'range "LO..HI", {range: "LO..HI", trip: NAME}, {tensor: NAME} or {semaphore: NAME}'),
    (("compile_time_args: [0]", "compile_time_args: [0.5]"),
     "kernels[0].compile_time_args[0]: 0.5 is not a value: an integer in [0, 4294967295], a boolean, a range "
     '"LO..HI", {range: "LO..HI", trip: NAME}, {tensor: NAME} or {semaphore: NAME}'),
    (('cores: "0,0"', "cores: 5"),
     'work_units[0].cores: 5 is not cores: a core "x,y", a rectangle "x0,y0-x1,y1" or a non-empty list of them'),
], ids=["core", "range", "range-object", "runtime-arg", "compile-time-arg", "cores"])
def test_a_value_the_schema_does_not_take_names_its_field_and_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     edit: tuple[str, str], message: str) -> None:
    """A fullwidth digit (U+FF11) in a core or a range: the schema's ``\\d`` matched it in one of the two validators
    and not in the other, and the message said only ``(document): does not match the schema``. A value matching none
    of a field's forms said ``8.5 is not valid under any of the given schemas``."""
    path = host(tmp_path, edit)
    out = tmp_path / "o.json"
    err = bad(["import", "ttmetal", str(path), "-o", str(out)], capsys)
    assert err == f"verispatial: error: {path}: {message}\n"
    assert not out.exists()


def test_no_schema_pattern_has_a_class_the_two_validators_read_apart() -> None:
    """The whole kind of the fault above: ``\\d`` and ``\\w`` are ASCII in the compiled validator's (ECMA 262)
    regular expressions and Unicode in Python's ``re``, the reference validator's; a pattern spells its classes out."""
    import re

    root = Path(__file__).parent.parent / "verispatial"
    found = [(p.name, m) for p in root.rglob("*.schema.json")
             for m in re.findall(r'"pattern": "([^"]*)"', p.read_text(encoding="utf-8")) if re.search(r"\\\\[dwDW]", m)]
    assert not found


@pytest.mark.parametrize(("text", "kind"), [("5\n", "a number"), ("true\n", "a boolean"), ("- 1\n", "a list")])
def test_a_host_of_another_kind_is_named_in_its_words(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                      kind: str) -> None:
    """A scalar document said ``got a int`` / ``got a bool``."""
    path = tmp_path / "h.yaml"
    path.write_text(text, encoding="utf-8")
    err = bad(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")], capsys)
    assert err == (f"verispatial: error: {path}: (document): a host description is a mapping of its fields (name, "
                   f"kernels, work_units, ...), got {kind}\n")



@pytest.mark.parametrize(("edit", "message"), [
    (("name: copy\n", "name: copy\nkernel_root: ${VERISPATIAL_NOT_SET_HERE}/kernels\n"),
     "kernel_root: names $VERISPATIAL_NOT_SET_HERE, which is not set (environment variables are expanded)"),
    (("name: copy\n", "name: copy\ninclude_dirs: [., $VERISPATIAL_NOT_SET_HERE]\n"),
     "include_dirs[1]: names $VERISPATIAL_NOT_SET_HERE, which is not set (environment variables are expanded)"),
], ids=["kernel-root", "include-dir"])
def test_a_variable_not_set_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                     edit: tuple[str, str], message: str) -> None:
    """``kernel_root: ${X}/kernels`` with X unset said ``no such directory: /tmp/.../${X}/kernels``."""
    monkeypatch.delenv("VERISPATIAL_NOT_SET_HERE", raising=False)
    path = host(tmp_path, edit)
    err = bad(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")], capsys)
    assert err == f"verispatial: error: {path}: {message}\n"


def test_a_cb_index_past_the_targets_names_the_host_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Wormhole has 32 CB indices (``tt_metal/api/tt-metalium/circular_buffer_constants.h:33-35``); index 40 said
    ``buffer 1 (out): cb index must be in [0, 32), got 40 (+1 more)``, the IR's buffer, not the host field."""
    path = host(tmp_path, ("index: 16", "index: 40"))
    err = bad(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")], capsys)
    assert err == (f"verispatial: error: {path}: buffers[1].index: 40 is past wormhole_b0's 32 CB indices (0..31, "
                   "NUM_CIRCULAR_BUFFERS)\n")


def test_semaphores_past_the_targets_name_the_host_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """17 semaphores on every core, past the 16 of a core (``NUM_SEMAPHORES``): it said ``site (0,0): 17 semaphores
    live at once (in one phase) exceed the target's 16 (+1 more)``, in the IR's words."""
    sems = "semaphores:\n" + "".join(f"  - {{name: s{i}, initial_value: 0}}\n" for i in range(17))
    path = host(tmp_path, ("kernels:\n", sems + "kernels:\n"))
    err = bad(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")], capsys)
    assert err == (f"verispatial: error: {path}: semaphores[16]: core (0,0) holds 17 semaphores, past wormhole_b0's 16 "
                   "per core (NUM_SEMAPHORES)\n")


@pytest.mark.parametrize(("edit", "message"), [
    (("version: 1", "version: 2\nname_of_a_later_format: x"),
     "version: this verispatial reads host descriptions of version 1, got 2"),
    (("format: verispatial.ttmetal-host", "format: tt.host"),
     "format: expected 'verispatial.ttmetal-host', got 'tt.host'"),
])
def test_a_host_of_another_format_or_version_says_so_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           edit: tuple[str, str], message: str) -> None:
    """A host of a later version (its fields renamed) was told its first schema violation ('name' is a required
    property, or an unexpected field): the version it names is what the reader does not take."""
    p = host(tmp_path, edit)
    assert bad(["certify", str(p), "-q"], capsys) == f"verispatial: error: {p}: {message}\n"


def test_a_host_not_utf8_says_so_as_a_program_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said "cannot read: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"."""
    p = tmp_path / "h.yaml"
    p.write_bytes(b"\xff\xfeformat: x\n")
    assert bad(["certify", str(p), "-q"], capsys) == f"verispatial: error: {p}: (document): not UTF-8 text (a binary file?)\n"
