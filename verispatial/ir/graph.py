"""The model graph: the compiler's input (DESIGN §3). Named tensors with shapes, dtypes and roles, and ops.

Ops for now: ``matmul`` (``inputs = [a, b]``, ``a`` is M x K, ``b`` is K x N — or N x K with ``transpose_b``, read
transposed: ``a @ b^T``, as a tied LM head reads the embedding table — the output M x N) with an optional fused
``chain`` applied to each output tile in order — ``{"op": "bias", "tensor": name}`` (a length-N row broadcast over
the rows), ``{"op": "relu" | "gelu" | "silu"}``, ``{"op": "requantize", "dtype": d}`` (pack in ``d``, which must be
the output's dtype) — and elementwise ``unary`` (``fn`` in ``UNARY_FNS``) and ``binary`` (``fn`` in ``BINARY_FNS``,
operands of one shape), and ``rmsnorm`` (``inputs = [x, weight]``: each row of ``x`` divided by its root mean square,
times the length-N ``weight``; a fold: the sum of squares is carried across the row's K blocks), ``gather``
(``inputs = [table, index]``: output tile row ``r`` is the table's tile row ``index[r]``, an indirect read — an
embedding lookup) and ``scatter`` (``inputs = [src, index]``, ``output`` a ``state`` tensor: the src's tile rows are
written at tile row ``index`` of the output — a KV-cache update at a runtime position), ``softmax`` (``inputs = [x]``:
each row of ``x`` exponentiated and divided by its sum, after subtracting its max; a fold with two carries, the
running max and the running sum) and ``attention`` (``inputs = [q, k_cache, v_cache]``, one decode step: ``q`` is one
row of ``heads`` heads, the caches ``[max_seq, kv_heads * head_dim]``; query head ``h`` attends with kv head
``h // (heads / kv_heads)`` to the cache's first positions, as many KV blocks (one tile row of positions each) as a
count read at run time says, at most ``max_seq`` positions; the output is one row like ``q``). Indices are ``int32``
or ``uint32`` and count tile rows; their range is every position that keeps the access inside its tensor.

Carried state: a ``state`` tensor outlives the step (DESIGN §3). An elementwise ``unary`` or ``binary`` op whose output
is a ``state`` tensor may also name it among its inputs — an in-place update ``s = fn(s, x)`` that reads the state's
old value and writes its new value in the same step (a decay or recurrent memory). Each tile's old value is read
before that tile is rewritten; the section keeps the tensor's ``state`` role. No other op reads its own output.

Shapes are in elements; a 1-D shape ``[n]`` is the row ``[1, n]``. ``load_graph`` checks the document against
``graph.schema.json`` first, then the relations between entities (``check_graph``); both raise ``ParseError``
naming the field or entity and the rule. ``GraphBuilder`` builds the same graph from Python.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from verispatial.errors import ParseError
from verispatial.ir.core import Role
from verispatial.ir.limits import U32, clip, name_rule
from verispatial.ir.serialize import check_schema, parse_json, read_document

FORMAT = "verispatial.graph"
VERSION = 1

DTYPES = ("bf16", "fp16", "fp32", "bfp8_b", "bfp4_b", "int32", "uint32")
ACTIVATIONS = ("relu", "gelu", "silu")
UNARY_FNS = ("relu", "gelu", "silu", "exp", "recip", "sqrt", "neg", "copy")
BINARY_FNS = ("add", "sub", "mul")
OP_KINDS = ("matmul", "unary", "binary", "rmsnorm", "gather", "scatter", "softmax", "attention")
INDEX_DTYPES = ("int32", "uint32")


@attrs.frozen
class GraphTensor:
    """A named tensor: ``shape`` in elements (1-D or 2-D), ``dtype`` one of ``DTYPES``, ``role``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: Role

    def dims2(self) -> tuple[int, int]:
        """(rows, cols) in elements: a 1-D tensor is one row."""
        return (1, self.shape[0]) if len(self.shape) == 1 else (self.shape[0], self.shape[1])


@attrs.frozen
class ChainStep:
    """One fused step after a matmul: ``op`` is ``bias`` (with ``tensor``), an activation, or ``requantize``
    (with ``dtype``)."""

    op: str
    tensor: str | None = None
    dtype: str | None = None


