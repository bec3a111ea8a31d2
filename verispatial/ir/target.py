"""Machine models. A ``Target`` is data, not code; every number cites its public source in ``sources``.

Numbers come from ``reference/tenstorrent.md`` §3 (tt-metal sources named there) and, for the GPU-class
target, from the CUDA C Programming Guide's compute-capability tables.
"""

from __future__ import annotations

import attrs

from verispatial.errors import ParseError


@attrs.frozen
class Target:
    """A spatial machine.

    - ``mesh``: (columns, rows) of the usable compute grid.
    - ``tile``: (rows, cols) elements per tile.
    - ``local_bytes``: bytes of local memory per site; ``reserved_base``: first byte a program may use;
      ``alignment``: byte alignment of every buffer.
    - ``acc_tiles``: tiles one accumulator acquire may hold (16-bit); ``acc_tiles_fp32`` with 32-bit accumulate.
    - ``acc_spill``: whether accumulator contents may be packed to local memory and reloaded.
    - ``ordered_writes``: two multicasts from one engine on one virtual channel (``McastSend.vc``) land in issue order
      (same NoC and static VC, on Wormhole and Blackhole); when False a ``Flush`` must separate a data multicast from
      the flag multicast that announces it. On two channels no target orders them: a ``WriteBarrier`` must.
    - ``flush_before_flag``: the vendor's kernels put their flush between a data multicast and its flag multicast
      on this target (the multicast's source may be changed before the NoC issued it); the compiler places it there
      too. It is where the flush goes, not a rule the checker adds: the source's reuse is ``async-source-reuse``'s.
    - ``tile_bytes``: bytes per tile per dtype; ``max_cbs`` / ``max_semaphores``: per site.
    - ``multicast``: one site can write the same pages into a rectangle of sites (a NoC multicast); where False,
      ``place`` forms no multicast group and every site loads its own operands.
    - ``packer_l1_acc``: the packer can add the accumulator into the local-memory pages it packs to instead of
      replacing them (``PackAcc(accumulate=True)``): the matmul's in-place and packer-accumulate forms need it.
    """

    name: str
    mesh: tuple[int, int]
    tile: tuple[int, int]
    local_bytes: int
    reserved_base: int
    alignment: int
    acc_tiles: int
    acc_tiles_fp32: int
    acc_spill: bool
    ordered_writes: bool
    tile_bytes: dict[str, int]
    max_cbs: int
    max_semaphores: int
    multicast: bool = True
    packer_l1_acc: bool = False
    flush_before_flag: bool = False
    sources: dict[str, str] = attrs.field(factory=dict)

    def acc_capacity(self, dtype: str) -> int:
        """Tiles one accumulator acquire may hold at ``dtype``: ``acc_tiles_fp32`` for a 32-bit dtype (fp32,
        int32, uint32: DST in 32-bit mode holds half as many tiles, reg_api.h / dest_helpers.hpp), else
        ``acc_tiles``."""
        return self.acc_tiles_fp32 if dtype in ACC_32BIT else self.acc_tiles

    def bytes_per_tile(self, dtype: str) -> int:
        """Bytes of one tile of ``dtype``; raises ``ParseError`` for a dtype the target lacks."""
        try:
            return self.tile_bytes[dtype]
        except KeyError:
            raise ParseError("dtype",
                             f"target {self.name} has no dtype {dtype!r} (has {sorted(self.tile_bytes)})") from None


#: Dtypes an accumulator holds at 32 bits (fp32_dest_acc_en on Tenstorrent; 32-bit fragments on the GPU).
ACC_32BIT = frozenset({"fp32", "int32", "uint32"})

_TT_TILE_BYTES = {
    "bf16": 2048, "fp16": 2048, "fp32": 4096, "bfp8_b": 1088, "bfp4_b": 576, "int32": 4096, "uint32": 4096,
}

WORMHOLE = Target(
    name="wormhole_b0",
    mesh=(8, 8),
    tile=(32, 32),
    local_bytes=1_499_136,
    reserved_base=103_712,
    alignment=16,
    acc_tiles=8,
    acc_tiles_fp32=4,
    acc_spill=True,
    ordered_writes=True,
    tile_bytes=_TT_TILE_BYTES,
    max_cbs=32,
    max_semaphores=16,
    sources={
        "mesh": "n150/n300 8x8 compute grid: tt_metal/core_descriptors/*.yaml",
        "local_bytes": "MEM_L1_SIZE 1464 KiB: tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h",
        "reserved_base": "l1_unreserved_base 103712: tt-mlir system descriptor (tt-mlir #7297)",
        "alignment": "L1 NoC alignment 16 B: tech_reports/Blackhole/BlackholeBringUpProgrammingGuide.md",
        "acc_tiles": "DST SyncHalf 8 tiles (16-bit), 4 with fp32 accumulate: compute/reg_api.h, dest_helpers.hpp",
        "ordered_writes": "same NoC + static VC keeps multicasts ordered on Wormhole: reference/tenstorrent.md §1.3",
        "tile_bytes": "tt_metal/api/tt-metalium/constants.hpp",
        "max_cbs": "circular_buffer_constants.h: 32 CB indices on a Wormhole device",
        "max_semaphores": "NUM_SEMAPHORES = 16: tt_metal/impl/buffers/semaphore.hpp",
        "packer_l1_acc": "llk_pack_reconfig_l1_acc(enable): tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/"
                         "llk_pack_api.h (tenstorrent/tt-metal 038425bc); used by the matmul's PACKER_L1_ACC path",
    },
    packer_l1_acc=True,
)

