"""``z3.Or()`` / ``z3.And()`` of no argument are built in Z3's global context; joined with a query's terms (each
query has its own context) they raise ``Z3Exception: Context mismatch``. Every connective over a list that may be
empty goes through ``smt.any_of`` / ``smt.all_of``, which build the empty case in the query's context."""

from __future__ import annotations

import ast
from pathlib import Path

import z3

import verispatial
from verispatial.certify.smt import Query, all_of, any_of

PACKAGE = Path(verispatial.__file__).parent


def test_the_empty_connectives_are_false_and_true_in_the_query_context() -> None:
    q = Query("empty-connectives")
    x = q.int_var("x")
    q.add(z3.Or(x == 1, any_of(q.ctx, [])))
    q.add(z3.And(all_of(q.ctx, []), x >= 0))
    assert q.check().status.value == "sat"
    s = z3.Solver(ctx=q.ctx)
    s.add(any_of(q.ctx, []))
    assert s.check() == z3.unsat
    s = z3.Solver(ctx=q.ctx)
    s.add(z3.Not(all_of(q.ctx, [])))
    assert s.check() == z3.unsat
    assert any_of(q.ctx, [x == 1]).eq(z3.Or(x == 1))  # a non-empty list: the same term as z3.Or(*terms)


def _unsafe_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """Calls ``z3.Or``/``z3.And`` whose every argument is starred (``z3.Or(*xs)``): empty when ``xs`` is."""
    out = []
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                and n.func.value.id == "z3" and n.func.attr in ("Or", "And")
                and all(isinstance(a, ast.Starred) for a in n.args)):
            out.append((n.lineno, ast.unparse(n)))
    return out


def test_the_scan_finds_a_starred_connective() -> None:
    assert _unsafe_calls(ast.parse("z3.And(z3.Or(*xs), y)")) == [(1, "z3.Or(*xs)")]
    assert _unsafe_calls(ast.parse("z3.Or(a, *xs)")) == []


def test_no_connective_over_a_possibly_empty_list_outside_smt() -> None:
    found = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.name == "smt.py" and f.parent.name == "certify":
            continue  # any_of / all_of themselves, which handle the empty case
        found += [f"{f.relative_to(PACKAGE)}:{line}: {text}" for line, text in _unsafe_calls(ast.parse(f.read_text()))]
    assert found == []
