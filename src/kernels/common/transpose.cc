// The transposes every kernel family uses (see transpose.h).
#include "kernels/common/transpose.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/common/element_copy.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {
namespace {

// Tiles of kLong x kShort elements: the innermost loop runs kLong steps along the longer axis, so one
// side is walked contiguously and the other with the short axis' small stride, and a tile touches
// only kShort rows of the strided side (large power-of-two strides would otherwise evict each other).
constexpr int64_t kLong = 64, kShort = 8;

// Rows [r0, r1) of src (rows x cols, row stride ld) into dst (cols x rows).
template <typename E>
void transpose_rows(const E* src, E* dst, int64_t rows, int64_t cols, int64_t ld, int64_t r0, int64_t r1) {
  if (rows >= cols) {  // inner loop down the rows: dst written contiguously
    for (int64_t i0 = r0; i0 < r1; i0 += kLong) {
      const int64_t i1 = std::min(r1, i0 + kLong);
      for (int64_t j0 = 0; j0 < cols; j0 += kShort) {
        const int64_t j1 = std::min(cols, j0 + kShort);
        for (int64_t j = j0; j < j1; ++j)
          for (int64_t i = i0; i < i1; ++i) dst[j * rows + i] = src[i * ld + j];
      }
    }
  } else {  // inner loop along the columns: src read contiguously
    for (int64_t i0 = r0; i0 < r1; i0 += kShort) {
      const int64_t i1 = std::min(r1, i0 + kShort);
      for (int64_t j0 = 0; j0 < cols; j0 += kLong) {
        const int64_t j1 = std::min(cols, j0 + kLong);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) dst[j * rows + i] = src[i * ld + j];
      }
    }
  }
}

#if defined(__SSE2__)
// A 16 x 16 byte tile transposed in registers: each round interleaves row i with row i + 8 into rows 2i and
// 2i + 1, which rotates a byte's 8-bit address (row bits, column bits) left by one; four rounds swap row and
// column.
inline void transpose_16x16(__m128i (&x)[16]) {
  __m128i t[16];
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(x[i], x[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(x[i], x[i + 8]);
    }
    for (int i = 0; i < 16; ++i) x[i] = t[i];
  }
}

// Bytes: 16 x 16 tiles in registers; the rest of the rows and columns go through the scalar loops.
template <>
void transpose_rows<uint8_t>(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t ld, int64_t r0,
                             int64_t r1) {
  const int64_t tiled_rows = r0 + (r1 - r0) / 16 * 16, tiled_cols = cols / 16 * 16;
  if (r0 == 0 && r1 == rows && rows > 1 && rows < 16) {
    // Fewer than 16 rows (an activation of few channels): the same tiles with the missing rows zero; each of a
    // tile's 16 columns gives its `rows` bytes, side by side in dst.
    for (int64_t j0 = 0; j0 < tiled_cols; j0 += 16) {
      __m128i x[16];
      for (int r = 0; r < 16; ++r)
        x[r] = r < rows ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + r * ld + j0)) : _mm_setzero_si128();
      transpose_16x16(x);
      alignas(16) uint8_t column[16];
      for (int c = 0; c < 16; ++c) {
        _mm_store_si128(reinterpret_cast<__m128i*>(column), x[c]);
        std::memcpy(dst + (j0 + c) * rows, column, static_cast<size_t>(rows));
      }
    }
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = tiled_cols; j < cols; ++j) dst[j * rows + i] = src[i * ld + j];
    return;
  }
  for (int64_t i0 = r0; i0 < tiled_rows; i0 += 16)
    for (int64_t j0 = 0; j0 < tiled_cols; j0 += 16) {
      __m128i x[16];
      for (int r = 0; r < 16; ++r) x[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (i0 + r) * ld + j0));
      transpose_16x16(x);
      for (int c = 0; c < 16; ++c) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (j0 + c) * rows + i0), x[c]);
    }
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = i < tiled_rows ? tiled_cols : 0; j < cols; ++j) dst[j * rows + i] = src[i * ld + j];
}
#endif

// Element types by size, so every dtype of that size is moved as one integer.
template <typename E>
void transpose_typed(const void* src, void* dst, int64_t outer, int64_t rows, int64_t cols) {
  // Bytes move in 16 x 16 tiles (above), so their blocks hold whole tiles.
  const int64_t block = sizeof(E) == 1 ? kLong : rows >= cols ? kLong : kShort;
  const int64_t blocks = (rows + block - 1) / block, matrix = rows * cols;
  exec::parallel_for(outer * blocks, block * cols, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t o = u / blocks, b = u % blocks;
      transpose_rows(static_cast<const E*>(src) + o * matrix, static_cast<E*>(dst) + o * matrix, rows, cols,
                     cols, b * block, std::min(rows, (b + 1) * block));
    }
  });
}

struct Bytes16 {
  uint64_t lo, hi;
};

}  // namespace

void transpose_byte_rows(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  transpose_rows(src, dst, rows, cols, cols, r0, r1);
}

