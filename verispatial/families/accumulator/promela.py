"""The accumulator in the Promela model: the ``d_step`` of AcquireAcc, ReleaseAcc, Compute and PackAcc, each rule an
``assert`` mirroring the interpreter's handler (``families/accumulator/semantics.py``). ``acc[e]``: the tiles the
engine's held acquire took, 0 when none is held."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import promela as cb
from verispatial.ir import rules as R
from verispatial.ir.ops import AcquireAcc, Compute, PackAcc, ReleaseAcc

if TYPE_CHECKING:
    from verispatial.petri.promela import Step, _Gen


def _inside(g: _Gen, e: int, tiles: int, where: str) -> list[str]:
    """``acc-unacquired`` and ``acc-overrun`` of a Compute or PackAcc of ``tiles`` tiles."""
    return [g._assert(R.ACC_UNACQUIRED, f"acc[{e}]", where),
            g._assert(R.ACC_OVERRUN, f"acc[{e}] == 0 || acc[{e}] >= {tiles}", where)]


def acquire(g: _Gen, e: int, path: tuple[int, ...], op: AcquireAcc, st: Step) -> None:
    st.body.append(g._assert(R.ACC_UNACQUIRED, f"!acc[{e}]", st.where))
    st.body.append(f"acc[{e}] = {op.tiles};")  # the tiles the acquire took (acc-overrun), 0: none held
    if op.tiles > g.t.acc_capacity(op.dtype):
        st.body.append(g._assert(R.ACC_CAPACITY, "false", st.where))


def release(g: _Gen, e: int, path: tuple[int, ...], op: ReleaseAcc, st: Step) -> None:
    st.body.append(g._assert(R.ACC_UNACQUIRED, f"acc[{e}]", st.where))
    st.body.append(f"acc[{e}] = 0;")


def compute(g: _Gen, e: int, path: tuple[int, ...], op: Compute, st: Step) -> None:
    st.body += _inside(g, e, op.tiles, st.where)
    for o in op.ins:
        st.body += cb.role(g, e, o.buf, False, st.where)
        st.body.append(cb.waited(g, o.buf, o.pages, st.where))
        # the unpacker does not wrap (cb.semantics.unpack_in_ring); sharing waiters are refused by the export
        st.body.append(g._assert(R.CB_STRADDLE, f"popped[{o.buf}] % {g.caps[o.buf]} + {o.pages} <= {g.caps[o.buf]}",
                                 st.where))


def pack(g: _Gen, e: int, path: tuple[int, ...], op: PackAcc, st: Step) -> None:
    st.body += _inside(g, e, op.tiles, st.where)
    st.body += cb.role(g, e, op.buf, True, st.where)
    lines, p0, np = cb.fill(g, op.buf, op.tiles, st.where)
    st.body += lines
    st.body += g._source_reuse(op.buf, p0, np, "write", st.where)


#: The Promela export's handlers of this family's op classes (``petri/promela.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {AcquireAcc: acquire, ReleaseAcc: release, Compute: compute, PackAcc: pack}
