"""Program loading cost against plain ``json.loads`` of the same file, side by side in one process.

``load_program`` reads a program file, parses it (duplicate keys refused), checks it against the JSON Schema,
structures it into IR objects and runs ``validate``; a templated program (format version 3) is read as
``load_document`` reads it (templates and section entries, ``validate_templated``: never expanded). Each stage is
timed on its own (CPU seconds of this process per call, the least of ``--repeat`` batches; a call of microseconds is
timed as a batch of calls) and as a ratio to ``json.loads`` of the same bytes; ``loads`` is ``loads_document`` of the
bytes, every stage at once (issue 19 goal 4: at most 5x ``json.loads``), ``load`` is ``load_document`` of the file,
against ``json.loads`` of the bytes and against ``json.load`` of the file. Files: the shipped examples and a synthetic
program of about ``--ops`` ops (the 48-engine matmul example's engine programs repeated, which still validates), or
the FILEs given (e.g. the decode steps ``compile --no-certify -o`` writes). The last line names the largest
``loads`` ratio and every file above 5x. With ``PYTHONPATH`` at another checkout it measures that checkout's loader
by the same script (main's figures beside a branch's).

With ``--bad``, each file is also timed as bad input (issue 19 goal 5: a report costs at most 2x ``validate`` of the
file): its last op misspelt, every tenth top-level op misspelt, and an op naming a buffer that does not exist (a
``validate`` finding), each read by ``loads_document`` up to its one-line message, against ``loads_document`` of the
correct file (what ``verispatial validate`` does with it), best of ``--repeat``; the first report's time (which
imports ``jsonschema`` to word the message) beside it.

With ``--interleaved``, only ``loads_document`` against ``json.loads`` of each file (the examples by default), a batch
of each in turn: two checkouts compared in alternate processes see the machine's load alike.

With ``--shipped``, the files are every shipped program (``examples/**/*.json`` whose format is a program,
``proofs/**/*.program.json``) under 0.1 MB, timed as ``--interleaved`` times them; the last lines give the median, the
largest ratio and how many are within 5x (issue 19 goal 4). With ``--baseline CHECKOUT`` (e.g. ``/work/main``) that
checkout's loader is imported beside this one in the same process (``Checkout``) and timed in the same rounds: a batch
of ``json.loads``, one of this tree's ``loads_document`` and one of the baseline's, in turn.

    python benchmarks/bench_load.py [--ops 300000] [--repeat 3] [--load-only] [--bad] [--interleaved] [--shipped]
                                    [--baseline CHECKOUT] [FILE ...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir import serialize
from verispatial.ir.validate import validate, validate_templated

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = [*sorted((ROOT / "examples").glob("*.json")), *sorted((ROOT / "examples" / "broken").glob("*.json"))]


#: CPU seconds one timed batch lasts at least: a call of a few microseconds is timed as many calls in a row (the
#: process clock's granularity and one call's cold caches would otherwise be most of what is measured).
BATCH_SECONDS = 0.002


def best(fn: Callable[[], Any], repeat: int) -> float:
    """The least CPU time of one call of ``fn`` (seconds) over ``repeat`` batches, each of as many calls as fill
    ``BATCH_SECONDS`` (one call for a large document): this process's own work, which other jobs sharing the machine
    disturb far less than the wall clock."""
    t0 = time.process_time()
    fn()
    once = time.process_time() - t0
    calls = max(1, min(10_000, int(BATCH_SECONDS / max(once, 1e-7))))
    out = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        out = min(out, (time.process_time() - t0) / calls)
    return out


def count_ops(ops: list[Any]) -> int:
    return sum(1 + count_ops(o.get("body", [])) for o in ops)


def synthetic(ops: int) -> Path:
    """The wormhole matmul example with every engine program's ops repeated until the program has about ``ops``
    ops (written to a temporary file)."""
    d = json.loads((ROOT / "examples" / "matmul_reuse_mcast_wormhole.json").read_text())
    have = sum(count_ops(ep["ops"]) for ep in d["programs"])
    times = max(1, round(ops / have))
    for ep in d["programs"]:
        ep["ops"] = ep["ops"] * times
    f = Path(tempfile.mkdtemp()) / f"synthetic_{times}x.json"
    f.write_text(json.dumps(d, indent=1))
    return f


def shipped_programs(limit: int = 100_000) -> list[Path]:
    """Every shipped program file of at most ``limit`` bytes: the examples' documents whose format is a program (not
    a graph) and the corpus's ``*.program.json``, by path."""
    out = []
    for path in sorted([*(ROOT / "examples").rglob("*.json"), *(ROOT / "proofs").rglob("*.program.json")]):
        data = path.read_bytes()
        if len(data) <= limit and json.loads(data).get("format") == "verispatial.program":
            out.append(path)
    return out


