"""Multicasts whose acknowledgement count is not their group's (docs/semantics.md "Acknowledgement counts").

A multicast adds its ``num_dests`` to the count its engine's barrier expects (``noc_nonposted_writes_acked`` for
``noc_async_write_multicast`` and ``noc_semaphore_set_multicast``, ``noc_nonposted_atomics_acked`` for
``noc_semaphore_inc_multicast``: tt_metal/hw/inc/internal/tt-1xx/wormhole/noc_nonblocking_api.h:505-506 and :1047
of ttnn 0.81.1), while the NoC returns one acknowledgement per core of the rectangle. The program format
keeps what the kernel states; this names where the two differ, for the exports that refuse such programs and the
checker that decides them by the interpreter.
"""

from __future__ import annotations

from verispatial.ir.ops import McastSend, McastSetValid, SemIncMcast
from verispatial.ir.program import EngineProgram, Program, walk

Multicast = McastSend | McastSetValid | SemIncMcast


def miscounted(program: Program) -> list[tuple[EngineProgram, Multicast, int]]:
    """Every (engine program, multicast op, its group's destination count) where the op's ``num_dests`` differs
    from that count, in program order (each op once, however often it runs)."""
    out: list[tuple[EngineProgram, Multicast, int]] = []
    for ep in program.programs:
        for op in walk(ep.ops):
            if isinstance(op, (McastSend, McastSetValid, SemIncMcast)) and 0 <= op.group < len(program.groups):
                have = len(program.groups[op.group].destinations())
                if op.num_dests != have:
                    out.append((ep, op, have))
    return out


def refusal(program: Program, what: str) -> str | None:
    """The reason an export (``what``) that does not count acknowledgements refuses ``program``, or None."""
    bad = miscounted(program)
    if not bad:
        return None
    ep, op, have = bad[0]
    return (f"{ep.key}: {type(op).__name__} states num_dests {op.num_dests} for a group of {have} destinations: {what} does not "
            "count acknowledgements (a barrier after it can hang on hardware; the interpreter and the checker decide it)")
