"""The checker's encoding of semaphores: exact counting (DESIGN §5 "Semaphores", route step 3), semaphore balance,
and the per-engine rules of SemSet, SemInc, SemIncMcast and SemWait (``certify/rules.py`` runs them).

These obligations are what make the counter model of a ``reset`` or ``flag`` word (``semaphores.py``) faithful:
- ``sem-set-race`` (reset words): when the owner resets the word after a wait, no increment beyond those the
  wait consumed has been issued — otherwise the reset may wipe it (lost update).
- ``sem-overshoot`` (equality waits on monotone and reset words): the value cannot exceed the awaited value while
  the waiter is still at the wait — an overshoot waits forever (reference §1.2 noc_semaphore_wait).
- ``sem-flag-early`` (flag words): flag k is not issued before the owner's reset k (it would be wiped), and
  flag k+1 not before the owner's wait k returned (two flags would merge into one).
The argument is by induction over time: the first state breaking one of them is reached by a history in which
every model was faithful, so it satisfies the consistency facts and the query finds it.

``balance-sem``: at the end every word is back at its initial value, unless it is *re-armed* (no increment
targets it and every engine of its site sets it before any other use) or the host writes its initial value at every
launch (``Semaphore.host_init``; ``Program.host_initialized_words``), so the program can run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import attrs
import z3

from verispatial.certify.canon import ProofMemo
from verispatial.certify.facts import EngineRun, State, run_paths
from verispatial.certify.handshake import find_handshakes
from verispatial.certify.positions import Encoder
from verispatial.certify.reach import Analysis, Decoded, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.semaphores import Word, ends_reset
from verispatial.certify.smt import DEFAULT_RLIMIT, Query, Status, model_int
from verispatial.certify.structure import Leaf
from verispatial.families.noc.inc_overtake_encoding import inc_overtake
from verispatial.ir import rules as R
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    INCREMENTS,
    Flush,
    McastSetValid,
    Op,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    WriteBarrier,
    op_text,
)
from verispatial.ir.program import Program, write_noun

#: One exact-counting check of a word: (rule, message, bad states ``build(StateQuery) -> BoolRef``, where the
#: interpreter reports it — engine and path, or which flag violation; ``checker._claim``).
Check = tuple[str, str, object, dict[str, object]]


def _cex(rule: str, w: Word, d: Decoded, summary: str, where: dict[str, object]) -> dict[str, object]:
    return d.counterexample("state", rule, summary, word=w.name, **where)


def each_exact(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT,
               cache: ProofMemo | None = None, confirm: Callable[[Result], Result] | None = None,
               probe: Callable[[Result], Result] | None = None) -> Iterator[Result]:
    """One result per used word, yielded as each is decided (a caller whose budget runs out keeps the refutations
    decided so far: ``checker._certify``): its protocol's exact-counting obligations (``sem-exact`` when all proved).
    With ``cache``, a word of a component isomorphic to one already proved reuses that proof (``canon.py``).
    ``confirm`` replays a refutation (the checker's ``_confirm``): a candidate it does not confirm leaves the word
    failed-to-prove, and the word's other obligations are still tried for one that replays. ``probe`` (default
    ``confirm``) replays a claim without a solver state asked before a wider query (``_witness``): a cheaper
    search, since the queries still decide when it shows nothing."""
    by_lemma: dict[str, str] = {}
    for hs in find_handshakes(a.program, a.views, a.words):
        for name in (hs.ready, *hs.flags):
            by_lemma[name] = hs.text
    for key in sorted(a.words, key=lambda k: (k[0], k[1].y, k[1].x)):
        w = a.words[key]
        if w.kind in ("unused", "source", "mailbox"):
            continue
        t0 = time.perf_counter()
        if w.kind == "unsupported":
            yield Result(R.Family.SEMAPHORE.value, f"{R.SEM_PROTOCOL}:{w.name}", Verdict.FAILED,
                         f"{w.name} follows no protocol the checker decides: {w.why}")
            continue
        if w.name in by_lemma:
            yield Result(R.Family.SEMAPHORE.value, f"{R.SEM_EXACT}:{w.name}", Verdict.PROVED,
                         f"{by_lemma[w.name]} (induction over epochs, handshake.py)")
            continue
        engines = frozenset(lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits))

        def compute(w: Word = w, engines: frozenset[str] = engines, t0: float = t0) -> Result:
            return _exact_word(a, w, engines, trusted, rlimit, t0, confirm, probe)
        if cache is None or not engines:
            yield compute()
            continue
        c = cache.canon(a, a.component_of(engines), trusted)
        yield cache.run(R.SEM_EXACT, c, [c.words[w.name], rlimit], f"{R.SEM_EXACT}:{w.name}", compute)


def _unseen(sq: StateQuery, w: Word) -> z3.BoolRef:
    """At a reset of ``w``: an increment issued that the consuming wait before it did not see (it may land before the
    reset: a lost update). What the owner's waits saw in all, ``seen``, is at least what they consume (``Word.consumes``:
    each epoch sees at least that) and, with the past state of the latest consuming wait (``StateQuery.past``), at
    least the increments an atomic barrier had acknowledged then and at most those issued then. By induction over
    resets (none lost one so far), the consumed total is exactly what had landed when the latest wait returned, so a
    lost update at this reset means more increments issued now than had landed then."""
    pcm = sq.past.get(w.name)
    if pcm is None:
        return sq.cm.incs(w) > sq.cm.consumed(w)
    seen = z3.Int(f"seen[{w.name}]", sq.q.ctx)
    return z3.And(seen >= sq.cm.consumed(w), seen >= pcm.acked(w), seen <= pcm.incs(w), sq.cm.incs(w) > seen)


def _exact_word(a: Analysis, w: Word, engines: frozenset[str], trusted: set[int], rlimit: int, t0: float,
                confirm: Callable[[Result], Result] | None = None,
                probe: Callable[[Result], Result] | None = None) -> Result:
    # (rule, message, bad states, where the interpreter reports it: engine/path, or which flag violation — a
    # ``wiped`` flag shows as sem-set-race at the owner's reset, a ``merged`` one as the owner's hang at its wait;
    # checker._claim)
    checks: list[Check] = []
    if w.kind == "reset":
        for s in w.sets:
            if s in w.fresh:
                # No wait before it consumed anything: every increment issued must have been consumed already.
                checks.append((R.SEM_SET_RACE, f"{s.engine} resets {w.name} at {list(s.path)} while an increment "
                               "no wait consumed may land (lost update)",
                               lambda sq, s=s, w=w: z3.And(sq.enc.position(s.engine).at(s),
                                                           sq.cm.incs(w) > sq.cm.consumed(w)),
                               {"engine": s.engine, "path": list(s.path)}))
                continue
            charge = dict(w.consumed_by()).get(s)
            if charge is not None:
                # A reset after a loop of growing waits carries what the loop's last pass saw, at least ``charge``
                # since the launch (its one reset). No more issued than that: every increment issued had landed
                # when that pass returned, so none lands between it and the reset.
                checks.append((R.SEM_SET_RACE, f"{s.engine} resets {w.name} at {list(s.path)} after an increment "
                               "beyond those the last wait before it saw was issued (lost update)",
                               lambda sq, s=s, w=w, charge=charge: z3.And(sq.enc.position(s.engine).at(s),
                                                                          sq.cm.incs(w) > sq.cm.consumed(w) + charge),
                               {"engine": s.engine, "path": list(s.path)}))
                continue
            checks.append((R.SEM_SET_RACE, f"{s.engine} resets {w.name} at {list(s.path)} after an increment "
                           "beyond those its wait consumed was issued (lost update)",
                           lambda sq, s=s, w=w: z3.And(sq.enc.position(s.engine).at(s), _unseen(sq, w)),
                           {"engine": s.engine, "path": list(s.path)}))
    rmw_checks, in_flight = _rmw_races(w)
    checks += rmw_checks
    if w.kind == "sequence" and w.seq is not None and not w.seq.is_source(w):
        checks += _copy_overshoots(w)
    if w.kind == "epochs" and w.epochs is not None and not w.epochs.is_source(w):
        checks += _epoch_early(w)
        checks += _epoch_overtakes(w)
    if w.kind in ("reset", "monotone"):
        for wt in w.waits:
            op = wt.op
            assert isinstance(op, SemWait)
            if op.cond == WaitCond.EQ:
                want = f"{op.value}" + "".join(f"{t.coef:+d}*{t.var}" for t in op.terms)
                checks.append((R.SEM_OVERSHOOT, f"{w.name} can exceed {want} while {wt.engine} waits for "
                               f"it to equal {want} at {list(wt.path)}: it would wait forever",
                               lambda sq, wt=wt, w=w: z3.And(sq.enc.position(wt.engine).at(wt),
                                                             sq.cm.value(w) > sq.enc.threshold_now(wt)),
                               {"engine": wt.engine, "path": list(wt.path),
                                "deadlock_at": {"engine": wt.engine, "path": list(wt.path)}}))
    if w.kind == "flag":
        checks.append((R.SEM_FLAG_EARLY, f"a flag for {w.name} can be issued before {w.owner} reset the word "
                       "for it (the reset would wipe it)",
                       lambda sq, w=w: sq.cm.flags_issued(w) > sq.cm.sets_done(w),
                       {"engine": w.owner, "flag": "wiped"}))
        checks.append((R.SEM_FLAG_EARLY, f"two flags for {w.name} can be issued before {w.owner} saw the first "
                       "(they would merge into one)",
                       lambda sq, w=w: sq.cm.flags_issued(w) - sq.cm.waits_done(w) >= 2,
                       {"engine": w.owner, "flag": "merged"}))
    result: Result | None = None
    if w.kind == "sequence" and w.seq is not None and w.seq.is_source(w):
        result = _loopback_races(a, w, confirm)
        if result is not None and result.verdict == Verdict.REFUTED:
            return attrs.evolve(result, seconds=time.perf_counter() - t0)
    # The interpreter's runs are asked once per word, the first time a query is sat short of its widest scope, for
    # any of the word's checks (a run may show another check's violation first: #50312's shared counter overshoots
    # its exact wait at :116 on the round-robin run before any reset loses an update).
    seen: list[Result] = []
    asked: list[bool] = []

    def witnessed() -> bool:
        if not asked:
            asked.append(True)
            for rule, msg, _build, where in checks:
                # no probe given: the replay itself (a caller that says nothing keeps main's search)
                got = _witness(w, rule, msg, where, probe if probe is not None else confirm)
                if got is not None:
                    seen.append(got)
                    break
        return bool(seen)
    for rule, msg, build, where in checks:
        o, d, _sq = solve_each(a, build, f"{rule}:{w.name}", engines, trusted, rlimit,
                               stop=witnessed if confirm is not None else None)
        if seen:
            result = seen[0]
            break
        if o.status == Status.SAT and d is not None:
            cex = _cex(rule, w, d, msg, where)
            got = Result(R.Family.SEMAPHORE.value, f"{rule}:{w.name}", Verdict.REFUTED, msg, cex)
            if confirm is not None:
                got = confirm(got)
            if got.verdict == Verdict.REFUTED:
                result = got
                break
            result = result or got  # not replayed: never proved; another obligation of the word may replay
            continue
        if o.status != Status.UNSAT and result is None:
            result = Result(R.Family.SEMAPHORE.value, f"{rule}:{w.name}", Verdict.FAILED, f"solver: {o.reason}")
    if result is None and in_flight is not None:
        # Every candidate unsat, but the counter model does not say when an asynchronous write lands: not proved.
        result = Result(R.Family.SEMAPHORE.value, f"{R.SEM_RMW_RACE}:{w.name}", Verdict.FAILED, in_flight)
    if result is None and w.kind == "epochs" and w.epochs is not None:
        result = Result(R.Family.SEMAPHORE.value, f"{R.SEM_EXACT}:{w.name}", Verdict.PROVED, _epochs_text(w))
    if result is None and w.kind == "sequence" and w.seq is not None:
        result = Result(R.Family.SEMAPHORE.value, f"{R.SEM_EXACT}:{w.name}", Verdict.PROVED, _sequence_text(a.program, w, checks))
    if result is None:
        result = Result(R.Family.SEMAPHORE.value, f"{R.SEM_EXACT}:{w.name}", Verdict.PROVED,
                        f"{w.kind} protocol of {w.name} holds ({len(checks)} obligations)")
    return Result(result.family, result.name, result.verdict, result.reason, result.counterexample,
                  time.perf_counter() - t0)


def _rmw_races(w: Word) -> tuple[list[Check], str | None]:
    """The ``sem-rmw-race`` checks of word ``w``: for each non-atomic read-modify-write (``SemRmw``, in ``w.incs``) and
    each write of the word by another engine, the state in which both are next — the RMW's engine at it and the
    other engine at its write (a set, another RMW, an increment, a flag multicast or a one-word remote write: issued
    then and landing at once, or stored) — from which the RMW loads, the write lands and the store loses it. Only
    unsat proves, and only for writes that are stores of an engine of the site: an asynchronous write may still be in
    flight when its engine has moved on, which the counter model does not say, so a word one lands on is at best
    failed-to-prove (the second value: why; None when every write is a store). Writes of the RMW's own engine are
    ordered by its program order (an asynchronous one of its own still counts as in flight)."""
    rmws = [lf for lf in w.incs if isinstance(lf.op, SemRmw)]
    if not rmws:
        return [], None
    writes = [lf for lf in (*w.incs, *w.sets, *w.flags, *w.inline)]
    asynchronous = [lf for lf in writes if not isinstance(lf.op, (SemSet, SemRmw))]
    checks: list[Check] = []
    for r in rmws:
        for x in writes:
            if x.engine == r.engine:
                continue
            where: dict[str, object] = {"engine": r.engine, "path": list(r.path)}
            if isinstance(x.op, SemRmw):  # either store may be the one that loses the other's update
                where["at"] = [{"engine": x.engine, "path": list(x.path)}]
            checks.append((R.SEM_RMW_RACE, f"{x.engine} may write {w.name} at {list(x.path)} ({op_text(x.op)}) "
                           f"between the load and the store of {r.engine}'s read-modify-write at {list(r.path)} "
                           "(lost update)",
                           lambda sq, r=r, x=x: z3.And(sq.enc.position(r.engine).at(r), sq.enc.position(x.engine).at(x)),
                           where))
    why = None
    if asynchronous:
        x = asynchronous[0]
        why = (f"{x.engine}'s {op_text(x.op)} at {list(x.path)} may be in flight while {rmws[0].engine} reads and writes "
               f"{w.name} back at {list(rmws[0].path)} (a non-atomic read-modify-write): when it lands is not decided")
    return checks, why


def _witness(w: Word, rule: str, msg: str, where: dict[str, object],
             confirm: Callable[[Result], Result] | None) -> Result | None:
    """The interpreter's concrete runs asked before a wider query (``solve_each``'s ``stop``): the check's claim —
    ``rule`` at the op ``where`` names, or for a flag the lost update it stands for (``checker._claim``) — without a
    solver state, replayed by ``confirm`` from the launch (round robin, seeded random runs, the explorer for small
    programs; the runs are computed once per program, ``replay._simulate``). A refutation when a run shows it, with
    that run as its counterexample; None otherwise, and the queries go on. Why: the query that would name the
    state spans the whole component with past states of every engine — on tt-metal #50312's sort (0.81.1, a
    coordinator and three workers, 12 sub-stages) each cost 15-30 s and the widest were cancelled, where the runs
    that show the readers' lost update of the go word cost under a second each (sort_50312/notes.md)."""
    if confirm is None:
        return None
    # No solver state: the counterexample is the run (``replay``), the op ``where`` names the one it breaks.
    cex: dict[str, object] = {"kind": "state", "rule": rule, "summary": msg, "word": w.name, "trips": {}, **where}
    got = confirm(Result(R.Family.SEMAPHORE.value, f"{rule}:{w.name}", Verdict.REFUTED, msg, cex))
    if got.verdict != Verdict.REFUTED or got.counterexample is None:
        return None
    # A flag check names no op (``where`` is its owner): the run's violation does, and the report, SARIF and explain
    # point there (the reader's reset, reader_single_row_multi_core.cpp:74 on #50312's sort).
    replay = got.counterexample.get("replay")
    v = replay.get("violation") if isinstance(replay, dict) else None
    if "path" not in where and isinstance(v, dict) and isinstance(v.get("position"), dict):
        at = v["position"]
        got = attrs.evolve(got, counterexample={**got.counterexample, "engine": at["engine"], "path": at["path"]})
    return got


