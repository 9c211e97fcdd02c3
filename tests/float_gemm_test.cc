// The float GEMM / Conv paths (gemm_core.h): every output element is the documented fused
// multiply-add sequence, checked bit for bit against a plain loop; every instruction set, every
// thread count and every conv path (implicit GEMM, 1x1, depthwise, grouped, few filters, and the
// channels-last kernels against their transposing form) gives the same bits; and the blocked
// transpose against a plain loop on odd shapes and every element size.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/common/gemm_core.h"
#include "kernels/common/transpose.h"
#include "qonnx/exec/threads.h"
#include "support/simd_levels.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// The float family's instruction-set paths (kernels/isa).
using FloatIsa = kernels::isa::Isa;
bool float_isa_supported(FloatIsa i) {
  return kernels::isa::supports(kernels::isa::Family::kFloat, i, kernels::isa::cpu_features());
}
void use_float_isa(FloatIsa i) { kernels::isa::use(kernels::isa::Family::kFloat, i); }
FloatIsa best_float_isa() { return kernels::isa::best(kernels::isa::Family::kFloat); }
FloatIsa current_float_isa() { return kernels::isa::current(kernels::isa::Family::kFloat); }
const char* float_isa_name(FloatIsa i) { return kernels::isa::name(i); }
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
    use_float_isa(best_float_isa());
  }

  // Output #0 under every instruction set and threads 1-4: all equal, bit for bit, to `expected`
  // (or to the first run when `expected` is null).
  void expect_all_equal(const std::string& op, const std::vector<Tensor>& inputs, Attrs attrs,
                        const Tensor* expected) {
    Tensor first;
    bool have_first = false;
    for (FloatIsa isa : {FloatIsa::kPortable, FloatIsa::kAvx2, FloatIsa::kAvx512}) {
      if (!float_isa_supported(isa)) continue;
      use_float_isa(isa);
      for (int t : {1, 2, 3, 4}) {
        exec::set_threads(t);
        NodeCase c;
        c.op = op;
        c.inputs = inputs;
        c.attrs = attrs;
        auto r = run_node(c);
        ASSERT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
        const Tensor& y = r.value()[0];
        const std::string where = std::string(float_isa_name(isa)) + ", threads " + std::to_string(t);
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
  EXPECT_TRUE(float_isa_supported(FloatIsa::kPortable));
  use_float_isa(FloatIsa::kPortable);
  EXPECT_EQ(current_float_isa(), FloatIsa::kPortable);
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

// Unit strides on wide enough outputs run on the zero-padded input's grid (each im2col row a shifted run):
// dilated with asymmetric pads over a batch, and across K blocks.
TEST_F(FloatGemmTest, ConvUnitStrideOnThePaddedGrid) {
  Conv2d dilated;
  dilated.dil_h = 2, dilated.dil_w = 2, dilated.pad_t = 2, dilated.pad_l = 1, dilated.pad_b = 3, dilated.pad_r = 2;
  expect_conv({2, 6, 12, 60}, {10, 6, 3, 3}, true, dilated, 88);
  Conv2d same;
  same.pad_t = same.pad_l = same.pad_b = same.pad_r = 2;
  expect_conv({1, 30, 8, 70}, {33, 30, 5, 5}, false, same, 89);  // K = 750: three 256-row blocks
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
    if (!float_isa_supported(isa)) continue;
    use_float_isa(isa);
    for (int t : {1, 2, 3}) {
      exec::set_threads(t);
      std::vector<float> c = c0;
      kernels::gemm_accumulate<float, float>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
      EXPECT_EQ(std::memcmp(c.data(), ref.data(), c.size() * sizeof(float)), 0)
          << float_isa_name(isa) << ", threads " << t;
    }
  }
}

constexpr const char* kChannelsLast = "qonnx.custom_op.channels_last";

// The channels_last kernels that work on channels-last data directly (Conv group 1 and depthwise,
// MaxPool, BatchNormalization) against the wrapped form: transpose to channels-first, default-domain
// kernel, transpose back.
class ChannelsLastNative : public FloatGemmTest {
 protected:
  // The channels_last node on (x, w[, b]) under every instruction set and threads 1-4 equals, bit for
  // bit, the default-domain op on the channels-first data (weights too, when `transpose_w`).
  void expect_wrapped_form(const std::string& op, const Tensor& x, const std::vector<Tensor>& params, bool transpose_w,
                           const Attrs& attrs) {
    std::vector<Tensor> first_inputs{nhwc_to_nchw(x)};
    for (size_t i = 0; i < params.size(); ++i)
      first_inputs.push_back(i == 0 && transpose_w ? nhwc_to_nchw(params[i]) : params[i]);
    std::vector<Tensor> last_inputs{x};
    last_inputs.insert(last_inputs.end(), params.begin(), params.end());
    use_float_isa(best_float_isa());
    exec::set_threads(1);
    auto want = run_node(NodeCase{op, "", 13, {}, first_inputs, attrs});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    const Tensor expected = nchw_to_nhwc(want.value()[0]);
    for (FloatIsa isa : {FloatIsa::kPortable, FloatIsa::kAvx2, FloatIsa::kAvx512}) {
      if (!float_isa_supported(isa)) continue;
      use_float_isa(isa);
      for (int t : {1, 2, 3, 4}) {
        exec::set_threads(t);
        auto got = run_node(NodeCase{op, kChannelsLast, 13, {}, last_inputs, attrs});
        ASSERT_TRUE(got.is_ok()) << got.status().to_string();
        EXPECT_TRUE(got.value()[0].identical(expected))
            << op << " " << dims_to_string(x.dims()) << " isa " << float_isa_name(isa) << " threads " << t;
      }
    }
  }
};

struct ConvCase {
  Dims x;  // N, d..., C
  Dims w;  // M, k..., C / group
  int64_t group;
  Dims pads, strides, dilations;
  bool bias;
};

Attrs conv_attrs(const ConvCase& c) {
  return [c](io::NodeBuilder& n) {
    n.attr("kernel_shape", Dims(c.w.begin() + 1, c.w.end() - 1)).attr("group", c.group);
    n.attr("pads", c.pads).attr("strides", c.strides).attr("dilations", c.dilations);
  };
}

TEST_F(ChannelsLastNative, ConvEqualsTheWrappedForm) {
  const std::vector<ConvCase> cases = {
      // group 1: 3x3 with uneven pads, strides and dilations, more than one block of 256 positions
      {{1, 20, 17, 3}, {5, 3, 3, 3}, 1, {1, 0, 2, 1}, {1, 1}, {1, 1}, true},
      {{2, 9, 11, 4}, {7, 3, 2, 4}, 1, {1, 1, 0, 1}, {2, 1}, {1, 2}, false},
      // 1x1, and a 1x1 with a stride
      {{1, 19, 15, 6}, {9, 1, 1, 6}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}, true},
      {{1, 8, 8, 5}, {3, 1, 1, 5}, 1, {0, 0, 0, 0}, {2, 2}, {1, 1}, false},
      // 1x1 as one GEMM over all images: several column panels, K not a multiple of the tiles, 1-D
      {{2, 7, 9, 33}, {40, 1, 1, 33}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}, true},
      {{3, 50, 17}, {70, 1, 17}, 1, {0, 0}, {1}, {1}, false},
      // 1-D and 3-D
      {{2, 40, 3}, {4, 5, 3}, 1, {2, 1}, {3}, {1}, true},
      {{1, 4, 5, 6, 2}, {3, 2, 3, 2, 2}, 1, {1, 0, 1, 0, 1, 1}, {1, 2, 1}, {1, 1, 2}, true},
      // depthwise: channel counts around the 8-lane vectors, padding, stride, dilation
      {{1, 21, 13, 5}, {5, 3, 3, 1}, 5, {1, 1, 1, 1}, {1, 1}, {1, 1}, true},
      {{2, 10, 9, 11}, {11, 3, 3, 1}, 11, {2, 1, 0, 2}, {2, 1}, {2, 1}, false},
      {{1, 7, 6, 16}, {16, 5, 5, 1}, 16, {2, 2, 2, 2}, {1, 2}, {1, 1}, true},
      {{1, 6, 5, 77}, {77, 3, 3, 1}, 77, {1, 1, 1, 1}, {1, 1}, {1, 1}, true},  // 32-channel steps, then 8, then 5
      // grouped and channel-multiplier cases keep the transposing path
      {{1, 6, 5, 4}, {6, 3, 3, 2}, 2, {1, 1, 1, 1}, {1, 1}, {1, 1}, true},
      {{1, 6, 5, 3}, {6, 3, 3, 1}, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, true},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    std::vector<Tensor> params{random_f32(c.w, seed++)};
    if (c.bias) params.push_back(random_f32({c.w[0]}, seed++));
    expect_wrapped_form("Conv", random_f32(c.x, seed++), params, true, conv_attrs(c));
  }
}

