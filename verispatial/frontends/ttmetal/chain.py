"""ttnn's element-wise chain (``compute_kernel_lib::eltwise_chain``, kernel_lib/eltwise/core/chain.inl, 3,473
lines of templates): modelled by name, as the device API is, from the walk ``eltwise_chain_impl`` runs
(chain.inl:3093-3404) and the lifecycle its emitters issue (``emit_wait`` / ``emit_pop`` / ``emit_reserve`` /
``emit_push``, chain.inl:2511-2537, each one ``DataflowBuffer`` call).

For an ``IterationShape`` of ``Ht`` x ``Wt`` tiles in blocks of ``block_size`` (clamped: 1 when an element's
lifecycle is per tile, else at most ``DEST_AUTO_LIMIT / lane_width``, chain.inl:3240-3250), the ops are:

- the upfront waits of the readers and the upfront reserves of the writers (chain.inl:3254-3255, 2953-3002);
- per row, the row-stream waits and per-outer reserves (3262-3276); per block, ``tile_regs_acquire``, each reader's
  per-tile / per-block wait, its ``inner_count`` unpacking computes (``copy_tile``, ``add_tiles``, ...) and its pops,
  each DEST-only element's ``inner_count`` SFPU computes, then each writer's reserve, ``inner_count`` packs and push,
  and ``tile_regs_release`` (2784-2932, 3280-3335); per row the per-outer pushes and row-stream pops (3358-3369);
- the pops and pushes at the end (3378-3379, 3006-3047).

Every op is located at the element it comes from (the chain's own ops at the ``eltwise_chain`` call). What the
model does not cover is refused by name, never approximated: runtime-conditional elements, tile-base addressing
(``Offset`` / ``Strided``), L1 accumulation, ``Cumulative`` waits (their count grows with the walk), blocks over a
count known only at run time, and partial blocks over a count not known statically.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Any

from verispatial.frontends.ttmetal import objects
from verispatial.frontends.ttmetal import values as V
from verispatial.ir.ops import (
    AcquireAcc,
    Compute,
    Loop,
    Op,
    Operand,
    PackAcc,
    Pop,
    Push,
    ReleaseAcc,
    Reserve,
    TripCount,
    Wait,
)
from verispatial.ir.source import SourceLoc

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import Block, KernelReader

#: where the chain lives in the wheel (kernel_lib/eltwise/core/chain.inl): a function of that name defined elsewhere
#: (a kernel's own ``eltwise_chain``) is read as written
CHAIN_FILE = "kernel_lib/eltwise/core/chain.inl"

#: CB-reading and CB-writing elements, by the alias the kernel names (chain.hpp:509-537, bcast.hpp:26): the
#: template parameters in order, with their defaults
READERS = {"CopyTile": ("Input", "DstSlot=0"), "BinaryFpu": ("Op", "AInput", "BInput", "DstSlot=0", "Acc=Disabled"),
           "DestReuseBinary": ("Op", "Input", "ReuseType", "DstSlot=0"),
           "UnaryBcast": ("Dim", "Input", "DstSlot=0")}
WRITERS = {"PackTile": ("Output", "DstSlot=0")}
#: the SFPU op bases whose last template arguments are the DEST slots an element uses (chain.inl:578-644)
DEST_BASES = {"UnaryOp": 1, "BinaryOp": 3, "TernaryOp": 4}

_counter = itertools.count()


def modelled(r: KernelReader, name: str) -> bool:
    """``name`` is the kernel_lib's ``eltwise_chain`` (not a function of the kernel's own of that name), or its
    ``runtime_if`` (refused: a chain position chosen at run time, optional.inl)."""
    hit = r.prog.functions.get(name)
    return name in ("eltwise_chain", "runtime_if") and hit is not None and "kernel_lib/eltwise/" in hit[1].file


def _enum(v: Any) -> str:
    """An enumerator's name (``WaitPolicy::Upfront`` -> ``Upfront``), or "" when ``v`` is not one."""
    return v.name.rsplit("::", 1)[-1] if isinstance(v, V.EnumConst) else ""


