// The kernels' transpose, for code outside the kernels that transposes constants (passes): the same
// copies the ONNX Transpose kernel makes, so a folded initializer equals what exec would compute.
#pragma once

#include <cstdint>
#include <vector>

#include "qonnx/tensor.h"

namespace qonnx::kernels {

// x transposed by perm (perm[i] = input axis of output axis i; a valid permutation of x's rank).
Tensor transposed(const Tensor& x, const std::vector<int64_t>& perm);

}  // namespace qonnx::kernels
