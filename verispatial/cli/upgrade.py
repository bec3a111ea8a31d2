"""``verispatial upgrade``: a format 1 program converted to the current format."""

from __future__ import annotations

import sys

import click

from verispatial.cli.exits import EXIT_OK, guard
from verispatial.cli.inputs import bad_input_of, load_json_object
from verispatial.cli.output import check_output_path, write, write_atomic
from verispatial.errors import BadInput, CheckerError, VerispatialError


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
    write(f"{in_path}: format 1 upgraded to version {VERSION}: {out}\n")
    if up.computes:
        sys.stderr.write(f"verispatial: {in_path}: {up.computes} compute step{'s' if up.computes != 1 else ''} "
                         "got no operand pages (ins: []): format 1 did not name them, so the checker does not "
                         "check their reads (cb-read-unwaited) until they are named\n")
    return EXIT_OK


@click.command("upgrade")
@click.argument("program", metavar="IN.json")
@click.option("-o", "out", metavar="OUT.json", required=True, help="Where to write the upgraded program.")
@click.option("--without-operands", is_flag=True,
              help="Write it even though its compute steps name no operand pages (their reads go unchecked).")
def upgrade_cmd(program: str, out: str, without_operands: bool) -> int:
    """Convert the format 1 program IN.json to the current format (written to OUT.json)."""
    return guard(False, lambda: run_upgrade(program, out, without_operands))
