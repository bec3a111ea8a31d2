"""``size``: the memory map — every buffer's circular-buffer index, capacity, byte offset and size, identical on
every site (so a multicast lands at the sender's own address: reference §2.6 item 3), aligned, and inside the usable
local memory ``[reserved_base, local_bytes)``."""

from __future__ import annotations

import attrs

from verispatial.ir.section import (
    AccForm,
    AttentionPlan,
    BufferRole,
    EltwisePlan,
    FoldLevel,
    FoldPlan,
    MatmulPlan,
    MemoryLayout,
    MovePlan,
    Phase,
    Plan,
    Section,
    SectionTemplate,
    SizedBuffer,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse
from verispatial.passes.lower import attention_pages

#: Circular-buffer index of the output (c_16) and of the accumulator spill (c_24), as the vendor's matmul.
OUT_CB, INTERM_CB = 16, 24


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def capacities(tpl: SectionTemplate, plan: Plan, target: Target) -> dict[int, int]:
    """Pages of each template buffer under ``plan`` (one tile per page).

    Operand blocks and hand-offs are double-buffered (two K blocks, two sub-blocks, two chunks); the spill holds a
    site's whole block, and so does the matmul's output when the spill shares its bytes (``in_place``).
    """
    caps: dict[int, int] = {}
    alias = aliased_output(tpl, plan, target)
    shared = matmul_output(tpl) if alias is not None else None
    for b in tpl.buffers:
        if isinstance(plan, EltwisePlan):
            caps[b.id] = 2 * plan.chunk
        elif isinstance(plan, MovePlan):
            # The index is loaded once and held while every block moves; blocks are double-buffered.
            caps[b.id] = plan.index_tiles if b.role == BufferRole.INDEX else 2 * plan.block_w
        elif isinstance(plan, FoldPlan):
            # Blocks are double-buffered, and so is a body's per-row statistic (one tile); the carry holds the page
            # a block started with and the one its update pushes; a page made once per row (the epilogue's 1/rms) is
            # one tile, read by every block after it.
            once = tpl.producer(b.id).fold in (FoldLevel.PROLOGUE, FoldLevel.EPILOGUE)
            caps[b.id] = 2 if b.role in (BufferRole.CARRY, BufferRole.STAT) else (1 if once else 2 * plan.block_w)
        elif isinstance(plan, AttentionPlan):
            # A unit's q and output are made once and held (one unit's pages); a carry holds the page a block
            # started with and its update's; KV blocks and the body's statistics are double-buffered.
            pages = attention_pages(b.id, plan.group, plan.head_tiles)
            once = b.role != BufferRole.CARRY and tpl.producer(b.id).fold in (FoldLevel.PROLOGUE, FoldLevel.EPILOGUE)
            caps[b.id] = pages if once else 2 * pages
        elif b.role == BufferRole.OPERAND:
            caps[b.id] = 2 * (plan.n0 if b.id == 0 else plan.n1)
        elif b.role == BufferRole.SUB_OPERAND:
            caps[b.id] = 2 * plan.sb_w
        elif b.role == BufferRole.INTERM or b.id == shared:
            caps[b.id] = plan.out_block
        else:
            caps[b.id] = 2 * plan.sbt
    return caps


def matmul_output(tpl: SectionTemplate) -> int:
    """The buffer the matmul stage packs into: the output, or the first chain hand-off when a chain follows."""
    return next(s.outs[0] for s in tpl.stages if s.op == "matmul")


def aliased_output(tpl: SectionTemplate, plan: Plan, target: Target) -> int | None:
    """The spill buffer that shares its bytes page for page with the matmul's output (``matmul_output``): under
    the ``in_place`` form, whose ``tile`` checked that the two have one tile size. ``None`` otherwise."""
    if not isinstance(plan, MatmulPlan) or plan.form != AccForm.IN_PLACE:
        return None
    interm = tpl.buffer(BufferRole.INTERM)
    out = tpl.buffers[matmul_output(tpl)]
    if interm and target.bytes_per_tile(interm[0].dtype) == target.bytes_per_tile(out.dtype):
        return interm[0].id
    return None


def lay_out(tpl: SectionTemplate, plan: Plan, target: Target) -> MemoryLayout:
    """The per-site memory map of ``tpl`` under ``plan``: offsets from ``reserved_base`` in declaration order
    (the spill before the output), each aligned; of two buffers sharing bytes the later one in that order is the
    alias, at its root's offset. Does not check the end."""
    caps = capacities(tpl, plan, target)
    interm = aliased_output(tpl, plan, target)
    pair = {interm, matmul_output(tpl)} if interm is not None else set()
    order = [b for b in tpl.buffers if b.role not in (BufferRole.OUTPUT, BufferRole.INTERM)]
    order += tpl.buffer(BufferRole.INTERM) + tpl.buffer(BufferRole.OUTPUT)
    cb_next = 0
    nxt = target.reserved_base
    offset: dict[int, int] = {}
    out: list[SizedBuffer] = []
    for b in order:
        size = caps[b.id] * target.bytes_per_tile(b.dtype)
        if b.role == BufferRole.OUTPUT:
            cb = OUT_CB
        elif b.role == BufferRole.INTERM:
            cb = INTERM_CB
        else:
            cb, cb_next = cb_next, cb_next + 1
        root = next((r for r in pair if r != b.id and r in offset), None) if b.id in pair else None
        if root is not None:
            offset[b.id] = offset[root]
        else:
            offset[b.id] = _align(nxt, target.alignment)
            nxt = offset[b.id] + size
        out.append(SizedBuffer(b.id, b.name, cb, caps[b.id], 1, b.dtype, offset[b.id], size, root))
    return MemoryLayout(tuple(out))


def layout_end(layout: MemoryLayout) -> int:
    """One past the last byte the layout uses."""
    return max((b.offset + b.size for b in layout.buffers), default=0)


@attrs.frozen
class Size:
    """Lay out every buffer. Valid in (phase ``placed``), valid out (``sized``).

    Refuses a layout that does not end inside the target's local memory or needs more circular-buffer indices
    than the target has.
    """

    name: str = "size"

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.PLACED)
        assert section.template is not None
        assert section.plan is not None
        layout = lay_out(section.template, section.plan, target)
        end = layout_end(layout)
        if end > target.local_bytes:
            refuse(self.name, section, f"buffers end at byte {end}, past the {target.local_bytes} B of local memory "
                                       f"(usable from {target.reserved_base})")
        if any(b.cb >= target.max_cbs for b in layout.buffers):
            refuse(self.name, section, f"needs circular-buffer index {max(b.cb for b in layout.buffers)}; "
                                       f"target {target.name} has {target.max_cbs}")
        frag: Fragment = {
            "pass": self.name,
            "usable": [target.reserved_base, target.local_bytes],
            "alignment": target.alignment,
            "memory": [{"buffer": b.name, "cb": b.cb, "capacity": b.capacity, "dtype": b.dtype, "offset": b.offset,
                        "size": b.size, "alias_of": b.alias_of} for b in layout.buffers],
            "obligations": [
                {"name": "memory:inside", "claim": f"every buffer lies in [{target.reserved_base}, {target.local_bytes})"},
                {"name": "memory:aligned", "claim": f"every offset is a multiple of {target.alignment}"},
                {"name": "memory:disjoint", "claim": "buffers not declared aliases occupy disjoint bytes on every site"},
            ],
        }
        return attrs.evolve(section, layout=layout), frag
