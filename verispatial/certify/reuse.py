"""``async-source-reuse`` across occurrences and engines (docs/semantics.md, "Sources of asynchronous writes").

The per-engine abstract interpretation (``rules.py``) flags every op that may free, re-reserve or rewrite a page (or
a flag source word) while a write or multicast of the same engine issued from it may not have left. A flagged op
is often safe for a reason the per-engine view cannot see: on a target whose writes stay ordered
(``Target.ordered_writes``, Wormhole) a *later* flag multicast that some receiver has seen land implies that every
earlier multicast of the engine left its source. This module asks, with one reachability query per (flagged op,
source leaf), whether an occurrence ``I`` of the source leaf can still be at home when the op runs:

- ``at``: a second position of the issuing engine, at the source leaf in occurrence ``I`` (its page arithmetic: the
  pages ``I`` read are ``[pushed, pushed + pages)`` of its buffer at that moment);
- ``I`` issued (the engine executed it) and no Flush/WriteBarrier of the engine passed since it;
- on ordered targets, a *leave frontier* ``L``: a third position of the engine such that the multicasts it issued
  before ``L`` are exactly those that left (they leave in issue order). ``L`` is at or before now and at or after
  every Flush/WriteBarrier the engine passed; every passed wait of a flag word all of whose flags are this
  engine's needed a flag that landed, so left: ``waits_done(w) <= sum of flags to w issued before L``. ``I`` has not
  left: ``I`` is not before ``L``;
- the flagged op's pages (or word) meet ``I``'s.

Unsat discharges the candidate for that source; sat (or unknown) leaves it to the interpreter's replay.

The same query, with the flagged op on *another* engine of the site, decides a SemSet of a flag source word by an
engine that did not issue the flag.
"""

from __future__ import annotations

import time

import z3

from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.rules import LATE, EngineFacts, Finding
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, all_of, any_of
from verispatial.certify.structure import Leaf, op_at
from verispatial.families.semaphores.encoding import loopback_reuse
from verispatial.ir import rules as R
from verispatial.ir.ops import (
    FillTiles,
    Flush,
    McastSend,
    McastSetValid,
    PackAcc,
    Pop,
    Push,
    ReadTiles,
    Reserve,
    SemInc,
    SemIncMcast,
    SemSet,
    WriteBarrier,
)


