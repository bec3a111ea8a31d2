"""The vendor transcriptions (``examples/vendor/*.json``, ``examples/vendor/broken/*.json``): kernels transcribed op
for op from the vendor's source as the vendor wrote it, every op carrying the kernel file and line it comes from
(the program's source table, ``verispatial/ir/source.py``), so a counterexample points at the vendor line.

``examples/build_examples.py`` writes them with the other examples (deterministic; ``tests/test_examples_build.py``
checks the committed files byte for byte, ``tests/test_vendor_examples.py`` their verdicts). What each file is, the
kernels it follows and what the format cannot say yet are in ``examples/vendor/README.md``.

The kernels are those of the ttnn 0.81.1 wheel (``ttnn/cpp/ttnn/operations/...``, cited repository-relative to
``ttnn/cpp``), which is not kept here. TT-Lang's multinode matmul is read from the tt-lang-sim 1.1.6 wheel's tutorial
by the TT-Lang front end (``multinode_matmul`` below), since the front end is exact for it; without the tutorial the
committed file is kept as it is.

Units: pages of the named buffer (one tile each), tile addresses row-major tile indices, bytes of local memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import attrs

from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Compute,
    CopyTiles,
    Engine,
    EngineProgram,
    FillTiles,
    Flush,
    Group,
    Guard,
    If,
    InlineWrite,
    InPlace,
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
    Semaphore,
    SemInc,
    SemRole,
    SemSet,
    SemWait,
    Shard,
    Site,
    Tensor,
    Term,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import loads
from verispatial.ir.source import OpPath, SourceLoc, Sources

HERE = Path(__file__).resolve().parent

#: Kernel sources, relative to the wheel's ``ttnn/ttnn/cpp`` (the path tt-metal's program factories name them by).
OPS = "ttnn/operations"
BINARY_READER = f"{OPS}/eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"
BINARY_COMPUTE = f"{OPS}/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp"
UNARY_WRITER = f"{OPS}/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
MOVE_OVERLAP = f"{OPS}/data_movement/move/device/kernels/dataflow/move_interleaved_with_overlap.cpp"
SAMPLING_READER = f"{OPS}/reduction/sampling/device/kernels/dataflow/reader_values_indices_tensor.cpp"
SAMPLING_COMPUTE = f"{OPS}/reduction/sampling/device/kernels/compute/sampling.cpp"
ARGMAX = f"{OPS}/reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp"
SORT = f"{OPS}/data_movement/sort/device/kernels/dataflow"
SORT_EXCHANGE = f"{SORT}/cross_core_data_exchange_common.hpp"
SORT_COMPUTE = f"{OPS}/data_movement/sort/device/kernels/compute/sort_cross_core_data_exchange.cpp"
SORT_COMMON = f"{OPS}/data_movement/sort/device/kernels/compute/sort_common.hpp"
SOFTMAX = f"{OPS}/normalization/softmax/device/kernels/attention"
SOFTMAX_READER = f"{SOFTMAX}/dataflow/reader_unary_interleaved_sm.cpp"
SOFTMAX_COMPUTE = f"{SOFTMAX}/compute/softmax.cpp"
SOFTMAX_WRITER = f"{SOFTMAX}/dataflow/writer_unary_interleaved_start_id_blocked_sm.cpp"
#: deepseek_prefill's dispatch, as the ttnn 0.72.0 wheel ships it (``OLDER_WHEEL``): tt-metal PR #43507 added the
#: write barrier at line 100 of the idle cores' writer; 0.81.1 rewrote the op (``dispatch/.../writer_worker_dispatch.cpp``).
DISPATCH = f"{OPS}/experimental/deepseek_prefill/dispatch/device/kernels/dataflow"
DISPATCH_IDLE = f"{DISPATCH}/writer_untilize_dispatch.cpp"
DISPATCH_SENDER = f"{DISPATCH}/reader_dispatch.cpp"
#: Kernel files cited from an older wheel than the pinned one (file -> ttnn release).
OLDER_WHEEL: dict[str, str] = {DISPATCH_IDLE: "0.72.0", DISPATCH_SENDER: "0.72.0"}
#: The kernel helpers softmax's kernels expand to (``dataflow_kernel_lib`` / ``compute_kernel_lib``).
REDUCE_DATAFLOW = "ttnn/kernel_lib/reduce_helpers_dataflow.inl"
REDUCE_COMPUTE = "ttnn/kernel_lib/reduce_helpers_compute.inl"
CHAIN = "ttnn/kernel_lib/eltwise/core/chain.inl"
#: The sharded layernorm (ttnn.layer_norm on a block-sharded input), its kernels as the program factory names them.
LN = f"{OPS}/normalization/layernorm/device/kernels"
LN_SENDER = f"{LN}/dataflow/reader_mcast_sender_unary_sharded_ln.cpp"
LN_RECEIVER = f"{LN}/dataflow/reader_mcast_receiver_unary_sharded_ln.cpp"
LN_COMPUTE = f"{LN}/compute/layernorm_sharded.cpp"
BCAST_SCALAR = "ttnn/kernel/dataflow/generate_bcast_scalar_metal2.hpp"
#: The TT-Lang tutorial, relative to the unpacked tt-lang-sim 1.1.6 wheel.
TTLANG_MATMUL = "ttl/tutorials/matmul/step_3_multinode.py"


# ---------------------------------------------------------------------------------------------------------
# Transcription: ops with their vendor line
# ---------------------------------------------------------------------------------------------------------


@attrs.frozen
class Line:
    """One transcribed statement: ``op`` (a leaf op, or a ``Loop`` or ``If`` whose body is ``body``) read from
    ``file:line``, whose statement is ``text`` (one line, as the vendor wrote it)."""

    file: str
    line: int
    text: str
    op: Op
    body: tuple[Line, ...] = ()


class Kernel:
    """Statements of one kernel file: ``k(line, text, op)`` a leaf, ``k.loop(line, text, var, count, *body)`` a
    loop."""

    def __init__(self, file: str) -> None:
        self.file = file

    def __call__(self, line: int, text: str, op: Op) -> Line:
        return Line(self.file, line, text, op)

    def loop(self, line: int, text: str, var: str, count: int, *body: Line) -> Line:
        return Line(self.file, line, text, Loop(var, count, ()), tuple(body))

    def guard(self, line: int, text: str, var: str, when: Guard, *body: Line) -> Line:
        """An ``if`` on the index of enclosing loop ``var`` (``if (k > 0)``: ``Guard.NOT_FIRST``)."""
        return Line(self.file, line, text, If(var, when, ()), tuple(body))


def lower(lines: tuple[Line, ...], prefix: OpPath = ()) -> tuple[tuple[Op, ...], Sources]:
    """The op list of ``lines`` and its source table (op path -> location)."""
    ops: list[Op] = []
    table: list[tuple[OpPath, SourceLoc]] = []
    for i, ln in enumerate(lines):
        path = (*prefix, i)
        op = ln.op
        if isinstance(op, (Loop, If)):
            body, inner = lower(ln.body, path)
            op = attrs.evolve(op, body=body)
            table.append((path, SourceLoc(ln.file, ln.line, 0, ln.text)))
            table.extend(inner)
        else:
            table.append((path, SourceLoc(ln.file, ln.line, 0, ln.text)))
        ops.append(op)
    return tuple(ops), tuple(table)


def engine(site: Site, eng: Engine, *lines: Line) -> EngineProgram:
    ops, sources = lower(tuple(lines))
    return EngineProgram(site, eng, ops, (), sources)


def pack(buffers: tuple[Buffer, ...]) -> tuple[BufferAt, ...]:
    """Each site's buffers one after another from the reserved base, in id order (the allocator's order of
    ``CreateCircularBuffer`` calls), ``capacity`` one-tile bf16 pages each."""
    nxt: dict[Site, int] = {}
    out = []
    for b in buffers:
        at = nxt.get(b.site, WORMHOLE.reserved_base)
        size = b.capacity * b.page_tiles * WORMHOLE.tile_bytes[b.dtype]
        out.append(BufferAt(b.id, at, size))
        nxt[b.site] = at + size
    return tuple(out)


def _tensor(name: str, tiles: int, role: Role) -> Tensor:
    return Tensor(name, (32, 32 * tiles), "bf16", role)


# ---------------------------------------------------------------------------------------------------------
# 1. The interleaved eltwise binary (ttnn.add)
# ---------------------------------------------------------------------------------------------------------


def eltwise_binary(name: str = "eltwise_binary", cores: int = 2, tiles_per_core: int = 4) -> Program:
    """``ttnn.add`` of two interleaved bf16 tensors on ``cores`` cores of ``tiles_per_core`` tiles, as ttnn's
    element-wise multi-core program factory sets it up for interleaved operands
    (``eltwise/binary/device/element_wise_multi_core_program_factory.cpp``, not in the wheel): ``split_work_to_cores``
    gives each core ``num_tiles`` tiles from ``start_id``; c_0 and c_1 hold ``2 * max_block_size`` = 2 one-tile
    pages, the output c_2 2 pages; the compute kernel runs ``per_core_block_cnt = num_tiles`` blocks of
    ``per_core_block_size = 1``; ``block_or_width_sharded`` is false, so the reader takes its interleaved branch
    (line 94). The compute kernel is built with ``ELTWISE_OP=add_tiles`` and neither ``SFPU_OP_INIT_PRE_IN*_0`` nor
    ``PACK_RELU``: ``dfb_inp0`` is ``dfb_in0`` (line 24). ``tile_regs_commit``/``tile_regs_wait`` (the math/pack
    handshake inside the compute engine) have no op: the accumulator is held from acquire to release."""
    r, c, w = Kernel(BINARY_READER), Kernel(BINARY_COMPUTE), Kernel(UNARY_WRITER)
    n = tiles_per_core
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    for i in range(cores):
        site = Site(i, 0)
        c0, c1, c2 = 3 * i, 3 * i + 1, 3 * i + 2
        buffers += [Buffer(c0, "c_0", site, 0, 1, 2, "bf16"), Buffer(c1, "c_1", site, 1, 1, 2, "bf16"),
                    Buffer(c2, "c_2", site, 2, 1, 2, "bf16")]
        at = Addr(i * n, (Term("tile_id", 1),))
        programs.append(engine(site, Engine.READER, r.loop(
            94, "for (uint32_t tile_id = start_id; tile_id < start_id + num_tiles; tile_id++) {", "tile_id", n,
            r(96, "dfb0.reserve_back(onetile);", Reserve(c0, 1)),
            r(97, "noc.async_read(s0, dfb0, src0_tile_bytes, {.page_id = tile_id}, {.offset_bytes = 0});",
              ReadTiles("a", at, 1, c0)),
            r(101, "dfb1.reserve_back(onetile);", Reserve(c1, 1)),
            r(102, "noc.async_read(s1, dfb1, src1_tile_bytes, {.page_id = tile_id}, {.offset_bytes = 0});",
              ReadTiles("b", at, 1, c1)),
            r(105, "noc.async_read_barrier();", ReadBarrier()),
            r(108, "dfb0.push_back(onetile);", Push(c0, 1)),
            r(112, "dfb1.push_back(onetile);", Push(c1, 1)),
        )))
        programs.append(engine(site, Engine.COMPUTE, c.loop(
            45, "for (uint32_t block = 0; block < per_core_block_cnt; ++block) {", "block", n,
            c(109, "dfb_inp0.wait_front(per_core_block_size);", Wait(c0, 1)),
            c(110, "dfb_inp1.wait_front(per_core_block_size);", Wait(c1, 1)),
            c(111, "dfb_out0.reserve_back(per_core_block_size);", Reserve(c2, 1)),
            c(117, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
            c.loop(118, "for (uint32_t i = 0; i < per_core_block_size; ++i) {", "i", 1,
                   c(119, "ELTWISE_OP(dfb_inp0.get_id(), dfb_inp1.get_id(), i, i, i);",
                     Compute("add", 1, (Operand(c0, 1), Operand(c1, 1))))),
            c.loop(133, "for (uint32_t i = 0; i < per_core_block_size; ++i) {", "i", 1,
                   c(134, "pack_tile(i, dfb_out0.get_id());", PackAcc(c2, 1))),
            c(136, "tile_regs_release();", ReleaseAcc()),
            c(138, "dfb_inp0.pop_front(per_core_block_size);", Pop(c0, 1)),
            c(139, "dfb_inp1.pop_front(per_core_block_size);", Pop(c1, 1)),
            c(140, "dfb_out0.push_back(per_core_block_size);", Push(c2, 1)),
        )))
        programs.append(engine(
            site, Engine.WRITER,
            w.loop(49, "for (uint32_t i = start_id; i < end_id; ++i) {", "i", n,
                   w(51, "dfb.wait_front(onepage);", Wait(c2, 1)),
                   w(52, "noc.async_write(dfb, s, page_bytes, {}, {.page_id = i});",
                     WriteTiles(c2, "out", Addr(i * n, (Term("i", 1),)), 1)),
                   w(53, "noc.async_writes_flushed();", Flush()),
                   w(54, "dfb.pop_front(onepage);", Pop(c2, 1))),
            w(56, "noc.async_write_barrier();", WriteBarrier()),
        ))
    bufs = tuple(buffers)
    return Program(name, WORMHOLE,
                   tensors=tuple(_tensor(t, cores * n, role) for t, role in
                                 (("a", Role.INPUT), ("b", Role.INPUT), ("out", Role.OUTPUT))),
                   buffers=bufs, programs=tuple(programs), memory=pack(bufs))


# ---------------------------------------------------------------------------------------------------------
# 1b. The sharded eltwise binary: every operand on its L1 shard (globally allocated circular buffers)
# ---------------------------------------------------------------------------------------------------------


def eltwise_binary_sharded(name: str = "eltwise_binary_sharded", cores: int = 2, block: int = 6, blocks: int = 2,
                           out_rows: int = 2, release: str = "0.81.1") -> Program:
    """``ttnn.add`` of two block-sharded bf16 tensors into a block-sharded output, on a grid of ``cores`` x 1 cores,
    as ttnn's element-wise multi-core program factory sets up sharded operands
    (``eltwise/binary/device/element_wise_multi_core_program_factory.cpp``, not in the wheel): each tensor is 2 tile
    rows x ``cores * block * blocks / 2`` tile columns, and core ``i`` holds the shard of both rows and columns
    ``[w * i, w * (i + 1))`` (``w = block * blocks / 2``): the shard's tile ``j`` is tensor tile
    ``w * i + (j // w) * W + j % w`` (``Shard(start, width=w, stride=W)``, ``W`` the tensor's width in tiles).
    ``num_tiles_per_shard`` = ``block * blocks`` tiles; c_0, c_1 and the output c_2 are sized to it and placed on
    their tensors' shards (``set_globally_allocated_address(*a.buffer())``, ``*b.buffer()``, ``*output.buffer()``:
    one address on every core); ``per_core_block_size = find_max_block_size(num_tiles_per_shard)`` = ``block`` and
    ``per_core_block_cnt`` = ``blocks``. The reader is built with ``IN0_SHARDED`` and ``IN1_SHARDED``: it reserves and
    pushes each whole shard (lines 46-55) and skips its loops (line 61). The compute kernel is the interleaved form's,
    ``block`` tiles a block. The writer is built with ``OUT_SHARDED``: it waits for the pages compute packed and pops
    them, writing nothing (0.81.1, lines 35-36; ``release`` "0.72.0": it waits only, line 25 of that release, which a
    single launch allows: ``balance-cb``).

    ``out_rows`` 1 is the broken form of tt-metal #15337's kind: the output block-sharded on a ``cores`` x 2 grid
    (shards of one tile row, ``tiles`` = ``w``) while the factory still sizes c_2 to the inputs'
    ``num_tiles_per_shard`` — a circular buffer twice its bank's shard ("Circular buffer size ... exceeds allocated L1
    buffer bank size ... may allow this circular buffer to write outside the allocated buffer space"): compute's
    second block pushes pages past the output's shard on every core (``cb-shard-overrun`` at line 140), and the
    output's second row, on cores that run no kernel, is never written (``output-unwritten``)."""
    r, c = Kernel(BINARY_READER), Kernel(BINARY_COMPUTE)
    w = Kernel(UNARY_WRITER)  # 0.72.0's lines differ (its writer waits at line 25): ``release`` says which
    n = block * blocks
    width = n // 2
    cols = cores * width
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    for i in range(cores):
        site = Site(i, 0)
        c0, c1, c2 = 3 * i, 3 * i + 1, 3 * i + 2
        out = Shard("out", width * i, width, cols, n if out_rows == 2 else width)
        buffers += [Buffer(c0, "c_0", site, 0, 1, n, "bf16", shard=Shard("a", width * i, width, cols, n)),
                    Buffer(c1, "c_1", site, 1, 1, n, "bf16", shard=Shard("b", width * i, width, cols, n)),
                    Buffer(c2, "c_2", site, 2, 1, n, "bf16", shard=out)]
        programs.append(engine(
            site, Engine.READER,
            r(47, "dfb0.reserve_back(num_tiles);", Reserve(c0, n)),
            r(48, "dfb0.push_back(num_tiles);", Push(c0, n)),
            r(54, "dfb1.reserve_back(num_tiles);", Reserve(c1, n)),
            r(55, "dfb1.push_back(num_tiles);", Push(c1, n)),
        ))
        programs.append(engine(site, Engine.COMPUTE, c.loop(
            45, "for (uint32_t block = 0; block < per_core_block_cnt; ++block) {", "block", blocks,
            c(109, "dfb_inp0.wait_front(per_core_block_size);", Wait(c0, block)),
            c(110, "dfb_inp1.wait_front(per_core_block_size);", Wait(c1, block)),
            c(111, "dfb_out0.reserve_back(per_core_block_size);", Reserve(c2, block)),
            c(117, "tile_regs_acquire();", AcquireAcc(block, "bf16")),
            c.loop(118, "for (uint32_t i = 0; i < per_core_block_size; ++i) {", "i", block,
                   c(119, "ELTWISE_OP(dfb_inp0.get_id(), dfb_inp1.get_id(), i, i, i);",
                     Compute("add", 1, (Operand(c0, block), Operand(c1, block))))),
            c.loop(133, "for (uint32_t i = 0; i < per_core_block_size; ++i) {", "i", block,
                   c(134, "pack_tile(i, dfb_out0.get_id());", PackAcc(c2, 1))),
            c(136, "tile_regs_release();", ReleaseAcc()),
            c(138, "dfb_inp0.pop_front(per_core_block_size);", Pop(c0, block)),
            c(139, "dfb_inp1.pop_front(per_core_block_size);", Pop(c1, block)),
            c(140, "dfb_out0.push_back(per_core_block_size);", Push(c2, block)),
        )))
        if release == "0.81.1":
            writer = (w(35, "dfb.wait_front(num_pages);", Wait(c2, n)), w(36, "dfb.pop_front(num_pages);", Pop(c2, n)))
        else:
            writer = (w(25, "cb.wait_front(num_pages);", Wait(c2, n)),)
        programs.append(engine(site, Engine.WRITER, *writer))
    bufs = tuple(buffers)
    shape = (32 * 2, 32 * cols)
    return Program(name, WORMHOLE,
                   tensors=(Tensor("a", shape, "bf16", Role.INPUT), Tensor("b", shape, "bf16", Role.INPUT),
                            Tensor("out", shape, "bf16", Role.OUTPUT)),
                   buffers=bufs, programs=tuple(programs), memory=pack(bufs))


