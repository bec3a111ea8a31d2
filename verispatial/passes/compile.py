"""``compile_model``: every op of a model graph through the pipeline, each section certified by the checker."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from verispatial import atomic
from verispatial.certify.certificate import derive_certificate
from verispatial.certify.report import Report, Result, Verdict
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.driver.shared import Canonical, canonical, rename_certificate, rename_report
from verispatial.errors import ComposeRefused
from verispatial.ir.graph import GraphOp, GraphTensor, ModelGraph
from verispatial.ir.ops import Loop, Op
from verispatial.ir.program import Program, walk
from verispatial.ir.section import Section
from verispatial.ir.serialize import dumps
from verispatial.ir.target import Target
from verispatial.ir.templated import Instance, TemplatedProgram, renamed
from verispatial.passes.base import Fragment
from verispatial.passes.pipeline import Pipeline

Progress = Callable[[str], None]


@attrs.define(eq=False)
class SectionClass:
    """The sections of a model graph that compile to one program up to their tensor names (``op_signature``): the
    ``program`` and pass ``fragments`` compiled for the first of them (``first``, whose graph tensor names are
    ``names``), its canonical form (``driver.shared.canonical``; None when it has none) and, once certified, the
    canonical program's ``report`` and ``certificate``."""

    first: str
    program: Program
    fragments: tuple[Fragment, ...]
    names: tuple[str, ...]
    canon: Canonical | None = None
    report: Report | None = None
    certificate: dict[str, Any] | None = None


@attrs.frozen(eq=False, slots=False)
class CompiledSection:
    """One op's section: its scheduled ``program``, the passes' certificate ``fragments``, the checker's ``report``
    (None when not certified) and the combined ``certificate`` (the checker's re-derivable certificate plus the
    fragments under ``passes``); times in seconds.

    A section is its class's program (``cls``, the sections that compile to one program up to their tensor names)
    with the class's tensors renamed to its own (``tensors``: its name of each tensor the class's program declares);
    ``program``, ``fragments``, ``report`` and ``certificate`` are built from the class's on first use (a
    300,000-op decode step never builds its 243 sections' programs to compose and certify them)."""

    name: str
    op: str
    cls: SectionClass
    tensors: tuple[str, ...]
    section_name: str
    compile_seconds: float
    certify_seconds: float
    #: The section's own report when it was certified itself (its class's report did not prove everything).
    own_report: Report | None = None

    @property
    def first(self) -> bool:
        """Whether this is the section its class was compiled for."""
        return self.cls.first == self.name

    def _maps(self) -> tuple[dict[str, str], dict[str, str]]:
        t = self.cls.program
        return dict(zip((x.name for x in t.tensors), self.tensors, strict=True)), {x.name: x.name for x in t.trips}

    @functools.cached_property
    def program(self) -> Program:
        if self.first:
            return self.cls.program
        tmap, kmap = self._maps()
        return renamed(self.cls.program, tmap, kmap, self.section_name)

    @functools.cached_property
    def fragments(self) -> tuple[Fragment, ...]:
        if self.first:
            return self.cls.fragments
        binding = dict(zip(self.cls.names, self._names(), strict=True))
        return tuple(_renamed_json(f, binding) for f in self.cls.fragments)

    def _names(self) -> tuple[str, ...]:
        """This section's graph tensor of each of the class's ``names`` (the first section's)."""
        tmap, _ = self._maps()
        return tuple(tmap.get(x, x) for x in self.cls.names)

    @property
    def exit_code(self) -> int | None:
        """The report's exit code (None when not certified), without renaming the class's report."""
        if self.own_report is not None:
            return self.own_report.exit_code
        return None if self.cls.report is None else self.cls.report.exit_code

    @functools.cached_property
    def report(self) -> Report | None:
        if self.own_report is not None:
            return self.own_report
        c = self._canonical()
        if self.cls.report is None or c is None:
            return None
        return rename_report(self.cls.report, c, self.program, None if self.first else self.cls.program.name)

    def _canonical(self) -> Canonical | None:
        c = self.cls.canon
        if c is None:
            return None
        # The class's canonical program with this section's names for its %t<i>: canonical() of the renamed program
        # (the renaming keeps the declaration order and is one to one), without writing the program again.
        tmap, _ = self._maps()
        return attrs.evolve(c, tensors=tuple(tmap[n] for n in c.tensors))

    @functools.cached_property
    def certificate(self) -> dict[str, Any] | None:
        report = self.report
        if report is None:
            return None
        if self.own_report is not None or self.cls.canon is None:
            derived = derive_certificate(self.program, report)
        else:
            if self.cls.certificate is None:
                assert self.cls.report is not None
                self.cls.certificate = derive_certificate(self.cls.canon.program, self.cls.report)
            c = self._canonical()
            assert c is not None
            derived = rename_certificate(self.cls.certificate, c, self.program)
        return {**derived, "passes": untimed(self.fragments)}

    @property
    def engine_programs(self) -> int:
        return len(self.cls.program.programs)

    @property
    def ops(self) -> int:
        """Ops over every engine program, loop headers included (each op counted once, not per iteration)."""
        return sum(_count(ep.ops) for ep in self.cls.program.programs)


