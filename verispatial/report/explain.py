"""Explanations people can see (``verispatial explain``): for each refutation of a report a short narrative and a
picture, as DOT (``Picture.dot``) that ``verispatial.report.dot.render_svg`` draws as SVG.

- **Deadlock**: the interpreter is driven to the deadlock the counterexample names (its trips, every stuck engine at
  its op and iteration, every other engine finished) and the *wait-for graph* of that state is drawn: each stuck
  engine, the buffer or semaphore word it waits for with its counters (pages pushed and popped, the word's value and
  what the wait asks), and the ops that would release it (a buffer's pops or pushes, a word's increments, flag
  multicasts and sets) on the engines that hold them. The narrative says, per stuck engine, what it waits for (the
  word's value against the value waited for: how far short), each op that would release it, how often it ran (its
  writes are in the counters already) and why it cannot run (again): its engine is itself stuck (a wait-for cycle,
  drawn in red), or finished, or it is the waiting engine's own op (no edge: an engine does not wait for itself), or
  no op releases it at all; and the release that never came (``_missing_increments``, ``_missing_flags``,
  ``_missing_buffer_release``), drawn as a dotted red edge. Buffers and semaphores are called by the program's
  names (``c_0@(1,0)``, ``gather@(0,0)``), in the text as in the pictures.
- **Deadlock on a big mesh** (more than ``MESH_LIMIT`` stuck engines): engines are grouped by what they wait for
  (engine kind, op, buffer or semaphore by name), one narrative line per group, a wait-for graph between groups, and
  a site x engine picture of the mesh coloured by group, instead of hundreds of lines.
- **A rule violation or a race**: the interpreter is run again, recording its schedule, until it reports the same
  rule at the same op (the counterexample's replay); the picture is a timeline of the engines involved (one lane per
  engine, time to the right, landings of asynchronous ops included), the op that breaks the rule in red — for a race
  both ops of the racing pair.
- **A memory overlap**: the site's memory map in the space and phase concerned, to scale, the two buffers and the
  byte address of the counterexample in red.

Units: pages of the named buffer, bytes for memory offsets. Sources: the rules are those of docs/semantics.md; the
op semantics are the interpreter's (``verispatial.petri.interp``).
"""

from __future__ import annotations

import itertools
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import networkx as nx

from verispatial.certify import replay
from verispatial.certify.replay import trip_words
from verispatial.certify.report import Report, Result, Verdict
from verispatial.ir import obligation
from verispatial.ir import rules as R
from verispatial.ir.core import Site, WaitCond
from verispatial.ir.ops import (
    CONTAINERS,
    INCREMENTS,
    McastSetValid,
    Op,
    Pop,
    Push,
    Reserve,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Wait,
    op_text,
)
from verispatial.ir.program import Program
from verispatial.petri.interp import SimResult, TraceStep, drive
from verispatial.petri.position import Position, Violation, iteration_text, op_at, path_text
from verispatial.report.dot import ALERT, PALETTE, attrs_text, digraph, html, quote
from verispatial.report.names import buffer_name, named, word_name
from verispatial.report.sources import loop_index_text

#: Above this many stuck engines a deadlock is summarized by groups (and a mesh picture) instead of engine by engine.
MESH_LIMIT = 12
#: Events of the involved engines a timeline shows: a window of the last ones up to the violation (and the other op
#: of a racing pair), so the op that breaks the rule sits in the picture's first screen width, not five to the right
#: of a long schedule; the narrative lists the schedule's last steps in text.
TIMELINE_EVENTS = 7
#: Lanes (engines) a timeline shows at most.
TIMELINE_LANES = 8


@attrs.frozen
class Picture:
    """One picture: ``kind`` (``wait-for``, ``wait-groups``, ``mesh``, ``timeline``, ``memory-map``), a title, its
    DOT text and the Graphviz layout that draws it (``dot``, or ``neato`` for given positions)."""

    kind: str
    title: str
    dot: str
    layout: str = "dot"


@attrs.frozen
class Explanation:
    """The explanation of one refuted obligation: its family, name and rule, a headline, the narrative lines and
    the pictures."""

    family: str
    name: str
    rule: str
    headline: str
    narrative: tuple[str, ...]
    pictures: tuple[Picture, ...]
    #: the user-source lines (``file:line:column: text``) the counterexample names, for a program a front end read
    sources: tuple[str, ...] = ()
    #: the host arguments the counterexample's trips stand for (``hostargs.arg_lines``), for a tt-metal host
    args: tuple[str, ...] = ()
    #: the lines printed for ``sources``: ``at FILE:LINE:COL: TEXT``, an included helper's op followed by its call
    #: in the kernel (``text.at_lines``)
    at: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "name": self.name, "rule": self.rule, "headline": self.headline,
                "narrative": list(self.narrative), "sources": list(self.sources),
                **({"host_args": list(self.args)} if self.args else {}),
                "pictures": [{"kind": p.kind, "title": p.title, "layout": p.layout, "dot": p.dot}
                             for p in self.pictures]}


# --------------------------------------------------------------------------------------------- the program's ops


@attrs.frozen
class OpRef:
    """An op of the program: its engine (key), path and the op."""

    engine: str
    path: tuple[int, ...]
    op: Op

    def text(self) -> str:
        return f"{self.engine}'s {op_text(self.op)} at {path_text(self.path)}"


def leaves(ops: tuple[Op, ...], prefix: tuple[int, ...] = ()) -> Iterable[tuple[tuple[int, ...], Op]]:
    """Every non-container op with its path, in program order."""
    for i, op in enumerate(ops):
        p = (*prefix, i)
        if isinstance(op, CONTAINERS):
            yield from leaves(op.body, p)
        else:
            yield p, op


class Index:
    """Which ops release which wait: per buffer its pushes (data) and pops (space), per semaphore word (semaphore,
    site) the ops that write it — increments aimed at it, flag and increment multicasts whose group covers the site,
    and sets by engines of the site."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.pushes: dict[int, list[OpRef]] = {}
        self.pops: dict[int, list[OpRef]] = {}
        self.writes: dict[tuple[int, Site], list[OpRef]] = {}
        self.site_of = {ep.key: ep.site for ep in program.programs}
        self.kind_of = {ep.key: ep.engine.value for ep in program.programs}
        dests = {g.id: set(g.destinations()) for g in program.groups}
        for ep in program.programs:
            for path, op in leaves(ep.ops):
                ref = OpRef(ep.key, path, op)
                if isinstance(op, Push):
                    self.pushes.setdefault(op.buf, []).append(ref)
                elif isinstance(op, Pop):
                    self.pops.setdefault(op.buf, []).append(ref)
                elif isinstance(op, SemInc):
                    self.writes.setdefault((op.sem, op.at), []).append(ref)
                elif isinstance(op, (McastSetValid, SemIncMcast)):
                    for d in dests[op.group]:
                        self.writes.setdefault((op.sem, d), []).append(ref)
                elif isinstance(op, (SemSet, SemRmw)):
                    self.writes.setdefault((op.sem, ep.site), []).append(ref)

    def op(self, engine: str, path: tuple[int, ...]) -> Op:
        ep = next(ep for ep in self.program.programs if ep.key == engine)
        return op_at(ep.ops, path)


def _op_text(p: Program, op: Op) -> str:
    """``op_text`` with the program's buffer and semaphore names (``reserve(c_0, 8)``)."""
    return op_text(op, {b.id: b.name for b in p.buffers}, {s.id: s.name for s in p.semaphores})


def _ref_text(p: Program, ref: OpRef) -> str:
    return f"{ref.engine}'s {_op_text(p, ref.op)} at {_at(p, ref.engine, ref.path)}"


