"""Hypothesis strategies for targets and model graphs (the compiler's input, ``verispatial/ir/graph.py``).

- ``targets()``: the shipped targets (Wormhole, Blackhole, the GPU class).
- ``single_op_graphs()``: a graph of one op of any kind of ``graph.OP_KINDS`` (plus the in-place state update).
- ``model_graphs()``: a random DAG of 1..``max_ops`` ops of every kind whose shapes fit: an op reads the graph's
  inputs and parameters or the activations earlier ops wrote (several ops may share one activation), state tensors
  are updated in place or written by a scatter, and every tensor written and never read is an output.
- ``misshapen_graphs()``: a graph of the same kind in which one op's output shape does not fit its operands;
  ``check_graph`` refuses it (``ParseError`` naming that op and the mismatched dimension).

Shapes are in elements; the default ``dims`` keep sections small (whole 32x32 tiles and ragged edges, padded up
by ``tile``). Larger dims draw shapes that do not fit a target's local memory: ``tile`` then refuses by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from hypothesis import strategies as st

from verispatial.ir.core import Role
from verispatial.ir.graph import ACTIVATIONS, BINARY_FNS, OP_KINDS, UNARY_FNS, GraphBuilder, GraphTensor, ModelGraph
from verispatial.ir.target import BLACKHOLE, GPU, WORMHOLE, Target

#: Element sizes (rows or columns): whole tiles and ragged edges for both 32x32 and 16x16 tiles.
DIMS = (8, 16, 32, 40, 64, 96, 128)
#: Float dtypes a graph tensor may take (``graph.DTYPES`` less the index dtypes).
FLOAT_DTYPES = ("bf16", "bf16", "fp32", "bfp8_b")
#: The graph kinds ``model_graphs`` draws: ``graph.OP_KINDS`` and ``state`` (a unary or binary op updating a
#: state tensor in place).
KINDS = (*OP_KINDS, "state")


def targets() -> st.SearchStrategy[Target]:
    """One of the shipped targets: Wormhole, Blackhole or the GPU class (``verispatial/ir/target.py``)."""
    return st.sampled_from((WORMHOLE, BLACKHOLE, GPU))


@st.composite
def single_op_graphs(draw: st.DrawFn, dims: Sequence[int] = DIMS) -> ModelGraph:
    """A graph of one op named ``op`` of any kind of ``KINDS``, over shapes drawn from ``dims`` (elements)."""
    return draw(model_graphs(max_ops=1, dims=dims, kinds=(draw(st.sampled_from(KINDS)),)))


@attrs.define
class _Pool:
    """The tensors of a graph being drawn: name -> (rows, cols, dtype), roles decided once every op is drawn."""

    shape: dict[str, tuple[int, int, str]] = attrs.Factory(dict)
    role: dict[str, Role] = attrs.Factory(dict)
    #: tensors an op may read: inputs and the activations earlier ops wrote
    readable: list[str] = attrs.Factory(list)
    read: set[str] = attrs.Factory(set)
    written: set[str] = attrs.Factory(set)
    #: tensors declared 1-D (``[n]``): indices, biases and weights
    flat: set[str] = attrs.Factory(set)

    def new(self, prefix: str, rows: int, cols: int, dtype: str, role: Role) -> str:
        name = f"{prefix}{len(self.shape)}"
        self.shape[name] = (rows, cols, dtype)
        self.role[name] = role
        return name


@st.composite
def _operand(draw: st.DrawFn, pool: _Pool, dims: Sequence[int], rows: int | None = None,
             cols: int | None = None) -> str:
    """A tensor to read: one an earlier op wrote or an input (of ``rows`` x ``cols`` when given), else a new input."""
    fits = [n for n in pool.readable if (rows is None or pool.shape[n][0] == rows) and (cols is None or
                                                                                          pool.shape[n][1] == cols)]
    if fits and draw(st.integers(0, 2)) > 0:
        name = draw(st.sampled_from(fits))
    else:
        r = rows if rows is not None else draw(st.sampled_from(dims))
        c = cols if cols is not None else draw(st.sampled_from(dims))
        name = pool.new("x", r, c, draw(st.sampled_from(FLOAT_DTYPES)), Role.INPUT)
        pool.readable.append(name)
    pool.read.add(name)
    return name


@st.composite
def model_graphs(draw: st.DrawFn, max_ops: int = 3, dims: Sequence[int] = DIMS, kinds: Sequence[str] = KINDS,
                 read_states: bool = True, name: str = "g") -> ModelGraph:
    """A model graph of 1..``max_ops`` ops (kinds from ``kinds``, a subset of ``KINDS``) whose shapes fit; ops are
    named ``op`` (one op) or ``op0``, ``op1``, ...; see the module docstring. With ``read_states`` a later op may read
    a state an earlier op wrote (the new version). ``build`` checks the graph (``check_graph``); raises
    ``ValueError`` for an unknown kind."""
    pool = _Pool()
    ops: list[tuple[str, str, dict[str, object]]] = []  # (kind, name, arguments)
    n_ops = draw(st.integers(1, max_ops))
    for i in range(n_ops):
        kind = draw(st.sampled_from(kinds))
        op_name = "op" if n_ops == 1 else f"op{i}"
        dt = draw(st.sampled_from(FLOAT_DTYPES))
        args: dict[str, object] = {}
        if kind == "matmul":
            a = draw(_operand(pool, dims))
            m, k, _ = pool.shape[a]
            n = draw(st.sampled_from(dims))
            args = {"a": a, "b": pool.new("w", k, n, draw(st.sampled_from(FLOAT_DTYPES)), Role.PARAM),
                    "out": pool.new("h", m, n, dt, Role.ACTIVATION)}
            if draw(st.booleans()):
                args["bias"] = pool.new("bias", 1, n, draw(st.sampled_from(FLOAT_DTYPES)), Role.PARAM)
                pool.flat.add(str(args["bias"]))
            args["activation"] = draw(st.sampled_from([None, *ACTIVATIONS]))
            args["requantize"] = dt if draw(st.booleans()) else None
        elif kind in ("unary", "softmax"):
            x = draw(_operand(pool, dims))
            m, n, _ = pool.shape[x]
            args = {"x": x, "out": pool.new("h", m, n, dt, Role.ACTIVATION)}
            if kind == "unary":
                args["fn"] = draw(st.sampled_from(UNARY_FNS))
        elif kind in ("binary", "state"):
            x = draw(_operand(pool, dims))
            m, n, _ = pool.shape[x]
            if kind == "binary":
                y = x if draw(st.integers(0, 3)) == 0 else draw(_operand(pool, dims, m, n))
                out = pool.new("h", m, n, dt, Role.ACTIVATION)
            else:
                # A carried state updated in place: s = fn(s, x).
                y = out = pool.new("s", m, n, dt, Role.STATE)
                x, y = (out, x) if draw(st.booleans()) else (x, out)
            args = {"fn": draw(st.sampled_from(BINARY_FNS)), "x": x, "y": y, "out": out}
        elif kind == "rmsnorm":
            x = draw(_operand(pool, dims))
            m, n, _ = pool.shape[x]
            args = {"x": x, "weight": pool.new("gamma", 1, n, draw(st.sampled_from(FLOAT_DTYPES)), Role.PARAM),
                    "out": pool.new("h", m, n, dt, Role.ACTIVATION)}
            pool.flat.add(str(args["weight"]))
        elif kind in ("gather", "scatter"):
            # The moved side has at most as many rows as the indexed side (the table or the state).
            index = pool.new("ix", 1, draw(st.sampled_from([1, 4, 32])), draw(st.sampled_from(["int32", "uint32"])),
                             Role.INPUT)
            pool.flat.add(index)
            if kind == "gather":
                m, n = draw(st.sampled_from(dims)), draw(st.sampled_from(dims))
                big = max(m, draw(st.sampled_from(dims)))
                args = {"table": pool.new("table", big, n, dt, Role.PARAM), "index": index,
                        "out": pool.new("h", m, n, dt, Role.ACTIVATION)}
            else:
                src = draw(_operand(pool, dims))
                m, n, sdt = pool.shape[src]
                big = max(m, draw(st.sampled_from(dims)))
                args = {"src": src, "index": index, "state": pool.new("s", big, n, sdt, Role.STATE)}
        elif kind == "attention":
            # One decode step: a single query row of heads x head_dim, a cache of seq positions per kv head.
            kv = draw(st.sampled_from([1, 2]))
            heads = kv * draw(st.sampled_from([1, 2, 3]))
            d = draw(st.sampled_from([32, 64]))
            seq = draw(st.sampled_from([32, 64, 128]))
            q = draw(_operand(pool, dims, 1, heads * d))
            cdt = pool.shape[q][2] if draw(st.booleans()) else dt
            args = {"q": q, "k_cache": pool.new("kc", seq, kv * d, cdt, Role.STATE),
                    "v_cache": pool.new("vc", seq, kv * d, cdt, Role.STATE),
                    "out": pool.new("h", 1, heads * d, dt, Role.ACTIVATION), "heads": heads, "kv_heads": kv}
        else:
            raise ValueError(f"unknown graph op kind {kind!r}, expected one of {list(KINDS)}")
        for role_arg in ("out", "state"):
            if isinstance(args.get(role_arg), str):
                written = str(args[role_arg])
                pool.written.add(written)
                # Later ops may read what this one wrote: an activation, or (``read_states``) a state.
                if read_states or pool.role[written] == Role.ACTIVATION:
                    pool.readable.append(written)
        ops.append((kind, op_name, args))
    # What no later op reads is an output of the graph.
    for t in pool.written:
        if pool.role[t] == Role.ACTIVATION and t not in pool.read:
            pool.role[t] = Role.OUTPUT
    b = GraphBuilder(name)
    for t, (r, c, dtype) in pool.shape.items():
        b.tensor(t, [c] if t in pool.flat else [r, c], dtype, pool.role[t])
    for kind, op_name, op_args in ops:
        _emit(b, kind, op_name, op_args)
    return b.build()


def _emit(b: GraphBuilder, kind: str, name: str, a: dict[str, object]) -> None:
    s = {k: v for k, v in a.items() if isinstance(v, str)}
    if kind == "matmul":
        b.matmul(name, s["a"], s["b"], s["out"], bias=s.get("bias"), activation=s.get("activation"),
                 requantize=s.get("requantize"))
    elif kind == "unary":
        b.unary(name, s["fn"], s["x"], s["out"])
    elif kind == "softmax":
        b.softmax(name, s["x"], s["out"])
    elif kind in ("binary", "state"):
        b.binary(name, s["fn"], s["x"], s["y"], s["out"])
    elif kind == "rmsnorm":
        b.rmsnorm(name, s["x"], s["weight"], s["out"])
    elif kind == "gather":
        b.gather(name, s["table"], s["index"], s["out"])
    elif kind == "scatter":
        b.scatter(name, s["src"], s["index"], s["state"])
    else:
        heads, kv = a["heads"], a["kv_heads"]
        assert isinstance(heads, int)
        assert isinstance(kv, int)
        b.attention(name, s["q"], s["k_cache"], s["v_cache"], s["out"], heads=heads, kv_heads=kv)


@st.composite
def misshapen_graphs(draw: st.DrawFn, max_ops: int = 3, dims: Sequence[int] = DIMS,
                     kinds: Sequence[str] = KINDS) -> tuple[ModelGraph, str]:
    """A graph drawn as ``model_graphs`` whose op ``name`` (returned beside it) writes an output one tile column
    wider (32 elements) than its operands give: shapes that do not fit. The graph is not checked; ``check_graph``
    raises ``ParseError`` naming op ``name`` (every op before it fits)."""
    g = draw(model_graphs(max_ops=max_ops, dims=dims, kinds=kinds))
    op = g.ops[draw(st.integers(0, len(g.ops) - 1))]
    t = g.tensor(op.output)
    rows, cols = t.dims2()
    wrong = GraphTensor(t.name, (rows, cols + 32), t.dtype, t.role)
    tensors = tuple(wrong if x.name == t.name else x for x in g.tensors)
    return attrs.evolve(g, tensors=tensors), op.name
