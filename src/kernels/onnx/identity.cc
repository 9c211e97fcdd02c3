// Identity: the output shares the input's (immutable) storage.
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

Status identity(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  ctx.set_output(0, *x);
  return Status::ok();
}

}  // namespace

void register_identity_kernels(exec::KernelRegistry& r) {
  r.add("", "Identity", {1, exec::kNoUpperVersion}, identity);
}

}  // namespace qonnx::kernels
