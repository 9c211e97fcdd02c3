// AVX2 versions of the quantization loops (quant_avx2.h). Every function carries
// __attribute__((target("avx2"))) instead of the file being compiled with -mavx2, so nothing here
// (inline functions of headers included) can leak AVX2 code into the portable paths; they run only
// after kernels/isa said the CPU has AVX2. "fma" is deliberately not enabled: a fused multiply-add
// would round once where the portable code rounds twice.
//
// Why these are bit-identical to the portable loops (fast_math.h, the references in rounding.h):
// - _mm256_round_ps is IEEE roundToIntegral in the given direction: NaN stays NaN, +-inf and
//   integral values (|t| >= 2^23) are unchanged, a zero result keeps the sign of t. That is what
//   std::nearbyint/ceil/floor/trunc give, and what the portable formulas are tested to give.
// - UP / HALF_UP / HALF_DOWN multiply by copysign(1, t) where the portable code multiplies by
//   sign_of(t) (t itself for +-0 and NaN): the products differ only when the other factor is a
//   non-zero number, which it never is for t = +-0 (ceil(0), floor(0.5), ceil(-0.5) are zeros);
//   for NaN both are NaN.
// - min_ps(hi, t) returns hi exactly when t > hi and t otherwise (NaN included, -0.0 kept), which is
//   the portable `t > hi ? hi : t`; max_ps(lo, t) likewise.
// - Division by a power of two k equals multiplication by 1/k when 1/k is representable: both are the
//   correctly rounded value of the same real number (used for Trunc's shifts).
#include "kernels/common/quant_avx2.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/fast_math.h"
#include "kernels/isa/isa.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#define QONNX_AVX2 __attribute__((target("avx2")))
#define QONNX_AVX2_INLINE inline __attribute__((target("avx2"), always_inline))
#endif

namespace qonnx::kernels::avx2 {

#if defined(QONNX_AVX2)
namespace {

constexpr int64_t kLanes = 8;

QONNX_AVX2_INLINE __m256 round_even(__m256 t) { return _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
QONNX_AVX2_INLINE __m256 ceil_v(__m256 t) { return _mm256_round_ps(t, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
QONNX_AVX2_INLINE __m256 floor_v(__m256 t) { return _mm256_round_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
QONNX_AVX2_INLINE __m256 trunc_v(__m256 t) { return _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
QONNX_AVX2_INLINE __m256 abs_v(__m256 t) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), t); }
// copysign(1, t)
QONNX_AVX2_INLINE __m256 sign_one(__m256 t) {
  return _mm256_or_ps(_mm256_and_ps(t, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
}

template <quant::RoundingMode M>
QONNX_AVX2_INLINE __m256 round_mode(__m256 t) {
  if constexpr (M == quant::RoundingMode::kRound) return round_even(t);
  else if constexpr (M == quant::RoundingMode::kCeil) return ceil_v(t);
  else if constexpr (M == quant::RoundingMode::kFloor) return floor_v(t);
  else if constexpr (M == quant::RoundingMode::kDown) return trunc_v(t);
  else if constexpr (M == quant::RoundingMode::kUp) return _mm256_mul_ps(sign_one(t), ceil_v(abs_v(t)));
  else if constexpr (M == quant::RoundingMode::kHalfUp)
    return _mm256_mul_ps(sign_one(t), floor_v(_mm256_add_ps(abs_v(t), _mm256_set1_ps(0.5f))));
  else return _mm256_mul_ps(sign_one(t), ceil_v(_mm256_sub_ps(abs_v(t), _mm256_set1_ps(0.5f))));
}

// t > hi ? hi : t, then t < lo ? lo : t (NaN passes through).
QONNX_AVX2_INLINE __m256 clamp_v(__m256 t, __m256 lo, __m256 hi) { return _mm256_max_ps(lo, _mm256_min_ps(hi, t)); }

// A parameter: one broadcast value, or loaded per element.
template <bool kVary>
QONNX_AVX2_INLINE __m256 param(const float* p, int64_t i) {
  if constexpr (kVary) return _mm256_loadu_ps(p + i);
  else return _mm256_set1_ps(p[0]);
}

// Quant's codes of 8 elements: t = x / s + z, then +-1 (bipolar) or mode(clamp(t, lo, hi)).
template <quant::RoundingMode M, bool kBipolar>
QONNX_AVX2_INLINE __m256 quant_codes_v(__m256 x, __m256 vs, __m256 vz, __m256 vlo, __m256 vhi) {
  const __m256 t = _mm256_add_ps(_mm256_div_ps(x, vs), vz);
  if constexpr (kBipolar)
    return _mm256_blendv_ps(_mm256_set1_ps(-1.0f), _mm256_set1_ps(1.0f), _mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_GE_OQ));
  else
    return round_mode<M>(clamp_v(t, vlo, vhi));
}

template <quant::RoundingMode M, bool kBipolar, bool kCodes, bool kVary>
QONNX_AVX2 int64_t quant_loop(const float* x, const float* s, const float* z, float lo, float hi, float* y, int64_t n) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 vs = param<kVary>(s, i), vz = param<kVary>(z, i);
    const __m256 q = quant_codes_v<M, kBipolar>(_mm256_loadu_ps(x + i), vs, vz, vlo, vhi);
    _mm256_storeu_ps(y + i, kCodes ? q : _mm256_mul_ps(_mm256_sub_ps(q, vz), vs));
  }
  return i;
}

// The bytes q - lo of 8 Quant codes (small integers, own_quant_codes) into u[0..8).
QONNX_AVX2_INLINE void store_codes_8(__m256 q, __m256 lo, uint8_t* u) {
  const __m256i w = _mm256_cvtps_epi32(_mm256_sub_ps(q, lo));
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(u), _mm_packus_epi16(w16, w16));
}

// The same where q may hold NaN lanes: those get the byte of 0 (z - lo, as activation_bytes_run writes it) and
// set their bits in *bad_lanes.
QONNX_AVX2_INLINE void store_codes_or_nan_8(__m256 q, __m256 z, __m256 lo, uint8_t* u, int* bad_lanes) {
  const __m256 nan = _mm256_cmp_ps(q, q, _CMP_UNORD_Q);
  *bad_lanes |= _mm256_movemask_ps(nan);
  store_codes_8(_mm256_blendv_ps(q, z, nan), lo, u);
}

// kFloats false: y is not written (the caller wants the bytes only).
template <quant::RoundingMode M, bool kFloats>
QONNX_AVX2 int64_t quant_bytes_loop(const float* x, float s, float z, float lo, float hi, float* y, uint8_t* u, int* bad,
                                    int64_t i, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int bad_lanes = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 q = quant_codes_v<M, false>(_mm256_loadu_ps(x + i), vs, vz, vlo, vhi);
    if constexpr (kFloats) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(q, vz), vs));
    store_codes_or_nan_8(q, vz, vlo, u + i, &bad_lanes);
  }
  *bad |= bad_lanes;
  return i;
}

template <quant::RoundingMode M, bool kBipolar>
int64_t quant_layouts(bool codes, bool vary, const float* x, const float* s, const float* z, float lo, float hi,
                      float* y, int64_t n) {
  if (codes) return vary ? quant_loop<M, kBipolar, true, true>(x, s, z, lo, hi, y, n)
                         : quant_loop<M, kBipolar, true, false>(x, s, z, lo, hi, y, n);
  return vary ? quant_loop<M, kBipolar, false, true>(x, s, z, lo, hi, y, n)
              : quant_loop<M, kBipolar, false, false>(x, s, z, lo, hi, y, n);
}

