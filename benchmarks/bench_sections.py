"""Checker cost per section of the uncapped Llama-3.2-1B decode layer on Wormhole (full 8x8 mesh), next to the
reference route in the same process.

Every section of ``examples/models/llama3_2_1b_decode.json`` is certified twice: on the reference route
(``smt.reference_route``: every obligation asked of Z3, no arithmetic shortcut, no enabling query reused up to
renaming) and on the default route; the results (name, verdict, counterexample) must be identical. Times are CPU
seconds of this process (``time.process_time``: Z3 runs in-process and single-threaded, so on an idle machine this
is the wall time; on a shared one the wall clock mostly measures the other jobs); wall seconds are printed too.
Each section gets its own proof cache, as ``verispatial compile`` gives it.

    python benchmarks/bench_sections.py [--graph G.json] [--target wormhole] [--sections q_proj gate_proj ...]
                                        [--default-only]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from verispatial.certify import smt
from verispatial.certify.report import Report
from verispatial.driver.run import certify
from verispatial.ir.graph import load_graph
from verispatial.ir.target import get_target
from verispatial.passes.compile import compile_model

GRAPH = "examples/models/llama3_2_1b_decode.json"


def timed(run: Any) -> tuple[Report, float, float]:
    """``run()``'s report, its CPU seconds and its wall seconds."""
    c0, t0 = time.process_time(), time.perf_counter()
    r = run()
    return r, time.process_time() - c0, time.perf_counter() - t0


def key(r: Report) -> list[tuple[str, str, str]]:
    return [(x.name, x.verdict.value, json.dumps(x.counterexample, sort_keys=True, default=str)) for x in r.results]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default=GRAPH)
    ap.add_argument("--target", default="wormhole")
    ap.add_argument("--sections", nargs="*", default=None)
    ap.add_argument("--default-only", action="store_true", help="skip the reference route (e.g. on a checkout without it)")
    args = ap.parse_args()
    sections = compile_model(load_graph(args.graph), get_target(args.target), check=False)
    reference = not args.default_only and hasattr(smt, "reference_route")
    print(f"{'section':>16} {'engines':>7} {'oblig.':>6} | {'reference cpu':>13} {'wall':>6} | {'default cpu':>11} "
          f"{'wall':>6} | {'speed-up':>8} | results")
    tot_ref = tot_new = 0.0
    for s in sections:
        if args.sections and s.name not in args.sections:
            continue
        if reference:
            with smt.reference_route():
                ref, c_ref, w_ref = timed(lambda s=s: certify(s.program))
        new, c_new, w_new = timed(lambda s=s: certify(s.program))
        same = "identical" if not reference or key(ref) == key(new) else "DIFFERENT"
        verdict = "all proved" if new.exit_code == 0 else f"exit {new.exit_code}"
        ref_cols = f"{c_ref:>13.2f} {w_ref:>6.2f}" if reference else f"{'-':>13} {'-':>6}"
        ratio = f"{c_ref / c_new:>7.2f}x" if reference else f"{'-':>8}"
        print(f"{s.name:>16} {len(s.program.programs):>7} {len(new.results):>6} | {ref_cols} | {c_new:>11.2f} "
              f"{w_new:>6.2f} | {ratio} | {verdict}, {same}", flush=True)
        tot_ref += c_ref if reference else 0.0
        tot_new += c_new
    ratio = f"{tot_ref / tot_new:.2f}x" if reference and tot_new else "-"
    print(f"{'total':>16} {'':>7} {'':>6} | {tot_ref:>13.2f} {'':>6} | {tot_new:>11.2f} {'':>6} | {ratio:>8} |")


if __name__ == "__main__":
    main()
