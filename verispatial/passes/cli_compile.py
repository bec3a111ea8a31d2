"""``verispatial compile model.json --target wormhole|blackhole|gpu [-o step.json] [--sections DIR]``: a thin layer
over ``compile_model`` and ``compose_step``.

Every op becomes a section and every section is certified on its own; the sections are then composed into ONE
program (``compose``). ``-o step.json`` writes it, certified, with its certificate beside it (``step.certificate.json``;
``NAME.program.json`` gets ``NAME.certificate.json``, the layout ``gate`` reads). ``--sections DIR`` also writes each
section's ``DIR/<op>.program.json`` and ``DIR/<op>.certificate.json`` (replacing what ``DIR`` held).

Exit codes (DESIGN §8): 0 every section (and the composed program) proved; 1 something refuted; 2 bad input, a pass
refusal (the line names the pass, the op and the reason) or a compose refusal (the line names the rule); 3 something
failed to prove; 4 a checker error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from verispatial.driver.cache import ProofCache
from verispatial.driver.store import open_store
from verispatial.errors import ComposeRefused, ParseError, PassRefused, VerispatialError
from verispatial.ir.graph import ModelGraph, load_graph
from verispatial.ir.section import AccForm
from verispatial.ir.target import Target, get_target
from verispatial.passes.compile import (
    ComposedStep,
    certificate_path,
    compile_model,
    compose_step,
    foreign_files,
    write_program,
    write_sections,
)
from verispatial.passes.pipeline import Pipeline, capped_passes


class _UsageError(Exception):
    """A command-line usage error, reported on one line (argparse would print the usage block)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="verispatial compile", description="Compile a model graph into one certified program.")
    ap.add_argument("model", metavar="MODEL.json")
    ap.add_argument("--target", required=True, help="wormhole, blackhole or gpu (or a full target name)")
    ap.add_argument("-o", "--out", dest="out", default=None, metavar="OUT.json",
                    help="write the composed program and its certificate beside it (OUT.certificate.json)")
    ap.add_argument("--sections", dest="out_dir", default=None, metavar="DIR",
                    help="also write <DIR>/<op>.program.json and <op>.certificate.json per section (replacing what DIR "
                         "held)")
    ap.add_argument("--no-certify", action="store_true", help="compile only; do not run the checker")
    for opt, what in (("--max-cols", "columns of a matmul grid"), ("--max-rows", "rows of a matmul grid"),
                      ("--max-sites", "sites of an elementwise or fold op")):
        ap.add_argument(opt, type=int, default=None, metavar="N", help=f"cap the {what} (default: the target's mesh)")
    ap.add_argument("--acc-form", default=None, choices=[f.value for f in AccForm], metavar="FORM",
                    help="force every matmul's accumulation form (" + ", ".join(f.value for f in AccForm) + "); a "
                         "section where it cannot apply is refused by name (default: tile's rule)")
    ap.add_argument("--one-mover", action="store_true",
                    help="run each site's loads and stores on one data-movement engine (their loop nests interleaved); "
                         "a gather or scatter is refused by name")
    ap.add_argument("--cache-dir", default=None, metavar="DIR",
                    help="the persistent proof cache (default: $VERISPATIAL_CACHE_DIR, else the user's cache directory)")
    ap.add_argument("--no-cache", action="store_true", help="neither read nor write the persistent proof cache")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--progress", action="store_true",
                    help="plain progress lines on stderr even on a terminal (default: plain lines when stderr is not "
                         "a terminal, a progress bar on one)")
    return ap


