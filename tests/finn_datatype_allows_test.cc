// qonnx's DataType.allowed, which execute_onnx's sanitizing (exec::run_in_context) applies: integral
// and in range, BIPOLAR/TERNARY sets, FIXED on its grid, FLOAT<e,m,b>
// representable (subnormals with fewer mantissa bits), and the floats that allow everything.
#include <gtest/gtest.h>

#include <cmath>

#include "qonnx/ir/finn_datatype.h"

namespace qonnx::test {
namespace {

ir::FinnDataType type(const char* name) {
  auto t = ir::parse_finn_datatype(name);
  EXPECT_TRUE(t.has_value()) << name;
  return t.value_or(ir::float32_datatype());
}

TEST(FinnDataTypeAllows, IntegersInRangeExactly) {
  const auto int4 = type("INT4");
  EXPECT_TRUE(int4.allows(-8.0f));
  EXPECT_TRUE(int4.allows(7.0f));
  EXPECT_FALSE(int4.allows(8.0f));
  EXPECT_FALSE(int4.allows(-9.0f));
  EXPECT_FALSE(int4.allows(2.5f));
  EXPECT_FALSE(int4.allows(3.00001f));  // exact: a float carrier one rounding away is sanitized
  EXPECT_FALSE(int4.allows(std::nextafter(3.0f, 4.0f)));
  EXPECT_FALSE(int4.allows(NAN));
  const auto binary = type("BINARY");
  EXPECT_TRUE(binary.allows(1.0f));
  EXPECT_FALSE(binary.allows(-1.0f));
  EXPECT_TRUE(type("UINT8").allows(255.0f));
  EXPECT_FALSE(type("UINT8").allows(256.0f));
}

TEST(FinnDataTypeAllows, BipolarTernaryFixed) {
  EXPECT_TRUE(type("BIPOLAR").allows(-1.0f));
  EXPECT_FALSE(type("BIPOLAR").allows(0.0f));
  EXPECT_TRUE(type("TERNARY").allows(0.0f));
  EXPECT_FALSE(type("TERNARY").allows(2.0f));
  const auto fixed = type("FIXED<8,4>");  // step 1/16, range [-8, 8 - 1/16]
  EXPECT_TRUE(fixed.allows(0.0625f));
  EXPECT_TRUE(fixed.allows(-8.0f));
  EXPECT_FALSE(fixed.allows(8.0f));
  EXPECT_FALSE(fixed.allows(0.03125f));
}

TEST(FinnDataTypeAllows, MinifloatRepresentable) {
  const auto e4m3 = type("FLOAT<4,3,7>");  // max (2 - 2^-3) * 2^8 = 480; smallest subnormal 2^-9
  EXPECT_TRUE(e4m3.allows(1.125f));
  EXPECT_FALSE(e4m3.allows(1.0625f));
  EXPECT_TRUE(e4m3.allows(480.0f));
  EXPECT_FALSE(e4m3.allows(512.0f));
  EXPECT_TRUE(e4m3.allows(-480.0f));
  EXPECT_TRUE(e4m3.allows(std::ldexp(1.0f, -9)));
  EXPECT_FALSE(e4m3.allows(3 * std::ldexp(1.0f, -10)));
  EXPECT_TRUE(e4m3.allows(3 * std::ldexp(1.0f, -9)));
  EXPECT_TRUE(e4m3.allows(0.0f));
}

TEST(FinnDataTypeAllows, FloatsAndScaledIntAllowEverything) {
  for (const char* name : {"FLOAT32", "FLOAT16", "SCALEDINT<8>"}) {
    EXPECT_TRUE(type(name).allows(0.123f)) << name;
    EXPECT_TRUE(type(name).allows(1e30f)) << name;
  }
}

}  // namespace
}  // namespace qonnx::test
