"""``verispatial explain``: certify a program and explain each refutation with a narrative and a picture."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from verispatial.cli.exits import guard
from verispatial.cli.inputs import bad_input_of, load_certificate_file, load_program_file, open_proof_store
from verispatial.cli.options import cache_options
from verispatial.cli.output import (
    check_output_dir,
    check_output_path,
    check_outputs_apart,
    emit,
    stderr_progress,
    write_atomic,
    write_json,
)
from verispatial.errors import BadInput, CheckerError, VerispatialError

if TYPE_CHECKING:
    from verispatial.ir.program import Program


def run_explain(program_path: str, out_dir: str | None, html_out: str | None, as_json: bool, jobs: int,
                cache_dir: str | None, no_cache: bool, quiet: bool) -> int:
    """The ``explain`` command: see ``explain_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    if html_out is not None:
        check_output_path(html_out)
        check_outputs_apart((("--html", html_out),), (program_path,))
    name = Path(program_path).name
    stem = Path(name).stem if name.endswith((".py", ".yaml", ".yml")) else name.removesuffix(".json").removesuffix(
        ".program")
    if name.endswith((".yaml", ".yml")):
        # host descriptions are one host.yaml per directory: named by their directory too, so two explained from one
        # working directory do not write into one ./host.explain/
        stem = f"{Path(program_path).resolve().parent.name}.{stem}"
    pictures_dir = _pictures_dir(Path(out_dir if out_dir is not None else f"{stem}.explain"), stem, html_out)
    store = open_proof_store(cache_dir, no_cache)
    from verispatial.cli.imports import certified_path, ttlang_loader
    from verispatial.driver.files import certify_file

    loader: Callable[[str], Program] = load_program_file
    if program_path.endswith(".py"):  # a TT-Lang source at its own shapes, read as certify reads it
        loader, store = ttlang_loader(program_path), None
    try:
        with certified_path(program_path) as path, stderr_progress(f"explain {program_path}", quiet) as progress:
            fr = certify_file(path, loader, None, load_certificate_file, store=store, jobs=jobs,
                              progress=progress)
    except BadInput:
        raise
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"{type(e).__name__}: {e}") from None
    from verispatial.ir.templated import TemplatedProgram

    program = fr.program if fr.program is not None else load_program_file(program_path)
    if isinstance(program, TemplatedProgram):
        program = program.expand()  # explained in full: the stuck ops of every section
    from verispatial.cli.certify import with_host_args

    fr = with_host_args(fr, program_path)  # a host's ranges named as the arguments they are
    if fr.program is not None:
        import attrs

        from verispatial.report.sources import with_sources

        fr = attrs.evolve(fr, report=with_sources(fr.report, program))  # counterexamples at the source lines
    try:
        from verispatial.report.explain import explain_report, explanation_lines
        from verispatial.report.html import draw, html_page

        exps = explain_report(program, fr.report)
        drawn = draw(exps)
    except Exception as e:
        raise CheckerError(f"explain: {type(e).__name__}: {e}") from None
    files = _write_pictures(pictures_dir, stem, drawn)
    if html_out is not None:
        write_atomic(html_out, html_page(fr.report, exps, drawn, program))
    if as_json:
        write_json({"program": fr.report.program, "exit_code": fr.report.exit_code,
                     "explanations": [{**x.to_json(), "files": files.get(i, [])} for i, x in enumerate(exps)]})
    else:
        from verispatial.report.text import report_lines, unproved_lines

        lines = report_lines(fr.report, fr.shape)
        emit([lines[0], *[ln for ln in lines[1:] if ln[0].startswith("  ") and not ln[0].startswith("   ")]])
        emit([(ln, "") for ln in explanation_lines(exps, files)] or [("nothing to explain: no refutation", "")])
        from verispatial.report.names import namer
        from verispatial.report.sources import obligation_sources

        # no counterexample to draw, but the reason is what a user acts on, at the line of the op it names
        emit(unproved_lines(fr.report, sources=obligation_sources(program, fr.report), name=namer(program)))
        emit([lines[-1]])
    return fr.report.exit_code


