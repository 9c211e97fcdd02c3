// MultiThreshold (FINN dialect, SEMANTICS.md section 1), as qonnx's multithreshold() computes it:
// Y = out_scale * count_t(v >= thresholds[c, t]) + out_bias, in v's float type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/qonnx/fast_kernels.h"
#include "kernels/qonnx/qonnx_kernels.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/threads.h"

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

// Rows [r0, r1) of the (outer * channels) rows of `inner` elements.
template <typename T>
void threshold_rows(const T* v, int64_t r0, int64_t r1, int64_t channels, int64_t inner, const double* thr,
                    bool global, int64_t steps, T scale, T bias, T* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const double* row = thr + (global ? 0 : r % channels) * steps;
    for (int64_t i = r * inner; i < (r + 1) * inner; ++i) y[i] = threshold_one(v[i], row, steps, scale, bias);
  }
}

template <typename T>
void threshold_portable(const T* v, int64_t outer, int64_t channels, int64_t inner, const double* thr, bool global,
                        int64_t steps, T scale, T bias, T* y) {
  exec::parallel_for(outer * channels, inner * std::max<int64_t>(steps, 1), [&](int64_t r0, int64_t r1) {
    threshold_rows(v, r0, r1, channels, inner, thr, global, steps, scale, bias, y);
  });
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
// channel on the innermost axis (channels-last, (N, C)). Anything else stays portable. Threads split
// the elements (in whole vectors) or the rows.
void threshold_avx2(const float* v, int64_t outer, int64_t channels, int64_t inner, const double* thr, bool global,
                    int64_t steps, float scale, float bias, float* y) {
  const int64_t rows = global ? 1 : channels;
  std::vector<float> up(static_cast<size_t>(rows * steps));
  for (size_t k = 0; k < up.size(); ++k) up[k] = float_at_or_above(thr[k]);
  const int64_t n = outer * channels * inner, work = std::max<int64_t>(steps, 1);
  if (global) {
    exec::parallel_for((n + 7) / 8, 8 * work, [&](int64_t u0, int64_t u1) {
      const int64_t begin = u0 * 8, end = std::min(n, u1 * 8);
      const int64_t done = begin + avx2::threshold_run(v + begin, up.data(), steps, scale, bias, y + begin, end - begin);
      for (int64_t e = done; e < end; ++e) y[e] = threshold_one(v[e], thr, steps, scale, bias);
    });
  } else if (inner >= 16) {
    exec::parallel_for(outer * channels, inner * work, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = r * inner, c = r % channels;
        const int64_t done = avx2::threshold_run(v + base, up.data() + c * steps, steps, scale, bias, y + base, inner);
        for (int64_t i = base + done; i < base + inner; ++i)
          y[i] = threshold_one(v[i], thr + c * steps, steps, scale, bias);
      }
    });
  } else if (inner == 1) {
    // Each vector of 8 elements starts at a channel that is a multiple of period = gcd(8, channels):
    // one block of thresholds per such start, sorted and split as threshold_run_by_channel wants
    // (counting does not depend on the order).
    int64_t period = 8;
    while (channels % period != 0) period /= 2;
    const int64_t starts = channels / period, block_floats = avx2::threshold_block_floats(steps);
    const int64_t h = steps / 2, half = avx2::threshold_split_half(steps);
    for (int64_t c = 0; c < channels; ++c) {
      float* row = up.data() + c * steps;
      std::sort(row, row + steps, [](float a, float b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
    }
    std::vector<float> storage(static_cast<size_t>(starts * block_floats + 8), NAN);
    float* blocks = storage.data();
    while (reinterpret_cast<uintptr_t>(blocks) % 32 != 0) ++blocks;  // aligned vector loads
    for (int64_t b = 0; b < starts; ++b) {
      float* block = blocks + b * block_floats;
      for (int64_t l = 0; l < 8; ++l) {
        const float* t = up.data() + (b * period + l) % channels * steps;
        if (steps > 0) block[l] = t[h];
        for (int64_t r = 0; r < h; ++r) block[(1 + r) * 8 + l] = t[r];
        for (int64_t r = 0; h + 1 + r < steps; ++r) block[(1 + half + r) * 8 + l] = t[h + 1 + r];
      }
    }
    exec::parallel_for((n + 7) / 8, 8 * work, [&](int64_t u0, int64_t u1) {
      const int64_t begin = u0 * 8, end = std::min(n, u1 * 8);
      const int64_t done = begin + avx2::threshold_run_by_channel(v + begin, blocks, channels, period, begin % channels,
                                                                  steps, scale, bias, y + begin, end - begin);
      for (int64_t e = done; e < end; ++e) y[e] = threshold_one(v[e], thr + (e % channels) * steps, steps, scale, bias);
    });
  } else {
    threshold_portable(v, outer, channels, inner, thr, global, steps, scale, bias, y);
  }
}

}  // namespace

