"""The checker's encoding of multicast: the per-engine rules of McastSend and McastSetValid (``certify/rules.py`` runs
them over every path of an engine; their facts are the NoC family's, ``families/noc/encoding.py``) and multicast data
delivery (reference §2.6 invariants 3 and 4): every multicast lands in a slot its receiver reserved, at the same
address, and is published by the receiver only after it landed.

- ``mcast-address``: the destination buffer (same cb index) has the sender's byte offset, page size, capacity.
- ``mcast-slot``: the pages the multicast lands on (the sender's slot: its pointer of the anchor buffer plus
  ``offset``) are free at each receiver and hold no landing it has not published (``semantics.data_lands``). Asked
  when the sender issues it, first by the stronger lockstep question (``smt.shortcuts``: each receiver has pushed
  exactly as many pages as the sender's anchor counts, with the room), then the window (a sole sender: the landing's
  pages, counted as the receiver counts, inside ``[pushed, popped + capacity)``), then the congruence of the
  receiver's write pointer plus ``offset`` with the slot; unsat of any proves it (landings over unpublished ones:
  ``_landing_twice``). Otherwise the interpreter's rule at a landing right after the issue gives the counterexample,
  or the obligation fails to prove. Until the receiver publishes (``mcast-publish-early``) its write pointer moves
  only past landed pages and its free space only grows, so the condition still holds when the data lands.
- ``mcast-publish-early``: the receiver pushes pages only after the flags it has seen cover them: its flag word's
  every flag follows (in the sender's program) a data multicast into this buffer, and the data lands first (one
  landing order on an ordered target, a flush between them on one landing order, a write barrier between them
  otherwise: ``async-flag-overtake``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import attrs
import z3

from verispatial.certify import smt
from verispatial.certify.facts import LATE, EngineRun, State, pairs, run_paths
from verispatial.certify.reach import Analysis, Decoded, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.semaphores import Word
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, any_of
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir import rules as R
from verispatial.ir.limits import ring_slots
from verispatial.ir.ops import McastSend, McastSetValid, Op, Pop, Push, SemIncMcast, SemWait, WriteBarrier, count_max
from verispatial.ir.program import (
    Buffer,
    Program,
    apart_text,
    landing_order,
    landing_order_of,
    landing_order_text,
    landings_may_reorder,
    walk,
    write_noun,
)
from verispatial.petri.position import path_text


def _dest_buffers(a: Analysis, lf: Leaf) -> list[Buffer]:
    p = a.program
    op = lf.op
    assert isinstance(op, McastSend)
    src = p.buffers[op.dest]
    dests = set(p.groups[op.group].destinations())
    ph = p.phase_of_section()
    return [b for b in p.buffers if b.site in dests and b.cb == src.cb and ph[b.section] == ph[src.section]]


def _cex(rule: str, d: Decoded, summary: str, **extra: object) -> dict[str, object]:
    return d.counterexample("state", rule, summary, **extra)


def check_multicast(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """The multicast obligations of ``a.program``, in this order: ``mcast-address`` of every McastSend,
    ``mcast-slot`` of every McastSend (``_check_slot``), ``mcast-publish`` of every receiver push of a multicast
    destination buffer (``_check_publish``); ``rlimit`` is each query's Z3 resource limit."""
    p = a.program
    sends = [lf for v in a.views.values() for lf in v.leaves if isinstance(lf.op, McastSend)]
    offsets = {m.buf: m.offset for m in p.memory}
    out = [_check_address(a, lf, offsets) for lf in sends]
    twice = _landing_twice(a, sends)
    out += [_check_slot(a, lf, sends, twice, trusted, rlimit) for lf in sends]
    # Publishing: each receiver push of a multicast destination buffer.
    dest_ids = {b.id for lf in sends for b in _dest_buffers(a, lf)}
    out += [_check_publish(a, lf, sends, trusted, rlimit) for v in a.views.values() for lf in v.leaves
            if isinstance(lf.op, Push) and lf.op.buf in dest_ids]
    return out


def _noun(a: Analysis, sends: list[Leaf], plural: bool = False) -> str:
    """``write_noun`` of the data writes at ``sends`` (``McastSend`` leaves): a unicast write is no multicast."""
    return write_noun(a.program.groups, [x.op.group for x in sends if isinstance(x.op, McastSend)], plural)


def _never(a: Analysis, lf: Leaf) -> bool:
    """``lf`` is inside a loop that never runs (count 0, or a trip whose maximum is 0)."""
    trip_max = a.program.trip_max()
    return any(count_max(lc.count, trip_max) == 0 for lc in lf.loops)


def _check_address(a: Analysis, lf: Leaf, offsets: dict[int, int]) -> Result:
    """``mcast-address`` of the McastSend at ``lf``: every destination buffer has the sender's byte offset
    (``offsets``: buffer id to byte offset in the memory map), page size, capacity and dtype."""
    p = a.program
    op = lf.op
    assert isinstance(op, McastSend)
    bs = p.buffers[op.dest]  # the address: the source's own, or this engine's copy of dst
    name = f"{R.MCAST_ADDRESS}:{lf.engine}:{list(lf.path)}"
    bad = [b for b in _dest_buffers(a, lf)
           if (b.page_tiles, b.capacity, b.dtype) != (bs.page_tiles, bs.capacity, bs.dtype)
           or (p.memory and offsets.get(b.id) != offsets.get(bs.id))]
    if not p.memory:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED,
                      "no memory map: multicast address congruence needs byte offsets")
    if bad:
        b = bad[0]
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED,
                      f"{write_noun(p.groups, [op.group])} from b{bs.id} at offset {offsets.get(bs.id)} lands at the same "
                      f"address on {b.site}, "
                      f"where cb {b.cb} is b{b.id} at offset {offsets.get(b.id)} ({b.capacity} pages of {b.page_tiles} tiles)",
                      {"kind": R.MCAST_ADDRESS, "rule": R.MCAST_ADDRESS, "sender_buffer": bs.id, "receiver_buffer": b.id,
                       "summary": f"cb {b.cb} is not congruent on {bs.site} and {b.site}"})
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                  "every destination buffer has the sender's address and shape")


