"""Failed-to-prove rate of the differential generator's CORRECT programs (issue 7, deliverable 3).

Draws programs from ``verispatial.strategies`` (the differential test's generator, derandomized: the same programs
every run), explores each exhaustively (``verispatial.petri.explore``) and certifies it. A program is *correct*
when the explorer finds every interleaving ok; for those the checker should prove every obligation. Printed: the
number of programs drawn, of correct ones, the failed-to-prove rate among the correct ones, the disagreements with
the explorer (``tests/test_differential.disagreements``: must be zero), and every miss grouped by the reason of
its first non-proved obligation (obligation names' numbers blanked so that equal causes group together).

    PYTHONPATH=. python benchmarks/bench_ftp.py [--programs 2000] [--seed 0] [--show 3]
    PYTHONPATH=. python benchmarks/bench_ftp.py --with patch --with dests   # only programs that hold one of them

``--with`` keeps only the programs drawn that hold a construct: ``patch`` (a ``FillTiles`` of kind patch, drained
or not) or ``dests`` (a multicast whose ``num_dests`` is not its group's destinations); the others are drawn and
counted (``drawn``) but neither explored nor certified.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_differential import MAX_STATES, disagreements
from test_strategy_patch_dests import _miscounts, _patches

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.petri.explore import explore
from verispatial.strategies import programs


def _shape(text: str) -> str:
    """A reason with its numbers and engine names blanked: equal causes group together."""
    text = re.sub(r"\(\d+,\d+\)/\w+", "E", text)
    text = re.sub(r"\[[\d, ]*\]", "[..]", text)
    return re.sub(r"\d+", "N", text)


#: ``--with``: the constructs a program may be asked to hold.
HOLDS: dict[str, Callable[[Program], bool]] = {"patch": lambda p: bool(_patches(p)), "dests": lambda p: bool(_miscounts(p))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=2000, help="programs to draw (correct or not)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=2, help="example programs printed per group of misses")
    ap.add_argument("--dump", metavar="FILE.jsonl", help="write every miss and disagreement (program JSON) there")
    ap.add_argument("--with", dest="having", action="append", default=[], choices=sorted(HOLDS),
                    help="only programs that hold this construct (repeatable: any of them)")
    args = ap.parse_args()

    stats: Counter[str] = Counter()
    misses: dict[str, list[tuple[str, str]]] = defaultdict(list)
    disagree: list[tuple[list[str], str]] = []
    t0 = time.perf_counter()

    @seed(args.seed)
    @settings(max_examples=args.programs, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def run(p: Program) -> None:
        stats["drawn"] += 1
        if stats["drawn"] % 100 == 0:
            print(f"... {stats['drawn']} drawn, {stats['correct']} correct, {stats['correct'] - stats['proved']} not "
                  f"proved, {len(disagree)} disagreements, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        held = [name for name in args.having if HOLDS[name](p)]
        if args.having and not held:
            return
        stats.update(f"with {name}" for name in held)
        oracle = explore(p, max_states=MAX_STATES)
        if oracle.verdict == "inconclusive":
            stats["inconclusive"] += 1
            return
        report = certify(p)
        found = disagreements(oracle, report, p)
        if found:
            disagree.append((found, dumps(p)))
            # Shown at once (a long run's disagreements are not lost if it is stopped).
            print("DISAGREEMENT: " + " | ".join(found) + "\n  " + dumps(p).replace("\n", " "), file=sys.stderr,
                  flush=True)
        if oracle.verdict != "ok":
            stats["incorrect"] += 1
            return
        stats["correct"] += 1
        bad = [r for r in report.results if r.verdict != Verdict.PROVED]
        if not bad:
            stats["proved"] += 1
            return
        stats["failed-to-prove" if report.exit_code == 3 else f"exit {report.exit_code}"] += 1
        first = bad[0]
        misses[f"{first.family}: {_shape(first.name.split(':', 1)[0])}: {_shape(first.reason)}"].append(
            (", ".join(f"{r.name} ({r.verdict.value})" for r in bad), dumps(p)))

    run()
    correct = stats["correct"]
    missed = correct - stats["proved"]
    rate = 100.0 * missed / correct if correct else 0.0
    kept = stats["correct"] + stats["incorrect"] + stats["inconclusive"]  # the programs drawn that --with kept
    if args.having:
        print(f"programs drawn {stats['drawn']}, holding {' or '.join(args.having)} {kept} ("
              + ", ".join(f"{name} {stats[f'with {name}']}" for name in args.having) + ")")
    print(f"programs explored {kept - stats['inconclusive']} "
          f"(inconclusive {stats['inconclusive']}), correct {correct}, incorrect {stats['incorrect']}")
    print(f"correct programs not proved: {missed} of {correct} = {rate:.2f} %")
    print(f"disagreements with the explorer: {len(disagree)}")
    print(f"seconds: {time.perf_counter() - t0:.0f}")
    if args.dump:
        with open(args.dump, "w") as fh:
            for found, text in disagree:
                fh.write(json.dumps({"disagreement": found, "program": json.loads(text)}) + "\n")
            for reason, items in misses.items():
                for names, text in items:
                    fh.write(json.dumps({"miss": reason, "not_proved": names, "program": json.loads(text)}) + "\n")
    for found, text in disagree:
        print("DISAGREEMENT: " + " | ".join(found))
        print("  " + text.replace("\n", " ")[:4000])
    for reason, items in sorted(misses.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(items):5d}  {reason}")
        for names, text in items[: args.show]:
            print(f"       not proved: {names}")
            print("       " + text.replace("\n", " ")[:3000])


if __name__ == "__main__":
    main()
