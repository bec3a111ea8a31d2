"""Which protocol each semaphore word follows, decided from the program's structure alone.

A word is (semaphore id, site). The checker reduces every word to a monotone counter so that deadlock and
ordering questions become questions about counters (DESIGN §7, route step 3). The reduction is sound only under
the obligations each protocol lists; those are discharged separately (``counters.py``). Words that follow no
protocol here are reported as outside the decided fragment (failed-to-prove), never assumed.

Protocols:
- ``monotone``: only increments (by >= 0) land on it — ``SemInc`` aimed at its site, and ``SemIncMcast`` whose
  rectangle holds the site (one atomic per destination, each counted as an increment of that destination's word),
  and ``SemRmw`` of an engine of the site (a non-atomic read-modify-write: an increment once no write lands between
  its load and its store, obligation ``sem-rmw-race``, checked with the word's other ones); value = init +
  increments issued. Its waits may have thresholds growing with the loop indices
  (``noc_semaphore_wait_min(sem, ++expected)``: ``value + sum(coef * index)``), ``ge`` or ``eq``.
- ``reset``: one engine at the site waits on it and resets it to ``init``; each reset's previous op on the word (in
  the owner's program order) is a wait with a constant threshold in the same body (other ops may sit between: a
  sender may multicast before it resets its ready counter) — the multicast ready counter: wait ==n, set 0; the
  rendezvous gather; a counter waited with growing thresholds ``wait_min(sem, ++expected)`` and reset after a final
  wait. Each passed *consuming* wait (the one before a reset) consumes what it saw: ``v - init`` for ``eq v``; for
  ``ge v`` the least amount ``>= v - init`` the word's increments can add up to (``least_landing``: one increment
  by 2 past ``ge 1`` consumes 2), which is what it saw once the obligation holds. Other waits consume nothing.
  value = init + increments issued - consumed. Obligation: when the reset runs, exactly the consumed increments have
  been issued (no lost update). A word nothing increments may be reset anywhere (to ``init``: it never leaves it).
  A top-level reset that is the owner's only one, after a loop of growing waits whose loops have constant counts
  (argmax's secondary hand-off as shipped, ``reader_argmax_interleaved_multicore.cpp:449, 551``), carries what the
  loop's last pass consumes (``_last_pass``); the passes consume nothing.
  A reset with no op of the owner on the word before it in the text, or right after another reset (``fresh``:
  argmax's ``done_sem.set(0)`` at the top of its loop, ``reader_argmax_interleaved_multicore.cpp:392``), consumes
  nothing: its obligation is that no increment beyond those consumed has been issued when it runs.
- ``flag``: one engine sets it to ``I`` and waits for ``V``, alternately (set, wait, set, wait ...); remote
  writes are flag multicasts whose source word holds the constant ``V`` (the multicast valid flag). The k-th wait
  returns once k flags have landed. Obligations: flag k is not issued before set k, nor before wait k-1 returns.
  A word whose initial value is ``I`` may start with its wait (``primed``: the launch is the first reset), so the
  receiver's vendor order — wait for VALID, then reset to INVALID (tt-metal
  ``models/demos/deepseek_v3_b1/unified_kernels/mcast.hpp``: ``noc_semaphore_wait(ptr, VALID)`` then
  ``noc_semaphore_set(ptr, INVALID)``) — is the same protocol with set k counted from the launch.
- ``mailbox``: a word only one-word remote writes (``InlineWrite``, ``noc_inline_dw_write``) write and no op reads
  (no wait, set, increment or flag touches it): a slot a kernel reads with plain loads. Nothing blocks on it; it is
  exempt from end balance (``Program.mailbox_words``). A word inline writes land on that anything else touches is
  ``unsupported``.
- ``source``: a word a flag multicast reads at its sender's site (``McastSetValid.source``: the flag's own
  semaphore, or another one such as a constant VALID word, noc_semaphore_set_multicast(src, dst, ...)), only ever
  holding one value ``V`` whenever a multicast reads it (its initial value or one set before its first use), and
  nothing else writes it.

- ``sequence``: a word that carries a sequence of values (``Sequence``; issue 16 item 6) — argmax's start word
  (ttnn 0.81.1 ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp``: ``start_sem.set(k + 1)``
  at 394, ``set_multicast<MCAST_INCL_SRC>`` at 398, ``wait_min(k + 1)`` at 417, ``start_sem.set(0)`` and its copy
  at 556-563), or a flag source set to a new constant before each send. Its own word: one engine (the owner) sets
  it, no increment lands on it, and the only remote writes are the owner's loopback copies of the word itself; the
  sets are *rising* — values ``v + sum(c * index)`` that strictly increase in execution order, all above ``init``
  (each ``c >= 0`` and every loop that may run twice outweighs the loops inside it; two rising sets share no such
  loop, the later starts above the most the earlier reaches) — then *resets* to ``init`` at top level (the argmax
  reset), with sets to ``init`` before the first rising one allowed. Each flag multicast reading the word copies the
  value of the latest set before it in the same iteration (``Carrier``: the set must be in the flag's own loop body
  or an enclosing one, or every rising set in an earlier top-level op; a set later in a loop the flag shares is the
  previous iteration's value: outside). Its destinations (the words the flags land on, the owner's site too for a
  loopback group with ``sem == src``) receive nothing else: no increment, no set, no other flag, and are no flag's
  source; they start at ``init``. Any engine of a word's site may wait on it, ``ge`` or ``eq``, thresholds growing
  or not.

  Why counters decide it. The word takes only values its owner set (loopback copies carry values it held), so every
  value a sequence word ever holds is at most the largest rising value set so far: a passed wait saw at least its
  threshold, so that largest value is at least the threshold (a fact in every run, ``counters.py``). Once the
  source is not changed before a flag leaves (``async-source-reuse``), a flag copies the value of the set its
  carrier names, and the flags of one engine reading the word land at each destination in the order they left
  (they share one virtual channel: flags on two are outside the protocol), which is issue order for flags that copy
  different values (a set between them waits for the earlier one to leave): a destination holds the latest copy
  that landed, non-decreasing until the copy of the reset. So once everything landed (as in a deadlock) a
  destination's value is the largest value a flag issued to it copied, or ``init`` once a copy of the reset was
  issued; the own word's is its owner's latest set, or ``init`` after a reset,
  when every loopback copy lands and is seen by a wait of its owner on the word before the owner's next set
  (obligation ``sem-set-race``, decided on the owner's program order alone: ``encoding.loopback_unseen``; a copy
  landing after a set would take the word back, and the landing marks the word until the owner observes it). An
  equality wait on a destination is ``sem-overshoot`` when a copy above its threshold, or the reset's copy, may be
  issued while its engine waits there (tt-metal #50314: the reduce core laps a worker waiting ``== k + 1``).

- ``epochs``: a flag source whose sequence restarts and the words its flags land on (``Epochs``; the sharded
  layernorm's VALID word, ``reader_mcast_sender_unary_sharded_ln.cpp:138, 141, 272, 290`` and
  ``reader_mcast_receiver_unary_sharded_ln.cpp:155, 157, 259``): the own word set at top level to values rising
  within each epoch, each destination reset by its owner once per epoch, its wait before each later reset accepting
  only the previous epoch's last flag. Obligation (``sem-flag-early``): each epoch's first flag is issued after its
  reset. docs/checker.md, "Words that carry a sequence which restarts".

Flag words and the consuming waits of reset words keep constant thresholds (a growing one there is outside the decided
fragment). Ops inside a loop that never runs take no part in any protocol.

A word outside every protocol (``unsupported``) that only sets and flag multicasts write still carries what every
run shows of it (``landings``): a wait accepting no value a set or the launch stores passed on a flag landing, so a
flag that may carry a value it accepts was issued and had left; the counter model states it (docs/checker.md,
"Words outside the protocols").
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import attrs

from verispatial.certify.structure import EngineView, Leaf, LoopCtx
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    INCREMENTS,
    Flush,
    If,
    InlineWrite,
    Loop,
    McastSetValid,
    Op,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    WriteBarrier,
    count_max,
)
from verispatial.ir.program import Group, Program, unordered_pair, write_noun


@attrs.frozen
class Carrier:
    """The value a flag multicast of a sequence copies (``Sequence``), as the source word holds it when the flag is
    issued (the value leaves with it: ``async-source-reuse`` keeps the word unchanged until then).

    ``kind``: ``init`` — no rising set ran before it (the word's initial value), or, with ``post``, a reset to the
    initial value after the sequence did (the flag restores the destinations); ``same`` — ``rising``, a rising set of
    the same loop body or an enclosing one, ran before it in the same iteration: the flag copies that set's value at
    the flag's own loop indices; ``after`` — every rising set sits in a top-level op before the flag's: it copies the
    last value the sequence reached."""

    kind: str  # "init" | "same" | "after"
    rising: Leaf | None = None
    post: bool = False


@attrs.frozen
class Sequence:
    """A word that carries a sequence of values (the ``sequence`` protocol of the module docstring): its owner's
    ``rising`` sets store strictly increasing values (each ``v + sum(c * index)``, in program order; all above
    ``init``), ``resets`` set it back to ``init`` at top level after every rising set, ``early`` sets store ``init``
    before any of them; ``flags`` are the owner's flag multicasts that read it, each with the value it copies
    (``carriers``, same order)."""

    sem: int
    site: Site
    owner: str
    init: int
    rising: tuple[Leaf, ...]
    resets: tuple[Leaf, ...]
    early: tuple[Leaf, ...]
    flags: tuple[Leaf, ...]
    carriers: tuple[Carrier, ...]

    @property
    def name(self) -> str:
        return f"sem{self.sem}@{self.site}"

    def carrier(self, flag: Leaf) -> Carrier:
        return self.carriers[self.flags.index(flag)]

    def is_source(self, w: Word) -> bool:
        """Whether ``w`` is the sequence's own word (else a destination its flags copy it to)."""
        return (w.sem, w.site) == (self.sem, self.site)


@attrs.frozen
class Epochs:
    """A flag source that carries a sequence which restarts (issue 16 item 6; the sharded layernorm's VALID word,
    ``reader_mcast_sender_unary_sharded_ln.cpp:138, 141, 272, 290``: VALID, then ``block + 2`` for each block, then
    VALID again in the next pass) and the words its flags land on, each reset by its owner once per pass
    (``reader_mcast_receiver_unary_sharded_ln.cpp:155``). Decided in a restricted form (``_epoch_source``,
    ``_epoch_destination``): the owner's
    ``sets`` and ``flags`` of the own word are all top-level ops (each runs once, in text order), the values split
    into *epochs*, maximal runs that rise strictly from above ``init`` (``epoch_of`` per set, a new epoch at every
    set not above the one before it); each flag copies the latest set before it (``carried``, its epoch
    ``flag_epoch``). Nothing waits on the own word and nothing else writes it. A destination (``Word.kind``
    ``epochs``, its resets ``Word.sets``) is reset by its owner to its initial value once per epoch, at top level, reset
    ``k`` before epoch ``k``; before reset ``k + 1`` its owner's last op on the word is a wait that accepts, of the
    values epoch ``k``'s flags to it carry and its initial value, only the last flag's (docs/checker.md, "Words that
    carry a sequence which restarts")."""

    sem: int
    site: Site
    owner: str
    init: int
    sets: tuple[Leaf, ...]
    epoch_of: tuple[int, ...]
    flags: tuple[Leaf, ...]
    carried: tuple[int, ...]
    flag_epoch: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"sem{self.sem}@{self.site}"

    @property
    def count(self) -> int:
        """How many epochs the sequence runs."""
        return self.epoch_of[-1] + 1

    def is_source(self, w: Word) -> bool:
        return (w.sem, w.site) == (self.sem, self.site)

    def value_of(self, f: Leaf) -> int:
        return self.carried[self.flags.index(f)]

    def epoch_flags(self, k: int, onto: tuple[Leaf, ...]) -> tuple[Leaf, ...]:
        """The flags of epoch ``k`` among ``onto`` (those landing on one destination), in issue order."""
        return tuple(f for f, e in zip(self.flags, self.flag_epoch, strict=True) if e == k and f in onto)


@attrs.frozen
class Word:
    """How one semaphore word is used and which protocol it follows (``kind``; ``why`` when unsupported)."""

    sem: int
    site: Site
    kind: str  # "unused" | "monotone" | "reset" | "flag" | "source" | "mailbox" | "sequence" | "epochs" | "unsupported"
    init: int
    incs: tuple[Leaf, ...] = ()  # SemInc, SemIncMcast and SemRmw leaves that add to this word (each ``by``)
    flags: tuple[Leaf, ...] = ()  # McastSetValid leaves (of senders) that write this word
    sets: tuple[Leaf, ...] = ()
    waits: tuple[Leaf, ...] = ()
    #: reset: the waits right before a reset, and a reset after a loop of growing waits (``_last_pass``: it carries
    #: what that loop's last pass consumes; a SemSet leaf)
    consuming: tuple[Leaf, ...] = ()
    consumes: tuple[int, ...] = ()  # reset: what one pass of each ``consuming`` wait consumes (``consumption``)
    owner: str | None = None  # the one engine at the site that sets/waits it
    value: int | None = None  # flag: V (the value a flag writes); source: V
    why: str = ""
    primed: bool = False  # flag: the owner waits first, its initial value counting as the first reset
    reset_value: int | None = None  # flag: I (the value the owner's resets write)
    fresh: tuple[Leaf, ...] = ()  # reset: sets no consuming wait precedes (they consume nothing: none may be due)
    seq: Sequence | None = None  # sequence: the sequence the word carries (its own, or the one its flags copy)
    epochs: Epochs | None = None  # epochs: the restarting sequence the word carries (its own, or its flags')
    inline: tuple[Leaf, ...] = ()  # InlineWrite leaves (one-word remote writes) that land on it
    #: unsupported: per engine, its waits that only a flag landing since its reset before them can pass, with the
    #: flag multicasts that may carry a value they accept (``landings``: a reachability fact, no protocol)
    landed_by: tuple[tuple[tuple[Leaf, ...], tuple[Leaf, ...]], ...] = ()
    #: unsupported, written only by sets and flag multicasts: the values sets and the launch store (``stored``), and
    #: every flag multicast landing on it with the values it may carry (None: any), for ``counters.py``'s fact that a
    #: passed wait accepting none of ``stored`` saw a landing of a flag that may carry a value it accepts
    stored: tuple[tuple[int, int] | None, ...] = ()
    carriers: tuple[tuple[Leaf, tuple[tuple[int, int] | None, ...]], ...] = ()

    @property
    def name(self) -> str:
        return f"sem{self.sem}@{self.site}"

    def consumed_by(self) -> tuple[tuple[Leaf, int], ...]:
        """Each consuming wait of a reset word with what one pass of it consumes (``consumption``)."""
        return tuple(zip(self.consuming, self.consumes, strict=True))


#: ``least_landing`` sums increments exactly up to this amount; beyond it, a bound by their gcd (still a lower bound).
LANDING_EXACT_LIMIT = 1 << 16


def least_landing(need: int, bys: frozenset[int]) -> int:
    """The least amount ``>= need`` that increments of sizes ``bys`` (each ``> 0``, any number of each) add up to:
    what a ``ge`` wait that needs ``need`` more than the reset value sees at the least, since the word it waits on
    moves by whole increments (one increment by 2 past ``ge 1``: 2). ``need <= 0``: 0 (the wait may see nothing new).
    No increments: ``need`` (the wait never returns, so nothing is consumed; any value will do). Exact up to
    ``LANDING_EXACT_LIMIT``; past it the multiple of the sizes' gcd at or above ``need``, a lower bound."""
    if need <= 0:
        return 0
    if not bys:
        return need
    if need > LANDING_EXACT_LIMIT:
        g = math.gcd(*bys)
        return max(-(-need // g) * g, min(bys))
    # The answer r is below need + max(bys): r minus its last increment is a sum below need. Bit x of ``sums``:
    # x is a sum of increments (unbounded knapsack by shifting in multiples of each size).
    top = need + max(bys)
    mask = (1 << top) - 1
    sums = 1
    for b in sorted(bys):
        step = b
        while step < top:
            sums |= (sums << step) & mask
            step *= 2
    ge = sums >> need
    return need + ((ge & -ge).bit_length() - 1)


def consumption(op: SemWait, init: int, bys: frozenset[int]) -> int:
    """What one pass of a constant-threshold consuming wait ``op`` takes from a reset word starting at ``init``
    whose increments have sizes ``bys``: ``v - init`` for ``eq v`` (it returns only at ``v``), ``least_landing(v -
    init)`` for ``ge v``. A lower bound of what the wait sees in every run; the exact amount when the word's
    ``sem-set-race`` obligation holds (families/semaphores/encoding.py: then every reset finds exactly the consumed
    increments issued, and each epoch took at least this much, so each took exactly this much)."""
    if op.cond == WaitCond.EQ:
        return op.value - init
    return least_landing(op.value - init, bys)


def _alternates(ops: tuple[Op, ...], sem: int, expect_set: bool = True) -> bool | None:
    """The owner's sets and waits on ``sem`` alternate: each op list, seen at its own level (nested loops count as
    units), steps (set, wait) starting from ``expect_set``, and every loop body that touches the word returns to the
    state it started in (it may run any number of times). Returns the state after ``ops`` (True: a set is next), or
    None when they do not alternate."""
    for op in ops:
        if isinstance(op, If):
            if _touches(op.body, sem):
                return None  # a guarded set or wait: not decided
        elif isinstance(op, Loop):
            if _touches(op.body, sem) and _alternates(op.body, sem, expect_set) is not expect_set:
                return None
        elif isinstance(op, SemSet) and op.sem == sem:
            if not expect_set:
                return None
            expect_set = False
        elif isinstance(op, SemWait) and op.sem == sem:
            if expect_set:
                return None
            expect_set = True
    return expect_set


def ends_reset(views: dict[str, EngineView], w: Word) -> bool:
    """A flag word whose owner's last op on it is a reset: a ``primed`` word's (wait, set) pairs end on the set, a
    set-first word's (set, wait) pairs are followed by one more set (the receiver restoring its initial value after
    its last wait)."""
    return w.owner is not None and _alternates(views[w.owner].program.ops, w.sem, not w.primed) is False


def _touches(ops: tuple[Op, ...], sem: int) -> bool:
    for op in ops:
        if isinstance(op, (Loop, If)):
            if _touches(op.body, sem):
                return True
        elif isinstance(op, (SemSet, SemWait)) and op.sem == sem:
            return True
    return False


@attrs.frozen
class _Index:
    """Every semaphore leaf by the word it touches, in program order of the views (one pass over the leaves, so
    classifying every word of a composed program stays linear): ``incs[(sem, at)]`` the ``SemInc`` leaves aimed at
    the word, ``flags[(sem, site)]`` the ``McastSetValid`` leaves whose group writes it, ``local[(sem, site)]`` the
    ``SemSet``/``SemWait`` leaves of the word's site."""

    incs: dict[tuple[int, Site], list[Leaf]]
    flags: dict[tuple[int, Site], list[Leaf]]
    local: dict[tuple[int, Site], list[Leaf]]
    #: the ``McastSetValid`` leaves that read the word (their ``source`` at their sender's site)
    reads: dict[tuple[int, Site], list[Leaf]]
    #: the ``InlineWrite`` leaves (one-word remote writes) that land on the word
    inline: dict[tuple[int, Site], list[Leaf]]
    #: per engine and semaphore: the top-level ops holding a set, wait or flag multicast of it (and any ``If``)
    tops: dict[str, dict[int, set[int]]]
    guarded: dict[str, set[int]]

    @classmethod
    def of(cls, p: Program, views: dict[str, EngineView]) -> _Index:
        incs: dict[tuple[int, Site], list[Leaf]] = {}
        flags: dict[tuple[int, Site], list[Leaf]] = {}
        local: dict[tuple[int, Site], list[Leaf]] = {}
        reads: dict[tuple[int, Site], list[Leaf]] = {}
        inline: dict[tuple[int, Site], list[Leaf]] = {}
        tops: dict[str, dict[int, set[int]]] = {}
        guarded: dict[str, set[int]] = {}
        trip_max = p.trip_max()
        for v in views.values():
            site = v.program.site
            mine = tops[v.key] = {}
            ifs = guarded[v.key] = set()
            for lf in v.leaves:
                op = lf.op
                if lf.loops and any(count_max(lc.count, trip_max) == 0 for lc in lf.loops):
                    continue  # inside a loop that never runs
                if isinstance(op, SemInc):
                    incs.setdefault((op.sem, op.at), []).append(lf)
                elif isinstance(op, SemRmw):  # an increment of the own word (atomic once sem-rmw-race holds)
                    incs.setdefault((op.sem, site), []).append(lf)
                elif isinstance(op, SemIncMcast):  # one atomic per destination of the rectangle
                    for d in p.groups[op.group].destinations():
                        incs.setdefault((op.sem, d), []).append(lf)
                elif isinstance(op, McastSetValid):
                    for d in p.groups[op.group].destinations():
                        flags.setdefault((op.sem, d), []).append(lf)
                    reads.setdefault((op.source, site), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                    mine.setdefault(op.source, set()).add(lf.path[0])  # it reads its source word when it leaves
                elif isinstance(op, (SemSet, SemWait)):
                    local.setdefault((op.sem, site), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                elif isinstance(op, InlineWrite):
                    inline.setdefault((op.sem, op.at), []).append(lf)
                elif isinstance(op, If):
                    ifs.add(lf.path[0])
        return cls(incs, flags, local, reads, inline, tops, guarded)

    def touching(self, view: EngineView, sem: int) -> tuple[Op, ...]:
        """The top-level ops of ``view`` that contain an op on semaphore ``sem`` (``SemSet``, ``SemWait``, a flag
        multicast), and any ``If`` (not looked into): the others change neither a may-analysis of the word's value
        nor whether its sets and waits alternate."""
        keep = self.tops.get(view.key, {}).get(sem, set()) | self.guarded.get(view.key, set())
        return tuple(view.program.ops[i] for i in sorted(keep))


def classify(p: Program, views: dict[str, EngineView]) -> dict[tuple[int, Site], Word]:
    """The protocol of every word of every semaphore of ``p``."""
    index = _Index.of(p, views)
    sources = _source_words(p, views, index)
    seqs = _sequences(p, views, index, sources)
    eps = {key: e for key, local in index.local.items() if (e := _epoch_source(p, index, key, local)) is not None}
    for key in eps:
        seqs.pop(key, None)  # a one-pass restarting sequence whose destinations reset: the epochs protocol decides it
    out: dict[tuple[int, Site], Word] = {}
    for s in p.semaphores:
        for site in s.sites:
            w = _classify_word(p, views, s.id, site, s.init, sources, seqs, index, eps)
            shows = w.kind == "unsupported" or (w.kind == "epochs" and w.epochs is not None
                                                and not w.epochs.is_source(w))
            if shows and len(p.sections) == 1 and w.flags and not (w.incs or w.inline):
                landed, stored, carriers = landings(p, views, index, w)
                w = attrs.evolve(w, landed_by=landed, stored=stored, carriers=carriers)
            out[(s.id, site)] = w
    return out


#: A value range ``(lo, hi)`` a word may hold, or None for any value.
_Range = tuple[int, int] | None


def _set_range(lf: Leaf, trip_max: dict[str, int]) -> _Range:
    """The values ``SemSet`` leaf ``lf`` may store over every iteration of its loops."""
    op = lf.op
    assert isinstance(op, SemSet)
    loops = {lc.var: count_max(lc.count, trip_max) for lc in lf.loops}
    lo = hi = op.value
    for t in op.terms:
        m = loops.get(t.var)
        if m is None:
            return None
        span = t.coef * max(m - 1, 0)
        lo, hi = lo + min(0, span), hi + max(0, span)
    return (lo, hi)


def _accepts(op: SemWait, r: _Range) -> bool:
    """Whether a constant-threshold wait may return on a value in range ``r``."""
    if r is None:
        return True
    return r[0] <= op.value <= r[1] if op.cond == WaitCond.EQ else r[1] >= op.value


def _carried(p: Program, sender: EngineView, source: int) -> dict[tuple[int, ...], set[_Range]] | None:
    """Per flag multicast of ``sender`` reading its word ``source``, the values that word may hold from the flag's
    issue until it has left (it reads the word when it leaves: the next Flush or WriteBarrier of the engine waits for
    that, the engine's end does not), by a may-analysis of every path. None when something other than the
    sender's own sets writes the word (an increment, a flag, an inline write, another engine's set: not followed)."""
    from verispatial.certify.facts import run_paths as _run

    trip_max = p.trip_max()
    by_path = {lf.path: lf for lf in sender.leaves}
    carry: dict[tuple[int, ...], set[_Range]] = {}

    def step(op: Op, path: tuple[int, ...], st: frozenset[tuple[object, ...]]) -> frozenset[tuple[object, ...]]:
        if isinstance(op, SemSet) and op.sem == source:
            r = _set_range(by_path[path], trip_max)
            for t in st:
                if t[0] == "p":
                    carry.setdefault(t[1], set()).add(r)  # type: ignore[arg-type]
            return frozenset({t for t in st if t[0] == "p"} | {("v", r)})
        if isinstance(op, McastSetValid) and op.source == source:
            got = carry.setdefault(path, set())
            got.update(t[1] for t in st if t[0] == "v")  # type: ignore[misc]
            return st | {("p", path)}
        if isinstance(op, (Flush, WriteBarrier)):
            return frozenset(t for t in st if t[0] != "p")
        return st

    init = p.semaphores[source].init
    _run(sender.program.ops, (), frozenset({("v", (init, init))}), step, trip_max)
    return carry


def landings(p: Program, views: dict[str, EngineView], index: _Index, w: Word) -> tuple[
        tuple[tuple[tuple[Leaf, ...], tuple[Leaf, ...]], ...], tuple[_Range, ...], tuple[tuple[Leaf, tuple[_Range, ...]], ...]]:
    """What every run shows of a word written only by sets and flag multicasts (no increment, no inline write),
    whatever protocol it follows: a wait with a constant threshold that accepts no value a set of the word stores and
    not its initial value, whose engine's previous op on the word, in the same body, is a set (its reset), returns
    only on a value a flag multicast landed since that reset; the intervals from each such reset to its wait are
    disjoint (one engine runs them in order), so each passed wait took its own landing, and a landing is one flag's.
    Per engine: its such waits, and the flag multicasts to the word that may carry a value one of them accepts
    (``_carried``; every flag when its source is written otherwise). The counter model's fact (``counters.py``): the
    waits passed are at most the flags issued. Also returned: the values the launch and the sets store, and every
    flag with the values it may carry, for a weaker fact about any wait, growing thresholds included: the latest
    passed occurrence of a wait whose threshold there accepts no stored value saw a landing, so some flag that may
    carry a value it accepts was issued. (Found by the sharded layernorm's VALID flag, examples/vendor/README.md:
    the receivers reset ``reduce_sender`` to INVALID and wait for VALID twice, a word the sender also multicasts 2
    and 3 to; each VALID it passed shows a VALID multicast issued. The word is now an ``epochs`` word, which keeps
    these facts: they hold in every run, the protocol's only under its obligations.)"""
    trip_max = p.trip_max()
    stored: list[_Range] = [(w.init, w.init), *(_set_range(lf, trip_max) for lf in w.sets)]
    carries: dict[str, dict[tuple[int, ...], set[_Range]] | None] = {}
    for f in w.flags:
        op = f.op
        assert isinstance(op, McastSetValid)
        if f.engine not in carries:
            site = views[f.engine].program.site
            key = (op.source, site)
            other = (index.incs.get(key) or index.flags.get(key) or index.inline.get(key)
                     or any(lf.engine != f.engine and isinstance(lf.op, SemSet) for lf in index.local.get(key, ())))
            carries[f.engine] = None if other else _carried(p, views[f.engine], op.source)
    local = sorted((*w.sets, *w.waits), key=lambda lf: (lf.engine, lf.index))
    out: list[tuple[tuple[Leaf, ...], tuple[Leaf, ...]]] = []
    for engine in sorted({lf.engine for lf in w.waits}):
        mine = [lf for lf in local if lf.engine == engine]
        waits: list[Leaf] = []
        for k, lf in enumerate(mine):
            op = lf.op
            if not isinstance(op, SemWait) or op.terms or k == 0:
                continue
            prev = mine[k - 1]
            if not isinstance(prev.op, SemSet) or prev.containers != lf.containers:
                continue
            if any(_accepts(op, r) for r in stored):
                continue
            waits.append(lf)
        if not waits:
            continue
        flags = []
        for f in w.flags:
            c = carries[f.engine]
            got = None if c is None else c.get(f.path, {None})
            if got is None or any(_accepts(x.op, r) for x in waits for r in got):  # type: ignore[arg-type]
                flags.append(f)
        out.append((tuple(waits), tuple(flags)))
    carriers = []
    for f in w.flags:
        c = carries[f.engine]
        got = {None} if c is None else c.get(f.path, {None})
        carriers.append((f, tuple(sorted(got, key=lambda r: (r is None, r)))))
    return tuple(out), tuple(dict.fromkeys(stored)), tuple(carriers)


def _sequences(p: Program, views: dict[str, EngineView], index: _Index,
               sources: dict[tuple[int, Site], int | str]) -> dict[tuple[int, Site], Sequence | str]:
    """Every word that carries a sequence of values (``Sequence``), or why a word its owner sets to several values
    (an affine set, or a flag source whose value changes between sends) follows no sequence either. A flag source
    with one constant value is a ``source`` word and left out. A failed flag source's reason replaces the constant
    analysis's in ``sources`` (it says more)."""
    out: dict[tuple[int, Site], Sequence | str] = {}
    for key, local in index.local.items():
        if isinstance(sources.get(key), int):
            continue
        got = _sequence(p, views, index, key, local)
        if got is None:
            continue
        affine = any(isinstance(lf.op, SemSet) and lf.op.terms for lf in local)
        if isinstance(got, Sequence) or affine or key in sources:
            out[key] = got
            if isinstance(got, str) and key in sources:
                sources[key] = got
    return out


def _shares_loop(a: Leaf, b: Leaf, trip_max: dict[str, int]) -> LoopCtx | None:
    """A loop enclosing both leaves that may run more than once (one of them then runs again after the other)."""
    mine = {lc.path for lc in b.loops}
    return next((lc for lc in a.loops if lc.path in mine and count_max(lc.count, trip_max) >= 2), None)


def _value_text(op: SemSet) -> str:
    return f"{op.value}" + "".join(f"{t.coef:+d}*{t.var}" for t in op.terms)


def _rises(rising: list[Leaf], init: int, trip_max: dict[str, int]) -> str:
    """Why the rising sets do not store strictly increasing values in execution order (empty when they do). Each
    set's occurrences run in lexicographic order of their loop indices, so ``v + sum(c_j * i_j)`` increases from one
    to the next when every ``c_j >= 0`` and each loop ``j`` that may run twice outweighs everything inside it:
    ``c_j > sum(c_l * (max_l - 1))`` over the deeper loops ``l`` (counts at their maximum). Two sets in program
    order share no such loop, and each starts above the most the one before it reaches (the first above ``init``)."""
    below = init
    prev: Leaf | None = None
    for t in rising:
        op = t.op
        assert isinstance(op, SemSet)
        what = f"{t.engine} sets it at {list(t.path)} to {_value_text(op)}"
        coef: dict[str, int] = {}
        for term in op.terms:
            coef[term.var] = coef.get(term.var, 0) + term.coef
        if any(c < 0 for c in coef.values()):
            return f"{what}, a value that falls as a loop index grows (a sequence only rises)"
        if op.value <= below:
            return (f"{what}, not above {below}, the most the word holds before it (a sequence rises from its initial "
                    "value)")
        if prev is not None and (lc := _shares_loop(prev, t, trip_max)) is not None:
            return (f"{what} in loop {lc.var} with another value set at {list(prev.path)}: each iteration would store "
                    "both (a sequence rises)")
        ms = [count_max(lc.count, trip_max) for lc in t.loops]
        cs = [coef.get(lc.var, 0) for lc in t.loops]
        for j, lc in enumerate(t.loops):
            if ms[j] >= 2 and cs[j] <= sum(cs[m] * (ms[m] - 1) for m in range(j + 1, len(cs))):
                return (f"{what}: a later iteration of loop {lc.var} stores a value no larger than an earlier one (a "
                        "sequence rises)")
        below = op.value + sum(c * (m - 1) for c, m in zip(cs, ms, strict=True) if m >= 1)
        prev = t
    return ""


def _sequence(p: Program, views: dict[str, EngineView], index: _Index, key: tuple[int, Site],
              local: list[Leaf]) -> Sequence | str | None:
    """The sequence word ``key`` carries (module docstring), why it carries none although its owner sets it to
    values other than its initial one, or None when no set of it stores anything but its initial value."""
    sem, site = key
    init = p.semaphores[sem].init
    sets = [lf for lf in local if isinstance(lf.op, SemSet)]
    if not any(isinstance(lf.op, SemSet) and (lf.op.terms or lf.op.value != init) for lf in sets):
        return None
    owners = sorted({lf.engine for lf in sets})
    if len(owners) != 1:
        return f"{len(owners)} engines of the site set it to several values (a sequence has one owner)"
    owner = owners[0]
    if index.incs.get(key):
        return f"increments land on a word {owner} sets to several values"
    reads = index.reads.get(key, [])
    other = next((lf for lf in reads if lf.engine != owner), None)
    if other is not None:
        return (f"{other.engine} {_noun(p, [other], plural=True)} it at {list(other.path)} while {owner} sets it (a "
                "sequence has one owner)")
    for lf in index.flags.get(key, []):
        if lf.engine != owner or not isinstance(lf.op, McastSetValid) or lf.op.source != sem:
            return (f"{lf.engine}'s flag {_noun(p, [lf])} at {list(lf.path)} lands on a word {owner} sets to several values "
                    "(only its owner's copies of the word itself may)")
    if unordered_pair(p.groups, [lf.op for lf in reads if isinstance(lf.op, McastSetValid)]) is not None:
        return (f"{owner}'s flag {_noun(p, reads, plural=True)} of it reach a core on several virtual channels or from several rectangles "
                "(decided: one channel and one rectangle at each core, where copies land in the order they left)")
    trip_max = p.trip_max()
    early: list[Leaf] = []
    rising: list[Leaf] = []
    resets: list[Leaf] = []
    for lf in sets:
        op = lf.op
        assert isinstance(op, SemSet)
        if op.value == init and not op.terms:
            if not rising:
                early.append(lf)
            elif lf.containers:
                return (f"{owner} resets it at {list(lf.path)} inside a loop or guard after its rising values (decided: "
                        "resets at top level after the sequence)")
            else:
                resets.append(lf)
        elif resets:
            return (f"{owner} sets it at {list(lf.path)} to {_value_text(op)} after resetting it at "
                    f"{list(resets[0].path)} (decided: a sequence rises, then is reset)")
        else:
            rising.append(lf)
    late = next((e for e in early if e.path[0] >= rising[0].path[0]), None)
    if late is not None:
        return (f"{owner} sets it to its initial value at {list(late.path)} in the loop of its rising value at "
                f"{list(rising[0].path)} (a sequence rises)")
    why = _rises(rising, init, trip_max)
    if why:
        return why
    carriers: list[Carrier] = []
    for f in reads:
        again = next((x for x in sets if x.index > f.index and _shares_loop(x, f, trip_max)), None)
        if again is not None:
            return (f"{owner} {_noun(p, [f], plural=True)} it at {list(f.path)} before setting it at {list(again.path)} in the same loop: "
                    "a flag would copy the previous iteration's value (decided: the set first)")
        prev = [x for x in sets if x.index < f.index]
        last = prev[-1] if prev else None
        if last is None or last in early:
            carriers.append(Carrier("init"))
        elif last in resets:
            carriers.append(Carrier("init", post=True))
        elif f.containers[:len(last.containers)] == last.containers:
            carriers.append(Carrier("same", last))
        elif all(r.path[0] < f.path[0] for r in rising):
            carriers.append(Carrier("after"))
        else:
            return (f"{owner} {_noun(p, [f], plural=True)} it at {list(f.path)}, whose value was set at {list(last.path)} in another loop "
                    "body (decided: the set in the same iteration, or every set in an earlier top-level op)")
    return Sequence(sem, site, owner, init, tuple(rising), tuple(resets), tuple(early), tuple(reads),
                    tuple(carriers))


def _epoch_source(p: Program, index: _Index, key: tuple[int, Site], local: list[Leaf]) -> Epochs | None:
    """The restarting sequence (``Epochs``) word ``key`` carries as a flag source, or None when it is not one: one
    engine sets it, all at top level, to constants above its initial value that split into two or more epochs (a
    new one at each set not above the one before), or of two or more sets into one that a destination resets;
    nothing waits on it and nothing else writes it; every flag multicast reading it is its owner's, at top level,
    after a set, to a group without the owner's site (the copy does not land on the word it reads)."""
    sem, site = key
    init = p.semaphores[sem].init
    reads = index.reads.get(key, [])
    sets = [lf for lf in local if isinstance(lf.op, SemSet)]
    if not reads or not sets or len(sets) != len(local) or index.incs.get(key) or index.flags.get(key) \
            or index.inline.get(key) or len(p.sections) != 1:
        return None  # (a composed program's sections each start again: decided on one section)
    owner = sets[0].engine
    for lf in (*sets, *reads):
        if lf.engine != owner or lf.containers:
            return None
    for f in reads:
        if not isinstance(f.op, McastSetValid) or site in p.groups[f.op.group].destinations():
            return None
    if unordered_pair(p.groups, [f.op for f in reads if isinstance(f.op, McastSetValid)]) is not None:
        return None  # copies land in the order they left on one virtual channel to one rectangle only
    epoch_of: list[int] = []
    prev, e = init, -1
    for lf in sets:
        op = lf.op
        assert isinstance(op, SemSet)
        if op.terms or op.value <= init:
            return None
        if e < 0 or op.value <= prev:
            e += 1
        epoch_of.append(e)
        prev = op.value
    if e < 1 and (len(sets) < 2 or not _reset_where_it_lands(p, index, sem, reads)):
        # one value: a constant flag source (the handshake's, ``handshake.py``); one epoch its destinations never
        # reset: the sequence protocol's (``_sequence``)
        return None
    carried: list[int] = []
    flag_epoch: list[int] = []
    for f in reads:
        before = [(x, k) for x, k in zip(sets, epoch_of, strict=True) if x.index < f.index]
        if not before:
            return None
        x, k = before[-1]
        assert isinstance(x.op, SemSet)
        carried.append(x.op.value)
        flag_epoch.append(k)
    return Epochs(sem, site, owner, init, tuple(sets), tuple(epoch_of), tuple(reads), tuple(carried),
                  tuple(flag_epoch))


def _reset_where_it_lands(p: Program, index: _Index, sem: int, reads: list[Leaf]) -> bool:
    """Whether some site the flags ``reads`` land on resets its copy of ``sem`` (a ``SemSet`` to the initial value
    at top level): a one-pass restarting sequence (the sharded layernorm with one block,
    ``reader_mcast_receiver_unary_sharded_ln.cpp:155`` resetting its VALID word before the pass), which the
    sequence protocol, whose destinations no engine sets, does not decide."""
    init = p.semaphores[sem].init
    for f in reads:
        assert isinstance(f.op, McastSetValid)
        for d in p.groups[f.op.group].destinations():
            for lf in index.local.get((sem, d), []):
                if isinstance(lf.op, SemSet) and not lf.op.terms and lf.op.value == init and not lf.containers:
                    return True
    return False


def _final_threshold(lf: Leaf) -> int | None:
    """The threshold of wait ``lf`` at the last iteration of its loops, when each loop has a constant count of at
    least one and no ``If`` encloses it (so that occurrence runs whenever the loops finish); else None."""
    op = lf.op
    assert isinstance(op, SemWait)
    last: dict[str, int] = {}
    for lc in lf.loops:
        if not isinstance(lc.count, int) or lc.count < 1:
            return None
        last[lc.var] = lc.count - 1
    if len(lf.loops) != len(lf.containers):
        return None
    return op.value + sum(t.coef * last[t.var] for t in op.terms)


def _last_pass(wait: Leaf, reset: Leaf, mine: list[Leaf]) -> SemWait | None:
    """The last pass of ``wait``, a wait whose threshold grows with its loops' indices, as a constant-threshold wait,
    when ``reset`` is the owner's one reset of the word, at top level, right after it in the owner's ops on the word,
    and the wait runs whenever its loops finish (``_final_threshold``); else None. Then nothing can land between that
    pass and the reset once no more increments were issued than the pass saw (``sem-set-race`` at the reset)."""
    op = wait.op
    if not isinstance(op, SemWait) or not op.terms or reset.containers or not wait.containers:
        return None
    if [lf for lf in mine if isinstance(lf.op, SemSet)] != [reset]:
        return None
    top = _final_threshold(wait)
    return None if top is None else SemWait(op.sem, op.cond, top)


def _epoch_destination(p: Program, key: tuple[int, Site], e: Epochs, sources: dict[tuple[int, Site], int | str],
                       base: dict[str, object], inline: tuple[Leaf, ...]) -> Word:
    """A word the flags of restarting sequence ``e`` land on: an ``epochs`` word (``Epochs``) when nothing else
    writes it, one engine (its owner) sets it, to its initial value at top level, once per epoch with its first op
    on the word a reset, and before each reset after the first the owner's last op on the word is a wait that runs
    whenever the ops before it finish and accepts, of the values the previous epoch's flags to it carry and its
    initial value, only the last flag's. Else ``unsupported``, saying which condition fails."""
    def unsupported(why: str) -> Word:
        return Word(kind="unsupported", why=f"a destination of the restarting sequence of {e.name}: {why}",
                    inline=inline, **base)  # type: ignore[arg-type]

    init: int = base["init"]  # type: ignore[assignment]
    flags: tuple[Leaf, ...] = base["flags"]  # type: ignore[assignment]
    sets: tuple[Leaf, ...] = base["sets"]  # type: ignore[assignment]
    waits: tuple[Leaf, ...] = base["waits"]  # type: ignore[assignment]
    if any(f not in e.flags for f in flags):
        return unsupported("flag multicasts copying other words land on it too")
    if base["incs"] or inline:
        return unsupported("increments or one-word remote writes land on it too")
    if key in sources:
        return unsupported("it is itself the source of a flag multicast")
    owners = {lf.engine for lf in (*sets, *waits)}
    if len(owners) != 1:
        return unsupported(f"{len(owners)} engines of the site set or wait on it (one owner is decided)")
    owner = next(iter(owners))
    for r in sets:
        op = r.op
        assert isinstance(op, SemSet)
        if op.terms or op.value != init or r.containers:
            return unsupported(f"{owner} sets it at {list(r.path)} to {_value_text(op)}, not to its initial value "
                               f"{init} at top level")
    if len(sets) != e.count:
        return unsupported(f"{owner} resets it {len(sets)} times for the {e.count} epochs of the sequence")
    mine = sorted((*sets, *waits), key=lambda lf: lf.index)
    if mine[0] is not sets[0]:
        return unsupported(f"{owner}'s first op on it, at {list(mine[0].path)}, is not its reset")
    for k in range(e.count - 1):
        nxt = sets[k + 1]
        last = mine[mine.index(nxt) - 1]
        mark = e.epoch_flags(k, flags)
        if not isinstance(last.op, SemWait) or not mark:
            return unsupported(f"{owner} resets it at {list(nxt.path)} with no wait for epoch {k}'s last flag "
                               "before it")
        t = _final_threshold(last)
        cond = last.op.cond

        def accepts(v: int, t: int | None = t, cond: WaitCond = cond) -> bool:
            return t is not None and (v == t if cond == WaitCond.EQ else v >= t)
        if not accepts(e.value_of(mark[-1])) or accepts(init) or any(accepts(e.value_of(f)) for f in mark[:-1]):
            return unsupported(f"{owner}'s wait at {list(last.path)} before its reset at {list(nxt.path)} does not "
                               f"accept only epoch {k}'s last flag (at {list(mark[-1].path)})")
    return Word(kind="epochs", owner=owner, epochs=e, **base)  # type: ignore[arg-type]


def _source_words(p: Program, views: dict[str, EngineView], index: _Index) -> dict[tuple[int, Site], int | str]:
    """For every word read as a flag-multicast source: its constant value, or why it is not constant."""
    out: dict[tuple[int, Site], int | str] = {}
    for v in views.values():
        for lf in v.leaves:
            if isinstance(lf.op, McastSetValid):
                key = (lf.op.source, v.program.site)
                if key in out:
                    continue
                out[key] = _source_value(p, lf.op.source, v.program.site, v, index)
    return out


def _source_value(p: Program, sem: int, site: Site, sender: EngineView, index: _Index) -> int | str:
    touching = index.local.get((sem, site), [])
    if any(lf.engine != sender.key for lf in touching):
        return "another engine of the site also sets or waits on it"
    if any(isinstance(lf.op, SemWait) for lf in touching):
        return "it is also waited on"
    if index.incs.get((sem, site)):
        return "increments land on it"
    if index.flags.get((sem, site)):
        return "flag multicasts land on it"
    affine = _affine_set(touching)
    if affine:
        return affine
    return _value_at_sends(sender, sem, p.semaphores[sem].init, index, p.groups, p.trip_max())


def _affine_set(local: list[Leaf] | tuple[Leaf, ...]) -> str:
    """Why a word is outside every decided protocol when one of its SemSets stores a value that depends on loop
    indices (a word carrying several values, e.g. argmax's ``start_sem.set(k + 1)``), else the empty string. No
    protocol reads such a word yet: its obligations fail to prove and the interpreter's search decides deadlock."""
    for lf in local:
        if isinstance(lf.op, SemSet) and lf.op.terms:
            value = f"{lf.op.value}" + "".join(f"{t.coef:+d}*{t.var}" for t in lf.op.terms)
            return (f"{lf.engine} sets it at {list(lf.path)} to {value}, a value that depends on loop indices (a word "
                    "carrying several values: no protocol decides it)")
    return ""


def _value_at_sends(sender: EngineView, sem: int, init: int, index: _Index, groups: tuple[Group, ...],
                    trip_max: dict[str, int] | None = None) -> int | str:
    """The value the sender's own word holds at every flag multicast that reads it, by a may-analysis over every
    path of the sender's program (loops to a fixpoint, trip loops may run zero times, loops that never run skipped).
    When no multicast that reads it ever runs, any value is its value: the one the sender sets it to, or ``init``."""
    from verispatial.certify.facts import run_paths as _run

    seen: set[int] = set()
    read_by: set[int] = set()  # the groups of the flags that read it: the reason calls them writes or multicasts

    def step(op: Op, _path: tuple[int, ...], s: frozenset[tuple[object, ...]]) -> frozenset[tuple[object, ...]]:
        if isinstance(op, SemSet) and op.sem == sem:
            return frozenset({("v", op.value)})
        if isinstance(op, McastSetValid) and op.source == sem:
            seen.update(int(t[1]) for t in s)  # type: ignore[call-overload]
            read_by.add(op.group)
        return s

    # Top-level ops that name no op on the word leave the may-state as it is (loops reach their fixpoint at once):
    # only the others are run (on a composed program that is the word's own section).
    _run(index.touching(sender, sem), (), frozenset({("v", init)}), step, trip_max)
    if not seen:
        set_to = {lf.op.value for lf in sender.leaves if isinstance(lf.op, SemSet) and lf.op.sem == sem}
        return set_to.pop() if len(set_to) == 1 else init
    if len(seen) != 1:
        return f"a flag {write_noun(groups, read_by)} may read it holding any of {sorted(seen)}"
    return seen.pop()


#: what a sequence destination outside the protocol is: the documented limit, named as such in the reason
SEQUENCE_DESTINATION_LIMIT = ("the sequence protocol's documented limit, docs/checker.md 'Words that carry a "
                              "sequence': only its flags' copies may write a destination")


def _destination(p: Program, sem: int, site: Site, init: int, copied: tuple[Sequence, ...],
                 sources: dict[tuple[int, Site], int | str], base: dict[str, object]) -> Word:
    """A word flag multicasts of a sequence land on: a ``sequence`` word when they are the only writes of it (no
    increment, no set, no flag copying another word), it is no flag's source and it starts where the sequence
    does."""
    def unsupported(why: str) -> Word:
        # a known limit, not a suspected fault: the reason says so, so that a user of a correct handshake (a
        # loopback flag whose receivers reset their copies) is not left to guess
        return Word(kind="unsupported", why=f"a destination of the sequence of {copied[0].name}: {why} ({SEQUENCE_DESTINATION_LIMIT})",
                    **base)  # type: ignore[arg-type]

    seq = copied[0]
    flags: tuple[Leaf, ...] = base["flags"]  # type: ignore[assignment]
    if len(copied) > 1 or any(lf not in seq.flags for lf in flags):
        return unsupported("flag multicasts copying other words land on it too")
    if base["incs"]:
        return unsupported("increments land on it too")
    sets: tuple[Leaf, ...] = base["sets"]  # type: ignore[assignment]
    if sets:
        return unsupported(f"{sets[0].engine} sets it at {list(sets[0].path)}")
    if (sem, site) in sources:
        return unsupported("it is itself the source of a flag multicast")
    if init != seq.init:
        return unsupported(f"it starts at {init}, the sequence at {seq.init}")
    return Word(kind="sequence", seq=seq, **base)  # type: ignore[arg-type]


def _classify_word(p: Program, views: dict[str, EngineView], sem: int, site: Site, init: int,
                   sources: dict[tuple[int, Site], int | str], seqs: dict[tuple[int, Site], Sequence | str],
                   index: _Index, eps: dict[tuple[int, Site], Epochs] | None = None) -> Word:
    # The index holds only ops that may run (an op inside a loop that never runs takes no part in any protocol).
    incs = tuple(index.incs.get((sem, site), ()))
    flags = tuple(index.flags.get((sem, site), ()))
    local = index.local.get((sem, site), [])
    sets = tuple(lf for lf in local if isinstance(lf.op, SemSet))
    waits = tuple(lf for lf in local if isinstance(lf.op, SemWait))
    base = {"sem": sem, "site": site, "init": init, "incs": incs, "flags": flags, "sets": sets, "waits": waits}

    def unsupported(why: str) -> Word:
        return Word(kind="unsupported", why=why, inline=inline, **base)  # type: ignore[arg-type]

    inline = tuple(index.inline.get((sem, site), ()))
    if inline:
        # A one-word remote write stores a value no count follows: only a word nothing else touches (a mailbox slot
        # a kernel reads with plain loads) is decided, and it decides nothing blocking.
        other = [what for what, there in (("incremented", incs), ("flagged", flags), ("set", sets), ("waited on", waits),
                                          ("read by a flag", (sem, site) in sources)) if there]
        if other:
            return unsupported(f"one-word remote writes (noc_inline_dw_write) land on it and it is also {other[0]}: "
                               "no protocol decides it")
        return Word(kind="mailbox", inline=inline, **base)  # type: ignore[arg-type]

    seq = seqs.get((sem, site))
    if isinstance(seq, Sequence):
        return Word(kind="sequence", owner=seq.owner, seq=seq, **base)  # type: ignore[arg-type]
    eps = eps or {}
    own = eps.get((sem, site))
    if own is not None:
        return Word(kind="epochs", owner=own.owner, epochs=own, **base)  # type: ignore[arg-type]
    restarting = {id(x): x for x in (eps.get((lf.op.source, views[lf.engine].program.site)) for lf in flags
                                     if isinstance(lf.op, McastSetValid)) if x is not None}
    if len(restarting) == 1 and not seqs.get((sem, site)):
        return _epoch_destination(p, (sem, site), next(iter(restarting.values())), sources, base, inline)
    copied = {id(x): x for x in (seqs.get((lf.op.source, views[lf.engine].program.site)) for lf in flags
                                  if isinstance(lf.op, McastSetValid)) if isinstance(x, Sequence)}
    if copied:
        return _destination(p, sem, site, init, tuple(copied.values()), sources, base)
    affine = _affine_set(sets)
    if affine:
        return unsupported(seq if isinstance(seq, str) and seq else affine)

    if (sem, site) in sources and not flags and not incs and not waits:
        v = sources[(sem, site)]
        if isinstance(v, str):
            return unsupported(f"the source word of a flag, whose value is not constant: {v}")
        return Word(kind="source", value=v, owner=sets[0].engine if sets else None, **base)  # type: ignore[arg-type]
    if not (incs or flags or sets or waits):
        return Word(kind="unused", **base)  # type: ignore[arg-type]
    if any(isinstance(lf.op, INCREMENTS) and lf.op.by < 0 for lf in incs):
        return unsupported("a negative increment")
    if not flags and not sets:
        return Word(kind="monotone", **base)  # type: ignore[arg-type]
    owners = {lf.engine for lf in sets + waits}
    if len(owners) != 1:
        return unsupported(f"{len(owners)} engines of the site set or wait on it (one owner is decided)")
    owner = next(iter(owners))
    view = views[owner]
    if not flags:
        if any(isinstance(lf.op, INCREMENTS) and lf.op.by == 0 for lf in incs):
            # A zero increment is still a remote write: landing between a wait and its reset it is the lost update
            # the interpreter reports (sem-set-race), though it changes no count the counter model sees.
            return unsupported("an increment by 0 lands on a word that is reset (a remote write no count shows)")
        # Reset protocol: every reset is to init, and (when anything increments the word) its previous op on the word
        # in the owner's program order is a wait with a constant threshold in the same body: that wait consumes what
        # it saw. Other waits (e.g. growing thresholds before a final wait and reset) consume nothing.
        mine = [lf for lf in local if lf.engine == owner]  # the owner's sets and waits, in program order
        consuming: list[Leaf] = []
        fresh: list[Leaf] = []
        final: list[SemWait] = []  # per reset after a loop of growing waits: that wait's last pass, as a constant
        for k, lf in enumerate(mine):
            if not isinstance(lf.op, SemSet):
                continue
            if lf.op.value != init:
                return unsupported(f"a reset to {lf.op.value}, not to its initial value {init}")
            if not incs:
                continue
            prev = mine[k - 1] if k > 0 else None
            if prev is None or isinstance(prev.op, SemSet):
                # No wait before it in the text (argmax's done_sem.set(0) in its loop, reader_argmax_interleaved_
                # multicore.cpp:392, before any increment): it consumes nothing, so it must find nothing due.
                fresh.append(lf)
                continue
            last = _last_pass(prev, lf, mine)
            if last is not None:
                # A reset after a loop of growing waits (argmax's secondary hand-off as shipped: wait_min(k + 1) per
                # row, reset after the loop, reader_argmax_interleaved_multicore.cpp:449, 551): only the loop's last
                # pass consumes, what it saw; the reset carries that charge, so each pass of the wait consumes
                # nothing and the word's count drops when the reset runs.
                consuming.append(lf)
                final.append(last)
                continue
            if not isinstance(prev.op, SemWait) or prev.containers != lf.containers:
                return unsupported(f"{lf.engine} sets it at {list(lf.path)} without a wait on it before, in the "
                                   "same body")
            if prev.op.terms:
                return unsupported(f"{lf.engine} resets it at {list(lf.path)} after a wait whose threshold grows with a "
                                   "loop index (what the wait consumed is not a constant)")
            consuming.append(prev)
        bys = frozenset(lf.op.by for lf in incs if isinstance(lf.op, INCREMENTS) and lf.op.by > 0)
        passes = iter(final)
        consumes = tuple(consumption(lf.op if isinstance(lf.op, SemWait) else next(passes), init, bys)
                         for lf in consuming)
        return Word(kind="reset", owner=owner, consuming=tuple(consuming), consumes=consumes, fresh=tuple(fresh),
                    **base)  # type: ignore[arg-type]
    grown = [lf for lf in waits if isinstance(lf.op, SemWait) and lf.op.terms]
    if grown:
        return unsupported(f"{grown[0].engine} waits at {list(grown[0].path)} for a threshold growing with a loop "
                           "index on a flag word (decided on monotone and reset counters only)")
    # Flag protocol.
    if incs:
        return unsupported("both increments and flag multicasts land on it")
    values: set[int] = set()
    for lf in flags:
        src: int | str | None = (sources.get((lf.op.source, views[lf.engine].program.site))
                                  if isinstance(lf.op, McastSetValid) else None)
        if not isinstance(src, int):
            return unsupported(f"the flag written by {lf.engine} has no constant source value ({src})")
        values.add(src)
    if len(values) != 1:
        return unsupported(f"flag {_noun(p, flags, plural=True)} write different values {sorted(values)}")
    flag_value = values.pop()
    set_values = {lf.op.value for lf in sets if isinstance(lf.op, SemSet)}
    # Set first (set, wait, ...), or, when the word starts at the one reset value, wait first (primed).
    primed = False
    ops = index.touching(view, sem)
    if _alternates(ops, sem) is None:
        if set_values - {init} or init == flag_value or _alternates(ops, sem, False) is None:
            return unsupported(f"{owner} does not alternate reset and wait on it (set, wait, set, wait, ..., or "
                               "wait, set, ... from an initial value equal to its resets)")
        primed = True
        set_values.add(init)
    if len(set_values) != 1 or flag_value in set_values:
        return unsupported(f"the owner's resets {sorted(set_values)} must be one value other than the flag's {flag_value}")
    reset_value = set_values.pop()
    for lf in waits:
        op = lf.op
        assert isinstance(op, SemWait)
        ok = op.value == flag_value if op.cond == WaitCond.EQ else reset_value < op.value <= flag_value
        if not ok:
            return unsupported(f"a wait for {op.cond.value} {op.value} does not test the flag value {flag_value}")
    return Word(kind="flag", owner=owner, value=flag_value, primed=primed, reset_value=reset_value,
                **base)  # type: ignore[arg-type]


def _noun(p: Program, leaves: Iterable[Leaf], plural: bool = False) -> str:
    """``write_noun`` of the NoC writes among ``leaves`` (their groups): a unicast flag is a write, not a multicast."""
    return write_noun(p.groups, [lf.op.group for lf in leaves if isinstance(lf.op, (McastSetValid, SemIncMcast))], plural)
