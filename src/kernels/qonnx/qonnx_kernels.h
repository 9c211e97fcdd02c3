// Registration functions of the QONNX kernel files (one per file).
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

// Registers `kernel` for `versions` (or `fn` from `since_version` on) in every spelling of the QONNX
// general domain, and in the default domain where the dialect allows the op there (2021 exports).
void add_general_op(exec::KernelRegistry& r, const std::string& op_type, exec::VersionRange versions, exec::Kernel kernel);

void register_quant_kernels(exec::KernelRegistry& r);
void register_trunc_kernels(exec::KernelRegistry& r);
void register_multithreshold_kernels(exec::KernelRegistry& r);
void register_quant_avg_pool_kernels(exec::KernelRegistry& r);
void register_floatquant_kernels(exec::KernelRegistry& r);
void register_channels_last_kernels(exec::KernelRegistry& r);

}  // namespace qonnx::kernels
