#include "kernels/common/igemm.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#if QONNX_ISA_X86
#include <emmintrin.h>
#endif

#include "qonnx/exec/threads.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

namespace igemm_detail {

const Int8MicroKernel& int8_micro(Int8Path path) {
#if QONNX_ISA_X86
  switch (path) {
    case Int8Path::kAvx512Vnni: return int8_micro_avx512vnni();
    case Int8Path::kAvxVnni: return int8_micro_avxvnni();
    case Int8Path::kAvx2MaddubsK16: return int8_micro_avx2_maddubs_k16();
    case Int8Path::kAvx2Maddubs: return int8_micro_avx2_maddubs();
    case Int8Path::kAvx2Madd16: return int8_micro_avx2_madd16();
    case Int8Path::kPortable: break;
  }
#endif
  return int8_micro_portable();
}

}  // namespace igemm_detail

namespace {

using igemm_detail::Int8Path;

Int8Path choose_path(isa::Isa isa, int max_left, int max_abs_weight) {
  switch (isa) {
    case isa::Isa::kAvx512: return Int8Path::kAvx512Vnni;
    case isa::Isa::kAvxVnni: return Int8Path::kAvxVnni;
    case isa::Isa::kAvx2: {
      const int64_t product = int64_t{max_left} * max_abs_weight;
      if (igemm_detail::kMaddubsK16Products * product <= igemm_detail::kInt16Max) return Int8Path::kAvx2MaddubsK16;
      return 2 * product <= igemm_detail::kInt16Max ? Int8Path::kAvx2Maddubs : Int8Path::kAvx2Madd16;
    }
    case isa::Isa::kPortable: break;
  }
  return Int8Path::kPortable;
}

// Panels live in a tensor's storage: they start on a cache line (64-byte aligned: a zmm load of a k-group
// never splits one), and the plan's packed weights count against --max-memory like every tensor it holds.
std::shared_ptr<int8_t> allocate_panels(size_t bytes) {
  auto storage = std::make_shared<Tensor>(DType::kInt8, Dims{static_cast<int64_t>(std::max<size_t>(bytes, 1))});
  int8_t* p = storage->data<int8_t>();  // zeroed: the padding past k and n must be zero
  return std::shared_ptr<int8_t>(std::move(storage), p);
}

// Bytes of the left operand a row block covers: a block stays in L2 while every column panel of the
// thread's share passes over it, and a panel (k x nr bytes) is reused by every row strip of the block.
constexpr int64_t kRowBlockBytes = 192 * 1024;

void gemm_region(const igemm_detail::Int8MicroKernel& mk, int64_t m, int64_t k, const uint8_t* a, int64_t lda,
                 const Int8Weights& w, int32_t* c, int64_t ldc, int64_t s0, int64_t s1, int64_t q0, int64_t q1) {
  const int64_t mr = mk.mr, nr = mk.nr;
  const int64_t block_strips = std::max<int64_t>(1, kRowBlockBytes / (mr * std::max<int64_t>(k, 1)));
  for (int64_t b0 = s0; b0 < s1; b0 += block_strips) {
    const int64_t b1 = std::min(s1, b0 + block_strips);
    for (int64_t q = q0; q < q1; ++q) {
      const int8_t* panel = w.panel(q);
      const igemm_detail::Int8MicroKernel& tiles = w.micro(q);
      const int64_t j0 = q * nr;
      const int cols = static_cast<int>(std::min(nr, w.n() - j0));
      for (int64_t s = b0; s < b1; ++s) {
        const int64_t i0 = s * mr;
        const int rows = static_cast<int>(std::min(mr, m - i0));
        const uint8_t* row[igemm_detail::kMaxInt8TileRows];
        for (int i = 0; i < rows; ++i) row[i] = a + (i0 + i) * lda;
        tiles.tile[rows - 1](k, row, panel, c + i0 * ldc + j0, ldc, cols, nullptr);
      }
    }
  }
}

#ifndef NDEBUG
// Row i's value p: rows[i][p], or where `slices` put it.
uint8_t left_value(const uint8_t* const* rows, int64_t i, int64_t p, const Int8Slices* slices) {
  return rows[i][slices ? slices->offsets[p / slices->slice_k] + p % slices->slice_k : p];
}

bool left_within(int64_t m, int64_t k, const uint8_t* const* rows, const Int8Slices* slices, int max_left) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      if (left_value(rows, i, p, slices) > max_left) return false;
  return true;
}

bool left_within(int64_t m, int64_t k, const uint8_t* a, int64_t lda, int max_left) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      if (a[i * lda + p] > max_left) return false;
  return true;
}

bool whole_groups_per_slice(int64_t k, const Int8Slices* slices) {
  return !slices || (slices->slice_k > 0 && slices->slice_k % 4 == 0 && k % slices->slice_k == 0);
}
#endif

}  // namespace

