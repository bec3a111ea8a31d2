"""Build the shipped example programs (``examples/*.json``, ``examples/broken/*.json``).

Run ``python examples/build_examples.py [--out DIR]``. The output is deterministic: the committed JSON is
exactly what this script writes, and ``tests/test_examples_build.py`` checks that byte for byte.

What each file is, and the verdict the checker should reach on it, is in ``examples/README.md``.

Units: page counts are in pages of the named buffer (one page = one tile everywhere here), tile addresses
are row-major tile indices into the tensor, byte offsets/sizes are bytes of the site's local memory.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from verispatial.ir import (
    BLACKHOLE,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Compute,
    CopyTiles,
    Dynamic,
    Engine,
    EngineProgram,
    FillTiles,
    Flush,
    Group,
    Guard,
    If,
    InlineWrite,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    RemoteRead,
    Reserve,
    Role,
    ScratchAccess,
    SectionSpan,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemRole,
    SemSet,
    SemWait,
    Site,
    Target,
    Tensor,
    Term,
    Trip,
    TripCount,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate

HERE = Path(__file__).resolve().parent

#: Semaphore values of the reference protocol (common_values.hpp).
INVALID, VALID = 0, 1

#: Where the flush of a multicast sender sits inside one K block.
#: ``none``: no per-block flush — the vendor kernel on Wormhole, where data and flag stay ordered and the source
#: slot of block k is re-reserved at block k+2 only after the ready wait of block k+1, which needs every receiver to
#: have seen block k's flag land (so the data had left: reference §2.6 item 5); the broken Blackhole variant.
#: ``between``: between data and flag multicast (Blackhole, reference §2.5 step 6). ``after_flag``: after the flag
#: multicast (an explicit flush covering the slot's reuse; not needed on Wormhole).
FLUSH_MODES = ("none", "between", "after_flag")


# ---------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def pack_memory(target: Target, buffers: Iterable[Buffer], at: dict[int, int] | None = None) -> tuple[BufferAt, ...]:
    """The memory map of ``buffers``: per (site, space), one buffer after another from ``reserved_base``,
    each offset aligned to the target's alignment (bytes); an alias sits at its root's offset.

    ``at`` forces the byte offset of some buffer ids (used to build the overlap counterexample); the
    next buffer then continues after the forced one. Sizes are capacity x page_tiles x bytes per tile.
    """
    bufs = list(buffers)
    forced = at or {}
    nxt: dict[tuple[Site, str], int] = {}
    offset: dict[int, int] = {}
    for b in bufs:
        size = b.capacity * b.page_tiles * target.bytes_per_tile(b.dtype)
        if b.alias_of is not None:
            offset[b.id] = offset[b.alias_of]
            continue
        key = (b.site, b.space.value)
        off = forced.get(b.id, _align(nxt.get(key, target.reserved_base), target.alignment))
        offset[b.id] = off
        nxt[key] = off + size
    return tuple(
        BufferAt(b.id, offset[b.id], b.capacity * b.page_tiles * target.bytes_per_tile(b.dtype)) for b in bufs
    )


def _tensor(name: str, rows: int, cols: int, role: Role) -> Tensor:
    return Tensor(name=name, shape=(rows, cols), dtype="bf16", role=role)


# ---------------------------------------------------------------------------------------------------------
# 1-2. The reuse-multicast matmul (reference/tenstorrent.md §2)
# ---------------------------------------------------------------------------------------------------------


@attrs.frozen
class MatmulConfig:
    """Sizes of ``matmul_multicore_reuse_mcast`` (reference §2.4). Sizes in elements; everything derived is
    in tiles (or pages of one tile). ``cols`` x ``rows`` is the core grid (C x R)."""

    m: int = 2048
    n: int = 1024
    k: int = 512
    cols: int = 8
    rows: int = 2
    in0_block_w: int = 2
    sb_h: int = 4
    sb_w: int = 2
    tile: int = 32

    def __attrs_post_init__(self) -> None:
        # The example's host code requires an exact split; refuse anything else rather than round.
        if self.mt % self.rows or self.nt % self.cols or self.kt % self.in0_block_w:
            raise ValueError(f"{self} does not split evenly over the grid and K blocks")
        if self.per_core_m % self.sb_h or self.per_core_n % self.sb_w or self.num_blocks < 2:
            raise ValueError(f"{self}: sub-blocks must tile the core block and there must be >= 2 K blocks")

    @property
    def mt(self) -> int:
        return self.m // self.tile

    @property
    def nt(self) -> int:
        return self.n // self.tile

    @property
    def kt(self) -> int:
        return self.k // self.tile

    @property
    def per_core_m(self) -> int:
        return self.mt // self.rows

    @property
    def per_core_n(self) -> int:
        return self.nt // self.cols

    @property
    def num_blocks(self) -> int:
        return self.kt // self.in0_block_w

    @property
    def n0(self) -> int:
        return self.per_core_m * self.in0_block_w

    @property
    def n1(self) -> int:
        return self.per_core_n * self.in0_block_w

    @property
    def sbt(self) -> int:
        return self.sb_h * self.sb_w

    @property
    def in0_num_subblocks(self) -> int:
        return self.per_core_m // self.sb_h

    @property
    def in1_num_subblocks(self) -> int:
        return self.per_core_n // self.sb_w

    @property
    def out_block(self) -> int:
        return self.per_core_m * self.per_core_n


#: Semaphore ids of the matmul (reference §2.3), in declaration order.
IN0_SENDER_SEM, IN0_RECEIVER_SEM, IN1_SENDER_SEM, IN1_RECEIVER_SEM = 0, 1, 2, 3
#: Buffer order per site: c_0, c_1, c_24, c_16 (the alias after its root).
C0, C1, C24, C16 = 0, 1, 2, 3


def matmul_sites(cfg: MatmulConfig) -> list[Site]:
    """The grid's sites in (y, x) order; a site's position in this list times 4 is its first buffer id."""
    return [Site(x, y) for y in range(cfg.rows) for x in range(cfg.cols)]


def _mcast(buf: int, pages: int, group: int, dests: int, valid_sem: int, flush: str) -> list[Op]:
    ops: list[Op] = [McastSend(buf, pages, group, dests)]
    if flush == "between":
        ops.append(Flush())
    ops.append(McastSetValid(valid_sem, group, dests))
    if flush == "after_flag":
        ops.append(Flush())
    return ops


def _receiver_block(buf: int, pages: int, recv_sem: int, send_sem: int, sender: Site) -> list[Op]:
    """Reference §2.5 'in0 receiver' steps 1-5 (and the same for in1)."""
    return [
        Reserve(buf, pages),
        SemSet(recv_sem, INVALID),
        SemInc(send_sem, at=sender, by=1),
        SemWait(recv_sem, WaitCond.EQ, VALID),
        Push(buf, pages),
    ]


def _in0_block(cfg: MatmulConfig, site: Site, b0: int, groups: dict[str, int], flush: str) -> list[Op]:
    """One K block (loop index ``k``) of the in0 half of the reader at ``site``."""
    c0 = b0 + C0
    if site.x != 0:
        return _receiver_block(c0, cfg.n0, IN0_RECEIVER_SEM, IN0_SENDER_SEM, Site(0, site.y))
    g = groups[f"in0_{site.y}"]
    # Row r of the core's per_core_m tile rows, in0_block_w tiles starting at column k*in0_block_w.
    addr = Addr(base=site.y * cfg.per_core_m * cfg.kt, terms=(Term("r", cfg.kt), Term("k", cfg.in0_block_w)))
    return [
        Reserve(c0, cfg.n0),
        Loop("r", cfg.per_core_m, (ReadTiles("in0", addr, cfg.in0_block_w, c0),)),
        ReadBarrier(),
        SemWait(IN0_SENDER_SEM, WaitCond.EQ, cfg.cols - 1),
        SemSet(IN0_SENDER_SEM, 0),
        *_mcast(c0, cfg.n0, g, cfg.cols - 1, IN0_RECEIVER_SEM, flush),
        Push(c0, cfg.n0),
    ]


def _in1_block(cfg: MatmulConfig, site: Site, b0: int, groups: dict[str, int], flush: str) -> list[Op]:
    """One K block (loop index ``k``) of the in1 half of the reader at ``site``."""
    c1 = b0 + C1
    if site.y != 0:
        return _receiver_block(c1, cfg.n1, IN1_RECEIVER_SEM, IN1_SENDER_SEM, Site(site.x, 0))
    g = groups[f"in1_{site.x}"]
    # Row k*in0_block_w + r of in1, per_core_n tiles starting at column x*per_core_n.
    addr = Addr(base=site.x * cfg.per_core_n, terms=(Term("r", cfg.nt), Term("k", cfg.in0_block_w * cfg.nt)))
    return [
        Reserve(c1, cfg.n1),
        Loop("r", cfg.in0_block_w, (ReadTiles("in1", addr, cfg.per_core_n, c1),)),
        ReadBarrier(),
        SemWait(IN1_SENDER_SEM, WaitCond.EQ, cfg.rows - 1),
        SemSet(IN1_SENDER_SEM, 0),
        *_mcast(c1, cfg.n1, g, cfg.rows - 1, IN1_RECEIVER_SEM, flush),
        Push(c1, cfg.n1),
    ]


def matmul_reader(cfg: MatmulConfig, site: Site, b0: int, groups: dict[str, int], flush: str,
                  in0_trip: str | None = None) -> tuple[Op, ...]:
    """The reader kernel of ``site``'s class (reference §2.1, §2.5); ``b0`` is the site's c_0 buffer id.

    ``in0_trip`` (only used at (0,0)) splits the K loop: the in0 half runs ``in0_trip`` blocks, then the in1
    half runs ``num_blocks`` (the broken variant ``c_trip_sender``).
    """
    start: list[Op] = []
    # A sender's own copy of the receiver flag holds VALID: it is the source of the flag multicast.
    if site.x == 0:
        start.append(SemSet(IN0_RECEIVER_SEM, VALID))
    if site.y == 0:
        start.append(SemSet(IN1_RECEIVER_SEM, VALID))
    in0 = _in0_block(cfg, site, b0, groups, flush)
    in1 = _in1_block(cfg, site, b0, groups, flush)
    if in0_trip is not None and site == Site(0, 0):
        loops: list[Op] = [Loop("k", in0_trip, tuple(in0)), Loop("k", cfg.num_blocks, tuple(in1))]
    else:
        loops = [Loop("k", cfg.num_blocks, (*in0, *in1))]
    end: list[Op] = [
        # Reference §2.5 end (PR #55119): no engine may finish with NoC transactions outstanding.
        WriteBarrier(),
        AtomicBarrier(),
    ]
    # Both flag words end at VALID, as in the vendor kernel: a run re-arms them before any use (the sender
    # sets its source word at kernel start, a receiver invalidates its flag before every ready increment).
    return (*start, *loops, *end)


def _subblock(cfg: MatmulConfig, b0: int, *, reload: bool, out: int, c16_reserve: int | None) -> list[Op]:
    """Reference §2.5 compute step 2 for one sub-block: acquire, [reload], multiply, pack, release.

    ``out`` is the buffer packed into (c_24 or c_16); ``c16_reserve`` the cumulative block-0 reserve.
    """
    c24 = b0 + C24
    ops: list[Op] = [AcquireAcc(cfg.sbt, "bf16")]
    if reload:
        ops += [Wait(c24, cfg.sbt), Compute("copy", cfg.sbt, (Operand(c24, cfg.sbt),)), Pop(c24, cfg.sbt)]
    ops.append(Compute("matmul", cfg.sbt, (Operand(b0 + C0, cfg.n0), Operand(b0 + C1, cfg.n1))))
    if c16_reserve is not None:
        ops.append(Reserve(b0 + C16, c16_reserve))
    ops += [Reserve(out, cfg.sbt), PackAcc(out, cfg.sbt), Push(out, cfg.sbt), ReleaseAcc()]
    return ops


def matmul_compute(cfg: MatmulConfig, b0: int) -> tuple[Op, ...]:
    """Reference §2.5 'compute (every core)', first and last K block peeled (page counts are constants).

    Block 0 unrolls its sub-blocks for the cumulative ``Reserve(c_16, (s+1)*sbt)``; the middle blocks are a
    ``Loop`` of ``num_blocks - 2`` over sub-block loops ``i``, ``j``; the last block packs into c_16.
    """
    c0, c1, c24, c16 = b0 + C0, b0 + C1, b0 + C24, b0 + C16
    head: list[Op] = [Wait(c0, cfg.n0), Wait(c1, cfg.n1)]
    tail: list[Op] = [Pop(c0, cfg.n0), Pop(c1, cfg.n1)]
    block0: list[Op] = list(head)
    for s in range(cfg.in0_num_subblocks * cfg.in1_num_subblocks):
        block0 += _subblock(cfg, b0, reload=False, out=c24, c16_reserve=(s + 1) * cfg.sbt)
    block0 += tail

    def nest(body: list[Op]) -> Op:
        return Loop("i", cfg.in0_num_subblocks, (Loop("j", cfg.in1_num_subblocks, tuple(body)),))

    middle = Loop(
        "k", cfg.num_blocks - 2, (*head, nest(_subblock(cfg, b0, reload=True, out=c24, c16_reserve=None)), *tail)
    )
    last = [*head, nest(_subblock(cfg, b0, reload=True, out=c16, c16_reserve=None)), *tail]
    return (*block0, middle, *last)


def matmul_writer(cfg: MatmulConfig, site: Site, b0: int) -> tuple[Op, ...]:
    """Reference §2.5 'writer': per sub-block (i, j), wait, sb_h rows of sb_w tiles, barrier, pop."""
    c16 = b0 + C16
    # out tile (y*per_core_m + i*sb_h + r, x*per_core_n + j*sb_w), row-major over nt columns.
    addr = Addr(
        base=site.y * cfg.per_core_m * cfg.nt + site.x * cfg.per_core_n,
        terms=(Term("i", cfg.sb_h * cfg.nt), Term("r", cfg.nt), Term("j", cfg.sb_w)),
    )
    body: tuple[Op, ...] = (
        Wait(c16, cfg.sbt),
        Loop("r", cfg.sb_h, (WriteTiles(c16, "out", addr, cfg.sb_w),)),
        WriteBarrier(),
        Pop(c16, cfg.sbt),
    )
    return (Loop("i", cfg.in0_num_subblocks, (Loop("j", cfg.in1_num_subblocks, body),)),)


def matmul_reuse_mcast(name: str, target: Target, flush: str, cfg: MatmulConfig | None = None,
                       in0_trip: Trip | None = None) -> Program:
    """The reuse-multicast matmul of reference §2 on ``target`` with the per-block flush at ``flush``
    (one of ``FLUSH_MODES``). ``in0_trip`` makes (0,0)'s in0 half run a runtime number of blocks."""
    if flush not in FLUSH_MODES:
        raise ValueError(f"flush must be one of {FLUSH_MODES}, got {flush!r}")
    cfg = cfg or MatmulConfig()
    sites = matmul_sites(cfg)
    buffers: list[Buffer] = []
    for s in sites:
        b0 = len(buffers)
        buffers += [
            Buffer(b0 + C0, "c_0", s, cb=0, page_tiles=1, capacity=2 * cfg.n0, dtype="bf16"),
            Buffer(b0 + C1, "c_1", s, cb=1, page_tiles=1, capacity=2 * cfg.n1, dtype="bf16"),
            Buffer(b0 + C24, "c_24", s, cb=24, page_tiles=1, capacity=cfg.out_block, dtype="bf16"),
            # c_16 and c_24 share one CircularBufferConfig: the same bytes (reference §2.2).
            Buffer(b0 + C16, "c_16", s, cb=16, page_tiles=1, capacity=cfg.out_block, dtype="bf16",
                   alias_of=b0 + C24),
        ]
    all_sites = tuple(sites)
    semaphores = (
        Semaphore(IN0_SENDER_SEM, "in0_sender_sem", all_sites, INVALID, SemRole.MCAST_READY),
        Semaphore(IN0_RECEIVER_SEM, "in0_receiver_sem", all_sites, INVALID, SemRole.MCAST_VALID),
        Semaphore(IN1_SENDER_SEM, "in1_sender_sem", all_sites, INVALID, SemRole.MCAST_READY),
        Semaphore(IN1_RECEIVER_SEM, "in1_receiver_sem", all_sites, INVALID, SemRole.MCAST_VALID),
    )
    groups: list[Group] = []
    gid: dict[str, int] = {}
    for y in range(cfg.rows):
        gid[f"in0_{y}"] = len(groups)
        groups.append(Group(len(groups), sender=Site(0, y), rect=(1, y, cfg.cols - 1, y)))
    for x in range(cfg.cols):
        gid[f"in1_{x}"] = len(groups)
        groups.append(Group(len(groups), sender=Site(x, 0), rect=(x, 1, x, cfg.rows - 1)))
    programs: list[EngineProgram] = []
    for i, s in enumerate(sites):
        b0 = 4 * i
        trip = in0_trip.name if in0_trip is not None else None
        programs += [
            EngineProgram(s, Engine.READER, matmul_reader(cfg, s, b0, gid, flush, trip)),
            EngineProgram(s, Engine.COMPUTE, matmul_compute(cfg, b0)),
            EngineProgram(s, Engine.WRITER, matmul_writer(cfg, s, b0)),
        ]
    return Program(
        name=name,
        target=target,
        tensors=(
            _tensor("in0", cfg.m, cfg.k, Role.INPUT),
            _tensor("in1", cfg.k, cfg.n, Role.PARAM),
            _tensor("out", cfg.m, cfg.n, Role.OUTPUT),
        ),
        buffers=tuple(buffers),
        semaphores=semaphores,
        groups=tuple(groups),
        trips=(in0_trip,) if in0_trip is not None else (),
        programs=tuple(programs),
        memory=pack_memory(target, buffers),
    )


