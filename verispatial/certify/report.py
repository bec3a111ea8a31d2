"""Verdicts and reports: what the checker says about each obligation (DESIGN §7, after Alive2)."""

from __future__ import annotations

import enum
import itertools
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import attrs

from verispatial.ir import rules as R


class Verdict(str, enum.Enum):
    """``proved`` only from unsat (or an exhaustive finite check); ``refuted`` only with a counterexample the
    interpreter replayed; ``failed-to-prove`` for unknown, timeout, resource limit or a fragment the checker
    cannot decide (never accepted, never called refuted); ``error`` for a checker fault."""

    PROVED = "proved"
    REFUTED = "refuted"
    FAILED = "failed-to-prove"
    ERROR = "error"


_VERDICT = operator.attrgetter("verdict")

#: Obligation families, in report order (from the rule registry).
FAMILIES = R.FAMILIES


@attrs.frozen
class Result:
    """The outcome of one obligation.

    ``family`` is one of ``FAMILIES``; ``name`` identifies the obligation (stable across runs, it is the
    certificate's key); ``reason`` says why it exists or why it failed; ``counterexample`` is a JSON-able
    dict for refutations (its ``kind`` says how to read it); ``seconds`` is wall time spent on it.
    ``assumes`` names the obligations its proof leans on (e.g. a deadlock proof on the exact counting of the
    semaphore words it models): a proved result stays proved only while each of them is proved (``settle``).
    ``blocked_by`` names, for a ``failed-to-prove`` result, the assumptions (names as in ``assumes``; ``sem-exact:W``
    for a word whose exact counting did not prove) whose not being proved is why it failed: ``settle``'s downgrade,
    or a family that cannot decide without them (a deadlock component on an inexact word). ``unreplayed``: it failed
    because the interpreter did not reproduce its candidate counterexample. Neither changes a verdict; the report
    groups such a result under the refuted finding that explains it (``verispatial/report/consequences.py``).
    """

    family: str
    name: str
    verdict: Verdict
    reason: str = ""
    counterexample: dict[str, Any] | None = None
    seconds: float = 0.0
    assumes: tuple[str, ...] = ()
    blocked_by: tuple[str, ...] = ()
    unreplayed: bool = False


#: The slot setters of ``Result``'s fields, in field order (``plain_results``).
_SETTERS = tuple(getattr(Result, f.name).__set__ for f in attrs.fields(Result))


def plain_results(families: Iterable[str], names: Iterable[str], verdicts: Iterable[Verdict],
                  reasons: Iterable[str]) -> list[Result]:
    """``[Result(family, name, verdict, reason) for ...]`` of the four columns (equally long): results with no
    counterexample, seconds, assumptions or blocker, each equal to the one the constructor makes. Built through the
    fields' slots: a composed program's reused slices give hundreds of thousands of such results (377,074 in an
    80-layer step), and the frozen constructor's setting of nine fields one ``object.__setattr__`` call at a time is a
    third of what they cost. Raises ValueError when the columns are not equally long."""
    new = object.__new__
    fam, nam, ver, rea, cex, sec, asm, blk, unr = _SETTERS
    out: list[Result] = []
    add = out.append
    for family, name, verdict, reason in zip(families, names, verdicts, reasons, strict=True):
        r = new(Result)
        fam(r, family)
        nam(r, name)
        ver(r, verdict)
        rea(r, reason)
        cex(r, None)
        sec(r, 0.0)
        asm(r, ())
        blk(r, ())
        unr(r, False)
        add(r)
    return out


def timed_result(family: str, name: str, verdict: Verdict, reason: str, seconds: float) -> Result:
    """``Result(family, name, verdict, reason, seconds=seconds)``, built through the fields' slots as ``plain_results``
    builds its results: the cross-phase coverage of a composed program makes one per read of an activation an
    earlier phase writes (36,883 in an 80-layer step)."""
    fam, nam, ver, rea, cex, sec, asm, blk, unr = _SETTERS
    r = object.__new__(Result)
    fam(r, family)
    nam(r, name)
    ver(r, verdict)
    rea(r, reason)
    cex(r, None)
    sec(r, seconds)
    asm(r, ())
    blk(r, ())
    unr(r, False)
    return r


