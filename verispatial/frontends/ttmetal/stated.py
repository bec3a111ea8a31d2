"""Tensor data the host description states, and the loads from L1 it decides.

A kernel may branch on a value it loads from a circular buffer's page: SDPA decode's ``cur_pos`` is read from a
position tensor into c_8 and loaded from there (``index_ptr[cur_batch]``, reader_decode_all.cpp:111-112 of ttnn
0.71.2; the writer's load at writer_decode_all.cpp:104, compute's ``read_tile_value`` at sdpa_flash_decode.cpp:151).
Such a value is tensor data, which the program does not hold; the host description may state it
(``tensors[i].values``: the 32-bit words at the start of the tensor's page 0, as the host wrote them), and then a
load is read as that word when the reading can tell which tensor word the loaded bytes are:

- the load's address is a followed byte offset into the page a pointer of the buffer points at, a 32-bit word;
- the page holds published data: this engine waited for the buffer (a front pointer) or pushed it (its own back);
- and every op of the program that lands bytes in that buffer on that core is a ``ReadTiles`` of the stated tensor's
  page 0 whose part puts the same tensor word at that byte (``check``, after every kernel is read: the claim is made
  at the load and checked against the whole program, so a kernel read before the filler is read too);
- and every page of that buffer pushed on that core was filled by such reads (``unfilled_push``): the load's page is
  one slot of the ring, and a slot pushed with nothing read into it holds whatever L1 held there.

Anything else stays a value not known statically, refused where it decides control flow (docs/ttmetal.md, "Tensor
data the host states"). The verdict then holds for the stated data only, as a runtime arg's does for its value.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.ir.core import Site
from verispatial.ir.ids import ID_BUFFER, op_ids
from verispatial.ir.ops import CONTAINERS, Compute, InlineWrite, Loop, McastSend, Op, Pop, Push, ReadTiles, Reserve, Wait, WriteTiles
from verispatial.ir.program import EngineProgram, walk
from verispatial.ir.source import SourceLoc

#: bytes of one stated word (``uint32_t``)
WORD = 4


class LandingNotRead(Refused):
    """A load of a buffer no kernel read so far lands bytes in on this core: ``assemble`` reads the kernel again once
    the others are read, and raises this only if it is still so."""


@attrs.frozen
class Claim:
    """A load read as word ``word`` of tensor ``tensor``'s page 0: the bytes ``[at, at + 4)`` of buffer ``cb``'s page
    on core ``site`` (``cb`` the host's index), loaded at ``loc``."""

    site: Site
    cb: int
    at: int
    tensor: str
    word: int
    loc: SourceLoc


def fills_word(op: ReadTiles, tensor: str, at: int, tile_bytes: int) -> int | None:
    """The word of ``tensor``'s page 0 that ``op`` lands at bytes ``[at, at + 4)`` of its buffer tile (of
    ``tile_bytes``), or None when it lands another tensor, another page, not all four bytes or at an offset that moves
    with a loop."""
    if op.tensor != tensor or op.tiles != 1 or op.addr.terms or op.addr.dynamic is not None or op.addr.base != 0:
        return None
    part = op.part
    if part is None:
        return at // WORD if at % WORD == 0 and at + WORD <= tile_bytes else None
    if part.terms or not part.at <= at or at + WORD > part.at + part.size:
        return None
    first = part.offset + at - part.at
    return first // WORD if first % WORD == 0 else None


def check(claims: Iterable[Claim], programs: Iterable[EngineProgram], tile_bytes: dict[tuple[Site, int], int],
          page_tiles: dict[tuple[Site, int], int]) -> None:
    """Each claim against the program read: no kernel writes the claimed tensor; every op on the claim's core that
    names its buffer is a reserve, push, wait or pop, a read of it that lands nothing (a ``Compute`` operand, a
    ``WriteTiles`` source) or a ``ReadTiles`` landing the claimed word at the claimed bytes; every push of the buffer
    on that core publishes pages such reads filled (``unfilled_push``); no op of another core names the buffer's
    index as a landing place. ``tile_bytes`` and ``page_tiles`` are each buffer's, by (core, index).
    Raises ``Refused`` at the load whose claim fails, naming the op that breaks it."""
    progs = list(programs)
    for c in claims:
        for ep in progs:
            push = unfilled_push(ep.ops, c.cb, page_tiles[(c.site, c.cb)]) if ep.site == c.site else None
            if push is not None:
                # the load's page is one slot of the ring: the word is the stated one only if every slot that can be
                # at the front was landed by a read; cb_push_back moves the counters and writes no data (ttnn 0.81.1
                # tt_metal/hw/inc/api/dataflow/dataflow_api.h:208-215)
                raise Refused("a value loaded from L1 the stated tensor data does not decide", c.loc,
                              f"word {c.word} of {c.tensor} is claimed at byte {c.at} of c_{c.cb}'s page, but the "
                              f"{ep.engine.value} on core {ep.site} pushes {push.pages} page(s) of c_{c.cb} no read "
                              "is known to have filled (a push writes no data: the slot holds whatever L1 held)")
        for ep in progs:
            for op in walk(ep.ops):
                if isinstance(op, WriteTiles) and op.tensor == c.tensor:
                    raise Refused("a value loaded from L1 the stated tensor data does not decide", c.loc,
                                  f"word {c.word} of {c.tensor} is claimed, but a kernel on core {ep.site} writes "
                                  f"{c.tensor}: its data is not only the host's")
                named = {v for kind, v in op_ids(op) if kind == ID_BUFFER}
                if c.cb not in named or isinstance(op, (Reserve, Push, Wait, Pop)):
                    continue
                if ep.site == c.site and isinstance(op, ReadTiles) and op.into == c.cb:
                    if fills_word(op, c.tensor, c.at, tile_bytes[(c.site, c.cb)]) == c.word:
                        continue
                elif ep.site == c.site and _reads_only(op, c.cb):
                    continue
                elif ep.site != c.site and not _lands_remotely(op):
                    continue
                raise Refused("a value loaded from L1 the stated tensor data does not decide", c.loc,
                              f"word {c.word} of {c.tensor} is claimed at byte {c.at} of c_{c.cb}'s page, but "
                              f"{type(op).__name__} on core {ep.site} lands other bytes there")


def _reads_only(op: object, cb: int) -> bool:
    """Whether ``op`` names buffer ``cb`` only as a source it reads."""
    if isinstance(op, WriteTiles):
        return op.src == cb
    return isinstance(op, Compute)  # it unpacks; its results reach a buffer by a PackAcc


def _lands_remotely(op: object) -> bool:
    """Whether ``op`` may land bytes in a buffer of another core (a multicast, a one-word write)."""
    return isinstance(op, (McastSend, InlineWrite))


def unfilled_push(ops: tuple[Op, ...], cb: int, page_tiles: int) -> Push | None:
    """The first ``Push`` of buffer ``cb`` in ``ops`` (``page_tiles`` tiles a page) whose pages the ``ReadTiles`` into
    ``cb`` since the last push in the same op list do not fill, or None when every push is of read pages. A loop's
    or an if's body is held to this on its own, starting with nothing read; the reads of a body that pushes nothing
    count after it only for a loop of a constant count with no ``If`` among its reads (each read once per trip);
    otherwise not at all (the check may then refuse a kernel that fills every page, never accept one that does
    not)."""
    filled = 0
    for op in ops:
        if isinstance(op, ReadTiles) and op.into == cb:
            filled += op.tiles
        elif isinstance(op, Push) and op.buf == cb:
            if filled < op.pages * page_tiles:
                return op
            filled -= op.pages * page_tiles
        elif isinstance(op, CONTAINERS):
            inner = unfilled_push(op.body, cb, page_tiles)
            if inner is not None:
                return inner
            if any(isinstance(x, Push) and x.buf == cb for x in walk(op.body)):
                filled = 0  # what the body left unpushed is not followed past it
            else:
                filled += _tiles_read(op, cb)
    return None


def _tiles_read(op: Op, cb: int) -> int:
    """The tiles container ``op`` (holding no push of ``cb``) reads into ``cb`` on every run of it: 0 unless it is a
    loop of a constant count whose reads are not under an ``If`` (nested such loops multiply)."""
    if not isinstance(op, Loop) or not isinstance(op.count, int):
        return 0
    total = 0
    for x in op.body:
        if isinstance(x, ReadTiles) and x.into == cb:
            total += x.tiles
        elif isinstance(x, CONTAINERS):
            total += _tiles_read(x, cb)
    return op.count * total
