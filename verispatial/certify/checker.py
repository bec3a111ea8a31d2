"""The checker: discharge every obligation of a scheduled program and report one verdict per obligation.

Order matters only for what later families may assume: the circular-buffer coverage rules decide which buffers'
occupancy bounds the reachability queries may use (``trusted``), exact counting decides which semaphore words'
counter models the deadlock question may use. Every proof that leans on another obligation records it
(``Result.assumes``, ``assume.py``), and once every family ran a proved result whose assumption is not proved fails
to prove (``report.settle``). Every refutation is replayed by the interpreter before it is reported as such; one
that does not replay fails to prove.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from verispatial import budget
from verispatial.budget import BudgetExhausted
from verispatial.certify.assume import Basis, assumptions
from verispatial.certify.canon import ProofMemo
from verispatial.certify.pending import outstanding_ops
from verispatial.certify.reach import Analysis, analyse
from verispatial.certify.replay import EXPLORE_STATES, Search, confirm_rule, search_confirmed, targets_of
from verispatial.certify.report import Report, Result, Verdict, chain, held, settle, without_counterexamples
from verispatial.certify.rules import RULE_FAMILY, EngineFacts, Finding, all_engine_facts, engine_facts
from verispatial.certify.semaphores import Word
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.certify.structure import unsupported_features
from verispatial.certify.witness import explore_states, refute_by_runs
from verispatial.families.cb.encoding import check_cb_balance, check_straddle, ownership_findings
from verispatial.families.cb.encoding import roles as _roles
from verispatial.families.cb.in_place_encoding import check_in_place
from verispatial.families.cb.shard_encoding import check_shard_overrun
from verispatial.families.cb.shard_ordering_encoding import check_shard_orderings
from verispatial.families.cb.shared_encoding import ownership_consequences, shared_read_findings
from verispatial.families.deadlock.encoding import check_deadlock
from verispatial.families.memory.alias_encoding import check_aliases
from verispatial.families.memory.encoding import check_memory
from verispatial.families.multicast.encoding import check_multicast, multicast_destinations
from verispatial.families.noc.encoding import check_remote_reads, cross_engine, discharge, may_reach_source, reuse_consequences
from verispatial.families.semaphores.encoding import check_sem_balance, each_exact
from verispatial.families.tensors.encoding import check_bounds
from verispatial.families.tensors.ordering_encoding import check_ordering
from verispatial.ir import acks, obligation
from verispatial.ir import rules as R
from verispatial.ir.obligation import AliasRef, BoundaryRef, BufferRef, ComponentRef, TensorRef
from verispatial.ir.ops import AtomicBarrier, McastSend, SemIncMcast, SemWait, WriteBarrier, WriteTiles
from verispatial.ir.program import Program, walk
from verispatial.ir.templated import TemplatedProgram
from verispatial.petri.interp import SimResult
from verispatial.petri.position import Position, Violation

if TYPE_CHECKING:
    from verispatial.certify.compositional import Pool, Slice

#: checker rule -> interpreter rules that reproduce it (at the ops ``_claim`` names for the obligation), and the
#: refutations that are concrete arithmetic on the program text: both from the rule registry.
REPLAY_RULES = R.REPLAY_RULES
STATIC_KINDS = R.STATIC_KINDS

Progress = Callable[[str], None]


def _applies(p: Program, rule: str) -> bool:
    """Whether ``p`` has an op the per-engine ``rule`` is about, for rules only some op forms carry: a multicast of
    pages already pushed (``McastSend.behind``) for ``mcast-source-unpublished``, a scratch buffer
    (``Buffer.scratch``) for ``scratch-unlanded`` and ``scratch-reuse``. A program without one has no such
    obligation (its certificate lists none), as it has no obligation of a rule no op of it can break."""
    if rule == R.MCAST_SOURCE_UNPUBLISHED:
        return any(isinstance(op, McastSend) and op.behind for ep in p.programs for op in walk(ep.ops))
    if rule in (R.SCRATCH_UNLANDED, R.SCRATCH_REUSE):
        return any(b.scratch for b in p.buffers)
    return True


def _rule_results(a: Analysis, findings: list[Finding], discharged: list[Finding] | None = None) -> list[Result]:
    out: list[Result] = []
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:
        by_rule.setdefault(f.rule, []).append(f)
    gone: dict[str, list[Finding]] = {}
    for f in discharged or []:
        gone.setdefault(f.rule, []).append(f)
    n = len(a.views)
    for rule, family in RULE_FAMILY.items():
        fs = by_rule.get(rule, [])
        if not fs and not _applies(a.program, rule):
            continue
        if not fs:
            why = f"no path of the {n} engine programs breaks it"
            if gone.get(rule):
                why += (f"; {len(gone[rule])} op(s) flagged per engine run only once the source left (a later flag "
                        "write or multicast seen to land, or a flush): " + ", ".join(f"{f.engine} {list(f.path or [])}"
                                                                          for f in gone[rule][:4]))
            out.append(Result(family, rule, Verdict.PROVED, why))
            continue
        for f in fs:
            t0 = time.perf_counter()
            name = f"{rule}:{f.engine}:{list(f.path) if f.path is not None else 'end'}"
            # an op no run reached is explored only within the program's work bound (``confirm_rule``)
            cap = explore_states(a.program)
            if f.at:
                got = confirm_rule(a.program, {rule}, None, at=[{"engine": e, "path": list(p), "subject": f.subject}
                                                                for e, p in f.at], unreached_cap=cap)
            else:
                got = confirm_rule(a.program, {rule}, None, f.engine, f.path, unreached_cap=cap)
            if got is not None:
                cex = {"kind": "rule", "rule": rule, "engine": f.engine,
                       "path": list(f.path) if f.path is not None else None, "summary": f"{f.engine}: {f.message}", **got}
                if rule == R.ASYNC_PENDING_AT_END:
                    # The end has no op: name the ops whose transactions are left outstanding (their source lines).
                    cex["outstanding"] = outstanding_ops(a.views[f.engine].leaves)
                out.append(Result(family, name, Verdict.REFUTED, f.message, cex, time.perf_counter() - t0))
            else:
                out.append(Result(family, name, Verdict.FAILED,
                                  f"{f.message} — on a path the interpreter did not reach (not replayed)",
                                  seconds=time.perf_counter() - t0, unreplayed=True))
    return out


@attrs.frozen
class Claim:
    """What the interpreter must show to confirm one refutation: one of ``rules`` reported at one of ``at``
    (``confirm_rule``), or a deadlock ``hang`` accepts; ``targets`` are the candidate's positions."""

    rules: frozenset[str]
    at: tuple[dict[str, Any], ...] | None
    hang: Callable[[SimResult], bool] | None = None
    targets: dict[str, Position] = attrs.Factory(dict)
    also: Callable[[Violation], bool] | None = None  # a further test of the violation (e.g. its boundary)


