"""Hypothesis strategies for the protocols of issue 7: random programs (``programs()``, correct by construction
about half of the time, then mutated) rewritten by one or more *protocol rewrites*, each of which may keep or break
the program:

- ``guard``: wrap an op of a loop body (or a run of them) in ``If(var, guard)`` of an enclosing loop;
- ``affine``: a trip loop's count ``t`` becomes ``TripCount(t, scale, offset)``; a constant count may become one;
- ``grow``: a wait inside a loop gets a threshold ``value + coef * index``;
- ``setgrow``: a SemSet inside a loop stores ``value + coef * index`` (a word carrying several values, e.g. a flag
  set to the iteration number), sometimes with the waits of that word in the same body growing alike;
- ``mcast``: an increment of another site's word becomes a ``SemIncMcast`` to that site;
- ``src``: a flag multicast reads a constant word other than its own (added as a handshake);
- ``sections``: an engine's ops are split into two sections (state reads see the versions of earlier sections);
- ``jump``: a counting word's increments double and its values scale with them (``init + 2 (x - init)``); each
  ``ge`` wait above ``init`` then asks one less, so an increment jumps past it (the wait sees more than its
  threshold and a reset after it wipes all it saw) — correct programs stay correct, broken ones stay broken;
- ``seq``: a word carrying a sequence (argmax's reduce_all start handshake, ``reader_argmax_interleaved_multicore.cpp``
  378-417, 520-563): a sender sets its word to ``v + c*k`` in each iteration, copies it to a receiver (a loopback
  group when the two share a row or column) and waits for the write, the receiver waits for ``v + c*k`` in turn, then
  a done handshake and the reset copied; about half of the draws break one piece of it (``SEQ_BREAKS``);
- ``epochs``: a VALID word whose sequence restarts (the sharded layernorm's, ``reader_mcast_sender_unary_sharded_ln.cpp``
  :138-141, 272-299 and ``reader_mcast_receiver_unary_sharded_ln.cpp`` :155-157, 255-260): in each of 1-3 passes the
  sender sets its word to 1, 2, (3) in turn, each after an acknowledgement and each multicast to the receiver and
  waited for, the receiver resetting its copy at each pass's start and waiting for each value; about half of the
  draws break one piece of it (``EPOCH_BREAKS``).
"""

from __future__ import annotations

import attrs
from hypothesis import assume
from hypothesis import strategies as st

from verispatial.ir import (
    AtomicBarrier,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Guard,
    If,
    Loop,
    McastSetValid,
    Op,
    Program,
    SectionSpan,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemSet,
    SemWait,
    Site,
    Term,
    TripCount,
    WaitCond,
    WriteBarrier,
)
from verispatial.ir.ops import body_at, with_body
from verispatial.ir.validate import validate
from verispatial.strategies.programs import programs

Path = tuple[int, ...]


def _bodies(ops: tuple[Op, ...], prefix: Path = (), loops: tuple[str, ...] = ()) -> list[tuple[Path, tuple[str, ...]]]:
    """Every op list inside at least one loop (its path, the enclosing loop variables)."""
    out: list[tuple[Path, tuple[str, ...]]] = []
    for i, op in enumerate(ops):
        if isinstance(op, Loop):
            inner = (*loops, op.var)
            out.append(((*prefix, i), inner))
            out += _bodies(op.body, (*prefix, i), inner)
        elif isinstance(op, If):
            out.append(((*prefix, i), loops))
            out += _bodies(op.body, (*prefix, i), loops)
    return out


def _map_ops(ops: tuple[Op, ...], f: object) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, (Loop, If)):
            op = attrs.evolve(op, body=_map_ops(op.body, f))
        out.append(f(op))  # type: ignore[operator]
    return tuple(out)


def _with_engine(p: Program, e: int, ep: EngineProgram) -> Program:
    return attrs.evolve(p, programs=(*p.programs[:e], ep, *p.programs[e + 1:]))


