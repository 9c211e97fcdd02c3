#include "kernels/onnx/elementwise_common.h"

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
#include "kernels/common/axis.h"
#include "kernels/common/element_copy.h"

namespace qonnx::kernels {

Status unsupported_type(const exec::KernelContext& ctx, size_t i, DType dtype) {
  return ctx.input_error(Code::kUnsupported, i, "{} does not support type {}", ctx.node().op_type(), dtype_name(dtype));
}

Status require_same_dtype(const exec::KernelContext& ctx, size_t i, size_t j) {
  DType a = ctx.input(i)->dtype(), b = ctx.input(j)->dtype();
  if (a == b) return Status::ok();
  return ctx.input_error(Code::kInvalidModel, j, "type {} differs from input #{}'s {}", dtype_name(b), i, dtype_name(a));
}

Result<Dims> elementwise_output_dims(const exec::KernelContext& ctx, const std::vector<const Tensor*>& inputs) {
  std::vector<std::pair<size_t, const Tensor*>> indexed;
  for (size_t i = 0; i < inputs.size(); ++i) indexed.emplace_back(i, inputs[i]);
  QONNX_ASSIGN_OR_RETURN(Dims out, exec::broadcast_input_dims(ctx, indexed));
  // The output has at most the inputs' element size (comparisons give bool).
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out, inputs[0]->dtype()));
  return out;
}

Result<LegacyBroadcast> prepare_legacy_broadcast(const ir::Node& node, int64_t) {
  LegacyBroadcast lb;
  QONNX_ASSIGN_OR_RETURN(const bool broadcast, flag_attr(node, "broadcast", false));
  lb.at_axis = broadcast && node.has_attr("axis");
  if (lb.at_axis) {
    QONNX_ASSIGN_OR_RETURN(lb.axis, int_attr(node, "axis", 0));
  }
  return lb;
}

Result<Tensor> legacy_broadcast_operand(const exec::KernelContext& ctx, const LegacyBroadcast& lb, const Tensor& a,
                                        const Tensor& b) {
  if (!lb.at_axis) return b;
  const int64_t rank = static_cast<int64_t>(a.rank()), b_rank = static_cast<int64_t>(b.rank());
  int64_t axis;
  if (!normalize_axis(lb.axis, rank, &axis) || axis + b_rank > rank)
    return ctx.input_error(Code::kInvalidModel, 1, "shape {} does not fit input #0's {} at axis {}",
                           dims_to_string(b.dims()), dims_to_string(a.dims()), lb.axis);
  Dims dims = b.dims();
  dims.resize(static_cast<size_t>(rank - axis), 1);
  return b.reshaped(dims);
}

}  // namespace qonnx::kernels
