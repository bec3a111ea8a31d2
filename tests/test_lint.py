"""LINT GATE: ``ruff check verispatial tests`` and ``mypy verispatial`` must be clean.

Both tools come with the test extra (``pip install -e '.[test]'``), so CI runs them through pytest; a
finding fails this test with the tool's own output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=600)


def test_lint_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "verispatial", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_lint_mypy_is_clean() -> None:
    proc = _run("mypy", "verispatial")
    assert proc.returncode == 0, proc.stdout + proc.stderr
