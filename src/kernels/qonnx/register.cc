#include "kernels/qonnx/qonnx_kernels.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {

void add_general_op(exec::KernelRegistry& r, const std::string& op_type, int since_version, exec::KernelFn fn) {
  for (const std::string& d : dialect::general_domain_spellings()) r.add(d, op_type, since_version, fn);
  if (dialect::classify("", op_type) != dialect::Op::kNone) r.add("", op_type, since_version, fn);
}

void register_qonnx_kernels(exec::KernelRegistry& r) {
  register_quant_kernels(r);
  register_trunc_kernels(r);
  register_multithreshold_kernels(r);
  register_floatquant_kernels(r);
  register_channels_last_kernels(r);
}

}  // namespace qonnx::kernels
