// The exact int8 GEMM (kernels/common/igemm.h): every path this CPU runs (portable, the AVX2 vpmaddubsw
// paths with int16 sums of 2 and of 8 products, AVX2 16-bit, AVX-VNNI, AVX-512 VNNI), 1 and 2 threads, against a plain int64 reference over generated
// shapes (rows, k and columns on and off the tiles' multiples, plain and transposed weights) and value
// ranges (full int8 weights, 4-bit weights, 4-bit left values, and -128 / 127 / 255 extremes right at
// and just past each bound where a vpmaddubsw path would saturate, and sums next to the int32 limit). A path this CPU cannot run
// is reported as skipped.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/common/igemm.h"
#include "qonnx/exec/threads.h"
#include "support/simd_levels.h"

namespace qonnx::test {
namespace {

using kernels::Int8Weights;
using kernels::isa::Family;
using kernels::isa::Isa;

// The values a case draws: the left operand from [0, max_left] (or only {0, max_left} when extreme),
// the weights from [w_lo, w_hi] (or only {w_lo, w_hi}).
struct Range {
  const char* what;
  int max_left;
  int w_lo, w_hi;
  bool extreme;
};

// On AVX2 the full-range and -65/64 cases must take the 16-bit path, -128/127 x 127, -64/63 and
// -17/16 x 255 avx2-maddubs, the others avx2-maddubs-k16.
const Range kRanges[] = {
    {"full int8 weights, left to 255", 255, -128, 127, false},
    {"4-bit weights, left to 255", 255, -8, 7, false},
    {"full int8 weights, left to 15", 15, -128, 127, false},
    {"extremes -16/15 x 0/255: int16 sums of 8 products at -32640", 255, -16, 15, true},
    {"extremes -17/16 x 0/255: one past the k16 bound", 255, -17, 16, true},
    {"extremes -128/127 x 0/255", 255, -128, 127, true},
    {"extremes -128/127 x 0/127: pair sums at -32512", 127, -128, 127, true},
    {"extremes -64/63 x 0/255: pair sums at -32640", 255, -64, 63, true},
    {"extremes -65/64 x 0/255: one past the maddubs bound", 255, -65, 64, true},
};

struct Operands {
  std::vector<uint8_t> a;  // m x lda
  std::vector<int8_t> w;   // k x n, or n x k when transposed
};

// Extreme cases draw mostly max_left, and per column mostly w_lo (even columns) or w_hi (odd ones), so
// that long runs of same-sign extreme products, the sums that would saturate a path past its bound,
// are common.
Operands make_operands(int64_t m, int64_t k, int64_t n, int64_t lda, bool transposed, const Range& r, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> left(0, r.max_left), weight(r.w_lo, r.w_hi);
  std::bernoulli_distribution mostly(0.9);
  Operands o;
  o.a.resize(static_cast<size_t>(std::max<int64_t>(m * lda, 1)));
  for (uint8_t& x : o.a) x = static_cast<uint8_t>(r.extreme ? (mostly(rng) ? r.max_left : 0) : left(rng));
  o.w.resize(static_cast<size_t>(std::max<int64_t>(k * n, 1)));
  for (size_t e = 0; e < o.w.size(); ++e) {
    const int64_t column = transposed ? static_cast<int64_t>(e) / std::max<int64_t>(k, 1) : static_cast<int64_t>(e) % std::max<int64_t>(n, 1);
    const bool low = (column % 2 == 0) == mostly(rng);
    o.w[e] = static_cast<int8_t>(r.extreme ? (low ? r.w_lo : r.w_hi) : weight(rng));
  }
  return o;
}

int8_t weight_at(const Operands& o, int64_t k, int64_t n, bool transposed, int64_t p, int64_t j) {
  return transposed ? o.w[static_cast<size_t>(j * k + p)] : o.w[static_cast<size_t>(p * n + j)];
}

// The product in int64, one term at a time.
std::vector<int64_t> reference(int64_t m, int64_t k, int64_t n, int64_t lda, const Operands& o, bool transposed) {
  std::vector<int64_t> c(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t p = 0; p < k; ++p) s += int64_t{o.a[static_cast<size_t>(i * lda + p)]} * weight_at(o, k, n, transposed, p, j);
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

// Paths by the int8 family's level; kAvx2 holds two (chosen by the weights' bound).
struct Level {
  Isa isa;
  const char* needs;
};
const Level kLevels[] = {
    {Isa::kPortable, "nothing"},
    {Isa::kAvx2, "avx2"},
    {Isa::kAvxVnni, "avx2 + avx-vnni"},
    {Isa::kAvx512, "avx512f + avx512bw + avx512vnni"},
};

void PrintTo(const Level& level, std::ostream* os) { *os << kernels::isa::name(level.isa); }

bool cpu_runs(Isa isa) { return kernels::isa::supports(Family::kInt8, isa, kernels::isa::cpu_features()); }

// The path igemm.h promises for weights whose largest magnitude is max_abs: on AVX2, vpmaddubsw only
// when no int16 sum it forms can exceed 32767: 2 products per lane (avx2-maddubs), 8 (avx2-maddubs-k16).
const char* expected_path(Isa isa, int max_left, int max_abs) {
  switch (isa) {
    case Isa::kPortable: return "portable";
    case Isa::kAvx2:
      if (8 * max_left * max_abs <= 32767) return "avx2-maddubs-k16";
      return 2 * max_left * max_abs <= 32767 ? "avx2-maddubs" : "avx2-madd16";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512: return "avx512vnni";
  }
  return "?";
}

// The AVX-512 panel width igemm.h promises: 64 where it pads n no further than 32 does (n = 33..64, 97..128, ...).
// AVX-512 VNNI's panel width for n columns: 32 or 64, whichever computes fewer columns (64 on a tie), a
// last panel of at most 16 columns computing 16.
int64_t avx512_computed_columns(int64_t n, int64_t width) {
  const int64_t left = n % width;
  return n - left + (left == 0 ? 0 : left <= 16 ? 16 : width);
}
int expected_avx512_panel(int64_t n) { return avx512_computed_columns(n, 64) <= avx512_computed_columns(n, 32) ? 64 : 32; }
int expected_avx512_last_panel(int64_t n) {
  const int64_t width = expected_avx512_panel(n), left = n % width;
  return left > 0 && left <= 16 ? 16 : static_cast<int>(width);
}

class Int8Gemm : public ::testing::TestWithParam<Level> {
 protected:
  void SetUp() override {
    if (!cpu_runs(GetParam().isa)) {
      std::printf("int8_gemm_test: the %s path is NOT tested here: this CPU lacks %s\n",
                  kernels::isa::name(GetParam().isa), GetParam().needs);
      GTEST_SKIP() << "this CPU does not run the int8 " << kernels::isa::name(GetParam().isa) << " path (needs "
                   << GetParam().needs << ")";
    }
    exec::set_min_work_per_thread(1);  // split even the small cases between threads
  }
  void TearDown() override {
    exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
    exec::set_threads(1);
  }

  // Packs, multiplies with 1 and 2 threads into a C with a wider row stride (its margin must stay
  // untouched) and compares with the reference; checks the column sums and the path taken.
  void check(int64_t m, int64_t k, int64_t n, bool transposed, const Range& r, uint32_t seed) {
    const std::string what = fmt::format("m {} k {} n {} {} [{}]", m, k, n, transposed ? "transposed" : "plain", r.what);
    const int64_t lda = k + static_cast<int64_t>(seed % 3), ldc = n + 2;
    const Operands o = make_operands(m, k, n, lda, transposed, r, seed);
    const std::vector<int64_t> want = reference(m, k, n, lda, o, transposed);
    ScopedSimdLevel level(GetParam().isa, Family::kInt8);
    const Int8Weights w = Int8Weights::pack(k, n, o.w.data(), transposed ? k : n, transposed, r.max_left);
    int max_abs = 0;
    for (int64_t e = 0; e < k * n; ++e) max_abs = std::max(max_abs, std::abs(int{o.w[static_cast<size_t>(e)]}));
    ASSERT_EQ(w.max_abs_weight(), max_abs) << what;
    ASSERT_STREQ(w.path(), expected_path(GetParam().isa, r.max_left, max_abs)) << what;
    paths_seen.insert(w.path());
    if (GetParam().isa == Isa::kAvx512) {
      ASSERT_EQ(w.micro().nr, expected_avx512_panel(n)) << what;
      ASSERT_EQ(w.micro(w.panels() - 1).nr, expected_avx512_last_panel(n)) << what;
    }
    for (int64_t q = 0; q < w.panels(); ++q) panels_seen.insert(w.micro(q).nr);
    ASSERT_EQ(w.k(), k);
    ASSERT_EQ(w.n(), n);
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += weight_at(o, k, n, transposed, p, j);
      ASSERT_EQ(w.column_sums()[static_cast<size_t>(j)], sum) << what << " column " << j;
    }
    for (int threads : {1, 2}) {
      exec::set_threads(threads);
      constexpr int32_t kUntouched = 0x5a5a5a5a;
      std::vector<int32_t> c(static_cast<size_t>(std::max<int64_t>(m * ldc, 1)), kUntouched);
      kernels::int8_gemm(m, k, o.a.data(), lda, w, c.data(), ldc);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j)
          ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], want[static_cast<size_t>(i * n + j)])
              << what << " threads " << threads << " at " << i << "," << j;
        for (int64_t j = n; j < ldc; ++j)
          ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], kUntouched) << what << " wrote past column n in row " << i;
      }
    }
  }

  // On AVX2, each of its three paths ran.
  void expect_every_avx2_path() const {
    if (GetParam().isa != Isa::kAvx2) return;
    for (const char* path : {"avx2-maddubs-k16", "avx2-maddubs", "avx2-madd16"})
      EXPECT_EQ(paths_seen.count(path), 1u) << path;
  }

  // On AVX-512, every tile ran (8 x 32, 6 x 64 and the last panels' 8 x 16).
  void expect_every_avx512_tile() const {
    if (GetParam().isa != Isa::kAvx512) return;
    for (int nr : {16, 32, 64}) EXPECT_EQ(panels_seen.count(nr), 1u) << "tile width " << nr;
  }

  std::set<std::string> paths_seen;
  std::set<int> panels_seen;
};

