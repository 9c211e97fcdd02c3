#include "qonnx/support/float8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace qonnx {
namespace {

struct Format {
  int mantissa_bits;
  int bias;
  bool fnuz;        // no negative zero, NaN = 0x80, no infinities
  bool has_inf;     // E5M2
  uint8_t max_code; // largest finite magnitude code
};

Format format_of(DType format) {
  switch (format) {
    case DType::kFloat8E4M3FN: return {3, 7, false, false, 0x7E};
    case DType::kFloat8E4M3FNUZ: return {3, 8, true, false, 0x7F};
    case DType::kFloat8E5M2: return {2, 15, false, true, 0x7B};
    case DType::kFloat8E5M2FNUZ: return {2, 16, true, false, 0x7F};
    default: return {0, 0, false, false, 0};
  }
}

uint8_t nan_code(const Format& f, uint8_t sign) { return f.fnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7F); }

}  // namespace

float float8_to_float(uint8_t code, DType format) {
  const Format f = format_of(format);
  const uint8_t sign = code & 0x80;
  const int magnitude = code & 0x7F;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.fnuz && code == 0x80) return -nan;
  if (!f.fnuz && magnitude > f.max_code) {
    if (f.has_inf && magnitude == 0x7C) return sign ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return sign ? -nan : nan;
  }
  const int exponent = magnitude >> f.mantissa_bits;
  const int mantissa = magnitude & ((1 << f.mantissa_bits) - 1);
  // Subnormals (exponent 0) have the exponent of the smallest normal and no implicit one.
  const int significand = exponent == 0 ? mantissa : mantissa + (1 << f.mantissa_bits);
  const int scale = (exponent == 0 ? 1 : exponent) - f.bias - f.mantissa_bits;
  const float v = std::ldexp(static_cast<float>(significand), scale);
  return sign ? -v : v;
}

uint8_t float_to_float8(float value, DType format, bool saturate) {
  const Format f = format_of(format);
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  if (std::isnan(value)) return nan_code(f, sign);
  const uint8_t overflow = saturate ? static_cast<uint8_t>(sign | f.max_code)
                                    : (f.has_inf ? static_cast<uint8_t>(sign | 0x7C) : nan_code(f, sign));
  if (std::isinf(value)) return overflow;
  const double magnitude = std::fabs(static_cast<double>(value));
  int code = 0;
  if (magnitude != 0.0) {
    int binary_exponent;
    std::frexp(magnitude, &binary_exponent);  // magnitude = m * 2^binary_exponent, m in [0.5, 1)
    const int exponent = binary_exponent - 1;
    // Every format's largest value is below 2^16: anything from 2^17 up overflows (and stays an int below).
    if (exponent > 17) return overflow;
    // Below the smallest normal exponent the step stays that of the subnormals.
    const int step_exponent = std::max(exponent, 1 - f.bias) - f.mantissa_bits;
    // Scaling by a power of two is exact in double; nearbyint rounds half to even (default mode).
    const int steps = static_cast<int>(std::nearbyint(std::ldexp(magnitude, -step_exponent)));
    // (biased exponent << mantissa bits) + the fraction: a carry out of the mantissa (steps == 2^(m+1))
    // lands on the next exponent, and for subnormals (biased exponent 1, no implicit one) this is `steps`.
    code = ((step_exponent + f.mantissa_bits + f.bias) << f.mantissa_bits) + steps - (1 << f.mantissa_bits);
  }
  if (code > f.max_code) return overflow;
  if (code == 0 && f.fnuz) return 0;
  return static_cast<uint8_t>(sign | code);
}

float float8_max(DType format) { return float8_to_float(format_of(format).max_code, format); }

}  // namespace qonnx
