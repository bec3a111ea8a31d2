"""The throughput bound of a live program (DESIGN §9): the maximum cycle ratio of its timed marked graph, and the
timed (discrete-event) run of the interpreter it is tested against.

**Work item.** One run of the program, repeated: every engine runs its op list again as soon as it finished it
(the program can run again: balance). The bound is in cycles per run of the target's clock.

**The timed marked graph.** One transition per op occurrence of one run (loops unrolled, trips at the given values,
``If`` guards as the interpreter takes them), firing at its start time ``x``; an edge ``u -> v`` with weight ``w``
(cycles) and ``k`` tokens says ``x_v(n) >= x_u(n - k) + w`` in run ``n``. Edges, each a dependency every timed run
obeys:

- program order: an op starts when the previous op of its engine finished (``w`` = its duration), the last op of the
  run before the first of the next (1 token);
- circular-buffer data: the ``Wait`` that needs page ``q + n`` starts after the ``Push`` that published it finished;
  circular-buffer space: the ``Reserve`` that needs ``popped >= q + n - capacity`` after the ``Pop`` that freed it
  (tokens: how many runs back that pop is);
- asynchronous NoC: a barrier after the landing of every transaction it waits for (issue + transfer cycles);
- semaphore words written by one engine and waited on by one engine that sets the word first in each run: the
  wait that needs the ``j``-th write landed (counting, per run, the landings its waits need after each set) starts
  after that write landed. Words outside this fragment (several writers: a multicast's ready counter, a
  rendezvous) contribute no edge.

Every edge is a true dependency of the timed run, so every cycle ``C`` gives ``x_v(n + k_C) >= x_v(n) + w_C``: no run
of ``N`` items finishes before ``floor((N - 1) / k_C) * w_C`` cycles, and the asymptotic cycles per item are at least
``max_C w_C / k_C``. Leaving a dependency out only lowers the bound; it never makes it beatable. Where all
dependencies are edges (a chain of stages through circular buffers) the earliest timed run meets it.

**Maximum cycle ratio.** Exact, in rationals: start from the largest engine cycle (an engine's busy cycles per run)
and improve: while the graph weighted ``w - lambda * k`` has a positive cycle (networkx's Bellman-Ford negative-cycle
search on ``lambda * k - w``), take that cycle's ratio, strictly larger. A cycle without tokens means the marked
graph is not live (``ThroughputError``).

**Timed run.** The interpreter (``Interp``) with durations: an engine starts its next op when it is free and the op is
enabled; the op's effect happens ``duration`` cycles later (waits and barriers take none); an asynchronous op lands
``transfer`` cycles after it was issued, at each destination (multicast landings still in the interpreter's order).
Latencies come from ``verispatial.ir.target.latencies_of``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import attrs
import networkx as nx

from verispatial.errors import VerispatialError
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    INCREMENTS,
    AcquireAcc,
    AtomicBarrier,
    Compute,
    Flush,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Wait,
    WriteBarrier,
    WriteTiles,
    op_text,
)
from verispatial.ir.program import Program
from verispatial.ir.target import Latencies, latencies_of
from verispatial.petri.interp import Interp
from verispatial.petri.position import iteration_text, path_text

#: Op occurrences of one run above which the bound is refused (the graph is unrolled).
MAX_OCCURRENCES = 20_000


class ThroughputError(VerispatialError):
    """The bound cannot be computed: the program is too large to unroll, not periodic (a buffer pushes and pops
    different page counts per run), or its marked graph is not live. ``what`` says which."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(what)


@attrs.frozen
class Occurrence:
    """Occurrence ``index`` (from 0, in program order) of op ``op`` at ``path`` with loop indices ``iteration`` of
    engine ``engine`` (key) in one run."""

    engine: str
    index: int
    path: tuple[int, ...]
    iteration: tuple[tuple[str, int], ...]
    op: Op

    def text(self) -> str:
        it = iteration_text(self.iteration)
        return f"{self.engine} {path_text(self.path)} {op_text(self.op)}" + (f" {it}" if it else "")


def _hops(a: Site, b: Site) -> int:
    return abs(a.x - b.x) + abs(a.y - b.y)