// Rows, k and columns around the tiles' multiples (rows 4, 6, 8; k groups of 4; 8, 16, 32 and 64 columns).
const int64_t kRows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 33, 70};
const int64_t kDepths[] = {1, 2, 3, 4, 5, 7, 8, 31, 64, 65, 127, 300};
const int64_t kCols[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100};

TEST_P(Int8Gemm, MatchesTheInt64ReferenceOnEveryShapeAndRange) {
  uint32_t seed = 1;
  for (size_t mi = 0; mi < std::size(kRows); ++mi)
    for (size_t ki = 0; ki < std::size(kDepths); ++ki) {
      const int64_t n = kCols[(mi * 5 + ki * 3) % std::size(kCols)];
      const Range& r = kRanges[(mi + ki) % std::size(kRanges)];
      for (bool transposed : {false, true}) {
        check(kRows[mi], kDepths[ki], n, transposed, r, seed++);
        if (HasFatalFailure()) return;
      }
    }
  expect_every_avx2_path();
  expect_every_avx512_tile();
}

TEST_P(Int8Gemm, EveryRangeOnOddShapes) {
  uint32_t seed = 1000;
  for (const Range& r : kRanges)
    for (bool transposed : {false, true}) {
      check(70, 300, 100, transposed, r, seed++);
      check(1, 299, 97, transposed, r, seed++);
      check(11, 6, 41, transposed, r, seed++);
      if (HasFatalFailure()) return;
    }
  expect_every_avx2_path();
}

