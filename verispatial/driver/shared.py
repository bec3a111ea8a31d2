"""Identical sections share one proof (issue 19, goal 2): a section is certified once per content address.

A compiled model holds many sections that differ only in the names of the tensors they read and write (every
decoder layer's ``q_proj`` is the same program over ``l<i>.x_norm``, ``l<i>.w_q``, ``l<i>.q``). ``canonical`` writes
a section in its canonical form: every indirect address's index buffer named (``Program.with_index_buffers``, as the
compositional slices do), the tensors renamed ``%t<i>`` and the trips ``%k<i>`` in declaration order, the program
named ``section`` and its sections ``s<i>``, source locations dropped (they name where an op was read from and change
no meaning). The key is the SHA-256 of that program's canonical JSON (``serialize.dumps``): every field any rule
reads is in it verbatim — ops, buffers with their ``persistent`` flag, semaphores with ``host_init``, groups,
memory map, resident tensors, tensor shapes, dtypes, roles and initial values, trip maxima, the target.

Equal keys mean equal programs up to a bijective renaming of tensor and trip names (and the program's and its
sections' names), and no obligation's verdict depends on what a tensor or trip is called, only on which ops name
the same one. ``SharedSections.certify`` therefore certifies the canonical program of a key once and gives every
section of that key the report with ``%t<i>`` / ``%k<i>`` written back as its own names. Only a report whose every
obligation proved is shared: a refutation needs its own replayed counterexample and a failure to prove is re-derived,
so a section of a key whose report is not all proved is certified itself. A section whose names could be mistaken
for canonical ones (a name holding ``%``) is never shared.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import attrs

from verispatial.certify.certificate import derive_certificate, program_digest
from verispatial.certify.report import Report, Result
from verispatial.ir.ids import Renaming
from verispatial.ir.program import Program, Resident, SectionSpan, Tensor, Trip
from verispatial.ir.serialize import dumps

_CANON = re.compile(r"%t(\d+)|%k(\d+)")


@attrs.frozen
class Canonical:
    """A section's canonical form: ``key`` (hex SHA-256 of ``program``'s JSON), the canonical ``program``, and the
    section's own names of ``%t<i>`` (``tensors[i]``) and ``%k<i>`` (``trips[i]``)."""

    key: str
    program: Program
    tensors: tuple[str, ...]
    trips: tuple[str, ...]

    def render(self, text: str) -> str:
        """``text`` of the canonical program in this section's names."""
        if "%" not in text:
            return text
        return _CANON.sub(lambda m: self.tensors[int(m[1])] if m[1] is not None else self.trips[int(m[2])], text)

    def render_json(self, x: Any) -> Any:
        """Every string (and key) of JSON data ``x`` through ``render``."""
        if isinstance(x, str):
            return self.render(x)
        if isinstance(x, list):
            return [self.render_json(v) for v in x]
        if isinstance(x, dict):
            return {self.render(k): self.render_json(v) for k, v in x.items()}
        return x


def _names(p: Program) -> list[str]:
    return ([p.name] + [t.name for t in p.tensors] + [t.name for t in p.trips] + [b.name for b in p.buffers]
            + [s.name for s in p.semaphores] + [s.name for s in p.sections])


def canonical(p: Program) -> Canonical | None:
    """``p`` in canonical form (module docstring), or None when a name of ``p`` holds ``%`` (its results could not
    be told from canonical names)."""
    if any("%" in n for n in _names(p)):
        return None
    q = p.with_index_buffers()
    tnames = {t.name: f"%t{i}" for i, t in enumerate(q.tensors)}
    knames = {t.name: f"%k{i}" for i, t in enumerate(q.trips)}
    ren = Renaming(tensor=tnames.__getitem__, trip=knames.__getitem__)
    prog = Program(
        "section", q.target,
        tuple(Tensor(tnames[t.name], t.shape, t.dtype, t.role, t.init) for t in q.tensors),
        tuple(b if b.shard is None else attrs.evolve(b, shard=attrs.evolve(b.shard, tensor=tnames[b.shard.tensor]))
              for b in q.buffers), q.semaphores, q.groups,
        tuple(Trip(knames[t.name], t.max) for t in q.trips),
        tuple(attrs.evolve(ep, ops=ren.ops(ep.ops), sources=()) for ep in q.programs),
        tuple(SectionSpan(f"s{i}", s.barrier_after) for i, s in enumerate(q.sections)),
        q.memory,
        tuple(Resident(tnames[r.tensor], r.site, r.offset, r.size, r.first_section, r.last_section)
              for r in q.resident))
    key = hashlib.sha256(dumps(prog).encode()).hexdigest()
    return Canonical(key, prog, tuple(t.name for t in q.tensors), tuple(t.name for t in q.trips))


