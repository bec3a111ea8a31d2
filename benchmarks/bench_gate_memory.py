"""The gate's peak memory against the number of programs it checks.

``verispatial gate DIR -q --no-cache`` over a directory of N copies of one small committed program with its
certificate (``proofs/examples/counter_release``), for each N of ``--counts``, run by this tree and by the tree at
``--baseline`` (another checkout, e.g. main's worktree) side by side: peak resident set (``ru_maxrss`` of the child),
wall seconds and the closing line. A gate that keeps nothing but the summary of each program stays flat as N grows.
``--limit-mb`` caps each child's address space (a gate that leaks is stopped, not left to the OOM killer of a shared
machine), and a capped run prints its exit code in place of the closing line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "proofs" / "examples" / "counter_release"


def copies(directory: Path, n: int) -> Path:
    """``directory/cN`` holding ``n`` copies of ``PROGRAM`` (program and certificate)."""
    d = directory / f"c{n}"
    d.mkdir()
    for i in range(n):
        for kind in ("program", "certificate"):
            shutil.copy(f"{PROGRAM}.{kind}.json", d / f"p{i}.{kind}.json")
    return d


def run(tree: Path, corpus: Path, limit_mb: int) -> tuple[int, float, str]:
    """(peak RSS in MB, wall seconds, closing line or exit code) of ``tree``'s gate over ``corpus`` in a child
    process of its own (so ``ru_maxrss`` of the children is that run's alone: it is read in a fresh helper)."""
    code = ("import resource, subprocess, sys, time\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({limit_mb} << 20, {limit_mb} << 20))\n"
            "t0 = time.perf_counter()\n"
            "p = subprocess.run([sys.executable, '-m', 'verispatial', 'gate', sys.argv[1], '-q', '--no-cache'],"
            " capture_output=True, text=True, check=False)\n"
            "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            "last = (p.stdout.strip().splitlines() or [''])[-1] if p.returncode in (0, 1) else f'exit {p.returncode}'\n"
            "print(rss // 1024, round(time.perf_counter() - t0, 1), last, sep='\\t')\n")
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.run([sys.executable, "-c", code, str(corpus)], cwd=tree, env=env, capture_output=True, text=True,
                       check=True)
    rss, wall, last = p.stdout.rstrip("\n").split("\t", 2)
    return int(rss), float(wall), last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="the checkout to compare with (e.g. main's)")
    ap.add_argument("--counts", default="50,1000", help="the numbers of programs (comma-separated)")
    ap.add_argument("--limit-mb", type=int, default=4000, help="each gate's address-space cap in MiB")
    args = ap.parse_args()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| programs | tree | peak RSS MB | wall s | gate says |")
    print("|---:|---|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.counts.split(",")):
            corpus = copies(Path(tmp), n)
            for name, tree in (("baseline", args.baseline), ("this tree", ROOT)):
                rss, wall, last = run(tree, corpus, args.limit_mb)
                print(f"| {n} | {name} | {rss} | {wall} | {last} |", flush=True)


if __name__ == "__main__":
    main()
