"""Deadlock proof cost against grid width: the whole-component search next to the schedule witness, same process.

The section is a prefill-like matmul (bf16, [M,256] @ [256,256], M = 128, or 256 for the 8x8 grid so that every
row of sites has a tile row) compiled for Wormhole with the grid capped at cols x rows. For each grid the deadlock
obligation is decided twice: ``search`` (one query over every engine of the component,
families/deadlock/encoding.py) and ``schedule`` (a derived schedule witness checked with one query per blocking op
and per engine, schedule.py).

    python benchmarks/bench_grid.py [--grids 2x2 4x4 8x4 8x8]
"""

from __future__ import annotations

import argparse
import time

from verispatial.certify.reach import analyse
from verispatial.driver.search import propose_deadlock
from verispatial.families.deadlock.encoding import check_deadlock
from verispatial.ir.graph import GraphBuilder
from verispatial.ir.program import Program
from verispatial.ir.target import WORMHOLE
from verispatial.passes.compile import compile_section
from verispatial.passes.pipeline import Pipeline, capped_passes


def matmul(cols: int, rows: int) -> Program:
    b = GraphBuilder("prefill")
    m = 256 if rows > 4 else 128
    b.tensor("a", [m, 256], role="input")
    b.tensor("w", [256, 256], role="param")
    b.tensor("o", [m, 256], role="output")
    b.matmul("mm", "a", "w", "o")
    p, _ = compile_section(b.build(), 0, WORMHOLE, Pipeline(capped_passes(max_cols=cols, max_rows=rows,
                                                                                  acc_form="spill_reload")))
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", nargs="*", default=["2x2", "4x4", "8x4", "8x8"])
    args = ap.parse_args()
    print(f"{'grid':>5} {'engines':>7} | {'search s':>8} {'search verdict':>16} | {'schedule s':>10} "
          f"{'schedule verdict':>16}")
    for g in args.grids:
        cols, rows = (int(x) for x in g.split("x"))
        p = matmul(cols, rows)
        a = analyse(p)
        trusted = {b.id for b in p.buffers}
        row = []
        for method in ("search", "schedule"):
            t0 = time.perf_counter()
            results = check_deadlock(a, trusted, method=method, search=propose_deadlock)
            dt = time.perf_counter() - t0
            verdicts = ",".join(sorted({r.verdict.value for r in results}))
            row.append((dt, verdicts))
        (ts, vs), (tw, vw) = row
        print(f"{g:>5} {len(p.programs):>7} | {ts:>8.2f} {vs:>16} | {tw:>10.2f} {vw:>16}", flush=True)


if __name__ == "__main__":
    main()
