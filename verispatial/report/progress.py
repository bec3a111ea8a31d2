"""Progress on stderr while compile, certify and gate work: a long run is never silent.

When stderr is not a terminal (CI logs, pipes) every step is one plain line, ``<label>: <message> (<elapsed> s)``,
written at once; on a terminal a rich progress bar (steps done of the total when it is known, the current message,
the elapsed time) redraws in place. ``-q`` silences both.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

Say = Callable[[str], None]


class Progress:
    """``say(message)`` reports a step; ``advance(message)`` reports a step that completes one of ``total``."""

    def __init__(self, say: Say, advance: Say) -> None:
        self.say = say
        self.advance = advance

    def __call__(self, message: str) -> None:
        self.say(message)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress(label: str, total: int | None = None, *, quiet: bool = False, stream: TextIO | None = None,
             terminal: bool | None = None) -> Iterator[Progress]:
    """A ``Progress`` for a run called ``label`` of ``total`` steps (None: unknown). ``stream`` defaults to the
    current ``sys.stderr``; ``terminal`` (default: whether it is a terminal) chooses the bar over plain lines."""
    err = stream if stream is not None else sys.stderr
    if quiet:
        yield Progress(lambda _m: None, lambda _m: None)
        return
    t0 = time.perf_counter()
    if not (terminal if terminal is not None else _is_terminal(err)):
        done = [0]

        def line(message: str) -> None:
            err.write(f"{label}: {message} ({time.perf_counter() - t0:.1f} s)\n")
            err.flush()

        def step(message: str) -> None:
            done[0] += 1
            count = f"[{done[0]}/{total}] " if total else ""
            line(count + message)

        yield Progress(line, step)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    console = Console(file=err, stderr=err is sys.stderr, markup=False, highlight=False, force_terminal=True)
    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}", markup=False)]
    with Bar(*columns, console=console, transient=True) as bar:
        task = bar.add_task("", total=total)

        def update(message: str) -> None:
            bar.update(task, description=message, refresh=True)

        def step_bar(message: str) -> None:
            bar.update(task, advance=1, description=message, refresh=True)

        yield Progress(update, step_bar)
