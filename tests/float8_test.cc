// The float8 conversions (qonnx/support/float8.h) on all 256 codes of each format and on tie-rich
// float32 inputs, against an independent reference that picks the nearest code by brute force; then
// Cast-19 and QuantizeLinear/DequantizeLinear-19 through the executor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <limits>
#include <random>
#include <vector>

#include "qonnx/support/float8.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

constexpr DType kFormats[] = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ};

bool is_fnuz(DType f) { return f == DType::kFloat8E4M3FNUZ || f == DType::kFloat8E5M2FNUZ; }

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The largest finite positive code, found by scanning (not by the module's table).
uint8_t max_code(DType f) {
  uint8_t best = 0;
  for (int c = 1; c < 0x80; ++c)
    if (std::isfinite(float8_to_float(static_cast<uint8_t>(c), f))) best = static_cast<uint8_t>(c);
  return best;
}

// ONNX's rounding spelled out: among the finite non-negative codes and one virtual code above the
// largest (its value + one step, as if the exponent range went on), take the nearest to |x|, ties to
// the even code; landing on (or past) the virtual code overflows.
uint8_t reference(float x, DType f, bool saturate) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const uint8_t top = max_code(f);
  const uint8_t nan = is_fnuz(f) ? 0x80 : static_cast<uint8_t>(sign | 0x7F);
  const uint8_t overflow = saturate ? static_cast<uint8_t>(sign | top)
                                    : f == DType::kFloat8E5M2 ? static_cast<uint8_t>(sign | 0x7C) : nan;
  if (std::isnan(x)) return nan;
  if (std::isinf(x)) return overflow;
  const double a = std::fabs(static_cast<double>(x));
  const double top_value = float8_to_float(top, f);
  const double virtual_value = top_value + (top_value - float8_to_float(static_cast<uint8_t>(top - 1), f));
  int best = -1;
  double best_distance = 0;
  for (int c = 0; c <= top + 1; ++c) {
    const double v = c == top + 1 ? virtual_value : float8_to_float(static_cast<uint8_t>(c), f);
    const double d = std::fabs(v - a);
    if (best < 0 || d < best_distance || (d == best_distance && c % 2 == 0)) {
      best = c;
      best_distance = d;
    }
  }
  if (best == top + 1 || a > virtual_value) return overflow;
  if (best == 0 && is_fnuz(f)) return 0;
  return static_cast<uint8_t>(sign | best);
}

TEST(Float8, EveryCodeDecodesAndEncodesBack) {
  for (DType f : kFormats) {
    int nans = 0, infs = 0;
    for (int c = 0; c < 256; ++c) {
      const uint8_t code = static_cast<uint8_t>(c);
      const float v = float8_to_float(code, f);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      if (std::isinf(v)) {
        ++infs;
        EXPECT_EQ(float_to_float8(v, f, false), code) << dtype_name(f);
        continue;
      }
      for (bool saturate : {false, true})
        EXPECT_EQ(float_to_float8(v, f, saturate), code) << dtype_name(f) << " code " << c << " value " << v;
      // Positive codes grow with the value.
      if (c > 0 && c < 0x80 && std::isfinite(float8_to_float(static_cast<uint8_t>(c - 1), f))) {
        EXPECT_GT(v, float8_to_float(static_cast<uint8_t>(c - 1), f)) << dtype_name(f) << " code " << c;
      }
    }
    const bool e4 = f == DType::kFloat8E4M3FN || f == DType::kFloat8E4M3FNUZ;
    EXPECT_EQ(nans, f == DType::kFloat8E4M3FN ? 2 : f == DType::kFloat8E5M2 ? 6 : 1) << dtype_name(f);
    EXPECT_EQ(infs, f == DType::kFloat8E5M2 ? 2 : 0) << dtype_name(f);
    EXPECT_EQ(float8_max(f), f == DType::kFloat8E4M3FN ? 448.0f : f == DType::kFloat8E4M3FNUZ ? 240.0f : 57344.0f);
    // The smallest subnormal: 2^(1 - bias - mantissa bits).
    const int bias = f == DType::kFloat8E4M3FN ? 7 : f == DType::kFloat8E4M3FNUZ ? 8 : f == DType::kFloat8E5M2 ? 15 : 16;
    EXPECT_EQ(float8_to_float(1, f), std::ldexp(1.0f, 1 - bias - (e4 ? 3 : 2))) << dtype_name(f);
    // FNUZ: 0x80 is the NaN, so there is no negative zero.
    if (is_fnuz(f)) {
      EXPECT_TRUE(std::isnan(float8_to_float(0x80, f)));
      EXPECT_EQ(float_to_float8(-0.0f, f, true), 0x00);
    } else {
      EXPECT_EQ(float_to_float8(-0.0f, f, true), 0x80);
      EXPECT_TRUE(std::signbit(float8_to_float(0x80, f)));
    }
  }
}

