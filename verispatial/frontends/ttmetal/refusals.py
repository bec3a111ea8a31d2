"""Refusals: a construct the front end does not read, named, with the file:line it stands at (exit 2).

A refusal is never a verdict: the kernel is neither proved nor refuted, the engineer is told which statement stopped
the reading. ``construct`` is the stable name the corpus benchmark counts (``call to fabric_async_write``,
``while loop``, ``remote L1 write``); ``detail`` says more about this occurrence.
"""

from __future__ import annotations

from verispatial.errors import VerispatialError
from verispatial.ir.source import SourceLoc


class Refused(VerispatialError):
    """The kernel uses ``construct`` at ``loc``, which the front end cannot map onto ops."""

    rule = "not read by the tt-metal front end"

    def __init__(self, construct: str, loc: SourceLoc, detail: str = "") -> None:
        self.construct = construct
        self.loc = loc
        self.detail = detail
        super().__init__(self.line())

    def line(self) -> str:
        where = f"{self.loc.file}:{self.loc.line}"
        what = f"{self.construct} ({self.detail})" if self.detail else self.construct
        text = f": {self.loc.text}" if self.loc.text else ""
        return f"{where}: not read: {what}{text}"


class Inconsistent(Refused):
    """The kernel at ``loc`` contradicts a rule the program format states structurally (a multicast whose
    destination count is not its rectangle's): reported at the C++ line, exit 2, as bad input."""

    rule = "the kernel contradicts the program rules"
