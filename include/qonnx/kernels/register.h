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

// The families every model may use: standard ONNX and the QONNX dialect. The families of a target's
// own ops (nGraph, Ascend) are registered by their target (qonnx/targets/target.h).
inline void register_core_kernels(exec::KernelRegistry& registry) {
  register_qonnx_kernels(registry);
  register_onnx_kernels(registry);
}

}  // namespace qonnx::kernels