def _renamed_json(x: Any, binding: dict[str, str]) -> Any:
    """A pass fragment of one section in another's tensor names: a string that is a tensor name, or a stage name
    ``<verb>_<tensor>`` (``lower``'s ``read_<tensor>`` / ``write_<tensor>``), is renamed; keys likewise."""
    if isinstance(x, str):
        got = binding.get(x)
        if got is not None:
            return got
        verb, sep, rest = x.partition("_")
        return f"{verb}{sep}{binding[rest]}" if sep and rest in binding else x
    if isinstance(x, list):
        return [_renamed_json(v, binding) for v in x]
    if isinstance(x, dict):
        return {_renamed_json(k, binding): _renamed_json(v, binding) for k, v in x.items()}
    return x


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


#: The fields of a graph op ``op_signature`` reads: one more and the signature would miss it (no class is shared).
_OP_FIELDS = ("name", "kind", "inputs", "output", "fn", "chain", "heads", "kv_heads", "transpose_b")


def op_signature(op: GraphOp, tensors: dict[str, GraphTensor]) -> tuple[str, tuple[str, ...]] | None:
    """What the pipeline reads of graph op ``op`` (``lower`` reads the op and the declarations of the tensors it
    names, nothing else of the graph), with the tensor names replaced by their order of first mention, and those
    names in that order: two ops of equal signatures compile to programs equal up to renaming those tensors
    (``tests/test_compile_classes.py`` compiles every op of a decode step both ways). None when the op has a field
    this function does not know (fail closed: compiled itself)."""
    if tuple(f.name for f in attrs.fields(GraphOp)) != _OP_FIELDS:
        return None
    refs = (*op.inputs, op.output, *(s.tensor for s in op.chain if s.tensor is not None))
    order = tuple(dict.fromkeys(refs))
    at = {n: i for i, n in enumerate(order)}
    body = [op.kind, [at[n] for n in op.inputs], at[op.output], op.fn,
            [[s.op, None if s.tensor is None else at[s.tensor], s.dtype] for s in op.chain],
            op.heads, op.kv_heads, op.transpose_b,
            [[list(t.shape), t.dtype, t.role.value] for t in (tensors[n] for n in order)]]
    return json.dumps(body), order


