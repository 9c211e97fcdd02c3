// Runs a generic lambda with a value of the C++ type behind a DType.
#pragma once

#include <cstdint>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

// 16-bit float storage types, distinct from uint16_t for dispatch.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// f(T{}) for the storage type of `dtype` (bool as bool, float16 as Half). Returns false for
// string, complex and undefined.
template <typename F>
bool visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat: f(float{}); return true;
    case DType::kDouble: f(double{}); return true;
    case DType::kInt8: f(int8_t{}); return true;
    case DType::kInt16: f(int16_t{}); return true;
    case DType::kInt32: f(int32_t{}); return true;
    case DType::kInt64: f(int64_t{}); return true;
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kUInt16: f(uint16_t{}); return true;
    case DType::kUInt32: f(uint32_t{}); return true;
    case DType::kUInt64: f(uint64_t{}); return true;
    case DType::kBool: f(bool{}); return true;
    case DType::kFloat16: f(Half{}); return true;
    case DType::kBFloat16: f(BFloat16{}); return true;
    default: return false;
  }
}

template <typename T>
inline double to_double(T v) { return static_cast<double>(v); }
template <>
inline double to_double<Half>(Half v) { return half_to_float(v.bits); }
template <>
inline double to_double<BFloat16>(BFloat16 v) { return bfloat16_to_float(v.bits); }

// Converts a tensor to another element type with ONNX Cast semantics (C conversions; float to
// bool is "non-zero"; float16 via float32). Strings and complex numbers are kUnsupported.
Result<Tensor> cast_tensor(const Tensor& in, DType to);

// Element i of a numeric tensor as double.
double element_as_double(const Tensor& t, int64_t i);

}  // namespace qonnx::exec
