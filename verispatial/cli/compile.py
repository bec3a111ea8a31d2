"""``verispatial compile``: a model graph compiled into one certified program."""

from __future__ import annotations

import click


@click.command("compile", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compile_cmd(args: tuple[str, ...]) -> int:
    """Compile a model graph (MODEL.json --target wormhole|blackhole|gpu -o STEP.json [--sections DIR]) into one
    certified program."""
    from verispatial.passes.cli_compile import run_compile

    return run_compile(args)