def _own_picture(stem: str) -> re.Pattern[str]:
    """The names ``_write_pictures`` gives the pictures of a program of stem ``stem``: ``STEM.I.J.KIND.dot|svg``."""
    return re.compile(rf"{re.escape(stem)}\.[0-9]+\.[0-9]+\.[a-z][a-z-]*\.(dot|svg)")


def _pictures_dir(pictures_dir: Path, stem: str, html_out: str | None) -> Path:
    """``pictures_dir``, checked before any work: ``BadInput`` when it is a file, its parent does not exist, or it
    holds any file but this program's pictures of an earlier run (and the ``--html`` page ``html_out``). Those are
    replaced (``_write_pictures``); anything else there (the inputs' own directory, another program's pictures) is
    refused rather than mixed with."""
    check_output_dir(str(pictures_dir), "the pictures")
    if pictures_dir.is_dir():
        own = _own_picture(stem)
        try:
            page = Path(html_out).resolve() if html_out is not None else None
            others = sorted(e.name for e in os.scandir(pictures_dir)
                            if not (e.is_file() and (own.fullmatch(e.name) or Path(e.path).resolve() == page)))
        except OSError as e:
            raise BadInput(str(pictures_dir), "", f"cannot read: {e.strerror or e}") from None
        if others:
            more = f", +{len(others) - 1} more" if len(others) > 1 else ""
            raise BadInput(str(pictures_dir), "-o", f"holds files explain did not write ({others[0]}{more}): the "
                           f"pictures go into a new or empty directory, or one holding only {stem}'s pictures")
    return pictures_dir


def _write_pictures(pictures_dir: Path, stem: str, drawn: list[list[Any]]) -> dict[int, list[str]]:
    """Write each explanation's pictures as ``STEM.I.J.KIND.dot`` and ``.svg`` into ``pictures_dir`` (made when
    there is an explanation), removing this program's pictures of an earlier run that this one does not write (a
    stale picture would read as one of this run's); per explanation, the files written (or why there is no SVG)."""
    files: dict[int, list[str]] = {}
    if drawn:  # one row per explanation
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
    if pictures_dir.is_dir():
        own, written = _own_picture(stem), {Path(f).name for fs in files.values() for f in fs}
        for entry in os.scandir(pictures_dir):
            if own.fullmatch(entry.name) and entry.name not in written:
                Path(entry.path).unlink(missing_ok=True)
    return files


@click.command("explain")
@click.argument("program", metavar="PROGRAM.json|FILE.py|HOST.yaml")
@click.option("-o", "--out", "out_dir", metavar="DIR",
              help="Directory for the pictures, DOT and SVG (default: ./NAME.explain; NAME is the file's stem, for a "
                   "host description DIR.STEM with DIR its directory): new, empty, or holding only NAME's pictures of "
                   "an earlier run, which are replaced.")
@click.option("--html", "html_out", metavar="OUT.html", help="Also write one self-contained HTML report page.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanations as JSON only.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Obligations discharged in parallel.")
@cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def explain_cmd(program: str, out_dir: str | None, html_out: str | None, as_json: bool, jobs: int,
                cache_dir: str | None, no_cache: bool, quiet: bool) -> int:
    """Certify PROGRAM.json (or a TT-Lang FILE.py at its example's shapes, or a tt-metal HOST.yaml, read as certify
    reads them; counterexamples then name the source lines) and explain each refutation: a narrative and a picture
    (a deadlock's wait-for graph, a violation's or race's schedule as a timeline, an overlap on the memory map) as
    DOT and SVG."""
    return guard(as_json, lambda: run_explain(program, out_dir, html_out, as_json, jobs, cache_dir, no_cache, quiet))
