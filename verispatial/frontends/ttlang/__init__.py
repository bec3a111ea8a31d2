"""The TT-Lang front end: a ``@ttl.operation`` read from its Python source into program.json, statically.

``import_file`` is the entry point (the CLI's ``verispatial import ttlang`` and ``certify FILE.py``). Modules:
``source`` reads the file's structure, ``expr`` its expressions, ``values`` / ``shapes`` the shape arithmetic and
its classes, ``lower`` a kernel's statements into ops, ``program`` the assembled programs, ``refusals`` what is
refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from verispatial.errors import ParseError
from verispatial.frontends.ttlang.program import Imported, import_operation
from verispatial.frontends.ttlang.shapes import parse_ranges, parse_shapes
from verispatial.frontends.ttlang.source import parse
from verispatial.ir.target import get_target

__all__ = ["Imported", "import_file"]


def import_file(path: str, operation: str | None = None, shapes: Sequence[str] = (), ranges: Sequence[str] = (),
                target: str = "wormhole", devices: int | None = None) -> list[Imported]:
    """The programs of operation ``operation`` (default: the file's only one) of the TT-Lang source ``path``, one per
    shape class. ``shapes``: ``TENSOR=D0xD1`` (elements); ``ranges``: ``NAME=LO:HI[:STEP]``; ``target``:
    ``wormhole`` or ``blackhole`` (``ir.target.get_target`` names); ``devices``: the machine's device count, for an
    example that spreads its tensors over a mesh of as many devices as the machine has (the operation then runs on
    one device's shard: ``shapes`` module docstring). Raises ``ParseError`` for bad options or an unreadable file and
    ``SourceRefused`` (file:line) for a construct that is not lowered."""
    if devices is not None and devices < 1:
        raise ParseError("--devices", f"{devices}: expected a positive number of devices")
    src = parse(path)
    return import_operation(src, operation, parse_shapes(shapes), parse_ranges(ranges), get_target(target), devices)