// Sums next to the int32 limit: k * 255 * 128 just below 2^31, every term of a column the same sign.
TEST_P(Int8Gemm, SumsNearTheInt32Limit) {
  const int64_t m = 3, k = 65536, n = 19;
  std::vector<uint8_t> a(static_cast<size_t>(m * k), 255);
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) w[static_cast<size_t>(p * n + j)] = j % 2 ? 127 : -128;
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  const Int8Weights packed = Int8Weights::pack(k, n, w.data(), n, false, 255);
  for (int threads : {1, 2}) {
    exec::set_threads(threads);
    std::vector<int32_t> c(static_cast<size_t>(m * n));
    kernels::int8_gemm(m, k, a.data(), k, packed, c.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const int64_t want = k * 255 * (j % 2 ? 127 : -128);
        ASSERT_EQ(c[static_cast<size_t>(i * n + j)], want) << "threads " << threads << " at " << i << "," << j;
      }
  }
}

// Left rows from their own pointers (a convolution's windows in place: rows that overlap, start anywhere and
// are read in slices at any offsets, or plain rows in any order): against the reference on the same values
// gathered into plain rows, for every range (each AVX2 path) and 1 and 2 threads.
TEST_P(Int8Gemm, LeftRowsFromPointersAndSlices) {
  struct Shape {
    int64_t slice_k, slices, n;
  };
  const Shape shapes[] = {{4, 9, 24}, {16, 3, 33}, {64, 5, 64}, {192, 3, 100}, {20, 7, 7}};
  uint32_t seed = 500;
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  for (const Shape& sh : shapes)
    for (const Range& r : kRanges) {
      const int64_t k = sh.slice_k * sh.slices, m = 29, span = 1000;
      std::mt19937 rng(seed++);
      std::vector<int64_t> offsets(static_cast<size_t>(sh.slices));
      for (int64_t s = 0; s < sh.slices; ++s) offsets[static_cast<size_t>(s)] = static_cast<int64_t>(rng() % 900) + 3 * s;
      const kernels::Int8Slices slices{sh.slice_k, offsets.data()};
      // The image the rows read (starts anywhere in its first `span` bytes: rows overlap, in no order), and
      // their values gathered as plain rows (Operands' a, row stride k).
      Operands image = make_operands(1, 2 * span + sh.slice_k + k, sh.n, 2 * span + sh.slice_k + k, false, r, seed);
      Operands o = make_operands(m, k, sh.n, k, false, r, seed + 7);
      std::vector<const uint8_t*> sliced(static_cast<size_t>(m)), plain(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) {
        const int64_t start = static_cast<int64_t>(rng() % span);
        sliced[static_cast<size_t>(i)] = image.a.data() + start;
        for (int64_t p = 0; p < k; ++p)
          o.a[static_cast<size_t>(i * k + p)] =
              image.a[static_cast<size_t>(start + offsets[static_cast<size_t>(p / sh.slice_k)] + p % sh.slice_k)];
      }
      const std::vector<int64_t> want = reference(m, k, sh.n, k, o, false);
      // Plain rows: a copy of the gathered values with its rows in reverse order, read back through pointers.
      std::vector<uint8_t> reversed(o.a.size());
      for (int64_t i = 0; i < m; ++i) {
        std::copy_n(o.a.begin() + i * k, k, reversed.begin() + (m - 1 - i) * k);
        plain[static_cast<size_t>(i)] = reversed.data() + (m - 1 - i) * k;
      }
      const Int8Weights w = Int8Weights::pack(k, sh.n, o.w.data(), sh.n, false, r.max_left);
      const std::string what = fmt::format("slice_k {} x {} n {} [{}]", sh.slice_k, sh.slices, sh.n, r.what);
      for (int threads : {1, 2}) {
        exec::set_threads(threads);
        for (const bool in_slices : {true, false}) {
          std::vector<int32_t> c(static_cast<size_t>(m * sh.n), 0);
          kernels::int8_gemm_rows(m, in_slices ? sliced.data() : plain.data(), in_slices ? &slices : nullptr, k, w,
                                  c.data(), sh.n);
          for (int64_t e = 0; e < m * sh.n; ++e)
            ASSERT_EQ(c[static_cast<size_t>(e)], want[static_cast<size_t>(e)])
                << what << (in_slices ? " sliced" : " plain") << " threads " << threads << " element " << e;
        }
      }
    }
}

