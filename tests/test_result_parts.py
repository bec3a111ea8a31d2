"""A composed program's results held in parts (``verispatial/certify/report.py``, ``Parts``): a slice reusing another's
proofs keeps them as its source's columns, built into ``Result`` objects only when something reads them.

What must hold:

- a ``Parts`` is its results: iterating, indexing, comparing, hashing and pickling it give what the tuple of the same
  results gives, and every column reader (verdicts, counts per family, counterexamples, assumptions, a selection by
  family and name) answers as it would on that tuple, overrides (a slot-reuse result replacing a row) included;
- the readers a run with nothing refuted makes (the exit code, the counts per family, the human report) render no
  name and build no result of a reused slice;
- on a composed program, only slices equal to a proved one are held as columns — one ``Columns`` per reused slice —
  and the JSON report, the counts and the exit code are those of the same results as a plain tuple; a slice differing
  by a defect lends nothing and stays refuted, as the expansion is.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Callable

import attrs
import pytest

from tests.composed import exchange_chain
from tests.test_templated import Step, _without_last_pop, tiny  # noqa: F401  (the fixture)
from verispatial.certify import compositional as comp
from verispatial.certify.report import (
    Columns,
    Parts,
    Report,
    Result,
    Verdict,
    assume_nothing,
    chain,
    count_of,
    family_verdict_counts,
    held,
    selected,
    verdict_set,
    verdicts,
    without_counterexamples,
)
from verispatial.certify.summary import family_rows
from verispatial.driver.run import certify
from verispatial.ir.ops import Pop
from verispatial.report.text import report_lines

ROWS = [("deadlock", "deadlock:(0,0).reader+2", Verdict.PROVED, "proved as slice0/deadlock"),
        ("balance", "balance-cb:b1", Verdict.PROVED, "proved as slice0/balance-cb:b1"),
        ("async-noc", "async-pending-at-end", Verdict.PROVED, "proved as slice0/async-pending-at-end"),
        ("balance", "balance-sem:sem0@(0,0)", Verdict.PROVED, "proved as slice0/balance-sem")]


def _columns(head: str, overrides: dict[int, Result] | None = None) -> tuple[Columns, list[int]]:
    """A ``Columns`` of ``ROWS`` named after ``head``, and the list its name renderer appends each rendered row to."""
    rendered: list[int] = []

    def name_at(i: int) -> str:
        rendered.append(i)
        return head + ROWS[i][1]

    def names() -> list[str]:
        rendered.extend(range(len(ROWS)))
        return [head + r[1] for r in ROWS]

    fams = [r[0] for r in ROWS]
    verds = [r[2] for r in ROWS]
    for x, r in (overrides or {}).items():
        fams[x], verds[x] = r.family, r.verdict
    plain = [x not in (overrides or {}) for x in range(len(ROWS))]
    counts = Counter((f, v) for f, v, p in zip(fams, verds, plain, strict=True) if p)
    return Columns(fams, verds, [r[3] for r in ROWS], counts, name_at, names, overrides), rendered


def _plain(head: str) -> list[Result]:
    return [Result(f, head + n, v, why) for f, n, v, why in ROWS]


def test_a_parts_is_the_tuple_of_its_results() -> None:
    slot = Result("balance", "slice2/balance-sem:sem0@(0,0)", Verdict.FAILED, "no exemption", {"kind": "state"}, 0.5,
                  assumes=("x",))
    first = [Result("memory", "slice0/alias-clobber:b2~b3", Verdict.PROVED, "unsat", seconds=0.25)]
    a, seen_a = _columns("slice1/")
    b, seen_b = _columns("slice2/", {3: slot})
    parts = Parts([first, a, [], b])
    want = (*first, *_plain("slice1/"), *_plain("slice2/")[:3], slot)
    # Every reader of the columns answers as on the tuple, with no name rendered.
    assert list(verdicts(parts)) == [r.verdict for r in want]
    assert verdict_set(parts) == {r.verdict for r in want}
    assert count_of(parts, Verdict.PROVED) == len(want) - 1
    assert count_of(b, Verdict.FAILED) == 1
    assert not without_counterexamples(parts)
    assert without_counterexamples(Parts([first, a]))
    assert not assume_nothing(parts)
    assert assume_nothing(Parts([first, a]))

    def summed(rows: list[tuple[str, Verdict, int, float]]) -> dict[tuple[str, Verdict], tuple[int, float]]:
        out: dict[tuple[str, Verdict], tuple[int, float]] = {}
        for f, v, k, s in rows:
            n, t = out.get((f, v), (0, 0.0))
            out[(f, v)] = (n + k, t + s)
        return out

    assert summed(family_verdict_counts(parts)) == summed(family_verdict_counts(want))
    assert seen_a == seen_b == []
    # A selection by family renders the names of those rows only.
    got = list(selected(parts, frozenset({"async-noc"}), lambda _f, n: n.endswith("async-pending-at-end")))
    assert got == [r for r in want if r.family == "async-noc"]
    assert seen_a == [2]
    assert seen_b == [2]
    # Iterated, indexed, compared, hashed and pickled, it is the tuple of its results.
    assert len(parts) == len(want)
    assert tuple(parts) == want
    assert parts == want
    assert want == parts
    assert parts == list(want)
    assert parts != want[:-1]
    assert hash(Parts([first, a])) == hash((*first, *_plain("slice1/")))  # (a counterexample is a dict: no hash)
    assert parts[len(first)] == want[len(first)]
    assert parts[-1] is slot
    assert parts[1:3] == want[1:3]
    assert pickle.loads(pickle.dumps(parts)) == want
    assert type(pickle.loads(pickle.dumps(parts))) is tuple
    assert [attrs.astuple(r, recurse=False) for r in parts] == [attrs.astuple(r, recurse=False) for r in want]
    # Built once: a second walk builds nothing again.
    assert [r is s for r, s in zip(parts, parts.flat(), strict=True)] == [True] * len(want)
    assert chain(parts, [slot]) == (*want, slot)
    assert held([slot]) == (slot,)
    assert held(parts) is parts


@pytest.fixture(scope="module")
def proved(tiny: Step) -> Report:  # noqa: F811
    return certify(tiny[2])


def _reused_slices(tiny: Step) -> list[int]:  # noqa: F811
    """The slices of ``tiny``'s step whose proofs are reused from an earlier slice (equal keys, or one handing on
    more buffers: ``_stronger_source``)."""
    cut = comp.cut_templated(tiny[2])
    first: dict[str, int] = {}
    out: list[int] = []
    for sl in cut.slices:
        if sl.key in first or comp._stronger_source(sl, [j for j in first.values()
                                                          if cut.slices[j].loose == sl.loose], cut.slices) is not None:
            out.append(sl.index)
        else:
            first[sl.key] = sl.index
    return out


def test_a_reused_slice_is_held_as_its_sources_columns(tiny: Step, proved: Report) -> None:  # noqa: F811
    assert proved.exit_code == 0
    parts = proved.results
    assert isinstance(parts, Parts)
    cols = [p for p in parts.parts if isinstance(p, Columns) and p.name_at(0).startswith("slice")]
    # the other columns: the cross-phase read coverages (``test_the_read_coverages_are_...``)
    assert all(p.name_at(0).startswith("hb-activation:") for p in parts.parts if isinstance(p, Columns)
               and p not in cols)
    reused = _reused_slices(tiny)
    assert reused
    # One ``Columns`` per reused slice, in slice order, each the results that slice's names give.
    assert len(cols) == len(reused)
    for p, j in zip(cols, reused, strict=True):
        assert {r.name.split("/")[0] for r in p.results()} == {f"slice{j}"}
        # each row its source's proof, but a slot-reuse result decided for the composition
        assert all(r.reason.startswith("proved as slice") for x, r in enumerate(p.results()) if x not in p.overrides)
    # The same results as a plain tuple give the same JSON report, counts, exit code and human report.
    plain = attrs.evolve(proved, results=tuple(proved.results))
    assert proved.to_json() == plain.to_json()
    assert family_rows(proved) == family_rows(plain)
    assert report_lines(proved, (1, 1)) == report_lines(plain, (1, 1))


def test_a_proved_runs_readers_build_no_reused_result(tiny: Step) -> None:  # noqa: F811
    got = certify(tiny[2])
    parts = got.results
    assert isinstance(parts, Parts)
    rendered: list[int] = []
    for p in parts.parts:
        if isinstance(p, Columns):
            p._names = _counting(p._names, rendered)  # type: ignore[method-assign]
    assert got.exit_code == 0
    family_rows(got)
    report_lines(got, (1, 1))
    assert rendered == []
    assert all(p._built is None for p in parts.parts if isinstance(p, Columns))


def _counting(names: Callable[[], list[str]], seen: list[int]) -> Callable[[], list[str]]:
    def counted() -> list[str]:
        seen.append(1)
        return names()
    return counted


def test_a_slice_differing_by_a_defect_lends_nothing_and_stays_refuted(tiny: Step) -> None:  # noqa: F811
    _, _, tp = tiny
    j = next(j for j, t in enumerate(tp.templates) if any(isinstance(o, Pop) for ep in t.programs for o in ep.ops))
    broken = _without_last_pop(tp, j)
    got = certify(broken)
    assert got.exit_code == 1
    # A refuted slice lends no proof: every reused result names a source slice whose every result proved, and the
    # refutations are the expansion's, each with the counterexample the interpreter replayed.
    lent = {int(r.reason.split("/")[0].removeprefix("proved as slice")) for r in got.results
            if r.reason.startswith("proved as slice")}
    unproved = {int(r.name.split("/")[0].removeprefix("slice")) for r in got.results
                if r.verdict != Verdict.PROVED and r.name.startswith("slice")}
    assert lent
    assert unproved
    assert not lent & unproved
    want = certify(broken.expand())
    assert [(r.family, r.name, r.verdict, r.reason) for r in got.results] == [
        (r.family, r.name, r.verdict, r.reason) for r in want.results]
    refuted = [r for r in got.results if r.verdict == Verdict.REFUTED]
    assert refuted
    assert all(r.counterexample is not None and "replay" in r.counterexample for r in refuted)


def test_the_read_coverages_are_columns_of_the_results_built_one_by_one(tiny: Step) -> None:  # noqa: F811
    tp = tiny[2]
    rv, c = comp.rendezvous_of(tp), comp.cut_templated(tp)
    results = certify(tp).results
    got = [p for p in comp.cross_phase(tp, rv, c, results, 10**6).parts  # type: ignore[attr-defined]
           if isinstance(p, Columns)]
    assert len(got) == 1
    reads = comp.covered_reads(tp, c)
    assert reads
    written = comp._Written(c)
    one_by_one = [attrs.evolve(comp._read_coverage(tp, u, written, 10**6), seconds=0.0) for u in reads]
    assert got[0].results() == one_by_one
    assert [got[0].name_at(i) for i in range(len(reads))] == [r.name for r in one_by_one]
    assert got[0].counts == Counter((r.family, r.verdict) for r in one_by_one)
    # A read whose tiles no earlier write lists (here: the writes of its tensor left out) is computed at once and
    # kept as its row's own result (asked of the interpreter: on a small composed program); the others stay rows.
    p = exchange_chain(3)
    prv = comp.recognise(p)
    assert isinstance(prv, comp.Rendezvous)
    pc = comp.cut(p, prv)
    assert isinstance(pc, comp.Cut)
    reads = comp.covered_reads(p, pc)
    assert len({u.tensor for u in reads}) > 1
    unwritten = comp._Written(pc)
    unwritten.by.pop(reads[0].tensor)
    cols = comp._read_coverages(p, reads, unwritten, 10**6)
    expected = [comp._read_coverage(p, u, unwritten, 10**6) for u in reads]
    assert 0 in cols.overrides
    assert len(cols.overrides) < len(reads)
    assert cols.results()[0].verdict != Verdict.PROVED
    assert [attrs.evolve(r, seconds=0.0) for r in cols.results()] == [attrs.evolve(r, seconds=0.0) for r in expected]
    assert cols.counts == Counter((r.family, r.verdict) for x, r in enumerate(expected) if x not in cols.overrides)
