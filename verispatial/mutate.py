"""Mutation testing of certified programs (issue 9, deliverable 5; DESIGN §10).

``mutants(p)`` lists every single-op mutant of a scheduled program, in program order, per engine:

- ``drop``: an op removed (a barrier or a flush removed is kind ``no-barrier``);
- ``pages+1`` / ``pages-1``: a page or tile count (``pages``, ``tiles``) one larger or smaller (never below 1);
- ``swap``: two adjacent ops of one op list exchanged;
- ``wait+1`` / ``wait-1``: a semaphore wait's value one larger or smaller (never below 0);
- ``loop+1`` / ``loop-1``: a constant loop count one larger or smaller (never below 0);
- ``hoist``: an op of a loop body (not itself a loop) moved out of its loop, right after it;
- for a sharded buffer (``Buffer.shard``, docs/semantics.md "Sharded buffers"): ``unshard``, its shard dropped (its
  pages become an allocation of their own: nothing fills what its producer only pushed, nothing writes its tensor);
  ``shard-1``, its shard one page smaller than its ring (the last page of the ring is off the shard, tt-metal
  #15337's kind); ``shard+1``, its shard moved one tile along its tensor (the pages are other tiles). A buffer
  mutant's ``engine`` is the buffer's site and ``path`` is ``()``.
- ``dests+1`` / ``dests-1``: a multicast's ``num_dests`` one larger or smaller than written (never below 0, which is
  a count too, of a barrier that hangs: the acknowledgement count of tt-metal #42100, docs/semantics.md
  "Acknowledgement counts");
- ``set+1`` / ``set-1``: a ``SemSet``'s value one larger or smaller (never below 0); ``rmw+1`` / ``rmw-1``: a
  ``SemRmw``'s ``by`` one larger or smaller (never below 0);
- ``coef+1`` / ``coef-1``: a loop-index coefficient of a ``SemSet`` value or ``SemWait`` threshold one larger or
  smaller (a word carrying a sequence, docs/semantics.md "Set values that grow with the loop"), where the value
  stays a valid word in every iteration (``validate`` rejects the rest).
- ``offset+1`` / ``offset-1``: where a multicast or remote write lands, one page further or nearer (``McastSend.offset``,
  never below 0); ``undst``: a remote write's ``dst`` dropped (it lands in the source's own cb index, at its address);
  ``behind+1`` / ``behind-1``: a multicast of pages already pushed sent from one page further behind or nearer to the
  write pointer (``McastSend.behind``, never below the pages it sends past that address).
- ``read-offset+1`` / ``read-offset-1``: a remote read's pages one further or nearer past its read pointer
  (``RemoteRead.offset``, never below 0); ``unsite``: a remote read's owner moved to another site holding a buffer of
  its cb index in its phase (one mutant per such site: the kernel computed the wrong core's NoC coordinates).
- ``part-offset+`` / ``part-offset-`` / ``part-size+``: a part-page transfer's byte range one range further, nearer
  (never below 0) or twice as long (``ReadTiles.part``, ``WriteTiles.part``; docs/semantics.md "Part-page transfers":
  a range past the page is ``validate``'s); ``unpart``: its part dropped (the whole page moves).
- ``undrain``: a local copy's, fill's or scratch store's drain dropped (``CopyTiles.drain``, ``FillTiles.drain``,
  ``ScratchAccess.drain``: its stores may land after the push that publishes them or the write that sends them,
  tt-metal PR #50183's pre-fix form).
- ``vc``: a multicast's or a flag's virtual channel (``McastSend.vc``, ``McastSetValid.vc``) moved to the lowest
  channel none of its engine's writes travels on: writes on two channels keep no order (tt-metal #55555), so a flag
  a flush or nothing separated from its data may land first (``async-flag-overtake``).
- ``widen``: a multicast's or a flag's rectangle grown by one column or row on one side (a new group of the same
  sender, its ``num_dests`` grown by the sites added, so the count still matches: a miscount is ``dests``'s), where it
  stays in the mesh: one engine's writes to two rectangles keep no order at a core both reach (``noc.h:23-30``).
  One mutant per side.

``judge(p, m)`` decides one mutant: rejected by ``validate``, or certified (``verispatial.certify.checker``) and
compared with an oracle — the explicit-state explorer for small programs (at most ``EXPLORE_ENGINES`` engines and
``EXPLORE_STATES`` states: every interleaving, every trip value), else the interpreter over ``SEEDS`` random
schedules plus the round-robin one for every trip value. Outcomes (``Outcome.status``):

- ``rejected`` (validate), ``refuted`` (the checker refutes): killed;
- ``not-proved``: the checker fails to prove it and the oracle shows it broken (killed, fail closed);
- ``still-correct``: the oracle shows the mutant correct (the explorer completely, or every interpreter run); the
  checker proved it (an equivalent mutant) or failed to prove it (``Outcome.verdict`` says which);
- ``unsound``: the checker PROVES a mutant the oracle drives into a deadlock or a violation — a soundness bug;
- ``unknown``: the checker proves it and the oracle is inconclusive (explorer cut short, no interpreter run
  broke it) — not shown correct, listed as a survivor;
- ``error``: the checker answered ``error`` — a checker fault.

The kill rate of a program is killed / (mutants - still-correct). ``benchmarks/mutate.py`` runs it over
``examples/`` and ``proofs/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import rules as R
from verispatial.ir.ops import (
    NOC_VCS,
    AtomicBarrier,
    Compute,
    CopyTiles,
    FillTiles,
    Flush,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    ScratchAccess,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    WriteBarrier,
    WriteTiles,
    body_at,
    op_text,
    with_body,
)
from verispatial.ir.program import Group, Program, Shard, shard_size
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore, trip_assignments
from verispatial.petri.interp import simulate

Path = tuple[int, ...]

KINDS = ("drop", "no-barrier", "pages+1", "pages-1", "swap", "wait+1", "wait-1", "loop+1", "loop-1", "hoist",
         "unshard", "shard-1", "shard+1",
         "dests+1", "dests-1", "set+1", "set-1", "coef+1", "coef-1",
         "offset+1", "offset-1", "undst", "read-offset+1", "read-offset-1", "unsite", "undrain", "index+1", "index-1",
         "part-offset+", "part-offset-", "part-size+", "unpart",
         "rmw+1", "rmw-1", "vc", "widen")
#: Programs with at most this many engines are judged by the explorer, within this many states.
EXPLORE_ENGINES = 6
EXPLORE_STATES = 50_000
#: Random schedules per trip assignment when the interpreter judges (plus the round-robin one).
SEEDS = 12
#: Trip assignments the interpreter tries at most (all of them when there are fewer).
MAX_ASSIGNMENTS = 64
_BARRIERS = (ReadBarrier, WriteBarrier, AtomicBarrier, Flush)


@attrs.frozen
class Mutant:
    """One mutant: its ``kind`` (``KINDS``), the engine and op ``path`` mutated, a one-line ``what`` and the
    mutated ``program``."""

    kind: str
    engine: str
    path: Path
    what: str
    program: Program


@attrs.frozen
class Outcome:
    """How a mutant was judged: ``status`` (module docstring), the checker's ``verdict`` (exit code 0, 1, 3 or 4
    as text; None when rejected), the ``oracle``'s answer and a one-line ``detail``."""

    mutant: Mutant
    status: str
    verdict: str | None
    oracle: str
    detail: str

    @property
    def killed(self) -> bool:
        return self.status in ("rejected", "refuted", "not-proved")


