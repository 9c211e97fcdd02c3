// Explicit registration of every kernel family (no static-initializer self-registration).
#pragma once

namespace qonnx::exec {
class KernelRegistry;
}

namespace qonnx::kernels {

void register_qonnx_kernels(exec::KernelRegistry& registry);
void register_onnx_kernels(exec::KernelRegistry& registry);
void register_ngraph_kernels(exec::KernelRegistry& registry);
void register_ascend_kernels(exec::KernelRegistry& registry);

inline void register_all_kernels(exec::KernelRegistry& registry) {
  register_qonnx_kernels(registry);
  register_onnx_kernels(registry);
  register_ngraph_kernels(registry);
  register_ascend_kernels(registry);
}

}  // namespace qonnx::kernels