# ---------------------------------------------------------------------------------------------------------
# Broken: an atomic increment still pending when the kernel ends (the class of tt-metal #40879)
# ---------------------------------------------------------------------------------------------------------


def move_overlap(name: str = "move_overlap_atomic_pending", range_0_size: int = 2) -> Program:
    """``ttnn.move`` onto an overlapping tensor (``move_interleaved_with_overlap.cpp``, as shipped) on three cores of
    two tiles, the host arguments of ``examples/ttmetal/move_overlap/host.yaml``: every core reads its tiles into a
    2-page c_0 (one reserve, a read and a barrier per tile, one push); the controller (0,0) waits until its word of
    the semaphore reaches ``control_value`` = 2 and multicasts that word to (1,0)-(2,0) (``set_multicast``, one
    region); each worker increments the controller's word (``sem.up``: ``noc_semaphore_inc``, a non-posted atomic)
    and waits for the multicast value; every core then writes its tiles. No worker issues
    ``noc_async_atomic_barrier()``: it ends with the increment's acknowledgement outstanding, what the watcher flags
    as "kernel completing with pending NOC transactions (missing NOC non-posted atomics flushed barrier)" in
    tt-metal #40879 (``llama_shapes_sharded_writer.cpp``). ``range_0_size`` is the host's num_dests for the flag
    multicast (line 76's last argument, get_arg_val(13) at line 26; the region holds 2 cores)."""
    k = Kernel(MOVE_OVERLAP)
    sites = (Site(0, 0), Site(1, 0), Site(2, 0))
    buffers = tuple(Buffer(i, "c_0", s, 0, 1, 2, "bf16") for i, s in enumerate(sites))
    programs = []
    for i, s in enumerate(sites):
        at = Addr(2 * i, (Term("i", 1),))
        read = (
            k(59, "dfb.reserve_back(num_tiles);", Reserve(i, 2)),
            k.loop(61, "for (uint32_t i = start_id; i < start_id + num_tiles; i += ublock_size_tiles) {", "i", 2,
                   k(62, "noc.async_read(", ReadTiles("src", at, 1, i)),
                   k(64, "noc.async_read_barrier();", ReadBarrier())),
            k(67, "dfb.push_back(num_tiles);", Push(i, 2)),
        )
        if i == 0:
            sync = (k(70, "sem.wait(control_value);", SemWait(0, WaitCond.EQ, 2)),
                    k(75, "sem.set_multicast<NocOptions::DEFAULT>(", McastSetValid(0, 0, range_0_size)))
        else:
            sync = (k(88, "sem.up(noc, controller_noc_x, controller_noc_y, 1);", SemInc(0, sites[0], 1)),
                    k(90, "sem.wait(control_value);", SemWait(0, WaitCond.EQ, 2)))
        write = (
            k(93, "dfb.wait_front(num_tiles);", Wait(i, 2)),
            k.loop(95, "for (uint32_t i = start_id; i < start_id + num_tiles; i += ublock_size_tiles) {", "i", 2,
                   k(96, "noc.async_write(", WriteTiles(i, "dst", at, 1)),
                   k(98, "noc.async_write_barrier();", WriteBarrier())),
            k(101, "dfb.pop_front(num_tiles);", Pop(i, 2)),
        )
        programs.append(engine(s, Engine.READER, *read, *sync, *write))
    return Program(name, WORMHOLE,
                   tensors=(_tensor("src", 6, Role.INPUT), _tensor("dst", 6, Role.OUTPUT)),
                   buffers=buffers,
                   # CreateSemaphore writes the initial value at every launch (host_init).
                   semaphores=(Semaphore(0, "barrier", sites, 0, SemRole.COUNTER, host_init=True),),
                   groups=(Group(0, sites[0], (1, 0, 2, 0)),),
                   programs=tuple(programs), memory=pack(buffers))


def move_overlap_num_dests(name: str = "move_overlap_num_dests") -> Program:
    """tt-metal #42100's kind on ``move_interleaved_with_overlap.cpp`` as shipped: the host hands the controller a
    ``range_0_size`` of 3 for a region of 2 cores. ``sem.set_multicast`` adds 3 to the acknowledgements the
    controller's write barrier expects while the NoC returns 2, so its first ``noc.async_write_barrier()`` (line 98)
    never passes (noc_nonblocking_api.h ``ncrisc_noc_nonposted_writes_flushed`` compares with ``==``). The workers'
    unacknowledged ``sem.up`` of the shipped kernel (``move_overlap_atomic_pending``) stays."""
    return move_overlap(name, range_0_size=3)


# ---------------------------------------------------------------------------------------------------------
# Broken: compute waits for 2 pages per step, its reader pushes 1 (tt-metal #52348, ttnn.sampling at Wt = 1)
# ---------------------------------------------------------------------------------------------------------


def sampling_wt1(name: str = "sampling_wt1_wait2", wt: int = 1) -> Program:
    """``ttnn.sampling`` with W = 32 (``Wt`` = 1, ``Ht`` = 1), the values path of the reader and of the compute
    kernel's local-sort loop, on one core: the reader pushes ``Ht * Wt`` value tiles into c_0 one at a time; the
    compute kernel reserves ``Wt`` pages of c_5 and runs ``ceil(Wt / 2)`` local-sort steps, each waiting for two
    value tiles, transposing them into DST, sorting, popping two and packing two into c_5, then pushes ``Wt``.
    Capacities from ``sampling_program_factory.cpp``: c_0 ``2 * num_cb_unit`` = 4 pages, c_5 ``Wt`` pages. With
    ``Wt`` = 1 the one step waits for a second tile that is never pushed (tt-metal #52348).

    Left out, because the format cannot say them: the index tiles the reader generates with plain L1 stores
    (``generate_index_tile``, line 46/48) into c_2 and the compute kernel's waits, transposes and packs of them
    (lines 247, 253, 261-264, 282, 290-292, 298), and the reader's row-major index sticks (lines 57-62, consumed by the
    writer). The compute kernel is stuck at line 252 before any of them matters; the rest of ``top_k`` (the merge,
    after line 298) is never reached. ``AcquireAcc(2)``: the value tiles' DST 0-1 (the index tiles' DST 2-3 go with
    the index path)."""
    r, c = Kernel(SAMPLING_READER), Kernel(SAMPLING_COMPUTE)
    site = Site(0, 0)
    c0, c5 = 0, 1
    buffers = (Buffer(c0, "c_0", site, 0, 1, 4, "bf16"), Buffer(c5, "c_5", site, 5, 1, wt, "bf16"))
    steps = (wt + 1) // 2
    reader = engine(site, Engine.READER, r.loop(
        38, "for (uint32_t i = 0; i < Ht; ++i) {", "i", 1,
        r.loop(40, "for (uint32_t j = 0; j < Wt; ++j) {", "j", wt,
               r(41, "input_values_dfb.reserve_back(onetile);", Reserve(c0, 1)),
               r(42, "noc.async_read(", ReadTiles("input_values", Addr(0, (Term("i", wt), Term("j", 1))), 1, c0)),
               r(50, "noc.async_read_barrier();", ReadBarrier()),
               r(51, "input_values_dfb.push_back(onetile);", Push(c0, 1)))))
    compute = engine(site, Engine.COMPUTE, c.loop(
        244, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1,
        c(246, "input_transposed_dfb.reserve_back(Wt);", Reserve(c5, wt)),
        c.loop(250, "for (uint32_t wt = 0; wt < Wt; wt += 2) {", "wt", steps,
               c(252, "input_dfb.wait_front(2);", Wait(c0, 2)),
               c(255, "tile_regs_acquire();", AcquireAcc(2, "bf16")),
               c(258, "transpose_tile(input_dfb_index, 0, 0);", Compute("transpose", 1, (Operand(c0, 1),))),
               c(259, "transpose_tile(input_dfb_index, 1, 1);", Compute("transpose", 2, (Operand(c0, 2),))),
               c(272, "ckernel::topk_local_sort<", Compute("topk_local_sort", 2, ())),
               c(281, "input_dfb.pop_front(2);", Pop(c0, 2)),
               c(287, "pack_tile(0, input_transposed_dfb_index);", PackAcc(c5, 1)),
               c(288, "pack_tile(1, input_transposed_dfb_index);", PackAcc(c5, 1)),
               c(294, "tile_regs_release();", ReleaseAcc())),
        c(297, "input_transposed_dfb.push_back(Wt);", Push(c5, wt))))
    return Program(name, WORMHOLE, tensors=(_tensor("input_values", wt, Role.INPUT),), buffers=buffers,
                   programs=(reader, compute), memory=pack(buffers))


# ---------------------------------------------------------------------------------------------------------
# The peer exchange of the cross-core sort: an exact wait on a cumulative counter (tt-metal #54590)
# ---------------------------------------------------------------------------------------------------------

#: Lines a broken variant quotes as the vendor wrote them before the fix, with the statement the ttnn 0.81.1
#: wheel holds there now: (file, line) -> (pre-fix text, wheel text). The pre-fix texts are the issue's.
PRE_FIX: dict[tuple[str, int], tuple[str, str]] = {
    (SORT_EXCHANGE, 79): ("sem_self.wait(sem_counter);", "sem_self.wait_min(sem_counter);"),
    (SORT_EXCHANGE, 111): ("sem_self.wait(sem_counter + 1);", "sem_self.wait_min(sem_counter + 1);"),
    (ARGMAX, 417): ("start_sem.wait(k + 1);", "start_sem.wait_min(k + 1);"),
}


