"""Inputs that exist but are not regular files (a FIFO, ``/dev/zero``): each is refused by name before it is read.
A FIFO blocked the read until a writer came and ``/dev/zero`` never ended it (``certify FIFO`` hung); a kernel
``source:`` naming one said "no such file", though it exists. Run as processes, so a hang fails the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_frontend_ttmetal_newuser import _pipeline
from verispatial.errors import ParseError
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.serialize import read_document
from verispatial.regular_file import not_regular, regular_stat

ROOT = Path(__file__).parent.parent
LOCAL_UP = str(ROOT / "examples" / "local_up.json")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "verispatial", *args], capture_output=True, text=True, timeout=120,
                          env=env, check=False)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "named.json"
    os.mkfifo(path)
    return path


def test_not_regular_names_each_kind(tmp_path: Path, fifo: Path) -> None:
    assert not_regular(fifo, "a program.json file") == ("is a FIFO (named pipe), not a regular file: expected a "
                                                        "program.json file")
    assert not_regular("/dev/zero") == "is a character device, not a regular file: expected a file"
    assert not_regular(tmp_path, "a manifest") == "is a directory, expected a manifest"
    assert not_regular(tmp_path / "nothing") == "no such file"
    (tmp_path / "plain").write_text("{}")
    os.symlink(tmp_path / "plain", tmp_path / "link")
    assert not_regular(tmp_path / "link") is None


def test_regular_stat_is_the_stat_or_the_same_words(tmp_path: Path, fifo: Path) -> None:
    (tmp_path / "plain").write_text("{}")
    os.symlink(tmp_path / "plain", tmp_path / "link")
    for path in (tmp_path / "plain", tmp_path / "link"):
        got = regular_stat(path)
        assert isinstance(got, os.stat_result)
        assert got.st_size == 2
    for path in (fifo, Path("/dev/zero"), tmp_path, tmp_path / "nothing", "a\0b"):
        why = not_regular(path, "a manifest")
        assert why is not None
        assert regular_stat(path, "a manifest") == why


def test_read_document_refuses_by_name_and_reads_the_whole_file(tmp_path: Path, fifo: Path) -> None:
    for path, why in ((fifo, "is a FIFO (named pipe), not a regular file: expected a program.json file"),
                      (tmp_path, "is a directory, expected a program.json file"), (tmp_path / "none", "no such file")):
        with pytest.raises(ParseError) as e:
            read_document(path, "a program.json file")
        assert str(e.value) == str(ParseError(str(path), why))
    (tmp_path / "blank").write_text(" \n")
    with pytest.raises(ParseError, match="the file is empty"):
        read_document(tmp_path / "blank", "a program.json file")
    big = json.dumps({"x": "y" * 300_000}).encode()
    (tmp_path / "big.json").write_bytes(big)
    assert read_document(tmp_path / "big.json", "a program.json file") == big
    assert read_document(str(tmp_path / "big.json"), "a program.json file") == big


@pytest.mark.parametrize("command", ["certify", "validate", "simulate"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_program_that_is_no_regular_file_is_bad_input(command: str, kind: str, fifo: Path) -> None:
    path = str(fifo) if kind == "fifo" else "/dev/zero"
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    r = _cli(command, path)
    assert r.returncode == 2, r
    assert r.stderr == f"verispatial: error: {path}: is {what}, not a regular file: expected a program.json file\n"
    assert "Traceback" not in r.stderr
    assert "proved" not in r.stdout


def test_a_certificate_that_is_a_fifo_is_bad_input(fifo: Path) -> None:
    r = _cli("certify", LOCAL_UP, "--certificate", str(fifo))
    assert r.returncode == 2, r
    assert r.stderr == (f"verispatial: error: --certificate {fifo}: is a FIFO (named pipe), not a regular file: "
                        "expected a certificate JSON file\n")


@pytest.mark.parametrize(("name", "expected"), [("host.yaml", "a host description"), ("kernel.py", "a TT-Lang .py file")])
def test_a_host_or_ttlang_file_that_is_a_fifo_is_bad_input(tmp_path: Path, name: str, expected: str) -> None:
    path = tmp_path / name
    os.mkfifo(path)
    r = _cli("certify", str(path))
    assert r.returncode == 2, r
    assert r.stderr == f"verispatial: error: {path}: is a FIFO (named pipe), not a regular file: expected {expected}\n"


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_kernel_source_that_is_no_regular_file_is_not_said_missing(tmp_path: Path, kind: str) -> None:
    """It said 'no such file: .../reader.cpp' of a FIFO (or /dev/zero) that is there."""
    host = _pipeline(tmp_path, (), 2)
    if kind == "fifo":
        source, what = tmp_path / "reader.cpp", "a FIFO (named pipe)"
        source.unlink()
        os.mkfifo(source)
    else:
        source, what = Path("/dev/zero"), "a character device"
        d = json.loads(host.read_text())
        d["kernels"][0]["source"] = str(source)
        host.write_text(json.dumps(d))
    with pytest.raises(ParseError) as e:
        import_host(host)
    assert e.value.field == "kernels[0].source"
    assert e.value.rule == f"{source} is {what}, not a regular file: expected a kernel's C++ source"


def test_an_include_of_a_fifo_is_refused_at_its_line(tmp_path: Path) -> None:
    """GCC opens the FIFO and waits; the reading took it as '#include not found' (``is_file`` of a FIFO is False)."""
    os.mkfifo(tmp_path / "config.hpp")
    with pytest.raises(Refused, match="#include not a regular file") as e:
        import_host(_pipeline(tmp_path, (), 2, top=('#include "config.hpp"',)))
    assert (e.value.loc.file, e.value.loc.line) == ("reader.cpp", 1)
    assert "is a FIFO (named pipe)" in e.value.detail


def test_the_gate_passes_over_a_fifo_in_its_directory(tmp_path: Path) -> None:
    """``gate DIR`` peeks at each .json without a certificate to tell a program from notes: a FIFO blocked the peek
    (the gate hung). It is no program and is passed over."""
    (tmp_path / "p.json").write_text(Path(LOCAL_UP).read_text(encoding="utf-8"), encoding="utf-8")
    assert _cli("certify", str(tmp_path / "p.json"), "--write-certificate", str(tmp_path / "p.certificate.json"),
                "-q", "--no-cache").returncode == 0
    os.mkfifo(tmp_path / "notes.json")
    r = _cli("gate", str(tmp_path), "--ci", "--jobs", "1", "--no-cache")
    assert r.returncode == 0, r
    assert "gate: 1 passed, 0 failed" in r.stderr + r.stdout
