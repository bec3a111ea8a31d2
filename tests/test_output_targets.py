"""Where an output goes when its path is not a plain file: a symbolic link, a FIFO, a character device, or one of the
run's own inputs.

Found by trying it: ``certify p.json --sarif /dev/full`` (run as root) replaced the device node ``/dev/full`` by a
regular file holding the SARIF and exited 0, because the atomic writer renames a temporary file over whatever the
path names; ``--sarif link.sarif`` replaced the link by a file and left its target stale, ``--junit fifo`` replaced the
FIFO its reader waited on; and ``certify p.json --write-certificate p.json`` replaced the program by its certificate.
Now a link's target is written (the link kept), a FIFO or device is written into as a stream (``/dev/stdout``,
``/dev/null``: a full device is one line of bad input, exit 2), and an output that is one of the inputs is refused
before any work.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from verispatial import atomic
from verispatial.cli import main

HERE = Path(__file__).parent
VALID = HERE / "badinput" / "small_valid.json"


def program(tmp_path: Path) -> Path:
    p = tmp_path / "p.json"
    p.write_text(VALID.read_text(encoding="utf-8"), encoding="utf-8")
    return p


def test_a_link_s_target_is_written_and_the_link_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.sarif"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.sarif"
    link.symlink_to("real.sarif")
    atomic.write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.sarif", "real.sarif"]


def test_a_dangling_link_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.sarif"
    link.symlink_to("made.sarif")
    atomic.write_text(link, "new")
    assert link.is_symlink()
    assert (tmp_path / "made.sarif").read_text(encoding="utf-8") == "new"


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    atomic.write_text(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dev_null_stays_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "-q", "--no-cache", str(VALID), "--junit", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert "verdict: proved" in capsys.readouterr().out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_bad_input_and_stays_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "-q", "--no-cache", str(VALID), "--sarif", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert err == "verispatial: error: /dev/full: cannot write: No space left on device\n"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("option", ["--write-certificate", "--sarif", "--junit"])
def test_certify_refuses_to_write_over_its_program(tmp_path: Path, option: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    p = program(tmp_path)
    before = p.read_bytes()
    assert main(["certify", "-q", "--no-cache", str(p), option, str(p)]) == 2
    err = capsys.readouterr().err
    assert err == f"verispatial: error: {p}: {option}: is an input of this run, an output would replace it\n"
    assert p.read_bytes() == before


def test_certify_refuses_to_write_over_its_program_through_a_link(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = program(tmp_path)
    link = tmp_path / "cert.json"
    link.symlink_to("p.json")
    assert main(["certify", "-q", "--no-cache", str(p), "--write-certificate", str(link)]) == 2
    assert "is an input of this run" in capsys.readouterr().err
    assert json.loads(p.read_text(encoding="utf-8"))["format"] == "verispatial.program"


def test_certify_refuses_to_write_over_the_certificate_it_compares(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    p = program(tmp_path)
    cert = tmp_path / "c.json"
    assert main(["certify", "-q", "--no-cache", str(p), "--write-certificate", str(cert)]) == 0
    before = cert.read_bytes()
    capsys.readouterr()
    assert main(["certify", "-q", "--no-cache", str(p), "--certificate", str(cert), "--sarif", str(cert)]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {cert}: --sarif: is an input of this run, an output "
                                       "would replace it\n")
    assert cert.read_bytes() == before


def test_a_link_to_a_directory_written_whole_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "sections"
    real.mkdir()
    (real / "stale.json").write_text("{}", encoding="utf-8")
    link = tmp_path / "out"
    link.symlink_to("sections")
    atomic.write_dir(link, {"a.json": "1"})
    assert link.is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["a.json"]


def test_compose_refuses_to_write_over_a_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = program(tmp_path)
    before = p.read_bytes()
    assert main(["compose", str(p), str(p), "-o", str(p), "-q"]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {p}: -o: is an input of this run, an output would "
                                       "replace it\n")
    assert p.read_bytes() == before
    assert not (tmp_path / "p.certificate.json").exists()


def test_compile_refuses_to_write_over_its_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "mlp.json"
    model.write_text((HERE.parent / "examples" / "models" / "mlp_block.json").read_text(encoding="utf-8"),
                     encoding="utf-8")
    before = model.read_bytes()
    assert main(["compile", str(model), "--target", "wormhole", "-o", str(model), "-q"]) == 2
    assert "-o: is an input of this run, an output would replace it" in capsys.readouterr().err
    assert model.read_bytes() == before


@pytest.mark.parametrize(("language", "source"), [
    ("ttlang", HERE / "data" / "ttlang" / "eltwise.py"),
    ("ttmetal", HERE / "data" / "ttmetal" / "copy" / "host.yaml"),
])
def test_import_refuses_to_write_over_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str], language: str,
                                                 source: Path) -> None:
    src = tmp_path / source.name
    src.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["import", language, str(src), "-o", str(src)]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {src}: -o: is an input of this run, an output would "
                                       "replace it\n")
    assert src.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [["export", "{p}", "--dot", "-o", "{p}"], ["explain", "{p}", "--html", "{p}", "-q"]])
def test_export_and_explain_refuse_to_write_over_the_program(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             args: list[str]) -> None:
    p = program(tmp_path)
    before = p.read_bytes()
    assert main([a.format(p=p) for a in args]) == 2
    assert "is an input of this run, an output would replace it" in capsys.readouterr().err
    assert p.read_bytes() == before


def test_compose_refuses_an_unknown_state_before_certifying_anything(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Found with the rest: ``compose A B -o C --state NOPE`` certified both sections (printing a line for each on
    stdout) before it said the state was unknown."""
    p = program(tmp_path)
    assert main(["compose", str(p), str(p), "-o", str(tmp_path / "c.json"), "--state", "NOPE", "-q"]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err == ("verispatial: error: compose: unknown-state: carried state 'NOPE' is not a tensor of any "
                       "section\n")


@pytest.mark.skipif(not os.path.lexists("/dev/stdout"), reason="needs /dev/stdout")
def test_dev_stdout_redirected_to_a_file_keeps_the_report(tmp_path: Path) -> None:
    """``certify --junit /dev/stdout > out.txt``: the JUnit XML and then the report, neither overwriting the other (an
    open of /dev/stdout starts at offset 0 of the file the shell opened, under what stdout already wrote)."""
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as f:
        rc = subprocess.run([sys.executable, "-m", "verispatial", "certify", "-q", "--no-cache", str(VALID), "--junit",
                             "/dev/stdout"], stdout=f, check=False).returncode
    assert rc == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<?xml")
    assert "</testsuites>" in text
    assert "verdict: proved" in text
    assert not stat.S_ISREG(os.lstat("/dev/stdout").st_mode)  # still the link (a rename replaced it once)


def test_a_cycle_of_links_is_bad_input_not_a_hang(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.sarif").symlink_to("b.sarif")
    (tmp_path / "b.sarif").symlink_to("a.sarif")
    assert main(["certify", "-q", "--no-cache", str(VALID), "--sarif", str(tmp_path / "a.sarif")]) == 2
    got = capsys.readouterr()
    assert got.out == ""  # refused before any work
    assert got.err.startswith(f"verispatial: error: {tmp_path / 'a.sarif'}: cannot write: ")
    assert got.err.count("\n") == 1


def _refuted(tmp_path: Path) -> Path:
    p = tmp_path / "in" / "r.json"
    p.parent.mkdir()
    p.write_text((HERE.parent / "examples" / "broken" / "a_reserve_over_capacity.json").read_text(encoding="utf-8"),
                 encoding="utf-8")
    return p


def test_explain_refuses_a_directory_holding_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``explain p.json -o DIR`` wrote its pictures into any existing directory, the program's own among them, mixed
    with whatever was there. A directory holding a file explain did not write is refused before any work."""
    p = _refuted(tmp_path)
    before = sorted(os.listdir(p.parent))
    assert main(["explain", str(p), "-o", str(p.parent), "-q", "--no-cache"]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err == (f"verispatial: error: {p.parent}: -o: holds files explain did not write (r.json): the pictures "
                       "go into a new or empty directory, or one holding only r's pictures\n")
    assert sorted(os.listdir(p.parent)) == before


def test_explain_replaces_its_own_pictures_and_removes_stale_ones(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A second run into the same directory replaces the first run's pictures; one the new run does not draw (here
    made up: refutation 7) would read as one of its own and is removed. The --html page in it is kept."""
    p = _refuted(tmp_path)
    out, page = tmp_path / "pics", tmp_path / "pics" / "r.html"
    out.mkdir()
    assert main(["explain", str(p), "-o", str(out), "--html", str(page), "-q", "--no-cache"]) == 1
    first = sorted(os.listdir(out))
    assert "r.html" in first
    assert any(n.startswith("r.0.0.") and n.endswith(".dot") for n in first)
    (out / "r.7.0.timeline.dot").write_text("stale", encoding="utf-8")
    assert main(["explain", str(p), "-o", str(out), "--html", str(page), "-q", "--no-cache"]) == 1
    assert sorted(os.listdir(out)) == first
    capsys.readouterr()
