// MultiThreshold, FloatQuant and the channels_last wrappers against qonnx's reference semantics
// (SEMANTICS.md section 1).
#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kGeneral = "qonnx.custom_op.general";
const char* kChannelsLast = "qonnx.custom_op.channels_last";
const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------- MultiThreshold

struct ThresholdAttrs {
  std::string layout;  // "" = attribute absent
  float scale = 1.0f;
  float bias = 0.0f;
  bool with_out_dtype = true;
};

Result<std::vector<Tensor>> multithreshold(const Tensor& v, const Tensor& thr, const ThresholdAttrs& a = {},
                                           const std::string& domain = kGeneral) {
  NodeCase c;
  c.op = "MultiThreshold";
  c.domain = domain;
  c.inputs = {v, thr};
  c.attrs = [=](io::NodeBuilder& n) {
    if (a.with_out_dtype) n.attr("out_dtype", "UINT2");
    if (!a.layout.empty()) n.attr("data_layout", a.layout);
    if (a.scale != 1.0f) n.attr("out_scale", a.scale);
    if (a.bias != 0.0f) n.attr("out_bias", a.bias);
  };
  return run_node(c);
}

std::vector<float> mt_values(const Tensor& v, const Tensor& thr, const ThresholdAttrs& a = {},
                             const std::string& domain = kGeneral) {
  auto r = multithreshold(v, thr, a, domain);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return {};
  EXPECT_EQ(r.value()[0].dims(), v.dims());
  return values_f32(r.value()[0]);
}

TEST(MultiThresholdKernel, PerChannelNchwCountsGreaterOrEqual) {
  // v (1, 2, 3): channel 0 thresholds {0, 1, 2}, channel 1 {10, 20, 30}; equality counts.
  Tensor v = f32({1, 2, 3}, {-1.0f, 1.0f, 2.5f, 10.0f, 19.9f, 30.0f});
  Tensor thr = f32({2, 3}, {0.0f, 1.0f, 2.0f, 10.0f, 20.0f, 30.0f});
  EXPECT_EQ(mt_values(v, thr), (std::vector<float>{0, 2, 3, 1, 1, 3}));
}

TEST(MultiThresholdKernel, ChannelsLastLayout) {
  // (1, 3, 2) NHWC-like: channels on the last axis.
  Tensor v = f32({1, 3, 2}, {0.5f, 15.0f, 1.0f, 25.0f, 3.0f, 5.0f});
  Tensor thr = f32({2, 2}, {1.0f, 2.0f, 10.0f, 20.0f});
  ThresholdAttrs a;
  a.layout = "NHWC";
  EXPECT_EQ(mt_values(v, thr, a), (std::vector<float>{0, 1, 1, 2, 2, 0}));
}

TEST(MultiThresholdKernel, TwoDimensionalInputHasChannelsOnAxisOne) {
  Tensor v = f32({2, 2}, {0.5f, 15.0f, 3.0f, 5.0f});
  Tensor thr = f32({2, 2}, {1.0f, 2.0f, 10.0f, 20.0f});
  const std::vector<float> expected = {0, 1, 2, 0};
  EXPECT_EQ(mt_values(v, thr), expected);  // default NCHW: axis 1
  ThresholdAttrs nc;
  nc.layout = "NC";
  EXPECT_EQ(mt_values(v, thr, nc), expected);  // NC ends in C: last axis, the same one
}

TEST(MultiThresholdKernel, GlobalThresholdsScaleAndBias) {
  // Bipolar-style output: 2 * count - 1.
  Tensor v = f32({1, 3, 1, 1}, {-0.5f, 0.0f, 7.0f});
  Tensor thr = f32({1, 1}, {0.0f});
  ThresholdAttrs a;
  a.scale = 2.0f;
  a.bias = -1.0f;
  EXPECT_EQ(mt_values(v, thr, a), (std::vector<float>{-1, 1, 1}));
}

