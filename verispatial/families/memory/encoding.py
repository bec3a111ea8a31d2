"""Memory non-overlap (DESIGN §7): on every site and space, buffers live in a common phase are disjoint, inside
usable memory (``[reserved_base, local_bytes)`` for local memory) and aligned; so are resident tensors
(``Program.resident``), each disjoint from every buffer and resident tensor live in a phase with it. A declared alias
shares its root's bytes exactly (same offset and size, reference §1.1 "Aliasing is allowed"); its safety is the
protocol's. A sharded buffer (``Buffer.shard``) sits on its tensor's shard, which the host allocated for the tensor:
its bytes are taken in every phase, and two buffers on one shard are declared aliases (``validate``).

One Z3 query per (site, space, phase): a model is a byte address inside two buffers — the counterexample. The
byte ranges are constants, so a sweep over them sorted by start decides the same question exactly
(``smt.shortcuts``: it proves disjointness without Z3; an overlap is still found, and reported, by the query).
"""

from __future__ import annotations

import time

import attrs
import z3

from verispatial.certify import smt
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, any_of, model_int
from verispatial.ir import rules as R
from verispatial.ir.core import Space
from verispatial.ir.program import Buffer, Program


def _root(p: Program, b: Buffer) -> int:
    return b.alias_of if b.alias_of is not None else b.id


def _disjoint(items: list[_Item]) -> bool:
    """Whether no byte lies in two of ``items`` that do not share a root (the query's question, decided exactly on
    their constant ranges ``[lo, hi)``): sorted by start, a range overlaps an earlier one exactly when it starts
    before that one ends and is not empty."""
    spans = sorted((i.lo, i.hi, i.root) for i in items)
    for k, (_lo, hi, root) in enumerate(spans):
        for lo2, hi2, root2 in spans[k + 1:]:
            if lo2 >= hi:
                break
            if lo2 < hi2 and root2 != root:
                return False
    return True


def check_memory(p: Program, rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """The memory obligations of ``p``: ``memory-range`` of each buffer out of place (``_buffer_ranges``) and each
    resident tensor (``_resident_ranges``), then ``memory-disjoint`` of each (site, space, phase) with occupants
    (``_disjoint_result``); ``memory-map`` failed to prove when ``p`` has buffers and no memory map. ``rlimit`` is each
    query's Z3 resource limit."""
    if not p.buffers and not p.resident:
        return []
    if not p.memory:
        return [Result(R.Family.MEMORY.value, R.MEMORY_MAP, Verdict.FAILED,
                       "the program has no memory map (memory): nothing to prove disjointness from")]
    out = _buffer_ranges(p)
    out += _resident_ranges(p)
    at = {m.buf: m for m in p.memory}
    phase = p.phase_of_section()
    # The occupants of each (site, space, phase): buffers of that phase and resident tensors live in it.
    groups: dict[tuple[int, int, str, int], list[_Item]] = {}
    every = sorted(set(phase))
    for b in p.buffers:
        m = at[b.id]
        # A sharded buffer's bytes are its tensor's shard, allocated for the tensor (host ``CreateBuffer``), not for
        # the buffer's phase: they are taken in every phase of the program (docs/semantics.md "Sharded buffers").
        for ph in every if b.shard is not None else (phase[b.section],):
            groups.setdefault((b.site.y, b.site.x, b.space.value, ph), []).append(
                _Item(f"b{b.id} ({b.name})", m.offset, m.offset + m.size, ("b", _root(p, b)), b.id))
    for res in p.resident:
        for ph in sorted(p.resident_phases(res)):
            groups.setdefault((res.site.y, res.site.x, Space.LOCAL.value, ph), []).append(
                _Item(f"resident {res.tensor}", res.offset, res.offset + res.size, ("r", res.tensor), None))
    out += [_disjoint_result(key, items, rlimit) for key, items in sorted(groups.items(), key=lambda kv: kv[0])]
    return out


def _buffer_ranges(p: Program) -> list[Result]:
    """``memory-range:b<id>`` of each buffer out of place, refuted: outside usable local memory
    (``[reserved_base, local_bytes)``), misaligned (``alignment``), or an alias not on its root's bytes."""
    out: list[Result] = []
    at = {m.buf: m for m in p.memory}
    t = p.target
    for b in p.buffers:
        m = at[b.id]
        name = f"{R.MEMORY_RANGE}:b{b.id}"
        if b.space == Space.LOCAL and (m.offset < t.reserved_base or m.offset + m.size > t.local_bytes):
            out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED,
                              f"b{b.id} ({b.name}) on {b.site} occupies [{m.offset}, {m.offset + m.size}) outside usable "
                              f"[{t.reserved_base}, {t.local_bytes})",
                              {"kind": "memory", "rule": R.MEMORY_RANGE, "buffer": b.id, "site": [b.site.x, b.site.y],
                               "address": m.offset if m.offset < t.reserved_base else t.local_bytes,
                               "summary": f"b{b.id} leaves usable memory"}))
        elif m.offset % t.alignment:
            out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED,
                              f"b{b.id} at offset {m.offset} is not {t.alignment}-byte aligned",
                              {"kind": "memory", "rule": R.MEMORY_ALIGN, "buffer": b.id, "address": m.offset,
                               "summary": f"b{b.id} misaligned"}))
        elif b.alias_of is not None and (at[b.alias_of].offset, at[b.alias_of].size) != (m.offset, m.size):
            out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED,
                              f"b{b.id} aliases b{b.alias_of} but sits at [{m.offset}, +{m.size}) instead of its bytes",
                              {"kind": "memory", "rule": R.MEMORY_ALIAS, "buffer": b.id, "address": m.offset,
                               "summary": f"alias b{b.id} is not page for page on b{b.alias_of}"}))
    return out


