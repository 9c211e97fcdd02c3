// The float GEMM tile for AVX-512F: 8 rows x 32 columns (two zmm per row, 16 accumulators).
#include "kernels/common/gemm_core.h"

#if QONNX_ISA_X86
#include <immintrin.h>

#include <utility>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#endif

namespace qonnx::kernels::gemm_detail {
namespace {

struct Avx512 {
  using reg = __m512;
  static constexpr int kWidth = 16;
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store(float* p, reg r) { _mm512_storeu_ps(p, r); }
  static void store_n(float* p, reg r, int n) { _mm512_mask_storeu_ps(p, mask(n), r); }
  static reg broadcast(float x) { return _mm512_set1_ps(x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};

#include "kernels/common/gemm_micro.h"

}  // namespace

const FloatMicroKernel& float_micro_avx512() {
  static const FloatMicroKernel k = make_float_micro<Avx512, 8, 2>("avx512", std::make_integer_sequence<int, 8>());
  return k;
}

}  // namespace qonnx::kernels::gemm_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // QONNX_ISA_X86
