"""Happens-before obligations (DESIGN §7, route step 4): "b before a" is unsat under the reachability facts.

- ``hb-activation``: every read of an activation comes after the completion (the writer's next write barrier)
  of every write of it, and the activation is written at all.
- ``hb-state``: every write of a state comes after every read of its old value.
- ``hb-write-write``: two engines that may write a common tile are ordered one way or the other.
- ``hb-rendezvous``: the work of sections <= b on every engine comes before any op of sections > b on any engine.

These are tensor-level orders, stricter than the interpreter's tile-level rule: a refutation is kept only if the
interpreter reproduces a race; otherwise the obligation fails to prove (never passes).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import z3

from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis, Decoded, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status
from verispatial.certify.structure import Leaf
from verispatial.ir.core import Role
from verispatial.ir.ops import AtomicBarrier, ReadTiles, SemInc, SemSet, SemWait, WriteBarrier, WriteTiles


def _cex(rule: str, d: Decoded, summary: str, **extra: object) -> dict[str, object]:
    return d.counterexample("race", rule, summary, **extra)


def _completion(a: Analysis, w: Leaf) -> Leaf | None:
    """The first write barrier after ``w`` on its engine at the same or an outer loop level."""
    for lf in a.views[w.engine].leaves[w.index + 1:]:
        if isinstance(lf.op, WriteBarrier) and w.loops[: len(lf.loops)] == lf.loops:
            return lf
    return None


Build = Callable[[StateQuery], z3.BoolRef]


def _unread_before_write(r: Leaf, w: Leaf) -> Build:
    return lambda sq: z3.And(sq.enc.started(w), sq.enc.executed(r) < sq.enc.total(r))


def _started_before_done(r: Leaf, cp: Leaf) -> Build:
    return lambda sq: z3.And(sq.enc.started(r), sq.enc.executed(cp) < sq.enc.total(cp))


def _read_never_written(r: Leaf, writes: list[Leaf]) -> Build:
    return lambda sq: z3.And(sq.enc.started(r), z3.Sum([sq.q.val(0)] + [sq.enc.total(w) for w in writes]) == 0)


def _run(a: Analysis, trusted: set[int], name: str, engines: list[str], build: Build,
         proved: str, refuted: str, rule: str, rlimit: int, **extra: object) -> Result:
    t0 = time.perf_counter()
    o, d, _ = solve_each(a, build, name, frozenset(engines), trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result("happens-before", name, Verdict.PROVED, proved, seconds=dt)
    if o.status == Status.SAT and d is not None:
        return Result("happens-before", name, Verdict.REFUTED, refuted, _cex(rule, d, refuted, **extra), dt)
    return Result("happens-before", name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def check_ordering(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    p = a.program
    out: list[Result] = []
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    for t in p.tensors:
        reads = [lf for lf in leaves if isinstance(lf.op, ReadTiles) and lf.op.tensor == t.name]
        writes = [lf for lf in leaves if isinstance(lf.op, WriteTiles) and lf.op.tensor == t.name]
        if t.role == Role.ACTIVATION:
            out.extend(_activation(a, trusted, t.name, reads, writes, rlimit))
        elif t.role == Role.STATE:
            for r in reads:
                for w in writes:
                    out.append(_run(
                        a, trusted, f"hb-state:{t.name}:{w.engine}{list(w.path)}", [r.engine, w.engine],
                        _unread_before_write(r, w),
                        f"every write of state {t.name} follows every read of its old value",
                        f"{w.engine} can write state {t.name} before {r.engine} read its old value", "tensor-race", rlimit,
                        engine=r.engine, path=list(r.path)))
        out.extend(_write_write(a, trusted, t.name, writes, rlimit))
    out.extend(_rendezvous(a, trusted, rlimit))
    return out


def _activation(a: Analysis, trusted: set[int], tensor: str, reads: list[Leaf], writes: list[Leaf],
                rlimit: int) -> list[Result]:
    out: list[Result] = []
    for r in reads:
        name = f"hb-activation:{tensor}:{r.engine}{list(r.path)}"
        if not writes:
            out.append(Result("happens-before", name, Verdict.REFUTED, f"activation {tensor} is read but never written",
                              {"kind": "race", "rule": "tensor-race", "summary": f"{tensor} is never written"}))
            continue
        out.append(_run(a, trusted, name, [r.engine, *(w.engine for w in writes)],
                        _read_never_written(r, writes),
                        f"{tensor} is written whenever it is read", f"{r.engine} can read {tensor} in a run that never writes it",
                        "tensor-race", rlimit))
        for w in writes:
            cp = _completion(a, w)
            if cp is None:
                out.append(Result("happens-before", name, Verdict.REFUTED,
                                  f"the write of {tensor} by {w.engine} at {list(w.path)} is never completed by a write barrier",
                                  {"kind": "race", "rule": "tensor-race", "summary": f"{w.engine} never completes its write of {tensor}"}))
                continue
            out.append(_run(
                a, trusted, name + f"<{w.engine}{list(w.path)}", [r.engine, w.engine],
                _started_before_done(r, cp),
                f"{r.engine} reads {tensor} after {w.engine}'s writes of it completed",
                f"{r.engine} can read {tensor} at {list(r.path)} before {w.engine}'s write at {list(w.path)} completed",
                "tensor-race", rlimit, engine=r.engine, path=list(r.path), read={"engine": r.engine, "path": list(r.path)},
                write={"engine": w.engine, "path": list(w.path)}))
    return out


def _may_share_tile(a: Analysis, w1: Leaf, w2: Leaf, rlimit: int) -> bool | None:
    q = Query("write-overlap", rlimit)
    enc = Encoder(q, a.program, a.views)
    ranges = []
    for w in (w1, w2):
        pos = enc.position(w.engine)
        q.add(pos.at(w))
        op = w.op
        assert isinstance(op, WriteTiles)
        env = {lc.var: pos.idx[lc.path] for lc in w.loops}
        lo = q.val(op.addr.base) + z3.Sum([q.val(0)] + [env[t.var] * t.coef for t in op.addr.terms])
        if op.addr.dynamic is not None:
            dv = q.int_var(f"dyn[{w.engine}{w.path}]")
            q.add(z3.And(dv >= op.addr.dynamic.lo, dv <= op.addr.dynamic.hi))
            lo = lo + dv * op.addr.dynamic.scale
        ranges.append((lo, lo + op.tiles))
    (a0, a1), (b0, b1) = ranges
    q.add(z3.And(a0 < b1, b0 < a1))
    r = q.check()
    return None if r.status == Status.UNKNOWN else r.status == Status.SAT


def _write_write(a: Analysis, trusted: set[int], tensor: str, writes: list[Leaf], rlimit: int) -> list[Result]:
    out: list[Result] = []
    for i, w1 in enumerate(writes):
        for w2 in writes[i + 1:]:
            if w1.engine == w2.engine:
                continue
            name = f"hb-write-write:{tensor}:{w1.engine}{list(w1.path)}~{w2.engine}{list(w2.path)}"
            share = _may_share_tile(a, w1, w2, rlimit)
            if share is False:
                continue
            if share is None:
                out.append(Result("happens-before", name, Verdict.FAILED, "solver: unknown on the tile overlap"))
                continue
            c1, c2 = _completion(a, w1), _completion(a, w2)
            results = []
            for first, cp, second in ((w1, c1, w2), (w2, c2, w1)):
                if cp is None:
                    continue
                results.append(_run(a, trusted, name, [w1.engine, w2.engine],
                                    _started_before_done(second, cp),
                                    f"{first.engine}'s writes of {tensor} complete before {second.engine} writes it",
                                    f"{w1.engine} and {w2.engine} can write a common tile of {tensor} unordered",
                                    "tensor-race", rlimit))
            ok = next((r for r in results if r.verdict == Verdict.PROVED), None)
            out.append(ok or (results[0] if results else Result(
                "happens-before", name, Verdict.REFUTED, f"{w1.engine} and {w2.engine} write {tensor} and neither completes",
                {"kind": "race", "rule": "tensor-race", "summary": f"unordered writes of {tensor}"})))
    return out


def _rendezvous_leaves(a: Analysis, key: str) -> set[int]:
    """The rendezvous closing each section of engine ``key``: the maximal run of top-level semaphore ops and
    atomic barriers that ends the section (arrive, gather, release, reset)."""
    view = a.views[key]
    ep = view.program
    out: set[int] = set()
    starts = list(ep.section_starts) or [0]
    bounds = list(zip(starts, [*starts[1:], len(ep.ops)], strict=True))
    for lo, hi in bounds:
        i = hi
        while i > lo and isinstance(ep.ops[i - 1], (SemInc, SemSet, SemWait, AtomicBarrier)):
            i -= 1
        out |= {lf.index for lf in view.leaves if lf.path[0] >= i and lf.path[0] < hi}
    return out


def _rendezvous(a: Analysis, trusted: set[int], rlimit: int) -> list[Result]:
    p = a.program
    out: list[Result] = []
    for b, sec in enumerate(p.sections):
        if not sec.barrier_after or b == len(p.sections) - 1:
            continue
        before: dict[str, Leaf] = {}
        after: dict[str, Leaf] = {}
        for key, v in a.views.items():
            closing = _rendezvous_leaves(a, key)
            work = [lf for lf in v.leaves if lf.section <= b and lf.index not in closing]
            later = [lf for lf in v.leaves if lf.section > b]
            if work:
                before[key] = work[-1]
            if later:
                after[key] = later[0]
        if not before or not after:
            continue
        name = f"hb-rendezvous:after-section-{b}"

        def build(sq: StateQuery, before: dict[str, Leaf] = before, after: dict[str, Leaf] = after) -> z3.BoolRef:
            unfinished = [z3.Not(sq.enc.position(e).passed(lf)) for e, lf in before.items()]
            started = [sq.enc.position(e).passed(lf) for e, lf in after.items()]
            return z3.And(z3.Or(*unfinished), z3.Or(*started))

        out.append(_run(a, trusted, name, [*before, *after], build,
                        f"the rendezvous after section {b} ({sec.name}) orders all {len(before)} engines' work before "
                        f"section {b + 1}",
                        f"an engine can start section {b + 1} while another has not finished section {b}",
                        "rendezvous", rlimit))
    return out
