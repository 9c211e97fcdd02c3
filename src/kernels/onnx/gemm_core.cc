#include "kernels/onnx/gemm_core.h"

namespace qonnx::kernels::gemm_detail {

// Four rows of c at a time over a block of columns: each b row segment is loaded once for four
// rows, and the c block stays in L1. Every c element still receives its terms one by one in p order.
__attribute__((target_clones("avx2", "default")))
void gemm_tile_f32(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int64_t kCols = 512;
  for (int64_t jb = j0; jb < j1; jb += kCols) {
    const int64_t je = std::min(j1, jb + kCols);
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
      float* c0 = c + i * ldc;
      float* c1 = c0 + ldc;
      float* c2 = c1 + ldc;
      float* c3 = c2 + ldc;
      const float* a0 = a + i * lda;
      for (int64_t p = 0; p < k; ++p) {
        const float v0 = a0[p], v1 = a0[lda + p], v2 = a0[2 * lda + p], v3 = a0[3 * lda + p];
        const float* brow = b + p * ldb;
        for (int64_t j = jb; j < je; ++j) {
          const float bv = brow[j];
          c0[j] += v0 * bv;
          c1[j] += v1 * bv;
          c2[j] += v2 * bv;
          c3[j] += v3 * bv;
        }
      }
    }
    for (; i < i1; ++i) {
      float* crow = c + i * ldc;
      const float* arow = a + i * lda;
      for (int64_t p = 0; p < k; ++p) {
        const float av = arow[p];
        const float* brow = b + p * ldb;
        for (int64_t j = jb; j < je; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

}  // namespace qonnx::kernels::gemm_detail
