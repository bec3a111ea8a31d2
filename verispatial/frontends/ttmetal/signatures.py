"""The numbers of arguments each device API function the reading follows (``api.FUNCTIONS``) takes in the pinned ttnn
wheel (0.81.1): per overload, its parameters without a default to all of them, with the header line that declares
it (paths under ``ttnn/tt_metal/hw/inc/``; ``load_blocking`` under ``tt-llk/tt_llk_wormhole_b0/common/inc/``). A call
that no overload takes does not compile, and reading it with the extra arguments dropped, or the missing ones
defaulted, would read another kernel than its author's (``noc_semaphore_set_remote(src, dst, noc_index, 2)``: three
parameters, ``api/dataflow/dataflow_api.h:1709-1730``, the fourth meant as a virtual channel; ``sem.up(noc, x, y)``:
``Semaphore::up`` takes ``(value)`` or ``(noc, x, y, value[, vc])``, ``api/semaphore.h:93, 197-202``), so it is refused
by name (``check``). Where the overloads are told apart by their arguments' types and the reading knows which one it
reads (``get_noc_addr``'s coordinates, local address and address-generator forms), the count is checked against that
overload alone (``check_form``): ``get_noc_addr(x, y, addr, noc, 7)`` matches no overload, though the
address-generator form takes five. ``tests/test_frontend_ttmetal_signatures.py`` checks every entry against the
wheel's headers. Functions the wheel does not declare (``get_vararg`` and ``get_common_vararg`` are generated per
kernel, ``pack_tile_block`` is not in this release) have no entry and are not checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

#: An overload's argument counts: its parameters without a default, and all of them.
Arity = tuple[int, int]

ARITIES: dict[str, tuple[Arity, ...]] = {
    "TensorAccessor": ((1, 1), (2, 2), (3, 3),),  # api/tensor/tensor_accessor.h:641
    "acquire_dst": ((0, 0),),  # api/compute/reg_api.h:32
    "cb_pop_front": ((2, 2),),  # api/compute/cb_api.h:76
    "cb_push_back": ((2, 2),),  # api/compute/cb_api.h:130
    "cb_reserve_back": ((2, 2),),  # api/compute/cb_api.h:92
    "cb_wait_front": ((2, 2),),  # api/compute/cb_api.h:44
    "extract_local_address": ((1, 1),),  # internal/dataflow/noc_address_backend_xy.h:61
    "fast_tilize_block": ((3, 5),),  # api/compute/tilize.h:323
    "get_arg": ((1, 1),),  # experimental/kernel_args.h:68
    "get_arg_val": ((1, 1),),  # api/compute/common.h:87
    "get_common_arg_val": ((1, 1),),  # api/compute/common.h:107
    "get_ct_arg": ((0, 0),),  # api/compile_time_args.h:25
    "get_dataformat": ((0, 0), (1, 1),),  # api/dataflow/dataflow_api.h:302
    "get_local_cb_interface": ((1, 1),),  # internal/circular_buffer_interface.h:129
    "get_named_compile_time_arg_val": ((1, 1),),  # api/compile_time_args.h:83
    "get_noc_addr": ((1, 2), (2, 5),),  # internal/dataflow/dataflow_api_addrgen.h:413
    "get_noc_multicast_addr": ((5, 6),),  # api/dataflow/endpoints.h:52
    "get_read_ptr": ((0, 0), (1, 1),),  # api/dataflow/dataflow_api.h:345
    "get_semaphore": ((1, 1),),  # api/dataflow/dataflow_api.h:1689
    "get_tile_size": ((0, 0), (1, 1),),  # api/dataflow/dataflow_api.h:282
    "get_write_ptr": ((0, 0), (1, 1),),  # api/dataflow/dataflow_api.h:324
    "make_abstract_tensor_accessor_wrappers": ((1, 1), (2, 2),),  # api/tensor/tensor_accessor.h:788
    "make_tensor_accessor_args_tuple": ((0, 0),),  # api/tensor/tensor_accessor_args.h:241
    "make_tensor_accessor_tuple": ((2, 2), (3, 3),),  # api/tensor/tensor_accessor.h:698
    "matmul_block": ((8, 8), (9, 10),),  # api/compute/matmul.h:258
    "noc_async_atomic_barrier": ((0, 1),),  # api/dataflow/dataflow_api.h:2031
    "noc_async_full_barrier": ((0, 1),),  # api/dataflow/dataflow_api.h:2055
    "noc_async_read": ((3, 5),),  # api/dataflow/dataflow_api.h:547
    "noc_async_read_barrier": ((0, 1),),  # api/dataflow/dataflow_api.h:1919
    "noc_async_read_one_packet": ((3, 5),),  # api/dataflow/dataflow_api.h:515
    "noc_async_read_one_packet_set_state": ((2, 4),),  # api/dataflow/dataflow_api.h:575
    "noc_async_read_one_packet_with_state": ((2, 4),),  # api/dataflow/dataflow_api.h:599
    "noc_async_read_page": ((3, 5),),  # api/dataflow/dataflow_api.h:1241
    "noc_async_read_set_state": ((1, 2),),  # api/dataflow/dataflow_api.h:644
    "noc_async_read_tile": ((3, 5),),  # api/dataflow/dataflow_api.h:1278
    "noc_async_read_with_state": ((3, 4),),  # api/dataflow/dataflow_api.h:677
    "noc_async_write": ((3, 5),),  # api/dataflow/dataflow_api.h:875
    "noc_async_write_barrier": ((0, 1),),  # api/dataflow/dataflow_api.h:1948
    "noc_async_write_multicast": ((4, 7),),  # api/dataflow/dataflow_api.h:945
    "noc_async_write_multicast_loopback_src": ((4, 6),),  # api/dataflow/dataflow_api.h:1895
    "noc_async_write_one_packet": ((3, 5),),  # api/dataflow/dataflow_api.h:840
    "noc_async_write_one_packet_set_state": ((2, 4),),  # api/dataflow/dataflow_api.h:981
    "noc_async_write_one_packet_with_state": ((2, 3),),  # api/dataflow/dataflow_api.h:1007
    "noc_async_write_page": ((3, 6),),  # api/dataflow/dataflow_api.h:1416
    "noc_async_write_set_state": ((1, 3),),  # api/dataflow/dataflow_api.h:1053
    "noc_async_write_tile": ((3, 4),),  # api/dataflow/dataflow_api.h:1503
    "noc_async_write_with_state": ((3, 4),),  # api/dataflow/dataflow_api.h:1087
    "noc_async_writes_flushed": ((0, 1),),  # api/dataflow/dataflow_api.h:1977
    "noc_inline_dw_write": ((2, 6),),  # api/dataflow/dataflow_api.h:2216
    "noc_semaphore_inc": ((2, 4),),  # api/dataflow/dataflow_api.h:2397
    "noc_semaphore_inc_multicast": ((3, 5),),  # api/dataflow/dataflow_api.h:2442
    "noc_semaphore_set": ((2, 2),),  # api/dataflow/dataflow_api.h:2169
    "noc_semaphore_set_multicast": ((3, 6),),  # api/dataflow/dataflow_api.h:1771
    "noc_semaphore_set_multicast_loopback_src": ((3, 5),),  # api/dataflow/dataflow_api.h:1838
    "noc_semaphore_set_remote": ((2, 3),),  # api/dataflow/dataflow_api.h:1709
    "noc_semaphore_wait": ((2, 2),),  # api/dataflow/dataflow_api.h:2111
    "noc_semaphore_wait_min": ((2, 2),),  # api/dataflow/dataflow_api.h:2140
    "pack_block": ((3, 4),),  # api/compute/experimental/2_0/pack.h:90
    "pack_tile": ((2, 3),),  # api/compute/pack.h:87
    "pack_untilize_block": ((2, 3), (3, 4),),  # api/compute/pack_untilize.h:249
    "pack_untilize_dest": ((1, 4),),  # api/compute/pack_untilize.h:325
    "read_tile_value": ((2, 2), (3, 3),),  # api/compute/cb_api.h:202
    "release_dst": ((0, 0),),  # api/compute/reg_api.h:82
    "tile_regs_acquire": ((0, 0),),  # api/compute/reg_api.h:50
    "tile_regs_commit": ((0, 0),),  # api/compute/reg_api.h:96
    "tile_regs_release": ((0, 0),),  # api/compute/reg_api.h:106
    "tile_regs_wait": ((0, 0),),  # api/compute/reg_api.h:63
    "tilize_block": ((3, 5),),  # api/compute/tilize.h:160
    "use": ((1, 1),),  # api/dataflow/circular_buffer.h:164
    "TensorAccessorArgs": ((0, 1),),  # api/tensor/tensor_accessor_args.h:118-119
    "get_compile_time_arg_val": ((1, 1),),  # api/compile_time_args.h:64 (a macro)
    "load_blocking": ((1, 1),),  # ckernel.h:149
}

#: The argument counts of ``get_noc_addr``'s overloads, by the form the reading reads a call as (``api._noc_addr``,
#: which tells them apart by the second argument's type): ``(x, y, addr[, noc])``, ``(addr[, noc])`` and
#: ``(id, addrgen[, offset[, noc[, resolver]]])`` (its fifth parameter is an SFINAE ``resolver`` pointer).
NOC_ADDR_FORMS: dict[str, Arity] = {
    "x, y, addr[, noc]": (3, 4),  # internal/dataflow/dataflow_api_addrgen.h:209
    "addr[, noc]": (1, 2),  # internal/dataflow/dataflow_api_addrgen.h:272
    "id, addrgen[, offset[, noc[, resolver]]]": (2, 5),  # internal/dataflow/dataflow_api_addrgen.h:413-419
}

#: The same for the object API's methods the reading follows, by receiver: ``DataflowBuffer`` (also a
#: ``CircularBuffer``: api/dataflow/dataflow_buffer.h, circular_buffer.h), ``Noc`` (api/dataflow/noc.h),
#: ``Semaphore`` (api/semaphore.h: ``up(value)`` :93 and ``up(noc, x, y, value, vc = NOC_UNICAST_WRITE_VC)``
#: :197-202, ``set_multicast`` :241-248 with ``linked = false``, ``inc_multicast`` :300-307).
METHOD_ARITIES: dict[str, dict[str, tuple[Arity, ...]]] = {
    "DataflowBuffer": {"reserve_back": ((1, 1),), "push_back": ((1, 1),), "wait_front": ((1, 1),),
                       "pop_front": ((1, 1),), **{m: ((0, 0),) for m in (
                           "get_write_ptr", "get_read_ptr", "get_id", "get_cb_id", "get_tile_size", "get_entry_size",
                           "get_total_num_entries", "get_total_size_bytes", "get_dataformat", "get_tile_hw",
                           "get_tile_num_faces", "get_tile_r_dim", "get_tile_c_dim")}},
    "Noc": {"async_read_barrier": ((0, 1),), "async_write_barrier": ((0, 1),), "async_writes_flushed": ((0, 1),),
            "async_atomic_barrier": ((0, 0),), "async_full_barrier": ((0, 0),), "async_read": ((5, 6),),
            "async_write": ((5, 6),), "async_write_multicast": ((6, 7),), "set_async_read_state": ((3, 4),),
            "async_read_with_state": ((5, 6),), "set_async_write_state": ((3, 4),),
            "async_write_with_state": ((5, 6),), "async_write_zeros": ((2, 3), (4, 4)),
            "write_zeros_l1_barrier": ((0, 0),), "get_noc_id": ((0, 0),)},
    "Semaphore": {"set": ((1, 1),), "wait": ((1, 1),), "wait_min": ((1, 1),), "up": ((1, 1), (4, 5)),
                  "down": ((1, 1),), "value": ((0, 0),), "set_multicast": ((6, 7),), "inc_multicast": ((7, 7),)},
}


def _counts(arities: tuple[Arity, ...]) -> str:
    """The argument counts ``arities`` allow, in words: ``1, 4 or 5``."""
    counts = [str(k) for k in sorted({k for lo, hi in arities for k in range(lo, hi + 1)})]
    return counts[0] if len(counts) == 1 else f"{', '.join(counts[:-1])} or {counts[-1]}"


def _refuse_count(r: KernelReader, name: str, arities: tuple[Arity, ...], got: int, n: Any, what: str) -> None:
    """Refuses call ``n`` of ``name`` with ``got`` arguments when no overload of ``arities`` takes that many."""
    if any(lo <= got <= hi for lo, hi in arities):
        return
    most, least = max(hi for _, hi in arities), min(lo for lo, _ in arities)
    if got > most:
        r.refuse(f"call to {name} with more arguments than it takes", n,
                 f"{r.text(n)}: {got} arguments, but {what} takes at most {most}: a call that does not compile, and "
                 "the extra ones would be dropped")
    r.refuse(f"call to {name} with {'fewer' if got < least else 'a number of'} arguments "
             f"{'than it takes' if got < least else 'no overload of it takes'}", n,
             f"{r.text(n)}: {got} argument{'s' if got != 1 else ''}, but {what} takes {_counts(arities)}: a call that "
             "does not compile")


def check(r: KernelReader, name: str, args: list[Any], n: Any, receiver: str | None = None) -> None:
    """Refuses call ``n`` of device API function ``name`` (its bare name; with ``receiver``, that class's method)
    with ``args`` when no overload of the vendor's ``name`` takes that many (``ARITIES``, ``METHOD_ARITIES``).
    Raises ``Refused``."""
    arities = ARITIES.get(name) if receiver is None else METHOD_ARITIES[receiver].get(name)
    if receiver is not None:
        name = f"{receiver}.{name}"
    if arities is not None:
        _refuse_count(r, name, arities, len(args), n, f"the vendor's {name}")


def check_form(r: KernelReader, form: str, args: list[Any], n: Any) -> None:
    """Refuses call ``n`` of ``get_noc_addr`` read as its overload ``form`` (``NOC_ADDR_FORMS``) with ``args`` when
    that overload does not take that many. Raises ``Refused``."""
    _refuse_count(r, "get_noc_addr", (NOC_ADDR_FORMS[form],), len(args), n, f"the vendor's get_noc_addr({form})")