def _disjoint_result(key: tuple[int, int, str, int], items: list[_Item], rlimit: int) -> Result:
    """``memory-disjoint`` of the occupants ``items`` of one (row ``y``, column ``x``, space, phase) ``key``: proved
    with no distinct pair, by the interval sweep (``smt.shortcuts``), or by one query; a model is a byte two
    occupants hold (the ``memory-overlap`` counterexample)."""
    y, x, space, ph = key
    t0 = time.perf_counter()
    name = f"{R.MEMORY_DISJOINT}:({x},{y}).{space}.phase{ph}"
    nr = sum(1 for i in items if i.buffer is None)
    what = f"{len(items) - nr} buffers" + (f" and {nr} resident tensor(s)" if nr else "")
    if len({i.root for i in items}) < 2:
        few = f"{len(items) - nr} buffer(s)" + (f" and {nr} resident tensor(s)" if nr else "")
        return Result(R.Family.MEMORY.value, name, Verdict.PROVED, f"{few}, no distinct pair", seconds=time.perf_counter() - t0)
    if smt.shortcuts() and _disjoint(items):
        return Result(R.Family.MEMORY.value, name, Verdict.PROVED, f"{what} pairwise disjoint", seconds=time.perf_counter() - t0)
    q = Query(name, rlimit)
    addr = q.int_var("addr")
    pairs = []
    for i, b1 in enumerate(items):
        for b2 in items[i + 1:]:
            if b1.root == b2.root:
                continue
            inside = z3.And(addr >= b1.lo, addr < b1.hi, addr >= b2.lo, addr < b2.hi)
            pairs.append((b1, b2, inside))
    sel = q.int_var("pair")
    q.add(any_of(q.ctx, [z3.And(sel == k, c) for k, (_, _, c) in enumerate(pairs)]))
    r = q.check()
    dt = time.perf_counter() - t0
    if r.status == Status.UNSAT:
        return Result(R.Family.MEMORY.value, name, Verdict.PROVED, f"{what} pairwise disjoint", seconds=dt)
    if r.status == Status.SAT:
        assert r.model is not None
        k = model_int(r.model, sel)
        b1, b2, _ = pairs[k]
        a = model_int(r.model, addr)
        summary = f"{b1.label} and {b2.label} on ({x},{y}) both hold byte {a}"
        cex: dict[str, object] = {"kind": "memory", "rule": R.MEMORY_OVERLAP, "site": [x, y], "space": space,
                                  "buffers": [i.buffer for i in (b1, b2) if i.buffer is not None],
                                  "address": a, "summary": summary}
        residents = [i.root[1] for i in (b1, b2) if i.buffer is None]
        if residents:
            cex["residents"] = residents
        return Result(R.Family.MEMORY.value, name, Verdict.REFUTED, summary, cex, dt)  # type: ignore[arg-type]
    return Result(R.Family.MEMORY.value, name, Verdict.FAILED, f"solver: {r.reason}", seconds=dt)


@attrs.frozen
class _Item:
    """A byte interval ``[lo, hi)`` of one site's space: a buffer (``buffer`` its id) or a resident tensor. Two items
    with one ``root`` share bytes by declaration (an alias and its root)."""

    label: str
    lo: int
    hi: int
    root: tuple[str, object]
    buffer: int | None


def _resident_ranges(p: Program) -> list[Result]:
    """``memory-range:resident:<tensor>``: a resident tensor lies inside usable local memory and is aligned (the
    structural check in ``validate`` refuses the same, so a loaded program always proves these)."""
    out: list[Result] = []
    t = p.target
    for r in p.resident:
        name = f"{R.MEMORY_RANGE}:resident:{r.tensor}"
        if r.offset < t.reserved_base or r.offset + r.size > t.local_bytes:
            out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED,
                              f"resident {r.tensor} on {r.site} occupies [{r.offset}, {r.offset + r.size}) outside "
                              f"usable [{t.reserved_base}, {t.local_bytes})",
                              {"kind": "memory", "rule": R.MEMORY_RANGE, "resident": r.tensor,
                               "site": [r.site.x, r.site.y],
                               "address": r.offset if r.offset < t.reserved_base else t.local_bytes,
                               "summary": f"resident {r.tensor} leaves usable memory"}))
        elif r.offset % t.alignment:
            out.append(Result(R.Family.MEMORY.value, name, Verdict.REFUTED,
                              f"resident {r.tensor} at offset {r.offset} is not {t.alignment}-byte aligned",
                              {"kind": "memory", "rule": R.MEMORY_ALIGN, "resident": r.tensor, "address": r.offset,
                               "summary": f"resident {r.tensor} misaligned"}))
        else:
            out.append(Result(R.Family.MEMORY.value, name, Verdict.PROVED,
                              f"resident {r.tensor} on {r.site} lies inside usable memory, aligned"))
    return out
