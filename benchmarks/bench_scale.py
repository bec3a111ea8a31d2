"""The figures of issue 19 goals 1-4, each beside its target or baseline, measured in one run.

Every command runs as a fresh ``python -m verispatial`` process (its start-up counts); CPU is the child's user +
system time and peak RSS its own maximum resident set (``os.wait4``), so a machine shared with other jobs disturbs
CPU far less than wall. The package's bytecode is compiled once, untimed, under the work directory
(``PYTHONPYCACHEPREFIX``), as an installed package's is: from a shell with ``PYTHONDONTWRITEBYTECODE`` set and no
``__pycache__`` (this machine's) every run compiled each module it imports, 1.0-1.5 s of a cold certify's CPU; that
figure is printed too, beside the cold certify (``bench_ratio.py`` caches bytecode the same way). In order:

1. ``compile MODEL --target wormhole -o STEP.json --no-cache`` of the 16-layer Llama-3.2-1B decode step, cold: compile
   plus certify of every section and of the composed program (target: 10 s, peak 1 GiB);
2. ``certify STEP.json --no-cache`` cold (target: 5 s), and warm: a first run fills a fresh proof store, the next
   ``--repeat`` read it (the least CPU; target: 2x ``json.load`` of the file, timed as a ``python -c`` process and in
   this process);
3. the certificate's size against the program file's (target: at most 1x);
4. ``compile --no-certify`` of the 32-layer Llama-3.1-8B and 80-layer Llama-3.1-70B steps, then their ``certify
   --no-cache`` cold against the 16-layer step's (target: the 80-layer step at most 1.5x);
5. ``load_document`` (read, schema, structure, validate) of each step file against ``json.loads`` of its bytes, best
   of ``--repeat`` (target: at most 5x);
6. the schema check of the 16-layer step by the compiled validator on the shipped schema against on the form it is
   compiled in (``serialize.dispatch_trees``), side by side.

With ``--expanded``, the 16-layer step is also written in full (program format version 2, ``TemplatedProgram.expand``)
and certified cold the same way: the baseline of what the templated form saves.

    python benchmarks/bench_scale.py [--repeat 5] [--expanded] [--skip-70b] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "models"
STEPS = {"llama3_2_1b": 16, "llama3_1_8b": 32, "llama3_1_70b": 80}


#: Imports every module of the package (a module that cannot be imported here is left to compile when run).
WARM = ("import contextlib, importlib, pkgutil, verispatial\n"
        "for m in pkgutil.walk_packages(verispatial.__path__, 'verispatial.'):\n"
        "    if not m.name.endswith('.__main__'):  # which runs the command line\n"
        "        with contextlib.suppress(Exception):\n"
        "            importlib.import_module(m.name)\n")

#: The environment of every measured process: bytecode read from and written to ``PYTHONPYCACHEPREFIX`` (``main``
#: sets it under the work directory), never compiled again per run.
BYTECODE: dict[str, str] = {}


def measured(args: list[str], env: dict[str, str] | None = None, command: list[str] | None = None,
             plain: bool = False) -> dict[str, Any]:
    """One ``python -m verispatial`` process (or ``command``): its exit code, wall and CPU (user + system) seconds, peak
    RSS (MB) and the last line it printed. Its output goes to files, so the process is reaped by ``os.wait4`` with its
    own resource usage. ``env`` is added to the environment after ``BYTECODE``; ``plain``: neither, this process's
    environment with ``PYTHONDONTWRITEBYTECODE`` set (the package's modules compiled from source unless a
    ``__pycache__`` beside them holds their bytecode; the standard library's read from its own)."""
    cmd = command or [sys.executable, "-m", "verispatial", *args]
    if plain:
        return _run(cmd, {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    base = {k: v for k, v in os.environ.items() if not (BYTECODE and k == "PYTHONDONTWRITEBYTECODE")}
    return _run(cmd, {**base, **BYTECODE, **(env or {})})


def _run(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``measured``'s process ``command`` in ``env``."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, text=True, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines() or err.read().strip().splitlines() or [""]
    return {"exit": proc.returncode, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024,
            "last": lines[-1]}


def best(fn: Callable[[], Any], repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out = min(out, time.process_time() - t0)
    return out


def load_ratio(path: Path, repeat: int) -> tuple[float, float]:
    """(json.loads ms, load_document ms) of ``path``, best of ``repeat`` each, in this process."""
    from verispatial.ir.serialize import loads_document

    data = path.read_bytes()
    return best(lambda: json.loads(data), repeat) * 1e3, best(lambda: loads_document(data), repeat) * 1e3


def schema_side_by_side(path: Path, repeat: int) -> tuple[float, float]:
    """(ms, ms): the compiled validator (jsonschema-rs) on the shipped program schema against on the form it is
    compiled in (``serialize.dispatch_trees``: the op dispatch as an ``anyOf``), on the parsed ``path``, best of ``repeat``."""
    import jsonschema_rs

    from verispatial.ir.serialize import dispatch_trees, parse_json, schema

    d = parse_json(path.read_bytes())
    shipped, tree = jsonschema_rs.validator_for(schema()), jsonschema_rs.validator_for(dispatch_trees(schema()))
    assert shipped.is_valid(d)
    assert tree.is_valid(d)
    return best(lambda: shipped.is_valid(d), repeat) * 1e3, best(lambda: tree.is_valid(d), repeat) * 1e3


def line(what: str, value: str, target: str, ratio: str) -> None:
    print(f"| {what} | {value} | {target} | {ratio} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--expanded", action="store_true", help="also certify the 16-layer step written in full")
    ap.add_argument("--skip-70b", action="store_true")
    ap.add_argument("--keep", type=Path, help="write the steps and certificates here (default: a temporary directory)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_scale."))
    work.mkdir(parents=True, exist_ok=True)
    step = work / "llama3_2_1b_decode_step.json"
    cert = work / "llama3_2_1b_decode_step.certificate.json"
    BYTECODE["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    # untimed: the bytecode of every module of the package and of what they import written once (the prefix holds
    # the standard library's and site-packages' too), as an installed package's is when it is installed
    subprocess.run([sys.executable, "-c", WARM], cwd=ROOT, check=True,
                   env={**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **BYTECODE})
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; files in {work}\n")
    print("| figure | measured | target | ratio |\n|---|---:|---:|---:|")

    c = measured(["compile", str(MODELS / "llama3_2_1b_decode_step.json"), "--target", "wormhole", "-o", str(step),
                  "--no-cache", "-q"])
    assert c["exit"] == 0, c
    line("compile + certify, 16-layer step, cold: CPU (wall) s", f"{c['cpu']:.2f} ({c['wall']:.1f})", "10",
         f"{c['cpu'] / 10:.2f}x")
    line("compile + certify: peak RSS (MB)", f"{c['peak_mb']:,.0f}", "1,024", f"{c['peak_mb'] / 1024:.2f}x")

    cold = measured(["certify", str(step), "--no-cache", "-q"])
    assert cold["exit"] == 0, cold
    line("certify STEP.json cold: CPU (wall) s", f"{cold['cpu']:.2f} ({cold['wall']:.1f})", "5",
         f"{cold['cpu'] / 5:.2f}x")
    # the same with every imported module compiled from source (no bytecode read or written): the figure before
    # this benchmark cached bytecode, on a machine whose shell sets PYTHONDONTWRITEBYTECODE
    raw = measured(["certify", str(step), "--no-cache", "-q"], plain=True)
    assert raw["exit"] == 0, raw
    line("the same, every module compiled from source (no bytecode): CPU (wall) s",
         f"{raw['cpu']:.2f} ({raw['wall']:.1f})", "-", f"{raw['cpu'] / 5:.2f}x")
    store = tempfile.mkdtemp(prefix="bench_scale.store.")
    env = {"VERISPATIAL_CACHE_DIR": store}
    first = measured(["certify", str(step), "-q"], env)
    assert first["exit"] == 0, first
    warm = min((measured(["certify", str(step), "-q"], env) for _ in range(args.repeat)), key=lambda m: m["cpu"])
    assert warm["exit"] == 0, warm
    t_load = best(lambda: json.loads(step.read_bytes()), args.repeat)
    # json.load as a process: the interpreter's start counts on both sides of the ratio
    t_proc = min(measured([], command=[sys.executable, "-c", f"import json; json.load(open({str(step)!r}))"])["cpu"]
                 for _ in range(args.repeat))
    start = measured(["--help"])  # the process's start and the CLI's imports alone, beside it
    line("certify warm (a filled store): CPU (wall) s against json.load of the file as a process and in this one; "
         "`verispatial --help`'s CPU",
         f"{warm['cpu']:.3f} ({warm['wall']:.2f}); json.load {t_proc:.3f} s as a process, {t_load * 1e3:.1f} ms "
         f"in-process; --help {start['cpu']:.2f}",
         "2x json.load", f"{warm['cpu'] / t_proc:.2f}x (as processes)")

    pb, cb = step.stat().st_size, cert.stat().st_size
    line("certificate bytes against program bytes", f"{cb:,} / {pb:,}", "1x", f"{cb / pb:.2f}x")

    certs = {"llama3_2_1b": cold}
    for model in ("llama3_1_8b", "llama3_1_70b"):
        if model == "llama3_1_70b" and args.skip_70b:
            continue
        f = work / f"{model}_decode_step.json"
        built = measured(["compile", str(MODELS / f"{model}_decode_step.json"), "--target", "wormhole", "-o", str(f),
                          "--no-certify", "--no-cache", "-q"])
        assert built["exit"] == 0, built
        got = measured(["certify", str(f), "--no-cache", "-q"])
        assert got["exit"] == 0, got
        certs[model] = got
        line(f"{model} ({STEPS[model]} layers): compile --no-certify CPU s; certify cold CPU (wall) s",
             f"{built['cpu']:.2f}; {got['cpu']:.2f} ({got['wall']:.1f})", "1.5x the 16-layer step's" if
             model == "llama3_1_70b" else "-", f"{got['cpu'] / cold['cpu']:.2f}x")

    for model, layers in STEPS.items():
        f = work / f"{model}_decode_step.json"
        if f.exists():
            j, ld = load_ratio(f, args.repeat)
            line(f"load_document of the {layers}-layer step ({f.stat().st_size / 1e6:.2f} MB) against json.loads",
                 f"{ld:.1f} ms / {j:.1f} ms", "5x", f"{ld / j:.2f}x")

    plain, tree = schema_side_by_side(step, args.repeat)
    line("schema check of the 16-layer step: shipped schema / compiled form (dispatch tree), jsonschema-rs",
         f"{plain:.1f} ms / {tree:.1f} ms", "-", f"{tree / plain:.2f}x")

    if args.expanded:
        from verispatial.ir.serialize import dumps, load_document

        full = work / "llama3_2_1b_decode_step.v2.json"
        full.write_text(dumps(load_document(step).expand()) + "\n")  # type: ignore[union-attr]
        got = measured(["certify", str(full), "--no-cache", "-q"])
        j, ld = load_ratio(full, 1)
        line("the same step written in full (version 2): certify cold CPU (wall) s",
             f"{got['cpu']:.2f} ({got['wall']:.1f}); {full.stat().st_size / 1e6:.1f} MB", "-",
             f"{got['cpu'] / cold['cpu']:.2f}x the templated form's")
        line("the same step in full: load against json.loads", f"{ld:.0f} ms / {j:.0f} ms", "5x", f"{ld / j:.2f}x")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