// Called from inside a parallel_for share (as a caller splitting images or groups between threads
// does), each call runs on its share's thread and gives the reference's sums.
TEST_P(Int8Gemm, InsideAParallelForShare) {
  const int64_t m = 37, k = 70, n = 45, parts = 5;
  const Range& r = kRanges[0];
  const Operands o = make_operands(m, k, n, k, false, r, 77);
  const std::vector<int64_t> want = reference(m, k, n, k, o, false);
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  const Int8Weights w = Int8Weights::pack(k, n, o.w.data(), n, false, r.max_left);
  exec::set_threads(2);
  std::vector<int32_t> c(static_cast<size_t>(m * n), 0);
  exec::parallel_for(parts, m * k * n / parts, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t i0 = m * u / parts, i1 = m * (u + 1) / parts;
      kernels::int8_gemm(i1 - i0, k, o.a.data() + i0 * k, k, w, c.data() + i0 * n, n);
    }
  });
  for (int64_t e = 0; e < m * n; ++e) ASSERT_EQ(c[static_cast<size_t>(e)], want[static_cast<size_t>(e)]) << "element " << e;
}

TEST_P(Int8Gemm, EmptyOperands) {
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  const std::vector<int8_t> w(12, 3);
  // k = 0: every sum is empty.
  const Int8Weights no_depth = Int8Weights::pack(0, 5, w.data(), 5, false, 255);
  EXPECT_EQ(no_depth.column_sums(), std::vector<int32_t>(5, 0));
  std::vector<int32_t> c(10, 7);
  const uint8_t a[8] = {1, 2};  // m x k = 1 x 4 below; the debug build checks every left value
  kernels::int8_gemm(2, 0, a, 0, no_depth, c.data(), 5);
  EXPECT_EQ(c, std::vector<int32_t>(10, 0));
  // m = 0 and n = 0: nothing written.
  const Int8Weights no_cols = Int8Weights::pack(4, 0, w.data(), 0, false, 255);
  EXPECT_TRUE(no_cols.column_sums().empty());
  std::vector<int32_t> untouched(4, 7);
  kernels::int8_gemm(1, 4, a, 4, no_cols, untouched.data(), 0);
  const Int8Weights some = Int8Weights::pack(4, 3, w.data(), 3, false, 255);
  kernels::int8_gemm(0, 4, a, 4, some, untouched.data(), 3);
  EXPECT_EQ(untouched, std::vector<int32_t>(4, 7));
}