TEST_F(ChannelsLastNative, MaxPoolEqualsTheWrappedForm) {
  struct PoolCase {
    Dims x, kernel, pads, strides, dilations;
    int64_t ceil_mode;
  };
  const std::vector<PoolCase> cases = {
      {{1, 9, 8, 5}, {2, 2}, {0, 0, 0, 0}, {2, 2}, {1, 1}, 0},
      {{2, 11, 7, 3}, {3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 1},
      {{1, 10, 10, 9}, {3, 2}, {0, 1, 2, 0}, {1, 3}, {2, 1}, 0},
      {{1, 30, 4}, {4}, {1, 2}, {3}, {1}, 1},
  };
  uint32_t seed = 100;
  for (const PoolCase& c : cases) {
    Tensor x = random_f32(c.x, seed++);
    // NaN (never greater, but kept when first), and both zeros (equal: the first one stays).
    float* v = x.data<float>();
    v[0] = std::numeric_limits<float>::quiet_NaN();
    v[7] = 0.0f;
    v[x.numel() / 2] = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i = 10; i < x.numel(); i += 13) v[i] = (i % 2) ? -0.0f : 0.0f;
    Attrs attrs = [c](io::NodeBuilder& n) {
      n.attr("kernel_shape", c.kernel).attr("pads", c.pads).attr("strides", c.strides);
      n.attr("dilations", c.dilations).attr("ceil_mode", c.ceil_mode);
    };
    expect_wrapped_form("MaxPool", x, {}, false, attrs);
  }
}

