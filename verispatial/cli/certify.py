"""``verispatial certify``: discharge every obligation of each program and report the verdicts."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from verispatial import budget
from verispatial.cli.exits import EXIT_CHECKER_ERROR, EXIT_FAILED, EXIT_OK, EXIT_REFUTED, guard
from verispatial.cli.imports import certified_path, host_sources, import_ttlang, loader_of
from verispatial.cli.inputs import bad_input_of, load_certificate_file, load_document_file, open_proof_store
from verispatial.cli.options import Seconds, TtlangOptions, cache_options, ttlang_options
from verispatial.cli.output import (
    check_output_path,
    check_outputs_apart,
    check_smt2_dir,
    emit,
    stderr_progress,
    write_atomic,
    write_json,
)
from verispatial.driver.gate import recording_refusal  # untrusted machinery (verispatial/driver): light imports
from verispatial.errors import (
    BadInput,
    CertificateMismatch,
    CheckerError,
    ParseError,
    SourceRefusal,
    VerispatialError,
)

if TYPE_CHECKING:
    from verispatial.ir.program import Program
    from verispatial.ir.templated import TemplatedProgram


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
        raise BadInput("", "", "needs --write-certificate OUT.json (it names the verdict whose certificate is written)",
                       option="--expect")
    if len(program_paths) > 1:
        for flag, value in (("--certificate", certificate), ("--write-certificate", certificate_out),
                            ("--smt2", smt2_dir)):
            if value is not None:
                raise BadInput("", "", f"takes one PROGRAM.json, got {len(program_paths)}", option=flag)
    for out in (sarif_out, certificate_out, junit_out):
        if out is not None:
            check_output_path(out)
    check_outputs_apart((("--sarif", sarif_out), ("--junit", junit_out), ("--write-certificate", certificate_out)),
                        (*program_paths, certificate, *(s for p in program_paths for s in host_sources(p))))
    if smt2_dir is not None:
        check_smt2_dir(smt2_dir)
    store = open_proof_store(cache_dir, no_cache) if smt2_dir is None and certificate_out is None else None
    if smt2_dir is not None:
        try:
            Path(smt2_dir).mkdir(exist_ok=True)
        except OSError as e:
            raise BadInput(smt2_dir, "", f"cannot write: {e.strerror or e}") from None
    from verispatial.driver.files import FileReport

    opts = ttlang or TtlangOptions()
    if opts.given() and not any(p.endswith(".py") for p in program_paths):
        raise BadInput("", "", "applies to TT-Lang sources (FILE.py) only", option=opts.given()[0])
    done: list[tuple[str, FileReport]] = []
    with budget.deadline(budget_seconds):
        for path in program_paths:
            try:
                done += _certify_path(path, opts, certificate, store, jobs, quiet, smt2_dir, certificate_out)
            except SourceRefusal as e:
                _write_refusal(e, path, sarif_out, junit_out)
                raise
    return _certify_outputs(done, as_json, sarif_out, junit_out, certificate_out, expect)


def _certify_path(path: str, opts: TtlangOptions, certificate: str | None, store: Any, jobs: int, quiet: bool,
                  smt2_dir: str | None, certificate_out: str | None) -> list[tuple[str, Any]]:
    """The reports of the file ``path`` certify was given: a program.json or a host description (one report), or a
    TT-Lang source (one per shape class). ``BadInput`` (a ``SourceRefusal`` for a construct a front end refused) /
    ``CheckerError``."""
    if not path.endswith(".py"):
        return [(path, _certify_one(path, certificate, store, jobs, quiet, smt2_dir))]
    got = import_ttlang(path, opts)
    for flag, value in (("--certificate", certificate), ("--write-certificate", certificate_out),
                        ("--smt2", smt2_dir)):
        if value is not None and len(got) > 1:
            raise BadInput("", "", f"takes one program, {path} has {len(got)} shape classes", option=flag)
    return [(path, _with_shape(_certify_one(path, certificate, None, jobs, quiet, smt2_dir, loader_of(imp.program)),
                               imp.classes))
            for imp in got]


def _write_refusal(refusal: SourceRefusal, path: str, sarif_out: str | None, junit_out: str | None) -> None:
    """``--sarif`` and ``--junit`` of a run a front end's ``refusal`` of the source ``path`` ended (exit 2): a log with
    the refusal as its one result at the user's line, and one failing case (docs/ci.md). Only a refusal gets them: it
    names a line of the user's source; other bad input names none and writes nothing."""
    outputs = []
    if sarif_out is not None:
        from verispatial.report.sarif import refusal_log

        outputs.append((sarif_out, json.dumps(refusal_log(refusal), indent=1) + "\n"))
    if junit_out is not None:
        from verispatial.report.junit import junit_xml, refusal_case

        outputs.append((junit_out, junit_xml([refusal_case(refusal, path)], "verispatial certify")))
    for out, text in outputs:
        write_atomic(out, text)


