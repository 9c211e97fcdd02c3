#include "kernels/ascend/ascend_kernels.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {

void register_ascend_kernels(exec::KernelRegistry& r) {
  register_trans_quant_param_kernels(r);
  register_quant_batch_matmul_kernels(r);
}

}  // namespace qonnx::kernels
