"""Which ops leave an engine's NoC transactions outstanding at its end, for the counterexample of
``async-pending-at-end`` (the finding itself sits at the engine's end, which has no op and so no source line).

Presentation only: the verdict comes from the per-engine rules (``rules.py``) and its replay; this names, in program
order, each transaction-issuing op no later barrier of its kind covers, so the report can point at the kernel line
(``report/sources.py`` locates any ``{"engine", "path"}`` entry of a counterexample).
"""

from __future__ import annotations

from typing import Any

from verispatial.certify.structure import Leaf
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
    WriteBarrier,
    WriteTiles,
)


def outstanding_ops(leaves: tuple[Leaf, ...] | list[Leaf]) -> list[dict[str, Any]]:
    """The leaves (in pre-order) whose read, write or atomic no barrier of its kind follows in the engine's text:
    ``[{"engine", "path", "kind"}]``, kind ``read``, ``write`` or ``atomic``. An op inside a loop counts as followed
    when a barrier comes after it in the text (the last iteration's op is then covered)."""
    pending: dict[str, list[Leaf]] = {"read": [], "write": [], "atomic": []}
    for lf in sorted(leaves, key=lambda x: x.index):
        op = lf.op
        if isinstance(op, (ReadTiles, RemoteRead)):
            pending["read"].append(lf)
        elif isinstance(op, ReadBarrier):
            pending["read"].clear()
        elif isinstance(op, (WriteTiles, McastSend, McastSetValid, InlineWrite)):
            pending["write"].append(lf)
        elif isinstance(op, WriteBarrier):
            pending["write"].clear()
        elif isinstance(op, (SemInc, SemIncMcast)):
            pending["atomic"].append(lf)
        elif isinstance(op, AtomicBarrier):
            pending["atomic"].clear()
    out = [{"engine": lf.engine, "path": list(lf.path), "kind": kind} for kind, lfs in pending.items() for lf in lfs]
    return sorted(out, key=lambda d: d["path"])