def _source_text(p: Program, engine: str, path: tuple[int, ...] | None,
                 iteration: Sequence[tuple[str, int]] = (), trips: dict[str, int] | None = None) -> str:
    """Where the op at ``path`` of ``engine`` was read from, ``reader.cpp:12`` (an op of an included helper: the
    header's line, then ``called at`` the kernel's), then, at the program's loop indices ``iteration``, the C++ loop
    indices that differ from them (``; i = 11``: ``sources.loop_index_text``); "" for a program no front end read."""
    loc = p.source_of(engine, path) if path else None
    if loc is None:
        return ""
    call = f", called at {loc.called_at.file}:{loc.called_at.line}" if loc.called_at is not None else ""
    index = loop_index_text(p, engine, path, dict(iteration), trips or {}) if iteration else ""
    return f"{loc.file}:{loc.line}{call}" + (f"; {index}" if index else "")


def _at(p: Program, engine: str, path: tuple[int, ...] | None, iteration: Sequence[tuple[str, int]] = (),
        trips: dict[str, int] | None = None) -> str:
    """``path_text`` of an op, followed by its source line in parentheses when a front end recorded one:
    ``ops[0].body[3] (reader_helpers.hpp:9, called at reader.cpp:11)``; the IR path stays (program.json's). With the
    op's ``iteration``, the C++ loop indices where they are not the program's (``_source_text``)."""
    src = _source_text(p, engine, path, iteration, trips)
    return f"{path_text(path)} ({src})" if src else path_text(path)


def _step_text(p: Program, engine: str, path: tuple[int, ...], text: str,
               iteration: Sequence[tuple[str, int]] = (), trips: dict[str, int] | None = None) -> str:
    """A schedule step's text with the source line of its op after the op's path (``_at``); the op's loop indices
    ``iteration`` (the run's own, ``TraceStep.iteration``) give the C++ ones."""
    shown = path_text(path)
    src = _source_text(p, engine, path, iteration, trips) if path else ""
    if not src:
        return text
    return re.sub(re.escape(shown) + r"(?=[ )]|$)", lambda _m: f"{shown} ({src})", text, count=1)


def _times(n: int) -> str:
    return f"{n} time{'s' if n != 1 else ''}"


# --------------------------------------------------------------------------------------------- deadlocks