def settle(results: Sequence[Result]) -> Sequence[Result]:
    """Every verdict on its own (issue 7): a ``proved`` result one of whose ``assumes`` is not a proved obligation
    (refuted, failed to prove, an error, or no result of that name at all) becomes ``failed-to-prove``, its reason
    naming the assumption and its verdict, ``blocked_by`` the assumptions not proved; repeated until nothing
    changes, so a downgrade propagates along chains of assumptions. Mutual assumptions among proved results stay
    proved: each such group is one joint induction over time (the first state breaking any of them is reached by a
    history in which all held), as docs/checker.md argues for each. Order and every other field are kept; ``results``
    itself is returned when no result assumes anything."""
    # Only the verdicts of assumed names are ever read: a composed program's 377,074 results assume nothing (their
    # slices were settled in their own runs; a reused slice's columns are not even built), and indexing every name
    # cost 0.2 s of its certify.
    if assume_nothing(results):
        return results
    out = list(results)
    assumed = {n for r in out if r.assumes for n in r.assumes}
    while True:
        verdicts: dict[str, list[Verdict]] = {}
        for r in out:
            if r.name in assumed:
                verdicts.setdefault(r.name, []).append(r.verdict)
        changed = False
        for i, r in enumerate(out):
            if r.verdict != Verdict.PROVED or not r.assumes:
                continue
            bad = [n for n in r.assumes if not verdicts.get(n) or any(v != Verdict.PROVED for v in verdicts[n])]
            if not bad:
                continue
            what = ", ".join(f"{n} ({'/'.join(sorted({v.value for v in verdicts[n]})) if n in verdicts else 'no such obligation'})"
                             for n in bad)
            out[i] = attrs.evolve(r, verdict=Verdict.FAILED, blocked_by=tuple(bad),
                                  reason=f"not proved on its own: it assumes {what}; proved only under that assumption: "
                                         f"{r.reason}")
            if r.name in verdicts:  # a name no result assumes is never read
                verdicts[r.name] = [Verdict.FAILED if x == Verdict.PROVED else x for x in verdicts[r.name]]
            changed = True
        if not changed:
            return out


# ------------------------------------------------------------------ results held in parts
# A composed program's results held in parts: most of them as columns a reused slice shares with its source.
#
# An 80-layer decode step has 377,074 results, 329,423 of them in the 1,191 slices that reuse the proofs of the 12
# slices certified (``compositional._map_slice``): each such result is its source's family and verdict, a reason
# that names the source, and a name rendered for the slice. ``Columns`` keeps one slice's as the source's columns
# (shared, not copied) and renders the names and builds the ``Result`` objects only when something reads them (the
# JSON report, the proof store, a certificate); ``Parts`` chains those and plain result lists into the one sequence a
# ``Report`` holds. What a run with nothing refuted reads — every verdict (``verdict_set``, ``count_of``), the counts
# per family and verdict (``summary.family_rows``), the slices' deadlock results (``compositional._assumable``) —
# is answered from the columns. Iterating, indexing, comparing or pickling a ``Parts`` gives exactly the results a
# list of them would: the same values in the same order (``tests/test_result_parts.py``).


class Columns:
    """The results of one slice that reuses another's proofs, as columns: ``families``, ``verdicts`` and ``reasons``
    (equally long; shared with every slice reusing the same source the same way: never mutated), ``counts`` (a
    ``Counter`` of (family, verdict) over the rows not in ``overrides``) and ``name_at(i)``, the name of row ``i``
    (rendered on demand; ``names()`` renders them all). A row is a result with no counterexample, seconds,
    assumption or blocker (``report.plain_results``), unless ``overrides`` holds a result of its own for it (a
    slot-reuse balance result decided for the composition): ``families`` and ``verdicts`` then hold that result's."""

    __slots__ = ("_built", "_names", "counts", "families", "name_at", "overrides", "reasons", "verdicts")

    def __init__(self, families: Sequence[str], verdicts: Sequence[Verdict], reasons: Sequence[str],
                 counts: Counter[tuple[str, Verdict]], name_at: Callable[[int], str],
                 names: Callable[[], list[str]], overrides: Mapping[int, Result] | None = None) -> None:
        self.families = families
        self.verdicts = verdicts
        self.reasons = reasons
        self.counts = counts
        self.name_at = name_at
        self.overrides: Mapping[int, Result] = overrides or {}
        self._names = names
        self._built: list[Result] | None = None

    def __len__(self) -> int:
        return len(self.families)

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results())

    def results(self) -> list[Result]:
        """The ``Result`` of each row, built once (``plain_results``, then the overrides)."""
        if self._built is None:
            out = plain_results(self.families, self._names(), self.verdicts, self.reasons)
            for x, r in self.overrides.items():
                out[x] = r
            self._built = out
        return self._built

    def result(self, i: int, name: str | None = None) -> Result:
        """The ``Result`` of row ``i`` alone (``name``: its name, when the caller rendered it already)."""
        got = self.overrides.get(i)
        if got is not None:
            return got
        return timed_result(self.families[i], self.name_at(i) if name is None else name, self.verdicts[i],
                            self.reasons[i], 0.0)


