#include "qonnx/exec/dtype_dispatch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "qonnx/support/float8.h"

namespace qonnx::exec {
namespace {

template <typename T>
float load_float(const T& v) {
  if constexpr (std::is_same_v<T, Half>) return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return bfloat16_to_float(v.bits);
  else return static_cast<float>(v);
}

// Float to integer the way common runtimes do it: truncation, saturating out of range, NaN -> 0.
template <typename To, typename From>
To float_to_int(From v) {
  if (std::isnan(v)) return To(0);
  double d = static_cast<double>(v);
  if (d <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return static_cast<To>(v);
}

template <typename To, typename From>
To convert(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, Half>) {
    if constexpr (std::is_same_v<From, double>) return Half{float_to_half(static_cast<float>(v))};
    else return Half{float_to_half(load_float(v))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16{float_to_bfloat16(load_float(v))};
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return convert<To>(load_float(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

namespace {

// A 4-bit tensor as the int8/uint8 tensor holding the same bytes (each element already extended).
Tensor widen_4bit(const Tensor& in) {
  Tensor out(in.dtype() == DType::kInt4 ? DType::kInt8 : DType::kUInt8, in.dims());
  if (in.numel() > 0) std::memcpy(out.raw(), in.raw(), in.nbytes());
  return out;
}

Status cannot_cast(DType from, DType to) {
  return Status(Code::kUnsupported, std::string("cannot cast ") + dtype_name(from) + " to " + dtype_name(to));
}

}  // namespace

Result<Tensor> cast_tensor(const Tensor& in, DType to) { return cast_tensor(in, to, true); }

Result<Tensor> cast_tensor(const Tensor& in, DType to, bool saturate) {
  if (in.dtype() == to) return in;
  // The new types go through the float32 (float8) or 8-bit (4-bit) values they stand for.
  if (dtype_is_4bit(in.dtype())) return cast_tensor(widen_4bit(in), to, saturate);
  if (dtype_is_float8(in.dtype())) {
    Tensor f(DType::kFloat, in.dims());
    const uint8_t* codes = in.data<uint8_t>();
    for (int64_t i = 0; i < in.numel(); ++i) f.data<float>()[i] = float8_to_float(codes[i], in.dtype());
    return cast_tensor(f, to, saturate);
  }
  const auto numeric = [](DType t) { return visit_dtype(t, [](auto) {}); };
  if (!numeric(in.dtype())) return cannot_cast(in.dtype(), to);
  if (dtype_is_float8(to)) {
    QONNX_ASSIGN_OR_RETURN(const Tensor f, cast_tensor(in, DType::kFloat));
    Tensor out(to, in.dims());
    for (int64_t i = 0; i < in.numel(); ++i) out.data<uint8_t>()[i] = float_to_float8(f.data<float>()[i], to, saturate);
    return out;
  }
  if (dtype_is_4bit(to)) {
    // As ONNX's Cast-21 reference: clip to the range, then round half to even (NaN -> 0).
    const double lo = to == DType::kInt4 ? -8.0 : 0.0, hi = to == DType::kInt4 ? 7.0 : 15.0;
    Tensor out(to, in.dims());
    for (int64_t i = 0; i < in.numel(); ++i) {
      const double v = element_as_double(in, i);
      out.data<int8_t>()[i] = static_cast<int8_t>(std::isnan(v) ? 0.0 : std::nearbyint(std::clamp(v, lo, hi)));
    }
    return out;
  }
  if (!numeric(to)) return cannot_cast(in.dtype(), to);
  Tensor out(to, in.dims());
  visit_dtype(in.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    const From* src = in.data<From>();
    visit_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      To* dst = out.data<To>();
      for (int64_t i = 0; i < in.numel(); ++i) dst[i] = convert<To>(src[i]);
    });
  });
  return out;
}

double element_as_double(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kInt4) return t.data<int8_t>()[i];
  if (t.dtype() == DType::kUInt4) return t.data<uint8_t>()[i];
  if (dtype_is_float8(t.dtype())) return float8_to_float(t.data<uint8_t>()[i], t.dtype());
  double r = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    r = to_double(t.data<T>()[i]);
  });
  return r;
}

}  // namespace qonnx::exec
