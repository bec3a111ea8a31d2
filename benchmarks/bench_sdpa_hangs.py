"""tt-metal #44366's SDPA decode (examples/ttmetal/hangs/sdpa_44366): import and certify of its before (ttnn 0.71.2),
after (0.72.0) and pinned-release (0.81.1) host descriptions against the issue's 5 s a vendor op (issue 18 item 5),
beside the non-causal ``examples/ttmetal/sdpa_decode/host.yaml`` of the same kernels as the baseline, in one process.

Each program is imported and certified (no proof cache) ``--repeat`` times; the best wall and CPU seconds of the
import and of the certify (the CPU clock is this process's, Z3 included), the verdict counts and the deadlock
family's verdict. Needs the wheels unpacked (examples/ttmetal/hangs/README.md); a side whose wheel is missing is
printed ``offline``.

    python benchmarks/bench_sdpa_hangs.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from verispatial.frontends.ttmetal import import_host
from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ttmetal"
#: (label, host description, ttnn release)
CASES = (("baseline sdpa_decode", EXAMPLES / "sdpa_decode" / "host.yaml", TTNN_VERSION),
         ("before (0.71.2)", EXAMPLES / "hangs" / "sdpa_44366" / "before.yaml", "0.71.2"),
         ("after (0.72.0)", EXAMPLES / "hangs" / "sdpa_44366" / "after.yaml", "0.72.0"),
         ("after (0.81.1)", EXAMPLES / "hangs" / "sdpa_44366" / "after_0_81_1.yaml", TTNN_VERSION))


def timed(path: Path, repeat: int) -> str:
    """The best of ``repeat`` imports and certifies of ``path``: wall / CPU seconds of each, verdict counts."""
    from verispatial.driver.run import certify

    imp, cert = (1e9, 1e9), (1e9, 1e9)
    rep = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        p = import_host(path)
        w1, c1 = time.perf_counter(), time.process_time()
        rep = certify(p, cache=False)
        w2, c2 = time.perf_counter(), time.process_time()
        imp = min(imp, (w1 - w0, c1 - c0))
        cert = min(cert, (w2 - w1, c2 - c1))
    assert rep is not None
    counts = {v: sum(1 for r in rep.results if r.verdict.value == v) for v in ("proved", "refuted", "failed-to-prove")}
    deadlock = ",".join(sorted({r.verdict.value for r in rep.results if r.name.startswith("deadlock")}))
    return (f"import {imp[0]:5.2f} s wall {imp[1]:5.2f} s CPU  certify {cert[0]:5.2f} s wall {cert[1]:5.2f} s CPU  "
            f"total {imp[0] + cert[0]:5.2f} / {imp[1] + cert[1]:5.2f}  {counts['proved']:2} proved "
            f"{counts['refuted']} refuted {counts['failed-to-prove']} failed  deadlock {deadlock}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is printed")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for label, path, version in CASES:
        if wheel_root(download=False, version=version) is None:
            print(f"{label:22} offline (the ttnn {version} wheel is not unpacked)")
            continue
        print(f"{label:22} {timed(path, args.repeat)}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
