"""``persist``: the item loop (DESIGN §6; the seed's "the item loop is persist's").

A matmul site may own several work items — output blocks of ``per_site_m`` x ``per_site_n`` tiles side by side
along N (``MatmulPlan.items``, chosen by ``tile`` when one block per site does not fit local memory). Every engine
program ``synthesize-handshakes`` emits is the program of one item (item 0). This pass wraps each engine's per-item
ops in ``Loop("item", items)`` and advances every tensor access whose tiles move with the item — in1's columns, a
bias row, the output — by ``item * per_site_n`` tiles (an affine ``Term`` on the ``item`` variable); in0's rows are
the same for every item of a site and stay put. What runs once per kernel stays outside the loop: leading
``SemSet``s (arming a word before its first use), and the trailing write and atomic barriers and ``SemSet``s (a
multicast receiver restoring its flag word's initial value after its last wait).

It runs after ``synthesize-handshakes`` because the loop wraps whole engine programs; the memory map is per item
(the next item reuses every buffer once the previous one has drained it), so ``size`` needs no change. Sections
with one item per site (and every non-matmul section) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from verispatial.ir.core import Term
from verispatial.ir.ops import AtomicBarrier, Loop, Op, ReadTiles, SemSet, WriteBarrier, WriteTiles
from verispatial.ir.program import EngineProgram
from verispatial.ir.section import MatmulPlan, Phase, Section, StageKind
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse

#: The loop variable of the item loop.
ITEM = "item"


def _shift(ops: tuple[Op, ...], moving: Mapping[str, int]) -> tuple[Op, ...]:
    """``ops`` with every read or write of a tensor in ``moving`` advanced by its stride (tiles) per item."""
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Loop):
            out.append(attrs.evolve(op, body=_shift(op.body, moving)))
        elif isinstance(op, (ReadTiles, WriteTiles)) and op.tensor in moving:
            step = Term(ITEM, moving[op.tensor])
            out.append(attrs.evolve(op, addr=attrs.evolve(op.addr, terms=(step, *op.addr.terms))))
        else:
            out.append(op)
    return tuple(out)


def item_loop(ops: tuple[Op, ...], items: int, moving: Mapping[str, int] | frozenset[str],
              stride: int = 0) -> tuple[Op, ...]:
    """One engine's program run over ``items`` items: the leading ``SemSet``s and trailing write/atomic barriers and
    ``SemSet``s once, everything between inside ``Loop("item", items)`` with the ``moving`` tensors' addresses advanced per
    item by their stride in tiles (a set of names: each by ``stride``)."""
    if not isinstance(moving, Mapping):
        moving = dict.fromkeys(moving, stride)
    lo = 0
    while lo < len(ops) and isinstance(ops[lo], SemSet):
        lo += 1
    hi = len(ops)
    while hi > lo and isinstance(ops[hi - 1], (WriteBarrier, AtomicBarrier, SemSet)):
        hi -= 1
    body = _shift(ops[lo:hi], moving)
    return (*ops[:lo], Loop(ITEM, items, body), *ops[hi:]) if body else ops


def _uses(ops: tuple[Op, ...], var: str) -> bool:
    for op in ops:
        if isinstance(op, Loop) and (op.var == var or _uses(op.body, var)):
            return True
    return False


@attrs.frozen
class Persist:
    """Emit the item loop. Valid in (phase ``scheduled``), valid out (``scheduled``).

    Refuses a program that already binds the loop variable ``item`` (it would shadow the item index).
    """

    name: str = "persist"

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.SCHEDULED)
        program, plan, tpl = section.program, section.plan, section.template
        assert program is not None
        assert tpl is not None
        items = plan.items if isinstance(plan, MatmulPlan) else 1
        frag: Fragment = {"pass": self.name, "items": items}
        if not isinstance(plan, MatmulPlan) or items == 1:
            frag["obligations"] = [{"name": "persist:one-item", "claim": "each site owns one work item: no item loop"}]
            return section, frag
        if any(_uses(ep.ops, ITEM) for ep in program.programs):
            refuse(self.name, section, f"an engine program already binds the loop variable {ITEM!r}")
        # in0 (stage read_in0, filling buffer 0) is indexed by the site's rows only; every other tensor access of a
        # matmul section (in1, a bias row, the output) moves with the item's columns.
        fixed = {s.tensor for s in tpl.stages if s.kind == StageKind.LOAD and s.outs == (0,)}
        moving = frozenset(t.name for t in tpl.tensors) - fixed
        stride = plan.per_site_n
        strides = dict.fromkeys(moving, stride)
        if tpl.transpose_b:
            # in1 stored N x K: the next item's columns are per_site_n stored rows of K tiles further.
            for s in tpl.stages:
                if s.kind == StageKind.LOAD and s.outs == (1,) and s.tensor in strides:
                    strides[s.tensor] = stride * tpl.k_tiles
        programs = tuple(EngineProgram(ep.site, ep.engine, item_loop(ep.ops, items, strides),
                                       ep.section_starts) for ep in program.programs)
        frag.update({
            "axis": "n",
            "item_tiles": [plan.per_site_m, plan.per_site_n],
            "stride_tiles": stride,
            **({"stride_tiles_of": {t: v for t, v in sorted(strides.items()) if v != stride}}
               if any(v != stride for v in strides.values()) else {}),
            "moving": sorted(moving),
            "obligations": [
                {"name": "persist:covers", "claim": f"{items} items of {plan.per_site_m}x{plan.per_site_n} tiles, "
                                                    f"{stride} tile columns apart, partition each site's "
                                                    f"{plan.per_site_m}x{plan.site_n}-tile region"},
                {"name": "persist:reuse", "claim": "every buffer and semaphore ends an item as it began it, so the "
                                                   "next item reuses them (the checker's balance, deadlock and "
                                                   "alias obligations over the symbolic item loop)"},
                {"name": "persist:bounds", "claim": "every address advanced by the item stays inside its tensor "
                                                    "(the checker's bounds obligation)"},
            ],
        })
        return attrs.evolve(section, program=attrs.evolve(program, programs=programs)), frag
