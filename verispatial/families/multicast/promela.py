"""Multicast in the Promela model: the ``d_step`` of McastSend and McastSetValid, a multicast leaving its source and
landing at each destination site (``mcast-slot``, in the ``noc`` process) and ``mcast-publish-early`` at a receiver's
push, each rule an ``assert`` mirroring the interpreter's (``families/multicast/semantics.py``).

An issued multicast is an entry of its engine's queue ``mq<e>`` (``left``: it left its source; ``rem``: bit mask of
the destination sites it has yet to land at; ``value``: a flag's value, read when it leaves; ``p0``/``np``: its
source pages; ``ps``: the sender's slot). ``landed[b]``: pages multicasts landed in ``b``; ``mc_mask[e]``: a bit per
(buffer, landing order) multicast from since the engine's last Flush or WriteBarrier (``_Gen.mc_bit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.families.cb import promela as cb
from verispatial.families.noc import promela as noc
from verispatial.families.semaphores import promela as semaphores
from verispatial.ir import rules as R
from verispatial.ir.ops import McastSend, McastSetValid
from verispatial.ir.program import landing_order_of, landings_may_reorder

if TYPE_CHECKING:
    from verispatial.petri.promela import Step, _Gen, _Issue


def publish_early(g: _Gen, b: int, n: int, where: str) -> list[str]:
    """``mcast-publish-early``: a receiver's ``push(b, n)`` of a multicast destination while fewer than ``pushed + n``
    pages have landed in ``b``."""
    if b not in g.mcast_dests:
        return []
    return [g._assert(R.MCAST_PUBLISH_EARLY, f"landed[{b}] >= pushed[{b}] + {n}", where)]


def send(g: _Gen, e: int, path: tuple[int, ...], op: McastSend, st: Step) -> None:
    b, cap, where, body = op.buf, g.caps[op.buf], st.where, st.body
    body.append(noc.read_publish(g, e, b, where))
    if op.front:
        body += cb.role(g, e, b, False, where)
        body.append(cb.waited(g, b, op.pages, where))
        body.append(cb.past_end(g, b, "popped", "0", op.pages * g.pt[b], where,
                                f"popped[{b}] + {op.pages} <= wait_end[{b}]"))
        first = f"popped[{b}]"
    else:
        body += cb.role(g, e, b, True, where)
        body.append(g._assert(R.CB_WRITE_UNRESERVED, f"pushed[{b}] + {op.pages} <= rsv_end[{b}]", where))
        body.append(cb.past_end(g, b, "pushed", "0", op.pages * g.pt[b], where,
                                f"pushed[{b}] + {op.pages} <= rsv_end[{b}]"))
        first = f"pushed[{b}]"
    # With dst the data lands at this engine's write pointer of dst (the model refuses offsets: ``_refuse``).
    slot = f"{first} % {cap}" if op.dst is None else f"pushed[{op.dst}] % {g.caps[op.dst]}"
    if op.dst is not None:
        body += cb.role(g, e, op.dst, True, where)
        body.append(cb.past_end(g, op.dst, "pushed", "0", op.pages * g.pt[op.dst], where))
    iss = g._issue(e, path)
    rem = sum(1 << s for (k, s) in g.mcast_dest if k == iss.k)
    body += g._push_entry(f"mq{e}", iss.k, {"left": "0", "rem": str(rem), "p0": first, "np": str(op.pages),
                                            "ps": slot})
    bit = 1 << g.mc_bit[(b, op.group, op.vc)]
    body += [f"mc_mask[{e}] = mc_mask[{e}] | {bit};", *([f"mw_mask[{e}] = mw_mask[{e}] | {bit};"] if g.orders else []),
             f"wb[{e}] = 1;"]


def set_valid(g: _Gen, e: int, path: tuple[int, ...], op: McastSetValid, st: Step) -> None:
    # A data multicast may land after this flag at a core both reach: of its landing order (channel and rectangle)
    # one since the last Flush or WriteBarrier on an unordered target (``mc_mask``), of another one since the last
    # WriteBarrier (``mw_mask``, ``ir.program.landings_may_reorder``); a bit per (buffer, group, channel): ``_Gen.mc_bit``.
    key = g.order[g._issue(e, path).k]
    groups = g.p.groups
    dests = groups[op.group].destinations()
    other = sum(1 << i for (_b, grp, vc), i in g.mc_bit.items()
                if landings_may_reorder(landing_order_of(groups, grp, vc), groups[grp].destinations(), key, dests)
                ) if g.orders else 0
    mine = sum(1 << i for (_b, grp, vc), i in g.mc_bit.items()
               if landing_order_of(groups, grp, vc) == key) if g.orders else 0
    conds = []
    if not g.t.ordered_writes:
        conds.append(f"(mc_mask[{e}] & {mine}) == 0" if g.orders else f"mc_mask[{e}] == 0")
    if other:
        conds.append(f"(mw_mask[{e}] & {other}) == 0")
    if conds:
        st.body.append(g._assert(R.ASYNC_FLAG_OVERTAKE, " && ".join(conds), st.where))
    iss = g._issue(e, path)
    rem = sum(1 << s for (k, s) in g.mcast_dest if k == iss.k)
    st.body += g._push_entry(f"mq{e}", iss.k, {"left": "0", "rem": str(rem)})
    st.body.append(f"wb[{e}] = 1;")


def lands(g: _Gen, iss: _Issue, x: int, size: int, where: str) -> list[str]:
    """The multicast in entry ``x`` of its engine's queue leaves its source (the first of its virtual channel not yet
    left on a target whose writes stay ordered, any otherwise; it moves before every entry not yet left) or lands at
    a destination site no multicast of its landing order (channel and rectangle, ``ir.program.landing_order``) that
    left before it still has to land at."""
    e, k, op = iss.e, iss.k, iss.op
    assert isinstance(op, (McastSend, McastSetValid))
    q, i = f"mq{e}", str(x)
    out: list[str] = []
    # Entries of another virtual channel do not hold this one back (leaving is ordered per channel); entries of
    # another landing order do not keep it from landing first (the NoC keeps no order across channels or
    # destinations). When every multicast of the engine shares one the guards are the plain ones.
    mcasts = [o for o in g.issues if o.e == e and isinstance(o.op, (McastSend, McastSetValid))]
    other_vc = [o.k for o in mcasts if g.order[o.k][0] != op.vc]
    other_order = [o.k for o in mcasts if g.order[o.k] != g.order[k]]

    def mine(y: int, others: list[int]) -> str:
        return " && ".join(f"{q}[{y}].op != {k2}" for k2 in others)
    if not other_vc:
        first_unleft = "true" if not g.t.ordered_writes or x == 0 else f"{q}[{x - 1}].left"
    else:
        first_unleft = " && ".join(f"({q}[{y}].left || !({mine(y, other_vc)}))" for y in range(x)) \
            if g.t.ordered_writes and x else "true"
    if not other_order:
        busy = " | ".join(f"{q}[{y}].rem" for y in range(x)) or "0"
    else:
        busy = " | ".join(f"({mine(y, other_order)} -> {q}[{y}].rem : 0)" for y in range(x)) or "0"
    j, m = g._tmp(), g._tmp()
    fields = ["op", *g._FIELDS["mq"]]
    save = " ".join(f"s_{f} = {q}[{i}].{f};" for f in fields)
    shift = "; ".join(f"{q}[{m}].{f} = {q}[{m} - 1].{f}" for f in fields)
    restore = " ".join(f"{q}[{j}].{f} = s_{f};" for f in fields if f not in ("left", "value"))
    value = (f"{q}[{j}].value = words[{g._word(e, op.source)}];" if isinstance(op, McastSetValid)
             else f"{q}[{j}].value = 0;")
    body = [save, f"{j} = 0;", f"do :: {j} < {i} && {q}[{j}].left -> {j}++ :: else -> break od;",
            f"{m} = {i};", f"do :: {m} > {j} -> {shift}; {m}-- :: else -> break od;",
            restore, f"{q}[{j}].left = 1;", value]
    out.append(f":: d_step {{ {i} < n{q} && {q}[{i}].op == {k} && !{q}[{i}].left && {first_unleft} -> "
               + " ".join(body) + " }")
    for (kk, s), dest in sorted(g.mcast_dest.items()):
        if kk != k:
            continue
        bit = 1 << s
        guard = (f"{i} < n{q} && {q}[{i}].op == {k} && {q}[{i}].left && ({q}[{i}].rem & {bit}) != 0 "
                 f"&& (({busy}) & {bit}) == 0")
        body = []
        if isinstance(op, McastSend):
            br, cap = dest, g.caps[dest]
            # Landings sit at the write pointer (no offsets here): one overlaps an earlier one the receiver has not
            # published exactly when some landed page is not yet pushed.
            body.append(g._assert(
                R.MCAST_SLOT, f"{q}[{i}].ps == pushed[{br}] % {cap} && {cap} - (pushed[{br}] - popped[{br}]) >= {op.pages}"
                              f" && landed[{br}] == pushed[{br}]", where))
            # The data lands at the sender's slot (where its address points), whatever the receiver's write pointer.
            body += noc.source_reuse(g, br, f"{q}[{i}].ps", str(op.pages), "write", where)
            body.append(f"landed[{br}] = landed[{br}] + {op.pages};")
        else:
            val = g._tmp()
            body.append(f"{val} = {q}[{i}].value;")
            body += semaphores.remote_write(g, dest, val, where)
        body.append(f"{q}[{i}].rem = {q}[{i}].rem & ~{bit};")
        body.append(f"if :: {q}[{i}].rem == 0 -> " + " ".join(g._remove(q, i, g._FIELDS["mq"], size))
                    + " :: else -> skip fi;")
        out.append(f":: d_step {{ {guard} -> " + " ".join(body) + " }")
    return out


#: The Promela export's handlers of this family's op classes (``petri/promela.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {McastSend: send, McastSetValid: set_valid}

#: The queue an issued op of each class waits in until it has landed everywhere (``mc``: multicasts).
QUEUES: dict[type, str] = {McastSend: "mc", McastSetValid: "mc"}

#: The leave and landing ``d_step``s of what each op class issues ``(gen, issue, queue entry, queue size, op id)``.
LANDINGS: dict[type, Callable[..., list[str]]] = {McastSend: lands, McastSetValid: lands}
