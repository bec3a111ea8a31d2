"""The asynchronous NoC in the Promela model: the ``d_step`` of ReadTiles, WriteTiles, ReadBarrier, WriteBarrier,
Flush and AtomicBarrier, the landing of reads and writes (in the ``noc`` process), and the NoC rules other families'
parts share — ``async-read-publish`` (``read_publish``), ``async-source-reuse`` (``source_reuse``, ``word_reuse``)
and ``async-pending-at-end`` (``pending_at_end``) — each rule an ``assert`` mirroring the interpreter's
(``families/noc/semantics.py``).

An issued read or write is an entry of its engine's queue (``QUEUES``: ``rq<e>`` of reads, ``wq<e>`` of writes),
removed when it lands; a barrier's guard waits for the entries of its kind. ``rb_mask[e]``: buffers read into since
the engine's last ReadBarrier; ``wb[e]`` / ``ab[e]``: a write or multicast / an atomic increment since its last
WriteBarrier / AtomicBarrier."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import promela as cb
from verispatial.families.semaphores import promela as semaphores
from verispatial.families.tensors import promela as tensors
from verispatial.ir import rules as R
from verispatial.ir.ops import (
    AtomicBarrier,
    Flush,
    InlineWrite,
    McastSend,
    McastSetValid,
    ReadBarrier,
    ReadTiles,
    WriteBarrier,
    WriteTiles,
)

if TYPE_CHECKING:
    from verispatial.ir.core import Site
    from verispatial.petri.promela import Step, _Gen, _Issue


# ---------------------------------------------------------------------- rules other families' parts share


def read_publish(g: _Gen, e: int, b: int, where: str) -> str:
    """``async-read-publish``: a Push or multicast of ``b`` while a read into ``b`` by engine ``e`` has no ReadBarrier
    after it."""
    return g._assert(R.ASYNC_READ_PUBLISH, f"(((rb_mask[{e}] | st_mask[{e}]) >> {b}) & 1) == 0", where)


def source_reuse(g: _Gen, b: int, p0: str, np: str, mode: str, where: str | None) -> list[str]:
    """``async-source-reuse`` on pages ``[p0, p0 + np)`` of ``b`` (ring slots): ``pop`` (sources read from the
    front of ``b``), ``ring`` / ``write`` (any source in ``b``'s bytes; no aliases in the model)."""
    cap = g.caps[b]
    flag, j, i = g._tmp(), g._tmp(), g._tmp()
    lines = [f"{flag} = 0;"]
    for iss in g.issues:
        op = iss.op
        if isinstance(op, WriteTiles) and op.src == b:
            q, cond = f"wq{iss.e}", ""
        elif isinstance(op, McastSend) and op.buf == b and (mode != "pop" or op.front):
            q, cond = f"mq{iss.e}", f" && !mq{iss.e}[{i}].left"
        else:
            continue
        hit = (f"{j} < {cap} && {g._in_ring(j, f'{q}[{i}].p0', f'{q}[{i}].np', cap)}")
        lines.append(
            f"for ({i} : 0 .. {g.qsize[(iss.e, iss.queue)] - 1}) {{ if :: {i} < n{q} && {q}[{i}].op == {iss.k}{cond} -> "
            f"for ({j} : 0 .. {cap - 1}) {{ if :: {g._in_ring(j, p0, np, cap)} && {hit} -> {flag} = 1 :: else -> skip fi }} "
            f":: else -> skip fi }};")
    lines.append(g._assert(R.ASYNC_SOURCE_REUSE, f"{flag} == 0", where))
    return lines


def inc_overtake(g: _Gen, e: int, sites: tuple[Site, ...], where: str) -> list[str]:
    """``async-inc-overtake``: an increment of engine ``e`` aimed at one of ``sites`` while a data multicast or remote
    page write of ``e`` still has to land at one of them (its queue entry's ``rem`` bit)."""
    conds = []
    ks = [iss.k for iss in g.issues if iss.e == e and isinstance(iss.op, McastSend)]
    bits = sum(1 << g.site_ix[s] for s in sites if s in g.site_ix)
    if ks and bits and (e, "mc") in g.qsize:
        q = f"mq{e}"
        for x in range(g.qsize[(e, "mc")]):
            data = " || ".join(f"{q}[{x}].op == {k}" for k in ks)
            conds.append(f"!({x} < n{q} && ({data}) && ({q}[{x}].rem & {bits}) != 0)")
    # One-word writes to a word at one of the sites, still in the write queue (they land in one step).
    words = [iss.k for iss in g.issues if iss.e == e and isinstance(iss.op, InlineWrite) and iss.op.at in sites]
    if words and (e, "wr") in g.qsize:
        q = f"wq{e}"
        for x in range(g.qsize[(e, "wr")]):
            conds.append(f"!({x} < n{q} && (" + " || ".join(f"{q}[{x}].op == {k}" for k in words) + "))")
    if not conds:
        return []
    return [g._assert(R.ASYNC_INC_OVERTAKE, " && ".join(conds), where)]


def word_reuse(g: _Gen, w: int, where: str | None, new: str) -> list[str]:
    """``async-source-reuse`` on word ``w``: it changes (its value becomes ``new``, a Promela expression: only a value
    other than the word's changes a byte) while a flag multicast reading it has not left."""
    lines: list[str] = []
    for iss in g.issues:
        op = iss.op
        if isinstance(op, McastSetValid) and g._word(iss.e, op.source) == w:
            i = g._tmp()
            q = f"mq{iss.e}"
            pending = f"(({new}) == words[{w}] || !({i} < n{q} && {q}[{i}].op == {iss.k} && !{q}[{i}].left))"
            lines.append(f"for ({i} : 0 .. {g.qsize[(iss.e, 'mc')] - 1}) {{ "
                         f"{g._assert(R.ASYNC_SOURCE_REUSE, pending, where)} }};")
    return lines


def pending_at_end(g: _Gen, e: int) -> str:
    """``async-pending-at-end``: engine ``e`` ends with no read, write/multicast or atomic its barriers did not cover."""
    return g._assert(R.ASYNC_PENDING_AT_END, f"rb_mask[{e}] == 0 && !wb[{e}] && !ab[{e}]")


# ---------------------------------------------------------------------- engine steps


def read_tiles(g: _Gen, e: int, path: tuple[int, ...], op: ReadTiles, st: Step) -> None:
    b = op.into
    st.body += cb.role(g, e, b, True, st.where)
    lines, p0, np = cb.fill(g, b, op.tiles, st.where)
    st.body += lines
    lines, fields = tensors.read_issued(g, e, path, op, st.where)
    st.body += lines
    st.body += g._push_entry(f"rq{e}", g._issue(e, path).k, {"p0": p0, "np": np} | fields)
    st.body.append(f"rb_mask[{e}] = rb_mask[{e}] | {1 << b};")


def write_tiles(g: _Gen, e: int, path: tuple[int, ...], op: WriteTiles, st: Step) -> None:
    b, pt, body = op.src, g.pt[op.src], st.body
    body += cb.role(g, e, b, False, st.where)
    body.append(g._assert(R.CB_READ_UNWAITED, f"drain[{b}] + {op.tiles} <= (wait_end[{b}] - popped[{b}]) * {pt}",
                          st.where))
    body.append(cb.past_end(g, b, "popped", f"drain[{b}]", op.tiles, st.where,
                            f"drain[{b}] + {op.tiles} <= (wait_end[{b}] - popped[{b}]) * {pt}"))
    p0, np = g._tmp(), g._tmp()
    start = f"(popped[{b}] * {pt} + drain[{b}])"
    if op.tiles > 0:
        body += [f"{p0} = {start} / {pt};", f"{np} = ({start} + {op.tiles} - 1) / {pt} - {p0} + 1;"]
    else:
        body += [f"{p0} = 0;", f"{np} = 0;"]
    body.append(f"drain[{b}] = drain[{b}] + {op.tiles};")
    body += tensors.write_issued(g, e, path, op, st.where)
    body += g._push_entry(f"wq{e}", g._issue(e, path).k, {"p0": p0, "np": np})
    body.append(f"wb[{e}] = 1;")


def inline_write(g: _Gen, e: int, path: tuple[int, ...], op: InlineWrite, st: Step) -> None:
    """noc_inline_dw_write: an entry of the write queue with no source pages, landing as a remote write of its word."""
    st.body += g._push_entry(f"wq{e}", g._issue(e, path).k, {"p0": "0", "np": "0"})
    st.body.append(f"wb[{e}] = 1;")


def read_barrier(g: _Gen, e: int, path: tuple[int, ...], op: ReadBarrier, st: Step) -> None:
    st.guard = f"nrq{e} == 0" if (e, "rd") in g.qsize else "true"
    st.body.append(f"rb_mask[{e}] = 0;")


def write_barrier(g: _Gen, e: int, path: tuple[int, ...], op: WriteBarrier, st: Step) -> None:
    conds = [f"n{q}{e} == 0" for q, k in (("wq", "wr"), ("mq", "mc")) if (e, k) in g.qsize]
    st.guard = " && ".join(conds) or "true"
    st.body += [f"wb[{e}] = 0;", f"mc_mask[{e}] = 0;", *([f"mw_mask[{e}] = 0;"] if g.orders else []),
                *tensors.writes_complete(g, e)]


def flush(g: _Gen, e: int, path: tuple[int, ...], op: Flush, st: Step) -> None:
    conds = [f"nwq{e} == 0"] if (e, "wr") in g.qsize else []
    if (e, "mc") in g.qsize:
        conds.append(" && ".join(f"({x} >= nmq{e} || mq{e}[{x}].left)" for x in range(g.qsize[(e, "mc")])))
    st.guard = " && ".join(conds) or "true"
    st.body.append(f"mc_mask[{e}] = 0;")


def atomic_barrier(g: _Gen, e: int, path: tuple[int, ...], op: AtomicBarrier, st: Step) -> None:
    st.guard = f"niq{e} == 0" if (e, "inc") in g.qsize else "true"
    st.body.append(f"ab[{e}] = 0;")


# ---------------------------------------------------------------------- landings (the noc process)


def read_lands(g: _Gen, iss: _Issue, x: int, size: int, where: str) -> list[str]:
    """The read in entry ``x`` of its engine's read queue lands: the tensor rule of its state tiles, the rewrite of
    its pages (``async-source-reuse``)."""
    op = iss.op
    assert isinstance(op, ReadTiles)
    q, i = f"rq{iss.e}", str(x)
    lo, hi, p0, np = g._tmp(), g._tmp(), g._tmp(), g._tmp()
    body = [f"{lo} = {q}[{i}].lo; {hi} = {q}[{i}].hi; {p0} = {q}[{i}].p0; {np} = {q}[{i}].np;"]
    body += g._remove(q, i, g._FIELDS["rq"], size)
    body += tensors.read_lands(g, op, lo, hi, where)
    body += source_reuse(g, op.into, p0, np, "write", where)
    return [f":: d_step {{ {i} < n{q} && {q}[{i}].op == {iss.k} -> " + " ".join(body) + " }"]


def write_lands(g: _Gen, iss: _Issue, x: int, size: int, where: str) -> list[str]:
    """The write in entry ``x`` of its engine's write queue leaves and lands (one transition, as in the
    interpreter)."""
    q, i = f"wq{iss.e}", str(x)
    return [f":: d_step {{ {i} < n{q} && {q}[{i}].op == {iss.k} -> "
            + " ".join(g._remove(q, i, g._FIELDS["wq"], size)) + " }"]


def inline_lands(g: _Gen, iss: _Issue, x: int, size: int, where: str) -> list[str]:
    """The one-word write in entry ``x`` of its engine's write queue leaves and lands: a remote write of its word
    with its value (``sem-overshoot``, ``sem-set-race``)."""
    op = iss.op
    assert isinstance(op, InlineWrite)
    q, i = f"wq{iss.e}", str(x)
    body = g._remove(q, i, g._FIELDS["wq"], size) + semaphores.remote_write(g, g.words[(op.sem, op.at)], str(op.value),
                                                                           where)
    return [f":: d_step {{ {i} < n{q} && {q}[{i}].op == {iss.k} -> " + " ".join(body) + " }"]


#: The Promela export's handlers of this family's op classes (``petri/promela.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {ReadTiles: read_tiles, WriteTiles: write_tiles, ReadBarrier: read_barrier,
                                            WriteBarrier: write_barrier, Flush: flush, AtomicBarrier: atomic_barrier,
                                            InlineWrite: inline_write}

#: The queue an issued op of each class waits in until it lands (``rd``: reads, ``wr``: writes).
QUEUES: dict[type, str] = {ReadTiles: "rd", WriteTiles: "wr", InlineWrite: "wr"}

#: The landing ``d_step``s of what each op class issues ``(gen, issue, queue entry, queue size, op id) -> lines``.
LANDINGS: dict[type, Callable[..., list[str]]] = {ReadTiles: read_lands, WriteTiles: write_lands,
                                                  InlineWrite: inline_lands}
