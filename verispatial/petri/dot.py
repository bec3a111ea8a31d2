"""Graphviz DOT export of the behavioural place/transition net of a program (``petri/ptnet.py``), drawn in program
order.

One cluster per engine holds its control points (circles, the engine's first one with its token) and its
transitions (boxes) from top to bottom in program order — the program-order arcs carry a high layout ``weight`` so
``dot`` keeps them vertical — together with its in-flight places and their landings, drawn beside the op that
issued them. Buffer, semaphore-word, trip
and idle places sit outside the clusters (double circles, labelled with their name and initial marking); their arcs
do not constrain the layout (``constraint=false``). Every edge is one arc, labelled with its weight and carrying it
as ``tokens``; every place carries its initial marking as ``tokens``. Render with ``dot -Tsvg``.
"""

from __future__ import annotations

from verispatial.ir.program import Program
from verispatial.petri.ptnet import Net, net_of

__all__ = ["net_dot", "to_dot"]

#: Places drawn inside their engine's cluster.
_ENGINE_KINDS = ("pc", "in-flight")


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def net_dot(net: Net) -> str:
    """``net`` as a DOT ``digraph``: one node statement per place and transition, one edge statement per arc."""
    lines = [f"digraph {_q(net.name)} {{", "  rankdir=TB;", "  node [fontsize=10];"]
    clusters: dict[str, list[str]] = {}
    outside: list[str] = []
    for pl in net.places:
        shape = "circle" if pl.kind in _ENGINE_KINDS else "doublecircle"
        label = pl.name if not pl.marking else f"{pl.name}\\n{pl.marking}"
        node = f"    {_q(pl.id)} [shape={shape}, label={_q(label)}, tokens={pl.marking}];"
        if pl.kind in _ENGINE_KINDS:
            clusters.setdefault(pl.engine, []).append(node)
        else:
            outside.append(node)
    for t in net.transitions:
        node = f"    {_q(t.id)} [shape=box, label={_q(t.label)}];"
        (clusters.setdefault(t.engine, []) if t.engine else outside).append(node)
    for i, (engine, nodes) in enumerate(clusters.items()):
        lines += [f"  subgraph {_q(f'cluster_{i}')} {{", f"    label={_q(engine)};", *nodes, "  }"]
    lines += [s[2:] for s in outside]
    order = {(t.pc_in, t.id) for t in net.transitions if t.pc_in} | {(t.id, t.pc_out) for t in net.transitions
                                                                      if t.pc_out}
    flights = {pl.id for pl in net.places if pl.kind == "in-flight"}
    for a in net.arcs:
        # Program order is kept vertical; an in-flight place and its landing hang beside the op that issued it;
        # resource arcs leave the layout alone.
        layout = ("weight=10" if (a.source, a.target) in order
                  else "weight=1" if a.source in flights or a.target in flights else "constraint=false")
        lines.append(f"  {_q(a.source)} -> {_q(a.target)} [label={_q(str(a.weight))}, tokens={a.weight}, {layout}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(program: Program) -> str:
    """The DOT text of ``program``'s behavioural net (module docstring). Raises ``NetUnsupported`` as ``net_of``
    does."""
    return net_dot(net_of(program))
