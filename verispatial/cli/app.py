"""The ``verispatial`` command line: a thin click layer over testable functions.

``main(argv) -> int`` never raises and never prints a traceback. Exit codes (DESIGN §8):

- 0: every obligation proved (``certify``), a terminated run without violations (``simulate``), a valid program
  (``validate``);
- 1: something refuted (``certify``), a deadlock, step limit or violation (``simulate``);
- 2: bad input: one line ``verispatial: error: <file>: <field>: <rule>`` on stderr, nothing written;
- 3: something failed to prove (never accepted);
- 4: a checker error (``verispatial: checker error: ...``);
- 130: interrupted (Ctrl-C): one line ``verispatial: interrupted``, and nothing printed or written after it.

With ``--json`` every exit code 0-4 prints exactly one JSON document on stdout (bad input and checker errors as
``{"exit_code": N, "error": {...}}``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.text import Text

from verispatial import __version__, budget
from verispatial.errors import CertificateMismatch, InvalidProgram, ParseError, SourceRefused, VerispatialError
from verispatial.ir.limits import QUOTE_MAX, clip

if TYPE_CHECKING:
    from verispatial.ir.program import Program

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_BAD_INPUT = 2
EXIT_FAILED = 3
EXIT_CHECKER_ERROR = 4
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT



class BadInput(Exception):
    """Bad input found by the CLI: ``where`` is the file (or option), ``field`` the JSON path or part, ``rule``
    what was expected; ``violations`` holds every structural violation when there were several."""

    def __init__(self, where: str, field: str, rule: str, violations: Sequence[tuple[str, str]] = ()) -> None:
        self.where = where
        self.field = field
        self.rule = rule
        self.violations = list(violations)
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line message (without the ``verispatial: error:`` prefix); several structural violations
        show the first and how many more."""
        parts = [clip(p, 2 * QUOTE_MAX) for p in (self.where, self.field, self.rule) if p]
        more = f" (+{len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
        return ": ".join(parts) + more

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": EXIT_BAD_INPUT,
            "error": {
                "file": self.where,
                "field": self.field,
                "rule": self.rule,
                "violations": [{"entity": e, "rule": r} for e, r in self.violations],
            },
        }


class CheckerError(Exception):
    """The checker (or simulator) itself failed: exit 4."""

    def to_json(self) -> dict[str, Any]:
        return {"exit_code": EXIT_CHECKER_ERROR, "error": {"rule": "checker error", "message": clip(str(self), 1000)}}


# --------------------------------------------------------------------------------------------- loading


def bad_input_of(where: str, err: VerispatialError) -> BadInput:
    """Translate a ``VerispatialError`` about file ``where`` into a ``BadInput`` with one line."""
    if isinstance(err, InvalidProgram):
        vs = [(v.entity, v.rule) for v in err.violations]
        if not vs:
            return BadInput(where, "", "invalid program")
        return BadInput(where, vs[0][0], vs[0][1], vs)
    if isinstance(err, ParseError):
        # load_program names a missing file or a directory by its path: do not say the path twice.
        field = "" if err.field in ("", where) else err.field
        return BadInput(where, field, err.rule)
    if isinstance(err, CertificateMismatch):
        return BadInput(where, "certificate", err.what)
    if isinstance(err, SourceRefused):
        return BadInput(f"{err.file}:{err.line}", err.construct, err.reason)
    return BadInput(where, "", str(err))


def load_program_file(path: str) -> Program:
    """Read, schema-check and validate ``path``; ``BadInput`` for anything wrong with it, ``CheckerError`` for a
    fault of the loader itself."""
    from verispatial.ir.serialize import load_program

    try:
        return load_program(path)
    except VerispatialError as e:
        raise bad_input_of(path, e) from None
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    except Exception as e:
        raise CheckerError(f"loading {path}: {type(e).__name__}: {e}") from None


def load_json_object(path: str, what: str) -> dict[str, Any]:
    """Read ``path`` as a JSON object (``what`` names it in messages, e.g. "certificate"); ``BadInput`` if it is
    missing, a directory, empty, not UTF-8, not JSON or not an object."""
    p = Path(path)
    if not p.exists():
        raise BadInput(path, "", "no such file")
    if p.is_dir():
        raise BadInput(path, "", f"is a directory, expected a {what} JSON file")
    from verispatial.ir.limits import DOCUMENT_MAX_BYTES
    from verispatial.ir.serialize import parse_json

    try:
        size = p.stat().st_size
        if size > DOCUMENT_MAX_BYTES:
            raise BadInput(path, "", f"{size} bytes: larger than the {DOCUMENT_MAX_BYTES // 2**20} MiB a document may "
                                     "have (verispatial/ir/limits.py)")
        data = p.read_bytes()
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise BadInput(path, "", "the file is empty")

    try:
        d = parse_json(data)
    except ParseError as e:
        raise BadInput(path, e.field, e.rule) from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise BadInput(path, "(document)", f"expected a JSON object ({what}), got {_json_type(d)}")
    return d


