// The Quant computation, shared by the kernel and by passes that need its integer codes.
#pragma once

#include "qonnx/exec/kernel.h"
#include "qonnx/kernels/rounding.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

struct QuantParams {
  Tensor scale;   // float32, finite, non-zero
  Tensor zeropt;  // float32
  int bits = 8;
  bool is_signed = true;
  bool narrow = false;
  RoundingMode mode = RoundingMode::kRound;
  bool bipolar() const { return bits == 1 && is_signed; }
};

// Validated parameters of a Quant node (inputs 1..3 and attributes) as the kernel reads them.
Result<QuantParams> read_quant_params(const exec::KernelContext& ctx);

// Integer code of one element: round(clamp(x/s + z)), or +-1 in the bipolar case.
inline float quant_code(float x, float s, float z, const IntRange& range, const QuantParams& p) {
  float t = x / s + z;
  if (p.bipolar()) return t >= 0.0f ? 1.0f : -1.0f;
  if (t > range.max) t = range.max;
  if (t < range.min) t = range.min;
  return apply_rounding(p.mode, t);
}

// Codes for a whole tensor (float32 holding integers), broadcast with scale and zero point.
Result<Tensor> quant_codes(const exec::KernelContext& ctx, const Tensor& x, const QuantParams& p);

}  // namespace qonnx::kernels