def _spot(x: object) -> dict[str, Any] | None:
    if isinstance(x, dict) and isinstance(x.get("engine"), str) and isinstance(x.get("path"), list):
        return {"engine": x["engine"], "path": x["path"]}
    return None


def _word(a: Analysis, name: str) -> Word | None:
    return next((w for w in a.words.values() if w.name == name), None)


def _overshoot(a: Analysis, w: Word, engine: str, path: tuple[int, ...]) -> Callable[[SimResult], bool]:
    """A deadlock with ``engine`` stuck at its equality wait ``path`` on ``w`` while the word exceeds the value
    waited for: the overshoot itself (the interpreter reports ``sem-overshoot`` only when the wait was already
    pending; a word overshot before its waiter arrived shows as this hang)."""
    leaf = next(lf for lf in a.views[engine].leaves if lf.path == path)
    op = leaf.op
    assert isinstance(op, SemWait)

    def hang(r: SimResult) -> bool:
        for st in r.stuck:
            if st.position.engine == engine and st.position.path == path:
                env = {v: i for v, i in st.position.iteration if v}
                return r.sems.get((w.sem, w.site), w.init) > op.threshold(env)
        return False
    return hang


def _flag_lost(w: Word) -> Callable[[SimResult], bool]:
    """A deadlock with the owner of flag word ``w`` stuck at one of its waits although more flags were issued to
    ``w`` than the owner's waits saw, in a run whose flag sources were never rewritten early: a flag was lost
    (merged with the next, or wiped) — nothing else keeps a flag word from its value once every write landed, as in
    a deadlock."""
    waits = {lf.path for lf in w.waits}

    def hang(r: SimResult) -> bool:
        if not any(st.position.engine == w.owner and st.position.path in waits for st in r.stuck):
            return False
        if any(v.rule == R.ASYNC_SOURCE_REUSE for v in r.violations):
            return False  # a flag that left holding another value is that rule's violation, not a lost flag
        issued = sum(r.executed.get((lf.engine, lf.path), 0) for lf in w.flags)
        seen = sum(r.executed.get((lf.engine, lf.path), 0) for lf in w.waits)
        return issued > seen
    return hang


def _claim(a: Analysis, r: Result) -> Claim | None:
    """What refutation ``r`` claims, as the interpreter must show it: that rule, at that op (and for a tensor race
    on that tensor, for a balance on that buffer or word), or the deadlock that violation leads to — read from the
    typed obligation id and matched against the interpreter's structured violation (its rule, position and
    subject), never its message. None when the checker knows no way to replay the claim (the refutation then fails
    to prove)."""
    cex = r.counterexample or {}
    rule = str(cex.get("rule", cex.get("kind")))
    if rule not in REPLAY_RULES:
        return None
    rules = frozenset(REPLAY_RULES[rule])
    oid = obligation.parse(r.name)
    kind = oid.kind
    targets = targets_of(cex)
    here = _spot(cex)
    if kind == R.SEM_RMW_RACE and here is not None:
        # at the read-modify-write the check names, or at the other one when both are (either store loses)
        more = [x for x in (_spot(y) for y in cex.get("at", [])) if x is not None] if isinstance(
            cex.get("at"), list) else []
        return Claim(rules, (here, *more), targets=targets)
    if kind in (R.SEM_SET_RACE, R.SEM_OVERSHOOT, R.SEM_FLAG_EARLY):
        w = _word(a, str(oid.word)) if oid.word is not None else None
        if w is None:
            return None
        if kind == R.SEM_SET_RACE and here is not None:
            return Claim(rules, (here,), targets=targets)
        if kind == R.SEM_OVERSHOOT and here is not None:
            return Claim(rules, (here,), _overshoot(a, w, here["engine"], tuple(here["path"])), targets)
        if kind == R.SEM_FLAG_EARLY:
            if cex.get("flag") == "wiped":  # the owner's reset overwrote a landed flag: sem-set-race there
                return Claim(rules, tuple({"engine": lf.engine, "path": list(lf.path)} for lf in w.sets),
                             targets=targets)
            return Claim(frozenset(), (), _flag_lost(w), targets)
        return None
    if rule == R.TENSOR_RACE:
        if oid.tensor is None:
            return None
        # The race's two ops when it names them, else the read the coverage query names at top level (a tile no
        # write covers: the interpreter reports it at that read).
        spots = [x for x in (_spot(cex.get("read")), _spot(cex.get("write"))) if x is not None]
        if not spots and here is not None:
            spots = [here]
        spots += [x for x in (_spot(y) for y in cex.get("at", [])) if x is not None] if isinstance(
            cex.get("at"), list) else []
        if not spots:
            return None
        return Claim(rules, tuple({**x, "subject": TensorRef(oid.tensor)} for x in spots), targets=targets)
    if kind in (R.MCAST_SLOT, R.MCAST_PUBLISH):
        op = oid.op
        if op is None or op.path is None:
            return None
        return Claim(rules, ({"engine": op.engine, "path": list(op.path)},), targets=targets)
    if kind == R.BALANCE_CB:
        return Claim(rules, ({"subject": oid.subject},)) if isinstance(oid.subject, BufferRef) else None
    if kind == R.BALANCE_SEM:
        if oid.word is None or _word(a, str(oid.word)) is None:
            return None
        return Claim(rules, ({"subject": oid.word},))
    if kind == R.ALIAS_CLOBBER:
        return Claim(rules, (here,) if here is not None else ({"subject": oid.subject},), targets=targets)
    if kind == R.RENDEZVOUS or kind == R.HB_RENDEZVOUS:
        # The rendezvous-early rule at the boundary the obligation names (ir/boundaries.py), wherever it shows.
        boundary = cex.get("boundary")
        also = None if not isinstance(boundary, int) else (
            lambda v, b=boundary: v.subject == BoundaryRef(b))
        return Claim(rules, None, targets=targets, also=also)
    if kind == R.OUTPUT_UNWRITTEN:  # reported at termination (no op), naming the tensor
        return Claim(rules, ({"subject": oid.subject},)) if isinstance(oid.subject, TensorRef) else None
    if here is not None:  # cb-straddle, bounds, async-source-reuse: the op the counterexample names
        return Claim(rules, (here,), targets=targets)
    return None