@st.composite
def _guard(draw: st.DrawFn, p: Program) -> Program:
    e = draw(st.integers(0, len(p.programs) - 1))
    ep = p.programs[e]
    cands = [(w, lv) for w, lv in _bodies(ep.ops) if body_at(ep.ops, w)]
    if not cands:
        return p
    where, loops = draw(st.sampled_from(cands))
    body = body_at(ep.ops, where)
    i = draw(st.integers(0, len(body) - 1))
    j = draw(st.integers(i + 1, len(body)))
    wrapped = If(draw(st.sampled_from(loops)), draw(st.sampled_from(list(Guard))), body[i:j])
    return _with_engine(p, e, attrs.evolve(ep, ops=with_body(ep.ops, where, (*body[:i], wrapped, *body[j:]))))


@st.composite
def _affine(draw: st.DrawFn, p: Program) -> Program:
    scale, offset = draw(st.sampled_from([(1, -1), (2, 0), (1, 1), (2, -1)]))
    trips = [t.name for t in p.trips]
    to_trip = draw(st.booleans()) and trips

    def f(op: Op) -> Op:
        if isinstance(op, Loop) and isinstance(op.count, str):
            return attrs.evolve(op, count=TripCount(op.count, scale, offset))
        if to_trip and isinstance(op, Loop) and isinstance(op.count, int) and op.count >= 1:
            return attrs.evolve(op, count=TripCount(trips[0], scale, offset))
        return op

    e = draw(st.integers(0, len(p.programs) - 1))
    every = draw(st.booleans())  # all engines alike (counts stay matched) or one engine only
    progs = tuple(attrs.evolve(ep, ops=_map_ops(ep.ops, f)) if every or k == e else ep
                  for k, ep in enumerate(p.programs))
    return attrs.evolve(p, programs=progs)


@st.composite
def _grow(draw: st.DrawFn, p: Program) -> Program:
    e = draw(st.integers(0, len(p.programs) - 1))
    ep = p.programs[e]
    cands = []
    for where, loops in _bodies(ep.ops):
        for i, op in enumerate(body_at(ep.ops, where)):
            if isinstance(op, SemWait):
                cands.append((where, loops, i))
    if not cands:
        return p
    where, loops, i = draw(st.sampled_from(cands))
    body = body_at(ep.ops, where)
    op = body[i]
    assert isinstance(op, SemWait)
    coef = draw(st.sampled_from([1, 1, 2]))
    new = attrs.evolve(op, value=max(op.value - coef, 0) if draw(st.booleans()) else op.value,
                       terms=(Term(draw(st.sampled_from(loops)), coef),))
    return _with_engine(p, e, attrs.evolve(ep, ops=with_body(ep.ops, where, (*body[:i], new, *body[i + 1:]))))


@st.composite
def _setgrow(draw: st.DrawFn, p: Program) -> Program:
    e = draw(st.integers(0, len(p.programs) - 1))
    ep = p.programs[e]
    cands = [(where, loops, i) for where, loops in _bodies(ep.ops)
             for i, op in enumerate(body_at(ep.ops, where)) if loops and isinstance(op, SemSet)]
    if not cands:
        return p
    where, loops, i = draw(st.sampled_from(cands))
    body = body_at(ep.ops, where)
    op = body[i]
    assert isinstance(op, SemSet)
    term = Term(draw(st.sampled_from(loops)), draw(st.sampled_from([1, 1, 2])))
    value = op.value + draw(st.sampled_from([0, 1]))
    alike = draw(st.booleans())  # the word's waits in the same body ask for the value of their own iteration

    def grown(x: Op) -> Op:
        if x is op:
            return attrs.evolve(op, value=value, terms=(term,))
        if alike and isinstance(x, SemWait) and x.sem == op.sem and not x.terms:
            return attrs.evolve(x, value=value, terms=(term,))
        return x

    new_body = tuple(grown(x) for x in body)
    return _with_engine(p, e, attrs.evolve(ep, ops=with_body(ep.ops, where, new_body)))


def mcast_rewrite(p: Program) -> Program:
    """Every increment of a word on another site becomes a one-destination ``SemIncMcast`` (each sender site gets
    a group per destination)."""
    groups = list(p.groups)
    gid: dict[tuple[Site, Site], int] = {}
    progs = []
    for ep in p.programs:
        def f(op: Op, ep: EngineProgram = ep) -> Op:
            if isinstance(op, SemInc) and op.at != ep.site:
                key = (ep.site, op.at)
                if key not in gid:
                    gid[key] = len(groups)
                    groups.append(Group(len(groups), ep.site, (op.at.x, op.at.y, op.at.x, op.at.y)))
                return SemIncMcast(op.sem, gid[key], 1, op.by)
            return op
        progs.append(attrs.evolve(ep, ops=_map_ops(ep.ops, f)))
    return attrs.evolve(p, programs=tuple(progs), groups=tuple(groups))


