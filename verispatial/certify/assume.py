"""What each proof leans on (issue 7: every verdict stands on its own).

A proof of one obligation may use a fact that another obligation states: a deadlock proof reads a reset word's
value as ``init + increments - consumed`` only because no update of it is lost (``sem-exact``), a flag word's value
as the constant of its source word only because that source is not rewritten before the flag left
(``async-source-reuse``), and so on. ``assumptions`` names, for one result, every obligation its proof used in
that way; ``report.settle`` then keeps the result proved only while each of them is proved. The table (one row per
obligation kind, by the name's prefix) is in docs/checker.md, "What a proof assumes".

Facts a query takes from the program text alone (positions, occurrence counts, the consistency facts of
``counters.py`` that hold whatever the protocol does) need no assumption; nor do the coverage facts of a buffer
no coverage finding names: the abstract interpretation of ``rules.py`` established them, and buffers a finding
names are not trusted at all (``checker.check``). The coverage rules' results that exist are still listed, so the
dependency is visible.
"""

from __future__ import annotations

import attrs

from verispatial.certify.facts import RULE_FAMILY, Finding
from verispatial.certify.reach import Analysis
from verispatial.certify.report import Result, Verdict
from verispatial.certify.semaphores import Word
from verispatial.certify.structure import Leaf
from verispatial.families.multicast.encoding import covering_epochs, covering_flag, dest_buffers
from verispatial.ir import obligation
from verispatial.ir import rules as R
from verispatial.ir.obligation import ComponentRef, OrderingRef
from verispatial.ir.ops import McastSend, McastSetValid, Push, RemoteRead, SemSet

#: The per-engine rules whose proof makes a buffer trusted (its occupancy facts usable by every query).
COVERAGE_RULES = (R.CB_SINGLE_PRODUCER, R.CB_SINGLE_CONSUMER, R.CB_PUSH_UNCOVERED, R.CB_POP_UNCOVERED)

#: Obligation kinds (name prefixes) whose queries use the reachability facts, hence the trusted buffers.
_USES_FACTS = {R.SEM_EXACT, R.SEM_SET_RACE, R.SEM_OVERSHOOT, R.SEM_FLAG_EARLY, R.MCAST_SLOT, R.MCAST_PUBLISH,
               R.HB_ACTIVATION, R.HB_STATE, R.HB_WRITE_WRITE, R.HB_RENDEZVOUS, R.ALIAS_CLOBBER, R.DEADLOCK}


def finding_name(f: Finding) -> str:
    """The obligation name of a per-engine rule finding (as ``checker._rule_results`` reports it)."""
    return f"{f.rule}:{f.engine}:{list(f.path) if f.path is not None else 'end'}"


@attrs.frozen
class Basis:
    """The per-engine rule findings of one program, indexed for naming assumptions."""

    findings: tuple[Finding, ...]
    trusted: frozenset[int]

    def rule_at(self, rule: str, engine: str, path: tuple[int, ...]) -> tuple[str, ...]:
        """The obligation that says ``rule`` holds at op ``path`` of ``engine``: its finding there, else the rule's
        aggregate result when the rule has no finding at all, else none (the analysis established it there)."""
        fs = [f for f in self.findings if f.rule == rule]
        if not fs:
            return (rule,)
        return tuple(finding_name(f) for f in fs if f.engine == engine and f.path == path)

    def coverage(self) -> tuple[str, ...]:
        return tuple(r for r in COVERAGE_RULES if not any(f.rule == r for f in self.findings))


def _source_reuse(a: Analysis, b: Basis, w: Word) -> tuple[str, ...]:
    """``async-source-reuse`` at every reset of the source word of a flag that lands on ``w`` (the flag word's value
    is its source's constant only if no source is rewritten before its flag left)."""
    out: list[str] = []
    if not any(f.rule == R.ASYNC_SOURCE_REUSE for f in b.findings):
        return (R.ASYNC_SOURCE_REUSE,) if w.flags else ()
    for lf in w.flags:
        op = lf.op
        assert isinstance(op, McastSetValid)
        site = a.views[lf.engine].program.site
        for f in b.findings:
            if f.rule != R.ASYNC_SOURCE_REUSE or f.path is None or a.views[f.engine].program.site != site:
                continue
            leaf = _leaf(a, f.engine, f.path)
            if leaf is not None and isinstance(leaf.op, SemSet) and leaf.op.sem == op.source:
                out.append(finding_name(f))
    return tuple(dict.fromkeys(out))


def _leaf(a: Analysis, engine: str, path: tuple[int, ...]) -> Leaf | None:
    v = a.views.get(engine)
    if v is None:
        return None
    return next((lf for lf in v.leaves if lf.path == path), None)


def _component(a: Analysis, first: str) -> frozenset[str] | None:
    """The component a ``deadlock:`` obligation names by its least engine ``first``."""
    return next((c for c in a.components if min(c) == first), None)


def word_assumptions(a: Analysis, b: Basis, w: Word) -> tuple[str, ...]:
    """What the exact-counting proof of ``w`` assumes: for a flag word, that its flags' source words keep their
    value until the flags left; for a sequence word the same of the flags that write it (each copies the value its
    source held when it was issued, and copies land in issue order only because the source changes after they
    left), and for a destination also the sequence's own word's protocol (a late loopback copy could take the source
    back to an older value, which a later flag would copy)."""
    if w.kind == "flag":
        return _source_reuse(a, b, w)
    if w.kind == "sequence" and w.seq is not None:
        own = () if w.seq.is_source(w) else (f"{R.SEM_EXACT}:{w.seq.name}",)
        return (*_source_reuse(a, b, w), *own)
    if w.kind == "epochs" and w.epochs is not None and not w.epochs.is_source(w):
        # Each flag carries the value of the set before it, and flags carrying different values land in issue
        # order, only because the own word is set again after the flag before left (as for a sequence).
        return (*_source_reuse(a, b, w), f"{R.SEM_EXACT}:{w.epochs.name}")
    return ()


