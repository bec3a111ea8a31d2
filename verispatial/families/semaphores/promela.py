"""Semaphores in the Promela model: the ``d_step`` of SemInc, SemIncMcast, SemSet and SemWait (two of SemRmw), the
landing of a remote write on a word (``sem-overshoot``) and the words' end balance (``balance-sem``), each rule an
``assert`` mirroring the interpreter's handler (``families/semaphores/semantics.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.ir import rules as R
from verispatial.ir.core import WaitCond
from verispatial.ir.ops import SemInc, SemIncMcast, SemRmw, SemSet, SemWait

if TYPE_CHECKING:
    from verispatial.petri.promela import Step, _Gen, _Issue


def sem_inc(g: _Gen, e: int, path: tuple[int, ...], op: SemInc, st: Step) -> None:
    st.body += g._inc_overtake(e, (op.at,), st.where)
    st.body += g._push_entry(f"iq{e}", g._issue(e, path).k, {"w": str(g.words[(op.sem, op.at)])})
    st.body.append(f"ab[{e}] = 1;")


def sem_inc_mcast(g: _Gen, e: int, path: tuple[int, ...], op: SemIncMcast, st: Step) -> None:
    st.body += g._inc_overtake(e, g.p.groups[op.group].destinations(), st.where)
    k = g._issue(e, path).k
    for d in g.p.groups[op.group].destinations():
        st.body += g._push_entry(f"iq{e}", k, {"w": str(g.words[(op.sem, d)])})
    st.body.append(f"ab[{e}] = 1;")


def sem_set(g: _Gen, e: int, path: tuple[int, ...], op: SemSet, st: Step) -> None:
    w = g._word(e, op.sem)
    st.body.append(g._assert(R.SEM_SET_RACE, f"((dirty[{w}] >> {e}) & 1) == 0", st.where))
    # A value affine in loop indices reads this process's own loop counters (as a wait's threshold does).
    value = g._affine(op.value, tuple((t.var, t.coef) for t in op.terms), g._env(e, path)) if op.terms else op.value
    st.body += g._word_reuse(w, st.where, str(value))
    st.body += [*_lose_rmw(g, w, str(value)), f"words[{w}] = {value};", f"dirty[{w}] = dirty[{w}] & ~{1 << e};"]


def sem_rmw(g: _Gen, e: int, path: tuple[int, ...], op: SemRmw, st: Step) -> None:
    """Two steps, as the interpreter's: the load (into ``rmwv[e]``, holding the word in ``rmwh``), then the store of
    the loaded value plus ``by`` as a write of the word (``sem-rmw-race`` when a write changed it in between:
    ``rmwl``)."""
    w, bit = g._word(e, op.sem), 1 << e
    st.body += [f"rmwv[{e}] = words[{w}];", f"rmwh[{w}] = rmwh[{w}] | {bit};", f"rmwl[{w}] = rmwl[{w}] & ~{bit};",
                f"dirty[{w}] = dirty[{w}] & ~{bit};"]
    st.then += [g._assert(R.SEM_RMW_RACE, f"((rmwl[{w}] >> {e}) & 1) == 0", st.where),
                f"rmwh[{w}] = rmwh[{w}] & ~{bit};", *remote_write(g, w, f"rmwv[{e}] + {op.by}", st.where),
                f"dirty[{w}] = dirty[{w}] & ~{bit};"]


def _lose_rmw(g: _Gen, w: int, new: str) -> list[str]:
    """A write of ``new`` into word ``w`` that changes it: every read-modify-write holding the word loses it."""
    return [f"rmwl[{w}] = rmwl[{w}] | (({new}) != words[{w}] -> rmwh[{w}] : 0);"] if g.rmw else []


def sem_wait(g: _Gen, e: int, path: tuple[int, ...], op: SemWait, st: Step) -> None:
    w = g._word(e, op.sem)
    want = g._affine(op.value, tuple((t.var, t.coef) for t in op.terms), g._env(e, path))
    st.guard = f"words[{w}] == {want}" if op.cond is WaitCond.EQ else f"words[{w}] >= {want}"
    st.body.append(f"dirty[{w}] = dirty[{w}] & ~{1 << e};")
    if op.cond is WaitCond.EQ:
        st.pre.append(f"at{e} = {g.at_of[(e, path)]};")
        st.body.append(f"at{e} = 0;")


def remote_write(g: _Gen, w: int, new: str, where: str | None) -> list[str]:
    """A remote write landing on word ``w`` (``sem-overshoot`` of every equality wait pending at its site,
    ``async-source-reuse`` of a flag reading it), then the new value; every engine of the site must observe it."""
    site, sem = g.word_site[w], g.word_sem[w]
    old = g._tmp()
    lines = [f"{old} = words[{w}];"]
    for e, ep in enumerate(g.p.programs):
        if ep.site != site:
            continue
        for path, op in g._paths(ep.ops):
            if isinstance(op, SemWait) and op.cond is WaitCond.EQ and op.sem == sem:
                want = g._affine(op.value, tuple((t.var, t.coef) for t in op.terms), g._env(e, path))
                lines.append(g._assert(
                    R.SEM_OVERSHOOT,
                    f"!({new} != {old} && at{e} == {g.at_of[(e, path)]} && ({want} == {old} || ({old} < {want} && {want} < {new})))",
                    where))
    lines += g._word_reuse(w, where, new)
    lines += [*_lose_rmw(g, w, new), f"words[{w}] = {new};", f"dirty[{w}] = {g._site_mask(site)};"]
    return lines


def balance(g: _Gen) -> list[str]:
    """``balance-sem`` at the run's end: a word neither re-armed, nor initialized by the host, nor a mailbox no op
    reads ends at its initial value."""
    p = g.p
    rearmed = ({g.words[k] for k in p.rearmed_words()} | {g.words[k] for k in p.host_initialized_words()}
               | {g.words[k] for k in p.mailbox_words()})
    return [g._assert(R.BALANCE_SEM, f"words[{w}] == {g.word_init[w]}") for w in range(len(g.word_site))
            if w not in rearmed]


def inc_lands(g: _Gen, iss: _Issue, x: int, size: int, where: str) -> list[str]:
    """The increment in entry ``x`` of its engine's queue ``iq<e>`` lands on its word (one entry per destination word
    of a SemIncMcast): a remote write of the word plus ``by``."""
    op = iss.op
    assert isinstance(op, (SemInc, SemIncMcast))
    q, i, out = f"iq{iss.e}", str(x), []
    words = ({g.words[(op.sem, op.at)]} if isinstance(op, SemInc) else
             {g.mcast_dest[(iss.k, s)] for (kk, s) in g.mcast_dest if kk == iss.k})
    for w in sorted(words):
        body = g._remove(q, i, g._FIELDS["iq"], size) + remote_write(g, w, f"words[{w}] + {op.by}", where)
        out.append(f":: d_step {{ {i} < n{q} && {q}[{i}].op == {iss.k} && {q}[{i}].w == {w} -> " + " ".join(body) + " }")
    return out


#: The Promela export's handlers of this family's op classes (``petri/promela.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., Any]] = {SemInc: sem_inc, SemIncMcast: sem_inc_mcast, SemSet: sem_set,
                                            SemRmw: sem_rmw, SemWait: sem_wait}

#: The queue an issued op of each class waits in until it lands (``inc``: atomic increments, one per destination).
QUEUES: dict[type, str] = {SemInc: "inc", SemIncMcast: "inc"}

#: The landing ``d_step``s of what each op class issues ``(gen, issue, queue entry, queue size, op id) -> lines``.
LANDINGS: dict[type, Callable[..., list[str]]] = {SemInc: inc_lands, SemIncMcast: inc_lands}