// Every code, every midpoint between neighbours (a tie), one float32 step either side of it, the
// same around zero, the overflow threshold and the specials, both signs and both saturate modes.
std::vector<float> tie_rich_inputs(DType f) {
  std::vector<float> xs;
  const uint8_t top = max_code(f);
  const float inf = std::numeric_limits<float>::infinity();
  auto around = [&](float v) {
    xs.push_back(v);
    xs.push_back(std::nextafter(v, inf));
    xs.push_back(std::nextafter(v, -inf));
  };
  for (int c = 0; c < top; ++c) {
    const float lo = float8_to_float(static_cast<uint8_t>(c), f), hi = float8_to_float(static_cast<uint8_t>(c + 1), f);
    around(lo);
    around(lo + (hi - lo) / 2);  // exact: one bit more than the format has
  }
  const float top_value = float8_to_float(top, f);
  const float step = top_value - float8_to_float(static_cast<uint8_t>(top - 1), f);
  for (float k : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f, 1000.0f}) around(top_value + k * step);
  for (float v : {std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), 1e-30f, 1e30f,
                  std::numeric_limits<float>::max(), inf, std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(v);
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  return xs;
}

TEST(Float8, TieRichInputsRoundHalfToEven) {
  for (DType f : kFormats)
    for (bool saturate : {false, true})
      for (float x : tie_rich_inputs(f))
        ASSERT_EQ(float_to_float8(x, f, saturate), reference(x, f, saturate))
            << dtype_name(f) << " saturate " << saturate << " x " << x << " bits " << std::hex << bits_of(x);
}

TEST(Float8, RandomFloat32BitPatterns) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (DType f : kFormats)
    for (int i = 0; i < 20000; ++i) {
      uint32_t b = bits(rng);
      // Most random patterns are far out of range: pull half of them into the format's exponents.
      if (i % 2) b = (b & 0x807FFFFF) | ((100 + b % 50) << 23);
      float x;
      std::memcpy(&x, &b, sizeof x);
      for (bool saturate : {false, true})
        ASSERT_EQ(float_to_float8(x, f, saturate), reference(x, f, saturate)) << dtype_name(f) << " bits " << std::hex << b;
    }
}

TEST(Float8, WorkedValues) {
  // Ties: E4M3FN 1 + 1/16 lies between 1 and 1.125 and goes to the even 1; 1 + 3/16 goes to 1.25.
  EXPECT_EQ(float8_to_float(float_to_float8(1.0625f, DType::kFloat8E4M3FN, true), DType::kFloat8E4M3FN), 1.0f);
  EXPECT_EQ(float8_to_float(float_to_float8(1.1875f, DType::kFloat8E4M3FN, true), DType::kFloat8E4M3FN), 1.25f);
  // E4M3FN: 464 is the tie between 448 and the first value past it; even 448 wins, so it does not overflow.
  EXPECT_EQ(float_to_float8(464.0f, DType::kFloat8E4M3FN, false), 0x7E);
  EXPECT_EQ(float_to_float8(465.0f, DType::kFloat8E4M3FN, false), 0x7F);   // NaN
  EXPECT_EQ(float_to_float8(465.0f, DType::kFloat8E4M3FN, true), 0x7E);    // 448
  EXPECT_EQ(float_to_float8(-1e9f, DType::kFloat8E5M2, false), 0xFC);      // -inf
  EXPECT_EQ(float_to_float8(-1e9f, DType::kFloat8E5M2, true), 0xFB);       // -57344
  EXPECT_EQ(float_to_float8(1e9f, DType::kFloat8E5M2FNUZ, false), 0x80);   // NaN
  EXPECT_EQ(float_to_float8(-1e-30f, DType::kFloat8E4M3FNUZ, true), 0x00); // +0, no negative zero
}

// ---- through the executor ----

using test::f32;

using test::run_op;