def _json_type(v: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


def parse_trips(specs: Sequence[str], program: Program) -> dict[str, int]:
    """``NAME=V`` pairs as a dict; ``BadInput`` (naming ``--trip``) for a malformed pair, an undeclared trip or
    a value outside the trip's ``[0, max]``."""
    maxes = program.trip_max()
    out: dict[str, int] = {}
    for spec in specs:
        name, eq, value = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise BadInput("--trip", spec, "expected NAME=VALUE")
        try:
            v = int(value.strip())
        except ValueError:
            raise BadInput("--trip", spec, f"value {value.strip()!r} is not an integer") from None
        if name not in maxes:
            known = ", ".join(sorted(maxes)) or "none"
            raise BadInput("--trip", spec, f"trip {name!r} is not declared by the program (declared: {known})")
        if not 0 <= v <= maxes[name]:
            raise BadInput("--trip", spec, f"{v} is outside trip {name}'s range [0, {maxes[name]}]")
        if name in out:
            raise BadInput("--trip", spec, f"trip {name} is given twice")
        out[name] = v
    return out


def check_output_path(path: str) -> None:
    """``BadInput`` unless ``path`` can be created: its directory exists and it is not itself a directory.

    Checked before any work so that bad input writes nothing.
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise BadInput(path, "", "is a directory, expected an output file path")
    if not parent.is_dir():
        raise BadInput(path, "", f"cannot write: directory {str(parent)!r} does not exist")


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename, so the file is
    either absent or complete. ``BadInput`` if it cannot be written."""
    budget.check_interrupt()
    from verispatial import atomic

    try:
        atomic.write_text(path, text)  # the mode a plain write would give: a report is for others too (CI)
    except OSError as e:
        raise BadInput(path, "", f"cannot write: {e.strerror or e}") from None


# --------------------------------------------------------------------------------------------- command bodies


def _stdout() -> Console:
    # Resolved per call so that test capture (and redirected stdout) is honoured; soft_wrap keeps a long
    # counterexample on one line instead of folding it at the console width; no markup: messages contain [].
    return Console(highlight=False, soft_wrap=True, markup=False, emoji=False)


def _emit(lines: list[tuple[str, str]]) -> None:
    budget.check_interrupt()
    con = _stdout()
    for text, style in lines:
        con.print(Text(text, style=style))


def _write_json(obj: Any) -> None:
    budget.check_interrupt()
    sys.stdout.write(json.dumps(obj, indent=1) + "\n")


def _write(text: str) -> None:
    """Plain output on stdout, never after an interrupt."""
    budget.check_interrupt()
    sys.stdout.write(text)


def _progress(label: str, quiet: bool, total: int | None = None) -> Any:
    """Progress on stderr (``verispatial.report.progress``): plain lines when stderr is not a terminal, a bar on one."""
    from verispatial.report.progress import progress

    return progress(label, total, quiet=quiet)


def _check_smt2_dir(smt2_dir: str) -> None:
    d = Path(smt2_dir)
    if d.exists() and not d.is_dir():
        raise BadInput(smt2_dir, "", "exists and is not a directory, expected a directory for the SMT-LIB2 queries")
    # Like the other outputs, its parent must exist; the directory itself is created (checked before any work).
    parent = d.parent if str(d.parent) else Path(".")
    if not d.exists() and not parent.is_dir():
        raise BadInput(smt2_dir, "", f"cannot write: directory {str(parent)!r} does not exist")


def _store(cache_dir: str | None, no_cache: bool) -> Any:
    from verispatial.certify.store import open_store

    if cache_dir is not None and Path(cache_dir).exists() and not Path(cache_dir).is_dir():
        raise BadInput(cache_dir, "", "exists and is not a directory, expected the proof cache directory")
    return open_store(cache_dir, no_cache)


def _load_certificate_file(path: str) -> dict[str, Any]:
    cert = load_json_object(path, "certificate")
    from verispatial.certify.certificate import check_certificate_shape

    try:
        check_certificate_shape(cert)
    except ParseError as e:
        raise BadInput(path, e.field, e.rule) from None
    return cert


class TtlangOptions:
    """How to read a TT-Lang source: ``verispatial import ttlang`` and ``certify FILE.py`` share them."""

    def __init__(self, operation: str | None = None, shapes: Sequence[str] = (), ranges: Sequence[str] = (),
                 target: str | None = None) -> None:
        self.operation = operation
        self.shapes = tuple(shapes)
        self.ranges = tuple(ranges)
        self.target = target

    def given(self) -> list[str]:
        """The options given, by flag."""
        named = (("--operation", self.operation), ("--shape", self.shapes), ("--range", self.ranges),
                 ("--target", self.target))
        return [flag for flag, v in named if v]


def import_ttlang(path: str, opts: TtlangOptions) -> list[Any]:
    """The programs of TT-Lang source ``path``, one per shape class (``frontends.ttlang.import_file``); ``BadInput``
    for bad options, an unreadable file or a construct refused by name (file:line)."""
    from verispatial.frontends.ttlang import import_file

    try:
        return import_file(path, opts.operation, opts.shapes, opts.ranges, opts.target or "wormhole")
    except VerispatialError as e:
        raise bad_input_of(path, e) from None
    except RecursionError:
        raise BadInput(path, "", "nested too deeply to read") from None


def run_import_ttlang(path: str, opts: TtlangOptions, out: str, quiet: bool) -> int:
    """The ``import ttlang`` command: write the program of each shape class (``OUT`` itself for one class, else
    ``OUT`` with ``.1``, ``.2``, ... before its suffix), every file computed before the first is written."""
    from verispatial.ir.serialize import dumps

    check_output_path(out)
    got = import_ttlang(path, opts)
    o = Path(out)
    names = [out] if len(got) == 1 else [str(o.with_name(f"{o.stem}.{i + 1}{o.suffix}")) for i in range(len(got))]
    texts = [(n, dumps(imp.program)) for n, imp in zip(names, got, strict=True)]
    for n, text in texts:
        write_atomic(n, text)
    if not quiet:
        for n, imp in zip(names, got, strict=True):
            _stdout().print(f"wrote {n}: {imp.program.name} ({len(imp.program.programs)} engine programs; "
                            f"{imp.label})", markup=False, highlight=False)
    return EXIT_OK


def _loaded(program: Program) -> Callable[[str], Program]:
    """A loader that returns ``program`` (already read, from a TT-Lang source)."""
    return lambda _path: program


def run_certify(program_paths: Sequence[str], certificate: str | None, as_json: bool, sarif_out: str | None,
                jobs: int, certificate_out: str | None, smt2_dir: str | None = None, junit_out: str | None = None,
                cache_dir: str | None = None, no_cache: bool = False, quiet: bool = False,
                budget_seconds: float | None = budget.DEFAULT_SECONDS, expect: str = "proved",
                ttlang: TtlangOptions | None = None) -> int:
    """The ``certify`` command: see ``certify_cmd``. A ``.py`` path is a TT-Lang source, read with ``ttlang``
    (``import_ttlang``) and certified class by class. ``budget_seconds`` bounds the whole run (every program): past
    it each obligation not yet decided is failed-to-prove, saying so (``verispatial.budget``). ``expect`` is the
    verdict the certificate is recorded for (``certificate.recording_refusal``). Raises ``BadInput`` /
    ``CheckerError``."""
    if expect != "proved" and certificate_out is None:
        raise BadInput("--expect", "", "needs --write-certificate OUT.json (it names the verdict whose certificate "
                       "is written)")
    if len(program_paths) > 1:
        for flag, value in (("--certificate", certificate), ("--write-certificate", certificate_out),
                            ("--smt2", smt2_dir)):
            if value is not None:
                raise BadInput(flag, "", f"takes one PROGRAM.json, got {len(program_paths)}")
    for out in (sarif_out, certificate_out, junit_out):
        if out is not None:
            check_output_path(out)
    if smt2_dir is not None:
        _check_smt2_dir(smt2_dir)
    store = _store(cache_dir, no_cache) if smt2_dir is None and certificate_out is None else None
    if smt2_dir is not None:
        try:
            Path(smt2_dir).mkdir(exist_ok=True)
        except OSError as e:
            raise BadInput(smt2_dir, "", f"cannot write: {e.strerror or e}") from None
    from verispatial.certify.files import FileReport

    opts = ttlang or TtlangOptions()
    if opts.given() and not any(p.endswith(".py") for p in program_paths):
        raise BadInput(opts.given()[0], "", "applies to TT-Lang sources (FILE.py) only")
    done: list[tuple[str, FileReport]] = []
    with budget.deadline(budget_seconds):
        for path in program_paths:
            if path.endswith(".py"):
                got = import_ttlang(path, opts)
                for flag, value in (("--certificate", certificate), ("--write-certificate", certificate_out),
                                    ("--smt2", smt2_dir)):
                    if value is not None and len(got) > 1:
                        raise BadInput(flag, "", f"takes one program, {path} has {len(got)} shape classes")
                for imp in got:
                    done.append((path, _certify_one(path, certificate, None, jobs, quiet, smt2_dir,
                                                    _loaded(imp.program))))
                continue
            done.append((path, _certify_one(path, certificate, store, jobs, quiet, smt2_dir)))
    return _certify_outputs(done, as_json, sarif_out, junit_out, certificate_out, expect)


def _certify_one(path: str, certificate: str | None, store: Any, jobs: int, quiet: bool,
                 smt2_dir: str | None, loader: Callable[[str], Program] | None = None) -> Any:
    """Certify one program file (``certify_file``; ``loader`` reads it, by default ``load_program_file``);
    ``BadInput`` / ``CheckerError`` for what goes wrong."""
    from verispatial.certify.files import certify_file
    from verispatial.certify.smt import export_smt2

    try:
        export = export_smt2(smt2_dir) if smt2_dir is not None else contextlib.nullcontext()
        # a host description (.yaml) is imported first: the program certified is the one its kernels make
        with _certified_path(path) as program_path, export, _progress(f"certify {path}", quiet) as progress:
            fr = certify_file(program_path, loader or load_program_file, certificate, _load_certificate_file,
                              store=store,
                              jobs=jobs, progress=progress)
    except BadInput:
        raise
    except VerispatialError as e:
        blame = certificate if certificate is not None and isinstance(e, (ParseError, CertificateMismatch)) \
            else path
        raise bad_input_of(blame, e) from None
    except Exception as e:
        raise CheckerError(f"{type(e).__name__}: {e}") from None
    if fr.program is None:
        return fr
    import attrs

    from verispatial.report.sources import with_sources

    return attrs.evolve(fr, report=with_sources(fr.report, fr.program))


def _certify_outputs(done: list[tuple[str, Any]], as_json: bool, sarif_out: str | None, junit_out: str | None,
                     certificate_out: str | None, expect: str = "proved") -> int:
    """Write the reports of a certify run (files first, all computed before any is written) and print them."""
    worst = _worst([fr.report.exit_code for _, fr in done])
    # Every output is computed before the first is written, so a failure leaves no partial set of files.
    outputs: list[tuple[str, str]] = []
    if sarif_out is not None:
        from verispatial.report.sarif import Artifact, read_text, sarif_log

        arts = [Artifact(Path(path).as_posix(), fr.report,
                         read_text(path) if fr.report.exit_code != EXIT_OK else None) for path, fr in done]
        outputs.append((sarif_out, json.dumps(sarif_log(arts, worst), indent=1) + "\n"))
    if junit_out is not None:
        from verispatial.report.junit import junit_xml, report_cases

        outputs.append((junit_out, junit_xml([c for path, fr in done for c in report_cases(fr.report, path)],
                                             "verispatial certify")))
    refusal = None
    if certificate_out is not None:
        from verispatial.certify.gate import recording_refusal

        refusal = recording_refusal(done[0][1].report, expect)
    if certificate_out is not None and refusal is None:
        (path, fr), = done
        try:
            from verispatial.certify.certificate import derive_certificate

            derived = derive_certificate(fr.program if fr.program is not None else load_program_file(path), fr.report)
            outputs.append((certificate_out, json.dumps(derived, indent=1) + "\n"))
        except BadInput:
            raise
        except Exception as e:
            raise CheckerError(f"deriving the certificate: {type(e).__name__}: {e}") from None
    for path, text in outputs:
        write_atomic(path, text)
    if refusal is not None:
        budget.check_interrupt()
        sys.stderr.write(f"verispatial: no certificate written to {certificate_out}: {refusal}\n")
    if as_json:
        docs = [fr.report.to_json() for _, fr in done]
        if certificate_out is not None:
            docs[0]["write_certificate"] = {"path": certificate_out, "written": refusal is None, "reason": refusal}
        _write_json(docs[0] if len(docs) == 1 else docs)
    else:
        from verispatial.report.text import report_lines

        for _, fr in done:
            _emit(report_lines(fr.report, fr.shape))
    return worst


def _worst(codes: Sequence[int]) -> int:
    """As ``Report.exit_code``: a refutation outranks a checker error, which outranks a failure to prove."""
    return next((c for c in (EXIT_REFUTED, EXIT_CHECKER_ERROR, EXIT_FAILED) if c in codes), EXIT_OK)


def run_gate(directory: str, manifest: str | None, ci_only: bool, jobs: int, changed: str | None,
             sarif_out: str | None, junit_out: str | None, as_json: bool, cache_dir: str | None, no_cache: bool,
             quiet: bool) -> int:
    """The ``gate`` command: see ``gate_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    for out in (sarif_out, junit_out):
        if out is not None:
            check_output_path(out)
    store = _store(cache_dir, no_cache)
    from verispatial.certify.gate import gate

    try:
        with _progress(f"gate {directory}", quiet) as progress:
            run = gate(directory, manifest=manifest, ci_only=ci_only, jobs=jobs, changed=changed, store=store,
                       progress=progress.advance)
    except ParseError as e:
        raise BadInput(e.field if e.field else directory, "", e.rule) from None
    except VerispatialError as e:
        raise BadInput(directory, "", str(e)) from None
    except Exception as e:
        raise CheckerError(f"gate: {type(e).__name__}: {e}") from None
    from verispatial.report.gate import gate_cases, gate_extra_results, gate_lines

    outputs: list[tuple[str, str]] = []
    mani = str(run.manifest.path) if run.manifest is not None and run.manifest.path is not None else directory
    if sarif_out is not None:
        from verispatial.report.sarif import Artifact, read_text, sarif_log

        arts = [Artifact(Path(o.program).as_posix(), o.report, read_text(o.program))
                for o in run.outcomes if o.status == "lost" and o.report is not None and o.program is not None]
        outputs.append((sarif_out, json.dumps(sarif_log(arts, run.exit_code, gate_extra_results(run, mani)),
                                              indent=1) + "\n"))
    if junit_out is not None:
        from verispatial.report.junit import junit_xml

        outputs.append((junit_out, junit_xml(gate_cases(run), "verispatial gate")))
    for path, text in outputs:
        write_atomic(path, text)
    if as_json:
        _write_json({"directory": directory, "exit_code": run.exit_code, "seconds": round(run.seconds, 3),
                     "cache": run.cache, "programs": [
                         {"name": o.name, "status": o.status, "detail": o.detail, "how": o.how,
                          "expected": o.expected.to_json() if o.expected is not None else None,
                          "seconds": round(o.seconds, 3),
                          "report": o.report.to_json() if o.report is not None else None} for o in run.outcomes]})
    else:
        _write("\n".join(gate_lines(run)) + "\n")
    return run.exit_code


def run_explain(program_path: str, out_dir: str | None, html_out: str | None, as_json: bool, jobs: int,
                cache_dir: str | None, no_cache: bool, quiet: bool) -> int:
    """The ``explain`` command: see ``explain_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    if html_out is not None:
        check_output_path(html_out)
    stem = Path(program_path).name.removesuffix(".json").removesuffix(".program")
    pictures_dir = Path(out_dir if out_dir is not None else f"{stem}.explain")
    if pictures_dir.exists() and not pictures_dir.is_dir():
        raise BadInput(str(pictures_dir), "", "exists and is not a directory, expected a directory for the pictures")
    parent = pictures_dir.parent if str(pictures_dir.parent) else Path(".")
    if not pictures_dir.exists() and not parent.is_dir():
        raise BadInput(str(pictures_dir), "", f"cannot write: directory {str(parent)!r} does not exist")
    store = _store(cache_dir, no_cache)
    from verispatial.certify.files import certify_file

    try:
        with _progress(f"explain {program_path}", quiet) as progress:
            fr = certify_file(program_path, load_program_file, None, _load_certificate_file, store=store, jobs=jobs,
                              progress=progress)
    except BadInput:
        raise
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"{type(e).__name__}: {e}") from None
    program = fr.program if fr.program is not None else load_program_file(program_path)
    try:
        from verispatial.report.explain import explain_report, explanation_lines
        from verispatial.report.html import draw, html_page

        exps = explain_report(program, fr.report)
        drawn = draw(exps)
    except Exception as e:
        raise CheckerError(f"explain: {type(e).__name__}: {e}") from None
    files: dict[int, list[str]] = {}
    if exps:
        try:
            pictures_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise BadInput(str(pictures_dir), "", f"cannot write: {e.strerror or e}") from None
    for i, row in enumerate(drawn):
        for j, d in enumerate(row):
            base = pictures_dir / f"{stem}.{i}.{j}.{d.picture.kind}"
            write_atomic(f"{base}.dot", d.picture.dot)
            files.setdefault(i, []).append(f"{base}.dot")
            if d.svg is not None:
                write_atomic(f"{base}.svg", d.svg)
                files[i].append(f"{base}.svg")
            else:
                files[i].append(f"(no SVG: {d.error})")
    if html_out is not None:
        write_atomic(html_out, html_page(fr.report, exps, drawn, program))
    if as_json:
        _write_json({"program": fr.report.program, "exit_code": fr.report.exit_code,
                     "explanations": [{**x.to_json(), "files": files.get(i, [])} for i, x in enumerate(exps)]})
    else:
        from verispatial.report.text import report_lines, unproved_lines

        lines = report_lines(fr.report, fr.shape)
        _emit([lines[0], *[ln for ln in lines[1:] if ln[0].startswith("  ") and not ln[0].startswith("   ")]])
        _emit([(ln, "") for ln in explanation_lines(exps, files)] or [("nothing to explain: no refutation", "")])
        _emit(unproved_lines(fr.report))  # no counterexample to draw, but the reason is what a user acts on
        _emit([lines[-1]])
    return fr.report.exit_code