Int8Weights Int8Weights::layout(int64_t k, int64_t n, int max_left, int max_abs_weight) {
  assert(k >= 0 && n >= 0 && max_left >= 0 && max_left <= 255);
  Int8Weights r;
  r.k_ = k, r.n_ = n, r.max_left_ = max_left, r.max_abs_ = max_abs_weight;
  r.column_sums_.assign(static_cast<size_t>(n), 0);
  r.path_ = choose_path(isa::current(isa::Family::kInt8), max_left, max_abs_weight);
  r.micro_ = &igemm_detail::int8_micro(r.path_);
  r.last_micro_ = r.micro_;
#if QONNX_ISA_X86
  if (r.path_ == Int8Path::kAvx512Vnni) {
    // Columns computed with panels of `width` and a narrow last panel where at most 16 columns are left.
    const auto computed = [n](int64_t width) {
      const int64_t left = n % width;
      return n - left + (left == 0 ? 0 : left <= 16 ? 16 : width);
    };
    if (computed(64) <= computed(32)) r.micro_ = &igemm_detail::int8_micro_avx512vnni_wide();
    const int64_t left = n % r.micro_->nr;
    r.last_micro_ = left > 0 && left <= 16 ? &igemm_detail::int8_micro_avx512vnni_narrow() : r.micro_;
  }
#endif
  r.panels_ = (n + r.micro_->nr - 1) / r.micro_->nr;
  r.panel_bytes_ = (k + 3) / 4 * r.micro_->nr * 4;
  r.data_ = allocate_panels(static_cast<size_t>(r.panels_bytes()));
  return r;
}

void Int8Weights::put_rows(int64_t p0, int64_t rows, const int8_t* const* row, uint8_t add) {
  // Element (p, j) of panel q = j / nr sits at k-group p / 4, column j % nr of the panel's width, byte p % 4.
  int8_t* data = const_cast<int8_t*>(data_.get());  // still being packed: no copy shares it yet
  const int64_t nr = micro_->nr;
  for (int64_t q = 0; q < panels_; ++q) {
    const int64_t j0 = q * nr, width = micro(q).nr, cols = std::min(nr, n_ - j0);
    int8_t* group = data + q * panel_bytes_ + (p0 / 4) * width * 4;
    int64_t j = 0;
#if QONNX_ISA_X86
    // Four full rows: 16 columns at a time, the bytes interleaved by two rounds of unpacking (SSE2).
    for (; rows == 4 && j + 16 <= cols; j += 16) {
      const __m128i adds = _mm_set1_epi8(static_cast<char>(add));
      const auto load = [&](int e) {
        return _mm_add_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row[e] + j0 + j)), adds);
      };
      const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
      const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
      const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
      __m128i* out = reinterpret_cast<__m128i*>(group + j * 4);
      _mm_storeu_si128(out, _mm_unpacklo_epi16(lo01, lo23));
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
      _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));
      _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));
    }
#endif
    for (; j < cols; ++j)
      for (int64_t e = 0; e < rows; ++e) group[j * 4 + e] = static_cast<int8_t>(static_cast<uint8_t>(row[e][j0 + j]) + add);
  }
}

Int8Weights Int8Weights::pack_offset_bytes(int64_t k, int64_t n, const uint8_t* u, int offset, int max_left) {
  Int8Weights r = layout(k, n, max_left, 128);
  // The column sums of the bytes in 16-bit lanes, 128 rows at a time (at most 128 * 255 < 2^16), plus k times
  // the offset. Local arrays, so that the loops vectorize (the bytes could alias a member).
  std::vector<int32_t> sums(static_cast<size_t>(n), static_cast<int32_t>(k * offset));
  std::vector<uint16_t> partial(static_cast<size_t>(n));
  for (int64_t p0 = 0; p0 < k; p0 += 128) {
    uint16_t* part = partial.data();
    std::fill_n(part, n, uint16_t{0});
    for (int64_t p = p0; p < std::min(k, p0 + 128); ++p) {
      const uint8_t* row = u + p * n;
      for (int64_t j = 0; j < n; ++j) part[j] = static_cast<uint16_t>(part[j] + row[j]);
    }
    int32_t* sum = sums.data();
    for (int64_t j = 0; j < n; ++j) sum[j] += part[j];
  }
  r.column_sums_ = std::move(sums);
  const auto* w = reinterpret_cast<const int8_t*>(u);
  for (int64_t p0 = 0; p0 < k; p0 += 4) {
    const int8_t* rows[4];
    for (int64_t e = 0; e < 4; ++e) rows[e] = w + std::min(p0 + e, k - 1) * n;
    r.put_rows(p0, std::min<int64_t>(4, k - p0), rows, static_cast<uint8_t>(offset));
  }
  return r;
}

