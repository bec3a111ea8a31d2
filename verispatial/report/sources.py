"""Counterexamples pointed at the user's source: every op a counterexample names by ``engine`` and ``path`` gets the
``source`` its front end recorded (``ir/source.py``; ``source_json``), so the text report, ``--json``, SARIF, JUnit and explain can say
``matmul.py:97: c_dfb.reserve()`` where the program was read from TT-Lang or tt-metal C++.

Untrusted presentation only: it adds fields to counterexamples after every verdict is settled and changes none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from verispatial.certify.replay import trip_words
from verispatial.certify.report import Report, Result
from verispatial.ir.ops import CONTAINERS, Loop, McastSetValid, Op, SemInc, SemIncMcast, SemRmw, SemSet, SemWait
from verispatial.ir.program import Program
from verispatial.ir.source import OpPath, SourceLoc, iteration_words


def _spot_loc(program: Program, x: dict[str, Any]) -> SourceLoc | None:
    engine, path = x.get("engine"), x.get("path")
    if isinstance(engine, str) and isinstance(path, list) and all(isinstance(i, int) for i in path):
        return program.source_of(engine, tuple(path))
    return None


def loop_index_text(program: Program, engine: str, path: OpPath | None, env: dict[str, int],
                    trips: dict[str, int]) -> str:
    """The C++ loop indices of the op at ``path`` of ``engine`` where they are not the program's (``LoopIndex``:
    ``for (i = start_id; ...)``), at the program's loop indices ``env`` and trip values ``trips``: ``i = 11`` (outer
    loops first, comma-separated); "" when every enclosing loop counts as the program does, or for a program no front
    end read."""
    ep = next((e for e in program.programs if e.key == engine), None)
    if ep is None or not ep.sources or not path:
        return ""
    table = dict(ep.sources)
    parts: list[str] = []
    op: Any = None
    for j in range(1, len(path)):
        try:
            op = (ep.ops if j == 1 else op.body)[path[j - 1]]
        except (IndexError, AttributeError):
            return ""
        loc = table.get(tuple(path[:j]))
        var = getattr(op, "var", None)
        if isinstance(op, Loop) and loc is not None and loc.index is not None and isinstance(var, str) and var in env:
            v = loc.index.value(env[var], env, trips)
            if v is not None:
                parts.append(f"{loc.index.name} = {v}")
    return ", ".join(parts)


def _annotate(program: Program, x: Any, found: list[SourceLoc], trips: dict[str, int] | None = None) -> Any:
    if isinstance(x, list):
        return [_annotate(program, y, found, trips) for y in x]
    if not isinstance(x, dict):
        return x
    if isinstance(x.get("trips"), dict):  # the trips of this part of the counterexample (its own, its replay's)
        trips = {k: v for k, v in x["trips"].items() if isinstance(v, int)}
    out = {k: _annotate(program, v, found, trips) for k, v in x.items()}
    loc = _spot_loc(program, x)
    if loc is not None and "source" not in x:
        out["source"] = source_json(loc)
        found.append(loc)
        it = x.get("iteration")
        if isinstance(it, list) and all(isinstance(e, list) and len(e) == 2 for e in it):
            env = {str(v): int(i) for v, i in it if isinstance(i, int)}
            text = loop_index_text(program, str(x["engine"]), tuple(x["path"]), env, trips or {})
            if text:
                out["source_iteration"] = text  # the C++ loop index where it is not the program's
    return out


def source_json(loc: SourceLoc) -> dict[str, Any]:
    """A location as a counterexample carries it: its fields and ``at``, the ``file:line:column: text`` form; for an
    op of an included helper, ``called_at``, the kernel's call of it, in the same form."""
    out = {"file": loc.file, "line": loc.line, "column": loc.column, "text": loc.text, "at": str(loc)}
    if loc.called_at is not None:  # an op of an included helper: the kernel's call of it
        out["called_at"] = source_json(loc.called_at)
    return out


