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
from verispatial.passes.programs.common import acc_dtype
from verispatial.passes.size import lay_out, layout_end, matmul_output


def divisors(n: int) -> list[int]:
    """Positive divisors of ``n``, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


def acc_capacity(tpl: SectionTemplate, target: Target) -> int:
    """Accumulator tiles one acquire may hold at the section's accumulator precision (``acc_dtype``)."""
    return target.acc_capacity(acc_dtype(tpl, target))


def sub_block(pm: int, pn: int, acc: int) -> tuple[int, int]:
    """The largest sub-block (h, w) with h | pm, w | pn and h*w <= acc; ties prefer the squarer, then the taller."""
    best = max(((h, w) for h in divisors(pm) for w in divisors(pn) if h * w <= acc),
               key=lambda hw: (hw[0] * hw[1], -abs(hw[0] - hw[1]), hw[0]))
    return best


def _forced_form(value: AccForm | str | None) -> AccForm | None:
    if value is None or isinstance(value, AccForm):
        return value
    try:
        return AccForm(value)
    except ValueError:
        raise ValueError(f"unknown accumulation form {value!r}; known: {', '.join(f.value for f in AccForm)}") from None


@attrs.frozen
class Tile:
    """Choose the work plan. Valid in (phase ``template``), valid out (``tiled``).

    Options: ``max_cols``/``max_rows`` cap the matmul grid (default: the target's mesh); ``max_sites`` caps an
    elementwise op's sites; ``max_block_w`` caps the K block width in tiles (the vendor example uses 2);
    ``acc_form`` forces the matmul's accumulation form (an ``AccForm`` or its value; ``ValueError`` for an unknown
    name); ``max_items`` caps the work items per site (default: no cap; 1 keeps one block per site).

    Work items: a matmul site takes its whole block as one item when some K block width fits local memory; when
    none does, its columns are split into the fewest items (a divisor of its tile columns) whose one-item buffers
    fit, processed one after another in ``persist``'s item loop; refused by name when even one column per item
    does not fit.

    The matmul's form by default, first that applies (``nb`` = K blocks at the widest block width that fits):

    1. ``single`` when all of K is one block (``nb == 1``);
    2. ``registers`` on a target that cannot spill (the site's block is one sub-block, or K is one block);
    3. ``streaming`` when the site's whole block fits one accumulator acquire: nothing is ever spilled, K streams
       in one-tile steps;
    4. ``in_place`` on a target with packer L1 accumulation when the spill and the matmul's output have one tile
       size: the partial lives in the output's own pages (least memory, no reload);
    5. ``pack_accumulate`` on such a target when ``nb >= 3`` (at ``nb == 2`` it is ``spill_reload``);
    6. ``spill_reload`` otherwise.

    A forced form that cannot apply is refused by name: ``streaming``/``registers`` need the site's block in one
    acquire; ``spill_reload``/``in_place``/``pack_accumulate`` need a target that spills and K in at least two
    blocks, the last two packer L1 accumulation, ``in_place`` one tile size for the spill and the matmul's output.
    """

    name: str = "tile"
    max_cols: int | None = None
    max_rows: int | None = None
    max_sites: int | None = None
    max_block_w: int = 2
    acc_form: AccForm | None = attrs.field(default=None, converter=_forced_form)
    max_items: int | None = None

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
                {"name": "tile:covers", "claim": "the sites' blocks (their items side by side) partition the output and "
                                                 "the K blocks partition K"},
                {"name": "tile:fits", "claim": f"the per-site buffers end at byte {end} <= {target.local_bytes}"},
            ],
        }
        return attrs.evolve(section, template=tpl, plan=plan), frag

    def _fits(self, section: Section, tpl: SectionTemplate, plan: Plan, target: Target, what: str) -> None:
        """Refuse unless ``plan``'s per-site buffers end inside local memory; ``what`` names the blocks that need it."""
        end = layout_end(lay_out(tpl, plan, target))
        if end > target.local_bytes:
            refuse(self.name, section, f"{what} need {end - target.reserved_base} B of local memory; target "
                                       f"{target.name} has {target.local_bytes - target.reserved_base} B usable")

    def _in_place_fits(self, tpl: SectionTemplate, target: Target) -> bool:
        """The spill (work dtype) and the matmul's output have one tile size, so they can share pages."""
        wd = work_dtype([b.dtype for b in tpl.buffers])
        return target.bytes_per_tile(wd) == target.bytes_per_tile(tpl.buffers[matmul_output(tpl)].dtype)

    def _default_form(self, tpl: SectionTemplate, target: Target, nb: int, pm: int, pn: int, acc: int) -> AccForm:
        if nb == 1:
            return AccForm.SINGLE
        if not target.acc_spill:
            return AccForm.REGISTERS
        if pm * pn <= acc:
            return AccForm.STREAMING
        if target.packer_l1_acc and self._in_place_fits(tpl, target):
            return AccForm.IN_PLACE
        if target.packer_l1_acc and nb >= 3:
            return AccForm.PACK_ACCUMULATE
        return AccForm.SPILL_RELOAD

    def _check_forced(self, section: Section, tpl: SectionTemplate, target: Target, form: AccForm, kt: int,
                      pm: int, pn: int, acc: int) -> None:
        why = ""
        if form in (AccForm.STREAMING, AccForm.REGISTERS) and pm * pn > acc:
            why = (f"the site's whole {pm}x{pn}-tile block ({pm * pn} tiles) must stay in one accumulator acquire; "
                   f"target {target.name} holds {acc}")
        elif form.spills and not target.acc_spill:
            why = f"target {target.name} cannot spill the accumulator"
        elif form in (AccForm.IN_PLACE, AccForm.PACK_ACCUMULATE) and not target.packer_l1_acc:
            why = f"target {target.name} has no packer L1 accumulation"
        elif form.spills and not any(kt // w >= 2 for w in divisors(kt) if w <= self.max_block_w):
            why = f"K is {kt} tile(s): no K block width <= {self.max_block_w} gives the 2 or more blocks it spills between"
        elif form == AccForm.IN_PLACE and not self._in_place_fits(tpl, target):
            out = tpl.buffers[matmul_output(tpl)]
            why = (f"the partials ({work_dtype([b.dtype for b in tpl.buffers])}) and the matmul's output {out.name} "
                   f"({out.dtype}) differ in tile size, so they cannot share pages")
        if why:
            refuse(self.name, section, f"accumulation form {form.value} cannot apply: {why}")

    def _matmul(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> tuple[MatmulPlan, SectionTemplate]:
        mt, nt, kt = tpl.m_tiles, tpl.n_tiles, tpl.k_tiles
        rows = max(d for d in divisors(mt) if d <= min(target.mesh[1], self.max_rows or target.mesh[1]))
        cols = max(d for d in divisors(nt) if d <= min(target.mesh[0], self.max_cols or target.mesh[0]))
        pm, pn = mt // rows, nt // cols
        forced = self.acc_form
        widths = [w for w in divisors(kt) if w <= self.max_block_w]
        if forced is not None:
            self._check_forced(section, tpl, target, forced, kt, pm, pn, acc)
            if forced == AccForm.SINGLE:
                widths = [kt]
            elif forced == AccForm.STREAMING:
                widths = [1]
            elif forced.spills:
                widths = [w for w in widths if kt // w >= 2]
        elif not target.acc_spill:
            pass  # decided per item below: the block an item keeps in registers is what must fit
        elif kt > self.max_block_w and pm * pn <= acc:
            # The whole block stays in the accumulator: stream K through it one tile at a time.
            widths = [1]
        # One item (the site's whole block) first; when no K block width fits local memory, split the site's
        # columns into more items processed one after another (fewest first), every buffer sized for one item.
        one_item_end = 0
        for items in [d for d in divisors(pn) if self.max_items is None or d <= self.max_items]:
            pni = pn // items
            item_widths = widths
            if forced is None and not target.acc_spill and pm * pni > acc:
                # The accumulator cannot leave the registers: either one sub-block covers the item's whole block and
                # stays resident across the K loop, or all of K is one block and each sub-block packs once.
                item_widths = [kt]
            for w in sorted(item_widths, reverse=True):
                nb = kt // w
                form = forced or self._default_form(tpl, target, nb, pm, pni, acc)
                if forced is not None and items > 1:
                    self._check_forced(section, tpl, target, forced, kt, pm, pni, acc)
                one = form in (AccForm.REGISTERS, AccForm.STREAMING)
                sb = (pm, pni) if one else sub_block(pm, pni, acc)
                if sb[0] * sb[1] > acc:
                    if items < pn:
                        continue
                    refuse(self.name, section, f"per-site block {pm}x{pn} tiles needs {pm * pn} accumulator tiles "
                                               f"held across {nb} K blocks; target {target.name} holds {acc} and "
                                               f"cannot spill")
                plan = MatmulPlan(cols, rows, pm, pni, w, nb, sb[0], sb[1], form, items=items)
                t = tpl
                if form.spills:
                    t = attrs.evolve(tpl, buffers=(*tpl.buffers, TemplateBuffer(len(tpl.buffers), "c_24", work_dtype(
                        [b.dtype for b in tpl.buffers]), BufferRole.INTERM)))
                end = layout_end(lay_out(t, plan, target))
                if items == 1:
                    one_item_end = end
                if end <= target.local_bytes:
                    return plan, t
        split = "" if pn == 1 or self.max_items == 1 else f" (nor as up to {pn} items along N)"
        refuse(self.name, section, f"per-site block {pm}x{pn} tiles on a {cols}x{rows} grid (K {kt} tiles) needs "
                                   f"{one_item_end - target.reserved_base} B of local memory at the smallest K block"
                                   f"{split}; target {target.name} has {target.local_bytes - target.reserved_base} B "
                                   f"usable")

    def _eltwise(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> EltwisePlan:
        total = tpl.m_tiles * tpl.n_tiles
        cap = min(target.mesh[0] * target.mesh[1], self.max_sites or total)
        sites = max(d for d in divisors(total) if d <= cap)
        per = total // sites
        chunk = max(d for d in divisors(per) if d <= acc)
        plan = EltwisePlan(sites, per, chunk)
        self._fits(section, tpl, plan, target, f"chunks of {chunk} tiles")
        return plan

    def _fold(self, section: Section, tpl: SectionTemplate, target: Target, acc: int) -> FoldPlan:
        """Tile rows over sites; each row's K tiles in blocks of at most one accumulator acquire."""
        cap = min(target.mesh[0] * target.mesh[1], self.max_sites or tpl.m_tiles)
        sites = max(d for d in divisors(tpl.m_tiles) if d <= cap)
        bw = max(d for d in divisors(tpl.k_tiles) if d <= acc)
        plan = FoldPlan(sites, tpl.m_tiles // sites, bw, tpl.k_tiles // bw)
        self._fits(section, tpl, plan, target, f"K blocks of {bw} tiles")
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
        self._fits(section, tpl, plan, target, f"units of {group} heads")
        return plan

    def _move(self, section: Section, tpl: SectionTemplate, target: Target) -> MovePlan:
        """Tile rows over sites (a scatter on one site: its rows share one runtime position, and two sites writing
        state tiles at positions read from data could not be shown apart); blocks of up to one accumulator's tiles."""
        cap = 1 if tpl.op_kind == "scatter" else min(target.mesh[0] * target.mesh[1], self.max_sites or tpl.m_tiles)
        sites = max(d for d in divisors(tpl.m_tiles) if d <= cap)
        bw = max(d for d in divisors(tpl.k_tiles) if d <= target.acc_tiles)
        ix = next(t for t in tpl.tensors if t.name == tpl.stages[0].tensor)
        plan = MovePlan(sites, tpl.m_tiles // sites, bw, tpl.k_tiles // bw, ix.tiles(target.tile))
        self._fits(section, tpl, plan, target, f"the index and blocks of {bw} tiles")
        return plan
