"""Lowering one TT-Lang kernel (a ``@ttl.datamovement()`` or ``@ttl.compute()`` function) at one node to ops.

| TT-Lang | ops |
|---|---|
| ``with dfb.reserve() as blk:`` / ``blk = dfb.reserve()`` ... ``blk.push()`` | Reserve(1) ... Push(1) at the exit |
| ``with dfb.wait() as blk:`` / ``blk = dfb.wait()`` ... ``blk.pop()`` | Wait(1) ... Pop(1) at the exit |
| ``ttl.copy(tensor[rows, cols], blk)`` / ``tx.wait()`` | ReadTiles per tile row / ReadBarrier |
| ``ttl.copy(blk, tensor[rows, cols])`` / ``tx.wait()`` | WriteTiles per tile row / WriteBarrier |
| a copy whose handle no ``wait()`` uses | its wait right after the copy, as TT-Lang's compiler adds it (``unwaited_copies``) |
| ``blk.store(expr)`` | per accumulator-sized chunk: AcquireAcc, Compute, PackAcc, ReleaseAcc |
| ``for i in range(n)`` | Loop (n constant, or affine in a ``--range`` trip: TripCount) |
| ``if`` on a value known at this node | the branch taken |
| ``if`` on the loop index | If first/last/not_first/not_last, or a shorter loop for a prefix |

A buffer page is one block (``shape`` tiles), so Reserve/Wait/Push/Pop move one page. Nested ``with`` items exit
in reverse order, as Python exits them. The DST split of a block's compute is chosen here: chunks of at most the
target's accumulator capacity (``Target.acc_capacity``), each reading every operand block whole.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import attrs

from verispatial.errors import SourceRefused
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang import vocabulary
from verispatial.frontends.ttlang.expr import (
    COMPARISONS,
    ApiV,
    BlockV,
    DfbV,
    Evaluator,
    ExprV,
    LocalFnV,
    NetV,
    PipeIdV,
    SliceV,
    TensorV,
    TxV,
    block_operands,
    builtin,
    is_num,
)
from verispatial.frontends.ttlang.pipes import PipePlan, pipe_call
from verispatial.frontends.ttlang.refusals import refuse, snippet
from verispatial.ir.core import Addr, Guard, Term, WaitCond
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
    Compute,
    If,
    Loop,
    McastSend,
    Op,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.source import OpPath, SourceLoc, Sources
from verispatial.ir.target import Target


@attrs.frozen
class TileLayout:
    """How an argument's tiles are numbered in program.json. Row-major (``transposed`` False): tile ``(r, c)`` is
    ``r * stride + c``, ``stride`` its tile columns. Column-major (True): ``c * stride + r``, ``stride`` its tile rows,
    for a tensor whose columns a ``--range`` changes: the numbering keeps addresses affine in loop indices (the stride
    is fixed) and the range changes program.json's first dimension, as ``Tensor.trip_rows`` says it."""

    stride: int
    transposed: bool = False


@attrs.define
class _Item:
    """An op being built with where it came from; ``body`` for a Loop/If under construction."""

    op: Any
    loc: SourceLoc
    body: list[_Item] | None = None


_PURE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass)


def _is_pure(st: ast.stmt) -> bool:
    return isinstance(st, _PURE) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))