@attrs.frozen
class _Slot:
    """The slot question of one McastSend (``lf``): the address the sender computes is its pointer of the anchor
    buffer (the source's write pointer for a back multicast, its read pointer for a forwarder — ``by_pops`` —, its
    write pointer of dst), ``off`` pages further; each receiver (``dests``) must have that slot ``off`` pages past
    its own write pointer, with room for the ``pages``. Each method is one query's violation at the issue."""

    lf: Leaf
    anchor: Buffer
    dests: list[Buffer]
    pages: int
    off: int
    by_pops: bool

    def _sent(self, cm: Any) -> z3.ArithRef:
        # Reference §1.1 get_write_ptr / get_read_ptr: the sender's own pointer of the anchor buffer.
        return cm.popped(self.anchor.id) if self.by_pops else cm.pushed(self.anchor.id)

    def _at(self, sq: Any, wrong: list[z3.BoolRef]) -> z3.BoolRef:
        return z3.And(sq.enc.position(self.lf.engine).at(self.lf), any_of(sq.q.ctx, wrong))

    def congruence(self, sq: Any) -> z3.BoolRef:
        cm = sq.cm
        ptr = (self._sent(cm) + self.off) % self.anchor.capacity
        return self._at(sq, [z3.Or((cm.pushed(b.id) + self.off) % b.capacity != ptr,
                                   b.capacity - (cm.pushed(b.id) - cm.popped(b.id)) < self.off + self.pages)
                             for b in self.dests])

    def lockstep(self, sq: Any) -> z3.BoolRef:
        cm = sq.cm
        sent = self._sent(cm)
        return self._at(sq, [z3.Or(cm.pushed(b.id) != sent,
                                   b.capacity - (cm.pushed(b.id) - cm.popped(b.id)) < self.off + self.pages)
                             for b in self.dests])

    def window(self, sq: Any) -> z3.BoolRef:
        cm = sq.cm
        # The landing's first page, counted as the receiver counts its pages (equal capacities: page k sits in ring
        # slot k % capacity on both sides): it must lie in [pushed, popped + capacity).
        first = self._sent(cm) + self.off
        return self._at(sq, [z3.Or(first < cm.pushed(b.id), first + self.pages > cm.popped(b.id) + b.capacity)
                             for b in self.dests])

    def outside(self, sq: Any) -> z3.BoolRef:
        cm = sq.cm
        # The interpreter's rule (``semantics.data_lands``) at a landing right after the issue: the pages past the
        # receiver's write pointer where the sender's slot falls are not all free.
        ptr = (self._sent(cm) + self.off) % self.anchor.capacity
        return self._at(sq, [(ptr - cm.pushed(b.id)) % b.capacity + self.pages
                             > b.capacity - (cm.pushed(b.id) - cm.popped(b.id)) for b in self.dests])