TEST_F(ChannelsLastNative, BatchNormalizationEqualsTheWrappedForm) {
  const Dims x{2, 5, 3, 7};
  std::vector<Tensor> params;
  for (uint32_t i = 0; i < 4; ++i) params.push_back(random_f32({7}, 200 + i));
  float* var = params[3].data<float>();
  for (int k = 0; k < 7; ++k) var[k] = std::fabs(var[k]);
  expect_wrapped_form("BatchNormalization", random_f32(x, 199), params, false,
                      [](io::NodeBuilder& n) { n.attr("epsilon", 1e-3f); });
}

// A plain copy loop: dst (outer, cols, rows) from src (outer, rows, cols).
std::vector<uint8_t> plain_transpose(const std::vector<uint8_t>& src, int64_t outer, int64_t rows, int64_t cols,
                                     size_t elem) {
  std::vector<uint8_t> dst(src.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(&dst[static_cast<size_t>((o * cols + j) * rows + i) * elem],
                    &src[static_cast<size_t>((o * rows + i) * cols + j) * elem], elem);
  return dst;
}

TEST_F(ChannelsLastNative, TransposeInnerOnOddShapesAndElementSizes) {
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1},  {1, 1, 9},   {2, 9, 1},   {1, 3, 5},   {3, 65, 7},
                                                    {2, 7, 130}, {1, 64, 64}, {1, 129, 63}, {5, 8, 8}, {1, 300, 3},
                                                    {1, 16, 16}, {2, 40, 1030}, {3, 33, 48}, {1, 150, 90},
                                                    {1, 8, 40},  {2, 15, 33}, {1, 2, 17}};
  std::mt19937 rng(7);
  for (size_t elem : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}, size_t{3}}) {
    for (const auto& s : shapes) {
      std::vector<uint8_t> src(static_cast<size_t>(s[0] * s[1] * s[2]) * elem);
      for (auto& b : src) b = static_cast<uint8_t>(rng());
      const std::vector<uint8_t> want = plain_transpose(src, s[0], s[1], s[2], elem);
      for (int t : {1, 2, 3, 4}) {
        exec::set_threads(t);
        std::vector<uint8_t> got(src.size(), 0xAB);
        kernels::transpose_inner(src.data(), got.data(), s[0], s[1], s[2], elem);
        EXPECT_EQ(got, want) << fmt::format("elem {} shape {}x{}x{} threads {}", elem, s[0], s[1], s[2], t);
      }
    }
  }
}

