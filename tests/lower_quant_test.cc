// lower-quant{target=qdq}: every lowered form is bit-exact against the Quant kernel, on inputs
// full of ties, bounds, NaN and infinities.
#include <cmath>

#include <gtest/gtest.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/targets/target.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/pass/pass.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kQ = "qonnx.custom_op.general";

struct QuantCase {
  int bits = 8;
  int is_signed = 1;
  int narrow = 0;
  bool per_channel = false;
  float zeropt = 0;
  std::string mode = "ROUND";
  bool weight = false;  // X is an initializer
};

// x[2,3,4] (channels on axis 1) -> Quant -> y.
io::ModelBuilder quant_model(const QuantCase& c, const Tensor& x) {
  io::ModelBuilder b(11);  // below 13: the pipeline must raise it
  b.import(kQ, 1);
  if (!c.weight) b.input("x", DType::kFloat, {2, 3, 4});
  else b.initializer("x", x);
  b.output("y", DType::kFloat, {2, 3, 4});
  if (c.per_channel) b.initializer("s", f32({1, 3, 1}, {0.5f, 0.25f, 0.125f}));
  else b.initializer("s", f32s(0.25f));
  b.initializer("z", f32s(c.zeropt)).initializer("bw", f32s(static_cast<float>(c.bits)));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ)
      .attr("signed", c.is_signed).attr("narrow", c.narrow).attr("rounding_mode", c.mode);
  return b;
}

// 24 values: exact ties (k + 0.5) * s for the smallest scale, bounds, -0, +-inf. No NaN: an integer
// QuantizeLinear has no NaN code, so NaN activations are the one documented exception of the QDQ forms.
Tensor tie_rich_input() {
  std::vector<float> v;
  for (int k = -6; k <= 5; ++k) v.push_back((static_cast<float>(k) + 0.5f) * 0.125f);
  for (float extra : {-0.0f, 1000.0f, -1000.0f, 0.49999997f, -0.49999997f, 31.75f, -32.25f, 0.0625f, 2.5f, -2.5f,
                      INFINITY, -INFINITY})
    v.push_back(extra);
  return f32({2, 3, 4}, v);
}

void expect_bit_exact(const QuantCase& c, const std::string& expected_form, const std::string& target = "qdq") {
  Tensor x = tie_rich_input();
  auto original = quant_model(c, x).build().value();
  auto lowered = quant_model(c, x).build().value();
  auto pipeline = pass::parse_pipeline(targets::pipeline_text(target).value());
  ASSERT_TRUE(pipeline.is_ok());
  pass::PassContext ctx;
  auto r = pass::run_pipeline(lowered, pipeline.value(), ctx);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find(expected_form), std::string::npos)
      << "got form: " << passes::quantizer_outcomes(ctx)[0].detail;
  for (const auto& n : lowered.graph().nodes()) EXPECT_NE(n->op_type(), "Quant");
  std::map<std::string, Tensor> feeds;
  if (!c.weight) feeds["x"] = x;
  auto a = exec::Executor::create(original).value().run(feeds);
  auto b = exec::Executor::create(lowered).value().run(feeds);
  ASSERT_TRUE(a.is_ok() && b.is_ok()) << (a.is_ok() ? b.status().to_string() : a.status().to_string());
  const Tensor& ya = a->outputs[0];
  const Tensor& yb = b->outputs[0];
  ASSERT_EQ(ya.dims(), yb.dims());
  for (int64_t i = 0; i < ya.numel(); ++i) {
    float p = ya.data<float>()[i], q = yb.data<float>()[i];
    EXPECT_TRUE((std::isnan(p) && std::isnan(q)) || p == q)
        << "bits " << c.bits << " signed " << c.is_signed << " narrow " << c.narrow << " mode " << c.mode << " zp "
        << c.zeropt << " element " << i << " x=" << x.data<float>()[i] << ": " << p << " vs " << q;
  }
}

TEST(LowerQuant, RoundWithZeroPointIsQcdqForEveryWidthSignAndNarrow) {
  for (int bits = 2; bits <= 8; ++bits)
    for (int is_signed : {0, 1})
      for (int narrow : {0, 1})
        for (bool per_channel : {false, true}) {
          QuantCase c;
          c.bits = bits;
          c.is_signed = is_signed;
          c.narrow = narrow;
          c.per_channel = per_channel;
          bool clip = narrow || bits < 8;
          expect_bit_exact(c, clip ? "QuantizeLinear -> Clip -> DequantizeLinear" : "QuantizeLinear -> DequantizeLinear");
        }
}