def run_throughput(program_path: str, trip_specs: Sequence[str], as_json: bool) -> int:
    """The ``throughput`` command: see ``throughput_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    program = load_program_file(program_path)
    trips = parse_trips(trip_specs, program)
    from verispatial.petri.interp import simulate
    from verispatial.petri.throughput import ThroughputError, throughput_bound
    from verispatial.report.throughput import no_bound_json

    try:
        run = simulate(program, trips=trips)
        if run.status != "terminated":
            stuck = "; ".join(str(st) for st in run.stuck[:3])
            why = (f"not live: the interpreter's run ends in {run.status}" + (f" ({stuck})" if stuck else "")
                   + "; no throughput bound")
            if as_json:
                _write_json(no_bound_json(program.name, EXIT_REFUTED, why, run))
            sys.stderr.write(f"verispatial: {program_path}: {why}\n")
            return EXIT_REFUTED
        bound = throughput_bound(program, trips)
    except ThroughputError as e:
        if as_json:
            _write_json(no_bound_json(program.name, EXIT_FAILED, e.what))
        sys.stderr.write(f"verispatial: {program_path}: {e.what}\n")
        return EXIT_FAILED
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"throughput: {type(e).__name__}: {e}") from None
    if as_json:
        _write_json(bound.to_json())
    else:
        from verispatial.report.throughput import bound_lines

        sys.stdout.write("\n".join(bound_lines(bound)) + "\n")
    return EXIT_OK


def run_simulate(program_path: str, trip_specs: Sequence[str], seed: int | None, as_json: bool) -> int:
    """The ``simulate`` command: see ``simulate_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    program = load_program_file(program_path)
    trips = parse_trips(trip_specs, program)
    try:
        from verispatial.petri.interp import simulate

        result = simulate(program, trips=trips, seed=seed)
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"simulator: {type(e).__name__}: {e}") from None
    if as_json:
        _write_json(result.to_json())
    else:
        _write(result.text() + "\n")
    return EXIT_OK if result.status == "terminated" and not result.violations else EXIT_REFUTED


