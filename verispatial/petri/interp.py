"""The reference interpreter: the token game of DESIGN §5, op by op, with every rule checked where it happens.

This is the oracle the checker is tested against, so it is written to be obviously right rather than fast.

Model (DESIGN §5):

- Each engine runs its op list in order. Its program counter is ``(path, iters)``: the path of the next op to
  execute (always a non-loop op: loops are entered and left as part of the step that reaches them) and the
  index of every enclosing loop; ``None`` once finished.
- Shared counters: per buffer ``pushed`` / ``popped`` (pages, unbounded); per semaphore word (semaphore, site)
  its value.
- Asynchronous ops (``SemInc``, ``ReadTiles``, ``WriteTiles``, ``McastSend``, ``McastSetValid``) are *issued*
  by the engine step and *land* later as separate transitions of the system. A multicast first *leaves* its
  source (a ``McastSetValid`` reads the sender's word then) and then *lands* at each destination separately.
  The multicasts of one engine land at each destination in the order they left (the network keeps the order
  of what it carries) when they share a virtual channel and a destination rectangle (``ir.program.landing_order``);
  to other destinations in any order. On a target with ``ordered_writes`` those of one channel leave in issue order;
  elsewhere, or on two channels, in any order, which is why a ``Flush`` between a data multicast and its flag is
  needed there. Landings are always enabled.
- A barrier blocks until the engine's own outstanding ops of its class are done: ``ReadBarrier`` reads,
  ``WriteBarrier`` writes and multicasts (landed everywhere), ``Flush`` multicasts (left), ``AtomicBarrier``
  increments. ``WriteBarrier`` and ``AtomicBarrier`` count acknowledgements: a multicast adds its ``num_dests`` to
  the count expected and each destination it lands at returns one, and the barrier passes when the two are equal
  (``State.wack``/``aack``; docs/semantics.md "Acknowledgement counts"). With the group's own count that is "all
  landed"; a larger count never passes, a smaller one only while landings are still due.
- A *deadlock* is a state in which some engine is unfinished and no transition (engine step or landing) is
  enabled; the run *terminates* when every engine has finished and nothing is in flight.

Violations (rule names in ``RULES``) are recorded where they happen and the run continues.

What each op means is its rule family's (``verispatial/families/<family>/semantics.py``): the handler of its step,
the landing of what it puts in flight and, for an op that blocks, its guard and what a stuck one reports — each
looked up in one table assembled from the families' (an op class with none raises ``UnhandledOp``). This module is
the token game around them: program counters, loops, the in-flight list, transitions and runs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import attrs

from verispatial import budget
from verispatial.errors import InvalidProgram, UnhandledOp
from verispatial.families import assemble
from verispatial.families.accumulator import semantics as accumulator
from verispatial.families.cb import semantics as cb
from verispatial.families.multicast import semantics as multicast
from verispatial.families.noc import semantics as noc
from verispatial.families.rendezvous import semantics as rendezvous
from verispatial.families.scratch import semantics as scratch
from verispatial.families.semaphores import semantics as semaphores
from verispatial.families.tensors import semantics as tensors
from verispatial.ir import rules as R
from verispatial.ir.core import Site
from verispatial.ir.data import data_buffers
from verispatial.ir.limits import ring_slots
from verispatial.ir.obligation import AliasRef, SubjectRef
from verispatial.ir.ops import (
    CONTAINERS,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Push,
    RemoteRead,
    SemRmw,
    WriteTiles,
    count_value,
    op_text,
)
from verispatial.ir.program import (
    LandingOrder,
    Program,
    landing_order,
    landing_order_of,
    landings_may_reorder,
    shard_pages,
    walk,
)
from verispatial.ir.shards import resident_shards, sharded, written_shards
from verispatial.ir.sharing import sees_own_pops_only, sharing_waiters
from verispatial.ir.validate import validate
from verispatial.petri.pending import INC, MCAST, READ, VALID, WRITE
from verispatial.petri.position import RULES, Position, Violation, iteration_text, path_text

__all__ = [
    "RULES",
    "Interp",
    "Position",
    "SimResult",
    "State",
    "Stuck",
    "Transition",
    "Violation",
    "drive",
    "next_launch_words",
    "replay",
    "resolve_trips",
    "rule_at",
    "simulate",
]

# Kinds of in-flight asynchronous operations (``petri/pending.py``), shared with the families' handlers.
_INC, _READ, _WRITE, _MCAST, _VALID = INC, READ, WRITE, MCAST, VALID

PC = tuple[tuple[int, ...], tuple[int, ...]]
Entry = tuple[Any, ...]
TileKey = tuple[int, int]  # (tensor index, tile index)

#: op class -> its family's handler ``(interp, state, engine, pc, op, violations)`` (``verispatial/families``).
_HANDLERS = assemble("the interpreter", cb.HANDLERS, semaphores.HANDLERS, accumulator.HANDLERS, noc.HANDLERS,
                     multicast.HANDLERS, scratch.HANDLERS)
#: op class -> its family's landing of what an op of that class issued ``(interp, state, engine, entry, destination,
#: violations)``: the in-flight entry's effect once it lands (``verispatial/families``).
_LANDINGS = assemble("the interpreter's landings", semaphores.LANDINGS, noc.LANDINGS, multicast.LANDINGS)
#: op class -> when a step of it is enabled ``(interp, state, engine, pc, op) -> bool``, for the ops that block; and
#: what blocks it, with the counts (``block_detail``).
_ENABLED = assemble("the interpreter's guards", cb.ENABLED, semaphores.ENABLED, noc.ENABLED)
_BLOCKED = assemble("the interpreter's block details", cb.BLOCKED, semaphores.BLOCKED, noc.BLOCKED)


@attrs.frozen
class Transition:
    """One move of the system.

    ``kind``: ``"step"`` (engine ``engine`` executes its next op), ``"leave"`` (the multicast at index ``slot``
    of the engine's in-flight list leaves its source) or ``"land"`` (the in-flight op at ``slot`` lands; for a
    multicast, at destination ``dest``: a buffer id for ``McastSend``, a word id for ``McastSetValid``).
    ``engine`` is an index into ``program.programs``. Slots are positions in the state's in-flight list, so a
    transition is meaningful in the state it was enabled in (replaying a trace from the start reproduces them).
    """

    kind: str
    engine: int
    slot: int = -1
    dest: int = -1

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "engine": self.engine, "slot": self.slot, "dest": self.dest}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Transition:
        return cls(str(d["kind"]), int(d["engine"]), int(d.get("slot", -1)), int(d.get("dest", -1)))


class State:
    """A state of the token game. Mutable inside the interpreter; ``Interp.fire`` copies it first, so a state
    handed out is never changed. ``key()`` is a hashable canonical form (equal keys = equal futures)."""

    __slots__ = (
        "aack",
        "ab",
        "acc",
        "consumer",
        "dirty",
        "drain",
        "fill",
        "landed",
        "mc_since",
        "parts",
        "pcs",
        "pending",
        "popped",
        "producer",
        "pushed",
        "rb_mask",
        "rmw",
        "rsv_end",
        "sc_mask",
        "share_drain",
        "share_end",
        "sreads",
        "st_mask",
        "swrites",
        "tiles",
        "wack",
        "wait_end",
        "wb",
        "words",
        "wtiles",
    )

    pcs: list[PC | None]
    pushed: list[int]
    popped: list[int]
    # The producer's reserved window of each buffer is [pushed, rsv_end) and the consumer's waited window
    # [popped, wait_end) (pages, absolute): a Reserve(n) sets rsv_end = max(rsv_end, pushed + n), a Wait(n)
    # wait_end = max(wait_end, popped + n) (docs/semantics.md, "Circular-buffer windows").
    rsv_end: list[int]
    wait_end: list[int]
    fill: list[int]  # tiles written into each buffer's back at or after its write pointer (not yet pushed)
    drain: list[int]  # tiles read from each buffer's front at or after its read pointer (not yet popped)
    acc: list[int]  # per engine: the tiles its held AcquireAcc took (AcquireAcc .. ReleaseAcc), 0 when none is held
    producer: list[int]  # engine index that first reserved/pushed each buffer, -1 none yet
    consumer: list[int]  # engine index that first waited/popped each buffer, -1 none yet
    # per buffer: bit k set when a multicast landed in page pushed + k and the receiver has not published it yet (a
    # push checks and shifts it: ``mcast-publish-early``; a landing on a set bit is ``mcast-slot``)
    landed: list[int]
    words: list[int]  # value of each semaphore word
    dirty: list[int]  # per word: bitmask of engines that have not observed it since its last remote write
    # per engine: the SemRmw it is in the middle of, as (word, value loaded, whether a write changed the word since
    # the load: the store will lose it), or None (docs/semantics.md "Non-atomic read-modify-write")
    rmw: list[tuple[int, int, bool] | None]
    # per engine: in-flight asynchronous ops in issue order, except that the multicasts that have left come
    # before those that have not, in the order they left
    pending: list[tuple[Entry, ...]]
    rb_mask: list[int]  # per engine: buffers read into (ReadTiles) since its last ReadBarrier
    st_mask: list[int]  # per engine: buffers its CopyTiles stored into with no drain since (docs/semantics.md "Local copies")
    wb: list[bool]  # per engine: a write or multicast issued since its last WriteBarrier
    ab: list[bool]  # per engine: a SemInc issued since its last AtomicBarrier
    # per engine: (buffer, group, virtual channel, whether a Flush passed since) of each data multicast since its last
    # WriteBarrier (``async-flag-overtake``: a Flush orders one landing order only, a WriteBarrier every one)
    mc_since: list[frozenset[tuple[int, int, int | None, bool]]]
    sc_mask: list[int]  # per engine: scratch buffers written from (WriteTiles) since its last Flush/WriteBarrier
    # per engine: acknowledgements its write barrier (``wack``) / atomic barrier (``aack``) expects beyond those its
    # issued ops return: the sum of num_dests - destinations over its multicasts so far (0 when every count matches
    # its group; docs/semantics.md "Acknowledgement counts")
    wack: list[int]
    aack: list[int]
    # per tensor tile (DESIGN §5): (engines with an incomplete write of it, its last completed writer (engine index,
    # -1 none), engines that have issued a write of it). Every tensor rule is decided tile by tile from this.
    tiles: dict[TileKey, tuple[int, int, int]]
    wtiles: list[tuple[TileKey, ...]]  # per engine: tiles written since its last WriteBarrier (derived from tiles)
    # per state tile, its versions by section (semantics.md "tensor-race"): (issued writes, incomplete writes), each
    # a bitmask over (engine, section) pairs: bit engine * sections + section
    swrites: dict[TileKey, tuple[int, int]]
    # per tensor tile written in part (``Part``): its part writes as (engine, first byte, one past the last, complete),
    # sorted; the tile counts as written once they cover its bytes (docs/semantics.md, "Part-page transfers")
    parts: dict[TileKey, tuple[tuple[int, int, int, bool], ...]]
    sreads: dict[TileKey, int]  # per state tile: sections with an issued read of it
    # per (sharing waiter, buffer) pair (``Interp.share_id``): its own waited window [0, share_end) and the tiles it
    # read from its read pointer, which only its own pops would move (it never pops: ir/sharing.py)
    share_end: list[int]
    share_drain: list[int]

    def copy(self) -> State:
        s = State.__new__(State)
        s.pcs, s.pushed, s.popped = self.pcs.copy(), self.pushed.copy(), self.popped.copy()
        s.rsv_end, s.wait_end = self.rsv_end.copy(), self.wait_end.copy()
        s.fill, s.drain, s.acc = self.fill.copy(), self.drain.copy(), self.acc.copy()
        s.producer, s.consumer, s.landed = self.producer.copy(), self.consumer.copy(), self.landed.copy()
        s.words, s.dirty, s.pending = self.words.copy(), self.dirty.copy(), self.pending.copy()
        s.rmw = self.rmw.copy()
        s.rb_mask, s.wb, s.ab = self.rb_mask.copy(), self.wb.copy(), self.ab.copy()
        s.st_mask, s.sc_mask = self.st_mask.copy(), self.sc_mask.copy()
        s.mc_since, s.wack, s.aack = self.mc_since.copy(), self.wack.copy(), self.aack.copy()
        s.tiles, s.wtiles = self.tiles.copy(), self.wtiles.copy()
        s.swrites, s.sreads = self.swrites.copy(), self.sreads.copy()
        s.parts = self.parts.copy()
        s.share_end, s.share_drain = self.share_end.copy(), self.share_drain.copy()
        return s

    def key(self) -> tuple[Any, ...]:
        return (
            tuple(self.pcs),
            tuple(self.pushed),
            tuple(self.popped),
            tuple(self.rsv_end),
            tuple(self.wait_end),
            tuple(self.fill),
            tuple(self.drain),
            tuple(self.acc),
            tuple(self.producer),
            tuple(self.consumer),
            tuple(self.landed),
            tuple(self.words),
            tuple(self.dirty),
            tuple(self.rmw),
            tuple(self.pending),
            tuple(self.rb_mask),
            tuple(self.st_mask),
            tuple(self.wb),
            tuple(self.ab),
            tuple(self.mc_since),
            tuple(self.sc_mask),
            tuple(self.wack),
            tuple(self.aack),
            # Only whether a tile has a completed write and whether a write was issued decide a rule; which engines
            # did (named in messages) does not change the future, so equal futures keep equal keys.
            tuple(sorted((k, (m, last >= 0, issuers != 0)) for k, (m, last, issuers) in self.tiles.items())),
            tuple(sorted(self.swrites.items())),
            tuple(sorted(self.parts.items())),
            tuple(sorted(self.sreads.items())),
            tuple(self.share_end),
            tuple(self.share_drain),
        )


@attrs.frozen
class Stuck:
    """An engine that cannot move: where it is and the counter values that block it."""

    position: Position
    reason: str

    def __str__(self) -> str:
        return f"{self.position}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position.to_json(), "reason": self.reason}


def resolve_trips(program: Program, trips: dict[str, int] | None) -> dict[str, int]:
    """Every trip of ``program`` with a value: those given in ``trips``, the others at their ``max``.

    Raises ``ValueError`` for an unknown trip name or a value outside ``[0, max]``.
    """
    out = program.trip_max()
    for name, v in (trips or {}).items():
        if name not in out:
            raise ValueError(f"trip {name!r} is not declared (declared: {sorted(out)})")
        if not 0 <= v <= out[name]:
            raise ValueError(f"trip {name} = {v} is outside [0, {out[name]}]")
        out[name] = v
    return out


class Interp:
    """The token game of one program under fixed trip values.

    ``trips`` gives trip values (missing ones take their max); ``dyn`` gives the runtime value of each
    ``Dynamic`` address part by name (missing ones take ``lo``). With ``dyn_extremes`` the ``bounds`` rule
    checks every dynamic address at both ``lo`` and ``hi`` (the explorer's mode).

    ``start_words`` gives the value some semaphore words hold when the run starts (by (semaphore id, site); the
    others start at their ``init``): the state a next launch starts from (``next_launch_words``). The balance rule
    still compares every word with its declared ``init``.

    Raises ``InvalidProgram`` when ``validate(program)`` finds structural violations (the interpreter only
    runs well-formed programs) and ``ValueError`` for bad trip values or an unknown word in ``start_words``.
    """

    # The rules of the NoC and multicast families that other families' handlers apply (a push publishes pages that
    # must have landed; a reserve, pop or write may reuse a pending write's source), bound here so the circular-buffer,
    # accumulator and semaphore folders reach them through the interpreter they are handed instead of importing the
    # NoC and multicast folders, which import theirs.
    _read_publish = noc.read_publish
    _source_reuse = noc.source_reuse
    _word_reuse = noc.word_reuse
    _inc_overtake = noc.inc_overtake
    _mcast_publish_early = multicast.publish_early

    def __init__(
        self,
        program: Program,
        trips: dict[str, int] | None = None,
        dyn: dict[str, int] | None = None,
        *,
        dyn_extremes: bool = False,
        start_words: dict[tuple[int, Site], int] | None = None,
    ) -> None:
        errs = validate(program)
        if errs:
            raise InvalidProgram(errs)
        self.program = program
        self.trips = resolve_trips(program, trips)
        self.dyn = dict(dyn or {})
        self.dyn_extremes = dyn_extremes
        self.ordered = program.target.ordered_writes
        self.engines = program.programs
        self.keys = [ep.key for ep in self.engines]
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.n = len(self.engines)
        self.caps = [b.capacity for b in program.buffers]
        self.page_tiles = [b.page_tiles for b in program.buffers]
        self.alias_partners = program.alias_partners()
        # Aliased buffers share bytes page for page (validate: same capacity and page size): slot j of a buffer is
        # slot j of its root's bytes.
        self.root = [b.alias_of if b.alias_of is not None else b.id for b in program.buffers]

        self._index_ops()
        self._number_words(start_words)
        # Multicast destinations: (buf, group) -> destination buffer ids; (sem, group) -> destination word ids.
        self._mcast_bufs, self._valid_words = multicast.destinations(program, self.word_id)
        self.mcast_dests: frozenset[int] = frozenset(b for bs in self._mcast_bufs.values() for b in bs)
        self._phases = program.phase_of_section()
        self._data_tables()
        # Buffers whose counters a later section of the launch uses (the rest the launch's end resets).
        self.reused = program.counters_reused()
        #: (engine, buffer) pairs where the engine waits on the buffer without popping it while another engine of the
        #: site consumes it (ir/sharing.py), densely numbered for the state's ``share_end`` / ``share_drain``.
        self.share_id: dict[tuple[int, int], int] = {}
        for b, keys in sorted(sharing_waiters(program).items()):
            for key in sorted(keys):
                self.share_id[(self.index[key], b)] = len(self.share_id)
        #: engines whose waits count only their own pops (the compute engine's unpacker)
        self.own_pops_only = [sees_own_pops_only(ep.engine) for ep in self.engines]
        #: Rendezvous ordering (``rendezvous-early``, ir/boundaries.py): ``families/rendezvous/semantics.py``.
        self.rendezvous = rendezvous.tables(program, self.engines)

    def _index_ops(self) -> None:
        """Per engine: the op at every path (``_ops``) and the op list at every container's body (``_bodies``)."""
        self._ops: list[dict[tuple[int, ...], Op]] = []
        self._bodies: list[dict[tuple[int, ...], tuple[Op, ...]]] = []
        for ep in self.engines:
            ops: dict[tuple[int, ...], Op] = {}
            bodies: dict[tuple[int, ...], tuple[Op, ...]] = {(): ep.ops}

            def index(prefix: tuple[int, ...], body: tuple[Op, ...], ops: dict[tuple[int, ...], Op] = ops,
                      bodies: dict[tuple[int, ...], tuple[Op, ...]] = bodies) -> None:
                for i, op in enumerate(body):
                    p = (*prefix, i)
                    ops[p] = op
                    if isinstance(op, CONTAINERS):
                        bodies[p] = op.body
                        index(p, op.body)

            index((), ep.ops)
            self._ops.append(ops)
            self._bodies.append(bodies)
        # Per engine: the landing order (``ir.program.landing_order``: its virtual channel, which alone orders leaving,
        # and its rectangle) of each multicast, by path (``landings`` asks it of every entry in flight), and whether
        # they all share one landing order (then a Flush forgets the data multicasts it saw leave: only a flag of another landing order
        # asks of them, ``State.mc_since``, and keeping them would split equal futures into several states).
        self.order = [{p: landing_order(self.program.groups, op) for p, op in ops.items()
                       if isinstance(op, (McastSend, McastSetValid))} for ops in self._ops]
        self.one_order = [len(set(keys.values())) <= 1 for keys in self.order]
        self._reorders: dict[tuple[int, int | None, int, int | None], bool] = {}

    def may_reorder(self, group: int, vc: int | None, other_group: int, other_vc: int | None) -> bool:
        """Whether a write to ``group`` on ``vc`` and one to ``other_group`` on ``other_vc``, of one engine and both
        left, may land at a core they share in either order (``ir.program.landings_may_reorder``); memoized."""
        k = (group, vc, other_group, other_vc)
        if k not in self._reorders:
            groups = self.program.groups
            self._reorders[k] = landings_may_reorder(
                landing_order_of(groups, group, vc), groups[group].destinations(),
                landing_order_of(groups, other_group, other_vc), groups[other_group].destinations())
        return self._reorders[k]

    def _number_words(self, start_words: dict[tuple[int, Site], int] | None) -> None:
        """The semaphore words, densely numbered (``word_id``), with their site, semaphore, initial value and the
        value each starts the run at; the engines of each site (``site_mask``). ``ValueError`` for a start word that
        is not a word of the program."""
        program = self.program
        self.word_id: dict[tuple[int, Site], int] = {}
        self.word_site: list[Site] = []
        self.word_sem: list[int] = []
        self.word_init: list[int] = []
        for sem in program.semaphores:
            for site in sem.sites:
                self.word_id[(sem.id, site)] = len(self.word_site)
                self.word_site.append(site)
                self.word_sem.append(sem.id)
                self.word_init.append(sem.init)
        self.site_mask: dict[Site, int] = {}
        for e, ep in enumerate(self.engines):
            self.site_mask[ep.site] = self.site_mask.get(ep.site, 0) | (1 << e)
        self.rearmed = frozenset(self.word_id[k] for k in program.rearmed_words())
        #: Words of host_init semaphores: the host writes their initial value at the next launch.
        self.host_words = frozenset(self.word_id[k] for k in program.host_initialized_words())
        #: Mailbox words (only one-word remote writes write them, no op reads them): exempt from end balance.
        self.mailboxes = frozenset(self.word_id[k] for k in program.mailbox_words())
        self.start_words = list(self.word_init)
        for k, v in (start_words or {}).items():
            if k not in self.word_id:
                raise ValueError(f"start_words names sem{k[0]}@{k[1]}, which is not a semaphore word")
            self.start_words[self.word_id[k]] = v

    def _data_tables(self) -> None:
        """The buffers whose pushes publish data (``data_bufs``), the index buffers of indirect addresses, each
        tensor's index and tile count, and each tensor's first writing engine (``writers``)."""
        program = self.program
        self.writers: dict[str, int] = {}
        #: (buffer, site) of each remote read -> the buffer it reads there (``Program.remote_buffer``)
        self.remote_of: dict[tuple[int, Site], int] = {}
        for e, ep in enumerate(self.engines):
            for op in walk(ep.ops):
                if isinstance(op, WriteTiles):
                    self.writers.setdefault(op.tensor, e)
                elif isinstance(op, RemoteRead):
                    # The owner's buffer a remote read takes pages from (a data buffer: ``ir/data.py``).
                    owner = program.remote_buffer(op.buf, op.at)
                    assert owner is not None  # validate: the site has that cb index
                    self.remote_of[(op.buf, op.at)] = owner
        #: Sharded buffers (their pages are a tensor's bytes: ``ir/shards.py``): by id; those whose producer writes
        #: into them (their pushes write the tensor: data buffers, filled before a push) and the others (their pushes
        #: publish the tensor's tiles unfilled).
        self.shard_bufs = sharded(program)
        self.shard_pages = {b: shard_pages(x) for b, x in self.shard_bufs.items()}
        self.write_shards = written_shards(program)
        #: Resident input shards: read in place, their bytes the tensor's from launch (``cb.read_in_place``).
        self.resident = resident_shards(program)
        self.read_shards = frozenset(self.shard_bufs) - self.write_shards
        for e, ep in enumerate(self.engines):  # a write shard's producer writes its tensor (where output-unwritten says)
            for op in walk(ep.ops):
                if isinstance(op, Push) and op.buf in self.write_shards:
                    self.writers.setdefault(self.shard_bufs[op.buf].shard.tensor, e)  # type: ignore[union-attr]
        #: The derived index buffer of each indirect address naming none, by (site, phase, index tensor)
        #: (``Program.index_buffers``; a named one is the address's own ``Dynamic.buf``): the
        #: address reads its index from that buffer's front page, so the page must be filled (a data buffer) and
        #: inside the engine's waited window when the address is used (``cb-read-unwaited``).
        self.index_bufs = program.index_buffers()
        #: Buffers whose pushes publish data, so the pages must have been filled (``cb-push-unfilled``): the one
        #: definition the checker and the Promela export share (``ir/data.py``).
        self.data_bufs = data_buffers(program, self.index_bufs)
        #: Scratch buffers (``Buffer.scratch``: private L1 of one engine, no ring counters; families/scratch/).
        self.scratch = frozenset(b.id for b in program.buffers if b.scratch)
        self.tensor_index = {t.name: i for i, t in enumerate(program.tensors)}
        # at this run's trip values: a tensor sized by a trip (Tensor.trip_rows) has that many tiles
        self.tensor_tiles = [t.tiles_at(program.target.tile, self.trips) for t in program.tensors]

    # ------------------------------------------------------------------ static helpers

    def _count(self, loop: Loop) -> int:
        return count_value(loop.count, self.trips)

    def min_steps(self) -> int:
        """A lower bound on the transitions of any run that terminates under these trips: every op outside an
        ``If`` executes once per iteration of its loops (landings and guarded ops not counted). Computed over the
        loop nest, never by iterating it (a loop may run 2**32 - 1 times)."""
        def ops(body: tuple[Op, ...]) -> int:
            n = 0
            for op in body:
                if isinstance(op, Loop):
                    n += self._count(op) * ops(op.body)
                elif not isinstance(op, If):
                    n += 1
            return n
        return sum(ops(ep.ops) for ep in self.engines)

    def _guard(self, e: int, path: list[int], iters: list[int], op: If) -> bool:
        """Whether the ``If`` at ``path`` (inside the containers of ``path[:-1]``) admits the current iteration of
        the innermost enclosing loop named ``op.var``."""
        ops = self._ops[e]
        for k in range(len(path) - 1, 0, -1):
            lp = ops[tuple(path[:k])]
            if isinstance(lp, Loop) and lp.var == op.var:
                return op.when.holds(iters[k - 1], self._count(lp))
        raise InvalidProgram([])  # pragma: no cover - validate requires an enclosing loop of that name

    def _normalize(self, e: int, path: list[int], iters: list[int]) -> PC | None:
        """From an index that may point past a body's end or at a container, the next leaf op to execute. An ``If``
        is entered like a loop of one iteration (index 0) when its guard holds, else skipped."""
        bodies, ops = self._bodies[e], self._ops[e]
        while True:
            body = bodies[tuple(path[:-1])]
            i = path[-1]
            if i < len(body):
                op = body[i]
                if isinstance(op, Loop):
                    if self._count(op) > 0 and op.body:
                        path.append(0)
                        iters.append(0)
                    else:
                        path[-1] += 1
                    continue
                if isinstance(op, If):
                    if op.body and self._guard(e, path, iters, op):
                        path.append(0)
                        iters.append(0)
                    else:
                        path[-1] += 1
                    continue
                return (tuple(path), tuple(iters))
            if len(path) == 1:
                return None
            loop = ops[tuple(path[:-1])]
            if isinstance(loop, Loop) and iters[-1] + 1 < self._count(loop):
                iters[-1] += 1
                path[-1] = 0
            else:
                path.pop()
                iters.pop()
                path[-1] += 1

    def next_pc(self, e: int, pc: PC) -> PC | None:
        """The program counter after executing the op at ``pc`` (no effect on any state)."""
        path, iters = pc
        return self._normalize(e, [*path[:-1], path[-1] + 1], list(iters))

    def _vars(self, e: int, path: tuple[int, ...]) -> list[str]:
        """The index name of every container around ``path``; an ``If`` has none (``""``, its index is 0)."""
        out = []
        for k in range(1, len(path)):
            lp = self._ops[e][path[:k]]
            out.append(lp.var if isinstance(lp, Loop) else "")
        return out

    def pos(self, e: int, pc: PC | None) -> Position:
        """The ``Position`` of engine ``e`` at program counter ``pc``."""
        if pc is None:
            return Position(self.keys[e], None)
        path, iters = pc
        return Position(
            self.keys[e], path, tuple(zip(self._vars(e, path), iters, strict=True)), op_text(self._ops[e][path])
        )

    def engine_index(self, engine: str | int) -> int:
        """Index of an engine given by key (``"(0,0).reader"``) or index; ``KeyError`` if unknown."""
        if isinstance(engine, int):
            if not 0 <= engine < self.n:
                raise KeyError(engine)
            return engine
        return self.index[engine]

    def _word(self, e: int, sem: int) -> int:
        return self.word_id[(sem, self.engines[e].site)]

    def _dest_site(self, kind: int, d: int) -> Site:
        return self.program.buffers[d].site if kind == _MCAST else self.word_site[d]

    # ------------------------------------------------------------------ public API

    def start(self) -> tuple[State, list[Violation]]:
        """The initial state and the violations found on reaching each engine's first op."""
        s = State.__new__(State)
        nb, nw, n = len(self.program.buffers), len(self.word_site), self.n
        s.pushed, s.popped, s.rsv_end, s.wait_end = [0] * nb, [0] * nb, [0] * nb, [0] * nb
        s.fill, s.drain, s.acc = [0] * nb, [0] * nb, [0] * n
        s.producer, s.consumer, s.landed = [-1] * nb, [-1] * nb, [0] * nb
        s.words, s.dirty, s.rmw = list(self.start_words), [0] * nw, [None] * n
        s.pending, s.rb_mask, s.wb, s.ab = [() for _ in range(n)], [0] * n, [False] * n, [False] * n
        s.st_mask, s.sc_mask = [0] * n, [0] * n
        s.mc_since, s.wtiles = [frozenset()] * n, [() for _ in range(n)]
        s.wack, s.aack = [0] * n, [0] * n
        s.tiles, s.swrites, s.sreads, s.parts = {}, {}, {}, {}
        s.share_end, s.share_drain = [0] * len(self.share_id), [0] * len(self.share_id)
        s.pcs = [self._normalize(e, [0], []) if self.engines[e].ops else None for e in range(n)]
        out: list[Violation] = []
        for e in range(n):
            if s.pcs[e] is None:
                self._on_finish(s, e, out)
            else:
                self._on_arrive(s, e, out)
        return s, out

    def initial(self) -> State:
        """The initial state (see ``start`` for the violations of reaching the first ops)."""
        return self.start()[0]

    def can_step(self, s: State, e: int) -> bool:
        """Whether engine ``e``'s next op is enabled (False when finished): its family's guard (``_ENABLED``) for a
        blocking op, else always."""
        pc = s.pcs[e]
        if pc is None:
            return False
        op = self._ops[e][pc[0]]
        guard = _ENABLED.get(type(op))
        return guard is None or guard(self, s, e, pc, op)

    def landings(self, s: State) -> list[Transition]:
        """Every enabled leave/land transition, engine by engine, in in-flight order.

        A multicast may leave when it is the first of its virtual channel not yet left (ordered targets) or at any
        time (others); it may land at a destination when no multicast of its landing order (its channel and its
        destination rectangle, ``ir.program.landing_order``) that left before it still has to land at that site (across
        channels or destinations the NoC keeps no order)."""
        out: list[Transition] = []
        for e in range(self.n):
            unleft: set[int | None] = set()  # channels with an earlier multicast not yet left
            busy: set[tuple[LandingOrder, Site]] = set()  # (order, site) an earlier-left multicast has yet to land at
            for i, en in enumerate(s.pending[e]):
                k = en[0]
                if k < _MCAST:
                    out.append(Transition("land", e, i))
                    continue
                key = self.order[e][en[1]]
                if not en[6]:
                    vc = key[0]  # leaving keeps issue order per channel, whatever the rectangle
                    if not self.ordered or vc not in unleft:
                        out.append(Transition("leave", e, i))
                    unleft.add(vc)
                    continue
                for d in en[7]:
                    if (key, self._dest_site(k, d)) not in busy:
                        out.append(Transition("land", e, i, d))
                busy.update((key, self._dest_site(k, d)) for d in en[7])
        return out

    def enabled(self, s: State) -> list[Transition]:
        """Every enabled transition: engine steps (in engine order), then landings."""
        return [Transition("step", e) for e in range(self.n) if self.can_step(s, e)] + self.landings(s)

    def step(self, s: State, t: Transition, *, check: bool = True) -> tuple[State, list[Violation]]:
        """Fire ``t`` on a copy of ``s``: the new state and the violations. Raises ``ValueError`` if ``t`` is not
        enabled (``check=False`` skips that test, for callers that took ``t`` from ``enabled(s)``)."""
        s2 = s.copy()
        out: list[Violation] = []
        if check:
            self.apply(s2, t, out)
        elif t.kind == "step":
            self._exec(s2, t.engine, out)
        else:
            self._land(s2, t, out)
        return s2, out

    def fire(self, s: State, t: Transition) -> State:
        """The state after ``t``; ``s`` is unchanged. Use ``step`` to also get the violations."""
        return self.step(s, t)[0]

    def apply(self, s: State, t: Transition, out: list[Violation]) -> None:
        """Fire ``t`` in place on ``s``, appending violations to ``out``. Raises ``ValueError`` if ``t`` is not
        enabled."""
        if t.kind == "step":
            if not self.can_step(s, t.engine):
                raise ValueError(f"{self.keys[t.engine]} cannot step: {self.block_detail(s, t.engine)}")
            self._exec(s, t.engine, out)
        else:
            if t not in self.landings(s):
                raise ValueError(f"transition {t} is not enabled")
            self._land(s, t, out)

    def positions(self, s: State) -> dict[str, Position]:
        """Every engine's position, by engine key."""
        return {self.keys[e]: self.pos(e, s.pcs[e]) for e in range(self.n)}

    def position(self, s: State, engine: str | int) -> Position:
        e = self.engine_index(engine)
        return self.pos(e, s.pcs[e])

    def all_finished(self, s: State) -> bool:
        return all(pc is None for pc in s.pcs)

    def in_flight(self, s: State) -> bool:
        return any(s.pending)

    def block_detail(self, s: State, engine: str | int) -> str:
        """What blocks the engine, with the counter values: ``waits for b3: pushed-popped=0-0=0 < 8``,
        ``sem4@(0,1)=2, waits ==7``; ``finished`` or ``enabled`` when it is not blocked."""
        e = self.engine_index(engine)
        pc = s.pcs[e]
        if pc is None:
            return "finished"
        if self.can_step(s, e):
            return "enabled"
        op = self._ops[e][pc[0]]
        detail = _BLOCKED.get(type(op))
        if detail is not None:
            return detail(self, s, e, pc, op)
        return "blocked"  # pragma: no cover - every blocking op class has its detail (tests/test_fail_closed.py)

    def blocked_reason(self, s: State, engine: str | int) -> str:
        """The engine's position (op and iteration) and what blocks it, e.g.
        ``(0,0).compute at ops[1].body[0] wait(b3, 8) k=2: waits for b3: pushed-popped=0-0=0 < 8``."""
        e = self.engine_index(engine)
        return f"{self.pos(e, s.pcs[e])}: {self.block_detail(s, e)}"

    def stuck(self, s: State) -> tuple[Stuck, ...]:
        """Every unfinished engine whose next op is not enabled."""
        return tuple(
            Stuck(self.pos(e, s.pcs[e]), self.block_detail(s, e))
            for e in range(self.n)
            if s.pcs[e] is not None and not self.can_step(s, e)
        )

    def completes(self, s: State, e: int) -> bool:
        """Whether engine ``e``'s step in ``s`` finishes the op it is at: every step does but a ``SemRmw``'s load,
        which holds the engine at the op for its store (so a run counts the op once, not per step)."""
        pc = s.pcs[e]
        return pc is None or not isinstance(self._ops[e][pc[0]], SemRmw) or s.rmw[e] is not None

    def describe(self, s: State, t: Transition) -> str:
        """``t`` as text, as it would fire in ``s``."""
        e = t.engine
        if t.kind == "step":
            pc = s.pcs[e]
            op = self._ops[e][pc[0]] if pc is not None else None
            if isinstance(op, SemRmw):  # its two steps: the load, then the store
                held = s.rmw[e]
                how = f"stores {held[1]} + {op.by}" if held is not None else f"loads {s.words[self._word(e, op.sem)]}"
                return f"{self.pos(e, pc)}: {how}"
            return str(self.pos(e, pc))
        en = s.pending[e][t.slot]
        issued = self.pos(e, (en[1], en[2]))
        what = f"{self.keys[e]}'s {issued.op} (issued at {path_text(en[1])}"
        what += f" {iteration_text(issued.iteration)})" if issued.iteration else ")"
        if t.kind == "leave":
            # The word read is the flag's source (``src``, by default the flag's own semaphore).
            extra = f" carrying sem{self.word_sem[en[3]]}@{self.word_site[en[3]]}={s.words[en[3]]}" if en[0] == _VALID else ""
            return f"{what} leaves the source{extra}"
        if en[0] == _INC:
            w = en[3]
            return f"{what} lands: sem{self.word_sem[w]}@{self.word_site[w]} {s.words[w]} -> {s.words[w] + en[4]}"
        if en[0] == _MCAST:
            return f"{what} lands in b{t.dest} at {self._dest_site(_MCAST, t.dest)}"
        if en[0] == _VALID:
            w = t.dest
            return f"{what} lands: sem{self.word_sem[w]}@{self.word_site[w]} {s.words[w]} -> {en[4]}"
        if en[0] == _WRITE and en[3] is None:  # a one-word write (InlineWrite)
            w = en[4]
            return f"{what} lands: sem{self.word_sem[w]}@{self.word_site[w]} {s.words[w]} -> {en[5]}"
        return f"{what} {'lands' if en[0] == _READ else 'completes'}"

    def final_violations(self, s: State) -> list[Violation]:
        """``balance-cb`` (pages left in a buffer whose counters a later section of the launch uses:
        ``Program.counters_reused``), ``output-unwritten`` (every tile of every output tensor was written: at
        termination every issued write has landed) and ``balance-sem`` for a terminated state (every engine finished, nothing in
        flight). ``output-unwritten`` is reported at the first engine that writes the tensor (else engine 0)."""
        return [*cb.balance(self, s), *tensors.unwritten(self, s), *semaphores.balance(self, s)]

    def _site_pos(self, site: Site, e: int) -> Position:
        if e < 0:
            at_site = [i for i, ep in enumerate(self.engines) if ep.site == site]
            e = at_site[0] if at_site else 0
        if self.n == 0:
            return Position(str(site), None)
        return Position(self.keys[e], None)

    # ------------------------------------------------------------------ engine steps

    def _v(self, out: list[Violation], rule: str, e: int, pc: PC | None, msg: str,
           subject: SubjectRef | None = None, cause: str = "") -> None:
        out.append(Violation(rule, self.pos(e, pc), msg, subject, cause))

    def _section(self, e: int, path: tuple[int, ...]) -> int:
        """The section of the op at ``path`` of engine ``e`` (that of its top-level op)."""
        return self.engines[e].section_of(path[0])

    def _env(self, e: int, pc: PC) -> dict[str, int]:
        return {v: i for v, i in zip(self._vars(e, pc[0]), pc[1], strict=True) if v}

    def _on_arrive(self, s: State, e: int, out: list[Violation]) -> None:
        pc = s.pcs[e]
        assert pc is not None
        cb.capacity(self, e, pc, self._ops[e][pc[0]], out)

    def _on_finish(self, s: State, e: int, out: list[Violation]) -> None:
        noc.pending_at_end(self, s, e, out)

    def _advance(self, s: State, e: int, out: list[Violation]) -> None:
        pc = s.pcs[e]
        assert pc is not None
        s.pcs[e] = self.next_pc(e, pc)
        if s.pcs[e] is None:
            self._on_finish(s, e, out)
        else:
            self._on_arrive(s, e, out)

    def _alias_clobber(self, s: State, e: int, pc: PC, b: int, n: int, out: list[Violation]) -> None:
        """Aliased buffers share bytes page for page (reference §1.1: c_16 and c_24 of the matmul): the pages a
        push publishes must not be pages of an alias that still hold unconsumed data."""
        cap = self.caps[b]
        mine = ring_slots(s.pushed[b], n, cap)
        for other in self.alias_partners.get(b, ()):
            live = ring_slots(s.popped[other], s.pushed[other] - s.popped[other], cap)
            hit = sorted(mine & live)
            if hit:
                self._v(out, R.ALIAS_CLOBBER, e, pc,
                        f"push(b{b}, {n}) publishes page {hit[0]} of b{b}, which is also page {hit[0]} of its alias "
                        f"b{other} and still holds data not yet popped from b{other}", AliasRef(b, other))

    def _alias_write(self, s: State, e: int, pc: PC, b: int, slots: tuple[int, ...], what: str,
                     out: list[Violation]) -> None:
        """A write (pack, read landing, multicast landing) into pages of ``b`` that an alias still holds unconsumed
        clobbers them, whether or not ``b`` publishes them later (docs/semantics.md, "Aliases")."""
        for other in self.alias_partners.get(b, ()):
            cap = self.caps[other]
            live = ring_slots(s.popped[other], s.pushed[other] - s.popped[other], cap)
            hit = sorted(set(slots) & live)
            if hit:
                self._v(out, R.ALIAS_CLOBBER, e, pc,
                        f"{what} page {hit[0]} of b{b}, which is also page {hit[0]} of its alias b{other} and still "
                        f"holds data not yet popped from b{other}", AliasRef(b, other))
                return

    def _tile_slots(self, b: int, start: int, tiles: int) -> tuple[int, ...]:
        """The ring slots of buffer ``b`` holding its tiles ``[start, start + tiles)``, counted from tile 0 of the
        first lap (``start`` = pointer x page tiles + offset)."""
        if tiles <= 0:
            return ()
        pt, cap = self.page_tiles[b], self.caps[b]
        first = start // pt
        return tuple(sorted(ring_slots(first, (start + tiles - 1) // pt + 1 - first, cap)))

    def _page_slots(self, b: int, first: int, pages: int) -> tuple[int, ...]:
        """The ring slots of pages ``[first, first + pages)`` of buffer ``b`` (absolute page numbers)."""
        return tuple(sorted(ring_slots(first, pages, self.caps[b])))

    def _exec(self, s: State, e: int, out: list[Violation]) -> None:
        pc = s.pcs[e]
        assert pc is not None
        op = self._ops[e][pc[0]]
        if self.rendezvous.closing:
            rendezvous.rendezvous_early(self, s, e, pc, out)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise UnhandledOp("the interpreter", op)
        if handler(self, s, e, pc, op, out) is not semaphores.HOLD:  # an op of two steps stays after its first
            self._advance(s, e, out)

    # ------------------------------------------------------------------ landings

    def _land(self, s: State, t: Transition, out: list[Violation]) -> None:
        """Fire a leave or land transition: the in-flight entry moves or leaves the engine's list (a multicast keeps
        its entry until it has landed at every destination), then its family's landing applies its effect."""
        e, i = t.engine, t.slot
        pend = s.pending[e]
        en = pend[i]
        if t.kind == "leave":
            multicast.leave(self, s, e, i)
            return
        if en[0] < _MCAST:
            s.pending[e] = pend[:i] + pend[i + 1 :]
        else:
            remaining = tuple(d for d in en[7] if d != t.dest)
            rest = ((*en[:7], remaining, *en[8:]),) if remaining else ()
            s.pending[e] = (*pend[:i], *rest, *pend[i + 1 :])
        op = self._ops[e][en[1]]
        landing = _LANDINGS.get(type(op))
        if landing is None:
            raise UnhandledOp("the interpreter's landings", op)
        landing(self, s, e, en, t.dest, out)


# ---------------------------------------------------------------------- runs

#: Steps a run without targets takes when no terminating run fits in its step limit (``SimResult.needed``): enough
#: to show an early deadlock or violation, a second or two of work instead of the whole limit.
PROBE_STEPS = 100_000


class TraceStep(NamedTuple):
    """One transition a recorded run fired: ``kind`` (``step``, ``leave`` or ``land``), the engine's key, ``text``
    (``Interp.describe`` of it in the state it fired in), ``path`` (the op stepped, or the op that issued what leaves
    or lands) and that op's enclosing loop indices (``iteration``, outer first, as ``Position.iteration``)."""

    kind: str
    engine: str
    text: str
    path: tuple[int, ...]
    iteration: tuple[tuple[str, int], ...] = ()


@attrs.frozen(eq=False)
class SimResult:
    """The outcome of one run (``simulate``, ``drive`` or ``replay``).

    ``status``: ``terminated`` (every engine finished, nothing in flight), ``deadlock`` (some engine unfinished
    and no transition enabled), ``step-limit`` (``max_steps`` transitions fired), ``violation`` (stopped at the
    first violation matching ``stop_on``), ``stopped`` (``drive``/``replay`` only: nothing *allowed* may move
    but the state is not a deadlock).
    ``violations``: each rule at each op once (the first occurrence), in order of occurrence.
    ``stuck``: every unfinished engine whose next op is disabled, with the counters that block it.
    ``steps``: transitions fired (engine steps and landings). ``positions``: final position of every engine.
    ``pushed`` / ``popped``: per buffer id, pages. ``sems``: per (semaphore id, site), the word's value.
    ``reached`` / ``unreached``: for ``drive``, whether every target was reached and which engines were not (with
    ``release``: when the targets were dropped). ``executed``: per (engine key, op path), how often the op ran.
    """

    program: str
    status: str
    trips: dict[str, int]
    violations: tuple[Violation, ...]
    stuck: tuple[Stuck, ...]
    steps: int
    positions: dict[str, Position]
    pushed: dict[int, int]
    popped: dict[int, int]
    sems: dict[tuple[int, Site], int]
    reached: bool | None = None
    unreached: tuple[str, ...] = ()
    #: (engine key, op path) -> how many times the op ran (``simulate``, ``drive`` and ``replay`` runs)
    executed: dict[tuple[str, tuple[int, ...]], int] = attrs.Factory(dict)
    #: With ``record=True``: every transition fired, in order (``TraceStep``; the schedule of the run)
    trace: tuple[TraceStep, ...] = ()
    #: When no terminating run fits in the step limit (``Interp.min_steps`` > ``limit``): that least number of
    #: steps; the run then only probed its first ``PROBE_STEPS`` (status ``step-limit`` unless it hung or stopped
    #: earlier).
    needed: int | None = None
    #: The step limit the run was given (``simulate``).
    limit: int | None = None

    @property
    def deadlock(self) -> bool:
        return self.status == R.DEADLOCK

    def rules(self) -> list[str]:
        """The rule of every violation, in order."""
        return [v.rule for v in self.violations]

    def text(self) -> str:
        trips = " ".join(f"{k}={v}" for k, v in sorted(self.trips.items()))
        lines = [f"{self.program}: {self.status} after {self.steps} steps" + (f" (trips {trips})" if trips else "")]
        if self.needed is not None:
            lines.append(f"a terminating run takes at least {self.needed} steps, past the step limit of {self.limit}: "
                         f"only the first {min(self.limit or 0, PROBE_STEPS)} were run")
        if self.reached is not None:
            lines.append("targets reached" if self.reached else "targets not reached by: " + ", ".join(self.unreached))
        if self.stuck:
            lines.append("stuck:")
            lines += [f"  {st}" for st in self.stuck]
        if self.violations:
            lines.append("violations:")
            lines += [f"  {v}" for v in self.violations]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "status": self.status,
            "trips": dict(self.trips),
            "steps": self.steps,
            "violations": [v.to_json() for v in self.violations],
            "stuck": [st.to_json() for st in self.stuck],
            "positions": {k: p.to_json() for k, p in self.positions.items()},
            "buffers": [{"id": b, "pushed": self.pushed[b], "popped": self.popped[b]} for b in sorted(self.pushed)],
            "semaphores": [{"sem": sem, "site": [site.x, site.y], "value": v} for (sem, site), v in self.sems.items()],
            "reached": self.reached,
            "unreached": list(self.unreached),
            "needed": self.needed,
        }


def rule_at(rule: str, path: tuple[int, ...] | None = None, engine: str | None = None) -> Callable[[Violation], bool]:
    """A ``stop_on`` predicate: a violation of ``rule`` (at op ``path`` of ``engine`` when given)."""

    def pred(v: Violation) -> bool:
        return (v.rule == rule and (path is None or v.position.path == path)
                and (engine is None or v.position.engine == engine))

    return pred


class _Recorder:
    """Collects violations, each (rule, engine, op path, subject) once, and notices the first one ``stop_on`` wants.
    The subject is part of the key: buffers left holding pages at one engine's end are one violation each, not one
    for all (issue 16: identical obligations, identical verdicts)."""

    def __init__(self, stop_on: Callable[[Violation], bool] | None) -> None:
        self.stop_on = stop_on
        self.seen: set[tuple[str, str, tuple[int, ...] | None, object]] = set()
        self.items: list[Violation] = []
        self.stopped = False

    def add(self, vs: Iterable[Violation]) -> None:
        for v in vs:
            k = (v.rule, v.position.engine, v.position.path, v.subject)
            if k not in self.seen:
                self.seen.add(k)
                self.items.append(v)
            if self.stop_on is not None and self.stop_on(v):
                self.stopped = True


def _result(it: Interp, s: State, status: str, rec: _Recorder, steps: int,
            reached: bool | None = None, unreached: tuple[str, ...] = (),
            executed: dict[tuple[str, tuple[int, ...]], int] | None = None,
            trace: Sequence[TraceStep] = ()) -> SimResult:
    return SimResult(
        program=it.program.name,
        status=status,
        trips=dict(it.trips),
        violations=tuple(rec.items),
        stuck=it.stuck(s),
        steps=steps,
        positions=it.positions(s),
        pushed={b.id: s.pushed[b.id] for b in it.program.buffers},
        popped={b.id: s.popped[b.id] for b in it.program.buffers},
        sems={(it.word_sem[w], it.word_site[w]): s.words[w] for w in range(len(s.words))},
        reached=reached,
        unreached=unreached,
        executed=dict(executed or {}),
        trace=tuple(trace),
    )


def _status(it: Interp, s: State, rec: _Recorder) -> str:
    """``terminated`` (and the balance checks), ``deadlock`` or ``stopped`` for a state where the run halted."""
    if it.all_finished(s) and not it.in_flight(s):
        rec.add(it.final_violations(s))
        return "terminated"
    if not it.enabled(s):
        return R.DEADLOCK
    return "stopped"


def _order(pc: PC | None) -> tuple[float, ...]:
    if pc is None:
        return (float("inf"),)
    path, iters = pc
    out: list[float] = [path[0]]
    for k, i in enumerate(path[1:]):
        out += [iters[k], i]
    return tuple(out)


def _run(it: Interp, targets: dict[int, Position] | None, seed: int | None, max_steps: int,
         stop_on: Callable[[Violation], bool] | None, *, lazy: bool = False, hold: bool = False,
         priority: tuple[int, ...] | None = None, release: bool = False, record: bool = False,
         land_last: frozenset[int] = frozenset()) -> SimResult:
    """Round robin over engines with landings fired eagerly (or uniformly random choices with ``seed``); an
    engine with a target never moves past it. ``lazy``: a landing fires only when no engine may step, and then one
    of an engine not in ``land_last`` before one of an engine in it (so an op of those engines stays in flight as
    long as the run allows: the witness of a rule about an op not landed yet). ``hold``
    (departures last): a multicast leaves its source only when no engine may step and nothing in flight may land,
    and then the newest such departure goes first, so the oldest source stays unleft longest (what a reuse of a
    source before its flush needs; not with ``seed``). ``priority``: instead of round robin, the first engine of
    this order that may step does. ``release``: once nothing allowed may move and the state is not a deadlock, the
    targets are dropped and the run goes on. ``record``: keep every transition fired (``SimResult.trace``)."""
    s, first = it.start()
    trace: list[TraceStep] = []

    def land(t: Transition) -> None:
        if record:
            en = s.pending[t.engine][t.slot]
            trace.append(TraceStep(t.kind, it.keys[t.engine], it.describe(s, t), en[1],
                                   it.pos(t.engine, (en[1], en[2])).iteration))
        it._land(s, t, out)

    rec = _Recorder(stop_on)
    rec.add(first)
    rng = random.Random(seed) if seed is not None else None
    tgt = {e: p.order_key() for e, p in (targets or {}).items()}
    executed: dict[tuple[str, tuple[int, ...]], int] = {}
    order = priority if priority is not None else tuple(range(it.n))

    def allowed(e: int) -> bool:
        if not it.can_step(s, e):
            return False
        if e in tgt:
            cur = s.pcs[e]
            if _order(cur) >= tgt[e]:
                return False
            assert cur is not None
            if _order(it.next_pc(e, cur)) > tgt[e]:  # the target lies inside this step: it cannot be reached
                return False
        return True

    def step(e: int) -> None:
        pc = s.pcs[e]
        assert pc is not None
        if it.completes(s, e):
            k = (it.keys[e], pc[0])
            executed[k] = executed.get(k, 0) + 1
        if record:
            trace.append(TraceStep("step", it.keys[e], it.describe(s, Transition("step", e)), pc[0],
                                   it.pos(e, pc).iteration))
        it._exec(s, e, out)

    steps, cursor = 0, 0
    out: list[Violation] = []
    status = ""
    unreached: tuple[str, ...] = ()
    needed: int | None = None
    limit = max_steps
    if targets is None:
        least = it.min_steps()
        if least > max_steps:  # cannot terminate within the limit: probe the start for an early hang or violation
            needed, limit = least, min(max_steps, PROBE_STEPS)
    while True:
        if rec.stopped:
            status = "violation"
            break
        if steps >= limit:
            status = "step-limit"
            break
        if not steps & 1023:
            budget.check()
        out.clear()
        if rng is None:
            lands = it.landings(s)
            leaves: list[Transition] = []
            if hold:
                leaves = [t for t in lands if t.kind == "leave"]
                lands = [t for t in lands if t.kind != "leave"]
            if lands and not lazy:
                land(lands[0])
            else:
                for k in range(it.n):
                    e = order[k] if priority is not None else (cursor + k) % it.n
                    if allowed(e):
                        step(e)
                        cursor = e + 1
                        break
                else:
                    if lands:
                        land(next((t for t in lands if t.engine not in land_last), lands[0]))
                    elif leaves:
                        land(leaves[-1])
                    elif release and tgt and it.enabled(s):
                        unreached = _unreached(it, s, targets)
                        tgt = {}
                        continue
                    else:
                        break
        else:
            choices = [Transition("step", e) for e in range(it.n) if allowed(e)] + it.landings(s)
            if not choices:
                if release and tgt and it.enabled(s):
                    unreached = _unreached(it, s, targets)
                    tgt = {}
                    continue
                break
            t = rng.choice(choices)
            if t.kind == "step":
                step(t.engine)
            else:
                land(t)
        steps += 1
        rec.add(out)
    if not status:
        status = _status(it, s, rec)
    if targets is None:
        return attrs.evolve(_result(it, s, status, rec, steps, executed=executed, trace=trace), needed=needed,
                            limit=max_steps)
    if tgt:
        unreached = _unreached(it, s, targets)
    return _result(it, s, status, rec, steps, reached=not unreached, unreached=unreached, executed=executed,
                   trace=trace)


def _unreached(it: Interp, s: State, targets: dict[int, Position] | None) -> tuple[str, ...]:
    return tuple(it.keys[e] for e, p in sorted((targets or {}).items()) if not it.pos(e, s.pcs[e]).same_place(p))


def next_launch_words(program: Program, sems: dict[tuple[int, Site], int]) -> dict[tuple[int, Site], int]:
    """The semaphore words a next launch of ``program`` starts from, after a run that ended with ``sems`` (a
    ``SimResult.sems``): every word as the run left it, except the words of ``host_init`` semaphores
    (``Program.host_initialized_words``), which the host writes back to their ``init`` at launch (tt-metal writes
    every semaphore's initial value at each launch; docs/checker.md)."""
    host = program.host_initialized_words()
    init = {s.id: s.init for s in program.semaphores}
    return {k: (init[k[0]] if k in host else v) for k, v in sems.items()}


def simulate(
    program: Program,
    trips: dict[str, int] | None = None,
    dyn: dict[str, int] | None = None,
    seed: int | None = None,
    max_steps: int = 1_000_000,
    stop_on: Callable[[Violation], bool] | None = None,
    *,
    start_words: dict[tuple[int, Site], int] | None = None,
    record: bool = False,
    hold: bool = False,
) -> SimResult:
    """One run: round robin over engines (one op each turn), every enabled landing fired eagerly before the
    next engine step; with ``seed``, each transition is a uniformly random enabled one (landings included). ``hold``
    (without ``seed``): departures last — a multicast leaves its source only when nothing else may move, the newest
    first, so a source is held unleft as long as the program lets it (the order a reuse before a flush shows in).

    ``trips`` default to each trip's max; ``dyn`` gives dynamic address values by name (default ``lo``).
    ``stop_on`` stops the run (status ``violation``) at the first violation it accepts (see ``rule_at``).
    ``start_words``: words that start at another value than their ``init`` (a next launch, ``next_launch_words``).
    ``record`` keeps the schedule (``SimResult.trace``). Raises ``InvalidProgram`` for a structurally invalid
    program, ``ValueError`` for bad trip values.
    """
    return _run(Interp(program, trips, dyn, start_words=start_words), None, seed, max_steps, stop_on, hold=hold,
                record=record)


def drive(
    program: Program,
    trips: dict[str, int] | None,
    targets: dict[str, Position],
    max_steps: int = 1_000_000,
    *,
    dyn: dict[str, int] | None = None,
    seed: int | None = None,
    stop_on: Callable[[Violation], bool] | None = None,
    lazy: bool = False,
    hold: bool = False,
    priority: Sequence[str] | None = None,
    release: bool = False,
    record: bool = False,
    land_last: Sequence[str] = (),
) -> SimResult:
    """Replay toward a candidate state: run as ``simulate`` does, but an engine named in ``targets`` (by key)
    never executes the op at its target position nor anything after it; engines not named run freely.

    How the run picks its next transition (the directed search of ``certify/replay.py`` tries several):
    ``lazy`` fires a landing only when no engine may step (else landings first), those of the engines ``land_last``
    names (keys) after every other; ``hold`` lets a multicast leave its
    source only when nothing else may move, newest first (``_run``); ``priority`` (engine keys, the
    rest after them in program order) lets the first of them that may step do so instead of round robin; ``seed``
    picks uniformly at random among the allowed transitions. ``release`` drops the targets once nothing allowed
    may move in a state that is not a deadlock, and runs on (so an op at its target executes: a candidate state
    with an engine about to break a rule shows the violation).

    The run halts when nothing allowed may move. ``reached`` says whether every named engine sits exactly at its
    target (same path and iteration values; a finished target means finished); ``unreached`` names the others
    (an engine whose next step would jump over its target stops before it). ``status`` describes the halted
    state itself: ``deadlock`` when no transition at all is enabled (targets ignored) and some engine is
    unfinished, ``terminated`` when everything finished, else ``stopped``. So a deadlock candidate replays iff
    ``reached and status == "deadlock"``. ``record`` keeps the schedule (``SimResult.trace``). Raises ``KeyError``
    for an unknown engine key.
    """
    it = Interp(program, trips, dyn)
    order: tuple[int, ...] | None = None
    if priority is not None:
        first = [it.engine_index(k) for k in priority]
        order = (*first, *(e for e in range(it.n) if e not in first))
    return _run(it, {it.engine_index(k): p for k, p in targets.items()}, seed, max_steps, stop_on, lazy=lazy,
                hold=hold, priority=order, release=release, record=record,
                land_last=frozenset(it.engine_index(k) for k in land_last))


def replay(
    program: Program,
    trips: dict[str, int] | None,
    transitions: Iterable[Transition],
    dyn: dict[str, int] | None = None,
    *,
    dyn_extremes: bool = False,
) -> SimResult:
    """Fire exactly ``transitions`` from the initial state (e.g. an explorer trace). ``status`` is
    ``terminated`` / ``deadlock`` / ``stopped`` for the state reached. Raises ``ValueError`` naming the first
    transition that is not enabled."""
    it = Interp(program, trips, dyn, dyn_extremes=dyn_extremes)
    s, first = it.start()
    rec = _Recorder(None)
    rec.add(first)
    steps = 0
    executed: dict[tuple[str, tuple[int, ...]], int] = {}
    for t in transitions:
        out: list[Violation] = []
        pc = s.pcs[t.engine] if t.kind == "step" and it.completes(s, t.engine) else None
        try:
            it.apply(s, t, out)
        except ValueError as err:
            raise ValueError(f"transition {steps} ({t}): {err}") from None
        if pc is not None:
            k = (it.keys[t.engine], pc[0])
            executed[k] = executed.get(k, 0) + 1
        rec.add(out)
        steps += 1
    return _result(it, s, _status(it, s, rec), rec, steps, executed=executed)
