#include "kernels/onnx/elementwise_common.h"

#include <fmt/format.h>

#include "kernels/onnx/axis.h"
#include "kernels/onnx/element_copy.h"

namespace qonnx::kernels {

Status unsupported_type(const exec::KernelContext& ctx, size_t i, DType dtype) {
  return ctx.input_error(Code::kUnsupported, i, "{} does not support type {}", ctx.node().op_type(), dtype_name(dtype));
}

Status require_same_dtype(const exec::KernelContext& ctx, size_t i, size_t j) {
  DType a = ctx.input(i)->dtype(), b = ctx.input(j)->dtype();
  if (a == b) return Status::ok();
  return ctx.input_error(Code::kInvalidModel, j, "type {} differs from input #{}'s {}", dtype_name(b), i, dtype_name(a));
}

Result<Dims> broadcast_inputs(const exec::KernelContext& ctx, const std::vector<const Tensor*>& inputs) {
  Dims out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Dims& d = inputs[i]->dims();
    if (i == 0) {
      out = d;
    } else if (!exec::broadcast_dims(out, d, &out)) {
      return ctx.input_error(Code::kInvalidModel, i, "shape {} does not broadcast with {}", dims_to_string(d),
                             dims_to_string(out));
    }
  }
  // The output has at most the inputs' element size (comparisons give bool).
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out, inputs[0]->dtype()));
  return out;
}

Result<Tensor> legacy_broadcast_operand(const exec::KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (ctx.op_version() >= 7 || ctx.attr_int("broadcast", 0) == 0 || !ctx.has_attr("axis")) return b;
  const int64_t rank = static_cast<int64_t>(a.rank()), b_rank = static_cast<int64_t>(b.rank());
  int64_t axis;
  if (!normalize_axis(ctx.attr_int("axis", 0), rank, &axis) || axis + b_rank > rank)
    return ctx.input_error(Code::kInvalidModel, 1, "shape {} does not fit input #0's {} at axis {}",
                           dims_to_string(b.dims()), dims_to_string(a.dims()), ctx.attr_int("axis", 0));
  Dims dims = b.dims();
  dims.resize(static_cast<size_t>(rank - axis), 1);
  return b.reshaped(dims);
}

}  // namespace qonnx::kernels