def _equality_waits(w: Word) -> list[tuple[Leaf, SemWait, str, dict[str, object]]]:
    """Each ``eq`` wait on word ``w``: its leaf, op, threshold as text and where a candidate that overshoots it is
    replayed (the wait, and the hang there)."""
    out: list[tuple[Leaf, SemWait, str, dict[str, object]]] = []
    for wt in w.waits:
        op = wt.op
        assert isinstance(op, SemWait)
        if op.cond == WaitCond.EQ:
            want = f"{op.value}" + "".join(f"{t.coef:+d}*{t.var}" for t in op.terms)
            out.append((wt, op, want, {"engine": wt.engine, "path": list(wt.path),
                                       "deadlock_at": {"engine": wt.engine, "path": list(wt.path)}}))
    return out


def _copy_overshoots(w: Word) -> list[Check]:
    """The ``sem-overshoot`` checks of a sequence destination's equality waits: a copy above the threshold issued
    while the waiter is at the wait (the reduce core of tt-metal #50314 lapping a worker), or the reset's copy issued
    then (it takes the word away from the value waited for). Issued, not landed: an over-approximation, so only unsat
    proves; a candidate is replayed (``sem-overshoot`` there, or the hang)."""
    s = w.seq
    assert s is not None
    out: list[Check] = []
    for wt, _op, want, where in _equality_waits(w):
        out.append((R.SEM_OVERSHOOT, f"a flag copying {s.name} can take {w.name} past {want} while {wt.engine} waits "
                    f"for it to equal {want} at {list(wt.path)}: it would wait forever",
                    lambda sq, wt=wt, w=w: z3.And(sq.enc.position(wt.engine).at(wt),
                                                  sq.cm.seq_copied(w) > sq.enc.threshold_now(wt)), where))
        if any(s.carrier(f).post for f in w.flags):
            out.append((R.SEM_OVERSHOOT, f"the flag copying {s.name} after its reset can take {w.name} back to "
                        f"{w.init} while {wt.engine} waits for it to equal {want} at {list(wt.path)}",
                        lambda sq, wt=wt, w=w: z3.And(sq.enc.position(wt.engine).at(wt), sq.cm.post_flags(w) >= 1),
                        where))
    return out


