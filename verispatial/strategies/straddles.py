"""Hypothesis strategies aimed at ``cb-straddle``'s accesses from a ring pointer (docs/semantics.md ``cb-straddle``):
a kernel addresses the pages of a circular buffer from ``get_write_ptr`` / ``get_read_ptr`` plus a byte offset,
which nothing wraps — only ``cb_push_back`` / ``cb_pop_front`` wrap the pointers, at the ring's limit
(``dataflow_api.h``). The random programs of ``programs()`` reach an access past the ring's end in about 2 draws of
400; these put one on purpose, in about half of the draws.

``straddle_pipeline`` adds a *ring* of ``cap`` pages at site (0,0) and the engines around it. One side of the ring
(the *accessing* side) runs ``laps`` groups: it reserves (waits for) ``block`` pages, touches them with accesses of
``chunk`` pages each from its pointer (the tiles of a write into the back follow the fill; a multicast names its
``offset``), then pushes (pops) them ``step`` pages at a time; the other side moves its pointer one page at a time
(``Reserve(1) FillTiles(1) Push(1)`` or ``Wait(1) Pop(1)``), which never straddles. The access is one of
``STRADDLE_ACCESSES``:

- ``read``: ``ReadTiles`` into the back (the reader; a ``ReadBarrier`` before the pushes);
- ``fill``: ``FillTiles`` into the back (the reader's local stores, drained);
- ``pack``: ``PackAcc`` into the back (the compute engine, one acquire per chunk);
- ``copy``: ``CopyTiles`` from the front of the ring into the back of a second ring of the same shape (the writer;
  both pointers move alike, so both sides of the copy are accesses);
- ``write``: ``WriteTiles`` from the front (the writer; a ``WriteBarrier`` before the pops);
- ``mcast-back`` / ``mcast-front``: ``McastSend`` of the reserved back (the reader) or of the waited front (the
  writer, a forwarder) to site (1,0), each chunk at its ``offset`` past the pointer, landing at its own address in
  (1,0)'s copy of the ring: a ready/valid handshake per group (the receiver reserves the group, says ready, waits
  for valid and resets it, publishes the pages ``step`` at a time);
- ``behind``: the reader pushes the group first and then multicasts it from the address it took before the pushes
  (``McastSend(behind=block)``, the sharded layernorm's ``ex_global``), same handshake;
- ``landing``: the reader multicasts each chunk of a source ring that never wraps to (1,0) at its own write pointer of the
  ring plus the chunk's ``offset`` (``McastSend(dst=ring)``, sort's peer exchange), reserving and pushing the ring
  to move that pointer, same handshake;
- ``remote``: site (1,0) reads each group of (0,0)'s ring with ``RemoteRead`` at its own read pointer of its copy
  plus each chunk's ``offset`` (the sharded layernorm's partials): (0,0)'s reader fills and pushes the group, says
  ready and waits for done; (1,0)'s other engine pushes a token group into the copy, the reader waits for it and
  for ready, reads, pops the copy ``step`` at a time and says done; (0,0)'s compute drains the ring.

Correct (``broken`` None): ``block`` divides ``cap`` and ``step`` and ``chunk`` divide ``block``, so every group
starts at a multiple of ``block`` and every access ends by the ring's end. ``STRADDLE_BREAKS``:

- ``block``: ``step == block`` and ``block`` does not divide ``cap``: the pushes (pops) themselves straddle, and the
  accesses with them;
- ``span``: ``block`` does not divide ``cap``, ``step`` 1 (the pushes never straddle), one access of the whole
  block (``fill_two_then_push_one_by_one`` of ``tests/families/test_cb.py``);
- ``piecewise``: as ``span`` with accesses of ``chunk < block`` pages: the pointer does not move between them, so a
  chunk past the end is still past it;
- ``shift``: ``block`` divides ``cap``, but a group of one page comes first, so every group after it starts one
  page off a multiple of ``block`` (a pointer offset the blocks do not absorb).

Page counts are pages, tile counts tiles (``page_tiles`` tiles a page). Every program drawn passes ``validate``.
"""

from __future__ import annotations

import attrs
from hypothesis import assume
from hypothesis import strategies as st

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
    Engine,
    EngineProgram,
    FillTiles,
    Group,
    Loop,
    McastSend,
    Op,
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
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.validate import validate
from verispatial.strategies.programs import packed_memory, programs

