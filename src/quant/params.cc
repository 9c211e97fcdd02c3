#include "qonnx/quant/params.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/float8.h"

namespace qonnx::quant {

NodeInputs::NodeInputs(const exec::KernelContext& ctx)
    : node_(ctx.node()), tensors_(ctx.inputs().data()), size_(ctx.inputs().size()) {}

Result<const Tensor*> NodeInputs::required(size_t i, const char* what) const { return exec::required_input(input(i), i, what); }

Status NodeInputs::input_error(Code code, size_t i, const std::string& message) const {
  return Status(code, message).with_context(exec::input_label(node_, i));
}

Result<Tensor> float_input(const NodeInputs& in, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, in.required(i, what));
  if (t->dtype() == DType::kFloat) return *t;
  if (!dtype_is_float(t->dtype()) && !dtype_is_integer(t->dtype()))
    return in.input_error(Code::kUnsupported, i, fmt::format("{} must be numeric, got {}", what, dtype_name(t->dtype())));
  return exec::cast_tensor(*t, DType::kFloat);
}

Result<Tensor> scale_input(const NodeInputs& in, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(Tensor t, float_input(in, i, what));
  const float* s = t.data<float>();
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (!std::isfinite(s[k]) || s[k] == 0.0f)
      return in.input_error(Code::kFailed, i, fmt::format("{} must be finite and non-zero, got {} at element {}", what, s[k], k));
  }
  return t;
}

Result<Tensor> zero_point_input(const NodeInputs& in, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(Tensor t, float_input(in, i, what));
  const float* z = t.data<float>();
  for (int64_t k = 0; k < t.numel(); ++k)
    if (!std::isfinite(z[k]))
      return in.input_error(Code::kFailed, i, fmt::format("{} must be finite, got {} at element {}", what, z[k], k));
  return t;
}

Result<int> bitwidth_input(const NodeInputs& in, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, in.required(i, what));
  if (t->numel() != 1)
    return in.input_error(Code::kFailed, i, fmt::format("{} must hold one value, got shape {}", what, dims_to_string(t->dims())));
  if (!dtype_is_float(t->dtype()) && !dtype_is_integer(t->dtype()))
    return in.input_error(Code::kFailed, i, fmt::format("{} must be numeric, got {}", what, dtype_name(t->dtype())));
  const double b = exec::element_as_double(*t, 0);
  if (!std::isfinite(b) || b != std::floor(b) || b < 1)
    return in.input_error(Code::kFailed, i, fmt::format("{} must be a positive integer, got {}", what, b));
  if (b > 32) return in.input_error(Code::kUnsupported, i, fmt::format("{} {} is over the supported maximum of 32", what, b));
  return static_cast<int>(b);
}

Result<RoundingMode> rounding_attr(const ir::Node& node, const char* fallback) {
  QONNX_ASSIGN_OR_RETURN(const std::string text, node.attr<std::string>("rounding_mode", fallback));
  auto mode = parse_rounding_mode(text);
  if (!mode)
    return Status(Code::kUnsupported, fmt::format("unknown rounding_mode '{}'; accepted: {}", text,
                                                  fmt::join(dialect::rounding_mode_names(), ", ")));
  return *mode;
}

Result<QuantAttrs> read_quant_attrs(const ir::Node& node) {
  QuantAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.mode, rounding_attr(node, "ROUND"));
  QONNX_ASSIGN_OR_RETURN(a.is_signed, node.attr<bool>("signed", true));
  QONNX_ASSIGN_OR_RETURN(a.narrow, node.attr<bool>("narrow", false));
  return a;
}

