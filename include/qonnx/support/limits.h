// Limits on what a model or input file may ask for, checked before any work that grows with them.
#pragma once

#include <cstdint>

namespace qonnx {

// Largest tensor rank accepted (numpy allows 64 too). A hostile file can declare a rank of a million
// with every dim 1; per-element work then multiplies by the rank, so such files are refused up front.
inline constexpr int64_t kMaxRank = 64;

}  // namespace qonnx
