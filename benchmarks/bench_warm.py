"""Warm ``certify`` (issue 19 goal 1: at most 2x ``json.load`` of the file) of one program file, for one or more
checkouts side by side in one run: per tree, a fresh proof store is filled by one cold ``certify`` (its checker
version is part of every key, so trees never share entries), then ``--repeat`` warm runs, each a fresh
``python -m verispatial certify FILE -q`` process with that tree on ``PYTHONPATH`` (CPU: its user + system time from
``os.wait4``; the least of the runs); beside it the same warm run through the full command (``--budget 600``: an
option the warm path of ``cli/warm.py`` leaves to the full command, which reads the stored report), ``verispatial
--help`` (interpreter start and the CLI's imports) and, as the baseline, ``python -c 'import json;
json.load(open(FILE))'`` as a process and ``json.load`` of the file in this process. Then the in-process split for
this checkout: the warm path (``cli.warm.answer``) and ``certify_file`` against the store, of which reading the
stored report.

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


def measured(tree: Path, args: list[str], store: str, command: list[str] | None = None) -> dict[str, Any]:
    """One ``python -m verispatial`` process (or ``command``) run from ``tree``: exit code, CPU (user + system) and
    wall seconds, the last line it printed."""
    env = {**os.environ, "PYTHONPATH": str(tree), "VERISPATIAL_CACHE_DIR": store}
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command or [sys.executable, "-m", "verispatial", *args], cwd=tree, stdout=out,
                                stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        last = (out.read().strip().splitlines() or [""])[-1]
    return {"exit": os.waitstatus_to_exitcode(status), "cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "last": last}


def least(repeat: int, run: Any) -> dict[str, Any]:
    """The run of least CPU of ``repeat``; each must exit 0."""
    runs = [run() for _ in range(repeat)]
    for r in runs:
        assert r["exit"] == 0, r
    return min(runs, key=lambda m: m["cpu"])


def in_process(path: Path, store_dir: str, repeat: int) -> dict[str, float]:
    """CPU ms of a warm run in this process (this checkout), least of ``repeat`` each: the warm path
    (``cli.warm.answer``, its output discarded; ``first``: its first run, which also hashes the package's sources for
    the checker's version) and ``certify_file`` through the store (``full``), of which ``get_report`` (``read``)."""
    import contextlib
    import io

    import verispatial.driver.files as files_mod
    from verispatial.cli.inputs import load_document_file
    from verispatial.cli.warm import answer
    from verispatial.driver import store as store_mod
    from verispatial.driver.store import ProofStore

    argv = ["certify", str(path), "-q", "--cache-dir", store_dir]
    fast: list[float] = []
    store_mod.checker_version.cache_clear()
    for _ in range(repeat):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            t0 = time.process_time()
            rc = answer(argv)
            fast.append(time.process_time() - t0)
        assert rc == 0, out.getvalue()
        assert "verdict: proved" in out.getvalue(), out.getvalue()
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
    return {"first": fast[0] * 1e3, "fast": min(fast) * 1e3, "full": best * 1e3, "read": best_read * 1e3}


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
    json_proc = least(args.repeat, lambda: measured(ROOT, [], "", [sys.executable, "-c",
                                                                  f"import json; json.load(open({str(path)!r}))"]))
    print(f"{path.name}: {len(data) / 1e6:.2f} MB; json.load {t_json * 1e3:.1f} ms in this process, "
          f"{json_proc['cpu']:.3f} s CPU as a process (best of {args.repeat}); load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'tree':34} {'cold s':>7} {'warm s':>7} {'(wall)':>7} {'full cmd s':>10} {'--help s':>8} "
          f"{'warm/json.load process':>23}")
    for tree in [t.resolve() for t in (args.tree or [ROOT])]:
        store = tempfile.mkdtemp(prefix="bench_warm.store.")
        cold = measured(tree, ["certify", str(path), "-q"], store)
        assert cold["exit"] == 0, cold
        warm = least(args.repeat, lambda: measured(tree, ["certify", str(path), "-q"], store))  # noqa: B023
        assert "proved" in warm["last"], warm
        full = least(args.repeat, lambda: measured(tree, ["certify", str(path), "-q", "--budget", "600"], store))  # noqa: B023
        start = least(args.repeat, lambda: measured(tree, ["--help"], store))  # noqa: B023
        print(f"{tree!s:34} {cold['cpu']:7.2f} {warm['cpu']:7.3f} {warm['wall']:7.2f} {full['cpu']:10.3f} "
              f"{start['cpu']:8.3f} {warm['cpu'] / json_proc['cpu']:22.2f}x", flush=True)
        if tree == ROOT:
            got = in_process(path, store, args.repeat)
            print(f"  in this process: the warm path {got['fast']:.1f} ms ({got['fast'] / (t_json * 1e3):.2f}x "
                  f"json.load; its first run {got['first']:.1f} ms, hashing the sources for the checker's version), "
                  f"certify_file {got['full']:.0f} ms, of which reading the stored report {got['read']:.0f} ms")


if __name__ == "__main__":
    main()
