// --threads: MatMul, Gemm and Conv split their output between threads (gemm_core.h) without ever
// splitting a reduction, so outputs must be bit-identical for every thread count, on odd sizes that
// leave uneven shares and partial blocks (float_gemm_test.cc covers every float path and ISA).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/gemm_core.h"
#include "kernels/common/fast_math.h"
#include "qonnx/exec/threads.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

Tensor random_f32(Dims dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);  // values whose sums round: a reordered reduction would show
  return f32(std::move(dims), v);
}

// Restores the process-wide thread count after each test.
class ThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override { exec::set_min_work_per_thread(1); }  // split even these small cases
  void TearDown() override {
    exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
    exec::set_threads(1);
  }

  // Output #0 of the node at threads 1 to 4: every one equal, bit for bit, to the first.
  void expect_identical(const std::string& op, const std::vector<Tensor>& inputs,
                        std::function<void(io::NodeBuilder&)> attrs = nullptr) {
    NodeCase c;
    c.op = op;
    c.inputs = inputs;
    c.attrs = attrs;
    expect_identical(c);
  }

  void expect_identical(const NodeCase& c) {
    const std::string& op = c.op;
    std::vector<Tensor> outs;
    for (int t : {1, 2, 3, 4}) {
      exec::set_threads(t);
      ASSERT_EQ(exec::threads(), t);
      auto r = run_node(c);
      ASSERT_TRUE(r.is_ok()) << op << " threads " << t << ": " << r.status().to_string();
      outs.push_back(r.value()[0]);
    }
    for (size_t k = 1; k < outs.size(); ++k) {
      ASSERT_EQ(outs[k].dims(), outs[0].dims());
      ASSERT_EQ(outs[k].numel(), outs[0].numel());
      EXPECT_EQ(std::memcmp(outs[k].data<float>(), outs[0].data<float>(), sizeof(float) * outs[0].numel()), 0)
          << op << ": threads " << k + 1 << " differs from threads 1";
    }
  }
};

TEST_F(ThreadsTest, SetThreadsZeroMeansAllCores) {
  exec::set_threads(0);
  EXPECT_GE(exec::threads(), 1);
}

TEST_F(ThreadsTest, MatMulSplitByRows) {
  expect_identical("MatMul", {random_f32({67, 45}, 1), random_f32({45, 131}, 2)});
}

TEST_F(ThreadsTest, MatMulBatchedOddSizes) {
  expect_identical("MatMul", {random_f32({3, 29, 61}, 3), random_f32({61, 97}, 4)});
}

TEST_F(ThreadsTest, MatMulOneRowSplitByColumns) {
  expect_identical("MatMul", {random_f32({1, 523}, 5), random_f32({523, 601}, 6)});
}

TEST_F(ThreadsTest, GemmTransposedWithBias) {
  expect_identical("Gemm", {random_f32({53, 71}, 7), random_f32({113, 71}, 8), random_f32({113}, 9)},
                   [](io::NodeBuilder& n) { n.attr("transB", 1).attr("alpha", 0.75f).attr("beta", 1.5f); });
}

TEST_F(ThreadsTest, GemmOneRow) {
  expect_identical("Gemm", {random_f32({1, 301}, 10), random_f32({301, 777}, 11), random_f32({777}, 12)});
}

TEST_F(ThreadsTest, ConvPaddedStrided) {
  expect_identical("Conv", {random_f32({2, 5, 37, 41}, 13), random_f32({7, 5, 3, 3}, 14), random_f32({7}, 15)},
                   [](io::NodeBuilder& n) { n.attr("pads", std::vector<int64_t>{1, 1, 1, 1}); });
  expect_identical("Conv", {random_f32({1, 3, 45, 39}, 16), random_f32({11, 3, 5, 5}, 17)},
                   [](io::NodeBuilder& n) {
                     n.attr("pads", std::vector<int64_t>{2, 1, 2, 1}).attr("strides", std::vector<int64_t>{2, 1});
                   });
}

TEST_F(ThreadsTest, ConvGrouped) {
  expect_identical("Conv", {random_f32({1, 6, 33, 35}, 18), random_f32({9, 2, 3, 3}, 19)},
                   [](io::NodeBuilder& n) { n.attr("group", 3).attr("pads", std::vector<int64_t>{1, 1, 1, 1}); });
}

// The quantizers split by element ranges that cut broadcast runs anywhere: per tensor, per channel,
// per element, and layouts whose runs do not merge.
NodeCase qonnx_case(const std::string& op, std::vector<Tensor> inputs, Attrs attrs = nullptr) {
  NodeCase c;
  c.op = op;
  c.domain = "qonnx.custom_op.general";
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  return c;
}

