"""GCC builtins and standard-library value constructors kernels compute with, folded when their arguments are numbers
the reading knows.

Each is evaluated as the RISC-V GCC of tt_metal/hw defines it for the kernels' ILP32 target (``int``, ``long`` and
``unsigned`` 32 bits, ``long long`` 64): ``__builtin_clz(x)`` counts the leading zero bits of the 32-bit ``x``,
``__builtin_ctz`` the trailing ones, ``__builtin_popcount`` the ones, ``__builtin_ffs`` is one more than the index of
the lowest set bit (0 for 0), ``__builtin_expect(x, c)`` is ``x`` (GCC manual, "Other Built-in Functions"). ``clz``
and ``ctz`` of 0 are undefined (the manual: "the result is undefined"): refused by name, never given a value. The
kernels use them for logarithms of known counts (sdpa_flash_decode.cpp:144 ``32 - __builtin_clz(n - 1)``, sort's
``ilog2``, cross_core_data_exchange_common.hpp:26) and power-of-two divisions (gather_reader.cpp:111).

A value not known statically gives a value not followed (``Opaque``), refused only where an op needs it.
``std::optional<T>(x)`` / ``std::make_optional(x)`` build an engaged optional of ``x`` (values.Optional).
``get_arg_addr(i)`` is the address of runtime arg ``i`` (values.ArgArray): an array of runtime args read through it
(``noc_x[j]`` of ``(uint32_t*)get_arg_addr(i)``, the cores' coordinates of reader_decode_all.cpp:203-205) reads the
args themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from verispatial.frontends.ttmetal import objects
from verispatial.frontends.ttmetal import values as V
from verispatial.frontends.ttmetal.cpp import TYPE_SIZES
from verispatial.ir.ops import Compute, Operand

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

#: the bit width of each builtin's operand on the kernels' RV32 ILP32 target (``l``: long, 32 bits; ``ll``: 64)
_WIDTH = {"": 32, "l": 32, "ll": 64}


def _clz(x: int, w: int) -> int:
    return w - x.bit_length()


def _ctz(x: int, w: int) -> int:
    return (x & -x).bit_length() - 1


def _popcount(x: int, w: int) -> int:
    return bin(x).count("1")


def _ffs(x: int, w: int) -> int:
    return (x & -x).bit_length()


def _parity(x: int, w: int) -> int:
    return bin(x).count("1") & 1


#: name stem -> (its value of a w-bit unsigned x, whether 0 is undefined)
_BIT_BUILTINS: dict[str, tuple[Callable[[int, int], int], bool]] = {
    "clz": (_clz, True), "ctz": (_ctz, True), "popcount": (_popcount, False), "ffs": (_ffs, False),
    "parity": (_parity, False)}


def _bit_builtin(name: str) -> tuple[Callable[[int, int], int], bool, int] | None:
    """``__builtin_clzll`` -> (clz, undefined at 0, 64)."""
    if not name.startswith("__builtin_"):
        return None
    stem = name.removeprefix("__builtin_")
    for base, (f, undef0) in _BIT_BUILTINS.items():
        if stem.startswith(base) and stem[len(base):] in _WIDTH:
            return f, undef0, _WIDTH[stem[len(base):]]
    return None


#: The tile geometry queries of a buffer (api/dataflow/dataflow_api.h:292-300: ``get_tile_hw`` is
#: ``unpack_tile_r_dim[cb] * unpack_tile_c_dim[cb]``, ``get_tile_num_faces`` ``unpack_tile_num_faces[cb]``;
#: dataflow_buffer.h:276-300 the methods): every host buffer holds 32 x 32 tiles in four 16-row faces
#: (lower.JIT_DESCRIPTORS).
TILE_GEOMETRY = {"get_tile_hw": 32 * 32, "get_tile_num_faces": 4, "get_tile_r_dim": 32, "get_tile_c_dim": 32}


#: the standard library's tuple and pair builders (their elements in order, as a braced ``return {a, b};`` is)
_TUPLES = frozenset({"std::make_tuple", "std::tuple", "std::make_pair", "std::pair", "make_tuple", "make_pair"})


def modelled(name: str) -> bool:
    """Whether ``name`` (a call's name as written, template arguments left out) is evaluated here."""
    return _bit_builtin(name) is not None or name in _SOURCE_PLACE or name in (
        "__builtin_expect", "std::optional", "std::make_optional",
                                                      "optional", "make_optional", "get_arg_addr") \
        or name in ("get_tile_hw", "get_tile_num_faces", "copy_block") or name in _TUPLES or name in _ALIGN


#: GCC's builtins naming the place of a call (the line, file, function): values for messages
_SOURCE_PLACE = frozenset({"__builtin_LINE", "__builtin_FILE", "__builtin_FUNCTION"})

#: api/alignment.h:7-15, on 32-bit words: ``align(addr, a)`` rounds up to a multiple of ``a``, ``align_power_of_2``
#: rounds up for a power-of-two ``a``, ``is_power_of_2(n)``
_ALIGN = frozenset({"align", "align_power_of_2", "is_power_of_2"})


def _align(r: KernelReader, name: str, vals: list[Any], arg_nodes: list[Any], n: Any) -> V.Value:
    """api/alignment.h's helpers on numbers known statically (else a value not followed); ``align`` to 0 divides by
    zero and is refused by name."""
    want = 1 if name == "is_power_of_2" else 2
    if len(vals) != want:
        r.refuse(f"call to {name} with {len(vals)} arguments", n, f"it takes {want}")
    if not all(isinstance(v, V.Sym) and v.is_const for v in vals):
        return V.Opaque(f"{name} of a value not known statically: {r.text(n)}")
    xs = [v.const & 0xFFFFFFFF for v in vals]
    if name == "is_power_of_2":
        return V.const(int(xs[0] != 0 and xs[0] & (xs[0] - 1) == 0))
    addr, a = xs
    if name == "align":
        if a == 0:
            r.refuse("align to 0", n, f"{r.text(n)}: a division by zero")
        return V.const(((addr + a - 1) & 0xFFFFFFFF) // a * a & 0xFFFFFFFF)
    return V.const((((addr - 1) & 0xFFFFFFFF) | ((a - 1) & 0xFFFFFFFF)) + 1 & 0xFFFFFFFF)


def call(r: KernelReader, name: str, vals: list[Any], arg_nodes: list[Any], n: Any) -> V.Value:
    """The value of builtin ``name`` applied to ``vals``. Raises ``Refused`` for ``clz`` / ``ctz`` of 0 (undefined)
    and for a call with the wrong number of arguments."""
    if name == "copy_block":
        _copy_block(r, vals, arg_nodes, n)
        return None
    if name in _ALIGN:
        return _align(r, name, vals, arg_nodes, n)
    if name in _TUPLES:  # std::make_tuple(a, b), std::pair<A, B>(a, b): the elements in order
        return V.Designated(tuple((str(i), v) for i, v in enumerate(vals)))
    if name in ("get_tile_hw", "get_tile_num_faces"):
        if len(vals) != 1:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "it takes a buffer")
        r.cb_of(vals[0], arg_nodes[0])
        return V.const(TILE_GEOMETRY[name])
    if name == "get_arg_addr":
        if len(vals) != 1:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "it takes one")
        i = vals[0]
        if not isinstance(i, V.Sym):
            return V.Opaque(f"the address of a runtime arg at an index not followed: {r.text(arg_nodes[0])}")
        return V.ArgArray(i)
    bit = _bit_builtin(name)
    if bit is not None:
        f, undef0, width = bit
        if len(vals) != 1:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "it takes one")
        x = vals[0]
        if not isinstance(x, V.Sym) or not x.is_const:
            why = x.why if isinstance(x, V.Opaque) else r.text(arg_nodes[0])
            return V.Opaque(f"{name} of a value not known statically: {why}")
        u = x.const & ((1 << width) - 1)  # the operand converted to the builtin's unsigned type, as C converts it
        if u == 0 and undef0:
            r.refuse(f"{name} of 0", n, "undefined in GCC: the hardware's result is not known")
        return V.const(f(u, width))
    if name in _SOURCE_PLACE:
        # the line, file or function of the call (GCC's "Other Built-in Functions"; as a default argument, of the
        # caller: ``uint32_t call_line = __builtin_LINE()``, ternary_sfpu_copy_init.hpp:29, named in a debug
        # sentinel): for messages only, so not followed
        if vals:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "it takes none")
        return V.Opaque(f"{name}(): the source place of a call, not followed")
    if name == "__builtin_expect":
        if len(vals) != 2:
            r.refuse(f"call to {name} with {len(vals)} arguments", n, "it takes two")
        return vals[0]  # a branch-prediction hint: its value is its first argument
    # std::optional<T>(x): an engaged optional; std::optional<T>() an empty one
    if len(vals) > 1:
        r.refuse(f"call to {name} with {len(vals)} arguments", n, "in-place construction is not followed")
    if not vals:
        if name.endswith("make_optional"):
            r.refuse(f"call to {name} without an argument", n)
        return V.Optional(None)
    v = vals[0]
    return v if isinstance(v, V.Optional) else V.Optional(v)


