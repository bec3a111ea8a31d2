"""The persistent proof cache (``driver/store.py``): content-addressed, keyed by checker and solver versions,
atomic under concurrent writers, corrupt or foreign entries ignored and recomputed, only proofs ever reused."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from verispatial.certify.report import (
    Report,
    Result,
    Verdict,
    result_from_data,
    result_to_data,
    results_from_columns,
    results_to_columns,
)
from verispatial.cli import main
from verispatial.driver import store as store_module
from verispatial.driver.cache import ProofCache
from verispatial.driver.files import certify_file
from verispatial.driver.run import certify
from verispatial.driver.store import ProofStore, digest, get_report, put_report
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "examples" / "pipeline_small.json"
BROKEN = ROOT / "examples" / "broken" / "f_memory_overlap.json"


def _entries(root: Path, kind: str) -> list[Path]:
    return sorted((root / "v1" / kind).rglob("*.json")) if (root / "v1" / kind).exists() else []


def _no_loader(path: str) -> Program:
    raise AssertionError(f"a warm run must not parse {path}")


def test_a_result_round_trips_losslessly() -> None:
    r = Result("deadlock", "deadlock:(0,0).reader+2", Verdict.REFUTED, "why", {"kind": "deadlock", "stuck": [1]}, 1.5)
    assert result_from_data(json.loads(json.dumps(result_to_data(r)))) == r
    d = result_to_data(r)
    for bad in ({**d, "verdict": "maybe"}, {k: v for k, v in d.items() if k != "reason"}, {**d, "extra": 1},
                {**d, "seconds": "1"}, {**d, "counterexample": [1]}, [d]):
        with pytest.raises(ValueError):  # noqa: PT011 - each malformed form raises ValueError with its own message
            result_from_data(bad)


def test_results_round_trip_through_columns_losslessly() -> None:
    rs = (Result("deadlock", "deadlock:(0,0).reader+2", Verdict.REFUTED, "why", {"kind": "deadlock", "stuck": [1]}, 1.5),
          Result("memory", "overlap:s0", Verdict.PROVED, "same reason", seconds=0.25),
          Result("memory", "overlap:s1", Verdict.PROVED, "same reason", assumes=("a", "b")),
          Result("balance", "balance-cb:b1", Verdict.FAILED, "x", blocked_by=("sem-exact:W",), unreplayed=True),
          Result("memory", "overlap:s2", Verdict.PROVED, "same reason", seconds=3))
    cols = json.loads(json.dumps(results_to_columns(rs)))
    assert cols["reasons"] == ["why", "same reason", "x"]
    assert [i for i, _ in cols["more"]] == [0, 2, 3]
    assert results_from_columns(cols) == rs
    assert results_from_columns(results_to_columns(())) == ()
    for bad in ({**cols, "name": cols["name"][:-1]}, {k: v for k, v in cols.items() if k != "reasons"},
                {**cols, "reason": [0, 1, 1, 2, 3]}, {**cols, "verdicts": ["refuted", "maybe", "x"]},
                {**cols, "seconds": [0, 0, "1", 0, 0]}, {**cols, "family": [0, 1, 1, 2, True]},
                {**cols, "more": [[0, {"extra": 1}]]}, {**cols, "more": [[9, {"assumes": ["a"]}]]},
                {**cols, "more": [[1, {"assumes": ["a"]}], [1, {"assumes": ["b"]}]]},
                {**cols, "more": [[1, {"assumes": "a"}]]}, [cols]):
        with pytest.raises(ValueError):  # noqa: PT011 - each malformed form raises ValueError with its own message
            results_from_columns(bad)


def test_cold_then_warm_certify_reuses_the_proved_report(tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    p = load_program(SMALL)
    cold = certify(p, cache=ProofCache(st))
    assert cold.exit_code == 0
    assert not cold.cached
    assert len(_entries(tmp_path, "program")) == 1
    warm = certify(load_program(SMALL), cache=ProofCache(st))
    assert warm.cached.startswith("entry ")
    assert [(r.family, r.name, r.verdict, r.reason) for r in warm.results] == [
        (r.family, r.name, r.verdict, r.reason) for r in cold.results]
    # Without a store (the API's default) nothing is read or written.
    assert not certify(p).cached


def test_the_file_index_answers_without_parsing_the_program(tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    cold = certify_file(SMALL, load_program, store=st)
    assert cold.how == "computed"
    assert len(_entries(tmp_path, "file")) == 1
    warm = certify_file(SMALL, _no_loader, store=ProofStore(tmp_path))
    assert warm.how == "cache"
    assert warm.program is None
    assert warm.shape == cold.shape
    assert [r.name for r in warm.report.results] == [r.name for r in cold.report.results]


def test_any_change_to_the_content_is_a_miss(tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    certify_file(SMALL, load_program, store=st)
    doc = json.loads(SMALL.read_text())
    doc["name"] = "pipeline_small_renamed"
    other = tmp_path / "renamed.json"
    other.write_text(json.dumps(doc))
    got = certify_file(other, load_program, store=st)
    assert got.how == "computed"
    assert got.report.program == "pipeline_small_renamed"


def test_the_key_holds_the_checker_and_the_solver_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    st = ProofStore(tmp_path)
    k = st.key("program", b"x", 1)
    monkeypatch.setattr(store_module, "checker_version", lambda: "0.1.0+another-checker")
    k2 = st.key("program", b"x", 1)
    monkeypatch.setattr(store_module, "solver_version", lambda: "z3-solver 0.0.0")
    k3 = st.key("program", b"x", 1)
    assert len({k, k2, k3}) == 3
    with pytest.raises(ValueError, match="unknown proof cache kind 'verdict'"):
        st.key("verdict", b"x")


def test_the_checker_version_covers_every_source_file() -> None:
    v = store_module.checker_version()
    from verispatial import __version__

    assert v.startswith(__version__ + "+")
    assert len(v.split("+")[1]) == 20


@pytest.mark.parametrize("damage", ["garbage", "truncated", "digest", "kind", "foreign-checker", "foreign-solver",
                                    "not-an-object", "payload-bytes"])
def test_a_corrupt_or_foreign_entry_is_ignored_and_recomputed(damage: str, tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    p = load_program(SMALL)
    cold = certify(p, cache=ProofCache(st))
    (entry,) = _entries(tmp_path, "program")
    env = json.loads(entry.read_text())
    text = {"garbage": "\x00\xffnot json", "truncated": entry.read_text()[:-40],
            "digest": json.dumps({**env, "sha256": "0" * 64}), "kind": json.dumps({**env, "kind": "component"}),
            "foreign-checker": json.dumps({**env, "checker": "0.0.1+someone-else"}),
            "foreign-solver": json.dumps({**env, "solver": "z3-solver 4.8.0"}),
            "not-an-object": "[1, 2]",
            # one result's name changed in the file's payload text, its digest left as written
            "payload-bytes": entry.read_text().replace('"name":["', '"name":["x', 1)}[damage]
    entry.write_text(text, errors="surrogateescape")
    st2 = ProofStore(tmp_path)
    again = certify(load_program(SMALL), cache=ProofCache(st2))
    assert st2.ignored >= 1
    assert not again.cached  # recomputed ...
    assert [(r.name, r.verdict) for r in again.results] == [(r.name, r.verdict) for r in cold.results]
    assert ProofStore(tmp_path).get("program", env["key"]) is not None  # ... and the entry replaced by a good one
    assert certify(load_program(SMALL), cache=ProofCache(ProofStore(tmp_path))).cached


def test_an_entry_is_its_payload_in_canonical_text_last_and_an_older_layout_still_reads(tmp_path: Path) -> None:
    """``put`` writes the payload last in its canonical text, whose SHA-256 the reader checks on the bytes (no
    second serialization); an entry written the older way (the payload's keys in any order) reads the same."""
    st = ProofStore(tmp_path)
    payload = {"results": [{"z": 1, "a": [2, "é"]}], "b": None}
    key = st.key("program", "some material")
    assert st.put("program", key, payload)
    (entry,) = _entries(tmp_path, "program")
    text = entry.read_bytes()
    assert text.endswith(b',"payload":' + json.dumps(payload, sort_keys=True, separators=(",", ":")).encode() + b"}")
    assert ProofStore(tmp_path).get("program", key) == payload
    env = json.loads(text)
    older = {k: v for k, v in env.items() if k != "payload"}
    older["payload"] = {"b": None, "results": [{"a": [2, "é"], "z": 1}]}  # keys not sorted, spaces after separators
    entry.write_text(json.dumps(older, ensure_ascii=False))
    st2 = ProofStore(tmp_path)
    assert st2.get("program", key) == payload
    assert st2.hits == 1


@pytest.mark.parametrize("verdict", [Verdict.REFUTED, Verdict.FAILED, Verdict.ERROR])
def test_a_stored_verdict_other_than_proved_is_never_reused(verdict: Verdict, tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    p = load_program(SMALL)
    cold = certify(p, cache=ProofCache(st))
    (entry,) = _entries(tmp_path, "program")
    env = json.loads(entry.read_text())
    # A well-formed entry (good envelope, good digest) whose payload holds one non-proved verdict: ignored.
    payload = env["payload"]
    payload["columns"]["verdicts"].append(verdict.value)
    payload["columns"]["verdict"][0] = len(payload["columns"]["verdicts"]) - 1
    entry.write_text(json.dumps({**env, "payload": payload, "sha256": digest(payload)}))
    st2 = ProofStore(tmp_path)
    assert get_report(st2, "program", env["key"]) is None
    assert st2.ignored == 1
    again = certify(load_program(SMALL), cache=ProofCache(ProofStore(tmp_path)))
    assert not again.cached
    assert again.results[0].verdict == cold.results[0].verdict == Verdict.PROVED
    # Nor is a report that did not prove ever kept.
    bad = Report("x", "wormhole_b0", (Result("deadlock", "d", verdict, "why"),))
    assert not put_report(st2, "program", st2.key("program", b"x"), bad, (1, 1))


def test_a_forged_component_proof_of_another_verdict_is_not_reused(tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    certify(load_program(BROKEN), cache=ProofCache(st))
    comps = _entries(tmp_path, "component")
    assert comps  # the broken program's proved components were kept; its refutation was not
    for e in comps:
        env = json.loads(e.read_text())
        payload = env["payload"]
        assert payload["result"]["verdict"] == "proved"
        payload["result"]["verdict"] = "failed-to-prove"
        e.write_text(json.dumps({**env, "payload": payload, "sha256": digest(payload)}))
    pc = ProofCache(ProofStore(tmp_path))
    again = certify(load_program(BROKEN), cache=pc)
    assert pc.persisted == 0
    assert pc.store is not None
    assert pc.store.ignored == len(comps)
    assert again.exit_code == 1


def test_component_proofs_persist_across_processes_and_say_where_they_came_from(tmp_path: Path) -> None:
    certify(load_program(BROKEN), cache=ProofCache(ProofStore(tmp_path)))
    pc = ProofCache(ProofStore(tmp_path))
    again = certify(load_program(BROKEN), cache=pc)
    assert pc.persisted > 0
    reused = [r for r in again.results if "(proof cache)" in r.reason]
    assert len(reused) == pc.persisted
    assert all(r.verdict == Verdict.PROVED and "for the isomorphic component" in r.reason for r in reused)
    # The refutation is computed again, with its replayed counterexample, every time.
    (ref,) = [r for r in again.results if r.verdict == Verdict.REFUTED]
    assert ref.name == "memory-disjoint:(0,0).local.phase0"


def _writer(root: str, key: str, payload: Any, n: int) -> None:
    st = ProofStore(root)
    for _ in range(n):
        assert st.put("program", key, payload)


def _reader(root: str, key: str, payload: Any, n: int) -> int:
    st = ProofStore(root)
    seen = 0
    for _ in range(n):
        got = st.get("program", key)
        assert got is None or got == payload  # never a torn entry
        seen += got is not None
    assert st.ignored == 0
    return seen


def test_concurrent_writers_and_readers_never_see_a_torn_entry(tmp_path: Path) -> None:
    st = ProofStore(tmp_path)
    key = st.key("program", b"concurrent")
    payload = {"results": [{"x": i, "pad": "p" * 200} for i in range(300)]}
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        writes = [pool.apply_async(_writer, (str(tmp_path), key, payload, 25)) for _ in range(2)]
        reads = [pool.apply_async(_reader, (str(tmp_path), key, payload, 200)) for _ in range(2)]
        for w in writes:
            w.get(timeout=120)
        for r in reads:
            r.get(timeout=120)
    assert ProofStore(tmp_path).get("program", key) == payload
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file() and p.name.endswith(".tmp")]
    assert leftovers == []


def test_an_unwritable_cache_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    st = ProofStore(blocker)
    report = certify(load_program(SMALL), cache=ProofCache(st))
    assert report.exit_code == 0
    assert st.write_errors > 0
    assert st.written == 0


def test_cli_cache_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir = tmp_path / "env"
    monkeypatch.setenv("VERISPATIAL_CACHE_DIR", str(env_dir))
    assert main(["certify", str(SMALL), "-q"]) == 0
    assert _entries(env_dir, "program")
    capsys.readouterr()
    assert main(["certify", str(SMALL), "-q"]) == 0
    assert "every obligation from the proof cache (entry " in capsys.readouterr().out
    mine = tmp_path / "mine"
    assert main(["certify", str(SMALL), "-q", "--cache-dir", str(mine)]) == 0
    assert _entries(mine, "file")
    none = tmp_path / "none"
    monkeypatch.setenv("VERISPATIAL_CACHE_DIR", str(none))
    assert main(["certify", str(SMALL), "-q", "--no-cache"]) == 0
    assert not none.exists()
    out = capsys.readouterr().out
    assert "proof cache" not in out
    assert main(["certify", str(SMALL), "-q", "--cache-dir", str(SMALL)]) == 2
    assert capsys.readouterr().err == (f"verispatial: error: {SMALL}: exists and is not a directory, expected the "
                                       "proof cache directory\n")


def test_the_default_cache_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VERISPATIAL_CACHE_DIR", str(tmp_path / "x"))
    assert store_module.default_root() == tmp_path / "x"
    monkeypatch.delenv("VERISPATIAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store_module.default_root() == tmp_path / "xdg" / "verispatial"
