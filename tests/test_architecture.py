"""The package's layering, pinned: no import cycle (function-local imports included), and no import that climbs a
layer — the IR imports nothing above it, the reference interpreter and the nets nothing of the checker, and the checker nothing of
the reporting, the CLI, the passes or the front ends (what makes verdicts readable or programs from source cannot
change a verdict). Imports are read from the source with ``ast``; networkx finds the cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "verispatial"

#: Layer -> the top-level parts of the package it may import (besides itself).
ALLOWED = {
    "ir": {"errors", "__init__"},
    "petri": {"ir", "errors", "budget", "__init__"},
    "certify": {"ir", "petri", "errors", "budget", "atomic", "__init__"},
}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for annotations only run nowhere)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def _graph() -> nx.DiGraph:
    mods: dict[str, Path] = {}
    for f in PACKAGE.rglob("*.py"):
        parts = ("verispatial", *f.relative_to(PACKAGE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = f
    g = nx.DiGraph()
    for name, f in mods.items():
        g.add_node(name)
        for node in _runtime_nodes(ast.parse(f.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from P import m`` of a submodule ``m`` depends on ``m``; of a name, on ``P``.
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in mods]
                targets = subs + ([node.module] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                if t in mods and t != name:
                    g.add_edge(name, t)
    return g


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_cycle() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert cycles == []


def test_no_import_climbs_a_layer() -> None:
    climbs = [f"{a} -> {b}" for a, b in _graph().edges
              if _part(a) in ALLOWED and _part(b) != _part(a) and _part(b) not in ALLOWED[_part(a)]]
    assert climbs == []
