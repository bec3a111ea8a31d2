"""Shape arithmetic of a TT-Lang operation: integers affine in the operation's loop indices and in the ``--range``
parameters, with exact floor division and the shape classes it forces.

A ``--range N=LO:HI[:STEP]`` parameter takes the values ``N = m*t + base`` for ``t`` in ``[0, T]`` within one
*shape class* (at first ``m = STEP``, ``base = LO``). ``t`` is the trip of the produced program: a loop count
``a*t + b`` is ``TripCount(N, a, b)``. A floor division ``(a*t + b) // d`` is exact, and stays affine, when ``d``
divides ``a``; otherwise the class splits by residue (``Split``), as does a comparison whose truth changes inside
the class: every class is a program of its own, so one proof per class covers every value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

Coefs = tuple[tuple[str, int], ...]


@attrs.frozen
class SymClass:
    """Parameter ``name`` = ``m * t + base`` for ``t`` in ``[0, top]`` (one shape class of a ``--range``)."""

    name: str
    m: int
    base: int
    top: int

    def value(self, t: int) -> int:
        return self.m * t + self.base

    def __str__(self) -> str:
        lo, hi = self.value(0), self.value(self.top)
        return f"{self.name}={lo}" if self.top == 0 else f"{self.name} in {lo}..{hi} step {self.m}"


class Split(Exception):
    """The class of parameter ``name`` must be cut into ``parts`` (each a ``SymClass``) before evaluation can go on."""

    def __init__(self, name: str, parts: tuple[SymClass, ...]) -> None:
        self.name = name
        self.parts = parts
        super().__init__(name)


@attrs.frozen
class NotFollowed:
    """A module-level name bound in a way the reading does not follow (``ROWS += 4``, a binding inside an ``if``, an
    import, a value not read statically): its value at the operation's call is not known, and a use is refused with
    ``why``."""

    why: str


class NotAffine(Exception):
    """An operation on values that leaves the affine forms (a product of two variables, a division of an index)."""


def _norm(c: Mapping[str, int]) -> Coefs:
    return tuple(sorted((k, v) for k, v in c.items() if v))


def _add(a: Coefs, b: Coefs, sb: int = 1) -> Coefs:
    out = dict(a)
    for k, v in b:
        out[k] = out.get(k, 0) + sb * v
    return _norm(out)


@attrs.frozen
class Aff:
    """``const + sum(c * t_sym) + sum(c * loop_index)``: ``syms`` over ``--range`` trips, ``terms`` over enclosing
    loop indices (by the lowered loop's variable name)."""

    const: int = 0
    syms: Coefs = ()
    terms: Coefs = ()


Num = "int | Aff"


def aff(x: int | Aff) -> Aff:
    return x if isinstance(x, Aff) else Aff(int(x))


def simplify(x: Aff) -> int | Aff:
    return x.const if not x.syms and not x.terms else x


def add(a: int | Aff, b: int | Aff, sign: int = 1) -> int | Aff:
    if isinstance(a, int) and isinstance(b, int):
        return a + sign * b
    x, y = aff(a), aff(b)
    return simplify(Aff(x.const + sign * y.const, _add(x.syms, y.syms, sign), _add(x.terms, y.terms, sign)))


def scale(a: int | Aff, k: int) -> int | Aff:
    if isinstance(a, int):
        return a * k
    return simplify(Aff(a.const * k, _norm({s: c * k for s, c in a.syms}), _norm({s: c * k for s, c in a.terms})))


def mul(a: int | Aff, b: int | Aff) -> int | Aff:
    if isinstance(a, int):
        return scale(b, a)
    if isinstance(b, int):
        return scale(a, b)
    raise NotAffine("a product of two values that both vary")


def _split_residue(cls: SymClass, f: int) -> tuple[SymClass, ...]:
    parts = []
    for s in range(f):
        if s <= cls.top:
            parts.append(SymClass(cls.name, cls.m * f, cls.base + cls.m * s, (cls.top - s) // f))
    return tuple(parts)


def floordiv(a: int | Aff, d: int | Aff, classes: Mapping[str, SymClass]) -> int | Aff:
    """``a // d`` for a positive constant ``d``: exact on the affine form, or a ``Split`` of the one parameter whose
    coefficient ``d`` does not divide (by its residue modulo ``d / gcd``)."""
    if isinstance(d, Aff):
        raise NotAffine("a division by a value that varies")
    if d <= 0:
        raise NotAffine(f"a floor division by {d}")
    if isinstance(a, int):
        return a // d
    if any(c % d for _, c in a.terms):
        raise NotAffine("a floor division of a loop index")
    for s, c in a.syms:
        if c % d:
            f = d // math.gcd(c, d)
            raise Split(s, _split_residue(classes[s], f))
    # every coefficient is a multiple of d: floor((d*k*t + b) / d) = k*t + floor(b / d)
    return simplify(Aff(a.const // d, _norm({s: c // d for s, c in a.syms}), _norm({s: c // d for s, c in a.terms})))


def mod(a: int | Aff, d: int | Aff, classes: Mapping[str, SymClass]) -> int | Aff:
    q = floordiv(a, d, classes)
    return add(a, scale(q, int(d) if isinstance(d, int) else 0), -1)


def sign_of(x: int | Aff, classes: Mapping[str, SymClass]) -> int:
    """-1, 0 or 1: the sign of ``x`` throughout its classes; ``Split`` where it changes inside one (cut where it
    does); ``NotAffine`` for a value that depends on a loop index."""
    if isinstance(x, int):
        return (x > 0) - (x < 0)
    if x.terms:
        raise NotAffine("a comparison of a loop index")
    if len(x.syms) > 1:
        raise NotAffine("a comparison of two --range parameters")
    (s, c), = x.syms
    cls = classes[s]
    lo, hi = x.const, x.const + c * cls.top
    if lo == hi == 0:
        return 0
    if lo > 0 and hi > 0:
        return 1
    if lo < 0 and hi < 0:
        return -1
    # c*t + const changes sign inside [0, top]: cut at z0, the first t past the crossing, and once more past z0
    # when the value is zero there, so every part has one sign
    z0 = -(x.const // c) if c > 0 else -(-x.const // -c)
    cuts = [z0] + ([z0 + 1] if x.const + c * z0 == 0 else [])
    cuts = [t for t in cuts if 0 < t <= cls.top]
    parts, start = [], 0
    for cut in [*cuts, cls.top + 1]:
        if cut > start:
            parts.append(SymClass(cls.name, cls.m, cls.base + cls.m * start, cut - 1 - start))
            start = cut
    raise Split(s, tuple(parts))


def at_max(x: int | Aff, classes: Mapping[str, SymClass]) -> int:
    """``x`` with every trip at its largest value (no loop index allowed)."""
    if isinstance(x, int):
        return x
    if x.terms:
        raise NotAffine("a shape that depends on a loop index")
    return x.const + sum(c * classes[s].top for s, c in x.syms)
