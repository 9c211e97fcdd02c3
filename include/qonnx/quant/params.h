// Quantizer parameters read and validated from a node and its input tensors, and the integer codes
// they define (SEMANTICS.md section 1). Kernels, passes and analyses all read parameters here, so a
// model is accepted or refused with one message whoever reads it.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "qonnx/quant/rounding.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {
class Node;
}  // namespace qonnx::ir
namespace qonnx::exec {
class KernelContext;
}  // namespace qonnx::exec

namespace qonnx::quant {

// A node with the tensors of its inputs (nullptr: omitted, or not known here): what a parameter reader
// looks at. A view: the tensor list must outlive it. A kernel passes its KernelContext; a pass passes
// the node and the constant tensors it found.
class NodeInputs {
 public:
  NodeInputs(const ir::Node& node, const std::vector<const Tensor*>& tensors)
      : node_(node), tensors_(tensors.data()), size_(tensors.size()) {}
  NodeInputs(const exec::KernelContext& ctx);  // NOLINT: kernels hand their context over as it is

  const ir::Node& node() const { return node_; }
  size_t size() const { return size_; }
  const Tensor* input(size_t i) const { return i < size_ ? tensors_[i] : nullptr; }
  // The input, or an error "input #i (what) is required".
  Result<const Tensor*> required(size_t i, const char* what) const;
  // `message` about input #i ("input #i 'name': message").
  Status input_error(Code code, size_t i, const std::string& message) const;

 private:
  const ir::Node& node_;
  const Tensor* const* tensors_;
  size_t size_;
};

// Input i converted to float32 (float64/int32/int64/... accepted).
Result<Tensor> float_input(const NodeInputs& in, size_t i, const char* what);
// Like float_input, and every element must be finite and non-zero.
Result<Tensor> scale_input(const NodeInputs& in, size_t i, const char* what);
// Like float_input, and every element must be finite (a NaN zero point would turn every output into NaN).
Result<Tensor> zero_point_input(const NodeInputs& in, size_t i, const char* what);
// A single positive integer bit width in [1, 32].
Result<int> bitwidth_input(const NodeInputs& in, size_t i, const char* what);
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

// Validated parameters of a Quant node (inputs 1..3 and `attrs`).
Result<QuantParams> read_quant_params(const NodeInputs& in, const QuantAttrs& attrs);
// The same with the attributes read from the node (passes that inspect a node once).
Result<QuantParams> read_quant_params(const NodeInputs& in);
// A BipolarQuant node as QuantParams: its scale (input 1), zero point 0, 1 signed bit.
Result<QuantParams> read_bipolar_params(const NodeInputs& in);

// Integer code of one element: round(clamp(x/s + z)), or +-1 in the bipolar case.
inline float quant_code(float x, float s, float z, const IntRange& range, const QuantParams& p) {
  float t = x / s + z;
  if (p.bipolar()) return t >= 0.0f ? 1.0f : -1.0f;
  if (t > range.max) t = range.max;
  if (t < range.min) t = range.min;
  return apply_rounding(p.mode, t);
}
// BipolarQuant's code: it compares x itself with 0 (no division by the scale); NaN gives -1.
inline float bipolar_code(float x) { return x >= 0.0f ? 1.0f : -1.0f; }
// BipolarQuant's codes of x broadcast with its scale (float32 holding +-1).
Result<Tensor> bipolar_codes(const NodeInputs& in, const Tensor& x, const Tensor& scale);

// The float8 QuantizeLinear -> DequantizeLinear (opset 19) that reproduces a FloatQuant node
// (constant inputs 2..5 in `in`) bit for bit: ROUND, scalar parameters naming E4M3 (bias 7 or 8) or
// E5M2 (bias 15 or 16) and a clamp bound min(format max, max_val) equal to that format's largest value;
// then with saturation on every finite and NaN input (saturate=1), or without saturation, for the FNUZ
// formats with has_inf=0, on every input (saturate=0: overflow and +-inf are NaN in both).
struct Float8Form {
  DType format = DType::kUndefined;  // kUndefined: none; `why` says why
  bool saturate = true;
};
Float8Form float_quant_float8_form(const NodeInputs& in, std::string* why);
// The largest finite value of a float format with these bit widths and bias (FloatQuant's clamp).
double float_format_max_value(double exponent_bits, double mantissa_bits, double exponent_bias);

}  // namespace qonnx::quant
