// Registration functions of the QONNX kernel files (one per file).
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

void register_quant_kernels(exec::KernelRegistry& r);
void register_trunc_kernels(exec::KernelRegistry& r);
void register_multithreshold_kernels(exec::KernelRegistry& r);
void register_floatquant_kernels(exec::KernelRegistry& r);
void register_channels_last_kernels(exec::KernelRegistry& r);

}  // namespace qonnx::kernels
