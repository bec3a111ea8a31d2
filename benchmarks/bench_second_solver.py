"""Re-check every exported query of the proofs/ corpus and examples/ with cvc5 (issue 9, deliverable 4).

    PYTHONPATH=tests python benchmarks/bench_second_solver.py [--max-bytes N] [--tlimit-ms MS] [--log FILE]
                                                              [--jobs N] [--smallest-first]

Prints one line per program (queries, agreement, time) and the totals; exits 1 on any disagreement. ``--log``
appends one JSON line per finished program (its tally) and, when the file already holds a program, skips it: a run
of hours can be stopped and continued. ``--jobs`` re-checks that many programs at once (one process each). The last
full run is recorded in benchmarks/README.md; tests/test_second_solver.py runs a subset in CI and everything in the
``thorough`` profile.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from second_solver import ROOT, Tally, corpus, recheck

_COUNTS = ("programs", "queries", "compared", "agreed", "skipped_large", "z3_unknown", "cvc5_unknown", "unsat", "sat")


def _one(path: Path, max_bytes: int | None, tlimit_ms: int) -> dict[str, object]:
    t = recheck([path], max_bytes=max_bytes, tlimit_ms=tlimit_ms)
    out: dict[str, object] = {f: getattr(t, f) for f in _COUNTS}
    out.update(program=str(path.relative_to(ROOT)), disagreements=t.disagreements, seconds=round(t.seconds, 2))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-bytes", type=int, default=None, help="skip queries larger than this (default: none)")
    ap.add_argument("--tlimit-ms", type=int, default=20_000, help="cvc5's time limit per query (default 20000)")
    ap.add_argument("--log", type=Path, default=None, help="JSON lines of finished programs; resumes from it")
    ap.add_argument("--jobs", type=int, default=1, help="programs re-checked at once (default 1)")
    ap.add_argument("--smallest-first", action="store_true", help="order programs by file size")
    args = ap.parse_args()
    done: list[dict[str, object]] = []
    if args.log is not None and args.log.exists():
        done = [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
    seen = {d["program"] for d in done}
    todo = [p for p in corpus() if str(p.relative_to(ROOT)) not in seen]
    if args.smallest_first:
        todo.sort(key=lambda p: p.stat().st_size)
    total = Tally()

    def add(d: dict[str, object], fresh: bool) -> None:
        for f in _COUNTS:
            setattr(total, f, getattr(total, f) + int(d[f]))  # type: ignore[call-overload]
        total.disagreements += list(d["disagreements"])  # type: ignore[call-overload]
        total.seconds += float(d["seconds"])  # type: ignore[arg-type]
        if fresh:
            print(f"{d['program']}: {d['queries']} queries, {d['agreed']} agreed, cvc5 unknown {d['cvc5_unknown']}, "
                  f"z3 unknown {d['z3_unknown']}, {len(d['disagreements'])} disagreements, "  # type: ignore[arg-type]
                  f"{d['seconds']} s", flush=True)
            for line in d["disagreements"]:  # type: ignore[attr-defined]
                print(f"  DISAGREE {line}", flush=True)
            if args.log is not None:
                with args.log.open("a") as f:
                    f.write(json.dumps(d) + "\n")

    for d in done:
        add(d, fresh=False)
    if args.jobs <= 1:
        for p in todo:
            add(_one(p, args.max_bytes, args.tlimit_ms), fresh=True)
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            for d in pool.map(_one, todo, [args.max_bytes] * len(todo), [args.tlimit_ms] * len(todo)):
                add(d, fresh=True)
    print(f"TOTAL {total.line()} (seconds: the sum over programs)")
    return 1 if total.disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