def _pushed(enc: Encoder, pushes: list[Leaf]) -> z3.ArithRef:
    terms = [enc.executed(lf) * lf.op.pages for lf in pushes if isinstance(lf.op, Push)]
    if not terms:
        return enc.q.val(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def _within(x: z3.ArithRef, values: frozenset[int] | set[int]) -> z3.BoolRef:
    """``x`` is one of ``values`` (as a disjunction of maximal intervals)."""
    vs = sorted(values)
    parts: list[z3.BoolRef] = []
    i = 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        parts.append(z3.And(x >= vs[i], x <= vs[j]))
        i = j + 1
    return any_of(x.ctx, parts)


def _hazard_pages(facts: EngineFacts, lf: Leaf) -> tuple[int, set[int]] | None:
    """The buffer and the page offsets (past the write pointer) the op at ``lf`` may reach or write; None for an
    op that touches no page (a SemSet)."""
    op = lf.op
    if isinstance(op, Reserve):
        lo = facts.reserve_from.get(lf.path, 0)
        return op.buf, set(range(lo, op.pages))
    if isinstance(op, (ReadTiles, PackAcc, FillTiles)):
        b = op.buf if isinstance(op, PackAcc) else op.into
        return b, set(facts.written.get(lf.path, frozenset()))
    return None


class _Reuse:
    """The query of one (flagged op, source leaf) pair."""

    def __init__(self, a: Analysis, issuer: str, src: Leaf, hazard: Leaf, pages: tuple[int, set[int]] | None) -> None:
        self.a = a
        self.issuer = issuer
        self.src = src
        self.hazard = hazard
        self.pages = pages
        view = a.views[issuer]
        self.covers = [lf for lf in view.leaves if isinstance(lf.op, (Flush, WriteBarrier))]
        self.flags = [lf for lf in view.leaves if isinstance(lf.op, McastSetValid)]
        flag_idx = {lf.index for lf in self.flags}
        # Flag words every flag of which this engine sends: a passed wait on one needed one of those flags to land.
        self.words = [w for w in a.words.values()
                      if w.kind == "flag" and w.flags and all(f.engine == issuer and f.index in flag_idx for f in w.flags)]
        # Destinations of this engine's sequence (semaphores.Sequence): a passed wait above the initial value saw a
        # copy land (only copies write the word), so some flag to it had left. Not which one: what a copy carries
        # is the source's value when it left, which a reuse elsewhere may have changed.
        self.copies = [w for w in a.words.values()
                       if w.kind == "sequence" and w.seq is not None and w.seq.owner == issuer
                       and not w.seq.is_source(w) and w.flags and w.waits]

    def engines(self) -> frozenset[str]:
        return frozenset({self.issuer, self.hazard.engine} | {str(w.owner) for w in self.words if w.owner}
                         | {lf.engine for w in self.copies for lf in w.waits})

    def build(self, sq: StateQuery) -> z3.BoolRef:
        p = self.a.program
        enc, q = sq.enc, sq.q
        at = Encoder(q, p, self.a.views, prefix="src.", trip_vars=enc.trip_vars)
        conds: list[z3.BoolRef] = [
            sq.enc.position(self.hazard.engine).at(self.hazard),
            at.position(self.issuer).at(self.src),
            enc.executed(self.src) > at.executed(self.src),  # occurrence I was issued
        ]
        conds += [enc.executed(c) == at.executed(c) for c in self.covers]  # no flush/write barrier since I
        if p.target.ordered_writes:
            left = Encoder(q, p, self.a.views, prefix="left.", trip_vars=enc.trip_vars)
            left.position(self.issuer)
            for x in [self.src, *self.flags, *self.covers]:
                conds.append(left.executed(x) <= enc.executed(x))
            conds += [left.executed(c) >= enc.executed(c) for c in self.covers]
            for w in self.words:
                landed = z3.Sum([left.executed(f) for f in w.flags]) if len(w.flags) > 1 else left.executed(w.flags[0])
                conds.append(sq.cm.waits_done(w) <= landed)
            for w in self.copies:
                gone = z3.Sum([left.executed(f) for f in w.flags]) if len(w.flags) > 1 else left.executed(w.flags[0])
                for lf in w.waits:
                    if lf.engine not in sq.engines:
                        continue
                    some, idx = enc.last_occurrence(lf)
                    conds.append(z3.Implies(z3.And(some, enc.threshold(lf, idx) > w.init), gone >= 1))
            conds.append(left.executed(self.src) <= at.executed(self.src))  # I has not left
        if self.pages is not None:
            op = self.src.op
            assert isinstance(op, McastSend)
            b, offsets = self.pages
            cap = p.buffers[b].capacity
            pushes = [lf for lf in self.a.views[self.issuer].leaves if isinstance(lf.op, Push) and lf.op.buf == b]
            j, h = q.int_var("reuse.j"), q.int_var("reuse.h")
            conds += [j >= 0, j < op.pages, _within(h, offsets),
                      (_pushed(at, pushes) + j) % cap == (_pushed(enc, pushes) + h) % cap]
        return all_of(q.ctx, conds)


def _applies(facts: EngineFacts, src: Leaf, hazard: Leaf) -> tuple[bool, tuple[int, set[int]] | None]:
    """Whether the query decides this (source, op) pair, and the op's pages."""
    op = src.op
    if isinstance(op, McastSetValid):
        return isinstance(hazard.op, SemSet) and hazard.op.sem == op.source, None
    if isinstance(op, McastSend) and not op.front:
        pages = _hazard_pages(facts, hazard)
        if pages is None or pages[0] != op.buf:
            return False, None
        return True, pages
    return False, None


def discharge(a: Analysis, facts: dict[str, EngineFacts], f: Finding, trusted: set[int],
              rlimit: int = DEFAULT_RLIMIT) -> bool:
    """Whether every source the finding names is shown to have left when its op runs (each query unsat)."""
    if f.rule != R.ASYNC_SOURCE_REUSE or f.path is None or not f.sources or LATE in f.sources:
        return False
    if not a.program.target.ordered_writes:
        # Without the write order only a flush or write barrier shows a source left, and the per-engine run already
        # saw every path's: the query would only repeat it (on a large grid, at the cost of the widest scope).
        return False
    view = a.views[f.engine]
    hazard = next((lf for lf in view.leaves if lf.path == f.path), None)
    if hazard is None:
        return False
    for s in f.sources:
        src = view.leaves[s]
        ok, pages = _applies(facts[f.engine], src, hazard)
        if not ok or (pages is not None and pages[0] not in trusted):
            return False
        r = _Reuse(a, f.engine, src, hazard, pages)
        o, _d, _ = solve_each(a, r.build, f"{R.ASYNC_SOURCE_REUSE}:{f.engine}:{list(f.path)}", r.engines(), trusted,
                              rlimit, extra=[hazard, src])
        if o.status != Status.UNSAT:
            return False
    return True


def cross_engine(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[tuple[Result, Leaf | None]]:
    """Flag source words another engine of the site sets, or remote writes land on: one candidate result each
    (proved by the query, else a refutation candidate the caller replays with the op it names)."""
    p = a.program
    out: list[tuple[Result, Leaf | None]] = []
    leaves = [lf for v in a.views.values() for lf in v.leaves]
    site_of = {k: v.program.site for k, v in a.views.items()}
    for s in leaves:
        if not isinstance(s.op, McastSetValid):
            continue
        sem, site = s.op.source, site_of[s.engine]
        for h in leaves:
            if h.engine == s.engine or site_of[h.engine] != site or not isinstance(h.op, SemSet) or h.op.sem != sem:
                continue
            t0 = time.perf_counter()
            name = f"{R.ASYNC_SOURCE_REUSE}:{h.engine}:{list(h.path)}"
            r = _Reuse(a, s.engine, s, h, None)
            o, _d, _ = solve_each(a, r.build, name, r.engines(), trusted, rlimit, extra=[h, s])
            dt = time.perf_counter() - t0
            msg = (f"{h.engine} sets sem{sem}@{site}, the source word of {s.engine}'s flag multicast at {list(s.path)}")
            if o.status == Status.UNSAT:
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED, msg + ", only once that flag has left",
                                   seconds=dt), None))
            else:
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED if o.status == Status.SAT else Verdict.FAILED,
                                   msg + " while it may not have left" if o.status == Status.SAT else
                                   f"solver: {o.reason}", seconds=dt), h))
        # Remote writes landing on a source word: decided for a sequence's loopback copies of its own word (the
        # owner's program order, families/semaphores/encoding.py ``loopback_reuse``), else not (the word's protocol
        # is outside the fragment).
        remote = [x for x in leaves if (isinstance(x.op, SemInc) and x.op.sem == sem and x.op.at == site)
                  or (isinstance(x.op, (McastSetValid, SemIncMcast)) and x.op.sem == sem
                      and site in p.groups[x.op.group].destinations())]
        word = a.words.get((sem, site))
        seq = word.seq if word is not None and word.kind == "sequence" and word.seq is not None \
            and word.seq.is_source(word) else None
        hazards = dict((lf.path, why) for lf, why in loopback_reuse(a, word)) if seq is not None and word else {}
        for x in remote:
            name = f"{R.ASYNC_SOURCE_REUSE}:{x.engine}:{list(x.path)}"
            if any(r.name == name for r, _ in out):
                continue
            msg = f"{x.engine}'s remote write lands on sem{sem}@{site}, the source word of {s.engine}'s flag multicast"
            if seq is not None and word is not None and x in word.flags and x.path not in hazards:
                out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.PROVED,
                                   f"{x.engine}'s loopback copy of sequence word sem{sem}@{site} lands on it only once "
                                   "every flag multicast reading it issued before has left (each copy lands before the "
                                   "next flag reading the word is issued)"), None))
                continue
            why = f" ({hazards[x.path]})" if x.path in hazards else ""
            out.append((Result(R.Family.ASYNC_NOC.value, name, Verdict.REFUTED,
                               f"{msg} at {list(s.path)}{why}"), x))
    return out


