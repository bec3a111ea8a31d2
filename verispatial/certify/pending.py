"""Which ops leave an engine's NoC transactions outstanding at its end, for the counterexample of
``async-pending-at-end`` (the finding itself sits at the engine's end, which has no op and so no source line).

Presentation only: the verdict comes from the per-engine rules (``rules.py``) and its replay; this names, in program
order, each transaction-issuing op no later barrier of its kind covers, so the report can point at the kernel line
(``report/sources.py`` locates any ``{"engine", "path"}`` entry of a counterexample).
"""

from __future__ import annotations

from typing import Any

from verispatial.certify.structure import IfCtx, Leaf
from verispatial.ir.ops import (
    AtomicBarrier,
    InlineWrite,
    McastSend,
    McastSetValid,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    SemInc,
    SemIncMcast,
    TripCount,
    WriteBarrier,
    WriteTiles,
)


def _runs_whenever(barrier: Leaf, op: Leaf) -> bool:
    """Whether ``barrier`` is taken to cover ``op``: each loop enclosing the barrier but not the op runs at least once
    (a constant count of 1 or more, ``s t + o`` with ``o >= 1``). An ``If`` around the barrier is taken to run (a
    barrier in the last iteration, ``if (i == last)``, is the usual form), as before loops were looked at."""
    shared = {c.path for c in op.containers}
    for c in barrier.containers:
        if c.path in shared or isinstance(c, IfCtx):
            continue
        count = c.count
        if not (count >= 1 if isinstance(count, int) else isinstance(count, TripCount) and count.offset >= 1):
            return False
    return True


def outstanding_ops(leaves: tuple[Leaf, ...] | list[Leaf]) -> list[dict[str, Any]]:
    """The leaves (in pre-order) whose read, write or atomic no barrier of its kind follows in the engine's text:
    ``[{"engine", "path", "kind"}]``, kind ``read``, ``write`` or ``atomic``. An op inside a loop counts as followed
    when a barrier comes after it in the text (the last iteration's op is then covered), unless that barrier may not
    run (``_runs_whenever``: in a loop over a trip, which may run no time), where the op stays named
    (a write barrier in ``for (j = 0; j < flag; ++j)`` with ``flag`` in ``0..1`` covers nothing at ``flag = 0``)."""
    pending: dict[str, list[Leaf]] = {"read": [], "write": [], "atomic": []}
    kinds = {ReadBarrier: "read", WriteBarrier: "write", AtomicBarrier: "atomic"}
    for lf in sorted(leaves, key=lambda x: x.index):
        op = lf.op
        if isinstance(op, (ReadTiles, RemoteRead)):
            pending["read"].append(lf)
        elif isinstance(op, (WriteTiles, McastSend, McastSetValid, InlineWrite)):
            pending["write"].append(lf)
        elif isinstance(op, (SemInc, SemIncMcast)):
            pending["atomic"].append(lf)
        elif isinstance(op, (ReadBarrier, WriteBarrier, AtomicBarrier)):
            kind = kinds[type(op)]
            pending[kind] = [o for o in pending[kind] if not _runs_whenever(lf, o)]
    out = [{"engine": lf.engine, "path": list(lf.path), "kind": kind} for kind, lfs in pending.items() for lf in lfs]
    return sorted(out, key=lambda d: d["path"])
