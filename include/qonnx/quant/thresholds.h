// The MultiThreshold form of a quantizer, exact. With a positive finite scale the integer code of x
// (quant_code) never decreases as x grows, so each level above the lowest has a smallest float32 that
// reaches it. For every float32 x except NaN, the number of thresholds t with x >= t is then the index
// of code(x) among the levels. Each threshold is found by bisection over the float32 bit patterns in
// order and proven: code(t) >= level and code(the next float32 below t) < level.
#pragma once

#include <functional>
#include <vector>

#include "qonnx/quant/params.h"
#include "qonnx/quant/rounding.h"
#include "qonnx/support/status.h"

namespace qonnx::quant {

// The thresholds of `code`, a function of float32 that never decreases as x grows and takes only the
// values `levels` (ascending): thresholds[k] is the smallest float32 x with code(x) >= levels[k + 1], or
// -inf when code(-inf) reaches it. kFailed when code(+inf) does not reach the highest level or a proof
// fails (then `code` is not such a function).
Result<std::vector<float>> monotone_thresholds(const std::function<float(float)>& code, const std::vector<float>& levels);

struct LevelThresholds {
  float lowest = 0;                // code(-inf): the level of a count of 0
  std::vector<float> thresholds;   // ascending; reaching thresholds[k] means level lowest + k + 1
};

// The thresholds of a (non-bipolar) Quant with one scale and zero point. kFailed when the scale is not
// positive and finite or the zero point not finite (the code is then not monotone in x), or, which
// would be a bug, when a proof fails.
Result<LevelThresholds> quant_level_thresholds(float scale, float zero_point, const IntRange& range,
                                               const QuantParams& params);

}  // namespace qonnx::quant
