// The int8 GEMM tiles for AVX2: vpmaddubsw (4 rows x 16 columns; 4 rows x 8 columns summing 16 k in
// int16 when the bound allows) when the weights' bound keeps its int16 sums from saturating, else both operands widened to int16 for vpmaddwd (6 rows x 8
// columns), which is exact for any 8-bit values.
#include "kernels/common/igemm.h"

#if QONNX_ISA_X86
#include <immintrin.h>

#include <utility>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace qonnx::kernels::igemm_detail {
namespace {

// The first `cols` of the 8 int32 lanes.
void store_lanes(int32_t* c, __m256i r, int cols) {
  if (cols == 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), r);
  } else {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_epi32(c, mask, r);
  }
}

// u8 x s8 pairs -> int16 (saturating: the caller's bound keeps every pair sum within int16), then
// pairs of those -> int32 by a multiply with ones.
struct Maddubs {
  static constexpr int kCols = 8;
  using acc = __m256i;
  using wreg = __m256i;
  using areg = __m256i;
  static acc zero() { return _mm256_setzero_si256(); }
  static wreg load_w(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static areg broadcast(uint32_t four) { return _mm256_set1_epi32(static_cast<int>(four)); }
  static areg broadcast(const uint8_t* p) {
    uint32_t four;
    __builtin_memcpy(&four, p, 4);
    return broadcast(four);
  }
  static acc madd(acc s, areg a, wreg w) {
    return _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(a, w), _mm256_set1_epi16(1)));
  }
  static void store(int32_t* c, acc s, int cols) { store_lanes(c, s, cols); }
};

// Both operands as int16, vpmaddwd: exact. A group of 8 columns x 4 k is two vectors of 4 columns
// (16 int16 each); each column's lane pair holds the sums of k 0-1 and 2-3, added at the store.
struct Madd16 {
  static constexpr int kCols = 8;
  struct acc {
    __m256i lo, hi;  // columns 0-3 and 4-7, two partial sums per column
  };
  using wreg = acc;
  using areg = __m256i;  // a0 a1 a2 a3 as int16, repeated
  static acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  static wreg load_w(const int8_t* p) {
    return {_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  static areg broadcast(uint32_t four) {
    const __m256i widen = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1,
                                           3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
    return _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(four)), widen);
  }
  static acc madd(acc s, areg a, wreg w) {
    return {_mm256_add_epi32(s.lo, _mm256_madd_epi16(a, w.lo)), _mm256_add_epi32(s.hi, _mm256_madd_epi16(a, w.hi))};
  }
  static void store(int32_t* c, acc s, int cols) {
    // hadd gives columns 0 1 4 5 | 2 3 6 7; the permute puts them in order.
    store_lanes(c, _mm256_permute4x64_epi64(_mm256_hadd_epi32(s.lo, s.hi), _MM_SHUFFLE(3, 1, 2, 0)), cols);
  }
};

#include "kernels/common/igemm_micro.h"

// avx2-maddubs-k16: per row and column vector, the vpmaddubsw pair sums of 4 groups (16 k) are added in
// int16 (the bound keeps each lane within 8 products), then widened once by vpmaddwd with ones. k values of
// the rows from a[i] + at, the panel from w (advanced past them).
template <int R, int NV>
__attribute__((always_inline)) inline void maddubs_k16_run(__m256i (&acc)[R][NV], int64_t k, const uint8_t* const* a,
                                                           int64_t at, const int8_t*& w) {
  constexpr int kChunk = 4;             // groups per int16 sum
  constexpr int kGroupBytes = 32 * NV;  // one k-group of the panel
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t chunks = k / (4 * kChunk);
  const uint8_t* row[R];
  for (int i = 0; i < R; ++i) row[i] = a[i] + at;
  for (int64_t ch = 0; ch < chunks; ++ch, w += kChunk * kGroupBytes) {
    __m256i wv[kChunk][NV];
    for (int g = 0; g < kChunk; ++g)
      for (int v = 0; v < NV; ++v) wv[g][v] = Maddubs::load_w(w + g * kGroupBytes + 32 * v);
    for (int i = 0; i < R; ++i) {
      __m256i av[kChunk];
      for (int g = 0; g < kChunk; ++g) av[g] = Maddubs::broadcast(row[i] + 4 * (kChunk * ch + g));
      for (int v = 0; v < NV; ++v) {
        __m256i sum16 = _mm256_maddubs_epi16(av[0], wv[0][v]);
        for (int g = 1; g < kChunk; ++g) sum16 = _mm256_add_epi16(sum16, _mm256_maddubs_epi16(av[g], wv[g][v]));
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(sum16, ones));
      }
    }
  }
  // The last < 16 k, a group at a time (the last one partial when k % 4 != 0; the panel holds zeros there).
  for (int64_t p = chunks * 4 * kChunk; p < k; p += 4, w += kGroupBytes) {
    const int count = k - p < 4 ? static_cast<int>(k - p) : 4;
    __m256i wv[NV];
    for (int v = 0; v < NV; ++v) wv[v] = Maddubs::load_w(w + 32 * v);
    for (int i = 0; i < R; ++i) {
      const __m256i av = count == 4 ? Maddubs::broadcast(row[i] + p) : Maddubs::broadcast(left_group(row[i] + p, count));
      for (int v = 0; v < NV; ++v) acc[i][v] = Maddubs::madd(acc[i][v], av, wv[v]);
    }
  }
}

template <int R, int NV>
void maddubs_k16_tile(int64_t k, const uint8_t* const* a, const int8_t* w, int32_t* c, int64_t ldc, int cols,
                      const Int8Slices* slices) {
  __m256i acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_si256();
  if (slices) {
    for (int64_t s = 0; s < k / slices->slice_k; ++s) maddubs_k16_run<R, NV>(acc, slices->slice_k, a, slices->offsets[s], w);
  } else {
    maddubs_k16_run<R, NV>(acc, k, a, 0, w);
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) {
      const int left = cols - v * 8;
      if (left > 0) store_lanes(c + i * ldc + v * 8, acc[i][v], left < 8 ? left : 8);
    }
}

template <int MR, int NV, int... Rows>
Int8MicroKernel make_maddubs_k16(std::integer_sequence<int, Rows...>) {
  const Int8TileFn fns[] = {&maddubs_k16_tile<Rows + 1, NV>...};
  Int8MicroKernel k;
  k.name = "avx2-maddubs-k16";
  k.mr = MR;
  k.nr = NV * 8;
  for (int r = 0; r < MR; ++r) k.tile[r] = fns[r];
  return k;
}

}  // namespace

const Int8MicroKernel& int8_micro_avx2_maddubs_k16() {
  static const Int8MicroKernel k = make_maddubs_k16<4, 1>(std::make_integer_sequence<int, 4>());
  return k;
}

const Int8MicroKernel& int8_micro_avx2_maddubs() {
  static const Int8MicroKernel k =
      make_int8_micro<Maddubs, 4, 2>("avx2-maddubs", std::make_integer_sequence<int, 4>());
  return k;
}

const Int8MicroKernel& int8_micro_avx2_madd16() {
  static const Int8MicroKernel k = make_int8_micro<Madd16, 6, 1>("avx2-madd16", std::make_integer_sequence<int, 6>());
  return k;
}

}  // namespace qonnx::kernels::igemm_detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // QONNX_ISA_X86