def sort_exchange(name: str = "sort_exchange_wait_min", exact: bool = False) -> Program:
    """The semaphore handshake of one tile exchange between two peer cores of the cross-core sort
    (``sort_noc_exchange_Wt_tiles``, ``cross_core_data_exchange_common.hpp:68-119``, called from
    ``reader_cross_core_data_exchange.cpp:159`` on the reader of both cores of a pair), with
    ``number_of_tiles_per_core`` = ``Wt`` = 1: each core increments its peer's word of the ``exchange`` semaphore
    (``sem_self.up``, a remote atomic), waits for its acknowledgement, waits until its own word reaches
    ``sem_counter`` = 1, increments the peer's word again and waits for 2, and resets its word to 0 after the loop.

    ``exact`` the variant tt-metal #54590 reports: the two waits are ``sem_self.wait`` (``noc_semaphore_wait``, an
    exact ``==``) on a counter the peer's next increment moves past the value waited for: a fast peer passes its
    first wait, sends its second increment, and its slow peer's word reads 2 before it ever saw 1 -- both hang. The
    wheel's fix waits ``wait_min`` (``>=``) at lines 79 and 111 (``PRE_FIX``).

    A slice: the loop runs once at ``Wt`` = 1, so its body is transcribed at ``w`` = 0 with no loop op (line 68
    has none); left out are the tile moves the handshake orders -- the reserves of the peer buffers (lines 70-71),
    the waits and pops of this core's tiles (82-83, 105-106), the pushes (114-115), which pair with the compute
    engine, and the two remote writes into the peer's buffer pages (90-101) with their barrier (103), which
    ``sort_exchange_data`` transcribes (README "What vendor kernels do that the format cannot say yet", row 10).
    None of them touches the word; the hang of the exact form is in the handshake alone."""
    k = Kernel(SORT_EXCHANGE)
    sites = (Site(0, 0), Site(1, 0))
    cond = WaitCond.EQ if exact else WaitCond.GE
    wait1, wait2 = (PRE_FIX[(SORT_EXCHANGE, n)][0 if exact else 1] for n in (79, 111))
    programs = []
    for i, s in enumerate(sites):
        peer = sites[1 - i]
        programs.append(engine(
            s, Engine.READER,
            k(77, "sem_self.up(noc, other_core_x, other_core_y, 1);", SemInc(0, peer, 1)),
            k(78, "noc.async_atomic_barrier();", AtomicBarrier()),
            k(79, wait1, SemWait(0, cond, 1)),
            k(109, "sem_self.up(noc, other_core_x, other_core_y, 1);", SemInc(0, peer, 1)),
            k(110, "noc.async_atomic_barrier();", AtomicBarrier()),
            k(111, wait2, SemWait(0, cond, 2)),
            k(119, "sem_self.set(0);", SemSet(0, 0))))
    # sort_program_factory.cpp:1081: SEM_EXCHANGE ("exchange_readers") on every core of the range, initial value 0.
    return Program(name, WORMHOLE,
                   semaphores=(Semaphore(0, "exchange", sites, 0, SemRole.COUNTER, host_init=True),),
                   programs=tuple(programs))


