// The int8 GEMM tile for AVX-VNNI (the VEX-encoded vpdpbusd on ymm, Alder Lake and later): 6 rows x 16
// columns. vpdpbusd adds four u8 x s8 products into each int32 lane without saturating (not the
// vpdpbusds form): exact under the caller's bound.
#include "kernels/common/igemm.h"

#if QONNX_ISA_X86
#include <immintrin.h>

#include <utility>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,avxvnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,avxvnni")
#endif

namespace qonnx::kernels::igemm_detail {
namespace {

struct AvxVnni {
  static constexpr int kCols = 8;
  using acc = __m256i;
  using wreg = __m256i;
  using areg = __m256i;
  static acc zero() { return _mm256_setzero_si256(); }
  static wreg load_w(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static areg broadcast(uint32_t four) { return _mm256_set1_epi32(static_cast<int>(four)); }
  static acc madd(acc s, areg a, wreg w) { return _mm256_dpbusd_avx_epi32(s, a, w); }
  static void store(int32_t* c, acc s, int cols) {
    if (cols == kCols) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), s);
    } else {
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_epi32(c, mask, s);
    }
  }
};

#include "kernels/common/igemm_micro.h"

}  // namespace

const Int8MicroKernel& int8_micro_avxvnni() {
  static const Int8MicroKernel k = make_int8_micro<AvxVnni, 6, 2>("avxvnni", std::make_integer_sequence<int, 6>());
  return k;
}

}  // namespace qonnx::kernels::igemm_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // QONNX_ISA_X86