// rows_to_planes on every quantization path, written in place (small outputs) and past the caches (an
// output of kStreamingBytes or more): the same planes, for planes that start 32-byte aligned or not, strides
// that are whole 8-float groups or not, and blocks with partial tiles; nothing outside the block is touched.
TEST_F(ChannelsLastNative, RowsToPlanesStreamedOrNot) {
  struct Case {
    int64_t count, channels, stride, offset;
  };
  std::mt19937 rng(29);
  for (const Case c : {Case{64, 64, 3136, 0}, Case{64, 64, 3136, 8}, Case{64, 64, 3136, 3}, Case{61, 70, 200, 16},
                       Case{8, 8, 8, 0}, Case{13, 5, 21, 1}, Case{40, 24, 1000, 24}})
    for (kernels::isa::Isa level : test::simd_levels()) {
      test::ScopedSimdLevel scoped(level);
      std::vector<float> rows(static_cast<size_t>(c.count * c.channels));
      for (float& v : rows) v = static_cast<float>(rng() % 1000) - 500.0f;
      // 64-byte aligned storage (the tensor allocator's) with the planes `offset` floats in.
      const size_t floats = static_cast<size_t>(c.channels * c.stride + c.offset + 16);
      std::vector<float> storage(floats + 16);
      float* base = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) & ~uintptr_t{63});
      std::vector<float> want;
      for (int64_t bytes : {int64_t{0}, kernels::kStreamingBytes}) {
        std::fill(storage.begin(), storage.end(), -7.0f);
        kernels::rows_to_planes(rows.data(), c.count, c.channels, base + c.offset, c.stride, bytes);
        std::vector<float> got(base, base + floats);
        if (bytes == 0) {
          for (int64_t j = 0; j < c.channels; ++j)
            for (int64_t p = 0; p < c.stride; ++p)
              ASSERT_EQ(got[static_cast<size_t>(c.offset + j * c.stride + p)],
                        p < c.count ? rows[static_cast<size_t>(p * c.channels + j)] : -7.0f)
                  << fmt::format("{} channel {} position {}", kernels::isa::name(level), j, p);
          want = got;
        } else {
          EXPECT_EQ(got, want) << fmt::format("{}: {} x {} stride {} offset {} streamed", kernels::isa::name(level),
                                              c.count, c.channels, c.stride, c.offset);
        }
      }
    }
}

// Every permutation of an odd-shaped rank-4 tensor (the two-block swaps take transpose_inner, the
// rest the element-by-element path) against index arithmetic, for 1-, 4- and 8-byte elements.
TEST_F(ChannelsLastNative, TransposeOpEveryPermutationOfAnOddShape) {
  const Dims dims{3, 5, 2, 7};
  std::vector<int64_t> perm{0, 1, 2, 3};
  const int64_t n = 3 * 5 * 2 * 7;
  for (DType dtype : {DType::kUInt8, DType::kFloat, DType::kInt64}) {
    Tensor x(dtype, dims);
    const size_t elem = dtype_size(dtype);
    for (int64_t i = 0; i < n; ++i)
      for (size_t b = 0; b < elem; ++b) static_cast<uint8_t*>(x.raw())[static_cast<size_t>(i) * elem + b] = static_cast<uint8_t>(i * 7 + b);
    do {
      exec::set_threads(2);
      auto r = run_node(NodeCase{"Transpose", "", 13, {}, {x}, [&](io::NodeBuilder& nb) { nb.attr("perm", perm); }});
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      const Tensor& y = r.value()[0];
      Dims want_dims(4);
      for (size_t a = 0; a < 4; ++a) want_dims[a] = dims[static_cast<size_t>(perm[a])];
      ASSERT_EQ(y.dims(), want_dims);
      std::vector<int64_t> o(4, 0);
      for (int64_t flat = 0; flat < n; ++flat) {
        std::vector<int64_t> in(4);  // the input index of output index o
        for (size_t a = 0; a < 4; ++a) in[static_cast<size_t>(perm[a])] = o[a];
        const int64_t src = ((in[0] * dims[1] + in[1]) * dims[2] + in[2]) * dims[3] + in[3];
        ASSERT_EQ(std::memcmp(static_cast<const uint8_t*>(y.raw()) + flat * static_cast<int64_t>(elem),
                              static_cast<const uint8_t*>(x.raw()) + src * static_cast<int64_t>(elem), elem), 0)
            << dtype_name(dtype) << " perm " << dims_to_string(perm) << " at " << flat;
        for (size_t a = 4; a-- > 0;) {
          if (++o[a] < want_dims[a]) break;
          o[a] = 0;
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

}  // namespace
}  // namespace qonnx::test
