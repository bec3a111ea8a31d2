"""The package's layering, pinned: no import cycle (function-local imports included, imports for annotations only
left out), and no import that climbs a layer — the IR imports nothing above it, the reference interpreter and the
nets nothing of the checker (nor do the family folders' semantics and Promela parts they run), the checker
nothing of its driver (docs/checker.md, "Trusted kernel"), the reporting, the CLI, the passes or the front ends
(what makes verdicts fast, readable or programs from source cannot change a verdict), and the driver nothing of
the reporting, the CLI, the passes or the front ends. The import graph is the one ``tools/architecture.py``
prints its figures from (``ast`` reads the imports, networkx finds the cycles)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "verispatial"

#: Layer -> the top-level parts of the package it may import (besides itself).
ALLOWED = {
    # regular_file: the stdlib-only check that an input is a regular file before it is read (a FIFO never ends).
    "ir": {"errors", "regular_file", "__init__"},
    "petri": {"ir", "families", "errors", "budget", "__init__"},
    "families": {"ir", "petri", "certify", "errors", "budget", "__init__"},
    "certify": {"ir", "petri", "families", "errors", "budget", "__init__"},
    # The untrusted machinery around the kernel calls it; it renders nothing and runs no pass or front end.
    "driver": {"certify", "families", "ir", "petri", "errors", "budget", "atomic", "regular_file", "__init__"},
}


def _tools() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "tools" / "architecture.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _graph() -> nx.DiGraph:
    tools = _tools()
    return tools.graph(tools.modules(PACKAGE))


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_cycle() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert cycles == []


def test_a_family_s_semantics_and_promela_import_nothing_of_the_checker() -> None:
    """A family folder's reference semantics and Promela part (what the interpreter and the model run) stand apart
    from the checker: only its ``encoding`` may import ``verispatial.certify``."""
    edges = [f"{a} -> {b}" for a, b in _graph().edges
             if _part(a) == "families" and a.rsplit(".", 1)[-1] in ("semantics", "promela") and _part(b) == "certify"]
    assert edges == []


def test_no_import_climbs_a_layer() -> None:
    climbs = [f"{a} -> {b}" for a, b in _graph().edges
              if _part(a) in ALLOWED and _part(b) != _part(a) and _part(b) not in ALLOWED[_part(a)]]
    assert climbs == []


def test_nothing_imports_the_command_line() -> None:
    """The CLI (``verispatial/cli/``) is the top layer: only it and ``python -m verispatial`` import it."""
    importers = sorted(f"{a} -> {b}" for a, b in _graph().edges
                       if _part(b) == "cli" and _part(a) not in ("cli", "__main__"))
    assert importers == []