def _slot(r: KernelReader, v: Any, n: Any) -> int:
    if isinstance(v, V.Sym) and v.is_const:
        return v.const
    r.refuse("eltwise_chain DEST slot not known statically", n, f"{v}")


def _spec(r: KernelReader, v: Any, n: Any, output: bool = False) -> tuple[V.Operand, str]:
    """An ``input(...)`` / ``output(...)`` spec (the ``InputSpec`` / ``BroadcastInputSpec`` / ``OutputSpec`` structs
    of chain.hpp:343-375) as an operand, with its broadcast dimension."""
    bcast = "None"
    if isinstance(v, V.Obj) and v.struct == "BroadcastInputSpec":
        bcast = _enum(v.get("broadcast"))
        v = v.get("input_spec")
    want = "OutputSpec" if output else "InputSpec"
    if not isinstance(v, V.Obj) or v.struct != want:
        r.refuse(f"eltwise_chain {'output' if output else 'input'} not read", n,
                 f"{type(v).__name__}: not an {want} the reading follows")
    cb = r.cb_of(v.get("cb_id"), n)
    if output:
        op = V.Operand(cb, _enum(v.get("reserve")), _enum(v.get("push")), "Block", _enum(v.get("addressing")),
                       (("dest_accumulation", _enum(v.get("dest_accumulation"))),
                        ("l1_accumulation", _enum(v.get("l1_accumulation")))))
    else:
        op = V.Operand(cb, _enum(v.get("wait")), _enum(v.get("pop")), _enum(v.get("mapping")),
                       _enum(v.get("addressing")))
    if not all((op.wait, op.pop, op.mapping, op.addressing)):
        r.refuse("eltwise_chain policy not known statically", n, f"{v}")
    if op.addressing != "Direct":
        # a runtime tile base shifts every index and window count (chain.inl:552-559)
        r.refuse("eltwise_chain operand with a tile base", n, f"TileAddressing::{op.addressing} of c_{cb}")
    return op, bcast


def _targs(r: KernelReader, name: str, params: tuple[str, ...], args: tuple[Any, ...], n: Any) -> dict[str, Any]:
    if len(args) > len(params):
        r.refuse(f"eltwise_chain element {name} with {len(args)} template arguments", n)
    out: dict[str, Any] = {}
    for i, p in enumerate(params):
        key, _, default = p.partition("=")
        out[key] = args[i] if i < len(args) else (V.const(int(default)) if default.isdigit() else
                                                  V.EnumConst(default) if default else None)
    return out


def _check_buffers(r: KernelReader, name: str, ops: list[V.Operand], vals: list[Any], n: Any) -> None:
    """The ``DataflowBuffer``s an element is constructed with are its specs' buffers, in spec order (chain.hpp:48-66;
    a mismatch trips only a watcher assert on the device)."""
    if len(vals) < len(ops):
        r.refuse(f"eltwise_chain element {name} without its DataflowBuffers", n)
    for op, v in zip(ops, vals, strict=False):
        if not isinstance(v, V.Cb) or v.index != op.cb:
            r.refuse(f"eltwise_chain element {name} bound to another buffer", n,
                     f"spec names c_{op.cb}, constructed with {r.text(n)}")


