"""Running the vendor's TT-Lang simulator (tt-lang-sim 1.1.6, the optional extra ``verispatial[ttlang]``) on a file,
in a child process, for the differential test and the benchmarks.

Where the simulator lives: importable by this interpreter (the extra installed), or on the ``os.pathsep``-separated
paths of ``$VERISPATIAL_TTLANG_SIM`` (e.g. a ``pip install --target`` of torch and greenlet, and the unpacked wheel).
``available()`` says which, or None. The child calls the simulator's ``main`` and reports one JSON line: its
outcome is ``ok``, ``deadlock`` (the scheduler's own exception, ``RuntimeError`` from ``RuntimeError("deadlock")``
in ``ttl/sim/greenlet_scheduler.py``; the wheel's deadlock printer loads a diagnostics module the wheel lacks, so the
child replaces that printer and catches the exception, never reads the print), ``mismatch`` (the file's own result check failed),
``error`` (any other exception; ``message`` says which) or ``timeout``; ``cpu`` is the child's CPU seconds.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

_DRIVER = r"""
import json, sys
sys.argv = ["tt-lang-sim", sys.argv[1]] + sys.argv[2:]
out = {"outcome": "ok", "message": ""}
caught = []
try:
    import ttl.sim.greenlet_scheduler as gs
    import ttl.sim.ttlang_sim as ts

    def quiet(kind, message, *args, **kwargs):  # the wheel's printer loads a module the wheel lacks
        print(f"{kind}: {message}", file=sys.stderr)

    def execute(code, env, path, err):  # the simulator's own runner, keeping the exception it would swallow
        try:
            exec(code, env)
            return 0
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else int(bool(e.code))
        except BaseException as e:
            caught.append(e)
            return 1

    gs.print_diagnostic_error = quiet
    ts._execute_code = execute
    try:
        ts.main()
    except SystemExit as e:
        if e.code not in (0, None) and not caught:
            out = {"outcome": "error", "message": f"exit {e.code}"}
except BaseException as e:
    caught.append(e)
if caught:
    e = caught[0]
    text = f"{type(e).__name__}: {e}"
    cause = e.__cause__
    if isinstance(e, RuntimeError) and isinstance(cause, RuntimeError) and str(cause) == "deadlock":
        out = {"outcome": "deadlock", "message": text[:300]}  # the scheduler's own exception (greenlet_scheduler.py)
    elif isinstance(e, AssertionError):
        out = {"outcome": "mismatch", "message": text[:300]}
    else:
        out = {"outcome": "error", "message": text[:300]}
print("@@SIM@@" + json.dumps(out), flush=True)
"""

def available() -> list[str] | None:
    """The ``PYTHONPATH`` entries the child needs (empty: this interpreter has the simulator), or None when it cannot
    run here."""
    extra = [p for p in os.environ.get("VERISPATIAL_TTLANG_SIM", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(extra)}
    probe = subprocess.run([sys.executable, "-c", "import torch, greenlet, ttl.sim.ttlang_sim"], capture_output=True,
                           env=env, check=False, timeout=300)
    return extra if probe.returncode == 0 else None


def run(path: Path, paths: list[str], timeout: float = 300.0, dry_run: bool = False) -> tuple[str, float, str]:
    """Run the simulator on ``path`` (its own example call); ``dry_run`` skips the block math (the simulator's
    ``--dry-run``: sequencing and deadlock detection only, so a file's own result check reads as ``mismatch``).
    Returns (outcome, CPU seconds of the child, message)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [sys.executable, "-c", _DRIVER, str(path), *(["--dry-run"] if dry_run else [])]
    try:
        done = subprocess.run(args, capture_output=True, text=True, env=env, check=False, timeout=timeout,
                              cwd=str(path.parent))
    except subprocess.TimeoutExpired:
        return "timeout", timeout, f"no result in {timeout:.0f} s"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith("@@SIM@@")), None)
    if line is None:
        return "error", cpu, (done.stderr.strip().splitlines() or ["no result"])[-1][:300]
    res = json.loads(line[len("@@SIM@@"):])
    return str(res["outcome"]), cpu, str(res["message"])