def _check_slot(a: Analysis, lf: Leaf, sends: list[Leaf], twice: dict[tuple[str, int], tuple[bool, str]],
                trusted: set[int], rlimit: int) -> Result:
    """``mcast-slot`` of the McastSend at ``lf`` (module docstring): landings over unpublished ones (``twice``, from
    ``_landing_twice``) first, then the lockstep, window and congruence questions, any of which proves it; else the
    interpreter's rule at the issue refutes it or it fails to prove."""
    p = a.program
    op = lf.op
    assert isinstance(op, McastSend)
    name = f"{R.MCAST_SLOT}:{lf.engine}:{list(lf.path)}"
    if _never(a, lf):
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                      "the multicast never runs (its loop runs no iteration)")
    t0 = time.perf_counter()
    again = twice.get((lf.engine, lf.index))
    if again is not None:
        return _landing_twice_result(name, again)
    anchor = p.buffers[op.dest]
    dests = _dest_buffers(a, lf)
    engines = frozenset([lf.engine] + [x.engine for v in a.views.values() for x in v.leaves
                                            if getattr(x.op, "buf", None) in {b.id for b in dests}])
    slot = _Slot(lf, anchor, dests, op.pages, _rel(op), op.front and op.dst is None)
    free = f"each of {len(dests)} receivers has the pages the sender's slot names free"
    # The lockstep and congruence questions read the landing as ``off`` pages past a receiver's write pointer with
    # room for ``off + pages``: pages already pushed land behind the sender's write pointer (``off`` negative), where
    # only the window and the interpreter's own rule say whether they are free.
    if smt.shortcuts() and not op.behind and all(b.capacity == anchor.capacity for b in dests):
        o, _, _ = solve_each(a, slot.lockstep, f"{name}:lockstep", engines, trusted, rlimit)
        if o.status == Status.UNSAT:
            return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, free, seconds=time.perf_counter() - t0)
    windowed = all(b.capacity == anchor.capacity for b in dests) and _sole_sender(a, sends, lf, dests)
    wd: Decoded | None = None
    if windowed:
        o, wd, _ = solve_each(a, slot.window, f"{name}:window", engines, trusted, rlimit)
        if o.status == Status.UNSAT:
            return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, free, seconds=time.perf_counter() - t0)
    # The congruence is asked only where the window is not: where it is, a state the congruence accepts and the
    # window does not is a receiver a whole ring away from the sender's count, which lands on pages that may hold
    # unpublished landings (``_landing_twice`` dropped them) or publishes pages that never landed.
    cong = None if windowed or op.behind else solve_each(a, slot.congruence, f"{name}:congruence", engines, trusted, rlimit)[0]
    if cong is not None and cong.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, free, seconds=time.perf_counter() - t0)
    o, d, _ = solve_each(a, slot.outside, name, engines, trusted, rlimit)
    dt = time.perf_counter() - t0
    bs = p.buffers[op.dest]
    if o.status == Status.SAT and d is not None:
        where = "read" if op.front else "write"
        msg = (f"{lf.engine} can {write_noun(a.program.groups, [op.group])} {op.pages} pages of b{bs.id} when the pages "
               f"its {where} pointer names "
               "are not free at a receiver")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_SLOT, d, msg), dt)
    if o.status == Status.UNSAT and windowed and wd is not None:
        # Free modulo the ring, but a whole ring from the sender's count: the pages under the slot may hold landings
        # not yet published (a candidate: the interpreter replays it or it fails to prove).
        msg = (f"{lf.engine} can {write_noun(a.program.groups, [op.group])} {op.pages} pages of b{bs.id} when a "
               "receiver's count of pages is a whole "
               "ring away from the sender's: the pages under its slot may hold a landing not yet published")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_SLOT, wd, msg), dt)
    if o.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED,
                      "the pages it lands on are free at each receiver, but not inside its window counted from "
                      "the sender's pointer, nor congruent with it: whether they hold a landing not yet "
                      "published is not decided (outside the decided fragment)", seconds=dt)
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _check_publish(a: Analysis, lf: Leaf, sends: list[Leaf], trusted: set[int], rlimit: int) -> Result:
    """``mcast-publish`` of the receiver Push at ``lf`` into a multicast destination buffer: the pages it publishes
    have landed, shown by the flags its engine saw (one query), else by a counter (``_publish_by_counter``) or the
    senders' barriers (``_publish_by_barrier``)."""
    assert isinstance(lf.op, Push)
    t0 = time.perf_counter()
    br = a.program.buffers[lf.op.buf]
    name = f"{R.MCAST_PUBLISH}:{lf.engine}:{list(lf.path)}"
    if _never(a, lf):
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, "the push never runs (its loop runs no iteration)")
    landers = [x for x in sends if br.id in {b.id for b in _dest_buffers(a, x)}]
    sole = bool(landers) and _sole_sender(a, sends, landers[0], [br])
    if (sole and not _fills_in_order(a, landers, br)) or (
            not sole and any(isinstance(x.op, McastSend) and _rel(x.op) for x in landers)):
        # Publication is per page; the counts below show it only for landings that fill the receiver's pages in the
        # order they are issued (``_fills_in_order``), or at its write pointer (``mcast-slot`` in step, several
        # senders at offset 0).
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED,
                      f"{_noun(a, landers, plural=True)} land in b{br.id} at page offsets that do not fill its pages in "
                      "the order "
                      "they are issued: which pages each push publishes have landed is not decided "
                      "(outside the decided fragment)")
    word, per_flag = _covering_flag(a, lf.engine, br)
    if word is None:
        # Only one sender's landings in issue order make the pages before a flag a prefix of the receiver's.
        restart = _covering_epochs(a, lf, br, landers) if sole else None
        if restart is not None:
            return _publish_by_epochs(a, lf, br, landers, restart, trusted, rlimit, name, t0)
        counter = _covering_counter(a, lf, br)
        if counter is not None:
            return _publish_by_counter(a, lf, br, counter, landers, trusted, rlimit, name, t0)
        return _publish_by_barrier(a, lf, br, landers, trusted, rlimit, name, t0)
    n = lf.op.pages
    engines = frozenset([lf.engine, *(x.engine for x in word.flags)])

    def build(sq: Any) -> z3.BoolRef:
        cm = sq.cm
        return z3.And(sq.enc.position(lf.engine).at(lf), cm.waits_done(word) * per_flag < cm.pushed(br.id) + n)

    o, d, _ = solve_each(a, build, name, engines, trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                      f"flags seen on {word.name} cover every page published", seconds=dt)
    if o.status == Status.SAT and d is not None:
        msg = (f"{lf.engine} can publish pages of b{br.id} before the {_noun(a, landers)} filling them is announced on "
               f"{word.name}")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_PUBLISH_EARLY, d, msg), dt)
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _fills_in_order(a: Analysis, landers: list[Leaf], br: Buffer) -> bool:
    """The multicasts of one sender into ``br`` (``_sole_sender``) fill the pages past its anchor pointer in the order
    they are issued: each lands ``offset`` pages past the anchor where the one before it ended, and the anchor never
    moves past a page no multicast was sent to (abstract interpretation over every path of the sender: the next
    page, relative to the anchor). Then the pages landed, counted as the receiver counts (``mcast-slot``: the window
    query), are always a prefix ``[0, k)`` of them, in issue order, so a count of covered pages is what each push
    may publish (the sharded layernorm's sender: block ``b`` at offset ``b``, then one push of them all)."""
    lf = landers[0]
    op = lf.op
    assert isinstance(op, McastSend)
    anchor = _anchor(op)
    cap = a.program.buffers[op.dest].capacity
    mine = {x.path for x in landers}
    behind = any(isinstance(x.op, McastSend) and x.op.behind for x in landers)
    bad: list[bool] = []

    def step(o: Op, path: tuple[int, ...], st: State) -> State:
        if bad:
            return st
        if isinstance(o, McastSend) and path in mine:
            if any(t[1] != _rel(o) for t in st):  # type: ignore[index]
                bad.append(True)
            return frozenset({("next", _rel(o) + o.pages)})
        if isinstance(o, (Push, Pop)) and ("push" if isinstance(o, Push) else "pop", o.buf) == anchor:
            moved = frozenset(("next", int(t[1]) - o.pages) for t in st)  # type: ignore[call-overload]
            # A sender of pages already pushed moves its anchor first and sends the pages behind it next (down to a
            # ring behind); every send must still be the next page, so the landings stay one run in issue order.
            low = -cap if behind else 0
            if any(int(t[1]) < low or int(t[1]) > cap for t in moved):  # type: ignore[call-overload]
                bad.append(True)  # past a page nothing was sent to (or more pages than the ring holds)
            return moved
        return st

    run_paths(a.views[lf.engine].program.ops, (), frozenset({("next", 0)}), step, a.program.trip_max())
    return not bad