def _confirm(a: Analysis, r: Result, explore_cap: int = EXPLORE_STATES) -> Result:
    """Replay a solver refutation in the interpreter; keep it only if the interpreter shows what it claims. The
    explorer, the last attempt, visits at most ``explore_cap`` states."""
    if r.verdict != Verdict.REFUTED or r.counterexample is None:
        return r
    cex = r.counterexample
    kind = cex.get("kind")
    if kind in STATIC_KINDS or kind == R.DEADLOCK or "replayed_by" in cex or "replay" in cex:
        return r
    t0 = time.perf_counter()
    claim = _claim(a, r)
    got = None
    if claim is not None:
        got = confirm_rule(a.program, set(claim.rules), cex.get("trips") or None, at=list(claim.at)
                           if claim.at is not None else None, hang=claim.hang, targets=claim.targets,
                           also=claim.also, explore_cap=explore_cap)
    dt = r.seconds + time.perf_counter() - t0
    if got is None:
        return Result(r.family, r.name, Verdict.FAILED,
                      f"candidate not replayed by the interpreter: {r.reason}", seconds=dt, unreplayed=True)
    return Result(r.family, r.name, r.verdict, r.reason, {**cex, "replay": got}, dt)


def check(program: Program | TemplatedProgram, certificate: dict[str, Any] | None = None, *, jobs: int = 1,
          progress: Progress | None = None, rlimit: int = DEFAULT_RLIMIT,
          cache: ProofMemo | bool = True, compositional: bool = True,
          pool: Pool | None = None, search: Search | None = None) -> Report:
    """Discharge every obligation of ``program`` (DESIGN §7) and return the report: the trusted kernel's entry.
    Callers go through ``verispatial.driver.run.certify``, which hands this the untrusted helpers and keeps the
    report in the proof store; nothing here reads or writes a store.

    ``certificate``, when given, is compared with the one re-derived from the program; any difference is a
    refuted ``certificate`` obligation. ``jobs`` > 1 runs independent families in the worker processes of
    ``pool`` (``jobs`` -> a context manager yielding an executor; without one everything runs here).
    ``cache``: True proves each renaming-invariant obligation once per class of isomorphic components
    (``canon.py``; a reused result's reason names the component it was proved for); a ``ProofMemo`` also
    reuses proofs of earlier runs given the same instance; False proves every component separately (and every
    slice of a composed program). ``compositional``: a composed program whose rendezvous has the compose pass's
    shape is proved from its slices (``compositional.py``); anything else, and every program with False, by the
    whole-program obligations. ``search``: the interpreter's deadlock search (``driver.search.propose_deadlock``)
    for deadlocks the solver cannot decide; only what the interpreter reproduces refutes (``replay.confirm_lead``),
    and without a search such an obligation fails to prove.
    A ``TemplatedProgram`` (a composed program as templates and instances, ``ir/templated.py``) is proved from its
    templates (``compositional.cut_templated``), never expanded to do so; it is expanded and checked as a whole only
    when ``compositional`` is False or a template states a multicast count other than its group's (whose barriers
    the whole-program families judge, ``understated_counts``).
    Raises nothing for a well-formed program: solver trouble becomes ``failed-to-prove``.
    """
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    pc = (ProofMemo() if cache else None) if isinstance(cache, bool) else cache
    if isinstance(program, TemplatedProgram) and (not compositional or any(acks.miscounted(t)
                                                                            for t in program.templates)):
        program = program.expand()
    if isinstance(program, TemplatedProgram):
        try:
            report = _certify_templated(program, certificate, jobs, say, rlimit, pc, cache, progress, pool, search)
        except BudgetExhausted as e:
            report = Report(program.name, program.target.name, (_budget_result("any obligation", e),),
                            time.perf_counter() - t0)
        return attrs.evolve(report, seconds=time.perf_counter() - t0)
    try:
        report = _certify(program, certificate, jobs, say, rlimit, pc, cache, compositional, progress, pool, search)
    except BudgetExhausted as e:  # spent before the first obligation was decided (or in a composed program's joins)
        report = Report(program.name, program.target.name, (_budget_result("any obligation", e),),
                        time.perf_counter() - t0)
    early = understated_counts(program)
    if early:
        results = [_barrier_may_pass_early(r, early) for r in report.results]
        report = attrs.evolve(report, results=(*results, *_unclaimed_when_early(results, early)))
    return attrs.evolve(report, seconds=time.perf_counter() - t0)


