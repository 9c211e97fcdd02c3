// nGraph-style Quantize / Dequantize against SEMANTICS.md section 3 and nGraph's reference kernel.
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "qonnx/dialect/target_ops.h"
#include "qonnx/kernels/ngraph.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

using dialect::kNGraphDomain;

Result<std::vector<Tensor>> ngraph_node(const std::string& op, std::vector<Tensor> inputs,
                                        std::function<void(io::NodeBuilder&)> attrs) {
  NodeCase c;
  c.op = op;
  c.domain = kNGraphDomain;
  c.imports = {{kNGraphDomain, dialect::kNGraphDomainVersion}};
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  return run_node(c);
}

Result<std::vector<Tensor>> quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, const std::string& type,
                                     int64_t round_mode, std::vector<int64_t> axes = {}) {
  return ngraph_node("Quantize", {x, scale, zp}, [=](io::NodeBuilder& n) {
    n.attr("type", type).attr("round_mode", round_mode);
    if (!axes.empty()) n.attr("axes", axes);
  });
}

Result<std::vector<Tensor>> dequantize(const Tensor& x, const Tensor& scale, const Tensor& zp,
                                       std::vector<int64_t> axes = {}) {
  return ngraph_node("Dequantize", {x, scale, zp}, [=](io::NodeBuilder& n) {
    n.attr("type", "f32");
    if (!axes.empty()) n.attr("axes", axes);
  });
}

// Per-tensor int8 quantization of x with scale 1 and zero point 0.
std::vector<int8_t> codes(const std::vector<float>& x, int64_t mode) {
  auto r = quantize(f32({static_cast<int64_t>(x.size())}, x), f32s(1.0f), i8({}, {0}), "i8", mode);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? values<int8_t>(r.value()[0]) : std::vector<int8_t>{};
}

TEST(NGraphQuantize, RoundingModes) {
  const std::vector<float> x = {2.5f, -2.5f, 3.5f, -3.5f, 1.6f, -1.1f, 0.5f, -0.5f};
  const std::vector<std::vector<int8_t>> expected = {
      {3, -3, 4, -4, 2, -1, 1, -1},  // 0 NEAREST_TOWARD_INFINITY (ties away from zero)
      {2, -2, 3, -3, 2, -1, 0, 0},   // 1 NEAREST_TOWARD_ZERO
      {3, -2, 4, -3, 2, -1, 1, 0},   // 2 NEAREST_UPWARD (ties to +inf)
      {2, -3, 3, -4, 2, -1, 0, -1},  // 3 NEAREST_DOWNWARD (ties to -inf)
      {2, -2, 4, -4, 2, -1, 0, 0},   // 4 NEAREST_TOWARD_EVEN
      {3, -3, 4, -4, 2, -2, 1, -1},  // 5 TOWARD_INFINITY
      {2, -2, 3, -3, 1, -1, 0, 0},   // 6 TOWARD_ZERO
      {3, -2, 4, -3, 2, -1, 1, 0},   // 7 UP (ceil)
      {2, -3, 3, -4, 1, -2, 0, -1},  // 8 DOWN (floor)
  };
  for (int mode = 0; mode <= 8; ++mode) EXPECT_EQ(codes(x, mode), expected[static_cast<size_t>(mode)]) << mode;
}

// nGraph's own backend tests: x / 4 for x in {9, 10, 11, -9, ...}.
TEST(NGraphQuantize, NGraphReferenceCases) {
  const std::vector<float> x = {9, 10, 11, -9, -10, -11, 13, 14, 15, -13, -14, -15};
  auto run = [&](int64_t mode) {
    auto r = quantize(f32({4, 3}, x), f32s(4.0f), i8({}, {0}), "i8", mode);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return values<int8_t>(r.value()[0]);
  };
  EXPECT_EQ(run(2), (std::vector<int8_t>{2, 3, 3, -2, -2, -3, 3, 4, 4, -3, -3, -4}));
  EXPECT_EQ(run(3), (std::vector<int8_t>{2, 2, 3, -2, -3, -3, 3, 3, 4, -3, -4, -4}));
  EXPECT_EQ(run(4), (std::vector<int8_t>{2, 2, 3, -2, -2, -3, 3, 4, 4, -3, -4, -4}));
}

