"""One root cause, one finding (issue 16): the failures to prove that a refuted finding explains, grouped under it.

A refuted obligation often comes with further ``failed-to-prove`` results that are not independent problems but
its consequences: a proof that assumed the refuted obligation (``report.settle`` downgraded it), a deadlock
component that could not be decided because a word's exact counting was refuted, a rule candidate the interpreter
could not replay because a refuted deadlock stops the engine before the candidate's op. ``group`` finds them; the
text report lists each under its finding, the JSON report names the finding in ``consequence_of``, SARIF relates the
two. This is presentation only: no verdict changes (a consequence stays ``failed-to-prove``, so the exit code is the
same), and it reads only what the kernel recorded — ``Result.blocked_by``, ``Result.unreplayed`` — and, for the
last kind, one run of the reference interpreter per refuted deadlock.

A failed result ``F`` is a *consequence* of refuted finding ``X`` when

- ``F.blocked_by`` is not empty and every name in it is explained: it is a refuted obligation (a finding), or a
  result that is itself a consequence; ``sem-exact:W`` stands for the semaphore-family results of word ``W`` (its
  exact counting is reported under the kind that broke it: ``sem-set-race:W``, ``sem-overshoot:W``, ...), all of
  which must be explained. ``X`` is the finding the first blocking name leads to. Or
- ``F.unreplayed`` (the interpreter did not reproduce its candidate) and ``X`` is a refuted deadlock whose run, as
  the interpreter reproduces it, leaves an occurrence of an op ``F`` is about unexecuted while an engine of those
  ops, one of ``X``'s component, is stuck (none of them ran, or the last occurrence of one is after the engine's
  stuck position): an op obligation's op, every op of an ordering, every op of the buffer, word or tensor it
  names; for a claim checked at the end of a run (``balance-*``, ``output-unwritten``, ``async-pending-at-end``)
  the run never ends (an end claim whose subject no op names goes under the first refuted deadlock).

Anything else that failed to prove — a fragment the checker does not decide, a solver ``unknown``, a candidate that
did not replay although every occurrence of its ops was reached, an assumption that failed on its own — is
reported as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from verispatial.certify.report import Report, Result, Verdict
from verispatial.ir import obligation
from verispatial.ir import rules as R
from verispatial.ir.obligation import (
    AliasRef,
    BadObligationId,
    BufferRef,
    ComponentRef,
    ObligationId,
    OpRef,
    OrderingRef,
    TensorRef,
    WordRef,
)
from verispatial.ir.ops import CONTAINERS, ID_BUFFER, ID_OPERANDS, Loop, Op, count_value
from verispatial.ir.program import Program
from verispatial.petri.position import Position, enclosing_loops

if TYPE_CHECKING:
    from verispatial.petri.interp import SimResult

#: Obligation kinds whose claim the interpreter checks when a run ends (a deadlocked run never gets there).
END_KINDS = frozenset({R.BALANCE_CB, R.BALANCE_SEM, R.OUTPUT_UNWRITTEN})


@attrs.frozen
class Grouping:
    """``of``: consequence name -> the refuted finding it is grouped under. ``findings``: the refuted results' names,
    in report order; ``others``: the names of failed-to-prove results that are not consequences."""

    of: dict[str, str] = attrs.Factory(dict)
    findings: tuple[str, ...] = ()
    others: tuple[str, ...] = ()

    def under(self, finding: str) -> list[str]:
        """The consequences grouped under ``finding``, in report order."""
        return [c for c, f in self.of.items() if f == finding]

    def counts(self) -> dict[str, int]:
        """``findings`` (refuted), ``consequences`` and ``other_failed_to_prove``: the summary line's figures."""
        return {"findings": len(self.findings), "consequences": len(self.of), "other_failed_to_prove": len(self.others)}


def _id(name: str) -> ObligationId | None:
    try:
        return obligation.parse(name)
    except BadObligationId:
        return None


def _resolve(name: str, by_name: dict[str, list[Result]], results: Sequence[Result]) -> list[Result]:
    """The results a ``blocked_by`` name stands for: those of that name; for ``sem-exact:W`` with none, every
    semaphore-family result of word ``W`` (in the same slice)."""
    got = by_name.get(name)
    if got:
        return got
    oid = _id(name)
    if oid is None or oid.kind != R.SEM_EXACT or oid.word is None:
        return []
    out = []
    for r in results:
        o = _id(r.name)
        if o is not None and r.family == R.Family.SEMAPHORE.value and o.word == oid.word and o.slice == oid.slice:
            out.append(r)
    return out


