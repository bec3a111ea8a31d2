"""Bad host descriptions a new user wrote by hand (tt-metal front end): each is one line of bad input naming the
field and the rule, exit 2, quickly, nothing written.

Found by trying them: a key given twice in the YAML silently took its last value (``name: z`` after ``name: a`` in a
tensor: the error then said ``no tensor 'a' (declared: z, ...)``, far from the mistake); a core range past any mesh
(``cores: "0,0-99999999,99999999"``) enumerated its 10**16 sites and never returned; and a document nested too deeply
said "a kernel nested too deeply", though no kernel was read yet.
"""

from __future__ import annotations

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