@st.composite
def _two_movers(draw: st.DrawFn, p: Program) -> tuple[EngineProgram, EngineProgram] | None:
    """A data-movement engine on each of two distinct sites of ``p`` (a sender and a receiver: both issue NoC
    transactions, a flag multicast and an increment), or None when ``p`` has no such pair."""
    sites = sorted({ep.site for ep in p.programs}, key=lambda s: (s.y, s.x))
    if len(sites) < 2:
        return None
    snd, rcv = draw(st.permutations(sites))[:2]
    movers = [ep for ep in p.programs if ep.engine is not Engine.COMPUTE]
    if not any(ep.site == snd for ep in movers) or not any(ep.site == rcv for ep in movers):
        return None
    return (draw(st.sampled_from([ep for ep in movers if ep.site == snd])),
            draw(st.sampled_from([ep for ep in movers if ep.site == rcv])))


def _with_ops(p: Program, se: EngineProgram, re: EngineProgram, send: tuple[Op, ...], recv: tuple[Op, ...],
              at_start: bool) -> tuple[EngineProgram, ...]:
    """``p``'s engine programs with ``send`` added to ``se`` and ``recv`` to ``re``, before their own ops
    (``at_start``) or after them."""
    def added(ep: EngineProgram, ops: tuple[Op, ...]) -> EngineProgram:
        return attrs.evolve(ep, ops=(*ops, *ep.ops) if at_start else (*ep.ops, *ops))
    return tuple(added(ep, send) if ep is se else added(ep, recv) if ep is re else ep for ep in p.programs)


@st.composite
def _src(draw: st.DrawFn, p: Program) -> Program:
    """Add a one-round flag handshake between two sites: the sender multicasts a flag from a constant word
    (``src``), the receiver invalidates, signals ready, waits for the flag (or, sometimes, in a wrong order)."""
    pair = draw(_two_movers(p))
    if pair is None:
        return p
    se, re = pair
    snd, rcv = se.site, re.site
    n = len(p.semaphores)
    ready, flag, const = n, n + 1, n + 2
    valid = draw(st.sampled_from([1, 1, 2]))
    sems = (*p.semaphores, Semaphore(ready, "ready", (snd,), 0), Semaphore(flag, "flag", (snd, rcv), 0),
            Semaphore(const, "valid", (snd,), valid))
    g = len(p.groups)
    groups = (*p.groups, Group(g, snd, (rcv.x, rcv.y, rcv.x, rcv.y)))
    send: tuple[Op, ...] = (SemWait(ready, WaitCond.EQ, 1), SemSet(ready, 0), McastSetValid(flag, g, 1, src=const),
                            WriteBarrier())
    recv: list[Op] = [SemSet(flag, 0), SemInc(ready, snd, 1), SemWait(flag, WaitCond.EQ, 1)]
    recv = draw(st.permutations(recv)) if draw(st.integers(0, 2)) == 0 else recv
    at_start = draw(st.booleans())
    progs = []
    for ep in p.programs:
        if ep is se:
            ep = attrs.evolve(ep, ops=(*send, *ep.ops) if at_start else (*ep.ops, *send))
        elif ep is re:
            ep = attrs.evolve(ep, ops=(*recv, *ep.ops) if at_start else (*ep.ops, *recv))
        progs.append(ep)
    return attrs.evolve(p, semaphores=sems, groups=groups, programs=tuple(progs))


@st.composite
def _sections(draw: st.DrawFn, p: Program) -> Program:
    """Two sections of one phase: every engine's top-level ops split at a drawn point (no rendezvous)."""
    progs = []
    for ep in p.programs:
        cut = draw(st.integers(0, len(ep.ops)))
        progs.append(attrs.evolve(ep, section_starts=(0, cut)))
    return attrs.evolve(p, programs=tuple(progs), sections=(SectionSpan("first"), SectionSpan("second")))


