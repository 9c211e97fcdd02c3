// The one CPU-feature selector of the kernels: which instruction-set path a kernel with several paths
// runs. Private to the kernels, their tests and benchmarks.
//
// Every path of a family gives the same bits (tests/float_gemm_test.cc, tests/quant_simd_test.cc and
// tests/int8_gemm_test.cc run each one on the same inputs); the choice only changes speed. Three
// families, because their paths need different CPU features:
// - kFloat: the float GEMM tiles (common/gemm_micro_*.cc) and the depthwise convolution
//   (onnx/conv_depthwise.cc), built on fused multiply-adds. kAvx512 needs avx512f + avx2 + fma,
//   kAvx2 needs avx2 + fma. The depthwise convolution has one vector path, taken at kAvx2 and kAvx512.
// - kQuant: the quantization loops (common/quant_avx2.cc: Quant, BipolarQuant, Trunc, QuantizeLinear,
//   DequantizeLinear, MultiThreshold, the integer path's requantize pass). kAvx2 needs avx2 (no fma: those
//   loops must not fuse); kAvx512 (avx2 + avx512f) runs the same loops with the requantize pass's direct
//   form on 16 lanes. QONNX_SIMD=portable in the environment selects the portable path.
// - kInt8: the exact u8 x s8 -> int32 GEMM (common/igemm*.cc). kAvx2 needs avx2 (vpmaddubsw or
//   vpmaddwd), kAvxVnni avx2 + avx-vnni (VEX vpdpbusd, ymm), kAvx512 avx512f + avx512bw + avx512vnni
//   (vpdpbusd, zmm). AVX-VNNI and AVX-512 VNNI come in either order on real CPUs (Cascade Lake has
//   only the second, Alder Lake only the first): kAvx512 is preferred when both run. QONNX_SIMD=portable
//   selects the portable path, as for kQuant.
// The choice is made once per process (select() below, a pure function the tests call directly);
// tests and benchmarks may switch it with use().
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define QONNX_ISA_X86 1
#else
#define QONNX_ISA_X86 0
#endif

namespace qonnx::kernels::isa {

// Ordered by preference. For kFloat and kQuant a CPU that runs a level's path runs the lower levels'
// paths too; for kInt8, kAvxVnni and kAvx512 are independent (see above). Only kInt8 has kAvxVnni.
enum class Isa { kPortable, kAvx2, kAvxVnni, kAvx512 };
enum class Family { kFloat, kQuant, kInt8 };

// What the paths need from the CPU.
struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vnni = false;
  bool avxvnni = false;
};

// This CPU's features (all false off x86-64), read once.
CpuFeatures cpu_features();

// Whether `cpu` runs `isa`'s path of `family` (kPortable: always).
bool supports(Family family, Isa isa, const CpuFeatures& cpu);

// The decision: the best path of `family` that `cpu` runs; for kQuant and kInt8, kPortable when
// `simd_env` (the value of QONNX_SIMD, or nullptr) is "portable". kFloat ignores `simd_env`.
Isa select(Family family, const CpuFeatures& cpu, const char* simd_env);

// The path in use: select(family, cpu_features(), getenv("QONNX_SIMD")) on first use, or what use() set.
Isa current(Family family);
// The best path this CPU runs (no environment cap).
Isa best(Family family);
// Tests and benchmarks: from now on run the highest path at or below `isa` (in enum order) that this CPU
// runs; returns the previous choice. Not thread-safe against running kernels.
Isa use(Family family, Isa isa);

// "portable", "avx2", "avxvnni", "avx512".
const char* name(Isa isa);

}  // namespace qonnx::kernels::isa
