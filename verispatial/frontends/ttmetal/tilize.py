"""The compute API's tilize and untilize block calls, op by op as the wheel's headers issue them
(tt_metal/hw/inc/api/compute/tilize.h, pack_untilize.h; the LLK calls they make under
tt_metal/hw/ckernels/<arch>/metal/llk_api/).

Each acquires DST itself (``llk_math_wait_for_dest_available`` / ``llk_packer_wait_for_math_done``, what
``tile_regs_acquire`` / ``tile_regs_wait`` are), unpacks from the input buffer's waited front, packs into the output
buffer's reserved back at an explicit tile index (``out_of_order_output``) or column offset, and releases DST
(``llk_*_dest_section_done``); none waits, pops, reserves or pushes a buffer: the kernel does that around the call.
So a call becomes, per DST section, ``AcquireAcc`` / ``Compute`` (its unpacked pages) / ``PackAcc`` / ``ReleaseAcc``,
located at the call. The pack must land where the model's ``PackAcc`` does (``KernelReader.pack_at``). What the
reading cannot place exactly — a count not known statically, a second tile row, part of a row outside a loop over
the row's blocks, DST already held — is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verispatial.frontends.ttmetal import values as V
from verispatial.ir.ops import AcquireAcc, Compute, Operand, PackAcc, ReleaseAcc

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

Handler = Callable[["KernelReader", list[Any], list[Any], list[Any], Any], Any]

#: calls read iteration by iteration; a block of more tiles is refused (the ops grow with it)
BLOCK_LIMIT = 256


def _free_dst(r: KernelReader, name: str, n: Any) -> None:
    if r.acc is not None:
        r.refuse(f"{name} while DST is held", n, "it acquires DST itself (llk_math_wait_for_dest_available)")


def _arg(r: KernelReader, vals: list[Any], nodes: list[Any], i: int, default: int, what: str, n: Any) -> Any:
    """Argument ``i`` (a default when it is left out), a number or a number affine in loop indices."""
    if i >= len(vals):
        return V.const(default)
    v = vals[i]
    if not isinstance(v, V.Sym) or v.trip is not None:
        r.int_of(v, nodes[i], what)  # refuses, naming why
    return v


def _in_pages(r: KernelReader, icb: int, first: Any, tiles: int, name: str, n: Any) -> Operand:
    """The input pages a tilize reads: ``tiles`` tiles of row-major data from the read pointer, after the
    ``first`` tiles its ``input_tile_index`` skips (whole row bands: ``index % block == 0``, as the header's note
    says it must be, llk_unpack_tilize_api.h:114-119)."""
    top = r.max_of(first, n)
    if top % tiles:
        r.refuse(f"{name} input_tile_index not a whole row band", n, f"{r.text(n)}: index {top} of a {tiles}-tile row")
    pt = r.cb_index[icb].page_tiles
    return Operand(icb, -(-(top + tiles) // pt))


def _sections(r: KernelReader, fast: bool, block: int) -> list[int]:
    """The DST sections (tiles each) a tilize of ``block`` tiles packs, in order: ``tilize_block`` one tile per
    section (tilize.h:160-182); ``fast_tilize_block`` on Wormhole the dest-sized sections of tilize.h:371-433 (8
    tiles, 4 with fp32 DEST; the last three sections split evenly), on Blackhole chunks of at most 4 tiles, a 5
    split 2 + 3 (tilize.h:325-369; a block of 1 is ``tilize_block``)."""
    if not fast or (block == 1 and r.host.target.name == "blackhole"):
        return [1] * block
    out: list[int] = []
    if r.host.target.name == "blackhole":
        done = 0
        while done < block:
            left = block - done
            chunk = 4 if left > 5 else 2 if left == 5 else left
            out.append(chunk)
            done += chunk
        return out
    dest = 4 if r.kernel.fp32_dest_acc_en else 8
    left = block
    while left > 0:
        if left > 2 * dest:
            take = dest
        elif left > dest:
            take = left // 2 + (left // 2) % 2
        else:
            take = left
        out.append(take)
        left -= take
    return out


def _tilize(fast: bool) -> Handler:
    name = "fast_tilize_block" if fast else "tilize_block"

    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        """``tilize_block`` / ``fast_tilize_block(icb, block, ocb, input_tile_index = 0, output_tile_index = 0)``:
        ``block`` tiles of row-major data from ``icb``'s front tilized into ``ocb``'s back at ``output_tile_index``
        onwards (out-of-order packs, tilize.h:173, llk_pack_fast_tilize_api.h)."""
        if len(vals) < 3:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "expected at least 3")
        _free_dst(r, name, n)
        icb, ocb = r.cb_of(vals[0], nodes[0]), r.cb_of(vals[2], nodes[2])
        block = r.int_of(vals[1], nodes[1], "tilize block")
        if not 0 < block <= BLOCK_LIMIT:
            r.refuse(f"{name} of {block} tiles", n, f"read for 1 to {BLOCK_LIMIT} tiles")
        first = _arg(r, vals, nodes, 3, 0, "input tile index", n)
        at = _arg(r, vals, nodes, 4, 0, "output tile index", n)
        ins = (_in_pages(r, icb, first, block, name, n),)
        r.pack_at(ocb, block, at, n)
        dtype = "fp32" if r.kernel.fp32_dest_acc_en else "bf16"
        for tiles in _sections(r, fast, block):
            r.emit(AcquireAcc(tiles, dtype), n)
            r.emit(Compute("tilize", tiles, ins), n)
            r.emit(PackAcc(ocb, tiles), n)
            r.emit(ReleaseAcc(), n)

    return h


def _template_int(r: KernelReader, targs: list[Any], i: int, default: int | None, what: str, n: Any) -> int:
    if i >= len(targs):
        if default is None:
            r.refuse(f"{what} not given", n, r.text(n))
        return default
    a = targs[i]
    v = r.template_value(a) if a.type == "type_descriptor" else r.expr(a)
    return r.int_of(v, a, what)


def _pack_untilize_block(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``pack_untilize_block<block_ct_dim = 8, full_ct_dim = block_ct_dim>(icb, block_rt_dim, ocb,
    block_c_index = 0)`` (pack_untilize.h:248-277): per tile row a DST section, the row's ``block_ct_dim`` tiles
    unpacked from ``icb``'s front (``llk_unpack_A(icb, c)``) and packed untilized into ``ocb`` from its write
    pointer at column block ``block_c_index`` of rows ``full_ct_dim`` tiles wide (llk_pack_untilize_api.h:101-106).

    Read for one tile row (the corpus's every call): ``AcquireAcc`` / ``Compute`` / ``PackAcc(ocb, block_ct_dim)``
    / ``ReleaseAcc``, the pack at tile ``block_c_index * block_ct_dim`` of the back. A block narrower than the row
    writes a column slice of every row band, so its pages are filled only once every block of the row is: it is read
    only as the body of a counted loop over exactly the row's blocks (``for (b = 0; b < full / block; ++b)``, the
    untilize helper's wide path, untilize_helpers.inl:246-254), where the model's packs of the blocks, in order,
    fill the row's pages."""
    name = "pack_untilize_block"
    if len(vals) < 3:
        r.refuse(f"call to {name} with {len(vals)} arguments", n, "expected at least 3")
    _free_dst(r, name, n)
    ct = _template_int(r, targs, 0, 8, "pack_untilize_block block_ct_dim", n)
    full = _template_int(r, targs, 1, ct, "pack_untilize_block full_ct_dim", n)
    icb, ocb = r.cb_of(vals[0], nodes[0]), r.cb_of(vals[2], nodes[2])
    rows = r.int_of(vals[1], nodes[1], "untilize block rows")
    if rows != 1:
        # every row unpacks the same tiles c = 0 .. block_ct_dim - 1 from the read pointer (pack_untilize.h:253-260)
        r.refuse(f"{name} of {rows} tile rows", n, "read for one tile row (block_rt_dim 1)")
    b = _arg(r, vals, nodes, 3, 0, "untilize column block", n)
    _untilize_at(r, name, ocb, ct, full, 1, b, n)
    pt = r.cb_index[icb].page_tiles
    dtype = "fp32" if r.kernel.fp32_dest_acc_en else "bf16"
    r.emit(AcquireAcc(ct, dtype), n)
    r.emit(Compute("untilize", ct, (Operand(icb, -(-ct // pt)),)), n)
    r.emit(PackAcc(ocb, ct), n)
    r.emit(ReleaseAcc(), n)


def _untilize_at(r: KernelReader, name: str, ocb: int, ct: int, full: int, rows: int, b: Any, n: Any) -> None:
    """Where an untilizing pack of ``rows`` tile rows of ``ct`` tiles, column block ``b`` of rows ``full`` tiles
    wide, lands in ``ocb``'s back, checked against the model's ``PackAcc`` of ``rows * ct`` tiles
    (``KernelReader.pack_at``): at tile ``b * ct`` from the write pointer. A block narrower than the row writes a
    column slice of each row band and fills its pages only with the row's other blocks: read for one row, as the
    body of a counted loop over exactly the row's blocks (the untilize helper's wide path,
    untilize_helpers.inl:246-254), where the model's packs of the blocks, in order, fill the row's pages."""
    if ct <= 0 or full % ct:
        r.refuse(f"{name} of a block not dividing its row", n, f"block_ct_dim {ct}, full_ct_dim {full}")
    if ct < full:
        lp = r.loops[-1] if r.loops else None
        if rows != 1 or not (lp is not None and b == V.Sym(0, ((lp.var, 1),)) and lp.count == full // ct
                             and lp.body is r.blocks[-1]):
            r.refuse(f"{name} of part of a row outside a loop over the row's blocks", n,
                     f"{r.text(n)}: block {ct} of a {full}-tile row; read for one row as the body of a counted loop "
                     f"over its {full // ct} blocks")
    elif b != V.const(0):
        r.refuse(f"{name} of a whole row at a column block", n, f"{r.text(n)}: block_c_index of a {full}-tile row")
    r.pack_at(ocb, rows * ct, b.scaled(ct), n)


def _pack_untilize_dest(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``pack_untilize_dest<block_ct_dim = 8, full_ct_dim = block_ct_dim, diagonal, narrow_row, row_num_datums,
    tile_dst_ct_offset, dense>(ocb, block_rt_dim = 1, block_c_index = 0, tile_dst_rt_offset = 0)``
    (pack_untilize.h:317-340, llk_pack_untilize_api.h:92-134): the ``block_rt_dim * block_ct_dim`` DST tiles from
    ``tile_dst_ct_offset + tile_dst_rt_offset`` packed untilized into ``ocb`` from its write pointer, a tile row
    after another ``full_ct_dim`` pages apart: a ``PackAcc`` inside the kernel's DST acquire, placed as
    ``_untilize_at`` says. The other layouts (diagonal, narrow rows, partial row widths, dense) are refused."""
    name = "pack_untilize_dest"
    if not vals:
        r.refuse(f"call to {name} with no arguments", n)
    if r.acc is None:
        r.refuse(f"{name} without tile_regs_acquire", n, "it packs what DST holds")
    ct = _template_int(r, targs, 0, 8, "pack_untilize_dest block_ct_dim", n)
    full = _template_int(r, targs, 1, ct, "pack_untilize_dest full_ct_dim", n)
    for i, (what, plain) in enumerate((("diagonal", 0), ("narrow_row", 0), ("row_num_datums", 32)), start=2):
        if i < len(targs) and _template_int(r, targs, i, plain, f"pack_untilize_dest {what}", n) != plain:
            r.refuse(f"{name} with {what}", n, "another layout of the rows")
    ct_offset = _template_int(r, targs, 5, 0, "pack_untilize_dest tile_dst_ct_offset", n)
    if len(targs) > 6 and _template_int(r, targs, 6, 0, "pack_untilize_dest dense", n):
        r.refuse(f"{name} with dense", n, "another layout of the rows")
    ocb = r.cb_of(vals[0], nodes[0])
    rows = r.int_of(_arg(r, vals, nodes, 1, 1, "untilize block rows", n), n, "untilize block rows")
    b = _arg(r, vals, nodes, 2, 0, "untilize column block", n)
    rt_offset = _arg(r, vals, nodes, 3, 0, "DST tile offset", n)
    _untilize_at(r, name, ocb, ct, full, rows, b, n)
    r.dst_use([rt_offset + V.const(ct_offset + rows * ct - 1)], n)
    r.emit(PackAcc(ocb, rows * ct), n)


#: the compute API calls this module reads, by name
FUNCTIONS: dict[str, Handler] = {
    "tilize_block": _tilize(False),
    "fast_tilize_block": _tilize(True),
    "pack_untilize_block": _pack_untilize_block,
    "pack_untilize_dest": _pack_untilize_dest,
}
