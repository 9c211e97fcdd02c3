#include "kernels/onnx/conv_depthwise.h"

#include <cmath>

#include "kernels/isa/isa.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#endif

namespace qonnx::kernels {
namespace {

void depthwise_portable(const float* const* taps, int64_t count, const float* w, int64_t channels, float* y) {
  for (int64_t c = 0; c < channels; ++c) {
    float acc = 0.0f;
    for (int64_t t = 0; t < count; ++t) acc = std::fma(w[t * channels + c], taps[t][c], acc);
    y[c] = acc;
  }
}

void depthwise_plane_portable(const DepthwisePlane& p, const float* w, float* y) {
  for (int64_t oh = 0; oh < p.out_h; ++oh)
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      const float* x = p.plane + oh * p.stride_h * p.padded_w + ow;
      float acc = 0.0f;
      for (int64_t kh = 0; kh < p.kernel_h; ++kh)
        for (int64_t kw = 0; kw < p.kernel_w; ++kw)
          acc = std::fma(w[kh * p.kernel_w + kw], x[kh * p.dilation_h * p.padded_w + kw * p.dilation_w], acc);
      y[oh * p.out_w + ow] = acc;
    }
}

#if QONNX_ISA_X86
// Four vectors of a row at a time: four independent fma chains hide the fma latency; the row's rest one
// vector at a time, the last partial vector masked.
__attribute__((target("avx2,fma"))) void depthwise_plane_avx2(const DepthwisePlane& p, const float* w, float* y) {
  const int64_t tap_row = p.dilation_h * p.padded_w;
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    const float* row = p.plane + oh * p.stride_h * p.padded_w;
    float* yr = y + oh * p.out_w;
    int64_t ow = 0;
    for (; ow + 32 <= p.out_w; ow += 32) {
      __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(),
             acc3 = _mm256_setzero_ps();
      for (int64_t kh = 0; kh < p.kernel_h; ++kh)
        for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
          const float* x = row + kh * tap_row + kw * p.dilation_w + ow;
          const __m256 wt = _mm256_broadcast_ss(w + kh * p.kernel_w + kw);
          acc0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(x), acc0);
          acc1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(x + 8), acc1);
          acc2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(x + 16), acc2);
          acc3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(x + 24), acc3);
        }
      _mm256_storeu_ps(yr + ow, acc0);
      _mm256_storeu_ps(yr + ow + 8, acc1);
      _mm256_storeu_ps(yr + ow + 16, acc2);
      _mm256_storeu_ps(yr + ow + 24, acc3);
    }
    for (; ow + 8 <= p.out_w; ow += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t kh = 0; kh < p.kernel_h; ++kh)
        for (int64_t kw = 0; kw < p.kernel_w; ++kw)
          acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + kh * p.kernel_w + kw),
                                _mm256_loadu_ps(row + kh * tap_row + kw * p.dilation_w + ow), acc);
      _mm256_storeu_ps(yr + ow, acc);
    }
    if (ow < p.out_w) {  // the last 1-7 outputs: masked loads and stores, the lanes' fma chains unchanged
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(p.out_w - ow)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      __m256 acc = _mm256_setzero_ps();
      for (int64_t kh = 0; kh < p.kernel_h; ++kh)
        for (int64_t kw = 0; kw < p.kernel_w; ++kw)
          acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + kh * p.kernel_w + kw),
                                _mm256_maskload_ps(row + kh * tap_row + kw * p.dilation_w + ow, mask), acc);
      _mm256_maskstore_ps(yr + ow, mask, acc);
    }
  }
}

__attribute__((target("avx2,fma"))) void depthwise_avx2(const float* const* taps, int64_t count, const float* w,
                                                         int64_t channels, float* y) {
  int64_t c = 0;
  // Four channel vectors at a time: four independent fma chains hide the fma latency.
  for (; c + 32 <= channels; c += 32) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(),
           acc3 = _mm256_setzero_ps();
    for (int64_t t = 0; t < count; ++t) {
      const float* wt = w + t * channels + c;
      const float* xt = taps[t] + c;
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(wt), _mm256_loadu_ps(xt), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(wt + 8), _mm256_loadu_ps(xt + 8), acc1);
      acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(wt + 16), _mm256_loadu_ps(xt + 16), acc2);
      acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(wt + 24), _mm256_loadu_ps(xt + 24), acc3);
    }
    _mm256_storeu_ps(y + c, acc0);
    _mm256_storeu_ps(y + c + 8, acc1);
    _mm256_storeu_ps(y + c + 16, acc2);
    _mm256_storeu_ps(y + c + 24, acc3);
  }
  for (; c + 8 <= channels; c += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t t = 0; t < count; ++t)
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + t * channels + c), _mm256_loadu_ps(taps[t] + c), acc);
    _mm256_storeu_ps(y + c, acc);
  }
  for (; c < channels; ++c) {
    float acc = 0.0f;
    for (int64_t t = 0; t < count; ++t) acc = __builtin_fmaf(w[t * channels + c], taps[t][c], acc);
    y[c] = acc;
  }
}
#endif

}  // namespace

void depthwise_plane_f32(const DepthwisePlane& p, const float* w, float* y) {
#if QONNX_ISA_X86
  if (isa::current(isa::Family::kFloat) != isa::Isa::kPortable) return depthwise_plane_avx2(p, w, y);
#endif
  depthwise_plane_portable(p, w, y);
}

void depthwise_position_f32(const float* const* taps, int64_t count, const float* w, int64_t channels, float* y) {
#if QONNX_ISA_X86
  // The float family's choice (tests switch it to compare the paths bit for bit): AVX2 + FMA or better.
  if (isa::current(isa::Family::kFloat) != isa::Isa::kPortable) return depthwise_avx2(taps, count, w, channels, y);
#endif
  depthwise_portable(taps, count, w, channels, y);
}

}  // namespace qonnx::kernels
