#include "kernels/qonnx/qonnx_kernels.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {
namespace {

// Identity in the general domain (qonnx's cleanup leaves such nodes): the output shares the input's
// (immutable) storage, as ONNX Identity's does.
Status general_identity(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  ctx.set_output(0, *x);
  return Status::ok();
}

}  // namespace

void add_general_op(exec::KernelRegistry& r, const std::string& op_type, exec::VersionRange versions, exec::Kernel kernel) {
  for (const std::string& d : dialect::general_domain_spellings()) r.add(d, op_type, versions, kernel);
  if (dialect::classify("", op_type) != dialect::Op::kNone) r.add("", op_type, versions, kernel);
}

void register_qonnx_kernels(exec::KernelRegistry& r) {
  register_quant_kernels(r);
  register_trunc_kernels(r);
  register_multithreshold_kernels(r);
  register_quant_avg_pool_kernels(r);
  register_floatquant_kernels(r);
  register_channels_last_kernels(r);
  add_general_op(r, "Identity", {1, exec::kNoUpperVersion}, exec::Kernel{general_identity, nullptr, {}});
}

}  // namespace qonnx::kernels
