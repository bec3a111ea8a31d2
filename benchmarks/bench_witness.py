"""What the runs from launch cost before failed-to-prove (``certify/witness.py``): every refuted example of
``examples/`` certified with the path and without it (the baseline: the results as settled), alternately in this
process, with the number of results it turns; CPU seconds of this process (the machine is shared). Not a test (a
few minutes of CPU).

    python benchmarks/bench_witness.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from verispatial.certify import checker, replay
from verispatial.certify.checker import check
from verispatial.certify.reach import Analysis
from verispatial.certify.report import Result, Verdict
from verispatial.ir.serialize import load_program

ROOT = Path(__file__).resolve().parent.parent


def _timed(path: Path, witness: bool) -> tuple[float, int]:
    program = load_program(path)
    replay._RUNS.clear()  # each run pays for its own interpreter runs
    replay._EXPLORED.clear()
    same: Callable[[Analysis, list[Result]], list[Result]] = lambda _a, rs: rs  # noqa: E731
    t0 = time.process_time()
    with mock.patch.object(checker, "refute_by_runs", checker.refute_by_runs if witness else same):
        report = check(program, cache=False)
    return time.process_time() - t0, sum(r.verdict == Verdict.REFUTED for r in report.results)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    files = sorted((ROOT / "examples" / "broken").glob("*.json")) + sorted(
        (ROOT / "examples" / "vendor" / "broken").glob("*.json"))
    print(f"load average {os.getloadavg()[0]:.2f}; {len(files)} programs, best of {args.rounds} rounds")
    print(f"{'program':48} {'without s':>10} {'with s':>8} {'ratio':>6} {'refuted':>8}")
    total = [0.0, 0.0]
    for f in files:
        best = [float("inf"), float("inf")]
        counts = [0, 0]
        for _ in range(args.rounds):
            for i, on in enumerate((False, True)):
                dt, n = _timed(f, on)
                best[i], counts[i] = min(best[i], dt), n
        total = [total[0] + best[0], total[1] + best[1]]
        turned = f"+{counts[1] - counts[0]}" if counts[1] != counts[0] else ""
        print(f"{f.relative_to(ROOT / 'examples').as_posix():48} {best[0]:10.2f} {best[1]:8.2f} {best[1] / max(best[0], 1e-3):6.2f} "
              f"{counts[1]:>5}{turned:>3}")
    print(f"{'total':48} {total[0]:10.2f} {total[1]:8.2f} {total[1] / total[0]:6.2f}   load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
