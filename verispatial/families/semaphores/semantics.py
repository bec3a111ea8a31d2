"""Semaphores in the reference interpreter: the handlers of SemInc, SemIncMcast, SemSet, SemRmw and SemWait, the
landing of a remote write on a word (``sem-overshoot``) and the words' end balance (``balance-sem``).

Each handler takes the interpreter, the state it changes, the engine index ``e``, its program counter ``pc``, the op
and the list violations are appended to (docs/semantics.md, "Semaphores"; dataflow_api.h noc_semaphore_inc,
noc_semaphore_set, noc_semaphore_wait)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.ir import rules as R
from verispatial.ir.core import WaitCond
from verispatial.ir.obligation import WordRef
from verispatial.ir.ops import SemInc, SemIncMcast, SemRmw, SemSet, SemWait, op_text
from verispatial.petri.pending import INC
from verispatial.petri.position import Violation, path_text

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Entry, Interp, State


def sem_inc(it: Interp, s: State, e: int, pc: PC, op: SemInc, out: list[Violation]) -> None:
    """noc_semaphore_inc: an atomic increment issued now, landing later (``AtomicBarrier`` waits for it); a remote
    write of this engine into the same core must have landed first (``async-inc-overtake``, the NoC family's)."""
    path, iters = pc
    it._inc_overtake(s, e, pc, (op.at,), op_text(op), out)
    s.pending[e] = (*s.pending[e], (INC, path, iters, it.word_id[(op.sem, op.at)], op.by))
    s.ab[e] = True


def sem_inc_mcast(it: Interp, s: State, e: int, pc: PC, op: SemIncMcast, out: list[Violation]) -> None:
    """noc_semaphore_inc_multicast: one atomic per destination core, each landing on its own."""
    path, iters = pc
    it._inc_overtake(s, e, pc, it.program.groups[op.group].destinations(), op_text(op), out)
    incs = tuple((INC, path, iters, w, op.by) for w in it._valid_words[(op.sem, op.group)])
    s.pending[e] = (*s.pending[e], *incs)
    s.ab[e] = True
    # The atomic barrier expects num_dests responses; one comes back per destination (docs/semantics.md
    # "Acknowledgement counts").
    s.aack[e] += op.num_dests - len(incs)


def sem_set(it: Interp, s: State, e: int, pc: PC, op: SemSet, out: list[Violation]) -> None:
    """noc_semaphore_set: a plain local store; ``sem-set-race`` when the word received a remote write this engine
    has not observed since (a lost update)."""
    w = it._word(e, op.sem)
    value = op.value_at(it._env(e, pc)) if op.terms else op.value
    if s.dirty[w] >> e & 1:
        it._v(out, R.SEM_SET_RACE, e, pc,
              f"sem_set(sem{op.sem}, {value}) overwrites sem{op.sem}@{it.word_site[w]}={s.words[w]}, "
              f"which received a remote write since this engine last observed it (lost update)")
    it._word_reuse(s, e, pc, w, value, f"{op_text(op)} changes", out)
    _lose_rmw(s, w, value)
    s.words[w] = value
    s.dirty[w] &= ~(1 << e)


#: What a handler returns when its op takes a second step: the engine stays at the op (``Interp._exec``).
HOLD = "hold"


def sem_rmw(it: Interp, s: State, e: int, pc: PC, op: SemRmw, out: list[Violation]) -> str | None:
    """``Semaphore.up(value)`` of the own word on Wormhole and Blackhole (``*p += value``, LOCAL_NONATOMIC,
    semaphore_dm_impl.h:79-93): two steps of the engine. The first loads the word (observing it) and holds the engine
    at the op (``HOLD``); the second stores the loaded value plus ``by`` — ``sem-rmw-race`` when a write changed the
    word in between (it is lost) — as a write of the word every other engine of the site must observe before a SemSet
    of its own, and one an equality wait may be jumped over by (as an increment's landing)."""
    w = it._word(e, op.sem)
    held = s.rmw[e]
    if held is None:
        s.rmw[e] = (w, s.words[w], False)
        s.dirty[w] &= ~(1 << e)
        return HOLD
    _, loaded, lost = held
    s.rmw[e] = None
    if lost:
        it._v(out, R.SEM_RMW_RACE, e, pc,
              f"{op_text(op)} stores {loaded} + {op.by} into sem{op.sem}@{it.word_site[w]}={s.words[w]}, which a write "
              f"changed between its load and its store (lost update)")
    remote_write(it, s, w, loaded + op.by, e, pc, out)
    s.dirty[w] &= ~(1 << e)
    return None


def _lose_rmw(s: State, w: int, new: int) -> None:
    """A write of ``new`` into word ``w``: every read-modify-write of ``w`` in flight that loaded before it will store
    over it (a write leaving the value as it is loses nothing: the store gives what running it first would)."""
    if new != s.words[w]:
        for e2, held in enumerate(s.rmw):
            if held is not None and held[0] == w and not held[2]:
                s.rmw[e2] = (w, held[1], True)


def sem_wait(it: Interp, s: State, e: int, pc: PC, op: SemWait, out: list[Violation]) -> None:
    """noc_semaphore_wait (-_min): passing the wait observes the word (it blocks until the condition holds)."""
    w = it._word(e, op.sem)
    s.dirty[w] &= ~(1 << e)


def remote_write(it: Interp, s: State, w: int, new: int, src: int, src_pc: PC, out: list[Violation]) -> None:
    """A remote write (an increment or a flag multicast of engine ``src``, issued at ``src_pc``) lands on word ``w``
    with value ``new``: ``sem-overshoot`` for every equality wait at the word's site it leaves or jumps over; every
    engine of the site must observe the new value before a SemSet of its own."""
    old = s.words[w]
    site, sem = it.word_site[w], it.word_sem[w]
    if new != old:
        mask = it.site_mask.get(site, 0)
        for e2 in range(it.n):
            pc = s.pcs[e2]
            if not mask >> e2 & 1 or pc is None:
                continue
            op = it._ops[e2][pc[0]]
            # An equality wait misses its value when a write leaves it (old == v) or jumps over it.
            want = op.threshold(it._env(e2, pc)) if isinstance(op, SemWait) else 0
            if isinstance(op, SemWait) and op.cond is WaitCond.EQ and op.sem == sem and (
                    want == old or old < want < new):
                src_op = op_text(it._ops[src][src_pc[0]])
                how = "is enabled" if want == old else "is pending and the value jumps over it"
                it._v(out, R.SEM_OVERSHOOT, e2, pc,
                      f"sem{sem}@{site} goes {old} -> {new} while this wait for =={want} {how} "
                      f"({src_op} issued by {it.keys[src]} at {path_text(src_pc[0])} lands)")
    it._word_reuse(s, src, src_pc, w, new, f"{op_text(it._ops[src][src_pc[0]])} lands in", out)
    _lose_rmw(s, w, new)
    s.words[w] = new
    s.dirty[w] = it.site_mask.get(site, 0)


def balance(it: Interp, s: State) -> list[Violation]:
    """``balance-sem`` of a terminated state: a word neither re-armed by a SemSet, nor initialized by the host at
    launch (tt_metal/impl/program/dispatch.cpp writes it only at launch), nor a mailbox no op reads
    (``Program.mailbox_words``) ends at its initial value."""
    out: list[Violation] = []
    for w, site in enumerate(it.word_site):
        if w not in it.rearmed and w not in it.host_words and w not in it.mailboxes and s.words[w] != it.word_init[w]:
            sem = it.program.semaphores[it.word_sem[w]]
            out.append(Violation(R.BALANCE_SEM, it._site_pos(site, -1),
                                 f"sem{sem.id} ({sem.name})@{site} ends at {s.words[w]}, expected its initial "
                                 f"{it.word_init[w]} (the word is not re-armed by a SemSet)",
                                 WordRef(sem.id, site)))
    return out


def inc_lands(it: Interp, s: State, e: int, en: Entry, dest: int, out: list[Violation]) -> None:
    """An atomic increment (one of a SemInc, or one destination's of a SemIncMcast) lands on its word: a remote
    write of the word plus ``by``."""
    remote_write(it, s, en[3], s.words[en[3]] + en[4], e, (en[1], en[2]), out)


#: The interpreter's handlers of this family's op classes (``petri/interp.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {SemInc: sem_inc, SemIncMcast: sem_inc_mcast, SemSet: sem_set,
                                            SemRmw: sem_rmw, SemWait: sem_wait}