// BipolarQuant of 8 elements: (x >= 0 ? 1 : -1) * s.
QONNX_AVX2_INLINE __m256 bipolar_v(__m256 x, __m256 vs) {
  const __m256 q = _mm256_blendv_ps(_mm256_set1_ps(-1.0f), _mm256_set1_ps(1.0f), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
  return _mm256_mul_ps(q, vs);
}

template <bool kVary>
QONNX_AVX2 int64_t bipolar_loop(const float* x, const float* s, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(y + i, bipolar_v(_mm256_loadu_ps(x + i), param<kVary>(s, i)));
  return i;
}

template <quant::RoundingMode M, bool kVary>
QONNX_AVX2 int64_t trunc_v1_loop(const float* x, const float* s, const float* z, float inv_shift, float* y, int64_t n) {
  const __m256 vinv = _mm256_set1_ps(inv_shift);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 vs = param<kVary>(s, i), vz = param<kVary>(z, i);
    const __m256 t = _mm256_mul_ps(round_even(_mm256_add_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs), vz)), vinv);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(round_mode<M>(t), vz), vs));
  }
  return i;
}

// kMulByInverse: k is one power of two whose inverse is representable (then t * (1/k) == t / k).
template <quant::RoundingMode M, bool kVary, bool kMulByInverse>
QONNX_AVX2 int64_t trunc_v2_loop(const float* x, const float* s, const float* z, const float* so, const float* k,
                                 float lo, float hi, float* y, int64_t n) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256 vinv = _mm256_set1_ps(1.0f / k[0]);
  const __m256 vzk = _mm256_set1_ps(z[0] / k[0]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 vs = param<kVary>(s, i), vz = param<kVary>(z, i), vk = param<kVary>(k, i);
    __m256 t = round_even(_mm256_add_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs), vz));
    t = kMulByInverse ? _mm256_mul_ps(t, vinv) : _mm256_div_ps(t, vk);
    const __m256 zk = kVary ? _mm256_div_ps(vz, vk) : vzk;
    const __m256 q = round_mode<M>(clamp_v(t, vlo, vhi));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(q, zk), param<kVary>(so, i)));
  }
  return i;
}

// 8 int32 values known to be in T's range, stored as T.
template <typename T>
QONNX_AVX2_INLINE void store_narrow(T* y, __m256i v) {
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  if constexpr (std::is_same_v<T, uint16_t>) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), _mm_packus_epi32(lo, hi));
  } else {
    const __m128i w = _mm_packs_epi32(lo, hi);
    if constexpr (std::is_same_v<T, int16_t>) _mm_storeu_si128(reinterpret_cast<__m128i*>(y), w);
    else if constexpr (std::is_same_v<T, int8_t>) _mm_storel_epi64(reinterpret_cast<__m128i*>(y), _mm_packs_epi16(w, w));
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(y), _mm_packus_epi16(w, w));
  }
}

// 8 values of T widened to int32.
template <typename T>
QONNX_AVX2_INLINE __m256i load_wide(const T* x) {
  if constexpr (sizeof(T) == 1) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
    return std::is_signed_v<T> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  } else {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    return std::is_signed_v<T> ? _mm256_cvtepi16_epi32(w) : _mm256_cvtepu16_epi32(w);
  }
}

template <typename T, bool kVary>
QONNX_AVX2 int64_t quantize_linear_loop(const float* x, const float* s, const float* z, T* y, int64_t n) {
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 vz = param<kVary>(z, i);
    const __m256 q = round_even(_mm256_div_ps(_mm256_loadu_ps(x + i), param<kVary>(s, i)));
    // The portable loop's clamp to [lo - z, hi - z], + z, NaN -> 0.
    __m256 c = clamp_v(q, _mm256_sub_ps(vlo, vz), _mm256_sub_ps(vhi, vz));
    c = _mm256_and_ps(_mm256_add_ps(c, vz), _mm256_cmp_ps(q, q, _CMP_ORD_Q));
    store_narrow(y + i, _mm256_cvttps_epi32(c));
  }
  return i;
}

template <typename T, bool kVary>
QONNX_AVX2 int64_t dequantize_linear_loop(const T* x, const float* s, const T* z, float* y, int64_t n) {
  const __m256i z0 = _mm256_set1_epi32(static_cast<int32_t>(z[0]));
  const __m256 s0 = _mm256_set1_ps(s[0]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256i vz = kVary ? load_wide(z + i) : z0;
    const __m256 vs = kVary ? _mm256_loadu_ps(s + i) : s0;
    const __m256 d = _mm256_cvtepi32_ps(_mm256_sub_epi32(load_wide(x + i), vz));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(d, vs));
  }
  return i;
}

QONNX_AVX2_INLINE __m256 threshold_output(__m256i count, __m256 scale, __m256 bias) {
  return _mm256_add_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(count)), bias);
}

// kVectors vectors of 8 elements against `steps` thresholds broadcast from thr (one row for all).
// Separate accumulators keep the compare-and-count chains independent (the loop is latency-bound
// with one).
template <int kVectors>
QONNX_AVX2_INLINE void threshold_block(const float* v, const float* thr, int64_t steps, __m256 scale, __m256 bias,
                                       float* y) {
  __m256 a[kVectors];
  __m256i count[kVectors];
  for (int k = 0; k < kVectors; ++k) {
    a[k] = _mm256_loadu_ps(v + k * kLanes);
    count[k] = _mm256_setzero_si256();
  }
  for (int64_t t = 0; t < steps; ++t) {
    const __m256 th = _mm256_broadcast_ss(thr + t);
    // A true compare is all ones (-1): subtracting it counts.
    for (int k = 0; k < kVectors; ++k)
      count[k] = _mm256_sub_epi32(count[k], _mm256_castps_si256(_mm256_cmp_ps(a[k], th, _CMP_GE_OQ)));
  }
  for (int k = 0; k < kVectors; ++k) _mm256_storeu_ps(y + k * kLanes, threshold_output(count[k], scale, bias));
}

QONNX_AVX2 int64_t threshold_loop(const float* v, const float* thr, int64_t steps, float scale, float bias, float* y,
                                  int64_t n) {
  const __m256 vscale = _mm256_set1_ps(scale), vbias = _mm256_set1_ps(bias);
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) threshold_block<4>(v + i, thr, steps, vscale, vbias, y + i);
  for (; i + kLanes <= n; i += kLanes) threshold_block<1>(v + i, thr, steps, vscale, vbias, y + i);
  return i;
}

// Count of thresholds <= each of 8 elements, their thresholds in `block` sorted per lane and split
// at the middle one, t[h]: row 0 holds t[h], rows 1..half the lower part, rows half+1..2*half the
// upper part (each padded with NaN, which counts nothing). Lanes at or above t[h] count h + 1 plus
// the upper part, the others the lower part: one compare per pair of thresholds. Two accumulators
// halve the dependency chain.
// -1 in the lanes whose threshold (from `hi` where `upper`, else from `lo`) is <= a.
QONNX_AVX2_INLINE __m256i threshold_at_or_below(__m256 a, const float* lo, const float* hi, __m256 upper) {
  const __m256 th = _mm256_blendv_ps(_mm256_load_ps(lo), _mm256_load_ps(hi), upper);
  return _mm256_castps_si256(_mm256_cmp_ps(a, th, _CMP_GE_OQ));
}