# ---------------------------------------------------------------------------------------------------------
# Small programs
# ---------------------------------------------------------------------------------------------------------

S00 = Site(0, 0)


#: The compute engine of ``pipeline_small`` (c_0 = 0, c_1 = 1, c_16 = 2): one accumulator over the K loop of 4.
PIPELINE_COMPUTE: tuple[Op, ...] = (
    AcquireAcc(1, "bf16"),
    Loop("k", 4, (Wait(0, 1), Wait(1, 1), Compute("matmul", 1, (Operand(0, 1), Operand(1, 1))), Pop(0, 1), Pop(1, 1))),
    Reserve(2, 1),
    PackAcc(2, 1),
    Push(2, 1),
    ReleaseAcc(),
)
#: Its writer: the result tile out, the write acknowledged before the page goes.
PIPELINE_WRITER: tuple[Op, ...] = (Wait(2, 1), WriteTiles(2, "C", Addr(0), 1), WriteBarrier(), Pop(2, 1))


def pipeline_small(name: str = "pipeline_small", c1_offset: int | None = None,
                   compute: tuple[Op, ...] = PIPELINE_COMPUTE, writer: tuple[Op, ...] = PIPELINE_WRITER) -> Program:
    """Reader -> compute -> writer on (0,0): one output tile of ``C = A @ B`` over a K loop of 4.

    A is 1x4 tiles, B 4x1 tiles; c_0 and c_1 are double-buffered (2 pages of one tile), c_16 holds the result
    tile. ``c1_offset`` forces c_1's byte offset (the overlap variant); ``compute`` and ``writer`` replace those
    engines' programs (the broken variants).
    """
    k = 4
    c0, c1, c16 = 0, 1, 2
    buffers = (
        Buffer(c0, "c_0", S00, cb=0, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c1, "c_1", S00, cb=1, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c16, "c_16", S00, cb=16, page_tiles=1, capacity=1, dtype="bf16"),
    )
    at_k = Addr(0, (Term("k", 1),))
    reader: tuple[Op, ...] = (
        Loop("k", k, (
            Reserve(c0, 1),
            Reserve(c1, 1),
            ReadTiles("A", at_k, 1, c0),
            ReadTiles("B", at_k, 1, c1),
            ReadBarrier(),
            Push(c0, 1),
            Push(c1, 1),
        )),
    )
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("A", 32, 32 * k, Role.INPUT), _tensor("B", 32 * k, 32, Role.PARAM),
                 _tensor("C", 32, 32, Role.OUTPUT)),
        buffers=buffers,
        programs=(
            EngineProgram(S00, Engine.READER, reader),
            EngineProgram(S00, Engine.COMPUTE, compute),
            EngineProgram(S00, Engine.WRITER, writer),
        ),
        memory=pack_memory(WORMHOLE, buffers, None if c1_offset is None else {c1: c1_offset}),
    )