// A runtime operand's byte codes packed with an offset (pack_offset_bytes: w = u + offset): the same sums and
// column sums as its integers packed by pack, for offsets that put every byte at either end of int8.
TEST_P(Int8Gemm, OffsetBytesPackAsTheirIntegers) {
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  struct Shape {
    int64_t m, k, n;
  };
  const Shape shapes[] = {{1, 1, 1}, {7, 33, 29}, {70, 300, 100}, {9, 129, 17}};
  uint32_t seed = 300;
  for (const Shape& sh : shapes)
    for (int offset : {-128, -127, 0, 5}) {
      const std::string what = fmt::format("m {} k {} n {} offset {}", sh.m, sh.k, sh.n, offset);
      std::mt19937 rng(seed++);
      // Bytes u with u + offset in [-128, 127] (u in [0, 255] for offset -128).
      std::uniform_int_distribution<int> byte(std::max(0, -128 - offset), std::min(255, 127 - offset));
      std::vector<uint8_t> u(static_cast<size_t>(sh.k * sh.n));
      for (uint8_t& b : u) b = static_cast<uint8_t>(byte(rng));
      Operands o = make_operands(sh.m, sh.k, sh.n, sh.k, false, kRanges[0], seed);
      for (size_t e = 0; e < u.size(); ++e) o.w[e] = static_cast<int8_t>(u[e] + offset);
      const std::vector<int64_t> want = reference(sh.m, sh.k, sh.n, sh.k, o, false);
      const Int8Weights w = Int8Weights::pack_offset_bytes(sh.k, sh.n, u.data(), offset, kRanges[0].max_left);
      for (int64_t j = 0; j < sh.n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < sh.k; ++p) sum += o.w[static_cast<size_t>(p * sh.n + j)];
        ASSERT_EQ(w.column_sums()[static_cast<size_t>(j)], sum) << what << " column " << j;
      }
      for (int threads : {1, 2}) {
        exec::set_threads(threads);
        std::vector<int32_t> c(static_cast<size_t>(sh.m * sh.n), 0);
        kernels::int8_gemm(sh.m, sh.k, o.a.data(), sh.k, w, c.data(), sh.n);
        for (int64_t e = 0; e < sh.m * sh.n; ++e)
          ASSERT_EQ(c[static_cast<size_t>(e)], want[static_cast<size_t>(e)]) << what << " threads " << threads << " element " << e;
      }
    }
}

// The packed weights hold the codes (k x n bytes) and the sums, padded only to the tile: k to a multiple
// of 4, n to one of the panel width (32, or 64 where that pads no further).
TEST_P(Int8Gemm, PackedBytesAreTheCodesPlusTilePadding) {
  ScopedSimdLevel level(GetParam().isa, Family::kInt8);
  for (int64_t k : {1, 64, 301})
    for (int64_t n : {1, 32, 100}) {
      const std::vector<int8_t> w(static_cast<size_t>(k * n), 1);
      const Int8Weights packed = Int8Weights::pack(k, n, w.data(), n, false, 255);
      const size_t sums = static_cast<size_t>(n) * sizeof(int32_t);
      EXPECT_GE(packed.bytes(), static_cast<size_t>(k * n) + sums) << k << " x " << n;
      EXPECT_LE(packed.bytes(), static_cast<size_t>((k + 3) * (n + 31)) + sums) << k << " x " << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Paths, Int8Gemm, ::testing::ValuesIn(kLevels),
                         [](const ::testing::TestParamInfo<Level>& info) {
                           return std::string(kernels::isa::name(info.param.isa));
                         });

}  // namespace
}  // namespace qonnx::test
