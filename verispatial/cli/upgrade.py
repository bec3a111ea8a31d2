"""``verispatial upgrade``: a program converted to another version of the format.

- format 1 -> version 2 (``ir/upgrade.py``: every field version 2 added filled with what format 1 meant);
- version 2 -> version 3: a composed program (every section but the last closed by a rendezvous) written as its
  distinct sections and their instances (``ir/templated.templated_of``, which checks that the result expands to the
  very program it was given); a version-2 program is read as it is, so this is a size and speed matter only;
- with ``--expand``, version 3 -> version 2: the program stated in full (for a tool that reads version 2 only).
"""

from __future__ import annotations

import sys

import click

from verispatial.cli.exits import EXIT_OK, guard
from verispatial.cli.inputs import bad_input_of, load_json_object, refuse_source
from verispatial.cli.output import check_output_path, write, write_atomic
from verispatial.errors import BadInput, CheckerError, VerispatialError


def run_upgrade(in_path: str, out: str, without_operands: bool = False, expand: bool = False) -> int:
    """The ``upgrade`` command (module docstring): IN.json converted, to ``out`` (written atomically). Raises
    ``BadInput`` for what is not a valid program of the version it says, for a format 1 program with compute steps
    unless ``without_operands`` (format 1 did not name the pages a compute step reads, so the upgraded step reads
    none and its reads go unchecked — a silent ``proved`` unless the user asks for it), for a version-2 program that
    has no templated form (saying why), and for a version-3 program without ``expand`` (it needs no upgrade)."""
    check_output_path(out)
    refuse_source(in_path)
    doc = load_json_object(in_path, "program")
    from verispatial.ir.program import VERSION
    from verispatial.ir.serialize import dumps

    version = doc.get("version")
    if version != 1:
        return _between_versions(in_path, out, version, expand)
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


def _between_versions(in_path: str, out: str, version: object, expand: bool) -> int:
    """Version 2 -> 3 (or, with ``expand``, 3 -> 2) of the program in ``in_path``."""
    from verispatial.cli.inputs import load_document_file
    from verispatial.ir.serialize import dumps
    from verispatial.ir.templated import TEMPLATED_VERSION, TemplatedProgram, templated_of

    program = load_document_file(in_path)  # a document of another version is refused naming its version
    if isinstance(program, TemplatedProgram):
        if not expand:
            raise BadInput(in_path, "version", f"version {TEMPLATED_VERSION} needs no upgrade (--expand writes it in "
                                               "full, version 2)")
        write_atomic(out, dumps(program.expand()))
        write(f"{in_path}: version {TEMPLATED_VERSION} written in full (version 2): {out}\n")
        return EXIT_OK
    if expand:
        raise BadInput(in_path, "version", f"version {version} is stated in full already (--expand reads version "
                                           f"{TEMPLATED_VERSION})")
    try:
        got = templated_of(program)
    except Exception as e:
        raise CheckerError(f"upgrade: {type(e).__name__}: {e}") from None
    if isinstance(got, str):
        raise BadInput(in_path, "version", f"version {version} is read as it is; it has no templated form: {got}")
    write_atomic(out, dumps(got))
    write(f"{in_path}: version {version} written as version {TEMPLATED_VERSION}, {len(got.instances)} sections of "
          f"{len(got.templates)} templates: {out}\n")
    return EXIT_OK


@click.command("upgrade")
@click.argument("program", metavar="IN.json")
@click.option("-o", "out", metavar="OUT.json", required=True, help="Where to write the upgraded program.")
@click.option("--without-operands", is_flag=True,
              help="Write it even though its compute steps name no operand pages (their reads go unchecked).")
@click.option("--expand", is_flag=True, help="Write a templated program (version 3) in full (version 2).")
def upgrade_cmd(program: str, out: str, without_operands: bool, expand: bool) -> int:
    """Convert IN.json: format 1 to version 2, a composed version-2 program to its templated form (version 3), or
    with --expand a version-3 program to version 2 (written to OUT.json)."""
    return guard(False, lambda: run_upgrade(program, out, without_operands, expand))
