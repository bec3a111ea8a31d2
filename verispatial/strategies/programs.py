"""Hypothesis strategies: small, structurally valid, scheduled programs on the Wormhole and Blackhole targets.

A program is drawn as a *blueprint* that is correct by construction most of the time, then sometimes mutated:

- 2-4 engines on 1-2 sites; at least one site has two engines, so every circular buffer has a producer and a
  distinct consumer on its own site.
- 1-3 circular buffers (capacity 1-4 pages, one page = one tile). Each lives in one *stage* (sometimes two).
  Per iteration the producer runs ``Reserve(n) [ReadTiles ReadBarrier] Push(n)`` and the consumer
  ``Wait(n) [WriteTiles (WriteBarrier | Flush)] Pop(n)``; ``n`` usually divides the capacity (no ring straddle) and is
  sometimes anything in ``1..capacity+1`` (capacity violations, straddles). A consumer that writes its pages out
  lets them go only once the writes left (a write barrier or a flush before the pop, dataflow_api.h); sometimes it
  pops first and barriers at the end (``async-source-reuse``). Pages a consumer writes out are always filled by the
  producer (read or packed), others may carry tokens only.
- 0-3 counting semaphores: one engine runs ``SemInc`` (on the waiter's site sometimes ``SemRmw``, the non-atomic
  up of the own word) in a stage, another engine waits after that stage for the
  exact total (``ge`` or ``eq``; a ``ge`` wait on increments by 2 sometimes for one less, which the last increment
  jumps past, or, broken, for one increment less) and usually resets the word to its initial value with ``SemSet``; sometimes the
  increments also publish an activation tensor the waiter then reads (before its reset: a reset that does not
  directly follow its wait), and sometimes the waiter waits and resets inside the loop (racy from two iterations
  on). Sometimes a ping-pong handshake of two semaphores.
- Sometimes (two sites of two engines) the lockstep multicast handshake of reference §2.5 from site 0 to site 1 in
  one stage: the sender's ready counter reset right after its wait or after its data multicast, the receiver in
  the reference order (invalidate, say ready, wait for VALID) or the vendor's (say ready, wait for VALID, then
  invalidate: a flag word that starts at its reset value). Sometimes the sender is a forwarder that multicasts,
  from the front of its buffer, a block another engine of its site pushed, then pops it (flushed first, or not).
  Broken, now and then a multicast's (or a remote write's) ``num_dests`` is 0 or 2 for its one destination: a
  deadlock at the write barrier after it (docs/semantics.md "Acknowledgement counts").
- A buffer's pages may carry a state updated in place: read from the state tensor by the producer and written
  back at the same tile address by the consumer, or (sometimes) one iteration ahead, which rewrites a tile before
  its old value is read.
- Now and then (about 1 program in 6) an indirect access in one stage on a site of two engines, as a gather
  (embedding lookup) or scatter (KV-cache update) kernel does it: one engine reads a tile of an index tensor into
  an index buffer (``Reserve(1) ReadTiles ReadBarrier Push(1)``) per iteration, or once before the stage's loop;
  the other waits for that page and, before it pops it, reads a block of a table into a buffer of its own and
  pushes it (gather: the first engine pops it) or writes a block the first engine read out to a state (scatter).
  The address's ``Dynamic`` part names the index tensor (and the index buffer, or leaves it to be derived);
  iteration ``k`` owns tiles ``[k * block, (k + 1) * block)`` and the index, in ``[lo, hi]``, picks a slot of
  ``pages`` tiles in it (``scale`` = ``pages``), so every value stays inside the tensor and no two iterations touch
  one tile. Broken: the accesses before the index page's ``Wait``, or after its ``Pop``.
- Sometimes (about 1 in 4 programs with a site running all three engines) a token buffer two engines wait on and
  one pops, as SDPA decode's ``cur_pos`` page (a sharing waiter, ``ir/sharing.py``; sometimes the producer itself
  waits on what it pushed): the waiter answers its wait
  with a token in a second buffer that the consumer waits for before its pop. Broken: the consumer pops without
  waiting for the answer (tt-metal #44366: a data-movement waiter arriving after the pop hangs), or the waiter pops
  too (two consumers, #55996).
- A one-page read of an input sometimes (about 1 in 6) moves one row stick of the page into one row of the buffer's
  tile (``ReadTiles.part``, docs/semantics.md "Part-page transfers").
- A data-movement producer may build its pages by local stores (``Reserve FillTiles Push``, a scaler or mask tile,
  drained); broken, the fill is sometimes one tile short of the push, comes before the reserve or has no drain before
  the push (its stores may land after it: ``async-read-publish``).
- Now and then (about 1 program in 6) a read is patched once it landed (``FillTiles(b, 0, "patch")`` right after the
  ``ReadBarrier`` that follows a ``ReadTiles`` into ``b``: matmul's padding of its last K tile, docs/semantics.md
  "Local-store fills"), drained; broken, sometimes undrained, so the push or multicast of ``b`` after it publishes
  stores that need not have landed (``async-read-publish``).
- A data-movement consumer that writes a buffer out may first copy each page it waited for into a buffer of its own
  with local loads and stores (``Wait Reserve CopyTiles Push Pop``, ``_copy_unit``) and write that one out; broken, the
  copy sometimes has no drain before its push (tt-metal PR #50183) or comes before its wait.
- About 1 buffer in 6 sits on a tensor's shard (``Buffer.shard``, ``_shard``): a read shard of an input (the producer
  only reserves and pushes: each push publishes the tensor's tiles) or a write shard compute packs into (an output,
  or an activation nothing reads where a stage may run fewer times than its max); its ring holds every page its pushes publish at the
  trips' max, the shard a run of tiles or rows of them; broken, the shard is sometimes one push short of the ring
  (``cb-shard-overrun``) or an output written only for the largest trips.
- Sometimes (two sites of two engines or more, no multicast handshake) a remote read: site 1 reads each block site 0
  publishes straight from site 0's pages, at its read pointer of its own copy (``_remote_read``); broken, before the
  block is published, one page past the pointer, with the owner popping before the read is counted done, or
  publishing the pages before the read barrier.
- Now and then (about 1 program in 4) a data-movement engine uses a scratch buffer of its own (``Buffer.scratch``,
  ``_scratch``; argmax's ``find_argmax_for_core``): in one stage it reads a tile of an input into the same scratch
  bytes each iteration, barriers and loads them (``ScratchAccess``); after the stage it sometimes stores a partial
  (drained), writes it to an output and waits for the write. Broken: the load before the barrier, no barrier between
  two reads, the store undrained before the write, or a store while the write has not left.
- Every NoC transaction (reads, writes, multicasts, increments and their barriers) and every local-store fill is a
  data-movement engine's; the compute engine packs, waits, pops and sets or waits on its site's words
  (``ir/validate.py`` ``ISSUED_BY``).
- The compute engine may fill pages from the accumulator (``AcquireAcc``..``PackAcc``); consumers may take a push
  in smaller chunks; a stage may have an inner loop (nested loops, two-term addresses).
- 1-3 stages, each straight-line or a ``Loop`` with count 0-3 or a ``Trip`` (max 0-3). Every engine that takes
  part in a stage runs a loop of the same count there, so push and pop totals match for every trip value. What a
  stage that may run zero times (or fewer than its max) writes goes to a state tensor (an output must be written
  whole for every trip value, ``output-unwritten``), now and then to an output (broken for the smaller trips).
- Memory: every site's buffers are packed one after another from the target's reserved base, aligned, disjoint.

Mutations (drop an op, change a count, swap two ops) then break about half of the programs. Every program drawn
passes ``validate`` (asserted). Page counts are pages, tile counts are tiles, memory offsets are bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
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
    Dynamic,
    Engine,
    EngineProgram,
    FillTiles,
    Flush,
    Group,
    InlineWrite,
    InPlace,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Part,
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
    Semaphore,
    SemInc,
    SemRmw,
    SemSet,
    SemWait,
    Shard,
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
from verispatial.ir.ops import PATCH, body_at, with_body
from verispatial.ir.validate import validate

#: Blackhole with its NoC command-buffer FIFOs enabled (tt-metal PR #12475, 2024-09, since turned off: the firmware
#: never sets ``NIU_CFG_0_CMD_BUFFER_FIFO_EN``), under which a data and a flag multicast on two command buffers were
#: seen to reorder (PR #12627). No shipped target both multicasts and lets writes reorder; the strategies draw this
#: one so that ``async-flag-overtake`` and the unordered leaving of writes stay under test.
UNORDERED = attrs.evolve(BLACKHOLE, name="blackhole_cmd_fifo", ordered_writes=False)

#: Wormhole for ordered writes; Blackhole's sizes (64 circular buffers, its mesh and L1) with unordered writes. The
#: shipped Blackhole is Blackhole's sizes with ordered writes: each of its two traits is drawn, on one target each.
TARGETS = (WORMHOLE, UNORDERED)
SITES = (Site(0, 0), Site(1, 0))
ENGINES = (Engine.READER, Engine.COMPUTE, Engine.WRITER)
DTYPES = ("bf16", "fp32", "bfp8_b")

Slot = tuple[Site, Engine]


@attrs.define
class _Stage:
    """One stage: ``count`` None is straight-line code, else a loop count (an int or a trip name)."""

    var: str
    count: int | str | None
    #: an inner loop (count 1-2) around the whole body, when not None
    inner: int | None = None
    #: per engine slot: ops that give (produce, signal) and ops that take (consume), in units that stay whole
    give: dict[Slot, list[list[Op]]] = attrs.Factory(dict)
    take: dict[Slot, list[list[Op]]] = attrs.Factory(dict)
    #: per engine slot: ops that run before the stage's loop (an index read once for the whole loop, its wait)
    before: dict[Slot, list[Op]] = attrs.Factory(dict)
    #: per engine slot: ops that run after the stage's loop (semaphore waits and resets, atomic barriers)
    after: dict[Slot, list[Op]] = attrs.Factory(dict)


def _tensor(name: str, tiles: int, role: Role, dtype: str = "bf16") -> Tensor:
    """A tensor of ``tiles`` 32x32 tiles (one tile row) of ``dtype`` (that of the buffer it moves through: a NoC
    transfer moves the tensor's tiles as they are)."""
    return Tensor(name, (32, 32 * max(tiles, 1)), dtype, role)


def _fill_unit(b: int, pages: int, fault: str) -> list[Op]:
    """A producer's pages built by local stores (``FillTiles``), before the push: after the reserve and drained
    (``none``), one tile short of the push (``short``, when it has more than one page: ``cb-push-unfilled`` if the
    pages are read), before the reserve (``early``: ``cb-write-unreserved``) or with no drain before the push
    (``undrained``: ``async-read-publish``)."""
    if fault == "early":
        return [FillTiles(b, pages, "const", drain=True), Reserve(b, pages)]
    if fault == "short" and pages > 1:
        return [Reserve(b, pages), FillTiles(b, pages - 1, "const", drain=True)]
    return [Reserve(b, pages), FillTiles(b, pages, "const", drain=fault != "undrained")]


def _copy_unit(b: int, into: int, chunk: int, fault: str) -> list[Op]:
    """A consumer's copy of ``chunk`` waited pages of ``b`` into the back of ``into`` by local loads and stores
    (``CopyTiles``), published by a push: drained (``none``), with no drain before the push (``undrained``:
    ``async-read-publish``) or before the wait (``early``: ``cb-read-unwaited``). The caller pops ``b``."""
    copy = CopyTiles(b, into, chunk, drain=fault != "undrained")
    if fault == "early":
        return [Reserve(into, chunk), copy, Wait(b, chunk), Push(into, chunk)]
    return [Wait(b, chunk), Reserve(into, chunk), copy, Push(into, chunk)]


def _iterations(stage: _Stage, trips: dict[str, int]) -> int:
    """The largest number of times a stage body runs (outer times inner loop)."""
    inner = stage.inner or 1
    if stage.count is None:
        return inner
    return inner * (trips[stage.count] if isinstance(stage.count, str) else stage.count)


def _addr(stage: _Stage, base: int, step: int) -> Addr:
    """Tile address of iteration (i, j): ``base + step * (i * inner + j)``, disjoint per iteration."""
    terms: list[Term] = []
    if stage.count is not None:
        terms.append(Term(stage.var, step * (stage.inner or 1)))
    if stage.inner is not None:
        terms.append(Term("j" + stage.var, step))
    return Addr(base, tuple(terms))


@st.composite
def blueprints(draw: st.DrawFn, broken: bool = True) -> Program:
    """A scheduled program built from the blueprint of the module docstring; it always passes ``validate``.

    With ``broken`` (the default) the blueprint itself sometimes breaks a rule (pages that do not divide the
    capacity, a pop before the write left its page, a wait and reset racing the next increment, any order of
    produce and consume, an output not written for the smaller trips, a state rewritten before it is read, a word
    left unreset, an accumulator too small, an indirect address used outside its index page): about a third of the
    programs deadlock or break a rule. With ``broken=False`` none of these is drawn: the program is correct by
    construction (``correct_programs``).
    """
    target: Target = draw(st.sampled_from(TARGETS))
    n_sites = draw(st.integers(1, 2))
    # Sometimes a multicast handshake from site 0 to site 1 (two engines on each site).
    mcast = n_sites == 2 and draw(st.integers(0, 2)) == 0
    first = draw(st.lists(st.sampled_from(ENGINES), min_size=2, max_size=2 if mcast else 3, unique=True))
    slots: list[Slot] = [(SITES[0], e) for e in first]
    if n_sites == 2:
        second = draw(st.lists(st.sampled_from(ENGINES), min_size=2 if mcast else 1, max_size=4 - len(first),
                               unique=True))
        slots += [(SITES[1], e) for e in second]
    by_site: dict[Site, list[Slot]] = {}
    for s in slots:
        by_site.setdefault(s[0], []).append(s)
    cb_sites = [site for site, ss in by_site.items() if len(ss) >= 2]

    trips: dict[str, int] = {}
    stages: list[_Stage] = []
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("line", "loop", "loop", "trip")))
        count: int | str | None
        if kind == "line":
            count = None
        elif kind == "loop":
            count = draw(st.integers(0, 3))
        else:
            name = "t" if not trips or draw(st.booleans()) else f"t{len(trips)}"
            if name not in trips:
                trips[name] = draw(st.integers(0, 3))
            count = name
        inner = draw(st.integers(1, 2)) if draw(st.integers(0, 3)) == 0 else None
        stages.append(_Stage(f"i{i}", count, inner))
    counted = [k for k, s in enumerate(stages) if not isinstance(s.count, str)]

    tensors: list[Tensor] = []
    buffers: list[Buffer] = []
    next_cb: dict[Site, int] = {}
    filled: set[int] = set()  # buffers whose producer writes every page it pushes
    semaphores: list[Semaphore] = []
    groups: list[Group] = []
    prologue: dict[Slot, list[Op]] = {}

    def semaphore(sites: tuple[Site, ...], init: int) -> int:
        semaphores.append(Semaphore(len(semaphores), f"sem{len(semaphores)}", sites, init))
        return len(semaphores) - 1

    if mcast:
        _multicast(draw, target, by_site, stages[draw(st.integers(0, len(stages) - 1))], trips, tensors, buffers, next_cb,
                   semaphore, groups, prologue, broken)
    elif n_sites == 2 and all(len(by_site[s]) >= 2 for s in SITES) and draw(st.integers(0, 2)) > 0:
        # Otherwise, on two sites of two engines or more, sometimes a remote read of one site's pages by the other.
        _remote_read(draw, by_site, stages[draw(st.integers(0, len(stages) - 1))], buffers, next_cb, semaphore, broken)
    first_data, n_data = len(buffers), draw(st.integers(1, 3))
    # The buffers consumers copy pages into (``_copy_unit``): their ids follow the data buffers', appended after them.
    copies: list[Buffer] = []
    for b in range(first_data, first_data + n_data):
        _circular_buffer(draw, b, by_site, cb_sites, stages, trips, tensors, buffers, next_cb, filled, broken,
                         copies, first_data + n_data)
    buffers += copies

    n_sems = draw(st.integers(0, 3)) if counted else 0
    movers = [x for x in slots if x[1] is not Engine.COMPUTE]  # the engines that issue NoC transactions
    for _ in range(n_sems):
        # The increment is a NoC atomic (a data-movement engine's); any engine waits on and resets its own word.
        inc = draw(st.sampled_from(movers))
        waiter = draw(st.sampled_from([x for x in slots if x != inc]))
        init = draw(st.integers(0, 1))
        sem_id = semaphore((waiter[0],) if draw(st.booleans()) else tuple(by_site), init)
        by = draw(st.integers(1, 2))
        stage = stages[draw(st.sampled_from(counted))]
        n = _iterations(stage, trips)
        # Sometimes the counter also publishes an activation: the incrementer writes one tile of it from a page
        # it waited for (and waits for the acknowledgement) before each increment; the waiter reads the whole
        # activation into a buffer of its own once the count is complete, and another engine of its site pops it.
        hosts = [u for u in stage.take.get(inc, []) if isinstance(u[0], Wait) and u[0].buf in filled
                 and not any(isinstance(op, WriteTiles) for op in u)]
        readers = [x for x in by_site[waiter[0]] if x != waiter]
        act, host, into = None, None, None
        if n >= 1 and hosts and readers and waiter[1] is not Engine.COMPUTE and draw(st.integers(0, 2)) == 0:
            act = f"act{len(tensors)}"
            host = draw(st.sampled_from(hosts))
            # The activation's tiles are the host page's (written from it) and the reading buffer's (read into it).
            page = host[0]
            assert isinstance(page, Wait)  # hosts start with their page's Wait
            dtype = buffers[page.buf].dtype
            tensors.append(_tensor(act, n, Role.ACTIVATION, dtype))
            into = len(buffers)
            cb = next_cb.get(waiter[0], 0)
            next_cb[waiter[0]] = cb + 1
            buffers.append(Buffer(into, f"cb{into}", waiter[0], cb, 1, n, dtype))
            stage.after.setdefault(draw(st.sampled_from(readers)), []).extend([Wait(into, n), Pop(into, n)])
        # An incrementer on the waiter's site sometimes ups the word itself: ``Semaphore.up`` of the own word, a
        # non-atomic read-modify-write (SemRmw), synchronous (no atomic barrier); the waiter's reset inside the loop
        # (broken, below) may then land between an up's load and its store (``sem-rmw-race``).
        local = inc[0] == waiter[0] and draw(st.integers(0, 2)) == 0
        unit: list[Op] = [SemRmw(sem_id, by) if local else SemInc(sem_id, waiter[0], by)]
        barrier_inside = local or draw(st.booleans())
        if barrier_inside and not local:
            unit.append(AtomicBarrier())
        if act is not None and host is not None:
            wait_op = host[0]
            assert isinstance(wait_op, Wait)
            host[1:1] = [WriteTiles(wait_op.buf, act, _addr(stage, 0, 1), 1), WriteBarrier(), *unit]
        else:
            stage.give.setdefault(inc, []).append(unit)
        if not barrier_inside:
            stage.after.setdefault(inc, []).append(AtomicBarrier())
        cond = draw(st.sampled_from((WaitCond.GE, WaitCond.EQ)))
        # A ``ge`` wait may sit below the total by less than one increment: the last increment jumps past it and
        # the wait sees more than its threshold (still correct: every increment must land); broken, sometimes by a
        # whole increment, so the wait can return (and its reset run) before the last increment lands.
        slack = 0
        if cond == WaitCond.GE and by >= 2 and n >= 1:
            slack = draw(st.sampled_from((0, by - 1, by - 1, by) if broken else (0, by - 1)))
        if act is None and broken and draw(st.integers(0, 4)) == 0:
            # The waiter waits for each increment inside the loop and resets at once: with two or more
            # iterations an increment can land before the reset (lost update) or overshoot an eq-wait.
            stage.take.setdefault(waiter, []).append([SemWait(sem_id, cond, init + by - min(slack, by - 1)),
                                                      SemSet(sem_id, init)])
            continue
        tail: list[Op] = [SemWait(sem_id, cond, init + by * n - slack)]
        if act is not None and into is not None:
            tail += [Reserve(into, n), ReadTiles(act, Addr(0), n, into), ReadBarrier(), Push(into, n)]
        if not broken or draw(st.integers(0, 4)) > 0:
            tail.append(SemSet(sem_id, init))
        stage.after.setdefault(waiter, []).extend(tail)

    # Sometimes a ping-pong handshake inside a stage: each iteration A signals B and waits for B's answer; each
    # word is reset by its waiter before the answer that allows the next signal (no lost update). Correct by
    # construction only without a multicast handshake (two engines waiting on each other's sites may cycle).
    if len(movers) >= 2 and (broken or not mcast) and draw(st.integers(0, 2)) == 0:
        a, bb = draw(st.permutations(movers))[:2]
        stage = draw(st.sampled_from(stages))
        sa, sb = semaphore((a[0],), 0), semaphore((bb[0],), 0)
        stage.give.setdefault(a, []).append([SemInc(sb, bb[0], 1), SemWait(sa, WaitCond.EQ, 1), SemSet(sa, 0)])
        stage.take.setdefault(bb, []).append([SemWait(sb, WaitCond.EQ, 1), SemSet(sb, 0), SemInc(sa, a[0], 1)])

    # Sometimes a second engine waits on a buffer another engine pops (SDPA decode's cur_pos page, tt-metal #44366),
    # on a site running all three engines: one token, waited by two, popped by one.
    three = [site for site, ss in by_site.items() if len(ss) >= 3]
    if three and draw(st.integers(0, 3)) == 0:
        _shared_wait(draw, by_site[three[0]], buffers, next_cb, prologue, broken)

    # Now and then an indirect access (gather or scatter) in one stage, on a site of two engines; only in a program
    # still small (no multicast handshake, at most two semaphores), which the explorer finishes and the checker
    # certifies cheaply: the differential test's budget. Hypothesis, which favours the bounds of a range, draws 0 of
    # 0..3 about once in 3 (about 1 program in 6 overall).
    if not mcast and len(semaphores) <= 2 and _two_movers(by_site) and draw(st.integers(0, 3)) == 0:
        _indirect(draw, by_site, stages[draw(st.integers(0, len(stages) - 1))], trips, tensors, buffers, next_cb,
                  broken)

    if movers and draw(st.integers(0, 3)) == 0:
        _scratch(draw, draw(st.sampled_from(movers)), stages[draw(st.integers(0, len(stages) - 1))], trips, tensors,
                 buffers, next_cb, broken)

    programs = [_engine_program(draw, slot, stages, prologue.get(slot, []), broken) for slot in slots]
    # Now and then reads in place (a resident input shard, a constant tile ordered through a token): a unit at the end
    # of a compute engine's program, on a site with a data-movement engine too, its fills and token first in the
    # engines' programs; only in a program still small (no multicast handshake, at most one semaphore), whose
    # interleavings the explorer finishes. Drawn last, so the draws before it make the programs they made before
    # (the derandomized differential tests keep their programs): drawn in every program that allowed it, the net
    # test's explorer ran out of states on 48 of 260 (196 decided, 200 wanted).
    computes = [ss for ss in by_site.values() if any(x[1] is Engine.COMPUTE for x in ss) and len(ss) >= 2]
    if computes and not mcast and len(semaphores) <= 1 and draw(st.integers(0, 5)) == 0:
        first_ops: dict[Slot, list[Op]] = {}
        comp, unit = _in_place(draw, draw(st.sampled_from(computes)), tensors, buffers, next_cb, first_ops, broken)
        programs = [attrs.evolve(ep, ops=(*first_ops.get((ep.site, ep.engine), []), *ep.ops,
                                           *(unit if (ep.site, ep.engine) == comp else ())))
                    for ep in programs]
    # Now and then (about 1 program in 6) a patch of a landed read (drawn last, as the reads in place are).
    if draw(st.integers(0, 5)) == 0:
        programs = _patched(draw, programs, buffers, broken)
    p = Program("random", target, tensors=tuple(tensors), buffers=tuple(buffers), semaphores=tuple(semaphores),
                groups=tuple(groups), trips=tuple(Trip(n, m) for n, m in trips.items()), programs=tuple(programs))
    p = attrs.evolve(p, memory=packed_memory(p))
    assert validate(p) == [], validate(p)
    return p