def group(report: Report, program: Program | None = None) -> Grouping:
    """Every failed-to-prove result of ``report`` that a refuted finding explains (module docstring), with the
    finding; ``program`` (the one ``report`` is about) lets the refuted deadlocks' runs explain unreplayed candidates
    (without it only ``blocked_by`` is read)."""
    results = report.results
    by_name: dict[str, list[Result]] = {}
    for r in results:
        by_name.setdefault(r.name, []).append(r)
    findings = tuple(r.name for r in results if r.verdict == Verdict.REFUTED)
    of: dict[str, str] = {}
    failed = [r for r in results if r.verdict == Verdict.FAILED]
    runs = _deadlock_runs(program, results) if program is not None and any(r.unreplayed for r in failed) else []
    changed = True
    while changed:  # a consequence of a consequence: to a fixpoint (each pass adds one, or stops)
        changed = False
        for r in failed:
            if r.name in of:
                continue
            root = _blocked_root(r, of, by_name, results) if r.blocked_by else None
            if root is None and r.unreplayed and program is not None:
                root = _unreached_root(program, r, runs)
            if root is not None:
                of[r.name] = root
                changed = True
    ordered = {r.name: of[r.name] for r in failed if r.name in of}
    others = tuple(r.name for r in failed if r.name not in of)
    return Grouping(ordered, findings, others)


def _blocked_root(r: Result, of: dict[str, str], by_name: dict[str, list[Result]],
                  results: Sequence[Result]) -> str | None:
    """The finding every blocking assumption of ``r`` leads to (the first one's), or None when one of them is not
    explained (proved results among a word's are no cause; a name with no result at all explains nothing)."""
    root: str | None = None
    for name in r.blocked_by:
        causes = [x for x in _resolve(name, by_name, results) if x.verdict != Verdict.PROVED]
        if not causes:
            return None
        for x in causes:
            if x.verdict == Verdict.REFUTED:
                here = x.name
            elif x.verdict == Verdict.FAILED and x.name in of:
                here = of[x.name]
            else:
                return None
            root = root or here
    return root


# ------------------------------------------------------------------------------------------ deadlock runs


@attrs.frozen
class _Run:
    """A refuted deadlock's run and the engines of its component (the obligation's: another component's engines
    may be stuck in the same run, but that is their own deadlock)."""

    finding: str
    run: SimResult
    component: frozenset[str]


def _deadlock_runs(program: Program, results: Sequence[Result]) -> list[_Run]:
    """The interpreter's run of each refuted deadlock, reproduced as the gate does (its recorded schedule, else
    driving the engines to their stuck positions); a deadlock that does not reproduce explains nothing."""
    from verispatial.certify.reach import analyse

    out = []
    comps: tuple[frozenset[str], ...] | None = None
    for r in results:
        cex = r.counterexample
        oid = _id(r.name)
        if (r.verdict != Verdict.REFUTED or not isinstance(cex, dict) or cex.get("kind") != R.DEADLOCK or oid is None
                or oid.slice is not None or not isinstance(oid.subject, ComponentRef)):
            continue
        run = _reproduce(program, cex)
        if run is None or run.status != R.DEADLOCK:
            continue
        if comps is None:
            comps = analyse(program).components
        first = oid.subject.engine
        comp = next((c for c in comps if min(c) == first), None)
        if comp is not None:
            out.append(_Run(r.name, run, comp))
    return out


def _reproduce(program: Program, cex: dict[str, Any]) -> SimResult | None:
    from verispatial.petri.interp import Transition, drive, replay

    try:
        trips = {str(k): int(v) for k, v in (cex.get("trips") or {}).items()}
        sched = cex.get("schedule")
        if isinstance(sched, list):
            return replay(program, trips or None, [Transition.from_json(t) for t in sched])
        targets = {}
        for st in cex.get("stuck") or []:
            pos = Position.from_json(st["position"])
            targets[pos.engine] = pos
        if not targets:
            return None
        got = drive(program, trips or None, targets)
        return got if got.status == R.DEADLOCK else drive(program, trips or None, targets, release=True)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _unreached_root(program: Program, r: Result, runs: list[_Run]) -> str | None:
    """The first refuted deadlock whose run stops an engine of ``r``'s ops where an occurrence of them is still ahead
    of it (none of them ran, or one's last occurrence comes after the engine's stuck position: it never reaches it)
    or, for a claim checked at the end, stops any engine of them (the run never ends); an end claim whose subject no
    op names (an output nothing writes) has the first such run's."""
    from verispatial.petri.interp import resolve_trips

    oid = _id(r.name)
    if oid is None:
        return None
    at_end = oid.kind in END_KINDS or (isinstance(oid.subject, OpRef) and oid.subject.path is None)
    ops = _subject_ops(program, oid)
    if not ops:
        return runs[0].finding if at_end and runs else None
    engines = {e for e, _ in ops}
    for x in runs:
        stuck = {st.position.engine: st.position for st in x.run.stuck if st.position.engine in x.component}
        if not engines & stuck.keys():
            continue
        if at_end or all(x.run.executed.get(op, 0) == 0 for op in ops if op[1]):
            return x.finding
        trips = resolve_trips(program, x.run.trips)
        if any(_ahead_of(program, op, stuck[op[0]], trips) for op in ops if op[1] and op[0] in stuck):
            return x.finding
    return None


