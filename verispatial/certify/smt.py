"""Talking to Z3: one fresh context per query, a deterministic resource limit, named assertions.

Only ``unsat`` proves. ``sat`` yields a model to turn into a counterexample; ``unknown`` (resource limit,
incompleteness) is its own status with Z3's reason and is never a pass.

Why a fresh context, although one costs about 2 ms to create: what Z3 spends on a query (its ``rlimit`` count)
depends on the terms its context already holds, so in a shared context a query near its budget could answer
differently after other queries than alone (measured in docs/checker.md, "Z3 contexts"). A fresh context makes a
query's answer a function of the query. Obligations that exact arithmetic decides ask no query at all
(``shortcuts``).
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import itertools
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import z3

from verispatial import budget
from verispatial.certify import rlimits

#: Z3 takes SIGINT for itself inside its calls (a solver check, ``simplify``): it cancels the call, answers unknown
#: (or returns a term half simplified) and Python's handler never runs, so an interrupted run would go on, and
#: might print a verdict. With Z3's handling off the signal reaches Python's handler (``budget.sigint_guard``) as
#: soon as the call returns; each query is bounded by its ``rlimit`` and the run budget's timeout.
z3.set_param("ctrl_c", False)

#: z3py's argument assertions (``z3.z3.Z3_DEBUG``, which ``python -O`` turns off) re-check, on every term built, that
#: its arguments' sorts and contexts agree: Python-side reads (``Z3_get_sort``, ``Z3_is_eq_sort``, wrappers made and
#: dropped) that create no term, and a tenth of a cold ``certify`` of the 16-layer decode step (0.45-0.6 s of 4.5-5.3
#: s in-process). Off, every query is the same formula with the same term ids and answers alike, its resource count
#: included (benchmarks/README.md, "certify cold"); a sort mismatch is still refused by the C API (``Z3Exception``).
#: The tests turn them on again (tests/conftest.py), so a term mixing sorts or contexts fails there.
z3.z3.Z3_DEBUG = False

#: glibc ``mallopt`` parameters (malloc.h): ``M_TRIM_THRESHOLD`` and ``M_MMAP_THRESHOLD``.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Blocks up to this size come from the heap, and the heap keeps up to ``HEAP_KEEP`` bytes freed at its top.
MMAP_THRESHOLD, HEAP_KEEP = 32 << 20, 256 << 20


def keep_freed_memory() -> bool:
    """Let glibc's heap keep what a deleted Z3 context frees, so the next context reuses those pages; returns whether
    it could (glibc only; elsewhere nothing changes).

    Why: ``z3.Context()`` allocates a block of 8-16 MB and ``Z3_del_context`` frees it. glibc's thresholds are
    dynamic (``mallopt(3)``): depending on what the process freed before (merely which modules were imported, in
    which order), that block is mapped and unmapped with every context, so each fresh context touches about 4,000
    new pages (about 8 ms of CPU, most of it the kernel's page faults, where a context costs 0.7 ms when the pages
    are kept; measured 100 contexts after ``import verispatial.budget``: 417,000 minor faults against 8,500).
    Fixed thresholds (``MMAP_THRESHOLD``, ``HEAP_KEEP``) keep the block in the heap and the heap from being trimmed
    below it (a trim threshold of 64 MiB was not enough: the certify of the 16-layer decode step still faulted
    415,000 pages; with 256 MiB 68,000, system CPU 0.9 -> 0.2 s, peak RSS 259 -> 273 MB). It changes where memory
    comes from, never what any query is asked or answers: each query still gets its own fresh context (the module
    docstring)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, HEAP_KEEP))


keep_freed_memory()

#: Deterministic budget per query (Z3 ``rlimit`` units): ``rlimits.py``, which needs no solver to be read.
DEFAULT_RLIMIT = rlimits.DEFAULT_RLIMIT
#: Z3 version the proofs under proofs/ were produced with (pinned in pyproject.toml).
PINNED_Z3 = "5.4.1"


#: When set, every query is also written here as SMT-LIB2 (``export_smt2``), for re-checking by another solver.
_EXPORT_DIR: list[Path] = []
_EXPORTED = itertools.count()
#: Whether obligations may be decided by exact arithmetic where that is an exhaustive finite check (``shortcuts``).
_SHORTCUTS: list[bool] = [True]