def source_of_json(d: Any) -> SourceLoc | None:
    """Inverse of ``source_json``; None for anything else."""
    if isinstance(d, dict) and isinstance(d.get("file"), str) and isinstance(d.get("line"), int):
        return SourceLoc(d["file"], d["line"], int(d.get("column") or 0), str(d.get("text", "")),
                         source_of_json(d.get("called_at")))
    return None


def located_sources(cex: Any) -> list[SourceLoc]:
    """Every source location an annotated counterexample names, in order, without repeats."""
    out: list[SourceLoc] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            loc = source_of_json(x.get("source"))
            if loc is not None and loc not in out:
                out.append(loc)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(cex)
    return out


def located(program: Program, cex: dict[str, Any]) -> tuple[dict[str, Any], list[SourceLoc]]:
    """``cex`` with a ``source`` field beside every (engine, path) it names that has a recorded location, and those
    locations in the order they appear (repeats removed)."""
    found: list[SourceLoc] = []
    out = _annotate(program, cex, found)
    seen: list[SourceLoc] = []
    for loc in found:
        if loc not in seen:
            seen.append(loc)
    return out, seen


def source_locations(program: Program, r: Result) -> list[SourceLoc]:
    """The user-source locations a result's counterexample names (empty without a counterexample or sources)."""
    if not r.counterexample:
        return []
    return located(program, r.counterexample)[1]


def _ops_with_paths(ops: tuple[Op, ...], prefix: OpPath = ()) -> Iterator[tuple[OpPath, Op]]:
    for i, op in enumerate(ops):
        path = (*prefix, i)
        yield path, op
        if isinstance(op, CONTAINERS):
            yield from _ops_with_paths(op.body, path)


def subject_ops(program: Program, subject: object) -> list[tuple[str, OpPath]]:
    """The ops an obligation about a semaphore word, a buffer or a tensor is about, as (engine key, op path), most
    telling first: for word ``sem@site`` the waits on it, then its sets, then the remote writes landing on it
    (``SemInc`` at the site, ``SemIncMcast`` / ``McastSetValid`` to a group holding it); for a buffer or a tensor
    every op naming it (``ids.op_ids``), in program order. Empty for any other subject."""
    from verispatial.ir.ids import op_ids
    from verispatial.ir.obligation import BufferRef, TensorRef, WordRef

    tiers: list[list[tuple[str, OpPath]]] = [[], [], []]
    for ep in program.programs:
        for path, op in _ops_with_paths(ep.ops):
            if isinstance(subject, WordRef):
                if isinstance(op, SemWait | SemSet) and op.sem == subject.sem and ep.site == subject.site:
                    tiers[0 if isinstance(op, SemWait) else 1].append((ep.key, path))
                elif (isinstance(op, SemInc) and op.sem == subject.sem and op.at == subject.site) or \
                        (isinstance(op, SemRmw) and op.sem == subject.sem and ep.site == subject.site):
                    tiers[2].append((ep.key, path))
                elif isinstance(op, SemIncMcast | McastSetValid) and op.sem == subject.sem and \
                        subject.site in program.groups[op.group].destinations():
                    tiers[2].append((ep.key, path))
            elif isinstance(subject, BufferRef | TensorRef):
                kind, want = ("buffer", subject.buffer) if isinstance(subject, BufferRef) else ("tensor", subject.tensor)
                if any(k == kind and v == want for k, v in op_ids(op)):
                    tiers[0].append((ep.key, path))
    return [x for tier in tiers for x in tier]


def obligation_sources(program: Program, report: Report) -> dict[str, SourceLoc]:
    """Where the op each unproved obligation names without a counterexample came from (a failed-to-prove result has
    none to locate), by obligation name: its own op, an ordering's first op, a deadlock component's engine
    (``ObligationId.op``); for an obligation about a semaphore word, a buffer or a tensor, the first of the ops it is
    about that a front end located (``subject_ops``: a word's first wait). Obligations naming none of these, or ops no
    front end located, are left out."""
    from verispatial.ir import obligation

    out: dict[str, SourceLoc] = {}
    if not any(ep.sources for ep in program.programs):
        return out
    for r in report.results:
        if r.verdict.value == "proved" or located_sources(r.counterexample):
            continue
        try:
            oid = obligation.parse(r.name)
        except obligation.BadObligationId:
            continue
        op = oid.op
        spots = [(op.engine, op.path)] if op is not None and op.path else subject_ops(program, oid.subject)
        for engine, path in spots:
            loc = program.source_of(engine, path)
            if loc is not None:
                out[r.name] = loc
                break
    return out