def _with_shape(fr: Any, classes: Sequence[Any]) -> Any:
    """A TT-Lang class's report with its counterexamples' trips also given as the ``--range`` values they stand
    for (``report.sources.with_shape_values``)."""
    import attrs

    from verispatial.report.sources import with_shape_values

    return attrs.evolve(fr, report=with_shape_values(fr.report, classes))


def _certify_one(path: str, certificate: str | None, store: Any, jobs: int, quiet: bool,
                 smt2_dir: str | None, loader: Callable[[str], Program | TemplatedProgram] | None = None) -> Any:
    """Certify one program file (``certify_file``; ``loader`` reads it, by default ``load_document_file``: a
    templated program stays one);
    ``BadInput`` / ``CheckerError`` for what goes wrong."""
    from verispatial.driver.files import certify_file

    try:
        export: Any = contextlib.nullcontext()
        if smt2_dir is not None:  # z3 is imported only here or on a miss of the file index, never by a warm run
            from verispatial.certify.smt import export_smt2

            export = export_smt2(smt2_dir)
        # a host description (.yaml) is imported first: the program certified is the one its kernels make
        with certified_path(path) as program_path, export, stderr_progress(f"certify {path}", quiet) as progress:
            fr = certify_file(program_path, loader or load_document_file, certificate, load_certificate_file,
                              store=store,
                              jobs=jobs, progress=progress)
    except BadInput as e:
        if certificate is not None and e.where == certificate and not e.option:
            # the file --certificate gave (empty, unreadable, ...): named with its option, not as a program argument
            raise BadInput(e.where, e.field, e.rule, e.violations, option="--certificate") from None
        raise
    except VerispatialError as e:
        if certificate is not None and isinstance(e, (ParseError, CertificateMismatch)):
            bad = bad_input_of(certificate, e)
            raise BadInput(bad.where, bad.field, bad.rule, bad.violations, option="--certificate") from None
        raise bad_input_of(path, e) from None
    except Exception as e:
        raise CheckerError(f"{type(e).__name__}: {e}") from None
    fr = with_host_args(fr, path)
    shown = _shown(fr.program, fr.report)
    if shown is None:
        return fr
    import attrs

    from verispatial.report.sources import with_sources

    return attrs.evolve(fr, report=with_sources(fr.report, shown))


def with_host_args(fr: Any, path: str) -> Any:
    """``fr`` with its counterexamples' trips also given as the host arguments whose ranges they stand for
    (``report.hostargs``), for a host description ``path``; ``fr`` itself for a program.json, a proved run or a host
    with no ranges."""
    from verispatial.certify.report import Verdict
    from verispatial.cli.imports import HOST_SUFFIXES

    if Path(path).suffix not in HOST_SUFFIXES or not any(r.verdict == Verdict.REFUTED for r in fr.report.results):
        return fr
    import attrs

    from verispatial.frontends.ttmetal.host import load_host
    from verispatial.report.hostargs import with_host_args as annotate

    try:
        spec = load_host(path)
    except (VerispatialError, OSError, RecursionError):  # read once already: changed since, nothing to name
        return fr
    return attrs.evolve(fr, report=annotate(fr.report, spec, path))


def _shown(program: Program | TemplatedProgram | None, report: Any) -> Program | None:
    """The program a report's counterexamples and consequences are shown in: a templated program's expansion, built
    only when something did not prove (a proof names nothing to locate)."""
    from verispatial.ir.templated import TemplatedProgram

    if isinstance(program, TemplatedProgram):
        return None if report.exit_code == EXIT_OK else program.expand()
    return program


