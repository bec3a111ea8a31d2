"""Queries over reachable states: symbolic positions of a component's engines plus the facts every reachable
state satisfies. "unsat" of ``consistency ∧ bad`` proves ``bad`` unreachable for every trip value at once."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable

import attrs
import z3

from verispatial.certify.counters import CounterModel, tables
from verispatial.certify.counters import touches as counter_touches
from verispatial.certify.positions import Encoder, is_linear, trip_assignments
from verispatial.certify.semaphores import Word
from verispatial.certify.smt import DEFAULT_RLIMIT, Outcome, Query, Status, any_of, model_int
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import INCREMENTS, McastSetValid, Pop, Push, SemSet, SemWait
from verispatial.ir.program import Program

#: How many trip assignments the checker enumerates when counts are not linear in the loop indices.
TRIP_ENUMERATION_LIMIT = 64


@attrs.frozen
class Analysis:
    """Everything derived once from a program and shared by all queries."""

    program: Program
    views: dict[str, EngineView]
    words: dict[tuple[int, Site], Word]
    touches: dict[str, set[str]]
    components: tuple[frozenset[str], ...]
    linear: bool
    counter_leaves: dict[str, frozenset[tuple[str, int]]]

    def trip_sets(self) -> list[dict[str, int] | None]:
        """How queries treat trips: one symbolic assignment (None) when counts are linear, else every assignment
        (up to ``TRIP_ENUMERATION_LIMIT``; beyond that, symbolic again and non-linear)."""
        if self.linear:
            return [None]
        enumerated = trip_assignments(self.program, TRIP_ENUMERATION_LIMIT)
        return list(enumerated) if enumerated is not None else [None]

    def neighbourhood(self, engines: Iterable[str], semaphores_only: bool = False) -> frozenset[str]:
        """``engines`` and every engine sharing a counter (only a semaphore word, if asked) with one of them."""
        es = set(engines)
        out = set(es)
        for name, touched in self.touches.items():
            if touched & es and (not semaphores_only or name.startswith("sem")):
                out |= touched
        return frozenset(out)

    @functools.cached_property
    def _component(self) -> dict[str, frozenset[str]]:
        # engine -> its component: asked per buffer and per word, a scan of every component made a wide slice's
        # lookups quadratic (64 components times 1,472 lookups in the 70B attention slice)
        return {e: c for c in self.components for e in c}

    def component_of(self, engines: Iterable[str]) -> frozenset[str]:
        """The union of the components holding any of ``engines`` (an engine outside every component adds none)."""
        found = {c for e in engines if (c := self._component.get(e)) is not None}
        if len(found) == 1:
            return next(iter(found))
        return frozenset().union(*found)


def components(views: dict[str, EngineView], touches: dict[str, set[str]]) -> tuple[frozenset[str], ...]:
    """Engines that share no counter cannot influence each other: split them (the connected components of the graph
    whose edges join engines touching one counter), ordered by their sorted engine lists. A union-find of the
    engines: networkx, which this used, costs about 0.15 s of CPU to import, a twentieth of a certify of the decode
    step, for this one call."""
    parent = {e: e for e in views}

    def root(e: str) -> str:
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    for engines in touches.values():
        es = sorted(engines)
        for a, b in itertools.pairwise(es):
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, set[str]] = {}
    for e in parent:
        groups.setdefault(root(e), set()).add(e)
    return tuple(frozenset(c) for c in sorted(groups.values(), key=lambda c: sorted(c)))


@attrs.define
class Decoded:
    """A concrete state read off a model: trip values and each engine's leaf (None = finished) and iteration."""

    trips: dict[str, int]
    at: dict[str, tuple[Leaf | None, tuple[tuple[str, int], ...]]]

    def counterexample(self, kind: str, rule: str, summary: str, **extra: object) -> dict[str, object]:
        """The JSON counterexample of a candidate state: trip values and every engine's op and iteration."""
        positions = {e: ({"path": list(lf.path), "iteration": {v: i for v, i in it if v}, "op": type(lf.op).__name__}
                         if lf is not None else "finished") for e, (lf, it) in self.at.items()}
        return {"kind": kind, "rule": rule, "trips": self.trips, "positions": positions, "summary": summary, **extra}


