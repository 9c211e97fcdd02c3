// Runtime choice of the instruction set the quantization kernels use (Quant, BipolarQuant, Trunc,
// QuantizeLinear, DequantizeLinear, MultiThreshold). Private to the kernels, their tests and benchmarks.
//
// Chosen once: the best level the CPU supports (__builtin_cpu_supports), capped by the environment
// variable QONNX_SIMD=portable|avx2. Every level gives the same bits (tests/quant_simd_test.cc runs
// both on the same inputs).
#pragma once

namespace qonnx::kernels {

enum class SimdLevel { kPortable, kAvx2 };

SimdLevel simd_level();
const char* simd_level_name(SimdLevel level);
// The best level this CPU runs.
SimdLevel simd_level_supported();
// Tests and benchmarks: use `level` (capped at simd_level_supported()) from now on; returns the
// previous level. Not thread-safe against running kernels.
SimdLevel set_simd_level(SimdLevel level);

}  // namespace qonnx::kernels
