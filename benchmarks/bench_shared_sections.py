"""Identical sections share one proof (issue 19, goal 2): ``compile_model`` of the Llama-3.2-1B decode step with
``--layers`` decoder layers on Wormhole (full 8x8 mesh, the compiler's defaults), every section certified, with
``share=False`` (every section certified itself: the baseline, as before ``driver/shared.py``) and with sharing
(each distinct section once, by the SHA-256 of its canonical program), same process, one proof cache per run.
Printed: CPU seconds of the whole ``compile_model`` call and the sections certified / shared, and whether the two
runs' results (family, name, verdict per section) are identical.

    python benchmarks/bench_shared_sections.py [--layers 2] [--caps COLS ROWS SITES]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--caps", type=int, nargs=3, default=None, metavar=("COLS", "ROWS", "SITES"),
                    help="cap the grids (default: the full mesh)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    import build_models  # type: ignore[import-not-found]

    from verispatial.driver.shared import canonical
    from verispatial.ir.target import WORMHOLE
    from verispatial.passes import Pipeline
    from verispatial.passes.compile import compile_model
    from verispatial.passes.pipeline import capped_passes

    g = build_models.decode_step(build_models.LLAMA, layers=args.layers)
    pipeline = Pipeline(capped_passes(*args.caps)) if args.caps else None
    runs = {}
    for share in (False, True):
        c0, w0 = time.process_time(), time.perf_counter()
        secs = compile_model(g, WORMHOLE, pipeline=pipeline, share=share)
        runs[share] = (secs, time.process_time() - c0, time.perf_counter() - w0)
    secs = runs[True][0]
    distinct = len({c.key if c is not None else s.name for s, c in ((s, canonical(s.program)) for s in secs)})
    same = all({(r.family, r.name, r.verdict) for r in a.report.results}
               == {(r.family, r.name, r.verdict) for r in b.report.results}
               for a, b in zip(runs[False][0], secs, strict=True) if a.report is not None and b.report is not None)
    proved = all(s.report is not None and s.report.exit_code == 0 for s in secs)
    print(f"Llama-3.2-1B decode step, {args.layers} layers, Wormhole {'caps ' + str(args.caps) if args.caps else 'full mesh'}: "
          f"{len(secs)} sections, {distinct} distinct\n")
    print("| run | sections certified | CPU (s) | wall (s) |")
    print("|---|---:|---:|---:|")
    print(f"| every section itself (baseline) | {len(secs)} | {runs[False][1]:.1f} | {runs[False][2]:.1f} |")
    print(f"| each distinct section once | {distinct} | {runs[True][1]:.1f} | {runs[True][2]:.1f} |")
    print(f"\nbaseline / shared CPU: {runs[False][1] / runs[True][1]:.1f}x; results identical: {same}; "
          f"every section proved: {proved}")


if __name__ == "__main__":
    main()