def run_validate(program_path: str, as_json: bool) -> int:
    """The ``validate`` command: prints every structural violation (one per line on stdout) and the one-line
    error on stderr; raises ``BadInput`` for unreadable or malformed files."""
    try:
        program = load_program_file(program_path)
    except BadInput as e:
        if e.violations and not as_json:
            for entity, rule in e.violations:
                _write(f"{program_path}: {clip(entity, 2 * QUOTE_MAX)}: {clip(rule, 2 * QUOTE_MAX)}\n")
        raise
    from verispatial.ir.program import program_summary

    engines, ops = program_summary(program)
    if as_json:
        _write_json({"file": program_path, "valid": True, "program": program.name, "target": program.target.name,
                     "engines": engines, "ops": ops, "violations": []})
    else:
        _write(f"{program_path}: valid: program {clip(program.name)}, target {clip(program.target.name)}, "
               f"{engines} engine programs, {ops} ops\n")
    return EXIT_OK


def run_upgrade(in_path: str, out: str, without_operands: bool = False) -> int:
    """The ``upgrade`` command: the format 1 program IN.json in the current format, to ``out`` (written
    atomically; ``verispatial.ir.upgrade``). Raises ``BadInput`` for what is not a valid format 1 program, and for
    one with compute steps unless ``without_operands``: format 1 did not name the pages a compute step reads, so the
    upgraded step reads none and its reads go unchecked — a silent ``proved`` unless the user asks for it."""
    check_output_path(out)
    doc = load_json_object(in_path, "program")
    from verispatial.ir.program import VERSION
    from verispatial.ir.serialize import dumps
    from verispatial.ir.upgrade import upgrade_document

    try:
        up = upgrade_document(doc)
    except VerispatialError as e:
        raise bad_input_of(in_path, e) from None
    except Exception as e:
        raise CheckerError(f"upgrade: {type(e).__name__}: {e}") from None
    if up.computes and not without_operands:
        raise BadInput(in_path, "compute", f"{up.computes} compute step{'s name' if up.computes != 1 else ' names'} no "
                       "operand pages (format 1 did not record them): upgraded, the checker would not check their "
                       "reads (cb-read-unwaited); name them by hand, or pass --without-operands to write it anyway")
    write_atomic(out, dumps(up.program))
    _write(f"{in_path}: format 1 upgraded to version {VERSION}: {out}\n")
    if up.computes:
        sys.stderr.write(f"verispatial: {in_path}: {up.computes} compute step{'s' if up.computes != 1 else ''} "
                         "got no operand pages (ins: []): format 1 did not name them, so the checker does not "
                         "check their reads (cb-read-unwaited) until they are named\n")
    return EXIT_OK


