// The float GEMM tile for AVX2 + FMA: 6 rows x 16 columns (two ymm per row, 12 accumulators).
#include "kernels/common/gemm_core.h"

#if QONNX_ISA_X86
#include <immintrin.h>

#include <utility>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

namespace qonnx::kernels::gemm_detail {
namespace {

struct Avx2 {
  using reg = __m256;
  static constexpr int kWidth = 8;
  static __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg load_n(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store(float* p, reg r) { _mm256_storeu_ps(p, r); }
  static void store_n(float* p, reg r, int n) { _mm256_maskstore_ps(p, mask(n), r); }
  static reg broadcast(float x) { return _mm256_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
};

#include "kernels/common/gemm_micro.h"

}  // namespace

const FloatMicroKernel& float_micro_avx2() {
  static const FloatMicroKernel k = make_float_micro<Avx2, 6, 2>("avx2", std::make_integer_sequence<int, 6>());
  return k;
}

}  // namespace qonnx::kernels::gemm_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // QONNX_ISA_X86
