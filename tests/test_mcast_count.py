"""A multicast's ``num_dests`` other than its group's destinations is a finding, not bad input (issue 16 item 7;
docs/semantics.md "Acknowledgement counts"): the barrier counting its acknowledgements compares received with
expected by ``==`` (noc_nonblocking_api.h ``ncrisc_noc_nonposted_writes_flushed``), so a count too high never lets it
pass (tt-metal #42100) and a count too low lets it pass only while landings are due. The interpreter models both, the
explorer finds the hang, the checker refutes it in the deadlock family with a counterexample the interpreter replays
and never proves it; the P/T net and Promela exports refuse it by name."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    AtomicBarrier,
    Engine,
    EngineProgram,
    Group,
    McastSend,
    McastSetValid,
    Program,
    Semaphore,
    SemIncMcast,
    Site,
)
from verispatial.ir.ops import Op
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import Interp, Transition, drive
from verispatial.petri.position import Position
from verispatial.petri.promela import PromelaUnsupported, to_promela
from verispatial.petri.ptnet import NetUnsupported, net_of

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
Multicast = McastSend | McastSetValid | SemIncMcast


def recount(p: Program, cls: type[Multicast], delta: int) -> Program:
    """``p`` with every ``cls`` op's num_dests moved by ``delta``."""

    def fix(ops: tuple[Op, ...]) -> tuple[Op, ...]:
        out: list[Op] = []
        for op in ops:
            if isinstance(op, cls):
                op = attrs.evolve(op, num_dests=op.num_dests + delta)
            elif hasattr(op, "body"):
                op = attrs.evolve(op, body=fix(op.body))  # type: ignore[call-arg]
            out.append(op)
        return tuple(out)

    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=fix(ep.ops)) for ep in p.programs))


def deadlock_of(report: Report) -> Result:
    (dl,) = [r for r in report.results if r.family == "deadlock" and r.verdict is Verdict.REFUTED]
    return dl


def stuck_at(r: Result) -> list[tuple[str, list[int]]]:
    assert r.counterexample is not None
    return [(st["position"]["engine"], st["position"]["path"]) for st in r.counterexample["stuck"]]


def replays(p: Program, r: Result) -> bool:
    """Driving the interpreter to the counterexample's stuck positions reaches them in a deadlock."""
    assert r.counterexample is not None
    targets = {st["position"]["engine"]: Position.from_json(st["position"]) for st in r.counterexample["stuck"]}
    run = drive(p, r.counterexample["trips"] or None, targets)
    return bool(run.reached) and run.status == "deadlock"


def test_the_group_count_proves() -> None:
    p = load_program(EXAMPLES / "mcast_pair.json")
    assert certify(p).exit_code == 0


@pytest.mark.parametrize("cls", [McastSend, McastSetValid])
def test_a_count_above_the_group_hangs_the_write_barrier(cls: type[Multicast]) -> None:
    """tt-metal #42100: the sender's final write barrier (ops[2], after the block loop) expects one acknowledgement
    per block more than the one receiver returns; refuted in the deadlock family, replayed, and the explorer finds
    the same hang."""
    p = recount(load_program(EXAMPLES / "mcast_pair.json"), cls, +1)
    assert validate(p) == []
    report = certify(p)
    dl = deadlock_of(report)
    assert stuck_at(dl) == [("(0,0).reader", [2])]
    assert replays(p, dl)
    assert dl.counterexample is not None
    assert "expects 4 acknowledgement(s) but only 0 can come" in dl.counterexample["stuck"][0]["reason"]
    if cls is McastSend:
        x = explore(p)
        assert [[(st.position.engine, st.position.path) for st in d.stuck] for d in x.deadlocks] == [
            [("(0,0).reader", (2,))]]
    # Nothing proved leans on the barrier: it never passes, so no op after it runs.
    assert {r.family for r in report.results if r.verdict is Verdict.REFUTED} == {"deadlock"}