QONNX_AVX2_INLINE __m256i threshold_count_block(__m256 a, const float* block, int64_t half, __m256i above_middle) {
  const __m256 upper = _mm256_cmp_ps(a, _mm256_load_ps(block), _CMP_GE_OQ);
  __m256i even = _mm256_and_si256(_mm256_castps_si256(upper), above_middle), odd = _mm256_setzero_si256();
  const float* lo = block + kLanes;
  const float* hi = lo + half * kLanes;
  int64_t t = 0;
  for (; t + 2 <= half; t += 2) {
    even = _mm256_sub_epi32(even, threshold_at_or_below(a, lo + t * kLanes, hi + t * kLanes, upper));
    odd = _mm256_sub_epi32(odd, threshold_at_or_below(a, lo + (t + 1) * kLanes, hi + (t + 1) * kLanes, upper));
  }
  if (t < half) even = _mm256_sub_epi32(even, threshold_at_or_below(a, lo + t * kLanes, hi + t * kLanes, upper));
  return _mm256_add_epi32(even, odd);
}

// The vector at element i starts at channel c = (first_channel + i) % channels, a multiple of `period`
// (the gcd of 8 and channels); its thresholds are the block at blocks[(c / period) * block_floats].
QONNX_AVX2 int64_t threshold_by_channel_loop(const float* v, const float* blocks, int64_t channels, int64_t period,
                                             int64_t first_channel, int64_t steps, float scale, float bias, float* y,
                                             int64_t n) {
  const __m256 vscale = _mm256_set1_ps(scale), vbias = _mm256_set1_ps(bias);
  const int64_t half = threshold_split_half(steps), block_floats = threshold_block_floats(steps);
  const __m256i above_middle = _mm256_set1_epi32(static_cast<int32_t>(steps / 2 + 1));
  // The block of the vector's first channel c, followed without a division: c advances by 8 and
  // wraps at `channels`, its block offset by 8 / period blocks, wrapping at channels / period.
  const int64_t stride = kLanes / period * block_floats, wrap = channels / period * block_floats;
  int64_t at = first_channel / period * block_floats;
  auto advance = [stride, wrap](int64_t offset) {
    for (offset += stride; offset >= wrap;) offset -= wrap;
    return offset;
  };
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const int64_t at2 = advance(at);
    const __m256i first = threshold_count_block(_mm256_loadu_ps(v + i), blocks + at, half, above_middle);
    const __m256i second = threshold_count_block(_mm256_loadu_ps(v + i + kLanes), blocks + at2, half, above_middle);
    _mm256_storeu_ps(y + i, threshold_output(first, vscale, vbias));
    _mm256_storeu_ps(y + i + kLanes, threshold_output(second, vscale, vbias));
    at = advance(at2);
  }
  for (; i + kLanes <= n; i += kLanes) {
    _mm256_storeu_ps(y + i, threshold_output(threshold_count_block(_mm256_loadu_ps(v + i), blocks + at, half, above_middle),
                                             vscale, vbias));
    at = advance(at);
  }
  return i;
}

}  // namespace

int64_t quant_run(quant::RoundingMode mode, bool bipolar, bool codes, const float* x, const float* s, const float* z,
                  bool vary, float lo, float hi, float* y, int64_t n) {
  if (bipolar) return quant_layouts<quant::RoundingMode::kRound, true>(codes, vary, x, s, z, lo, hi, y, n);
  return fast::with_mode(mode, [&](auto mode_c) {
    return quant_layouts<decltype(mode_c)::value, false>(codes, vary, x, s, z, lo, hi, y, n);
  });
}

int64_t bipolar_quant_run(const float* x, const float* s, bool vary, float* y, int64_t n) {
  return vary ? bipolar_loop<true>(x, s, y, n) : bipolar_loop<false>(x, s, y, n);
}

int64_t trunc_v1_run(quant::RoundingMode mode, const float* x, const float* s, const float* z, bool vary, float inv_shift,
                     float* y, int64_t n) {
  return fast::with_mode(mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    return vary ? trunc_v1_loop<M, true>(x, s, z, inv_shift, y, n) : trunc_v1_loop<M, false>(x, s, z, inv_shift, y, n);
  });
}

int64_t trunc_v2_run(quant::RoundingMode mode, const float* x, const float* s, const float* z, const float* so,
                     const float* k, bool vary, float lo, float hi, float* y, int64_t n) {
  // k is 2^e (or 0, inf, NaN); 1/k is exact when both are finite and non-zero.
  const float inv = 1.0f / k[0];
  const bool mul_by_inverse = !vary && std::isfinite(k[0]) && k[0] != 0.0f && std::isfinite(inv);
  return fast::with_mode(mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    if (vary) return trunc_v2_loop<M, true, false>(x, s, z, so, k, lo, hi, y, n);
    if (mul_by_inverse) return trunc_v2_loop<M, false, true>(x, s, z, so, k, lo, hi, y, n);
    return trunc_v2_loop<M, false, false>(x, s, z, so, k, lo, hi, y, n);
  });
}

template <typename T>
int64_t quantize_linear_run(const float* x, const float* s, const float* z, bool vary, T* y, int64_t n) {
  return vary ? quantize_linear_loop<T, true>(x, s, z, y, n) : quantize_linear_loop<T, false>(x, s, z, y, n);
}

template <typename T>
int64_t dequantize_linear_run(const T* x, const float* s, const T* z, bool vary, float* y, int64_t n) {
  return vary ? dequantize_linear_loop<T, true>(x, s, z, y, n) : dequantize_linear_loop<T, false>(x, s, z, y, n);
}

int64_t threshold_run(const float* v, const float* thr, int64_t steps, float scale, float bias, float* y, int64_t n) {
  return threshold_loop(v, thr, steps, scale, bias, y, n);
}

int64_t threshold_run_by_channel(const float* v, const float* blocks, int64_t channels, int64_t period,
                                 int64_t first_channel, int64_t steps, float scale, float bias, float* y, int64_t n) {
  // No thresholds: there are no blocks (maybe null), so leave every element to the portable loop.
  if (steps == 0) return 0;
  return threshold_by_channel_loop(v, blocks, channels, period, first_channel, steps, scale, bias, y, n);
}


namespace {

// activation_bytes_run's parameters as vectors.
struct ByteForm {
  __m256 inverse, scale, lo, hi, below, above;
  QONNX_AVX2 ByteForm(float inv, float s, float l, float h)
      : inverse(_mm256_set1_ps(inv)), scale(_mm256_set1_ps(s)), lo(_mm256_set1_ps(l)), hi(_mm256_set1_ps(h)),
        below(_mm256_set1_ps(l - 1.0f)), above(_mm256_set1_ps(h + 1.0f)) {}
};

// The activation bytes of 8 elements into u[0..8), the lanes that fail the test into *bad_lanes.
QONNX_AVX2_INLINE void bytes_v(__m256 xv, const ByteForm& f, uint8_t* u, int* bad_lanes) {
  __m256 t = _mm256_mul_ps(xv, f.inverse);
  const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(t, f.below, _CMP_GE_OQ), _mm256_cmp_ps(t, f.above, _CMP_LE_OQ));
  t = _mm256_and_ps(t, inside);  // 0 where outside (or NaN)
  const __m256 v = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 ok = _mm256_and_ps(inside, _mm256_cmp_ps(v, f.lo, _CMP_GE_OQ));
  ok = _mm256_and_ps(ok, _mm256_cmp_ps(v, f.hi, _CMP_LE_OQ));
  ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_mul_ps(v, f.scale), xv, _CMP_EQ_OQ));
  *bad_lanes |= ~_mm256_movemask_ps(ok) & 0xff;
  const __m256i q = _mm256_cvtps_epi32(_mm256_sub_ps(v, f.lo));  // exact: small integers
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(u), _mm_packus_epi16(w16, w16));
}

}  // namespace