def element(r: KernelReader, tv: V.TypeInst, vals: list[Any], n: Any) -> V.Value:
    """``T<args>{vals}``: a chain element (``ChainElem``), or a value of any other struct."""
    name, args, loc = tv.name, tv.args, r.loc(n)
    if name == "Optional":  # optional.hpp:48: std::conditional_t<COND, Inner, DisabledChainElement>
        cond = args[0] if args else None
        if not (isinstance(cond, V.Sym) and cond.is_const):
            r.refuse("eltwise_chain Optional on a value not known statically", n, r.text(n))
        if not cond.const:
            return V.ChainElem("disabled", "disabled", loc=loc)
        inner = args[1] if len(args) > 1 else None
        if not isinstance(inner, V.TypeInst):
            r.refuse("eltwise_chain Optional of an element not read", n, r.text(n))
        return element(r, inner, vals, n)
    if name in READERS:
        t = _targs(r, name, READERS[name], args, n)
        slot = _slot(r, t["DstSlot"], n)
        if name == "CopyTile":
            a, _ = _spec(r, t["Input"], n)
            _check_buffers(r, name, [a], vals, n)
            return V.ChainElem("copy", "copy", (a,), None, (slot,), loc)
        if name == "UnaryBcast":
            a, _ = _spec(r, t["Input"], n)
            _check_buffers(r, name, [a], vals, n)
            return V.ChainElem("unary_bcast", f"unary_bcast_{_enum(t['Dim']).lower()}", (a,), None, (slot,), loc)
        if name == "DestReuseBinary":
            a, _ = _spec(r, t["Input"], n)
            _check_buffers(r, name, [a], vals, n)
            return V.ChainElem("dest_reuse", f"{_enum(t['Op']).lower()}_reuse_dest", (a,), None, (slot,), loc)
        a, _ = _spec(r, t["AInput"], n)
        b, bcast = _spec(r, t["BInput"], n)
        if _enum(t["Acc"]) != "Disabled":
            r.refuse("eltwise_chain DEST accumulation", n, f"DestAccumulation::{_enum(t['Acc'])}")
        _check_buffers(r, name, [a, b], vals, n)
        op = _enum(t["Op"]).lower()
        return V.ChainElem("binary_fpu", op if bcast in ("None", "") else f"{op}_bcast_{bcast.lower()}", (a, b), None,
                           (slot,), loc)
    if name in WRITERS:
        t = _targs(r, name, WRITERS[name], args, n)
        o, _ = _spec(r, t["Output"], n, output=True)
        extra = dict(o.extra)
        if extra.get("l1_accumulation") not in ("Disabled", None):
            # packs into one tile at an explicit index (pack_tile<true>), not the packer's running counter
            r.refuse("eltwise_chain L1 accumulation", n, f"L1Accumulation::{extra['l1_accumulation']}")
        if extra.get("dest_accumulation") not in ("Disabled", None):
            r.refuse("eltwise_chain DEST accumulation", n, f"DestAccumulation::{extra['dest_accumulation']}")
        _check_buffers(r, name, [o], vals, n)
        return V.ChainElem("pack", "pack", (), o, (_slot(r, t["DstSlot"], n),), loc)
    sd = objects.struct_of(r, name)
    if sd is None:
        return V.Opaque(f"a {name}, not defined in a followed header")
    base = _dest_base(sd)
    if base is None:
        if _is_chain_tagged(sd):
            r.refuse(f"eltwise_chain element {name}", n, "a runtime-conditional or caller-defined element")
        return objects.construct(r, sd, vals, n, braced=True)  # an ordinary struct value (``NoAccumulation{}``)
    if _BUFFER_CALLS.search(sd.node.text.decode(errors="replace")):
        # an element on the SFPU base that touches buffer pages itself would move pages the model does not issue
        r.refuse(f"eltwise_chain element {name} touching buffer pages", n, "a DEST-only element's body unpacks, packs "
                 "or synchronizes a buffer")
    return V.ChainElem("dest", _op_name(name), (), None, _dest_slots(r, sd, base, args, n), loc)


#: device calls that move or read circular-buffer pages: a DEST-only element whose body makes one is not DEST-only
_BUFFER_CALLS = re.compile(r"\b(cb_\w+|\w*wait_front|\w*pop_front|\w*reserve_back|\w*push_back|copy_tile\w*|"
                           r"pack_\w*tile\w*|unpack\w*|\w+_tiles(?:_bcast\w*)?|reduce_tile)\s*[<(]")


def _op_name(name: str) -> str:
    """``MulBinary`` -> ``mul_binary``: the element's op, as the Compute's kind."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def _splice(dst: Block, src: Block) -> None:
    """Append ``src``'s ops (and their locations, nested paths included) to ``dst``."""
    off = len(dst.ops)
    dst.locs.extend(((path[0] + off, *path[1:]), loc) for path, loc in src.locs)
    dst.ops.extend(src.ops)