TEST(LowerQuant, FloorAndCeilUseScaleOneQuantizeLinear) {
  for (const char* mode : {"FLOOR", "CEIL"})
    for (bool per_channel : {false, true}) {
      QuantCase c;
      c.mode = mode;
      c.bits = 4;
      c.per_channel = per_channel;
      expect_bit_exact(c, std::string("Div -> ") + (c.mode == "FLOOR" ? "Floor" : "Ceil"));
    }
}

TEST(LowerQuant, OtherModesAndZeroPointsUseExactFloatOps) {
  for (const char* mode : {"ROUND", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"})
    for (float zp : {0.0f, 1.0f, 2.0f, 3.0f, 0.5f, -2.0f}) {
      QuantCase c;
      c.mode = mode;
      c.zeropt = zp;
      c.bits = 5;
      c.is_signed = zp < 0 ? 1 : 0;
      bool qdq = zp == 0 && (c.mode == "ROUND" || c.mode == "CEIL" || c.mode == "FLOOR");
      expect_bit_exact(c, qdq ? "DequantizeLinear" : "exact float emulation");
    }
}

TEST(LowerQuant, FloatFormsKeepNaN) {
  QuantCase c;
  c.mode = "HALF_UP";
  c.zeropt = 1;
  Tensor x = tie_rich_input();
  x = x.clone();
  x.data<float>()[5] = std::nanf("");
  auto lowered = quant_model(c, x).build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(pass::run_pipeline(lowered, pass::parse_pipeline(targets::pipeline_text("qdq").value()).value(), ctx).is_ok());
  auto r = exec::Executor::create(lowered).value().run({{"x", x}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(std::isnan(r->outputs[0].data<float>()[5]));
}

TEST(LowerQuant, BipolarAndWideQuantizersUseFloatOps) {
  QuantCase bipolar;
  bipolar.bits = 1;
  expect_bit_exact(bipolar, "exact float emulation");
  QuantCase wide;
  wide.bits = 12;
  expect_bit_exact(wide, "exact float emulation");
}

TEST(LowerQuant, WeightsBecomeIntegerInitializersForEveryMode) {
  for (const char* mode : {"ROUND", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN"})
    for (float zp : {0.0f, 3.0f}) {
      QuantCase c;
      c.weight = true;
      c.mode = mode;
      c.zeropt = zp;
      c.is_signed = zp == 0;
      c.per_channel = true;
      expect_bit_exact(c, "integer initializer");
    }
  QuantCase wide;
  wide.weight = true;
  wide.bits = 16;
  expect_bit_exact(wide, "integer initializer (int32)");
  QuantCase fractional_zp;
  fractional_zp.weight = true;
  fractional_zp.zeropt = 0.5f;
  fractional_zp.is_signed = 0;
  expect_bit_exact(fractional_zp, "float initializer");
}

// An 8-bit zero point outside int8 (uint8) cannot be stored beside 8-bit codes: the weights take a
// wider integer type at opset 21, else stay float; never a saturated zero point.
TEST(LowerQuant, WeightZeroPointOutsideTheStorageTypeIsNotSaturated) {
  for (auto [is_signed, zp] : {std::pair{1, 130.0f}, std::pair{1, -200.0f}, std::pair{0, -3.0f}, std::pair{0, 300.0f}}) {
    QuantCase c;
    c.weight = true;
    c.is_signed = is_signed;
    c.zeropt = zp;
    expect_bit_exact(c, "float initializer");
  }
}

TEST(LowerQuant, ActivationZeroPointOutsideTheStorageTypeStaysFloatEvenWhenApproximate) {
  QuantCase c;
  c.zeropt = 130.0f;
  Tensor x = tie_rich_input();
  auto lowered = quant_model(c, x).build().value();
  auto pipeline = pass::parse_pipeline("upgrade-opset,lower-quant{allow-approximate=1}");
  ASSERT_TRUE(pipeline.is_ok()) << pipeline.status().to_string();
  pass::PassContext ctx;
  ASSERT_TRUE(pass::run_pipeline(lowered, pipeline.value(), ctx).is_ok());
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find("exact float emulation"), std::string::npos)
      << passes::quantizer_outcomes(ctx)[0].detail;
}

TEST(LowerQuant, NgraphTargetCoversEveryModeWithZeroZeroPoint) {
  const std::pair<const char*, const char*> modes[] = {
      {"ROUND", "ROUND_NEAREST_TOWARD_EVEN"}, {"CEIL", "ROUND_UP"},          {"FLOOR", "ROUND_DOWN"},
      {"UP", "ROUND_TOWARD_INFINITY"},        {"DOWN", "ROUND_TOWARD_ZERO"}, {"HALF_UP", "ROUND_NEAREST_TOWARD_INFINITY"},
      {"HALF_DOWN", "ROUND_NEAREST_TOWARD_ZERO"}};
  for (const auto& [mode, ngraph_mode] : modes)
    for (int bits : {3, 8})
      for (bool per_channel : {false, true}) {
        QuantCase c;
        c.mode = mode;
        c.bits = bits;
        c.per_channel = per_channel;
        expect_bit_exact(c, std::string("Quantize(") + ngraph_mode + ")", "ngraph");
      }
  QuantCase zp;
  zp.zeropt = 2;
  zp.is_signed = 0;
  expect_bit_exact(zp, "exact float emulation", "ngraph");
  QuantCase weight;
  weight.weight = true;
  weight.per_channel = true;
  expect_bit_exact(weight, "integer initializer (int8) + Dequantize (axis 1)", "ngraph");
}

TEST(LowerQuant, NonConstantParametersAreLeftWithADiagnostic) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {4}).input("s", DType::kFloat, {}).output("y", DType::kFloat, {4});
  b.initializer("z", f32s(0)).initializer("bw", f32s(4));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ);
  auto m = b.build().value();
  pass::PassContext ctx;
  auto p = pass::parse_pipeline("lower-quant");
  ASSERT_TRUE(pass::run_pipeline(m, p.value(), ctx).is_ok());
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].outcome, "left");
  EXPECT_EQ(m.graph().nodes().front()->op_type(), "Quant");
  auto strict = pass::parse_pipeline("lower-quant{strict=1}");
  auto r = pass::run_pipeline(m, strict.value(), ctx);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnsupported);
  EXPECT_NE(r.status().to_string().find("not constant"), std::string::npos);
}