def _result(r: Result, c: Canonical) -> Result:
    cex = c.render_json(r.counterexample) if r.counterexample is not None else None
    return Result(r.family, c.render(r.name), r.verdict, c.render(r.reason), cex, r.seconds,
                  tuple(c.render(a) for a in r.assumes))


def rename_report(report: Report, c: Canonical, p: Program, source: str | None = None) -> Report:
    """``report`` (of ``c.program``) as the report of section ``p``: every name, reason and counterexample in
    ``p``'s names. With ``source`` (the section it was certified for), each reason says where the proof came
    from and the report's time is zero (nothing was computed for ``p``)."""
    results = tuple(_result(r, c) for r in report.results)
    if source is None:
        return Report(p.name, report.target, results, report.seconds, report.cached)
    why = f" (proved for {source}, equal up to renaming; section content {c.key[:12]})"
    return Report(p.name, report.target, tuple(attrs.evolve(r, reason=r.reason + why, seconds=0.0) for r in results),
                  0.0, report.cached)


def rename_certificate(cert: dict[str, Any], c: Canonical, p: Program) -> dict[str, Any]:
    """The certificate of ``c.program`` (``derive_certificate``) as section ``p``'s: its program name and digest,
    its obligations in ``p``'s names. Places, program order and witnesses name no tensor or trip and are kept."""
    return {**cert, "program": p.name, "program_sha256": program_digest(p),
            "obligations": sorted(({k: c.render(v) if k in ("name", "reason") else v for k, v in o.items()}
                                   for o in cert["obligations"]), key=lambda o: (o["family"], o["name"]))}


@attrs.define
class _Class:
    source: str
    report: Report
    certificate: dict[str, Any] | None = None


class SharedSections:
    """Reports (and certificates) of sections by content address, for one compile run. ``computed`` counts the
    sections certified, ``shared`` those that took a report of an equal section."""

    def __init__(self) -> None:
        self._classes: dict[str, _Class] = {}
        self.computed = 0
        self.shared = 0

    def certify(self, p: Program, run: Callable[[Program], Report],
                with_certificate: bool = False) -> tuple[Report, dict[str, Any] | None]:
        """The report of section ``p`` and, with ``with_certificate``, its certificate (``derive_certificate``):
        taken from an equal section's whose every obligation proved, else ``run`` on the canonical program (or on
        ``p`` itself, when it has no canonical form or its key's report did not prove everything)."""
        c = canonical(p)
        got = self._classes.get(c.key) if c is not None else None
        if c is not None and got is not None and got.report.exit_code == 0:
            self.shared += 1
            if with_certificate and got.certificate is None:
                got.certificate = derive_certificate(c.program, got.report)
            cert = rename_certificate(got.certificate, c, p) if got.certificate is not None else None
            return rename_report(got.report, c, p, got.source), cert
        self.computed += 1
        if c is None:
            report = run(p)
            return report, derive_certificate(p, report) if with_certificate else None
        raw = run(c.program)
        cert0 = derive_certificate(c.program, raw) if with_certificate else None
        if got is None:
            self._classes[c.key] = _Class(p.name, raw, cert0)
        return rename_report(raw, c, p), rename_certificate(cert0, c, p) if cert0 is not None else None
