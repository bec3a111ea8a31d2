"""``lower``: a model-graph op → a section template (stages, buffers, edges with the abstract local hand-off)."""

from __future__ import annotations

import math

import attrs

from verispatial.ir.core import Role
from verispatial.ir.graph import GraphOp, GraphTensor, ModelGraph
from verispatial.ir.program import Tensor
from verispatial.ir.section import (
    BufferRole,
    Edge,
    FoldLevel,
    Level,
    Phase,
    Section,
    SectionTemplate,
    Stage,
    StageKind,
    TemplateBuffer,
)
from verispatial.ir.target import Target
from verispatial.passes.base import Fragment, expect_phase, refuse


def work_dtype(dtypes: list[str]) -> str:
    """The dtype partial results and chain hand-offs are kept in: fp32 when any operand is fp32, else bf16."""
    return "fp32" if "fp32" in dtypes else "bf16"


def _program_tensor(t: GraphTensor, written: bool) -> Tensor:
    """The tensor as the section's program declares it.

    A section alone reads what others produce: within its own program a tensor it only reads is an input (or a
    param), one it writes is its output — except a graph ``state`` it writes, which stays a state: its writes are
    ordered after every read of its old value (a scatter's cache, an in-place update ``s = fn(s, x)``). Compose
    re-derives the graph-level roles."""
    if written:
        role = Role.STATE if t.role == Role.STATE else Role.OUTPUT
    else:
        role = Role.PARAM if t.role == Role.PARAM else Role.INPUT
    return Tensor(t.name, t.shape, t.dtype, role)


@attrs.frozen
class Lower:
    """Turn the section's op into its template. Valid in (phase ``op``), valid out (phase ``template``).

    Refuses an op whose dtypes the target lacks.
    """

    name: str = "lower"

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]:
        expect_phase(self.name, section, Phase.OP)
        g, op = section.graph, section.op
        for n in (*op.inputs, op.output, *(s.tensor for s in op.chain if s.tensor)):
            dt = g.tensor(n).dtype
            if dt not in target.tile_bytes:
                refuse(self.name, section, f"tensor {n!r} has dtype {dt!r}, which target {target.name} lacks "
                                           f"(has {sorted(target.tile_bytes)})")
        if op.kind == "attention":
            assert op.heads is not None
            hd = g.tensor(op.inputs[0]).dims2()[1] // op.heads
            if hd % target.tile[1]:
                refuse(self.name, section, f"head_dim {hd} is not a multiple of target {target.name}'s tile width "
                                           f"{target.tile[1]} (a head's tiles would straddle its neighbour's)")
        if op.kind == "matmul":
            tpl = _matmul(g, op, target)
        elif op.kind == "rmsnorm":
            tpl = _rmsnorm(g, op, target)
        elif op.kind == "softmax":
            tpl = _softmax(g, op, target)
        elif op.kind == "attention":
            tpl = _attention(g, op, target)
        elif op.kind in ("gather", "scatter"):
            tpl = _move(g, op, target)
        else:
            tpl = _eltwise(g, op, target)
        if tpl.buffers and work_dtype([b.dtype for b in tpl.buffers]) not in target.tile_bytes:
            refuse(self.name, section, f"target {target.name} lacks the work dtype")
        frag: Fragment = {
            "pass": self.name,
            "op_kind": tpl.op_kind,
            "tiles": {"m": tpl.m_tiles, "n": tpl.n_tiles, "k": tpl.k_tiles},
            "stages": [{"id": s.id, "name": s.name, "kind": s.kind.value, "op": s.op, "level": s.level.value,
                        **({"fold": s.fold.value} if s.fold is not None else {}),
                        "ins": list(s.ins), "outs": list(s.outs)} for s in tpl.stages],
            "buffers": [{"id": b.id, "name": b.name, "dtype": b.dtype, "role": b.role.value} for b in tpl.buffers],
            "carries": [{"buffer": tpl.buffers[b].name, "update": tpl.stages[st].name} for b, st in tpl.carries],
            "edges": [{"buffer": e.buffer, "from": e.producer, "to": list(e.consumers), "handshake": e.handshake.value}
                      for e in tpl.edges],
        }
        return attrs.evolve(section, template=tpl), frag


