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

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from verispatial.cli.inputs import load_program_file
from verispatial.cli.options import progress_options
from verispatial.cli.output import check_program_out, write
from verispatial.errors import BadInput, ComposeRefused

if TYPE_CHECKING:
    from verispatial.ir.program import Program

#: how ``compose`` may place sections (``verispatial.passes.compose.PLACEMENTS``, spelled here so that ``--help``
#: does not load the passes; tests/test_compose_cli.py pins that the two agree)
PLACEMENTS = ("stacked", "round_robin")


@click.command("compose")
@click.argument("inputs", nargs=-1, required=True, metavar="SECTION.json...")
@click.option("-o", "--out", required=True, metavar="OUT.json",
              help="the composed program (its certificate goes beside it)")
@click.option("--state", "states", multiple=True, metavar="NAME",
              help="a tensor carried across steps (role state); repeatable")
@click.option("--placement", type=click.Choice(PLACEMENTS), default="stacked", show_default=True,
              help="stacked: sections keep their sites; round_robin: section k on mesh site k mod |mesh|")
@click.option("--open", "opens", type=int, multiple=True, metavar="K",
              help="leave boundary K (after section K, from 0) open: K runs with K+1; repeatable")
@click.option("--no-certify", is_flag=True, help="do not certify the composed program")
@progress_options
def compose_cmd(inputs: tuple[str, ...], out: str, states: tuple[str, ...], placement: str, opens: tuple[int, ...],
                no_certify: bool, quiet: bool, plain_progress: bool) -> int:
    """Join certified programs (the sections, in order) into one certified program."""
    n = len(inputs)
    for k in opens:
        if not 0 <= k < n - 1:
            raise BadInput("", "", f"boundary {k} does not exist: {n} sections have boundaries 0..{n - 2}",
                           option="--open")
    check_program_out(out, inputs)
    sections = [load_program_file(path) for path in inputs]
    unknown = sorted(set(states) - {t.name for sec in sections for t in sec.tensors})
    if unknown:  # compose's own refusal (passes/compose.py), said before any section is certified
        raise BadInput("compose", "unknown-state", f"carried state {unknown[0]!r} is not a tensor of any section")
    from verispatial.report.progress import progress as progress_on

    with progress_on(f"compose {out}", quiet=quiet, terminal=False if plain_progress else None) as shown:
        certificates = _certify_sections(inputs, sections, shown.say)
        return _compose(sections, certificates, out, list(states), placement, [k not in opens for k in range(n - 1)],
                        not no_certify, shown.say)


def _first_not_proved(report: Any) -> str:
    bad = [r for r in report.results if r.verdict.value != "proved"]
    first = bad[0]
    return f"{len(bad)} obligation(s) not proved (first: {first.name}: {first.verdict.value}: {first.reason})"


def _certify_sections(paths: tuple[str, ...], sections: list[Program],
                      progress: Callable[[str], None]) -> list[dict[str, Any]]:
    """Each section's certificate; ``BadInput`` (``section-not-certified``) naming the first that does not prove."""
    from verispatial.certify.certificate import derive_certificate
    from verispatial.driver.run import certify

    certificates: list[dict[str, Any]] = []
    for k, (path, sec) in enumerate(zip(paths, sections, strict=True)):
        progress(f"[{k + 1}/{len(paths)}] {path}: certify ({len(sec.programs)} engine programs)")
        t0 = time.perf_counter()
        own = certify(sec)
        if own.exit_code != 0:
            raise BadInput("compose", "section-not-certified", f"section {k} ({path}) does not certify on its own: "
                           f"{_first_not_proved(own)}")
        certificates.append(derive_certificate(sec, own))
        write(f"{path}: {sec.name}, {len(sec.programs)} engine programs, proved in "
              f"{time.perf_counter() - t0:.2f} s\n")
    return certificates


def _compose(sections: list[Program], certificates: list[dict[str, Any]], out: str, states: list[str],
             placement: str, barrier_after: list[bool], check: bool, progress: Callable[[str], None]) -> int:
    """Join ``sections``, certify the result (with ``check``) and write it with its certificate when it proved (or
    was not checked); the composed program's exit code."""
    from verispatial.certify.certificate import derive_certificate
    from verispatial.driver.run import certify
    from verispatial.passes.compile import certificate_path, write_program
    from verispatial.passes.compose import compose

    n = len(sections)
    t0 = time.perf_counter()
    try:
        program, frag = compose(sections, state=states, placement=placement, barrier_after=barrier_after,
                                target=sections[0].target, certificates=certificates)
    except ComposeRefused as e:
        raise BadInput("compose", e.rule, e.detail) from None
    dt = time.perf_counter() - t0
    report = None
    t1 = time.perf_counter()
    cert: dict[str, Any] = {}
    if check:
        progress(f"{program.name}: certify the composed program ({len(program.programs)} engine programs)")
        report = certify(program, progress=progress)
        if report.exit_code != 0:
            # As ``certify --write-certificate``: a certificate is written for a proved program only, and the
            # program goes with it, so nothing is written (``--no-certify`` writes the program without one).
            verdict = {1: "REFUTED", 3: "failed to prove", 4: "checker error"}[report.exit_code]
            write(f"{program.name}: {n} sections, {len(program.programs)} engine programs, composed in "
                  f"{dt:.2f} s, {verdict} in {time.perf_counter() - t1:.2f} s: {_first_not_proved(report)}; "
                  f"nothing written to {out}\n")
            return int(report.exit_code)
        cert = derive_certificate(program, report)
    cert = {**cert, "compose": frag}
    try:
        write_program(program, cert, out)
    except OSError as e:
        raise BadInput(out, "", f"cannot write: {e.strerror or e}") from None
    verdict = "not certified" if report is None else "proved"
    write(f"{program.name}: {n} sections, {len(program.programs)} engine programs, composed in {dt:.2f} s, "
          f"{verdict} in {time.perf_counter() - t1:.2f} s, written to {out} and {certificate_path(out)}\n")
    return 0 if report is None else int(report.exit_code)
