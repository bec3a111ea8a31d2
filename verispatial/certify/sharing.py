"""``cb-read-unwaited`` for the reads of a sharing waiter (an engine that waits on a buffer another engine pops).

A sharing waiter's read pointer never moves (it never pops: ``ir/sharing.py``), so it reads ring slots counted from
slot 0; a slot the consumer has popped holds no live page (the producer may rewrite it). The per-engine abstract
interpretation sees only the waiter's own ops, so it cannot tell; this asks the counter abstraction, per read, for a
reachable state with the waiter about to read and a slot it reads not live (docs/semantics.md, "Several engines
waiting on one buffer"). Unsat discharges the read; anything else leaves a finding the interpreter's replay decides
(refuted when it shows the rule there, else failed-to-prove).
"""

from __future__ import annotations

import z3

from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.rules import Finding
from verispatial.certify.smt import DEFAULT_RLIMIT, Status
from verispatial.certify.structure import Leaf
from verispatial.ir import rules as R
from verispatial.ir.ops import Compute, WriteTiles, named_index_buffer
from verispatial.ir.sharing import sharing_waiters


def _reads(a: Analysis, engine: str, b: int) -> list[tuple[Leaf, int, int]]:
    """(leaf, tiles before it on this engine's read pointer of b, tiles it reads) for each read of ``b`` by ``engine``
    (the tiles before are those of the earlier WriteTiles leaves, counted per execution: -1 when one of them sits in
    a loop, so the offset is not a constant)."""
    pt = a.program.buffers[b].page_tiles
    out: list[tuple[Leaf, int, int]] = []
    before, looped = 0, False
    for lf in a.views[engine].leaves:
        op = lf.op
        if isinstance(op, WriteTiles) and op.src == b:
            out.append((lf, -1 if looped else before, op.tiles))
            before += op.tiles
            looped = looped or bool(lf.loops)
        if isinstance(op, Compute):
            out += [(lf, 0, o.pages * pt) for o in op.ins if o.buf == b]
        if named_index_buffer(op) == b:
            out.append((lf, 0, 1))
    return out


def shared_read_findings(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Finding]:
    """A ``cb-read-unwaited`` finding for every read of a sharing waiter that the counters cannot show reads only
    live slots (``solve_each``: unsat for every scope and trip assignment discharges it)."""
    p = a.program
    out: list[Finding] = []
    for b, engines in sorted(sharing_waiters(p).items()):
        cap, pt = p.buffers[b].capacity, p.buffers[b].page_tiles
        for engine in sorted(engines):
            for lf, before, tiles in _reads(a, engine, b):
                if before < 0:
                    out.append(Finding(R.CB_READ_UNWAITED, engine, lf.path,
                                       f"reads b{b} from a read pointer it never pops, at an offset that grows in a "
                                       "loop (not decided)"))
                    continue
                pages = range(before // pt, -(-(before + tiles) // pt))

                def bad(sq: StateQuery, lf: Leaf = lf, pages: range = pages, b: int = b, cap: int = cap) -> z3.BoolRef:
                    pushed, popped = sq.cm.pushed(b), sq.cm.popped(b)
                    dead = [(sq.q.val(page % cap) - popped) % cap >= pushed - popped for page in pages]
                    return z3.And(sq.enc.position(lf.engine).at(lf), z3.Or(dead) if len(dead) > 1 else dead[0])

                got, _, _ = solve_each(a, bad, f"shared-read:b{b}:{engine}:{list(lf.path)}", {engine}, trusted, rlimit,
                                       (lf,))
                if got.status != Status.UNSAT:
                    out.append(Finding(R.CB_READ_UNWAITED, engine, lf.path,
                                       f"reads ring slots of b{b} from a read pointer it never pops (it shares the "
                                       "buffer's front with its consumer), which may hold no live page: its consumer "
                                       "may have popped them"))
    return out
