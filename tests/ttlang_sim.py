"""Running the vendor's TT-Lang simulator (tt-lang-sim 1.1.6, the optional extra ``verispatial[ttlang]``) on a file,
for the differential test and the benchmarks.

Where the simulator lives: importable by this interpreter (the extra installed), or on the ``os.pathsep``-separated
paths of ``$VERISPATIAL_TTLANG_SIM`` (e.g. a ``pip install --target`` of torch and greenlet, and the unpacked wheel).
``available()`` says which, or None.

A run's outcome is ``ok``, ``deadlock`` (the scheduler's own exception, ``RuntimeError`` from
``RuntimeError("deadlock")`` in ``ttl/sim/greenlet_scheduler.py`` ``GreenletScheduler.run``; the wheel's deadlock
printer ``print_diagnostic_error`` loads a diagnostics module the wheel lacks, so the child replaces that printer and
catches the exception, never reads the print), ``mismatch`` (an exception of the file's own code after the operation
ran to its end: its result check failed), ``error`` (any other exception: a kernel's, raised inside the scheduler's
run, or one before the operation's kernels ran; ``message`` says which) or ``timeout``; ``cpu`` is the child's CPU
seconds. Which exceptions come from inside an operation's run is told by wrapping ``GreenletScheduler.run``.

Two ways to run: ``run()`` starts a fresh interpreter per file (what one user run costs, torch's import included:
``bench_ttlang.py`` compares that with certify); ``Simulator`` imports torch and the simulator once in a server
process and forks a child per file, so a run costs the simulation only (about 0.1-0.5 s instead of 2-3 s, most of
which is importing torch): the differential makes hundreds of runs. Each forked child starts from the server's
state right after the imports (the simulator keeps its state in a module-level context, ``ttl/sim/context.py``, that
no run in the server itself touches), so runs do not see each other.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import attrs

#: ``drive(argv)``: one simulator run in this process; returns {"outcome", "message"}.
_DRIVE = r"""
import json, sys

def drive(argv):
    sys.argv = ["tt-lang-sim", *argv]
    out = {"outcome": "ok", "message": ""}
    caught = []
    ran = {"done": 0, "inside": False}  # operation runs finished; an exception raised inside one
    try:
        import ttl.sim.greenlet_scheduler as gs
        import ttl.sim.ttlang_sim as ts

        scheduler_run = gs.GreenletScheduler.run

        def run(self):  # one operation's kernels, run by the scheduler to their end (or its exception)
            try:
                scheduler_run(self)
            except BaseException:
                ran["inside"] = True
                raise
            ran["done"] += 1

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
        gs.GreenletScheduler.run = run
        ts._execute_code = execute
        observe_writes(ran)
        try:
            ts.main()
        except SystemExit as e:
            if e.code not in (0, None) and not caught:
                out = {"outcome": "error", "message": f"exit {e.code}"}
    except BaseException as e:
        caught.append(e)
    out["unwritten"] = ran.get("unwritten", [])
    if caught:
        e = caught[0]
        text = f"{type(e).__name__}: {e}"
        out["exception"] = type(e).__name__
        cause = e.__cause__
        if isinstance(e, RuntimeError) and isinstance(cause, RuntimeError) and str(cause) == "deadlock":
            out.update(outcome="deadlock", message=text[:300])  # the scheduler's own exception
        elif not ran["inside"] and ran["done"]:
            # the file's own code after the operation ran to its end: its result check
            out.update(outcome="mismatch", message=text[:300])
        else:
            # a kernel's error (inside the scheduler) or the operation refused before its kernels ran
            out.update(outcome="error", message=text[:300])
    return out