TEST(MultiThresholdKernel, NanCountsNothing) {
  Tensor v = f32({1, 1, 2}, {kNan, 5.0f});
  Tensor thr = f32({1, 2}, {0.0f, kNan});
  EXPECT_EQ(mt_values(v, thr), (std::vector<float>{0, 1}));
}

TEST(MultiThresholdKernel, EveryDomainSpelling) {
  Tensor v = f32({1, 1, 2}, {0.0f, 5.0f});
  Tensor thr = f32({1, 2}, {1.0f, 2.0f});
  for (const char* d : {"qonnx.custom_op.general", "finn.custom_op.general", "finn"})
    EXPECT_EQ(mt_values(v, thr, {}, d), (std::vector<float>{0, 2})) << d;
}

TEST(MultiThresholdKernel, DoubleInputStaysDouble) {
  Tensor v = make<double>(DType::kDouble, {1, 1, 2}, {1.0000000001, 0.9999999999});
  Tensor thr = make<double>(DType::kDouble, {1, 1}, {1.0});
  auto r = multithreshold(v, thr);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r.value()[0].dtype(), DType::kDouble);
  EXPECT_EQ(r.value()[0].data<double>()[0], 1.0);
  EXPECT_EQ(r.value()[0].data<double>()[1], 0.0);
}

TEST(MultiThresholdKernel, Errors) {
  Tensor v = f32({1, 2, 2}, {0, 1, 2, 3});
  ThresholdAttrs no_dtype;
  no_dtype.with_out_dtype = false;
  auto r = multithreshold(v, f32({2, 1}, {0, 0}), no_dtype);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("out_dtype"), std::string::npos) << r.status().to_string();

  r = multithreshold(v, f32({3, 1}, {0, 0, 0}));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel);
  EXPECT_NE(r.status().to_string().find("3 rows"), std::string::npos) << r.status().to_string();

  r = multithreshold(v, f32({2}, {0, 0}));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("(C, T)"), std::string::npos) << r.status().to_string();

  r = multithreshold(f32({2}, {0, 1}), f32({2, 1}, {0, 0}));  // NCHW needs rank >= 2
  EXPECT_EQ(r.status().code(), Code::kInvalidModel) << r.status().to_string();

  r = multithreshold(i64({1, 2}, {0, 1}), f32({2, 1}, {0, 0}));
  EXPECT_EQ(r.status().code(), Code::kUnsupported) << r.status().to_string();
}

TEST(MultiThresholdKernel, ZeroSizeInput) {
  auto r = multithreshold(f32({0, 2, 3}, {}), f32({2, 1}, {0, 0}));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dims(), (Dims{0, 2, 3}));
}

// ---------------------------------------------------------------- FloatQuant

struct Minifloat {
  float exponent_bits;
  float mantissa_bits;
  float bias;
  float max_val;
};
const Minifloat kE4M3{4, 3, 7, 448};  // OCP FP8 E4M3 (Brevitas Fp8e4m3OCP)

struct FloatQuantAttrs {
  std::string rounding = "ROUND";
  int saturation = 1;
  int has_inf = 0;
  int has_nan = 0;
};

Result<std::vector<Tensor>> float_quant(const Tensor& x, const Tensor& scale, const Minifloat& f,
                                        const FloatQuantAttrs& a = {}, const std::string& domain = "onnx.brevitas") {
  NodeCase c;
  c.op = "FloatQuant";
  c.domain = domain;
  c.inputs = {x, scale, f32s(f.exponent_bits), f32s(f.mantissa_bits), f32s(f.bias), f32s(f.max_val)};
  c.attrs = [=](io::NodeBuilder& n) {
    n.attr("rounding_mode", a.rounding)
        .attr("saturation", a.saturation)
        .attr("has_inf", a.has_inf)
        .attr("has_nan", a.has_nan)
        .attr("has_subnormal", 1);
  };
  return run_node(c);
}

std::vector<float> fq_values(const std::vector<float>& x, const Minifloat& f, const FloatQuantAttrs& a = {},
                             float scale = 1.0f) {
  auto r = float_quant(f32({static_cast<int64_t>(x.size())}, x), f32s(scale), f, a);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? values_f32(r.value()[0]) : std::vector<float>{};
}

