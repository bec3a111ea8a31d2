"""``verispatial compose``: certified programs joined into one."""

from __future__ import annotations

import click


@click.command("compose", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compose_cmd(args: tuple[str, ...]) -> int:
    """Join certified programs (A.json B.json ... -o OUT.json [--state NAME]... [--placement stacked|round_robin]
    [--open K]...) into one certified program."""
    from verispatial.passes.cli_compose import run_compose

    return run_compose(args)
