"""The checker's part of several engines waiting on one circular buffer (docs/semantics.md, "Several engines waiting
on one buffer"; the interpreter's is ``shared_semantics.py`` beside it).

A sharing waiter's read pointer never moves (it never pops: ``ir/sharing.py``), so it reads ring slots counted from
slot 0; a slot the consumer has popped holds no live page (the producer may rewrite it). The per-engine abstract
interpretation sees only the waiter's own ops, so it cannot tell. This asks the counter abstraction for reachable
states, one query per op pair:

- ``cb-read-unwaited`` at a sharing waiter's read: the waiter about to read and a slot it reads not live;
- ``cb-read-unwaited`` at a data-movement sharing waiter's Wait: that Wait blocked and the consumer about to pop (the
  wait read tiles_acked on entry, so it may return counting the freed pages);
- ``async-source-reuse`` at the consumer's Pop: a sharing waiter's WriteTiles from the buffer issued and not yet
  flushed, the consumer about to pop.

Unsat discharges the op; anything else leaves a finding the interpreter's replay decides (refuted when it shows the
rule there, else failed-to-prove).
"""

from __future__ import annotations

import z3

from verispatial.certify.facts import LATE, Finding
from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.smt import DEFAULT_RLIMIT, Status
from verispatial.certify.structure import Leaf
from verispatial.ir import rules as R
from verispatial.ir.ops import Compute, Flush, Pop, Push, Wait, WriteBarrier, WriteTiles, named_index_buffer
from verispatial.ir.sharing import sees_own_pops_only, sharing_waiters


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
    return out + _pop_under_wait_findings(a, trusted, rlimit) + _pop_frees_shared_source(a, trusted, rlimit)


def _pop_under_wait_findings(a: Analysis, trusted: set[int], rlimit: int) -> list[Finding]:
    """A ``cb-read-unwaited`` finding at each Wait of a data-movement sharing waiter of ``b`` that may be blocked
    while another engine pops ``b``: its cb_wait_front read tiles_acked on entry, so it may return counting the freed
    pages (``shared_semantics.pop_under_shared_wait``). Unsat of "the waiter at its wait, the wait not enabled, the consumer
    at a pop of b" for every pop discharges it."""
    p = a.program
    out: list[Finding] = []
    for b, engines in sorted(sharing_waiters(p).items()):
        pops = [lf for v in a.views.values() if v.key not in engines for lf in v.leaves
                if isinstance(lf.op, Pop) and lf.op.buf == b]
        if not pops:
            continue
        for engine in sorted(engines):
            if sees_own_pops_only(a.views[engine].program.engine):
                continue  # a compute waiter never counts another engine's pops
            for lf in a.views[engine].leaves:
                if not isinstance(lf.op, Wait) or lf.op.buf != b:
                    continue
                for pop in pops:
                    def bad(sq: StateQuery, lf: Leaf = lf, pop: Leaf = pop) -> z3.BoolRef:
                        held = sq.cm.enabled(lf)
                        assert held is not None
                        return z3.And(sq.enc.position(lf.engine).at(lf), z3.Not(held),
                                      sq.enc.position(pop.engine).at(pop))

                    got, _, _ = solve_each(a, bad, f"shared-wait:b{b}:{engine}:{list(lf.path)}", {engine, pop.engine},
                                           trusted, rlimit, (lf, pop))
                    if got.status != Status.UNSAT:
                        out.append(Finding(R.CB_READ_UNWAITED, engine, lf.path,
                                           f"{pop.engine} may pop b{b} while this wait is blocked: a data-movement "
                                           "wait reads tiles_acked on entry, so it may return counting the pages "
                                           "that pop frees"))
                        break
    return out


