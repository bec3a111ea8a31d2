"""Proofs independent of the layer count (issue 19, goal 3): the decode steps of Llama-3.2-1B (16 layers),
Llama-3.1-8B (32) and Llama-3.1-70B (80) from their public configurations (``build_models.LLAMA``, ``LLAMA_8B``,
``LLAMA_70B``; shapes only), compiled uncapped on Wormhole (full 8x8 mesh) and composed into one program (its templated
form, program format version 3: each distinct section once; ``--expanded`` certifies the program in full instead),
then certified cold (no persistent proof store: each distinct slice proved once in the run). Each step is measured in a
fresh Python process (an honest peak RSS); printed per step: sections, ops, the compose time, certify wall and CPU
seconds, obligations and their verdicts, peak RSS, and certify CPU as a multiple of the first step's (the
baseline, measured in the same run).

    python benchmarks/bench_layers.py [--steps llama3_2_1b:16 llama3_1_8b:32 llama3_1_70b:80] [--expanded]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _child(model: str, layers: int, expanded: bool) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    import build_models  # type: ignore[import-not-found]

    from verispatial.driver.run import certify
    from verispatial.ir.target import WORMHOLE
    from verispatial.passes.compile import compile_model, compose_step

    cfg = next(c for c in (build_models.LLAMA, build_models.LLAMA_8B, build_models.LLAMA_70B) if c.name == model)
    c0 = time.process_time()
    g = build_models.decode_step(cfg, layers=layers)
    step = compose_step(g, compile_model(g, WORMHOLE, check=False), WORMHOLE, check=False)
    build = time.process_time() - c0
    w0, c0 = time.perf_counter(), time.process_time()
    r = certify(step.program if expanded else step.document)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"model": model, "layers": layers, "sections": len(step.document.sections), "ops": step.ops,
            "build_cpu_s": round(build, 2), "certify_s": round(wall, 2), "certify_cpu_s": round(cpu, 2),
            "obligations": len(r.results), "exit": r.exit_code,
            "not_proved": [x.name for x in r.results if x.verdict.value != "proved"][:5],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", nargs="*", default=["llama3_2_1b:16", "llama3_1_8b:32", "llama3_1_70b:80"],
                    help="MODEL:LAYERS per step; the first is the baseline")
    ap.add_argument("--expanded", action="store_true", help="certify each step written in full (version 2)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]), args.expanded)))
        return
    rows = []
    for s in args.steps:
        model, layers = s.split(":")
        out = subprocess.run([sys.executable, __file__, "--child", model, layers,
                              *(["--expanded"] if args.expanded else [])], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    base = rows[0]["certify_cpu_s"]
    print("\n| step | layers | sections | ops | compose CPU (s) | certify wall (s) | certify CPU (s) | x baseline | "
          "obligations | exit | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['layers']} | {r['sections']} | {r['ops']:,} | {r['build_cpu_s']:.1f} | "
              f"{r['certify_s']:.1f} | {r['certify_cpu_s']:.1f} | {r['certify_cpu_s'] / base:.2f}x | "
              f"{r['obligations']:,} | {r['exit']} | {r['peak_rss_mb']:,} |")


if __name__ == "__main__":
    main()
