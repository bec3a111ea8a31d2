"""Export a program as a Promela model for the SPIN model checker, and run SPIN on it (issue 9, deliverable 3).

The model is the token game of ``petri/interp.py`` (docs/semantics.md, the op table and the rules), written for an
independent tool so that a misreading shared by the interpreter and the checker can show up as a disagreement:

- one ``proctype`` per engine, running its op list; each op is one ``d_step`` (one indivisible transition of the
  interpreter: a blocking op's condition is the ``d_step``'s guard);
- global counters for every buffer (``pushed``, ``popped``, the reserved and waited windows, ``fill``, ``drain``,
  multicast pages landed, its producer and consumer engine) and every semaphore word (value, and per engine whether
  it has observed the word since its last remote write), per engine its read, write, multicast and atomic state;
  per tensor tile its incomplete writers, whether a write of it completed and whether one was issued;
- asynchronous NoC operations (reads, writes, atomics, multicasts and their leave/land steps) as entries of
  per-engine in-flight queues, landed by one ``noc`` process that picks any enabled landing nondeterministically, so
  every one lands no later than its engine's barrier (the barrier's guard waits for it); multicasts of an engine keep
  the order of the interpreter (leave in issue order on targets with ordered writes, land at each site in leave order);
- trips chosen nondeterministically in ``[0, max]`` by ``init`` (``select``) before any engine starts;
- every rule the interpreter checks as an ``assert`` whose expression starts with the rule's name (``R_cb_capacity``:
  a hidden constant 0, so ``assert(R_rule || O_e_path || cond)`` fails exactly when ``cond`` does and SPIN's message
  names the rule, and for an engine step the op: engine index and path); the end-of-run rules (``balance-cb``,
  ``balance-sem``, ``output-unwritten``) are asserted by a ``fin`` process once every engine finished and nothing is
  in flight.

SPIN's verdicts: an *invalid end state* is a deadlock (some engine stopped short of its end with nothing enabled: the
``noc`` and ``fin`` processes wait at ``end`` labels), an *assertion violated* is a rule violation, no error is ok.
Outside the model (``PromelaUnsupported``, raised with the reason, never a model that silently drops a rule):
a multicast whose ``num_dests`` is not its group's (``ir/acks.py``: its barrier counts acknowledgements), programs of
several sections (``rendezvous-early``, per-section state versions), aliased buffers
(``alias-clobber``), several engines waiting on one buffer (``ir/sharing.py``), a sharded buffer other than a read
shard of an input or param (the tensor tiles its pushes read or write, ``ir/shards.py``), dynamic (indirect) addresses,
transfers of part of a page (``Part``: the model's tiles are whole), more
than 31 engines, buffers or sites (bit masks in an ``int``) and numbers past a 32-bit signed ``int``.

Each op's ``d_step``, the landings of what it puts in flight and its queue are its rule family's
(``verispatial/families/<family>/promela.py``), looked up in tables assembled from the families' (an op class with
none raises ``UnhandledOp``); this module writes the processes, declarations and queues around them.

``run_spin`` compiles the model once (``spin -a``, ``cc -DSAFETY``) and runs ``pan -c0`` once: the search goes on past
every error, and pan prints each error's message unless it repeats the one just printed, so every distinct assertion
and an invalid end state, when reachable, show. Debian's ``spin``
package provides the ``spin`` command.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs

from verispatial.errors import UnhandledOp, VerispatialError
from verispatial.families import assemble
from verispatial.families.accumulator import promela as accumulator
from verispatial.families.cb import promela as cb
from verispatial.families.multicast import promela as multicast
from verispatial.families.noc import promela as noc
from verispatial.families.semaphores import promela as semaphores
from verispatial.families.tensors import promela as tensors
from verispatial.ir import acks
from verispatial.ir import rules as R
from verispatial.ir.core import Role, Site, WaitCond
from verispatial.ir.data import data_buffers
from verispatial.ir.ops import (
    Compute,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    ReadTiles,
    RemoteRead,
    SemIncMcast,
    SemRmw,
    SemWait,
    TripCount,
    WriteTiles,
    count_max,
    op_text,
)
from verispatial.ir.program import Program, landing_order, shard_pages, walk
from verispatial.ir.shards import written_shards
from verispatial.ir.sharing import sharing_waiters
from verispatial.petri.position import RULES

__all__ = ["PromelaUnsupported", "SpinResult", "run_spin", "spin_available", "to_promela"]

_INT_MAX = 2**31 - 1
_MASK_BITS = 31


class PromelaUnsupported(VerispatialError):
    """The program uses a construct the Promela model does not express (the message says which); raised instead
    of writing a model that would leave a rule unchecked."""


def _rid(rule: str) -> str:
    return "R_" + rule.replace("-", "_")


def _comment(text: str) -> str:
    """``text`` (a name, an op's text) safe inside a ``/* ... */`` comment: a ``*/`` in a name would close it and the
    rest of the name would be read as Promela."""
    return text.replace("*/", "*\\/")


def _oid(e: int, path: tuple[int, ...]) -> str:
    return f"O_{e}_" + "_".join(str(i) for i in path)


_RULE_OF = {_rid(r): r for r in RULES}

#: op class -> its family's handler ``(gen, engine, path, op, step)`` (``verispatial/families``).
_HANDLERS = assemble("the Promela export", cb.HANDLERS, semaphores.HANDLERS, accumulator.HANDLERS, noc.HANDLERS,
                     multicast.HANDLERS)
#: op class -> the queue an issued op of that class waits in until it lands (``rd``, ``wr``, ``inc``, ``mc``).
_QUEUES = assemble("the Promela queues", semaphores.QUEUES, noc.QUEUES, multicast.QUEUES)
#: op class -> its family's landing ``d_step``s of what an op of that class issued ``(gen, issue, queue entry, queue
#: size, op id) -> lines`` (the ``noc`` process).
_LANDINGS = assemble("the Promela export's landings", semaphores.LANDINGS, noc.LANDINGS, multicast.LANDINGS)


@attrs.define
class Step:
    """The Promela of one leaf op as its family's handler builds it: the lines run on arriving at it (``pre``), the
    ``d_step``'s guard and its body; ``where`` is the op's id (``O_e_path``), the assertions' escape."""

    where: str
    pre: list[str] = attrs.Factory(list)
    guard: str = "true"
    body: list[str] = attrs.Factory(list)
    #: an op of two steps (``SemRmw``): the second ``d_step``'s body (another process may move between them)
    then: list[str] = attrs.Factory(list)


@attrs.frozen
class _Issue:
    """An asynchronous op of engine ``e`` at ``path``: its queue (``rd``, ``wr``, ``inc``, ``mc``) and op."""

    k: int
    e: int
    path: tuple[int, ...]
    op: Op
    queue: str


class _Gen:
    """Writes the model of one program (see the module docstring)."""

    # The rules of the NoC and multicast families that other families' parts assert (a push publishes pages that
    # must have landed; a reserve, pop or write may reuse a pending write's source), bound here so the circular-buffer,
    # accumulator and semaphore folders reach them through the generator they are handed instead of importing the
    # NoC and multicast folders, which import theirs.
    _read_publish = noc.read_publish
    _source_reuse = noc.source_reuse
    _word_reuse = noc.word_reuse
    _inc_overtake = noc.inc_overtake
    _mcast_publish_early = multicast.publish_early

    def __init__(self, p: Program) -> None:
        self.p = p
        self._refuse()
        self.t = p.target
        #: Each trip's variable in the model, by position: a trip's name is any printable text, never code.
        self.trip_ids = {t.name: f"trip_{i}" for i, t in enumerate(p.trips)}
        self.n = len(p.programs)
        self.sites: list[Site] = sorted({ep.site for ep in p.programs} | {b.site for b in p.buffers}
                                        | {s for sem in p.semaphores for s in sem.sites}, key=lambda s: (s.x, s.y))
        self.site_ix = {s: i for i, s in enumerate(self.sites)}
        self.words: dict[tuple[int, Site], int] = {}
        self.word_site: list[Site] = []
        self.word_sem: list[int] = []
        self.word_init: list[int] = []
        for sem in p.semaphores:
            for s in sem.sites:
                self.words[(sem.id, s)] = len(self.word_site)
                self.word_site.append(s)
                self.word_sem.append(sem.id)
                self.word_init.append(sem.init)
        self.caps = [b.capacity for b in p.buffers]
        self.pt = [b.page_tiles for b in p.buffers]
        self.tiles = [t.tiles(p.target.tile) for t in p.tensors]
        self.tix = {t.name: i for i, t in enumerate(p.tensors)}
        by_site_cb = {(b.site, b.cb): b.id for b in p.buffers}
        self.mcast_dest: dict[tuple[int, int], int] = {}  # (issue k, site index) -> dest buffer / word
        self.issues: list[_Issue] = []
        self.at_of: dict[tuple[int, tuple[int, ...]], int] = {}  # eq SemWait -> its marker value (>= 1)
        self.loopvars: dict[tuple[int, tuple[int, ...]], str] = {}
        #: whether a non-atomic read-modify-write runs: then every write of a word marks the ones it loses (``rmwl``)
        self.rmw = any(isinstance(op, SemRmw) for ep in p.programs for op in walk(ep.ops))
        for e, ep in enumerate(p.programs):
            for path, op in self._paths(ep.ops):
                if isinstance(op, Loop):
                    self.loopvars[(e, path)] = f"lv_{e}_" + "_".join(map(str, path))
                elif isinstance(op, SemWait) and op.cond is WaitCond.EQ:
                    self.at_of[(e, path)] = len([k for k in self.at_of if k[0] == e]) + 1
                q = _QUEUES.get(type(op))
                if q is not None:
                    iss = _Issue(len(self.issues), e, path, op, q)
                    self.issues.append(iss)
                    if isinstance(op, McastSend):
                        src = p.buffers[op.dest]
                        for d in p.groups[op.group].destinations():
                            self.mcast_dest[(iss.k, self.site_ix[d])] = by_site_cb[(d, src.cb)]
                    elif isinstance(op, (McastSetValid, SemIncMcast)):
                        for d in p.groups[op.group].destinations():
                            self.mcast_dest[(iss.k, self.site_ix[d])] = self.words[(op.sem, d)]
        #: Buffers whose pushes publish data (``cb-push-unfilled``): the interpreter's and the checker's definition
        #: (``ir/data.py``; the export refuses what else it takes in: indirect addresses, remote reads, written shards).
        self.data_bufs = data_buffers(p)
        self.mcast_dests = {b for (k, _s), b in self.mcast_dest.items() if isinstance(self.issues[k].op, McastSend)}
        #: The landing order (``ir.program.landing_order``: virtual channel and rectangle) of each multicast issue.
        self.order = {iss.k: landing_order(p.groups, iss.op) for iss in self.issues
                      if isinstance(iss.op, (McastSend, McastSetValid))}
        #: The bit of ``mc_mask`` for each (buffer, group, virtual channel) a data multicast sends from: the buffer's id
        #: for the first pair it is sent on, one past every buffer's for each other (families/multicast/promela.py).
        self.mc_bit: dict[tuple[int, int, int | None], int] = {}
        extra = len(p.buffers)
        for iss in self.issues:
            op = iss.op
            if isinstance(op, McastSend) and (op.buf, op.group, op.vc) not in self.mc_bit:
                if any(b == op.buf for b, _, _ in self.mc_bit):
                    self.mc_bit[(op.buf, op.group, op.vc)], extra = extra, extra + 1
                else:
                    self.mc_bit[(op.buf, op.group, op.vc)] = op.buf
        #: Whether multicasts have two landing orders: then ``mw_mask[e]`` keeps ``mc_mask``'s bits until a
        #: WriteBarrier (a Flush orders one landing order only), for a flag of another one (``async-flag-overtake``).
        self.orders = len(set(self.order.values())) > 1
        #: Sharded buffers (all read shards of inputs and params: ``_refuse``) -> the pages of their shard.
        self.shard_pages = {b.id: shard_pages(b) for b in p.buffers if b.shard is not None}
        trip_max = p.trip_max()
        # Queue sizes: every issue of the engine that could be in flight at once (loops at their max).
        self.qsize: dict[tuple[int, str], int] = {}
        for e, ep in enumerate(p.programs):
            for path, op, times in self._counted(ep.ops, trip_max):
                q = _QUEUES.get(type(op))
                # one entry per destination for an increment multicast (each lands on its own)
                n = times * (len(p.groups[op.group].destinations()) if isinstance(op, SemIncMcast) else 1)
                if q is not None:
                    # at least one entry: a queue of an op that never runs is declared all the same
                    self.qsize[(e, q)] = max(self.qsize.get((e, q), 0) + n, 1)
                del path
        for (e, q), n in self.qsize.items():
            if n > 255:
                raise PromelaUnsupported(f"{p.programs[e].key} may have {n} {q} operations in flight; the model's "
                                         "queues hold at most 255")
        self.rules_used: set[str] = set()
        self.ops_used: set[str] = set()
        self.h = 0
        self._check_numbers(trip_max)

    # ---------------------------------------------------------------- scope

    def _refuse(self) -> None:
        p = self.p
        why = acks.refusal(p, "the Promela model")
        if why is not None:
            raise PromelaUnsupported(why)
        if len(p.sections) > 1:
            raise PromelaUnsupported(f"{len(p.sections)} sections: the Promela model covers one-section programs "
                                     "(rendezvous-early and per-section state versions are not modelled)")
        if any(b.alias_of is not None for b in p.buffers):
            raise PromelaUnsupported("aliased buffers: alias-clobber is not modelled in Promela")
        scratch = next((b for b in p.buffers if b.scratch), None)
        if scratch is not None:
            raise PromelaUnsupported(f"b{scratch.id} is a scratch buffer: scratch-unlanded and scratch-reuse are not "
                                     "modelled in Promela (the model's reads land in a buffer's reserved back)")
        for ep in p.programs:
            for op in walk(ep.ops):
                if isinstance(op, (ReadTiles, WriteTiles)) and any(t.var in {x.name for x in p.trips}
                                                                    for t in op.addr.terms):
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)}'s address names a trip (not modelled)")
        sized = next((t.name for t in p.tensors if t.trip_rows is not None), None)
        if sized is not None:
            raise PromelaUnsupported(f"tensor {sized!r} is sized by a trip (trip_rows): the model's tile arrays have "
                                     "one size")
        written = written_shards(p)
        for x in p.buffers:
            if x.shard is not None and (x.id in written or p.tensor(x.shard.tensor).role not in (Role.INPUT, Role.PARAM)):
                raise PromelaUnsupported(f"b{x.id} is sharded on {p.tensor(x.shard.tensor).role.value} tensor "
                                         f"{x.shard.tensor!r}: the tensor tiles its pushes "
                                         f"{'write' if x.id in written else 'read'} are not modelled in Promela (a "
                                         "read shard of an input or param is)")
        shared = sharing_waiters(p)
        if shared:
            b, keys = min(shared.items())
            raise PromelaUnsupported(f"b{b} has engines waiting on it without popping it ({', '.join(sorted(keys))}): "
                                     "several waiters on one buffer are not modelled in Promela")
        for ep in p.programs:
            for op in walk(ep.ops):
                if isinstance(op, (ReadTiles, WriteTiles)) and op.addr.dynamic is not None:
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} has a dynamic address (not modelled)")
                if isinstance(op, (ReadTiles, WriteTiles)) and op.part is not None:
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} moves part of a page: the model's tensor tiles "
                                             "are whole (part-page transfers are not modelled in Promela)")
                if isinstance(op, Compute) and op.in_place:
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} reads pages in place with no wait "
                                             f"({R.CB_READ_UNPUBLISHED} is not modelled in Promela)")
                if isinstance(op, RemoteRead):
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} reads another core's buffer (remote reads "
                                             "are not modelled in Promela)")
                if isinstance(op, McastSend) and op.behind:
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} multicasts pages it already pushed: the model "
                                             "keeps no page's bytes after its push (multicasts of pages already "
                                             "pushed are not modelled)")
                if isinstance(op, McastSend) and op.offset:
                    raise PromelaUnsupported(f"{ep.key}: {op_text(op)} lands {op.offset} pages past the write pointer: "
                                             "the model counts landed pages, not which ones (multicast offsets are not "
                                             "modelled)")
        if len(p.programs) > _MASK_BITS or len(p.buffers) > _MASK_BITS:
            raise PromelaUnsupported(f"{len(p.programs)} engines and {len(p.buffers)} buffers: the model keeps them "
                                     f"in {_MASK_BITS}-bit masks")

    def _check_numbers(self, trip_max: dict[str, int]) -> None:
        big = [v for v in (*self.word_init, *self.tiles, *trip_max.values()) if v > _INT_MAX]
        for ep in self.p.programs:
            for op in walk(ep.ops):
                for f in ("pages", "tiles", "value", "by"):
                    v = getattr(op, f, 0)
                    if isinstance(v, int) and v > _INT_MAX // 4:
                        big.append(v)
        if big:
            raise PromelaUnsupported(f"the number {big[0]} does not fit the model's 32-bit int")
        if len(self.sites) > _MASK_BITS:
            raise PromelaUnsupported(f"{len(self.sites)} sites: the model keeps them in {_MASK_BITS}-bit masks")

    # ---------------------------------------------------------------- helpers

    @staticmethod
    def _paths(ops: tuple[Op, ...], prefix: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Op]]:
        for i, op in enumerate(ops):
            yield (*prefix, i), op
            if isinstance(op, (Loop, If)):
                yield from _Gen._paths(op.body, (*prefix, i))

    @staticmethod
    def _counted(ops: tuple[Op, ...], trip_max: dict[str, int], times: int = 1,
                 prefix: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Op, int]]:
        for i, op in enumerate(ops):
            yield (*prefix, i), op, times
            if isinstance(op, Loop):
                yield from _Gen._counted(op.body, trip_max, times * count_max(op.count, trip_max), (*prefix, i))
            elif isinstance(op, If):
                yield from _Gen._counted(op.body, trip_max, times, (*prefix, i))

    def _tmp(self) -> str:
        self.h += 1
        return f"h{self.h}"

    def _assert(self, rule: str, cond: str, where: str | None = None) -> str:
        self.rules_used.add(rule)
        if where is not None:
            self.ops_used.add(where)
            return f"assert({_rid(rule)} || {where} || ({cond}));"
        return f"assert({_rid(rule)} || ({cond}));"

    def _env(self, e: int, path: tuple[int, ...]) -> dict[str, str]:
        """Loop variable name -> its global in the model, innermost loop last (it wins, as in the interpreter)."""
        ops = self.p.programs[e].ops
        env: dict[str, str] = {}
        for k in range(1, len(path)):
            node: Op = ops[path[0]]
            for i in path[1:k]:
                assert isinstance(node, (Loop, If))
                node = node.body[i]
            if isinstance(node, Loop):
                env[node.var] = self.loopvars[(e, path[:k])]
        return env

    def _count(self, count: int | str | TripCount) -> str:
        if isinstance(count, int):
            return str(count)
        if isinstance(count, str):
            return self.trip_ids[count]
        v = f"({count.scale}*{self.trip_ids[count.trip]}+({count.offset}))"
        return f"({v} > 0 -> {v} : 0)"

    def _affine(self, base: int, terms: tuple[tuple[str, int], ...], env: dict[str, str]) -> str:
        out = str(base)
        for var, coef in terms:
            out += f" + {coef}*{env[var]}"
        return f"({out})"

    def _word(self, e: int, sem: int) -> int:
        return self.words[(sem, self.p.programs[e].site)]

    def _site_mask(self, site: Site) -> int:
        return sum(1 << e for e, ep in enumerate(self.p.programs) if ep.site == site)

    @staticmethod
    def _in_ring(j: str, p0: str, np: str, cap: int) -> str:
        """Whether ring slot ``j`` is among pages ``[p0, p0 + np)`` of a ``cap``-page ring."""
        return f"({np} >= {cap} || ((({j}) - ({p0}) % {cap} + {cap}) % {cap}) < {np})"

    def _push_entry(self, q: str, k: int, fields: dict[str, str]) -> list[str]:
        sets = "; ".join(f"{q}[n{q}].{f} = {v}" for f, v in fields.items())
        return [f"{q}[n{q}].op = {k}; {sets}; n{q}++;" if sets else f"{q}[n{q}].op = {k}; n{q}++;"]

    # ---------------------------------------------------------------- engine steps

    def _step(self, e: int, path: tuple[int, ...], op: Op) -> list[str]:
        """The Promela statements of one leaf op: the arrival check, then one ``d_step``."""
        st = Step(_oid(e, path))
        cb.capacity(self, op, st)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise UnhandledOp("the Promela export", op)
        handler(self, e, path, op, st)
        out = list(st.pre)
        out.append(f"/* {_comment(op_text(op))} */")
        out.append(f"d_step {{ {st.guard} -> " + " ".join(st.body) + " };" if st.body else f"d_step {{ {st.guard} -> skip }};")
        if st.then:
            out.append("d_step { true -> " + " ".join(st.then) + " };")
        return out

    def _issue(self, e: int, path: tuple[int, ...]) -> _Issue:
        return next(x for x in self.issues if x.e == e and x.path == path)

    def _block(self, e: int, ops: tuple[Op, ...], prefix: tuple[int, ...], ind: str) -> list[str]:
        out: list[str] = []
        for i, op in enumerate(ops):
            path = (*prefix, i)
            if isinstance(op, Loop):
                v = self.loopvars[(e, path)]
                n = self._count(op.count)
                out.append(f"{ind}{v} = 0;")
                out.append(f"{ind}do")
                out.append(f"{ind}:: {v} < {n} ->")
                out += self._block(e, op.body, path, ind + "   ")
                out.append(f"{ind}   {v}++")
                out.append(f"{ind}:: else -> {v} = 0; break")
                out.append(f"{ind}od;")
                out.append(f"{ind}skip;  /* a jump may not enter a d_step: the loop exits here */")
            elif isinstance(op, If):
                env = self._env(e, path)
                # the innermost enclosing loop named op.var: its variable and count
                lp_path = max(k for (ee, k) in self.loopvars if ee == e and k == path[: len(k)] and len(k) < len(path)
                              and self._loop_at(e, k).var == op.var)
                v, cnt = env[op.var], self._count(self._loop_at(e, lp_path).count)
                cond = {"first": f"{v} == 0", "last": f"{v} == {cnt} - 1", "not_first": f"{v} != 0",
                        "not_last": f"{v} != {cnt} - 1"}[op.when.value]
                out.append(f"{ind}if")
                out.append(f"{ind}:: {cond} ->")
                out += self._block(e, op.body, path, ind + "   ") or [f"{ind}   skip"]
                out.append(f"{ind}:: else -> skip")
                out.append(f"{ind}fi;")
                out.append(f"{ind}skip;")
            else:
                out += [ind + line for line in self._step(e, path, op)]
        return out

    def _shared_loopvars(self) -> set[str]:
        """Loop indices another process reads: those in the threshold of an equality wait (``sem-overshoot`` is
        checked where a remote write lands, in the ``noc`` process)."""
        out: set[str] = set()
        for e, ep in enumerate(self.p.programs):
            for path, op in self._paths(ep.ops):
                if isinstance(op, SemWait) and op.cond is WaitCond.EQ and op.terms:
                    env = self._env(e, path)
                    out.update(env[t.var] for t in op.terms)
        return out

    def _loop_at(self, e: int, path: tuple[int, ...]) -> Loop:
        node: Op = self.p.programs[e].ops[path[0]]
        for i in path[1:]:
            assert isinstance(node, (Loop, If))
            node = node.body[i]
        assert isinstance(node, Loop)
        return node

    # ---------------------------------------------------------------- landings

    def _remove(self, q: str, i: str, fields: list[str], size: int) -> list[str]:
        """Remove entry ``i`` of queue ``q``, the later ones moving up one place (issue order kept)."""
        j = self._tmp()
        moves = "; ".join(f"{q}[{j}].{f} = {q}[{j} + 1].{f}" for f in ["op", *fields])
        clear = "; ".join(f"{q}[n{q} - 1].{f} = 0" for f in ["op", *fields])
        return [f"for ({j} : {i} .. {size - 1}) {{ if :: {j} + 1 < n{q} -> {moves} :: else -> skip fi }};",
                f"{clear}; n{q}--;"]

    _FIELDS = {"rq": ["p0", "np", "lo", "hi"], "wq": ["p0", "np"], "iq": ["w"],
               "mq": ["left", "rem", "value", "p0", "np", "ps"]}

    def _landings(self) -> list[str]:
        """The ``noc`` process's alternatives: every leave and landing of every entry an issued op may occupy."""
        out: list[str] = []
        for iss in self.issues:
            landing = _LANDINGS.get(type(iss.op))
            if landing is None:
                raise UnhandledOp("the Promela export's landings", iss.op)
            size = self.qsize[(iss.e, iss.queue)]
            for x in range(size):
                out += landing(self, iss, x, size, _oid(iss.e, iss.path))
        return out

    # ---------------------------------------------------------------- the model

    def model(self) -> str:
        p = self.p
        nb, nw, n = max(len(p.buffers), 1), max(len(self.word_site), 1), max(self.n, 1)
        engines: list[str] = []
        for e, ep in enumerate(p.programs):
            lines = [f"proctype E{e}() /* {ep.key} */", "{"]
            # a loop index only this engine reads is local (SPIN's partial order reduction merges its steps)
            lines += [f"   int {v};" for (ee, _path), v in sorted(self.loopvars.items())
                      if ee == e and v not in self._shared_loopvars()]
            lines += self._block(e, ep.ops, (), "   ")
            lines.append("   " + noc.pending_at_end(self, e))
            lines.append(f"   finished[{e}] = 1")
            lines.append("}")
            engines += lines
        landings = self._landings()
        fin = [*cb.balance(self), *tensors.unwritten(self), *semaphores.balance(self)]
        queues = [f"n{q}{e}" for (e, kind) in sorted(self.qsize) for q in [{"rd": "rq", "wr": "wq", "inc": "iq", "mc": "mq"}[kind]]]
        done = " && ".join([f"finished[{e}]" for e in range(self.n)] + [f"{x} == 0" for x in queues]) or "true"

        head = [f"/* verispatial Promela model of program {_comment(repr(p.name))} on {_comment(self.t.name)} "
                "(docs/semantics.md;",
                "   verispatial/petri/promela.py). SPIN: invalid end state = deadlock, assertion violated = the rule",
                "   its expression names (R_<rule>), at the op O_<engine>_<path> when it names one. */",
                f"/* engines: {', '.join(f'E{e} = {ep.key}' for e, ep in enumerate(p.programs))} */"]
        decl: list[str] = []
        for r in sorted(self.rules_used):
            decl.append(f"hidden byte {_rid(r)} = 0;")
        for o in sorted(self.ops_used):
            decl.append(f"hidden byte {o} = 0;")
        decl.append(f"hidden int {', '.join(f'h{i}' for i in range(1, self.h + 1))};" if self.h else "")
        decl.append("hidden int s_op, s_left, s_rem, s_value, s_p0, s_np, s_ps;")
        for trip in p.trips:
            decl.append(f"int {self.trip_ids[trip.name]}; /* {_comment(trip.name)} */")
        decl += [f"int pushed[{nb}], popped[{nb}], rsv_end[{nb}], wait_end[{nb}], fill[{nb}], drain[{nb}], landed[{nb}];",
                 f"byte producer[{nb}], consumer[{nb}];",
                 f"int words[{nw}];", f"int dirty[{nw}];",
                 *([f"int rmwh[{nw}], rmwl[{nw}], rmwv[{n}];"] if self.rmw else []),
                 f"int rb_mask[{n}], st_mask[{n}], mc_mask[{n}];", *([f"int mw_mask[{n}];"] if self.orders else []),
                 f"bit wb[{n}], ab[{n}], finished[{n}];", f"int acc[{n}];"]
        for ti, tiles in enumerate(self.tiles):
            decl.append(f"int tm_{ti}[{max(tiles, 1)}]; bit tdone_{ti}[{max(tiles, 1)}]; bit tiss_{ti}[{max(tiles, 1)}];"
                        f" /* {_comment(p.tensors[ti].name)} ({p.tensors[ti].role.value}) */")
        for e in range(self.n):
            if any(k[0] == e for k in self.at_of):
                decl.append(f"byte at{e};")
        shared = self._shared_loopvars()
        for v in sorted(self.loopvars.values()):
            if v in shared:
                decl.append(f"int {v};")
        types = {"rq": "RD", "wq": "WR", "iq": "INC", "mq": "MC"}
        typedefs = ["typedef RD { byte op; int p0; int np; int lo; int hi }",
                    "typedef WR { byte op; int p0; int np }",
                    "typedef INC { byte op; byte w }",
                    "typedef MC { byte op; bit left; int rem; int value; int p0; int np; int ps }"]
        for (e, kind), size in sorted(self.qsize.items()):
            q = {"rd": "rq", "wr": "wq", "inc": "iq", "mc": "mq"}[kind]
            decl.append(f"{types[q]} {q}{e}[{size}]; byte n{q}{e};")
        init = ["init {", "   atomic {"]
        for trip in p.trips:
            init.append(f"      select({self.trip_ids[trip.name]} : 0 .. {trip.max});")
        for bi in range(len(p.buffers)):
            init.append(f"      producer[{bi}] = 255; consumer[{bi}] = 255;")
        for wi, v0 in enumerate(self.word_init):
            init.append(f"      words[{wi}] = {v0};")
        init += [f"      run E{e}();" for e in range(self.n)]
        if landings:
            init.append("      run noc();")
        init += ["      run fin()", "   }", "}"]
        noc_proc = ["proctype noc()", "{", "end: do", *landings, "   od", "}"] if landings else []
        finp = ["proctype fin()", "{", f"end: d_step {{ {done} -> " + " ".join(fin) + " skip }", "}"]
        return "\n".join([*head, "", *typedefs, "", *[d for d in decl if d], "", *engines, "", *noc_proc, "", *finp, "",
                          *init, ""])


