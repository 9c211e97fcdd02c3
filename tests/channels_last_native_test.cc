// The channels_last kernels that work on channels-last data directly (Conv group 1 and depthwise,
// MaxPool) against the wrapped form - transpose to channels-first, default-domain kernel, transpose
// back - bit for bit, on generated shapes, every float instruction set and threads 1-4; and the
// blocked transpose against a plain loop on odd shapes and every element size.
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

#include "kernels/onnx/gemm_core.h"
#include "kernels/onnx/transpose.h"
#include "qonnx/exec/threads.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

using kernels::FloatIsa;
using Attrs = std::function<void(io::NodeBuilder&)>;
constexpr const char* kChannelsLast = "qonnx.custom_op.channels_last";

// Values whose products and sums round, so a different order or a plain multiply-add would show.
Tensor random_f32(Dims dims, uint32_t seed) {
  Tensor t(DType::kFloat, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// (N, d..., C) -> (N, C, d...) and back, by plain loops.
Tensor to_first(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  const int64_t c = d.back(), spatial = t.numel() / (d[0] * c);
  Tensor r(DType::kFloat, out);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t s = 0; s < spatial; ++s)
      for (int64_t k = 0; k < c; ++k) r.data<float>()[(n * c + k) * spatial + s] = t.data<float>()[(n * spatial + s) * c + k];
  return r;
}

Tensor to_last(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0]};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  const int64_t c = d[1], spatial = t.numel() / (d[0] * c);
  Tensor r(DType::kFloat, out);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = 0; s < spatial; ++s) r.data<float>()[(n * spatial + s) * c + k] = t.data<float>()[(n * c + k) * spatial + s];
  return r;
}

class ChannelsLastNative : public ::testing::Test {
 protected:
  void SetUp() override { exec::set_min_work_per_thread(1); }  // split even these small cases
  void TearDown() override {
    exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
    exec::set_threads(1);
    kernels::use_float_isa(kernels::best_float_isa());
  }

  // The channels_last node on (x, w[, b]) under every instruction set and threads 1-4 equals, bit for
  // bit, the default-domain op on the channels-first data (weights too, when `transpose_w`).
  void expect_wrapped_form(const std::string& op, const Tensor& x, const std::vector<Tensor>& params, bool transpose_w,
                           const Attrs& attrs) {
    std::vector<Tensor> first_inputs{to_first(x)};
    for (size_t i = 0; i < params.size(); ++i)
      first_inputs.push_back(i == 0 && transpose_w ? to_first(params[i]) : params[i]);
    std::vector<Tensor> last_inputs{x};
    last_inputs.insert(last_inputs.end(), params.begin(), params.end());
    kernels::use_float_isa(kernels::best_float_isa());
    exec::set_threads(1);
    auto want = run_node(NodeCase{op, "", 13, {}, first_inputs, attrs});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    const Tensor expected = to_last(want.value()[0]);
    for (FloatIsa isa : {FloatIsa::kPortable, FloatIsa::kAvx2, FloatIsa::kAvx512}) {
      if (!kernels::float_isa_supported(isa)) continue;
      kernels::use_float_isa(isa);
      for (int t : {1, 2, 3, 4}) {
        exec::set_threads(t);
        auto got = run_node(NodeCase{op, kChannelsLast, 13, {}, last_inputs, attrs});
        ASSERT_TRUE(got.is_ok()) << got.status().to_string();
        EXPECT_TRUE(got.value()[0].identical(expected))
            << op << " " << dims_to_string(x.dims()) << " isa " << kernels::float_isa_name(isa) << " threads " << t;
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
      // 1-D and 3-D
      {{2, 40, 3}, {4, 5, 3}, 1, {2, 1}, {3}, {1}, true},
      {{1, 4, 5, 6, 2}, {3, 2, 3, 2, 2}, 1, {1, 0, 1, 0, 1, 1}, {1, 2, 1}, {1, 1, 2}, true},
      // depthwise: channel counts around the 8-lane vectors, padding, stride, dilation
      {{1, 21, 13, 5}, {5, 3, 3, 1}, 5, {1, 1, 1, 1}, {1, 1}, {1, 1}, true},
      {{2, 10, 9, 11}, {11, 3, 3, 1}, 11, {2, 1, 0, 2}, {2, 1}, {2, 1}, false},
      {{1, 7, 6, 16}, {16, 5, 5, 1}, 16, {2, 2, 2, 2}, {1, 2}, {1, 1}, true},
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
                                                    {2, 7, 130}, {1, 64, 64}, {1, 129, 63}, {5, 8, 8}, {1, 300, 3}};
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

}  // namespace
}  // namespace qonnx::test