class Rendered(Sequence[str]):
    """``n`` strings, string ``i`` being ``render(i)``, rendered each time it is read (a ``Columns``' reasons when
    they are made of the row's own fields)."""

    __slots__ = ("_n", "_render")

    def __init__(self, n: int, render: Callable[[int], str]) -> None:
        self._n = n
        self._render = render

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self._render(x) for x in range(self._n)[i]]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._render(i % self._n)

    def __iter__(self) -> Iterator[str]:
        return map(self._render, range(self._n))


Part = Sequence[Result] | Columns


class Parts(Sequence[Result]):
    """The results of ``parts`` in order, as one immutable sequence: a part is a sequence of ``Result`` or a
    ``Columns``, whose results are built the first time something iterates or indexes it. Equal to (and hashing
    as) the tuple of its results; pickled as that tuple."""

    __slots__ = ("_flat", "_len", "parts")

    def __init__(self, parts: Iterable[Part]) -> None:
        self.parts: tuple[Part, ...] = tuple(p for p in parts if len(p))
        self._len = sum(map(len, self.parts))
        self._flat: tuple[Result, ...] | None = None

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[Result]:
        for p in self.parts:
            yield from (p.results() if isinstance(p, Columns) else p)

    def flat(self) -> tuple[Result, ...]:
        """Every result, as a tuple (built once)."""
        if self._flat is None:
            self._flat = tuple(self)
        return self._flat

    @overload
    def __getitem__(self, i: int) -> Result: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Result, ...]: ...

    def __getitem__(self, i: int | slice) -> Result | tuple[Result, ...]:
        return self.flat()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Parts, tuple, list)):
            return len(self) == len(other) and all(itertools.starmap(operator.eq, zip(self, other, strict=True)))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.flat())

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (self.flat(),)

    def __repr__(self) -> str:
        return f"Parts({len(self.parts)} parts, {self._len} results)"


#: What the readers below take: results (a ``Parts``, one ``Columns`` part, any other iterable of them).
Some = Iterable[Result]


def _parts(results: Some) -> tuple[Part, ...] | None:
    if isinstance(results, Columns):
        return (results,)
    return results.parts if isinstance(results, Parts) else None


def verdicts(results: Some) -> Iterator[Verdict]:
    """The verdict of each of ``results``, in order, read off the columns of a ``Parts`` (no ``Result`` built)."""
    parts = _parts(results)
    if parts is None:
        yield from map(_VERDICT, results)
        return
    for p in parts:
        yield from (p.verdicts if isinstance(p, Columns) else map(_VERDICT, p))


def verdict_set(results: Some) -> set[Verdict]:
    """The verdicts ``results`` hold (``verdicts``, as a set)."""
    parts = _parts(results)
    if parts is None:
        return set(map(_VERDICT, results))
    out: set[Verdict] = set()
    for p in parts:
        out.update(p.verdicts if isinstance(p, Columns) else map(_VERDICT, p))
    return out


def count_of(results: Some, verdict: Verdict) -> int:
    """How many of ``results`` have ``verdict`` (of a ``Columns`` part, from its counts and overrides)."""
    parts = _parts(results)
    if parts is None:
        return operator.countOf(map(_VERDICT, results), verdict)
    n = 0
    for p in parts:
        if isinstance(p, Columns):
            n += sum(k for (_f, v), k in p.counts.items() if v == verdict)
            n += operator.countOf(map(_VERDICT, p.overrides.values()), verdict)
        else:
            n += operator.countOf(map(_VERDICT, p), verdict)
    return n


def without_counterexamples(results: Some) -> bool:
    """Whether no result of ``results`` has a counterexample (a ``Columns`` part has none)."""
    parts = _parts(results)
    if parts is None:
        return all(r.counterexample is None for r in results)
    return all(r.counterexample is None for p in parts
               for r in (p.overrides.values() if isinstance(p, Columns) else p))


