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
  // Identity passes sequences and optionals through too (Identity-14 and -16 widen its types to them).
  r.add("", "Identity", {1, exec::kNoUpperVersion}, exec::with_containers(exec::Kernel{identity, nullptr, {}}));
}

}  // namespace qonnx::kernels
