// Row-major matrix products shared by MatMul, Gemm, Conv and their integer variants.
//
// float x float -> float goes through packed register tiles (gemm_micro.h) picked at run time for the
// CPU by kernels/isa (AVX-512, AVX2 + FMA, or portable C++). The accumulation order is fixed: every output element is
//   c = fma(a[i][0], b[0][j], c0); c = fma(a[i][1], b[1][j], c); ... ; c = fma(a[i][k-1], b[k-1][j], c)
// with c0 = 0 (or the old c when accumulating), one rounding per term, p ascending, never split or
// reassociated. Threads only divide the output into column panels (or row strips) and K is blocked
// without changing that sequence, so the bits do not depend on the thread count, the instruction set,
// or the tile sizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/isa/isa.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {

namespace gemm_detail {

// c[i][j] for i < R (the tile's rows), j < cols (<= nr): as in the header comment over p < kc, starting
// from 0 or, with load_c, from c. a[i * lda + p], b[p * ldb + j], c[i * ldc + j].
using FloatTileFn = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                             int64_t ldc, int cols, bool load_c);
constexpr int kMaxTileRows = 8;

// One instruction set's tiles: tile[r - 1] computes r rows (1 <= r <= mr) by up to nr columns.
struct FloatMicroKernel {
  const char* name = "";
  int mr = 0, nr = 0;
  FloatTileFn tile[kMaxTileRows] = {};
};

const FloatMicroKernel& float_micro_portable();
#if QONNX_ISA_X86
const FloatMicroKernel& float_micro_avx2();
const FloatMicroKernel& float_micro_avx512();
#endif

const FloatMicroKernel& float_micro();  // the one isa::current(isa::Family::kFloat) picks

// Generic c[i][j] += sum_p a[i][p] * b[p][j] for i in [i0, i1), j in [j0, j1), terms in p order:
// integers, double, and mixed types. i-p-j: b and c are walked along contiguous rows.
template <typename T, typename Acc>
void gemm_tile(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, Acc* c, int64_t ldc) {
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
}  // namespace gemm_detail

// Where the float GEMM reads B (k x n): a block of rows [p0, p0 + kc) and columns [j0, j0 + cols), returned
// as a pointer to element (p0, j0) and its row stride. A source may fill `scratch` (kc rows of `nr` floats,
// nr >= cols) and return it. Must be safe to call from several threads at once.
class FloatPanelSource {
 public:
  virtual const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                             int64_t* ld) const = 0;

 protected:
  ~FloatPanelSource() = default;
};

// B stored row-major, b[p * ldb + j]: read in place.
class FloatRowMajorSource final : public FloatPanelSource {
 public:
  FloatRowMajorSource(const float* b, int64_t ldb) : b_(b), ldb_(ldb) {}
  const float* panel(int64_t p0, int64_t, int64_t j0, int64_t, float*, int64_t, int64_t* ld) const override {
    *ld = ldb_;
    return b_ + p0 * ldb_ + j0;
  }

 private:
  const float* b_;
  int64_t ldb_;
};

// B stored transposed, b[j * ldb + p] (Gemm transB): packed a panel at a time.
class FloatTransposedSource final : public FloatPanelSource {
 public:
  FloatTransposedSource(const float* b, int64_t ldb) : b_(b), ldb_(ldb) {}
  const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                     int64_t* ld) const override;

 private:
  const float* b_;
  int64_t ldb_;
};

// C (m x n, row stride ldc) = A (m x k, a[i * lda + p]) x B, or C += A x B with `accumulate`.
struct FloatGemm {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const FloatPanelSource* b = nullptr;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
};

// Column panels of an n-column product (the unit threads share), and the scratch one call of
// float_gemm_block needs (floats).
int64_t float_gemm_panels(int64_t n);
int64_t float_gemm_scratch_floats();
// Multiply-adds in one column panel of g (a thread-splitting weight).
int64_t float_gemm_panel_work(const FloatGemm& g);

// Column panels [q0, q1) of g, every row, on the calling thread.
void float_gemm_block(const FloatGemm& g, int64_t q0, int64_t q1, float* scratch);

// The whole product, split between exec::threads() by column panels (or row strips when there are
// fewer panels than threads).
void float_gemm(const FloatGemm& g);

// `count` products of the same shape, split between threads by (product, column panel): batched
// MatMul, Conv over images and groups. make(i) returns product i as {FloatGemm gemm; S source;} with
// gemm.b left unset: it is pointed at `source`, which lives as long as the product runs.
template <typename MakeItem>
void float_gemm_many(int64_t count, MakeItem&& make) {
  if (count <= 0) return;
  auto first = make(0);
  first.gemm.b = &first.source;
  if (count == 1) return float_gemm(first.gemm);
  if (first.gemm.m <= 0 || first.gemm.n <= 0) return;
  const int64_t panels = float_gemm_panels(first.gemm.n);
  exec::parallel_for(count * panels, float_gemm_panel_work(first.gemm), [&](int64_t u0, int64_t u1) {
    std::vector<float> scratch(static_cast<size_t>(float_gemm_scratch_floats()));
    for (int64_t u = u0; u < u1;) {
      const int64_t q = u % panels, q1 = std::min(panels, q + (u1 - u));
      auto item = make(u / panels);
      item.gemm.b = &item.source;
      float_gemm_block(item.gemm, q, q1, scratch.data());
      u += q1 - q;
    }
  });
}

// c[i*ldc + j] += sum_p a[i*lda + p] * b[p*ldb + j], products and sums in Acc, terms in p order.
// float x float -> float goes to float_gemm (fused multiply-adds, see the header comment); the other
// types use gemm_tile, split between threads by rows or, with few rows, by columns.
template <typename T, typename Acc>
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, Acc* c,
                     int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Acc, float>) {
    const FloatRowMajorSource src(b, ldb);
    FloatGemm g;
    g.m = m, g.n = n, g.k = k, g.a = a, g.lda = lda, g.b = &src, g.c = c, g.ldc = ldc, g.accumulate = true;
    float_gemm(g);
  } else {
    constexpr int64_t kColBlock = 16;
    const bool by_rows = m >= exec::threads() || m >= n;
    const int64_t units = by_rows ? m : (n + kColBlock - 1) / kColBlock;
    const int64_t per_unit = (by_rows ? n : m * kColBlock) * std::max<int64_t>(k, 1);
    exec::parallel_for(units, per_unit, [&](int64_t u0, int64_t u1) {
      if (by_rows)
        gemm_detail::gemm_tile<T, Acc>(u0, u1, 0, n, k, a, lda, b, ldb, c, ldc);
      else
        gemm_detail::gemm_tile<T, Acc>(0, m, u0 * kColBlock, std::min(n, u1 * kColBlock), k, a, lda, b, ldb, c, ldc);
    });
  }
}

}  // namespace qonnx::kernels