#: Families whose proofs do not read a barrier as "the writes before it landed": layout, addresses, one engine's own
#: accumulator and the certificate (the rest order events by barriers).
_TIMELESS = frozenset({R.Family.MEMORY.value, R.Family.BOUNDS.value, R.Family.STRUCTURE.value,
                       R.Family.ACCUMULATOR.value, R.Family.CERTIFICATE.value, R.Family.DEADLOCK.value})


def understated_counts(program: Program) -> list[str]:
    """Each engine with a multicast whose ``num_dests`` is below its group's destinations and a barrier that counts
    its acknowledgements (``WriteBarrier`` for data and flag multicasts, ``AtomicBarrier`` for increments), as text.
    Such a barrier sees acked == expected while landings are still due and may pass then (noc_nonblocking_api.h
    ``ncrisc_noc_nonposted_writes_flushed`` compares with ``==``; docs/semantics.md "Acknowledgement counts"): what
    the other families read from a barrier — every write before it landed — does not hold after it."""
    out: dict[str, str] = {}
    for ep, op, have in acks.miscounted(program):
        barrier = AtomicBarrier if isinstance(op, SemIncMcast) else WriteBarrier
        if op.num_dests < have and ep.key not in out and any(isinstance(x, barrier) for x in walk(ep.ops)):
            out[ep.key] = f"{ep.key}'s {type(op).__name__} states num_dests {op.num_dests} for group {op.group}'s {have} " \
                          "destinations"
    return list(out.values())


#: Rules decided from one engine's own op order and counters, which no landing and no barrier changes.
_LOCAL_RULES = frozenset({R.CB_CAPACITY, R.CB_SINGLE_PRODUCER, R.CB_SINGLE_CONSUMER, R.CB_PUSH_UNCOVERED,
                          R.CB_POP_UNCOVERED, R.CB_WRITE_UNRESERVED, R.CB_READ_UNWAITED, R.CB_STRADDLE, R.CB_SHARD_OVERRUN,
                          R.ASYNC_READ_PUBLISH, R.ASYNC_FLAG_OVERTAKE})


def _barrier_may_pass_early(r: Result, early: list[str]) -> Result:
    """A proof that reads barriers as "landed" does not stand where a barrier may pass early (``understated_counts``):
    failed to prove instead (the deadlock family refutes such a program when the interpreter reaches the hang)."""
    if r.verdict != Verdict.PROVED or r.family in _TIMELESS or obligation.parse(r.name).kind in _LOCAL_RULES:
        return r
    return Result(r.family, r.name, Verdict.FAILED,
                  "; ".join(early) + ": a barrier counting its acknowledgements may pass while some are still due, "
                  "which this proof assumes it does not", seconds=r.seconds)


#: The order ``_certify`` runs the families in (the first two in this process, the rest maybe in workers). The
#: deadlock family comes before happens-before: the hang itself is decided before the per-(read, write) ordering
#: queries, whose number grows with the product of a tensor's accesses (672 pairs on tt-metal #50312's sort, each a
#: component-wide query: examples/ttmetal/hangs/sort_50312/notes.md), so a budget spent on those still leaves the
#: deadlock decided. The order changes no verdict, only which are left undecided when the budget runs out.
STAGES = ("rules", "semaphore counting", "ring alignment", "balance", R.BOUNDS, "memory", "multicast", R.DEADLOCK,
          "happens-before")


def _unclaimed_when_early(results: list[Result], early: list[str]) -> list[Result]:
    """For each per-engine rule (``RULE_FAMILY``) that barriers decide (not ``_TIMELESS``, not ``_LOCAL_RULES``) and
    that is reported only by findings at ops — which stand for "nowhere else", the rule's own result then being absent
    — that result, failed to prove: where a barrier may pass early (``understated_counts``) the ops with no finding
    are not shown safe either (an increment after such a barrier may overtake the write it follows,
    ``async-inc-overtake``)."""
    named = {r.name for r in results}
    out: dict[str, Result] = {}
    for r in results:
        kind = obligation.parse(r.name).kind
        family = RULE_FAMILY.get(kind)
        if family is None or kind in named or kind in out or family in _TIMELESS or kind in _LOCAL_RULES:
            continue
        out[kind] = Result(family, kind, Verdict.FAILED,
                           "; ".join(early) + ": a barrier counting its acknowledgements may pass while some are "
                           "still due, so the ops with no finding are not shown safe", seconds=0.0)
    return list(out.values())


def _budget_result(what: str, e: BudgetExhausted) -> Result:
    """The failed-to-prove result standing for obligations the run's budget left undecided (``budget.py``)."""
    return Result(R.BUDGET, f"{R.BUDGET}:{what}", Verdict.FAILED, f"not decided: {e} before {what} could be checked")


def _buffers_named(p: Program | TemplatedProgram, slices: Sequence[Slice], results: Sequence[Result]) -> Sequence[Result]:
    """``results`` of a composed program with the findings decided on its slices naming the program's buffers.

    A slice is a canonical program whose buffer ``i`` is named ``b<i>`` (equal slices share proofs whatever their
    buffers are called); its texts come back in the program's ids, so a finding that names a buffer reads
    ``b96 (b96)``. Here each such label becomes ``b96 (<the program's name>)``, and a counterexample's buffer ids
    (``_program_ids``: the slice's own) become the program's."""
    if without_counterexamples(results):  # nothing to rename (a proved step's 377,074 results)
        return results
    name = p.buffer_name if isinstance(p, TemplatedProgram) else (lambda b: p.buffers[b].name)
    out: list[Result] = []
    for r in results:
        cex = r.counterexample
        where = cex.get("slice") if cex is not None else None
        if r.verdict == Verdict.PROVED or not isinstance(where, dict) or not isinstance(where.get("index"), int):
            out.append(r)
            continue
        ids = slices[where["index"]].buffers
        labels = {f"b{b} (b{b})": f"b{b} ({name(b)})" for b in ids}
        pattern = re.compile("|".join(rf"\b{re.escape(x)}" for x in labels))

        def named(text: str, pattern: re.Pattern[str] = pattern, labels: dict[str, str] = labels) -> str:
            return pattern.sub(lambda m: labels[m.group(0)], text) if labels else text

        assert cex is not None
        cex = {k: named(v) if isinstance(v, str) else v for k, v in cex.items()}
        out.append(attrs.evolve(r, reason=named(r.reason), counterexample=_program_ids(cex, ids)))
    return out


