"""A ``SemSet`` whose value is affine in enclosing loop indices (issue 16 item 6: a word carrying several values).

The vendor form is argmax's reduce_all start handshake (ttnn 0.81.1
``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp``): the reduce core sets its word to the
iteration number, ``start_sem.set(k + 1)`` (line 394), multicasts it to every core including itself
(``set_multicast<MCAST_INCL_SRC>``, line 398) and every core waits for it, ``start_sem.wait_min(k + 1)`` (line
417) — an exact ``wait(k + 1)`` before tt-metal #50314's fix, which hangs a worker the reduce core laps. The format
says the value (``SemSet.terms``), the interpreter, the P/T net and the Promela model run it, and the checker decides
it by the ``sequence`` protocol (docs/checker.md, "Semaphore protocols"; tests/test_sem_sequence.py): the exact form
is refuted (the copy of ``k + 2`` overshoots the worker's wait, and the replayed deadlock), the fixed form proves.
"""

from __future__ import annotations

import json

import attrs
import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Engine,
    EngineProgram,
    Group,
    Guard,
    If,
    Loop,
    McastSetValid,
    Program,
    Semaphore,
    SemSet,
    SemWait,
    Site,
    Term,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.serialize import dumps, loads, program_to_dict, schema
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.promela import to_promela
from verispatial.petri.ptnet import net_of

A, B = Site(0, 0), Site(1, 0)
K = Term("k", 1)


def argmax(cond: WaitCond = WaitCond.GE, k: int = 3) -> Program:
    """The start handshake of argmax's reduce_all path on two cores: the reduce core (0,0) sets its word to
    ``k + 1`` and, from the second iteration, multicasts it to both cores (loopback) and waits for the write; both
    wait for ``k + 1`` from the second iteration (the first needs no start)."""
    red = EngineProgram(A, Engine.READER, (Loop("k", k, (
        SemSet(0, 1, (K,)),
        If("k", Guard.NOT_FIRST, (McastSetValid(0, 0, 2), WriteBarrier())),
        If("k", Guard.NOT_FIRST, (SemWait(0, cond, 1, (K,)),)),
    )),))
    wrk = EngineProgram(B, Engine.READER, (Loop("k", k, (
        If("k", Guard.NOT_FIRST, (SemWait(0, cond, 1, (K,)),)),
    )),))
    return Program("argmax_start", WORMHOLE, semaphores=(Semaphore(0, "start", (A, B), 0, host_init=True),),
                   groups=(Group(0, A, (0, 0, 1, 0), loopback=True),), programs=(red, wrk))


def _one_set(value: int, *terms: Term, count: int = 3) -> Program:
    return Program("set", WORMHOLE, semaphores=(Semaphore(0, "s", (A,), 0),),
                   programs=(EngineProgram(A, Engine.READER, (Loop("k", count, (SemSet(0, value, terms),)),)),))


# ---------------------------------------------------------------------------------------------------- the format


def test_terms_are_written_only_when_there_are_any() -> None:
    plain = _one_set(1)
    (op,) = program_to_dict(plain)["programs"][0]["ops"][0]["body"]
    assert op == {"op": "sem_set", "sem": 0, "value": 1}  # documents from before the field keep their bytes
    grown = _one_set(1, K)
    (op,) = program_to_dict(grown)["programs"][0]["ops"][0]["body"]
    assert op == {"op": "sem_set", "sem": 0, "value": 1, "terms": [{"var": "k", "coef": 1}]}
    assert loads(dumps(grown)) == grown
    assert loads(dumps(plain)) == plain
    # The schema says the field.
    assert "terms" in schema()["$defs"]["op_sem_set"]["properties"]


def test_an_older_document_without_terms_loads_with_none() -> None:
    d = program_to_dict(_one_set(2))
    p = loads(json.dumps(d))
    (loop,) = p.programs[0].ops
    assert isinstance(loop, Loop)
    assert loop.body == (SemSet(0, 2),)
    assert loop.body[0].terms == ()  # type: ignore[union-attr]


def test_value_at_reads_the_loop_indices() -> None:
    assert SemSet(0, 1, (K, Term("j", 2))).value_at({"k": 3, "j": 1}) == 6
    assert SemSet(0, 4).value_at({}) == 4


def test_validate_names_a_term_outside_the_enclosing_loops_and_values_out_of_range() -> None:
    assert validate(_one_set(1, K)) == []
    bad = [str(v) for v in validate(_one_set(1, Term("j", 1)))]
    assert any("value uses 'j', which is not an enclosing loop variable" in v for v in bad), bad
    negative = [str(v) for v in validate(_one_set(1, Term("k", -1)))]  # k = 2 stores -1
    assert any("value -1 is negative in some iteration" in v for v in negative), negative
    big = [str(v) for v in validate(_one_set(1, Term("k", 2**31), count=3))]  # k = 2 stores 2**32 + 1
    assert any("exceeds the 32-bit word" in v for v in big), big