def run_export(program_path: str, fmt: str, out: str | None) -> int:
    """The ``export`` command: PROGRAM.json as a Promela model (``promela``), a PNML P/T net (``pnml``) or Graphviz
    DOT (``dot``) of its behavioural net (``petri/ptnet.py``), to ``out`` (written atomically) or stdout. A program
    outside the Promela model (``PromelaUnsupported``) or the net (``NetUnsupported``) is bad input naming the
    construct."""
    if out is not None:
        check_output_path(out)
    program = load_program_file(program_path)
    try:
        if fmt == "promela":
            from verispatial.petri.promela import PromelaUnsupported, to_promela

            try:
                text = to_promela(program)
            except PromelaUnsupported as e:
                raise BadInput(program_path, "", f"outside the Promela model: {e}") from None
        else:
            from verispatial.petri.dot import to_dot
            from verispatial.petri.pnml import to_pnml
            from verispatial.petri.ptnet import NetUnsupported

            try:
                text = to_pnml(program) if fmt == "pnml" else to_dot(program)
            except NetUnsupported as e:
                raise BadInput(program_path, "", f"outside the P/T net: {e}") from None
    except BadInput:
        raise
    except Exception as e:
        raise CheckerError(f"export --{fmt}: {type(e).__name__}: {e}") from None
    if out is None:
        _write(text)
    else:
        write_atomic(out, text)
    return EXIT_OK


