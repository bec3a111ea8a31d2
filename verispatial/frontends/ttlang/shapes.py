"""Shapes of a TT-Lang operation's tensors: from ``--shape T=D0xD1``, else from the file's own example call (the
literal shapes the tutorials build with ``torch.randn((M, K))`` and pass through their wrapper), with
``--range NAME=LO:HI[:STEP]`` making a shape parameter (a module variable of the example, or a name used in a
``--shape`` dimension) symbolic: a trip of the produced program (``values.SymClass``).

The example call is read, never run: module statements are evaluated with unknown values where the reader cannot
know them (devices, data), functions defined in the module are followed into, and the first call of the operation
gives the shapes of its arguments.

An example that spreads its tensors over a mesh of devices (the multi-device tutorials: ``ttnn.open_mesh_device``,
``from_torch(t, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=d))``) runs the operation once per device on that
device's shard (SPMD): the shapes read are the per-device ones, ``t``'s dimension ``d`` divided by the device count
(``ShardTensorToMesh`` splits a tensor along ``d`` so that "each device receives M/n_devices rows", tt-lang-sim 1.1.6
``ttl/tutorials/matmul/step_5_multidevice_shard_m.py`` lines 15-16; in ttnn 0.81.1 it is
``ttnn.shard_tensor_to_mesh_mapper``, ``ttnn/distributed/distributed.py`` line 731; ``ReplicateTensorToMesh`` gives
every device the whole tensor). The count is the mesh's, ``ttnn.MeshShape(rows,
cols)``; where the example takes it from the machine (``ttnn.GetNumAvailableDevices()``) it is ``--devices N``, else
the shapes are unknown and the example is refused at its mesh.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from verispatial.errors import ParseError, SourceRefused, VerispatialError
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.expr import UNKNOWN, ApiV, Evaluator, FuncV, TensorV, builtin, is_num
from verispatial.frontends.ttlang.refusals import snippet

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")
_TORCH_MAKERS = {"randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange"}
#: ttnn calls that place tensors on a mesh of devices: the operation then sees one shard per device.
_MESH = {"open_mesh_device", "ShardTensorToMesh", "ReplicateTensorToMesh", "ShardTensor2dMesh"}
_PASS_THROUGH = {"from_torch", "to", "float", "contiguous", "bfloat16", "clone"}
#: Most shape classes one source may split into before it is refused (each is a program to certify).
MAX_CLASSES = 64


def parse_ranges(specs: Sequence[str]) -> dict[str, V.SymClass]:
    """``NAME=LO:HI[:STEP]`` each: the parameter takes ``LO, LO+STEP, ..`` up to ``HI``. ``ParseError`` naming
    ``--range`` for a malformed one."""
    out: dict[str, V.SymClass] = {}
    for s in specs:
        name, eq, rest = s.partition("=")
        parts = rest.split(":")
        if not eq or not _NAME.match(name) or len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
            raise ParseError("--range", f"{s!r}: expected NAME=LO:HI or NAME=LO:HI:STEP with integers LO <= HI")
        lo, hi = int(parts[0]), int(parts[1])
        step = int(parts[2]) if len(parts) == 3 else 1
        if lo > hi or step < 1 or lo < 1:
            raise ParseError("--range", f"{s!r}: expected 1 <= LO <= HI and STEP >= 1")
        if name in out:
            raise ParseError("--range", f"{name} given twice")
        out[name] = V.SymClass(name, step, lo, (hi - lo) // step)
    return out


def parse_shapes(specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``TENSOR=D0xD1`` each (a dimension an integer or a ``--range`` name): the dimensions as written."""
    out: dict[str, tuple[str, ...]] = {}
    for s in specs:
        name, eq, rest = s.partition("=")
        dims = tuple(rest.split("x"))
        if not eq or not _NAME.match(name) or not dims or not all(d.isdigit() or _NAME.match(d) for d in dims):
            raise ParseError("--shape", f"{s!r}: expected TENSOR=D0xD1 (integers or --range names)")
        if name in out:
            raise ParseError("--shape", f"{name} given twice")
        out[name] = dims
    return out


def shape_value(dims: tuple[str, ...], classes: Mapping[str, V.SymClass], where: str) -> tuple[Any, ...]:
    """Dimensions as values: integers, or a ``--range`` parameter's affine form in its class."""
    out: list[Any] = []
    for d in dims:
        if d.isdigit():
            out.append(int(d))
        elif d in classes:
            out.append(sym_value(classes[d]))
        else:
            raise ParseError(where, f"dimension {d!r} is neither an integer nor a --range name")
    return tuple(out)


def sym_value(c: V.SymClass) -> int | V.Aff:
    """The parameter of class ``c`` as a value: ``m * t + base``."""
    return c.base if c.top == 0 else V.Aff(c.base, ((c.name, c.m),))


