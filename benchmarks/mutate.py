"""Mutation testing of the correct programs of ``examples/`` and ``proofs/`` (``verispatial/mutate.py``).

Every single-op mutant of each program is judged (``verispatial.mutate.judge``): killed (rejected by validate,
refuted, or not proved while the oracle shows it broken), still correct (the explorer or the interpreter over many
seeds and every trip value), unsound (the checker proves a broken mutant: a soundness bug, exit code 1), unknown or
a checker error. Prints one line per program (mutants, killed, still correct, kill rate, seconds), then every
survivor grouped by status and kind.

    python benchmarks/mutate.py                      # the small correct examples, every mutant
    python benchmarks/mutate.py --corpus --max-ops 60  # and the corpus sections of at most 60 ops (distinct ones)
    python benchmarks/mutate.py --sample 20 --seed 1 # 20 mutants per program, drawn with seed 1
    python benchmarks/mutate.py --corpus --no-examples --max-ops 70 --sample 10  # a sample of the corpus
    python benchmarks/mutate.py --corpus --no-examples --classes --max-ops 400  # one section per structure
    python benchmarks/mutate.py --corpus --no-examples --classes --only attn_norm   # the sections named so
    python benchmarks/mutate.py --no-examples --program examples/vendor/argmax_start_wait_min.json  # named files
    python benchmarks/mutate.py --kind dests+1 --kind dests-1    # only the multicast counts of every example
    python benchmarks/mutate.py --kind vc --kind widen            # only the writes' channels and rectangles

``--program FILE`` (repeatable) adds a program whatever its verdict: mutants of a broken one (a vendor defect) must
be refused too, or shown correct — the checker never proves a mutant the oracle breaks.

``--classes`` keeps one section per *structure*: the engines' op lists with every name and number abstracted (the
same pass over other shapes and tensors gives the same structure; the 157 distinct proved sections of the corpus
fall into 34 structures).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import attrs

from verispatial.driver.run import certify
from verispatial.ir.ops import If, Loop, Op
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
from verispatial.mutate import KINDS, Outcome, judge, kill_rate, mutants

ROOT = Path(__file__).resolve().parent.parent


def _count(ops: tuple[Op, ...]) -> int:
    return sum(1 + (_count(o.body) if isinstance(o, (Loop, If)) else 0) for o in ops)


def ops_of(p: Program) -> int:
    return sum(_count(ep.ops) for ep in p.programs)


def structure(p: Program) -> str:
    """The engines' op lists with every name and number abstracted (``--classes``)."""
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "S", repr([ep.ops for ep in p.programs])))


def correct_programs(corpus: bool, max_ops: int, examples: bool = True, classes: bool = False,
                     only: str | None = None, min_ops: int = 0) -> list[tuple[str, Program]]:
    """The programs of ``min_ops`` to ``max_ops`` ops the checker proves (a mutant of a broken program shows nothing):
    ``examples/*.json`` and, with ``corpus``, the corpus's sections expected proved (one of each content, names
    aside; with ``classes``, one of each ``structure``); with ``only``, those whose name contains it."""
    chosen: list[tuple[str, Program]] = []
    for f in sorted((ROOT / "examples").glob("*.json")) if examples else []:
        p = load_program(f)
        if min_ops <= ops_of(p) <= max_ops and certify(p).exit_code == 0:
            chosen.append((f"examples/{f.stem}", p))
    if corpus:
        manifest = json.loads((ROOT / "proofs" / "manifest.json").read_text())["programs"]
        seen: set[str] = set()
        for k, v in manifest.items():
            f = ROOT / "proofs" / f"{k}.program.json"
            if v["expect"] != "proved" or k.startswith("examples/") or not f.exists():
                continue
            if only is not None and only not in k:
                continue
            p = load_program(f)
            text = structure(p) if classes else repr([(ep.engine, ep.ops) for ep in p.programs])
            key = hashlib.sha256(text.encode()).hexdigest()
            if min_ops <= ops_of(p) <= max_ops and key not in seen:
                seen.add(key)
                chosen.append((k, p))
    return chosen


def run(programs: list[tuple[str, Program]], sample: int | None, seed: int, verbose: bool = False,
        kinds: frozenset[str] | None = None) -> list[Outcome]:
    rng = random.Random(seed)
    every: list[Outcome] = []
    print(f"{'program':<52} {'mutants':>7} {'killed':>6} {'correct':>7} {'rate':>6} {'s':>6}")
    for name, p in programs:
        ms = [m for m in mutants(p) if kinds is None or m.kind in kinds]
        if sample is not None and len(ms) > sample:
            ms = rng.sample(ms, sample)
        t0 = time.perf_counter()
        outs = [judge(m) for m in ms]
        killed, live = kill_rate(outs)
        still = sum(o.status == "still-correct" for o in outs)
        rate = f"{100 * killed / live:.1f}%" if live else "-"
        print(f"{name:<52} {len(ms):>7} {killed:>6} {still:>7} {rate:>6} {time.perf_counter() - t0:>6.1f}", flush=True)
        if verbose:  # each program's survivors at once: a run of hours cut short keeps what it judged
            for o in outs:
                if not o.killed:
                    print(f"    {o.status} / {o.mutant.kind} (checker {o.verdict}): {o.mutant.what} "
                          f"[{o.mutant.engine} {list(o.mutant.path)}]: {o.detail}", flush=True)
        every += [attrs.evolve(o, mutant=attrs.evolve(o.mutant, what=f"{name}: {o.mutant.what}")) for o in outs]
    return every


def summary(outcomes: list[Outcome]) -> int:
    killed, live = kill_rate(outcomes)
    by = Counter(o.status for o in outcomes)
    print(f"\nall: {len(outcomes)} mutants, {killed} killed of {live} not shown correct "
          f"({100 * killed / live:.1f}%)" if live else f"\nall: {len(outcomes)} mutants")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    groups: dict[tuple[str, str, str | None], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if not o.killed:
            groups[(o.status, o.mutant.kind, o.verdict)].append(o)
    for (status, kind, verdict), os_ in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]))):
        print(f"\n{status} / {kind} (checker {verdict}): {len(os_)}")
        for o in os_:
            print(f"  {o.mutant.what} [{o.mutant.engine} {list(o.mutant.path)}]: {o.detail}")
    return 1 if by["unsound"] or by["error"] else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="store_true", help="also the corpus's distinct sections")
    ap.add_argument("--no-examples", action="store_true", help="leave out examples/ (with --corpus)")
    ap.add_argument("--max-ops", type=int, default=80, help="programs of at most this many ops (default 80)")
    ap.add_argument("--min-ops", type=int, default=0, help="programs of at least this many ops (default 0)")
    ap.add_argument("--sample", type=int, help="at most this many mutants per program, drawn at random")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    ap.add_argument("--classes", action="store_true", help="one corpus section per structure (module docstring)")
    ap.add_argument("--only", help="only the corpus sections whose name contains this")
    ap.add_argument("--verbose", action="store_true", help="list each program's survivors as soon as it is judged")
    ap.add_argument("--program", action="append", default=[], metavar="FILE",
                    help="also this program, proved or not (repeatable)")
    ap.add_argument("--kind", action="append", default=[], choices=KINDS,
                    help="only mutants of this kind (repeatable; default every kind)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    chosen = correct_programs(args.corpus, args.max_ops, not args.no_examples, args.classes, args.only, args.min_ops)
    chosen += [(Path(f).with_suffix("").as_posix(), load_program(f)) for f in args.program]
    outcomes = run(chosen, args.sample, args.seed, args.verbose, frozenset(args.kind) or None)
    code = summary(outcomes)
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
