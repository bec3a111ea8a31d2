"""The proof gate (``driver/gate.py``, ``verispatial gate``): the manifest, expected verdicts, lost proofs and changed
verdicts, missing and extra programs, ``--jobs``, ``--changed``, the proof cache and replayed refutation candidates.

The shipped corpus itself is gated by ``.ci/run`` (``verispatial gate proofs --ci``); here it is only checked to be
complete (every program listed, every listed program present) and small corpora are built from it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from verispatial.certify.report import Verdict
from verispatial.cli import main
from verispatial.driver.gate import discover, gate, load_manifest
from verispatial.driver.store import ProofStore
from verispatial.errors import ParseError

ROOT = Path(__file__).resolve().parent.parent
PROOFS = ROOT / "proofs"
SMALL = "examples/pipeline_small"
NO_BARRIER = "examples/broken/e_read_no_barrier"
OVERLAP = "examples/broken/f_memory_overlap"


def corpus(tmp_path: Path, names: tuple[str, ...] = (SMALL, NO_BARRIER, OVERLAP)) -> Path:
    """A copy of some of the shipped corpus, with the shipped manifest's entries for them."""
    d = tmp_path / "proofs"
    shipped = load_manifest(PROOFS / "manifest.json")
    for n in names:
        for kind in ("program", "certificate"):
            dest = d / f"{n}.{kind}.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(PROOFS / f"{n}.{kind}.json", dest)
    doc = {"format": "verispatial.proof-manifest", "version": 1, "regenerate": "python proofs/build_corpus.py",
           "programs": {n: shipped.programs[n].to_json() for n in names}}
    (d / "manifest.json").write_text(json.dumps(doc, indent=1))
    return d


def _manifest(d: Path) -> dict[str, Any]:
    return json.loads((d / "manifest.json").read_text())  # type: ignore[no-any-return]


def _set_manifest(d: Path, doc: dict[str, Any]) -> None:
    (d / "manifest.json").write_text(json.dumps(doc))


def test_the_shipped_corpus_is_complete() -> None:
    m = load_manifest(PROOFS / "manifest.json")
    found = {f.name for f in discover(PROOFS)}
    committed = {n for n, e in m.programs.items() if e.ci}
    assert found >= committed  # every ci program is committed ...
    assert found - committed <= {n for n, e in m.programs.items() if not e.ci}  # ... and nothing else but steps
    assert all(f.certificate is not None for f in discover(PROOFS))
    assert m.programs[SMALL].expect == "proved"
    assert m.programs["examples/broken/c_trip_sender"].refuted == ("deadlock",)
    assert {n.split("/")[1].rsplit(".", 1)[1] for n in m.programs if n.startswith("models/")} == {
        "wormhole", "blackhole", "gpu"}
    assert not any(e.ci for n, e in m.programs.items() if n.startswith("steps/"))
    assert m.regenerate == "python proofs/build_corpus.py"


def test_gate_holds_on_proved_and_refuted_programs_then_reuses_from_the_cache(tmp_path: Path) -> None:
    d = corpus(tmp_path)
    st = ProofStore(tmp_path / "cache")
    run = gate(d, store=st)
    assert run.ok
    by = {o.name: o for o in run.outcomes}
    assert [(n, by[n].status, by[n].how) for n in (SMALL, NO_BARRIER, OVERLAP)] == [
        (SMALL, "holds", "computed"), (NO_BARRIER, "holds", "computed"), (OVERLAP, "holds", "computed")]
    assert by[OVERLAP].detail == "refuted as expected in memory"
    warm = gate(d, store=ProofStore(tmp_path / "cache"))
    wby = {o.name: o for o in warm.outcomes}
    assert warm.ok
    assert wby[SMALL].how == "cache"
    # A refutation is never taken from the cache: its candidate is replayed by the interpreter.
    assert wby[NO_BARRIER].how == wby[OVERLAP].how == "replayed"
    replayed = wby[NO_BARRIER].report
    assert replayed is not None
    (ref,) = replayed.results
    assert ref.verdict == Verdict.REFUTED
    assert ref.counterexample is not None
    assert ref.counterexample["replayed_by"] == "round-robin run"
    assert warm.cache["hits"] >= 3


