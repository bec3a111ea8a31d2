"""The counter abstraction: buffers and semaphore words as monotone counters over symbolic positions.

Given symbolic positions of engines (``positions.Encoder``), every buffer's ``pushed``/``popped`` and every word's
value (per its protocol, ``semaphores.py``) is a sum of occurrence counts. ``consistency`` are facts every
reachable state satisfies (necessary conditions), so a query "consistency and X" that is unsat proves X is
unreachable; a sat answer is only a candidate the interpreter must replay.
"""

from __future__ import annotations

import z3

from verispatial import budget
from verispatial.certify.positions import Encoder
from verispatial.certify.semaphores import Sequence, Word
from verispatial.certify.smt import any_of
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import AtomicBarrier, Pop, Push, Reserve, SemRmw, SemSet, SemWait, Wait
from verispatial.ir.program import Program
from verispatial.ir.sharing import sees_own_pops_only, sharing_waiters

#: The tables of the last (program, views) a counter model was made for: every query over one analysis builds its
#: own counter model (``reach.StateQuery``: 121 in the 16-layer decode step's certify, each walking the whole
#: program twice), and these depend on the program and views alone. Held by identity (both are immutable: a frozen
#: program, views built once per analysis), one entry so no finished slice is kept alive.
_LAST: list[tuple[Program, dict[str, EngineView], dict[int, list[Leaf]], dict[int, frozenset[str]]]] = []


def tables(program: Program, views: dict[str, EngineView]) -> tuple[dict[int, list[Leaf]], dict[int, frozenset[str]]]:
    """Per buffer of ``program``, its Reserve/Push/Wait/Pop leaves in ``views`` (engine by engine, in leaf order),
    and ``sharing_waiters(program)``; the lists are shared by every counter model of the pair: read, never changed."""
    if _LAST and _LAST[0][0] is program and _LAST[0][1] is views:
        return _LAST[0][2], _LAST[0][3]
    buf_leaves: dict[int, list[Leaf]] = {}
    for v in views.values():
        for lf in v.leaves:
            b = getattr(lf.op, "buf", None)
            if isinstance(lf.op, (Reserve, Push, Wait, Pop)) and b is not None:
                buf_leaves.setdefault(b, []).append(lf)
    sharing = sharing_waiters(program)
    _LAST[:] = [(program, views, buf_leaves, sharing)]
    return buf_leaves, sharing


def _accepts(cond: WaitCond, r: tuple[int, int] | None, t: z3.ArithRef) -> z3.BoolRef:
    """Whether a wait ``cond`` at threshold ``t`` may return on a value in range ``r`` (None: any value)."""
    if r is None:
        return z3.BoolVal(True, t.ctx)
    return z3.And(r[0] <= t, t <= r[1]) if cond == WaitCond.EQ else t <= r[1]


