"""The device API, call by call: which op each classic free function (tt_metal/hw/inc/api/dataflow/dataflow_api.h,
api/compute/cb_api.h, reg_api.h, pack.h) and each Metal 2.0 object method (api/dataflow/dataflow_buffer.h, noc.h,
api/semaphore.h) becomes (docs/ttmetal.md has the table). A call whose arguments cannot be followed to what the op
needs is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from verispatial.frontends.ttmetal import enums, intrinsics, nocopts, nocstate, objects, signatures, tilize
from verispatial.frontends.ttmetal import values as V
from verispatial.frontends.ttmetal.cpp import TYPE_SIZES
from verispatial.frontends.ttmetal.host import DATA_FORMATS
from verispatial.frontends.ttmetal.refusals import Refused, ScratchHint
from verispatial.ir.core import Engine, Term, WaitCond
from verispatial.ir.ops import (
    NOC_VCS,
    AcquireAcc,
    AtomicBarrier,
    Compute,
    Flush,
    InlineWrite,
    McastSend,
    McastSetValid,
    Operand,
    PackAcc,
    Part,
    Pop,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    RemoteRead,
    Reserve,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Wait,
    WriteBarrier,
    WriteTiles,
)

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

Handler = Callable[["KernelReader", list[Any], list[Any], list[Any], Any], Any]


def _why(r: KernelReader, node: Any, v: Any) -> str:
    """``node``'s text and why its value ``v`` is not followed."""
    return f"{r.text(node)}: {v.why}" if isinstance(v, V.Opaque) else f"{r.text(node)} is {V.kind(v)}"


def _where(r: KernelReader, node: Any, v: Any) -> str:
    """``node``'s text and, for an address not followed, what it came from."""
    return f"{r.text(node)}: {v.why}" if isinstance(v, V.Opaque) else r.text(node)


def _need(r: KernelReader, vals: list[Any], k: int, n: Any, name: str) -> None:
    if len(vals) < k:
        r.refuse(f"call to {name} with {len(vals)} arguments", n, f"expected at least {k}")


# ------------------------------------------------------------------ circular buffers


def _cb_op(cls: type, name: str) -> Handler:
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 2, n, name)
        r.emit(cls(r.cb_of(vals[0], nodes[0]), r.int_of(vals[1], nodes[1], "page count")), n)

    return h


def _ptr(front: bool) -> Handler:
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 1, n, "get_read_ptr" if front else "get_write_ptr")
        return r.pointer(r.cb_of(vals[0], nodes[0]), front, n)

    return h


def _use(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``use<CircularBuffer::AddrSelector::WRITE_PTR>(cb)`` (``READ_PTR``): the buffer as a NoC source at its write
    (read) pointer, the object API of ttnn 0.72.0 (``reduction/argmax/.../reader_argmax_interleaved_multicore.cpp:
    453, 485``; ``normalization/layernorm/.../layernorm_dataflow_utils.h:250``): that pointer, as ``get_write_ptr``
    (``get_read_ptr``) gives it. Another selector is refused by name."""
    _need(r, vals, 1, n, "use")
    sel = "".join(r.text(t) for t in targs)
    if not sel.endswith(("AddrSelector::WRITE_PTR", "AddrSelector::READ_PTR")):
        r.refuse("use of a selector not followed", n, r.text(n))
    return r.pointer(r.cb_of(vals[0], nodes[0]), sel.endswith("READ_PTR"), n)


def _tile_size(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_tile_size")
    return V.const(r.cb_index[r.cb_of(vals[0], nodes[0])].entry_size)


def data_format(r: KernelReader, cb: int) -> Any:
    """Buffer ``cb``'s ``DataFormat`` enumerator, as the host configured it (``CircularBufferConfig``'s format)."""
    dtype = r.cb_index[cb].dtype
    name = next((k for k, v in DATA_FORMATS.items() if v == dtype), None)
    return V.EnumConst(f"DataFormat::{name}") if name is not None else V.Opaque(f"the data format of c_{cb}")


def _dataformat(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_dataformat")
    return data_format(r, r.cb_of(vals[0], nodes[0]))


def _cb_interface(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_local_cb_interface")
    return V.CbInterface(r.cb_of(vals[0], nodes[0]))


# ------------------------------------------------------------------ arguments


def _arg_val(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_arg_val")
    words = " ".join(targs[0].text.decode().split()).replace("std::", "").split() if targs else []
    size = TYPE_SIZES.get(words[-1]) if words and all(w in ("const", "volatile") for w in words[:-1]) else None
    if size is not None and size != 4:
        # api/dataflow/dataflow_api.h:150: static_assert(sizeof(T) == 4) -- GCC stops (it was read as the whole word)
        r.refuse("get_arg_val of a type not 4 bytes wide", n,
                 f"{r.text(targs[0])}: api/dataflow/dataflow_api.h:150 static_asserts sizeof(T) == 4")
    if r.survey:
        return r.runtime_arg("", n)
    i = r.int_of(vals[0], nodes[0], "runtime arg index")
    if not 0 <= i < len(r.kernel.runtime_args):
        r.refuse("runtime arg the host does not declare", n,
                 f"index {i}; kernel {r.kernel.name} declares {len(r.kernel.runtime_args)}")
    return r.runtime_arg(r.kernel.runtime_args[i], n)


def _vararg(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``get_vararg(i)`` (Metal 2.0, experimental/kernel_args.h, not in the wheel): the ``i``-th positional runtime
    arg, which follows the kernel's named ones ("Native get_vararg accounts for the final named-RTA section",
    kernel_lib/mcast/kernel/mcast_args_metal2.hpp:16) -- the host's ``num_runtime_varargs`` values of this core
    (reshard_program_factory_generic.cpp:798, 856-860), never a named arg by position. Refused: an index not known
    statically, one past the kernel's ``varargs``, a core its work unit gives none."""
    _need(r, vals, 1, n, "get_vararg")
    if r.survey:
        return r.runtime_arg("", n)
    i = r.int_of(vals[0], nodes[0], "vararg index")
    if not 0 <= i < r.kernel.varargs:
        r.refuse("vararg the host does not declare", n, f"index {i}; kernel {r.kernel.name} declares "
                                                        f"{r.kernel.varargs} varargs")
    given = r.host.varargs_of(r.kernel.name, r.site)
    if given is None:
        r.refuse("vararg the host gives no value", n, f"index {i} on core {r.site}; {r.host_field(f'varargs.{r.kernel.name}')}")
    return r.host_value(given[i])


