"""The interpreter's concrete runs before the wide exact-counting queries (``families/semaphores/encoding._witness``).

The shape of tt-metal #50312's sort after the fix (ttnn 0.81.1, ``coordinator_single_row_multi_core.cpp:204`` and
:222, ``reader_single_row_multi_core.cpp:72-74`` and :86-87): a coordinator multicasts a "go" flag (0) twice with
only a write barrier between, and the receiver, woken by the first, resets its word to VALID (1). The second flag
may land before that reset, which then overwrites it (a lost update, the interpreter's ``sem-set-race`` at the
reset), and the receiver waits for 0 forever. The fixed neighbour has the receiver acknowledge the first go before
the coordinator sends the second."""

from __future__ import annotations

from typing import Any

import pytest
from builders import EQ, RB, A, B, ep, prog, sem

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import AtomicBarrier, Engine, Group, McastSetValid, Program, SemInc, SemSet, SemWait, WriteBarrier
from verispatial.ir import rules as R
from verispatial.petri.explore import explore

GO, READY, DONE, ACK = 0, 1, 2, 3
VALID = 1


def go_twice(acknowledged: bool = False) -> Program:
    """The coordinator at A waits for B's ready, resets it, multicasts its go word (0, never written) onto B's, and
    after a write barrier multicasts it again for the first sub-stage, then waits for B's done; B sets its go word to
    VALID, announces ready, waits for go (== 0), resets to VALID, waits for the second go, resets, and announces
    done. ``acknowledged``: B acknowledges each go after its reset and the coordinator waits for that before the
    next multicast (the fix the notes propose)."""
    g = Group(0, A, (1, 0, 1, 0))
    ack_wait = [SemWait(ACK, EQ, 1), SemSet(ACK, 0)] if acknowledged else []
    ack = [SemInc(ACK, A, 1), AtomicBarrier()] if acknowledged else []
    coordinator = [SemWait(READY, EQ, 1), SemSet(READY, 0),
                   McastSetValid(GO, 0, 1), WriteBarrier(), *ack_wait,
                   McastSetValid(GO, 0, 1), WriteBarrier(), *ack_wait,
                   SemWait(DONE, EQ, 1), SemSet(DONE, 0)]
    receiver = [SemSet(GO, VALID), SemInc(READY, A, 1), AtomicBarrier(),
                SemWait(GO, EQ, 0), SemSet(GO, VALID), *ack,
                SemWait(GO, EQ, 0), SemSet(GO, VALID), *ack,
                SemInc(DONE, A, 1), AtomicBarrier()]
    sems = [sem(GO, A, B), sem(READY, A), sem(DONE, A)] + ([sem(ACK, A)] if acknowledged else [])
    return prog(ep(A, Engine.READER, *coordinator), ep(B, Engine.READER, *receiver),
                sems=tuple(s.__class__(s.id, s.name, s.sites, s.init, host_init=True) for s in sems), groups=(g,))


def test_the_second_go_wiped_by_the_reset_is_refuted_by_a_run() -> None:
    """The receiver's go word: ``sem-flag-early`` (a flag issued before the reset meant for it) refuted, its
    counterexample a run of the interpreter from the launch showing ``sem-set-race`` at the receiver's first reset
    after a wait (path [4]), on the word the flags land on."""
    p = go_twice()
    assert R.SEM_SET_RACE in explore(p).rules()
    got = {r.name: r for r in certify(p).results}
    r = got["sem-flag-early:sem0@(1,0)"]
    assert r.verdict is Verdict.REFUTED
    replay = r.counterexample["replay"]
    assert replay["violation"]["rule"] == R.SEM_SET_RACE
    assert (replay["violation"]["position"]["engine"], replay["violation"]["position"]["path"]) == (RB, [4])
    assert (r.counterexample["engine"], r.counterexample["path"]) == (RB, [4])  # where SARIF and explain point
    assert "replayed_by" in replay


def test_the_acknowledged_go_proves() -> None:
    """With the acknowledgement the second go is issued only after the receiver's reset: no run of the explorer
    loses it, and the go word's protocol proves (no witness is found, so the queries decide it)."""
    p = go_twice(acknowledged=True)
    assert explore(p).rules() == []
    got = {r.name: r for r in certify(p).results}
    assert got["sem-exact:sem0@(1,0)"].verdict is Verdict.PROVED
    assert not [n for n, r in got.items() if r.verdict is not Verdict.PROVED]


def go_relayed() -> Program:
    """``go_twice(acknowledged=True)`` with the acknowledgement relayed: B's reader increments a word of its own
    site after each reset, and B's writer waits for it, resets it and increments the coordinator's ACK. The go
    word's own engines (A's and B's readers) do not show the order, so its first queries are sat and the
    interpreter's runs are asked; none loses a go, and the wider scope with B's writer proves the word."""
    relay = 4
    p = go_twice(acknowledged=True)
    reader = tuple(SemInc(relay, B, 1) if isinstance(op, SemInc) and op.sem == ACK else op
                   for op in p.programs[1].ops)
    writer = [SemWait(relay, EQ, 1), SemSet(relay, 0), SemInc(ACK, A, 1), AtomicBarrier()] * 2
    s = sem(relay, B)
    return prog(p.programs[0], ep(B, Engine.READER, *reader), ep(B, Engine.WRITER, *writer),
                sems=(*p.semaphores, s.__class__(s.id, s.name, s.sites, s.init, host_init=True)), groups=p.groups)


def test_no_witness_leaves_the_proof_to_the_wider_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """The relayed acknowledgement: the interpreter's runs are asked for the go word (its narrow query is sat) and
    show nothing, and the word's protocol is proved by the scope that holds the relay — a witness that is not found
    changes nothing."""
    from verispatial.families.semaphores import encoding

    asked: list[str] = []
    witness = encoding._witness

    def counted(w: Any, *args: Any) -> Any:
        asked.append(w.name)
        return witness(w, *args)
    monkeypatch.setattr(encoding, "_witness", counted)
    p = go_relayed()
    assert explore(p).rules() == []
    got = {r.name: r for r in certify(p, cache=False).results}
    assert "sem0@(1,0)" in asked
    assert got["sem-exact:sem0@(1,0)"].verdict is Verdict.PROVED
    assert not [n for n, r in got.items() if r.verdict is not Verdict.PROVED]


def test_a_refutation_decided_before_the_budget_ran_out_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget runs out in exact counting after the go word was refuted (the next word's queries raise it, as the
    done word's did on #50312's sort under load): the report keeps that refutation, replayed, beside the stage's
    budget result, and proves nothing past it."""
    from verispatial.budget import BudgetExhausted
    from verispatial.families.semaphores import encoding

    exact_word = encoding._exact_word

    def spent_after_the_go_word(a: Any, w: Any, *args: Any) -> Any:
        if w.name != "sem0@(1,0)":
            raise BudgetExhausted(1.0)
        return exact_word(a, w, *args)
    monkeypatch.setattr(encoding, "_exact_word", spent_after_the_go_word)
    got = {r.name: r for r in certify(go_twice(), cache=False).results}
    assert got["sem-flag-early:sem0@(1,0)"].verdict is Verdict.REFUTED
    assert got["sem-flag-early:sem0@(1,0)"].counterexample["replay"]["violation"]["rule"] == R.SEM_SET_RACE
    assert got["budget:semaphore counting"].verdict is Verdict.FAILED
    assert "budget:deadlock" in got
    assert not [n for n in got if n.startswith(("deadlock:", "sem-exact:"))]
