"""The per-engine abstract state of ``certify/rules.py`` and what its families' handlers share.

A state is a set of may-facts (tuples; docs of ``certify/rules.py`` list them). ``EngineRun`` is the narrow object a
family's per-engine handler (``families/<family>/encoding.py``) receives: the program's tables it reads, the findings
it notes (``flag``) and the checks several families share (source reuse).
A handler ``(run, op, path, state) -> state`` must be a function of its arguments whose side effects are the same
however often it is called with them (``run_paths`` memoises loop bodies)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from verispatial import budget
from verispatial.certify.structure import EngineView
from verispatial.ir import rules as R
from verispatial.ir.core import Guard
from verispatial.ir.obligation import SubjectRef
from verispatial.ir.ops import If, Loop, Op, TripCount, count_trip, count_value
from verispatial.ir.program import IndexKey, Program, walk
from verispatial.ir.rules import PER_ENGINE_RULES

#: rule -> obligation family, of the rules this abstract interpretation decides (from the rule registry).
RULE_FAMILY = PER_ENGINE_RULES

State = frozenset[tuple[object, ...]]

#: A ``Finding.sources`` entry for a reuse no query discharges: a read issued before the multicast it rewrites.
LATE = -1


@attrs.frozen
class Finding:
    """A possible violation of ``rule`` at ``path`` of engine ``engine`` (path None: at the engine's end).

    ``sources``: for ``async-source-reuse``, the leaf indices of this engine's writes or multicasts whose source
    may not have left when the op at ``path`` runs (the reuse query, ``families/noc/encoding.py`` ``discharge``, may
    discharge them); ``LATE`` when the op is a read whose landing may rewrite a multicast issued after it (never
    discharged).

    ``at``: where else the interpreter may show the same violation — a conflict between engines (two engines owning
    one end of a buffer) is reported at whichever of them the run reaches second — each an ``(engine, path)``, all
    about ``subject``; empty: only at ``engine`` and ``path``."""

    rule: str
    engine: str
    path: tuple[int, ...] | None
    message: str
    sources: tuple[int, ...] = ()
    at: tuple[tuple[str, tuple[int, ...]], ...] = ()
    subject: SubjectRef | None = None

    @property
    def family(self) -> str:
        return RULE_FAMILY.get(self.rule, "structure")


def map_facts(s: State, tag: str, b: int, f: Callable[[int, int], tuple[int, int]]) -> State:
    """Apply ``f(pages, tiles) -> (pages, tiles)`` to the ``tag`` facts of buffer ``b``."""
    return frozenset((tag, b, *f(int(t[2]), int(t[3]))) if t[0] == tag and t[1] == b else t  # type: ignore[call-overload]
                     for t in s)


def pairs(s: State, tag: str, b: int) -> list[tuple[int, int]]:
    """The ``(pages, tiles)`` of the ``tag`` facts of buffer ``b``."""
    return [(int(t[2]), int(t[3])) for t in s if t[0] == tag and t[1] == b]  # type: ignore[call-overload]


def shift(s: State, tag: str, b: int, n: int, cap: int) -> State:
    """Move the source slots of ``b`` (tag ``sb``/``sf``) as the pointer they are relative to advances ``n`` pages."""
    return frozenset((tag, b, (int(t[2]) - n) % cap, t[3]) if t[0] == tag and t[1] == b else t  # type: ignore[call-overload]
                     for t in s)


def tile_pages(start: int, tiles: int, pt: int) -> range:
    """Pages (relative) holding tiles ``[start, start + tiles)`` of a ``pt``-tile page."""
    return range(start // pt, (start + tiles - 1) // pt + 1) if tiles > 0 else range(0)


@attrs.frozen
class EngineFacts:
    """What the abstract interpretation of one engine found.

    ``findings``: candidate violations. ``written``: for each leaf writing into a buffer's back (ReadTiles,
    RemoteRead, FillTiles, CopyTiles, PackAcc; by path), the page offsets (relative to the write pointer, in pages)
    it may write. ``reserve_from``: for each Reserve leaf, the least window size (pages) held before it, so its new
    pages are ``[from, pages)`` past the write pointer. ``inside_read`` / ``inside_written``: for each WriteTiles or
    CopyTiles leaf the page offsets (relative to the read pointer) its tiles may come from, for each write into a
    back those it may write (relative to the write pointer), each only where the access is inside its window (one
    past it is ``cb-read-unwaited`` / ``cb-write-unreserved``'s): what ``cb-straddle`` asks of accesses."""

    findings: tuple[Finding, ...]
    written: dict[tuple[int, ...], frozenset[int]]
    reserve_from: dict[tuple[int, ...], int]
    inside_read: dict[tuple[int, ...], frozenset[int]] = attrs.Factory(dict)
    inside_written: dict[tuple[int, ...], frozenset[int]] = attrs.Factory(dict)


@attrs.define
class EngineRun:
    """One engine's abstract interpretation in progress: the tables its handlers read and what they record.

    ``data``: buffers whose pushes must publish written pages; ``dests``: multicast destinations; ``caps``: capacity
    per buffer; ``most``: the most pages a window of each buffer can hold (the saturation bound of the tile counts);
    ``leaf_at``: leaf index per path. Recorded: ``found`` (one finding per rule and path), ``written`` (the pages
    each write into a back may write), ``reserve_from`` (the least window before each Reserve), ``inside_read`` /
    ``inside_written`` (the pages each access inside its window may touch past its pointer), ``reached``."""

    p: Program
    view: EngineView
    data: frozenset[int]
    dests: set[int]
    index_bufs: dict[IndexKey, int]
    phases: list[int]
    caps: dict[int, int]
    most: dict[int, int]
    leaf_at: dict[tuple[int, ...], int]
    found: dict[tuple[str, tuple[int, ...] | None], Finding] = attrs.Factory(dict)
    written: dict[tuple[int, ...], set[int]] = attrs.Factory(dict)
    reserve_from: dict[tuple[int, ...], int] = attrs.Factory(dict)
    inside_read: dict[tuple[int, ...], set[int]] = attrs.Factory(dict)
    inside_written: dict[tuple[int, ...], set[int]] = attrs.Factory(dict)
    reached: set[tuple[int, ...]] = attrs.Factory(set)

    def flag(self, rule: str, path: tuple[int, ...] | None, msg: str, sources: tuple[int, ...] = ()) -> None:
        """Note a candidate violation of ``rule`` at ``path`` (the first message per rule and path; sources merge)."""
        old = self.found.get((rule, path))
        if old is None:
            self.found[(rule, path)] = Finding(rule, self.view.key, path, msg, tuple(sorted(set(sources))))
        elif sources:
            self.found[(rule, path)] = attrs.evolve(old, sources=tuple(sorted(set(old.sources) | set(sources))))

    def reuse(self, s: State, tag: str, b: int, slots: set[int], path: tuple[int, ...], what: str) -> None:
        """``async-source-reuse``: ``slots`` of ``b`` (relative to the pointer of ``tag``) are the source of a write
        or multicast of this engine that may not have left."""
        hit = sorted({int(t[3]) for t in s if t[0] == tag and t[1] == b and int(t[2]) in slots})  # type: ignore[call-overload]
        if hit:
            self.flag(R.ASYNC_SOURCE_REUSE, path, f"{what} b{b} pages that a write or multicast issued from them may "
                                                  "not have left (no flush/write_barrier since)", tuple(hit))




#: Constant loops up to this count are iterated exactly; longer ones (and trip loops) run to a fixpoint.
EXACT_LOOP = 256


#: What is known of an enclosing loop's current iteration: (is it the first, is it the last); None: unknown.
Phase = tuple[bool | None, bool | None]


def _admits(when: Guard, phase: Phase) -> bool | None:
    """Whether an ``If`` with guard ``when`` runs in an iteration of the known ``phase`` (None: either)."""
    first, last = phase
    if when is Guard.FIRST:
        return first
    if when is Guard.LAST:
        return last
    if when is Guard.NOT_FIRST:
        return None if first is None else not first
    return None if last is None else not last


def _counts(count: int | str | TripCount, trip_max: dict[str, int] | None) -> tuple[bool, bool, bool]:
    """Whether a loop of ``count`` may run 0 times, exactly once, at least twice (over every trip value; every
    case is possible for a trip whose maximum is unknown)."""
    if isinstance(count, int):
        return count == 0, count == 1, count >= 2
    name = count_trip(count)
    if trip_max is None or name not in trip_max:
        return True, True, True
    lo, hi = count_value(count, {name: 0}), count_value(count, {name: trip_max[name]})
    return lo == 0, lo <= 1 <= hi, hi >= 2


def run_paths(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State,
         step: Callable[[Op, tuple[int, ...], State], State], trip_max: dict[str, int] | None = None,
         env: dict[str, Phase] | None = None) -> State:
    """Every path of ``ops`` from state ``s``. An ``If`` runs when the iteration of its loop that is known
    (first / middle / last: loops are run in those classes) admits it, and may run or not when unknown. A loop
    runs 0 times, once (first and last), or a first iteration, any number of middle ones and a last one, as its
    count allows (``trip_max``: each trip's maximum); a constant loop up to ``EXACT_LOOP`` iterations is
    iterated exactly.

    ``step(op, path, state)`` must be a function of its arguments whose side effects (findings noted) are the same
    however often it is called with them: a loop body run again from a state it was already run from, in the same
    class of the iterations its ``If``s read, is not run again (its result is remembered). Without that, 32 nested
    two-iteration loops ran their innermost body 2**32 times; with it each body runs once per distinct state. The
    run checks the budget (``budget.check``) at every loop iteration."""
    memo: dict[tuple[object, ...], State] = {}
    guards: dict[tuple[int, ...], tuple[str, ...]] = {}

    def guarded(loop: Loop, path: tuple[int, ...]) -> tuple[str, ...]:
        """The loop variables the ``If``s inside ``loop``'s body read: the only part of ``env`` the body sees."""
        got = guards.get(path)
        if got is None:
            got = guards[path] = tuple(sorted({op.var for op in walk(loop.body) if isinstance(op, If)}))
        return got

    def run(ops: tuple[Op, ...], prefix: tuple[int, ...], s: State, env: dict[str, Phase]) -> State:
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if isinstance(op, If):
                runs = _admits(op.when, env.get(op.var, (None, None)))
                if runs is True:
                    s = run(op.body, path, s, env)
                elif runs is None:
                    s = s | run(op.body, path, s, env)
                continue
            if isinstance(op, Loop):
                reads = guarded(op, path)

                def body(x: State, first: bool, last: bool, op: Loop = op, path: tuple[int, ...] = path,
                         reads: tuple[str, ...] = reads) -> State:
                    inner = {**env, op.var: (first, last)}
                    key = (path, x, *(inner.get(v, (None, None)) for v in reads))
                    got = memo.get(key)
                    if got is None:
                        budget.check()
                        got = memo[key] = run(op.body, path, x, inner)
                    return got

                if op.count == 0:
                    continue
                if isinstance(op.count, int) and op.count <= EXACT_LOOP:
                    # A constant loop runs its body exactly count times: iterate (stopping the middle iterations
                    # early once the state is stable), so counts that depend on the trip number (tiles written into
                    # a reservation) stay exact.
                    n = op.count
                    s = body(s, True, n == 1)
                    for _ in range(n - 2):
                        nxt = body(s, False, False)
                        if nxt == s:
                            break
                        s = nxt
                    if n >= 2:
                        s = body(s, False, True)
                    continue
                zero, one, many = _counts(op.count, trip_max)
                out: State = s if zero else frozenset()
                if one:
                    out = out | body(s, True, True)
                if many:
                    acc = body(s, True, False)
                    while True:
                        nxt = acc | body(acc, False, False)
                        if nxt == acc:
                            break
                        acc = nxt
                    out = out | body(acc, False, True)
                s = out
            else:
                s = step(op, path, s)
        return s

    return run(ops, prefix, s, env or {})