def _epoch_early(w: Word) -> list[Check]:
    """The ``sem-flag-early`` checks of a destination of a restarting sequence (``semaphores.Epochs``): epoch ``k``'s
    first flag to it is not issued before its owner's reset ``k`` (the reset could wipe it, or a flag of the next
    epoch land before the owner saw the last one of this). The other half of the protocol — every flag of epoch
    ``k`` landed before reset ``k + 1`` — is the classification's: the owner's wait before that reset accepts only
    the epoch's last flag, which lands after the epoch's others (issue order), and by this check no flag of a later
    epoch was issued then."""
    e = w.epochs
    assert e is not None
    out: list[Check] = []
    for k, r in enumerate(w.sets):
        first = e.epoch_flags(k, w.flags)[:1]
        for f in first:
            out.append((R.SEM_FLAG_EARLY, f"{f.engine} can issue epoch {k}'s first flag for {w.name} (at "
                        f"{list(f.path)}) before {w.owner} resets the word for it (at {list(r.path)})",
                        lambda sq, f=f, r=r: z3.And(sq.enc.started(f), z3.Not(sq.enc.started(r))),
                        {"engine": w.owner, "flag": "wiped"}))
    return out


def _epoch_overtakes(w: Word) -> list[Check]:
    """The ``sem-overshoot`` checks of a restarting sequence's destination's equality waits: a flag of the wait's
    epoch carrying another value, issued after the epoch's first flag the wait accepts, issued while the owner is
    still at the wait (it may land before the owner read the accepted value: the wait then waits forever). Found by
    the sharded layernorm on four cores: a receiver that only waits for the multicast reads VALID exactly
    (``reader_mcast_receiver_unary_sharded_ln.cpp:157``) and nothing orders the sender's ``block + 2`` flags of the
    pass (``reader_mcast_sender_unary_sharded_ln.cpp:272, 290``) after it; on two cores the receiver's second
    increment (:248), which the sender waits for, does. The epoch of a wait is the number of the owner's resets before
    it (resets and the word's protocol ops are top level: ``_epoch_destination``). A threshold that is not a number
    (terms over a loop) is checked against every flag of the epoch of another value. Issued, not landed: an
    over-approximation, so only unsat proves; a candidate is replayed (``sem-overshoot`` there, or the hang)."""
    e = w.epochs
    assert e is not None
    out: list[Check] = []
    for wt, op, want, where in _equality_waits(w):
        k = sum(1 for r in w.sets if r.path[:1] < wt.path[:1]) - 1
        flags = e.epoch_flags(k, w.flags) if k >= 0 else ()
        if op.terms:
            later = tuple(flags)
        else:
            first = next((i for i, f in enumerate(flags) if e.value_of(f) == op.value), None)
            later = () if first is None else tuple(f for f in flags[first + 1:] if e.value_of(f) != op.value)
        for f in later:
            out.append((R.SEM_OVERSHOOT, f"{f.engine} can issue epoch {k}'s flag {e.value_of(f)} for {w.name} (at "
                        f"{list(f.path)}) while {wt.engine} waits for it to equal {want} at {list(wt.path)}: it may "
                        "land first, and the wait waits forever",
                        lambda sq, wt=wt, f=f: z3.And(sq.enc.position(wt.engine).at(wt), sq.enc.started(f),
                                                      sq.enc.threshold_now(wt) != e.value_of(f)), where))
    return out