def _program_ids(x: Any, ids: Sequence[int]) -> Any:
    """Counterexample ``x`` of a slice with its buffer ids (a ``buffer`` number, a ``buffers`` list of numbers or of
    objects with an ``id``: memory, ring, balance and deadlock counterexamples) turned into the program's: slice
    buffer ``i`` is the program's ``ids[i]``. Strings are left to the slice's renderer."""
    def one(b: Any) -> Any:
        return ids[b] if isinstance(b, int) and not isinstance(b, bool) and 0 <= b < len(ids) else b

    if isinstance(x, list):
        return [_program_ids(v, ids) for v in x]
    if not isinstance(x, dict):
        return x
    out = {k: _program_ids(v, ids) for k, v in x.items()}
    if "buffer" in out:
        out["buffer"] = one(out["buffer"])
    if isinstance(out.get("buffers"), list):
        out["buffers"] = [{**b, "id": one(b.get("id"))} if isinstance(b, dict) else one(b) for b in out["buffers"]]
    return out


def _certify_templated(program: TemplatedProgram, certificate: dict[str, Any] | None, jobs: int, say: Progress,
                       rlimit: int, pc: ProofMemo | None, cache: ProofMemo | bool = True,
                       progress: Progress | None = None, pool: Pool | None = None,
                       search: Search | None = None) -> Report:
    """``_certify``'s compositional route for a templated program: the rendezvous its expansion has by construction
    (``compositional.rendezvous_of``), the slices cut from its templates (``cut_templated``), then as ``_certify``."""
    from verispatial.certify import compositional as comp

    with comp.frozen_heap():  # through the report: its results are not walked by the collector again
        return _certify_templated_frozen(program, certificate, jobs, say, rlimit, pc, cache, progress, pool, search)


def _certify_templated_frozen(program: TemplatedProgram, certificate: dict[str, Any] | None, jobs: int,
                              say: Progress, rlimit: int, pc: ProofMemo | None, cache: ProofMemo | bool,
                              progress: Progress | None, pool: Pool | None, search: Search | None) -> Report:
    from verispatial.certify import compositional as comp

    t0 = time.perf_counter()
    with comp.collection(False):
        rv = comp.rendezvous_of(program)
        cut = comp.cut_templated(program)
        comp.keep_made()  # the cut's accesses and slices, all alive
    say(f"compositional: {len(cut.slices)} slices, {len(rv.boundaries)} rendezvous, {len(rv.participants)} "
        f"participants ({len(program.templates)} templates)")
    composed = comp.certify_composed(program, rv, cut, functools.partial(check, search=search), jobs=jobs,
                                     progress=progress, rlimit=rlimit, cache=pc if pc is not None else cache, pool=pool)
    composed = _buffers_named(program, cut.slices, composed)
    if certificate is not None:
        from verispatial.certify.certificate import compare_templated_certificate

        say(R.CERTIFICATE)
        try:
            composed = chain(composed, compare_templated_certificate(program, list(composed), certificate))
        except BudgetExhausted as e:
            composed = chain(composed, [Result(R.CERTIFICATE, R.CERTIFICATE, Verdict.FAILED, f"not compared: {e}")])
    with comp.collection(False):
        report = Report(program.name, program.target.name, held(settle(composed)), time.perf_counter() - t0)
        comp.keep_made()
    return report