Int8Weights Int8Weights::pack(int64_t k, int64_t n, const int8_t* w, int64_t ld, bool transposed, int max_left) {
  // The sums and the largest |w| first (the path depends on it), in storage order, so that a large weight is
  // read contiguously.
  std::vector<int32_t> sums(static_cast<size_t>(n), 0);
  int max_abs = 0;
  if (transposed) {
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int v = w[j * ld + p];
        sum += v;
        max_abs = std::max(max_abs, v < 0 ? -v : v);
      }
      sums[static_cast<size_t>(j)] = sum;
    }
  } else {
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) {
        const int v = w[p * ld + j];
        sums[static_cast<size_t>(j)] += v;
        max_abs = std::max(max_abs, v < 0 ? -v : v);
      }
  }
  Int8Weights r = layout(k, n, max_left, max_abs);
  r.column_sums_ = std::move(sums);
  if (transposed) {
    int8_t* data = const_cast<int8_t*>(r.data_.get());
    const int64_t nr = r.micro_->nr;
    for (int64_t q = 0; q < r.panels_; ++q) {
      const int64_t j0 = q * nr, width = r.micro(q).nr, cols = std::min(nr, n - j0);
      for (int64_t p0 = 0; p0 < k; p0 += 4) {
        int8_t* group = data + q * r.panel_bytes_ + (p0 / 4) * width * 4;
        const size_t rows = static_cast<size_t>(std::min<int64_t>(4, k - p0));
        for (int64_t j = 0; j < cols; ++j) std::memcpy(group + j * 4, w + (j0 + j) * ld + p0, rows);
      }
    }
  } else {
    for (int64_t p0 = 0; p0 < k; p0 += 4) {
      const int8_t* rows[4];
      for (int64_t e = 0; e < 4; ++e) rows[e] = w + std::min(p0 + e, k - 1) * ld;
      r.put_rows(p0, std::min<int64_t>(4, k - p0), rows);
    }
  }
  return r;
}

igemm_detail::Int8Path int8_path(int max_left, int max_abs_weight) {
  return choose_path(isa::current(isa::Family::kInt8), max_left, max_abs_weight);
}

int64_t Int8Weights::panels_bytes() const {
  if (panels_ == 0) return 0;
  return (panels_ - 1) * panel_bytes_ + (k_ + 3) / 4 * last_micro_->nr * 4;
}

size_t Int8Weights::bytes() const {
  return static_cast<size_t>(panels_bytes()) + column_sums_.size() * sizeof(int32_t);
}

const char* Int8Weights::path() const { return micro_->name; }

void int8_gemm(int64_t m, int64_t k, const uint8_t* a, int64_t lda, const Int8Weights& w, int32_t* c, int64_t ldc) {
  assert(k == w.k());
  assert(k * w.max_left() * int64_t{w.max_abs_weight()} < (int64_t{1} << 31));
  assert(left_within(m, k, a, lda, w.max_left()));
  if (m <= 0 || w.n() <= 0) return;
  const igemm_detail::Int8MicroKernel& mk = w.micro();
  const int64_t panels = (w.n() + mk.nr - 1) / mk.nr, strips = (m + mk.mr - 1) / mk.mr;
  const int64_t panel_work = m * std::max<int64_t>(k, 1) * mk.nr;
  const bool by_panels = panels >= exec::threads() || strips == 1;
  const int64_t units = by_panels ? panels : strips;
  const int64_t unit_work = by_panels ? panel_work : panel_work / strips * panels;
  exec::parallel_for(units, unit_work, [&](int64_t u0, int64_t u1) {
    if (by_panels)
      gemm_region(mk, m, k, a, lda, w, c, ldc, 0, strips, u0, u1);
    else
      gemm_region(mk, m, k, a, lda, w, c, ldc, u0, u1, 0, panels);
  });
}

void int8_gemm_rows(int64_t m, const uint8_t* const* rows, const Int8Slices* slices, int64_t k, const Int8Weights& w,
                    int32_t* c, int64_t ldc) {
  assert(k == w.k());
  assert(k * w.max_left() * int64_t{w.max_abs_weight()} < (int64_t{1} << 31));
  assert(whole_groups_per_slice(k, slices));
  assert(left_within(m, k, rows, slices, w.max_left()));
  if (m <= 0 || w.n() <= 0) return;
  const igemm_detail::Int8MicroKernel& mk = w.micro();
  const int64_t nr = mk.nr, mr = mk.mr, panels = (w.n() + nr - 1) / nr;
  exec::parallel_for(panels, m * std::max<int64_t>(k, 1) * nr, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int8_t* panel = w.panel(q);
      const igemm_detail::Int8MicroKernel& tiles = w.micro(q);
      const int64_t j0 = q * nr;
      const int cols = static_cast<int>(std::min(nr, w.n() - j0));
      for (int64_t i0 = 0; i0 < m; i0 += mr) {
        const int tile_rows = static_cast<int>(std::min(mr, m - i0));
        tiles.tile[tile_rows - 1](k, rows + i0, panel, c + i0 * ldc + j0, ldc, cols, slices);
      }
    }
  });
}

}  // namespace qonnx::kernels