@attrs.frozen
class GraphOp:
    """One op of the graph; it becomes one section named ``name``."""

    name: str
    kind: str
    inputs: tuple[str, ...]
    output: str
    fn: str | None = None
    chain: tuple[ChainStep, ...] = ()
    #: An attention's query heads and key/value heads (grouped-query when fewer kv heads); None for other ops.
    heads: int | None = None
    kv_heads: int | None = None
    #: A matmul's b is stored N x K and read transposed (``a @ b^T``); False for every other op.
    transpose_b: bool = False


@attrs.frozen
class ModelGraph:
    """A model graph: ``tensors`` and ``ops`` in execution order."""

    name: str
    tensors: tuple[GraphTensor, ...]
    ops: tuple[GraphOp, ...]
    #: Where the graph's numbers come from: (what, public source) pairs, e.g. ("hidden_size 2048", "<config URL>").
    source: tuple[tuple[str, str], ...] = ()

    def tensor(self, name: str) -> GraphTensor:
        """The tensor called ``name``; ``KeyError`` if none."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)


def schema() -> dict[str, Any]:
    """The JSON Schema of the graph format, shipped as ``verispatial/ir/graph.schema.json``."""
    return json.loads(resources.files("verispatial.ir").joinpath("graph.schema.json").read_text())  # type: ignore[no-any-return]


def check_graph(g: ModelGraph) -> None:
    """Relations between the graph's entities; raises ``ParseError`` naming the first broken one."""
    # Names (limits.name_rule), the graph's own included; a section is named ``<graph>.<op>``, so that must fit too
    # (a fuzzed 300-character op name compiled into a program validate refused: a checker error).
    for what, name in [("graph", g.name), *((f"tensor #{i}", t.name) for i, t in enumerate(g.tensors)),
                       *((f"op #{i}", o.name) for i, o in enumerate(g.ops)),
                       *((f"op #{i}", f"{g.name}.{o.name}") for i, o in enumerate(g.ops))]:
        rule = name_rule(name)
        if rule is not None:
            if name.startswith(f"{g.name}.") and what.startswith("op") and name_rule(name[len(g.name) + 1:]) is None:
                rule = f"its section is named <graph>.<op>, {len(name)} characters: {rule}"
            raise ParseError(f"{what} {clip(ascii(name), 40)}", rule)
    names = Counter(t.name for t in g.tensors)  # counted once: a graph may list 10**5 tensors
    for t in g.tensors:
        if names[t.name] > 1:
            raise ParseError(f"tensor {clip(t.name)}", "tensor names are unique")
        if not 1 <= len(t.shape) <= 2 or any(d <= 0 for d in t.shape):
            raise ParseError(f"tensor {clip(t.name)}",
                             f"shape is 1-D or 2-D with positive dims, got {clip(str(list(t.shape)))}")
        if any(d > U32 for d in t.shape):
            raise ParseError(f"tensor {clip(t.name)}", f"shape {clip(str(list(t.shape)))} is too large for the model "
                                                       f"(every dim at most {U32} elements)")
        if t.dtype not in DTYPES:
            raise ParseError(f"tensor {t.name}", f"dtype {t.dtype!r} is not one of {list(DTYPES)}")
    by_name = {t.name: t for t in g.tensors}
    written: dict[str, str] = {}
    op_names = Counter(o.name for o in g.ops)
    for o in g.ops:
        e = f"op {clip(o.name)}"
        if op_names[o.name] > 1:
            raise ParseError(e, "op names are unique")
        for v in (o.heads, o.kv_heads):
            if v is not None and v > U32:
                raise ParseError(e, f"heads {clip(str(v))} is too large for the model (at most {U32})")
        for n in (*o.inputs, o.output, *(s.tensor for s in o.chain if s.tensor is not None)):
            if n not in by_name:
                raise ParseError(e, f"tensor {clip(repr(n))} is not declared")
        for n in dict.fromkeys((*o.inputs, *(s.tensor for s in o.chain if s.tensor is not None))):
            # Ops run in the order listed: an activation is read only after the op that writes it (so a cycle,
            # which no order can run, is refused at its first read). Reading its own output is refused below.
            if by_name[n].role == Role.ACTIVATION and n not in written and n != o.output:
                later = next((p.name for p in g.ops if p.output == n), None)
                raise ParseError(e, f"reads activation {n!r} before any op writes it" + (
                    f" (op {later!r} writes it later; ops run in the order listed)" if later else " (no op writes it)"))
        if o.output in written:
            raise ParseError(e, f"tensor {o.output!r} is already written by op {written[o.output]!r}")
        written[o.output] = o.name
        out = by_name[o.output]
        if out.role in (Role.INPUT, Role.PARAM):
            raise ParseError(e, f"writes {out.role.value} tensor {o.output!r}")
        in_place = o.output in o.inputs
        if in_place and (out.role != Role.STATE or o.kind not in ("unary", "binary")):
            raise ParseError(e, f"reads its own output {o.output!r} (only a unary or binary op updates a state "
                                "tensor in place)")
        if any(s.tensor == o.output for s in o.chain):
            raise ParseError(e, f"reads its own output {o.output!r}")
        if o.kind != "attention" and (o.heads is not None or o.kv_heads is not None):
            raise ParseError(e, "heads and kv_heads belong to an attention op only")
        if o.kind != "matmul" and o.transpose_b:
            raise ParseError(e, "transpose_b belongs to a matmul only")
        if o.kind == "matmul":
            _check_matmul(g, o, by_name)
        elif o.kind == "unary":
            if len(o.inputs) != 1 or o.fn not in UNARY_FNS:
                raise ParseError(e, f"a unary op has one input and fn in {list(UNARY_FNS)}, got {len(o.inputs)} inputs, fn {o.fn!r}")
            _same_shape(e, [by_name[o.inputs[0]], out])
        elif o.kind == "binary":
            if len(o.inputs) != 2 or o.fn not in BINARY_FNS:
                raise ParseError(e, f"a binary op has two inputs and fn in {list(BINARY_FNS)}, got {len(o.inputs)} inputs, fn {o.fn!r}")
            _same_shape(e, [by_name[n] for n in o.inputs] + [out])
        elif o.kind == "rmsnorm":
            if len(o.inputs) != 2 or o.fn is not None or o.chain:
                raise ParseError(e, f"an rmsnorm has two inputs [x, weight], no fn and no chain, got {len(o.inputs)} inputs")
            x, w = by_name[o.inputs[0]], by_name[o.inputs[1]]
            _same_shape(e, [x, out])
            if w.dims2() != (1, x.dims2()[1]):
                raise ParseError(e, f"an rmsnorm weight has shape [{x.dims2()[1]}] or [1, {x.dims2()[1]}], "
                                    f"got {list(w.dims2())}")
        elif o.kind in ("gather", "scatter"):
            if len(o.inputs) != 2 or o.fn is not None or o.chain:
                raise ParseError(e, f"a {o.kind} has two inputs [{'table' if o.kind == 'gather' else 'src'}, index], "
                                    f"no fn and no chain, got {len(o.inputs)} inputs")
            data, ix = by_name[o.inputs[0]], by_name[o.inputs[1]]
            if ix.dtype not in INDEX_DTYPES or len(ix.shape) != 1:
                raise ParseError(e, f"index {ix.name!r} is a 1-D tensor of {' or '.join(INDEX_DTYPES)}, "
                                    f"got {list(ix.shape)} {ix.dtype}")
            if data.dims2()[1] != out.dims2()[1]:
                raise ParseError(e, f"{data.name!r} and {out.name!r} have one row width, got {data.dims2()[1]} and "
                                    f"{out.dims2()[1]}")
            small, big = (out, data) if o.kind == "gather" else (data, out)
            if small.dims2()[0] > big.dims2()[0]:
                raise ParseError(e, f"{small.name!r} has more rows than {big.name!r}")
            if o.kind == "scatter" and out.role != Role.STATE:
                raise ParseError(e, f"a scatter writes a state tensor, {out.name!r} is {out.role.value}")
        elif o.kind == "softmax":
            if len(o.inputs) != 1 or o.fn is not None or o.chain:
                raise ParseError(e, f"a softmax has one input [x], no fn and no chain, got {len(o.inputs)} inputs")
            _same_shape(e, [by_name[o.inputs[0]], out])
        elif o.kind == "attention":
            _check_attention(o, by_name)
        else:
            raise ParseError(e, f"kind {o.kind!r} is not one of {list(OP_KINDS)}")
    for t in g.tensors:
        if t.role in (Role.ACTIVATION, Role.OUTPUT) and t.name not in written:
            raise ParseError(f"tensor {t.name}", f"an {t.role.value} tensor is written by some op; none writes it")