class Checkout:
    """The loader (``verispatial.ir.serialize``) of another checkout at ``root``, imported beside this one in the same
    process: its modules are kept aside in ``modules`` and put in ``sys.modules`` only while it runs (``loads``), so
    the imports its functions make as they run find its own modules, not this tree's."""

    def __init__(self, root: Path) -> None:
        ours = _take_verispatial()
        sys.path.insert(0, str(root))
        try:
            self.serialize: ModuleType = importlib.import_module("verispatial.ir.serialize")
            importlib.import_module("verispatial.ir.validate")
        finally:
            sys.path.remove(str(root))
            self.modules = _take_verispatial()
            sys.modules.update(ours)
        if not Path(self.serialize.__file__ or "").is_relative_to(root):
            raise SystemExit(f"--baseline {root}: imported {self.serialize.__file__}, not that checkout's loader")

    def batch(self, data: bytes, calls: int) -> float:
        """CPU seconds per call of ``calls`` calls of the checkout's ``loads_document`` of ``data``."""
        ours = _take_verispatial()
        sys.modules.update(self.modules)
        try:
            return _batch(lambda: self.serialize.loads_document(data), calls)
        finally:
            _take_verispatial()
            sys.modules.update(ours)


def _take_verispatial() -> dict[str, ModuleType]:
    """Remove every ``verispatial`` module from ``sys.modules``; returns them by name."""
    return {k: sys.modules.pop(k) for k in list(sys.modules) if k == "verispatial" or k.startswith("verispatial.")}


