"""The gate on a Dask distributed cluster (``gate(..., scheduler=ADDRESS)``) against one process, in one run.

Starts a local Dask cluster of 1 worker, then one of 2 workers (single-threaded worker processes), and gates the
committed corpus's ``ci`` programs cold (no proof store) on each, beside the same gate in this process with
``jobs=1`` as the baseline. Prints wall seconds and the speed-up over the baseline, and checks that every run gives
the same outcome per program. On a machine with fewer free cores than workers the 2-worker figure shows the load,
not the cluster: the machine's load average is printed with the figures.

    python benchmarks/bench_cluster.py [--dir proofs] [--limit N]   # N = 40 by default, 0 = the whole ci set
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

from verispatial.driver.gate import GateRun, gate, load_manifest

ROOT = Path(__file__).resolve().parent.parent


def outcome(run: GateRun) -> list[tuple[str, str]]:
    return [(o.name, o.status) for o in run.outcomes]


def sub_corpus(src: Path, dest: Path, limit: int) -> Path:
    """A copy of the first ``limit`` ci programs of the corpus ``src`` (programs, certificates, their manifest
    entries) under ``dest``."""
    man = load_manifest(src / "manifest.json")
    names = sorted(n for n, e in man.programs.items() if e.ci)[:limit]
    for n in names:
        for kind in ("program", "certificate"):
            (dest / n).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src / f"{n}.{kind}.json", dest / f"{n}.{kind}.json")
    doc = {"format": "verispatial.proof-manifest", "version": 1, "regenerate": man.regenerate,
           "programs": {n: man.programs[n].to_json() for n in names}}
    (dest / "manifest.json").write_text(json.dumps(doc, indent=1))
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=str(ROOT / "proofs"), help="the corpus (default: proofs/)")
    ap.add_argument("--limit", type=int, default=40, help="gate the first N ci programs (default 40; 0: all)")
    args = ap.parse_args()
    from distributed import LocalCluster

    tmp = tempfile.mkdtemp()
    if args.limit:
        args.dir = str(sub_corpus(Path(args.dir), Path(tmp) / "proofs", args.limit))

    t0 = time.perf_counter()
    base = gate(args.dir, ci_only=True)
    rows = [("one process (jobs=1)", time.perf_counter() - t0, base)]
    for n in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
                t0 = time.perf_counter()
                run = gate(args.dir, ci_only=True, scheduler=lc.scheduler_address)
                rows.append((f"Dask, {n} worker{'s' if n > 1 else ''}", time.perf_counter() - t0, run))
    load = os.getloadavg()
    print(f"gate {args.dir} --ci, cold, {len(base.outcomes)} programs; load average {load[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print("| run | wall s | speed-up | same outcomes |")
    print("|---|---:|---:|---|")
    for name, secs, run in rows:
        same = "yes" if outcome(run) == outcome(base) else "NO"
        print(f"| {name} | {secs:.1f} | {rows[0][1] / secs:.2f}x | {same} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