@attrs.frozen
class MeshV:
    """A mesh of devices (``ttnn.MeshShape``, ``ttnn.open_mesh_device``): its device count, None when not known
    statically."""

    devices: int | None


@attrs.frozen
class MapperV:
    """A ttnn mesh mapper: ``ShardTensorToMesh(mesh, dim=d)`` (``dim`` d) or ``ReplicateTensorToMesh(mesh)`` (``dim``
    None) over a mesh of ``devices`` (None: unknown); ``known`` False for a mapper that is not read
    (``ShardTensor2dMesh``)."""

    devices: int | None
    dim: int | None
    known: bool = True


@attrs.frozen
class MeshUse:
    """How the example spreads tensors over a mesh of devices: the first call that opens or uses one (``node``), and
    why the per-device shapes are not known (``unknown``: empty when they are)."""

    node: ast.Call
    unknown: str = ""


class _ExampleReader(Evaluator):
    """Evaluates module statements leniently: what it cannot know is ``UNKNOWN``."""

    def __init__(self, file: str, tree: ast.Module, op_name: str, classes: Mapping[str, V.SymClass],
                 modules: set[str], env: dict[str, Any], devices: int | None = None) -> None:
        super().__init__(file, env, classes, modules)
        self.devices = devices
        self.tree = tree
        self.op_name = op_name
        self.found: dict[str, Any] | None = None
        self.op_params: list[str] = []
        self.depth = 0
        #: the first call that opens or uses a mesh of devices, and why its per-device shapes are unknown
        self.mesh: ast.Call | None = None
        self.unknown_split = ""
        #: the example asked the machine for its device count (``--devices`` answers)
        self.asked_devices = False
        #: the --range parameters the example assigns
        self.assigned: set[str] = set()

    def unknown_name(self, node: ast.Name) -> Any:
        return UNKNOWN

    def refuse_value(self, node: ast.AST, what: str) -> Any:
        return UNKNOWN

    def ev(self, node: ast.expr) -> Any:
        try:
            return super().ev(node)
        except (SourceRefused, V.NotAffine):
            return UNKNOWN

    def call(self, node: ast.Call, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(fn, tuple) and len(fn) == 3 and fn[0] == "method":
            return fn[1] if fn[2] in _PASS_THROUGH and isinstance(fn[1], TensorV) else UNKNOWN
        if isinstance(fn, ApiV):
            last = fn.name.rsplit(".", 1)[-1]
            if fn.name.startswith("ttnn.") and last in _MESH and self.mesh is None:
                self.mesh = node
            if fn.name.startswith("ttnn."):
                mesh = self._mesh_call(node, last, args, kwargs)
                if mesh is not None:
                    return mesh
            if fn.name.startswith("builtins."):
                return builtin(self, node, last, args) if last != "print" else None
            if fn.name.startswith("torch.") and last in _TORCH_MAKERS:
                shape = kwargs.get("size", args[0] if args else None)
                if isinstance(shape, tuple) and all(is_num(d) for d in shape):
                    return TensorV("", shape)
                if args and all(is_num(a) for a in args):
                    return TensorV("", tuple(args))
                return UNKNOWN
            if last in _PASS_THROUGH and args and isinstance(args[0], TensorV):
                if "mesh_mapper" in kwargs:
                    return self._shard(node, args[0], kwargs["mesh_mapper"])
                return args[0]
            return UNKNOWN
        if isinstance(fn, FuncV):
            if fn.node.name == self.op_name:
                if self.found is None:
                    self.found = dict(zip(self.op_params, args, strict=False))
                return None
            if self.depth > 20:
                return UNKNOWN
            local: dict[str, Any] = {**self.env}
            params = [a.arg for a in fn.node.args.args]
            local.update(zip(params, args, strict=False))
            local.update({k: v for k, v in kwargs.items() if k in params})
            saved, self.env = self.env, local
            self.depth += 1
            try:
                return self.run(fn.node.body)
            finally:
                self.env = saved
                self.depth -= 1
        return UNKNOWN

    def _mesh_call(self, node: ast.Call, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """The ttnn calls that describe a mesh of devices (module docstring); None for any other."""
        if name == "GetNumAvailableDevices":
            self.asked_devices = True
            return self.devices if self.devices is not None else UNKNOWN
        if name == "MeshShape":
            dims = [kwargs.get(k, args[i] if i < len(args) else None) for i, k in enumerate(("rows", "cols"))]
            ok = all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims)
            return MeshV(dims[0] * dims[1] if ok else None)  # type: ignore[operator]
        if name == "open_mesh_device":
            shape = kwargs.get("mesh_shape", args[0] if args else None)
            return shape if isinstance(shape, MeshV) else MeshV(None)
        if name in ("ShardTensorToMesh", "ReplicateTensorToMesh", "ShardTensor2dMesh"):
            mesh = kwargs.get("mesh_device", args[0] if args else None)
            devices = mesh.devices if isinstance(mesh, MeshV) else None
            if name == "ReplicateTensorToMesh":
                return MapperV(devices, None)
            dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
            if name == "ShardTensor2dMesh" or not (isinstance(dim, int) and not isinstance(dim, bool)):
                return MapperV(devices, None, known=False)
            return MapperV(devices, dim)
        return None

    def _shard(self, node: ast.Call, t: TensorV, mapper: Any) -> TensorV:
        """One device's shard of ``t`` under ``mapper`` (module docstring); ``t`` itself, noting why, where it is
        not known."""
        if self.mesh is None:
            self.mesh = node
        why = ""
        if not isinstance(mapper, MapperV) or not mapper.known:
            why = f"{snippet(node)}: a mesh mapper that is not read (only ShardTensorToMesh and ReplicateTensorToMesh)"
        elif mapper.devices is None:
            why = ("the per-device shapes depend on the number of devices, which the example takes from the machine "
                   "(ttnn.GetNumAvailableDevices()): give it with --devices N")
        elif mapper.dim is not None:
            shape = list(t.shape)
            d = mapper.dim % len(shape) if -len(shape) <= mapper.dim < len(shape) else None
            # exact in every shape class: a --range parameter's class splits by residue first (values.Split)
            rest = V.mod(shape[d], mapper.devices, self.classes) if d is not None and is_num(shape[d]) else None
            if d is None or rest != 0:
                dims = "x".join(str(V.at_max(x, self.classes)) if is_num(x) else "?" for x in shape)
                why = (f"a tensor of {dims} sharded along dimension {mapper.dim} over {mapper.devices} devices does "
                       "not split into equal shards (each device would run a program of its own)")
            else:
                shape[d] = V.floordiv(shape[d], mapper.devices, self.classes)
                return TensorV(t.name, tuple(shape), t.dtype)
        else:
            return t
        if why and not self.unknown_split:
            self.unknown_split = why
        return t

    def run(self, body: Sequence[ast.stmt]) -> Any:
        """Evaluate ``body``; the value of its ``return``, if one is reached."""
        for st in body:
            if self.found is not None:
                return None
            if isinstance(st, ast.Return):
                return self.ev(st.value) if st.value is not None else None
            if isinstance(st, ast.Assign):
                v = self.ev(st.value)
                for t in st.targets:
                    self._bind(t, v)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                self._bind(st.target, self.ev(st.value))
            elif isinstance(st, ast.Expr):
                self.ev(st.value)
            elif isinstance(st, ast.FunctionDef):
                self.env[st.name] = FuncV(st)
            elif isinstance(st, ast.Try):
                r = self.run(st.body)
                if r is not None:
                    return r
            elif isinstance(st, ast.With):
                r = self.run(st.body)
                if r is not None:
                    return r
            elif isinstance(st, ast.If):
                c = self.ev(st.test)
                branch = st.body if c is True or c is UNKNOWN else st.orelse
                r = self.run(branch)
                if r is not None:
                    return r
        return None

    def _bind(self, target: ast.expr, v: Any) -> None:
        if isinstance(target, ast.Name):
            # a --range parameter assigned in the example is the parameter, not its literal value
            if target.id in self.classes:
                self.assigned.add(target.id)
            self.env[target.id] = sym_value(self.classes[target.id]) if target.id in self.classes else v
        elif isinstance(target, (ast.Tuple, ast.List)):
            vs = v if isinstance(v, tuple) and len(v) == len(target.elts) else (UNKNOWN,) * len(target.elts)
            for t, x in zip(target.elts, vs, strict=True):
                self._bind(t, x)


def example_shapes(file: str, tree: ast.Module, op: ast.FunctionDef, classes: Mapping[str, V.SymClass],
                   modules: set[str], devices: int | None = None
                   ) -> tuple[dict[str, tuple[Any, ...]], MeshUse | None, set[str]]:
    """The shapes of the operation's arguments at the module's first call of it (only those known statically; one
    device's shard where the example spreads them over a mesh of ``devices``, module docstring), how the example uses a
    mesh of devices (None: it does not), and the ``--range`` parameters the example assigns."""
    env: dict[str, Any] = {}
    r = _ExampleReader(file, tree, op.name, classes, modules, env, devices)
    r.op_params = [a.arg for a in op.args.args]
    try:
        r.run(tree.body)
    except (VerispatialError, RecursionError):
        return {}, None, set()
    found = r.found or {}
    if devices is not None and not r.asked_devices:
        raise ParseError("--devices", "the example does not take its device count from the machine "
                                      "(ttnn.GetNumAvailableDevices()): there is nothing for --devices to give")
    mesh = None if r.mesh is None else MeshUse(r.mesh, r.unknown_split)
    return {k: v.shape for k, v in found.items() if isinstance(v, TensorV)}, mesh, r.assigned