def _epochs_text(w: Word) -> str:
    """Why a restarting sequence's word follows its protocol (the proved result's reason)."""
    e = w.epochs
    assert e is not None
    if e.is_source(w):
        return (f"restarting sequence of {w.name}: only {e.owner} sets it, at top level, to values rising within each "
                f"of {e.count} epochs; nothing else writes it and nothing waits on it")
    return (f"restarting sequence of {e.name} on {w.name}: {w.owner} resets it once per epoch ({e.count}), each "
            "epoch's flags are issued after its reset, its exact waits return before the epoch's next flag of another "
            "value is issued, and its wait before the next reset accepts only the epoch's last flag, which lands "
            "after the others")


def _loopback_races(a: Analysis, w: Word, confirm: Callable[[Result], Result] | None) -> Result | None:
    """The ``sem-set-race`` candidates of a sequence's own word (``loopback_unseen``: the owner's program order
    decides them, no solver), each replayed: the first the interpreter confirms, else the first that did not replay
    (never proved), else None."""
    first: Result | None = None
    for s, why in loopback_unseen(a, w):
        msg = f"{s.engine} sets {w.name} at {list(s.path)} while {why} (lost update)"
        race: dict[str, object] = {"kind": "state", "rule": R.SEM_SET_RACE, "trips": {}, "summary": msg,
                                   "word": w.name, "engine": s.engine, "path": list(s.path)}
        got = Result(R.Family.SEMAPHORE.value, f"{R.SEM_SET_RACE}:{w.name}", Verdict.REFUTED, msg, race)
        if confirm is not None:
            got = confirm(got)
        if got.verdict == Verdict.REFUTED:
            return got
        first = first or got
    return first


