"""Files verispatial writes atomically (proof-cache entries, reports, compiled programs) get the mode a plain write
would give, ``0o666 & ~umask``: ``mkstemp`` alone made every one 0600, so a proof cache a team shares (a group
directory, umask 002) never hit for anyone but the writer of an entry (``verispatial/atomic.py``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from verispatial import atomic
from verispatial.cli import main
from verispatial.driver.store import ProofStore

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "proofs" / "examples" / "pipeline_small"


@pytest.fixture(params=[0o002, 0o022, 0o077], ids=["umask002", "umask022", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    before = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(before)


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_the_umask_is_read_back_unchanged(umask: int) -> None:
    assert atomic.current_umask() == umask
    assert atomic.current_umask() == umask  # reading it did not change it
    assert atomic.file_mode() == 0o666 & ~umask


def test_proof_cache_entries_and_directories_follow_the_umask(tmp_path: Path, umask: int) -> None:
    st = ProofStore(tmp_path / "cache")
    key = "ab" * 32
    assert st.put("program", key, {"x": 1})
    entry = st.path("program", key)
    assert mode(entry) == 0o666 & ~umask  # 0o664 under umask 002: the group reads (and hits) it
    assert mode(entry.parent) == 0o777 & ~umask
    assert ProofStore(tmp_path / "cache").get("program", key) == {"x": 1}
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary file left


def test_a_cache_written_by_a_certify_run_is_readable_by_the_group(tmp_path: Path, umask: int) -> None:
    cache = tmp_path / "cache"
    assert main(["certify", "-q", "--cache-dir", str(cache), f"{SMALL}.program.json"]) == 0
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert entries
    assert {mode(p) for p in entries} == {0o666 & ~umask}


def test_reports_and_compiled_programs_follow_the_umask(tmp_path: Path, umask: int) -> None:
    sarif = tmp_path / "r.sarif"
    assert main(["certify", "-q", "--no-cache", "--sarif", str(sarif), f"{SMALL}.program.json"]) == 0
    assert mode(sarif) == 0o666 & ~umask
    from verispatial.ir.serialize import load_program
    from verispatial.passes.compile import write_program

    cert = write_program(load_program(f"{SMALL}.program.json"), {"passes": []}, tmp_path / "out" / "p.program.json")
    assert {mode(cert), mode(tmp_path / "out" / "p.program.json")} == {0o666 & ~umask}


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "d"
    target.mkdir()
    with pytest.raises(IsADirectoryError):
        atomic.write_text(target, "x")  # the rename onto a directory fails
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


def test_a_directory_is_replaced_whole_with_the_umask_s_modes(tmp_path: Path, umask: int) -> None:
    """``atomic.write_dir`` (a sections directory of ``compile --sections``): the new directory holds exactly the
    files given, none of the old one's linger, and it and its files get the modes a plain ``mkdir``/create would."""
    d = tmp_path / "secs"
    atomic.write_dir(d, {"a.program.json": "1", "b.program.json": "2"})
    atomic.write_dir(d, {"a.program.json": "3"})
    assert sorted(p.name for p in d.iterdir()) == ["a.program.json"]
    assert (d / "a.program.json").read_text() == "3"
    assert mode(d) == 0o777 & ~umask
    assert mode(d / "a.program.json") == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["secs"]  # no temporary or old directory left beside it


def test_a_failed_directory_write_leaves_the_old_one_untouched(tmp_path: Path) -> None:
    d = tmp_path / "secs"
    atomic.write_dir(d, {"a.program.json": "1"})
    with pytest.raises(FileNotFoundError):
        atomic.write_dir(d, {"b.program.json": "2", "no/such/dir.json": "3"})  # fails midway, before the swap
    assert sorted(p.name for p in d.iterdir()) == ["a.program.json"]
    assert (d / "a.program.json").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["secs"]