def _sole_sender(a: Analysis, sends: list[Leaf], lf: Leaf, dests: list[Buffer]) -> bool:
    """Every multicast landing in ``dests`` is issued by ``lf``'s engine with ``lf``'s anchor pointer, so the landings
    in each receiver buffer are ordered by one sender's count of that pointer (``_landing_twice`` compares them)."""
    op = lf.op
    assert isinstance(op, McastSend)
    ids = {b.id for b in dests}
    for x in sends:
        assert isinstance(x.op, McastSend)
        if ids & {b.id for b in _dest_buffers(a, x)} and (
                x.engine != lf.engine or x.op.dest != op.dest or _anchor(x.op) != _anchor(op)):
            return False
    return True


def _rel(op: McastSend) -> int:
    """Where the landing's first page sits, in pages past the anchor pointer (``_anchor``): ``offset``, less
    ``behind`` for pages already pushed (negative: behind the write pointer; ``validate`` allows no ``dst`` then)."""
    return op.offset - op.behind


def _anchor(op: McastSend) -> tuple[str, int]:
    """The pointer a multicast's address is relative to, as the op that moves it: a push of the source (back) or of
    ``dst``, a pop of the source (a forwarder)."""
    if op.dst is not None:
        return ("push", op.dst)
    return ("pop", op.buf) if op.front else ("push", op.buf)


def _landing_twice(a: Analysis, sends: list[Leaf]) -> dict[tuple[str, int], tuple[bool, str]]:
    """Multicasts that may land on pages an earlier landing filled and the receiver has not published yet (the third
    case of ``mcast-slot``), by (engine, leaf index): ``(True, why)`` when the same engine issues two whose pages
    overlap, relative to their anchor pointer, with no move of that pointer between that takes the earlier one's
    pages behind it (abstract interpretation over every path: ``facts.run_paths``) — a candidate the interpreter
    replays; ``(False, why)`` when two engines' multicasts land in one buffer at overlapping offsets (their order is
    not decided here). Otherwise each receiver's write pointer, in lockstep with every sender's anchor (the
    ``mcast-slot`` query), is past an earlier landing's pages before the next one lands."""
    p = a.program
    out: dict[tuple[str, int], tuple[bool, str]] = {}
    dests = {g.id: frozenset(g.destinations()) for g in p.groups}
    trip_max = p.trip_max()
    for key in sorted({lf.engine for lf in sends}):
        view = a.views[key]
        index = {lf.path: lf.index for lf in view.leaves}

        def step(op: Op, path: tuple[int, ...], st: State, view: EngineView = view,
                 index: dict[tuple[int, ...], int] = index, key: str = key) -> State:
            if isinstance(op, (Push, Pop)):
                moved = ("push" if isinstance(op, Push) else "pop", op.buf)
                # (dest, group, anchor, lo, hi, leaf): the landing's pages move back as the anchor pointer advances.
                return frozenset(t if t[2] != moved else (*t[:3], int(t[3]) - op.pages, int(t[4]) - op.pages,  # type: ignore[call-overload]
                                                          *t[5:])
                                 for t in st if t[2] != moved or int(t[4]) - op.pages > 0)  # type: ignore[call-overload]
            if not isinstance(op, McastSend):
                return st
            lo, hi, anchor = _rel(op), _rel(op) + op.pages, _anchor(op)
            for t in st:
                if t[0] == op.dest and dests[int(t[1])] & dests[op.group] and (  # type: ignore[call-overload]
                        int(t[3]) < hi and lo < int(t[4])):  # type: ignore[call-overload]
                    out[(key, index[path])] = (True, f"{key} may issue it while the landing of its multicast at "
                                                     f"{list(view.leaves[int(t[5])].path)} into the same pages is "  # type: ignore[call-overload]
                                                     "not yet published (no push or pop of the anchor buffer between "
                                                     "that moves past it)")
            return st | {(op.dest, op.group, anchor, lo, hi, index[path])}

        run_paths(view.program.ops, (), frozenset(), step, trip_max)
    by_dest: dict[int, list[Leaf]] = {}
    for lf in sends:
        for r in _dest_buffers(a, lf):
            by_dest.setdefault(r.id, []).append(lf)
    for b, lfs in sorted(by_dest.items()):
        for x in lfs:
            for y in lfs:
                ox, oy = x.op, y.op
                assert isinstance(ox, McastSend)
                assert isinstance(oy, McastSend)
                rx, ry = _rel(ox), _rel(oy)
                if x.engine < y.engine and rx < ry + oy.pages and ry < rx + ox.pages:
                    why = (f"{x.engine} and {y.engine} both multicast into b{b} at overlapping offsets (pages "
                           f"[{rx}, {rx + ox.pages}) and [{ry}, {ry + oy.pages}) past its "
                           "write pointer): which lands first is not decided")
                    for z in (x, y):
                        out.setdefault((z.engine, z.index), (False, why))
    return out