def assume_nothing(results: Some) -> bool:
    """Whether no result of ``results`` assumes another obligation (a ``Columns`` part assumes nothing)."""
    parts = _parts(results)
    if parts is None:
        return not any(r.assumes for r in results)
    return not any(r.assumes for p in parts for r in (p.overrides.values() if isinstance(p, Columns) else p))


def family_verdict_counts(results: Some) -> list[tuple[str, Verdict, int, float]]:
    """(family, verdict, count, seconds) runs of ``results`` in order: each ``Columns`` part one entry per (family,
    verdict) it holds (its seconds 0), each other result one entry of its own (``summary.family_rows`` sums them)."""
    parts = _parts(results)
    if parts is None:
        return [(r.family, r.verdict, 1, r.seconds) for r in results]
    out: list[tuple[str, Verdict, int, float]] = []
    for p in parts:
        if isinstance(p, Columns):
            out += [(f, v, k, 0.0) for (f, v), k in p.counts.items()]
            out += [(r.family, r.verdict, 1, r.seconds) for _x, r in sorted(p.overrides.items())]
        else:
            out += [(r.family, r.verdict, 1, r.seconds) for r in p]
    return out


def chain(*parts: Iterable[Result]) -> Sequence[Result]:
    """``parts`` one after another, a ``Parts`` keeping the columns of any ``Parts`` among them."""
    out: list[Part] = []
    for x in parts:
        got = _parts(x)
        out += got if got is not None else [x if isinstance(x, Sequence) else list(x)]
    return Parts(out)


def selected(results: Some, families: frozenset[str], keep: Callable[[str, str], bool]) -> Iterator[Result]:
    """The results of ``results`` whose family is in ``families`` and for which ``keep(family, name)`` holds, in
    order; a ``Columns`` part's are built (and their names rendered) for those rows only."""
    for p, row, name in _selected_rows(results, families, keep):
        yield row if isinstance(row, Result) else p.result(row, name)  # type: ignore[union-attr]


def selected_verdicts(results: Some, families: frozenset[str],
                      keep: Callable[[str, str], bool]) -> Iterator[tuple[str, Verdict]]:
    """(name, verdict) of each result ``selected`` gives, in order, with no ``Result`` built for a ``Columns`` row."""
    for p, row, name in _selected_rows(results, families, keep):
        yield name, row.verdict if isinstance(row, Result) else p.verdicts[row]  # type: ignore[union-attr]


def _selected_rows(results: Some, families: frozenset[str],
                   keep: Callable[[str, str], bool]) -> Iterator[tuple[Part | None, Result | int, str]]:
    """``selected``'s rows: (None, the result, its name) of a plain part, (the part, the row index, its name) of a
    ``Columns`` part (an overriding result's family and verdict are that row's)."""
    parts = _parts(results)
    # Per families column (shared by every slice reusing one source the same way, alive throughout), the rows of
    # ``families``: found once, not once per slice (an 80-layer step has 1,203 slices of a few hundred rows each).
    rows_of: dict[int, list[int]] = {}
    for p in parts if parts is not None else (results,):
        if not isinstance(p, Columns):
            yield from ((None, r, r.name) for r in p if r.family in families and keep(r.family, r.name))
            continue
        if not p.overrides and not any(f in families for f, _v in p.counts):
            continue
        over = p.overrides
        fams = p.families
        at = rows_of.get(id(fams))
        if at is None:
            at = rows_of[id(fams)] = [i for i, f in enumerate(fams) if f in families]
        for i in at:
            n = over[i].name if i in over else p.name_at(i)
            if keep(fams[i], n):
                yield p, i, n


def held(results: Sequence[Result]) -> Sequence[Result]:
    """What a ``Report`` holds of ``results``: a ``Parts`` as it is, anything else as a tuple."""
    return results if isinstance(results, Parts) else tuple(results)