def _check_attention(o: GraphOp, by_name: dict[str, GraphTensor]) -> None:
    e = f"op {o.name}"
    if len(o.inputs) != 3 or o.fn is not None or o.chain:
        raise ParseError(e, f"an attention has three inputs [q, k_cache, v_cache], no fn and no chain, got "
                            f"{len(o.inputs)} inputs")
    if o.heads is None or o.kv_heads is None or o.heads < 1 or o.kv_heads < 1 or o.heads % o.kv_heads:
        raise ParseError(e, f"an attention names heads and kv_heads, heads a multiple of kv_heads, got heads "
                            f"{o.heads}, kv_heads {o.kv_heads}")
    q, k, v, out = (by_name[n].dims2() for n in (*o.inputs, o.output))
    if q[0] != 1:
        raise ParseError(e, f"an attention is one decode step: q has one row, got {q[0]}")
    if q[1] % o.heads:
        raise ParseError(e, f"q's {q[1]} columns are not {o.heads} heads of one width")
    hd = q[1] // o.heads
    if k != v or k[1] != o.kv_heads * hd:
        if k[1] != o.kv_heads * hd:
            which = f"k_cache's columns {k[1]} != kv_heads x head_dim = {o.kv_heads * hd}"
        elif v[1] != k[1]:
            which = f"v_cache's columns {v[1]} != k_cache's columns {k[1]}"
        else:
            which = f"v_cache's rows (max_seq) {v[0]} != k_cache's rows {k[0]}"
        raise ParseError(e, f"k_cache and v_cache have shape [max_seq, {o.kv_heads * hd}] (kv_heads x head_dim "
                            f"{hd}), got {list(k)} and {list(v)}: {which}")
    if out != q:
        which = (f"the output's rows {out[0]} != q's rows {q[0]}" if out[0] != q[0]
                 else f"the output's columns {out[1]} != q's columns {q[1]}")
        raise ParseError(e, f"the output has q's shape {list(q)}, got {list(out)}: {which}")


