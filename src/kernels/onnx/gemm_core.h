// Row-major matrix products shared by MatMul, Gemm, Conv and their integer variants.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "qonnx/exec/threads.h"

namespace qonnx::kernels {

namespace gemm_detail {

constexpr int64_t kRowBlock = 1;   // rows per unit of work split between threads
constexpr int64_t kColBlock = 16;  // columns per unit of work when splitting by columns

// c[i][j] += sum_p a[i][p] * b[p][j] for i in [i0, i1), j in [j0, j1). Every c element receives its
// terms one at a time in p order (c = c + a*b, nothing reassociated), so the result does not depend
// on how the rows and columns are split between threads.
// float x float -> float tile, compiled for AVX2 and for baseline x86-64 (picked at load time). The
// arithmetic is the same in both: wider vectors only change how many j are done at once.
void gemm_tile_f32(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float* c, int64_t ldc);

template <typename T, typename Acc>
void gemm_tile(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, Acc* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Acc, float>) {
    gemm_tile_f32(i0, i1, j0, j1, k, a, lda, b, ldb, c, ldc);
  } else {
    // i-p-j: b and c are walked along contiguous rows, so the inner loop vectorises.
    for (int64_t i = i0; i < i1; ++i) {
      Acc* crow = c + i * ldc;
      const T* arow = a + i * lda;
      for (int64_t p = 0; p < k; ++p) {
        const Acc av = static_cast<Acc>(arow[p]);
        const T* brow = b + p * ldb;
        for (int64_t j = j0; j < j1; ++j) crow[j] += av * static_cast<Acc>(brow[j]);
      }
    }
  }
}
}  // namespace gemm_detail

// c[i*ldc + j] += sum_p a[i*lda + p] * b[p*ldb + j], products and sums in Acc. Each c element gets
// its terms in p order, so float results match a plain dot product.
//
// With exec::threads() > 1 the output is split between std::threads: by blocks of rows, or by blocks
// of columns when there are too few rows (m = 1 at batch 1). A reduction is never split, so the
// outputs are bit-identical for every thread count. Small products stay on the calling thread.
template <typename T, typename Acc>
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, Acc* c,
                     int64_t ldc) {
  using namespace gemm_detail;
  if (m <= 0 || n <= 0) return;
  constexpr int64_t kMinWorkPerThread = int64_t{1} << 16;  // multiply-adds
  const int64_t work = m * n * std::max<int64_t>(k, 1);
  int64_t t = std::min<int64_t>(exec::threads(), std::max<int64_t>(1, work / kMinWorkPerThread));
  const bool by_rows = m >= t * kRowBlock || m >= n;
  const int64_t units = by_rows ? (m + kRowBlock - 1) / kRowBlock : (n + kColBlock - 1) / kColBlock;
  t = std::min(t, units);
  if (t <= 1) {
    gemm_tile<T, Acc>(0, m, 0, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  auto part = [&](int64_t w) {  // worker w's share of whole row or column blocks
    const int64_t u0 = units * w / t, u1 = units * (w + 1) / t;
    if (by_rows)
      gemm_tile<T, Acc>(u0 * kRowBlock, std::min(m, u1 * kRowBlock), 0, n, k, a, lda, b, ldb, c, ldc);
    else
      gemm_tile<T, Acc>(0, m, u0 * kColBlock, std::min(n, u1 * kColBlock), k, a, lda, b, ldb, c, ldc);
  };
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(t - 1));
  for (int64_t w = 1; w < t; ++w) workers.emplace_back(part, w);
  part(0);
  for (auto& th : workers) th.join();
}

}  // namespace qonnx::kernels
