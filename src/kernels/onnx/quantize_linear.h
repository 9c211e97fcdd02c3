// The inner loops of QuantizeLinear / DequantizeLinear, callable on caller-owned output buffers (the
// kernels use them after reading and checking their inputs; bench/kernel_bench.cc and the tests call
// them directly). Private to the ONNX kernels, their tests and benchmarks.
#pragma once

#include <cstdint>

#include "qonnx/tensor.h"

namespace qonnx::kernels {

// QuantizeLinear / DequantizeLinear on float32 / integer data. The parameters of element e are
// s[(e / inner) % count] (count 1: per tensor). out_type / in_type: int8, uint8, int16, uint16
// (and int32 for dequantization). zp may be null (zero).
void quantize_linear_into(const float* x, int64_t n, const float* s, const float* zp, int64_t count, int64_t inner,
                          DType out_type, void* y);
void dequantize_linear_into(const void* x, DType in_type, int64_t n, const float* s, const void* zp, int64_t count,
                            int64_t inner, float* y);

}  // namespace qonnx::kernels
