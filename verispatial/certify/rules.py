"""Per-engine rules of DESIGN §5 decided by abstract interpretation over every path of an engine program.

The abstract state is a set of may-facts; loops are run to a fixpoint (a trip loop may also run zero times), so
every path the program can take is covered and no rule violation is missed. A finding is only a candidate:
the checker refutes with it only after the interpreter reproduces it (``replay.py``); otherwise it fails to prove.

Rule names are shared with the interpreter (``verispatial.petri.interp``).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from verispatial.certify.structure import EngineView
from verispatial.ir.core import Guard
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
    Flush,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    SemInc,
    SemIncMcast,
    SemSet,
    TripCount,
    Wait,
    WriteBarrier,
    WriteTiles,
    count_trip,
    count_value,
)
from verispatial.ir.program import Program

#: rule -> obligation family
RULE_FAMILY = {
    "cb-capacity": "circular-buffer",
    "cb-single-producer": "circular-buffer",
    "cb-single-consumer": "circular-buffer",
    "cb-push-uncovered": "circular-buffer",
    "cb-pop-uncovered": "circular-buffer",
    "cb-write-unreserved": "circular-buffer",
    "cb-read-unwaited": "circular-buffer",
    "async-read-publish": "async-noc",
    "async-flag-overtake": "async-noc",
    "async-source-reuse": "async-noc",
    "async-pending-at-end": "async-noc",
    "acc-capacity": "accumulator",
}


@attrs.frozen
class Finding:
    """A possible violation of ``rule`` at ``path`` of engine ``engine`` (path None: at the engine's end)."""

    rule: str
    engine: str
    path: tuple[int, ...] | None
    message: str

    @property
    def family(self) -> str:
        return RULE_FAMILY.get(self.rule, "structure")


State = frozenset[tuple[object, ...]]

#: Constant loops up to this count are iterated exactly; longer ones (and trip loops) run to a fixpoint.
EXACT_LOOP = 256


#: What is known of an enclosing loop's current iteration: (is it the first, is it the last); None: unknown.
Phase = tuple[bool | None, bool | None]


def _admits(when: Guard, phase: Phase) -> bool | None:
    """Whether an ``If`` with guard ``when`` runs in an iteration of the known ``phase`` (None: either)."""
    first, last = phase
    if when is Guard.FIRST:
        return first
    if when is Guard.LAST:
        return last
    if when is Guard.NOT_FIRST:
        return None if first is None else not first
    return None if last is None else not last


def _counts(count: int | str | TripCount, trip_max: dict[str, int] | None) -> tuple[bool, bool, bool]:
    """Whether a loop of ``count`` may run 0 times, exactly once, at least twice (over every trip value; every
    case is possible for a trip whose maximum is unknown)."""
    if isinstance(count, int):
        return count == 0, count == 1, count >= 2
    name = count_trip(count)
    if trip_max is None or name not in trip_max:
        return True, True, True
    lo, hi = count_value(count, {name: 0}), count_value(count, {name: trip_max[name]})
    return lo == 0, lo <= 1 <= hi, hi >= 2


def _run(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State,
         step: Callable[[Op, tuple[int, ...], State], State], trip_max: dict[str, int] | None = None,
         env: dict[str, Phase] | None = None) -> State:
    """Every path of ``ops`` from state ``s``. An ``If`` runs when the iteration of its loop that is known
    (first / middle / last: loops are run in those classes) admits it, and may run or not when unknown. A loop
    runs 0 times, once (first and last), or a first iteration, any number of middle ones and a last one, as its
    count allows (``trip_max``: each trip's maximum); a constant loop up to ``EXACT_LOOP`` iterations is
    iterated exactly."""
    env = env or {}
    for i, op in enumerate(ops):
        path = (*prefix, i)
        if isinstance(op, If):
            runs = _admits(op.when, env.get(op.var, (None, None)))
            if runs is True:
                s = _run(op.body, path, s, step, trip_max, env)
            elif runs is None:
                s = s | _run(op.body, path, s, step, trip_max, env)
            continue
        if isinstance(op, Loop):
            def body(x: State, first: bool, last: bool, op: Loop = op, path: tuple[int, ...] = path) -> State:
                return _run(op.body, path, x, step, trip_max, {**env, op.var: (first, last)})

            if op.count == 0:
                continue
            if isinstance(op.count, int) and op.count <= EXACT_LOOP:
                # A constant loop runs its body exactly count times: iterate (stopping the middle iterations early
                # once the state is stable), so counts that depend on the trip number (tiles written into a
                # reservation) stay exact.
                n = op.count
                s = body(s, True, n == 1)
                for _ in range(n - 2):
                    nxt = body(s, False, False)
                    if nxt == s:
                        break
                    s = nxt
                if n >= 2:
                    s = body(s, False, True)
                continue
            zero, one, many = _counts(op.count, trip_max)
            out: State = s if zero else frozenset()
            if one:
                out = out | body(s, True, True)
            if many:
                acc = body(s, True, False)
                while True:
                    nxt = acc | body(acc, False, False)
                    if nxt == acc:
                        break
                    acc = nxt
                out = out | body(acc, False, True)
            s = out
        else:
            s = step(op, path, s)
    return s


def _map(s: State, tag: str, b: int, f: Callable[[int, int], tuple[int, int]]) -> State:
    """Apply ``f(pages, tiles) -> (pages, tiles)`` to the ``tag`` facts of buffer ``b``."""
    return frozenset((tag, b, *f(int(t[2]), int(t[3]))) if t[0] == tag and t[1] == b else t  # type: ignore[call-overload]
                     for t in s)


def _pairs(s: State, tag: str, b: int) -> list[tuple[int, int]]:
    return [(int(t[2]), int(t[3])) for t in s if t[0] == tag and t[1] == b]  # type: ignore[call-overload]


def engine_findings(p: Program, view: EngineView) -> list[Finding]:
    """Coverage, asynchronous-NoC and accumulator findings for one engine, over every path."""
    found: dict[tuple[str, tuple[int, ...] | None], Finding] = {}
    key = view.key
    ordered = p.target.ordered_writes

    def flag(rule: str, path: tuple[int, ...] | None, msg: str) -> None:
        found.setdefault((rule, path), Finding(rule, key, path, msg))

    def fill(s: State, b: int, tiles: int, path: tuple[int, ...], what: str) -> State:
        pt = p.buffers[b].page_tiles
        if any(f + tiles > v * pt for v, f in _pairs(s, "rsv", b)):
            flag("cb-write-unreserved", path, f"{what} writes more tiles into the back of b{b} than reserves since its "
                                              "last push cover")
        return _map(s, "rsv", b, lambda v, f: (v, min(f + tiles, v * pt + 1)))

    # Facts: ("rsv", b, pages reserved since the last push, tiles written since), ("wt", b, pages waited since
    # the last pop, tiles read since); the count of tiles saturates once it exceeds the cover (finite lattice).
    reached: set[tuple[int, ...]] = set()

    def step(op: Op, path: tuple[int, ...], s: State) -> State:
        reached.add(path)
        if isinstance(op, Reserve):
            return _map(s, "rsv", op.buf, lambda v, f: (max(v, op.pages), f))
        if isinstance(op, Wait):
            return _map(s, "wt", op.buf, lambda v, r: (max(v, op.pages), r))
        if isinstance(op, Push):
            if any(v < op.pages for v, _ in _pairs(s, "rsv", op.buf)):
                flag("cb-push-uncovered", path, f"push of {op.pages} pages on b{op.buf} without a reserve of as many since the last push")
            if ("rd", op.buf) in s:
                flag("async-read-publish", path, f"push of b{op.buf} while reads into it may not have landed (no read barrier since)")
            return _map(s, "rsv", op.buf, lambda v, f: (0, 0))
        if isinstance(op, Pop):
            if any(v < op.pages for v, _ in _pairs(s, "wt", op.buf)):
                flag("cb-pop-uncovered", path, f"pop of {op.pages} pages on b{op.buf} without a wait for as many since the last pop")
            return _map(s, "wt", op.buf, lambda v, r: (0, 0))
        if isinstance(op, ReadTiles):
            s = fill(s, op.into, op.tiles, path, "read_tiles")
            if ("ms", op.into) in s:
                flag("async-source-reuse", path, f"reads into b{op.into} while a multicast from it may not have left (no flush since)")
            return s | {("rd", op.into)}
        if isinstance(op, ReadBarrier):
            return frozenset(t for t in s if t[0] != "rd")
        if isinstance(op, PackAcc):
            s = fill(s, op.buf, op.tiles, path, "pack_acc")
            if ("ms", op.buf) in s:
                flag("async-source-reuse", path, f"packs into b{op.buf} while a multicast from it may not have left (no flush since)")
            return s
        if isinstance(op, WriteTiles):
            pt = p.buffers[op.src].page_tiles
            if any(r + op.tiles > v * pt for v, r in _pairs(s, "wt", op.src)):
                flag("cb-read-unwaited", path, f"write_tiles reads more tiles from the front of b{op.src} than waits "
                                               "since its last pop cover")
            s = _map(s, "wt", op.src, lambda v, r: (v, min(r + op.tiles, v * pt + 1)))
            return s | {("w",)}
        if isinstance(op, McastSend):
            if op.front and any(v < op.pages for v, _ in _pairs(s, "wt", op.buf)):
                flag("cb-read-unwaited", path, f"mcast_send of {op.pages} pages from the front of b{op.buf} beyond "
                                               "its waits since the last pop")
            if not op.front and any(v < op.pages for v, _ in _pairs(s, "rsv", op.buf)):
                flag("cb-write-unreserved", path, f"mcast_send of {op.pages} pages from the back of b{op.buf} beyond "
                                                  "its reservation since the last push")
            return s | {("ms", op.buf), ("mw",), ("w",)}
        if isinstance(op, McastSetValid):
            if not ordered and ("mw",) in s:
                flag("async-flag-overtake", path,
                     f"flag multicast of sem{op.sem} may overtake the data multicast before it: target {p.target.name} "
                     "does not keep writes ordered and there is no flush between them")
            return s | {("mf", op.source), ("w",)}
        if isinstance(op, Flush):
            return frozenset(t for t in s if t[0] not in ("ms", "mw", "mf"))
        if isinstance(op, WriteBarrier):
            return frozenset(t for t in s if t[0] not in ("ms", "mw", "mf", "w"))
        if isinstance(op, SemSet):
            if ("mf", op.sem) in s:
                flag("async-source-reuse", path, f"sets sem{op.sem} while a flag multicast reading it may not have left (no flush since)")
            return s
        if isinstance(op, (SemInc, SemIncMcast)):
            return s | {("a",)}
        if isinstance(op, AtomicBarrier):
            return frozenset(t for t in s if t[0] != "a")
        if isinstance(op, AcquireAcc) and op.tiles > p.target.acc_capacity(op.dtype):
            flag("acc-capacity", path, f"acquires {op.tiles} {op.dtype} accumulator tiles; target {p.target.name} holds "
                                       f"{p.target.acc_capacity(op.dtype)} at that precision")
        return s

    bufs = {b.id for b in p.buffers}
    init: State = frozenset({("rsv", b, 0, 0) for b in bufs} | {("wt", b, 0, 0) for b in bufs})
    end = _run(view.program.ops, (), init, step, p.trip_max())
    pend = []
    if any(t[0] == "rd" for t in end):
        pend.append("reads (no read barrier)")
    if ("w",) in end:
        pend.append("writes or multicasts (no write barrier)")
    if ("a",) in end:
        pend.append("atomic increments (no atomic barrier)")
    if pend:
        flag("async-pending-at-end", None, "ends with outstanding NoC " + ", ".join(pend))
    for lf in view.leaves:
        op = lf.op
        # Only ops some path reaches (the run steps every op that can execute: an op under a loop of count 0 or an
        # If no iteration admits never runs, so it never asks for anything).
        if isinstance(op, (Reserve, Wait)) and op.pages > p.buffers[op.buf].capacity and lf.path in reached:
            cap = p.buffers[op.buf].capacity
            flag("cb-capacity", lf.path,
                 f"{type(op).__name__.lower()} of {op.pages} pages on b{op.buf} whose capacity is {cap}: it can never return")
    return sorted(found.values(), key=lambda f: (f.rule, f.path or ()))


def ownership_findings(p: Program, views: dict[str, EngineView]) -> list[Finding]:
    """One producing and one consuming engine per buffer (reference §1.1: pointers are per thread)."""
    prod: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    cons: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    for v in views.values():
        for lf in v.leaves:
            if isinstance(lf.op, (Reserve, Push)):
                prod.setdefault(lf.op.buf, []).append((v.key, lf.path))
            elif isinstance(lf.op, (Wait, Pop)):
                cons.setdefault(lf.op.buf, []).append((v.key, lf.path))
    out: list[Finding] = []
    for rule, table, what in (("cb-single-producer", prod, "produce"), ("cb-single-consumer", cons, "consume")):
        for b, uses in sorted(table.items()):
            engines = sorted({e for e, _ in uses})
            if len(engines) > 1:
                second = next(u for u in uses if u[0] == engines[1])
                out.append(Finding(rule, second[0], second[1], f"b{b} has {len(engines)} engines that {what} it: {', '.join(engines)}"))
    return out
