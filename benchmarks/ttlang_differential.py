"""The TT-Lang front end and checker against the vendor's simulator (issue 17 item 5): the tutorials of tt-lang-sim
1.1.6 and the TT-Lang examples of examples/ttlang/, each as shipped and mutated, run by the simulator and certified.

    python benchmarks/ttlang_differential.py [--limit N] [--budget SECONDS] [--json OUT.json] [NAME ...]

(NAME: a prefix of a source's name, e.g. ``matmul/step_2`` or ``examples/ttlang/pipe``; the simulator comes from the
extra ``verispatial[ttlang]`` or ``$VERISPATIAL_TTLANG_SIM``, see tests/ttlang_sim.py.)

Mutation kinds (``mutants``): a dataflow buffer's ``block_count`` lowered and raised by one; every loop bound of the
operation off by one either way; each transfer's ``wait()`` dropped (which TT-Lang's compiler puts back right after the
copy: docs/ttlang.md) or moved past the ``with`` that releases its block; each copy dropped with its wait; each example
dimension made one that the blocks do not divide (one tile more) and one that is not a whole number of tiles (half a
tile more); each pipe endpoint moved by one node along each axis (staying on the grid) and a unicast pipe's ends
swapped.

Every file runs at a shape the simulator can run (``SOURCES``: the tutorials' 8192 / 2048 dimensions shrunk so each
node still gets blocks) with ``--dry-run`` (sequencing and deadlock detection without the block math, so the file's
own result check reads as a mismatch). Per file: certify's verdict (0 proved, 1 refuted, 2 refused by the front
end, 3 failed to prove) and the simulator's outcome. The claims checked, at every shape where both run:

- where the simulator deadlocks, certify refutes;
- where certify proves, the simulator runs clean.

A *disagreement* breaks one of them; the script exits 1 on any. A mutant that certify refutes while the simulator runs
clean (*certify-only*) is then *confirmed*: the probes of ``PROBES`` (the other scheduler, the block math on, the
example's dimensions scaled, one dimension scaled) are tried in order until the simulator shows the defect there --
a deadlock, an error of its own, or (block math on) the file's result check failing -- while the unmutated source
at the same probe runs clean, so the defect is the mutant's. Each probe file is certified too and its pair checked
against the claims. A certify-only mutant no probe confirms is listed with certify's counterexample and the reason.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from verispatial.driver.run import certify
from verispatial.errors import VerispatialError
from verispatial.frontends.ttlang import import_file
from verispatial.frontends.ttlang.source import grid_of, parse, pick_operation

if TYPE_CHECKING:
    from ttlang_sim import SimRun, Simulator

    from verispatial.ir.program import Program

ROOT = Path(__file__).resolve().parent.parent

#: The sources: a tutorial of the wheel (path under ``ttl/tutorials``) or a file of this repository, with the size
#: its example's large dimensions (1024 and up) are given so that the simulator runs it in well under a second and
#: every node still gets blocks: 128 (four 1-tile blocks) for the single-tile tutorials, 256 (two blocks of 4x4 tiles)
#: for the multi-tile ones, 512 for the grids (a block per node of step 3's 4x4; step 4's 8x8 then leaves its last
#: rows idle, the case its ``if m_block < m_blocks`` guards are for). Larger shapes cost certify more and say no more:
#: a refutation of matmul step 4 at 1024 took 65 s of CPU (its replay on 192 engines), 6 s at 512. None: the file's
#: own shapes.
SOURCES: dict[str, int | None] = {
    "matmul/step_1_single_node_single_tile_block.py": 128,
    "matmul/step_2_single_node_multitile_block.py": 256,
    "matmul/step_3_multinode.py": 512,
    "matmul/step_4_multinode_grid_full.py": 512,
    "elementwise/step_1_single_node_single_tile_block.py": 128,
    "elementwise/step_2_single_node_multitile_block.py": 256,
    "elementwise/step_3_multinode.py": 512,
    "elementwise/step_4_multinode_grid_full.py": 512,
    "broadcast/single_node_broadcast_single_tile_block.py": 128,
    "broadcast/single_node_broadcast_multitile_blocks.py": 256,
    "examples/ttlang/pipe_bcast_add.py": None,
    "examples/ttlang/matmul_bias_relu.py": None,
    "examples/ttlang/allgather_matmul_1037_fixed.py": None,
    "examples/ttlang/allgather_matmul_1037.py": None,
}
#: Sources run as shipped only: mutating a program that already deadlocks says nothing new.
AS_SHIPPED_ONLY = {"examples/ttlang/allgather_matmul_1037.py"}
TILE = 32


@attrs.frozen
class Mutant:
    """One file of the differential: ``kind`` (``as shipped`` or a mutation kind of the module docstring), ``label``
    (kind, what changed and the line), its text."""

    kind: str
    label: str
    text: str


@attrs.frozen
class Probe:
    """A way to run a file other than the differential's own: ``scale`` multiplies the example's dimensions (``dim``:
    only that one, by its position among them; None: all), ``scheduler`` and ``dry_run`` are the simulator's
    options (``ttlang_sim.sim_args``)."""

    scale: int
    dim: int | None
    scheduler: str
    dry_run: bool

    @property
    def label(self) -> str:
        shape = "same shape" if self.scale == 1 else f"dims x{self.scale}" if self.dim is None \
            else f"dim {self.dim} x{self.scale}"
        return f"{shape}, {self.scheduler} scheduler, " + ("dry run" if self.dry_run else "block math")


#: The probes a certify-only mutant is tried at (``confirm``): first those where the simulator can show the defect
#: itself (a deadlock or an error of its own: the other scheduler, larger shapes), then the block math (the file's
#: result check).
PROBES = [Probe(1, None, "greedy", True), Probe(2, None, "fair", True), Probe(2, None, "greedy", True),
          Probe(3, None, "fair", True), Probe(3, None, "greedy", True),
          Probe(2, 0, "fair", True), Probe(2, 1, "fair", True), Probe(2, 2, "fair", True),
          Probe(1, None, "fair", False), Probe(1, None, "greedy", False), Probe(2, None, "fair", False)]


# ------------------------------------------------------------------------------------------------ the sources


def source_text(name: str, tutorials: Path) -> str:
    """The text of source ``name`` at the differential's shape (``SOURCES``)."""
    path = ROOT / name if name.startswith("examples/") else tutorials / name
    text = path.read_text()
    size = SOURCES[name]
    if size is None:
        return text
    return _set_dims(text, {i: size for i, (_, v) in enumerate(shape_literals(text)) if v >= 1024})


