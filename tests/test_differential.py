"""DIFFERENTIAL: the Z3 checker's verdict against the explicit-state oracle's on random small programs.

Each program drawn by ``tests/strategies.py`` is explored exhaustively (every interleaving, every trip value)
by ``verispatial.petri.explore`` and certified by ``verispatial.certify.checker``. Programs the explorer cannot
finish within its state budget are skipped. What must hold (``check_agreement``):

1. Soundness: when the oracle reaches a deadlock or a rule violation, the checker's exit code is not 0; and for
   every rule the oracle breaks, the checker does not prove every obligation of that rule's family.
2. Refutations are real: when the checker refutes something (exit code 1), the oracle's verdict is not ``ok``.
3. Deadlock agreement: a refuted ``deadlock`` obligation means the oracle reaches a deadlock (when its search
   was complete: a search cut short after finding a violation may not have reached the deadlocking trip values);
   and when the oracle reaches a deadlock, the checker does not prove every ``deadlock`` obligation (each claims
   that no interleaving deadlocks, whatever else the program breaks).

The number of programs comes from the Hypothesis profile (``tests/conftest.py``): 500 by default.
"""

from __future__ import annotations

from hypothesis import assume, given
from strategies import programs

from verispatial.certify.checker import certify
from verispatial.certify.report import Report, Verdict
from verispatial.certify.rules import RULE_FAMILY as CHECKER_RULE_FAMILY
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.petri.explore import ExploreResult, explore

#: States the oracle may visit per program (over all trip assignments); past that the program is skipped.
MAX_STATES = 20_000

#: The checker's obligation family that answers for each rule the interpreter reports (the per-engine rules'
#: families come from the checker's own table, so a rule added there is covered here too).
RULE_FAMILY = dict(CHECKER_RULE_FAMILY) | {
    "cb-capacity": "circular-buffer",
    "cb-single-producer": "circular-buffer",
    "cb-single-consumer": "circular-buffer",
    "cb-push-uncovered": "circular-buffer",
    "cb-pop-uncovered": "circular-buffer",
    "cb-straddle": "circular-buffer",
    "sem-overshoot": "semaphore",
    "sem-set-race": "semaphore",
    "async-read-publish": "async-noc",
    "async-flag-overtake": "async-noc",
    "async-source-reuse": "async-noc",
    "async-pending-at-end": "async-noc",
    "mcast-slot": "async-noc",
    "mcast-publish-early": "async-noc",
    "bounds": "bounds",
    "acc-capacity": "accumulator",
    "tensor-race": "happens-before",
    "rendezvous-early": "happens-before",
    "balance-cb": "balance",
    "balance-sem": "balance",
}


def disagreements(oracle: ExploreResult, report: Report) -> list[str]:
    """Every way ``report`` contradicts ``oracle`` (empty when they agree), one line each."""
    out: list[str] = []
    proved = {r.name: r for r in report.results if r.verdict == Verdict.PROVED}
    if oracle.verdict in ("deadlock", "violation") and report.exit_code == 0:
        out.append(f"oracle says {oracle.verdict} ({', '.join(oracle.rules()) or 'deadlock'}), checker proves all")
    for rule in oracle.rules():
        family = RULE_FAMILY.get(rule)
        if family is None:  # a rule with no family of its own is covered by the exit-code check above
            continue
        mine = [r for r in report.results if r.family == family]
        if mine and all(r.name in proved for r in mine):
            out.append(f"oracle breaks {rule}, checker proves every {family} obligation "
                       f"({', '.join(r.name for r in mine)})")
    if report.exit_code == 1 and oracle.verdict == "ok":
        refuted = [r.name for r in report.results if r.verdict == Verdict.REFUTED]
        out.append(f"checker refutes {', '.join(refuted)}, oracle finds every interleaving ok")
    dl = [r for r in report.results if r.family == "deadlock"]
    if oracle.deadlocks and dl and all(r.verdict == Verdict.PROVED for r in dl):
        out.append(f"oracle reaches a deadlock, checker proves every deadlock obligation ({', '.join(r.name for r in dl)})")
    for r in report.results:
        # A search cut short may not have reached the trip values that deadlock.
        if r.family == "deadlock" and r.verdict == Verdict.REFUTED and oracle.complete and not oracle.deadlocks:
            out.append(f"checker refutes {r.name} ({r.reason}), oracle reaches no deadlock")
    return out


def check_agreement(p: Program) -> list[str]:
    """Explore and certify ``p``; the disagreements (``assume`` skips a program the oracle cannot finish)."""
    oracle = explore(p, max_states=MAX_STATES)
    assume(oracle.verdict != "inconclusive")
    return disagreements(oracle, certify(p))


@given(programs())
def test_checker_agrees_with_the_oracle(p: Program) -> None:
    found = check_agreement(p)
    assert found == [], "\n".join([*found, dumps(p)])
