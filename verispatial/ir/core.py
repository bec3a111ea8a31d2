"""Small value types shared by the whole IR: sites, engines, memory spaces, tensor roles, addresses."""

from __future__ import annotations

import enum

import attrs


@attrs.frozen(order=True)
class Site:
    """A core of the mesh at column ``x``, row ``y`` (logical coordinates, origin at the top left)."""

    x: int
    y: int

    def __str__(self) -> str:
        return f"({_coord(self.x)},{_coord(self.y)})"


#: Sites made by ``site_at``, by coordinates: ``Site`` is frozen, so one instance per coordinate pair serves every
#: reader (a program names a few hundred sites thousands of times: a dict hit instead of a constructor).
SITES_BY_XY: dict[tuple[int, int], Site] = {}


def site_at(x: int, y: int) -> Site:
    """``Site(x, y)``, one shared instance per coordinates (the first 65,536 pairs met are kept: coordinates come from
    documents)."""
    got = SITES_BY_XY.get((x, y))
    if got is None:
        got = Site(x, y)
        if len(SITES_BY_XY) < 1 << 16:
            SITES_BY_XY[(x, y)] = got
    return got


def _coord(v: int) -> str:
    """A coordinate as text; one of more than 20 digits (never inside a mesh: only in a message refusing it) is cut,
    so a message quotes at most a few dozen characters of it."""
    t = str(v)
    return t if len(t) <= 20 else f"{t[:12]}…({len(t)} digits)"


class Engine(str, enum.Enum):
    """The three engines of a site.

    ``reader`` and ``writer`` are the two data-movement RISCs (tt-metal RISCV_1/NCRISC and RISCV_0/BRISC);
    ``compute`` stands for the unpack/math/pack TRISCs, which act on circular buffers as one engine
    (unpack pops, pack pushes; reference/tenstorrent.md §1.1).
    """

    READER = "reader"
    WRITER = "writer"
    COMPUTE = "compute"


class Space(str, enum.Enum):
    """Where a buffer lives: the site's local memory (L1 / shared memory) or the accumulator (DST / registers)."""

    LOCAL = "local"
    ACC = "acc"


class Role(str, enum.Enum):
    """A tensor's role in a program (DESIGN §4)."""

    INPUT = "input"
    PARAM = "param"
    OUTPUT = "output"
    ACTIVATION = "activation"
    STATE = "state"


class SemRole(str, enum.Enum):
    """What a semaphore is for; it only labels places and messages, the semantics come from the ops."""

    MCAST_READY = "mcast_ready"
    MCAST_VALID = "mcast_valid"
    RENDEZVOUS_GATHER = "rendezvous_gather"
    RENDEZVOUS_RELEASE = "rendezvous_release"
    COUNTER = "counter"


class WaitCond(str, enum.Enum):
    """``eq``: spin until the word equals the value (noc_semaphore_wait); ``ge``: until it is at least it
    (noc_semaphore_wait_min)."""

    EQ = "eq"
    GE = "ge"


class Guard(str, enum.Enum):
    """Which iterations of an enclosing loop an ``If`` runs its body in: ``first`` (index 0), ``last`` (index
    count - 1), or every other one (``not_first``, ``not_last``). A loop of count 0 has no iteration at all."""

    FIRST = "first"
    LAST = "last"
    NOT_FIRST = "not_first"
    NOT_LAST = "not_last"

    def holds(self, index: int, count: int) -> bool:
        """Whether the guard admits iteration ``index`` of a loop that runs ``count`` times."""
        if self is Guard.FIRST:
            return index == 0
        if self is Guard.LAST:
            return index == count - 1
        if self is Guard.NOT_FIRST:
            return index != 0
        return index != count - 1


@attrs.frozen
class Term:
    """``coef * var`` where ``var`` is the name of an enclosing loop's index (in an address, also a trip's: ``Addr``)."""

    var: str
    coef: int


@attrs.frozen
class Dynamic:
    """A runtime part of an address: a value in ``[lo, hi]`` read from data (an index buffer), times ``scale``.

    Used for indirect addresses (gather, scatter): the checker proves bounds over the whole range. ``name`` is the
    index tensor; ``buf`` the index buffer, the circular buffer of the op's site whose front page holds the index
    (the kernel reads it through ``get_read_ptr`` after ``cb_wait_front``, as tt-metal's gather, scatter and
    KV-cache writers do). ``buf`` None: the buffer is derived, the one buffer of the site a ``ReadTiles`` of
    ``name`` in the op's phase fills (``Program.index_buffers``); with none derivable, the value is taken as one the
    host sets in ``[lo, hi]`` (a runtime argument), which nothing checks.
    """

    name: str
    lo: int
    hi: int
    scale: int = 1
    #: a buffer id, renamed by ``ir.ids.Renaming`` like the ops' own (the tag is ``ops.ID_BUFFER``)
    buf: int | None = attrs.field(default=None, metadata={"id": "buffer"})


@attrs.frozen
class Addr:
    """A tile address inside a tensor: ``base + sum(coef * index) [+ scale * dynamic]``, in tiles. A term's ``var``
    names an enclosing loop's index or, where no enclosing loop has that name, a trip of the program (its value in
    the run)."""

    base: int = 0
    terms: tuple[Term, ...] = ()
    dynamic: Dynamic | None = None

    def at(self, env: dict[str, int], dyn: int | None = None) -> int:
        """Evaluate with loop indices ``env``; ``dyn`` is the runtime value (defaults to ``dynamic.lo``)."""
        v = self.base + sum(t.coef * env[t.var] for t in self.terms)
        if self.dynamic is not None:
            d = self.dynamic.lo if dyn is None else dyn
            v += self.dynamic.scale * d
        return v