class Timing:
    """Durations and transfer times (cycles) of the ops of ``program`` under ``lat``."""

    def __init__(self, program: Program, lat: Latencies) -> None:
        self.program = program
        self.lat = lat
        self.tensor_dtype = {t.name: t.dtype for t in program.tensors}

    def _bytes(self, tiles: int, dtype: str) -> int:
        return math.ceil(tiles * self.program.target.bytes_per_tile(dtype) / self.lat.noc_bytes_per_cycle)

    def duration(self, op: Op) -> int:
        """Cycles the engine is busy with ``op`` (its effect happens at the end); 0 for waits and barriers."""
        lat = self.lat
        if isinstance(op, (Push, Pop, SemSet, SemRmw, AcquireAcc, ReleaseAcc)):
            return lat.cb_update
        if isinstance(op, (ReadTiles, WriteTiles, McastSend, McastSetValid, SemInc, SemIncMcast)):
            return lat.issue
        if isinstance(op, Compute):
            return (lat.matmul_tile if op.kind.startswith("matmul") else lat.eltwise_tile) * op.tiles
        if isinstance(op, PackAcc):
            return lat.pack_tile * op.tiles
        return 0

    def transfer(self, op: Op, site: Site, dest: Site | None = None) -> int:
        """Cycles from issuing the asynchronous ``op`` at ``site`` to its landing (at ``dest`` for multicasts and
        increments; a tensor read or write goes ``dram_hops`` hops)."""
        lat = self.lat
        if isinstance(op, ReadTiles):
            return lat.noc_base + lat.dram_hops * lat.noc_hop + self._bytes(op.tiles, self.tensor_dtype[op.tensor])
        if isinstance(op, WriteTiles):
            return lat.noc_base + lat.dram_hops * lat.noc_hop + self._bytes(op.tiles, self.tensor_dtype[op.tensor])
        hops = _hops(site, dest) if dest is not None else 0
        if isinstance(op, McastSend):
            b = self.program.buffers[op.buf]
            return lat.noc_base + hops * lat.noc_hop + self._bytes(op.pages * b.page_tiles, b.dtype)
        if isinstance(op, SemInc):
            return lat.noc_base + _hops(site, op.at) * lat.noc_hop + 1
        if isinstance(op, (McastSetValid, SemIncMcast)):
            return lat.noc_base + hops * lat.noc_hop + 1
        return 0

    def dests(self, op: Op, site: Site) -> list[Site]:
        if isinstance(op, (McastSend, McastSetValid, SemIncMcast)):
            return list(self.program.groups[op.group].destinations())
        if isinstance(op, SemInc):
            return [op.at]
        return [site]

    def landing(self, op: Op, site: Site, pick: Callable[[list[int]], int] = max) -> int:
        """Issue plus transfer cycles of ``op``; over several destinations ``pick`` (max: all landed)."""
        return self.duration(op) + pick([self.transfer(op, site, d) for d in self.dests(op, site)])


def occurrences(program: Program, trips: dict[str, int] | None = None,
                limit: int = MAX_OCCURRENCES) -> dict[str, list[Occurrence]]:
    """Every op occurrence of one run, per engine in program order (the interpreter's own loop and ``If`` walk).
    Raises ``ThroughputError`` beyond ``limit`` occurrences."""
    it = Interp(program, trips)
    s = it.initial()
    out: dict[str, list[Occurrence]] = {}
    total = 0
    for e in range(it.n):
        key = it.keys[e]
        seq: list[Occurrence] = []
        pc = s.pcs[e]
        while pc is not None:
            pos = it.pos(e, pc)
            assert pos.path is not None
            seq.append(Occurrence(key, len(seq), pos.path, pos.iteration, it._ops[e][pos.path]))
            total += 1
            if total > limit:
                raise ThroughputError(f"more than {limit} op occurrences per run: too large to unroll for the bound")
            pc = it.next_pc(e, pc)
        out[key] = seq
    return out


@attrs.frozen
class Edge:
    """``x_dst(n) >= x_src(n - tokens) + weight``; ``why`` names the dependency."""

    src: tuple[str, int]
    dst: tuple[str, int]
    weight: int
    tokens: int
    why: str