def _patch_sites(ops: tuple[Op, ...], buffers: list[Buffer], prefix: Path = ()) -> list[tuple[Path, int]]:
    """Where a patch of a landed read may go in ``ops``: the path right after each ``ReadBarrier`` that directly follows
    a ``ReadTiles`` into a circular buffer (not scratch, not sharded), with that buffer."""
    out: list[tuple[Path, int]] = []
    for i, op in enumerate(ops):
        if isinstance(op, Loop):
            out += _patch_sites(op.body, buffers, (*prefix, i))
        elif isinstance(op, ReadBarrier) and i > 0 and isinstance(ops[i - 1], ReadTiles):
            b = buffers[ops[i - 1].into]  # type: ignore[union-attr]
            if not b.scratch and b.shard is None:
                out.append(((*prefix, i + 1), b.id))
    return out


def _patched(draw: st.DrawFn, programs: list[EngineProgram], buffers: list[Buffer],
             broken: bool) -> list[EngineProgram]:
    """``programs`` with one patch of a landed read (``FillTiles(b, 0, PATCH)``, docs/semantics.md "Local-store fills",
    matmul's ``pad_last_ktile`` after the read's barrier, ``reader_bmm_tile_layout_in0.cpp:74-94`` of the ttnn 0.81.1
    wheel): right after a ``ReadBarrier`` that follows a ``ReadTiles`` into ``b``, before whatever publishes ``b``
    (a push, a multicast, a remote write). Drained (``drain``: its stores land before the op after it); broken
    (sometimes, with ``broken``), undrained: the push or multicast of ``b`` that follows publishes stores that need not
    have landed (``async-read-publish``), unless a drain of the engine comes first. Unchanged when no engine reads
    into a buffer."""
    sites = [(e, path, b) for e, ep in enumerate(programs) for path, b in _patch_sites(ep.ops, buffers)]
    if not sites:
        return programs
    e, path, b = draw(st.sampled_from(sites))
    drain = not broken or draw(st.integers(0, 2)) > 0
    ops = programs[e].ops
    body = body_at(ops, path[:-1])
    ops = with_body(ops, path[:-1], (*body[: path[-1]], FillTiles(b, 0, PATCH, drain=drain), *body[path[-1] :]))
    return [*programs[:e], attrs.evolve(programs[e], ops=ops), *programs[e + 1 :]]


