"""The gate and certify, cold and warm, through the persistent proof cache (``verispatial/driver/store.py``).

1. ``verispatial gate proofs --ci`` over the committed corpus: cold (a fresh cache directory, every proof
   derived, one process) and warm (the same cache, nothing changed), each as the command a user runs (a new
   Python process: its start-up counts).
2. ``verispatial certify STEP.json`` of the 16-layer Llama-3.2-1B decode step, cold and warm. The step is
   ``--step PATH`` when given, else compiled here as the corpus compiles it (``compile --max-cols 1 --max-rows 1
   --max-sites 1 --no-certify -o``); ``--no-cold-step`` skips its cold certify (with ``--step`` already certified
   into ``--cache-dir``, only the warm figure is measured).

Wall seconds and CPU seconds of the child process (user + system), printed as a markdown table.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the child, exit code, last line of stdout) of ``python -m verispatial ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "verispatial", *args], cwd=ROOT, env=env, capture_output=True,
                       text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (p.stdout.strip().splitlines() or [""])[-1]
    return wall, cpu, p.returncode, last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--step", default=None, help="an already compiled decode step (default: compile it here)")
    ap.add_argument("--cache-dir", default=None, help="the cache for the step (default: a fresh one)")
    ap.add_argument("--no-cold-step", action="store_true", help="measure only the warm certify of the step")
    ap.add_argument("--no-gate", action="store_true", help="skip the gate figures")
    args = ap.parse_args()
    rows: list[tuple[str, str, float, float, int, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_gate:
            cache = str(Path(tmp) / "gate-cache")
            gate = ["gate", "proofs", "--ci", "-q", "--cache-dir", cache]
            rows.append(("gate proofs --ci", "cold", *run(gate)))
            rows.append(("gate proofs --ci", "warm", *run(gate)))
            rows.append(("gate proofs --ci", "warm", *run(gate)))
        step = args.step
        if step is None:
            step = str(Path(tmp) / "llama3_2_1b_decode_step.program.json")
            t0 = time.perf_counter()
            _wall, _cpu, code, last = run(["compile", "examples/models/llama3_2_1b_decode_step.json", "--target", "wormhole",
                                    "--max-cols", "1", "--max-rows", "1", "--max-sites", "1", "--no-certify", "-q",
                                    "-o", step])
            assert code == 0, last
            print(f"compiled the step in {time.perf_counter() - t0:.1f} s: {last}", file=sys.stderr)
        scache = args.cache_dir or str(Path(tmp) / "step-cache")
        cert = ["certify", step, "-q", "--cache-dir", scache]
        if not args.no_cold_step:
            rows.append(("certify 16-layer decode step", "cold", *run(cert)))
        rows.append(("certify 16-layer decode step", "warm", *run(cert)))
        rows.append(("certify 16-layer decode step", "warm", *run(cert)))
    print("| command | cache | wall (s) | CPU (s) | exit | last line |")
    print("|---|---|---:|---:|---:|---|")
    for what, how, wall, cpu, code, last in rows:
        print(f"| {what} | {how} | {wall:.2f} | {cpu:.2f} | {code} | {last[:90]} |")


if __name__ == "__main__":
    main()
