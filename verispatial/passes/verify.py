"""One rule set per phase, run after the pass that reaches it (the pipeline's verify-each hook).

A broken rule here is a defect of the compiler, not of its input: it raises ``InvalidProgram`` naming every
violation, where a pass that cannot do its work refuses by name instead.
"""

from __future__ import annotations

from collections.abc import Callable

from verispatial.errors import InvalidProgram, IrViolation
from verispatial.ir.section import (
    AttentionPlan,
    EltwisePlan,
    FoldLevel,
    FoldPlan,
    MatmulPlan,
    MovePlan,
    Phase,
    Section,
)
from verispatial.ir.target import Target
from verispatial.ir.validate import validate


def _template(s: Section, t: Target) -> list[IrViolation]:
    out: list[IrViolation] = []
    tpl = s.template
    assert tpl is not None
    for i, b in enumerate(tpl.buffers):
        if b.id != i:
            out.append(IrViolation(f"template buffer {b.id}", f"ids are dense: expected {i}"))
    updates = dict(tpl.carries)
    for b in tpl.buffers:
        prods = [st.id for st in tpl.stages if b.id in st.outs]
        if b.id in updates:
            # A carry has its update and at most one initializer, which runs before the K blocks.
            inits = [p for p in prods if p != updates[b.id]]
            if updates[b.id] not in prods or len(inits) > 1 or any(tpl.stages[p].fold != FoldLevel.PROLOGUE for p in inits):
                out.append(IrViolation(f"template buffer {b.name}", "a carry is pushed by its update and at most one "
                                                                    f"prologue stage, got stages {prods}"))
        elif len(prods) > 1:
            out.append(IrViolation(f"template buffer {b.name}", f"has {len(prods)} producing stages, expected at most one"))
    for e in tpl.edges:
        if not e.consumers:
            out.append(IrViolation(f"edge of buffer {tpl.buffers[e.buffer].name}", "has no consumer (its pages are never drained)"))
    for st in tpl.stages:
        for bid in (*st.ins, *st.outs):
            if not 0 <= bid < len(tpl.buffers):
                out.append(IrViolation(f"stage {st.name}", f"names buffer {bid}, which does not exist"))
    return out


