"""The SFPU operations of the compute API: functions whose first parameter is a DST index (``idst``) and that
work on DST tiles only, never on a circular buffer (``ALWI void NAME_tile(uint32_t idst, ...)`` in
tt_metal/hw/inc/api/compute/**, ttnn 0.81.1). A compute call of one of these is a ``Compute`` on the accumulator;
any other unknown call is refused, so a function that unpacks circular-buffer pages is never read as one of these.

The topk family (``TOPK_DST_TILES``) works on DST tiles its arguments do not name; each function's set of tiles is
transcribed from its LLK (below), so the accumulator's count holds every tile it reads or writes.
"""

from __future__ import annotations

import attrs

SFPU_OPS = frozenset({
    "abs_tile", "acos_tile", "acosh_tile", "add_binary_tile", "add_int_tile", "add_rsqrt_tile", "add_unary_tile",
    "addcdiv_tile", "addcmul_tile", "alt_complex_rotate90_tile", "asin_tile", "asinh_tile", "atan2_binary_tile",
    "atan_tile", "atanh_tile", "binary_left_shift_tile", "binary_logical_right_shift_tile", "binary_max_int32_tile",
    "binary_max_tile", "binary_max_uint32_tile", "binary_min_int32_tile", "binary_min_tile", "binary_min_uint32_tile",
    "binary_right_shift_tile", "bitwise_and_binary_tile", "bitwise_and_tile", "bitwise_not_tile",
    "bitwise_or_binary_tile", "bitwise_or_tile", "bitwise_xor_binary_tile", "bitwise_xor_tile", "cbrt_tile",
    "ceil_tile", "celu_tile", "clamp_tile", "cos_tile", "cosh_tile", "cumsum_tile", "dequant_int8_tile",
    "dequant_tile", "digamma_tile", "div_binary_tile", "div_int32_floor_tile", "div_int32_tile",
    "div_int32_trunc_tile", "div_unary_tile", "dropout_tile", "elu_tile", "eq_binary_tile", "eq_int_tile", "eqz_tile",
    "erf_tile", "erfc_tile", "erfinv_tile", "exp2_tile", "exp_tile", "expm1_tile", "fill_tile", "floor_tile",
    "fmod_binary_tile", "fmod_int32_tile", "fmod_tile", "frac_tile", "gcd_tile", "ge_binary_tile", "ge_int_tile",
    "gelu_derivative_tile", "gelu_tanh_tile", "gelu_tile", "gez_tile", "gt_binary_tile", "gt_int_tile", "gtz_tile",
    "hardmish_tile", "hardshrink_tile", "hardsigmoid_tile", "hardtanh_tile", "heaviside_tile", "i0_tile", "i1_tile",
    "identity_tile", "isclose_binary_tile", "isfinite_tile", "isinf_tile", "isnan_tile", "isneginf_tile",
    "isposinf_tile", "lcm_tile", "le_binary_tile", "le_int_tile", "leaky_relu_tile", "left_shift_tile", "lerp_tile",
    "lez_tile", "lgamma_adjusted_tile", "lgamma_stirling_float_tile", "lgamma_stirling_tile", "log1p_tile",
    "log_tile", "log_with_base_tile", "logaddexp2_binary_tile", "logaddexp_binary_tile", "logical_not_tile",
    "logsigmoid_tile", "lt_binary_tile", "lt_int_tile", "ltz_tile", "mac_tile", "mask_posinf_tile", "mask_tile",
    "mish_tile", "mul_binary_tile", "mul_int_tile", "mul_unary_tile", "ne_binary_tile", "ne_int_tile",
    "negative_tile", "nextafter_bf16_binary_tile", "nextafter_binary_tile", "nez_tile", "polygamma_tile",
    "power_binary_tile", "power_iterative_tile", "power_tile", "prelu_tile", "quant_int8_tile", "quant_tile",
    "rand_tile", "rdiv_tile", "recip_tile", "relu_max_tile", "relu_min_tile", "relu_tile", "remainder_binary_tile",
    "remainder_int32_tile", "remainder_tile", "remainder_uint32_tile", "requant_int8_in_int8_out_tile",
    "requant_int8_in_tile", "requant_int8_tile", "requant_tile", "reshuffle_rows_tile", "right_shift_tile",
    "round_tile", "rpow_tile", "rsqrt_tile", "rsub_binary_tile", "rsub_int_tile", "rsub_tile",
    "rsub_unary_int32_tile", "rsub_unary_tile", "selu_tile", "sigmoid_tile", "sign_tile", "signbit_tile", "silu_tile",
    "sin_tile", "sinh_tile", "situ_glu_tile", "snake_beta_tile", "softcap_tile", "softplus_tile", "softshrink_tile",
    "softsign_tile", "sqrt_tile", "square_tile", "stochastic_round_tile", "sub_binary_tile", "sub_int_tile",
    "sub_unary_tile", "tan_tile", "tanh_derivative_tile", "tanh_tile", "tanhshrink_tile", "threshold_tile",
    "tiled_prod_tile", "trunc_tile", "typecast_tile", "unary_eq_tile", "unary_ge_tile", "unary_gt_tile",
    "unary_le_tile", "unary_lt_tile", "unary_max_int32_tile", "unary_max_tile", "unary_max_uint32_tile",
    "unary_min_int32_tile", "unary_min_tile", "unary_min_uint32_tile", "unary_ne_tile", "where_tile", "xielu_tile",
    "xlogy_binary_tile",
})