def _is_chain_tagged(sd: Any) -> bool:
    text = sd.bases.text.decode() if sd.bases is not None else ""
    return any(tag in text for tag in ("Tag", "RuntimeConditional"))


def _dest_base(sd: Any) -> Any:
    """The ``UnaryOp<...>`` / ``BinaryOp<...>`` / ``TernaryOp<...>`` base of a DEST-only element, if it has one."""
    if sd.bases is None:
        return None
    for b in sd.bases.named_children:
        x = b
        while x is not None and x.type == "qualified_identifier":
            x = x.child_by_field_name("name")
        if x is not None and x.type == "template_type" and x.child_by_field_name("name").text.decode() in DEST_BASES:
            return x
    return None


def _dest_slots(r: KernelReader, sd: Any, base: Any, args: tuple[Any, ...], n: Any) -> tuple[int, ...]:
    """The DEST slots a DEST-only element uses: its base's slot arguments (``BinaryOp<Mask<...>, DataSlot,
    static_cast<Dst>(to_u32(DataSlot) + 1), DataSlot>``, misc.inl) with the element's template arguments bound
    (defaults from the template or its forward declaration); a ``lane_width`` the element declares widens it."""
    plist = sd.template_params
    names = tuple(r.template_param_name(p) for p in plist.named_children) if plist is not None else ()
    defaults = r.defaults(plist, names) if plist is not None else {}
    decl = r.prog.declared.get(f"struct {sd.name}")
    if decl is not None:
        for k, v in r.defaults(decl[0], names).items():
            defaults.setdefault(k, v)
    if len(args) > len(names):
        r.refuse(f"eltwise_chain element {sd.name} with {len(args)} template arguments", n)
    scope: dict[str, Any] = dict(zip(names, args, strict=False))
    saved_scopes, saved_unit = r.scopes, r.unit
    r.scopes, r.unit = [r.scopes[0], scope], sd.unit
    try:
        for p in names[len(args):]:
            if p not in defaults:
                r.refuse(f"eltwise_chain element {sd.name} without template argument {p}", n)
            dv = defaults[p]
            scope[p] = r.template_value(dv) if dv.type in ("type_descriptor", "type_identifier") else r.expr(dv)
        targs = base.child_by_field_name("arguments")
        raw = [x for x in targs.named_children if x.type != "comment"][1:]  # the first is the element itself
        slots = [_slot(r, r.template_value(x) if x.type == "type_descriptor" else r.expr(x), n) for x in raw]
        body = sd.node.child_by_field_name("body")
        for m in body.named_children if body is not None else ():
            if m.type == "field_declaration" and any(d.text == b"lane_width" for d in
                                                     m.children_by_field_name("declarator")):
                lw = r.expr(m.child_by_field_name("default_value"))
                slots.append(_slot(r, lw, n) - 1)
    finally:
        r.scopes, r.unit = saved_scopes, saved_unit
    if len(raw) != DEST_BASES[base.child_by_field_name("name").text.decode()]:
        r.refuse(f"eltwise_chain element {sd.name}: DEST slots not read", n, r.text(base))
    return tuple(slots)


# ------------------------------------------------------------------ the walk


def _dest_limit(r: KernelReader) -> int:
    """``DEST_AUTO_LIMIT`` (kernel_lib/dest_helpers.hpp:87-96): half-sync DEST holds 8 16-bit or 4 32-bit tiles
    (the host format has no full-sync option)."""
    return 4 if r.kernel.fp32_dest_acc_en else 8


def _lane_width(e: V.ChainElem) -> int:
    return max(e.slots) + 1 if e.kind != "disabled" else 1


