// Rounding modes and integer bounds of the QONNX quantizers (SEMANTICS.md section 1),
// as exact float32 formulas.
#pragma once

#include <cmath>
#include <optional>
#include <string>

namespace qonnx::quant {

enum class RoundingMode { kRound, kCeil, kFloor, kUp, kDown, kHalfUp, kHalfDown };

// One of dialect::rounding_mode_names() (case-insensitive; HALF_EVEN is an alias of ROUND); nullopt
// for anything else.
std::optional<RoundingMode> parse_rounding_mode(const std::string& text);
const char* rounding_mode_name(RoundingMode mode);

// Ties to even, independent of the floating-point environment.
inline float round_half_even(float t) {
  float r = std::round(t);  // ties away from zero
  if (std::fabs(r - t) == 0.5f) r = 2.0f * std::round(t * 0.5f);
  return r;
}
inline double round_half_even(double t) {
  double r = std::round(t);
  if (std::fabs(r - t) == 0.5) r = 2.0 * std::round(t * 0.5);
  return r;
}

inline float sign_of(float t) { return t > 0.0f ? 1.0f : (t < 0.0f ? -1.0f : t); }

inline float apply_rounding(RoundingMode mode, float t) {
  switch (mode) {
    case RoundingMode::kRound: return round_half_even(t);
    case RoundingMode::kCeil: return std::ceil(t);
    case RoundingMode::kFloor: return std::floor(t);
    case RoundingMode::kUp: return sign_of(t) * std::ceil(std::fabs(t));
    case RoundingMode::kDown: return std::trunc(t);
    case RoundingMode::kHalfUp: return sign_of(t) * std::floor(std::fabs(t) + 0.5f);
    case RoundingMode::kHalfDown: return sign_of(t) * std::ceil(std::fabs(t) - 0.5f);
  }
  return t;
}

// Integer range of a QONNX quantizer (SEMANTICS.md table), as floats.
struct IntRange {
  float min;
  float max;
};
IntRange quant_int_range(int bitwidth, bool is_signed, bool narrow);

}  // namespace qonnx::quant