def marked_graph(program: Program, trips: dict[str, int] | None = None,
                 lat: Latencies | None = None) -> tuple[dict[str, list[Occurrence]], list[Edge]]:
    """The timed marked graph of one run (module docstring): the occurrences and the edges. Raises
    ``ThroughputError`` for a program that is not periodic or too large."""
    lat = lat or latencies_of(program.target)
    timing = Timing(program, lat)
    occ = occurrences(program, trips)
    site = {ep.key: ep.site for ep in program.programs}
    edges: list[Edge] = []
    for e, seq in occ.items():
        for a, b in itertools.pairwise(seq):
            edges.append(Edge((e, a.index), (e, b.index), timing.duration(a.op), 0, "program order"))
        if seq:
            edges.append(Edge((e, seq[-1].index), (e, 0), timing.duration(seq[-1].op), 1, "next run"))
        _barrier_edges(e, seq, site[e], timing, edges)
    _cb_edges(program, occ, timing, edges)
    _sem_edges(program, occ, site, timing, edges)
    return occ, edges


def _barrier_edges(e: str, seq: list[Occurrence], site: Site, timing: Timing, edges: list[Edge]) -> None:
    reads: list[Occurrence] = []
    writes: list[Occurrence] = []
    unflushed: list[Occurrence] = []
    atomics: list[Occurrence] = []
    for o in seq:
        op = o.op
        if isinstance(op, ReadTiles):
            reads.append(o)
        elif isinstance(op, (WriteTiles, McastSend, McastSetValid)):
            writes.append(o)
            unflushed.append(o)
        elif isinstance(op, (SemInc, SemIncMcast)):
            atomics.append(o)
        elif isinstance(op, ReadBarrier):
            edges += [Edge((e, r.index), (e, o.index), timing.landing(r.op, site), 0, "read lands before the barrier")
                      for r in reads]
            reads = []
        elif isinstance(op, WriteBarrier):
            edges += [Edge((e, w.index), (e, o.index), timing.landing(w.op, site), 0,
                           "write acknowledged before the barrier") for w in writes]
            writes, unflushed = [], []
        elif isinstance(op, Flush):
            # A multicast leaves its source when issued; a unicast write leaves as it lands.
            edges += [Edge((e, w.index), (e, o.index), timing.landing(w.op, site) if isinstance(w.op, WriteTiles)
                           else timing.duration(w.op), 0, "write leaves before the flush") for w in unflushed]
            unflushed = []
        elif isinstance(op, AtomicBarrier):
            edges += [Edge((e, a.index), (e, o.index), timing.landing(a.op, site), 0,
                           "increment acknowledged before the barrier") for a in atomics]
            atomics = []


def _first_reaching(cum: list[tuple[int, Occurrence]], need: int) -> Occurrence | None:
    for total, o in cum:
        if total >= need:
            return o
    return None


def _cb_edges(program: Program, occ: dict[str, list[Occurrence]], timing: Timing, edges: list[Edge]) -> None:
    pushes: dict[int, list[tuple[int, Occurrence]]] = {}
    pops: dict[int, list[tuple[int, Occurrence]]] = {}
    for seq in occ.values():
        for o in seq:
            if isinstance(o.op, Push):
                lst = pushes.setdefault(o.op.buf, [])
                lst.append(((lst[-1][0] if lst else 0) + o.op.pages, o))
            elif isinstance(o.op, Pop):
                lst = pops.setdefault(o.op.buf, [])
                lst.append(((lst[-1][0] if lst else 0) + o.op.pages, o))
    for b in program.buffers:
        pushed = pushes[b.id][-1][0] if b.id in pushes else 0
        popped = pops[b.id][-1][0] if b.id in pops else 0
        if pushed != popped:
            raise ThroughputError(f"not periodic: b{b.id} ({b.name}) pushes {pushed} pages per run and pops {popped}")
    for seq in occ.values():
        n_pushed: dict[int, int] = {}
        n_popped: dict[int, int] = {}
        for o in seq:
            op = o.op
            if isinstance(op, Wait):
                need = n_popped.get(op.buf, 0) + op.pages
                src = _first_reaching(pushes.get(op.buf, []), need)
                if src is not None:
                    edges.append(Edge((src.engine, src.index), (o.engine, o.index), timing.duration(src.op), 0,
                                      f"b{op.buf} data"))
            elif isinstance(op, Reserve):
                cap = program.buffers[op.buf].capacity
                total = pushes[op.buf][-1][0] if op.buf in pushes else 0
                need = n_pushed.get(op.buf, 0) + op.pages - cap
                if total > 0:
                    back = 0
                    while need <= 0 and back <= cap // total + 1:
                        need += total
                        back += 1
                    src = _first_reaching(pops.get(op.buf, []), need) if need > 0 else None
                    if src is not None:
                        edges.append(Edge((src.engine, src.index), (o.engine, o.index), timing.duration(src.op), back,
                                          f"b{op.buf} space"))
            elif isinstance(op, Push):
                n_pushed[op.buf] = n_pushed.get(op.buf, 0) + op.pages
            elif isinstance(op, Pop):
                n_popped[op.buf] = n_popped.get(op.buf, 0) + op.pages