void multithreshold_into(const float* v, int64_t outer, int64_t channels, int64_t inner, const double* thr,
                         bool global, int64_t steps, float scale, float bias, float* y) {
  if (isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2 && channels > 0)
    threshold_avx2(v, outer, channels, inner, thr, global, steps, scale, bias, y);
  else
    threshold_portable(v, outer, channels, inner, thr, global, steps, scale, bias, y);
}

namespace {

struct MultiThresholdAttrs {
  std::string layout;
  bool channels_last;
  float out_scale, out_bias;
};

Result<MultiThresholdAttrs> prepare_multi_threshold(const ir::Node& node, int64_t) {
  if (!node.has_attr("out_dtype"))
    return Status(Code::kInvalidModel, "MultiThreshold needs the attribute out_dtype (e.g. \"UINT4\")");
  MultiThresholdAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.layout, string_attr(node, "data_layout", "NCHW"));
  if (a.layout.empty()) return Status(Code::kInvalidModel, "data_layout is empty (expected e.g. NCHW, NHWC or NC)");
  a.channels_last = a.layout.back() == 'C';
  QONNX_ASSIGN_OR_RETURN(a.out_scale, float_attr(node, "out_scale", 1.0f));
  QONNX_ASSIGN_OR_RETURN(a.out_bias, float_attr(node, "out_bias", 0.0f));
  return a;
}

Status multi_threshold(exec::KernelContext& ctx, const MultiThresholdAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* v, ctx.required(0, "v"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* thresholds, ctx.required(1, "thresholds"));
  const std::string& layout = attrs.layout;
  const bool channels_last = attrs.channels_last;

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
  const float out_scale = attrs.out_scale, out_bias = attrs.out_bias;

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

// y = out_scale * count + out_bias with count in [0, T] (T thresholds per channel): v * out_scale with
// v = count + out_bias / out_scale, when that quotient is an integer and every y is float32 v * out_scale.
std::vector<std::optional<exec::IntegerForm>> multi_threshold_forms(const exec::PrepackContext& c) {
  std::vector<std::optional<exec::IntegerForm>> out(1);
  const Tensor* thresholds = c.constant(1);
  if (!thresholds || thresholds->rank() != 2 || !c.prepared) return out;
  const auto& attrs = *static_cast<const MultiThresholdAttrs*>(c.prepared);
  const float s = attrs.out_scale, b = attrs.out_bias;
  const int64_t steps = thresholds->dim(1);
  if (!std::isfinite(s) || s == 0.0f || !std::isfinite(b) || steps > (1 << 16)) return out;
  const float offset = b / s;
  if (offset != std::floor(offset) || std::abs(offset) > float(1 << 24)) return out;
  for (int64_t count = 0; count <= steps; ++count) {
    const float y = s * static_cast<float>(count) + b;
    if (y != (static_cast<float>(count) + offset) * s) return out;
  }
  exec::IntegerForm form;
  form.lo = static_cast<int64_t>(offset);
  form.hi = steps + static_cast<int64_t>(offset);
  form.scales = {s};
  out[0] = std::move(form);
  return out;
}

}  // namespace

void register_multithreshold_kernels(exec::KernelRegistry& r) {
  exec::Kernel kernel = exec::typed_kernel<MultiThresholdAttrs, prepare_multi_threshold, multi_threshold>();
  kernel.integer_forms = multi_threshold_forms;
  add_general_op(r, dialect::kMultiThresholdOp, {1, exec::kNoUpperVersion}, kernel);
}

}  // namespace qonnx::kernels
