"""A command that needs an optional dependency not installed (pyproject.toml's extras) says which extra to install:
one line, exit 2, no traceback; never a checker error (exit 4). The missing module is simulated in a subprocess
(``sys.modules[name] = None`` makes its import raise ``ModuleNotFoundError``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from verispatial.extras import OPTIONAL, missing_extra

ROOT = Path(__file__).parent.parent
HOST = str(ROOT / "examples" / "ttmetal" / "eltwise_binary" / "host.yaml")


def run_without(module: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """``verispatial ARGV`` in a fresh interpreter where importing ``module`` fails as if it were not installed."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            f"from verispatial.cli import main\nsys.exit(main({list(argv)!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("module", ["yaml", "tree_sitter", "tree_sitter_cpp"])
@pytest.mark.parametrize("command", [["certify", HOST, "-q", "--no-cache"], ["import", "ttmetal", HOST, "-o", "{out}"]])
def test_missing_ttmetal_dependency_names_the_extra(module: str, command: list[str], tmp_path: Path,
                                                    ttnn_cpp: Path) -> None:
    out = tmp_path / "program.json"
    r = run_without(module, *(a.replace("{out}", str(out)) for a in command))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    dist = OPTIONAL[module].distribution
    assert lines[0].startswith("verispatial: error: "), lines[0]
    assert f"needs {dist}, which is not installed: pip install 'verispatial[ttmetal]'" in lines[0]
    assert "Traceback" not in r.stderr
    assert "checker error" not in r.stderr
    assert not out.exists()


def test_missing_dependency_with_json_prints_one_bad_input_document(ttnn_cpp: Path) -> None:
    r = run_without("yaml", "certify", HOST, "--json", "--no-cache")
    assert r.returncode == 2, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exit_code"] == 2
    assert doc["error"]["rule"] == ("reading a YAML host description needs PyYAML, which is not installed: "
                                    "pip install 'verispatial[ttmetal]'")


def test_a_missing_module_of_no_extra_is_not_read_as_one() -> None:
    # networkx is a required dependency: its absence is a broken installation (a checker error), not a missing extra
    assert missing_extra(ModuleNotFoundError("No module named 'networkx'", name="networkx")) is None
    bad = missing_extra(ModuleNotFoundError("No module named 'tree_sitter.binding'", name="tree_sitter.binding"))
    assert bad is not None
    assert bad.rule.endswith("pip install 'verispatial[ttmetal]'")


def _extras() -> dict[str, list[str]]:
    tomllib = pytest.importorskip("tomllib")
    extras: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return extras


@pytest.mark.parametrize("module", sorted(OPTIONAL))
def test_each_optional_module_is_installed_by_the_extra_named(module: str) -> None:
    dep = OPTIONAL[module]
    names = [re.split(r"[<>=;~! ]", req, maxsplit=1)[0].lower() for req in _extras()[dep.extra]]
    assert dep.distribution.lower() in names, (dep, names)
