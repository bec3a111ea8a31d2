"""The behavioural place/transition net of a program (DESIGN §5, §9), shared by the PNML and DOT exporters.

The net plays the token game of DESIGN §5 as far as it decides whether an engine can move, so its dead markings
other than the final one are the program's deadlocks (``tests/test_net_exports.py`` checks this against the
explicit-state explorer). Every (site, engine) is a sequence of **program-counter places**, one per control point of
its unrolled op list, one token per engine; each op occurrence is one transition from its control point to the
next. What the transitions touch besides:

- **Loops** are unrolled: a constant loop into its iterations, a trip loop into one branch per trip value (each
  branch runs its own number of iterations, then all meet after the loop). A **trip** is a choice: the place
  ``trip t`` holds one token and transition ``t := v`` (one per ``v`` in ``[0, max]``) moves it to ``t = v``; a
  loop counted by ``t`` reads that place (a read arc). ``If`` guards are decided while unrolling. A net larger than
  ``MAX_TRANSITIONS`` is refused (``NetUnsupported``).
- **Circular buffers**: ``b data`` (pages pushed and not popped) and its complement ``b free``, marked with the
  capacity. Reserve(n) reads ``n`` free pages, Push(n) moves ``n`` from free to data, Wait(n) reads ``n`` data
  pages, Pop(n) moves them back. The interpreter lets a push the producer never reserved overfill the ring and an
  unwaited pop empty it past zero (and reports it): a buffer some push or pop of which is not covered so (per
  engine, along every unrolled path) gets ``headroom`` — both places carry that many extra tokens and every read
  arc that many more — so those runs stay in the net too.
- **Semaphore words**: ``sem@site`` holds the value and its complement holds ``bound - value``, where ``bound``
  is the most the word can reach (initial values, set values and every increment that can land on it). A ``ge v``
  wait reads ``v`` from the word, an ``eq v`` wait also ``bound - v`` from the complement (so it fires on exactly
  ``v``). A SemSet is one transition per value the word may hold (each reads that value exactly and writes the
  new one: a value affine in loop indices is that occurrence's, the net being unrolled; the bound takes each
  term at the end of its index range). A ``SemRmw`` (the non-atomic read-modify-write of the own word) is its
  engine's two steps: a load per value the word may hold, into a control point ``loaded v`` holding the engine, and
  a store per value the word holds then, writing ``v + by`` (a write landing between them is lost, as on the
  hardware).
- **Asynchronous NoC ops** issue into an **in-flight place** of their occurrence and land by a transition of
  their own (an increment lands its ``by`` on the word; a multicast first leaves its source, then lands at every
  destination; ``McastSetValid`` reads the source word when it leaves and writes the value at each destination).
  Per engine a complement place counts the operations not in flight (reads, writes, multicast landings, multicasts
  not yet left, atomics); a barrier reads it full: ReadBarrier for reads, WriteBarrier for writes and multicast
  landings, Flush for writes and multicasts not left, AtomicBarrier for atomics.
- **Multicast order**: the multicasts of one engine on one virtual channel land at a site in the order they left it,
  and leave in issue order on a target with ordered writes. Multicasts of one engine to one destination set on one
  channel that may be in flight together go through a **ticket queue** (counters of those issued, left and landed
  at each site, with complements): a multicast takes ticket ``k`` as it leaves (on an ordered target, only when
  ``k`` is its issue ticket) and lands at a site when ``k`` have landed there. Between different destination sets
  or channels a data multicast is not ordered (its landing changes no blocking counter, so every order reaches the
  same dead markings).

What decides no blocking (data tiles, tensors, accumulators, windows) is not in the net: every rule the
interpreter reports is the checker's, not the net's. A construct the net cannot express is refused by name
(``NetUnsupported``): two ``McastSetValid`` of one engine in flight at once to different destination sets (or on two
channels) that share a site, or to any two sets on one channel on a target that keeps writes in issue order; a
negative semaphore value; a multicast whose ``num_dests`` is not its group's (``ir/acks.py``: the net's barriers do
not count acknowledgements); a one-word remote write (``InlineWrite``) into a word the program reads (one into a
mailbox word nothing reads is a write in flight until it lands, as a tensor write). Where a multicast lands
(``dst``, ``offset``) decides no blocking: the net lands it as any multicast; a remote read (``RemoteRead``) is a
read in flight until its read barrier.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from verispatial.errors import VerispatialError
from verispatial.ir import acks
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
    Compute,
    CopyTiles,
    FillTiles,
    Flush,
    If,
    InlineWrite,
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
    RemoteRead,
    Reserve,
    ScratchAccess,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
    count_trip,
    count_value,
    op_text,
)
from verispatial.ir.program import LandingOrder, Program, landing_order
from verispatial.ir.sharing import sees_own_pops_only, sharing_waiters

__all__ = ["MAX_TRANSITIONS", "Arc", "Net", "NetPlace", "NetTransition", "NetUnsupported", "net_of"]

#: The most transitions a net is built with: unrolling multiplies a program's ops by its loop counts (and a trip
#: loop by its values), so past this the net is refused rather than written.
MAX_TRANSITIONS = 20_000


class NetUnsupported(VerispatialError):
    """The program uses a construct the P/T net does not express, or unrolls past ``MAX_TRANSITIONS`` (the message
    says which); raised instead of writing a net whose deadlocks would not be the program's."""


