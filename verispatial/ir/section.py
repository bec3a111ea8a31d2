"""Pre-schedule entities of one section (DESIGN §3, §4): what ``lower``, ``tile``, ``place`` and ``size`` produce
and ``synthesize_handshakes`` consumes.

A ``Section`` holds the op it came from and whatever the passes so far have added; its ``phase`` is derived from
what it holds (Op → Template → Tiled → Placed → Sized → Scheduled), never stored.

Units: ``*_tiles`` and per-site sizes are tiles of the target's tile shape; capacities are pages (one tile per
page here); offsets and sizes are bytes of the site's local memory.
"""

from __future__ import annotations

import enum

import attrs

from verispatial.ir.core import Engine, Site
from verispatial.ir.graph import GraphOp, ModelGraph
from verispatial.ir.program import Program, Tensor


class Phase(str, enum.Enum):
    """How far a section has come through the pipeline."""

    OP = "op"
    TEMPLATE = "template"
    TILED = "tiled"
    PLACED = "placed"
    SIZED = "sized"
    SCHEDULED = "scheduled"


class StageKind(str, enum.Enum):
    """``load`` reads a tensor into a buffer, ``compute`` turns buffers into a buffer, ``store`` writes a tensor."""

    LOAD = "load"
    COMPUTE = "compute"
    STORE = "store"


class Level(str, enum.Enum):
    """The loop a stage's work repeats in: once per item, once per K block, once per output sub-block, or once
    per chunk of an elementwise op's tiles."""

    ONCE = "once"
    K_BLOCK = "k_block"
    SUB_BLOCK = "sub_block"
    CHUNK = "chunk"


class FoldLevel(str, enum.Enum):
    """Where a stage of a fold (a reduction carrying a value across K blocks) runs: once before the K blocks
    (``prologue``: the carry's initial page), once per K block (``body``: the carry's update and its readers), once
    after them (``epilogue``: what reads the final carry), or once per K block of a second pass over the same blocks
    (``apply``: what uses the epilogue's result on every block, e.g. RMSNorm's rescale)."""

    PROLOGUE = "prologue"
    BODY = "body"
    EPILOGUE = "epilogue"
    APPLY = "apply"


class Handshake(str, enum.Enum):
    """How a buffer's producer hands pages to its consumers.

    ``local``: the abstract local hand-off a template states (a circular buffer once scheduled); ``multicast``: a
    semaphore ready/valid pair per multicast group, set by ``place`` where an operand is shared along a row or
    column.
    """

    LOCAL = "local"
    MULTICAST = "multicast"


class BufferRole(str, enum.Enum):
    """What a template buffer holds: an operand block, a per-sub-block operand (a bias row), a chain hand-off, the
    output the writer stores, the accumulator spill (``interm``, added by ``size`` for spilling plans), a fold's
    carry (the running value, re-pushed by its update every K block), or a per-row statistic a fold's body hands on
    (``stat``: one tile per row, e.g. a block's new running max)."""

    OPERAND = "operand"
    SUB_OPERAND = "sub_operand"
    CHAIN = "chain"
    OUTPUT = "output"
    INTERM = "interm"
    CARRY = "carry"
    INDEX = "index"
    STAT = "stat"


@attrs.frozen
class TemplateBuffer:
    """A site-independent buffer of the template; ``id`` is dense."""

    id: int
    name: str
    dtype: str
    role: BufferRole


@attrs.frozen
class Stage:
    """One stage: ``op`` names the work (``read``, ``matmul``, ``bias``, ``silu``, ``add``, ``write``, ...);
    ``ins``/``outs`` are template buffer ids; ``tensor`` is the tensor a load reads or a store writes."""

    id: int
    name: str
    kind: StageKind
    op: str
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    level: Level
    tensor: str | None = None
    fold: FoldLevel | None = None


@attrs.frozen
class Edge:
    """``producer`` stage → ``buffer`` → ``consumers`` stages, with its hand-off kind."""

    buffer: int
    producer: int
    consumers: tuple[int, ...]
    handshake: Handshake = Handshake.LOCAL


