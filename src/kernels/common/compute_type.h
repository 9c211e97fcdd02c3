// The arithmetic type behind a storage type: float16 and bfloat16 compute in float32 and round back
// on store, every other type computes in itself.
#pragma once

#include <type_traits>

#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {

template <typename T>
constexpr bool is_half_storage_v = std::is_same_v<T, exec::Half> || std::is_same_v<T, exec::BFloat16>;

// float, double, float16 or bfloat16.
template <typename T>
constexpr bool is_float_storage_v = std::is_floating_point_v<T> || is_half_storage_v<T>;

template <typename T>
using Compute = std::conditional_t<is_half_storage_v<T>, float, T>;

template <typename T>
Compute<T> load(T v) {
  if constexpr (std::is_same_v<T, exec::Half>) return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, exec::BFloat16>) return bfloat16_to_float(v.bits);
  else return v;
}

template <typename T>
T store(Compute<T> v) {
  if constexpr (std::is_same_v<T, exec::Half>) return exec::Half{float_to_half(v)};
  else if constexpr (std::is_same_v<T, exec::BFloat16>) return exec::BFloat16{float_to_bfloat16(v)};
  else return static_cast<T>(v);
}

}  // namespace qonnx::kernels
