// Exact integer matrix products: uint8 activations (left, row-major) times constant int8 weights
// (right, packed once) summed in int32.
//
// Every sum is exact (the caller guarantees k * max_left * max|w| < 2^31, so no partial sum can leave
// int32 whatever the order), hence every instruction-set path, tile shape and thread count gives the
// same int32 bits by construction; tests/int8_gemm_test.cc checks it against an int64 reference anyway.
//
// The path is chosen when the weights are packed, from isa::current(isa::Family::kInt8) and the value
// bound (see Int8Weights::pack), and stays with the packed weights:
//   avx512vnni    vpdpbusd on zmm (u8 x s8, groups of 4 summed into int32, non-saturating); tiles of 8 x 32
//                 or 6 x 64, whichever pads n less (6 x 64 on a tie), and 8 x 16 on a last panel of at most
//                 16 columns (chosen by pack, kept with the weights)
//   avxvnni       the VEX vpdpbusd on ymm (Alder Lake and later)
//   avx2-maddubs-k16  vpmaddubsw (u8 x s8 pairs into int16, saturating), the pair sums of 16 k added
//                 in int16, then vpmaddwd by ones; only when 8 * max_left * max|w| <= 32767 (4-bit
//                 weights, or 4-bit left values), so that no int16 sum saturates
//   avx2-maddubs  the same with each pair sum widened at once; when 2 * max_left * max|w| <= 32767
//   avx2-madd16   both operands widened to int16, vpmaddwd (exact) otherwise
//   portable      int32 C++
// All of them read the same packed layout: panels of nr columns (the path's tile width; the last one may be
// narrower, its own tiles' width), each panel ceil(k / 4) groups x width columns x 4 consecutive k, zero-padded in k and in n, so that one 32-bit
// broadcast of four left values meets four weights of a column in one 32-bit lane.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/isa/isa.h"

namespace qonnx::kernels {

// A left operand read in slices (int8_gemm_rows'): row i's values s * slice_k + e (e < slice_k) are
// rows[i][offsets[s] + e]; slice_k is a multiple of 4 and divides k, so each k-group of 4 lies in one
// slice. A convolution's windows read in place from its image this way: one slice per kernel row or tap.
struct Int8Slices {
  int64_t slice_k = 0;
  const int64_t* offsets = nullptr;
};

namespace igemm_detail {

enum class Int8Path { kPortable, kAvx2MaddubsK16, kAvx2Maddubs, kAvx2Madd16, kAvxVnni, kAvx512Vnni };

// vpmaddubsw's int16 sums saturate past 32767: the vpmaddubsw paths take weights only when every int16
// sum they form fits. An int16 lane holds 2 products (a pair sum) on avx2-maddubs, and 8 (four pair
// sums: 16 k over the lane pair of a column) on avx2-maddubs-k16.
constexpr int64_t kInt16Max = 32767;
constexpr int kMaddubsK16Products = 8;

// c[i * ldc + j] = sum_{p<k} a[i][p] * w(p, j) for i < R (the tile's rows, each from its own pointer) and
// j < cols (<= nr), w being one packed panel. Reads a[i][p] only for p < k; with `slices` (may be null), a's
// values where the slices put them instead.
using Int8TileFn = void (*)(int64_t k, const uint8_t* const* a, const int8_t* panel, int32_t* c, int64_t ldc,
                            int cols, const Int8Slices* slices);
constexpr int kMaxInt8TileRows = 8;

// One path's tiles: tile[r - 1] computes r rows (1 <= r <= mr) by up to nr columns.
struct Int8MicroKernel {
  const char* name = "";
  int mr = 0, nr = 0;
  Int8TileFn tile[kMaxInt8TileRows] = {};
};

const Int8MicroKernel& int8_micro_portable();
#if QONNX_ISA_X86
const Int8MicroKernel& int8_micro_avx2_maddubs_k16();
const Int8MicroKernel& int8_micro_avx2_maddubs();
const Int8MicroKernel& int8_micro_avx2_madd16();
const Int8MicroKernel& int8_micro_avxvnni();
const Int8MicroKernel& int8_micro_avx512vnni();
const Int8MicroKernel& int8_micro_avx512vnni_wide();
const Int8MicroKernel& int8_micro_avx512vnni_narrow();
#endif

const Int8MicroKernel& int8_micro(Int8Path path);

}  // namespace igemm_detail

// A constant right operand W (k x n, integer values in [-128, 127]) packed for one path.
class Int8Weights {
 public:
  Int8Weights() = default;

