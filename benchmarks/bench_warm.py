"""Warm ``certify`` (issue 19 goal 1: at most 2x ``json.load`` of the file) of one program file, for one or more
checkouts side by side in one run: per tree, a fresh proof store is filled by one cold ``certify`` (its checker
version is part of every key, so trees never share entries), then ``--repeat`` warm runs, each a fresh
``python -m verispatial certify FILE -q`` process with that tree on ``PYTHONPATH`` (CPU: its user + system time from
``os.wait4``; the least of the runs), beside ``verispatial --help``'s CPU (interpreter start and the CLI's imports)
and ``json.load`` of the file in this process. The in-process split of a warm run (this process, this checkout):
``certify_file`` against the store, of which reading the stored report.

    python benchmarks/bench_warm.py STEP.json [--tree DIR ...] [--repeat 5]

Without ``--tree`` the checkout this script lives in. ``benchmarks/bench_scale.py`` writes the decode steps
(``--keep DIR``); ``verispatial compile examples/models/llama3_2_1b_decode_step.json --target wormhole -o STEP.json
--no-certify`` writes the 16-layer one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def measured(tree: Path, args: list[str], store: str) -> dict[str, Any]:
    """One ``python -m verispatial`` process run from ``tree``: exit code, CPU (user + system) and wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(tree), "VERISPATIAL_CACHE_DIR": store}
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "verispatial", *args], cwd=tree, stdout=out,
                                stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        last = (out.read().strip().splitlines() or [""])[-1]
    return {"exit": os.waitstatus_to_exitcode(status), "cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "last": last}


def in_process(path: Path, store_dir: str, repeat: int) -> tuple[float, float]:
    """(certify_file, of which get_report) CPU ms of a warm run in this process (this checkout), least of
    ``repeat``."""
    import verispatial.driver.files as files_mod
    from verispatial.cli.inputs import load_document_file
    from verispatial.driver.store import ProofStore

    spent: list[float] = []
    read = files_mod.get_report

    def timed_read(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return read(*a, **k)
        finally:
            spent.append(time.process_time() - t0)

    best, best_read = float("inf"), float("inf")
    files_mod.get_report = timed_read  # type: ignore[assignment]
    try:
        for _ in range(repeat):
            spent.clear()
            t0 = time.process_time()
            fr = files_mod.certify_file(path, load_document_file, store=ProofStore(store_dir))
            t = time.process_time() - t0
            assert fr.how == "cache", fr.how
            best, best_read = min(best, t), min(best_read, sum(spent))
    finally:
        files_mod.get_report = read  # type: ignore[assignment]
    return best * 1e3, best_read * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", type=Path)
    ap.add_argument("--tree", type=Path, action="append", help="a checkout to measure (repeatable; default: this one)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = args.program.resolve()
    data = path.read_bytes()
    t_json = float("inf")
    for _ in range(args.repeat):
        t0 = time.process_time()
        json.loads(data)
        t_json = min(t_json, time.process_time() - t0)
    print(f"{path.name}: {len(data) / 1e6:.2f} MB; json.load {t_json * 1e3:.1f} ms (this process, best of {args.repeat});"
          f" load average {os.getloadavg()[0]:.1f}")
    print(f"{'tree':40} {'cold s':>8} {'warm s':>8} {'wall s':>8} {'--help s':>8} {'warm/json.load':>15}")
    for tree in [t.resolve() for t in (args.tree or [ROOT])]:
        store = tempfile.mkdtemp(prefix="bench_warm.store.")
        cold = measured(tree, ["certify", str(path), "-q"], store)
        assert cold["exit"] == 0, cold
        warm = min((measured(tree, ["certify", str(path), "-q"], store) for _ in range(args.repeat)),
                   key=lambda m: m["cpu"])
        assert warm["exit"] == 0, warm
        assert "proved" in warm["last"], warm
        start = min((measured(tree, ["--help"], store) for _ in range(args.repeat)), key=lambda m: m["cpu"])
        print(f"{tree!s:40} {cold['cpu']:8.2f} {warm['cpu']:8.3f} {warm['wall']:8.2f} {start['cpu']:8.3f} "
              f"{warm['cpu'] / t_json:14.0f}x", flush=True)
        if tree == ROOT:
            total, read = in_process(path, store, args.repeat)
            print(f"  in this process: certify_file {total:.0f} ms, of which reading the stored report {read:.0f} ms")


if __name__ == "__main__":
    main()
