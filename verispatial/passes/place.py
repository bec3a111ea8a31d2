"""``place``: sites, engines and multicast groups.

A matmul's ``cols`` x ``rows`` grid starts at site (0,0). Column 0 multicasts in0 along its row to columns
1..C-1 and row 0 multicasts in1 down its column to rows 1..R-1 (reference/tenstorrent.md §2.1), non-loopback, so a
group exists only where it has a destination — and only on a target that can multicast (``Target.multicast``).
An elementwise op's sites fill the mesh row-major. Loads run on the reader engine, computes on the compute engine,
stores on the writer engine.
"""

from __future__ import annotations

import attrs

from verispatial.ir.core import Engine, Site
from verispatial.ir.section import (
    AttentionPlan,
    EltwisePlan,
    FoldPlan,
    GroupSpec,
    Handshake,
    MatmulPlan,
    MovePlan,
    Phase,
    Placement,
    Section,
    StageKind,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse

ENGINE_OF_KIND = {StageKind.LOAD: Engine.READER, StageKind.COMPUTE: Engine.COMPUTE, StageKind.STORE: Engine.WRITER}


@attrs.frozen
class Place:
    """Place the section. Valid in (phase ``tiled``), valid out (``placed``); refuses a grid outside the mesh.

    ``one_mover``: run loads and stores on ONE data-movement engine (the reader), leaving the writer engine free;
    ``synthesize-handshakes`` then merges the two programs and fuses their adjacent loop nests.
    """

    name: str = "place"
    one_mover: bool = False

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.TILED)
        tpl, plan = section.template, section.plan
        assert tpl is not None
        assert plan is not None
        groups: list[GroupSpec] = []
        if isinstance(plan, MatmulPlan):
            if plan.cols > target.mesh[0] or plan.rows > target.mesh[1]:
                refuse(self.name, section, f"grid {plan.cols}x{plan.rows} exceeds the {target.mesh[0]}x{target.mesh[1]} mesh")
            sites = tuple(Site(x, y) for y in range(plan.rows) for x in range(plan.cols))
            # Without a multicast (a GPU before clusters), every site loads its own in0 rows and in1 columns.
            if plan.cols > 1 and target.multicast:
                groups += [GroupSpec(0, "row", Site(0, y), (1, y, plan.cols - 1, y)) for y in range(plan.rows)]
            if plan.rows > 1 and target.multicast:
                groups += [GroupSpec(1, "col", Site(x, 0), (x, 1, x, plan.rows - 1)) for x in range(plan.cols)]
        else:
            assert isinstance(plan, EltwisePlan | FoldPlan | MovePlan | AttentionPlan)
            w = target.mesh[0]
            if plan.sites > w * target.mesh[1]:
                refuse(self.name, section, f"{plan.sites} sites exceed the {target.mesh[0]}x{target.mesh[1]} mesh")
            sites = tuple(Site(s % w, s // w) for s in range(plan.sites))
        if self.one_mover and isinstance(plan, MovePlan):
            refuse(self.name, section, "a gather or scatter cannot share one data-movement engine between its load and "
                                       "store: the index page both wait on sits between their loop nests, which then "
                                       "cannot interleave")
        shared = {g.buffer for g in groups}
        edges = tuple(attrs.evolve(e, handshake=Handshake.MULTICAST) if e.buffer in shared else e for e in tpl.edges)
        engine_of = {**ENGINE_OF_KIND, **({StageKind.STORE: Engine.READER} if self.one_mover else {})}
        placement = Placement(sites, tuple(engine_of[s.kind] for s in tpl.stages), tuple(groups))
        frag: Fragment = {
            "pass": self.name,
            "sites": [[s.x, s.y] for s in sites],
            "engines": {s.name: placement.engines[s.id].value for s in tpl.stages},
            "groups": [{"buffer": tpl.buffers[g.buffer].name, "axis": g.axis, "sender": [g.sender.x, g.sender.y],
                        "rect": list(g.rect), "destinations": len(g.destinations()), "loopback": False} for g in groups],
        }
        return attrs.evolve(section, template=attrs.evolve(tpl, edges=edges), placement=placement), frag
