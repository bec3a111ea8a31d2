"""Verdicts and reports: what the checker says about each obligation (DESIGN §7, after Alive2)."""

from __future__ import annotations

import enum
from typing import Any

import attrs


class Verdict(str, enum.Enum):
    """``proved`` only from unsat (or an exhaustive finite check); ``refuted`` only with a counterexample the
    interpreter replayed; ``failed-to-prove`` for unknown, timeout, resource limit or a fragment the checker
    cannot decide (never accepted, never called refuted); ``error`` for a checker fault."""

    PROVED = "proved"
    REFUTED = "refuted"
    FAILED = "failed-to-prove"
    ERROR = "error"


#: Obligation families, in report order.
FAMILIES = (
    "structure",
    "circular-buffer",
    "semaphore",
    "async-noc",
    "accumulator",
    "bounds",
    "memory",
    "happens-before",
    "deadlock",
    "balance",
)


@attrs.frozen
class Result:
    """The outcome of one obligation.

    ``family`` is one of ``FAMILIES``; ``name`` identifies the obligation (stable across runs, it is the
    certificate's key); ``reason`` says why it exists or why it failed; ``counterexample`` is a JSON-able
    dict for refutations (its ``kind`` says how to read it); ``seconds`` is wall time spent on it.
    """

    family: str
    name: str
    verdict: Verdict
    reason: str = ""
    counterexample: dict[str, Any] | None = None
    seconds: float = 0.0


@attrs.frozen
class Report:
    """Every obligation's result for one program."""

    program: str
    target: str
    results: tuple[Result, ...]
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 all proved, 1 something refuted, 3 something failed to prove, 4 a checker error (DESIGN §8).

        A refutation outranks a failure to prove, which outranks an error only when no refutation exists.
        """
        vs = {r.verdict for r in self.results}
        if Verdict.REFUTED in vs:
            return 1
        if Verdict.ERROR in vs:
            return 4
        if Verdict.FAILED in vs:
            return 3
        return 0

    def by_family(self) -> dict[str, list[Result]]:
        out: dict[str, list[Result]] = {f: [] for f in FAMILIES}
        for r in self.results:
            out.setdefault(r.family, []).append(r)
        return {k: v for k, v in out.items() if v}

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "target": self.target,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "results": [
                {
                    "family": r.family,
                    "name": r.name,
                    "verdict": r.verdict.value,
                    "reason": r.reason,
                    "counterexample": r.counterexample,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.results
            ],
        }
