"""``verispatial validate`` and ``schema``: a program checked against the schema and the structural rules, and the
schema itself."""

from __future__ import annotations

import click

from verispatial.cli.exits import EXIT_OK, guard
from verispatial.cli.inputs import load_document_file
from verispatial.cli.output import write, write_json
from verispatial.errors import BadInput
from verispatial.ir.limits import QUOTE_MAX, clip


def run_validate(program_path: str, as_json: bool) -> int:
    """The ``validate`` command: prints every structural violation (one per line on stdout) and the one-line
    error on stderr; raises ``BadInput`` for unreadable or malformed files."""
    try:
        program = load_document_file(program_path)
    except BadInput as e:
        if e.violations and not as_json:
            for entity, rule in e.violations:
                write(f"{program_path}: {clip(entity, 2 * QUOTE_MAX)}: {clip(rule, 2 * QUOTE_MAX)}\n")
        raise
    from verispatial.ir.templated import document_summary

    engines, ops = document_summary(program)
    if as_json:
        write_json({"file": program_path, "valid": True, "program": program.name, "target": program.target.name,
                     "engines": engines, "ops": ops, "violations": []})
    else:
        write(f"{program_path}: valid: program {clip(program.name)}, target {clip(program.target.name)}, "
               f"{engines} engine programs, {ops} ops\n")
    return EXIT_OK


@click.command("validate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON only.")
def validate_cmd(program: str, as_json: bool) -> int:
    """Check PROGRAM.json against the schema and the structural rules; print every violation."""
    return guard(as_json, lambda: run_validate(program, as_json))


@click.command("schema")
def schema_cmd() -> int:
    """Print the JSON Schema of program.json."""
    from verispatial.ir.serialize import schema

    write_json(schema())
    return EXIT_OK