# -------------------------------------------------------------------------------- the interpreter and the checker


def test_the_interpreter_stores_each_iterations_value() -> None:
    assert explore(argmax(WaitCond.GE)).verdict != "deadlock"
    # Exact waits: the reduce core laps the worker (its word reads 3 while it waits for == 2).
    assert explore(argmax(WaitCond.EQ)).verdict == "deadlock"


def test_the_exact_wait_is_refuted_by_a_replayed_deadlock() -> None:
    r = certify(argmax(WaitCond.EQ))
    (dl,) = [x for x in r.results if x.family == "deadlock" and x.verdict is Verdict.REFUTED]
    assert dl.counterexample is not None
    assert dl.counterexample["replayed_by"]
    (stuck,) = dl.counterexample["stuck"]
    assert stuck["position"]["engine"] == "(1,0).reader"
    assert stuck["position"]["op"] == "sem_wait(sem0, eq, 1+1*k)"


def test_the_fixed_wait_is_decided_as_a_sequence() -> None:
    """The start words follow the sequence protocol. Without a reset after the loop the worker's word ends at 3:
    on tt-metal's semaphores (``host_init``) the host writes 0 there at the next launch, so that is proved; on words
    nothing re-initializes it is ``balance-sem``, refuted and replayed, as the explorer finds. A reset copied to the
    worker with nothing holding it back until the worker's last wait (argmax's ``done`` handshake, lines 520-526) can
    land first and hang it (a replayed deadlock). The vendor form with both proves (tests/test_vendor_examples.py)."""
    p = argmax(WaitCond.GE)
    r = certify(p)
    assert [x.name for x in r.results if x.verdict is not Verdict.PROVED] == []
    assert explore(p).violations == ()
    plain = attrs.evolve(p, semaphores=tuple(attrs.evolve(s, host_init=False) for s in p.semaphores))
    assert [x.name for x in certify(plain).results if x.verdict is not Verdict.PROVED] == ["balance-sem:sem0@(1,0)"]
    assert [v.violation.rule for v in explore(plain).violations] == ["balance-sem"]
    reasons = {x.name: x.reason for x in r.results}
    assert reasons["sem-exact:sem0@(0,0)"].startswith("sequence protocol of sem0@(0,0)")
    assert reasons["sem-exact:sem0@(1,0)"].startswith("sequence protocol of sem0@(1,0)")
    red, wrk = p.programs
    reset = attrs.evolve(p, programs=(attrs.evolve(red, ops=(
        *red.ops, SemSet(0, 0), McastSetValid(0, 0, 2), WriteBarrier())), wrk))
    r = certify(reset)
    assert [x.name for x in r.results if x.verdict is Verdict.REFUTED] == ["deadlock:(0,0).reader+1"]
    assert explore(reset).verdict == "deadlock"


def test_a_word_set_to_values_that_fall_is_named() -> None:
    """A set whose value does not rise with the loop is outside the sequence protocol: named, never proved."""
    falling = _one_set(5, Term("k", -1))
    r = certify(Program("set", WORMHOLE, semaphores=falling.semaphores, programs=(EngineProgram(A, Engine.READER, (
        Loop("k", 3, (SemSet(0, 5, (Term("k", -1),)), SemWait(0, WaitCond.GE, 3))),)),)))
    failed = {x.name: x.reason for x in r.results if x.verdict is Verdict.FAILED}
    assert "a value that falls as a loop index grows" in failed["sem-protocol:sem0@(0,0)"], failed


# ------------------------------------------------------------------------------------ the P/T net and Promela


@pytest.mark.parametrize("cond", [WaitCond.GE, WaitCond.EQ])
def test_the_net_stores_each_occurrences_value(cond: WaitCond) -> None:
    from test_net_exports import dead_markings, read_pnml

    from verispatial.petri.pnml import to_pnml

    p = argmax(cond)
    deadlock, complete, _n = dead_markings(read_pnml(to_pnml(p)), 100_000)
    assert complete
    assert deadlock == (explore(p).verdict == "deadlock")
    # The word's bound is the largest value set (k = 2 stores 3).
    sets = [t for t in net_of(p).transitions if "sem_set" in t.label]
    assert len(sets) == 3 * 4  # three occurrences, one transition per value 0..3 the word may hold


def test_promela_sets_the_iterations_value() -> None:
    m = to_promela(argmax(WaitCond.EQ))
    assert any("words[0] = (1 + 1*" in ln for ln in m.splitlines()), m