#: The op kinds an access of the ring may be (module docstring).
STRADDLE_ACCESSES = ("read", "fill", "pack", "copy", "write", "mcast-back", "mcast-front", "behind", "landing",
                     "remote")

#: How a pipeline is broken (module docstring): each puts an access past the ring's end in some lap, given laps
#: enough to reach it (``straddle_shapes`` draws them where the explorer's budget allows).
STRADDLE_BREAKS = ("block", "span", "piecewise", "shift")

A, B = Site(0, 0), Site(1, 0)


def _shape(cap: int, block: int, step: int, chunk: int, broken: str | None) -> tuple[int, int, int, int]:
    """(block, step, chunk, lead) of a pipeline: the drawn ``block``/``step``/``chunk`` made to fit ``broken``
    (``lead``: pages of a first one-page group, ``shift``). Raises ``ValueError`` for an unknown break or a shape
    the break cannot take (the strategy draws only shapes that fit)."""
    if broken is None:
        if cap % block or block % step or block % chunk:
            raise ValueError(f"a correct pipeline needs block | cap, step | block, chunk | block: {cap=} {block=} "
                             f"{step=} {chunk=}")
        return block, step, chunk, 0
    if broken not in STRADDLE_BREAKS:
        raise ValueError(f"unknown straddle break {broken!r}: one of {STRADDLE_BREAKS}")
    if broken == "shift":
        if cap % block or block < 2 or block % chunk:
            raise ValueError(f"shift needs 2 <= block | cap and chunk | block: {cap=} {block=} {chunk=}")
        return block, 1, chunk, 1
    if cap % block == 0 or block > cap:
        raise ValueError(f"{broken} needs a block that does not divide the capacity and fits it: {cap=} {block=}")
    if broken == "block":
        return block, block, block, 0
    if broken == "span":
        return block, 1, block, 0
    if block % chunk or chunk == block:
        raise ValueError(f"piecewise needs chunk | block, chunk < block: {block=} {chunk=}")
    return block, 1, chunk, 0