def _sequence_text(p: Program, w: Word, checks: list[Check]) -> str:
    """Why a sequence word's protocol holds (the proved result's reason)."""
    s = w.seq
    assert s is not None
    if s.is_source(w):
        loop = (f"; its {len(w.flags)} loopback cop{'y lands' if len(w.flags) == 1 else 'ies land'} and "
                f"{s.owner} sees {'it' if len(w.flags) == 1 else 'them'} before its next set") if w.flags else ""
        resets = f", then resets it ({len(s.resets)} reset{'s' if len(s.resets) != 1 else ''})" if s.resets else ""
        return (f"sequence protocol of {w.name}: only {s.owner} sets it, to rising values ({len(s.rising)} "
                f"set{'s' if len(s.rising) != 1 else ''}){resets}{loop}")
    eq = sum(1 for rule, *_ in checks if rule == R.SEM_OVERSHOOT)
    flags = write_noun(p.groups, [lf.op.group for lf in w.flags if isinstance(lf.op, McastSetValid)], plural=True)
    return (f"sequence protocol of {w.name}: only flag {flags} copying {s.name} land on it, in the order they "
            f"were issued" + (f"; no copy passes an equality wait ({eq} obligation(s))" if eq else ""))


def loopback_unseen(a: Analysis, w: Word) -> list[tuple[Leaf, str]]:
    """The sets of sequence word ``w`` (its own word) that its owner may run while one of its loopback copies of the
    word (a flag multicast whose group holds the owner's site) has not landed, or landed without the owner seeing it
    since. Such a landing is a remote write the owner has not observed (``sem-set-race`` at the set: the interpreter
    marks the word, and only the owner's own wait on it clears the mark, families/semaphores/semantics.py), and a copy
    landing after the set would take the word back to an older value. A may-analysis of the owner's program alone
    (``facts.run_paths``: every path, loops to a fixpoint): a copy is pending from its issue until the owner's next
    ``WriteBarrier`` (every write acknowledged, so landed), then unseen until a wait of the owner on the word returns.
    Empty: every set finds every copy landed and seen, so copies carry the value the word already holds (the set
    before them, unchanged until they left: ``async-source-reuse``) and change nothing."""
    s = w.seq
    assert s is not None
    assert s.is_source(w)
    copies = {lf.path for lf in w.flags}
    if not copies:
        return []
    view = a.views[s.owner]
    leaf_at = {lf.path: lf for lf in view.leaves}
    found: dict[tuple[int, ...], str] = {}

    def step(op: Op, path: tuple[int, ...], st: State) -> State:
        if isinstance(op, McastSetValid) and path in copies:
            return st | {("pending",)}
        if isinstance(op, WriteBarrier) and ("pending",) in st:
            return (st - {("pending",)}) | {("unseen",)}
        if isinstance(op, SemWait) and op.sem == w.sem:
            return st - {("unseen",)}
        if isinstance(op, SemSet) and op.sem == w.sem and st:
            found.setdefault(path, "a loopback copy of it may not have landed (no write barrier since it was issued)"
                             if ("pending",) in st else "a loopback copy of it landed and no wait of its owner on it "
                             "returned since")
        return st

    run_paths(view.program.ops, (), frozenset(), step, a.program.trip_max())
    return [(leaf_at[path], why) for path, why in sorted(found.items())]