def compile_model(graph: ModelGraph, target: Target, out_dir: str | Path | None = None,
                  progress: Progress | None = None, *, pipeline: Pipeline | None = None,
                  check: bool = True, cache: ProofCache | None = None, share: bool = True) -> list[CompiledSection]:
    """Compile every op of ``graph`` for ``target`` into one section each and (``check``) certify each.

    Ops of one signature (``op_signature``: every decoder layer's copy of an op) are compiled once and the others
    renamed from it; with ``share`` such a class is also certified once, in its canonical form
    (``driver/shared.py``), and every section of it takes the report and certificate in its own names when every
    obligation proved (else each is certified itself). ``share`` False compiles and certifies every section itself
    (the benchmark's baseline).

    Every section is compiled before any is certified, so a pass refusal (``PassRefused``: the first op a pass
    refuses; nothing is dropped) comes before any solver work. With ``out_dir``, writes
    ``<out_dir>/<op>.program.json`` and ``<op>.certificate.json`` per section, all at the end: they are written into
    a temporary directory beside ``out_dir`` and swapped in only once every section is done, so a refusal or an
    interruption leaves nothing half-written (``write_sections``). ``progress`` receives one line per step.
    ``cache`` is the proof cache the sections share (default: a fresh one; one over a ``ProofStore`` also reuses
    and keeps proofs on disk, ``driver/store.py``).
    """
    say = progress or (lambda _m: None)
    n = len(graph.ops)
    by_name = {t.name: t for t in graph.tensors}
    classes: dict[str, SectionClass] = {}
    staged: list[tuple[SectionClass, tuple[str, ...], float]] = []
    for i, op in enumerate(graph.ops):
        say(f"[{i + 1}/{n}] {op.name}: compile")
        t0 = time.perf_counter()
        sig = op_signature(op, by_name) if share else None
        cls = classes.get(sig[0]) if sig is not None else None
        if cls is not None and sig is not None:
            binding = dict(zip(cls.names, sig[1], strict=True))
            tensors = tuple(binding[x.name] for x in cls.program.tensors)
            if not _renames_cleanly(cls.program, binding):
                cls = None
        if cls is None:
            program, frags = compile_section(graph, i, target, pipeline)
            cls = SectionClass(op.name, program, tuple(frags), sig[1] if sig is not None else ())
            if sig is not None:
                classes[sig[0]] = cls
            tensors = tuple(x.name for x in program.tensors)
        staged.append((cls, tensors, time.perf_counter() - t0))
    out: list[CompiledSection] = []
    proofs = cache if cache is not None else ProofCache()
    for i, (op, (cls, tensors, dt)) in enumerate(zip(graph.ops, staged, strict=True)):
        t1 = time.perf_counter()
        sec = CompiledSection(op.name, op.kind, cls, tensors, f"{graph.name}.{op.name}", dt, 0.0)
        if check:
            first = cls.first == op.name
            if first:
                say(f"[{i + 1}/{n}] {op.name}: certify ({len(cls.program.programs)} engine programs)")
                cls.canon = canonical(cls.program) if share else None
                target_program = cls.canon.program if cls.canon is not None else cls.program
                cls.report = certify(target_program, cache=proofs)
                if cls.canon is None:
                    sec = attrs.evolve(sec, own_report=cls.report)
            elif cls.report is None or cls.report.exit_code != 0 or cls.canon is None:
                # A class whose report did not prove everything: every section is certified itself (a refutation
                # needs its own replayed counterexample).
                say(f"[{i + 1}/{n}] {op.name}: certify ({len(cls.program.programs)} engine programs)")
                sec = attrs.evolve(sec, own_report=certify(sec.program, cache=proofs))
            sec = attrs.evolve(sec, certify_seconds=time.perf_counter() - t1)
        out.append(sec)
    if out_dir is not None:
        write_sections(out, Path(out_dir))
    return out


def _template_certificate(s: CompiledSection, sections: list[CompiledSection]) -> dict[str, Any] | None:
    """The certificate of ``s``'s class program (the first section of the class, in its own names)."""
    head = next((x for x in sections if x.cls is s.cls and x.first), None)
    if head is None:
        head = CompiledSection(s.cls.first, s.op, s.cls, tuple(x.name for x in s.cls.program.tensors),
                               s.cls.program.name, 0.0, 0.0)
    return head.certificate