TEST(NGraphQuantize, HalfModesUseFloatFormulas) {
  // 0.49999997f + 0.5f rounds to 1.0f in float32; nGraph gets 1 for modes 0 and 2 too.
  EXPECT_EQ(codes({0.49999997f}, 0), std::vector<int8_t>{1});
  EXPECT_EQ(codes({0.49999997f}, 2), std::vector<int8_t>{1});
  EXPECT_EQ(codes({-0.49999997f}, 3), std::vector<int8_t>{-1});
}

// Every QONNX mode maps to an nGraph mode computing the same function.
TEST(NGraphQuantize, QonnxModeMapping) {
  using quant::RoundingMode;
  const quant::RoundingMode modes[] = {quant::RoundingMode::kRound, quant::RoundingMode::kCeil,   quant::RoundingMode::kFloor,
                                quant::RoundingMode::kUp,    quant::RoundingMode::kDown,   quant::RoundingMode::kHalfUp,
                                quant::RoundingMode::kHalfDown};
  for (quant::RoundingMode m : modes) {
    const auto ng = kernels::ngraph_round_mode_for(m);
    for (float t = -5.0f; t <= 5.0f; t += 0.125f)
      EXPECT_EQ(kernels::apply_ngraph_rounding(ng, t), quant::apply_rounding(m, t))
          << quant::rounding_mode_name(m) << " " << t;
  }
  EXPECT_STREQ(kernels::ngraph_round_mode_name(kernels::NGraphRoundMode::kNearestUpward), "ROUND_NEAREST_UPWARD");
  EXPECT_FALSE(kernels::ngraph_round_mode_from_int(9).has_value());
}

TEST(NGraphQuantize, ZeroPointAddedAfterRounding) {
  // round(2.5) = 2 (ties to even), + 1 = 3; QONNX's round(2.5 + 1) would give 4.
  auto r = quantize(f32({1}, {2.5f}), f32s(1.0f), i8({}, {1}), "i8", 4);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int8_t>(r.value()[0]), std::vector<int8_t>{3});
}

TEST(NGraphQuantize, TrueDivision) {
  // x / s is exactly 3 here, while x * (1 / s) is 3.0000002f and would ceil to 4.
  const float s = 0.009f, x = 3 * s;
  ASSERT_EQ(x / s, 3.0f);
  auto r = quantize(f32({1}, {x}), f32s(s), i8({}, {0}), "i8", 7);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int8_t>(r.value()[0]), std::vector<int8_t>{3});
}

TEST(NGraphQuantize, SaturatesToTheFullStorageRange) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1000.0f, -1000.0f, inf, -inf, std::nanf("")};
  auto s8 = quantize(f32({5}, x), f32s(1.0f), i8({}, {3}), "i8", 4);
  ASSERT_TRUE(s8.is_ok()) << s8.status().to_string();
  EXPECT_EQ(values<int8_t>(s8.value()[0]), (std::vector<int8_t>{127, -128, 127, -128, 3}));  // NaN -> zero point
  auto s_u8 = quantize(f32({5}, x), f32s(1.0f), u8({}, {3}), "u8", 4);
  ASSERT_TRUE(s_u8.is_ok()) << s_u8.status().to_string();
  EXPECT_EQ(values<uint8_t>(s_u8.value()[0]), (std::vector<uint8_t>{255, 0, 255, 0, 3}));
  auto s32 = quantize(f32({5}, {1e10f, -1e10f, 2147483648.0f, 1000.0f, std::nanf("")}), f32s(1.0f), i32({}, {0}),
                      "i32", 4);
  ASSERT_TRUE(s32.is_ok()) << s32.status().to_string();
  EXPECT_EQ(values<int32_t>(s32.value()[0]),
            (std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MAX, 1000, 0}));
}