def _sem_edges(program: Program, occ: dict[str, list[Occurrence]], site: dict[str, Site], timing: Timing,
               edges: list[Edge]) -> None:
    dests = {g.id: set(g.destinations()) for g in program.groups}
    words: dict[tuple[int, Site], dict[str, list[Occurrence]]] = {}
    for e, seq in occ.items():
        for o in seq:
            op = o.op
            if isinstance(op, SemInc):
                words.setdefault((op.sem, op.at), {}).setdefault("writes", []).append(o)
            elif isinstance(op, SemRmw):  # an increment of its own site's word, stored when the op ends
                words.setdefault((op.sem, site[e]), {}).setdefault("writes", []).append(o)
            elif isinstance(op, (McastSetValid, SemIncMcast)):
                for d in dests[op.group]:
                    words.setdefault((op.sem, d), {}).setdefault("writes", []).append(o)
            elif isinstance(op, (SemSet, SemWait)):
                words.setdefault((op.sem, site[e]), {}).setdefault("local", []).append(o)
    for (sem, at), parts in words.items():
        writes, local = parts.get("writes", []), parts.get("local", [])
        if not writes or not local or len({o.engine for o in writes}) != 1 or len({o.engine for o in local}) != 1:
            continue
        if not isinstance(local[0].op, SemSet):
            continue
        flags = any(isinstance(o.op, McastSetValid) for o in writes)
        step = max((o.op.by for o in writes if isinstance(o.op, INCREMENTS)), default=1)
        need_so_far, base, value = 0, 0, 0
        found: list[tuple[int, Occurrence]] = []
        for o in local:
            op = o.op
            if isinstance(op, SemSet):
                base, value = need_so_far, (op.value_at(dict(o.iteration)) if op.terms else op.value)
                continue
            assert isinstance(op, SemWait)
            want = op.threshold(dict(o.iteration)) if op.terms else op.value
            met = value == want if op.cond is WaitCond.EQ else value >= want
            more = 0 if met else (1 if flags else max(math.ceil((want - value) / step), 1))
            need = base + more
            need_so_far = max(need_so_far, need)
            if more:
                found.append((need, o))
        if need_so_far != len(writes):
            continue  # the waits of a run do not consume exactly the run's writes: no per-run matching
        src_site = site[writes[0].engine]
        for need, o in found:
            w = writes[need - 1]
            edges.append(Edge((w.engine, w.index), (o.engine, o.index),
                              timing.duration(w.op) + timing.transfer(w.op, src_site, at), 0,
                              f"sem{sem}@{at} write {need} lands"))


@attrs.frozen
class Bound:
    """The throughput bound: ``cycles`` per work item (one run), the critical cycle's occurrences with the edge
    leaving each (its ``why``, weight and tokens), its weight and tokens; the graph's size; the latencies used."""

    program: str
    cycles: Fraction
    critical: tuple[tuple[Occurrence, Edge], ...]
    weight: int
    tokens: int
    transitions: int
    places: int
    latencies: Latencies
    trips: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program, "cycles_per_item": float(self.cycles),
                "cycles_per_item_exact": f"{self.cycles.numerator}/{self.cycles.denominator}",
                "critical_cycle": [{"op": o.text(), "then": e.why, "cycles": e.weight, "tokens": e.tokens}
                                   for o, e in self.critical],
                "cycle_weight": self.weight, "cycle_tokens": self.tokens, "transitions": self.transitions,
                "places": self.places, "trips": dict(self.trips),
                "latencies": {f.name: getattr(self.latencies, f.name) for f in attrs.fields(Latencies)
                              if f.name != "sources"},
                "sources": dict(self.latencies.sources)}