# --------------------------------------------------------------------------------------------- click layer


def _fail(e: BadInput, as_json: bool) -> NoReturn:
    if as_json:
        _write_json(e.to_json())
    raise e


def _guard(as_json: bool, body: Callable[[], int]) -> int:
    try:
        return body()
    except BadInput as e:
        _fail(e, as_json)
    except CheckerError as e:
        if as_json:
            _write_json(e.to_json())
        raise


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, no_args_is_help=True)
@click.version_option(__version__, prog_name="verispatial")
def cli() -> None:
    """verispatial: certify spatial dataflow programs (program.json) with a Z3-backed checker.

    Exit codes: 0 all proved / ran clean, 1 refuted, 2 bad input, 3 failed to prove, 4 checker error.
    """


def _cache_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--no-cache", is_flag=True, help="Neither read nor write the persistent proof cache.")(f)
    return click.option("--cache-dir", metavar="DIR",
                        help="The persistent proof cache (default: $VERISPATIAL_CACHE_DIR, else the user's cache "
                             "directory).")(f)


def _ttlang_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--target", type=click.Choice(["wormhole", "blackhole"]), default=None,
                     help="TT-Lang sources: the machine (default wormhole).")(f)
    f = click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI[:STEP]",
                     help="TT-Lang sources: a shape parameter taking every value LO, LO+STEP, .. HI (a trip).")(f)
    f = click.option("--shape", "shapes", multiple=True, metavar="TENSOR=D0xD1",
                     help="TT-Lang sources: a tensor's shape in elements (default: the file's example call).")(f)
    return click.option("--operation", metavar="NAME", help="TT-Lang sources: the @ttl.operation to read.")(f)


@cli.command("certify")
@click.argument("programs", metavar="PROGRAM.json", nargs=-1, required=True)
@click.option("--certificate", metavar="C.json", help="A certificate to check against the re-derived one.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON only.")
@click.option("--sarif", "sarif_out", metavar="OUT.sarif", help="Also write the result as SARIF 2.1.0.")
@click.option("--junit", "junit_out", metavar="OUT.xml", help="Also write JUnit XML (a test case per family).")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Obligations discharged in parallel.")
@click.option("--write-certificate", "certificate_out", metavar="OUT.json",
              help="Write the derived certificate (only when the verdict is the one --expect names).")
@click.option("--expect", type=click.Choice(["proved", "refuted"]), default="proved", show_default=True,
              help="With --write-certificate: the verdict the program must have for its certificate to be written "
                   "(refuted: a broken program a gate manifest expects refuted).")
@click.option("--smt2", "smt2_dir", metavar="DIR",
              help="Also write every solver query as SMT-LIB2 into DIR, for re-checking by another solver.")
@click.option("--budget", "budget_seconds", type=click.FloatRange(min=0, min_open=True),
              default=budget.DEFAULT_SECONDS, show_default=True, metavar="SECONDS",
              help="Wall-clock bound of the whole run: past it every obligation not yet decided is failed-to-prove, "
                   "saying so.")
@_cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@_ttlang_options
def certify_cmd(programs: tuple[str, ...], certificate: str | None, as_json: bool, sarif_out: str | None,
                junit_out: str | None, jobs: int, certificate_out: str | None, expect: str, smt2_dir: str | None,
                budget_seconds: float, cache_dir: str | None, no_cache: bool, quiet: bool, operation: str | None,
                shapes: tuple[str, ...], ranges: tuple[str, ...], target: str | None) -> int:
    """Discharge every obligation of each PROGRAM.json and report each verdict. A FILE.py is a TT-Lang source:
    it is imported (as ``import ttlang``) and each of its shape classes certified; a tt-metal HOST.yaml is imported
    first (as ``import ttmetal``)."""
    tt = TtlangOptions(operation, shapes, ranges, target)
    return _guard(as_json, lambda: run_certify(programs, certificate, as_json, sarif_out, jobs, certificate_out,
                                               smt2_dir, junit_out, cache_dir, no_cache, quiet, budget_seconds,
                                               expect, tt))


@cli.group("import")
def import_group() -> None:
    """Read kernels written in another language into program.json (never running them; every op carries its source
    file:line)."""


@import_group.command("ttlang")
@click.argument("source", metavar="FILE.py")
@_ttlang_options
@click.option("-o", "--out", required=True, metavar="PROGRAM.json",
              help="Where to write the program (one file per shape class: PROGRAM.1.json, ... when several).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success.")