def loopback_reuse(a: Analysis, w: Word) -> list[tuple[Leaf, str]]:
    """The loopback copies of sequence word ``w`` (its own word) that may land on it while a flag multicast reading
    it has not left (``async-source-reuse``: a remote write landing on a flag's source word): a copy is pending from
    its issue until the owner's next ``WriteBarrier``, a flag reading the word has not left until the next ``Flush``
    or ``WriteBarrier``. A copy is a hazard when a flag reading the word is issued while it is pending, or — on a
    target whose writes may leave in any order — when it is issued while such a flag has not left (it may leave
    first and land). Ordered targets leave in issue order on one virtual channel, so an earlier flag on the copy's
    channel has left before a later copy lands; one on another channel has not (``("read", vc)``).
    Each leaf returned is a copy whose landing may be the reuse; empty when none."""
    s = w.seq
    assert s is not None
    assert s.is_source(w)
    copies = {lf.path for lf in w.flags}
    if not copies:
        return []
    ordered = a.program.target.ordered_writes
    view = a.views[s.owner]
    leaf_at = {lf.path: lf for lf in view.leaves}
    found: dict[tuple[int, ...], str] = {}

    def step(op: Op, path: tuple[int, ...], st: State) -> State:
        if isinstance(op, McastSetValid) and op.source == w.sem:
            for t in st:
                if t[0] == "copy":
                    found.setdefault(tuple(t[1]), f"the flag {write_noun(a.program.groups, [op.group])} at {list(path)} "  # type: ignore[arg-type]
                                     "reads it while the copy may not have landed")
            if path in copies and any(t[0] == "read" and (not ordered or t[1] != op.vc) for t in st):
                found.setdefault(path, "it may leave before an earlier flag reading the word (no flush between) and "
                                 "land while that one has not left")
            st = st | {("read", op.vc)}
            if path in copies:
                st = st | {("copy", path)}
            return st
        if isinstance(op, Flush):
            return frozenset(t for t in st if t[0] != "read")
        if isinstance(op, WriteBarrier):
            return frozenset()
        return st

    run_paths(view.program.ops, (), frozenset(), step, a.program.trip_max())
    return [(leaf_at[path], why) for path, why in sorted(found.items())]


def check_sem_balance(a: Analysis, rlimit: int = DEFAULT_RLIMIT, cache: ProofMemo | None = None,
                      trusted: set[int] | None = None) -> list[Result]:
    """One result per used word: it ends at its initial value (or is re-armed). With ``cache``, a word of a
    component isomorphic to one already proved reuses that proof (``canon.py``)."""
    out: list[Result] = []
    rearmed = a.program.rearmed_words()
    host = a.program.host_initialized_words()
    mailboxes = a.program.mailbox_words()
    for key in sorted(a.words, key=lambda k: (k[0], k[1].y, k[1].x)):
        w = a.words[key]
        if w.kind == "unused":
            continue
        if key in mailboxes:
            # Program.mailbox_words, the interpreter's exemption too: only one-word remote writes write it and no op
            # reads it, so the value it ends at reaches nothing the next run does.
            out.append(Result(R.Family.BALANCE.value, f"{R.BALANCE_SEM}:{w.name}", Verdict.PROVED,
                              f"{w.name} is a mailbox only one-word remote writes write and no op reads"))
            continue
        engines = frozenset(lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits))

        def compute(w: Word = w, key: tuple[int, Site] = key) -> Result:
            return _sem_balance(a, w, key in rearmed, rlimit, key in host, trusted or set())
        if cache is None or not engines:
            out.append(compute())
            continue
        c = cache.canon(a, a.component_of(engines), trusted or set())
        out.append(cache.run(R.BALANCE_SEM, c, [c.words[w.name], key in rearmed, key in host, rlimit],
                             f"{R.BALANCE_SEM}:{w.name}", compute))
    return out


