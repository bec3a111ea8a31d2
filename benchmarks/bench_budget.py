"""Inputs that outlasted the run budget (issue 19, goal 5), certified and validated beside ``json.loads`` and
``validate`` of the same file, in one process.

Each input comes from ``tests/budget_programs.py`` (the generators the budget tests use): 32 nested two-iteration
loops, one page filled by a loop of 2**31 (and 10**7) reads with no blocking op, one page unpacked by 2**31 compute
steps, a 100,000-op straight-line program (and the same with a deadlock at its end), and the straight-line program
with one misspelt op (bad input). For each: ``json.loads`` of its bytes, ``verispatial validate``, and ``verispatial
certify --no-cache --budget B`` (the verdict and exit code, wall and CPU seconds), with the figure measured before
this work beside it ("before": the issue's measurements on the same machine).

    python benchmarks/bench_budget.py [--budget 60] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import budget_programs as bp  # noqa: E402

from verispatial.cli import main  # noqa: E402

#: name -> (generator, what the issue measured before this work).
INPUTS: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "nested_32": (lambda: bp.nested(32), "> 300 s, --budget 15 ignored"),
    "reads_2_31": (lambda: bp.reads(2**31), "> 90 s"),
    "reads_10_7": (lambda: bp.reads(10**7), "79 s"),
    "computes_2_31": (lambda: bp.computes(2**31), "(not measured)"),
    "straight_100k": (lambda: bp.straight(100_000), "no verdict in 400 s"),
    "straight_100k_hang": (lambda: bp.straight(100_000, hang=True), "(not measured)"),
    "straight_100k_misspelt": (lambda: bp.misspelt(bp.straight(100_000)), "64 s (bad input)"),
}


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def quiet(argv: list[str]) -> tuple[int, str]:
    """``main(argv)`` with stdout and stderr captured: (exit code, stdout)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue()


def verdict(rc: int, text: str) -> str:
    """A short verdict from certify's JSON report: exit code and the families not proved."""
    try:
        doc = json.loads(text)
    except ValueError:
        return f"exit {rc}"
    if "error" in doc:
        return f"exit {rc}: bad input"
    bad = sorted({r["family"] for r in doc.get("results", []) if r["verdict"] != "proved"})
    word = {0: "proved", 1: "refuted", 3: "failed-to-prove", 4: "error"}.get(rc, f"exit {rc}")
    return word + (f" ({', '.join(bad)})" if bad else "")


def main_(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=float, default=60.0, help="certify --budget SECONDS (default 60)")
    ap.add_argument("--only", nargs="*", choices=sorted(INPUTS), help="run only these inputs")
    args = ap.parse_args(argv)
    names = args.only or list(INPUTS)
    tmp = Path(tempfile.mkdtemp())
    print(f"certify --no-cache --budget {args.budget:g}; wall (CPU) seconds, one process\n")
    print("| input | ops | MB | json.loads | validate | certify | certify / validate | verdict | before |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for name in names:
        make, before = INPUTS[name]
        doc = make()
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(doc))
        data = path.read_bytes()
        _, lw, lc = timed(lambda data=data: json.loads(data))
        (vrc, _), vw, vc = timed(lambda path=path: quiet(["validate", str(path)]))
        (crc, text), cw, cc = timed(lambda path=path: quiet(
            ["certify", "--no-cache", "-q", "--json", "--budget", str(args.budget), str(path)]))
        ops = sum(bp.count_ops(ep["ops"]) for ep in doc["programs"])
        print(f"| {name} | {ops:,} | {len(data) / 2**20:.1f} | {lw:.2f} ({lc:.2f}) | {vw:.2f} ({vc:.2f}), exit {vrc} | "
              f"{cw:.2f} ({cc:.2f}) | {cw / vw:.1f}x | {verdict(crc, text)} | {before} |", flush=True)


if __name__ == "__main__":
    main_()