def _circular_buffer(draw: st.DrawFn, b: int, by_site: dict[Site, list[Slot]], cb_sites: list[Site],
                     stages: list[_Stage], trips: dict[str, int], tensors: list[Tensor], buffers: list[Buffer],
                     next_cb: dict[Site, int], filled: set[int], broken: bool, copies: list[Buffer],
                     first_copy: int) -> None:
    """Circular buffer ``b`` of the module docstring on a site of two engines or more: its producer's units (reserve,
    then a read, a local-store fill, a pack or nothing, then push) and its consumer's (wait, sometimes a write out and
    its barrier or flush, pop) in one or two stages, now and then on a tensor's shard or carrying a state updated in
    place; added to ``buffers``, ``tensors`` and the stages' units, ``b`` to ``filled`` when its producer writes every
    page it pushes. A consumer that writes out sometimes copies each chunk into a buffer of its own first
    (``_copy_unit``): that buffer is appended to ``copies``, numbered from ``first_copy``."""
    site = draw(st.sampled_from(cb_sites))
    prod, cons = draw(st.permutations(by_site[site]))[:2]
    cap = draw(st.integers(1, 4))
    cb = next_cb.get(site, 0)
    next_cb[site] = cb + 1
    # A persistent buffer (its counters outlive the program) must end empty; the others the launch resets.
    persistent = draw(st.integers(0, 3)) == 0
    buffers.append(Buffer(b, f"cb{b}", site, cb, 1, cap, draw(st.sampled_from(DTYPES)), persistent=persistent))
    divisors = [d for d in range(1, cap + 1) if cap % d == 0]
    pages = draw(st.one_of(st.sampled_from(divisors), st.integers(1, cap + 1))) \
        if broken and draw(st.integers(0, 4)) == 0 else draw(st.sampled_from(divisors))
    where = draw(st.lists(st.integers(0, len(stages) - 1), min_size=1, max_size=2, unique=True))
    reads, writes = draw(st.booleans()), draw(st.booleans())
    # Only a data-movement engine reads or writes over the NoC (``ir/validate.py`` ``ISSUED_BY``): a compute
    # consumer writes nothing out, a compute producer packs its pages (always, when they are written out) or
    # pushes tokens only.
    writes = writes and cons[1] is not Engine.COMPUTE
    # The compute engine fills its pages from the accumulator instead of reading them, at the buffer's precision
    # (an fp32 buffer takes a 32-bit accumulator, as the compiler emits it): 9 tiles overflow every accumulator,
    # 5 only a 32-bit one (half the DST tiles).
    packs = prod[1] is Engine.COMPUTE and (writes or draw(st.booleans()))
    # A data-movement producer sometimes builds its pages by local stores instead (a scaler or mask tile,
    # ``FillTiles``, drained); broken, sometimes one tile short of its push, before its reserve or undrained
    # (``_fill_unit``).
    fills = not packs and prod[1] is not Engine.COMPUTE and draw(st.integers(0, 3)) == 0
    fill_fault = draw(st.sampled_from(("none", "none", "short", "early", "undrained"))) if fills and broken else "none"
    # Now and then (1 in 6) the buffer sits on a tensor's shard (``Buffer.shard``, ``_shard``): a read shard of an
    # input, whose producer only reserves and pushes (its pages are the tensor's tiles), or a write shard of an
    # output or state the compute engine packs into.
    shard = draw(st.sampled_from(("read", "write"))) if draw(st.integers(0, 5)) == 0 and not fills else None
    if shard == "read" and packs:
        shard = "write"
    elif shard == "write" and not packs:
        shard = None if prod[1] is not Engine.COMPUTE else "write"
        packs = shard == "write"
    # Pages the consumer writes out must have been filled (cb-push-unfilled): then the producer reads them.
    reads = (reads or (writes and not packs)) and not fills and shard != "read" and prod[1] is not Engine.COMPUTE
    if reads or packs or (fills and fill_fault in ("none", "undrained")) or shard == "read":
        filled.add(b)
    # Broken: an acquire past the accumulator's capacity (5, 9), or narrower than the math and pack (acc-overrun).
    acc = draw(st.sampled_from((pages, pages, 5, 9, max(pages - 1, 1)))) if broken else pages
    acc_dtype = "fp32" if buffers[-1].dtype == "fp32" else "bf16"
    # The consumer may take each push in smaller chunks (a divisor of the push size).
    chunk = draw(st.sampled_from([d for d in range(1, pages + 1) if pages % d == 0]))
    # A data-movement consumer that writes the pages out sometimes copies each chunk into a buffer of its own
    # first (``CopyTiles``) and writes that one; broken, the copy is sometimes undrained or before its wait.
    copy_to: int | None = None
    copy_fault = "none"
    if writes and draw(st.integers(0, 3)) == 0:
        copy_to = first_copy + len(copies)
        cb_copy = next_cb.get(site, 0)
        next_cb[site] = cb_copy + 1
        copies.append(Buffer(copy_to, f"cb{copy_to}", site, cb_copy, 1, chunk, buffers[b].dtype))
        copy_fault = draw(st.sampled_from(("none", "none", "undrained", "early"))) if broken else "none"
    # Sometimes the pages carry a state updated in place: the producer reads the state's old tiles, the consumer
    # writes them back at the same address (each tile read before its own write); sometimes one iteration
    # ahead (``shift`` = the push size: a tile is rewritten before the next iteration reads its old value).
    state = reads and writes and not packs and draw(st.integers(0, 2)) == 0
    shift = draw(st.sampled_from((0, 0, pages))) if state and broken else 0
    if shard is not None:
        _shard(draw, stages, sorted(where), trips, tensors, buffers, pages, shard == "write", broken)
    for k in sorted(where):
        stage = stages[k]
        tiles = pages * _iterations(stage, trips)
        unit: list[Op] = [Reserve(b, pages)]
        if packs:
            unit += [AcquireAcc(acc, acc_dtype), Compute("copy", pages), PackAcc(b, pages), ReleaseAcc()]
        elif fills:
            unit = _fill_unit(b, pages, fill_fault)
        elif reads:
            name = f"st{len(tensors)}" if state else f"in{len(tensors)}"
            tensors.append(_tensor(name, tiles + shift, Role.STATE if state else Role.INPUT, buffers[-1].dtype))
            # A one-page read of an input sometimes takes a row stick of its page only (``Part``: docs/semantics.md
            # "Part-page transfers"), at a row of the page into a row of the buffer's tile.
            part = None
            if pages == 1 and not state and draw(st.integers(0, 5)) == 0:
                row = WORMHOLE.tile_bytes[buffers[b].dtype] // 32  # both targets' tiles have these sizes
                part = Part(row * draw(st.integers(0, 31)), row, row * draw(st.integers(0, 31)))
            unit += [ReadTiles(name, _addr(stage, 0, pages), pages, b, part), ReadBarrier()]
        unit.append(Push(b, pages))
        stage.give.setdefault(prod, []).append(unit)
        unit = []
        if not state:
            name = f"out{len(tensors)}"
            # A stage that may run fewer times than its max writes a state (an output must be written whole).
            partial = stage.count == 0 or isinstance(stage.count, str)
            role = Role.STATE if partial and (not broken or draw(st.integers(0, 3)) > 0) else Role.OUTPUT
            if writes:
                tensors.append(_tensor(name, tiles, role, buffers[b].dtype))
        for c in range(pages // chunk):
            out = b
            if copy_to is not None:
                unit += [*_copy_unit(b, copy_to, chunk, copy_fault), Pop(b, chunk)]
                out = copy_to
            unit.append(Wait(out, chunk))
            if writes:
                unit.append(WriteTiles(out, name, _addr(stage, c * chunk + shift, pages), chunk))
                # The page is read until the write left it: a write barrier or a flush before the pop (the
                # engine's final write barrier then completes the writes); sometimes neither (async-source-reuse).
                leave = draw(st.sampled_from(("barrier", "flush", "barrier", "flush", "none") if broken
                                             else ("barrier", "flush")))
                if leave == "barrier":
                    unit.append(WriteBarrier())
                elif leave == "flush":
                    unit.append(Flush())
            unit.append(Pop(out, chunk))
        stage.take.setdefault(cons, []).append(unit)


def _engine_program(draw: st.DrawFn, slot: Slot, stages: list[_Stage], prologue: list[Op],
                    broken: bool) -> EngineProgram:
    """The op list of engine ``slot``: its ``prologue``, then per stage its ops before the stage's loop, the loop over
    its units (each stage's gives before its takes; in a broken draw sometimes any order) and its ops after; then one
    barrier per kind of asynchronous op it issued, so nothing is outstanding at its end."""
    ops: list[Op] = list(prologue)
    for stage in stages:
        give = list(stage.give.get(slot, []))
        take = list(stage.take.get(slot, []))
        gives, takes = draw(st.permutations(give)), draw(st.permutations(take))
        if not broken:
            # A give that waits (a handshake's signal and wait) comes after every other give, a take that
            # waits (the ping-pong's answer) before every other take: no engine blocks before it has produced.
            gives = sorted(gives, key=_waits)
            takes = sorted(takes, key=lambda u: not _waits(u))
        units = gives + takes
        # Mostly everything given before anything taken (live); sometimes any order (may deadlock).
        if broken and draw(st.integers(0, 4)) == 0:
            units = draw(st.permutations(units))
        body = tuple(op for u in units for op in u)
        ops += stage.before.get(slot, [])
        if body and stage.inner is not None:
            body = (Loop("j" + stage.var, stage.inner, body),)
        if body:
            ops += [Loop(stage.var, stage.count, body)] if stage.count is not None else list(body)
        ops += stage.after.get(slot, [])
    kinds = {type(op) for op in _walk(tuple(ops))}
    if SemInc in kinds:
        ops.append(AtomicBarrier())
    if kinds & {WriteTiles, McastSend, McastSetValid, InlineWrite}:
        ops.append(WriteBarrier())
    return EngineProgram(slot[0], slot[1], tuple(ops))


def packed_memory(p: Program) -> tuple[BufferAt, ...]:
    """``p``'s memory map (``Program.memory``): every site's buffers one after another from the target's reserved base,
    each at an offset (bytes) aligned to ``Target.alignment``, in id order: disjoint by construction. The strategies'
    map for a program built without one (``blueprints``, ``straddles``)."""
    t = p.target
    memory: list[BufferAt] = []
    offset: dict[Site, int] = {}
    for buf in p.buffers:
        at = offset.get(buf.site, t.reserved_base)
        size = p.buffer_bytes(buf)
        memory.append(BufferAt(buf.id, at, size))
        offset[buf.site] = at + -(-size // t.alignment) * t.alignment
    return tuple(memory)


def _shard(draw: st.DrawFn, stages: list[_Stage], where: list[int], trips: dict[str, int], tensors: list[Tensor],
           buffers: list[Buffer], pages: int, write: bool, broken: bool) -> None:
    """Place the last buffer on a tensor's L1 shard (docs/semantics.md "Sharded buffers"): its ring grows to the pages
    its pushes publish in a run at the trips' max (``pages`` a push in every iteration of the stages ``where``), so they
    never pass the shard, and a tensor of its own holds them: an input (``write`` false: the producer only reserves and
    pushes, each push publishing the tensor's tiles) or, packed into by compute (``write``), an output — an
    activation nothing reads when some stage may run fewer times than its max (an output must be written whole), now
    and then an output all the same in a broken draw (``output-unwritten``). The shard is one run of tiles, or
    sometimes rows of ``w`` tiles ``2 w`` apart (a block-sharded tensor twice as wide: an input, an activation, or an
    output in a broken draw, which leaves half of it unwritten). Broken (sometimes): the shard
    holds ``pages`` tiles fewer than the ring, so the last push passes it (``cb-shard-overrun``, tt-metal #15337's
    kind)."""
    b = buffers[-1]
    total = sum(pages * _iterations(stages[k], trips) for k in where)
    # A write shard's ring is exactly the pages its pushes publish: a larger ring would make its tensor larger than
    # what is written (an output must be written whole, ``output-unwritten``).
    cap = total if write and total >= 1 else max(total, b.capacity)
    partial = any(stages[k].count == 0 or isinstance(stages[k].count, str) for k in where)
    role = Role.INPUT
    if write:  # an activation nothing reads, where a stage may run fewer times (a state is never sharded)
        role = Role.ACTIVATION if partial and (not broken or draw(st.integers(0, 3)) > 0) else Role.OUTPUT
    name = f"sh{len(tensors)}"
    size = cap * b.page_tiles
    # Rows ``2 w`` apart hold half their tensor: an output so sharded is written only in part (``output-unwritten``),
    # so that form is drawn for an output in a broken draw only.
    block = draw(st.booleans()) and (role is not Role.OUTPUT or broken)
    width = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0])) if block else 0
    short = pages if broken and size > pages and draw(st.integers(0, 3)) == 0 else 0
    if width:
        rows = size // width
        tensors.append(Tensor(name, (32 * rows, 32 * 2 * width), b.dtype, role))
        shard = Shard(name, draw(st.sampled_from((0, width))), width, 2 * width, size - short if short else 0)
    else:
        tensors.append(Tensor(name, (32, 32 * size), b.dtype, role))
        shard = Shard(name, 0, 0, 0, size - short if short else 0)
    buffers[-1] = attrs.evolve(b, capacity=cap, shard=shard)


