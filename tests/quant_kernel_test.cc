// Quant / BipolarQuant / Trunc kernels against SEMANTICS.md section 1.
#include <cctype>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/quant/rounding.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kQ = "qonnx.custom_op.general";

Result<std::vector<Tensor>> quant(const Tensor& x, const Tensor& scale, const Tensor& zp, const Tensor& bits,
                                  int is_signed, int narrow, const std::string& mode, const std::string& domain = kQ) {
  NodeCase c;
  c.op = "Quant";
  c.domain = domain;
  c.inputs = {x, scale, zp, bits};
  c.attrs = [=](io::NodeBuilder& n) { n.attr("signed", is_signed).attr("narrow", narrow).attr("rounding_mode", mode); };
  return run_node(c);
}

std::vector<float> quant_values(const std::vector<float>& x, int bits, int is_signed, int narrow, const std::string& mode) {
  auto r = quant(f32({static_cast<int64_t>(x.size())}, x), f32s(1.0f), f32s(0.0f), f32s(static_cast<float>(bits)),
                 is_signed, narrow, mode);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? values_f32(r.value()[0]) : std::vector<float>{};
}

// The rounding table of SEMANTICS.md: inputs 2.5 -2.5 1.6 -1.1 (8-bit signed, scale 1).
TEST(QuantKernel, RoundingTable) {
  const std::vector<float> x = {2.5f, -2.5f, 1.6f, -1.1f, 0.5f, -0.5f, 1.5f, -1.5f};
  struct Row {
    const char* mode;
    std::vector<float> expected;
  };
  const Row rows[] = {
      {"ROUND", {2, -2, 2, -1, 0, -0, 2, -2}},     {"HALF_EVEN", {2, -2, 2, -1, 0, -0, 2, -2}},
      {"CEIL", {3, -2, 2, -1, 1, -0, 2, -1}},      {"FLOOR", {2, -3, 1, -2, 0, -1, 1, -2}},
      {"UP", {3, -3, 2, -2, 1, -1, 2, -2}},        {"DOWN", {2, -2, 1, -1, 0, -0, 1, -1}},
      {"HALF_UP", {3, -3, 2, -1, 1, -1, 2, -2}},   {"HALF_DOWN", {2, -2, 2, -1, 0, -0, 1, -1}},
      {"round", {2, -2, 2, -1, 0, -0, 2, -2}},
  };
  for (const auto& row : rows) EXPECT_EQ(quant_values(x, 8, 1, 0, row.mode), row.expected) << row.mode;
}

// The kernels accept exactly the dialect's rounding-mode names, in any case, and nothing else.
TEST(QuantKernel, RoundingModesAreTheDialectsNames) {
  for (const std::string& name : dialect::rounding_mode_names()) {
    auto mode = quant::parse_rounding_mode(name);
    ASSERT_TRUE(mode.has_value()) << name;
    EXPECT_EQ(name == "HALF_EVEN" ? std::string("ROUND") : name, quant::rounding_mode_name(*mode));
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(quant::parse_rounding_mode(lower), mode) << lower;
  }
  EXPECT_FALSE(quant::parse_rounding_mode("NEAREST").has_value());
  EXPECT_FALSE(quant::parse_rounding_mode("").has_value());
  expect_error(quant(f32({1}, {1}), f32s(1), f32s(0), f32s(8), 1, 0, "NEAREST"), Code::kUnsupported,
               "accepted: ROUND, HALF_EVEN, CEIL, FLOOR, UP, DOWN, HALF_UP, HALF_DOWN");
}

TEST(QuantKernel, HalfUpUsesFloatFormula) {
  // 0.49999997f + 0.5f rounds to 1.0f in float32, so HALF_UP gives 1 as qonnx and nGraph do.
  EXPECT_EQ(quant_values({0.49999997f}, 8, 1, 0, "HALF_UP"), std::vector<float>{1.0f});
}

TEST(QuantKernel, BoundsForEverySignedNarrowPair) {
  for (int bits = 2; bits <= 16; ++bits) {
    const float big = 1e6f;
    float p = std::ldexp(1.0f, bits - 1), full = std::ldexp(1.0f, bits);
    EXPECT_EQ(quant_values({-big, big}, bits, 1, 0, "ROUND"), (std::vector<float>{-p, p - 1})) << bits;
    EXPECT_EQ(quant_values({-big, big}, bits, 1, 1, "ROUND"), (std::vector<float>{-p + 1, p - 1})) << bits;
    EXPECT_EQ(quant_values({-big, big}, bits, 0, 0, "ROUND"), (std::vector<float>{0, full - 1})) << bits;
    EXPECT_EQ(quant_values({-big, big}, bits, 0, 1, "ROUND"), (std::vector<float>{0, full - 2})) << bits;
  }
}

