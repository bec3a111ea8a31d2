"""The ``verispatial`` command line: one click application, one module per command or command group.

``main(argv) -> int`` never raises and never prints a traceback. Exit codes (DESIGN §8):

- 0: every obligation proved (``certify``), a terminated run without violations (``simulate``), a valid program
  (``validate``);
- 1: something refuted (``certify``), a deadlock, step limit or violation (``simulate``);
- 2: bad input: one line ``verispatial: error: <file>: <field>: <rule>`` on stderr, nothing written;
- 3: something failed to prove (never accepted);
- 4: a checker error (``verispatial: checker error: ...``);
- 130: interrupted (Ctrl-C): one line ``verispatial: interrupted``, and nothing printed or written after it.

With ``--json`` every exit code 0-4 prints exactly one JSON document on stdout (bad input and checker errors as
``{"exit_code": N, "error": {...}}``). ``exits.run`` maps errors to these codes; shared options are in ``options``,
what the commands read in ``inputs`` and what they write in ``output``. The commands import the checker, the
interpreter and the report writers inside their bodies: a command loads only what it runs, so ``--help`` and
bad input answer at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from verispatial import __version__
from verispatial.cli import exits
from verispatial.cli.certify import certify_cmd
from verispatial.cli.compile import compile_cmd
from verispatial.cli.compose import compose_cmd
from verispatial.cli.explain import explain_cmd
from verispatial.cli.exports import export_cmd
from verispatial.cli.gate import gate_cmd
from verispatial.cli.imports import import_group
from verispatial.cli.simulate import simulate_cmd
from verispatial.cli.throughput import throughput_cmd
from verispatial.cli.upgrade import upgrade_cmd
from verispatial.cli.validate import schema_cmd, validate_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, no_args_is_help=True)
@click.version_option(__version__, prog_name="verispatial")
def cli() -> None:
    """verispatial: certify spatial dataflow programs (program.json) with a Z3-backed checker.

    Exit codes: 0 all proved / ran clean, 1 refuted, 2 bad input, 3 failed to prove, 4 checker error.
    """


for _command in (certify_cmd, compile_cmd, compose_cmd, explain_cmd, export_cmd, gate_cmd, import_group, schema_cmd,
                 simulate_cmd, throughput_cmd, upgrade_cmd, validate_cmd):
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code; never raises and never
    prints a traceback (an interrupt is exit 130)."""
    return exits.run(cli, argv)