def _renames_cleanly(p: Program, binding: dict[str, str]) -> bool:
    """Whether renaming ``p``'s tensors by ``binding`` keeps its canonical form (``driver.shared.canonical``): every
    declared tensor is bound, no name holds ``%``, and no indirect address's index tensor changes its name (the
    canonical form keeps that name as it is)."""
    if any(x.name not in binding or "%" in binding[x.name] for x in p.tensors):
        return False
    for ep in p.programs:
        for op in walk(ep.ops):
            addr = getattr(op, "addr", None)
            if addr is not None and addr.dynamic is not None and binding.get(addr.dynamic.name,
                                                                              addr.dynamic.name) != addr.dynamic.name:
                return False
    return True


@attrs.frozen(eq=False, slots=False)
class ComposedStep:
    """A model step's sections joined into one program (``compose``): the ``document`` written (a
    ``TemplatedProgram`` when the sections are one per phase with every boundary but the last closed, else the
    joined ``Program``), compose's ``fragment``, the checker's ``report`` on it (None when not certified) and its
    ``certificate`` (the re-derivable certificate plus ``compose``: the fragment, ``passes``: each section's content
    address of its pass fragments, and ``pass_fragments``: those fragments once per address); seconds. ``program``
    is the joined program (a templated document's expansion, built on first use)."""

    document: Program | TemplatedProgram
    fragment: Fragment
    report: Report | None
    certificate: dict[str, Any]
    compose_seconds: float
    certify_seconds: float

    @functools.cached_property
    def program(self) -> Program:
        return self.document.expand() if isinstance(self.document, TemplatedProgram) else self.document

    @property
    def ops(self) -> int:
        if isinstance(self.document, TemplatedProgram):
            return self.document.summary()[1]
        return sum(_count(ep.ops) for ep in self.program.programs)

    def phase_of(self, k: int) -> int:
        """The phase (the slice) section ``k`` runs in."""
        return self.document.phase_of_section()[k]

    def slice_codes(self) -> list[int | None]:
        """Per section, the exit code of its slice's obligations in the composed report (``Report.exit_code`` of
        the ``slice<j>/...`` results of its phase), None without a report or when the program was not proved from
        slices."""
        if self.report is None:
            return [None] * len(self.document.sections)
        worst: dict[int, set[Verdict]] = {}
        for r in self.report.results:
            head, sep, _ = r.name.partition("/")
            if sep and head.startswith("slice") and head[5:].isdigit():
                worst.setdefault(int(head[5:]), set()).add(r.verdict)
        phases = self.document.phase_of_section()
        out: list[int | None] = []
        for k in range(len(phases)):
            vs = worst.get(phases[k])
            out.append(None if vs is None else Report("", "", tuple(Result("", "", v) for v in vs)).exit_code)
        return out