class StateQuery:
    """One query over the reachable states of the engines in ``engines`` (closed under shared counters)."""

    def __init__(self, a: Analysis, name: str, engines: frozenset[str], trusted: set[int],
                 trips: dict[str, int] | None = None, rlimit: int = DEFAULT_RLIMIT, history: bool = False,
                 extra: Iterable[Leaf] = ()) -> None:
        self.a = a
        self.engines = engines
        self.q = Query(name, rlimit)
        self.enc = Encoder(self.q, a.program, a.views, trips)
        self.cm = CounterModel(self.enc, a.program, a.views, a.words)
        self.fixed_trips = trips
        names = {n for n, es in a.touches.items() if es <= engines}
        # Only positions at leaves that change or test an in-scope counter (or that the question names) are
        # searched: an engine at any other leaf can move on to the next such leaf without changing a counter in
        # scope, so every fact and bad condition that held there holds there too (an over-approximation).
        self.relevant: dict[str, set[int]] = {e: set() for e in engines}
        for n in names:
            for e, i in a.counter_leaves.get(n, ()):
                if e in self.relevant:
                    self.relevant[e].add(i)
        for lf in extra:
            if lf.engine in self.relevant:
                self.relevant[lf.engine].add(lf.index)
        self._encoders = [self.enc]
        #: per reset word (by name) in a history query: the counter model of its past state (``_add_history``)
        self.past: dict[str, CounterModel] = {}
        for e in sorted(engines):
            self.enc.position(e)
        for label, fact in self.cm.consistency(trusted, names):
            if label in names:
                self.q.add(fact, f"consistency:{label}")
        if history:
            self._add_history(trusted, names)

    def restrict(self) -> None:
        """Search only positions at relevant leaves: those changing or testing an in-scope counter and every leaf
        the question mentioned (``SymPos.referenced``). Call after the question is asserted."""
        for enc in self._encoders:
            for e in sorted(self.engines):
                pos = enc.position(e)
                allowed = [*sorted(self.relevant[e] | pos.referenced), pos.view.finished]
                self.q.add(any_of(self.q.ctx, [pos.sel == i for i in allowed]), "relevant-positions")

    def _add_history(self, trusted: set[int], names: set[str]) -> None:
        """Past states: for every reset word whose owner is in scope, the state right after the owner's most recent
        passed consuming wait (the one before a reset) returned. Each past state obeys the same facts, and every
        engine's position then is at or before its position now (each leaf executed no more often then than now).
        This keeps the time dimension a single state loses: at the wait the counted increments were issued by
        engines that had not yet moved on."""
        counted = [lf for v in self.a.views.values() if v.key in self.engines for lf in v.leaves
                   if isinstance(lf.op, (Push, Pop, *INCREMENTS, SemSet, SemWait, McastSetValid))]
        # A reset that consumes (``semaphores._last_pass``) has no wait to anchor at: its word gets no past state
        # (its checks ask no past: ``encoding._unseen`` then compares the totals alone).
        for n, w in enumerate(x for x in self.a.words.values() if x.kind == "reset" and x.owner in self.engines
                              and not any(isinstance(c.op, SemSet) for c in x.consuming)):
            past = Encoder(self.q, self.a.program, self.a.views, prefix=f"past{n}.", trip_vars=self.enc.trip_vars)
            pcm = CounterModel(past, self.a.program, self.a.views, self.a.words)
            self._encoders.append(past)
            self.past[w.name] = pcm
            for e in sorted(self.engines):
                past.position(e)
            for label, fact in pcm.consistency(trusted, names):
                if label in names:
                    self.q.add(fact, f"past-consistency:{label}")
            for lf in counted:
                self.q.add(past.executed(lf) <= self.enc.executed(lf), "past-before-now")
            owner = past.position(str(w.owner))
            # Anchored right after the latest *consuming* wait returned: the owner was then at the first op after it,
            # somewhere from the op after the wait up to the reset that follows it (the reset need not follow its
            # wait directly: the ops between may run first, so the past state is not at the reset itself).
            done_then, done_now = pcm.consuming_done(w), self.cm.consuming_done(w)
            leaves = self.a.views[str(w.owner)].leaves
            after: list[z3.BoolRef] = []
            for c in w.consuming:
                reset = min((s.index for s in w.sets if s.engine == c.engine and s.index > c.index), default=None)
                last = reset if reset is not None else len(leaves) - 1
                after += [owner.at(x) for x in leaves[c.index + 1:last + 1]]
            anchored = z3.And(any_of(self.q.ctx, after), done_then == done_now)
            self.q.add(z3.Implies(done_now >= 1, anchored), "past-anchor")
        # Top-level ``>=`` waits on monotone words (a rendezvous): once such a wait has run, there was a state with its
        # engine at the wait, the wait enabled (the increments issued then reached its threshold), and every engine at
        # or before its position now. Cumulative thresholds need it: now the word may hold later arrivals too.
        for n, (w, lf) in enumerate(monotone_anchors(self.a, self.engines, names)):
            past = Encoder(self.q, self.a.program, self.a.views, prefix=f"pastm{n}.", trip_vars=self.enc.trip_vars)
            pcm = CounterModel(past, self.a.program, self.a.views, self.a.words)
            self._encoders.append(past)
            for e in sorted(self.engines):
                past.position(e)
            for label, fact in pcm.consistency(trusted, names):
                if label in names:
                    self.q.add(fact, f"past-consistency:{label}")
            for c in counted:
                self.q.add(past.executed(c) <= self.enc.executed(c), "past-before-now")
            assert isinstance(lf.op, SemWait)
            anchored = z3.And(past.position(lf.engine).at(lf), pcm.value(w) >= lf.op.value)
            self.q.add(z3.Implies(self.enc.started(lf), anchored), "past-anchor-monotone")

    def decode(self, m: z3.ModelRef) -> Decoded:
        trips = dict(self.fixed_trips) if self.fixed_trips is not None else {
            name: model_int(m, v) for name, v in self.enc.trip_vars.items()}
        at: dict[str, tuple[Leaf | None, tuple[tuple[str, int], ...]]] = {}
        for e in sorted(self.engines):
            pos = self.enc.position(e)
            sel = model_int(m, pos.sel)
            if sel >= pos.view.finished:
                at[e] = (None, ())
                continue
            leaf = pos.view.leaves[sel]
            at[e] = (leaf, leaf.iteration({lc.path: model_int(m, pos.idx[lc.path]) for lc in leaf.loops}))
        return Decoded(trips, at)