def straddle_pipeline(p: Program, access: str, cap: int, block: int, step: int, chunk: int, laps: int,
                      broken: str | None = None, page_tiles: int = 1, looped: bool = False,
                      at_start: bool = True, by_tile: bool = False) -> Program:
    """``p`` with a ring of ``cap`` pages of ``page_tiles`` tiles at site (0,0) accessed by ``access`` (one of
    ``STRADDLE_ACCESSES``) in ``laps`` groups of ``block`` pages, the pointer moving ``step`` pages at a time and each
    access touching ``chunk`` pages (module docstring), broken as ``broken`` says (one of ``STRADDLE_BREAKS``, None:
    correct). ``by_tile``: the accesses that move tiles (``read``, ``fill``, ``pack``, ``copy``, ``write``) move
    one tile each, so an access may end inside a page. ``looped``: the groups as one ``Loop`` (addresses affine in
    its index) rather than unrolled. The ops go before the engines' own (``at_start``) or after them; engines ``p``
    lacks are added. Raises ``ValueError`` for an unknown access or break, or a shape the break cannot take."""
    if access not in STRADDLE_ACCESSES:
        raise ValueError(f"unknown straddle access {access!r}: one of {STRADDLE_ACCESSES}")
    block, step, chunk, lead = _shape(cap, block, step, chunk, broken)
    pt = page_tiles
    total = lead + laps * block
    ring = len(p.buffers)
    cbs = {b.cb for b in p.buffers if b.site == A} | {b.cb for b in p.buffers if b.site == B}
    cb = max(cbs, default=-1) + 1
    buffers = [*p.buffers, Buffer(ring, f"ring{ring}", A, cb, pt, cap, "bf16")]
    tensors = list(p.tensors)
    sems = list(p.semaphores)
    groups = list(p.groups)
    ops: dict[tuple[Site, Engine], list[Op]] = {}

    def add(site: Site, engine: Engine, *more: Op) -> None:
        ops.setdefault((site, engine), []).extend(more)

    def tensor(role: Role) -> str:
        name = f"straddle{len(tensors)}"
        tensors.append(Tensor(name, (32, 32 * total * pt), "bf16", role))
        return name

    def sem(site: Site) -> int:
        sems.append(Semaphore(len(sems), f"straddle{len(sems)}", (site,), 0))
        return len(sems) - 1

    def one_by_one(site: Site, engine: Engine, b: int, back: bool, n: int) -> None:
        """The other side of ring ``b``: ``n`` pages one at a time, which never straddles."""
        unit: tuple[Op, ...] = ((Reserve(b, 1), FillTiles(b, pt, "x", drain=True), Push(b, 1)) if back else
                                (Wait(b, 1), Pop(b, 1)))
        add(site, engine, *(unit * n))

    def moves(b: int, back: bool, pages: int, by: int) -> tuple[Op, ...]:
        return tuple(Push(b, by) if back else Pop(b, by) for _ in range(pages // by))

    def at(k: Term | int, first: int) -> Addr:
        """The tile address of a chunk ``first`` tiles into a group: ``k`` is the group's first page (a constant
        unrolled, a loop term ``looped``)."""
        if isinstance(k, Term):
            return Addr(lead * pt + first, (Term(k.var, k.coef * pt),))
        return Addr(k * pt + first)

    def spans(n: int, c: int) -> list[tuple[int, int]]:
        """(first tile, tiles) of each access of a group of ``n`` pages in chunks of ``c`` pages: one tile each
        (``by_tile``), else a chunk each."""
        if by_tile:
            return [(f, 1) for f in range(n * pt)]
        return [(j * c * pt, c * pt) for j in range(n // c)]

    # The accessing side's ops for one group of ``n`` pages whose first page is ``k`` (lead: the one-page group).
    def group(k: Term | int, n: int, c: int) -> list[Op]:
        pieces = range(n // c)
        if access == "read":
            tin = names["in"] if "in" in names else names.setdefault("in", tensor(Role.INPUT))
            return [Reserve(ring, n), *(ReadTiles(tin, at(k, f), t, ring) for f, t in spans(n, c)),
                    ReadBarrier(), *moves(ring, True, n, min(step, n))]
        if access == "fill":
            return [Reserve(ring, n), *(FillTiles(ring, t, "x", drain=True) for _, t in spans(n, c)),
                    *moves(ring, True, n, min(step, n))]
        if access == "pack":
            out: list[Op] = [Reserve(ring, n)]
            for _, t in spans(n, c):
                out += [AcquireAcc(t, "bf16"), Compute("copy", t), PackAcc(ring, t), ReleaseAcc()]
            return [*out, *moves(ring, True, n, min(step, n))]
        if access == "copy":
            return [Wait(ring, n), Reserve(second, n),
                    *(CopyTiles(ring, second, t, drain=True) for _, t in spans(n, c)),
                    *moves(second, True, n, min(step, n)), *moves(ring, False, n, min(step, n))]
        if access == "write":
            dst = names["out"] if "out" in names else names.setdefault("out", tensor(Role.OUTPUT))
            return [Wait(ring, n), *(WriteTiles(ring, dst, at(k, f), t) for f, t in spans(n, c)),
                    WriteBarrier(), *moves(ring, False, n, min(step, n))]
        if access == "landing":
            # the source pages start at the source's write pointer
            sends = [McastSend(src, c, g, 1, dst=ring, offset=j * c) for j in pieces]
            return [SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), Reserve(ring, n), Reserve(src, n),
                    FillTiles(src, n * pt, "x", drain=True), *sends, WriteBarrier(), SemInc(valid, B, 1),
                    AtomicBarrier(), *moves(src, True, n, n), *moves(ring, True, n, min(step, n))]
        if access in ("mcast-back", "mcast-front", "behind"):
            front = access == "mcast-front"
            arrive: list[Op] = [SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0)]
            announce: list[Op] = [WriteBarrier(), SemInc(valid, B, 1), AtomicBarrier()]
            if access == "behind":
                sends = [McastSend(ring, c, g, 1, offset=j * c, behind=n) for j in pieces]
                return [*arrive, Reserve(ring, n), FillTiles(ring, n * pt, "x", drain=True),
                        *moves(ring, True, n, min(step, n)), *sends, *announce]
            sends = [McastSend(ring, c, g, 1, front=front, offset=j * c) for j in pieces]
            if front:
                return [*arrive, Wait(ring, n), *sends, *announce, *moves(ring, False, n, min(step, n))]
            return [*arrive, Reserve(ring, n), FillTiles(ring, n * pt, "x", drain=True), *sends, *announce,
                    *moves(ring, True, n, min(step, n))]
        # remote: (1,0)'s reader reads the group at its read pointer of its copy plus each chunk's offset
        return [Wait(copy, n), SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), Reserve(into, n),
                *(RemoteRead(copy, A, c, into, offset=j * c) for j in pieces), ReadBarrier(),
                *moves(into, True, n, 1), *moves(copy, False, n, min(step, n)), SemInc(done, A, 1),
                AtomicBarrier()]

    names: dict[str, str] = {}
    second = copy = into = ready = valid = done = g = src = -1
    if access == "copy":
        second = len(buffers)
        buffers.append(Buffer(second, f"ring{second}", A, cb + 1, pt, cap, "bf16"))
    if access in ("mcast-back", "mcast-front", "behind", "landing"):
        buffers.append(Buffer(len(buffers), f"ring{len(buffers)}", B, cb, pt, cap, "bf16"))
        ready, valid = sem(A), sem(B)
        g = len(groups)
        groups.append(Group(g, A, (B.x, B.y, B.x, B.y)))
    if access == "remote":
        copy, into = len(buffers), len(buffers) + 1
        buffers.append(Buffer(copy, f"ring{copy}", B, cb, pt, cap, "bf16"))
        buffers.append(Buffer(into, f"into{into}", B, cb + 1, pt, cap, "bf16"))
        ready, done = sem(B), sem(A)

    if access == "landing":
        src = len(buffers)
        # as many pages as pass through the ring: the source never wraps, so no access of it straddles
        buffers.append(Buffer(src, f"src{src}", A, cb + 1, pt, total, "bf16"))
    mover = {"read": (A, Engine.READER), "fill": (A, Engine.READER), "pack": (A, Engine.COMPUTE),
             "copy": (A, Engine.WRITER), "write": (A, Engine.WRITER), "mcast-back": (A, Engine.READER),
             "mcast-front": (A, Engine.WRITER), "behind": (A, Engine.READER), "landing": (A, Engine.READER),
             "remote": (B, Engine.READER)}[access]
    # The groups: the lead one-page group (shift), then laps groups of block pages, unrolled or as one loop.
    body: list[Op] = group(0, lead, 1) if lead else []
    if looped and laps > 1:
        body.append(Loop("k", laps, tuple(group(Term("k", block), block, chunk))))
    else:
        for i in range(laps):
            body += group(lead + i * block, block, chunk)
    add(*mover, *body)
    sizes = [lead] * (lead > 0) + [block] * laps
    # The other sides: one page at a time, and the handshakes' other halves per group.
    if access in ("read", "fill", "pack"):
        one_by_one(A, Engine.WRITER if access == "pack" else Engine.COMPUTE, ring, False, total)
    elif access in ("copy", "write", "mcast-front"):
        one_by_one(A, Engine.READER, ring, True, total)
        if access == "copy":
            one_by_one(A, Engine.COMPUTE, second, False, total)
    if access in ("mcast-back", "behind", "mcast-front", "landing"):
        recv = ring + 1  # (1,0)'s copy of the ring, the buffer after it
        if access != "mcast-front":
            one_by_one(A, Engine.COMPUTE, ring, False, total)
        if access == "landing":
            one_by_one(A, Engine.WRITER, src, False, total)
        for n in sizes:
            # the receiver's pointer moves one page at a time: the landing is at the sender's address
            add(B, Engine.READER, Reserve(recv, n), SemInc(ready, A, 1), AtomicBarrier(), SemWait(valid, WaitCond.EQ, 1),
                SemSet(valid, 0), *moves(recv, True, n, 1))
        one_by_one(B, Engine.COMPUTE, recv, False, total)
    if access == "remote":
        for n in sizes:
            # the owner fills the group, says ready and waits until it was read before it reserves again (its pop
            # by the compute engine changes no byte)
            add(A, Engine.READER, Reserve(ring, n), FillTiles(ring, n * pt, "x", drain=True), *moves(ring, True, n, 1),
                SemInc(ready, B, 1), AtomicBarrier(), SemWait(done, WaitCond.EQ, 1), SemSet(done, 0))
            add(A, Engine.COMPUTE, Wait(ring, n), *moves(ring, False, n, 1))
            add(B, Engine.WRITER, Reserve(copy, n), *moves(copy, True, n, 1))
        one_by_one(B, Engine.COMPUTE, into, False, total)
    return _merged(p, ops, buffers, tensors, sems, groups, at_start)


def _merged(p: Program, ops: dict[tuple[Site, Engine], list[Op]], buffers: list[Buffer], tensors: list[Tensor],
            sems: list[Semaphore], groups: list[Group], at_start: bool) -> Program:
    """``p`` with ``ops`` added to its engines (before their own, ``at_start``, or after; new engines for the
    others), the new entities, and a memory map."""
    progs: list[EngineProgram] = []
    for ep in p.programs:
        more = tuple(ops.pop((ep.site, ep.engine), ()))
        if at_start:
            # the new ops join the first section: the later sections start as many ops later
            starts = tuple(x + len(more) if k else x for k, x in enumerate(ep.section_starts))
            progs.append(attrs.evolve(ep, ops=(*more, *ep.ops), section_starts=starts))
        else:
            progs.append(attrs.evolve(ep, ops=(*ep.ops, *more)))
    progs += [EngineProgram(site, engine, tuple(more)) for (site, engine), more in ops.items()]
    q = attrs.evolve(p, buffers=tuple(buffers), tensors=tuple(tensors), semaphores=tuple(sems), groups=tuple(groups),
                     programs=tuple(progs))
    # ``p``'s buffers where they were (packed when it has no map), the new ones from one base past all of them on
    # every site: the ring at (0,0) and its copy at (1,0) come first on their sites, so they share a byte offset (a
    # multicast lands at the sender's address: ``mcast-address``)
    t = p.target
    memory = list(p.memory or packed_memory(p))
    base = max((m.offset + m.size for m in memory), default=t.reserved_base)
    base = -(-base // t.alignment) * t.alignment
    at: dict[Site, int] = {}
    for b in buffers[len(p.buffers):]:
        size = q.buffer_bytes(b)
        memory.append(BufferAt(b.id, at.get(b.site, base), size))
        at[b.site] = at.get(b.site, base) + -(-size // t.alignment) * t.alignment
    return attrs.evolve(q, memory=tuple(memory))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def straddle_shapes(draw: st.DrawFn) -> dict[str, object]:
    """The keyword arguments of ``straddle_pipeline`` but ``p``: correct about half of the time, else broken in one
    of ``STRADDLE_BREAKS``; at most 8 pages pass through the ring, 5 where a second site takes part (the explorer's
    budget: a correct multicast of 6 pages in groups of 2 takes about 4,500 states)."""
    access = draw(st.sampled_from(STRADDLE_ACCESSES))
    broken = draw(st.sampled_from(STRADDLE_BREAKS)) if draw(st.booleans()) else None
    budget = 5 if access in ("mcast-back", "mcast-front", "behind", "landing", "remote") else 8
    if broken in ("block", "span", "piecewise"):
        cap = draw(st.integers(3, 5 if budget > 5 else 4))
        block = draw(st.sampled_from([b for b in range(2, cap) if cap % b]))
        chunk = draw(st.sampled_from([c for c in _divisors(block) if c < block])) if broken == "piecewise" else block
        step = block if broken == "block" else 1
    else:
        cap = draw(st.integers(2, 4) if broken == "shift" else st.integers(1, 4))
        block = draw(st.sampled_from([b for b in _divisors(cap) if b >= 2 or broken is None]))
        step = draw(st.sampled_from(_divisors(block))) if broken is None else 1
        chunk = draw(st.sampled_from(_divisors(block)))
    lead = 1 if broken == "shift" else 0
    # enough laps to pass the ring's end once, no more pages than the explorer affords
    most = max(1, (budget - lead) // block)
    least = min(most, -(-(cap + 1 - lead) // block)) if broken else 1
    laps = draw(st.integers(least, most))
    return {"access": access, "cap": cap, "block": block, "step": step, "chunk": chunk, "laps": laps,
            "broken": broken, "page_tiles": draw(st.sampled_from([1, 1, 2])), "looped": draw(st.booleans()),
            "at_start": draw(st.booleans()), "by_tile": draw(st.integers(0, 3)) == 0}


@st.composite
def straddle_programs(draw: st.DrawFn, alone: bool = False) -> Program:
    """A ``straddle_pipeline`` added to a program of ``programs()`` (``alone``: to an empty program); every program
    drawn passes ``validate``."""
    base = Program("straddle", draw(st.sampled_from([WORMHOLE, BLACKHOLE]))) if alone else draw(programs())
    q = straddle_pipeline(base, **draw(straddle_shapes()))  # type: ignore[arg-type]
    assume(not validate(q))
    return q