TEST(NGraphQuantize, PerAxis) {
  // x (2, 3); scale/zero point along axis 1 (3 values) or axis 0 (2 values).
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r1 = quantize(x, f32({3}, {1, 2, 4}), i8({3}, {0, 10, -10}), "i8", 4, {1});
  ASSERT_TRUE(r1.is_ok()) << r1.status().to_string();
  EXPECT_EQ(values<int8_t>(r1.value()[0]), (std::vector<int8_t>{1, 11, -9, 4, 12, -8}));
  auto r0 = quantize(x, f32({2}, {1, 2}), i8({2}, {0, 1}), "i8", 4, {-2});
  ASSERT_TRUE(r0.is_ok()) << r0.status().to_string();
  EXPECT_EQ(values<int8_t>(r0.value()[0]), (std::vector<int8_t>{1, 2, 3, 3, 3, 4}));
  // axes {0, 1}: one parameter per element; the attribute order does not matter (an axis set).
  auto r01 = quantize(x, f32({2, 3}, {1, 1, 1, 2, 2, 2}), i8({2, 3}, {0, 0, 0, 0, 0, 0}), "i8", 4, {1, 0});
  ASSERT_TRUE(r01.is_ok()) << r01.status().to_string();
  EXPECT_EQ(values<int8_t>(r01.value()[0]), (std::vector<int8_t>{1, 2, 3, 2, 2, 3}));
}

TEST(NGraphQuantize, Float16Input) {
  Tensor x(DType::kFloat16, {2});
  x.data<uint16_t>()[0] = float_to_half(2.5f);
  x.data<uint16_t>()[1] = float_to_half(-7.0f);
  Tensor s(DType::kFloat16, {});
  s.data<uint16_t>()[0] = float_to_half(2.0f);
  auto r = quantize(x, s, u8({}, {128}), "u8", 8);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>(r.value()[0]), (std::vector<uint8_t>{129, 124}));
}

TEST(NGraphQuantize, EmptyInput) {
  auto r = quantize(f32({0, 3}, {}), f32({3}, {1, 1, 1}), i8({3}, {0, 0, 0}), "i8", 4, {1});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dims(), (Dims{0, 3}));
}

TEST(NGraphQuantize, Errors) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto expect_error = [](const Result<std::vector<Tensor>>& r, Code code, const std::string& text) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(text), std::string::npos) << r.status().to_string();
  };
  expect_error(ngraph_node("Quantize", {x, f32s(1), i8({}, {0})}, [](io::NodeBuilder& n) { n.attr("round_mode", 4); }),
               Code::kInvalidModel, "'type'");
  expect_error(ngraph_node("Quantize", {x, f32s(1), i8({}, {0})}, [](io::NodeBuilder& n) { n.attr("type", "i8"); }),
               Code::kInvalidModel, "'round_mode'");
  expect_error(quantize(x, f32s(1), i8({}, {0}), "int8_t", 4), Code::kUnsupported, "int8_t");
  expect_error(quantize(x, f32s(1), i8({}, {0}), "i8", 9), Code::kInvalidModel, "round_mode 9");
  expect_error(quantize(x, f32s(1), i8({}, {0}), "i8", -1), Code::kInvalidModel, "round_mode -1");
  expect_error(quantize(x, f32s(1), u8({}, {0}), "i8", 4), Code::kInvalidModel, "zero_point");
  expect_error(quantize(x, make<double>(DType::kDouble, {}, {1.0}), i8({}, {0}), "i8", 4), Code::kInvalidModel,
               "scale");
  // No size-1 broadcasting: per-axis parameters must have exactly the input's dims at the axes.
  expect_error(quantize(x, f32({1}, {1}), i8({1}, {0}), "i8", 4, {1}), Code::kInvalidModel, "(no broadcasting)");
  expect_error(quantize(x, f32({3}, {1, 1, 1}), i8({}, {0}), "i8", 4, {1}), Code::kInvalidModel, "zero_point");
  expect_error(quantize(x, f32({3}, {1, 1, 1}), i8({3}, {0, 0, 0}), "i8", 4), Code::kInvalidModel, "axes");
  expect_error(quantize(x, f32({3}, {1, 1, 1}), i8({3}, {0, 0, 0}), "i8", 4, {2}), Code::kInvalidModel,
               "out of range");
  expect_error(quantize(x, f32({3, 3}, {}), i8({3, 3}, {}), "i8", 4, {1, 1}), Code::kInvalidModel, "twice");
  expect_error(quantize(x, f32s(0.0f), i8({}, {0}), "i8", 4), Code::kFailed, "non-zero");
  expect_error(quantize(x, f32s(std::nanf("")), i8({}, {0}), "i8", 4), Code::kFailed, "finite");
  expect_error(quantize(make<double>(DType::kDouble, {1}, {1.0}), make<double>(DType::kDouble, {}, {1.0}),
                        i8({}, {0}), "i8", 4),
               Code::kInvalidModel, "is double, which Quantize type parameter T");
  expect_error(ngraph_node("Quantize", {x, f32s(1)}, [](io::NodeBuilder& n) { n.attr("type", "i8").attr("round_mode", 4); }),
               Code::kInvalidModel, "zero_point");
}

