"""Queries over reachable states: symbolic positions of a component's engines plus the facts every reachable
state satisfies. "unsat" of ``consistency ∧ bad`` proves ``bad`` unreachable for every trip value at once."""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import networkx as nx
import z3

from verispatial.certify.counters import CounterModel
from verispatial.certify.positions import Encoder, is_linear, trip_assignments
from verispatial.certify.semaphores import Word
from verispatial.certify.smt import DEFAULT_RLIMIT, Outcome, Query, Status, model_int
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site
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

    def neighbourhood(self, engines: Iterable[str]) -> frozenset[str]:
        """``engines`` and every engine sharing a counter with one of them."""
        es = set(engines)
        out = set(es)
        for touched in self.touches.values():
            if touched & es:
                out |= touched
        return frozenset(out)

    def component_of(self, engines: Iterable[str]) -> frozenset[str]:
        es = set(engines)
        out: set[str] = set()
        for c in self.components:
            if c & es:
                out |= c
        return frozenset(out)


def components(views: dict[str, EngineView], touches: dict[str, set[str]]) -> tuple[frozenset[str], ...]:
    """Engines that share no counter cannot influence each other: split them (networkx connected components)."""
    g: nx.Graph = nx.Graph()
    g.add_nodes_from(views)
    for engines in touches.values():
        es = sorted(engines)
        for a, b in zip(es, es[1:]):
            g.add_edge(a, b)
    return tuple(frozenset(c) for c in sorted(nx.connected_components(g), key=lambda c: sorted(c)))


@attrs.define
class Decoded:
    """A concrete state read off a model: trip values and each engine's leaf (None = finished) and iteration."""

    trips: dict[str, int]
    at: dict[str, tuple[Leaf | None, tuple[tuple[str, int], ...]]]


class StateQuery:
    """One query over the reachable states of the engines in ``engines`` (closed under shared counters)."""

    def __init__(self, a: Analysis, name: str, engines: frozenset[str], trusted: set[int],
                 trips: dict[str, int] | None = None, rlimit: int = DEFAULT_RLIMIT) -> None:
        self.a = a
        self.engines = engines
        self.q = Query(name, rlimit)
        self.enc = Encoder(self.q, a.program, a.views, trips)
        self.cm = CounterModel(self.enc, a.program, a.views, a.words)
        self.fixed_trips = trips
        for e in sorted(engines):
            self.enc.position(e)
        names = {n for n, es in a.touches.items() if es <= engines}
        for label, fact in self.cm.consistency(trusted):
            if label in names:
                self.q.add(fact, f"consistency:{label}")

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
            it = tuple((lc.var, model_int(m, pos.idx[lc.path])) for lc in leaf.loops)
            at[e] = (leaf, it)
        return Decoded(trips, at)


def solve_each(a: Analysis, build: object, name: str, focus: Iterable[str], trusted: set[int],
               rlimit: int = DEFAULT_RLIMIT) -> tuple[Outcome, Decoded | None, StateQuery | None]:
    """Is a state satisfying ``build(sq) -> BoolRef`` (the bad states) consistent with the reachability facts?

    Scopes grow: first the ``focus`` engines and their neighbours with only the facts among them (fewer facts:
    still an over-approximation, so unsat proves), then, if that is sat, the whole component. Trips are symbolic
    when counts are linear, else enumerated (up to ``TRIP_ENUMERATION_LIMIT`` assignments). Returns the first sat
    outcome of the widest scope with its decoded state, else unsat, else the first unknown."""
    focus = frozenset(focus)
    scopes = [a.neighbourhood(focus), a.component_of(focus)]
    if scopes[0] == scopes[1]:
        scopes = scopes[1:]
    out: tuple[Outcome, Decoded | None, StateQuery | None] = (Outcome(Status.UNKNOWN, None, "no scope", 0.0), None, None)
    for engines in scopes:
        out = _solve_scope(a, build, name, engines, trusted, rlimit)
        if out[0].status == Status.UNSAT:
            return out
    return out


def _solve_scope(a: Analysis, build: object, name: str, engines: frozenset[str], trusted: set[int],
                 rlimit: int) -> tuple[Outcome, Decoded | None, StateQuery | None]:
    assigns: list[dict[str, int] | None]
    if a.linear:
        assigns = [None]
    else:
        enumerated = trip_assignments(a.program, TRIP_ENUMERATION_LIMIT)
        assigns = list(enumerated) if enumerated is not None else [None]
    unknown: Outcome | None = None
    last: Outcome | None = None
    for trips in assigns:
        sq = StateQuery(a, name, engines, trusted, trips, rlimit)
        bad = build(sq)  # type: ignore[operator]
        sq.q.add(bad, "bad")
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


def analyse(p: Program) -> Analysis:
    """Flatten, classify semaphore words, find components — once per program."""
    from verispatial.certify.semaphores import classify
    from verispatial.certify.structure import engine_views

    views = engine_views(p)
    words = classify(p, views)
    probe = CounterModel(Encoder(Query("probe"), p, views, {t.name: 0 for t in p.trips}), p, views, words)
    touches = probe.touches()
    return Analysis(p, views, words, touches, components(views, touches), is_linear(views))
