"""The checker: discharge every obligation of a scheduled program and report one verdict per obligation.

Order matters only for what later families may assume: the circular-buffer coverage rules decide which buffers'
occupancy bounds the reachability queries may use (``trusted``); nothing else is assumed. Every refutation is
replayed by the interpreter before it is reported as such; one that does not replay fails to prove.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from verispatial.certify.alias import check_aliases
from verispatial.certify.bounds import check_bounds
from verispatial.certify.cache import ProofCache
from verispatial.certify.deadlock import check_deadlock
from verispatial.certify.exact import check_exact, check_sem_balance
from verispatial.certify.memory import check_memory
from verispatial.certify.multicast import check_multicast
from verispatial.certify.ordering import check_ordering
from verispatial.certify.reach import Analysis, analyse
from verispatial.certify.replay import confirm_rule
from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.ring import check_cb_balance, check_straddle
from verispatial.certify.rules import RULE_FAMILY, Finding, engine_findings, ownership_findings
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.certify.structure import unsupported_features
from verispatial.ir.program import Program

#: checker rule -> interpreter rules that reproduce it. A counterexample may also name ``deadlock_at``: a
#: deadlock with that engine stuck there reproduces it too (an overshot equality wait hangs exactly there).
REPLAY_RULES: dict[str, set[str]] = {
    "sem-set-race": {"sem-set-race"},
    "sem-overshoot": {"sem-overshoot"},
    "sem-flag-early": {"sem-set-race"},
    "mcast-slot": {"mcast-slot"},
    "mcast-publish-early": {"mcast-publish-early"},
    "tensor-race": {"tensor-race"},
    "rendezvous-early": {"rendezvous-early"},
    "cb-straddle": {"cb-straddle"},
    "bounds": {"bounds"},
    "balance-cb": {"balance-cb"},
    "balance-sem": {"balance-sem"},
    "alias-clobber": {"alias-clobber"},
}
#: Refutations that are concrete arithmetic on the program text (addresses), re-checked by construction.
STATIC_KINDS = {"memory", "mcast-address", "certificate"}

Progress = Callable[[str], None]


def _rule_results(a: Analysis, findings: list[Finding]) -> list[Result]:
    out: list[Result] = []
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:
        by_rule.setdefault(f.rule, []).append(f)
    n = len(a.views)
    for rule, family in RULE_FAMILY.items():
        fs = by_rule.get(rule, [])
        if not fs:
            out.append(Result(family, rule, Verdict.PROVED, f"no path of the {n} engine programs breaks it"))
            continue
        for f in fs:
            t0 = time.perf_counter()
            name = f"{rule}:{f.engine}:{list(f.path) if f.path is not None else 'end'}"
            got = confirm_rule(a.program, {rule}, None, f.engine, f.path)
            if got is not None:
                cex = {"kind": "rule", "rule": rule, "engine": f.engine,
                       "path": list(f.path) if f.path is not None else None, "summary": f"{f.engine}: {f.message}", **got}
                out.append(Result(family, name, Verdict.REFUTED, f.message, cex, time.perf_counter() - t0))
            else:
                out.append(Result(family, name, Verdict.FAILED,
                                  f"{f.message} — on a path the interpreter did not reach (not replayed)",
                                  seconds=time.perf_counter() - t0))
    return out


def _confirm(a: Analysis, r: Result) -> Result:
    """Replay a solver refutation in the interpreter; keep it only if reproduced."""
    if r.verdict != Verdict.REFUTED or r.counterexample is None:
        return r
    cex = r.counterexample
    kind = cex.get("kind")
    if kind in STATIC_KINDS or kind == "deadlock" or "replayed_by" in cex:
        return r
    rule = str(cex.get("rule", kind))
    if rule not in REPLAY_RULES:
        return r
    rules = REPLAY_RULES[rule]
    t0 = time.perf_counter()
    path = tuple(cex["path"]) if isinstance(cex.get("path"), list) else None
    dl = cex.get("deadlock_at")
    deadlock_at = None
    if isinstance(dl, dict):
        deadlock_at = (str(dl["engine"]), tuple(dl["path"]) if isinstance(dl.get("path"), list) else None)
    engine = cex.get("engine")
    boundary = cex.get("boundary")
    also = None if not isinstance(boundary, int) else (
        lambda v, b=boundary: f"rendezvous after section {b} (" in v.message)
    got = confirm_rule(a.program, rules, cex.get("trips") or None, engine if isinstance(engine, str) else None,
                       path, deadlock_at=deadlock_at, also=also)
    dt = r.seconds + time.perf_counter() - t0
    if got is None:
        return Result(r.family, r.name, Verdict.FAILED,
                      f"candidate not replayed by the interpreter: {r.reason}", seconds=dt)
    return Result(r.family, r.name, r.verdict, r.reason, {**cex, "replay": got}, dt)


def certify(program: Program, certificate: dict[str, Any] | None = None, *, jobs: int = 1,
            progress: Progress | None = None, rlimit: int = DEFAULT_RLIMIT,
            cache: ProofCache | bool = True, compositional: bool = True) -> Report:
    """Discharge every obligation of ``program`` (DESIGN §7) and return the report.

    ``certificate``, when given, is compared with the one re-derived from the program; any difference is a
    refuted ``certificate`` obligation. ``jobs`` > 1 runs independent families in worker processes.
    ``cache``: True proves each renaming-invariant obligation once per class of isomorphic components
    (``cache.py``; a reused result's reason names the component it was proved for); a ``ProofCache`` also
    reuses proofs of earlier runs given the same instance; False proves every component separately (and every
    slice of a composed program). ``compositional``: a composed program whose rendezvous has the compose pass's
    shape is proved from its slices (``compositional.py``); anything else, and every program with False, by the
    whole-program obligations.
    Raises nothing for a well-formed program: solver trouble becomes ``failed-to-prove``.
    """
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    if compositional and any(s.barrier_after for s in program.sections[:-1]):
        from verispatial.certify import compositional as comp

        rv = comp.recognise(program)
        cut = comp.cut(program, rv) if isinstance(rv, comp.Rendezvous) else rv
        if isinstance(rv, comp.Rendezvous) and isinstance(cut, comp.Cut):
            say(f"compositional: {len(cut.slices)} slices, {len(rv.boundaries)} rendezvous, "
                f"{len(rv.participants)} participants")
            composed = comp.certify_composed(program, rv, cut, certify, jobs=jobs, progress=progress, rlimit=rlimit,
                                             cache=cache)
            if certificate is not None:
                from verispatial.certify.certificate import compare_certificate

                say("certificate")
                composed += compare_certificate(program, analyse(program), composed, certificate)
            return Report(program.name, program.target.name, tuple(composed), time.perf_counter() - t0)
        say(f"whole-program check (not the compose rendezvous: {cut})")
    unsupported = unsupported_features(program)
    if unsupported:
        return Report(program.name, program.target.name, (Result(
            "fragment", "fragment", Verdict.FAILED,
            "outside the fragment the checker decides: " + ", ".join(unsupported)),), time.perf_counter() - t0)
    pc = (ProofCache() if cache else None) if isinstance(cache, bool) else cache
    a = analyse(program)
    results: list[Result] = []
    say("rules: ownership, coverage, asynchronous NoC, accumulator")
    findings = ownership_findings(program, a.views)
    for v in a.views.values():
        findings.extend(engine_findings(program, v))
    results += _rule_results(a, findings)
    untrusted = {int(x) for f in findings if f.rule in ("cb-push-uncovered", "cb-pop-uncovered",
                                                          "cb-single-producer", "cb-single-consumer")
                 for x in _buffers_of(a, f)}
    trusted = {b.id for b in program.buffers} - untrusted

    # Exact counting first: the deadlock question needs to know which counter models are faithful.
    say("semaphore counting")
    results += [_confirm(a, r) for r in check_exact(a, trusted, rlimit, pc)]
    inexact = _inexact(results)
    labels = ["ring alignment", "balance", "bounds", "memory", "multicast", "happens-before", "deadlock"]
    if jobs > 1:
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_family, label, program, trusted, rlimit, inexact, None, pc) for label in labels]
            for label, fut in zip(labels, futures, strict=True):
                say(label)
                results += fut.result()
    else:
        for label in labels:
            say(label)
            results += _family(label, program, trusted, rlimit, inexact, a, pc)
    if certificate is not None:
        from verispatial.certify.certificate import compare_certificate

        say("certificate")
        results += compare_certificate(program, a, results, certificate)
    return Report(program.name, program.target.name, tuple(results), time.perf_counter() - t0)


def _family(label: str, program: Program, trusted: set[int], rlimit: int, inexact: set[str],
            a: Analysis | None = None, cache: ProofCache | None = None) -> list[Result]:
    """One obligation family, replayed; a top-level function so worker processes can run it (a worker gets its
    own copy of ``cache``: reuse happens within the family it runs)."""
    a = a or analyse(program)
    runs: dict[str, Callable[[], list[Result]]] = {
        "ring alignment": lambda: check_straddle(a, rlimit, cache, trusted),
        "balance": lambda: check_cb_balance(a, rlimit, trusted, cache) + check_sem_balance(a, rlimit, cache, trusted),
        "bounds": lambda: check_bounds(a, rlimit),
        "memory": lambda: check_memory(program, rlimit) + check_aliases(a, trusted, rlimit),
        "multicast": lambda: check_multicast(a, trusted, rlimit),
        "happens-before": lambda: check_ordering(a, trusted, rlimit),
        "deadlock": lambda: check_deadlock(a, trusted, rlimit, inexact, cache=cache),
    }
    return [_confirm(a, r) for r in runs[label]()]


def _inexact(results: list[Result]) -> set[str]:
    """Semaphore words whose exact-counting obligations did not all prove."""
    return {r.name.split(":", 1)[1] for r in results
            if r.family == "semaphore" and r.verdict != Verdict.PROVED and ":" in r.name}


def _buffers_of(a: Analysis, f: Finding) -> list[int]:
    if f.path is None:
        return []
    from verispatial.certify.structure import op_at

    op = op_at(a.views[f.engine].program, f.path)
    b = getattr(op, "buf", None)
    return [b] if isinstance(b, int) else []
