"""The shipped examples: the generator reproduces the committed JSON, every file loads and validates, and the
reuse-multicast matmul has the shape and op sequences of reference/tenstorrent.md §2."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from verispatial.ir import (
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Compute,
    Engine,
    EngineProgram,
    Flush,
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
    Reserve,
    Role,
    SemInc,
    SemRole,
    SemSet,
    SemWait,
    Site,
    Term,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.program import walk
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EQ, GE = WaitCond.EQ, WaitCond.GE


def _load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_examples", EXAMPLES / "build_examples.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _load_builder()
# Model graphs under examples/models/ are compiler inputs, not programs: the passes' tests own them.
COMMITTED = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.json")
                   if p.relative_to(EXAMPLES).parts[0] != "models")


@functools.cache
def _load(rel: str) -> Program:
    return load_program(EXAMPLES / rel)


@functools.cache
def _built() -> dict[str, Program]:
    return BUILD.build_all()  # type: ignore[no-any-return]


def _prog(p: Program, x: int, y: int, engine: Engine) -> EngineProgram:
    (ep,) = [ep for ep in p.programs if ep.site == Site(x, y) and ep.engine == engine]
    return ep


@pytest.fixture(scope="module")
def wormhole() -> Program:
    return _load("matmul_reuse_mcast_wormhole.json")


@pytest.fixture(scope="module")
def blackhole() -> Program:
    return _load("matmul_reuse_mcast_blackhole.json")


# --- generator ------------------------------------------------------------------------------------------


def test_generator_reproduces_committed_files(tmp_path: Path) -> None:
    written = BUILD.write_all(tmp_path)
    produced = sorted(p.relative_to(tmp_path).as_posix() for p in written)
    assert produced == COMMITTED
    for rel in produced:
        assert (tmp_path / rel).read_bytes() == (EXAMPLES / rel).read_bytes(), rel


def test_catalogue_lists_every_file_once() -> None:
    assert COMMITTED == [
        "all_to_all_read.json",
        "broken/a_reserve_over_capacity.json",
        "broken/b_ring_straddle.json",
        "broken/c_trip_sender.json",
        "broken/d_blackhole_no_flush.json",
        "broken/e_read_no_barrier.json",
        "broken/f_memory_overlap.json",
        "broken/g_rendezvous_short.json",
        "broken/h_writer_pops_before_flush.json",
        "broken/i_compute_before_wait.json",
        "broken/j_no_acquire.json",
        "broken/k_output_unwritten.json",
        "broken/l_push_unfilled.json",
        "broken/m_alias_pack_clobber.json",
        "broken/n_mcast_before_read_barrier.json",
        "broken/o_mcast_slot_reused.json",
        "broken/p_flag_source_set_by_compute.json",
        "broken/q_peel_reload_first.json",
        "broken/r_release_overshoot.json",
        "broken/s_flag_reset_late.json",
        "broken/t_kv_no_rendezvous.json",
        "broken/u_forwarder_pops_early.json",
        "broken/v1_vendor_receiver_no_ack.json",
        "broken/v2_ready_reset_after_flag.json",
        "broken/w_acc_fp32_overflow.json",
        "broken/x_acc_overrun.json",
        "broken/y_scaler_push_unfilled.json",
        "broken/z_remote_write_inc_first.json",
        "broken/za_remote_read_unpublished.json",
        "broken/zl_copy_before_wait.json",
        "broken/zm_copy_undrained.json",
        "broken/zn_scratch_load_unlanded.json",
        "broken/zo_local_up_lost_increment.json",
        "counter_release.json",
        "forwarder.json",
        "kv_cache_update.json",
        "local_copy.json",
        "local_up.json",
        "matmul_reuse_mcast_blackhole.json",
        "matmul_reuse_mcast_wormhole.json",
        "mcast_pair.json",
        "peeled_k_loop.json",
        "pipeline_small.json",
        "reduce_scaler.json",
        "remote_write.json",
        "scratch_slices.json",
        "three_sections.json",
        "valid_source.json",
        "vendor/argmax_start_wait_min.json",
        "vendor/broken/argmax_start_exact_wait.json",
        "vendor/broken/contributed_multicast_as_shipped.json",
        "vendor/broken/dispatch_mailbox_no_barrier.json",
        "vendor/broken/eltwise_binary_sharded_cb_overrun.json",
        "vendor/broken/layernorm_sharded_read_before_valid.json",
        "vendor/broken/move_overlap_atomic_pending.json",
        "vendor/broken/move_overlap_num_dests.json",
        "vendor/broken/sampling_wt1_wait2.json",
        "vendor/broken/sdpa_decode_cur_pos_shared.json",
        "vendor/broken/softmax_w_causal_compute_batch_mask_reader.json",
        "vendor/broken/sort_exchange_exact_wait.json",
        "vendor/contributed_multicast.json",
        "vendor/dispatch_mailbox.json",
        "vendor/eltwise_binary.json",
        "vendor/eltwise_binary_sharded.json",
        "vendor/layernorm_sharded.json",
        "vendor/sdpa_decode_cur_pos.json",
        "vendor/softmax_w.json",
        "vendor/softmax_w_causal_mask.json",
        "vendor/softmax_w_scale_mask.json",
        "vendor/sort_exchange_data.json",
        "vendor/sort_exchange_wait_min.json",
        "vendor/ttlang_multinode_matmul.json",
        "vendor_receiver.json",
    ]


@pytest.mark.parametrize("rel", COMMITTED)
def test_every_example_loads_validates_and_equals_the_builder(rel: str) -> None:
    p = _load(rel)
    assert validate(p) == []
    assert p == _built()[rel]
    assert p.name == Path(rel).stem


def test_every_example_is_named_in_the_readme() -> None:
    text = (EXAMPLES / "README.md").read_text()
    for rel in COMMITTED:
        assert f"`{rel}`" in text, rel


# --- the Wormhole matmul: shape ---------------------------------------------------------------------------


def test_wormhole_matmul_entities(wormhole: Program) -> None:
    p = wormhole
    assert p.target.name == "wormhole_b0"
    assert [(t.name, t.shape, t.role) for t in p.tensors] == [
        ("in0", (2048, 512), Role.INPUT),
        ("in1", (512, 1024), Role.PARAM),
        ("out", (2048, 1024), Role.OUTPUT),
    ]
    assert len(p.programs) == 48
    assert len(p.buffers) == 64
    assert len(p.groups) == 10
    assert [(s.name, s.role, s.init, len(s.sites)) for s in p.semaphores] == [
        ("in0_sender_sem", SemRole.MCAST_READY, 0, 16),
        ("in0_receiver_sem", SemRole.MCAST_VALID, 0, 16),
        ("in1_sender_sem", SemRole.MCAST_READY, 0, 16),
        ("in1_receiver_sem", SemRole.MCAST_VALID, 0, 16),
    ]
    assert [(g.sender, g.rect, len(g.destinations())) for g in p.groups[:3]] == [
        (Site(0, 0), (1, 0, 7, 0), 7),
        (Site(0, 1), (1, 1, 7, 1), 7),
        (Site(0, 0), (0, 1, 0, 1), 1),
    ]
    assert p.groups[9].sender == Site(7, 0)
    assert p.groups[9].destinations() == (Site(7, 1),)
    assert not any(g.loopback for g in p.groups)


def test_wormhole_matmul_buffers_and_memory_of_site_3_1(wormhole: Program) -> None:
    p = wormhole
    b0 = 4 * (1 * 8 + 3)  # site (3,1) is the 12th site in (y, x) order
    bufs = p.buffers[b0 : b0 + 4]
    assert [(b.name, b.site, b.cb, b.capacity, b.alias_of) for b in bufs] == [
        ("c_0", Site(3, 1), 0, 128, None),
        ("c_1", Site(3, 1), 1, 16, None),
        ("c_24", Site(3, 1), 24, 128, None),
        ("c_16", Site(3, 1), 16, 128, b0 + 2),
    ]
    mem = {m.buf: (m.offset, m.size) for m in p.memory}
    assert mem[b0] == (103_712, 262_144)  # c_0 at reserved_base
    assert mem[b0 + 1] == (365_856, 32_768)
    assert mem[b0 + 2] == (398_624, 262_144)
    assert mem[b0 + 3] == (398_624, 262_144)  # c_16 aliases c_24's bytes
    assert all(off % 16 == 0 for off, _ in mem.values())
    assert max(off + size for off, size in mem.values()) == 660_768  # 544 KiB past reserved_base


def test_k_loops_are_loops_not_unrolled(wormhole: Program) -> None:
    for ep in wormhole.programs:
        loops = [op for op in walk(ep.ops) if isinstance(op, Loop)]
        if ep.engine is Engine.READER:
            assert [(lp.var, lp.count) for lp in loops if lp.var == "k"] == [("k", 8)]
            # Two multicast halves at most per site, each written once, inside the K loop.
            assert sum(isinstance(op, McastSend) for op in walk(ep.ops)) == (ep.site.x == 0) + (ep.site.y == 0)
        elif ep.engine is Engine.COMPUTE:
            assert [(lp.var, lp.count) for lp in loops] == [("k", 6), ("i", 8), ("j", 2), ("i", 8), ("j", 2)]
            # Block 0 unrolls its 16 sub-blocks: cumulative c_16 reserves of 8, 16, ..., 128 pages.
            c16 = ep.ops[0].buf + 3 if isinstance(ep.ops[0], Wait) else -1
            reserves = [op.pages for op in ep.ops if isinstance(op, Reserve) and op.buf == c16]
            assert reserves == [8 * (s + 1) for s in range(16)]
            assert len(ep.ops) == (2 + 16 * 7 + 2) + 1 + 5  # block 0, middle loop, last block


# --- exact op sequences -----------------------------------------------------------------------------------

# (0,0): in0 sender and in1 sender. Buffers c_0=0, c_1=1; groups in0 row 0 = 0, in1 column 0 = 2. As in the vendor
# kernel there is no per-block flush on Wormhole (the slot's reuse is ordered by the next block's ready wait).
SENDER_00_WORMHOLE: list[Op] = [
    SemSet(1, 1),
    SemSet(3, 1),
    Loop("k", 8, (
        Reserve(0, 64),
        Loop("r", 32, (ReadTiles("in0", Addr(0, (Term("r", 16), Term("k", 2))), 2, 0),)),
        ReadBarrier(),
        SemWait(0, EQ, 7),
        SemSet(0, 0),
        McastSend(0, 64, 0, 7),
        McastSetValid(1, 0, 7),
        Push(0, 64),
        Reserve(1, 8),
        Loop("r", 2, (ReadTiles("in1", Addr(0, (Term("r", 32), Term("k", 64))), 4, 1),)),
        ReadBarrier(),
        SemWait(2, EQ, 1),
        SemSet(2, 0),
        McastSend(1, 8, 2, 1),
        McastSetValid(3, 2, 1),
        Push(1, 8),
    )),
    WriteBarrier(),
    AtomicBarrier(),
]


def test_sender_reader_00_wormhole(wormhole: Program) -> None:
    assert list(_prog(wormhole, 0, 0, Engine.READER).ops) == SENDER_00_WORMHOLE


def test_sender_reader_01_is_in0_sender_in1_receiver(wormhole: Program) -> None:
    # (0,1): c_0=32, c_1=33; in0 group of row 1 = 1; reads rows 32..63 of in0 (base 32*16 = 512).
    assert list(_prog(wormhole, 0, 1, Engine.READER).ops) == [
        SemSet(1, 1),
        Loop("k", 8, (
            Reserve(32, 64),
            Loop("r", 32, (ReadTiles("in0", Addr(512, (Term("r", 16), Term("k", 2))), 2, 32),)),
            ReadBarrier(),
            SemWait(0, EQ, 7),
            SemSet(0, 0),
            McastSend(32, 64, 1, 7),
            McastSetValid(1, 1, 7),
            Push(32, 64),
            Reserve(33, 8),
            SemSet(3, 0),
            SemInc(2, Site(0, 0), 1),
            SemWait(3, EQ, 1),
            Push(33, 8),
        )),
        WriteBarrier(),
        AtomicBarrier(),
    ]


def test_receiver_reader_31(wormhole: Program) -> None:
    # (3,1): c_0=44, c_1=45; in0 from (0,1), in1 from (3,0).
    assert list(_prog(wormhole, 3, 1, Engine.READER).ops) == [
        Loop("k", 8, (
            Reserve(44, 64),
            SemSet(1, 0),
            SemInc(0, Site(0, 1), 1),
            SemWait(1, EQ, 1),
            Push(44, 64),
            Reserve(45, 8),
            SemSet(3, 0),
            SemInc(2, Site(3, 0), 1),
            SemWait(3, EQ, 1),
            Push(45, 8),
        )),
        WriteBarrier(),
        AtomicBarrier(),
    ]


def test_in1_sender_reader_70_reads_its_column(wormhole: Program) -> None:
    # (7,0): c_1=29, column group 9, in1 columns 28..31.
    ops = _prog(wormhole, 7, 0, Engine.READER).ops
    assert ops[0] == SemSet(3, 1)
    k_loop = ops[1]
    assert isinstance(k_loop, Loop)
    assert list(k_loop.body[5:]) == [
        Reserve(29, 8),
        Loop("r", 2, (ReadTiles("in1", Addr(28, (Term("r", 32), Term("k", 64))), 4, 29),)),
        ReadBarrier(),
        SemWait(2, EQ, 1),
        SemSet(2, 0),
        McastSend(29, 8, 9, 1),
        McastSetValid(3, 9, 1),
        Push(29, 8),
    ]


def test_writer_31(wormhole: Program) -> None:
    # out tile (32*1 + 4i + r, 4*3 + 2j): base 1024 + 12 = 1036; c_16 = 47.
    assert list(_prog(wormhole, 3, 1, Engine.WRITER).ops) == [
        Loop("i", 8, (Loop("j", 2, (
            Wait(47, 8),
            Loop("r", 4, (WriteTiles(47, "out", Addr(1036, (Term("i", 128), Term("r", 32), Term("j", 2))), 2),)),
            WriteBarrier(),
            Pop(47, 8),
        )),)),
    ]


#: The operands every matmul step of site (3,1) unpacks: the in0 block (c_0 = b44) and the in1 block (c_1 = b45).
MATMUL_INS = (Operand(44, 64), Operand(45, 8))


def test_compute_31_middle_and_last_blocks(wormhole: Program) -> None:
    ops = _prog(wormhole, 3, 1, Engine.COMPUTE).ops
    assert list(ops[:9]) == [
        Wait(44, 64), Wait(45, 8),
        AcquireAcc(8, "bf16"), Compute("matmul", 8, MATMUL_INS), Reserve(47, 8), Reserve(46, 8), PackAcc(46, 8),
        Push(46, 8), ReleaseAcc(),
    ]
    assert list(ops[114:116]) == [Pop(44, 64), Pop(45, 8)]

    def reload(out: int) -> tuple[Op, ...]:
        return (Loop("i", 8, (Loop("j", 2, (
            AcquireAcc(8, "bf16"), Wait(46, 8), Compute("copy", 8, (Operand(46, 8),)), Pop(46, 8),
            Compute("matmul", 8, MATMUL_INS),
            Reserve(out, 8), PackAcc(out, 8), Push(out, 8), ReleaseAcc(),
        )),)),)

    assert ops[116] == Loop("k", 6, (Wait(44, 64), Wait(45, 8), *reload(46), Pop(44, 64), Pop(45, 8)))
    assert list(ops[117:]) == [Wait(44, 64), Wait(45, 8), *reload(47), Pop(44, 64), Pop(45, 8)]


def test_address_maxima_stay_inside_tensors(wormhole: Program) -> None:
    tiles = {t.name: t.tiles(wormhole.target.tile) for t in wormhole.tensors}
    assert tiles == {"in0": 1024, "in1": 512, "out": 2048}
    hi = {"k": 7, "r": 31, "i": 7, "j": 1}
    worst: dict[str, int] = {}
    for ep in wormhole.programs:
        for op in walk(ep.ops):
            if isinstance(op, ReadTiles | WriteTiles):
                # every coefficient is positive, so the maximum is at the top of each loop range
                rmax = 31 if op.tensor == "in0" else (1 if op.tensor == "in1" else 3)
                env = hi | {"r": rmax}
                worst[op.tensor] = max(worst.get(op.tensor, 0), op.addr.at(env) + op.tiles)
    assert worst == {"in0": 1024, "in1": 512, "out": 2048}


# --- variants ----------------------------------------------------------------------------------------------


def _k_body(p: Program, x: int, y: int) -> tuple[Op, ...]:
    loop = next(op for op in _prog(p, x, y, Engine.READER).ops if isinstance(op, Loop))
    return loop.body


def test_blackhole_flush_between_data_and_flag(blackhole: Program) -> None:
    assert blackhole.target.name == "blackhole"
    assert list(_k_body(blackhole, 0, 0)[3:9]) == [
        SemWait(0, EQ, 7), SemSet(0, 0), McastSend(0, 64, 0, 7), Flush(), McastSetValid(1, 0, 7), Push(0, 64),
    ]
    # Exactly one flush per multicast half, nowhere else.
    assert sum(isinstance(op, Flush) for op in walk(_prog(blackhole, 0, 0, Engine.READER).ops)) == 2
    assert sum(isinstance(op, Flush) for op in walk(_prog(blackhole, 3, 1, Engine.READER).ops)) == 0


def test_d_blackhole_no_flush_is_the_single_buffered_pair_on_blackhole() -> None:
    # The multicast pair with one block of c_0 on each site, on Blackhole, and no flush anywhere: the sender's next
    # Reserve and ReadTiles refill the page its data multicast reads.
    d, pair = _load("broken/d_blackhole_no_flush.json"), _load("mcast_pair.json")
    assert d.target.name == "blackhole"
    assert not any(isinstance(op, Flush) for ep in d.programs for op in walk(ep.ops))
    assert [b.capacity for b in d.buffers] == [2, 2]
    assert [b.capacity for b in pair.buffers] == [4, 4]
    assert [ep.ops for ep in d.programs] == [ep.ops for ep in pair.programs]


def test_c_trip_sender_splits_only_the_00_reader(wormhole: Program) -> None:
    c = _load("broken/c_trip_sender.json")
    assert c.trips == (Trip("t", 8),)
    ops = _prog(c, 0, 0, Engine.READER).ops
    assert [(op.var, op.count) for op in ops if isinstance(op, Loop)] == [("k", "t"), ("k", 8)]
    in0, in1 = (op for op in ops if isinstance(op, Loop))
    whole = SENDER_00_WORMHOLE[2]
    assert isinstance(whole, Loop)
    assert in0.body + in1.body == whole.body
    assert [ep for ep in c.programs if (ep.site, ep.engine) != (Site(0, 0), Engine.READER)] == [
        ep for ep in wormhole.programs if (ep.site, ep.engine) != (Site(0, 0), Engine.READER)]


def test_small_broken_programs() -> None:
    a = _load("broken/a_reserve_over_capacity.json")
    assert a.buffers[0].capacity == 4
    assert _prog(a, 0, 0, Engine.READER).ops[0] == Reserve(0, 8)
    b = _load("broken/b_ring_straddle.json")
    pushes = [op.pages for op in _prog(b, 0, 0, Engine.READER).ops if isinstance(op, Push)]
    assert (b.buffers[0].capacity, pushes) == (4, [2, 2, 1, 2, 2])
    assert _prog(b, 0, 0, Engine.WRITER).ops[0].count == 9  # type: ignore[union-attr]
    e = _load("broken/e_read_no_barrier.json")
    assert _prog(e, 0, 0, Engine.READER).ops[0].body[2:] == (Push(0, 1), ReadBarrier())  # type: ignore[union-attr]
    f = _load("broken/f_memory_overlap.json")
    assert [(m.offset, m.size) for m in f.memory] == [(103_712, 4096), (105_760, 4096), (109_856, 2048)]
    small = _load("pipeline_small.json")
    assert [(m.offset, m.size) for m in small.memory] == [(103_712, 4096), (107_808, 4096), (111_904, 2048)]
    assert (small.programs, small.buffers) == (f.programs, f.buffers)


# --- three sections ---------------------------------------------------------------------------------------


def test_three_sections_rendezvous() -> None:
    p = _load("three_sections.json")
    assert [(s.name, s.barrier_after) for s in p.sections] == [
        ("copy_x_to_a", True), ("copy_a_to_b", True), ("copy_b_to_y", False)]
    assert [(t.name, t.role) for t in p.tensors] == [
        ("X", Role.INPUT), ("A", Role.ACTIVATION), ("B", Role.ACTIVATION), ("Y", Role.OUTPUT)]
    assert [(ep.site, ep.engine, ep.section_starts, len(ep.ops)) for ep in p.programs] == [
        (Site(0, 0), Engine.READER, (0, 12, 23), 24),
        (Site(0, 0), Engine.WRITER, (0, 5, 9), 10),
        (Site(1, 0), Engine.READER, (0, 4, 9), 9),
        (Site(1, 0), Engine.WRITER, (0, 4, 9), 9),
    ]
    root = _prog(p, 0, 0, Engine.READER).ops
    assert list(root[1:12]) == [
        SemInc(0, Site(0, 0), 1), AtomicBarrier(),
        SemWait(0, GE, 4), SemSet(0, 0),
        SemInc(1, Site(0, 0), 1), SemInc(2, Site(0, 0), 1), SemInc(1, Site(1, 0), 1), SemInc(2, Site(1, 0), 1),
        AtomicBarrier(),
        SemWait(1, GE, 1), SemSet(1, 0),
    ]
    assert root[12:23] == root[1:12]  # section 1 has no work on (0,0): only its rendezvous
    assert list(_prog(p, 1, 0, Engine.WRITER).ops[:4]) == [
        SemInc(0, Site(0, 0), 1), AtomicBarrier(), SemWait(2, GE, 1), SemSet(2, 0)]
    reads = [op for ep in p.programs for op in walk(ep.ops) if isinstance(op, ReadTiles)]
    assert [(op.tensor, op.into) for op in reads] == [("X", 0), ("B", 2), ("A", 1)]


def test_g_rendezvous_short_differs_only_in_the_gather_wait() -> None:
    good, bad = _load("three_sections.json"), _load("broken/g_rendezvous_short.json")
    waits = [op for ep in bad.programs for op in walk(ep.ops) if isinstance(op, SemWait) and op.sem == 0]
    assert waits == [SemWait(0, GE, 3), SemWait(0, GE, 3)]
    fixed = [
        tuple(SemWait(0, GE, 4) if op == SemWait(0, GE, 3) else op for op in ep.ops) for ep in bad.programs
    ]
    assert fixed == [ep.ops for ep in good.programs]