def _supports_block(e: V.ChainElem) -> bool:
    """chain.inl:1587-1615: every lifecycle is block-invariant or per block."""
    def inp(o: V.Operand) -> bool:
        return (o.wait in ("Upfront", "Cumulative", "None") and o.pop in ("None", "AtEnd")) or \
            (o.wait == "PerBlockSize" and o.pop == "PerBlockSize")

    if e.kind == "pack":
        assert e.out is not None
        o = e.out
        return {"None": o.pop in ("None", "AtEnd"), "PerTile": False, "PerBlockSize": o.pop == "PerBlockSize",
                "Upfront": o.pop in ("PerBlockSize", "AtEnd"), "PerOuter": o.pop == "PerOuter",
                "OneUpfront": o.pop == "OneAtEnd"}.get(o.wait, False)
    return all(inp(o) for o in e.ins)


def _window(o: V.Operand, ht: int, wt: int) -> int:
    """chain.inl:707-718: the tiles an upfront window holds for a mapping."""
    return {"Block": ht * wt, "Row": wt, "Col": ht}.get(o.mapping, 1)


class _Walk:
    """The ops of one ``eltwise_chain`` call, appended to the reader's current block."""

    def __init__(self, r: KernelReader, elems: list[V.ChainElem], call_loc: SourceLoc, n: Any) -> None:
        self.r, self.elems, self.loc, self.n = r, elems, call_loc, n
        self.tiles = 1  # the acquire's DST tiles: the largest slot used + 1
        self.dtype = "fp32" if r.kernel.fp32_dest_acc_en else "bf16"

    def add(self, block: Block, op: Op, loc: SourceLoc | None = None) -> None:
        block.add(op, loc or self.loc)

    def int_count(self, v: Any, what: str) -> int:
        if isinstance(v, V.Sym) and v.is_const:
            return v.const
        self.r.refuse(f"eltwise_chain {what} not known statically", self.n, f"{self.r.text(self.n)}: {v}")

    def pages(self, o: V.Operand, top_tile: int) -> int:
        """The pages an unpack of tiles ``0 .. top_tile`` of ``o``'s front reads."""
        pt = self.r.cb_index[o.cb].page_tiles
        return top_tile // pt + 1

    def block_body(self, block: Block, c: int, bss: int, ht_max: int, wt_total: int | None, lane_w: int) -> None:
        """One block of ``c`` tiles (``bss`` of them synchronized, chain.inl:3278-3352), appended to ``block``."""
        first = len(block.ops)
        self.add(block, AcquireAcc(1, self.dtype))
        top = 0
        for e in self.elems:
            if e.kind in ("disabled", "pack"):
                continue
            if e.kind == "dest":
                for j in range(c):
                    top = max(top, j * lane_w + max(e.slots))
                    self.add(block, Compute(e.name), e.loc)
                continue
            sides = list(e.ins)
            if e.kind == "binary_fpu" and sides[0].cb == sides[1].cb:
                sides_sync = sides[:1]  # same_dfb: the B side's wait and pop are skipped (chain.inl:2820-2829)
            else:
                sides_sync = sides
            for o in sides_sync:
                if o.wait == "PerTile" and o.mapping != "Col":
                    self.add(block, Wait(o.cb, 1), e.loc)
                elif o.wait == "PerBlockSize":
                    self.add(block, Wait(o.cb, bss), e.loc)
                elif o.wait == "Cumulative":
                    self.r.refuse("eltwise_chain Cumulative wait", self.n,
                                  f"c_{o.cb}: its count grows with the walk (chain.inl:2817)")
            for j in range(c):
                ins = []
                for o in sides:
                    local = o.wait == "PerBlockSize" and o.pop == "PerBlockSize"
                    if o.mapping == "Scalar" or (o.mapping == "Col" and o.wait == "PerTile" and o.pop == "PerTile"):
                        idx = 0
                    elif o.mapping == "Col":
                        idx = ht_max
                    elif o.mapping == "Row":
                        if wt_total is None:
                            self.r.refuse("eltwise_chain Row operand over a runtime count", self.n, f"c_{o.cb}")
                        idx = wt_total - 1
                    elif local:
                        idx = j
                    else:
                        if wt_total is None:
                            self.r.refuse("eltwise_chain Block operand over a runtime count", self.n, f"c_{o.cb}")
                        idx = (ht_max + 1) * wt_total - 1
                    ins.append(Operand(o.cb, self.pages(o, idx)))
                top = max(top, j * lane_w + max(e.slots))
                self.add(block, Compute(e.name, 1, tuple(ins)), e.loc)
            for o in sides_sync:
                if o.pop == "PerTile" and o.mapping != "Col":
                    self.add(block, Pop(o.cb, 1), e.loc)
                elif o.pop == "PerBlockSize":
                    self.add(block, Pop(o.cb, bss), e.loc)
        for e in self.elems:
            if e.kind != "pack":
                continue
            assert e.out is not None
            o = e.out
            if o.wait == "PerTile":
                self.add(block, Reserve(o.cb, 1), e.loc)
            elif o.wait == "PerBlockSize":
                self.add(block, Reserve(o.cb, bss), e.loc)
            for j in range(c):
                top = max(top, j * lane_w + max(e.slots))
                self.add(block, PackAcc(o.cb, 1), e.loc)
            if o.pop == "PerTile":
                self.add(block, Push(o.cb, 1), e.loc)
            elif o.pop == "PerBlockSize":
                self.add(block, Push(o.cb, bss), e.loc)
        self.add(block, ReleaseAcc())
        block.ops[first] = AcquireAcc(top + 1, self.dtype)
        self.tiles = max(self.tiles, top + 1)