QONNX_AVX2 int64_t activation_bytes_run(const float* x, float inverse, float scale, float lo, float hi, uint8_t* u,
                                        int* bad, int64_t n) {
  const ByteForm form(inverse, scale, lo, hi);
  int bad_lanes = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) bytes_v(_mm256_loadu_ps(x + i), form, u + i, &bad_lanes);
  *bad |= bad_lanes;
  return i;
}

QONNX_AVX2 int64_t int8_values_run(const float* x, const float* scale, const float* inverse, bool vary, int8_t* out,
                                   int* bad, int64_t n) {
  const __m256 limit = _mm256_set1_ps(256.0f), lowest = _mm256_set1_ps(-128.0f), highest = _mm256_set1_ps(127.0f);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  int bad_lanes = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    const __m256 s = vary ? _mm256_loadu_ps(scale + i) : _mm256_set1_ps(scale[0]);
    const __m256 inv = vary ? _mm256_loadu_ps(inverse + i) : _mm256_set1_ps(inverse[0]);
    __m256 t = _mm256_mul_ps(xv, inv);
    const __m256 inside = _mm256_cmp_ps(_mm256_and_ps(t, magnitude), limit, _CMP_LT_OQ);  // false for NaN
    t = _mm256_and_ps(t, inside);
    const __m256 v = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 ok = _mm256_and_ps(inside, _mm256_cmp_ps(v, lowest, _CMP_GE_OQ));
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(v, highest, _CMP_LE_OQ));
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_mul_ps(v, s), xv, _CMP_EQ_OQ));
    bad_lanes |= ~_mm256_movemask_ps(ok) & 0xff;
    const __m256i q = _mm256_cvtps_epi32(v);  // exact: |v| < 256
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi16(w16, w16));
  }
  *bad |= bad_lanes;
  return i;
}

QONNX_AVX2 void transpose_8x8(const float* src, int64_t src_ld, float* dst, int64_t dst_ld, bool stream) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_ld);
  for (int i = 0; i < 8; i += 2) {  // pairs of rows interleaved
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {  // then pairs of pairs: four columns of four rows per 128-bit half
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {  // the halves of rows 0-3 and 4-7 joined
    const __m256 low = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20), high = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
    if (stream) {
      _mm256_stream_ps(dst + i * dst_ld, low);
      _mm256_stream_ps(dst + (i + 4) * dst_ld, high);
    } else {
      _mm256_storeu_ps(dst + i * dst_ld, low);
      _mm256_storeu_ps(dst + (i + 4) * dst_ld, high);
    }
  }
}

QONNX_AVX2 void store_fence() { _mm_sfence(); }

namespace {

// The one rounding of 4 consecutive channels' sums.
QONNX_AVX2_INLINE __m128 scaled_4(const int32_t* sums, const int32_t* offset, const double* scale, const double* bias) {
  const __m128i sum = _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(offset)));
  __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(sum), _mm256_loadu_pd(scale));
  v = _mm256_add_pd(v, bias ? _mm256_loadu_pd(bias) : _mm256_setzero_pd());
  return _mm256_cvtpd_ps(v);
}

}  // namespace

QONNX_AVX2 int64_t scale_sums_run(const int32_t* sums, const int32_t* offset, const double* scale, const double* bias,
                                  float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) _mm_storeu_ps(y + j, scaled_4(sums + j, offset + j, scale + j, bias ? bias + j : nullptr));
  return j;
}

namespace {

template <quant::RoundingMode M>
QONNX_AVX2_INLINE __m256 quant_step_v(__m256 x, const ElementwiseStep& step) {
  const __m256 vs = _mm256_set1_ps(step.scale), vz = _mm256_set1_ps(step.zero_point);
  const __m256 q = step.bipolar ? quant_codes_v<M, true>(x, vs, vz, vs, vs)
                                : quant_codes_v<M, false>(x, vs, vz, _mm256_set1_ps(step.lo), _mm256_set1_ps(step.hi));
  return _mm256_mul_ps(_mm256_sub_ps(q, vz), vs);
}

QONNX_AVX2_INLINE __m256 relu_v(__m256 x) { return _mm256_and_ps(x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ)); }

QONNX_AVX2_INLINE __m256 step_v(__m256 x, const ElementwiseStep& step) {
  switch (step.kind) {
    case ElementwiseStep::Kind::kRelu: return relu_v(x);
    case ElementwiseStep::Kind::kBipolarQuant: return bipolar_v(x, _mm256_set1_ps(step.scale));
    case ElementwiseStep::Kind::kQuant: break;
  }
  if (step.bipolar) return quant_step_v<quant::RoundingMode::kRound>(x, step);
  switch (step.mode) {
    case quant::RoundingMode::kRound: return quant_step_v<quant::RoundingMode::kRound>(x, step);
    case quant::RoundingMode::kCeil: return quant_step_v<quant::RoundingMode::kCeil>(x, step);
    case quant::RoundingMode::kFloor: return quant_step_v<quant::RoundingMode::kFloor>(x, step);
    case quant::RoundingMode::kUp: return quant_step_v<quant::RoundingMode::kUp>(x, step);
    case quant::RoundingMode::kDown: return quant_step_v<quant::RoundingMode::kDown>(x, step);
    case quant::RoundingMode::kHalfUp: return quant_step_v<quant::RoundingMode::kHalfUp>(x, step);
    case quant::RoundingMode::kHalfDown: break;
  }
  return quant_step_v<quant::RoundingMode::kHalfDown>(x, step);
}

// Any chain of steps, each decoded per vector.
struct GenericChain {
  const ElementwiseStep* steps;
  int count;
  static constexpr bool kExactCodes = false;
  QONNX_AVX2_INLINE __m256 operator()(__m256 v, __m256*) const {
    for (int k = 0; k < count; ++k) v = step_v(v, steps[k]);
    return v;
  }
};

// The common chain, [Relu...] then one Quant of mode M, with its parameters in registers (Relu twice is
// Relu: the same bits). Its codes q give the activation bytes directly when they are of the Quant's own form
// (own_quant_codes).
template <quant::RoundingMode M, bool kRelu>
struct QuantChain {
  __m256 s, z, lo, hi;
  bool exact_codes;
  static constexpr bool kExactCodes = true;
  QONNX_AVX2 QuantChain(const ElementwiseStep& q, const CodeTarget* codes)
      : s(_mm256_set1_ps(q.scale)), z(_mm256_set1_ps(q.zero_point)), lo(_mm256_set1_ps(q.lo)), hi(_mm256_set1_ps(q.hi)),
        exact_codes(codes && own_quant_codes(q, codes->scale, codes->lo, codes->hi)) {}
  QONNX_AVX2_INLINE __m256 operator()(__m256 v, __m256* codes) const {
    if constexpr (kRelu) v = relu_v(v);
    *codes = quant_codes_v<M, false>(v, s, z, lo, hi);
    return _mm256_mul_ps(_mm256_sub_ps(*codes, z), s);
  }
};

// One row's rounding and chain on 8 channels from j: y, and in *q the chain's codes (QuantChain).
template <typename Chain>
QONNX_AVX2_INLINE __m256 chain_8(const RequantizeRows& r, const Chain& chain, const int32_t* sums, int64_t j, __m256* q) {
  const __m128 low = scaled_4(sums + j, r.offset + j, r.scale + j, r.bias ? r.bias + j : nullptr);
  const __m128 high = scaled_4(sums + j + 4, r.offset + j + 4, r.scale + j + 4, r.bias ? r.bias + j + 4 : nullptr);
  return chain(_mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1), q);
}