def _copy_program(name: str, capacity: int, reader: tuple[Op, ...], writer: tuple[Op, ...], tiles: int) -> Program:
    """Reader -> c_0 (``capacity`` pages of one tile) -> writer on (0,0), copying X (1 x ``tiles``) to Y."""
    buffers = (Buffer(0, "c_0", S00, cb=0, page_tiles=1, capacity=capacity, dtype="bf16"),)
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32 * tiles, Role.INPUT), _tensor("Y", 32, 32 * tiles, Role.OUTPUT)),
        buffers=buffers,
        programs=(EngineProgram(S00, Engine.READER, reader), EngineProgram(S00, Engine.WRITER, writer)),
        memory=pack_memory(WORMHOLE, buffers),
    )


def reserve_over_capacity() -> Program:
    """(a) A reader reserves 8 pages of a 4-page c_0 (then reads, barriers, pushes 8); a writer drains 8."""
    reader: tuple[Op, ...] = (Reserve(0, 8), ReadTiles("X", Addr(0), 8, 0), ReadBarrier(), Push(0, 8))
    writer: tuple[Op, ...] = (Wait(0, 8), WriteTiles(0, "Y", Addr(0), 8), WriteBarrier(), Pop(0, 8))
    return _copy_program("a_reserve_over_capacity", 4, reader, writer, 8)


def ring_straddle() -> Program:
    """(b) Pushes of 2, 2, 1, 2, 2 pages (each read, barriered, reserved first) into a 4-page c_0, popped one
    page at a time 9 times: the running push sum 5 -> 7 crosses the ring's end at 8."""
    reader: list[Op] = []
    at = 0
    for n in (2, 2, 1, 2, 2):
        reader += [Reserve(0, n), ReadTiles("X", Addr(at), n, 0), ReadBarrier(), Push(0, n)]
        at += n
    writer: tuple[Op, ...] = (
        Loop("i", at, (Wait(0, 1), WriteTiles(0, "Y", Addr(0, (Term("i", 1),)), 1), WriteBarrier(), Pop(0, 1))),
    )
    return _copy_program("b_ring_straddle", 4, tuple(reader), writer, at)


def read_no_barrier() -> Program:
    """(e) A reader pushes each page right after issuing its ReadTiles; its ReadBarrier comes after the push."""
    reader: tuple[Op, ...] = (
        Loop("k", 4, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("k", 1),)), 1, 0), Push(0, 1), ReadBarrier())),
    )
    writer: tuple[Op, ...] = (
        Loop("k", 4, (Wait(0, 1), WriteTiles(0, "Y", Addr(0, (Term("k", 1),)), 1), WriteBarrier(), Pop(0, 1))),
    )
    return _copy_program("e_read_no_barrier", 2, reader, writer, 4)


# ---------------------------------------------------------------------------------------------------------
# Hardware-fidelity rules (docs/semantics.md): one broken program per rule, and a multicast pair
# ---------------------------------------------------------------------------------------------------------


def writer_pops_before_flush() -> Program:
    """(h) ``pipeline_small`` whose writer pops the result page right after issuing its write and waits for the
    acknowledgement only at the end: the page may be freed while the NoC still reads it (tt-metal writers call
    noc_async_writes_flushed() or noc_async_write_barrier() before cb_pop_front)."""
    writer: tuple[Op, ...] = (Wait(2, 1), WriteTiles(2, "C", Addr(0), 1), Pop(2, 1), WriteBarrier())
    return pipeline_small("h_writer_pops_before_flush", writer=writer)


def compute_before_wait() -> Program:
    """(i) ``pipeline_small`` whose compute unpacks its operands before waiting for them."""
    body = (Compute("matmul", 1, (Operand(0, 1), Operand(1, 1))), Wait(0, 1), Wait(1, 1), Pop(0, 1), Pop(1, 1))
    compute = (PIPELINE_COMPUTE[0], Loop("k", 4, body), *PIPELINE_COMPUTE[2:])
    return pipeline_small("i_compute_before_wait", compute=compute)


def no_acquire() -> Program:
    """(j) ``pipeline_small`` without its AcquireAcc: the math, the pack and the release run on no accumulator."""
    return pipeline_small("j_no_acquire", compute=PIPELINE_COMPUTE[1:])


def acc_fp32_overflow() -> Program:
    """(w) ``pipeline_small`` whose compute acquires an 8-tile accumulator at fp32 (a 2x4 sub-block with 32-bit
    destination accumulation): half-sync DST holds 8 tiles of 16 bits but only 4 of 32 bits (tt-metal
    ``compute/reg_api.h``, ``ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp`` get_dest_limit), so the acquire can never
    hold them."""
    return pipeline_small("w_acc_fp32_overflow", compute=(AcquireAcc(8, "fp32"), *PIPELINE_COMPUTE[1:]))


def acc_overrun() -> Program:
    """(x) ``pipeline_small`` whose compute acquires a 1-tile accumulator but its matmul writes a 1x2 sub-block (2
    tiles): the second lands in a DST tile past the acquired section (tt-metal ``compute/reg_api.h``: math writes
    DST indices inside the section tile_regs_acquire took; past it lie the packer's half or get_dest_limit,
    ``ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp``). The acquire itself fits, so only ``acc-overrun`` sees it."""
    loop = Loop("k", 4, (Wait(0, 1), Wait(1, 1), Compute("matmul", 2, (Operand(0, 1), Operand(1, 1))), Pop(0, 1),
                         Pop(1, 1)))
    return pipeline_small("x_acc_overrun", compute=(PIPELINE_COMPUTE[0], loop, *PIPELINE_COMPUTE[2:]))


def output_unwritten() -> Program:
    """(k) ``pipeline_small`` whose writer drains the result page without writing it: C is never written."""
    return pipeline_small("k_output_unwritten", writer=(Wait(2, 1), WriteBarrier(), Pop(2, 1)))


def push_unfilled() -> Program:
    """(l) A reader that pushes 2 pages per block but issues one ReadTiles of one tile: the second page is
    published holding whatever the ring held (cb_push_back publishes L1 as it is)."""
    reader: tuple[Op, ...] = (
        Loop("k", 2, (Reserve(0, 2), Loop("r", 1, (ReadTiles("X", Addr(0, (Term("k", 2), Term("r", 1))), 1, 0),)),
                      ReadBarrier(), Push(0, 2))),
    )
    writer: tuple[Op, ...] = (
        Loop("k", 2, (Wait(0, 2), WriteTiles(0, "Y", Addr(0, (Term("k", 2),)), 2), WriteBarrier(), Pop(0, 2))),
    )
    return _copy_program("l_push_unfilled", 2, reader, writer, 4)