def to_promela(program: Program) -> str:
    """The Promela model of ``program`` (module docstring). Raises ``PromelaUnsupported`` (a ``VerispatialError``)
    naming the construct for a program outside the model; the program must pass ``validate``."""
    return _Gen(program).model()


@attrs.frozen
class SpinResult:
    """What SPIN said about one model.

    ``verdict``: ``deadlock`` (an invalid end state), ``violation`` (an assertion; no deadlock) or ``ok``; only
    meaningful when ``finished``. ``finished``: the ``pan`` search ran to completion (no depth or memory limit,
    no time-out). ``deadlock``: an invalid end state was found. ``rules``: the rules of the assertions SPIN found
    violated (every one reached, ``-c0``), ``sites``: (rule, engine index, op path) for those at an engine op.
    ``states``: states stored by the search; ``seconds``: compile and search; ``detail``: why a
    search did not finish (empty when it did)."""

    verdict: str
    finished: bool
    deadlock: bool
    rules: frozenset[str]
    sites: frozenset[tuple[str, int, tuple[int, ...]]]
    states: int
    seconds: float
    detail: str = ""


def spin_available() -> bool:
    """Whether the ``spin`` command and a C compiler are on ``PATH`` (Debian: ``apt-get install spin``)."""
    return shutil.which("spin") is not None and shutil.which("cc") is not None