def _lists(ops: tuple[Op, ...], prefix: Path = ()) -> Iterator[Path]:
    """The path of every op list: the top level and each loop or if body."""
    yield prefix
    for i, op in enumerate(ops):
        if isinstance(op, (Loop, If)):
            yield from _lists(op.body, (*prefix, i))


def _name(op: Op) -> str:
    return type(op).__name__


def _edits(ops: tuple[Op, ...]) -> Iterator[tuple[str, Path, str, tuple[Op, ...]]]:
    """Every single-op edit of one engine's ops: (kind, path, what, new ops)."""
    for where in _lists(ops):
        body = body_at(ops, where)
        for i, op in enumerate(body):
            path = (*where, i)
            kind = "no-barrier" if isinstance(op, _BARRIERS) else "drop"
            yield kind, path, f"drop {_name(op)}", with_body(ops, where, (*body[:i], *body[i + 1:]))
            for field in ("pages", "tiles"):
                v = getattr(op, field, None)
                if isinstance(v, int) and not isinstance(op, Loop):
                    for d in (1, -1):
                        if v + d >= 1:
                            new = attrs.evolve(op, **{field: v + d})  # type: ignore[misc, arg-type]
                            yield (f"pages{d:+d}", path, f"{_name(op)} {field} {v} -> {v + d}",
                                   with_body(ops, where, (*body[:i], new, *body[i + 1:])))
            if isinstance(op, SemWait):
                for d in (1, -1):
                    if op.value + d >= 0:
                        new = attrs.evolve(op, value=op.value + d)
                        yield (f"wait{d:+d}", path, f"SemWait value {op.value} -> {op.value + d}",
                               with_body(ops, where, (*body[:i], new, *body[i + 1:])))
            if isinstance(op, (McastSend, McastSetValid, SemIncMcast)):
                for d in (1, -1):
                    if op.num_dests + d >= 0:
                        told: Op = attrs.evolve(op, num_dests=op.num_dests + d)
                        yield (f"dests{d:+d}", path, f"{_name(op)} num_dests {op.num_dests} -> {op.num_dests + d}",
                               with_body(ops, where, (*body[:i], told, *body[i + 1:])))
            if isinstance(op, SemSet):
                for d in (1, -1):
                    if op.value + d >= 0:
                        valued: Op = attrs.evolve(op, value=op.value + d)
                        yield (f"set{d:+d}", path, f"SemSet value {op.value} -> {op.value + d}",
                               with_body(ops, where, (*body[:i], valued, *body[i + 1:])))
            if isinstance(op, SemRmw):
                # ``Semaphore.up(n)`` of the own word with ``n`` one off: the count the waits expect is missed
                for d in (1, -1):
                    if op.by + d >= 0:
                        upped: Op = attrs.evolve(op, by=op.by + d)
                        yield (f"rmw{d:+d}", path, f"SemRmw by {op.by} -> {op.by + d}",
                               with_body(ops, where, (*body[:i], upped, *body[i + 1:])))
            if isinstance(op, (SemSet, SemWait)):
                for t, term in enumerate(op.terms):
                    for d in (1, -1):
                        terms = (*op.terms[:t], attrs.evolve(term, coef=term.coef + d), *op.terms[t + 1:])
                        grown: Op = attrs.evolve(op, terms=tuple(x for x in terms if x.coef != 0))
                        yield (f"coef{d:+d}", path, f"{_name(op)} coefficient of {term.var} {term.coef} -> "
                               f"{term.coef + d}", with_body(ops, where, (*body[:i], grown, *body[i + 1:])))
            if isinstance(op, McastSend):
                for d in (1, -1):
                    if op.offset + d >= 0:
                        moved: Op = attrs.evolve(op, offset=op.offset + d)
                        yield (f"offset{d:+d}", path, f"McastSend offset {op.offset} -> {op.offset + d}",
                               with_body(ops, where, (*body[:i], moved, *body[i + 1:])))
                if op.behind:
                    # Pages already pushed: the address taken one page nearer to or further from the write pointer
                    # (never 0: that is the reserved back; never short of the pages sent past it).
                    for d in (1, -1):
                        if op.behind + d >= max(1, op.offset + op.pages):
                            back: Op = attrs.evolve(op, behind=op.behind + d)
                            yield (f"behind{d:+d}", path, f"McastSend behind {op.behind} -> {op.behind + d}",
                                   with_body(ops, where, (*body[:i], back, *body[i + 1:])))
                if op.dst is not None:
                    yield ("undst", path, f"McastSend lands in its own cb index, not b{op.dst}'s",
                           with_body(ops, where, (*body[:i], attrs.evolve(op, dst=None), *body[i + 1:])))
            if isinstance(op, RemoteRead):
                for d in (1, -1):
                    if op.offset + d >= 0:
                        shifted: Op = attrs.evolve(op, offset=op.offset + d)
                        yield (f"read-offset{d:+d}", path, f"RemoteRead offset {op.offset} -> {op.offset + d}",
                               with_body(ops, where, (*body[:i], shifted, *body[i + 1:])))
            if isinstance(op, Compute):
                # A read in place one page further or nearer (docs/semantics.md "Reads in place"): past a resident
                # shard's pages, or a page not yet pushed, is cb-read-unpublished.
                for k, r in enumerate(op.in_place):
                    for d in (1, -1):
                        if r.page + d >= 0:
                            reads = (*op.in_place[:k], attrs.evolve(r, page=r.page + d), *op.in_place[k + 1:])
                            indexed: Op = attrs.evolve(op, in_place=reads)
                            yield (f"index{d:+d}", path, f"{_name(op)} reads b{r.buf} at page {r.page} -> "
                                   f"{r.page + d}", with_body(ops, where, (*body[:i], indexed, *body[i + 1:])))
            if isinstance(op, (ReadTiles, WriteTiles)) and op.part is not None:
                # A byte range one stick off, or the whole page: the kernel's offset or size computed wrong (a
                # range past the page is validate's; a part widened to the page is a whole-tile transfer).
                part = op.part
                for field, d in (("offset", part.size), ("offset", -part.size), ("size", part.size)):
                    span = attrs.evolve(part, **{field: getattr(part, field) + d})
                    if span.offset >= 0:
                        yield (f"part-{field}{'+' if d > 0 else '-'}", path,
                               f"{_name(op)} part {field} {getattr(part, field)} -> {getattr(span, field)}",
                               with_body(ops, where, (*body[:i], attrs.evolve(op, part=span), *body[i + 1:])))
                yield ("unpart", path, f"{_name(op)} moves its whole page, not bytes [{part.offset}, "
                       f"{part.offset + part.size})", with_body(ops, where, (*body[:i], attrs.evolve(op, part=None),
                                                                           *body[i + 1:])))
            if isinstance(op, (CopyTiles, FillTiles, ScratchAccess)) and op.drain:
                yield ("undrain", path, f"{type(op).__name__} without its drain",
                       with_body(ops, where, (*body[:i], attrs.evolve(op, drain=False), *body[i + 1:])))
            if isinstance(op, Loop) and isinstance(op.count, int):
                for d in (1, -1):
                    if op.count + d >= 0:
                        counted: Op = attrs.evolve(op, count=op.count + d)
                        yield (f"loop{d:+d}", path, f"Loop {op.var} count {op.count} -> {op.count + d}",
                               with_body(ops, where, (*body[:i], counted, *body[i + 1:])))
            if i + 1 < len(body):
                yield ("swap", path, f"swap {_name(op)} and {_name(body[i + 1])}",
                       with_body(ops, where, (*body[:i], body[i + 1], op, *body[i + 2:])))
        if where:
            outer, j = where[:-1], where[-1]
            parent = body_at(ops, outer)
            loop = parent[j]
            if isinstance(loop, Loop):
                for i, op in enumerate(body):
                    if isinstance(op, Loop):
                        continue
                    inner = attrs.evolve(loop, body=(*body[:i], *body[i + 1:]))
                    yield ("hoist", (*where, i), f"move {_name(op)} out of loop {loop.var}",
                           with_body(ops, outer, (*parent[:j], inner, op, *parent[j + 1:])))