def run(r: KernelReader, vals: list[Any], nodes: list[Any], n: Any) -> None:
    """``eltwise_chain(shape, elements...)``: its ops appended where it is called. Raises ``Refused``."""
    if r.text(n).split("(", 1)[0].split("<", 1)[0].rsplit("::", 1)[-1] == "runtime_if":
        r.refuse("eltwise_chain runtime_if", n, "elements chosen at run time (kernel_lib/eltwise/core/optional.hpp)")
    if r.acc is not None:
        r.refuse("eltwise_chain while DST is held", n, "the chain acquires DST itself (chain.inl:3282)")
    if not vals or not isinstance(vals[0], V.Obj) or vals[0].struct != "IterationShape":
        r.refuse("eltwise_chain shape not read", n, r.text(n))
    shape = vals[0]
    elems = []
    for v, node in zip(vals[1:], nodes[1:], strict=True):
        if not isinstance(v, V.ChainElem):
            r.refuse("eltwise_chain element not read", node, f"{r.text(node)}: {type(v).__name__}")
        elems.append(v)
    walk = _Walk(r, elems, r.loc(n), n)
    ht_v, wt_v = shape.get("Ht"), shape.get("Wt")
    if not (isinstance(ht_v, V.Sym) and ht_v.is_const):
        r.refuse("eltwise_chain rows not known statically", n, f"{r.text(n)}: {ht_v}")
    ht = ht_v.const
    wt_trip = isinstance(wt_v, V.Sym) and not wt_v.loops and wt_v.trip is not None
    if not wt_trip:
        wt_const = walk.int_count(wt_v, "tile count")
        if ht == 0 or wt_const == 0:
            return  # an empty walk issues nothing, not even the upfront waits (chain.inl:3231-3236)
    elif ht == 0:
        return
    wt: int | None = None if wt_trip else wt_const
    lane_w = max((_lane_width(e) for e in elems), default=1)
    bs = walk.int_count(shape.get("block_tiles"), "block size") or 1
    full = _enum(shape.get("tail_sync")) == "FullBlock"
    if not all(_supports_block(e) for e in elems):
        bs = 1  # chain.inl:3240-3244
    else:
        bs = min(bs, _dest_limit(r) // lane_w)
    here = r.blocks[-1]
    # upfront waits and reserves (chain.inl:3254-3255)
    for e in elems:
        if e.kind == "pack":
            assert e.out is not None
            if e.out.wait == "Upfront":
                if wt is None:
                    r.refuse("eltwise_chain upfront reserve over a runtime count", n, f"c_{e.out.cb}")
                walk.add(here, Reserve(e.out.cb, ht * wt), e.loc)
            elif e.out.wait == "OneUpfront":
                walk.add(here, Reserve(e.out.cb, 1), e.loc)
            continue
        if e.kind in ("disabled", "dest"):
            continue
        sides = e.ins[:1] if e.kind == "binary_fpu" and e.ins[0].cb == e.ins[1].cb else e.ins
        for o in sides:
            if o.wait == "Upfront":
                if wt is None:
                    r.refuse("eltwise_chain upfront wait over a runtime count", n, f"c_{o.cb}")
                walk.add(here, Wait(o.cb, ht * wt if o.pop == "PerTile" else _window(o, ht, wt)), e.loc)
    # the rows (chain.inl:3260-3370)
    row = r.new_block(True)
    for e in elems:
        for o in e.ins[:1] if e.kind == "binary_fpu" and e.ins[0].cb == e.ins[1].cb else e.ins:
            if o.wait == "PerTile" and o.pop == "PerTile" and o.mapping == "Col":
                walk.add(row, Wait(o.cb, 1), e.loc)
        if e.kind == "pack" and e.out is not None and e.out.wait == "PerOuter":
            if wt is None:
                r.refuse("eltwise_chain per-row reserve over a runtime count", n, f"c_{e.out.cb}")
            walk.add(row, Reserve(e.out.cb, wt), e.loc)
    k = next(_counter)
    if wt is None:
        if bs != 1:
            r.refuse("eltwise_chain blocks over a runtime count", n,
                     f"block size {bs} over {r.text(nodes[0])}: the last block's size is not known statically")
        assert isinstance(wt_v, V.Sym)
        assert wt_v.trip is not None
        tname, coef = wt_v.trip
        count: int | str | TripCount = tname if (coef, wt_v.const) == (1, 0) else TripCount(tname, coef, wt_v.const)
        body = r.new_block(False)
        walk.block_body(body, 1, 1, ht - 1, None, lane_w)
        row.add_container(Loop(f"ckl_w{k}", count, tuple(body.ops)), walk.loc, body)
    else:
        nfull, tail = divmod(wt, bs)
        if nfull:
            body = r.new_block(True)
            walk.block_body(body, bs, bs, ht - 1, wt, lane_w)
            if nfull == 1:
                _splice(row, body)
            else:
                row.add_container(Loop(f"ckl_w{k}", nfull, tuple(body.ops)), walk.loc, body)
        if tail:
            walk.block_body(row, tail, bs if full else tail, ht - 1, wt, lane_w)
    for e in elems:
        if e.kind == "pack" and e.out is not None and e.out.pop == "PerOuter":
            assert wt is not None
            walk.add(row, Push(e.out.cb, wt), e.loc)
        for o in e.ins[:1] if e.kind == "binary_fpu" and e.ins[0].cb == e.ins[1].cb else e.ins:
            if o.wait == "PerTile" and o.pop == "PerTile" and o.mapping == "Col":
                walk.add(row, Pop(o.cb, 1), e.loc)
    if ht == 1:
        _splice(here, row)
    else:
        here.add_container(Loop(f"ckl_h{k}", ht, tuple(row.ops)), walk.loc, row)
    # pops and pushes at the end (chain.inl:3378-3379)
    for e in elems:
        if e.kind == "pack":
            assert e.out is not None
            if e.out.pop == "AtEnd":
                walk_out = e.out.wait in ("Upfront", "None")
                if walk_out and wt is None:
                    r.refuse("eltwise_chain push at end over a runtime count", n, f"c_{e.out.cb}")
                walk.add(here, Push(e.out.cb, ht * wt if walk_out and wt is not None else 1), e.loc)
            elif e.out.pop == "OneAtEnd":
                walk.add(here, Push(e.out.cb, 1), e.loc)
            continue
        if e.kind in ("disabled", "dest"):
            continue
        sides = e.ins[:1] if e.kind == "binary_fpu" and e.ins[0].cb == e.ins[1].cb else e.ins
        for o in sides:
            if o.pop == "AtEnd":
                if wt is None:
                    r.refuse("eltwise_chain pop at end over a runtime count", n, f"c_{o.cb}")
                walk.add(here, Pop(o.cb, _window(o, ht, wt)), e.loc)