#: The DST-only operations whose names do not end in ``_tile`` (``fill_tile_int``, the ``*_pack`` variants PACK runs,
#: the int variants): the same ``ALWI void NAME(uint32_t idst, ...)`` signature with no circular-buffer
#: parameter, and bodies of ``MATH(...)`` / ``PACK(...)`` SFPU calls only, no ``UNPACK`` (checked against ttnn
#: 0.81.1). Left out on purpose: ``reduce_tile_math`` (it reduces source registers some other call unpacked),
#: ``transpose_dest`` and ``topk_xl_local_sort`` / ``_rebuild`` (they call UNPACK), ``pack_rows_to_addr`` (it packs to an
#: L1 address).
SFPU_OPS_MORE = frozenset({
    "abs_tile_int32", "add_unary_tile_int32", "clamp_tile_int32", "clamped_silu_glu_tile",
    "copy_dest_values", "eq_int_tile_dispatch",
    "eqz_tile_int32", "eqz_tile_uint16", "eqz_tile_uint32", "exp_packthread_tile", "fill_tile_bitcast",
    "fill_tile_int", "gelu_tanh_tile_pack", "gelu_tile_pack", "gez_tile_int32", "gtz_tile_int32",
    "hardsigmoid_tile_pack", "hardtanh_tile_pack", "identity_tile_uint32", "lez_tile_int32", "ltz_tile_int32",
    "max_reduce_with_indices", "negative_tile_int32", "nez_tile_int32", "nez_tile_uint16", "nez_tile_uint32",
    "rel_int_tile_dispatch", "relu_max_tile_int32", "relu_max_tile_pack", "relu_max_tile_uint16",
    "relu_max_tile_uint32", "relu_min_tile_int32", "relu_min_tile_uint16", "relu_min_tile_uint32", "relu_tile_int32",
    "remainder_tile_uint32", "selu_tile_pack", "sfpu_add_int", "sfpu_sum_int_col", "sfpu_sum_int_row",
    "sigmoid_tile_pack", "signbit_tile_int32", "silu_tile_pack", "softplus_tile_pack", "sub_unary_tile_int32",
    "tanh_tile_pack", "unary_eq_tile_int32", "unary_ge_tile_int32", "unary_gt_tile_int32", "unary_le_tile_int32",
    "unary_lt_tile_int32", "unary_ne_tile_int32",
})

#: Left out of both: the ``topk_*`` family (modelled below, ``TOPK_DST_TILES``), ``block_max8``, ``csa_index_remap``
#: and ``sfpu_reduce``, which work on several DST tiles from their ``idst`` that their arguments do not name; read as
#: one-tile ops they would under-count DST. The last three stay refused by name: ``block_max8`` and
#: ``csa_index_remap`` exist on Blackhole only (experimental/block_max8.h, csa_index_remap.h:14 ``#if
#: defined(ARCH_BLACKHOLE)``), and ``sfpu_reduce``'s tiles depend on its ``ct_dim`` / ``rt_dim`` and reduce
#: direction (compute_kernel_api.h:757), not transcribed yet. ``topk_xl_*`` (experimental/topk_xl.h) unpack
#: circular-buffer pages themselves (``UNPACK``) and stay refused by name too.


