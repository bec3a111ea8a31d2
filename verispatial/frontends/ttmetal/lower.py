"""Lowering one kernel on one core to choreography ops (DESIGN §5): the kernel's statements are read in order with
its compile-time and runtime args bound, the device API calls become ops (docs/ttmetal.md lists the mapping), loops
stay loops and every op gets the file:line it was read from.

The reading is symbolic, not a run: a loop body is read once with the loop index as a symbol (``values.Sym``), a
variable a loop body steps (``tile_id++``) becomes affine in the index, a branch on the loop index becomes an ``If``
(first / last / not first / not last). What it cannot follow is ``Opaque`` and refused by name with its file:line
only when an op, a loop count or a branch needs it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Iterator
from typing import Any, NoReturn

import attrs

from verispatial.frontends.ttmetal import (
    api,
    chain,
    deduced,
    enums,
    intrinsics,
    nocopts,
    nocstate,
    objects,
    signatures,
    stated,
)
from verispatial.frontends.ttmetal import values as V
from verispatial.frontends.ttmetal.cpp import (
    CONSTANT_NAMESPACES,
    DEVICE_CONSTANTS,
    TYPE_SIZES,
    Unit,
    add_namespace_alias,
    alias_clashes,
    alias_free,
    function_declarator,
    namespace_alias,
    nested_key,
)
from verispatial.frontends.ttmetal.cpp import Program as CppProgram
from verispatial.frontends.ttmetal.host import HostKernel, HostSpec, SemId, TensorAddr, TripRange
from verispatial.frontends.ttmetal.host import Value as HostValue
from verispatial.frontends.ttmetal.refusals import Refused, ScratchHint, ScratchRinged
from verispatial.frontends.ttmetal.sfpu import (
    SFPU_DST_ARGS,
    SFPU_OPS,
    SFPU_OPS_MORE,
    TOPK_DST_TILES,
    tie_order_from_global_direction,
)
from verispatial.ir.core import Addr, Engine, Guard, Site, Term
from verispatial.ir.ids import op_ids
from verispatial.ir.ops import (
    ID_BUFFER,
    PATCH,
    Compute,
    CopyTiles,
    FillTiles,
    If,
    InlineWrite,
    InPlace,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    PackAcc,
    Part,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    Reserve,
    ScratchAccess,
    SemInc,
    SemIncMcast,
    SemSet,
    TripCount,
    Wait,
    WriteTiles,
    op_text,
)
from verispatial.ir.source import LoopIndex, OpPath, SourceLoc

#: The ops that are NoC transactions of the engine issuing them (a barrier, a local store or a wait is none).
_NOC_TRANSACTIONS = (ReadTiles, RemoteRead, WriteTiles, McastSend, McastSetValid, SemInc, SemIncMcast, InlineWrite)

#: The statements that loop.
_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})

#: The vendor's rule for a linked multicast (``linked`` true: ``NOC_CMD_VC_LINKED``, ttnn 0.81.1
#: ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:939, 1767``, ``api/semaphore.h:236``).
LINKED_RULE = ("after a linked multicast the next transaction must be a multicast on the same VC, else the NoC "
               "initiates no new transaction (tenstorrent/tt-metal#24453, PR #25307; tenstorrent/"
               "tt-isa-documentation#7)")

#: Calls with no effect on the choreography: hardware configuration, data-format reconfiguration, debug printing
#: and profiling zones (tt_metal/hw/inc/api/compute/*.h, api/debug/dprint.h). Their arguments are not read.
IGNORED_CALLS = frozenset({
    "compute_kernel_hw_startup", "pack_relu_config", "DPRINT", "DPRINT_UNPACK", "DPRINT_MATH",
    "DPRINT_PACK", "DPRINT_DATA0", "DPRINT_DATA1", "WAYPOINT", "DeviceZoneScopedN", "DeviceZoneScopedMainN",
    "DeviceZoneScopedMainChildN", "DeviceTimestampedData", "invalidate_l1_cache",
    "static_assert", "ASSERT", "mm_init", "mm_init_short", "mm_block_init", "mm_block_init_short", "binary_op_init_common",
    "unary_op_init_common", "init_sfpu", "tilize_init", "untilize_init", "reduce_init", "reduce_uninit",
    "transpose_wh_init", "copy_tile_init", "copy_tile_to_dst_init_short", "copy_init", "pack_untilize_uninit",
    "binary_tiles_init", "add_tiles_init", "sub_tiles_init", "mul_tiles_init", "noc_async_read_set_trid",
    # L2 cache operations on Quasar's data-movement cores, no-ops on Wormhole and Blackhole, the targets here
    # (internal/scoped_lock_cache_ops.h:14-30)
    "scoped_lock_acquire_cache_ops", "scoped_lock_release_cache_ops",
})
#: The JIT-generated per-buffer descriptor arrays (chlkc_descriptors.h; which TRISC sees which is listed at
#: kernel_lib/tilize_helpers.inl:16-23; data-movement kernels read the unpack ones too, kernel_lib/
#: dfb_helpers_dataflow.inl:11-18 and api/dataflow/dataflow_buffer.h:276-290, so the JIT gives them theirs): the data
#: formats are the host buffer's (None here), the tile geometry that of the 32 x 32 tiles the host format describes.
JIT_DESCRIPTORS: dict[str, int | None] = {
    "unpack_src_format": None, "unpack_dst_format": None, "pack_src_format": None, "pack_dst_format": None,
    "unpack_tile_r_dim": 32, "unpack_tile_c_dim": 32, "pack_tile_r_dim": 32, "pack_tile_c_dim": 32,
    "unpack_tile_num_faces": 4, "pack_tile_num_faces": 4, "unpack_tile_face_r_dim": 16, "pack_tile_face_r_dim": 16}

#: The NoC alignments of each target (tt_metal/hw/inc/internal/tt-1xx/wormhole/noc/noc_parameters.h:291-310,
#: blackhole/noc/noc_parameters.h:375-394: the larger of the read and write alignment), by target name: kernels round a
#: tile's stride in L1 up to them (``(size + DRAM_ALIGNMENT - 1) & ~(DRAM_ALIGNMENT - 1)``).
NOC_ALIGNMENT = {"L1_ALIGNMENT": {"wormhole_b0": 16, "blackhole": 16},
                 "DRAM_ALIGNMENT": {"wormhole_b0": 32, "blackhole": 64},
                 # the parameters they come from and the largest burst (noc_parameters.h, Wormhole :214-221 and
                 # :291-297, Blackhole :286-290 and :375-381; ``RISC_A0_HW``'s 512 B burst is no target here):
                 # kernels choose a transfer's form by them (``coalesced_read_bytes <= NOC_MAX_BURST_SIZE``,
                 # reader_depthwise_conv1d.cpp:87; the sharded layernorm's gather picks its one-packet read by it,
                 # reader_mcast_sender_unary_sharded_ln.cpp:248)
                 "NOC_WORD_BYTES": {"wormhole_b0": 32, "blackhole": 64},
                 "NOC_MAX_BURST_WORDS": {"wormhole_b0": 256, "blackhole": 256},
                 "NOC_MAX_BURST_SIZE": {"wormhole_b0": 256 * 32, "blackhole": 256 * 64},
                 "NOC_L1_READ_ALIGNMENT_BYTES": {"wormhole_b0": 16, "blackhole": 16},
                 "NOC_L1_WRITE_ALIGNMENT_BYTES": {"wormhole_b0": 16, "blackhole": 16},
                 "NOC_PCIE_READ_ALIGNMENT_BYTES": {"wormhole_b0": 32, "blackhole": 64},
                 "NOC_PCIE_WRITE_ALIGNMENT_BYTES": {"wormhole_b0": 16, "blackhole": 16},
                 "NOC_DRAM_READ_ALIGNMENT_BYTES": {"wormhole_b0": 32, "blackhole": 64},
                 "NOC_DRAM_WRITE_ALIGNMENT_BYTES": {"wormhole_b0": 16, "blackhole": 16}}

#: The bytes of the hardware zeros region, by target name (``MEM_ZEROS_SIZE``: tt_metal/hw/inc/internal/tt-1xx/wormhole/
#: dev_mem_map.h:80, blackhole/dev_mem_map.h:88, ttnn 0.71.2 and 0.81.1): kernels zero a page by NoC reads of it
#: (``zero_tile``, ttnn/kernel_lib/l1_helpers.hpp:47-65 of 0.71.2 and 0.72.0)
MEM_ZEROS_SIZE = {"wormhole_b0": 512, "blackhole": 512}

#: The ``template`` disambiguator after a scope of a dependent type (``Reader<T, p>::template read(...)``,
#: grid_sample_reader_common.hpp:338): it only tells the compiler the member is a template; the call is
#: ``Reader<T, p>::read``. A keyword, so never part of a name.
_TEMPLATE_KEYWORD = re.compile(r"::\s*template\b\s*")

#: The value of every runtime and compile-time arg in survey mode: 2 runs a loop more than once, and as an index
#: names a buffer and a semaphore the survey host declares.
SURVEY_ARG = 2

#: Queries whose result no op needs (a data format, a profiler id): their value is not followed.
#: Also the device API's value comparisons (api/numeric/bfloat16.h ``bfloat16_greater``, float32.h
#: ``float32_greater``: two numbers in, a bool out, no memory touched); a branch on their result is a branch on a
#: value not followed.
PURE_QUERIES = frozenset({"get_noc_id", "noc_index",
                          # a float's bits (a scaler stored into a constant page, ``float_to_scaler_bits``)
                          "__builtin_bit_cast", "bit_cast",
                          "get_common_arg_addr", "bfloat16_greater", "float32_greater",
                          # bfloat16 <-> float conversions of a value (api/numeric/bfloat16.h:23-53): no effect
                          "bf16_to_fp32", "fp32_to_bf16", "fp32_to_bf16_truncate"})
#: (``llk_*`` calls and the ``UNPACK(...)`` / ``MATH(...)`` / ``PACK(...)`` wrappers are not among them: an LLK call
#: can wait on, push or pop circular-buffer pages, so it is refused by name.)
IGNORED_PREFIXES = ("reconfig_", "pack_reconfig_", "unpack_reconfig_", "cb_reconfig", "DPRINT", "DeviceZone",
                    "pack_relu")
#: (``*_tile_init_pack``: the SFPU init the PACK thread runs before a ``*_tile_pack`` op, ``PACK(SFPU_UNARY_INIT(...))``,
#: eltwise_unary/relu.h:145, selu.h:62, activations.h:57: configuration only)
IGNORED_SUFFIXES = ("_init", "_init_short", "_uninit", "_init_common", "_init_pack")

#: Compute calls that unpack circular-buffer tiles into DST: name -> (CB argument positions, their tile-index
#: argument positions, DST-index argument position). tt_metal/hw/inc/api/compute/{matmul,eltwise_binary,
#: tile_move_copy,reduce,transpose_wh,transpose,bcast}.h.
UNPACKING = {
    "matmul_tiles": ((0, 1), (2, 3), 4),
    "add_tiles": ((0, 1), (2, 3), 4),
    "sub_tiles": ((0, 1), (2, 3), 4),
    "mul_tiles": ((0, 1), (2, 3), 4),
    "add_tiles_bcast_rows": ((0, 1), (2, 3), 4),
    "add_tiles_bcast_cols": ((0, 1), (2, 3), 4),
    "add_tiles_bcast_scalar": ((0, 1), (2, 3), 4),
    "sub_tiles_bcast_rows": ((0, 1), (2, 3), 4),
    "sub_tiles_bcast_cols": ((0, 1), (2, 3), 4),
    "sub_tiles_bcast_scalar": ((0, 1), (2, 3), 4),
    "mul_tiles_bcast_rows": ((0, 1), (2, 3), 4),
    "mul_tiles_bcast_cols": ((0, 1), (2, 3), 4),
    "mul_tiles_bcast_scalar": ((0, 1), (2, 3), 4),
    "reduce_tile": ((0, 1), (2, 3), 4),
    "copy_tile": ((0,), (1,), 2),
    "transpose_wh_tile": ((0,), (1,), 2),
    "transpose_tile": ((0,), (1,), 2),
    "unary_bcast": ((0,), (1,), 2),
    # one operand from a buffer, the other the DST tile it writes back (eltwise_binary.h:421-492)
    "add_reuse_dest_tiles": ((0,), (1,), 2),
    "sub_reuse_dest_tiles": ((0,), (1,), 2),
    "mul_reuse_dest_tiles": ((0,), (1,), 2),
    "binary_reuse_dest_tiles": ((0,), (1,), 2),
}


#: The pointer counters (``KernelReader.l1_check``), per buffer: the pages this engine pushed / popped (each moves its
#: write / read pointer one page), and the tiles its writes filled past its write pointer / its reads drained past its
#: read pointer (the interpreter's ``fill`` and ``drain``, verispatial/families/cb/semantics.py ``fill``,
#: petri/interp.py WriteTiles); and the compute engine's in-order packer position, the tiles ``pack_tile`` packed
#: since the last push (``fifo_wr_tile_ptr``: each in-order pack advances it, each push resets it to 0,
#: ckernels/wormhole_b0/metal/llk_api/llk_pack_common_api.h:117-120, llk_io/llk_io_pack.h:88-89). They are variables
#: of scope 0 named ``%kind:cb``, no C++ name.
COUNTERS = ("pushed", "fill", "popped", "drain", "packed")


def counter(kind: str, cb: int) -> str:
    """The name of pointer counter ``kind`` of buffer ``cb`` among the reading's variables."""
    return f"%{kind}:{cb}"


def is_counter(name: str) -> bool:
    return name.startswith("%")


#: iterations a loop read by running its condition (``KernelReader.unroll``) may take (``values.UNROLL_LIMIT``:
#: ``accessor.pages`` in api.py is held to it too), and all such loops of a kernel together (the program grows by
#: each iteration's ops)
UNROLL_LIMIT = V.UNROLL_LIMIT
UNROLL_BUDGET = 4096


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _SwitchBreak(Exception):
    """A ``break`` that ends the innermost ``switch`` (``KernelReader.switch_stmt``), never a loop's ``_Break``."""


class _Abandon(Exception):
    """A trial reading is given up (``KernelReader.without_ops``)."""


class _Return(Exception):
    def __init__(self, value: V.Value) -> None:
        self.value = value


@attrs.define
class Block:
    """An op list being read, with the source location of each op (paths relative to this list)."""

    ops: list[Op] = attrs.field(factory=list)
    locs: list[tuple[OpPath, SourceLoc]] = attrs.field(factory=list)
    closed: bool = False
    #: the block runs whenever the block around it does: a loop of a constant count (>= 1); not an ``If`` branch
    #: nor a loop over a runtime range, which may run no time
    certain: bool = True

    def add(self, op: Op, loc: SourceLoc) -> None:
        self.locs.append(((len(self.ops),), loc))
        self.ops.append(op)

    def add_container(self, op: Op, loc: SourceLoc, body: Block) -> None:
        i = len(self.ops)
        self.ops.append(op)
        self.locs.append(((i,), loc))
        self.locs.extend(((i, *p), q) for p, q in body.locs)


@attrs.define
class _Loop:
    var: str
    count: int | str | TripCount
    #: the largest index value, as a number over trips (``count - 1``)
    last: V.Sym
    #: the op list of its body (a statement read straight in it adds its ops there)
    body: Block | None = None


@attrs.define
class _Fill:
    """Stores by this engine's RISC into buffer ``cb``'s reserved back since its last reserve: where the first was
    read (``lineage``: the blocks open there; ``node``), and whether a zero fill (``Noc.async_write_zeros``) is still
    in flight — its bytes are undefined until ``write_zeros_l1_barrier`` returns (``api/dataflow/noc.h``)."""

    lineage: tuple[Block, ...]
    loc: SourceLoc
    zeros_pending: bool = False
    #: the pages pushed and tiles filled of the buffer at the first store: the page the stores build is the one the
    #: ``FillTiles`` at the push fills only if neither moved in between
    at: tuple[Any, Any] = (None, None)
    #: the buffer whose waited front the stores copy (``dst[i] = src[i]``: a ``CopyTiles``), None for constants
    copy: int | None = None
    #: whether a blocking load of the word of the last store followed the stores (``ckernel::load_blocking``;
    #: ``KernelReader.drain_load``): every store into the page has landed in L1
    drained: bool = False
    #: the address of the last store into the page (its word), as the reading follows L1 pointers; None where it
    #: cannot say which word that is (a loop that may run no iteration, a branch whose sides differ)
    last: V.L1Ptr | None = None
    #: the loops open when ``last`` and ``drained`` were last set: a read of them deeper in a loop is read once
    #: for every iteration, so it holds for later iterations only if no store into the page follows in the loop
    fresh: int = 0
    #: the loops (``KernelReader.repeats``) whose later iterations rely on ``last`` / ``drained`` as they stood
    #: before the loop (a blocking load or a NoC loopback read of the page in them, before any store of theirs): a
    #: store into the page while one of them is open is refused (``KernelReader.consult``)
    consulted: tuple[object, ...] = ()
    #: the stores read into the page so far (a loop that changed it stored into the page: ``fills_after_loop``)
    stores: int = 0
    #: the indices of the loops (opened since the first store, of a constant count) in whose last iterations a
    #: blocking load of the last store's word runs after it (``dst[i] = v; load_blocking(dst + 511)`` in every
    #: iteration): the page is drained once they have all closed (``fills_after_loop``)
    drained_last: tuple[str, ...] = ()
    #: whether a NoC loopback read inside the page (``generate_index_tile``'s replication) has not landed yet
    reads_pending: bool = False
    #: whether the reads pending are all reads of the hardware zeros region (``zeros_read``): more of them may
    #: follow before the barrier, each zeroing its own bytes
    zero_reads: bool = False
    #: stores into a tile a NoC read of this engine filled and landed (``KernelReader.patch_store``: the padding of
    #: matmul's last K tile, pad_tile.hpp:91): the tile is the read's; the stores only change bytes of it
    patch: bool = False
    #: the pages of the reservation the constant stores surely touch, each with the blocks open at such a store (the
    #: first page counts as 0; ``store_extent_check``): a push of several pages is read as a fill of them when a
    #: store on every path to it touches each (``filled_by_stores``)
    touched: tuple[tuple[int, tuple[Block, ...]], ...] = ()
    #: the loops along which a store's offsets run over several pages (``reserved_pages``): they touch each of those
    #: pages only if all their iterations come before the push (closed there)
    spans: tuple[object, ...] = ()
    #: one past the last page of the reservation any store may reach (1: the page being built only)
    reach: int = 1
    #: where the store that reaches page ``reach - 1`` is
    reach_loc: SourceLoc | None = None


@attrs.define
class _Acc:
    block: Block
    index: int
    tiles: int = 0
    #: "acquired", then "committed" (MATH's tile_regs_commit) or "waited" (PACK's tile_regs_wait), then "both": each
    #: TRISC runs only its own calls, so the two may come in either source order
    state: str = "acquired"


@attrs.define
class Shared:
    """What every kernel's reading adds to the one program: multicast groups and trips."""

    host: HostSpec
    groups: dict[tuple[Site, tuple[int, int, int, int], bool], int] = attrs.field(factory=dict)
    trips: dict[str, int] = attrs.field(factory=dict)
    #: (core, cb index) of the buffers a kernel there uses as scratch L1 (``read_scratch``)
    scratch: set[tuple[Site, int]] = attrs.field(factory=set)
    #: per (core, cb index), the reads of a tensor that land in it, as its kernels are read (``stated_load``)
    landings: dict[tuple[Site, int], list[ReadTiles]] = attrs.field(factory=dict)
    #: loads read as stated tensor words, checked against the whole program once it is read (``stated.check``)
    claims: list[stated.Claim] = attrs.field(factory=list)

    def group(self, sender: Site, rect: tuple[int, int, int, int], loopback: bool) -> int:
        return self.groups.setdefault((sender, rect, loopback), len(self.groups))


class KernelReader:
    """Reads ``prog`` (kernel ``kernel``) as it runs on core ``site`` with runtime args ``args``."""

    def __init__(self, shared: Shared, kernel: HostKernel, site: Site, args: dict[str, HostValue],
                 prog: CppProgram, survey: bool = False, scratch: frozenset[int] = frozenset()) -> None:
        self.shared = shared
        #: the virtual channel the write call being read names (its ``vc`` argument, ``NocOptions::CUSTOM_VC``'s
        #: ``noc_opts.vc``, or its command buffer's state), None while none is named (``on_vc``, ``write_vc``)
        self.call_vc: int | None = None
        #: the linked multicast whose path is open: its VC and call (``multicast``, ``LINKED_RULE``); ``closing``
        #: while the multicast that may close it is read
        self.linked: tuple[int, Any] | None = None
        self.closing = False
        #: the transaction id of the transfer call being read (``NocOptions::TXN_ID``; None: untagged), and the ids
        #: the kernel's transfers carry and its barriers on one id wait for (``nocopts.Tags``)
        self.call_tag: int | None = None
        self.tags = nocopts.Tags()
        #: buffers read as scratch L1 of this kernel (``Buffer.scratch``, docs/semantics.md "Scratch buffers"): NoC
        #: reads land in and writes leave from their bytes, plain loads and stores are ``ScratchAccess``; no
        #: circular-buffer op may name them (``emit``)
        self.scratch_cbs = scratch
        #: buffers a circular-buffer op of this kernel named so far (not scratch: ``ScratchHint`` is not raised)
        self.ringed: set[int] = set()
        self.host = shared.host
        self.kernel = kernel
        self.site = site
        self.args = args
        self.prog = prog
        self.unit: Unit = prog.main_unit
        #: while a function of an included header is inlined: its call in the kernel's own file (the outermost
        #: call that left it), which every location read there carries as ``called_at``
        self.kernel_call: SourceLoc | None = None
        # (root of an expression re-parsed alone by ``expr_text``, the source node it was read from): a location in
        # the re-parsed text is the source node's (its line 1 is no line of the kernel)
        self.reparsed: list[tuple[Any, Any]] = []
        self.scopes: list[dict[str, V.Value]] = [{}]
        self.loops: list[_Loop] = []
        #: the bodies open that are read once for several iterations: the counted loops (their ``_Loop``) and the
        #: loops of a count not followed read for their stores (``without_ops``); a page's ``_Fill.fresh`` counts them
        self.repeats: list[object] = []
        self.blocks: list[Block] = [Block()]
        self.acc: _Acc | None = None
        #: per buffer, the plain stores and zero fills into its reserved back since its reserve (``local_fill``)
        self.fills: dict[int, _Fill] = {}
        #: buffers a NoC read has filled pages of since their reserve
        self.noc_filled: set[int] = set()
        #: per buffer, the pages of this engine's last ``cb_reserve_back`` of it read: which rule a store past the page
        #: being built breaks (``store_extent_check``)
        self.reserved: dict[int, int] = {}
        #: per buffer, the loops open at that reserve: the iterations of a loop opened since all build one reservation
        self.reserve_loops: dict[int, tuple[_Loop, ...]] = {}
        #: per buffer, the tiles filled past the write pointer at its last reserve and where that reserve is, until
        #: a push moves the window: a pack at or past the reserved tiles from there writes pages not reserved
        self.reserve_fill: dict[int, tuple[V.Sym, SourceLoc]] = {}
        #: loop bodies read once in which a store into a read tile relied on no read being in flight at the body's
        #: start, with the store's place (``read_landed``, ``patch_loop_closed``)
        self.patch_loops: list[tuple[Block, SourceLoc]] = []
        #: buffers whose patched tiles a multicast sent since their reserve: a store into them would rewrite its source
        self.patch_sent: set[int] = set()
        #: buffers this kernel waited on so far (``unpacking``: a compute that unpacks from a buffer its kernel never
        #: waits on reads it in place)
        self.waited: set[int] = set()
        #: buffers whose front page this kernel has waited for since its last pop of them (``stated_load``)
        self.front_waited: set[int] = set()
        #: per buffer, the reads of a tensor into the page it is building since its last push, each with whether a
        #: read barrier has landed it (``local_copy_read``)
        self.page_reads: dict[int, list[tuple[ReadTiles, bool]]] = {}
        #: buffers a NoC read of this core's own L1 is reading until the next read barrier (``local_copy_read``)
        self.copy_sources: set[int] = set()
        #: what the read and write command buffers' stateful registers hold (``nocstate``): a ``CmdState``, or
        #: ``Opaque`` saying why it is not known; absent before any ``set_state``
        self.noc_cmd: dict[str, Any] = {}
        #: serials of the states a ``with_state`` call used (``nocstate``: a loop whose body changes the state it
        #: used is refused) and the next serial
        self.noc_used: set[int] = set()
        self.noc_serial = 0
        self.depth = 0  # inlining depth
        self.loop_base = 0  # loops + guarded branches open where the function being read was entered
        self.guarded = 0  # guarded branches (If) open
        self.node: Any = None  # the statement being read, for messages
        #: the loops read by running their condition that are open, each as the loops + guarded branches open at
        #: its entry (a break or continue directly in it, not inside a symbolic loop or guarded branch, is read)
        self.unrolled: list[int] = []
        #: for each ``switch`` being read, the length of ``unrolled`` with its own entry pushed: a ``break`` whose
        #: innermost breakable statement is that switch ends it (``switch_stmt``)
        self.switches: list[int] = []
        #: the structs whose constructor or method is being read, each with its fields as variables (``*this``)
        self.this_stack: list[tuple[Any, dict[str, Any]]] = []
        #: the declared return types of the functions being inlined, innermost last (``object_value``)
        self.returning: list[str] = []
        #: the object a method call left behind (its fields as the method set them)
        self.this_after: V.Value = None
        self.unroll_budget = UNROLL_BUDGET
        #: the type each variable name is declared with in the kernel, "" when with several (``declaration``), and
        #: the names declared at least once of an integer type narrower than the 32-bit word (``uint8_t``, ``bool``):
        #: ``assign`` converts a value to such a variable's type
        self.declared: dict[str, str] = {}
        self.narrow: set[str] = set()
        #: the names a declaration in the kernel gives an array type (``uint32_t a[4];``, ``uint32_t* p[N];``)
        #: a variable declared at namespace scope, by its qualified name (``a::K``; ``::K`` in the global namespace),
        #: held in the global scope beside its bare name -> that bare name
        self.qualified_names: dict[str, str] = {}
        #: per bare name of such variables, the namespaces declaring it: of more than one, the bare name is a value
        #: not followed (which one C++ finds depends on the scopes and using-directives where it is named)
        self.namespaces_of: dict[str, set[str]] = {}
        #: ``using CB = CircularBuffer;`` at file scope of the kernel or a followed header: alias -> type name
        self.type_aliases: dict[str, str] = {}
        #: namespace aliases (``cpp.Program.namespace_aliases``) and those the kernel's bodies declare, as read
        self.ns_aliases: dict[str, str | None] = dict(prog.namespace_aliases)
        #: ``using Coords = Coord[N];`` (also an alias template of ``N``, layernorm_dataflow_utils.h:31-32): alias ->
        #: (element type name, the size expression, the alias template's parameter names)
        self.array_aliases: dict[str, tuple[str, Any, tuple[str, ...]]] = {}
        #: the names of the alias templates the kernel's units declare (``is_alias_template``), found when first asked
        self._alias_templates: frozenset[str] | None = None
        for decl, _ in prog.globals:
            if decl.type == "alias_declaration":
                alias, target = decl.child_by_field_name("name"), decl.child_by_field_name("type")
                arr = target.child_by_field_name("declarator") if target is not None else None
                if alias is not None and target is not None and arr is not None and \
                        arr.type == "abstract_array_declarator" and arr.child_by_field_name("size") is not None:
                    tpl = decl.parent if decl.parent is not None and decl.parent.type == "template_declaration" \
                        else None
                    plist = tpl.child_by_field_name("parameters") if tpl is not None else None
                    params = tuple(self.decl_name(q.child_by_field_name("declarator"))
                                   for q in (plist.named_children if plist is not None else ())
                                   if q.child_by_field_name("declarator") is not None)
                    elem = self.type_name(target.child_by_field_name("type"))
                    self.array_aliases[alias.text.decode()] = (elem, arr.child_by_field_name("size"), params)
                    continue
                if alias is not None and target is not None:
                    text = "".join(target.text.decode().split())
                    self.type_aliases[alias.text.decode()] = nested_key(self.prog.structs, text) or \
                        text.rsplit("::", 1)[-1].split("<", 1)[0]
            elif decl.type == "type_definition":
                self.typedef(decl)
        #: survey mode (the corpus benchmark): a kernel read without its host; every argument the host would give
        #: is SURVEY_ARG, every tensor address is one tensor's, every buffer and semaphore token is index 0
        self.survey = survey
        self.cb_index = {b.index: b for b in self.host.buffers if b.cores is None or site in b.cores}
        self.sem_names = [s.name for s in self.host.semaphores]
        self.buf_names = {b.name: b.index for b in self.host.buffers if not b.scratchpad}
        #: the host's scratchpads on this core by name (``scratch::NAME``), always scratch L1 of the kernel
        self.scratchpads = {b.name: b.index for b in self.cb_index.values() if b.scratchpad}
        self.tensor_names = {t["name"] for t in self.host.tensors}
        #: bytes of a page of each host tensor: a tile of its dtype on the target (a part-page transfer's bound)
        self.page_bytes = {t["name"]: self.host.target.tile_bytes.get(str(t.get("dtype")), 0) for t in self.host.tensors}
        #: readings whose ops are thrown away (``_marked_reading``): the L1 address checks are not made there, the
        #: variables and counters carrying marks rather than values
        self.trial = 0
        #: serial of the fresh symbols standing for a pointer counter the reading cannot follow (``fresh``)
        self.fresh_serial = 0
        # the pointer counters, kept among the kernel's variables so that loops step them as they step an index
        for cb in self.cb_index:
            for kind in COUNTERS:
                self.scopes[0][counter(kind, cb)] = V.const(0)

    def static_assert(self, n: Any) -> None:
        """``static_assert(cond, msg)``: GCC builds no kernel when ``cond`` is false under the host's arguments
        (dispatch_fabric2d's ``INDEX_RISCS == 4u``; ttnn kernels guard the compile-time args they assume), so a
        condition the reading folds to 0 is refused by name (``static_assert failed``): there is nothing to certify.
        A condition it cannot fold says nothing about the choreography and is passed over, as before 2026-12-06; so is
        every one in the survey, whose made-up arguments (every one 2) fail asserts the host's would pass
        (tilize_helpers.inl:69's ``input_dfb != output_dfb``)."""
        cond = n.child_by_field_name("condition")
        if cond is None or not _folded_assert(cond):
            # a type trait or a call (``is_post_reduce_op_v<PostReduceOp>``, reduce_helpers_compute.inl:320) is
            # beyond what the reading folds reliably: a wrong 0 there would refuse a kernel GCC builds
            return
        ops = len(self.blocks[-1].ops)
        try:
            v = self.expr(cond)
        except Refused:
            return
        if len(self.blocks[-1].ops) != ops:
            # a constant expression issues nothing: an op here is the reading's mistake, never kept silently
            self.refuse("static_assert condition issuing ops", n, self.text(cond))
        if isinstance(v, V.Sym) and v.is_const and v.const == 0 and not self.survey:
            msg = n.child_by_field_name("message")
            raise Refused("static_assert failed", self.loc(n),
                          f"{self.text(cond)} is false" + (f": {self.text(msg)}" if msg is not None else ""))

    def literal_asserts(self) -> None:
        """Every ``static_assert`` of numbers and operators alone (``static_assert(1 == 2)``, ``static_assert(false,
        "...")``) in a function body that is no template's: GCC evaluates it wherever it stands — in an ``if`` branch
        not taken, a loop of no iteration, after a ``return``, in a function never called — and builds no kernel when
        it is false, so it is refused by name (``static_assert failed``) as one on the read path is. Only the read
        path's were seen: such a kernel was proved. A template's body (a generic lambda's among them) is checked only
        where it is instantiated, and a condition naming anything needs its scope: both are left to the reading."""
        if self.survey:
            return
        seen: set[tuple[str, int]] = set()  # a function is listed by its bare and its qualified name
        saved = self.unit
        try:
            for root, unit in [(self.prog.main, self.prog.main_unit), *self.prog.functions.values()]:
                if _in_template(root):
                    continue
                self.unit = unit  # a refusal is at that unit's file and line
                stack = [root.child_by_field_name("body")]
                while stack:
                    x = stack.pop()
                    if x is None or x.type in ("lambda_expression", "template_declaration"):
                        continue
                    if x.type != "static_assert_declaration":
                        stack.extend(x.named_children)
                        continue
                    cond = x.child_by_field_name("condition")
                    if (unit.file, x.start_byte) not in seen and cond is not None and _folded_assert(cond) \
                            and not _identifiers(cond):
                        seen.add((unit.file, x.start_byte))
                        self.static_assert(x)
        finally:
            self.unit = saved

    def skipped_asserts(self, node: Any) -> None:
        """The static_asserts of the branch ``node`` of an ``if`` the reading decided, in the kernel's own body (no
        template's): ``if constexpr`` discards nothing outside a template, and GCC evaluates each there (``constexpr
        uint32_t k = 2; if constexpr (k == 3) { static_assert(k == 3); }`` builds no kernel). A condition of numbers,
        names and operators is folded in the scope of the ``if`` unless it names something the branch declares (its
        own scope, which the reading does not enter); one it cannot fold is passed over (``static_assert``)."""
        declared: set[str] = set()
        asserts: list[Any] = []
        stack = [node]
        while stack:
            x = stack.pop()
            if x.type == "lambda_expression":
                continue
            if x.type == "static_assert_declaration":
                asserts.append(x)
                continue
            d = x.child_by_field_name("declarator") if x.type in ("declaration", "init_declarator",
                                                                   "parameter_declaration") else None
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator")
            if d is not None:
                declared.add(d.text.decode())
            stack.extend(x.named_children)
        for x in asserts:
            cond = x.child_by_field_name("condition")
            if cond is not None and _folded_assert(cond) and not any(
                    i.text.decode() in declared for i in _identifiers(cond)):
                self.static_assert(x)

    # ------------------------------------------------------------------ entry

    def read(self) -> Block:
        """The kernel's ops. Raises ``Refused``."""
        for decl, unit in self.prog.globals:
            saved, self.unit = self.unit, unit
            try:
                if decl.type == "static_assert_declaration":
                    self.static_assert(decl)  # its refusal stops the reading: GCC builds no kernel
                    continue
                self.declaration(decl)
                ns = self.prog.namespace_of.get((unit.file, decl.start_byte))
                if ns is not None and decl.type == "declaration":
                    self.namespaced(decl, ns)
            except Refused as e:
                if e.construct == "static_assert failed":
                    raise
                # a file-scope declaration the kernel never uses must not stop the reading; a use is refused
            finally:
                self.unit = saved
        main = self.prog.main
        self.literal_asserts()  # before the entry is bound: its unread branches and its helpers' bodies too
        if self.prog.named_entry:
            main = self.bind_entry(main)
        body = main.child_by_field_name("body")
        try:
            self.stmt(body)
        except _Return:
            pass
        if self.linked is not None:
            self.linked_refused("the kernel ends with its path open", None)
        if self.acc is not None:
            self.refuse("tile_regs_acquire without tile_regs_release", self.prog.main)
        self.tags.check(walk_ops(self.blocks[0].ops))
        for cb, f in self.fills.items():
            # stores no push publishes: a buffer page used as scratch (or as the source of a raw NoC write); read
            # again with the buffer as scratch L1 when no circular-buffer op names it
            refused = Refused("plain store into a buffer page never pushed", f.loc, f"c_{cb}")
            if cb not in self.ringed and self.kernel.engine != Engine.COMPUTE:
                raise ScratchHint(cb, refused)
            raise refused
        return self.blocks[0]

    def namespaced(self, decl: Any, ns: str) -> None:
        """The variables file-scope declaration ``decl`` of namespace ``ns`` declares, also by their qualified names
        (``a::K``, ``::K``), so ``a::K`` is a's even where ``b::K`` was declared later or a local ``K`` hides it; a
        bare name several namespaces declare becomes a value not followed."""
        glob = self.scopes[0]
        for d in decl.children_by_field_name("declarator"):
            if d.type == "function_declarator":
                continue
            name = self.decl_name(d.child_by_field_name("declarator") if d.type == "init_declarator" else d)
            if not name or name not in glob:
                continue
            key = f"{ns}::{name}" if ns else f"::{name}"
            glob[key] = glob[name]
            self.qualified_names[key] = name
            spaces = self.namespaces_of.setdefault(name, set())
            spaces.add(ns)
            held = [glob[f"{x}::{name}" if x else f"::{name}"] for x in spaces]
            consts = {v.const for v in held if isinstance(v, V.Sym) and v.is_const}
            if len(spaces) > 1 and not (all(map(_constant, held)) and len(consts) == 1):
                # of one constant value in each (``constexpr uint32_t TILE_MAX_ROWS = fused_msda_tile_layout::
                # TILE_MAX_ROWS;``, fused_msda_reader_common.hpp:109) the bare name is that value, whichever C++ finds
                where = ", ".join(sorted(x or "the global namespace" for x in spaces))
                glob[name] = V.Opaque(f"{name}: declared in {where}: which one C++ finds depends on the scopes and "
                                      "using-directives where it is named")

    def bind_entry(self, fn: Any) -> Any:
        """A ``TT_KERNEL`` entry point: its template parameters bound to the named compile-time args of their
        names, its parameters to the runtime args of theirs (the generated ``kernel_main`` passes them so,
        experimental/kernel_args.h). Returns the function definition."""
        scope = self.scopes[-1]
        if fn.type == "template_declaration":
            plist = fn.child_by_field_name("parameters")
            for p in plist.named_children if plist is not None else ():
                name = self.template_param_name(p)
                if not name:
                    continue
                if self.survey:
                    scope[name] = V.const(SURVEY_ARG)
                elif name in self.kernel.named_compile_time_args:
                    scope[name] = self.host_value(self.kernel.named_compile_time_args[name])
                else:
                    self.refuse("compile-time arg the host does not give", p, f"template parameter {name}")
            fn = next(x for x in fn.named_children if x.type == "function_definition")
        d = function_declarator(fn)
        for name in self.params(d.child_by_field_name("parameters") if d is not None else None):
            scope[name.lstrip("&")] = self.runtime_arg(name.lstrip("&"), fn)
        return fn

    # ------------------------------------------------------------------ helpers

    def loc(self, node: Any) -> SourceLoc:
        """Where ``node`` is: its file (the kernel's, or a followed header's), 1-based line and column and the line's
        statement; in a header, with ``called_at`` the call in the kernel that got there."""
        if self.reparsed:
            root = node
            while root.parent is not None:
                root = root.parent
            for r, at in reversed(self.reparsed):
                if root == r:
                    node = at
                    break
        loc = self.unit.loc(node)
        if self.kernel_call is not None and self.unit is not self.prog.main_unit:
            return attrs.evolve(loc, called_at=self.kernel_call)
        return loc

    def write_vc(self, default: str) -> int:
        """The virtual channel of a NoC write into L1 (a flag or pages; another core's, or its own through the NoC)
        the call being read issues (``McastSend.vc``, ``McastSetValid.vc``): the one it names (``on_vc``), else its
        form's own, ``default`` (a key of ``api.WRITE_VCS``: the unicast forms on ``NOC_UNICAST_WRITE_VC``, the
        multicast forms on ``NOC_MULTICAST_WRITE_VC``, ``internal/dataflow/dataflow_api_common.h:62-64``). Two writes
        of one engine keep issue order only on one channel (tt-metal #55555), which the checker decides."""
        return api.WRITE_VCS[default] if self.call_vc is None else self.call_vc

    @contextlib.contextmanager
    def on_vc(self, vc: int | None) -> Iterator[None]:
        """While reading a write call that names virtual channel ``vc`` (None: none, its form's own)."""
        outer, self.call_vc = self.call_vc, vc
        try:
            yield
        finally:
            self.call_vc = outer

    @contextlib.contextmanager
    def multicast(self, vc: int, linked: bool, node: Any) -> Iterator[None]:
        """While reading a multicast call ``node`` on virtual channel ``vc`` whose ``linked`` flag is as given. After a
        linked multicast the NoC's next transaction must be a multicast on the same VC (``LINKED_RULE``): one on
        another VC is refused by name; this one closes the open path, or opens one if ``linked``."""
        if self.survey:
            yield
            return
        if self.linked is not None and self.linked[0] != vc:
            self.linked_refused(f"{self.text(node)} on VC {vc} follows it, not its VC {self.linked[0]}", node)
        self.closing = True
        try:
            yield
        finally:
            self.closing = False
        self.linked = (vc, node) if linked else None

    def linked_refused(self, what: str, node: Any) -> NoReturn:
        """Refuses the open linked multicast, which ``what`` at ``node`` (None: the kernel's end) does not close."""
        assert self.linked is not None
        where = "" if node is None else f" (line {self.loc(node).line})"
        self.refuse("linked multicast not followed by a multicast", self.linked[1],
                    f"{what}{where}: {LINKED_RULE}")

    @contextlib.contextmanager
    def tagged(self, tag: int | None) -> Iterator[None]:
        """While reading a transfer call issued with transaction id ``tag`` (None: none)."""
        outer, self.call_tag = self.call_tag, tag
        try:
            yield
        finally:
            self.call_tag = outer

    def refuse(self, construct: str, node: Any, detail: str = "") -> NoReturn:
        raise Refused(construct, self.loc(node if node is not None else self.node), detail)

    def new_block(self, certain: bool) -> Block:
        """An op list for a model of a helper (``chain.run``) to fill and splice into the current block."""
        return Block(certain=certain)

    def acquire_dst(self) -> None:
        """``tile_regs_acquire``: DST held from the current block's next op on."""
        b = self.blocks[-1]
        self.acc = _Acc(b, len(b.ops))

    def emit(self, op: Op, node: Any) -> None:
        if self.linked is not None and not self.closing and isinstance(op, _NOC_TRANSACTIONS):
            self.linked_refused(f"the NoC transaction {op_text(op)} follows it", node)
        if isinstance(op, (Reserve, Push, Wait, Pop)) and op.pages == 0:
            # a reserve, push, wait or pop of 0 pages does nothing: the waits' conditions hold at once and the
            # pointers and counters move by 0 (api/dataflow/dataflow_api.h:479-490 ``cb_wait_front`` loops while
            # fewer than 0 pages arrived; matmul's writers pop ``padded_block_tiles_w_skip`` pages, 0 unpadded)
            return
        if isinstance(op, (Reserve, Push, Wait, Pop)) and isinstance(op.pages, int) and not 0 < op.pages < 1 << 16:
            # the device API takes ``int32_t num_pages`` (api/dataflow/dataflow_api.h:208, 260, 406, 479): a word of
            # 2**31 or more converts to a negative count ([conv.integral]), which a wait or reserve passes at once
            # (:425, :490 loop while a 16-bit count is below it) and a push or pop adds to its 16-bit counter; a count
            # past 65535 a 16-bit counter never reaches. Neither is a step of the model's rings
            name = type(op).__name__.lower()
            signed = op.pages - (1 << 32) if 1 << 31 <= op.pages < 1 << 32 else op.pages
            self.refuse(f"{name} page count out of range", node,
                        f"{self.text(node)}: a page count of {op.pages}"
                        + (f" (the int32_t num_pages {signed})" if signed != op.pages else "")
                        + ": the device's 16-bit page counters hold 1..65535 a step")
        if self.acc is not None:
            # MATH computes into the section between its acquire and its commit; PACK packs it between its wait and
            # its release (api/compute/reg_api.h:41-110). A compute after the commit writes a section PACK may be
            # packing (MATH's DST offset has moved on), a pack before the wait reads DST while MATH may still write
            # it: both were read as if in order and proved
            if isinstance(op, Compute) and self.acc.state in ("committed", "both"):
                self.refuse("compute after tile_regs_commit", node, "MATH handed DST to PACK at the commit")
            if isinstance(op, PackAcc) and self.acc.state in ("acquired", "committed"):
                self.refuse("pack before tile_regs_wait", node, "PACK may read DST before MATH committed it")
        if self.call_tag is not None:
            self.tags.tagged[id(op)] = (op, self.call_tag)
        named = {v for kind, v in op_ids(op) if kind == ID_BUFFER}
        if not isinstance(op, (ReadTiles, WriteTiles, ScratchAccess)):
            self.ringed |= named
            if named & self.scratch_cbs:
                cb = min(named & self.scratch_cbs)
                raise ScratchRinged(cb, self.loc(node), f"{op_text(op)}: c_{cb} is used as scratch elsewhere in the "
                                                        "kernel")
        if isinstance(op, Wait):
            self.waited.add(op.buf)
            self.front_waited.add(op.buf)
        if isinstance(op, Pop):
            self.front_waited.discard(op.buf)
        if isinstance(op, Push):
            if op.buf in self.copy_sources and not self.trial:
                self.refuse("push of a local copy's source before its read barrier", node,
                            f"c_{op.buf}: the NoC may still be reading the page the push hands to its consumer")
            self.page_reads.pop(op.buf, None)
        if isinstance(op, ReadBarrier):
            self.copy_sources.clear()
            self.page_reads = {cb: [(r, True) for r, _ in reads] for cb, reads in self.page_reads.items()}
        if isinstance(op, ReadTiles) and not self.survey:
            if not self.trial:  # a trial reading's ops are dropped (``_marked_reading``)
                self.shared.landings.setdefault((self.site, op.into), []).append(op)
            self.page_reads.setdefault(op.into, []).append((op, False))
        patched = [b for b in sorted(named) if b in self.fills and self.fills[b].patch]
        if patched and isinstance(op, McastSend) and not op.front and op.buf in patched:
            # a multicast of the back publishes the tiles as a push does (matmul's padded in0 sender,
            # reader_bmm_tile_layout_in0_sender_padding_metal2.cpp:393-425): the patch comes before it, and a store
            # after it would rewrite a multicast source (local_fill refuses one until the next reserve)
            f = self.fills.pop(op.buf)
            self.blocks[-1].add(self.patch_op(op.buf, f), f.loc)
            self.patch_sent.add(op.buf)
            patched = [b for b in patched if b != op.buf]
        if patched and not isinstance(op, (ReadTiles, RemoteRead, Push)):
            # a multicast or write of the tiles, a copy out of them, a second reserve: between the stores into a
            # read tile and its push, the stores may not have landed, and the model of the tile is the read's
            raise Refused("buffer used between stores into a read tile and its push", self.fills[patched[0]].loc,
                          f"{op_text(op)} at {self.loc(node).file}:{self.loc(node).line}")
        if isinstance(op, Reserve):
            if op.buf in self.fills:
                # the stores went into pages this engine had not reserved: scratch use of a buffer's back (argmax's
                # partials), which the choreography does not name
                raise Refused("plain store into a buffer page before its reserve", self.fills[op.buf].loc,
                              f"c_{op.buf} is reserved at {self.loc(node).file}:{self.loc(node).line} after it")
            self.noc_filled.discard(op.buf)
            self.patch_sent.discard(op.buf)
            self.reserved[op.buf] = op.pages
            self.reserve_loops[op.buf] = tuple(self.loops)
            self.reserve_fill[op.buf] = (self.ctr("fill", op.buf), self.loc(node))
        elif isinstance(op, (ReadTiles, RemoteRead)):
            self.noc_filled.add(op.into)
        if isinstance(op, (ReadTiles, RemoteRead)):
            self.noc_reprogrammed(nocstate.READ, node)
        elif isinstance(op, (WriteTiles, McastSend, McastSetValid, SemInc, SemIncMcast, InlineWrite)):
            self.noc_reprogrammed(nocstate.WRITE, node)
        elif isinstance(op, Push) and op.buf in self.fills:
            self.filled_by_stores(op, node)
        elif isinstance(op, ReadBarrier):
            for f in self.fills.values():
                f.reads_pending = False
        elif isinstance(op, Pop):
            for into, f in list(self.fills.items()):
                if f.copy == op.buf:
                    # the copy's loads are done before the source's pages are freed: the CopyTiles comes here
                    self.filled_by_stores(Push(into, 1), node, publish=False)
        self.blocks[-1].add(op, self.loc(node))
        self.count(op)
        if isinstance(op, Push) and op.buf in self.reserved:
            # the pages still reserved: a store past them lands in a page this engine has not reserved (at least
            # the page being built, as before any reserve)
            self.reserved[op.buf] = max(1, self.reserved[op.buf] - op.pages)
        if isinstance(op, Push):
            self.reserve_fill.pop(op.buf, None)

    # ------------------------------------------------------------------ where the buffer pointers point

    def count(self, op: Op) -> None:
        """The pointer counters after ``op`` (``COUNTERS``): as the interpreter moves ``fill`` and ``drain``
        (families/cb/semantics.py ``fill`` / ``push`` / ``pop``, petri/interp.py WriteTiles): a write into the back
        fills ``tiles`` more, a read from the front drains them, a push lowers ``fill`` by its tiles (never below 0)
        and moves the write pointer, a pop likewise ``drain`` and the read pointer. A multicast moves neither."""
        if isinstance(op, Push):
            self.bump("pushed", op.buf, op.pages)
            self.lower_part("fill", op.buf, op.pages * self.cb_index[op.buf].page_tiles)
            if op.buf in self.cb_index:
                self.scopes[0][counter("packed", op.buf)] = V.const(0)
        elif isinstance(op, Pop):
            self.bump("popped", op.buf, op.pages)
            self.lower_part("drain", op.buf, op.pages * self.cb_index[op.buf].page_tiles)
        elif isinstance(op, (ReadTiles, FillTiles)):
            self.bump("fill", op.into, op.tiles)
        elif isinstance(op, RemoteRead):
            self.bump("fill", op.into, op.pages * self.cb_index[op.buf].page_tiles)
        elif isinstance(op, CopyTiles):
            self.bump("drain", op.src, op.tiles)
            self.bump("fill", op.into, op.tiles)
        elif isinstance(op, PackAcc):
            self.bump("fill", op.buf, op.tiles)
        elif isinstance(op, WriteTiles):
            self.bump("drain", op.src, op.tiles)

    def ctr(self, kind: str, cb: int) -> V.Sym:
        v = self.scopes[0].get(counter(kind, cb))
        return v if isinstance(v, V.Sym) else self.fresh(kind, cb)

    def bump(self, kind: str, cb: int, by: int) -> None:
        if cb in self.cb_index:
            self.scopes[0][counter(kind, cb)] = self.ctr(kind, cb) + V.const(by)  # type: ignore[assignment]

    def lower_part(self, kind: str, cb: int, by: int) -> None:
        """``fill`` / ``drain`` := max(0, it - by), or a fresh symbol where the reading cannot tell the sign."""
        v = self.ctr(kind, cb) + V.const(-by)
        assert isinstance(v, V.Sym)
        lo, hi = self.bounds(v)
        if lo is not None and lo >= 0:
            out = v
        elif hi is not None and hi <= 0:
            out = V.const(0)
        else:
            out = self.fresh(kind, cb)
        self.scopes[0][counter(kind, cb)] = out

    def fresh(self, kind: str, cb: int) -> V.Sym:
        """A symbol for a counter's value the reading does not follow (after a loop of a runtime count, a branch on a
        loop index whose sides move it differently): equal only to itself, so a pointer taken after it and used with
        no push or pop in between is still placed, and one taken before it is not."""
        self.fresh_serial += 1
        return V.Sym(0, ((f"%{kind}:{cb}#{self.fresh_serial}", 1),))

    def count_ops(self, ops: Any, budget: int = 4096) -> None:
        """The counters after ``ops``, added without ``emit`` (``chain.run``'s walk; its packs are in order,
        chain.inl:1116-1137 with direct addressing): each op counted as it runs, a loop of a constant count as
        many times; a loop over a runtime count, a guarded branch, or more than ``budget`` ops counted leave the
        counters of the buffers they touch fresh symbols."""
        left = [budget]

        def run(ops: Any) -> bool:
            for op in ops:
                if isinstance(op, Loop) and isinstance(op.count, int) and left[0] >= 0:
                    for _ in range(op.count):
                        if not run(op.body):
                            return False
                elif isinstance(op, (Loop, If)):
                    return False
                else:
                    left[0] -= 1
                    if left[0] < 0:
                        return False
                    self.count(op)
                    if isinstance(op, PackAcc):
                        self.bump("packed", op.buf, op.tiles)
            return True

        if not run(ops):
            touched = {b for op in walk_ops(ops) for b in _bufs_of(op)}
            for name in [k for k in self.scopes[0] if is_counter(k)]:
                kind, cb = name[1:].split(":")
                if int(cb) in touched:
                    self.scopes[0][name] = self.fresh(kind, int(cb))

    def bounds(self, v: V.Sym) -> tuple[int | None, int | None]:
        """The least and greatest value of ``v`` over the enclosing loops' index ranges and its trip's range; None
        where a term is not a loop index in scope (a mark, a fresh symbol)."""
        lo: int | None = v.const
        hi: int | None = v.const
        terms: list[tuple[int, int | None]] = []  # (coefficient, largest value of the variable; its least is 0)
        for var, coef in v.loops:
            lp = next((lp for lp in self.loops if lp.var == var), None)
            if lp is None:
                return None, None
            top: int | None
            if isinstance(lp.count, int):
                top = max(0, lp.count - 1)
            else:
                last = lp.last
                top = None
                if not last.loops and last.trip is not None and last.trip[1] >= 0:
                    m = self.shared.trips.get(last.trip[0])
                    top = None if m is None else max(0, last.const + last.trip[1] * m)
            terms.append((coef, top))
        if v.trip is not None:
            terms.append((v.trip[1], self.shared.trips.get(v.trip[0])))
        for coef, top in terms:
            if coef >= 0:
                hi = None if hi is None or top is None else hi + coef * top
            else:
                lo = None if lo is None or top is None else lo + coef * top
        return lo, hi

    def l1_check(self, ptr: V.L1Ptr, front: bool, part: bool, tiles: int, construct: str, node: Any,
                 within: int = 0, width: int | None = None, bounded: bool = False) -> None:
        """Refuses, as ``construct``, an L1 address ``ptr`` that is not where the model puts a transfer of ``tiles``
        tiles: buffer ``ptr.cb``'s write pointer (``front`` False) or read pointer as this engine holds it now,
        plus, with ``part``, the tiles its writes already filled past it (reads into the back, stores) or its reads
        drained past it (writes from the front); with ``part`` False, whole pages from the pointer (a multicast).

        ``ptr`` was taken when the engine had pushed (popped) ``origin`` pages, and each push (pop) since moved
        the hardware pointer a page, wrapping at the ring's end (``values.L1Ptr``). So the address is the model's
        place, for every loop iteration and trip value, when (1) the pages moved since are a whole number of rings
        and the offset equals the tiles filled (drained), as a symbolic equality; or (2) the offset equals the
        pages moved since plus the tiles filled, and the kernel's address stays inside the ring at its greatest,
        wherever in the ring the origin left the pointer (the kernel advanced its own pointer across pushes:
        ``l1_write_addr += tile_bytes`` over the whole loop, ``concatenate_heads``; a read at the old pointer plus a
        tile after pushing the first of two reserved pages); or (3), the pointer being the other one (a multicast's
        target), every count and the offset are numbers and the two addresses agree. Otherwise the reading cannot
        say where ``ptr`` points (a forgotten advance, a doubled offset, a pointer kept from before a push) and
        refuses. With ``within`` (bytes: the stores that build a page), the address may be anywhere in the
        ``within`` bytes from the model's place; ``width`` (bytes), where the caller knows it, is the access's own
        size, which must end inside the ring (else the ``within`` bytes must). With ``bounded`` (a plain store or
        load, whose address may take many values), an offset known only by its bounds (``V.Ranged``) is placed by
        them: each of its values must be where ``within`` allows. Not checked in trial readings
        (``trial``); in survey mode only whether the address is followed (its buffer indices alias, its sizes and
        counts are made up)."""
        if self.trial:
            return
        if isinstance(ptr.offset, V.Opaque) and not (bounded and within and isinstance(ptr.offset, V.Ranged)):
            self.refuse("L1 address at an offset not followed", node, f"{self.text(node)}: {ptr.offset.why}")
        if isinstance(ptr.origin, V.Opaque):
            self.refuse("L1 pointer not followed", node, f"{self.text(node)}: {ptr.origin.why}")
        if self.survey:
            return
        off, origin = ptr.offset, ptr.origin
        assert isinstance(off, (V.Sym, V.Ranged))
        assert isinstance(origin, V.Sym)
        b = self.cb_index[ptr.cb]
        page, pt, cap = b.entry_size, b.page_tiles, b.entries
        tile_bytes = page // pt
        moved = self.ctr("popped" if front else "pushed", ptr.cb)
        done = self.ctr("drain" if front else "fill", ptr.cb) if part else V.const(0)
        ends = "read" if front else "write"
        mine = "read" if ptr.front else "write"
        taken = f" taken at line {ptr.taken.line}" if ptr.taken is not None else ""
        where = f"{b.name}'s {mine} pointer{taken}"
        d = moved + (-origin)
        assert isinstance(d, V.Sym)

        def at(base: V.Sym) -> bool:
            """Whether the offset is ``base`` (bytes), or within ``within`` bytes of it."""
            if not within:
                return off == base
            if isinstance(off, V.Ranged):
                # every value of the bounded offset against every value of the base
                blo, bhi = self.bounds(base)
                return blo is not None and bhi is not None and 0 <= off.lo - bhi and off.hi - blo < within
            delta = off + (-base)
            assert isinstance(delta, V.Sym)
            lo, hi = self.bounds(delta)
            return lo is not None and hi is not None and 0 <= lo and hi < within

        def starts(base: V.Sym) -> str:
            """Where the model lets the access start: ``base``, or with ``within`` the range of starts from it."""
            if not within:
                return f"at {_bytes(base)}"
            last = base + V.const(within - 1)
            assert isinstance(last, V.Sym)
            return f"at a start in [{_bytes(base)}, {_bytes(last)}]"

        def wrong(base: V.Sym) -> NoReturn:
            # why the model's place is not the pointer: the tiles this engine already moved past it, which the
            # kernel's address leaves out (a forgotten advance, or transfers longer than the pages pushed / popped)
            earlier = (f", after the {_bytes(base)} ({_tiles(done)}) this engine's "
                       + ("writes already sent from past it that no cb_pop_front has released" if front else
                          "reads and stores already filled past it that no cb_push_back has published")
                       if part and not (done.is_const and done.const == 0) else "")
            over = (f"; this transfer alone is {tiles} tiles ({tiles * tile_bytes} B), more than a {page} B page of "
                    f"{b.name}" if tiles > pt else "")
            self.refuse(construct, node, f"{self.text(node)}: the address is {_bytes(off)} past {where}, but the "
                        f"model's transfer is {starts(base)} past it{earlier} ({tile_bytes} B a tile){over}")

        if ptr.front == front:
            coefs = (d.const, *(c for _, c in d.loops), *((d.trip[1],) if d.trip is not None else ()))
            if all(c % cap == 0 for c in coefs):  # (1)
                base = done.scaled(tile_bytes)
                if not at(base):
                    if d != V.const(0) and at(d.scaled(page) + done.scaled(tile_bytes)):  # type: ignore[arg-type]
                        self.refuse(f"L1 pointer taken before a {'pop' if front else 'push'} used after it", node,
                                    f"{self.text(node)}: {where} advanced past the {cap}-page ring's end "
                                    f"({_bytes(off)} past it), where the {ends} pointer wraps")
                    wrong(base)
                return
            # (2) the kernel moved its pointer itself across the pushes (pops) since: where the model puts the
            # transfer as long as neither address wraps, i.e. the kernel's stays inside the ring
            moves = "pop" if front else "push"
            moved_bytes = d.scaled(page) + done.scaled(tile_bytes)
            assert isinstance(moved_bytes, V.Sym)
            if not at(moved_bytes):
                self.refuse(f"L1 pointer taken before a {moves} used after it", node,
                            f"{self.text(node)}: {_bytes(off)} past {where}, but the "
                            f"{'pops' if front else 'pushes'} since moved the {ends} pointer and the model's "
                            f"transfer is {starts(moved_bytes)} past it")
            hi = off.hi if isinstance(off, V.Ranged) else self.bounds(off)[1]
            first = _max_residue(origin, cap) * page
            extent = width if width is not None else (within or tiles * tile_bytes)
            if hi is None or first + hi + extent > cap * page:
                self.refuse(f"L1 pointer taken before a {moves} used after it", node,
                            f"{self.text(node)}: {where} advanced past the {cap}-page ring's end (up to "
                            f"{'an unknown offset' if hi is None else f'byte {first + hi}'} from page "
                            f"{first // page}), where the {ends} pointer wraps")
            return
        if origin.is_const and moved.is_const and done.is_const and isinstance(off, V.Sym) and off.is_const:  # (3)
            have = (origin.const % cap) * page + off.const
            model = (moved.const % cap) * page + done.const * tile_bytes
            if have != model:
                self.refuse(construct, node, f"{self.text(node)}: byte {have} of {b.name}'s ring ({where}), but the "
                            f"model's transfer is at byte {model}")
            return
        self.refuse(construct, node, f"{self.text(node)}: an address from {where} where the model's transfer is at "
                    f"its {ends} pointer, and the reading cannot tell the two apart")

    def part_at(self, ptr: V.L1Ptr, front: bool, size: int, construct: str, node: Any) -> int:
        """Where a transfer of part of a page (``size`` bytes, ``Part``) lands in (reads: ``front`` False) or leaves
        (writes: the read pointer) the buffer tile the model gives it — the next unfilled (unread) tile — as bytes
        from that tile's start (``Part.at``): ``ptr`` must lie inside that tile with its ``size`` bytes, at a number
        of bytes past the tile's start that no loop index changes (``l1_check`` with ``within``). Refused as
        ``construct`` otherwise; 0 in trial and survey readings, which place nothing."""
        b = self.cb_index[ptr.cb]
        tile_bytes = b.entry_size // b.page_tiles
        if size > tile_bytes:
            self.refuse("transfer of part of a page longer than a tile", node,
                        f"{self.text(node)}: {size} B into {tile_bytes} B tiles of {b.name}")
        self.l1_check(ptr, front, True, 1, construct, node, within=tile_bytes - size + 1, width=size)
        if self.trial or self.survey:
            return 0
        off, origin = ptr.offset, ptr.origin
        assert isinstance(off, V.Sym)
        assert isinstance(origin, V.Sym)
        done = self.ctr("drain" if front else "fill", ptr.cb)
        d = self.ctr("popped" if front else "pushed", ptr.cb) + (-origin)
        assert isinstance(d, V.Sym)
        # The tile's start as l1_check places it: the tiles done past the pointer, plus the pages moved since the
        # pointer was taken unless those are whole rings (l1_check's cases (1) and (2)).
        coefs = (d.const, *(c for _, c in d.loops), *((d.trip[1],) if d.trip is not None else ()))
        base = done.scaled(tile_bytes)
        if not all(c % b.entries == 0 for c in coefs):
            base = d.scaled(b.entry_size) + base  # type: ignore[assignment]
        delta = off + (-base)
        if not (isinstance(delta, V.Sym) and delta.is_const):
            self.refuse(construct, node, f"{self.text(node)}: {_bytes(off)} past {b.name}'s pointer, at bytes from "
                        f"the model's tile that change with the loop")
        assert isinstance(delta, V.Sym)
        return delta.const

    def pack_at(self, cb: int, tiles: int, index: V.Value, node: Any) -> None:
        """A pack of ``tiles`` tiles into buffer ``cb``'s reserved back (``PackAcc``, emitted by the caller after
        this): in order (``index`` None: ``pack_tile``, the packer's own position, ``fifo_wr_tile_ptr``) or at tile
        ``index`` from the write pointer (``pack_tile<true>(dst, cb, index)``, tilize and untilize blocks:
        llk_pack_common_api.h:93-95). The model lands a ``PackAcc`` at the tiles already filled past the write
        pointer, so that is where the pack must be, for every iteration: refused by name otherwise. An in-order pack
        moves the packer's position; an indexed one does not. The packer steps a page per tile
        (``fifo_page_size``), so a buffer of pages of several tiles is refused."""
        b = self.cb_index[cb]
        if not self.trial and not self.survey:
            if b.page_tiles != 1:
                self.refuse("pack into a buffer of pages of several tiles", node,
                            f"{b.name}: {b.page_tiles} tiles a page; the packer steps a page per tile "
                            "(llk_pack_common_api.h:117-120)")
            want = self.ctr("fill", cb)
            have = self.ctr("packed", cb) if index is None else index
            if not isinstance(have, V.Sym):
                self.int_of(have, node, "output tile index")  # refuses, naming why
            if have != want:
                assert isinstance(have, V.Sym)
                how = "the packer's position" if index is None else "the tile index"
                self.refuse("pack not at the buffer's next unfilled tile", node,
                            f"{self.text(node)}: {how} is {_tiles(have)} past {b.name}'s write pointer, but the "
                            f"model's pack is at {_tiles(want)} past it")
            self.pack_in_window(cb, want + V.const(tiles - 1), node)
        if index is None:
            self.bump("packed", cb, tiles)

    def pack_in_window(self, cb: int, last: V.Sym | V.Opaque, node: Any) -> None:
        """Refuses a pack whose last tile ``last`` (tiles past the write pointer) lies past the pages of the buffer's
        last reserve (``cb_reserve_back``), as far as the reading can tell: the packer writes wherever its position
        points (llk_pack_common_api.h), so such a pack overwrites pages the consumer may still read
        (``cb-write-unreserved``), and the packer's position, reset by the push, no longer matches the model's."""
        at = self.reserve_fill.get(cb)
        if at is None or not isinstance(last, V.Sym) or cb not in self.reserved:
            return
        past = last + (-at[0])
        room = self.reserved[cb] * self.cb_index[cb].page_tiles
        if isinstance(past, V.Sym) and past.is_const and past.const >= room:
            self.refuse("pack past the reserved pages", node,
                        f"{self.text(node)}: tile {past.const} from {self.cb_index[cb].name}'s write pointer, past "
                        f"the {room} reserved at {at[1].file}:{at[1].line}: the packer writes a page the consumer may "
                        "still read (cb-write-unreserved)")

    def pointer(self, cb: int, front: bool, node: Any, offset: V.Sym | V.Opaque | None = None) -> V.L1Ptr:
        """Buffer ``cb``'s read (``front``) or write pointer as this engine's RISC holds it now, plus ``offset``
        bytes (``get_read_ptr`` / ``get_write_ptr``; a ``DataflowBuffer`` as a NoC endpoint, api/dataflow/
        dataflow_buffer.h:603-618 ``get_noc_read_addr() + args.offset_bytes``)."""
        return V.L1Ptr(cb, front, self.ctr("popped" if front else "pushed", cb), V.const(0) if offset is None
                       else offset, 1, self.loc(node))

    # ------------------------------------------------------------------ constant pages filled by stores

    def local_fill(self, cb: int, node: Any, zeros: bool = False, copy: int | None = None,
                   at: V.L1Ptr | None = None, patch: bool = False) -> None:
        """A plain store (or, with ``zeros``, a ``Noc.async_write_zeros``) into buffer ``cb``'s reserved back: the
        constant-tile pattern of ``generate_reduce_scaler`` / ``generate_bcast_scalar`` / the kernel_lib's
        ``prepare_reduce_scaler`` (reserve one page, zero it, store the values, push). It becomes one ``FillTiles``
        before the push (``filled_by_stores``). ``at``: the store's address (None where the reading does not follow
        it), the page's last store now (``drain_load``). Refused by name: stores by a compute kernel, a store into a
        page whose zero fill is still in flight (undefined bytes, ``api/dataflow/noc.h`` ``async_write_zeros``), a
        store later in a loop whose earlier part read the page as drained before it (``consult``). With ``patch``
        (``patch_store``), stores into a tile a landed NoC read filled: no ``FillTiles``, but drained the same way."""
        if self.kernel.engine == Engine.COMPUTE:
            self.refuse("plain store into a buffer page", node, "by a compute kernel")
        f = self.fills.get(cb)
        if (cb in self.noc_filled and not patch) or (f is not None and f.patch != patch):
            self.refuse("plain store into a buffer page", node, "a page a NoC read also fills")
        if f is not None and f.zeros_pending:
            self.refuse("plain store into a buffer page", node,
                        "before write_zeros_l1_barrier: the zero fill may still overwrite it")
        if f is not None and f.reads_pending:
            self.refuse("plain store into a buffer page", node,
                        "before the read barrier of a NoC read inside it: the read may still overwrite it")
        if f is not None and f.copy != copy:
            self.refuse("plain stores and a copy into one buffer page", node,
                        f"{self.text(node)}: the page of c_{cb} holds stores of "
                        f"{'constants' if f.copy is None else f'c_{f.copy} pages'} already")
        if f is not None and not self.trial and any(lp is open_ for lp in f.consulted for open_ in self.repeats):
            # the loop's next iteration reads the page as drained, but this store comes after that in the previous
            # one and no load of that iteration drains it first: the reading, once per loop, cannot say that
            self.refuse("plain store after a read of the page earlier in its loop", node,
                        f"{self.text(node)}: the next iteration's blocking load or NoC read of c_{cb} relies on the "
                        "stores before the loop being the last")
        if f is None:
            f = self.fills[cb] = _Fill(tuple(self.blocks), self.loc(node), zeros,
                                       (self.ctr("pushed", cb), self.ctr("fill", cb)), copy, patch=patch)
        elif zeros:
            f.zeros_pending = True
        # a blocking load lands only the stores up to the last store to its word (common.hpp:91-96): a store after
        # it is not landed, and is the one a drain must load now
        f.drained = False
        f.drained_last = ()
        if not zeros:
            f.last = at
            f.stores += 1
        f.fresh = len(self.repeats)

    def zeros_landed(self) -> None:
        """``Noc.write_zeros_l1_barrier``: every zero fill this engine issued has landed."""
        for f in self.fills.values():
            f.zeros_pending = False

    def loopback_fill(self, src: V.L1Ptr, dst: V.L1Ptr, size: int | None, node: Any) -> None:
        """A NoC read from this core's own L1 (``{.noc_x = my_x, .noc_y = my_y}``) out of the page this engine's
        stores are building into the same page: ``generate_index_tile`` replicates its stored seed rows down the
        tile so (ttnn 0.81.1 ``ttnn/kernel_lib/index_tile_dataflow.hpp:85-115``: stores, a blocking load of the
        seed's last word, the loopback reads, ``noc.async_read_barrier()``, the push). Part of the constant page
        (``FillTiles`` at the push): the stores must have been drained before the NoC reads them (the RISC and
        the NoC are different L1 clients, ``data_movement/common/kernels/common.hpp:91-96``), and the read must
        have landed, by a read barrier, before another store into the page and before its push. Refused by name
        otherwise."""
        f = self.fills.get(dst.cb)
        assert f is not None
        if f.copy is not None:
            self.refuse("NoC read inside a page being copied", node, self.text(node))
        self.consult(f)
        if not f.drained:
            self.refuse("NoC read of stores not drained", node,
                        f"{self.text(node)}: no blocking load of the word of the last store into c_{dst.cb} since "
                        "it; the NoC may read bytes the RISC's stores have not landed yet")
        page = self.cb_index[dst.cb].entry_size
        if size is not None and not 0 < size <= page:
            self.refuse("NoC read inside a page not within the page being built", node,
                        f"{self.text(node)}: {size} B, the page of c_{dst.cb} {page} B")
        # both ends' ``size`` bytes inside the page; a size not known: their starts in it, the page's bytes past them
        for ptr in (src, dst):
            self.l1_check(ptr, False, True, 0, "NoC read inside a page not within the page being built", node,
                          within=page if size is None else page - size + 1, width=size)
        f.reads_pending = True

    def local_copy_read(self, src: V.L1Ptr, dst: V.L1Ptr, size: int, node: Any) -> None:
        """A NoC read of ``size`` bytes of this core's own L1 at ``src``, inside the page this engine is building in
        buffer ``src.cb``'s reserved back, into ``dst``: SDPA decode's copy of the position stick from c_8 into c_15
        (``noc.async_read(UnicastEndpoint, CoreLocalMem(c_15's write pointer), size, {.noc_x = my_x, .noc_y = my_y,
        .addr = c_8's write pointer})``, reader_decode_all.cpp:137-149, ttnn 0.81.1). Those bytes are a tensor's: one
        read of this engine landed them there (a read barrier since) and nothing else wrote the page, so the copy
        is read as a ``ReadTiles`` of the same tensor bytes into ``dst`` (the tensor is an input or param: no kernel
        writes it, ``tensor-race``). The source page must stay unpublished until the copy lands: a push of it
        before the next read barrier is refused by name (``emit``). Refused by name otherwise: a source not a
        followed byte offset into the page being built, bytes no landed read of a tensor put there alone."""
        b = self.cb_index[src.cb]
        tile_bytes = b.entry_size // b.page_tiles
        construct = "local NoC copy of bytes not landed from a tensor"
        if self.survey or self.trial:
            # trial and survey readings place nothing: the copy is a read of what the page holds, if it is known
            reads = self.page_reads.get(src.cb, [])
            if len(reads) == 1:
                self.emit(ReadTiles(reads[0][0].tensor, reads[0][0].addr, 1, dst.cb), node)
            return
        if not (isinstance(src.offset, V.Sym) and src.offset.is_const and isinstance(src.origin, V.Sym)) or \
                src.origin != self.ctr("pushed", src.cb) or b.page_tiles != 1:
            self.refuse(construct, node, f"{self.text(node)}: the source is not a known offset into the page of "
                                         f"c_{src.cb} this engine is building")
        at = src.offset.const
        reads = self.page_reads.get(src.cb, [])
        if src.cb in self.fills or len(reads) != 1 or not reads[0][1]:
            self.refuse(construct, node, f"{self.text(node)}: the page of c_{src.cb} holds "
                        f"{'stores' if src.cb in self.fills else f'{len(reads)} reads'}"
                        f"{'' if len(reads) != 1 or reads[0][1] else ' not landed by a read barrier'}, "
                        "not one landed read of a tensor")
        read = reads[0][0]
        part = read.part if read.part is not None else Part(0, tile_bytes, 0)
        if part.terms or not (part.at <= at and at + size <= part.at + part.size):
            self.refuse(construct, node, f"{self.text(node)}: bytes [{at}, {at + size}) of c_{src.cb}'s page, "
                        f"the read landed [{part.at}, {part.at + part.size})")
        offset = part.offset + at - part.at
        if offset == 0 and size == tile_bytes and self.cb_index[dst.cb].entry_size == tile_bytes:
            self.l1_check(dst, False, True, 1, "read into L1 not at the buffer's next unfilled tile", node)
            self.emit(ReadTiles(read.tensor, read.addr, 1, dst.cb), node)
        else:
            into = self.part_at(dst, False, size, "read into L1 not inside the buffer's next unfilled tile", node)
            self.emit(ReadTiles(read.tensor, read.addr, 1, dst.cb, Part(offset, size, into)), node)
        self.copy_sources.add(src.cb)

    def zeros_read(self, dst: V.L1Ptr, size: int, node: Any) -> None:
        """A NoC read of ``size`` bytes of the hardware zeros region (``MEM_ZEROS_BASE``) into ``dst``, inside the
        page this engine is building in buffer ``dst.cb``'s reserved back: ``zero_tile`` zeroes a page so, 512 B a
        read, then ``noc.async_read_barrier()`` (ttnn/kernel_lib/l1_helpers.hpp:47-65, ttnn 0.71.2). Part of the
        constant page, as ``Noc.async_write_zeros`` is (``local_fill``): its bytes are undefined until the engine's
        next read barrier, so a store into the page or its push before that barrier is refused by name. Refused by
        name too: a read outside the page being built, and a read of more than the region's ``MEM_ZEROS_SIZE`` bytes
        (what follows them is the LLK debug area and firmware, not zeros)."""
        if dst.front:
            self.refuse("zeros-region read into a buffer's front pages", node, self.text(node))
        zeros = MEM_ZEROS_SIZE.get(self.host.target.name)
        if zeros is None or size > zeros:
            # MEM_LLK_DEBUG_BASE is MEM_ZEROS_BASE + MEM_ZEROS_SIZE (ttnn 0.81.1 tt_metal/hw/inc/internal/tt-1xx/
            # wormhole/dev_mem_map.h:80, 94, 96; blackhole/dev_mem_map.h:88, 115, 117)
            self.refuse("NoC read past the zeros region", node,
                        f"{self.text(node)}: {size} B from MEM_ZEROS_BASE, but only MEM_ZEROS_SIZE = "
                        + (f"{zeros} B are zeros on {self.host.target.name} (dev_mem_map.h)" if zeros is not None else
                           f"an unknown size on {self.host.target.name}"))
        page = self.cb_index[dst.cb].entry_size
        if size > page:
            self.refuse("zeros-region read not within the buffer's next unfilled page", node,
                        f"{self.text(node)}: {size} B, more than the {page} B page of c_{dst.cb}")
        # its ``size`` bytes inside the page being built, wherever the pointer was taken (``l1_check``)
        self.l1_check(dst, False, True, 0, "zeros-region read not within the buffer's next unfilled page", node,
                      within=page - size + 1, width=size)
        f0 = self.fills.get(dst.cb)
        if f0 is not None and f0.reads_pending and f0.zero_reads:
            return
        self.local_fill(dst.cb, node, zeros=True)
        f = self.fills[dst.cb]
        f.zero_reads = True
        # landed by the read barrier (``reads_pending``), not by write_zeros_l1_barrier
        f.zeros_pending = False
        f.reads_pending = True

    def consult(self, f: _Fill) -> None:
        """A read of ``f``'s ``last`` / ``drained`` (a blocking load, a NoC loopback read) inside loops opened since
        they were set: read once, it stands for every iteration, which holds only if no store into the page follows
        it in those loops (``local_fill`` refuses one)."""
        if f.fresh < len(self.repeats):
            f.consulted = (*f.consulted, *self.repeats[f.fresh:])

    def drain_load(self, ptr: V.L1Ptr, node: Any) -> None:
        """``ckernel::load_blocking(p)`` into the page this engine's stores are building. A load waits only for a
        store to the same address in the store queue, and L1 processes one client's stores in order, so a blocking
        load of the word of the LAST store lands every earlier store of the engine (tt-isa-documentation
        ``WormholeB0/TensixTile/BabyRISCV/MemoryOrdering.md``; ttnn 0.81.1 ``ttnn/kernel_lib/
        index_tile_dataflow.hpp:85-115``, ``ttnn/operations/data_movement/common/kernels/common.hpp:91-96,
        166-179``; tt-metal PR #50183): the page is drained (``FillTiles(..., drain=True)`` or ``CopyTiles(...,
        drain=True)`` at its push) when ``p`` is provably that word — the same buffer's write pointer, taken at the
        same count, at the same byte offset for every loop index and trip, loaded at the width it was stored. A
        load of any other word lands only the stores up to the last store to it: no drain (a later push stays
        ``async-read-publish``, a NoC loopback read stays refused). A blocking load not into a page being built by
        stores is refused by name."""
        f = self.fills.get(ptr.cb)
        if ptr.front or f is None:
            self.refuse("blocking load not of a page being built by stores", node, self.text(node))
        self.consult(f)
        # A load in a branch or a loop that may not run is merged with the paths around it (merge_drains,
        # fills_after_loop): ``if (i == 0)`` or a loop over a runtime count holding the stores drains nothing.
        if _same_word(f.last, ptr):
            f.drained = True
            f.fresh = len(self.repeats)
            return
        # the same word in the last iteration of the loops whose index the two addresses differ by (``dst[i] = v;
        # load_blocking(dst + 511)`` in each iteration): drained once those loops close, each a constant count of
        # at least 1, unless a store follows in them (local_fill clears it)
        if f.last is None or not isinstance(f.last.offset, V.Sym) or not isinstance(ptr.offset, V.Sym) \
                or not isinstance(f.last.origin, V.Sym) or not isinstance(ptr.origin, V.Sym):
            return
        d_off, d_org = f.last.offset + (-ptr.offset), f.last.origin + (-ptr.origin)
        names = {v for d in (d_off, d_org) if isinstance(d, V.Sym) for v, _ in d.loops}
        inner = [lp for lp in self.loops if lp.var in names]
        if not inner or len(inner) != len(names) or \
                not all(isinstance(lp.count, int) and lp.count >= 1 for lp in inner):
            return
        stored, loaded = f.last, ptr
        for lp in inner:
            assert isinstance(lp.count, int)
            stored, loaded = _at(stored, lp.var, lp.count - 1), _at(loaded, lp.var, lp.count - 1)
        if _same_word(stored, loaded):
            f.drained_last = tuple(lp.var for lp in inner)

    def filled_by_stores(self, push: Push, node: Any, publish: bool = True) -> None:
        """``push`` publishes pages this engine filled by stores (``local_fill``): a ``FillTiles`` of them first,
        or, where the stores copy another buffer's waited front (``dst[i] = src[i]``), a ``CopyTiles``; either with
        ``drain`` when a blocking load of the word of the last store followed them (``drain_load``). Which pages the
        stores reached is not followed (an offset from the write pointer is not), so only a push of one page is
        read; the stores must be on every path to the push, and a zero fill must have landed. Without ``publish``
        (the copy's source is popped first) the ``CopyTiles`` comes before that pop."""
        f = self.fills.pop(push.buf)
        if f.patch:
            # the tiles are the NoC reads' (counted by their ReadTiles); the stores only change bytes of them and
            # must be in L1 before the push publishes them: a FillTiles of no tile, drained or not (a store may retire
            # before it lands, and the push is a store to another region: async-read-publish without the drain)
            self.blocks[-1].add(self.patch_op(push.buf, f), f.loc)
            return
        here = self.blocks
        if f.reach > push.pages:
            # stores into pages of the reservation past those this push publishes (``cb_reserve_back(cb, 2)``, both
            # built, ``cb_push_back(cb, 1)`` twice) are refused: the stores build the reserved pages contiguously from
            # the write pointer (a reservation does not wrap, dataflow_api.h:218-220), where a fill per push would put
            # the later pages at the ring's start when the reservation ends past the ring's end (a new user's v01:
            # reserve 2 at the ring's last page, both built, pushed one at a time, proved)
            unbuilt = [k for k in range(push.pages) if not any(
                page == k and _certain_to(lineage, here) for page, lineage in f.touched)]
            along = any(lp is open_ for lp in f.spans for open_ in self.loops)
            # a page of the reservation no store reaches at all is named first (a new user's q02: stores into
            # pages 0, 1 and 3, page 2 none, was refused naming page 0, built but in a loop)
            built = sorted({k for k, _ in f.touched})
            never = [k for k in range(f.reach) if k not in built]
            why = f"page {never[0]} of the reservation is built by no store (they build page" \
                f"{'s' if len(built) > 1 else ''} {', '.join(str(k) for k in built)})" \
                if never and not (unbuilt and unbuilt[0] in never) and f.copy is None and not (
                    self.trial or self.survey) else \
                f"page {unbuilt[0]}, which it publishes, is not built by a store on every path to it" \
                if unbuilt and f.copy is None and not (self.trial or self.survey) else \
                "stores over several pages along a loop the push is in" if along and f.copy is None else \
                f"it publishes {push.pages}" if f.copy is not None or self.trial or self.survey else \
                "the reserved pages pushed a part at a time (the stores build them contiguously from the write " \
                "pointer, where a reservation past the ring's end does not wrap, dataflow_api.h:218-220)"
            raise Refused("plain store not into the pages pushed", f.reach_loc or f.loc,
                          f"c_{push.buf}: a store reaches page {f.reach - 1} of the reservation, but the push at "
                          f"{self.loc(node).file}:{self.loc(node).line} publishes {push.pages}: {why}")
        if push.pages != 1:
            # each page the push publishes built by a store on every path to it (``store_extent_check``)
            # (a trial or survey reading follows no page: l1_check checks nothing there)
            unbuilt = [] if self.trial or self.survey else [k for k in range(push.pages) if not any(
                page == k and _certain_to(lineage, here) for page, lineage in f.touched)]
            if not unbuilt and any(lp is open_ for lp in f.spans for open_ in self.loops):
                # stores over several pages along a loop the push is in: each iteration's push publishes the
                # pages of its own iterations' stores, not of all of them
                self.refuse("plain stores into a push of more than one page", node,
                            f"{push.pages} pages of c_{push.buf}: stores over several of them along a loop the push is "
                            "in, each iteration building part of them")
            if f.copy is not None or unbuilt:
                self.refuse("plain stores into a push of more than one page", node,
                            f"{push.pages} pages of c_{push.buf}: "
                            + (f"page {unbuilt[0]} is not built by a store on every path to the push" if unbuilt
                               and f.copy is None else "which of them the stores fill is not followed"))
        if f.zeros_pending:
            self.refuse("push before write_zeros_l1_barrier", node,
                        f"c_{push.buf}: its zero fill may not have landed")
        if f.reads_pending:
            self.refuse("push before the read barrier of a NoC read inside the page", node,
                        f"c_{push.buf}: the read that builds part of it may not have landed")
        if f.at != (self.ctr("pushed", push.buf), self.ctr("fill", push.buf)) and not self.trial:
            raise Refused("plain stores and another write into one buffer page", f.loc,
                          f"c_{push.buf}: a read or fill between the stores and the push at "
                          f"{self.loc(node).file}:{self.loc(node).line} moved its write position")
        if not _certain_to(f.lineage, here):
            raise Refused("plain stores into a buffer page on some paths only", f.loc,
                          f"c_{push.buf} is pushed at {self.loc(node).file}:{self.loc(node).line} on paths that skip "
                          "them")
        fill: FillTiles | CopyTiles = FillTiles(push.buf, push.pages * self.cb_index[push.buf].page_tiles, "stores",
                                                f.drained)
        if f.copy is not None:
            fill = CopyTiles(f.copy, push.buf, self.cb_index[push.buf].page_tiles, f.drained)
        elif not publish:  # pragma: no cover - only a copy has a source to pop
            raise AssertionError("a constant fill has no source")
        self.blocks[-1].add(fill, f.loc)
        self.count(fill)

    def patch_op(self, cb: int, f: _Fill) -> FillTiles:
        """The ``FillTiles`` of no tile that patch ``f`` of buffer ``cb`` (``patch_store``) becomes where the tiles are
        published (here). ``drain`` only when the stores, and so their drain (``merge_drains`` merges the paths that
        stored), are on every path to here: the op stands on every path, and a drain it claimed on a path that stored
        nothing would land (clear) the other buffers' unlanded stores there, which no load did. On some paths only,
        undrained: a path without the stores may then be refuted for them (stricter than the kernel)."""
        common = 0
        while common < min(len(self.blocks), len(f.lineage)) and self.blocks[common] is f.lineage[common]:
            common += 1
        every_path = all(b.certain for b in f.lineage[common:])
        return FillTiles(cb, 0, PATCH, f.drained and every_path)

    def call_api(self, name: str, vals: list[V.Value], node: Any) -> V.Value:
        """The value of the device API function ``name`` (``api.FUNCTIONS``) on ``vals``, read at ``node``: for the
        modules ``api`` itself imports (``intrinsics``, ``objects``), which so need not import it back."""
        return api.FUNCTIONS[name](self, vals, [node], [], node)

    def lookup(self, name: str) -> V.Value | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def assign(self, name: str, value: V.Value, node: Any) -> None:
        """``name = value``. A variable of a narrow integer type holds the value converted to it, as C++ converts
        on assignment (``uint8_t z = 250; z += 14`` holds 8); a name declared with several types, one of them narrow,
        holds a number outside ``[0, 128)`` only as a value not followed."""
        if is_counter(name):
            # a pointer counter (``counter``): no C++ declaration, type, reference, place or namespace names it, so
            # the store is the binding alone (a loop read once assigns every buffer's counters: the hot path)
            self._bind(name, value)
            return
        scoped = deduced.object_type(self, name)
        t = scoped if scoped is not None else self.declared.get(name, "")
        if scoped == deduced.UNKNOWN and isinstance(value, (V.Sym, V.Ranged, V.Wide)) and not (
                isinstance(value, V.Sym) and value.is_const and 0 <= value.const < 2) and value != self.lookup(name):
            # an object ``auto`` deduced from what the reading cannot type (a call's result) may be a ``uint8_t`` or
            # a ``bool``: a new number stored converts to a type not known ([expr.ass]), never guessed (the value it
            # holds already, as a loop read once rebinds what its body leaves unchanged, is no new number)
            value = V.Opaque(f"{name}: its C++ type is not known (deduced by auto from a value the reading does not "
                             "type, or a template parameter or alias the reading does not resolve), so what a store "
                             "into it holds is not")
        elif isinstance(value, (V.Sym, V.Ranged, V.Wide)) and (
                (t and (_converts(t) or (isinstance(value, V.Wide) and deduced.canonical(t))))
                or (scoped is None and name in self.narrow)):
            # the value converts to the object's type, declared, deduced by auto or a reference's referent's, through
            # whichever name it is stored ([expr.ass], [conv.integral]); a number known only at run time converts too
            # (to_integer: kept only where its range fits the type)
            if t:
                value = self.to_integer(value, t)
            elif not (isinstance(value, V.Sym) and value.is_const and 0 <= value.const < 128):
                value = V.Opaque(f"{name}: declared with several types, one narrower than 32 bits")
        scope = next((sc for sc in reversed(self.scopes) if name in sc), None)
        place = scope.get(name + _PLACE_KEY) if scope is not None else None
        if isinstance(place, V.Opaque):
            # a reference bound to a place, not a variable (``uint32_t& w = p[0];``): the store lands there, which the
            # reading does not follow through the name (it was read as a new value of ``w`` and the L1 word dropped)
            self.refuse("store through a reference to a place not followed", node,
                        f"{self.text(node)}: {name} refers to {place.why}")
        if scope is self.scopes[0] and len(self.namespaces_of.get(name, ())) > 1:
            self.refuse("store to a variable several namespaces declare", node,
                        f"{self.text(node)}: {name} is declared in "
                        f"{', '.join(sorted(x or 'the global namespace' for x in self.namespaces_of[name]))}")
        if self.this_stack and scope is self.this_stack[-1][1] and self.this_stack[-1][0] is not None:
            # a field stored by its bare name in a method or constructor body holds the value as its type does
            value = self._field_value(self.this_stack[-1][0], name, value)
        self._bind(name, value)
        if scope is self.scopes[0] and name in self.namespaces_of:
            ns = next(iter(self.namespaces_of[name]))
            self.scopes[0][f"{ns}::{name}" if ns else f"::{name}"] = self.scopes[0][name]
        # a local reference (``uint32_t& r = n;``) and the variable it names are one object: a store to any of its
        # names is a store to all (the innermost scope saying so decides; a later declaration of a name ends it)
        for o in self.ref_names(name):
            if name not in self.ref_names(o):
                # ``o`` names another variable here (an inner declaration hides the one the reference is bound to):
                # binding the name would store into the wrong object
                self.refuse("store through a reference to a hidden variable", node,
                            f"{self.text(node)}: {name} is one object with a variable {o} no longer names")
            self._bind(o, self.lookup(name))

    def type_of(self, name: str) -> str:
        """The C++ type of the object variable ``name`` names here (``deduced.object_type``: declared, deduced by
        ``auto``, a reference's referent's), else the type every declaration of the name in the kernel gives it ("" when
        several or none)."""
        scoped = deduced.object_type(self, name)
        return scoped if scoped is not None else self.declared.get(name, "")

    def is_narrow(self, name: str) -> bool:
        """Whether the object ``name`` names here is of an integer type narrower than the 32-bit word (``type_of``);
        of a name whose declaration in scope is not held, whether any declaration of it in the kernel is."""
        scoped = deduced.object_type(self, name)
        return _narrow(scoped) if scoped is not None else name in self.narrow

    def ref_names(self, name: str) -> tuple[str, ...]:
        """The other names of the object ``name`` names (references bound to it, or it to them: ``T& r0 = k; T& r =
        r0;`` makes k, r0 and r one object), by the innermost scope that says; () when none."""
        for s in reversed(self.scopes):
            if name + _REF_KEY in s:
                other = s[name + _REF_KEY]
                return tuple(other.why.split("\0")) if isinstance(other, V.Opaque) else ()
        return ()

    def _bind(self, name: str, value: V.Value) -> None:
        for s in reversed(self.scopes):
            if name in s:
                s[name] = value
                return
        self.scopes[-1][name] = value

    def text(self, node: Any) -> str:
        t: str = node.text.decode(errors="replace")
        return " ".join(t.split())[:120]

    def sem_set(self, sem: int, v: V.Value, node: Any) -> None:
        """A local store of ``v`` into the word of ``sem``: a constant, or affine in enclosing loop indices
        (``start_sem.set(k + 1)``, ttnn ``reader_argmax_interleaved_multicore.cpp:394``) as a wait's threshold may
        be; anything else is refused by name."""
        if not isinstance(v, V.Sym) or v.trip is not None:
            self.int_of(v, node, "semaphore value")  # refuses, naming why
        assert isinstance(v, V.Sym)
        if v.is_const:  # a ``uint32_t`` word: the value modulo 2**32 (``word_field``), of the stored expression
            plain = node.type == "assignment_expression" and node.child_by_field_name("operator").type == "="
            v = V.const(self.word_field(v, node.child_by_field_name("right") if plain else node, "semaphore value"))
        self.emit(SemSet(sem, v.const, tuple(Term(x, c) for x, c in v.loops)), node)

    def int_of(self, v: V.Value, node: Any, what: str) -> int:
        if isinstance(v, V.Sym):
            if v.is_const:
                return v.const
            if v.trip is not None:
                self.refuse(f"{what} from a runtime range", node, f"{self.text(node)} depends on trip {v.trip[0]}; "
                                                                  "only loop counts may")
            self.refuse(f"{what} varying with a loop index", node, self.text(node))
        if isinstance(v, V.Opaque):
            self.refuse(f"{what} not known statically", node, f"{self.text(node)}: {v.why}")
        self.refuse(f"{what} not a number", node, f"{self.text(node)} is {V.kind(v)}")

    def cb_of(self, v: V.Value, node: Any) -> int:
        if isinstance(v, V.Cb):
            idx = v.index
        else:
            idx = self.int_of(v, node, "circular buffer index")
        if idx not in self.cb_index or self.cb_index[idx].scratchpad:
            # a scratchpad's index is the reading's own handle (past 63), never a circular buffer's
            self.refuse("circular buffer the host does not declare", node,
                        f"index {idx} on core {self.site}")
        return idx

    def pages_bytes(self, cb: int, size: V.Value, node: Any) -> int:
        """Pages of buffer ``cb`` a transfer of ``size`` bytes moves."""
        b = self.cb_index[cb]
        if self.survey:  # the survey's entry sizes are made up: a transfer of any size is read as one page
            return 1
        n = self.int_of(size, node, "transfer size")
        if n % b.entry_size:
            self.refuse("transfer of part of a page", node, f"{n} B of {b.entry_size} B pages of {b.name}")
        return n // b.entry_size

    def tiles_bytes(self, cb: int, size: V.Value, node: Any) -> int:
        return self.pages_bytes(cb, size, node) * self.cb_index[cb].page_tiles

    def addr_of(self, page: V.Sym, node: Any) -> Addr:
        if page.trip is not None:
            self.refuse("tensor page from a runtime range", node, self.text(node))
        return Addr(page.const, tuple(Term(v, c) for v, c in page.loops))

    def site_of(self, x: V.Value, y: V.Value, node: Any) -> Site:
        return Site(self.int_of(x, node, "core coordinate"), self.int_of(y, node, "core coordinate"))

    # ------------------------------------------------------------------ statements

    def stmt(self, n: Any) -> None:
        if n is None:
            return
        opened = self.linked
        self._stmt(n)
        if opened is not None and self.linked is opened and n.type != "comment":
            # the vendor's use is a linked multicast whose next statement is the multicast closing it (a data
            # multicast and its flag); any statement between, a branch or a loop's back edge is not followed
            self.linked_refused(f"the statement '{self.text(n).splitlines()[0].strip()}' follows it", n)
        if n.type in _LOOPS and self.linked is not None and self.linked is not opened:
            # opened in the body and open at its end: the next iteration's first transaction follows it, which a
            # loop read once for all its iterations does not see
            self.linked_refused("the loop's next iteration follows it", n)
        gap = _missing_token(n)
        if gap is not None:
            # tree-sitter's recovery inserted a token the text lacks (``f() g();``: a ';'): the statement is not
            # C++ the board could run, and what the recovery made of it is a guess. Checked after the reading, so
            # that a construct refused by its own name (``UNPACK(x = f();)``) keeps it
            self.refuse("C++ the parser could not read", n, f"a missing '{gap.type}'" if gap.is_missing else
                        f"'{self.text(gap)}' skipped")

    def _stmt(self, n: Any) -> None:
        self.node = n
        t = n.type
        if t == "compound_statement":
            self.scopes.append({})
            try:
                for c in n.named_children:
                    self.stmt(c)
            finally:
                self.scopes.pop()
        elif t == "declaration":
            self.declaration(n)
        elif t == "expression_statement":
            if n.named_child_count:
                e = n.named_children[0]
                if _discarded_comparison(e):
                    # a comparison whose value is discarded does nothing in C++; what reads as one here is most
                    # likely a call with template arguments tree-sitter parses as comparisons (``s.f<A | B>(x)``,
                    # ``x.f<1>(2)``): read as an expression it was dropped, its multicast with it (a new user's s11)
                    self.refuse("statement read as a comparison whose value is discarded", n,
                                f"{self.text(n)}: a call with template arguments the parser reads as comparisons?")
                self.expr(e)
        elif t == "for_statement":
            self.for_stmt(n)
        elif t == "if_statement":
            self.if_stmt(n)
        elif t == "switch_statement":
            self.switch_stmt(n)
        elif t == "while_statement":
            c = n.child_by_field_name("condition")
            self.scopes.append({})
            try:
                self.unroll(n, c.named_children[-1] if c.type == "condition_clause" else c, None,
                            n.child_by_field_name("body"), "while loop")
            finally:
                self.scopes.pop()
        elif t == "do_statement":
            self.scopes.append({})
            try:
                self.unroll(n, n.child_by_field_name("condition"), None, n.child_by_field_name("body"),
                            "do-while loop", body_first=True)
            finally:
                self.scopes.pop()
        elif t == "for_range_loop":
            self.scopes.append({})
            try:
                self.range_for(n)
            finally:
                self.scopes.pop()
        elif t == "break_statement" and self.switches and self.switches[-1] == len(self.unrolled) and \
                self.unrolled[-1] == len(self.loops) + self.guarded:
            # the innermost breakable statement is a switch read from its matching case, and no symbolic loop or
            # guarded branch was opened since: the break runs exactly when it is read, and ends the switch
            raise _SwitchBreak()
        elif t in ("break_statement", "continue_statement") and self.unrolled and \
                self.unrolled[-1] == len(self.loops) + self.guarded and not (
                    self.switches and self.switches[-1] == len(self.unrolled)):
            raise _Break() if t == "break_statement" else _Continue()
        elif t == "return_statement":
            if len(self.loops) + self.guarded > self.loop_base:
                # the reading does not split a loop or a guarded branch at an early exit
                self.refuse("return inside a loop or a branch on a loop index", n)
            value = self.expr(n.named_children[0]) if n.named_child_count else None
            raise _Return(value)
        elif t == "alias_declaration":
            # ``using D = ckl::Dst;`` in a body: the alias names the type for the rest of the reading; an alias of
            # a struct template's instance (``using dispatch = UntilizeDispatchConfig<w, in, out>;``,
            # kernel_lib/untilize_helpers.inl:164) holds its arguments for ``dispatch::use_fast``
            alias, target = n.child_by_field_name("name"), n.child_by_field_name("type")
            if alias is not None and target is not None:
                text = "".join(target.text.decode().split())
                self.type_aliases[alias.text.decode()] = nested_key(self.prog.structs, text) or \
                    text.rsplit("::", 1)[-1].split("<", 1)[0]
                tv = self.template_value(target)
                if isinstance(tv, V.TypeInst) and objects.struct_of(self, tv.name) is not None:
                    self.scopes[-1][alias.text.decode()] = tv
        elif t == "attributed_statement":
            # ``if (c) [[unlikely]] { ... }`` (strided_ring_reduce_scatter_common.hpp:77): an attribute is a hint to
            # the compiler (code layout, a warning it does not give); the statement is the statement
            self.stmt(n.named_children[-1])
        elif t == "enum_specifier":
            self.local_enum(n)
        elif t == "static_assert_declaration":
            self.static_assert(n)
        elif t == "namespace_alias_definition":
            got = namespace_alias(n)
            if got is not None:
                add_namespace_alias(self.ns_aliases, *got)
                if alias_clashes(*got, self.ns_aliases, self.prog.namespace_paths):
                    self.ns_aliases[got[0]] = None
        elif t == "type_definition":
            self.typedef(n)
        elif t in ("comment", "using_declaration", "empty_statement"):
            return
        elif t == ";":
            return
        elif t in ("struct_specifier", "class_specifier", "union_specifier"):
            # the reading keeps the kernel's types in the file's tables (``CppProgram``), filled before any function
            # is read; a type of a function's own is not among them
            self.refuse(f"a {t.split('_')[0]} declared inside a function", n,
                        "the reading follows types declared at file scope or in a namespace: declare it there")
        else:
            names = {"break_statement": "break",
                     "continue_statement": "continue", "goto_statement": "goto",
                     "ERROR": "C++ the parser could not read",
                     "labeled_statement": "label", "try_statement": "try"}
            self.refuse(names.get(t, f"statement {t}"), n)

    def local_enum(self, n: Any) -> None:
        """An enum defined in a function body (``enum SlotState : uint8_t { IDLE = 0, SRC_PENDING = 1, ... };``,
        padded_slice_reader_rm_interleaved_start_id.cpp:91): its unscoped enumerators are numbers in the enclosing
        scope, valued as ``cpp._enum`` values a file-scope enum's (one whose initializer is not a constant
        expression, and those after it, are not defined: a use is refused by name). The enum's own name is not
        recorded: ``SlotState::IDLE`` and a scoped enum's enumerators stay enumerators compared by name."""
        from verispatial.frontends.ttmetal.cpp import _enum, _Tables

        tables = _Tables()
        _enum(n, tables)
        for name, value in tables.unscoped.items():
            if value is not None:
                self.scopes[-1][name] = V.const(value)

    def declaration(self, n: Any) -> None:
        if not _is_const(n) and any(c.type == "storage_class_specifier" and c.text == b"static" for c in n.children):
            # a function is inlined at each call, and a loop body read once per iteration (or once for all of
            # them), which would set a static local up again each time, where C++ sets it up once and keeps its
            # value from one call or iteration to the next (``static uint32_t c = 0; ++c``)
            if self.depth:
                self.refuse("static local variable of a called function", n, "its value lives on from one call to "
                                                                              "the next")
            if self.loops or any(u >= 0 for u in self.unrolled):
                self.refuse("static local variable in a loop body", n, "its value lives on from one iteration to "
                                                                        "the next")
        typ = n.child_by_field_name("type")
        tname = self.type_name(typ)
        for d in n.children_by_field_name("declarator"):
            named = self.decl_name(d)
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            if value is not None and value.type == "argument_list" and (
                    named in api.FUNCTIONS or named in signatures.ARITIES or named in self.prog.functions):
                # ``ok\n cb_wait_front(0, 3);`` parses as a variable ``cb_wait_front`` of a type ``ok`` (a name left
                # by a define the host does not give, a missing semicolon): read as a declaration, the call is gone.
                # ``auto input = ckl::input(...)`` (``=``) names a variable as C++ lets it
                self.refuse("declaration named like a function", d,
                            f"{self.text(n)}: declares a {tname or 'value'} named {named}, the name of a function; "
                            "C++ reads a declaration here, not a call")
            # also std::array, nested ones a dimension each (``std::array<std::array<T, 4>, 4>``)
            dims = _array_dims(d, typ.text.decode().count("array<") if tname == "array" else 0)
            elem = objects.array_element_type(typ.text.decode()) if tname == "array" else tname
            esd = objects.struct_of(self, elem) if dims and elem and elem not in _CLASSES and _holds_objects(d) \
                else None
            if esd is not None:
                # ``G g[2];``, ``std::array<G, 2> g;``: each element an object C++ builds and destroys
                objects.created(self, esd, d, element=True)
            if dims:
                # its elements are the kernel's own words whatever the reading follows of them (``unnamed_store``),
                # to this many subscripts: past them, an element of pointers points elsewhere
                self.scopes[-1][self.decl_name(d) + _DIMS_KEY] = V.const(dims)
            inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else None
            while inner is not None and inner.type == "reference_declarator" and inner.named_child_count == 1:
                inner = inner.named_children[0]
            if inner is not None and inner.type == "structured_binding_declarator":
                # ``auto [a, b, c] = f();`` (rt_args_common.hpp:91 returns a braced tuple): one variable an element
                names = [c.text.decode() for c in inner.named_children if c.type == "identifier"]
                init = d.child_by_field_name("value")
                whole = self.construct(tname, init, d) if init is not None else V.Opaque("no initializer")
                for bname, value in zip(names, intrinsics.elements(self, whole, len(names), d), strict=True):
                    self.scopes[-1][bname] = value
                continue
            if d.type == "init_declarator" and tname in self.array_aliases and \
                    d.child_by_field_name("declarator").type == "identifier":
                name = self.decl_name(d.child_by_field_name("declarator"))
                value = self.aliased_array(tname, typ, d.child_by_field_name("value"), d)
            elif d.type == "init_declarator":
                name = self.decl_name(d.child_by_field_name("declarator"))
                init = d.child_by_field_name("value")
                value = self.construct(tname, init, d)
                if tname in ("CoreLocalMem", "Scratchpad"):
                    value = _core_local_mem(value, typ)
                elif isinstance(value, (V.L1Ptr, V.ArgArray)):
                    value = _declared_as(value, tname, d.child_by_field_name("declarator"))
                if isinstance(value, V.Designated) and _is_const(n):
                    value = intrinsics.table(self, value, d.child_by_field_name("declarator"), tname, typ)
            elif d.type in ("identifier", "pointer_declarator", "reference_declarator", "array_declarator"):
                name = self.decl_name(d)
                value = self.local_array(d, tname) if d.type == "array_declarator" and not _is_const(n) else None
                if value is None and d.type == "identifier" and tname in self.array_aliases:
                    value = self.aliased_array(tname, typ, None, d)
                if value is None:
                    value = self.construct(tname, None, d)
                if d.type == "array_declarator" and type(value) is V.Opaque:
                    # an array the reading does not follow element by element (of pointers, of a size not known):
                    # still the kernel's own words, which a store into changes nothing the choreography names
                    value = V.LocalOpaque(f"the local array {name}, not followed")
            elif d.type == "function_declarator" and (tname in _CLASSES or tname == "Noc"):
                # C++'s most vexing parse: ``DataflowBuffer dfb(dfb::out);`` and ``Noc noc_obj(noc_index);``
                # (moe_gpt/device/kernels/tilize_reader.cpp:252) read as a function declaration whose
                # "parameters" are the constructor's arguments
                name = self.decl_name(d.child_by_field_name("declarator"))
                params = d.child_by_field_name("parameters")
                args = [self.expr_text(p.text.decode(), p) for p in params.named_children] if params else []
                value = self.construct_values(tname, args, d)
            elif d.type == "function_declarator" and tname in ("CoreLocalMem", "Scratchpad"):
                # the same parse of ``CoreLocalMem<uint32_t> dst(l1_write_addr);`` (tilize's reader): a T array at
                # the address its one argument holds
                name = self.decl_name(d.child_by_field_name("declarator"))
                params = d.child_by_field_name("parameters")
                texts = ["".join(p.text.decode().split()) for p in params.named_children] if params else []
                if tname == "Scratchpad" and len(texts) == 1 and texts[0].startswith("scratch::"):
                    # its binding token, located at this declaration
                    value = _core_local_mem(self.scratchpad(texts[0].split("::", 1)[1], d), typ)
                else:
                    args = [self.expr_text(t, d) for t in texts]
                    value = _core_local_mem(args[0] if len(args) == 1 else V.Opaque(f"{tname}(...)"), typ)
            elif d.type == "function_declarator" and self.variable_arguments(d) and (
                    tname in TYPE_SIZES or tname == "bool" or (
                        tname not in _CLASSES and objects.struct_of(self, tname) is not None)):
                # ``uint32_t v(x);`` with ``x`` a variable: C++ reads a variable initialised from ``x`` (a function
                # declaration's parameters would be types); read as ``uint32_t v = x;``
                name = self.decl_name(d.child_by_field_name("declarator"))
                params = d.child_by_field_name("parameters")
                args = [self.expr_text(p.text.decode(), p) for p in params.named_children]
                sd = objects.struct_of(self, tname) if tname not in _CLASSES else None
                value = objects.construct(self, sd, args, d) if sd is not None else self.held_as(
                    args[0] if len(args) == 1 else V.Opaque(f"{tname}(...)"), tname)
            else:
                continue  # function declarations and the like
            if name:
                # a new variable of this name in this scope is no reference to, nor referred to by, another
                self.scopes[-1][name + _REF_KEY] = None
                self.scopes[-1][name + _PLACE_KEY] = None
                inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                init = d.child_by_field_name("value") if d.type == "init_declarator" else None
                self.refuse_unfollowed_binding(tname, inner, init, d)
                otype, temporary = self.object_type_of(tname, inner, init, n)
                self.scopes[-1][name + _IS_REF_KEY] = V.const(1) if inner is not None and \
                    inner.type == "reference_declarator" else None
                if not temporary:
                    self.bind_reference(name, d, n, otype)
                elif isinstance(value, (V.Sym, V.Ranged, V.Wide)):
                    # ``const uint8_t& r = 257``: a temporary of the reference's type, initialised as a variable of
                    # it is ([dcl.init.ref], [conv.integral]): it holds 1
                    value = self.to_integer(value, otype)
                # ``uint8_t v(x);`` (a function declarator read as a variable) is typed as ``uint8_t v = x;`` is
                if inner is not None and inner.type in ("identifier", "function_declarator"):
                    self.declared[name] = otype if self.declared.get(name, otype) == otype else ""
                    self.scopes[-1][name + _TYPE_KEY] = V.Opaque(otype)  # this declaration's type, for its scope
                    if _narrow(otype):
                        self.narrow.add(name)
                    if isinstance(value, V.Obj) and (tname in TYPE_SIZES or tname == "bool"):
                        self.no_object(value, f"a conversion to {tname}", d)  # ``uint32_t v = x;``
                    if otype == deduced.UNKNOWN and tname != "auto" and not tname.startswith("decltype") and \
                            isinstance(value, (V.Sym, V.Ranged, V.Wide)) and not (
                            isinstance(value, V.Sym) and value.is_const and 0 <= value.const < 128):
                        # ``T y = 255;`` of a type not known (``type_not_known``): what it holds is not followed
                        value = V.Opaque(f"{name}: its C++ type {self.text(typ)} is not known, so what it holds is not")
                    if _converts(otype) or (isinstance(value, V.Wide) and deduced.canonical(otype)):
                        # ``uint32_t n = 0x100000004ull`` holds the word 4 ([conv.integral])
                        value = self.to_integer(value, otype) if isinstance(value, (V.Sym, V.Ranged, V.Wide)) \
                            else value
                elif inner is not None and inner.type == "reference_declarator" and deduced.canonical(otype):
                    # a reference to an integer object has its referent's type: a store through it converts to it
                    # (``uint8_t& r = a; r += 2`` of a 255 holds 1); a reference of another type is not typed here
                    # (its place may be a struct's, ``own_variable``)
                    self.declared[name] = otype if self.declared.get(name, otype) == otype else ""
                    self.scopes[-1][name + _TYPE_KEY] = V.Opaque(otype)
                    if _narrow(otype):
                        self.narrow.add(name)
                self.scopes[-1][name] = value

    def refuse_unfollowed_binding(self, tname: str, inner: Any, init: Any, d: Any) -> None:
        """Refuses the declarations whose name may be another name of an object that the reading does not link
        (a store through one would leave the other stale): an rvalue or forwarding reference (``auto&& r = a`` is an
        lvalue reference to ``a``, [dcl.ref]/6 and [temp.deduct.call]/3; ``T&& r = std::move(a)`` names ``a``), and
        ``decltype(auto)`` (``decltype(auto) r = (a)`` is ``T&``, [dcl.type.decltype]/1). Read as copies, both
        proved a semaphore increment the device makes 1 as 4 (no ttnn 0.81.1 kernel declares either)."""
        if inner is not None and inner.type == "reference_declarator" and inner.text.startswith(b"&&"):
            self.refuse("rvalue or forwarding reference variable", d,
                        f"{self.text(d)}: which object it names (a variable it refers to, or a temporary it extends) "
                        "is not followed")
        if tname.replace(" ", "").startswith("decltype(auto)") and init is not None:
            self.refuse("decltype(auto) variable", d,
                        f"{self.text(d)}: it is a reference where its initialiser is a parenthesised name or a "
                        "reference, which the reading does not follow")

    def object_type_of(self, tname: str, inner: Any, init: Any, decl: Any) -> tuple[str, bool]:
        """The type of the object a declarator ``inner`` of type ``tname`` initialised with ``init`` (or None) in
        declaration ``decl`` names, and whether it is a temporary a reference binds. ``auto`` / ``decltype(auto)``
        deduce it from the initializer's type ([dcl.spec.auto]: ``auto m = n`` of a ``uint8_t n`` is a ``uint8_t``,
        ``auto s = n + 1`` an ``int``), ``deduced.UNKNOWN`` where the reading cannot type it; a reference to a variable
        names that variable's object, of its type; a reference to const (or an rvalue reference) bound to a value of
        another type, or to no variable (``const uint8_t& r = 257``), binds a temporary of its own type
        ([dcl.init.ref])."""
        ref = inner is not None and inner.type == "reference_declarator"
        init_t = deduced.expr_type(self, init) if init is not None else None
        if self.type_not_known(tname):
            return deduced.UNKNOWN, False
        if tname == "auto" or tname.startswith("decltype"):
            return init_t or deduced.UNKNOWN, False
        c = deduced.canonical(tname)
        if not ref or c is None or init is None:
            return tname, False
        held = _unparen(init.named_children[0] if init.type in ("initializer_list", "argument_list")
                        and init.named_child_count == 1 else init)
        if (_is_const(decl) or inner.text.startswith(b"&&")) and (
                held.type != "identifier" or (init_t is not None and init_t != c)):
            return tname, True
        return tname, False

    def is_alias_template(self, name: str) -> bool:
        """Whether ``name`` is declared by a file-scope ``template <...> using name = ...;`` (not an array alias)."""
        if name in self.array_aliases:
            return False
        if self._alias_templates is None:
            # the units the kernel reads (its own and each followed header's), searched once
            units = {id(u.root): u.root for _, u in [*self.prog.functions.values(), *self.prog.globals,
                                                     (None, self.prog.main_unit)]}
            found: set[str] = set()
            stack = list(units.values())
            while stack:
                x = stack.pop()
                if x.type == "template_declaration":
                    found |= {c.child_by_field_name("name").text.decode() for c in x.named_children
                              if c.type == "alias_declaration" and c.child_by_field_name("name") is not None}
                elif x.type in ("translation_unit", "namespace_definition", "declaration_list",
                                "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
                    stack.extend(x.named_children)
            self._alias_templates = frozenset(found)
        return name in self._alias_templates

    def type_not_known(self, tname: str) -> bool:
        """Whether declared type ``tname`` (``type_name``) is one the reading cannot resolve to a type: an alias
        template's instance, an integer type whose width the toolchain's headers decide (``uint_fast16_t``), or a
        type template parameter of the function being read that no template argument binds (deduced from a call's
        arguments, ``template <class T> T f(T x)``): a value stored as it is not followed ([conv.integral] would
        convert it to a width the reading does not know; read as a 32-bit word, 257 was kept where g++ gives 1)."""
        if tname == deduced.UNKNOWN_TYPE or tname in deduced.NOT_KNOWN:
            return True
        return tname.isidentifier() and self.lookup(tname + _TPARAM_KEY) is not None

    def variable_arguments(self, d: Any) -> bool:
        """Whether function declarator ``d`` in a body (``uint32_t v(x);``, ``X y(x, n);``) is C++'s declaration of
        a variable: each "parameter" a bare name of a variable in scope, which C++ cannot read as a type."""
        params = d.child_by_field_name("parameters")
        ps = [p for p in params.named_children if p.type != "comment"] if params is not None else []
        return bool(ps) and len(self.scopes) > 1 and all(
            p.type == "parameter_declaration" and p.child_by_field_name("declarator") is None
            and p.child_by_field_name("type") is not None and p.child_by_field_name("type").type == "type_identifier"
            and self.lookup(p.text.decode()) is not None for p in ps)

    def bind_reference(self, name: str, d: Any, decl: Any, otype: str = "") -> None:
        """``T& name = other;`` (an lvalue reference to the variable ``other``, not ``&&``): from here on a store to
        either is a store to both (``assign``). A reference read as the copy it was initialised with once proved a
        reader whose loop count the kernel raised through it (``uint32_t& r = n; r = r + 1;``: 9 tiles read of an
        8-tile tensor, read as 8)."""
        if d.type != "init_declarator":
            return
        ref = d.child_by_field_name("declarator")
        init = d.child_by_field_name("value")
        if ref is None or ref.type != "reference_declarator" or ref.text.startswith(b"&&") or init is None:
            return
        held = _unparen(init)
        if not _is_const(decl) and deduced.canonical(otype) is not None and held.type in (
                "update_expression", "assignment_expression", "conditional_expression", "comma_expression",
                "call_expression"):
            # ``uint8_t& r = ++a;`` names ``a`` (a prefix increment, an assignment, a conditional of lvalues and a
            # comma are lvalues, [expr.pre.incr], [expr.ass], [expr.cond], [expr.comma]); a call may return a
            # reference: which integer object it names is not followed (read as a copy, a store through r was lost;
            # a reference to a device object, ``auto& b = c ? dfb_a : dfb_b``, holds no value a store changes)
            self.refuse("reference to the result of an expression", d,
                        f"{self.text(d)}: which object it names is not followed")
        if held.type in ("subscript_expression", "pointer_expression", "field_expression") and \
                not _is_const(decl):
            self.scopes[-1][name + _PLACE_KEY] = V.Opaque(held.text.decode())  # a store through it is refused
            return
        if held.type != "identifier" or self.lookup(held.text.decode()) is None:
            return
        other = held.text.decode()
        # a reference to a reference names the object both name (``T& r0 = k; T& r = r0;``: k, r0 and r are one):
        # every name of it is linked to every other, so a store through any leaves none stale (a loop count lowered
        # through ``r`` once read as the first value); the links must agree, else a name was hidden since (refused)
        group = {other, *self.ref_names(other)}
        for m in group:
            if set(self.ref_names(m)) != group - {m}:
                self.refuse("reference to a variable another reference names", d,
                            f"{self.text(d)}: {other} is one object with {', '.join(sorted(group - {other}))}, "
                            f"and {m} names another variable here")
        group.discard(name)
        for m in group:
            # the names held as an Opaque's text, NUL-separated (no C++ name holds a NUL), as _TYPE_KEY's
            self.scopes[-1][m + _REF_KEY] = V.Opaque("\0".join(sorted((group - {m}) | {name})))
        self.scopes[-1][name + _REF_KEY] = V.Opaque("\0".join(sorted(group)))

    def expr_text(self, text: str, node: Any) -> V.Value:
        """The value of an expression given as text (re-parsed alone; only its value is used)."""
        from verispatial.frontends.ttmetal.cpp import _parser

        tree = _parser().parse(f"auto __x = ({text});".encode())
        decl = tree.root_node.named_children[0] if tree.root_node.named_child_count else None
        init = decl.child_by_field_name("declarator") if decl is not None else None
        value = init.child_by_field_name("value") if init is not None else None
        if value is None:
            return V.Opaque(text)
        saved = self.unit
        self.reparsed.append((tree.root_node, node))
        try:
            return self.expr(value)
        finally:
            self.unit = saved
            self.reparsed.pop()

    def construct_values(self, tname: str, args: list[V.Value], node: Any) -> V.Value:
        if tname in ("DataflowBuffer", "CircularBuffer"):
            if not args:
                self.refuse("DataflowBuffer without an index", node)
            return V.Cb(self.cb_of(args[0], node))
        if tname == "Semaphore":
            if self.kernel.engine == Engine.COMPUTE:
                # not the L1 word the model counts: a compute binding is the Tensix Sync Unit's semaphore
                self.refuse("Semaphore in a compute kernel", node,
                            "a compute binding is the Tensix Sync Unit's semaphore, not the L1 word (COMPUTE_ATOMIC, "
                            "api/semaphore.h:25-27; on Wormhole no compute build implements it, :40-42), and one "
                            "built from a runtime id does not compile (:60-70)")
            if not args:
                self.refuse("Semaphore without an id", node)
            return self.semaphore(args[0], node)
        if tname == "TensorAccessor":
            return self.accessor(args, node)
        if tname == "Noc":
            # ``Noc()`` / ``Noc noc(noc_index)`` (api/dataflow/noc.h): the kernel's own NoC, whose barriers the
            # reading follows; a Noc object of the other NoC is not followed (its transfers are not the kernel's
            # NoC's, nor are its barriers)
            if not args or (len(args) == 1 and isinstance(args[0], V.Sym) and args[0].is_const
                            and args[0].const == self.kernel.noc):
                return V.NocObj()
            return V.Opaque(f"a Noc of another NoC than the kernel's NoC {self.kernel.noc}: {self.text(node)}")
        return V.Opaque(f"a {tname}")

    def type_name(self, typ: Any) -> str:
        """The name of type node ``typ`` as declarations hold it (``resolved``: an alias, a typedef or a template type
        parameter followed to its type; ``decltype(x)`` the type ``x`` is declared with)."""
        if typ is None:
            return ""
        t = typ
        if t.type == "template_type":
            t = t.child_by_field_name("name")
        if t.type == "decltype" and t.named_child_count == 1 and t.named_children[0].type == "identifier":
            x = t.named_children[0].text.decode()
            scope = self.declaring_scope(x)
            if scope is not None and scope.get(x + _IS_REF_KEY) is not None:
                # ``decltype(r)`` of a reference is a reference type: a variable of it is another name of the
                # object, not a copy (read as a copy, a store through it was lost)
                self.refuse("decltype of a reference", typ, f"{self.text(typ)}: {x} is a reference, so the type is one")
            return self.type_of(x) or "decltype"
        s: str = t.text.decode()
        if t is not typ and self.is_alias_template(s):
            # an alias template (``template <class T> using A = T; A<uint8_t>``): which type its arguments make is
            # not followed, so the object's type is not known (read as a word, a store of 257 kept 257)
            return deduced.UNKNOWN_TYPE
        if "::" in s.split("<", 1)[0].lstrip(":"):
            # a nested class (``O::I i;``) by its key: its last component alone names no class (cpp.nested_key)
            key = nested_key(self.prog.structs, s)
            if key is not None:
                return key
        name = self.resolved(s.rsplit("::", 1)[-1].split("<", 1)[0].strip())
        # every spelling of an integer type is its fixed-width name (``unsigned char`` is ``uint8_t``): the
        # conversions a store makes key on it (``unsigned char a = 255; a += 2`` kept 257 where g++ gives 1)
        return deduced.canonical(name) or name

    def resolved(self, name: str) -> str:
        """Type name ``name`` with ``using`` and ``typedef`` aliases and a template type parameter bound to a type
        (``T`` of ``conv<uint8_t>``) followed; a narrow type so named converts what is stored (``T8 x = 258`` of
        ``typedef uint8_t T8`` holds 2; it was read as 258)."""
        for _ in range(8):  # an alias of an alias
            bound = self.lookup(name) if name.isidentifier() else None
            nxt = bound.name if isinstance(bound, V.TypeName) else self.type_aliases.get(name, name)
            if nxt == name:
                break
            name = nxt
        return name

    def typedef(self, n: Any) -> None:
        """``typedef uint8_t T8;``: ``T8`` names the type as a ``using`` alias does (``type_aliases``)."""
        typ = n.child_by_field_name("type")
        for d in n.children_by_field_name("declarator"):
            if d.type == "type_identifier" and typ is not None:
                self.type_aliases[d.text.decode()] = nested_key(self.prog.structs, typ.text.decode()) or \
                    " ".join(typ.text.decode().split()).rsplit("::", 1)[-1]

    def decl_name(self, d: Any) -> str:
        while d is not None and d.type not in ("identifier", "field_identifier"):
            inner = d.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in d.named_children if c.type in ("identifier", "pointer_declarator",
                                                                         "reference_declarator")), None)
            d = inner
        return d.text.decode() if d is not None else ""

    def construct(self, tname: str, init: Any, node: Any) -> V.Value:
        """The value a declaration of type ``tname`` initialised with ``init`` (an expression, an argument list,
        an initializer list or None) holds."""
        args: list[Any] = []
        if init is not None and init.type in ("argument_list", "initializer_list"):
            args = [a for a in init.named_children if a.type != "comment"]
        sd = objects.struct_of(self, tname) if tname and tname not in _CLASSES else None
        if sd is not None:
            # a struct variable: ``Shape t(3);``, ``Pair p{};``, ``Shape s = Shape::tiles(4);``
            if init is None or init.type in ("argument_list", "initializer_list"):
                vals = [self.designated(a) if a.type == "initializer_pair" else self.expr(a) for a in args]
                return objects.construct(self, sd, vals, node, braced=init is None or init.type == "initializer_list")
            return objects.convert(self, self.expr(init), sd.name, node)
        if tname in ("DataflowBuffer", "CircularBuffer") and (args or init is None or init.type != "call_expression"):
            if not args and init is not None:
                return self.expr(init)  # a copy: DataflowBuffer b = a;
            if not args:
                self.refuse("DataflowBuffer without an index", node)
            v = self.expr(args[0])
            return V.Cb(self.cb_of(v, node))
        if tname == "Noc" and (init is None or init.type in ("argument_list", "initializer_list")):
            return self.construct_values(tname, [self.expr(a) for a in args], node)
        if tname.rsplit("::", 1)[-1] == "UnicastEndpoint" and (init is None or not args):
            return V.Unicast()
        if tname == "Semaphore" and args:
            return self.construct_values(tname, [self.expr(args[0])], node)
        if tname in ("InterleavedAddrGen", "InterleavedAddrGenFast", "InterleavedPow2AddrGen",
                     "InterleavedPow2AddrGenFast") and init is not None:
            d = self.expr(init)
            base = d.get("bank_base_address") if isinstance(d, V.Designated) else None
            if isinstance(base, V.TensorAddr):
                return V.Accessor(base.tensor)
            return V.Opaque(f"{tname} over an address not a tensor's")
        if tname == "TensorAccessor" and init is not None and init.type == "argument_list":
            return self.accessor([self.expr(a) for a in args], node)
        if init is None:
            return V.Opaque(f"uninitialised {tname}")
        if init.type == "argument_list":
            return self.expr(args[0]) if len(args) == 1 else V.Opaque(f"{tname}(...)")
        if init.type == "initializer_list":
            return self.expr(init) if len(args) != 1 else self.expr(args[0])
        return self.expr(init)

    def scratchpad(self, name: str, node: Any) -> V.L1Ptr:
        """``scratch::NAME``, the binding token of the host's scratchpad ``NAME`` (api/scratchpad_binding_token.h),
        as the base address of its bytes on this core (``Scratchpad(token)`` reads it from a common runtime arg,
        api/scratchpad.h:56-60): a data-movement kernel's scratch L1 (``read_scratch`` reads it as scratch from the
        start). In the survey every token is the survey's one scratchpad. Refused by name: a scratchpad the host
        does not declare on this core, a scratchpad in a compute kernel (its ``operand()`` feeds the LLK directly,
        api/scratchpad.h:111-121, which the reading does not follow)."""
        if self.kernel.engine == Engine.COMPUTE:
            self.refuse("Scratchpad in a compute kernel", node, self.text(node))
        if self.survey and self.scratchpads:
            name = next(iter(self.scratchpads))
        if name not in self.scratchpads:
            self.refuse("scratchpad the host does not declare", node,
                        f"{name} (declared on {self.site}: {', '.join(self.scratchpads) or 'none'})")
        return self.pointer(self.scratchpads[name], False, node)

    def semaphore(self, v: V.Value, node: Any) -> V.SemAddr:
        if isinstance(v, V.SemAddr):
            return v
        i = self.int_of(v, node, "semaphore id")
        if not 0 <= i < len(self.sem_names):
            self.refuse("semaphore the host does not declare", node, f"id {i}")
        return V.SemAddr(i)

    def accessor(self, args: list[V.Value], node: Any) -> V.Value:
        addr = next((a for a in args if isinstance(a, V.TensorAddr)), None)
        if addr is None and self.survey:
            return V.Accessor("tensor")
        if addr is None:
            return V.Opaque("TensorAccessor over an address not a tensor's")
        return V.Accessor(addr.tensor)

    # ------------------------------------------------------------------ loops and branches

    def for_stmt(self, n: Any) -> None:
        self.scopes.append({})
        try:
            self._for(n)
        finally:
            self.scopes.pop()

    def _for(self, n: Any) -> None:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        upd = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        if init is not None:
            if init.type == "declaration":
                self.declaration(init)
            else:
                self.expr(init)
        if cond is None or upd is None:
            self.unroll(n, cond, upd, body, "for loop without a condition or step")
            return
        if cond.type != "binary_expression":
            t = cond
            while t is not None and t.type not in ("template_type", "template_function"):
                t = t.named_children[0] if t.named_children else None  # the leftmost name: ``j<...>::v``
            if t is not None:
                self.not_a_template(t, cond)  # ``j < P<2>::v``: the comparison read as a template's member
            self.unroll(n, cond, upd, body, "for loop condition not 'index OP bound'")
            return
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        op = cond.child_by_field_name("operator").type
        if (left.type != "identifier" or self.step_of(upd, left.text.decode()) is None) and \
                right.type == "identifier" and op in _MIRRORED and self.step_of(upd, right.text.decode()) is not None:
            # ``n > i`` is ``i < n`` (a comparison's operands swapped, its operator mirrored): the index is the
            # variable the step updates, on either side
            left, right, op = right, left, _MIRRORED[op]
        if left.type != "identifier":
            self.unroll(n, cond, upd, body, "for loop condition not 'index OP bound'")
            return
        var = left.text.decode()
        step = self.step_of(upd, var)
        if step is None:
            self.unroll(n, cond, upd, body, "for loop step not '++', '--', '+= c' or '-= c' of its index")
            return
        a = self.lookup(var)
        b = self.expr(right)
        if not isinstance(a, V.Sym) or not isinstance(b, V.Sym):
            why = a.why if isinstance(a, V.Opaque) else b.why if isinstance(b, V.Opaque) else "not a number"
            # a loop with no op in it (the stores of a constant tile, face by face) is read once for its stores
            self.assign(var, V.Opaque(f"{var}, the index of a loop of a count not known statically"), n)
            if self.without_ops(body):
                return
            self.refuse("loop bound not known statically", n, f"{self.text(cond)}: {why}")
        if a.is_const and b.is_const:
            # the index and its bound as 32-bit words (``_word``): a bound past the word has wrapped; a negative
            # start or bound against a non-negative one runs 0 times signed and about 2**32 times unsigned
            a, b = V.const(_word(a.const)), V.const(_word(b.const))
            if (a.const < 0) != (b.const < 0) and not (_signed(init) and self.signed_operand(right)):
                self.refuse("loop between a negative and a non-negative number", n,
                            f"{self.text(cond)}: from {a.const} to {b.const} (signed or unsigned not followed)")
        for v in (a, b) if not _signed(init) else (b,):  # ``int i = n - 1`` is -1 at n = 0: no iteration
            if v.trip is not None and v.trip[1] > 0 and v.const < 0:
                # ``n - 1`` with n = 0 at the range's low end: as a uint32_t it is 2**32 - 1, not -1, and
                # ``i <= n - 1`` / ``i < n - 1`` never end there (the reading would count no iteration)
                self.refuse("loop bound below 0 at a runtime range's low end", n,
                            f"{self.text(cond)}: {'start' if v is a else 'bound'} {v.const} where trip {v.trip[0]} "
                            "is 0 (an unsigned word wraps)")
        for v in (a, b):
            got = self.value_range(v) if v.trip is not None else None
            if got is not None and v.trip is not None and got[1] >= 1 << 32:
                # ``n + 1`` with n = 2**32 - 1 at the range's high end is 0 as a 32-bit word: the loop runs no
                # iteration there where the reading would count 2**32 (a reader of ``n + 1`` pages proved against a
                # consumer of ``n`` and one more, which waits forever at that value)
                self.refuse("loop bound past 2**32 - 1 at a runtime range's high end", n,
                            f"{self.text(cond)}: {'start' if v is a else 'bound'} reaches {got[1]} "
                            f"where trip {v.trip[0]} is at its largest (a 32-bit word wraps)")
        span: V.Sym | V.Opaque
        if step > 0 and op in ("<", "!="):
            span = b + (-a)
        elif step > 0 and op == "<=":
            span = b + (-a) + V.const(1)
        elif step < 0 and op in (">", "!="):
            span = a + (-b)
        elif step < 0 and op == ">=":
            span = a + (-b) + V.const(1)
        else:
            self.refuse("for loop whose condition never ends it", n, self.text(cond))
        if isinstance(span, V.Opaque):
            # a count the IR cannot hold as one trip (``hi - lo`` of two runtime ranges: a trip is one range, and
            # lo may pass hi), or one of a value not followed: named by what it came from
            two = isinstance(a, V.Sym) and isinstance(b, V.Sym) and a.trip is not None and b.trip is not None
            self.refuse("loop count of two runtime ranges" if two else f"loop count of {span.why}", n,
                        self.text(cond))
        if span.loops:
            self.refuse("loop bound varying with an enclosing loop index", n, self.text(cond))
        count: int | str | TripCount
        if span.trip is None:
            if op == "!=" and (span.const < 0 or span.const % abs(step)) and _narrow(self.type_of(var)):
                # ``for (uint8_t i = 250; i != 4; ++i)``: the index wraps past 255 to 0 and reaches its bound after
                # 10 iterations (or never): read as it runs, each value converted to the index's type (``assign``)
                self.unroll(n, cond, upd, body, "for loop whose index wraps before its condition ends it")
                return
            if op == "!=" and span.const % abs(step):
                self.refuse("for loop whose '!=' bound is stepped over", n, self.text(cond))
            if op == "!=" and span.const < 0:
                # ``for (uint32_t i = 5; i != 2; ++i)``: the index is past its bound from the start, wraps and runs
                # 2**32 - 3 iterations, where ``<`` would run none (until 2026-12-06 read as no iteration: a reader
                # pushing into a ring no one drains was proved)
                self.refuse("for loop whose '!=' bound is stepped over", n,
                            f"{self.text(cond)}: the bound is {-span.const} behind the start")
            count = max(0, -(-span.const // abs(step)))
            if count >= 1 << 32:
                self.refuse("loop of 2**32 iterations or more", n, f"{self.text(cond)}: {count}")
            last = V.const(count - 1)
        else:
            if abs(step) != 1:
                self.refuse("loop with a step over a runtime range", n, self.text(n.child_by_field_name("update")))
            tname, coef = span.trip
            if coef < 1:
                self.refuse("loop count falling as a runtime range grows", n, self.text(cond))
            if op == "!=" and span.const < 0:
                # ``for (i = 5; i != n; ++i)`` with n < 5 at the range's low end: the index passes n, wraps and
                # runs about 2**32 iterations, where ``<`` would run none
                self.refuse("for loop whose '!=' bound is stepped over", n,
                            f"{self.text(cond)}: at the range's low end (trip {tname} = 0) the bound is "
                            f"{-span.const} below the start")
            count = tname if (coef, span.const) == (1, 0) else TripCount(tname, coef, span.const)
            last = span + V.const(-1)  # type: ignore[assignment]
        if count == 0:
            return
        # the index's first value that fails the condition: an unsigned index cannot go below 0 (nor a 32-bit one
        # past 2**32 - 1), it wraps and the condition holds again (``for (uint32_t i = n - 1; i >= 0; --i)`` never
        # ends)
        end = (a + V.const(step * count)) if isinstance(count, int) else (
            b + V.const(-1 if op == ">=" else 1 if op == "<=" else 0))
        if isinstance(end, V.Sym) and end.trip is None and not end.loops and (
                (end.const < 0 and not _signed(init)) or end.const >= 1 << 32):
            self.refuse("for loop whose index wraps before its condition ends it", n,
                        f"{self.text(cond)}: {var} reaches {end.const}"
                        + ("" if end.const >= 1 << 32 else " (an unsigned index or one not declared here)"))
        if self.is_narrow(var):
            self.narrow_index(n, var, cond, a, end)
        if count == 1 and self.single_iteration(n, var, a, step, cond, upd, body):
            return
        if var in self.assigned_in(body, calls=False):
            if isinstance(count, int) and count <= UNROLL_LIMIT:
                self.unroll(n, cond, upd, body, "loop index assigned in its body")
                return
            self.refuse("loop index assigned in its body", n, var)
        saved = self.snapshot()
        bound = {x.text.decode() for x in _identifiers(right)}
        try:
            self._counted(n, var, a, step, count, last, body, bound)
        except Refused:
            # the body does not read with the index as a symbol (a page id of i / Wt, a branch on i % 2, a bound
            # varying with i): a loop of a constant count is read as it runs, iteration by iteration
            if not isinstance(count, int) or count > UNROLL_LIMIT:
                raise
            self.restore(saved)
            self.unroll(n, cond, upd, body, "counted loop read iteration by iteration")

    def single_iteration(self, n: Any, var: str, a: V.Sym, step: int, cond: Any, upd: Any, body: Any) -> bool:
        """A counted loop of one iteration (``for (b = 0; b < batch; ++b)`` at a host's ``batch`` of 1) read as
        ``unroll`` reads it, its one iteration with the index at its one value ``a`` (the index and every variable
        exact, no step to find), and kept as a ``Loop`` of count 1 around the iteration's ops, which a loop of
        count 1 runs once. The reading with the index a symbol (``inductions``, ``_counted``) reads the body two to
        four times, each reading of a nested loop again at every level, and is refused where a page id or branch
        needs the index's value, to be read once more iteration by iteration: four nested loops of count 1
        (matmul's ``bmm_large_block_zm_fused_bias_activation``) were read hundreds of times. False, with nothing of
        the reading kept, where that reading is not the loop's whole run — the condition does not fail after the
        iteration (the body moves the index), the body returns, it is refused, or it leaves the DST accumulator
        held in another state (an acquire and its release on the two sides of the loop) — and the caller reads the
        loop as before."""
        saved = self.snapshot()
        acc0 = self.acc
        state0 = (acc0.tiles, acc0.state) if acc0 is not None else None
        self.blocks.append(Block(certain=True))
        # ``break`` and ``continue`` directly in the body end the iteration, as ``unroll`` catches them
        self.unrolled.append(len(self.loops) + self.guarded)
        whole = False
        try:
            try:
                self.stmt(body)
                broke = False
            except _Break:
                broke = True
            except _Continue:
                broke = False
            if not broke:
                self.expr(upd)
                whole = self.cond(cond) is False
            whole = whole or broke
            whole = whole and self.acc is acc0 and state0 == ((self.acc.tiles, self.acc.state)
                                                                if self.acc is not None else None)
        except (Refused, _Return):
            whole = False
        finally:
            self.unrolled.pop()
            inner = self.blocks.pop()
            inner.closed = True
        if not whole:
            self.restore(saved)
            return False
        if inner.ops:
            k = self.loop_var(var)
            loc = self.loc(n)
            if (var, step) != (k, 1) or not a.is_const or a.const:
                loc = attrs.evolve(loc, index=LoopIndex(var, step, a.const, a.loops, a.trip))
            self.blocks[-1].add_container(Loop(k, 1, tuple(inner.ops)), loc, inner)
        return True

    def narrow_index(self, n: Any, var: str, cond: Any, start: V.Sym, end: V.Value) -> None:
        """Refuses a loop whose index, of a type narrower than the 32-bit word (``uint8_t i``), cannot hold every
        value from its start to the first one that fails the condition: ``for (uint8_t i = 0; i < 300; ++i)``
        wraps from 255 to 0 and never ends on the RISC (the comparison promotes ``i`` to int, C++ [conv.prom]), where
        the count read from the condition would be 300. The values are bounded over every enclosing loop index and
        trip value (``value_range``); a name declared with several types is checked against the narrowest rule
        there is, 8 unsigned bits."""
        t = self.type_of(var)
        width = _size_of_type(t) if t else 1
        if width is None or width >= 4 or t.endswith("bool"):
            return
        signed = bool(t) and t.split()[-1].startswith("int")
        lo, hi = (-(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1) if signed else (0, (1 << 8 * width) - 1)
        for v in (start, end):
            got = self.value_range(v) if isinstance(v, V.Sym) else None
            if got is None or got[0] < lo or got[1] > hi:
                self.refuse("for loop whose index wraps before its condition ends it", n,
                            f"{self.text(cond)}: a {t or 'narrow'} {var} holds {lo}..{hi}, "
                            + (f"and reaches {got[1] if got[1] > hi else got[0]}" if got is not None else "a value not followed"))

    def value_range(self, v: V.Sym) -> tuple[int, int] | None:
        """The least and greatest value of ``v`` over the open loops' index ranges (``[0, count - 1]``, a count
        over a trip at the trip's largest value) and its trip's range ``[0, max]``; None when a loop or trip it
        names is not known here."""
        lo = hi = v.const
        counts = {lp.var: lp.count for lp in self.loops}
        for k, c in v.loops:
            count = counts.get(k)
            if count is None:
                return None
            top = (count if isinstance(count, int) else self.trip_top(count))
            if top is None:
                return None
            span = c * max(0, top - 1)
            lo, hi = lo + min(0, span), hi + max(0, span)
        if v.trip is not None:
            tmax = self.shared.trips.get(v.trip[0])
            if tmax is None:
                return None
            span = v.trip[1] * tmax
            lo, hi = lo + min(0, span), hi + max(0, span)
        return lo, hi

    def trip_top(self, count: str | TripCount) -> int | None:
        """The largest value of a loop count over a trip (the trip at its largest value), None if not known."""
        name = count if isinstance(count, str) else count.trip
        tmax = self.shared.trips.get(name)
        if tmax is None:
            return None
        return tmax if isinstance(count, str) else count.value(tmax)

    def snapshot(self) -> tuple[Any, ...]:
        """What a reading that may be abandoned changes: variables, groups, trips and the accumulator (and the
        stores, reads and NoC command state it follows); the command state last (``saved[-1]``)."""
        return ([dict(sc) for sc in self.scopes], dict(self.shared.groups), dict(self.shared.trips),
                attrs.evolve(self.acc) if self.acc is not None else None, self.acc, self.unroll_budget,
                {b: attrs.evolve(f) for b, f in self.fills.items()}, set(self.noc_filled), self.local_reads(),
                dict(self.noc_cmd))

    def local_reads(self) -> tuple[dict[int, list[tuple[ReadTiles, bool]]], set[int], set[int]]:
        """A copy of what ``local_copy_read`` and ``stated_load`` follow: the reads into each page being built, the
        copies' sources, the buffers whose front page is waited for."""
        return {cb: list(r) for cb, r in self.page_reads.items()}, set(self.copy_sources), set(self.front_waited)

    def restore(self, saved: tuple[Any, ...]) -> None:
        (scopes, self.shared.groups, self.shared.trips, acc_copy, acc, self.unroll_budget, self.fills,
         self.noc_filled, (self.page_reads, self.copy_sources, self.front_waited), noc_cmd) = saved
        self.noc_cmd = dict(noc_cmd)
        for live, old in zip(self.scopes, scopes, strict=True):
            live.clear()
            live.update(old)
        if acc is not None and acc_copy is not None:
            acc.tiles, acc.state = acc_copy.tiles, acc_copy.state
        self.acc = acc

    def _counted(self, n: Any, var: str, a: V.Sym, step: int, count: int | str | TripCount, last: V.Sym,
                 body: Any, bound: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        """A counted loop read once with its index as a symbol: a ``Loop`` op. Refused (``loop index assigned in
        its body``, ``loop bound assigned in its body``) when an iteration leaves the index other than the step
        makes it or changes a variable of the bound (``bump(i)`` through a reference parameter, ``n = 7``): the
        count is then not ``(bound - start) / step``; the caller reads a loop of a constant count as it runs."""
        k = self.loop_var(var)
        outer = sorted(v for v in self.assigned_in(body) if v != var and any(v in sc for sc in self.scopes))
        outer += sorted(v for v in self.scopes[0] if is_counter(v))
        start = {v: self.lookup(v) for v in outer}
        inductions = self.inductions(n, body, var, k, a, step, count, last, start)
        for v in outer:
            s0 = start[v]
            if v in inductions and _steppable(s0):
                self.assign(v, _stepped(s0, V.Sym(0, ((k, inductions[v]),))) if inductions[v] else s0, n)
            elif _steppable(s0):
                self.assign(v, self.unfollowed(v, s0, f"{v} changes from one iteration to the next"), n)
        self.blocks.append(Block(certain=isinstance(count, int) and count > 0))
        self.loops.append(_Loop(k, count, last, self.blocks[-1]))  # type: ignore[arg-type]
        self.repeats.append(self.loops[-1])
        before = {cb: (f.drained, f.stores) for cb, f in self.fills.items()}
        entry = {v: self.lookup(v) for v in bound}
        # the states this body's with_state calls use, apart from those of earlier readings (``inductions``'s)
        cmd0, used_outside, self.noc_used = dict(self.noc_cmd), self.noc_used, set()
        try:
            # assigned with its loop open: a signed or narrow index (``int j``) converts by the range the loop
            # gives it, not as a number whose range is not known
            self.assign(var, a + V.Sym(0, ((k, step),)), n)
            index = self.lookup(var)
            # every variable the body can see, as it is before the body: one the body changes that no name in it
            # assigns (through a reference declared in the body, a lambda capturing by reference, a field stored)
            # is refused below, so that a loop of a constant count is read iteration by iteration
            visible: dict[str, V.Value] = {}
            for sc in self.scopes:  # outermost first: an inner scope's name hides an outer one's, as lookup finds it
                visible.update(sc)
            seen = {v: x for v, x in visible.items() if v != var and v not in start and not v.startswith("%")}
            self.stmt(body)
            if self.lookup(var) != index:
                self.refuse("loop index assigned in its body", n, var)
            for v, s0 in seen.items():
                now = self.lookup(v)
                if now is not s0 and now != s0:  # by identity first: most are the very objects before the body
                    self.refuse("value changed from one iteration to the next", n,
                                f"{v}: the loop body changes it through another name (a reference, a lambda's "
                                "capture, a field), and a loop read once reads every iteration with its value "
                                "before the loop")
            for v in outer:
                # a struct (or other value no step describes) the body changes — a field stored, a method or a
                # reference parameter changing it (sequencers.h:186-199's ``seq_repeat_interleave_next(st)``): the
                # body was read with its value before the loop, which only the first iteration sees. Refused here,
                # so that a loop of a constant count is read iteration by iteration (``_for``)
                s0 = start[v]
                if not _steppable(s0) and s0 is not None and not isinstance(s0, (V.Opaque, V.LocalArray)) and \
                        self.lookup(v) != s0:
                    self.refuse("value changed from one iteration to the next", n,
                                f"{v}: the loop body changes it, and a loop read once reads every iteration with its "
                                "value before the loop")
            for v in sorted(bound):
                if self.lookup(v) != entry[v]:
                    self.refuse("loop bound assigned in its body", n, v)
            self.noc_cmd_after_loop(cmd0, self.noc_used, k, count, n)
        finally:
            self.noc_used |= used_outside
            self.loops.pop()
            loop = self.repeats.pop()
            inner = self.blocks.pop()
            inner.closed = True
        self.patch_loop_closed(inner)
        self.fills_after_loop(k, count if isinstance(count, int) else None, before, loop, n)
        if inner.ops:
            loc = self.loc(n)
            if (var, step) != (k, 1) or not a.is_const or a.const:
                # the C++ index is not the program's 0, 1, ...: how it follows it, for a counterexample's reader
                loc = attrs.evolve(loc, index=LoopIndex(var, step, a.const, a.loops, a.trip))
            self.blocks[-1].add_container(Loop(k, count, tuple(inner.ops)), loc, inner)
        done = isinstance(count, int)
        # a trip is any value in [0, max] (ir.Trip): a loop of ``t`` runs no time at t = 0, one of ``s t + o`` runs
        # at least once only where o >= 1
        may_skip = (count < 1 if isinstance(count, int) else
                    count.offset < 1 if isinstance(count, TripCount) else True)
        for v in outer:
            if v in inductions:
                continue
            # what the body left is an iteration's value in terms of this loop's index: after the loop, the last
            # iteration's (a loop of a constant count), else not followed; where the loop may run no time, the
            # value before it is as possible as the body's
            after = self.lookup(v)
            if is_counter(v) or (_mentions(after, k) and not (isinstance(count, int) and count >= 1)):
                self.assign(v, self.unfollowed(v, after, f"{v} after a loop that changes it"), n)
            elif may_skip and after != start[v]:
                self.assign(v, self.unfollowed(v, after, f"{v} after a loop that may run no time"), n)
            elif _mentions(after, k):
                assert isinstance(count, int)
                self.assign(v, _at(after, k, count - 1), n)
        for v, c in ((var, step), *inductions.items()):
            s0 = a if v == var else start[v]
            if v != var and c == 0:
                # an iteration leaves it as it was (a buffer index passed to each cb call): so does any number of
                # them, a runtime count's included
                self.assign(v, s0, n)
                continue
            self.assign(v, _stepped(s0, V.const(c * count)) if done and _steppable(s0) and isinstance(count, int)
                        else self.unfollowed(v, s0, f"{v} after a loop of a runtime count"), n)

    def drain_state(self) -> dict[int, tuple[Any, ...]]:
        """Each page's ``drained``, ``last``, ``fresh`` and ``consulted``: what a branch's sides are read from and
        merged into (``merge_drains``)."""
        return {cb: (f.drained, f.last, f.fresh, f.consulted, f.drained_last) for cb, f in self.fills.items()}

    def set_drains(self, state: dict[int, tuple[Any, ...]]) -> None:
        """The pages ``state`` names back to it, but what the reads in them relied on (``consulted``), which a
        store on any path after them must still see."""
        for cb, f in self.fills.items():
            if cb in state:
                f.drained, f.last, f.fresh, _, f.drained_last = state[cb]

    def merge_drains(self, paths: list[dict[int, tuple[Any, ...]]], last: int | None = None) -> None:
        """The pages after a branch whose paths left ``paths`` (``drain_state``): drained only if every path
        drained it, its last store the word every path left at the same loops, else not known; relied on as any
        path relied on it. ``last``: the path of a loop's last iteration (``if (i == last)``), the only one whose
        drain in that iteration (``drained_last``) counts."""
        for cb, f in self.fills.items():
            got = [p[cb] for p in paths if cb in p]
            if not got:
                continue
            f.drained = all(g[0] for g in got)
            f.last = got[0][1] if all(g[1:3] == got[0][1:3] for g in got) else None
            f.fresh = min(g[2] for g in got)  # the outermost: a read in a loop relies on it (consult)
            seen = {id(lp): lp for g in [*got, (None, None, 0, f.consulted)] for lp in g[3]}
            f.consulted = tuple(seen.values())
            f.drained_last = got[0][4] if all(g[4] == got[0][4] for g in got) else ()
            if last is not None and cb in paths[last]:
                f.drained_last = paths[last][cb][4]

    def fills_after_loop(self, k: str | None, count: int | None, before: dict[int, tuple[bool, int]],
                         loop: object, node: Any) -> None:
        """The last store and drain of each page whose stores or drain the body of the loop ``loop`` with index
        ``k`` set (read once, as its iterations; ``count`` None: not a constant; ``before``: each page's ``drained``
        and ``stores`` before it): after a loop of a constant count of at least 1, the last iteration's (the index
        at ``count - 1``); after one that may run no iteration, drained only if drained both before it and after
        its body, and its last store's word not known (``drain_load``). A body that read the page as it stood
        before the loop (``consult``) and stores into it is refused by name: its next iteration's read follows
        this iteration's store."""
        for cb, f in self.fills.items():
            if any(lp is loop for lp in f.consulted) and f.stores != before.get(cb, (False, 0))[1] and not self.trial:
                self.refuse("plain store after a read of the page earlier in its loop", node,
                            f"c_{cb}: a blocking load or NoC read in the loop relies on the stores before it, and the "
                            "loop stores into the page")
            if f.fresh <= len(self.repeats):
                continue  # set before the loop: the body did not change it
            if k is not None and count is not None and count >= 1:
                f.last = _at(f.last, k, count - 1) if f.last is not None else None
                if k in f.drained_last:
                    f.drained_last = tuple(v for v in f.drained_last if v != k)
                    f.drained = f.drained or not f.drained_last
            else:
                f.last = None
                f.drained = f.drained and before.get(cb, (True, 0))[0]
                f.drained_last = ()
            f.fresh = len(self.repeats)

    def unfollowed(self, name: str, v: Any, why: str) -> Any:
        """What variable ``name`` holds where the reading cannot follow its value (it changes from one iteration to
        the next, or a branch on a loop index sets it): a pointer counter a fresh symbol; an L1 address the same
        buffer's pointer, but one whose place is not known (refused where a transfer uses it); anything else
        ``Opaque``."""
        if is_counter(name):
            kind, cb = name[1:].split(":")
            return self.fresh(kind, int(cb))
        if isinstance(v, V.L1Ptr):
            return attrs.evolve(v, origin=V.Opaque(why))
        return V.Opaque(why)

    def loop_var(self, name: str) -> str:
        used = {lp.var for lp in self.loops}
        k, i = name, 1
        while k in used:
            k, i = f"{name}_{i}", i + 1
        return k

    def step_of(self, upd: Any, var: str) -> int | None:
        t = upd.type
        if t == "update_expression":
            arg = upd.child_by_field_name("argument")
            if arg is None or arg.text.decode() != var:
                return None
            return 1 if b"++" in upd.text else -1
        if t == "assignment_expression" and upd.child_by_field_name("left").text.decode() == var:
            op = upd.child_by_field_name("operator").type
            r = self.expr(upd.child_by_field_name("right"))
            if op in ("+=", "-=") and isinstance(r, V.Sym) and r.is_const and r.const:
                return r.const if op == "+=" else -r.const
        return None

    def assigned_in(self, node: Any, calls: bool = True) -> frozenset[str]:
        """The names ``node``'s text assigns (``x = ...``, ``x++``) and, with ``calls``, passes to a call (a
        reference parameter may change them); a function of the syntax tree alone (``_assigned_in``)."""
        return _assigned_in(node, calls)

    def inductions(self, n: Any, body: Any, var: str, k: str, a: V.Sym, step: int, count: int | str | TripCount,
                   last: V.Sym, start: dict[str, V.Value]) -> dict[str, int]:
        """The variables declared outside the loop that one iteration steps by a constant (``tile_id++``, also in
        an inner loop of constant count or through a reference parameter): inside the body they are affine in the
        loop index; a step of 0 leaves them invariant. Found by reading the body with each such variable marked
        (``x0 + @x``) and its ops discarded: what the iteration adds to the mark is the step (a reset ``x = 5``
        drops the mark, so it is no step). The variables assigned in the body are marked first; a variable only
        passed to a call is marked in a second reading if the first shows it changed. A variable the readings
        cannot follow has no step (it is not known inside the loop)."""
        direct = set(self.assigned_in(body, calls=False))
        syms = {v for v, s0 in start.items() if _steppable(s0)}
        # the pages pushed and popped only grow: marked from the start (one reading fewer); the fill and drain are
        # lowered by pushes and pops, never below 0, which a mark would hide: they are marked only if they change
        marked = (syms & direct) | {v for v in syms if v.startswith(("%pushed:", "%popped:"))}
        out: dict[str, int] = {}
        for _ in range(2):
            after, err = self._marked_reading(n, body, var, k, a, step, count, last, start, marked)
            if err is not None:
                # the marks stopped the reading: read the body as it is; a variable it leaves unchanged is
                # invariant, one it changes has no step; a refusal of this reading is the kernel's own
                plain, err = self._marked_reading(n, body, var, k, a, step, count, last, start, set())
                if err is not None:
                    raise err
                return {v: 0 for v in syms if plain.get(v) == start[v]}
            out = {}
            changed = set()
            for v in syms:
                x, s0 = after.get(v), start[v]
                if v not in marked:
                    if x != s0:
                        changed.add(v)
                    else:
                        out[v] = 0
                    continue
                d = _step(s0, x, V.Sym(0, ((f"@{v}.{len(self.loops)}", 1),)))
                if d is not None:
                    out[v] = d  # 0: the iteration gives it back its value (i1 -= Wt after Wt steps)
            if not changed:
                break
            marked |= changed
        return out

    def _marked_reading(self, n: Any, body: Any, var: str, k: str, a: V.Sym, step: int,
                        count: int | str | TripCount, last: V.Sym, start: dict[str, V.Value],
                        marked: set[str]) -> tuple[dict[str, V.Value], Refused | None]:
        """The values of ``start``'s variables after one reading of ``body`` with ``marked`` ones marked; nothing
        of the reading is kept (ops, groups, trips, accumulator state, variables); with the refusal that stopped it,
        if one did."""
        saved = ([dict(sc) for sc in self.scopes], dict(self.shared.groups), dict(self.shared.trips),
                 attrs.evolve(self.acc) if self.acc is not None else None, self.acc)
        fills, noc_filled = {b: attrs.evolve(f) for b, f in self.fills.items()}, set(self.noc_filled)
        noc_cmd, linked = dict(self.noc_cmd), self.linked
        local_reads = self.local_reads()
        for v in marked:
            self.assign(v, _stepped(start[v], V.Sym(0, ((f"@{v}.{len(self.loops)}", 1),))), n)
        self.blocks.append(Block())
        self.loops.append(_Loop(k, count, last, self.blocks[-1]))
        after: dict[str, V.Value] = {}
        err: Refused | None = None
        self.trial += 1
        try:
            self.assign(var, a + V.Sym(0, ((k, step),)), n)  # with its loop open, as ``_counted`` assigns it
            self.stmt(body)
            after = {v: self.lookup(v) for v in start}
        except Refused as e:
            err = e
        except _Return:
            err = Refused("return inside a loop or a branch on a loop index", self.loc(n))
        finally:
            self.trial -= 1
            self.loops.pop()
            self.blocks.pop()
            self.fills, self.noc_filled, self.noc_cmd, self.linked = fills, noc_filled, noc_cmd, linked
            self.page_reads, self.copy_sources, self.front_waited = local_reads
            scopes, self.shared.groups, self.shared.trips, acc_copy, acc = saved
            for live, old in zip(self.scopes, scopes, strict=True):
                live.clear()
                live.update(old)
            if acc is not None and acc_copy is not None:
                acc.tiles, acc.state = acc_copy.tiles, acc_copy.state
            self.acc = acc
        return after, err

    def if_stmt(self, n: Any) -> None:
        cond = n.child_by_field_name("condition")
        c = cond.named_children[-1] if cond.type == "condition_clause" else cond
        then, other = n.child_by_field_name("consequence"), n.child_by_field_name("alternative")
        if other is not None and other.type == "else_clause":
            other = other.named_children[0] if other.named_child_count else None
        saved = self.snapshot()
        try:
            g = self.cond(c)
        except Refused as e:
            writes: set[str] = set()
            if e.construct != "branch on a value not known statically" or not self.quiet(c, set(), writes):
                raise
            self.restore(saved)
            self.data_branch(n, then, other, saved, writes, e)
            return
        if isinstance(g, bool):
            skipped = other if g else then
            if skipped is not None and self.depth == 0 and not _in_template(self.prog.main) \
                    and n.child_by_field_name("initializer") is None:
                self.skipped_asserts(skipped)
            self.stmt(then if g else other)
            return
        var, guard = g
        # each side starts from the variables as they are before the branch; after it, a variable the two sides
        # (or a side and the path around it) leave different is not followed (``merge_sides``)
        before = [dict(sc) for sc in self.scopes]
        outcomes: list[list[dict[str, V.Value]]] = []
        pre = self.drain_state()  # the pages' drains likewise (merge_drains)
        drains: list[dict[int, tuple[Any, ...]]] = []
        cmd0, cmds = dict(self.noc_cmd), []  # the command buffers' states likewise (merge_noc_cmd)
        for body_node, gd in ((then, guard), (other, _COMPLEMENT[guard])):
            self.set_drains(pre)
            self.noc_cmd = dict(cmd0)
            if body_node is None:
                outcomes.append(before)
                drains.append(pre)
                cmds.append(cmd0)
                continue
            for live, old in zip(self.scopes, before, strict=True):
                live.clear()
                live.update(old)
            self.blocks.append(Block(certain=False))
            self.guarded += 1
            try:
                self.stmt(body_node)
            finally:
                self.guarded -= 1
                inner = self.blocks.pop()
                inner.closed = True
            outcomes.append([dict(sc) for sc in self.scopes])
            drains.append(self.drain_state())
            cmds.append(dict(self.noc_cmd))
            if inner.ops:
                self.blocks[-1].add_container(If(var, gd, tuple(inner.ops)), self.loc(n), inner)
        self.merge_noc_cmd(cmds, f"set in a branch on a loop index ({self.text(n).splitlines()[0][:60]})")
        self.merge_drains(drains, 0 if guard == Guard.LAST else 1 if _COMPLEMENT[guard] == Guard.LAST else None)
        self.merge_sides(outcomes, f"set in a branch on a loop index ({self.text(n).splitlines()[0][:60]})")

    def merge_sides(self, outcomes: list[list[dict[str, V.Value]]], why: str) -> None:
        """The variables after a branch whose sides left ``outcomes`` (each the scopes' variables): one the sides
        agree on keeps its value, any other is not followed (``unfollowed``)."""
        first, second = outcomes
        for i, live in enumerate(self.scopes):
            a, b = first[i], second[i]
            live.clear()
            for name in a.keys() | b.keys():
                x, y = a.get(name), b.get(name)
                live[name] = x if x == y else self.unfollowed(name, x if x is not None else y, why)

    def noc_reprogrammed(self, key: str, node: Any) -> None:
        """An ordinary NoC transfer of kind ``key`` (read, or write / atomic / one-word write) programs its command
        buffer's registers: the state a ``set_state`` left there is gone (``nocstate``)."""
        if self.linked is not None and not self.closing:
            self.linked_refused(f"a NoC {key} follows it", node)
        loc = self.loc(node)
        self.noc_cmd[key] = V.Opaque(f"the NoC {key} command buffer was reprogrammed by the transfer at "
                                     f"{loc.file}:{loc.line}")

    def merge_noc_cmd(self, paths: list[dict[str, Any]], why: str) -> None:
        """The command buffers' states after a branch whose paths left ``paths`` (``nocstate``): one every path
        leaves the same keeps it, any other is not known."""
        merged: dict[str, Any] = {}
        for key in {k for p in paths for k in p}:
            got = [p.get(key) for p in paths]
            merged[key] = got[0] if all(g == got[0] for g in got) else V.Opaque(f"the NoC {key} state {why}")
        self.noc_cmd = merged

    def noc_cmd_after_loop(self, cmd0: dict[str, Any], used: set[int], k: str, count: int | str | TripCount,
                           n: Any) -> None:
        """The command buffers' states after a loop read once for all its iterations (``_counted``), whose body
        was entered with ``cmd0`` and whose with_state calls used the states ``used`` (``nocstate``). A body that
        changes a state it used (a ``with_state`` before a ``set_state`` or an ordinary transfer in the same body) is
        refused: its second iteration uses another state than the reading gave the first. A changed state holds
        after the loop if the loop surely ran and the state does not name the loop's index; otherwise it is not
        known."""
        for key in sorted(set(cmd0) | set(self.noc_cmd)):
            before, after = cmd0.get(key), self.noc_cmd.get(key)
            if after == before:
                continue
            if isinstance(before, nocstate.CmdState) and before.serial in used:
                self.refuse(f"NoC {key} state changed in a loop that uses it", n,
                            "an iteration uses the state it was entered with, then changes it: the next iteration "
                            "uses the changed one")
            sure = isinstance(count, int) and count >= 1
            if not sure or (isinstance(after, nocstate.CmdState) and _mentions_loop(after, k)):
                self.noc_cmd[key] = V.Opaque(f"the NoC {key} state after a loop that changes it")

    def quiet(self, node: Any, seen: set[int], writes: set[str]) -> bool:
        """True when evaluating ``node`` can issue no op and store nowhere but into variables, whatever of it runs:
        every call in it is a value query (``PURE_QUERIES``), a cast, or a function or lambda of the kernel whose
        body is quiet in turn, and every assignment is to a plain variable. ``writes`` collects the variables it
        may change: those assigned, in it or in a body it calls, and those passed to a call (a reference
        parameter)."""
        stack = [node]
        while stack:
            x = stack.pop()
            if x.type == "identifier" and self.has_operators(self.lookup(x.text.decode())):
                return False  # an object whose class's operator or conversion C++ may call here (``issues``)
            if x.type in ("assignment_expression", "update_expression"):
                lhs = x.child_by_field_name("left") or x.child_by_field_name("argument")
                if lhs is None or lhs.type != "identifier":
                    return False  # a store through a pointer or into an array: a semaphore word, a buffer page
                writes.add(lhs.text.decode())
            elif x.type == "call_expression":
                fn = x.child_by_field_name("function")
                if fn is None or fn.type == "field_expression":
                    return False  # a method of a device object
                name = "".join(fn.text.decode().split()).split("<", 1)[0]
                bare = name.rsplit("::", 1)[-1]
                argnode = x.child_by_field_name("arguments")
                args = [a for a in argnode.named_children if a.type != "comment"] if argnode is not None else []
                writes.update(a.text.decode() for a in args if a.type == "identifier")
                if bare in PURE_QUERIES or bare in ("static_cast", "reinterpret_cast", "const_cast"):
                    pass
                else:
                    local = self.lookup(bare) if fn.type == "identifier" else None
                    if isinstance(local, V.Function):
                        body = local.body
                    else:
                        arity = f"/{len(args)}"
                        key = next((k for k in (name + arity, bare + arity, name, bare) if k in self.prog.functions),
                                   None)
                        if key is None:
                            return False
                        f = self.function(key)
                        body = f.body if isinstance(f, V.Function) else None
                    if body is None:
                        return False
                    if id(body) not in seen:
                        seen.add(id(body))
                        if not self.quiet(body, seen, writes):
                            return False
            stack.extend(x.named_children)
        return True

    def data_branch(self, n: Any, then: Any, other: Any, saved: tuple[Any, ...], writes: set[str],
                    refusal: Refused) -> None:
        """An ``if`` on a value not followed (data read from L1, a comparison of such values) whose condition is
        quiet (``quiet``) and whose sides issue no op: argmax's running maximum. Each side is read with its ops
        discarded; if either issues an op, changes the accumulator, or leaves the straight line (``return``,
        ``break``, ``continue``, a refusal of its own), the branch is refused as ``refusal``. Otherwise the kernel
        runs one side or the other, invisibly to the choreography, and every variable the condition may change
        (``writes``) or either side sets is no longer followed after the branch: a later op that needs one is
        refused by name."""
        after: list[dict[str, V.Value]] = []
        sides: list[dict[int, _Fill]] = []
        changed_cmd = False
        filling = set(self.fills)  # the pages stores were building before the branch
        # each side is read from the pages' drains as they are before the branch; after it, what every path
        # leaves (the path around a missing else included: merge_drains)
        pre = self.drain_state()
        drains: list[dict[int, tuple[Any, ...]]] = [] if other is not None else [pre]
        acc0 = (self.acc.tiles, self.acc.state) if self.acc is not None else None
        # scratch loads on either side (the running maximum's ``in_vals[i]``, argmax) are checks, not effects: they
        # are made once after the branch, as if on every path (stricter than the path the data takes)
        loaded: set[int] = set()
        for side in (then, other):
            if side is None:
                continue
            # each side starts from the pages stores were building before the branch, not from the other side's
            self.fills = {cb: f for cb, f in self.fills.items() if cb in filling}
            self.set_drains(pre)
            self.blocks.append(Block(certain=False))
            self.guarded += 1
            try:
                self.stmt(side)
                loads = [o for o in self.blocks[-1].ops if isinstance(o, ScratchAccess) and not o.store]
                loaded |= {o.buf for o in loads}
                clean = len(loads) == len(self.blocks[-1].ops) and acc0 == ((self.acc.tiles, self.acc.state)
                                                                            if self.acc is not None else None)
            except (Refused, _Break, _Continue, _Return):
                clean = False
            finally:
                self.guarded -= 1
                self.blocks.pop()
            if clean and self.noc_cmd != saved[-1]:
                # a ``set_state`` or a transfer on one side only: which state the buffer holds after is data's
                changed_cmd = True
            if clean:
                after.append({name: v for sc in self.scopes for name, v in sc.items()})
                # stores into a buffer page on this side stay recorded, as made on some paths only (their lineage
                # holds the uncertain side block): a push that needs them is refused unless a certain store, such
                # as the zero fill before ``if (scaler != 0)``, came first
                sides.append({cb: attrs.evolve(f) for cb, f in self.fills.items()})
                drains.append(self.drain_state())
            self.restore(saved)
            if not clean:
                raise refusal
        for cb in {cb for side_fills in sides for cb in side_fills}:
            # a zero fill is in flight after the branch if it is on any path (the path around both sides included)
            pending = any(side_fills[cb].zeros_pending for side_fills in sides if cb in side_fills)
            old_f = self.fills.get(cb)
            if old_f is not None:
                old_f.zeros_pending = old_f.zeros_pending or pending
            else:
                self.fills[cb] = attrs.evolve(next(sf[cb] for sf in sides if cb in sf), zeros_pending=pending)
            if other is not None and cb not in filling and self.stored_on_both_sides([sf.get(cb) for sf in sides]):
                # both sides store into the same page (of constants, or copies of one buffer) on every path through
                # them: it is stored on every path through the branch, as if the first store stood before it
                # (moreh_nll_loss_step1's ``if (t != ignore) { ... = one; } else { ... = zero; }``); which words each
                # side reaches is not followed, as for stores on a straight line
                self.fills[cb].lineage = tuple(self.blocks)
        self.merge_drains(drains)
        before = {name: v for sc in self.scopes for name, v in sc.items()}
        changed = sorted({name for a in after for name, v in before.items() if (x := a.get(name)) is not v and x != v} |
                         (writes & set(before)))
        why = f"set in a branch on a value not followed ({self.text(n).splitlines()[0]})"
        for name in changed:
            self.assign(name, V.Opaque(why), n)
        if changed_cmd:
            self.noc_cmd = {key: V.Opaque(f"the NoC {key} state {why}") for key in (nocstate.READ, nocstate.WRITE)}
        for cb in sorted(loaded):
            self.emit(ScratchAccess(cb), n)

    def stored_on_both_sides(self, fills: list[_Fill | None]) -> bool:
        """Whether the two sides of a branch, read from here (``self.blocks``), each left stores into one page made
        on every path through that side: the same page (the pushes and fills of the buffer as they were at the first
        store), constants on both or copies of one buffer on both, the first store of each certain below the side's
        own block."""
        depth = len(self.blocks)
        if len(fills) != 2 or any(f is None for f in fills):
            return False
        a, b = fills
        assert a is not None
        assert b is not None
        return (a.at, a.copy) == (b.at, b.copy) and all(
            len(f.lineage) > depth and all(x is y for x, y in zip(f.lineage, self.blocks, strict=False))
            and all(blk.certain for blk in f.lineage[depth + 1:]) for f in (a, b))

    def without_ops(self, *bodies: Any) -> bool:
        """Whether ``bodies`` — the branches of a branch on a value the reading does not follow (``if (scaler !=
        0)`` around the stores of a constant tile), or the body of a loop whose count it does not follow, read once
        — leave the choreography as it is on every path: no op, no variable the code after them reads, no
        accumulator, group or trip change. Then they are read as doing nothing but their stores into buffer pages,
        which stay recorded as on some paths only (``local_fill``). Otherwise nothing of the reading is kept and
        False."""
        saved = self.snapshot()
        before = {cb: (f.drained, f.stores) for cb, f in self.fills.items()}
        try:
            for body in bodies:
                if body is None:
                    continue
                self.blocks.append(Block(certain=False))
                self.guarded += 1
                self.repeats.append(body)  # the body stands for its iterations (a page's drain, local_fill)
                try:
                    self.stmt(body)
                finally:
                    self.guarded -= 1
                    self.repeats.pop()
                    inner = self.blocks.pop()
                if inner.ops:
                    raise _Abandon()
                self.fills_after_loop(None, None, before, body, body)
            scopes, groups, trips, acc_copy, _acc = saved[:5]
            same = (all(live == old for live, old in zip(self.scopes, scopes, strict=True))
                    and self.shared.groups == groups and self.shared.trips == trips and self.noc_cmd == saved[-1]
                    and (self.acc is None or acc_copy is None
                         or (self.acc.tiles, self.acc.state) == (acc_copy.tiles, acc_copy.state)))
            if not same:
                raise _Abandon()
        except (Refused, _Abandon, _Break, _Continue, _Return):
            self.restore(saved)
            return False
        return True

    def unroll(self, n: Any, cond: Any, upd: Any, body: Any, construct: str, body_first: bool = False) -> None:
        """A loop not of the counted form (``while (tiles_read < n)``, ``for (; a < n && b < m; ...)``, ``do``):
        read as the kernel runs it when every value its condition needs is a number here, iteration after iteration
        (each iteration's ops in turn, at most ``UNROLL_LIMIT``), with ``break`` and ``continue`` directly in its
        body. A condition that depends on a loop index, a runtime range or a value not followed is refused as
        ``construct``; so is a loop that runs past the limit."""
        self.unrolled.append(len(self.loops) + self.guarded)
        try:
            for i in range(UNROLL_LIMIT + 1):
                if not (body_first and i == 0) and cond is not None:
                    try:
                        g = self.cond(cond)
                    except Refused as e:
                        self.refuse(construct, n, f"{self.text(cond)}: {e.detail or e.construct}")
                    if not isinstance(g, bool):
                        self.refuse(construct, n, f"{self.text(cond)} varies with a loop index")
                    if not g:
                        return
                self.one_more_iteration(construct, n, i)
                try:
                    self.stmt(body)
                except _Break:
                    return
                except _Continue:
                    pass
                if upd is not None:
                    self.expr(upd)
        finally:
            self.unrolled.pop()

    def one_more_iteration(self, construct: str, n: Any, i: int) -> None:
        """Iteration ``i`` of a loop read iteration by iteration: refused by ``construct``'s name past
        ``UNROLL_LIMIT`` iterations of the loop or ``UNROLL_BUDGET`` of all such loops of the kernel."""
        if i == UNROLL_LIMIT:
            self.refuse(construct, n, f"more than {UNROLL_LIMIT} iterations")
        self.unroll_budget -= 1
        if self.unroll_budget < 0:
            self.refuse(construct, n, f"more than {UNROLL_BUDGET} iterations read one by one in the kernel")

    def range_for(self, n: Any) -> None:
        """``for (T x : range) body``, read as the kernel runs it (``unroll``): one iteration per element of a
        ``const`` table, a local array (its elements as stored) or a braced list; over a struct value, the
        iterators C++ desugars it into (``auto it = range.begin(), end = range.end(); it != end; ++it``, ``x =
        *it``: normalization/kernel_util/generic/blocked_range.h's ``BlockedRange``), the comparison a number at
        every iteration. ``break`` and ``continue`` directly in the body end the loop or the iteration. Refused
        as ``range-for loop``: a range of anything else, an iterator comparison not a number (a count from a
        runtime range or data), a loop variable bound by a non-const reference that the body assigns (a write
        into the range), more iterations than ``unroll`` reads."""
        decl, rng, body = (n.child_by_field_name(f) for f in ("declarator", "right", "body"))
        name = self.decl_name(decl)
        if decl.type == "reference_declarator" and not _is_const(n) and name in self.assigned_in(body):
            self.refuse("range-for loop", n, f"{name} bound by reference and assigned: a write into the range")
        items: list[Any] | None = None
        held = self.lookup(rng.text.decode()) if rng.type == "identifier" else None
        if isinstance(held, V.LocalArray):
            self.range_iterations(n, body, name, self.local_elements(rng.text.decode(), len(held.items), n))
            return
        if rng.type == "initializer_list":
            items = [self.expr(x) for x in rng.named_children if x.type != "comment"]
        obj = self.expr(rng) if items is None and held is None else held
        if isinstance(obj, V.Table):  # also a tensor's pages (``accessor.pages(start, end)``, api._pages)
            items = [obj.at(i) for i in range(obj.size)]
        if items is not None:
            self.range_iterations(n, body, name, iter(items))
            return
        if not isinstance(obj, V.Obj):
            why = obj.why if isinstance(obj, V.Opaque) else V.kind(obj)
            self.refuse("range-for loop", n, f"over {self.text(rng)}: {why}")
        self.range_iterations(n, body, name, self.iterate(obj, n))

    def local_elements(self, array: str, size: int, n: Any) -> Any:
        """The elements of local array ``array`` for a range-for, each read when its iteration starts (as C++'s
        iterator reads it: a store by the body into a later element is seen); an array no longer followed (its
        address taken in the body) is refused, an element never stored not followed."""
        for i in range(size):
            arr = self.lookup(array)
            if not isinstance(arr, V.LocalArray):
                self.refuse("range-for loop", n, f"over {array}, no longer followed: {getattr(arr, 'why', arr)}")
            x = arr.items[i]
            yield V.Opaque(f"the local array {array}'s element {i}, never stored") if x is None else x

    def iterate(self, obj: V.Obj, n: Any) -> Any:
        """The elements of range-for over ``obj``: its ``begin()`` / ``end()`` iterators stepped by ``operator++``
        while ``operator!=`` holds, each element ``operator*`` (the methods a followed header defines)."""
        it, end = self.method_value(obj, "begin", [], n)[0], self.method_value(obj, "end", [], n)[0]
        while True:
            if not isinstance(it, V.Obj):
                self.refuse("range-for loop", n, f"an iterator not followed: {it!r}"[:200])
            more = self.method_value(it, "operator!=", [end], n)[0]
            if not (isinstance(more, V.Sym) and more.is_const):
                why = more.why if isinstance(more, V.Opaque) else "not a number"
                self.refuse("range-for loop", n, f"the end of {self.text(n.child_by_field_name('right'))} not known "
                            f"statically: {why}")
            if not more.const:
                return
            yield self.method_value(it, "operator*", [], n)[0]
            _, after = self.method_value(it, "operator++", [], n)
            it = after if isinstance(after, V.Obj) else it

    def method_value(self, obj: V.Obj, name: str, vals: list[Any], n: Any) -> tuple[Any, Any]:
        """``obj.name(vals)`` of a struct value's method, with the object as the method left it."""
        sd = objects.struct_of(self, obj.struct)
        if sd is None or name not in sd.methods:
            self.refuse("range-for loop", n, f"{obj.struct} has no method {name} in a followed header")
        hit = objects.choose(self, [(m, sd.unit) for m in sd.methods[name]], vals, self.declared_params)
        if hit is None:
            self.refuse("range-for loop", n, f"{obj.struct}::{name}: none or several overloads fit")
        f = self.function_of(hit[0], sd.unit, f"{sd.name}::{name}", this=obj)
        self.this_after = None
        result = self.inline(f, [], [], n, vals=vals)
        return result, self.this_after

    def range_iterations(self, n: Any, body: Any, name: str, items: Any) -> None:
        """Each of ``items`` bound to the loop variable ``name`` in turn, ``body`` read once for each (``unroll``'s
        limits)."""
        self.unrolled.append(len(self.loops) + self.guarded)
        try:
            for i, x in enumerate(items):
                self.one_more_iteration("range-for loop", n, i)
                typ = n.child_by_field_name("type")
                tname = self.type_name(typ) if typ is not None else ""
                decl = n.child_by_field_name("declarator")
                cls = x.struct if isinstance(x, V.Obj) else tname
                sd = objects.struct_of(self, cls) if decl.type != "reference_declarator" and cls and \
                    cls not in _CLASSES else None
                if sd is not None:
                    objects.created(self, sd, n)  # ``for (X e : arr)``: each element copied into ``e``
                self.scopes.append({name: self.to_integer(x, tname) if _converts(tname) else x})
                try:
                    self.stmt(body)
                except _Break:
                    return
                except _Continue:
                    pass
                finally:
                    self.scopes.pop()
        finally:
            self.unrolled.pop()

    def switch_stmt(self, n: Any) -> None:
        """``switch`` on a value known statically (a folded arg, an enumerator): the statements from the matching
        ``case`` (else ``default``) on, falling through, up to the first ``break`` the reading runs: directly in a
        case, in a block nested in one, or in a branch whose condition is decided statically (C++ [stmt.break]: the
        innermost enclosing switch ends there). A switch on a value not known, a case label not known before the
        match, or a ``break`` inside a loop read once or a branch on a loop index (it ends the switch in some
        iterations only) is refused."""
        cond = n.child_by_field_name("condition")
        init = cond.child_by_field_name("initializer") if cond.type == "condition_clause" else None
        if init is not None:
            # ``switch (uint32_t m = k + 1; m)``: the init-statement's names are the switch's own ([stmt.switch]/3)
            self.scopes.append({})
            try:
                for x in init.named_children:
                    if x.type == "declaration":
                        self.declaration(x)
                    elif x.type != "comment":
                        self.expr(x)
                self._switch(n, cond.child_by_field_name("value") or cond.named_children[-1])
            finally:
                self.scopes.pop()
            return
        self._switch(n, cond.named_children[-1] if cond.type == "condition_clause" else cond)

    def _switch(self, n: Any, c: Any) -> None:
        v = self.expr(c)
        if not (isinstance(v, V.Sym) and v.is_const) and not isinstance(v, V.EnumConst):
            why = v.why if isinstance(v, V.Opaque) else (
                "a value of a loop index" if isinstance(v, V.Sym) else "not a number or an enumerator")
            self.refuse("switch on a value not known statically", n, f"{self.text(c)}: {why}")
        body = n.child_by_field_name("body")
        cases = [x for x in body.named_children if x.type == "case_statement"]
        stack = [x for cs in cases for x in cs.named_children] + [
            x for x in body.named_children if x.type != "case_statement"]
        while stack:  # a label inside a nested statement (a block, a loop) jumps into it: not read as it runs
            x = stack.pop()
            if x.type == "case_statement":
                self.refuse("switch case label inside a nested statement", x, self.text(x))
            if x.type != "switch_statement":
                stack.extend(x.named_children)
        start = default = None
        for i, cs in enumerate(cases):
            label = cs.child_by_field_name("value")
            if label is None:
                default = i
                continue
            lv = self.expr(label)
            if isinstance(v, V.EnumConst) != isinstance(lv, V.EnumConst):
                v, lv = enums.number(self, v), enums.number(self, lv)
            if isinstance(v, V.EnumConst) and isinstance(lv, V.EnumConst):
                hit = lv == v
            elif isinstance(v, V.Sym) and isinstance(lv, V.Sym) and lv.is_const:
                hit = (lv.const - v.const) % (1 << 32) == 0  # as 32-bit words: case -1 of a uint32_t
            else:
                self.refuse("switch case label not known statically", label, self.text(label))
            if hit:
                start = i
                break
        start = default if start is None else start
        if start is None:
            return
        self.scopes.append({})
        # a break read in the cases (directly, in a nested block, in a branch decided statically) ends the switch;
        # one inside a symbolic loop or a guarded branch opened in it stays refused, and so does a continue (the
        # enclosing loop's, which the reading does not carry out of the switch)
        self.unrolled.append(len(self.loops) + self.guarded)
        self.switches.append(len(self.unrolled))
        try:
            for cs in cases[start:]:
                label = cs.child_by_field_name("value")
                for st in cs.named_children:
                    if label is not None and st.id == label.id:
                        continue
                    self.stmt(st)
        except _SwitchBreak:
            pass
        finally:
            self.switches.pop()
            self.unrolled.pop()
            self.scopes.pop()

    def comma_operator(self, left: Any, right: Any, n: Any) -> None:
        """Refuse ``a, b`` where C++ calls an overloaded comma operator: an operand an object of a class (or a base)
        declaring ``operator,``, or any object where the kernel or a header defines a free ``operator,``. Read as
        the built-in comma, the operator's ops were dropped (a new user's ``(x, 1u)`` popping a page was proved)."""
        for v in (left, right):
            if not isinstance(v, V.Obj):
                continue
            sd = objects.struct_of(self, v.struct)
            op = objects.declared_operator(self, sd, lambda o: o == "operator,") if sd is not None else None
            if op is not None or any(k.split("/", 1)[0] == "operator," for k in self.prog.functions):
                self.refuse("operator on an object", n, f"{self.text(n)}: the comma applied to an object of class "
                            f"{v.struct} calls its operator, (declared by {sd.name if sd is not None else 'a header'})"
                            ", which the reading does not follow")

    def no_object(self, v: Any, what: str, n: Any) -> None:
        """Refuse an operator or a conversion applied to an object of a class the kernel or a header defines
        (``++x``, ``x + 1``, ``x[0]``, ``if (x)``, ``uint32_t v = x``): C++ calls the class's operator or conversion
        function there with no call written (or the code does not compile); read as a value not followed, the call's
        ops were dropped."""
        if isinstance(v, V.Obj):
            self.refuse("operator on an object", n,
                        f"{self.text(n)}: {what} of a {v.struct} calls a user-declared operator or conversion, which "
                        "the reading does not follow")

    def cond(self, c: Any) -> bool | tuple[str, Guard]:
        """A branch condition: decided (a bool) or a guard on an enclosing loop's index."""
        if c.type == "parenthesized_expression":
            return self.cond(c.named_children[0])
        if c.type == "unary_expression" and c.child_by_field_name("operator").type in ("!", "not"):
            g = self.cond(c.child_by_field_name("argument"))
            return (not g) if isinstance(g, bool) else (g[0], _COMPLEMENT[g[1]])
        if c.type == "binary_expression":
            op = c.child_by_field_name("operator").type
            if op in ("&&", "and"):
                apart = self.ranges_overlap(c)
                if apart is not None:
                    return apart
            if op in ("&&", "||", "and", "or"):
                a = self.cond(c.child_by_field_name("left"))
                if isinstance(a, bool) and a == (op in ("||", "or")):
                    return a
                b = self.cond(c.child_by_field_name("right"))
                if isinstance(a, bool):
                    return b
                if isinstance(b, bool):
                    return a if b == (op in ("&&", "and")) else b
                self.refuse("branch on two loop conditions", c, self.text(c))
            if op in ("==", "!=", "<", "<=", ">", ">="):
                lv, rv = self.expr(c.child_by_field_name("left")), self.expr(c.child_by_field_name("right"))
                self.no_object(lv, op, c)
                self.no_object(rv, op, c)
                if isinstance(lv, V.EnumConst) != isinstance(rv, V.EnumConst):
                    # an enumerator against a number (a compile-time arg cast to the enum): by its value
                    lv, rv = enums.number(self, lv), enums.number(self, rv)
                if isinstance(lv, V.EnumConst) and isinstance(rv, V.EnumConst) and op in ("==", "!="):
                    return (lv == rv) == (op == "==")
                if op in ("==", "!=") and _tensor_addr_vs_zero(lv, rv):
                    # a host tensor's base address is an allocated buffer's, never 0: 0 is what the host passes
                    # for an idle core ("idle core", reader_decode_all.cpp:110-113, writer_decode_all.cpp:105-108)
                    return op == "!="
                signed = self.signed_operand(c.child_by_field_name("left")) and self.signed_operand(
                    c.child_by_field_name("right"))
                # an operand converted to an unsigned word (``static_cast<uint32_t>(b)``, b a 64-bit 2**64 - 1) is
                # unsigned as a uint32_t variable is: its number, -1 here, stands for the word 0xFFFFFFFF
                unsigned = any(self.declared_as(x, _UNSIGNED_WORDS) or _unsigned_word(_word_cast_type(x) or "int")
                               for x in (c.child_by_field_name("left"), c.child_by_field_name("right")))
                if isinstance(lv, V.Sym) and isinstance(rv, V.Sym) and lv.is_const and rv.is_const:
                    if not (_u32(lv.const) and _u32(rv.const)) and self.wide(c):
                        # a 64-bit value below 0 or past the word: C++ compares it in 64 bits (``a - 1`` of a
                        # uint64_t 0 is 2**64 - 1, not the word 0xFFFFFFFF), which the reading does not follow
                        self.refuse("comparison of a 64-bit value past 32 bits", c,
                                    f"{self.text(c)}: {lv.const} and {rv.const} (64-bit arithmetic not followed)")
                    if unsigned:  # a uint32_t variable against an int: C++ compares the two as unsigned words
                        return _holds(op, lv.const % (1 << 32) - rv.const % (1 << 32))
                    return self.compare(op, lv.const, rv.const, c, signed)
                if isinstance(lv, V.Sym) and isinstance(rv, V.Sym) and op not in ("==", "!=") and not signed:
                    # an order of values affine in loop indices: as ``compare``, one side negative in some
                    # iteration and the other not (``i - 1 < 7`` at i = 0 is false for a uint32_t i)
                    (l0, l1), (r0, r1) = self.bounds(lv), self.bounds(rv)
                    if any(x is not None and x < 0 for x in (l0, r0)) and not (
                            l1 is not None and r1 is not None and l1 < 0 and r1 < 0):
                        self.refuse("order of a negative and a non-negative number", c,
                                    f"{self.text(c)}: a side below 0 in some iteration (signed or unsigned "
                                    "comparison not followed)")
                if isinstance(lv, V.Sym) and isinstance(rv, V.Sym):
                    d = lv + (-rv)
                    if isinstance(d, V.Sym):
                        if d.is_const:
                            return _holds(op, d.const)
                        return self.guard(d, op, c)
                why = next((x.why for x in (lv, rv) if isinstance(x, V.Opaque)), "not two numbers")
                self.refuse("branch on a value not known statically", c, f"{self.text(c)}: {why}")
        v = self.expr(c)
        self.no_object(v, "the condition (a conversion to bool)", c)
        if isinstance(v, V.LoopCond):
            return v.var, v.guard
        if isinstance(v, V.Sym) and v.is_const:
            return bool(v.const)
        if isinstance(v, V.Sym) and v.loops:
            return self.guard(v, "!=", c)
        why = v.why if isinstance(v, V.Opaque) else V.kind(v) if isinstance(v, V.Obj) else \
            f"a {type(v).__name__}" if v is not None else "no value"
        self.refuse("branch on a value not known statically", c, f"{self.text(c)}: {why}")

    def ranges_overlap(self, c: Any) -> bool | None:
        """The overlap test of two L1 byte ranges, ``(a < b + n) && (b < a + n)`` (either order of the two sides'
        operands), when ``a`` and ``b`` are addresses in two different buffers' pages, each range inside its buffer's
        ring for every loop index and trip value: False — the memory map gives the two buffers disjoint bytes (the
        checker's ``memory-disjoint``), so the ranges cannot meet. ``tt_memmove``'s choice between the NoC and a CPU
        ``memmove`` (ttnn 0.81.1 ``ttnn/operations/data_movement/common/kernels/common.hpp:195``). None where the
        test is not of that form, its operands are not plain arithmetic (evaluated twice), the two buffers may share
        bytes (the same buffer, two buffers on one sharded tensor), or a range may reach past its buffer: the caller
        then reads the condition as any other. Survey readings (every buffer token index 0) decide only that the four
        addresses are followed, as ``l1_check`` does there."""
        sides = [c.child_by_field_name("left"), c.child_by_field_name("right")]
        sides = [s.named_children[0] if s.type == "parenthesized_expression" and s.named_child_count == 1 else s
                 for s in sides]
        if not all(s.type == "binary_expression" and s.child_by_field_name("operator").type == "<" for s in sides):
            return None
        nodes = [x for s in sides for x in (s.child_by_field_name("left"), s.child_by_field_name("right"))]
        if not all(_plain_arithmetic(x) for x in nodes):
            return None
        try:
            a1, b1, b2, a2 = (self.expr(x) for x in nodes)
        except Refused:
            return None
        if not all(isinstance(p, V.L1Ptr) and isinstance(p.offset, V.Sym) and isinstance(p.origin, V.Sym)
                   for p in (a1, b1, b2, a2)):
            return None
        assert isinstance(a1, V.L1Ptr)
        assert isinstance(b1, V.L1Ptr)
        assert isinstance(b2, V.L1Ptr)
        assert isinstance(a2, V.L1Ptr)
        # side 1: a < b + n, side 2: b < a + n; the same two pointers on both sides
        if (a1.cb, a1.front, a1.origin) != (a2.cb, a2.front, a2.origin) or \
                (b1.cb, b1.front, b1.origin) != (b2.cb, b2.front, b2.origin):
            return None
        n1, n2 = b1.offset + (-b2.offset), a2.offset + (-a1.offset)  # type: ignore[operator]
        if n1 != n2 or not isinstance(n1, V.Sym):
            return None
        if self.survey:
            return False
        n_lo, n_hi = self.bounds(n1)
        if n_lo is None or n_hi is None or n_lo < 0 or a1.cb == b2.cb:
            return None
        ha, hb = self.cb_index[a1.cb], self.cb_index[b2.cb]
        if ha.tensor is not None and ha.tensor == hb.tensor:
            return None  # two buffers on one tensor's shard: the same bytes (an alias)
        for p, hbuf in ((a1, ha), (b2, hb)):
            assert isinstance(p.offset, V.Sym)
            assert isinstance(p.origin, V.Sym)
            lo, hi = self.bounds(p.offset)
            first = _max_residue(p.origin, hbuf.entries) * hbuf.entry_size
            if lo is None or hi is None or lo < 0 or first + hi + n_hi > hbuf.entries * hbuf.entry_size:
                return None
        return False

    def signed_operand(self, n: Any) -> bool:
        """Whether expression ``n`` has a signed integer type as far as its text says: a literal without a ``u``
        suffix, a variable declared ``int`` / ``int32_t`` / ... (``declared``, one type in the kernel), and ``+ - *``,
        unary minus and parentheses of such. A comparison of two signed operands is C++'s signed one."""
        t = n.type
        if t == "parenthesized_expression" and n.named_child_count == 1:
            return self.signed_operand(n.named_children[0])
        if t == "number_literal":
            text = n.text.decode().lower()
            return "u" not in text and not text.startswith(("0x", "0b")) and "." not in text
        if t == "identifier":
            return self.declared_as(n, _SIGNED_TYPES)
        cast = _word_cast_type(n)
        if cast is not None:  # ``(int32_t)b``: the signed word (``to_integer``)
            return not _unsigned_word(cast)
        if t == "unary_expression" and n.child_by_field_name("operator").type in ("-", "+"):
            return self.signed_operand(n.child_by_field_name("argument"))
        if t == "binary_expression" and n.child_by_field_name("operator").type in ("+", "-", "*"):
            return self.signed_operand(n.child_by_field_name("left")) and self.signed_operand(
                n.child_by_field_name("right"))
        return False

    def declared_type(self, n: Any) -> str:
        """The type words of the declaration in scope of variable ``n`` (``std::`` dropped), "" when ``n`` is not a
        variable or its declaration is not known."""
        while n.type == "parenthesized_expression" and n.named_child_count == 1:
            n = n.named_children[0]
        if n.type != "identifier":
            return ""
        name = n.text.decode()
        scope = next((sc for sc in reversed(self.scopes) if name in sc), None)
        typ = scope.get(name + _TYPE_KEY) if scope is not None else None
        return typ.why.replace("std::", "") if isinstance(typ, V.Opaque) else ""

    def declared_as(self, n: Any, types: frozenset[str]) -> bool:
        """Whether ``n`` is a variable whose declaration in scope names one of ``types``."""
        words = self.declared_type(n).split()
        return bool(words) and words[-1] in types

    def int_kind(self, n: Any) -> str | None:
        """The C++ type of integer expression ``n`` as far as its text says, after promotion: ``"s32"`` (``int``:
        a signed literal that fits, a variable declared ``int32_t``, ``uint8_t`` or ``bool``, which promote to int),
        ``"u32"`` (``3u``, ``0xFFFFFFFF``, a ``uint32_t`` variable or cast, ``get_arg_val<uint32_t>``,
        ``get_compile_time_arg_val``) or None where the text does not say (``auto``, a call, a 64-bit type). An
        arithmetic operator's is the usual arithmetic conversions' (unsigned when either side is), a shift's its left
        operand's. What decides where C++ wraps a word (unsigned) and where an overflow is undefined (signed)."""
        t = n.type
        if t == "parenthesized_expression" and n.named_child_count == 1:
            return self.int_kind(n.named_children[0])
        if t == "number_literal":
            return _literal_kind(n.text.decode())
        if t in ("true", "false"):
            return "s32"
        if t == "identifier":
            return _type_kind(self.declared_type(n))
        cast = _cast_type(n)
        if cast is not None:
            return _type_kind(cast)
        if t == "call_expression":
            fn = n.child_by_field_name("function")
            name = fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else fn
            if name is not None and name.text.decode() == "get_compile_time_arg_val":
                return "u32"  # ``constexpr uint32_t`` (api/compile_time_args.h)
            if name is not None and name.text.decode() in ("get_arg_val", "get_common_arg_val") and \
                    fn.type == "template_function":
                return _type_kind(fn.child_by_field_name("arguments").text.decode().strip("<>"))
            return None
        if t == "unary_expression" and n.child_by_field_name("operator").type in ("-", "+", "~"):
            return self.int_kind(n.child_by_field_name("argument"))
        if t == "unary_expression" and n.child_by_field_name("operator").type in ("!", "not"):
            return "s32"
        if t == "binary_expression":
            op = n.child_by_field_name("operator").type
            if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||", "and", "or"):
                return "s32"
            a = self.int_kind(n.child_by_field_name("left"))
            if op in ("<<", ">>"):
                return a
            b = self.int_kind(n.child_by_field_name("right"))
            if a is None or b is None:
                return None
            return "u32" if "u32" in (a, b) else "s32"
        return None

    def signed_overflow(self, v: V.Value, n: Any, *operands: V.Value) -> V.Value:
        """``v``, the value of ``+ - *`` (or a unary minus) expression ``n`` of ``operands``, or, when ``n`` is a
        signed 32-bit operation (``int_kind``) of operands the reading holds as the ints they are (constants in
        ``[-2**31, 2**31)``: ``1 << 31`` is held as 2**31, not the INT_MIN C++ makes of it, and is left alone) whose
        constant result leaves that range, a value not followed that names the overflow: undefined behaviour in C++
        ([expr]/4), never the word it would wrap to on the RISC."""
        exact = all(isinstance(x, V.Sym) and x.is_const and -(1 << 31) <= x.const < 1 << 31 for x in operands)
        if exact and isinstance(v, V.Sym) and v.is_const and not -(1 << 31) <= v.const < 1 << 31 and \
                self.int_kind(n) == "s32" and not self.wide(n):
            return V.Opaque(f"{self.text(n)} is {v.const}: a signed 32-bit overflow (undefined behaviour)")
        return v

    def word_field(self, v: V.Value, node: Any, what: str) -> int:
        """``int_of`` of an op's field that the device API takes as a ``uint32_t`` (a semaphore increment, value or
        threshold), given as expression ``node``: the argument converted to ``uint32_t``, modulo 2**32 as C++
        converts it ([conv.integral]). The reading's numbers are exact for ``+ - *`` and words for the rest, so the
        conversion is exact where ``node``'s type is a 32-bit one the text names (``int_kind``: a signed overflow in it
        is refused already, ``signed_overflow``); a number outside the word of an expression whose type the text does
        not say (a signed overflow, undefined, or an unsigned wrap) is refused by name."""
        k = self.int_of(v, node, what)
        if 0 <= k < 1 << 32:
            return k
        if self.int_kind(node) is None:
            self.refuse(f"{what} outside the 32-bit word", node,
                        f"{self.text(node)} is {k}, and its C++ type is not known: an unsigned word wraps, a signed "
                        "overflow is undefined")
        return k % (1 << 32)

    def wide(self, n: Any) -> bool:
        """Whether expression ``n`` may compute in 64 bits as far as its text says: a literal with an ``ll`` suffix, a
        64-bit type named in it (a cast, ``static_cast<uint64_t>``) or a variable declared with one (or ``auto``). The reading's
        numbers are words of the RISC (``_word``): its cores are 32-bit (``-march=rv32im...``, ttnn 0.81.1
        ``tt_metal/tt-llk/tests/python_tests/helpers/test_config.py:134``; ``long`` is 32 bits there, ``long long``
        and ``uint64_t`` 64), so a 64-bit value past the word is one the reading would wrap where C++ does not."""
        stack = [n]
        while stack:
            x = stack.pop()
            t = x.type
            if _word_cast(x):
                # a conversion to a 32-bit type is the word: the value under it is an exact integer (past the
                # word only by ``+ - *``, exact here; other operators of such values are not followed), which
                # every use takes modulo 2**32 (``_word``) as the conversion does
                continue
            if t == "number_literal" and "ll" in x.text.decode().lower():
                return True
            if t in ("primitive_type", "type_identifier", "sized_type_specifier", "qualified_identifier") and \
                    _wide_type(x.text.decode()):
                return True
            if t == "identifier" and _wide_type(self.declared_type(x)):
                return True
            stack.extend(x.children)
        return False

    def compare(self, op: str, x: int, y: int, node: Any, signed: bool = False) -> bool:
        """``x OP y`` of two numbers as the RISC's 32-bit words compare them. The reading's numbers are integers
        without their C++ type: one past the word (``(1u << 31) * 2``, an unsigned wrap) is taken modulo 2**32;
        ``==`` and ``!=`` compare the words (``0u - 1u == UINT32_MAX``); an order between a negative number and a
        non-negative one depends on the signedness the reading does not follow (C++ converts both to unsigned when
        either is: ``-1 < 3u`` is false) and is refused by name."""
        x, y = _word(x), _word(y)
        if op in ("==", "!="):
            return ((x - y) % (1 << 32) == 0) == (op == "==")
        if (x < 0) != (y < 0) and not signed:  # two signed operands (``int i``, ``0``): C++ compares as numbers
            self.refuse("order of a negative and a non-negative number", node,
                        f"{self.text(node)}: {x} and {y} (signed or unsigned comparison not followed)")
        return _holds(op, x - y)

    def guard(self, d: V.Sym, op: str, node: Any) -> bool | tuple[str, Guard]:
        """``d OP 0`` as a guard: ``d`` affine in one enclosing loop's index."""
        if not d.loops and d.trip is not None:
            # a runtime range alone (``if (num_tiles > 3)`` outside a loop over it): which side runs differs by value
            self.refuse("branch on a runtime range", node, self.text(node))
        if len(d.loops) != 1:
            self.refuse("branch on several loop indices", node, self.text(node))
        var, coef = d.loops[0]
        lp = next(lp for lp in self.loops if lp.var == var) if any(lp.var == var for lp in self.loops) else None
        if lp is None:
            self.refuse("branch on a loop index outside its loop", node, self.text(node))
        if isinstance(lp.count, int):
            rest = d.sub(var, V.const(0))
            if not isinstance(rest, V.Sym) or not rest.is_const:
                self.refuse("branch on a loop index and a runtime range", node, self.text(node))
            n = lp.count
            if n > 1 << 16:
                self.refuse("branch on the index of a loop of more than 65536 iterations", node, self.text(node))
            true = [k for k in range(n) if _holds(op, coef * k + rest.const)]
            # always and never last, so that they win where a short loop makes two patterns one
            pattern: dict[tuple[int, ...], Guard | bool] = {
                (0,): Guard.FIRST, (n - 1,): Guard.LAST, tuple(range(1, n)): Guard.NOT_FIRST,
                tuple(range(n - 1)): Guard.NOT_LAST, (): False, tuple(range(n)): True}
            key = tuple(true)
            if key not in pattern:
                self.refuse("branch on a loop index other than first / last", node, self.text(node))
            res = pattern[key]
            if isinstance(res, bool):
                return res  # always or never: the body itself, or nothing
            return var, res
        # a trip count: the index runs 0 .. last, last unknown; decide relative to the first or the last
        for rel, guards in ((V.const(0), (Guard.FIRST, Guard.NOT_FIRST)), (lp.last, (Guard.LAST, Guard.NOT_LAST))):
            base = d.sub(var, rel)
            if isinstance(base, V.Sym) and base.is_const:
                sign = 1 if rel is not lp.last else -1  # index = rel + sign * j, j >= 0
                seq = [_holds(op, base.const + coef * sign * j) for j in (0, 1, 2, 3, 1000)]
                if seq == [True, False, False, False, False]:
                    return var, guards[0]
                if seq == [False, True, True, True, True]:
                    return var, guards[1]
        self.refuse("branch on a loop index other than first / last", node, self.text(node))

    # ------------------------------------------------------------------ expressions

    def expr(self, n: Any) -> Any:
        """The value of expression ``n``; an object of a class that declares a conversion function is refused where
        C++ converts it (``object_value``)."""
        v = self._expr(n)
        if isinstance(v, V.Obj):
            self.object_value(v, n)
        return v

    def object_value(self, v: V.Obj, n: Any) -> None:
        """Refuse object ``v``, the value of expression ``n``, where its class (or a base) declares a conversion
        function (``operator uint32_t()``) and ``n`` stands where C++ needs no object of the class: a loop bound, an
        index, a condition, a number assigned, initialised, returned or passed to the device API. C++ runs the
        conversion there with no call written (a pop, a wait); read as a value not followed, its ops were dropped
        (a new user's ``j < x``, ``arr[x]``, ``v = x``, ``uint32_t v(x)``, ``return a;`` were proved). One place for
        every position: an object is let through only where C++ keeps it an object (``object_position``)."""
        sd = objects.struct_of(self, v.struct)
        conv = objects.declared_operator(self, sd, objects.is_conversion) if sd is not None else None
        if conv is None or self.object_position(n):
            return
        self.refuse_conversion(v, n, f"{self.text(n)}: ")

    def refuse_conversion(self, v: V.Obj, n: Any, where: str = "", to: str = "a number") -> NoReturn:
        """Refuse object ``v`` converted at ``n`` (to ``to``), naming its class and the conversion function it (or
        a base) declares, which C++ runs there with no call written."""
        sd = objects.struct_of(self, v.struct)
        conv = objects.declared_operator(self, sd, objects.is_conversion) if sd is not None else None
        what = f"conversion of an object of class {v.struct} that declares {conv}()" if conv is not None else \
            f"a {v.struct} converted to {to} calls a user-declared operator or conversion"
        self.refuse("operator on an object", n, f"{where}{what}, which C++ runs here with no call written and the "
                    "reading does not follow")

    def object_position(self, n: Any) -> bool:
        """Whether expression ``n`` stands where C++ keeps an object of a class an object (no conversion): a
        member access or method call on it, ``(void)``, ``&``, ``sizeof``, an expression statement, a variable or
        parameter of a class type (or ``auto``, a template's), an object assigned, a result of a function
        returning a class, a range-``for``'s range, a braced list (its members are converted as they are bound),
        the left of a comma (``comma_operator``). An operand of an operator is no such place: C++ converts the
        object there or calls the class's operator."""
        p = n.parent
        while p is not None and p.type == "parenthesized_expression":
            n, p = p, p.parent
        if p is None:
            return True
        t = p.type
        if t == "conditional_expression" and n.id != p.child_by_field_name("condition").id:
            return self.object_position(p)
        if t == "comma_expression" and n.id == p.child_by_field_name("right").id:
            return self.object_position(p)
        if t == "cast_expression":
            return "".join(p.child_by_field_name("type").text.decode().split()) == "void"
        if t == "pointer_expression":
            return p.children[0].type == "&"
        if t in ("argument_list", "initializer_list") and p.parent is not None and p.parent.type == "init_declarator":
            p, t = p.parent, "init_declarator"  # ``X y(x);``, ``uint32_t v{x};``: as the declared type says
        if t == "init_declarator":
            tname = self.type_name(p.parent.child_by_field_name("type")) if p.parent is not None else ""
            return tname not in TYPE_SIZES and tname != "bool"
        if t in ("field_expression", "sizeof_expression", "expression_statement", "initializer_list",
                 "initializer_pair", "for_range_loop", "comma_expression", "lambda_capture_specifier"):
            return True
        if t == "subscript_expression":
            return n.id == p.child_by_field_name("argument").id  # ``x[0]``: operator[] (``no_object``)
        if t == "call_expression":
            return True  # a functor's ``operator()``
        if t == "assignment_expression":
            if n.id == p.child_by_field_name("left").id or p.child_by_field_name("operator").type != "=":
                return True  # ``no_object`` / ``object_assignment``
            return isinstance(self.lookup_node(p.child_by_field_name("left")), V.Obj)
        if t == "return_statement":
            ret = self.returning[-1] if self.returning else ""
            return not ret or ret == "auto" or objects.struct_of(self, ret) is not None
        if t == "argument_list" and p.parent is not None and p.parent.type == "call_expression":
            fn = p.parent.child_by_field_name("function")
            name = fn.text.decode().rsplit("::", 1)[-1].split("<", 1)[0] if fn is not None else ""
            # a function or method the kernel or a header defines binds it as its parameter is declared
            # (``convert``); the device API (a free function, a method of a device object held by a variable:
            # ``noc.async_read(x, ...)``) takes numbers and addresses
            if fn is not None and fn.type == "field_expression":
                base = _unparen(fn.child_by_field_name("argument"))
                return base.type != "identifier" or isinstance(self.lookup(base.text.decode()), V.Obj)
            return name not in api.FUNCTIONS and name not in signatures.ARITIES
        if t == "argument_list" and p.parent is not None and p.parent.type == "field_initializer":
            return True  # a member initializer: bound as the member is declared (``objects.run_ctor``)
        # an index (``subscript_argument_list``), a condition, an operand of an operator, a case, a cast to a number
        # and any position not named above: C++ converts the object (or calls its class's operator) there
        return False

    def lookup_node(self, n: Any) -> Any:
        """The value variable ``n`` (an identifier) holds, None for any other expression (read without effects)."""
        n = _unparen(n)
        return self.lookup(n.text.decode()) if n.type == "identifier" else None

    def _expr(self, n: Any) -> Any:
        t = n.type
        if t == "number_literal":
            s = n.text.decode().rstrip("uUlLzZ").replace("'", "")
            try:
                # ``010`` is octal (8); Python reads it only as ``0o10``
                k = int(s, 8) if len(s) > 1 and s[0] == "0" and s.isdigit() else int(s, 0)
            except ValueError:
                return V.Opaque(f"the number {s}")
            if k >= 1 << 32:
                # a 64-bit literal (``5000000000ull``): the reading's arithmetic is on 32-bit words, where it wraps
                return V.Wide(f"the number {s}: past the 32-bit word (64-bit arithmetic is not followed)", k)
            return V.const(k)
        if t in ("true", "false"):
            return V.const(int(t == "true"))
        if t in ("string_literal", "raw_string_literal", "concatenated_string"):
            return n.text.decode().strip('"')
        if t == "identifier":
            name = n.text.decode()
            v = self.lookup(name)
            if isinstance(v, V.ArrayRef):
                return self.array_ref_use(name, v, n)
            if isinstance(v, V.LocalArray):
                # the array's address leaves the reading (an argument, a pointer): its elements are not followed;
                # inside a loop read once, earlier iterations' reads of it would be wrong: refused (a loop of a
                # constant count is then read iteration by iteration)
                if len(self.loops) > v.depth:
                    self.refuse("local array's address taken in a loop read once", n, self.text(n))
                if self.word_pointer_cast(n, v):
                    # ``L1Ptr p = reinterpret_cast<L1Ptr>(a)``: a pointer the reading follows (``ArrayRef``)
                    return V.ArrayRef(name, next(s for s in reversed(self.scopes) if name in s))
                why = V.LocalOpaque(f"the local array {name}, whose address was taken ({self.text(n)})")
                self.assign(name, why, n)
                return why
            if v is not None or any(name in s for s in self.scopes):
                return v
            if name in self.prog.functions:
                return self.function(name)
            if name in DEVICE_CONSTANTS:
                return V.const(DEVICE_CONSTANTS[name])
            if name == "kernel_compile_time_args":
                # ``constexpr auto kernel_compile_time_args = make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);``
                # (api/compile_time_args.h:23): the host's positional compile-time args, a constant array
                # (``kernel_compile_time_args.size() - 1``, sdpa's ring_joint_reader.cpp:514); the survey gives none
                if self.survey:
                    return V.Opaque("the kernel's compile-time args (the survey gives none)")
                items = tuple(self.host_value(a) for a in self.kernel.compile_time_args)
                return V.Table(items, len(items))
            if name == "cb_addr_shift" and self.kernel.engine != Engine.COMPUTE:
                # a RISC's buffer addresses are in bytes (internal/circular_buffer_interface.h:145-149)
                return V.const(0)
            if name in NOC_ALIGNMENT and self.host.target.name in NOC_ALIGNMENT[name]:
                return V.const(NOC_ALIGNMENT[name][self.host.target.name])
            if name == "MEM_ZEROS_BASE" and self.kernel.engine != Engine.COMPUTE:
                return V.ZerosRegion()
            if name == "MEM_ZEROS_SIZE" and self.host.target.name in MEM_ZEROS_SIZE:
                return V.const(MEM_ZEROS_SIZE[self.host.target.name])
            if name == "NOC_MAX_BURST_SIZE" and self.host.target.name in nocstate.NOC_MAX_BURST_SIZE:
                return V.const(nocstate.NOC_MAX_BURST_SIZE[self.host.target.name])
            if name in self.prog.unscoped:  # an enumerator of an unscoped enum: its value (enums.py)
                return V.const(self.prog.unscoped[name])
            if name == "noc_index" and self.kernel.engine != Engine.COMPUTE:
                # ``constexpr uint8_t noc_index = NOC_INDEX;`` (internal/dataflow/dataflow_api_common.h:10), the
                # JIT's define of the kernel's ``DataMovementConfig.noc``
                return V.const(self.kernel.noc)
            if name == "DST_ACCUM_MODE" and self.kernel.engine == Engine.COMPUTE:
                # the JIT's chlkc_dst_accum_mode.h: ``constexpr bool DST_ACCUM_MODE`` = ComputeConfig.fp32_dest_acc_en
                return V.const(int(self.kernel.fp32_dest_acc_en))
            return V.Opaque(f"{name} is not defined in the kernel or a followed header")
        if t == "qualified_identifier":
            return self.qualified(n)
        if t == "parenthesized_expression":
            return self.expr(n.named_children[-1])
        if t == "binary_expression":
            return self.binary(n)
        if t == "unary_expression":
            op = n.child_by_field_name("operator").type
            a = self.expr(n.child_by_field_name("argument"))
            self.no_object(a, op, n)
            if isinstance(a, V.Sym):
                if op == "-":
                    return self.signed_overflow(-a, n, a)
                if op == "+":
                    return a
                if a.is_const and op in ("!", "not"):
                    return V.const(int(not a.const))
                if a.is_const and op == "~":
                    if self.wide(n):  # the complement of a 64-bit value is 64 bits wide, not the word's
                        return V.Opaque(f"{self.text(n)}: the complement of a 64-bit value (64-bit arithmetic "
                                        "not followed)")
                    return V.const(~a.const & 0xFFFFFFFF)
            return V.Opaque(f"{op} of {self.text(n)}")
        if t == "update_expression":
            arg = n.child_by_field_name("argument")
            old = self.expr(arg)
            self.no_object(old, "++" if b"++" in n.text else "--", n)
            step = 1 if b"++" in n.text else -1
            new = old + V.const(step) if isinstance(old, V.Sym) else old.plus(V.const(step)) \
                if isinstance(old, (V.L1Ptr, V.ArgArray)) else V.Opaque(f"{self.text(n)}")
            # ``x++`` is ``x = x + 1``: the same store, whatever the place (a page through a pointer, a word)
            stored = self.store(arg, new, n)
            prefix = n.children[0].type in ("++", "--")
            return stored if prefix else old
        if t == "assignment_expression":
            return self.assignment(n)
        if t == "call_expression":
            return self.call(n)
        if t == "field_expression":
            arg = n.child_by_field_name("argument")
            field = n.child_by_field_name("field").text.decode()
            if arg.type == "this" and self.this_stack:
                return self.this_stack[-1][1].get(field, V.Opaque(f"this->{field}"))
            obj = self.expr(arg)
            if isinstance(obj, V.Obj):
                return obj.get(field)
            if isinstance(obj, V.AccessorArgs):
                return objects.accessor_args_flag(self, obj, field, n)
            if isinstance(obj, V.ArgArray) and obj.struct is not None and n.children[1].type == "->":
                return intrinsics.arg_field(self, obj, field, n)
            if isinstance(obj, V.CbInterface):
                b = self.cb_index[obj.cb]
                return V.const({"fifo_page_size": b.entry_size, "fifo_num_pages": b.entries,
                                "fifo_size": b.entry_size * b.entries}.get(field, -1)) \
                    if field in ("fifo_page_size", "fifo_num_pages", "fifo_size") else V.Opaque(f".{field}")
            return V.Opaque(f"the field {self.text(n)}")
        if t == "cast_expression":
            return self.cast(self.expr(n.child_by_field_name("value")), n.child_by_field_name("type"))
        if t == "conditional_expression":
            try:
                g = self.cond(n.child_by_field_name("condition"))
            except Refused as e:
                arms = (n.child_by_field_name("consequence"), n.child_by_field_name("alternative"))
                if e.construct != "branch on a value not known statically" or not all(map(_pure, arms)):
                    raise
                return V.Opaque(f"a choice on a value not known statically: {self.text(n)}")
            if isinstance(g, bool):
                return self.expr(n.child_by_field_name("consequence" if g else "alternative"))
            return V.Opaque(f"a choice on a loop index: {self.text(n)}")
        if t == "initializer_list":
            fields: list[tuple[str, Any]] = []
            # a comment is no element (``{/*nb=*/a, /*nq=*/b}``, q_chunk_remapping.hpp:83-87)
            for i, c in enumerate(c for c in n.named_children if c.type != "comment"):
                if c.type == "initializer_pair":
                    des = c.child_by_field_name("designator")
                    key = des.text.decode().lstrip(".") if des is not None else str(i)
                    fields.append((key, self.expr(c.child_by_field_name("value"))))
                elif c.type == "parameter_pack_expansion":
                    # ``int dummy[] = {(f(Is), 0)...};``: the pattern once per element, in order (a braced list's
                    # elements are evaluated in order, [dcl.init.list]/4); once read as one value, its calls dropped
                    fields.extend((str(len(fields)), v) for v in self.expand(c))
                else:
                    fields.append((str(i), self.expr(c)))
            return V.Designated(tuple(fields))
        if t == "lambda_expression":
            decl = n.child_by_field_name("declarator")
            params = self.params(decl.child_by_field_name("parameters")) if decl is not None else ()
            by_value, by_ref = _capture_modes(n.child_by_field_name("captures"))
            if by_value and by_ref:
                self.refuse("lambda capturing by value and by reference", n, self.text(n.child_by_field_name(
                    "captures")))
            # by reference (``[&]``) the body sees the variables as they are when it runs; by value (``[=]``,
            # ``[n]``) as they were when the lambda was made: copies (a ``mutable`` body changes its copies only).
            # The outermost scope (the pointer counters, file-scope variables) is the machine's, never copied
            captures = self.scopes[:] if not by_value else [self.scopes[0], *(dict(sc) for sc in self.scopes[1:])]
            inits: dict[str, Any] = {}
            spec = n.child_by_field_name("captures")
            for c in spec.named_children if spec is not None else ():
                if c.type == "lambda_capture_initializer":
                    # ``[c = k]``: a copy made with the lambda, named c in its body (once refused as c not defined)
                    if self.text(c).startswith("&"):
                        self.refuse("lambda init-capture by reference", n, self.text(c))
                    inits[c.child_by_field_name("left").text.decode()] = self.expr(c.child_by_field_name("right"))
            # its parameters' and trailing return's types convert as a function's do (``[](uint8_t x) {...}(257)``
            # holds 1; ``-> uint8_t`` converts what it returns); without one the result is the returned value's
            plist = decl.child_by_field_name("parameters") if decl is not None else None
            pdecls = [c for c in plist.named_children if c.type.endswith("parameter_declaration")] \
                if plist is not None else []
            trailing = next((c for c in decl.children if c.type == "trailing_return_type"), None) \
                if decl is not None else None
            tdesc = next((c for c in trailing.named_children if c.type == "type_descriptor"), None) \
                if trailing is not None else None
            returns = self.type_name(tdesc.child_by_field_name("type")) if tdesc is not None else ""
            if tdesc is not None and tdesc.child_by_field_name("declarator") is not None:
                returns = deduced.UNKNOWN_TYPE  # ``-> uint8_t&``: a reference, which object it names not followed
            return V.Function("lambda", params, (), n.child_by_field_name("body"), self.unit.file,
                              captures=[*captures, inits] if inits else captures,
                              param_types=tuple(self.type_name(c.child_by_field_name("type")) for c in pdecls),
                              param_declarators=tuple(getattr(c.child_by_field_name("declarator"), "type", "")
                                                      for c in pdecls), returns=returns)
        if t == "comma_expression":
            left = self.expr(n.child_by_field_name("left"))
            right = self.expr(n.child_by_field_name("right"))
            self.comma_operator(left, right, n)
            return right
        if t == "fold_expression":
            return self.fold(n)
        if t == "template_function":
            fname = n.child_by_field_name("name").text.decode()
            if fname in self.prog.functions:
                return self.function(fname)
            return objects.variable_template(self, n)  # ``is_accumulate_v<T>``, ``std::is_same_v<A, B>``
        if t == "pointer_expression":
            arg = n.child_by_field_name("argument")
            if arg.type == "this" and n.children[0].type == "*" and self.this_stack:
                sd, this_fields = self.this_stack[-1]
                return V.Obj(sd.name, tuple((f, this_fields.get(f)) for f, _, _ in sd.fields))
            held = _unparen(arg)
            if n.children[0].type == "&" and held.type == "subscript_expression":
                base = held.child_by_field_name("argument")
                if base is not None and base.type == "identifier" and \
                        isinstance(self.lookup(base.text.decode()), V.LocalArray):
                    # ``&a[i]``: the array's address leaves the reading, as ``a`` alone does
                    return self.expr(base)
                idx = held.child_by_field_name("indices") or held.child_by_field_name("index")
                if base is not None and base.type == "identifier" and idx is not None and idx.named_child_count == 1:
                    ptr = self.expr(base)
                    if isinstance(ptr, V.L1Ptr):
                        # ``&p[i]`` of a pointer into a buffer's pages is ``p + i``, an address (no load of the
                        # element): ``load_blocking(&p[0])`` is ``load_blocking(p)``
                        i = self.expr(idx.named_children[0])
                        return ptr.plus(i if isinstance(i, (V.Sym, V.Opaque)) else V.Opaque(f"its index {self.text(idx)}"))
            inner = self.expr(arg)
            if n.children[0].type == "*":
                self.no_object(inner, "*", n)  # ``*it``: the class's operator*
            if isinstance(inner, V.Optional) and n.children[0].type == "*":
                if inner.value is None:
                    self.refuse("dereference of an empty std::optional", n)
                return inner.value
            if n.children[0].type == "&":
                if held.type == "identifier" and isinstance(inner, (V.Sym, V.L1Ptr)):
                    # ``uint32_t* p = &n; *p = 9;``: a store through the pointer changes ``n``, which the reading
                    # does not follow, so from here on ``n`` is not known (a loop over it is refused, not counted
                    # with its old value and proved)
                    name = held.text.decode()
                    self.assign(name, self.unfollowed(name, inner, f"{name}, whose address is taken "
                                                                   f"({self.text(n)}): a store through it is not "
                                                                   "followed"), n)
                if isinstance(inner, V.SemAddr):
                    return inner
                if held.type == "identifier":
                    # the address of a variable of the kernel: a store through it changes the kernel's own words
                    # (the variable, no longer followed above), never a buffer's pages
                    return V.LocalOpaque(f"the address {self.text(n)}")
                return V.Opaque(f"the address {self.text(n)}")
            if isinstance(inner, V.ArgArray):
                return intrinsics.arg_word(self, inner, V.const(0), n)
            if isinstance(inner, V.L1Ptr) and inner.cb in self.scratch_cbs:
                self.scratch_load(inner, n)  # ``*p`` of scratch bytes: a load, as ``p[i]``
            return V.Opaque(f"a value read from L1: {self.text(n)}")
        if t == "subscript_expression":
            return self.subscript(n)
        if t == "sizeof_expression":
            return self.size_of(n)
        if t == "compound_literal_expression":
            return self.compound_literal(n)
        if t in ("char_literal", "null", "nullptr", "this", "alignof_expression"):
            return V.Opaque(self.text(n))
        if t == "new_expression":
            # a placement new constructs an object at an address (it stores there); no kernel has a heap
            self.refuse("new expression", n, f"{self.text(n)}: it stores into memory the reading does not place")
        if t == "gnu_asm_expression":
            return self.inline_asm(n)
        if t == "parameter_pack_expansion" and n.parent is not None and n.parent.type == "case_statement":
            # GCC's ``case 0 ... 2:``, which tree-sitter parses as an expansion of the pack ``0``
            self.refuse("case range", n, f"{self.text(n)}: a GNU extension the reading does not follow")
        if t == "parameter_pack_expansion":
            # an expansion where the reading does not expand it (a call's arguments and a braced list are): read as
            # one value, its pattern's calls would be dropped
            self.refuse("pack expansion in a place not read", n, self.text(n))
        if self.issues(n):
            # a construct the reading has no case for (a GNU statement expression ``({ f(); 0; })``, ...): read as
            # one value not followed, the calls, stores and increments inside it would be dropped
            self.refuse(f"expression not followed ({t}) holding a call or a store", n, self.text(n))
        return V.Opaque(f"{t}: {self.text(n)}")

    def inline_asm(self, n: Any) -> V.Value:
        """``asm volatile("fence" ::: "memory")`` and the like: the vendor kernels' inline assembly is a fence, a
        ``nop`` or an empty compiler barrier (data_movement/common/kernels/common.hpp:164), which store nothing. Any
        other instruction may store into L1 (``sw``), so it is refused by name, never read as having no effect."""
        tmpl = n.child_by_field_name("assembly_code")
        code = tmpl.text.decode().strip('"').strip() if tmpl is not None else None
        if code not in ("", "fence", "nop"):
            self.refuse("inline assembly", n, f"{self.text(n)}: an instruction other than a fence or nop may store")
        return V.Opaque(self.text(n))

    def cast(self, v: V.Value, typ: Any) -> V.Value:
        """``v`` converted to the type ``typ`` (a C cast or a ``static_cast``): an L1 or runtime arg address retyped
        (``retyped``); an enumerator converted to an integer type is its value (enums.py)."""
        text = " ".join(typ.text.decode().split()) if typ is not None else ""
        if "*" not in text:
            if isinstance(v, V.Obj) and text != "void" and objects.struct_of(self, text) is None:
                self.no_object(v, f"a cast to {text}", typ)
            v = self.to_integer(v, text)
        elif isinstance(v, V.ArgArray):
            # a struct laid over the runtime args (reader_tile_interleaved_unified.cpp:179): its fields are words
            base = [w for w in text.replace("*", " ").split() if w not in ("const", "volatile", "tt_l1_ptr")]
            sd = objects.struct_of(self, base[-1]) if len(base) == 1 else None
            if sd is not None:
                return attrs.evolve(v, elem=None, struct=sd.name)
        elif isinstance(v, V.LocalOpaque):
            v = V.Opaque(v.why)  # a value cast to an address: no longer known to be the kernel's own words
        return retyped(v, typ, self.bound_type_text(text))

    def bound_type_text(self, text: str) -> str | None:
        """Type text ``text`` (``T*``, ``volatile T*``) with its one base name, a template type parameter bound to a
        type (``V.TypeName``: ``fill_pad_tile<uint16_t, ...>``'s ``T``, pad_tile.hpp:142), replaced by that type;
        None where it names no such parameter."""
        words = text.replace("*", " ").split()
        base = [w for w in words if w not in ("const", "volatile", "tt_l1_ptr")]
        if len(base) != 1 or not base[0].isidentifier():
            return None
        bound = self.lookup(base[0])
        if not isinstance(bound, V.TypeName):
            return None
        return " ".join(bound.name if w == base[0] else w for w in words) + " *" * text.count("*")

    def to_integer(self, v: V.Value, text: str) -> V.Value:
        """``v`` converted to the integer type named ``text`` (``uint16_t``, ``bool``, ``uint``), as C++ converts a
        number or an enumerator: to bool 0 or 1, to a type narrower than the RISC's 32-bit word modulo 2**(8N),
        signed or not. To a 32- or 64-bit type a number stays the integer it is: the reading's numbers stand for
        32-bit words already, and ``(uint32_t)(-(int32_t)n)`` (a semaphore decrement, writer_untilize.cpp:349) must
        stay the ``-n`` the ops add, not become ``2**32 - n``; but a constant word of 2**31 or more converted to a
        signed 32-bit type is the negative number it is there, and a constant past the word (a 64-bit one) the word
        C++ truncates it to (a 64-bit variable holding a value past the word is not followed). A
        number that is not a constant (affine in loop indices and a trip) is kept as it is when every value it takes
        over the open loops and its trip's range fits the narrow type, or a signed 32-bit one (``value_range``);
        else the conversion wraps for some of them, which an affine number cannot say, and the result is a value not
        followed (``uint8_t n`` of a runtime range ``0..300`` is 0 at 256, ``int32_t n`` of ``0..2**32 - 1``
        negative from 2**31: read as ``n`` the loop it counts ran that many times where the kernel runs none, and a
        hang was proved). Other types and values are not changed."""
        width = _size_of_type(text)
        if width is None or "float" in text or "double" in text:
            return v
        k = enums.number(self, v) if isinstance(v, V.EnumConst) else v
        if isinstance(k, V.Wide) and width <= 4:
            # a 64-bit literal converted to a 32-bit or narrower type: the word C++ truncates it to, read below as
            # any constant past the word is ([conv.integral]; ``static_cast<uint32_t>(0xFFFFFFFFFull) > 5`` holds)
            k = V.const(k.value % (1 << 32))
        if isinstance(k, V.Ranged):
            # a bounded number is kept where all of its bounds fit the type, as a number known at run time is
            lo, hi = (0, 1) if text.endswith("bool") else _int_range(text, width) if width < 4 or (
                width == 4 and _signed_type(text)) else (-(1 << 31), (1 << 32) - 1)
            return k if lo <= k.lo and k.hi <= hi else V.Opaque(f"{k.why}, converted to a {text} holding {lo}..{hi}")
        if width == 8 and isinstance(k, V.Sym):
            # a 64-bit variable holds what the reading's 32-bit words cannot: a value past them is not followed
            # (``uint64_t b = 65536ull * 65536ull; b != 0`` is true, on a 32-bit word false)
            got = (k.const, k.const) if k.is_const else self.value_range(k)
            if got is None or got[0] < -(1 << 31) or got[1] >= 1 << 32:
                return V.Opaque(f"a {text} past the 32-bit word (64-bit arithmetic is not followed)")
            return k
        if isinstance(k, V.Sym) and not k.is_const and (text.endswith("bool") or width < 4 or (
                width == 4 and _signed_type(text))):
            lo, hi = (0, 1) if text.endswith("bool") else _int_range(text, width)
            got = self.value_range(k)
            if got is None or got[0] < lo or got[1] > hi:
                return V.Opaque(f"a {text} holds {lo}..{hi}, converted from a number known only at run time "
                                + ("whose range is not known" if got is None else f"that ranges over {got[0]}..{got[1]}"))
            return k
        if not isinstance(k, V.Sym) or not k.is_const:
            return k
        if text.endswith("bool"):
            return V.const(int(k.const != 0))
        if width == 4 and k.const >= 1 << 32:
            # a 64-bit number past the word (``(uint32_t)((1ull << 32) + 2)``) is the word C++ truncates it to
            # (modulo 2**32, [conv.integral]); kept whole, a use that does not wrap it read 4294967298 pages
            k = V.const(k.const % (1 << 32))
        if width == 4 and _signed_type(text) and 1 << 31 <= k.const < 1 << 32:
            # a word of 2**31 or more is negative as a signed 32-bit one (``int32_t k = get_arg_val<int32_t>(i)`` of
            # a host value 4294967295 is -1, and ``k < 0`` holds; it was read as 4294967295)
            return V.const(k.const - (1 << 32))
        if width >= 4:
            return k
        u = k.const & ((1 << 8 * width) - 1)
        signed = _signed_type(text)
        return V.const(u - (1 << 8 * width) if signed and u >> (8 * width - 1) else u)

    def compound_literal(self, n: Any) -> V.Value:
        """``T{...}``: a chain element of the kernel_lib (``chain.element``) or a struct value."""
        typ = n.child_by_field_name("type")
        init = n.child_by_field_name("value")
        seq = self.sequence_type(typ) if typ is not None and init is not None and not init.named_child_count else None
        if seq is not None:
            return seq
        if typ is not None and init is not None and self.text(typ).startswith("noc_traits_t<") and \
                self.text(typ).rsplit("::", 1)[-1] in ("src_args_type", "dst_args_type"):
            # an endpoint's transfer arguments spelled with their type (api/tensor/noc_traits.h), as the braced
            # ``{.noc_x, .noc_y, .addr}`` the transfer call takes (pool's experimental_device_api.hpp:37-39)
            return self.expr(init)
        vals = [v for a in init.named_children if a.type != "comment"
                for v in (self.expand(a) if a.type == "parameter_pack_expansion" else
                          [self.designated(a)] if a.type == "initializer_pair" else
                          [self.expr(a)])] \
            if init is not None else []  # ``T{(f(Is), 0)...}``: the pattern once per element, in order
        c = deduced.canonical(self.resolved(self.text(typ))) if typ is not None else None
        if c is not None and len(vals) <= 1:
            # ``uint32_t{5}``: the braced value as the type holds it ([expr.type.conv]; a narrowing one does not
            # compile), ``uint32_t{}`` zero
            v = vals[0] if vals else V.const(0)
            return self.to_integer(v, c) if isinstance(v, (V.Sym, V.Ranged, V.Wide)) else v
        tv = self.template_value(typ) if typ is not None else None
        if isinstance(tv, V.TypeInst):
            return chain.element(self, tv, vals, n)
        sd = objects.struct_of(self, self.text(typ)) if typ is not None else None
        if sd is not None:
            return objects.construct(self, sd, vals, n, braced=True)
        if typ is not None and self.text(typ).rsplit("::", 1)[-1] == "UnicastEndpoint":
            return V.Unicast()
        return V.Opaque(f"a {self.text(typ) if typ is not None else 'value'}")

    def designated(self, pair: Any) -> V.Value:
        """``.f = v`` among ``T{...}``'s elements: ``v`` read (its calls happen), the element a value not followed as
        before (the struct's construction takes its elements by position, not by designator)."""
        self.expr(pair.child_by_field_name("value"))
        return V.Opaque(f"initializer_pair: {self.text(pair)}")

    def sequence_type(self, typ: Any) -> V.Pack | None:
        """The pack an integer sequence type's value ``T{}`` stands for (<utility>): ``std::index_sequence_for<Ts...>``
        ``0 .. sizeof...(Ts) - 1`` (matmul_dataflow_common.hpp:473), ``std::make_index_sequence<N>`` /
        ``std::make_integer_sequence<T, N>`` ``0 .. N-1``, ``std::index_sequence<a, b>`` / ``std::integer_sequence<T, a,
        b>`` its elements; None for any other type. A length or element not known statically is refused by name."""
        inst = typ
        while inst is not None and inst.type == "qualified_identifier":
            inst = inst.child_by_field_name("name")
        if inst is None or inst.type != "template_type" or not self.text(typ).startswith("std::"):
            return None
        name = inst.child_by_field_name("name").text.decode()
        ta = inst.child_by_field_name("arguments")
        args = [a for a in (ta.named_children if ta is not None else ()) if a.type != "comment"]

        def number(a: Any) -> int:
            v = enums.number(self, self.expr(a) if a.type != "type_descriptor" else self.template_value(a))
            if not (isinstance(v, V.Sym) and v.is_const and 0 <= v.const < 2**32):
                self.refuse("integer sequence of a length not known statically", typ, self.text(typ))
            return v.const

        if name == "index_sequence_for":
            count = 0
            for a in args:
                packs = self.packs_in(a) if a.type == "parameter_pack_expansion" else {}
                if a.type == "parameter_pack_expansion" and len(packs) != 1:
                    self.refuse("integer sequence of a length not known statically", typ, self.text(typ))
                count += len(next(iter(packs.values())).items) if packs else 1
            return V.Pack(tuple(V.const(i) for i in range(count)))
        if name in ("make_index_sequence", "make_integer_sequence") and args:
            k = number(args[-1])
            if k > MAX_PACK:
                self.refuse("integer sequence of a length not known statically", typ, f"{self.text(typ)}: {k}")
            return V.Pack(tuple(V.const(i) for i in range(k)))
        if name in ("index_sequence", "integer_sequence"):
            return V.Pack(tuple(V.const(number(a)) for a in args[(1 if name == "integer_sequence" else 0):]))
        return None

    def local_array(self, d: Any, elem: str = "") -> V.LocalArray | None:
        """``T a[N];`` with ``N`` known statically (1 to ``UNROLL_LIMIT``, one dimension): an array of unstored
        elements of type ``elem``; None for any other array declarator."""
        inner, size = d.child_by_field_name("declarator"), d.child_by_field_name("size")
        if inner is None or inner.type != "identifier" or size is None:
            return None
        n = self.expr(size)
        if not isinstance(n, V.Sym) or not n.is_const or not 0 < n.const <= UNROLL_LIMIT:
            return None
        return V.LocalArray((None,) * n.const, len(self.loops), elem)

    def aliased_array(self, alias: str, typ: Any, init: Any, d: Any) -> V.Value:
        """A local array declared through an array type alias (``df::RemoteNocCoords<num_blocks> remote_coords{};``,
        reader_mcast_sender_unary_sharded_ln.cpp:109, of ``template <NumNocAddrs N> using RemoteNocCoords =
        RemoteNocCoord[N];``, layernorm_dataflow_utils.h:31-32): its size the alias's, the alias template's
        parameters bound to the type's template arguments; an empty ``{}`` value-initializes every element (a struct's
        fields to their defaults or 0), no initializer leaves them unstored. Any other initializer, or a size not a
        number from 1 to ``UNROLL_LIMIT``, is no array the reading follows (a value not followed)."""
        elem, size_node, params = self.array_aliases[alias]
        targs: list[Any] = []
        stack = [typ]
        while stack and not targs:
            x = stack.pop()
            if x.type == "template_argument_list":
                targs = list(x.named_children)
            stack.extend(x.named_children)
        if len(targs) != len(params):
            return V.Opaque(f"{self.text(d)}: the array alias {alias} with {len(targs)} template arguments")
        scope: dict[str, V.Value] = {}
        for p, a in zip(params, targs, strict=True):
            scope[p] = self.expr(a) if a.type != "type_descriptor" else self.template_value(a)
        self.scopes.append(scope)
        try:
            n = self.expr(size_node)
        finally:
            self.scopes.pop()
        if not isinstance(n, V.Sym) or not n.is_const or not 0 < n.const <= UNROLL_LIMIT:
            return V.Opaque(f"{self.text(d)}: an array of a size not known statically")
        if init is not None and (init.type != "initializer_list" or init.named_child_count):
            return V.Opaque(f"{self.text(d)}: an array initialized other than by {{}}")
        sd = objects.struct_of(self, elem)
        zero: V.Value = None
        if init is not None:
            # ``{}`` value-initializes: a field with no default member initializer is zero, as a scalar element
            zero = objects.construct(self, sd, [], d, braced=True) if sd is not None else V.const(0)
            if isinstance(zero, V.Obj) and sd is not None:
                plain = {f for f, _, default in sd.fields if default is None and objects.struct_of(self, _) is None}
                zero = V.Obj(zero.struct, tuple((f, V.const(0) if f in plain else v) for f, v in zero.fields))
        return V.LocalArray((zero,) * n.const, len(self.loops), elem)

    def local_index(self, arr: V.LocalArray, idx: Any, n: Any, store: bool) -> int | V.Sym | V.Opaque:
        """The element ``idx`` names in ``arr``: a number in range, the index as a symbol of enclosing loops, or
        why it is not followed. An index past the end (undefined behaviour) is refused for a ``store`` (it may
        overwrite other variables) and not followed for a load (the survey's made-up args reach it too)."""
        if idx is None or idx.named_child_count != 1:
            return V.Opaque(f"a local array indexed by several values: {self.text(n)}")
        i = self.expr(idx.named_children[0])
        if isinstance(i, V.Sym) and i.is_const:
            if not 0 <= i.const < len(arr.items):
                if store:
                    self.refuse("local array index out of bounds", n,
                                f"{self.text(n)}: {i.const} of {len(arr.items)}")
                return V.Opaque(f"a local array element past its end: {self.text(n)}")
            return i.const
        if isinstance(i, V.Sym):
            return i
        return i if isinstance(i, V.Opaque) else V.Opaque(f"a local array index not followed: {self.text(n)}")

    def unrollable(self, i: Any) -> bool:
        """Whether ``i`` is a symbol of enclosing loops that are all of constant counts of at most
        ``UNROLL_LIMIT``: a refusal at it makes ``for_stmt`` read those loops iteration by iteration, where it is a
        number."""
        if not isinstance(i, V.Sym) or not i.loops:
            return False
        counts = [lp.count for lp in self.loops if any(v == lp.var for v, _ in i.loops)]
        return len(counts) == len(i.loops) and all(isinstance(c, int) and c <= UNROLL_LIMIT for c in counts)

    def local_element(self, arr: V.LocalArray, idx: Any, n: Any) -> V.Value:
        """``a[i]`` of a local array: the value last stored there."""
        i = self.local_index(arr, idx, n, False)
        if isinstance(i, int):
            v = arr.items[i]
            return v if v is not None else V.Opaque(f"an element of a local array never stored: {self.text(n)}")
        if self.unrollable(i):
            self.refuse("local array read at a loop index", n, self.text(n))
        return i if isinstance(i, V.Opaque) else V.Opaque(f"a local array element at an index not known "
                                                         f"statically: {self.text(n)}")

    def local_store(self, lhs: Any, value: Any, n: Any) -> bool:
        """``a[i] = value`` into a local array (``lhs`` is ``a[i]``): the element at a known index, at any other the
        array is no longer followed. Inside a loop read once for all its iterations (declared outside it) it is
        refused: a loop of a constant count is then read iteration by iteration (``_for`` catches the refusal), any
        other stays refused. False when ``a`` is no local array."""
        base = lhs.child_by_field_name("argument")
        arr = self.lookup(base.text.decode()) if base is not None and base.type == "identifier" else None
        if not isinstance(arr, V.LocalArray):
            return False
        name = base.text.decode()
        if len(self.loops) > arr.depth:
            # one reading of the loop's body stands for every iteration: what an iteration stores, the next reads
            self.refuse("store into a local array in a loop read once", n, self.text(n))
        i = self.local_index(arr, lhs.child_by_field_name("indices") or lhs.child_by_field_name("index"), lhs, True)
        if isinstance(i, int):
            # ``coords[i] = {x, y}`` builds the element's struct (objects.convert; a number stays a number)
            self.assign(name, arr.stored(i, objects.convert(self, value, arr.elem, n)), n)
            return True
        self.assign(name, V.LocalOpaque(f"the local array {name}, stored at an index not known statically "
                                   f"({self.text(n)})"), n)
        return True

    def word_pointer_cast(self, n: Any, arr: V.LocalArray) -> bool:
        """Whether the local array named at ``n`` is cast to a pointer to 32-bit words to initialise a pointer
        variable (``df::L1Ptr p = reinterpret_cast<df::L1Ptr>(remote_noc_x);`` of a ``uint32_t`` array,
        reader_mcast_sender_unary_sharded_ln.cpp:87-88; ``L1Ptr`` is ``volatile tt_l1_ptr uint32_t*``,
        layernorm_dataflow_utils.h:34): the one way an ``ArrayRef`` is made."""
        if arr.elem not in ("uint32_t", "int32_t"):
            return False
        parent = n.parent
        cast_type = None
        if parent is not None and parent.type == "argument_list" and parent.named_child_count == 1 and \
                parent.parent is not None and parent.parent.type == "call_expression":
            fn = parent.parent.child_by_field_name("function")
            if fn is not None and fn.type == "template_function" and \
                    fn.child_by_field_name("name").text.decode() in ("reinterpret_cast", "static_cast"):
                tl = fn.child_by_field_name("arguments")
                cast_type = tl.named_children[0] if tl is not None and tl.named_child_count == 1 else None
                parent = parent.parent
        elif parent is not None and parent.type == "cast_expression":
            cast_type = parent.child_by_field_name("type")
        if cast_type is None or parent.parent is None or parent.parent.type != "init_declarator":
            return False
        text = "".join(cast_type.text.decode().split())
        bare = text.rsplit("::", 1)[-1]
        for alias, target in ((d.child_by_field_name("name"), d.child_by_field_name("type"))
                              for d, _ in self.prog.globals if d.type == "alias_declaration"):
            if alias is not None and target is not None and alias.text.decode() == bare:
                text = "".join(target.text.decode().split())
        return text.endswith(("uint32_t*", "int32_t*"))

    def array_ref_use(self, name: str, ref: V.ArrayRef, n: Any) -> V.Value:
        """``p`` of an ``ArrayRef`` at ``n``: followed as ``p[i]`` read, as an argument of a function the reading
        inlines and copied into a pointer variable. A store through it (``p[i] = v``, ``p[i]++``) is refused by
        name; any other use (``p + 1``, ``&p[i]``, a device API given it) ends what is known of the array: it may be
        written there, so its elements are no longer followed, as when a local array's address is taken."""
        parent = n.parent
        if parent is not None and parent.type == "subscript_expression" and \
                parent.child_by_field_name("argument").start_byte == n.start_byte:
            up = parent.parent
            if up is not None and ((up.type == "assignment_expression" and
                                    up.child_by_field_name("left").start_byte == parent.start_byte) or
                                   up.type == "update_expression"):
                self.refuse("store through a pointer to a local array", up, self.text(up))
            if up is None or up.type != "pointer_expression":
                return ref
        if parent is not None and parent.type == "init_declarator":
            return ref
        if parent is not None and parent.type == "argument_list" and parent.parent is not None and \
                parent.parent.type == "call_expression":
            fn = parent.parent.child_by_field_name("function")
            callee = fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else fn
            text = "".join(callee.text.decode().split()).split("<", 1)[0] if callee is not None else ""
            if text in self.prog.functions or text.rsplit("::", 1)[-1] in self.prog.functions or \
                    isinstance(self.lookup(text), V.Function):
                return ref
        why = V.LocalOpaque(f"the local array {ref.name}, whose address was used in {self.text(parent or n)}")
        ref.scope[ref.name] = why
        return why

    def subscript(self, n: Any) -> V.Value:
        """``a[i]``: the JIT's per-buffer descriptor arrays (chlkc_descriptors.h, kernel_lib/tilize_helpers.inl:16-23:
        ``unpack_src_format[cb]`` and the other formats are the buffer's data format as the host configured it, the
        tile dimensions 32 x 32 in 4 faces of 16 rows); a constant table's element and a runtime arg read through
        ``get_arg_addr`` (intrinsics.py); any other array element is a value read from memory."""
        base = n.child_by_field_name("argument")
        idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
        arr = self.lookup(base.text.decode()) if base is not None and base.type == "identifier" else None
        if isinstance(arr, V.LocalArray):
            return self.local_element(arr, idx, n)
        # a constant table's element, a runtime arg through get_arg_addr (intrinsics.py)
        held = self.expr(base) if base is not None and base.type in (
            "identifier", "parenthesized_expression", "subscript_expression", "qualified_identifier") else None
        self.no_object(held, "[]", n)
        if isinstance(held, V.ArrayRef):
            arr = held.scope.get(held.name)
            if isinstance(arr, V.LocalArray):
                return self.local_element(arr, idx, n)  # the array as it is now (``array_ref_use``)
            self.index_effects(idx)
            return arr if isinstance(arr, V.Opaque) else V.Opaque(f"{self.text(n)}: the array is not followed")
        if isinstance(held, V.ArgArray) and idx is not None and idx.named_child_count == 1:
            return intrinsics.arg_word(self, held, self.expr(idx.named_children[0]), n)
        if isinstance(held, V.Table) and idx is not None and idx.named_child_count == 1:
            return intrinsics.element(self, held, self.expr(idx.named_children[0]), n)
        name = base.text.decode() if base is not None and base.type == "identifier" else ""
        if name in JIT_DESCRIPTORS and self.lookup(name) is None and \
                idx is not None and idx.named_child_count == 1:
            first, idx = idx.named_children[0], None  # read here: its effects happen once
            cb = self.expr(first)
            if isinstance(cb, (V.Sym, V.Cb)) and (isinstance(cb, V.Cb) or cb.is_const):
                i = cb.index if isinstance(cb, V.Cb) else cb.const
                if i in self.cb_index:
                    what = JIT_DESCRIPTORS[name]
                    return api.data_format(self, i) if what is None else V.const(what)
        ptr = self.lookup(name) if name else None
        if isinstance(ptr, V.L1Ptr) and idx is not None and idx.named_child_count == 1:
            # a load from a buffer's pages: a store of it elsewhere is a copy (store_into); of scratch, an op
            at = ptr.plus(self.expr(idx.named_children[0]))
            if ptr.cb in self.scratch_cbs:
                self.scratch_load(at, n)
            word = self.stated_load(at, n)
            if isinstance(word, V.Sym):
                return word
            return V.Loaded(f"a value loaded from L1: {self.text(n)}" if word is None else
                            f"a value loaded from L1 the stated tensor data does not decide: {self.text(n)}: {word}", at)
        if name in ("my_x", "my_y") and self.lookup(name) is None:
            # this core's NoC coordinates (firmware globals indexed by the NoC,
            # internal/dataflow/noc_address_backend_xy.h:28), read as the logical ones every coordinate here is
            # (docs/ttmetal.md, "The host description")
            return V.const(self.site.x if name == "my_x" else self.site.y)
        self.index_effects(idx)
        return V.Opaque(f"a value read from memory: {self.text(n)}")

    def stated_load(self, at: V.L1Ptr, n: Any) -> V.Sym | str | None:
        """A 32-bit load at ``at`` read as the tensor word the host states there (frontends/ttmetal/stated.py); where
        it is not one, None when the host states no tensor data at all, else why the stated data does not decide it
        (for the refusal): an address not followed or not a word of the pointer's page, a page not published to
        this engine, or bytes no read of stated data lands. Published: a read pointer taken at the pops so far, the
        engine having waited for the buffer since its last pop; or a write pointer taken before a push of this
        engine since (the page it points at was pushed: its reads landed, ``async-read-publish``). Raises
        ``LandingNotRead`` when no kernel read so far lands bytes in the buffer on this core (``assemble`` reads the
        kernel again after the others); the claim is checked against the whole program."""
        # the words as the L1 holds them: an int32 tensor's -1 is 0xFFFFFFFF (the schema's signed form)
        stated_data = {t["name"]: tuple(v % (1 << 32) for v in t["values"]) for t in self.host.tensors if "values" in t}
        if not stated_data or self.survey:
            return None
        if at.elem != stated.WORD:
            return f"a load of {at.elem} B, not a 32-bit word" if at.elem else "a load of a size not known"
        if self.unrollable(at.offset):
            # a number at each iteration (``for (k < 2) n += p[k]``): ``for_stmt`` reads the loop as it runs
            self.refuse("stated tensor word loaded at a loop index", n, self.text(n))
        if not isinstance(at.offset, V.Sym) or not at.offset.is_const:
            return "its byte offset into the page is not a number"
        b = at.offset.const
        page = self.cb_index[at.cb]
        tile_bytes = page.entry_size // page.page_tiles
        if not 0 <= b <= tile_bytes - stated.WORD:
            return f"byte {b} is not a word of the page's first tile ({tile_bytes} B)"
        if not isinstance(at.origin, V.Sym):
            return "which page the pointer points at is not followed"
        moved = self.ctr("popped" if at.front else "pushed", at.cb) + (-at.origin)
        if not (isinstance(moved, V.Sym) and moved.is_const):
            return "which page the pointer points at is not followed"
        if at.front and moved.const != 0:
            return f"the page was popped (c_{at.cb}'s read pointer moved since it was taken)"
        if at.front and at.cb not in self.front_waited:
            return f"no cb_wait_front of c_{at.cb} since this engine's last pop"
        if not at.front and moved.const < 1:
            return f"the page at c_{at.cb}'s write pointer is not pushed yet (its reads may not have landed)"
        on = page.tensor
        if on is not None:
            # the host placed the pages (a shard of ``on``) before the launch: no read lands them, and the stated
            # words are those a read of page 0 lands
            return (f"c_{at.cb} is globally allocated on {on}'s shard: its bytes are the shard the host placed there, "
                    "not a read of the stated page 0")
        reads = self.shared.landings.get((self.site, at.cb))
        if not reads:
            raise stated.LandingNotRead("a value loaded from L1 before its buffer's filler is read", self.loc(n),
                                        f"{self.text(n)}: no kernel read so far lands bytes in c_{at.cb} here")
        why = f"no read into c_{at.cb} lands a stated word at byte {b} (of another tensor, page or offset)"
        for op in reads:
            words = stated_data.get(op.tensor)
            w = stated.fills_word(op, op.tensor, b, tile_bytes) if words is not None else None
            if words is not None and w is not None and w < len(words):
                self.shared.claims.append(stated.Claim(self.site, at.cb, b, op.tensor, w, self.loc(n)))
                return V.const(words[w])
            if words is not None and w is not None:
                why = f"the read lands word {w} of {op.tensor}, past its {len(words)} stated word(s)"
        return why

    def issues(self, n: Any) -> bool:
        """Whether node ``n`` may run code when C++ evaluates it: a call, a store, an increment or a statement
        (``_issues``), or a variable holding an object whose class (or a member's class) declares an operator or a
        conversion function, which C++ may call there with no call written (``arr[x]`` runs ``x``'s
        ``operator uint32_t()``). Where this is False the reading may leave ``n`` unread."""
        if _issues(n):
            return True
        stack = [n]
        while stack:
            x = stack.pop()
            if x.type == "identifier" and self.has_operators(self.lookup(x.text.decode())):
                return True
            stack.extend(x.named_children)
        return False

    def has_operators(self, v: Any, depth: int = 0) -> bool:
        """Whether ``v`` is an object whose class, a base or a member object's class declares an operator or a
        conversion function."""
        if not isinstance(v, V.Obj) or depth > 8:
            return False
        sd = objects.struct_of(self, v.struct)
        if sd is not None and objects.declared_operator(self, sd, lambda o: True) is not None:
            return True
        return any(self.has_operators(f, depth + 1) for _, f in v.fields)

    def index_effects(self, idx: Any) -> None:
        """An index whose element the reading does not follow, read for its calls, stores and increments
        (``a[i++]``, ``a[(f(), 0)]``) when it has any: C++ evaluates it, and dropping them would leave ``i`` its old
        value (an array declared with an initializer, ``uint32_t a[2] = {}``, is such an array)."""
        if idx is not None and self.issues(idx):
            for c in idx.named_children:
                if c.type != "comment":
                    self.expr(c)

    def size_of(self, n: Any) -> V.Value:
        """``sizeof(T)`` of a fixed-width type, or of a type parameter bound to one (``TYPE_SIZES``); ``sizeof...(P)``
        of a pack the reading binds, its element count."""
        if any(c.type == "..." for c in n.children):
            name = next((c.text.decode() for c in n.named_children if c.type in ("identifier", "type_identifier")), "")
            pack = self.lookup(name) if name else None
            if isinstance(pack, V.Pack):
                return V.const(len(pack.items))
            return V.Opaque(f"sizeof... of a pack not followed: {self.text(n)}")
        inner = n.child_by_field_name("type") or n.child_by_field_name("value")
        text = "".join(inner.text.decode().split()).strip("()") if inner is not None else ""
        text = text.removeprefix("std::").removeprefix("const")
        bound = self.lookup(text) if text.isidentifier() else None
        if isinstance(bound, V.TypeName):
            text = bound.name
        if text in TYPE_SIZES:
            return V.const(TYPE_SIZES[text])
        return V.Opaque(self.text(n))

    def specialization(self, bare: str, targs: list[Any], n: Any) -> tuple[Any, Unit] | None:
        """The explicit specialization of function template ``bare`` (``template <> uint32_t g<2>() { ... }``) a call
        with template arguments ``targs`` names, or None for the primary template (no specialization's arguments
        equal the call's). Refused by name when an argument of the call or of a specialization is not a number, an
        enumerator or a type the reading tells apart (``uint32_t`` and ``unsigned long`` are one type on the RISC)."""
        specs = {id(v[0]): v for k, v in self.prog.functions.items()
                 if "/" not in k and "::" not in k and k.split("<", 1)[0] == bare and "<" in k}
        if not specs:
            return None
        want = [self.template_key(a) for a in targs]
        hits = []
        for fn, unit in specs.values():
            d = function_declarator(next((x for x in fn.named_children if x.type == "function_definition"), fn))
            t = d.child_by_field_name("declarator") if d is not None else None
            args = t.child_by_field_name("arguments") if t is not None and t.type == "template_function" else None
            saved, self.unit = self.unit, unit
            try:
                got = [self.template_key(a) for a in (args.named_children if args is not None else ())
                       if a.type != "comment"]
            finally:
                self.unit = saved
            same = _same_template_args(want, got)
            if same is None:
                self.refuse("call of a function template with explicit specializations not resolved", n,
                            f"{bare}<{', '.join(self.text(a) for a in targs)}> against the specialization at "
                            f"{unit.file}:{fn.start_point[0] + 1}: template arguments the reading does not tell apart")
            if same:
                hits.append((fn, unit))
        return hits[0] if len(hits) == 1 else None

    def template_key(self, a: Any) -> tuple[str, Any] | None:
        """A template argument as ``specialization`` compares it: ``("n", value)`` of a number, ``("e", name)`` of an
        enumerator, ``("t", text)`` of a type; None when it is none of those statically."""
        v = self.template_value(a) if a.type == "type_descriptor" else self.expr(a)
        if isinstance(v, V.Sym) and v.is_const:
            return ("n", v.const)
        if isinstance(v, V.EnumConst):
            return ("e", v.name)
        if isinstance(v, V.TypeName):
            return ("t", v.name)
        if isinstance(v, V.TypeInst) and not v.args:
            return ("t", v.name)
        if a.type == "type_descriptor":
            return ("t", "".join(a.text.decode().replace("std::", "").split()))
        return None

    def not_a_template(self, t: Any, n: Any) -> None:
        """Refuses ``t`` (a ``template_type`` or ``template_function`` node, ``k<...>``) whose name is a variable
        holding a number, not a template: tree-sitter, which does not know which names are templates, reads the
        comparisons ``k < P<2>::v`` and ``a < b > (c)`` as ``k<P<2>>::v`` and a call of ``a<b>``, where C++ compares
        (the refusal named the template as not defined)."""
        name_node = t.child_by_field_name("name")
        name = name_node.text.decode() if name_node is not None else ""
        if not name.isidentifier() or name in self.prog.functions or name in self.prog.structs or \
                name in self.prog.var_templates or not isinstance(self.lookup(name), (V.Sym, V.Opaque)):
            return
        self.refuse("comparison the parser reads as a template argument list", n,
                    f"{self.text(n)}: {name} is a variable, not a template; C++ compares it (a comparison in "
                    "parentheses is read)")

    def unaliased(self, name: str, n: Any) -> str:
        """``name`` as written (``n::f``, ``n::K``) with the namespace alias its first name is replaced by the
        alias's target (``namespace n = a;``: ``a::f``), again while the target's first name is an alias. Refused by
        name: an alias of several meanings (``ns_aliases``), or one named inside a qualification (``x::n::f``:
        which ``n`` that is depends on the namespace ``x``'s aliases, which the reading does not scope)."""
        parts = name.split("::")
        seen: set[str] = set()
        while len(parts) > 1 and parts[0] in self.ns_aliases:
            target = self.ns_aliases[parts[0]]
            if target is None or parts[0] in seen:
                self.refuse("namespace alias of several meanings", n,
                            f"{parts[0]} in {name}: aliases of different namespaces, an alias and a namespace, or "
                            "aliases of each other; which C++ finds depends on the scopes where it is named")
            seen.add(parts[0])
            parts = [*target.split("::"), *parts[1:]]
        # an inner name that is an alias of exactly the namespace it stands for there (``x::c`` after ``namespace c
        # = x::c;``) names that namespace whichever C++ finds
        inner = next((p for i, p in enumerate(parts[1:-1], 1) if p in self.ns_aliases
                      and (self.ns_aliases[p] is None
                           or alias_free(self.ns_aliases, str(self.ns_aliases[p])) != "::".join(parts[:i + 1]))),
                     None)
        if inner is not None:
            self.refuse("namespace alias inside a qualification", n,
                        f"{inner} in {name}: which alias that is depends on the enclosing namespace's aliases, which "
                        "the reading does not scope")
        return "::".join(parts)

    def qualified(self, n: Any) -> V.Value:
        tail = n.child_by_field_name("name")
        if tail is not None and tail.type == "template_function":
            return objects.variable_template(self, tail)  # ``std::is_same_v<A, B>``
        if "".join(n.text.decode().split()) == "std::nullopt":
            return V.Optional(None)
        scope = n.child_by_field_name("scope")
        if scope is not None and scope.type == "template_type":
            self.not_a_template(scope, n)
            # ``is_accumulate<T>::value``: a trait's value (objects.trait_value)
            tv = self.template_value(scope)
            if isinstance(tv, V.TypeInst):
                return objects.trait_value(self, tv, n.child_by_field_name("name").text.decode(), n)
        text = self.unaliased(n.text.decode().replace(" ", ""), n)
        parts = text.split("::")
        last = parts[-1]
        if "::".join(parts[:-1]) in CONSTANT_NAMESPACES and last in DEVICE_CONSTANTS:
            return V.const(DEVICE_CONSTANTS[last])
        if parts[1:] == ["DSpec", "is_interleaved"]:
            # an accessor's distribution: every tensor of a host description is interleaved (pages by index;
            # sharded tensors are refused as globally allocated buffers)
            ty = self.lookup(parts[0])
            if isinstance(ty, V.TypeOf) and isinstance(ty.value, V.Accessor):
                return V.const(1)
        if len(parts) >= 2 and self.type_aliases.get(parts[-2], parts[-2]) == "Dst" and last[:1] == "D" and \
                last[1:].isdigit():
            # kernel_lib's DEST slots, ``enum class Dst : uint32_t { D0 = 0, ..., D15 = 15 }`` (eltwise/api/chain.hpp:425)
            return V.const(int(last[1:]))
        if len(parts) >= 2 and parts[-2] == "CBIndex" and last.startswith("c_") and last[2:].isdigit():
            return V.const(int(last[2:]))
        if parts[0] == "args" and len(parts) == 2:
            return self.runtime_arg(last, n)
        if len(parts) >= 2:
            owner = self.lookup(parts[-2]) if parts[-2].isidentifier() else None
            sd = objects.struct_of(self, owner.name) if isinstance(owner, V.TypeInst) else None
            if isinstance(owner, V.TypeInst) and sd is not None:
                return objects.static_member(self, sd, owner.args, last, n)
            sd = objects.struct_of(self, "::".join(parts[:-1])) if owner is None and "<" not in text else None
            if sd is not None and sd.template_params is None:
                # ``S::v`` of a struct (not a template) the kernel or a followed header defines
                got = objects.static_member(self, sd, (), last, n)
                if not isinstance(got, V.Opaque):
                    return got
        if parts[0] == "scratch" and len(parts) == 2:
            return self.scratchpad(last, n)
        if self.survey and parts[0] in ("dfb", "sem") and len(parts) == 2:
            return V.Cb(0) if parts[0] == "dfb" else V.SemAddr(0)
        if parts[0] == "dfb" and len(parts) == 2:
            # the buffer the kernel's dfb_bindings name for the accessor, else the one of its own name
            last = self.kernel.dfb_bindings.get(last, last)
            if last not in self.buf_names:
                self.refuse("circular buffer the host does not declare", n,
                            f"{last}: no buffer of that name, and no dfb_bindings entry binds the accessor to one")
            return V.Cb(self.buf_names[last])
        if parts[0] == "tensor" and len(parts) == 2 and not self.survey:
            # a named tensor token (experimental/kernel_args.h): TensorAccessor(tensor::src) is the accessor of the
            # host tensor of that name (or the one the kernel's tensor_bindings name), which the JIT binds as it
            # binds named runtime args
            last = self.kernel.tensor_bindings.get(last, last)
            if last not in self.tensor_names:
                self.refuse("tensor the host does not declare", n, last)
            return V.TensorAddr(last)
        if parts[0] == "sem" and len(parts) == 2:
            if last not in self.sem_names:
                self.refuse("semaphore the host does not declare", n, last)
            return V.SemAddr(self.sem_names.index(last))
        if len(parts) >= 2:
            v = self.namespace_variable(text)
            if v is not None:
                return v
        if text in self.prog.functions:
            return self.function(text)
        if last in self.prog.functions:
            return self.function(last)
        v = self.lookup(last)
        if v is not None and len(parts) >= 2 and (parts[-2] in self.prog.enums or "" not in self.namespaces_of.get(
                last, {""}) or not any(last in sc for sc in (self.scopes[0], *(f for _, f in self.this_stack[-1:])))):
            # a qualified name is not the bare name's variable: not a local one (C++ names none by a qualification),
            # nor one only other namespaces declare (``namespace_variable`` found none in the qualification's; a
            # global one may be a header's included inside a namespace, which the reading does not know), nor for an
            # enum class's enumerator (``a::E::K1`` was read as a variable ``K1`` of another namespace)
            v = None
        if v is not None:
            return v
        if len(parts) >= 2 and parts[-2] not in self.prog.enums and self.prog.unscoped.get(last) is not None:
            # an unscoped enumerator named by its namespace (``dspf2d::kBlkIndices``,
            # dispatch_fabric2d_kernel_interface.hpp:182-183): its value, as by its bare name (enums.py)
            return V.const(self.prog.unscoped[last])
        if len(parts) >= 2 and (not parts[-1][:1].islower() or parts[-2] in self.prog.enums):
            return V.EnumConst.of(text)  # Enum::NAME: comparable with another enumerator, not a number
        return V.Opaque(f"{text} is not defined in the kernel or a followed header")

    def namespace_variable(self, text: str) -> V.Value | None:
        """The namespace-scope variable ``text`` names (``a::K``, ``::K``, ``::a::K``; ``a::K`` also ``x::a::K`` when
        no other namespace ending in ``a`` declares ``K``), or None."""
        glob = self.scopes[0]
        if text in self.qualified_names:
            return glob[text]
        if text.startswith("::"):  # ``::a::K`` is ``a::K`` of the global namespace's ``a`` alone
            return glob[text[2:]] if "::" in text[2:] and text[2:] in self.qualified_names else None
        hits = [k for k in self.qualified_names if k.endswith(f"::{text}")]
        return glob[hits[0]] if len(hits) == 1 else None

    def function(self, name: str) -> V.Value:
        fn, unit = self.prog.functions[name]
        return self.function_of(fn, unit, name)

    def function_of(self, fn: Any, unit: Unit, name: str, this: Any = None) -> V.Function:
        """The function (or method, or constructor) definition ``fn`` of ``unit`` as a value to inline; default
        arguments its forward declaration gives (``cpp.Program.declared``) are added to its own."""
        tparams: tuple[str, ...] = ()
        tdefaults: dict[str, Any] = {}
        ttypes: tuple[str, ...] = ()
        variadic: frozenset[str] = frozenset()
        if fn.type == "template_declaration":
            plist = fn.child_by_field_name("parameters")
            tparams = tuple(self.template_param_name(p) for p in plist.named_children) if plist is not None else ()
            variadic = frozenset(self.template_param_name(p) for p in (plist.named_children if plist is not None
                                                                         else ()) if p.type.startswith("variadic_"))
            ttypes = tuple(self.type_name(p.child_by_field_name("type")) if not p.type.endswith(
                "type_parameter_declaration") else "" for p in plist.named_children) if plist is not None else ()
            tdefaults = self.defaults(plist, tparams)
            fn = next(x for x in fn.named_children if x.type == "function_definition")
        d = function_declarator(fn)
        plist = d.child_by_field_name("parameters") if d is not None else None
        params = self.params(plist)
        ptypes = tuple(self.type_name(c.child_by_field_name("type")) for c in plist.named_children
                       if c.type.endswith("parameter_declaration")) if plist is not None else ()
        pdecls = tuple(getattr(c.child_by_field_name("declarator"), "type", "") for c in plist.named_children
                       if c.type.endswith("parameter_declaration")) if plist is not None else ()
        defaults = self.defaults(plist, params)
        declared = self.declared_params(fn)
        if declared is not None:
            for k, v in self.defaults(declared, params).items():
                defaults.setdefault(k, v)
        if tparams:
            from verispatial.frontends.ttmetal.cpp import _arity, _function_name

            tdecl = self.prog.declared.get(f"template {_function_name(fn)}/{_arity(fn)}")
            if tdecl is not None:
                for k, v in self.defaults(tdecl[0], tparams).items():
                    tdefaults.setdefault(k, v)
        packs = (_param_packs(plist, variadic) if plist is not None else ()) if variadic else ()
        return V.Function(name, params, tparams, fn.child_by_field_name("body"), unit.file, captures=unit,
                          defaults=defaults, template_defaults=tdefaults, param_types=ptypes, param_declarators=pdecls,
                          returns=self.type_name(fn.child_by_field_name("type")), template_param_types=ttypes,
                          this=this, variadic=variadic, param_packs=packs)

    def declared_params(self, fn: Any) -> Any:
        """The parameter list of a forward declaration of definition ``fn`` that states default arguments, if any
        (matched by bare name and parameter count)."""
        from verispatial.frontends.ttmetal.cpp import _arity, _function_name

        if fn.type == "template_declaration":
            fn = next((x for x in fn.named_children if x.type == "function_definition"), fn)
        hit = self.prog.declared.get(f"{_function_name(fn)}/{_arity(fn)}")
        return hit[0] if hit is not None else None

    def template_param_name(self, p: Any) -> str:
        """A template parameter's name: ``uint32_t N`` -> N, ``typename T = uint16_t`` -> T."""
        if p.type.endswith("type_parameter_declaration"):
            name = p.child_by_field_name("name")
            if name is None:
                name = next((c for c in p.named_children if c.type == "type_identifier"), None)
            return name.text.decode() if name is not None else ""
        return self.decl_name(p.child_by_field_name("declarator") or p) or p.text.decode().split()[-1]

    def defaults(self, plist: Any, names: tuple[str, ...]) -> dict[str, Any]:
        """The default arguments of a parameter list (``bool do_reserve = true``), by parameter name."""
        out: dict[str, Any] = {}
        if plist is None:
            return out
        for p, name in zip((c for c in plist.named_children if c.type != "comment"), names, strict=False):
            if p.type in ("optional_parameter_declaration", "optional_type_parameter_declaration"):
                dv = p.child_by_field_name("default_value") or p.child_by_field_name("default_type")
                if dv is not None:
                    out[name.lstrip("&")] = dv
        return out

    def params(self, plist: Any) -> tuple[str, ...]:
        """Parameter names; a reference parameter (``uint32_t& x``) is named ``&x``: the caller's variable takes its
        final value. A reference to const (``const bool& transpose``, compute_common.hpp:1060-1074) cannot be
        assigned by the callee, so it is a value parameter: its argument may be any expression (``true``). A function
        parameter pack (``Ts... xs``) is named ``...xs`` (``...`` alone for C's unnamed ``...``)."""
        if plist is None:
            return ()
        out = []
        for p in plist.named_children:
            if p.type in ("parameter_declaration", "optional_parameter_declaration"):
                d = p.child_by_field_name("declarator")
                const = any(x.type == "type_qualifier" and x.text == b"const" for x in p.children)
                ref = d is not None and d.type == "reference_declarator" and not d.text.startswith(b"&&") and \
                    not const
                out.append(("&" if ref else "") + self.decl_name(d))
            elif p.type == "variadic_parameter_declaration":
                # a function parameter pack (``AdditionalCBs&... additional_dfbs``, kernel_util/compute/numeric.h:168):
                # ``...NAME``, bound to a ``Pack`` of the arguments from here on
                stack, name = [p.child_by_field_name("declarator")], ""
                while stack and not name:
                    x = stack.pop()
                    if x is not None:
                        name = x.text.decode() if x.type == "identifier" else ""
                        stack.extend(reversed(x.named_children))
                out.append("..." + name)
        return tuple(out)

    def binary(self, n: Any) -> V.Value:
        op = n.child_by_field_name("operator").type
        if op in ("&&", "||", "and", "or", "==", "!=", "<", "<=", ">", ">="):
            try:
                g = self.cond(n)
            except Refused as e:  # a value, not a branch: only a use of it is refused
                if e.construct == "operator on an object":
                    raise  # a call C++ makes, not a value
                return V.Opaque(e.detail or e.construct)
            if isinstance(g, bool):
                return V.const(int(g))
            return V.LoopCond(g[0], g[1])
        a = enums.number(self, self.expr(n.child_by_field_name("left")))
        b = enums.number(self, self.expr(n.child_by_field_name("right")))
        self.no_object(a, op, n)
        self.no_object(b, op, n)
        if isinstance(a, V.ArgArray) and op in ("+", "-") and isinstance(b, (V.Sym, V.Opaque)):
            return a.plus(b if op == "+" else -b)
        if isinstance(b, V.ArgArray) and op == "+" and isinstance(a, (V.Sym, V.Opaque)):
            return b.plus(a)
        if isinstance(a, V.L1Ptr) and op in ("+", "-") and isinstance(b, (V.Sym, V.Opaque)):
            return a.plus(b if op == "+" else -b)  # an address within the buffer's pages, in units of its type
        if isinstance(b, V.L1Ptr) and op == "+" and isinstance(a, (V.Sym, V.Opaque)):
            return b.plus(a)
        if isinstance(a, V.L1Ptr) and op in ("&", "%") and isinstance(b, V.Sym) and b.is_const:
            low = self.l1_low_bits(a, b.const + 1 if op == "&" else b.const)
            if low is not None:
                return V.const(low)
        if isinstance(a, V.RemoteAddr) and op in ("+", "-") and isinstance(b, (V.Sym, V.Opaque)):
            return _noc_plus(a, b if op == "+" else -b)
        if isinstance(b, V.RemoteAddr) and op == "+" and isinstance(a, (V.Sym, V.Opaque)):
            return _noc_plus(b, a)
        if isinstance(a, V.SemAddr) and op == "+":
            return V.Opaque(f"an address past a semaphore: {self.text(n)}")
        bounded = self.ranged(op, a, b, n)
        if bounded is not None:
            return bounded
        if op == "<<" and isinstance(a, V.Sym) and isinstance(b, V.Sym) and not a.is_const and b.is_const and \
                0 <= b.const < 32:
            return a.scaled(1 << b.const)  # a product by a power of two, affine as ``*`` by a constant is
        if not isinstance(a, V.Sym) or not isinstance(b, V.Sym):
            why = a.why if isinstance(a, V.Opaque) else b.why if isinstance(b, V.Opaque) else self.text(n)
            loads = [x for x in (a, b) if isinstance(x, V.Loaded)]
            if loads:  # computed from loaded values: still what a store of it copies from
                src = loads[0].src if all(x.src == loads[0].src for x in loads) else None
                return V.Loaded(why, src)
            return V.Opaque(why)
        if op == "+":
            return self.signed_overflow(a + b, n, a, b)
        if op == "-":
            return self.signed_overflow(a + (-b), n, a, b)
        if op == "*":
            if b.is_const:
                return self.signed_overflow(a.scaled(b.const), n, a, b)
            if a.is_const:
                return self.signed_overflow(b.scaled(a.const), n, a, b)
            return V.Opaque(f"a product of two variables: {self.text(n)}")
        if not (a.is_const and b.is_const):
            return V.Opaque(f"{self.text(n)} is not affine")
        if op in ("<<", ">>") and 32 <= b.const < 64 and self.wide(n.child_by_field_name("left")):
            # a 64-bit left operand shifts by up to 63 (C++ [expr.shift]: undefined only from the width of the
            # promoted left operand on): ``1ull << 32``, exact as ``+ - *`` of such values are (``wide``)
            if not 0 <= a.const < 1 << 64 or (op == "<<" and a.const << b.const >= 1 << 64):
                return V.Opaque(f"{self.text(n)}: a 64-bit shift of a value below 0 or past 64 bits (64-bit "
                                "arithmetic not followed)")
            return V.const(a.const << b.const if op == "<<" else a.const >> b.const)
        if not (_u32(a.const) and _u32(b.const)) and self.wide(n):
            return V.Opaque(f"{self.text(n)}: a 64-bit operand past 32 bits (64-bit arithmetic not followed)")
        r = _fold(op, a.const, b.const)
        return V.Opaque(f"{self.text(n)}" + (f": {r}" if isinstance(r, str) else "")) if not isinstance(
            r, int) else V.const(r)

    def ranged(self, op: str, a: V.Value, b: V.Value, n: Any) -> V.Value | None:
        """``a OP b`` bounded where it is not affine: a loop index (or a number bounded already, ``V.Ranged``)
        divided, reduced, masked or shifted by a constant (``i / 2``, ``i % 32``, ``i & 511``, ``i >> 1``), or such a
        number in a sum, a difference or a product by a constant. Its bounds are the operands' over every value of
        the open loops and trips (``bounds``): ``[lo / c, hi / c]``; for ``% c``, ``[lo % c, hi % c]`` when no
        multiple of ``c`` lies between, else ``[0, c - 1]``; for ``& m``, ``[0, min(hi, m)]``. The operands of the
        non-affine operators must lie in ``[0, 2**31)``, where C++'s signed and unsigned words agree and nothing
        wraps; a result past that, a divisor or mask not a constant, a term not bounded give a value not followed.
        None where the operands are two numbers the affine reading takes (or not numbers at all)."""
        if not all(isinstance(x, (V.Sym, V.Ranged)) for x in (a, b)):
            return None
        if not (isinstance(a, V.Ranged) or isinstance(b, V.Ranged)) and (
                op not in ("/", "%", "&", ">>") or not isinstance(a, V.Sym) or a.is_const):
            return None
        word = 1 << 31
        why = f"{self.text(n)} is not affine"

        def span(x: V.Sym | V.Ranged) -> tuple[int, int] | None:
            if isinstance(x, V.Ranged):
                return x.lo, x.hi
            lo, hi = self.bounds(x)
            return None if lo is None or hi is None else (lo, hi)

        sa, sb = span(a), span(b)  # type: ignore[arg-type]
        if sa is None or sb is None:
            return V.Opaque(f"{why}, and a term of it is not bounded")
        (alo, ahi), (blo, bhi) = sa, sb
        c = b.const if isinstance(b, V.Sym) and b.is_const else None
        lo: int
        hi: int
        if op in ("+", "-"):
            lo, hi = (alo + blo, ahi + bhi) if op == "+" else (alo - bhi, ahi - blo)
        elif op == "*" and (c is not None or (isinstance(a, V.Sym) and a.is_const)):
            k = c if c is not None else a.const  # type: ignore[union-attr]
            lo, hi = (min(alo * k, ahi * k), max(alo * k, ahi * k)) if c is not None else \
                (min(blo * k, bhi * k), max(blo * k, bhi * k))
        elif op in ("/", "%", "&", ">>", "<<") and c is not None and 0 <= alo and ahi < word:
            if op == "/" and c > 0:
                lo, hi = alo // c, ahi // c
            elif op == "%" and c > 0:
                lo, hi = (alo % c, ahi % c) if alo // c == ahi // c else (0, min(c - 1, ahi))
            elif op == "&" and 0 <= c < word:
                lo, hi = 0, min(ahi, c)
            elif op in (">>", "<<") and 0 <= c < 32:
                lo, hi = (alo >> c, ahi >> c) if op == ">>" else (alo << c, ahi << c)
            else:
                return V.Opaque(f"{why}: {op} {c} not bounded")
        else:
            return V.Opaque(f"{why}: not bounded (an operand below 0 or past the word, or not a constant)")
        if not -word <= lo <= hi < word:
            return V.Opaque(f"{why}: bounds [{lo}, {hi}] past the signed 32-bit word")
        step, loop = _dense(op, a, b, c)
        return V.Ranged(f"{why}: bounded to [{lo}, {hi}]", lo, hi, step, loop)

    def l1_low_bits(self, ptr: V.L1Ptr, m: int) -> int | None:
        """Address ``ptr`` modulo ``m`` (``a & (m - 1)``, ``a % m``) where that is one number for every loop index and
        trip value, else None. The memory map puts every buffer at a multiple of the target's ``alignment``
        (``ir.Target.alignment``: 16 B on Wormhole and Blackhole, the L1 NoC alignment, noc_parameters.h's
        ``L1_ALIGNMENT``; ``validate`` checks it), so for ``m`` a power of two dividing it the address's low bits are
        those of its place in the ring: the pages the pointer moved (``origin`` modulo the ring, times the page size)
        plus its offset. ``tt_memmove``'s choice of a NoC copy when source and destination agree modulo 16 B (ttnn
        0.81.1 ``ttnn/operations/data_movement/common/kernels/common.hpp:211, 237``)."""
        align = self.host.target.alignment
        if m < 1 or m & (m - 1) or align % m or not isinstance(ptr.offset, V.Sym) or \
                not isinstance(ptr.origin, V.Sym) or ptr.cb not in self.cb_index:
            return None
        b = self.cb_index[ptr.cb]
        if b.entry_size % m == 0:
            pos = 0
        elif ptr.origin.is_const:
            pos = (ptr.origin.const % b.entries) * b.entry_size
        else:
            return None
        off = ptr.offset
        if any(c % m for _, c in off.loops) or (off.trip is not None and off.trip[1] % m):
            return None
        return (pos + off.const) % m

    def object_assignment(self, lhs: Any, rhs: Any, n: Any) -> None:
        """Refuse ``x = y`` where C++ calls code of an object's class: its copy assignment operator declared by the
        class (``operator=``), or a conversion of a value that is not an object of the class into one (a converting
        constructor, then the assignment). A member-wise copy of two objects of one class with no ``operator=``
        declared is what the reading does."""
        cur = self.lookup(lhs.text.decode()) if lhs.type == "identifier" else None
        for v in (cur, rhs):
            if isinstance(v, V.Obj):
                sd = objects.struct_of(self, v.struct)
                if sd is not None and any(o.startswith("operator=") for o in sd.operators):
                    self.no_object(v, "=", n)
        if isinstance(cur, V.Obj) and not isinstance(rhs, V.Obj):
            # a value the reading holds as no object (a number, or one not followed: a call's result it could not
            # build) assigned to an object: a converting constructor would run first; with none, a copy of the class
            # (``topology = derive_interval(...)``, kda's reader_select_final_carry.cpp:67)
            sd = objects.struct_of(self, cur.struct)
            if sd is not None and any(objects.converts_from_one(c, sd) for c in sd.ctors):
                self.no_object(cur, "=", n)

    def assignment(self, n: Any) -> V.Value:
        lhs = n.child_by_field_name("left")
        op = n.child_by_field_name("operator").type
        rhs = self.expr(n.child_by_field_name("right"))
        if op == "=":
            self.object_assignment(lhs, rhs, n)
        if op != "=":
            cur = self.expr(lhs)
            self.no_object(cur, op, n)
            self.no_object(rhs, op, n)
            if isinstance(cur, V.ArgArray):
                # ``rt_args += n``: an address among the runtime args moves
                rhs = cur.plus(rhs if op == "+=" else -rhs) if op in ("+=", "-=") and isinstance(
                    rhs, (V.Sym, V.Opaque)) else V.Opaque(f"{self.text(n)}: arithmetic on a runtime arg address")
            elif isinstance(cur, V.L1Ptr):
                # ``l1_write_addr += tile_bytes``: the address moves; any other arithmetic on it is not followed
                rhs = cur.plus(rhs if op == "+=" else -rhs) if op in ("+=", "-=") and isinstance(
                    rhs, (V.Sym, V.Opaque)) else V.Opaque(f"{self.text(n)}: arithmetic on an L1 address")
            elif isinstance(cur, V.RemoteAddr):
                rhs = _noc_plus(cur, rhs if op == "+=" else -rhs) if op in ("+=", "-=") and isinstance(
                    rhs, (V.Sym, V.Opaque)) else V.Opaque(f"{self.text(n)}: arithmetic on a NoC address")
            elif isinstance(cur, V.Sym) and isinstance(rhs, V.Sym):
                base = op[:-1]
                rv = rhs
                if base == "+":
                    rhs = cur + rhs
                elif base == "-":
                    rhs = cur + (-rhs)
                elif base == "*" and rhs.is_const:
                    rhs = cur.scaled(rhs.const)
                elif cur.is_const and rhs.is_const and isinstance(r := _fold(base, cur.const, rhs.const), int):
                    rhs = V.const(r)
                else:
                    rhs = V.Opaque(self.text(n))
                if base in ("+", "-", "*") and self.int_kind(lhs) == "s32" and \
                        self.int_kind(n.child_by_field_name("right")) == "s32":
                    rhs = self.signed_overflow(rhs, n, cur, rv)  # ``k += 2`` of two ints: int arithmetic
            else:
                rhs = V.Opaque(self.text(n))
        return self.store(lhs, rhs, n)

    def store(self, lhs: Any, rhs: Any, n: Any) -> Any:
        """Store ``rhs`` into place ``lhs`` (statement ``n``: an assignment, or an increment read as one): a variable,
        a struct field the reading holds, a semaphore word, a buffer's page through an address it follows, the
        kernel's own words; anything else is refused by name, never dropped. Returns the value stored."""
        while lhs.type == "parenthesized_expression" and lhs.named_child_count == 1:
            lhs = lhs.named_children[0]
        if lhs.type == "identifier":
            self.assign(lhs.text.decode(), rhs, n)
            return self.lookup(lhs.text.decode())  # converted to a narrow variable's type
        return self.store_place(lhs, rhs, n)

    def store_place(self, lhs: Any, rhs: Any, n: Any) -> V.Value:
        """The store of ``rhs`` into place ``lhs`` (not a plain variable) by ``n``, an assignment or an increment
        (``p[0]++``): into a struct the reading follows, a semaphore word, a buffer's page, the kernel's own words, or
        refused by name; a store the reading cannot place is never dropped. Returns the value stored."""
        stored = self.store_field(lhs, rhs, n)
        if stored is not None:
            return stored
        if lhs.type == "pointer_expression" and lhs.children[0].type == "*":
            target = self.expr(lhs.child_by_field_name("argument"))
            if isinstance(target, V.ArgArray):
                # the reading gives every later read of the arg the host's value: a kernel changing its args is not
                self.refuse("store into a runtime arg", n, self.text(n))
            if isinstance(target, V.SemAddr):
                # a semaphore word written through a volatile pointer: a local store, as noc_semaphore_set
                self.sem_set(target.sem, rhs, n)
                return rhs
            if isinstance(target, V.L1Ptr):
                self.store_into(target, n, rhs, target)
            else:
                self.unnamed_store(target, n, lhs.child_by_field_name("argument"))
            return rhs
        if lhs.type == "field_expression":
            # a field the reading does not hold as a struct value (store_field said None)
            if self.own_variable(lhs):
                return rhs  # of the kernel's own variable (a union, an array of structs): no byte a transfer reads
            obj = self.expr(lhs.child_by_field_name("argument"))
            if isinstance(obj, V.ArgArray):
                self.refuse("store into a runtime arg", n, self.text(n))  # a field of a struct laid over the args
            if isinstance(obj, (V.L1Ptr, V.SemAddr)):
                # a struct laid over a buffer's pages or a word: its layout is not followed, so neither is the store
                self.refuse("plain store into a struct field in L1", n, self.text(n))
            self.unnamed_store(obj, n)
            return rhs
        if lhs.type == "subscript_expression" and self.local_store(lhs, rhs, n):
            return rhs
        if lhs.type == "subscript_expression":
            base = self.expr(lhs.child_by_field_name("argument"))
            if isinstance(base, V.ArgArray):
                self.refuse("store into a runtime arg", n, self.text(n))
            if isinstance(base, V.SemAddr):
                idx = lhs.child_by_field_name("indices") or lhs.child_by_field_name("index")
                iv = self.expr(idx.named_children[0]) if idx is not None and idx.named_child_count else None
                if isinstance(iv, V.Sym) and iv.is_const and iv.const == 0:
                    self.sem_set(base.sem, rhs, n)
                    return rhs
                # get_semaphore(id) is the base plus id * L1_ALIGNMENT (dataflow_api.h:1689-1691): sem[4] is the next
                # semaphore's word, sem[1] a byte of this one's slot; as *(sem + k) is, refused, never dropped
                self.refuse("plain store through a pointer not followed", n,
                            f"{self.text(n)}: an address past a semaphore: {self.text(lhs)}")
            if isinstance(base, V.L1Ptr):
                idx = lhs.child_by_field_name("indices") or lhs.child_by_field_name("index")
                i: Any = None
                if idx is not None and idx.named_child_count == 1:
                    try:
                        i = self.expr(idx.named_children[0])
                    except Refused:  # an index the reading cannot evaluate: the store's word is not followed
                        if self.issues(idx):
                            raise  # its calls or stores would be dropped with it
                # the store's bytes are at the base plus the index, never the base's alone (p[512] is past the page)
                self.store_into(base, n, rhs, base.plus(i if isinstance(i, (V.Sym, V.Opaque)) else
                                                        V.Opaque(f"its index {self.text(idx)}")))
            else:
                self.index_effects(lhs.child_by_field_name("indices") or lhs.child_by_field_name("index"))
                self.unnamed_store(base, n, lhs.child_by_field_name("argument"))
            return rhs
        # any other place (a qualified name, a cast): a store the reading cannot place is never dropped
        self.refuse("store into a place not followed", n, f"{self.text(n)}: {lhs.type}")

    def own_variable(self, lhs: Any) -> bool:
        """Whether place ``lhs`` (``v.f``, ``a[i].f``, ``v.in.f``: fields with ``.`` and subscripts only) lies in a
        variable the kernel declared by value (``T v;``, ``T a[N];``: its own stack words), not through a pointer or a
        reference (``T& h = *p`` may name any L1)."""
        root, levels = lhs, 0
        while root.type in ("field_expression", "subscript_expression", "parenthesized_expression"):
            if root.type == "field_expression" and root.children[1].type == "->":
                return False
            levels += root.type == "subscript_expression"
            root = root.child_by_field_name("argument") if root.type != "parenthesized_expression" else (
                root.named_children[0] if root.named_child_count == 1 else root)
            if root.type == "parenthesized_expression" and root.named_child_count != 1:
                return False
        if root.type != "identifier":
            return False
        name = root.text.decode()
        dims = self.local_array_dims(name)
        if dims:
            return levels <= dims  # past its dimensions, a subscript goes through an element (a pointer)
        scope = self.declaring_scope(name)
        # a variable of the kernel's by value; a subscript in the place indexes a member the reading does not type
        # (an array member, or a pointer one whose element may be any L1): not followed
        return scope is not None and name + _TYPE_KEY in scope and not levels

    def declaring_scope(self, name: str) -> dict[str, V.Value] | None:
        """The innermost scope declaring ``name`` (its value, or a local array's dimensions before its value)."""
        return next((sc for sc in reversed(self.scopes) if name in sc or name + _DIMS_KEY in sc), None)

    def local_array_dims(self, name: str) -> int:
        """The dimensions of the local array ``name`` in scope (``_array_dims``), 0 where the nearest declaration of
        ``name`` is not one."""
        scope = self.declaring_scope(name)
        dims = scope.get(name + _DIMS_KEY) if scope is not None else None
        return dims.const if isinstance(dims, V.Sym) else 0

    def store_field(self, lhs: Any, value: Any, n: Any) -> Any:
        """A store into a field of a struct the reading follows: ``s.a = v`` (also ``s.in.a``, a reference
        parameter's ``t.a``) gives the variable a new value with the field changed, ``this->a = v`` changes the
        object's field in a method; the value is converted to a narrow field's type. Returns the value stored, or
        None when ``lhs`` is not a field of such a struct (a field through a pointer into L1: memory the
        choreography does not name). A field the struct does not declare, or a struct value not held by a variable,
        is refused (``store into a field not followed``): a dropped store would leave the old value to be read."""
        if lhs.type != "field_expression":
            return None
        base, field = lhs.child_by_field_name("argument"), lhs.child_by_field_name("field").text.decode()
        arrow = lhs.children[1].type == "->"
        if arrow and base.type == "this" and self.this_stack:
            sd, fields = self.this_stack[-1]
            if field not in fields:
                self.refuse("store into a field not followed", n, f"{self.text(lhs)}: no field {field}")
            fields[field] = self._field_value(sd, field, value)
            return fields[field]
        if arrow:
            return None
        obj = self.lookup(base.text.decode()) if base.type == "identifier" else \
            self.expr(base) if base.type == "field_expression" else None
        if not isinstance(obj, V.Obj):
            return None
        if field not in dict(obj.fields):
            self.refuse("store into a field not followed", n, f"{self.text(lhs)}: {obj.struct} has no field {field}")
        stored = self._field_value(objects.struct_of(self, obj.struct), field, value)
        new = V.Obj(obj.struct, tuple((k, stored if k == field else v) for k, v in obj.fields))
        if base.type == "identifier":
            self.assign(base.text.decode(), new, n)
        elif self.store_field(base, new, n) is None:
            self.refuse("store into a field not followed", n, self.text(lhs))
        return stored

    def _field_value(self, sd: Any, field: str, value: Any) -> Any:
        """``value`` as field ``field`` of struct ``sd`` holds it: converted to a narrow fixed-width type."""
        t = next((t for f, t, _ in (sd.fields if sd is not None else ()) if f == field), "")
        if sd is not None and t.isidentifier() and self.resolved(t) == t and t in self.class_type_params(sd) and \
                isinstance(value, (V.Sym, V.Ranged, V.Wide)) and not (
                    isinstance(value, V.Sym) and value.is_const and 0 <= value.const < 128):
            # a field of a class template's type parameter (``template <class T> struct W { T v; }``): which type
            # ``W<uint8_t>`` makes it is not followed, so what a store of a number holds is not (it kept 257)
            return V.Opaque(f"{sd.name}::{field}: its C++ type {t} is a template parameter the reading does not bind, "
                            "so what it holds is not known")
        return self.held_as(value, t)

    def held_as(self, value: Any, tname: str) -> Any:
        """``value`` as a variable, field or member declared of type ``tname`` holds it (``to_integer`` for a narrow
        or signed 32-bit integer type; otherwise as it is)."""
        tname = self.resolved(tname) if tname.isidentifier() else tname
        if isinstance(value, V.Obj) and (tname in TYPE_SIZES or tname == "bool"):
            # ``uint32_t v = x;``: x's conversion function runs (``operator uint32_t``)
            self.refuse_conversion(value, None, to=tname)
        return self.to_integer(value, tname) if _converts(tname) else value

    def unnamed_store(self, target: Any, n: Any, base: Any = None) -> None:
        """A store through a pointer that is no buffer's pages, semaphore word or runtime arg: into a local array of
        the kernel (``LocalOpaque``, ``LocalArray``) it changes nothing the choreography names. Through any other
        address (an ``Opaque`` value, a raw number, a name it does not know, a tensor's base address, a NoC address)
        it may land in any L1 — a page a NoC transfer or another engine reads, a semaphore word — so it is refused by
        name, never read as having no effect (moreh_dot's ``const CoreLocalMem<uint16_t> ptr(l1_addr); ptr[i] = 0``
        went unseen while ``ptr`` was not followed; until 2026-12-06 so did a store through a tensor's address, a NoC
        address or a value of any other kind the reading holds)."""
        if isinstance(target, (V.LocalOpaque, V.LocalArray)):
            return
        # the store's own subscript or ``*`` is one level; a[i][j]: an element of a, if a has two dimensions
        levels = 1 + _subscripts(base) if base is not None else 0
        while base is not None and base.type == "subscript_expression":
            base = base.child_by_field_name("argument")
        if base is not None and base.type == "identifier" and \
                0 < levels <= self.local_array_dims(base.text.decode()):
            # an element of a local array of the kernel; past its dimensions (``fs[0][0]`` of ``T* fs[1]``) the store
            # goes through an element, a pointer that may point into any L1, and is refused below
            return
        self.refuse("plain store through a pointer not followed", n,
                    f"{self.text(n)}: {target.why}" if isinstance(target, V.Opaque) else self.text(n))

    def loaded_from(self, node: Any) -> V.L1Ptr | None:
        """The buffer address the stored value ``node`` loads (``src[i]``, ``*src``, also inside a conversion:
        ``(uint16_t)src[i]``, ``f(src[i] >> 16)``), or None when it loads nothing through a pointer into a buffer's
        pages. Loads from two addresses in one value (a merge) are refused by name."""
        found: list[V.L1Ptr] = []
        todo = [node] if node is not None else []
        while todo:
            m = todo.pop()
            base = None
            if m.type == "subscript_expression":
                base = self.expr(m.child_by_field_name("argument"))
                idx = m.child_by_field_name("indices") or m.child_by_field_name("index")
                if isinstance(base, V.L1Ptr) and idx is not None and idx.named_child_count == 1:
                    found.append(base.plus(self.expr(idx.named_children[0])))
                    continue
            elif m.type == "pointer_expression" and m.children[0].type == "*":
                base = self.expr(m.child_by_field_name("argument"))
                if isinstance(base, V.L1Ptr):
                    found.append(base)
                    continue
            todo.extend(m.named_children)
        if len(found) > 1:
            self.refuse("plain store of loads from several buffer addresses", node, self.text(node))
        return found[0] if found else None

    def store_into(self, ptr: V.L1Ptr, n: Any, value: Any, at: V.L1Ptr) -> None:
        """A plain store through a pointer ``ptr`` into buffer pages, at address ``at`` (``ptr`` plus the index, its
        offset ``Opaque`` where the reading does not follow it; ``at.elem`` bytes wide): into the reserved back, a
        constant page being built (``local_fill``), or a copy of another buffer's waited front when the stored value
        is a load from it (``dst[i] = src[i]``: ``CopyTiles``, tt-metal's contributed multicast
        ``inbound_kernel.cpp:9-15``); into the waited front, an in-place change of pages another engine may read
        (refused). Every byte the store writes must lie in the page being built, at every loop index
        (``store_extent_check``)."""
        if ptr.cb in self.scratch_cbs:
            self.scratch_store(at, n)
            return
        if ptr.front:
            self.refuse("plain store into a buffer page", n, f"{self.text(n)}: into the waited front")
        src = self.loaded_from(n.child_by_field_name("right"))
        if src is None and isinstance(value, V.Loaded):  # a loaded value kept in a variable first
            if value.src is None:
                self.refuse("plain store of loads from several buffer addresses", n, self.text(n))
            src = value.src
        if ptr.cb in self.noc_filled and ptr.cb not in self.ringed and not self.trial and \
                self.kernel.engine != Engine.COMPUTE:
            # stores into bytes a NoC read filled, of a buffer no ring op has named: its L1 used as scratch, perhaps
            # (argmax's reader, reader_argmax_interleaved.cpp:71-86); read again so, a ring op later refuses it
            raise ScratchHint(ptr.cb, Refused("plain store into a buffer page", self.loc(n),
                                              "a page a NoC read also fills"))
        if ptr.cb in self.noc_filled and ptr.cb in self.ringed and self.kernel.engine != Engine.COMPUTE and \
                (ptr.cb not in self.fills or self.fills[ptr.cb].patch):
            # a ring's reserved tile a read filled
            self.patch_store(ptr, n, src, at)
            return
        copy = None
        if src is not None:
            if not src.front:
                refused = Refused("plain store of a load from a buffer's back pages", self.loc(n), self.text(n))
                if src.cb not in self.ringed and src.cb not in self.scratch_cbs and not self.trial and \
                        self.kernel.engine != Engine.COMPUTE:
                    raise ScratchHint(src.cb, refused)  # loads of bytes no ring names: scratch, perhaps
                raise refused
            if src.cb == ptr.cb:
                self.refuse("plain store of a buffer's page into itself", n, self.text(n))
            if self.kernel.engine == Engine.COMPUTE:
                self.refuse("plain store into a buffer page", n, "by a compute kernel")
            # the loads read the next page of the source's front past what this engine read since its pop
            self.store_extent_check(src, "copy load not from the buffer's next unread page", n)
            copy = src.cb
        self.local_fill(ptr.cb, n, copy=copy, at=at)
        # the stores build the page the FillTiles at the push fills: the next unfilled one
        self.store_extent_check(at, "plain store not into the buffer's next unfilled page", n)

    def store_extent_check(self, at: V.L1Ptr, construct: str, n: Any) -> None:
        """Refuses, as ``construct``, a plain access at ``at`` whose bytes ``[off, off + at.elem)`` are not all inside
        the one page the stores build (a store: the next unfilled page of the back; a copy's load: the next unread page
        of the front), for every loop index and trip value (``l1_check``). ``get_write_ptr`` is valid for the pages
        the ``cb_reserve_back`` before it requested only (ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/
        dataflow_api.h:309-313``): a store past them lands in a page of the ring another engine may hold, or past the
        ring. The element's size must be known (a pointer to a type of unknown size: refused).

        The constant stores of a page may reach past it into the other pages that reservation requested
        (``reserve_back(2)``, a loop over both pages, ``push_back(2)``): they are followed page by page
        (``reserved_pages``), and the push that publishes them all is a fill of all of them (``filled_by_stores``)."""
        page = self.cb_index[at.cb].entry_size
        if at.elem is None or at.elem > page:
            self.refuse(construct, n, f"{self.text(n)}: an element of "
                        + ("unknown size" if at.elem is None else f"{at.elem} B, more than a {page} B page"))
        f = self.fills.get(at.cb) if not at.front else None
        try:
            self.l1_check(at, at.front, True, 0, construct, n, within=page - at.elem + 1, width=at.elem,
                          bounded=True)
        except Refused:
            pages = self.reserved.get(at.cb, 1) if f is not None else 1
            if pages <= 1:
                raise
            # inside the pages the last reserve requested, which ``get_write_ptr`` makes writable
            # (dataflow_api.h:309-313)?
            try:
                self.l1_check(at, False, True, 0, construct, n, within=pages * page - at.elem + 1,
                              width=at.elem, bounded=True)
            except Refused:
                pass
            else:
                assert f is not None
                self.reserved_pages(f, at, n)
                return
            raise
        if f is not None and not self.trial and not self.survey:
            f.touched = _touch(f.touched, 0, tuple(self.blocks))

    def reserved_pages(self, f: _Fill, at: V.L1Ptr, n: Any) -> None:
        """Records which pages of its reservation the constant store at ``at`` touches (``_Fill.touched``) and how
        far it may reach (``_Fill.reach``), the store lying inside the reservation (``store_extent_check``): its
        byte offset from the model's place of the page being built, bounded over the open loops; a store whose
        offsets run over several pages must step by at most a page along one loop of a constant count, so that each
        page between its least and greatest offset holds one of them. Refused by name otherwise, and for a copy's
        stores (a copy of one page per push is read)."""
        page = self.cb_index[at.cb].entry_size
        pages = self.reserved.get(at.cb, 1)
        why = (f"{self.text(n)}: inside the {pages} pages of c_{at.cb} the cb_reserve_back before it requested, past "
               "the first: which of them the stores build is not followed")
        if f.copy is not None or f.patch:
            self.refuse("plain stores into more than one reserved page", n, why + " (a copy of one page per push)")
        if self.trial or self.survey:
            return
        delta = self.model_offset_bounded(at)
        lo: int | None
        hi: int | None
        if isinstance(delta, V.Ranged):
            # a bounded offset (``p[i / 2]``): its pages from its bounds, each between them holding one of its
            # values when they leave no gap of more than a page along one loop (``V.Ranged.step``)
            lo, hi = delta.lo, delta.hi
            var: str | None = delta.loop if delta.step is not None else None
            stride = delta.step if delta.step is not None else page + 1
        else:
            lo, hi = self.bounds(delta) if delta is not None else (None, None)
            if delta is None or lo is None or hi is None or delta.trip is not None:
                self.refuse("plain stores into more than one reserved page", n, why)
            var, stride = (delta.loops[0][0], abs(delta.loops[0][1])) if len(delta.loops) == 1 else (None, page + 1)
        assert at.elem is not None
        assert lo is not None
        assert hi is not None
        last = (hi + at.elem - 1) // page
        if lo // page != hi // page:
            # offsets over several pages: each page between them holds one when they step by at most a page along
            # one loop of a constant count whose iterations all build this reservation (opened since its reserve)
            loop = next((lp for lp in self.loops if lp.var == var), None) if var is not None else None
            if loop is None or not isinstance(loop.count, int) or stride > page or \
                    any(loop is x for x in self.reserve_loops.get(at.cb, ())):
                self.refuse("plain stores into more than one reserved page", n,
                            why + " (stores over several pages along several loops, one open before the reserve, or "
                            "stepping by more than a page)")
            f.spans = (*f.spans, loop)
        for k in range(lo // page, hi // page + 1):
            f.touched = _touch(f.touched, k, tuple(self.blocks))
        if last + 1 > f.reach:
            f.reach, f.reach_loc = last + 1, self.loc(n)

    def model_offset(self, ptr: V.L1Ptr) -> V.Sym | None:
        """The byte offset of write pointer ``ptr`` from the model's place of the page being built in its buffer's
        back (``l1_check``'s cases (1) and (2)): its offset less the tiles filled since, and less the pages pushed
        since it was taken unless they are whole rings. None where the reading does not follow it."""
        delta = self.model_offset_bounded(ptr)
        return delta if isinstance(delta, V.Sym) else None

    def model_offset_bounded(self, ptr: V.L1Ptr) -> V.Sym | V.Ranged | None:
        """``model_offset``, also of an offset the reading bounds (``V.Ranged``: ``p[i / 2]``), shifted likewise
        when the place it is taken from is a constant."""
        off, origin = ptr.offset, ptr.origin
        if ptr.front or not isinstance(off, (V.Sym, V.Ranged)) or not isinstance(origin, V.Sym):
            return None
        b = self.cb_index[ptr.cb]
        tile_bytes = b.entry_size // b.page_tiles
        d = self.ctr("pushed", ptr.cb) + (-origin)
        if not isinstance(d, V.Sym):
            return None
        base = self.ctr("fill", ptr.cb).scaled(tile_bytes)
        coefs = (d.const, *(c for _, c in d.loops), *((d.trip[1],) if d.trip is not None else ()))
        if not all(c % b.entries == 0 for c in coefs):
            base = d.scaled(b.entry_size) + base  # type: ignore[assignment]
        delta = off + (-base)
        return delta if isinstance(delta, (V.Sym, V.Ranged)) else None

    def patch_store(self, ptr: V.L1Ptr, n: Any, src: V.L1Ptr | None, at: V.L1Ptr | None) -> None:
        """A plain store into the tile a NoC read of this engine filled last: matmul's padding of its last K tile
        after the read (ttnn 0.81.1 ``ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0.cpp:
        74-94``: read, ``noc.async_read_barrier()``, ``pad_last_ktile``; ``kernel_helper_functions/pad_tile.hpp:91,
        108``), moreh's masks (``reader_moreh_dot.cpp:21-29``). The tile is the read's ``ReadTiles``; the stores
        change only bytes of it, which no other agent sees before the push, so they are no op of their own when:

        - the read has landed: a ``noc_async_read_barrier`` of this engine follows its last NoC read, on the path
          to the store in this iteration (``read_landed``) — else the NoC may write the tile over the store
          (``noc_async_read`` returns at issue; the data is in L1 after the barrier, dataflow_api.h);
        - the store's address, followed, lies inside the tiles the reads filled (``read_tile_check``), and so does
          a stored value loaded from the buffer's back (the same landed tiles);
        - the stores are a ``FillTiles`` of no tile (kind ``patch``) at the push or at a multicast of the back,
          whichever comes first (``filled_by_stores``, ``emit``), drained when a blocking load of the word of the
          last store (``drain_load``, same starting byte address and width) follows it; nothing else uses the buffer
          in between, and no store follows such a multicast before the next reserve.

        Refused by name otherwise."""
        if ptr.cb in self.patch_sent:
            self.refuse("plain store into a buffer page", n,
                        f"{self.text(n)}: after a multicast of the tile, which may still be reading it")
        if not self.read_landed(n):
            self.refuse("plain store into a buffer page", n,
                        f"{self.text(n)}: before the read barrier of the NoC read that fills it: the read may land "
                        "over the store")
        if at is None or not isinstance(at.offset, (V.Sym, V.Ranged)):
            why = at.offset.why if at is not None and isinstance(at.offset, V.Opaque) else "its index"
            self.refuse("L1 address at an offset not followed", n, f"{self.text(n)}: a store into a read tile: {why}")
        if src is not None and (src.front or src.cb != ptr.cb):
            self.refuse("plain store into a buffer page", n, f"{self.text(n)}: a copy into a page a NoC read fills")
        for p in (at, src):
            if p is not None:
                self.read_tile_check(p, n)
        self.local_fill(ptr.cb, n, at=at, patch=True)

    def read_tile_check(self, p: V.L1Ptr, n: Any) -> None:
        """Refuses an access at ``p`` (its element: ``p.elem`` bytes) not inside the tiles this engine's reads filled
        since ``p.cb``'s write pointer (their count a number; else the last of them), for every loop index and trip
        value (``l1_check``)."""
        b = self.cb_index[p.cb]
        tile = b.entry_size // b.page_tiles
        width = p.elem or 1
        if width > tile:
            self.refuse("plain store not into the tile a NoC read filled", n, self.text(n))
        filled = self.ctr("fill", p.cb)
        # every tile filled since the write pointer is a read's (a constant fill or copy into the page is refused):
        # with their count a number, the access may be in any of them (matmul's padded sender pads the last tile of
        # each row of its block, reader_bmm_tile_layout_in0_sender_padding_metal2.cpp:395-399); else in the last one
        back = filled.const if filled.is_const and filled.const >= 1 else 1
        self.bump("fill", p.cb, -back)
        try:
            self.l1_check(p, False, True, 0, "plain store not into the tile a NoC read filled", n,
                          within=back * tile - width + 1, width=width, bounded=True)
        finally:
            self.bump("fill", p.cb, back)

    def read_landed(self, n: Any) -> bool:
        """Whether no NoC read of this engine can be in flight here: walking back from the op being read, a
        ``ReadBarrier`` comes before any read (``ReadTiles``, ``RemoteRead``, or a loop or branch holding one) on the
        straight line, through the branches it is in and out to the kernel's start. Past the start of a loop body
        read once (no read and no barrier before here in it), the previous iteration's end comes first: the walk goes
        on before the loop, and the body is held to issue no read at all (``patch_loop_closed``, when it closes)."""
        bodies = {id(lp.body) for lp in self.loops if lp.body is not None}
        for block in reversed(self.blocks):
            for op in reversed(block.ops):
                if isinstance(op, ReadBarrier):
                    return True
                if any(isinstance(x, (ReadTiles, RemoteRead)) for x in walk_ops((op,))):
                    return False
            if id(block) in bodies and not self.trial:
                self.patch_loops.append((block, self.loc(n)))
        return True

    def patch_loop_closed(self, body: Block) -> None:
        """A loop body read once closed: a store into a read tile in it that relied on no read being in flight at
        the body's start (``read_landed``) is refused if the body issues a read, which the next iteration's store
        then follows with no barrier known between them."""
        for block, loc in self.patch_loops:
            if block is body and any(isinstance(x, (ReadTiles, RemoteRead)) for x in walk_ops(body.ops)):
                raise Refused("plain store into a buffer page", loc,
                              "before the read barrier of a NoC read later in its loop: the next iteration's store "
                              "may follow that read with no barrier")
        self.patch_loops = [(b, loc) for b, loc in self.patch_loops if b is not body]

    def scratch_store(self, ptr: V.L1Ptr, n: Any) -> None:
        """A plain store into a scratch buffer's bytes (``red_idxs[0] = max_idx``, argmax 0.81.1 :500): a
        ``ScratchAccess`` store, undrained (no ``load_blocking`` is read after it here). A stored value loaded from a
        circular buffer's pages is refused by name (a copy out of a ring into scratch is not said)."""
        src = self.loaded_from(n.child_by_field_name("right"))
        if src is not None and src.cb not in self.scratch_cbs:
            self.refuse("plain store into scratch L1 of a load from a buffer's pages", n, self.text(n))
        if src is not None:
            self.scratch_load(src, n)  # the stored value's load (``loaded_from`` reads no op)
        self.scratch_within(ptr, n)
        self.emit(ScratchAccess(ptr.cb, store=True), n)

    def scratch_load(self, ptr: V.L1Ptr, n: Any) -> None:
        """A plain load of a scratch buffer's bytes (``in_vals[i]``, argmax 0.81.1 :85) at address ``ptr``: a
        ``ScratchAccess`` load. Not emitted in trial readings, whose ops are thrown away."""
        if not self.trial:
            self.scratch_within(ptr, n, store=False)
            self.emit(ScratchAccess(ptr.cb), n)

    def scratch_within(self, ptr: V.L1Ptr, n: Any, store: bool = True) -> None:
        """Refuses a plain store at ``ptr`` (its element: ``ptr.elem`` bytes, 1 where unknown) that is not followed
        or not inside scratch buffer ``ptr.cb``'s ``entries x entry_size`` bytes at every loop index: the model takes
        the buffer's bytes as the access's (``ScratchAccess``), so a store past its end — into L1 another buffer may
        hold — would be read as private and proved (``vals[1024] = x`` of a one-tile ``uint16_t*`` buffer). A load
        (``store`` False) is refused only where its followed address is outside: it changes no byte, and argmax
        loads at an index the reading does not follow (``in_vals[i - red_dim_offset]``, 0.81.1 :85). The NoC
        transfers' bound is ``api._scratch_bytes``."""
        if isinstance(ptr.offset, V.Opaque) and not isinstance(ptr.offset, V.Ranged):
            if not store:
                return
            self.refuse("L1 address at an offset not followed", n, f"{self.text(n)}: {ptr.offset.why}")
        if self.survey:
            return
        b = self.cb_index[ptr.cb]
        lo, hi = (ptr.offset.lo, ptr.offset.hi) if isinstance(ptr.offset, V.Ranged) else self.bounds(ptr.offset)
        width, size = ptr.elem or 1, b.entry_size * b.entries
        if (lo is None or hi is None) and not store:
            return
        if lo is None or hi is None or lo < 0 or hi + width > size:
            where = f"bytes [{lo}, {hi + width})" if lo is not None and hi is not None else "an offset not bounded"
            self.refuse("scratch L1 access outside the buffer", n,
                        f"{self.text(n)}: {where} past {b.name}'s base, which holds {size} B")

    # ------------------------------------------------------------------ calls

    def call(self, n: Any) -> V.Value:
        fn = n.child_by_field_name("function")
        argnode = n.child_by_field_name("arguments")
        arg_nodes = list(argnode.named_children) if argnode is not None else []
        arg_nodes = [a for a in arg_nodes if a.type != "comment"]
        if fn.type == "field_expression":
            field = fn.child_by_field_name("field")
            raw = field.text.decode()
            method = raw.split("<", 1)[0].strip()  # obj.f<opts>(...)
            ta = field.child_by_field_name("arguments") if field.type == "template_method" else None
            mtargs = [x for x in ta.named_children if x.type != "comment"] if ta is not None else []
            target = fn.child_by_field_name("argument")
            obj = self.expr(target)
            vc = None
            if isinstance(obj, V.NocObj):
                # the call's NocOptions, evaluated (``nocopts``); ``api.method`` reads the ones each method takes
                opts = nocopts.options(self, mtargs, n)
                if opts.has(nocopts.POSTED) and method != "async_writes_flushed":
                    # acknowledged by no barrier the ops have (noc_async_write_barrier waits for non-posted acks
                    # only, wormhole noc_nonblocking_api.h:593-595)
                    self.refuse(f"posted {method}", n, f"{self.text(n)}: NocOptions::{opts.names(opts.bits)}")
                # A write on a VC of its own: async_write<CUSTOM_VC> on noc_opts.vc (api/dataflow/noc.h:417-418,
                # 449-451); set_async_write_state programs noc_opts.vc whatever its options say (:552-556;
                # NocOptVals' default is NOC_UNICAST_WRITE_VC, :104-105), which ``api.method`` keeps in the command
                # buffer's state
                if opts.has(nocopts.CUSTOM_VC) and method == "async_write":
                    vc = api.opts_vc(self, self.expr(arg_nodes[5]) if len(arg_nodes) > 5 else None, n)
            with self.on_vc(vc):
                if isinstance(obj, V.Obj):
                    return self.call_method(obj, method, target, arg_nodes, n)
                if isinstance(obj, V.Optional):
                    return objects.optional_method(self, obj, method, [self.expr(a) for a in arg_nodes], n)
                return api.method(self, obj, method, arg_nodes, n, mtargs)
        if fn.type == "lambda_expression":  # ``[&]() -> uint32_t { ... }()``, called where it is written
            lam = self.expr(fn)
            assert isinstance(lam, V.Function)
            return self.inline(lam, arg_nodes, [], n)
        targs: list[Any] = []
        last = fn
        while last.type == "qualified_identifier" and last.child_by_field_name("name") is not None:
            last = last.child_by_field_name("name")
        if last.type == "dependent_name" and last.named_child_count == 1:
            last = last.named_children[0]  # ``obj::template f<A>``: the template_function inside
        if last.type == "template_function":  # f<A, B>(...) and ns::f<A, B>(...)
            if last is fn:
                self.not_a_template(last, n)
            prefix = fn.text[: last.start_byte - fn.start_byte].decode()
            name = "".join((_TEMPLATE_KEYWORD.sub("::", prefix) + last.child_by_field_name("name").text.decode()).split())
            ta = last.child_by_field_name("arguments")
            targs = [x for x in ta.named_children if x.type != "comment"] if ta is not None else []
        else:
            name = "".join(_TEMPLATE_KEYWORD.sub("::", fn.text.decode()).split())
        name = self.unaliased(name, n)
        bare = name.rsplit("::", 1)[-1]
        spec = self.specialization(bare, targs, n) if targs else None
        if spec is not None:
            return self.inline(self.function_of(*spec, bare), arg_nodes, [], n)
        if name == "void" and len(arg_nodes) <= 1:
            # ``void()`` / ``void(x)``: a functional cast to void (a fold's empty arm, matmul_dataflow_common.hpp:408)
            if arg_nodes:
                self.expr(arg_nodes[0])
            return None
        if name in _INTEGER_SEQUENCES and bare not in self.prog.functions:
            return self.integer_sequence(name, targs, n)
        if any(a.type == "parameter_pack_expansion" for a in arg_nodes):
            return self.expanded_call(name, fn, arg_nodes, targs, n)
        if name in ("static_cast", "reinterpret_cast", "const_cast", "CoreLocalMem") or bare == "CoreLocalMem":
            v = self.expr(arg_nodes[0]) if arg_nodes else None
            if bare == "CoreLocalMem" and isinstance(v, V.L1Ptr):
                # CoreLocalMem<T>(addr): a T array at addr (api/core_local_mem.h); T defaults to uint32_t
                return v.retyped(_size_of_type(targs[0].text.decode()) if targs else 4)
            return self.cast(v, targs[0]) if targs else v
        if len(arg_nodes) == 1 and enums.is_enum(self, name) and bare not in self.prog.functions:
            return enums.converted(self, self.expr(arg_nodes[0]), name)
        if self.type_aliases.get(bare, bare) in ("DataflowBuffer", "CircularBuffer", "Semaphore", "Noc") and \
                bare not in self.prog.functions:
            return self.construct_values(self.type_aliases.get(bare, bare), [self.expr(a) for a in arg_nodes], n)
        local = self.lookup(bare) if fn.type == "identifier" else None
        this_sd = self.this_stack[-1][0] if self.this_stack else None
        if fn.type == "identifier" and local is None and this_sd is not None and bare in this_sd.methods:
            # a method of the object calling another of its own (``LocalRange{size()}``, blocked_range.h:76): on the
            # object as its fields stand, which it may change
            fields = self.this_stack[-1][1]
            result = self.call_method(V.Obj(this_sd.name, tuple((k, fields.get(k)) for k, _, _ in this_sd.fields)),
                                      bare, None, arg_nodes, n)
            if isinstance(self.this_after, V.Obj):
                fields.update(dict(self.this_after.fields))
            return result
        if isinstance(local, V.Function):
            return self.inline(local, arg_nodes, targs, n)
        if isinstance(local, V.Obj):  # a functor: ``post_reduce_op(i)`` calls its operator()
            return self.call_method(local, "operator()", fn, arg_nodes, n)
        parts = name.split("::")
        owner = objects.struct_of(self, "::".join(parts[:-1])) if len(parts) >= 2 else None
        if owner is not None and parts[-1] in owner.methods:
            # a static member function (``IterationShape::tiles(n)``, chain.hpp:159)
            vals = [self.expr(a) for a in arg_nodes]
            hit = objects.choose(self, [(m, owner.unit) for m in owner.methods[parts[-1]]], vals,
                                 self.declared_params)
            if hit is None:
                self.refuse(f"call to {owner.name}::{parts[-1]} not resolved", n,
                            f"{len(owner.methods[parts[-1]])} overloads, none or several fit")
            return self.inline(self.function_of(hit[0], owner.unit, f"{owner.name}::{parts[-1]}"), arg_nodes, targs,
                               n, vals=vals)
        sd = objects.struct_of(self, name) if bare not in self.prog.functions else None
        if sd is not None and (not targs or (sd.template_params is not None and all(
                p.type in ("type_parameter_declaration", "optional_type_parameter_declaration")
                for p in sd.template_params.named_children))):
            # a constructor call ``ReduceInputMemoryLayout(s)``; of a class template whose parameters are all types
            # (``BlockedRange<SizeT>(total, block_size)``, blocked_range.h:131-133) no value depends on them
            return objects.construct(self, sd, [self.expr(a) for a in arg_nodes], n)
        held = self.lookup(name) if name.isidentifier() else None
        cast_to = name if name in TYPE_SIZES else held.name if isinstance(held, V.TypeName) else None
        if cast_to is None and held is None and this_sd is not None and len(arg_nodes) == 1 and \
                name in self.class_type_params(this_sd):
            # ``SizeT(0)`` in a method of a class template (or a class nested in one) whose type parameter the
            # reading does not bind (blocked_range.h:56): a small non-negative number is itself in every arithmetic
            # type; others are not followed
            v = self.expr(arg_nodes[0])
            if isinstance(v, V.Sym) and v.is_const and 0 <= v.const < 128:
                return v
            return V.Opaque(f"a conversion to the class's type parameter {name}: {self.text(n)}")
        if cast_to is not None and len(arg_nodes) == 1:  # a functional cast, ``uint16_t(x)``, ``T(0)``
            if cast_to in ("float", "double"):  # its arithmetic is not the integers' (7.0f / 2 is 3.5)
                return V.Opaque(f"a floating-point value: {self.text(n)}")
            return self.to_integer(self.expr(arg_nodes[0]), cast_to)
        if name in ("std::memcpy", "memcpy", "__builtin_memcpy") and bare not in self.prog.functions:
            return self.memcpy(arg_nodes, n)
        if name == "std::get" and len(targs) == 1 and len(arg_nodes) == 1:
            # std::get<i>(t) of a tuple the reading holds as a table (api.make_tensor_accessor_args_tuple)
            t = self.expr(arg_nodes[0])
            if isinstance(t, V.Designated) and t.fields and all(k.isdigit() for k, _ in t.fields):
                t = V.Table(tuple(x for _, x in t.fields), len(t.fields))  # a std::make_tuple's elements
            if isinstance(t, V.Table):
                i = targs[0]
                return intrinsics.element(self, t, enums.number(self, self.expr(i) if i.type != "type_descriptor"
                                                                else self.template_value(i)), n)
            return V.Opaque(f"std::get of a value not followed: {self.text(n)}")
        if intrinsics.modelled(name) and bare not in self.prog.functions:  # __builtin_clz, std::optional<T>(x)
            return intrinsics.call(self, name, [self.expr(a) for a in arg_nodes], arg_nodes, n)
        if name.startswith("decltype(") and name.count("::") == 1 and name.split("::")[0][9:-1].isidentifier():
            # ``decltype(args)::next_compile_time_args_offset()``: a static member function of the variable's type
            held = self.lookup(name.split("::")[0][9:-1])
            if isinstance(held, V.AccessorArgs):
                return api.method(self, held, bare, arg_nodes, n)
        if chain.modelled(self, bare):
            here = self.blocks[-1]
            first = len(here.ops)
            chain.run(self, [self.expr(a) for a in arg_nodes], arg_nodes, n)
            self.count_ops(here.ops[first:])  # its ops were added without emit
            return None
        arity = f"/{len(arg_nodes)}"
        if "::" in name and (name + arity in self.prog.functions or name in self.prog.functions):
            # ``my::noc_async_read_barrier()`` the kernel or a followed header defines: C++ calls that function,
            # not the device API of the same bare name (which an empty definition would otherwise stand for); of
            # several definitions, the one overload resolution chooses (the table holds the last one defined)
            cands = self.definitions_named(name, bare)
            if len(cands) > 1:
                return self.overloaded(cands, arg_nodes, targs, bare, n)
            f = self.function(name + arity if name + arity in self.prog.functions else name)
            assert isinstance(f, V.Function)
            return self.inline(f, arg_nodes, targs, n)
        handler = api.FUNCTIONS.get(bare)
        if handler is not None:
            signatures.check(self, bare, arg_nodes, n)
            return handler(self, [self.expr(a) for a in arg_nodes], arg_nodes, targs, n)
        if bare in UNPACKING:
            return self.unpacking(bare, arg_nodes, n)
        if bare in ("get_absolute_logical_x", "get_relative_logical_x"):
            return V.const(self.site.x)
        if bare in ("get_absolute_logical_y", "get_relative_logical_y"):
            return V.const(self.site.y)
        if bare in ("min", "max", "std::min", "std::max") and len(arg_nodes) == 2:
            x, y = (self.expr(a) for a in arg_nodes)
            if isinstance(x, V.Sym) and isinstance(y, V.Sym) and x.is_const and y.is_const:
                return V.const((min if bare.endswith("min") else max)(x.const, y.const))
            return V.Opaque(f"{bare} of values not known statically: {self.text(n)}")
        if bare in ("PACK", "UNPACK", "MATH") and len(arg_nodes) == 1 and _is_assert(arg_nodes[0]):
            return None  # PACK(ASSERT(...)): a debug assertion on one thread, no effect on the choreography
        if bare == "PACK" and len(arg_nodes) == 1 and _is_config_llk(arg_nodes[0]):
            return None  # PACK((llk_pack_relu_config(...))): a packer register, no effect on the choreography
        inner = _unparen(arg_nodes[0]) if bare == "MATH" and len(arg_nodes) == 1 else None
        if inner is not None and inner.type == "call_expression":
            callee = inner.child_by_field_name("function").text.decode().strip()
            if callee in SFPU_INIT_MACROS:
                return None  # MATH(SFPU_UNARY_INIT_FN(...)): the SFPU's configuration, no DST tile touched
            if callee in HEADER_SFPU_OPS and callee not in self.prog.functions:
                vals = [self.expr(a) for a in inner.child_by_field_name("arguments").named_children]
                self.dst_use([vals[i] for i in HEADER_SFPU_OPS[callee] if i < len(vals)], n)
                self.emit(Compute(callee.removesuffix("_tile")), n)
                return None
        if bare in ("PACK", "UNPACK", "MATH") and len(arg_nodes) == 1 and self.thread_check(arg_nodes[0]):
            return None  # UNPACK((assert_input_dfb_size<...>(...))): a helper of the kernel's that only asserts
        if bare in PURE_QUERIES:
            return V.Opaque(f"the result of {bare}")
        if bare in IGNORED_CALLS or name in IGNORED_CALLS or bare.startswith(IGNORED_PREFIXES) or \
                bare.endswith(IGNORED_SUFFIXES):
            return V.Opaque(f"the result of {bare}")
        cands = self.definitions_named(name, bare)
        if len(cands) > 1:
            return self.overloaded(cands, arg_nodes, targs, bare, n)
        if len(cands) == 1:
            return self.inline(self.function_of(cands[0][0], cands[0][1], bare), arg_nodes, targs, n)
        key = next((k for k in (name + arity, bare + arity, name, bare) if k in self.prog.functions), None)
        if key is not None:
            f = self.function(key)
            assert isinstance(f, V.Function)
            return self.inline(f, arg_nodes, targs, n)
        if bare in SFPU_OPS or bare in SFPU_OPS_MORE:
            # an SFPU operation on DST tiles (exp_tile(dst), add_binary_tile(a, b, out)): the accumulator only
            vals = [self.expr(a) for a in arg_nodes]
            self.dst_use([vals[i] for i in SFPU_DST_ARGS.get(bare, (0,)) if i < len(vals)], n)
            self.emit(Compute(bare.removesuffix("_tile")), n)
            return None
        if bare in TOPK_DST_TILES:
            # a topk-family call: the DST tiles its LLK reads and writes, named by its arguments or not (sfpu.py)
            self.dst_use(self.topk_tiles(bare, [self.expr(a) for a in arg_nodes], n), n)
            self.emit(Compute(bare), n)
            return None
        if bare == "topk_tie_order_from_global_direction" and len(arg_nodes) == 1:
            d = self.expr(arg_nodes[0])
            if not (isinstance(d, V.Sym) and d.is_const):
                return V.Opaque(f"a tie order of a direction not known statically: {self.text(n)}")
            return V.EnumConst(tie_order_from_global_direction(d.const != 0))
        self.refuse(f"call to {bare}", n, "not modelled and not defined in the kernel or a followed header")

    def definitions_named(self, name: str, bare: str) -> list[tuple[Any, Unit]]:
        """The function definitions a call of ``name`` (as written, less template arguments: ``f``, ``ns::f``,
        ``::f``) may name: of its bare name, those of the namespace a qualification names (``::f`` the global one;
        ``c::f`` also ``x::c``'s), every one for an unqualified call (which one C++ finds depends on the scopes and
        using-directives where the call stands), every one too for a qualification naming none of their namespaces
        (a namespace alias, a struct's static member)."""
        cands = self.prog.overloads.get(bare, [])
        qual = name[: len(name) - len(bare)]
        if not qual or len(cands) < 2:
            return cands
        q = qual.strip(":")
        absolute = qual.startswith("::")

        def named(fn: Any, unit: Unit) -> bool:
            ns = self.prog.namespace_of.get((unit.file, fn.start_byte))
            return ns is not None and (ns == q or (not absolute and ns.endswith(f"::{q}")))

        return [c for c in cands if named(*c)] or cands

    def overloaded(self, cands: list[tuple[Any, Unit]], arg_nodes: list[Any], targs: list[Any], bare: str,
                   n: Any) -> V.Value | None:
        """A call of ``bare`` with several definitions ``cands`` (chain.inl:210-242's five ``input``): the one chosen
        by arity, defaults and argument types (``chosen``), inlined."""
        vals = [self.expr(a) for a in arg_nodes]
        return self.inline(self.function_of(*self.chosen(cands, vals, bare, n), bare), arg_nodes, targs, n, vals=vals)

    def chosen(self, cands: list[tuple[Any, Unit]], vals: list[V.Value], bare: str, n: Any) -> tuple[Any, Unit]:
        """The one of several definitions ``cands`` a call of ``bare`` with argument values ``vals`` selects
        (``objects.choose``: arity, defaults, enumerator and struct arguments). Refused by name when none or more
        than one fits: the last one defined is not the one C++ calls (``f(uint8_t)`` and ``f(uint32_t)`` both bind
        a number; ``a::f`` and ``b::f`` are both ``f`` after ``using namespace a;``)."""
        hit = objects.choose(self, cands, vals, self.declared_params)
        if hit is None:
            self.refuse(f"call to {bare} not resolved", n,
                        f"{len(cands)} definitions of {bare} (overloads or namespaces), none or several fit: the "
                        "reading tells them apart by arity, enumerator and struct arguments and the call's "
                        "qualification")
        return hit

    def integer_sequence(self, name: str, targs: list[Any], n: Any) -> V.Value:
        """``std::make_integer_sequence<T, N>()`` / ``std::make_index_sequence<N>()`` (<utility>): the pack ``0 ..
        N-1``, bound to ``Is...`` by a parameter ``std::integer_sequence<T, Is...>``. A length not known statically,
        or above ``MAX_PACK``, is refused by name."""
        at = _INTEGER_SEQUENCES[name]
        if len(targs) != at + 1:
            self.refuse(f"{name} without its template arguments", n, self.text(n))
        a = targs[at]
        k = enums.number(self, self.expr(a) if a.type != "type_descriptor" else self.template_value(a))
        if not (isinstance(k, V.Sym) and k.is_const and 0 <= k.const <= MAX_PACK):
            self.refuse("integer sequence of a length not known statically", n, f"{self.text(n)}: {self.text(a)}")
        return V.Pack(tuple(V.const(i) for i in range(k.const)))

    def expand(self, e: Any) -> list[V.Value]:
        """The values of pack expansion ``e`` (``pattern...``, a call's argument): ``pattern`` read once per element,
        with each pack it names bound to that element (C++ expands them in step: ``std::get<Is>(t)`` with
        ``s + Is``, matmul_dataflow_common.hpp:38-39). Refused by name: a pattern naming no pack the reading binds,
        packs of different lengths."""
        pattern = e.named_children[0]
        packs = self.packs_in(pattern)
        if not packs:
            self.refuse("pack expansion of a pack not followed", e, self.text(e))
        return self.each_element(pattern, packs, e)

    def packs_in(self, pattern: Any) -> dict[str, V.Pack]:
        """The packs the reading binds that ``pattern`` names, by name."""
        names: set[str] = set()
        stack = [pattern]
        while stack:
            x = stack.pop()
            if x.type in ("identifier", "type_identifier"):
                names.add(x.text.decode())
            stack.extend(x.named_children)
        return {k: v for k in sorted(names) if isinstance(v := self.lookup(k), V.Pack)}

    def each_element(self, pattern: Any, packs: dict[str, V.Pack], e: Any) -> list[V.Value]:
        """``pattern`` read once per element of ``packs`` (in step, first to last), each pack bound to that element.
        Packs of different lengths are refused by name."""
        lengths = {len(p.items) for p in packs.values()}
        if len(lengths) != 1:
            self.refuse("pack expansion of packs of different lengths", e,
                        ", ".join(f"{k}: {len(p.items)}" for k, p in packs.items()))
        out = []
        for i in range(lengths.pop()):
            self.scopes.append({k: p.items[i] for k, p in packs.items()})
            try:
                out.append(self.expr(pattern))
            finally:
                self.scopes.pop()
        return out

    def fold(self, n: Any) -> V.Value:
        """A fold expression over a pack the reading binds ([expr.prim.fold]): ``(E, ...)`` reads ``E`` once per
        element, first to last (kernel_util/compute/numeric.h:106's ``(accumulate_cb(dfb_additional), ...)``,
        matmul_dataflow_common.hpp:404's write to the chunk ``chunk_idx`` names); ``&&`` / ``||`` likewise, stopping
        where C++ short-circuits, each element a number; ``+ * & | ^`` and the other arithmetic operators combine the
        elements' values (a number, or not followed), their operands issuing no op (C++ does not order them). Refused
        by name: a fold over no pack the reading binds (once dropped whole, with the ops of its calls), ``&&`` / ``||``
        on a value not known statically before the last element, an arithmetic fold whose operands issue ops, an
        empty fold of an operator with no empty value."""
        operands = [c for c in n.named_children if c.type != "comment"]
        op = next((c.type for c in n.children if not c.is_named and c.type not in ("(", ")", "...")), "")
        with_packs = [(c, self.packs_in(c)) for c in operands]
        hits = [(c, ps) for c, ps in with_packs if ps]
        if len(hits) != 1:
            self.refuse("fold expression over a pack not followed", n, self.text(n))
        pattern, packs = hits[0]
        init = next((c for c in operands if c is not pattern), None)
        left = next(i for i, c in enumerate(n.children) if c.type == "...") < next(
            i for i, c in enumerate(n.children) if c.id == pattern.id)
        if op == ",":
            if init is not None and left:
                self.expr(init)
            vals = self.each_element(pattern, packs, n)
            last = self.expr(init) if init is not None and not left else (vals[-1] if vals else None)
            return last
        if op in ("&&", "||"):
            unit = op == "&&"  # the empty fold's value; an element of the other truth ends the fold with it
            length = len(next(iter(packs.values())).items)
            steps: list[Any] = [None] * length  # None: element i; a node: the init
            steps = ([init] if init is not None and left else []) + steps + (
                [init] if init is not None and not left else [])
            for k, step in enumerate(steps):
                i = k - (1 if init is not None and left else 0)
                v = self.expr(step) if step is not None else self.each_element(
                    pattern, {name: V.Pack(p.items[i:i + 1]) for name, p in packs.items()}, n)[0]
                v = enums.number(self, v)
                if not (isinstance(v, V.Sym) and v.is_const):
                    if k < len(steps) - 1:  # whether C++ reads the rest depends on it
                        self.refuse("fold of a value not known statically", n, self.text(n))
                    return V.Opaque(f"a fold of a value not known statically: {self.text(n)}")
                if (v.const != 0) != unit:
                    return V.const(int(not unit))
            return V.const(int(unit))
        if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
            # ``(n = ... = Is)``, ``(n += ... += Is)``: each step stores into its left operand, which the combining
            # below does not do (the variable would keep its old value, a number the reading still trusts)
            self.refuse("fold expression of an assignment", n, self.text(n))
        before = self.count_here()
        vals = self.each_element(pattern, packs, n)
        if init is not None:
            vals = [self.expr(init), *vals] if left else [*vals, self.expr(init)]
        if self.count_here() != before:
            self.refuse("fold expression whose operands issue ops", n, f"{self.text(n)}: C++ does not order them")
        if not vals:
            self.refuse("empty fold expression", n, f"{self.text(n)}: '{op}' has no value for an empty pack")
        acc = vals[0] if left else vals[-1]
        for v in (vals[1:] if left else reversed(vals[:-1])):
            a, b = (acc, v) if left else (v, acc)
            a, b = enums.number(self, a), enums.number(self, b)
            if isinstance(a, V.Sym) and isinstance(b, V.Sym) and a.is_const and b.is_const and isinstance(
                    r := _fold(op, a.const, b.const), int):
                acc = V.const(r)
            elif isinstance(a, V.Sym) and isinstance(b, V.Sym) and op in ("+", "-"):
                acc = a + (b if op == "+" else -b)
            elif isinstance(a, V.Sym) and isinstance(b, V.Sym) and op == "*" and (a.is_const or b.is_const):
                acc = a.scaled(b.const) if b.is_const else b.scaled(a.const)  # as ``binary`` reads a product
            else:
                return V.Opaque(f"a fold not followed: {self.text(n)}")
        return acc

    def count_here(self) -> int:
        """How many ops the block being read holds (a loop or branch read inside it adds one)."""
        return len(self.blocks[-1].ops)

    def expanded_call(self, name: str, fn: Any, arg_nodes: list[Any], targs: list[Any], n: Any) -> V.Value:
        """A call with a pack expansion among its arguments (``std::make_tuple(TensorAccessor(std::get<Is>(t), ...)
        ...)``): the arguments read (``expand``), then the call as ``call`` makes it of a standard builtin, a function
        the kernel defines or the device API. Any other callee of an expansion is refused by name."""
        bare = name.rsplit("::", 1)[-1]
        vals: list[V.Value] = []
        nodes: list[Any] = []
        for a in arg_nodes:
            got = self.expand(a) if a.type == "parameter_pack_expansion" else [self.expr(a)]
            vals.extend(got)
            nodes.extend([a] * len(got))
        if intrinsics.modelled(name) and bare not in self.prog.functions:
            return intrinsics.call(self, name, vals, nodes, n)
        local = self.lookup(bare) if fn.type == "identifier" else None
        if isinstance(local, V.Function):
            return self.inline(local, nodes, targs, n, vals=vals)
        cands = self.definitions_named(name, bare)
        if len(cands) > 1:
            return self.inline(self.function_of(*self.chosen(cands, vals, bare, n), bare), nodes, targs, n, vals=vals)
        if len(cands) == 1:
            return self.inline(self.function_of(cands[0][0], cands[0][1], bare), nodes, targs, n, vals=vals)
        arity = f"/{len(vals)}"
        key = next((k for k in (name + arity, bare + arity, name, bare) if k in self.prog.functions), None)
        if key is not None:
            f = self.function(key)
            assert isinstance(f, V.Function)
            return self.inline(f, nodes, targs, n, vals=vals)
        handler = api.FUNCTIONS.get(bare)
        if handler is not None:
            signatures.check(self, bare, vals, n)
            return handler(self, vals, nodes, targs, n)
        self.refuse("pack expansion in a call not read", n, f"call to {bare}")

    def topk_tiles(self, name: str, vals: list[V.Value], n: Any) -> list[V.Value]:
        """The DST tiles topk-family call ``name(vals)`` reads or writes (``sfpu.TOPK_DST_TILES``), as values for
        ``dst_use``: an argument plus an offset, an absolute tile, ``min(argument, cap)`` (the argument's value known
        statically, else the cap: a tile of the half no higher), or a run's last tile. Raises ``Refused`` for a
        call with fewer arguments than its DST arguments, or a run's count not known statically."""
        spec = TOPK_DST_TILES[name]
        used = [p for p, _ in spec.at] + [p for p, _ in spec.capped] + [p for p, _ in spec.runs]
        if used and len(vals) <= max(used):
            self.refuse(f"call to {name} with too few arguments", n, f"its DST tiles: {spec.source}")
        tiles: list[V.Value] = [V.const(k) for k in spec.absolute]
        for pos, off in spec.at:
            v = vals[pos]
            tiles.append(v + V.const(off) if isinstance(v, V.Sym) else v)
        for pos, cap in spec.capped:
            v = vals[pos]
            tiles.append(V.const(min(v.const, cap)) if isinstance(v, V.Sym) and v.is_const else V.const(cap))
        for pos, first in spec.runs:
            count = vals[pos]
            if not (isinstance(count, V.Sym) and count.is_const):
                self.refuse(f"{name} of a tile count not known statically", n, self.text(n))
            if count.const > 0:
                tiles.append(V.const(first + count.const - 1))
        return tiles

    def thread_check(self, arg: Any) -> bool:
        """Whether ``arg``, the argument of a thread wrapper (``UNPACK((f(...)))``), is a call of a function the
        kernel or a followed header defines (not an LLK call) that issues no op and changes no variable, DST or
        buffer state when read: a check run on one TRISC only (kernel_lib/reduce_helpers_compute.inl:414,
        ``assert_input_dfb_size``), which the choreography does not see."""
        while arg.type == "parenthesized_expression" and arg.named_child_count:
            arg = arg.named_children[0]
        if arg.type != "call_expression":
            return False
        fn = arg.child_by_field_name("function")
        head = fn.child_by_field_name("name") if fn.type == "template_function" else fn
        name = "".join(head.text.decode().split()).rsplit("::", 1)[-1] if head is not None else ""
        if name.startswith("llk_") or name not in self.prog.functions:
            return False
        saved = self.snapshot()
        self.blocks.append(Block(certain=False))
        try:
            self.expr(arg)
            inner = self.blocks[-1]
            scopes, groups, trips, acc_copy, _acc = saved[:5]
            ok = not inner.ops and all(live == old for live, old in zip(self.scopes, scopes, strict=True)) and \
                self.shared.groups == groups and self.shared.trips == trips and self.noc_cmd == saved[-1] and \
                (self.acc is None or acc_copy is None or (self.acc.tiles, self.acc.state) ==
                 (acc_copy.tiles, acc_copy.state))
        except (Refused, _Break, _Continue, _Return):
            ok = False
        finally:
            self.blocks.pop()
        if not ok:
            self.restore(saved)
        return ok

    def memcpy(self, arg_nodes: list[Any], n: Any) -> V.Value:
        """``std::memcpy(&x, &y, size)`` into a variable of the kernel (a bit cast, ``std::memcpy(&one_u, &one_f, 4)``,
        reader_running_statistics.cpp:51): ``x`` holds bytes the reading does not follow. Into anything else (L1, an
        array element), or inside a loop read once for all its iterations (whose variables the reading finds from
        the assignments it sees), it is refused by name."""
        dst = arg_nodes[0] if len(arg_nodes) == 3 else None
        while dst is not None and dst.type == "parenthesized_expression" and dst.named_child_count:
            dst = dst.named_children[0]
        target = dst.child_by_field_name("argument") if dst is not None and dst.type == "pointer_expression" and \
            dst.children[0].type == "&" else None
        if target is None or target.type != "identifier" or self.lookup(target.text.decode()) is None or \
                len(self.loops) > 0:
            self.refuse("memcpy into memory the reading does not follow", n, self.text(n))
        assert target is not None
        for a in arg_nodes[1:]:
            self.expr(a)
        self.assign(target.text.decode(), V.Opaque(f"bytes copied by {self.text(n)}"), n)
        return V.Opaque("the destination of memcpy")

    def call_method(self, obj: V.Obj, name: str, target: Any, arg_nodes: list[Any], n: Any) -> V.Value:
        """``obj.name(args)`` on a struct value: its method inlined with the fields as variables; a field it sets
        is set in the variable ``target`` names (``shape.block_size(b)`` on a variable), or only in the value
        returned (``*this``) for a temporary."""
        sd = objects.struct_of(self, obj.struct)
        if sd is None or name not in sd.methods:
            self.refuse(f"method {name} of {obj.struct}", n, "not defined in a followed header")
        vals = [self.expr(a) for a in arg_nodes]
        hit = objects.choose(self, [(m, sd.unit) for m in sd.methods[name]], vals, self.declared_params)
        if hit is None:
            self.refuse(f"method {obj.struct}::{name} not resolved", n,
                        f"{len(sd.methods[name])} overloads, none or several fit")
        f = self.function_of(hit[0], sd.unit, f"{sd.name}::{name}", this=obj)
        self.this_after = None
        result = self.inline(f, arg_nodes, [], n, vals=vals)
        after = self.this_after
        if isinstance(after, V.Obj) and after != obj and target is not None and target.type == "identifier":
            self.assign(target.text.decode(), after, n)
        return result

    def class_type_params(self, sd: Any) -> set[str]:
        """The type template parameters of class ``sd`` and of the classes it is nested in (``BlockedRange<SizeT>``
        for ``BlockedRange::Block::LocalRange``)."""
        out: set[str] = set()
        name = sd.name
        while name:
            outer = self.prog.structs.get(name)
            plist = outer.template_params if outer is not None else None
            out |= {self.template_param_name(p) for p in (plist.named_children if plist is not None else ())
                    if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration")}
            name = name.rsplit("::", 1)[0] if "::" in name else ""
        return out

    def bind_params(self, f: V.Function, vals: list[Any], n: Any, targs: list[Any] | None = None) -> dict[str, Any]:
        """A scope binding ``f``'s parameters to ``vals`` (converted to their declared struct or ``std::optional``
        types), its template parameters to ``targs`` (tree-sitter nodes) and the rest to their defaults."""
        targs = targs or []
        scope: dict[str, V.Value] = {}
        # the type template parameters given a type (``fill_pad_face<T, ...>(T* tile_ptr, ...)`` with ``T`` bound to
        # ``uint16_t``, pad_tile.hpp:72): a parameter declared ``T*`` counts sizeof of that type a unit
        bound_types = {tp: tv.name for tp, a in zip(f.template_params, targs, strict=False) if a.type == "type_descriptor"
                 for tv in (self.template_value(a),) if isinstance(tv, V.TypeName)}
        # a type template parameter no argument binds is deduced from the call's arguments, which the reading does
        # not type: an object declared with it is of a type not known (``type_not_known``)
        unbound = {tp for i, tp in enumerate(f.template_params) if tp not in f.variadic and i >= len(targs) and (
            i >= len(f.template_param_types) or not f.template_param_types[i]) and tp not in f.template_defaults}
        # and a method's class template parameters (``W<uint8_t>::add(T a)``), which the reading does not bind
        owner = objects.struct_of(self, f.name.rsplit("::", 1)[0]) if "::" in f.name else None
        if owner is None and isinstance(f.this, V.Obj):
            owner = objects.struct_of(self, f.this.struct)
        if owner is not None:
            unbound |= {tp for tp in self.class_type_params(owner) if self.lookup(tp) is None}
        for tp in unbound:
            scope[tp + _TPARAM_KEY] = V.const(1)
        for i, (p, v) in enumerate(zip(f.params, vals, strict=False)):
            if p.startswith("..."):
                break  # a function parameter pack: bound below
            t = f.param_types[i] if i < len(f.param_types) else ""
            t = bound_types.get(t, t)
            if (t == "auto" or t in unbound or self.type_not_known(t)) and i < len(f.param_declarators) and \
                    f.param_declarators[i] in ("identifier", "reference_declarator"):
                # ``auto x`` / ``T x`` deduced from the argument: a store to it converts to a type not known
                scope[p.lstrip("&")] = v
                scope[p.lstrip("&") + _TYPE_KEY] = V.Opaque(deduced.UNKNOWN)
                continue
            if isinstance(v, V.L1Ptr) and i < len(f.param_declarators):
                # an address passed as ``uint32_t l1_addr`` counts bytes, as ``uint16_t* p`` two bytes a unit
                v = v.retyped(TYPE_SIZES.get(t)) if f.param_declarators[i] == "pointer_declarator" else \
                    v.retyped(1) if t in TYPE_SIZES and f.param_declarators[i] != "reference_declarator" else v
            v = objects.convert(self, v, t, n)
            if _converts(t) and isinstance(v, (V.Sym, V.Ranged)) and not p.startswith("&"):
                v = self.to_integer(v, t)  # a ``uint8_t x`` parameter holds its argument converted
            scope[p.lstrip("&")] = v
            if deduced.canonical(t) and i < len(f.param_declarators) and f.param_declarators[i] in (
                    "identifier", "reference_declarator"):
                # an integer parameter, or a reference parameter to the caller's integer object, has that type: a
                # store to it in the callee converts ([expr.ass]; ``void f(uint8_t& x) { x += 2; }`` of 255 holds 1)
                scope[p.lstrip("&") + _TYPE_KEY] = V.Opaque(t)
        for i, (p, a) in enumerate(zip(f.template_params, targs, strict=False)):
            if p in f.variadic:
                # a pack takes every argument from here on (``f<0, 1, 2>()`` of ``template <uint32_t... Is>``)
                scope[p] = V.Pack(tuple(self.expr(x) if x.type != "type_descriptor" else self.template_value(x)
                                        for x in targs[i:]))
                break
            # tree-sitter cannot tell a type from an enumerator in f<Layout::TILE>: a qualified name is taken as
            # an enumerator (compared by name), anything else as a type (its value not followed)
            v = self.expr(a) if a.type != "type_descriptor" else self.template_value(a)
            t = f.template_param_types[i] if i < len(f.template_param_types) else ""
            scope[p] = objects.convert(self, v, t, n)
        k = next((i for i, p in enumerate(f.params) if p.startswith("...")), None)
        if k is not None and len(f.params[k]) > 3:
            # ``Ts&... xs``: every argument from its position on, none at all included
            scope[f.params[k][3:]] = V.Pack(tuple(vals[k:]))
            t = f.param_types[k] if k < len(f.param_types) else ""
            if t in f.variadic and t not in scope:  # ``typename... Cs`` deduced from ``Cs&... xs``
                scope[t] = V.Pack(tuple(V.TypeOf(v) for v in vals[k:]))
        for (pack, kind), v in zip(f.param_packs, vals, strict=False):
            # a pack deduced from the argument of the parameter that names it: ``std::integer_sequence<uint32_t,
            # Is...>`` from ``std::make_integer_sequence<uint32_t, N>()``, ``const std::tuple<Args...>&`` from a tuple
            if pack and pack not in scope:
                if kind == "values" and isinstance(v, V.Pack):
                    scope[pack] = v
                elif kind == "types" and isinstance(v, (V.Table, V.Designated)):
                    items = [v.at(k) for k in range(v.size)] if isinstance(v, V.Table) else [x for _, x in v.fields]
                    scope[pack] = V.Pack(tuple(V.TypeOf(x) for x in items))
        for p in f.template_params[len(targs):]:
            if p in f.variadic:
                continue  # a pack, deduced above
            # a type parameter deduced from the argument declared with it (``template <typename A> f(A s)``)
            k = next((i for i, t in enumerate(f.param_types) if t == p and i < len(vals)), None)
            if k is not None:
                scope[p] = V.TypeOf(vals[k])
        # parameters the call leaves out take their defaults, read in the callee's unit and with the parameters
        # before them bound (``uint32_t n = N``); a defaulted type parameter is a type. The template parameters'
        # come first: a function parameter's default may name them (``AccumulateT accumulate = AccumulateT{}``,
        # reduce_helpers_compute.hpp:398-403), never the other way round
        missing = [(p, f.template_defaults) for p in f.template_params[len(targs):]] + \
            [(p.lstrip("&"), f.defaults) for p in f.params[len(vals):]]
        saved_scopes, saved_unit = self.scopes, self.unit
        self.scopes = [*f.captures, scope] if isinstance(f.captures, list) else [self.scopes[0], scope]
        if isinstance(f.captures, Unit):
            self.unit = f.captures
        try:
            for p, table in missing:
                if p in table and p not in scope:
                    dv = table[p]
                    types = ("type_descriptor", "type_identifier", "primitive_type", "sized_type_specifier")
                    v = self.template_value(dv) if dv.type in types else self.expr(dv)
                    i = f.params.index(p) if p in f.params else f.params.index("&" + p) if "&" + p in f.params else -1
                    scope[p] = objects.convert(self, v, f.param_types[i], n) if 0 <= i < len(f.param_types) else v
        finally:
            self.scopes, self.unit = saved_scopes, saved_unit
        return scope

    def inline(self, f: V.Function, arg_nodes: list[Any], targs: list[Any], n: Any,
               vals: list[Any] | None = None) -> V.Value:
        if self.depth > 16:
            self.refuse("recursion or inlining deeper than 16", n, f.name)
        # a variable passed to a reference parameter and to another reference parameter (``f(x, x)`` with
        # ``f(uint32_t& a, uint32_t& b)`` or ``const uint32_t& b``): in C++ both names are the one variable and
        # each write is seen through the other; the reading binds each parameter to a value of its own
        refs: dict[str, list[str]] = {}
        for i, (p, a) in enumerate(zip(f.params, arg_nodes, strict=False)):
            if a.type == "identifier" and (p.startswith("&") or (
                    i < len(f.param_declarators) and f.param_declarators[i] == "reference_declarator")):
                refs.setdefault(a.text.decode(), []).append(p.lstrip("&"))
        for name, ps in refs.items():
            # a number only: a buffer or accessor object passed twice (moreh's add(dfb, dfb, out)) is a handle the
            # callee uses, not a variable whose writes one name would hide from the other
            if len(ps) > 1 and any("&" + q in f.params for q in ps) and isinstance(self.lookup(name), V.Sym):
                self.refuse("one variable passed to two reference parameters", n,
                            f"{name} as {' and '.join(ps)} of {f.name}")
        if vals is None:
            # a local array passed to a reference parameter (``RemoteNocCoords<N>& coords``,
            # layernorm_dataflow_utils.h:123-131) is the caller's array: bound as it is, written back on return
            vals = [held if a.type == "identifier" and isinstance(held := self.lookup(a.text.decode()), V.LocalArray)
                    and i < len(f.params) and (f.params[i].startswith("&") or (
                        i < len(f.param_declarators) and f.param_declarators[i] == "reference_declarator"))
                    else self.expr(a) for i, a in enumerate(arg_nodes)]
        scope = self.bind_params(f, vals, n, targs)
        saved_scopes, saved_unit, saved_loops = self.scopes, self.unit, self.loop_base
        saved_call = self.kernel_call
        self.loop_base = len(self.loops) + self.guarded
        if isinstance(f.captures, list):  # a lambda sees its enclosing scopes
            self.scopes = [*f.captures, scope]
        else:
            self.scopes = [self.scopes[0], scope]
            if isinstance(f.captures, Unit):
                if self.kernel_call is None and self.unit is self.prog.main_unit and f.captures is not self.unit:
                    self.kernel_call = self.unit.loc(n)  # the kernel's call of a helper of an included header
                self.unit = f.captures
        this_fields: dict[str, Any] | None = None
        if isinstance(f.this, V.Obj):
            # a method: the object's fields are variables of its body, below its parameters
            sd = objects.struct_of(self, f.this.struct)
            this_fields = dict(f.this.fields)
            self.scopes.insert(-1, this_fields)
            self.this_stack.append((sd, this_fields))
        self.depth += 1
        self.returning.append(f.returns)
        # the declared result type as the callee's scope binds it (``T f()`` of ``f<uint8_t>()``: a ``uint8_t``)
        returns = self.resolved(f.returns) if f.returns.isidentifier() else f.returns
        returns = deduced.canonical(returns) or returns
        ret_unknown = returns != "auto" and self.type_not_known(returns)
        try:
            self.stmt(f.body)
            result: V.Value = None
        except _Return as r:
            result = r.value
        finally:
            self.returning.pop()
            self.depth -= 1
            self.loop_base = saved_loops
            self.scopes, self.unit, self.kernel_call = saved_scopes, saved_unit, saved_call
            if this_fields is not None:
                self.this_stack.pop()
        if this_fields is not None:
            assert isinstance(f.this, V.Obj)
            self.this_after = V.Obj(f.this.struct, tuple((k, this_fields.get(k)) for k, _ in f.this.fields))
        if ret_unknown and isinstance(result, (V.Sym, V.Ranged, V.Wide)) and not (
                isinstance(result, V.Sym) and result.is_const and 0 <= result.const < 128):
            # returned as a type not known (a template parameter deduced from the arguments): the conversion is not
            result = V.Opaque(f"{f.name}(...): its C++ type {f.returns} is not known, so what it returns is not")
        elif returns and not isinstance(result, V.Obj):
            result = objects.convert(self, result, returns, n)
            if _converts(returns) and isinstance(result, (V.Sym, V.Ranged, V.Wide)):
                result = self.to_integer(result, returns)  # returned as the narrow type converts it
        for p, a in zip(f.params, arg_nodes, strict=False):
            if p.startswith("&"):  # a reference parameter: the caller's variable holds what the callee left
                if a.type != "identifier":
                    self.refuse("reference argument not a variable", n, self.text(a))
                self.assign(a.text.decode(), scope[p[1:]], n)
        return result

    def template_value(self, a: Any) -> V.Value:
        """A template argument tree-sitter read as a type: a variable of the kernel's (``f<is_dram>``) is its value,
        a qualified name an enumerator (``f<Layout::TILE>``, compared by name), anything else a type."""
        text = "".join(a.text.decode().split())
        if text.isidentifier() and any(text in sc for sc in self.scopes):
            return self.lookup(text)
        if text.startswith(("static_cast<", "const_cast<")) and "(" in text:
            # an expression tree-sitter read as a type (``f<..., static_cast<bool>(fuse_rope)>``,
            # dit_rmsnorm_fused_writer.cpp:117): the cast's value
            return self.expr_text(a.text.decode(), a)
        inst = _template_type(a)
        if inst is not None:
            # a class template with its arguments (``ckl::Exp<Approx::Fast, Dst::D0>``): kept as a value, made an
            # object where it is constructed
            targs = inst.child_by_field_name("arguments")
            return V.TypeInst(inst.child_by_field_name("name").text.decode(), tuple(
                self.template_value(x) if x.type == "type_descriptor" else self.expr(x)
                for x in (targs.named_children if targs is not None else ()) if x.type != "comment"))
        if "(" in text:
            # an expression tree-sitter read as a function type (``copy<input(dfb::in), output(dfb::out)>``)
            return self.expr_text(a.text.decode(), a)
        if text.isidentifier() and objects.struct_of(self, text) is not None:
            return V.TypeInst(text, ())
        if text.startswith("std::") and text[5:] in TYPE_SIZES:
            return V.TypeName(text[5:])  # f<std::uint32_t> (reader_moreh_softmax_w.cpp:43): <cstdint>'s same type
        if "::" in text and all(part.isidentifier() for part in text.split("::")) and \
                objects.struct_of(self, text) is not None:
            # a struct named with its namespace (``policies::FullBlockWithoutPopPolicy``, layernorm.cpp:237-238):
            # the type, whose static members the callee reads (``input_policy::pop``, numeric.h:75)
            return V.TypeInst(text.rsplit("::", 1)[-1], ())
        if "::" in text and all(part.isidentifier() for part in text.split("::")):
            # a buffer, semaphore or arg token (``f<dfb::scaler>``), CBIndex::c_N, a device constant: their value;
            # any other qualified name an enumerator
            q = self.expr_text(text, a)
            return q if not isinstance(q, V.Opaque) else V.EnumConst.of(text)
        if text in TYPE_SIZES:
            return V.TypeName(text)  # f<uint16_t>: sizeof(T) in the callee is known
        if text in self.prog.unscoped:  # f<OP_ADD>: an unscoped enumerator (enums.py)
            return V.const(self.prog.unscoped[text])
        if text in DEVICE_CONSTANTS:
            # a tile constant after ``using namespace tt::constants`` (``fill_pad_tile<T, w, TILE_HEIGHT>``,
            # pad_tile.hpp:436): its value, as in an expression
            return V.const(DEVICE_CONSTANTS[text])
        return V.Opaque("a type")

    def runtime_arg(self, name: str, node: Any) -> V.Value:
        """The value of the arg ``name`` (``get_arg(args::name)``, the named entry point's parameters): a runtime
        arg's on this core, or, for a name the host gives as a named compile-time arg and not as a runtime arg, that
        (experimental/kernel_args.h:17-19: ``get_arg`` reads runtime, common runtime and compile-time args alike,
        which kind being the host's choice)."""
        if self.survey:
            return V.const(SURVEY_ARG)
        if name not in self.kernel.runtime_args and name in self.kernel.named_compile_time_args:
            return self.host_value(self.kernel.named_compile_time_args[name])
        if name not in self.kernel.runtime_args:
            self.refuse("runtime arg the host does not declare", node,
                        f"{name} (kernel {self.kernel.name} declares: {', '.join(self.kernel.runtime_args) or 'none'})")
        if name not in self.args:
            self.refuse("runtime arg the host gives no value", node,
                        f"{name} on core {self.site}; {self.host_field(f'runtime_args.{self.kernel.name}.{name}')}")
        return self.host_value(self.args[name])

    def host_field(self, field: str) -> str:
        """``HOST.yaml: work_units[i].FIELD is missing``: the host field to add for this kernel on this core."""
        i = self.host.work_unit_of(self.kernel.name, self.site)
        return f"{self.host.path}: work_units[{i}].{field} is missing"

    def host_value(self, v: HostValue) -> V.Value:
        if isinstance(v, int):
            return V.const(v)
        if isinstance(v, TensorAddr):
            return V.TensorAddr(v.tensor)
        if isinstance(v, SemId):
            return V.const(v.id)
        assert isinstance(v, TripRange)
        self.shared.trips[v.trip] = v.hi - v.lo
        return V.Sym(v.lo, (), (v.trip, 1))

    # ------------------------------------------------------------------ compute

    def dst_use(self, idx: list[V.Value], node: Any) -> None:
        """The DST tiles ``idx`` name count towards what the open acquire holds (its largest index + 1)."""
        for v in idx:
            self._dst_index(v, node)

    def _dst_index(self, v: V.Value, node: Any) -> None:
        if self.acc is None:
            return
        if not isinstance(v, V.Sym):
            self.refuse("DST index not known statically", node, self.text(node))
        top = V.Sym(v.const, (), v.trip)
        for var, coef in v.loops:
            lp = next((lp for lp in self.loops if lp.var == var), None)
            if lp is None or coef < 0:
                self.refuse("DST index not known statically", node, self.text(node))
            m = lp.last
            top = top + m.scaled(coef)  # type: ignore[assignment]
        if isinstance(top, V.Opaque) or not isinstance(top, V.Sym):
            self.refuse("DST index not known statically", node, self.text(node))
        hi = top.const + (top.trip[1] * self.shared.trips.get(top.trip[0], 0) if top.trip is not None else 0)
        self.acc.tiles = max(self.acc.tiles, hi + 1)

    def unpacking(self, name: str, arg_nodes: list[Any], n: Any) -> V.Value:
        cbs, tiles, dst = UNPACKING[name]
        vals = [self.expr(a) for a in arg_nodes]
        if len(vals) <= max(*cbs, *tiles, dst):
            self.refuse(f"call to {name} with too few arguments", n)
        ins = []
        in_place = []
        for c, t in zip(cbs, tiles, strict=True):
            cb = self.cb_of(vals[c], n)
            tile = vals[t]
            if not isinstance(tile, V.Sym):
                self.refuse("tile index not known statically", n, self.text(arg_nodes[t]))
            top = self.max_of(tile, n)
            if cb not in self.waited and self.cb_index[cb].page_tiles == 1 and not self.survey:
                # a buffer this kernel never waits on, read by tile index from the read pointer as the unpacker
                # addresses it: a read in place (``InPlace``, docs/semantics.md "Reads in place"), whose page the
                # checker asks to hold published bytes -- layernorm's resident input shard and its eps tile
                # (ttnn 0.81.1 layernorm_sharded.cpp:286-295, 357, 520)
                in_place.append(InPlace(cb, tile.const, tuple(Term(v, k) for v, k in tile.loops)))
                continue
            ins.append(Operand(cb, top // self.cb_index[cb].page_tiles + 1))
        self.dst_use([vals[dst]], n)
        self.emit(Compute(name.removesuffix("_tiles").removesuffix("_tile"), 1, tuple(ins), tuple(in_place)), n)
        return None

    def max_of(self, v: V.Sym, n: Any) -> int:
        """The largest value ``v`` takes over the enclosing loops' ranges (a constant count only)."""
        top = v.const
        for var, coef in v.loops:
            lp = next((lp for lp in self.loops if lp.var == var), None)
            if lp is None or not isinstance(lp.count, int):
                self.refuse("tile index over a loop of a runtime count", n, self.text(n))
            top += max(0, coef * (lp.count - 1))
        if v.trip is not None:
            self.refuse("tile index from a runtime range", n, self.text(n))
        return top


#: classes whose construction the reading follows
_CLASSES = frozenset({"DataflowBuffer", "CircularBuffer", "Semaphore", "TensorAccessor"})

#: the standard library's integer sequence builders (<utility>), by name: the position of their length template
#: argument
_INTEGER_SEQUENCES = {"std::make_integer_sequence": 1, "make_integer_sequence": 1, "std::make_index_sequence": 0,
                      "make_index_sequence": 0}
#: the longest pack the reading expands: an integer sequence longer is refused by name (the corpus's are a kernel's
#: tensors, a few)
MAX_PACK = 256


def _param_packs(plist: Any, variadic: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """For each parameter of ``plist``, the pack of ``variadic`` its type deduces: ``(Is, "values")`` of
    ``std::integer_sequence<T, Is...>`` / ``std::index_sequence<Is...>``, ``(Args, "types")`` of
    ``std::tuple<Args...>``, else ``("", "")``."""
    out = []
    for p in plist.named_children:
        if not p.type.endswith("parameter_declaration"):
            continue
        typ = p.child_by_field_name("type")
        inst = typ
        while inst is not None and inst.type == "qualified_identifier":
            inst = inst.child_by_field_name("name")
        tname = inst.child_by_field_name("name").text.decode() if inst is not None and inst.type == "template_type" \
            else ""
        args = inst.child_by_field_name("arguments") if tname else None
        last = args.named_children[-1] if args is not None and args.named_child_count else None
        pack = "".join(last.named_children[0].text.decode().split()) if last is not None and \
            last.type == "parameter_pack_expansion" and last.named_child_count else ""
        kind = "values" if tname in ("integer_sequence", "index_sequence") else "types" if tname == "tuple" else ""
        out.append((pack, kind) if pack in variadic and kind else ("", ""))
    return tuple(out)


_COMPLEMENT = {Guard.FIRST: Guard.NOT_FIRST, Guard.NOT_FIRST: Guard.FIRST, Guard.LAST: Guard.NOT_LAST,
               Guard.NOT_LAST: Guard.LAST}


def _steppable(v: Any) -> bool:
    """A value a loop may step by a constant: a number, or an L1 address whose offset is one."""
    return isinstance(v, V.Sym) or (isinstance(v, V.L1Ptr) and isinstance(v.offset, V.Sym)
                                    and isinstance(v.origin, V.Sym))


def _stepped(v: Any, by: V.Sym) -> Any:
    """``v`` (``_steppable``) plus ``by``: a number, or an address ``by`` bytes further."""
    if isinstance(v, V.L1Ptr):
        return attrs.evolve(v, offset=v.offset + by)
    return v + by


def _step(s0: Any, x: Any, mark: V.Sym) -> int | None:
    """What one iteration added to ``s0`` (``_steppable``, marked with ``mark`` at its start) if it left ``x``: a
    constant, or None (an address retaken from another pointer, a value not stepped by a constant)."""
    if isinstance(s0, V.L1Ptr):
        if not isinstance(x, V.L1Ptr) or attrs.evolve(x, offset=V.const(0)) != attrs.evolve(s0, offset=V.const(0)):
            return None
        s0, x = s0.offset, x.offset
    if isinstance(x, V.Sym) and isinstance(s0, V.Sym):
        d = x + (-(s0 + mark))
        if isinstance(d, V.Sym) and d.is_const:
            return d.const
    return None


def _noc_plus(addr: V.RemoteAddr, by: V.Sym | V.Opaque) -> V.Value:
    """``get_noc_addr(x, y, a) + by``: a 64-bit NoC address counts bytes, whatever type ``a`` pointed at
    (dataflow_api.h ``get_noc_addr``: the core's coordinates above the 32-bit local address)."""
    t = addr.target
    if isinstance(t, V.L1Ptr):
        return V.RemoteAddr(addr.site, attrs.evolve(t, elem=1).plus(by).retyped(t.elem))
    why = by.why if isinstance(by, V.Opaque) else "an address past a word not a buffer's"
    return V.Opaque(f"a NoC address past {why}")


@functools.lru_cache(maxsize=2048)
def _assigned_in(node: Any, calls: bool) -> frozenset[str]:
    """``KernelReader.assigned_in``, once per statement: a nested loop's body is asked again for every reading of
    every loop around it (the tree node, kept by the cache, keeps its tree alive: a key is never another tree's)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if x.type == "assignment_expression":
            lhs = x.child_by_field_name("left")
            if lhs.type == "identifier":
                out.add(lhs.text.decode())
        elif x.type == "update_expression":
            arg = x.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier":
                out.add(arg.text.decode())
        elif x.type == "argument_list" and calls:
            # a variable passed to a call may be changed through a reference parameter: a candidate too (the
            # first reading of the body finds it unchanged if it is)
            out.update(a.text.decode() for a in x.named_children if a.type == "identifier")
        stack.extend(x.named_children)
    return frozenset(out)


@functools.lru_cache(maxsize=2048)
def _missing_token(n: Any) -> Any:
    """A token tree-sitter's error recovery inserted (``is_missing``) in statement ``n`` itself -- not in a block
    nested in it, whose statements are checked when they are read -- or text it skipped (an ``ERROR`` node: ``(k =
    3, k + 1)`` parses as ``k = k + 1`` around a skipped ``3,``), or None."""
    stack = list(n.children)
    while stack:
        c = stack.pop()
        if c.is_missing or (c.type == "ERROR" and not _type_argument(c)):
            return c
        if c.type != "compound_statement":
            stack.extend(c.children)
    return None


#: builtins whose first argument is a type, which tree-sitter cannot parse as an argument (an ``ERROR`` node)
_TYPE_ARGUMENT_BUILTINS = frozenset({"__builtin_bit_cast", "__builtin_offsetof", "offsetof"})


def _type_argument(e: Any) -> bool:
    """Whether ``ERROR`` node ``e`` is the type argument of a ``_TYPE_ARGUMENT_BUILTINS`` call
    (``__builtin_bit_cast(float, x)``, writer_unary_sharded_ln.cpp:64)."""
    args = e.parent
    call = args.parent if args is not None and args.type == "argument_list" else None
    fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    return fn is not None and fn.text.decode() in _TYPE_ARGUMENT_BUILTINS and args.named_children[:1] == [e]


#: the node kinds of a static_assert condition the reading folds: numbers, names and operators on them
_ARITHMETIC_NODES = frozenset({"number_literal", "identifier", "binary_expression", "unary_expression",
                               "parenthesized_expression", "true", "false", "char_literal"})


def _constant(v: V.Value) -> bool:
    """Whether ``v`` is a number known statically."""
    return isinstance(v, V.Sym) and v.is_const


def _folded_assert(node: Any) -> bool:
    """Whether ``node`` is made of numbers, plain names and operators only (no call, template, cast, type or
    scope): a static_assert condition the reading folds reliably."""
    return node.type in _ARITHMETIC_NODES and all(_folded_assert(c) for c in node.named_children)


def _in_template(node: Any) -> bool:
    """Whether ``node`` lies inside a template declaration (a function or class template, a member of one)."""
    x = node.parent
    while x is not None:
        if x.type == "template_declaration":
            return True
        x = x.parent
    return False


def _identifiers(node: Any) -> list[Any]:
    """The identifier nodes under ``node`` (itself included)."""
    out, stack = [], [node]
    while stack:
        x = stack.pop()
        if x.type == "identifier":
            out.append(x)
        stack.extend(x.named_children)
    return out


def _mentions_loop(st: nocstate.CmdState, var: str) -> bool:
    """Whether a command buffer's state depends on loop index ``var`` (its tensor page, its length)."""
    parts = [st.length, st.coord[1] if isinstance(st.coord, tuple) else None]
    return any(_mentions(p, var) for p in parts if p is not None)


def _mentions(v: Any, var: str) -> bool:
    """Whether number or address ``v`` depends on loop index ``var``."""
    parts = (v.origin, v.offset) if isinstance(v, V.L1Ptr) else (v,)
    return any(isinstance(p, V.Sym) and any(x == var for x, _ in p.loops) for p in parts)


def walk_ops(ops: Any) -> Any:
    """Every op of ``ops``, containers' bodies included."""
    for op in ops:
        yield op
        if isinstance(op, (Loop, If)):
            yield from walk_ops(op.body)


def _bufs_of(op: Op) -> tuple[int, ...]:
    """The buffers whose pointer counters ``op`` moves."""
    if isinstance(op, (Push, Pop, PackAcc)):
        return (op.buf,)
    if isinstance(op, (ReadTiles, FillTiles, RemoteRead)):
        return (op.into,)
    if isinstance(op, WriteTiles):
        return (op.src,)
    if isinstance(op, CopyTiles):
        return (op.src, op.into)
    return ()


def _max_residue(v: V.Sym, m: int) -> int:
    """The greatest value ``v mod m`` can take, whatever its variables are: ``v``'s constant modulo the gcd of ``m``
    and its coefficients, plus ``m`` minus that gcd."""
    g = m
    for _, c in v.loops:
        g = math.gcd(g, c)
    if v.trip is not None:
        g = math.gcd(g, v.trip[1])
    return v.const % g + m - g


def _same_word(stored: V.L1Ptr | None, loaded: V.L1Ptr) -> bool:
    """Whether ``loaded`` is provably the address ``stored`` (the last store into a page) wrote, at its width: the
    same buffer's write pointer taken at the same count, the same byte offset as a symbolic equality (for every loop
    index and trip value), the same element size."""
    return (stored is not None and not stored.front and not loaded.front and stored.cb == loaded.cb
            and isinstance(stored.origin, V.Sym) and stored.origin == loaded.origin
            and isinstance(stored.offset, V.Sym) and stored.offset == loaded.offset
            and stored.elem is not None and stored.elem == loaded.elem)


def _at(v: Any, var: str, i: int) -> Any:
    """Number or address ``v`` with loop index ``var`` at ``i``."""
    def sub(x: Any) -> Any:
        return x.sub(var, V.const(i)) if isinstance(x, V.Sym) else x
    if isinstance(v, V.L1Ptr):
        return attrs.evolve(v, origin=sub(v.origin), offset=sub(v.offset))
    return sub(v)


def _same_template_args(a: list[tuple[str, Any] | None], b: list[tuple[str, Any] | None]) -> bool | None:
    """Whether template argument keys ``a`` and ``b`` (``KernelReader.template_key``) name the same arguments: None
    when that is not known (a key not read, or two types of different names both fixed-width integers of one size and
    signedness, which may be one type: ``uint32_t`` is ``unsigned long`` on the RISC)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            return None
        if x == y:
            continue
        if x[0] != y[0]:
            return None if "t" in (x[0], y[0]) else False  # a type against a value: tree-sitter may read either
        if x[0] == "t":
            sx, sy = _size_of_type(x[1]), _size_of_type(y[1])
            if sx is None or sy is None or (sx == sy and _signed_type(x[1]) == _signed_type(y[1])):
                return None
        return False
    return True


def _signed_type(text: str) -> bool:
    """Whether integer type ``text`` (``int16_t``, ``unsigned char``, ``uint8_t``) is signed."""
    return text.split()[-1].startswith("int") and not text.startswith("unsigned")


def _int_range(text: str, width: int) -> tuple[int, int]:
    """The least and greatest value of integer type ``text`` of ``width`` bytes."""
    bits = 8 * width
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if _signed_type(text) else (0, (1 << bits) - 1)


def _size_of_type(text: str) -> int | None:
    """``sizeof`` of a fixed-width type as written (``volatile uint16_t``), None if it is not one."""
    words = [w for w in text.replace("std::", "").replace("*", " ").split() if w not in ("volatile", "const")]
    return TYPE_SIZES.get(words[-1]) if len(words) == 1 else None


def _array_dims(d: Any, std_array: int = 0) -> int:
    """How many subscripts of the name declarator ``d`` declares stay in its own storage: ``a[4]`` 1, ``a[2][3]`` 2,
    ``*p[N]`` 1 (an array of pointers: ``p[i]`` is its own word, ``p[i][j]`` what the pointer points at), 0 for a
    pointer to an array ``(*p)[N]``, a reference to one ``(&r)[N]`` or no array. A declarator reads from the name
    outward (C's declarators inside out), so the array declarators next to the name count. ``std_array``: the
    declared type's nested ``std::array``s, as many dimensions more when no pointer or reference declarator takes
    them."""
    chain: list[str] = []
    x = d
    while x is not None and x.type not in ("identifier", "field_identifier"):
        chain.append(x.type)
        inner = x.child_by_field_name("declarator")
        if inner is None and x.named_child_count:
            inner = next((c for c in x.named_children if c.type.endswith("declarator") or c.type == "identifier"),
                         None)
        x = inner
    dims = 0
    for t in reversed(chain):
        if t == "array_declarator":
            dims += 1
        elif t != "parenthesized_declarator":
            break
    indirect = any(t in ("pointer_declarator", "reference_declarator", "function_declarator") for t in chain)
    return dims + std_array if not indirect else dims


def _subscripts(n: Any) -> int:
    """The subscripts applied along place ``n``'s chain of subscripts, ``.`` fields and parentheses."""
    count = 0
    while n is not None and n.type in ("subscript_expression", "field_expression", "parenthesized_expression"):
        count += n.type == "subscript_expression"
        n = n.child_by_field_name("argument") if n.type != "parenthesized_expression" else (
            n.named_children[0] if n.named_child_count == 1 else None)
    return count


def _core_local_mem(v: Any, typ: Any) -> Any:
    """A variable declared ``CoreLocalMem<T> p(addr)`` (or ``= addr``, ``{addr}``): a ``T`` array at ``addr``
    (api/core_local_mem.h, its constructor from an address; ``T`` defaults to ``uint32_t``), as the expression
    ``CoreLocalMem<T>(addr)`` is; its ``sizeof(T)`` a unit of its arithmetic. ``Scratchpad<T> pad(scratch::x)`` is
    the same over the scratchpad's base (``operator[]`` is ``start_addr_ + index`` of a ``CoreLocalMem<T>``,
    api/scratchpad.h:69-73). Other values as they are."""
    if not isinstance(v, V.L1Ptr):
        return v
    targs = typ.child_by_field_name("arguments") if typ is not None and typ.type == "template_type" else None
    named = [a for a in targs.named_children if a.type != "comment"] if targs is not None else []
    return v.retyped(_size_of_type(named[0].text.decode()) if named else 4)


def retyped(v: Any, typ: Any, bound: str | None = None) -> Any:
    """An L1 address ``v`` cast to the type ``typ`` (a tree-sitter type descriptor; ``bound``: its text with a template
    type parameter replaced by the type it is bound to): as a ``T*`` its arithmetic counts ``sizeof(T)`` bytes (None
    where T's size is not known), as an integer one byte. Other values as they are."""
    if isinstance(v, V.ArgArray) and typ is not None:
        text = bound or typ.text.decode()  # a runtime arg address as a T*: sizeof(T) a unit; as an integer, bytes
        return attrs.evolve(v, elem=_size_of_type(text) if "*" in text else 1 if _size_of_type(text) else v.elem,
                            struct=None)
    if not isinstance(v, V.L1Ptr) or typ is None:
        return v
    text = bound or typ.text.decode()
    if "*" in text:
        return v.retyped(_size_of_type(text))
    return v.retyped(1) if _size_of_type(text) is not None else v


def _is_const(decl: Any) -> bool:
    """Whether declaration ``decl`` declares its variables ``const`` or ``constexpr`` (never written after)."""
    return any(c.type == "type_qualifier" and c.text in (b"const", b"constexpr") for c in decl.children)


def _declared_as(v: Any, tname: str, declarator: Any) -> Any:
    """An L1 address (or a runtime arg address) held in a variable declared ``T* p`` (``sizeof(T)`` bytes a unit) or
    ``uint32_t a`` (bytes); ``auto`` and the like keep what the value was."""
    if isinstance(v, V.ArgArray):
        if declarator is not None and declarator.type == "pointer_declarator":
            if tname == "auto" or tname == v.struct:  # ``const auto* a = reinterpret_cast<const Args*>(...)``
                return v
            return attrs.evolve(v, elem=TYPE_SIZES.get(tname), struct=None)
        return attrs.evolve(v, elem=1) if tname in TYPE_SIZES and (
            declarator is None or declarator.type != "reference_declarator") else v
    if declarator is not None and declarator.type == "pointer_declarator":
        # ``auto* p = reinterpret_cast<volatile uint32_t*>(a)`` (fill_tile_utils.hpp:38): the cast's type
        return v if tname == "auto" else v.retyped(TYPE_SIZES.get(tname))
    if declarator is not None and declarator.type == "reference_declarator":
        return v
    return v.retyped(1) if tname in TYPE_SIZES else v


def _amount(v: V.Sym, unit: str, units: str) -> str:
    """``v`` as text with its unit: ``2048*j + 2048 B``, ``1 tile``, ``j tiles``."""
    terms = [f"{c}*{x}" if c != 1 else x for x, c in v.loops]
    if v.trip is not None:
        terms.append(f"{v.trip[1]}*{v.trip[0]}" if v.trip[1] != 1 else v.trip[0])
    if v.const or not terms:
        terms.append(str(v.const))
    body = " + ".join(terms).replace("+ -", "- ")
    return f"{body} {unit if body == '1' else units}"


def _bytes(v: V.Sym | V.Ranged) -> str:
    if isinstance(v, V.Ranged):
        return f"between {v.lo} B and {v.hi} B"
    return _amount(v, "B", "B")


def _tiles(v: V.Sym, unit: str = "tile") -> str:
    return _amount(v, unit, unit + "s")


def _template_type(a: Any) -> Any:
    """The ``template_type`` node a type (``ckl::Exp<...>``, possibly in a type descriptor or qualified) names."""
    x = a
    while x is not None and x.type in ("type_descriptor", "qualified_identifier"):
        x = x.child_by_field_name("type") if x.type == "type_descriptor" else x.child_by_field_name("name")
    return x if x is not None and x.type == "template_type" else None


def _pure(n: Any) -> bool:
    """Whether expression ``n`` has no effect when evaluated: no call, assignment or increment in it."""
    if n is None:
        return True
    if n.type in ("call_expression", "assignment_expression", "update_expression"):
        return False
    return all(_pure(c) for c in n.children)


def _is_assert(n: Any) -> bool:
    """``n`` is ``ASSERT(...)`` (parenthesized or not): the thread wrappers around it are read as the assertion."""
    while n.type == "parenthesized_expression" and n.named_child_count:
        n = n.named_children[0]
    if n.type != "call_expression":
        return False
    fn = n.child_by_field_name("function")
    return fn is not None and fn.text.decode().strip() == "ASSERT"


#: LLK calls that only program a configuration register of their thread, touching no circular buffer, DST or
#: semaphore: read as doing nothing inside ``PACK(...)``. ``llk_pack_relu_config`` writes the packer's STACC_RELU
#: word (ckernels/wormhole_b0/metal/llk_api/llk_pack_common_api.h:240-243,
#: tt_llk_wormhole_b0/llk_lib/llk_pack_common.h:204-219), as the compute API's ``pack_relu_config`` (ignored) does.
CONFIG_LLK_CALLS = frozenset({"llk_pack_relu_config"})


def _is_config_llk(n: Any) -> bool:
    """``n`` is a call of a configuration-only LLK function (``CONFIG_LLK_CALLS``), parenthesized or not."""
    while n.type == "parenthesized_expression" and n.named_child_count:
        n = n.named_children[0]
    if n.type != "call_expression":
        return False
    fn = n.child_by_field_name("function")
    return fn is not None and fn.type == "identifier" and fn.text.decode() in CONFIG_LLK_CALLS


#: The SFPU init macros (ckernels/wormhole_b0/metal/llk_api/llk_sfpu/llk_math_eltwise_unary_sfpu_macros.h:61-86):
#: ``llk_math_eltwise_unary_sfpu_init`` with an init callback, "no dst index involved": configuration only, read as
#: doing nothing inside ``MATH(...)`` (compute_common.hpp:324).
SFPU_INIT_MACROS = frozenset({"SFPU_UNARY_INIT", "SFPU_UNARY_INIT_FN", "SFPU_UNARY_INIT_FN_ARGS"})
#: SFPU operations an op's compute header defines for the MATH thread only (under ``#ifdef TRISC_MATH``, which the
#: reading does not define), called as ``MATH((f(idst)))``: name -> the positions of their DST-index arguments.
#: ``recip_tile_first_column`` is one ``SFPU_UNARY_CALL`` on DST tile ``idst`` (sdpa/.../compute_common.hpp:306-312),
#: a DST-only operation like the compute API's ``recip_tile``.
HEADER_SFPU_OPS: dict[str, tuple[int, ...]] = {"recip_tile_first_column": (0,)}


def _discarded_comparison(e: Any) -> bool:
    """Whether expression statement ``e`` is a tree of binary operators holding a comparison: ``s.f<A | B>(x)``
    parses as ``(s.f < A) | (B > (x))``."""
    if e.type != "binary_expression":
        return False
    if e.child_by_field_name("operator").type in ("<", ">"):  # the shapes a template argument list leaves
        return True
    return any(_discarded_comparison(c) for c in (e.child_by_field_name("left"), e.child_by_field_name("right"))
               if c is not None)


def _unparen(n: Any) -> Any:
    """``n`` without the parentheses around it (``MATH((f(x)))``'s argument)."""
    while n.type == "parenthesized_expression" and n.named_child_count:
        n = n.named_children[0]
    return n


def _tensor_addr_vs_zero(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are a host tensor's base address and the number 0, in either order."""
    def zero(v: Any) -> bool:
        return isinstance(v, V.Sym) and v.is_const and v.const == 0
    return (isinstance(a, V.TensorAddr) and zero(b)) or (isinstance(b, V.TensorAddr) and zero(a))


def _capture_modes(spec: Any) -> tuple[bool, bool]:
    """Whether a lambda's capture clause ``spec`` captures by value (``=``, ``n``, ``x = e``) and whether by
    reference (``&``, ``&m``); ``this`` counts as neither."""
    by_value = by_ref = False
    amp = False
    for c in spec.children if spec is not None else ():
        if c.type == "lambda_default_capture":
            by_value, by_ref = by_value or c.text == b"=", by_ref or c.text == b"&"
        elif c.type == "&":
            amp = True
            continue
        elif c.type in ("identifier", "lambda_capture_initializer"):
            by_ref, by_value = by_ref or amp, by_value or not amp
        amp = False
    return by_value, by_ref


#: the key beside a variable in its scope holding the type it was declared with (no C++ name holds a NUL)
_TYPE_KEY = deduced.TYPE_KEY
#: marks a type template parameter of the function being read that no template argument binds (``type_not_known``)
_TPARAM_KEY = "\0tparam"
#: a local array's dimensions (``_array_dims``), kept in its declaration's scope
_DIMS_KEY = "\0dims"
#: a scope's key ``name + _REF_KEY``: the variables ``name`` is one object with (a local reference ``T& r = x``; the
#: others' names as an ``Opaque``'s text, NUL-separated), or None where a declaration of ``name`` in that scope ends an outer one's
_REF_KEY = "\0ref"
#: a scope's key ``name + _PLACE_KEY``: ``name`` is a non-const reference bound to a place, not a variable (``T& w =
#: p[0];``, the place's text as an ``Opaque``'s), or None where a declaration of ``name`` in that scope is none
_PLACE_KEY = "\0place"
#: a scope's key ``name + _IS_REF_KEY``: not None when ``name``'s declaration there is a reference's (``decltype`` of it
#: is a reference type)
_IS_REF_KEY = "\0isref"

#: the unsigned 32-bit types a declaration may name (RV32: ``size_t`` too)
_UNSIGNED_WORDS = frozenset({"uint32_t", "unsigned", "uint", "size_t"})

def _unsigned_word(t: str) -> bool:
    """Whether ``t``, one of ``_WORD_TYPES``, is an unsigned 32-bit type."""
    return t in ("unsigned", "unsigned int") or t.endswith("uint32_t")


#: the signed integer types a declaration may name (``signed_operand``)
_SIGNED_TYPES = frozenset({"int", "int8_t", "int16_t", "int32_t", "int64_t", "long", "short", "signed"})


@functools.lru_cache(maxsize=1024)  # a type's text: asked at every assignment of every reading
def _narrow(tname: str) -> bool:
    """Whether ``tname`` (a declaration's type, qualifiers dropped) is an integer type narrower than the RISC's
    32-bit word: ``uint8_t``, ``int16_t``, ``char``, ``bool``..."""
    words = [w for w in tname.replace("std::", "").split() if w not in ("const", "constexpr", "volatile", "static")]
    return len(words) == 1 and (words[0] == "bool" or (TYPE_SIZES.get(words[0]) or 4) < 4)


@functools.lru_cache(maxsize=1024)
def _converts(tname: str) -> bool:
    """Whether a value stored as type ``tname`` may change on the way (``to_integer``): a narrow integer type, a
    signed 32-bit one (a word of 2**31 or more is negative there), or a 64-bit one (a value past the 32-bit word is
    not followed)."""
    words = [w for w in tname.replace("std::", "").split() if w not in ("const", "constexpr", "volatile", "static")]
    return _narrow(tname) or (len(words) == 1 and words[0] in ("int", "int32_t", "uint64_t", "int64_t"))



#: A comparison's operator with its operands swapped (``a OP b`` is ``b MIRRORED[OP] a``).
_MIRRORED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!="}

def _signed(init: Any) -> bool:
    """Whether the ``for`` initializer ``init`` declares a signed integer index (``int i = 7``, ``int32_t``,
    ``auto i = 7``); False for an unsigned one and for an index not declared there (its type is not followed)."""
    if init is None or init.type != "declaration":
        return False
    words = init.child_by_field_name("type").text.decode().replace("std::", "").split()
    return not any(w.startswith(("u", "size_t", "bool", "char")) for w in words) and any(
        w in ("int", "long", "short", "signed", "auto", "int8_t", "int16_t", "int32_t", "int64_t") for w in words)


def _word(x: int) -> int:
    """``x`` as a 32-bit word: itself in ``[-2**31, 2**32)`` (an int or a uint32_t), else modulo 2**32 (C++'s
    unsigned wrap; a signed overflow is undefined)."""
    return x if -(1 << 31) <= x < 1 << 32 else x % (1 << 32)


#: Node types that may issue an op or change a value the reading follows.
_EFFECTS = frozenset({"call_expression", "assignment_expression", "update_expression", "compound_statement",
                      "new_expression", "delete_expression", "fold_expression", "parameter_pack_expansion"})


def _holds_objects(d: Any) -> bool:
    """Whether array declarator ``d`` declares elements of its declared type itself (``g[2]``), not pointers or
    references to it (``*p[2]``, ``(&r)[2]``)."""
    x = d
    while x is not None and x.type not in ("identifier", "field_identifier"):
        if x.type in ("pointer_declarator", "reference_declarator", "function_declarator"):
            return False
        x = x.child_by_field_name("declarator") or next(
            (c for c in x.named_children if c.type.endswith("declarator") or c.type == "identifier"), None)
    return True


def _issues(n: Any) -> bool:
    """Whether node ``n`` holds a call, a store, an increment or a statement (``_EFFECTS``) anywhere in it."""
    stack = [n]
    while stack:
        x = stack.pop()
        if x.type in _EFFECTS:
            return True
        stack.extend(x.named_children)
    return False


def _wide_type(text: str) -> bool:
    """Whether a type's text names, or may deduce, a 64-bit integer type of the RISC (``uint64_t``, ``int64_t``,
    ``long long``; ``auto`` and ``decltype``, whose type the reading does not deduce; ``KernelReader.wide``)."""
    words = text.replace("std::", "").replace("*", " ").replace("(", " ").split()
    return "uint64_t" in words or "int64_t" in words or words.count("long") >= 2 or "auto" in words or \
        "decltype" in words


#: the 32-bit integer types of the RISC (rv32: ``long`` and ``size_t`` are 32 bits too), a conversion to which is the
#: value modulo 2**32
_WORD_TYPES = frozenset({"uint32_t", "int32_t", "unsigned", "unsigned int", "int", "signed", "signed int",
                         "std::uint32_t", "std::int32_t"})


def _type_kind(text: str) -> str | None:
    """``KernelReader.int_kind`` of a value of the integer type named ``text`` (a declaration's, a cast's): "u32" for
    the unsigned 32-bit types (rv32: ``unsigned long`` and ``size_t`` too), "s32" for ``int`` and the types that
    promote to it (every narrower one, signed or not, and ``bool``), None for the 64-bit ones and anything else."""
    words = [w for w in text.replace("std::", "").split()
             if w not in ("const", "constexpr", "volatile", "static", "inline", "tt_l1_ptr")]
    if not words or "*" in text or "&" in text or words.count("long") >= 2:
        return None
    if words[-1] in ("uint32_t", "size_t", "uintptr_t", "uint") or (
            "unsigned" in words and not {"char", "short"} & set(words)):
        return "u32"
    if words[-1] in ("int", "int32_t", "signed", "long", "short", "char", "bool", "int8_t", "int16_t", "uint8_t",
                     "uint16_t"):
        return "s32"
    return None


def _literal_kind(text: str) -> str | None:
    """``KernelReader.int_kind`` of an integer literal (C++ [lex.icon], ``int`` and ``long`` 32 bits on rv32): the
    first type that holds its value among those its suffix and base allow; None for a 64-bit one or not a number."""
    t = text.lower().replace("'", "")
    digits = t.rstrip("ulz")
    suffix = t[len(digits):]
    try:
        k = int(digits, 8) if len(digits) > 1 and digits[0] == "0" and digits.isdigit() else int(digits, 0)
    except ValueError:
        return None
    if "ll" in suffix or k >= 1 << 32:
        return None
    if "u" in suffix:
        return "u32"
    if k < 1 << 31:
        return "s32"
    # a decimal literal past int is a long long; an octal or hexadecimal one an unsigned int
    return None if digits.isdigit() and not (len(digits) > 1 and digits[0] == "0") else "u32"


_cast_type = deduced.cast_type


def _word_cast(n: Any) -> bool:
    """Whether node ``n`` converts its operand to one of ``_WORD_TYPES``: a C cast ``(uint32_t)x`` or a
    ``static_cast<uint32_t>(x)``."""
    return _word_cast_type(n) is not None


def _word_cast_type(n: Any) -> str | None:
    """The type of ``_WORD_TYPES`` node ``n`` converts its operand to (``_word_cast``), None if it is no such
    conversion."""
    typ = None
    if n.type == "cast_expression":
        t = n.child_by_field_name("type")
        typ = " ".join(t.text.decode().split()) if t is not None else None
    elif n.type == "call_expression":
        fn = n.child_by_field_name("function")
        if fn is not None and fn.type == "template_function":
            name = fn.child_by_field_name("name")
            targs = fn.child_by_field_name("arguments")
            if name is not None and name.text.decode() == "static_cast" and targs is not None:
                typ = " ".join(targs.text.decode().strip("<>").split())
    return typ if typ in _WORD_TYPES else None


def _touch(touched: tuple[tuple[int, tuple[Block, ...]], ...], page: int,
           lineage: tuple[Block, ...]) -> tuple[tuple[int, tuple[Block, ...]], ...]:
    """``touched`` (``_Fill.touched``) with a store into ``page`` under the blocks ``lineage``, once."""
    if any(k == page and len(b) == len(lineage) and all(x is y for x, y in zip(b, lineage, strict=True))
           for k, b in touched):
        return touched
    return (*touched, (page, lineage))


def _certain_to(lineage: tuple[Block, ...], here: list[Block]) -> bool:
    """Whether a statement read under the blocks ``lineage`` runs on every path to a statement under ``here``: the
    blocks it is in past those the two share are all certain (a loop of a constant count of at least 1, not a
    branch's side)."""
    common = 0
    while common < min(len(here), len(lineage)) and here[common] is lineage[common]:
        common += 1
    return all(b.certain for b in lineage[common:])


def _u32(x: int) -> bool:
    """Whether ``x`` is a value of a uint32_t, where 32- and 64-bit arithmetic agree."""
    return 0 <= x < 1 << 32


def _fold(op: str, x: int, y: int) -> int | str | None:
    """``x OP y`` of two numbers for the operators whose result is not affine (``/ % << >> & | ^``), as C++ computes
    it on 32-bit words: division truncating toward zero (exactly, not through a float). Operands are words
    (``_word``). The result's meaning where C++'s depends on a signedness the reading does not follow -- ``/``, ``%``
    or ``>>`` with a negative operand (``(0u - 1u) >> 29`` is 7 unsigned, -1 signed), a shift by 32 or more or by a
    negative amount (undefined) -- is not followed: a string saying why (None: not an operator of this kind, or a
    division by 0)."""
    x, y = _word(x), _word(y)
    if op in ("/", "%", ">>") and (x < 0 or y < 0):
        return f"a negative operand of '{op}' (signed or unsigned not followed)"
    if op in ("<<", ">>") and not 0 <= y < 32:
        return f"a shift by {y} (undefined)"
    if op in ("/", "%") and y == 0:
        return None
    if op == "/":
        return x // y
    if op == "%":
        return x % y
    return {"<<": lambda: x << y, ">>": lambda: x >> y, "&": lambda: x & y, "|": lambda: x | y,
            "^": lambda: x ^ y}.get(op, lambda: None)()


def _holds(op: str, x: int) -> bool:
    return {"==": x == 0, "!=": x != 0, "<": x < 0, "<=": x <= 0, ">": x > 0, ">=": x >= 0}[op]


def read_scratch(shared: Shared, kernel: HostKernel, site: Site, args: dict[str, HostValue], prog: CppProgram,
                 survey: bool = False) -> Block:
    """``KernelReader.read`` of the kernel, read again with a buffer as scratch L1 each time a reading stops at a
    ``ScratchHint`` (a NoC read into, or stores into, pages of a buffer no circular-buffer op of the kernel names:
    argmax's ``find_argmax_for_core``), at most once per buffer; the scratch buffers are recorded in
    ``shared.scratch`` for the assembly (``Buffer.scratch``). A hint for a buffer already read as scratch, or a
    kernel whose reading with it refuses elsewhere, gives the refusal it stood for."""
    # the syntax caches hold their nodes' trees alive: emptied per kernel read, so a survey of a thousand kernels
    # keeps one kernel's trees, not a thousand
    _assigned_in.cache_clear()
    _missing_token.cache_clear()
    # a scratchpad is scratch L1 from the start (it is never a ring)
    scratch = frozenset(b.index for b in shared.host.buffers if b.scratchpad and (b.cores is None or site in b.cores))
    hints: dict[int, Refused] = {}
    while True:
        try:
            block = KernelReader(shared, kernel, site, args, prog, survey, scratch).read()
        except ScratchHint as h:
            if h.cb in scratch:
                raise h.refused from None
            scratch |= {h.cb}
            hints[h.cb] = h.refused
            continue
        except ScratchRinged as e:
            # the buffer is a ring after all: what made it look like scratch is the refusal to give (a scratchpad
            # never looked like scratch: it is one, and a circular-buffer op on it is the refusal)
            raise hints.get(e.cb, e) from None
        shared.scratch |= {(site, cb) for cb in scratch}
        return block


def _dense(op: str, a: Any, b: Any, c: int | None) -> tuple[int | None, str | None]:
    """``V.Ranged.step`` and ``loop`` of ``a OP b`` (``KernelReader.ranged``), where its values over one loop's
    iterations leave no gap wider than the step: a loop index's ``x / c`` or ``x >> s`` (its values at most the
    divisor apart, each quotient from the least to the greatest is taken: step 1), such a number plus a constant
    or times one. (None, None) otherwise: only the bounds are known."""
    if op in ("/", ">>") and isinstance(a, V.Sym) and c is not None and len(a.loops) == 1 and a.trip is None:
        div = c if op == "/" else 1 << c if 0 <= c < 32 else 0
        if div > 0 and abs(a.loops[0][1]) <= div:
            return 1, a.loops[0][0]
    if op in ("+", "-") and isinstance(a, V.Ranged) and isinstance(b, V.Sym) and b.is_const:
        return a.step, a.loop
    if op == "+" and isinstance(b, V.Ranged) and isinstance(a, V.Sym) and a.is_const:
        return b.step, b.loop
    if op == "*" and isinstance(a, V.Ranged) and c is not None and a.step is not None and c:
        return a.step * abs(c), a.loop
    if op == "*" and isinstance(b, V.Ranged) and isinstance(a, V.Sym) and a.is_const and b.step is not None and \
            a.const:
        return b.step * abs(a.const), b.loop
    return None, None


def _plain_arithmetic(n: Any) -> bool:
    """Whether expression ``n`` is names, numbers, ``+ - *`` and parentheses only: evaluating it changes nothing, so it
    may be evaluated twice (``KernelReader.ranges_overlap`` before the ordinary reading of a condition)."""
    if n.type in ("identifier", "number_literal"):
        return True
    if n.type == "parenthesized_expression":
        return n.named_child_count == 1 and _plain_arithmetic(n.named_children[0])
    if n.type == "binary_expression" and n.child_by_field_name("operator").type in ("+", "-", "*"):
        return _plain_arithmetic(n.child_by_field_name("left")) and _plain_arithmetic(n.child_by_field_name("right"))
    return False