def reduce_scaler(name: str = "reduce_scaler", pushed: int = 1) -> Program:
    """A row reduction with its scaler tile as ttnn's reduce and softmax kernels write it: the reader fills c_2 once
    by local stores (``FillTiles``, ``prepare_reduce_scaler`` of ``kernel_lib/reduce_helpers_dataflow.inl:163-176``:
    reserve_back(1), zero and fill the tile, push_back(1)) and drains them before the push (a blocking load of the
    last word, which the vendor helper does not issue on Wormhole: ``vendor/softmax_w.json``), then streams the 4
    tiles of A through c_0; compute waits for the scaler once and never pops it (the launch's end resets the buffer),
    reducing each A tile with it into c_16; the writer writes C. ``pushed``: the pages the scaler push publishes (2:
    one more than was filled, the broken variant (y); c_2 then holds 2 pages)."""
    k = 4
    c0, c2, c16 = 0, 1, 2
    buffers = (
        Buffer(c0, "c_0", S00, cb=0, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c2, "c_2", S00, cb=2, page_tiles=1, capacity=pushed, dtype="bf16"),
        Buffer(c16, "c_16", S00, cb=16, page_tiles=1, capacity=2, dtype="bf16"),
    )
    at_k = Addr(0, (Term("k", 1),))
    reader: tuple[Op, ...] = (
        Reserve(c2, pushed), FillTiles(c2, 1, "reduce_scaler", drain=True), Push(c2, pushed),
        Loop("k", k, (Reserve(c0, 1), ReadTiles("A", at_k, 1, c0), ReadBarrier(), Push(c0, 1))),
    )
    compute: tuple[Op, ...] = (
        Wait(c2, 1),
        Loop("k", k, (Wait(c0, 1), AcquireAcc(1, "bf16"), Compute("reduce_row_sum", 1, (Operand(c0, 1), Operand(c2, 1))),
                      Reserve(c16, 1), PackAcc(c16, 1), Push(c16, 1), ReleaseAcc(), Pop(c0, 1))),
    )
    writer: tuple[Op, ...] = (
        Loop("k", k, (Wait(c16, 1), WriteTiles(c16, "C", at_k, 1), WriteBarrier(), Pop(c16, 1))),
    )
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("A", 32, 32 * k, Role.INPUT), _tensor("C", 32, 32 * k, Role.OUTPUT)),
        buffers=buffers,
        programs=(
            EngineProgram(S00, Engine.READER, reader),
            EngineProgram(S00, Engine.COMPUTE, compute),
            EngineProgram(S00, Engine.WRITER, writer),
        ),
        memory=pack_memory(WORMHOLE, buffers),
    )


def local_copy(name: str = "local_copy", wait_first: bool = True, drain: bool = True) -> Program:
    """The receiving side of tt-metal's contributed multicast example on one core, its page read from X instead of
    multicast: the reader fills c_0 by a NoC read, then copies c_0's page into c_16 with its own L1 loads and stores
    (``CopyTiles``, ``copy_tile_between_cb`` of ``inbound_kernel.cpp:9-15``: wait c_0, reserve c_16, copy, push c_16,
    pop c_0), ending with the blocking load of the last word tt-metal PR #50183 added; the writer writes c_16 to Y.
    ``wait_first`` false: the copy before c_0's wait (broken variant zl, ``cb-read-unwaited``: get_read_ptr is valid
    only between cb_wait_front and cb_pop_front). ``drain`` false: the copy as the example had it before PR #50183,
    no blocking load before the push (broken variant zm, ``async-read-publish``: the push's stream-register store may
    be processed before the copy's L1 stores land)."""
    k = 4
    c0, c16 = 0, 1
    buffers = (
        Buffer(c0, "c_0", S00, cb=0, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c16, "c_16", S00, cb=16, page_tiles=1, capacity=2, dtype="bf16"),
    )
    at_k = Addr(0, (Term("k", 1),))
    copy: tuple[Op, ...] = (Wait(c0, 1), Reserve(c16, 1), CopyTiles(c0, c16, 1, drain), Push(c16, 1), Pop(c0, 1))
    if not wait_first:
        copy = (Reserve(c16, 1), CopyTiles(c0, c16, 1, drain), Wait(c0, 1), Push(c16, 1), Pop(c0, 1))
    reader: tuple[Op, ...] = (
        Loop("k", k, (Reserve(c0, 1), ReadTiles("X", at_k, 1, c0), ReadBarrier(), Push(c0, 1), *copy)),
    )
    writer: tuple[Op, ...] = (
        Loop("k", k, (Wait(c16, 1), WriteTiles(c16, "Y", at_k, 1), WriteBarrier(), Pop(c16, 1))),
    )
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32 * k, Role.INPUT), _tensor("Y", 32, 32 * k, Role.OUTPUT)),
        buffers=buffers,
        programs=(EngineProgram(S00, Engine.READER, reader), EngineProgram(S00, Engine.WRITER, writer)),
        memory=pack_memory(WORMHOLE, buffers),
    )


def scratch_slices(name: str = "scratch_slices", barrier_first: bool = True) -> Program:
    """argmax's ``reduce_all`` reader on one core with its buffers used as scratch L1 (``Buffer.scratch``; ttnn 0.81.1
    ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp``): each outer slice ``k`` of X is read
    into the same bytes of ``src`` (:68-73, never reserved nor pushed), barriered (:74) and loaded (``in_vals[i]``,
    :85); after the loop the partial is stored into ``red_idxs`` (:500), drained, and written to Y from it. The
    vendor's own write (:536) follows its store with no drain: a finding of its own (docs/semantics.md "Scratch
    buffers"), not this example's. ``barrier_first`` false: the values loaded before the read barrier (broken variant
    zn, ``scratch-unlanded``)."""
    k = 3
    src, red = 0, 1
    buffers = (
        Buffer(src, "src", S00, cb=0, page_tiles=1, capacity=1, dtype="bf16", scratch=True),
        Buffer(red, "red_idxs", S00, cb=2, page_tiles=1, capacity=1, dtype="bf16", scratch=True),
    )
    at_k = Addr(0, (Term("k", 1),))
    land: tuple[Op, ...] = (ReadBarrier(), ScratchAccess(src)) if barrier_first else (ScratchAccess(src), ReadBarrier())
    reader: tuple[Op, ...] = (
        Loop("k", k, (ReadTiles("X", at_k, 1, src), *land)),
        ScratchAccess(red, store=True, drain=True), WriteTiles(red, "Y", Addr(0), 1), WriteBarrier(),
    )
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32 * k, Role.INPUT), _tensor("Y", 32, 32, Role.OUTPUT)),
        buffers=buffers,
        programs=(EngineProgram(S00, Engine.READER, reader),),
        memory=pack_memory(WORMHOLE, buffers),
    )


def alias_pack_clobber() -> Program:
    """(m) c_16 aliases c_0 (one CircularBufferConfig, reference §1.1). The compute packs its result into c_16's
    only page while c_0 still holds the input tile there unpopped: the pack itself clobbers it."""
    buffers = (Buffer(0, "c_0", S00, cb=0, page_tiles=1, capacity=1, dtype="bf16"),
               Buffer(1, "c_16", S00, cb=16, page_tiles=1, capacity=1, dtype="bf16", alias_of=0))
    reader: tuple[Op, ...] = (Reserve(0, 1), ReadTiles("X", Addr(0), 1, 0), ReadBarrier(), Push(0, 1))
    compute: tuple[Op, ...] = (Wait(0, 1), AcquireAcc(1, "bf16"), Compute("copy", 1, (Operand(0, 1),)), Reserve(1, 1),
                               PackAcc(1, 1), Push(1, 1), ReleaseAcc(), Pop(0, 1))
    writer: tuple[Op, ...] = (Wait(1, 1), WriteTiles(1, "Y", Addr(0), 1), WriteBarrier(), Pop(1, 1))
    return Program(
        name="m_alias_pack_clobber",
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32, Role.INPUT), _tensor("Y", 32, 32, Role.OUTPUT)),
        buffers=buffers,
        programs=(EngineProgram(S00, Engine.READER, reader), EngineProgram(S00, Engine.COMPUTE, compute),
                  EngineProgram(S00, Engine.WRITER, writer)),
        memory=pack_memory(WORMHOLE, buffers),
    )


S10 = Site(1, 0)


