"""``.pre-commit-hooks.yaml``: its hooks, run by the ``pre-commit`` package in a temporary git repository that uses
this repository as its hook repository (installed offline into pre-commit's own environment, over the packages
already installed), pass on a sound corpus and fail on a lost proof and on a program that does not certify."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROOFS = ROOT / "proofs"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def _hook_repo(tmp: Path) -> tuple[Path, str]:
    """This repository's package and hook definitions as committed in a repository of their own (the working tree
    as it is now, without the corpus): what a user's ``repo:`` line points at."""
    repo = tmp / "hooks"
    repo.mkdir()
    for name in (".pre-commit-hooks.yaml", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, repo / name)
    shutil.copytree(ROOT / "verispatial", repo / "verispatial", ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "hooks")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def _project(tmp: Path, hooks: Path, rev: str) -> Path:
    proj = tmp / "project"
    d = proj / "proofs" / "examples"
    d.mkdir(parents=True)
    for kind in ("program", "certificate"):
        shutil.copy(PROOFS / "examples" / f"pipeline_small.{kind}.json", d / f"pipeline_small.{kind}.json")
    shipped = json.loads((PROOFS / "manifest.json").read_text())["programs"]
    (proj / "proofs" / "manifest.json").write_text(json.dumps({
        "format": "verispatial.proof-manifest", "version": 1,
        "programs": {"examples/pipeline_small": shipped["examples/pipeline_small"]}}))
    config = {"repos": [{"repo": str(hooks), "rev": rev,
                         "hooks": [{"id": "verispatial-gate"}, {"id": "verispatial-certify"}]}]}
    (proj / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(proj, "init", "-q")
    _git(proj, "add", ".")
    _git(proj, "commit", "-qm", "corpus")
    return proj


def _run(proj: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # pre-commit builds the hooks' environment with virtualenv and pip: here from the packages already installed
    # (no index, no isolated build), so the test needs no network.
    env.update(PRE_COMMIT_HOME=str(home), VIRTUALENV_SYSTEM_SITE_PACKAGES="1", PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"], cwd=proj,
                          env=env, capture_output=True, text=True, check=False, timeout=900)


def test_the_hooks_are_defined() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"verispatial-gate", "verispatial-certify"}
    assert hooks["verispatial-gate"]["entry"].startswith("verispatial gate")
    assert hooks["verispatial-gate"]["pass_filenames"] is False
    assert hooks["verispatial-certify"]["entry"].startswith("verispatial certify")


def test_pre_commit_runs_gate_and_certify(tmp_path: Path) -> None:
    hooks, rev = _hook_repo(tmp_path)
    proj = _project(tmp_path, hooks, rev)
    home = tmp_path / "pre-commit-home"
    ok = _run(proj, home)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "verispatial proof gate" in ok.stdout
    assert "gate: 1 passed, 0 failed" in ok.stdout
    assert "verdict: proved" in ok.stdout
    # A lost proof (a place dropped from the certificate) and a program that does not certify: both hooks fail.
    cert = proj / "proofs" / "examples" / "pipeline_small.certificate.json"
    c = json.loads(cert.read_text())
    c["places"].pop()
    cert.write_text(json.dumps(c))
    shutil.copy(ROOT / "examples" / "broken" / "f_memory_overlap.json", proj / "overlap.program.json")
    _git(proj, "add", ".")
    bad = _run(proj, home)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "LOST examples/pipeline_small: lost proof in certificate" in bad.stdout
    assert "refuted memory/memory-disjoint:(0,0).local.phase0" in bad.stdout
    assert bad.stdout.count("Failed") == 2
