"""Reading Python expressions of a TT-Lang source into values, without running them.

The values are what the front end needs to know statically: integers affine in loop indices and ``--range`` trips
(``values.Aff``), tuples, the operation's tensors and their slices, dataflow buffers, blocks, block expressions,
transfers, and names of the ``ttl`` API. ``Evaluator`` reads the expression forms TT-Lang sources use for shape
arithmetic and block compute; subclasses give the meaning of calls (``call``) and say what an unknown name is.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.refusals import NAMED, refuse, snippet


@attrs.frozen
class TensorV:
    """An operation argument: ``name`` (its parameter) and ``shape`` in elements (ints or affine in trips)."""

    name: str
    shape: tuple[Any, ...]
    dtype: str = "bf16"


@attrs.frozen
class SliceV:
    """``tensor[rows, cols]`` in tile coordinates: half-open ``(start, stop)`` pairs (affine values)."""

    tensor: TensorV
    rows: tuple[Any, Any]
    cols: tuple[Any, Any]


@attrs.frozen
class DfbV:
    """``ttl.make_dataflow_buffer_like(t, shape=(rows, cols), block_count=k)``: buffer ``index`` of every node."""

    index: int
    name: str
    tensor: TensorV
    rows: int
    cols: int
    block_count: int
    line: int

    @property
    def tiles(self) -> int:
        return self.rows * self.cols


@attrs.frozen(eq=False)
class BlockV:
    """A block of ``dfb`` taken by ``reserve()`` (``mode`` "reserve": its back, to fill and push) or ``wait()``
    ("wait": its front, to read and pop). Identity matters: each acquisition is one block."""

    dfb: DfbV
    mode: str


@attrs.frozen
class ExprV:
    """A block expression: the kinds of math in it (in reading order) and the blocks it reads."""

    kinds: tuple[str, ...]
    blocks: tuple[BlockV, ...]


@attrs.frozen(eq=False)
class TxV:
    """The handle ``ttl.copy`` returns: ``kind`` "read" (into a block), "write" (out of one), "send" (a block into a
    pipe) or "receive" (a pipe into a block, with ``pipe``)."""

    kind: str
    pipe: Any = None


@attrs.frozen
class SliceR:
    """``slice(lo, hi)`` in a pipe's destination: the node coordinates ``lo <= c < hi`` of one grid axis."""

    lo: int
    hi: int


@attrs.frozen
class PipeV:
    """``ttl.Pipe(src, dst)``: ``src`` a node's coordinates, ``dst`` one node's or a range (``SliceR`` per axis) for a
    multicast; ``net`` and ``index`` say which pipe net it belongs to and where (set when the net is built)."""

    src: tuple[int, ...]
    dst: tuple[int | SliceR, ...]
    net: int = -1
    index: int = -1
    line: int = 0

    def dests(self) -> list[tuple[int, ...]]:
        """The destination nodes' coordinates, row-major over the axes (the vendor's ``expand_node_range``)."""
        out: list[tuple[int, ...]] = [()]
        for d in self.dst:
            vals = range(d.lo, d.hi) if isinstance(d, SliceR) else [d]
            out = [(*o, v) for o in out for v in vals]
        return out


@attrs.frozen
class NetV:
    """``ttl.PipeNet([pipes])``: net ``index`` of the operation."""

    index: int
    pipes: tuple[PipeV, ...]
    line: int


@attrs.frozen
class PipeIdV:
    """The pipe identity an ``if_src`` (``role`` "src") or ``if_dst`` ("dst") body is called with."""

    pipe: PipeV
    role: str


@attrs.frozen(eq=False)
class LocalFnV:
    """A function defined inside a kernel (a pipe net's condition body): inlined where it is called."""

    node: ast.FunctionDef


@attrs.frozen
class ApiV:
    """A dotted name of an imported module (``ttl.math.relu``, ``torch.randn``)."""

    name: str


