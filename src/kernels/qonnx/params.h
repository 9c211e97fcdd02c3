// Reading QONNX quantizer parameters (scale, zero point, bit widths) with the checks and the
// float32 conversion SEMANTICS.md asks for. Private to the kernels.
#pragma once

#include <cmath>

#include "qonnx/exec/kernel.h"
#include "qonnx/kernels/rounding.h"

namespace qonnx::kernels {

// Input i converted to float32 (float64/int32/int64/... accepted).
Result<Tensor> float_input(const exec::KernelContext& ctx, size_t i, const char* what);
// Like float_input, and every element must be finite and non-zero.
Result<Tensor> scale_input(const exec::KernelContext& ctx, size_t i, const char* what);
// Like float_input, and every element must be finite (a NaN zero point would turn every output into NaN).
Result<Tensor> zero_point_input(const exec::KernelContext& ctx, size_t i, const char* what);
// A single positive integer bit width in [1, 32].
Result<int> bitwidth_input(const exec::KernelContext& ctx, size_t i, const char* what);
// The node's rounding_mode attribute (`fallback` when absent), one of the dialect's names.
Result<RoundingMode> rounding_attr(const ir::Node& node, const char* fallback);
// 2^rne(log2(out_scale / scale)), Trunc v2's power-of-two step, with numpy's float32 results where
// the ratio overflows (inf), underflows (0) or is negative (NaN) instead of an int conversion of them.
inline float trunc_v2_step(float so, float s) {
  const float e = round_half_even(std::log2(so / s));
  if (std::isnan(e)) return e;
  if (e > 300.0f) return INFINITY;
  if (e < -300.0f) return 0.0f;
  return std::ldexp(1.0f, static_cast<int>(e));
}

}  // namespace qonnx::kernels
