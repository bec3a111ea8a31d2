"""Compositional certification of a composed decode step (docs/checker.md, "Compositional certification"): a
synthetic step of L decoder layers, each layer the 15 sections of the uncapped Llama-3.2-1B decode graph on the full
8x8 Wormhole mesh with its tensors renamed per layer (``L<l>.q``, ...; layer l reads layer l-1's output), composed
with every boundary closed. Per L: the program's size, the time to recognise its rendezvous and cut it into slices
(the linear part), the distinct slices, and certify cold (a fresh process per L, so no proof of an earlier run is
reused).

The attention reads a per-layer ``k_cache_past``/``v_cache_past`` param instead of the cache the layer's scatter
updates: a carried state read after this run rewrote it is a tensor race under the interpreter's state rule, which
would make every L refute the same way (the whole decode step from ``compile`` meets the same rule).

    python benchmarks/bench_compositional.py [--layers 1 2 4 8 16] [--no-certify]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections import Counter

import attrs

from verispatial.certify import compositional as comp
from verispatial.driver.run import certify
from verispatial.ir.graph import load_graph
from verispatial.ir.ids import Renaming
from verispatial.ir.program import Program, walk
from verispatial.ir.target import WORMHOLE
from verispatial.passes import Pipeline, compile_section, compose, default_passes

GRAPH = "examples/models/llama3_2_1b_decode.json"


def layer_sections() -> list[Program]:
    g = load_graph(GRAPH)
    pipe = Pipeline(default_passes())
    return [compile_section(g, i, WORMHOLE, pipe)[0] for i in range(len(g.ops))]


def step(layers: int) -> Program:
    """The synthetic L-layer step (module docstring)."""
    secs = layer_sections()
    out: list[Program] = []
    for layer in range(layers):
        for s in secs:
            short = s.name.split(".")[-1]

            def name(t: str, layer: int = layer, short: str = short) -> str:
                if t == "position":
                    return t
                if t == "x":
                    return "x" if layer == 0 else f"L{layer - 1}.out"
                if short == "attention" and t in ("k_cache", "v_cache"):
                    return f"L{layer}.{t}_past"
                return f"L{layer}.{t}"

            ren = Renaming(tensor=name)
            tensors = tuple(attrs.evolve(t, name=name(t.name), role=t.role.PARAM if name(t.name).endswith("_past")
                                         else t.role) for t in s.tensors)
            out.append(attrs.evolve(s, name=f"L{layer}.{short}", tensors=tensors,
                                    programs=tuple(attrs.evolve(ep, ops=ren.ops(ep.ops)) for ep in s.programs)))
    state = [f"L{layer}.{c}" for layer in range(layers) for c in ("k_cache", "v_cache")]
    return compose(out, state=state, target=WORMHOLE)[0]


def measure(layers: int, run_certify: bool) -> dict[str, object]:
    t0 = time.perf_counter()
    p = step(layers)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    rv = comp.recognise(p)
    t1 = time.perf_counter()
    assert isinstance(rv, comp.Rendezvous), rv
    c = comp.cut(p, rv)
    t2 = time.perf_counter()
    assert isinstance(c, comp.Cut), c
    row: dict[str, object] = {
        "layers": layers, "sections": len(p.sections), "engines": len(p.programs),
        "ops": sum(1 for ep in p.programs for _ in walk(ep.ops)), "build_s": round(built, 2),
        "recognise_s": round(t1 - t0, 3), "cut_s": round(t2 - t1, 3), "distinct": len({s.key for s in c.slices})}
    if run_certify:
        t0 = time.perf_counter()
        r = certify(p)
        row["certify_s"] = round(time.perf_counter() - t0, 1)
        row["obligations"] = len(r.results)
        row["verdicts"] = dict(Counter(x.verdict.value for x in r.results))
        row["exit"] = r.exit_code
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", nargs="*", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--no-certify", action="store_true")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one measurement, in a child process
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, not args.no_certify)))
        return
    for n in args.layers:
        cmd = [sys.executable, __file__, "--one", str(n)] + (["--no-certify"] if args.no_certify else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        print(out.strip(), flush=True)


if __name__ == "__main__":
    main()