def _negative_cycle(n_nodes: int, arcs: list[tuple[int, int, int]]) -> list[int] | None:
    """Bellman-Ford from a virtual source joined to every node: the arc indices of a cycle of negative total cost,
    in order, or None when there is none. ``arcs``: (tail, head, integer cost)."""
    dist = [0] * n_nodes
    pred = [-1] * n_nodes
    last = -1
    for _ in range(n_nodes + 1):
        last = -1
        for i, (u, v, c) in enumerate(arcs):
            if dist[u] + c < dist[v]:
                dist[v] = dist[u] + c
                pred[v] = i
                last = v
        if last < 0:
            return None
    # Relaxed in round n + 1: walking predecessors n times lands on the cycle.
    x = last
    for _ in range(n_nodes):
        x = arcs[pred[x]][0]
    cycle: list[int] = []
    y = x
    while True:
        i = pred[y]
        cycle.append(i)
        y = arcs[i][0]
        if y == x:
            break
    cycle.reverse()
    return cycle


def max_cycle_ratio(edges: list[Edge]) -> tuple[Fraction, list[Edge]]:
    """The maximum over cycles of (sum of weights) / (sum of tokens) and a cycle attaining it (module docstring).
    Raises ``ThroughputError`` when a cycle has no token (the marked graph is not live).

    (networkx's ``find_negative_cycle`` answers "Negative cycle is detected but not found" on these multigraphs, so
    the negative-cycle search is a plain Bellman-Ford on integer costs ``p * tokens - q * weight`` for the ratio
    ``p / q``: exact, no rounding.)"""
    zero: nx.DiGraph = nx.DiGraph()
    zero.add_edges_from((ed.src, ed.dst) for ed in edges if ed.tokens == 0)
    try:
        cyc = nx.find_cycle(zero)
    except nx.NetworkXNoCycle:
        cyc = []
    if cyc:
        raise ThroughputError("not live: a cycle of dependencies without tokens: "
                              + " -> ".join(f"{u[0]}#{u[1]}" for u, _v in cyc))
    # Start: the busiest engine's own cycle (program order and its next-run edge).
    best: list[Edge] = []
    ratio = Fraction(-1)
    per_engine: dict[str, list[Edge]] = {}
    for ed in edges:
        if ed.why in ("program order", "next run"):
            per_engine.setdefault(ed.src[0], []).append(ed)
    for cyc_edges in per_engine.values():
        r = Fraction(sum(ed.weight for ed in cyc_edges), max(sum(ed.tokens for ed in cyc_edges), 1))
        if r > ratio:
            ratio, best = r, cyc_edges
    ids: dict[tuple[str, int], int] = {}
    for ed in edges:
        ids.setdefault(ed.src, len(ids))
        ids.setdefault(ed.dst, len(ids))
    while True:
        p, q = ratio.numerator, ratio.denominator
        arcs = [(ids[ed.src], ids[ed.dst], p * ed.tokens - q * ed.weight) for ed in edges]
        found = _negative_cycle(len(ids), arcs)
        if found is None:
            return ratio, best
        cyc_edges = [edges[i] for i in found]
        tokens = sum(ed.tokens for ed in cyc_edges)
        r = Fraction(sum(ed.weight for ed in cyc_edges), tokens)
        if r <= ratio:  # pragma: no cover - a negative cycle has a larger ratio by construction
            return ratio, best
        ratio, best = r, cyc_edges


def throughput_bound(program: Program, trips: dict[str, int] | None = None, lat: Latencies | None = None) -> Bound:
    """Cycles per work item and the critical cycle of ``program`` (module docstring). Raises ``ThroughputError``."""
    lat = lat or latencies_of(program.target)
    occ, edges = marked_graph(program, trips, lat)
    ratio, cyc = max_cycle_ratio(edges)
    at = {(o.engine, o.index): o for seq in occ.values() for o in seq}
    it = Interp(program, trips)
    return Bound(program.name, ratio, tuple((at[ed.src], ed) for ed in cyc), sum(ed.weight for ed in cyc),
                 sum(ed.tokens for ed in cyc), len(at), len(edges), lat, dict(it.trips))