def mcast_pair(name: str = "mcast_pair", pages: int = 4, barrier_after_send: bool = False,
               source_set_by_compute: bool = False, target: Target = WORMHOLE) -> Program:
    """(0,0) multicasts a 2-tile block of X per K block (4 blocks) into (1,0)'s c_0 with the reference protocol
    (reference §2.5: ready counter, VALID flag), on Wormhole, without a per-block flush; each site's compute drains
    its c_0. ``pages``: c_0's capacity on both sites (4: double-buffered). ``barrier_after_send`` moves the sender's
    ReadBarrier after the data multicast (variant n). ``source_set_by_compute`` has (0,0)'s compute store INVALID
    into the flag's source word (a reset) while a flag may still read it (variant p): the flag may carry INVALID.
    (Storing the value the word holds would change no byte: no hazard, docs/semantics.md.) ``target``: the machine
    (Wormhole unless given)."""
    k, blk = 4, 2
    buffers = (Buffer(0, "c_0", S00, cb=0, page_tiles=1, capacity=pages, dtype="bf16"),
               Buffer(1, "c_0", S10, cb=0, page_tiles=1, capacity=pages, dtype="bf16"))
    ready, valid = 0, 1
    reads: list[Op] = [Reserve(0, blk), ReadTiles("X", Addr(0, (Term("k", blk),)), blk, 0)]
    send: list[Op] = [SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), McastSend(0, blk, 0, 1)]
    if barrier_after_send:
        body = [*reads, *send, ReadBarrier()]
    else:
        body = [*reads, ReadBarrier(), *send]
    body += [McastSetValid(valid, 0, 1), Push(0, blk)]
    sender: tuple[Op, ...] = (SemSet(valid, VALID), Loop("k", k, tuple(body)), WriteBarrier())
    receiver: tuple[Op, ...] = (Loop("k", k, tuple(_receiver_block(1, blk, valid, ready, S00))), AtomicBarrier())

    def drain(b: int) -> tuple[Op, ...]:
        return (Loop("k", k, (Wait(b, blk), AcquireAcc(blk, "bf16"), Compute("copy", blk, (Operand(b, blk),)),
                              ReleaseAcc(), Pop(b, blk))),)

    compute0 = drain(0)
    if source_set_by_compute:
        compute0 = (*compute0, SemSet(valid, INVALID))
    return Program(
        name=name,
        target=target,
        tensors=(_tensor("X", 32, 32 * k * blk, Role.INPUT),),
        buffers=buffers,
        semaphores=(Semaphore(ready, "sender_sem", (S00, S10), INVALID, SemRole.MCAST_READY),
                    Semaphore(valid, "receiver_sem", (S00, S10), INVALID, SemRole.MCAST_VALID)),
        groups=(Group(0, sender=S00, rect=(1, 0, 1, 0)),),
        programs=(EngineProgram(S00, Engine.READER, sender), EngineProgram(S00, Engine.COMPUTE, compute0),
                  EngineProgram(S10, Engine.READER, receiver), EngineProgram(S10, Engine.COMPUTE, drain(1))),
        memory=pack_memory(target, buffers),
    )


# ---------------------------------------------------------------------------------------------------------
# Three sections with rendezvous (the shape compose produces)
# ---------------------------------------------------------------------------------------------------------

GATHER, RELEASE_READER, RELEASE_WRITER = 0, 1, 2
_RELEASE = {Engine.READER: RELEASE_READER, Engine.WRITER: RELEASE_WRITER}


def rendezvous(participants: list[tuple[Site, Engine]], who: tuple[Site, Engine], gather_target: int) -> list[Op]:
    """The ops ``who`` runs at one rendezvous of ``participants`` (sorted; the first is the root).

    Arrive (inc the root's gather word, atomic barrier); the root waits for ``gather_target`` arrivals, resets
    the gather word and releases every participant (inc its engine's release word at its site, one atomic
    barrier); every participant waits for its release and resets it. ``gather_target`` is P when correct.
    """
    root = participants[0]
    ops: list[Op] = [SemInc(GATHER, at=root[0], by=1), AtomicBarrier()]
    if who == root:
        ops += [SemWait(GATHER, WaitCond.GE, gather_target), SemSet(GATHER, 0)]
        ops += [SemInc(_RELEASE[e], at=s, by=1) for s, e in participants]
        ops.append(AtomicBarrier())
    rel = _RELEASE[who[1]]
    ops += [SemWait(rel, WaitCond.GE, 1), SemSet(rel, 0)]
    return ops


def three_sections(name: str, gather_target: Callable[[int], int] = lambda p: p) -> Program:
    """Three sections on (0,0) and (1,0), a rendezvous after sections 0 and 1.

    Section 0 copies X to activation A on (0,0), section 1 copies A to activation B on (1,0), section 2 copies
    B to Y on (0,0); each is reader -> 2-page c (one tile per page) -> writer over 2 tiles. The root waits for
    ``gather_target(P)`` arrivals (P for the correct program).
    """
    s0, s1 = Site(0, 0), Site(1, 0)
    work = [(s0, "X", "A"), (s1, "A", "B"), (s0, "B", "Y")]  # (site, source, destination) per section
    tiles = 2
    buffers: list[Buffer] = []
    per_section: list[dict[tuple[Site, Engine], list[Op]]] = []
    for sec, (site, src, dst) in enumerate(work):
        b = len(buffers)
        buffers.append(Buffer(b, f"s{sec}_cb", site, cb=sum(x.site == site for x in buffers), page_tiles=1,
                              capacity=2, dtype="bf16", section=sec))
        at = Addr(0, (Term("k", 1),))
        per_section.append({
            (site, Engine.READER): [Loop("k", tiles, (Reserve(b, 1), ReadTiles(src, at, 1, b), ReadBarrier(),
                                                       Push(b, 1)))],
            (site, Engine.WRITER): [Loop("k", tiles, (Wait(b, 1), WriteTiles(b, dst, at, 1), WriteBarrier(),
                                                       Pop(b, 1)))],
        })
    participants = sorted({key for sec in per_section for key in sec}, key=lambda k: (k[0].y, k[0].x, k[1].value))
    sections = (SectionSpan("copy_x_to_a", True), SectionSpan("copy_a_to_b", True), SectionSpan("copy_b_to_y"))
    programs = []
    for who in participants:
        ops: list[Op] = []
        starts: list[int] = []
        for sec, span in enumerate(sections):
            starts.append(len(ops))
            ops += per_section[sec].get(who, [])
            if span.barrier_after:
                ops += rendezvous(participants, who, gather_target(len(participants)))
        programs.append(EngineProgram(who[0], who[1], tuple(ops), tuple(starts)))
    sem_sites = tuple(sorted({s for s, _ in participants}, key=lambda s: (s.y, s.x)))
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=tuple(_tensor(n, 32, 32 * tiles, r) for n, r in
                      (("X", Role.INPUT), ("A", Role.ACTIVATION), ("B", Role.ACTIVATION), ("Y", Role.OUTPUT))),
        buffers=tuple(buffers),
        semaphores=(
            Semaphore(GATHER, "gather", (participants[0][0],), 0, SemRole.RENDEZVOUS_GATHER),
            Semaphore(RELEASE_READER, "release_reader", sem_sites, 0, SemRole.RENDEZVOUS_RELEASE),
            Semaphore(RELEASE_WRITER, "release_writer", sem_sites, 0, SemRole.RENDEZVOUS_RELEASE),
        ),
        programs=tuple(programs),
        sections=sections,
        memory=pack_memory(WORMHOLE, buffers),
    )


def vendor_receiver(name: str = "vendor_receiver", ack: bool = True, reset_after_flag: bool = False) -> Program:
    """A sender on (0,0) multicasts 4 one-page blocks of X to (1,0) with the lockstep handshake of reference §2.5,
    Blackhole (flush between data and flag). The receiver runs the vendor's order — say ready, wait for VALID,
    then invalidate (tt-metal ``models/demos/deepseek_v3_b1/unified_kernels/mcast.hpp``): its flag starts INVALID,
    the launch is its first reset. The sender resets its ready counter after the data multicast, not right after
    its wait. Each site's writer drains its 2-page c_0.

    ``ack`` False: the receiver never says ready and the sender never waits (the sender may flag block k+1 before
    the receiver invalidated block k's flag: the reset wipes it). ``reset_after_flag``: the sender resets its ready
    counter after its flag (the receiver's next ready increment may land first: a lost update).
    """
    s0, s1 = Site(0, 0), Site(1, 0)
    blocks = 4
    ready, flag = 0, 1
    buffers = [Buffer(0, "c_0", s0, cb=0, page_tiles=1, capacity=2, dtype="bf16"),
               Buffer(1, "c_0", s1, cb=0, page_tiles=1, capacity=2, dtype="bf16")]
    at = Addr(0, (Term("k", 1),))
    handshake: list[Op] = [SemWait(ready, WaitCond.EQ, 1)] if ack else []
    send: list[Op] = [McastSend(0, 1, 0, 1), Flush(), McastSetValid(flag, 0, 1)]
    if ack:
        send = [*send, SemSet(ready, 0)] if reset_after_flag else [send[0], SemSet(ready, 0), *send[1:]]
    sender = (SemSet(flag, VALID),
              Loop("k", blocks, (Reserve(0, 1), ReadTiles("X", at, 1, 0), ReadBarrier(), *handshake, *send,
                                 Push(0, 1))),
              WriteBarrier())
    say_ready: list[Op] = [SemInc(ready, at=s0, by=1)] if ack else []
    receiver = (Loop("k", blocks, (Reserve(1, 1), *say_ready, SemWait(flag, WaitCond.EQ, VALID),
                                   SemSet(flag, INVALID), Push(1, 1))),
                AtomicBarrier())
    drain = (Loop("k", blocks, (Wait(0, 1), Pop(0, 1))),)
    return Program(
        name=name,
        target=BLACKHOLE,
        tensors=(_tensor("X", 32, 32 * blocks, Role.INPUT),),
        buffers=tuple(buffers),
        semaphores=(Semaphore(ready, "sender_ready", (s0,), 0, SemRole.MCAST_READY),
                    Semaphore(flag, "receiver_valid", (s0, s1), INVALID, SemRole.MCAST_VALID)),
        groups=(Group(0, sender=s0, rect=(1, 0, 1, 0)),),
        programs=(EngineProgram(s0, Engine.READER, sender), EngineProgram(s0, Engine.WRITER, drain),
                  EngineProgram(s1, Engine.READER, receiver),
                  EngineProgram(s1, Engine.WRITER, (Loop("k", blocks, (Wait(1, 1), Pop(1, 1))),))),
        memory=pack_memory(BLACKHOLE, buffers),
    )


