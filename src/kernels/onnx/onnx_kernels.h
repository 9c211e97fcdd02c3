// Registration functions of the standard ONNX kernel families (one per file).
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

void register_identity_kernels(exec::KernelRegistry& r);
void register_elementwise_kernels(exec::KernelRegistry& r);
void register_matmul_kernels(exec::KernelRegistry& r);

}  // namespace qonnx::kernels