def _certify(program: Program, certificate: dict[str, Any] | None, jobs: int, say: Progress, rlimit: int,
             pc: ProofMemo | None, cache: ProofMemo | bool = True, compositional: bool = True,
             progress: Progress | None = None, pool: Pool | None = None, search: Search | None = None) -> Report:
    t0 = time.perf_counter()
    if compositional and any(s.barrier_after for s in program.sections[:-1]):
        from verispatial.certify import compositional as comp

        rv = comp.recognise(program)
        cut = comp.cut(program, rv) if isinstance(rv, comp.Rendezvous) else rv
        if isinstance(rv, comp.Rendezvous) and isinstance(cut, comp.Cut):
            say(f"compositional: {len(cut.slices)} slices, {len(rv.boundaries)} rendezvous, "
                f"{len(rv.participants)} participants")
            # Slices are checked by this very function (with the same search), never by the caller's.
            composed = comp.certify_composed(program, rv, cut, functools.partial(check, search=search), jobs=jobs,
                                             progress=progress, rlimit=rlimit,
                                             cache=pc if pc is not None else cache, pool=pool)
            composed = _buffers_named(program, cut.slices, composed)
            if certificate is not None:

                say(R.CERTIFICATE)
                composed = chain(composed, _compare(program, analyse(program), list(composed), certificate))
            # A slice's proofs were settled in its own run; the cross-phase ones may lean on them.
            return Report(program.name, program.target.name, held(settle(composed)), time.perf_counter() - t0)
        say(f"whole-program check (not the compose rendezvous: {cut})")
    unsupported = unsupported_features(program)
    if unsupported:
        return Report(program.name, program.target.name, (Result(
            R.FRAGMENT, R.FRAGMENT, Verdict.FAILED,
            "outside the fragment the checker decides: " + ", ".join(unsupported)),), time.perf_counter() - t0)
    a = analyse(program)
    results: list[Result] = []
    say("rules: ownership, coverage, asynchronous NoC, accumulator")
    budget.check()
    findings = ownership_findings(program, a.views)
    findings += ownership_consequences(a, findings)  # two poppers (pushers): their coverage is the interpreter's
    facts = all_engine_facts(program, a.views)
    for fa in facts.values():
        findings.extend(fa.findings)
    untrusted = {int(x) for f in findings if f.rule in (R.CB_PUSH_UNCOVERED, R.CB_POP_UNCOVERED,
                                                          R.CB_SINGLE_PRODUCER, R.CB_SINGLE_CONSUMER)
                 for x in _buffers_of(a, f)}
    trusted = {b.id for b in program.buffers} - untrusted
    # The reads of an engine that waits on a buffer another engine pops: cross-engine, so asked of the counters.
    findings += shared_read_findings(a, trusted, rlimit)
    # A pop that may free a source before it left lets b's producer re-reserve and refill that page, and a push
    # before its read landed lets the landing rewrite what the consumer sends: those ops are candidates too (a
    # reserve or fill only if it may reach an outstanding source's slot: may_reach_source).
    known = {(f.rule, f.engine, f.path) for f in findings}
    findings += [f for f, b, pops in reuse_consequences(program, a.views, findings)
                 if (f.rule, f.engine, f.path) not in known and (
                     pops is None or any(may_reach_source(a, facts, f, b, pop, trusted, rlimit) for pop in pops))]
    # A source-reuse candidate the issuing engine alone cannot rule out may still be safe: ask whether its source
    # can be at home when it runs (families/noc/encoding.py); the rest are replayed. Past this point the rules'
    # findings (what every later family's assumptions read) are complete: a budget spent later leaves the families
    # not yet run failed to prove, each saying so, and every proof that assumes one of their obligations fails with
    # them (settle).
    discharged = [f for f in findings if f.rule == R.ASYNC_SOURCE_REUSE and discharge(a, facts, f, trusted, rlimit)]
    findings = [f for f in findings if f not in discharged]
    spent: BudgetExhausted | None = None
    stages = list(STAGES)
    done = 0
    try:
        # A stage counts only when it finished within the budget: results decided past the deadline are dropped
        # with the stage (so no certify run outlasts its budget without a failed-to-prove saying so).
        rule_results = _rule_results(a, findings, discharged) + _source_results(a, facts, trusted, rlimit)
        budget.check()
        results += rule_results
        done = 1
        # Exact counting first: the deadlock question needs to know which counter models are faithful.
        say("semaphore counting")
        budget.check()
        exact: list[Result] = []
        try:
            # A probe asked before a wider query (``probe``) searches within the work bound: the queries decide
            # when it shows nothing (on a 45-op mcast host a probe of 60,000 states cost 29 s where they proved).
            for r in each_exact(a, trusted, rlimit, pc, confirm=lambda r: _confirm(a, r),
                                probe=lambda r: _confirm(a, r, explore_states(a.program))):
                exact.append(_confirm(a, r))
            budget.check()
        except BudgetExhausted:
            # A refutation stands on its replay, whenever it was decided: the words refuted before the budget ran
            # out are kept beside the stage's budget result (tt-metal #50312's go words, refuted by runs in seconds,
            # were lost with a done word's queries under load).
            results += [r for r in exact if r.verdict == Verdict.REFUTED]
            raise
        results += exact
        done = 2
        inexact = _inexact(results)
        labels = stages[2:]
        if jobs > 1 and pool is not None:
            # one worker per family at most: a forked pool starts all of its workers at once
            with pool(min(jobs, len(labels))) as workers:  # stopped at once when anything is raised out of the block
                futures = [workers.submit(_family, label, program, trusted, rlimit, inexact, None, pc, None, search)
                           for label in labels]
                got: list[list[Result]] = []
                for label, fut in zip(labels, futures, strict=True):
                    say(label)
                    got.append(fut.result())
                budget.check()
            for rs in got:  # a family's results count only once every family came back (none is half there)
                results += rs
                done += 1
        else:
            for label in labels:
                say(label)
                budget.check()
                rs = _family(label, program, trusted, rlimit, inexact, a, pc, facts, search)
                budget.check()
                results += rs
                done += 1
    except BudgetExhausted as e:
        spent = e
        results += [_budget_result(stage, e) for stage in stages[done:]]
    results = _on_their_own(a, Basis(tuple(findings), frozenset(trusted)), results, search)
    # Last, before anything is reported failed-to-prove: a run from launch that breaks the obligation refutes it
    # (refute only; after settling, so no proof rests on a result this turns; witness.py).
    results = refute_by_runs(a, results)
    if certificate is not None:

        say(R.CERTIFICATE)
        if spent is not None:
            results.append(Result(R.CERTIFICATE, R.CERTIFICATE, Verdict.FAILED,
                                  f"not compared: {spent} before every obligation was checked"))
        else:
            results += _compare(program, a, results, certificate)
    return Report(program.name, program.target.name, tuple(results), time.perf_counter() - t0)


def _compare(program: Program, a: Analysis, results: list[Result], certificate: dict[str, Any]) -> list[Result]:
    """``compare_certificate``, failed to prove as a whole when the budget runs out while comparing."""
    from verispatial.certify.certificate import compare_certificate

    try:
        return compare_certificate(program, a, results, certificate)
    except BudgetExhausted as e:
        return [Result(R.CERTIFICATE, R.CERTIFICATE, Verdict.FAILED, f"not compared: {e}")]


