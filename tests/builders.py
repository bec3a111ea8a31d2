"""Small program builders the interpreter, explorer, checker and compose tests share: two sites, one-tile pages."""

from __future__ import annotations

import re

from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Group,
    Loop,
    Op,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    Semaphore,
    Site,
    Target,
    Tensor,
    Term,
    Trip,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.strategies.programs import UNORDERED as UNORDERED

A, B = Site(0, 0), Site(1, 0)
RA, CA, WA = "(0,0).reader", "(0,0).compute", "(0,0).writer"
RB, CB = "(1,0).reader", "(1,0).compute"
EQ, GE = WaitCond.EQ, WaitCond.GE


def buf(i: int, site: Site = A, cap: int = 4, cb: int | None = None, persistent: bool = False) -> Buffer:
    """Buffer ``i`` on ``site``: ``cap`` one-tile bf16 pages, circular-buffer index ``cb`` (default ``i``);
    ``persistent``: its counters outlive the program, so it must end empty (``balance-cb``)."""
    return Buffer(i, f"buf{i}", site, i if cb is None else cb, 1, cap, "bf16", persistent=persistent)


def sem(i: int, *sites: Site, init: int = 0) -> Semaphore:
    """Semaphore ``i`` with a word on each of ``sites`` (default site A) starting at ``init``."""
    return Semaphore(i, f"s{i}", sites or (A,), init)


def ep(site: Site, engine: Engine, *ops: Op) -> EngineProgram:
    return EngineProgram(site, engine, tuple(ops))


def prog(*programs: EngineProgram, buffers: tuple[Buffer, ...] = (), sems: tuple[Semaphore, ...] = (),
         groups: tuple[Group, ...] = (), tensors: tuple[Tensor, ...] = (), trips: tuple[Trip, ...] = (),
         target: Target = WORMHOLE, memory: tuple[BufferAt, ...] = ()) -> Program:
    """A program called ``t`` of ``programs`` and the given entities (``memory``: its memory map, none by default)."""
    return Program("t", target, tensors=tensors, buffers=buffers, semaphores=sems, groups=groups, trips=trips,
                   programs=programs, memory=memory)


#: Tiles a ``copy_section`` moves.
TILES = 2


def copy_section(name: str, site: Site, src: str, dst: str, *, dtype: str = "bf16", src_dtype: str | None = None,
                 dst_dtype: str | None = None, rows: int = 32, src_role: Role = Role.INPUT,
                 dst_role: Role = Role.OUTPUT, capacity: int = 2, init: str | None = None) -> Program:
    """One section copying ``TILES`` tiles of ``src`` to ``dst`` on ``site``: reader -> ``capacity``-page buffer ->
    writer, as ``compile`` leaves a section (section_starts empty, memory from the reserved base)."""
    b = Buffer(0, "c_0", site, 0, 1, capacity, dtype)
    at = Addr(0, (Term("k", 1),))
    reader = Loop("k", TILES, (Reserve(0, 1), ReadTiles(src, at, 1, 0), ReadBarrier(), Push(0, 1)))
    writer = Loop("k", TILES, (Wait(0, 1), WriteTiles(0, dst, at, 1), WriteBarrier(), Pop(0, 1)))
    tensors = (Tensor(src, (rows, 32 * TILES), src_dtype or dtype, src_role, init),
               Tensor(dst, (rows, 32 * TILES), dst_dtype or dtype, dst_role))
    return Program(name, WORMHOLE, tensors=tensors, buffers=(b,),
                   programs=(EngineProgram(site, Engine.READER, (reader,)),
                             EngineProgram(site, Engine.WRITER, (writer,))),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, capacity * WORMHOLE.tile_bytes[dtype]),))


def chain(*sites: Site) -> list[Program]:
    """Sections copying X -> A0 -> A1 -> ... -> Y, section k on ``sites[k]``."""
    names = ["X", *(f"A{k}" for k in range(len(sites) - 1)), "Y"]
    return [copy_section(f"copy{k}", s, names[k], names[k + 1]) for k, s in enumerate(sites)]


def witnessed(reason: str, engines: int, tail: str = "") -> bool:
    """Whether a deadlock proof's ``reason`` says a schedule witness proved it (not the whole-component search):
    the affine one checked symbolically (``tail``: " and trip values" when trips are symbolic), or, for loops of
    constant counts whose run is short (``schedule.RUN_PER_LEAF``), the as-soon-as-possible run itself."""
    return reason == f"{engines} engines, schedule witness checked symbolically over loop indices{tail}" or (
        re.fullmatch(rf"{engines} engines, every one of its \d+ counter occurrences executed in an as-soon-as-possible "
                     r"run \(an exhaustive schedule witness\)", reason) is not None)