TEST(LowerQuant, TruncBothVersions) {
  for (int version : {1, 2}) {
    io::ModelBuilder b(13);
    b.import(kQ, version);
    b.input("x", DType::kFloat, {24}).output("y", DType::kFloat, {24});
    b.initializer("s", f32s(0.125f)).initializer("z", f32s(0)).initializer("ib", f32s(8)).initializer("ob", f32s(4));
    b.initializer("os", f32s(0.5f));
    std::vector<std::string> ins = {"x", "s", "z", "ib"};
    if (version == 2) ins.push_back("os");
    ins.push_back("ob");
    b.node("Trunc", ins, {"y"}, kQ).attr("rounding_mode", "ROUND").attr("signed", 1);
    auto original = b.build().value();
    auto lowered = b.build().value();
    pass::PassContext ctx;
    ASSERT_TRUE(pass::run_pipeline(lowered, pass::parse_pipeline(targets::pipeline_text("qdq").value()).value(), ctx).is_ok());
    Tensor x = tie_rich_input().reshaped({24});
    auto a = exec::Executor::create(original).value().run({{"x", x}});
    auto c = exec::Executor::create(lowered).value().run({{"x", x}});
    ASSERT_TRUE(a.is_ok() && c.is_ok());
    for (int64_t i = 0; i < 24; ++i) {
      float p = a->outputs[0].data<float>()[i], q = c->outputs[0].data<float>()[i];
      EXPECT_TRUE((std::isnan(p) && std::isnan(q)) || p == q) << "v" << version << " element " << i;
    }
  }
}

}  // namespace
}  // namespace qonnx::test

