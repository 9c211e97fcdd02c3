// MultiThreshold (FINN dialect, SEMANTICS.md section 1), as qonnx's multithreshold() computes it:
// Y = out_scale * count_t(v >= thresholds[c, t]) + out_bias, in v's float type.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/qonnx/fast_kernels.h"
#include "kernels/qonnx/qonnx_kernels.h"
#include "kernels/qonnx/quant_avx2.h"
#include "kernels/qonnx/simd_dispatch.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

// Counts thresholds at or below each element. Comparisons run in double, which holds float16,
// float32 and float64 values exactly (numpy compares in the promoted type, with the same result).
template <typename T>
T threshold_one(T v, const double* row, int64_t steps, T scale, T bias) {
  const double x = static_cast<double>(v);
  int64_t count = 0;
  for (int64_t t = 0; t < steps; ++t) count += x >= row[t] ? 1 : 0;
  // Two roundings (multiply, then add), as numpy's out_scale * ret + out_bias.
  T scaled = scale * static_cast<T>(count);
  return scaled + bias;
}

template <typename T>
void threshold_portable(const T* v, int64_t outer, int64_t channels, int64_t inner, const double* thr, bool global,
                        int64_t steps, T scale, T bias, T* y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const double* row = thr + (global ? 0 : c) * steps;
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) y[base + i] = threshold_one(v[base + i], row, steps, scale, bias);
    }
  }
}

// The smallest float32 >= t. For a float32 v, v >= t exactly when v >= float_at_or_above(t) (v is
// itself a float32 >= t, so at or above the smallest one; the converse is transitivity), NaN, +-inf
// and thresholds beyond the float32 range included. So the AVX2 loops compare in float32.
float float_at_or_above(double t) {
  if (std::isnan(t)) return NAN;
  if (t > std::numeric_limits<float>::max()) return INFINITY;
  if (t < -std::numeric_limits<float>::max()) return t == -INFINITY ? -INFINITY : -std::numeric_limits<float>::max();
  const float f = static_cast<float>(t);
  return static_cast<double>(f) < t ? std::nextafter(f, INFINITY) : f;
}

// The AVX2 layouts: one set of thresholds for everything, runs of >= 16 elements per channel, or the
// channel on the innermost axis (channels-last, (N, C)). Anything else stays portable.
void threshold_avx2(const float* v, int64_t outer, int64_t channels, int64_t inner, const double* thr, bool global,
                    int64_t steps, float scale, float bias, float* y) {
  const int64_t rows = global ? 1 : channels;
  std::vector<float> up(static_cast<size_t>(rows * steps));
  for (size_t k = 0; k < up.size(); ++k) up[k] = float_at_or_above(thr[k]);
  const int64_t n = outer * channels * inner;
  if (global) {
    const int64_t done = avx2::threshold_run(v, up.data(), steps, scale, bias, y, n);
    for (int64_t e = done; e < n; ++e) y[e] = threshold_one(v[e], thr, steps, scale, bias);
  } else if (inner >= 16) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (o * channels + c) * inner;
        const double* row = thr + c * steps;
        const int64_t done = avx2::threshold_run(v + base, up.data() + c * steps, steps, scale, bias, y + base, inner);
        for (int64_t i = done; i < inner; ++i) y[base + i] = threshold_one(v[base + i], row, steps, scale, bias);
      }
    }
  } else if (inner == 1) {
    const int64_t width = channels + 7;
    std::vector<float> table(static_cast<size_t>(steps * width));
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t j = 0; j < width; ++j) table[static_cast<size_t>(t * width + j)] = up[static_cast<size_t>((j % channels) * steps + t)];
    const int64_t done = avx2::threshold_run_by_channel(v, table.data(), channels, 0, steps, scale, bias, y, n);
    for (int64_t e = done; e < n; ++e) y[e] = threshold_one(v[e], thr + (e % channels) * steps, steps, scale, bias);
  } else {
    threshold_portable(v, outer, channels, inner, thr, global, steps, scale, bias, y);
  }
}

}  // namespace

void multithreshold_into(const float* v, int64_t outer, int64_t channels, int64_t inner, const double* thr,
                         bool global, int64_t steps, float scale, float bias, float* y) {
  if (simd_level() == SimdLevel::kAvx2 && channels > 0)
    threshold_avx2(v, outer, channels, inner, thr, global, steps, scale, bias, y);
  else
    threshold_portable(v, outer, channels, inner, thr, global, steps, scale, bias, y);
}

namespace {

Status multi_threshold(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* v, ctx.required(0, "v"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* thresholds, ctx.required(1, "thresholds"));
  if (!ctx.has_attr("out_dtype"))
    return ctx.error(Code::kInvalidModel, "MultiThreshold needs the attribute out_dtype (e.g. \"UINT4\")");
  const std::string layout = ctx.attr_string("data_layout", "NCHW");
  if (layout.empty()) return ctx.error(Code::kInvalidModel, "data_layout is empty (expected e.g. NCHW, NHWC or NC)");
  const bool channels_last = layout.back() == 'C';

  if (v->dtype() != DType::kFloat && v->dtype() != DType::kDouble)
    return ctx.input_error(Code::kUnsupported, 0, "v must be float or double, got {}", dtype_name(v->dtype()));
  const size_t min_rank = channels_last ? 1 : 2;
  if (v->rank() < min_rank)
    return ctx.input_error(Code::kInvalidModel, 0, "v of shape {} has no channel axis for data_layout {}",
                           dims_to_string(v->dims()), layout);
  if (!dtype_is_float(thresholds->dtype()) && !dtype_is_integer(thresholds->dtype()))
    return ctx.input_error(Code::kInvalidModel, 1, "thresholds must be numeric, got {}",
                           dtype_name(thresholds->dtype()));
  if (thresholds->rank() != 2)
    return ctx.input_error(Code::kInvalidModel, 1, "thresholds must have shape (C, T) or (1, T), got {}",
                           dims_to_string(thresholds->dims()));

  const size_t axis = channels_last ? v->rank() - 1 : 1;
  const int64_t channels = v->dim(axis);
  const bool global = thresholds->dim(0) == 1;
  if (!global && thresholds->dim(0) != channels)
    return ctx.input_error(Code::kInvalidModel, 1, "thresholds have {} rows; v {} ({}) has {} channels on axis {}",
                           thresholds->dim(0), dims_to_string(v->dims()), layout, channels, axis);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= v->dim(d);
  for (size_t d = axis + 1; d < v->rank(); ++d) inner *= v->dim(d);

  std::vector<double> thr(static_cast<size_t>(thresholds->numel()));
  for (int64_t k = 0; k < thresholds->numel(); ++k) thr[static_cast<size_t>(k)] = exec::element_as_double(*thresholds, k);
  const int64_t num_steps = thresholds->dim(1);
  const float out_scale = ctx.attr_float("out_scale", 1.0f);
  const float out_bias = ctx.attr_float("out_bias", 0.0f);

  Tensor y(v->dtype(), v->dims());
  if (v->dtype() == DType::kFloat)
    multithreshold_into(v->data<float>(), outer, channels, inner, thr.data(), global, num_steps, out_scale, out_bias,
                        y.data<float>());
  else
    threshold_portable<double>(v->data<double>(), outer, channels, inner, thr.data(), global, num_steps, out_scale,
                               out_bias, y.data<double>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_multithreshold_kernels(exec::KernelRegistry& r) {
  add_general_op(r, "MultiThreshold", 1, multi_threshold);
}

}  // namespace qonnx::kernels