TEST(FloatQuantKernel, QonnxReferenceCases) {
  // qonnx's tests/custom_op/test_floatquant.py, with the default bias 2^(e-1)-1 and max value.
  EXPECT_EQ(fq_values({1.5f, 3.25f, 8.0f, 0.0f}, {2, 3, 1, 7.5f}), (std::vector<float>{1.5f, 3.25f, 7.5f, 0.0f}));
  EXPECT_EQ(fq_values({28.2f}, {3, 2, 3, 28.0f}), std::vector<float>{28.0f});
  EXPECT_EQ(fq_values({6.1f}, {2, 1, 1, 6.0f}), std::vector<float>{6.0f});
}

TEST(FloatQuantKernel, E4M3NormalsSubnormalsAndSaturation) {
  // 0.3: exponent -2, step 2^-5, 9.6 steps -> 10 -> 0.3125. 0.001 is below the smallest normal:
  // step 2^-9, 0.512 steps -> 1. Ties go to even: 1.0625 = 8.5 steps of 1/8 -> 1.0, 1.1875 -> 1.25.
  EXPECT_EQ(fq_values({0.3f, -0.3f, 0.001f, 1.0625f, 1.1875f, 500.0f, -1000.0f, 448.0f}, kE4M3),
            (std::vector<float>{0.3125f, -0.3125f, 0.001953125f, 1.0f, 1.25f, 448.0f, -448.0f, 448.0f}));
}

TEST(FloatQuantKernel, ScaleDividesThenMultiplies) {
  EXPECT_EQ(fq_values({0.6f, 2000.0f}, kE4M3, {}, 2.0f), (std::vector<float>{0.625f, 896.0f}));
}

TEST(FloatQuantKernel, PerChannelScaleBroadcasts) {
  // Row 1: 0.3 / 3 = 0.1 -> 12.8 steps of 2^-7 -> 13/128 -> times 3.
  auto r = float_quant(f32({2, 2}, {0.3f, 0.3f, 0.3f, 0.3f}), f32({2, 1}, {1.0f, 3.0f}), kE4M3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0.3125f, 0.3125f, 0.3046875f, 0.3046875f}));
}

TEST(FloatQuantKernel, RoundingModes) {
  FloatQuantAttrs floor;
  floor.rounding = "FLOOR";
  EXPECT_EQ(fq_values({0.3f, -0.3f}, kE4M3, floor), (std::vector<float>{0.28125f, -0.3125f}));
  FloatQuantAttrs ceil;
  ceil.rounding = "ceil";
  EXPECT_EQ(fq_values({0.3f, -0.3f}, kE4M3, ceil), (std::vector<float>{0.3125f, -0.28125f}));
}

TEST(FloatQuantKernel, NonSaturatingOverflow) {
  FloatQuantAttrs inf;
  inf.saturation = 0;
  inf.has_inf = 1;
  EXPECT_EQ(fq_values({500.0f, -500.0f, 1.0f}, kE4M3, inf), (std::vector<float>{kInf, -kInf, 1.0f}));
  FloatQuantAttrs nan;
  nan.saturation = 0;
  nan.has_nan = 1;
  auto v = fq_values({500.0f, -500.0f, 1.0f}, kE4M3, nan);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 1.0f);
  FloatQuantAttrs neither;
  neither.saturation = 0;
  auto r = float_quant(f32({1}, {1.0f}), f32s(1.0f), kE4M3, neither);
  EXPECT_EQ(r.status().code(), Code::kInvalidModel) << r.status().to_string();
}

TEST(FloatQuantKernel, NanAndInfinityBecomeNan) {
  // As in qonnx and Brevitas: inf / 2^inf is NaN, so an infinite input gives NaN even when saturating.
  auto v = fq_values({kNan, kInf, -kInf}, kE4M3);
  ASSERT_EQ(v.size(), 3u);
  for (float y : v) EXPECT_TRUE(std::isnan(y));
}