TEST(QuantKernel, InfinitiesClampNanStays) {
  const float inf = std::numeric_limits<float>::infinity();
  auto v = quant_values({inf, -inf, std::nanf("")}, 4, 1, 0, "ROUND");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 7.0f);
  EXPECT_EQ(v[1], -8.0f);
  EXPECT_TRUE(std::isnan(v[2]));
}

TEST(QuantKernel, NegativeZero) {
  auto v = quant_values({-0.0f, -0.2f}, 4, 1, 0, "ROUND");
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.0f);
}

TEST(QuantKernel, BipolarOneBitCase) {
  // bitwidth 1 signed: t >= 0 -> +1, else -1; -0.0 -> +1, NaN -> -1.
  auto r = quant(f32({5}, {0.3f, -0.3f, -0.0f, std::nanf(""), 0.0f}), f32s(0.5f), f32s(0.0f), f32s(1.0f), 1, 0, "ROUND");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0.5f, -0.5f, 0.5f, -0.5f, 0.5f}));
}

TEST(QuantKernel, ScaleAndZeroPoint) {
  // t = x/s + z, clamp, round, (q - z) * s with x/s a true division.
  auto r = quant(f32({4}, {0.1f, 0.7f, -0.35f, 3.0f}), f32s(0.1f), f32s(3.0f), f32s(4.0f), 0, 0, "ROUND");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<float> expected;
  for (float x : {0.1f, 0.7f, -0.35f, 3.0f}) {
    float t = x / 0.1f + 3.0f;
    t = std::min(15.0f, std::max(0.0f, t));
    float q = std::nearbyint(t);
    expected.push_back((q - 3.0f) * 0.1f);
  }
  EXPECT_EQ(values_f32(r.value()[0]), expected);
}

TEST(QuantKernel, PerChannelBroadcast) {
  // scale (2,1) over x (2,3): one scale per row; scale (1,3) per column.
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = quant(x, f32({2, 1}, {1.0f, 2.0f}), f32s(0), f32s(8), 1, 0, "FLOOR");
  ASSERT_TRUE(rows.is_ok());
  EXPECT_EQ(values_f32(rows.value()[0]), (std::vector<float>{1, 2, 3, 4, 4, 6}));
  auto cols = quant(x, f32({1, 3}, {1.0f, 2.0f, 4.0f}), f32s(0), f32s(8), 1, 0, "FLOOR");
  ASSERT_TRUE(cols.is_ok());
  EXPECT_EQ(values_f32(cols.value()[0]), (std::vector<float>{1, 2, 0, 4, 4, 4}));
  EXPECT_EQ(cols.value()[0].dims(), (Dims{2, 3}));
}

TEST(QuantKernel, ParameterTypesAreConvertedToFloat32) {
  Tensor x = f32({3}, {1.26f, -3.7f, 100.0f});
  auto ref = quant(x, f32s(0.5f), f32s(0), f32s(8), 1, 0, "ROUND");
  auto as_double = quant(x, make<double>(DType::kDouble, {}, {0.5}), make<double>(DType::kDouble, {}, {0}),
                         make<double>(DType::kDouble, {}, {8}), 1, 0, "ROUND");
  auto as_int = quant(x, f32s(0.5f), make<int64_t>(DType::kInt64, {}, {0}), make<int32_t>(DType::kInt32, {1}, {8}), 1, 0,
                      "ROUND");
  ASSERT_TRUE(ref.is_ok() && as_double.is_ok() && as_int.is_ok());
  EXPECT_TRUE(ref.value()[0].identical(as_double.value()[0]));
  EXPECT_TRUE(ref.value()[0].identical(as_int.value()[0]));
}

TEST(QuantKernel, AllDomainSpellings) {
  Tensor x = f32({2}, {0.26f, -1.0f});
  for (const char* d : {"qonnx.custom_op.general", "finn.custom_op.general", "finn", "onnx.brevitas", ""}) {
    auto r = quant(x, f32s(0.25f), f32s(0), f32s(4), 1, 0, "ROUND", d);
    ASSERT_TRUE(r.is_ok()) << d << ": " << r.status().to_string();
    EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0.25f, -1.0f})) << d;
  }
}