TEST(Float8Kernels, CastRoundTripsEveryCodeAndSaturates) {
  for (DType f : kFormats) {
    std::vector<float> values;
    for (int c = 0; c < 256; ++c) values.push_back(float8_to_float(static_cast<uint8_t>(c), f));
    values.push_back(1e6f);
    values.push_back(-1e6f);
    const Tensor x = f32({static_cast<int64_t>(values.size())}, values);
    for (int saturate : {0, 1}) {
      auto to8 = run_op("Cast", {x}, [&](io::NodeBuilder& n) {
                             n.attr("to", static_cast<int64_t>(f)).attr("saturate", static_cast<int64_t>(saturate));
                           }, 19);
      ASSERT_TRUE(to8.is_ok()) << to8.status().to_string();
      const Tensor& codes = to8.value()[0];
      ASSERT_EQ(codes.dtype(), f);
      for (size_t i = 0; i < values.size(); ++i)
        EXPECT_EQ(codes.data<uint8_t>()[i], float_to_float8(values[i], f, saturate != 0)) << i;
      auto back = run_op("Cast", {codes},
                            [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kFloat)); }, 19);
      ASSERT_TRUE(back.is_ok()) << back.status().to_string();
      // Every finite code comes back as itself; E5M2's infinities saturate to the largest value.
      for (size_t i = 0; i + 2 < values.size(); ++i) {
        const float got = back.value()[0].data<float>()[i];
        const float want = std::isinf(values[i]) && saturate ? std::copysign(float8_max(f), values[i]) : values[i];
        if (std::isnan(values[i])) EXPECT_TRUE(std::isnan(got));
        else EXPECT_EQ(got, want) << dtype_name(f) << " code " << i;
      }
      const float big = back.value()[0].data<float>()[values.size() - 2];
      if (saturate) EXPECT_EQ(big, float8_max(f));
      else EXPECT_TRUE(std::isnan(big) || std::isinf(big));
    }
  }
}

TEST(Float8Kernels, OlderOpsetsRejectFloat8) {
  auto r = run_op("Cast", {f32({1}, {1})},
                     [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kFloat8E4M3FN)); }, 18);
  test::expect_error(r, Code::kUnsupported, "float8e4m3fn");
  Tensor zp(DType::kFloat8E5M2, {});
  // An input type outside the version's schema is an invalid model (exit 5), as Div(float, double) is.
  auto q = run_op("QuantizeLinear", {f32({1}, {1}), test::f32s(1), zp}, nullptr, 18);
  test::expect_error(q, Code::kInvalidModel, "float8e5m2");
}

TEST(Float8Kernels, QuantizeDequantizeLinearPerAxis) {
  // x / scale per channel, rounded to float8 (saturating by default, or not), and back times scale.
  const std::vector<float> xs = {1.0625f, -3.3f, 500.0f, 0.0f, -1e-9f, 2.0f, 17.0f, -448.0f};
  const std::vector<float> scales = {1.0f, 0.5f};
  for (DType f : kFormats)
    for (int saturate : {0, 1}) {
      Tensor zp(f, {2});
      auto q = run_op("QuantizeLinear", {f32({2, 4}, xs), f32({2}, scales), zp},
                         [&](io::NodeBuilder& n) { n.attr("axis", int64_t{0}).attr("saturate", static_cast<int64_t>(saturate)); }, 19);
      ASSERT_TRUE(q.is_ok()) << q.status().to_string();
      const Tensor& codes = q.value()[0];
      ASSERT_EQ(codes.dtype(), f);
      for (size_t i = 0; i < xs.size(); ++i)
        EXPECT_EQ(codes.data<uint8_t>()[i], float_to_float8(xs[i] / scales[i / 4], f, saturate != 0)) << dtype_name(f) << " " << i;
      auto dq = run_op("DequantizeLinear", {codes, f32({2}, scales), zp},
                          [](io::NodeBuilder& n) { n.attr("axis", int64_t{0}); }, 19);
      ASSERT_TRUE(dq.is_ok()) << dq.status().to_string();
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = float8_to_float(codes.data<uint8_t>()[i], f) * scales[i / 4];
        const float got = dq.value()[0].data<float>()[i];
        if (std::isnan(want)) EXPECT_TRUE(std::isnan(got));
        else EXPECT_EQ(got, want);
      }
    }
}

TEST(Float8Kernels, NonZeroFloat8ZeroPointIsRefused) {
  Tensor zp(DType::kFloat8E4M3FN, {});
  zp.data<uint8_t>()[0] = float_to_float8(1.0f, DType::kFloat8E4M3FN, true);
  auto q = run_op("QuantizeLinear", {f32({1}, {1}), test::f32s(1), zp}, nullptr, 19);
  test::expect_error(q, Code::kUnsupported, "zero point must be 0");
}

}  // namespace
}  // namespace qonnx