def forwarder(name: str = "forwarder", flush_before_pop: bool = True) -> Program:
    """A forwarder on (0,0): the reader fills c_0 with 2-tile blocks of X (4 blocks, 4 pages: double-buffered);
    the writer waits for each block, multicasts it to (1,0) from its read pointer (``McastSend(front=True)``:
    ``noc_async_write_multicast`` from ``get_read_ptr``) with the reference handshake (ready counter, VALID flag),
    flushes (``noc_async_writes_flushed``: the block left its pages) and only then pops it (``cb_pop_front``), so
    the reader may refill those pages. Wormhole (data and flag stay ordered). (1,0)'s reader receives in the
    reference order, its compute drains.

    ``flush_before_pop`` False: the writer pops right after the flag multicast (variant u): the pop frees pages the
    multicast may still read, and the reader re-reserves and refills them while it does."""
    k, blk = 4, 2
    buffers = (Buffer(0, "c_0", S00, cb=0, page_tiles=1, capacity=4, dtype="bf16"),
               Buffer(1, "c_0", S10, cb=0, page_tiles=1, capacity=4, dtype="bf16"))
    ready, valid = 0, 1
    fill = (Loop("k", k, (Reserve(0, blk), ReadTiles("X", Addr(0, (Term("k", blk),)), blk, 0), ReadBarrier(),
                          Push(0, blk))),)
    body: list[Op] = [Wait(0, blk), SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0),
                      McastSend(0, blk, 0, 1, front=True), McastSetValid(valid, 0, 1)]
    body += [Flush(), Pop(0, blk)] if flush_before_pop else [Pop(0, blk)]
    forward = (SemSet(valid, VALID), Loop("k", k, tuple(body)), WriteBarrier())
    receiver = (Loop("k", k, tuple(_receiver_block(1, blk, valid, ready, S00))), AtomicBarrier())
    drain = (Loop("k", k, (Wait(1, blk), AcquireAcc(blk, "bf16"), Compute("copy", blk, (Operand(1, blk),)),
                           ReleaseAcc(), Pop(1, blk))),)
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32 * k * blk, Role.INPUT),),
        buffers=buffers,
        semaphores=(Semaphore(ready, "sender_sem", (S00, S10), INVALID, SemRole.MCAST_READY),
                    Semaphore(valid, "receiver_sem", (S00, S10), INVALID, SemRole.MCAST_VALID)),
        groups=(Group(0, sender=S00, rect=(1, 0, 1, 0)),),
        programs=(EngineProgram(S00, Engine.READER, fill), EngineProgram(S00, Engine.WRITER, forward),
                  EngineProgram(S10, Engine.READER, receiver), EngineProgram(S10, Engine.COMPUTE, drain)),
        memory=pack_memory(WORMHOLE, buffers),
    )


# ---------------------------------------------------------------------------------------------------------
# Protocols of issue 7 (docs/semantics.md "Protocols"): guards and trip-affine counts, growing thresholds and
# multicast increments, a flag from a constant VALID word, per-tile state versions across sections
# ---------------------------------------------------------------------------------------------------------


def peeled_k_loop(name: str = "peeled_k_loop", reload_guard: Guard = Guard.NOT_FIRST) -> Program:
    """A runtime-count K loop of ``t + 1`` blocks (``TripCount(t, 1, 1)``, t in [0, 3]) that spills and reloads its
    partial sum through c_24 the way the vendor matmul does (reference §2.5 compute): every block but the first
    reloads c_24 (``If(k, not_first)``), every block but the last packs into c_24 (``If(k, not_last)``), the last
    packs into c_16 (``If(k, last)``). ``reload_guard`` ``first`` is the broken variant (block 0 waits for a
    partial nothing packed)."""
    blocks = TripCount("t", 1, 1)
    c0, c1, c24, c16 = 0, 1, 2, 3
    buffers = (
        Buffer(c0, "c_0", S00, cb=0, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c1, "c_1", S00, cb=1, page_tiles=1, capacity=2, dtype="bf16"),
        Buffer(c24, "c_24", S00, cb=24, page_tiles=1, capacity=1, dtype="bf16"),
        Buffer(c16, "c_16", S00, cb=16, page_tiles=1, capacity=1, dtype="bf16"),
    )
    at_k = Addr(0, (Term("k", 1),))
    reader: tuple[Op, ...] = (
        Loop("k", blocks, (Reserve(c0, 1), Reserve(c1, 1), ReadTiles("A", at_k, 1, c0), ReadTiles("B", at_k, 1, c1),
                           ReadBarrier(), Push(c0, 1), Push(c1, 1))),
    )
    compute: tuple[Op, ...] = (
        Loop("k", blocks, (
            AcquireAcc(1, "bf16"),
            Wait(c0, 1),
            Wait(c1, 1),
            If("k", reload_guard, (Wait(c24, 1), Compute("copy", 1, (Operand(c24, 1),)), Pop(c24, 1))),
            Compute("matmul", 1, (Operand(c0, 1), Operand(c1, 1))),
            Pop(c0, 1),
            Pop(c1, 1),
            If("k", Guard.NOT_LAST, (Reserve(c24, 1), PackAcc(c24, 1), Push(c24, 1))),
            If("k", Guard.LAST, (Reserve(c16, 1), PackAcc(c16, 1), Push(c16, 1))),
            ReleaseAcc(),
        )),
    )
    writer: tuple[Op, ...] = (Wait(c16, 1), WriteTiles(c16, "C", Addr(0), 1), WriteBarrier(), Pop(c16, 1))
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("A", 32, 32 * 4, Role.INPUT), _tensor("B", 32 * 4, 32, Role.PARAM),
                 _tensor("C", 32, 32, Role.OUTPUT)),
        buffers=buffers,
        trips=(Trip("t", 3),),
        programs=(
            EngineProgram(S00, Engine.READER, reader),
            EngineProgram(S00, Engine.COMPUTE, compute),
            EngineProgram(S00, Engine.WRITER, writer),
        ),
        memory=pack_memory(WORMHOLE, buffers),
    )


def counter_release(name: str = "counter_release", release_by: int = 1) -> Program:
    """Three rounds of a gather/release on monotone counters with growing thresholds, the release multicast as one
    atomic increment per destination (noc_semaphore_inc_multicast). Participants (1,0) and (2,0) each increment
    the root's ``gather`` word and wait ``release >= k + 1`` (noc_semaphore_wait_min(sem, ++expected)); the root
    (0,0) waits ``gather >= 2k + 2`` and multicasts ``+release_by`` to both. After the loop every owner waits for
    the final total and resets its word (the program can run again). ``release_by`` 2 is the broken variant: the
    participants' final ``== 3`` wait is overshot (6), so it hangs."""
    root, p1, p2 = S00, Site(1, 0), Site(2, 0)
    gather, release = 0, 1
    rounds = 3
    root_ops: tuple[Op, ...] = (
        Loop("k", rounds, (SemWait(gather, WaitCond.GE, 2, (Term("k", 2),)), SemIncMcast(release, 0, 2, release_by))),
        AtomicBarrier(),
        SemWait(gather, WaitCond.EQ, 2 * rounds),
        SemSet(gather, 0),
    )
    part: tuple[Op, ...] = (
        Loop("k", rounds, (SemInc(gather, at=root, by=1), SemWait(release, WaitCond.GE, 1, (Term("k", 1),)))),
        AtomicBarrier(),
        SemWait(release, WaitCond.EQ, rounds),
        SemSet(release, 0),
    )
    return Program(
        name=name,
        target=WORMHOLE,
        semaphores=(Semaphore(gather, "gather", (root,), 0, SemRole.COUNTER),
                    Semaphore(release, "release", (p1, p2), 0, SemRole.COUNTER)),
        groups=(Group(0, sender=root, rect=(1, 0, 2, 0)),),
        programs=(EngineProgram(root, Engine.READER, root_ops), EngineProgram(p1, Engine.READER, part),
                  EngineProgram(p2, Engine.READER, part)),
    )


