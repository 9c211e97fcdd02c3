// Registration functions of the standard ONNX kernel families (one per file).
#pragma once

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

void register_identity_kernels(exec::KernelRegistry& r);
void register_elementwise_kernels(exec::KernelRegistry& r);
void register_unary_kernels(exec::KernelRegistry& r);
void register_logic_kernels(exec::KernelRegistry& r);
void register_activation_kernels(exec::KernelRegistry& r);
void register_softmax_kernels(exec::KernelRegistry& r);
void register_cast_kernels(exec::KernelRegistry& r);
void register_matmul_kernels(exec::KernelRegistry& r);
void register_gemm_kernels(exec::KernelRegistry& r);
void register_einsum_kernels(exec::KernelRegistry& r);
void register_det_kernels(exec::KernelRegistry& r);
void register_quantize_linear_kernels(exec::KernelRegistry& r);
void register_conv_kernels(exec::KernelRegistry& r);
void register_conv_transpose_kernels(exec::KernelRegistry& r);
void register_pool_kernels(exec::KernelRegistry& r);
void register_normalization_kernels(exec::KernelRegistry& r);
void register_shape_kernels(exec::KernelRegistry& r);
void register_transpose_kernels(exec::KernelRegistry& r);
void register_generator_kernels(exec::KernelRegistry& r);
void register_slice_pad_kernels(exec::KernelRegistry& r);
void register_gather_scatter_kernels(exec::KernelRegistry& r);
void register_reduce_kernels(exec::KernelRegistry& r);
void register_resize_kernels(exec::KernelRegistry& r);
void register_control_flow_kernels(exec::KernelRegistry& r);
// Issue 27: recurrent, signal, text, sequence/optional and random families.
void register_recurrent_kernels(exec::KernelRegistry& r);
void register_signal_kernels(exec::KernelRegistry& r);
void register_text_kernels(exec::KernelRegistry& r);
void register_sequence_kernels(exec::KernelRegistry& r);
void register_random_kernels(exec::KernelRegistry& r);
// Issue 27: training losses, detection heads, sampling, unpooling, Unique, the training optimizers.
void register_loss_kernels(exec::KernelRegistry& r);
void register_detection_kernels(exec::KernelRegistry& r);
void register_grid_sample_kernels(exec::KernelRegistry& r);
void register_unpool_kernels(exec::KernelRegistry& r);
void register_unique_kernels(exec::KernelRegistry& r);
void register_optimizer_kernels(exec::KernelRegistry& r);  // domain ai.onnx.preview.training

}  // namespace qonnx::kernels