def _popped(enc: Encoder, pops: list[Leaf]) -> z3.ArithRef:
    terms = [enc.executed(lf) * lf.op.pages for lf in pops if isinstance(lf.op, Pop)]
    if not terms:
        return enc.q.val(0)
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def may_reach_source(a: Analysis, facts: dict[str, EngineFacts], f: Finding, freed: int, pop: Finding,
                     trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> bool:
    """Whether the op of a ``rules.reuse_consequences`` candidate ``f`` — a Reserve of b, or a ReadTiles/PackAcc into
    b, by b's producer, after the premature ``pop`` (a finding at a Pop of b, ``freed``, by its consumer) — may reach
    a page that is the source of an outstanding write or multicast of the consumer. One reachability query per source
    the pop names: the producer at its op, a second position of the consumer at the source leaf in occurrence ``I``
    (issued, no Flush/WriteBarrier of the consumer since), and the op's pages reaching ``I``'s ring slot again:
    ``pushed + reach > popped_at_I + capacity`` (``I`` reads pages from its read pointer ``popped_at_I`` on, waited so
    below ``pushed``; a later page in the same slot is at least one capacity further; ``reach``: the pages past the
    write pointer the op reserves or writes). A fill lands after it was issued, but the source it may rewrite was
    issued before its page could be reserved at all, so the condition at issue is necessary. Every query unsat clears
    the candidate (False). True (keep it) for a fill into an alias of b (its own ring says nothing of b's slots) or
    when a query is sat or unknown."""
    if f.path is None or pop.path is None or LATE in pop.sources:
        return True
    p = a.program
    view = a.views[f.engine]
    op = op_at(view.program, f.path)
    if isinstance(op, Reserve):
        b, reach = op.buf, op.pages
    elif isinstance(op, (ReadTiles, PackAcc, FillTiles)):
        b = op.buf if isinstance(op, PackAcc) else op.into
        written = facts[f.engine].written.get(f.path, frozenset())
        reach = max(written, default=0) + 1
    else:
        return True
    if b != freed:
        return True
    lf = next(x for x in view.leaves if x.path == f.path)
    consumer = a.views[pop.engine]
    pushes = [x for x in view.leaves if isinstance(x.op, Push) and x.op.buf == b]
    pops = [x for x in consumer.leaves if isinstance(x.op, Pop) and x.op.buf == b]
    covers = [x for x in consumer.leaves if isinstance(x.op, (Flush, WriteBarrier))]
    cap = p.buffers[b].capacity
    for s in pop.sources:
        src = consumer.leaves[s]

        def build(sq: StateQuery, src: Leaf = src) -> z3.BoolRef:
            enc = sq.enc
            at = Encoder(sq.q, p, a.views, prefix="src.", trip_vars=enc.trip_vars)
            conds = [enc.position(f.engine).at(lf), at.position(pop.engine).at(src),
                     enc.executed(src) > at.executed(src)]
            conds += [enc.executed(c) == at.executed(c) for c in covers]
            conds.append(_pushed(enc, pushes) + reach > _popped(at, pops) + cap)
            return all_of(sq.q.ctx, conds)

        o, _d, _ = solve_each(a, build, f"{R.ASYNC_SOURCE_REUSE}:{f.engine}:{list(f.path)}:reach", {f.engine, pop.engine},
                              trusted, rlimit, extra=[lf, src])
        if o.status != Status.UNSAT:
            return True
    return False
