"""The SFPU operations of the compute API: functions whose first parameter is a DST index (``idst``) and that
work on DST tiles only, never on a circular buffer (``ALWI void NAME_tile(uint32_t idst, ...)`` in
tt_metal/hw/inc/api/compute/**, ttnn 0.81.1). A compute call of one of these is a ``Compute`` on the accumulator;
any other unknown call is refused, so a function that unpacks circular-buffer pages is never read as one of these.
"""

SFPU_OPS = frozenset({
    "abs_tile", "acos_tile", "acosh_tile", "add_binary_tile", "add_int_tile", "add_rsqrt_tile", "add_unary_tile",
    "addcdiv_tile", "addcmul_tile", "alt_complex_rotate90_tile", "asin_tile", "asinh_tile", "atan2_binary_tile",
    "atan_tile", "atanh_tile", "binary_left_shift_tile", "binary_logical_right_shift_tile", "binary_max_int32_tile",
    "binary_max_tile", "binary_max_uint32_tile", "binary_min_int32_tile", "binary_min_tile", "binary_min_uint32_tile",
    "binary_right_shift_tile", "bitwise_and_binary_tile", "bitwise_and_tile", "bitwise_not_tile",
    "bitwise_or_binary_tile", "bitwise_or_tile", "bitwise_xor_binary_tile", "bitwise_xor_tile", "cbrt_tile",
    "ceil_tile", "celu_tile", "clamp_tile", "cos_tile", "cosh_tile", "cumsum_tile", "dequant_int8_tile", "dequant_tile",
    "digamma_tile", "div_binary_tile", "div_int32_floor_tile", "div_int32_tile", "div_int32_trunc_tile",
    "div_unary_tile", "dropout_tile", "elu_tile", "eq_binary_tile", "eq_int_tile", "eqz_tile", "erf_tile", "erfc_tile",
    "erfinv_tile", "exp2_tile", "exp_tile", "expm1_tile", "fill_tile", "floor_tile", "fmod_binary_tile",
    "fmod_int32_tile", "fmod_tile", "frac_tile", "gcd_tile", "ge_binary_tile", "ge_int_tile", "gelu_derivative_tile",
    "gelu_tanh_tile", "gelu_tile", "gez_tile", "gt_binary_tile", "gt_int_tile", "gtz_tile", "hardmish_tile",
    "hardshrink_tile", "hardsigmoid_tile", "hardtanh_tile", "heaviside_tile", "i0_tile", "i1_tile", "identity_tile",
    "isclose_binary_tile", "isfinite_tile", "isinf_tile", "isnan_tile", "isneginf_tile", "isposinf_tile", "lcm_tile",
    "le_binary_tile", "le_int_tile", "leaky_relu_tile", "left_shift_tile", "lerp_tile", "lez_tile",
    "lgamma_adjusted_tile", "lgamma_stirling_float_tile", "lgamma_stirling_tile", "log1p_tile", "log_tile",
    "log_with_base_tile", "logaddexp2_binary_tile", "logaddexp_binary_tile", "logical_not_tile", "logsigmoid_tile",
    "lt_binary_tile", "lt_int_tile", "ltz_tile", "mac_tile", "mask_posinf_tile", "mask_tile", "mish_tile",
    "mul_binary_tile", "mul_int_tile", "mul_unary_tile", "ne_binary_tile", "ne_int_tile", "negative_tile",
    "nextafter_bf16_binary_tile", "nextafter_binary_tile", "nez_tile", "polygamma_tile", "power_binary_tile",
    "power_iterative_tile", "power_tile", "prelu_tile", "quant_int8_tile", "quant_tile", "rand_tile", "rdiv_tile",
    "recip_tile", "relu_max_tile", "relu_min_tile", "relu_tile", "remainder_binary_tile", "remainder_int32_tile",
    "remainder_tile", "remainder_uint32_tile", "requant_int8_in_int8_out_tile", "requant_int8_in_tile",
    "requant_int8_tile", "requant_tile", "reshuffle_rows_tile", "right_shift_tile", "round_tile", "rpow_tile",
    "rsqrt_tile", "rsub_binary_tile", "rsub_int_tile", "rsub_tile", "rsub_unary_int32_tile", "rsub_unary_tile",
    "selu_tile", "sigmoid_tile", "sign_tile", "signbit_tile", "silu_tile", "sin_tile", "sinh_tile", "situ_glu_tile",
    "snake_beta_tile", "softcap_tile", "softplus_tile", "softshrink_tile", "softsign_tile", "sqrt_tile", "square_tile",
    "stochastic_round_tile", "sub_binary_tile", "sub_int_tile", "sub_unary_tile", "tan_tile", "tanh_derivative_tile",
    "tanh_tile", "tanhshrink_tile", "threshold_tile", "tiled_prod_tile", "topk_defuse_tile", "topk_fuse_tile",
    "trunc_tile", "typecast_tile", "unary_eq_tile", "unary_ge_tile", "unary_gt_tile", "unary_le_tile", "unary_lt_tile",
    "unary_max_int32_tile", "unary_max_tile", "unary_max_uint32_tile", "unary_min_int32_tile", "unary_min_tile",
    "unary_min_uint32_tile", "unary_ne_tile", "where_tile", "xielu_tile", "xlogy_binary_tile"
})