def _unsited(p: Program, ops: tuple[Op, ...]) -> Iterator[tuple[Path, str, tuple[Op, ...]]]:
    """Every ``unsite`` edit of one engine's ops: a ``RemoteRead`` reading at each other site where its buffer's cb
    index has a buffer in its phase (``Program.remote_buffer``; elsewhere ``validate`` would refuse it), sites in
    row, column order."""
    sites = sorted({b.site for b in p.buffers}, key=lambda x: (x.y, x.x))
    for where in _lists(ops):
        body = body_at(ops, where)
        for i, op in enumerate(body):
            if not isinstance(op, RemoteRead):
                continue
            for site in sites:
                if site != op.at and p.remote_buffer(op.buf, site) is not None:
                    moved = attrs.evolve(op, at=site)
                    yield ((*where, i), f"{op_text(op)} reads at {site} instead",
                           with_body(ops, where, (*body[:i], moved, *body[i + 1:])))


def _writes(ops: tuple[Op, ...]) -> Iterator[tuple[Path, McastSend | McastSetValid]]:
    """Every ``McastSend`` and ``McastSetValid`` of one engine's ops, with its path, in program order."""
    for where in _lists(ops):
        for i, op in enumerate(body_at(ops, where)):
            if isinstance(op, (McastSend, McastSetValid)):
                yield (*where, i), op


