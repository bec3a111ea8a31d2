"""The place/transition net of a program's marked graph (DESIGN §5), shared by the PNML and DOT exporters.

Transitions are the program's leaf ops, one per (engine, op path) — every occurrence of a leaf fires the same
transition. Places are exactly the certificate's places (``certify.certificate.derive_places``): circular-buffer data
(Push -> Wait) and space (Pop -> Reserve, marked with the capacity), semaphore signals (SemInc / flag -> SemWait,
marked with the word's initial value) and the compose rendezvous. Each place has one input arc, from its producer
op, weighted by what one occurrence produces (pages pushed or popped, an increment, one flag), and one output arc,
to its consumer op, weighted by what one occurrence needs (pages waited for or reserved, the wait's threshold
``value``). Program order is not a place: it is the order of each engine's transitions (their paths).
"""

from __future__ import annotations

from typing import Any

import attrs

from verispatial.certify.certificate import derive_places
from verispatial.certify.reach import analyse
from verispatial.ir.ops import Op, SemWait, op_text
from verispatial.ir.program import Program

__all__ = ["Arc", "Net", "NetPlace", "NetTransition", "net_of", "transition_id"]


def transition_id(engine: str, path: tuple[int, ...] | list[int]) -> str:
    """The id of the transition of the op at ``path`` of ``engine``: ``t_(0,0).reader_2_0`` -> XML-safe
    ``t_0_0_reader_2_0``."""
    safe = "".join(c if c.isalnum() else "_" for c in engine).strip("_")
    return f"t_{safe}_" + "_".join(str(i) for i in path)


@attrs.frozen
class NetTransition:
    id: str
    engine: str
    path: tuple[int, ...]
    label: str


@attrs.frozen
class NetPlace:
    """A place: ``id``, its certificate entry's ``kind`` and ``counter``, and ``marking`` (initial tokens)."""

    id: str
    kind: str
    counter: str
    marking: int


@attrs.frozen
class Arc:
    """An arc from ``source`` to ``target`` (a place and a transition id, either way) with ``weight`` tokens."""

    id: str
    source: str
    target: str
    weight: int


@attrs.frozen
class Net:
    name: str
    transitions: tuple[NetTransition, ...]
    places: tuple[NetPlace, ...]
    arcs: tuple[Arc, ...]


def _produces(op: Op) -> int:
    for f in ("pages", "by"):
        v = getattr(op, f, None)
        if isinstance(v, int):
            return v
    return 1


def _needs(op: Op) -> int:
    if isinstance(op, SemWait):
        return op.value
    return _produces(op)


def net_of(program: Program, places: list[dict[str, Any]] | None = None) -> Net:
    """The net of ``program`` (module docstring); ``places`` defaults to the certificate's places derived from the
    program. Raises nothing for a program that passes ``validate``."""
    a = analyse(program)
    cert_places = derive_places(a) if places is None else places
    transitions: list[NetTransition] = []
    ops: dict[tuple[str, tuple[int, ...]], Op] = {}
    for v in a.views.values():
        for lf in v.leaves:
            transitions.append(NetTransition(transition_id(lf.engine, lf.path), lf.engine, tuple(lf.path),
                                             f"{lf.engine} {op_text(lf.op)}"))
            ops[(lf.engine, tuple(lf.path))] = lf.op
    out_places: list[NetPlace] = []
    arcs: list[Arc] = []
    for i, pl in enumerate(cert_places):
        pid = f"p{i}"
        out_places.append(NetPlace(pid, str(pl["kind"]), str(pl["counter"]), int(pl["tokens"])))
        src, dst = pl["from"], pl["to"]
        src_op = ops.get((src["engine"], tuple(src["path"])))
        dst_op = ops.get((dst["engine"], tuple(dst["path"])))
        arcs.append(Arc(f"a{2 * i}", transition_id(src["engine"], src["path"]), pid,
                        _produces(src_op) if src_op is not None else 1))
        arcs.append(Arc(f"a{2 * i + 1}", pid, transition_id(dst["engine"], dst["path"]),
                        _needs(dst_op) if dst_op is not None else 1))
    return Net(program.name, tuple(transitions), tuple(out_places), tuple(arcs))
