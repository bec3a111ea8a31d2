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
multicast landing into an aliased buffer is not decided (failed to prove). The pairs of one component are first
asked in one query (``_Joint``: is some pair's state reachable?); only its unsat is used, as the proof of every pair.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping

import attrs
import z3

from verispatial.certify.canon import ProofMemo, component_name
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
    pairs of one component are first asked together (``_Joint``): the matmul slices of the decode step hold 16
    pairs each, on 8 sites of one component."""
    from verispatial.certify.rules import all_engine_facts

    out: list[Result] = []
    p = a.program
    partners = p.alias_partners()
    if not partners:
        return out
    facts = facts if facts is not None else all_engine_facts(p, a.views)
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    dests = multicast_destinations(p)
    # per pair, in order: its failed result (undecided), or what its query needs
    todo: list[Result | _Pair] = []
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
            undecided = f"multicasts land in b{b}, whose bytes an alias shares (landings into aliased buffers are not decided)"
        if not pushes and not writes and not undecided:
            continue
        for other in others:
            name = f"{R.ALIAS_CLOBBER}:b{b}~b{other}"
            if undecided:
                todo.append(Result(R.Family.MEMORY.value, name, Verdict.FAILED, undecided))
                continue
            focus = {lf.engine for lf in leaves if getattr(lf.op, "buf", None) in (b, other)}
            focus |= {lf.engine for lf, *_ in writes}
            todo.append(_Pair(b, other, cap, pushes, writes, name, frozenset(focus)))
    joints: dict[frozenset[str], _Joint] = {}
    for x in todo:
        if isinstance(x, _Pair):
            comp = a.component_of(x.focus)
            joints.setdefault(comp, _Joint(a, comp, trusted, rlimit)).pairs.append(x)
    for x in todo:
        if not isinstance(x, _Pair):
            out.append(x)
            continue
        comp = a.component_of(x.focus)
        compute = functools.partial(_decide, a, joints[comp], x, trusted, rlimit, time.perf_counter())
        if cache is None:
            out.append(compute())
            continue
        c = cache.canon(a, comp, trusted)
        item = [c.buffers.get(x.b), c.buffers.get(x.other), x.cap,
                sorted([c.engines[lf.engine], lf.index] for lf in x.pushes),
                sorted([c.engines[w.engine], w.index, sorted(offs), first.index, last.index]
                       for w, offs, first, last in x.writes), sorted(c.engines[e] for e in x.focus), rlimit]
        out.append(cache.run(R.ALIAS_CLOBBER, c, item, x.name, compute))
    return out


@attrs.frozen
class _Pair:
    """One (buffer, alias) pair to decide: the buffer, its alias, their capacity, the pushes and writes into the
    buffer, the obligation's name and the engines its query starts from."""

    b: int
    other: int
    cap: int
    pushes: list[Leaf]
    writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]]
    name: str
    focus: frozenset[str]


@attrs.define
class _Joint:
    """The pairs of one component asked in one query, once, when the first of them is decided without a proof to
    reuse: is a state where *some* pair's push or write touches a page its alias holds consistent with the facts over
    the union of the pairs' starting engines? Unsat proves every pair: each pair's question is one disjunct, and a
    scope's facts hold of every reachable state whatever engines it holds (``reach.solve_each``: an
    over-approximation). Anything else (sat, unknown) proves nothing and each pair is asked on its own, as alone."""

    a: Analysis
    comp: frozenset[str]
    trusted: set[int]
    rlimit: int
    pairs: list[_Pair] = attrs.Factory(list)
    proved: bool | None = None

    def all_proved(self) -> bool:
        if self.proved is None:
            self.proved = False
            if len(self.pairs) > 1:
                builds = [_clobbers(self.a, x.b, x.other, x.cap, x.pushes, x.writes) for x in self.pairs]
                scope = frozenset().union(*(x.focus for x in self.pairs))
                # the first scope only (``stop``): a sat answer sends every pair to its own query anyway
                o, _, _ = solve_each(self.a, lambda sq: any_of(sq.q.ctx, [f(sq) for f in builds]),  # type: ignore[operator]
                                     f"{R.ALIAS_CLOBBER}:{component_name(self.comp)}", scope, self.trusted,
                                     self.rlimit, stop=lambda: True)
                self.proved = o.status == Status.UNSAT
        return self.proved


def _decide(a: Analysis, joint: _Joint, x: _Pair, trusted: set[int], rlimit: int, t0: float) -> Result:
    """Pair ``x``'s result: proved with the other pairs of its component (``joint``), else its own query."""
    if joint.all_proved():
        return Result(R.Family.MEMORY.value, x.name, Verdict.PROVED, _proved_reason(x), seconds=time.perf_counter() - t0)
    return _clobber(a, x.b, x.other, x.cap, x.pushes, x.writes, x.name, x.focus, trusted, rlimit, t0)


def _proved_reason(x: _Pair) -> str:
    return (f"{len(x.pushes) + len(x.writes)} push(es) and write(s) into b{x.b} never touch a page its alias "
            f"b{x.other} still holds")


def _clobber(a: Analysis, b: int, other: int, cap: int, pushes: list[Leaf],
             writes: list[tuple[Leaf, frozenset[int], Leaf, Leaf]], name: str, focus: frozenset[str],
             trusted: set[int], rlimit: int, t0: float) -> Result:
    """The ``alias-clobber`` result of ``b`` against ``other`` (``_clobbers``' query from the ``focus`` engines)."""
    o, d, _ = solve_each(a, _clobbers(a, b, other, cap, pushes, writes), name, focus, trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.MEMORY.value, name, Verdict.PROVED,
                      _proved_reason(_Pair(b, other, cap, pushes, writes, name, focus)), seconds=dt)
    if o.status == Status.SAT and d is not None:
        blame = _blame(d.at, pushes, writes)
        where = {"engine": blame.engine, "path": list(blame.path)} if blame else {}
        msg = f"a push or write into b{b} can touch pages its alias b{other} still holds unconsumed"
        return Result(R.Family.MEMORY.value, name, Verdict.REFUTED, msg,
                      d.counterexample("state", R.ALIAS_CLOBBER, msg, **where), dt)
    return Result(R.Family.MEMORY.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)