template <typename Chain>
QONNX_AVX2 int64_t requantize_rows(const RequantizeRows& r, const Chain& given) {
  const Chain chain = given;  // a local copy stays in registers (y's stores could alias the caller's)
  const ByteForm form = r.codes ? ByteForm(r.codes->inverse, r.codes->scale, r.codes->lo, r.codes->hi) : ByteForm(1, 1, 0, 0);
  const int64_t done = r.n / kLanes * kLanes;
  int bad_lanes = 0;
  for (int64_t i = 0; i < r.rows; ++i) {
    const int32_t* sums = r.sums + i * r.sums_ld;
    float* y = r.y + i * r.y_ld;
    bool exact = false;
    if constexpr (Chain::kExactCodes) exact = r.codes && chain.exact_codes;
    uint8_t* u = r.codes ? r.codes->u + i * r.codes_ld : nullptr;
    for (int64_t j = 0; j < done; j += kLanes) {
      __m256 q;
      _mm256_storeu_ps(y + j, chain_8(r, chain, sums, j, &q));
      if constexpr (Chain::kExactCodes) {
        if (exact) store_codes_or_nan_8(q, chain.z, chain.lo, u + j, &bad_lanes);  // the bytes q - qmin (QuantChain)
      }
    }
    // Else the codes in a second loop over the row (in L1): one chain of both would be too long for the CPU
    // to overlap enough vectors (measured slower than separate loops).
    if (r.codes && !exact) {
      for (int64_t j = 0; j < done; j += kLanes) bytes_v(_mm256_loadu_ps(y + j), form, u + j, &bad_lanes);
    }
  }
  *r.bad |= bad_lanes;
  return done;
}

// The direct form of [Relu...] Quant (docs/arithmetic.md, "Requantizing in one float step"): per channel
// ratio = float(c / s) and shift = float(b / s), u' = float(float(S) * ratio + shift) (max'ed with 0 under
// Relu) + z stands in for the exact u = float(float(y / s) + z), y = float(double(S) * c + b). Under the
// preconditions of direct_quant_usable, |u - u'| < 2^-9 wherever |u'| <= 2^9, and beyond that both clamp to
// the same bound; so where clamp(u') lies more than 2^-9 from every half-integer (and, unless the chain is
// Relu with z = 0, |u'| > 2^-9 fixes the sign of a zero), the half modes' codes of u' are those of u.
// Vectors with a lane too close take the exact chain.
constexpr float kDirectMargin = 0x1p-9f;

// kQuant at kAvx512 (kernels/isa): avx2 + avx512f. GCC 12's AVX-512 intrinsics start from _mm512_undefined_*,
// which -Wmaybe-uninitialized reports once inlined (GCC bug 105593, fixed in 13).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define QONNX_AVX512_DIRECT __attribute__((target("avx512f,avx2")))

template <quant::RoundingMode M>
QONNX_AVX512_DIRECT inline __m512 round_half_512(__m512 c) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(c), _mm512_set1_epi32(INT32_MIN)));
  const __m512 one = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(sign), _mm512_castps_si512(_mm512_set1_ps(1.0f))));
  const __m512 mag = _mm512_abs_ps(c);
  if constexpr (M == quant::RoundingMode::kRound) return _mm512_roundscale_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  else if constexpr (M == quant::RoundingMode::kHalfUp)
    return _mm512_mul_ps(one, _mm512_roundscale_ps(_mm512_add_ps(mag, _mm512_set1_ps(0.5f)), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
  else
    return _mm512_mul_ps(one, _mm512_roundscale_ps(_mm512_sub_ps(mag, _mm512_set1_ps(0.5f)), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
}

// chain_8 on 16 channels from j (QuantChain's steps: scaled_4's rounding in double, Relu, Quant), the same
// operations in the same order: y, and the codes in *q. Where the direct form leaves a lane too close to a tie,
// this takes the whole vector the exact way in registers (a call per 8 lanes cost about 150 cycles, and a
// random layer has a lane that close in 3% of its vectors).
template <quant::RoundingMode M, bool kRelu>
QONNX_AVX512_DIRECT inline __m512 exact_chain_16(const RequantizeRows& r, const int32_t* sums, int64_t j, __m512 s, __m512 z,
                                                 __m512 lo, __m512 hi, __m512* q) {
  const __m512i whole = _mm512_add_epi32(_mm512_loadu_si512(sums + j), _mm512_loadu_si512(r.offset + j));
  __m512d low = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(whole)), _mm512_loadu_pd(r.scale + j));
  __m512d high = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(whole, 1)), _mm512_loadu_pd(r.scale + j + 8));
  low = _mm512_add_pd(low, r.bias ? _mm512_loadu_pd(r.bias + j) : _mm512_setzero_pd());
  high = _mm512_add_pd(high, r.bias ? _mm512_loadu_pd(r.bias + j + 8) : _mm512_setzero_pd());
  __m512 v = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(low))),
                                                 _mm256_castps_pd(_mm512_cvtpd_ps(high)), 1));
  if constexpr (kRelu) v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ), v);  // relu_v
  const __m512 t = _mm512_add_ps(_mm512_div_ps(v, s), z);
  *q = round_half_512<M>(_mm512_max_ps(lo, _mm512_min_ps(hi, t)));
  return _mm512_mul_ps(_mm512_sub_ps(*q, z), s);
}

// store_codes_8 on 16 codes: the bytes q - lo, saturated to [0, 255] as its packs do.
QONNX_AVX512_DIRECT inline void store_codes_16(__m512 q, __m512 lo, uint8_t* u) {
  const __m512i w = _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_sub_ps(q, lo)), _mm512_setzero_si512());
  _mm_storeu_si128(reinterpret_cast<__m128i*>(u), _mm512_cvtusepi32_epi8(w));
}

// quant_bytes_loop for ROUND on 16 lanes: the same operations in the same order (roundscale to nearest is
// round_even), the bytes clamped to [0, 255] as the AVX2 loop's saturating packs do.
template <bool kFloats>
QONNX_AVX512_DIRECT int64_t quant_bytes_512(const float* x, float s, float z, float lo, float hi, float* y, uint8_t* u,
                                            int* bad, int64_t n) {
  const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512i byte_max = _mm512_set1_epi32(255);
  __mmask16 nan_lanes = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 t = _mm512_add_ps(_mm512_div_ps(_mm512_loadu_ps(x + i), vs), vz);
    const __m512 q = _mm512_roundscale_ps(_mm512_max_ps(vlo, _mm512_min_ps(vhi, t)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if constexpr (kFloats) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_sub_ps(q, vz), vs));
    const __mmask16 nan = _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
    nan_lanes |= nan;
    const __m512i w = _mm512_cvtps_epi32(_mm512_sub_ps(_mm512_mask_blend_ps(nan, q, vz), vlo));
    const __m512i byte = _mm512_min_epi32(_mm512_max_epi32(w, _mm512_setzero_si512()), byte_max);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(u + i), _mm512_cvtepi32_epi8(byte));
  }
  if (nan_lanes) *bad |= 1;
  return i;
}