TEST(QuantKernel, InvalidParameters) {
  Tensor x = f32({2}, {1, 2});
  struct Bad {
    Tensor scale, bits;
    std::string mode;
    Code code;
    const char* needle;
  };
  const Bad bad[] = {
      {f32s(1), f32s(0), "ROUND", Code::kFailed, "positive integer"},
      {f32s(1), f32s(-3), "ROUND", Code::kFailed, "positive integer"},
      {f32s(1), f32s(2.5f), "ROUND", Code::kFailed, "positive integer"},
      {f32s(1), f32s(33), "ROUND", Code::kUnsupported, "maximum of 32"},
      {f32s(1), f32({2}, {4, 4}), "ROUND", Code::kFailed, "one value"},
      {f32s(0), f32s(4), "ROUND", Code::kFailed, "finite and non-zero"},
      {f32s(std::nanf("")), f32s(4), "ROUND", Code::kFailed, "finite and non-zero"},
      {f32s(INFINITY), f32s(4), "ROUND", Code::kFailed, "finite and non-zero"},
      {f32s(1), f32s(4), "NEAREST", Code::kUnsupported, "accepted: ROUND"},
      {f32({3}, {1, 1, 1}), f32s(4), "ROUND", Code::kInvalidModel, "does not broadcast"},
  };
  for (const auto& b : bad) {
    auto r = quant(x, b.scale, f32s(0), b.bits, 1, 0, b.mode);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), b.code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(b.needle), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find("Quant_0"), std::string::npos) << "names the node";
  }
}

TEST(BipolarQuantKernel, SignTimesScale) {
  NodeCase c;
  c.op = "BipolarQuant";
  c.domain = kQ;
  c.inputs = {f32({2, 3}, {0.5f, -0.5f, -0.0f, std::nanf(""), 0.0f, -7.0f}), f32({2, 1}, {2.0f, 3.0f})};
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{2, -2, 2, -3, 3, -3}));
}

Result<std::vector<Tensor>> trunc(int64_t version, std::vector<Tensor> inputs, const std::string& mode,
                                  int is_signed = 1, int narrow = 0) {
  NodeCase c;
  c.op = "Trunc";
  c.domain = kQ;
  c.imports = {{kQ, version}};
  c.inputs = std::move(inputs);
  c.attrs = [=](io::NodeBuilder& n) { n.attr("rounding_mode", mode).attr("signed", is_signed).attr("narrow", narrow); };
  return run_node(c);
}

TEST(TruncKernel, Version1ShiftsByBitDifference) {
  // y = rne(x/s + z) / 2^(in - out), mode, (y - z) * s.
  auto r = trunc(1, {f32({5}, {13, -13, 7.5f, 8.5f, 255}), f32s(1), f32s(0), f32s(8), f32s(4)}, "FLOOR");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0, -1, 0, 0, 15}));
  auto round = trunc(1, {f32({3}, {24, 40, 56}), f32s(1), f32s(0), f32s(8), f32s(4)}, "ROUND");
  ASSERT_TRUE(round.is_ok());
  EXPECT_EQ(values_f32(round.value()[0]), (std::vector<float>{2, 2, 4}));  // 1.5 -> 2, 2.5 -> 2, 3.5 -> 4
}

TEST(TruncKernel, Version2ClampsAndUsesOutScale) {
  // scale 0.5, out_scale 2 -> k = 4; y = clamp(rne(x/0.5)/4, 0, 15); floor; * 2.
  auto r = trunc(2, {f32({4}, {3.1f, 100, -5, 7.0f}), f32s(0.5f), f32s(0), f32s(8), f32s(2), f32s(4)}, "FLOOR", 0, 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{2, 30, 0, 6}));
}

TEST(TruncKernel, Version2NonPowerOfTwoOutScale) {
  // out_scale/scale = 3 -> log2 = 1.585 -> k = 2^2 = 4; output still scaled by out_scale 3.
  auto r = trunc(2, {f32({3}, {9, 10, 100}), f32s(1), f32s(0), f32s(8), f32s(3), f32s(4)}, "FLOOR");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{6, 6, 21}));  // floor(9/4)=2, floor(2.5)=2, clamp 25->7
}

TEST(TruncKernel, InputCountMustMatchVersion) {
  auto v1_with_6 = trunc(1, {f32s(1), f32s(1), f32s(0), f32s(8), f32s(2), f32s(4)}, "FLOOR");
  ASSERT_FALSE(v1_with_6.is_ok());
  EXPECT_EQ(v1_with_6.status().code(), Code::kInvalidModel);
  auto v2_with_5 = trunc(2, {f32s(1), f32s(1), f32s(0), f32s(8), f32s(4)}, "FLOOR");
  ASSERT_FALSE(v2_with_5.is_ok());
  EXPECT_NE(v2_with_5.status().to_string().find("takes 6 inputs, got 5"), std::string::npos);
}

}  // namespace
}  // namespace qonnx::test