def shortcuts() -> bool:
    """True unless inside ``reference_route``: a family may then prove an obligation by exact integer arithmetic
    on the program text where that arithmetic decides the very question its query asks (a tile range's hull over
    the box of loop indices, a concrete interval sweep, a ring's page multiples, constant totals). Such a check
    only ever *proves*; anything it does not prove is asked of Z3 exactly as before, so every refutation still
    comes from a model and every verdict is the one the query would give. While queries are exported
    (``export_smt2``) there are no shortcuts: every obligation then has its query for another solver to re-check."""
    return _SHORTCUTS[-1] and not _EXPORT_DIR


@contextlib.contextmanager
def reference_route() -> Iterator[None]:
    """Within the block every obligation is asked of Z3 (no arithmetic shortcut): the reference the shortcuts are
    tested and benchmarked against (``tests/test_shortcuts.py``, ``benchmarks/bench_sections.py``)."""
    _SHORTCUTS.append(False)
    try:
        yield
    finally:
        _SHORTCUTS.pop()


@contextlib.contextmanager
def export_smt2(directory: str | Path) -> Iterator[Path]:
    """Within the block, write each query as ``NNNNN-<name>.smt2`` under ``directory`` (created if needed)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    _EXPORT_DIR.append(d)
    try:
        yield d
    finally:
        _EXPORT_DIR.pop()


class Status(str, enum.Enum):
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@attrs.define
class Outcome:
    """What one query said: ``status``, a ``model`` when sat, Z3's ``reason`` when unknown, time taken."""

    status: Status
    model: z3.ModelRef | None
    reason: str
    seconds: float
    smt2: str = ""


class Query:
    """A fresh Z3 context and solver for one question. Build terms with ``self.ctx``."""

    def __init__(self, name: str, rlimit: int = DEFAULT_RLIMIT) -> None:
        self.name = name
        self.ctx = z3.Context()
        self.solver = z3.Solver(ctx=self.ctx)
        self.solver.set("rlimit", rlimit)
        self.rlimit = rlimit
        self._n = 0
        self._tags: list[z3.BoolRef] = []

    def int_var(self, name: str) -> z3.ArithRef:
        return z3.Int(name, self.ctx)

    def val(self, v: int) -> z3.ArithRef:
        return z3.IntVal(v, self.ctx)

    def true(self) -> z3.BoolRef:
        return z3.BoolVal(True, self.ctx)

    def false(self) -> z3.BoolRef:
        return z3.BoolVal(False, self.ctx)

    def add(self, fact: Any, label: str | None = None) -> None:
        """Assert ``fact``; a ``label`` names it (``assert_and_track``) so unsat cores say which it was."""
        if label is None:
            self.solver.add(fact)
        else:
            self._n += 1
            tag = z3.Bool(f"{label}#{self._n}", self.ctx)
            self._tags.append(tag)
            self.solver.assert_and_track(fact, tag)

    def smt2(self) -> str:
        """The query as an SMT-LIB2 script: every assertion, with each named one's label asserted true."""
        flat = z3.Solver(ctx=self.ctx)
        flat.add(*self.solver.assertions())
        flat.add(*self._tags)
        return str(flat.to_smt2())

    def check(self, keep_smt2: bool = False) -> Outcome:
        t0 = time.perf_counter()
        smt2 = self.smt2() if keep_smt2 or _EXPORT_DIR else ""
        exporting(self.name, self.rlimit, smt2)
        try:
            r = run_check(self.solver)
        except z3.Z3Exception as e:  # resource exhaustion surfaces as an exception in some builds
            return Outcome(Status.UNKNOWN, None, f"z3 exception: {e}", time.perf_counter() - t0, smt2)
        dt = time.perf_counter() - t0
        if r == z3.unsat:
            return Outcome(Status.UNSAT, None, "", dt, smt2)
        if r == z3.sat:
            return Outcome(Status.SAT, self.solver.model(), "", dt, smt2)
        return Outcome(Status.UNKNOWN, None, self.solver.reason_unknown() or "unknown", dt, smt2)


def run_check(solver: z3.Solver) -> z3.CheckSatResult:
    """``solver.check()`` within the run's budget (``verispatial.budget``): ``BudgetExhausted`` before a query once
    the budget is spent, and the time left as Z3's ``timeout`` (a query it cuts short answers unknown, never a
    pass). Should Z3 still take a SIGINT for itself (its ``ctrl_c`` handling is off, above) and answer unknown,
    "interrupted from keyboard", that answer raises ``budget.Interrupted`` here: an interrupted run stops instead of
    going on without the query (and perhaps printing a verdict)."""
    budget.check()
    left = budget.remaining()
    if left is not None:
        solver.set("timeout", max(1, int(left * 1000)))
    r = solver.check()
    if r == z3.unknown and "interrupted" in (solver.reason_unknown() or ""):
        budget.interrupt()
    return r


