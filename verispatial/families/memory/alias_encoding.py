"""Aliased buffers (DESIGN §4 ``alias_of``; reference §1.1 and §2.6 item 6): two circular buffers sharing bytes
page for page are safe only if nothing writes a page, or publishes it, while the other still holds it unconsumed
(docs/semantics.md, "Aliases": ``alias-clobber``).

One reachability query per (buffer, alias) pair covers every op that puts bytes into the buffer's pages: is there a
state, consistent with the facts, where

- the producer is about to push ``n`` pages starting at its write pointer, or about to pack into pages at the offsets
  past its write pointer that the abstract interpretation found (``facts.EngineFacts.written``), or has a read into
  such pages outstanding (between the ``ReadTiles`` and its read barrier; the pages are at the write pointer as it
  stands, which no push moves meanwhile: a push there is ``async-read-publish`` and fails this query closed),

and one of those pages is among the alias's pages ``[popped, pushed)`` (all modulo the common capacity)? A
multicast landing into an aliased buffer is not decided (failed to prove).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import z3

from verispatial.certify.canon import Canon, ProofMemo
from verispatial.certify.facts import EngineFacts
from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, any_of
from verispatial.certify.structure import Leaf, pages
from verispatial.families.multicast.encoding import multicast_destinations
from verispatial.ir import rules as R
from verispatial.ir.ops import CopyTiles, FillTiles, PackAcc, Push, ReadBarrier, ReadTiles


def _read_span(a: Analysis, lf: Leaf) -> tuple[Leaf, Leaf] | None:
    """The leaves between which a read ``lf`` may be outstanding: from the first leaf of the outermost loop that
    encloses ``lf`` but not its read barrier (else ``lf`` itself) to that barrier; None without a barrier."""
    leaves = a.views[lf.engine].leaves
    barrier = next((x for x in leaves[lf.index + 1:]
                    if isinstance(x.op, ReadBarrier) and lf.loops[: len(x.loops)] == x.loops), None)
    if barrier is None:
        return None
    depth = len(barrier.loops)
    start = lf
    if len(lf.loops) > depth:
        outer = lf.loops[depth]
        start = next(x for x in leaves if outer in x.loops)
    return start, barrier


def _clobbers(a: Analysis, b: int, other: int, cap: int, pushes: list[Leaf],
              writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]]) -> object:
    def build(sq: StateQuery) -> z3.BoolRef:
        cm = sq.cm
        j, k = sq.q.int_var("j"), sq.q.int_var("k")
        live = cm.pushed(other) - cm.popped(other)
        about = [z3.And(sq.enc.position(p.engine).at(p), j >= 0, j < pages(p.op)) for p in pushes]
        for _lf, offs, first, last in writes:
            pos = sq.enc.position(first.engine)
            if first.index == last.index:
                where = pos.at(first)
            else:
                pos.referenced.update(range(first.index, last.index + 1))
                where = z3.And(pos.sel >= first.index, pos.sel <= last.index)
            about.append(z3.And(where, any_of(sq.q.ctx, [j == o for o in sorted(offs)])))
        return z3.And(any_of(sq.q.ctx, about), k >= 0, k < live, (cm.pushed(b) + j) % cap == (cm.popped(other) + k) % cap)

    return build


def _blame(at: Mapping[str, tuple[Leaf | None, object]], pushes: list[Leaf],
           writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]]) -> Leaf | None:
    """The push or write whose position the candidate state is at (a read: anywhere it may be outstanding)."""
    for x in pushes:
        lf = at.get(x.engine, (None, ()))[0]
        if lf is not None and lf.index == x.index:
            return x
    for w, _offs, first, last in writes:
        lf = at.get(w.engine, (None, ()))[0]
        if lf is not None and first.index <= lf.index <= last.index:
            return w
    return None


def check_aliases(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT,
                  facts: dict[str, EngineFacts] | None = None, cache: ProofMemo | None = None) -> list[Result]:
    """One result per (buffer, alias) pair, covering every push, pack and read landing into the buffer. With
    ``cache``, a pair whose component (``a.component_of`` of the engines the query starts from: every scope
    ``solve_each`` widens to lies inside it) is isomorphic to one proved before (``canon.py``), with the same pair,
    pushes, writes and page offsets in canonical ids, reuses that proof: the query reads only the component's ops
    (positions and counters), buffer capacities and those offsets, never a tensor address or a byte offset. The
    matmul slices of the decode step: 16 pairs each, on 8 sites that are translations of each other."""
    from verispatial.certify.rules import all_engine_facts

    out: list[Result] = []
    p = a.program
    partners = p.alias_partners()
    if not partners:
        return out
    facts = facts if facts is not None else all_engine_facts(p, a.views)
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    dests = multicast_destinations(p)
    for b, others in sorted(partners.items()):
        cap = p.buffers[b].capacity
        pushes = [lf for lf in leaves if isinstance(lf.op, Push) and lf.op.buf == b]
        writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]] = []
        undecided = ""
        for lf in leaves:
            if (isinstance(lf.op, PackAcc) and lf.op.buf == b) or (isinstance(lf.op, (FillTiles, CopyTiles)) and lf.op.into == b):
                writes.append((lf, facts[lf.engine].written.get(lf.path, frozenset()), lf, lf))
            elif isinstance(lf.op, ReadTiles) and lf.op.into == b:
                span = _read_span(a, lf)
                inside = [] if span is None else a.views[lf.engine].leaves[span[0].index: span[1].index + 1]
                if span is None or any(isinstance(x.op, Push) and x.op.buf == b for x in inside):
                    undecided = f"the read into b{b} at {lf.engine} {list(lf.path)} has no read barrier before the next push"
                    break
                writes.append((lf, facts[lf.engine].written.get(lf.path, frozenset()), *span))
        if b in dests:
            undecided = f"remote writes land in b{b}, whose bytes an alias shares (landings into aliased buffers are not decided)"
        if not pushes and not writes and not undecided:
            continue
        for other in others:
            t0 = time.perf_counter()
            name = f"{R.ALIAS_CLOBBER}:b{b}~b{other}"
            if undecided:
                out.append(Result(R.Family.MEMORY.value, name, Verdict.FAILED, undecided))
                continue
            focus = {lf.engine for lf in leaves if getattr(lf.op, "buf", None) in (b, other)}
            focus |= {lf.engine for lf, *_ in writes}
            if cache is None:
                out.append(_clobber(a, b, other, cap, pushes, writes, name, frozenset(focus), trusted, rlimit, t0))
                continue
            c = cache.canon(a, a.component_of(focus), trusted)
            item = _item(c, b, other, cap, pushes, writes, focus, rlimit)
            scope = cache.scope_canon(a, frozenset(focus), trusted)
            sitem = [] if scope is None else _item(scope, b, other, cap, pushes, writes, focus, rlimit)
            hit = cache.proof_for(R.ALIAS_CLOBBER, c, item, name)
            if hit is None and scope is not None:
                hit = cache.proof_for(R.ALIAS_CLOBBER, scope, sitem, name, "engines")
            if hit is not None:
                out.append(hit)
                continue
            cache.computed += 1
            asked: list[tuple[frozenset[str], bool]] = []
            r = _clobber(a, b, other, cap, pushes, writes, name, frozenset(focus), trusted, rlimit, t0, asked)
            cache.remember(R.ALIAS_CLOBBER, c, item, r)
            if scope is not None and asked == [(focus, False)]:
                # Proved by the focus engines and the facts among them alone: engines of an equal scope form (the
                # same programs up to renaming, the same counters shared with engines outside) ask the same query.
                cache.remember(R.ALIAS_CLOBBER, scope, sitem, r)
            out.append(r)
    return out


def _item(c: Canon, b: int, other: int, cap: int, pushes: list[Leaf],
          writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]], focus: set[str], rlimit: int) -> list[object]:
    """What an ``alias-clobber`` query asks of the engines ``c`` renumbers, in its canonical ids: the pair, the
    capacity, the pushes and writes (with their page offsets and read spans), the engines it starts from and the
    resource limit."""
    return [c.buffers.get(b), c.buffers.get(other), cap, sorted([c.engines[x.engine], x.index] for x in pushes),
            sorted([c.engines[w.engine], w.index, sorted(offs), first.index, last.index]
                   for w, offs, first, last in writes), sorted(c.engines[e] for e in focus), rlimit]


def _clobber(a: Analysis, b: int, other: int, cap: int, pushes: list[Leaf],
             writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]], name: str, focus: frozenset[str],
             trusted: set[int], rlimit: int, t0: float, asked: list[tuple[frozenset[str], bool]] | None = None,
             ) -> Result:
    """The ``alias-clobber`` result of ``b`` against ``other`` (``_clobbers``' query from the ``focus`` engines;
    ``asked`` gets the scopes asked, as ``solve_each`` gives them)."""
    o, d, _ = solve_each(a, _clobbers(a, b, other, cap, pushes, writes), name, focus, trusted, rlimit, asked=asked)
    dt = time.perf_counter() - t0
    n = len(pushes) + len(writes)
    if o.status == Status.UNSAT:
        return Result(R.Family.MEMORY.value, name, Verdict.PROVED,
                      f"{n} push(es) and write(s) into b{b} never touch a page its alias b{other} still holds",
                      seconds=dt)
    if o.status == Status.SAT and d is not None:
        blame = _blame(d.at, pushes, writes)
        where = {"engine": blame.engine, "path": list(blame.path)} if blame else {}
        msg = f"a push or write into b{b} can touch pages its alias b{other} still holds unconsumed"
        return Result(R.Family.MEMORY.value, name, Verdict.REFUTED, msg,
                      d.counterexample("state", R.ALIAS_CLOBBER, msg, **where), dt)
    return Result(R.Family.MEMORY.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)
