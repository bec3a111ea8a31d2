"""What replaying the solver's candidates costs where the interpreter's search decides the time: ``certify X -q
--no-cache`` of each slow case in a fresh process, this tree against a baseline tree (``--base``, a checkout of
main), alternating, CPU seconds of the child process (user + system; the machine is shared, so a baseline is run
in the same session each round). Not a test (minutes of CPU).

The cases: the tt-metal mcast host as shipped (tests/data/ttmetal/mcast/: four blocks, the copy-out writers) with
the data multicast and its flag on two channels, as tests/test_frontend_ttmetal_write_vcs.py writes it before it cut
the host to one block (commit 5ecc894: "no longer walks 60,000 interleavings to drop a candidate"), and the refuted
examples whose certify took 5 s or more on main.

    python benchmarks/bench_replay.py --base ../main [--rounds N] [--only TEXT]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
EXAMPLES = ("examples/broken/g_rendezvous_short.json", "examples/broken/s_flag_reset_late.json",
            "examples/broken/c_trip_sender.json",
            # a TT-Lang writer's tx.wait() after its wait block: source reuses replayed by the run with landings last
            "tests/data/ttlang/write_wait_after.py")


def mcast_hosts(out: Path) -> list[Path]:
    """The untrimmed mcast host's programs (program.json, read by this tree's front end), one per pair of calls."""
    import yaml

    sys.path.insert(0, str(TESTS))
    import test_frontend_ttmetal_write_vcs as w

    from verispatial.frontends.ttmetal import import_host
    from verispatial.ir.serialize import dumps

    cases = {"mcast_per_core_wormhole": w._per_core(""),
             "mcast_unicast_data_wormhole": "noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb));\n"
                                            "        " + w.FLAG_MCAST}
    got = []
    for name, calls in cases.items():
        d = out / name
        (d / "mcast").mkdir(parents=True)
        (d / "copy").mkdir()
        text = (w.DATA / "mcast" / "sender.cpp").read_text()
        (d / "mcast" / "sender.cpp").write_text(text.replace(f"{w.DATA_MCAST}\n        {w.FLAG_MCAST}", calls))
        (d / "mcast" / "receiver.cpp").write_text((w.DATA / "mcast" / "receiver.cpp").read_text())
        (d / "copy" / "writer.cpp").write_text((w.DATA / "copy" / "writer.cpp").read_text())
        host = yaml.safe_load((w.DATA / "mcast" / "host.yaml").read_text())
        host["kernel_root"] = str(d)
        host["target"] = "wormhole_b0"
        (d / "host.yaml").write_text(yaml.safe_dump(host))
        program = out / f"{name}.json"
        program.write_text(dumps(import_host(d / "host.yaml")))
        got.append(program)
    return got


def certify_cpu(tree: Path, program: Path) -> tuple[float, int]:
    """CPU seconds of ``python -m verispatial certify PROGRAM -q --no-cache`` run from ``tree``, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(program), "-q", "--no-cache"],
                        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL,
                        check=False).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the baseline tree (a checkout of main)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", metavar="TEXT", help="only the cases whose name contains TEXT")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        programs = [*mcast_hosts(Path(tmp)), *(ROOT / e for e in EXAMPLES)]
        programs = [p for p in programs if args.only is None or args.only in p.stem]
        print(f"load average {os.getloadavg()[0]:.2f}; best of {args.rounds} alternating rounds, CPU s of certify")
        print(f"{'program':40} {'base s':>8} {'this s':>8} {'ratio':>6} {'exit base/this':>15}")
        trees = (args.base.resolve(), ROOT)
        total = [0.0, 0.0]
        for p in programs:
            rounds = [[certify_cpu(tree, p) for tree in trees] for _ in range(args.rounds)]  # base, this, base, ...
            base, this = (min(r[i][0] for r in rounds) for i in (0, 1))
            total = [total[0] + base, total[1] + this]
            exits = "/".join(str(rounds[-1][i][1]) for i in (0, 1))
            print(f"{p.stem:40} {base:8.2f} {this:8.2f} {this / base:6.2f} {exits:>15}")
        print(f"{'total':40} {total[0]:8.2f} {total[1]:8.2f} {total[1] / total[0]:6.2f}   "
              f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