def _landing_twice_result(name: str, again: tuple[bool, str]) -> Result:
    replayable, why = again
    if replayable:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, why,
                      {"kind": "rule", "rule": R.MCAST_SLOT, "summary": why})
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, why)


def _covering_flag(a: Analysis, engine: str, br: Buffer) -> tuple[Word | None, int]:
    """A flag word owned by ``engine`` whose every flag is preceded, in its sender's program and in the same loop
    body, by a data multicast into ``br``'s cb index with no other multicast reaching ``br``'s site between (a flush,
    a reset of the ready counter, a multicast or flag to other cores or any other op may sit between): flags and data
    multicasts pair one to one; and the pages each flag announces. A write that does not reach ``br``'s site lands
    nothing there, so it neither fills the pages nor shows them (data to receiver 1, data to receiver 2, flag 1,
    flag 2 pairs each flag with its own receiver's data, as the interleaved order does); that each flag lands after
    its data at the site is ``async-flag-overtake``'s."""
    groups = a.program.groups

    def elsewhere(op: Op) -> bool:
        return isinstance(op, (McastSend, McastSetValid, SemIncMcast)) and br.site not in groups[op.group].destinations()

    for w in a.words.values():
        if w.kind != "flag" or w.owner != engine or w.site != br.site or not w.flags:
            continue
        pages: set[int] = set()
        ok = True
        for f in w.flags:
            leaves = a.views[f.engine].leaves
            i = f.index - 1
            while i >= 0 and (not isinstance(leaves[i].op, (McastSend, McastSetValid, SemIncMcast))
                              or elsewhere(leaves[i].op)):
                i -= 1
            prev = leaves[i] if i >= 0 else None
            if prev is None or prev.containers != f.containers or not isinstance(prev.op, McastSend):
                ok = False
                break
            src = a.program.buffers[prev.op.dest]
            if src.cb != br.cb or br.site not in a.program.groups[prev.op.group].destinations():
                ok = False
                break
            assert isinstance(f.op, McastSetValid)
            pages.add(prev.op.pages)
        if ok and len(pages) == 1:
            return w, pages.pop()
    return None, 0


def _covering_counter(a: Analysis, push: Leaf, br: Buffer) -> tuple[Word, Leaf, int] | None:
    """The completion-counter handshake (TT-Lang's pipes, ``PipeLowering.cpp``: the sender's write barrier after
    its data multicast, then ``noc_semaphore_inc`` at each receiver; the receiver's ``wait_min`` on the count before
    it publishes): a monotone word at ``br``'s site whose every increment is preceded, in its engine's program and
    the same body, by a ``WriteBarrier`` preceded by a ``McastSend`` into ``br``'s cb index whose group writes
    ``br``'s site (no other multicast, flag or increment of this word between; each multicast paired with one
    increment), and a wait on it by the pushing engine before ``push`` (in its body or an enclosing one, no push
    of ``br`` between). Returns the word, that wait and the pages each increment announces; None when there is
    none."""
    views = a.views
    leaves = views[push.engine].leaves
    wait: Leaf | None = None
    for x in reversed(leaves[: push.index]):
        if isinstance(x.op, Push) and x.op.buf == br.id:
            return None
        if isinstance(x.op, SemWait) and push.containers[: len(x.containers)] == x.containers:
            w = a.words.get((x.op.sem, br.site))
            if w is not None and w.kind == "monotone":
                wait = x
                break
    if wait is None:
        return None
    assert isinstance(wait.op, SemWait)
    word = a.words[(wait.op.sem, br.site)]
    if not word.incs or any(x.engine != push.engine for x in word.waits):
        return None
    pages: set[int] = set()
    paired: set[tuple[str, int]] = set()
    for inc in word.incs:
        ls = views[inc.engine].leaves
        i, barrier = inc.index - 1, False
        while i >= 0 and ls[i].containers == inc.containers:
            op = ls[i].op
            if isinstance(op, McastSend):
                break
            if isinstance(op, (McastSetValid,)) or (ls[i] in word.incs):
                return None
            barrier = barrier or isinstance(op, WriteBarrier)
            i -= 1
        if i < 0 or ls[i].containers != inc.containers or not barrier:
            return None
        send = ls[i]
        assert isinstance(send.op, McastSend)
        if br.id not in {b.id for b in _dest_buffers(a, send)} or (inc.engine, send.index) in paired:
            return None  # the multicast does not land in ``br`` (another cb index, site or phase)
        paired.add((inc.engine, send.index))
        pages.add(send.op.pages)
    if len(pages) != 1:
        return None
    return word, wait, pages.pop()


