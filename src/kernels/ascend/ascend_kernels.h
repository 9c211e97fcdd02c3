// Registration functions of the Ascend-target kernel files (one per file).
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

void register_trans_quant_param_kernels(exec::KernelRegistry& r);
void register_quant_batch_matmul_kernels(exec::KernelRegistry& r);

}  // namespace qonnx::kernels
