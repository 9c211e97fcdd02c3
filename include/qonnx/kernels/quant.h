// The Quant computation, shared by the kernel and by passes that need its integer codes.
#pragma once

#include <string>

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

// A Quant node's attributes (rounding_mode, signed, narrow), validated.
struct QuantAttrs {
  RoundingMode mode = RoundingMode::kRound;
  bool is_signed = true;
  bool narrow = false;
};
Result<QuantAttrs> read_quant_attrs(const ir::Node& node);

// Validated parameters of a Quant node (inputs 1..3 and `attrs`) as the kernel reads them.
Result<QuantParams> read_quant_params(const exec::KernelContext& ctx, const QuantAttrs& attrs);
// The same with the attributes read from ctx.node() (passes that inspect a node once).
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

// The float8 QuantizeLinear -> DequantizeLinear (opset 19) that reproduces this FloatQuant node
// (constant inputs 2..5 in `ctx`) bit for bit: ROUND, scalar parameters naming E4M3 (bias 7 or 8) or
// E5M2 (bias 15 or 16) and a clamp bound min(format max, max_val) equal to that format's largest value;
// then with saturation on every finite and NaN input (saturate=1), or without saturation, for the FNUZ
// formats with has_inf=0, on every input (saturate=0: overflow and +-inf are NaN in both).
struct Float8Form {
  DType format = DType::kUndefined;  // kUndefined: none; `why` says why
  bool saturate = true;
};
Float8Form float_quant_float8_form(const exec::KernelContext& ctx, std::string* why);

}  // namespace qonnx::kernels
