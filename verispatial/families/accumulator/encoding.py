"""The checker's encoding of the accumulator: the per-engine rules of AcquireAcc, ReleaseAcc, Compute and PackAcc
(``certify/rules.py`` runs them over every path of an engine).

Facts: ``("acc", held)`` whether an accumulator is acquired; ``("acct", n)`` a held acquire took ``n`` tiles."""

from __future__ import annotations

from collections.abc import Callable

from verispatial.certify.facts import EngineRun, State, pairs
from verispatial.families.cb import encoding as cb
from verispatial.ir import rules as R
from verispatial.ir.ops import AcquireAcc, Compute, PackAcc, ReleaseAcc


def overrun(c: EngineRun, s: State, tiles: int, path: tuple[int, ...], what: str) -> None:
    """``acc-overrun``: more tiles than some held acquire (a path reaching here) took."""
    took = sorted(int(t[1]) for t in s if t[0] == "acct" and int(t[1]) < tiles)  # type: ignore[call-overload]
    if took:
        c.flag(R.ACC_OVERRUN, path, f"{what} uses {tiles} accumulator tiles, but the held acquire took {took[0]}")


def acquire(c: EngineRun, op: AcquireAcc, path: tuple[int, ...], s: State) -> State:
    """``acc-capacity`` and ``acc-unacquired`` (an acquire while one may be held)."""
    if op.tiles > c.p.target.acc_capacity(op.dtype):
        c.flag(R.ACC_CAPACITY, path, f"acquires {op.tiles} {op.dtype} accumulator tiles; target {c.p.target.name} "
                                     f"holds {c.p.target.acc_capacity(op.dtype)} at that precision")
    if ("acc", True) in s:
        c.flag(R.ACC_UNACQUIRED, path, "acquire_acc while an accumulator is already held")
    return frozenset(t for t in s if t[0] not in ("acc", "acct")) | {("acc", True), ("acct", op.tiles)}


def release(c: EngineRun, op: ReleaseAcc, path: tuple[int, ...], s: State) -> State:
    """``acc-unacquired``: a release when none may be held."""
    if ("acc", False) in s:
        c.flag(R.ACC_UNACQUIRED, path, "release_acc with no accumulator acquired")
    return frozenset(t for t in s if t[0] not in ("acc", "acct")) | {("acc", False)}


def compute(c: EngineRun, op: Compute, path: tuple[int, ...], s: State) -> State:
    """``acc-unacquired``, ``acc-overrun``; its operand pages lie in the waited windows (``cb-read-unwaited``)."""
    if ("acc", False) in s:
        c.flag(R.ACC_UNACQUIRED, path, f"compute {op.kind} with no accumulator acquired")
    overrun(c, s, op.tiles, path, f"compute {op.kind}")
    for o in op.ins:
        if any(v < o.pages for v, _ in pairs(s, "wt", o.buf)):
            c.flag(R.CB_READ_UNWAITED, path, f"compute {op.kind} unpacks {o.pages} pages of b{o.buf} beyond its "
                                             "waited window")
    return s


def pack(c: EngineRun, op: PackAcc, path: tuple[int, ...], s: State) -> State:
    """``acc-unacquired``, ``acc-overrun``; the pack fills the reserved back of its buffer (``cb.fill``)."""
    if ("acc", False) in s:
        c.flag(R.ACC_UNACQUIRED, path, f"pack_acc into b{op.buf} with no accumulator acquired")
    overrun(c, s, op.tiles, path, f"pack_acc into b{op.buf}")
    return cb.fill(c, s, op.buf, op.tiles, path, "pack_acc")


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., State]] = {AcquireAcc: acquire, ReleaseAcc: release, Compute: compute,
                                              PackAcc: pack}