Result<QuantParams> read_quant_params(const NodeInputs& in, const QuantAttrs& attrs) {
  QuantParams p;
  QONNX_ASSIGN_OR_RETURN(p.scale, scale_input(in, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(p.zeropt, zero_point_input(in, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(p.bits, bitwidth_input(in, 3, "bitwidth"));
  p.mode = attrs.mode;
  p.is_signed = attrs.is_signed;
  p.narrow = attrs.narrow;
  return p;
}

Result<QuantParams> read_quant_params(const NodeInputs& in) {
  QONNX_ASSIGN_OR_RETURN(QuantAttrs attrs, read_quant_attrs(in.node()));
  return read_quant_params(in, attrs);
}

Result<QuantParams> read_bipolar_params(const NodeInputs& in) {
  QuantParams p;
  QONNX_ASSIGN_OR_RETURN(p.scale, scale_input(in, 1, "scale"));
  p.zeropt = Tensor::scalar<float>(DType::kFloat, 0.0f);
  p.bits = 1;
  return p;
}

Result<Tensor> bipolar_codes(const NodeInputs& in, const Tensor& x, const Tensor& scale) {
  QONNX_ASSIGN_OR_RETURN(const Dims dims, exec::broadcast_input_dims(in.node(), {{0, &x}, {1, &scale}}));
  Tensor codes(DType::kFloat, dims);
  float* cs = codes.data<float>();
  const float* xs = x.data<float>();
  exec::for_each_broadcast<2>(dims, {&x.dims(), &scale.dims()}, [&](int64_t o, const auto& off) { cs[o] = bipolar_code(xs[off[0]]); });
  return codes;
}

double float_format_max_value(double exponent_bits, double mantissa_bits, double exponent_bias) {
  // (2 - 2^-m) * 2^(2^e - 1 - bias), in double as qonnx's compute_max_val.
  const double max_exponent = std::exp2(exponent_bits) - 1.0 - exponent_bias;
  const double max_mantissa = 2.0 - std::exp2(-mantissa_bits);
  return max_mantissa * std::exp2(max_exponent);
}

Float8Form float_quant_float8_form(const NodeInputs& in, std::string* why) {
  auto scalar = [&](size_t i, double* out) {
    const Tensor* t = in.input(i);
    if (!t || t->numel() != 1) return false;
    *out = exec::element_as_double(*t, 0);
    return true;
  };
  double e = 0, m = 0, bias = 0, max_val = 0;
  if (!scalar(2, &e) || !scalar(3, &m) || !scalar(4, &bias) || !scalar(5, &max_val)) {
    *why = "exponent/mantissa bit widths, exponent bias and max_val must be constant scalars";
    return {};
  }
  const ir::Node& node = in.node();
  auto mode = rounding_attr(node, "ROUND");
  if (!mode.is_ok() || mode.value() != RoundingMode::kRound) {
    *why = "rounding_mode is not ROUND (float8 rounds half to even)";
    return {};
  }
  const auto saturation = node.attr<bool>("saturation", true);
  const auto has_inf = node.attr<bool>("has_inf", false);
  if (!saturation.is_ok() || !has_inf.is_ok()) {
    *why = !saturation.is_ok() ? saturation.status().message() : has_inf.status().message();
    return {};
  }
  struct Known { double e, m, bias; DType format; };
  static const Known kKnown[] = {{4, 3, 7, DType::kFloat8E4M3FN}, {4, 3, 8, DType::kFloat8E4M3FNUZ},
                                 {5, 2, 15, DType::kFloat8E5M2}, {5, 2, 16, DType::kFloat8E5M2FNUZ}};
  for (const Known& k : kKnown) {
    if (k.e != e || k.m != m || k.bias != bias) continue;
    // The kernel clamps to min(format max, max_val); float8 saturates to its own largest value.
    const double hi = std::min(float_format_max_value(e, m, bias), max_val);
    if (hi != static_cast<double>(float8_max(k.format))) {
      *why = fmt::format("the clamp bound {} is not {}'s largest value {}", hi, dtype_name(k.format), float8_max(k.format));
      return {};
    }
    // Without saturation the kernel makes overflow NaN (or inf with has_inf) and +-inf inputs NaN. Only
    // the FNUZ formats do both (E5M2 keeps infinities; onnxruntime's E4M3FN maps [480, 496) to 448).
    const bool fnuz = k.format == DType::kFloat8E4M3FNUZ || k.format == DType::kFloat8E5M2FNUZ;
    if (!saturation.value() && (!fnuz || has_inf.value())) {
      *why = fmt::format("saturation=0 with {}{} has no exact non-saturating float8 form (only the FNUZ formats without has_inf)",
                         dtype_name(k.format), has_inf.value() ? " and has_inf" : "");
      return {};
    }
    return {k.format, saturation.value()};
  }
  *why = fmt::format("E{}M{} with bias {} is none of the float8 formats (E4M3 bias 7/8, E5M2 bias 15/16)", e, m, bias);
  return {};
}

}  // namespace qonnx::quant