Tensor scalar_f32(float v) { return f32({}, {v}); }

TEST_F(ThreadsTest, QuantEveryLayoutAndMode) {
  const Tensor x = random_f32({3, 5, 7, 11}, 21);
  const std::vector<std::pair<Tensor, Tensor>> params = {
      {scalar_f32(0.07f), scalar_f32(1.0f)},                              // one run
      {random_f32({1, 5, 1, 1}, 22), f32({1, 5, 1, 1}, {0, 1, 2, 0, 1})},  // per channel
      {random_f32({5, 1, 1}, 23), random_f32({1, 1, 11}, 24)},            // runs that do not merge
      {random_f32({3, 5, 7, 11}, 25), scalar_f32(0.0f)},                  // per element
  };
  for (const auto& [scale, zeropt] : params) {
    Tensor s = scale;
    for (int64_t i = 0; i < s.numel(); ++i) s.data<float>()[i] = 0.01f + std::abs(s.data<float>()[i]) * 0.1f;
    for (const char* mode : {"ROUND", "FLOOR", "HALF_UP"})
      expect_identical(qonnx_case("Quant", {x, s, zeropt, scalar_f32(4.0f)},
                                  [mode](io::NodeBuilder& n) { n.attr("rounding_mode", std::string(mode)); }));
    expect_identical(qonnx_case("BipolarQuant", {x, s}));
  }
}

TEST_F(ThreadsTest, TruncBothVersions) {
  const Tensor x = random_f32({2, 9, 13, 5}, 26);
  const Tensor scale = f32({1, 9, 1, 1}, {0.5f, 0.25f, 0.125f, 1, 2, 0.5f, 0.25f, 1, 4});
  NodeCase v1 = qonnx_case("Trunc", {x, scale, scalar_f32(0.0f), scalar_f32(8.0f), scalar_f32(4.0f)});
  expect_identical(v1);
  NodeCase v2 = qonnx_case("Trunc", {x, scale, scalar_f32(0.0f), scalar_f32(8.0f), scalar_f32(0.5f), scalar_f32(4.0f)});
  v2.imports = {{"qonnx.custom_op.general", 2}};
  expect_identical(v2);
}

// Channels-last shares start at any channel; channel counts with gcd(8, C) = 1, 4 and 8.
TEST_F(ThreadsTest, MultiThresholdEveryLayout) {
  for (int64_t channels : {13, 12, 16}) {
    const Tensor thresholds = random_f32({channels, 15}, 29);
    for (const char* layout : {"NHWC", "NCHW"}) {
      const bool last = std::string(layout) == "NHWC";
      const Tensor v = last ? random_f32({2, 5, 7, channels}, 30) : random_f32({2, channels, 5, 7}, 30);
      expect_identical(qonnx_case("MultiThreshold", {v, thresholds}, [layout](io::NodeBuilder& n) {
        n.attr("out_dtype", std::string("UINT4")).attr("data_layout", std::string(layout)).attr("out_scale", 0.5f);
      }));
    }
  }
}

TEST_F(ThreadsTest, UnaryElementwise) {
  const Tensor x = random_f32({4, 1000}, 27);
  expect_identical("LeakyRelu", {x}, [](io::NodeBuilder& n) { n.attr("alpha", 0.3f); });
  expect_identical("Sigmoid", {x});
  expect_identical("Abs", {x});
}

// Cutting the walk at any element gives every element once, with the operand offsets of the whole walk.
TEST_F(ThreadsTest, RunWalkCutAnywhere) {
  const Dims out{3, 5, 7, 11}, a{5, 1, 1}, b{1, 1, 11};
  const int64_t total = 3 * 5 * 7 * 11;
  auto walk = [&](int64_t begin, int64_t end, std::vector<std::array<int64_t, 2>>& at, std::vector<int>& seen) {
    kernels::fast::for_each_run<2>(
        out, {&a, &b},
        [&](const kernels::fast::Run<2>& r) {
          for (int64_t i = 0; i < r.len; ++i) {
            ++seen[static_cast<size_t>(r.out_offset + i)];
            at[static_cast<size_t>(r.out_offset + i)] = {r.offset[0] + i * r.stride[0], r.offset[1] + i * r.stride[1]};
          }
        },
        begin, end);
  };
  std::vector<std::array<int64_t, 2>> whole(total);
  std::vector<int> seen_whole(total, 0);
  walk(0, -1, whole, seen_whole);
  ASSERT_EQ(seen_whole, std::vector<int>(total, 1));
  std::mt19937 rng(28);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int64_t> cuts = {0, total};
    for (int k = 0; k < 3; ++k) cuts.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(total)));
    std::sort(cuts.begin(), cuts.end());
    std::vector<std::array<int64_t, 2>> at(total);
    std::vector<int> seen(total, 0);
    for (size_t k = 0; k + 1 < cuts.size(); ++k) walk(cuts[k], cuts[k + 1], at, seen);
    ASSERT_EQ(seen, std::vector<int>(total, 1));
    ASSERT_EQ(at, whole);
  }
}

