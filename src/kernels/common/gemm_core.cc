#include "kernels/common/gemm_core.h"

#include <vector>

namespace qonnx::kernels {

namespace {

// Rows of B per block: a block of one column panel (kKc x nr floats, 32 KiB at nr 32) stays in L1 while
// every row strip of A passes over it. Blocking K only splits the term sequence into consecutive runs
// (the tile reloads c and goes on), so it does not change a bit.
constexpr int64_t kKc = 256;
constexpr int64_t kMaxNr = 32;

}  // namespace

namespace gemm_detail {
const FloatMicroKernel& float_micro() {
#if QONNX_ISA_X86
  switch (isa::current(isa::Family::kFloat)) {
    case isa::Isa::kAvx512: return float_micro_avx512();
    case isa::Isa::kAvx2: return float_micro_avx2();
    case isa::Isa::kAvxVnni:  // an int8-only level
    case isa::Isa::kPortable: break;
  }
#endif
  return float_micro_portable();
}
}  // namespace gemm_detail

const float* FloatTransposedSource::panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch,
                                          int64_t nr, int64_t* ld) const {
  for (int64_t j = 0; j < cols; ++j) {
    const float* src = b_ + (j0 + j) * ldb_ + p0;
    for (int64_t p = 0; p < kc; ++p) scratch[p * nr + j] = src[p];
  }
  *ld = nr;
  return scratch;
}

int64_t float_gemm_panels(int64_t n) {
  const int64_t nr = gemm_detail::float_micro().nr;
  return (n + nr - 1) / nr;
}

int64_t float_gemm_scratch_floats() { return kKc * kMaxNr; }

int64_t float_gemm_panel_work(const FloatGemm& g) {
  return g.m * std::max<int64_t>(g.k, 1) * gemm_detail::float_micro().nr;
}

namespace {

// Row strips [s0, s1) x column panels [q0, q1) of g.
void gemm_region(const gemm_detail::FloatMicroKernel& mk, const FloatGemm& g, int64_t s0, int64_t s1, int64_t q0,
                 int64_t q1, float* scratch) {
  const int64_t mr = mk.mr, nr = mk.nr;
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t j0 = q * nr;
    const int cols = static_cast<int>(std::min(nr, g.n - j0));
    if (g.k <= 0) {  // an empty sum: 0, or c unchanged
      if (!g.accumulate)
        for (int64_t i = s0 * mr; i < std::min(g.m, s1 * mr); ++i) std::fill_n(g.c + i * g.ldc + j0, cols, 0.0f);
      continue;
    }
    for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
      const int64_t kc = std::min(kKc, g.k - p0);
      int64_t ldb = 0;
      const float* b = g.b->panel(p0, kc, j0, cols, scratch, nr, &ldb);
      if (b != scratch && s1 - s0 > 2) {  // reused by many row strips: copy it into one contiguous block
        for (int64_t p = 0; p < kc; ++p) std::copy_n(b + p * ldb, cols, scratch + p * nr);
        b = scratch;
        ldb = nr;
      }
      const bool load_c = g.accumulate || p0 > 0;
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t i0 = s * mr;
        const int rows = static_cast<int>(std::min(mr, g.m - i0));
        mk.tile[rows - 1](kc, g.a + i0 * g.lda + p0, g.lda, b, ldb, g.c + i0 * g.ldc + j0, g.ldc, cols, load_c);
      }
    }
  }
}

}  // namespace

void float_gemm_block(const FloatGemm& g, int64_t q0, int64_t q1, float* scratch) {
  const gemm_detail::FloatMicroKernel& mk = gemm_detail::float_micro();
  gemm_region(mk, g, 0, (g.m + mk.mr - 1) / mk.mr, q0, q1, scratch);
}

void float_gemm(const FloatGemm& g) {
  if (g.m <= 0 || g.n <= 0) return;
  const gemm_detail::FloatMicroKernel& mk = gemm_detail::float_micro();
  const int64_t panels = (g.n + mk.nr - 1) / mk.nr, strips = (g.m + mk.mr - 1) / mk.mr;
  const int64_t panel_work = float_gemm_panel_work(g);
  const bool by_panels = panels >= exec::threads() || strips == 1;
  const int64_t units = by_panels ? panels : strips;
  const int64_t unit_work = by_panels ? panel_work : panel_work / strips * panels;
  exec::parallel_for(units, unit_work, [&](int64_t u0, int64_t u1) {
    std::vector<float> scratch(static_cast<size_t>(float_gemm_scratch_floats()));
    if (by_panels)
      gemm_region(mk, g, 0, strips, u0, u1, scratch.data());
    else
      gemm_region(mk, g, u0, u1, 0, panels, scratch.data());
  });
}

}  // namespace qonnx::kernels