def _same_shape(e: str, ts: list[GraphTensor]) -> None:
    shapes = {t.dims2() for t in ts}
    if len(shapes) > 1:
        first = ts[0]
        other = next(t for t in ts if t.dims2() != first.dims2())
        dim = 0 if other.dims2()[0] != first.dims2()[0] else 1
        word = ("rows", "columns")[dim]
        raise ParseError(e, "operands and output have one shape (no broadcasting), got "
                         + ", ".join(f"{t.name} {list(t.dims2())}" for t in ts)
                         + f": {other.name}'s {word} {other.dims2()[dim]} != {first.name}'s {word} {first.dims2()[dim]}")


def _matmul_dim(o: GraphOp, a: tuple[int, int], out: tuple[int, int], k_b: tuple[int, str],
                n_b: tuple[int, str]) -> str:
    """The first mismatched dimension of ``out = a @ b``, named (K, M or N) with both sides' values."""
    an, bn = o.inputs[0], o.inputs[1]
    if a[1] != k_b[0]:
        return f"K: {an}'s columns {a[1]} != {bn}'s {k_b[1]} {k_b[0]}"
    if out[0] != a[0]:
        return f"M: {o.output}'s rows {out[0]} != {an}'s rows {a[0]}"
    return f"N: {o.output}'s columns {out[1]} != {bn}'s {n_b[1]} {n_b[0]}"


