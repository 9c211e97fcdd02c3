#include "qonnx/kernels/rounding.h"

#include <algorithm>
#include <cctype>

namespace qonnx::kernels {

std::optional<RoundingMode> parse_rounding_mode(const std::string& text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper == "ROUND" || upper == "HALF_EVEN") return RoundingMode::kRound;
  if (upper == "CEIL") return RoundingMode::kCeil;
  if (upper == "FLOOR") return RoundingMode::kFloor;
  if (upper == "UP") return RoundingMode::kUp;
  if (upper == "DOWN") return RoundingMode::kDown;
  if (upper == "HALF_UP") return RoundingMode::kHalfUp;
  if (upper == "HALF_DOWN") return RoundingMode::kHalfDown;
  return std::nullopt;
}

const char* rounding_mode_name(RoundingMode mode) {
  switch (mode) {
    case RoundingMode::kRound: return "ROUND";
    case RoundingMode::kCeil: return "CEIL";
    case RoundingMode::kFloor: return "FLOOR";
    case RoundingMode::kUp: return "UP";
    case RoundingMode::kDown: return "DOWN";
    case RoundingMode::kHalfUp: return "HALF_UP";
    case RoundingMode::kHalfDown: return "HALF_DOWN";
  }
  return "?";
}

const char* accepted_rounding_modes() { return "ROUND, HALF_EVEN, CEIL, FLOOR, UP, DOWN, HALF_UP, HALF_DOWN"; }

IntRange quant_int_range(int bitwidth, bool is_signed, bool narrow) {
  double b = static_cast<double>(bitwidth);
  if (is_signed) {
    double lo = -std::pow(2.0, b - 1) + (narrow ? 1 : 0);
    double hi = std::pow(2.0, b - 1) - 1;
    return {static_cast<float>(lo), static_cast<float>(hi)};
  }
  double hi = std::pow(2.0, b) - (narrow ? 2 : 1);
  return {0.0f, static_cast<float>(hi)};
}

}  // namespace qonnx::kernels