def _covering_epochs(a: Analysis, push: Leaf, br: Buffer, landers: list[Leaf]) -> tuple[Word, Leaf] | None:
    """The restarting-sequence handshake (``semaphores.Epochs``; the sharded layernorm's result multicast,
    ``reader_mcast_sender_unary_sharded_ln.cpp:272-299`` and ``reader_mcast_receiver_unary_sharded_ln.cpp:255-260``):
    the pushing engine's nearest wait before ``push`` (in its body or an enclosing one, no push of ``br`` and no
    reset of the word between) is on an ``epochs`` destination word at ``br``'s site, and every multicast landing in
    ``br`` is a top-level op of the sequence's owner (so issue order is text order), on a target whose writes from
    one engine land in issue order: all of them and the word's flags of one landing order (one virtual channel, one
    rectangle: ``ir.program.landing_order``). Returns the word and that wait; None when the handshake is not this
    one."""
    if not a.program.target.ordered_writes or not landers:
        return None
    leaves = a.views[push.engine].leaves
    wait: Leaf | None = None
    for x in reversed(leaves[: push.index]):
        if isinstance(x.op, Push) and x.op.buf == br.id:
            return None
        if isinstance(x.op, SemWait) and push.containers[: len(x.containers)] == x.containers:
            wait = x
            break
    if wait is None:
        return None
    assert isinstance(wait.op, SemWait)
    word = a.words.get((wait.op.sem, br.site))
    if word is None or word.kind != "epochs" or word.epochs is None or word.epochs.is_source(word):
        return None
    if any(wait.index < r.index < push.index for r in word.sets):
        return None
    if any(x.engine != word.epochs.owner or x.containers for x in landers):
        return None
    if len({landing_order(a.program.groups, x.op) for x in (*landers, *word.flags)
            if isinstance(x.op, (McastSend, McastSetValid))}) > 1:
        return None  # the issue order holds on one virtual channel to one rectangle only (ir.program.landing_order)
    return word, wait


def _publish_by_epochs(a: Analysis, lf: Leaf, br: Buffer, landers: list[Leaf], restart: tuple[Word, Leaf],
                       trusted: set[int], rlimit: int, name: str, t0: float) -> Result:
    """``mcast-publish-early`` under the restarting-sequence handshake (``_covering_epochs``), assuming the word's
    protocol (``sem-exact``): the wait before the push passed at threshold ``t`` in epoch ``k`` (its owner's resets
    done), so a flag of epoch ``k`` carrying a value ``t`` accepts landed (the flags of earlier epochs landed before
    reset ``k``, those of later ones are not issued yet; the initial value, when ``t`` accepts it, shows nothing).
    The first such flag in issue order landed at the latest, and every multicast its sender issued before it landed
    first (one engine's writes land in issue order): the pages of those multicasts, a prefix of the receiver's pages
    (``_fills_in_order``), must cover ``pushed + n``."""
    assert isinstance(lf.op, Push)
    word, wait = restart
    e = word.epochs
    assert e is not None
    n = lf.op.pages
    engines = frozenset([lf.engine, e.owner, *(x.engine for x in landers)])

    def build(sq: Any) -> z3.BoolRef:
        enc, cm = sq.enc, sq.cm
        val = enc.q.val
        need = cm.pushed(br.id) + n
        some, idx = enc.last_occurrence(wait)
        t = enc.threshold(wait, idx)
        assert isinstance(wait.op, SemWait)
        eq = wait.op.cond.value == "eq"

        def accepts(v: int) -> z3.BoolRef:
            return t == v if eq else t <= v
        covered: z3.ArithRef = val(0)  # before the first reset: nothing shown
        for k, r in enumerate(word.sets):
            got: z3.ArithRef = need  # no flag of the epoch accepts t: the wait cannot have passed
            for f in reversed(e.epoch_flags(k, word.flags)):
                before = sum(_pages(x) for x in landers if x.index < f.index)
                got = z3.If(accepts(e.value_of(f)), val(before), got)
            covered = z3.If(enc.started(r), got, covered)
        covered = z3.If(accepts(word.init), val(0), covered)
        return z3.And(enc.position(lf.engine).at(lf), z3.Or(z3.Not(some), covered < need))

    o, d, _ = solve_each(a, build, name, engines, trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                      f"the flag of {e.name}'s restarting sequence its wait on {word.name} saw follows every page "
                      "published", seconds=dt)
    if o.status == Status.SAT and d is not None:
        msg = (f"{lf.engine} can publish pages of b{br.id} before the {_noun(a, landers)} filling them is announced on "
               f"{word.name}")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_PUBLISH_EARLY, d, msg), dt)
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _publish_by_counter(a: Analysis, lf: Leaf, br: Buffer, counter: tuple[Word, Leaf, int], landers: list[Leaf],
                        trusted: set[int], rlimit: int, name: str, t0: float) -> Result:
    """``mcast-publish-early`` under the completion-counter handshake: at the push, the last passed wait saw the
    word at its threshold, so that many increments (less the initial value) have landed, each after the multicast
    it announces had landed in ``br``: ``per * (threshold - init) >= pushed + n`` must hold."""
    word, wait, per = counter
    assert isinstance(lf.op, Push)
    n = lf.op.pages
    engines = frozenset([lf.engine, *(x.engine for x in word.incs)])

    def build(sq: object) -> z3.BoolRef:
        enc, cm = sq.enc, sq.cm  # type: ignore[attr-defined]
        some, idx = enc.last_occurrence(wait)
        seen = (enc.threshold(wait, idx) - word.init) * per
        return z3.And(enc.position(lf.engine).at(lf), z3.Or(z3.Not(some), seen < cm.pushed(br.id) + n))

    o, d, _ = solve_each(a, build, name, engines, trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, f"the count on {word.name} it waited for covers every page "
                                                         "published", seconds=dt)
    if o.status == Status.SAT and d is not None:
        msg = (f"{lf.engine} can publish pages of b{br.id} before the {_noun(a, landers)} filling them is counted on "
               f"{word.name}")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_PUBLISH_EARLY, d, msg), dt)
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