def _tiled(s: Section, t: Target) -> list[IrViolation]:
    tpl, plan = s.template, s.plan
    assert tpl is not None
    assert plan is not None
    out: list[IrViolation] = []
    if isinstance(plan, MatmulPlan):
        if plan.per_site_m * plan.rows != tpl.m_tiles or plan.site_n * plan.cols != tpl.n_tiles:
            out.append(IrViolation("plan", f"{plan.cols}x{plan.rows} sites of {plan.items} item(s) of "
                                           f"{plan.per_site_m}x{plan.per_site_n} tiles do not cover "
                                           f"{tpl.m_tiles}x{tpl.n_tiles}"))
        if plan.block_w * plan.num_blocks != tpl.k_tiles:
            out.append(IrViolation("plan", f"{plan.num_blocks} K blocks of {plan.block_w} do not cover K = {tpl.k_tiles}"))
        if plan.per_site_m % plan.sb_h or plan.per_site_n % plan.sb_w:
            out.append(IrViolation("plan", "sub-blocks do not tile the per-site block"))
        if plan.sbt > t.acc_tiles:
            out.append(IrViolation("plan", f"sub-block of {plan.sbt} tiles exceeds the accumulator's {t.acc_tiles}"))
    elif isinstance(plan, FoldPlan):
        if plan.sites * plan.rows != tpl.m_tiles or plan.block_w * plan.num_blocks != tpl.k_tiles:
            out.append(IrViolation("plan", f"{plan.sites} sites x {plan.rows} rows and {plan.num_blocks} blocks of "
                                           f"{plan.block_w} do not cover {tpl.m_tiles} rows x {tpl.k_tiles} tiles"))
        if plan.block_w > t.acc_tiles:
            out.append(IrViolation("plan", f"a block of {plan.block_w} tiles exceeds the accumulator's {t.acc_tiles}"))
    elif isinstance(plan, MovePlan):
        if plan.sites * plan.rows != tpl.m_tiles or plan.block_w * plan.num_blocks != tpl.k_tiles:
            out.append(IrViolation("plan", f"{plan.sites} sites x {plan.rows} rows and {plan.num_blocks} blocks of "
                                           f"{plan.block_w} do not cover {tpl.m_tiles} rows x {tpl.k_tiles} tiles"))
    elif isinstance(plan, AttentionPlan):
        if plan.units * plan.group != tpl.m_tiles or plan.q_heads_per_kv % plan.group or not 0 < plan.sites <= plan.units:
            out.append(IrViolation("plan", f"{plan.units} units of {plan.group} heads on {plan.sites} sites do not "
                                           f"cover {tpl.m_tiles} heads in groups of {plan.q_heads_per_kv}"))
        if plan.group * plan.head_tiles > t.acc_tiles:
            out.append(IrViolation("plan", f"a unit's output of {plan.group * plan.head_tiles} tiles exceeds the "
                                           f"accumulator's {t.acc_tiles}"))
        if plan.max_blocks != tpl.k_tiles:
            out.append(IrViolation("plan", f"trip {plan.trip} runs to {plan.max_blocks} blocks, the cache has "
                                           f"{tpl.k_tiles} tile rows"))
    elif isinstance(plan, EltwisePlan):
        if plan.sites * plan.per_site != tpl.m_tiles * tpl.n_tiles or plan.per_site % plan.chunk:
            out.append(IrViolation("plan", "sites x chunks do not cover the output"))
        if plan.chunk > t.acc_tiles:
            out.append(IrViolation("plan", f"chunk of {plan.chunk} tiles exceeds the accumulator's {t.acc_tiles}"))
    return out


def _placed(s: Section, t: Target) -> list[IrViolation]:
    pl = s.placement
    assert pl is not None
    out: list[IrViolation] = []
    for site in pl.sites:
        if not (0 <= site.x < t.mesh[0] and 0 <= site.y < t.mesh[1]):
            out.append(IrViolation(f"site {site}", "outside the mesh"))
    for g in pl.groups:
        dests = g.destinations()
        if not dests or g.sender in dests:
            out.append(IrViolation(f"group from {g.sender}", "a non-loopback multicast has a destination other than its sender"))
        if any(d not in pl.sites for d in dests):
            out.append(IrViolation(f"group from {g.sender}", "writes a site the section does not own"))
    return out


def _sized(s: Section, t: Target) -> list[IrViolation]:
    lay = s.layout
    assert lay is not None
    out: list[IrViolation] = []
    roots = [b for b in lay.buffers if b.alias_of is None]
    for b in lay.buffers:
        if b.offset % t.alignment or b.offset < t.reserved_base or b.offset + b.size > t.local_bytes:
            out.append(IrViolation(f"buffer {b.name}", f"[{b.offset}, {b.offset + b.size}) is not aligned inside "
                                                       f"[{t.reserved_base}, {t.local_bytes})"))
    for i, a in enumerate(roots):
        for b in roots[i + 1:]:
            if a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                out.append(IrViolation(f"buffer {a.name}", f"overlaps buffer {b.name}"))
    return out


def _scheduled(s: Section, t: Target) -> list[IrViolation]:
    assert s.program is not None
    return validate(s.program)


RULES: dict[Phase, Callable[[Section, Target], list[IrViolation]]] = {
    Phase.TEMPLATE: _template,
    Phase.TILED: _tiled,
    Phase.PLACED: _placed,
    Phase.SIZED: _sized,
    Phase.SCHEDULED: _scheduled,
}


def verify_phase(section: Section, target: Target) -> None:
    """Run the rule set of ``section``'s phase; raise ``InvalidProgram`` with every violation."""
    rules = RULES.get(section.phase)
    violations = rules(section, target) if rules else []
    if violations:
        raise InvalidProgram(violations)
