"""``reach.components`` (a union-find) splits engines exactly as networkx's connected components of the graph joining
engines that touch one counter, which it replaced (networkx's import cost a twentieth of a decode step's certify)."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from verispatial.certify.reach import components

ENGINES = [f"({x},0).{k}" for x in range(4) for k in ("reader", "compute", "writer")]


def by_networkx(engines: list[str], touches: dict[str, set[str]]) -> tuple[frozenset[str], ...]:
    g: nx.Graph = nx.Graph()
    g.add_nodes_from(engines)
    for es in touches.values():
        for a, b in itertools.pairwise(sorted(es)):
            g.add_edge(a, b)
    return tuple(frozenset(c) for c in sorted(nx.connected_components(g), key=lambda c: sorted(c)))


@given(st.lists(st.sampled_from(ENGINES), unique=True, min_size=1),
       st.dictionaries(st.sampled_from([f"cb{i}" for i in range(8)] + [f"sem{i}" for i in range(4)]),
                       st.sets(st.sampled_from(ENGINES), max_size=4), max_size=8))
def test_components_are_networkx_connected_components(engines: list[str], touches: dict[str, set[str]]) -> None:
    views = dict.fromkeys(engines)
    got = components(views, touches)  # type: ignore[arg-type]
    assert got == by_networkx(engines, touches)


def test_engines_sharing_no_counter_are_apart_and_a_chain_is_one() -> None:
    a, b, c, d = ENGINES[:4]
    views = dict.fromkeys([a, b, c, d])
    assert components(views, {"cb0": {a, b}, "cb1": {b, c}}) == (frozenset({a, b, c}), frozenset({d}))  # type: ignore[arg-type]
    assert components(views, {}) == tuple(frozenset({e}) for e in sorted([a, b, c, d]))  # type: ignore[arg-type]


@given(st.dictionaries(st.sampled_from([f"cb{i}" for i in range(8)]), st.sets(st.sampled_from(ENGINES), max_size=4),
                       max_size=8),
       st.lists(st.sampled_from([*ENGINES, "(9,9).reader"]), max_size=6))
def test_component_of_is_the_union_of_the_components_met(touches: dict[str, set[str]], engines: list[str]) -> None:
    # ``Analysis.component_of`` looks each engine up in an index (a scan of every component per lookup made a wide
    # slice's per-buffer lookups quadratic); an engine outside every component adds none.
    from verispatial.certify.reach import Analysis

    comps = components(dict.fromkeys(ENGINES), touches)  # type: ignore[arg-type]
    a = Analysis(None, {}, {}, touches, comps, True, {})  # type: ignore[arg-type]
    want = frozenset().union(*[c for c in comps if c & set(engines)])
    assert a.component_of(engines) == want
    assert a.component_of(iter(engines)) == want