def _on_their_own(a: Analysis, basis: Basis, results: list[Result], search: Search | None = None) -> list[Result]:
    """Record what every result assumes and settle: a proof whose assumption is not proved fails to prove. A
    deadlock proof lost that way is asked of the interpreter's search once more, so a real deadlock is refuted."""
    sources = _source_reuse_assumes(a.program, results)
    with_assumptions = [attrs.evolve(r, assumes=assumptions(a, basis, r) + (sources if r.name == R.ASYNC_SOURCE_REUSE
                                                                            else ())) for r in results]
    settled = settle(with_assumptions)
    out: list[Result] = []
    for before, r in zip(with_assumptions, settled, strict=True):
        if r.family == R.DEADLOCK and before.verdict == Verdict.PROVED and r.verdict == Verdict.FAILED:
            t0 = time.perf_counter()
            subject = obligation.parse(r.name).subject
            first = subject.engine if isinstance(subject, ComponentRef) else None
            comp = next((c for c in a.components if first == min(c)), None)
            try:
                found = search_confirmed(search, a.program, comp)
            except BudgetExhausted:
                found = None  # stays failed to prove
            if found is not None:
                r = Result(r.family, r.name, Verdict.REFUTED, found["summary"], found,
                           r.seconds + time.perf_counter() - t0)
        out.append(r)
    return out


def _family(label: str, program: Program, trusted: set[int], rlimit: int, inexact: set[str],
            a: Analysis | None = None, cache: ProofMemo | None = None,
            facts: dict[str, EngineFacts] | None = None, search: Search | None = None) -> list[Result]:
    """One obligation family, replayed; a top-level function so worker processes can run it (a worker gets its
    own copy of ``cache``: reuse happens within the family it runs)."""
    a = a or analyse(program)
    runs: dict[str, Callable[[], list[Result]]] = {
        "ring alignment": lambda: (check_straddle(a, facts_getter(a, facts), rlimit, cache, trusted)
                                   + check_shard_overrun(a, rlimit)),
        "balance": lambda: check_cb_balance(a, rlimit, trusted, cache) + check_sem_balance(a, rlimit, cache, trusted),
        R.BOUNDS: lambda: check_bounds(a, rlimit),
        "memory": lambda: check_memory(program, rlimit) + check_aliases(a, trusted, rlimit, facts, cache),
        # Remote reads and reads in place: each read's pages published, one counter query per read.
        "multicast": lambda: (check_multicast(a, trusted, rlimit) + check_remote_reads(a, trusted, rlimit)
                              + check_in_place(a, trusted, rlimit)),
        "happens-before": lambda: check_ordering(a, trusted, rlimit) + check_shard_orderings(a, trusted, rlimit),
        R.DEADLOCK: lambda: check_deadlock(a, trusted, rlimit, inexact, cache=cache, search=search),
    }
    return [_confirm(a, r) for r in runs[label]()]


def facts_getter(a: Analysis, facts: dict[str, EngineFacts] | None) -> Callable[[str], EngineFacts]:
    """An engine's per-engine rules' facts: from ``facts`` (``all_engine_facts``, when the caller has them), else
    computed on first request for that engine (a worker process of ``--jobs`` gets none)."""
    known = dict(facts or {})

    def get(engine: str) -> EngineFacts:
        if engine not in known:
            known[engine] = engine_facts(a.program, a.views[engine])
        return known[engine]
    return get


def _inexact(results: list[Result]) -> set[str]:
    """Semaphore words whose exact-counting obligations did not all prove."""
    out = set()
    for r in results:
        if r.family == R.Family.SEMAPHORE.value and r.verdict != Verdict.PROVED:
            word = obligation.parse(r.name).word
            if word is not None:
                out.add(str(word))
    return out


def _buffers_of(a: Analysis, f: Finding) -> list[int]:
    if f.path is None:
        return []
    from verispatial.certify.structure import op_at

    op = op_at(a.views[f.engine].program, f.path)
    return [b for b, _ in _roles(op)]


def _source_buffers(p: Program) -> tuple[set[int], set[int]]:
    """Buffers read from the front by an asynchronous write or multicast, and buffers multicast from the back."""
    front: set[int] = set()
    back: set[int] = set()
    for ep in p.programs:
        for op in walk(ep.ops):
            if isinstance(op, WriteTiles):
                front.add(op.src)
            elif isinstance(op, McastSend):
                (front if op.front else back).add(op.buf)
    return front, back


def _source_results(a: Analysis, facts: dict[str, EngineFacts], trusted: set[int], rlimit: int) -> list[Result]:
    """The parts of ``async-source-reuse`` the per-engine run does not see: a flag source word set by another engine
    of its site or written remotely (``families/noc/encoding.py``, each candidate replayed), and sources whose pages
    something other than their own engines may rewrite (not decided: failed to prove)."""
    p = a.program
    out: list[Result] = []
    for r, lf in cross_engine(a, trusted, rlimit):
        if r.verdict == Verdict.REFUTED and lf is not None:
            got = confirm_rule(p, {R.ASYNC_SOURCE_REUSE}, None, lf.engine, lf.path)
            if got is None:
                r = Result(r.family, r.name, Verdict.FAILED, f"{r.reason} — not replayed by the interpreter",
                           seconds=r.seconds, unreplayed=True)
            else:
                r = Result(r.family, r.name, r.verdict, r.reason,
                           {"kind": "rule", "rule": R.ASYNC_SOURCE_REUSE, "engine": lf.engine, "path": list(lf.path),
                            "summary": r.reason, **got}, r.seconds)
        out.append(r)
    front, back = _source_buffers(p)
    partners = p.alias_partners()
    dests = multicast_destinations(p)
    for b in sorted(front | back):
        name = f"{R.ASYNC_SOURCE_REUSE}:b{b}"
        if b not in trusted:
            out.append(Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED,
                              f"b{b} is the source of asynchronous writes but its ownership or coverage was not proved: "
                              "another engine's pops or writes are not decided"))
        elif b in back and (b in partners or b in dests):
            out.append(Result(R.Family.ASYNC_NOC.value, name, Verdict.FAILED,
                              f"b{b} is written or multicast from its back and shares bytes with an alias or receives remote writes: "
                              "a rewrite of its reserved pages by another engine is not decided"))
    return out


