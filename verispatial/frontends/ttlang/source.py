"""Reading a TT-Lang source file's structure with the stdlib ``ast`` (never importing or running it): its module
constants, the ``@ttl.operation(grid=...)`` functions, and in one operation the dataflow buffers and the kernels.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from verispatial.errors import ParseError
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.expr import ApiV, DfbV, Evaluator, NetV, TensorV, builtin, is_num
from verispatial.frontends.ttlang.lower import grid_value
from verispatial.frontends.ttlang.pipes import pipe_call
from verispatial.frontends.ttlang.refusals import refuse, snippet
from verispatial.frontends.ttlang.shapes import sym_value


@attrs.frozen
class Kernel:
    """A kernel function of the operation: ``kind`` "datamovement" or "compute"."""

    name: str
    kind: str
    node: ast.FunctionDef


@attrs.frozen
class SourceFile:
    """A parsed TT-Lang source: its path as given, its lines, the tree, the imported module names."""

    path: str
    lines: list[str]
    tree: ast.Module
    modules: frozenset[str]


def parse(path: str) -> SourceFile:
    """Read and parse ``path``; ``ParseError`` naming the file for a missing or unreadable one or a syntax error."""
    from verispatial.regular_file import not_regular

    if (why := not_regular(path, "a TT-Lang .py file")) is not None:
        raise ParseError(path, why)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ParseError(path, f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ParseError(path, "not UTF-8 text") from None
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise ParseError(f"line {e.lineno or 0}", f"not Python: {e.msg}") from None
    mods: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                mods.add(a.asname or a.name.split(".")[0])
    return SourceFile(path, text.splitlines(), tree, frozenset(mods))


def _decorator(fn: ast.FunctionDef, name: str) -> ast.expr | None:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if ast.unparse(target) == name:
            return d
    return None


def _ttl_renamed(src: SourceFile) -> str:
    """How the file imports TT-Lang under another name (``import ttl as tl``, ``from ttl import operation``), as
    ``"line N: import ttl as tl"``; "" when it does not."""
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Import) and any(a.name == "ttl" and a.asname not in (None, "ttl") for a in node.names):
            return f"line {node.lineno}: {ast.unparse(node)}"
        if isinstance(node, ast.ImportFrom) and node.module is not None and node.module.split(".")[0] == "ttl":
            return f"line {node.lineno}: {ast.unparse(node)}"
    return ""


def operations(src: SourceFile) -> list[ast.FunctionDef]:
    """The module-level functions decorated ``@ttl.operation``."""
    return [n for n in src.tree.body if isinstance(n, ast.FunctionDef) and _decorator(n, "ttl.operation") is not None]


def pick_operation(src: SourceFile, name: str | None) -> ast.FunctionDef:
    """The operation named ``name``, or the only one; ``ParseError`` when there is none, several and no name, or
    no operation of that name."""
    ops = operations(src)
    if name is not None:
        for o in ops:
            if o.name == name:
                return o
        raise ParseError("--operation", f"{src.path} has no @ttl.operation named {name!r} "
                                        f"(it has {', '.join(o.name for o in ops) or 'none'})")
    if not ops:
        renamed = _ttl_renamed(src)
        raise ParseError(src.path, "no @ttl.operation function in this file" + (
            f" ({renamed}: the reading follows the API by the name ttl only)" if renamed else ""))
    if len(ops) > 1:
        raise ParseError("--operation", f"{src.path} has several operations ({', '.join(o.name for o in ops)}): "
                                        "name one")
    return ops[0]


def module_constants(src: SourceFile, classes: Mapping[str, V.SymClass]) -> dict[str, Any]:
    """Module-level names bound to integer (or tuple of integer) values, e.g. ``TILE_SIZE = 32`` (the last value
    assigned at the top level); a ``--range`` parameter's name is the parameter itself."""
    env: dict[str, Any] = {}
    ev = Evaluator(src.path, env, classes, set())
    ops = {st.name for st in src.tree.body if isinstance(st, ast.FunctionDef) and _decorator(st, "ttl.operation")}
    for st in src.tree.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name) and \
                st.value.func.id in ops:
            break  # the example call: what the module binds after it is not what the operation saw
        pairs = _plain_bindings(st)
        if pairs is not None:
            for name, value in pairs:
                try:
                    v = ev.ev(value)
                except Exception:
                    v = None
                if is_num(v) or (isinstance(v, tuple) and all(is_num(x) for x in v)) or isinstance(v, float):
                    env[name] = v
                elif name in env:  # a value not read: the name's earlier one is not what the operation sees
                    env[name] = V.NotFollowed(f"bound at line {st.lineno} to a value not read statically")
            continue
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = {st.name} | _globals_of(st)  # ``global ROWS`` in a function the module may call
        else:
            names = _bound_names(st)
        for name in names & env.keys():
            # ``ROWS += 4``, a binding inside an ``if`` or a loop, an import, a ``global`` store: the value the
            # operation sees is not followed (the reading kept the name's earlier value)
            env[name] = V.NotFollowed(f"rebound at line {st.lineno} in a way the reading does not follow")
    for name, c in classes.items():
        if name in env:
            env[name] = sym_value(c)
    return env


