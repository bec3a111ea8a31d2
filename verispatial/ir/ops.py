"""Choreography ops: what each (site, engine) runs, in order. Semantics are DESIGN §5.

Every op is a frozen value; ``Loop`` nests a body. Page counts are in pages of the named buffer;
tile counts in tiles of the target's tile shape.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from verispatial.ir.core import Addr, Site, WaitCond


@attrs.frozen
class Reserve:
    """Block until ``pushed - popped + pages <= capacity`` of ``buf`` (cb_reserve_back). No effect."""

    buf: int
    pages: int


@attrs.frozen
class Push:
    """``pushed += pages`` on ``buf`` (cb_push_back)."""

    buf: int
    pages: int


@attrs.frozen
class Wait:
    """Block until ``pushed - popped >= pages`` on ``buf`` (cb_wait_front). No effect."""

    buf: int
    pages: int


@attrs.frozen
class Pop:
    """``popped += pages`` on ``buf`` (cb_pop_front)."""

    buf: int
    pages: int


@attrs.frozen
class SemInc:
    """Asynchronous remote atomic: the word of ``sem`` at site ``at`` += ``by`` (noc_semaphore_inc).

    Lands no later than the issuing engine's next ``AtomicBarrier``.
    """

    sem: int
    at: Site
    by: int = 1


@attrs.frozen
class SemSet:
    """Local store: this site's word of ``sem`` := ``value`` (noc_semaphore_set)."""

    sem: int
    value: int


@attrs.frozen
class SemWait:
    """Block until this site's word of ``sem`` equals (``eq``) or is at least (``ge``) ``value``."""

    sem: int
    cond: WaitCond
    value: int


@attrs.frozen
class McastSend:
    """Asynchronous multicast of ``pages`` pages of ``buf`` (from its write pointer) into the buffer with the
    same ``cb`` index at every destination of ``group``, at the same address (noc_async_write_multicast).

    The source pages are read no later than the next ``Flush``/``WriteBarrier``; the data lands no later than
    the next ``WriteBarrier``.
    """

    buf: int
    pages: int
    group: int


@attrs.frozen
class McastSetValid:
    """Asynchronous multicast of this site's word of ``sem`` into the same word at every destination of
    ``group`` (noc_semaphore_set_multicast). The source word is read when the write leaves."""

    sem: int
    group: int


@attrs.frozen
class ReadTiles:
    """Asynchronous read of ``tiles`` tiles of ``tensor`` at ``addr`` into the reserved back of ``into``.

    Lands no later than the engine's next ``ReadBarrier`` (noc_async_read + noc_async_read_barrier).
    """

    tensor: str
    addr: Addr
    tiles: int
    into: int


@attrs.frozen
class WriteTiles:
    """Asynchronous write of ``tiles`` tiles from the front of buffer ``src`` to ``tensor`` at ``addr``.

    Complete (acknowledged) no later than the engine's next ``WriteBarrier``.
    """

    src: int
    tensor: str
    addr: Addr
    tiles: int


@attrs.frozen
class ReadBarrier:
    """Block until every read this engine issued has landed (noc_async_read_barrier)."""


@attrs.frozen
class WriteBarrier:
    """Block until every write and multicast this engine issued is acknowledged (noc_async_write_barrier)."""


@attrs.frozen
class Flush:
    """Block until every write this engine issued has left its source (noc_async_writes_flushed)."""


@attrs.frozen
class AtomicBarrier:
    """Block until every atomic increment this engine issued is acknowledged (noc_async_atomic_barrier)."""


@attrs.frozen
class AcquireAcc:
    """Take ``tiles`` tiles of the accumulator (tile_regs_acquire); ``tiles`` must fit the target."""

    tiles: int


@attrs.frozen
class Compute:
    """A math step on the accumulator (matmul tiles, elementwise, bias, ...); ``kind`` names it."""

    kind: str
    tiles: int = 1


@attrs.frozen
class PackAcc:
    """Pack ``tiles`` accumulator tiles into the reserved back of ``buf`` (pack_tile).

    With ``accumulate`` the packer adds the tiles to what those pages already hold instead of replacing it (packer
    L1 accumulation, tt-metal ``llk_pack_reconfig_l1_acc(1)``); a data effect only, the token rules are the same.
    """

    buf: int
    tiles: int
    accumulate: bool = False


@attrs.frozen
class ReleaseAcc:
    """Give the accumulator back (tile_regs_release)."""


@attrs.frozen
class Loop:
    """Run ``body`` ``count`` times with index ``var`` = 0, 1, ...

    ``count`` is a constant or the name of a trip (a runtime value in ``[0, max]``, see ``Trip``).
    """

    var: str
    count: int | str
    body: tuple[Op, ...]


Op: TypeAlias = (
    Reserve
    | Push
    | Wait
    | Pop
    | SemInc
    | SemSet
    | SemWait
    | McastSend
    | McastSetValid
    | ReadTiles
    | WriteTiles
    | ReadBarrier
    | WriteBarrier
    | Flush
    | AtomicBarrier
    | AcquireAcc
    | Compute
    | PackAcc
    | ReleaseAcc
    | Loop
)

#: JSON tag of every op kind, and back.
OP_TAGS: dict[type, str] = {
    Reserve: "reserve",
    Push: "push",
    Wait: "wait",
    Pop: "pop",
    SemInc: "sem_inc",
    SemSet: "sem_set",
    SemWait: "sem_wait",
    McastSend: "mcast_send",
    McastSetValid: "mcast_set_valid",
    ReadTiles: "read_tiles",
    WriteTiles: "write_tiles",
    ReadBarrier: "read_barrier",
    WriteBarrier: "write_barrier",
    Flush: "flush",
    AtomicBarrier: "atomic_barrier",
    AcquireAcc: "acquire_acc",
    Compute: "compute",
    PackAcc: "pack_acc",
    ReleaseAcc: "release_acc",
    Loop: "loop",
}
TAG_OPS: dict[str, type] = {v: k for k, v in OP_TAGS.items()}


def op_text(op: Op) -> str:
    """A short human form, e.g. ``reserve(b3, 8)``."""
    tag = OP_TAGS[type(op)]
    if isinstance(op, Loop):
        return f"loop {op.var} < {op.count}"
    fields = []
    for a in attrs.fields(type(op)):
        v = getattr(op, a.name)
        if a.name in ("buf", "into", "src"):
            fields.append(f"b{v}")
        elif a.name == "sem":
            fields.append(f"sem{v}")
        elif a.name == "group":
            fields.append(f"g{v}")
        elif a.name == "cond":
            fields.append(v.value)
        elif a.name == "addr":
            continue
        elif a.name == "accumulate":
            # Only the accumulating pack says so: the plain form reads as it always has.
            if v:
                fields.append("accumulate")
        else:
            fields.append(str(v))
    return f"{tag}({', '.join(fields)})"
