#include "qonnx/exec/dtype_dispatch.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

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

Result<Tensor> cast_tensor(const Tensor& in, DType to) {
  if (in.dtype() == to) return in;
  const auto numeric = [](DType t) { return visit_dtype(t, [](auto) {}); };
  if (!numeric(in.dtype()) || !numeric(to))
    return Status(Code::kUnsupported, std::string("cannot cast ") + dtype_name(in.dtype()) + " to " + dtype_name(to));
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
  double r = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    r = to_double(t.data<T>()[i]);
  });
  return r;
}

}  // namespace qonnx::exec