def _landed_at_least(enc: object, x: Leaf) -> z3.ArithRef:
    """A lower bound of the occurrences of multicast ``x`` that have landed everywhere: those a WriteBarrier of its
    engine passed after (noc_async_write_barrier returns once every write and multicast it issued is acknowledged;
    a count below the group's is ``checker.understated_counts``'). Each execution of the first later barrier in the
    same body follows one of ``x`` in that iteration; else a later top-level barrier, once it ran, covers every
    occurrence (``x`` runs no more); else none."""
    leaves = enc.views[x.engine].leaves  # type: ignore[attr-defined]
    later = [y for y in leaves[x.index + 1:] if isinstance(y.op, WriteBarrier)]
    same = next((y for y in later if y.containers == x.containers), None)
    top = next((y for y in later if not y.containers), None)
    if same is not None:
        return enc.executed(same)  # type: ignore[attr-defined,no-any-return]
    if top is not None:
        return z3.If(enc.started(top), enc.executed(x), 0)  # type: ignore[attr-defined]
    return enc.q.val(0)  # type: ignore[attr-defined,no-any-return]


def _pages(x: Leaf) -> int:
    assert isinstance(x.op, McastSend)
    return x.op.pages


def _publish_by_barrier(a: Analysis, lf: Leaf, br: Buffer, landers: list[Leaf], trusted: set[int], rlimit: int,
                        name: str, t0: float) -> Result:
    """``mcast-publish-early`` by the senders' write barriers, whatever tells the receiver (sort's peer exchange,
    ``cross_core_data_exchange_common.hpp:90-115``: the remote write, ``noc.async_write_barrier()``, then the
    increment the peer waits for before it pushes): at the push, the multicasts into ``br`` a write barrier has
    covered carry ``pushed + n`` pages at least. Landings sit at the receiver's write pointer (every one of them at
    offset 0, ``mcast-slot``), so a count of covered pages is the pages ``[0, pushed + n)``. The reachability facts
    that show the barriers passed are the handshake's (a waited count the sender raises only after its barrier)."""
    assert isinstance(lf.op, Push)
    n = lf.op.pages
    engines = frozenset([lf.engine, *(x.engine for x in landers)])

    def build(sq: object) -> z3.BoolRef:
        enc, cm = sq.enc, sq.cm  # type: ignore[attr-defined]
        covered = [_landed_at_least(enc, x) * _pages(x) for x in landers]
        total = z3.Sum(covered) if len(covered) > 1 else (covered[0] if covered else enc.q.val(0))
        return z3.And(enc.position(lf.engine).at(lf), total < cm.pushed(br.id) + n)

    o, d, _ = solve_each(a, build, name, engines, trusted, rlimit)
    dt = time.perf_counter() - t0
    if o.status == Status.UNSAT:
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                      f"write barriers of the senders passed over every page of b{br.id} published", seconds=dt)
    if o.status == Status.SAT and d is not None:
        msg = (f"{lf.engine} can publish pages of b{br.id} before a write barrier of their sender shows the "
               f"{_noun(a, landers)} filling them landed")
        return Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED, msg, _cex(R.MCAST_PUBLISH_EARLY, d, msg), dt)
    return Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt)


#: Public names for what other modules ask of multicast delivery (``assume.py``).
dest_buffers = _dest_buffers
covering_flag = _covering_flag
covering_epochs = _covering_epochs


# ---------------------------------------------------------------- per-engine rules (certify/rules.py runs these)


def multicast_destinations(p: Program) -> set[int]:
    """Buffers some multicast lands in (the buffer of the sender's cb index at each destination, in its phase)."""
    phases = p.phase_of_section()
    by_site_cb = {(b.site, phases[b.section], b.cb): b.id for b in p.buffers}
    out: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            if isinstance(op, McastSend):
                src = p.buffers[op.dest]
                for d in p.groups[op.group].destinations():
                    got = by_site_cb.get((d, phases[src.section], src.cb))
                    if got is not None:
                        out.add(got)
    return out


def send(c: EngineRun, op: McastSend, path: tuple[int, ...], s: State) -> State:
    """noc_async_write_multicast: ``async-read-publish`` (reads into its buffer not yet barriered); from the front
    inside the waited window (``cb-read-unwaited``) or from the back inside the reserved window
    (``cb-write-unreserved``); a read issued before it may land in its pages (``async-source-reuse``, never discharged:
    ``LATE``). Its pages are its source until it leaves (``("sb"|"sf", ...)``)."""
    b = op.buf
    if op.behind:
        return _send_pushed(c, op, path, s)
    if ("rd", b) in s:
        c.flag(R.ASYNC_READ_PUBLISH, path, f"mcast_send of b{b} while reads into it may not have landed (no read "
                                         "barrier since)")
    if ("st", b) in s:
        c.flag(R.ASYNC_READ_PUBLISH, path, f"mcast_send of b{b} while fill_tiles or copy_tiles stores into it may not "
                                         "have landed (no drain since)")
    # With no dst the source pages start ``offset`` pages past the pointer (the same address on both sides).
    skip = op.offset if op.dst is None else 0
    if op.front:
        if any(v < skip + op.pages for v, _ in pairs(s, "wt", b)):
            c.flag(R.CB_READ_UNWAITED, path, f"mcast_send of {op.pages} pages from the front of b{b} beyond its "
                                           "waited window")
        tag = "sf"
    else:
        if any(v < skip + op.pages for v, _ in pairs(s, "rsv", b)):
            c.flag(R.CB_WRITE_UNRESERVED, path, f"mcast_send of {op.pages} pages from the back of b{b} beyond "
                                              "its reserved window")
        tag = "sb"
        mine = ring_slots(skip, op.pages, c.caps[b])
        for t in s:
            if t[0] == "rdp" and t[1] == b and t[2] in mine:
                # The read lands after the multicast was issued from its pages: the landing rewrites them.
                c.flag(R.ASYNC_SOURCE_REUSE, t[3], f"read_tiles into b{b} may land in pages a mcast_send issued "  # type: ignore[arg-type]
                                                  "after it reads (no read barrier between them)", (LATE,))
    leaf = c.leaf_at[path]
    srcs = {(tag, b, j, leaf) for j in ring_slots(skip, op.pages, c.caps[b])}
    # Until a write barrier it may not have landed at each destination core (``async-inc-overtake``).
    landing = {("rw", d, leaf) for d in c.p.groups[op.group].destinations()}
    return s | srcs | landing | {("mw", op.vc, op.group, path), ("w",)}


