// Axis attributes of ONNX ops: negative values count from the end.
#pragma once

#include <cstdint>

namespace qonnx::kernels {

// Maps axis in [-rank, rank) to [0, rank); false when it is out of range.
inline bool normalize_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

}  // namespace qonnx::kernels