def sem_wait_enabled(it: Interp, s: State, e: int, pc: PC, op: SemWait) -> bool:
    """noc_semaphore_wait returns once the engine's word equals its value; noc_semaphore_wait_min once it is at
    least it (a threshold affine in loop indices at the current iteration)."""
    v = s.words[it._word(e, op.sem)]
    want = op.threshold(it._env(e, pc)) if op.terms else op.value
    return v == want if op.cond is WaitCond.EQ else v >= want


def sem_wait_blocked(it: Interp, s: State, e: int, pc: PC, op: SemWait) -> str:
    w = it._word(e, op.sem)
    rel = "==" if op.cond is WaitCond.EQ else ">="
    return f"sem{op.sem}@{it.word_site[w]}={s.words[w]}, waits {rel}{op.threshold(it._env(e, pc))}"


#: When a step of each blocking op class is enabled ``(interp, state, engine, pc, op) -> bool`` (``Interp.can_step``).
ENABLED: dict[type, Callable[..., bool]] = {SemWait: sem_wait_enabled}

#: What blocks a step of each blocking op class, with the word's value (``Interp.block_detail``).
BLOCKED: dict[type, Callable[..., str]] = {SemWait: sem_wait_blocked}

#: The landing of what each op class issues ``(interp, state, engine, entry, destination, violations)``.
LANDINGS: dict[type, Callable[..., Any]] = {SemInc: inc_lands, SemIncMcast: inc_lands}
