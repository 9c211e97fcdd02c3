// The float GEMM / Conv paths (gemm_core.h): every output element is the documented fused
// multiply-add sequence, checked bit for bit against a plain loop; every instruction set, every
// thread count and every conv path (implicit GEMM, 1x1, depthwise, grouped) gives the same bits.
#include <cmath>
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

using kernels::FloatIsa;
using Attrs = std::function<void(io::NodeBuilder&)>;

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);  // sums that round: another order or plain mul + add would show
  return v;
}

Tensor random_f32(Dims dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return f32(std::move(dims), random_values(n, seed));
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dims() == b.dims() && a.dtype() == b.dtype() &&
         std::memcmp(a.data<float>(), b.data<float>(), sizeof(float) * static_cast<size_t>(a.numel())) == 0;
}

// c = fma(a[i][p], b[p][j], c) for p ascending, from 0: the order gemm_core.h documents.
std::vector<float> reference_matmul(int64_t m, int64_t n, int64_t k, const float* a, const float* b) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[p * n + j], acc);
      c[static_cast<size_t>(i * n + j)] = acc;
    }
  return c;
}

struct Conv2d {
  int64_t group = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
};

// 2-D convolution, each output summed over (channel, kh, kw) ascending with fma from 0 (padding reads
// 0), then + bias.
Tensor reference_conv(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2d& a) {
  const int64_t nb = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t f = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3), mg = f / a.group;
  const int64_t oh = (h + a.pad_t + a.pad_b - ((kh - 1) * a.dil_h + 1)) / a.stride_h + 1;
  const int64_t ow = (wd + a.pad_l + a.pad_r - ((kw - 1) * a.dil_w + 1)) / a.stride_w + 1;
  Tensor y(DType::kFloat, {nb, f, oh, ow});
  const float* xv = x.data<float>();
  const float* wv = w.data<float>();
  float* yv = y.data<float>();
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t s = 0; s < ow; ++s) {
          float acc = 0.0f;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ih = r * a.stride_h - a.pad_t + i * a.dil_h, iw = s * a.stride_w - a.pad_l + j * a.dil_w;
                const int64_t ch = (o / mg) * cg + ci;
                const float xin = (ih < 0 || ih >= h || iw < 0 || iw >= wd) ? 0.0f : xv[((n * c + ch) * h + ih) * wd + iw];
                acc = std::fma(wv[((o * cg + ci) * kh + i) * kw + j], xin, acc);
              }
          if (bias) acc += bias->data<float>()[o];
          yv[((n * f + o) * oh + r) * ow + s] = acc;
        }
  return y;
}

class FloatGemmTest : public ::testing::Test {
 protected:
  void SetUp() override { exec::set_min_work_per_thread(1); }  // split even these small cases
  void TearDown() override {
    exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
    exec::set_threads(1);
    kernels::use_float_isa(kernels::best_float_isa());
  }

  // Output #0 under every instruction set and threads 1-4: all equal, bit for bit, to `expected`
  // (or to the first run when `expected` is null).
  void expect_all_equal(const std::string& op, const std::vector<Tensor>& inputs, Attrs attrs,
                        const Tensor* expected) {
    Tensor first;
    bool have_first = false;
    for (FloatIsa isa : {FloatIsa::kPortable, FloatIsa::kAvx2, FloatIsa::kAvx512}) {
      if (!kernels::float_isa_supported(isa)) continue;
      kernels::use_float_isa(isa);
      for (int t : {1, 2, 3, 4}) {
        exec::set_threads(t);
        NodeCase c;
        c.op = op;
        c.inputs = inputs;
        c.attrs = attrs;
        auto r = run_node(c);
        ASSERT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
        const Tensor& y = r.value()[0];
        const std::string where = std::string(kernels::float_isa_name(isa)) + ", threads " + std::to_string(t);
        if (expected) {
          EXPECT_TRUE(same_bits(y, *expected)) << op << " differs from the reference (" << where << ")";
        }
        if (!have_first) first = y, have_first = true;
        EXPECT_TRUE(same_bits(y, first)) << op << " differs from the first run (" << where << ")";
      }
    }
  }

  void expect_conv(Dims x_dims, Dims w_dims, bool with_bias, const Conv2d& a, uint32_t seed) {
    const Tensor x = random_f32(x_dims, seed), w = random_f32(w_dims, seed + 1), b = random_f32({w_dims[0]}, seed + 2);
    const Tensor ref = reference_conv(x, w, with_bias ? &b : nullptr, a);
    std::vector<Tensor> inputs = {x, w};
    if (with_bias) inputs.push_back(b);
    expect_all_equal("Conv", inputs,
                     [a](io::NodeBuilder& n) {
                       n.attr("group", a.group)
                           .attr("strides", std::vector<int64_t>{a.stride_h, a.stride_w})
                           .attr("dilations", std::vector<int64_t>{a.dil_h, a.dil_w})
                           .attr("pads", std::vector<int64_t>{a.pad_t, a.pad_l, a.pad_b, a.pad_r});
                     },
                     &ref);
  }
};

