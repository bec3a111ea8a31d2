"""The symbolic occurrence counts of ``certify/positions.py`` against the interpreter, on small loop nests with
``If`` guards and trip-affine counts (docs/checker.md "Symbolic positions").

Each nest is one engine whose leaves never block (barriers with nothing outstanding). It is run op by op in the
interpreter for every trip value; at every position the engine reaches, every leaf's count of earlier executions,
its most recent occurrence and the ordinals of its occurrences must equal the formulas, and the position domain
must admit exactly the positions the interpreter reaches.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.certify.positions import Encoder, is_linear
from verispatial.certify.smt import Query
from verispatial.certify.structure import EngineView, Leaf, engine_views
from verispatial.ir import WORMHOLE, Engine, EngineProgram, Flush, Loop, Op, Program, ReadBarrier, Site, Trip
from verispatial.ir.core import Guard
from verispatial.ir.ops import AtomicBarrier, If, TripCount, count_value
from verispatial.ir.validate import validate
from verispatial.petri.interp import Interp

KEY = "(0,0).reader"
TRIP_MAX = 3
COUNTS: tuple[int | str | TripCount, ...] = (0, 1, 2, 3, "t", TripCount("t", 1, -1), TripCount("t", 2),
                                             TripCount("t", 1, 1))
LEAVES: tuple[Op, ...] = (ReadBarrier(), Flush(), AtomicBarrier())


class Collect(Query):
    """A query that keeps the facts the encoder asserts (the position domain) instead of asserting them."""

    def __init__(self) -> None:
        super().__init__("positions")
        self.facts: list[z3.BoolRef] = []

    def add(self, fact: Any, label: str | None = None) -> None:
        self.facts.append(fact)


def program(ops: tuple[Op, ...]) -> Program:
    p = Program("nest", WORMHOLE, trips=(Trip("t", TRIP_MAX),),
                programs=(EngineProgram(Site(0, 0), Engine.READER, ops),))
    assert validate(p) == [], validate(p)
    return p


@st.composite
def bodies(draw: st.DrawFn, loops: tuple[str, ...] = (), depth: int = 0) -> tuple[Op, ...]:
    out: list[Op] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["leaf", "leaf", "loop", "if"] if depth < 3 else ["leaf"]))
        if kind == "loop":
            var = f"v{depth}{len(out)}"
            out.append(Loop(var, draw(st.sampled_from(COUNTS)), draw(bodies((*loops, var), depth + 1))))
        elif kind == "if" and loops:
            out.append(If(draw(st.sampled_from(loops)), draw(st.sampled_from(list(Guard))),
                          draw(bodies(loops, depth + 1))))
        else:
            out.append(draw(st.sampled_from(LEAVES)))
    return tuple(out)


def _idx_of(view: EngineView, path: tuple[int, ...], iters: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """Loop path -> index, from the interpreter's program counter (one entry per container; an If's is 0)."""
    loops = {lc.path for lc in view.loops}
    return {path[:k]: iters[k - 1] for k in range(1, len(path)) if path[:k] in loops}


def check_nest(ops: tuple[Op, ...]) -> None:
    p = program(ops)
    view = engine_views(p)[KEY]
    for t in range(TRIP_MAX + 1):
        q = Collect()
        enc = Encoder(q, p, {KEY: view}, {"t": t})
        enc.position(KEY)  # asserts the domain into q.facts
        domain = z3.And(*q.facts)
        executed = {lf.index: enc.executed(lf) for lf in view.leaves}
        last = {lf.index: enc.last_occurrence(lf) for lf in view.leaves}


        it = Interp(p, {"t": t})
        s = it.initial()
        done: dict[int, int] = {lf.index: 0 for lf in view.leaves}
        latest: dict[int, tuple[int, ...]] = {}
        occurrences: dict[int, list[tuple[int, ...]]] = {lf.index: [] for lf in view.leaves}
        reached: set[tuple[int, tuple[tuple[tuple[int, ...], int], ...]]] = set()
        by_path = {lf.path: lf for lf in view.leaves}
        while True:
            pc = s.pcs[0]
            if pc is None:
                sel, idx = view.finished, {}
            else:
                lf = by_path[pc[0]]
                sel, idx = lf.index, _idx_of(view, *pc)
            subs = _subs(enc, q, sel, idx)
            reached.add((sel, tuple(sorted(idx.items()))))
            assert value(domain, subs), (t, sel, idx)
            for leaf in view.leaves:
                assert value(executed[leaf.index], subs) == done[leaf.index], (t, sel, idx, leaf.path)
                some, vec = last[leaf.index]
                assert value(some, subs) == (done[leaf.index] > 0), (t, sel, idx, leaf.path)
                if done[leaf.index]:
                    assert tuple(value(x, subs) for x in vec) == latest[leaf.index], (t, sel, idx, leaf.path)
            if pc is None:
                break
            lf = by_path[pc[0]]
            vec_now = tuple(idx[lc.path] for lc in lf.loops)
            done[lf.index] += 1
            latest[lf.index] = vec_now
            occurrences[lf.index].append(vec_now)
            s = it.step(s, it.enabled(s)[0])[0]
        _check_domain_is_exact(view, enc, q, domain, reached, t)
        _check_ordinals(view, enc, occurrences)


def _subs(enc: Encoder, q: Query, sel: int, idx: dict[tuple[int, ...], int]) -> list[tuple[z3.ArithRef, z3.ArithRef]]:
    """The substitution that puts the engine at leaf ``sel`` with loop indices ``idx`` (others 0, as the domain)."""
    pos = enc.position(KEY)
    return [(pos.sel, q.val(sel))] + [(v, q.val(idx.get(path, 0))) for path, v in pos.idx.items()]


def value(e: z3.ExprRef, subs: list[tuple[z3.ArithRef, z3.ArithRef]]) -> Any:
    got = z3.simplify(z3.substitute(e, *subs))
    return z3.is_true(got) if z3.is_bool(got) else got.as_long()


def _check_domain_is_exact(view: EngineView, enc: Encoder, q: Query, domain: z3.BoolRef,
                           reached: set[tuple[int, tuple[tuple[tuple[int, ...], int], ...]]], t: int) -> None:
    """Every position the domain admits is one the interpreter reached (the domain is exact, not only sound)."""
    pos = enc.position(KEY)
    admitted = set()
    top = max([count_value(lc.count, {"t": t}) for lc in view.loops] + [1])
    for sel in range(view.finished + 1):
        inside = [lc for lc in view.loops if lc.path in pos.ranges
                  and pos.ranges[lc.path][0] <= sel < pos.ranges[lc.path][1]]
        for vals in itertools.product(range(top), repeat=len(inside)):
            idx = dict(zip([lc.path for lc in inside], vals, strict=True))
            if value(domain, _subs(enc, q, sel, idx)):
                admitted.add((sel, tuple(sorted(idx.items()))))
    assert admitted == reached


def _check_ordinals(view: EngineView, enc: Encoder, occurrences: dict[int, list[tuple[int, ...]]]) -> None:
    """Occurrence n of a leaf has ordinal n and lies in the leaf's occurrence domain; the total is the count."""
    q = enc.q
    for leaf in view.leaves:
        seen = occurrences[leaf.index]
        assert z3.simplify(enc.total(leaf)).as_long() == len(seen), leaf.path  # type: ignore[attr-defined]
        for n, vec in enumerate(seen):
            idx = [q.val(i) for i in vec]
            assert z3.simplify(enc.math.ordinal(leaf, idx)).as_long() == n  # type: ignore[attr-defined]
            assert z3.is_true(z3.simplify(enc.math.domain(leaf, idx)))
        _check_domain_count(leaf, enc, seen)


