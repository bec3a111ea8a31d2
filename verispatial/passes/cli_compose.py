"""``verispatial compose A.json B.json ... -o OUT.json [--state NAME]... [--placement stacked|round_robin]
[--open K]... [--no-certify] [-q]``: join programs users wrote themselves into one (``verispatial.passes.compose``).

Each input is loaded (schema, structure) and certified on its own first; one that does not prove is refused, naming
the section. ``--state NAME`` carries tensor NAME across steps (role ``state``), ``--open K`` leaves boundary K (after
section K, counted from 0) open: section K runs concurrently with K + 1. The joined program is certified (unless
``--no-certify``) and written to OUT.json with its certificate beside it (``OUT.certificate.json``; a
``NAME.program.json`` gets ``NAME.certificate.json``, the layout ``gate`` reads), each through a temporary file —
only when it proved (a certificate is written for a proved program only, as ``certify --write-certificate``);
``--no-certify`` writes the program and compose's fragment without certifying.

Exit codes (DESIGN §8): 0 the composed program proved; 1 something refuted; 2 bad input, an input that does not
certify on its own, or a compose refusal — one line naming the rule; 3 something failed to prove; 4 a checker error.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from verispatial.certify.certificate import derive_certificate
from verispatial.driver.run import certify
from verispatial.errors import ComposeRefused, InvalidProgram, VerispatialError
from verispatial.ir.limits import QUOTE_MAX, clip
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
from verispatial.passes.compile import certificate_path, write_program
from verispatial.passes.compose import PLACEMENTS, compose


class _UsageError(Exception):
    """A command-line usage error, reported on one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="verispatial compose", description="Join certified programs into one program.")
    ap.add_argument("inputs", nargs="+", metavar="SECTION.json", help="the sections, in order")
    ap.add_argument("-o", "--out", required=True, metavar="OUT.json",
                    help="the composed program (its certificate goes beside it)")
    ap.add_argument("--state", action="append", default=[], metavar="NAME",
                    help="a tensor carried across steps (role state); repeatable")
    ap.add_argument("--placement", default="stacked", choices=PLACEMENTS,
                    help="stacked: sections keep their sites; round_robin: section k on mesh site k mod |mesh|")
    ap.add_argument("--open", action="append", type=int, default=[], metavar="K",
                    help="leave boundary K (after section K, from 0) open: K runs with K+1; repeatable")
    ap.add_argument("--no-certify", action="store_true", help="do not certify the composed program")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--progress", action="store_true",
                    help="plain progress lines on stderr even on a terminal (default: plain lines when stderr is not "
                         "a terminal, a progress bar on one)")
    return ap


def _first_not_proved(report: Any) -> str:
    bad = [r for r in report.results if r.verdict.value != "proved"]
    first = bad[0]
    return f"{len(bad)} obligation(s) not proved (first: {first.name}: {first.verdict.value}: {first.reason})"


def run_compose(argv: Sequence[str]) -> int:
    """Run the command on ``argv`` (without the ``compose`` word); returns the exit code. Never raises for bad
    input: it prints one ``verispatial: error:`` line on stderr and returns 2."""
    err, out = sys.stderr, sys.stdout

    def fail(line: str) -> int:
        err.write(f"verispatial: error: {line}\n")
        return 2

    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as e:  # --help
        return 0 if e.code == 0 else 2
    except _UsageError as e:
        return fail(f"compose: {e}")
    from verispatial.report.progress import progress as progress_on

    with progress_on(f"compose {args.out}", quiet=args.quiet, terminal=False if args.progress else None) as shown:
        return _run(args, shown.say, err, out)


def _run(args: argparse.Namespace, progress: Callable[[str], None], err: TextIO, out: TextIO) -> int:
    """The command's work once its arguments are parsed (``progress`` gets one line per step)."""

    def fail(line: str) -> int:
        err.write(f"verispatial: error: {line}\n")
        return 2

    n = len(args.inputs)
    for k in args.open:
        if not 0 <= k < n - 1:
            return fail(f"--open: boundary {k} does not exist: {n} sections have boundaries 0..{n - 2}")
    for path, what in ((Path(args.out), "the program"), (certificate_path(args.out), "its certificate")):
        if path.is_dir():
            return fail(f"{path}: is a directory, expected a file path for {what}")
    if not Path(args.out).parent.is_dir():
        return fail(f"{args.out}: the directory {Path(args.out).parent} does not exist")
    sections: list[Program] = []
    for path in args.inputs:
        try:
            sections.append(load_program(path))
        except InvalidProgram as e:
            return fail(f"{path}: {clip(str(e), 2 * QUOTE_MAX)}")
        except VerispatialError as e:
            return fail(f"{path}: {clip(str(e), 2 * QUOTE_MAX)}" if not str(e).startswith(str(path)) else
                        clip(str(e), 2 * QUOTE_MAX))
        except RecursionError:
            return fail(f"{path}: (document): JSON nested too deeply")
        except OSError as e:
            return fail(f"{path}: cannot read: {e.strerror or e}")
    certificates: list[dict[str, Any]] = []
    for k, (path, sec) in enumerate(zip(args.inputs, sections, strict=True)):
        progress(f"[{k + 1}/{n}] {path}: certify ({len(sec.programs)} engine programs)")
        t0 = time.perf_counter()
        own = certify(sec)
        if own.exit_code != 0:
            return fail(f"compose: section-not-certified: section {k} ({path}) does not certify on its own: "
                        f"{_first_not_proved(own)}")
        certificates.append(derive_certificate(sec, own))
        out.write(f"{path}: {sec.name}, {len(sec.programs)} engine programs, proved in "
                  f"{time.perf_counter() - t0:.2f} s\n")
    barrier_after = [k not in args.open for k in range(n - 1)]
    t0 = time.perf_counter()
    try:
        program, frag = compose(sections, state=args.state, placement=args.placement, barrier_after=barrier_after,
                                target=sections[0].target, certificates=certificates)
    except ComposeRefused as e:
        return fail(str(e))
    dt = time.perf_counter() - t0
    report = None
    t1 = time.perf_counter()
    cert: dict[str, Any] = {}
    if not args.no_certify:
        progress(f"{program.name}: certify the composed program ({len(program.programs)} engine programs)")
        report = certify(program, progress=progress)
        if report.exit_code != 0:
            # As ``certify --write-certificate``: a certificate is written for a proved program only, and the
            # program goes with it, so nothing is written (``--no-certify`` writes the program without one).
            verdict = {1: "REFUTED", 3: "failed to prove", 4: "checker error"}[report.exit_code]
            out.write(f"{program.name}: {n} sections, {len(program.programs)} engine programs, composed in "
                      f"{dt:.2f} s, {verdict} in {time.perf_counter() - t1:.2f} s: {_first_not_proved(report)}; "
                      f"nothing written to {args.out}\n")
            return report.exit_code
        cert = derive_certificate(program, report)
    cert = {**cert, "compose": frag}
    try:
        write_program(program, cert, args.out)
    except OSError as e:
        return fail(f"{args.out}: cannot write: {e.strerror or e}")
    verdict = "not certified" if report is None else "proved"
    out.write(f"{program.name}: {n} sections, {len(program.programs)} engine programs, composed in {dt:.2f} s, "
              f"{verdict} in {time.perf_counter() - t1:.2f} s, written to {args.out} and "
              f"{certificate_path(args.out)}\n")
    return 0 if report is None else report.exit_code
