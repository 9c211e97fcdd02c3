#include "kernels/common/attr_check.h"
#include "kernels/qonnx/params.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {

Result<Tensor> float_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->dtype() == DType::kFloat) return *t;
  if (!dtype_is_float(t->dtype()) && !dtype_is_integer(t->dtype()))
    return ctx.input_error(Code::kUnsupported, i, "{} must be numeric, got {}", what, dtype_name(t->dtype()));
  return exec::cast_tensor(*t, DType::kFloat);
}

Result<Tensor> scale_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(Tensor t, float_input(ctx, i, what));
  const float* s = t.data<float>();
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (!std::isfinite(s[k]) || s[k] == 0.0f)
      return ctx.input_error(Code::kFailed, i, "{} must be finite and non-zero, got {} at element {}", what, s[k], k);
  }
  return t;
}

Result<Tensor> zero_point_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(Tensor t, float_input(ctx, i, what));
  const float* z = t.data<float>();
  for (int64_t k = 0; k < t.numel(); ++k)
    if (!std::isfinite(z[k])) return ctx.input_error(Code::kFailed, i, "{} must be finite, got {} at element {}", what, z[k], k);
  return t;
}

Result<int> bitwidth_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->numel() != 1)
    return ctx.input_error(Code::kFailed, i, "{} must hold one value, got shape {}", what, dims_to_string(t->dims()));
  if (!dtype_is_float(t->dtype()) && !dtype_is_integer(t->dtype()))
    return ctx.input_error(Code::kFailed, i, "{} must be numeric, got {}", what, dtype_name(t->dtype()));
  double b = exec::element_as_double(*t, 0);
  if (!std::isfinite(b) || b != std::floor(b) || b < 1)
    return ctx.input_error(Code::kFailed, i, "{} must be a positive integer, got {}", what, b);
  if (b > 32) return ctx.input_error(Code::kUnsupported, i, "{} {} is over the supported maximum of 32", what, b);
  return static_cast<int>(b);
}

Result<RoundingMode> rounding_attr(const ir::Node& node, const char* fallback) {
  QONNX_ASSIGN_OR_RETURN(const std::string text, string_attr(node, "rounding_mode", fallback));
  auto mode = parse_rounding_mode(text);
  if (!mode)
    return Status(Code::kUnsupported, fmt::format("unknown rounding_mode '{}'; accepted: {}", text,
                                                  fmt::join(dialect::rounding_mode_names(), ", ")));
  return *mode;
}

}  // namespace qonnx::kernels