def _scratch(draw: st.DrawFn, slot: Slot, stage: _Stage, trips: dict[str, int], tensors: list[Tensor],
             buffers: list[Buffer], next_cb: dict[Site, int], broken: bool) -> None:
    """A scratch buffer of engine ``slot`` (docs/semantics.md "Scratch buffers"): each iteration of ``stage`` reads
    its tile of a fresh input into the same one-page scratch bytes, barriers and loads them; after the stage,
    sometimes a drained store of a partial, its write to a fresh one-tile output and a write barrier. Broken
    (sometimes): the load before the barrier or no barrier until after the stage (``scratch-unlanded``), the store
    undrained before the write (``scratch-unlanded``), or a second store before the barrier (``scratch-reuse``)."""
    n = _iterations(stage, trips)
    b = len(buffers)
    cb = next_cb.get(slot[0], 0)
    next_cb[slot[0]] = cb + 1
    buffers.append(Buffer(b, f"scratch{b}", slot[0], cb, 1, 1, "bf16", scratch=True))
    x = f"sx{b}"
    tensors.append(_tensor(x, n, Role.INPUT))
    faults = ("none", "none", "load_early", "no_barrier", "undrained", "store_late") if broken else ("none",)
    fault = draw(st.sampled_from(faults))
    read = ReadTiles(x, _addr(stage, 0, 1), 1, b)
    if fault == "load_early":
        unit: list[Op] = [read, ScratchAccess(b), ReadBarrier()]
    elif fault == "no_barrier":
        unit = [read]
        stage.after.setdefault(slot, []).append(ReadBarrier())
    else:
        unit = [read, ReadBarrier(), ScratchAccess(b)]
    stage.give.setdefault(slot, []).append(unit)
    if fault in ("undrained", "store_late") or draw(st.booleans()):
        y = f"sy{b}"
        tensors.append(_tensor(y, 1, Role.OUTPUT))
        store = ScratchAccess(b, store=True, drain=fault != "undrained")
        tail: list[Op] = [store, WriteTiles(b, y, Addr(0), 1)]
        if fault == "store_late":
            tail.append(ScratchAccess(b, store=True, drain=True))
        stage.after.setdefault(slot, []).extend([*tail, WriteBarrier()])