@attrs.frozen
class SectionTemplate:
    """A section before tiling: stages, buffers and edges over the whole tensor op.

    ``m_tiles``/``n_tiles``/``k_tiles`` are the op's sizes in tiles (padded up; ``k_tiles`` is 1 for elementwise
    ops, whose iteration space is the ``m_tiles`` x ``n_tiles`` output).
    """

    op_kind: str
    tensors: tuple[Tensor, ...]
    buffers: tuple[TemplateBuffer, ...]
    stages: tuple[Stage, ...]
    edges: tuple[Edge, ...]
    m_tiles: int
    n_tiles: int
    k_tiles: int
    #: A fold's carries: (carry buffer, the stage that updates it once per K block).
    carries: tuple[tuple[int, int], ...] = ()
    #: A matmul's b is stored N x K (``k_tiles`` tiles per stored row) and read transposed.
    transpose_b: bool = False

    def buffer(self, role: BufferRole) -> list[TemplateBuffer]:
        return [b for b in self.buffers if b.role == role]

    def producer(self, buf: int) -> Stage:
        """The stage that fills ``buf``; ``KeyError`` if none."""
        for s in self.stages:
            if buf in s.outs:
                return s
        raise KeyError(buf)


class AccForm(str, enum.Enum):
    """How a matmul accumulates over its K blocks (pages are tiles; a sub-block is ``sbt`` pages).

    - ``single``: one K block; each sub-block packs once.
    - ``streaming``: the site's whole block is one sub-block held in the accumulator while K streams through in
      one-tile steps; one pack at the end, nothing spilled.
    - ``registers``: the same shape on a target whose accumulator never leaves the registers (GPU), over K blocks.
    - ``spill_reload``: every block but the last packs its partial to the intermediate and the next block reloads
      it (first and last block peeled).
    - ``in_place``: the intermediate shares the matmul's output pages page for page; the item's output pages are
      reserved before any partial lands, block 0 packs fresh, the middle blocks accumulate into the pages with the
      packer and drain them so the write pointer returns, the last block packs with accumulate into the output
      itself and pushes it: no reload.
    - ``pack_accumulate``: the packer accumulates the partials into the intermediate (blocks 0..nb-2, every block
      but the last two drained so the write pointer returns to the page being accumulated into); one reload, at
      the last block, which packs to the output.
    """

    SINGLE = "single"
    STREAMING = "streaming"
    SPILL_RELOAD = "spill_reload"
    IN_PLACE = "in_place"
    PACK_ACCUMULATE = "pack_accumulate"
    REGISTERS = "registers"

    @property
    def spills(self) -> bool:
        """The form packs partials to an intermediate buffer (``c_24``)."""
        return self in (AccForm.SPILL_RELOAD, AccForm.IN_PLACE, AccForm.PACK_ACCUMULATE)


@attrs.frozen
class MatmulPlan:
    """The work plan of a matmul: a ``cols`` x ``rows`` grid of sites, each computing ``items`` work items of
    ``per_site_m`` x ``per_site_n`` output tiles one after another (side by side along N: the site's region is
    ``per_site_m`` x ``site_n``), each item in ``sb_h`` x ``sb_w`` sub-blocks over ``num_blocks`` K blocks of
    ``block_w`` tiles. Every buffer is sized for one item and reused by the next; ``persist`` emits the item loop."""

    cols: int
    rows: int
    per_site_m: int
    per_site_n: int
    block_w: int
    num_blocks: int
    sb_h: int
    sb_w: int
    form: AccForm
    #: The trip the K blocks run to (a count read at run time), if any: ``synthesize-handshakes`` refuses it, since
    #: the accumulation forms peel the first and last block.
    k_trip: str | None = None
    items: int = 1

    @property
    def site_n(self) -> int:
        """Output tiles per site along N: all its items side by side."""
        return self.per_site_n * self.items

    @property
    def sbt(self) -> int:
        """Tiles per sub-block (one accumulator acquire)."""
        return self.sb_h * self.sb_w

    @property
    def sub_h(self) -> int:
        """Sub-blocks per site along M."""
        return self.per_site_m // self.sb_h

    @property
    def sub_w(self) -> int:
        """Sub-blocks per site along N."""
        return self.per_site_n // self.sb_w

    @property
    def n0(self) -> int:
        """Tiles of in0 per K block per site."""
        return self.per_site_m * self.block_w

    @property
    def n1(self) -> int:
        """Tiles of in1 per K block per site."""
        return self.per_site_n * self.block_w

    @property
    def out_block(self) -> int:
        """Output tiles per site."""
        return self.per_site_m * self.per_site_n