@st.composite
def _jump(draw: st.DrawFn, p: Program) -> Program:
    """Double one counting word's increments (``jump`` in the module docstring). Every value of the word scales as
    ``f(x) = init + 2 (x - init)``, so an ``eq`` wait and a set keep their meaning; a ``ge v`` wait with ``v > init``
    becomes ``ge f(v) - 1``, which the doubled word reaches exactly when the old one reached ``v``. Words a flag
    multicast writes or reads are left alone (their values are flags, not counts)."""
    flagged = {x for ep in p.programs for op in _walk(ep.ops) if isinstance(op, McastSetValid)
               for x in (op.sem, op.source)}
    counted = sorted({op.sem for ep in p.programs for op in _walk(ep.ops)
                      if isinstance(op, (SemInc, SemIncMcast)) and op.by > 0} - flagged)
    if not counted:
        return p
    sem = draw(st.sampled_from(counted))
    init = p.semaphores[sem].init

    def f(op: Op) -> Op:
        if isinstance(op, (SemInc, SemIncMcast)) and op.sem == sem:
            return attrs.evolve(op, by=2 * op.by)
        if isinstance(op, SemSet) and op.sem == sem:
            return attrs.evolve(op, value=init + 2 * (op.value - init),
                                terms=tuple(attrs.evolve(t, coef=2 * t.coef) for t in op.terms))
        if isinstance(op, SemWait) and op.sem == sem:
            jump = op.cond == WaitCond.GE and op.value > init
            return attrs.evolve(op, value=init + 2 * (op.value - init) - jump,
                                terms=tuple(attrs.evolve(t, coef=2 * t.coef) for t in op.terms))
        return op

    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=_map_ops(ep.ops, f)) for ep in p.programs))


#: The ways ``_seq`` breaks the handshake (one per broken draw): an exact wait a later copy passes (tt-metal #50314),
#: no write barrier after the copy (the next set races it), a flush instead (it left, not landed), a threshold one
#: ahead, waits that lag the values, the copy before the set in the loop (it copies the previous value: outside the
#: protocol), no done handshake before the reset, no reset, the reset not copied, a value that does not rise, the
#: copies' ``num_dests`` one fewer than the group's destinations (1 of a loopback pair, 0 of one receiver: the write
#: barrier after the first copy deadlocks once its acknowledgements are back, docs/semantics.md "Acknowledgement
#: counts").
SEQ_BREAKS = ("eq", "no-barrier", "flush", "ahead", "lag", "flag-first", "no-done", "no-reset", "no-copy", "flat",
              "dests")


