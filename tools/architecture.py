"""Architecture figures of the package (docs/checker.md "Trusted kernel"): files and lines per package, the lines
a ``certify`` verdict depends on (every module ``verispatial.certify.checker`` reaches by imports, function-local ones
included), the trusted kernel's modules and lines (``kernel_modules``), import cycles, functions over 80 lines, and
the files naming any one rule literally.

    python tools/architecture.py [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

import networkx as nx


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = (root.name, *f.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


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


def graph(mods: dict[str, Path]) -> nx.DiGraph:
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


#: Top-level parts of the package that are the trusted kernel (docs/checker.md "Trusted kernel"): the IR and the
#: checker; the families' checker encodings (``families/<family>/encoding.py`` and ``*_encoding.py`` beside it,
#: such as ``cb/shared_encoding.py``) are kernel modules too.
KERNEL_PARTS = ("ir", "certify")


def kernel_modules(mods: dict[str, Path]) -> set[str]:
    """The modules of the trusted kernel: every module of ``KERNEL_PARTS`` and every family's encoding modules."""
    out = set()
    for name in mods:
        parts = name.split(".")
        if len(parts) > 1 and parts[1] in KERNEL_PARTS:
            out.add(name)
        elif len(parts) > 3 and parts[1] == "families" and parts[-1].endswith("encoding"):
            out.add(name)
    return out


def lines(f: Path) -> int:
    return len(f.read_text().splitlines())


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "verispatial")
    mods = modules(root)
    g = graph(mods)
    per: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for name, f in mods.items():
        part = name.split(".")[1] if name.count(".") else "(top)"
        part = part if (root / part).is_dir() else "(top)"
        per[part] += lines(f)
        files[part] += 1
    print("package        files  lines")
    for part in sorted(per):
        print(f"  {part:<12} {files[part]:>5} {per[part]:>6}")
    print(f"  {'total':<12} {sum(files.values()):>5} {sum(per.values()):>6}")
    checker = f"{root.name}.certify.checker"
    reach = nx.descendants(g, checker) | {checker}
    print(f"verdict depends on: {len(reach)} modules, {sum(lines(mods[m]) for m in reach)} lines")
    kernel = kernel_modules(mods)
    print(f"kernel lines: {len(kernel)} modules, {sum(lines(mods[m]) for m in kernel)} lines "
          f"(certify {sum(lines(mods[m]) for m in kernel if m.split('.')[1] == 'certify')}, "
          f"ir {sum(lines(mods[m]) for m in kernel if m.split('.')[1] == 'ir')}, "
          f"family encodings {sum(lines(mods[m]) for m in kernel if m.split('.')[1] == 'families')})")
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    print(f"import cycles: {len(cycles)} {cycles if cycles else ''}")
    long = []
    for name, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > 80:
                    long.append((n, f"{name}.{node.name}"))
    print(f"functions over 80 lines: {len(long)}: " + ", ".join(f"{q} {n}" for n, q in sorted(long, reverse=True)[:8]))
    names = ["cb-capacity", "acc-overrun", "cb-read-unwaited", "rendezvous-early", "balance-cb", "deadlock"]
    for n in names:
        pat = re.compile(rf"""["']{re.escape(n)}["':]""")
        hits = [m for m, f in mods.items() if pat.search(f.read_text())]
        print(f"files spelling {n!r}: {len(hits)}")


if __name__ == "__main__":
    main()
