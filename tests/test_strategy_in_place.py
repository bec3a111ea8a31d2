"""The random-program strategies draw reads in place (docs/semantics.md "Reads in place"): a resident input shard
read by index, a constant tile ordered through a token. Correct draws break no rule in the explorer; the checker
never proves ``cb-read-unpublished`` where the explorer finds it, and refutes only where it does (replayed); the
``index`` mutation moves the page a read in place reads."""

from __future__ import annotations

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import WORMHOLE, AcquireAcc, Buffer, Compute, Engine, EngineProgram, InPlace, Program, ReleaseAcc, Site
from verispatial.ir import rules as R
from verispatial.ir.program import walk
from verispatial.petri.explore import explore
from verispatial.strategies.programs import blueprints, mutate


def _reads_in_place(p: Program) -> bool:
    return any(isinstance(op, Compute) and op.in_place for ep in p.programs for op in walk(ep.ops))


def _in_place_program(broken: bool) -> st.SearchStrategy[Program]:
    return blueprints(broken=broken).filter(_reads_in_place)


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(_in_place_program(broken=False))
def test_correct_reads_in_place_break_nothing(p: Program) -> None:
    assert explore(p, max_states=20_000).rules() == []


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(_in_place_program(broken=True))
def test_the_checker_agrees_with_the_explorer_on_reads_in_place(p: Program) -> None:
    r = explore(p, max_states=20_000)
    if not r.complete:
        return
    found = R.CB_READ_UNPUBLISHED in r.rules()
    ours = [x for x in certify(p).results if x.name.startswith(R.CB_READ_UNPUBLISHED + ":")]
    if not found:
        assert all(x.verdict is not Verdict.REFUTED for x in ours), [x.name for x in ours]
    else:
        assert any(x.verdict is not Verdict.PROVED for x in ours), [x.name for x in ours]
    for x in ours:
        if x.verdict is Verdict.REFUTED:
            assert x.counterexample is not None
            assert x.counterexample["replay"]["violation"]["rule"] == R.CB_READ_UNPUBLISHED


def test_the_index_mutation_moves_a_page() -> None:
    """``mutate`` changes the page a read in place reads (its ``index`` kind), keeping the buffer."""
    p = Program("t", WORMHOLE, buffers=(Buffer(0, "eps", Site(0, 0), 0, 1, 1, "bf16"),), programs=(EngineProgram(
        Site(0, 0), Engine.COMPUTE, (AcquireAcc(1, "bf16"), Compute("add_tiles", 1, (), (InPlace(0, 0),)),
                                     ReleaseAcc())),))

    def pages(q: Program) -> list[tuple[int, int]]:
        return [(r.buf, r.page) for ep in q.programs for op in walk(ep.ops) if isinstance(op, Compute)
                for r in op.in_place]

    q = find(mutate(p), lambda q: [b for b, _ in pages(q)] == [b for b, _ in pages(p)] and pages(q) != pages(p),
             settings=settings(database=None, max_examples=500))
    assert pages(q) != pages(p)