def import_ttlang_cmd(source: str, operation: str | None, shapes: tuple[str, ...], ranges: tuple[str, ...],
                      target: str | None, out: str, quiet: bool) -> int:
    """Read the @ttl.operation of a TT-Lang source into program.json, every op carrying its file:line."""
    return _guard(False, lambda: run_import_ttlang(source, TtlangOptions(operation, shapes, ranges, target), out,
                                                   quiet))


@cli.command("gate")
@click.argument("directory", metavar="DIR")
@click.option("--manifest", metavar="M.json", help="The manifest (default: DIR/manifest.json when it exists).")
@click.option("--ci", "ci_only", is_flag=True, help="Only the manifest's programs marked ci.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Programs checked in parallel worker processes.")
@click.option("--changed", metavar="REV", help="Re-check only programs whose files differ from git revision REV.")
@click.option("--sarif", "sarif_out", metavar="OUT.sarif", help="Also write the findings as SARIF 2.1.0.")
@click.option("--junit", "junit_out", metavar="OUT.xml", help="Also write JUnit XML (a test case per program "
                                                             "and family).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON only.")
@_cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def gate_cmd(directory: str, manifest: str | None, ci_only: bool, jobs: int, changed: str | None,
             sarif_out: str | None, junit_out: str | None, as_json: bool, cache_dir: str | None, no_cache: bool,
             quiet: bool) -> int:
    """Re-certify every program under DIR against its certificate and the manifest's expected verdict; a lost
    proof, a changed verdict, a missing or an extra program fails (exit 1)."""
    return _guard(as_json, lambda: run_gate(directory, manifest, ci_only, jobs, changed, sarif_out, junit_out,
                                            as_json, cache_dir, no_cache, quiet))