def sort_exchange_data(name: str = "sort_exchange_data", barrier: bool = True) -> Program:
    """The cross-core sort's tile exchange with its data (``sort_noc_exchange_Wt_tiles``,
    ``cross_core_data_exchange_common.hpp:68-119``) between the readers of a core pair at ``number_of_tiles_per_core``
    = 2, and the compute ops on the four buffers it moves tiles between (``sort_cross_core_data_exchange.cpp``, the
    exchange branch of stage 2, lines 220-297, for tile ``i`` = 2c and 2c + 1): compute packs its two tiles into
    ``value_tensor_intermediate`` / ``index_tensor_intermediate``; each reader reserves a page of its own
    ``value_tensor_peer`` / ``index_tensor_peer``, handshakes with its peer, writes the front tile of its intermediate
    buffers into the peer's peer buffers at its own write pointer of them (``noc.async_write(value_src,
    UnicastEndpoint{}, ..., {.noc_x, .noc_y, .addr = dfb_value_peer_local_write_addr})``: a ``McastSend`` from the
    front into ``dst``, on the one-core group of the peer), waits for the write barrier, pops, increments the peer's
    word again and waits for the peer's second increment before it pushes the peer pages compute then merges.

    ``barrier`` False is the broken variant of tt-metal PR #43507's kind: without ``noc.async_write_barrier()``
    (line 103) the writes may still be in flight when ``sem_self.up`` (line 109) tells the peer they are done, so the
    peer may push a page that has not landed, and the pop (105) frees pages the writes still read.

    A slice, as ``sort_exchange``: the ``w`` loop (line 68, two iterations) is transcribed as its two bodies,
    ``sem_counter`` 1 and 3, so the reset (119) follows the wait it consumes in one body (the reset protocol the
    checker decides, README "Sort's peer exchange"); compute's copies read the transposed buffers, whose producer
    (``sort_Wt_tiles_row_to_bitonic_sequence``) and in-place packs (``pack_tile<true>``, lines 326 and 330: a pack
    into a waited page at an index, which the format cannot say) are left out with those buffers — the copies are
    ``Compute`` ops with no operand there; the sync of the packer and unpacker (``sync_packer_unpacker``, line 141:
    one engine here) touches no buffer of the exchange."""
    k, c, h = Kernel(SORT_EXCHANGE), Kernel(SORT_COMPUTE), Kernel(SORT_COMMON)
    sites = (Site(0, 0), Site(1, 0))
    # sort_program_factory.cpp:1013-1035: the intermediate and peer buffers, cb_scale_factor = 2 one-tile pages each
    # (uint16 index tiles and bf16 value tiles have the same size). Per site: value/index intermediate, peer.
    names = ("value_tensor_intermediate", "index_tensor_intermediate", "value_tensor_peer", "index_tensor_peer")
    buffers = tuple(Buffer(4 * i + j, n, s, j, 1, 2, "bf16") for i, s in enumerate(sites) for j, n in enumerate(names))
    groups = (Group(0, sites[0], (1, 0, 1, 0)), Group(1, sites[1], (0, 0, 0, 0)))  # each core's peer
    programs = []
    for i, s in enumerate(sites):
        vi, ii, vp, ip = (4 * i + j for j in range(4))
        peer = sites[1 - i]

        def exchange(w: int, vi: int = vi, ii: int = ii, vp: int = vp, ip: int = ip, peer: Site = peer,
                     g: int = i) -> tuple[Line, ...]:
            counter = 1 + 2 * w
            out = [
                k(70, "dfb_value_peer.reserve_back(ONE_TILE);", Reserve(vp, 1)),
                k(71, "dfb_index_peer.reserve_back(ONE_TILE);", Reserve(ip, 1)),
                k(77, "sem_self.up(noc, other_core_x, other_core_y, 1);", SemInc(0, peer, 1)),
                k(78, "noc.async_atomic_barrier();", AtomicBarrier()),
                k(79, "sem_self.wait_min(sem_counter);", SemWait(0, WaitCond.GE, counter)),
                k(82, "value_tensor_this_dfb.wait_front(ONE_TILE);", Wait(vi, 1)),
                k(83, "index_tensor_this_dfb.wait_front(ONE_TILE);", Wait(ii, 1)),
                k(90, "noc.async_write(", McastSend(vi, 1, g, 1, front=True, dst=vp)),
                k(96, "noc.async_write(", McastSend(ii, 1, g, 1, front=True, dst=ip)),
            ]
            if barrier:
                out.append(k(103, "noc.async_write_barrier();", WriteBarrier()))
            out += [
                k(105, "value_tensor_this_dfb.pop_front(ONE_TILE);", Pop(vi, 1)),
                k(106, "index_tensor_this_dfb.pop_front(ONE_TILE);", Pop(ii, 1)),
                k(109, "sem_self.up(noc, other_core_x, other_core_y, 1);", SemInc(0, peer, 1)),
                k(110, "noc.async_atomic_barrier();", AtomicBarrier()),
                k(111, "sem_self.wait_min(sem_counter + 1);", SemWait(0, WaitCond.GE, counter + 1)),
                k(114, "dfb_value_peer.push_back(ONE_TILE);", Push(vp, 1)),
                k(115, "dfb_index_peer.push_back(ONE_TILE);", Push(ip, 1)),
            ]
            return tuple(out)

        programs.append(engine(s, Engine.READER, *exchange(0), *exchange(1), k(119, "sem_self.set(0);", SemSet(0, 0))))

        def copy(dst: int) -> tuple[Line, ...]:
            # copy_tile_between_cbs (sort_common.hpp:273-307): acquire, copy the tile into DST 0, pack it at the
            # end of dst (pack_tile(dest_idx, dst, 0): dst_tile_id 0), release.
            return (h(285, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                    h(289, "copy_tile(src_dfb.get_id(), src_tile_id, dest_idx);", Compute("copy_tile", 1, ())),
                    h(303, "pack_tile(dest_idx, dst_dfb.get_id(), 0);  // Append to the end of the CB",
                      PackAcc(dst, 1)),
                    h(307, "tile_regs_release();", ReleaseAcc()))

        def merge(vp: int = vp, ip: int = ip) -> tuple[Line, ...]:
            return (
                c(272, "tile_regs_acquire();", AcquireAcc(4, "bf16")),
                c(276, "copy_tile(dfb::index_tensor_transposed, tile_id, local_index_dest);",
                  Compute("copy_tile", 1, ())),
                c(280, "copy_tile(dfb::input_tensor_transposed, tile_id, local_value_dest);",
                  Compute("copy_tile", 1, ())),
                c(282, "index_tensor_peer_dfb.wait_front(one_tile);", Wait(ip, 1)),
                c(286, "copy_tile(dfb::index_tensor_peer, FIRST_TILE, peer_index_dest);",
                  Compute("copy_tile", 1, (Operand(ip, 1),))),
                c(288, "index_tensor_peer_dfb.pop_front(one_tile);", Pop(ip, 1)),
                c(291, "value_tensor_peer_dfb.wait_front(one_tile);", Wait(vp, 1)),
                c(295, "copy_tile(dfb::value_tensor_peer, FIRST_TILE, peer_value_dest);",
                  Compute("copy_tile", 1, (Operand(vp, 1),))),
                c(297, "value_tensor_peer_dfb.pop_front(one_tile);", Pop(vp, 1)),
                c(299, "ckernel::topk_merge<", Compute("topk_merge", 4, ())),
                c(332, "tile_regs_release();", ReleaseAcc()))

        send_pair: list[Line] = []
        for base in (220, 236):  # tile_id (lines 220-234), then tile_id + 1 (236-250)
            send_pair += [
                c(base, "value_tensor_intermediate_dfb.reserve_back(one_tile);", Reserve(vi, 1)),
                c(base + 1, "index_tensor_intermediate_dfb.reserve_back(one_tile);", Reserve(ii, 1)),
                *copy(ii),  # line base + 3
                c(base + 5, "index_tensor_intermediate_dfb.push_back(one_tile);", Push(ii, 1)),
                *copy(vi),  # line base + 7
                c(base + 14, "value_tensor_intermediate_dfb.push_back(one_tile);", Push(vi, 1)),
            ]
        programs.append(engine(s, Engine.COMPUTE, *send_pair, *merge(), *merge()))
    # sort_program_factory.cpp:1081: SEM_EXCHANGE ("exchange_readers") on every core of the range, initial value 0.
    return Program(name, WORMHOLE, buffers=buffers, groups=groups,
                   semaphores=(Semaphore(0, "exchange", sites, 0, SemRole.COUNTER, host_init=True),),
                   programs=tuple(programs), memory=pack(buffers))


# ---------------------------------------------------------------------------------------------------------
# deepseek_prefill dispatch: a one-word remote write announced by an increment (tt-metal PR #43507)
# ---------------------------------------------------------------------------------------------------------

#: Lines a vendor fix added, absent from the broken variant: (file, line) -> the statement the fixed wheel holds.
FIX_ADDED: dict[tuple[str, int], str] = {
    (DISPATCH_IDLE, 100): "noc_async_write_barrier();  // ensure mailbox L1 addr has landed before atomic wakes sender",
}


def dispatch_mailbox(name: str = "dispatch_mailbox_no_barrier", barrier: bool = False, idle: int = 2) -> Program:
    """The mailbox handshake of deepseek_prefill's dispatch at startup (ttnn 0.72.0): each of ``idle`` idle cores
    writes its mailbox's L1 address into its slot of the sender's route-table scratch (``noc_inline_dw_write``,
    ``writer_untilize_dispatch.cpp:99``), then increments the sender's ``mbox_ready`` word (103) and waits for the
    atomic's acknowledgement (104); the sender waits for ``mbox_ready == num_idle_cores`` (``reader_dispatch.cpp:283``),
    resets it (284) and reads every slot with plain loads (287-291), using each as the NoC address of that core's
    mailbox.

    ``barrier`` False is the kernel before tt-metal PR #43507 ("ds_prefill(dispatch hang fix)"): without
    ``noc_async_write_barrier()`` at line 100 the inline write and the increment travel unordered (the write is
    acknowledged on ``NIU_MST_WR_ACK_RECEIVED``, the atomic on ``NIU_MST_ATOMIC_RESP_RECEIVED``), so the increment
    may wake the sender before the address landed and the sender reads a stale slot — the hang the PR fixed. The
    comment the kernel carried (lines 90-92: "noc_inline_dw_write is ordered before the subsequent
    noc_semaphore_inc on the NOC") is the belief it corrected. The slice then also ends with the write
    unacknowledged (``async-pending-at-end``): so does the kernel on an idle core the batch loop gives no batch
    (``batch_idx = core_id`` past ``total_batches``, line 111), the other half of the PR (its final
    ``noc_async_full_barrier()``, line 179 after the fix).

    A slice: the address exchange before it (idle lines 77-96, sender 255-277: the sender multicasts the scratch
    base, the idle cores wait for ``addr_ready``) and everything after (the batch loop) are left out; each slot is a
    word of its own (``rt_scratch_<c>``, the 32-bit word at ``rt_scratch_base + core_id * 4``), written by one
    inline write and read by plain loads the format does not say (a mailbox word: docs/semantics.md, "One-word
    remote writes"). The value written is the idle core's mailbox buffer address (``get_write_ptr(cb_mailbox_id)``,
    line 93), laid out by ``pack``."""
    w, r = Kernel(DISPATCH_IDLE), Kernel(DISPATCH_SENDER)
    sender = Site(0, 0)
    cores = tuple(Site(1 + c, 0) for c in range(idle))
    # The mailbox each idle core exchanges (cb_mailbox_id): one page, so its address is what the slot carries.
    buffers = tuple(Buffer(c, "mailbox", s, 0, 1, 1, "bf16") for c, s in enumerate(cores))
    memory = pack(buffers)
    mbox_ready = Semaphore(0, "mbox_ready", (sender,), 0, SemRole.COUNTER)
    slots = tuple(Semaphore(1 + c, f"rt_scratch_{c}", (sender,), 0, SemRole.COUNTER) for c in range(idle))
    programs = [engine(sender, Engine.READER,
                       r(283, "noc_semaphore_wait(mbox_ready_sem_ptr, num_idle_cores);", SemWait(0, WaitCond.EQ, idle)),
                       r(284, "noc_semaphore_set(mbox_ready_sem_ptr, 0);", SemSet(0, 0)))]
    for c, s in enumerate(cores):
        lines = [w(99, "noc_inline_dw_write(sender_scratch_slot_noc_addr, mailbox_l1_addr);",
                   InlineWrite(1 + c, sender, memory[c].offset))]
        if barrier:
            lines.append(w(100, FIX_ADDED[(DISPATCH_IDLE, 100)], WriteBarrier()))
        lines += [w(103, "noc_semaphore_inc(sender_mbox_ready_noc_addr, 1);", SemInc(0, sender, 1)),
                  w(104, "noc_async_atomic_barrier();", AtomicBarrier())]
        programs.append(engine(s, Engine.WRITER, *lines))
    return Program(name, WORMHOLE, buffers=buffers, semaphores=(mbox_ready, *slots), programs=tuple(programs),
                   memory=memory)


# ---------------------------------------------------------------------------------------------------------
# Argmax's reduce_all start handshake: an exact wait on a word set to the iteration number (tt-metal #50314)
# ---------------------------------------------------------------------------------------------------------


def argmax_start(name: str = "argmax_start_exact_wait", exact: bool = True, outer: int = 3) -> Program:
    """The semaphores of multi-core ``ttnn.argmax`` on its reduce_all path (``dim=None``, row major), two cores,
    ``outer_dim_units`` = ``outer``, one multicast rectangle (``num_cores1`` = 0), as
    ``reader_argmax_interleaved_multicore.cpp`` runs them: in each iteration ``k`` the reduce core (0,0) resets
    ``done`` (from the second iteration, line 392), sets its ``start`` word to ``k + 1`` (394), multicasts it to
    both cores including itself (398, ``MCAST_INCL_SRC``, from the second iteration) and waits for the write
    (406); every core waits for ``start`` to reach ``k + 1`` from the second iteration (417). After the loop every
    core increments the reduce core's ``done`` (520-521), the reduce core waits for it ``==`` ``num_cores`` (526),
    resets both words and multicasts the reset ``start`` (555-563).

    ``exact`` the form tt-metal #50314 reports: ``start_sem.wait(k + 1)`` (``==``). With no ``done`` handshake
    inside the loop on this path the reduce core runs ahead and sets ``k + 2`` before a lagging worker sampled
    ``k + 1``: the worker hangs, and the reduce core with it at line 526. The wheel's fix waits ``wait_min``
    (``PRE_FIX``): the start word carries a sequence (docs/checker.md, "Semaphore protocols": ``sequence``), which
    the checker proves; ``done`` is a reset counter whose in-loop reset (line 392) runs before any increment.

    A slice: the tensor reads of ``find_argmax_for_core`` (lines 68-74, each ``async_read`` with its barrier) and
    the partials' remote writes into the reduce core (505-517, raw L1 past a buffer's base, read with plain loads:
    README rows 3 and 1) with the output write (536-537) are left out; none touches a semaphore. The program factory
    is not in the wheel: both words start at 0 (the kernel's comment at 381-383: "done_sem is zero-initialized by the
    dispatcher")."""
    k = Kernel(ARGMAX)
    red, wrk = Site(0, 0), Site(1, 0)
    start, done = 0, 1
    cond = WaitCond.EQ if exact else WaitCond.GE
    wait = PRE_FIX[(ARGMAX, 417)][0 if exact else 1]
    kk = (Term("k", 1),)

    def loop(*body: Line) -> Line:
        return k.loop(378, "for (uint32_t k = 0; k < outer_dim_units; ++k) {", "k", outer, *body)

    def done_up() -> tuple[Line, ...]:
        return (k(520, "done_sem.up(noc, reduce_core_x, reduce_core_y, 1);", SemInc(done, red, 1)),
                k(521, "noc.async_atomic_barrier();", AtomicBarrier()))

    reducer = engine(
        red, Engine.READER,
        loop(k.guard(391, "if (k > 0) {", "k", Guard.NOT_FIRST, k(392, "done_sem.set(0);", SemSet(done, 0))),
             k(394, "start_sem.set(k + 1);", SemSet(start, 1, kk)),
             k.guard(397, "if (k > 0) {", "k", Guard.NOT_FIRST,
                     k(398, "start_sem.set_multicast<NocOptions::MCAST_INCL_SRC>(", McastSetValid(start, 0, 2))),
             k(406, "noc.async_write_barrier();", WriteBarrier()),
             k.guard(416, "if (k > 0) {", "k", Guard.NOT_FIRST, k(417, wait, SemWait(start, cond, 1, kk)))),
        *done_up(),
        k(526, "done_sem.wait(num_cores);", SemWait(done, WaitCond.EQ, 2)),
        k(555, "done_sem.set(0);", SemSet(done, 0)),
        k(556, "start_sem.set(0);", SemSet(start, 0)),
        k(558, "start_sem.set_multicast<NocOptions::MCAST_INCL_SRC>(", McastSetValid(start, 0, 2)),
        k(563, "noc.async_write_barrier();", WriteBarrier()))
    worker = engine(
        wrk, Engine.READER,
        loop(k.guard(416, "if (k > 0) {", "k", Guard.NOT_FIRST, k(417, wait, SemWait(start, cond, 1, kk)))),
        *done_up())
    sites = (red, wrk)
    return Program(name, WORMHOLE,
                   semaphores=(Semaphore(start, "start", sites, 0, SemRole.COUNTER, host_init=True),
                               Semaphore(done, "done", sites, 0, SemRole.COUNTER, host_init=True)),
                   groups=(Group(0, red, (0, 0, 1, 0), loopback=True),),
                   programs=(reducer, worker))


# ---------------------------------------------------------------------------------------------------------
# 4. Softmax along W (ttnn.softmax, interleaved, one core)
# ---------------------------------------------------------------------------------------------------------


def _scaler(k: Kernel, b: int) -> tuple[Line, ...]:
    """``prepare_reduce_scaler`` (``reduce_helpers_dataflow.inl:163-203``) for a full-width REDUCE_ROW scaler of
    buffer ``b``: reserve, zero the tile by ``noc.async_write_zeros`` and wait for it (lines 167-168: the NoC zero
    read's barrier is inside the helper, before any store), store the scaler into row 0 of each face, push. The
    zero write and its barrier complete before the stores, so the helper is one ``FillTiles``."""
    return (k(163, "dfb.reserve_back(1);", Reserve(b, 1)),
            k(176, "fill_each_face_row0<data_format, num_faces>(addr_to_l1_ptr(write_addr), scaler);",
              FillTiles(b, 1, "reduce_scaler")),
            k(203, "dfb.push_back(1);", Push(b, 1)))


def _chain_block(c: Kernel, blk: int, compute: tuple[Line, ...], out: int) -> Line:
    """One ``eltwise_chain`` block loop (``chain.inl:3275-3338``, no DEST accumulation): acquire, the elements'
    compute (``elem_apply_compute``: wait, exec, pop per their policies), pack into ``out`` (``elem_apply_pack``:
    reserve, pack, push per block), release."""
    return c.loop(3275, "for (uint32_t wt_base = 0; wt_base < Wt;) {", "b", 2,
                  c(3280, "tile_regs_acquire();", AcquireAcc(blk, "bf16")),
                  *compute,
                  c(2528, "buffer.reserve_back(count);", Reserve(out, blk)),
                  c(2924, "elem.exec(i_arg, ht, wt + j, j * chain_lane_width);", PackAcc(out, blk)),
                  c(2535, "buffer.push_back(count);", Push(out, blk)),
                  c(3335, "tile_regs_release();", ReleaseAcc()))


def softmax(name: str = "softmax_w") -> Program:
    """``ttnn.softmax`` along W of an interleaved bf16 tensor of ``num_rows`` = 2 tile rows of ``Wt`` = 4 tiles on
    one core, in blocks of ``blk`` = 2 tiles: no fused scale or mask, not numerically stable, W a multiple of 32
    (no ``MASK_PADDED_DATA``, the writer's ``mask_padded_data`` 0), so every pad (``in0_pad``, ``exps_pad``,
    ``out0_pad``) is 0 (``Wt % blk == 0``).

    Reader (``reader_unary_interleaved_sm.cpp``): the max and sum scalers by local stores (lines 69, 73 through
    ``prepare_reduce_scaler``), then per row ``Wt / blk`` blocks: reserve, ``blk`` reads, read barrier, push.
    Compute (``softmax.cpp``): waits for both scalers once (183-184) and pops them after the last row (408-409);
    per row ``exp`` (line 344, ``ckl::unary``: an ``eltwise_chain`` of CopyTile, Exp, PackTile with per-block waits,
    pops, reserves and pushes), the row sum with its reciprocal (360, ``compute_kernel_lib::reduce`` REDUCE_ROW
    ``WaitUpfrontNoPop``: ``reduce_helpers_compute.inl:399-558``) and the multiply by the column-broadcast
    reciprocal (382, ``ckl::mul``: both inputs waited upfront, popped at the end). Writer
    (``writer_unary_interleaved_start_id_blocked_sm.cpp``): per block wait, ``blk`` writes, write barrier, pop.

    Capacities: ``out0_t = ndst * 2`` = 4 (``softmax.cpp:113``) and ``exps_t`` = round_up(Wt, ndst) = 4 (line 114),
    as the kernel states the factory's; the program factory is not in the wheel, so c_0's ``in0_t`` (a runtime
    argument) is taken as 4 and the scalers and the reciprocal as one page each. The buffers are named as the
    kernels name them (``dfb::in0``, ...); their cb indices are the order here. ``tile_regs_commit``/
    ``tile_regs_wait`` have no op (the math-to-pack handshake inside the compute engine)."""
    rd, cm, wr = Kernel(SOFTMAX_READER), Kernel(SOFTMAX_COMPUTE), Kernel(SOFTMAX_WRITER)
    sd, rc, ch = Kernel(REDUCE_DATAFLOW), Kernel(REDUCE_COMPUTE), Kernel(CHAIN)
    site = Site(0, 0)
    rows, wt, blk = 2, 4, 2
    in0, max_s, sum_s, exps, recip, out0 = range(6)
    names = ("in0", "max_scaler", "sum_scaler", "exps", "recip_sum_exps", "out0")
    caps = (4, 1, 1, 4, 1, 4)
    buffers = tuple(Buffer(i, names[i], site, i, 1, caps[i], "bf16") for i in range(6))
    reader = engine(
        site, Engine.READER,
        *_scaler(sd, max_s), *_scaler(sd, sum_s),
        rd.loop(82, "for (std::uint32_t i = 0; i < num_blks; ++i) {", "i", rows,
                rd.loop(83, "for (std::uint32_t j = 0; j < Wt; j += blk) {", "j", wt // blk,
                        rd(85, "dfb_id_in0_obj.reserve_back(static_cast<uint16_t>(rem));", Reserve(in0, blk)),
                        rd.loop(87, "for (std::uint32_t r = 0; r < rem; ++r) {", "r", blk,
                                rd(88, "noc.async_read(", ReadTiles(
                                    "src", Addr(0, (Term("i", wt), Term("j", blk), Term("r", 1))), 1, in0))),
                        rd(93, "noc.async_read_barrier();", ReadBarrier()),
                        rd(94, "dfb_id_in0_obj.push_back(static_cast<uint16_t>(rem));", Push(in0, blk)))))
    exp_block = _chain_block(ch, blk, (
        ch(2514, "buffer.wait_front(count);", Wait(in0, blk)),
        ch(2854, "elem.exec(i_arg, ht, wt + j, SlotBase + j * chain_lane_width);",
           Compute("copy_tile", blk, (Operand(in0, blk),))),
        ch(2884, "elem.exec(i_flat + j, SlotBase + j * chain_lane_width);", Compute("exp_tile", blk)),
        ch(2521, "buffer.pop_front(count);", Pop(in0, blk))), exps)
    mul_block = _chain_block(ch, blk, (
        ch(2845, "elem.exec(", Compute("mul_tiles_bcast_cols", blk, (Operand(exps, wt), Operand(recip, 1)))),), out0)
    compute = engine(
        site, Engine.COMPUTE,
        cm(183, "dfb_max_scaler_obj.wait_front(1);  // comes from the reader", Wait(max_s, 1)),
        cm(184, "dfb_sum_scaler_obj.wait_front(1);  // comes from the reader", Wait(sum_s, 1)),
        cm.loop(203, "for (std::uint32_t ncht = 0; ncht < NCHt; ncht++) {", "ncht", rows,
                ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1, exp_block),
                rc(399, "scaler_dfb.wait_front(1);  // Wait for scaler tile", Wait(sum_s, 1)),
                rc(488, "input_dfb.wait_front(total_input_tiles);", Wait(exps, wt)),
                rc.loop(493, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "h", 1,
                        rc(499, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                        rc.loop(512, "for (uint32_t wt = 0; wt < Wt; ++wt) {", "w", wt,
                                rc(538, "reduce_tile<reduce_type, reduce_dim>(",
                                   Compute("reduce_tile_sum_row", 1, (Operand(exps, wt), Operand(sum_s, 1))))),
                        cm(377, "recip_tile(0);", Compute("recip_tile", 1)),
                        rc(553, "output_dfb.reserve_back(onetile);", Reserve(recip, 1)),
                        rc(556, "pack_tile(dst_idx, output_dfb_id);", PackAcc(recip, 1)),
                        rc(557, "tile_regs_release();", ReleaseAcc()),
                        rc(558, "output_dfb.push_back(onetile);", Push(recip, 1))),
                ch(2514, "buffer.wait_front(count);", Wait(exps, wt)),
                ch(2514, "buffer.wait_front(count);", Wait(recip, 1)),
                ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1, mul_block),
                ch(2521, "buffer.pop_front(count);", Pop(exps, wt)),
                ch(2521, "buffer.pop_front(count);", Pop(recip, 1))),
        cm(408, "dfb_max_scaler_obj.pop_front(1);", Pop(max_s, 1)),
        cm(409, "dfb_sum_scaler_obj.pop_front(1);", Pop(sum_s, 1)))
    writer = engine(
        site, Engine.WRITER,
        wr.loop(62, "for (std::uint32_t row = 0; row < num_rows; ++row) {", "row", rows,
                wr.loop(63, "for (std::uint32_t wt = 0; wt < Wt; wt += blk) {", "wt", wt // blk,
                        wr(65, "dfb_id_out0_obj.wait_front(static_cast<uint16_t>(rem));", Wait(out0, blk)),
                        wr.loop(68, "for (std::uint32_t j = 0; j < rem; j++) {", "j", blk,
                                wr(69, "noc.async_write(", WriteTiles(
                                    out0, "dst", Addr(0, (Term("row", wt), Term("wt", blk), Term("j", 1))), 1))),
                        wr(74, "noc.async_write_barrier();", WriteBarrier()),
                        wr(75, "dfb_id_out0_obj.pop_front(static_cast<uint16_t>(rem));", Pop(out0, blk)))))
    tensors = (Tensor("src", (32 * rows, 32 * wt), "bf16", Role.INPUT),
               Tensor("dst", (32 * rows, 32 * wt), "bf16", Role.OUTPUT))
    return Program(name, WORMHOLE, tensors=tensors, buffers=buffers, programs=(reader, compute, writer),
                   memory=pack(buffers))


