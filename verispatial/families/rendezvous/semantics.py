"""The rendezvous in the reference interpreter: ``rendezvous-early`` (docs/semantics.md, "Rendezvous"; DESIGN §7:
"every op of sections <= b before every op of sections > b across a rendezvous"; the vendor's rendezvous is
``noc_semaphore_inc`` to a gather word and ``noc_semaphore_wait_min`` on it, dataflow_api.h).

``tables`` is built once per interpreter; ``rendezvous_early`` runs before every engine step of a program with a
closing boundary, and takes the interpreter, the state, the engine index ``e``, its program counter ``pc`` and the
list violations are appended to, as the families' handlers do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from verispatial.ir import rules as R
from verispatial.ir.boundaries import closing_sections, section_bounds, work_ends
from verispatial.ir.obligation import BoundaryRef
from verispatial.ir.program import EngineProgram, Program

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State
    from verispatial.petri.position import Violation


@attrs.frozen
class Tables:
    """Per engine (by index): the section of each top-level op (``top_section``) and, for every closing boundary,
    where its work before that boundary ends (``work_end``, ``ir/boundaries.work_ends``); per section, the closing
    boundaries before it (``boundaries_before``: every op of the section comes after each of them)."""

    closing: list[int]
    top_section: list[list[int]]
    work_end: list[dict[int, int]]
    boundaries_before: list[list[int]]


def tables(program: Program, engines: Sequence[EngineProgram]) -> Tables:
    """The rendezvous tables of ``program`` whose engine programs are ``engines`` (the interpreter's order)."""
    closing = closing_sections(program)
    top_section: list[list[int]] = []
    work_end: list[dict[int, int]] = []
    for ep in engines:
        tops = [0] * len(ep.ops)
        for sec, (lo, hi) in enumerate(section_bounds(ep, len(program.sections))):
            for i in range(lo, hi):
                tops[i] = sec
        top_section.append(tops)
        work_end.append(work_ends(program, ep))
    return Tables(closing, top_section, work_end, [[b for b in closing if b < sec] for sec in range(len(program.sections))])


def not_arrived(it: Interp, s: State, e: int, b: int) -> list[int]:
    """The engines other than ``e`` that have not arrived at the rendezvous after section ``b`` (work of sections
    ``<= b`` left to execute)."""
    out = []
    for e2 in range(it.n):
        pc = s.pcs[e2]
        if e2 != e and pc is not None and pc[0][0] < it.rendezvous.work_end[e2][b]:
            out.append(e2)
    return out


def rendezvous_early(it: Interp, s: State, e: int, pc: PC, out: list[Violation]) -> None:
    """``rendezvous-early``: engine ``e`` executes an op of a section after a closing boundary while another engine
    has not arrived at that boundary (ir/boundaries.py). Reported for the earliest such boundary."""
    k = it.rendezvous.top_section[e][pc[0][0]]
    before = it.rendezvous.boundaries_before[k]
    if not before or not not_arrived(it, s, e, before[-1]):
        return  # arrivals are monotone in the boundary: arrived at the last means arrived at every earlier one
    for b in before:
        late = not_arrived(it, s, e, b)
        if late:
            names = ", ".join(str(it.pos(x, s.pcs[x])) for x in late[:3])
            more = f" (+{len(late) - 3} more)" if len(late) > 3 else ""
            it._v(out, R.RENDEZVOUS_EARLY, e, pc,
                  f"executes an op of section {k} ({it.program.sections[k].name}) before every engine arrived "
                  f"at the rendezvous after section {b} ({it.program.sections[b].name}): {names}{more} still "
                  f"has work of sections <= {b} to do", BoundaryRef(b))
            return
