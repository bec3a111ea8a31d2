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


class ScratchHint(Refused):
    """A refusal that goes away if buffer ``cb`` is read as scratch L1 (``Buffer.scratch``): a NoC read into, or plain
    stores into, its pages with no circular-buffer op of the kernel on it so far (``read_scratch`` reads the kernel
    again with ``cb`` as scratch)."""

    def __init__(self, cb: int, refused: Refused) -> None:
        super().__init__(refused.construct, refused.loc, refused.detail)
        self.cb = cb
        self.refused = refused


class ScratchRinged(Refused):
    """A circular-buffer op on buffer ``cb``, which the reading took as scratch L1 after a ``ScratchHint``: the buffer
    is a ring after all, and the hint's refusal is the one to give (``lower.read_scratch``)."""

    def __init__(self, cb: int, loc: SourceLoc, detail: str = "") -> None:
        super().__init__("circular-buffer op on a buffer read as scratch L1", loc, detail)
        self.cb = cb