@cli.command("compile", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compile_cmd(args: tuple[str, ...]) -> int:
    """Compile a model graph (MODEL.json --target wormhole|blackhole|gpu -o STEP.json [--sections DIR]) into one
    certified program."""
    from verispatial.passes.cli_compile import run_compile

    return run_compile(args)


@cli.command("compose", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compose_cmd(args: tuple[str, ...]) -> int:
    """Join certified programs (A.json B.json ... -o OUT.json [--state NAME]... [--placement stacked|round_robin]
    [--open K]...) into one certified program."""
    from verispatial.passes.cli_compose import run_compose

    return run_compose(args)


@import_group.command("ttmetal")
@click.argument("host", metavar="HOST.yaml")
@click.option("-o", "--output", "out", metavar="PROGRAM.json", required=True, help="Where to write the program.")
def import_ttmetal_cmd(host: str, out: str) -> int:
    """A tt-metal host description and the C++ kernels it names (docs/ttmetal.md)."""
    return _guard(False, lambda: run_import_ttmetal(host, out))


@cli.command("explain")
@click.argument("program", metavar="PROGRAM.json")
@click.option("-o", "--out", "out_dir", metavar="DIR",
              help="Directory for the pictures, DOT and SVG (default: ./NAME.explain).")
@click.option("--html", "html_out", metavar="OUT.html", help="Also write one self-contained HTML report page.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanations as JSON only.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Obligations discharged in parallel.")
@_cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def explain_cmd(program: str, out_dir: str | None, html_out: str | None, as_json: bool, jobs: int,
                cache_dir: str | None, no_cache: bool, quiet: bool) -> int:
    """Certify PROGRAM.json and explain each refutation: a narrative and a picture (a deadlock's wait-for graph, a
    violation's or race's schedule as a timeline, an overlap on the memory map) as DOT and SVG."""
    return _guard(as_json, lambda: run_explain(program, out_dir, html_out, as_json, jobs, cache_dir, no_cache, quiet))


@cli.command("throughput")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--trip", "trips", multiple=True, metavar="NAME=V", help="A trip's value (default: its max).")
@click.option("--json", "as_json", is_flag=True, help="Print the bound as JSON only.")
def throughput_cmd(program: str, trips: tuple[str, ...], as_json: bool) -> int:
    """A lower bound on the cycles per work item (one run) of a live PROGRAM.json: the maximum cycle ratio of its
    timed marked graph with the target's latencies, and the critical cycle. Exit 1 when the program is not live, 3
    when the bound cannot be computed."""
    return _guard(as_json, lambda: run_throughput(program, trips, as_json))


@cli.command("simulate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--trip", "trips", multiple=True, metavar="NAME=V", help="A trip's value (default: its max).")
@click.option("--seed", type=int, default=None, help="Pick each step at random with this seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON only.")
def simulate_cmd(program: str, trips: tuple[str, ...], seed: int | None, as_json: bool) -> int:
    """Run PROGRAM.json once in the reference interpreter (op semantics: docs/semantics.md)."""
    return _guard(as_json, lambda: run_simulate(program, trips, seed, as_json))


@cli.command("validate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON only.")
def validate_cmd(program: str, as_json: bool) -> int:
    """Check PROGRAM.json against the schema and the structural rules; print every violation."""
    return _guard(as_json, lambda: run_validate(program, as_json))


@cli.command("upgrade")
@click.argument("program", metavar="IN.json")
@click.option("-o", "out", metavar="OUT.json", required=True, help="Where to write the upgraded program.")
@click.option("--without-operands", is_flag=True,
              help="Write it even though its compute steps name no operand pages (their reads go unchecked).")
def upgrade_cmd(program: str, out: str, without_operands: bool) -> int:
    """Convert the format 1 program IN.json to the current format (written to OUT.json)."""
    return _guard(False, lambda: run_upgrade(program, out, without_operands))


@cli.command("export")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--promela", is_flag=True, help="A Promela model for SPIN (docs/semantics.md rules as asserts).")
@click.option("--pnml", is_flag=True, help="The behavioural P/T net (ISO/IEC 15909-2 PNML).")
@click.option("--dot", is_flag=True, help="The behavioural P/T net as Graphviz DOT, in program order.")
@click.option("-o", "out", metavar="OUT", default=None, help="Write here instead of stdout.")
def export_cmd(program: str, promela: bool, pnml: bool, dot: bool, out: str | None) -> int:
    """Write PROGRAM.json as a Promela model (--promela), a PNML net (--pnml) or a DOT graph (--dot): exactly one."""
    # Separate flags, not one option with flag values: there the last flag given would silently win.
    fmts = [f for f, on in (("promela", promela), ("pnml", pnml), ("dot", dot)) if on]
    if len(fmts) != 1:
        got = "none" if not fmts else ", ".join(f"--{f}" for f in fmts)
        raise BadInput("export", "", f"give exactly one of --promela, --pnml, --dot (got {got})")
    return run_export(program, fmts[0], out)


@cli.command("schema")
def schema_cmd() -> int:
    """Print the JSON Schema of program.json."""
    from verispatial.ir.serialize import schema

    _write_json(schema())
    return EXIT_OK


def _error_line(msg: str) -> None:
    sys.stderr.write(f"verispatial: error: {msg}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code; never raises and never
    prints a traceback (an interrupt is exit 130)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    with budget.sigint_guard():
        try:
            budget.check_interrupt()  # one noted while the modules loaded (budget.defer_sigint)
            rv = _main(args)
        except (budget.Interrupted, KeyboardInterrupt, click.exceptions.Abort):
            rv = EXIT_INTERRUPTED
        if budget.interrupted() or rv == EXIT_INTERRUPTED:
            with contextlib.suppress(Exception, budget.Interrupted, KeyboardInterrupt):
                sys.stderr.write("verispatial: interrupted\n")
                sys.stderr.flush()
            return EXIT_INTERRUPTED
    return rv


def _wants_json(args: list[str]) -> bool:
    """``--json`` among the options (before a ``--``), whether or not the command parsed."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _usage_error(args: list[str], field: str, rule: str) -> int:
    """A command line click refused (an unknown option, a missing argument, a bad value): one line on stderr and,
    with ``--json``, the one JSON document every exit code 0-4 prints (the command never ran, so nothing else did)."""
    _error_line(f"{field}: {rule}" if field else rule)
    if _wants_json(args):
        _write_json(BadInput("command line", field, rule).to_json())
    return EXIT_BAD_INPUT


def _main(args: list[str]) -> int:
    try:
        rv = cli.main(args=args, prog_name="verispatial", standalone_mode=False)
    except BadInput as e:
        _error_line(e.line())
        return EXIT_BAD_INPUT
    except CheckerError as e:
        sys.stderr.write(f"verispatial: checker error: {e}\n")
        return EXIT_CHECKER_ERROR
    except click.exceptions.NoArgsIsHelpError as e:
        sys.stdout.write(e.format_message() + "\n")
        return EXIT_BAD_INPUT
    except click.BadParameter as e:  # also a missing argument: name the option or argument, then the rule
        if e.param is not None:
            hint = "/".join(e.param.opts) if isinstance(e.param, click.Option) else (e.param.metavar or e.param.name or "")
        else:
            hint = e.param_hint if isinstance(e.param_hint, str) else ""
        rule = "missing (required)" if isinstance(e, click.MissingParameter) else e.message
        return _usage_error(args, hint, rule)
    except click.ClickException as e:
        return _usage_error(args, "", e.format_message())
    except (click.exceptions.Abort, KeyboardInterrupt, budget.Interrupted):
        return EXIT_INTERRUPTED
    except Exception as e:  # a fault of the CLI itself: still one line, still no traceback
        sys.stderr.write(f"verispatial: checker error: {type(e).__name__}: {e}\n")
        return EXIT_CHECKER_ERROR
    return rv if isinstance(rv, int) else EXIT_OK


# ---------------------------------------------------------------- tt-metal host descriptions (verispatial import ttmetal)

#: host descriptions are told from program.json by their suffix
_HOST_SUFFIXES = (".yaml", ".yml")


def _ttmetal_program(host_path: str) -> Any:
    """The program of the host description ``host_path``; ``BadInput`` for whatever stops it."""
    from verispatial.errors import VerispatialError
    from verispatial.frontends.ttmetal import Refused, import_host

    try:
        return import_host(host_path)
    except Refused as e:
        what = f"{e.construct} ({e.detail})" if e.detail else e.construct
        raise BadInput(f"{e.loc.file}:{e.loc.line}", what,
                       f"{e.rule}{': ' + e.loc.text if e.loc.text else ''}") from None
    except VerispatialError as e:
        raise bad_input_of(host_path, e) from None
    except OSError as e:
        raise BadInput(host_path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(host_path, "", "a kernel nested too deeply to read") from None


def run_import_ttmetal(host_path: str, out: str) -> int:
    """``verispatial import ttmetal``: write the program of ``host_path`` to ``out`` (whole or not at all)."""
    from verispatial.ir.serialize import dumps

    check_output_path(out)
    program = _ttmetal_program(host_path)
    write_atomic(out, dumps(program))
    return 0


@contextlib.contextmanager
def _certified_path(path: str) -> Iterator[str]:
    """The program.json ``certify`` reads for ``path``: ``path`` itself, or for a host description the program it
    imports to, written to a temporary file (so the proof cache keys on the program read, kernels included)."""
    if Path(path).suffix not in _HOST_SUFFIXES:
        yield path
        return
    from verispatial.ir.serialize import dumps

    text = dumps(_ttmetal_program(path))
    with tempfile.TemporaryDirectory(prefix="verispatial-ttmetal-") as d:
        p = Path(d) / (Path(path).stem + ".json")
        p.write_text(text, encoding="utf-8")
        yield str(p)