def _sem_balance(a: Analysis, w: Word, rearmed: bool, rlimit: int, host: bool = False,
                 trusted: set[int] | None = None) -> Result:
    name = f"{R.BALANCE_SEM}:{w.name}"
    t0 = time.perf_counter()
    if rearmed:
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} is re-armed: set before every use")
    if w.kind == "source" and not w.sets:
        # Nothing writes a source word (classification: no set, increment or multicast lands on it).
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} is a flag source nothing writes: it keeps its "
                                                       f"initial value {w.init}")
    if host:
        # Semaphore.host_init (Program.host_initialized_words): the host writes its initial value into the word at
        # every launch (docs/checker.md), whatever it ends at.
        how = "only counts up and is" if w.kind == "monotone" else "is"
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED,
                      f"{w.name} {how} re-initialized by the host at launch (to {w.init})")
    if w.kind == "sequence" and w.seq is not None:
        return _sequence_balance(a, w, name, rlimit, t0)
    # A flag word reset to its initial value as the owner's last op on it (primed: wait, set, ...; or set-first:
    # set, wait, ..., set).
    primed_flag = w.kind == "flag" and w.reset_value == w.init and ends_reset(a.views, w)
    if w.kind not in ("monotone", "reset") and not primed_flag:
        return Result(R.Family.BALANCE.value, name, Verdict.FAILED,
                      f"{w.name} ({w.kind}) is neither re-armed nor a counter the checker can total")
    q = Query(name, rlimit)
    enc = Encoder(q, a.program, a.views)
    if primed_flag:
        # A flag word the owner resets last, to its initial value: a terminating run ends at it when as many flags
        # are issued as waits run. Each wait sees a flag landed after the reset before it (the launch, for a primed
        # word), a distinct one per wait; with as many flags as waits none is left to land after the last reset —
        # by counting alone, whatever the protocol's other obligations say.
        flags = z3.Sum([q.val(0)] + [enc.total(lf) for lf in w.flags])
        waits = z3.Sum([q.val(0)] + [enc.total(lf) for lf in w.waits])
        q.add(flags != waits)
        r = q.check()
        if r.status == Status.UNSAT:
            return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} ends at its reset value {w.init}: every flag "
                          "issued is waited for and the owner's last op on it is a reset",
                          seconds=time.perf_counter() - t0)
        return Result(R.Family.BALANCE.value, name, Verdict.FAILED,
                      f"{w.name}: flags issued and waits may differ in number ({r.status.value}); not decided",
                      seconds=time.perf_counter() - t0)
    incs = z3.Sum([q.val(0)] + [enc.total(lf) * lf.op.by for lf in w.incs if isinstance(lf.op, INCREMENTS)])
    consumed = z3.Sum([q.val(0)] + [enc.total(lf) * c for lf, c in w.consumed_by()]) if w.kind == "reset" else q.val(0)
    end = w.init + incs - consumed
    q.add(end != w.init)
    r = q.check()
    if r.status == Status.UNSAT:
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} ends at its initial value {w.init}",
                      seconds=time.perf_counter() - t0)
    if r.status == Status.SAT and w.kind == "reset" and _ends_seen(a, w, trusted or set(), rlimit):
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} ends at its initial value {w.init}: its last "
                      "reset saw every increment issued", seconds=time.perf_counter() - t0)
    if r.status == Status.SAT:
        assert r.model is not None
        trips = {n: model_int(r.model, v) for n, v in enc.trip_vars.items()}
        val = model_int(r.model, end)
        if val >= w.init:
            summary = f"{w.name} ends at {val}, not its initial {w.init}: the program cannot run again"
        else:
            # The count says the waits consume more than the increments give: no run ends so, a wait hangs first
            # (a word never goes below what its increments made it), so no end value is named.
            summary = (f"{w.name}'s increments ({w.init + model_int(r.model, incs)}) fall short of what its waits "
                       f"consume ({model_int(r.model, consumed)}): a run that ends cannot leave it at its initial "
                       f"{w.init}; a wait hangs first")
        cex = {"kind": R.BALANCE_SEM, "rule": R.BALANCE_SEM, "word": w.name, "trips": trips, "end_value": val,
               "init": w.init, "summary": summary}
        return Result(R.Family.BALANCE.value, name, Verdict.REFUTED, cex["summary"], cex, time.perf_counter() - t0)  # type: ignore[arg-type]
    return Result(R.Family.BALANCE.value, name, Verdict.FAILED, f"solver: {r.reason}", seconds=time.perf_counter() - t0)