def _operation_lines(tree: ast.Module) -> set[int]:
    """Lines of the ``@ttl.operation`` functions (where loops, buffers, copies and pipes are mutated)."""
    out: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("ttl.operation" in ast.unparse(d) for d in node.decorator_list):
            out |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def shape_literals(text: str) -> list[tuple[ast.Constant, int]]:
    """The example's dimensions: integer literals of at least a tile (32) that are elements of a tuple literal
    outside the operation (``shape = (2048, 2048)``, ``M, K, N = 256, 512, 128``, ``torch.randn((64, 32))``), in
    source order, with their values."""
    tree = ast.parse(text)
    inside = _operation_lines(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and node.lineno not in inside:
            for e in node.elts:
                if isinstance(e, ast.Constant) and type(e.value) is int and e.value >= TILE:
                    out.append((e, e.value))
    return sorted(out, key=lambda c: (c[0].lineno, c[0].col_offset))


def _set_dims(text: str, values: dict[int, int]) -> str:
    """``text`` with the ``i``-th example dimension (``shape_literals``) set to ``values[i]``."""
    lits = shape_literals(text)
    lines = text.split("\n")
    for i in sorted(values, key=lambda i: (-lits[i][0].lineno, -lits[i][0].col_offset)):
        c = lits[i][0]
        ln = lines[c.lineno - 1]
        lines[c.lineno - 1] = ln[:c.col_offset] + str(values[i]) + ln[c.end_col_offset or c.col_offset:]
    return "\n".join(lines)


def scaled(text: str, scale: int, dim: int | None = None) -> str | None:
    """``text`` with its example dimensions (or only the ``dim``-th) multiplied by ``scale``; None when there is no
    such dimension."""
    lits = shape_literals(text)
    if dim is not None and dim >= len(lits):
        return None
    if scale == 1:
        return text
    return _set_dims(text, {i: v * scale for i, (_, v) in enumerate(lits) if dim is None or i == dim})


# ------------------------------------------------------------------------------------------------ the mutants


def _replace(text: str, node: ast.expr, new: str) -> str:
    """``text`` with the source segment of ``node`` (on one line) replaced by ``new``."""
    lines = text.split("\n")
    ln = lines[node.lineno - 1]
    lines[node.lineno - 1] = ln[:node.col_offset] + new + ln[node.end_col_offset or node.col_offset:]
    return "\n".join(lines)


def _grid(text: str) -> tuple[int, ...] | None:
    """The operation's grid as the front end reads it (None when it cannot)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    try:
        src = parse(f.name)
        return grid_of(src, pick_operation(src, None), (8, 8))
    except VerispatialError:
        return None
    finally:
        Path(f.name).unlink()


def _pipe_mutants(text: str, tree: ast.Module, inside: set[int]) -> Iterator[Mutant]:
    """Each pipe endpoint moved by one node along each axis, where the coordinate is a literal and stays on the grid
    (an endpoint off the grid is refused by both, says nothing), and a unicast pipe's ends swapped."""
    grid = _grid(text)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "ttl.Pipe" and node.lineno in inside):
            continue
        ends = dict(zip(("src", "dst"), node.args, strict=False)) | {k.arg: k.value for k in node.keywords if k.arg}
        for role, end in ends.items():
            coords = end.elts if isinstance(end, ast.Tuple) else [end]
            for axis, c in enumerate(coords):
                consts: list[ast.Constant] = []
                if isinstance(c, ast.Constant) and type(c.value) is int:
                    consts = [c]
                elif isinstance(c, ast.Call) and ast.unparse(c.func) == "slice":
                    consts = [a for a in c.args if isinstance(a, ast.Constant) and type(a.value) is int]
                for k in consts:
                    for d in (-1, 1):
                        v = k.value + d
                        top = grid[axis] if grid is not None and axis < len(grid) else None
                        is_hi = isinstance(c, ast.Call) and len(c.args) > 1 and k is c.args[1]
                        if v < 0 or (top is not None and (v > top if is_hi else v >= top)):
                            continue
                        new = _replace(text, k, str(v))
                        yield Mutant("pipe endpoint", f"pipe {role} {ast.unparse(end)}: {k.value}->{v} @{node.lineno}",
                                     new)
        src, dst = ends.get("src"), ends.get("dst")
        if src is not None and dst is not None and "slice(" not in ast.unparse(dst) and src.lineno == dst.lineno:
            a, b = ast.unparse(src), ast.unparse(dst)
            first, second = sorted([src, dst], key=lambda n: n.col_offset)
            swapped = _replace(text, second, a if second is dst else b)
            swapped = _replace(swapped, first, b if first is src else a)
            yield Mutant("pipe endpoint", f"pipe ends swapped @{node.lineno}", swapped)