BLACKHOLE = Target(
    name="blackhole",
    mesh=(13, 10),
    tile=(32, 32),
    local_bytes=1_572_864,
    reserved_base=103_712,
    alignment=16,
    acc_tiles=8,
    acc_tiles_fp32=4,
    acc_spill=True,
    ordered_writes=True,
    flush_before_flag=True,
    tile_bytes=_TT_TILE_BYTES,
    max_cbs=64,
    max_semaphores=16,
    sources={
        "mesh": "13x10 with one column for dispatch: BlackholeBringUpProgrammingGuide.md; tt-mlir #6776",
        "local_bytes": "MEM_L1_SIZE 1536 KiB: tt_metal/hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h",
        "reserved_base": "assumed equal to Wormhole's l1_unreserved_base (no Blackhole figure published)",
        "alignment": "L1 NoC alignment 16 B: BlackholeBringUpProgrammingGuide.md",
        "acc_tiles": "DST SyncHalf 8 tiles (16-bit): compute/reg_api.h",
        "ordered_writes": "same NoC + static VC keeps two multicasts ordered across command buffers: the firmware "
                          "leaves the command-buffer FIFOs off (blackhole/noc_nonblocking_api.h:194-196 "
                          "noc_cmd_buf_ready, :764-806 noc_init_one; NIU_CFG_0_CMD_BUFFER_FIFO_EN never set), the "
                          "mechanism of the 2024 reorder (tt-metal PR #12627, #12678); the vendor's kernels rely on it "
                          "(reader_bmm_tile_layout_in0_sender_padding.cpp:400-405)",
        "flush_before_flag": "#ifdef ARCH_BLACKHOLE noc_async_writes_flushed() between the data and the flag "
                             "multicast, for the source: reader_bmm_tile_layout_in0_sender_padding.cpp:402-406",
        "tile_bytes": "tt_metal/api/tt-metalium/constants.hpp",
        "max_cbs": "circular_buffer_constants.h: 64 CB indices on Blackhole",
        "max_semaphores": "NUM_SEMAPHORES = 16: tt_metal/impl/buffers/semaphore.hpp",
        "packer_l1_acc": "llk_pack_reconfig_l1_acc(enable): tt_metal/hw/ckernels/blackhole/metal/llk_api/"
                         "llk_pack_api.h (tenstorrent/tt-metal 00d08244)",
    },
    packer_l1_acc=True,
)

GPU = Target(
    name="gpu_sm80",
    mesh=(108, 1),
    tile=(16, 16),
    local_bytes=167_936,
    reserved_base=1_024,
    alignment=128,
    acc_tiles=8,
    acc_tiles_fp32=8,
    acc_spill=False,
    ordered_writes=False,
    tile_bytes={"bf16": 512, "fp16": 512, "fp32": 1024, "int32": 1024},
    max_cbs=64,
    max_semaphores=16,
    multicast=False,
    sources={
        "multicast": "no thread block clusters or TMA multicast before compute capability 9.0: CUDA C Programming "
                     "Guide, Thread Block Clusters; every block loads its own operands (through L2)",
        "mesh": "108 SMs on A100 (one block per SM): NVIDIA A100 Tensor Core GPU Architecture whitepaper",
        "local_bytes": "164 KB shared memory per SM (compute capability 8.0): CUDA C Programming Guide, Table 21",
        "reserved_base": "1 KB per block reserved by the system: CUDA C Programming Guide, shared memory notes",
        "alignment": "128 B shared-memory swizzle granule used by block-level pipelines (assumption, stated)",
        "acc_tiles": "register-resident accumulators: no spill (DESIGN §2); 8 16x16 fragments per warp group, assumed",
        "ordered_writes": "cp.async/TMA writes are not ordered without a fence: PTX ISA memory model",
        "packer_l1_acc": "none: accumulators are register fragments, stored once (DESIGN §2); the target never spills",
    },
)

TARGETS: dict[str, Target] = {t.name: t for t in (WORMHOLE, BLACKHOLE, GPU)}
ALIASES: dict[str, str] = {"wormhole": "wormhole_b0", "blackhole": "blackhole", "gpu": "gpu_sm80"}


def get_target(name: str) -> Target:
    """The built-in target called ``name`` (or an alias: wormhole, blackhole, gpu); ``ParseError`` if none."""
    key = ALIASES.get(name, name)
    if key not in TARGETS:
        raise ParseError("target", f"unknown target {name!r}; known: {', '.join(sorted(TARGETS))}")
    return TARGETS[key]