# ---------------------------------------------------------------------------------------------------------
# 4b. The sharded layernorm (ttnn.layer_norm, block-sharded, two cores in one row)
# ---------------------------------------------------------------------------------------------------------

#: The sharded layernorm's circular buffers on each core: (name as the kernels call it, cb index, pages). Indices
#: and sizes from the sharded program factory (tt-metal ``normalization/layernorm/device/
#: layernorm_op_multi_core_sharded.cpp`` and ``sharded_layernorm_factory_helpers.cpp``, not in the wheel):
#: ``x``/``xmm``/``out`` ``in0_block_tiles`` = block_h x block_w, ``ex_partial``/``ex``/``ex_global``
#: ``in0_block_tiles / block_wt`` = block_h, ``ex_external`` ``div_up(Kt, block_wt)`` = num_blocks, ``ex2pe``
#: ``num_rows_per_all_to_all_worker``, the scalers and eps one tile each.
LN_BUFFERS: tuple[tuple[str, int, int], ...] = (
    ("in0", 0, 2), ("scaler", 2, 1), ("eps", 3, 1), ("scaler_global", 4, 1), ("ex_partial", 8, 2), ("ex", 9, 2),
    ("ex_external", 10, 2), ("ex_partial2", 11, 2), ("ex2", 12, 2), ("ex_external2", 13, 2), ("ex_global", 15, 2),
    ("out", 16, 2), ("xmm", 18, 2), ("ex2pe", 20, 1), ("x", 24, 2))