def _check_domain_count(leaf: Leaf, enc: Encoder, seen: list[tuple[int, ...]]) -> None:
    q = enc.q
    top = 2 * TRIP_MAX + 2
    inside = {vec for vec in itertools.product(range(top), repeat=len(leaf.loops))
              if z3.is_true(z3.simplify(enc.math.domain(leaf, [q.val(i) for i in vec])))}
    assert inside == set(seen)


PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")


@settings(max_examples=400 if PROFILE == "thorough" else 15, deadline=None)
@given(bodies())
def test_counts_match_the_interpreter(ops: tuple[Op, ...]) -> None:
    check_nest(ops)


#: Hand-picked nests: every guard on a constant, a trip and a trip-affine loop, nested guards on one loop, a
#: guard on an outer loop around an inner loop, and the peeled K loop of issue 7.
NESTS: dict[str, tuple[Op, ...]] = {
    "peel-last": (Loop("k", "t", (ReadBarrier(), If("k", Guard.NOT_LAST, (Flush(),)),
                                  If("k", Guard.LAST, (AtomicBarrier(),)))),),
    "t-1": (Loop("k", TripCount("t", 1, -1), (ReadBarrier(), Loop("j", 2, (Flush(),)))),),
    "2t": (Loop("k", TripCount("t", 2), (If("k", Guard.FIRST, (Flush(),)), ReadBarrier())),),
    "outer-guard": (Loop("i", 3, (Loop("j", "t", (If("i", Guard.NOT_FIRST, (Flush(),)), ReadBarrier())),
                                  If("i", Guard.LAST, (Loop("j2", 2, (AtomicBarrier(),)),)))),),
    "two-guards": (Loop("k", 4, (If("k", Guard.NOT_FIRST, (If("k", Guard.NOT_LAST, (Flush(),)),)),
                                 If("k", Guard.FIRST, (If("k", Guard.LAST, (ReadBarrier(),)),)))),),
    "empty-if": (Loop("k", 3, (If("k", Guard.LAST, (Loop("j", 0, (Flush(),)),)), ReadBarrier())),),
}


@pytest.mark.parametrize("name", sorted(NESTS))
def test_hand_picked_nests(name: str) -> None:
    check_nest(NESTS[name])


def test_trip_affine_outer_loop_stays_linear() -> None:
    """A guard and a trip-affine count on the outermost loop keep the counts linear (symbolic trips)."""
    views = engine_views(program(NESTS["peel-last"]))
    assert is_linear(views)
    assert is_linear(engine_views(program(NESTS["t-1"])))
    assert not is_linear(engine_views(program(NESTS["outer-guard"])))
