"""Every program of ``proofs/`` certified (no proof store), its obligations' names and verdicts written as JSON, or
compared with such a file written by another tree: what a change of the checker that claims "same verdicts" is
checked against (``proofs/build_corpus.py --check`` compares the programs, not the verdicts). Not a test (minutes
of CPU).

    python benchmarks/corpus_verdicts.py OUT.json                  # this tree's verdicts
    python benchmarks/corpus_verdicts.py OUT.json --against BASE.json   # and every difference from BASE.json

Run the baseline from the other tree's checkout (``cd ../main && python benchmarks/corpus_verdicts.py base.json``).
Exit 1 when ``--against`` finds a difference.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def verdicts(root: Path) -> dict[str, list[list[str]] | str]:
    """Per program file of ``root/proofs`` (relative path), its results as sorted [family, name, verdict] rows, or
    the error certifying it raised (as text)."""
    from verispatial.cli.inputs import load_document_file
    from verispatial.driver.files import certify_file

    out: dict[str, list[list[str]] | str] = {}
    for f in sorted((root / "proofs").rglob("*.program.json")):
        try:
            report = certify_file(f, load_document_file).report
            out[str(f.relative_to(root))] = sorted([x.family, x.name, x.verdict.value] for x in report.results)
        except Exception as e:  # a program the checker cannot certify is a difference too
            out[str(f.relative_to(root))] = repr(e)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--against", type=Path, help="a file this script wrote from another tree")
    args = ap.parse_args()
    t0 = time.process_time()
    got = verdicts(ROOT)
    args.out.write_text(json.dumps(got, indent=0, sort_keys=True))
    rows = sum(len(v) for v in got.values() if isinstance(v, list))
    print(f"{len(got)} programs, {rows} obligations, {time.process_time() - t0:.1f} s CPU")
    if args.against is None:
        return 0
    base = json.loads(args.against.read_text())
    differ = sorted(k for k in set(got) | set(base) if got.get(k) != base.get(k))
    for k in differ:
        a, b = base.get(k), got.get(k)
        if isinstance(a, list) and isinstance(b, list):
            print(f"{k}: only before {[x for x in a if x not in b]}, "
                  f"only now {[x for x in b if x not in a]}")
        else:
            print(f"{k}: before {str(a)[:200]}, now {str(b)[:200]}")
    print(f"{len(differ)} program(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