def _send_pushed(c: EngineRun, op: McastSend, path: tuple[int, ...], s: State) -> State:
    """A multicast of pages this engine already pushed (``behind``): ``mcast-source-unpublished`` where a path has
    pushed fewer than the pages it names (``("few", b, n)``: a path that pushed only ``n`` < capacity pages of ``b``,
    ``cb.push``) or has reserved one of their slots again (the reserved window past the write pointer reaches a ring
    past the first page). The pages are then a back multicast's source (``("sb", ...)``, relative to the write
    pointer: a re-reserve or rewrite of them before it left is ``async-source-reuse``)."""
    b = op.buf
    cap = c.caps[b]
    start = op.offset - op.behind  # the first source page, relative to the write pointer (negative: behind it)
    if any(t[0] == "few" and t[1] == b and int(t[2]) < -start for t in s):  # type: ignore[call-overload]
        c.flag(R.MCAST_SOURCE_UNPUBLISHED, path, f"mcast_send of {op.pages} pages {op.behind} pages behind the write "
                                                 f"pointer of b{b} where this engine may have pushed fewer")
    if any(v > cap + start for v, _ in pairs(s, "rsv", b)):
        c.flag(R.MCAST_SOURCE_UNPUBLISHED, path, f"mcast_send of pages of b{b} {op.behind} pages behind the write "
                                                 "pointer after this engine reserved their slot again")
    leaf = c.leaf_at[path]
    mine = ring_slots(start % cap, op.pages, cap)
    for t in s:
        if t[0] == "rdp" and t[1] == b and t[2] in mine:
            c.flag(R.ASYNC_SOURCE_REUSE, t[3], f"read_tiles into b{b} may land in pages a mcast_send issued "  # type: ignore[arg-type]
                                              "after it reads (no read barrier between them)", (LATE,))
    srcs = {("sb", b, j, leaf) for j in mine}
    landing = {("rw", d, leaf) for d in c.p.groups[op.group].destinations()}
    return s | srcs | landing | {("mw", op.vc, op.group, path), ("w",)}


def set_valid(c: EngineRun, op: McastSetValid, path: tuple[int, ...], s: State) -> State:
    """noc_semaphore_set_multicast: ``async-flag-overtake`` when a data multicast may land after it at a core both
    reach: of its landing order (virtual channel and rectangle, ``ir.program.landing_order``), one that may not have
    left (no Flush or WriteBarrier since: ``("mw", vc, group, path)``) on a target whose writes are not ordered; of
    another (``ir.program.landings_may_reorder``), one that may not have landed (no WriteBarrier since: ``("mw", ...)``
    or, flushed, ``("mwf", ...)``; the NoC keeps no order across channels, tt-metal #55555, nor across destinations,
    ``noc.h:23-30``), the reason naming the data op, its landing order and which of the two differs. Its source word
    is in use until it leaves (``("sw", ...)``)."""
    ordered = c.p.target.ordered_writes
    groups = c.p.groups
    key = landing_order(groups, op)
    dests = groups[op.group].destinations()
    data = sorted((t[3], cast("int | None", t[1]), cast(int, t[2])) for t in s if t[0] in ("mw", "mwf"))  # type: ignore[misc]
    overtaken = [(at, vc, g) for at, vc, g in data
                 if landings_may_reorder(landing_order_of(groups, g, vc), groups[g].destinations(), key, dests)]
    if overtaken:
        at, vc, g = overtaken[0]
        dkey = landing_order_of(groups, g, vc)
        c.flag(R.ASYNC_FLAG_OVERTAKE, path,
             f"flag {write_noun(groups, [op.group])} of sem{op.sem} may overtake the data {write_noun(groups, [g])} before "
             "it: it travels on "
             f"{landing_order_text(key)}, the data ({_op_at(c, at)}) on {landing_order_text(dkey)}, "
             f"{apart_text(key, dkey)}, and there is no write barrier between them")
    elif not ordered and any(t[0] == "mw" and landing_order_of(groups, t[2], t[1]) == key for t in s):  # type: ignore[arg-type]
        # one landing order: the data reaches the flag's rectangle, so one noun names both
        noun = write_noun(groups, [op.group])
        c.flag(R.ASYNC_FLAG_OVERTAKE, path,
             f"flag {noun} of sem{op.sem} may overtake the data {noun} before it: target {c.p.target.name} "
             "does not keep writes ordered and there is no flush between them")
    return s | {("sw", op.source, c.leaf_at[path]), ("w",)}


def _op_at(c: EngineRun, path: object) -> str:
    """The op at ``path`` (an op path held in a ``State`` tuple) of ``c``'s engine as a reason names it:
    ``mcast_send at ops[4]``, with its source line (``sender.cpp:27``) when a front end recorded one."""
    assert isinstance(path, tuple)
    loc = c.view.program.source_of(path)
    return f"mcast_send at {path_text(path)}" + (f", {Path(loc.file).name}:{loc.line}" if loc is not None else "")


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., State]] = {McastSend: send, McastSetValid: set_valid}
