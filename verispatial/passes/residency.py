"""``residency``: where a composed program's tensors live (DESIGN §6, issue 8).

An activation — written by one section and read by a later one — would otherwise make a round trip through device
memory (DRAM) between its producer and its readers. When its bytes fit, it stays RESIDENT in one participating
site's local memory over its live range instead: the sections from the first that accesses it (its producer) to the
last (its last reader). Carried state is placed once for the whole deployment: it is live in every phase. The
engines still move the tensor's tiles with NoC reads and writes (a core's L1 is addressable from every core,
reference §1.3); only where its bytes sit changes, so the ops are untouched and only the memory obligations grow:
``families/memory/encoding.py`` keeps every resident tensor disjoint from every buffer and resident tensor live in the same
phase on its site, inside usable memory, aligned.

The decision, per tensor (carried state first, then activations in order of their live ranges): try the site of
its first writer, then every other participating site in site order; on a site, the lowest aligned offset past the
high-water mark of the buffers of every phase of its live range that no resident tensor placed earlier and live in
a common phase overlaps, if the whole tensor fits below the end of local memory. A tensor that fits nowhere stays
in device memory (the fragment says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from verispatial.ir.core import Role, Site, Space
from verispatial.ir.ops import ReadTiles, WriteTiles
from verispatial.ir.program import Program, Resident, Tensor, walk
from verispatial.ir.target import Target

Fragment = dict[str, Any]


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def live_ranges(p: Program) -> dict[str, tuple[int, int, Site | None]]:
    """Per accessed tensor: (first section, last section) that read or write it, and the site of the first
    section's first writer in site order (None when that section only reads it)."""
    out: dict[str, tuple[int, int, Site | None]] = {}
    writer: dict[tuple[str, int], Site] = {}
    for ep in p.programs:
        for i, top in enumerate(ep.ops):
            k = ep.section_of(i) if ep.section_starts else 0
            for op in walk((top,)):
                if not isinstance(op, (ReadTiles, WriteTiles)):
                    continue
                lo, hi, _ = out.get(op.tensor, (k, k, None))
                out[op.tensor] = (min(lo, k), max(hi, k), None)
                if isinstance(op, WriteTiles):
                    have = writer.get((op.tensor, k))
                    if have is None or (ep.site.y, ep.site.x) < (have.y, have.x):
                        writer[(op.tensor, k)] = ep.site
    return {t: (lo, hi, writer.get((t, lo))) for t, (lo, hi, _) in out.items()}


@attrs.frozen
class Residency:
    """Decide which activations and carried states stay resident in local memory (module docstring). Valid in (a
    scheduled program with a memory map), valid out (the same program with ``resident`` set); refuses nothing — a
    tensor that does not fit stays in device memory. ``max_fraction`` caps the share of a site's usable local memory
    resident tensors may take (1.0: all that the buffers leave)."""

    name: str = "residency"
    max_fraction: float = 1.0

    def run(self, program: Program, target: Target) -> tuple[Program, Fragment]:
        p = program
        phases = p.phase_of_section()
        n = len(p.sections)
        at = {m.buf: m for m in p.memory}
        end: dict[tuple[Site, int], int] = {}
        for b in p.buffers:
            m = at.get(b.id)
            if m is None or b.space != Space.LOCAL or not 0 <= b.section < n:
                continue
            key = (b.site, phases[b.section])
            end[key] = max(end.get(key, target.reserved_base), m.offset + m.size)
        sites = sorted({ep.site for ep in p.programs}, key=lambda s: (s.y, s.x))
        placed, frag = self.decide(p.tensors, phases, end, sites, live_ranges(p), target, p.tensor_bytes)
        return attrs.evolve(p, resident=placed), frag

    def decide(self, tensors: Sequence[Tensor], phases: list[int], end: dict[tuple[Site, int], int],
               sites: list[Site], ranges: dict[str, tuple[int, int, Site | None]], target: Target,
               size_of: Callable[[Tensor], int]) -> tuple[tuple[Resident, ...], Fragment]:
        """The resident tensors and the fragment (module docstring) of a program with ``tensors``, the phase of each
        of its sections (``phases``), the high-water mark of its buffers per (site, phase) (``end``, bytes of local
        memory), its participating ``sites`` in site order, each accessed tensor's live range (``live_ranges``) and
        each tensor's bytes (``size_of``)."""
        n = len(phases)
        top = target.reserved_base + int((target.local_bytes - target.reserved_base) * self.max_fraction)
        cands = [t for t in tensors if t.role in (Role.ACTIVATION, Role.STATE) and t.name in ranges]
        cands.sort(key=lambda t: (t.role != Role.STATE, ranges[t.name][0], ranges[t.name][1], t.name))
        placed: list[Resident] = []
        elsewhere: list[dict[str, Any]] = []
        # Phases never decrease along the sections and grow by at most one at a time, so the phases of sections
        # lo..hi are every phase from phases[lo] to phases[hi]: live sets are ranges, compared by their ends (a set
        # per placed tensor per candidate was quadratic: 47 s of the 80-layer step's compose).
        by_site: dict[Site, list[tuple[int, int, int, int]]] = {}  # (first phase, last phase, offset, end)
        high: dict[tuple[Site, int, int], int] = {}

        def base_of(site: Site, a: int, b: int) -> int:
            key = (site, a, b)
            got = high.get(key)
            if got is None:
                got = high[key] = max(end.get((site, ph), target.reserved_base) for ph in range(a, b + 1))
            return got

        for t in cands:
            lo, hi, first_writer = ranges[t.name]
            if t.role == Role.STATE:
                lo, hi = 0, n - 1
            a, b = phases[lo], phases[hi]
            size = size_of(t)
            order = ([first_writer] if first_writer is not None else []) + [s for s in sites if s != first_writer]
            spot: tuple[Site, int] | None = None
            for site in order:
                base = _align(base_of(site, a, b), target.alignment)
                taken = sorted((off0, end0) for ra, rb, off0, end0 in by_site.get(site, ()) if ra <= b and a <= rb)
                off = base
                for start, stop in taken:
                    if off + size <= start:
                        break
                    off = max(off, _align(stop, target.alignment))
                if off + size <= top:
                    spot = (site, off)
                    break
            if spot is None:
                elsewhere.append({"tensor": t.name, "bytes": size,
                                  "reason": f"{size} bytes fit no participating site's free local memory over "
                                            f"sections {lo}..{hi}"})
                continue
            placed.append(Resident(t.name, spot[0], spot[1], size, lo, hi))
            by_site.setdefault(spot[0], []).append((a, b, spot[1], spot[1] + size))
        frag: Fragment = {
            "pass": self.name,
            "resident": [{"tensor": r.tensor, "site": [r.site.x, r.site.y], "offset": r.offset, "size": r.size,
                          "sections": [r.first_section, r.last_section]} for r in placed],
            "device_memory": elsewhere,
        }
        return tuple(placed), frag