def test_a_count_below_the_group_hangs_the_write_barrier_once_everything_landed() -> None:
    """Two receivers, num_dests 1: the barrier's ``==`` holds only between the two acknowledgements. The
    round robin lands both first, and the barrier waits for good; the proofs that read the barrier as "landed" fail
    to prove instead of proving."""
    p = recount(load_program(EXAMPLES / "valid_source.json"), McastSend, -1)
    report = certify(p)
    dl = deadlock_of(report)
    assert stuck_at(dl)[0] == ("(0,0).reader", [1])
    assert replays(p, dl)
    early = [r for r in report.results if r.verdict is Verdict.FAILED and "may pass while some are still due" in r.reason]
    assert early
    assert all(r.family not in ("memory", "bounds", "deadlock") for r in early)


def _inc_program(num_dests: int) -> Program:
    a, b, c = Site(0, 0), Site(1, 0), Site(2, 0)
    return Program("inc_mcast", WORMHOLE, semaphores=(Semaphore(0, "count", (b, c)),),
                   groups=(Group(0, a, (1, 0, 2, 0)),),
                   programs=(EngineProgram(a, Engine.READER, (SemIncMcast(0, 0, num_dests), AtomicBarrier())),))


def test_an_atomic_barrier_with_too_few_expected_passes_only_between_the_landings() -> None:
    """noc_semaphore_inc_multicast to 2 cores with num_dests 1: after one response the counters agree (the barrier
    may pass), after both they never will."""
    it = Interp(_inc_program(1))
    s = it.initial()
    s = it.fire(s, Transition("step", 0))
    assert not it.can_step(s, 0)
    first, _second = it.landings(s)
    s1 = it.fire(s, first)
    assert it.can_step(s1, 0)
    s2 = it.fire(s1, it.landings(s1)[0])
    assert not it.can_step(s2, 0)
    assert it.block_detail(s2, 0).startswith("has 1 acknowledgement(s) more than it expects")
    assert len(explore(_inc_program(1)).deadlocks) == 1
    assert explore(_inc_program(2)).deadlocks == ()


@pytest.mark.parametrize("delta", [+1, -1])
def test_a_wrong_increment_count_is_refuted_at_the_atomic_barrier(delta: int) -> None:
    p = recount(load_program(EXAMPLES / "counter_release.json"), SemIncMcast, delta)
    dl = deadlock_of(certify(p))
    assert ("(0,0).reader", [1]) in stuck_at(dl)
    assert replays(p, dl)


def test_the_exports_refuse_a_miscounted_multicast_by_name() -> None:
    p = recount(load_program(EXAMPLES / "mcast_pair.json"), McastSend, +1)
    why = "(0,0).reader: McastSend states num_dests 2 for a group of 1 destinations"
    with pytest.raises(NetUnsupported, match=r"^\(0,0\)\.reader: McastSend states num_dests 2 for a group of 1 "):
        net_of(p)
    with pytest.raises(PromelaUnsupported) as err:
        to_promela(p)
    assert str(err.value).startswith(why)
    net_of(load_program(EXAMPLES / "mcast_pair.json"))  # the group's own count exports


def test_a_count_of_zero_hangs_the_barrier_and_below_zero_is_bad_input() -> None:
    """num_dests 0 (dataflow_api.h:926: "needs to be non-zero") is only the count the barrier expects
    (noc_nonblocking_api.h:505-506): the one receiver still acknowledges, so the write barrier after the loop waits for
    good once it has: the too-few case, refuted in the deadlock family and replayed. A negative count is no uint32_t."""
    p = recount(load_program(EXAMPLES / "mcast_pair.json"), McastSend, -1)
    assert validate(p) == []
    dl = deadlock_of(certify(p))
    assert stuck_at(dl)[0] == ("(0,0).reader", [2])
    assert replays(p, dl)
    # the exports do not count acknowledgements: refused by name, as any other miscount
    with pytest.raises(PromelaUnsupported, match=r"states num_dests 0 for a group of 1 destinations"):
        to_promela(p)
    with pytest.raises(NetUnsupported, match=r"states num_dests 0 for a group of 1 destinations"):
        net_of(p)
    assert [v.rule for v in validate(recount(p, McastSend, -1))] == [
        "num_dests must be in [0, 4294967295] (a uint32_t count of the acknowledgements the engine's barrier expects), "
        "got -1"]