TEST_F(FloatGemmTest, PortableAlwaysAvailable) {
  EXPECT_TRUE(kernels::float_isa_supported(FloatIsa::kPortable));
  kernels::use_float_isa(FloatIsa::kPortable);
  EXPECT_EQ(kernels::current_float_isa(), FloatIsa::kPortable);
}

TEST_F(FloatGemmTest, MatMulOddShapesMatchTheFmaOrder) {
  struct Case {
    int64_t m, n, k;
  };
  // Sizes off every tile multiple, K = 1, N = 1, M = 1, K across several K blocks (256).
  for (const Case& c : {Case{1, 1, 1}, Case{7, 33, 1}, Case{13, 1, 97}, Case{1, 523, 301}, Case{67, 45, 131},
                        Case{9, 70, 600}, Case{17, 31, 257}}) {
    const Tensor a = random_f32({c.m, c.k}, 1), b = random_f32({c.k, c.n}, 2);
    const std::vector<float> ref = reference_matmul(c.m, c.n, c.k, a.data<float>(), b.data<float>());
    const Tensor expected = f32({c.m, c.n}, ref);
    expect_all_equal("MatMul", {a, b}, nullptr, &expected);
  }
}

TEST_F(FloatGemmTest, MatMulBatchBroadcast) {
  // A (2, 3, 5, 19) x B (3, 19, 37): B broadcasts over A's first batch dim.
  const Tensor a = random_f32({2, 3, 5, 19}, 3), b = random_f32({3, 19, 37}, 4);
  std::vector<float> ref;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const auto part = reference_matmul(5, 37, 19, a.data<float>() + (i * 3 + j) * 5 * 19, b.data<float>() + j * 19 * 37);
      ref.insert(ref.end(), part.begin(), part.end());
    }
  const Tensor expected = f32({2, 3, 5, 37}, ref);
  expect_all_equal("MatMul", {a, b}, nullptr, &expected);
}

TEST_F(FloatGemmTest, GemmTransposedBMatchesTheFmaOrder) {
  const int64_t m = 11, n = 45, k = 300;
  const Tensor a = random_f32({m, k}, 5), bt = random_f32({n, k}, 6);
  std::vector<float> b(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(p * n + j)] = bt.data<float>()[j * k + p];
  const Tensor expected = f32({m, n}, reference_matmul(m, n, k, a.data<float>(), b.data()));
  expect_all_equal("Gemm", {a, bt}, [](io::NodeBuilder& nb) { nb.attr("transB", 1); }, &expected);
}

TEST_F(FloatGemmTest, ConvGeneralPathStridesDilationsAsymmetricPads) {
  Conv2d a;
  a.stride_h = 2, a.stride_w = 3, a.dil_h = 2, a.dil_w = 1, a.pad_t = 3, a.pad_l = 0, a.pad_b = 1, a.pad_r = 2;
  expect_conv({2, 5, 23, 29}, {7, 5, 3, 4}, true, a, 10);
  Conv2d b;
  b.pad_t = 1, b.pad_l = 2, b.pad_b = 0, b.pad_r = 1, b.dil_w = 2;
  expect_conv({1, 3, 17, 70}, {9, 3, 3, 3}, false, b, 20);
}

TEST_F(FloatGemmTest, ConvManyChannelsCrossesKBlocks) {
  Conv2d a;
  a.pad_t = a.pad_l = a.pad_b = a.pad_r = 1;
  expect_conv({1, 40, 9, 37}, {13, 40, 3, 3}, true, a, 30);  // K = 360 > one 256-row block
}

TEST_F(FloatGemmTest, ConvFewFiltersAndManyFiltersAtUnitWidthStride) {
  Conv2d few;  // 3 filters: tiles over each output row's padded input rows, no im2col
  few.pad_t = 2, few.pad_l = 1, few.pad_b = 0, few.pad_r = 2, few.dil_w = 2, few.stride_h = 2;
  expect_conv({2, 5, 11, 40}, {3, 5, 3, 3}, true, few, 85);
  Conv2d grouped = few;  // 2 groups of 4 filters
  grouped.group = 2;
  expect_conv({1, 6, 9, 35}, {8, 3, 2, 4}, false, grouped, 86);
  Conv2d many;  // 40 filters: packed im2col panels
  many.pad_t = many.pad_l = many.pad_b = many.pad_r = 1;
  expect_conv({1, 4, 9, 37}, {40, 4, 3, 3}, true, many, 87);
}

TEST_F(FloatGemmTest, ConvGrouped) {
  Conv2d a;
  a.group = 3, a.pad_t = a.pad_b = 1, a.pad_l = 2, a.pad_r = 0;
  expect_conv({2, 6, 15, 19}, {9, 2, 3, 3}, true, a, 40);
}

TEST_F(FloatGemmTest, ConvPointwiseReadsInputInPlace) {
  expect_conv({2, 17, 11, 13}, {10, 17, 1, 1}, true, Conv2d(), 50);
  Conv2d strided;  // a strided 1x1 is not the in-place case
  strided.stride_h = strided.stride_w = 2;
  expect_conv({1, 4, 9, 9}, {3, 4, 1, 1}, false, strided, 55);
}

