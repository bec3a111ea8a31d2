"""The random programs (``verispatial.strategies.programs``) draw the two constructs that landed last, correct and
broken: a patch of a landed read (``FillTiles(b, 0, "patch")`` after the read's barrier; docs/semantics.md
"Local-store fills"), drained or not, and a multicast whose ``num_dests`` is not its group's destinations (0 or 2 for
one; "Acknowledgement counts"). The first program a derandomized draw finds of each form is certified and explored:
a drained patch in a correct program proves, an undrained one is refuted ``async-read-publish`` at the op that
publishes it, and a miscounted multicast is a deadlock the checker refutes with a counterexample the interpreter
replays (the differential tests then compare the rest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hypothesis import Phase, find, settings
from hypothesis.strategies import SearchStrategy

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import FillTiles, Loop, McastSend, McastSetValid, Op, Program
from verispatial.ir import rules as R
from verispatial.ir.ops import PATCH
from verispatial.petri.explore import explore
from verispatial.strategies import blueprints, correct_programs


def _walk(ops: tuple[Op, ...]) -> Iterator[Op]:
    for op in ops:
        yield op
        if isinstance(op, Loop):
            yield from _walk(op.body)


def _patches(p: Program) -> list[FillTiles]:
    return [op for ep in p.programs for op in _walk(ep.ops) if isinstance(op, FillTiles) and op.kind == PATCH]


def _miscounts(p: Program) -> list[int]:
    """The ``num_dests`` of every multicast that states a count other than its group's destinations."""
    dests = {g.id: len(g.destinations()) for g in p.groups}
    return [op.num_dests for ep in p.programs for op in _walk(ep.ops)
            if isinstance(op, (McastSend, McastSetValid)) and op.num_dests != dests[op.group]]


def _first(strategy: SearchStrategy[Program], pred: Callable[[Program], bool]) -> Program:
    """The first program ``strategy`` draws (derandomized, no shrinking) that ``pred`` admits."""
    return find(strategy, pred, settings=settings(database=None, max_examples=3000, derandomize=True,
                                                  phases=(Phase.generate,)))


def test_the_correct_strategy_draws_drained_patches_only_and_they_prove() -> None:
    p = _first(correct_programs(), lambda p: bool(_patches(p)) and len(p.programs) <= 3)
    assert all(f.drain and f.tiles == 0 for f in _patches(p))
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict != Verdict.PROVED]
    assert explore(p).verdict == "ok"


def test_the_broken_strategy_draws_undrained_patches_refuted_at_their_publication() -> None:
    def undrained(p: Program) -> bool:
        return any(not f.drain for f in _patches(p)) and len(p.programs) <= 3 and not _miscounts(p) \
            and R.ASYNC_READ_PUBLISH in explore(p).rules()

    p = _first(blueprints(broken=True), undrained)
    report = certify(p, cache=False)
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED and r.name.startswith(R.ASYNC_READ_PUBLISH)]
    assert refuted, [(r.name, r.verdict) for r in report.results]
    assert all(r.counterexample is not None for r in refuted)


def test_the_broken_strategy_draws_num_dests_0_and_2_refuted_as_deadlocks() -> None:
    for count in (0, 2):
        p = _first(blueprints(broken=True), lambda p, c=count: _miscounts(p) == [c])
        oracle = explore(p, max_states=20_000)
        report = certify(p, cache=False)
        assert oracle.deadlocks or not oracle.complete, count
        assert report.exit_code == 1, count
        deadlocks = [r for r in report.results if r.family == "deadlock"]
        assert any(r.verdict == Verdict.REFUTED for r in deadlocks), (count, [(r.name, r.verdict) for r in deadlocks])
        assert all(r.counterexample is not None for r in deadlocks if r.verdict == Verdict.REFUTED)