def _common_arg(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    if r.survey:
        return r.runtime_arg("", n)
    r.refuse("common runtime arg", n, "not in the host description format yet")


def _get_arg(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_arg")
    return vals[0]  # args::NAME already read the value


def _ct_arg(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_compile_time_arg_val")
    if r.survey:
        return r.runtime_arg("", n)
    i = r.int_of(vals[0], nodes[0], "compile-time arg index")
    if not 0 <= i < len(r.kernel.compile_time_args):
        r.refuse("compile-time arg the host does not give", n,
                 f"index {i}; kernel {r.kernel.name} has {len(r.kernel.compile_time_args)}")
    return r.host_value(r.kernel.compile_time_args[i])


def _ct_arg_t(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``get_ct_arg<Idx>()`` (api/compile_time_args.h:26-29; ``get_compile_time_arg_val(i)`` is defined as it, :64):
    compile-time arg ``Idx``, as ``get_compile_time_arg_val``."""
    if len(targs) != 1 or vals:
        r.refuse("get_ct_arg without its one template argument", n, r.text(n))
    return _ct_arg(r, [_template_number(r, targs[0], "compile-time arg index", n)], targs, [], n)


def _named_ct_arg(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 1, n, "get_named_compile_time_arg_val")
    name = vals[0]
    if r.survey:
        return r.runtime_arg("", n)
    if not isinstance(name, str) or name not in r.kernel.named_compile_time_args:
        r.refuse("compile-time arg the host does not give", n, str(name))
    return r.host_value(r.kernel.named_compile_time_args[name])


def _accessor_args(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    if not targs:
        return V.AccessorArgs()
    # TensorAccessorArgs<CTA_OFFSET, ...>(): where its compile-time args start (tensor_accessor_args.h:20)
    a = targs[0]
    cta = enums.number(r, r.expr(a) if a.type != "type_descriptor" else r.template_value(a))
    return V.AccessorArgs(cta if isinstance(cta, (V.Sym, V.Opaque)) else V.Opaque(
        f"the offset {r.text(a)} of TensorAccessorArgs is not a number"))


def _accessor(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    return r.accessor(vals, n)


# ------------------------------------------------------------------ addresses


def _semaphore_addr(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    if targs and not vals:  # get_semaphore<ProgrammableCoreType::TENSIX>(id) has the id as an argument too
        r.refuse("get_semaphore without an id", n)
    _need(r, vals, 1, n, "get_semaphore")
    return r.semaphore(vals[0], nodes[0])


def _no_page_offset(r: KernelReader, v: Any, node: Any, n: Any) -> None:
    """An offset into a tensor page where the transfer moves a whole page from it (``noc_async_read_tile(page, s,
    l1, offset)`` / ``noc_async_read_page``: ``page_size`` bytes from ``offset``, dataflow_api.h:1241-1264): only 0
    is read; a whole page from inside a page reaches into the next one."""
    if not (isinstance(v, V.Sym) and v == V.const(0)):
        r.refuse("transfer at an offset into a tensor page", n, f"{r.text(n)}: offset {r.text(node)}, a whole page "
                 "from it reaches into the next page")


def _page_offset(r: KernelReader, v: Any, node: Any, n: Any) -> V.Sym:
    """The bytes into a tensor page an address names (``get_noc_addr(page, s, offset)``, ``TensorAccessor::
    get_noc_addr(page_id, offset)``, tensor_accessor.h:155; ``noc_async_write_page(..., size, offset)``,
    dataflow_api.h:1416-1422): a number, or one affine in the enclosing loops' indices (``Part.offset`` and
    ``Part.terms``: a row's chunks one after another), which a transfer of part of the page takes. One that comes
    from a runtime range or data is refused by name."""
    if isinstance(v, V.Sym) and v.trip is not None:
        r.refuse("tensor page offset not a number", n, f"{r.text(n)}: offset {r.text(node)}, a runtime value in a "
                 f"range ({v.trip[0]})")
    if not isinstance(v, V.Sym):
        r.refuse("tensor page offset not a number", n, f"{r.text(n)}: offset {r.text(node)}: {_why(r, node, v)}")
    assert isinstance(v, V.Sym)
    return v


def _noc_addr(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    # the overload read, told apart by the second argument's type, takes its own argument counts
    signatures.check_form(r, "id, addrgen[, offset[, noc[, resolver]]]" if len(vals) >= 2 and isinstance(
        vals[1], V.Accessor) else "x, y, addr[, noc]" if len(vals) >= 3 else "addr[, noc]", nodes, n)
    if len(vals) >= 2 and isinstance(vals[1], V.Accessor):  # get_noc_addr(page, accessor[, offset[, noc]])
        page = vals[0]
        if not isinstance(page, V.Sym):
            r.refuse("tensor page not known statically", n, _why(r, nodes[0], page))
        off = _page_offset(r, vals[2], nodes[2], n) if len(vals) >= 3 else V.const(0)
        return V.TensorPage(vals[1].tensor, page, off)
    if len(vals) >= 3:  # get_noc_addr(x, y, addr[, noc])
        return V.RemoteAddr(r.site_of(vals[0], vals[1], n), vals[2])
    return V.RemoteAddr(r.site, vals[0])  # check_form refused a call of no argument


def _mcast_addr(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 5, n, "get_noc_multicast_addr")
    xs = [r.int_of(v, nd, "multicast rectangle corner") for v, nd in zip(vals[:4], nodes[:4], strict=True)]
    return V.McastAddr((xs[0], xs[1], xs[2], xs[3]), vals[4])


# ------------------------------------------------------------------ transfers


def _page_read(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """noc_async_read_tile / _page(page, accessor, l1_addr[, offset[, noc]]) (dataflow_api.h:1241-1358)"""
    _need(r, vals, 3, n, "noc_async_read_tile")
    _own_noc_arg(r, vals, nodes, 4, n)  # (id, addrgen, l1, offset, noc): dataflow_api.h:1241-1246, :1278-1283
    page, acc, dst = vals[0], vals[1], vals[2]
    if not isinstance(acc, V.Accessor):
        r.refuse("read through an accessor not over a host tensor", n, r.text(nodes[1]))
    if not isinstance(page, V.Sym):
        r.refuse("tensor page not known statically", n, _why(r, nodes[0], page))
    if len(vals) > 3:
        _no_page_offset(r, vals[3], nodes[3], n)
    read_into(r, V.TensorPage(acc.tensor, page), dst, None, n)


def _page_write(tile: bool) -> Handler:
    """noc_async_write_tile(page, accessor, l1_addr[, noc]) and noc_async_write_page(page, accessor, l1_addr[, size[,
    offset[, noc]]]) (dataflow_api.h:1416-1422, 1503-1547): a page's ``size`` of 0 is the whole page; any other size
    is the transfer's, from ``offset`` bytes into the page (part of a page: ``write_from``)."""

    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        name = "noc_async_write_tile" if tile else "noc_async_write_page"
        _need(r, vals, 3, n, name)
        _own_noc_arg(r, vals, nodes, 3 if tile else 5, n)  # dataflow_api.h:1503-1504, :1416-1422
        # noc_async_write_page<AddrGen, enable_noc_tracing, posted> (:1415); the one-argument forms are <bool DRAM>
        if not tile and nocopts.flag(r, targs, 2, f"{name} posted flag", n):
            r.refuse(f"posted {name}", n, r.text(n))
        page, acc, src = vals[0], vals[1], vals[2]
        if not isinstance(acc, V.Accessor):
            r.refuse("write through an accessor not over a host tensor", n, r.text(nodes[1]))
        if not isinstance(page, V.Sym):
            r.refuse("tensor page not known statically", n, _why(r, nodes[0], page))
        size = None
        if not tile and len(vals) > 3 and not (isinstance(vals[3], V.Sym) and vals[3] == V.const(0)):
            size = vals[3]
        off = _page_offset(r, vals[4], nodes[4], n) if not tile and len(vals) > 4 else V.const(0)
        write_from(r, src, V.TensorPage(acc.tensor, page, off), size, n)

    return h


def _read_destination(r: KernelReader, dst: Any, n: Any) -> V.L1Ptr:
    """Where a NoC read lands: a buffer (its write pointer) or an L1 pointer into a buffer's back. Refused by name:
    L1 that is not a buffer's pages, a buffer's front (waited) pages."""
    if isinstance(dst, V.Cb):
        dst = r.pointer(dst.index, False, n)
    if not isinstance(dst, V.L1Ptr):
        r.refuse("read into L1 not a buffer's pages", n, _where(r, n, dst))
    if dst.front:
        r.refuse("read into a buffer's front pages", n, r.text(n))
    return dst


def read_into(r: KernelReader, src: Any, dst: Any, size: Any, n: Any) -> None:
    """A NoC read of ``size`` bytes (None: one page) from ``src`` into L1 ``dst``: a ``ReadTiles``, whose tiles the
    model lands one after another from the write pointer (families/cb/semantics.py ``fill``), so ``dst`` must be
    the write pointer plus the tiles this engine already read into the back since it last moved
    (``KernelReader.l1_check``: a forgotten advance, a doubled offset or a stale pointer is refused)."""
    r.noc_reprogrammed(nocstate.READ, n)  # also a read that is part of a constant page and issues no op
    if isinstance(src, V.RemoteAddr) and isinstance(src.target, V.ZerosRegion):
        if isinstance(dst, V.Cb):
            dst = r.pointer(dst.index, False, n)
        if not isinstance(dst, V.L1Ptr):
            r.refuse("zeros-region read into L1 not a buffer's pages", n, _where(r, n, dst))
        r.zeros_read(dst, r.cb_index[dst.cb].entry_size if size is None else r.int_of(size, n, "transfer size"), n)
        return
    if isinstance(src, V.RemoteAddr):
        remote_read(r, src, dst, size, n)
        return
    if not isinstance(src, V.TensorPage):
        r.refuse("read from an address not a tensor page", n, r.text(n))
    if isinstance(dst, V.Cb) and dst.index in r.scratch_cbs:
        dst = r.pointer(dst.index, False, n)
    if isinstance(dst, V.L1Ptr) and dst.cb in r.scratch_cbs:
        tiles = r.cb_index[dst.cb].page_tiles if size is None else r.tiles_bytes(dst.cb, size, n)
        _scratch_bytes(r, dst, tiles, n)
        r.emit(ReadTiles(src.tensor, r.addr_of(src.page, n), tiles, dst.cb), n)
        return
    dst = _read_destination(r, dst, n)
    part = _part_size(r, dst.cb, src, size, n)
    if part is not None:
        at = r.part_at(dst, False, part, "read into L1 not inside the buffer's next unfilled tile", n)
        r.emit(ReadTiles(src.tensor, r.addr_of(src.page, n), 1, dst.cb, _part(src, part, at)), n)
        return
    tiles = r.cb_index[dst.cb].page_tiles if size is None else r.tiles_bytes(dst.cb, size, n)
    try:
        r.l1_check(dst, False, True, tiles, "read into L1 not at the buffer's next unfilled tile", n)
    except Refused as e:
        # no circular-buffer op named the buffer yet: it may be scratch L1 (``lower.read_scratch`` reads again)
        if dst.cb not in r.ringed and r.kernel.engine != Engine.COMPUTE and not r.trial:
            raise ScratchHint(dst.cb, e) from None
        raise
    r.emit(ReadTiles(src.tensor, r.addr_of(src.page, n), tiles, dst.cb), n)


def _part_size(r: KernelReader, cb: int, page: V.TensorPage, size: Any, n: Any) -> int | None:
    """The bytes a transfer between tensor page ``page`` and buffer ``cb`` moves when it is part of a page (a
    ``Part``: an offset into the page, or a size not a whole number of ``cb``'s pages), else None (whole pages).
    A whole page from an offset (``size`` None) reaches into the next page and is refused; in the survey, whose entry
    sizes are made up, a transfer at offset 0 is whole pages."""
    off = page.offset.const
    if size is None:
        if off or not page.offset.is_const:
            r.refuse("transfer at an offset into a tensor page", n, f"{r.text(n)}: a whole page from {off} B into "
                     "the page reaches into the next page")
        return None
    if r.survey:
        return None
    nbytes = r.int_of(size, n, "transfer size")
    if page.offset == V.const(0) and nbytes % r.cb_index[cb].entry_size == 0:
        return None
    if nbytes < 1:
        r.refuse("transfer of no bytes", n, f"{r.text(n)}: size {nbytes}")
    page_bytes = r.page_bytes.get(page.tensor, 0)
    lo, hi = r.bounds(page.offset)
    if lo is None or hi is None:
        r.refuse("tensor page offset not a number", n, f"{r.text(n)}: an offset the reading cannot bound")
    assert lo is not None
    assert hi is not None
    if lo < 0:
        # the accessor's offset is a uint32_t (tensor_accessor.h:155): a negative one wraps far past the page
        r.refuse("transfer at an offset into a tensor page", n, f"{r.text(n)}: offset {lo} B, before the page's start "
                 "(an unsigned offset wraps past its end)")
    if page_bytes and hi + nbytes > page_bytes:
        r.refuse("transfer at an offset into a tensor page", n, f"{r.text(n)}: {nbytes} B from {hi} B into a "
                 f"{page_bytes} B page of {page.tensor} reaches into the next page")
    return nbytes


def _part(page: V.TensorPage, size: int, at: int) -> Part:
    """The ``Part`` of a transfer of ``size`` bytes at ``page``'s offset, ``at`` bytes into the buffer tile."""
    return Part(page.offset.const, size, at, tuple(Term(v, c) for v, c in page.offset.loops))


def _scratch_bytes(r: KernelReader, ptr: V.L1Ptr, tiles: int, n: Any) -> None:
    """A NoC transfer of ``tiles`` tiles into or out of scratch buffer ``ptr.cb``: its address must be followed and
    the transfer inside the buffer (``validate``: at most ``entries x page_tiles`` tiles; the model takes the whole
    buffer as its bytes, docs/semantics.md "Scratch buffers")."""
    b = r.cb_index[ptr.cb]
    if isinstance(ptr.offset, V.Opaque):
        r.refuse("L1 address at an offset not followed", n, f"{r.text(n)}: {ptr.offset.why}")
    lo, hi = r.bounds(ptr.offset)
    size = tiles * (b.entry_size // b.page_tiles)
    if lo is None or hi is None or lo < 0 or hi + size > b.entry_size * b.entries:
        # a followed offset is said as the byte range it reaches (not the value's class name)
        where = f"bytes [{lo}, {hi + size})" if lo is not None and hi is not None else \
            f"{size} B at an offset not bounded ({r.text(n)})"
        r.refuse("scratch L1 transfer outside the buffer", n,
                 f"{r.text(n)}: {where} past {b.name}'s base, which holds {b.entry_size * b.entries} B")


def write_from(r: KernelReader, src: Any, dst: Any, size: Any, n: Any) -> None:
    """A NoC write of ``size`` bytes (None: one page) from L1 ``src`` to ``dst``: a ``WriteTiles``, which the model
    reads one tile after another from the read pointer (petri/interp.py WriteTiles, ``drain``), so ``src`` must be
    the read pointer plus the tiles this engine already wrote from the front since it last moved."""
    if isinstance(src, V.Cb):
        src = r.pointer(src.index, True, n)
    if not isinstance(src, V.L1Ptr):
        r.refuse("write from L1 not a buffer's pages", n, _where(r, n, src))
    if src.cb in r.scratch_cbs:
        if isinstance(dst, V.RemoteAddr):
            # argmax's workers send their partials into the reduce core's scratch (0.81.1 :505-517): the landing
            # there, ordered by a semaphore, is a cross-core question the scratch rules do not decide yet
            r.refuse("remote write from scratch L1", n, r.text(n))
        if not isinstance(dst, V.TensorPage):
            r.refuse("write to an address not a tensor page", n, r.text(n))
        tiles = r.cb_index[src.cb].page_tiles if size is None else r.tiles_bytes(src.cb, size, n)
        _scratch_bytes(r, src, tiles, n)
        r.emit(WriteTiles(src.cb, dst.tensor, r.addr_of(dst.page, n), tiles), n)
        return
    if isinstance(dst, V.RemoteAddr):
        remote_write(r, src, dst, size, n)
        return
    if not isinstance(dst, V.TensorPage):
        r.refuse("write to an address not a tensor page", n, r.text(n))
    if not src.front:
        # the model's WriteTiles reads the waited front; a write from the reserved back (pages this engine fills
        # and has not pushed) is another transfer — or, with no circular-buffer op on the buffer, scratch L1
        refused = Refused("write from a buffer's back pages", r.loc(n), r.text(n))
        if src.cb not in r.ringed and r.kernel.engine != Engine.COMPUTE and not r.trial:
            raise ScratchHint(src.cb, refused)
        raise refused
    part = _part_size(r, src.cb, dst, size, n)
    if part is not None:
        at = r.part_at(src, True, part, "write from L1 not inside the buffer's next unread tile", n)
        r.emit(WriteTiles(src.cb, dst.tensor, r.addr_of(dst.page, n), 1, _part(dst, part, at)), n)
        return
    tiles = r.cb_index[src.cb].page_tiles if size is None else r.tiles_bytes(src.cb, size, n)
    r.l1_check(src, True, True, tiles, "write from L1 not at the buffer's next unread tile", n)
    r.emit(WriteTiles(src.cb, dst.tensor, r.addr_of(dst.page, n), tiles), n)


def _whole_pages(r: KernelReader, ptr: V.L1Ptr, n: Any, construct: str) -> tuple[V.L1Ptr, int]:
    """``ptr`` split into the pointer it was taken from and the whole pages past it (``RemoteRead.offset``,
    ``McastSend.offset``: an int). An offset that is not a number of whole pages (part of a page, or one that
    changes from one iteration to the next) is refused as ``construct``; in the survey, whose entry sizes are made
    up, any number is read as 0 pages."""
    off = ptr.offset
    if isinstance(off, V.Opaque):
        r.refuse("L1 address at an offset not followed", n, f"{r.text(n)}: {off.why}")
    if not off.is_const:
        r.refuse(construct, n, f"{r.text(n)}: {_why(r, n, off)} past the pointer, not a number of pages")
    page = r.cb_index[ptr.cb].entry_size
    if r.survey:
        return attrs.evolve(ptr, offset=V.const(0)), 0
    if off.const % page:
        r.refuse(construct, n, f"{r.text(n)}: {off.const} B past the pointer, in {page} B pages of "
                 f"{r.cb_index[ptr.cb].name}")
    return attrs.evolve(ptr, offset=V.const(0)), off.const // page


def remote_read(r: KernelReader, src: V.RemoteAddr, dst: Any, size: Any, n: Any) -> None:
    """A NoC read of another core's (or this core's own, through its NoC address) buffer pages into L1 ``dst``:
    ``noc_async_read(get_noc_addr(x, y, get_read_ptr(buf) + k * page), get_write_ptr(into), size)`` is
    ``RemoteRead(buf, (x, y), pages, into, k)`` (docs/semantics.md, "Remote reads": the owner's pages at this
    engine's read pointer of ``buf`` plus ``k`` pages; the sharded layernorm's partials, ttnn 0.81.1
    ``reader_mcast_sender_unary_sharded_ln.cpp:164, 175-188``). Refused by name: an address not in a buffer's pages
    (a semaphore word, scratch L1), one at a buffer's write pointer (the op reads at the read pointer), a pointer
    the reading cannot place at the read pointer as this engine holds it now, an offset not of whole pages. A read
    of this core's own write pointer of a buffer is a copy of the bytes a read of this engine landed in the page it is
    building (``KernelReader.local_copy_read``)."""
    target = src.target
    if isinstance(target, V.Cb):
        target = r.pointer(target.index, True, n)
    if not isinstance(target, V.L1Ptr):
        r.refuse("remote L1 read of an address not a buffer's pages", n, f"{r.text(n)}: {_why(r, n, target)}")
    if isinstance(dst, V.L1Ptr) and src.site == r.site and not target.front and not dst.front and \
            target.cb == dst.cb and dst.cb in r.fills:
        width = size.const if isinstance(size, V.Sym) and size.is_const else None
        r.loopback_fill(target, dst, width, n)  # inside the page its stores are building: part of the constant page
        return
    if not target.front and src.site == r.site and target.cb not in r.scratch_cbs:
        # this core's own L1, the page this engine is building: a copy of the bytes a read of it landed there
        dst = _read_destination(r, dst, n)
        r.local_copy_read(target, dst, r.cb_index[dst.cb].entry_size if size is None else
                          r.int_of(size, n, "transfer size"), n)
        return
    if not target.front:
        r.refuse("remote L1 read at a buffer's write pointer", n,
                 f"{r.text(n)}: RemoteRead reads the owner's pages at this engine's read pointer of the buffer")
    dst = _read_destination(r, dst, n)
    at, k = _whole_pages(r, target, n, "remote L1 read at an offset not of whole pages")
    pages = r.pages_bytes(target.cb, size, n) if size is not None else 1
    tiles = pages * r.cb_index[target.cb].page_tiles
    # the source is the read pointer as this engine holds it now (its pops since it took it: a whole ring, or
    # advanced by the kernel itself)
    r.l1_check(at, True, False, tiles, "remote L1 read not at the buffer's read pointer", n)
    r.l1_check(dst, False, True, tiles, "read into L1 not at the buffer's next unfilled tile", n)
    r.emit(RemoteRead(target.cb, src.site, pages, dst.cb, k), n)


def remote_write(r: KernelReader, src: Any, dst: V.RemoteAddr, size: Any, n: Any) -> None:
    """A NoC write of this core's buffer pages into another core's buffer pages: ``noc_async_write(get_read_ptr(b),
    get_noc_addr(x, y, get_write_ptr(d) + k * page), size)`` (Metal 2.0 ``noc.async_write(src, UnicastEndpoint{},
    size, {...}, {.noc_x, .noc_y, .addr})``) is a ``McastSend`` to the one-core group (x, y) (the NoC acknowledges
    it once, as a multicast to one core: docs/semantics.md, "Remote writes to an explicit place"), landing in ``d``
    at this engine's write pointer of it plus ``k`` pages (``dst``; sort's peer exchange, ttnn 0.81.1
    ``cross_core_data_exchange_common.hpp:73-74, 90-101``). A write of the back of ``d`` itself to its own address
    (``get_write_ptr(d) + k * page`` on both sides) is the op without ``dst`` at offset ``k`` (argmax's partial
    ``k``). The source is whole pages from the buffer's read pointer (front) or write pointer (back). Refused by
    name: a target not in a buffer's pages (a semaphore word: a data write onto it; scratch L1), one at a read
    pointer, a pointer the reading cannot place, an offset not of whole pages."""
    if isinstance(src, V.Cb):
        src = r.pointer(src.index, True, n)
    if not isinstance(src, V.L1Ptr):
        r.refuse("write from L1 not a buffer's pages", n, _where(r, n, src))
    if src.cb in r.scratch_cbs or (src.cb in r.fills and src.cb not in r.ringed and not r.trial):
        # stores no push publishes sent to another core: argmax's workers send their partials into the reduce
        # core's scratch (0.81.1 :505-517), a landing there ordered by a semaphore that the scratch rules do not
        # decide yet (docs/semantics.md "Scratch buffers", not said yet)
        refused = Refused("remote write from scratch L1", r.loc(n), r.text(n))
        if src.cb in r.scratch_cbs:
            raise refused
        raise ScratchHint(src.cb, refused)
    target = dst.target
    if isinstance(target, V.SemAddr):
        r.refuse("data write onto a semaphore word", n, r.text(n))
    if not isinstance(target, V.L1Ptr):
        r.refuse("remote L1 write to an address not a buffer's pages", n, f"{r.text(n)}: {_why(r, n, target)}")
    if target.front:
        r.refuse("remote L1 write at a buffer's read pointer", n,
                 f"{r.text(n)}: the data lands at the sender's write pointer of the buffer (McastSend.dst)")
    tgt, k = _whole_pages(r, target, n, "remote L1 write at an offset not of whole pages")
    own = target.cb == src.cb and not src.front
    if own:  # the back's own pages, at the same address on both sides
        at, k_src = _whole_pages(r, src, n, "remote L1 write at an offset not of whole pages")
        if k_src != k:
            r.refuse("remote L1 write target not at its source's address", n,
                     f"{r.text(n)}: from {k_src} pages past the write pointer of {r.cb_index[src.cb].name} to {k} "
                     "pages past it")
        src = at
    ends = "read" if src.front else "write"
    pages = r.pages_bytes(src.cb, size, n) if size is not None else 1
    tiles = pages * r.cb_index[src.cb].page_tiles
    r.l1_check(src, src.front, False, tiles, f"remote L1 write from L1 not at the buffer's {ends} pointer", n)
    r.l1_check(tgt, False, False, tiles, "remote L1 write not at the buffer's write pointer", n)
    site = dst.site
    g = r.shared.group(r.site, (site.x, site.y, site.x, site.y), site == r.site)
    r.emit(McastSend(src.cb, pages, g, 1, src.front, None if own else target.cb, k,
                     vc=r.write_vc("NOC_UNICAST_WRITE_VC")), n)


def _inline_write(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``noc_inline_dw_write(addr, val[, be[, noc[, vc[, src]]]])`` (dataflow_api.h:2214-2225): the 32-bit ``val``
    written into the word at ``addr``, ``get_noc_addr(x, y, word)`` of a semaphore or L1 word the host declares:
    ``InlineWrite`` (docs/semantics.md, "One-word remote writes"). Refused by name: the posted form (no
    acknowledgement: the op's write is the acknowledged kind), a byte enable other than the whole word (``0xF``), a
    stream-register target, a word the host does not declare, a value not known statically."""
    _need(r, vals, 2, n, "noc_inline_dw_write")
    # <InlineWriteDst dst_type = DEFAULT, bool posted = false, bool flush = true> (dataflow_api.h:2215); flush false
    # writes from a source word the caller must keep from racing (:2203-2209), which the op does not say
    dst_type = nocopts.value(r, targs[0], "noc_inline_dw_write dst_type", n) if targs else 0
    if dst_type not in (0, 1) or nocopts.flag(r, targs, 1, "noc_inline_dw_write posted flag", n):
        r.refuse("posted or register noc_inline_dw_write", n, r.text(n))
    if not nocopts.flag(r, targs, 2, "noc_inline_dw_write flush flag", n, default=True):
        r.refuse("unflushed noc_inline_dw_write", n, f"{r.text(n)}: its source word may race (dataflow_api.h:2203-2209)")
    if len(vals) > 2 and not (isinstance(vals[2], V.Sym) and vals[2].is_const and vals[2].const == 0xF):
        r.refuse("noc_inline_dw_write of part of a word", n, f"{r.text(n)}: byte enable {r.text(nodes[2])}")
    dst = vals[0]
    if not isinstance(dst, V.RemoteAddr):
        r.refuse("one-word write to an address not from get_noc_addr", n, r.text(nodes[0]))
    sem = _sem_of(r, dst.target, nodes[0])
    unicast_vc_arg(r, vals, nodes, 4, n)  # dataflow_api.h:2199, 2221
    r.emit(InlineWrite(sem, dst.site, r.int_of(vals[1], nodes[1], "inline write value")), n)


def _load_blocking(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``ckernel::load_blocking(p)``: a load that returns only once it is serviced; of the word of the last store
    into a page, it lands every earlier store of the engine (``data_movement/common/kernels/common.hpp:91-96,
    166-179``), the ``drain`` of the page's ``FillTiles`` or ``CopyTiles`` (``KernelReader.drain_load``); of another
    word, no drain."""
    _need(r, vals, 1, n, "load_blocking")
    if not isinstance(vals[0], V.L1Ptr):
        r.refuse("blocking load not of a page being built by stores", n, _why(r, nodes[0], vals[0]))
    r.drain_load(vals[0], n)
    return V.Opaque("a word loaded from L1")


def _burst(r: KernelReader) -> int:
    return nocstate.NOC_MAX_BURST_SIZE.get(r.host.target.name, nocstate.NOC_MAX_BURST_SIZE["wormhole_b0"])


def _one_packet(r: KernelReader, targs: list[Any], at: int, n: Any) -> bool:
    """Whether a stateful call's ``max_page_size`` template argument (position ``at``; default ``NOC_MAX_BURST_SIZE +
    1``, api/dataflow/noc.h:293, :344) selects the one-packet form: at most ``NOC_MAX_BURST_SIZE``. One the reading
    cannot evaluate is refused by name (the two forms take the length from different places)."""
    if len(targs) <= at:
        return False
    text = "".join(targs[at].text.decode().split())
    v = r.expr_text(text, targs[at])
    if not (isinstance(v, V.Sym) and v.is_const):
        r.refuse("NoC max_page_size not known statically", n, f"{r.text(n)}: {text}")
    assert isinstance(v, V.Sym)
    return v.const <= _burst(r)


def _state_coord(r: KernelReader, addr: Any, n: Any, key: str) -> Any:
    """The coordinate a ``set_state`` call programs from ``addr`` (a NoC address): the core of a ``get_noc_addr(x,
    y, a)`` / ``UnicastEndpoint`` address, or the bank of a tensor page (``(tensor, page)``: which bank holds it).
    Anything else is refused by name."""
    if isinstance(addr, V.RemoteAddr):
        return addr.site
    if isinstance(addr, V.TensorPage):
        return (addr.tensor, addr.page)
    return r.refuse(f"NoC {key} state at an address not followed", n, f"{r.text(n)}: {_why(r, n, addr)}")


def _state_of(r: KernelReader, key: str, n: Any) -> nocstate.CmdState:
    """The state a ``with_state`` call of kind ``key`` issues from (``nocstate``); refused where none is known."""
    st = r.noc_cmd.get(key)
    if isinstance(st, nocstate.CmdState):
        r.noc_used.add(st.serial)
        return st
    why = st.why if isinstance(st, V.Opaque) else f"no set_state call programs the NoC {key} command buffer before it"
    return r.refuse(f"NoC {key} with state not known", n, f"{r.text(n)}: {why}")


def _set_state(r: KernelReader, key: str, addr: Any, size: Any, one_packet: bool, n: Any, vc: int | None = None) -> None:
    """A ``set_state`` call: the coordinate of ``addr``, and in the one-packet form the length ``size``; the
    multi-packet form leaves the length register as it was (ncrisc_noc_read_set_state, noc_nonblocking_api.h:1120-1145;
    ncrisc_noc_write_set_state, :1249-1270); for a write, the virtual channel ``vc`` it names (None: none, the unicast
    write VC). No transfer, no op."""
    coord = _state_coord(r, addr, n, key)
    old = r.noc_cmd.get(key)
    if one_packet:
        length = size if isinstance(size, V.Sym) else None
    else:
        length = old.length if isinstance(old, nocstate.CmdState) else None
    r.noc_serial += 1
    r.noc_cmd[key] = nocstate.CmdState(coord, length, r.noc_serial, vc)


def _with_state_size(r: KernelReader, st: nocstate.CmdState, size: Any, one_packet: bool, key: str,
                     n: Any) -> tuple[Any, V.Sym | None]:
    """The bytes a ``with_state`` call moves and the length register after it: in the one-packet form the register's
    (its own size argument is not written, noc.h:335-378), in the multi-packet form its own size, which it writes
    (ncrisc_noc_read_any_len_with_state, noc_nonblocking_api.h:1205-1225)."""
    if one_packet:
        if st.length is None:
            r.refuse(f"NoC {key} with state of a length not known", n,
                     f"{r.text(n)}: the one-packet form sends the length register, which the reading does not know here")
        return st.length, st.length
    return size, nocstate.length_after(size, _burst(r))


def _stateful_remote(r: KernelReader, st: nocstate.CmdState, addr: Any, key: str, n: Any) -> Any:
    """The remote end of a ``with_state`` transfer: the state's coordinate with the low address the call gives
    (``addr``, a NoC address the object API truncates to its low 32 bits, noc.h:373-377, or a local address). The
    object API's address must name the state's core (or tensor page: its bank), as the vendor requires (noc.h:322);
    the classic form's local address is taken at the state's core."""
    if isinstance(addr, (V.RemoteAddr, V.TensorPage)):
        coord = _state_coord(r, addr, n, key)
        if coord != st.coord:
            r.refuse(f"NoC {key} with state at another place than its state's", n,
                     f"{r.text(n)}: the NoC sends it to the state's coordinate, {st.coord}, not {coord}")
        return addr
    if isinstance(st.coord, tuple):
        r.refuse(f"NoC {key} with state of an address in a tensor's bank", n,
                 f"{r.text(n)}: a bank-local address the reading does not follow")
    return V.RemoteAddr(st.coord, addr)


def _noc_stateful(r: KernelReader, name: str, vals: list[Any], targs: list[Any], n: Any) -> None:
    """``noc.set_async_read_state<opts, max_page_size>(src, size, src_args)`` / ``async_read_with_state(src, dst, size,
    src_args, dst_args)`` and the write pair (api/dataflow/noc.h:295-378, :540-620): ``nocstate``. A transaction
    id (``NocOptions::TXN_ID``) on a ``with_state`` call is refused by name (it issues through the transaction-id
    counters, dataflow_api.h:2494-2503)."""
    nocopts.only(r, nocopts.options(r, targs, n), nocopts.TXN_ID | nocopts.CUSTOM_VC, f"Noc.{name}", n)
    one = _one_packet(r, targs, 1, n)
    if name == "set_async_read_state":
        _need(r, vals, 3, n, name)
        _set_state(r, nocstate.READ, _endpoint(r, vals[0], vals[2], n), vals[1], one, n)
        return
    if name == "set_async_write_state":
        _need(r, vals, 3, n, name)
        # on noc_opts.vc whatever its options say (api/dataflow/noc.h:552-556)
        _set_state(r, nocstate.WRITE, _endpoint(r, vals[0], vals[2], n), vals[1], one, n, opts_vc(r, vals[3] if len(vals) > 3 else None, n))
        return
    if nocopts.options(r, targs, n).has(nocopts.TXN_ID):
        r.refuse(f"Noc.{name} with a transaction id", n, r.text(n))
    _need(r, vals, 3, n, name)
    key = nocstate.READ if name == "async_read_with_state" else nocstate.WRITE
    st = _state_of(r, key, n)
    size, length = _with_state_size(r, st, vals[2], one, key, n)
    sargs = vals[3] if len(vals) > 3 else V.Designated(())
    dargs = vals[4] if len(vals) > 4 else V.Designated(())
    if key == nocstate.READ:
        src = _stateful_remote(r, st, _endpoint(r, vals[0], sargs, n), key, n)
        read_into(r, src, _local(r, vals[1], dargs, False, n), size, n)
    else:
        dst = _stateful_remote(r, st, _endpoint(r, vals[1], dargs, n), key, n)
        with r.on_vc(st.vc):
            write_from(r, _local(r, vals[0], sargs, True, n), dst, size, n)
    r.noc_cmd[key] = attrs.evolve(st, length=length)


def _explicit_noc(r: KernelReader, vals: list[Any], nodes: list[Any], at: int, n: Any) -> None:
    """A classic stateful call's ``noc`` argument (position ``at``): the state is kept for the kernel's own NoC only
    (``nocstate``); another NoC named explicitly is refused by name."""
    if len(vals) > at and r.text(nodes[at]).strip() != "noc_index":
        r.refuse("stateful NoC call on a NoC named explicitly", n, f"{r.text(n)}: noc {r.text(nodes[at])}")


def _template_flag(r: KernelReader, targs: list[Any], at: int, name: str, n: Any) -> bool | None:
    """A bool template argument at position ``at``: its value (``nocopts.flag``), None when absent; one not known
    statically is refused by name."""
    if len(targs) <= at:
        return None
    return nocopts.flag(r, targs, at, f"{name} template argument", n)


def _classic_stateful(kind: str) -> Handler:
    """The classic stateful free functions (api/dataflow/dataflow_api.h): ``noc_async_read_one_packet_set_state
    <use_vc>(src, size, vc, noc)`` (:575), ``noc_async_read_one_packet_with_state<inc_num_issued, use_vc>(src_l1,
    dst_l1, vc, noc)`` (:599), ``noc_async_read_set_state(src, noc)`` (:644), ``noc_async_read_with_state
    <inc_num_issued, skip>(src_l1, dst_l1, size, noc)`` (:677), ``noc_async_write_one_packet_set_state<posted>(dst,
    size, noc, vc)`` (:981), ``noc_async_write_one_packet_with_state<posted>(src_l1, dst_l1, noc)`` (:1007),
    ``noc_async_write_set_state<posted>(dst, noc, vc)`` (:1053), ``noc_async_write_with_state<posted,
    update_counter, skip>(src_l1, dst_l1, size, noc)`` (:1087). Refused by name: a posted write (no
    acknowledgement), a read or write that does not count itself (``inc_num_issued`` / ``update_counter`` false: no
    barrier waits for it), a template flag that is not a literal."""
    read = kind.startswith("read")

    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        name = f"noc_async_{kind}"
        key = nocstate.READ if read else nocstate.WRITE
        flags = [_template_flag(r, targs, i, name, n) for i in range(len(targs))]
        if not read and flags and flags[0]:
            r.refuse(f"posted {name}", n, r.text(n))
        if read and kind.endswith("with_state") and flags and flags[0] is False:
            r.refuse(f"{name} not counted", n, f"{r.text(n)}: inc_num_issued false: no read barrier waits for it")
        if kind == "write_with_state" and len(flags) > 1 and flags[1] is False:
            r.refuse(f"{name} not counted", n, f"{r.text(n)}: update_counter false: no write barrier waits for it")
        one = "one_packet" in kind
        if kind.endswith("set_state"):
            _need(r, vals, 2 if one else 1, n, name)
            # the noc argument: read one-packet (src, size, vc, noc), read (src, noc), write one-packet (dst, size,
            # noc, vc), write (dst, noc, vc)
            _explicit_noc(r, vals, nodes, {"read_one_packet_set_state": 3, "read_set_state": 1,
                                          "write_one_packet_set_state": 2, "write_set_state": 1}[kind], n)
            # the VC the later with_state writes issue on: :982, :1054
            vc = None if read else own_write_vc(r, vals, nodes, 3 if one else 2, n, unicast=True)
            _set_state(r, key, vals[0], vals[1] if one else None, one, n, vc)
            return None
        _need(r, vals, 2 if one else 3, n, name)
        _explicit_noc(r, vals, nodes, {"read_one_packet_with_state": 3, "read_with_state": 3,
                                      "write_one_packet_with_state": 2, "write_with_state": 3}[kind], n)
        st = _state_of(r, key, n)
        size, length = _with_state_size(r, st, None if one else vals[2], one, key, n)
        if read:
            read_into(r, _stateful_remote(r, st, vals[0], key, n), vals[1], size, n)
        else:
            with r.on_vc(st.vc):
                write_from(r, vals[0], _stateful_remote(r, st, vals[1], key, n), size, n)
        r.noc_cmd[key] = attrs.evolve(st, length=length)
        return None

    return h


def _one_packet_transfer(read: bool) -> Handler:
    """``noc_async_read_one_packet(src, dst_l1, size[, noc[, vc]])`` / ``noc_async_write_one_packet<trace,
    posted>(src_l1, dst, size[, noc[, vc]])`` (api/dataflow/dataflow_api.h:515-523, :840-848): the ordinary read or
    write, issued as one packet, so of at most ``NOC_MAX_BURST_SIZE`` bytes; a size not known to fit one packet and a
    posted write are refused by name."""
    name = "noc_async_read_one_packet" if read else "noc_async_write_one_packet"

    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 3, n, name)
        _own_noc_arg(r, vals, nodes, 3, n)  # dataflow_api.h:515-519, :840-844
        vc = None if read else own_write_vc(r, vals, nodes, 4, n, unicast=True)  # :845
        if not read and nocopts.flag(r, targs, 1, f"{name} posted flag", n):  # <trace, posted> (:839)
            r.refuse(f"posted {name}", n, r.text(n))
        size = vals[2]
        if not (isinstance(size, V.Sym) and size.is_const and 0 < size.const <= _burst(r)):
            r.refuse(f"{name} of a size not known to fit one packet", n,
                     f"{r.text(n)}: {_why(r, nodes[2], size)}, at most {_burst(r)} B")
        if read:
            read_into(r, vals[0], vals[1], size, n)
        else:
            with r.on_vc(vc):
                write_from(r, vals[0], vals[1], size, n)

    return h


def _template_number(r: KernelReader, a: Any, what: str, n: Any) -> Any:
    """A template argument that is a number (``<num_inputs - 1>``), or a value not followed."""
    return enums.number(r, r.expr(a) if a.type != "type_descriptor" else r.template_value(a))


def _accessor_args_tuple(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``make_tensor_accessor_args_tuple<NUM_TENSORS, CTA_OFFSET>()`` (api/tensor/tensor_accessor_args.h:214-246): the
    ``TensorAccessorArgs`` of ``NUM_TENSORS`` tensors one after another from compile-time arg ``CTA_OFFSET``, each
    starting at its predecessor's ``next_compile_time_args_offset()``; a constant table of them (``std::get<i>``).
    A count not known statically is refused by name."""
    if len(targs) != 2:
        r.refuse("make_tensor_accessor_args_tuple without its two template arguments", n, r.text(n))
    count = _template_number(r, targs[0], "tensor count", n)
    if not (isinstance(count, V.Sym) and count.is_const and 0 <= count.const <= 256):
        r.refuse("tensor accessor tuple of a count not known statically", n, f"{r.text(n)}: {r.text(targs[0])}")
    cta = _template_number(r, targs[1], "compile-time arg offset", n)
    items: list[Any] = []
    for _ in range(count.const):
        args = V.AccessorArgs(cta if isinstance(cta, (V.Sym, V.Opaque)) else V.Opaque(
            f"the offset {r.text(targs[1])} of make_tensor_accessor_args_tuple is not a number"))
        items.append(args)
        step = objects.accessor_args_count(r, args, n)
        cta = args.cta + step if isinstance(args.cta, V.Sym) and isinstance(step, V.Sym) else V.Opaque(
            "the offset of an accessor after one whose compile-time args are not followed")
    return V.Table(tuple(items), len(items))


def _accessor_tuple(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``make_tensor_accessor_tuple(args_tuple, address_rt_arg_index_start)`` (api/tensor/tensor_accessor.h:696-709):
    accessor ``i`` over ``args_tuple``'s element ``i`` and the address in runtime arg ``start + i``."""
    _need(r, vals, 2, n, "make_tensor_accessor_tuple")
    t = vals[0]
    if not isinstance(t, V.Table):
        r.refuse("make_tensor_accessor_tuple of a value not followed", n, _why(r, nodes[0], t))
    start = vals[1]
    items = []
    for i in range(t.size):
        at = start + V.const(i) if isinstance(start, V.Sym) else start
        addr = _arg_val(r, [at], [nodes[1]], [], n)
        items.append(r.accessor([t.at(i), addr], n))
    return V.Table(tuple(items), t.size)


def _accessor_wrappers(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``make_abstract_tensor_accessor_wrappers(accessors)`` (api/tensor/tensor_accessor.h:786-804): an array of the
    same accessors, type-erased, indexed at run time (``accessors[i]``)."""
    _need(r, vals, 1, n, "make_abstract_tensor_accessor_wrappers")
    if not isinstance(vals[0], V.Table):
        r.refuse("make_abstract_tensor_accessor_wrappers of a value not followed", n, _why(r, nodes[0], vals[0]))
    return vals[0]


def _read(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 3, n, "noc_async_read")
    _own_noc_arg(r, vals, nodes, 3, n)  # dataflow_api.h:547-551
    read_into(r, vals[0], vals[1], vals[2], n)


def _write(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 3, n, "noc_async_write")
    _own_noc_arg(r, vals, nodes, 3, n)  # dataflow_api.h:875-879
    # noc_async_write<max_page_size, enable_noc_tracing, posted> (:874): no barrier the ops have waits for a posted
    # write (noc_async_write_barrier waits for non-posted acks, wormhole noc_nonblocking_api.h:593-595)
    if nocopts.flag(r, targs, 2, "noc_async_write posted flag", n):
        r.refuse("posted noc_async_write", n, r.text(n))
    with r.on_vc(own_write_vc(r, vals, nodes, 4, n, unicast=True)):  # :880
        write_from(r, vals[0], vals[1], vals[2], n)


def mcast_send(r: KernelReader, src: Any, rect: tuple[int, int, int, int], size: Any, num_dests: Any, loopback: bool,
               n: Any, target: Any, noc: int) -> None:
    """A data multicast of ``src``'s pages to ``target`` (an address in a buffer) on every core of ``rect``. McastSend
    writes the buffer of the same index at each destination, so a target in another buffer is refused. The model
    sends whole pages from the pointer (the reserved back's first page, or the waited front's) and lands them at the
    same ring slot of each destination (petri/interp.py McastSend), so ``src`` must be that pointer and ``target``
    the same address (``KernelReader.l1_check``). ``rect`` are the corners as given on NoC ``noc``
    (``mcast_rect``)."""
    rect = mcast_rect(r, rect, loopback, noc, n)
    if isinstance(src, V.Cb):
        src = r.pointer(src.index, True, n)
    if not isinstance(src, V.L1Ptr):
        r.refuse("multicast from L1 not a buffer's pages", n, r.text(n))
    if isinstance(target, V.Cb):
        target = r.pointer(target.index, False, n)
    dst_cb = target.cb if isinstance(target, V.L1Ptr) else None
    if dst_cb is None:
        r.refuse("multicast to an address not a buffer's pages", n, r.text(n))
    if dst_cb != src.cb:
        r.refuse("multicast into another buffer", n, f"from c_{src.cb} into c_{dst_cb}")
    pages = r.pages_bytes(src.cb, size, n)
    tiles = pages * r.cb_index[src.cb].page_tiles
    # a producer's own read pointer (it pushes the buffer and never pops it): pages it already pushed, if anything
    offset = _pushed_source(r, src, target, pages) if src.front and r.ctr("popped", src.cb) == V.const(0) else None
    if offset is not None:
        g = r.shared.group(r.site, rect, loopback)
        r.emit(McastSend(src.cb, pages, g, _num_dests(r, num_dests, n), offset=offset,
                         behind=r.cb_index[src.cb].entries, vc=r.write_vc("NOC_MULTICAST_WRITE_VC")), n)
        return
    try:
        r.l1_check(src, src.front, False, tiles, "multicast from L1 not at the buffer's "
                   f"{'read' if src.front else 'write'} pointer", n)
    except Refused:
        offset = _pushed_source(r, src, target, pages)
        if offset is None:
            raise
        g = r.shared.group(r.site, rect, loopback)
        cap = r.cb_index[src.cb].entries
        r.emit(McastSend(src.cb, pages, g, _num_dests(r, num_dests, n), offset=offset, behind=cap,
                         vc=r.write_vc("NOC_MULTICAST_WRITE_VC")), n)
        return
    r.l1_check(target, src.front, False, tiles, "multicast target not at its source's address", n)
    g = r.shared.group(r.site, rect, loopback)
    r.emit(McastSend(src.cb, pages, g, _num_dests(r, num_dests, n), src.front,
                     vc=r.write_vc("NOC_MULTICAST_WRITE_VC")), n)


def _pushed_source(r: KernelReader, src: V.L1Ptr, target: Any, pages: int) -> int | None:
    """Where a multicast of pages this engine already pushed starts (docs/semantics.md "Multicast of pages already
    pushed"): ``offset`` pages past the address the write pointer had one ring (``entries`` pages) ago, for a
    ``McastSend(..., offset, behind=entries)``; None when ``src`` is not such a source. The sharded layernorm's sender
    pushes ``ex_global`` and multicasts it block by block from its read pointer plus the block's bytes
    (ttnn 0.81.1 ``reader_mcast_sender_unary_sharded_ln.cpp:267-289``: the producer never pops, so its read pointer
    is the ring's base, dataflow_buffer.h:398, 603). Every count and byte must be a number (the reading compares
    addresses, as ``l1_check``'s case (3)): ``src`` whole pages into the ring, the ``pages`` inside the last ring
    this engine pushed (``offset + pages <= entries``), and ``target`` the same address of the same buffer (they land
    at their own address). Whether the pages are pushed and not reserved again is the checker's
    (``mcast-source-unpublished``)."""
    if r.trial or r.survey or not isinstance(target, V.L1Ptr) or target.cb != src.cb:
        return None
    b = r.cb_index[src.cb]
    cap, page = b.entries, b.entry_size
    pushed = r.ctr("pushed", src.cb)

    def byte(p: V.L1Ptr) -> int | None:
        """``p``'s byte in the ring: its pointer's slot when taken (its count then modulo the ring) plus its offset."""
        if not (isinstance(p.origin, V.Sym) and p.origin.is_const and isinstance(p.offset, V.Sym) and
                p.offset.is_const):
            return None
        return (p.origin.const % cap) * page + p.offset.const

    at, to = byte(src), byte(target)
    if at is None or to != at or not pushed.is_const or pushed.const < 1 or at % page or not 0 <= at < cap * page:
        return None
    offset = (at // page - pushed.const % cap) % cap
    return offset if offset + pages <= cap else None


def _num_dests(r: KernelReader, v: Any, n: Any) -> int:
    """A multicast's destination count as the kernel states it, passed through whatever it is: it is only the count
    of acknowledgements the engine's barrier expects (``noc_nonposted_writes_acked[noc] += num_dests``, ttnn 0.81.1
    ``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc_nonblocking_api.h:505-506``), while the NoC writes every core of
    the rectangle, each acknowledging. One other than the rectangle's — 0 too, which ``dataflow_api.h:926`` says
    "needs to be non-zero" — is a finding, not bad input: the barrier after it hangs (tt-metal #42100; the checker's
    deadlock family refutes it at the barrier's line, docs/semantics.md "Acknowledgement counts")."""
    return r.int_of(v, n, "multicast destination count")


def mcast_rect(r: KernelReader, rect: tuple[int, int, int, int], loopback: bool, noc: int,
               n: Any) -> tuple[int, int, int, int]:
    """The rectangle of sites a multicast issued on NoC ``noc`` with corners ``rect`` = (x_start, y_start, x_end,
    y_end) writes, lower corner first (the program's ``Group.rect``).

    The corners run in the NoC's direction: start <= end on NoC 0, end <= start on NoC 1 (the swap of
    ``get_safe_multicast_noc_addr``, ttnn 0.81.1 ``ttnn/cpp/ttnn/operations/experimental/ccl/moe_gpt/device/kernels/
    tilize_writer.cpp:17-29``, ``ccl/common/kernels/moe_utils.hpp:19-22``; ``get_noc_multicast_addr`` encodes them
    as given, ``tt_metal/hw/inc/internal/dataflow/noc_address_backend_xy.h:35-48``). Given the other way on an axis,
    Wormhole's and Blackhole's torus NoC sends a wrap-around multicast (``tt_metal/hw/inc/internal/debug/sanitize.h:
    563-564``: "support wrap-around multicasts where end < start") across the grid's edge to cores outside the
    rectangle, which the model does not say: refused by name. A non-loopback rectangle holding only the sender is
    refused too: "The destination range must not be just self" (``tt_metal/hw/inc/api/dataflow/dataflow_api.h:
    921-922``), and the headers do not say what the NoC does with it. The survey's made-up args are not checked."""
    x0, y0, x1, y1 = rect
    if not r.survey:
        for axis, a, b in (("x", x0, x1), ("y", y0, y1)):
            if (a > b) if noc == 0 else (a < b):
                r.refuse("multicast rectangle against its NoC's direction", n,
                         f"{axis}_start {a} {'>' if noc == 0 else '<'} {axis}_end {b} on NoC {noc}, which takes "
                         f"start {'<=' if noc == 0 else '>='} end: a wrap-around multicast across the grid's edge "
                         "(sanitize.h:563-564), not the rectangle between the corners")
    on_own_noc(r, noc, n)
    lo = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    if not r.survey and not loopback and lo == (r.site.x, r.site.y, r.site.x, r.site.y):
        r.refuse("multicast to its sender alone", n, f"the rectangle {rect} is core {r.site} itself, and the "
                 "multicast does not write its sender (dataflow_api.h:921-922: the range must not be just self)")
    return lo


def _noc_arg(r: KernelReader, vals: list[Any], nodes: list[Any], at: int) -> int:
    """The NoC a classic call issues on: its ``noc`` argument at position ``at`` (``noc_index`` is the kernel's), else
    the kernel's own (``uint8_t noc = noc_index``, dataflow_api.h:951, :1776, :2443). One not known statically is
    refused by name (the corners' order cannot be checked), except in the survey, which checks no corners."""
    if len(vals) > at:
        v = vals[at]
        if r.survey and not (isinstance(v, V.Sym) and v.is_const):
            return r.kernel.noc
        return r.int_of(v, nodes[at], "NoC index")
    return r.kernel.noc


def linked_arg(r: KernelReader, vals: list[Any], nodes: list[Any], at: int) -> bool:
    """A multicast's ``bool linked = false`` argument at position ``at`` (``noc_async_write_multicast`` :950,
    ``noc_semaphore_set_multicast`` :1775, ``noc_async_write_multicast_loopback_src`` :1900 of
    ``api/dataflow/dataflow_api.h``; ``Noc::async_write_multicast``, ``api/dataflow/noc.h:500``;
    ``Semaphore::set_multicast``, ``api/semaphore.h:248``), read as a value: one not known statically is refused by
    name, except in the survey, which keeps no linked path (``KernelReader.multicast``)."""
    if len(vals) <= at:
        return False
    v = vals[at]
    if r.survey and not (isinstance(v, V.Sym) and v.is_const):
        return False
    return r.int_of(v, nodes[at], "multicast linked flag") != 0


def _mcast_write(loopback: bool) -> Handler:
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 4, n, "noc_async_write_multicast")
        dst = vals[1]
        if not isinstance(dst, V.McastAddr):
            r.refuse("multicast to an address not from get_noc_multicast_addr", n, r.text(nodes[1]))
        if isinstance(dst.target, V.SemAddr):
            r.refuse("data multicast onto a semaphore word", n, r.text(n))
        with r.on_vc(own_write_vc(r, vals, nodes, 6, n, unicast=False)):  # dataflow_api.h:952
            with r.multicast(r.write_vc("NOC_MULTICAST_WRITE_VC"), linked_arg(r, vals, nodes, 4), n):
                mcast_send(r, vals[0], dst.rect, vals[2], vals[3], loopback, n, dst.target,
                           _noc_arg(r, vals, nodes, 5))

    return h


# ------------------------------------------------------------------ semaphores


def _sem_of(r: KernelReader, v: Any, node: Any) -> int:
    if isinstance(v, V.SemAddr):
        return v.sem
    r.refuse("semaphore word not from get_semaphore", node, r.text(node))


def _sem_set(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 2, n, "noc_semaphore_set")
    sem_set(r, _sem_of(r, vals[0], nodes[0]), vals[1], nodes[1], n)


def sem_set(r: KernelReader, sem: int, v: Any, node: Any, n: Any) -> None:
    """A local store of ``v`` into the word: a constant, or affine in enclosing loop indices (``start_sem.set(k +
    1)``, ttnn ``reader_argmax_interleaved_multicore.cpp:394``) as a wait's threshold may be."""
    if not isinstance(v, V.Sym) or v.trip is not None:
        r.int_of(v, node, "semaphore value")  # refuses, naming why
    if v.is_const:  # ``uint32_t val``: the argument modulo 2**32
        v = V.const(r.word_field(v, node, "semaphore value"))
    r.emit(SemSet(sem, v.const, tuple(Term(x, c) for x, c in v.loops)), n)  # as KernelReader.sem_set


def sem_wait(r: KernelReader, sem: int, cond: WaitCond, v: Any, node: Any, n: Any) -> None:
    if not isinstance(v, V.Sym) or v.trip is not None:
        r.int_of(v, node, "semaphore threshold")  # refuses, naming why
    if v.is_const:  # ``uint32_t val``: the argument modulo 2**32
        v = V.const(r.word_field(v, node, "semaphore threshold"))
    r.emit(SemWait(sem, cond, v.const, tuple(Term(x, c) for x, c in v.loops)), n)


def _sem_wait(cond: WaitCond) -> Handler:
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 2, n, "noc_semaphore_wait")
        sem_wait(r, _sem_of(r, vals[0], nodes[0]), cond, vals[1], nodes[1], n)

    return h


def _increment(r: KernelReader, val: Any, node: Any, n: Any) -> int:
    """The increment of a unicast ``noc_semaphore_inc`` or a ``Semaphore.up``: any word on the device
    (``dataflow_api.h:2390``), but an increment of 0 leaves the word as it was, which ``SemInc`` / ``SemRmw`` cannot
    say (they add at least 1, docs/semantics.md): refused by name rather than read as another op."""
    by = r.word_field(val, node, "increment")  # ``uint32_t incr``: the argument modulo 2**32
    if by == 0:
        r.refuse("semaphore increment of 0", n, "it leaves the word as it was; the model's increments add at least 1")
    return by


def _sem_inc(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 2, n, "noc_semaphore_inc")
    _own_noc_arg(r, vals, nodes, 2, n)  # (addr, incr, noc_id): dataflow_api.h:2397-2398
    unicast_vc_arg(r, vals, nodes, 3, n)  # dataflow_api.h:2392, 2398
    if nocopts.flag(r, targs, 0, "noc_semaphore_inc posted flag", n):
        # noc_semaphore_inc<posted = true> (:2396): no acknowledgement to wait for, which SemInc (non-posted) cannot say
        r.refuse("posted noc_semaphore_inc", n)
    dst = vals[0]
    if not isinstance(dst, V.RemoteAddr):
        r.refuse("semaphore increment of an address not from get_noc_addr", n, r.text(nodes[0]))
    r.emit(SemInc(_sem_of(r, dst.target, nodes[0]), dst.site, _increment(r, vals[1], nodes[1], n)), n)


def on_own_noc(r: KernelReader, noc: int, n: Any) -> None:
    """A transfer or barrier issued on NoC ``noc``: refused by name unless it is the kernel's own NoC. A barrier waits
    on the counters of its NoC only (``noc_async_read_barrier(uint8_t noc = noc_index)`` spins on
    ``ncrisc_noc_reads_flushed(noc)``, ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:1919-1931``; the
    write, atomic and full barriers likewise, :1949, :2032, :2056), and the model has one set of counters per engine:
    a read on NoC 1 and a barrier on NoC 0 would be read as landed when the board may still be writing its bytes."""
    if not r.survey and noc != r.kernel.noc:
        r.refuse("NoC call on another NoC than the kernel's", n,
                 f"{r.text(n)}: NoC {noc}, the kernel's is NoC {r.kernel.noc} (a barrier waits on its own NoC only, "
                 "dataflow_api.h:1919-1931)")


def _own_noc_arg(r: KernelReader, vals: list[Any], nodes: list[Any], at: int, n: Any) -> None:
    """``on_own_noc`` of a classic call's ``noc`` argument at position ``at`` (absent or ``noc_index``: the kernel's;
    one not known statically is refused by name by ``_noc_arg``)."""
    if len(vals) > at and r.text(nodes[at]).strip() != "noc_index":
        on_own_noc(r, _noc_arg(r, vals, nodes, at), n)


#: The virtual channel a classic write issues on when its call names none, by the macro that names it
#: (``tt_metal/hw/inc/internal/dataflow/dataflow_api_common.h:62-64``, Wormhole and Blackhole).
WRITE_VCS = {"NOC_UNICAST_WRITE_VC": 1, "NOC_MULTICAST_WRITE_VC": 4}

#: The channels a unicast write may name: "0-3 (Unicast VCs)" in the ``vc`` row of every unicast write call's table
#: (``api/dataflow/dataflow_api.h:834`` noc_async_write_one_packet, ``:976`` its set_state, ``:1048``
#: noc_async_write_set_state, ``:1162`` the PCIe set_state, ``:2199`` noc_inline_dw_write, ``:2298`` its set_state,
#: ``:2392`` noc_semaphore_inc); ``noc_async_write`` and Metal 2.0 ``noc.async_write`` issue through the same
#: ``noc_async_write_impl`` (``:880``, ``api/dataflow/noc.h:449-455``). The multicast channels are another class
#: (``NOC_MULTICAST_WRITE_VC`` 4), and the vendor states no order between a unicast and a multicast packet.
UNICAST_VCS = range(4)


def own_write_vc(r: KernelReader, vals: list[Any], nodes: list[Any], at: int, n: Any, *,
                 unicast: bool) -> int | None:
    """A classic write's ``vc`` argument at position ``at``: None when absent (the call's own, ``KernelReader.write_vc``),
    else its value, a ``WRITE_VCS`` macro or a number known statically (``McastSend.vc``: across two VCs the NoC keeps
    no order, "arbitrary reordering", tt-isa-documentation ``WormholeB0/NoC/Ordering.md``, tt-metal #55555, which the
    checker decides from each write's channel). One not known statically, not a channel of the NoC, or, for a
    ``unicast`` call, not in ``UNICAST_VCS``, is refused by name."""
    if r.survey or len(vals) <= at:
        return None
    text = r.text(nodes[at]).strip()
    if text in WRITE_VCS:
        return _in_class(r, WRITE_VCS[text], f"{text} = {WRITE_VCS[text]}", n, unicast=unicast)
    return _channel(r, vals[at], text, n, unicast=unicast)


def opts_vc(r: KernelReader, opts: Any, n: Any) -> int:
    """The virtual channel an object-API unicast write's ``noc_opts`` argument ``opts`` (its value; None when absent)
    names: ``NocOptVals.vc``, ``NOC_UNICAST_WRITE_VC`` when not designated (api/dataflow/noc.h:104-105); one not known
    statically, or not in ``UNICAST_VCS``, is refused by name."""
    if opts is None:
        return WRITE_VCS["NOC_UNICAST_WRITE_VC"]
    if not isinstance(opts, V.Designated):
        r.refuse("NoC write on a virtual channel not known statically", n, f"{r.text(n)}: noc_opts not designated")
    vc = opts.get("vc")
    if vc is None:
        return WRITE_VCS["NOC_UNICAST_WRITE_VC"]
    return _channel(r, vc, "noc_opts.vc", n, unicast=True)


def unicast_vc_arg(r: KernelReader, vals: list[Any], nodes: list[Any], at: int, n: Any) -> None:
    """The ``vc`` argument at position ``at`` of a unicast call whose op carries no channel (``InlineWrite``,
    ``SemInc``: the model orders them by their barriers only, so the channel decides nothing): one known statically
    outside ``UNICAST_VCS`` or the NoC's channels is refused by name, as for the writes that carry it."""
    if r.survey or len(vals) <= at:
        return
    v = vals[at]
    if isinstance(v, V.Sym) and v.is_const:
        _channel(r, v, r.text(nodes[at]).strip(), n, unicast=True)


def _channel(r: KernelReader, v: Any, text: str, n: Any, *, unicast: bool) -> int:
    """A write's virtual channel ``v`` (``text``: the argument as the call writes it) as a number below ``NOC_VCS``,
    and for a ``unicast`` call in ``UNICAST_VCS``; refused by name otherwise. The detail names the channel argument
    first: the statement itself follows in the refusal."""
    if not (isinstance(v, V.Sym) and v.is_const):
        r.refuse("NoC write on a virtual channel not known statically", n, f"the vc argument {text}")
    return _in_class(r, v.const, text if text == str(v.const) else f"{text} = {v.const}", n, unicast=unicast)


def _in_class(r: KernelReader, vc: int, said: str, n: Any, *, unicast: bool) -> int:
    """``vc`` (the channel argument as ``said``) if it is a channel of the NoC and, for a ``unicast`` call, in
    ``UNICAST_VCS``; refused by name otherwise."""
    if not 0 <= vc < NOC_VCS:
        r.refuse("NoC write on a virtual channel not of the NoC", n,
                 f"the vc argument {said}: the NoC has VCs 0-{NOC_VCS - 1} (noc_parameters.h NOC_VCS; refused rather "
                 "than read as the parameter's low bits)")
    if unicast and vc not in UNICAST_VCS:
        r.refuse("NoC unicast write on a virtual channel not of the unicast class", n,
                 f"the vc argument {said}: a unicast write's vc is 0-3 (Unicast VCs), dataflow_api.h:834, 976, "
                 "1048, 1162")
    if not unicast and vc in UNICAST_VCS:
        # The model orders two writes of one channel and one rectangle; a multicast on a unicast channel would
        # share that order with a unicast to its one core, an order the vendor does not state (UNICAST_VCS).
        r.refuse("NoC multicast write on a virtual channel of the unicast class", n,
                 f"the vc argument {said}: unicast writes use VCs 0-3 (dataflow_api.h:834), multicasts "
                 f"NOC_MULTICAST_WRITE_VC = {WRITE_VCS['NOC_MULTICAST_WRITE_VC']} (dataflow_api_common.h:62-64); "
                 "no order between a unicast and a multicast packet is stated")
    return vc


def _sem_set_mcast(loopback: bool) -> Handler:
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        _need(r, vals, 3, n, "noc_semaphore_set_multicast")
        src, dst = _sem_of(r, vals[0], nodes[0]), vals[1]
        if not isinstance(dst, V.McastAddr):
            r.refuse("multicast to an address not from get_noc_multicast_addr", n, r.text(nodes[1]))
        sem = _sem_of(r, dst.target, nodes[1])
        vc = own_write_vc(r, vals, nodes, 5, n, unicast=False)  # dataflow_api.h:1777
        rect = mcast_rect(r, dst.rect, loopback, _noc_arg(r, vals, nodes, 4), n)
        g = r.shared.group(r.site, rect, loopback)
        with r.on_vc(vc), r.multicast(r.write_vc("NOC_MULTICAST_WRITE_VC"), linked_arg(r, vals, nodes, 3), n):
            r.emit(McastSetValid(sem, g, _num_dests(r, vals[2], n), None if src == sem else src,
                                 vc=r.write_vc("NOC_MULTICAST_WRITE_VC")), n)

    return h


def _sem_set_remote(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 2, n, "noc_semaphore_set_remote")
    src, dst = _sem_of(r, vals[0], nodes[0]), vals[1]
    if not isinstance(dst, V.RemoteAddr):
        r.refuse("semaphore write to an address not from get_noc_addr", n, r.text(nodes[1]))
    sem = _sem_of(r, dst.target, nodes[1])
    # the unicast form of the flag write: a multicast to a rectangle of one core (reference/tenstorrent.md §1.2)
    g = r.shared.group(r.site, (dst.site.x, dst.site.y, dst.site.x, dst.site.y), False)
    # on NOC_UNICAST_WRITE_VC, which the call does not let the kernel change (dataflow_api.h:1709-1730)
    r.emit(McastSetValid(sem, g, 1, None if src == sem else src, vc=WRITE_VCS["NOC_UNICAST_WRITE_VC"]), n)


def _sem_inc_mcast(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    _need(r, vals, 3, n, "noc_semaphore_inc_multicast")
    dst = vals[0]
    if not isinstance(dst, V.McastAddr):
        r.refuse("multicast to an address not from get_noc_multicast_addr", n, r.text(nodes[0]))
    g = r.shared.group(r.site, mcast_rect(r, dst.rect, False, _noc_arg(r, vals, nodes, 3), n), False)
    # never linked (``false /*linked*/``, dataflow_api.h:2457), on ``vc`` (:2443)
    with r.on_vc(own_write_vc(r, vals, nodes, 4, n, unicast=False)), \
            r.multicast(r.write_vc("NOC_MULTICAST_WRITE_VC"), False, n):
        r.emit(SemIncMcast(_sem_of(r, dst.target, nodes[0]), g, _num_dests(r, vals[2], n),
                           _increment(r, vals[1], nodes[1], n)), n)


# ------------------------------------------------------------------ barriers and DST


def _plain(*ops: Any, noc_at: int | None = None) -> Handler:
    """``ops`` emitted in order; ``noc_at``: the position of the call's ``noc`` argument (a barrier's), which must be
    the kernel's NoC (``on_own_noc``)."""
    def h(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
        if noc_at is not None:
            _own_noc_arg(r, vals, nodes, noc_at, n)
        for op in ops:
            r.emit(op, n)

    return h


def acquire(r: KernelReader, n: Any) -> None:
    if r.acc is not None:
        r.refuse("tile_regs_acquire while DST is held", n)
    r.acquire_dst()
    r.emit(AcquireAcc(1, "fp32" if r.kernel.fp32_dest_acc_en else "bf16"), n)


def release(r: KernelReader, n: Any, commits: bool = False) -> None:
    """``tile_regs_release`` (PACK's ``llk_pack_dest_section_done``, api/compute/reg_api.h:105-110): MATH must have
    committed the section and PACK waited for it, else PACK's release frees a section MATH never handed over (an
    unmatched ``TTI_SEMGET`` of the math-pack semaphore) or PACK packed DST while MATH was writing it. ``commits``:
    ``release_dst``, which is MATH's commit and PACK's release together (reg_api.h:82-86)."""
    if r.acc is None:
        r.refuse("tile_regs_release without tile_regs_acquire", n)
    a = r.acc
    if a.state != ("waited" if commits else "both"):
        missing = {"acquired": "tile_regs_commit and tile_regs_wait", "committed": "tile_regs_wait",
                   "waited": "tile_regs_commit", "both": "no tile_regs_commit (release_dst commits itself)"}[a.state]
        r.refuse("tile_regs_release without the DST hand-over", n, f"missing: {missing} (api/compute/reg_api.h)")
    if a.block.closed:
        r.refuse("tile_regs_acquire and tile_regs_release in different loop bodies or branches", n)
    old = a.block.ops[a.index]
    assert isinstance(old, AcquireAcc)
    a.block.ops[a.index] = AcquireAcc(max(1, a.tiles), old.dtype)
    r.acc = None
    r.emit(ReleaseAcc(), n)


def _acquire(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    acquire(r, n)


def _release(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    release(r, n)


def _release_dst(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    release(r, n, commits=True)


def _commit(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    # The compute engine is MATH and PACK as one: commit (MATH) and wait (PACK) hand DST over between them and
    # are no ops here. Each TRISC runs only its own calls, so "acquire; wait; ...; commit" in source order is
    # legitimate (PACK's wait blocks until MATH's commit); only a hand-over outside an acquire is refused.
    if r.acc is None:
        r.refuse("tile_regs_commit without tile_regs_acquire", n)
    if r.acc.state in ("committed", "both"):
        r.refuse("tile_regs_commit twice in one acquire", n, "MATH would hand PACK a section it does not hold")
    r.acc.state = "committed" if r.acc.state == "acquired" else "both"


def _regs_wait(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    if r.acc is None:
        r.refuse("tile_regs_wait without tile_regs_acquire", n)
    # a second wait in one section returns at once (llk_packer_wait_for_math_done stalls only while the math-pack
    # semaphore is 0 and takes nothing from it; layernorm_sharded.cpp:521-525 waits twice): it changes nothing
    r.acc.state = {"acquired": "waited", "committed": "both"}.get(r.acc.state, r.acc.state)


def _pack(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``pack_tile<out_of_order_output = false>(dst, cb, output_tile_index = 0)`` (api/compute/pack.h:86-94): in
    order, or at ``output_tile_index`` when the first template argument is true."""
    _need(r, vals, 2, n, "pack_tile")
    r.dst_use([vals[0]], n)
    cb = r.cb_of(vals[1], nodes[1])
    indexed = bool(targs) and _template_true(r, targs[0])
    r.pack_at(cb, 1, (vals[2] if len(vals) > 2 else V.const(0)) if indexed else None, n)
    r.emit(PackAcc(cb, 1), n)


def _template_true(r: KernelReader, node: Any) -> bool:
    """Whether a bool template argument is true (a literal, a folded constant); one not known is refused."""
    v = r.template_value(node) if node.type == "type_descriptor" else r.expr(node)
    return bool(r.int_of(v, node, "template argument"))


def _pack_block(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``pack_tile_block`` / ``pack_block(dst, cb, ntiles)``: ``ntiles`` tiles in order (api/compute/pack.h:96-141,
    ``llk_matmul_pack`` advances the packer's position)."""
    _need(r, vals, 3, n, "pack_tile_block")
    k = r.int_of(vals[2], nodes[2], "tile count")
    r.dst_use([vals[0] + V.const(k - 1) if isinstance(vals[0], V.Sym) else vals[0]], n)
    cb = r.cb_of(vals[1], nodes[1])
    r.pack_at(cb, k, None, n)
    r.emit(PackAcc(cb, k), n)


def _matmul_block(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``matmul_block(in0, in1, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim, kt_dim)``
    (api/compute/matmul.h:258-283): DST tiles ``idst .. idst + ct_dim * rt_dim - 1`` += A x B, unpacking from the
    read pointers A's tiles ``in0_tile_index + r * kt_dim`` for each of the ``rt_dim`` rows and B's tiles
    ``in1_tile_index + c`` for each of the ``ct_dim`` columns (tt_llk_wormhole_b0/llk_lib/llk_unpack_AB_matmul.h
    ``_llk_unpack_AB_matmul_``): a ``Compute`` whose operands reach the largest of each."""
    _need(r, vals, 9, n, "matmul_block")
    ct, rt, kt = (r.int_of(vals[i], nodes[i], what) for i, what in ((6, "ct_dim"), (7, "rt_dim"), (8, "kt_dim")))
    if min(ct, rt, kt) < 1:
        r.refuse("matmul_block of an empty block", n, f"ct_dim {ct}, rt_dim {rt}, kt_dim {kt}")
    ins = []
    for cb_i, idx_i, extent in ((0, 2, (rt - 1) * kt), (1, 3, ct - 1)):
        cb = r.cb_of(vals[cb_i], nodes[cb_i])
        idx = vals[idx_i]
        if not isinstance(idx, V.Sym):
            r.refuse("tile index not known statically", n, r.text(nodes[idx_i]))
        top = r.max_of(idx, n) + extent
        ins.append(Operand(cb, top // r.cb_index[cb].page_tiles + 1))
    dst = vals[4]
    r.dst_use([dst + V.const(ct * rt - 1) if isinstance(dst, V.Sym) else dst], n)
    r.emit(Compute("matmul", ct * rt, tuple(ins)), n)


def _acquire_dst(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    acquire(r, n)
    assert r.acc is not None
    r.acc.state = "waited"  # acquire_dst is MATH's acquire and PACK's wait together


def _local_address(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``noc_address_backend::extract_local_address(noc_addr)``: the L1 address part of a NoC address, its low 32
    bits (internal/dataflow/noc_address_backend_xy.h:61). Of ``get_noc_addr(x, y, a)`` it is ``a``; of a
    tensor page (the bytes of a sharded tensor's shard on its bank core, ttnn's ``extract_local_address(
    s.get_noc_addr(0))``) or an address not followed, an address not followed: a shard is a buffer's pages only as a
    globally allocated buffer (docs/ttmetal.md "Sharded tensors"), so a transfer at it is refused where it stands."""
    _need(r, vals, 1, n, "extract_local_address")
    v = vals[0]
    if isinstance(v, V.RemoteAddr):
        # the number ``a`` whatever core the address names (a pure bit extraction); what a transfer at it means is
        # the transfer's to judge (another core's congruent buffer at this engine's own pointer, as RemoteRead says)
        return v.target
    if isinstance(v, V.TensorPage):
        return V.Opaque(f"the L1 address of a page of tensor {v.tensor} on its bank ({r.text(nodes[0])}): a "
                        "tensor's bytes, not a buffer's pages")
    return V.Opaque(f"the L1 address part of {r.text(nodes[0])}")


def _read_tile_value(r: KernelReader, vals: list[Any], nodes: list[Any], targs: list[Any], n: Any) -> Any:
    """``read_tile_value(cb, tile, i)``: the unpacker's load of 32-bit word ``i`` of tile ``tile`` past its read
    pointer of ``cb``, handed to MATH and PACK by mailbox (api/compute/cb_api.h:192-211, ttnn 0.71.2). Changes no
    buffer state; its value is a stated tensor word where the host states it (``KernelReader.stated_load``), else
    not known statically. Refused by name: a tile other than the front one (tile 0), a page not waited for since
    the engine's last pop of the buffer (no op carries the read, so the reading checks it)."""
    _need(r, vals, 3, n, "read_tile_value")
    cb = r.cb_of(vals[0], nodes[0])
    tile, word = vals[1], vals[2]
    page = r.cb_index[cb]
    # no op says the read: the page it reads must be the front page this engine has waited for (a read past it, or
    # of a page not waited, would be a cb-read-unwaited no rule sees)
    if not (isinstance(tile, V.Sym) and tile.is_const and tile.const == 0):
        r.refuse("read_tile_value of a tile past the front page", n, r.text(n))
    if cb not in r.front_waited and not (r.trial or r.survey):
        r.refuse("read_tile_value of a page not waited for", n, f"{r.text(n)}: no wait of c_{cb} since its last pop")
    if isinstance(word, V.Sym) and word.is_const and 0 <= 4 * word.const <= page.entry_size // page.page_tiles - 4:
        got = r.stated_load(r.pointer(cb, True, n, V.const(4 * word.const)).retyped(4), n)
        if isinstance(got, V.Sym):
            return got
        if got is not None:
            return V.Opaque(f"a value loaded from L1 the stated tensor data does not decide: {r.text(n)}: {got}")
    return V.Opaque(f"a value read from a tile of c_{cb}: {r.text(n)}")


FUNCTIONS: dict[str, Handler] = {
    "read_tile_value": _read_tile_value,
    "extract_local_address": _local_address,
    "cb_reserve_back": _cb_op(Reserve, "cb_reserve_back"),
    "cb_push_back": _cb_op(Push, "cb_push_back"),
    "cb_wait_front": _cb_op(Wait, "cb_wait_front"),
    "cb_pop_front": _cb_op(Pop, "cb_pop_front"),
    "get_write_ptr": _ptr(False),
    "get_read_ptr": _ptr(True),
    "use": _use,
    "get_tile_size": _tile_size,
    "get_dataformat": _dataformat,
    "get_local_cb_interface": _cb_interface,
    "get_arg_val": _arg_val,
    "get_vararg": _vararg,
    "get_arg": _get_arg,
    "get_common_arg_val": _common_arg,
    "get_common_vararg": _common_arg,
    "get_compile_time_arg_val": _ct_arg,
    "get_ct_arg": _ct_arg_t,
    "get_named_compile_time_arg_val": _named_ct_arg,
    "TensorAccessorArgs": _accessor_args,
    "TensorAccessor": _accessor,
    "get_semaphore": _semaphore_addr,
    "get_noc_addr": _noc_addr,
    "get_noc_multicast_addr": _mcast_addr,
    "noc_async_read": _read,
    "make_tensor_accessor_args_tuple": _accessor_args_tuple,
    "make_tensor_accessor_tuple": _accessor_tuple,
    "make_abstract_tensor_accessor_wrappers": _accessor_wrappers,
    "noc_async_read_one_packet": _one_packet_transfer(True),
    "noc_async_write_one_packet": _one_packet_transfer(False),
    "noc_async_read_tile": _page_read,
    "noc_async_read_page": _page_read,
    "noc_async_write": _write,
    "noc_async_write_tile": _page_write(True),
    "noc_async_write_page": _page_write(False),
    "noc_async_read_one_packet_set_state": _classic_stateful("read_one_packet_set_state"),
    "noc_async_read_one_packet_with_state": _classic_stateful("read_one_packet_with_state"),
    "noc_async_read_set_state": _classic_stateful("read_set_state"),
    "noc_async_read_with_state": _classic_stateful("read_with_state"),
    "noc_async_write_one_packet_set_state": _classic_stateful("write_one_packet_set_state"),
    "noc_async_write_one_packet_with_state": _classic_stateful("write_one_packet_with_state"),
    "noc_async_write_set_state": _classic_stateful("write_set_state"),
    "noc_async_write_with_state": _classic_stateful("write_with_state"),
    "noc_async_write_multicast": _mcast_write(False),
    "noc_async_write_multicast_loopback_src": _mcast_write(True),
    "noc_async_read_barrier": _plain(ReadBarrier(), noc_at=0),
    "noc_async_write_barrier": _plain(WriteBarrier(), noc_at=0),
    "noc_async_writes_flushed": _plain(Flush(), noc_at=0),
    "noc_async_atomic_barrier": _plain(AtomicBarrier(), noc_at=0),
    "noc_async_full_barrier": _plain(ReadBarrier(), WriteBarrier(), AtomicBarrier(), noc_at=0),
    "noc_semaphore_set": _sem_set,
    "noc_semaphore_wait": _sem_wait(WaitCond.EQ),
    "noc_semaphore_wait_min": _sem_wait(WaitCond.GE),
    "noc_semaphore_inc": _sem_inc,
    "noc_semaphore_set_multicast": _sem_set_mcast(False),
    "noc_semaphore_set_multicast_loopback_src": _sem_set_mcast(True),
    "noc_semaphore_set_remote": _sem_set_remote,
    "noc_semaphore_inc_multicast": _sem_inc_mcast,
    "noc_inline_dw_write": _inline_write,
    "load_blocking": _load_blocking,
    "tile_regs_acquire": _acquire,
    "tile_regs_commit": _commit,
    "tile_regs_wait": _regs_wait,
    "tile_regs_release": _release,
    "acquire_dst": _acquire_dst,
    "release_dst": _release_dst,
    "pack_tile": _pack,
    "pack_tile_block": _pack_block,
    "pack_block": _pack_block,
    "matmul_block": _matmul_block,
}


FUNCTIONS.update(tilize.FUNCTIONS)


# ------------------------------------------------------------------ Metal 2.0 objects


def method(r: KernelReader, obj: Any, name: str, nodes: list[Any], n: Any, targs: list[Any] | None = None) -> Any:
    """``obj.name(args)`` for the object API's receivers: DataflowBuffer / CircularBuffer, Noc, Semaphore and a
    tensor accessor."""
    receiver = "DataflowBuffer" if isinstance(obj, V.Cb) else "Noc" if isinstance(obj, V.NocObj) else \
        "Semaphore" if isinstance(obj, V.SemAddr) else None
    if receiver is not None:
        signatures.check(r, name, nodes, n, receiver)
    vals = [r.expr(a) for a in nodes]
    if isinstance(obj, V.Table) and name == "size" and not vals:
        return V.const(obj.size)  # a constant array's (std::array's) element count
    if isinstance(obj, V.Cb):
        cb = obj.index
        ops: dict[str, type[Reserve | Push | Wait | Pop]] = {
            "reserve_back": Reserve, "push_back": Push, "wait_front": Wait, "pop_front": Pop}
        if name in ops:
            _need(r, vals, 1, n, name)
            r.emit(ops[name](cb, r.int_of(vals[0], nodes[0], "page count")), n)
            return None
        if name in ("get_write_ptr", "get_read_ptr"):
            return r.pointer(cb, name == "get_read_ptr", n)
        if name in ("get_id", "get_cb_id"):
            return V.const(cb)
        if name in ("get_tile_size", "get_entry_size"):
            return V.const(r.cb_index[cb].entry_size)
        if name == "get_total_num_entries" and not vals:
            # the ring's entries and its L1 bytes (api/dataflow/dataflow_buffer.h:169-172: "num_entries * entry_size";
            # one tile counter a buffer on Wormhole and Blackhole, so the whole ring is the kernel's)
            return V.const(r.cb_index[cb].entries)
        if name == "get_total_size_bytes" and not vals:
            return V.const(r.cb_index[cb].entries * r.cb_index[cb].entry_size)
        if name in ("get_dataformat", "get_data_format"):
            return data_format(r, cb)
        if name in intrinsics.TILE_GEOMETRY and not vals:
            return V.const(intrinsics.TILE_GEOMETRY[name])
        r.refuse(f"DataflowBuffer.{name}", n)
    if isinstance(obj, V.L1Ptr) and obj.cb in r.scratchpads.values():
        return _scratchpad_method(r, obj, name, vals, n)
    if isinstance(obj, V.L1Ptr) and name == "get_address" and not vals:
        return obj.retyped(1)  # a CoreLocalMem's address as a number of bytes (core_local_mem.h:75)
    if isinstance(obj, V.L1Ptr) and name == "scoped_lock":
        return V.Opaque(SCOPED_LOCK)
    if isinstance(obj, V.NocObj):
        return _noc_method(r, name, vals, nodes, n, targs or [])
    if isinstance(obj, V.SemAddr):
        return _sem_method(r, obj.sem, name, vals, nodes, n, targs or [])
    if isinstance(obj, V.Accessor) and name == "get_noc_addr":
        _need(r, vals, 1, n, "get_noc_addr")
        if not isinstance(vals[0], V.Sym):
            r.refuse("tensor page not known statically", n, _why(r, nodes[0], vals[0]))
        # TensorAccessor::get_noc_addr(page_id, offset = 0, noc = noc_index), tensor_accessor.h:155
        off = _page_offset(r, vals[1], nodes[1], n) if len(vals) >= 2 else V.const(0)
        return V.TensorPage(obj.tensor, vals[0], off)
    if isinstance(obj, V.Accessor) and name == "pages":
        return _pages(r, obj, vals, nodes, n)
    if isinstance(obj, V.TensorPage) and name in ("page_id", "noc_addr") and not vals:
        # a page the range yields (api/tensor/page.h:29-37: its global page id, and its NoC address)
        return obj.page if name == "page_id" else obj
    if isinstance(obj, V.AccessorArgs) and name in ("num_compile_time_args", "next_compile_time_args_offset"):
        count = objects.accessor_args_count(r, obj, n)
        return count if name == "num_compile_time_args" else obj.cta + count
    if isinstance(obj, (V.AccessorArgs, V.Accessor)):
        # layout queries (page size, bank base address, next compile-time arg offset): no op needs their value
        return V.Opaque(f"{type(obj).__name__}.{name}")
    why = obj.why if isinstance(obj, V.Opaque) else V.kind(obj)
    r.refuse(f"method {name} of a value not followed", n, f"{r.text(n)}: {why}")


def _pages(r: KernelReader, acc: V.Accessor, vals: list[Any], nodes: list[Any], n: Any) -> Any:
    """``accessor.pages(start, end)`` (api/tensor/tensor_accessor.h:290-294, pages_address_iterator.h:404-440): the
    pages ``start .. end - 1`` of the tensor in order, stride 1, each a ``TensorPage`` whose ``page_id()`` is its
    global page id, as a table a range-for reads one by one. Both bounds must be numbers (an ``end`` of 0, the whole
    tensor, is not followed); a range longer than a loop read iteration by iteration may run is not made. An inverted
    range is no page of an interleaved tensor and refused for a sharded one (its iterator never ends)."""
    bounds = [vals[i] if len(vals) > i else V.const(0) for i in (0, 1)]
    if not all(isinstance(b, V.Sym) and b.is_const for b in bounds) or bounds[1].const == 0:
        why = next((b.why for b in bounds if isinstance(b, V.Opaque)), "bounds not known statically, or end 0")
        return V.Opaque(f"pages of {acc.tensor}: {why}")
    start, end = bounds[0].const, bounds[1].const
    if start > end and acc.tensor in r.host.shards:
        # the sharded iterator steps to the tensor's volume and stays there, never equal to an end below its start
        # (PagesAddressIteratorSharded::operator++, pages_address_iterator.h:52-61; Pages asserts start <= end only
        # under the watcher, :425): the loop runs for ever; the interleaved iterator begins at the end (:307-310)
        r.refuse("pages of a sharded tensor from after their end", n,
                 f"{r.text(n)}: start {start} past end {end}: the sharded page iterator never reaches its end")
    if end - start > V.UNROLL_LIMIT:
        return V.Opaque(f"pages of {acc.tensor}: {end - start} pages, more than {V.UNROLL_LIMIT}")
    ids = range(start, end) if start <= end else range(0)  # an inverted range yields nothing (:424)
    return V.Table(tuple(V.TensorPage(acc.tensor, V.const(i)) for i in ids), len(ids))


#: What ``scoped_lock(...)`` of a ``CoreLocalMem`` or ``Scratchpad`` returns: a ``Lock`` whose acquire and release
#: are cache operations on Quasar's data-movement cores only and no-ops on Wormhole and Blackhole, the targets here
#: (internal/scoped_lock_cache_ops.h:14-30, core_local_mem.h:154-163, api/scratchpad.h:144-147).
SCOPED_LOCK = "a scoped lock (no cache operation on Wormhole / Blackhole)"


def _scratchpad_method(r: KernelReader, pad: V.L1Ptr, name: str, vals: list[Any], n: Any) -> Any:
    """The methods of a ``Scratchpad<T>`` (api/scratchpad.h:79-137) a data-movement kernel calls:
    ``get_base_address()`` its base as a byte address (:107-109), ``local_mem()`` / ``begin()`` the ``T`` array
    at it (:127, :137), ``size_in_bytes()`` the host's size (:90-93), ``size()`` that in ``T`` elements (:79-82),
    ``scoped_lock(offset, n)`` nothing on these targets (``SCOPED_LOCK``). Anything else is refused by name."""
    b = r.cb_index[pad.cb]
    if name == "get_base_address" and not vals:
        return pad.retyped(1)
    if name in ("local_mem", "begin") and not vals:
        return pad
    if name == "size_in_bytes" and not vals:
        return V.const(b.entry_size * b.entries)
    if name == "size" and not vals and pad.elem:
        return V.const(b.entry_size * b.entries // pad.elem)
    if name == "scoped_lock":
        return V.Opaque(SCOPED_LOCK)
    r.refuse(f"Scratchpad.{name}", n, r.text(n))


def _noc_method(r: KernelReader, name: str, vals: list[Any], nodes: list[Any], n: Any, targs: list[Any]) -> Any:
    barriers: dict[str, tuple[ReadBarrier | WriteBarrier | Flush | AtomicBarrier, ...]] = {
        "async_read_barrier": (ReadBarrier(),), "async_write_barrier": (WriteBarrier(),),
                "async_writes_flushed": (Flush(),), "async_atomic_barrier": (AtomicBarrier(),),
                "async_full_barrier": (ReadBarrier(), WriteBarrier(), AtomicBarrier())}
    opts = nocopts.options(r, targs, n)  # evaluated, never matched as text (``nocopts``)
    if name in barriers:
        if name == "async_writes_flushed" and opts.has(nocopts.POSTED):
            # noc_async_posted_writes_flushed (noc.h:761-765): sees posted writes leave, which the reading refuses
            r.refuse("Noc.async_writes_flushed of posted writes", n, r.text(n))
        nocopts.only(r, opts, nocopts.TXN_ID if name in ("async_read_barrier", "async_write_barrier",
                                                          "async_writes_flushed") else 0, f"Noc.{name}", n)
        if opts.has(nocopts.TXN_ID):
            # waits only for the transfers tagged with noc_opts.trid (noc.h:717-722, 738-742, 766-769): the whole
            # barrier when every transfer of its kind carries that id (``nocopts.Tags``, checked at the kernel's end)
            kind = nocopts.READ if name == "async_read_barrier" else nocopts.WRITE
            r.tags.barriers.append((kind, nocopts.trid(r, vals[0] if vals else None, n), r.loc(n), f"Noc.{name}"))
        for op in barriers[name]:
            r.emit(op, n)
        return None
    if name in ("async_read", "async_write"):
        _need(r, vals, 3, n, name)
        # POSTED is refused by the caller (``KernelReader.call``), CUSTOM_VC read there as the write's channel
        nocopts.only(r, opts, nocopts.TXN_ID | nocopts.CUSTOM_VC | nocopts.POSTED, f"Noc.{name}", n)
        src, dst, size = vals[0], vals[1], vals[2]
        sargs = vals[3] if len(vals) > 3 else V.Designated(())
        dargs = vals[4] if len(vals) > 4 else V.Designated(())
        tag = nocopts.trid(r, vals[5] if len(vals) > 5 else None, n) if opts.has(nocopts.TXN_ID) else None
        with r.tagged(tag):
            if name == "async_read":
                r_src = _endpoint(r, src, sargs, n)
                read_into(r, r_src, _local(r, dst, dargs, False, n), size, n)
            else:
                write_from(r, _local(r, src, sargs, True, n), _endpoint(r, dst, dargs, n), size, n)
        return None
    if name == "async_write_multicast":
        # MCAST_INCL_SRC puts the sender in the group (noc.h:509-512), which this reading (loopback false) does not
        nocopts.only(r, opts, 0, f"Noc.{name}", n)
        _need(r, vals, 4, n, name)
        sargs = vals[4] if len(vals) > 4 else V.Designated(())
        dargs = vals[5] if len(vals) > 5 else None
        if not isinstance(dargs, V.Designated) or dargs.get("noc_x_start") is None:
            r.refuse("multicast without its rectangle", n, r.text(n))
        xs = [r.int_of(dargs.get(k), n, "multicast rectangle corner")
              for k in ("noc_x_start", "noc_y_start", "noc_x_end", "noc_y_end")]
        # a buffer as the target is its write pointer plus .offset_bytes (dataflow_buffer.h:614-620,
        # circular_buffer.h:198-205); a MulticastEndpoint's target is its .addr
        target = _local(r, vals[1], dargs, False, n) if isinstance(vals[1], V.Cb) else dargs.get("addr")
        if not isinstance(vals[1], V.Cb) and dargs.get("offset_bytes") is not None:
            r.refuse("multicast at an offset from an endpoint address", n, r.text(n))
        # a ``Noc`` object is the kernel's NoC (``Noc() : noc_id_(noc_index)``, api/dataflow/noc.h:208; the
        # reading takes no other constructor)
        with r.multicast(r.write_vc("NOC_MULTICAST_WRITE_VC"), linked_arg(r, vals, nodes, 6), n):
            mcast_send(r, _local(r, vals[0], sargs, True, n), (xs[0], xs[1], xs[2], xs[3]), vals[2], vals[3], False,
                       n, target, r.kernel.noc)
        return None
    if name in ("set_async_read_state", "async_read_with_state", "set_async_write_state", "async_write_with_state"):
        _noc_stateful(r, name, vals, targs, n)
        return None
    if name == "async_write_zeros":
        _zeros(r, vals, nodes, n)
        return None
    if name == "write_zeros_l1_barrier":
        r.zeros_landed()
        return None
    if name in ("get_noc_id",):
        return V.Opaque("the NoC id")
    r.refuse(f"Noc.{name}", n)


def _zeros(r: KernelReader, vals: list[Any], nodes: list[Any], n: Any) -> None:
    """``noc.async_write_zeros(cb, size_bytes)``: zeroes ``size_bytes`` from the buffer's write pointer by a NoC
    loopback, undefined until ``noc.write_zeros_l1_barrier()`` (``tt_metal/hw/inc/api/dataflow/noc.h``,
    ``async_write_zeros`` overload 1). Part of a constant page built in place (``KernelReader.local_fill``); into
    anything but one page of a buffer's back it is refused by name."""
    _need(r, vals, 2, n, "Noc.async_write_zeros")
    r.noc_reprogrammed(nocstate.WRITE, n)  # a NoC write of zeros (noc.h async_write_zeros)
    if not isinstance(vals[0], V.Cb):
        r.refuse("Noc.async_write_zeros into L1 not a buffer's pages", n, _why(r, nodes[0], vals[0]))
    cb = vals[0].index
    if len(vals) > 2:
        off = vals[2].get("offset_bytes") if isinstance(vals[2], V.Designated) else vals[2]
        if not (isinstance(off, V.Sym) and off.is_const and off.const == 0):
            r.refuse("Noc.async_write_zeros at an offset", n, r.text(n))
    if not r.survey:
        size = r.int_of(vals[1], nodes[1], "zero fill size")
        if size > r.cb_index[cb].entry_size:
            r.refuse("Noc.async_write_zeros of more than one page", n,
                     f"{size} B into {r.cb_index[cb].entry_size} B pages of {r.cb_index[cb].name}")
    # from the write pointer: the page the constant is built in must be the next unfilled one
    r.l1_check(r.pointer(cb, False, n), False, True, r.cb_index[cb].page_tiles,
               "zero fill not into the buffer's next unfilled page", n)
    r.local_fill(cb, n, zeros=True)


def _local(r: KernelReader, obj: Any, args: Any, front: bool, n: Any) -> Any:
    """The L1 side of an object-API transfer: a ``DataflowBuffer`` / ``CircularBuffer`` is its read pointer (as a
    source, ``front``) or write pointer (as a destination) plus ``args.offset_bytes`` (api/dataflow/
    dataflow_buffer.h:595-612, circular_buffer.h:184-197); an address (``CoreLocalMem``) is that address plus
    ``args.offset_bytes`` (core_local_mem.h:191-199)."""
    off = args.get("offset_bytes") if isinstance(args, V.Designated) else None
    if off is not None and not isinstance(off, V.Sym):
        r.refuse("L1 address at an offset not followed", n, f"{r.text(n)}: "
                 f"{off.why if isinstance(off, V.Opaque) else type(off).__name__}")
    if isinstance(obj, V.Cb):
        return r.pointer(obj.index, front, n, off)
    if isinstance(obj, V.L1Ptr) and off is not None:
        return attrs.evolve(obj, offset=obj.offset + off)
    if off is not None and off != V.const(0):
        r.refuse("L1 address at an offset not followed", n, f"{r.text(n)}: .offset_bytes of an address not a "
                 "buffer's")
    return obj


def _endpoint(r: KernelReader, obj: Any, args: Any, n: Any) -> Any:
    """The NoC side of a transfer: a tensor accessor and its ``{.page_id = ...}``."""
    if isinstance(obj, V.Accessor):
        page = args.get("page_id") if isinstance(args, V.Designated) else None
        if not isinstance(page, V.Sym):
            r.refuse("tensor page not known statically", n, _why(r, n, page))
        off = args.get("offset_bytes") if isinstance(args, V.Designated) else None
        if off is not None:  # bytes into the page: a transfer of part of it (``write_from``, ``read_into``)
            return V.TensorPage(obj.tensor, page, _page_offset(r, off, n, n))
        return V.TensorPage(obj.tensor, page)
    if isinstance(obj, V.Unicast):
        # {.noc_x, .noc_y, .addr} on one core (api/dataflow/endpoints.h), as get_noc_addr(x, y, addr)
        d = args if isinstance(args, V.Designated) else V.Designated(())
        if d.get("noc_x") is None or d.get("noc_y") is None or d.get("addr") is None:
            r.refuse("UnicastEndpoint without its core and address", n, r.text(n))
        addr = d.get("addr")
        if isinstance(addr, V.L1Ptr) and d.get("offset_bytes") is not None:
            addr = _local(r, addr, d, False, n)
        elif d.get("offset_bytes") is not None and d.get("offset_bytes") != V.const(0):
            r.refuse("L1 address at an offset not followed", n, f"{r.text(n)}: .offset_bytes of an address not a "
                     "buffer's")
        return V.RemoteAddr(r.site_of(d.get("noc_x"), d.get("noc_y"), n), addr)
    return obj


def _sem_noc(r: KernelReader, name: str, vals: list[Any], nodes: list[Any], n: Any) -> None:
    """The ``const Noc& noc`` first argument of ``Semaphore.name`` (``up`` :197-203, ``set_multicast`` :240-251,
    ``inc_multicast`` :300-309 of ttnn 0.81.1 ``api/semaphore.h``): the call issues on that Noc's index, so one that
    is not the kernel's own ``Noc`` is refused by name (its corners are that NoC's, and the kernel's barriers wait
    on the counters of their own NoC only, ``on_own_noc``)."""
    if r.survey or isinstance(vals[0], V.NocObj):
        return
    why = vals[0].why if isinstance(vals[0], V.Opaque) else \
        f"a {type(vals[0]).__name__}, not the kernel's Noc object (NoC {r.kernel.noc})"
    r.refuse("Semaphore method on another NoC than the kernel's", n,
             f"its Noc {r.text(nodes[0])} is {why}; a barrier waits on its own NoC only (dataflow_api.h:1919-1931)")


def _sem_method(r: KernelReader, sem: int, name: str, vals: list[Any], nodes: list[Any], n: Any,
                targs: list[Any]) -> Any:
    if name == "set":
        _need(r, vals, 1, n, "Semaphore.set")
        sem_set(r, sem, vals[0], nodes[0], n)
        return None
    if name in ("wait", "wait_min"):
        _need(r, vals, 1, n, f"Semaphore.{name}")
        sem_wait(r, sem, WaitCond.EQ if name == "wait" else WaitCond.GE, vals[0], nodes[0], n)
        return None
    if name == "up":
        if len(vals) >= 4:  # up(noc, x, y, value[, vc]): up_remote's noc_semaphore_inc on ``vc``
            # (semaphore_dm_impl.h:235-253), a unicast atomic: its channel is held to the unicast class
            _sem_noc(r, name, vals, nodes, n)
            unicast_vc_arg(r, vals, nodes, 4, n)
            r.emit(SemInc(sem, r.site_of(vals[1], vals[2], n), _increment(r, vals[3], nodes[3], n)), n)
        else:
            # ``up(value)`` of the own word is no NoC atomic on Wormhole and Blackhole: their data-movement bindings
            # always resolve to LOCAL_NONATOMIC (api/dataflow/semaphore_binding_token.h:13-18), whose up is the
            # plain read-modify-write ``*local_ptr(l1_offset, scope) += value`` (semaphore_dm_impl.h:79-93, ttnn
            # 0.81.1): a SemRmw, which loses a write landing between its load and its store (``sem-rmw-race``)
            _need(r, vals, 1, n, "Semaphore.up")
            r.emit(SemRmw(sem, _increment(r, vals[0], nodes[0], n)), n)
        return None
    if name in ("set_multicast", "inc_multicast"):
        k = 6 if name == "set_multicast" else 7
        _need(r, vals, k, n, f"Semaphore.{name}")
        _sem_noc(r, name, vals, nodes, n)  # the kernel's NoC, else refused
        # set_multicast<NocOptions::MCAST_INCL_SRC> is noc_semaphore_set_multicast_loopback_src, the sender in the
        # group (semaphore_dm_impl.h:278-282, api/semaphore.h:236-238); inc_multicast takes no options (:300)
        opts = nocopts.options(r, targs, n)
        nocopts.only(r, opts, nocopts.MCAST_INCL_SRC if name == "set_multicast" else 0, f"Semaphore.{name}", n)
        loopback = opts.has(nocopts.MCAST_INCL_SRC)
        xs = [r.int_of(v, nd, "multicast rectangle corner") for v, nd in zip(vals[1:5], nodes[1:5], strict=True)]
        rect = mcast_rect(r, (xs[0], xs[1], xs[2], xs[3]), loopback, r.kernel.noc, n)
        g = r.shared.group(r.site, rect, loopback)
        # set_multicast(noc, corners, num_dests, linked = false) (:248); inc_multicast is never linked
        linked = name == "set_multicast" and linked_arg(r, vals, nodes, 6)
        with r.multicast(r.write_vc("NOC_MULTICAST_WRITE_VC"), linked, n):
            if name == "set_multicast":
                r.emit(McastSetValid(sem, g, _num_dests(r, vals[5], n), vc=r.write_vc("NOC_MULTICAST_WRITE_VC")), n)
            else:
                r.emit(SemIncMcast(sem, g, _num_dests(r, vals[6], n), r.int_of(vals[5], nodes[5], "increment")),
                       n)
        return None
    if name in ("address", "get_address"):
        return V.SemAddr(sem)
    if name == "value":
        return V.Opaque("a semaphore's value read by the kernel")
    r.refuse(f"Semaphore.{name}", n)


