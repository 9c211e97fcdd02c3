// Axis-list normalisation and integer-list inputs (axes, shapes, pads, indices) shared by kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/common/axis.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Normalises every axis of a list; false when one is out of range or two name the same axis.
inline bool normalize_axes(std::vector<int64_t>* axes, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t& a : *axes) {
    if (!normalize_axis(a, rank, &a) || seen[static_cast<size_t>(a)]) return false;
    seen[static_cast<size_t>(a)] = true;
  }
  return true;
}

// The elements of an int32 or int64 tensor (any shape) as int64; nullopt for other dtypes.
inline std::optional<std::vector<int64_t>> read_ints(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + t.numel(), v.begin());
  } else if (t.dtype() == DType::kInt32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + t.numel(), v.begin());
  } else {
    return std::nullopt;
  }
  return v;
}

}  // namespace qonnx::kernels
