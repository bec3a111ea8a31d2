"""Loader and CLI fuzzing (issue 9, deliverable 7): mutated valid programs, model graphs and certificates — wrong
types, huge and negative numbers, huge arrays, deep nesting, truncation, duplicate keys, unknown fields, ids out of
range — through the CLI's ``main(argv)`` in-process.

For every input: no traceback, an exit code in 0-4 and never 4 (a checker error on bad input is a bug), bad input
answered on one short line (the message quotes at most ``limits.QUOTE_MAX`` characters of the input), ``--json``
prints exactly one JSON document, ``certify`` never says ``proved`` on an input ``validate`` refuses, and no certify
run outlasts its ``--budget`` without a failed-to-prove saying so.

``FUZZ_INPUTS`` inputs by default (CI); ``HYPOTHESIS_PROFILE=thorough`` runs ``THOROUGH_INPUTS`` (its last result
is recorded in benchmarks/README.md; ``FUZZ_REPORT=path`` writes the run's counts there). The inputs come from a
seeded generator: a failure names the command and the mutation, and ``FUZZ_SEED`` replays a run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import resource
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from verispatial.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROGRAM_SEEDS = [ROOT / "tests/badinput/small_valid.json", ROOT / "examples/pipeline_small.json",
                 ROOT / "examples/mcast_pair.json", ROOT / "examples/counter_release.json",
                 ROOT / "examples/three_sections.json"]
GRAPH_SEEDS = [ROOT / "examples/models/state_accumulate.json", ROOT / "examples/models/mlp_block.json"]
CERTIFICATE_SEED = (ROOT / "proofs/examples/pipeline_small.program.json",
                    ROOT / "proofs/examples/pipeline_small.certificate.json")

FUZZ_INPUTS = 240
THOROUGH_INPUTS = 10_000
#: The --budget of every fuzzed certify run, and how long past it a run may take to stop and report (the budget is
#: checked between families and queries; reading the file and printing the report lie outside it; the machine may
#: be shared).
BUDGET = 4.0
BUDGET_SLACK = 15.0
#: Address space the fuzzing process may use (``_memory_bound``).
MEMORY_BYTES = 12 * 2**30
#: The longest stderr line a bad input may produce (the message quotes at most QUOTE_MAX characters of the input;
#: the rest is the file name, the JSON path and the rule).
LINE_MAX = 700


@attrs.frozen
class Run:
    argv: tuple[str, ...]
    rc: int
    out: str
    err: str
    seconds: float


def run(argv: list[str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return Run(tuple(argv), rc, out.getvalue(), err.getvalue(), time.perf_counter() - t0)


# ----------------------------------------------------------------------------------------------- mutations

#: Text that stands for an integer literal too long for ``json.dumps`` (Python refuses to print 4300+ digits).
BIG = "\x00BIG\x00"


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


ID_KEYS = ("buf", "sem", "group", "id", "into", "src", "alias_of", "section", "source", "cb", "at", "site")
NUMBERS = [0, -1, 1, 2, 255, 65535, 65536, 2**31, 2**32 - 1, 2**32, 2**63, -(2**63), 10**30, 10**300]


def _value(rng: random.Random, old: Any) -> Any:
    """A replacement for ``old``: a wrong type, a huge or negative number, an id out of range, a huge array."""
    kind = rng.randrange(9)
    if kind == 0:
        return rng.choice(["", "x", "wormhole", "bf16", "loop", None, True, False, 1.5, float("1e308"), {}, []])
    if kind in (1, 2):
        return rng.choice(NUMBERS) if rng.random() < 0.8 else BIG
    if kind == 3 and isinstance(old, int) and not isinstance(old, bool):
        return old + rng.choice([-2, -1, 1, 2, 7, 1000])
    if kind == 4:
        # At most about 2 MB of JSON, in copies: a subtree repeated 20,000 times as one shared object, which a later
        # mutation then grew once for all of them, ran the fuzzer itself out of memory before any command saw the
        # input (thorough runs, seed 10).
        text = json.dumps(old)
        n = max(2, min(rng.choice([2, 100, 20_000]), 2_000_000 // max(len(text), 1)))
        return [json.loads(text) for _ in range(n)]
    if kind == 5:
        return {"x": old}
    if kind == 6 and isinstance(old, list) and old:
        return old[: rng.randrange(len(old))]
    if kind == 7 and isinstance(old, str):
        return old + "_" + "z" * rng.choice([1, 300, 5000])
    return rng.choice(NUMBERS)


def mutate(rng: random.Random, doc: Any) -> tuple[str, str]:
    """(text, what was done): one to three tree mutations of ``doc``, then maybe a text-level one."""
    doc = json.loads(json.dumps(doc))
    what: list[str] = []
    if rng.random() < 0.4:  # a number only (loop counts, pages, trips, shapes, ids): inputs that often stay valid
        ints = [p for p in _paths(doc) if type(_get(doc, p)) is int]
        if ints:
            path = rng.choice(ints)
            old = _get(doc, path)
            new = rng.choice([old + 1, old - 1, old * 2, old * 1000, 0, 2**16 - 1, 2**31, 2**32 - 1, 2**32])
            doc = _set(doc, path, new)
            return json.dumps(doc), f"number {list(path)} {old} -> {new}"
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        paths = _paths(doc)
        path = rng.choice(paths[1:] if len(paths) > 1 else paths)
        old = _get(doc, path)
        op = rng.randrange(6)
        parent = _get(doc, path[:-1]) if path else None
        if op == 0 and isinstance(parent, dict) and len(path) > 0:
            del parent[path[-1]]
            what.append(f"drop {list(path)}")
        elif op == 1 and isinstance(old, dict):
            old[rng.choice(["extra", "op", "pages", "count", "body", "zz" * 40])] = _value(rng, None)
            what.append(f"add a field to {list(path)}")
        elif op == 2 and isinstance(parent, dict) and path[-1] in ID_KEYS:
            doc = _set(doc, path, rng.choice([-1, 1, 3, 17, 1000, 2**40]))
            what.append(f"id {list(path)}")
        elif op == 3 and isinstance(old, list) and len(old) >= 2:
            i = rng.randrange(len(old) - 1)
            old[i], old[i + 1] = old[i + 1], old[i]
            what.append(f"swap in {list(path)}")
        else:
            doc = _set(doc, path, _value(rng, old))
            what.append(f"replace {list(path)}")
    text = json.dumps(doc, indent=1 if rng.random() < 0.5 else None).replace(json.dumps(BIG), "1" + "0" * 5000)
    r = rng.random()
    if r < 0.08:
        cut = rng.randrange(max(len(text), 1))
        text = text[:cut]
        what.append(f"truncate at {cut}")
    elif r < 0.14:
        i = text.find('"name"')
        if i >= 0:
            text = text[:i] + '"name": "dup", ' + text[i:]
            what.append("duplicate key name")
    elif r < 0.20:
        depth = rng.choice([50, 600, 5000, 100_000])
        i = text.rfind("}")
        if i > 0:
            text = text[:i] + ', "deep": ' + "[" * depth + "]" * depth + text[i:]
            what.append(f"nest {depth} deep")
    elif r < 0.23:
        text = text.replace('"count": 2', '"count": ' + str(2**31), 1).replace('"max": 4', '"max": ' + str(2**32 - 1), 1)
        what.append("loop counts near the 32-bit limit")
    return text, "; ".join(what)


# ----------------------------------------------------------------------------------------------- properties


class Failures:
    def __init__(self) -> None:
        self.found: list[str] = []
        self.counts: dict[str, int] = {}

    def note(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def check(self, ok: bool, what: str, r: Run, how: str) -> None:
        if not ok and len(self.found) < 20:
            self.found.append(f"{what}: {' '.join(r.argv)} ({how}) -> rc {r.rc}\n  stdout: {r.out[-400:]!r}\n"
                              f"  stderr: {r.err[-600:]!r}")


def _common(f: Failures, r: Run, how: str, as_json: bool) -> None:
    f.check("Traceback" not in r.err and "Traceback" not in r.out, "a traceback", r, how)
    f.check(r.rc in (0, 1, 2, 3), "an exit code outside 0-3 (4 is a checker error)", r, how)
    if as_json:
        try:
            json.loads(r.out)
            ok = True
        except ValueError:
            ok = False
        f.check(ok, "--json did not print one JSON document", r, how)
    if r.rc == 2:
        lines = r.err.splitlines()
        f.check(len(lines) == 1 and lines[0].startswith("verispatial: error: "), "bad input not on one line", r, how)
        f.check(all(len(x) <= LINE_MAX for x in lines), "a bad-input message quoting too much", r, how)
        f.check("proved" not in r.out or (as_json and '"proved": 0' in r.out), "proved on bad input", r, how)


def _certify_checks(f: Failures, r: Run, how: str) -> None:
    _common(f, r, how, True)
    if r.rc in (0, 1, 3):
        report = json.loads(r.out)
        results = report.get("results", []) if isinstance(report, dict) else []
        if r.seconds > BUDGET + BUDGET_SLACK:  # (a verdict then is never proved: rc 3 or a refutation, rc 1)
            f.check(any(x.get("family") == "budget" for x in results), "a run past its budget without saying so",
                    r, how)


def fuzz_program(f: Failures, rng: random.Random, doc: Any, tmp: Path) -> None:
    text, how = mutate(rng, doc)
    path = tmp / "p.json"
    path.write_text(text)
    v = run(["validate", "--json", str(path)])
    _common(f, v, how, True)
    plain = run(["validate", str(path)])
    _common(f, plain, how, False)
    f.check(plain.rc == v.rc, "validate and validate --json disagree", plain, how)
    c = run(["certify", "--json", "--no-cache", "-q", "--budget", str(BUDGET), str(path)])
    _certify_checks(f, c, how)
    if v.rc == 2:
        f.note("program refused")
        f.check(c.rc == 2, "certify took a program validate refuses", c, how)
        return
    f.note("program valid")
    f.check(c.rc != 2, "certify refused a program validate accepts", c, how)
    s = run(["simulate", "--json", str(path)])
    _common(f, s, how, True)
    f.check(s.rc in (0, 1), "simulate exit code", s, how)


def fuzz_graph(f: Failures, rng: random.Random, doc: Any, tmp: Path) -> None:
    text, how = mutate(rng, doc)
    path = tmp / "g.json"
    path.write_text(text)
    r = run(["compile", str(path), "--target", "wormhole", "--no-certify", "-q", "-o", str(tmp / "out.json")])
    _common(f, r, how, False)
    f.check(r.rc in (0, 2), "compile --no-certify exit code", r, how)
    f.note("graph compiled" if r.rc == 0 else "graph refused")


def fuzz_certificate(f: Failures, rng: random.Random, doc: Any, tmp: Path) -> None:
    text, how = mutate(rng, doc)
    path = tmp / "c.json"
    path.write_text(text)
    r = run(["certify", "--json", "--no-cache", "-q", "--budget", str(BUDGET), "--certificate", str(path),
             str(CERTIFICATE_SEED[0])])
    _certify_checks(f, r, how)
    f.note({0: "certificate accepted", 1: "certificate mismatch", 2: "certificate refused"}.get(r.rc, "other"))


def _inputs() -> int:
    return THOROUGH_INPUTS if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else FUZZ_INPUTS


@pytest.fixture
def _memory_bound() -> Iterator[None]:
    """At most ``MEMORY_BYTES`` of address space while fuzzing: an input that makes the loader or the checker
    allocate without bound fails the test as a checker error (MemoryError, exit 4) instead of exhausting the
    machine."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(MEMORY_BYTES, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.usefixtures("_memory_bound")