TEST(NGraphDequantize, PerTensorAndPerAxis) {
  auto r = dequantize(i8({4}, {-128, -1, 0, 127}), f32s(0.5f), i8({}, {-1}));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{-63.5f, 0.0f, 0.5f, 64.0f}));
  auto a = dequantize(u8({2, 2}, {0, 10, 200, 255}), f32({2}, {1.0f, 0.25f}), u8({2}, {128, 0}), {1});
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(values_f32(a.value()[0]), (std::vector<float>{-128.0f, 2.5f, 72.0f, 63.75f}));
}

TEST(NGraphDequantize, Int32DifferenceIsExact) {
  // INT32_MAX - INT32_MIN does not fit int32: the difference is taken in 64 bits.
  auto r = dequantize(i32({1}, {INT32_MAX}), f32s(1.0f), i32({}, {INT32_MIN}));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), std::vector<float>{4294967295.0f});
}

TEST(NGraphDequantize, RoundTripWithQuantize) {
  const Tensor x = f32({6}, {-1.0f, -0.26f, 0.0f, 0.24f, 0.74f, 2.0f});
  auto q = quantize(x, f32s(0.5f), u8({}, {2}), "u8", 4);
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  auto d = dequantize(q.value()[0], f32s(0.5f), u8({}, {2}));
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(values_f32(d.value()[0]), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.0f, 0.5f, 2.0f}));
}

TEST(NGraphDequantize, Errors) {
  auto bad_type = ngraph_node("Dequantize", {i8({1}, {1}), f32s(1), i8({}, {0})},
                              [](io::NodeBuilder& n) { n.attr("type", "f16"); });
  ASSERT_FALSE(bad_type.is_ok());
  EXPECT_EQ(bad_type.status().code(), Code::kUnsupported);
  auto zp = dequantize(i8({1}, {1}), f32s(1), u8({}, {0}));
  ASSERT_FALSE(zp.is_ok());
  EXPECT_EQ(zp.status().code(), Code::kInvalidModel);
  auto real = dequantize(f32({1}, {1}), f32s(1), f32s(0));
  ASSERT_FALSE(real.is_ok());
  EXPECT_EQ(real.status().code(), Code::kInvalidModel);  // float is not among Dequantize's Q types
  auto shape = dequantize(i8({2, 3}, {}), f32({2}, {1, 1}), i8({2}, {0, 0}), {1});
  ASSERT_FALSE(shape.is_ok());
  EXPECT_EQ(shape.status().code(), Code::kInvalidModel);
}

}  // namespace
}  // namespace qonnx::test
