"""``verispatial simulate``: one run of a program in the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence

import click

from verispatial.cli.exits import EXIT_OK, EXIT_REFUTED, guard
from verispatial.cli.inputs import bad_input_of, load_program_file, parse_trips
from verispatial.cli.output import write, write_json
from verispatial.errors import CheckerError, VerispatialError


def run_simulate(program_path: str, trip_specs: Sequence[str], seed: int | None, as_json: bool) -> int:
    """The ``simulate`` command: see ``simulate_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    program = load_program_file(program_path)
    trips = parse_trips(trip_specs, program)
    try:
        from verispatial.petri.interp import simulate

        result = simulate(program, trips=trips, seed=seed)
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"simulator: {type(e).__name__}: {e}") from None
    if as_json:
        write_json(result.to_json())
    else:
        from verispatial.report.names import namer

        # the program's names, as certify and explain give them (a certify seed replays here under the same
        # names); --json keeps the ids, the machine keys
        write(namer(program)(result.text()) + "\n")
    return EXIT_OK if result.status == "terminated" and not result.violations else EXIT_REFUTED


@click.command("simulate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--trip", "trips", multiple=True, metavar="NAME=V", help="A trip's value (default: its max).")
@click.option("--seed", type=int, default=None, help="Pick each step at random with this seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON only.")
def simulate_cmd(program: str, trips: tuple[str, ...], seed: int | None, as_json: bool) -> int:
    """Run PROGRAM.json once in the reference interpreter (op semantics: docs/semantics.md)."""
    return guard(as_json, lambda: run_simulate(program, trips, seed, as_json))