def is_exporting() -> bool:
    """Whether queries are being written (inside ``export_smt2``)."""
    return bool(_EXPORT_DIR)


def exporting(name: str, rlimit: int, smt2: str) -> bool:
    """Write ``smt2`` (one query: unsat means its obligation holds) as ``<pid>-NNNNN-<name>.smt2`` when inside
    ``export_smt2``; returns whether it did. Every solver call that can prove goes through here. The process id
    keeps apart the files of ``--jobs`` workers, whose counters ``NNNNN`` each start at 0."""
    if not _EXPORT_DIR:
        return False
    safe = re.sub(r"[^A-Za-z0-9_.@-]+", "_", name)[:80]
    (_EXPORT_DIR[-1] / f"{os.getpid()}-{next(_EXPORTED):05d}-{safe}.smt2").write_text(plain_smt2(name, rlimit, smt2))
    return True


def plain_smt2(name: str, rlimit: int, smt2: str) -> str:
    """``smt2`` (Z3's ``to_smt2`` of one query) as a plain SMT-LIB 2.6 script any solver reads (cvc5 included):
    ``(set-logic ALL)`` first (the queries mix linear integer arithmetic, uninterpreted Booleans and, for coverage,
    quantifiers), and Z3's resource limit only as a comment (``:rlimit`` is a Z3 option; a Z3 user re-checking with
    the checker's budget sets it, ``z3 rlimit=N FILE``). A ``(set-logic ...)`` Z3 may have written is dropped, so the
    script sets its logic once."""
    commands = [c for c in _standard(smt2) if not c.startswith("(set-logic ")]
    return (f"; verispatial obligation {name}: unsat means it holds\n"
            f"; z3 budget: rlimit {rlimit} (z3 rlimit={rlimit} FILE)\n"
            "(set-logic ALL)\n" + "\n".join(commands) + "\n")


_TOKEN = re.compile(r'\s+|;[^\n]*|\|[^|]*\||"(?:[^"]|"")*"|[()]|[^\s()|";]+')
#: Z3 prints an n-ary operator applied to one argument (``(+ x)``, ``(and p)``); SMT-LIB 2.6 requires two or more
#: (cvc5 refuses the script). Applied to one argument each is that argument.
_UNARY_IDENTITY = frozenset({"+", "*", "and", "or"})
#: Chainable predicates on one argument hold trivially.
_UNARY_TRUE = frozenset({"=", "distinct", "<", "<=", ">", ">="})


def _standard(smt2: str) -> list[str]:
    """The top-level commands of ``smt2`` rewritten to standard SMT-LIB 2.6 (``_UNARY_IDENTITY``, ``_UNARY_TRUE``),
    comments dropped, one command per line."""
    stack: list[list[str]] = [[]]
    for m in _TOKEN.finditer(smt2):
        tok = m.group()
        if tok[0].isspace() or tok[0] == ";":
            continue
        if tok == "(":
            stack.append([])
        elif tok == ")":
            items = stack.pop()
            if len(items) == 2 and items[0] in _UNARY_IDENTITY:
                stack[-1].append(items[1])
            elif len(items) == 2 and items[0] in _UNARY_TRUE:
                stack[-1].append("true")
            else:
                stack[-1].append("(" + " ".join(items) + ")")
        else:
            stack[-1].append(tok)
    return stack[0]


def any_of(ctx: z3.Context, terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
    """The disjunction of ``terms`` built in ``ctx``: False when there are none.

    Why not ``z3.Or(*terms)``: with no argument Z3 builds the empty disjunction in its global context, and using it
    with this query's terms raises ``Z3Exception: Context mismatch`` (a section whose trip has max 0 leaves such
    lists empty). Every disjunction over a list that may be empty goes through here."""
    ts = list(terms)
    return z3.Or(*ts) if ts else z3.BoolVal(False, ctx)


def all_of(ctx: z3.Context, terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
    """The conjunction of ``terms`` built in ``ctx``: True when there are none (why: ``any_of``)."""
    ts = list(terms)
    return z3.And(*ts) if ts else z3.BoolVal(True, ctx)


def model_int(m: z3.ModelRef, e: Any) -> int:
    """The integer value of ``e`` in ``m`` (model completion on: unconstrained terms get a value)."""
    return int(m.eval(e, model_completion=True).as_long())


def z3_version() -> str:
    return str(z3.get_version_string())
