"""Shapes of a TT-Lang operation's tensors: from ``--shape T=D0xD1``, else from the file's own example call (the
literal shapes the tutorials build with ``torch.randn((M, K))`` and pass through their wrapper), with
``--range NAME=LO:HI[:STEP]`` making a shape parameter (a module variable of the example, or a name used in a
``--shape`` dimension) symbolic: a trip of the produced program (``values.SymClass``).

The example call is read, never run: module statements are evaluated with unknown values where the reader cannot
know them (devices, data), functions defined in the module are followed into, and the first call of the operation
gives the shapes of its arguments.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from verispatial.errors import ParseError, SourceRefused, VerispatialError
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.expr import UNKNOWN, ApiV, Evaluator, FuncV, TensorV, builtin, is_num

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


class _ExampleReader(Evaluator):
    """Evaluates module statements leniently: what it cannot know is ``UNKNOWN``."""

    def __init__(self, file: str, tree: ast.Module, op_name: str, classes: Mapping[str, V.SymClass],
                 modules: set[str], env: dict[str, Any]) -> None:
        super().__init__(file, env, classes, modules)
        self.tree = tree
        self.op_name = op_name
        self.found: dict[str, Any] | None = None
        self.op_params: list[str] = []
        self.depth = 0
        #: the first call that spreads tensors over a mesh of devices (their per-device shapes are not literal)
        self.mesh: ast.Call | None = None
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
                   modules: set[str]) -> tuple[dict[str, tuple[Any, ...]], ast.Call | None, set[str]]:
    """The shapes of the operation's arguments at the module's first call of it (only those known statically), the
    first ttnn call that spreads tensors over a mesh of devices before it (None without), and the ``--range``
    parameters the example assigns."""
    env: dict[str, Any] = {}
    r = _ExampleReader(file, tree, op.name, classes, modules, env)
    r.op_params = [a.arg for a in op.args.args]
    try:
        r.run(tree.body)
    except (VerispatialError, RecursionError):
        return {}, None, set()
    found = r.found or {}
    return {k: v.shape for k, v in found.items() if isinstance(v, TensorV)}, r.mesh, r.assigned
