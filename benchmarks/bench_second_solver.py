"""Re-check every exported query of the proofs/ corpus and examples/ with cvc5 (issue 9, deliverable 4).

    PYTHONPATH=tests python benchmarks/bench_second_solver.py [--max-bytes N] [--tlimit-ms MS]

Prints one line per program (queries, agreement, time) and the totals; exits 1 on any disagreement. The last
full run is recorded in benchmarks/README.md; tests/test_second_solver.py runs a subset in CI and everything in
the ``thorough`` profile.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from second_solver import ROOT, Tally, corpus, recheck


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-bytes", type=int, default=None, help="skip queries larger than this (default: none)")
    ap.add_argument("--tlimit-ms", type=int, default=20_000, help="cvc5's time limit per query (default 20000)")
    args = ap.parse_args()
    total = Tally()
    for p in corpus():
        t = recheck([p], max_bytes=args.max_bytes, tlimit_ms=args.tlimit_ms)
        print(f"{p.relative_to(ROOT)}: {t.line()}", flush=True)
        for line in t.disagreements:
            print(f"  DISAGREE {line}", flush=True)
        for f in ("programs", "queries", "compared", "agreed", "skipped_large", "z3_unknown", "cvc5_unknown", "unsat",
                  "sat"):
            setattr(total, f, getattr(total, f) + getattr(t, f))
        total.disagreements += t.disagreements
        total.seconds += t.seconds
    print(f"TOTAL {total.line()}")
    return 1 if total.disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
