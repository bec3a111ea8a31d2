"""The checker's encoding of reads in place (``InPlace``; docs/semantics.md "Reads in place"): one obligation per
Compute that reads pages by index with no wait, ``cb-read-unpublished:ENGINE:[path]``, decided by one reachability
query over the counters, the interpreter's own rule (``families/cb/semantics.read_in_place``) negated:

- a resident input shard (``ir/shards.resident_shards``): the engine at the read with the page index (its loop
  indices at that position) outside ``[0, shard_pages)``;
- any other buffer: the engine at the read with the page (its own pops plus the index) outside ``[popped, pushed)``
  of the buffer's counters at that state — never pushed yet (eps read before the writer's push: nothing orders it),
  or already freed — or the index from the read pointer's slot past the ring's end (``own_pops % capacity + index >=
  capacity``: the unpacker adds ``index * page_size`` with no wrap, ``cb_access_within_bounds``,
  ``tt_metal/hw/inc/internal/circular_buffer_interface.h:139-143``, ttnn 0.81.1). With it, a fact of every Wait the
  engine passed: ``pushed >= n`` (the wait saw ``pushed - popped >= n``, and ``pushed`` only grows), which orders
  a read behind a push of another buffer the engine waited in an earlier loop (the layernorm's eps behind
  ``scaler_global``).

Unsat proves it (the query is an over-approximation of the reachable states: ``certify/reach.py``); sat is a
candidate the interpreter replays at the op (``Replay.CLAIMED``), refuted only when it shows the violation; unknown,
or a buffer whose coverage is not proved (``trusted``), fails to prove."""

from __future__ import annotations

import time

import z3

from verispatial.certify.reach import Analysis, StateQuery, solve_each
from verispatial.certify.report import Result, Verdict
from verispatial.certify.smt import DEFAULT_RLIMIT, Status, any_of
from verispatial.certify.structure import Leaf
from verispatial.ir import rules as R
from verispatial.ir.ops import Compute, InPlace, Pop, Wait, count_max
from verispatial.ir.program import shard_pages
from verispatial.ir.shards import resident_shards

_FAMILY = R.Family.CIRCULAR_BUFFER.value


def check_in_place(a: Analysis, trusted: set[int], rlimit: int = DEFAULT_RLIMIT) -> list[Result]:
    """``cb-read-unpublished`` of every Compute with ``in_place`` reads (module docstring)."""
    p = a.program
    resident = resident_shards(p)
    trip_max = p.trip_max()
    out: list[Result] = []
    for v in a.views.values():
        for lf in v.leaves:
            op = lf.op
            if not isinstance(op, Compute) or not op.in_place:
                continue
            name = f"{R.CB_READ_UNPUBLISHED}:{lf.engine}:{list(lf.path)}"
            if any(count_max(lc.count, trip_max) == 0 for lc in lf.loops):
                out.append(Result(_FAMILY, name, Verdict.PROVED, "the read never runs (its loop runs no iteration)"))
                continue
            bufs = {r.buf for r in op.in_place}
            if not (bufs - resident) <= trusted:
                out.append(Result(_FAMILY, name, Verdict.FAILED,
                                  f"b{min(bufs - resident - trusted)}'s coverage is not proved"))
                continue
            pops = {b: [x for x in v.leaves if isinstance(x.op, Pop) and x.op.buf == b] for b in bufs}
            engines = frozenset([lf.engine] + [x.engine for w in a.views.values() for x in w.leaves
                                               if getattr(x.op, "buf", None) in bufs - resident])

            waits = [x for x in v.leaves if isinstance(x.op, Wait) and x.op.buf in trusted]

            def bad(sq: StateQuery, lf: Leaf = lf, reads: tuple[InPlace, ...] = op.in_place,
                    pops: dict[int, list[Leaf]] = pops, waits: list[Leaf] = waits) -> z3.BoolRef:
                enc = sq.enc
                pos = enc.position(lf.engine)
                env = {lc.var: pos.idx[lc.path] for lc in lf.loops}
                outs = []
                for r in reads:
                    k = enc.q.val(r.page) + z3.Sum([enc.q.val(0)] + [env[t.var] * t.coef for t in r.terms])
                    if r.buf in resident:
                        outs.append(z3.Or(k < 0, k >= shard_pages(p.buffers[r.buf])))
                        continue
                    own = [enc.executed(x) * x.op.pages for x in pops[r.buf] if isinstance(x.op, Pop)]
                    mine = z3.Sum(own) if own else enc.q.val(0)
                    page, cap = k + mine, p.buffers[r.buf].capacity
                    # The index from the read pointer's slot past the ring's end: no wrap (module docstring).
                    outs.append(z3.Or(page < sq.cm.popped(r.buf), page >= sq.cm.pushed(r.buf),
                                      mine % cap + k >= cap))
                # A Wait this engine passed saw pushed - popped >= n, and pushed only grows: pushed >= n still. The
                # window facts keep a wait only inside its loop body; eps is ordered by a wait in an earlier loop
                # (layernorm_sharded.cpp:314, then 520).
                seen = [z3.Implies(enc.executed(w) >= 1, sq.cm.pushed(w.op.buf) >= w.op.pages)
                        for w in waits if isinstance(w.op, Wait)]
                return z3.And(pos.at(lf), any_of(enc.q.ctx, outs), *seen)

            t0 = time.perf_counter()
            o, d, _ = solve_each(a, bad, name, engines, trusted, rlimit, extra=[lf])
            dt = time.perf_counter() - t0
            if o.status == Status.UNSAT:
                out.append(Result(_FAMILY, name, Verdict.PROVED,
                                  "every page it reads in place holds published bytes when it is read", seconds=dt))
            elif o.status == Status.SAT and d is not None:
                msg = f"{lf.engine} may read in place a page of {', '.join(f'b{b}' for b in sorted(bufs))} that holds " \
                      "no published bytes"
                out.append(Result(_FAMILY, name, Verdict.REFUTED, msg, d.counterexample(
                    "state", R.CB_READ_UNPUBLISHED, msg, engine=lf.engine, path=list(lf.path)), dt))
            else:
                out.append(Result(_FAMILY, name, Verdict.FAILED, f"solver: {o.reason}", seconds=dt))
    return out
