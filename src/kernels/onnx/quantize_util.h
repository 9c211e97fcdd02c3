// Integer storage for the ONNX quantized ops (QuantizeLinear, QLinearMatMul, QLinearConv, ...).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// int8, uint8, int16, uint16 or int32: the integer types quantized ops may produce.
inline bool is_quantized_storage(DType d) {
  return d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt16 || d == DType::kUInt16 || d == DType::kInt32;
}

// out[i] = value(i) clamped to out's integer type (NaN -> 0). value(i) is already rounded.
template <typename F>
void store_saturated(Tensor* out, F&& value) {
  exec::visit_dtype(out->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      T* o = out->data<T>();
      for (int64_t i = 0; i < out->numel(); ++i) {
        const double v = value(i);
        o[i] = std::isnan(v) ? T(0) : static_cast<T>(std::clamp(v, lo, hi));
      }
    }
  });
}

}  // namespace qonnx::kernels