def _replaced(ops: tuple[Op, ...], path: Path, new: Op) -> tuple[Op, ...]:
    """``ops`` with the op at ``path`` replaced by ``new``."""
    where, i = path[:-1], path[-1]
    body = body_at(ops, where)
    return with_body(ops, where, (*body[:i], new, *body[i + 1:]))


def _rechanneled(ops: tuple[Op, ...]) -> Iterator[tuple[Path, str, tuple[Op, ...]]]:
    """Every ``vc`` edit of one engine's ops: a write moved to the lowest channel no write of the engine names (None,
    the channel of the writes naming none, is another channel than each number)."""
    used = {op.vc for _path, op in _writes(ops)}
    free = next((c for c in range(NOC_VCS) if c not in used), None)
    if free is None:
        return
    for path, op in _writes(ops):
        yield path, f"{_name(op)} on VC {free}, not {op.vc}", _replaced(ops, path, attrs.evolve(op, vc=free))


def _widened(p: Program, ops: tuple[Op, ...]) -> Iterator[tuple[Path, str, Group, tuple[Op, ...]]]:
    """Every ``widen`` edit of one engine's ops: a write's rectangle grown by one column or row on one side, as a new
    group (id ``len(p.groups)``) it writes to, where the rectangle stays in the mesh and reaches another site."""
    cols, rows = p.target.mesh
    for path, op in _writes(ops):
        g = p.groups[op.group]
        x0, y0, x1, y1 = g.corners
        grown = [(x0 - 1, y0, x1, y1), (x0, y0 - 1, x1, y1), (x0, y0, x1 + 1, y1), (x0, y0, x1, y1 + 1)]
        for rect in grown:
            if not (0 <= rect[0] and 0 <= rect[1] and rect[2] < cols and rect[3] < rows):
                continue
            wide = Group(len(p.groups), g.sender, rect, g.loopback)
            added = len(wide.destinations()) - len(g.destinations())
            if added == 0:  # the one site added is the non-loopback sender: the same destinations
                continue
            new = attrs.evolve(op, group=wide.id, num_dests=op.num_dests + added)
            yield (path, f"{_name(op)} to ({rect[0]},{rect[1]})-({rect[2]},{rect[3]}), not "
                   f"({x0},{y0})-({x1},{y1})", wide, _replaced(ops, path, new))