@attrs.frozen
class NetPlace:
    """A place: ``id`` (XML-safe), ``name``, ``marking`` (initial tokens) and ``kind``: ``pc`` (a control point of
    ``engine`` before the op at ``path``, loop indices ``iters``; ``path`` None: the end), ``data``/``free`` (a
    buffer), ``word``/``word-complement``, ``trip``/``trip-value``, ``in-flight`` or ``idle`` (an engine's
    operations not in flight)."""

    id: str
    name: str
    kind: str
    marking: int
    engine: str = ""
    path: tuple[int, ...] | None = None
    iters: tuple[int, ...] = ()


@attrs.frozen
class NetTransition:
    """A transition: ``kind`` ``step`` (``engine`` runs the op at ``path`` in iteration ``iters``), ``branch`` (a
    trip loop's entry for one value), ``land``/``leave`` (an in-flight op of ``engine``) or ``choose`` (a trip's
    value); ``pc_in``/``pc_out`` are the control points it moves between (a step or branch only)."""

    id: str
    label: str
    kind: str
    engine: str = ""
    path: tuple[int, ...] = ()
    iters: tuple[int, ...] = ()
    pc_in: str = ""
    pc_out: str = ""


@attrs.frozen
class Arc:
    """An arc from ``source`` to ``target`` (a place and a transition id, either way) with ``weight`` tokens. A read
    arc is a pair of arcs of one weight, into the transition and back."""

    id: str
    source: str
    target: str
    weight: int


@attrs.frozen
class Net:
    """A P/T net: places, transitions and arcs (``pre``/``post`` weights as arcs), named after the program. The
    engines' program-counter places come in program order, engine by engine."""

    name: str
    places: tuple[NetPlace, ...]
    transitions: tuple[NetTransition, ...]
    arcs: tuple[Arc, ...]

    def pre(self) -> dict[str, dict[str, int]]:
        """Per transition id: the tokens it takes from each place (its input arcs' weights)."""
        out: dict[str, dict[str, int]] = {t.id: {} for t in self.transitions}
        for a in self.arcs:
            if a.target in out:
                out[a.target][a.source] = a.weight
        return out

    def post(self) -> dict[str, dict[str, int]]:
        """Per transition id: the tokens it puts into each place (its output arcs' weights)."""
        out: dict[str, dict[str, int]] = {t.id: {} for t in self.transitions}
        for a in self.arcs:
            if a.source in out:
                out[a.source][a.target] = a.weight
        return out


@attrs.define
class _T:
    label: str
    kind: str
    engine: str = ""
    path: tuple[int, ...] = ()
    iters: tuple[int, ...] = ()
    pre: dict[int, int] = attrs.Factory(dict)
    post: dict[int, int] = attrs.Factory(dict)
    pc_in: int = -1
    pc_out: int = -1


@attrs.define
class _P:
    name: str
    kind: str
    marking: int
    engine: str = ""
    path: tuple[int, ...] | None = None
    iters: tuple[int, ...] = ()


#: Per buffer, along one engine's unrolled path: (reserved pages not yet pushed, waited pages not yet popped) — the
#: interpreter's ``rsv_end - pushed`` and ``wait_end - popped``, to see whether every push and pop is covered.
_Windows = dict[int, tuple[int, int]]

#: The multicasts of one engine that may be in flight (issued, no WriteBarrier since) along a path: their op paths,
#: destination sites, whether each is a flag write (``McastSetValid``) and its landing order.
_Valids = tuple[tuple[tuple[int, ...], frozenset[Site], bool, LandingOrder], ...]
#: A ticket queue's key: the engine, the destination set and the landing order (virtual channel and rectangle,
#: ``ir.program.landing_order``) of its multicasts (``_Queue``).
_QueueKey = tuple[int, frozenset[Site], LandingOrder]

#: The complement places of an engine's in-flight operations: reads, writes, multicast landings, multicasts not
#: yet left, atomics.
_IDLE = ("reads", "writes", "mcast-landings", "mcasts-unleft", "atomics")


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s).strip("_")


class _NeedsQueue(Exception):
    """Raised while building: multicasts of engine ``e`` to ``sites`` of landing order ``order`` (virtual channel and
    rectangle) may be in flight together, so the net is built again with a ticket queue for them."""

    def __init__(self, e: int, sites: frozenset[Site], order: LandingOrder) -> None:
        super().__init__(e, sites, order)
        self.e = e
        self.sites = sites
        self.order = order


@attrs.define
class _Queue:
    """The ticket queue of one engine's multicasts to one destination set: ``issued`` and ``left`` count the
    multicasts issued and left, ``landed[d]`` those landed at site ``d``; each with a complement, all bounded by
    ``size`` (the multicasts to that set the engine can issue). A write takes ticket ``k`` = ``left`` when it leaves (on a target with
    ordered writes it may leave only when ``left`` equals its issue ticket) and lands at ``d`` only when
    ``landed[d]`` = ``k``."""

    size: int
    issued: tuple[int, int]
    left: tuple[int, int]
    landed: dict[Site, tuple[int, int]]


@attrs.define
class _Occurrence:
    """One occurrence of a leaf op being unrolled (``_Builder._leaf``): the op, its path and loop indices, ``env``
    (var -> (index, count)), the control points before (``cur``) and after it (``nxt``), its label, and the coverage
    windows and multicasts in flight along the path, which its case updates."""

    op: Op
    path: tuple[int, ...]
    iters: tuple[int, ...]
    env: dict[str, tuple[int, int]]
    cur: int
    nxt: int
    text: str
    win: _Windows
    valid: _Valids