def _batch(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def interleaved(path: Path, repeat: int, baseline: Checkout | None = None) -> tuple[float, float]:
    """``loads_document`` of ``path``'s bytes against ``json.loads`` of them, a batch of each in turn ``repeat`` times
    (the least per call of each; with ``baseline``, a batch of its ``loads_document`` too): all see the same minutes
    of a shared machine. Prints the row; returns the ratio (and the baseline's, NaN without one)."""
    data = path.read_bytes()
    serialize.loads_document(data)
    if baseline is not None:
        baseline.batch(data, 1)
    t0 = time.process_time()
    serialize.loads_document(data)
    calls = max(1, min(10_000, int(2 * BATCH_SECONDS / max(time.process_time() - t0, 1e-7))))
    t_json = t_load = t_base = float("inf")
    for r in range(repeat):
        t_json = min(t_json, _batch(lambda: json.loads(data), calls))
        # the two loaders in turn first and second after json.loads: the one run second was up to 12% faster when both
        # were this tree (an A/A run)
        if baseline is not None and r % 2:
            t_base = min(t_base, baseline.batch(data, calls))
        t_load = min(t_load, _batch(lambda: serialize.loads_document(data), calls))
        if baseline is not None and not r % 2:
            t_base = min(t_base, baseline.batch(data, calls))
    full = path.resolve()
    name = str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else path.name
    base = f" | baseline {t_base * 1e3:9.3f} ms {t_base / t_json:6.2f}x" if baseline is not None else ""
    print(f"{name:72} json.loads {t_json * 1e3:9.3f} ms | loads_document {t_load * 1e3:9.3f} ms "
          f"{t_load / t_json:6.2f}x{base}", flush=True)
    return t_load / t_json, t_base / t_json if baseline is not None else float("nan")


def summary(what: str, ratios: list[float]) -> None:
    """The median, the largest and the count within 5x of ``ratios`` (``loads_document`` / ``json.loads``)."""
    print(f"{what}: median {statistics.median(ratios):.2f}x, most {max(ratios):.2f}x, within 5x: "
          f"{sum(r <= 5 for r in ratios)} of {len(ratios)}", flush=True)


def json_load(path: Path) -> Any:
    """``json.load`` of the file at ``path``: what ``load_document`` is to ``loads_document``, for plain JSON."""
    with open(path, "rb") as f:
        return json.load(f)


def row(path: Path, repeat: int, stages: bool) -> float:
    """Print the figures of ``path``; returns ``loads_document`` of its bytes as a ratio to ``json.loads``."""
    data = path.read_bytes()
    doc = json.loads(data)
    n = sum(count_ops(ep["ops"]) for ep in doc.get("programs", []))
    t_json = best(lambda: json.loads(data), repeat)
    cols = f"{'-':>5} {'-':>6} {'-':>6} {'-':>6}"
    templated = doc.get("version") == 3
    if templated:
        n = sum(count_ops(ep["ops"]) for t in doc["templates"] for ep in t["programs"])
    if stages:
        t_parse = best(lambda: serialize.parse_json(data), repeat)
        t_schema = best(lambda: serialize.check_program_schema(doc), repeat)
        if templated:
            t_struct = best(lambda: serialize._structure_templated(doc), repeat)
            tp = serialize._structure_templated(doc)
            t_valid = best(lambda: validate_templated(tp), repeat)
        else:
            t_struct = best(lambda: serialize._structure_program(doc), repeat)
            p = serialize.program_from_dict(doc)
            t_valid = best(lambda: validate(p), repeat)
        cols = f"{t_parse / t_json:5.2f} {t_schema / t_json:6.2f} {t_struct / t_json:6.2f} {t_valid / t_json:6.2f}"
    t_loads = best(lambda: serialize.loads_document(data), repeat)
    t_load = best(lambda: serialize.load_document(path), repeat)
    t_file = best(lambda: json_load(path), repeat)
    t_old = best(lambda: json_only(path), repeat) if hasattr(serialize, "_fast_parse") else float("nan")
    name = path.name if path.parent.name != "broken" else f"broken/{path.name}"
    print(f"{name:42} {len(data) / 1e6:7.2f} {n:>8} | {t_json * 1e3:9.3f} | {cols} | {t_loads * 1e3:9.3f} "
          f"{t_loads / t_json:6.2f}x | {t_load * 1e3:9.3f} {t_load / t_json:6.2f}x {t_load / t_file:6.2f}x | "
          f"{t_old / t_json:6.2f}x", flush=True)
    return t_loads / t_json


def _engine_programs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [ep for t in doc.get("templates", [doc]) for ep in t.get("programs", [])]


def bad_inputs(doc: dict[str, Any]) -> dict[str, bytes]:
    """Three bad copies of the program object ``doc``, by what is wrong: the last op of its last engine program
    misspelt (inside the innermost last loop), every tenth top-level op of every engine program misspelt, and the
    last op naming a buffer misnaming it (an id past the buffers: a ``validate`` finding, not the schema's)."""
    out: dict[str, bytes] = {}
    d = json.loads(json.dumps(doc))
    ops = _engine_programs(d)[-1]["ops"]
    while ops[-1].get("body"):
        ops = ops[-1]["body"]
    ops[-1]["op"] += "x"
    out["last op misspelt"] = json.dumps(d).encode()
    d = json.loads(json.dumps(doc))
    for ep in _engine_programs(d):
        for op in ep["ops"][::10]:
            op["op"] += "x"
    out["every tenth op misspelt"] = json.dumps(d).encode()
    d = json.loads(json.dumps(doc))
    named = [op for ep in _engine_programs(d) for op in ep["ops"] if "buf" in op]
    if named:
        named[-1]["buf"] = 1 << 20
        out["a buffer id past the buffers"] = json.dumps(d).encode()
    return out


def bad_rows(path: Path, repeat: int) -> None:
    """Each of ``bad_inputs`` of ``path`` read up to its message against reading the correct file (ms, ratio)."""
    data = path.read_bytes()
    t_good = best(lambda: serialize.loads_document(data), repeat)

    def report(text: bytes) -> str:
        try:
            serialize.loads_document(text)
        except (ParseError, InvalidProgram) as e:
            return str(e)
        raise AssertionError("bad input loaded")

    for what, text in bad_inputs(json.loads(data)).items():
        t0 = time.process_time()
        report(text)
        first = time.process_time() - t0
        t_bad = best(lambda text=text: report(text), repeat)
        print(f"{path.name[:30]:30} {what:30} | validate {t_good * 1e3:9.2f} ms | report {t_bad * 1e3:9.2f} ms "
              f"{t_bad / t_good:5.2f}x | first report {first * 1e3:9.2f} ms {first / t_good:5.2f}x", flush=True)


def json_only(path: Path) -> Any:
    """``load_document`` reading the text with ``json`` alone (the orjson reading, ``serialize._fast_parse``, off):
    the path before it, measured beside it."""
    fast = serialize._fast_parse
    serialize._fast_parse = lambda _text: None  # type: ignore[assignment]
    try:
        return serialize.load_document(path)
    finally:
        serialize._fast_parse = fast  # type: ignore[assignment]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--load-only", action="store_true", help="time load_program alone (e.g. on a checkout without the "
                                                               "stage functions)")
    ap.add_argument("--bad", action="store_true", help="also time bad copies of each file against validating it")
    ap.add_argument("--interleaved", action="store_true", help="only loads_document against json.loads, a batch of "
                                                                 "each in turn (the least noisy A/B of two checkouts)")
    ap.add_argument("--shipped", action="store_true", help="every shipped program under 0.1 MB, timed as "
                                                             "--interleaved, with the count within 5x")
    ap.add_argument("--baseline", type=Path, help="another checkout whose loader is timed beside this one (with "
                                                  "--interleaved or --shipped)")
    ap.add_argument("files", nargs="*", type=Path, help="program files to time instead of the examples")
    args = ap.parse_args()
    if args.interleaved or args.shipped:
        baseline = Checkout(args.baseline.resolve()) if args.baseline else None
        rows = []
        for f in args.files or (shipped_programs() if args.shipped else EXAMPLES):
            try:
                serialize.loads_document(f.read_bytes())
            except (ParseError, InvalidProgram) as e:  # a shipped bad example that does not load is not timed
                print(f"{f.name:72} does not load: {e}", file=sys.stderr)
                continue
            rows.append(interleaved(f, args.repeat, baseline))
        if rows:
            summary("this tree: loads_document / json.loads", [r for r, _ in rows])
            if baseline is not None:
                summary(f"baseline {args.baseline}: loads_document / json.loads", [b for _, b in rows])
        return
    print("CPU time per call, the least of --repeat batches; ratios to json.loads of the same bytes; parse = with the "
          "duplicate-key check; schema, structure and validate alone; loads = loads_document of the bytes, all of them "
          "(goal 4's figure); load = load_document, all of them from the file, to json.loads of the bytes and (file) "
          "to json.load of the file (ops: a templated program's templates'); json-only = load_document with the text "
          "read by json alone (orjson off)")
    print(f"{'program':42} {'MB':>7} {'ops':>8} | {'json ms':>9} | {'parse':>5} {'schema':>6} {'struct':>6} "
          f"{'valid':>6} | {'loads ms':>9} {'loads':>7} | {'load ms':>9} {'load':>7} {'file':>7} | {'json-only':>7}")
    files = args.files or [*EXAMPLES, synthetic(args.ops)]
    ratios: dict[str, float] = {}
    for f in files:
        try:
            serialize.load_document(f)
        except Exception as e:  # a shipped bad example that does not load is not timed
            print(f"{f.name:42} does not load: {e}", file=sys.stderr)
            continue
        ratios[f.name] = row(f, args.repeat, not args.load_only and hasattr(serialize, "check_program_schema"))
    if ratios:
        worst = max(ratios, key=ratios.__getitem__)
        over = sorted(k for k, v in ratios.items() if v > 5)
        print(f"loads_document / json.loads: at most {ratios[worst]:.2f}x ({worst}); over 5x: {len(over)} of "
              f"{len(ratios)} files{': ' + ', '.join(over) if over else ''}")
    if args.bad:
        print("\nbad input: loads_document up to the message against loads_document of the correct file (what "
              "`verispatial validate` does), best of --repeat; the first report imports jsonschema; target 2x")
        for f in files:
            bad_rows(f, args.repeat)


if __name__ == "__main__":
    main()