def _plain_bindings(st: ast.stmt) -> list[tuple[str, ast.expr]] | None:
    """The (name, value) pairs of a plain module-level binding (``ROWS = 4``, ``R, C = 256, 64``, ``X: int = 3``),
    or None for any other statement."""
    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
        return [(st.target.id, st.value)]
    if not isinstance(st, ast.Assign) or len(st.targets) != 1:
        return None
    t = st.targets[0]
    if isinstance(t, ast.Name):
        return [(t.id, st.value)]
    if isinstance(t, ast.Tuple) and isinstance(st.value, ast.Tuple) and len(t.elts) == len(st.value.elts) and \
            all(isinstance(x, ast.Name) for x in t.elts) and len({x.id for x in t.elts}) == len(t.elts):  # type: ignore[attr-defined]
        return [(x.id, v) for x, v in zip(t.elts, st.value.elts, strict=True)]  # type: ignore[attr-defined]
    return None


def _bound_names(st: ast.stmt) -> set[str]:
    """The names module-level statement ``st`` may bind (assigned, unpacked, loop targets, imports, ``with ... as``,
    ``except ... as``, walrus), not inside a nested function or class."""
    out: set[str] = set()
    stack: list[ast.AST] = [st]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Name) and isinstance(x.ctx, (ast.Store, ast.Del)):
            out.add(x.id)
        elif isinstance(x, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in x.names)
        elif isinstance(x, ast.ExceptHandler) and x.name:
            out.add(x.name)
        elif isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(x.name)
            continue
        stack.extend(ast.iter_child_nodes(x))
    return out


def _globals_of(st: ast.AST) -> set[str]:
    """The names a ``global`` statement anywhere in function or class ``st`` declares."""
    return {n for x in ast.walk(st) if isinstance(x, ast.Global) for n in x.names}


def grid_of(src: SourceFile, op: ast.FunctionDef, mesh: tuple[int, int]) -> tuple[int, ...]:
    """``grid=(columns, rows)`` of ``@ttl.operation``; ``"full"`` is the target's whole grid (the vendor's compiler
    picks it from the hardware: here the target's mesh). A multi-device grid ``(device rows, device cols, columns,
    rows)`` (TT-Lang's device-mesh axes first) lays the devices' nodes side by side (``pipes.site_of``)."""
    d = _decorator(op, "ttl.operation")
    grid: Any = (1, 1)
    if isinstance(d, ast.Call):
        for k in d.keywords:
            if k.arg == "grid":
                if isinstance(k.value, ast.Constant) and k.value.value == "full":
                    return mesh
                try:
                    grid = ast.literal_eval(k.value)
                except ValueError:
                    # module constants (``grid=(1, DEVICES, 1, 1)``)
                    grid = Evaluator(src.path, module_constants(src, {}), {}, set()).ev(k.value)
            elif k.arg is not None and k.arg not in ("fp32_dest_acc_en", "compiler_options", "name"):
                refuse(src.path, d, f"ttl.operation({k.arg}=...)", "this operation option is not read")
    if isinstance(grid, int):
        grid = (grid, 1)
    if not (isinstance(grid, tuple) and len(grid) in (2, 4) and all(isinstance(g, int) and g >= 1 for g in grid)):
        refuse(src.path, d, f"grid={grid!r}", "the grid must be (cols, rows), or (device rows, device cols, cols, "
                                              "rows) for a mesh of devices, of positive integers")
    span = grid if len(grid) == 2 else (grid[1] * grid[2], grid[0] * grid[3])
    if span[0] > mesh[0] or span[1] > mesh[1]:
        refuse(src.path, d, f"grid={grid!r}", f"does not fit the target's {mesh[0]}x{mesh[1]} grid"
                                              + ("" if len(grid) == 2 else " (its devices' nodes side by side)"))
    return grid


