// The inner loops of the QONNX quantization kernels, callable on caller-owned output buffers (the
// kernels use them after reading and checking their inputs; bench/kernel_bench.cc and
// tests/kernel_fastpath_test.cc call them directly; QuantizeLinear's are in onnx/quantize_linear.h).
// Private to the QONNX kernels, their tests and benchmarks.
#pragma once

#include "qonnx/kernels/quant.h"
#include "qonnx/quant/rounding.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// quant_into and bipolar_quant_into: qonnx/kernels/quant.h.
// Trunc v1 (x, scale, zeropt float32).
void trunc_v1_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, const Tensor& zeropt, int in_bits,
                   int out_bits, quant::RoundingMode mode, float* y);
// Trunc v2 (x, scale, zeropt, out_scale float32; range at out_bits).
void trunc_v2_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, const Tensor& zeropt,
                   const Tensor& out_scale, quant::IntRange range, quant::RoundingMode mode, float* y);

// MultiThreshold on float32 v laid out as (outer, channels, inner); thresholds (channels or, when
// global, 1 row) x steps, as double.
void multithreshold_into(const float* v, int64_t outer, int64_t channels, int64_t inner, const double* thr,
                         bool global, int64_t steps, float scale, float bias, float* y);

}  // namespace qonnx::kernels
