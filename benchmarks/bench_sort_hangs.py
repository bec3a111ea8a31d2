"""tt-metal #50312's sort (examples/ttmetal/hangs/sort_50312): certify of its before (ttnn 0.72.0) and after (0.81.1)
host descriptions, this tree against the checker as main had it, in one run (issue 19 goal 5, issue 18 item 5).

The baseline is this very checker with the two changes off: no interpreter runs before the wide exact-counting
queries (``families/semaphores/encoding._witness`` returning None, so ``solve_each`` widens as before) and the
families in main's order (happens-before before deadlock, ``checker.STAGES``). Each run under ``--budget`` seconds
(past it every obligation not decided is failed-to-prove); wall and CPU seconds, the counts of each verdict, and the
refuted obligations. Needs both wheels unpacked (examples/ttmetal/hangs/README.md); prints ``offline`` and exits 2
without them.

    python benchmarks/bench_sort_hangs.py [--budget 240] [--sides before after] [--no-baseline]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from verispatial import budget
from verispatial.certify import checker
from verispatial.families.semaphores import encoding
from verispatial.frontends.ttmetal import import_host
from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root
from verispatial.ir.program import Program

HANGS = Path(__file__).resolve().parent.parent / "examples" / "ttmetal" / "hangs" / "sort_50312"
RELEASES = {"before": "0.72.0", "after": TTNN_VERSION}
#: main's family order (before this branch put the deadlock family ahead of happens-before).
MAIN_STAGES = ("rules", "semaphore counting", "ring alignment", "balance", "bounds", "memory", "multicast",
               "happens-before", "deadlock")


@contextlib.contextmanager
def as_main() -> Iterator[None]:
    """The checker as main had it: no witness runs, main's family order."""
    witness, stages = encoding._witness, checker.STAGES
    encoding._witness = lambda *_args, **_kw: None  # type: ignore[assignment]
    checker.STAGES = MAIN_STAGES
    try:
        yield
    finally:
        encoding._witness, checker.STAGES = witness, stages


def run(p: Program, seconds: float) -> str:
    """Certify ``p`` (no proof cache) within ``seconds``: wall and CPU seconds of the run and at the end of each
    family (the CPU clock is this process's, Z3 included), the verdict counts and what is refuted."""
    from verispatial.driver.run import certify

    w0, c0 = time.perf_counter(), time.process_time()
    marks: list[tuple[str, float, float]] = []

    def progress(label: str) -> None:
        marks.append((label, time.perf_counter() - w0, time.process_time() - c0))
    with budget.deadline(seconds):
        rep = certify(p, cache=False, progress=progress)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    counts = {v: sum(1 for r in rep.results if r.verdict.value == v) for v in ("proved", "refuted", "failed-to-prove")}
    refuted = sorted({r.name for r in rep.results if r.verdict.value == "refuted"})
    spent = sorted(r.name.split(":", 1)[1] for r in rep.results if r.name.startswith("budget:"))
    # A family ended where the next one's label came (or the run ended), unless the budget cut it.
    ends = [(a[0], b[1], b[2]) for a, b in zip(marks, [*marks[1:], ("end", wall, cpu)], strict=True)]
    done = "  ".join(f"{label} {w:.0f}/{c:.0f}" for label, w, c in ends
                     if label in ("semaphore counting", "deadlock", "happens-before") and label not in spent)
    return (f"{wall:7.1f} s wall {cpu:7.1f} s CPU  {counts['proved']:3} proved {counts['refuted']:2} refuted "
            f"{counts['failed-to-prove']:2} failed\n"
            f"      families done at (wall/CPU s): {done or '-'}; budget spent in: {', '.join(spent) or '-'}\n"
            f"      refuted: {', '.join(refuted) or '-'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=240.0, help="seconds per certify run")
    ap.add_argument("--sides", nargs="*", default=["before", "after"], choices=["before", "after"])
    ap.add_argument("--no-baseline", action="store_true", help="skip main's checker")
    args = ap.parse_args()
    for side in args.sides:
        if wheel_root(version=RELEASES[side]) is None:
            print(f"offline: the ttnn {RELEASES[side]} wheel is not unpacked (examples/ttmetal/hangs/README.md)")
            return 2
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[:3]}")
    for side in args.sides:
        p = import_host(HANGS / f"{side}.yaml")
        print(f"{side} (ttnn {RELEASES[side]}, {len(p.programs)} engines)", flush=True)
        print(f"  this tree: {run(p, args.budget)}", flush=True)
        if not args.no_baseline:
            with as_main():
                print(f"  main:      {run(p, args.budget)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
