"""Which protocol each semaphore word follows, decided from the program's structure alone.

A word is (semaphore id, site). The checker reduces every word to a monotone counter so that deadlock and
ordering questions become questions about counters (DESIGN §7, route step 3). The reduction is sound only under
the obligations each protocol lists; those are discharged separately (``counters.py``). Words that follow no
protocol here are reported as outside the decided fragment (failed-to-prove), never assumed.

Protocols:
- ``monotone``: only increments (by >= 0) land on it; value = init + increments issued.
- ``reset``: one engine at the site waits on it and resets it to ``init`` right after every wait (the multicast
  ready counter: wait ==n, set 0; the rendezvous gather). Each passed wait consumes ``v - init``.
  Obligation: when the reset runs, exactly the consumed increments have been issued (no lost update).
- ``flag``: one engine sets it to ``I`` and waits for ``V``, alternately (set, wait, set, wait ...); remote
  writes are flag multicasts whose source word holds the constant ``V`` (the multicast valid flag). The k-th wait
  returns once k flags have landed. Obligations: flag k is not issued before set k, nor before wait k-1 returns.
- ``source``: the sender's own copy, only ever set to one value ``V`` before its first use as a multicast source.
"""

from __future__ import annotations

import attrs

from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import If, Loop, McastSetValid, Op, SemInc, SemSet, SemWait
from verispatial.ir.program import Program


@attrs.frozen
class Word:
    """How one semaphore word is used and which protocol it follows (``kind``; ``why`` when unsupported)."""

    sem: int
    site: Site
    kind: str  # "unused" | "monotone" | "reset" | "flag" | "source" | "unsupported"
    init: int
    incs: tuple[Leaf, ...] = ()
    flags: tuple[Leaf, ...] = ()  # McastSetValid leaves (of senders) that write this word
    sets: tuple[Leaf, ...] = ()
    waits: tuple[Leaf, ...] = ()
    owner: str | None = None  # the one engine at the site that sets/waits it
    value: int | None = None  # flag: V (the value a flag writes); source: V
    why: str = ""

    @property
    def name(self) -> str:
        return f"sem{self.sem}@{self.site}"


def _alternates(ops: tuple[Op, ...], sem: int) -> bool:
    """Each op list, seen at its own level (nested loops count as units), is (set, wait)* with loops only
    between pairs, and each loop body is itself such a list: then the flattened sequence alternates."""
    expect_set = True
    for op in ops:
        if isinstance(op, Loop):
            if not _alternates(op.body, sem):
                return False
            if not expect_set and _touches(op.body, sem):
                return False
        elif isinstance(op, SemSet) and op.sem == sem:
            if not expect_set:
                return False
            expect_set = False
        elif isinstance(op, SemWait) and op.sem == sem:
            if expect_set:
                return False
            expect_set = True
    return expect_set