# --------------------------------------------------------------------------------------------- the timed run


ITEM_VAR = "item__"


def repeated(program: Program, items: int) -> Program:
    """``program`` with every engine's op list run ``items`` times (a loop ``item__`` around it): the work items of
    the bound one after another. Only for programs of one section (the loop would span section starts)."""
    if len(program.sections) > 1:
        raise ThroughputError("the timed run repeats programs of one section only")
    return attrs.evolve(program, programs=tuple(
        attrs.evolve(ep, ops=(Loop(ITEM_VAR, items, ep.ops),) if ep.ops else ()) for ep in program.programs))


@attrs.frozen
class TimedRun:
    """A timed run: the cycle at which the last engine finished its last item (``makespan``), and per item the cycle
    at which every engine had finished it (``item_ends``)."""

    makespan: int
    item_ends: tuple[int, ...]


def timed_run(program: Program, items: int, trips: dict[str, int] | None = None,
              lat: Latencies | None = None) -> TimedRun:
    """Run ``items`` work items of ``program`` in the interpreter with durations and transfer times (module
    docstring), every engine as early as it can. Raises ``ThroughputError`` if the run deadlocks."""
    lat = lat or latencies_of(program.target)
    timing = Timing(program, lat)
    it = Interp(repeated(program, items), trips)
    s, _ = it.start()
    n = it.n
    now = 0
    busy: list[int | None] = [None] * n  # the cycle the op in progress takes effect
    due: dict[tuple[Any, ...], tuple[int, dict[int, int]]] = {}  # in-flight entry -> (leave cycle, land cycle by dest)
    ends: dict[int, int] = {}

    def key(e: int, en: tuple[Any, ...]) -> tuple[Any, ...]:
        return (e, en[0], en[1], en[2], en[3] if en[0] == 0 else None)

    def dest_site(en: tuple[Any, ...], d: int) -> Site:
        return program.buffers[d].site if en[0] == 3 else it.word_site[d]

    def execute(e: int) -> None:
        nonlocal s
        pc = s.pcs[e]
        assert pc is not None
        op = it._ops[e][pc[0]]
        item = pc[1][0]
        s, _ = it.step(s, _step(e))
        site = it.engines[e].site
        for en in s.pending[e]:
            k = key(e, en)
            if k in due:
                continue
            if en[0] == 0:  # an increment lands on its word
                lands = {-1: now + timing.transfer(op, site, it.word_site[en[3]])}
            elif en[0] in (3, 4):  # a multicast: every destination
                lands = {d: now + timing.transfer(op, site, dest_site(en, d)) for d in en[7]}
            else:
                lands = {-1: now + timing.transfer(op, site)}
            due[k] = (now, lands)
        if s.pcs[e] is None or s.pcs[e][1][0] != item:  # type: ignore[index]
            ends[item] = max(ends.get(item, 0), now)

    while True:
        moved = True
        while moved:
            moved = False
            for t in it.landings(s):
                en = s.pending[t.engine][t.slot]
                leave, lands = due[key(t.engine, en)]
                when = leave if t.kind == "leave" else lands[t.dest if t.dest in lands else -1]
                if when <= now:
                    s, _ = it.step(s, t)
                    moved = True
                    break
            if moved:
                continue
            for e in range(n):
                if busy[e] is not None:
                    if busy[e] == now:
                        busy[e] = None
                        execute(e)
                        moved = True
                    continue
                pc = s.pcs[e]
                if pc is None or not it.can_step(s, e):
                    continue
                d = timing.duration(it._ops[e][pc[0]])
                if d == 0:
                    execute(e)
                else:
                    busy[e] = now + d
                moved = True
        if it.all_finished(s) and not it.in_flight(s):
            break
        later = [b for b in busy if b is not None and b > now]
        for e, en_list in enumerate(s.pending):
            for en in en_list:
                leave, lands = due[key(e, en)]
                later += [x for x in (leave, *lands.values()) if x > now]
        if not later:
            raise ThroughputError(f"the timed run deadlocks at cycle {now}")
        now = min(later)
    return TimedRun(now, tuple(ends[i] for i in sorted(ends)))


def _step(e: int) -> Any:
    from verispatial.petri.interp import Transition

    return Transition("step", e)