def valid_source(name: str = "valid_source", reset_first: bool = True) -> Program:
    """A multicast handshake whose flag is written from a constant VALID word (noc_semaphore_set_multicast(src,
    dst, n) with ``src`` a semaphore initialised to VALID and never written): (0,0) reads two tiles of X one by
    one and multicasts each to (1,0) and (2,0) once both are ready; each receiver invalidates its flag, then
    increments the sender's ready counter, then waits for VALID (reference §2.5). Every site writes its copy to
    its own output. ``reset_first`` False is the broken variant: a receiver increments before it invalidates, so
    the sender's VALID can land first and be wiped."""
    sender, r1, r2 = S00, Site(1, 0), Site(2, 0)
    ready, flag, valid = 0, 1, 2
    tiles = 2
    sites = (sender, r1, r2)
    buffers = tuple(Buffer(i, "c_0", s, cb=0, page_tiles=1, capacity=2, dtype="bf16") for i, s in enumerate(sites))
    at_k = Addr(0, (Term("k", 1),))
    send: tuple[Op, ...] = (
        Loop("k", tiles, (
            Reserve(0, 1), ReadTiles("X", at_k, 1, 0), ReadBarrier(),
            SemWait(ready, WaitCond.EQ, 2), SemSet(ready, 0),
            McastSend(0, 1, 0, 2), McastSetValid(flag, 0, 2, src=valid), Flush(),
            Push(0, 1),
        )),
        WriteBarrier(),
    )

    def receive(b: int) -> tuple[Op, ...]:
        arm: list[Op] = [SemSet(flag, INVALID), SemInc(ready, at=sender, by=1)]
        if not reset_first:
            arm.reverse()
        return (Loop("k", tiles, (Reserve(b, 1), *arm, SemWait(flag, WaitCond.EQ, VALID), Push(b, 1))),
                AtomicBarrier())

    def drain(b: int, out: str) -> tuple[Op, ...]:
        return (Loop("k", tiles, (Wait(b, 1), WriteTiles(b, out, at_k, 1), WriteBarrier(), Pop(b, 1))),)

    programs = [EngineProgram(sender, Engine.READER, send), EngineProgram(sender, Engine.WRITER, drain(0, "Y0"))]
    for i, s in enumerate((r1, r2), start=1):
        programs += [EngineProgram(s, Engine.READER, receive(i)), EngineProgram(s, Engine.WRITER, drain(i, f"Y{i}"))]
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32 * tiles, Role.INPUT),
                 *(_tensor(f"Y{i}", 32, 32 * tiles, Role.OUTPUT) for i in range(3))),
        buffers=buffers,
        semaphores=(Semaphore(ready, "ready", (sender,), 0, SemRole.MCAST_READY),
                    Semaphore(flag, "flag", sites, INVALID, SemRole.MCAST_VALID),
                    Semaphore(valid, "valid_const", (sender,), VALID, SemRole.MCAST_VALID)),
        groups=(Group(0, sender=sender, rect=(1, 0, 2, 0)),),
        programs=tuple(programs),
        memory=pack_memory(WORMHOLE, buffers),
    )


def remote_write(name: str = "remote_write", barrier_first: bool = True) -> Program:
    """A unicast remote write of buffer pages announced by an increment (docs/semantics.md, "Remote writes to an
    explicit place"): (1,0) reads a tile of X into its c_1 and writes it into the c_1 of (0,0) at the same address
    (``noc_async_write`` to ``get_noc_addr(x, y, get_write_ptr(c_1))``: a ``McastSend`` on the one-core group of
    (0,0)), stores its tile count into a mailbox word of (0,0) (``noc_inline_dw_write``: an ``InlineWrite``), waits
    for both to land (``noc_async_write_barrier``) and only then increments (0,0)'s ``ready`` word; (0,0) reserves its
    c_1, waits for the increment, pushes the page and writes it out. ``barrier_first`` False is the broken variant of
    tt-metal PR #43507's kind: the increment is issued before the write barrier, so it may land first and (0,0)
    publish a page the write has not filled."""
    recv, sender = S00, Site(1, 0)
    buffers = (Buffer(0, "c_1", recv, 1, 1, 2, "bf16"), Buffer(1, "c_1", sender, 1, 1, 2, "bf16"))
    ready, mailbox = 0, 1
    announce: list[Op] = [WriteBarrier(), SemInc(ready, recv, 1), AtomicBarrier()]
    if not barrier_first:
        announce = [SemInc(ready, recv, 1), AtomicBarrier(), WriteBarrier()]
    send = (Reserve(1, 1), ReadTiles("X", Addr(0), 1, 1), ReadBarrier(),
            McastSend(1, 1, 0, 1), InlineWrite(mailbox, recv, 1), *announce, Push(1, 1))
    receive = (Reserve(0, 1), SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), Push(0, 1))
    drain = (Wait(0, 1), WriteTiles(0, "Y", Addr(0), 1), WriteBarrier(), Pop(0, 1))
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("X", 32, 32, Role.INPUT), _tensor("Y", 32, 32, Role.OUTPUT)),
        buffers=buffers,
        semaphores=(Semaphore(ready, "ready", (recv,), 0), Semaphore(mailbox, "tiles_sent", (recv,), 0)),
        groups=(Group(0, sender=sender, rect=(0, 0, 0, 0)),),
        programs=(EngineProgram(recv, Engine.READER, receive), EngineProgram(recv, Engine.WRITER, drain),
                  EngineProgram(sender, Engine.READER, send)),
        memory=pack_memory(WORMHOLE, buffers),
    )


def local_up(name: str = "local_up", remote: bool = False) -> Program:
    """A count kept by a non-atomic read-modify-write (docs/semantics.md, "Non-atomic read-modify-write"): argmax's
    secondary data-movement engine hands each half of its work to the primary with ``partial_ready_sem.up(1)``
    (ttnn 0.81.1 ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp:443``), on Wormhole
    ``*p += 1`` (``SemRmw``). (0,0)'s writer ups its own word three times; its reader waits for 3 and resets it.
    Nothing else writes the word while an up runs (the reset follows the wait for the last store): proved.
    ``remote``: (1,0) also increments the word over the NoC and the reader waits for 4; the increment may land
    between an up's load and its store and be lost (``sem-rmw-race``), and the reader hang."""
    ready = 0
    writer = (Loop("k", 3, (SemRmw(ready, 1),)),)
    reader = (SemWait(ready, WaitCond.GE, 4 if remote else 3), SemSet(ready, 0))
    programs = [EngineProgram(S00, Engine.READER, reader), EngineProgram(S00, Engine.WRITER, writer)]
    if remote:
        programs.append(EngineProgram(Site(1, 0), Engine.READER, (SemInc(ready, S00, 1), AtomicBarrier())))
    return Program(name=name, target=WORMHOLE, semaphores=(Semaphore(ready, "partial_ready", (S00,), 0),),
                   programs=tuple(programs))


def all_to_all_read(name: str = "all_to_all_read", wait_ready: bool = True) -> Program:
    """The all-to-all gather of the sharded layernorm in miniature (docs/semantics.md, "Remote reads";
    ``reader_mcast_*_sharded_ln.cpp``): each of two cores fills its partial (one page of c_0), tells the other
    it is there, waits for the other's word, reads both partials — its own and the other's, each from the owner's c_0
    at its own read pointer of c_0 (``RemoteRead``) — into c_1, waits for the reads to land, tells the other it is done
    and pops its partial only once the other said so; compute combines c_1. ``wait_ready`` False is the broken variant:
    a core reads before it waits for the other's word, so the page it reads may not be published yet."""
    a, b = S00, Site(1, 0)
    ready, done = 0, 1
    bufs: list[Buffer] = []
    programs = []
    for site in (a, b):
        other = b if site == a else a
        part, ext = len(bufs), len(bufs) + 1
        bufs += [Buffer(part, "c_0", site, 0, 1, 1, "bf16"), Buffer(ext, "c_1", site, 1, 1, 2, "bf16")]
        fill = (Reserve(part, 1), FillTiles(part, 1, "partial", drain=True), Push(part, 1), SemInc(ready, other, 1),
                AtomicBarrier())
        wait: tuple[Op, ...] = (SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0))
        reads = (Reserve(ext, 2), RemoteRead(part, a, 1, ext), RemoteRead(part, b, 1, ext), ReadBarrier())
        gather = (Wait(part, 1), *(wait + reads if wait_ready else reads + wait), Push(ext, 2),
                  SemInc(done, other, 1), AtomicBarrier(), SemWait(done, WaitCond.EQ, 1), SemSet(done, 0),
                  Pop(part, 1))
        combine = (Wait(ext, 2), AcquireAcc(1, "bf16"), Compute("add", 1, (Operand(ext, 2),)), ReleaseAcc(),
                   Pop(ext, 2))
        programs += [EngineProgram(site, Engine.READER, fill), EngineProgram(site, Engine.WRITER, gather),
                     EngineProgram(site, Engine.COMPUTE, combine)]
    return Program(
        name=name,
        target=WORMHOLE,
        buffers=tuple(bufs),
        semaphores=(Semaphore(ready, "ready", (a, b), 0), Semaphore(done, "done", (a, b), 0)),
        programs=tuple(programs),
        memory=pack_memory(WORMHOLE, bufs),
    )