def test_a_candidate_that_does_not_replay_sends_the_program_to_a_full_certify(tmp_path: Path) -> None:
    d = corpus(tmp_path, (OVERLAP,))
    gate(d, store=ProofStore(tmp_path / "cache"))
    (entry,) = (tmp_path / "cache" / "v1" / "refutations").rglob("*.json")
    env = json.loads(entry.read_text())
    from verispatial.driver.store import digest

    for r in env["payload"]["results"]:
        r["name"] = "memory-disjoint:(7,7).local.phase0"  # a candidate that the memory check does not reproduce
    entry.write_text(json.dumps({**env, "sha256": digest(env["payload"])}))
    (o,) = gate(d, store=ProofStore(tmp_path / "cache")).outcomes
    assert (o.status, o.how) == ("holds", "computed")


def test_a_lost_proof_fails_the_gate_naming_the_program_and_the_family(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    prog = d / f"{SMALL}.program.json"
    doc = json.loads(prog.read_text())
    # The reader's read barrier is gone: it publishes pages its reads may not have filled.
    reader = doc["programs"][0]
    assert reader["ops"][0]["body"][4] == {"op": "read_barrier"}
    del reader["ops"][0]["body"][4]
    prog.write_text(json.dumps(doc, indent=1))
    assert main(["gate", str(d), "-q"]) == 1
    out = capsys.readouterr().out
    lost = [ln for ln in out.splitlines() if ln.startswith("LOST ")]
    assert len(lost) == 1
    assert lost[0].startswith(f"LOST {SMALL}: lost proof in async-noc, certificate: ")
    assert "async-noc/async-read-publish:(0,0).reader:[0, 4] (refuted)" in lost[0]
    assert out.splitlines()[-1].startswith("gate: 1 passed, 1 failed in ")


def test_a_tampered_certificate_is_a_lost_proof(tmp_path: Path) -> None:
    d = corpus(tmp_path, (SMALL,))
    cert = d / f"{SMALL}.certificate.json"
    c = json.loads(cert.read_text())
    c["places"].pop(0)
    cert.write_text(json.dumps(c))
    (o,) = gate(d).outcomes
    assert o.status == "lost"
    assert o.detail.startswith("lost proof in certificate: 1 obligations not proved: certificate/certificate:places")


def test_a_changed_verdict_fails(tmp_path: Path) -> None:
    d = corpus(tmp_path, (SMALL, NO_BARRIER))
    m = _manifest(d)
    m["programs"][NO_BARRIER]["refuted"] = ["memory"]
    m["programs"][SMALL] = {"expect": "refuted", "refuted": ["deadlock"], "ci": True}
    _set_manifest(d, m)
    run = gate(d)
    by = {o.name: o for o in run.outcomes}
    assert by[NO_BARRIER].status == "changed"
    assert by[NO_BARRIER].detail == "changed verdict: expected refuted in memory, got refuted in async-noc"
    assert by[SMALL].detail == "changed verdict: expected refuted in deadlock, got proved"
    assert not run.ok


def test_missing_and_extra_programs_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    (d / f"{OVERLAP}.program.json").unlink()
    m = _manifest(d)
    del m["programs"][SMALL]
    _set_manifest(d, m)
    run = gate(d)
    assert [(o.name, o.status) for o in run.outcomes] == [(OVERLAP, "missing"), (SMALL, "extra")]
    assert run.exit_code == 1
    assert main(["gate", str(d), "-q"]) == 1
    out = capsys.readouterr().out
    assert f"MISSING {OVERLAP}: listed in the manifest, but {OVERLAP}.program.json is not under {d} " \
           "(regenerate: python proofs/build_corpus.py)" in out
    assert f"EXTRA {SMALL}: not in the manifest" in out


def test_a_program_without_its_certificate_fails(tmp_path: Path) -> None:
    d = corpus(tmp_path, (SMALL,))
    (d / f"{SMALL}.certificate.json").unlink()
    (o,) = gate(d).outcomes
    assert o.status == "no-certificate"


@pytest.mark.parametrize(("kind", "text", "rule"), [
    ("certificate", "{", "not valid JSON"), ("certificate", "[]", "a certificate is a JSON object"),
    ("program", "{", "not valid JSON")])
def test_a_corrupt_file_is_bad_input_naming_the_file(tmp_path: Path, kind: str, text: str, rule: str) -> None:
    # A fresh user's find: a corrupt certificate was reported as "(document): not valid JSON" under the program's
    # name, which has two files.
    d = corpus(tmp_path, (SMALL,))
    (d / f"{SMALL}.{kind}.json").write_text(text)
    (o,) = gate(d).outcomes
    assert o.status == "bad-input"
    assert o.detail.startswith(f"{SMALL.split('/')[-1]}.{kind}.json: "), o.detail
    assert rule in o.detail


def _scandir_failing(monkeypatch: pytest.MonkeyPatch, victim: Path, error: OSError) -> None:
    """``os.scandir`` of ``victim`` raises ``error``: a directory removed (or made unreadable) after its parent was
    listed, as in a live /tmp, where another process's temporary directories come and go."""
    import os

    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == victim:
            raise error
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.mark.parametrize(("error", "code", "err"), [
    (FileNotFoundError(2, "No such file or directory"), 0, ""),
    (PermissionError(13, "Permission denied"), 2, "verispatial: error: {d}: cannot read the directory: Permission "
                                                   "denied\n"),
])
def test_a_directory_removed_during_the_walk_is_passed_over_one_unreadable_is_bad_input(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: OSError,
        code: int, err: str) -> None:
    # A new user's find: `gate /tmp` exited 4, "checker error: gate: FileNotFoundError", when a directory went away
    # between the listing of /tmp and the walk into it. Its programs are gone: nothing of it is to be checked. One
    # that is there but cannot be read would leave its programs unchecked: bad input naming it.
    d = corpus(tmp_path, (SMALL,))
    sub = d / "models"
    sub.mkdir()
    error.filename = str(sub)
    _scandir_failing(monkeypatch, sub, error)
    assert main(["gate", str(d), "-q", "--no-cache"]) == code
    out = capsys.readouterr()
    assert out.err == err.format(d=sub)
    if code == 0:
        assert [f.name for f in discover(d)] == [SMALL]
        assert "gate: 1 passed, 0 failed" in out.out


def test_a_program_removed_after_the_walk_is_bad_input_naming_the_file(tmp_path: Path) -> None:
    from verispatial.driver.gate import Task, check_one

    d = corpus(tmp_path, (SMALL,))
    (found,) = discover(d)
    found.program.unlink()
    o, _ = check_one(Task(found, None, None))
    assert o.status == "bad-input"
    assert "pipeline_small.program.json" in o.detail, o.detail


def test_the_gate_keeps_no_solver_garbage_from_one_program_to_the_next(tmp_path: Path) -> None:
    """Reading a program hands the young objects to the oldest generation (``serialize.no_cycle_collection``); the
    last certify's cyclic garbage (its solver objects) among them then waited for a full collection that never came,
    and a gate over 1,000 copies of a small program grew past 10 GB. The young garbage is collected before a read."""
    import gc

    from verispatial.ir.serialize import no_cycle_collection

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    gc.collect()
    probe = Cycle()
    import weakref

    alive = weakref.ref(probe)
    del probe
    with no_cycle_collection():
        pass
    gc.collect(1)  # a young collection: what the freeze handed on to the oldest generation it no longer sees
    assert alive() is None


def test_summary_only_keeps_no_report_of_a_proof_that_holds(tmp_path: Path) -> None:
    """What the text summary needs of a program expected to prove that holds is its line: its report is not kept
    (a gate over thousands of programs kept every report); a refuted or failing program keeps its report, and the
    table reads the same."""
    from verispatial.report.gate import gate_lines

    d = corpus(tmp_path)
    full, short = gate(d), gate(d, summary_only=True)
    by = {o.name: o for o in short.outcomes}
    assert by[SMALL].report is None
    assert by[SMALL].proved is not None
    assert by[SMALL].proved[0] == by[SMALL].proved[1] == len(next(o for o in full.outcomes
                                                                  if o.name == SMALL).report.results)  # type: ignore[union-attr]
    assert by[NO_BARRIER].report is not None
    assert by[OVERLAP].report is not None
    n = by[SMALL].proved[1]
    for run in (full, short):
        (row,) = [line for line in gate_lines(run) if line.startswith(SMALL + " ")]
        assert row.split()[2:4] == ["holds", f"{n}/{n}"], row


def test_a_plain_program_json_without_its_certificate_is_not_skipped(tmp_path: Path) -> None:
    # A fresh user's find: broken.json (a program document) beside a proved program, no manifest, passed the gate
    # unseen. Other JSON without a certificate is still no program.
    d = tmp_path / "d"
    d.mkdir()
    for kind in ("program", "certificate"):
        shutil.copy(PROOFS / f"{SMALL}.{kind}.json", d / f"small.{kind}.json")
    shutil.copy(ROOT / "examples" / "broken" / "f_memory_overlap.json", d / "broken.json")
    (d / "notes.json").write_text('{"format": "something-else"}')
    run = gate(d)
    assert {o.name: o.status for o in run.outcomes} == {"broken": "no-certificate", "small": "holds"}


def test_ci_only_leaves_out_the_programs_not_in_the_ci_set(tmp_path: Path) -> None:
    d = corpus(tmp_path, (SMALL,))
    m = _manifest(d)
    m["programs"]["steps/big"] = {"expect": "proved", "ci": False}
    _set_manifest(d, m)
    assert [(o.name, o.status) for o in gate(d, ci_only=True).outcomes] == [(SMALL, "holds")]
    # Without --ci a ci: false program not on disk is one not built yet (regenerated, not committed): the gate says
    # what to build instead of checking the rest and failing it.
    with pytest.raises(ParseError, match=r"1 program the manifest lists with ci: false \(regenerated, not "
                                         r"committed\) is not built: steps/big; build them first with "
                                         r"`python proofs/build_corpus.py`, or gate only the committed programs "
                                         r"with --ci"):
        gate(d)
    m["programs"]["steps/big"]["ci"] = True  # a committed program that is not there is still a failure
    _set_manifest(d, m)
    assert ("steps/big", "missing") in [(o.name, o.status) for o in gate(d).outcomes]


def test_the_shipped_corpus_without_its_steps_says_what_to_build(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh clone has no decode steps (``ci: false``, ``.gitignore``): ``gate proofs`` without ``--ci`` exits 2
    with one line naming them and the command that builds them, before checking anything."""
    d = tmp_path / "proofs"
    shutil.copytree(PROOFS, d, ignore=shutil.ignore_patterns("steps"))
    assert main(["gate", str(d), "-q"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"verispatial: error: {d}: 2 programs the manifest lists with ci: false (regenerated, not "
                   "committed) are not built: steps/llama3_2_1b_decode_step.wormhole, "
                   "steps/qwen2_5_0_5b_decode_step.wormhole; build them first with `python proofs/build_corpus.py`, "
                   "or gate only the committed programs with --ci\n")


@pytest.mark.parametrize(("doc", "rule"), [
    ([], "a manifest is a JSON object"),
    ({"format": "x", "version": 1, "programs": {}},
     "expected format 'verispatial.proof-manifest' and version 1, got format 'x' and version 1"),
    ({"format": "verispatial.proof-manifest", "version": 1, "programs": []}, "programs: an object"),
    ({"format": "verispatial.proof-manifest", "version": 1, "programs": {"p": {"expect": "maybe"}}},
     "programs.p.expect: one of proved, refuted, got 'maybe'"),
    ({"format": "verispatial.proof-manifest", "version": 1, "programs": {"p": {"expect": "refuted"}}},
     "programs.p.refuted: a refuted program names the families that must be refuted"),
    ({"format": "verispatial.proof-manifest", "version": 1,
      "programs": {"p": {"expect": "refuted", "refuted": ["speed"]}}}, "programs.p.refuted: a list of obligation"),
    ({"format": "verispatial.proof-manifest", "version": 1, "programs": {"p": {"expect": "proved", "ci": "yes"}}},
     "programs.p.ci: true or false"),
])
def test_a_bad_manifest_is_bad_input(doc: Any, rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL,))
    _set_manifest(d, doc)
    with pytest.raises(ParseError, match=rule.replace("(", r"\(").replace(")", r"\)")):
        gate(d)
    assert main(["gate", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"verispatial: error: {d / 'manifest.json'}: {rule}")
    assert err.count("\n") == 1


def test_without_a_manifest_every_program_is_expected_to_prove(tmp_path: Path) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    (d / "manifest.json").unlink()
    by = {o.name: o.status for o in gate(d).outcomes}
    assert by == {SMALL: "holds", OVERLAP: "lost"}


def test_gate_needs_a_directory_of_proofs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ParseError, match="is not a directory of proofs"):
        gate(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ParseError, match="holds no"):
        gate(empty)
    assert main(["gate", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"verispatial: error: {tmp_path / 'nope'}: is not a directory of proofs\n"


def test_jobs_give_the_same_outcomes(tmp_path: Path) -> None:
    d = corpus(tmp_path)
    one = gate(d)
    two = gate(d, jobs=2)
    assert [(o.name, o.status, o.detail) for o in one.outcomes] == [(o.name, o.status, o.detail) for o in two.outcomes]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_changed_rechecks_only_programs_whose_files_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "corpus")
    run = gate(d, changed="HEAD")
    assert {o.status for o in run.outcomes} == {"skipped"}
    assert run.ok
    cert = d / f"{OVERLAP}.certificate.json"
    cert.write_text(cert.read_text().replace('"places"', '"places" ', 1))  # same content, other bytes
    m = _manifest(d)
    m["programs"][NO_BARRIER]["refuted"] = ["memory"]
    _set_manifest(d, m)
    run = gate(d, changed="HEAD")
    assert {o.name: o.status for o in run.outcomes} == {SMALL: "skipped", OVERLAP: "holds", NO_BARRIER: "changed"}
    assert main(["gate", str(d), "--changed", "HEAD", "-q"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "--changed HEAD: 1 unchanged programs skipped" in out
    assert out[-1].startswith("gate: 1 passed, 1 failed, 1 skipped in ")
    assert main(["gate", str(d), "--changed", "no-such-rev", "-q"]) == 2
    assert capsys.readouterr().err.startswith("verispatial: error: --changed: 'no-such-rev' is not a revision of ")


def test_the_summary_table_and_the_closing_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    assert main(["gate", str(d), "-q", "--cache-dir", str(tmp_path / "c")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["program", "expected", "outcome", "proved", "seconds", "how"]
    assert lines[2].split()[:3] == [OVERLAP, "refuted", "(memory)"]
    assert lines[3].split()[:4] == [SMALL, "proved", "holds", "31/31"]
    assert lines[-1].startswith("gate: 2 passed, 0 failed in ")
    assert main(["gate", str(d), "--cache-dir", str(tmp_path / "c")]) == 0
    cap = capsys.readouterr()
    assert cap.out.splitlines()[3].split()[-1] == "cache"
    # stderr is not a terminal: one plain progress line per program.
    assert [ln.split(": ", 1)[1].split(" (")[0] for ln in cap.err.splitlines()] == [
        f"[1/2] {OVERLAP}: holds", f"[2/2] {SMALL}: holds"]


def test_gate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    (d / f"{SMALL}.certificate.json").unlink()
    assert main(["gate", str(d), "--json", "-q"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 1
    got = {p["name"]: (p["status"], p["how"], p["expected"]) for p in doc["programs"]}
    assert got == {SMALL: ("no-certificate", "", {"expect": "proved", "ci": True,
                                                  "source": {"example": "examples/pipeline_small.json"}}),
                   OVERLAP: ("holds", "computed", {"expect": "refuted", "refuted": ["memory"], "ci": True,
                                                   "source": {"example": "examples/broken/f_memory_overlap.json"}})}
    (overlap,) = [p for p in doc["programs"] if p["name"] == OVERLAP]
    assert overlap["report"]["exit_code"] == 1


# ------------------------------------------------------------------------ recording a refuted program's certificate


def test_write_certificate_on_a_refuted_program_says_why_it_wrote_nothing(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    cert = tmp_path / "c.json"
    prog = str(PROOFS / f"{NO_BARRIER}.program.json")
    assert main(["certify", prog, "--no-cache", "-q", "--write-certificate", str(cert)]) == 1
    assert not cert.exists()
    err = capsys.readouterr().err
    assert err == (f"verispatial: no certificate written to {cert}: 2 obligations refuted (async-noc): a certificate "
                   "is written only when every obligation is proved, or with --expect refuted for a program the "
                   "gate's manifest expects refuted\n")
    assert main(["certify", prog, "--no-cache", "-q", "--json", "--write-certificate", str(cert)]) == 1
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["exit_code"] == 1
    assert doc["write_certificate"] == {"path": str(cert), "written": False,
                                        "reason": err.split(f"{cert}: ", 1)[1].rstrip("\n")}
    assert not cert.exists()


def test_expect_refuted_records_the_certificate_the_gate_holds(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A gate user adding a broken program on purpose: the manifest says refuted, ``certify --expect refuted
    --write-certificate`` writes its certificate (what proofs/build_corpus.py writes), and the gate holds."""
    d = corpus(tmp_path, (NO_BARRIER,))
    cert = d / f"{NO_BARRIER}.certificate.json"
    cert.unlink()
    assert gate(d).outcomes[0].status == "no-certificate"
    prog = str(d / f"{NO_BARRIER}.program.json")
    assert main(["certify", prog, "--no-cache", "-q", "--json", "--expect", "refuted",
                 "--write-certificate", str(cert)]) == 1  # the exit code is still the program's verdict
    assert json.loads(capsys.readouterr().out)["write_certificate"] == {"path": str(cert), "written": True,
                                                                         "reason": None}
    # What build_corpus.py writes now (version 3): the committed version-1 certificate's places, grouped, and its
    # obligations.
    from verispatial.certify.certificate import expand_places

    new, old = json.loads(cert.read_text()), json.loads((PROOFS / f"{NO_BARRIER}.certificate.json").read_text())
    assert (new["version"], old["version"]) == (3, 1)
    def key(x: object) -> str:
        return json.dumps(x, sort_keys=True)

    assert sorted(map(key, expand_places(new["places"]))) == sorted(map(key, old["places"]))
    assert [(o["family"], o["name"]) for o in new["obligations"]] == [(o["family"], o["name"]) for o in old["obligations"]]
    assert new["program_sha256"] == old["program_sha256"]
    run = gate(d)
    assert run.ok
    assert [(o.name, o.status) for o in run.outcomes] == [(NO_BARRIER, "holds")]


def test_expect_refuted_on_a_program_that_proves_writes_nothing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    cert = tmp_path / "c.json"
    prog = str(PROOFS / f"{SMALL}.program.json")
    assert main(["certify", prog, "--no-cache", "-q", "--expect", "refuted", "--write-certificate", str(cert)]) == 0
    assert not cert.exists()
    assert capsys.readouterr().err == (f"verispatial: no certificate written to {cert}: expected refuted, but no "
                                       "obligation is refuted\n")


def test_expect_takes_write_certificate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", str(PROOFS / f"{SMALL}.program.json"), "--expect", "refuted"]) == 2
    assert capsys.readouterr().err == ("verispatial: error: --expect: needs --write-certificate OUT.json (it names "
                                       "the verdict whose certificate is written)\n")
