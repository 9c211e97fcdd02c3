// FloatQuant (minifloat quantizer, SEMANTICS.md section 1), as qonnx's float_quant() and Brevitas
// compute it: the quantization steps in float32, the clamp bound in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/support/float8.h"
#include "kernels/onnx/attr_check.h"
#include "kernels/qonnx/params.h"
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

// Largest normal value of the format: (2 - 2^-m) * 2^(2^e - 1 - bias), in double as qonnx's
// compute_max_val.
double format_max_value(double exponent_bits, double mantissa_bits, double exponent_bias) {
  const double max_exponent = std::exp2(exponent_bits) - 1.0 - exponent_bias;
  const double max_mantissa = 2.0 - std::exp2(-mantissa_bits);
  return max_mantissa * std::exp2(max_exponent);
}

struct FloatQuantAttrs {
  RoundingMode mode;
  bool has_inf, saturation;
};

Result<FloatQuantAttrs> prepare_float_quant(const ir::Node& node, int64_t) {
  FloatQuantAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.mode, rounding_attr(node, "ROUND"));
  QONNX_ASSIGN_OR_RETURN(a.has_inf, flag_attr(node, "has_inf", false));
  QONNX_ASSIGN_OR_RETURN(a.saturation, flag_attr(node, "saturation", true));
  QONNX_ASSIGN_OR_RETURN(const bool has_nan, flag_attr(node, "has_nan", false));
  // has_subnormal only informs backends: the quantizer always produces subnormals (as Brevitas).
  if (!a.saturation && !a.has_inf && !has_nan)
    return Status(Code::kInvalidModel, "saturation=0 needs has_inf or has_nan to say what out-of-range values become");
  return a;
}

Status float_quant(exec::KernelContext& ctx, const FloatQuantAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor exp_bits, float_input(ctx, 2, "exponent_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(Tensor man_bits, float_input(ctx, 3, "mantissa_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(Tensor exp_bias, float_input(ctx, 4, "exponent_bias"));
  QONNX_ASSIGN_OR_RETURN(Tensor max_val, float_input(ctx, 5, "max_val"));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, exp_bits, 2, "exponent_bitwidth", "a positive integer",
                                       [](float v) { return is_integer(v) && v >= 1.0f; }));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, man_bits, 3, "mantissa_bitwidth", "a non-negative integer",
                                       [](float v) { return is_integer(v) && v >= 0.0f; }));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, exp_bias, 4, "exponent_bias", "an integer", is_integer));
  QONNX_RETURN_IF_ERROR(check_elements(ctx, max_val, 5, "max_val", "positive", [](float v) { return v > 0.0f; }));
  const RoundingMode mode = attrs.mode;
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
        const float q = step * apply_rounding(mode, t / step);

        double hi = format_max_value(es[off[2]], m, bias);
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

Float8Form float_quant_float8_form(const exec::KernelContext& ctx, std::string* why) {
  auto scalar = [&](size_t i, double* out) {
    const Tensor* t = ctx.input(i);
    if (!t || t->numel() != 1) return false;
    *out = exec::element_as_double(*t, 0);
    return true;
  };
  double e = 0, m = 0, bias = 0, max_val = 0;
  if (!scalar(2, &e) || !scalar(3, &m) || !scalar(4, &bias) || !scalar(5, &max_val)) {
    *why = "exponent/mantissa bit widths, exponent bias and max_val must be constant scalars";
    return {};
  }
  const ir::Node& node = ctx.node();
  auto mode = rounding_attr(node, "ROUND");
  if (!mode.is_ok() || mode.value() != RoundingMode::kRound) {
    *why = "rounding_mode is not ROUND (float8 rounds half to even)";
    return {};
  }
  auto saturation_attr = flag_attr(node, "saturation", true);
  auto has_inf_attr = flag_attr(node, "has_inf", false);
  if (!saturation_attr.is_ok() || !has_inf_attr.is_ok()) {
    *why = (saturation_attr.is_ok() ? has_inf_attr.status() : saturation_attr.status()).message();
    return {};
  }
  const bool saturation = saturation_attr.value(), has_inf = has_inf_attr.value();
  struct Known { double e, m, bias; DType format; };
  static const Known kKnown[] = {{4, 3, 7, DType::kFloat8E4M3FN}, {4, 3, 8, DType::kFloat8E4M3FNUZ},
                                 {5, 2, 15, DType::kFloat8E5M2}, {5, 2, 16, DType::kFloat8E5M2FNUZ}};
  for (const Known& k : kKnown) {
    if (k.e != e || k.m != m || k.bias != bias) continue;
    // The kernel clamps to min(format max, max_val); float8 saturates to its own largest value.
    const double hi = std::min(format_max_value(e, m, bias), max_val);
    if (hi != static_cast<double>(float8_max(k.format))) {
      *why = fmt::format("the clamp bound {} is not {}'s largest value {}", hi, dtype_name(k.format), float8_max(k.format));
      return {};
    }
    // Without saturation the kernel makes overflow NaN (or inf with has_inf) and +-inf inputs NaN. Only
    // the FNUZ formats do both (E5M2 keeps infinities; onnxruntime's E4M3FN maps [480, 496) to 448).
    const bool fnuz = k.format == DType::kFloat8E4M3FNUZ || k.format == DType::kFloat8E5M2FNUZ;
    if (!saturation && (!fnuz || has_inf)) {
      *why = fmt::format("saturation=0 with {}{} has no exact non-saturating float8 form (only the FNUZ formats without has_inf)",
                         dtype_name(k.format), has_inf ? " and has_inf" : "");
      return {};
    }
    return {k.format, saturation};
  }
  *why = fmt::format("E{}M{} with bias {} is none of the float8 formats (E4M3 bias 7/8, E5M2 bias 15/16)", e, m, bias);
  return {};
}

void register_floatquant_kernels(exec::KernelRegistry& r) {
  add_general_op(r, "FloatQuant", {1, exec::kNoUpperVersion},
                 exec::typed_kernel<FloatQuantAttrs, prepare_float_quant, float_quant>());
}

}  // namespace qonnx::kernels
