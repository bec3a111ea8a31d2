"""Programs with several engines waiting on one circular buffer, shaped like SDPA decode's ``cur_pos`` hand-off
(tt-metal ``ttnn/cpp/ttnn/operations/transformer/sdpa_decode/device/kernels``: the reader fills one page holding the
position vector, compute and the writer both wait on it and read it, compute pops it — as before the fix of tt-metal
#44366; ttnn 0.81.1 gives each consumer its own buffer, c_8 and c_15, ``reader_decode_all.cpp``)."""

from __future__ import annotations

from verispatial.ir import (
    WORMHOLE,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    SemInc,
    SemWait,
    Site,
    Tensor,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.core import Dynamic
from verispatial.ir.ops import AcquireAcc, Compute, Operand, PackAcc, ReleaseAcc
from verispatial.ir.program import Semaphore

SITE = Site(0, 0)
READER, COMPUTE, WRITER = "(0,0).reader", "(0,0).compute", "(0,0).writer"
CUR_POS, OUT = 0, 1  # c_8: the cur_pos page; c_16: the attention output
BASE = 103712  # the first usable L1 byte of the Wormhole target


def _reader(pushes: int = 1) -> tuple[Op, ...]:
    """reader_decode_all.cpp: cb_reserve_back(c_8, 1); noc_async_read(pos page); read barrier; cb_push_back(c_8, 1)."""
    one = (Reserve(CUR_POS, 1), ReadTiles("cur_pos", Addr(0), 1, CUR_POS), ReadBarrier(), Push(CUR_POS, 1))
    return one * pushes


def _compute(*, pop: bool = True, handshake: bool = False) -> tuple[Op, ...]:
    """sdpa_flash_decode.cpp: cb_wait_front(cur_pos, 1), read the position, compute the output block, cb_pop_front."""
    ops: list[Op] = [Wait(CUR_POS, 1), AcquireAcc(1, "bf16"), Compute("sdpa", 1, (Operand(CUR_POS, 1),)),
                     Reserve(OUT, 1), PackAcc(OUT, 1), ReleaseAcc(), Push(OUT, 1)]
    if pop:
        if handshake:
            ops.append(SemWait(0, WaitCond.GE, 1))  # the writer has read the position
        ops.append(Pop(CUR_POS, 1))
    return tuple(ops)


def _writer(*, handshake: bool = False, pop: bool = False, read_index: bool = True) -> tuple[Op, ...]:
    """writer_decode_all.cpp: cb_wait_front(c_8, 1); cur_pos = index_ptr[...] (its index, read through get_read_ptr);
    write the output rows [0, cur_pos]."""
    dyn = Dynamic("cur_pos", 0, 3, 1, CUR_POS if read_index else None)
    ops: list[Op] = [Wait(CUR_POS, 1), Wait(OUT, 1), WriteTiles(OUT, "out", Addr(0, (), dyn), 1), WriteBarrier(),
                     Pop(OUT, 1)]
    if handshake:
        ops += [SemInc(0, SITE, 1), AtomicBarrier()]
    if pop:
        ops.append(Pop(CUR_POS, 1))
    return tuple(ops)


def sdpa_cur_pos(*, handshake: bool, compute_pops: bool = True, writer_pops: bool = False, pushes: int = 1,
                 capacity: int = 1) -> Program:
    """The cur_pos hand-off: the reader pushes ``pushes`` pages into a ``capacity``-page c_8; compute waits, reads and
    (``compute_pops``) pops it; the writer waits and reads its index from it, and (``handshake``) then tells compute
    with a semaphore increment that compute waits for before its pop."""
    tensors = (Tensor("cur_pos", (32, 32), "bf16", Role.INPUT), Tensor("out", (32, 128), "bf16", Role.STATE))
    buffers = (Buffer(CUR_POS, "c_8", SITE, 8, 1, capacity, "bf16"), Buffer(OUT, "c_16", SITE, 16, 1, 2, "bf16"))
    sems = (Semaphore(0, "cur_pos_read", (SITE,), 0, host_init=True),) if handshake else ()
    programs = (EngineProgram(SITE, Engine.READER, _reader(pushes)),
                EngineProgram(SITE, Engine.COMPUTE, _compute(pop=compute_pops, handshake=handshake)),
                EngineProgram(SITE, Engine.WRITER, _writer(handshake=handshake, pop=writer_pops)))
    memory = (BufferAt(CUR_POS, BASE, capacity * 2048), BufferAt(OUT, BASE + capacity * 2048, 2 * 2048))
    return Program("sdpa_cur_pos", WORMHOLE, tensors=tensors, buffers=buffers, semaphores=sems, programs=programs,
                   memory=memory)
