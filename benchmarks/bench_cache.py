"""Proof cache by content (DESIGN §7): certify the element-wise sections of the Llama 3.2 1B decode graph on the
full 8x8 Wormhole mesh with every component proved separately, then with isomorphic components proved once —
same process, side by side
(the cached run first, so warm-up favours the uncached one).

Each section has 64 independent sites (192 engine programs): every site's component is the same up to renaming
buffer ids, site coordinates and tensor base addresses, so with the cache one site is proved and 63 reuse it.

    python benchmarks/bench_cache.py [--sections attn_residual swiglu mlp_residual]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from verispatial.certify.report import Report
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.ir.graph import load_graph
from verispatial.ir.target import WORMHOLE
from verispatial.passes.compile import compile_section

GRAPH = "examples/models/llama3_2_1b_decode.json"


def _per_family(r: Report) -> str:
    secs: Counter[str] = Counter()
    for x in r.results:
        secs[x.family] += x.seconds
    return " ".join(f"{f}={s:.1f}" for f, s in sorted(secs.items()) if s >= 0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", nargs="*", default=["attn_residual", "swiglu", "mlp_residual"])
    args = ap.parse_args()
    g = load_graph(GRAPH)
    names = [op.name for op in g.ops]
    print(f"{'section':>14} {'engines':>7} {'obligations':>11} | {'no cache s':>10} {'verdict':>7} | "
          f"{'cache s':>7} {'verdict':>7} {'computed':>8} {'reused':>6} | speed-up")
    for sec in args.sections:
        p, _ = compile_section(g, names.index(sec), WORMHOLE)
        # The cached run goes first: any warm-up of the process (allocator, imports) then favours the uncached run.
        pc = ProofCache()
        t0 = time.perf_counter()
        after = certify(p, cache=pc)
        ta = time.perf_counter() - t0
        t0 = time.perf_counter()
        before = certify(p, cache=False)
        tb = time.perf_counter() - t0
        assert [(r.name, r.verdict) for r in before.results] == [(r.name, r.verdict) for r in after.results]
        print(f"{sec:>14} {len(p.programs):>7} {len(after.results):>11} | {tb:>10.2f} {before.exit_code:>7} | "
              f"{ta:>7.2f} {after.exit_code:>7} {pc.computed:>8} {len(pc.reused):>6} | {tb / ta:.2f}x", flush=True)
        print(f"{'':>14}   no cache: {_per_family(before)}")
        print(f"{'':>14}   cache:    {_per_family(after)}")


if __name__ == "__main__":
    main()
