"""Section boundaries of a composed program: which sections close with a rendezvous, and where each engine's *work*
before a boundary ends — the one definition the interpreter's ``rendezvous-early`` rule and the checker's
``hb-rendezvous`` obligation share (DESIGN §7: "every op of sections <= b before every op of sections > b across a
rendezvous").

A section ``b`` *closes* when ``barrier_after`` is true and it is not the last section. Its *closing region* on an
engine is the maximal run of top-level semaphore ops and atomic barriers (``SemInc``, ``SemIncMcast``, ``SemSet``,
``SemWait``, ``AtomicBarrier``) that ends the section on that engine: the rendezvous (arrive, gather, release, wait) and any
reset folded into it. Every other op of sections ``<= b`` is *work before boundary b*. An engine has *arrived at
boundary b* once it has executed all of its work before ``b`` (its next op lies at or past ``work_end``, or it has
finished); it *is past boundary b* once it executes an op of a section ``> b``.
"""

from __future__ import annotations

from verispatial.ir.ops import AtomicBarrier, Op, SemInc, SemIncMcast, SemSet, SemWait
from verispatial.ir.program import EngineProgram, Program

#: Top-level ops a closing region consists of.
REGION_OPS = (SemInc, SemIncMcast, SemSet, SemWait, AtomicBarrier)


def closing_sections(p: Program) -> list[int]:
    """The sections that close with a rendezvous, in order: ``barrier_after`` and not the last section."""
    return [b for b, s in enumerate(p.sections) if s.barrier_after and b < len(p.sections) - 1]


def section_bounds(ep: EngineProgram, n_sections: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` top-level op indices of each of ``n_sections`` sections on ``ep`` (no ``section_starts``: the
    whole list is section 0 and the others are empty)."""
    starts = list(ep.section_starts) if ep.section_starts else [0]
    starts += [len(ep.ops)] * (n_sections - len(starts))
    starts = starts[:n_sections]
    ends = [*starts[1:], len(ep.ops)]
    return [(min(lo, len(ep.ops)), min(max(hi, lo), len(ep.ops))) for lo, hi in zip(starts, ends, strict=True)]


def region_start(ops: tuple[Op, ...], lo: int, hi: int) -> int:
    """Where the maximal run of ``REGION_OPS`` that ends ``ops[lo:hi]`` starts (``hi`` when there is none)."""
    i = hi
    while i > lo and isinstance(ops[i - 1], REGION_OPS):
        i -= 1
    return i


def work_ends(p: Program, ep: EngineProgram) -> dict[int, int]:
    """For every closing section ``b``: one past the top-level index of ``ep``'s last op of work before boundary
    ``b`` (0 when it has none). An engine whose next op has a top-level index ``>= work_ends[b]`` (or that has
    finished) has arrived at boundary ``b``. Non-decreasing in ``b``."""
    closing = set(closing_sections(p))
    bounds = section_bounds(ep, len(p.sections))
    out: dict[int, int] = {}
    end = 0
    for b, (lo, hi) in enumerate(bounds):
        last = region_start(ep.ops, lo, hi) if b in closing else hi
        if last > lo:
            end = last
        if b in closing:
            out[b] = end
    return out