class _Builder:
    def __init__(self, program: Program, queued: frozenset[_QueueKey] = frozenset()) -> None:
        self.p = program
        self.queued = queued
        self.queues: dict[_QueueKey, _Queue] = {}
        self.places: list[_P] = []
        self.trans: list[_T] = []
        self.trip_max = {t.name: t.max for t in program.trips}
        self.trip_value: dict[tuple[str, int], int] = {}
        self.trip_place: dict[str, int] = {}
        self.word: dict[tuple[int, Site], tuple[int, int]] = {}
        self.bound = self._bounds()
        self.mailboxes = program.inline_only_words()
        for sem in program.semaphores:
            for site in sem.sites:
                b = self.bound[(sem.id, site)]
                w = self._place(f"sem{sem.id} {sem.name}@{site}", "word", sem.init)
                c = self._place(f"sem{sem.id} {sem.name}@{site} complement", "word-complement", b - sem.init)
                self.word[(sem.id, site)] = (w, c)
        self.data: list[int] = []
        self.free: list[int] = []
        for buf in program.buffers:
            self.data.append(self._place(f"b{buf.id} {buf.name} data", "data", 0))
            self.free.append(self._place(f"b{buf.id} {buf.name} free", "free", buf.capacity))
        # A compute engine sharing a buffer's front without popping it compares ``received`` with its own acked
        # count, which stays 0 (ir/sharing.py, ``llk_wait_tiles``): its waits read the pages ever pushed, a place
        # of their own that pushes fill and nothing empties. A data-movement sharing waiter reads the shared acked
        # word, so its waits read ``b data`` like the consumer's.
        by_key = {ep.key: ep.engine for ep in program.programs}
        self.own_waiters: dict[int, frozenset[str]] = {}
        for b, keys in sharing_waiters(program).items():
            own = frozenset(k for k in keys if sees_own_pops_only(by_key[k]))
            if own:
                self.own_waiters[b] = own
        self.pushed: dict[int, int] = {
            b: self._place(f"b{b} {program.buffers[b].name} pushed", "pushed", 0) for b in sorted(self.own_waiters)}
        #: per buffer: (transition, place) of every read arc that headroom raises; pages a push or pop may exceed
        self.window_arcs: list[list[tuple[int, int]]] = [[] for _ in program.buffers]
        self.uncovered: list[bool] = [False] * len(program.buffers)
        self.pages_moved: list[int] = [0] * len(program.buffers)
        self.barrier_reads: list[tuple[int, int]] = []  # (transition, idle place) read full

    # ------------------------------------------------------------------ places, arcs

    def _place(self, name: str, kind: str, marking: int, engine: str = "", path: tuple[int, ...] | None = None,
               iters: tuple[int, ...] = ()) -> int:
        self.places.append(_P(name, kind, marking, engine, path, iters))
        return len(self.places) - 1

    def _trans(self, t: _T) -> int:
        if len(self.trans) >= MAX_TRANSITIONS:
            raise NetUnsupported(f"the unrolled net has more than {MAX_TRANSITIONS} transitions (at {t.label}): "
                                 f"loops are unrolled, so their counts multiply the ops")
        self.trans.append(t)
        return len(self.trans) - 1

    @staticmethod
    def _take(t: _T, place: int, w: int) -> None:
        if w > 0:
            t.pre[place] = t.pre.get(place, 0) + w

    @staticmethod
    def _give(t: _T, place: int, w: int) -> None:
        if w > 0:
            t.post[place] = t.post.get(place, 0) + w

    def _read(self, t: _T, place: int, w: int) -> None:
        self._take(t, place, w)
        self._give(t, place, w)

    # ------------------------------------------------------------------ bounds

    def _occurrences(self, ops: tuple[Op, ...], mult: int) -> Iterator[tuple[Op, int]]:
        """Every leaf op with how many times it can run at most (trips at their max, guards ignored)."""
        for op, n, _tops in self._ranged(ops, mult, {}):
            yield op, n

    def _ranged(self, ops: tuple[Op, ...], mult: int, tops: dict[str, int]) -> Iterator[tuple[Op, int, dict[str, int]]]:
        """``_occurrences`` with the largest index each enclosing loop variable can take (trips at their max)."""
        for op in ops:
            if isinstance(op, Loop):
                n = count_value(op.count, self.trip_max)
                yield from self._ranged(op.body, mult * n, {**tops, op.var: max(0, n - 1)})
            elif isinstance(op, If):
                yield from self._ranged(op.body, mult, tops)
            else:
                yield op, mult, tops

    def _bounds(self) -> dict[tuple[int, Site], int]:
        """The most each semaphore word can hold: the largest of its initial value, the values set into it and the
        bounds of the words an ``McastSetValid`` copies into it, plus every increment that can land on it (a least
        fixed point; when copies and increments go round a cycle, every word gets the sum of the largest base and all
        increments: a value is a base plus increments each counted once along its chain of copies)."""
        p = self.p
        base: dict[tuple[int, Site], int] = {}
        incs: dict[tuple[int, Site], int] = {}
        copies: list[tuple[tuple[int, Site], tuple[int, Site]]] = []  # (source word, destination word)
        for sem in p.semaphores:
            if sem.init < 0:
                raise NetUnsupported(f"sem{sem.id} ({sem.name}) starts at {sem.init}: a place holds no negative count")
            for site in sem.sites:
                base[(sem.id, site)] = sem.init
                incs[(sem.id, site)] = 0
        for ep in p.programs:
            for op, n, tops in self._ranged(ep.ops, 1, {}):
                if isinstance(op, SemSet):
                    # A value affine in loop indices is largest (smallest) at each term's end of its index range.
                    lo = op.value + sum(min(0, t.coef * tops.get(t.var, 0)) for t in op.terms)
                    hi = op.value + sum(max(0, t.coef * tops.get(t.var, 0)) for t in op.terms)
                    if lo < 0:
                        raise NetUnsupported(f"{ep.key}: {op_text(op)} sets a negative value")
                    k = (op.sem, ep.site)
                    base[k] = max(base[k], hi)
                elif isinstance(op, SemInc):
                    incs[(op.sem, op.at)] += n * op.by
                elif isinstance(op, SemRmw):
                    incs[(op.sem, ep.site)] += n * op.by
                elif isinstance(op, SemIncMcast):
                    for d in p.groups[op.group].destinations():
                        incs[(op.sem, d)] += n * op.by
                elif isinstance(op, McastSetValid):
                    copies += [((op.source, ep.site), (op.sem, d)) for d in p.groups[op.group].destinations()]
        bound = {k: base[k] + incs[k] for k in base}
        # Each round lengthens the copy chains followed by one; with no cycle, one round per word is enough.
        for _round in range(len(bound) + 1):
            changed = False
            for src, dst in copies:
                if bound[src] + incs[dst] > bound[dst]:
                    bound[dst] = bound[src] + incs[dst]
                    changed = True
            if not changed:
                return bound
        top = max(base.values(), default=0) + sum(incs.values())
        return dict.fromkeys(base, top)

    # ------------------------------------------------------------------ engines

    def trip(self, name: str, v: int) -> int:
        """The place ``name = v``, with the trip's choice transitions made on first use."""
        if name not in self.trip_place:
            undecided = self._place(f"trip {name}", "trip", 1)
            self.trip_place[name] = undecided
            for value in range(self.trip_max[name] + 1):
                pl = self._place(f"trip {name} = {value}", "trip-value", 0)
                self.trip_value[(name, value)] = pl
                t = _T(f"{name} := {value}", "choose")
                self._take(t, undecided, 1)
                self._give(t, pl, 1)
                self._trans(t)
        return self.trip_value[(name, v)]

    def engine(self, e: int) -> None:
        ep = self.p.programs[e]
        self.e, self.key = e, ep.key
        self.site = ep.site
        self.idle = {k: self._place(f"{ep.key} {k} not in flight", "idle", 0, ep.key) for k in _IDLE}
        # The engine's token starts at its first control point; what ``_body`` returns is its end.
        start = self._pc((0,), ())
        self.places[start].marking = 1
        end, _w, _v = self._body(ep.ops, (), (), {}, start, {}, ())
        self.places[end].path = None
        self.places[end].name = f"{ep.key} end"

    def _pc(self, path: tuple[int, ...], iters: tuple[int, ...]) -> int:
        """A new control point of this engine (named after the op it comes before once that op is known)."""
        return self._place(f"{self.key} @{list(path)}{list(iters) if iters else ''}", "pc", 0, self.key, path, iters)

    def _body(self, ops: tuple[Op, ...], prefix: tuple[int, ...], iters: tuple[int, ...],
              env: dict[str, tuple[int, int]], cur: int, win: _Windows,
              valid: _Valids) -> tuple[int, _Windows, _Valids]:
        """Unroll ``ops`` (at ``prefix``, loop indices ``iters``, ``env``: var -> (index, count)) from control point
        ``cur``: the control point after them, the coverage windows and the McastSetValid in flight (its path)."""
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if isinstance(op, If):
                idx, count = env[op.var]
                if op.when.holds(idx, count):
                    cur, win, valid = self._body(op.body, path, (*iters, 0), env, cur, win, valid)
            elif isinstance(op, Loop):
                cur, win, valid = self._loop(op, path, iters, env, cur, win, valid)
            else:
                cur, win, valid = self._leaf(op, path, iters, env, cur, win, valid)
        return cur, win, valid

    def _loop(self, op: Loop, path: tuple[int, ...], iters: tuple[int, ...], env: dict[str, tuple[int, int]],
              cur: int, win: _Windows, valid: _Valids) -> tuple[int, _Windows, _Valids]:
        trip = count_trip(op.count)
        if trip is None:
            n = count_value(op.count, {})
            for k in range(n):
                cur, win, valid = self._body(op.body, path, (*iters, k), {**env, op.var: (k, n)}, cur, win, valid)
            return cur, win, valid
        # One branch per trip value, each from its own entry transition (which reads ``trip = v``), all meeting at
        # one control point after the loop; the coverage windows of the branches meet at their minimum.
        after = self._place("", "pc", 0, self.key, path, iters)
        outs: list[_Windows] = []
        valids: list[_Valids] = []
        ends: list[int] = []
        for v in range(self.trip_max[trip] + 1):
            n = count_value(op.count, {trip: v})
            c = op.count
            label = f"{self.key} {op_text(op)} with {trip} = {v}" + (
                f" ({n} iterations)" if isinstance(c, TripCount) else "")
            t = _T(label, "branch", self.key, path, iters, pc_in=cur)
            self._take(t, cur, 1)
            self._read(t, self.trip(trip, v), 1)
            entry = after if n == 0 else self._place("", "pc", 0, self.key, path, iters)
            self._give(t, entry, 1)
            t.pc_out = entry
            self._trans(t)
            b_cur, b_win, b_valid = entry, dict(win), valid
            for k in range(n):
                b_cur, b_win, b_valid = self._body(op.body, path, (*iters, k), {**env, op.var: (k, n)}, b_cur, b_win,
                                                   b_valid)
            ends.append(b_cur)
            outs.append(b_win)
            valids.append(b_valid)
        # Each branch's last control point is the one after the loop.
        for b_end in ends:
            if b_end != after:
                self._merge(b_end, after)
        merged = {b: (min(w.get(b, (0, 0))[0] for w in outs), min(w.get(b, (0, 0))[1] for w in outs))
                  for b in set().union(*outs)}
        # Every flag write some branch leaves in flight may be in flight after the loop.
        return after, merged, tuple(dict.fromkeys(v for vs in valids for v in vs))

    def _merge(self, old: int, new: int) -> None:
        """Make control point ``old`` (made by one branch) the control point ``new`` in every arc."""
        for t in self.trans:
            for d in (t.pre, t.post):
                if old in d:
                    d[new] = d.pop(old)
            if t.pc_in == old:
                t.pc_in = new
            if t.pc_out == old:
                t.pc_out = new
        self.places[old].kind = "merged"

    def _leaf(self, op: Op, path: tuple[int, ...], iters: tuple[int, ...], env: dict[str, tuple[int, int]],
              cur: int, win: _Windows, valid: _Valids) -> tuple[int, _Windows, _Valids]:
        """The transitions of one occurrence of a leaf op, from control point ``cur`` to a new one after it (its
        op class's case in ``_LEAVES``; ``NetUnsupported`` for an op class with none)."""
        key = self.key
        case = _LEAVES.get(type(op))
        if case is None:
            raise NetUnsupported(f"{key}: no net encoding for {type(op).__name__}")
        nxt = self._pc(path, iters)
        # The control point names the op it is before; the one after this op names the next op once it is known.
        self.places[cur].path = path
        self.places[cur].iters = iters
        self.places[cur].name = f"{key} @{list(path)}{list(iters) if iters else ''} {op_text(op)}"
        text = f"{key} {op_text(op)}" + (f" @{list(iters)}" if iters else "")
        o = _Occurrence(op, path, iters, env, cur, nxt, text, dict(win), valid)
        case(self, o)
        return nxt, o.win, o.valid

    def _step(self, o: _Occurrence) -> _T:
        """The transition of the occurrence's step, from its control point to the next."""
        t = _T(o.text, "step", self.key, o.path, o.iters, pc_in=o.cur, pc_out=o.nxt)
        self._take(t, o.cur, 1)
        self._give(t, o.nxt, 1)
        return t

    def _barrier(self, o: _Occurrence, *kinds: str) -> None:
        """A barrier's step: it reads the engine's idle places of ``kinds`` full (nothing of those kinds in flight)."""
        t = self._step(o)
        for k in kinds:
            self.barrier_reads.append((len(self.trans), self.idle[k]))
        self._trans(t)

    # ---------------------------------------------------------------- the cases of _LEAVES

    def _reserve(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, Reserve)
        t = self._step(o)
        self._read(t, self.free[op.buf], op.pages)
        self.window_arcs[op.buf].append((len(self.trans), self.free[op.buf]))
        self._trans(t)
        r, w = o.win.get(op.buf, (0, 0))
        o.win[op.buf] = (max(r, op.pages), w)

    def _push(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, Push)
        t = self._step(o)
        self._take(t, self.free[op.buf], op.pages)
        self._give(t, self.data[op.buf], op.pages)
        if op.buf in self.pushed:
            self._give(t, self.pushed[op.buf], op.pages)
        self._trans(t)
        r, w = o.win.get(op.buf, (0, 0))
        self.uncovered[op.buf] |= op.pages > r
        o.win[op.buf] = (max(0, r - op.pages), w)

    def _wait(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, Wait)
        t = self._step(o)
        if self.key in self.own_waiters.get(op.buf, frozenset()):
            self._read(t, self.pushed[op.buf], op.pages)
        else:
            self._read(t, self.data[op.buf], op.pages)
            self.window_arcs[op.buf].append((len(self.trans), self.data[op.buf]))
        self._trans(t)
        r, w = o.win.get(op.buf, (0, 0))
        o.win[op.buf] = (r, max(w, op.pages))

    def _pop(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, Pop)
        t = self._step(o)
        self._take(t, self.data[op.buf], op.pages)
        self._give(t, self.free[op.buf], op.pages)
        self._trans(t)
        r, w = o.win.get(op.buf, (0, 0))
        self.uncovered[op.buf] |= op.pages > w
        o.win[op.buf] = (r, max(0, w - op.pages))

    def _sem_wait(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, SemWait)
        t = self._step(o)
        word, comp = self.word[(op.sem, self.site)]
        v = op.threshold({var: idx for var, (idx, _n) in o.env.items()}) if op.terms else op.value
        bound = self.bound[(op.sem, self.site)]
        if v > bound or (v < 0 and op.cond is WaitCond.EQ):
            # Never reached: read one token more than the word can hold, so the transition never fires.
            self._read(t, word, bound + 1)
        else:
            self._read(t, word, v)
            if op.cond is WaitCond.EQ:
                self._read(t, comp, bound - v)
        self._trans(t)

    def _sem_set(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, SemSet)
        word, comp = self.word[(op.sem, self.site)]
        bound = self.bound[(op.sem, self.site)]
        # The net is unrolled: each occurrence stores the value of its own loop indices.
        value = op.value_at({var: idx for var, (idx, _n) in o.env.items()}) if op.terms else op.value
        for old in range(bound + 1):
            t = self._step(o)
            t.label = f"{o.text} from {old}"
            self._take(t, word, old)
            self._take(t, comp, bound - old)
            self._give(t, word, value)
            self._give(t, comp, bound - value)
            self._trans(t)

    def _sem_inc(self, o: _Occurrence) -> None:
        op = o.op
        assert isinstance(op, (SemInc, SemIncMcast))
        dests = [op.at] if isinstance(op, SemInc) else list(self.p.groups[op.group].destinations())
        t = self._step(o)
        self._issue(t, "atomics", len(dests))
        flights = []
        for d in dests:
            f = self._inflight(f"{o.text} {f'to {d} in flight' if len(dests) > 1 else 'in flight'}", o.path, o.iters)
            self._give(t, f, 1)
            flights.append((d, f))
        self._trans(t)
        for d, f in flights:
            word, comp = self.word[(op.sem, d)]
            lt = _T(f"{o.text} lands at {d}", "land", self.key, o.path, o.iters)
            self._take(lt, f, 1)
            self._take(lt, comp, op.by)
            self._give(lt, word, op.by)
            self._give(lt, self.idle["atomics"], 1)
            self._trans(lt)

    def _sem_rmw(self, o: _Occurrence) -> None:
        """A non-atomic read-modify-write (docs/semantics.md "Non-atomic read-modify-write") is its engine's two
        steps: a load, one transition per value ``old`` the word may hold (reading it exactly) into the control point
        ``loaded old`` that holds the engine, then a store, one transition per value the word holds by then (taken
        exactly) writing ``old + by``. A write landing between them is lost, as in the interpreter. ``old + by`` past
        the word's bound is never stored: a value is a base plus increments each counted at most once (a store
        counts its own after those it loaded), and the bound is the largest base plus every increment."""
        op = o.op
        assert isinstance(op, SemRmw)
        word, comp = self.word[(op.sem, self.site)]
        bound = self.bound[(op.sem, self.site)]
        for old in range(bound + 1 - op.by):
            held = self._place(f"{o.text} loaded {old}", "pc", 0, self.key, o.path, o.iters)
            load = _T(f"{o.text} loads {old}", "step", self.key, o.path, o.iters, pc_in=o.cur, pc_out=held)
            self._take(load, o.cur, 1)
            self._give(load, held, 1)
            self._read(load, word, old)
            self._read(load, comp, bound - old)
            self._trans(load)
            new = old + op.by
            for cur in range(bound + 1):
                store = _T(f"{o.text} stores {old} + {op.by} over {cur}", "step", self.key, o.path, o.iters,
                           pc_in=held, pc_out=o.nxt)
                self._take(store, held, 1)
                self._give(store, o.nxt, 1)
                self._take(store, word, cur)
                self._take(store, comp, bound - cur)
                self._give(store, word, new)
                self._give(store, comp, bound - new)
                self._trans(store)

    def _read_or_write(self, o: _Occurrence) -> None:
        kind = "reads" if isinstance(o.op, (ReadTiles, RemoteRead)) else "writes"
        t = self._step(o)
        self._issue(t, kind)
        f = self._inflight(f"{o.text} in flight", o.path, o.iters)
        self._give(t, f, 1)
        self._trans(t)
        lt = _T(f"{o.text} lands", "land", self.key, o.path, o.iters)
        self._take(lt, f, 1)
        self._give(lt, self.idle[kind], 1)
        self._trans(lt)

    def _inline_write(self, o: _Occurrence) -> None:
        """A one-word remote write (``InlineWrite``) to a mailbox word — one no op of the program reads
        (``Program.inline_only_words``) — changes nothing that decides blocking: a write in flight until its landing, as
        a tensor write. The value stored in a word something waits on is not expressed (refused by name)."""
        op = o.op
        assert isinstance(op, InlineWrite)
        if (op.sem, op.at) not in self.mailboxes:
            raise NetUnsupported(f"{self.key}: {o.text} at {list(o.path)} writes a value into sem{op.sem}@{op.at}, "
                                 "which the program also waits on, sets, counts or copies: the net does not store a "
                                 "one-word remote write's value")
        self._read_or_write(o)

    def _multicast(self, o: _Occurrence) -> None:
        op, p = o.op, self.p
        assert isinstance(op, (McastSend, McastSetValid))
        at = frozenset(p.groups[op.group].destinations())
        order = landing_order(p.groups, op)
        flag = isinstance(op, McastSetValid)
        for other, sites, other_flag, other_order in o.valid:
            # Multicasts that leave one engine on one virtual channel to one rectangle land at a site in the order
            # they left (``ir.program.landing_order``), and on a target with ordered writes those of one channel
            # leave in issue order. Those to one destination set of one landing order are queued by tickets
            # (``_Queue``). Otherwise a data multicast lands in any order in the net: its landing changes no blocking
            # counter, so every order reaches the same dead markings; two flag writes whose order matters are refused
            # (on two channels or to two rectangles the NoC keeps none, but their landings at one site still decide
            # what the word holds; on one channel their leave order decides what they read).
            if sites == at and other_order == order:
                if (self.e, at, order) not in self.queued:
                    raise _NeedsQueue(self.e, at, order)
            elif flag and other_flag and (sites & at or (p.target.ordered_writes and other_order[0] == op.vc)):
                why = (f"both land at {min(sites & at)}" if sites & at
                       else f"{p.target.name} keeps writes in issue order")
                raise NetUnsupported(
                    f"{self.key}: {op_text(op)} at {list(o.path)} may be in flight with {op_text(self._op(other))} at "
                    f"{list(other)} (no write_barrier between), to other destinations, and {why}: the NoC orders "
                    f"their landings, which a P/T net does not express")
        o.valid = (*o.valid, (o.path, at, flag, order))
        self._mcast(op, o.text, o.path, o.iters, self._step(o))

    def _read_barrier(self, o: _Occurrence) -> None:
        self._barrier(o, "reads")

    def _write_barrier(self, o: _Occurrence) -> None:
        self._barrier(o, "writes", "mcast-landings")
        o.valid = ()

    def _flush(self, o: _Occurrence) -> None:
        self._barrier(o, "writes", "mcasts-unleft")

    def _atomic_barrier(self, o: _Occurrence) -> None:
        self._barrier(o, "atomics")

    def _local(self, o: _Occurrence) -> None:
        """An op that decides no blocking (accumulator, compute, local fills): one plain step."""
        self._trans(self._step(o))

    def _op(self, path: tuple[int, ...]) -> Op:
        ops = self.p.programs[self.e].ops
        op: Op = ops[path[0]]
        for i in path[1:]:
            assert isinstance(op, (Loop, If))
            op = op.body[i]
        return op

    def _inflight(self, name: str, path: tuple[int, ...], iters: tuple[int, ...]) -> int:
        """A new in-flight place of the op at ``path``, iteration ``iters``."""
        return self._place(name, "in-flight", 0, self.key, path, iters)

    def _issue(self, t: _T, kind: str, n: int = 1) -> None:
        """``t`` puts ``n`` operations of ``kind`` in flight: it takes them from the engine's idle place, which is
        marked with one token per operation the engine can have in flight."""
        self._take(t, self.idle[kind], n)
        self.places[self.idle[kind]].marking += n

    def _mcast(self, op: McastSend | McastSetValid, text: str, path: tuple[int, ...], iters: tuple[int, ...],
               t: _T) -> None:
        key = self.key
        dests = list(self.p.groups[op.group].destinations())
        issue = self._issue

        def inflight(what: str) -> int:
            return self._inflight(f"{text} {what}", path, iters)

        issue(t, "mcasts-unleft")
        issue(t, "mcast-landings", len(dests))
        # A data multicast's pages land in the destination buffers (the receiver publishes them itself): only the
        # barriers see the landing. A flag write reads the source word's value when it leaves and writes it at each
        # destination. Queued (``_Queue``): the issue takes a ticket on a target with ordered writes, the leave takes
        # one (its issue ticket there), and each landing waits for its ticket's turn at its site.
        order = landing_order(self.p.groups, op)
        q = self._queue(frozenset(dests), order) if (self.e, frozenset(dests), order) in self.queued else None
        ordered = q is not None and self.p.target.ordered_writes
        flag = isinstance(op, McastSetValid)
        if flag:
            assert isinstance(op, McastSetValid)
            src, src_comp = self.word[(op.source, self.site)]
            sb = self.bound[(op.source, self.site)]
        values: list[int | None] = list(range(sb + 1)) if flag else [None]
        for j in range(q.size) if q is not None and ordered else [None]:
            tj = _T(t.label, t.kind, t.engine, t.path, t.iters, dict(t.pre), dict(t.post), t.pc_in, t.pc_out)
            if q is not None and j is not None:
                tj.label += f" (ticket {j})"
                self._count_up(tj, q.issued, j, q.size)
            unleft = inflight("not left" + (f" (ticket {j})" if j is not None else ""))
            self._give(tj, unleft, 1)
            self._trans(tj)
            tickets: list[int | None] = ([j] if j is not None else list(range(q.size))) if q is not None else [None]
            for value in values:
                for k in tickets:
                    tk = "" if k is None else f" (ticket {k})"
                    with_value = "" if value is None else f" with {value}"
                    lt = _T(f"{text} leaves{with_value}{tk}", "leave", key, path, iters)
                    self._take(lt, unleft, 1)
                    self._give(lt, self.idle["mcasts-unleft"], 1)
                    if value is not None:
                        self._read(lt, src, value)
                        self._read(lt, src_comp, sb - value)
                    if q is not None and k is not None:
                        self._count_up(lt, q.left, k, q.size)
                    eq = "" if value is None else f"= {value} "
                    flights = [inflight(f"{eq}to {d}{tk} in flight") for d in dests]
                    for f in flights:
                        self._give(lt, f, 1)
                    self._trans(lt)
                    for d, f in zip(dests, flights, strict=True):
                        if value is None:
                            lands = [_T(f"{text} lands at {d}{tk}", "land", key, path, iters)]
                        else:
                            assert isinstance(op, McastSetValid)
                            word, comp = self.word[(op.sem, d)]
                            db = self.bound[(op.sem, d)]
                            lands = []
                            for old in range(db + 1):
                                dt = _T(f"{text} lands {value} at {d} over {old}{tk}", "land", key, path, iters)
                                self._take(dt, word, old)
                                self._take(dt, comp, db - old)
                                self._give(dt, word, value)
                                self._give(dt, comp, db - value)
                                lands.append(dt)
                        for dt in lands:
                            self._take(dt, f, 1)
                            self._give(dt, self.idle["mcast-landings"], 1)
                            if q is not None and k is not None:
                                self._count_up(dt, q.landed[d], k, q.size)
                            self._trans(dt)

    def _count_up(self, t: _T, counter: tuple[int, int], k: int, size: int) -> None:
        """``t`` fires only when ``counter`` (a place and its complement, ``size`` tokens together) holds exactly
        ``k``, and adds one to it."""
        value, comp = counter
        self._take(t, value, k)
        self._take(t, comp, size - k)
        self._give(t, value, k + 1)
        self._give(t, comp, size - k - 1)

    def _queue(self, sites: frozenset[Site], order: LandingOrder) -> _Queue:
        """The ticket queue of this engine's multicasts to ``sites`` of landing order ``order``, made on first use; its
        size is the most such multicasts the engine issues (trips at their max)."""
        k = (self.e, sites, order)
        if k not in self.queues:
            ep = self.p.programs[self.e]
            size = sum(n for op, n in self._occurrences(ep.ops, 1) if isinstance(op, (McastSend, McastSetValid))
                       and frozenset(self.p.groups[op.group].destinations()) == sites
                       and landing_order(self.p.groups, op) == order)
            vc = order[0]
            name = f"{self.key} multicasts to {','.join(map(str, sorted(sites)))}" + (f" on VC {vc}" if vc is not None
                                                                                     else "")

            def pair(what: str) -> tuple[int, int]:
                return (self._place(f"{name} {what}", "queue", 0, self.key),
                        self._place(f"{name} not {what}", "queue", size, self.key))

            self.queues[k] = _Queue(size, pair("issued"), pair("left"), {d: pair(f"landed at {d}") for d in sites})
        return self.queues[k]

    # ------------------------------------------------------------------ finish

    def finish(self) -> Net:
        p = self.p
        # Headroom of a buffer some push or pop of which is not covered (or that two engines push or pop: their
        # windows are per engine): the most pages that push or pop could overfill or overdraw the ring.
        pushers: list[set[int]] = [set() for _ in p.buffers]
        poppers: list[set[int]] = [set() for _ in p.buffers]
        for e, ep in enumerate(p.programs):
            for op, n in self._occurrences(ep.ops, 1):
                if isinstance(op, Push):
                    pushers[op.buf].add(e)
                    self.pages_moved[op.buf] += n * op.pages
                elif isinstance(op, Pop):
                    poppers[op.buf].add(e)
                    self.pages_moved[op.buf] += n * op.pages
        for b in range(len(p.buffers)):
            shared = len(pushers[b]) > 1 or len(poppers[b]) > 1
            if not (self.uncovered[b] or shared):
                continue
            room = self.pages_moved[b]
            self.places[self.data[b]].marking += room
            self.places[self.free[b]].marking += room
            for ti, pl in self.window_arcs[b]:
                self.trans[ti].pre[pl] += room
                self.trans[ti].post[pl] += room
            self.places[self.data[b]].name += f" (+{room} headroom)"
            self.places[self.free[b]].name += f" (+{room} headroom)"
        for ti, pl in self.barrier_reads:
            full = self.places[pl].marking
            self._read(self.trans[ti], pl, full)
        # Drop places no arc touches (merged control points, unused idle counters) and number the rest.
        used = {pl for t in self.trans for d in (t.pre, t.post) for pl in d}
        keep = [i for i, pl in enumerate(self.places) if pl.kind != "merged" and (i in used or pl.kind == "pc")]
        pid = {i: f"p{k}" for k, i in enumerate(keep)}
        places = tuple(NetPlace(pid[i], pl.name or f"{pl.engine} @{list(pl.path or ())}", pl.kind, pl.marking,
                                pl.engine, pl.path, pl.iters) for i, pl in ((i, self.places[i]) for i in keep))
        transitions = []
        arcs: list[Arc] = []
        for k, t in enumerate(self.trans):
            tid = f"t{k}"
            transitions.append(NetTransition(tid, t.label, t.kind, t.engine, t.path, t.iters,
                                             pid.get(t.pc_in, ""), pid.get(t.pc_out, "")))
            for pl, w in t.pre.items():
                arcs.append(Arc(f"a{len(arcs)}", pid[pl], tid, w))
            for pl, w in t.post.items():
                arcs.append(Arc(f"a{len(arcs)}", tid, pid[pl], w))
        return Net(p.name, places, tuple(transitions), tuple(arcs))


