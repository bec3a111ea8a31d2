"""Options several commands share (click decorators) and the TT-Lang reading options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click


class TtlangOptions:
    """How to read a TT-Lang source: ``verispatial import ttlang`` and ``certify FILE.py`` share them."""

    def __init__(self, operation: str | None = None, shapes: Sequence[str] = (), ranges: Sequence[str] = (),
                 target: str | None = None, devices: int | None = None) -> None:
        self.operation = operation
        self.shapes = tuple(shapes)
        self.ranges = tuple(ranges)
        self.target = target
        self.devices = devices

    def given(self) -> list[str]:
        """The options given, by flag."""
        named = (("--operation", self.operation), ("--shape", self.shapes), ("--range", self.ranges),
                 ("--target", self.target), ("--devices", self.devices))
        return [flag for flag, v in named if v]


class Seconds(click.ParamType):
    """A positive, finite number of seconds (``--budget``): ``inf`` and ``nan`` are bad input, not a budget."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        import math

        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(v) or v <= 0:
            self.fail(f"{value!r} is not a positive, finite number of seconds", param, ctx)
        return v


def cache_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--cache-dir DIR`` and ``--no-cache`` (the parameters ``cache_dir`` and ``no_cache``)."""
    f = click.option("--no-cache", is_flag=True, help="Neither read nor write the persistent proof cache.")(f)
    return click.option("--cache-dir", metavar="DIR",
                        help="The persistent proof cache (default: $VERISPATIAL_CACHE_DIR, else the user's cache "
                             "directory).")(f)


def ttlang_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """How to read a TT-Lang source: ``--operation``, ``--shape``, ``--range``, ``--target``, ``--devices`` (the
    parameters ``operation``, ``shapes``, ``ranges``, ``target``, ``devices``; ``TtlangOptions`` holds them)."""
    f = click.option("--devices", type=click.IntRange(min=1), default=None, metavar="N",
                     help="TT-Lang sources: the machine's device count, for an example that shards its tensors over "
                          "every device (ttnn.GetNumAvailableDevices()): the operation is read at one device's "
                          "shard.")(f)
    f = click.option("--target", type=click.Choice(["wormhole", "blackhole"]), default=None,
                     help="TT-Lang sources: the machine (default wormhole).")(f)
    f = click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI[:STEP]",
                     help="TT-Lang sources: a shape parameter taking every value LO, LO+STEP, .. HI (a trip).")(f)
    f = click.option("--shape", "shapes", multiple=True, metavar="TENSOR=D0xD1",
                     help="TT-Lang sources: a tensor's shape in elements (default: the file's example call).")(f)
    return click.option("--operation", metavar="NAME", help="TT-Lang sources: the @ttl.operation to read.")(f)


def progress_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``-q/--quiet`` and ``--progress`` (the parameters ``quiet`` and ``plain_progress``) of ``compile`` and
    ``compose``."""
    f = click.option("--progress", "plain_progress", is_flag=True,
                     help="plain progress lines on stderr even on a terminal (default: plain lines when stderr is not "
                          "a terminal, a progress bar on one)")(f)
    return click.option("-q", "--quiet", is_flag=True, help="no progress lines on stderr")(f)
