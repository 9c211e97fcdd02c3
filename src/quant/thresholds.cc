#include "qonnx/quant/thresholds.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace qonnx::quant {
namespace {

// float32 bit patterns as unsigned keys in the order of the values (-inf lowest, -0 just below +0).
uint32_t order_key(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

float from_key(uint32_t k) {
  const uint32_t u = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace

Result<std::vector<float>> monotone_thresholds(const std::function<float(float)>& code, const std::vector<float>& levels) {
  const uint32_t lo_key = order_key(-INFINITY), hi_key = order_key(INFINITY);
  std::vector<float> out;
  if (!levels.empty() && !(code(INFINITY) >= levels.back()))
    return Status(Code::kFailed, fmt::format("level {} is never reached", levels.back()));
  for (size_t k = 1; k < levels.size(); ++k) {
    const float level = levels[k];
    if (code(-INFINITY) >= level) {
      out.push_back(-INFINITY);
      continue;
    }
    // Smallest key whose code reaches `level`: code(hi_key) does, code(lo_key) does not.
    uint32_t below = lo_key, reach = hi_key;
    while (reach - below > 1) {
      const uint32_t mid = below + (reach - below) / 2;
      (code(from_key(mid)) >= level ? reach : below) = mid;
    }
    const float t = from_key(reach);
    if (!(code(t) >= level) || !(code(from_key(reach - 1)) < level) || (!out.empty() && t < out.back()))
      return Status(Code::kFailed, fmt::format("threshold {} of level {} fails its proof", t, level));
    out.push_back(t);
  }
  return out;
}

Result<LevelThresholds> quant_level_thresholds(float scale, float zero_point, const IntRange& range,
                                               const QuantParams& params) {
  if (!(scale > 0.0f) || !std::isfinite(scale) || !std::isfinite(zero_point) || params.bipolar())
    return Status(Code::kFailed, fmt::format("scale {} / zero point {}: the code is monotone in x only for a positive "
                                             "finite scale and a finite zero point", scale, zero_point));
  auto code = [&](float x) { return quant_code(x, scale, zero_point, range, params); };
  LevelThresholds out;
  out.lowest = code(-INFINITY);
  std::vector<float> levels;
  for (float level = out.lowest; level <= code(INFINITY); level += 1) levels.push_back(level);
  QONNX_ASSIGN_OR_RETURN(out.thresholds, monotone_thresholds(code, levels));
  return out;
}

}  // namespace qonnx::quant
