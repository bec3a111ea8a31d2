"""The TT-Lang front end and checker against the vendor's simulator (issue 17 item 5), on the single-node tutorials of
tt-lang-sim 1.1.6 and their mutants: block_count lowered (and raised), a loop bound off by one either way, a transfer's wait
dropped, a copy (with its wait) dropped, a shape that the blocks do not divide. Every file runs at a small shape (the
example's 8192 / 2048 dimensions shrunk to 256) so the simulator can run it; the simulator runs with ``--dry-run``
(sequencing and deadlock detection without the block math, so the file's own result check reads as a mismatch).

    VERISPATIAL_TTLANG_SIM=PATHS python benchmarks/ttlang_differential.py [--limit N] [--budget SECONDS] [NAME ...]

Per mutant: certify's verdict (exit 0 proved, 1 refuted, 2 refused by the front end, 3 failed to prove) and the
simulator's outcome. A disagreement is a mutant the simulator deadlocks and certify does not refute, or one certify
proves and the simulator does not run clean. Exits 1 on a disagreement, 2 when the simulator or the tutorials are
missing.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from verispatial.driver.run import certify
from verispatial.errors import VerispatialError
from verispatial.frontends.ttlang import import_file

SINGLE_NODE = ["matmul/step_1_single_node_single_tile_block.py", "matmul/step_2_single_node_multitile_block.py",
               "elementwise/step_1_single_node_single_tile_block.py", "elementwise/step_2_single_node_multitile_block.py",
               "broadcast/single_node_broadcast_single_tile_block.py",
               "broadcast/single_node_broadcast_multitile_blocks.py"]


def shrink(text: str) -> str:
    """The example's large dimensions at 256 (a multiple of every block of the tutorials)."""
    return re.sub(r"\b(1024|2048|4096|8192)\b", "256", text)


def _kernel_lines(text: str) -> set[int]:
    """Lines inside the ``@ttl.operation`` function (where loops and copies are mutated)."""
    out: set[int] = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and any("ttl.operation" in ast.unparse(d) for d in node.decorator_list):
            out |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def mutants(text: str) -> list[tuple[str, str]]:
    """(label, source) of every mutant of a (shrunk) tutorial source."""
    lines = text.split("\n")
    inside = _kernel_lines(text)
    out: list[tuple[str, str]] = []
    for m in re.finditer(r"block_count=(\d+)", text):
        at = text.count(chr(10), 0, m.start()) + 1
        out.append((f"block_count {m.group(1)}->{int(m.group(1)) + 1} @{at}",
                    text[:m.start()] + f"block_count={int(m.group(1)) + 1}" + text[m.end():]))
        if int(m.group(1)) > 1:
            out.append((f"block_count {m.group(1)}->{int(m.group(1)) - 1} @{text.count(chr(10), 0, m.start()) + 1}",
                        text[:m.start()] + f"block_count={int(m.group(1)) - 1}" + text[m.end():]))
    for i, line in enumerate(lines):
        if i + 1 not in inside:
            continue
        for m in re.finditer(r"range\(([^()]*)\)", line):
            for d in ("+ 1", "- 1"):
                new = line[:m.start()] + f"range({m.group(1)} {d})" + line[m.end():]
                out.append((f"range {d} @{i + 1}", "\n".join([*lines[:i], new, *lines[i + 1:]])))
        if re.fullmatch(r"\s*\w+\.wait\(\)\s*", line):
            out.append((f"wait dropped @{i + 1}", "\n".join([*lines[:i], *lines[i + 1:]])))
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and isinstance(st.value, ast.Call) and ast.unparse(st.value.func) == "ttl.copy" \
                    and st.lineno in inside:
                name = st.targets[0].id
                drop = set(range(st.lineno, (st.end_lineno or st.lineno) + 1))
                drop |= {x.lineno for x in body if isinstance(x, ast.Expr) and ast.unparse(x) == f"{name}.wait()"}
                kept = [x for x in body if x.lineno not in drop]
                new = [ln for j, ln in enumerate(lines) if j + 1 not in drop]
                if not kept:  # keep the block syntactically whole
                    at = min(drop) - 1 - sum(1 for j in drop if j < min(drop))
                    new.insert(at, " " * st.col_offset + "pass")
                out.append((f"copy dropped @{st.lineno}", "\n".join(new)))
    for m in re.finditer(r"\b256\b", text):
        at = text.count("\n", 0, m.start())
        if at + 1 in inside:
            continue
        out.append((f"shape 256->288 @{at + 1}", text[:m.start()] + "288" + text[m.end():]))
    return out


def verdict(path: Path) -> int:
    try:
        imps = import_file(str(path))
    except VerispatialError:
        return 2
    codes = [certify(imp.program).exit_code for imp in imps]
    return 1 if 1 in codes else max(codes)


def main() -> int:
    import ttlang_sim as S
    from test_frontend_ttlang import tutorials_dir

    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="at most this many mutants (0: all)")
    ap.add_argument("--budget", type=float, default=0.0, help="stop after this many wall seconds (0: none)")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    paths = S.available()
    if paths is None:
        print("the simulator cannot run here (install verispatial[ttlang] or set VERISPATIAL_TTLANG_SIM)")
        return 2
    import pytest

    try:
        tut = tutorials_dir()
    except pytest.skip.Exception as e:
        print(f"offline: {e}")
        return 2
    start = time.monotonic()
    tally: Counter[str] = Counter()
    bad: list[str] = []
    only_certify: list[str] = []
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in SINGLE_NODE:
            if args.names and not any(name.startswith(a) for a in args.names):
                continue
            base = shrink((tut / name).read_text())
            for label, text in [("as shipped", base), *mutants(base)]:
                if (args.limit and n >= args.limit) or (args.budget and time.monotonic() - start > args.budget):
                    break
                n += 1
                f = Path(tmp) / Path(name).name
                f.write_text(text)
                v = verdict(f)
                sim, cpu, msg = S.run(f, paths, timeout=300, dry_run=True)
                clean = sim in ("ok", "mismatch")
                if sim == "error" and "requires Python 3.12" in msg:
                    sim = "unsupported"  # the simulator injects a dropped copy wait only on Python 3.12+
                kind = ("agree-refuted" if v == 1 and sim == "deadlock" else
                        "sim-unsupported" if sim == "unsupported" else
                        "both-reject" if v == 1 and sim == "error" else  # e.g. a read past the tensor's end
                        "agree-proved" if v == 0 and clean else
                        "refused" if v == 2 else
                        "certify-only" if v == 1 and clean else
                        "disagree" if (sim == "deadlock" and v != 1) or (v == 0 and not clean) else
                        f"other ({v}, {sim})")
                tally[kind] += 1
                line = f"{name:55} {label:28} certify={v} sim={sim:9} {cpu:5.1f}s  {kind}"
                print(line + (f"  [{msg[:80]}]" if sim == "error" else ""), flush=True)
                if kind == "disagree":
                    bad.append(line)
                if kind == "certify-only":
                    only_certify.append(line)
    print(f"\n{n} files: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    for line in bad:
        print("DISAGREE", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