def _ahead_of(program: Program, op: tuple[str, tuple[int, ...]], stuck: Position, trips: dict[str, int]) -> bool:
    """Whether the op at ``op`` (engine key, path) has an occurrence after ``stuck``, its engine's position in a
    deadlocked run (which it never leaves): its last occurrence, every enclosing loop at its last iteration under
    ``trips``, sorts after it (``Position.order_key``). False when that is not known: an enclosing ``If`` may skip
    the op, and a loop that runs no iteration has no occurrence."""
    engine, path = op
    ep = next(e for e in program.programs if e.key == engine)
    iteration: list[tuple[str, int]] = []
    for c in enclosing_loops(ep.ops, path):
        if not isinstance(c, Loop):
            return False
        n = count_value(c.count, trips)
        if n <= 0:
            return False
        iteration.append((c.var, n - 1))
    return Position(engine, path, tuple(iteration)).order_key() > stuck.order_key()


def _paths(ops: tuple[Op, ...], prefix: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Op]]:
    for i, op in enumerate(ops):
        yield (*prefix, i), op
        if isinstance(op, CONTAINERS):
            yield from _paths(op.body, (*prefix, i))


def _subject_ops(program: Program, oid: ObligationId) -> list[tuple[str, tuple[int, ...]]]:
    """The (engine, op path) pairs obligation ``oid`` is about (an end-of-engine op has the path ``()``)."""
    s = oid.subject
    if isinstance(s, OpRef):
        return [(s.engine, s.path if s.path is not None else ())]
    if isinstance(s, OrderingRef):
        return [(leaf.engine, leaf.path) for leaf in (s.first, s.second) if leaf is not None]
    bufs: set[int] = set()
    if isinstance(s, BufferRef):
        bufs = {s.buffer}
    elif isinstance(s, AliasRef):
        bufs = {s.buffer, s.partner}
    out = []
    for ep in program.programs:
        for path, op in _paths(ep.ops):
            if isinstance(op, CONTAINERS):
                continue
            if bufs and bufs & _buffers(op):
                out.append((ep.key, path))
            elif isinstance(s, WordRef) and getattr(op, "sem", None) == s.sem and s.site in (
                    ep.site, getattr(op, "at", None)):
                out.append((ep.key, path))
            elif isinstance(s, TensorRef) and getattr(op, "tensor", None) == s.tensor:
                out.append((ep.key, path))
    return out


def _buffers(op: Op) -> set[int]:
    """The buffers an op names (its fields the IR tags as buffer ids, a compute's operands')."""
    out: set[int] = set()
    for f in attrs.fields(type(op)):
        tag = f.metadata.get("id")
        v = getattr(op, f.name)
        if tag == ID_BUFFER and isinstance(v, int):
            out.add(v)
        elif tag == ID_OPERANDS:
            out |= {x.buf for x in v}
    return out


def grouped(report: Report, program: Program | None) -> Grouping | None:
    """``group`` when ``report`` refutes something (else None: nothing to group under)."""
    if not any(r.verdict == Verdict.REFUTED for r in report.results):
        return None
    return group(report, program)


def annotate_json(doc: dict[str, Any], grouping: Grouping | None) -> dict[str, Any]:
    """The JSON report ``doc`` (``Report.to_json``) with ``consequence_of: <finding name>`` on each consequence and
    ``summary``: the counts of ``Grouping.counts``, on every report (``grouping`` None, nothing refuted: no
    consequences, every failed-to-prove result another). Verdicts and ``exit_code`` stay."""
    results = doc.get("results", [])
    if grouping is None:
        grouping = Grouping(findings=tuple(r["name"] for r in results if r.get("verdict") == Verdict.REFUTED.value),
                            others=tuple(r["name"] for r in results if r.get("verdict") == Verdict.FAILED.value))
    results = [{**r, "consequence_of": grouping.of[r["name"]]} if r.get("name") in grouping.of else r for r in results]
    return {**doc, "results": results, "summary": grouping.counts()}
