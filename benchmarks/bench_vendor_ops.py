"""Issue 18's "import + certify of each vendor op <= 5 s": ``verispatial certify HOST.yaml --no-cache -q`` of every
host description under ``examples/ttmetal/`` (the vendor ops read from the pinned ttnn wheel), each a fresh
``python -m verispatial`` process as a user runs it, Python's start and the CLI's imports included.

Per host description: the least CPU (user + system of the process, ``os.wait4``) and the least wall seconds over
``--repeat`` runs, the exit code (0 proved, 1 refuted or failed-to-prove: the example's notes say which is expected),
and the ratio of the CPU to the 5 s target. Beside them, as the baseline measured in the same run, ``python -c
'import verispatial.cli'`` (the interpreter and the CLI's imports alone). Needs the pinned wheel
(``verispatial.frontends.ttmetal.vendor``: ``$VERISPATIAL_TTNN`` or the user cache, downloaded on first use).

    python benchmarks/bench_vendor_ops.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "ttmetal"
TARGET_S = 5.0


def run(args: list[str]) -> tuple[float, float, int]:
    """(CPU s, wall s, exit code) of ``python ARGS`` from the checkout, stdout and stderr discarded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, os.waitstatus_to_exitcode(status)


def best(args: list[str], repeat: int) -> tuple[float, float, int]:
    """The least CPU and the least wall of ``repeat`` runs, and the exit code (the same in every run, asserted)."""
    runs = [run(args) for _ in range(repeat)]
    codes = {code for _, _, code in runs}
    assert len(codes) == 1, (args, codes)
    return min(c for c, _, _ in runs), min(w for _, w, _ in runs), codes.pop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the least is printed")
    args = ap.parse_args()
    from verispatial.frontends.ttmetal.vendor import wheel_root

    if wheel_root(download=True) is None:
        print("the pinned ttnn wheel is not available (offline?)")
        return 1
    hosts = sorted(p for p in EXAMPLES.glob("*/host*.yaml"))
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    base_cpu, base_wall, _ = best(["-c", "import verispatial.cli"], args.repeat)
    print(f"baseline `import verispatial.cli`: {base_cpu:.2f} s CPU, {base_wall:.2f} s wall\n")
    print(f"| host description | CPU s | wall s | exit | CPU / {TARGET_S:g} s |")
    print("|---|---:|---:|---:|---:|")
    worst = 0.0
    for host in hosts:
        cpu, wall, code = best(["-m", "verispatial", "certify", str(host), "--no-cache", "-q"], args.repeat)
        worst = max(worst, cpu)
        print(f"| {host.relative_to(ROOT)} | {cpu:.2f} | {wall:.2f} | {code} | {cpu / TARGET_S:.2f}x |")
    print(f"\nworst {worst:.2f} s CPU ({worst / TARGET_S:.2f}x the target) over {len(hosts)} host descriptions; "
          f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
