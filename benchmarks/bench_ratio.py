"""Issue 19 goal 3 per round: ``certify STEP.json --no-cache -q`` of the 16-layer Llama-3.2-1B and the 80-layer
Llama-3.1-70B decode steps, this tree against another checkout (the baseline), trees alternating round by round.

The two steps are written once by this tree (``compile MODEL --target wormhole -o STEP.json --no-certify``; the
program format is the same in both trees, else the other tree refuses it). Each certify is a fresh ``python -m
verispatial`` process with ``PYTHONPATH`` set to its tree; its CPU is user + system time (``os.wait4``), so a machine
shared with other jobs disturbs it far less than wall. Printed per round: the load average, each tree's 16- and
80-layer CPU and their ratio; then the least of each step over the rounds and their ratio (target: 1.5x, in every
round).

    python benchmarks/bench_ratio.py --base ../main [--rounds 4] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "models"
STEPS = (("llama3_2_1b", 16), ("llama3_1_70b", 80))


def cpu(tree: Path, args: list[str], pycache: Path) -> float:
    """User + system CPU seconds of ``python -m verispatial ARGS`` run from ``tree`` (asserting exit 0), its
    bytecode cached under ``pycache`` (``PYTHONPYCACHEPREFIX``: a shell with ``PYTHONDONTWRITEBYTECODE`` set would
    otherwise have every run compile the whole package, a second of CPU added to both steps alike)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen([sys.executable, "-m", "verispatial", *args], cwd=tree,
                            env={**env, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(pycache)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, (tree, args)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the baseline checkout (e.g. ../main)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--keep", type=Path, help="write the steps here (default: a temporary directory)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_ratio."))
    work.mkdir(parents=True, exist_ok=True)
    pycache = work / "pycache"
    files = []
    for model, _layers in STEPS:
        f = work / f"{model}_decode_step.json"
        if not f.exists():
            cpu(ROOT, ["compile", str(MODELS / f"{model}_decode_step.json"), "--target", "wormhole", "-o", str(f),
                       "--no-certify", "--no-cache", "-q"], pycache)
        files.append(f)
    trees = {"base": args.base.resolve(), "this tree": ROOT}
    for tree in trees.values():  # untimed: each tree's bytecode written before the first round
        cpu(tree, ["certify", str(files[0]), "--no-cache", "-q"], pycache)
    least: dict[str, list[float]] = {t: [float("inf")] * len(STEPS) for t in trees}
    print(f"{STEPS[0][1]}- / {STEPS[1][1]}-layer step, certify --no-cache -q, CPU s (ratio); files in {work}\n")
    print("| round (load average) | " + " | ".join(trees) + " |\n|---|---:|---:|")
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        got: dict[str, list[float]] = {}
        for t in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            got[t] = [cpu(trees[t], ["certify", str(f), "--no-cache", "-q"], pycache) for f in files]
            least[t] = [min(a, b) for a, b in zip(least[t], got[t], strict=True)]
        cells = [f"{a:.2f} / {b:.2f} ({b / a:.2f}x)" for a, b in (got[t] for t in trees)]
        print(f"| {r + 1} ({load:.1f} -> {os.getloadavg()[0]:.1f}) | " + " | ".join(cells) + " |", flush=True)
    cells = [f"{a:.2f} / {b:.2f} ({b / a:.2f}x)" for a, b in (least[t] for t in trees)]
    print("| least against least | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