def _check_matmul(g: ModelGraph, o: GraphOp, by_name: dict[str, GraphTensor]) -> None:
    e = f"op {o.name}"
    if len(o.inputs) != 2 or o.fn is not None:
        raise ParseError(e, f"a matmul has two inputs [a, b] and no fn, got {len(o.inputs)} inputs")
    a, b, out = by_name[o.inputs[0]].dims2(), by_name[o.inputs[1]].dims2(), by_name[o.output].dims2()
    if o.transpose_b:
        if a[1] != b[1] or out != (a[0], b[0]):
            raise ParseError(e, f"shapes do not multiply: {list(a)} @ {list(b)}^T -> {list(out)}, expected "
                                f"{[a[0], b[0]]} (transpose_b: b is N x K): "
                                + _matmul_dim(o, a, out, k_b=(b[1], "columns"), n_b=(b[0], "rows")))
    elif a[1] != b[0] or out != (a[0], b[1]):
        raise ParseError(e, f"shapes do not multiply: {list(a)} @ {list(b)} -> {list(out)}, expected {[a[0], b[1]]}: "
                            + _matmul_dim(o, a, out, k_b=(b[0], "rows"), n_b=(b[1], "columns")))
    seen: set[str] = set()
    for i, s in enumerate(o.chain):
        w = f"{e} chain[{i}]"
        if s.op in seen:
            raise ParseError(w, f"{s.op!r} appears twice in the chain")
        seen.add(s.op)
        if s.op == "bias":
            if s.tensor is None or by_name[s.tensor].dims2() != (1, out[1]):
                got = None if s.tensor is None else list(by_name[s.tensor].dims2())
                raise ParseError(w, f"a bias is a tensor of shape [{out[1]}] or [1, {out[1]}], got {got}")
        elif s.op == "requantize":
            if s.dtype != by_name[o.output].dtype:
                raise ParseError(w, f"requantize dtype {s.dtype!r} must be the output's dtype {by_name[o.output].dtype!r}")
        elif s.op not in ACTIVATIONS:
            raise ParseError(w, f"chain op {s.op!r} is not bias, requantize or one of {list(ACTIVATIONS)}")
    if len(seen & set(ACTIVATIONS)) > 1:
        raise ParseError(e, "at most one activation in a chain")


def graph_to_dict(g: ModelGraph) -> dict[str, Any]:
    """The JSON object of ``g`` (defaults omitted)."""
    def op(o: GraphOp) -> dict[str, Any]:
        d: dict[str, Any] = {"name": o.name, "kind": o.kind, "inputs": list(o.inputs), "output": o.output}
        if o.fn is not None:
            d["fn"] = o.fn
        if o.chain:
            d["chain"] = [{k: v for k, v in (("op", s.op), ("tensor", s.tensor), ("dtype", s.dtype)) if v is not None}
                          for s in o.chain]
        if o.heads is not None:
            d["heads"] = o.heads
        if o.kv_heads is not None:
            d["kv_heads"] = o.kv_heads
        if o.transpose_b:
            d["transpose_b"] = True
        return d

    d: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "name": g.name,
    }
    if g.source:
        d["source"] = dict(g.source)
    return d | {
        "tensors": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "role": t.role.value} for t in g.tensors],
        "ops": [op(o) for o in g.ops],
    }


def graph_from_dict(d: Any) -> ModelGraph:
    """Build and check a graph from its JSON object; ``ParseError`` names the first bad field and its rule."""
    check_schema(d, schema())
    g = ModelGraph(
        source=tuple(d.get("source", {}).items()),
        name=d["name"],
        tensors=tuple(GraphTensor(t["name"], tuple(t["shape"]), t["dtype"], Role(t["role"])) for t in d["tensors"]),
        ops=tuple(
            GraphOp(o["name"], o["kind"], tuple(o["inputs"]), o["output"], o.get("fn"),
                    tuple(ChainStep(s["op"], s.get("tensor"), s.get("dtype")) for s in o.get("chain", [])),
                    o.get("heads"), o.get("kv_heads"), bool(o.get("transpose_b", False)))
            for o in d["ops"]
        ),
    )
    check_graph(g)
    return g


def load_graph(path: str | Path) -> ModelGraph:
    """Read, schema-check and check ``path``; ``ParseError`` for a missing, unreadable or malformed file."""
    return graph_from_dict(parse_json(read_document(path, "a model graph .json file")))


def dumps_graph(g: ModelGraph) -> str:
    """``g`` as indented JSON text."""
    return json.dumps(graph_to_dict(g), indent=1)


