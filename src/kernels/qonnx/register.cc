#include "kernels/qonnx/qonnx_kernels.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {

void register_qonnx_kernels(exec::KernelRegistry& r) {
  register_quant_kernels(r);
  register_trunc_kernels(r);
  register_multithreshold_kernels(r);
  register_floatquant_kernels(r);
  register_channels_last_kernels(r);
}

}  // namespace qonnx::kernels