@st.composite
def _seq(draw: st.DrawFn, p: Program) -> Program:
    """Add argmax's start handshake between two sites (``seq`` in the module docstring): correct about half of the
    time, else broken in one of ``SEQ_BREAKS``."""
    pair = draw(_two_movers(p))
    if pair is None:
        return p
    se, re = pair
    snd, rcv = se.site, re.site
    broken = draw(st.sampled_from((None, *SEQ_BREAKS))) if draw(st.booleans()) else None
    loopback = (snd.x == rcv.x or snd.y == rcv.y) and draw(st.booleans())
    rect = ((min(snd.x, rcv.x), min(snd.y, rcv.y), max(snd.x, rcv.x), max(snd.y, rcv.y)) if loopback
            else (rcv.x, rcv.y, rcv.x, rcv.y))
    g = Group(len(p.groups), snd, rect, loopback=loopback)
    dests = g.destinations()
    n = len(p.semaphores)
    start, done = n, n + 1
    sems = (*p.semaphores, Semaphore(start, "start", tuple(sorted({snd, *dests}, key=lambda s: (s.y, s.x))), 0),
            Semaphore(done, "done", (snd,), 0))
    count = draw(st.integers(1, 3))
    value, coef = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    step = Term("k", 0 if broken == "flat" else coef)
    wait_step = (Term("k", coef - 1 if broken == "lag" and coef > 1 else coef),) if broken != "lag" or coef > 1 else ()
    want = value + (broken == "ahead")
    cond = WaitCond.EQ if broken == "eq" else WaitCond.GE
    guard = draw(st.booleans())  # argmax copies from the second iteration on (``if (k > 0)``)

    def guarded(ops: tuple[Op, ...]) -> tuple[Op, ...]:
        return (If("k", Guard.NOT_FIRST, ops),) if guard else ops

    told = len(dests) - (broken == "dests")  # the count the copies state (acknowledgements their barriers expect)
    copy: tuple[Op, ...] = (McastSetValid(start, g.id, told),
                            *((Flush(),) if broken == "flush" else ()),
                            *((WriteBarrier(),) if broken not in ("no-barrier", "flush") else ()))
    body: list[Op] = [SemSet(start, value, (step,)), *guarded(copy)]
    if broken == "flag-first":
        body.reverse()
    if loopback:
        body += guarded((SemWait(start, cond, want, wait_step),))
    send: list[Op] = [Loop("k", count, tuple(body))]
    if broken != "no-done":
        send += [SemWait(done, WaitCond.EQ, 1), SemSet(done, 0)]
    if broken != "no-reset":
        send += [SemSet(start, 0), *((McastSetValid(start, g.id, told), WriteBarrier())
                                       if broken != "no-copy" else ())]
    recv: tuple[Op, ...] = (Loop("k", count, guarded((SemWait(start, cond, want, wait_step),))),
                            SemInc(done, snd, 1), AtomicBarrier())
    at_start = draw(st.booleans())
    return attrs.evolve(p, semaphores=sems, groups=(*p.groups, g),
                        programs=_with_ops(p, se, re, tuple(send), tuple(recv), at_start))


#: The ways ``_epochs`` breaks the restarting sequence (one per broken draw): the receiver acknowledges before its
#: reset in a pass (the next VALID may land before the reset wipes it), resets for the next pass before its
#: last wait of this one, never resets, the sender's last multicast of a pass not waited for, a value that does not
#: rise, a wait one value ahead of what is sent, two resets in one pass, a value sent without waiting for the
#: acknowledgement of the one before (an exact wait for that one may see the next: tt-metal #50314's kind, the sharded
#: layernorm's receivers that only wait, ``reader_mcast_receiver_unary_sharded_ln.cpp:157``).
EPOCH_BREAKS = ("inc-first", "reset-early", "no-reset", "no-barrier", "flat", "ahead", "double-reset", "unacked")


def epochs_handshake(p: Program, se: EngineProgram, re: EngineProgram, passes: int, values: int,
                     broken: str | None = None, bad_pass: int = 0, bad_value: int = 1,
                     conds: tuple[WaitCond, ...] = (), looped: bool = False, at_start: bool = True) -> Program:
    """``p`` with the sharded layernorm's restarting VALID sequence from engine ``se`` to engine ``re`` (two sites):
    ``passes`` passes of ``values`` VALID values each, unrolled at top level (``looped``: the passes as one loop,
    outside the restarting protocol), broken in ``broken`` (one of ``EPOCH_BREAKS``) at pass ``bad_pass`` and value
    ``bad_value``; ``conds`` the receiver's wait conditions in order (``GE`` where it runs out). The ops go before
    the engines' own (``at_start``) or after them. Raises ``ValueError`` for an unknown break."""
    if broken is not None and broken not in EPOCH_BREAKS:
        raise ValueError(f"unknown epochs break {broken!r}: one of {EPOCH_BREAKS}")
    snd, rcv = se.site, re.site
    g = Group(len(p.groups), snd, (rcv.x, rcv.y, rcv.x, rcv.y))
    n = len(p.semaphores)
    valid, ack = n, n + 1
    sems = (*p.semaphores, Semaphore(valid, "valid", tuple(sorted({snd, rcv}, key=lambda s: (s.y, s.x))), 0,
                                     host_init=True),
            Semaphore(ack, "ack", (snd,), 0, host_init=True))
    wait_conds = iter(conds)
    send: list[Op] = []
    recv: list[Op] = []
    for k in range(passes):
        for j in range(1, values + 1):
            v = 1 if broken == "flat" else j
            if not (broken == "unacked" and k == bad_pass and j == max(bad_value, 2)):
                send += [SemWait(ack, WaitCond.EQ, 1), SemSet(ack, 0)]
            send += [SemSet(valid, v), McastSetValid(valid, g.id, 1)]
            if not (broken == "no-barrier" and k == bad_pass and j == values):
                send.append(WriteBarrier())
        reset: list[Op] = [] if broken == "no-reset" else [SemSet(valid, 0)]
        if broken == "double-reset" and k == bad_pass:
            reset = [*reset, SemSet(valid, 0)]
        got: list[Op] = []
        for j in range(1, values + 1):
            want = j + (broken == "ahead" and k == bad_pass and j == bad_value)
            got += [SemInc(ack, snd, 1), SemWait(valid, next(wait_conds, WaitCond.GE), want)]
        if broken == "inc-first" and k == bad_pass:
            recv += [got[0], *reset, *got[1:]]
        elif broken == "reset-early" and k == bad_pass and k + 1 < passes:
            # this pass's last wait comes after the next pass's reset, which is then not repeated
            recv += [*reset, *got[:-1], SemSet(valid, 0), got[-1]]
        elif broken == "reset-early" and k == bad_pass + 1:
            recv += got
        else:
            recv += [*reset, *got]
    recv.append(AtomicBarrier())
    if looped and passes > 1 and broken is None:
        # every pass is the same ops: one loop of them (its sets are then inside a loop)
        per_s, per_r = len(send) // passes, (len(recv) - 1) // passes
        send = [Loop("p", passes, tuple(send[:per_s]))]
        recv = [Loop("p", passes, tuple(recv[:per_r])), AtomicBarrier()]
    return attrs.evolve(p, semaphores=sems, groups=(*p.groups, g),
                        programs=_with_ops(p, se, re, tuple(send), tuple(recv), at_start))