def compose_step(graph: ModelGraph, sections: list[CompiledSection], target: Target, *, check: bool = True,
                 progress: Progress | None = None, cache: ProofCache | None = None,
                 templated: bool = True) -> ComposedStep:
    """Join the compiled ``sections`` of ``graph`` into one program: its ``state`` tensors carried, every boundary
    closed by a rendezvous, the sections' certificates shifted into the fragment; with ``check`` the joined program
    is certified (``certify``, with ``cache`` when given). With ``templated`` (and two sections or more) the
    program is kept as its distinct sections and their instances (``compose_templated``: the document
    ``verispatial compile -o`` writes, certified from its templates); otherwise, or when that form is refused, the
    joined program in full (``compose``). Raises ``ComposeRefused`` naming the rule."""
    from verispatial.passes.compose import compose, compose_templated, content_key

    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    state = [t.name for t in graph.tensors if t.role.value == "state"]
    document: Program | TemplatedProgram | None = None
    if templated and len(sections) > 1:
        classes: dict[int, int] = {}
        templates: list[Program] = []
        certs: list[dict[str, Any] | None] = []
        instances: list[Instance] = []
        for k, s in enumerate(sections):
            j = classes.get(id(s.cls))
            if j is None:
                j = classes[id(s.cls)] = len(templates)
                templates.append(s.cls.program)  # the class's program is the template, in its first section's names
                certs.append(_template_certificate(s, sections) if check else None)
            instances.append(Instance(s.section_name, j, s.tensors, tuple(x.name for x in s.cls.program.trips),
                                      k < len(sections) - 1))
        try:
            document, frag = compose_templated(templates, instances, state=state, target=target, certificates=certs)
        except ComposeRefused:
            document = None  # joined in full below: it refuses by the same rule, or joins what the form cannot say
    if document is None:
        document, frag = compose([s.program for s in sections], state=state, target=target,
                                 certificates=[s.certificate for s in sections])
    t1 = time.perf_counter()
    report = None
    if check:
        secs = len(document.instances) if isinstance(document, TemplatedProgram) else len(document.sections)
        engines = len(document.participants) if isinstance(document, TemplatedProgram) else len(document.programs)
        say(f"{document.name}: certify the composed program ({secs} sections, {engines} engine programs)")
        report = certify(document, progress=say, cache=cache if cache is not None else True)
        cert: dict[str, Any] = derive_certificate(document, report)
    else:
        cert = {}
    # Every section's pass fragments by content address (``compose.content_key``): identical sections (each layer's
    # projections) share one entry of ``pass_fragments``. In the templated form a section's are its template's (its
    # class's first section's), in the template's tensor names: not one entry per layer for the stage names that
    # hold a tensor's name (``read_<tensor>``).
    table: dict[str, list[Fragment]] = {}
    by_section: dict[str, str] = {}
    for s in sections:
        frags = untimed(s.cls.fragments if isinstance(document, TemplatedProgram) else s.fragments)
        by_section[s.name] = key = content_key(frags)
        table.setdefault(key, frags)
    if isinstance(document, TemplatedProgram) and cert.get("version") == 4:
        # The templates' places are the certificate's ``templates[j].places``, not stated twice.
        frag = {**frag, "places": "templates[j].places of the certificate",
                "templates": [{k: v for k, v in t.items() if k != "places"} for t in frag["templates"]]}
    if isinstance(frag.get("rendezvous"), dict) and cert.get("version", 0) >= 3 \
            and isinstance(frag["rendezvous"].get("places"), list):
        # The rendezvous places are the certificate's one ``rendezvous`` place entry (version 3), not stated twice.
        frag = {**frag, "rendezvous": {**frag["rendezvous"], "places": "places: the entry of kind rendezvous"}}
    cert = {**cert, "compose": frag, "passes": by_section, "pass_fragments": table}
    return ComposedStep(document, frag, report, cert, t1 - t0, time.perf_counter() - t1)


def certificate_path(program_path: str | Path) -> Path:
    """Where a program's certificate goes: ``NAME.program.json`` -> ``NAME.certificate.json`` (the layout ``gate``
    reads), ``NAME.json`` -> ``NAME.certificate.json``, anything else + ``.certificate.json``."""
    p = Path(program_path)
    if p.name.endswith(".program.json"):
        return p.with_name(p.name[: -len(".program.json")] + ".certificate.json")
    if p.suffix == ".json":
        return p.with_name(p.stem + ".certificate.json")
    return p.with_name(p.name + ".certificate.json")


def write_program(program: Program | TemplatedProgram, certificate: dict[str, Any], path: str | Path) -> Path:
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
    holds anything else (``foreign_files``; nothing is replaced) and ``OSError`` when its parent does not exist or
    cannot be written (the parent is never made: README.md, "Bad input")."""
    foreign = foreign_files(out_dir)
    if foreign:
        raise FileExistsError(f"{out_dir} holds files compile did not write ({', '.join(foreign[:3])}"
                              + (f", +{len(foreign) - 3} more" if len(foreign) > 3 else "") + "): not replaced")
    files: dict[str, str] = {}
    for s in sections:
        cert = s.certificate if s.certificate is not None else {"passes": list(s.fragments)}
        files[f"{s.name}.program.json"] = dumps(s.program) + "\n"
        files[f"{s.name}.certificate.json"] = json.dumps(cert, indent=1) + "\n"
    atomic.write_dir(out_dir, files)