@attrs.define
class GraphBuilder:
    """Build a ``ModelGraph`` from Python; ``build()`` checks it (``ParseError``)."""

    name: str
    _tensors: list[GraphTensor] = attrs.field(factory=list)
    _ops: list[GraphOp] = attrs.field(factory=list)
    _source: list[tuple[str, str]] = attrs.field(factory=list)

    def cite(self, what: str, where: str) -> None:
        """Record that ``what`` (a number the graph uses) comes from the public source ``where``."""
        self._source.append((what, where))

    def tensor(self, name: str, shape: tuple[int, ...] | list[int], dtype: str = "bf16", role: Role | str = Role.ACTIVATION) -> str:
        """Declare a tensor; returns its name."""
        self._tensors.append(GraphTensor(name, tuple(shape), dtype, Role(role)))
        return name

    def matmul(self, name: str, a: str, b: str, out: str, *, bias: str | None = None, activation: str | None = None,
               requantize: str | None = None) -> str:
        """``out = requantize(activation(a @ b + bias))``, each part optional, in that order; returns ``out``."""
        chain: list[ChainStep] = []
        if bias is not None:
            chain.append(ChainStep("bias", tensor=bias))
        if activation is not None:
            chain.append(ChainStep(activation))
        if requantize is not None:
            chain.append(ChainStep("requantize", dtype=requantize))
        self._ops.append(GraphOp(name, "matmul", (a, b), out, None, tuple(chain)))
        return out

    def matmul_transposed(self, name: str, a: str, b: str, out: str) -> str:
        """``out = a @ b^T`` with ``b`` stored N x K (``transpose_b``): nn.Linear's weight layout, or a tied LM head
        reading the embedding table; returns ``out``."""
        self._ops.append(GraphOp(name, "matmul", (a, b), out, transpose_b=True))
        return out

    def unary(self, name: str, fn: str, x: str, out: str) -> str:
        """``out = fn(x)`` elementwise; returns ``out``."""
        self._ops.append(GraphOp(name, "unary", (x,), out, fn))
        return out

    def binary(self, name: str, fn: str, x: str, y: str, out: str) -> str:
        """``out = fn(x, y)`` elementwise; returns ``out``. ``out`` may be ``x`` or ``y`` when it is a ``state``
        tensor: the carried state updated in place."""
        self._ops.append(GraphOp(name, "binary", (x, y), out, fn))
        return out

    def rmsnorm(self, name: str, x: str, weight: str, out: str) -> str:
        """``out = x / sqrt(mean(x^2 over each row) + eps) * weight``; returns ``out``."""
        self._ops.append(GraphOp(name, "rmsnorm", (x, weight), out))
        return out

    def gather(self, name: str, table: str, index: str, out: str) -> str:
        """``out[r] = table[index[r]]`` over tile rows; returns ``out``."""
        self._ops.append(GraphOp(name, "gather", (table, index), out))
        return out

    def scatter(self, name: str, src: str, index: str, state: str) -> str:
        """``state[index + r] = src[r]`` over tile rows; returns ``state``."""
        self._ops.append(GraphOp(name, "scatter", (src, index), state))
        return state

    def softmax(self, name: str, x: str, out: str) -> str:
        """``out = exp(x - rowmax(x)) / rowsum(exp(x - rowmax(x)))`` over each row; returns ``out``."""
        self._ops.append(GraphOp(name, "softmax", (x,), out))
        return out

    def attention(self, name: str, q: str, k_cache: str, v_cache: str, out: str, *, heads: int, kv_heads: int) -> str:
        """One decode step of grouped-query attention: per query head ``h``, ``softmax(q_h K^T / sqrt(d)) V`` over
        the cache's first positions (a count known at run time) of kv head ``h // (heads / kv_heads)``; returns
        ``out``."""
        self._ops.append(GraphOp(name, "attention", (q, k_cache, v_cache), out, heads=heads, kv_heads=kv_heads))
        return out

    def build(self) -> ModelGraph:
        g = ModelGraph(self.name, tuple(self._tensors), tuple(self._ops), tuple(self._source))
        check_graph(g)
        return g