@st.composite
def _epochs(draw: st.DrawFn, p: Program) -> Program:
    """Add the sharded layernorm's restarting VALID sequence between two sites (``epochs`` in the module docstring,
    ``epochs_handshake``): correct about half of the time, else broken in one of ``EPOCH_BREAKS``."""
    pair = draw(_two_movers(p))
    if pair is None:
        return p
    se, re = pair
    broken = draw(st.sampled_from((None, *EPOCH_BREAKS))) if draw(st.booleans()) else None
    passes, values = draw(st.integers(1, 3)), draw(st.integers(2, 3))
    conds = tuple(draw(st.lists(st.sampled_from([WaitCond.EQ, WaitCond.GE]), min_size=passes * values,
                                max_size=passes * values)))
    return epochs_handshake(p, se, re, passes, values, broken, bad_pass=draw(st.integers(0, passes - 1)),
                            bad_value=draw(st.integers(1, values)), conds=conds, looped=draw(st.booleans()),
                            at_start=draw(st.booleans()))


def _walk(ops: tuple[Op, ...]) -> list[Op]:
    out: list[Op] = []
    for op in ops:
        out.append(op)
        if isinstance(op, (Loop, If)):
            out += _walk(op.body)
    return out


@st.composite
def protocol_programs(draw: st.DrawFn) -> Program:
    """A program of ``programs()`` rewritten by 1-3 protocol rewrites (module docstring); a rewrite whose result
    fails ``validate`` is dropped, so every program drawn passes it."""
    p = draw(programs())
    kinds = draw(st.lists(st.sampled_from(["guard", "guard", "affine", "grow", "mcast", "src", "sections", "jump",
                                           "setgrow", "seq", "epochs"]), min_size=1, max_size=3))
    for kind in kinds:
        if kind == "guard":
            q = draw(_guard(p))
        elif kind == "affine":
            q = draw(_affine(p))
        elif kind == "grow":
            q = draw(_grow(p))
        elif kind == "setgrow":
            q = draw(_setgrow(p))
        elif kind == "mcast":
            q = mcast_rewrite(p)
        elif kind == "src":
            q = draw(_src(p))
        elif kind == "jump":
            q = draw(_jump(p))
        elif kind == "seq":
            q = draw(_seq(p))
        elif kind == "epochs":
            q = draw(_epochs(p))
        else:
            q = draw(_sections(p))
        if not validate(q):
            p = q
    assume(p.programs and len(p.programs) <= 6)
    return p
