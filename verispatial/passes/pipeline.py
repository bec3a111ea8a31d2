"""The pass registry and the pipeline that runs passes with a hook between them (verify-each, timing)."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from verispatial.ir.section import AccForm, MatmulPlan, Section
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, Pass, refuse
from verispatial.passes.compose import Compose
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.persist import Persist
from verispatial.passes.place import Place
from verispatial.passes.residency import Residency
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile
from verispatial.passes.verify import verify_phase

#: Pass name -> pass class (each constructible with its defaults).
PASSES: dict[str, type] = {
    "lower": Lower,
    "tile": Tile,
    "place": Place,
    "size": Size,
    "synthesize-handshakes": SynthesizeHandshakes,
    # After the engine programs exist: the item loop wraps each of them whole (see persist's module docstring).
    "persist": Persist,
}

#: Passes over scheduled programs rather than sections (DESIGN §3: compose(sections) -> residency -> certify): name ->
#: pass class. ``compose`` joins sections (``run(sections, target)``), ``residency`` decides where a composed program's
#: tensors live (``run(program, target)``); compose runs residency itself.
PROGRAM_PASSES: dict[str, type] = {
    "compose": Compose,
    "residency": Residency,
}

#: Called after each pass: (pass, section before, section after, fragment, seconds).
Hook = Callable[[Pass, Section, Section, Fragment, float], None]


def get_pass(name: str) -> Pass:
    """The registered pass called ``name`` with its default options; ``KeyError`` if none."""
    p: Pass = PASSES[name]()
    return p


def default_passes() -> tuple[Pass, ...]:
    """lower → tile → place → size → synthesize-handshakes → persist, with default options."""
    return tuple(get_pass(n) for n in PASSES)


def capped_passes(max_cols: int | None = None, max_rows: int | None = None,
                  max_sites: int | None = None, acc_form: AccForm | str | None = None,
                  one_mover: bool = False) -> tuple[Pass, ...]:
    """The default passes with ``tile`` capped: a matmul grid of at most ``max_cols`` x ``max_rows`` sites, an
    elementwise or fold op on at most ``max_sites`` sites (``None``: the target's mesh). Fewer sites mean fewer
    engine programs for the checker; per-site blocks grow and ``tile`` refuses by name when they no longer fit.
    ``acc_form`` forces every matmul's accumulation form (``Tile.acc_form``; ``ValueError`` for an unknown name);
    ``one_mover`` runs each site's loads and stores on one data-movement engine (``Place.one_mover``)."""
    def make(n: str) -> Pass:
        if n == "tile":
            return Tile(max_cols=max_cols, max_rows=max_rows, max_sites=max_sites, acc_form=acc_form)
        if n == "place":
            return Place(one_mover=one_mover)
        return get_pass(n)

    return tuple(make(n) for n in PASSES)


@attrs.frozen
class Pipeline:
    """Run ``passes`` in order on a section; after each, ``verify`` runs the phase's rule set and every hook
    sees the pass, both sections, the fragment and the pass's wall time. Refusals (``PassRefused``) propagate; a
    scheduled section whose plan has several work items per site and no ``persist`` pass is refused by ``persist``'s
    name (work is never dropped)."""

    passes: tuple[Pass, ...] = attrs.field(factory=default_passes)
    verify: bool = True
    hooks: tuple[Hook, ...] = ()

    def run(self, section: Section, target: Target) -> tuple[Section, list[Fragment]]:
        """The section after every pass and each pass's certificate fragment (with its ``seconds``)."""
        frags: list[Fragment] = []
        for p in self.passes:
            t0 = time.perf_counter()
            after, frag = p.run(section, target)
            dt = time.perf_counter() - t0
            if self.verify:
                verify_phase(after, target)
            frags.append({**frag, "seconds": round(dt, 4)})
            for h in self.hooks:
                h(p, section, after, frag, dt)
            section = after
        plan = section.plan
        if (section.program is not None and isinstance(plan, MatmulPlan) and plan.items > 1
                and not any(f["pass"] == "persist" for f in frags)):
            # synthesize-handshakes emits one item's programs; without the item loop the rest would be dropped.
            refuse("persist", section, f"the plan gives each site {plan.items} work items but the pipeline has no "
                                       f"persist pass: the programs would compute the first item only")
        return section, frags

