// Transpose permutations between channels-first (N, C, d...) and channels-last (N, d..., C) layouts,
// shared by the passes that lower or introduce channels-last ops.
#pragma once

#include <cstdint>
#include <vector>

namespace qonnx::passes {

// Transpose(perm = to_channels_last_perm(r)) turns (N, C, d...) into (N, d..., C).
inline std::vector<int64_t> to_channels_last_perm(int64_t rank) {
  std::vector<int64_t> perm = {0};
  for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
  perm.push_back(1);
  return perm;
}

// The inverse: (N, d..., C) back to (N, C, d...).
inline std::vector<int64_t> to_channels_first_perm(int64_t rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d) perm.push_back(d);
  return perm;
}

}  // namespace qonnx::passes