def _touches(ops: tuple[Op, ...], sem: int) -> bool:
    for op in ops:
        if isinstance(op, Loop):
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
    #: per engine and semaphore: the top-level ops holding a set, wait or flag multicast of it (and any ``If``)
    tops: dict[str, dict[int, set[int]]]
    guarded: dict[str, set[int]]

    @classmethod
    def of(cls, p: Program, views: dict[str, EngineView]) -> _Index:
        incs: dict[tuple[int, Site], list[Leaf]] = {}
        flags: dict[tuple[int, Site], list[Leaf]] = {}
        local: dict[tuple[int, Site], list[Leaf]] = {}
        tops: dict[str, dict[int, set[int]]] = {}
        guarded: dict[str, set[int]] = {}
        for v in views.values():
            site = v.program.site
            mine = tops[v.key] = {}
            ifs = guarded[v.key] = set()
            for lf in v.leaves:
                op = lf.op
                if isinstance(op, SemInc):
                    incs.setdefault((op.sem, op.at), []).append(lf)
                elif isinstance(op, McastSetValid):
                    for d in p.groups[op.group].destinations():
                        flags.setdefault((op.sem, d), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                elif isinstance(op, (SemSet, SemWait)):
                    local.setdefault((op.sem, site), []).append(lf)
                    mine.setdefault(op.sem, set()).add(lf.path[0])
                elif isinstance(op, If):
                    ifs.add(lf.path[0])
        return cls(incs, flags, local, tops, guarded)

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
                key = (lf.op.sem, v.program.site)
                if key in out:
                    continue
                out[key] = _source_value(p, lf.op.sem, v.program.site, v, index)
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
    return _value_at_sends(sender, sem, p.semaphores[sem].init, index)


def _value_at_sends(sender: EngineView, sem: int, init: int, index: _Index) -> int | str:
    """The value the sender's own word holds at every flag multicast that reads it, by a may-analysis over every
    path of the sender's program (loops to a fixpoint, trip loops may run zero times)."""
    from verispatial.certify.rules import _run

    seen: set[int] = set()

    def step(op: Op, _path: tuple[int, ...], s: frozenset[tuple[object, ...]]) -> frozenset[tuple[object, ...]]:
        if isinstance(op, SemSet) and op.sem == sem:
            return frozenset({("v", op.value)})
        if isinstance(op, McastSetValid) and op.sem == sem:
            seen.update(int(t[1]) for t in s)  # type: ignore[call-overload]
        return s

    # Top-level ops that name no op on the word leave the may-state as it is (loops reach their fixpoint at once):
    # only the others are run (on a composed program that is the word's own section).
    _run(index.touching(sender, sem), (), frozenset({("v", init)}), step)
    if len(seen) != 1:
        return f"a flag multicast may read it holding any of {sorted(seen)}"
    return seen.pop()


def _classify_word(p: Program, views: dict[str, EngineView], sem: int, site: Site, init: int,
                   sources: dict[tuple[int, Site], int | str], index: _Index) -> Word:
    incs = tuple(index.incs.get((sem, site), ()))
    flags = tuple(index.flags.get((sem, site), ()))
    local = index.local.get((sem, site), [])
    sets = tuple(lf for lf in local if isinstance(lf.op, SemSet))
    waits = tuple(lf for lf in local if isinstance(lf.op, SemWait))
    base = {"sem": sem, "site": site, "init": init, "incs": incs, "flags": flags, "sets": sets, "waits": waits}

    def unsupported(why: str) -> Word:
        return Word(kind="unsupported", why=why, **base)  # type: ignore[arg-type]

    if (sem, site) in sources and not flags and not incs and not waits:
        v = sources[(sem, site)]
        if isinstance(v, str):
            return unsupported(f"flag multicast source whose value is not constant: {v}")
        return Word(kind="source", value=v, owner=sets[0].engine if sets else None, **base)  # type: ignore[arg-type]
    if not (incs or flags or sets or waits):
        return Word(kind="unused", **base)  # type: ignore[arg-type]
    if any(isinstance(lf.op, SemInc) and lf.op.by < 0 for lf in incs):
        return unsupported("a negative increment")
    if not flags and not sets:
        return Word(kind="monotone", **base)  # type: ignore[arg-type]
    owners = {lf.engine for lf in sets + waits}
    if len(owners) != 1:
        return unsupported(f"{len(owners)} engines of the site set or wait on it (one owner is decided)")
    owner = next(iter(owners))
    view = views[owner]
    if not flags:
        # Reset protocol: every wait immediately followed by a reset to init, every reset right after a wait.
        wait_idx = {lf.index for lf in waits}
        for lf in sets:
            prev = view.leaves[lf.index - 1] if lf.index > 0 else None
            if prev is None or prev.index not in wait_idx or prev.loops != lf.loops:
                return unsupported(f"{lf.engine} sets it at {list(lf.path)} not right after a wait on it")
            if isinstance(lf.op, SemSet) and lf.op.value != init:
                return unsupported(f"a reset to {lf.op.value}, not to its initial value {init}")
        set_idx = {lf.index for lf in sets}
        for lf in waits:
            if lf.index + 1 not in set_idx:
                return unsupported(f"{lf.engine} waits on it at {list(lf.path)} without resetting it right after")
        return Word(kind="reset", owner=owner, **base)  # type: ignore[arg-type]
    # Flag protocol.
    if incs:
        return unsupported("both increments and flag multicasts land on it")
    values: set[int] = set()
    for lf in flags:
        src: int | str | None = (sources.get((lf.op.sem, views[lf.engine].program.site))
                                  if isinstance(lf.op, McastSetValid) else None)
        if not isinstance(src, int):
            return unsupported(f"the flag written by {lf.engine} has no constant source value ({src})")
        values.add(src)
    if len(values) != 1:
        return unsupported(f"flag multicasts write different values {sorted(values)}")
    flag_value = values.pop()
    set_values = {lf.op.value for lf in sets if isinstance(lf.op, SemSet)}
    if len(set_values) != 1 or flag_value in set_values:
        return unsupported(f"the owner's resets {sorted(set_values)} must be one value other than the flag's {flag_value}")
    reset_value = set_values.pop()
    for lf in waits:
        op = lf.op
        assert isinstance(op, SemWait)
        ok = op.value == flag_value if op.cond == WaitCond.EQ else reset_value < op.value <= flag_value
        if not ok:
            return unsupported(f"a wait for {op.cond.value} {op.value} does not test the flag value {flag_value}")
    if not _alternates(index.touching(view, sem), sem):
        return unsupported(f"{owner} does not alternate reset and wait on it (set, wait, set, wait, ...)")
    return Word(kind="flag", owner=owner, value=flag_value, **base)  # type: ignore[arg-type]
