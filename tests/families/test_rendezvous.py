"""The rendezvous family (verispatial/families/rendezvous/). RENDEZVOUS LOCK (issue 8, deliverable 4): on a small
composed program — 3 sections on 2 sites, every participant with work in every section, built by ``compose``
(tests/composed.py ``exchange_chain``: each section reads what the other site wrote in the previous one, so only the
rendezvous orders them) — break each rendezvous op in turn. Each mutant must be refused: refuted with a
counterexample the interpreter replayed (naming the rule: a deadlock, or the ``rendezvous-early`` / ``tensor-race``
violation), or rejected by ``validate`` by name. Only the unbroken program proves.

A mutant whose rendezvous is no longer exactly the compose shape goes to the whole-program checker; an op moved
across the boundary names a buffer of its section from the other phase, which ``validate`` refuses by name.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from composed import engine, exchange_chain, rendezvous_of, with_ops

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import Op, Program, SemInc, SemWait, WaitCond
from verispatial.ir.validate import validate

P = 4  # participants: (0,0).reader, (0,0).writer, (1,0).reader, (1,0).writer
ROOT, OTHER = "(0,0).reader", "(1,0).writer"


def base() -> Program:
    return exchange_chain(3)


def replayed(cex: dict[str, object] | None) -> str:
    """The interpreter's confirmation a refutation carries: ``deadlock`` or the replayed violation's rule."""
    assert cex is not None
    if cex.get("kind") == "deadlock":
        assert cex.get("replayed_by"), cex
        return "deadlock"
    rep = cex.get("replay")
    assert isinstance(rep, dict), cex
    if "violation" in rep:
        return str(rep["violation"]["rule"])
    assert "deadlock" in rep, rep
    return "deadlock"


def tail(p: Program, key: str, k: int) -> tuple[list[Op], int]:
    """Engine ``key``'s ops and the index where its rendezvous of boundary ``k`` (1-based) starts."""
    rv = rendezvous_of(p)
    return list(engine(p, key).ops), rv.starts[key][k - 1]


def edit(p: Program, key: str, fn: Callable[[list[Op], list[int]], None]) -> Program:
    ep = engine(p, key)
    ops, starts = list(ep.ops), list(ep.section_starts)
    fn(ops, starts)
    return with_ops(p, key, ops, starts)


def drop(p: Program, key: str, index: int) -> Program:
    def fn(ops: list[Op], starts: list[int]) -> None:
        del ops[index]
        for s in range(len(starts)):
            if starts[s] > index:
                starts[s] -= 1
    return edit(p, key, fn)


def replace(p: Program, key: str, index: int, op: Op) -> Program:
    def fn(ops: list[Op], _starts: list[int]) -> None:
        ops[index] = op
    return edit(p, key, fn)


def root_gather_wait(p: Program, k: int) -> int:
    _ops, start = tail(p, ROOT, k)
    return start + 2


def test_the_unbroken_program_proves_compositionally() -> None:
    p = base()
    report = certify(p)
    assert [r.name for r in report.results if r.verdict != Verdict.PROVED] == []
    assert report.exit_code == 0
    assert any(r.name == "deadlock:composition" for r in report.results)  # the compositional route
    whole = certify(p, compositional=False)
    assert [r.name for r in whole.results if r.verdict != Verdict.PROVED] == []