def _shared_wait(draw: st.DrawFn, slots: list[Slot], buffers: list[Buffer], next_cb: dict[Site, int],
                 prologue: dict[Slot, list[Op]], broken: bool) -> None:
    """One token buffer X of a site's three engines: ``prod`` pushes it, ``cons`` waits and pops it, ``waiter`` (a third
    engine, or sometimes ``prod`` itself) waits on it without popping (a sharing waiter, ir/sharing.py), all in the
    engines' prologues. Correct: the waiter
    pushes a token into a second buffer Y after its wait, and the consumer waits for that token before its pop (the
    pop ordered after the other's wait). Broken (sometimes, with ``broken``): the consumer pops X without waiting for
    Y, so a data-movement waiter arriving after the pop waits forever (tt-metal #44366); or the waiter pops X too
    (two consumers, #55996)."""
    prod, cons, waiter = draw(st.permutations(slots))[:3]
    if draw(st.integers(0, 2)) == 0:
        waiter = prod  # the producer waits on what it pushed (real kernels: compute waits on a buffer it packed)
    site = prod[0]
    x, y = len(buffers), len(buffers) + 1
    for b in (x, y):
        cb = next_cb.get(site, 0)
        next_cb[site] = cb + 1
        buffers.append(Buffer(b, f"cb{b}", site, cb, 1, 1, "bf16"))
    mode = draw(st.sampled_from(("ordered", "ordered", "unordered", "two-poppers"))) if broken else "ordered"
    prologue.setdefault(prod, []).extend([Reserve(x, 1), Push(x, 1)])
    shared: list[Op] = [Wait(x, 1), Reserve(y, 1), Push(y, 1)]
    if mode == "two-poppers":
        shared.append(Pop(x, 1))
    prologue.setdefault(waiter, []).extend(shared)
    own: list[Op] = [Wait(x, 1)]
    if mode != "unordered":
        own += [Wait(y, 1), Pop(y, 1)]
    own.append(Pop(x, 1))
    prologue.setdefault(cons, []).extend(own)


def _in_place(draw: st.DrawFn, slots: list[Slot], tensors: list[Tensor], buffers: list[Buffer],
              next_cb: dict[Site, int], prologue: dict[Slot, list[Op]], broken: bool) -> tuple[Slot, list[Op]]:
    """Reads in place (docs/semantics.md "Reads in place") on a site with a compute engine and a data-movement
    engine: a unit for the compute engine's end, ``acquire; compute reading pages by index with no wait; release``.
    It reads a resident input shard (``res``: a buffer on a fresh input's shard of ``pages`` pages that nothing else
    names) at page ``k < pages``, or a constant tile (``eps``: the mover fills and pushes it, then pushes a token
    into ``tok``, which compute waits for and pops in its prologue: eps's read is ordered through ``tok``, as the
    layernorm's behind ``scaler_global``), or both. Broken (sometimes): the resident read one page past the shard, or
    the mover pushing the token before eps (``cb-read-unpublished``)."""
    comp = next(x for x in slots if x[1] is Engine.COMPUTE)
    mover = draw(st.sampled_from([x for x in slots if x[1] is not Engine.COMPUTE]))
    site = comp[0]

    def new_buffer(pages: int, shard: Shard | None = None) -> int:
        b, cb = len(buffers), next_cb.get(site, 0)
        next_cb[site] = cb + 1
        buffers.append(Buffer(b, f"cb{b}", site, cb, 1, pages, "bf16", shard=shard))
        return b

    form = draw(st.sampled_from(("res", "eps", "both")))
    reads: list[InPlace] = []
    if form in ("res", "both"):
        pages = draw(st.integers(1, 3))
        name = f"res{len(tensors)}"
        tensors.append(_tensor(name, pages, Role.INPUT))
        res = new_buffer(pages, Shard(name, 0, 0, 0, pages))
        past = broken and draw(st.integers(0, 3)) == 0
        reads.append(InPlace(res, pages if past else draw(st.integers(0, pages - 1))))
    if form in ("eps", "both"):
        eps, tok = new_buffer(1), new_buffer(1)
        fill: list[Op] = [Reserve(eps, 1), FillTiles(eps, 1, "bcast_scalar", drain=True), Push(eps, 1)]
        token: list[Op] = [Reserve(tok, 1), Push(tok, 1)]
        early = broken and draw(st.integers(0, 2)) == 0
        prologue.setdefault(mover, []).extend([*token, *fill] if early else [*fill, *token])
        prologue.setdefault(comp, []).extend([Wait(tok, 1), Pop(tok, 1)])
        reads.append(InPlace(eps, 0))
    return comp, [AcquireAcc(1, "bf16"), Compute("add_tiles", 1, (), tuple(reads)), ReleaseAcc()]


