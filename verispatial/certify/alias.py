"""Aliased buffers (DESIGN §4 ``alias_of``; reference §1.1 and §2.6 item 6): two circular buffers sharing bytes
page for page are safe only if a push into one never publishes a page the other still holds unconsumed.

One reachability query per push into an aliased buffer: is there a state, consistent with the facts, where the
producer is about to push ``n`` pages starting at its write pointer and one of them is among the alias's pages
``[popped, pushed)`` (all modulo the common capacity)?
"""

from __future__ import annotations

import time

import z3

from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Status
from verispatial.certify.structure import Leaf, pages
from verispatial.ir.ops import Push


def _clobbers(pushes: list[Leaf], b: int, other: int, cap: int) -> object:
    def build(sq: StateQuery) -> z3.BoolRef:
        cm = sq.cm
        j, k = sq.q.int_var("j"), sq.q.int_var("k")
        live = cm.pushed(other) - cm.popped(other)
        about = z3.Or(*[z3.And(sq.enc.position(p.engine).at(p), j < pages(p.op)) for p in pushes])
        return z3.And(about, j >= 0, k >= 0, k < live, (cm.pushed(b) + j) % cap == (cm.popped(other) + k) % cap)

    return build


def check_aliases(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """One result per (buffer, alias) pair, covering every push into the buffer."""
    out: list[Result] = []
    partners = a.program.alias_partners()
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    for b, others in sorted(partners.items()):
        cap = a.program.buffers[b].capacity
        pushes = [lf for lf in leaves if isinstance(lf.op, Push) and lf.op.buf == b]
        if not pushes:
            continue
        for other in others:
            t0 = time.perf_counter()
            name = f"alias-clobber:b{b}~b{other}"
            focus = {lf.engine for lf in leaves if getattr(lf.op, "buf", None) in (b, other)}
            o, d, _ = solve_each(a, _clobbers(pushes, b, other, cap), name, frozenset(focus), trusted, rlimit)
            dt = time.perf_counter() - t0
            if o.status == Status.UNSAT:
                out.append(Result("memory", name, Verdict.PROVED,
                                  f"{len(pushes)} push(es) into b{b} never publish a page its alias b{other} still holds",
                                  seconds=dt))
            elif o.status == Status.SAT and d is not None:
                at = [lf for lf, _ in d.at.values() if lf is not None and lf in pushes]
                where = {"engine": at[0].engine, "path": list(at[0].path)} if at else {}
                msg = f"a push into b{b} can publish pages its alias b{other} still holds unconsumed"
                out.append(Result("memory", name, Verdict.REFUTED, msg,
                                  d.counterexample("state", "alias-clobber", msg, **where), dt))
            else:
                out.append(Result("memory", name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt))
    return out
