"""Which protocol each semaphore word follows, decided from the program's structure alone.

A word is (semaphore id, site). The checker reduces every word to a monotone counter so that deadlock and
ordering questions become questions about counters (DESIGN §7, route step 3). The reduction is sound only under
the obligations each protocol lists; those are discharged separately (``counters.py``). Words that follow no
protocol here are reported as outside the decided fragment (failed-to-prove), never assumed.

Protocols:
- ``monotone``: only increments (by >= 0) land on it — ``SemInc`` aimed at its site, and ``SemIncMcast`` whose
  rectangle holds the site (one atomic per destination, each counted as an increment of that destination's word);
  value = init + increments issued. Its waits may have thresholds growing with the loop indices
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

Flag words and the consuming waits of reset words keep constant thresholds (a growing one there is outside the decided
fragment). Ops inside a loop that never runs take no part in any protocol.
"""

from __future__ import annotations

import math

import attrs

from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import If, InlineWrite, Loop, McastSetValid, Op, SemInc, SemIncMcast, SemSet, SemWait, count_max
from verispatial.ir.program import Program


@attrs.frozen
class Word:
    """How one semaphore word is used and which protocol it follows (``kind``; ``why`` when unsupported)."""

    sem: int
    site: Site
    kind: str  # "unused" | "monotone" | "reset" | "flag" | "source" | "mailbox" | "unsupported"
    init: int
    incs: tuple[Leaf, ...] = ()  # SemInc and SemIncMcast leaves that add to this word (each ``by``)
    flags: tuple[Leaf, ...] = ()  # McastSetValid leaves (of senders) that write this word
    sets: tuple[Leaf, ...] = ()
    waits: tuple[Leaf, ...] = ()
    consuming: tuple[Leaf, ...] = ()  # reset: the waits right before a reset
    consumes: tuple[int, ...] = ()  # reset: what one pass of each ``consuming`` wait consumes (``consumption``)
    owner: str | None = None  # the one engine at the site that sets/waits it
    value: int | None = None  # flag: V (the value a flag writes); source: V
    why: str = ""
    primed: bool = False  # flag: the owner waits first, its initial value counting as the first reset
    reset_value: int | None = None  # flag: I (the value the owner's resets write)
    inline: tuple[Leaf, ...] = ()  # InlineWrite leaves (one-word remote writes) that land on it

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
    inline: dict[tuple[int, Site], list[Leaf]]
    #: per engine and semaphore: the top-level ops holding a set, wait or flag multicast of it (and any ``If``)
    tops: dict[str, dict[int, set[int]]]
    guarded: dict[str, set[int]]

    @classmethod
    def of(cls, p: Program, views: dict[str, EngineView]) -> _Index:
        incs: dict[tuple[int, Site], list[Leaf]] = {}
        flags: dict[tuple[int, Site], list[Leaf]] = {}
        local: dict[tuple[int, Site], list[Leaf]] = {}
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
                elif isinstance(op, SemIncMcast):  # one atomic per destination of the rectangle
                    for d in p.groups[op.group].destinations():
                        incs.setdefault((op.sem, d), []).append(lf)
                elif isinstance(op, McastSetValid):
                    for d in p.groups[op.group].destinations():
                        flags.setdefault((op.sem, d), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                    mine.setdefault(op.source, set()).add(lf.path[0])  # it reads its source word when it leaves
                elif isinstance(op, (SemSet, SemWait)):
                    local.setdefault((op.sem, site), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                elif isinstance(op, InlineWrite):
                    inline.setdefault((op.sem, op.at), []).append(lf)
                elif isinstance(op, If):
                    ifs.add(lf.path[0])
        return cls(incs, flags, local, inline, tops, guarded)

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
    out: dict[tuple[int, Site], Word] = {}
    for s in p.semaphores:
        for site in s.sites:
            out[(s.id, site)] = _classify_word(p, views, s.id, site, s.init, sources, index)
    return out


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
    return _value_at_sends(sender, sem, p.semaphores[sem].init, index, p.trip_max())


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


def _value_at_sends(sender: EngineView, sem: int, init: int, index: _Index,
                    trip_max: dict[str, int] | None = None) -> int | str:
    """The value the sender's own word holds at every flag multicast that reads it, by a may-analysis over every
    path of the sender's program (loops to a fixpoint, trip loops may run zero times, loops that never run skipped).
    When no multicast that reads it ever runs, any value is its value: the one the sender sets it to, or ``init``."""
    from verispatial.certify.facts import run_paths as _run

    seen: set[int] = set()

    def step(op: Op, _path: tuple[int, ...], s: frozenset[tuple[object, ...]]) -> frozenset[tuple[object, ...]]:
        if isinstance(op, SemSet) and op.sem == sem:
            return frozenset({("v", op.value)})
        if isinstance(op, McastSetValid) and op.source == sem:
            seen.update(int(t[1]) for t in s)  # type: ignore[call-overload]
        return s

    # Top-level ops that name no op on the word leave the may-state as it is (loops reach their fixpoint at once):
    # only the others are run (on a composed program that is the word's own section).
    _run(index.touching(sender, sem), (), frozenset({("v", init)}), step, trip_max)
    if not seen:
        set_to = {lf.op.value for lf in sender.leaves if isinstance(lf.op, SemSet) and lf.op.sem == sem}
        return set_to.pop() if len(set_to) == 1 else init
    if len(seen) != 1:
        return f"a flag multicast may read it holding any of {sorted(seen)}"
    return seen.pop()


def _classify_word(p: Program, views: dict[str, EngineView], sem: int, site: Site, init: int,
                   sources: dict[tuple[int, Site], int | str], index: _Index) -> Word:
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
                                          ("read by a flag multicast", (sem, site) in sources)) if there]
        if other:
            return unsupported(f"one-word remote writes (noc_inline_dw_write) land on it and it is also {other[0]}: "
                               "no protocol decides it")
        return Word(kind="mailbox", inline=inline, **base)  # type: ignore[arg-type]

    affine = _affine_set(sets)
    if affine:
        return unsupported(affine)

    if (sem, site) in sources and not flags and not incs and not waits:
        v = sources[(sem, site)]
        if isinstance(v, str):
            return unsupported(f"flag multicast source whose value is not constant: {v}")
        return Word(kind="source", value=v, owner=sets[0].engine if sets else None, **base)  # type: ignore[arg-type]
    if not (incs or flags or sets or waits):
        return Word(kind="unused", **base)  # type: ignore[arg-type]
    if any(isinstance(lf.op, (SemInc, SemIncMcast)) and lf.op.by < 0 for lf in incs):
        return unsupported("a negative increment")
    if not flags and not sets:
        return Word(kind="monotone", **base)  # type: ignore[arg-type]
    owners = {lf.engine for lf in sets + waits}
    if len(owners) != 1:
        return unsupported(f"{len(owners)} engines of the site set or wait on it (one owner is decided)")
    owner = next(iter(owners))
    view = views[owner]
    if not flags:
        if any(isinstance(lf.op, (SemInc, SemIncMcast)) and lf.op.by == 0 for lf in incs):
            # A zero increment is still a remote write: landing between a wait and its reset it is the lost update
            # the interpreter reports (sem-set-race), though it changes no count the counter model sees.
            return unsupported("an increment by 0 lands on a word that is reset (a remote write no count shows)")
        # Reset protocol: every reset is to init, and (when anything increments the word) its previous op on the word
        # in the owner's program order is a wait with a constant threshold in the same body: that wait consumes what
        # it saw. Other waits (e.g. growing thresholds before a final wait and reset) consume nothing.
        mine = [lf for lf in local if lf.engine == owner]  # the owner's sets and waits, in program order
        consuming: list[Leaf] = []
        for k, lf in enumerate(mine):
            if not isinstance(lf.op, SemSet):
                continue
            if lf.op.value != init:
                return unsupported(f"a reset to {lf.op.value}, not to its initial value {init}")
            if not incs:
                continue
            prev = mine[k - 1] if k > 0 else None
            if prev is None or not isinstance(prev.op, SemWait) or prev.containers != lf.containers:
                return unsupported(f"{lf.engine} sets it at {list(lf.path)} without a wait on it before, in the "
                                   "same body")
            if prev.op.terms:
                return unsupported(f"{lf.engine} resets it at {list(lf.path)} after a wait whose threshold grows with a "
                                   "loop index (what the wait consumed is not a constant)")
            consuming.append(prev)
        bys = frozenset(lf.op.by for lf in incs if isinstance(lf.op, (SemInc, SemIncMcast)) and lf.op.by > 0)
        consumes = tuple(consumption(lf.op, init, bys) for lf in consuming if isinstance(lf.op, SemWait))
        return Word(kind="reset", owner=owner, consuming=tuple(consuming), consumes=consumes,
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
        return unsupported(f"flag multicasts write different values {sorted(values)}")
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