@attrs.frozen
class Latencies:
    """Per-op costs in cycles of the target's clock, for the throughput bound (``verispatial.petri.throughput``) and
    the timed run of the interpreter it is tested against. Kept beside the ``Target`` (not in the program format):
    they describe performance, not correctness. ``sources`` says where each number comes from, or that it is an
    assumption.

    - ``noc_bytes_per_cycle``: payload bytes one NoC link moves per cycle (one flit);
    - ``noc_base``: cycles from the issuing NIU to the first router plus from the last router to the receiving NIU;
    - ``noc_hop``: cycles per router-to-router hop; ``dram_hops``: hops assumed between a site and the DRAM bank a
      tensor's tiles come from (``ReadTiles``/``WriteTiles``);
    - ``issue``: cycles an engine spends issuing one NoC command (read, write, multicast, atomic increment);
    - ``cb_update``: cycles of a ``Push``/``Pop`` (a CB pointer update) or a ``SemSet`` (a local store);
    - ``matmul_tile``, ``eltwise_tile``: cycles per 32x32 tile of a matmul step and of an elementwise step;
    - ``pack_tile``: cycles to pack one tile from the accumulator to local memory.

    Waits (``Reserve``, ``Wait``, ``SemWait``) and barriers cost nothing of their own: they only wait.
    """

    noc_bytes_per_cycle: int
    noc_base: int
    noc_hop: int
    dram_hops: int
    issue: int
    cb_update: int
    matmul_tile: int
    eltwise_tile: int
    pack_tile: int
    sources: dict[str, str] = attrs.field(factory=dict)


_TT_LATENCY_SOURCES = {
    "noc_bytes_per_cycle": "one 256-bit (32 B) flit per cycle per NoC link: tenstorrent/tt-isa-documentation "
                           "WormholeB0/NoC/README.md, Performance",
    "noc_base": "NIU to router ~5 cycles + router to NIU ~5 cycles: tt-isa-documentation WormholeB0/NoC/README.md",
    "noc_hop": "router to neighbouring router 9 cycles: tt-isa-documentation WormholeB0/NoC/README.md",
    "dram_hops": "assumption: 4 hops on average between a worker and a DRAM tile of the 10x12 torus",
    "issue": "assumption: 8 cycles of MMIO register writes to issue one NoC command (dataflow_api.h noc_async_*)",
    "cb_update": "assumption: 1 cycle (a CB pointer register write, cb_api.h cb_push_back/cb_pop_front)",
    "matmul_tile": "16 MVMUL (8x16 @ 16x16) per 32x32x32 tile at LoFi, one per cycle: tt-isa-documentation "
                   "WormholeB0/TensixTile/TensixCoprocessor/MVMUL.md (4096 flop/cycle peak at 1 GHz)",
    "eltwise_tile": "assumption: 8 ELWADD/ELWMUL (8x16 rows each) per 32x32 tile, one per cycle",
    "pack_tile": "assumption: 32 B per cycle from DST to L1, 2048 B bf16 tile = 64 cycles",
}

#: Latencies per built-in target name (``latencies_of``).
LATENCIES: dict[str, Latencies] = {
    "wormhole_b0": Latencies(32, 10, 9, 4, 8, 1, 16, 8, 64, dict(_TT_LATENCY_SOURCES)),
    "blackhole": Latencies(64, 10, 9, 4, 8, 1, 16, 8, 64, {
        **_TT_LATENCY_SOURCES,
        "noc_bytes_per_cycle": "one 512-bit (64 B) flit per cycle per link, ~5/9/~5 cycle hops as on Wormhole: "
                               "tenstorrent/tt-isa-documentation BlackholeA0/NoC/README.md, Performance",
    }),
    "gpu_sm80": Latencies(32, 200, 0, 0, 4, 1, 16, 4, 16, {
        "noc_bytes_per_cycle": "assumption: 32 B per cycle per SM from L2 (A100 whitepaper: ~5 TB/s L2 over 108 SMs "
                               "at 1.41 GHz)",
        "noc_base": "assumption: ~200 cycles global-memory latency (CUDA C Programming Guide, memory hierarchy)",
        "noc_hop": "none: no mesh hops on a GPU", "dram_hops": "none",
        "issue": "assumption", "cb_update": "assumption (an mbarrier arrive)",
        "matmul_tile": "assumption: one 16x16x16 mma.sync step per tile per warp group",
        "eltwise_tile": "assumption", "pack_tile": "assumption (fragment store to shared memory)",
    }),
}


def latencies_of(target: Target) -> Latencies:
    """The latencies of ``target`` (by name; an inline target not among the built-in ones gets the Wormhole
    numbers, every one then an assumption)."""
    got = LATENCIES.get(target.name)
    if got is not None:
        return got
    base = LATENCIES["wormhole_b0"]
    return attrs.evolve(base, sources={k: f"assumed equal to wormhole_b0's: {v}" for k, v in base.sources.items()})