TEST(FloatQuantKernel, DomainsAndErrors) {
  for (const char* d : {"onnx.brevitas", "qonnx.custom_op.general", "finn.custom_op.general"}) {
    auto r = float_quant(f32({1}, {0.3f}), f32s(1.0f), kE4M3, {}, d);
    EXPECT_TRUE(r.is_ok()) << d << ": " << r.status().to_string();
  }
  auto r = float_quant(f32({1}, {0.3f}), f32s(1.0f), {4, 2.5f, 7, 448});
  EXPECT_NE(r.status().to_string().find("mantissa_bitwidth must be a non-negative integer"), std::string::npos)
      << r.status().to_string();
  r = float_quant(f32({1}, {0.3f}), f32s(1.0f), {0, 3, 7, 448});
  EXPECT_NE(r.status().to_string().find("exponent_bitwidth"), std::string::npos) << r.status().to_string();
  r = float_quant(f32({1}, {0.3f}), f32s(0.0f), kE4M3);
  EXPECT_NE(r.status().to_string().find("scale"), std::string::npos) << r.status().to_string();
  r = float_quant(f32({3}, {0.3f, 1, 2}), f32({2}, {1.0f, 1.0f}), kE4M3);
  EXPECT_NE(r.status().to_string().find("broadcast"), std::string::npos) << r.status().to_string();
  FloatQuantAttrs bad;
  bad.rounding = "NEAREST";
  r = float_quant(f32({1}, {0.3f}), f32s(1.0f), kE4M3, bad);
  EXPECT_EQ(r.status().code(), Code::kUnsupported) << r.status().to_string();
}

// The Brevitas export with its golden output: FloatQuant (input and weights, FP8 E4M3) -> Gemm.
TEST(FloatQuantKernel, BrevitasGoldenModel) {
  const std::filesystem::path dir = std::filesystem::path(QONNX_SHARED_MODELS) / "qonnx" / "floatquant_exec";
  if (!std::filesystem::exists(dir / "qonnx_act_weight_fp8.onnx"))
    GTEST_SKIP() << "no FloatQuant golden model under " << dir.string() << " (../shared absent)";
  auto model = io::load_model(dir / "qonnx_act_weight_fp8.onnx");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto input = io::read_tensor_file(dir / "test_data" / "input.npy");
  auto expected = io::read_tensor_file(dir / "test_data" / "output.npy");
  ASSERT_TRUE(input.is_ok()) << input.status().to_string();
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  auto ex = exec::Executor::create(model.value());
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  auto run = ex.value().run({{"x.1", input.value().tensor}});
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  const Tensor& y = run.value().outputs[0];
  const Tensor& want = expected.value().tensor;
  ASSERT_EQ(y.dims(), want.dims());
  ASSERT_EQ(want.dtype(), DType::kFloat);
  // The quantized operands are exact; only the Gemm's float32 sum order may differ from torch.
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float a = y.data<float>()[i], b = want.data<float>()[i];
    EXPECT_NEAR(a, b, 1e-6f * std::max(1.0f, std::fabs(b))) << "element " << i;
  }
}

// ---------------------------------------------------------------- channels_last

Tensor iota(Dims dims, float start, float step) {
  Tensor t(DType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 17);
  return t;
}

std::function<void(io::NodeBuilder&)> conv_attrs(Dims kernel, Dims pads, Dims strides, int64_t group) {
  return [=](io::NodeBuilder& n) {
    n.attr("kernel_shape", kernel).attr("pads", pads).attr("strides", strides).attr("dilations", Dims{1, 1});
    n.attr("group", group);
  };
}

TEST(ChannelsLastKernel, PointwiseConvByHand) {
  // NHWC (1, 1, 2, 2), weights (M=1, 1, 1, C=2) = {1, 10}: y = x_c0 + 10 * x_c1, plus bias 0.5.
  NodeCase c;
  c.op = "Conv";
  c.domain = kChannelsLast;
  c.inputs = {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1, 2}, {1, 10}), f32({1}, {0.5f})};
  c.attrs = conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dims(), (Dims{1, 1, 2, 1}));
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{21.5f, 43.5f}));
}

