"""Small program builders the interpreter, explorer and checker unit tests share: two sites, one-tile pages."""

from __future__ import annotations

from verispatial.ir import (
    WORMHOLE,
    Buffer,
    Engine,
    EngineProgram,
    Group,
    Op,
    Program,
    Semaphore,
    Site,
    Target,
    Tensor,
    Trip,
    WaitCond,
)

A, B = Site(0, 0), Site(1, 0)
RA, CA, WA = "(0,0).reader", "(0,0).compute", "(0,0).writer"
RB, CB = "(1,0).reader", "(1,0).compute"
EQ, GE = WaitCond.EQ, WaitCond.GE


def buf(i: int, site: Site = A, cap: int = 4, cb: int | None = None) -> Buffer:
    """Buffer ``i`` on ``site``: ``cap`` one-tile bf16 pages, circular-buffer index ``cb`` (default ``i``)."""
    return Buffer(i, f"buf{i}", site, i if cb is None else cb, 1, cap, "bf16")


def sem(i: int, *sites: Site, init: int = 0) -> Semaphore:
    """Semaphore ``i`` with a word on each of ``sites`` (default site A) starting at ``init``."""
    return Semaphore(i, f"s{i}", sites or (A,), init)


def ep(site: Site, engine: Engine, *ops: Op) -> EngineProgram:
    return EngineProgram(site, engine, tuple(ops))


def prog(*programs: EngineProgram, buffers: tuple[Buffer, ...] = (), sems: tuple[Semaphore, ...] = (),
         groups: tuple[Group, ...] = (), tensors: tuple[Tensor, ...] = (), trips: tuple[Trip, ...] = (),
         target: Target = WORMHOLE) -> Program:
    """A program called ``t`` of ``programs`` and the given entities."""
    return Program("t", target, tensors=tensors, buffers=buffers, semaphores=sems, groups=groups, trips=trips,
                   programs=programs)
