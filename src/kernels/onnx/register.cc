#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {

void register_onnx_kernels(exec::KernelRegistry& r) {
  register_identity_kernels(r);
  register_elementwise_kernels(r);
  register_matmul_kernels(r);
}

}  // namespace qonnx::kernels
