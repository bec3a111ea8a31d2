"""Assembling program.json from a TT-Lang operation: one engine program per node of the grid and kernel, a buffer
per dataflow buffer and node, the operation's arguments as tensors, and one program per shape class.

Engines: the first ``@ttl.datamovement()`` kernel runs on the reader RISC, the second on the writer RISC, the
``@ttl.compute()`` kernel on the compute engine (the vendor's two data-movement cores and the TRISCs).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import attrs

from verispatial.errors import InvalidProgram, ParseError
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.expr import DfbV, NetV, TensorV, is_num
from verispatial.frontends.ttlang.lower import KernelLowering, TileLayout, unwaited_copies
from verispatial.frontends.ttlang.pipes import PipePlan, check_ends, grid_sites
from verispatial.frontends.ttlang.refusals import refuse
from verispatial.frontends.ttlang.shapes import MAX_CLASSES, example_shapes, shape_value
from verispatial.frontends.ttlang.source import BodyReader, Kernel, SourceFile, grid_of, module_constants, pick_operation
from verispatial.ir.core import Engine, Role, Site
from verispatial.ir.ops import SemInc, SemIncMcast, SemSet, SemWait, TripCount
from verispatial.ir.program import Buffer, BufferAt, EngineProgram, Program, Semaphore, Tensor, Trip, walk
from verispatial.ir.serialize import schema_violations
from verispatial.ir.target import Target
from verispatial.ir.validate import validate


@attrs.frozen
class Imported:
    """One shape class of an operation and its program; ``classes`` says which values of each ``--range``
    parameter it covers (empty without ``--range``)."""

    program: Program
    classes: tuple[V.SymClass, ...]

    @property
    def label(self) -> str:
        return ", ".join(str(c) for c in self.classes) or "the given shapes"


def _sized(file: str, t: TensorV, tile: tuple[int, int], classes: Mapping[str, V.SymClass]
           ) -> tuple[TileLayout, tuple[int, int], TripCount | None]:
    """Argument ``t`` as program.json declares it: its tile numbering, its shape there (elements, at the trips' max)
    and, when a ``--range`` changes one of its dimensions, that dimension's tiles as a trip count
    (``Tensor.trip_rows``: a tensor of that many tile rows at each value, so ``bounds`` and ``output-unwritten`` are
    asked at every value's own shape). Rows are program.json's first dimension; a tensor whose columns the range
    changes is numbered column-major and declared transposed (``TileLayout``). Raises ``ParseError`` for a tensor
    both of whose dimensions, or one dimension by two parameters, a range changes (its tile addresses would not be
    affine), and ``values.Split`` where the tile count needs a finer class."""
    rows, cols = t.shape
    varies = [isinstance(d, V.Aff) and bool(d.syms) for d in (rows, cols)]
    if all(varies):
        raise ParseError("--range", f"a range changes both dimensions of {t.name}: its tile addresses would not be "
                                    "affine; range one dimension and give the other with --shape")
    n_rows, n_cols = (V.floordiv(V.add(d, size - 1), size, classes) for d, size in zip((rows, cols), tile, strict=True))
    if not varies[1]:
        lay, shape, grows = TileLayout(V.at_max(n_cols, classes)), (V.at_max(rows, classes), V.at_max(cols, classes)), \
            n_rows
    else:
        lay, shape, grows = TileLayout(V.at_max(n_rows, classes), transposed=True), \
            (V.at_max(cols, classes), V.at_max(rows, classes)), n_cols
    if not (isinstance(grows, V.Aff) and grows.syms):
        return lay, shape, None
    if len(grows.syms) != 1 or grows.terms:
        raise ParseError("--range", f"a dimension of {t.name} depends on two range parameters "
                                    f"({', '.join(s for s, _ in grows.syms)}): range one of them")
    (sym, coef), = grows.syms
    if coef < 1:
        raise ParseError("--range", f"a dimension of {t.name} shrinks as {sym} grows: not modelled")
    # ceil(d / tile) is affine in the class (values.floordiv split it otherwise): that many tiles at each value
    return lay, shape, TripCount(sym, coef, grows.const)


def build(src: SourceFile, operation: str | None, shapes: Mapping[str, tuple[str, ...]],
          classes: Mapping[str, V.SymClass], target: Target, devices: int | None = None) -> Program:
    """The program of one shape class (``classes`` fixed); ``devices``: the machine's device count where the example
    asks for it (``shapes.example_shapes``). Raises ``values.Split`` when the class must be cut, ``SourceRefused`` /
    ``ParseError`` for what cannot be read."""
    op = pick_operation(src, operation)
    consts = module_constants(src, classes)
    params = [a.arg for a in op.args.args]
    for name in shapes:
        if name not in params:
            raise ParseError("--shape", f"{name} is not an argument of {op.name} ({', '.join(params)})")
    given: dict[str, tuple[Any, ...]] = {k: shape_value(v, classes, "--shape") for k, v in shapes.items()}
    used = {d for dims in shapes.values() for d in dims}
    if len(given) < len(params):
        found, mesh, assigned = example_shapes(src.path, src.tree, op, classes, set(src.modules), devices)
        if mesh is not None and mesh.unknown:
            # each device runs the operation on its own shard: refuse rather than read the global shapes
            refuse(src.path, mesh.node, f"ttnn.{ast.unparse(mesh.node.func).rsplit('.', 1)[-1]}",
                   f"the example spreads its tensors over a mesh of devices, one shard per device; {mesh.unknown} "
                   "(or every tensor's per-device shape with --shape)")
        used |= assigned
        for p in params:
            if p not in given and p in found and all(is_num(d) for d in found[p]):
                given[p] = found[p]
    for name in classes:
        if name not in used:
            raise ParseError("--range", f"{name} is neither a dimension of a --shape nor a variable the example "
                                        "call's shapes are built from")
    missing = [p for p in params if p not in given]
    if missing:
        raise ParseError("--shape", f"no shape for {', '.join(missing)} of {op.name}: give --shape "
                                    f"{missing[0]}=ROWSxCOLS (the file's example call does not fix it)")
    for p, shape in given.items():
        if len(shape) != 2:
            raise ParseError("--shape", f"{p} has {len(shape)} dimensions: only 2-dimensional tensors are lowered")
        for d in shape:
            if V.sign_of(d, classes) <= 0:
                raise ParseError("--shape", f"{p} has a dimension that is not positive")
    grid = grid_of(src, op, target.mesh)
    tensors = {p: TensorV(p, given[p]) for p in params}
    env: dict[str, Any] = {**consts, **tensors}
    body = BodyReader(src, env, classes, grid)
    body.run(op.body)
    # name each buffer after its variable, in the environment the kernels see
    renamed = {d.index: attrs.evolve(d, name=body.dfb_names.get(d.index, d.name)) for d in body.dfbs}
    env = {k: renamed[v.index] if isinstance(v, DfbV) else v for k, v in body.env.items()}
    dfbs = [renamed[d.index] for d in body.dfbs]
    dms = [k for k in body.kernels if k.kind == "datamovement"]
    cps = [k for k in body.kernels if k.kind == "compute"]
    if len(dms) > 2:
        refuse(src.path, dms[2].node, f"def {dms[2].name}", "a third @ttl.datamovement() kernel: a node has two "
                                                            "data-movement engines")
    if len(cps) > 1:
        refuse(src.path, cps[1].node, f"def {cps[1].name}", "a second @ttl.compute() kernel: a node has one compute "
                                                            "engine")
    engines = [(k, e) for k, e in zip(dms, (Engine.READER, Engine.WRITER), strict=False)] + [(k, Engine.COMPUTE) for k in cps]
    if len(dfbs) > target.max_cbs:
        refuse(src.path, None, "make_dataflow_buffer_like", f"{len(dfbs)} dataflow buffers, more than the "
                                                            f"target's {target.max_cbs}")
    sized = {p: _sized(src.path, t, target.tile, classes) for p, t in tensors.items()}
    layouts = {p: x[0] for p, x in sized.items()}
    nodes = grid_sites(grid)
    sites = [s for _, s in nodes]
    plan = PipePlan(body.nets, grid, src.path)
    buffers: list[Buffer] = []
    memory: list[BufferAt] = []
    for coords, s in nodes:
        off = target.reserved_base
        # on a mesh of devices a buffer's name says its device, as its tensors' do (lower.device_suffix)
        dev = "" if len(grid) == 2 else f"@{coords[0]},{coords[1]}"
        for d in dfbs:
            b = Buffer(len(buffers), d.name + dev, s, d.index, d.tiles, d.block_count, d.tensor.dtype)
            size = d.block_count * d.tiles * target.bytes_per_tile(d.tensor.dtype)
            memory.append(BufferAt(b.id, off, size))
            off += -(-size // target.alignment) * target.alignment
            buffers.append(b)
    first = {s: i * len(dfbs) for i, s in enumerate(sites)}  # buffer id of dfb 0 at each site
    programs: list[EngineProgram] = []
    written: set[str] = set()
    uses: dict[tuple[int, int], dict[str, set[tuple[int, str]]]] = {}
    read: set[str] = set()
    active = active_nodes(captured_nets(body.kernels, body.env))
    unwaited = {id(k.node): unwaited_copies(k.node) for k, _ in engines}
    for coords, s in nodes:
        if active is not None and coords not in active:
            continue  # a node no pipe names runs no kernel (active_nodes); its buffers exist, unused
        for k, engine in engines:
            low = KernelLowering(src.path, src.lines, env, classes, set(src.modules), target, coords, grid,
                                 engine is Engine.COMPUTE, layouts, plan, body.nets, unwaited[id(k.node)])
            low.run(k.node.body)
            ops, sources = low.finish()
            ops = _at_site(ops, first[s])
            written |= low.written
            read |= low.read_tensors
            for key, roles in low.pipe_uses.items():
                for role, bs in roles.items():
                    uses.setdefault(key, {}).setdefault(role, set()).update(bs)
            programs.append(EngineProgram(s, engine, ops, sources=sources))
    check_ends(src.path, uses, body.nets)
    # An argument no kernel reads is an output, written or not (an input nobody reads has no purpose): so a writer
    # that drops its only copy leaves an output unwritten (refuted) rather than turning the tensor into an input.
    written |= {p for p in params if p not in read}
    trips = tuple(Trip(c.name, c.top) for c in classes.values() if c.top > 0)
    tens = []
    suffixes = [""] if len(grid) == 2 else [f"@{r},{c}" for r in range(grid[0]) for c in range(grid[1])]
    for p in params:
        _lay, shape, trip_rows = sized[p]
        for dev in suffixes:  # a mesh of devices: one shard of each tensor per device (lower.device_suffix)
            tens.append(Tensor(p + dev, shape, tensors[p].dtype, Role.OUTPUT if p in written else Role.INPUT,
                               trip_rows=trip_rows))
    cls = "".join(f".{c.name}{c.base}+{c.m}t" for c in classes.values() if c.top > 0) or "".join(
        f".{c.name}{c.base}" for c in classes.values())
    return Program(name=f"{op.name.lstrip('_') or op.name}{cls}", target=target, tensors=tuple(tens),
                   buffers=tuple(buffers), semaphores=_live(plan, programs), groups=tuple(plan.groups), trips=trips,
                   programs=tuple(programs), memory=tuple(memory))


def captured_nets(kernels: list[Kernel], env: Mapping[str, Any]) -> list[NetV]:
    """The pipe nets some kernel refers to (a name of the operation body a kernel, or a function in it, reads), in
    net order: the nets TT-Lang's compiler and simulator find by walking the kernels' closures (tt-lang-sim 1.1.6
    ``ttl/sim/pipe.py`` ``discover_pipe_nets_from_closures``: "the compiler's _build_operation_pipenets does the
    same"); a net no kernel uses does not restrict the nodes that run."""
    names = {n.id for k in kernels for n in ast.walk(k.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    found: dict[int, NetV] = {}
    for name, v in env.items():
        for x in (v if isinstance(v, tuple) else (v,)):
            if name in names and isinstance(x, NetV):
                found[x.index] = x
    return [found[i] for i in sorted(found)]


def active_nodes(nets: list[NetV]) -> set[tuple[int, ...]] | None:
    """The nodes whose kernels run: with pipe nets, those some pipe of some net names as its source or a destination;
    None (every node) without. TT-Lang's compiler guards the kernels with an ``scf.if`` on this set (tt-lang issue
    #804: "the compiler evaluates the body once at compile time and guards the kernels with scf.if"), and the
    simulator skips the others ("Inactive nodes skip every kernel, mirroring the compiler's scf.if guard",
    tt-lang-sim 1.1.6 ``ttl/sim/program.py`` lines 261-272, from ``OperationPipeNets.active_node_set`` in
    ``ttl/_pipenets/__init__.py``). A node outside it writes nothing, so outputs it was to write stay unwritten, and
    what its kernels would wait for is never a deadlock."""
    if not nets:
        return None
    return {c for net in nets for p in net.pipes for c in (p.src, *p.dests())}


def _live(plan: PipePlan, programs: list[EngineProgram]) -> tuple[Semaphore, ...]:
    """The pipe semaphores, each with words only at the sites whose ops use it (a pipe no kernel copies through
    takes no word)."""
    used: dict[int, set[Site]] = {}
    for ep in programs:
        for op in walk(ep.ops):
            if isinstance(op, (SemWait, SemSet)):
                used.setdefault(op.sem, set()).add(ep.site)
            elif isinstance(op, SemIncMcast):
                used.setdefault(op.sem, set()).update(plan.groups[op.group].destinations())
            elif isinstance(op, SemInc):
                used.setdefault(op.sem, set()).add(op.at)
    out = []
    for sem in plan.semaphores:
        sites = tuple(s for s in sem.sites if s in used.get(sem.id, set()))
        out.append(attrs.evolve(sem, sites=sites or sem.sites))
    return tuple(out)


def _at_site(ops: tuple[Any, ...], first: int) -> tuple[Any, ...]:
    """Ops lowered with dataflow-buffer indices, renumbered to the buffer ids of one site."""
    from verispatial.ir.ids import Renaming

    return ops if first == 0 else Renaming(buffer=lambda i: first + i).ops(ops)


def import_operation(src: SourceFile, operation: str | None, shapes: Mapping[str, tuple[str, ...]],
                     ranges: Mapping[str, V.SymClass], target: Target, devices: int | None = None) -> list[Imported]:
    """Every shape class of the operation and its program: the ``--range`` parameters' classes cut wherever a
    floor division or a comparison needs it (``values.Split``), at most ``MAX_CLASSES``; ``devices`` as ``build``
    takes it."""
    todo: list[dict[str, V.SymClass]] = [dict(ranges)]
    out: list[Imported] = []
    while todo:
        classes = todo.pop(0)
        try:
            program = build(src, operation, shapes, classes, target, devices)
        except V.Split as e:
            todo[:0] = [{**classes, e.name: part} for part in e.parts]
            if len(out) + len(todo) > MAX_CLASSES:
                raise ParseError("--range", f"the shapes split into more than {MAX_CLASSES} classes (floor and ceil "
                                            f"of {e.name}): give a STEP (NAME=LO:HI:STEP) that the block and grid "
                                            "divide") from None
            continue
        # The program goes through the same checks as a loaded program.json: a shape range past what the model
        # counts (32-bit trips, tensor sizes) is bad input, not a proof about numbers the encodings wrap.
        vs = validate(program) or schema_violations(program)
        if vs:
            raise InvalidProgram(vs)
        out.append(Imported(program, tuple(classes.values())))
    return out

