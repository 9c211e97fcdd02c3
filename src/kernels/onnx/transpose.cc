// Transpose: the ONNX kernel (the copies themselves are common/transpose.cc).
#include <algorithm>
#include <numeric>
#include <optional>

#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/transpose.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {

namespace {

// `perm`, when given (else the axes reversed).
struct TransposeAttrs {
  std::optional<std::vector<int64_t>> perm;
};

Result<TransposeAttrs> prepare_transpose(const ir::Node& node, int64_t) {
  TransposeAttrs a;
  if (node.has_attr("perm")) {
    QONNX_ASSIGN_OR_RETURN(a.perm, ints_attr(node, "perm"));
  }
  return a;
}

Status transpose(exec::KernelContext& ctx, const TransposeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> perm(x->rank());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (attrs.perm) {
    perm = *attrs.perm;
    std::vector<int64_t> check = perm;
    // perm entries must be a permutation of 0..rank-1 (negative entries are not allowed).
    bool ok = static_cast<int64_t>(perm.size()) == rank &&
              std::all_of(perm.begin(), perm.end(), [&](int64_t p) { return p >= 0; }) && normalize_axes(&check, rank);
    if (!ok) return ctx.error(Code::kInvalidModel, "perm {} is not a permutation of rank {}", dims_to_string(perm), rank);
  }
  Tensor out = ctx.output_buffer(x->dtype(), transposed_dims(*x, perm));
  transpose_into(*x, perm, &out);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_transpose_kernels(exec::KernelRegistry& r) {
  r.add("", "Transpose", {1, exec::kNoUpperVersion}, exec::typed_kernel<TransposeAttrs, prepare_transpose, transpose>());
}

}  // namespace qonnx::kernels