def _multicast(draw: st.DrawFn, target: Target, by_site: dict[Site, list[Slot]], stage: _Stage, trips: dict[str, int],
               tensors: list[Tensor], buffers: list[Buffer], next_cb: dict[Site, int],
               semaphore: Callable[[tuple[Site, ...], int], int], groups: list[Group],
               prologue: dict[Slot, list[Op]], broken: bool = True) -> None:
    """The lockstep multicast handshake of reference §2.5 from site 0 to site 1 inside ``stage``.

    The sender reads a block into its buffer, waits for the receiver's ready increment, resets its ready counter
    (right after the wait, or after the data multicast: a reset need not follow its wait directly), multicasts the
    block, flushes, multicasts its flag (its own word of the flag semaphore, set to VALID once at its start) and
    pushes the block to its site's consumer. The receiver reserves its slot and either invalidates its flag,
    increments the sender's ready counter and waits for VALID (the reference order), or increments, waits for VALID
    and then invalidates (the vendor order: the flag starts INVALID, the launch is its first reset). Both buffers are
    the first of their sites (cb 0 at the reserved base: the multicast lands at the sender's address).

    Sometimes the sender is a *forwarder*: another engine of site 0 fills and pushes the block, the forwarder waits
    for it, multicasts it from its read pointer (``McastSend(front=True)``) and pops it once the multicast left.
    Sometimes it multicasts pages it already pushed (``McastSend(behind=pages)``, after its push).

    In a broken draw, one in eight senders miscounts the destinations of its data or its flag multicast:
    ``num_dests`` 2 for its one destination (tt-metal #42100: the sender's write barrier then never passes) or 0
    (fewer than the rectangle: the barrier passes only at the moment an acknowledgement is still due, and deadlocks
    when every landing came first) — a deadlock the checker must refute, never prove.

    Sometimes (``_remote``) the block goes by a *remote write* announced by an increment instead of a flag.
    """
    if draw(st.integers(0, 2)) == 0:
        _remote(draw, by_site, stage, trips, tensors, buffers, next_cb, semaphore, groups, broken)
        return
    s0, s1 = SITES
    ps, cs = _mover_first(draw, by_site[s0])
    pr, cr = _mover_first(draw, by_site[s1])
    cap = draw(st.integers(1, 4))
    pages = draw(st.sampled_from([d for d in range(1, cap + 1) if cap % d == 0]))
    dtype = draw(st.sampled_from(DTYPES))
    src, dst = len(buffers), len(buffers) + 1
    buffers.append(Buffer(src, f"cb{src}", s0, 0, 1, cap, dtype))
    buffers.append(Buffer(dst, f"cb{dst}", s1, 0, 1, cap, dtype))
    next_cb[s0], next_cb[s1] = 1, 1
    flag, ready = semaphore((s0, s1), 0), semaphore((s0,), 0)
    groups.append(Group(len(groups), s0, (1, 0, 1, 0)))
    g = groups[-1].id
    cond = draw(st.sampled_from((WaitCond.EQ, WaitCond.GE)))
    late_reset = draw(st.booleans())
    data = f"in{len(tensors)}"
    tensors.append(_tensor(data, pages * _iterations(stage, trips), Role.INPUT, dtype))
    forward = draw(st.integers(0, 2)) == 0 and cs[1] is not Engine.COMPUTE  # a forwarder multicasts: a mover
    # Now and then (broken draws only) the data multicast, or the flag's, states 2 destinations for its group of 1
    # (tt-metal #42100: the sender's write barrier after it never passes) or 0, fewer than the rectangle (the
    # barrier passes only while an acknowledgement is still due, else never: docs/semantics.md "Acknowledgement
    # counts").
    nd, nd_flag = 1, 1
    if broken and draw(st.integers(0, 7)) == 0:
        if draw(st.booleans()):
            nd = draw(st.sampled_from((0, 2)))
        else:
            nd_flag = draw(st.sampled_from((0, 2)))
    fill: list[Op] = [Reserve(src, pages), ReadTiles(data, _addr(stage, 0, pages), pages, src), ReadBarrier()]
    send: list[Op] = [SemWait(ready, cond, 1)]
    send += [McastSend(src, pages, g, nd, front=forward), SemSet(ready, 0)] if late_reset else [
        SemSet(ready, 0), McastSend(src, pages, g, nd, front=forward)]
    if forward:
        # A forwarder: ``ps`` fills and pushes the block, ``cs`` waits for it, multicasts it from its read pointer
        # and pops it once the multicast left — a flush between data and flag (which also orders them on
        # Blackhole), or after the flag (async-flag-overtake on Blackhole), or none (async-source-reuse at the pop).
        leave = draw(st.sampled_from(("between", "between", "after", "none"))) if broken else "between"
        send += [Flush()] if leave == "between" else []
        send += [McastSetValid(flag, g, nd_flag)] + ([Flush()] if leave == "after" else []) + [Pop(src, pages)]
        prologue.setdefault(cs, []).append(SemSet(flag, 1))
        stage.give.setdefault(ps, []).append([*fill, Push(src, pages)])
        stage.take.setdefault(cs, []).append([Wait(src, pages), *send])
    elif draw(st.integers(0, 3)) == 0:
        # Pages already pushed (``McastSend.behind``): the producer publishes the block to its consumer first and then
        # multicasts it from the address it took before the push (the sharded layernorm's ex_global,
        # reader_mcast_sender_unary_sharded_ln.cpp:267-282). In a broken draw the address is sometimes taken one page
        # too far back for a block of fewer pages than the ring (a page it pushed earlier, or never pushed).
        back = pages + 1 if broken and pages < cap and draw(st.integers(0, 3)) == 0 else pages
        send = [s if not isinstance(s, McastSend) else attrs.evolve(s, behind=back) for s in send]
        send += [Flush(), McastSetValid(flag, g, nd_flag)]
        prologue.setdefault(ps, []).append(SemSet(flag, 1))
        stage.give.setdefault(ps, []).append([*fill, Push(src, pages), *send])
        stage.take.setdefault(cs, []).append([Wait(src, pages), Pop(src, pages)])
    else:
        send += [Flush(), McastSetValid(flag, g, nd_flag), Push(src, pages)]
        prologue.setdefault(ps, []).append(SemSet(flag, 1))
        stage.give.setdefault(ps, []).append([*fill, *send])
        stage.take.setdefault(cs, []).append([Wait(src, pages), Pop(src, pages)])
    vendor = draw(st.booleans())
    send_give, send_take = stage.give.get(ps, [])[-1:], stage.take.get(cs, [])[-1:]
    # Virtual channels (``McastSend.vc``), decided by draws made above, no draw of their own (the derandomized
    # searches keep drawing the programs they drew; those with no channel named are the same programs): with a late
    # reset the sender's calls name their own channels, the data multicast VC 4 (noc_async_write_multicast), the flag
    # VC 1 (noc_semaphore_set_remote to its one core), so only a write barrier orders them (tt-metal #55555): correct
    # programs put one between them instead of the flush, broken ones keep the flush in the receiver's vendor order
    # (async-flag-overtake); with an early reset and a ``ge`` ready wait both name VC 4, one channel, which the flush
    # orders as before.
    if late_reset or cond is WaitCond.GE:
        two = late_reset
        for unit in (*send_give, *send_take):
            unit[:] = _on_channels(unit, 4, 1 if two else 4, barrier=two and not (broken and vendor))
    receiver: list[Op] = [Reserve(dst, pages)]
    receiver += ([SemInc(ready, s0, 1), SemWait(flag, WaitCond.EQ, 1), SemSet(flag, 0)] if vendor
                 else [SemSet(flag, 0), SemInc(ready, s0, 1), SemWait(flag, WaitCond.EQ, 1)])
    receiver.append(Push(dst, pages))
    stage.give.setdefault(pr, []).append(receiver)
    stage.after.setdefault(pr, []).append(AtomicBarrier())
    stage.take.setdefault(cr, []).append([Wait(dst, pages), Pop(dst, pages)])
    # The sender's multicasts land by a write barrier before it leaves the stage: a later stage's increment into
    # site 1 must not overtake them (``async-inc-overtake``; correct_programs drew 2 of 500 so, once multicasts of
    # pages already pushed were drawn).
    stage.after.setdefault(cs if forward else ps, []).append(WriteBarrier())


def _on_channels(unit: list[Op], data: int, flag: int, barrier: bool) -> list[Op]:
    """``unit`` with its data multicasts on virtual channel ``data`` and its flags on ``flag``; with ``barrier``, a
    Flush right before a flag becomes a WriteBarrier (a flush orders one channel only)."""
    out: list[Op] = []
    for i, op in enumerate(unit):
        if isinstance(op, McastSend):
            op = attrs.evolve(op, vc=data)
        elif isinstance(op, McastSetValid):
            op = attrs.evolve(op, vc=flag)
        elif isinstance(op, Flush) and barrier and i + 1 < len(unit) and isinstance(unit[i + 1], McastSetValid):
            op = WriteBarrier()
        out.append(op)
    return out


