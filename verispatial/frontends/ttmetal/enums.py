"""Enumerators as numbers: the values of the enums kernels convert to integers, compare with compile-time args or
switch on (``switch ((uint)data_format & 0x1F)`` in kernel/dataflow/moreh_common.hpp:98,
``tensor_layout == TensorMemoryLayout::INTERLEAVED`` with ``tensor_layout`` a compile-time arg).

Two sources. Enums the kernel or a followed header defines are read from their definitions (``cpp.Program.enums``:
an enumerator without an initializer is one more than the one before it, the first 0, as C++ numbers them). The
device and host headers the front end does not follow are transcribed here, with the file and line each comes from
(ttnn 0.81.1 wheel); an enum that differs between targets is given per target, and an enumerator one target lacks
is not a number on the other.

An enumerator whose value is not known stays an ``EnumConst``, compared with another only by name (values.EnumConst).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.frontends.ttmetal import values as V

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

#: DataFormat, tt_metal/hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines/tensix_types.h:214-234 (Blackhole's,
#: internal/tt-1xx/blackhole/tensix_types.h:213-235, adds Fp8_e4m3 = 26 and Uint8 = 129)
_DATA_FORMAT = {"Float32": 0, "Float16": 1, "Bfp8": 2, "Bfp4": 3, "Bfp2": 11, "Float16_b": 5, "Bfp8_b": 6,
                "Bfp4_b": 7, "Bfp2_b": 15, "Lf8": 10, "Int8": 14, "UInt8": 30, "UInt16": 9, "Int32": 8,
                "UInt32": 24, "Tf32": 4, "testMan7": 0x82, "testMan2": 0x8A, "Invalid": 0xFF}

#: The device and host enums kernels compare, by target name, then enum name.
DEVICE_ENUMS: dict[str, dict[str, dict[str, int]]] = {}
_COMMON: dict[str, dict[str, int]] = {
    # tt_metal/api/tt-metalium/buffer_types.hpp:12-20 and :22-25
    "TensorMemoryLayout": {"INTERLEAVED": 0, "HEIGHT_SHARDED": 2, "WIDTH_SHARDED": 3, "BLOCK_SHARDED": 4,
                           "ND_SHARDED": 5},
    "ShardOrientation": {"ROW_MAJOR": 0, "COL_MAJOR": 1},
    # tt_metal/tt-llk/tt_llk_wormhole_b0/llk_lib/llk_defs.h:24-37 (tt_llk_blackhole the same)
    "ReduceDim": {"REDUCE_ROW": 0, "REDUCE_COL": 1, "REDUCE_SCALAR": 2},
    "PoolType": {"SUM": 0, "AVG": 1, "MAX": 2, "MIN": 3},
    # tt_metal/api/tt-metalium/experimental/fabric/fabric_edm_types.hpp:11 (``using tt::tt_fabric::Topology`` in
    # ttnn/operations/ccl/ccl_host_types.hpp:13): the CCL kernels' compile-time topology
    "Topology": {"NeighborExchange": 0, "Linear": 1, "Ring": 2, "Mesh": 3, "Torus": 4},
    # tt_metal/hw/inc/api/dataflow/noc.h:77-85: the object API's option bits (``nocopts`` reads a call's options)
    "NocOptions": {"DEFAULT": 0, "TXN_ID": 1, "POSTED": 2, "CUSTOM_VC": 4, "MCAST_INCL_SRC": 8, "INLINE_L1": 16,
                   "INLINE_REG": 32},
    # tt_metal/hw/inc/internal/risc_attribs.h:39: ``noc_inline_dw_write``'s target kind
    "InlineWriteDst": {"DEFAULT": 0, "L1": 1, "REG": 2},
}
DEVICE_ENUMS["wormhole_b0"] = {**_COMMON, "DataFormat": _DATA_FORMAT}
DEVICE_ENUMS["blackhole"] = {**_COMMON, "DataFormat": {**_DATA_FORMAT, "Fp8_e4m3": 26, "Uint8": 129}}


def value(r: KernelReader, e: V.EnumConst) -> int | None:
    """The number enumerator ``e`` (``Enum::NAME``, its last two name components) stands for, or None: the kernel's
    own enums first (a name it defines hides a device enum of that name), then the device and host headers'; a
    qualification that names no enum (``ns::NAME``) finds an unscoped enumerator of that name, if only one enum of
    the kernel defines one."""
    scope, _, name = e.name.rpartition("::")
    own = r.prog.enums.get(scope)
    if own is not None:
        return own.get(name)
    dev = DEVICE_ENUMS.get(r.host.target.name, {}).get(scope)
    if dev is not None:
        return dev.get(name)
    return r.prog.unscoped.get(name)


def number(r: KernelReader, v: V.Value) -> V.Value:
    """``v`` as a number where it is an enumerator of known value (C++'s conversion of an enumerator to its
    underlying integer, ``static_cast<uint32_t>(E::X)``); anything else as it is."""
    if isinstance(v, V.EnumConst):
        k = value(r, v)
        if k is not None:
            return V.const(k)
    return v


def is_enum(r: KernelReader, name: str) -> bool:
    """Whether ``name`` (bare or qualified: ``tt::tt_fabric::Topology``) names an enum whose enumerators the reading
    knows: one the kernel or a followed header defines, or one transcribed above for the host's target."""
    bare = name.rsplit("::", 1)[-1]
    return bool(r.prog.enums.get(bare)) or bare in DEVICE_ENUMS.get(r.host.target.name, {})


def converted(r: KernelReader, v: V.Value, name: str) -> V.Value:
    """``E(x)``: the functional cast of ``x`` to the enum ``E`` (``constexpr ReplicateGroup axis =
    ReplicateGroup(cluster_axis);``, moe_gpt/device/kernels/tilize_reader.cpp:326; ``tt::tt_fabric::Topology(
    get_compile_time_arg_val(i))``, all_to_all_combine's writer:118). C++ gives the enum the integer's value (an
    enum's value is its underlying integer, [expr.static.cast]; a scoped enum's underlying type is ``int`` unless it
    says otherwise), so it compares with an enumerator as its number does. An enumerator stays itself; a number
    outside ``[0, 2**31)`` (a scoped enum's ``int`` would not hold it as the same number) and a value not followed are
    not followed."""
    if isinstance(v, V.EnumConst):
        return v
    if isinstance(v, V.Sym) and v.is_const and 0 <= v.const < 2**31:
        return v
    return V.Opaque(f"a conversion to the enum {name} of a value not followed")
