"""Ctrl-C with worker processes (``--jobs``): the run ends at once, exit 130 with one line (as ``certify``,
``compile`` and ``explain`` do, tests/test_stress.py), and the workers it started are gone. Leaving a
``ProcessPoolExecutor`` block waits for every queued task: ``gate --jobs 2`` went on for minutes after SIGINT."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "proofs/examples/matmul_reuse_mcast_wormhole"

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads worker pids from /proc")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(x) for x in (task / "children").read_text().split()]
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("group", [False, True], ids=["main-only", "process-group"])
def test_gate_with_two_jobs_exits_130_at_once_on_sigint(tmp_path: Path, group: bool) -> None:
    # Four copies of the largest committed example: several seconds of checking each, so the run is still going
    # when the signal lands (asserted below).
    for name in "abcd":
        for kind in ("program", "certificate"):
            shutil.copy(f"{MATMUL}.{kind}.json", tmp_path / f"{name}.{kind}.json")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "verispatial", "gate", "--jobs", "2", "--no-cache", "-q",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=group)
    try:
        t_end = time.monotonic() + 60
        while len(_children(proc.pid)) < 2 and time.monotonic() < t_end and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(1.0)  # the workers are inside their first programs
        workers = _children(proc.pid)
        assert len(workers) >= 2
        assert proc.poll() is None
        t0 = time.monotonic()
        if group:  # what a terminal's Ctrl-C does: the signal reaches the workers too
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, out, err) == (130, "", "verispatial: interrupted\n")
    assert took < 10.0, f"exited {took:.1f} s after SIGINT"  # was the whole queue's time (minutes on proofs/)
    assert [w for w in workers if _alive(w)] == []