def _certify_outputs(done: list[tuple[str, Any]], as_json: bool, sarif_out: str | None, junit_out: str | None,
                     certificate_out: str | None, expect: str = "proved") -> int:
    """Write the reports of a certify run (files first, all computed before any is written) and print them."""
    worst = _worst([fr.report.exit_code for _, fr in done])
    groupings = [_grouped(fr.report, fr.program) for _, fr in done]  # consequences under their findings: display only
    # the programs the reports' texts name buffers and words of, each expanded once (a templated program's expansion)
    shown = [_shown(fr.program, fr.report) if fr.report.exit_code != EXIT_OK else None for _, fr in done]
    from verispatial.report.names import namer
    # Every output is computed before the first is written, so a failure leaves no partial set of files.
    outputs: list[tuple[str, str]] = []
    if sarif_out is not None:
        from verispatial.report.sarif import program_artifact, sarif_log

        # a host's kernel lines are named as the user opens them (cli.imports.openable): no directory to add
        arts = [program_artifact(path, fr.report, p, g) for (path, fr), g, p in zip(done, groupings, shown, strict=True)]
        outputs.append((sarif_out, json.dumps(sarif_log(arts, worst), indent=1) + "\n"))
    if junit_out is not None:
        from verispatial.report.junit import junit_xml, report_cases

        outputs.append((junit_out, junit_xml([c for (path, fr), p in zip(done, shown, strict=True)
                                              for c in report_cases(fr.report, path, _op_sources(fr.report, p),
                                                                    namer(p))],
                                             "verispatial certify")))
    refusal = None
    if certificate_out is not None:
        refusal = recording_refusal(done[0][1].report, expect)
    if certificate_out is not None and refusal is None:
        (path, fr), = done
        try:
            from verispatial.certify.certificate import derive_certificate

            derived = derive_certificate(fr.program if fr.program is not None else load_document_file(path), fr.report)
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
        from verispatial.report.consequences import annotate_json

        docs = [annotate_json(fr.report.to_json(), g) for (_, fr), g in zip(done, groupings, strict=True)]
        if certificate_out is not None:
            docs[0]["write_certificate"] = {"path": certificate_out, "written": refusal is None, "reason": refusal}
        write_json(docs[0] if len(docs) == 1 else docs)
    else:
        from verispatial.report.text import report_lines

        for (_, fr), g, p in zip(done, groupings, shown, strict=True):
            emit(report_lines(fr.report, fr.shape, g, _op_sources(fr.report, p), p))
    return worst


def _op_sources(report: Any, shown: Program | None) -> dict[str, Any]:
    """``sources.obligation_sources`` of a run: the source lines of the ops its unproved obligations without a
    counterexample name, in ``shown`` (``_shown``: None for a proved run; empty for a program no front end read)."""
    from verispatial.report.sources import obligation_sources

    return obligation_sources(shown, report) if shown is not None else {}


def _grouped(report: Any, program: Program | TemplatedProgram | None) -> Any:
    """``consequences.grouped`` of ``report`` (None when nothing is refuted: nothing to group under), its module and
    the program's expansion (``_shown``) touched only then: a proved report, the warm run's, needs neither."""
    from verispatial.certify.report import Verdict, verdict_set

    if Verdict.REFUTED not in verdict_set(report.results):
        return None
    from verispatial.report.consequences import grouped

    return grouped(report, _shown(program, report))


def _worst(codes: Sequence[int]) -> int:
    """As ``Report.exit_code``: a refutation outranks a checker error, which outranks a failure to prove."""
    return next((c for c in (EXIT_REFUTED, EXIT_CHECKER_ERROR, EXIT_FAILED) if c in codes), EXIT_OK)


@click.command("certify")
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
@click.option("--budget", "budget_seconds", type=Seconds(),
              default=budget.DEFAULT_SECONDS, show_default=True, metavar="SECONDS",
              help="Wall-clock bound of the whole run: past it every obligation not yet decided is failed-to-prove, "
                   "saying so.")
@cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@ttlang_options
def certify_cmd(programs: tuple[str, ...], certificate: str | None, as_json: bool, sarif_out: str | None,
                junit_out: str | None, jobs: int, certificate_out: str | None, expect: str, smt2_dir: str | None,
                budget_seconds: float, cache_dir: str | None, no_cache: bool, quiet: bool, operation: str | None,
                shapes: tuple[str, ...], ranges: tuple[str, ...], target: str | None, devices: int | None) -> int:
    """Discharge every obligation of each PROGRAM.json and report each verdict. A FILE.py is a TT-Lang source:
    it is imported (as ``import ttlang``) and each of its shape classes certified; a tt-metal HOST.yaml is imported
    first (as ``import ttmetal``)."""
    tt = TtlangOptions(operation, shapes, ranges, target, devices)
    return guard(as_json, lambda: run_certify(programs, certificate, as_json, sarif_out, jobs, certificate_out,
                                               smt2_dir, junit_out, cache_dir, no_cache, quiet, budget_seconds,
                                               expect, tt))