@attrs.frozen
class Report:
    """Every obligation's result for one program. ``results`` is a tuple, or for a composed program a
    ``Parts`` (a reused slice's results built when read; equal to the tuple of them). ``cached`` is empty for
    a computed report, else the proof cache entry every result was taken from (``store.py``: only a report whose
    every obligation proved is kept there)."""

    program: str
    target: str
    results: Sequence[Result]
    seconds: float = 0.0
    cached: str = ""

    @property
    def exit_code(self) -> int:
        """0 all proved, 1 something refuted, 3 something failed to prove, 4 a checker error (DESIGN §8).

        A refutation outranks a failure to prove, which outranks an error only when no refutation exists.
        """
        vs = verdict_set(self.results)  # read several times per run of 377,074 results: off their columns
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
        """The JSON report (``certify --json``): ``program``, ``target``, ``exit_code``, ``seconds`` and every result
        (family, name, verdict, reason, counterexample, the obligations its proof assumes, seconds; a failure to prove
        also ``blocked_by`` and ``unreplayed`` when it has them: ``Result``); ``cached``
        names the proof cache entry when every result came from it."""
        out: dict[str, Any] = {
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
                    "assumes": list(r.assumes),
                    "seconds": round(r.seconds, 3),
                    **({"blocked_by": list(r.blocked_by)} if r.blocked_by else {}),
                    **({"unreplayed": True} if r.unreplayed else {}),
                }
                for r in self.results
            ],
        }
        if self.cached:
            out["cached"] = self.cached
        return out


def result_to_data(r: Result) -> dict[str, Any]:
    """Every field of ``r``, losslessly, as JSON data (the proof cache's form; ``result_from_data`` reads it)."""
    out: dict[str, Any] = {}
    for f in attrs.fields(Result):
        v = getattr(r, f.name)
        out[f.name] = v.value if isinstance(v, Verdict) else (list(v) if isinstance(v, tuple) else v)
    return out


#: The fields ``result_from_data`` reads by name, in ``Result``'s order (one more field and it takes the generic
#: path below, field by field).
_FIELDS = ("family", "name", "verdict", "reason", "counterexample", "seconds", "assumes", "blocked_by", "unreplayed")
_NAMES = frozenset(_FIELDS)
_VERDICTS = {v.value: v for v in Verdict}
_FAST = tuple(f.name for f in attrs.fields(Result)) == _FIELDS


def result_from_data(d: Any) -> Result:
    """The ``Result`` that ``result_to_data`` wrote. Raises ``ValueError`` for anything else: a field missing or
    unknown, a verdict that is not one, a value of the wrong type."""
    if not isinstance(d, dict):
        raise ValueError("a result is an object")
    if _FAST and d.keys() == _NAMES:
        # The common case, read directly: a warm certify reads every result of a program's report (54,574 for the
        # 16-layer decode step) and the generic loop was most of its time.
        family, name, reason, cex = d["family"], d["name"], d["reason"], d["counterexample"]
        seconds, assumes, blocked, unreplayed = d["seconds"], d["assumes"], d["blocked_by"], d["unreplayed"]
        verdict = _VERDICTS.get(d["verdict"]) if isinstance(d["verdict"], str) else None
        if (type(family) is str and type(name) is str and type(reason) is str and verdict is not None
                and (cex is None or type(cex) is dict) and type(seconds) in (int, float)
                and type(assumes) is list and type(blocked) is list and type(unreplayed) is bool):
            return Result(family, name, verdict, reason, cex, float(seconds), tuple(assumes), tuple(blocked),
                          unreplayed)
    names = {f.name for f in attrs.fields(Result)}
    if set(d) != names:
        raise ValueError(f"result fields {sorted(d)} are not {sorted(names)}")
    kw: dict[str, Any] = {}
    for f in attrs.fields(Result):
        v = d[f.name]
        if f.name == "verdict":
            v = Verdict(v)
        elif isinstance(f.default, tuple):
            if not isinstance(v, list):
                raise ValueError(f"{f.name}: a list")
            v = tuple(v)
        elif f.name == "seconds":
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise ValueError("seconds: a number")
            v = float(v)
        elif f.name == "unreplayed":
            if not isinstance(v, bool):
                raise ValueError("unreplayed: a boolean")
        elif f.name == "counterexample":
            if v is not None and not isinstance(v, dict):
                raise ValueError("counterexample: an object or null")
        elif not isinstance(v, str):
            raise ValueError(f"{f.name}: a string")
        kw[f.name] = v
    return Result(**kw)