def mutants(text: str) -> list[Mutant]:
    """Every mutant of a source's text (module docstring), each once."""
    lines = text.split("\n")
    tree = ast.parse(text)
    inside = _operation_lines(tree)
    out: list[Mutant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "block_count" and isinstance(node.value, ast.Constant) \
                and type(node.value.value) is int and node.value.lineno in inside:
            k = node.value.value
            if k > 1:
                out.append(Mutant("block_count lowered", f"block_count {k}->{k - 1} @{node.value.lineno}",
                                  _replace(text, node.value, str(k - 1))))
            out.append(Mutant("block_count raised", f"block_count {k}->{k + 1} @{node.value.lineno}",
                              _replace(text, node.value, str(k + 1))))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
                and node.lineno in inside and node.args:
            stop = node.args[0] if len(node.args) == 1 else node.args[1]
            for d in ("+ 1", "- 1"):
                out.append(Mutant("loop bound off by one", f"range {d} @{node.lineno}",
                                  _replace(text, stop, f"{ast.unparse(stop)} {d}")))
    for i, line in enumerate(lines):
        if i + 1 in inside and re.fullmatch(r"\s*\w+\.wait\(\)\s*", line):
            out.append(Mutant("wait dropped", f"wait dropped @{i + 1}", "\n".join([*lines[:i], *lines[i + 1:]])))
    for node in ast.walk(tree):
        # a transfer's wait moved past the with that reserved (waited) its block: the block is pushed (popped)
        # before the transfer completed; the compiler adds no wait, the handle has one
        if not (isinstance(node, ast.With) and node.lineno in inside):
            continue
        for st in node.body:
            if isinstance(st, ast.Expr) and re.fullmatch(r"\w+\.wait\(\)", ast.unparse(st)) and len(node.body) > 1:
                end = node.end_lineno or node.lineno
                moved = [*lines[:st.lineno - 1], *lines[st.lineno:end], " " * node.col_offset + ast.unparse(st),
                         *lines[end:]]
                out.append(Mutant("wait past release", f"wait moved past the with @{st.lineno}", "\n".join(moved)))
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
                    at = min(drop) - 1
                    new.insert(at, " " * st.col_offset + "pass")
                out.append(Mutant("copy dropped", f"copy dropped @{st.lineno}", "\n".join(new)))
    out += _pipe_mutants(text, tree, inside)
    for i, (c, v) in enumerate(shape_literals(text)):
        for extra, why in ((TILE, "a tile more"), (TILE // 2, "half a tile more")):
            out.append(Mutant("shape not dividing", f"dim {i} {v}->{v + extra} ({why}) @{c.lineno}",
                              _set_dims(text, {i: v + extra})))
    seen: set[str] = {text}
    unique = []
    for m in out:
        if m.text not in seen:
            seen.add(m.text)
            unique.append(m)
    # two loops on one line (a comprehension's) make two mutants of one label: number them in source order
    count = Counter(m.label for m in unique)
    nth: Counter[str] = Counter()
    named = []
    for m in unique:
        if count[m.label] > 1:
            nth[m.label] += 1
            m = attrs.evolve(m, label=f"{m.label} #{nth[m.label]}")
        named.append(m)
    return named


# ------------------------------------------------------------------------------------------------ verdicts


@attrs.frozen
class Certified:
    """Certify's verdict on a file: ``code`` 0 proved, 1 refuted, 2 refused by the front end (``why``: its message),
    3 failed to prove; ``findings``: ``family/name: reason`` and the first TT-Lang line of each refutation."""

    code: int
    findings: tuple[str, ...] = ()
    why: str = ""
    #: a deadlock counterexample has an engine stuck at the ready wait of a pipe's sender (``PIPE_READY``)
    pipe_ready: bool = False
    #: the code at the simulator's shapes, where an example dimension is not a whole number of tiles (``padded``)
    padded: int | None = None

    @property
    def at_simulator(self) -> int:
        """Certify's code for the program the simulator runs."""
        return self.code if self.padded is None else self.padded


def padded(text: str) -> str | None:
    """``text`` with every example dimension rounded up to whole tiles, as the simulator's ``from_torch`` pads the
    tensors and reports the padded shape (``PARTIAL_TILE``); None when every dimension is whole tiles already."""
    lits = shape_literals(text)
    if all(v % TILE == 0 for _, v in lits):
        return None
    return _set_dims(text, {i: -(-v // TILE) * TILE for i, (_, v) in enumerate(lits)})


def _verdict(path: Path) -> Certified:
    v = _verdict_at(path)
    text = padded(path.read_text())
    if text is None:
        return v
    at = path.with_name("padded_" + path.name)
    at.write_text(text)
    return attrs.evolve(v, padded=_verdict_at(at).code)


def _verdict_at(path: Path) -> Certified:
    from verispatial.report.text import source_lines

    try:
        imps = import_file(str(path))
    except VerispatialError as e:
        return Certified(2, why=str(e)[:200])
    codes, findings, ready = [], [], False
    for imp in imps:
        rep = certify(imp.program)
        codes.append(rep.exit_code)
        for r in rep.results:
            if r.verdict.value == "refuted":
                where = source_lines(r.counterexample)[:1]
                findings.append(f"{r.family}/{r.name}: {r.reason[:140]}" + (f" [{where[0][:120]}]" if where else ""))
                ready = ready or _stuck_at_pipe_ready(imp.program, r.counterexample or {})
    return Certified(1 if 1 in codes else max(codes), tuple(findings), pipe_ready=ready)


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG), so a certify child does not
    outlive an interrupted run; elsewhere nothing."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def verdict(path: Path, cpu_seconds: float = 0.0) -> Certified:
    """Import ``path`` (every shape class) and certify it; with ``cpu_seconds``, in a forked child limited to that
    much CPU time (``RLIMIT_CPU``: the same budget however loaded the machine is), where running out is code 3 (failed
    to prove) saying so. A refutation's replay on a large grid can take minutes (a matmul of 48 engines at 1024)."""
    if cpu_seconds <= 0:
        return _verdict(path)
    import os
    import pickle
    import resource

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: certify, send the verdict, leave without cleanup
        os.close(r)
        _die_with_parent()
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 5))
            data = pickle.dumps(_verdict(path))
        except BaseException as e:
            data = pickle.dumps(Certified(4, why=f"{type(e).__name__}: {e}"[:200]))
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    if not data:
        return Certified(3, why=f"certify ran out of its {cpu_seconds:.0f} CPU seconds")
    out: Certified = pickle.loads(data)
    return out


def classify(v: Certified, sim: SimRun) -> str:
    """The pair's class, the claims judged on certify's verdict for the program the simulator runs
    (``Certified.at_simulator``: at its padded shapes where a dimension is not whole tiles): ``sim-unsupported`` (the
    simulator on Python 3.11 refuses a copy without its wait: it injects waits only on 3.12+), ``disagree`` (certify
    proves and the simulator does not run clean: a deadlock or an error of its own), ``agree-refuted`` (the simulator
    deadlocks, certify refutes), ``both-reject`` (certify refutes, the simulator stops on an error of its own, e.g. a
    read past the tensor), ``certify-only`` (certify refutes, at the simulator's shapes or at the file's own, and the
    simulator runs clean), ``agree-proved`` (certify proves, at both, and the simulator runs clean), ``refused`` (the
    front end refuses it by name), ``certify-undecided`` (failed to prove: not a proof, and not the refutation a
    simulator deadlock asks for), ``certify-error``, or ``other (v, outcome)`` (a simulator timeout)."""
    if sim.outcome == "error" and "requires Python 3.12" in sim.message:
        return "sim-unsupported"
    vs = v.at_simulator
    rest = {2: "refused", 3: "certify-undecided", 4: "certify-error"}
    if vs == 0 and not sim.clean:
        return "disagree"
    if sim.outcome in ("deadlock", "error"):
        return rest.get(vs, "agree-refuted" if sim.outcome == "deadlock" else "both-reject")
    if sim.clean:
        if 1 in (v.code, vs):
            return "certify-only"
        return "agree-proved" if v.code == vs == 0 else rest.get(max(v.code, vs), f"other ({v.code})")
    return f"other ({vs}, {sim.outcome})"


@attrs.frozen
class Confirmation:
    """A certify-only mutant's defect shown by the simulator at ``probe``: its ``outcome`` (``deadlock``, ``error``,
    ``mismatch``: the file's result check with the block math; or ``unwritten``: output tiles its run never wrote)
    and message, and certify's verdict on the probe file."""

    probe: Probe
    outcome: str
    message: str
    certify: int


def shows_defect(run: SimRun, dry_run: bool) -> bool:
    """The simulator shows a defect: a deadlock, an error of its own (not the 3.11 refusal of a copy without its
    wait), or with the block math on the file's result check failing (its ``assert``: any other exception of the
    check, e.g. comparing a tile-padded output with an unpadded expectation, says nothing)."""
    if run.outcome == "error":
        return "requires Python 3.12" not in run.message
    return run.outcome == "deadlock" or (run.outcome == "mismatch" and not dry_run
                                         and run.exception == "AssertionError")


def unwritten_text(run: SimRun) -> str:
    """The tiles the simulator's run left unwritten, as one phrase."""
    return "; ".join(f"the kernels left {n} of {r * c} tiles of a {r}x{c}-tile tensor unwritten, the first {first}"
                     for r, c, n, first in run.unwritten)


class Differential:
    """Runs files by the simulator and certify in a scratch directory, caching the unmutated sources' runs at each
    probe; ``pairs`` keeps every (file, probe, certify, outcome) checked against the claims."""

    def __init__(self, sim: Simulator, tmp: Path, timeout: float = 300.0, cpu_seconds: float = 0.0) -> None:
        self.sim = sim
        self.tmp = tmp
        self.timeout = timeout
        self.cpu_seconds = cpu_seconds
        self._base: dict[tuple[str, Probe], SimRun] = {}
        self.disagreements: list[str] = []
        self.n = 0

    def file(self, text: str) -> Path:
        self.n += 1
        d = self.tmp / str(self.n)
        d.mkdir()
        f = d / "op.py"
        f.write_text(text)
        return f

    def run(self, text: str, probe: Probe) -> tuple[Certified, SimRun]:
        f = self.file(text)
        return verdict(f, self.cpu_seconds), self.sim.run(f, dry_run=probe.dry_run, scheduler=probe.scheduler,
                                                          timeout=self.timeout)

    def base(self, name: str, text: str, probe: Probe) -> SimRun | None:
        """The unmutated source at ``probe`` (None when the probe does not apply)."""
        key = (name, probe)
        if key not in self._base:
            t = scaled(text, probe.scale, probe.dim)
            if t is None:
                return None
            self._base[key] = self.sim.run(self.file(t), dry_run=probe.dry_run, scheduler=probe.scheduler,
                                           timeout=self.timeout)
        return self._base[key]

    def confirm(self, name: str, base_text: str, m: Mutant) -> tuple[Confirmation | None, list[str]]:
        """The first probe at which the simulator shows ``m``'s defect (``shows_defect``) while the unmutated source
        runs clean there; failing that, the first at which the simulator's run leaves tiles of an output unwritten
        (observed on its copies, ``ttlang_sim.SimRun.unwritten``: ``outcome`` "unwritten") where the unmutated
        source's writes every tile. With what each probe tried gave."""
        tried: list[str] = []
        observed: Confirmation | None = None
        for p in PROBES:
            t = scaled(m.text, p.scale, p.dim)
            b = self.base(name, base_text, p)
            if t is None or b is None:
                continue
            if not (b.outcome == "ok" or (p.dry_run and b.clean)):
                tried.append(f"{p.label}: the unmutated source is not clean there ({b.outcome})")
                continue
            v, run = self.run(t, p)
            kind = classify(v, run)
            if kind == "disagree":
                self.disagreements.append(f"{name} {m.label} at {p.label}: certify={v.code} sim={run.outcome}")
            tried.append(f"{p.label}: {run.outcome} (certify {v.code})")
            if shows_defect(run, p.dry_run):
                return Confirmation(p, run.outcome, run.message, v.code), tried
            if observed is None and run.unwritten and not b.unwritten:
                observed = Confirmation(p, "unwritten", unwritten_text(run), v.code)
        return observed, tried


#: Why no probe can confirm a refutation whose counterexample has an engine stuck at a pipe's ready wait.
PIPE_READY = ("the sender waits for its receivers' posts (TT-Lang's receiver-post protocol: tt-lang "
              "lib/Dialect/TTL/Transforms/PipeLowering.cpp lowerPipeTransferSend waits on the ready counter for every "
              "receiver, lowerPipeTransferPost increments it), which never come in this order; the simulator's pipe "
              "send waits for no receiver (ttl/sim/copyhandlers.py BlockToPipeHandler.transfer queues the block, its "
              "can_wait is always True), so no shape or schedule of the simulator blocks there")


def _op_at(ops: tuple[Any, ...], path: list[int]) -> Any:
    op: Any = None
    for i in path:
        if not 0 <= i < len(ops):
            return None
        op = ops[i]
        ops = getattr(op, "body", ())
    return op


def _stuck_at_pipe_ready(program: Program, cex: dict[str, Any]) -> bool:
    """A deadlock counterexample with an engine stuck at a pipe sender's ready wait (a ``SemWait`` on a semaphore of
    role ``MCAST_READY``), read from its stuck positions and the program's ops, never from its wording."""
    from verispatial.ir.core import SemRole
    from verispatial.ir.ops import SemWait

    if cex.get("kind") != "deadlock":
        return False
    programs = {ep.key: ep for ep in program.programs}
    for st in cex.get("stuck", []):
        pos = st.get("position", {})
        ep = programs.get(pos.get("engine", ""))
        op = _op_at(ep.ops, list(pos.get("path", []))) if ep is not None else None
        if isinstance(op, SemWait) and program.semaphores[op.sem].role is SemRole.MCAST_READY:
            return True
    return False


#: Why no probe can confirm an unwritten output of a tensor whose dimensions are not whole tiles.
PARTIAL_TILE = ("a dimension is not a whole number of tiles: ttnn pads the tensor to tiles but its shape stays the "
                "logical one (ttnn 0.81.1 ttnn/core.py lines 86-96, has_tile_padding: shape vs padded_shape), so the "
                "operation's shape // TILE leaves the partial tile unwritten, as certify says; the simulator pads the "
                "data and reports the padded shape (ttl/sim/ttnnsim.py: from_torch pads with _pad_to_tile_alignment, "
                "Tensor.shape is the padded tensor's), so its kernels count the partial tile as a whole one and write "
                "it; at a shape of whole tiles there is no partial tile to miss")


def unconfirmable(v: Certified) -> str:
    """Why the simulator cannot show certify's refutation ``v`` at any probe: ``PIPE_READY`` when a deadlock's engine
    is stuck at the ready wait of a pipe's sender; ``PARTIAL_TILE`` when certify refutes the file at its own shapes
    and proves it at the simulator's padded ones (the program the simulator runs is another); "" when no reason is
    known (the mutant needs a look)."""
    if v.pipe_ready:
        return PIPE_READY
    if v.code == 1 and v.padded == 0:  # refuted at the device's shapes, proved at the simulator's padded ones
        return PARTIAL_TILE
    return ""


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    import ttlang_sim as S

    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="at most this many mutants per source (0: all)")
    ap.add_argument("--budget", type=float, default=0.0, help="stop after this many wall seconds (0: none)")
    ap.add_argument("--json", type=Path, help="write every file's result here")
    ap.add_argument("--certify-cpu", type=float, default=120.0,
                    help="CPU seconds each certify may take (past it: failed to prove, said so)")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    paths = S.available()
    if paths is None:
        print("the simulator cannot run here (install verispatial[ttlang] or set VERISPATIAL_TTLANG_SIM)")
        return 2
    import pytest
    from test_frontend_ttlang import tutorials_dir

    try:
        tut = tutorials_dir()
    except pytest.skip.Exception as e:
        print(f"offline: {e}")
        return 2
    start = time.monotonic()
    tally: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    only: list[tuple[str, Mutant, Certified, Confirmation | None, list[str]]] = []
    primary = Probe(1, None, "fair", True)
    with tempfile.TemporaryDirectory() as tmp, S.Simulator(paths) as sim:
        diff = Differential(sim, Path(tmp), cpu_seconds=args.certify_cpu)
        for name in SOURCES:
            if args.names and not any(name.startswith(a) for a in args.names):
                continue
            base = source_text(name, tut)
            files = [Mutant("as shipped", "as shipped", base)]
            if name not in AS_SHIPPED_ONLY:
                files += mutants(base)[: args.limit or None]
            for m in files:
                if args.budget and time.monotonic() - start > args.budget:
                    break
                t0 = time.process_time() + _children_cpu()
                v, run = diff.run(m.text, primary)
                cert_s = time.process_time() + _children_cpu() - t0  # certify runs in a child (verdict)
                kind = classify(v, run)
                tally[kind] += 1
                if m.kind != "as shipped":
                    tally["mutants"] += 1
                line = f"{name:52} {m.label:44} certify={v.code} sim={run.outcome:9} {cert_s:5.2f}s {run.cpu:5.2f}s  {kind}"
                print(line + (f"  [{run.message[:70]}]" if run.outcome == "error" else ""), flush=True)
                row: dict[str, Any] = {"source": name, "kind": m.kind, "label": m.label, "certify": v.code,
                                       "certify_padded": v.padded, "sim": run.outcome, "class": kind,
                                       "findings": list(v.findings), "refusal": v.why}
                if kind == "disagree":
                    diff.disagreements.append(line)
                if kind == "certify-only":
                    conf, tried = diff.confirm(name, base, m)
                    only.append((name, m, v, conf, tried))
                    row["confirmed"] = None if conf is None else {"probe": conf.probe.label, "sim": conf.outcome,
                                                                  "message": conf.message, "certify": conf.certify}
                    row["tried"] = tried
                    if conf is None:
                        row["why"] = unconfirmable(v)
                    print(f"    -> {'confirmed at ' + conf.probe.label + ': ' + conf.outcome if conf else 'NOT confirmed'}"
                          + (f" ({conf.message[:80]})" if conf else ""), flush=True)
                rows.append(row)
    confirmed = sum(1 for *_, c, _ in only if c is not None)
    how = Counter(c.outcome for *_, c, _ in only if c is not None)
    explained = sum(1 for r in rows if r.get("confirmed", 0) is None and r.get("why"))
    print(f"\n{tally['mutants']} mutants ({len(rows)} files with the sources as shipped): "
          + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if k != "mutants"))
    print(f"certify-only {len(only)}: confirmed {confirmed} (" + ", ".join(f"{k} {v}" for k, v in sorted(how.items()))
          + f"), not confirmable with the reason known {explained}, unexplained {len(only) - confirmed - explained}")
    for name, m, v, conf, tried in only:
        print(f"  {name} {m.label}: " + (f"confirmed at {conf.probe.label}: {conf.outcome} ({conf.message[:100]})"
                                          if conf else "NOT confirmed"))
        if conf is None:
            for f in v.findings[:2]:
                print(f"      certify: {f}")
            why = next((r.get("why", "") for r in rows if r["source"] == name and r["label"] == m.label), "")
            print(f"      why: {why or 'NOT EXPLAINED: look at this mutant'}")
            for t in tried:
                print(f"      tried {t}")
    for r in rows:
        if r["class"] == "refused" and r["sim"] == "deadlock":
            print(f"  refused by the front end where the simulator deadlocks: {r['source']} {r['label']}: {r['refusal']}")
    for line in diff.disagreements:
        print("DISAGREE", line)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "tally": dict(tally), "confirmed": confirmed,
                                         "confirmed_by": dict(how), "explained": explained,
                                         "disagreements": diff.disagreements}, indent=1))
    return 1 if diff.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
