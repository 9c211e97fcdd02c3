// Row-major matrix products shared by MatMul, Gemm, Conv and their integer variants.
#pragma once

#include <cstdint>

namespace qonnx::kernels {

// c[i*ldc + j] += sum_p a[i*lda + p] * b[p*ldb + j], products and sums in Acc. The i-p-j order walks
// b and c along contiguous rows (the inner loop vectorises), and each c element still receives its
// terms in p order, so float results match a plain dot product.
template <typename T, typename Acc>
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, Acc* c,
                     int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    Acc* crow = c + i * ldc;
    const T* arow = a + i * lda;
    for (int64_t p = 0; p < k; ++p) {
      const Acc av = static_cast<Acc>(arow[p]);
      const T* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * static_cast<Acc>(brow[j]);
    }
  }
}

}  // namespace qonnx::kernels