def _edges(buffers: list[TemplateBuffer], stages: list[Stage]) -> tuple[Edge, ...]:
    out = []
    for b in buffers:
        prod = [s.id for s in stages if b.id in s.outs]
        cons = tuple(s.id for s in stages if b.id in s.ins)
        out.append(Edge(b.id, prod[0], cons))
    return tuple(out)


def _unique(ts: list[Tensor]) -> tuple[Tensor, ...]:
    """Each tensor once (a matmul may read one tensor as both operands), first mention kept."""
    seen: dict[str, Tensor] = {}
    for t in ts:
        seen.setdefault(t.name, t)
    return tuple(seen.values())


def _tiles(n: int, t: int) -> int:
    return math.ceil(n / t)


def _matmul(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    a, b, out = g.tensor(op.inputs[0]), g.tensor(op.inputs[1]), g.tensor(op.output)
    m, k = a.dims2()
    n = b.dims2()[0] if op.transpose_b else b.dims2()[1]  # transpose_b: b is stored N x K
    th, tw = target.tile
    buffers = [TemplateBuffer(0, "c_0", a.dtype, BufferRole.OPERAND), TemplateBuffer(1, "c_1", b.dtype, BufferRole.OPERAND)]
    stages = [
        Stage(0, "read_in0", StageKind.LOAD, "read", (), (0,), Level.K_BLOCK, a.name),
        Stage(1, "read_in1", StageKind.LOAD, "read", (), (1,), Level.K_BLOCK, b.name),
    ]
    tensors = [_program_tensor(a, False), _program_tensor(b, False)]
    bias_buf: int | None = None
    for step in op.chain:
        if step.op == "bias" and step.tensor is not None:
            bt = g.tensor(step.tensor)
            bias_buf = len(buffers)
            buffers.append(TemplateBuffer(bias_buf, "c_2", bt.dtype, BufferRole.SUB_OPERAND))
            stages.append(Stage(len(stages), "read_bias", StageKind.LOAD, "read", (), (bias_buf,), Level.SUB_BLOCK, bt.name))
            tensors.append(_program_tensor(bt, False))
    wd = work_dtype([a.dtype, b.dtype, out.dtype])
    # The matmul packs into the first chain hand-off, each chain step into the next, the last into the output.
    producers = ["matmul", *(s.op for s in op.chain)]
    prev: int | None = None
    for i, what in enumerate(producers):
        last = i == len(producers) - 1
        buf = len(buffers)
        buffers.append(TemplateBuffer(buf, "c_16" if last else f"c_{3 + i}", out.dtype if last else wd,
                                      BufferRole.OUTPUT if last else BufferRole.CHAIN))
        if what == "matmul":
            stages.append(Stage(len(stages), "matmul", StageKind.COMPUTE, "matmul", (0, 1), (buf,), Level.K_BLOCK))
        else:
            assert prev is not None
            ins = (prev, bias_buf) if what == "bias" and bias_buf is not None else (prev,)
            stages.append(Stage(len(stages), what, StageKind.COMPUTE, what, ins, (buf,), Level.SUB_BLOCK))
        prev = buf
    assert prev is not None
    stages.append(Stage(len(stages), "write_out", StageKind.STORE, "write", (prev,), (), Level.SUB_BLOCK, out.name))
    tensors.append(_program_tensor(out, True))
    return SectionTemplate("matmul", _unique(tensors), tuple(buffers), tuple(stages), _edges(buffers, stages),
                           _tiles(m, th), _tiles(n, tw), _tiles(k, tw), transpose_b=op.transpose_b)


def _eltwise(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    """Reader -> compute -> writer over each site's chunks. An in-place state update (the output is also an input)
    reads tile ``t`` of the state's old value and writes tile ``t`` of its new value: the state is declared once, with
    role ``state``, and each tile's write follows the compute that consumed that tile's read."""
    ins = [g.tensor(n) for n in op.inputs]
    out = g.tensor(op.output)
    buffers: list[TemplateBuffer] = []
    stages: list[Stage] = []
    tensors: list[Tensor] = []
    buf_of: dict[str, int] = {}
    for t in ins:
        # An operand named twice (x * x) is loaded once; the compute reads its page twice and pops it once.
        if t.name in buf_of:
            continue
        buf_of[t.name] = len(buffers)
        buffers.append(TemplateBuffer(len(buffers), f"c_{len(buffers)}", t.dtype, BufferRole.OPERAND))
        stages.append(Stage(len(stages), f"read_{t.name}", StageKind.LOAD, "read", (), (buf_of[t.name],), Level.CHUNK, t.name))
        tensors.append(_program_tensor(t, False))
    ob = len(buffers)
    buffers.append(TemplateBuffer(ob, "c_16", out.dtype, BufferRole.OUTPUT))
    assert op.fn is not None
    stages.append(Stage(len(stages), op.fn, StageKind.COMPUTE, op.fn, tuple(buf_of[t.name] for t in ins), (ob,), Level.CHUNK))
    stages.append(Stage(len(stages), "write_out", StageKind.STORE, "write", (ob,), (), Level.CHUNK, out.name))
    # The state an in-place update reads is the one it writes: one declaration, role state.
    tensors = [t for t in tensors if t.name != out.name] + [_program_tensor(out, True)]
    rows, cols = out.dims2()
    return SectionTemplate(op.kind, tuple(tensors), tuple(buffers), tuple(stages), _edges(buffers, stages),
                           _tiles(rows, target.tile[0]), _tiles(cols, target.tile[1]), 1)


def _rmsnorm(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    """RMSNorm as a fold over each tile row's K blocks, then a second pass over the same blocks.

    Prologue: zero the carry (the running sum of squares, fp32). Body, per K block: square the block of ``x``, add
    its row sums into the carry (the carry's update). Epilogue: the reciprocal root mean square of the final carry.
    Apply, per K block: read ``x`` and the weight again and rescale. ``x`` is read twice rather than held, so the
    per-site memory does not grow with the row's width.
    """
    x, w, out = g.tensor(op.inputs[0]), g.tensor(op.inputs[1]), g.tensor(op.output)
    wd = work_dtype([x.dtype, w.dtype, out.dtype])
    B, F = BufferRole, FoldLevel
    buffers = [
        TemplateBuffer(0, "c_0", x.dtype, B.OPERAND),      # x, first pass (body)
        TemplateBuffer(1, "c_1", x.dtype, B.OPERAND),      # x, second pass (apply)
        TemplateBuffer(2, "c_2", w.dtype, B.OPERAND),      # the weight (apply)
        TemplateBuffer(3, "c_3", wd, B.CHAIN),             # x^2 of one block
        TemplateBuffer(4, "c_4", "fp32", B.CARRY),         # the running sum of squares
        TemplateBuffer(5, "c_5", wd, B.CHAIN),             # 1 / rms of the row
        TemplateBuffer(6, "c_16", out.dtype, B.OUTPUT),
    ]
    L = Level
    stages = [
        Stage(0, "read_x", StageKind.LOAD, "read", (), (0,), L.K_BLOCK, x.name, F.BODY),
        Stage(1, "read_x_again", StageKind.LOAD, "read", (), (1,), L.K_BLOCK, x.name, F.APPLY),
        Stage(2, "read_weight", StageKind.LOAD, "read", (), (2,), L.K_BLOCK, w.name, F.APPLY),
        Stage(3, "zero", StageKind.COMPUTE, "zero", (), (4,), L.ONCE, None, F.PROLOGUE),
        Stage(4, "square", StageKind.COMPUTE, "square", (0,), (3,), L.K_BLOCK, None, F.BODY),
        Stage(5, "sum", StageKind.COMPUTE, "reduce_add", (3, 4), (4,), L.K_BLOCK, None, F.BODY),
        Stage(6, "rsqrt", StageKind.COMPUTE, "rsqrt_mean", (4,), (5,), L.ONCE, None, F.EPILOGUE),
        Stage(7, "scale", StageKind.COMPUTE, "mul_bcast_mul", (1, 5, 2), (6,), L.K_BLOCK, None, F.APPLY),
        Stage(8, "write_out", StageKind.STORE, "write", (6,), (), L.K_BLOCK, out.name, F.APPLY),
    ]
    tensors = _unique([_program_tensor(x, False), _program_tensor(w, False), _program_tensor(out, True)])
    rows, cols = out.dims2()
    return SectionTemplate("rmsnorm", tensors, tuple(buffers), tuple(stages), _edges(buffers, stages),
                           _tiles(rows, target.tile[0]), 1, _tiles(cols, target.tile[1]), carries=((4, 5),))


def _softmax(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    """Row softmax as an online fold over each tile row's K blocks, then a second pass over the same blocks.

    Prologue: the running max ``m`` at -inf and the running sum ``l`` at 0 (two fp32 carries, one tile per row).
    Body, per K block ``x_k``: ``m' = max(m, rowmax(x_k))`` (a per-row statistic); ``l = l * exp(m - m') +
    rowsum(exp(x_k - m'))`` (the sum's update, which reads the max the block started with); ``m = m'`` (the max's
    update, after both of its readers). Epilogue: ``1 / l``. Apply, per K block: ``exp(x_k - m) * (1 / l)``.
    """
    x, out = g.tensor(op.inputs[0]), g.tensor(op.output)
    B, F, L = BufferRole, FoldLevel, Level
    buffers = [
        TemplateBuffer(0, "c_0", x.dtype, B.OPERAND),      # x, first pass (body)
        TemplateBuffer(1, "c_1", x.dtype, B.OPERAND),      # x, second pass (apply)
        TemplateBuffer(2, "c_2", "fp32", B.CARRY),         # the running max m
        TemplateBuffer(3, "c_3", "fp32", B.CARRY),         # the running sum l
        TemplateBuffer(4, "c_4", "fp32", B.STAT),          # the block's new max m'
        TemplateBuffer(5, "c_5", "fp32", B.STAT),          # 1 / l of the row
        TemplateBuffer(6, "c_16", out.dtype, B.OUTPUT),
    ]
    stages = [
        Stage(0, "read_x", StageKind.LOAD, "read", (), (0,), L.K_BLOCK, x.name, F.BODY),
        Stage(1, "read_x_again", StageKind.LOAD, "read", (), (1,), L.K_BLOCK, x.name, F.APPLY),
        Stage(2, "init_max", StageKind.COMPUTE, "fill_neg_inf", (), (2,), L.ONCE, None, F.PROLOGUE),
        Stage(3, "init_sum", StageKind.COMPUTE, "zero", (), (3,), L.ONCE, None, F.PROLOGUE),
        Stage(4, "block_max", StageKind.COMPUTE, "row_max", (0, 2), (4,), L.K_BLOCK, None, F.BODY),
        Stage(5, "sum_update", StageKind.COMPUTE, "rescale_add_rowsum_exp", (0, 2, 4, 3), (3,), L.K_BLOCK, None, F.BODY),
        Stage(6, "max_update", StageKind.COMPUTE, "copy", (4, 2), (2,), L.K_BLOCK, None, F.BODY),
        Stage(7, "recip", StageKind.COMPUTE, "recip", (3,), (5,), L.ONCE, None, F.EPILOGUE),
        Stage(8, "normalize", StageKind.COMPUTE, "exp_sub_mul", (1, 2, 5), (6,), L.K_BLOCK, None, F.APPLY),
        Stage(9, "write_out", StageKind.STORE, "write", (6,), (), L.K_BLOCK, out.name, F.APPLY),
    ]
    tensors = _unique([_program_tensor(x, False), _program_tensor(out, True)])
    rows, cols = out.dims2()
    return SectionTemplate("softmax", tensors, tuple(buffers), tuple(stages), _edges(buffers, stages),
                           _tiles(rows, target.tile[0]), 1, _tiles(cols, target.tile[1]), carries=((2, 6), (3, 5)))


#: Template buffers of an attention that hold one KV block of one kv head (``head_tiles`` pages), and those that hold
#: a unit's heads' full rows (q, the running output, the output: ``group x head_tiles`` pages); the others hold one
#: tile per head of the unit (``group`` pages: a block of one tile row gives each head one tile of scores).
ATTENTION_BLOCK, ATTENTION_WIDE = frozenset({1, 2}), frozenset({0, 5, 10})


def attention_pages(tb: int, group: int, head_tiles: int) -> int:
    """Pages (tiles) of template buffer ``tb`` of an attention per unit of ``group`` heads of ``head_tiles`` tiles."""
    if tb in ATTENTION_BLOCK:
        return head_tiles
    return group * head_tiles if tb in ATTENTION_WIDE else group


def _attention(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    """One decode step of flash-decoding attention, per unit of query heads sharing a kv head: a fold over the KV
    blocks (one tile row of cache positions each) whose count is a runtime trip.

    Prologue: load the unit's q; the running max ``m`` at -inf, the running sum ``l`` and output ``o`` at 0 (fp32
    carries). Body, per KV block ``j`` (``K_j``, ``V_j`` loaded): ``s = q K_j^T / sqrt(d)`` (positions past the
    current one masked); ``m' = max(m, rowmax(s))``; ``c = exp(m - m')``; ``p = exp(s - m')``; ``l = l * c +
    rowsum(p)``; ``o = o * c + p V_j``; ``m = m'`` (every reader of ``m`` ranks before its update). Epilogue: ``o /
    l``, written. Each matmul is one block of the fold (K = ``d`` for the scores, the block's positions for ``p V_j``):
    nothing is accumulated across blocks in the accumulator, the carries do that.
    """
    q, kc, vc, out = (g.tensor(n) for n in (*op.inputs, op.output))
    B, F, L = BufferRole, FoldLevel, Level
    wd = "fp32"
    buffers = [
        TemplateBuffer(0, "c_0", q.dtype, B.OPERAND),      # q of the unit's heads
        TemplateBuffer(1, "c_1", kc.dtype, B.OPERAND),     # K_j
        TemplateBuffer(2, "c_2", vc.dtype, B.OPERAND),     # V_j
        TemplateBuffer(3, "c_3", wd, B.CARRY),             # running max m
        TemplateBuffer(4, "c_4", wd, B.CARRY),             # running sum l
        TemplateBuffer(5, "c_5", wd, B.CARRY),             # running output o
        TemplateBuffer(6, "c_6", wd, B.STAT),              # scores s of the block
        TemplateBuffer(7, "c_7", wd, B.STAT),              # the block's new max m'
        TemplateBuffer(8, "c_8", wd, B.STAT),              # the correction exp(m - m')
        TemplateBuffer(9, "c_9", wd, B.STAT),              # probabilities p of the block
        TemplateBuffer(10, "c_16", out.dtype, B.OUTPUT),
    ]
    stages = [
        Stage(0, "read_q", StageKind.LOAD, "read", (), (0,), L.ONCE, q.name, F.PROLOGUE),
        Stage(1, "read_k", StageKind.LOAD, "read", (), (1,), L.K_BLOCK, kc.name, F.BODY),
        Stage(2, "read_v", StageKind.LOAD, "read", (), (2,), L.K_BLOCK, vc.name, F.BODY),
        Stage(3, "init_max", StageKind.COMPUTE, "fill_neg_inf", (), (3,), L.ONCE, None, F.PROLOGUE),
        Stage(4, "init_sum", StageKind.COMPUTE, "zero", (), (4,), L.ONCE, None, F.PROLOGUE),
        Stage(5, "init_out", StageKind.COMPUTE, "zero", (), (5,), L.ONCE, None, F.PROLOGUE),
        Stage(6, "scores", StageKind.COMPUTE, "matmul_bt_scale_mask", (0, 1), (6,), L.K_BLOCK, None, F.BODY),
        Stage(7, "block_max", StageKind.COMPUTE, "row_max", (6, 3), (7,), L.K_BLOCK, None, F.BODY),
        Stage(8, "correction", StageKind.COMPUTE, "exp_sub", (3, 7), (8,), L.K_BLOCK, None, F.BODY),
        Stage(9, "probs", StageKind.COMPUTE, "exp_sub_bcast", (6, 7), (9,), L.K_BLOCK, None, F.BODY),
        Stage(10, "sum_update", StageKind.COMPUTE, "rescale_add_rowsum", (4, 8, 9), (4,), L.K_BLOCK, None, F.BODY),
        Stage(11, "out_update", StageKind.COMPUTE, "rescale_add_matmul", (5, 8, 9, 2), (5,), L.K_BLOCK, None, F.BODY),
        Stage(12, "max_update", StageKind.COMPUTE, "copy", (7, 3), (3,), L.K_BLOCK, None, F.BODY),
        Stage(13, "normalize", StageKind.COMPUTE, "div_bcast", (5, 4), (10,), L.ONCE, None, F.EPILOGUE),
        Stage(14, "write_out", StageKind.STORE, "write", (10,), (), L.ONCE, out.name, F.EPILOGUE),
    ]
    tensors = _unique([_program_tensor(q, False), _program_tensor(kc, False), _program_tensor(vc, False),
                       _program_tensor(out, True)])
    assert op.heads is not None
    _, qcols = q.dims2()
    # m: query heads; n: tiles of one head; k: the cache's tile rows (the most KV blocks).
    return SectionTemplate("attention", tensors, tuple(buffers), tuple(stages), _edges(buffers, stages),
                           op.heads, _tiles(qcols // op.heads, target.tile[1]), _tiles(kc.dims2()[0], target.tile[0]),
                           carries=((3, 12), (4, 10), (5, 11)))


def _move(g: ModelGraph, op: GraphOp, target: Target) -> SectionTemplate:
    """Gather or scatter: the reader loads the index once, then moves blocks from reader to writer; the indirect side
    (the gather's read of the table, the scatter's write of the state) takes its tile row from the index.

    ``m_tiles`` counts the tile rows moved (the smaller side), ``k_tiles`` the tiles of one row."""
    data, ix, out = g.tensor(op.inputs[0]), g.tensor(op.inputs[1]), g.tensor(op.output)
    buffers = [TemplateBuffer(0, "c_0", ix.dtype, BufferRole.INDEX),
               TemplateBuffer(1, "c_16", data.dtype, BufferRole.OUTPUT)]
    stages = [
        Stage(0, "read_index", StageKind.LOAD, "read", (), (0,), Level.ONCE, ix.name),
        Stage(1, f"read_{data.name}", StageKind.LOAD, "gather" if op.kind == "gather" else "read",
              (0,) if op.kind == "gather" else (), (1,), Level.K_BLOCK, data.name),
        Stage(2, f"write_{out.name}", StageKind.STORE, "scatter" if op.kind == "scatter" else "write",
              (1, 0) if op.kind == "scatter" else (1,), (), Level.K_BLOCK, out.name),
    ]
    tensors = _unique([_program_tensor(data, False), _program_tensor(ix, False), _program_tensor(out, True)])
    moved = out if op.kind == "gather" else data
    rows, cols = moved.dims2()
    return SectionTemplate(op.kind, tensors, tuple(buffers), tuple(stages), _edges(buffers, stages),
                           _tiles(rows, target.tile[0]), 1, _tiles(cols, target.tile[1]))
