// The int8 GEMM tiles for AVX-512 VNNI: 8 rows x 32 columns (two zmm per row, 16 accumulators), and 6 rows x
// 64 columns (four zmm per row, 24 accumulators) for weights whose column count it pads no further: 10 loads
// (8 broadcasts, 2 weight groups) per 16 vpdpbusd against 10 per 24, and a 64-column layer's rows read once.
// A last panel of at most 16 columns takes 8 x 16 tiles (one zmm per row), so that n = 100 computes 112
// columns, not 128.
// vpdpbusd adds four u8 x s8 products into each int32 lane without saturating (not the vpdpbusds
// form): exact under the caller's bound.
#include "kernels/common/igemm.h"

#if QONNX_ISA_X86
#include <immintrin.h>

#include <utility>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vnni,avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vnni,avx2")
#endif

namespace qonnx::kernels::igemm_detail {
namespace {

struct Avx512Vnni {
  static constexpr int kCols = 16;
  using acc = __m512i;
  using wreg = __m512i;
  using areg = __m512i;
  static acc zero() { return _mm512_setzero_si512(); }
  static wreg load_w(const int8_t* p) { return _mm512_loadu_si512(p); }
  static areg broadcast(uint32_t four) { return _mm512_set1_epi32(static_cast<int>(four)); }
  // In place: through the intrinsic GCC 12 copied every accumulator of the tile out and back on each k-group
  // (32 register moves and two stack stores per 16 products, about a fifth of the tile's time).
  static acc madd(acc s, areg a, wreg w) {
    asm("vpdpbusd %2, %1, %0" : "+v"(s) : "v"(a), "v"(w));
    return s;
  }
  static void store(int32_t* c, acc s, int cols) {
    _mm512_mask_storeu_epi32(c, static_cast<__mmask16>((1u << cols) - 1u), s);
  }
};

#include "kernels/common/igemm_micro.h"

}  // namespace

const Int8MicroKernel& int8_micro_avx512vnni() {
  static const Int8MicroKernel k =
      make_int8_micro<Avx512Vnni, 8, 2>("avx512vnni", std::make_integer_sequence<int, 8>());
  return k;
}

const Int8MicroKernel& int8_micro_avx512vnni_wide() {
  static const Int8MicroKernel k =
      make_int8_micro<Avx512Vnni, 6, 4>("avx512vnni", std::make_integer_sequence<int, 6>());
  return k;
}

const Int8MicroKernel& int8_micro_avx512vnni_narrow() {
  static const Int8MicroKernel k =
      make_int8_micro<Avx512Vnni, 8, 1>("avx512vnni", std::make_integer_sequence<int, 8>());
  return k;
}

}  // namespace qonnx::kernels::igemm_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // QONNX_ISA_X86
