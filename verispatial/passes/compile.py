"""``compile_model``: every op of a model graph through the pipeline, each section certified by the checker."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from verispatial import atomic
from verispatial.certify.certificate import derive_certificate
from verispatial.certify.report import Report
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.driver.shared import SharedSections
from verispatial.ir.graph import ModelGraph
from verispatial.ir.ops import Loop, Op
from verispatial.ir.program import Program
from verispatial.ir.section import Section
from verispatial.ir.serialize import dumps
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment
from verispatial.passes.pipeline import Pipeline

Progress = Callable[[str], None]


@attrs.frozen(eq=False)
class CompiledSection:
    """One op's section: its scheduled ``program``, the passes' certificate ``fragments``, the checker's ``report``
    (None when not certified) and the combined ``certificate`` (the checker's re-derivable certificate plus the
    fragments under ``passes``); times in seconds."""

    name: str
    op: str
    program: Program
    fragments: tuple[Fragment, ...]
    report: Report | None
    certificate: dict[str, Any] | None
    compile_seconds: float
    certify_seconds: float

    @property
    def engine_programs(self) -> int:
        return len(self.program.programs)

    @property
    def ops(self) -> int:
        """Ops over every engine program, loop headers included (each op counted once, not per iteration)."""
        return sum(_count(ep.ops) for ep in self.program.programs)


def _count(ops: tuple[Op, ...]) -> int:
    return sum(1 + (_count(o.body) if isinstance(o, Loop) else 0) for o in ops)


def compile_section(graph: ModelGraph, op_index: int, target: Target, pipeline: Pipeline | None = None) -> tuple[Program, list[Fragment]]:
    """Run the pipeline on op ``op_index`` of ``graph``; raises ``PassRefused`` naming the pass, op and reason."""
    op = graph.ops[op_index]
    sec, frags = (pipeline or Pipeline()).run(Section(f"{graph.name}.{op.name}", graph, op), target)
    assert sec.program is not None
    return sec.program, frags


def untimed(fragments: list[Fragment] | tuple[Fragment, ...]) -> list[Fragment]:
    """The passes' certificate fragments without their run times (``seconds``): a certificate is a function of the
    program alone, the same bytes from every run (tests/test_decode_steps.py)."""
    return [{k: v for k, v in f.items() if k != "seconds"} for f in fragments]


def compile_model(graph: ModelGraph, target: Target, out_dir: str | Path | None = None,
                  progress: Progress | None = None, *, pipeline: Pipeline | None = None,
                  check: bool = True, cache: ProofCache | None = None, share: bool = True) -> list[CompiledSection]:
    """Compile every op of ``graph`` for ``target`` into one section each and (``check``) certify each.

    Every section is compiled before any is certified, so a pass refusal (``PassRefused``: the first op a pass
    refuses; nothing is dropped) comes before any solver work. With ``out_dir``, writes
    ``<out_dir>/<op>.program.json`` and ``<op>.certificate.json`` per section, all at the end: they are written into
    a temporary directory beside ``out_dir`` and swapped in only once every section is done, so a refusal or an
    interruption leaves nothing half-written (``write_sections``). ``progress`` receives one line per step.
    ``cache`` is the proof cache the sections share (default: a fresh one; one over a ``ProofStore`` also reuses
    and keeps proofs on disk, ``driver/store.py``). ``share``: sections equal up to their tensor and trip names are
    certified once and share the report and certificate (``driver/shared.py``); False certifies every section
    itself (the benchmark's baseline).
    """
    say = progress or (lambda _m: None)
    n = len(graph.ops)
    compiled: list[tuple[Program, list[Fragment], float]] = []
    for i, op in enumerate(graph.ops):
        say(f"[{i + 1}/{n}] {op.name}: compile")
        t0 = time.perf_counter()
        program, frags = compile_section(graph, i, target, pipeline)
        compiled.append((program, frags, time.perf_counter() - t0))
    out: list[CompiledSection] = []
    # Sections equal up to renaming (e.g. two residual adds) share their proofs; sections equal up to their tensor
    # and trip names (each decoder layer's copy of an op) share one whole report and certificate (``shared.py``).
    proofs = cache if cache is not None else ProofCache()
    shared = SharedSections()
    for i, (op, (program, frags, dt)) in enumerate(zip(graph.ops, compiled, strict=True)):
        report = cert = None
        t1 = time.perf_counter()
        if check:
            say(f"[{i + 1}/{n}] {op.name}: certify ({len(program.programs)} engine programs)")
            if share:
                report, derived = shared.certify(program, lambda q: certify(q, cache=proofs), with_certificate=True)
                assert derived is not None
            else:
                report = certify(program, cache=proofs)
                derived = derive_certificate(program, report)
            cert = {**derived, "passes": untimed(frags)}
        out.append(CompiledSection(op.name, op.kind, program, tuple(frags), report, cert, dt,
                                   time.perf_counter() - t1))
    if out_dir is not None:
        write_sections(out, Path(out_dir))
    return out


@attrs.frozen(eq=False)
class ComposedStep:
    """A model step's sections joined into one program (``compose``): the ``program``, compose's ``fragment``, the
    checker's ``report`` on the joined program (None when not certified) and its ``certificate`` (the re-derivable
    certificate plus ``compose``: the fragment, ``passes``: each section's content address of its pass fragments, and
    ``pass_fragments``: those fragments once per address); seconds."""

    program: Program
    fragment: Fragment
    report: Report | None
    certificate: dict[str, Any]
    compose_seconds: float
    certify_seconds: float

    @property
    def ops(self) -> int:
        return sum(_count(ep.ops) for ep in self.program.programs)


def compose_step(graph: ModelGraph, sections: list[CompiledSection], target: Target, *, check: bool = True,
                 progress: Progress | None = None, cache: ProofCache | None = None) -> ComposedStep:
    """Join the compiled ``sections`` of ``graph`` into one program: its ``state`` tensors carried, every boundary
    closed by a rendezvous, the sections' certificates shifted into the fragment; with ``check`` the joined program
    is certified (``certify``, with ``cache`` when given). Raises ``ComposeRefused`` naming the rule."""
    from verispatial.passes.compose import compose, content_key

    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    state = [t.name for t in graph.tensors if t.role.value == "state"]
    program, frag = compose([s.program for s in sections], state=state, target=target,
                            certificates=[s.certificate for s in sections])
    t1 = time.perf_counter()
    report = None
    if check:
        say(f"{program.name}: certify the composed program ({len(program.sections)} sections, "
            f"{len(program.programs)} engine programs)")
        report = certify(program, progress=say, cache=cache if cache is not None else True)
        cert: dict[str, Any] = derive_certificate(program, report)
    else:
        cert = {}
    # Every section's pass fragments by content address (``compose.content_key``): identical sections (each layer's
    # projections) share one entry of ``pass_fragments``.
    table: dict[str, list[Fragment]] = {}
    by_section: dict[str, str] = {}
    for s in sections:
        frags = untimed(s.fragments)
        by_section[s.name] = key = content_key(frags)
        table.setdefault(key, frags)
    if isinstance(frag.get("rendezvous"), dict) and cert.get("version", 0) >= 3:
        # The rendezvous places are the certificate's one ``rendezvous`` place entry (version 3), not stated twice.
        frag = {**frag, "rendezvous": {**frag["rendezvous"], "places": "places: the entry of kind rendezvous"}}
    cert = {**cert, "compose": frag, "passes": by_section, "pass_fragments": table}
    return ComposedStep(program, frag, report, cert, t1 - t0, time.perf_counter() - t1)


def certificate_path(program_path: str | Path) -> Path:
    """Where a program's certificate goes: ``NAME.program.json`` -> ``NAME.certificate.json`` (the layout ``gate``
    reads), ``NAME.json`` -> ``NAME.certificate.json``, anything else + ``.certificate.json``."""
    p = Path(program_path)
    if p.name.endswith(".program.json"):
        return p.with_name(p.name[: -len(".program.json")] + ".certificate.json")
    if p.suffix == ".json":
        return p.with_name(p.stem + ".certificate.json")
    return p.with_name(p.name + ".certificate.json")


def write_program(program: Program, certificate: dict[str, Any], path: str | Path) -> Path:
    """Write ``program`` to ``path`` and ``certificate`` beside it (``certificate_path``), each through a temporary
    file in the same directory moved into place, so nothing is half-written. Returns the certificate's path;
    raises ``OSError`` when the directory cannot be written."""
    out = Path(path)
    cert_path = certificate_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for dest, text in ((out, dumps(program) + "\n"), (cert_path, json.dumps(certificate, indent=1) + "\n")):
        atomic.write_text(dest, text)
    return cert_path


#: What ``write_sections`` writes into a sections directory, and all it may find there to replace.
SECTION_SUFFIXES = (".program.json", ".certificate.json")


def foreign_files(out_dir: Path) -> list[str]:
    """The entries of an existing ``out_dir`` that ``write_sections`` did not write (anything but a section's
    ``.program.json`` / ``.certificate.json``): a directory holding any is never replaced. Empty when ``out_dir``
    does not exist."""
    if not out_dir.is_dir():
        return []
    return sorted(e.name for e in out_dir.iterdir() if not (e.is_file() and e.name.endswith(SECTION_SUFFIXES)))


def write_sections(sections: list[CompiledSection], out_dir: Path) -> None:
    """Write each section's program and certificate as ``out_dir/<op>.program.json`` and
    ``out_dir/<op>.certificate.json`` — the layout ``gate`` reads — replacing everything ``out_dir`` held: the new
    directory is written beside it and swapped in by two renames, so a reader sees the old sections or the new ones,
    never a mixture, and sections that no longer exist do not linger. Raises ``FileExistsError`` when ``out_dir``
    holds anything else (``foreign_files``; nothing is replaced) and ``OSError`` when its parent cannot be
    written."""
    foreign = foreign_files(out_dir)
    if foreign:
        raise FileExistsError(f"{out_dir} holds files compile did not write ({', '.join(foreign[:3])}"
                              + (f", +{len(foreign) - 3} more" if len(foreign) > 3 else "") + "): not replaced")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    for s in sections:
        cert = s.certificate if s.certificate is not None else {"passes": list(s.fragments)}
        files[f"{s.name}.program.json"] = dumps(s.program) + "\n"
        files[f"{s.name}.certificate.json"] = json.dumps(cert, indent=1) + "\n"
    atomic.write_dir(out_dir, files)
