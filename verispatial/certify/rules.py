"""Per-engine rules of DESIGN §5 decided by abstract interpretation over every path of an engine program.

The abstract state is a set of may-facts; loops are run to a fixpoint (a trip loop may also run zero times), so
every path the program can take is covered and no rule violation is missed. A finding is only a candidate:
the checker refutes with it only after the interpreter reproduces it (``replay.py``); otherwise it fails to prove.

Each op class's rule is its family's (``families/<family>/encoding.py``: ``HANDLERS``), assembled into one table
here; an op class no family handles raises ``UnhandledOp``. The facts, each documented by the family that keeps it:
per buffer ``b`` and relative to the engine's own pointers, the windows ``("rsv", ...)`` and ``("wt", ...)``
(``families/cb/encoding.py``; docs/semantics.md, "Circular-buffer windows"); the outstanding reads, writes, sources
and increments ``("rd", ...)``, ``("rdp", ...)``, ``("sb", ...)``, ``("sf", ...)``, ``("sw", ...)``, ``("mw", ...)``,
``("w",)``, ``("a",)`` (``families/noc/encoding.py``); the pages a path pushed while fewer than a ring ``("few", ...)``
(``families/cb/encoding.py``, read by a multicast of pages already pushed); the accumulator ``("acc", ...)``, ``("acct", ...)``
(``families/accumulator/encoding.py``). Slots are kept modulo the capacity (the bytes a page occupies), so the
lattice is finite.

Rule names are shared with the interpreter (``verispatial.petri.interp``).
"""

from __future__ import annotations

from verispatial.certify.facts import LATE as LATE
from verispatial.certify.facts import RULE_FAMILY as RULE_FAMILY
from verispatial.certify.facts import EngineFacts, EngineRun, Finding, State, run_paths
from verispatial.certify.structure import EngineView
from verispatial.errors import UnhandledOp
from verispatial.families import assemble
from verispatial.families.accumulator import encoding as accumulator
from verispatial.families.cb import encoding as cb
from verispatial.families.multicast import encoding as multicast
from verispatial.families.noc import encoding as noc
from verispatial.families.scratch import encoding as scratch
from verispatial.families.semaphores import encoding as semaphores
from verispatial.ir.data import data_buffers
from verispatial.ir.ids import op_ids
from verispatial.ir.ops import (
    ID_BUFFER,
    McastSend,
    Op,
    ReadTiles,
    Reserve,
    Wait,
    WriteTiles,
)
from verispatial.ir.program import IndexKey, Program

#: op class -> its family's per-engine handler ``(run, op, path, state) -> state`` (``verispatial/families``).
_HANDLERS = assemble("the per-engine rules", cb.HANDLERS, semaphores.HANDLERS, accumulator.HANDLERS, noc.HANDLERS,
                     multicast.HANDLERS, scratch.HANDLERS)


def all_engine_facts(p: Program, views: dict[str, EngineView]) -> dict[str, EngineFacts]:
    """``engine_facts`` of every view, the program-wide tables (data buffers, multicast destinations) computed once
    (each is a walk over every engine's ops)."""
    index_bufs = p.index_buffers()
    data, dests = data_buffers(p, index_bufs), multicast.multicast_destinations(p)
    return {k: engine_facts(p, v, data, dests, index_bufs) for k, v in views.items()}


def engine_facts(p: Program, view: EngineView, data: frozenset[int] | None = None,
                 dests: set[int] | None = None, index_bufs: dict[IndexKey, int] | None = None) -> EngineFacts:
    """Coverage, windows, asynchronous-NoC and accumulator findings for one engine, over every path. ``data`` and
    ``dests``, ``index_bufs``: ``data_buffers(p)``, ``multicast.multicast_destinations(p)`` and ``p.index_buffers()`` when the
    caller has them (each walks every engine program: computed once per program, not once per engine)."""
    index_bufs = p.index_buffers() if index_bufs is None else index_bufs
    caps = {b.id: b.capacity for b in p.buffers}
    # The most pages a window of each buffer can hold (saturation bound of the tile counts: finite lattice).
    most = dict(caps)
    for lf in view.leaves:
        if isinstance(lf.op, (Reserve, Wait)):
            most[lf.op.buf] = max(most[lf.op.buf], lf.op.pages)
    c = EngineRun(p, view, data_buffers(p, index_bufs) if data is None else data,
                  multicast.multicast_destinations(p) if dests is None else dests, index_bufs, p.phase_of_section(), caps, most,
                  {lf.path: lf.index for lf in view.leaves})

    def step(op: Op, path: tuple[int, ...], s: State) -> State:
        c.reached.add(path)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise UnhandledOp("the per-engine rules", op)
        return handler(c, op, path, s)

    # Window facts of the buffers this engine names (an op's own ids, ``ir.ids.op_ids``, and the index buffer of
    # an indirect address): every handler reads and changes only the facts of the buffers its op names, so the
    # other buffers' facts would stay at their initial value all run long, in every state — carrying them made
    # each step linear in the program's buffers (320 on the 64-node TT-Lang matmul tutorial, for 192 engines).
    bufs = {v for lf in view.leaves for kind, v in op_ids(lf.op) if kind == ID_BUFFER}
    for lf in view.leaves:
        if isinstance(lf.op, (ReadTiles, WriteTiles)):
            ib = p.index_buffer(view.program, lf.path[0], lf.op, index_bufs, c.phases)
            if ib is not None:
                bufs.add(ib)
    init: State = frozenset({("rsv", b, 0, 0) for b in bufs} | {("wt", b, 0, 0) for b in bufs} | {("acc", False)}
                            | {("few", b, 0) for b in _pushed_sources(view)})
    end = run_paths(view.program.ops, (), init, step, p.trip_max())
    noc.pending_at_end(c, end)
    cb.capacity(c)
    findings = tuple(sorted(c.found.values(), key=lambda f: (f.rule, f.path or ())))
    return EngineFacts(findings, {k: frozenset(v) for k, v in c.written.items()}, c.reserve_from,
                       {k: frozenset(v) for k, v in c.inside_read.items()},
                       {k: frozenset(v) for k, v in c.inside_written.items()})


def _pushed_sources(view: EngineView) -> set[int]:
    """Buffers this engine multicasts pages of that it already pushed (``McastSend.behind``): only those count their
    pushes (``("few", ...)``), so no other buffer's ring adds facts."""
    return {lf.op.buf for lf in view.leaves if isinstance(lf.op, McastSend) and lf.op.behind}


def engine_findings(p: Program, view: EngineView) -> list[Finding]:
    """The findings of ``engine_facts`` alone."""
    return list(engine_facts(p, view).findings)