@attrs.frozen
class EltwisePlan:
    """The work plan of an elementwise op: ``sites`` sites each own ``per_site`` consecutive tiles (row-major over
    the output), processed in chunks of ``chunk`` tiles (one accumulator acquire, one page push of ``chunk`` pages)."""

    sites: int
    per_site: int
    chunk: int

    @property
    def steps(self) -> int:
        """Chunks per site."""
        return self.per_site // self.chunk


@attrs.frozen
class FoldPlan:
    """The work plan of a fold over rows (RMSNorm): ``sites`` sites each own ``rows`` consecutive tile rows; each row
    is ``num_blocks`` K blocks of ``block_w`` tiles (one accumulator acquire per block)."""

    sites: int
    rows: int
    block_w: int
    num_blocks: int


@attrs.frozen
class MovePlan:
    """The work plan of a data movement with an indirect address (gather, scatter): ``sites`` sites each own ``rows``
    consecutive tile rows of the smaller side, moved in ``num_blocks`` blocks of ``block_w`` tiles; ``index_tiles``
    tiles of the index tensor are loaded once per site, first."""

    sites: int
    rows: int
    block_w: int
    num_blocks: int
    index_tiles: int


@attrs.frozen
class AttentionPlan:
    """The work plan of a decode attention: a unit is ``group`` query heads that share one kv head; ``sites`` sites
    own ``units`` units between them, site ``i`` units ``[i*units // sites, (i+1)*units // sites)``, each a fold
    over the KV blocks (a block is one tile row of cache positions, ``head_tiles`` tiles of one kv head) whose count
    is the trip ``trip``, a runtime value in ``[0, max_blocks]``.

    ``q_heads_per_kv`` is the model's grouping (query heads per kv head; ``group`` divides it); ``kv_row_tiles`` the
    tiles of one cache row (all kv heads)."""

    sites: int
    units: int
    group: int
    q_heads_per_kv: int
    head_tiles: int
    kv_row_tiles: int
    max_blocks: int
    trip: str = "kv_blocks"

    def units_of(self, site_index: int) -> range:
        """The units site ``site_index`` runs, in order."""
        return range(site_index * self.units // self.sites, (site_index + 1) * self.units // self.sites)


Plan = MatmulPlan | EltwisePlan | FoldPlan | MovePlan | AttentionPlan


@attrs.frozen
class GroupSpec:
    """A multicast group of operand buffer ``buffer``: ``sender`` writes the rectangle ``rect`` (inclusive,
    non-loopback); ``axis`` is ``row`` (in0) or ``col`` (in1)."""

    buffer: int
    axis: str
    sender: Site
    rect: tuple[int, int, int, int]

    def destinations(self) -> tuple[Site, ...]:
        x0, y0, x1, y1 = self.rect
        return tuple(Site(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1) if Site(x, y) != self.sender)


@attrs.frozen
class Placement:
    """Sites (row-major), the engine of each stage, and the multicast groups."""

    sites: tuple[Site, ...]
    engines: tuple[Engine, ...]
    groups: tuple[GroupSpec, ...]

    def engine_of(self, stage: int) -> Engine:
        return self.engines[stage]


@attrs.frozen
class SizedBuffer:
    """A template buffer as laid out on every site (the layout is identical on all sites, so a multicast lands at
    the sender's address): ``cb`` index, ``capacity`` pages of ``page_tiles`` tiles, byte ``offset`` and ``size``;
    ``alias_of`` is the template buffer whose bytes it shares page for page."""

    buffer: int
    name: str
    cb: int
    capacity: int
    page_tiles: int
    dtype: str
    offset: int
    size: int
    alias_of: int | None = None


@attrs.frozen
class MemoryLayout:
    """The per-site memory map, in declaration order (an alias after its root)."""

    buffers: tuple[SizedBuffer, ...]

    def of(self, buf: int) -> SizedBuffer:
        for b in self.buffers:
            if b.buffer == buf:
                return b
        raise KeyError(buf)


@attrs.frozen
class Section:
    """One section on its way through the pipeline; ``phase`` is derived from what it holds."""

    name: str
    graph: ModelGraph
    op: GraphOp
    template: SectionTemplate | None = None
    plan: Plan | None = None
    placement: Placement | None = None
    layout: MemoryLayout | None = None
    program: Program | None = None

    @property
    def phase(self) -> Phase:
        if self.program is not None:
            return Phase.SCHEDULED
        if self.layout is not None:
            return Phase.SIZED
        if self.placement is not None:
            return Phase.PLACED
        if self.plan is not None:
            return Phase.TILED
        if self.template is not None:
            return Phase.TEMPLATE
        return Phase.OP
