"""The reference interpreter (DESIGN §5): positions, loops, runs, replays and results, each on a tiny program with the
exact expected outcome. The tests of each rule family's ops and rules are ``tests/families/test_<family>.py``."""

from __future__ import annotations

import pytest
from builders import CA, RA, A, buf, ep, prog

from verispatial.errors import InvalidProgram
from verispatial.ir import (
    Addr,
    Compute,
    Engine,
    Loop,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Tensor,
    Trip,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.petri.interp import Interp, SimResult, Transition, drive, replay, rule_at, simulate
from verispatial.petri.position import Position, Violation, enclosing_loops, op_at, path_text


def only(r: SimResult) -> Violation:
    assert len(r.violations) == 1, r.text()
    return r.violations[0]


def where(v: Violation) -> tuple[str, str, tuple[int, ...] | None, tuple[tuple[str, int], ...]]:
    return (v.rule, v.position.engine, v.position.path, v.position.iteration)


# A reader that fills b0 two pages at a time, eight times, and a compute engine that drains it.
def producer_consumer(k: int = 8, extra_wait: int = 0) -> Program:
    reader = ep(A, Engine.READER, Loop("k", k, (Reserve(0, 2), Push(0, 2))))
    tail = (Wait(0, extra_wait),) if extra_wait else ()
    compute = ep(A, Engine.COMPUTE, Loop("k", k, (Wait(0, 2), Pop(0, 2))), *tail)
    return prog(reader, compute, buffers=(buf(0),))


# ---------------------------------------------------------------------------------------------- positions


def test_position_text_json_and_equality() -> None:
    p = Position(RA, (1, 2), (("k", 3),), op="reserve(b0, 64)")
    assert str(p) == "(0,0).reader at ops[1].body[2] reserve(b0, 64) k=3"
    assert Position.from_json(p.to_json()) == p
    assert p.to_json() == {"engine": RA, "path": [1, 2], "iteration": [["k", 3]], "op": "reserve(b0, 64)"}
    assert p == Position(RA, (1, 2), (("k", 3),))  # the op text is display only
    assert str(Position(RA, None)) == "(0,0).reader finished"
    assert Position(RA, None).finished


def test_position_order_follows_execution() -> None:
    early = Position(RA, (1, 2), (("k", 0),))
    later_iter = Position(RA, (1, 0), (("k", 1),))
    loop_itself = Position(RA, (1,), ())
    assert loop_itself.order_key() < early.order_key() < later_iter.order_key() < Position(RA, None).order_key()


def test_paths() -> None:
    ops = (Compute("x"), Loop("k", 2, (Compute("y"), Loop("i", 3, (Reserve(0, 1),)))))
    assert path_text((1, 1, 0)) == "ops[1].body[1].body[0]"
    assert op_at(ops, (1, 1, 0)) == Reserve(0, 1)
    assert [lp.var for lp in enclosing_loops(ops, (1, 1, 0))] == ["k", "i"]


# ---------------------------------------------------------------------------------------------- CB ops


def test_producer_consumer_terminates() -> None:
    r = simulate(producer_consumer())
    assert r.status == "terminated"
    assert r.violations == ()
    assert r.steps == 32
    assert r.pushed == {0: 16}
    assert r.popped == {0: 16}
    assert r.positions[RA] == Position(RA, None)


def test_reserve_blocks_when_full() -> None:
    r = simulate(prog(ep(A, Engine.READER, Reserve(0, 4), Push(0, 4), Reserve(0, 1)), buffers=(buf(0),)))
    assert r.status == "deadlock"
    assert [str(s) for s in r.stuck] == [
        "(0,0).reader at ops[2] reserve(b0, 1): waits for space in b0: capacity-(pushed-popped)=4-(4-0)=0 < 1"
    ]


def test_reserve_again_with_larger_count_is_legal() -> None:
    r = simulate(prog(ep(A, Engine.READER, Reserve(0, 1), Reserve(0, 3), Push(0, 3)),
                      ep(A, Engine.COMPUTE, Wait(0, 3), Pop(0, 3)), buffers=(buf(0),)))
    assert (r.status, r.violations) == ("terminated", ())


def test_wait_for_more_than_pushed_deadlocks_with_positions_and_counters() -> None:
    r = simulate(producer_consumer(extra_wait=1))
    assert r.status == "deadlock"
    assert len(r.stuck) == 1
    st = r.stuck[0]
    assert st.position == Position(CA, (1,), ())
    assert st.reason == "waits for b0: pushed-popped=16-16=0 < 1"
    it = Interp(producer_consumer(extra_wait=1))
    s = it.initial()
    assert it.blocked_reason(s, CA) == (
        "(0,0).compute at ops[0].body[0] wait(b0, 2) k=0: waits for b0: pushed-popped=0-0=0 < 2")


def test_stuck_inside_a_loop_names_the_iteration() -> None:
    reader = ep(A, Engine.READER, Loop("k", 3, (Reserve(0, 2), Push(0, 2))))
    compute = ep(A, Engine.COMPUTE, Loop("k", 4, (Wait(0, 2), Pop(0, 2))))
    r = simulate(prog(reader, compute, buffers=(buf(0),)))
    assert r.status == "deadlock"
    assert r.stuck[0].position == Position(CA, (0, 0), (("k", 3),))
    assert str(r.stuck[0]) == "(0,0).compute at ops[0].body[0] wait(b0, 2) k=3: waits for b0: pushed-popped=6-6=0 < 2"


def test_loop_counts_trips_and_zero() -> None:
    reader = ep(A, Engine.READER, Loop("k", "t", (Reserve(0, 1), Push(0, 1))), Loop("z", 0, (Reserve(0, 9),)))
    compute = ep(A, Engine.COMPUTE, Loop("k", "t", (Wait(0, 1), Pop(0, 1))))
    p = prog(reader, compute, buffers=(buf(0),), trips=(Trip("t", 5),))
    r = simulate(p)
    assert (r.status, r.trips, r.pushed) == ("terminated", {"t": 5}, {0: 5})  # trips default to their max
    r0 = simulate(p, trips={"t": 0})
    assert (r0.status, r0.steps, r0.pushed) == ("terminated", 0, {0: 0})
    with pytest.raises(ValueError, match=r"trip t = 6 is outside \[0, 5\]"):
        simulate(p, trips={"t": 6})
    with pytest.raises(ValueError, match="trip 'u' is not declared"):
        simulate(p, trips={"u": 1})


def test_invalid_program_is_refused() -> None:
    with pytest.raises(InvalidProgram, match="Push: buffer 3 is not a buffer"):
        simulate(prog(ep(A, Engine.READER, Push(3, 1)), buffers=(buf(0),)))


# ---------------------------------------------------------------------------------------------- runs


def test_fifty_thousand_steps() -> None:
    r = simulate(producer_consumer(k=12_500))
    assert (r.status, r.steps, r.pushed) == ("terminated", 50_000, {0: 25_000})


def test_step_limit_and_stop_on() -> None:
    r = simulate(producer_consumer(), max_steps=5)
    assert (r.status, r.steps) == ("step-limit", 5)
    sizes = (2, 2, 1, 2, 2)
    reader = ep(A, Engine.READER, *[o for n in sizes for o in (Reserve(0, n), Push(0, n))])
    compute = ep(A, Engine.COMPUTE, *[o for n in sizes for o in (Wait(0, n), Pop(0, n))])
    p = prog(reader, compute, buffers=(buf(0),))
    r2 = simulate(p, stop_on=rule_at("cb-straddle", (9,), RA))
    assert r2.status == "violation"
    assert r2.positions[RA] == Position(RA, None)  # stopped right after the offending push
    assert r2.positions[CA].path == (8,)


def test_drive_stops_at_targets_and_reports_deadlock() -> None:
    p = producer_consumer(k=3)
    # Both engines stopped at their k=1 ops: not a deadlock (both could move).
    r = drive(p, None, {RA: Position(RA, (0, 1), (("k", 1),)), CA: Position(CA, (0, 0), (("k", 1),))})
    assert (r.reached, r.status) == (True, "stopped")
    assert r.pushed == {0: 2}
    assert r.popped == {0: 2}
    # The real deadlock of the over-waiting consumer replays.
    r2 = drive(producer_consumer(extra_wait=1), None, {CA: Position(CA, (1,)), RA: Position(RA, None)})
    assert (r2.reached, r2.status) == (True, "deadlock")
    # A target that does not exist (iteration 5 of a 3-trip loop) is not reached and never passed.
    r3 = drive(p, None, {RA: Position(RA, (0, 0), (("k", 5),))})
    assert (r3.reached, r3.unreached, r3.status) == (False, (RA,), "stopped")
    assert r3.positions[RA] == Position(RA, (0, 1), (("k", 2),))  # its next step would end the program
    with pytest.raises(KeyError):
        drive(p, None, {"(9,9).reader": Position("(9,9).reader", None)})


def test_replay_checks_each_transition() -> None:
    p = producer_consumer(k=1)
    r = replay(p, None, [Transition("step", 0), Transition("step", 0), Transition("step", 1)])
    assert (r.status, r.positions[CA].path) == ("stopped", (0, 1))
    with pytest.raises(ValueError, match=r"transition 0 .*\(0,0\).compute cannot step: waits for b0"):
        replay(p, None, [Transition("step", 1)])


def test_result_text_and_json() -> None:
    r = simulate(producer_consumer(extra_wait=1))
    assert r.text() == ("t: deadlock after 32 steps\nstuck:\n"
                        "  (0,0).compute at ops[1] wait(b0, 1): waits for b0: pushed-popped=16-16=0 < 1")
    j = r.to_json()
    assert j["status"] == "deadlock"
    assert j["stuck"] == [{"position": {"engine": CA, "path": [1], "iteration": [], "op": "wait(b0, 1)"},
                           "reason": "waits for b0: pushed-popped=16-16=0 < 1"}]
    assert j["buffers"] == [{"id": 0, "pushed": 16, "popped": 16}]


IN = Tensor("in", (32, 256), "bf16", Role.INPUT)  # 8 tiles


def test_data_ops_stay_inside_their_reservation_and_wait() -> None:
    """Writes land in the reserved back (reference §1.1: get_write_ptr is valid between reserve and push), reads
    come from the waited front (get_read_ptr between wait and pop)."""
    p = prog(ep(A, Engine.READER, Reserve(0, 1), ReadTiles("in", Addr(0), 1, 0), ReadTiles("in", Addr(1), 1, 0),
                ReadBarrier(), Push(0, 1)),
             ep(A, Engine.WRITER, WriteTiles(0, "out", Addr(0), 1), Wait(0, 1), WriteBarrier(), Pop(0, 1)),
             buffers=(buf(0),), tensors=(IN, Tensor("out", (32, 32), "bf16", Role.OUTPUT)))
    r = simulate(p)
    assert sorted(where(v) for v in r.violations) == [("cb-read-unwaited", "(0,0).writer", (0,), ()),
                                                      ("cb-write-unreserved", RA, (2,), ())]
    (v,) = [v for v in r.violations if v.rule == "cb-write-unreserved"]
    assert v.message == ("read_tiles(in, 1, b0) writes tiles [1, 2) past the write pointer of b0, but its reserved "
                         "window holds 1 tiles")