def observe_writes(ran):
    # Which tiles of each tensor the kernels write (the Block -> Tensor copy handler, in dry runs too, where the
    # handler copies nothing): after each operation run, per tensor written at all, the tiles never written.
    import ttl.sim.copyhandlers as ch

    handler = next(h for (a, b), h in ch.HANDLER_REGISTRY.items() if a.__name__ == "Block" and b.__name__ == "Tensor")
    transfer = handler.transfer
    seen = {}  # id of the root torch tensor -> (root, tiles written)

    def observed(src, dst):
        t = dst._tensor
        root = t._base if t._base is not None else t
        if root.dim() == 2 and t.dim() == 2:
            off = t.storage_offset() - root.storage_offset()
            r0, c0 = divmod(off, root.stride(0))
            tiles = seen.setdefault(id(root), (root, set()))[1]
            for r in range(r0 // 32, -(-(r0 + t.shape[0]) // 32)):
                for c in range(c0 // 32, -(-(c0 + t.shape[1]) // 32)):
                    tiles.add((r, c))
        return transfer(src, dst)

    handler.transfer = observed
    import ttl.sim.greenlet_scheduler as gs

    inner = gs.GreenletScheduler.run

    def run(self):
        inner(self)
        for root, tiles in seen.values():
            rows, cols = -(-root.shape[0] // 32), -(-root.shape[1] // 32)
            gaps = sorted((r, c) for r in range(rows) for c in range(cols) if (r, c) not in tiles)
            if gaps:
                ran.setdefault("unwritten", []).append([rows, cols, len(gaps), list(gaps[0])])
        seen.clear()

    gs.GreenletScheduler.run = run

"""

_ONE_SHOT = _DRIVE + r"""
print("@@SIM@@" + json.dumps(drive(sys.argv[1:])), flush=True)
"""

#: The server: imports once, then per request line {"argv", "cwd", "timeout"} forks a child that runs ``drive`` with
#: its output sent to /dev/null and its result written to a pipe; answers one line {"outcome", "message", "cpu"}.
_SERVER = _DRIVE + r"""
import os, select, signal, time
import torch, greenlet, ttl.sim.ttlang_sim  # the cost a run no longer pays

proto = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_WRONLY)
for line in sys.stdin:
    req = json.loads(line)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:  # die with the server (Linux: prctl PR_SET_PDEATHSIG = 1, SIGKILL)
            import ctypes
            ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            os.chdir(req["cwd"])
            res = drive(req["argv"])
        except BaseException as e:
            res = {"outcome": "error", "message": f"{type(e).__name__}: {e}"[:300]}
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data, deadline, timed_out = b"", time.monotonic() + req["timeout"], False
    while True:
        left = deadline - time.monotonic()
        ready = select.select([r], [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    cpu = ru.ru_utime + ru.ru_stime
    if timed_out:
        res = {"outcome": "timeout", "message": f"no result in {req['timeout']:.0f} s"}
    elif not data:
        res = {"outcome": "error", "message": f"the child died (status {status})"}
    else:
        res = json.loads(data)
    res["cpu"] = cpu
    proto.write(json.dumps(res) + "\n")
    proto.flush()
"""


@attrs.frozen
class SimRun:
    """One simulator run: ``outcome`` (module docstring), the child's CPU seconds, the exception's message and class
    name; ``unwritten``: per tensor the kernels wrote, after an operation's run, that they left tiles of unwritten:
    (tile rows, tile columns, tiles unwritten, the first one), observed on the simulator's Block -> Tensor copies."""

    outcome: str
    cpu: float
    message: str
    exception: str = ""
    unwritten: tuple[tuple[int, int, int, tuple[int, int]], ...] = ()

    @property
    def clean(self) -> bool:
        """Ran to its end with no error of the simulator's own (a ``mismatch`` in ``--dry-run`` is the file's result
        check reading unset data, not a fault)."""
        return self.outcome in ("ok", "mismatch")


def available() -> list[str] | None:
    """The ``PYTHONPATH`` entries the child needs (empty: this interpreter has the simulator), or None when it cannot
    run here."""
    extra = [p for p in os.environ.get("VERISPATIAL_TTLANG_SIM", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(extra)}
    probe = subprocess.run([sys.executable, "-c", "import torch, greenlet, ttl.sim.ttlang_sim"], capture_output=True,
                           env=env, check=False, timeout=300)
    return extra if probe.returncode == 0 else None


def sim_args(path: Path, dry_run: bool, scheduler: str = "fair", grid: tuple[int, int] | None = None) -> list[str]:
    """The simulator's command line for ``path``: ``--dry-run`` skips the block math (sequencing and deadlock
    detection only, so a file's own result check reads as ``mismatch``); ``scheduler`` is its ``--scheduler``
    (``fair``, its default: least recently run first, yielding at every synchronization; ``greedy``: each kernel runs
    until it blocks); ``grid`` (rows, cols) its ``--grid`` for ``grid="full"``."""
    args = [str(path), "--scheduler", scheduler]
    if dry_run:
        args.append("--dry-run")
    if grid is not None:
        args += ["--grid", f"{grid[0]},{grid[1]}"]
    return args


def run(path: Path, paths: list[str], timeout: float = 300.0, dry_run: bool = False) -> tuple[str, float, str]:
    """Run the simulator on ``path`` (its own example call) in a fresh interpreter. Returns (outcome, CPU seconds of
    the child, message)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [sys.executable, "-c", _ONE_SHOT, *sim_args(path, dry_run)]
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


class Simulator:
    """A server process holding torch and the simulator imported, forking one child per run (module docstring).
    Use as a context manager; ``run`` is not thread-safe (one request at a time)."""

    def __init__(self, paths: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        self._proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, env=env)

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the server (its stdin closed ends its loop) and close its pipes."""
        stdin: IO[str] | None = self._proc.stdin
        if stdin is not None and not stdin.closed:
            stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def run(self, path: Path, dry_run: bool = True, scheduler: str = "fair", grid: tuple[int, int] | None = None,
            timeout: float = 300.0) -> SimRun:
        """Run the simulator on ``path`` (its own example call; ``sim_args`` says what the options mean)."""
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        req: dict[str, Any] = {"argv": sim_args(path, dry_run, scheduler, grid), "cwd": str(path.parent),
                               "timeout": timeout}
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the simulator server exited (status {self._proc.poll()})")
        res = json.loads(line)
        gaps = tuple((int(r), int(c), int(n), (int(first[0]), int(first[1])))
                     for r, c, n, first in res.get("unwritten", []))
        return SimRun(str(res["outcome"]), float(res["cpu"]), str(res["message"]), str(res.get("exception", "")),
                      gaps)