  // W from w[p * ld + j] (p < k, j < n), or w[j * ld + p] when `transposed` (a Gemm transB or conv weight
  // M x K layout: row j holds output channel j's k weights). `max_left` (0..255) is the largest value
  // the left operand will hold: with isa::current(kInt8) at kAvx2 it decides between vpmaddubsw and the
  // exact 16-bit path.
  static Int8Weights pack(int64_t k, int64_t n, const int8_t* w, int64_t ld, bool transposed, int max_left);
  // W (k x n, row-major) w[p][j] = u[p * n + j] + offset from bytes (a runtime operand's codes; every w in
  // [-128, 127]), without a search for the largest |w| (128 is assumed).
  static Int8Weights pack_offset_bytes(int64_t k, int64_t n, const uint8_t* u, int offset, int max_left);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int max_left() const { return max_left_; }
  // max over p, j of |w[p][j]| (0..128).
  int max_abs_weight() const { return max_abs_; }
  // sum over p of w[p][j], for the caller's zero-point compensation.
  const std::vector<int32_t>& column_sums() const { return column_sums_; }
  // Memory held: the packed panels and the column sums.
  size_t bytes() const;
  // "avx512vnni", "avxvnni", "avx2-maddubs-k16", "avx2-maddubs", "avx2-madd16" or "portable".
  const char* path() const;

  igemm_detail::Int8Path path_id() const { return path_; }
  // The register tiles the panels were packed for (its nr is the panel width; its mr the rows of a strip).
  const igemm_detail::Int8MicroKernel& micro() const { return *micro_; }
  // The tiles of panel q: micro(), or on the last panel the narrower tiles it was packed for (their mr is at
  // least micro()'s).
  const igemm_detail::Int8MicroKernel& micro(int64_t q) const { return q == panels_ - 1 ? *last_micro_ : *micro_; }
  int64_t panels() const { return panels_; }
  // Packed panel q (columns [q * nr, q * nr + micro(q).nr)).
  const int8_t* panel(int64_t q) const { return data_.get() + q * panel_bytes_; }

 private:
  int64_t k_ = 0, n_ = 0;
  int max_left_ = 0, max_abs_ = 0;
  igemm_detail::Int8Path path_ = igemm_detail::Int8Path::kPortable;
  const igemm_detail::Int8MicroKernel* micro_ = &igemm_detail::int8_micro_portable();
  const igemm_detail::Int8MicroKernel* last_micro_ = micro_;
  int64_t panel_bytes_ = 0, panels_ = 0;  // panel_bytes_: a full panel's
  int64_t panels_bytes() const;            // all panels', the last one at its own width
  // Zeroed panels for (k, n) and the path for the bound, column sums 0.
  static Int8Weights layout(int64_t k, int64_t n, int max_left, int max_abs_weight);
  // Rows p0 .. p0 + rows - 1 (p0 a multiple of 4, rows <= 4), row e's n values at row[e], into the panels.
  // With `add`, each byte plus add (modulo 256) on the way (pack_offset_bytes).
  void put_rows(int64_t p0, int64_t rows, const int8_t* const* row, uint8_t add = 0);
  std::shared_ptr<const int8_t> data_;  // immutable once packed: copies share it
  std::vector<int32_t> column_sums_;
};

// The path Int8Weights::pack would choose now for weights up to max_abs_weight against left values up to
// max_left (so a caller can decide how to split its weights before packing them).
igemm_detail::Int8Path int8_path(int max_left, int max_abs_weight);

// c[i * ldc + j] = sum_{p<k} a[i * lda + p] * w[p][j], exact in int32, for i < m and j < w.n();
// a's values lie in [0, w.max_left()] and k * max_left * max|w| < 2^31 (both asserted in debug builds).
// Split between exec::threads() by column panels or row strips; inside a parallel_for share it runs on the
// calling thread.
void int8_gemm(int64_t m, int64_t k, const uint8_t* a, int64_t lda, const Int8Weights& w, int32_t* c, int64_t ldc);

// int8_gemm with row i of the left operand at rows[i] (in `slices` if not null): a convolution's windows
// read in place from its image, wherever they start. Column panel by column panel, so that a panel of W stays
// in cache while every row passes over it; split between exec::threads() by column panels.
void int8_gemm_rows(int64_t m, const uint8_t* const* rows, const Int8Slices* slices, int64_t k, const Int8Weights& w,
                    int32_t* c, int64_t ldc);

}  // namespace qonnx::kernels