class KernelLowering(Evaluator):
    """Lower kernel ``fn`` at node ``node`` (column, row) of a grid of ``grid`` (columns, rows)."""

    def __init__(self, file: str, lines: list[str], env: dict[str, Any], classes: Mapping[str, V.SymClass],
                 modules: set[str], target: Target, node: tuple[int, ...], grid: tuple[int, ...],
                 is_compute: bool, layouts: Mapping[str, TileLayout], plan: PipePlan | None = None,
                 nets: list[NetV] | None = None, unwaited: frozenset[tuple[int, int]] = frozenset()) -> None:
        super().__init__(file, dict(env), classes, modules)
        #: (line, column) of the copies whose handle no wait uses: waited right after the copy (``unwaited_copies``)
        self.unwaited = unwaited
        #: blocks taken and not (yet) pushed or popped, with the call that took them
        self.held: dict[int, tuple[BlockV, ast.AST]] = {}
        #: per block taken (keyed by the block itself, kept alive: an id could be reused): how many loops enclose the
        #: take, and per kind of copy into it ("read", "receive") the copy that filled it
        self.depth: dict[BlockV, int] = {}
        self.filled: dict[tuple[BlockV, str], ast.Call] = {}
        self.lines = lines
        self.target = target
        self.node = node
        self.grid = grid
        self.is_compute = is_compute
        self.layouts = layouts
        self.out: list[_Item] = []
        self.loops: list[tuple[str, Any]] = []  # (var, count) of enclosing loops, outermost first
        # a loop never takes a --range parameter's name: an address term naming it names the trip (ir.core.Addr)
        self.used_vars: set[str] = set(classes)
        self.written: set[str] = set()
        self.read_tensors: set[str] = set()
        self.stmt: ast.AST | None = None
        self.plan = plan
        self.nets = nets if nets is not None else []
        #: receive posts per completion semaphore in the current iteration of each enclosing loop (outermost first,
        #: the kernel's top level at 0; None: not a constant, after a loop whose count is a trip)
        self.posts: list[dict[int, int | None]] = [{}]
        #: receive waits whose threshold takes a term of each enclosing loop, per frame: (item, semaphore)
        self.pending: list[list[tuple[_Item, int]]] = [[]]
        self.guarded = 0  # depth of If branches guarded by a loop index
        #: (net, pipe) -> role -> {(dataflow buffer index, name)}: the blocks each end of a pipe carries
        self.pipe_uses: dict[tuple[int, int], dict[str, set[tuple[int, str]]]] = {}

    # -- locations
    def loc(self, node: ast.AST) -> SourceLoc:
        """Where ``node`` is: its line and column, and the source line (a ``with`` item: the item, which has no
        location of its own, at its context expression)."""
        at = node.context_expr if isinstance(node, ast.withitem) else node
        line = getattr(at, "lineno", 0)
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        if isinstance(node, ast.withitem):
            text = snippet(node.context_expr) + (f" as {snippet(node.optional_vars)}" if node.optional_vars else "")
            text += " (exit)"
        return SourceLoc(self.file, line, getattr(at, "col_offset", -1) + 1, text[:160])

    def emit(self, op: Op, node: ast.AST) -> None:
        self.out.append(_Item(op, self.loc(node)))

    # -- statements
    def run(self, body: list[ast.stmt]) -> None:
        for st in body:
            self.stmt = st
            self.statement(st)

    def statement(self, st: ast.stmt) -> None:
        if isinstance(st, ast.Assign):
            v = self.ev(st.value)
            for t in st.targets:
                self.bind(t, v, st)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.bind(st.target, self.ev(st.value), st)
        elif isinstance(st, ast.AugAssign):
            if not isinstance(st.target, ast.Name):
                refuse(self.file, st, snippet(st), "an augmented assignment to something other than a name")
            cur = self.ev(st.target)
            self.env[st.target.id] = self._binop(ast.BinOp(st.target, st.op, st.value), cur, self.ev(st.value))
        elif isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return  # a docstring or a bare constant
            if not isinstance(st.value, ast.Call):
                refuse(self.file, st, snippet(st), "an expression statement that is not a call")
            self.ev(st.value)
        elif isinstance(st, ast.Pass):
            return
        elif isinstance(st, ast.For):
            self.for_loop(st)
        elif isinstance(st, ast.With):
            self.with_block(st)
        elif isinstance(st, ast.If):
            self.if_stmt(st)
        elif isinstance(st, (ast.Break, ast.Continue, ast.Return)):
            refuse(self.file, st, type(st).__name__.lower(), "an early exit from a kernel or loop is not lowered "
                                                              "(its count would depend on data)")
        elif isinstance(st, ast.While):
            refuse(self.file, st, "while", "a while loop's count is not known statically: use for ... in range(n)")
        elif isinstance(st, ast.FunctionDef) and not st.decorator_list:
            # a pipe net's condition body: inlined where if_src / if_dst call it
            self.env[st.name] = LocalFnV(st)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            refuse(self.file, st, f"def {st.name}", "a definition inside a kernel is not lowered (only undecorated "
                                                    "functions a pipe net's if_src / if_dst call)")
        else:
            refuse(self.file, st, type(st).__name__, "this statement is not lowered")

    def bind(self, target: ast.expr, v: Any, st: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(v, tuple) and len(v) == len(target.elts):
            for t, x in zip(target.elts, v, strict=True):
                self.bind(t, x, st)
        else:
            refuse(self.file, st, snippet(target), "this assignment target cannot be read statically")

    def _loop_var(self, name: str) -> str:
        base = name if name and name != "_" else f"i{len(self.loops)}"
        var, n = base, 1
        while var in self.used_vars:
            n += 1
            var = f"{base}_{n}"
        self.used_vars.add(var)
        return var

    def _count(self, node: ast.AST, count: Any) -> int | str | TripCount:
        """A loop count as the IR has it; refuses one that depends on a loop index or falls as a trip grows."""
        if isinstance(count, int) and not isinstance(count, bool):
            return max(0, count)
        if not isinstance(count, V.Aff):
            refuse(self.file, node, snippet(node), "a loop count that is not an integer")
        if count.terms:
            refuse(self.file, node, snippet(node), "a loop count that depends on an enclosing loop's index "
                                                   "(a triangular loop) is not expressible")
        if len(count.syms) != 1:
            refuse(self.file, node, snippet(node), "a loop count affine in two --range parameters")
        (s, c), = count.syms
        if c < 1:
            refuse(self.file, node, snippet(node), f"a loop count that falls as {s} grows")
        return s if (c, count.const) == (1, 0) else TripCount(s, c, count.const)

    def _range(self, st: ast.For) -> tuple[Any, Any]:
        it = st.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and it.func.id not in self.env and not it.keywords and 1 <= len(it.args) <= 3):
            refuse(self.file, st, f"for ... in {snippet(it)}", "only loops over range(...) are lowered (loops are "
                                                               "kept as loops, never unrolled)")
        args = [self.ev(a) for a in it.args]
        if len(args) == 3 and args[2] != 1:
            refuse(self.file, st, snippet(it), "a range with a step other than 1")
        start, stop = (0, args[0]) if len(args) == 1 else (args[0], args[1])
        if not (is_num(start) and is_num(stop)):
            refuse(self.file, st, snippet(it), "a range whose bounds are not integers")
        return start, V.add(stop, start, -1)

    def for_loop(self, st: ast.For) -> None:
        if st.orelse:
            refuse(self.file, st, "for ... else", "a loop's else clause is not lowered")
        if not isinstance(st.target, ast.Name):
            refuse(self.file, st, snippet(st.target), "a loop target must be one name")
        start, n = self._range(st)
        var = self._loop_var(st.target.id)
        index = V.add(start, V.Aff(0, (), ((var, 1),)))
        saved_env = dict(self.env)
        carried = _carried(st.body, set(saved_env) - {st.target.id})
        if carried is not None:
            refuse(self.file, carried[1], carried[0], "a value carried from one iteration to the next (read, then "
                                                      "assigned, in the loop body) is not lowered: compute it from "
                                                      "the loop index")
        self.env[st.target.id] = index
        body = st.body
        # `for i in range(n): <pure statements>; if <prefix of i>: ...` is a shorter loop (the tutorials' guard
        # against a node's trailing blocks): fold the prefix into the count, exactly.
        *pre, last = body
        if isinstance(last, ast.If) and not last.orelse \
                and all(isinstance(x, (ast.Assign, ast.AnnAssign, ast.Pass)) for x in pre):
            probe = dict(self.env)
            self.loops.append((var, n))
            try:
                self.run(pre)
                admitted = self.admitted(last.test, var, n) if isinstance(n, int) else None
                # a prefix whose length a --range changes (a grid's last nodes idle for some shapes)
                prefix = self.range_prefix(last.test, var, n) if admitted is None else None
            finally:
                self.loops.pop()
                self.env = probe
            if admitted is not None and admitted == list(range(len(admitted))):
                n, body = len(admitted), [*pre, *last.body]
            elif prefix is not None:
                n, body = prefix, [*pre, *last.body]
        count = self._count(st.iter, n)
        item = _Item(Loop(var, count, ()), self.loc(st), [])
        self.out.append(item)
        saved_out, self.out = self.out, item.body  # type: ignore[assignment]
        self.loops.append((var, n))
        self.posts.append({})
        self.pending.append([])
        try:
            self.run(body)
        finally:
            self.loops.pop()
            self.out = saved_out
            self._close_frame(st, var, count)
            # After the loop a name the body assigns holds the last iteration's value (or the old one for a count of
            # 0): unknown here, so it is forgotten and a later read is refused by name; a block or transfer handle
            # names its buffer only and is kept (as after a guarded branch, below).
            stored = _stores(st.body) | {st.target.id}
            handles = {k: v for k, v in self.env.items() if k in stored and isinstance(v, (BlockV, TxV))}
            self.env = {**{k: v for k, v in saved_env.items() if k not in stored}, **handles}

    def _close_frame(self, st: ast.For, var: str, count: int | str | TripCount) -> None:
        """A loop's receive posts per iteration become its index's coefficient in the thresholds of the receive
        waits inside it (the sequence number counts every post of the kernel before), and the enclosing frame counts
        them all."""
        posts, pending = self.posts.pop(), self.pending.pop()
        for it, sem in pending:
            per = posts.get(sem, 0)
            if per is None:
                refuse(self.file, st, f"for ... in {snippet(st.iter)}", "pipe receives in a loop whose count is a "
                                                                       "--range trip, inside this loop: the sequence "
                                                                       "numbers of its receives are not affine")
            if per:
                it.op = attrs.evolve(it.op, terms=(*it.op.terms, Term(var, per)))
            self.pending[-1].append((it, sem))
        outer = self.posts[-1]
        for sem, per in posts.items():
            if not per:
                continue
            if per is None or not isinstance(count, int) or outer.get(sem, 0) is None:
                outer[sem] = None
            else:
                outer[sem] = outer.get(sem, 0) + per * count  # type: ignore[operator]

    def admitted(self, test: ast.expr, var: str, n: int) -> list[int] | None:
        """The indices ``0 <= i < n`` of loop ``var`` whose iteration ``test`` admits, when ``test`` is affine in that
        index alone; None when it does not read the index (known statically) or reads something else."""
        if n > 1_000_000:
            return None
        try:
            diff = self._difference(test)
        except V.NotAffine:
            return None
        if diff is None:
            return None
        return [i for i in range(n) if diff(i)]

    def range_prefix(self, test: ast.expr, var: str, n: int | V.Aff) -> int | V.Aff | None:
        """The iterations ``0 <= i < n`` of loop ``var`` that ``test`` admits, when they are a prefix whose length is
        affine in the ``--range`` parameters: ``test`` one comparison ``i + r < 0`` (``<=``, or the index negated
        with ``>`` / ``>=``) with ``r`` free of loop indices; the length ``min(n, max(0, -r))`` in this shape class
        (``values.sign_of`` cuts the class where a comparison changes truth, so each class has one affine length).
        None for any other test (the caller refuses it by name)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        kind = type(test.ops[0])
        try:
            left, right = self.ev(test.left), self.ev(test.comparators[0])
        except SourceRefused:
            return None
        if not (is_num(left) and is_num(right)):
            return None
        d = V.aff(V.add(left, right, -1))  # test: d OP 0
        if d.terms != ((var, 1),) and d.terms != ((var, -1),):
            return None
        rest = V.simplify(V.Aff(d.const, d.syms, ()))
        coef = d.terms[0][1]
        bounds = {(1, ast.Lt): V.scale(rest, -1), (1, ast.LtE): V.add(V.scale(rest, -1), 1),
                  (-1, ast.Gt): rest, (-1, ast.GtE): V.add(rest, 1)}
        length = bounds.get((coef, kind))
        if length is None:
            return None
        if V.sign_of(V.add(length, n, -1), self.classes) >= 0:
            return n
        if V.sign_of(length, self.classes) <= 0:
            return 0
        return length

    def _difference(self, test: ast.expr) -> Any:
        """A predicate of the index for a comparison chain / and / or / not of integers affine in one loop index."""
        if isinstance(test, ast.BoolOp):
            parts = [self._difference(v) for v in test.values]
            if any(p is None for p in parts):
                return None
            if isinstance(test.op, ast.And):
                return lambda i: all(p(i) for p in parts)
            return lambda i: any(p(i) for p in parts)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            p = self._difference(test.operand)
            return None if p is None else (lambda i: not p(i))
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return None
        f = COMPARISONS.get(type(test.ops[0]))
        left, right = self.ev(test.left), self.ev(test.comparators[0])
        if f is None or not (is_num(left) and is_num(right)):
            return None
        d = V.aff(V.add(left, right, -1))
        if d.syms or len(d.terms) != 1:
            return None
        (v, c), = d.terms
        if not self.loops or v != self.loops[-1][0]:
            return None
        return lambda i: f(d.const + c * i, 0)

    def if_stmt(self, st: ast.If) -> None:
        try:
            c = self.ev(st.test)
        except V.Split:
            raise
        except Exception:  # a comparison of a loop index: decided per iteration below
            c = None
        if isinstance(c, bool):
            self.run(st.body if c else st.orelse)
            return
        if not self.loops or not isinstance(self.loops[-1][1], int):
            refuse(self.file, st, f"if {snippet(st.test)}", "a condition that is neither known at this node nor a "
                                                            "test of the innermost loop's index")
        var, n = self.loops[-1]
        admitted = self.admitted(st.test, var, n)
        if admitted is None:
            refuse(self.file, st, f"if {snippet(st.test)}", "a condition that is neither known at this node nor a "
                                                            "test of the innermost loop's index")
        rest = [i for i in range(n) if i not in set(admitted)]
        for idx, branch in ((admitted, st.body), (rest, st.orelse)):
            if not branch or not idx:
                continue
            if len(idx) == n:
                self.run(branch)
                continue
            guard = Guard.FIRST if idx == [0] else Guard.LAST if idx == [n - 1] else None
            if guard is None and idx == list(range(1, n)):
                guard = Guard.NOT_FIRST
            if guard is None and idx == list(range(n - 1)):
                guard = Guard.NOT_LAST
            if guard is None:
                refuse(self.file, st, f"if {snippet(st.test)}", f"admits iterations {idx[:4]}{'…' if len(idx) > 4 else ''}"
                                                                f" of loop {var} < {n}: only the first, the last, all "
                                                                "but one of them, or a prefix of a loop are expressible")
            item = _Item(If(var, guard, ()), self.loc(st), [])
            self.out.append(item)
            saved, self.out = self.out, item.body  # type: ignore[assignment]
            self.guarded += 1
            try:
                self.run(branch)
            finally:
                self.guarded -= 1
                self.out = saved
                # A value the guarded branch assigns exists from the iteration that ran it on: forgotten after it,
                # except a block or transfer handle, which names its buffer only (the checker judges every use of
                # the buffer: an operand read from a front not waited for is a violation of its own).
                for k in _stores(branch):
                    if not isinstance(self.env.get(k), (BlockV, TxV)):
                        self.env.pop(k, None)

    def with_block(self, st: ast.With) -> None:
        taken: list[tuple[BlockV, ast.withitem]] = []
        for item in st.items:
            v = self.ev(item.context_expr)
            if not isinstance(v, BlockV):
                refuse(self.file, item.context_expr, snippet(item.context_expr),
                       "only dfb.reserve() and dfb.wait() are lowered as context managers")
            if item.optional_vars is not None:
                self.bind(item.optional_vars, v, st)
            taken.append((v, item))
        self.run(st.body)
        for blk, item in reversed(taken):
            self.release(blk, item)

    def release(self, blk: BlockV, node: ast.AST) -> None:
        op = Push(blk.dfb.index, 1) if blk.mode == "reserve" else Pop(blk.dfb.index, 1)
        self.out.append(_Item(op, self.loc(node)))
        self.held.pop(id(blk), None)

    # -- calls
    def call(self, node: ast.Call, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(fn, tuple) and len(fn) == 3 and fn[0] == "method":
            return self.method(node, fn[1], fn[2], args, kwargs)
        if not isinstance(fn, ApiV):
            return self.refuse_value(node.func, "this call cannot be read statically")
        name = fn.name
        if name.startswith("builtins."):
            return builtin(self, node, name.split(".", 1)[1], args)
        if name == "ttl.node":
            return self._node_coords(node, kwargs.get("dims", args[0] if args else 2))
        if name == "ttl.grid_size":
            return grid_value(self, node, self.grid, kwargs.get("dims", args[0] if args else 2))
        if name == "ttl.copy":
            return self.copy(node, args, kwargs)
        if name in ("ttl.Pipe", "ttl.PipeNet"):
            if name == "ttl.PipeNet":
                return self.refuse_value(node, "a pipe net built inside a kernel (build it in the operation body, "
                                               "where every kernel sees it)")
            return pipe_call(self, node, name, args, kwargs, self.grid, self.nets)
        if name == "ttl.block.fill":
            return ExprV(("fill",), ())
        if name.startswith(("ttl.math.", "ttl.block.")):
            if not vocabulary.known(name):
                return self.refuse_value(node, f"{name} is not a function of TT-Lang's {name.rsplit('.', 1)[0]}")
            ops = block_operands(*args, *[v for k, v in kwargs.items() if k not in ("dims", "shape")])
            if ops is None:
                return self.refuse_value(node, f"{name} of an operand that is not a block")
            return ExprV((*ops[0], name.rsplit(".", 1)[1]), ops[1])
        return self.refuse_value(node, f"{name} is not lowered")

    def _node_coords(self, node: ast.Call, dims: Any) -> Any:
        """``ttl.node(dims)`` as the vendor's ``sim/nodecontext.py`` computes it: the leading axes flattened into
        the first when ``dims`` is below the grid's rank, zeros appended above it."""
        if not (isinstance(dims, int) and dims >= 1):
            return self.refuse_value(node, "ttl.node(dims=...) of a positive integer")
        coords = list(self.node)
        if dims < len(coords):
            flat = coords[0]
            for i in range(1, len(coords) - dims + 1):
                flat = flat * self.grid[i] + coords[i]
            coords = [flat, *coords[len(coords) - dims + 1:]]
        coords += [0] * (dims - len(coords))
        return coords[0] if dims == 1 else tuple(coords)

    def method(self, node: ast.Call, obj: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if isinstance(obj, DfbV) and name in ("reserve", "wait") and not args:
            self.emit(Reserve(obj.index, 1) if name == "reserve" else Wait(obj.index, 1), node)
            blk = BlockV(obj, name)
            self.held[id(blk)] = (blk, node)
            self.depth[blk] = len(self.loops)
            return blk
        if isinstance(obj, BlockV) and name in ("push", "pop") and not args:
            if (name == "push") != (obj.mode == "reserve"):
                return self.refuse_value(node, f"{name}() of a block taken by {obj.mode}()")
            self.release(obj, node)
            return None
        if isinstance(obj, TxV) and name == "wait" and not args:
            if obj.kind == "send":
                return None  # the send's ttl.wait lowers to a no-op: the send itself ends with its barriers
            if obj.kind == "receive":
                self.receive_wait(node, obj)
                return None
            self.emit(ReadBarrier() if obj.kind == "read" else WriteBarrier(), node)
            return None
        if isinstance(obj, NetV) and name in ("if_src", "if_dst") and len(args) == 1 and not kwargs:
            self.if_role(node, obj, name, args[0])
            return None
        if isinstance(obj, NetV) and name in ("is_src", "is_dst", "is_active") and not args and not kwargs:
            src = any(p.src == self.node for p in obj.pipes)
            dst = any(self.node in p.dests() for p in obj.pipes)
            return src if name == "is_src" else dst if name == "is_dst" else (src or dst)
        if isinstance(obj, BlockV) and name == "store" and len(args) == 1:
            return self.store(node, obj, args[0])
        return self.refuse_value(node, f".{name}() is not lowered")

    # -- pipes
    def if_role(self, node: ast.Call, net: NetV, name: str, fn: Any) -> None:
        """``net.if_src(fn)`` / ``net.if_dst(fn)``: ``fn``'s body inlined once per pipe of the net this node is the
        source (a destination) of, in the net's order, with its parameter bound to the pipe's identity (the vendor's
        ``PipeNet.if_src`` / ``if_dst`` call it so). The function's own names do not outlive the call."""
        if not isinstance(fn, LocalFnV):
            self.refuse_value(node, f"{name} of something other than a function defined in this kernel")
        f = fn.node
        params = [a.arg for a in f.args.args]
        if len(params) != 1 or f.args.vararg or f.args.kwarg or f.args.kwonlyargs or f.args.defaults:
            self.refuse_value(node, f"{name}'s function must take exactly one argument (the pipe identity)")
        role = "src" if name == "if_src" else "dst"
        for p in net.pipes:
            if (p.src == self.node) if role == "src" else (self.node in p.dests()):
                saved = dict(self.env)
                self.env[params[0]] = PipeIdV(p, role)
                try:
                    self.run(f.body)
                finally:
                    kept = {k: v for k, v in self.env.items() if k in saved and isinstance(v, (BlockV, TxV))
                            and v is not saved[k]}
                    self.env = {**saved, **kept}

    def device_suffix(self) -> str:
        """On a mesh of devices each device has its own shard of every tensor (the operation is SPMD over the
        devices): ``y@1,0`` is device (1, 0)'s ``y``."""
        return "" if len(self.grid) != 4 else f"@{self.node[0]},{self.node[1]}"

    def _use(self, pipe: Any, role: str, blk: BlockV) -> None:
        self.pipe_uses.setdefault((pipe.net, pipe.index), {}).setdefault(role, set()).add((blk.dfb.index, blk.dfb.name))

    def send(self, node: ast.Call, blk: BlockV, pid: PipeIdV) -> TxV:
        """The source's ``ttl.copy(blk, pipe)`` (``lowerPipeTransferSend``): wait for every receiver's post and
        reset the ready counter, write the block into their reserved blocks, then count the transfer complete at
        each of them."""
        assert self.plan is not None
        if pid.role != "src":
            self.refuse_value(node, "a copy into the pipe identity of an if_dst body (a destination receives)")
        if self.guarded:
            self.refuse_value(node, "a pipe send under a condition on a loop index")
        r = self.plan.of(pid.pipe)
        self._use(pid.pipe, "send", blk)
        expected = len(r.dests) if r.multicast else 1
        self.emit(SemWait(r.ready, WaitCond.EQ, expected), node)
        self.emit(SemSet(r.ready, 0), node)
        dests = self.plan.groups[r.group].destinations()
        self.emit(McastSend(blk.dfb.index, 1, r.group, len(dests), front=blk.mode == "wait"), node)
        self.emit(WriteBarrier(), node)
        if len(r.dests) == 1:
            self.emit(SemInc(r.completion, r.dests[0], 1), node)
        else:
            g = r.remote_group if r.remote_group is not None else r.group
            self.emit(SemIncMcast(r.completion, g, len(self.plan.groups[g].destinations()), 1), node)
            if r.remote_group is not None:
                self.emit(SemInc(r.completion, r.src, 1), node)
        self.emit(AtomicBarrier(), node)
        return TxV("send", pid.pipe)

    def receive(self, node: ast.Call, pid: PipeIdV, blk: BlockV) -> TxV:
        """A destination's ``ttl.copy(pipe, blk)`` (``lowerPipeTransferPost``): count itself ready at the source;
        the sequence number of this post is what its wait waits for."""
        assert self.plan is not None
        if pid.role != "dst":
            self.refuse_value(node, "a copy out of the pipe identity of an if_src body (a source sends)")
        if blk.mode != "reserve":
            self.refuse_value(node, "a pipe receive into a block taken by wait() (it receives into a reserved block)")
        if self.guarded:
            self.refuse_value(node, "a pipe receive under a condition on a loop index")
        self._fill(node, blk, "receive")
        r = self.plan.of(pid.pipe)
        self._use(pid.pipe, "receive", blk)
        self.emit(SemInc(r.ready, r.src, 1), node)
        if any(f.get(r.completion, 0) is None for f in self.posts):
            self.refuse_value(node, "a pipe receive after a loop whose count is a --range trip with receives on the "
                                    "same pipe inside an enclosing loop (its sequence number is not affine)")
        self.posts[-1][r.completion] = (self.posts[-1].get(r.completion) or 0) + 1
        seq = sum(f.get(r.completion) or 0 for f in self.posts)
        return TxV("receive", (pid.pipe, r.completion, seq, len(self.posts)))

    def receive_wait(self, node: ast.Call, tx: TxV) -> None:
        _pipe, sem, seq, depth = tx.pipe
        if depth != len(self.posts):
            self.refuse_value(node, "a pipe receive's wait in another loop than its copy")
        self.emit(AtomicBarrier(), node)
        item = _Item(SemWait(sem, WaitCond.GE, seq), self.loc(node))
        self.out.append(item)
        self.pending[-1].append((item, sem))

    def copy(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> TxV:
        tx = self._copy(node, args, kwargs)
        if (node.lineno, node.col_offset) in self.unwaited:
            # TT-Lang's compiler waits for a transfer no wait uses right after its copy (ttl-insert-copy-wait)
            if tx.kind == "receive":
                self.receive_wait(node, tx)
            elif tx.kind in ("read", "write"):
                self.emit(ReadBarrier() if tx.kind == "read" else WriteBarrier(), node)
            # a send's wait is a no-op: the send ends with its own barriers
        return tx

    def _copy(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> TxV:
        if len(args) != 2 or kwargs:
            self.refuse_value(node, "ttl.copy takes a source and a destination")
        src, dst = args
        if isinstance(src, BlockV) and isinstance(dst, PipeIdV):
            return self.send(node, src, dst)
        if isinstance(src, PipeIdV) and isinstance(dst, BlockV):
            return self.receive(node, src, dst)
        if isinstance(src, TensorV):
            src = SliceV(src, (0, src.shape[0]), (0, src.shape[1]))
        if isinstance(dst, TensorV):
            dst = SliceV(dst, (0, dst.shape[0]), (0, dst.shape[1]))
        if isinstance(src, SliceV) and isinstance(dst, BlockV):
            if dst.mode != "reserve":
                self.refuse_value(node, "a copy into a block taken by wait() (its pages hold data to read)")
            self._fill(node, dst, "read")
            self._rows(node, src, dst, read=True)
            self.read_tensors.add(src.tensor.name)
            return TxV("read")
        if isinstance(src, BlockV) and isinstance(dst, SliceV):
            if src.mode != "wait":
                self.refuse_value(node, "a copy out of a block taken by reserve() (it holds no data yet)")
            self._rows(node, dst, src, read=False)
            self.written.add(dst.tensor.name)
            return TxV("write")
        what = "a copy between two blocks" if isinstance(src, BlockV) and isinstance(dst, BlockV) else \
            "a copy that is not tensor slice -> block or block -> tensor slice"
        refuse(self.file, node, snippet(node), f"{what} is not lowered")

    def _fill(self, node: ast.Call, blk: BlockV, kind: str) -> None:
        """A copy of ``kind`` ("read": from a tensor, "receive": from a pipe) that fills reserved block ``blk`` whole;
        refuses a second copy of that kind into it.

        The hardware writes every copy into a block at the block's address: the write pointer moves only at the push
        (``get_write_ptr`` is the reserved back until ``cb_push_back``, ttnn 0.81.1
        ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:309-312``), so a second copy rewrites the same pages. A ReadTiles
        fills the next unfilled tiles and cannot say "these tiles again" (read so, a correct kernel was refuted
        ``cb-write-unreserved``); a second pipe landing into pages not yet published is ``mcast-slot``, a race unless
        both carry the same data, which program.json does not say. A receive after a read (a source among its pipe's
        destinations) lands at the block's own pages, as program.json's multicast does: lowered. tt-lang-sim 1.1.6
        refuses a copy into a reserved block once its first copy was waited for (state MR takes a push or a copy
        out, not a copy in: ``ttl/sim/blockstate.py``, ``STATE_TRANSITIONS``)."""
        first = self.filled.get((blk, kind))
        if first is not None:
            # one line twice: a function net.if_src / if_dst runs once per pipe of the net
            where = f"the first at line {first.lineno}" if first is not node else "this line ran already, for an " \
                                                                                  "earlier pipe of the net"
            refuse(self.file, node, snippet(node), f"a second copy into one block ({where}): both write the block's "
                                                   "pages, which program.json cannot say")
        if any(n != 1 for _, n in self.loops[self.depth.get(blk, 0):]):
            refuse(self.file, node, snippet(node), f"a copy into a block in a loop inside the block's "
                                                   f"{blk.dfb.name}.reserve(): each iteration copies into the same "
                                                   "block again, which program.json cannot say")
        # a copy under a guard counts too: refusing a later copy the guard may leave the only one is safe
        self.filled[blk, kind] = node

    def _rows(self, node: ast.Call, sl: SliceV, blk: BlockV, read: bool) -> None:
        rows = V.add(sl.rows[1], sl.rows[0], -1)
        cols = V.add(sl.cols[1], sl.cols[0], -1)
        if (rows, cols) != (blk.dfb.rows, blk.dfb.cols):
            refuse(self.file, node, snippet(node), f"copies a {_txt(rows)}x{_txt(cols)} tile slice of "
                                                   f"{sl.tensor.name} into a {blk.dfb.rows}x{blk.dfb.cols} block: "
                                                   "the slice must have the block's shape")
        lay = self.layouts[sl.tensor.name]
        # one op per run of consecutive tiles: a tile row of the block (row-major), or a tile column (column-major)
        outer, inner = (sl.cols[0], sl.rows[0]) if lay.transposed else (sl.rows[0], sl.cols[0])
        runs, run = (blk.dfb.cols, blk.dfb.rows) if lay.transposed else (blk.dfb.rows, blk.dfb.cols)
        for r in range(runs):
            at = V.aff(V.add(V.scale(V.add(outer, r), lay.stride), inner))
            # a part affine in a --range parameter (a node's share of a grid moves with it) is a term of its trip
            addr = Addr(at.const, tuple(Term(v, c) for v, c in (*at.terms, *at.syms)))
            name = sl.tensor.name + self.device_suffix()
            if read:
                self.emit(ReadTiles(name, addr, run, blk.dfb.index), node)
            else:
                self.emit(WriteTiles(blk.dfb.index, name, addr, run), node)

    def store(self, node: ast.Call, dst: BlockV, value: Any) -> None:
        if not self.is_compute:
            self.refuse_value(node, "store() in a data-movement kernel (block math runs on the compute engine)")
        if dst.mode != "reserve":
            self.refuse_value(node, "store() into a block taken by wait() (store fills a reserved block)")
        ops = block_operands(value)
        if ops is None or not isinstance(value, (BlockV, ExprV)):
            self.refuse_value(node, "store() of a value that is not a block expression")
        kinds, blocks = ops  # type: ignore[misc]
        for b in blocks:
            if b.mode != "wait":
                self.refuse_value(node, f"block math reading {b.dfb.name}'s reserved block (it holds no data)")
        ins: list[Operand] = []
        for b in blocks:
            if all(o.buf != b.dfb.index for o in ins):
                ins.append(Operand(b.dfb.index, 1))
        kind = "+".join(dict.fromkeys(kinds)) or "copy"
        cap = self.target.acc_capacity(dst.dfb.tensor.dtype)
        left = dst.dfb.tiles
        while left > 0:
            n = min(cap, left)
            self.emit(AcquireAcc(n, dst.dfb.tensor.dtype), node)
            self.emit(Compute(kind, n, tuple(ins)), node)
            self.emit(PackAcc(dst.dfb.index, n), node)
            self.emit(ReleaseAcc(), node)
            left -= n

    # -- the result
    def finish(self) -> tuple[tuple[Op, ...], Sources]:
        """The kernel's ops and their source locations; refuses a block taken and never released here."""
        for blk, node in self.held.values():
            release = "push()" if blk.mode == "reserve" else "pop()"
            # TT-Lang's compiler inserts the missing release after the block's last use (ttl-insert-cb-sync,
            # tt-lang lib/Dialect/TTL/Transforms/TTLInsertCBSync.cpp); the simulator releases it at the next take of
            # its buffer or the kernel's end. Neither placement is lowered: refused, never read as never released.
            self.refuse_value(node, f"a block taken by {blk.dfb.name}.{blk.mode}() with no {release} in this kernel: "
                                    "TT-Lang inserts that release after the block's last use, which is not lowered "
                                    f"(call {release} or take the block with `with`)")
        sources: list[tuple[OpPath, SourceLoc]] = []

        def build(items: list[_Item], path: tuple[int, ...]) -> tuple[Op, ...]:
            ops: list[Op] = []
            for i, it in enumerate(items):
                p = (*path, i)
                sources.append((p, it.loc))
                op = it.op
                if it.body is not None:
                    op = attrs.evolve(op, body=build(it.body, p))
                ops.append(op)
            return tuple(ops)

        ops = build(self.out, ())
        return ops, tuple(sorted(sources, key=lambda e: e[0]))


def unwaited_copies(fn: ast.FunctionDef) -> frozenset[tuple[int, int]]:
    """(line, column) of the ``ttl.copy`` calls in kernel ``fn`` whose transfer handle no ``wait()`` uses: a copy
    whose value is dropped (a bare ``ttl.copy(...)`` statement) or assigned to a name with no ``name.wait()`` before
    the name is bound again (source order; a loop-carried handle is refused elsewhere). TT-Lang's compiler inserts a
    wait right after each such copy (tt-lang ``lib/Dialect/TTL/Transforms/TTLInsertCopyWait.cpp``: "Inserts missing
    ttl.wait for asynchronous copy operations whose transfer handle has no wait user. The wait is placed immediately
    after the copy", run early in ``createTTLToTTKernelPipeline``, before the pipes are lowered), and the simulator
    mirrors it (tt-lang-sim 1.1.6 ``ttl/sim/analysis.py``, Python 3.12+). A handle used any other way (passed on, kept
    in a tuple) is taken as waited: no wait is added, so nothing is proved that the hardware does not wait for."""
    def pos(n: ast.AST) -> tuple[int, int]:
        return (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))

    out: set[tuple[int, int]] = set()
    stores: dict[str, list[tuple[tuple[int, int], ast.AST]]] = {}
    waits: dict[str, list[tuple[int, int]]] = {}
    assigned: list[tuple[ast.expr, str, ast.AST]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores.setdefault(node.id, []).append((pos(node), node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "wait" \
                and isinstance(node.func.value, ast.Name) and not node.args:
            waits.setdefault(node.func.value.id, []).append(pos(node))
        elif isinstance(node, ast.Expr) and _is_copy(node.value):
            out.add(pos(node.value))
        elif isinstance(node, ast.Assign) and _is_copy(node.value) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            assigned.append((node.value, node.targets[0].id, node.targets[0]))
    for call, name, target in assigned:
        start = pos(call)
        later = [p for p, n in stores.get(name, []) if n is not target and p > start]
        end = min(later) if later else (1 << 30, 0)
        if not any(start < w < end for w in waits.get(name, [])):
            out.add(start)
    return frozenset(out)


def _is_copy(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "ttl.copy"


def _stores(stmts: list[ast.stmt]) -> set[str]:
    """The names ``stmts`` assign (kernel definitions excluded)."""
    out: set[str] = set()
    for st in stmts:
        for node in ast.walk(st):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def _events(node: ast.AST) -> list[tuple[str, bool, ast.AST]]:
    """(name, is_store, node) of every use of a name under ``node``, in the order Python evaluates them."""
    if isinstance(node, ast.Assign):
        return [*_events(node.value), *(e for t in node.targets for e in _events(t))]
    if isinstance(node, ast.AnnAssign):
        return [*(_events(node.value) if node.value is not None else []), *_events(node.target)]
    if isinstance(node, ast.AugAssign):
        t = node.target
        load = [(t.id, False, node)] if isinstance(t, ast.Name) else []
        return [*load, *_events(node.value), *_events(t)]
    if isinstance(node, ast.For):
        return [*_events(node.iter), *_events(node.target), *(e for s in node.body for e in _events(s))]
    if isinstance(node, ast.With):
        out: list[tuple[str, bool, ast.AST]] = []
        for item in node.items:
            out += _events(item.context_expr)
            if item.optional_vars is not None:
                out += _events(item.optional_vars)
        return out + [e for s in node.body for e in _events(s)]
    if isinstance(node, ast.If):
        return [*_events(node.test), *(e for s in node.body + node.orelse for e in _events(s))]
    if isinstance(node, ast.Name):
        return [(node.id, isinstance(node.ctx, ast.Store), node)]
    return [e for child in ast.iter_child_nodes(node) for e in _events(child)]


def _carried(body: list[ast.stmt], bound: set[str]) -> tuple[str, ast.AST] | None:
    """A name bound before the loop that its body reads before assigning it (its value would carry from one
    iteration to the next), with the read; None when there is none."""
    stored = _stores(body) & bound
    first: dict[str, tuple[bool, ast.AST]] = {}
    for s in body:
        for name, store, node in _events(s):
            first.setdefault(name, (store, node))
    for name in sorted(stored):
        store, node = first[name]
        if not store:
            return name, node
    return None


def _txt(v: Any) -> str:
    return str(v) if isinstance(v, int) else "?"


def grid_value(ev: Evaluator, node: ast.AST, grid: tuple[int, ...], dims: Any) -> Any:
    """``ttl.grid_size(dims)`` as the vendor's ``sim/nodecontext.grid_size`` computes it: below the grid's rank the
    trailing axes are flattened into the last one kept (all of them for ``dims`` 1), above it ones are appended."""
    if not (isinstance(dims, int) and dims >= 1):
        return ev.refuse_value(node, "ttl.grid_size(dims=...) of a positive integer")
    if dims >= len(grid):
        out = (*grid, *(1,) * (dims - len(grid)))
    else:
        flat = 1
        for g in grid[dims - 1:]:
            flat *= g
        out = (*grid[: dims - 1], flat)
    return out[0] if dims == 1 else out
