// MaxUnpool (9, 11, 22): the partial inverse of MaxPool. The output is zero except that X[i] goes to
// flat position I[i] of the inferred shape (N, C, (in - 1) * stride - pad_begin - pad_end + kernel per
// spatial dim), the layout MaxPool's indices use. With output_shape (input #2) the inferred block sits
// at the start of a zero output of that shape (ONNX's reference), so it must be at least as large.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

struct UnpoolAttrs {
  std::vector<int64_t> kernel, pads, strides;
};

Result<UnpoolAttrs> prepare_unpool(const ir::Node& node, int64_t) {
  UnpoolAttrs a;
  if (!node.has_attr("kernel_shape")) return Status(Code::kInvalidModel, "attribute 'kernel_shape' is required");
  QONNX_ASSIGN_OR_RETURN(a.kernel, ints_attr(node, "kernel_shape"));
  QONNX_ASSIGN_OR_RETURN(a.pads, ints_attr(node, "pads"));
  QONNX_ASSIGN_OR_RETURN(a.strides, ints_attr(node, "strides"));
  const size_t k = a.kernel.size();
  if (k == 0) return Status(Code::kInvalidModel, "attribute 'kernel_shape' must not be empty");
  if (a.pads.empty()) a.pads.assign(2 * k, 0);
  if (a.strides.empty()) a.strides.assign(k, 1);
  if (a.pads.size() != 2 * k)
    return Status(Code::kInvalidModel, fmt::format("attribute 'pads' must have {} values, got {}", 2 * k, a.pads.size()));
  if (a.strides.size() != k)
    return Status(Code::kInvalidModel, fmt::format("attribute 'strides' must have {} values, got {}", k, a.strides.size()));
  for (size_t i = 0; i < k; ++i) {
    if (a.kernel[i] <= 0) return Status(Code::kInvalidModel, "attribute 'kernel_shape' values must be positive");
    if (a.strides[i] <= 0) return Status(Code::kInvalidModel, "attribute 'strides' values must be positive");
    if (a.pads[i] < 0 || a.pads[i + k] < 0) return Status(Code::kInvalidModel, "attribute 'pads' values must be >= 0");
    if (a.kernel[i] > (int64_t{1} << 31) || a.strides[i] > (int64_t{1} << 31) || a.pads[i] > (int64_t{1} << 31) ||
        a.pads[i + k] > (int64_t{1} << 31))
      return Status(Code::kInvalidModel, "attributes 'kernel_shape', 'strides' and 'pads' must be below 2^31");
  }
  return a;
}

Status max_unpool(exec::KernelContext& ctx, const UnpoolAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* idx, ctx.required(1, "I"));
  if (!dtype_is_float(x->dtype())) return unsupported_type(ctx, 0, x->dtype());
  if (idx->dtype() != DType::kInt64) return unsupported_type(ctx, 1, idx->dtype());
  const size_t k = a.kernel.size();
  if (x->rank() != k + 2)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank {} (N, C and {} spatial dims of kernel_shape), got {}", k + 2, k,
                           dims_to_string(x->dims()));
  if (idx->dims() != x->dims())
    return ctx.input_error(Code::kInvalidModel, 1, "must have X's shape {}, got {}", dims_to_string(x->dims()),
                           dims_to_string(idx->dims()));
  Dims inferred{x->dim(0), x->dim(1)};
  for (size_t i = 0; i < k; ++i) {
    int64_t d = 0;
    const bool overflow = __builtin_mul_overflow(x->dim(i + 2) - 1, a.strides[i], &d) ||
                          __builtin_add_overflow(d, a.kernel[i] - a.pads[i] - a.pads[i + k], &d);
    if (overflow) return ctx.input_error(Code::kInvalidModel, 0, "spatial dim {} gives an output size that overflows", i);
    if (x->dim(i + 2) == 0 || d <= 0)
      return ctx.input_error(Code::kInvalidModel, 0, "spatial dim {} of size {} gives an output size of {}", i, x->dim(i + 2), d);
    inferred.push_back(d);
  }
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, inferred, x->dtype()));
  Dims out_dims = inferred;
  if (const Tensor* shape = ctx.input(2)) {
    if (shape->dtype() != DType::kInt64) return unsupported_type(ctx, 2, shape->dtype());
    if (shape->rank() != 1 || shape->numel() != static_cast<int64_t>(k + 2))
      return ctx.input_error(Code::kInvalidModel, 2, "must be a 1-D tensor of {} values, got shape {}", k + 2,
                             dims_to_string(shape->dims()));
    out_dims.assign(shape->data<int64_t>(), shape->data<int64_t>() + k + 2);
    for (size_t i = 0; i < k + 2; ++i)
      if (out_dims[i] < inferred[i] || (i < 2 && out_dims[i] != inferred[i]))
        return ctx.input_error(Code::kInvalidModel, 2, "output shape {} does not hold the unpooled shape {}",
                               dims_to_string(out_dims), dims_to_string(inferred));
    QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  }
  const int64_t total = checked_numel(inferred);
  const int64_t* ind = idx->data<int64_t>();
  for (int64_t i = 0; i < idx->numel(); ++i)
    if (ind[i] < 0 || ind[i] >= total)
      return ctx.input_error(Code::kInvalidModel, 1, "index {} at element {} is outside the unpooled shape {} ({} elements)", ind[i],
                             i, dims_to_string(inferred), total);
  Tensor out(x->dtype(), out_dims);  // zero-filled
  const size_t es = dtype_size(x->dtype());
  const auto* src = static_cast<const uint8_t*>(x->raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  // Flat position in the inferred shape -> position in the output (the same when they are equal).
  const std::vector<int64_t> in_strides = row_major_strides(inferred), out_strides = row_major_strides(out_dims);
  for (int64_t i = 0; i < x->numel(); ++i) {
    int64_t rest = ind[i], pos = 0;
    for (size_t d = 0; d < inferred.size(); ++d) {
      pos += rest / in_strides[d] * out_strides[d];
      rest %= in_strides[d];
    }
    std::memcpy(dst + static_cast<size_t>(pos) * es, src + static_cast<size_t>(i) * es, es);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_unpool_kernels(exec::KernelRegistry& r) {
  const auto k = exec::typed_kernel<UnpoolAttrs, prepare_unpool, max_unpool>();
  r.add("", "MaxUnpool", {9, 10}, k);
  r.add("", "MaxUnpool", {11, 21}, k);
  r.add("", "MaxUnpool", {22, exec::kNoUpperVersion}, k);
}

}  // namespace qonnx::kernels