namespace qonnx::test {
namespace {

// The one value that shows why a non-zero zero point is not exact as QuantizeLinear: x/s = 1.49999988f
// and z = 2 give t = x/s + z = 3.5f in float32, which rounds to 4 (QONNX), while QuantizeLinear rounds
// 1.49999988f to 1 and adds 2.
TEST(LowerQuant, AllowApproximateUsesQuantizeLinearAndReallyDiffersOnTies) {
  const float x_over_s = 1.49999988f;
  ASSERT_EQ(x_over_s + 2.0f, 3.5f);
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1}).output("y", DType::kFloat, {1});
  b.initializer("s", f32s(1.0f)).initializer("z", f32s(2)).initializer("bw", f32s(8));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("signed", 0);
  auto original = b.build().value();
  auto exact = b.build().value();
  auto approx = b.build().value();
  pass::PassContext c1, c2;
  ASSERT_TRUE(pass::run_pipeline(exact, pass::parse_pipeline("lower-quant").value(), c1).is_ok());
  ASSERT_TRUE(pass::run_pipeline(approx, pass::parse_pipeline("lower-quant{allow-approximate=1}").value(), c2).is_ok());
  EXPECT_NE(passes::quantizer_outcomes(c1)[0].detail.find("exact float emulation"), std::string::npos);
  EXPECT_NE(passes::quantizer_outcomes(c2)[0].detail.find("APPROXIMATE"), std::string::npos) << passes::quantizer_outcomes(c2)[0].detail;
  ASSERT_EQ(c2.diagnostics().size(), 1u);
  std::map<std::string, Tensor> feed = {{"x", f32({1}, {x_over_s})}};
  float want = exec::Executor::create(original).value().run(feed).value().outputs[0].data<float>()[0];
  float got_exact = exec::Executor::create(exact).value().run(feed).value().outputs[0].data<float>()[0];
  float got_approx = exec::Executor::create(approx).value().run(feed).value().outputs[0].data<float>()[0];
  EXPECT_EQ(want, 2.0f);
  EXPECT_EQ(got_exact, want);
  EXPECT_EQ(got_approx, 1.0f);
}

// MultiThreshold and channels_last ops lowered to standard ops give the kernel's numbers exactly.
TEST(LowerCustomOps, MultiThresholdAndChannelsLastAreExact) {
  io::ModelBuilder b(13);
  b.import("finn.custom_op.general", 1).import("qonnx.custom_op.channels_last", 1);
  b.input("x", DType::kFloat, {1, 4, 4, 2}).output("y", DType::kFloat, {1, 4, 4, 2}).output("p", DType::kFloat, {1, 2, 2, 2});
  b.initializer("thr", f32({2, 3}, {-0.5f, 0.0f, 0.5f, -0.25f, 0.25f, 0.75f}));
  std::vector<float> w(2 * 3 * 3 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
  b.initializer("w", f32({2, 3, 3, 2}, w));
  b.node("MultiThreshold", {"x", "thr"}, {"t"}, "finn.custom_op.general")
      .attr("out_dtype", "UINT2").attr("out_scale", 0.5f).attr("out_bias", -1.0f).attr("data_layout", "NHWC");
  b.node("Conv", {"t", "w"}, {"y"}, "qonnx.custom_op.channels_last")
      .attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("MaxPool", {"y"}, {"p"}, "qonnx.custom_op.channels_last")
      .attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
  auto original = b.build().value();
  auto lowered = b.build().value();
  pass::PassContext ctx;
  auto r = pass::run_pipeline(lowered, pass::parse_pipeline("infer-shapes,lower-custom-ops").value(), ctx);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  for (const auto& n : lowered.graph().nodes()) EXPECT_TRUE(ir::is_default_domain(n->domain())) << n->describe();
  std::vector<float> xs(32);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(static_cast<int>(i % 9) - 4);
  std::map<std::string, Tensor> feed = {{"x", f32({1, 4, 4, 2}, xs)}};
  auto a = exec::Executor::create(original).value().run(feed);
  auto c = exec::Executor::create(lowered).value().run(feed);
  ASSERT_TRUE(a.is_ok() && c.is_ok()) << (a.is_ok() ? c.status().to_string() : a.status().to_string());
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(a->outputs[k].identical(c->outputs[k])) << "output " << k;
}

}  // namespace
}  // namespace qonnx::test
