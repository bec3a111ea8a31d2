"""The reference interpreter's speed against a baseline revision: the explorer (every interleaving) and seeded runs
over the shipped examples, in CPU seconds (``time.process_time``) of a child process per tree, the two trees
alternating ``--rounds`` times (the machine is shared: the least of the rounds is printed, and each pair runs back to
back). The baseline tree is ``git archive REV verispatial`` unpacked into a temporary directory.

    python benchmarks/bench_interp.py [--baseline 5b4383e] [--rounds 3] [--states 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Run in the child: explore and simulate every example (``examples/*.json``, ``examples/broken/*.json``) and print
#: the CPU seconds of each as JSON, with the states the explorer visited (equal trees visit equal states).
CHILD = """
import json, sys, time
from pathlib import Path
from verispatial.ir.serialize import load_program
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
root, states = Path(sys.argv[1]), int(sys.argv[2])
progs = [load_program(f) for f in sorted(root.glob("examples/*.json")) + sorted(root.glob("examples/broken/*.json"))]
t0 = time.process_time()
visited = sum(explore(p, max_states=states).states for p in progs)
t1 = time.process_time()
for p in progs:
    for seed in (None, 1, 2):
        simulate(p, seed=seed, max_steps=200_000)
print(json.dumps({"programs": len(progs), "states": visited, "explore": t1 - t0,
                  "simulate": time.process_time() - t1}))
"""


def run(tree: Path, states: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(states)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="5b4383e", help="the git revision to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--states", type=int, default=20_000, help="the explorer's state budget per program")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "verispatial"],
                                 capture_output=True, check=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        rows: dict[str, list[dict[str, float]]] = {"baseline": [], "this tree": []}
        for _ in range(args.rounds):
            rows["baseline"].append(run(Path(tmp), args.states))
            rows["this tree"].append(run(ROOT, args.states))
    print(f"{'tree':<26} {'programs':>8} {'states':>8} {'explore (s)':>12} {'simulate (s)':>13}")
    for name, runs in rows.items():
        label = f"{name} ({args.baseline})" if name == "baseline" else name
        print(f"{label:<26} {runs[0]['programs']:>8.0f} {runs[0]['states']:>8.0f} "
              f"{min(r['explore'] for r in runs):>12.2f} {min(r['simulate'] for r in runs):>13.2f}")


if __name__ == "__main__":
    main()
