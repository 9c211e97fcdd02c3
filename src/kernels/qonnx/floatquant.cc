// FloatQuant (minifloat quantizer, SEMANTICS.md section 1), as qonnx's float_quant() and Brevitas
// compute it: the quantization steps in float32, the clamp bound in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/support/float8.h"
#include "kernels/common/attr_check.h"
#include "qonnx/quant/params.h"
#include "kernels/qonnx/qonnx_kernels.h"

namespace qonnx::kernels {
namespace {

// Every element of input i satisfies `ok`, or an error naming the first that does not.
template <typename Pred>
Status check_elements(const exec::KernelContext& ctx, const Tensor& t, size_t i, const char* what, const char* rule,
                      Pred ok) {
  const float* p = t.data<float>();
  for (int64_t k = 0; k < t.numel(); ++k)
    if (!ok(p[k])) return ctx.input_error(Code::kInvalidModel, i, "{} must be {}, got {} at element {}", what, rule, p[k], k);
  return Status::ok();
}

bool is_integer(float v) { return std::isfinite(v) && v == std::floor(v); }

struct FloatQuantAttrs {
  quant::RoundingMode mode;
  bool has_inf, saturation;
};

Result<FloatQuantAttrs> prepare_float_quant(const ir::Node& node, int64_t) {
  FloatQuantAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.mode, quant::rounding_attr(node, "ROUND"));
  QONNX_ASSIGN_OR_RETURN(a.has_inf, flag_attr(node, "has_inf", false));
  QONNX_ASSIGN_OR_RETURN(a.saturation, flag_attr(node, "saturation", true));
  QONNX_ASSIGN_OR_RETURN(const bool has_nan, flag_attr(node, "has_nan", false));
  // has_subnormal only informs backends: the quantizer always produces subnormals (as Brevitas).
  if (!a.saturation && !a.has_inf && !has_nan)
    return Status(Code::kInvalidModel, "saturation=0 needs has_inf or has_nan to say what out-of-range values become");
  return a;
}

Status float_quant(exec::KernelContext& ctx, const FloatQuantAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, quant::scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor exp_bits, quant::float_input(ctx, 2, "exponent_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(Tensor man_bits, quant::float_input(ctx, 3, "mantissa_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(Tensor exp_bias, quant::float_input(ctx, 4, "exponent_bias"));
  QONNX_ASSIGN_OR_RETURN(Tensor max_val, quant::float_input(ctx, 5, "max_val"));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, exp_bits, 2, "exponent_bitwidth", "a positive integer",
                                       [](float v) { return is_integer(v) && v >= 1.0f; }));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, man_bits, 3, "mantissa_bitwidth", "a non-negative integer",
                                       [](float v) { return is_integer(v) && v >= 0.0f; }));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, exp_bias, 4, "exponent_bias", "an integer", is_integer));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, max_val, 5, "max_val", "positive", [](float v) { return v > 0.0f; }));
  const quant::RoundingMode mode = attrs.mode;
  const bool has_inf = attrs.has_inf, saturation = attrs.saturation;
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, exec::broadcast_input_dims(ctx, {{0, &x}, {1, &scale}, {2, &exp_bits}, {3, &man_bits},
                                                               {4, &exp_bias}, {5, &max_val}}));

  // Brevitas and qonnx add the smallest normal float32 before log2 so that log2(0) stays finite.
  const float eps = std::numeric_limits<float>::min();
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* es = exp_bits.data<float>();
  const float* ms = man_bits.data<float>();
  const float* bs = exp_bias.data<float>();
  const float* vs = max_val.data<float>();
  Tensor y(DType::kFloat, out_dims);
  float* ys = y.data<float>();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  exec::for_each_broadcast<6>(
      out_dims, {&x.dims(), &scale.dims(), &exp_bits.dims(), &man_bits.dims(), &exp_bias.dims(), &max_val.dims()},
      [&](int64_t o, const auto& off) {
        const float s = ss[off[1]], m = ms[off[3]], bias = bs[off[4]];
        const float t = xs[off[0]] / s;
        // The exponent of t (at least the subnormal one), minus the mantissa bits: the step size.
        // float32 log2 as the references (just below a power of two it rounds up to it, as theirs).
        float step_exp = std::floor(std::log2(std::fabs(t) + eps)) - m;
        const float min_step_exp = 1.0f - bias - m;
        if (step_exp < min_step_exp) step_exp = min_step_exp;  // NaN stays NaN, as np.maximum
        const float step = std::exp2(step_exp);
        const float q = step * quant::apply_rounding(mode, t / step);

        double hi = quant::float_format_max_value(es[off[2]], m, bias);
        if (static_cast<double>(vs[off[5]]) < hi) hi = vs[off[5]];
        const double lo = -hi;
        double v = q;
        if (v > hi) v = hi;
        if (v < lo) v = lo;
        if (!saturation) {
          if (has_inf) {
            if (q > hi) v = inf;
            if (q < lo) v = -inf;
          } else if (q > hi || q < lo || std::isinf(q)) {
            v = nan;
          }
        }
        // The product of two floats is exact in double, so this rounds once like a float multiply.
        ys[o] = static_cast<float>(v * static_cast<double>(s));
      });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_floatquant_kernels(exec::KernelRegistry& r) {
  add_general_op(r, dialect::kFloatQuantOp, {1, exec::kNoUpperVersion},
                 exec::typed_kernel<FloatQuantAttrs, prepare_float_quant, float_quant>());
}

}  // namespace qonnx::kernels
