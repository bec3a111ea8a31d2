"""``verispatial export``: a program as a Promela model, a PNML net or a DOT graph."""

from __future__ import annotations

import click

from verispatial.cli.exits import EXIT_OK
from verispatial.cli.inputs import load_program_file
from verispatial.cli.output import check_output_path, check_outputs_apart, write, write_atomic
from verispatial.errors import BadInput, CheckerError


def run_export(program_path: str, fmt: str, out: str | None) -> int:
    """The ``export`` command: PROGRAM.json as a Promela model (``promela``), a PNML P/T net (``pnml``) or Graphviz
    DOT (``dot``) of its behavioural net (``petri/ptnet.py``), to ``out`` (written atomically) or stdout. A program
    outside the Promela model (``PromelaUnsupported``) or the net (``NetUnsupported``) is bad input naming the
    construct."""
    if out is not None:
        check_output_path(out)
        check_outputs_apart((("-o", out),), (program_path,))
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
        write(text)
    else:
        write_atomic(out, text)
    return EXIT_OK


@click.command("export")
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
