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
from verispatial.ir.ops import (
    AcquireAcc,
    AtomicBarrier,
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
    Reserve,
    SemInc,
    SemSet,
    Wait,
    WriteBarrier,
    WriteTiles,
    count_max,
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


def _run(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State,
         step: Callable[[Op, tuple[int, ...], State], State], trip_max: dict[str, int] | None = None) -> State:
    """Every path of ``ops`` from state ``s``; a loop that runs no iteration (count 0, or a trip whose maximum,
    in ``trip_max``, is 0) is skipped."""
    for i, op in enumerate(ops):
        path = (*prefix, i)
        if isinstance(op, Loop):
            if op.count == 0 or (trip_max is not None and count_max(op.count, trip_max) == 0):
                continue
            if isinstance(op.count, int) and op.count <= EXACT_LOOP:
                # A constant loop runs its body exactly count times: iterate (stopping early once the state is
                # stable), so counts that depend on the trip number (tiles written into a reservation) stay exact.
                for _ in range(op.count):
                    nxt = _run(op.body, path, s, step, trip_max)
                    if nxt == s:
                        break
                    s = nxt
                continue
            acc = _run(op.body, path, s, step, trip_max)
            if op.count != 1:
                while True:
                    nxt = acc | _run(op.body, path, acc, step, trip_max)
                    if nxt == acc:
                        break
                    acc = nxt
            s = acc | s if isinstance(op.count, str) else acc
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
    def step(op: Op, path: tuple[int, ...], s: State) -> State:
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
            if any(v < op.pages for v, _ in _pairs(s, "rsv", op.buf)):
                flag("cb-write-unreserved", path, f"mcast_send of {op.pages} pages from the back of b{op.buf} beyond "
                                                  "its reservation since the last push")
            return s | {("ms", op.buf), ("mw",), ("w",)}
        if isinstance(op, McastSetValid):
            if not ordered and ("mw",) in s:
                flag("async-flag-overtake", path,
                     f"flag multicast of sem{op.sem} may overtake the data multicast before it: target {p.target.name} "
                     "does not keep writes ordered and there is no flush between them")
            return s | {("mf", op.sem), ("w",)}
        if isinstance(op, Flush):
            return frozenset(t for t in s if t[0] not in ("ms", "mw", "mf"))
        if isinstance(op, WriteBarrier):
            return frozenset(t for t in s if t[0] not in ("ms", "mw", "mf", "w"))
        if isinstance(op, SemSet):
            if ("mf", op.sem) in s:
                flag("async-source-reuse", path, f"sets sem{op.sem} while a flag multicast reading it may not have left (no flush since)")
            return s
        if isinstance(op, SemInc):
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
    trip_max = p.trip_max()
    for lf in view.leaves:
        op = lf.op
        if any(count_max(lc.count, trip_max) == 0 for lc in lf.loops):
            continue  # inside a loop that never runs: the op never executes
        if isinstance(op, (Reserve, Wait)) and op.pages > p.buffers[op.buf].capacity:
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