def _remote(draw: st.DrawFn, by_site: dict[Site, list[Slot]], stage: _Stage, trips: dict[str, int],
            tensors: list[Tensor], buffers: list[Buffer], next_cb: dict[Site, int],
            semaphore: Callable[[tuple[Site, ...], int], int], groups: list[Group], broken: bool) -> None:
    """A remote write of buffer pages from site 0 into site 1 inside ``stage``, announced by an increment (sort's peer
    exchange, one way: docs/semantics.md "Remote writes to an explicit place").

    Site 1 reserves its slot of cb 0 and increments site 0's ``ready`` word; site 0 reads a block into cb 1, waits
    for ``ready`` and resets it, reserves its own copy of cb 0, writes the block into site 1's cb 0 at its write
    pointer of that copy (``McastSend(dst=copy)`` on the one-core group of site 1), sometimes also a mailbox word of
    site 1 (``InlineWrite``), waits for the writes to land (``WriteBarrier``) and increments site 1's ``done`` word;
    site 1 waits for it, resets it and publishes the block. Each site's other engine pops what its site pushed.

    Broken (sometimes, with ``broken``): the increment before the barrier, or a flush instead (``async-inc-overtake``;
    the receiver may publish a page that has not landed); the block written one page past the write pointer
    (``offset`` 1: a page published unlanded); the sender's copy not pushed, so the next block lands on the last one
    (``mcast-slot`` while the receiver has not published or not popped it; once it has, the block lands on free
    pages behind the receiver's write pointer a lap on, and the receiver publishes pages it never filled:
    ``mcast-publish-early``); the write's ``num_dests`` 0 or 2 for its one destination (a deadlock at the barrier)."""
    s0, s1 = SITES
    ps, cs = _mover_first(draw, by_site[s0])
    pr, cr = _mover_first(draw, by_site[s1])
    cap = draw(st.integers(1, 4))
    pages = draw(st.sampled_from([d for d in range(1, cap + 1) if cap % d == 0]))
    dtype = draw(st.sampled_from(DTYPES))
    # The copy and the destination are the first buffers of their sites (cb 0 at the reserved base): the write lands
    # at the address the sender's copy has (mcast-address).
    copy, src, dst = len(buffers), len(buffers) + 1, len(buffers) + 2
    buffers.append(Buffer(copy, f"cb{copy}", s0, 0, 1, cap, dtype))
    buffers.append(Buffer(src, f"cb{src}", s0, 1, 1, cap, dtype))
    buffers.append(Buffer(dst, f"cb{dst}", s1, 0, 1, cap, dtype))
    next_cb[s0], next_cb[s1] = 2, 2
    ready, done = semaphore((s0,), 0), semaphore((s1,), 0)
    mailbox = semaphore((s1,), 0) if draw(st.booleans()) else None
    groups.append(Group(len(groups), s0, (1, 0, 1, 0)))
    g = groups[-1].id
    fault = draw(st.sampled_from(("none", "none", "inc-first", "flush", "offset", "no-push"))) if broken else "none"
    offset = 1 if fault == "offset" and cap >= pages + 1 else 0
    # Broken, now and then: the remote write's count of destinations 0 or 2 for its one core (the write barrier after
    # it deadlocks once every acknowledgement is back, or never passes: docs/semantics.md "Acknowledgement counts").
    nd = draw(st.sampled_from((0, 2))) if broken and draw(st.integers(0, 7)) == 0 else 1
    data = f"in{len(tensors)}"
    tensors.append(_tensor(data, pages * _iterations(stage, trips), Role.INPUT, dtype))
    writes: list[Op] = [McastSend(src, pages, g, nd, dst=copy, offset=offset)]
    if mailbox is not None:
        writes.append(InlineWrite(mailbox, s1, 1 + draw(st.integers(0, 2))))
    announce: list[Op] = [WriteBarrier(), SemInc(done, s1, 1)]
    if fault == "inc-first":
        announce = [SemInc(done, s1, 1), WriteBarrier()]
    elif fault == "flush":
        announce = [Flush(), SemInc(done, s1, 1)]
    send: list[Op] = [Reserve(src, pages), ReadTiles(data, _addr(stage, 0, pages), pages, src), ReadBarrier(),
                      SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), Reserve(copy, pages), *writes, *announce,
                      *([] if fault == "no-push" else [Push(copy, pages)]), Push(src, pages)]
    stage.give.setdefault(ps, []).append(send)
    drain: list[Op] = [Wait(src, pages), Pop(src, pages)]
    if fault != "no-push":
        drain += [Wait(copy, pages), Pop(copy, pages)]
    stage.take.setdefault(cs, []).append(drain)
    receiver: list[Op] = [Reserve(dst, pages), SemInc(ready, s0, 1), SemWait(done, WaitCond.EQ, 1), SemSet(done, 0),
                          Push(dst, pages)]
    stage.give.setdefault(pr, []).append(receiver)
    stage.after.setdefault(pr, []).append(AtomicBarrier())
    stage.take.setdefault(cr, []).append([Wait(dst, pages), Pop(dst, pages)])


def _remote_read(draw: st.DrawFn, by_site: dict[Site, list[Slot]], stage: _Stage, buffers: list[Buffer],
                 next_cb: dict[Site, int], semaphore: Callable[[tuple[Site, ...], int], int], broken: bool) -> None:
    """A remote read inside ``stage``: site 1 reads each block site 0 publishes, straight from site 0's buffer pages
    (the sharded layernorm's partials, docs/semantics.md "Remote reads"; ``RemoteRead``).

    Site 0's owner fills a block of cb 0 by local stores, pushes it and increments site 1's ``ready`` word; its other
    engine waits for ``done`` (and resets it) before it pops the block, so no page is reserved again while a read of
    it is in flight. Site 1 keeps its own copy of cb 0 in step (its other engine pushes a token page per block, the
    reader pops it after the read): the reader's read pointer of that copy is the address it reads at the owner. The
    reader waits for ``ready`` and resets it, reserves pages of cb 1, reads the block into them, waits for the read
    (``ReadBarrier``), publishes them, pops its copy and increments ``done``; its other engine drains cb 1. The ring
    holds one block, so the owner's next increment comes after the pop, after ``done``, after the reader's reset: no
    increment races a reset.

    Broken (sometimes, with ``broken``): the read before the ``ready`` wait or one page past the read pointer
    (``offset`` 1, in a ring of two blocks: ``remote-read-unpublished``), the owner popping without waiting for
    ``done`` (its producer may refill a page the read has not taken yet: ``async-source-reuse``), or the pages
    published before the read barrier (``async-read-publish``)."""
    s0, s1 = SITES
    owner, drain = _mover_first(draw, by_site[s0])
    reader, other = _mover_first(draw, by_site[s1])
    pages = draw(st.integers(1, 2))
    cap = pages * (draw(st.integers(1, 2)) if broken else 1)
    dtype = draw(st.sampled_from(DTYPES))
    # The owner's buffer and the reader's copy share cb 0 (a remote read addresses the owner's pages by the copy's
    # read pointer, so they are of one capacity); the pages land in cb 1 of site 1.
    src, copy, into = len(buffers), len(buffers) + 1, len(buffers) + 2
    buffers.append(Buffer(src, f"cb{src}", s0, 0, 1, cap, dtype))
    buffers.append(Buffer(copy, f"cb{copy}", s1, 0, 1, cap, dtype))
    buffers.append(Buffer(into, f"cb{into}", s1, 1, 1, pages, dtype))
    next_cb[s0], next_cb[s1] = 1, 2
    ready, done = semaphore((s1,), 0), semaphore((s0,), 0)
    fault = draw(st.sampled_from(("none", "none", "early", "offset", "pop-early", "publish-early"))) if broken \
        else "none"
    read: Op = RemoteRead(copy, s0, pages, into, offset=1 if fault == "offset" and cap >= 2 * pages else 0)
    arrive: list[Op] = [SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0)]
    take: list[Op] = [Reserve(into, pages), read, ReadBarrier(), Push(into, pages)]
    if fault == "early":
        take = [Reserve(into, pages), read, *arrive, ReadBarrier(), Push(into, pages)]
    else:
        take = [*arrive, *take]
    if fault == "publish-early":
        take = [x for x in take if not isinstance(x, ReadBarrier)]
        take += [ReadBarrier()]
    stage.give.setdefault(owner, []).append([Reserve(src, pages), FillTiles(src, pages, "partial", drain=True),
                                             Push(src, pages), SemInc(ready, s1, 1)])
    stage.after.setdefault(owner, []).append(AtomicBarrier())
    let_go: list[Op] = [] if fault == "pop-early" else [SemWait(done, WaitCond.EQ, 1), SemSet(done, 0)]
    stage.take.setdefault(drain, []).append([*let_go, Wait(src, pages), Pop(src, pages)])
    stage.give.setdefault(other, []).append([Reserve(copy, pages), Push(copy, pages)])
    stage.give.setdefault(reader, []).append([Wait(copy, pages), *take, Pop(copy, pages), SemInc(done, s0, 1)])
    stage.after.setdefault(reader, []).append(AtomicBarrier())
    stage.take.setdefault(other, []).append([Wait(into, pages), Pop(into, pages)])


