"""Circular buffers in the Promela model: the ``d_step`` of Reserve, Push, Wait and Pop, and the buffer checks other
ops share. Each handler appends to the op's ``Step`` (its arrival lines, guard and body) the statements the
interpreter's handler (``families/cb/semantics.py``) executes, with every rule an ``assert``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.ir import rules as R
from verispatial.ir.ops import CopyTiles, FillTiles, Op, Pop, Push, Reserve, Wait

if TYPE_CHECKING:
    from verispatial.petri.promela import Step, _Gen


def capacity(g: _Gen, op: Op, st: Step) -> None:
    """``cb-capacity``, on arriving at ``op``: a Reserve or Wait of more pages than the ring holds never returns."""
    if isinstance(op, (Reserve, Wait)) and op.pages > g.caps[op.buf]:
        st.pre.append(g._assert(R.CB_CAPACITY, "false", st.where))


def role(g: _Gen, e: int, b: int, producer: bool, where: str) -> list[str]:
    """``cb-single-producer`` / ``cb-single-consumer``: the first engine to produce (consume) ``b`` owns that end."""
    arr, rule = ("producer", R.CB_SINGLE_PRODUCER) if producer else ("consumer", R.CB_SINGLE_CONSUMER)
    return [f"if :: {arr}[{b}] == 255 -> {arr}[{b}] = {e} :: else -> {g._assert(rule, f'{arr}[{b}] == {e}', where)} fi;"]


def fill(g: _Gen, b: int, tiles: int, where: str) -> tuple[list[str], str, str]:
    """A write into the back of ``b``: ``cb-write-unreserved``; returns the lines and the ring pages written
    (first page, count) as expressions over hidden scratch variables."""
    pt = g.pt[b]
    p0, np = g._tmp(), g._tmp()
    lines = [g._assert(R.CB_WRITE_UNRESERVED, f"fill[{b}] + {tiles} <= (rsv_end[{b}] - pushed[{b}]) * {pt}", where),
             past_end(g, b, "pushed", f"fill[{b}]", tiles, where,
                      f"fill[{b}] + {tiles} <= (rsv_end[{b}] - pushed[{b}]) * {pt}"),
             f"{p0} = (pushed[{b}] * {pt} + fill[{b}]) / {pt};",
             f"{np} = (pushed[{b}] * {pt} + fill[{b}] + {tiles} - 1) / {pt} - {p0} + 1;",
             f"fill[{b}] = fill[{b}] + {tiles};"]
    if tiles <= 0:
        lines[2:4] = [f"{p0} = 0;", f"{np} = 0;"]
    return lines, p0, np


def past_end(g: _Gen, b: int, counter: str, offset: str, tiles: int, where: str, inside: str = "") -> str:
    """``cb-straddle`` for ``tiles`` tiles ``offset`` past the pointer ``counter`` (``pushed`` / ``popped``) of ``b``
    puts at its slot: they end by the ring's end (``cb.semantics.past_end``: nothing wraps inside an access), asked
    only where ``inside`` (the access's window condition) holds."""
    cap, pt = g.caps[b], g.pt[b]
    ok = f"({counter}[{b}] % {cap}) * {pt} + {offset} + {tiles} <= {cap * pt}"
    return g._assert(R.CB_STRADDLE, f"!({inside}) || {ok}" if inside else ok, where)


def waited(g: _Gen, b: int, pages: int, where: str) -> str:
    """``cb-read-unwaited`` for a read of ``pages`` whole pages from the front of ``b``: inside the waited window."""
    return g._assert(R.CB_READ_UNWAITED, f"popped[{b}] + {pages} <= wait_end[{b}]", where)


def balance(g: _Gen) -> list[str]:
    """``balance-cb`` at the run's end: a buffer whose counters a later section of the launch uses ends empty
    (``Program.counters_reused``; the launch's end resets the others' counters)."""
    reused = g.p.counters_reused()
    return [g._assert(R.BALANCE_CB, f"pushed[{b.id}] == popped[{b.id}]") for b in g.p.buffers if b.id in reused]


def reserve(g: _Gen, e: int, path: tuple[int, ...], op: Reserve, st: Step) -> None:
    b, n, cap, where = op.buf, op.pages, g.caps[op.buf], st.where
    st.guard = f"pushed[{b}] - popped[{b}] + {n} <= {cap}"
    f = g._tmp()
    st.body += role(g, e, b, True, where)
    st.body.append(f"{f} = (rsv_end[{b}] > pushed[{b}] -> rsv_end[{b}] : pushed[{b}]);")
    st.body += g._source_reuse(b, f, f"(pushed[{b}] + {n} - {f})", "ring", where)
    st.body.append(f"if :: pushed[{b}] + {n} > rsv_end[{b}] -> rsv_end[{b}] = pushed[{b}] + {n} :: else -> skip fi;")


def push(g: _Gen, e: int, path: tuple[int, ...], op: Push, st: Step) -> None:
    b, n, cap, pt, where = op.buf, op.pages, g.caps[op.buf], g.pt[op.buf], st.where
    body = st.body
    body += role(g, e, b, True, where)
    body.append(g._assert(R.CB_PUSH_UNCOVERED, f"pushed[{b}] + {n} <= rsv_end[{b}]", where))
    if b in g.data_bufs and b not in g.mcast_dests and b not in g.shard_pages:
        body.append(g._assert(R.CB_PUSH_UNFILLED, f"fill[{b}] >= {n * pt}", where))
    if b in g.shard_pages:
        # A read shard (the only sharded buffers the export takes) publishes its tensor's tiles unfilled; its pushes
        # stay on the shard (ir/shards.py).
        body.append(g._assert(R.CB_SHARD_OVERRUN, f"pushed[{b}] + {n} <= {g.shard_pages[b]}", where))
    body.append(g._assert(R.CB_STRADDLE, f"pushed[{b}] % {cap} + {n} <= {cap}", where))
    body.append(g._read_publish(e, b, where))
    body += g._mcast_publish_early(b, n, where)
    body += [f"pushed[{b}] = pushed[{b}] + {n};",
             f"if :: rsv_end[{b}] < pushed[{b}] -> rsv_end[{b}] = pushed[{b}] :: else -> skip fi;",
             f"fill[{b}] = (fill[{b}] > {n * pt} -> fill[{b}] - {n * pt} : 0);"]


def wait(g: _Gen, e: int, path: tuple[int, ...], op: Wait, st: Step) -> None:
    b, n = op.buf, op.pages
    st.guard = f"pushed[{b}] - popped[{b}] >= {n}"
    st.body += role(g, e, b, False, st.where)
    st.body.append(f"if :: popped[{b}] + {n} > wait_end[{b}] -> wait_end[{b}] = popped[{b}] + {n} :: else -> skip fi;")


def pop(g: _Gen, e: int, path: tuple[int, ...], op: Pop, st: Step) -> None:
    b, n, cap, pt, where = op.buf, op.pages, g.caps[op.buf], g.pt[op.buf], st.where
    body = st.body
    body += role(g, e, b, False, where)
    body.append(g._assert(R.CB_POP_UNCOVERED, f"popped[{b}] + {n} <= wait_end[{b}]", where))
    body.append(g._assert(R.CB_STRADDLE, f"popped[{b}] % {cap} + {n} <= {cap}", where))
    body += g._source_reuse(b, f"popped[{b}]", str(n), "pop", where)
    body += [f"popped[{b}] = popped[{b}] + {n};",
             f"if :: wait_end[{b}] < popped[{b}] -> wait_end[{b}] = popped[{b}] :: else -> skip fi;",
             f"drain[{b}] = (drain[{b}] > {n * pt} -> drain[{b}] - {n * pt} : 0);"]


#: The Promela export's handlers of this family's op classes (``petri/promela.py`` assembles its table from these).
def fill_tiles(g: _Gen, e: int, path: tuple[int, ...], op: FillTiles, st: Step) -> None:
    """``FillTiles``: the engine's own stores into the reserved back, in the same step (no queue entry): the
    producer's role, the window and fill count, and the source-reuse check of a pack; the stores stay unlanded
    (``st_mask``, read by ``async-read-publish``) until a drain of the engine."""
    st.body += role(g, e, op.into, True, st.where)
    if op.tiles == 0:  # a patch: into a tile of the window a read filled and landed (``cb.semantics.fill_tiles``)
        b = op.into
        st.body.append(g._assert(R.CB_WRITE_UNRESERVED,
                                 f"fill[{b}] >= 1 && fill[{b}] <= (rsv_end[{b}] - pushed[{b}]) * {g.pt[b]} && "
                                 f"((rb_mask[{e}] >> {b}) & 1) == 0", st.where))
    lines, p0, np = fill(g, op.into, op.tiles, st.where)
    st.body += [*lines, *g._source_reuse(op.into, p0, np, "write", st.where)]
    st.body.append(f"st_mask[{e}] = 0;" if op.drain else f"st_mask[{e}] = st_mask[{e}] | {1 << op.into};")


def copy_tiles(g: _Gen, e: int, path: tuple[int, ...], op: CopyTiles, st: Step) -> None:
    """``CopyTiles``: the engine's own loads from the front of ``src`` (the consumer's role, the waited window past
    its read cursor, ``drain``) and stores into the reserved back of ``into`` (as ``fill_tiles``), in one step; the
    stores stay unlanded (``st_mask``, read by ``async-read-publish``) until a drained copy."""
    b, pt = op.src, g.pt[op.src]
    st.body += role(g, e, b, False, st.where)
    st.body.append(g._assert(R.CB_READ_UNWAITED, f"drain[{b}] + {op.tiles} <= (wait_end[{b}] - popped[{b}]) * {pt}",
                             st.where))
    st.body.append(past_end(g, b, "popped", f"drain[{b}]", op.tiles, st.where,
                            f"drain[{b}] + {op.tiles} <= (wait_end[{b}] - popped[{b}]) * {pt}"))
    st.body.append(f"drain[{b}] = drain[{b}] + {op.tiles};")
    st.body += role(g, e, op.into, True, st.where)
    lines, p0, np = fill(g, op.into, op.tiles, st.where)
    st.body += [*lines, *g._source_reuse(op.into, p0, np, "write", st.where)]
    st.body.append(f"st_mask[{e}] = 0;" if op.drain else f"st_mask[{e}] = st_mask[{e}] | {1 << op.into};")


HANDLERS: dict[type, Callable[..., Any]] = {Reserve: reserve, Push: push, Wait: wait, Pop: pop, FillTiles: fill_tiles,
                                            CopyTiles: copy_tiles}