def layernorm_sharded(name: str = "layernorm_sharded", handshake: bool = True) -> Program:
    """``ttnn.layer_norm`` of a block-sharded bf16 tensor of 2 x 2 tiles on a 2 x 1 grid of cores (row-major, one
    multicast row), no gamma, beta, residual or column mask, not RMSNorm, not Welford, as the sharded program factory
    sets it up: each core holds one tile column, ``block_h`` = 2 tile rows x ``block_w`` = 1 (its input and output
    circular buffers ``in0``/``out`` on the tensors' shards, ``Shard(start=i, width=1, stride=2)``), ``num_blocks`` = 2
    (``Kt / block_wt``), one stage (``use_two_stage_reduce`` 0), ``num_rows_per_all_to_all_worker`` = div_up(2, 2) = 1,
    so both cores are all-to-all workers: core (0,0) runs the sender reader and combines tile row 0, core (1,0) the
    receiver reader (``is_all_to_all_worker`` 1, ``all_to_all_tile_offset_bytes`` one tile) and combines row 1.
    ``num_tiles_per_worker`` = ``num_tiles_per_worker_last`` = 1, ``num_all_to_all_workers_first_stage`` = 2,
    ``num_mcast_dests`` = ``num_blocks - 1`` = 1 (a non-loopback multicast over the row), ``subblock_w`` = 1,
    ``num_reduce_tiles_per_block_h`` = 1; the writer is built with ``SKIP_WRITE_BACK`` (output sharded as the input:
    no reshard) and fills the scaler, eps and (on all-to-all workers) the global scaler.

    Each reader runs its kernel's lambda twice, E[x] (buffers ``ex_partial``, ``ex_external``, ``ex``) and then
    1/sqrt(Var + eps) (``ex_partial2``, ``ex_external2``, ``ex2pe``), both into ``ex_global``: wait for the partial
    compute pushed; the handshake (receivers reset their ``reduce_sender`` word to INVALID, increment the sender's
    ``reduce_receiver`` and wait for VALID; the sender sets VALID, waits for ``num_blocks - 1`` increments, resets and
    multicasts VALID); the all-to-all gather of partials (``RemoteRead`` of each core's partial at the reader's own
    read pointer plus its row offset); compute's combine; the sender waits for the other worker's increment, gathers
    every worker's combined row into ``ex_global`` and multicasts it block by block, each followed by its flag
    (``set(block + 2)``, ``set_multicast``, write barrier), which the receivers take with ``wait_min(block + 2)``.
    As the vendor wrote it, the sender pushes ``ex_global`` (268) before the multicast loop and multicasts the pages
    it already pushed from the read pointer it took at 267 (``McastSend.behind`` = ``block_h``).

    Compute reads ``in0`` by tile index (lines 286-295, 357: the resident input shard nothing pushes or waits,
    373-375) and ``eps`` (line 520: never waited, ordered behind the ``scaler_global`` wait because the writer pushes
    eps first) in place (``Compute.in_place``, docs/semantics.md "Reads in place").

    Transcribed with these differences, each because the format cannot say the vendor's statement (README,
    "Sharded layernorm"): the loops over the remote cores
    (sender 178, 244, 271; receiver 179) are written out, one op per core, since a ``RemoteRead`` names one site and a
    ``McastSend`` one offset. ``reduce_second_stage`` (unused with one stage) is not declared.

    ``handshake`` False is the broken variant: the receiver gathers the partials before it waits for the sender's
    VALID (line 157 moved after the gather, line 191), so it may read the sender's partial before the sender's compute
    pushed it (``remote-read-unpublished``)."""
    snd, rcv, cm = Kernel(LN_SENDER), Kernel(LN_RECEIVER), Kernel(LN_COMPUTE)
    rc, sd, bc = Kernel(REDUCE_COMPUTE), Kernel(REDUCE_DATAFLOW), Kernel(BCAST_SCALAR)
    sites = (Site(0, 0), Site(1, 0))
    n = len(LN_BUFFERS)
    ids = {nm: k for k, (nm, _, _) in enumerate(LN_BUFFERS)}
    block_h, cols = 2, 2
    sender_sem, receiver_sem = 0, 1
    group = 0
    buffers: list[Buffer] = []
    programs: list[EngineProgram] = []
    for i, site in enumerate(sites):
        def b(nm: str, i: int = i) -> int:
            return n * i + ids[nm]
        for nm, cb, cap in LN_BUFFERS:
            shard = (Shard("x", i, 1, cols, block_h) if nm == "in0"
                     else Shard("y", i, 1, cols, block_h) if nm == "out" else None)
            buffers.append(Buffer(b(nm), nm, site, cb, 1, cap, "bf16", shard=shard))

        # -- writer: the constant tiles (lines 62-83; SKIP_WRITE_BACK: nothing else) --
        def scaler(buf: int) -> tuple[Line, ...]:
            return (sd(163, "dfb.reserve_back(1);", Reserve(buf, 1)),
                    sd(176, "fill_each_face_row0<data_format, num_faces>(addr_to_l1_ptr(write_addr), scaler);",
                       FillTiles(buf, 1, "reduce_scaler")),
                    sd(203, "dfb.push_back(1);", Push(buf, 1)))
        programs.append(engine(
            site, Engine.WRITER,
            *scaler(b("scaler")),
            bc(16, "dfb.reserve_back(1);", Reserve(b("eps"), 1)),
            bc(21, "ptr[idx + j] = scalar_val;", FillTiles(b("eps"), 1, "bcast_scalar")),
            bc(24, "dfb.push_back(1);", Push(b("eps"), 1)),
            *scaler(b("scaler_global"))))

        # -- compute (layernorm_sharded.cpp) --
        def row_reduce(src: tuple[Operand, ...], out: int, resident: tuple[InPlace, ...] = ()) -> Line:
            # compute_kernel_lib::reduce<AVG, REDUCE_ROW, ..., NoWaitNoPop> (reduce_helpers_compute.inl:399-558):
            # block_h rows of num_reduce_tiles_per_block_h = 1 tile, indexed access (tile wt + index_offset, the
            # offset growing by the row stride block_w = 1 per row: 539, 567), one output tile per row.
            return rc.loop(493, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", block_h,
                           rc(499, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                           rc.loop(512, "for (uint32_t wt = 0; wt < Wt; ++wt) {", "wt", 1,
                                   rc(538, "reduce_tile<reduce_type, reduce_dim>(",
                                      Compute("reduce_tile_avg_row", 1, (*src, Operand(b("scaler"), 1)),
                                              resident))),
                           rc(553, "output_dfb.reserve_back(onetile);", Reserve(out, 1)),
                           rc(556, "pack_tile(dst_idx, output_dfb_id);", PackAcc(out, 1)),
                           rc(557, "tile_regs_release();", ReleaseAcc()),
                           rc(558, "output_dfb.push_back(onetile);", Push(out, 1)))

        def global_reduce(lines: tuple[int, ...], external: str, ex: str) -> tuple[Line, ...]:
            # lines 311-332 (E[x]) and 479-501 (Var): num_tiles_per_allgather_worker = 1, num_blocks_reduce = 2.
            rsv, loop, wait_s, acq, wloop, wait_e, red, pop_e, pk, rel, push = lines
            two = "2" if ex == "ex2" else ""
            return (
                cm(rsv, f"dfb_ex{two}.reserve_back(static_cast<uint16_t>(num_tiles_per_allgather_worker));",
                   Reserve(b(ex), 1)),
                cm.loop(loop, "for (uint32_t i = 0; i < num_tiles_per_allgather_worker; i++) {", "i", 1,
                        cm(wait_s, "dfb_scaler_global.wait_front(1);", Wait(b("scaler_global"), 1)),
                        cm(acq, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                        cm.loop(wloop, "for (uint32_t w = 0; w < num_blocks_reduce; w++) {", "w", 2,
                                cm(wait_e, f"dfb_ex_external{two}.wait_front(1);", Wait(b(external), 1)),
                                cm(red, "reduce_tile<PoolType::AVG, ReduceDim::REDUCE_ROW>(", Compute(
                                    "reduce_tile_avg_row", 1,
                                    (Operand(b(external), 1), Operand(b("scaler_global"), 1)))),
                                cm(pop_e, f"dfb_ex_external{two}.pop_front(1);", Pop(b(external), 1))),
                        cm(pk, f"pack_tile(dst0, dfb_ex{two}_id);", PackAcc(b(ex), 1)),
                        cm(rel, "tile_regs_release();", ReleaseAcc())),
                cm(push, f"dfb_ex{two}.push_back(static_cast<uint16_t>(num_tiles_per_allgather_worker));",
                   Push(b(ex), 1)))

        def block(lines: tuple[int, ...], text: str, out: int, *compute: Line, wait: Line | None = None,
                  pop: Line | None = None) -> Line:
            # for i < block_h { [wait]; for j < num_subblocks_w { acquire; for w < subblock_w {..}; pack; release } [pop] }
            iloop, jloop, acq, wloop, dloop, pk, rel = lines
            inner = cm.loop(jloop, "for (uint32_t j = 0; j < num_subblocks_w; j++) {", "j", 1,
                            cm(acq, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                            cm.loop(wloop, "for (uint32_t w = 0; w < subblock_w; w++) {", "w", 1, *compute),
                            cm.loop(dloop, "for (uint32_t dst_i = 0; dst_i < subblock_w; dst_i++) {", "d", 1,
                                    cm(pk, text, PackAcc(out, 1))),
                            cm(rel, "tile_regs_release();", ReleaseAcc()))
            body = tuple(x for x in (wait, inner, pop) if x is not None)
            return cm.loop(iloop, "for (uint32_t i = 0; i < block_h; i++) {", "i", block_h, *body)

        exg = b("ex_global")
        programs.append(engine(
            site, Engine.COMPUTE,
            # E[x]: the reduce helper reads in0 by index (NoWaitNoPop, lines 286-295): the resident input shard,
            # nothing pushes or waits it (373-375), read in place at tile ht * block_w + wt
            rc(399, "scaler_dfb.wait_front(1);  // Wait for scaler tile", Wait(b("scaler"), 1)),
            row_reduce((), b("ex_partial"), (InPlace(b("in0"), 0, (Term("ht", 1), Term("wt", 1))),)),
            *global_reduce((311, 313, 314, 315, 316, 317, 318, 320, 328, 329, 332), "ex_external", "ex"),
            # x - E[x] (lines 349-381)
            cm(349, "dfb_xmm.reserve_back(num_tiles_per_block);", Reserve(b("xmm"), 2)),
            block((350, 353, 354, 355, 361, 362, 364), "pack_tile(dst_i, dfb_xmm_id);", b("xmm"),
                  cm(357, "sub_tiles_bcast_cols(dfb_in_id, dfb_ex_global_id, index, 0, w);",
                     Compute("sub_tiles_bcast_cols", 1, (Operand(exg, 1),),
                             # index = w + index_subblock_w_offset + index_h_offset (356): in0 in place
                             (InPlace(b("in0"), 0, (Term("i", 1), Term("j", 1), Term("w", 1))),))),
                  wait=cm(352, "dfb_ex_global.wait_front(1);", Wait(exg, 1)),
                  pop=cm(367, "dfb_ex_global.pop_front(1);", Pop(exg, 1))),
            cm(380, "dfb_xmm.push_back(num_tiles_per_block);", Push(b("xmm"), 2)),
            cm(381, "dfb_xmm.wait_front(num_tiles_per_block);", Wait(b("xmm"), 2)),
            # (x - E[x])^2 (lines 410-429)
            cm(410, "dfb_xmm2.reserve_back(num_tiles_per_block);", Reserve(b("x"), 2)),
            block((411, 413, 414, 415, 421, 422, 424), "pack_tile(dst_i, dfb_xmm2_id);", b("x"),
                  cm(417, "mul_tiles(dfb_xmm_id, dfb_xmm_id, index, index, w);",
                     Compute("mul_tiles", 1, (Operand(b("xmm"), 2),)))),
            cm(429, "dfb_xmm2.push_back(num_tiles_per_block);", Push(b("x"), 2)),
            cm(447, "dfb_xmm2.wait_front(num_tiles_per_block);", Wait(b("x"), 2)),
            # Var(x) (line 456: the same helper over xmm2)
            rc(399, "scaler_dfb.wait_front(1);  // Wait for scaler tile", Wait(b("scaler"), 1)),
            row_reduce((Operand(b("x"), 2),), b("ex_partial2")),
            cm(467, "dfb_xmm2.pop_front(num_tiles_per_block);", Pop(b("x"), 2)),
            *global_reduce((479, 481, 482, 484, 485, 486, 487, 489, 497, 498, 501), "ex_external2", "ex2"),
            # 1/sqrt(Var + eps) (lines 514-533, enable_sqrt): eps read in place at index 0 with no wait, ordered
            # behind the scaler_global wait (314) because the writer pushes eps first
            cm(514, "dfb_ex2.wait_front(static_cast<uint16_t>(num_tiles_per_allgather_worker));", Wait(b("ex2"), 1)),
            cm.loop(515, "for (uint32_t i = 0; i < num_tiles_per_allgather_worker; i++) {", "i", 1,
                    cm(517, "dfb_ex2pe.reserve_back(1);", Reserve(b("ex2pe"), 1)),
                    cm(518, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                    cm(520, "add_tiles(dfb_ex2_id, dfb_eps, i, 0, dst0);",
                       Compute("add_tiles", 1, (Operand(b("ex2"), 1),), (InPlace(b("eps"), 0),))),
                    cm(523, "rsqrt_tile(dst0);", Compute("rsqrt_tile", 1)),
                    cm(526, "pack_tile(dst0, dfb_ex2pe_id);", PackAcc(b("ex2pe"), 1)),
                    cm(527, "dfb_ex2pe.push_back(1);", Push(b("ex2pe"), 1)),
                    cm(528, "tile_regs_release();", ReleaseAcc())),
            cm(533, "dfb_ex2.pop_front(static_cast<uint16_t>(num_tiles_per_allgather_worker));", Pop(b("ex2"), 1)),
            # (x - E[x]) * 1/sqrt(Var + eps) into out (dfb_im: no gamma, no beta; lines 554-593)
            cm(554, "dfb_im.reserve_back(num_tiles_per_block);", Reserve(b("out"), 2)),
            block((555, 558, 559, 560, 577, 578, 580), "pack_tile(dst_i, dfb_im_id);", b("out"),
                  cm(562, "mul_tiles_bcast_cols(dfb_xmm_id, dfb_ex_global_id, index, 0, w);",
                     Compute("mul_tiles_bcast_cols", 1, (Operand(b("xmm"), 2), Operand(exg, 1)))),
                  wait=cm(557, "dfb_ex_global.wait_front(1);", Wait(exg, 1)),
                  pop=cm(585, "dfb_ex_global.pop_front(1);", Pop(exg, 1))),
            cm(587, "dfb_im.push_back(num_tiles_per_block);", Push(b("out"), 2)),
            cm(593, "dfb_xmm.pop_front(num_tiles_per_block);", Pop(b("xmm"), 2)),
            cm(702, "dfb_scaler.pop_front(1);", Pop(b("scaler"), 1)),
            cm(707, "dfb_scaler_global.pop_front(1);", Pop(b("scaler_global"), 1))))

        # -- readers --
        def sender(partial: str, external: str, ex: str, exg: int = exg) -> tuple[Line, ...]:
            k = snd
            gather_partials = tuple(
                k(179, "noc.async_read<NocOptions::DEFAULT, NOC_MAX_BURST_SIZE>(",
                  RemoteRead(b(partial), sites[blk], 1, b(external), 0)) for blk in range(2))
            gather_ex = tuple(
                k(249, "noc.async_read<NocOptions::DEFAULT, NOC_MAX_BURST_SIZE>(",
                  RemoteRead(b(ex), sites[blk], 1, exg, 0)) for blk in range(2))
            mcast: list[Line] = []
            for blk in range(2):
                mcast += [k(272, "reduce_sender_sem.set(block + 2);", SemSet(sender_sem, blk + 2)),
                          # The source is the read pointer taken before the push (267) plus the block's offset
                          # (dataflow_buffer.h:595-603): block_h pages behind the write pointer once pushed.
                          k(278, "noc.async_write_multicast(", McastSend(exg, 1, group, 1, offset=blk,
                                                                           behind=block_h)),
                          k(290, "reduce_sender_sem.set_multicast(", McastSetValid(sender_sem, group, 1)),
                          k(299, "noc.async_write_barrier();", WriteBarrier())]
            return (
                k(135, "dfb_partial_obj.wait_front(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Wait(b(partial), block_h)),
                k(138, "reduce_sender_sem.set(VALID);", SemSet(sender_sem, 1)),
                k(139, "reduce_receiver_sem.wait(num_blocks - 1);", SemWait(receiver_sem, WaitCond.EQ, 1)),
                k(140, "reduce_receiver_sem.set(0);", SemSet(receiver_sem, 0)),
                k(141, "reduce_sender_sem.set_multicast(", McastSetValid(sender_sem, group, 1)),
                k.loop(175, "for (uint32_t i = 0; i < num_tiles_per_worker; ++i) {", "i", 1,
                       k(176, "dfb_external_obj.reserve_back(static_cast<uint16_t>(num_blocks_first_stage * "
                              "num_tiles_scaler));", Reserve(b(external), 2)),
                       *gather_partials,
                       k(188, "noc.async_read_barrier();", ReadBarrier()),
                       k(189, "dfb_external_obj.push_back(static_cast<uint16_t>(num_blocks_first_stage * "
                              "num_tiles_scaler));", Push(b(external), 2))),
                k(225, "dfb_ex_obj.wait_front(static_cast<uint16_t>(num_tiles_per_worker * num_tiles_scaler));",
                  Wait(b(ex), 1)),
                k(226, "dfb_partial_obj.pop_front(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Pop(b(partial), block_h)),
                k(229, "reduce_receiver_sem.wait(num_all_to_all_workers_first_stage - 1);",
                  SemWait(receiver_sem, WaitCond.EQ, 1)),
                k(230, "reduce_receiver_sem.set(0);", SemSet(receiver_sem, 0)),
                k(239, "dfb_ex_global_obj.reserve_back(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Reserve(exg, block_h)),
                *gather_ex,
                k(265, "noc.async_read_barrier();", ReadBarrier()),
                k(268, "dfb_ex_global_obj.push_back(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Push(exg, block_h)),
                *mcast,
                k(308, "dfb_ex_obj.pop_front(static_cast<uint16_t>(num_tiles_per_worker * num_tiles_scaler));",
                  Pop(b(ex), 1)))

        def receiver(partial: str, external: str, ex: str, exg: int = exg) -> tuple[Line, ...]:
            k = rcv
            wait_valid = k(157, "reduce_sender_sem.wait(VALID);", SemWait(sender_sem, WaitCond.EQ, 1))
            gather = k.loop(
                176, "for (uint32_t i = 0; i < num_tiles_to_read; i++) {", "i", 1,
                k(177, "dfb_external_obj.reserve_back(static_cast<uint16_t>(num_blocks_first_stage * "
                       "num_tiles_scaler));", Reserve(b(external), 2)),
                *(k(180, "noc.async_read<NocOptions::DEFAULT, NOC_MAX_BURST_SIZE>(",
                    RemoteRead(b(partial), sites[blk], 1, b(external), 1)) for blk in range(2)),
                k(191, "noc.async_read_barrier();", ReadBarrier()),
                k(192, "dfb_external_obj.push_back(static_cast<uint16_t>(num_blocks_first_stage * "
                       "num_tiles_scaler));", Push(b(external), 2)))
            handshake_part = (wait_valid, gather) if handshake else (gather, wait_valid)
            return (
                k(153, "dfb_partial_obj.wait_front(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Wait(b(partial), block_h)),
                k(155, "reduce_sender_sem.set(INVALID);", SemSet(sender_sem, 0)),
                k(156, "reduce_receiver_sem.up(noc, in0_remote_noc_x[0], in0_remote_noc_y[0], 1);",
                  SemInc(receiver_sem, sites[0], 1)),
                *handshake_part,
                k(247, "dfb_ex_obj.wait_front(static_cast<uint16_t>(num_tiles_to_read * num_tiles_scaler));",
                  Wait(b(ex), 1)),
                k(248, "reduce_receiver_sem.up(noc, in0_remote_noc_x[0], in0_remote_noc_y[0], 1);",
                  SemInc(receiver_sem, sites[0], 1)),
                k.loop(255, "for (uint32_t block = 0; block < num_all_to_all_workers; ++block) {", "block", 2,
                       k(258, "dfb_ex_global_obj.reserve_back(static_cast<uint16_t>(num_tiles * num_tiles_scaler));",
                         Reserve(exg, 1)),
                       k(259, "reduce_sender_sem.wait_min(block + 2);",
                         SemWait(sender_sem, WaitCond.GE, 2, (Term("block", 1),))),
                       k(260, "dfb_ex_global_obj.push_back(static_cast<uint16_t>(num_tiles * num_tiles_scaler));",
                         Push(exg, 1))),
                k(266, "dfb_partial_obj.pop_front(static_cast<uint16_t>(block_h * num_tiles_scaler));",
                  Pop(b(partial), block_h)),
                k(277, "dfb_ex_obj.pop_front(static_cast<uint16_t>(num_tiles_to_read * num_tiles_scaler));",
                  Pop(b(ex), 1)))

        passes = (("ex_partial", "ex_external", "ex"), ("ex_partial2", "ex_external2", "ex2pe"))
        body = sender if i == 0 else receiver
        programs.append(engine(site, Engine.READER, *(ln for p in passes for ln in body(*p))))
    bufs = tuple(buffers)
    shape = (32 * block_h, 32 * cols)
    return Program(name, WORMHOLE,
                   tensors=(Tensor("x", shape, "bf16", Role.INPUT), Tensor("y", shape, "bf16", Role.OUTPUT)),
                   buffers=bufs,
                   # SEM_REDUCE_SENDER / SEM_REDUCE_RECEIVER on every core, set by the host at each launch
                   semaphores=(Semaphore(sender_sem, "reduce_sender", sites, 0, SemRole.COUNTER, host_init=True),
                               Semaphore(receiver_sem, "reduce_receiver", sites, 0, SemRole.COUNTER,
                                         host_init=True)),
                   groups=(Group(group, sites[0], (0, 0, 1, 0)),),
                   programs=tuple(programs), memory=pack(bufs))


# ---------------------------------------------------------------------------------------------------------
# 5. TT-Lang's multinode matmul tutorial, read by the TT-Lang front end
# ---------------------------------------------------------------------------------------------------------


def ttlang_root() -> Path | None:
    """The unpacked tt-lang-sim 1.1.6 wheel (its ``ttl/tutorials``): ``$VERISPATIAL_TTLANG``, else the tests' cache
    (``$VERISPATIAL_VENDOR_CACHE``/tt-lang-sim-1.1.6); None when neither holds the tutorial."""
    cache = Path(os.environ.get("VERISPATIAL_VENDOR_CACHE", Path.home() / ".cache" / "verispatial" / "vendor"))
    for root in (os.environ.get("VERISPATIAL_TTLANG"), cache / "tt-lang-sim-1.1.6"):
        if root and (Path(root) / TTLANG_MATMUL).is_file():
            return Path(root)
    return None


def multinode_matmul(root: Path | None, committed: Path) -> Program:
    """TT-Lang's ``matmul/step_3_multinode.py`` at the tutorial's own shapes, imported by the TT-Lang front end
    (exact for it: README "TT-Lang"), its source table named repository-relative (``ttl/tutorials/...``). Without
    the tutorial (``root`` None) the committed file."""
    if root is None:
        return loads(committed.read_text(encoding="utf-8"))
    from verispatial.frontends.ttlang import import_file

    (imp,) = import_file(str(root / TTLANG_MATMUL))
    where = str(root / TTLANG_MATMUL)
    progs = tuple(attrs.evolve(ep, sources=tuple(
        (p, attrs.evolve(loc, file=TTLANG_MATMUL) if loc.file == where else loc) for p, loc in ep.sources))
        for ep in imp.program.programs)
    return attrs.evolve(imp.program, name="ttlang_multinode_matmul", programs=progs)


# ---------------------------------------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------------------
# tt-metal's contributed multicast example (not in the wheel: the tt-metal repository at the commits below)
# ---------------------------------------------------------------------------------------------------------

#: The example's kernels, as tt-metal's host code names them (``multicast.cpp``), and the commits read
#: (examples/vendor/README.md, "The contributed multicast example").
MCAST_EXAMPLE = "tt_metal/programming_examples/contributed/multicast/kernels/dataflow"
COORDINATOR = f"{MCAST_EXAMPLE}/coordinator_kernel.cpp"
INBOUND = f"{MCAST_EXAMPLE}/inbound_kernel.cpp"
OUTBOUND = f"{MCAST_EXAMPLE}/outbound_kernel.cpp"
TT_METAL_COMMITS: dict[str, str] = {
    COORDINATOR: "182752ce268e44fa116bf29d2f177865a90e88ac",
    INBOUND: "1c7215148e847c7f47b73e018707e5971c8c826b",
    OUTBOUND: "04b3405067aa1e0a4f142aad0f7d3937337f0e12",
}


def contributed_multicast(name: str = "contributed_multicast_as_shipped", drain: bool = False,
                          contract: bool = False) -> Program:
    """tt-metal's contributed multicast example whole (``multicast.cpp``): c_0 and c_16 (one bf16 page each) and
    the semaphores ``sender`` and ``receiver`` (both 0) on (0,0)-(3,0); the coordinator (RISCV_0: the writer
    engine) on (0,0), the inbound (RISCV_0) and outbound (RISCV_1: the reader engine) kernels on (1,0)-(3,0),
    ``num_dests`` = 3; the void compute kernel issues nothing (no engine program).

    The coordinator reads the tile from DRAM into ``get_write_ptr(c_0)`` (28, 31), waits for it (32), pushes it (38),
    waits for the three receivers' increments and resets its word (45, 48), multicasts the page it pushed from the
    address it took before the push (58: ``McastSend.behind`` = 1, a row 4 form), stores VALID in its ``receiver``
    word and multicasts it (61, 64) and waits for both writes (66). Each inbound kernel reserves c_0 (36), sets its
    ``receiver`` word INVALID (37), increments the coordinator's ``sender`` word (41), waits for VALID (44), pushes
    c_0 (59), reserves c_16 (67), copies c_0's page into it with L1 loads and stores (68, ``copy_tile_between_cb``
    at 9-15: ``CopyTiles``) and pushes c_16 (69); each outbound kernel waits c_16 (18), writes its page to DRAM
    tile ``tile_offset`` (23), waits for the write (24) and pops (26). Neither c_0 is popped: one launch.

    As the commits read have it (``drain`` false, ``contract`` false), the kernels break the documented contract
    (``dataflow_api.h:309-312, 331-334``, ttnn 0.81.1: ``get_write_ptr`` is valid between ``cb_reserve_back`` and
    ``cb_push_back``, ``get_read_ptr`` between ``cb_wait_front`` and ``cb_pop_front``): the coordinator reads into c_0
    and pushes it with no reserve (31, 38), the receivers copy from c_0 with no wait (68); each receiver's
    ``noc_semaphore_inc`` (41, non-posted) is never followed by an atomic barrier (#40879's class); and the push of
    c_16 (69) right after the copy's stores is tt-metal PR #50183's race (its fix: a blocking load of the last word
    written before the push). ``drain``: the copy with PR #50183's fix (the commit read does not have it; cited at
    68). ``contract``: the statements the contract asks for added where the kernels leave them out (not the vendor's
    code, each cited at the line it guards): ``cb_reserve_back(c_0)`` before the read, ``cb_wait_front(c_0)`` before
    the copy, ``noc_async_atomic_barrier()`` after the increment."""
    co, ib, ob = Kernel(COORDINATOR), Kernel(INBOUND), Kernel(OUTBOUND)
    coord = Site(0, 0)
    recv = tuple(Site(1 + i, 0) for i in range(3))
    sites = (coord, *recv)
    c0 = {s: 2 * i for i, s in enumerate(sites)}
    c16 = {s: 2 * i + 1 for i, s in enumerate(sites)}
    buffers = tuple(b for s in sites for b in (Buffer(c0[s], "c_0", s, 0, 1, 1, "bf16"),
                                               Buffer(c16[s], "c_16", s, 16, 1, 1, "bf16")))
    sender_sem, receiver_sem = 0, 1
    sems = (Semaphore(sender_sem, "sender", sites, 0, SemRole.MCAST_READY),
            Semaphore(receiver_sem, "receiver", sites, 0, SemRole.MCAST_VALID))
    group = 0
    tensors = (_tensor("src0", 1, Role.INPUT), _tensor("output", 3, Role.OUTPUT))
    reserve = [co(28, "uint32_t tile_l1_addr = get_write_ptr(cb_id_in0);", Reserve(c0[coord], 1))] if contract else []
    coordinator = engine(
        coord, Engine.WRITER, *reserve,
        co(31, "noc_async_read(src0_dram_noc_addr, tile_l1_addr, ublock_size_bytes);",
           ReadTiles("src0", Addr(0), 1, c0[coord])),
        co(32, "noc_async_read_barrier();", ReadBarrier()),
        co(38, "cb_push_back(cb_id_in0, 1);", Push(c0[coord], 1)),
        co(45, "noc_semaphore_wait(sender_addr_ptr, num_dests);", SemWait(sender_sem, WaitCond.EQ, 3)),
        co(48, "noc_semaphore_set(sender_addr_ptr, 0);", SemSet(sender_sem, 0)),
        co(58, "noc_async_write_multicast(tile_l1_addr, identity_tile_global_multicast_addr, single_tile_size, "
               "num_dests);", McastSend(c0[coord], 1, group, 3, behind=1)),
        co(61, "*(receiver_addr_ptr) = VALID;", SemSet(receiver_sem, 1)),
        co(64, "noc_semaphore_set_multicast(receiver_addr, validity_global_multicast_addr, num_dests);",
           McastSetValid(receiver_sem, group, 3)),
        co(66, "noc_async_write_barrier();", WriteBarrier()))
    programs = [coordinator]
    for i, s in enumerate(recv):
        barrier = [ib(41, "noc_semaphore_inc(remote_sender_semaphore_noc_addr, 1);", AtomicBarrier())] if contract \
            else []
        wait = [ib(68, "copy_tile_between_cb(get_read_ptr(cb_id_in0), get_write_ptr(cb_id_out0), "
                       "ublock_size_bytes);", Wait(c0[s], 1))] if contract else []
        programs.append(engine(
            s, Engine.WRITER,
            ib(36, "cb_reserve_back(cb_id_in0, 1);", Reserve(c0[s], 1)),
            ib(37, "noc_semaphore_set(receiver_addr_ptr, INVALID);", SemSet(receiver_sem, 0)),
            ib(41, "noc_semaphore_inc(remote_sender_semaphore_noc_addr, 1);", SemInc(sender_sem, coord, 1)),
            *barrier,
            ib(44, "noc_semaphore_wait(receiver_addr_ptr, VALID);", SemWait(receiver_sem, WaitCond.EQ, 1)),
            ib(59, "cb_push_back(cb_id_in0, 1);", Push(c0[s], 1)),
            ib(67, "cb_reserve_back(cb_id_out0, 1);", Reserve(c16[s], 1)),
            *wait,
            ib(68, "copy_tile_between_cb(get_read_ptr(cb_id_in0), get_write_ptr(cb_id_out0), ublock_size_bytes);",
               CopyTiles(c0[s], c16[s], 1, drain)),
            ib(69, "cb_push_back(cb_id_out0, 1);", Push(c16[s], 1))))
        programs.append(engine(
            s, Engine.READER,
            ob(18, "cb_wait_front(cb_id_out0, 1);", Wait(c16[s], 1)),
            ob(23, "noc_async_write_page(dram_tile_id, dram_writer, l1_read_addr);",
               WriteTiles(c16[s], "output", Addr(i), 1)),
            ob(24, "noc_async_write_barrier();", WriteBarrier()),
            ob(26, "cb_pop_front(cb_id_out0, 1);", Pop(c16[s], 1))))
    return Program(name, WORMHOLE, tensors=tensors, buffers=buffers, semaphores=sems,
                   groups=(Group(group, coord, (1, 0, 3, 0)),), programs=tuple(programs), memory=pack(buffers))


BUILDERS: dict[str, Callable[[], Program]] = {
    "eltwise_binary.json": eltwise_binary,
    "eltwise_binary_sharded.json": eltwise_binary_sharded,
    "broken/eltwise_binary_sharded_cb_overrun.json": lambda: eltwise_binary_sharded(
        "eltwise_binary_sharded_cb_overrun", out_rows=1),
    "broken/move_overlap_atomic_pending.json": move_overlap,
    "broken/move_overlap_num_dests.json": move_overlap_num_dests,
    "broken/sampling_wt1_wait2.json": sampling_wt1,
    "softmax_w.json": softmax,
    "sort_exchange_wait_min.json": sort_exchange,
    "broken/sort_exchange_exact_wait.json": lambda: sort_exchange("sort_exchange_exact_wait", exact=True),
    "broken/argmax_start_exact_wait.json": argmax_start,
    "argmax_start_wait_min.json": lambda: argmax_start("argmax_start_wait_min", exact=False),
    "sort_exchange_data.json": sort_exchange_data,
    "layernorm_sharded.json": layernorm_sharded,
    "broken/layernorm_sharded_read_before_valid.json": lambda: layernorm_sharded(
        "layernorm_sharded_read_before_valid", handshake=False),
    "dispatch_mailbox.json": lambda: dispatch_mailbox("dispatch_mailbox", barrier=True),
    "broken/dispatch_mailbox_no_barrier.json": dispatch_mailbox,
    "contributed_multicast.json": lambda: contributed_multicast("contributed_multicast", drain=True, contract=True),
    "broken/contributed_multicast_as_shipped.json": contributed_multicast,
}


def build_vendor() -> dict[str, Program]:
    """Every vendor example, keyed by its path relative to ``examples/vendor/``."""
    out = {rel: f() for rel, f in BUILDERS.items()}
    out["ttlang_multinode_matmul.json"] = multinode_matmul(ttlang_root(), HERE / "ttlang_multinode_matmul.json")
    return dict(sorted(out.items()))


def vendor_lines(p: Program) -> list[tuple[str, int, str]]:
    """Every (file, line, text) the program's source tables cite (the check against the vendor files)."""
    return sorted({(loc.file, loc.line, loc.text) for ep in p.programs for _, loc in ep.sources})



# ---------------------------------------------------------------------------------------------------------
# SDPA decode's cur_pos page: two consumers of one buffer (tt-metal #44366, fixed by PR #45142)
# ---------------------------------------------------------------------------------------------------------

SDPA_DECODE = f"{OPS}/transformer/sdpa_decode/device/kernels"
SDPA_READER = f"{SDPA_DECODE}/dataflow/reader_decode_all.cpp"
SDPA_WRITER = f"{SDPA_DECODE}/dataflow/writer_decode_all.cpp"
SDPA_COMPUTE = f"{SDPA_DECODE}/compute/sdpa_flash_decode.cpp"

#: The statements before tt-metal PR #45142 (read at tenstorrent/tt-metal forks' history: the reader and compute
#: kernels at TT-nking/tt-metal 2c57767d2011c09a50816ed407643a77ecd17838, the writer at 2ec8a6b5533f53dff360c5508261c320a58b7205,
#: the same statements as Dairus01/tt-metal 6752a0da1fcc50a64da0fac1b453f89424034567), each at the line of the
#: 0.81.1 wheel that holds its fixed form: one buffer, ``cb_index_id = tt::CBIndex::c_8``, for both consumers.
PRE_FIX.update({
    (SDPA_READER, 128): ("cb_reserve_back(cb_index_id, 1);", "cb_writer.reserve_back(1);"),
    (SDPA_READER, 133): ("noc_async_read(tensor_index_noc_addr, index_cb_wr_ptr, index_stick_size_B);",
                         "noc.async_read(addrg, CoreLocalMem<uint32_t>(index_cb_wr_ptr), index_stick_size_B,"),
    (SDPA_READER, 134): ("noc_async_read_barrier();", "noc.async_read_barrier();"),
    (SDPA_READER, 150): ("cb_push_back(cb_index_id, 1);", "cb_writer.push_back(1);"),
    (SDPA_WRITER, 123): ("cb_wait_front(cb_index_id, 1);", "cb_index.wait_front(1);"),
    (SDPA_COMPUTE, 173): ("cb_wait_front(cb_index_id, 1);", "CircularBuffer(cb_cur_pos).wait_front(1);"),
    (SDPA_COMPUTE, 184): ("cb_pop_front(cb_index_id, 1);", "CircularBuffer(cb_cur_pos).pop_front(1);"),
})


def sdpa_cur_pos(name: str = "sdpa_decode_cur_pos", fixed: bool = True) -> Program:
    """The ``cur_pos`` hand-off of SDPA decode (``ttnn.transformer.scaled_dot_product_attention_decode``, causal, the
    positions given as an interleaved ``cur_pos_tensor``: ``cur_pos_arg == UINT32_MAX``, ``spec_multi_pos`` off) on
    one core: the reader reads the one page of the position tensor into a circular buffer, the writer and compute
    each wait for it and read this batch's position from it.

    ``fixed`` (the 0.81.1 wheel, tt-metal PR #45142): one buffer per consumer. The reader reserves c_8
    (``reader_decode_all.cpp:128``), reads the page (133) and waits for it (134), reserves c_15 (137), copies the
    stick into it by a NoC read from its own L1 (143-148) and waits (149), and pushes both (150-151); the writer waits
    for c_8, reads its entry and pops it (``writer_decode_all.cpp:123, 145, 147``), compute waits for c_15, reads
    its entry by ``read_tile_value`` and pops it (``sdpa_flash_decode.cpp:173, 182, 184``).

    ``fixed`` False, the form tt-metal #44366 reports (``PRE_FIX``): the reader fills and pushes c_8 alone, compute
    waits for it and pops it, the writer waits for it and never pops — so if compute pops before the writer's
    ``cb_wait_front`` reads the shared ``tiles_acked``, the writer waits forever for a page no one will push
    (docs/semantics.md, "Several engines waiting on one buffer").

    A slice: the ops on the position buffers only. Left out, because no op says them: the L1 loads of the position
    (the writer's ``index_ptr[...]``, line 145, and the reader's own load after its push, 170: plain loads, README
    row 1) and compute's ``read_tile_value`` (182: a scalar read of a tile, ``api/compute/cb_api.h:140``), and
    everything the position then decides (the KV chunk range, the causal mask, the tree reduction: control flow on a
    value read at run time, row 8). They change no buffer counter, so the waits and pops alone decide the hang.
    Said differently: the copy into c_15 (143-148, ``UnicastEndpoint`` at this core's own NoC coordinates, source
    address c_8's write pointer) reads c_8's reserved back, which no op reads (a ``RemoteRead`` reads published
    pages); it is a ``ReadTiles`` of page 0 of ``cur_pos``, the bytes c_8's page holds after the barrier at 134.
    Capacities: one page each, as the kernels reserve them (the program factory is not in the wheel); one page of
    the row-major ``[B]`` int32 tensor is one int32 page here."""
    rd, wr, cm = Kernel(SDPA_READER), Kernel(SDPA_WRITER), Kernel(SDPA_COMPUTE)
    site = Site(0, 0)
    c8, c15 = 0, 1

    def pre(file: str, line: int, fixed_text: str) -> str:
        return fixed_text if fixed else PRE_FIX[(file, line)][0]

    cur_pos = c15 if fixed else c8  # the buffer compute waits on and pops
    reader_ops = [
        rd(128, pre(SDPA_READER, 128, "cb_writer.reserve_back(1);"), Reserve(c8, 1)),
        rd(133, pre(SDPA_READER, 133, "noc.async_read(addrg, CoreLocalMem<uint32_t>(index_cb_wr_ptr), "
                                      "index_stick_size_B, {.page_id = 0}, {});"),
           ReadTiles("cur_pos", Addr(0), 1, c8)),
        rd(134, pre(SDPA_READER, 134, "noc.async_read_barrier();"), ReadBarrier())]
    if fixed:
        reader_ops += [
            rd(137, "cb_compute.reserve_back(1);", Reserve(c15, 1)),
            rd(143, "noc.async_read(", ReadTiles("cur_pos", Addr(0), 1, c15)),
            rd(149, "noc.async_read_barrier();", ReadBarrier())]
    reader_ops.append(rd(150, pre(SDPA_READER, 150, "cb_writer.push_back(1);"), Push(c8, 1)))
    if fixed:
        reader_ops.append(rd(151, "cb_compute.push_back(1);", Push(c15, 1)))
    writer_ops = [wr(123, pre(SDPA_WRITER, 123, "cb_index.wait_front(1);"), Wait(c8, 1))]
    if fixed:
        writer_ops.append(wr(147, "cb_index.pop_front(1);", Pop(c8, 1)))
    compute_ops = [
        cm(173, pre(SDPA_COMPUTE, 173, "CircularBuffer(cb_cur_pos).wait_front(1);"), Wait(cur_pos, 1)),
        cm(184, pre(SDPA_COMPUTE, 184, "CircularBuffer(cb_cur_pos).pop_front(1);"), Pop(cur_pos, 1))]
    buffers = [Buffer(c8, "cb_writer_cur_pos" if fixed else "cb_index_id", site, 8, 1, 1, "int32")]
    if fixed:
        buffers.append(Buffer(c15, "cb_compute_cur_pos", site, 15, 1, 1, "int32"))
    bufs = tuple(buffers)
    return Program(name, WORMHOLE, tensors=(Tensor("cur_pos", (32, 32), "int32", Role.INPUT),), buffers=bufs,
                   programs=(engine(site, Engine.READER, *reader_ops), engine(site, Engine.COMPUTE, *compute_ops),
                             engine(site, Engine.WRITER, *writer_ops)),
                   memory=pack(bufs))


BUILDERS.update({
    "sdpa_decode_cur_pos.json": sdpa_cur_pos,
    "broken/sdpa_decode_cur_pos_shared.json": lambda: sdpa_cur_pos("sdpa_decode_cur_pos_shared", fixed=False),
})


# ---------------------------------------------------------------------------------------------------------
# Softmax along W with the fused scale and the attention mask (FUSED_SCALE_MASK, with and without CAUSAL_MASK)
# ---------------------------------------------------------------------------------------------------------

BCAST_SCALAR_LEGACY = "ttnn/kernel/dataflow/generate_bcast_scalar.hpp"


def _acc_block(c: Kernel, blk: int, compute: tuple[Line, ...], out: int) -> tuple[Line, ...]:
    """The body of one ``eltwise_chain`` block (``chain.inl:3280-3335``): acquire, ``compute``, reserve, pack and
    push ``blk`` tiles of ``out``, release."""
    return (c(3280, "tile_regs_acquire();", AcquireAcc(blk, "bf16")),
            *compute,
            c(2528, "buffer.reserve_back(count);", Reserve(out, blk)),
            c(2924, "elem.exec(i_arg, ht, wt + j, j * chain_lane_width);", PackAcc(out, blk)),
            c(2535, "buffer.push_back(count);", Push(out, blk)),
            c(3335, "tile_regs_release();", ReleaseAcc()))


def softmax_scale_mask(name: str = "softmax_w_scale_mask", causal: bool = False,
                       reader_causal: bool | None = None) -> Program:
    """``ttnn.softmax`` along W fused with a scale and an attention mask (``FUSED_SCALE_MASK``; the
    ``scale_mask_softmax`` path), interleaved, one core, ``NCHt`` = ``Ht`` = 2 tile rows (one batch) of ``Wt`` = 4
    tiles in blocks of ``blk`` = 2, not numerically stable, W a multiple of 32 (no ``MASK_PADDED_DATA``), so every
    pad is 0. The scaler, sum and writer paths are ``softmax``'s (above).

    Reader (``reader_unary_interleaved_sm.cpp``): the fused scale by ``generate_bcast_unary_scalar`` (line 59;
    ``generate_bcast_scalar.hpp:51-54``: reserve, one store, push — a ``FillTiles``), the two reduce scalers (69,
    73), then per row the input blocks (82-95) and the mask: ``causal`` False, a row-broadcast mask of ``Wt`` tiles
    read once per batch (``read_mask``, lines 138-162: true on the batch's first row, ``If(i, FIRST)`` here);
    ``causal`` (``CAUSAL_MASK``), ``Wt`` mask tiles every row (106-122), tile ``i * Wt + j + wb``.
    Compute (``softmax.cpp``): waits for the scalers and the fused scale once (183-184, 187); per row the scale
    (``ckl::mul``, 212-221: ``in0`` waited and popped per block, the scale never waited or popped in the chain,
    ``scale_mask`` reserved and pushed per block), the mask add with exp (``eltwise_chain``, 246-263: ``scale_mask``
    per block; the mask row-broadcast with no wait in the chain, waited for ``Wt`` at 241 on the batch's first row
    and popped at 281 after its last, or, causal, ``WaitPolicy::Cumulative``: the chain waits ``i_flat +
    inner_count`` = 2, then 4 (``chain.inl:2821``), popped after the row at 273), then the row sum and the multiply
    as without the mask, and at the end pops the scalers and the scale (408-411). The final ``if (!wait_mask)`` pop
    (417-419) does not run: the core's rows end on the batch's end (``wait_mask`` true).

    Capacities as ``softmax.cpp`` states the factory's: ``fused_attn`` ``in4_t`` = round_up(Wt, blk) = 4 (line 24 of
    the reader), ``scale_mask`` ``im3_t`` = ``exps_t + ndst`` = 6 (``softmax.cpp:123``), ``fused_scale`` one page.
    The causal chain's block loop is written as its two bodies (the cumulative wait grows with the block).

    ``reader_causal`` (default ``causal``) the reader's ``CAUSAL_MASK``, which the program factory defines for each
    kernel separately: ``causal`` True with ``reader_causal`` False is the broken variant, compute built for the
    causal mask (a fresh mask row every row, popped every row) and the reader for the batch mask (one mask row per
    batch): compute's second row waits for mask pages the reader never sends (a deadlock at the cumulative wait),
    the class of tt-metal #45200 (PR #46320: ``softmax_large_tensor.cpp`` consumed more mask tiles than its reader
    pushed and deadlocked), which is not transcribed here."""
    if reader_causal is None:
        reader_causal = causal
    rd, cm, wr = Kernel(SOFTMAX_READER), Kernel(SOFTMAX_COMPUTE), Kernel(SOFTMAX_WRITER)
    sd, rc, ch, bs = Kernel(REDUCE_DATAFLOW), Kernel(REDUCE_COMPUTE), Kernel(CHAIN), Kernel(BCAST_SCALAR_LEGACY)
    site = Site(0, 0)
    rows, wt, blk = 2, 4, 2
    in0, max_s, sum_s, exps, recip, out0, scale, attn, scale_mask = range(9)
    names = ("in0", "max_scaler", "sum_scaler", "exps", "recip_sum_exps", "out0", "fused_scale", "fused_attn",
             "scale_mask")
    caps = (4, 1, 1, 4, 1, 4, 1, 4, 6)
    buffers = tuple(Buffer(i, names[i], site, i, 1, caps[i], "bf16") for i in range(9))
    if reader_causal:
        mask_blocks = rd.loop(106, "for (std::uint32_t j = 0; j < Wt; j += blk) {", "j", wt // blk,
                              rd(108, "dfb_id_attn_obj.reserve_back(rem);", Reserve(attn, blk)),
                              rd.loop(110, "for (std::uint32_t wb = 0; wb < rem; ++wb) {", "wb", blk,
                                      rd(111, "noc.async_read(", ReadTiles(
                                          "mask", Addr(0, (Term("i", wt), Term("j", blk), Term("wb", 1))), 1, attn))),
                              rd(120, "noc.async_read_barrier();", ReadBarrier()),
                              rd(121, "dfb_id_attn_obj.push_back(rem);", Push(attn, blk)))
    else:
        mask_blocks = rd.guard(138, "if (read_mask) {", "i", Guard.FIRST,
                               rd.loop(139, "for (std::uint32_t j = 0; j < Wt; j += blk) {", "j", wt // blk,
                                       rd(142, "dfb_id_attn_obj.reserve_back(rem);", Reserve(attn, blk)),
                                       rd.loop(144, "for (std::uint32_t wb = 0; wb < rem; ++wb) {", "wb", blk,
                                               rd(145, "noc.async_read(", ReadTiles(
                                                   "mask", Addr(0, (Term("j", blk), Term("wb", 1))), 1, attn))),
                                       rd(154, "noc.async_read_barrier();", ReadBarrier()),
                                       rd(155, "dfb_id_attn_obj.push_back(rem);", Push(attn, blk))))
    reader = engine(
        site, Engine.READER,
        bs(51, "cb.reserve_back(1);", Reserve(scale, 1)),
        bs(53, "ptr[0] = scalar_val;", FillTiles(scale, 1, "bcast_scalar")),
        bs(54, "cb.push_back(1);", Push(scale, 1)),
        *_scaler(sd, max_s), *_scaler(sd, sum_s),
        rd.loop(82, "for (std::uint32_t i = 0; i < num_blks; ++i) {", "i", rows,
                rd.loop(83, "for (std::uint32_t j = 0; j < Wt; j += blk) {", "j", wt // blk,
                        rd(85, "dfb_id_in0_obj.reserve_back(static_cast<uint16_t>(rem));", Reserve(in0, blk)),
                        rd.loop(87, "for (std::uint32_t r = 0; r < rem; ++r) {", "r", blk,
                                rd(88, "noc.async_read(", ReadTiles(
                                    "src", Addr(0, (Term("i", wt), Term("j", blk), Term("r", 1))), 1, in0))),
                        rd(93, "noc.async_read_barrier();", ReadBarrier()),
                        rd(94, "dfb_id_in0_obj.push_back(static_cast<uint16_t>(rem));", Push(in0, blk))),
                mask_blocks))
    scale_block = _chain_block(ch, blk, (
        ch(2514, "buffer.wait_front(count);", Wait(in0, blk)),
        ch(2845, "elem.exec(", Compute("mul_tiles_bcast_scalar", blk, (Operand(in0, blk), Operand(scale, 1)))),
        ch(2521, "buffer.pop_front(count);", Pop(in0, blk))), scale_mask)

    def mask_compute(waited: int) -> tuple[Line, ...]:
        causal_wait = (ch(2514, "buffer.wait_front(count);", Wait(attn, waited)),) if causal else ()
        kind = "add_tiles" if causal else "add_tiles_bcast_rows"
        return (ch(2514, "buffer.wait_front(count);", Wait(scale_mask, blk)),
                *causal_wait,
                ch(2845, "elem.exec(", Compute(kind, blk, (Operand(scale_mask, blk), Operand(attn, waited)))),
                ch(2884, "elem.exec(i_flat + j, SlotBase + j * chain_lane_width);", Compute("exp_tile", blk)),
                ch(2521, "buffer.pop_front(count);", Pop(scale_mask, blk)))

    if causal:
        mask_chain: tuple[Line, ...] = (
            ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1,
                    *_acc_block(ch, blk, mask_compute(blk), exps),
                    *_acc_block(ch, blk, mask_compute(2 * blk), exps)),
            cm(273, "dfb_fused_attn_obj.pop_front(Wt);", Pop(attn, wt)))
    else:
        mask_chain = (
            cm.guard(240, "if (wait_mask) {", "ncht", Guard.FIRST,
                     cm(241, "dfb_fused_attn_obj.wait_front(Wt);", Wait(attn, wt))),
            ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1,
                    _chain_block(ch, blk, mask_compute(wt), exps)),
            cm.guard(280, "if (ht == Ht) {", "ncht", Guard.LAST,
                     cm(281, "dfb_fused_attn_obj.pop_front(Wt);", Pop(attn, wt))))
    mul_block = _chain_block(ch, blk, (
        ch(2845, "elem.exec(", Compute("mul_tiles_bcast_cols", blk, (Operand(exps, wt), Operand(recip, 1)))),), out0)
    compute = engine(
        site, Engine.COMPUTE,
        cm(183, "dfb_max_scaler_obj.wait_front(1);  // comes from the reader", Wait(max_s, 1)),
        cm(184, "dfb_sum_scaler_obj.wait_front(1);  // comes from the reader", Wait(sum_s, 1)),
        cm(187, "dfb_fused_scale_obj.wait_front(1);", Wait(scale, 1)),
        cm.loop(203, "for (std::uint32_t ncht = 0; ncht < NCHt; ncht++) {", "ncht", rows,
                ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1, scale_block),
                *mask_chain,
                rc(399, "scaler_dfb.wait_front(1);  // Wait for scaler tile", Wait(sum_s, 1)),
                rc(488, "input_dfb.wait_front(total_input_tiles);", Wait(exps, wt)),
                rc.loop(493, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "h", 1,
                        rc(499, "tile_regs_acquire();", AcquireAcc(1, "bf16")),
                        rc.loop(512, "for (uint32_t wt = 0; wt < Wt; ++wt) {", "w", wt,
                                rc(538, "reduce_tile<reduce_type, reduce_dim>(",
                                   Compute("reduce_tile_sum_row", 1, (Operand(exps, wt), Operand(sum_s, 1))))),
                        cm(377, "recip_tile(0);", Compute("recip_tile", 1)),
                        rc(553, "output_dfb.reserve_back(onetile);", Reserve(recip, 1)),
                        rc(556, "pack_tile(dst_idx, output_dfb_id);", PackAcc(recip, 1)),
                        rc(557, "tile_regs_release();", ReleaseAcc()),
                        rc(558, "output_dfb.push_back(onetile);", Push(recip, 1))),
                ch(2514, "buffer.wait_front(count);", Wait(exps, wt)),
                ch(2514, "buffer.wait_front(count);", Wait(recip, 1)),
                ch.loop(3259, "for (uint32_t ht = 0; ht < Ht; ++ht) {", "ht", 1, mul_block),
                ch(2521, "buffer.pop_front(count);", Pop(exps, wt)),
                ch(2521, "buffer.pop_front(count);", Pop(recip, 1))),
        cm(408, "dfb_max_scaler_obj.pop_front(1);", Pop(max_s, 1)),
        cm(409, "dfb_sum_scaler_obj.pop_front(1);", Pop(sum_s, 1)),
        cm(411, "dfb_fused_scale_obj.pop_front(1);", Pop(scale, 1)))
    writer = engine(
        site, Engine.WRITER,
        wr.loop(62, "for (std::uint32_t row = 0; row < num_rows; ++row) {", "row", rows,
                wr.loop(63, "for (std::uint32_t wt = 0; wt < Wt; wt += blk) {", "wt", wt // blk,
                        wr(65, "dfb_id_out0_obj.wait_front(static_cast<uint16_t>(rem));", Wait(out0, blk)),
                        wr.loop(68, "for (std::uint32_t j = 0; j < rem; j++) {", "j", blk,
                                wr(69, "noc.async_write(", WriteTiles(
                                    out0, "dst", Addr(0, (Term("row", wt), Term("wt", blk), Term("j", 1))), 1))),
                        wr(74, "noc.async_write_barrier();", WriteBarrier()),
                        wr(75, "dfb_id_out0_obj.pop_front(static_cast<uint16_t>(rem));", Pop(out0, blk)))))
    tensors = (Tensor("src", (32 * rows, 32 * wt), "bf16", Role.INPUT),
               Tensor("mask", (32 * (rows if reader_causal else 1), 32 * wt), "bf16", Role.INPUT),
               Tensor("dst", (32 * rows, 32 * wt), "bf16", Role.OUTPUT))
    return Program(name, WORMHOLE, tensors=tensors, buffers=buffers, programs=(reader, compute, writer),
                   memory=pack(buffers))


BUILDERS.update({
    "softmax_w_scale_mask.json": softmax_scale_mask,
    "softmax_w_causal_mask.json": lambda: softmax_scale_mask("softmax_w_causal_mask", causal=True),
    "broken/softmax_w_causal_compute_batch_mask_reader.json": lambda: softmax_scale_mask(
        "softmax_w_causal_compute_batch_mask_reader", causal=True, reader_causal=False),
})