// The direct form on 16 channels at a time (AVX-512), every row; returns the channels done in each.
template <quant::RoundingMode M, bool kRelu, bool kSignCheck>
QONNX_AVX512_DIRECT int64_t direct_rows_512(const RequantizeRows& r, const QuantChain<M, kRelu>& chain, const float* ratio,
                                            const float* shift, bool exact) {
  const __m512 z = _mm512_set1_ps(_mm256_cvtss_f32(chain.z)), s = _mm512_set1_ps(_mm256_cvtss_f32(chain.s));
  const __m512 lo = _mm512_set1_ps(_mm256_cvtss_f32(chain.lo)), hi = _mm512_set1_ps(_mm256_cvtss_f32(chain.hi));
  const __m512 tie_room = _mm512_set1_ps(0.5f - kDirectMargin), margin = _mm512_set1_ps(kDirectMargin);
  const int64_t done = r.n / 16 * 16;
  for (int64_t i = 0; i < r.rows; ++i) {
    const int32_t* sums = r.sums + i * r.sums_ld;
    float* y = r.y + i * r.y_ld;
    uint8_t* u = r.codes ? r.codes->u + i * r.codes_ld : nullptr;
    for (int64_t j = 0; j < done; j += 16) {
      const __m512i whole = _mm512_add_epi32(_mm512_loadu_si512(sums + j), _mm512_loadu_si512(r.offset + j));
      __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(whole), _mm512_loadu_ps(ratio + j)), _mm512_loadu_ps(shift + j));
      if constexpr (kRelu) t = _mm512_max_ps(t, _mm512_setzero_ps());
      t = _mm512_add_ps(t, z);
      const __m512 c = _mm512_max_ps(lo, _mm512_min_ps(hi, t));
      const __m512 q = round_half_512<M>(c);
      const __m512 k = _mm512_roundscale_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      __mmask16 ok = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(c, k)), tie_room, _CMP_LT_OQ);
      if constexpr (kSignCheck) ok &= _mm512_cmp_ps_mask(_mm512_abs_ps(t), margin, _CMP_GT_OQ);
      _mm512_storeu_ps(y + j, _mm512_mul_ps(_mm512_sub_ps(q, z), s));
      if (exact) _mm_storeu_si128(reinterpret_cast<__m128i*>(u + j), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_sub_ps(q, lo))));
      if (ok != 0xffff) {  // a lane too close to a tie or zero: the vector again the exact way
        __m512 exact_q;
        _mm512_storeu_ps(y + j, exact_chain_16<M, kRelu>(r, sums, j, s, z, lo, hi, &exact_q));
        if (exact) store_codes_16(exact_q, lo, u + j);
      }
    }
  }
  return done;
}
// The direct form when only the codes are wanted (RequantizeRows::floats false), y left unwritten. Under the
// margin test every half mode rounds clamp(u') as round-to-even does, so the rounding is the integer
// conversion; a zero's sign is no byte's concern, so there is no sign test; and Relu before + z is a higher
// lower bound: float(max(t, 0) + z) = max(float(t + z), z), so clamp(u') = min(hi, max(max(lo, z), t + z)).
// One fused multiply-add makes t: one rounding instead of two, inside the error bound of the two-step form.
// kPlain: no channel offset, z = 0 and lowest code 0 (unsigned activations and Quant), whose additions are
// left out.
template <quant::RoundingMode M, bool kRelu, bool kPlain>
QONNX_AVX512_DIRECT int64_t direct_codes_512(const RequantizeRows& r, const QuantChain<M, kRelu>& chain, const float* ratio,
                                             const float* shift) {
  const float zero_point = _mm256_cvtss_f32(chain.z), lowest = _mm256_cvtss_f32(chain.lo);
  const __m512 z = _mm512_set1_ps(zero_point), hi = _mm512_set1_ps(_mm256_cvtss_f32(chain.hi));
  const __m512 lo = _mm512_set1_ps(kRelu ? std::max(lowest, zero_point) : lowest);
  const __m512i lowest_code = _mm512_set1_epi32(static_cast<int32_t>(lowest));
  const __m512 tie_room = _mm512_set1_ps(0.5f - kDirectMargin);
  const __m512i magnitude = _mm512_set1_epi32(INT32_MAX);
  // The exact chain's own parameters (its lower bound before Relu's).
  const __m512 exact_s = _mm512_set1_ps(_mm256_cvtss_f32(chain.s)), exact_lo = _mm512_set1_ps(lowest);
  const int64_t done = r.n / 16 * 16;
  for (int64_t i = 0; i < r.rows; ++i) {
    const int32_t* sums = r.sums + i * r.sums_ld;
    uint8_t* u = r.codes->u + i * r.codes_ld;
    for (int64_t j = 0; j < done; j += 16) {
      __m512i whole = _mm512_loadu_si512(sums + j);
      if constexpr (!kPlain) whole = _mm512_add_epi32(whole, _mm512_loadu_si512(r.offset + j));
      __m512 t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(whole), _mm512_loadu_ps(ratio + j), _mm512_loadu_ps(shift + j));
      if constexpr (!kPlain) t = _mm512_add_ps(t, z);
      const __m512 c = _mm512_min_ps(hi, _mm512_max_ps(lo, t));
      const __m512i q = _mm512_cvt_roundps_epi32(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m512 off = _mm512_sub_ps(c, _mm512_cvtepi32_ps(q));
      const __m512 distance = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(off), magnitude));
      const __mmask16 ok = _mm512_cmp_ps_mask(distance, tie_room, _CMP_LT_OQ);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(u + j), _mm512_cvtepi32_epi8(kPlain ? q : _mm512_sub_epi32(q, lowest_code)));
      if (ok != 0xffff) {  // a lane too close to a tie: the vector's codes again the exact way
        __m512 exact_q;
        exact_chain_16<M, kRelu>(r, sums, j, exact_s, z, exact_lo, hi, &exact_q);
        store_codes_16(exact_q, exact_lo, u + j);
      }
    }
  }
  return done;
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// direct_codes_512's form on 8 channels at a time, from channel `from` of every row.
template <quant::RoundingMode M, bool kRelu>
QONNX_AVX2 int64_t direct_codes(const RequantizeRows& r, const QuantChain<M, kRelu>& given, const float* ratio,
                                const float* shift, int64_t from) {
  const QuantChain<M, kRelu> chain = given;
  const __m256 lo = kRelu ? _mm256_max_ps(chain.lo, chain.z) : chain.lo;
  const __m256 tie_room = _mm256_set1_ps(0.5f - kDirectMargin);
  const int64_t done = r.n / kLanes * kLanes;
  for (int64_t i = 0; i < r.rows; ++i) {
    const int32_t* sums = r.sums + i * r.sums_ld;
    uint8_t* u = r.codes->u + i * r.codes_ld;
    for (int64_t j = from; j < done; j += kLanes) {
      const __m256i whole = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + j)),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.offset + j)));
      const __m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(whole), _mm256_loadu_ps(ratio + j)),
                                                   _mm256_loadu_ps(shift + j)),
                                     chain.z);
      const __m256 c = _mm256_min_ps(chain.hi, _mm256_max_ps(lo, t));
      __m256 q = round_even(c);
      if (_mm256_movemask_ps(_mm256_cmp_ps(abs_v(_mm256_sub_ps(c, q)), tie_room, _CMP_LT_OQ)) != 0xff) chain_8(r, chain, sums, j, &q);
      store_codes_8(q, chain.lo, u + j);
    }
  }
  return done;
}