def run_compile(argv: Sequence[str]) -> int:
    """Run the command on ``argv`` (without the ``compile`` word); returns the exit code. Never raises for bad
    input: it prints one ``error:`` line on stderr and returns 2."""
    err, out = sys.stderr, sys.stdout
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as e:  # --help
        return 0 if e.code == 0 else 2
    except _UsageError as e:
        err.write(f"verispatial: error: compile: {e}\n")
        return 2
    try:
        graph = load_graph(args.model)
        target = get_target(args.target)
    except RecursionError:  # JSON nested past what the reader takes
        err.write(f"verispatial: error: {args.model}: (document): JSON nested too deeply\n")
        return 2
    except OSError as e:
        err.write(f"verispatial: error: {args.model}: cannot read: {e.strerror or e}\n")
        return 2
    except VerispatialError as e:
        # A ParseError already names its field (the file, or ``target``).
        named = isinstance(e, ParseError) and e.field == args.model
        err.write(f"verispatial: error: {e}\n" if named else f"verispatial: error: {args.model}: {e}\n")
        return 2
    if args.out_dir is not None and Path(args.out_dir).exists() and not Path(args.out_dir).is_dir():
        # Checked before any work: a compile that cannot write its sections must not run for minutes first.
        err.write(f"verispatial: error: {args.out_dir}: exists and is not a directory, expected an output directory\n")
        return 2
    if args.out_dir is not None and foreign_files(Path(args.out_dir)):
        # A sections directory is replaced whole (stale sections do not linger): never one holding anything else.
        foreign = foreign_files(Path(args.out_dir))
        err.write(f"verispatial: error: {args.out_dir}: holds files compile did not write ({', '.join(foreign[:3])}"
                  + (f", +{len(foreign) - 3} more" if len(foreign) > 3 else "") + "): expected a sections directory "
                  "(only <op>.program.json and <op>.certificate.json) or a new one\n")
        return 2
    if args.out is not None:
        for path, what in ((Path(args.out), "the program"), (certificate_path(args.out), "its certificate")):
            if path.is_dir():
                err.write(f"verispatial: error: {path}: is a directory, expected a file path for {what}\n")
                return 2
        if not Path(args.out).parent.is_dir():
            err.write(f"verispatial: error: {args.out}: the directory {Path(args.out).parent} does not exist\n")
            return 2

    from verispatial.report.progress import progress as progress_on

    with progress_on(f"compile {args.model}", quiet=args.quiet, terminal=False if args.progress else None) as shown:
        return _run(args, shown.say, err, out, graph, target)


def _run(args: argparse.Namespace, progress: Callable[[str], None], err: TextIO, out: TextIO, graph: ModelGraph,
         target: Target) -> int:
    """The command's work once its arguments and outputs are checked (``progress`` gets one line per step)."""

    try:
        caps = (args.max_cols, args.max_rows, args.max_sites)
        if any(c is not None and c < 1 for c in caps):
            err.write("verispatial: error: --max-cols, --max-rows and --max-sites take a positive number\n")
            return 2
        pipeline = Pipeline(capped_passes(*caps, acc_form=args.acc_form, one_mover=args.one_mover))
        proofs = ProofCache(open_store(args.cache_dir, args.no_cache))
        sections = compile_model(graph, target, None, progress, check=not args.no_certify, pipeline=pipeline,
                                 cache=proofs)
        step: ComposedStep | None = None
        if args.out is not None:
            # Composed (a refusal names its rule) before anything is written.
            step = compose_step(graph, sections, target, check=not args.no_certify, progress=progress, cache=proofs)
        if args.out_dir is not None:
            write_sections(sections, Path(args.out_dir))
        if step is not None:
            write_program(step.program, step.certificate, args.out)
    except ComposeRefused as e:
        err.write(f"verispatial: error: {args.model}: {e}\n")
        return 2
    except PassRefused as e:
        err.write(f"verispatial: error: {args.model}: pass {e.pass_name!r} refused: {e.reason}\n")
        return 2
    except OSError as e:
        where = args.out if args.out is not None and e.filename and str(args.out) in str(e.filename) else args.out_dir
        err.write(f"verispatial: error: {where}: cannot write: {e.strerror or e}\n")
        return 2
    worst = 0
    for s in sections:
        code = s.report.exit_code if s.report is not None else 0
        out.write(f"{s.name}: {s.op}, {len(s.program.programs)} engine programs, {s.ops} ops, "
                  f"compiled in {s.compile_seconds:.3f} s, {_verdict(s.report)} in {s.certify_seconds:.2f} s\n")
        worst = _worse(worst, code)
    if step is not None:
        out.write(f"{step.program.name}: composed, {len(step.program.sections)} sections, "
                  f"{len(step.program.programs)} engine programs, {step.ops} ops, composed in "
                  f"{step.compose_seconds:.2f} s, {_verdict(step.report)} in {step.certify_seconds:.2f} s, written to "
                  f"{args.out} and {certificate_path(args.out)}\n")
        worst = _worse(worst, step.report.exit_code if step.report is not None else 0)
    out.write(f"{graph.name}: {len(sections)} sections on {target.name}\n")
    return worst


def _verdict(report: object) -> str:
    code = getattr(report, "exit_code", None)
    return "not certified" if code is None else {0: "proved", 1: "REFUTED", 3: "failed to prove", 4: "checker error"}[code]


def _worse(a: int, b: int) -> int:
    """Refuted outranks checker error, which outranks failed to prove (as Report.exit_code)."""
    return max(a, b, key=lambda c: {0: 0, 3: 1, 4: 2, 1: 3}[c])