def test_fuzz_loader_and_cli(tmp_path: Path) -> None:
    seed = int(os.environ.get("FUZZ_SEED", "9"))
    rng = random.Random(seed)
    programs = [json.loads(p.read_text()) for p in PROGRAM_SEEDS]
    graphs = [json.loads(p.read_text()) for p in GRAPH_SEEDS]
    certificate = json.loads(CERTIFICATE_SEED[1].read_text())
    kinds: list[tuple[float, Callable[[Failures, random.Random, Any, Path], None], list[Any]]] = [
        (0.7, fuzz_program, programs), (0.15, fuzz_graph, graphs), (0.15, fuzz_certificate, [certificate])]
    f = Failures()
    n = _inputs()
    t0 = time.perf_counter()
    report = os.environ.get("FUZZ_REPORT")
    for i in range(n):
        if report and i % 500 == 0:  # a long thorough run shows how far it got
            Path(report).write_text(json.dumps({"done": i, "of": n, "seed": seed, "failures": len(f.found),
                                                "seconds": round(time.perf_counter() - t0), **f.counts,
                                                "found": f.found}) + "\n")
        x = rng.random()
        for weight, fn, docs in kinds:
            if x < weight:
                fn(f, rng, rng.choice(docs), tmp_path)
                break
            x -= weight
    summary = {"inputs": n, "seed": seed, "seconds": round(time.perf_counter() - t0), "failures": len(f.found),
               **dict(sorted(f.counts.items()))}
    if report:  # the thorough run's figures for benchmarks/README.md
        Path(report).write_text(json.dumps(summary, indent=1) + "\n")
    assert not f.found, "\n".join(f.found)
    # The mutations reach both sides of the loader: some inputs stay valid, most are refused.
    assert f.counts.get("program valid", 0) > 0, summary
    assert f.counts.get("program refused", 0) > 0, summary


@pytest.mark.parametrize("text", ["1" + "0" * 5000, "[" * 100_000 + "]" * 100_000, '{"a": 1, "a": 2}', "NaN",
                                  "Infinity", '{"format": "verispatial.program", "version": ' + "9" * 4000 + "}"])
@pytest.mark.parametrize("command", ["validate", "certify", "simulate"])
def test_hostile_documents_are_bad_input(tmp_path: Path, text: str, command: str) -> None:
    """Documents no JSON reader should trust: exit 2 with one short line in every command, --json included."""
    path = tmp_path / "p.json"
    path.write_text(text)
    for argv in ([command, str(path)], [command, "--json", str(path)]):
        r = run(argv)
        assert r.rc == 2, r
        assert len(r.err.splitlines()) == 1, r.err
        assert len(r.err) <= LINE_MAX, r.err
        assert "Traceback" not in r.err
        if "--json" in argv:
            assert json.loads(r.out)["exit_code"] == 2
