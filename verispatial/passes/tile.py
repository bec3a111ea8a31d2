"""``tile``: the work plan — grid, per-site block, K blocks, sub-blocks and the accumulation form — fitted to the
target's accumulator tiles and local memory; refuses with a named reason when no plan fits."""

from __future__ import annotations

import attrs

from verispatial.ir.section import (
    AccForm,
    AttentionPlan,
    BufferRole,
    EltwisePlan,
    FoldPlan,
    MatmulPlan,
    MovePlan,
    Phase,
    Plan,
    Section,
    SectionTemplate,
    TemplateBuffer,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse
from verispatial.passes.lower import work_dtype
from verispatial.passes.size import lay_out, layout_end


def divisors(n: int) -> list[int]:
    """Positive divisors of ``n``, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


def acc_capacity(tpl: SectionTemplate, target: Target) -> int:
    """Accumulator tiles one acquire may hold: fewer when any buffer is 32-bit (fp32 accumulate)."""
    wide = any(target.bytes_per_tile(b.dtype) >= 2 * target.bytes_per_tile("bf16") for b in tpl.buffers
               if b.dtype.startswith("fp"))
    return target.acc_tiles_fp32 if wide else target.acc_tiles


def sub_block(pm: int, pn: int, acc: int) -> tuple[int, int]:
    """The largest sub-block (h, w) with h | pm, w | pn and h*w <= acc; ties prefer the squarer, then the taller."""
    best = max(((h, w) for h in divisors(pm) for w in divisors(pn) if h * w <= acc),
               key=lambda hw: (hw[0] * hw[1], -abs(hw[0] - hw[1]), hw[0]))
    return best


@attrs.frozen
class Tile:
    """Choose the work plan. Valid in (phase ``template``), valid out (``tiled``).

    Options: ``max_cols``/``max_rows`` cap the matmul grid (default: the target's mesh); ``max_sites`` caps an
    elementwise op's sites; ``max_block_w`` caps the K block width in tiles (the vendor example uses 2).
    """

    name: str = "tile"
    max_cols: int | None = None
    max_rows: int | None = None
    max_sites: int | None = None
    max_block_w: int = 2

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.TEMPLATE)
        tpl = section.template
        assert tpl is not None
        acc = acc_capacity(tpl, target)
        plan: Plan
        if tpl.op_kind == "matmul":
            plan, tpl = self._matmul(section, tpl, target, acc)
        elif tpl.op_kind in ("rmsnorm", "softmax"):
            plan = self._fold(section, tpl, target, acc)
        elif tpl.op_kind == "attention":
            plan = self._attention(section, tpl, target, acc)
        elif tpl.op_kind in ("gather", "scatter"):
            plan = self._move(section, tpl, target)
        else:
            plan = self._eltwise(section, tpl, target, acc)
        end = layout_end(lay_out(tpl, plan, target))
        frag: Fragment = {
            "pass": self.name,
            "plan": {"kind": type(plan).__name__, **{k: v for k, v in attrs.asdict(
                plan, value_serializer=lambda _i, _a, v: getattr(v, "value", v)).items() if not (k == "k_trip" and v is None)}},
            "obligations": [
                {"name": "accumulator:capacity", "claim": f"every acquire holds at most {acc} tiles (target {target.name})"},
                {"name": "tile:covers", "claim": "the sites' blocks partition the output and the K blocks partition K"},
                {"name": "tile:fits", "claim": f"the per-site buffers end at byte {end} <= {target.local_bytes}"},
            ],
        }
        return attrs.evolve(section, template=tpl, plan=plan), frag

    def _matmul(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> tuple[MatmulPlan, SectionTemplate]:
        mt, nt, kt = tpl.m_tiles, tpl.n_tiles, tpl.k_tiles
        rows = max(d for d in divisors(mt) if d <= min(target.mesh[1], self.max_rows or target.mesh[1]))
        cols = max(d for d in divisors(nt) if d <= min(target.mesh[0], self.max_cols or target.mesh[0]))
        pm, pn = mt // rows, nt // cols
        widths = [w for w in divisors(kt) if w <= self.max_block_w]
        if not target.acc_spill:
            # The accumulator cannot leave the registers: either one sub-block covers the site's whole block and
            # stays resident across the K loop, or all of K is one block and each sub-block packs once.
            if pm * pn > acc:
                widths = [kt]
        last_end = 0
        for w in sorted(widths, reverse=True):
            nb = kt // w
            if nb == 1:
                form = AccForm.SINGLE
            elif target.acc_spill:
                form = AccForm.SPILL_RELOAD
            else:
                form = AccForm.REGISTERS
            sb = (pm, pn) if form == AccForm.REGISTERS else sub_block(pm, pn, acc)
            if sb[0] * sb[1] > acc:
                refuse(self.name, section, f"per-site block {pm}x{pn} tiles needs {pm * pn} accumulator tiles held "
                                           f"across {nb} K blocks; target {target.name} holds {acc} and cannot spill")
            plan = MatmulPlan(cols, rows, pm, pn, w, nb, sb[0], sb[1], form)
            t = tpl
            if form == AccForm.SPILL_RELOAD:
                t = attrs.evolve(tpl, buffers=(*tpl.buffers, TemplateBuffer(len(tpl.buffers), "c_24", work_dtype(
                    [b.dtype for b in tpl.buffers]), BufferRole.INTERM)))
            last_end = layout_end(lay_out(t, plan, target))
            if last_end <= target.local_bytes:
                return plan, t
        refuse(self.name, section, f"per-site block {pm}x{pn} tiles on a {cols}x{rows} grid (K {kt} tiles) needs "
                                   f"{last_end - target.reserved_base} B of local memory at the smallest K block; "
                                   f"target {target.name} has {target.local_bytes - target.reserved_base} B usable")

    def _eltwise(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> EltwisePlan:
        total = tpl.m_tiles * tpl.n_tiles
        cap = min(target.mesh[0] * target.mesh[1], self.max_sites or total)
        sites = max(d for d in divisors(total) if d <= cap)
        per = total // sites
        chunk = max(d for d in divisors(per) if d <= acc)
        plan = EltwisePlan(sites, per, chunk)
        end = layout_end(lay_out(tpl, plan, target))
        if end > target.local_bytes:
            refuse(self.name, section, f"chunks of {chunk} tiles need {end - target.reserved_base} B of local memory; "
                                       f"target {target.name} has {target.local_bytes - target.reserved_base} B usable")
        return plan

    def _fold(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> FoldPlan:
        """Tile rows over sites; each row's K tiles in blocks of at most one accumulator acquire."""
        cap = min(target.mesh[0] * target.mesh[1], self.max_sites or tpl.m_tiles)
        sites = max(d for d in divisors(tpl.m_tiles) if d <= cap)
        bw = max(d for d in divisors(tpl.k_tiles) if d <= acc)
        plan = FoldPlan(sites, tpl.m_tiles // sites, bw, tpl.k_tiles // bw)
        end = layout_end(lay_out(tpl, plan, target))
        if end > target.local_bytes:
            refuse(self.name, section, f"K blocks of {bw} tiles need {end - target.reserved_base} B of local memory; "
                                       f"target {target.name} has {target.local_bytes - target.reserved_base} B usable")
        return plan

    def _attention(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> AttentionPlan:
        """Units of query heads that share a kv head, as many heads per unit as the accumulator holds the unit's
        running output (``heads x head_tiles`` tiles, one acquire); units spread over at most ``max_sites`` sites,
        consecutive units per site (a site's units run one after another, each its own KV loop: a loop over units
        around the KV loop would nest the runtime trip inside a constant loop)."""
        heads, ht, max_blocks = tpl.m_tiles, tpl.n_tiles, tpl.k_tiles
        kc = next(t for t in tpl.tensors if t.name == tpl.stages[1].tensor)
        row = -(-kc.shape[-1] // target.tile[1])
        kv_heads = row // ht
        per_kv = heads // kv_heads
        if ht > acc:
            refuse(self.name, section, f"one head's running output of {ht} tiles exceeds the accumulator's {acc}")
        group = max(d for d in divisors(per_kv) if d * ht <= acc)
        units = heads // group
        cap = min(target.mesh[0] * target.mesh[1], self.max_sites or units)
        plan = AttentionPlan(min(cap, units), units, group, per_kv, ht, row, max_blocks)
        end = layout_end(lay_out(tpl, plan, target))
        if end > target.local_bytes:
            refuse(self.name, section, f"units of {group} heads need {end - target.reserved_base} B of local memory; "
                                       f"target {target.name} has {target.local_bytes - target.reserved_base} B usable")
        return plan

    def _move(self, section: Section, tpl: SectionTemplate, target: Target) -> MovePlan:
        """Tile rows over sites (a scatter on one site: its rows share one runtime position, and two sites writing
        state tiles at positions read from data could not be shown apart); blocks of up to one accumulator's tiles."""
        cap = 1 if tpl.op_kind == "scatter" else min(target.mesh[0] * target.mesh[1], self.max_sites or tpl.m_tiles)
        sites = max(d for d in divisors(tpl.m_tiles) if d <= cap)
        bw = max(d for d in divisors(tpl.k_tiles) if d <= target.acc_tiles)
        ix = next(t for t in tpl.tensors if t.name == tpl.stages[0].tensor)
        plan = MovePlan(sites, tpl.m_tiles // sites, bw, tpl.k_tiles // bw, ix.tiles(target.tile))
        end = layout_end(lay_out(tpl, plan, target))
        if end > target.local_bytes:
            refuse(self.name, section, f"the index and blocks of {bw} tiles need {end - target.reserved_base} B of local "
                                       f"memory; target {target.name} has {target.local_bytes - target.reserved_base} B usable")
        return plan
