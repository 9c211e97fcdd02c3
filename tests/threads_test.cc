// --threads: MatMul, Gemm and Conv split their output between threads (gemm_core.h) without ever
// splitting a reduction, so outputs must be bit-identical for every thread count, on odd sizes that
// leave uneven shares and partial blocks (float_gemm_test.cc covers every float path and ISA).
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/onnx/gemm_core.h"
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
    std::vector<Tensor> outs;
    for (int t : {1, 2, 3, 4}) {
      exec::set_threads(t);
      ASSERT_EQ(exec::threads(), t);
      NodeCase c;
      c.op = op;
      c.inputs = inputs;
      c.attrs = attrs;
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