class CounterModel:
    """Counters of ``program`` in the encoder's query, for the engines in ``engines`` (others are absent:
    their contributions are taken as unknown, so a query over a subset stays an over-approximation only if the
    caller includes every engine that touches the counters it uses — ``components`` guarantees that)."""

    def __init__(self, enc: Encoder, program: Program, views: dict[str, EngineView],
                 words: dict[tuple[int, Site], Word]) -> None:
        self.enc = enc
        self.p = program
        self.views = views
        self.words = words
        #: per buffer, its Reserve/Push/Wait/Pop leaves; the engines waiting on it without popping it (ir/sharing.py):
        #: their passed waits do not hold while another engine pops, and a compute one counts only its own pops (none)
        self.buf_leaves, self.sharing = tables(program, views)

    def _sum(self, leaves: list[Leaf], weight: int | None = None) -> z3.ArithRef:
        budget.check()  # a counter sums every leaf of its buffer or word: on a long program, long work between queries
        terms = []
        for lf in leaves:
            w = weight if weight is not None else getattr(lf.op, "pages", None) or getattr(lf.op, "by", 1)
            terms.append(self.enc.executed(lf) * w)
        if not terms:
            return self.enc.q.val(0)
        return z3.Sum(terms) if len(terms) > 1 else terms[0]

    def pushed(self, b: int) -> z3.ArithRef:
        return self._sum([lf for lf in self.buf_leaves.get(b, []) if isinstance(lf.op, Push)])

    def popped(self, b: int) -> z3.ArithRef:
        return self._sum([lf for lf in self.buf_leaves.get(b, []) if isinstance(lf.op, Pop)])

    # --- semaphore words -------------------------------------------------------------------------------
    def incs(self, w: Word) -> z3.ArithRef:
        return self._sum(list(w.incs))

    def acked(self, w: Word) -> z3.ArithRef:
        """A lower bound of the increments of ``w`` that have landed: those an ``AtomicBarrier`` of their engine has
        waited for (noc_async_atomic_barrier returns once every atomic the engine issued is acknowledged). An
        increment leaf's occurrences are covered by the first later barrier in the same body (each of its
        executions follows the increment's execution of that iteration), else by a later top-level barrier (once it
        ran, the increment leaf runs no more)."""
        terms = []
        for lf in w.incs:
            leaves = self.views[lf.engine].leaves
            later = [x for x in leaves[lf.index + 1:] if isinstance(x.op, AtomicBarrier)]
            same = next((x for x in later if x.containers == lf.containers), None)
            top = next((x for x in later if not x.containers), None)
            by = getattr(lf.op, "by", 1)
            if isinstance(lf.op, SemRmw):  # no NoC atomic: its store is done before the engine's next op
                terms.append(self.enc.executed(lf) * by)
            elif same is not None:
                terms.append(self.enc.executed(same) * by)
            elif top is not None:
                terms.append(z3.If(self.enc.started(top), self.enc.executed(lf), 0) * by)
        if not terms:
            return self.enc.q.val(0)
        return z3.Sum(terms) if len(terms) > 1 else terms[0]

    def flags_issued(self, w: Word) -> z3.ArithRef:
        return self._sum(list(w.flags), weight=1)

    def consumed(self, w: Word) -> z3.ArithRef:
        """Reset protocol: what the owner's passed consuming waits (those right before a reset) consumed
        (``Word.consumes`` each: ``v - init`` at ``eq v``, the least landing at or past ``v - init`` at ``ge v``)."""
        terms = [self.enc.executed(lf) * c for lf, c in w.consumed_by()]
        return z3.Sum(terms) if len(terms) > 1 else (terms[0] if terms else self.enc.q.val(0))

    def waits_done(self, w: Word) -> z3.ArithRef:
        return self._sum(list(w.waits), weight=1)

    def consuming_done(self, w: Word) -> z3.ArithRef:
        return self._sum(list(w.consuming), weight=1)

    def sets_done(self, w: Word) -> z3.ArithRef:
        """Resets of a flag word done, the launch counted as the first one for a ``primed`` word."""
        done = self._sum(list(w.sets), weight=1)
        return done + 1 if w.primed else done

    def value(self, w: Word) -> z3.ArithRef:
        """The word's value once every issued increment or flag has landed (as in any deadlocked state)."""
        if w.kind == "monotone":
            return w.init + self.incs(w)
        if w.kind == "reset":
            return w.init + self.incs(w) - self.consumed(w)
        if w.kind == "flag":
            assert w.value is not None
            assert w.reset_value is not None
            return z3.If(self.flags_issued(w) - self.waits_done(w) >= 1, w.value, w.reset_value)
        if w.kind == "sequence":
            assert w.seq is not None
            return self.seq_value(w)
        if w.kind == "epochs":
            assert w.epochs is not None
            return self.epoch_value(w)
        if w.kind == "source":
            return self.enc.q.val(w.value if w.value is not None else w.init)
        if w.kind == "unused":  # no op that ever runs touches it (those in loops that never run take no part)
            return self.enc.q.val(w.init)
        raise ValueError(f"{w.name}: no counter model for a {w.kind} word")

    # --- sequences (semaphores.Sequence) ----------------------------------------------------------------
    def _set_value(self, t: Leaf, idx: list[z3.ArithRef]) -> z3.ArithRef:
        """The value the rising set ``t`` stores at its occurrence with loop indices ``idx`` (outer first)."""
        op = t.op
        assert isinstance(op, SemSet)
        env = {lc.var: i for lc, i in zip(t.loops, idx, strict=False)}
        return self.enc.q.val(op.value) + z3.Sum([self.enc.q.val(0)] + [env[x.var] * x.coef for x in op.terms])

    def seq_top(self, s: Sequence) -> z3.ArithRef:
        """The largest value the sequence's rising sets stored so far (its initial value when none ran): the latest
        one's, since they rise in execution order. Every value its word and its destinations ever held is at most
        this (or the initial value), whatever the protocol's obligations say: the word takes only values its owner
        set, and the flags copy values it held."""
        e: z3.ArithRef = self.enc.q.val(s.init)
        for t in s.rising:
            some, idx = self.enc.last_occurrence(t)
            e = z3.If(some, self._set_value(t, idx), e)
        return e

    def seq_reset(self, s: Sequence) -> z3.BoolRef:
        """A reset after the sequence ran (the word is back at its initial value)."""
        return any_of(self.enc.q.ctx, [self.enc.started(r) for r in s.resets])

    def carried(self, s: Sequence, f: Leaf) -> z3.ArithRef:
        """The value flag ``f`` copied at its most recent occurrence (the initial value when it has not run): the
        value of the set its ``Carrier`` names, at the flag's own loop indices."""
        c = s.carrier(f)
        if c.kind == "init":
            return self.enc.q.val(s.init)
        if c.kind == "after":  # every rising set ran before the flag's top-level op: it copies their last value
            return z3.If(self.enc.started(f), self.seq_top(s), self.enc.q.val(s.init))
        assert c.rising is not None
        some, idx = self.enc.last_occurrence(f)
        return z3.If(some, self._set_value(c.rising, idx[:len(c.rising.loops)]), self.enc.q.val(s.init))

    def post_flags(self, w: Word) -> z3.ArithRef:
        """Flags landing on ``w`` that copy the word after its reset (the sequence's end)."""
        assert w.seq is not None
        return self._sum([f for f in w.flags if w.seq.carrier(f).post], weight=1)

    def seq_copied(self, w: Word) -> z3.ArithRef:
        """The largest value a flag issued to ``w`` before the reset copied (``init`` when none did): flags land in
        issue order once the source is not rewritten before they leave, and copy non-decreasing values."""
        assert w.seq is not None
        e: z3.ArithRef = self.enc.q.val(w.init)
        for f in w.flags:
            if w.seq.carrier(f).kind != "init":
                c = self.carried(w.seq, f)
                e = z3.If(c > e, c, e)
        return e

    def seq_value(self, w: Word) -> z3.ArithRef:
        """A sequence word's value once every flag issued to it has landed (as in any deadlocked state): the source
        word holds what its owner set last (its loopback copies land before the next set), a destination what the
        last flag issued copied — the initial value after a reset — when the protocol's obligations hold."""
        s = w.seq
        assert s is not None
        if s.is_source(w):
            return z3.If(self.seq_reset(s), self.enc.q.val(s.init), self.seq_top(s))
        return z3.If(self.post_flags(w) >= 1, self.enc.q.val(w.init), self.seq_copied(w))

    # --- restarting sequences (semaphores.Epochs) ---------------------------------------------------------
    def epoch_value(self, w: Word) -> z3.ArithRef:
        """An ``epochs`` word's value once every flag issued has landed (as in any deadlocked state), when its
        protocol's obligations hold. The own word: its owner's latest set (top-level sets run once each, in text
        order), or its initial value. A destination: its initial value before its owner's first reset; after reset
        ``k`` (and before reset ``k + 1``), what the latest flag of epoch ``k`` issued to it carries, or its initial
        value when none was: epoch ``k``'s flags are issued after reset ``k`` (``sem-flag-early``) and have all landed
        before reset ``k + 1`` (the owner's wait before it accepts only the epoch's last flag, which lands after the
        others), and flags land in issue order."""
        e = w.epochs
        assert e is not None
        val = self.enc.q.val
        if e.is_source(w):
            out: z3.ArithRef = val(w.init)
            for x in e.sets:
                assert isinstance(x.op, SemSet)
                out = z3.If(self.enc.started(x), val(x.op.value), out)
            return out
        out = val(w.init)
        for k, r in enumerate(w.sets):
            got: z3.ArithRef = val(w.init)
            for f in e.epoch_flags(k, w.flags):
                got = z3.If(self.enc.started(f), val(e.value_of(f)), got)
            out = z3.If(self.enc.started(r), got, out)
        return out

    def epoch_seen(self, w: Word) -> list[z3.BoolRef]:
        """What a passed wait on a destination of a restarting sequence shows under its protocol (so every query
        that reads it assumes the word's ``sem-exact``, ``assume.py``; the word's own obligations may read it, by
        induction over time: the first state breaking one was reached while the protocol held). The latest passed
        occurrence of a wait in epoch ``k`` (the owner's resets before it in the text: they are top-level ops)
        whose threshold ``t`` there does not accept the initial value passed on a flag of epoch ``k`` that landed
        since reset ``k``: earlier epochs' flags all landed before it, later ones are issued after reset ``k + 1``,
        which follows the wait. So a flag of epoch ``k`` carrying a value ``t`` accepts was issued."""
        e = w.epochs
        assert e is not None
        out: list[z3.BoolRef] = []
        for lf in w.waits:
            op = lf.op
            assert isinstance(op, SemWait)
            k = sum(1 for r in w.sets if r.index < lf.index) - 1
            if k < 0:
                continue
            some, idx = self.enc.last_occurrence(lf)
            t = self.enc.threshold(lf, idx)

            def accepts(v: int, t: z3.ArithRef = t, cond: WaitCond = op.cond) -> z3.BoolRef:
                return t == v if cond == WaitCond.EQ else t <= v
            issued = [z3.If(accepts(e.value_of(f)), self.enc.executed(f), 0) for f in e.epoch_flags(k, w.flags)]
            total = z3.Sum(issued) if len(issued) > 1 else (issued[0] if issued else self.enc.q.val(0))
            out.append(z3.Implies(z3.And(some, z3.Not(accepts(w.init))), total >= 1))
        return out

    def landings(self, w: Word, sent: Encoder) -> list[z3.BoolRef]:
        """What a word outside the protocols that only sets and flag multicasts write shows in every run
        (``semaphores.landings``), the flags counted at ``sent``'s positions (issued, or, for an encoder of flags
        that left, left): each passed wait that only a landing since its reset can pass took a landing of its own,
        so those waits passed are at most the flags that may carry a value they accept; and the latest passed
        occurrence of any wait whose threshold there accepts no stored value saw a landing of such a flag."""
        out: list[z3.BoolRef] = []
        for waits, flags in w.landed_by:
            count = [sent.executed(f) for f in flags]
            out.append(self._sum(list(waits), weight=1) <= (z3.Sum(count) if count else self.enc.q.val(0)))
        if not w.carriers:
            return out
        for lf in w.waits:
            assert isinstance(lf.op, SemWait)
            some, idx = self.enc.last_occurrence(lf)
            t = self.enc.threshold(lf, idx)
            cond = lf.op.cond
            rejects = z3.And([z3.Not(_accepts(cond, r, t)) for r in w.stored])
            issued = [z3.If(z3.Or([_accepts(cond, r, t) for r in rs]), sent.executed(f), 0) for f, rs in w.carriers]
            out.append(z3.Implies(z3.And(some, rejects), z3.Sum(issued) >= 1))
        return out

    # --- facts and conditions ------------------------------------------------------------------------
    def consistency(self, trusted_buffers: set[int], names: set[str] | None = None) -> list[tuple[str, z3.BoolRef]]:
        """Necessary conditions of reachability, each labelled.

        Buffers: ``popped <= pushed <= popped + capacity`` (pops covered by waits, pushes by reserves — only for
        ``trusted_buffers``, whose coverage rules were proved). Words: a passed wait needed its value, values grow
        (a reset word's: until its first consuming wait).
        """
        out: list[tuple[str, z3.BoolRef]] = []
        if names is not None:
            trusted_buffers = {b for b in trusted_buffers if f"cb{b}" in names}
        for b in sorted(trusted_buffers):
            if b not in self.buf_leaves:
                continue
            pu, po = self.pushed(b), self.popped(b)
            out.append((f"cb{b}", z3.And(po <= pu, pu - po <= self.p.buffers[b].capacity)))
        out += self._window_facts(trusted_buffers)
        for w in self.words.values():
            if names is not None and w.name not in names:
                continue
            if w.kind == "monotone":
                for lf in w.waits:
                    assert isinstance(lf.op, SemWait)
                    if not lf.op.terms:
                        out.append((w.name, z3.Implies(self.enc.started(lf), self.value(w) >= lf.op.value)))
                        continue
                    # A growing threshold: the most recent passed occurrence saw at least its own threshold.
                    some, idx = self.enc.last_occurrence(lf)
                    out.append((w.name, z3.Implies(some, self.value(w) >= self.enc.threshold(lf, idx))))
            elif w.kind == "reset":
                out.append((w.name, self.incs(w) >= self.consumed(w)))
                # A passed non-consuming wait saw its threshold; while no consuming wait has run the word only grew.
                consuming = {lf.index for lf in w.consuming}
                for lf in w.waits:
                    if lf.index in consuming:
                        continue
                    some, idx = self.enc.last_occurrence(lf)
                    out.append((w.name, z3.Implies(z3.And(some, self.consuming_done(w) == 0),
                                                   self.value(w) >= self.enc.threshold(lf, idx))))
            elif w.kind == "flag":
                out.append((w.name, self.flags_issued(w) >= self.waits_done(w)))
            elif w.kind in ("unsupported", "epochs"):
                # No protocol (or one whose obligations may not hold), but every run shows it (semaphores.landings).
                out += [(w.name, fact) for fact in self.landings(w, self.enc)]
                if w.kind == "epochs" and w.epochs is not None and not w.epochs.is_source(w):
                    out += [(w.name, fact) for fact in self.epoch_seen(w)]
            elif w.kind == "sequence":
                # A passed wait saw a value at least its threshold, and every value the word ever held is at most the
                # largest its sequence stored so far (``seq_top``): true whatever the protocol does.
                assert w.seq is not None
                top = self.seq_top(w.seq)
                for lf in w.waits:
                    some, idx = self.enc.last_occurrence(lf)
                    out.append((w.name, z3.Implies(some, top >= self.enc.threshold(lf, idx))))
        return out

    def _window_facts(self, trusted_buffers: set[int]) -> list[tuple[str, z3.BoolRef]]:
        """A passed Reserve (Wait) still holds while its engine has not pushed (popped) that buffer since, in the
        same iteration of the reserve's loop body (inside all of its containers, ifs included: the reserve ran in
        this iteration): the producer alone moves ``pushed`` and ``popped`` only grows (resp. the consumer alone
        moves ``popped`` and ``pushed`` only grows)."""
        out: list[tuple[str, z3.BoolRef]] = []
        for b in sorted(trusted_buffers):
            for lf in self.buf_leaves.get(b, []):
                op = lf.op
                if not isinstance(op, (Reserve, Wait)):
                    continue
                # Another engine's pops move the acked word a data-movement sharing waiter compares: what still holds
                # of its passed wait is that pushed (which only grows) reached its count.
                moved = isinstance(op, Wait) and lf.engine in self.sharing.get(b, ()) and not sees_own_pops_only(
                    self.views[lf.engine].program.engine) and any(isinstance(x.op, Pop) for x in self.buf_leaves[b])
                closer = Push if isinstance(op, Reserve) else Pop
                leaves = self.views[lf.engine].leaves
                j = lf.index
                while j + 1 < len(leaves) and leaves[j + 1].containers[: len(lf.containers)] == lf.containers:
                    j += 1
                    nxt = leaves[j].op
                    if isinstance(nxt, closer) and nxt.buf == b:
                        break
                if j == lf.index:
                    continue
                sel = self.enc.position(lf.engine).sel
                held = self.pushed(b) >= op.pages if moved else self.enabled(lf)
                assert held is not None
                out.append((f"cb{b}", z3.Implies(z3.And(sel > lf.index, sel <= j), held)))
        return out

    def enabled(self, lf: Leaf) -> z3.BoolRef | None:
        """When the blocking op ``lf`` may proceed, as a function of the counters; None for ops that never block
        for good (barriers wait only for landings, which are always possible)."""
        op = lf.op
        if isinstance(op, Reserve):
            cap = self.p.buffers[op.buf].capacity
            return self.pushed(op.buf) - self.popped(op.buf) + op.pages <= cap
        if isinstance(op, Wait):
            if lf.engine in self.sharing.get(op.buf, ()) and sees_own_pops_only(self.views[lf.engine].program.engine):
                return self.pushed(op.buf) >= op.pages  # llk_wait_tiles counts the unpacker's own pops: none
            return self.pushed(op.buf) - self.popped(op.buf) >= op.pages
        if isinstance(op, SemWait):
            w = self.words[(op.sem, self.views[lf.engine].program.site)]
            v = self.value(w)
            want = self.enc.threshold_now(lf)
            return v == want if op.cond == WaitCond.EQ else v >= want
        return None

    def touches(self) -> dict[str, set[str]]:
        """Counter name -> engines whose ops read or change it (to split engines into independent components)."""
        return touches(self.buf_leaves, self.words)


def touches(buf_leaves: dict[int, list[Leaf]], words: dict[tuple[int, Site], Word]) -> dict[str, set[str]]:
    """``CounterModel.touches`` from the buffers' leaves (``tables``) and the words alone: no query, no solver
    context (``reach.analyse`` asks it once per program)."""
    out: dict[str, set[str]] = {}
    for b, leaves in buf_leaves.items():
        out.setdefault(f"cb{b}", set()).update(lf.engine for lf in leaves)
    for w in words.values():
        es = {lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits, *w.inline)}
        if w.kind == "flag":
            es |= {lf.engine for lf in w.flags}
        if w.seq is not None:  # a sequence word's value follows its owner's sets
            es.add(w.seq.owner)
        out.setdefault(w.name, set()).update(es)
    # Multicast data couples a sender with its receivers only through flags and ready counters, which are
    # words above; McastSend itself never blocks.
    return out
