"""Checker cost against K-loop length, next to two baselines run in the same process.

The checker is symbolic over loops: its cost should not grow with the number of K blocks. The baselines do grow:
one interpreter run (a single schedule, linear in the program's length) and the explicit-state explorer (every
interleaving, exponential; capped at ``--states`` states, after which it proves nothing).

    python benchmarks/bench_certify.py [--blocks 8 16 64 256] [--states 50000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from build_examples import MatmulConfig, matmul_reuse_mcast

from verispatial.driver.run import certify
from verispatial.ir.target import WORMHOLE
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, nargs="*", default=[8, 16, 64, 256])
    ap.add_argument("--states", type=int, default=50_000)
    args = ap.parse_args()
    print("8x2 grid (48 engines), M=2048 N=1024, K = 64*blocks; explorer on a 2x2 grid (12 engines)")
    print(f"{'K blocks':>8} | {'certify s':>9} {'verdict':>8} | {'simulate s':>10} {'steps':>9} | "
          f"{'explore s':>9} {'states':>8} {'explorer verdict':>16}")
    for blocks in args.blocks:
        big = matmul_reuse_mcast("bench", WORMHOLE, "after_flag", MatmulConfig(k=64 * blocks))
        t0 = time.perf_counter()
        rep = certify(big)
        tc = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim = simulate(big)
        ts = time.perf_counter() - t0
        small = matmul_reuse_mcast("bench-small", WORMHOLE, "after_flag",
                                   MatmulConfig(m=256, n=128, k=64 * blocks, cols=2, rows=2))
        t0 = time.perf_counter()
        ex = explore(small, max_states=args.states)
        te = time.perf_counter() - t0
        verdict = "proved" if rep.exit_code == 0 else f"exit {rep.exit_code}"
        print(f"{blocks:>8} | {tc:>9.2f} {verdict:>8} | {ts:>10.2f} {sim.steps:>9} | {te:>9.2f} {ex.states:>8} "
              f"{ex.verdict:>16}", flush=True)


if __name__ == "__main__":
    main()