#: ``pan:N: assertion violated ((R_rule||O_engine_path)||(cond))``, or ``(R_rule||(cond))`` for an end-of-run rule;
#: pan prints an error's message unless it repeats the one just printed, so with ``-c0`` every distinct one shows.
_ASSERT = re.compile(r"assertion violated \(+(R_[a-z_]+)\|\|(?:(O_\d+(?:_\d+)*)\))?")
_STATES = re.compile(r"([0-9.e+]+) states, stored")


def run_spin(model: str, *, timeout: float = 60.0, max_depth: int = 1_000_000, workdir: str | Path | None = None
             ) -> SpinResult:
    """Compile ``model`` once (``spin -a``, ``cc -DSAFETY``) and search it with ``pan -c0`` (every error reported,
    the search going on past each). ``timeout`` (seconds) bounds each step; ``max_depth`` is pan's ``-m``. Raises
    ``RuntimeError`` when SPIN or the compiler is missing or rejects the model (a model error, not a verdict)."""
    import time

    t0 = time.perf_counter()
    if not spin_available():
        raise RuntimeError("spin or cc is not installed (Debian: apt-get install -y spin)")
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        (Path(d) / "model.pml").write_text(model)

        def sh(*cmd: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout, check=False)

        r = sh("spin", "-a", "model.pml")
        if r.returncode != 0:
            raise RuntimeError(f"spin -a rejects the model: {(r.stdout + r.stderr)[-2000:]}")
        r = sh("cc", "-O0", "-DSAFETY", "-DVECTORSZ=65536", "-DMEMLIM=1024", "-w", "-o", "pan", "pan.c")
        if r.returncode != 0:
            raise RuntimeError(f"cc rejects pan.c: {(r.stdout + r.stderr)[-2000:]}")
        detail = ""
        try:
            r = sh("./pan", "-c0", f"-m{max_depth}")
            out = r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            detail, out = f"pan timed out after {timeout:g} s", ""
        if "max search depth too small" in out or "out of memory" in out.lower() or "VECTORSZ" in out:
            detail = "pan did not finish: " + " ".join(
                ln.strip() for ln in out.splitlines() if "depth" in ln or "memory" in ln.lower())[:300]
        deadlock = re.search(r"pan:\d+: invalid end state", out) is not None
        rules: set[str] = set()
        sites: set[tuple[str, int, tuple[int, ...]]] = set()
        for m in _ASSERT.finditer(out):
            rule = _RULE_OF.get(m[1], m[1])
            rules.add(rule)
            if m[2]:
                parts = m[2].split("_")[1:]
                sites.add((rule, int(parts[0]), tuple(int(x) for x in parts[1:])))
        sm = _STATES.search(out)
        states = int(float(sm[1])) if sm else 0
    verdict = R.DEADLOCK if deadlock else "violation" if rules else "ok"
    return SpinResult(verdict, not detail, deadlock, frozenset(rules), frozenset(sites), states,
                      time.perf_counter() - t0, detail)
