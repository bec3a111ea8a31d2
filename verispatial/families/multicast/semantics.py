"""Multicast in the reference interpreter: the handlers of McastSend and McastSetValid, a multicast leaving its source
and landing at each destination (``mcast-slot``), and ``mcast-publish-early`` at a receiver's push.

Each handler takes the interpreter, the state it changes, the engine index ``e``, its program counter ``pc``, the op
and the list violations are appended to (docs/semantics.md, "Asynchronous NoC" and "Acknowledgement counts";
dataflow_api.h noc_async_write_multicast, noc_semaphore_set_multicast). A multicast is issued by its engine step,
*leaves* its source in a later transition (a McastSetValid reads its source word then) and *lands* at each
destination separately (``LANDINGS``); a write barrier counts its acknowledgements: ``num_dests`` expected, one per
destination it lands at (``State.wack``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import semantics as cb
from verispatial.families.noc import semantics as noc
from verispatial.families.semaphores import semantics as semaphores
from verispatial.ir import rules as R
from verispatial.ir.ops import McastSend, McastSetValid, SemIncMcast, op_text
from verispatial.ir.program import LandingOrder, Program, apart_text, landing_order_of, landing_order_text, walk
from verispatial.petri.pending import MCAST, VALID
from verispatial.petri.position import Violation

if TYPE_CHECKING:
    from verispatial.ir.core import Site
    from verispatial.petri.interp import PC, Entry, Interp, State


def destinations(program: Program, word_id: dict[tuple[int, Site], int]
                 ) -> tuple[dict[tuple[int, int], tuple[int, ...]], dict[tuple[int, int], tuple[int, ...]]]:
    """Where each multicast lands: (its ``dest`` buffer, group) -> the destination buffer ids, and (semaphore, group)
    -> the destination word ids (``word_id``: the interpreter's dense word numbering). A multicast lands in the buffer
    of its ``dest``'s cb index (the source's, or ``dst``'s) at each destination, in that buffer's phase (cb indices
    are reused across phases)."""
    bufs: dict[tuple[int, int], tuple[int, ...]] = {}
    words: dict[tuple[int, int], tuple[int, ...]] = {}
    phases = program.phase_of_section()
    by_site_cb = {(b.site, phases[b.section], b.cb): b.id for b in program.buffers}
    for ep in program.programs:
        for op in walk(ep.ops):
            if isinstance(op, McastSend):
                src = program.buffers[op.dest]
                dests = program.groups[op.group].destinations()
                bufs[(op.dest, op.group)] = tuple(by_site_cb[(d, phases[src.section], src.cb)] for d in dests)
            elif isinstance(op, (McastSetValid, SemIncMcast)):
                dests = program.groups[op.group].destinations()
                words[(op.sem, op.group)] = tuple(word_id[(op.sem, d)] for d in dests)
    return bufs, words


def publish_early(it: Interp, s: State, e: int, pc: PC, b: int, n: int, out: list[Violation]) -> None:
    """``mcast-publish-early``: a receiver's ``push(b, n)`` of a multicast destination ``b`` publishes a page no
    multicast has landed in since it was last published (``State.landed``: the pages past the write pointer that
    landed); the push then moves the write pointer past them."""
    if b not in it.mcast_dests:
        return
    need = (1 << n) - 1
    if s.landed[b] & need != need:
        missing = next(k for k in range(n) if not s.landed[b] >> k & 1)
        it._v(out, R.MCAST_PUBLISH_EARLY, e, pc,
              f"push(b{b}, {n}) publishes pages [{s.pushed[b]}, {s.pushed[b] + n}) but no remote write has landed in "
              f"page {s.pushed[b] + missing} of b{b} yet")
    s.landed[b] >>= n


def send(it: Interp, s: State, e: int, pc: PC, op: McastSend, out: list[Violation]) -> None:
    """noc_async_write_multicast of ``pages`` pages of ``op.buf``: from the front (a forwarder: the waited window,
    ``cb-read-unwaited``), from the back (the reserved window, ``cb-write-unreserved``) or from pages this engine
    already pushed (``behind``: pushed, its slot not reserved again, ``mcast-source-unpublished``). Its pages stay its source
    until it leaves (pages already pushed are a back multicast's: their consumer's pop is not a reuse, the
    producer's re-reserve is); the write barrier expects ``num_dests`` acknowledgements."""
    path, iters = pc
    b = op.buf
    if not op.behind:
        # Pages already pushed were published by that push, which asked for their reads' barrier.
        noc.read_publish(it, s, e, pc, b, op_text(op), out)
    # With no dst the source pages sit ``offset`` pages past the source pointer and land at their own address; with
    # dst they start at the source pointer and land ``offset`` pages past this engine's write pointer of dst.
    skip = op.offset if op.dst is None else 0
    if op.behind:
        # The address this engine took ``behind`` pages before its write pointer (before the push that published
        # them, reader_mcast_sender_unary_sharded_ln.cpp:267-282): the pages must be ones it pushed, whose bytes it
        # has not reserved again since (a consumer's pop alone changes no byte; the producer's next reserve of the
        # slot hands it to its own writes).
        cb.role(it, s, e, pc, b, True, out)
        first = s.pushed[b] - op.behind + skip
        cap = it.caps[b]
        if first < 0:
            it._v(out, R.MCAST_SOURCE_UNPUBLISHED, e, pc,
                  f"{op_text(op)} sends pages [{first}, {first + op.pages}) of b{b}, but this engine has pushed only "
                  f"{s.pushed[b]} pages: page {first} was never pushed")
        elif s.rsv_end[b] > first + cap:
            it._v(out, R.MCAST_SOURCE_UNPUBLISHED, e, pc,
                  f"{op_text(op)} sends pages [{first}, {first + op.pages}) of b{b}, but this engine reserved "
                  f"[{s.pushed[b]}, {s.rsv_end[b]}) since: page {first}'s slot is reserved again")
        else:
            # The address is get_write_ptr taken before the pushes of its pages plus bytes: nothing wraps it either.
            pt = it.page_tiles[b]
            cb.past_end(it, e, pc, b, s.pushed[b], skip * pt, op.pages * pt, f"{op_text(op)} sends", "write", out,
                        back=op.behind)
    elif op.front:
        cb.role(it, s, e, pc, b, False, out)
        first = s.popped[b] + skip
        if first + op.pages > s.wait_end[b]:
            it._v(out, R.CB_READ_UNWAITED, e, pc,
                  f"{op_text(op)} sends pages [{first}, {first + op.pages}) from the front of "
                  f"b{b}, but the waited window is [{s.popped[b]}, {max(s.wait_end[b], s.popped[b])})")
        else:
            pt = it.page_tiles[b]
            cb.past_end(it, e, pc, b, s.popped[b], skip * pt, op.pages * pt, f"{op_text(op)} sends", "read", out)
    else:
        cb.role(it, s, e, pc, b, True, out)
        first = s.pushed[b] + skip
        if first + op.pages > s.rsv_end[b]:
            it._v(out, R.CB_WRITE_UNRESERVED, e, pc,
                  f"{op_text(op)} sends pages [{first}, {first + op.pages}) from the back of "
                  f"b{b}, but the reserved window is [{s.pushed[b]}, {max(s.rsv_end[b], s.pushed[b])})")
        else:
            pt = it.page_tiles[b]
            cb.past_end(it, e, pc, b, s.pushed[b], skip * pt, op.pages * pt, f"{op_text(op)} sends", "write", out)
    if op.dst is None:
        slot = first % it.caps[b]
    else:
        # The address is this engine's write pointer of dst (get_write_ptr: the producer's own), so it must be dst's
        # producer (``cb-single-producer`` otherwise); the pages land from there on, as the address runs (no wrap).
        cb.role(it, s, e, pc, op.dst, True, out)
        dpt = it.page_tiles[op.dst]
        cb.past_end(it, e, pc, op.dst, s.pushed[op.dst], op.offset * dpt, op.pages * dpt,
                    f"{op_text(op)} lands", "write", out)
        slot = (s.pushed[op.dst] + op.offset) % it.caps[op.dst]
    src = (it.root[b], it._page_slots(b, first, op.pages), b)
    entry: Entry = (MCAST, path, iters, b, op.pages, slot, False, it._mcast_bufs[(op.dest, op.group)], src,
                    op.front, op.offset)
    s.pending[e] = (*s.pending[e], entry)
    s.mc_since[e] = s.mc_since[e] | {(b, op.group, op.vc, False)}
    s.wb[e] = True
    s.wack[e] += op.num_dests - len(entry[7])


def set_valid(it: Interp, s: State, e: int, pc: PC, op: McastSetValid, out: list[Violation]) -> None:
    """noc_semaphore_set_multicast of the engine's word of ``op.source`` onto ``op.sem`` at every destination;
    ``async-flag-overtake`` when a data multicast issued before it may land after it at a core both reach: of its
    landing order (``ir.program.landing_order``) on a target whose writes are not ordered, one with no Flush or
    WriteBarrier between them (it may leave later: tt-metal #12678); of another, on another virtual channel or to
    another rectangle, one with no WriteBarrier between them (a Flush sees it leave, not land, and the NoC keeps no
    order across channels, tt-metal #55555, nor across destinations, ``noc.h:23-30``)."""
    path, iters = pc
    mine = it.order[e][path]
    groups = it.program.groups
    # buffer first, then channel (none before 0) and group: the data multicast the reason names is the first
    apart = sorted(((b, g, vc) for b, g, vc, _flushed in s.mc_since[e] if it.may_reorder(g, vc, op.group, op.vc)),
                   key=lambda t: (t[0], -1 if t[2] is None else t[2], t[1]))
    across = sorted({b for b, _g, _vc in apart})
    early = sorted({b for b, g, vc, flushed in s.mc_since[e]
                    if landing_order_of(groups, g, vc) == mine and not (it.ordered or flushed)})
    if across or early:
        if across:  # the first such data multicast's landing order, named beside the flag's
            b0, g0, vc0 = apart[0]
            theirs: LandingOrder = landing_order_of(groups, g0, vc0)
        why = (f"no write_barrier between them and it travels on {landing_order_text(mine)}, b{b0}'s on "
               f"{landing_order_text(theirs)}: {apart_text(mine, theirs)}" if across else
               f"no flush/write_barrier between them and {it.program.target.name} does not order writes")
        bufs = ", ".join(f"b{b}" for b in (across or early))
        it._v(out, R.ASYNC_FLAG_OVERTAKE, e, pc,
              f"mcast_set_valid(sem{op.sem}, g{op.group}) may overtake the mcast_send of {bufs}: {why}")
    entry: Entry = (VALID, path, iters, it._word(e, op.source), None, op.sem, False,
                    it._valid_words[(op.sem, op.group)])
    s.pending[e] = (*s.pending[e], entry)
    s.wb[e] = True
    s.wack[e] += op.num_dests - len(entry[7])


def leave(it: Interp, s: State, e: int, i: int) -> None:
    """The multicast at slot ``i`` of engine ``e``'s in-flight list leaves its source (a flag reads its source word
    now). The multicasts that left come first, in leave order: it moves before every one not yet left."""
    pend = s.pending[e]
    en = pend[i]
    value = s.words[en[3]] if en[0] == VALID else en[4]
    j = next(j for j, x in enumerate(pend) if x[0] >= MCAST and not x[6])
    rest = pend[:i] + pend[i + 1 :]
    s.pending[e] = (*rest[:j], (*en[:4], value, en[5], True, *en[7:]), *rest[j:])


def data_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """A data multicast lands in buffer ``dest`` at the sender's slot (the L1 address it computed), wherever that is
    relative to the receiver's write pointer: ``mcast-slot`` when a page it writes is not one of the receiver's free
    pages (the ring past the write pointer up to the read pointer: a page pushed and not popped holds published data
    it would overwrite) or already holds a landing the receiver has not published (data not yet consumed). Which
    pages each push publishes is ``mcast-publish-early``'s (``State.landed``, per page). The hardware asks no more:
    the sharded layernorm's sender writes block ``b`` at ``b`` pages past the address of ``ex_global`` it took before
    pushing it (reader_mcast_sender_unary_sharded_ln.cpp:267-282, ttnn 0.81.1) while each receiver reserves, waits and pushes
    one page per block (reader_mcast_receiver_unary_sharded_ln.cpp:254-261), so its write pointer has moved on by
    the time block 1 lands. The bytes change now (``alias-clobber``, ``async-source-reuse``)."""
    issue_pc: PC = (en[1], en[2])
    br, pages, ps = dest, en[4], en[5]
    cap = it.caps[br]
    free = cap - (s.pushed[br] - s.popped[br])
    at = (ps - s.pushed[br]) % cap  # where it lands, in pages past the receiver's write pointer
    mine = ((1 << pages) - 1) << at
    site = it.program.buffers[br].site
    if at + pages > free:
        # The first page it writes that is not free holds page ``pushed + held - cap``: pushed, not popped.
        held = s.pushed[br] + max(at, free) - cap
        it._v(out, R.MCAST_SLOT, e, issue_pc,
              f"mcast_send of {pages} pages lands in b{br} at {site} {at} pages past its write pointer but b{br} has "
              f"only {free} free pages (it overwrites page {held}, pushed and not popped)")
    elif s.landed[br] & mine:
        page = s.pushed[br] + next(k for k in range(at, at + pages) if s.landed[br] >> k & 1)
        it._v(out, R.MCAST_SLOT, e, issue_pc,
              f"mcast_send of {pages} pages lands in b{br} at {site} on page {page}, which an earlier landing filled "
              f"and b{br} has not published yet")
    what = f"{op_text(it._ops[e][en[1]])} lands in"
    slots = it._page_slots(br, s.pushed[br] + at, pages)
    it._alias_write(s, e, issue_pc, br, slots, what, out)
    noc.source_reuse(it, s, e, issue_pc, br, slots, what, out)
    s.landed[br] |= mine & ((1 << cap) - 1)


def flag_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """A flag multicast lands on word ``dest`` with the value it read when it left (a remote write:
    ``semaphores.remote_write``)."""
    semaphores.remote_write(it, s, dest, en[4], e, (en[1], en[2]), out)


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {McastSend: send, McastSetValid: set_valid}

#: The landing of what each op class issues ``(interp, state, engine, entry, destination, violations)``.
LANDINGS: dict[type, Callable[..., Any]] = {McastSend: data_lands, McastSetValid: flag_lands}