template <quant::RoundingMode M, bool kRelu, bool kSignCheck>
QONNX_AVX2 int64_t requantize_rows_direct(const RequantizeRows& r, const QuantChain<M, kRelu>& given, const float* ratio,
                                          const float* shift) {
  const QuantChain<M, kRelu> chain = given;
  const ByteForm form = r.codes ? ByteForm(r.codes->inverse, r.codes->scale, r.codes->lo, r.codes->hi) : ByteForm(1, 1, 0, 0);
  const __m256 tie_room = _mm256_set1_ps(0.5f - kDirectMargin), margin = _mm256_set1_ps(kDirectMargin);
  const bool exact = r.codes && chain.exact_codes;
  const int64_t done = r.n / kLanes * kLanes;
  const bool wide = isa::current(isa::Family::kQuant) == isa::Isa::kAvx512;
  if (exact && !r.floats) {
    int64_t wide_codes = 0;
    if (wide) {
      const bool plain = std::all_of(r.offset, r.offset + r.n, [](int32_t o) { return o == 0; }) &&
                         _mm256_cvtss_f32(chain.z) == 0.0f && _mm256_cvtss_f32(chain.lo) == 0.0f;
      wide_codes = plain ? direct_codes_512<M, kRelu, true>(r, chain, ratio, shift)
                         : direct_codes_512<M, kRelu, false>(r, chain, ratio, shift);
    }
    return direct_codes(r, chain, ratio, shift, wide_codes);
  }
  int bad_lanes = 0;
  const int64_t wide_done = wide ? direct_rows_512<M, kRelu, kSignCheck>(r, chain, ratio, shift, exact) : 0;
  for (int64_t i = 0; i < r.rows; ++i) {
    const int32_t* sums = r.sums + i * r.sums_ld;
    float* y = r.y + i * r.y_ld;
    uint8_t* u = r.codes ? r.codes->u + i * r.codes_ld : nullptr;
    for (int64_t j = wide_done; j < done; j += kLanes) {
      const __m256i whole = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + j)),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.offset + j)));
      __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(whole), _mm256_loadu_ps(ratio + j)), _mm256_loadu_ps(shift + j));
      if constexpr (kRelu) t = _mm256_max_ps(t, _mm256_setzero_ps());
      t = _mm256_add_ps(t, chain.z);
      const __m256 c = clamp_v(t, chain.lo, chain.hi);
      __m256 q = round_mode<M>(c);
      __m256 ok = _mm256_cmp_ps(abs_v(_mm256_sub_ps(c, round_even(c))), tie_room, _CMP_LT_OQ);
      if constexpr (kSignCheck) ok = _mm256_and_ps(ok, _mm256_cmp_ps(abs_v(t), margin, _CMP_GT_OQ));
      const __m256 out = _mm256_movemask_ps(ok) == 0xff ? _mm256_mul_ps(_mm256_sub_ps(q, chain.z), chain.s)
                                                        : chain_8(r, chain, sums, j, &q);
      _mm256_storeu_ps(y + j, out);
      if (exact) store_codes_8(q, chain.lo, u + j);  // q is finite here (direct_quant_usable)
    }
    if (r.codes && !exact) {
      for (int64_t j = 0; j < done; j += kLanes) bytes_v(_mm256_loadu_ps(y + j), form, u + j, &bad_lanes);
    }
  }
  *r.bad |= bad_lanes;
  return done;
}

// Whether the direct form gives the exact chain's bits for the rows' channels (then ratio and shift are
// filled): a half rounding mode; 2^-100 <= s <= 2^100; |z| <= 2^8; integer bounds with |lo|, |hi| <= 2^8,
// hi >= 1 and lo <= -1 or +0; per channel ratio and shift finite, |shift| <= 2^9.
// Reached only through requantize_run (AVX2), so its loops may use AVX2: the divisions, vectorized, once a
// block's rows were a few percent of a small layer's run.
QONNX_AVX2 bool direct_quant_usable(const RequantizeRows& r, const ElementwiseStep& q, float* ratio, float* shift) {
  using quant::RoundingMode;
  if (q.mode != RoundingMode::kRound && q.mode != RoundingMode::kHalfUp && q.mode != RoundingMode::kHalfDown) return false;
  if (!(q.scale >= 0x1p-100f && q.scale <= 0x1p100f) || !(std::fabs(q.zero_point) <= 256.0f)) return false;
  if (!(q.hi >= 1.0f && q.hi <= 256.0f && q.lo >= -256.0f && std::nearbyint(q.lo) == q.lo && std::nearbyint(q.hi) == q.hi))
    return false;
  if (!(q.lo <= -1.0f || (q.lo == 0.0f && !std::signbit(q.lo)))) return false;
  const double s = q.scale;
  const double* scale = r.scale;
  for (int64_t j = 0; j < r.n; ++j) ratio[j] = static_cast<float>(scale[j] / s);
  if (const double* bias = r.bias) {
    for (int64_t j = 0; j < r.n; ++j) shift[j] = static_cast<float>(bias[j] / s);
  } else {
    std::fill(shift, shift + r.n, 0.0f);
  }
  bool usable = true;
  for (int64_t j = 0; j < r.n; ++j) usable &= std::isfinite(ratio[j]) && std::fabs(shift[j]) <= 512.0f;
  return usable;
}

template <bool kRelu>
int64_t requantize_quant(const RequantizeRows& r, const ElementwiseStep& q) {
  // On the stack for the usual channel counts (a call per block of rows, or per depthwise plane).
  constexpr int64_t kOnStack = 256;
  float ratio_stack[kOnStack], shift_stack[kOnStack];
  std::vector<float> ratio_heap(static_cast<size_t>(r.n > kOnStack ? r.n : 0)), shift_heap(ratio_heap.size());
  float* ratio = r.n > kOnStack ? ratio_heap.data() : ratio_stack;
  float* shift = r.n > kOnStack ? shift_heap.data() : shift_stack;
  const bool direct = direct_quant_usable(r, q, ratio, shift);
  const bool sign_check = !(kRelu && q.zero_point == 0.0f);
  return fast::with_mode(q.mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    const QuantChain<M, kRelu> chain(q, r.codes);
    if constexpr (M == quant::RoundingMode::kRound || M == quant::RoundingMode::kHalfUp ||
                  M == quant::RoundingMode::kHalfDown) {
      if (direct && sign_check) return requantize_rows_direct<M, kRelu, true>(r, chain, ratio, shift);
      if (direct) return requantize_rows_direct<M, kRelu, false>(r, chain, ratio, shift);
    }
    return requantize_rows(r, chain);
  });
}

}  // namespace

int64_t quant_bytes_run(quant::RoundingMode mode, const float* x, float s, float z, float lo, float hi, float* y,
                        uint8_t* u, int* bad, int64_t n) {
  int64_t i = 0;
  if (mode == quant::RoundingMode::kRound && isa::current(isa::Family::kQuant) == isa::Isa::kAvx512)
    i = y ? quant_bytes_512<true>(x, s, z, lo, hi, y, u, bad, n) : quant_bytes_512<false>(x, s, z, lo, hi, y, u, bad, n);
  return fast::with_mode(mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    return y ? quant_bytes_loop<M, true>(x, s, z, lo, hi, y, u, bad, i, n) : quant_bytes_loop<M, false>(x, s, z, lo, hi, y, u, bad, i, n);
  });
}

namespace {

// requantize_run on whole vectors of channels: returns the channels done in every row (a multiple of 8).
QONNX_AVX2 int64_t requantize_vectors(const RequantizeRows& r) {
  int relus = 0;
  while (relus < r.step_count && r.steps[relus].kind == ElementwiseStep::Kind::kRelu) ++relus;
  if (relus + 1 == r.step_count && r.steps[relus].kind == ElementwiseStep::Kind::kQuant && !r.steps[relus].bipolar)
    return relus > 0 ? requantize_quant<true>(r, r.steps[relus]) : requantize_quant<false>(r, r.steps[relus]);
  return requantize_rows(r, GenericChain{r.steps, r.step_count});
}

}  // namespace