// Flat (same element count), scalar on either side, and a real broadcast.
TEST_F(ThreadsTest, BinaryElementwise) {
  const Tensor a = random_f32({4, 1000}, 31), b = random_f32({4, 1000}, 32), row = random_f32({1, 4000}, 33);
  const Tensor scalar = scalar_f32(0.37f), column = random_f32({4, 1}, 34);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    expect_identical(op, {a, b});
    expect_identical(op, {a, scalar});
    expect_identical(op, {scalar, a});
    expect_identical(op, {a, column});
  }
  expect_identical("Add", {row, random_f32({4000}, 35)});
  expect_identical("PRelu", {a, column});
}

// Data movement by axis tables splits rows between threads; nearest upsampling copies repeated rows.
TEST_F(ThreadsTest, ResizePadAndSliceByRows) {
  const Tensor x = random_f32({2, 3, 17, 13}, 36);
  expect_identical("Resize", {x, Tensor(), f32({4}, {1, 1, 3, 2.5f})},
                   [](io::NodeBuilder& n) { n.attr("mode", std::string("nearest")); });
  expect_identical("Pad", {x, i64({8}, {0, 1, 2, 3, 0, 0, 1, 2})});
  expect_identical("Slice", {x, i64({2}, {1, 2}), i64({2}, {15, 12}), i64({2}, {2, 3}), i64({2}, {2, 3})});
}

TEST_F(ThreadsTest, NestedParallelForRunsInline) {
  exec::set_threads(4);
  std::vector<int> hits(64 * 37, 0);
  exec::parallel_for(64, 1, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u)
      exec::parallel_for(37, 1, [&](int64_t v0, int64_t v1) {
        for (int64_t v = v0; v < v1; ++v) ++hits[static_cast<size_t>(u * 37 + v)];
      });
  });
  EXPECT_EQ(hits, std::vector<int>(64 * 37, 1));
}

// Two threads using parallel_for at once: one gets the pool, the other runs its job alone.
TEST_F(ThreadsTest, ConcurrentCallersEachCoverTheirUnits) {
  exec::set_threads(3);
  std::vector<std::vector<int>> hits(2, std::vector<int>(5000, 0));
  auto job = [&](size_t which) {
    for (int round = 0; round < 50; ++round)
      exec::parallel_for(5000, 1, [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) ++hits[which][static_cast<size_t>(u)];
      });
  };
  std::thread other(job, 1);
  job(0);
  other.join();
  EXPECT_EQ(hits[0], std::vector<int>(5000, 50));
  EXPECT_EQ(hits[1], std::vector<int>(5000, 50));
}

// The core directly, integer accumulation and a sub-matrix (lda/ldb/ldc wider than the product).
TEST_F(ThreadsTest, ParallelForCoversEveryUnitOnce) {
  for (int t : {1, 2, 3, 4}) {
    exec::set_threads(t);
    std::vector<int> hits(1001, 0);
    exec::parallel_for(1001, int64_t{1} << 20, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) ++hits[static_cast<size_t>(u)];
    });
    EXPECT_EQ(hits, std::vector<int>(1001, 1)) << "threads " << t;
  }
}

TEST_F(ThreadsTest, GemmCoreIntegerStrided) {
  const int64_t m = 131, n = 517, k = 19, lda = 23, ldb = 521, ldc = 530;
  std::mt19937 rng(20);
  std::vector<int32_t> a(static_cast<size_t>(m * lda)), b(static_cast<size_t>(k * ldb));
  for (auto& x : a) x = static_cast<int32_t>(rng() % 255) - 127;
  for (auto& x : b) x = static_cast<int32_t>(rng() % 255) - 127;
  std::vector<int64_t> ref(static_cast<size_t>(m * ldc), 5);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) ref[i * ldc + j] += int64_t{a[i * lda + p]} * b[p * ldb + j];
  for (int t : {1, 2, 3}) {
    exec::set_threads(t);
    std::vector<int64_t> c(static_cast<size_t>(m * ldc), 5);
    kernels::gemm_accumulate<int32_t, int64_t>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
    EXPECT_EQ(c, ref) << "threads " << t;
  }
}

}  // namespace
}  // namespace qonnx::test