class BodyReader(Evaluator):
    """Reads the operation body outside its kernels: shape arithmetic, ``grid_size`` and dataflow buffers."""

    def __init__(self, src: SourceFile, env: dict[str, Any], classes: Mapping[str, V.SymClass],
                 grid: tuple[int, ...]) -> None:
        super().__init__(src.path, env, classes, set(src.modules))
        self.src = src
        self.grid = grid
        self.dfbs: list[DfbV] = []
        self.kernels: list[Kernel] = []
        self.dfb_names: dict[int, str] = {}
        self.nets: list[NetV] = []

    def call(self, node: ast.Call, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(fn, ApiV):
            if fn.name.startswith("builtins."):
                return builtin(self, node, fn.name.split(".", 1)[1], args)
            if fn.name == "ttl.grid_size":
                return grid_value(self, node, self.grid, kwargs.get("dims", args[0] if args else 2))
            if fn.name == "ttl.make_dataflow_buffer_like":
                return self._dfb(node, args, kwargs)
            if fn.name == "ttl.node":
                return self.refuse_value(node, "ttl.node() outside a kernel")
            if fn.name in ("ttl.Pipe", "ttl.PipeNet"):
                return pipe_call(self, node, fn.name, args, kwargs, self.grid, self.nets)
        return super().call(node, fn, args, kwargs)

    def _dfb(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> DfbV:
        like = args[0] if args else kwargs.get("tensor")
        shape = kwargs.get("shape", args[1] if len(args) > 1 else None)
        count = kwargs.get("block_count", args[2] if len(args) > 2 else 2)
        if not isinstance(like, TensorV):
            refuse(self.file, node, snippet(node), "make_dataflow_buffer_like of something that is not an operation "
                                                   "argument")
        if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(s, int) and s >= 1 for s in shape)):
            refuse(self.file, node, snippet(node), "a block shape that is not two positive integers (a shape that varies with a "
                                    "--range parameter is not expressible: a buffer's page size is fixed)")
        if not (isinstance(count, int) and count >= 1):
            refuse(self.file, node, snippet(node), "a block_count that is not a positive integer")
        d = DfbV(len(self.dfbs), f"dfb{len(self.dfbs)}", like, shape[0], shape[1], count, node.lineno)
        self.dfbs.append(d)
        return d

    def run(self, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, ast.FunctionDef):
                kind = next((k for k in ("datamovement", "compute") if _decorator(st, f"ttl.{k}") is not None), None)
                if kind is None:
                    refuse(self.src.path, st, f"def {st.name}", "a function in an operation that is neither "
                                                                "@ttl.datamovement() nor @ttl.compute()")
                self.kernels.append(Kernel(st.name, kind, st))
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                value = st.value
                assert value is not None or isinstance(st, ast.AnnAssign)
                if value is None:
                    continue
                v = self.ev(value)
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    self._bind(t, v, st)
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            elif isinstance(st, ast.Pass):
                continue
            elif isinstance(st, ast.If):
                c = self.ev(st.test)
                if not isinstance(c, bool):
                    refuse(self.src.path, st, f"if {snippet(st.test)}", "a condition in the operation body that is "
                                                                        "not known statically")
                self.run(st.body if c else st.orelse)
            elif isinstance(st, ast.Return) and st.value is None:
                continue
            else:
                refuse(self.src.path, st, snippet(st), "this statement of the operation body is not read (only "
                                                       "shape arithmetic, dataflow buffers and kernels)")

    def _bind(self, t: ast.expr, v: Any, st: ast.stmt) -> None:
        if isinstance(t, ast.Name):
            self.env[t.id] = v
            if isinstance(v, DfbV) and v.index not in self.dfb_names:
                self.dfb_names[v.index] = t.id
            elif isinstance(v, tuple):  # a list of dataflow buffers: act[0], act[1], ...
                for i, d in enumerate(v):
                    if isinstance(d, DfbV) and d.index not in self.dfb_names:
                        self.dfb_names[d.index] = f"{t.id}[{i}]"
        elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(v, tuple) and len(v) == len(t.elts):
            for x, y in zip(t.elts, v, strict=True):
                self._bind(x, y, st)
        else:
            refuse(self.src.path, st, snippet(t), "this assignment cannot be read statically")
