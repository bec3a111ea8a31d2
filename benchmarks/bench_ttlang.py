"""The TT-Lang front end on the vendor's tutorials (tt-lang-sim 1.1.6): import and certify each single-device
tutorial at its own shapes, CPU seconds of this process (import, certify) and the verdict, plus the multi-device
steps' refusals; then the shipped TT-Lang examples (examples/ttlang/: the pipes of tt-lang #1037's all-gather).
The tutorials come from the wheel, downloaded into ``$VERISPATIAL_VENDOR_CACHE`` (default
~/.cache/verispatial/vendor) as the tests do; offline the script says so and exits 2.

    python benchmarks/bench_ttlang.py [--budget SECONDS] [--range NAME=LO:HI[:STEP]] [--devices N] [NAME ...]
                                      (NAME: e.g. matmul/step_2)

The multi-device steps are read at one device's shard of ``--devices`` devices (default 4, the simulator's default
``--num-devices``; as ``verispatial certify --devices``). With ``--range`` (as ``verispatial certify --range``) each
tutorial is read over that shape range: every shape class
is certified, its CPU seconds summed.

With ``--output-ranges`` the elementwise and broadcast tutorials are read over a range of their output's rows
(columns for the multitile broadcast) instead, the other dimension at the example's 2048 (``OUTPUT_RANGES`` below):
one shape class each, the output sized by the trip (docs/ttlang.md).

Each certify runs under its own wall-clock budget (default 300 s): past it the undecided obligations are
failed-to-prove, and the line says so. With ``--sim SECONDS`` (and the simulator available: the extra
``verispatial[ttlang]`` or ``$VERISPATIAL_TTLANG_SIM``, see tests/ttlang_sim.py) each tutorial is also run once by the
vendor's simulator at its own shapes, its CPU seconds beside certify's (``>SECONDS`` when it did not finish).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from verispatial import budget
from verispatial.driver.run import certify
from verispatial.errors import VerispatialError
from verispatial.frontends.ttlang import import_file

#: ``--output-ranges``: per tutorial, its arguments' shapes and the range over an output dimension.
OUTPUT_RANGES = {
    "elementwise/step_1_single_node_single_tile_block.py": (("a=Mx2048", "b=Mx2048", "c=Mx2048", "y=Mx2048"),
                                                            "M=128:2048:128"),
    "elementwise/step_2_single_node_multitile_block.py": (("a=Mx2048", "b=Mx2048", "c=Mx2048", "y=Mx2048"),
                                                          "M=128:2048:128"),
    # the grids: a step the nodes' blocks divide (4 x 4 tiles x 32 on 4 rows; 8 rows of the full grid)
    "elementwise/step_3_multinode.py": (("a=Mx2048", "b=Mx2048", "c=Mx2048", "y=Mx2048"), "M=512:8192:512"),
    "elementwise/step_4_multinode_grid_full.py": (("a=Mx2048", "b=Mx2048", "c=Mx2048", "y=Mx2048"),
                                                  "M=1024:8192:1024"),
    "broadcast/single_node_broadcast_single_tile_block.py": (("a=Mx1", "b=1x2048", "c=1x1", "y=Mx2048"),
                                                             "M=128:2048:128"),
    "broadcast/single_node_broadcast_multitile_blocks.py": (("a=2048x1", "b=1xN", "c=1x1", "y=2048xN"),
                                                            "N=128:2048:128"),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=300.0)
    ap.add_argument("--sim", type=float, default=0.0, help="also run the simulator once, with this timeout")
    ap.add_argument("--range", action="append", default=[], dest="ranges", help="NAME=LO:HI[:STEP]")
    ap.add_argument("--devices", type=int, default=4, help="device count of the multi-device steps")
    ap.add_argument("--output-ranges", action="store_true", help="the elementwise and broadcast tutorials over a "
                                                                  "range of an output dimension (OUTPUT_RANGES)")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    import pytest
    from test_frontend_ttlang import MULTI_DEVICE, SINGLE_DEVICE, tutorials_dir

    try:
        tut = tutorials_dir()
    except pytest.skip.Exception as e:
        print(f"offline: {e}")
        return 2
    names = [n for n in SINGLE_DEVICE + MULTI_DEVICE if not args.names or any(n.startswith(a) for a in args.names)]
    if args.output_ranges:
        names = [n for n in names if n in OUTPUT_RANGES]
    root = Path(__file__).resolve().parent.parent
    paths = [tut / n for n in names] + [p for p in sorted((root / "examples" / "ttlang").glob("*.py"))
                                        if not args.output_ranges and (
                                            not args.names or any(p.name.startswith(a) for a in args.names))]
    print(f"{'tutorial':58} {'engines':>7} {'import s':>8} {'certify s':>9}  verdict")
    for path in paths:
        name = str(path.relative_to(tut)) if path.is_relative_to(tut) else str(path.relative_to(root))
        t0 = time.process_time()
        try:
            shapes, ranges = (OUTPUT_RANGES[name][0], [OUTPUT_RANGES[name][1]]) if args.output_ranges else ((), args.ranges)
            imps = import_file(str(path), shapes=shapes, ranges=ranges if path.is_relative_to(tut) else (),
                               devices=args.devices if name in MULTI_DEVICE else None)
        except VerispatialError as e:
            print(f"{name:58} {'-':>7} {time.process_time() - t0:8.2f} {'-':>9}  refused: {str(e)[-160:]}")
            continue
        t1 = time.process_time()
        bad = []
        for imp in imps:
            with budget.deadline(args.budget):
                rep = certify(imp.program)
            bad += [f"{r.name} {r.verdict.value}" for r in rep.results if r.verdict.value != "proved"]
        t2 = time.process_time()
        if len(imps) > 1:
            name += f" ({len(imps)} classes)"
        verdict = "proved" if not bad else "; ".join(bad[:3])
        sim = ""
        if args.sim and path.is_relative_to(tut):
            import ttlang_sim

            paths = ttlang_sim.available()
            if paths is not None:
                outcome, cpu, _ = ttlang_sim.run(path, paths, timeout=args.sim)
                sim = f"  simulator: {outcome} {cpu:.1f} s" if outcome != "timeout" else f"  simulator: >{args.sim:.0f} s"
        print(f"{name:58} {len(imps[0].program.programs):7} {t1 - t0:8.2f} {t2 - t1:9.2f}  {verdict}{sim}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