def assumptions(a: Analysis, b: Basis, r: Result) -> tuple[str, ...]:
    """The obligations the proof of ``r`` leans on (empty for obligations decided from the program text alone)."""
    oid = obligation.parse(r.name)
    kind, subject = oid.kind, oid.subject
    # An activation read's coverage query (no second op) reads no reachable state.
    static = kind == R.HB_ACTIVATION and isinstance(subject, OrderingRef) and subject.second is None
    out: list[str] = list(b.coverage()) if kind in _USES_FACTS and not static else []
    words = {w.name: w for w in a.words.values()}
    if kind == R.SEM_EXACT and str(oid.word) in words:
        out += word_assumptions(a, b, words[str(oid.word)])
    elif kind == R.DEADLOCK and isinstance(subject, ComponentRef):
        comp = _component(a, subject.engine)
        if comp is not None:
            # The counter model of every word the component touches: faithful only if its counting is exact.
            for w in sorted(a.words.values(), key=lambda x: x.name):
                if w.kind in ("monotone", "reset", "flag", "sequence", "epochs") and {
                        lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits)} & comp:
                    out.append(f"{R.SEM_EXACT}:{w.name}")
    elif kind == R.BALANCE_SEM and str(oid.word) in words and words[str(oid.word)].kind == "sequence" and (
            words[str(oid.word)].sem, words[str(oid.word)].site) not in a.program.rearmed_words():
        # The write that restores a sequence word lands last only under its protocol (semaphores.Sequence).
        out.append(f"{R.SEM_EXACT}:{oid.word}")
    elif kind == R.BALANCE_CB and oid.buffer is not None and oid.buffer in b.trusted:
        out += b.coverage()
    elif kind == R.MCAST_SLOT:
        # The receiver's write pointer stays put until the multicast landed only if it publishes after the flag.
        op = oid.op
        leaf = _leaf(a, op.engine, op.path) if op is not None and op.path is not None else None
        if leaf is not None and isinstance(leaf.op, McastSend):
            dests = {x.id for x in dest_buffers(a, leaf)}
            for v in a.views.values():
                out += [f"{R.MCAST_PUBLISH}:{lf.engine}:{list(lf.path)}" for lf in v.leaves
                        if isinstance(lf.op, Push) and lf.op.buf in dests]
    elif kind == R.MCAST_PUBLISH:
        # A seen flag announces landed data only if the flag cannot overtake the data multicast before it.
        op = oid.op
        leaf = _leaf(a, op.engine, op.path) if op is not None and op.path is not None else None
        if leaf is not None and isinstance(leaf.op, Push):
            word, _ = covering_flag(a, leaf.engine, a.program.buffers[leaf.op.buf])
            if word is not None:
                for f in word.flags:
                    out += b.rule_at(R.ASYNC_FLAG_OVERTAKE, f.engine, f.path)
            else:
                br = a.program.buffers[leaf.op.buf]
                landers = [x for v in a.views.values() for x in v.leaves
                           if isinstance(x.op, McastSend) and br.id in {d.id for d in dest_buffers(a, x)}]
                restart = covering_epochs(a, leaf, br, landers)
                if restart is not None:
                    # The flag its wait saw shows its epoch's earlier data landed only under the word's protocol.
                    out.append(f"{R.SEM_EXACT}:{restart[0].name}")
    elif kind == R.ASYNC_SOURCE_REUSE:
        # A remote read's pages stay its source only if they held what their owner published when it was issued:
        # the in-flight query starts from that page (families/noc/encoding.py, check_remote_reads).
        op = oid.op
        leaf = _leaf(a, op.engine, op.path) if op is not None and op.path is not None else None
        if leaf is not None and isinstance(leaf.op, RemoteRead):
            out.append(f"{R.REMOTE_READ_UNPUBLISHED}:{leaf.engine}:{list(leaf.path)}")
    # The counter model's facts of a restarting sequence's destination hold under its protocol (counters.epoch_seen):
    # a proof that may have read them leans on it, all but the protocol's own obligations — the word's, its own
    # word's and the source reuse they assume — which hold together by induction over time (the facts hold in every
    # state up to the first that breaks one of them).
    # A per-engine rule with no finding (its bare name) is decided on each engine's paths alone, no state query; one
    # whose findings a query discharged is async-source-reuse's (noc._Reuse), which reads the facts.
    per_engine = r.name in RULE_FAMILY and r.name != R.ASYNC_SOURCE_REUSE
    if r.verdict == Verdict.PROVED and not per_engine and kind != R.MCAST_ADDRESS:
        for w in sorted(a.words.values(), key=lambda x: x.name):
            if w.kind == "epochs" and w.epochs is not None and not w.epochs.is_source(w) and not (
                    r.name.endswith(f":{w.name}") or r.name.endswith(f":{w.epochs.name}")
                    or r.name in word_assumptions(a, b, w)):
                out.append(f"{R.SEM_EXACT}:{w.name}")
    return tuple(dict.fromkeys(out))
