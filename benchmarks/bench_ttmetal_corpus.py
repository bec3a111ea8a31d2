"""How much of the vendor's kernel corpus the tt-metal front end reads: every kernel ``.cpp`` under
``ttnn/cpp/ttnn/operations/**/kernels/`` of the pinned ttnn wheel (``frontends/ttmetal/vendor.py``: downloaded into
the user cache, never kept here), read in survey mode (no host description: every argument 2, every tensor one
tensor's, all 64 buffer indices, one scratchpad and 16 semaphores declared, no defines) on one core.

A kernel *reads fully* when every statement maps onto ops or is modelled as having none; otherwise the first
refusal is counted by its construct, and the constructs are ranked by count. A kernel the reader crashes on is
counted as ``front-end error: <type>`` (a fault of the front end, to fix). Data-movement and compute kernels are
told apart by their folder (``kernels/compute``) or an ``api/compute`` include.

    python benchmarks/bench_ttmetal_corpus.py [--top 30] [--list-refused CONSTRUCT]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from verispatial.frontends.ttmetal.cpp import read_kernel
from verispatial.frontends.ttmetal.host import SCRATCHPAD_BASE, HostBuffer, HostKernel, HostSemaphore, HostSpec
from verispatial.frontends.ttmetal.lower import Shared, read_scratch
from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.frontends.ttmetal.vendor import KERNELS, TTNN_VERSION, wheel_root
from verispatial.ir.core import Engine, Site
from verispatial.ir.target import WORMHOLE


def survey_host(root: Path) -> HostSpec:
    bufs = (*(HostBuffer(f"c_{i}", i, 2048, 8, "bf16", 1, None, None, None) for i in range(64)),
            # one scratchpad of 8 tiles, which every ``scratch::NAME`` token names in the survey
            HostBuffer("scratch", SCRATCHPAD_BASE, 2048, 8, "bf16", 1, None, None, None, scratchpad=True))
    sems = tuple(HostSemaphore(f"s{i}", 0, None) for i in range(16))
    return HostSpec("survey", WORMHOLE, root, root, (), (), bufs, sems, (), ())


def kind_of(path: Path) -> str:
    if "compute" in path.parts:
        return "compute"
    head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    return "compute" if '"api/compute/' in head or "compute_kernel_api" in head else "data-movement"


def read_one(path: Path, root: Path, host: HostSpec) -> str | None:
    """None when ``path`` reads fully, else the construct of its first refusal."""
    display = path.relative_to(root).as_posix()
    engine = Engine.COMPUTE if kind_of(path) == "compute" else Engine.READER
    kernel = HostKernel(path.stem, path, display, engine, 0, (), {}, (), {}, False)
    try:
        prog = read_kernel(path, display, {}, root, (), compute=engine == Engine.COMPUTE)
        read_scratch(Shared(host), kernel, Site(0, 0), {}, prog, survey=True)
    except Refused as e:
        return e.construct
    except RecursionError:
        return "front-end error: RecursionError"
    except Exception as e:  # a fault of the front end: counted, so it is seen and fixed
        return f"front-end error: {type(e).__name__}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=30, help="refusal reasons to show")
    ap.add_argument("--list-refused", metavar="CONSTRUCT", help="list the kernels refused for CONSTRUCT")
    args = ap.parse_args(argv)
    wheel = wheel_root(download=True)
    if wheel is None:
        print(f"the ttnn {TTNN_VERSION} wheel is not cached and could not be downloaded", file=sys.stderr)
        return 2
    cpp_root = wheel / "ttnn" / "ttnn" / "cpp"
    files = sorted(p for p in (wheel / KERNELS).rglob("*.cpp") if "kernels" in p.relative_to(wheel / KERNELS).parts)
    host = survey_host(cpp_root)
    t0 = time.perf_counter()
    totals: collections.Counter[str] = collections.Counter()
    full: collections.Counter[str] = collections.Counter()
    reasons: dict[str, collections.Counter[str]] = {"data-movement": collections.Counter(),
                                                    "compute": collections.Counter()}
    refused_files: list[str] = []
    for p in files:
        k = kind_of(p)
        totals[k] += 1
        why = read_one(p, cpp_root, host)
        if why is None:
            full[k] += 1
        else:
            reasons[k][why] += 1
            if args.list_refused and why == args.list_refused:
                refused_files.append(p.relative_to(cpp_root).as_posix())
    secs = time.perf_counter() - t0
    print(f"ttnn {TTNN_VERSION}: {sum(totals.values())} kernel files read in {secs:.1f} s")
    for k in ("data-movement", "compute"):
        pct = 100 * full[k] / totals[k] if totals[k] else 0.0
        print(f"  {k:14} {full[k]:5} of {totals[k]:5} read fully ({pct:.1f} %)")
    for k in ("data-movement", "compute"):
        print(f"\nrefusals of {k} kernels, by construct (first refusal of each file):")
        for why, c in reasons[k].most_common(args.top):
            print(f"  {c:5}  {why}")
    for f in refused_files:
        print(f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