def arg_word(r: KernelReader, arr: V.ArgArray, k: Any, n: Any) -> V.Value:
    """``arr[k]`` (``*arr`` is ``k`` 0) read through a pointer among the runtime args: the runtime arg whose word it
    is, as ``get_arg_val`` reads it (the host's value; every arg 2 in survey mode). Through a type not 32 bits wide,
    at an index not a number, or between two words, the value is not followed."""
    if arr.elem != 4:
        return V.Opaque(f"a runtime arg read through a pointer of {arr.elem} B units: {r.text(n)}")
    if not isinstance(k, V.Sym):
        return k if isinstance(k, V.Opaque) else V.Opaque(f"a runtime arg at an index not followed: {r.text(n)}")
    byte = arr.offset + k.scaled(4)
    if not isinstance(byte, V.Sym) or not byte.is_const or byte.const % 4:
        return V.Opaque(f"a runtime arg at an index not known statically: {r.text(n)}")
    word = arr.index + V.const(byte.const // 4)
    if not isinstance(word, V.Sym) or not word.is_const:
        return V.Opaque(f"a runtime arg at an index not known statically: {r.text(n)}")
    return r.call_api("get_arg_val", [word], n)


def arg_field(r: KernelReader, arr: V.ArgArray, field: str, n: Any) -> V.Value:
    """``a->field`` of a struct laid over the runtime args (``reinterpret_cast<const ArgsRepeat*>(get_arg_addr(0))``,
    data_movement/common/kernels/codegen/reader_tile_interleaved_unified.cpp:179-181): the field at its byte offset
    in the struct (fixed-width fields at their natural alignment, RISC-V ILP32), read as ``arg_word`` reads a word.
    A field of a 32-bit type after fixed-width fields only is followed; a field after one of another type (an array,
    a struct) or not 32 bits wide is a value not followed."""
    at = 0
    for fname, ftype in _layout(r, arr.struct or ""):
        size = TYPE_SIZES.get(ftype)
        if size is None or ftype in ("float", "double"):
            break
        at = (at + size - 1) // size * size
        if fname == field:
            if size != 4:
                break
            return arg_word(r, attrs.evolve(arr, elem=4, struct=None), V.const(at // 4), n)
        at += size
    return V.Opaque(f"a field of {arr.struct} among the runtime args not at a word followed: {r.text(n)}")


def _layout(r: KernelReader, struct: str) -> list[tuple[str, str]]:
    """The fields of ``struct`` in memory order, (name, type name): a single base class's first
    (``struct ArgsSlice : ArgsBase``, reader_tile_interleaved_unified.cpp:51-57: the base subobject at offset 0),
    then its own. A base not followed or several bases end the list with a field of no known type."""
    sd = objects.struct_of(r, struct)
    if sd is None:
        return [("", "")]
    out: list[tuple[str, str]] = []
    if sd.bases is not None:
        names = [x for x in sd.bases.named_children if x.type in ("type_identifier", "qualified_identifier")]
        if len(names) != 1 or len(sd.bases.named_children) != 1:
            return [("", "")]
        out = _layout(r, names[0].text.decode())
    return out + [(f, t) for f, t, _ in sd.fields]


def table(r: KernelReader, init: V.Designated, declarator: Any, tname: str, typ: Any) -> V.Value:
    """The ``const`` array ``declarator`` declares, initialised by the list ``init``: a ``Table`` of its elements
    (nested lists are the rows of a ``[m][n]`` array), its size the declared one (or the list's). A list with
    designators, or anything not an array, stays what it was."""
    if not all(k.isdigit() for k, _ in init.fields):
        return init
    dims: list[int | None] = []
    d = declarator
    while d is not None and d.type == "array_declarator":
        size = d.child_by_field_name("size")
        v = r.expr(size) if size is not None else None
        dims.insert(0, v.const if isinstance(v, V.Sym) and v.is_const else None)
        d = d.child_by_field_name("declarator")
    while typ is not None and typ.type == "qualified_identifier":  # std::array<T, N>
        typ = typ.child_by_field_name("name")
    if not dims:
        if tname != "array" or typ is None or typ.type != "template_type":
            return init  # a struct or a scalar braced
        targs = typ.child_by_field_name("arguments")
        v = r.expr(targs.named_children[-1]) if targs is not None and targs.named_child_count == 2 else None
        dims = [v.const if isinstance(v, V.Sym) and v.is_const else None]

    def build(d: V.Designated, level: int) -> V.Table:
        items = tuple(build(x, level + 1) if isinstance(x, V.Designated) and level + 1 < len(dims) else x
                      for _, x in d.fields)
        size = dims[level]
        return V.Table(items, size if size is not None else len(items))

    return build(init, 0)


def element(r: KernelReader, t: V.Table, k: Any, n: Any) -> V.Value:
    """``t[k]`` of a constant table: the element, at an index known statically inside its bounds; past them the
    read is refused by name (undefined in C++); at an index not known, a value not followed."""
    if not isinstance(k, V.Sym) or not k.is_const:
        return k if isinstance(k, V.Opaque) else V.Opaque(f"an element of a constant table at an index not known "
                                                          f"statically: {r.text(n)}")
    if not 0 <= k.const < t.size:
        r.refuse("index past the end of a constant table", n, f"{k.const} of {t.size} elements")
    return t.at(k.const)


def _copy_block(r: KernelReader, vals: list[Any], nodes: list[Any], n: Any) -> None:
    """``copy_block(cb, start_in, start_dst, ntiles)`` (api/compute/tile_move_copy.h:136-176): ``ntiles``
    consecutive tiles of ``cb``'s front from ``start_in`` into DST ``start_dst`` on: read as the ``ntiles``
    ``copy_tile(cb, start_in + i, start_dst + i)`` it does (one ``Compute`` each, as ``copy_tile`` is read). The tile
    count must be a number."""
    if len(vals) != 4:
        r.refuse(f"call to copy_block with {len(vals)} arguments", n, "it takes four")
    cb = r.cb_of(vals[0], nodes[0])
    count = r.int_of(vals[3], nodes[3], "copy_block tile count")
    start_in, start_dst = vals[1], vals[2]
    if not isinstance(start_in, V.Sym) or not isinstance(start_dst, V.Sym):
        r.refuse("tile index not known statically", n, r.text(n))
    for i in range(count):
        top = r.max_of(start_in + V.const(i), n)  # type: ignore[arg-type]
        r.dst_use([start_dst + V.const(i)], n)
        r.emit(Compute("copy", 1, (Operand(cb, top // r.cb_index[cb].page_tiles + 1),)), n)


def elements(r: KernelReader, v: Any, count: int, n: Any) -> list[Any]:
    """The ``count`` values a structured binding ``auto [a, b, ...] = v`` names: the elements of a braced list or
    tuple, of a constant table, or the fields of a struct in declaration order; of a value not followed, values not
    followed. Raises ``Refused`` when the value has another number of elements (ill-formed C++) or is none of these."""
    if isinstance(v, V.Opaque):
        return [v] * count
    if isinstance(v, V.Designated) and all(k.isdigit() for k, _ in v.fields):
        items: list[Any] = [x for _, x in v.fields]
    elif isinstance(v, V.Table):
        items = [v.at(i) for i in range(v.size)]
    elif isinstance(v, V.Obj):
        items = [x for _, x in v.fields]
    else:
        r.refuse("structured binding of a value not followed", n, f"{r.text(n)}: a {type(v).__name__}")
    if len(items) != count:
        r.refuse("structured binding of another number of elements", n, f"{count} names, {len(items)} elements")
    return items