def _with_ops(p: Program, e: int, ops: tuple[Op, ...]) -> Program:
    """``p`` with engine ``e``'s ops replaced by ``ops``. Its source table (file:line per op path, front ends and vendor
    transcriptions) no longer matches its ops: it is left out, since validate refuses a location naming no op and a
    mutant rejected for that would count as killed without the checker seeing it."""
    ep = p.programs[e]
    return attrs.evolve(p, programs=(*p.programs[:e], attrs.evolve(ep, ops=ops, sources=()), *p.programs[e + 1:]))


def mutants(p: Program) -> Iterator[Mutant]:
    """Every single-op mutant of ``p`` (module docstring), engine by engine in program order, then every mutant of a
    sharded buffer's shard, buffer by buffer."""
    for e, ep in enumerate(p.programs):
        for kind, path, what, ops in _edits(ep.ops):
            yield Mutant(kind, ep.key, path, what, _with_ops(p, e, ops))
        for path, what, ops in _unsited(p, ep.ops):
            yield Mutant("unsite", ep.key, path, what, _with_ops(p, e, ops))
        for path, what, ops in _rechanneled(ep.ops):
            yield Mutant("vc", ep.key, path, what, _with_ops(p, e, ops))
        for path, what, wide, ops in _widened(p, ep.ops):
            yield Mutant("widen", ep.key, path, what, attrs.evolve(_with_ops(p, e, ops), groups=(*p.groups, wide)))
    for b in p.buffers:
        sh = b.shard
        if sh is None:
            continue
        edits: list[tuple[str, str, Shard | None]] = [("unshard", "shard dropped", None)]
        size = shard_size(b)
        if size > b.page_tiles:
            edits.append(("shard-1", f"shard {size} -> {size - b.page_tiles} tiles",
                          attrs.evolve(sh, tiles=size - b.page_tiles)))
        edits.append(("shard+1", f"shard start {sh.start} -> {sh.start + 1}", attrs.evolve(sh, start=sh.start + 1)))
        for kind, what, new in edits:
            bufs = tuple(attrs.evolve(x, shard=new) if x.id == b.id else x for x in p.buffers)
            yield Mutant(kind, str(b.site), (), f"b{b.id} ({b.name}): {what}", attrs.evolve(p, buffers=bufs))


