// The nGraph target (SEMANTICS.md section 3): nGraph-style Quantize / Dequantize as ONNX nodes.
//
// Stable ONNX encoding (domain dialect::kNGraphDomain, version 1):
//   Quantize(input, scale, zero_point) -> output
//     type       string, required: "i8" | "u8" | "i32" (the output and zero_point element type)
//     axes       ints, default []: axes of `input` that scale/zero_point vary along
//     round_mode int, required: the nGraph RoundMode number (NGraphRoundMode below)
//   Dequantize(input, scale, zero_point) -> output
//     type       string, default "f32": the output element type (only "f32")
//     axes       ints, default []
// scale/zero_point have rank |axes| and exactly the input's dims at those axes (no broadcasting of
// size-1 dims). scale has the real type, zero_point the quantized type.
#pragma once

#include <cmath>
#include <optional>

#include "qonnx/quant/rounding.h"

namespace qonnx::kernels {

// nGraph's op::Quantize::RoundMode, by number.
enum class NGraphRoundMode : int {
  kNearestTowardInfinity = 0,  // ties away from zero    (QONNX HALF_UP)
  kNearestTowardZero = 1,      // ties toward zero       (QONNX HALF_DOWN)
  kNearestUpward = 2,          // ties toward +inf
  kNearestDownward = 3,        // ties toward -inf
  kNearestTowardEven = 4,      // ties to even           (QONNX ROUND)
  kTowardInfinity = 5,         // away from zero         (QONNX UP)
  kTowardZero = 6,             // truncate               (QONNX DOWN)
  kUp = 7,                     // ceil                   (QONNX CEIL)
  kDown = 8,                   // floor                  (QONNX FLOOR)
};

// nullopt unless 0 <= value <= 8.
std::optional<NGraphRoundMode> ngraph_round_mode_from_int(int64_t value);
// "ROUND_NEAREST_TOWARD_INFINITY", ... as nGraph spells them.
const char* ngraph_round_mode_name(NGraphRoundMode mode);
// The nGraph mode computing the same function as a QONNX rounding mode (every QONNX mode has one).
NGraphRoundMode ngraph_round_mode_for(quant::RoundingMode mode);

// The two nGraph modes without a QONNX name, as nGraph evaluates them in float32:
// nearest with ties toward +inf (ROUND_NEAREST_UPWARD) and toward -inf (ROUND_NEAREST_DOWNWARD).
inline float round_half_upward(float t) { return std::floor(t + 0.5f); }
inline float round_half_downward(float t) { return std::ceil(t - 0.5f); }

// One value rounded as nGraph does, in float32 (the formulas of SEMANTICS.md section 1 for the
// modes QONNX shares; floor(t + 0.5) and ceil(t - 0.5) for the other two).
inline float apply_ngraph_rounding(NGraphRoundMode mode, float t) {
  switch (mode) {
    case NGraphRoundMode::kNearestTowardInfinity: return quant::apply_rounding(quant::RoundingMode::kHalfUp, t);
    case NGraphRoundMode::kNearestTowardZero: return quant::apply_rounding(quant::RoundingMode::kHalfDown, t);
    case NGraphRoundMode::kNearestUpward: return round_half_upward(t);
    case NGraphRoundMode::kNearestDownward: return round_half_downward(t);
    case NGraphRoundMode::kNearestTowardEven: return quant::apply_rounding(quant::RoundingMode::kRound, t);
    case NGraphRoundMode::kTowardInfinity: return quant::apply_rounding(quant::RoundingMode::kUp, t);
    case NGraphRoundMode::kTowardZero: return quant::apply_rounding(quant::RoundingMode::kDown, t);
    case NGraphRoundMode::kUp: return quant::apply_rounding(quant::RoundingMode::kCeil, t);
    case NGraphRoundMode::kDown: return quant::apply_rounding(quant::RoundingMode::kFloor, t);
  }
  return t;
}

}  // namespace qonnx::kernels
