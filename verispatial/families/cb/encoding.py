"""The checker's encoding of circular buffers: ring alignment and end balance, symbolic over loops and trips, and
the per-engine rules of Reserve, Wait, Push and Pop (windows, coverage, capacity; ``certify/rules.py`` runs them).

- ``cb-straddle``: running sums of push (pop) sizes land exactly on every multiple of the capacity — a push of
  n pages at ``pushed mod cap + n > cap`` would straddle the ring's end (reference §1.1, cb_push_back).
- ``balance-cb``: at the end every buffer is empty (total pushed == total popped), for every trip value.

Two exact shortcuts prove without Z3 (``smt.shortcuts``; anything else is the query's): a ring whose every push
(pop) by an engine moves the same ``n`` pages with ``n`` dividing the capacity never straddles — the running sum
is a multiple of ``n``, so ``sum mod cap`` is at most ``cap - n``; and a buffer whose pushes and pops sit under
constant loop counts only has constant totals, compared directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3

from verispatial import budget
from verispatial.certify import smt
from verispatial.certify.canon import ProofMemo
from verispatial.certify.facts import EngineFacts, EngineRun, Finding, State, map_facts, pairs, shift, tile_pages
from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis
from verispatial.certify.replay import trip_words
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Outcome, Query, Status, model_int
from verispatial.certify.structure import EngineView, Leaf, pages
from verispatial.ir import rules as R
from verispatial.ir.limits import ring_slots
from verispatial.ir.obligation import BufferRef
from verispatial.ir.ops import (
    Compute,
    CopyTiles,
    FillTiles,
    Loop,
    McastSend,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadTiles,
    RemoteRead,
    Reserve,
    Wait,
    WriteTiles,
)
from verispatial.ir.program import Buffer, Program
from verispatial.ir.sharing import sharing_waiters


def _iteration(enc: Encoder, m: z3.ModelRef, lf: Leaf) -> dict[str, int]:
    pos = enc.position(lf.engine)
    return {lc.var: model_int(m, pos.idx[lc.path]) for lc in lf.loops}


def check_straddle(a: Analysis, facts_of: Callable[[str], EngineFacts], rlimit: int = DEFAULT_RLIMIT,
                   cache: ProofMemo | None = None, trusted: set[int] | None = None) -> list[Result]:
    """One result per buffer with pushes or pops; a refutation names the op, iteration and running sum.

    With ``cache``, a buffer whose component is isomorphic (``canon.py``; ``trusted`` is part of the key) to one
    already proved reuses that proof. ``facts_of``: an engine's per-engine rules' facts (``rules.engine_facts``),
    which say how far past its pointer each access of a ring may reach (asked only for engines with such accesses;
    the caller computes them, the checker once per engine: ``checker.facts_getter``)."""
    out: list[Result] = []
    by_buf: dict[int, list[Leaf]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            if isinstance(lf.op, (Push, Pop)):
                by_buf.setdefault(lf.op.buf, []).append(lf)
    scratch = {x.id for x in a.program.buffers if x.scratch}
    for v in a.views.values():
        for lf in v.leaves:
            # an unpack or an access from a pointer moves no counter: it joins a buffer's obligation only where
            # pushes or pops move that pointer
            if isinstance(lf.op, Compute):
                for read in sorted({o.buf for o in lf.op.ins} & by_buf.keys()):
                    by_buf[read].append(lf)
            for b in sorted(({b for b, _, _ in _pointer_accesses(lf.op)} & by_buf.keys()) - scratch):
                by_buf[b].append(lf)
    for b, leaves in sorted(by_buf.items()):
        def compute(b: int = b, leaves: list[Leaf] = leaves) -> Result:
            return _straddle(a, b, leaves, rlimit, facts_of)
        if cache is None:
            out.append(compute())
            continue
        c = cache.canon(a, a.component_of(lf.engine for lf in leaves), trusted or set())
        out.append(cache.run(R.CB_STRADDLE, c, [c.buffers[b], rlimit], f"{R.CB_STRADDLE}:b{b}", compute))
    return out


def _straddle(a: Analysis, b: int, leaves: list[Leaf], rlimit: int, facts_of: Callable[[str], EngineFacts]) -> Result:
    p = a.program
    t0 = time.perf_counter()
    cap = p.buffers[b].capacity
    name = f"{R.CB_STRADDLE}:b{b}"
    verdict: Result | None = None
    for kind in (Push, Pop):
        mine = [lf for lf in leaves if isinstance(lf.op, kind)]
        sizes: dict[str, set[int]] = {}
        for lf in mine:
            sizes.setdefault(lf.engine, set()).add(pages(lf.op))
        for lf in mine:
            budget.check()
            if smt.shortcuts() and _page_multiples(pages(lf.op), sizes[lf.engine], cap):
                continue
            # Running sum of this kind on this buffer by this engine (one producer / one consumer).
            n = pages(lf.op)
            enc, before, r = _past_ring_end(a, name, lf, [x for x in mine if x.engine == lf.engine], n, cap, rlimit)
            if r.status == Status.SAT:
                assert r.model is not None
                run = model_int(r.model, before)
                what = "pushes" if kind is Push else "pops"
                verdict = _refuted(name, enc, r.model, lf, b, cap, run, n,
                                   f"{lf.engine} {what} {n} pages of b{b} at running sum {run} "
                                   f"({run % cap} into a {cap}-page ring): the block straddles the ring's end")
                break
            if r.status == Status.UNKNOWN:
                verdict = Result(R.Family.CIRCULAR_BUFFER.value, name, Verdict.FAILED, f"solver: {r.reason}")
        if verdict is not None and verdict.verdict == Verdict.REFUTED:
            break
    if verdict is None or verdict.verdict != Verdict.REFUTED:
        verdict = _unpack_straddle(a, b, leaves, rlimit) or verdict
    if verdict is None or verdict.verdict != Verdict.REFUTED:
        verdict = _access_straddle(a, b, leaves, rlimit, facts_of) or verdict
    if verdict is None:
        verdict = Result(R.Family.CIRCULAR_BUFFER.value, name, Verdict.PROVED,
                         f"every push and pop of b{b} lands inside the {cap}-page ring")
    return Result(verdict.family, verdict.name, verdict.verdict, verdict.reason, verdict.counterexample,
                  time.perf_counter() - t0)


def _unpack_straddle(a: Analysis, b: int, leaves: list[Leaf], rlimit: int) -> Result | None:
    """A Compute of the engine that pops ``b`` unpacking its first ``n`` front pages past the ring's end from the read
    pointer's slot (``cb.semantics.unpack_in_ring``: the unpacker does not wrap), one query per such Compute: its
    engine at it with its own running sum of pops ``before`` and ``before % cap + n > cap``. Returns the refutation
    (replayed, ``Replay.CLAIMED``) or the first failure to prove, else None. Skipped by arithmetic when every pop of
    the engine moves the same ``m`` pages, ``m`` divides ``cap`` and ``n <= m`` (the sum is a multiple of ``m``, so
    at most ``cap - m`` past a lap's start)."""
    p = a.program
    cap = p.buffers[b].capacity
    name = f"{R.CB_STRADDLE}:b{b}"
    pops = [lf for lf in leaves if isinstance(lf.op, Pop)]
    failed: Result | None = None
    for lf in leaves:
        if not isinstance(lf.op, Compute):
            continue
        same = [x for x in pops if x.engine == lf.engine]
        sizes = {pages(x.op) for x in same}
        for n in sorted({o.pages for o in lf.op.ins if o.buf == b}):
            budget.check()
            if not same or (smt.shortcuts() and len(sizes) == 1 and cap % min(sizes) == 0 and n <= min(sizes)):
                continue  # no pop of its own: the read pointer stays at the ring's start (n > cap is unwaited)
            enc, before, r = _past_ring_end(a, name, lf, same, n, cap, rlimit)
            if r.status == Status.SAT:
                assert r.model is not None
                run = model_int(r.model, before)
                summary = (f"{lf.engine} unpacks {n} pages of b{b} at running pops {run} ({run % cap} into a "
                           f"{cap}-page ring): the indexed read passes the ring's end")
                return _refuted(name, enc, r.model, lf, b, cap, run, n, summary)
            if r.status == Status.UNKNOWN and failed is None:
                failed = Result(R.Family.CIRCULAR_BUFFER.value, name, Verdict.FAILED, f"solver: {r.reason}")
    return failed


def _pointer_accesses(op: Op) -> list[tuple[int, bool, str]]:
    """(buffer, from the read pointer, what) for each ring access of ``op`` addressed from a pointer plus an offset:
    ``tiles`` — a write into the back (``ReadTiles``, ``RemoteRead``, ``FillTiles``, ``CopyTiles``, ``PackAcc``) or a
    read of the front (``WriteTiles``, ``CopyTiles``); ``source`` — a multicast's source pages, front or back, or a
    remote read's pages of another core at this engine's read pointer plus its offset; ``behind`` — a multicast's
    source pages already pushed, at the write pointer taken ``op.behind`` pages before (``_behind``); ``landing`` —
    its pages landing at its own write pointer of ``dst``."""
    if isinstance(op, RemoteRead):
        return [(op.into, False, "tiles"), (op.buf, True, "source")]
    if isinstance(op, (ReadTiles, FillTiles)):
        return [(op.into, False, "tiles")]
    if isinstance(op, PackAcc):
        return [(op.buf, False, "tiles")]
    if isinstance(op, CopyTiles):
        return [(op.src, True, "tiles"), (op.into, False, "tiles")]
    if isinstance(op, WriteTiles):
        return [(op.src, True, "tiles")]
    if isinstance(op, McastSend):
        out = [(op.buf, False, "behind")] if op.behind else [(op.buf, op.front, "source")]
        return out + ([] if op.dst is None else [(op.dst, False, "landing")])
    return []


def _reach(op: Op, front: bool, what: str, f: EngineFacts, path: tuple[int, ...]) -> int:
    """How many pages past its pointer an access (``_pointer_accesses``) of ``op`` may end: a multicast's offset and
    pages, else the furthest page the per-engine facts say its tiles touch inside its window (``EngineFacts.inside_read``
    / ``inside_written``: a may-set, so its most is an upper bound), 0 where it is never inside (an access past its
    window is ``cb-read-unwaited`` / ``cb-write-unreserved``'s)."""
    if isinstance(op, McastSend):
        if what in ("landing", "behind"):
            return op.offset + op.pages  # validate: a multicast of pages already pushed has no dst
        return (op.offset if op.dst is None else 0) + op.pages
    if isinstance(op, RemoteRead) and what == "source":
        return op.offset + op.pages  # another core's pages at this engine's read pointer of buf plus offset
    got = (f.inside_read if front else f.inside_written).get(path, frozenset())
    return max(got) + 1 if got else 0


def _access_straddle(a: Analysis, b: int, leaves: list[Leaf], rlimit: int,
                     facts_of: Callable[[str], EngineFacts]) -> Result | None:
    """An access of ``b`` addressed from a pointer plus an offset (``_pointer_accesses``) that passes the ring's end
    from the pointer's slot: the kernel adds byte offsets to ``get_write_ptr`` / ``get_read_ptr``, which only
    ``cb_push_back`` / ``cb_pop_front`` wrap, at the ring's limit (``cb.semantics.past_end``). One query per access
    whose reach (``_reach``, pages past the pointer) arithmetic does not settle: its engine at it with the pages it
    pushed (a write) or popped (a read) so far, ``before``, and ``before % cap + reach > cap``. Settled by
    arithmetic when the pointer moves by one size ``m`` only, ``m`` divides the capacity, the reach is at most ``m``
    and a multicast of pages already pushed goes back a multiple of ``m`` (``behind``): the pointer's pages, ``before``
    or ``before - behind``, are then a multiple of ``m``, so at most ``cap - m`` past a lap's start; an engine that
    never moves it keeps its own at the ring's start (a sharing waiter: its reads are ``shared_encoding``'s).
    Returns the refutation (replayed by the interpreter) or the first failure to prove, else None."""
    p = a.program
    cap = p.buffers[b].capacity
    name = f"{R.CB_STRADDLE}:b{b}"
    movers: dict[bool, list[Leaf]] = {True: [lf for lf in leaves if isinstance(lf.op, Pop)],
                                      False: [lf for lf in leaves if isinstance(lf.op, Push)]}
    # per pointer, once: the engines that move it and the sizes of its moves (asked per access, these were a pass
    # over every mover for every access, quadratic in a buffer's ops: a 100,000-op straight line spent a minute here
    # past its run budget)
    moving = {front: {x.engine for x in same} for front, same in movers.items()}
    size_sets = {front: {pages(x.op) for x in same} for front, same in movers.items()}
    failed: Result | None = None
    for lf in leaves:
        budget.check()
        for buf, front, what in _pointer_accesses(lf.op):
            if buf != b:
                continue
            # The pointer is the one engine's that moves it (a reader that only waits, a sharing waiter, keeps its
            # own at the ring's start); the running sum is every such op's, as the interpreter counts it.
            same = movers[front]
            if lf.engine not in moving[front]:
                continue
            sizes = size_sets[front]
            reach = _reach(lf.op, front, what, facts_of(lf.engine), lf.path)
            # A multicast of pages already pushed addresses the write pointer as it was ``back`` pages ago.
            back = lf.op.behind if isinstance(lf.op, McastSend) and what == "behind" else 0
            if reach <= 0 or (smt.shortcuts() and len(sizes) == 1 and cap % min(sizes) == 0 and back % min(sizes) == 0
                              and reach <= min(sizes)):
                continue
            budget.check()
            enc, before, r = _past_ring_end(a, name, lf, same, reach, cap, rlimit, back)
            if r.status == Status.SAT:
                assert r.model is not None
                run = model_int(r.model, before)
                where = "read" if front else "write"
                taken = f" taken {back} pages back" if back else ""
                summary = (f"{lf.engine} {type(lf.op).__name__} reaches {reach} pages of b{b} past its {where} pointer"
                           f"{taken} at running {'pops' if front else 'pushes'} {run} ({(run - back) % cap} into a "
                           f"{cap}-page ring): past the ring's end (only a push or pop wraps the pointer)")
                return _refuted(name, enc, r.model, lf, b, cap, run, reach, summary)
            if r.status == Status.UNKNOWN and failed is None:
                failed = Result(R.Family.CIRCULAR_BUFFER.value, name, Verdict.FAILED, f"solver: {r.reason}")
    return failed


def _refuted(name: str, enc: Encoder, m: z3.ModelRef, lf: Leaf, b: int, cap: int, run: int, n: int,
             summary: str) -> Result:
    """The refutation of ``cb-straddle`` at ``lf`` from model ``m`` of a ``_past_ring_end`` query: the op, its
    iteration and trips, the running sum ``run`` and the ``n`` pages that pass the end (replayed by the caller)."""
    cex = {"kind": R.CB_STRADDLE, "engine": lf.engine, "path": list(lf.path), "iteration": _iteration(enc, m, lf),
           "trips": {t: model_int(m, v) for t, v in enc.trip_vars.items()}, "buffer": b, "capacity": cap,
           "running_sum": run, "pages": n, "summary": summary}
    return Result(R.Family.CIRCULAR_BUFFER.value, name, Verdict.REFUTED, summary, cex)  # type: ignore[arg-type]


def _past_ring_end(a: Analysis, name: str, lf: Leaf, same: list[Leaf], n: int, cap: int,
                   rlimit: int, back: int = 0) -> tuple[Encoder, z3.ArithRef, Outcome]:
    """The straddle query of both kinds (a push or pop block, an unpack from the read pointer): ``lf``'s engine at
    ``lf`` with ``before``, the pages the ``same`` leaves moved so far, and ``before % cap + n > cap``: ``n`` pages
    from there pass the ring's end. ``back``: the pointer was taken that many pages earlier (a multicast of pages
    already pushed), ``before >= back`` (fewer is ``mcast-source-unpublished``'s) and ``(before - back) % cap + n >
    cap``. Returns the encoder, ``before`` and the check's result."""
    q = Query(name, rlimit)
    enc = Encoder(q, a.program, a.views)
    before = z3.Sum([q.val(0)] + [enc.executed(x) * pages(x.op) for x in same])
    q.add(enc.position(lf.engine).at(lf))
    if back:
        q.add(before >= back)
    q.add((before - back) % cap + n > cap)
    return enc, before, q.check()


def _page_multiples(n: int, sizes: set[int], cap: int) -> bool:
    """Whether the straddle query of an op moving ``n`` pages is unsat by arithmetic: every op of its kind by its
    engine on the buffer moves the same ``n > 0`` pages (``sizes``: the page counts those ops move) and ``n``
    divides ``cap > 0``. The running sum before the op is then ``n * k`` for an integer ``k``, ``n * k mod cap`` is
    a multiple of ``n`` in ``[0, cap)``, so at most ``cap - n``. (The sizes are gathered once per engine: asking
    every op of a 100k-op straight-line program about every other was quadratic.)"""
    return n > 0 and cap > 0 and cap % n == 0 and sizes == {n}


def check_cb_balance(a: Analysis, rlimit: int = DEFAULT_RLIMIT, trusted: set[int] | None = None,
                     cache: ProofMemo | None = None) -> list[Result]:
    """Total pushed == total popped for every buffer and every trip value whose run can end.

    For ``trusted`` buffers (coverage rules proved) a run that ends has ``popped <= pushed <= popped +
    capacity`` — trip values violating that cannot terminate (the deadlock obligation speaks of them).
    With ``cache``, a buffer of a component isomorphic to one already proved reuses that proof (``canon.py``).
    """
    out: list[Result] = []
    p = a.program
    by_buf: dict[int, list[Leaf]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            if isinstance(lf.op, (Push, Pop)):
                by_buf.setdefault(lf.op.buf, []).append(lf)
    for v in a.views.values():
        for lf in v.leaves:
            # an unpack moves no counter: it joins a buffer's obligation only where pops move its read pointer
            if isinstance(lf.op, Compute):
                for read in sorted({o.buf for o in lf.op.ins} & by_buf.keys()):
                    by_buf[read].append(lf)
    reused = p.counters_reused()
    for b in p.buffers:
        leaves = by_buf.get(b.id, [])
        if not leaves:
            continue
        if b.id not in reused:
            out.append(Result(R.Family.BALANCE.value, f"{R.BALANCE_CB}:b{b.id}", Verdict.PROVED,
                              f"b{b.id} may end holding pages: the launch's end resets its counters and no later "
                              "section uses its circular-buffer index (trisc.cc init_sync_registers)"))
            continue

        def compute(b: Buffer = b, leaves: list[Leaf] = leaves) -> Result:
            return _cb_balance(a, b, leaves, rlimit, trusted)
        if cache is None:
            out.append(compute())
            continue
        c = cache.canon(a, a.component_of(lf.engine for lf in leaves), trusted or set())
        out.append(cache.run(R.BALANCE_CB, c, [c.buffers[b.id], trusted is not None and b.id in trusted, rlimit],
                             f"{R.BALANCE_CB}:b{b.id}", compute))
    return out


def _constant_total(a: Analysis, leaves: list[Leaf]) -> int | None:
    """Pages the ``leaves`` move in a whole run when each sits under loops alone (no If: a guard runs its body in
    only some iterations) whose counts are constants, else None."""
    total = 0
    for lf in leaves:
        ops: tuple[Op, ...] = a.views[lf.engine].program.ops
        for i in lf.path[:-1]:
            parent = ops[i]
            if not isinstance(parent, Loop):
                return None
            ops = parent.body
        n = pages(lf.op)
        for lc in lf.loops:
            if not isinstance(lc.count, int):
                return None
            n *= lc.count
        total += n
    return total


def _cb_balance(a: Analysis, b: Buffer, leaves: list[Leaf], rlimit: int, trusted: set[int] | None) -> Result:
    p = a.program
    t0 = time.perf_counter()
    if smt.shortcuts():
        pu = _constant_total(a, [lf for lf in leaves if isinstance(lf.op, Push)])
        po = _constant_total(a, [lf for lf in leaves if isinstance(lf.op, Pop)])
        # The query asks for pushed != popped (within the occupancy bound for a trusted buffer): constants decide it.
        if pu is not None and po is not None and (
                pu == po or (trusted is not None and b.id in trusted and not po <= pu <= po + b.capacity)):
            return Result(R.Family.BALANCE.value, f"{R.BALANCE_CB}:b{b.id}", Verdict.PROVED, f"b{b.id} ends empty",
                          seconds=time.perf_counter() - t0)
    q = Query(f"{R.BALANCE_CB}:b{b.id}", rlimit)
    enc = Encoder(q, p, a.views)
    pushed = z3.Sum([enc.total(lf) * pages(lf.op) for lf in leaves if isinstance(lf.op, Push)] + [q.val(0)])
    popped = z3.Sum([enc.total(lf) * pages(lf.op) for lf in leaves if isinstance(lf.op, Pop)] + [q.val(0)])
    q.add(pushed != popped)
    if trusted is not None and b.id in trusted:
        q.add(z3.And(popped <= pushed, pushed <= popped + b.capacity))
    r = q.check()
    name = f"{R.BALANCE_CB}:b{b.id}"
    if r.status == Status.UNSAT:
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"b{b.id} ends empty", seconds=time.perf_counter() - t0)
    if r.status == Status.SAT:
        assert r.model is not None
        trips = {n: model_int(r.model, v) for n, v in enc.trip_vars.items()}
        pu, po = model_int(r.model, pushed), model_int(r.model, popped)
        cex = {"kind": R.BALANCE_CB, "buffer": b.id, "trips": trips, "pushed": pu, "popped": po,
               "summary": f"b{b.id} ({b.name}) ends with {pu - po} pages left (pushed {pu}, popped {po})"
                          + (f" when {trip_words(trips)}" if trips else "")}
        return Result(R.Family.BALANCE.value, name, Verdict.REFUTED, cex["summary"], cex, time.perf_counter() - t0)  # type: ignore[arg-type]
    return Result(R.Family.BALANCE.value, name, Verdict.FAILED, f"solver: {r.reason}", seconds=time.perf_counter() - t0)


# ---------------------------------------------------------------- per-engine rules (certify/rules.py runs these)


def reserve(c: EngineRun, op: Reserve, path: tuple[int, ...], s: State) -> State:
    """cb_reserve_back: the reserved window grows to ``pages`` past the write pointer; its new pages are re-reserved
    (``async-source-reuse`` when one is still the source of a multicast from the back)."""
    b = op.buf
    froms = [v for v, _ in pairs(s, "rsv", b)]
    lo = min(froms, default=0)
    c.reserve_from[path] = min(c.reserve_from.get(path, lo), lo)
    new = ring_slots(lo, op.pages - lo, c.caps[b])
    c.reuse(s, "sb", b, new, path, "re-reserves")
    return map_facts(s, "rsv", b, lambda v, f: (max(v, op.pages), f))


def wait(c: EngineRun, op: Wait, path: tuple[int, ...], s: State) -> State:
    """cb_wait_front: the waited window grows to ``pages`` past the read pointer."""
    return map_facts(s, "wt", op.buf, lambda v, r: (max(v, op.pages), r))


def push(c: EngineRun, op: Push, path: tuple[int, ...], s: State) -> State:
    """cb_push_back: ``cb-push-uncovered``, ``cb-push-unfilled``, ``async-read-publish``; the window and the source
    slots move with the write pointer."""
    b, n = op.buf, op.pages
    pt = c.p.buffers[b].page_tiles
    held = pairs(s, "rsv", b)
    if any(v < n for v, _ in held):
        c.flag(R.CB_PUSH_UNCOVERED, path, f"push of {n} pages on b{b} beyond its reserved window")
    if b in c.data and b not in c.dests and any(f < n * pt for _, f in held):
        c.flag(R.CB_PUSH_UNFILLED, path, f"push of {n} pages on b{b} publishes pages nothing wrote since they "
                                         "were reserved")
    if ("rd", b) in s:
        c.flag(R.ASYNC_READ_PUBLISH, path, f"push of b{b} while reads into it may not have landed (no read barrier since)")
    if ("st", b) in s:
        c.flag(R.ASYNC_READ_PUBLISH, path, f"push of b{b} while fill_tiles or copy_tiles stores into it may not have "
                                           "landed (no drain since)")
    s = shift(s, "sb", b, n, c.caps[b])
    s = frozenset(("rdp", b, (int(t[2]) - n) % c.caps[b], t[3]) if t[0] == "rdp" and t[1] == b else t  # type: ignore[call-overload]
                  for t in s)
    # A path's pushes so far while fewer than a ring (``("few", b, n)``: what a multicast of pages already pushed
    # may name, ``multicast.encoding._send_pushed``); saturated, the fact goes.
    s = frozenset(t for t in s if not (t[0] == "few" and t[1] == b)) | {
        ("few", b, int(t[2]) + n) for t in s if t[0] == "few" and t[1] == b and int(t[2]) + n < c.caps[b]}  # type: ignore[call-overload]
    return map_facts(s, "rsv", b, lambda v, f: (max(v - n, 0), max(f - n * pt, 0)))


def pop(c: EngineRun, op: Pop, path: tuple[int, ...], s: State) -> State:
    """cb_pop_front: ``cb-pop-uncovered``; the freed pages must not be a pending source (``async-source-reuse``)."""
    b, n = op.buf, op.pages
    pt = c.p.buffers[b].page_tiles
    if any(v < n for v, _ in pairs(s, "wt", b)):
        c.flag(R.CB_POP_UNCOVERED, path, f"pop of {n} pages on b{b} beyond its waited window")
    c.reuse(s, "sf", b, ring_slots(0, n, c.caps[b]), path, "frees")
    s = shift(s, "sf", b, n, c.caps[b])
    return map_facts(s, "wt", b, lambda v, r: (max(v - n, 0), max(r - n * pt, 0)))


def capacity(c: EngineRun) -> None:
    """``cb-capacity``: a Reserve or Wait some path reaches asks for more pages than the ring holds (an op under a
    loop of count 0 or an If no iteration admits never runs, so it never asks for anything)."""
    for lf in c.view.leaves:
        op = lf.op
        if isinstance(op, (Reserve, Wait)) and op.pages > c.p.buffers[op.buf].capacity and lf.path in c.reached:
            cap = c.p.buffers[op.buf].capacity
            c.flag(R.CB_CAPACITY, lf.path, f"{type(op).__name__.lower()} of {op.pages} pages on b{op.buf} whose "
                                           f"capacity is {cap}: it can never return")


def index_window(c: EngineRun, s: State, op: ReadTiles | WriteTiles, path: tuple[int, ...]) -> None:
    """``cb-read-unwaited`` for an indirect address: its index buffer's front page (``Program.index_buffers``)
    must be in this engine's waited window (some path may have no page there)."""
    dyn = op.addr.dynamic
    b = c.p.index_buffer(c.view.program, path[0], op, c.index_bufs, c.phases)
    if dyn is not None and b is not None and any(v < 1 for v, _ in pairs(s, "wt", b)):
        c.flag(R.CB_READ_UNWAITED, path, f"{type(op).__name__.lower()} reads its index {dyn.name} from the "
                                         f"front of b{b} outside its waited window")


def fill(c: EngineRun, s: State, b: int, tiles: int, path: tuple[int, ...], what: str) -> State:
    """A write of ``tiles`` into the back of ``b`` (``cb-write-unreserved``, and the rewrite of a source)."""
    pt = c.p.buffers[b].page_tiles
    top = c.most[b] * pt + 1
    pages: set[int] = set()
    for v, f in pairs(s, "rsv", b):
        if f + tiles > v * pt:
            c.flag(R.CB_WRITE_UNRESERVED, path, f"{what} writes tiles past the reserved window of b{b}")
        else:
            c.inside_written.setdefault(path, set()).update(tile_pages(f, tiles, pt))
        pages.update(tile_pages(f, tiles, pt))
    c.written.setdefault(path, set()).update(pages)
    c.reuse(s, "sb", b, {x % c.caps[b] for x in pages}, path, f"{what} rewrites")
    s = map_facts(s, "rsv", b, lambda v, f: (v, min(f + tiles, top)))
    if what == "read_tiles":  # it lands later: a multicast issued from those pages meanwhile is rewritten then
        s = s | {("rdp", b, x % c.caps[b], path) for x in pages}
    return s


def roles(op: Op) -> list[tuple[int, bool]]:
    """(buffer, produces) for each buffer the op uses as its producer (reserves, pushes, writes into the back,
    multicasts from the back) or consumer (waits, pops, reads from the front): the read and write pointers are
    private to the thread that owns that end (reference §1.1)."""
    if isinstance(op, (Reserve, Push)):
        return [(op.buf, True)]
    if isinstance(op, (Wait, Pop)):
        return [(op.buf, False)]
    if isinstance(op, (ReadTiles, FillTiles)):
        return [(op.into, True)]
    if isinstance(op, CopyTiles):
        return [(op.into, True), (op.src, False)]
    if isinstance(op, PackAcc):
        return [(op.buf, True)]
    if isinstance(op, WriteTiles):
        return [(op.src, False)]
    if isinstance(op, RemoteRead):
        # It fills ``into``'s back and reads at its read pointer of ``buf``: a pointer of buf's consumer.
        return [(op.into, True), (op.buf, False)]
    if isinstance(op, McastSend):
        # With dst, the address is this engine's write pointer of dst: a pointer of dst's producer.
        return [(op.buf, not op.front)] + ([] if op.dst is None else [(op.dst, True)])
    if isinstance(op, Compute):
        return [(o.buf, False) for o in op.ins]
    return []


def ownership_findings(p: Program, views: dict[str, EngineView]) -> list[Finding]:
    """One producing and one consuming engine per buffer (reference §1.1: pointers are per thread); other engines of
    the site may wait on and read its front without popping it (``ir/sharing.py``)."""
    prod: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    cons: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    sharing = sharing_waiters(p)
    for v in views.values():
        for lf in v.leaves:
            for b, produces in roles(lf.op):
                if not produces and v.key in sharing.get(b, ()):
                    continue
                (prod if produces else cons).setdefault(b, []).append((v.key, lf.path))
    out: list[Finding] = []
    for rule, table, what in ((R.CB_SINGLE_PRODUCER, prod, "produce"), (R.CB_SINGLE_CONSUMER, cons, "consume")):
        for b, uses in sorted(table.items()):
            engines = sorted({e for e, _ in uses})
            if len(engines) > 1:
                # Named at the second engine by key; the interpreter shows it at whichever the run reaches second.
                second = next(u for u in uses if u[0] == engines[1])
                out.append(Finding(rule, second[0], second[1],
                                   f"b{b} has {len(engines)} engines that {what} it: {', '.join(engines)}",
                                   at=tuple(dict.fromkeys(uses)), subject=BufferRef(b)))
    return out


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
def fill_tiles(c: EngineRun, op: FillTiles, path: tuple[int, ...], s: State) -> State:
    """Local stores: they count in the fill as a landed read does, leave no NoC transaction outstanding, and stay
    unlanded (``("st", into)``) until a drain of the engine, as a copy's stores do. A patch (``tiles`` 0) needs a
    filled tile in the reserved window and no read into the buffer in flight (``cb-write-unreserved``, as the
    interpreter's ``fill_tiles``)."""
    if op.tiles == 0:
        pt = c.p.buffers[op.into].page_tiles
        if any(not 1 <= f <= v * pt for v, f in pairs(s, "rsv", op.into)):
            c.flag(R.CB_WRITE_UNRESERVED, path, f"fill_tiles patches b{op.into} with no filled tile in its reserved "
                                                "window")
        elif ("rd", op.into) in s:
            c.flag(R.CB_WRITE_UNRESERVED, path, f"fill_tiles patches b{op.into} while reads into it may not have "
                                                "landed (no read barrier since)")
    s = fill(c, s, op.into, op.tiles, path, "fill_tiles")
    return frozenset(t for t in s if t[0] != "st") if op.drain else s | {("st", op.into)}


def copy_tiles(c: EngineRun, op: CopyTiles, path: tuple[int, ...], s: State) -> State:
    """Local loads and stores: the loads take the next tiles of ``op.src``'s waited window (``cb-read-unwaited``, the
    read cursor a ``WriteTiles`` moves; nothing stays a source), the stores count in ``op.into``'s fill as a
    ``FillTiles`` of as many tiles and stay unlanded (``("st", into)``) until a drained copy."""
    b = op.src
    pt = c.p.buffers[b].page_tiles
    top = c.most[b] * pt + 1
    for v, r in pairs(s, "wt", b):
        if r + op.tiles > v * pt:
            c.flag(R.CB_READ_UNWAITED, path, f"copy_tiles loads tiles past the waited window of b{b}")
        else:
            c.inside_read.setdefault(path, set()).update(tile_pages(r, op.tiles, pt))
    s = map_facts(s, "wt", b, lambda v, r: (v, min(r + op.tiles, top)))
    s = fill(c, s, op.into, op.tiles, path, "copy_tiles")
    # A drain lands every earlier store of the engine; without one the stores into ``into`` stay unlanded.
    return frozenset(t for t in s if t[0] != "st") if op.drain else s | {("st", op.into)}


HANDLERS: dict[type, Callable[..., State]] = {Reserve: reserve, Wait: wait, Push: push, Pop: pop,
                                              FillTiles: fill_tiles, CopyTiles: copy_tiles}
