// softmax_avx2.h. The function carries target("avx2,fma") instead of the file being compiled with
// -mavx2 -mfma, so nothing from included headers can leak AVX2 code into the portable paths.
#include "kernels/onnx/softmax_avx2.h"

#include "kernels/isa/isa.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#endif

namespace qonnx::kernels::avx2 {

#if QONNX_ISA_X86
// ort::mlas_exp_nonpositive, eight lanes at a time: the clamp below keeps NaN (a false compare), every
// std::fma is one _mm256_fmadd_ps, the scale's exponent bits are built the same way.
__attribute__((target("avx2,fma"))) int64_t softmax_exp_run(float* v, float max, int64_t n, bool keep_shifted,
                                                            float* lanes) {
  const __m256 lower = _mm256_set1_ps(-88.3762626647949f), bias = _mm256_set1_ps(12582912.0f);
  const __m256 log2_reciprocal = _mm256_set1_ps(1.44269504088896341f);
  const __m256 log2_high = _mm256_set1_ps(-6.93145752e-1f), log2_low = _mm256_set1_ps(-1.42860677e-6f);
  const float poly[] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f, 0x1.fffff6p-2f, 1.0f, 1.0f};
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 sum = _mm256_loadu_ps(lanes);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 shifted = _mm256_sub_ps(_mm256_loadu_ps(v + j), vmax);
    const __m256 x = _mm256_blendv_ps(shifted, lower, _mm256_cmp_ps(shifted, lower, _CMP_LT_OQ));
    const __m256 biased = _mm256_fmadd_ps(x, log2_reciprocal, bias);
    const __m256 m = _mm256_sub_ps(biased, bias);
    __m256 r = _mm256_fmadd_ps(m, log2_high, x);
    r = _mm256_fmadd_ps(m, log2_low, r);
    __m256 p = _mm256_set1_ps(poly[0]);
    for (int i = 1; i < 7; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(poly[i]));
    const __m256i scale = _mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(biased), 23),
                                           _mm256_set1_epi32(0x3F800000));
    const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(scale));
    sum = _mm256_add_ps(sum, e);
    _mm256_storeu_ps(v + j, keep_shifted ? shifted : e);
  }
  _mm256_storeu_ps(lanes, sum);
  return j;
}

__attribute__((target("avx2,fma"))) float row_max_run(const float* v, int64_t n, float max) {
  __m256 m = _mm256_set1_ps(max);
  for (int64_t j = 0; j + 8 <= n; j += 8) m = _mm256_max_ps(_mm256_loadu_ps(v + j), m);  // v > m ? v : m
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  for (float x : lanes) max = x > max ? x : max;
  return max;
}
#else
int64_t softmax_exp_run(float*, float, int64_t, bool, float*) { return 0; }
float row_max_run(const float*, int64_t, float max) { return max; }
#endif

}  // namespace qonnx::kernels::avx2