@attrs.frozen
class DstTiles:
    """The DST tiles (indices into the acquired half, as ``AcquireAcc`` counts them) one topk-family call reads or
    writes, as its LLK addresses them (ttnn 0.81.1; 0.72.0's ``topk_local_sort`` / ``_merge`` / ``_rebuild``,
    compute_kernel_api.h:546, 584, 622, call the same LLK, its ckernel_sfpu_topk.h:24-30, 32-47, 398-569).

    Two addressing rules of tt_llk_wormhole_b0/common/inc/sfpu/ckernel_sfpu_topk.h decide them: an SFPU address
    counts DST rows, 64 a tile (``dst_indices_offset = 128; // 2 tile x 64 rows per tile``, :492), and the topk
    ``set_dst_write_addr(addr)`` (:33-38) sets the row address from the start of the acquired half, *not* from the
    ``idst`` ``SFPU_UNARY_CALL`` started at (llk_math_eltwise_sfpu_common.h:17-22), so a call reaches tiles 0..3 of
    the half whatever its ``idst``.

    - ``at``: (argument position, offset) pairs, tile ``args[pos] + offset`` (the argument a DST index);
    - ``absolute``: tiles of the half whatever the arguments;
    - ``capped``: (argument position, cap), tile ``min(args[pos], cap)`` (an ``if (i == 0) ... else`` or a
      ``switch`` whose last branch is the default, release builds not checking the ``LLK_ASSERT``);
    - ``runs``: (argument position, first tile), tiles ``first .. first + args[pos] - 1`` (a count of tiles).
    ``source`` cites the header and LLK lines."""

    source: str
    at: tuple[tuple[int, int], ...] = ()
    absolute: tuple[int, ...] = ()
    capped: tuple[tuple[int, int], ...] = ()
    runs: tuple[tuple[int, int], ...] = ()


_NETWORK = ("; four passes of the network, the first at the SFPU base idst (values rows 0..127, index rows "
            "128..255 = tiles idst..idst+3: bitonic_topk_load8/store8, ckernel_sfpu_topk.h:490-532), the next three "
            "at absolute rows 2, 16, 18 of the half (set_dst_write_addr(dst_addr_offset)")

