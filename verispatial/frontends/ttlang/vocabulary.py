"""The block functions of TT-Lang's API that the front end reads as block math: ``ttl.math.*`` and ``ttl.block.*``.

A call of any other name under those namespaces is refused by name at its line (it cannot be read statically: a
misspelt or newer function was read as math and proved). The sets are tt-lang-sim 1.1.6's (the vendor's simulator,
``ttl/sim/__init__.py``: ``_TTLMathNamespace`` takes every public function of ``ttl/sim/math.py`` — the unary
functions of its ``_TORCH_UNARY_OPS`` table, the functions it defines, and ``matmul``, imported there from
``ttl/sim/dfb.py`` — and ``_TTLBlockNamespace`` names its eight). tests/test_frontend_ttlang.py checks them against the
wheel.
"""

from __future__ import annotations

#: ``ttl.math`` functions: the simulator's unary table, then the functions ``ttl/sim/math.py`` defines, and matmul
MATH: frozenset[str] = frozenset({
    "abs", "neg", "exp", "exp2", "expm1", "log", "logp1", "sqrt", "square", "rsqrt", "recip",
    "tan", "tanh", "atan", "atanh", "sin", "asin", "asinh", "cos", "acos", "acosh",
    "relu", "sigmoid", "gelu", "silu", "softsign", "hardsigmoid", "selu",
    "floor", "ceil", "frac", "trunc", "sign", "signbit",
    "max", "min", "gt", "lt", "eq", "ne", "rsub", "relu_max", "relu_min", "leaky_relu", "elu", "celu", "prelu",
    "softplus", "hardtanh", "round", "clamp", "threshold", "reduce_max", "reduce_sum",
    "matmul",
})

#: ``ttl.block`` functions (``_TTLBlockNamespace``)
BLOCK: frozenset[str] = frozenset({"broadcast", "fill", "mask", "mask_posinf", "where", "squeeze", "unsqueeze",
                                   "transpose"})


def known(name: str) -> bool:
    """Whether dotted ``name`` (``ttl.math.exp``) is a function of ``ttl.math`` or ``ttl.block``."""
    space, _, fn = name.rpartition(".")
    return fn in (MATH if space == "ttl.math" else BLOCK if space == "ttl.block" else frozenset())