@attrs.frozen
class Waiting:
    """A stuck engine: where it is (``op``: its op in the program's names), why (``reason``: the counters that
    block it; ``generic``: the same without the site, to group engines by), the resource it waits for (``b3.data``,
    ``b3.space``, ``sem2@(0,0)``; empty when none) with its label, the ops that would release it (the waiting
    engine's own ones included: ``_release_line`` tells them apart), the writes of the word that cannot release it
    (``inert``: sets to another value) and the releases that never came (``missing``: (engine, line))."""

    position: Position
    op: str
    reason: str
    generic: str
    resource: str
    resource_label: str
    releasers: tuple[OpRef, ...]
    signature: str
    note: str = ""
    counted: str = ""
    inert: tuple[OpRef, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()
    want: int = 0
    target: str = ""

    @property
    def node(self) -> str:
        """The resource's node in a picture, named as the program names it (``c_0@(0,0) space``)."""
        kind = self.resource.rsplit(".", 1)[1] if self.resource.startswith("b") else ""
        return _node_id("res", f"{self.target} {kind}".rstrip())


def reach_deadlock(program: Program, cex: dict[str, Any]) -> SimResult | None:
    """The interpreter's run to the deadlock ``cex`` names (its trips; each stuck engine at its op and iteration,
    every other engine finished), or None when no schedule tried reaches it. Schedules: those the checker's replay
    tries (``certify.replay.directed``), then the runs from launch it makes (``certify.replay.launch_schedules``)
    that end in the same deadlock."""
    from verispatial.certify.replay import directed

    trips = cex.get("trips") if isinstance(cex.get("trips"), dict) else None
    stuck = [Position.from_json(st["position"]) for st in cex.get("stuck", []) if isinstance(st, dict)]
    if not stuck:
        return None
    targets = {p.engine: p for p in stuck}
    for ep in program.programs:
        targets.setdefault(ep.key, Position(ep.key, None))

    def same(r: SimResult) -> bool:
        return r.status == R.DEADLOCK and all(r.positions[p.engine].same_place(p) for p in stuck) and len(
            r.stuck) == len(stuck)

    try:
        for _how, r in directed(program, trips, targets):
            if same(r):
                return r
        for launch in replay.launch_schedules(program):
            r = replay.run_launch(program, launch, trips)
            if same(r):
                return r
    except (ValueError, KeyError):
        return None
    return None


def _ran(run: SimResult | None, ref: OpRef) -> int | None:
    return None if run is None else run.executed.get((ref.engine, ref.path), 0)


def _waiting(program: Program, index: Index, pos: Position, reason: str, run: SimResult | None) -> Waiting:
    assert pos.path is not None
    reason = named(program, reason)  # the interpreter's, kept when no run reached the state (no counters of ours)
    op = index.op(pos.engine, pos.path)
    site = index.site_of[pos.engine]
    kind = index.kind_of[pos.engine]
    shown = _op_text(program, op)
    if isinstance(op, (Reserve, Wait)):
        b = program.buffers[op.buf]
        space = isinstance(op, Reserve)
        res = f"b{b.id}.{'space' if space else 'data'}"
        generic = reason
        if run is not None:
            pushed, popped = run.pushed[b.id], run.popped[b.id]
            held = pushed - popped
            generic = (f"{b.name} has {b.capacity - held} free page(s) of {b.capacity} (pushed {pushed}, popped "
                       f"{popped}), the reserve needs {op.pages}" if space else
                       f"{b.name} holds {held} page(s) (pushed {pushed}, popped {popped}), the wait needs {op.pages}")
            if op.pages > b.capacity:
                generic += " (more than its capacity: it never fits)"
            reason = f"{b.name}@{b.site}" + generic[len(b.name):]
        counters = "" if run is None else (f"\npushed {run.pushed[b.id]}, popped {run.popped[b.id]}, "
                                           f"capacity {b.capacity}")
        asks = (f"needs {op.pages} free page(s)" if space else f"needs {op.pages} page(s)")
        label = f"{buffer_name(program, b.id)}{counters}\n{pos.engine.split('.')[-1]} {asks}"
        rel = tuple(index.pops.get(b.id, ()) if space else index.pushes.get(b.id, ()))
        sig = f"{kind}: {shown.split('(')[0]}({b.name}{' space' if space else ''})"
        missing = _missing_buffer_release(program, index, b.id, space, pos.engine, run)
        return Waiting(pos, shown, reason, generic, res, label, rel, sig, missing=missing,
                       target=buffer_name(program, b.id))
    if isinstance(op, SemWait):
        sem = program.semaphores[op.sem]
        env = dict(pos.iteration)
        want = op.threshold(env) if op.terms else op.value
        rel_text = "==" if op.cond is WaitCond.EQ else ">="
        got = run.sems.get((op.sem, site)) if run is not None else None
        generic = reason
        if got is not None:
            short = f" ({want - got} short)" if got < want else ""
            generic = f"{sem.name} is {got}, the wait needs {rel_text} {want}{short}"
            reason = f"{sem.name}@{site}" + generic[len(sem.name):]
        value = "" if got is None else f" = {got}"
        label = f"{word_name(program, op.sem, site)}{value}\nwaits {rel_text} {want}"
        writes = index.writes.get((op.sem, site), ())
        # A set whose value depends on loop indices may store the value waited for in some iteration: not inert.
        inert = tuple(r for r in writes if isinstance(r.op, SemSet) and not r.op.terms
                      and not _set_releases(r.op.value, op.cond, want))
        rel = tuple(r for r in writes if r not in inert)
        sig = f"{kind}: sem_wait({sem.name} {rel_text} {want if not op.terms else 'threshold'})"
        note = ""
        if op.cond is WaitCond.EQ and got is not None and got > want and not any(isinstance(r.op, SemSet) for r in rel):
            note = (f"the word is already past the value it waits for ({got} > {want}) and only increments write it: "
                    "it can never equal it again (overshoot)")
        lacking: tuple[tuple[str, str], ...] = ()
        if got is None or got < want:
            lacking = (*_missing_increments(program, index, op.sem, site, run, pos.engine,
                                            0 if got is None else want - got),
                       *_missing_flags(program, index, op.sem, site, run))
        return Waiting(pos, shown, reason, generic, f"sem{op.sem}@{site}", label, rel, sig, note,
                       counted="" if got is None else str(got), inert=inert, missing=lacking, want=want,
                       target=word_name(program, op.sem, site))
    return Waiting(pos, shown, reason, reason, "", "", (), f"{kind}: {shown.split('(')[0]}")


def _set_releases(value: int, cond: WaitCond, want: int) -> bool:
    return value == want if cond is WaitCond.EQ else value >= want


def _shape(ops: tuple[Op, ...], drop: frozenset[tuple[int, ...]], prefix: tuple[int, ...] = ()) -> tuple[Any, ...]:
    """An engine program's op kinds and loop structure, the ops at the paths ``drop`` left out: two engines with the
    same shape run the same protocol (their sites and ids aside)."""
    out: list[Any] = []
    for i, op in enumerate(ops):
        p = (*prefix, i)
        if p in drop:
            continue
        if isinstance(op, CONTAINERS):
            out.append((op_text(op), _shape(op.body, drop, p)))
        else:
            out.append(type(op).__name__)
    return tuple(out)


def _missing_increments(program: Program, index: Index, sem: int, site: Site, run: SimResult | None,
                        waiter: str = "", short: int = 0) -> list[tuple[str, str]]:
    """The engines whose increment of the word (``sem``, ``site``) never came: an engine that writes the word not
    at all while its program is, op kind for op kind, an incrementing engine's program less that engine's
    increments of the word (the same protocol with the increment dropped). When no engine is such, and no
    increment can still come (every one is ``waiter``'s own or its engine finished), the engines of an
    incrementing engine's kind that never write the word — when they are no more than the ``short`` increments
    missing, each of them one. Before those, the updates ``run`` lost: a ``SemRmw`` of the word whose store wrote
    over a write landed since its load (``sem-rmw-race``) is an increment that ran and never counted. An engine's
    ``SemRmw`` writes its own site's word, so no engine of another site can be the one whose up never came: the
    shapes compare the other increments."""
    writes = index.writes.get((sem, site), ())
    writers = {r.engine for r in writes}
    word = word_name(program, sem, site)
    out = _lost_updates(program, index, sem, site, run)
    incs: dict[str, list[OpRef]] = {}
    for r in writes:
        if isinstance(r.op, SemInc):
            incs.setdefault(r.engine, []).append(r)
    programs = {ep.key: ep for ep in program.programs}
    shapes = {e: _shape(programs[e].ops, frozenset(r.path for r in refs)) for e, refs in incs.items()}
    for ep in program.programs:
        if ep.key in writers or not ep.ops:
            continue
        mine = _shape(ep.ops, frozenset())
        for e in sorted(incs):
            if index.kind_of[e] == ep.engine.value and shapes[e] == mine:
                ops = ", ".join(f"{_op_text(program, r.op)} at {_at(program, r.engine, r.path)}" for r in incs[e])
                out.append((ep.key, f"the increment that never came: {ep.key} never increments {word} (its program "
                                    f"is {e}'s without {ops})"))
                break
    if out or not incs or run is None or short <= 0:
        return out
    if any(r.engine != waiter and not run.positions[r.engine].finished for r in writes):
        return out  # an increment can still come, once the engine that holds it moves: the release lines say so
    kinds = {index.kind_of[e] for e in incs}
    others = [ep.key for ep in program.programs
              if ep.key not in writers and ep.ops and ep.engine.value in kinds and run.positions[ep.key].finished]
    if others and len(others) <= short:
        like = ", ".join(sorted(incs))
        out += [(e, f"the increment that never came: {word} is {short} short, no increment of it can still come, "
                    f"and {e}, a {index.kind_of[e]} like {like}, never increments it") for e in others]
    return out


def _lost_updates(program: Program, index: Index, sem: int, site: Site,
                  run: SimResult | None) -> list[tuple[str, str]]:
    """Per ``sem-rmw-race`` of ``run`` at a ``SemRmw`` of the word (``sem``, ``site``): (the RMW's engine, the line
    saying the write it stored over is the increment that never came)."""
    if run is None:
        return []
    out: list[tuple[str, str]] = []
    for v in run.violations:
        pos = v.position
        if v.rule != R.SEM_RMW_RACE or pos.path is None or index.site_of[pos.engine] != site:
            continue
        op = index.op(pos.engine, pos.path)
        if not isinstance(op, SemRmw) or op.sem != sem:
            continue
        at = " ".join(x for x in (_at(program, pos.engine, pos.path), iteration_text(pos.iteration)) if x)
        out.append((pos.engine, f"the increment that never came: a write landed on {word_name(program, sem, site)} "
                                f"between the load and the store of {pos.engine}'s {_op_text(program, op)} at {at}, "
                                f"which stored over it (lost update: {R.SEM_RMW_RACE})"))
    return out


def _missing_flags(program: Program, index: Index, sem: int, site: Site,
                   run: SimResult | None) -> list[tuple[str, str]]:
    """For a word no increment writes (a flag; a ``SemRmw`` is an increment): each multicast group covering
    ``site`` whose sender's engine uses the group but never multicasts the flag over it (``McastSetValid``)."""
    writes = index.writes.get((sem, site), ())
    if any(isinstance(r.op, INCREMENTS) for r in writes):
        return []
    valid = {(r.engine, r.op.group) for r in writes if isinstance(r.op, McastSetValid)}
    name = program.semaphores[sem].name
    out: list[tuple[str, str]] = []
    for g in program.groups:
        if site not in g.destinations():
            continue
        for ep in program.programs:
            if ep.site != g.sender or (ep.key, g.id) in valid:
                continue
            uses = [(p, op) for p, op in leaves(ep.ops) if getattr(op, "group", None) == g.id]
            if uses:
                p, op = uses[0]
                out.append((ep.key, f"the flag that never came: g{g.id} from {g.sender} covers {site}, and {ep.key} "
                                    f"multicasts over it ({_op_text(program, op)} at {_at(program, ep.key, p)}) but never sets "
                                    f"{name} valid there"))
    return out


def _missing_buffer_release(program: Program, index: Index, buf: int, space: bool, waiter: str,
                            run: SimResult | None) -> tuple[tuple[str, str], ...]:
    """The engines that took pages of ``buf`` and never gave them on: for a wait for data, an engine that ran more
    reserves than pushes of it; for a wait for space, one that ran more waits than pops."""
    take, give, verb, noun = (Wait, Pop, "waited for", "pop") if space else (Reserve, Push, "reserved", "push")
    if run is None:
        return ()
    out: list[tuple[str, str]] = []
    for ep in program.programs:
        if not run.positions[ep.key].finished:
            continue  # a stuck engine's release is still ahead of it: the release lines say why it cannot come
        takes = [OpRef(ep.key, p, op) for p, op in leaves(ep.ops) if isinstance(op, take) and op.buf == buf]
        gives = [OpRef(ep.key, p, op) for p, op in leaves(ep.ops) if isinstance(op, give) and op.buf == buf]
        taken = sum(_ran(run, r) or 0 for r in takes)
        given = sum(_ran(run, r) or 0 for r in gives)
        if not takes or taken <= given:
            continue
        ops = ", ".join(f"{_op_text(program, r.op)} at {_at(program, r.engine, r.path)} ran {_times(_ran(run, r) or 0)}"
                        for r in takes[:2])
        after = f"has no {noun} of it" if not gives else f"ran its {noun}{'es' if noun == 'push' else 's'} of it " \
                                                          f"{_times(given)}"
        out.append((ep.key, f"the {noun} that never came: {ep.key} {verb} {buffer_name(program, buf)} ({ops}) "
                            f"and {after}"))
    return tuple(out)


def _engine_label(pos: Position, op: str) -> str:
    it = iteration_text(pos.iteration)
    return f"{pos.engine}\n{path_text(pos.path)} {op}" + (f"\n{it}" if it else "")


def _node_id(prefix: str, text: str) -> str:
    return quote(f"{prefix}:{text}")


def _release_line(program: Program, ref: OpRef, w: Waiting, stuck_at: dict[str, Waiting],
                  run: SimResult | None, trips: dict[str, int] | None = None) -> str:
    """What became of ``ref``, an op that would release ``w``: how often it ran (its writes are in the counters
    already) and why it cannot run (again): it is the waiting engine's own op, its engine is stuck elsewhere, or
    its engine finished."""
    waiter = w.position.engine
    ran = _ran(run, ref)
    # An increment's runs are in the word's value; a flag or a set may since have been overwritten.
    counted = f" (counted in the {w.counted})" if ran and w.counted and isinstance(ref.op, (SemInc, SemIncMcast)) \
        else ""
    if ref.engine == waiter:
        if ran:
            return (f"{waiter}'s own {_op_text(program, ref.op)} at {_at(program, ref.engine, ref.path)} ran {_times(ran)} "
                    "before "
                    f"this wait{counted}; it cannot run again while the engine waits here")
        return (f"{waiter}'s own {_op_text(program, ref.op)} at {_at(program, ref.engine, ref.path)} comes after this "
                "wait in its "
                "program: it cannot run before the wait passes")
    ran_text = "" if ran is None else f" ran {_times(ran)}{counted}"
    if ref.engine in stuck_at:
        s = stuck_at[ref.engine]
        assert s.position.path is not None
        where = f"at {_at(program, s.position.engine, s.position.path, s.position.iteration, trips)} {s.op}"
        it = iteration_text(s.position.iteration)
        if it:
            where += f" {it}"
        stuck = f"{ref.engine} is itself stuck {where} ({s.reason})"
        if ran:
            return f"{_ref_text(program, ref)}{ran_text}; its next run cannot come: {stuck}"
        return f"would be released by {_ref_text(program, ref)}; it never runs: {stuck}"
    if ran is None:
        return f"would be released by {_ref_text(program, ref)}; it never runs again: {ref.engine} finished"
    return f"{_ref_text(program, ref)}{ran_text}; {ref.engine} has finished"


def _arg_values(args: list[dict[str, Any]]) -> list[str]:
    """``name = value`` of each host argument (``hostargs``); a name two kernels read at different values is given
    with its kernel (``reader.num_tiles = 6, writer.num_tiles = 7``: 'num_tiles = 6, num_tiles = 7' said neither)."""
    values: dict[str, set[Any]] = {}
    for a in args:
        values.setdefault(str(a.get("name")), set()).add(a.get("value"))
    out = []
    for a in args:
        name = str(a.get("name"))
        kernel = str(a.get("kernel", ""))
        out.append(f"{kernel + '.' if len(values[name]) > 1 and kernel else ''}{name} = {a.get('value')}")
    return out


def _cycle(graph: nx.DiGraph) -> list[str]:
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return []
    return [u for u, _v in edges]


def explain_deadlock(program: Program, cex: dict[str, Any], result: Result) -> Explanation:
    """The narrative and wait-for picture of a deadlock counterexample (module docstring)."""
    index = Index(program)
    run = reach_deadlock(program, cex)
    stuck = [(Position.from_json(st["position"]), str(st.get("reason", ""))) for st in cex.get("stuck", [])]
    if run is not None:
        # The interpreter's own reasons, with the counters of the state reached.
        reasons = {st.position.engine: st.reason for st in run.stuck}
        stuck = [(p, reasons.get(p.engine, r)) for p, r in stuck]
    waits = [_waiting(program, index, p, r, run) for p, r in stuck]
    stuck_at = {w.position.engine: w for w in waits}
    graph: nx.DiGraph = nx.DiGraph()
    for w in waits:
        graph.add_node(w.position.engine)
        for ref in w.releasers:
            # An engine's own later op is no edge: it waits for something no other engine gives, not for itself.
            if ref.engine in stuck_at and ref.engine != w.position.engine:
                graph.add_edge(w.position.engine, ref.engine)
    cycle = _cycle(graph)
    trips = cex.get("trips") or {}
    shape = cex.get("shape")
    trip_text = (" with " + trip_words(trips, shape if isinstance(shape, dict) else None)) if trips else ""
    args = cex.get("host_args")
    if trips and isinstance(args, list) and args:  # a host's ranges: the arguments first, the trips they are after
        shown = ", ".join(dict.fromkeys(_arg_values([a for a in args if isinstance(a, dict)])))
        trip_text = f" with {shown} (trip {trip_words(trips)})"
    how = f" (reached by the interpreter: {cex.get('replayed_by', 'replay')}" + (
        f", {run.steps} steps)" if run is not None else ")")
    finished = [ep.key for ep in program.programs if ep.key not in stuck_at]
    lines = [f"deadlock{trip_text}: {len(waits)} engine(s) stuck, {len(finished)} finished{how}"]
    pictures: tuple[Picture, ...]
    if len(waits) > MESH_LIMIT:
        lines += _group_lines(program, waits, stuck_at, cycle)
        pictures = (_group_picture(program, waits, stuck_at), _mesh_picture(program, waits))
    else:
        for w in waits:
            lines += _engine_lines(program, w, stuck_at, run, trips)
        pictures = (_wait_for_picture(program, waits, stuck_at, cycle),)
    if cycle:
        lines.append("wait-for cycle: " + " -> ".join([*cycle, cycle[0]]))
    else:
        lines.append("no wait-for cycle: every chain of waits ends at an engine that finished, at a wait no op "
                     "releases or at the engine's own later op")
    headline = named(program, result.reason or str(cex.get("summary", R.DEADLOCK)))
    return Explanation(result.family, result.name, R.DEADLOCK, headline, tuple(lines), pictures)


def _engine_lines(program: Program, w: Waiting, stuck_at: dict[str, Waiting], run: SimResult | None,
                  trips: dict[str, int] | None = None) -> list[str]:
    pos = w.position
    it = iteration_text(pos.iteration)
    lines = [f"{pos.engine} is stuck at {_at(program, pos.engine, pos.path, pos.iteration, trips)} {w.op}"
             f"{' ' + it if it else ''}: "
             f"{w.reason}"]
    if w.note:
        lines.append(f"  {w.note}")
    if not w.resource:
        return lines
    for ref in w.inert:
        own = "own " if ref.engine == pos.engine else ""
        lines.append(f"  {ref.engine}'s {own}{_op_text(program, ref.op)} at {_at(program, ref.engine, ref.path)} "
                     "writes it, but not "
                     f"to {w.want}")
    if not w.releasers:
        if w.resource.startswith("b"):
            what = f"{'pops' if w.resource.endswith('.space') else 'pushes'} {w.target}"
        else:
            what = f"raises {w.target} to the value waited for"
        lines.append(f"  nothing releases it: no op of the program {what}")
    if w.releasers and all(ref.engine == pos.engine for ref in w.releasers):
        verb = "writes" if not w.resource.startswith("b") else "pops" if w.resource.endswith(".space") else "pushes"
        lines.append(f"  no other engine {verb} {w.target}: only the engine's own ops do")
    for ref in w.releasers[:4]:
        lines.append(f"  {_release_line(program, ref, w, stuck_at, run, trips)}")
    if len(w.releasers) > 4:
        lines.append(f"  (+{len(w.releasers) - 4} more ops that would release it, none of which runs)")
    lines += [f"  {line}" for _e, line in w.missing]
    return lines


def _wait_for_picture(program: Program, waits: Sequence[Waiting], stuck_at: dict[str, Waiting],
                      cycle: Sequence[str]) -> Picture:
    on_cycle = set(cycle)
    cycle_edges = {(cycle[i], cycle[(i + 1) % len(cycle)]) for i in range(len(cycle))} if cycle else set()
    lines: list[str] = []
    done_res: set[str] = set()
    other_nodes: set[str] = set()
    for w in waits:
        e = w.position.engine
        color = ALERT if e in on_cycle else "black"
        lines.append(_node_id("engine", e) + attrs_text({"label": _engine_label(w.position, w.op), "shape": "box",
                                                          "style": "rounded,filled", "fillcolor": "#fde0dd",
                                                          "color": color, "penwidth": 2 if e in on_cycle else 1}))
        if not w.resource:
            continue
        r = w.resource
        if r not in done_res:
            done_res.add(r)
            lines.append(w.node + attrs_text({
                "label": w.resource_label, "shape": "ellipse" if r.startswith("b") else "octagon",
                "style": "filled", "fillcolor": "#deebf7" if r.startswith("b") else "#fff7bc"}))
        rel_engines = {ref.engine for ref in w.releasers}
        hot = any((e, x) in cycle_edges for x in rel_engines)
        lines.append(f"{_node_id('engine', e)} -> {w.node}" + attrs_text(
            {"label": "waits for", "color": ALERT if hot else "black", "penwidth": 2 if hot else 1}))
        by_engine: dict[str, list[OpRef]] = {}
        for ref in w.releasers:
            if ref.engine != e:  # the engine's own op: said in the narrative, no edge back (not a cycle)
                by_engine.setdefault(ref.engine, []).append(ref)
        for x, refs in by_engine.items():
            if x not in stuck_at and x not in other_nodes:
                other_nodes.add(x)
                lines.append(_node_id("engine", x) + attrs_text({"label": f"{x}\nfinished", "shape": "box",
                                                                  "style": "rounded,dashed"}))
            ops = "\n".join(f"{_op_text(program, ref.op)} at {path_text(ref.path)}" for ref in refs[:3]) + (
                f"\n(+{len(refs) - 3} more)" if len(refs) > 3 else "")
            red = (e, x) in cycle_edges
            lines.append(f"{w.node} -> {_node_id('engine', x)}" + attrs_text(
                {"label": f"released by\n{ops}", "style": "dashed", "color": ALERT if red else "gray30",
                 "fontcolor": ALERT if red else "black", "penwidth": 2 if red else 1}))
        for x, line in w.missing:
            if x not in stuck_at and x not in other_nodes:
                other_nodes.add(x)
                lines.append(_node_id("engine", x) + attrs_text({"label": f"{x}\nfinished", "shape": "box",
                                                                  "style": "rounded,dashed", "color": ALERT}))
            what = line.split(":", 1)[0].removeprefix("the ")
            lines.append(f"{w.node} -> {_node_id('engine', x)}" + attrs_text(
                {"label": what, "style": "dotted", "color": ALERT, "fontcolor": ALERT, "penwidth": 2}))
    dot = digraph("wait-for", lines, graph={"rankdir": "LR", "fontname": "Helvetica", "labelloc": "t",
                                             "label": "wait-for graph of the deadlock (red: the cycle, and releases "
                                                      "that never came)"},
                  node={"fontname": "Helvetica", "fontsize": 10})
    return Picture("wait-for", "wait-for graph", dot)


def _groups(waits: Sequence[Waiting]) -> dict[str, list[Waiting]]:
    out: dict[str, list[Waiting]] = {}
    for w in waits:
        out.setdefault(w.signature, []).append(w)
    return out


def _sites_text(engines: Sequence[str], limit: int = 6) -> str:
    sites = [e.split(".")[0] for e in engines]
    shown = ", ".join(sites[:limit])
    return shown + (f", ... ({len(sites)} sites)" if len(sites) > limit else "")


def _group_lines(program: Program, waits: Sequence[Waiting], stuck_at: dict[str, Waiting],
                 cycle: Sequence[str]) -> list[str]:
    groups = _groups(waits)
    gid = {w.position.engine: i for i, ws in enumerate(groups.values()) for w in ws}
    lines = [f"{len(groups)} group(s) of stuck engines, by what they wait for (mesh picture: site x engine):"]
    for i, (sig, ws) in enumerate(groups.items()):
        reasons = sorted({w.generic for w in ws})
        lines.append(f"  G{i} ({len(ws)} engines) {sig} at {_sites_text([w.position.engine for w in ws])}: "
                     f"{reasons[0]}{' (and ' + str(len(reasons) - 1) + ' other counter values)' if len(reasons) > 1 else ''}")
        by: dict[str, int] = {}
        fin = 0
        for w in ws:
            for ref in w.releasers:
                if ref.engine in gid:
                    by[f"G{gid[ref.engine]}"] = by.get(f"G{gid[ref.engine]}", 0) + 1
                else:
                    fin += 1
        rel = [f"{k} (itself stuck)" for k in sorted(by)] + ([f"{fin} op(s) of finished engines"] if fin else [])
        lines.append("    released only by " + (", ".join(rel) if rel else "no op of the program"))
        never: dict[str, list[str]] = {}
        for w in ws:
            for e, line in w.missing:
                what = line.split(":", 1)[0]
                if e not in never.setdefault(what, []):
                    never[what].append(e)
        for what, engines in never.items():
            lines.append(f"    {what}: from {_sites_text(engines)} ({len(engines)} engine(s))")
    if cycle:
        gcycle: list[str] = []
        for e in cycle:
            g = f"G{gid[e]}"
            if not gcycle or gcycle[-1] != g:
                gcycle.append(g)
        lines.append("groups on the wait-for cycle: " + " -> ".join(gcycle))
    return lines


def _group_picture(program: Program, waits: Sequence[Waiting], stuck_at: dict[str, Waiting]) -> Picture:
    groups = _groups(waits)
    gid = {w.position.engine: i for i, ws in enumerate(groups.values()) for w in ws}
    lines: list[str] = []
    edges: dict[tuple[int, int | str], int] = {}
    for i, (sig, ws) in enumerate(groups.items()):
        lines.append(f"g{i}" + attrs_text({"label": f"G{i}: {len(ws)} engines\n{sig}", "shape": "box",
                                           "style": "rounded,filled", "fillcolor": PALETTE[i % len(PALETTE)]}))
        for w in ws:
            for ref in w.releasers:
                key: tuple[int, int | str] = (i, gid[ref.engine] if ref.engine in gid else "finished")
                edges[key] = edges.get(key, 0) + 1
    graph: nx.DiGraph = nx.DiGraph()
    graph.add_edges_from((a, b) for a, b in edges if isinstance(b, int))
    cyc = set(_cycle(graph))
    if any(b == "finished" for _a, b in edges):
        lines.append("finished" + attrs_text({"label": "finished engines", "shape": "box", "style": "dashed"}))
    for (a, b), n in edges.items():
        dst = f"g{b}" if isinstance(b, int) else "finished"
        red = a in cyc and b in cyc
        lines.append(f"g{a} -> {dst}" + attrs_text({"label": f"{n} wait(s) released only by", "color": ALERT if red
                                                    else "black", "penwidth": 2 if red else 1}))
    dot = digraph("wait-groups", lines, graph={"rankdir": "LR", "fontname": "Helvetica", "labelloc": "t",
                                                "label": "who waits for whom, by group (red: the cycle)"},
                  node={"fontname": "Helvetica", "fontsize": 10})
    return Picture("wait-groups", "wait-for graph by group", dot)


def _mesh_picture(program: Program, waits: Sequence[Waiting]) -> Picture:
    groups = _groups(waits)
    gid = {w.position.engine: i for i, ws in enumerate(groups.values()) for w in ws}
    sites = sorted({ep.site for ep in program.programs}, key=lambda s: (s.y, s.x))
    xs = sorted({s.x for s in sites})
    ys = sorted({s.y for s in sites})
    kinds = sorted({ep.engine.value for ep in program.programs})
    present = {ep.key for ep in program.programs}
    rows = ['<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">',
            "<TR><TD></TD>" + "".join(f"<TD><B>x={x}</B></TD>" for x in xs) + "</TR>"]
    for y in ys:
        cells = [f"<TD><B>y={y}</B></TD>"]
        for x in xs:
            inner = ['<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="1">']
            for k in kinds:
                key = f"({x},{y}).{k}"
                if key not in present:
                    inner.append('<TR><TD BGCOLOR="white"><FONT POINT-SIZE="8"> </FONT></TD></TR>')
                    continue
                if key in gid:
                    g = gid[key]
                    inner.append(f'<TR><TD BGCOLOR="{PALETTE[g % len(PALETTE)]}"><FONT POINT-SIZE="8">{html(k[0])} '
                                 f"G{g}</FONT></TD></TR>")
                else:
                    inner.append(f'<TR><TD BGCOLOR="#f0f0f0"><FONT POINT-SIZE="8">{html(k[0])} done</FONT></TD></TR>')
            inner.append("</TABLE>")
            cells.append("<TD>" + "".join(inner) + "</TD>")
        rows.append("<TR>" + "".join(cells) + "</TR>")
    rows.append("</TABLE>")
    legend = ['<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">']
    for i, sig in enumerate(groups):
        legend.append(f'<TR><TD BGCOLOR="{PALETTE[i % len(PALETTE)]}">G{i}</TD><TD ALIGN="LEFT">'
                      f"{html(sig)} ({len(groups[sig])})</TD></TR>")
    legend.append('<TR><TD BGCOLOR="#f0f0f0">done</TD><TD ALIGN="LEFT">finished</TD></TR>')
    legend.append("<TR><TD COLSPAN=\"2\">" + html(" / ".join(f"{k[0]} = {k}" for k in kinds)) + "</TD></TR>")
    legend.append("</TABLE>")
    lines = ["mesh" + attrs_text({"shape": "plaintext", "label": "<" + "".join(rows) + ">"}),
             "legend" + attrs_text({"shape": "plaintext", "label": "<" + "".join(legend) + ">"}),
             "mesh -> legend [style=invis]"]
    dot = digraph("mesh", lines, graph={"rankdir": "LR", "fontname": "Helvetica", "labelloc": "t",
                                         "label": "the mesh: each site's engines, coloured by what they wait for"},
                  node={"fontname": "Helvetica", "fontsize": 10})
    return Picture("mesh", "site x engine picture of the mesh", dot)


# --------------------------------------------------------------------------------------------- violations and races


def _violation_of(cex: dict[str, Any]) -> Violation | None:
    for holder in (cex, cex.get("replay") if isinstance(cex.get("replay"), dict) else None):
        if isinstance(holder, dict) and isinstance(holder.get("violation"), dict):
            try:
                return Violation.from_json(holder["violation"])
            except (KeyError, TypeError, ValueError):
                return None
    return None


def _targets(cex: dict[str, Any]) -> dict[str, Position]:
    from verispatial.certify.replay import targets_of

    return targets_of(cex)


#: Rules whose hazard is an asynchronous op not yet landed when the flagged op runs (the interpreter flags the op
#: because no barrier since orders it): their schedule is sought with landings as late as the run allows first.
IN_FLIGHT_RULES = frozenset({R.ASYNC_READ_PUBLISH, R.ASYNC_SOURCE_REUSE, R.ASYNC_PENDING_AT_END,
                             R.ASYNC_FLAG_OVERTAKE, R.ASYNC_INC_OVERTAKE, R.SCRATCH_UNLANDED})


def reproduce(program: Program, cex: dict[str, Any], v: Violation) -> SimResult | None:
    """A run, with its schedule recorded, in which the interpreter reports ``v``'s rule at ``v``'s engine and op:
    toward the counterexample's positions first (as its replay did), then the checker's runs from launch
    (``certify.replay.launch_schedules``, the flagged engine's landings last in one of them, as ``confirm_rule``
    tries them). None when no schedule tried shows it."""
    trips = cex.get("trips") if isinstance(cex.get("trips"), dict) else None
    replayed: dict[str, Any] = cex["replay"] if isinstance(cex.get("replay"), dict) else {}
    trips = trips or (replayed["trips"] if isinstance(replayed.get("trips"), dict) else None)

    def match(x: Violation) -> bool:
        return x.rule == v.rule and x.position.engine == v.position.engine and x.position.path == v.position.path

    def shows(r: SimResult) -> bool:
        return any(match(x) for x in r.violations)

    targets = _targets(cex)
    # a rule about an op still in flight (no barrier since it) is shown by a run that lands it late: with landings
    # first, the run shows the read landed before the push it flags, an order in which nothing goes wrong
    late = v.rule in IN_FLIGHT_RULES
    launches = replay.launch_schedules(program, land_last=[v.position.engine])
    # ... the flagged engine's own ops last of all (the other engines' landings fire first when the run is stuck):
    # the checker's run with landings last, its options the directed plans take too
    slow_run = next(la for la in launches if la.land_last is not None)
    slow: dict[str, Any] = {"lazy": True, "land_last": list(slow_run.land_last or ())}
    plans: list[dict[str, Any]] = [slow, {}] if late else [{}, {"lazy": True}]
    for e in sorted(targets)[:6]:
        plans += [{"priority": [e], **slow}, {"priority": [e]}] if late else [
            {"priority": [e]}, {"priority": [e], "lazy": True}]
    plans += [{"seed": s} for s in range(3)]
    # departures last (a multicast leaves its source only when nothing else may move), as the checker's last run
    # from launch and its last directed plan do (``replay.launch_schedules``, ``replay._plans``)
    plans.append({"hold": True})
    # from launch, in the checker's order (landings last at the end); an in-flight rule's run with landings last
    # first (the others land eagerly or at random), unless the directed plans, which began with it, were tried
    if late:
        launches = [slow_run] * (not targets) + [la for la in launches if la is not slow_run]
    try:
        if targets:
            for kw in plans:
                r = drive(program, trips, targets, stop_on=match, release=True, record=True, **kw)
                if shows(r):
                    return r
        for launch in launches:
            r = replay.run_launch(program, launch, trips, match, record=True)
            if shows(r):
                return r
    except (ValueError, KeyError):
        return None
    return None


def _involved(cex: dict[str, Any], v: Violation) -> list[str]:
    out: list[str] = [v.position.engine]

    def add(e: Any) -> None:
        if isinstance(e, str) and e not in out:
            out.append(e)

    pos = cex.get("positions")
    if isinstance(pos, dict):
        for e, p in pos.items():
            if p != "finished":
                add(e)
    add(cex.get("engine"))
    for k in ("read", "write"):
        if isinstance(cex.get(k), dict):
            add(cex[k].get("engine"))
    for x in cex.get("at", []) if isinstance(cex.get("at"), list) else []:
        if isinstance(x, dict):
            add(x.get("engine"))
    for e in re.findall(r"\(\d+,\d+\)\.[a-z]+", v.message):
        add(e)
    return out[:TIMELINE_LANES]


def _other_ops(cex: dict[str, Any], v: Violation) -> set[tuple[str, tuple[int, ...]]]:
    """The other op of a racing pair (and any op the counterexample points at besides the violation's)."""
    out: set[tuple[str, tuple[int, ...]]] = set()
    for k in ("read", "write"):
        x = cex.get(k)
        if isinstance(x, dict) and isinstance(x.get("engine"), str) and isinstance(x.get("path"), list):
            out.add((x["engine"], tuple(x["path"])))
    for x in cex.get("at", []) if isinstance(cex.get("at"), list) else []:
        if isinstance(x, dict) and isinstance(x.get("engine"), str) and isinstance(x.get("path"), list):
            out.add((x["engine"], tuple(x["path"])))
    if v.position.path is not None:
        out.discard((v.position.engine, v.position.path))
    return out


def _timeline_picture(title: str, events: Sequence[tuple[int, str, str, str, bool]], lanes: Sequence[str],
                      target: int = -1) -> Picture:
    """Events (time index, kind, engine, text, highlighted) as a timeline: one lane per engine, time to the right
    (positions given: neato -n2). The event at time index ``target`` (the op that breaks the rule) gets the SVG id
    ``offending``, the other highlighted ones ``racing`` (a page links to them); a gap in the time indices (events
    of engines not drawn, or before the window) is marked between the two columns."""
    dx, dy, left = 150, 70, 230
    lane_y = {e: (len(lanes) - 1 - i) * dy + 40 for i, e in enumerate(lanes)}
    lines: list[str] = []
    for e in lanes:
        lines.append(_node_id("lane", e) + attrs_text({"label": e, "shape": "plaintext", "pos": f"70,{lane_y[e]}!",
                                                        "fontsize": 11}))
    last: dict[str, str] = {}
    for col, (t, kind, engine, text, hot) in enumerate(events):
        nid = f"ev{col}"
        label = _short(text, engine)
        if col == 0 and t > 0:
            lines.append("gap0" + attrs_text({"label": f"(#0 to #{t - 1} not shown)", "shape": "plaintext",
                                              "fontsize": 8, "fontcolor": "gray40",
                                              "pos": f"{left},{len(lanes) * dy + 20}!"}))
        if col and t - events[col - 1][0] > 1:
            lines.append(f"gap{col}" + attrs_text({"label": f"({t - events[col - 1][0] - 1} more)", "shape": "plaintext",
                                                   "fontsize": 8, "fontcolor": "gray40",
                                                   "pos": f"{left + col * dx - dx // 2},{len(lanes) * dy + 20}!"}))
        ident = {"id": "offending" if t == target else "racing"} if hot else {}
        lines.append(nid + attrs_text({**ident,
            "label": f"#{t} {label}", "shape": "box" if kind == "step" else "note", "fontsize": 9,
            "style": "filled,rounded" if kind == "step" else "filled",
            "fillcolor": "#fcbba1" if hot else ("#f7f7f7" if kind == "step" else "#e5f5e0"),
            "color": ALERT if hot else "gray40", "penwidth": 2 if hot else 1,
            "width": 2.0, "height": 0.75, "fixedsize": "true",
            "pos": f"{left + col * dx},{lane_y[engine]}!"}))
        if engine in last:
            lines.append(f"{last[engine]} -> {nid} [color=gray70, arrowsize=0.5]")
        last[engine] = nid
    hot_nodes = [f"ev{i}" for i, ev in enumerate(events) if ev[4]]
    for a, b in itertools.pairwise(hot_nodes):
        lines.append(f"{a} -> {b} [color={quote(ALERT)}, style=dashed, constraint=false, label=\"no order between\", "
                     f"fontcolor={quote(ALERT)}, fontsize=9]")
    dot = digraph("timeline", lines, graph={"fontname": "Helvetica", "labelloc": "t", "label": title,
                                             "splines": "true", "outputorder": "edgesfirst"},
                  node={"fontname": "Helvetica"})
    return Picture("timeline", title, dot, layout="neato")


def _short(text: str, engine: str) -> str:
    """A transition's text without its engine, broken into two lines."""
    t = text
    if t.startswith(engine + " at "):
        t = t[len(engine) + 4:]
    elif t.startswith(engine + "'s "):
        t = t[len(engine) + 3:]
    m = re.match(r"(.*) \(issued at (.*)\) (lands|completes|leaves the source)(.*)$", t)
    if m:
        t = f"{m.group(1)}\n{m.group(3)}{m.group(4)} (from {m.group(2)})"
    # At most 26 characters a line, so the text stays inside its box (2 in wide at 9 pt).
    return "\n".join(ln for part in t.split("\n") for ln in textwrap.wrap(part, 26, break_on_hyphens=False) or [""])


def _schedule_lines(events: Sequence[tuple[int, str, str, str, bool]]) -> list[str]:
    return [f"  #{t} {text}" + ("   <-- here" if hot else "") for t, _k, _e, text, hot in events[-8:]]


def explain_violation(program: Program, cex: dict[str, Any], result: Result) -> Explanation:
    """The narrative and timeline of a rule violation or race (module docstring)."""
    rule = str(cex.get("rule", obligation.parse(result.name).kind))
    headline = result.reason or str(cex.get("summary", rule))
    v = _violation_of(cex)
    lines: list[str] = []
    summary = cex.get("summary")
    if isinstance(summary, str) and summary != headline:
        lines.append(summary)
    pos = cex.get("positions")
    if isinstance(pos, dict) and pos:
        lines.append("the checker's candidate state: " + "; ".join(_where(program, e, p) for e, p in pos.items())[:600])
    if v is None:
        lines.append("the counterexample names no single op (nothing to draw as a schedule)")
        return Explanation(result.family, result.name, rule, named(program, headline),
                           tuple(named(program, ln) for ln in lines), ())
    broken = str(v.position)
    trips = cex.get("trips") if isinstance(cex.get("trips"), dict) else None
    replayed: dict[str, Any] = cex["replay"] if isinstance(cex.get("replay"), dict) else {}
    trips = trips or (replayed.get("trips") if isinstance(replayed.get("trips"), dict) else None)
    if v.position.path is not None:
        broken = _step_text(program, v.position.engine, v.position.path, broken, v.position.iteration, trips)
    lines.append(f"rule {v.rule} (docs/semantics.md) broken at {broken}: {v.message}")
    run = reproduce(program, cex, v)
    trace: list[TraceStep]
    if run is not None:
        trace = list(run.trace)
        lines.append(f"the interpreter shows it after {len(trace)} transitions ({run.status})")
    elif isinstance(cex.get("trace"), list):
        trace = [TraceStep("step", _engine_of(str(t)), str(t), ()) for t in cex["trace"]]
        lines.append(f"the explorer's schedule: {len(trace)} transitions")
    else:
        lines.append("no recorded schedule reproduced it here; the checker's replay did "
                     f"({cex.get('replayed_by', (cex.get('replay') or {}).get('replayed_by', 'replay'))})")
        return Explanation(result.family, result.name, rule, named(program, headline),
                           tuple(named(program, ln) for ln in lines), ())
    if not trace:
        # Broken on reaching the first op (before any transition): the schedule is that one op.
        trace = [TraceStep("step", v.position.engine, f"{v.position} (reached at the start)", v.position.path or (),
                           v.position.iteration)]
    lanes = _involved(cex, v)
    others = _other_ops(cex, v)
    # The violating transition: the last one of the violation's engine at its op (a run stops right after it).
    target_idx = -1
    for i in range(len(trace) - 1, -1, -1):
        st = trace[i]
        if st.engine == v.position.engine and (v.position.path is None or st.path == v.position.path):
            target_idx = i
            break
    if target_idx < 0:
        target_idx = len(trace) - 1
    other_idx: set[int] = set()
    for o_engine, o_path in others:
        # The op itself (its step) rather than its landing; a landing when the op's step is not in the trace.
        hits = [i for i in range(target_idx, -1, -1) if trace[i].engine == o_engine and trace[i].path == o_path]
        steps = [i for i in hits if trace[i].kind == "step"]
        if steps or hits:
            other_idx.add((steps or hits)[0])
    picked = [i for i in range(target_idx + 1) if trace[i].engine in lanes]
    keep = set(picked[-TIMELINE_EVENTS:]) | other_idx | {target_idx}
    events = [(i, trace[i].kind, trace[i].engine, trace[i].text, i == target_idx or i in other_idx)
              for i in sorted(keep) if trace[i].engine in lanes or i == target_idx]
    lanes = [e for e in lanes if any(ev[2] == e for ev in events)]
    for ev in events:
        if ev[2] not in lanes:
            lanes.append(ev[2])
    if other_idx:
        o = min(other_idx)
        a, b = trace[o], trace[target_idx]
        lines.append(f"racing pair: #{o} {_step_text(program, a.engine, a.path, a.text, a.iteration, trips)}  and  "
                     f"#{target_idx} {_step_text(program, b.engine, b.path, b.text, b.iteration, trips)}"
                     " — nothing orders them (no happens-before)")
    lines.append("the schedule's last steps of the engines involved:")
    lines += _schedule_lines([(t, k, e, _step_text(program, e, trace[t].path, x, trace[t].iteration, trips), hot)
                              for t, k, e, x, hot in events])
    title = f"{v.rule}: the schedule (red: {'the racing pair' if other_idx else 'the op that breaks the rule'})"
    events = [(t, k, e, named(program, x), hot) for t, k, e, x, hot in events]
    return Explanation(result.family, result.name, rule, named(program, headline),
                       tuple(named(program, ln) for ln in lines),
                       (_timeline_picture(title, events, lanes, target_idx),))


def _where(program: Program, engine: str, p: Any) -> str:
    if isinstance(p, dict):
        return f"{engine} at {_at(program, engine, tuple(p.get('path') or []))} {p.get('op', '')}".rstrip()
    return f"{engine} {p}"


def _engine_of(text: str) -> str:
    m = re.match(r"(\(\d+,\d+\)\.[a-z]+)", text)
    return m.group(1) if m else "?"


# --------------------------------------------------------------------------------------------- memory


def explain_memory(program: Program, cex: dict[str, Any], result: Result) -> Explanation:
    """The narrative and memory-map picture of an overlap (or out-of-range) counterexample."""
    headline = named(program, result.reason or str(cex.get("summary", "memory")))
    site_v = cex.get("site")
    site = Site(int(site_v[0]), int(site_v[1])) if isinstance(site_v, list) and len(site_v) == 2 else None
    space = str(cex.get("space", "local"))
    bad = [int(b) for b in cex.get("buffers", []) if isinstance(b, int)]
    addr = cex.get("address") if isinstance(cex.get("address"), int) else None
    phases = program.phase_of_section()
    phase = phases[program.buffers[bad[0]].section] if bad else None
    rows: list[tuple[str, int, int, bool]] = []
    for at in program.memory:
        b = program.buffers[at.buf]
        if (site is None or b.site == site) and b.space.value == space and (
                phase is None or phases[b.section] == phase):
            rows.append((buffer_name(program, b.id).split("@")[0]
                         + (f" (alias of {program.buffers[b.alias_of].name})" if b.alias_of is not None else ""),
                         at.offset, at.offset + at.size, b.id in bad))
    for r in program.resident:
        if site is None or r.site == site:
            rows.append((f"resident {r.tensor}", r.offset, r.offset + r.size, False))
    rows.sort(key=lambda x: (x[1], x[2]))
    t = program.target
    lines = [f"memory map of {site} ({space}{'' if phase is None else f', phase {phase}'}): "
             f"usable bytes [{t.reserved_base}, {t.local_bytes})"]
    for name, lo, hi, hot in rows:
        lines.append(f"  [{lo}, {hi}) {hi - lo} B  {name}" + ("   <-- overlaps" if hot else ""))
    if addr is not None and len(bad) >= 2:
        lines.append(f"byte {addr} belongs to both {program.buffers[bad[0]].name} and {program.buffers[bad[1]].name}: "
                     f"they are live at once on {site}")
    return Explanation(result.family, result.name, str(cex.get("rule", "memory")), headline, tuple(lines),
                       (_memory_picture(program, site, space, rows, addr),))


def _memory_picture(program: Program, site: Site | None, space: str, rows: Sequence[tuple[str, int, int, bool]],
                    addr: int | None) -> Picture:
    t = program.target
    lo = min([t.reserved_base, *(r[1] for r in rows)]) if rows else t.reserved_base
    hi = max([r[2] for r in rows] + [lo + 1])
    width = 720.0
    scale = width / max(hi - lo, 1)
    left, top, lane = 40.0, 30.0, 34.0
    lines: list[str] = []
    n = len(rows)
    for i, (name, a, b, hot) in enumerate(rows):
        w = max((b - a) * scale, 4.0)
        x = left + (a - lo) * scale + w / 2
        y = top + (n - i) * lane
        lines.append(f"m{i}" + attrs_text({"label": f"{name}\n[{a}, {b})", "shape": "box", "style": "filled",
                                           "fillcolor": "#fcbba1" if hot else PALETTE[i % len(PALETTE)],
                                           "color": ALERT if hot else "gray30", "penwidth": 2 if hot else 1,
                                           "width": round(w / 72, 3), "height": 0.42, "fixedsize": "true",
                                           "fontsize": 9, "pos": f"{x:.1f},{y:.1f}!"}))
    axis_y = top
    for k, (label, at) in enumerate(((str(lo), lo), (str(hi), hi))):
        lines.append(f"axis{k}" + attrs_text({"label": f"{label} B", "shape": "plaintext", "fontsize": 9,
                                              "pos": f"{left + (at - lo) * scale:.1f},{axis_y:.1f}!"}))
    if addr is not None:
        x = left + (addr - lo) * scale
        lines.append("addr" + attrs_text({"label": f"byte {addr}", "shape": "plaintext", "fontcolor": ALERT,
                                          "fontsize": 10, "pos": f"{x:.1f},{top + (n + 1) * lane:.1f}!"}))
        lines.append("addr_base" + attrs_text({"label": "", "shape": "point", "width": 0.05, "color": ALERT,
                                               "pos": f"{x:.1f},{axis_y + 8:.1f}!"}))
        lines.append(f"addr -> addr_base [color={quote(ALERT)}, arrowhead=none, style=dashed]")
    title = f"memory map of {site} ({space}), bytes to scale (red: the overlapping buffers)"
    dot = digraph(R.MEMORY_MAP, lines, graph={"fontname": "Helvetica", "labelloc": "t", "label": title},
                  node={"fontname": "Helvetica"})
    return Picture(R.MEMORY_MAP, title, dot, layout="neato")


# --------------------------------------------------------------------------------------------- entry points


def explain_result(program: Program, result: Result) -> Explanation:
    """The explanation of one refuted result (module docstring). A result that is not refuted, or has no
    counterexample, gets its reason as the narrative and no picture."""
    cex = result.counterexample or {}
    kind = cex.get("kind")
    if result.verdict != Verdict.REFUTED or not cex:
        return Explanation(result.family, result.name, str(cex.get("rule", "")), result.reason or result.verdict.value,
                           (), ())
    if kind == R.DEADLOCK:
        return explain_deadlock(program, cex, result)
    if kind == "memory":
        return explain_memory(program, cex, result)
    replay = cex.get("replay") if isinstance(cex.get("replay"), dict) else {}
    dl = replay.get(R.DEADLOCK) if isinstance(replay, dict) else None
    if isinstance(dl, dict) and dl.get("stuck"):
        # The rule shows as a hang (an equality wait overshot, a flag wiped): explain the hang, keep the rule's words.
        inner = explain_deadlock(program, dl, result)
        rule = str(cex.get("rule", R.DEADLOCK))
        summary = cex.get("summary")
        first = [f"{rule}: {named(program, summary)}"] if isinstance(summary, str) else []
        return attrs.evolve(inner, rule=rule, narrative=(*first, *inner.narrative))
    return explain_violation(program, cex, result)


def explain_report(program: Program, report: Report) -> list[Explanation]:
    """One explanation per refuted obligation of ``report``, in report order, with the source lines its
    counterexample names (``report.sources``: a program read from TT-Lang or C++)."""
    from verispatial.report.hostargs import arg_lines
    from verispatial.report.sources import obligation_sources
    from verispatial.report.text import at_lines, source_lines

    ops = obligation_sources(program, report)  # a refutation naming no op: the line of the op it is about
    return [attrs.evolve(explain_result(program, r), sources=tuple(source_lines(r.counterexample or {})),
                         args=tuple(arg_lines(r.counterexample)),
                         at=tuple(at_lines(r.counterexample or {}, ops.get(r.name))))
            for r in report.results if r.verdict == Verdict.REFUTED]


def explanation_lines(exps: Sequence[Explanation], files: dict[int, list[str]] | None = None) -> list[str]:
    """The text form: per explanation its headline, narrative and (``files``: by explanation index) the picture
    files written."""
    out: list[str] = []
    for i, x in enumerate(exps):
        out.append(f"refuted {x.family}/{x.name}: {x.headline}")
        out += [f"    {line}" for line in x.args]
        out += [f"    {line}" for line in x.at] if x.at else [f"    at {src}" for src in x.sources]
        out += [f"    {ln}" for ln in x.narrative]
        for f in (files or {}).get(i, []):
            out.append(f"    picture: {f}")
    return out