void transpose_inner(const void* src, void* dst, int64_t outer, int64_t rows, int64_t cols, size_t elem_size) {
  if (outer <= 0 || rows <= 0 || cols <= 0) return;
  if (rows == 1 || cols == 1) {  // the same order either way
    std::memcpy(dst, src, static_cast<size_t>(outer * rows * cols) * elem_size);
    return;
  }
  switch (elem_size) {
    case 1: return transpose_typed<uint8_t>(src, dst, outer, rows, cols);
    case 2: return transpose_typed<uint16_t>(src, dst, outer, rows, cols);
    case 4: return transpose_typed<uint32_t>(src, dst, outer, rows, cols);
    case 8: return transpose_typed<uint64_t>(src, dst, outer, rows, cols);
    case 16: return transpose_typed<Bytes16>(src, dst, outer, rows, cols);
    default: break;
  }
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(d + static_cast<size_t>((o * cols + j) * rows + i) * elem_size,
                    s + static_cast<size_t>((o * rows + i) * cols + j) * elem_size, elem_size);
}

namespace {

// perm = (0, .., k-1, j, .., rank-1, k, .., j-1) for some k < j: the product of dims [k, j) and of
// [j, rank) trade places. Returns k and j, or false.
bool swaps_two_blocks(const std::vector<int64_t>& perm, size_t* k, size_t* j) {
  const size_t rank = perm.size();
  size_t first = 0;
  while (first < rank && perm[first] == static_cast<int64_t>(first)) ++first;
  if (first == rank) return false;
  const size_t split = static_cast<size_t>(perm[first]);  // the second block starts here
  if (split <= first) return false;
  for (size_t i = first; i < rank; ++i) {
    const size_t want = i < first + (rank - split) ? split + (i - first) : first + (i - first - (rank - split));
    if (perm[i] != static_cast<int64_t>(want)) return false;
  }
  *k = first;
  *j = split;
  return true;
}

}  // namespace

Dims transposed_dims(const Tensor& x, const std::vector<int64_t>& perm) {
  Dims out_dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out_dims[i] = x.dim(static_cast<size_t>(perm[i]));
  return out_dims;
}

void transpose_into(const Tensor& x, const std::vector<int64_t>& perm, Tensor* out) {
  size_t k = 0, j = 0;
  if (x.dtype() != DType::kString && swaps_two_blocks(perm, &k, &j)) {
    const Dims& d = x.dims();
    const auto product = [&](size_t lo, size_t hi) {
      return std::accumulate(d.begin() + static_cast<std::ptrdiff_t>(lo), d.begin() + static_cast<std::ptrdiff_t>(hi),
                             int64_t{1}, std::multiplies<int64_t>());
    };
    transpose_inner(x.raw(), out->raw(), product(0, k), product(k, j), product(j, d.size()), dtype_size(x.dtype()));
    return;
  }
  const std::vector<int64_t> strides = row_major_strides(x.dims());
  std::vector<std::vector<int64_t>> tables(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    tables[i].resize(static_cast<size_t>(out->dim(i)));
    for (int64_t c = 0; c < out->dim(i); ++c) tables[i][static_cast<size_t>(c)] = c * strides[static_cast<size_t>(perm[i])];
  }
  copy_by_axis_tables(x, *out, tables);
}

Tensor transposed(const Tensor& x, const std::vector<int64_t>& perm) {
  Tensor out = Tensor::uninitialized(x.dtype(), transposed_dims(x, perm));
  transpose_into(x, perm, &out);
  return out;
}

void transpose_inner_serial(const float* src, float* dst, int64_t rows, int64_t src_ld, int64_t cols) {
  transpose_rows(src, dst, rows, cols, src_ld, 0, rows);
}

void rows_to_planes(const float* rows, int64_t count, int64_t channels, float* planes, int64_t plane_stride,
                    int64_t output_bytes) {
  constexpr int64_t kTile = 8;
  const bool simd_tiles = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  const bool stream = simd_tiles && output_bytes >= kStreamingBytes && plane_stride % 8 == 0;
  bool streamed = false;
  for (int64_t j0 = 0; j0 < channels; j0 += kTile)
    for (int64_t p0 = 0; p0 < count; p0 += kTile) {
      if (simd_tiles && j0 + kTile <= channels && p0 + kTile <= count) {
        float* dst = planes + j0 * plane_stride + p0;
        const bool aligned = stream && reinterpret_cast<uintptr_t>(dst) % 32 == 0;
        avx2::transpose_8x8(rows + p0 * channels + j0, channels, dst, plane_stride, aligned);
        streamed |= aligned;
        continue;
      }
      if (simd_tiles && p0 + kTile <= count) {
        // The last channels (fewer than a tile; all of a layer with few): the tile's rows copied into a full
        // 8 x 8 one first, so that it too is transposed in registers rather than element by element.
        const int64_t width = channels - j0;
        float tile[kTile * kTile] = {}, out[kTile * kTile];
        for (int64_t p = 0; p < kTile; ++p)
          std::memcpy(tile + p * kTile, rows + (p0 + p) * channels + j0, static_cast<size_t>(width) * sizeof(float));
        avx2::transpose_8x8(tile, kTile, out, kTile, false);
        for (int64_t j = 0; j < width; ++j)
          std::memcpy(planes + (j0 + j) * plane_stride + p0, out + j * kTile, kTile * sizeof(float));
        continue;
      }
      for (int64_t j = j0; j < std::min(channels, j0 + kTile); ++j)
        for (int64_t p = p0; p < std::min(count, p0 + kTile); ++p) planes[j * plane_stride + p] = rows[p * channels + j];
    }
  if (streamed) avx2::store_fence();
}

}  // namespace qonnx::kernels
