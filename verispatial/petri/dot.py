"""Graphviz DOT export of the place/transition net of a program's marked graph (``petri/ptnet.py``).

Transitions are boxes grouped in one cluster per engine (in program order), places are circles labelled with their
kind, counter and initial marking, arcs are edges labelled with their weight. Render with ``dot -Tsvg``.
"""

from __future__ import annotations

from verispatial.ir.program import Program
from verispatial.petri.ptnet import Net, net_of

__all__ = ["net_dot", "to_dot"]


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def net_dot(net: Net) -> str:
    """``net`` as a DOT ``digraph``: one node statement per place and transition, one edge statement per arc."""
    lines = [f"digraph {_q(net.name)} {{", "  rankdir=LR;"]
    engines: dict[str, list[str]] = {}
    for t in net.transitions:
        engines.setdefault(t.engine, []).append(f"    {_q(t.id)} [shape=box, label={_q(t.label)}];")
    for i, (engine, nodes) in enumerate(engines.items()):
        lines += [f"  subgraph {_q(f'cluster_{i}')} {{", f"    label={_q(engine)};", *nodes, "  }"]
    for pl in net.places:
        lines.append(f"  {_q(pl.id)} [shape=circle, label={_q(f'{pl.kind} {pl.counter}')}, "
                     f"xlabel={_q(str(pl.marking))}, tokens={pl.marking}];")
    for a in net.arcs:
        lines.append(f"  {_q(a.source)} -> {_q(a.target)} [label={_q(str(a.weight))}, weight_tokens={a.weight}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(program: Program) -> str:
    """The DOT text of ``program``'s marked graph (module docstring)."""
    return net_dot(net_of(program))