@attrs.frozen
class FuncV:
    """A function defined at module level (``node`` its definition)."""

    node: ast.FunctionDef


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


#: A value the example-call reader cannot know (a device handle, a random tensor's data); never reaches lowering.
UNKNOWN = _Unknown()

_ARITH: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
                           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul"}
#: Python's comparison operators on integers.
COMPARISONS: dict[type, Callable[[int, int], bool]] = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
                                                ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


def is_num(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, V.Aff)


def block_operands(*vs: Any) -> tuple[tuple[str, ...], tuple[BlockV, ...]] | None:
    """The kinds and blocks of operands of block math, or None when one is neither a block, an expression nor a
    scalar."""
    kinds: list[str] = []
    blocks: list[BlockV] = []
    for v in vs:
        if isinstance(v, BlockV):
            blocks.append(v)
        elif isinstance(v, ExprV):
            kinds.extend(v.kinds)
            blocks.extend(v.blocks)
        elif not (is_num(v) or isinstance(v, float)):
            return None
    return tuple(kinds), tuple(blocks)


class Evaluator:
    """Evaluate expressions of ``file`` in ``env`` under shape classes ``classes``."""

    def __init__(self, file: str, env: dict[str, Any], classes: Mapping[str, V.SymClass], modules: set[str]) -> None:
        self.file = file
        self.env = env
        self.classes = classes
        self.modules = modules

    # -- hooks
    def unknown_name(self, node: ast.Name) -> Any:
        refuse(self.file, node, node.id, "this name is not known here (only the operation's own values, module "
                                         "constants and the ttl API can be read statically)")

    def call(self, node: ast.Call, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        refuse(self.file, node, snippet(node.func), "this call cannot be read statically")

    def refuse_value(self, node: ast.AST, what: str) -> Any:
        refuse(self.file, node, snippet(node), what)

    # -- evaluation
    def ev(self, node: ast.expr) -> Any:
        try:
            return self._ev(node)
        except V.NotAffine as e:
            return self.refuse_value(node, f"{e}: shape arithmetic must stay affine in loop indices and trips")

    def _ev(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                got = self.env[node.id]
                if isinstance(got, V.NotFollowed):
                    refuse(self.file, node, node.id, got.why)
                return got
            if node.id in self.modules:
                return ApiV(node.id)
            if node.id in _BUILTINS:
                return ApiV(f"builtins.{node.id}")
            return self.unknown_name(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.ev(e) for e in node.elts)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.UnaryOp):
            v = self.ev(node.operand)
            if isinstance(node.op, ast.USub) and is_num(v):
                return V.scale(v, -1)
            if isinstance(node.op, ast.UAdd) and is_num(v):
                return v
            if isinstance(node.op, ast.USub) and isinstance(v, float):
                return -v
            if isinstance(node.op, ast.Not) and isinstance(v, bool):
                return not v
            if isinstance(node.op, ast.USub) and isinstance(v, (BlockV, ExprV)):
                ops = block_operands(v)
                assert ops is not None
                return ExprV((*ops[0], "neg"), ops[1])
            return self.refuse_value(node, "this operand cannot be read statically")
        if isinstance(node, ast.BinOp):
            return self._binop(node, self.ev(node.left), self.ev(node.right))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            vals = [self.ev(v) for v in node.values]
            if all(isinstance(v, bool) for v in vals):
                return all(vals) if isinstance(node.op, ast.And) else any(vals)
            return self.refuse_value(node, "a condition that is not known statically")
        if isinstance(node, ast.IfExp):
            c = self.ev(node.test)
            if isinstance(c, bool):
                return self.ev(node.body if c else node.orelse)
            return self.refuse_value(node, "a conditional expression whose condition is not known statically")
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._comprehension(node)
        if isinstance(node, ast.Call):
            fn = self.ev(node.func)
            args = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    return self.refuse_value(a, "a starred argument")
                args.append(self.ev(a))
            kwargs = {}
            for k in node.keywords:
                if k.arg is None:
                    return self.refuse_value(node, "a ** argument")
                kwargs[k.arg] = self.ev(k.value)
            return self.call(node, fn, args, kwargs)
        return self.refuse_value(node, f"a {type(node).__name__} expression cannot be read statically")

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> tuple[Any, ...]:
        """``[e for x in range(..) [if c] ...]`` of values known statically (the pipes of a pipe net), evaluated in
        order; the comprehension's names are its own."""
        saved = dict(self.env)
        out: list[Any] = []

        def gen(k: int) -> None:
            if k == len(node.generators):
                out.append(self.ev(node.elt))
                return
            g = node.generators[k]
            it = self.ev(g.iter)
            target = g.target
            if not isinstance(target, ast.Name) or g.is_async:
                self.refuse_value(target, "a comprehension target must be one name")
                return
            if isinstance(it, range):
                vals: Any = it
            elif isinstance(it, tuple):
                vals = it
            else:
                return self.refuse_value(g.iter, "a comprehension over something other than range(...) of integers "
                                                 "known statically")
            if len(vals) > 4096:
                self.refuse_value(g.iter, "a comprehension of more than 4096 values")
            for v in vals:
                self.env[target.id] = v
                if all(self.ev(c) is True for c in g.ifs):
                    gen(k + 1)

        try:
            gen(0)
        finally:
            self.env = saved
        return tuple(out)

    def _attribute(self, node: ast.Attribute) -> Any:
        base = self.ev(node.value)
        if isinstance(base, ApiV):
            name = f"{base.name}.{node.attr}"
            for bad, why in NAMED.items():
                if name == bad or name.startswith(bad + "."):
                    refuse(self.file, node, name, why)
            return ApiV(name)
        if isinstance(base, TensorV) and node.attr == "shape":
            return base.shape
        if isinstance(base, BlockV) and node.attr == "shape":
            return (base.dfb.rows, base.dfb.cols)
        if isinstance(base, DfbV) and node.attr == "shape":
            return (base.rows, base.cols)
        if isinstance(base, PipeIdV) and node.attr in ("src", "dst"):
            p = base.pipe
            v: Any = p.src if node.attr == "src" else p.dst
            return v[0] if len(v) == 1 else v
        if isinstance(base, (BlockV, DfbV, TxV, ExprV, TensorV, NetV)):
            return ("method", base, node.attr)
        return self.refuse_value(node, "this attribute cannot be read statically")

    def _subscript(self, node: ast.Subscript) -> Any:
        base = self.ev(node.value)
        if isinstance(base, tuple):
            i = self.ev(node.slice)
            if isinstance(i, int) and -len(base) <= i < len(base):
                return base[i]
            return self.refuse_value(node, "an index that is not a constant within the tuple")
        if isinstance(base, TensorV):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(parts) != 2:
                return self.refuse_value(node, "a tensor index must name two tile dimensions (rows, cols)")
            rng = []
            for p in parts:
                if isinstance(p, ast.Slice):
                    if p.step is not None:
                        return self.refuse_value(p, "a strided tensor slice")
                    lo = 0 if p.lower is None else self.ev(p.lower)
                    if p.upper is None:
                        return self.refuse_value(p, "an open-ended tensor slice (give its end)")
                    rng.append((lo, self.ev(p.upper)))
                else:
                    i = self.ev(p)
                    rng.append((i, V.add(i, 1) if is_num(i) else i))
            for lo, hi in rng:
                if not (is_num(lo) and is_num(hi)):
                    return self.refuse_value(node, "a tensor index that is not an integer")
            return SliceV(base, rng[0], rng[1])
        return self.refuse_value(node, "this subscript cannot be read statically")

    def _binop(self, node: ast.BinOp, a: Any, b: Any) -> Any:
        kind = _ARITH.get(type(node.op))
        if isinstance(a, (BlockV, ExprV)) or isinstance(b, (BlockV, ExprV)):
            ops = block_operands(a, b)
            if ops is None or kind is None:
                return self.refuse_value(node, "block math on an operand that is not a block")
            return ExprV((*ops[0], kind), ops[1])
        if isinstance(a, float) or isinstance(b, float):
            if (is_num(a) or isinstance(a, float)) and (is_num(b) or isinstance(b, float)) \
                    and isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return float(_FLOAT[kind](a, b)) if kind in _FLOAT else self.refuse_value(node, "float arithmetic")
            return self.refuse_value(node, "float arithmetic on a value that varies")
        if isinstance(a, tuple) and isinstance(b, tuple) and kind == "add":
            return a + b
        if not (is_num(a) and is_num(b)):
            return self.refuse_value(node, "arithmetic on values that are not integers")
        if kind == "add":
            return V.add(a, b)
        if kind == "sub":
            return V.add(a, b, -1)
        if kind == "mul":
            return V.mul(a, b)
        if kind == "floordiv":
            return V.floordiv(a, b, self.classes)
        if kind == "mod":
            return V.mod(a, b, self.classes)
        if kind == "pow" and isinstance(a, int) and isinstance(b, int) and 0 <= b <= 64:
            return a ** b
        what = kind if kind is not None else type(node.op).__name__  # ``>>``: RShift, none of _ARITH's
        return self.refuse_value(node, f"integer {what} is not read (only +, -, *, // and % of integers)")

    def _compare(self, node: ast.Compare) -> Any:
        left = self.ev(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.ev(right_node)
            f = COMPARISONS.get(type(op))
            if f is None or not (is_num(left) and is_num(right)):
                if isinstance(op, (ast.Eq, ast.NotEq)) and (
                        (isinstance(left, str) and isinstance(right, str))
                        or (isinstance(left, tuple) and isinstance(right, tuple)
                            and all(isinstance(v, int) for v in (*left, *right)))):
                    ok = (left == right) == isinstance(op, ast.Eq)  # names, or node coordinates known statically
                else:
                    return self.refuse_value(node, "a comparison that is not of integers")
            else:
                ok = f(V.sign_of(V.add(left, right, -1), self.classes), 0)
            if not ok:
                return False
            left = right
        return True


_BUILTINS = {"range", "max", "min", "int", "len", "abs", "print", "tuple", "list", "slice"}
_FLOAT: dict[str | None, Callable[[Any, Any], Any]] = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
                                                       "div": operator.truediv}


def builtin(ev: Evaluator, node: ast.Call, name: str, args: list[Any]) -> Any:
    """``max``, ``min``, ``int``, ``len``, ``abs`` of integers known statically."""
    if name in ("max", "min") and args:
        vals = list(args[0]) if len(args) == 1 and isinstance(args[0], tuple) else list(args)
        best = vals[0]
        for v in vals[1:]:
            if not (is_num(v) and is_num(best)):
                return ev.refuse_value(node, f"{name} of values that are not integers")
            s = V.sign_of(V.add(v, best, -1), ev.classes)
            if (s > 0) == (name == "max") and s != 0:
                best = v
        return best
    if name == "int" and len(args) == 1 and is_num(args[0]):
        return args[0]
    if name == "len" and len(args) == 1 and isinstance(args[0], tuple):
        return len(args[0])
    if name == "abs" and len(args) == 1 and is_num(args[0]):
        return V.scale(args[0], V.sign_of(args[0], ev.classes) or 1)
    if name in ("tuple", "list") and len(args) == 1 and isinstance(args[0], tuple):
        return args[0]
    if name == "slice" and len(args) == 2 and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return SliceR(args[0], args[1])
    if name == "range" and 1 <= len(args) <= 2 and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return range(*args)  # a comprehension's iterable (a kernel's for loop reads its range itself)
    return ev.refuse_value(node, f"this use of {name}() cannot be read statically")
