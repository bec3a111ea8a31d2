"""Where an op came from in the user's source: a front end (TT-Lang, tt-metal C++) records the file and line of the
statement each op was read from, so a counterexample points at the line the engineer wrote (DESIGN §12).

Source locations are a side table of an ``EngineProgram`` keyed by op path (the op's index in its list, then in each
enclosing loop's body); they take no part in an op's value, its equality or a proof-cache key: two programs that
differ only in where their ops came from are the same program to the checker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import attrs

#: An op path: the op's index in its engine's list, then the index in each enclosing loop's or if's body.
OpPath = tuple[int, ...]


@attrs.frozen
class LoopIndex:
    """How a loop's C++ index follows the program's loop index ``k`` (0, 1, ...): ``name`` (the C++ variable) is
    ``const + sum(coef * outer loop index) + trip_coef * trip + step * k`` (``for (i = start_id; ...; i += 2)`` with
    ``start_id`` 8: const 8, step 2). ``loops``: (program loop variable, coef) of the enclosing loops; ``trip``:
    (trip name, coef) or None."""

    name: str
    step: int
    const: int = 0
    loops: tuple[tuple[str, int], ...] = ()
    trip: tuple[str, int] | None = None

    def value(self, k: int, env: dict[str, int], trips: dict[str, int]) -> int | None:
        """The C++ index at program loop index ``k``, enclosing indices ``env`` and trip values ``trips``; None when
        one it needs is not given."""
        total = self.const + self.step * k
        for v, c in self.loops:
            if v not in env:
                return None
            total += c * env[v]
        if self.trip is not None:
            if self.trip[0] not in trips:
                return None
            total += self.trip[1] * trips[self.trip[0]]
        return total


@attrs.frozen
class SourceLoc:
    """One statement of the user's source. ``file`` as the front end was given it (a repository-relative path where
    it can be); ``line`` and ``column`` 1-based (``column`` 0: unknown); ``text`` the statement, cut to one line.
    ``str`` is ``file:line:column: text``, without ``called_at``."""

    file: str
    line: int
    column: int = 0
    text: str = ""
    #: for a statement of a helper the kernel includes (a function of the op's header inlined at its call), where
    #: the kernel calls it: the outermost call, in the kernel's own file; None for a statement of the kernel's file
    called_at: SourceLoc | None = None
    #: of a loop whose C++ index is not the program's loop index (another name, start or step): how it follows it
    index: LoopIndex | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" + (f":{self.column}" if self.column else "")
        return f"{where}: {self.text}" if self.text else where


def iteration_words(iteration: Mapping[str, int]) -> str:
    """A program loop iteration as a message names it, ``loop iteration r=1 k=0`` (outer loops first): the program's
    loop indices, which a front end names after the source's loop variables but counts from 0 by 1 — not the C++
    variable's value (``report.sources.with_sources`` puts that beside it). "" for an op in no loop."""
    return ("loop iteration " + " ".join(f"{k}={v}" for k, v in iteration.items())) if iteration else ""


#: An engine program's source table: (op path, location) pairs, in program order.
Sources = tuple[tuple[OpPath, SourceLoc], ...]


def shifted(sources: Sources, offset: int) -> Sources:
    """``sources`` of an op list placed ``offset`` top-level ops later in a longer list (``compose``)."""
    if not offset:
        return sources
    return tuple(((p[0] + offset, *p[1:]), loc) for p, loc in sources)


def sliced(sources: Sources, lo: int, hi: int) -> Sources:
    """The entries of top-level ops ``lo <= i < hi``, renumbered from 0 (a compositional slice)."""
    return tuple(((p[0] - lo, *p[1:]), loc) for p, loc in sources if lo <= p[0] < hi)


def merged(parts: Iterable[Sources]) -> Sources:
    """One table of several disjoint ones, in path order."""
    return tuple(sorted((e for part in parts for e in part), key=lambda e: e[0]))


def relocated(sources: Sources, file: Callable[[str], str]) -> Sources:
    """``sources`` with every location's file (a helper's call site's too) renamed by ``file``."""

    def moved(loc: SourceLoc) -> SourceLoc:
        call = moved(loc.called_at) if loc.called_at is not None else None
        return attrs.evolve(loc, file=file(loc.file), called_at=call)

    return tuple((p, moved(loc)) for p, loc in sources)