#: The topk family (api/compute/topk.h, ttnn 0.81.1): per function, the DST tiles it reads or writes. Index
#: tracking (the index tiles at +2, +3) is counted in every mode: the fused mode's network leaves them alone
#: (``ldst_count = FUSED ? 4 : 8``, :961) but its slab's ``topk_fuse_tile`` reads them, and counting a tile not
#: touched can only refuse or refute, never prove. ``topk_tile_init`` configures the SFPU only (an ``_init``, read as
#: nothing); ``topk_tie_order_from_global_direction`` is a ``constexpr`` value (``tie_order_from_global_direction``).
TOPK_DST_TILES: dict[str, DstTiles] = {
    "topk_local_sort": DstTiles(
        "topk.h:79-96 SFPU_UNARY_CALL(calculate_bitonic_topk_phases_steps, idst, RC_custom) -> "
        "_bitonic_topk_phases_steps, ckernel_sfpu_topk.h:948-1165" + _NETWORK + ", :1159-1162)",
        at=((0, 0), (0, 1), (0, 2), (0, 3)), absolute=(0, 1, 2, 3)),
    "topk_merge": DstTiles(
        "topk.h:141-162 SFPU_UNARY_CALL(calculate_bitonic_topk_merge, idst, RC_custom) -> _bitonic_topk_merge, "
        "ckernel_sfpu_topk.h:1176-1314" + _NETWORK + ", :1309-1312)",
        at=((0, 0), (0, 1), (0, 2), (0, 3)), absolute=(0, 1, 2, 3)),
    "topk_rebuild": DstTiles(
        "topk.h:206-222 SFPU_UNARY_CALL(calculate_bitonic_topk_rebuild, idst, RC_custom) -> _bitonic_topk_rebuild, "
        "ckernel_sfpu_topk.h:1323-1598" + _NETWORK + ", :1592-1595)",
        at=((0, 0), (0, 1), (0, 2), (0, 3)), absolute=(0, 1, 2, 3)),
    "topk_fuse_tile": DstTiles(
        "topk.h:256-264 -> _topk_fuse_tile_, ckernel_sfpu_topk.h:220-254: set_dst_write_addr(0), 64 vectors of 2 "
        "rows at rows 0 (values, tiles 0..1) and 128 (indices, tiles 2..3) of the half; idst is only the start",
        absolute=(0, 1, 2, 3)),
    "topk_defuse_tile": DstTiles(
        "topk.h:284-293 -> _topk_defuse_tile_(num_tiles), ckernel_sfpu_topk.h:257-292: set_dst_write_addr(0), the "
        "recorded body once (rows 0 and 128: tiles 0 and 2) then 32 * num_tiles - 1 replays, values at tiles "
        "0..num_tiles-1, indices at tiles 2..num_tiles+1",
        absolute=(0, 2), runs=((1, 0), (1, 2))),
    "topk_stamp_local_positions": DstTiles(
        "topk.h:319-327 -> _topk_stamp_local_positions_, ckernel_sfpu_topk.h:431-435: "
        "_topk_stamp_tile_rank_range_ on tiles 0 and 1 (set_dst_write_addr(dst_tile_index * 64), :363)",
        absolute=(0, 1)),
    "topk_stamp_tile_rank_range": DstTiles(
        "topk.h:352-362 -> _topk_stamp_tile_rank_range_(dst_tile_index, rank_base), ckernel_sfpu_topk.h:348-421: "
        "set_dst_write_addr(dst_tile_index * 64), one tile (:363)",
        at=((1, 0),)),
    "topk_canonicalize_negzero_values": DstTiles(
        "topk.h:370-378 -> calculate_topk_canonicalize_negzero (llk_sfpu/ckernel_sfpu_topk.h:101-106, a no-op "
        "unless 32-bit DEST) -> _topk_canonicalize_negzero_value_tiles_, ckernel_sfpu_topk.h:907-927: "
        "set_dst_write_addr(0), rows 0..127 = tiles 0..1 of the half (counted in every build)",
        absolute=(0, 1)),
    "topk_strip_rank_tags": DstTiles(
        "topk.h:398-402 -> _topk_strip_rank_tags_(idst), ckernel_sfpu_topk.h:447-467: set_dst_write_addr(0), tile 0 "
        "if idst == 0 else tile 1",
        capped=((0, 1),)),
    "topk_finalize_uint16_indices": DstTiles(
        "topk.h:411-416 -> _topk_finalize_hi16_index_tile_(idst), ckernel_sfpu_topk.h:470-487: rows idst * 64 .. + 63 "
        "of the half, tile idst",
        at=((0, 0),)),
    "topk_uint16_prepare_value_tile_for_pack": DstTiles(
        "topk.h:423-425 -> topk_uint16_prepare_value_tile_for_pack(idst), ckernel_sfpu_topk.h:149-176: tile 0 if "
        "idst == 0 else tile 1 (a no-op unless built with TOPK_UINT16_FP32_DEST; counted in every build)",
        capped=((0, 1),)),
    "topk_uint16_move_dest_tile_to_pack_half": DstTiles(
        "topk.h:435-440 -> _topk_uint16_move_dest_tile_to_pack_half_(idst), ckernel_sfpu_topk.h:182-209: "
        "switch (idst) cases 0, 1, 2, default tile 3",
        capped=((0, 3),)),
}


def tie_order_from_global_direction(descending: bool) -> str:
    """``topk_tie_order_from_global_direction(descending)`` (topk.h:26-28, a ``constexpr`` function): the
    ``TopkTieOrder`` enumerator's name, ``Descending`` or ``Ascending``."""
    return "TopkTieOrder::Descending" if descending else "TopkTieOrder::Ascending"

