"""``verispatial throughput``: a lower bound on the cycles per work item of a live program."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from verispatial.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_REFUTED, guard
from verispatial.cli.inputs import bad_input_of, load_program_file, parse_trips
from verispatial.cli.output import write_json
from verispatial.errors import CheckerError, VerispatialError


def run_throughput(program_path: str, trip_specs: Sequence[str], as_json: bool) -> int:
    """The ``throughput`` command: see ``throughput_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    program = load_program_file(program_path)
    trips = parse_trips(trip_specs, program)
    from verispatial.petri.interp import simulate
    from verispatial.petri.throughput import ThroughputError, throughput_bound
    from verispatial.report.throughput import no_bound_json

    try:
        run = simulate(program, trips=trips)
        if run.status != "terminated":
            stuck = "; ".join(str(st) for st in run.stuck[:3])
            why = (f"not live: the interpreter's run ends in {run.status}" + (f" ({stuck})" if stuck else "")
                   + "; no throughput bound")
            if as_json:
                write_json(no_bound_json(program.name, EXIT_REFUTED, why, run))
            sys.stderr.write(f"verispatial: {program_path}: {why}\n")
            return EXIT_REFUTED
        bound = throughput_bound(program, trips)
    except ThroughputError as e:
        if as_json:
            write_json(no_bound_json(program.name, EXIT_FAILED, e.what))
        sys.stderr.write(f"verispatial: {program_path}: {e.what}\n")
        return EXIT_FAILED
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"throughput: {type(e).__name__}: {e}") from None
    if as_json:
        write_json(bound.to_json())
    else:
        from verispatial.report.throughput import bound_lines

        sys.stdout.write("\n".join(bound_lines(bound)) + "\n")
    return EXIT_OK


@click.command("throughput")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--trip", "trips", multiple=True, metavar="NAME=V", help="A trip's value (default: its max).")
@click.option("--json", "as_json", is_flag=True, help="Print the bound as JSON only.")
def throughput_cmd(program: str, trips: tuple[str, ...], as_json: bool) -> int:
    """A lower bound on the cycles per work item (one run) of a live PROGRAM.json: the maximum cycle ratio of its
    timed marked graph with the target's latencies, and the critical cycle. Exit 1 when the program is not live, 3
    when the bound cannot be computed."""
    return guard(as_json, lambda: run_throughput(program, trips, as_json))
