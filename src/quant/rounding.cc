#include "qonnx/quant/rounding.h"

#include <strings.h>

#include "qonnx/dialect/qonnx_dialect.h"

namespace qonnx::quant {

std::optional<RoundingMode> parse_rounding_mode(const std::string& text) {
  // The dialect owns the accepted names; this maps them to the formulas.
  if (!dialect::is_rounding_mode(text)) return std::nullopt;
  if (strcasecmp(text.c_str(), "HALF_EVEN") == 0) return RoundingMode::kRound;
  for (RoundingMode mode : {RoundingMode::kRound, RoundingMode::kCeil, RoundingMode::kFloor, RoundingMode::kUp,
                            RoundingMode::kDown, RoundingMode::kHalfUp, RoundingMode::kHalfDown})
    if (strcasecmp(text.c_str(), rounding_mode_name(mode)) == 0) return mode;
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

}  // namespace qonnx::quant