def _sequence_balance(a: Analysis, w: Word, name: str, rlimit: int, t0: float) -> Result:
    """``balance-sem`` of a sequence word (not re-armed): it ends at its initial value when the last write of it
    restores that value in every run that ends — a reset of its own word at top level (no loop, no guard), or, on a
    destination, a flag copying the word after such a reset at top level (it lands last: flags land in issue order).
    Otherwise it ends at the initial value only if nothing above it was ever written: one query over the totals asks
    whether a rising set (own word) or a flag copying a rising value (destination) runs; sat is a refutation the
    interpreter replays (the word ends at the last value it was given), unsat proves it. The restoring write leans on
    the protocol (copies land in order, a loopback copy never lands late): ``assume.py`` lists ``sem-exact`` of the
    word."""
    s = w.seq
    assert s is not None
    if s.is_source(w):
        last = [r for r in s.resets if not r.containers]
        writers = list(s.rising)
        how = f"{s.owner} resets it to {w.init} at {list(last[0].path)}, after its sequence" if last else ""
    else:
        last = [f for f in w.flags if s.carrier(f).post and not f.containers]
        writers = [f for f in w.flags if s.carrier(f).kind != "init"]
        how = (f"{last[0].engine}'s flag at {list(last[0].path)} copies {s.name} after its reset, last"
               if last else "")
    if how:
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} ends at its initial value {w.init}: "
                      f"{how}", seconds=time.perf_counter() - t0)
    q = Query(name, rlimit)
    enc = Encoder(q, a.program, a.views)
    q.add(z3.Sum([q.val(0)] + [enc.total(lf) for lf in writers]) >= 1)
    r = q.check()
    if r.status == Status.UNSAT:
        return Result(R.Family.BALANCE.value, name, Verdict.PROVED, f"{w.name} ends at its initial value {w.init}: no "
                      "value of its sequence is ever written to it", seconds=time.perf_counter() - t0)
    if r.status == Status.SAT:
        assert r.model is not None
        trips = {n: model_int(r.model, v) for n, v in enc.trip_vars.items()}
        summary = (f"{w.name} ends at a value of the sequence of {s.name}, not its initial {w.init}, and no reset at "
                   "its end restores it: the program cannot run again")
        cex = {"kind": R.BALANCE_SEM, "rule": R.BALANCE_SEM, "word": w.name, "trips": trips, "init": w.init,
               "summary": summary}
        return Result(R.Family.BALANCE.value, name, Verdict.REFUTED, summary, cex, time.perf_counter() - t0)  # type: ignore[arg-type]
    return Result(R.Family.BALANCE.value, name, Verdict.FAILED, f"solver: {r.reason}", seconds=time.perf_counter() - t0)


def _ends_seen(a: Analysis, w: Word, trusted: set[int], rlimit: int) -> bool:
    """A reset word whose totals leave it above ``init`` (a ``ge`` wait may see more than it needs) still ends at
    ``init`` when no terminated state has an increment issued that the latest consuming wait did not see (``_unseen``
    with every engine finished): the last reset wipes at least what that wait saw, and nothing lands after it. The
    facts used hold in every run, so this needs no exactness obligation: with ``seen`` the increments landed when
    the latest consuming wait returned, every constraint of ``_unseen`` holds, so unsat means the word ends at or
    below ``init``, and it cannot go below (resets write ``init``, increments add)."""
    engines = a.component_of(lf.engine for lf in (*w.incs, *w.sets, *w.waits))

    def build(sq: StateQuery) -> z3.BoolRef:
        return z3.And(*[sq.enc.position(e).finished for e in sorted(sq.engines)], _unseen(sq, w))
    o, _d, _sq = solve_each(a, build, f"{R.BALANCE_SEM}:{w.name}", engines, trusted, rlimit)
    return o.status == Status.UNSAT


# ---------------------------------------------------------------- per-engine rules (certify/rules.py runs these)


def sem_set(c: EngineRun, op: SemSet | SemRmw, path: tuple[int, ...], s: State) -> State:
    """A SemSet (or a SemRmw's store) rewrites this engine's word: ``async-source-reuse`` while a flag multicast reading it may not have
    left."""
    hit = tuple(int(t[2]) for t in s if t[0] == "sw" and t[1] == op.sem)  # type: ignore[call-overload]
    if hit:
        flags = [lf.op.group for lf in c.view.leaves if lf.index in hit and isinstance(lf.op, McastSetValid)]
        c.flag(R.ASYNC_SOURCE_REUSE, path, f"sets sem{op.sem} while a flag {write_noun(c.p.groups, flags)} reading it "
                                           "may not have left (no flush since)", hit)
    return s


def sem_inc(c: EngineRun, op: SemInc | SemIncMcast, path: tuple[int, ...], s: State) -> State:
    """An increment is outstanding until the engine's next AtomicBarrier (``async-pending-at-end``); a remote write of
    this engine into its core must have landed first (``async-inc-overtake``, the NoC family's rule)."""
    sites = (op.at,) if isinstance(op, SemInc) else c.p.groups[op.group].destinations()
    inc_overtake(c, s, sites, path, "sem_inc" if isinstance(op, SemInc) else "sem_inc_mcast")
    return s | {("a",)}


def sem_wait(c: EngineRun, op: SemWait, path: tuple[int, ...], s: State) -> State:
    """A wait changes none of the per-engine facts."""
    return s


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., State]] = {SemSet: sem_set, SemRmw: sem_set, SemInc: sem_inc,
                                              SemIncMcast: sem_inc, SemWait: sem_wait}
