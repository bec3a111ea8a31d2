"""Loading cost against ``json.loads`` counted in machine instructions (valgrind's callgrind), stage by stage: a figure
the load of a shared machine does not move (``bench_load.py``'s CPU times moved by 10-20% a row between runs at a load
average of 10; these repeat to within 1%).

Each FILE is read ``--calls`` times by ``json.loads``, then by each stage alone (``parse_json``, the schema check and
structuring of the parsed object, ``validate`` of the structured program) and by ``loads_document`` of the bytes (every
stage at once: issue 19 goal 4's figure), each batch counted on its own (``--toggle-collect`` on ``sys.call_tracing``,
which runs it, ``--dump-after`` for a count per batch). Printed: ``json.loads``' instructions per call and each stage's as
a ratio to it. An instruction ratio is not a time ratio: Python's bytecode runs fewer instructions per cycle than
``json.loads``' C loop (the time ratios of ``bench_load.py --shipped`` on a quiet machine were 1.6-2.1x these); it
compares two trees' loaders exactly (``PYTHONPATH`` names the tree measured).

    PYTHONPATH=$PWD python benchmarks/bench_load_instructions.py [--calls 30] FILE ...
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

STAGES = ("json.loads", "parse", "schema", "structure", "validate", "loads_document")


def _child(files: list[str], calls: int) -> None:
    """Under callgrind: each stage of each file run ``calls`` times inside ``sys.call_tracing`` (the toggle)."""
    import verispatial.ir.validate as checks
    from verispatial.ir import serialize

    def batch(fn: object, arg: object) -> None:
        for _ in range(calls):
            fn(arg)  # type: ignore[operator]

    for f in files:
        data = Path(f).read_bytes()
        for _ in range(3):  # warm: every generated builder made, every cache filled
            serialize.loads_document(data)
            json.loads(data)
        doc = json.loads(data)
        p = serialize._structure_program(doc)
        for fn, arg in ((json.loads, data), (serialize.parse_json, data), (serialize.check_program_schema, doc),
                        (serialize._structure_program, doc), (checks.validate, p), (serialize.loads_document, data)):
            sys.call_tracing(batch, (fn, arg))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.child:
        _child(args.files, args.calls)
        return
    out = Path(tempfile.mkdtemp()) / "cg.out"
    subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=sys_call_tracing",
                    "--dump-after=sys_call_tracing", f"--callgrind-out-file={out}", sys.executable, __file__,
                    "--child", "--calls", str(args.calls), *args.files], check=True, capture_output=True,
                   env=os.environ)
    counts = [int(re.search(r"^totals: (\d+)", out.with_name(f"cg.out.{i}").read_text(), re.M).group(1)) / args.calls
              for i in range(1, 1 + len(STAGES) * len(args.files))]  # type: ignore[union-attr]
    print(f"{'program':40} {'json.loads':>11} " + " ".join(f"{s:>14}" for s in STAGES[1:]))
    for k, f in enumerate(args.files):
        row = counts[len(STAGES) * k:len(STAGES) * (k + 1)]
        print(f"{Path(f).name[:40]:40} {row[0] / 1e3:10.0f}K " + " ".join(f"{x / row[0]:13.2f}x" for x in row[1:]))


if __name__ == "__main__":
    main()