#: The arguments that are DST indices, where they are not just the first (``add_binary_tile(idst0, idst1, odst)``;
#: parameters named ``idst*`` / ``odst`` / ``dst_index`` in api/compute/**, ttnn 0.81.1): every one counts towards the
#: DST tiles an acquire holds.
SFPU_DST_ARGS: dict[str, tuple[int, ...]] = {
    "add_binary_tile": (0, 1, 2), "add_int_tile": (0, 1, 2), "addcdiv_tile": (0, 1, 2, 3),
    "addcmul_tile": (0, 1, 2, 3), "atan2_binary_tile": (0, 1, 2), "binary_left_shift_tile": (0, 1, 2),
    "binary_logical_right_shift_tile": (0, 1, 2), "binary_max_int32_tile": (0, 1, 2), "binary_max_tile": (0, 1, 2),
    "binary_max_uint32_tile": (0, 1, 2), "binary_min_int32_tile": (0, 1, 2), "binary_min_tile": (0, 1, 2),
    "binary_min_uint32_tile": (0, 1, 2), "binary_right_shift_tile": (0, 1, 2), "bitwise_and_binary_tile": (0, 1, 2),
    "copy_dest_values": (0, 1),  # copy_dest_values.h:33 (idst_in, idst_out)
    "bitwise_or_binary_tile": (0, 1, 2), "bitwise_xor_binary_tile": (0, 1, 2), "clamped_silu_glu_tile": (0, 1, 2),
    "dequant_int8_tile": (0, 1, 2), "dequant_tile": (0, 1, 2), "div_binary_tile": (0, 1, 2),
    "div_int32_floor_tile": (0, 1, 2), "div_int32_tile": (0, 1, 2), "div_int32_trunc_tile": (0, 1, 2),
    "eq_binary_tile": (0, 1, 2), "eq_int_tile": (0, 1, 2), "eq_int_tile_dispatch": (0, 1, 2),
    "fmod_binary_tile": (0, 1, 2), "fmod_int32_tile": (0, 1, 2), "gcd_tile": (0, 1, 2), "ge_binary_tile": (0, 1, 2),
    "ge_int_tile": (0, 1, 2), "gt_binary_tile": (0, 1, 2), "gt_int_tile": (0, 1, 2), "isclose_binary_tile": (0, 1, 2),
    "lcm_tile": (0, 1, 2), "le_binary_tile": (0, 1, 2), "le_int_tile": (0, 1, 2), "lerp_tile": (0, 1, 2, 3),
    "lgamma_adjusted_tile": (0, 1, 2, 3), "lgamma_stirling_float_tile": (0, 1, 2),
    "logaddexp2_binary_tile": (0, 1, 2), "logaddexp_binary_tile": (0, 1, 2), "logsigmoid_tile": (0, 1, 2),
    "lt_binary_tile": (0, 1, 2), "lt_int_tile": (0, 1, 2), "mac_tile": (0, 1, 2, 3), "mask_posinf_tile": (0, 1),
    "mask_tile": (0, 1), "max_reduce_with_indices": (0, 1), "mul_binary_tile": (0, 1, 2), "mul_int_tile": (0, 1, 2),
    "ne_binary_tile": (0, 1, 2), "ne_int_tile": (0, 1, 2), "nextafter_bf16_binary_tile": (0, 1, 2),
    "nextafter_binary_tile": (0, 1, 2), "power_binary_tile": (0, 1, 2), "quant_int8_tile": (0, 1, 2),
    "quant_tile": (0, 1, 2), "rel_int_tile_dispatch": (0, 1, 2), "remainder_binary_tile": (0, 1, 2),
    "remainder_int32_tile": (0, 1, 2), "remainder_uint32_tile": (0, 1, 2), "requant_int8_in_int8_out_tile": (0, 1, 2),
    "requant_int8_in_tile": (0, 1, 2), "requant_int8_tile": (0, 1, 2), "requant_tile": (0, 1, 2),
    "rsub_binary_tile": (0, 1, 2), "rsub_int_tile": (0, 1, 2), "sfpu_add_int": (0, 1), "situ_glu_tile": (0, 1, 2),
    "snake_beta_tile": (0, 1, 2, 3), "sub_binary_tile": (0, 1, 2), "sub_int_tile": (0, 1, 2),
    "where_tile": (0, 1, 2, 3), "xlogy_binary_tile": (0, 1, 2),
}
