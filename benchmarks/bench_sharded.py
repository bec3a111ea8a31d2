"""Checker cost of sharded buffers against the shard's size, next to two baselines run in the same process.

The program is the vendor transcription of ttnn's block-sharded eltwise binary (``examples/vendor/build.py``
``eltwise_binary_sharded``: two cores, every operand on its tensor's shard, compute in blocks of 6 tiles) with
``blocks`` blocks a core, so each shard holds ``6 * blocks`` tiles. The checker decides a sharded buffer's pushes as
page-indexed accesses of its tensor (``families/cb/shard_encoding.py``): its cost should grow little with the shard.
The baselines: one interpreter run (a single schedule, linear in the tiles) and the explicit-state explorer (every
interleaving, capped at ``--states`` states, after which it proves nothing). Past 32 blocks the three shards of a
core no longer fit Wormhole's L1 (3 x 192 two-kilobyte tiles is 1.15 MB of its 1.43 MB): the memory family refutes.

    python benchmarks/bench_sharded.py [--blocks 2 8 16 32] [--states 50000]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from verispatial.driver.run import certify
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, nargs="*", default=[2, 8, 16, 32])
    ap.add_argument("--states", type=int, default=50_000)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("vendor_build", ROOT / "examples" / "vendor" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    print("block-sharded eltwise binary, 2 cores, blocks of 6 tiles; shard = 6 * blocks tiles a core")
    print(f"{'blocks':>6} {'shard':>6} | {'certify s':>9} {'verdict':>8} {'obligations':>11} | {'simulate s':>10} "
          f"{'steps':>7} | {'explore s':>9} {'states':>8} {'explorer':>12}")
    for blocks in args.blocks:
        p = vendor.eltwise_binary_sharded(f"bench{blocks}", blocks=blocks)
        t0 = time.perf_counter()
        rep = certify(p, cache=False)
        tc = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim = simulate(p)
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        ex = explore(p, max_states=args.states)
        te = time.perf_counter() - t0
        verdict = "proved" if rep.exit_code == 0 else f"exit {rep.exit_code}"
        print(f"{blocks:>6} {6 * blocks:>6} | {tc:>9.2f} {verdict:>8} {len(rep.results):>11} | {ts:>10.2f} "
              f"{sim.steps:>7} | {te:>9.2f} {ex.states:>8} {ex.verdict:>12}", flush=True)


if __name__ == "__main__":
    main()