// Rows stored back to back (each of n < 8 channels) as longer rows of a period of whole vectors, the
// parameters repeated along it: every lane then does work (n = 7 wasted one lane of eight in each row, and
// each row paid its own tail). Returns the rows done this way (a multiple of period / n).
QONNX_AVX2 int64_t requantize_periods(const RequantizeRows& r) {
  // Fewer channels than a vector only: past that a row wastes less, and the longer period's parameters cost
  // more to set up per call than they save.
  constexpr int64_t kMaxPeriod = kLanes * (kLanes - 1);
  const int64_t n = r.n;
  if (n <= 0 || n >= kLanes || r.sums_ld != n || (r.y && r.y_ld != n) || (r.codes && r.codes_ld != n)) return 0;
  int64_t period = n;
  while (period % kLanes != 0) period += n;
  const int64_t rows_per_period = period / n, periods = r.rows / rows_per_period;
  if (period > kMaxPeriod || periods == 0) return 0;
  int32_t offset[kMaxPeriod];
  double scale[kMaxPeriod], bias[kMaxPeriod];
  for (int64_t j = 0; j < period; ++j) {
    offset[j] = r.offset[j % n], scale[j] = r.scale[j % n], bias[j] = r.bias ? r.bias[j % n] : 0.0;
  }
  RequantizeRows flat = r;
  flat.offset = offset, flat.scale = scale, flat.bias = r.bias ? bias : nullptr;
  flat.rows = periods, flat.n = period, flat.sums_ld = period, flat.y_ld = period, flat.codes_ld = period;
  return requantize_vectors(flat) == period ? periods * rows_per_period : 0;
}

QONNX_AVX2 int64_t requantize_run(const RequantizeRows& r) {
  if (const int64_t rows_done = requantize_periods(r)) {
    if (rows_done == r.rows) return r.n;
    // The last rows (fewer than a period) as rows of their own.
    RequantizeRows rest = r;
    rest.rows = r.rows - rows_done, rest.sums = r.sums + rows_done * r.sums_ld;
    if (r.y) rest.y = r.y + rows_done * r.y_ld;
    CodeTarget target;
    if (r.codes) target = *r.codes, target.u = r.codes->u + rows_done * r.codes_ld, rest.codes = &target;
    return requantize_run(rest) == r.n ? r.n : 0;
  }
  const int64_t done = requantize_vectors(r);
  const int64_t tail = r.n - done;
  if (tail <= 0 || tail >= kLanes || r.rows <= 0) return done;
  if (done >= kLanes) {
    // The last channels as each row's last whole vector, overlapping channels already done: the pass is
    // elementwise per channel, so those are written again with the same bits, and no row is copied.
    const int64_t at = r.n - kLanes;
    RequantizeRows last = r;
    last.sums = r.sums + at, last.offset = r.offset + at, last.scale = r.scale + at;
    last.bias = r.bias ? r.bias + at : nullptr;
    if (r.y) last.y = r.y + at;
    CodeTarget target;
    if (r.codes) target = *r.codes, target.u = r.codes->u + at, last.codes = &target;
    last.n = kLanes;
    return requantize_vectors(last) == kLanes ? r.n : done;
  }
  // Fewer channels than a vector (a layer with few output channels): copied into rows of one vector, the
  // missing lanes a copy of the last channel's sums and parameters (finite, and dropped), so that they too
  // are computed in registers rather than by a call per row of the separate loops. The same bits.
  constexpr int64_t kBlockRows = 64;
  int32_t offset[kLanes], sums[kBlockRows * kLanes];
  double scale[kLanes], bias[kLanes];
  float y[kBlockRows * kLanes];
  uint8_t codes[kBlockRows * kLanes];
  for (int64_t j = 0; j < kLanes; ++j) {
    const int64_t c = done + std::min(j, tail - 1);
    offset[j] = r.offset[c], scale[j] = r.scale[c], bias[j] = r.bias ? r.bias[c] : 0.0;
  }
  CodeTarget target;
  if (r.codes) target = *r.codes, target.u = codes;
  RequantizeRows block = r;
  block.sums = sums, block.sums_ld = kLanes, block.offset = offset, block.scale = scale;
  block.bias = r.bias ? bias : nullptr;
  block.y = y, block.y_ld = kLanes, block.codes = r.codes ? &target : nullptr, block.codes_ld = kLanes, block.n = kLanes;
  for (int64_t i0 = 0; i0 < r.rows; i0 += kBlockRows) {
    block.rows = std::min(kBlockRows, r.rows - i0);
    for (int64_t i = 0; i < block.rows; ++i)
      for (int64_t j = 0; j < kLanes; ++j) sums[i * kLanes + j] = r.sums[(i0 + i) * r.sums_ld + done + std::min(j, tail - 1)];
    if (requantize_vectors(block) != kLanes) return done;
    for (int64_t i = 0; i < block.rows; ++i) {
      if (r.y) std::copy_n(y + i * kLanes, tail, r.y + (i0 + i) * r.y_ld + done);
      if (r.codes) std::copy_n(codes + i * kLanes, tail, r.codes->u + (i0 + i) * r.codes_ld + done);
    }
  }
  return r.n;
}

#else  // no AVX2 on this target: kernels/isa never selects it

int64_t quant_run(quant::RoundingMode, bool, bool, const float*, const float*, const float*, bool, float, float, float*,
                  int64_t) { return 0; }
int64_t quant_bytes_run(quant::RoundingMode, const float*, float, float, float, float, float*, uint8_t*, int*, int64_t) {
  return 0;
}
int64_t bipolar_quant_run(const float*, const float*, bool, float*, int64_t) { return 0; }
int64_t trunc_v1_run(quant::RoundingMode, const float*, const float*, const float*, bool, float, float*, int64_t) { return 0; }
int64_t trunc_v2_run(quant::RoundingMode, const float*, const float*, const float*, const float*, const float*, bool, float,
                     float, float*, int64_t) { return 0; }
template <typename T>
int64_t quantize_linear_run(const float*, const float*, const float*, bool, T*, int64_t) { return 0; }
template <typename T>
int64_t dequantize_linear_run(const T*, const float*, const T*, bool, float*, int64_t) { return 0; }
int64_t threshold_run(const float*, const float*, int64_t, float, float, float*, int64_t) { return 0; }
int64_t threshold_run_by_channel(const float*, const float*, int64_t, int64_t, int64_t, int64_t, float, float, float*,
                                 int64_t) {
  return 0;
}

int64_t activation_bytes_run(const float*, float, float, float, float, uint8_t*, int*, int64_t) { return 0; }
int64_t int8_values_run(const float*, const float*, const float*, bool, int8_t*, int*, int64_t) { return 0; }
int64_t scale_sums_run(const int32_t*, const int32_t*, const double*, const double*, float*, int64_t) { return 0; }
int64_t requantize_run(const RequantizeRows&) { return 0; }
void transpose_8x8(const float*, int64_t, float*, int64_t, bool) {}
void store_fence() {}

#endif

template int64_t quantize_linear_run<int8_t>(const float*, const float*, const float*, bool, int8_t*, int64_t);
template int64_t quantize_linear_run<uint8_t>(const float*, const float*, const float*, bool, uint8_t*, int64_t);
template int64_t quantize_linear_run<int16_t>(const float*, const float*, const float*, bool, int16_t*, int64_t);
template int64_t quantize_linear_run<uint16_t>(const float*, const float*, const float*, bool, uint16_t*, int64_t);
template int64_t dequantize_linear_run<int8_t>(const int8_t*, const float*, const int8_t*, bool, float*, int64_t);
template int64_t dequantize_linear_run<uint8_t>(const uint8_t*, const float*, const uint8_t*, bool, float*, int64_t);
template int64_t dequantize_linear_run<int16_t>(const int16_t*, const float*, const int16_t*, bool, float*, int64_t);
template int64_t dequantize_linear_run<uint16_t>(const uint16_t*, const float*, const uint16_t*, bool, float*, int64_t);

}  // namespace qonnx::kernels::avx2
