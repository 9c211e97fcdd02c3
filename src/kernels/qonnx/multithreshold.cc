// MultiThreshold (FINN dialect, SEMANTICS.md section 1), as qonnx's multithreshold() computes it:
// Y = out_scale * count_t(v >= thresholds[c, t]) + out_bias, in v's float type.
#include <vector>

#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/qonnx/qonnx_kernels.h"

namespace qonnx::kernels {
namespace {

// Counts thresholds at or below each element. Comparisons run in double, which holds float16,
// float32 and float64 values exactly (numpy compares in the promoted type, with the same result).
template <typename T>
void threshold_counts(const Tensor& v, const std::vector<double>& thr, int64_t num_steps, bool global, int64_t outer,
                      int64_t channels, int64_t inner, T scale, T bias, Tensor* y) {
  const T* vs = v.data<T>();
  T* ys = y->data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const double* row = thr.data() + (global ? 0 : c) * num_steps;
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double x = static_cast<double>(vs[base + i]);
        int64_t count = 0;
        for (int64_t t = 0; t < num_steps; ++t) count += x >= row[t] ? 1 : 0;
        // Two roundings (multiply, then add), as numpy's out_scale * ret + out_bias.
        T scaled = scale * static_cast<T>(count);
        ys[base + i] = scaled + bias;
      }
    }
  }
}

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
    threshold_counts<float>(*v, thr, num_steps, global, outer, channels, inner, out_scale, out_bias, &y);
  else
    threshold_counts<double>(*v, thr, num_steps, global, outer, channels, inner, out_scale, out_bias, &y);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_multithreshold_kernels(exec::KernelRegistry& r) {
  add_general_op(r, "MultiThreshold", 1, multi_threshold);
}

}  // namespace qonnx::kernels