def _reads_a_source(p: Program, name: str) -> bool:
    """Whether the op an ``<rule>:<engine>:<path>`` obligation names is an asynchronous write from a front (a
    WriteTiles or a front multicast), i.e. its pages are an outstanding source (a Compute operand is not)."""
    ref = obligation.parse(name).op
    try:
        if ref is None or ref.path is None:
            raise ValueError(name)
        ep = next(e for e in p.programs if e.key == ref.engine)
        from verispatial.certify.structure import op_at

        op = op_at(ep, ref.path)
    except (StopIteration, ValueError, IndexError):
        return True  # not resolvable: assume it does (fail closed)
    return isinstance(op, WriteTiles) or (isinstance(op, McastSend) and op.front)


def _source_reuse_assumes(p: Program, results: list[Result]) -> tuple[str, ...]:
    """What the proof of ``async-source-reuse`` on pages read from a front assumes: that the pages read lie inside
    the waited window (``cb-read-unwaited``: then they stay unconsumed until the reading engine's own pop, which the
    per-engine run checks) and that nothing else rewrites those unconsumed pages — the producer writing outside its
    reserved window (``cb-write-unreserved``), a read landing after its page was published (``async-read-publish``),
    an alias (``alias-clobber``) or a multicast landing (``mcast-slot``).
    The names of those obligations (``report.settle`` keeps the proof only while each of them is proved)."""
    front, _ = _source_buffers(p)
    if not front:
        return ()
    partners = p.alias_partners()
    dests = multicast_destinations(p)
    need_alias = {b for b in front if b in partners}
    need_slot = {b for b in front if b in dests}
    # A read published before it landed (async-read-publish) may land under a write issued from its page.
    families = [R.CB_READ_UNWAITED, R.CB_WRITE_UNRESERVED, R.ASYNC_READ_PUBLISH] + ([R.MCAST_SLOT] if need_slot else [])
    def needed(oid: obligation.ObligationId) -> bool:
        if oid.kind in families:
            return not (oid.kind == R.CB_READ_UNWAITED and oid.subject is not None and not _reads_a_source(p, str(oid)))
        s = oid.subject
        # An alias writing into a front buffer's pages, or a front buffer writing into its alias's.
        return oid.kind == R.ALIAS_CLOBBER and isinstance(s, AliasRef) and (
            s.buffer in need_alias or (s.partner in need_alias and s.buffer in partners[s.partner]))

    out = [r.name for r in results if needed(obligation.parse(r.name))]
    return tuple(dict.fromkeys(out))


def replay_refutation(program: Program, r: Result, rlimit: int = DEFAULT_RLIMIT,
                      search: Search | None = None) -> Result | None:
    """Re-establish the refutation ``r`` — a result an earlier run of this very checker reported for ``program``
    (the gate's cached candidate, ``store.py``) — from the program and the interpreter alone, never from the
    candidate's word: the same replay that refuted it then (a rule violation at that engine and op, a deadlock by
    driving the stuck engines to their positions or by the interpreter's own search) must reproduce it now; a
    memory refutation is re-derived by the memory check. Returns the refutation with its fresh counterexample, or
    None when it does not reproduce (the caller then certifies the program in full). ``search`` is the last resort
    for a deadlock (``replay.search_confirmed``)."""
    from verispatial.certify.replay import deadlock_cex, replay_schedule
    from verispatial.petri.interp import drive
    from verispatial.petri.position import Position

    cex = r.counterexample
    if r.verdict != Verdict.REFUTED or not isinstance(cex, dict):
        return None
    t0 = time.perf_counter()
    kind = cex.get("kind")
    try:
        if kind == "rule":
            rule, engine = str(cex["rule"]), str(cex["engine"])
            path = tuple(int(i) for i in cex["path"]) if isinstance(cex.get("path"), list) else None
            got = confirm_rule(program, {rule}, None, engine, path)
            if got is None:
                return None
            keep = {k: v for k, v in cex.items() if k not in ("violation", "trips", "steps", "replayed_by", "trace",
                                                              R.DEADLOCK)}
            return Result(r.family, r.name, Verdict.REFUTED, r.reason, {**keep, **got}, time.perf_counter() - t0)
        if kind == R.DEADLOCK:
            trips = {str(k): int(v) for k, v in (cex.get("trips") or {}).items()}
            targets = {}
            for st in cex.get("stuck") or []:
                pos = Position.from_json(st["position"])
                targets[pos.engine] = pos
            new = replay_schedule(program, cex)
            if new is None and targets:
                run = drive(program, trips or None, targets)
                if run.status == R.DEADLOCK:
                    new = deadlock_cex(run, "drive to the stuck positions")
            if new is None:
                new = search_confirmed(search, program)
            if new is None:
                return None
            return Result(r.family, r.name, Verdict.REFUTED, str(new.get("summary", R.DEADLOCK)), new,
                          time.perf_counter() - t0)
        if kind == "memory":
            for m in check_memory(program, rlimit):
                if m.name == r.name and m.verdict == Verdict.REFUTED:
                    return m
            return None
        if kind in STATIC_KINDS:
            return None  # depends on more than the program (a certificate) or on the analysis: certify in full
        rule = str(cex.get("rule", kind))
        if rule not in REPLAY_RULES:
            return None
        fresh = Result(r.family, r.name, Verdict.REFUTED, r.reason,
                       {k: v for k, v in cex.items() if k != "replay"})
        got_r = _confirm(analyse(program), fresh)
        return got_r if got_r.verdict == Verdict.REFUTED and "replay" in (got_r.counterexample or {}) else None
    except (KeyError, TypeError, ValueError, IndexError):
        return None