def kv_cache_update(name: str = "kv_cache_update", rendezvous: bool = True) -> Program:
    """The KV-cache update of one decode step followed by attention over ``[0, p]`` (DESIGN §3 scatter; issue 7):
    section 0 on (0,0) copies the new tile ``k_new`` into row ``pos`` of the state ``kv`` (an indirect address
    ``Dynamic(pos, 0, 7)``: the runtime position); section 1 reads rows ``[0, p]`` of ``kv`` (a loop of ``p + 1``
    rows, trip ``p`` in [0, 7]) and writes them to ``out``. Row ``pos`` is read at its new version, the others at
    their old one: per-tile versions by section. The rendezvous after section 0 (each engine arrives at the reader's
    gather word; the reader releases both) orders the write before the read; ``rendezvous`` False is the broken
    variant, where the read can overtake the write."""
    c0, c1 = 0, 1
    gather, rel_reader, rel_writer = 0, 1, 2
    rows = 8
    buffers = (Buffer(c0, "c_new", S00, cb=0, page_tiles=1, capacity=1, dtype="bf16", section=0),
               Buffer(c1, "c_kv", S00, cb=1, page_tiles=1, capacity=2, dtype="bf16", section=1))
    at_r = Addr(0, (Term("r", 1),))
    span = TripCount("p", 1, 1)
    reader0: list[Op] = [Reserve(c0, 1), ReadTiles("k_new", Addr(0), 1, c0), ReadBarrier(), Push(c0, 1)]
    writer0: list[Op] = [Wait(c0, 1), WriteTiles(c0, "kv", Addr(0, (), Dynamic("pos", 0, rows - 1)), 1), WriteBarrier(),
                         Pop(c0, 1)]
    if rendezvous:
        reader0 += [SemInc(gather, at=S00, by=1), AtomicBarrier(), SemWait(gather, WaitCond.GE, 2), SemSet(gather, 0),
                    SemInc(rel_reader, at=S00, by=1), SemInc(rel_writer, at=S00, by=1), AtomicBarrier(),
                    SemWait(rel_reader, WaitCond.GE, 1), SemSet(rel_reader, 0)]
        writer0 += [SemInc(gather, at=S00, by=1), AtomicBarrier(), SemWait(rel_writer, WaitCond.GE, 1),
                    SemSet(rel_writer, 0)]
    reader1: list[Op] = [Loop("r", span, (Reserve(c1, 1), ReadTiles("kv", at_r, 1, c1), ReadBarrier(), Push(c1, 1)))]
    writer1: list[Op] = [Loop("r", span, (Wait(c1, 1), WriteTiles(c1, "out", at_r, 1), WriteBarrier(), Pop(c1, 1)))]
    sections = (SectionSpan("kv_update", rendezvous), SectionSpan("attend"))
    semaphores = (Semaphore(gather, "gather", (S00,), 0, SemRole.RENDEZVOUS_GATHER),
                  Semaphore(rel_reader, "release_reader", (S00,), 0, SemRole.RENDEZVOUS_RELEASE),
                  Semaphore(rel_writer, "release_writer", (S00,), 0, SemRole.RENDEZVOUS_RELEASE)) if rendezvous else ()
    return Program(
        name=name,
        target=WORMHOLE,
        tensors=(_tensor("k_new", 32, 32, Role.INPUT), _tensor("kv", 32 * rows, 32, Role.STATE),
                 # Only rows [0, p] of out are written: a tensor written partially by design is a state, not an
                 # output (output-unwritten asks every tile of an output for every trip value).
                 _tensor("out", 32 * rows, 32, Role.STATE)),
        buffers=buffers,
        semaphores=semaphores,
        trips=(Trip("p", rows - 1),),
        programs=(EngineProgram(S00, Engine.READER, (*reader0, *reader1), (0, len(reader0))),
                  EngineProgram(S00, Engine.WRITER, (*writer0, *writer1), (0, len(writer0)))),
        sections=sections,
        memory=pack_memory(WORMHOLE, buffers),
    )


# ---------------------------------------------------------------------------------------------------------
# The catalogue and the writer
# ---------------------------------------------------------------------------------------------------------


def _vendor() -> dict[str, Program]:
    """The vendor transcriptions of ``examples/vendor/build.py``, keyed by their path relative to ``examples/``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("vendor_build", HERE / "vendor" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {f"vendor/{rel}": prog for rel, prog in mod.build_vendor().items()}


def build_all() -> dict[str, Program]:
    """Every shipped example, keyed by its path relative to ``examples/``."""
    return _vendor() | {
        "matmul_reuse_mcast_wormhole.json": matmul_reuse_mcast("matmul_reuse_mcast_wormhole", WORMHOLE, "none"),
        "matmul_reuse_mcast_blackhole.json": matmul_reuse_mcast("matmul_reuse_mcast_blackhole", BLACKHOLE,
                                                                "between"),
        "pipeline_small.json": pipeline_small(),
        "three_sections.json": three_sections("three_sections"),
        "broken/a_reserve_over_capacity.json": reserve_over_capacity(),
        "broken/b_ring_straddle.json": ring_straddle(),
        "broken/c_trip_sender.json": matmul_reuse_mcast("c_trip_sender", WORMHOLE, "none", in0_trip=Trip("t", 8)),
        # Single-buffered, so the sender refills the page its multicast reads; Blackhole's vendor kernels flush there.
        "broken/d_blackhole_no_flush.json": mcast_pair("d_blackhole_no_flush", pages=2, target=BLACKHOLE),
        "broken/e_read_no_barrier.json": read_no_barrier(),
        # c_1 starts one page (2048 B) into c_0's 4096 B.
        "broken/f_memory_overlap.json": pipeline_small("f_memory_overlap", c1_offset=WORMHOLE.reserved_base + 2048),
        "broken/g_rendezvous_short.json": three_sections("g_rendezvous_short", lambda p: p - 1),
        "mcast_pair.json": mcast_pair(),
        "broken/h_writer_pops_before_flush.json": writer_pops_before_flush(),
        "broken/i_compute_before_wait.json": compute_before_wait(),
        "broken/j_no_acquire.json": no_acquire(),
        "broken/k_output_unwritten.json": output_unwritten(),
        "broken/l_push_unfilled.json": push_unfilled(),
        "broken/m_alias_pack_clobber.json": alias_pack_clobber(),
        "broken/n_mcast_before_read_barrier.json": mcast_pair("n_mcast_before_read_barrier", barrier_after_send=True),
        "broken/o_mcast_slot_reused.json": mcast_pair("o_mcast_slot_reused", pages=2),
        "broken/p_flag_source_set_by_compute.json": mcast_pair("p_flag_source_set_by_compute",
                                                                source_set_by_compute=True),
        "peeled_k_loop.json": peeled_k_loop(),
        "counter_release.json": counter_release(),
        "valid_source.json": valid_source(),
        "kv_cache_update.json": kv_cache_update(),
        "broken/q_peel_reload_first.json": peeled_k_loop("q_peel_reload_first", Guard.FIRST),
        "broken/r_release_overshoot.json": counter_release("r_release_overshoot", release_by=2),
        "broken/s_flag_reset_late.json": valid_source("s_flag_reset_late", reset_first=False),
        "broken/t_kv_no_rendezvous.json": kv_cache_update("t_kv_no_rendezvous", rendezvous=False),
        "vendor_receiver.json": vendor_receiver(),
        "broken/v1_vendor_receiver_no_ack.json": vendor_receiver("v1_vendor_receiver_no_ack", ack=False),
        "broken/v2_ready_reset_after_flag.json": vendor_receiver("v2_ready_reset_after_flag", reset_after_flag=True),
        "forwarder.json": forwarder(),
        "broken/u_forwarder_pops_early.json": forwarder("u_forwarder_pops_early", flush_before_pop=False),
        "broken/w_acc_fp32_overflow.json": acc_fp32_overflow(),
        "broken/x_acc_overrun.json": acc_overrun(),
        "reduce_scaler.json": reduce_scaler(),
        "broken/y_scaler_push_unfilled.json": reduce_scaler("y_scaler_push_unfilled", pushed=2),
        "remote_write.json": remote_write(),
        "all_to_all_read.json": all_to_all_read(),
        "broken/za_remote_read_unpublished.json": all_to_all_read("za_remote_read_unpublished", wait_ready=False),
        "broken/z_remote_write_inc_first.json": remote_write("z_remote_write_inc_first", barrier_first=False),
        "local_copy.json": local_copy(),
        "broken/zl_copy_before_wait.json": local_copy("zl_copy_before_wait", wait_first=False),
        "broken/zm_copy_undrained.json": local_copy("zm_copy_undrained", drain=False),
        "scratch_slices.json": scratch_slices(),
        "broken/zn_scratch_load_unlanded.json": scratch_slices("zn_scratch_load_unlanded", barrier_first=False),
        "local_up.json": local_up(),
        "broken/zo_local_up_lost_increment.json": local_up("zo_local_up_lost_increment", remote=True),
    }


def write_all(out_dir: Path) -> list[Path]:
    """Check every example (structurally valid, lossless round trip) and write it under ``out_dir``.

    Returns the written paths; raises ``AssertionError`` naming the example that fails a check.
    """
    written = []
    for rel, prog in build_all().items():
        problems = validate(prog)
        assert not problems, f"{rel}: {[str(v) for v in problems]}"
        text = dumps(prog)
        assert loads(text) == prog, f"{rel}: JSON round trip is lossy"
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=HERE, help="output directory (default: examples/)")
    args = ap.parse_args(argv)
    for p in write_all(args.out):
        sys.stdout.write(f"wrote {p}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
