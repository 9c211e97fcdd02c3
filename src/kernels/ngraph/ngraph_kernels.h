// Registration function of the nGraph-target kernel file.
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

void register_ngraph_kernels(exec::KernelRegistry& r);

}  // namespace qonnx::kernels
