"""The composed Llama-3.2-1B decode step (``build_models.decode_step``, issue 8) with 1, 2, 4, 8 and 16 decoder layers
on Wormhole (full 8x8 mesh, the compiler's defaults), as ``verispatial compile MODEL -o STEP.json`` writes it. Per
step: the program file's size and ops; ``json.loads`` of it and ``load_program`` (schema, structure, ``validate``)
beside it; ``certify`` cold (no persistent proof store: every distinct slice proved once in the run, the equal ones
reusing it) and with the section proof cache disabled (``cache=False``: every slice certified itself); the exit
code; the peak resident set. Every measurement runs in a fresh Python process (its own imports, no proof or
analysis kept from another measurement, an honest peak RSS); times are wall and CPU seconds of that process's
measured call (the machine may be shared: CPU is the steadier figure).

    python benchmarks/bench_compose.py [--layers 1 2 4 8 16] [--no-uncached | --uncached 1 16] [--dir DIR]

Prints one JSON object per measurement and the Markdown table of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _build(layers: int, out: Path) -> dict[str, Any]:
    """Compile the ``layers``-layer step (no certification) and write it to ``out``."""
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    import build_models  # type: ignore[import-not-found]

    from verispatial.ir.target import WORMHOLE
    from verispatial.passes.compile import compile_model, compose_step, write_program

    t0 = time.perf_counter()
    g = build_models.decode_step(build_models.LLAMA, layers=layers)
    sections = compile_model(g, WORMHOLE, check=False)
    step = compose_step(g, sections, WORMHOLE, check=False)
    write_program(step.program, step.certificate, out)
    return {"sections": len(step.program.sections), "engines": len(step.program.programs), "ops": step.ops,
            "bytes": out.stat().st_size, "build_s": round(time.perf_counter() - t0, 2)}


def _timed(f: Any) -> tuple[Any, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    got = f()
    return got, time.perf_counter() - w0, time.process_time() - c0


def _load(path: Path) -> dict[str, Any]:
    from verispatial.ir.serialize import load_program

    data = path.read_bytes()
    _, jw, jc = _timed(lambda: json.loads(data))
    _, lw, lc = _timed(lambda: load_program(path))
    return {"json_loads_s": round(jw, 3), "json_loads_cpu_s": round(jc, 3), "load_s": round(lw, 3),
            "load_cpu_s": round(lc, 3)}


def _certify(path: Path, cache: bool) -> dict[str, Any]:
    from verispatial.driver.run import certify
    from verispatial.ir.serialize import load_program

    p = load_program(path)
    r, w, c = _timed(lambda: certify(p, cache=cache))
    bad = [x.name for x in r.results if x.verdict.value != "proved"]
    return {"certify_s": round(w, 2), "certify_cpu_s": round(c, 2), "exit": r.exit_code,
            "obligations": len(r.results), "not_proved": bad[:5]}


def _child(kind: str, layers: int, path: Path) -> dict[str, Any]:
    if kind == "build":
        got = _build(layers, path)
    elif kind == "load":
        got = _load(path)
    else:
        got = _certify(path, kind == "certify")
    return {"kind": kind, "layers": layers, **got,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def _run(kind: str, layers: int, path: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", kind, str(layers), str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    print(json.dumps(row), flush=True)
    return row


def table(rows: dict[int, dict[str, dict[str, Any]]]) -> str:
    """The README table: one line per step."""
    head = ("| layers | sections | ops | MB | json.loads (s) | load_program (s) | ratio | certify cold (s, CPU) | "
            "exit | peak RSS (MB) | no section cache (s, CPU) | peak RSS (MB) |")
    out = [head, "|" + "|".join(["---:"] * 12) + "|"]
    one = rows[min(rows)]["certify"]["certify_cpu_s"] if rows else 0.0
    for n, r in sorted(rows.items()):
        b, ld, c = r["build"], r["load"], r["certify"]
        u = r.get("uncached")
        ratio = ld["load_cpu_s"] / ld["json_loads_cpu_s"] if ld["json_loads_cpu_s"] else float("nan")
        rel = f" ({c['certify_cpu_s'] / one:.2f}x)" if one else ""
        out.append(
            f"| {n} | {b['sections']} | {b['ops']:,} | {b['bytes'] / 1e6:.1f} | {ld['json_loads_cpu_s']:.2f} | "
            f"{ld['load_cpu_s']:.2f} | {ratio:.1f}x | {c['certify_s']:.1f} ({c['certify_cpu_s']:.1f}{rel}) | "
            f"{c['exit']} | {c['peak_rss_mb']:,} | "
            + (f"{u['certify_s']:.1f} ({u['certify_cpu_s']:.1f}) | {u['peak_rss_mb']:,} |" if u else "- | - |"))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", nargs="*", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--no-uncached", action="store_true", help="skip certify with the section proof cache disabled")
    ap.add_argument("--uncached", nargs="*", type=int, help="the layer counts measured with the section proof cache "
                                                             "disabled (default: every one)")
    ap.add_argument("--dir", type=Path, help="where the step programs are written (default: a temporary directory)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # one measurement, in a fresh process
    args = ap.parse_args()
    if args.child:
        kind, layers, path = args.child
        print(json.dumps(_child(kind, int(layers), Path(path))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = args.dir or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        rows: dict[int, dict[str, dict[str, Any]]] = {}
        for n in args.layers:
            path = d / f"llama3_2_1b_decode_step_{n}_layers.json"
            rows[n] = {"build": _run("build", n, path), "load": _run("load", n, path),
                       "certify": _run("certify", n, path)}
            if not args.no_uncached and (args.uncached is None or n in args.uncached):
                rows[n]["uncached"] = _run("uncached", n, path)
        print(table(rows))


if __name__ == "__main__":
    main()