#: op class -> its case in the unrolled net (``_Builder._leaf``): the transitions of one occurrence.
_LEAVES: dict[type, Callable[[_Builder, _Occurrence], None]] = {
    Reserve: _Builder._reserve, Push: _Builder._push, Wait: _Builder._wait, Pop: _Builder._pop,
    SemWait: _Builder._sem_wait, SemSet: _Builder._sem_set, SemInc: _Builder._sem_inc, SemIncMcast: _Builder._sem_inc,
    SemRmw: _Builder._sem_rmw,
    ReadTiles: _Builder._read_or_write, WriteTiles: _Builder._read_or_write, InlineWrite: _Builder._inline_write,
    RemoteRead: _Builder._read_or_write,
    McastSend: _Builder._multicast, McastSetValid: _Builder._multicast,
    ReadBarrier: _Builder._read_barrier, WriteBarrier: _Builder._write_barrier, Flush: _Builder._flush,
    AtomicBarrier: _Builder._atomic_barrier,
    AcquireAcc: _Builder._local, Compute: _Builder._local, PackAcc: _Builder._local, ReleaseAcc: _Builder._local,
    FillTiles: _Builder._local, CopyTiles: _Builder._local, ScratchAccess: _Builder._local,
}


def net_of(program: Program) -> Net:
    """The behavioural P/T net of ``program`` (module docstring). Raises ``NetUnsupported`` naming the construct for
    a program the net does not express or one that unrolls past ``MAX_TRANSITIONS`` transitions; expects a program
    that passes ``validate``."""
    why = acks.refusal(program, "the P/T net")
    if why is not None:
        raise NetUnsupported(why)
    queued: frozenset[_QueueKey] = frozenset()
    while True:
        b = _Builder(program, queued)
        try:
            for e in range(len(program.programs)):
                b.engine(e)
        except _NeedsQueue as need:
            # Each retry adds one (engine, destination set) queue: at most one per flag write op.
            queued = queued | {(need.e, need.sites, need.order)}
            continue
        return b.finish()