def _mutants() -> dict[str, Callable[[Program], Program]]:
    rv_start = lambda p, key, k: rendezvous_of(p).starts[key][k - 1]  # noqa: E731

    def wait_for(n: int) -> Callable[[Program], Program]:
        def m(p: Program) -> Program:
            i = root_gather_wait(p, 1)
            op = engine(p, ROOT).ops[i]
            assert isinstance(op, SemWait)
            assert op.value == P
            return replace(p, ROOT, i, SemWait(op.sem, WaitCond.GE, n))
        return m

    def drop_site_release(p: Program) -> Program:
        i = root_gather_wait(p, 1) + 2  # the release of site (1,0)
        op = engine(p, ROOT).ops[i]
        assert isinstance(op, SemInc)
        assert op.at.x == 1
        return drop(p, ROOT, i)

    def drop_release_wait(p: Program) -> Program:
        # The reader of (1,0): its next section starts with a reservation of its own buffer, enabled at once (a
        # writer's next section starts by waiting for its reader's pages, which keeps it behind the rendezvous).
        key = "(1,0).reader"
        i = rv_start(p, key, 1) + 2
        assert isinstance(engine(p, key).ops[i], SemWait)
        return drop(p, key, i)

    def move_work_before_arrival(p: Program) -> Program:
        # (1,0).reader's first op of section 1 (its read loop) moved before its arrival at boundary 1 (the tail
        # keeps the compose shape).
        key = "(1,0).reader"
        ep = engine(p, key)
        start, s1 = rv_start(p, key, 1), ep.section_starts[1]

        def fn(ops: list[Op], starts: list[int]) -> None:
            moved = ops.pop(s1)
            ops.insert(start, moved)
            starts[1] += 1
        return edit(p, key, fn)

    def move_arrival_after_wait(p: Program) -> Program:
        start = rv_start(p, OTHER, 1)

        def fn(ops: list[Op], _starts: list[int]) -> None:
            arrival = ops.pop(start)
            ops.insert(start + 2, arrival)  # after the AtomicBarrier and the release wait
        return edit(p, OTHER, fn)

    def shared_threshold(p: Program) -> Program:
        i = root_gather_wait(p, 2)
        op = engine(p, ROOT).ops[i]
        assert isinstance(op, SemWait)
        assert op.value == 2 * P
        return replace(p, ROOT, i, SemWait(op.sem, WaitCond.GE, P))

    return {
        "drop one arrival": lambda p: drop(p, OTHER, rv_start(p, OTHER, 1)),
        "root waits for P-1": wait_for(P - 1),
        "root waits for P+1": wait_for(P + 1),
        "drop one site's release": drop_site_release,
        "drop one participant's release wait": drop_release_wait,
        "move a work op before the arrival": move_work_before_arrival,
        "move the arrival after the release wait": move_arrival_after_wait,
        "two boundaries share one gather threshold": shared_threshold,
    }


MUTANTS = _mutants()

#: What refuses each mutant: the rendezvous-early violation at that boundary (its hb-rendezvous obligation), a
#: deadlock, or validate naming the rule.
EARLY = {"root waits for P-1": 0, "drop one participant's release wait": 0,
         "two boundaries share one gather threshold": 1}
DEADLOCK = ("drop one arrival", "root waits for P+1", "drop one site's release",
            "move the arrival after the release wait")
INVALID = {"move a work op before the arrival": "a buffer is used only in its own phase"}


def test_the_mutants_are_each_classified() -> None:
    assert set(MUTANTS) == set(EARLY) | set(DEADLOCK) | set(INVALID)


@pytest.mark.parametrize("name", list(MUTANTS))
def test_every_rendezvous_mutant_is_refused_for_its_own_reason(name: str) -> None:
    p = MUTANTS[name](base())
    assert p != base()
    errs = validate(p)
    if name in INVALID:
        assert errs
        assert INVALID[name] in str(errs[0]), errs
        return
    assert errs == []
    report = certify(p)
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert refuted, f"{name}: not refused"
    for r in refuted:  # every refutation carries a replayed counterexample
        replayed(r.counterexample)
    if name in EARLY:
        b = EARLY[name]
        rv = next(x for x in report.results if x.name == f"hb-rendezvous:after-section-{b}")
        assert rv.verdict == Verdict.REFUTED, (rv.verdict, rv.reason)
        assert replayed(rv.counterexample) == "rendezvous-early"
        assert rv.counterexample is not None
        assert f"rendezvous after section {b} (" in rv.counterexample["replay"]["violation"]["message"]
    else:
        dl = [r for r in refuted if r.family == "deadlock"]
        assert dl, (name, [r.name for r in refuted])
        assert replayed(dl[0].counterexample) == "deadlock"
