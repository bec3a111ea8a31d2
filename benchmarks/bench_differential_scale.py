"""The differential comparison at scale, with figures: large programs and compiled sections against the capped explorer.

Draws ``--large`` programs of ``verispatial.strategies.scale.large_programs`` (at least ``--ops`` ops on at least
``--sites`` sites, trips up to ``--trip``) and ``--compiled`` single-op graphs of large shapes compiled by the real
pipeline (tile capped to a 4x2 grid or 8 sites); explores each under ``--states`` states and certifies it (a compiled
section keeps the report ``compile_model`` made). Printed per kind: programs, ops and sites (min-max), the classes
(explorer verdict: ok / violation / deadlock / inconclusive, by the checker's exit code), disagreements
(``tests/test_differential.disagreements``: must be zero) and time. An ``inconclusive`` search is its own class.

    PYTHONPATH=. python benchmarks/bench_differential_scale.py [--large 20] [--compiled 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_differential import disagreements

from verispatial.certify.report import Report
from verispatial.driver.run import certify
from verispatial.errors import PassRefused
from verispatial.ir import BLACKHOLE, WORMHOLE, Program, Target
from verispatial.ir.graph import ModelGraph
from verispatial.passes import Pipeline, capped_passes, compile_model
from verispatial.petri.explore import explore
from verispatial.strategies import single_op_graphs
from verispatial.strategies.scale import large_programs, op_count


class Tally:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.classes: Counter[tuple[str, int]] = Counter()
        self.ops: list[int] = []
        self.sites: list[int] = []
        self.trips: list[int] = []
        self.bad: list[str] = []
        self.explore_s = 0.0
        self.certify_s = 0.0

    def add(self, p: Program, states: int, report: Report | None = None) -> None:
        t0 = time.perf_counter()
        oracle = explore(p, max_states=states)
        t1 = time.perf_counter()
        report = report if report is not None else certify(p)
        self.certify_s += time.perf_counter() - t1
        self.explore_s += t1 - t0
        self.classes[(oracle.verdict, report.exit_code)] += 1
        self.ops.append(op_count(p))
        self.sites.append(len({ep.site for ep in p.programs}))
        self.trips.append(max((t.max for t in p.trips), default=0))
        self.bad += disagreements(oracle, report, p)
        print(f"  {self.kind} #{len(self.ops)}: {self.ops[-1]} ops, {self.sites[-1]} sites, trips <= {self.trips[-1]}: "
              f"explorer {oracle.verdict} ({oracle.states} states), checker exit {report.exit_code}", flush=True)

    def text(self) -> str:
        if not self.ops:
            return f"{self.kind}: none drawn"
        lines = [f"{self.kind}: {len(self.ops)} programs, {min(self.ops)}-{max(self.ops)} ops, "
                 f"{min(self.sites)}-{max(self.sites)} sites, trips up to {max(self.trips)}; "
                 f"explore {self.explore_s:.0f} s, certify {self.certify_s:.0f} s; disagreements {len(self.bad)}"]
        for (verdict, code), n in sorted(self.classes.items()):
            lines.append(f"  explorer {verdict:12} checker exit {code}: {n}")
        lines += [f"  DISAGREEMENT: {b}" for b in self.bad]
        return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", type=int, default=20)
    ap.add_argument("--compiled", type=int, default=20)
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--sites", type=int, default=8)
    ap.add_argument("--trip", type=int, default=64)
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    quiet = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)

    large = Tally("large")
    if args.large:
        @seed(args.seed)
        @settings(quiet, max_examples=args.large)
        @given(large_programs(args.ops, args.sites, args.trip))
        def run_large(p: Program) -> None:
            large.add(p, args.states)
        run_large()

    compiled = Tally("compiled")
    if args.compiled:
        @seed(args.seed)
        @settings(quiet, max_examples=args.compiled)
        @given(single_op_graphs(dims=(256, 512, 1024)), st.sampled_from([WORMHOLE, BLACKHOLE]))
        def run_compiled(graph: ModelGraph, target: Target) -> None:
            try:
                sections = compile_model(graph, target, pipeline=Pipeline(capped_passes(4, 2, 8)))
            except PassRefused:
                return
            for s in sections:
                compiled.add(s.program, args.states, s.report)
        run_compiled()

    print(large.text())
    print(compiled.text())


if __name__ == "__main__":
    main()