#: At most this many past states for monotone-word waits per query (each is a copy of every position).
MONOTONE_ANCHOR_LIMIT = 16


def monotone_anchors(a: Analysis, engines: frozenset[str], names: set[str] | None = None) -> list[tuple[Word, Leaf]]:
    """The top-level (outside every loop) ``>=`` waits on monotone words whose engine is in ``engines`` (and whose
    word is in ``names`` when given), at most ``MONOTONE_ANCHOR_LIMIT``: the waits a query's past states anchor."""
    out: list[tuple[Word, Leaf]] = []
    for w in a.words.values():
        if w.kind != "monotone" or (names is not None and w.name not in names):
            continue
        for lf in w.waits:
            if lf.engine in engines and not lf.loops and isinstance(lf.op, SemWait) and lf.op.cond == WaitCond.GE:
                out.append((w, lf))
    return out[:MONOTONE_ANCHOR_LIMIT]


def solve_each(a: Analysis, build: object, name: str, focus: Iterable[str], trusted: set[int],
               rlimit: int = DEFAULT_RLIMIT, extra: Iterable[Leaf] = (),
               stop: Callable[[], bool] | None = None, asked: list[tuple[frozenset[str], bool]] | None = None,
               ) -> tuple[Outcome, Decoded | None, StateQuery | None]:
    """Is a state satisfying ``build(sq) -> BoolRef`` (the bad states) consistent with the reachability facts?

    Scopes grow: first the ``focus`` engines and their neighbours with only the facts among them (fewer facts:
    still an over-approximation, so unsat proves), then, if that is sat, the whole component. Trips are symbolic
    when counts are linear, else enumerated (up to ``TRIP_ENUMERATION_LIMIT`` assignments). Returns the first sat
    outcome of the widest scope with its decoded state, else unsat, else the first unknown.

    ``stop`` is asked once, when a scope is sat and a wider one is left to ask: True ends the search there,
    returning that sat outcome — the caller holds a concrete run showing the bad state (the interpreter's witness,
    ``encoding._witness``), so no wider query can change the verdict. Only unsat proves either way: stopping early
    never turns a query into a proof.

    ``asked``, when given, gets each scope asked appended as (engines, history), in order: an unsat outcome after
    the one entry (``focus``, False) was proved from the focus engines alone and the facts among them
    (``canon.scope_canon`` keys such a proof)."""
    focus = frozenset(focus)
    sems, near, comp = a.neighbourhood(focus, True), a.neighbourhood(focus), a.component_of(focus)
    scopes: list[tuple[frozenset[str], bool]] = []
    for engines in (focus, sems, near, comp):
        for history in (False, True):
            if (engines, history) not in scopes:
                scopes.append((engines, history))
    out: tuple[Outcome, Decoded | None, StateQuery | None] = (Outcome(Status.UNKNOWN, None, "no scope", 0.0), None, None)
    for engines, history in scopes:
        if history and not any(w.kind == "reset" and w.owner in engines for w in a.words.values()) \
                and not monotone_anchors(a, engines):
            continue
        if asked is not None:
            asked.append((engines, history))
        out = _solve_scope(a, build, name, engines, trusted, rlimit, history, tuple(extra))
        if out[0].status == Status.UNSAT:
            return out
        if stop is not None and out[0].status == Status.SAT and (engines, history) != scopes[-1]:
            if stop():
                return out
            stop = None
    return out