def results_to_columns(results: Iterable[Result]) -> dict[str, Any]:
    """Results as the proof store keeps a proved report's (``store.put_report``): one column per field, the sizes of
    what they say rather than of 54,817 objects each spelling every key (the 16-layer decode step: 4.3 MB against
    17.7 MB; read back in 72 ms against 200). ``families`` and ``reasons`` list each distinct family and reason once
    (11,649 reasons for those 54,817 results: a reused proof's reason names its class) and ``family`` / ``reason``
    index them; ``verdict`` holds the verdicts' values the same way; ``name`` and ``seconds`` are plain columns;
    ``more`` lists ``[index, fields]`` for each result with a counterexample, assumptions, ``blocked_by`` or
    ``unreplayed`` (their non-default fields as ``result_to_data`` writes them). ``results_from_columns`` reads it."""
    families: dict[str, int] = {}
    reasons: dict[str, int] = {}
    verdicts: dict[str, int] = {}
    cols: dict[str, list[Any]] = {"family": [], "name": [], "verdict": [], "reason": [], "seconds": [], "more": []}
    fam_i, names, verd_i, reason_i, seconds, more = (cols["family"], cols["name"], cols["verdict"], cols["reason"],
                                                     cols["seconds"], cols["more"])
    for i, r in enumerate(results):
        fam_i.append(families.setdefault(r.family, len(families)))
        names.append(r.name)
        verd_i.append(verdicts.setdefault(r.verdict.value, len(verdicts)))
        reason_i.append(reasons.setdefault(r.reason, len(reasons)))
        seconds.append(r.seconds)
        # ``result_to_data`` only for the rare result with a sparse field set (per result it was 0.17 s of 0.23 for
        # the 16-layer step's 54,817)
        if r.counterexample is not None or r.assumes or r.blocked_by or r.unreplayed:
            more.append([i, {k: v for k, v in result_to_data(r).items() if k in _SPARSE and v != _SPARSE[k]}])
    return {"families": list(families), "reasons": list(reasons), "verdicts": list(verdicts), **cols}


#: The fields ``results_to_columns`` keeps only where they differ from these defaults (``result_to_data``'s form).
_SPARSE: dict[str, Any] = {"counterexample": None, "assumes": [], "blocked_by": [], "unreplayed": False}


def results_from_columns(d: Any) -> tuple[Result, ...]:
    """The results ``results_to_columns`` wrote. Raises ``ValueError`` for anything else: a column missing, columns
    of different lengths, an index out of range, a value of the wrong type, a verdict that is not one."""
    if not isinstance(d, dict):
        raise ValueError("columns: an object")
    try:
        families, reasons, verdict_names = d["families"], d["reasons"], d["verdicts"]
        fam_i, names, verd_i, reason_i, seconds, more = (d["family"], d["name"], d["verdict"], d["reason"],
                                                         d["seconds"], d["more"])
    except KeyError as e:
        raise ValueError(f"columns: {e.args[0]} missing") from None
    columns = (families, reasons, verdict_names, fam_i, names, verd_i, reason_i, seconds, more)
    if not all(type(c) is list for c in columns):
        raise ValueError("columns: lists")
    n = len(names)
    if not len(fam_i) == len(verd_i) == len(reason_i) == len(seconds) == n:
        raise ValueError("columns of different lengths")
    if not all(type(x) is str for x in (*families, *reasons, *names)):
        raise ValueError("columns: families, reasons and names are strings")
    verdicts = [_VERDICTS.get(v) if type(v) is str else None for v in verdict_names]
    if None in verdicts:
        raise ValueError(f"columns: verdicts {verdict_names} are not all verdicts")
    for col, table in ((fam_i, families), (verd_i, verdicts), (reason_i, reasons)):
        if not all(type(x) is int and 0 <= x < len(table) for x in col):
            raise ValueError("columns: an index out of range")
    if not all(type(s) in (int, float) for s in seconds):
        raise ValueError("columns: seconds are numbers")
    out = [Result(families[f], name, verdicts[v], reasons[r], None, float(s))  # type: ignore[arg-type]
           for f, name, v, r, s in zip(fam_i, names, verd_i, reason_i, seconds, strict=True)]
    seen: set[int] = set()
    for item in more:
        if type(item) is not list or len(item) != 2 or type(item[0]) is not int or not 0 <= item[0] < n \
                or item[0] in seen or type(item[1]) is not dict or not item[1] or not set(item[1]) <= set(_SPARSE):
            raise ValueError("columns: a 'more' item is [index, {counterexample, assumes, blocked_by, unreplayed}]")
        seen.add(item[0])
        i = item[0]
        out[i] = result_from_data({**result_to_data(out[i]), **item[1]})
    return tuple(out)