def oracle(p: Program, seeds: int = SEEDS) -> tuple[str, str]:
    """``("broken" | "correct" | "inconclusive", detail)``: the explorer's answer for a small program when it
    finishes or finds something, else the interpreter's over ``seeds`` random schedules and the round-robin one
    for every trip assignment (at most ``MAX_ASSIGNMENTS``)."""
    if len(p.programs) <= EXPLORE_ENGINES:
        r = explore(p, max_states=EXPLORE_STATES)
        if r.verdict in (R.DEADLOCK, "violation"):
            what = R.DEADLOCK if r.deadlocks else ", ".join(r.rules())
            return "broken", f"explorer: {what}"
        if r.verdict == "ok":
            return "correct", f"explorer: every interleaving ok ({r.states} states)"
    runs = 0
    assignments = trip_assignments(p)
    for trips in assignments[:MAX_ASSIGNMENTS]:
        for seed in (None, *range(seeds)):
            s = simulate(p, trips, seed=seed)
            runs += 1
            if s.status == R.DEADLOCK or s.violations:
                what = R.DEADLOCK if s.status == R.DEADLOCK else s.violations[0].rule
                return "broken", f"interpreter: {what} (trips {trips}, seed {seed})"
            if s.status != "terminated":
                return "inconclusive", f"interpreter: {s.status} (trips {trips}, seed {seed})"
    if len(assignments) > MAX_ASSIGNMENTS:
        return "inconclusive", f"interpreter: {runs} runs ok over the first {MAX_ASSIGNMENTS} trip assignments"
    return "correct", f"interpreter: {runs} runs ok (every trip value, {seeds} seeds and round robin each)"


def judge(m: Mutant, **certify_options: Any) -> Outcome:
    """Decide one mutant (module docstring)."""
    errs = validate(m.program)
    if errs:
        return Outcome(m, "rejected", None, "-", f"validate: {errs[0]}")
    report = certify(m.program, **certify_options)
    code = report.exit_code
    verdict = {0: "proved", 1: "refuted", 3: "failed-to-prove", 4: "error"}[code]
    if code == 1:
        first = next(r for r in report.results if r.verdict == Verdict.REFUTED)
        return Outcome(m, "refuted", verdict, "-", f"{first.family}/{first.name}")
    if code == 4:
        first = next(r for r in report.results if r.verdict == Verdict.ERROR)
        return Outcome(m, "error", verdict, "-", f"{first.name}: {first.reason}")
    said, detail = oracle(m.program)
    if said == "correct":
        return Outcome(m, "still-correct", verdict, said, detail)
    if code == 3:
        first = next(r for r in report.results if r.verdict == Verdict.FAILED)
        if said == "broken":
            return Outcome(m, "not-proved", verdict, said, f"{first.name}: {first.reason}; {detail}")
        return Outcome(m, "unknown", verdict, said, f"{first.name}: {first.reason}; {detail}")
    return Outcome(m, "unsound" if said == "broken" else "unknown", verdict, said, detail)


def kill_rate(outcomes: list[Outcome]) -> tuple[int, int]:
    """(killed, mutants not shown still correct)."""
    live = [o for o in outcomes if o.status != "still-correct"]
    return sum(o.killed for o in live), len(live)