TEST_F(FloatGemmTest, ConvDepthwise) {
  Conv2d a;
  a.group = 8, a.pad_t = 1, a.pad_l = 2, a.pad_b = 2, a.pad_r = 0, a.dil_h = 2;
  expect_conv({2, 8, 14, 45}, {8, 1, 3, 3}, true, a, 60);
  Conv2d multiplier;  // two filters per channel
  multiplier.group = 5, multiplier.pad_t = multiplier.pad_b = multiplier.pad_l = multiplier.pad_r = 2;
  expect_conv({1, 5, 12, 33}, {10, 1, 5, 5}, false, multiplier, 70);
  Conv2d many;  // ten filters per channel: more than one tile of rows on every ISA
  many.group = 2, many.pad_t = many.pad_l = 1;
  expect_conv({2, 2, 6, 40}, {20, 1, 3, 2}, true, many, 75);
  Conv2d strided;  // stride 2 in width: the general path
  strided.group = 4, strided.stride_w = 2, strided.pad_l = strided.pad_r = 1;
  expect_conv({1, 4, 7, 21}, {4, 1, 3, 3}, true, strided, 80);
}

TEST_F(FloatGemmTest, ConvAutoPadEqualsExplicitPads) {
  const Tensor x = random_f32({1, 3, 10, 13}, 90), w = random_f32({4, 3, 4, 3}, 91);
  // SAME_UPPER with strides 2: out 5 x 7, total pads (5-1)*2+4-10 = 2 rows, (7-1)*2+3-13 = 2 columns,
  // split evenly; SAME_LOWER puts the odd one first.
  Conv2d upper;
  upper.stride_h = upper.stride_w = 2, upper.pad_t = upper.pad_b = 1, upper.pad_l = upper.pad_r = 1;
  const Tensor ref_upper = reference_conv(x, w, nullptr, upper);
  expect_all_equal("Conv", {x, w},
                   [](io::NodeBuilder& n) {
                     n.attr("auto_pad", std::string("SAME_UPPER")).attr("strides", std::vector<int64_t>{2, 2});
                   },
                   &ref_upper);
  const Tensor x2 = random_f32({1, 3, 9, 8}, 92);
  Conv2d lower;  // stride 1, kernel 4 x 3: pads 3 rows (2 top, 1 bottom) and 2 columns (1, 1)
  lower.pad_t = 2, lower.pad_b = 1, lower.pad_l = lower.pad_r = 1;
  const Tensor ref_lower = reference_conv(x2, w, nullptr, lower);
  expect_all_equal("Conv", {x2, w}, [](io::NodeBuilder& n) { n.attr("auto_pad", std::string("SAME_LOWER")); },
                   &ref_lower);
}

TEST_F(FloatGemmTest, Conv1dAnd3dAgreeAcrossThreadsAndIsas) {
  expect_all_equal("Conv", {random_f32({2, 3, 50}, 100), random_f32({5, 3, 4}, 101)},
                   [](io::NodeBuilder& n) {
                     n.attr("pads", std::vector<int64_t>{2, 1}).attr("strides", std::vector<int64_t>{2});
                   },
                   nullptr);
  expect_all_equal("Conv", {random_f32({1, 2, 6, 7, 9}, 102), random_f32({3, 2, 2, 3, 3}, 103)},
                   [](io::NodeBuilder& n) { n.attr("pads", std::vector<int64_t>{1, 0, 1, 0, 1, 1}); }, nullptr);
}

// The driver directly: accumulating into C, row strides wider than the product, and a C block smaller
// than one tile.
TEST_F(FloatGemmTest, CoreAccumulatesIntoStridedC) {
  const int64_t m = 10, n = 35, k = 270, lda = 281, ldb = 40, ldc = 37;
  const std::vector<float> a = random_values(m * lda, 110), b = random_values(k * ldb, 111);
  const std::vector<float> c0 = random_values(m * ldc, 112);
  std::vector<float> ref = c0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = ref[static_cast<size_t>(i * ldc + j)];
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[static_cast<size_t>(i * lda + p)], b[static_cast<size_t>(p * ldb + j)], acc);
      ref[static_cast<size_t>(i * ldc + j)] = acc;
    }
  for (FloatIsa isa : {FloatIsa::kPortable, FloatIsa::kAvx2, FloatIsa::kAvx512}) {
    if (!kernels::float_isa_supported(isa)) continue;
    kernels::use_float_isa(isa);
    for (int t : {1, 2, 3}) {
      exec::set_threads(t);
      std::vector<float> c = c0;
      kernels::gemm_accumulate<float, float>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
      EXPECT_EQ(std::memcmp(c.data(), ref.data(), c.size() * sizeof(float)), 0)
          << kernels::float_isa_name(isa) << ", threads " << t;
    }
  }
}

}  // namespace
}  // namespace qonnx::test