def _solve_scope(a: Analysis, build: object, name: str, engines: frozenset[str], trusted: set[int],
                 rlimit: int, history: bool, extra: tuple[Leaf, ...] = ()) -> tuple[Outcome, Decoded | None, StateQuery | None]:
    unknown: Outcome | None = None
    last: Outcome | None = None
    for trips in a.trip_sets():
        sq = StateQuery(a, name, engines, trusted, trips, rlimit, history, extra)
        bad = build(sq)  # type: ignore[operator]
        sq.q.add(bad, "bad")
        sq.restrict()
        out = sq.q.check()
        last = out
        if out.status == Status.SAT:
            assert out.model is not None
            return out, sq.decode(out.model), sq
        if out.status == Status.UNKNOWN and unknown is None:
            unknown = out
    if unknown is not None:
        return unknown, None, None
    assert last is not None
    return last, None, None


#: The last program analysed and its analysis, held by identity (a program is frozen; an analysis is read, never
#: changed): a slice's proofs and then its composition's slot-reuse queries (``compositional._slot_reuse``) analyse
#: the same slice program one after the other. One entry, so no finished slice is kept alive.
_LAST: list[tuple[Program, Analysis]] = []


def analyse(p: Program) -> Analysis:
    """Flatten, classify semaphore words, find components — once per program (the last program's analysis is
    returned again for it, ``_LAST``)."""
    if _LAST and _LAST[0][0] is p:
        return _LAST[0][1]
    a = _analyse(p)
    _LAST[:] = [(p, a)]
    return a


def _analyse(p: Program) -> Analysis:
    from verispatial.certify.semaphores import classify
    from verispatial.certify.structure import engine_views

    views = engine_views(p)
    words = classify(p, views)
    # the counter tables alone: no counter model, whose encoder needed a query and so a solver context per program
    buf_leaves, _sharing = tables(p, views)
    touches = counter_touches(buf_leaves, words)
    counter_leaves: dict[str, set[tuple[str, int]]] = {}
    for b, leaves in buf_leaves.items():
        counter_leaves.setdefault(f"cb{b}", set()).update((lf.engine, lf.index) for lf in leaves)
    for w in words.values():
        # A sequence word's value follows its owner's rising sets and resets (semaphores.Sequence).
        seq = (*w.seq.rising, *w.seq.resets) if w.seq is not None else ()
        counter_leaves.setdefault(w.name, set()).update(
            (lf.engine, lf.index) for lf in (*w.incs, *w.flags, *w.sets, *w.waits, *seq))
    return Analysis(p, views, words, touches, components(views, touches), is_linear(views),
                    {k: frozenset(v) for k, v in counter_leaves.items()})