def _indirect(draw: st.DrawFn, by_site: dict[Site, list[Slot]], stage: _Stage, trips: dict[str, int],
              tensors: list[Tensor], buffers: list[Buffer], next_cb: dict[Site, int], broken: bool = True) -> None:
    """An indirect access inside ``stage``, as tt-metal's embedding reader (gather) and KV-cache writer (scatter) do
    it: the index is read through ``get_read_ptr`` of an index buffer's front page, between ``cb_wait_front`` and
    ``cb_pop_front`` (docs/semantics.md, "index buffer"; ``cb-read-unwaited``).

    The producer reads one tile of the index tensor (an int32 input) into the index buffer (capacity 1) per
    iteration (a gather's block of indices), or once before the stage's loop (a KV-cache update's position); the
    consumer waits for it and pops it in the same iteration (or before and after its loop), making its accesses in
    between. Gather: the consumer reserves ``pages`` pages of a data buffer, reads a block of a table (a parameter)
    into them at the indirect address and pushes them; the producer waits for and pops them. Scatter: the producer
    reads ``pages`` tiles of an input into the data buffer and pushes them; the consumer waits for them, writes them
    to a state at the indirect address and lets them go (a write barrier or a flush) before it pops them. The
    address is ``block * (i * inner + j) + pages * d`` with ``d`` in ``[lo, hi]`` and ``block = pages * (hi + 1)``:
    every value of the index stays inside the tensor of ``block`` tiles per iteration, and two iterations never
    touch one tile whatever their indices. The ``Dynamic`` part names the index buffer (``buf``) or not (derived:
    the one buffer a read of the index tensor fills). With ``broken`` the accesses sometimes come before the index
    page's wait or after its pop (``cb-read-unwaited``)."""
    site = draw(st.sampled_from(_two_movers(by_site)))
    prod, cons = draw(st.permutations([x for x in by_site[site] if x[1] is not Engine.COMPUTE]))[:2]
    n = _iterations(stage, trips)
    pages = draw(st.integers(1, 2))
    lo = draw(st.integers(0, 1))
    hi = draw(st.integers(lo, lo + 2))
    block = pages * (hi + 1)
    once = draw(st.booleans())
    index = f"ix{len(tensors)}"
    tensors.append(Tensor(index, (32, 32 * (1 if once else max(n, 1))), "int32", Role.INPUT))
    ib, db = len(buffers), len(buffers) + 1
    for b, cap, dtype in ((ib, 1, "int32"), (db, pages, "bf16")):
        cb = next_cb.get(site, 0)
        next_cb[site] = cb + 1
        buffers.append(Buffer(b, f"cb{b}", site, cb, 1, cap, dtype))
    # The address names its index buffer (as the compiler does) or leaves it to be derived from the index read.
    named = draw(st.booleans())
    addr = attrs.evolve(_addr(stage, 0, block), dynamic=Dynamic(index, lo, hi, pages, ib if named else None))
    fill: list[Op] = [Reserve(ib, 1), ReadTiles(index, Addr(0) if once else _addr(stage, 0, 1), 1, ib), ReadBarrier(),
                      Push(ib, 1)]
    if once:
        stage.before.setdefault(prod, []).extend(fill)
    else:
        stage.give.setdefault(prod, []).append(fill)
    access: list[Op]
    if draw(st.booleans()):
        table = f"in{len(tensors)}"
        tensors.append(_tensor(table, n * block, Role.PARAM))
        access = [Reserve(db, pages), ReadTiles(table, addr, pages, db), ReadBarrier(), Push(db, pages)]
        stage.take.setdefault(prod, []).append([Wait(db, pages), Pop(db, pages)])
    else:
        rows = f"in{len(tensors)}"
        tensors.append(_tensor(rows, n * pages, Role.INPUT))
        stage.give.setdefault(prod, []).append(
            [Reserve(db, pages), ReadTiles(rows, _addr(stage, 0, pages), pages, db), ReadBarrier(), Push(db, pages)])
        cache = f"st{len(tensors)}"
        tensors.append(_tensor(cache, n * block, Role.STATE))
        leave: Op = WriteBarrier() if draw(st.booleans()) else Flush()
        access = [Wait(db, pages), WriteTiles(db, cache, addr, pages), leave, Pop(db, pages)]
    # Broken: every access before the index page's wait, or after its pop.
    order = draw(st.sampled_from(("inside", "inside", "before", "after"))) if broken else "inside"
    first: list[Op] = [] if order == "before" else [Wait(ib, 1)] if order == "inside" else [Wait(ib, 1), Pop(ib, 1)]
    last: list[Op] = [] if order == "after" else [Pop(ib, 1)] if order == "inside" else [Wait(ib, 1), Pop(ib, 1)]
    if once:
        # The pop never blocks: it goes ahead of the stage's other closing ops.
        stage.before.setdefault(cons, []).extend(first)
        stage.after[cons] = [*last, *stage.after.get(cons, [])]
        stage.take.setdefault(cons, []).append(access)
    else:
        stage.take.setdefault(cons, []).append([*first, *access, *last])


def _mover_first(draw: st.DrawFn, slots: list[Slot]) -> tuple[Slot, Slot]:
    """Two engines of a site's ``slots`` (two or more, at most one of them compute): the first a data-movement engine
    (it issues the NoC transactions), the second any other."""
    first = draw(st.sampled_from([x for x in slots if x[1] is not Engine.COMPUTE]))
    return first, draw(st.sampled_from([x for x in slots if x != first]))


def _two_movers(by_site: dict[Site, list[Slot]]) -> list[Site]:
    """The sites running both data-movement engines."""
    return [s for s, ss in by_site.items() if sum(x[1] is not Engine.COMPUTE for x in ss) >= 2]


def _waits(unit: list[Op]) -> bool:
    return any(isinstance(op, SemWait) for op in unit)


def _walk(ops: tuple[Op, ...]) -> list[Op]:
    out: list[Op] = []
    for op in ops:
        out.append(op)
        if isinstance(op, Loop):
            out += _walk(op.body)
    return out


# ---------------------------------------------------------------------------------------------- mutations

Path = tuple[int, ...]


def _paths(ops: tuple[Op, ...], prefix: Path = ()) -> list[Path]:
    """The path of every op, loops included, in program order."""
    out: list[Path] = []
    for i, op in enumerate(ops):
        out.append((*prefix, i))
        if isinstance(op, Loop):
            out += _paths(op.body, (*prefix, i))
    return out


def _lists(ops: tuple[Op, ...], prefix: Path = ()) -> list[Path]:
    """The path of every op list (the top level and each loop body)."""
    out: list[Path] = [prefix]
    for i, op in enumerate(ops):
        if isinstance(op, Loop):
            out += _lists(op.body, (*prefix, i))
    return out


#: The range a "change a count" mutation draws a changed count from. ``num_dests``: the blueprints' groups have one
#: destination, so 2 is a count above the group's (tt-metal #42100: the write barrier after it never passes) and 0 one
#: below (the barrier deadlocks once every acknowledgement is back; docs/semantics.md "Acknowledgement counts").
_COUNTS: dict[str, tuple[int, int]] = {"pages": (1, 5), "tiles": (1, 5), "value": (0, 4), "by": (1, 3),
                                       "num_dests": (0, 2)}


@st.composite
def mutate(draw: st.DrawFn, p: Program) -> Program:
    """``p`` with one mutation: drop an op, change a count (pages, tiles, semaphore value or increment, a multicast's
    num_dests, loop count), change the page a read in place reads (``InPlace.page``), or swap two ops of one op list.
    Returns ``p`` itself when the chosen engine has nothing to mutate."""
    e = draw(st.integers(0, len(p.programs) - 1))
    ep = p.programs[e]
    ops = ep.ops
    kind = draw(st.sampled_from(("drop", "count", "swap", "index")))
    if kind == "drop" and ops:
        path = draw(st.sampled_from(_paths(ops)))
        body = body_at(ops, path[:-1])
        ops = with_body(ops, path[:-1], body[: path[-1]] + body[path[-1] + 1 :])
    elif kind == "count":
        cands = [q for q in _paths(ops) if _count_fields(body_at(ops, q[:-1])[q[-1]])]
        if cands:
            path = draw(st.sampled_from(cands))
            body = body_at(ops, path[:-1])
            op = body[path[-1]]
            field = draw(st.sampled_from(_count_fields(op)))
            lo, hi = _COUNTS.get(field, (0, 3))
            new = attrs.evolve(op, **{field: draw(st.integers(lo, hi))})  # type: ignore[misc, arg-type]
            ops = with_body(ops, path[:-1], (*body[: path[-1]], new, *body[path[-1] + 1 :]))
    elif kind == "index":
        cands = [q for q in _paths(ops) if isinstance(body_at(ops, q[:-1])[q[-1]], Compute)
                 and body_at(ops, q[:-1])[q[-1]].in_place]  # type: ignore[union-attr]
        if cands:
            path = draw(st.sampled_from(cands))
            body = body_at(ops, path[:-1])
            op = body[path[-1]]
            assert isinstance(op, Compute)
            k = draw(st.integers(0, len(op.in_place) - 1))
            reads = list(op.in_place)
            reads[k] = attrs.evolve(reads[k], page=draw(st.integers(0, 3)))
            new = attrs.evolve(op, in_place=tuple(reads))
            ops = with_body(ops, path[:-1], (*body[: path[-1]], new, *body[path[-1] + 1 :]))
    elif kind == "swap":
        cands = [q for q in _lists(ops) if len(body_at(ops, q)) >= 2]
        if cands:
            where = draw(st.sampled_from(cands))
            items = list(body_at(ops, where))
            i, j = draw(st.lists(st.integers(0, len(items) - 1), min_size=2, max_size=2, unique=True))
            items[i], items[j] = items[j], items[i]
            ops = with_body(ops, where, tuple(items))
    progs = (*p.programs[:e], attrs.evolve(ep, ops=ops), *p.programs[e + 1 :])
    return attrs.evolve(p, programs=progs)


def _count_fields(op: Op) -> list[str]:
    if isinstance(op, Loop):
        return ["count"] if isinstance(op.count, int) else []
    return [f for f in ("pages", "tiles", "value", "by", "num_dests") if hasattr(op, f)]


@st.composite
def mutants_of(draw: st.DrawFn, p: Program, max_mutations: int = 2) -> Program:
    """``p`` with 0..``max_mutations`` mutations (none about half of the time). A mutation whose program ``validate``
    refuses is not taken (dropping the only pack into an output's shard leaves a program that publishes the tensor's
    tiles unwritten: bad input, not a program to certify), so every program drawn is valid when ``p`` is."""
    n = draw(st.integers(0, max_mutations)) if draw(st.booleans()) else 0
    for _ in range(n):
        q = draw(mutate(p))
        if not validate(q):
            p = q
    return p


@st.composite
def programs(draw: st.DrawFn, max_mutations: int = 2) -> Program:
    """A blueprint with 0..``max_mutations`` mutations (``mutants_of``). Raises ``AssertionError`` when a blueprint
    is not valid: the generators' fault, which the differential tests must show."""
    p = draw(blueprints())
    errs = validate(p)
    assert errs == [], errs
    return draw(mutants_of(p, max_mutations))


def describe(p: Program) -> dict[str, Any]:
    """A compact summary used in assertion messages: engines, ops per engine, buffers and semaphores."""
    return {
        "engines": [ep.key for ep in p.programs],
        "ops": sum(len(_walk(ep.ops)) for ep in p.programs),
        "buffers": [(b.id, str(b.site), b.capacity) for b in p.buffers],
        "semaphores": [(s.id, [str(x) for x in s.sites], s.init) for s in p.semaphores],
        "trips": {t.name: t.max for t in p.trips},
    }


def correct_programs() -> st.SearchStrategy[Program]:
    """Scheduled programs correct by construction: ``blueprints(broken=False)``. For every trip value and every
    interleaving none deadlocks, breaks a rule or races on a tensor, so the checker must never refute one (and the
    explorer finds each ``ok``)."""
    return blueprints(broken=False)
