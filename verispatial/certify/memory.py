"""Memory non-overlap (DESIGN §7): on every site and space, buffers live in a common phase are disjoint, inside
usable memory (``[reserved_base, local_bytes)`` for local memory) and aligned. A declared alias shares its root's
bytes exactly (same offset and size, reference §1.1 "Aliasing is allowed"); its safety is the protocol's.

One Z3 query per (site, space, phase): a model is a byte address inside two buffers — the counterexample. The
byte ranges are constants, so a sweep over them sorted by offset decides the same question exactly
(``smt.shortcuts``: it proves disjointness without Z3; an overlap is still found, and reported, by the query).
"""

from __future__ import annotations

import time

import z3

from verispatial.certify import smt
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, model_int
from verispatial.ir.core import Space
from verispatial.ir.program import Buffer, BufferAt, Program


def _root(p: Program, b: Buffer) -> int:
    return b.alias_of if b.alias_of is not None else b.id


def _disjoint(p: Program, bufs: list[Buffer], at: dict[int, BufferAt]) -> bool:
    """Whether no byte lies in two of ``bufs`` that do not share a root (the query's question, decided exactly on
    the constant ranges ``[offset, offset + size)``): sorted by offset, a range overlaps an earlier one exactly
    when it starts before that one ends and is not empty."""
    spans = sorted((at[b.id].offset, at[b.id].offset + at[b.id].size, _root(p, b)) for b in bufs)
    for i, (_lo, hi, root) in enumerate(spans):
        for lo2, hi2, root2 in spans[i + 1:]:
            if lo2 >= hi:
                break
            if lo2 < hi2 and root2 != root:
                return False
    return True


def check_memory(p: Program, rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    if not p.buffers:
        return []
    if not p.memory:
        return [Result("memory", "memory-map", Verdict.FAILED,
                       "the program has no memory map (memory): nothing to prove disjointness from")]
    out: list[Result] = []
    at = {m.buf: m for m in p.memory}
    phase = p.phase_of_section()
    t = p.target
    for b in p.buffers:
        m = at[b.id]
        name = f"memory-range:b{b.id}"
        if b.space == Space.LOCAL and (m.offset < t.reserved_base or m.offset + m.size > t.local_bytes):
            out.append(Result("memory", name, Verdict.REFUTED,
                              f"b{b.id} ({b.name}) on {b.site} occupies [{m.offset}, {m.offset + m.size}) outside usable "
                              f"[{t.reserved_base}, {t.local_bytes})",
                              {"kind": "memory", "rule": "memory-range", "buffer": b.id, "site": [b.site.x, b.site.y],
                               "address": m.offset if m.offset < t.reserved_base else t.local_bytes,
                               "summary": f"b{b.id} leaves usable memory"}))
        elif m.offset % t.alignment:
            out.append(Result("memory", name, Verdict.REFUTED, f"b{b.id} at offset {m.offset} is not {t.alignment}-byte aligned",
                              {"kind": "memory", "rule": "memory-align", "buffer": b.id, "address": m.offset,
                               "summary": f"b{b.id} misaligned"}))
        elif b.alias_of is not None and (at[b.alias_of].offset, at[b.alias_of].size) != (m.offset, m.size):
            out.append(Result("memory", name, Verdict.REFUTED,
                              f"b{b.id} aliases b{b.alias_of} but sits at [{m.offset}, +{m.size}) instead of its bytes",
                              {"kind": "memory", "rule": "memory-alias", "buffer": b.id, "address": m.offset,
                               "summary": f"alias b{b.id} is not page for page on b{b.alias_of}"}))
    groups: dict[tuple[object, ...], list[Buffer]] = {}
    for b in p.buffers:
        groups.setdefault((b.site.y, b.site.x, b.space.value, phase[b.section]), []).append(b)
    for (y, x, space, ph), bufs in sorted(groups.items()):
        t0 = time.perf_counter()
        name = f"memory-disjoint:({x},{y}).{space}.phase{ph}"
        if len({_root(p, b) for b in bufs}) < 2:
            out.append(Result("memory", name, Verdict.PROVED, f"{len(bufs)} buffer(s), no distinct pair", seconds=time.perf_counter() - t0))
            continue
        if smt.shortcuts() and _disjoint(p, bufs, at):
            out.append(Result("memory", name, Verdict.PROVED, f"{len(bufs)} buffers pairwise disjoint",
                              seconds=time.perf_counter() - t0))
            continue
        q = Query(name, rlimit)
        addr = q.int_var("addr")
        pairs = []
        for i, b1 in enumerate(bufs):
            for b2 in bufs[i + 1:]:
                if _root(p, b1) == _root(p, b2):
                    continue
                m1, m2 = at[b1.id], at[b2.id]
                inside = z3.And(addr >= m1.offset, addr < m1.offset + m1.size, addr >= m2.offset, addr < m2.offset + m2.size)
                pairs.append((b1, b2, inside))
        sel = q.int_var("pair")
        q.add(z3.Or(*[z3.And(sel == k, c) for k, (_, _, c) in enumerate(pairs)]))
        r = q.check()
        dt = time.perf_counter() - t0
        if r.status == Status.UNSAT:
            out.append(Result("memory", name, Verdict.PROVED, f"{len(bufs)} buffers pairwise disjoint", seconds=dt))
        elif r.status == Status.SAT:
            assert r.model is not None
            k = model_int(r.model, sel)
            b1, b2, _ = pairs[k]
            a = model_int(r.model, addr)
            summary = f"b{b1.id} ({b1.name}) and b{b2.id} ({b2.name}) on ({x},{y}) both hold byte {a}"
            out.append(Result("memory", name, Verdict.REFUTED, summary,
                              {"kind": "memory", "rule": "memory-overlap", "site": [x, y], "space": space,
                               "buffers": [b1.id, b2.id], "address": a, "summary": summary}, dt))
        else:
            out.append(Result("memory", name, Verdict.FAILED, f"solver: {r.reason}", seconds=dt))
    return out