def _pop_frees_shared_source(a: Analysis, trusted: set[int], rlimit: int) -> list[Finding]:
    """An ``async-source-reuse`` finding at each Pop of ``b`` by its consumer that may free a page a sharing waiter's
    WriteTiles from ``b`` still reads: the waiter past the write and not past its next flush or write barrier, the
    consumer about to pop (the pages are not compared: any such pop is a candidate). The interpreter reports the rule
    at that pop (``Interp._source_reuse``); the producer's re-reserve and refill follow as consequences
    (``families/noc/encoding.py`` ``reuse_consequences``)."""
    p = a.program
    out: list[Finding] = []
    for b, engines in sorted(sharing_waiters(p).items()):
        pops = [lf for v in a.views.values() if v.key not in engines for lf in v.leaves
                if isinstance(lf.op, Pop) and lf.op.buf == b]
        for engine in sorted(engines):
            leaves = a.views[engine].leaves
            for wl in leaves:
                if not isinstance(wl.op, WriteTiles) or wl.op.src != b:
                    continue
                left = next((x for x in leaves[wl.index + 1:] if isinstance(x.op, (WriteBarrier, Flush))), None)
                for pop in pops:
                    def bad(sq: StateQuery, wl: Leaf = wl, left: Leaf | None = left, pop: Leaf = pop) -> z3.BoolRef:
                        w = sq.enc.position(wl.engine)
                        out_yet = w.passed(wl) if left is None else z3.And(w.passed(wl), z3.Not(w.passed(left)))
                        return z3.And(out_yet, sq.enc.position(pop.engine).at(pop))

                    extra = (wl, pop) if left is None else (wl, left, pop)
                    got, _, _ = solve_each(a, bad, f"shared-source:b{b}:{engine}:{list(wl.path)}",
                                           {engine, pop.engine}, trusted, rlimit, extra)
                    if got.status != Status.UNSAT:
                        out.append(Finding(R.ASYNC_SOURCE_REUSE, pop.engine, pop.path,
                                           f"pop(b{b}) may free a page {engine}'s write_tiles at {list(wl.path)} still "
                                           "reads (it shares the buffer's front; no flush/write_barrier of it before "
                                           "this pop)", (LATE,)))  # LATE: its consequences are kept, replay decides
    return out


def ownership_consequences(a: Analysis, findings: list[Finding]) -> list[Finding]:
    """``cb-pop-uncovered`` (``cb-push-uncovered``) candidates at every Pop (Push) of a buffer a second engine pops
    (pushes): the per-engine rules check each engine's pops against its own waits, but the interpreter keeps one
    window per buffer end, so two poppers each popping what they waited may together free pages nobody waited for
    (more pops than pushes). The replay decides each (refuted where the interpreter shows it, else failed to prove);
    none is proved while the ownership finding stands."""
    p = a.program
    second = {(f.rule, f.engine, f.path) for f in findings if f.rule in (R.CB_SINGLE_CONSUMER, R.CB_SINGLE_PRODUCER)}
    if not second:
        return []
    bufs: dict[str, set[int]] = {R.CB_SINGLE_CONSUMER: set(), R.CB_SINGLE_PRODUCER: set()}
    for rule, engine, path in second:
        lf = next((x for x in a.views[engine].leaves if x.path == path), None)
        b = getattr(lf.op, "buf", None) if lf is not None else None
        if isinstance(b, int) and 0 <= b < len(p.buffers):
            bufs[rule].add(b)
    out: list[Finding] = []
    for v in a.views.values():
        for lf in v.leaves:
            op = lf.op
            if isinstance(op, Pop) and op.buf in bufs[R.CB_SINGLE_CONSUMER]:
                out.append(Finding(R.CB_POP_UNCOVERED, v.key, lf.path,
                                   f"pop(b{op.buf}) by one of several engines popping b{op.buf}: their pops together "
                                   "may free pages no wait covered", (LATE,)))
            elif any(b in bufs[R.CB_SINGLE_CONSUMER] for b in _front_reads(op)):
                out.append(Finding(R.CB_READ_UNWAITED, v.key, lf.path,
                                   "reads the front of a buffer several engines consume: the interpreter keeps one "
                                   "waited window per buffer, its consumer's", (LATE,)))
            elif isinstance(op, Push) and op.buf in bufs[R.CB_SINGLE_PRODUCER]:
                out.append(Finding(R.CB_PUSH_UNCOVERED, v.key, lf.path,
                                   f"push(b{op.buf}) by one of several engines pushing b{op.buf}: their pushes together "
                                   "may publish pages no reserve covered", (LATE,)))
    return out


def _front_reads(op: object) -> list[int]:
    """The buffers ``op`` reads from the front through get_read_ptr: a WriteTiles source, Compute operands, a named
    index buffer."""
    out: list[int] = []
    if isinstance(op, WriteTiles):
        out.append(op.src)
    if isinstance(op, Compute):
        out += [o.buf for o in op.ins]
    named = named_index_buffer(op)  # type: ignore[arg-type]
    if named is not None:
        out.append(named)
    return out