TEST(ChannelsLastKernel, ConvMatchesDefaultConvOnTransposedData) {
  // Grouped, strided, padded 3x3 conv: channels_last(x, w) == nhwc(Conv(nchw(x), nchw(w))).
  Tensor x = iota({2, 5, 6, 4}, -1.0f, 0.125f);  // N H W C
  Tensor w = iota({6, 3, 3, 2}, -0.5f, 0.0625f);  // M kH kW C/group, group 2
  Tensor b = f32({6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  auto attrs = conv_attrs({3, 3}, {1, 0, 1, 2}, {2, 1}, 2);
  NodeCase cl{"Conv", kChannelsLast, 13, {}, {x, w, b}, attrs};
  NodeCase ref{"Conv", "", 13, {}, {nhwc_to_nchw(x), nhwc_to_nchw(w), b}, attrs};
  auto got = run_node(cl);
  auto want = run_node(ref);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_TRUE(got.value()[0].identical(nchw_to_nhwc(want.value()[0])));
}

TEST(ChannelsLastKernel, MaxPoolByHand) {
  // NHWC (1, 2, 2, 2): channel 0 = {1, 5, 3, 2}, channel 1 = {-1, -5, -3, -2}.
  NodeCase c;
  c.op = "MaxPool";
  c.domain = kChannelsLast;
  c.inputs = {f32({1, 2, 2, 2}, {1, -1, 5, -5, 3, -3, 2, -2})};
  c.attrs = [](io::NodeBuilder& n) {
    n.attr("kernel_shape", Dims{2, 2}).attr("pads", Dims{0, 0, 0, 0}).attr("strides", Dims{2, 2});
  };
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dims(), (Dims{1, 1, 1, 2}));
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{5, -1}));
}

TEST(ChannelsLastKernel, BatchNormalizationOnLastAxis) {
  // NHWC (1, 1, 2, 2): y = (x - mean) / sqrt(var + eps) * scale + B per channel (eps 0 for exact values).
  NodeCase c;
  c.op = "BatchNormalization";
  c.domain = kChannelsLast;
  c.inputs = {f32({1, 1, 2, 2}, {1, 10, 3, 30}), f32({2}, {2, 1}), f32({2}, {0, 100}), f32({2}, {1, 10}),
              f32({2}, {4, 100})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("epsilon", 0.0f).attr("momentum", 0.9f); };
  // Without an import the domain is version 1 (run as opset 7: inference, not BN-1's training default).
  for (int64_t version : {0, 9, 14}) {
    c.imports.clear();
    if (version > 0) c.imports.push_back({kChannelsLast, version});
    auto r = run_node(c);
    ASSERT_TRUE(r.is_ok()) << version << ": " << r.status().to_string();
    EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0, 100, 2, 102})) << version;
  }
}

TEST(ChannelsLastKernel, Errors) {
  NodeCase c;
  c.op = "Conv";
  c.domain = kChannelsLast;
  c.inputs = {f32({1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1, 2}, {1, 10})};  // weight rank != X rank
  c.attrs = conv_attrs({1}, {0, 0}, {1}, 1);
  auto r = run_node(c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel) << r.status().to_string();

  c.inputs = {f32({4}, {1, 2, 3, 4}), f32({1, 1, 1, 2}, {1, 10})};
  r = run_node(c);
  EXPECT_EQ(r.status().code(), Code::kInvalidModel) << r.status().to_string();

  NodeCase pool;
  pool.op = "MaxPool";
  pool.domain = kChannelsLast;
  pool.inputs = {f32({1, 2, 2, 1}, {1, 2, 3, 4})};
  pool.num_outputs = 2;
  pool.attrs = [](io::NodeBuilder& n) { n.attr("kernel_shape", Dims{2, 2}); };
  r = run_node(pool);
  EXPECT_EQ(r.status().code(), Code::kUnsupported) << r.status().to_string();
}

}  // namespace
}  // namespace qonnx::test
