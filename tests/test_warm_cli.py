"""A warm ``certify`` answered from the proof store's ``summary`` entry before the command line is built
(``cli/warm.py``): the same bytes as the full command for every option, the full command on any doubt, and none of
the modules a warm run does not need."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from verispatial.cli import main
from verispatial.cli.app import main as full_command
from verispatial.cli.warm import _options, answer
from verispatial.driver import store as store_module
from verispatial.driver.store import ProofStore

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "examples" / "pipeline_small.json"
THREE = ROOT / "examples" / "three_sections.json"
BROKEN = ROOT / "examples" / "broken" / "f_memory_overlap.json"


def _timeless(text: str) -> str:
    """``text`` with the run's own seconds (the verdict line's total, the progress line's elapsed) blanked: the only
    figures two runs of one command may print differently."""
    text = re.sub(r"obligations in \d+\.\d\d s\)", "obligations in S s)", text)
    return re.sub(r"\(\d+\.\d s\)$", "(S s)", text, flags=re.MULTILINE)


def _entries(root: Path, kind: str) -> list[Path]:
    return sorted((root / "v1" / kind).rglob("*.json")) if (root / "v1" / kind).exists() else []


def _run(fn: object, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str, str]:
    capsys.readouterr()
    rc = fn(args)  # type: ignore[operator]
    got = capsys.readouterr()
    return rc, got.out, got.err


@pytest.mark.parametrize("program", [SMALL, THREE], ids=lambda p: p.stem)
@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["progress", "quiet"])
def test_a_warm_certify_prints_what_the_full_command_prints(program: Path, quiet: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", str(program), "--cache-dir", str(tmp_path), *quiet]
    rc, cold_out, _ = _run(main, args, capsys)
    assert rc == 0
    assert _entries(tmp_path, "summary")
    rc, fast_out, fast_err = _run(answer, args, capsys)
    assert rc == 0  # answered from the store, not by the full command
    rc, full_out, full_err = _run(full_command, args, capsys)
    assert rc == 0
    assert "every obligation from the proof cache (entry " in full_out
    assert _timeless(fast_out) == _timeless(full_out)
    assert _timeless(fast_err) == _timeless(full_err)
    assert (fast_err == "") == bool(quiet)
    # A cold run prints the same lines but the one naming the cache entry, and its own seconds.
    assert _timeless(cold_out) == _timeless("".join(line for line in full_out.splitlines(keepends=True)
                                                    if "every obligation from the proof cache" not in line))


def test_every_other_output_is_the_full_commands_and_equals_a_cold_runs(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    outs = {}
    for run in ("cold", "warm"):
        args = ["certify", str(SMALL), "-q", "--cache-dir", str(store), "--json", "--sarif", str(tmp_path / f"{run}.sarif"),
                "--junit", str(tmp_path / f"{run}.xml")]
        assert _options(args) is None  # --json, --sarif, --junit: the full command answers
        rc, out, _ = _run(main, args, capsys)
        assert rc == 0
        outs[run] = json.loads(out)
    assert (tmp_path / "cold.sarif").read_bytes() == (tmp_path / "warm.sarif").read_bytes()
    assert (tmp_path / "cold.xml").read_bytes() == (tmp_path / "warm.xml").read_bytes()
    assert outs["warm"].pop("cached").startswith("entry ")
    for doc in outs.values():
        doc.pop("seconds")
    assert outs["cold"] == outs["warm"]


def test_the_warm_path_imports_nothing_it_does_not_need(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", str(SMALL), "-q", "--cache-dir", str(tmp_path)]
    assert main(args) == 0
    capsys.readouterr()
    probe = ("import sys\nfrom verispatial.cli import main\nrc = main(sys.argv[1:])\n"
             "heavy = ('click', 'rich', 'attr', 'attrs', 'cattrs', 'z3', 'jsonschema', 'importlib.metadata', "
             "'verispatial.ir', 'verispatial.certify.report', 'verispatial.cli.app')\n"
             "sys.stderr.write(repr(sorted(m for m in heavy if m in sys.modules)) + f' {rc}')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("FORCE_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, check=False)
    assert proc.stderr == "[] 0"
    _, full_out, _ = _run(full_command, args, capsys)
    assert _timeless(proc.stdout) == _timeless(full_out)


def test_any_doubt_runs_the_full_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["certify", str(SMALL), "-q", "--cache-dir", str(tmp_path)]
    assert main(args) == 0
    _, expected, _ = _run(full_command, args, capsys)
    (summary,) = _entries(tmp_path, "summary")
    good = summary.read_bytes()

    def falls_back() -> None:
        assert answer(args) is None
        rc, out, _ = _run(main, args, capsys)
        assert rc == 0
        assert _timeless(out) == _timeless(expected)

    summary.write_bytes(good.replace(b'"program":"', b'"program":"x'))  # its digest no longer matches
    falls_back()
    env = json.loads(good)
    key = env["key"]
    bad = {**env["payload"], "families": [[f, p - 1, 1, u, e, s] for f, p, _x, u, e, s in env["payload"]["families"]]}
    ProofStore(tmp_path).put("summary", key, bad)  # a well-formed entry that is not a proof
    falls_back()
    summary.unlink()  # no summary: the full command reads the report (and never writes a summary back)
    falls_back()
    summary.write_bytes(good)
    assert answer(args) == 0
    capsys.readouterr()
    other = tmp_path / "other.json"
    other.write_bytes(SMALL.read_bytes() + b"\n")  # other bytes: a miss, whatever they load to
    assert answer(["certify", str(other), "-q", "--cache-dir", str(tmp_path)]) is None


@pytest.mark.parametrize("env", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_where_rich_colours_the_lines_the_shortcut_prints_through_it(env: str, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["certify", str(SMALL), "--cache-dir", str(tmp_path)]
    assert main([*args, "-q"]) == 0
    monkeypatch.setenv(env, "1")  # as a terminal would: rich colours stdout (and draws a bar on stderr)
    rc, fast_out, fast_err = _run(answer, args, capsys)
    assert rc == 0
    assert "\x1b[" in fast_out
    rc, full_out, full_err = _run(full_command, args, capsys)
    assert rc == 0
    assert _timeless(fast_out) == _timeless(full_out)
    assert _timeless(fast_err) == _timeless(full_err)


def test_a_fault_while_printing_is_reported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the shortcut has written its progress, a fault is worded as the full command words one (exit 4), and the
    full command does not run a second time."""
    args = ["certify", str(SMALL), "--cache-dir", str(tmp_path)]
    assert main([*args, "-q"]) == 0
    capsys.readouterr()

    class Broken:
        def write(self, _text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stdout", Broken())
    assert main(args) == 4
    err = capsys.readouterr().err
    assert err.count("every obligation from the proof cache") == 1
    assert err.endswith("verispatial: checker error: BrokenPipeError: [Errno 32] Broken pipe\n")


def test_a_refuted_program_has_no_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", str(BROKEN), "-q", "--cache-dir", str(tmp_path)]
    assert main(args) == 1
    assert _entries(tmp_path, "summary") == []
    assert answer(args) is None
    _, first, _ = _run(main, args, capsys)
    assert "refuted" in first


@pytest.mark.parametrize(("argv", "expected"), [
    (["certify", "p.json"], ("p.json", False, None)),
    (["certify", "-q", "p.json", "--cache-dir", "d", "--jobs", "2"], ("p.json", True, "d")),
    (["certify", "p.json", "--quiet", "--cache-dir=d", "--jobs=12"], ("p.json", True, "d")),
    (["certify", "p.json", "--json"], None),
    (["certify", "p.json", "--certificate", "c.json"], None),
    (["certify", "p.json", "--budget", "5"], None),
    (["certify", "p.json", "--no-cache"], None),
    (["certify", "p.json", "--jobs", "0"], None),
    (["certify", "p.json", "--jobs", "02"], None),
    (["certify", "p.json", "--cache-dir"], None),
    (["certify", "p.json", "--cache-dir", "a", "--cache-dir", "b"], None),
    (["certify", "p.json", "q.json"], None),
    (["certify", "k.py"], None),
    (["certify", "host.yaml"], None),
    (["certify", "--", "p.json"], None),
    (["certify", "-qq", "p.json"], None),
    (["certify"], None),
    (["validate", "p.json"], None),
])
def test_which_command_lines_the_warm_path_answers(argv: list[str],
                                                   expected: tuple[str, bool, str | None] | None) -> None:
    assert _options(argv) == expected


def test_the_checker_version_hashes_every_source_in_path_order() -> None:
    root = Path(store_module.__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):  # the definition: every .py and .json, by relative path
        if f.suffix in (".py", ".json") and f.is_file() and "__pycache__" not in f.parts:
            h.update(f.relative_to(root).as_posix().encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    assert store_module.checker_version().endswith("+" + h.hexdigest()[:20])


def test_the_solver_version_is_the_distributions() -> None:
    from importlib import metadata

    assert store_module._dist_info_version("z3_solver") == metadata.version("z3-solver")
    assert store_module._dist_info_version("no_such_distribution_here") is None