def with_sources(report: Report, program: Program) -> Report:
    """``report`` with every counterexample located in the user's source; the same report when the program records
    no source locations (every program not read by a front end)."""
    if not any(ep.sources for ep in program.programs):
        return report
    results = tuple(_cxx_iteration(program, attrs.evolve(r, counterexample=located(program, r.counterexample)[0]))
                    if r.counterexample else r for r in report.results)
    return attrs.evolve(report, results=results)


def _cxx_iteration(program: Program, r: Result) -> Result:
    """``r`` with the loop iteration its reason names (``ir.source.iteration_words``, the program's loop indices)
    preceded by the C++ loop variables' values where they differ (``at i = 16 (loop iteration i=7)``): the bare
    ``i=7`` read as the C++ variable, which is 16 there (``for (i = start_id; ...)``)."""
    cex = r.counterexample or {}
    it, engine, path = cex.get("iteration"), cex.get("engine"), cex.get("path")
    if not (isinstance(it, dict) and it and isinstance(engine, str) and isinstance(path, list)):
        return r
    trips = {k: v for k, v in (cex.get("trips") or {}).items() if isinstance(v, int)}
    env = {str(k): v for k, v in it.items() if isinstance(v, int)}
    text = loop_index_text(program, engine, tuple(path), env, trips)
    said = iteration_words(env)
    if not text or said not in r.reason:
        return r
    meant = f"{text} ({said})"
    out = {**cex, "source_iteration": text}
    if isinstance(cex.get("summary"), str):
        out["summary"] = cex["summary"].replace(said, meant, 1)
    return attrs.evolve(r, reason=r.reason.replace(said, meant, 1), counterexample=out)


def with_shape_values(report: Report, classes: Sequence[Any]) -> Report:
    """``report`` with a ``shape`` field beside the ``trips`` of every counterexample that sets a ``--range``
    parameter's trip: a TT-Lang shape class runs parameter ``NAME = m * t + base`` as trip ``NAME = t``
    (``frontends/ttlang/values.SymClass``), so ``K: 0`` of the class ``K in 128..1024 step 64`` is ``K=128``, the
    value the engineer passed. ``classes``: objects with ``name``, ``m``, ``base`` (a shape class of the import)."""
    by_name = {c.name: c for c in classes}
    if not by_name:
        return report

    def values_of(cex: dict[str, Any]) -> dict[str, int]:
        trips = cex.get("trips")
        if not isinstance(trips, dict) or "shape" in cex:
            return {}
        return {k: by_name[k].m * v + by_name[k].base for k, v in trips.items() if k in by_name and isinstance(v, int)}

    def shaped(r: Result) -> Result:
        cex = r.counterexample
        values = values_of(cex) if cex else {}
        if not cex or not values:
            return r
        trips = {k: v for k, v in cex["trips"].items() if isinstance(v, int)}
        # A reason names its trips (certify.replay.trip_words) after "with" (a deadlock's run) or "when" (a balance,
        # an unwritten output): "M=1" under the shape's own name read as a value outside the range; it names the
        # shape's value, the trip beside it. The trips end where no further digit or name follows (M=1, not M=10).
        said = re.compile(rf"( with | when ){re.escape(trip_words(trips))}(?![\w=])")
        meant = trip_words(trips, values)

        def shown(text: str) -> str:
            return said.sub(lambda m: m.group(1) + meant, text, count=1)
        out: dict[str, Any] = {}
        for k, v in cex.items():  # right after the trips it explains
            out[k] = shown(v) if k == "summary" and isinstance(v, str) else v
            if k == "trips":
                out["shape"] = values
        return attrs.evolve(r, counterexample=out, reason=shown(r.reason))

    return attrs.evolve(report, results=tuple(shaped(r) for r in report.results))
