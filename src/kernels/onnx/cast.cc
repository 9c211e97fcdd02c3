// Cast and CastLike between numbers, bool, float16/bfloat16 and strings. Numeric conversions are
// exec::cast_tensor's (C conversions, float -> int truncates and saturates, NaN -> 0). Strings
// parse as decimal or scientific numbers ("INF", "+INF", "-INF", "NaN" in any case); numbers
// print as the shortest text that reads back to the same value, with "NaN", "INF" and "-INF".
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

bool is_numeric_or_bool(DType t) { return dtype_is_float(t) || dtype_is_integer(t) || t == DType::kBool; }

template <typename T>
std::string number_to_string(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (kIsInt<T>) {
    return fmt::format("{}", v);
  } else {
    const auto f = load(v);
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f > 0 ? "INF" : "-INF";
    if constexpr (is_half_storage_v<T>) {
      // Shortest text that reads back to the same 16-bit value.
      for (int digits = 1; digits < 9; ++digits) {
        std::string s = fmt::format("{:.{}g}", f, digits);
        if (store<T>(std::strtof(s.c_str(), nullptr)).bits == v.bits) return s;
      }
    }
    return fmt::format("{}", f);
  }
}

// Parses one string element into T; false when it is not a number.
template <typename T>
bool parse_number(const std::string& s, T* out) {
  if constexpr (kIsInt<T>) {
    // Integers parse exactly (doubles lose precision beyond 2^53).
    T v{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      *out = v;
      return true;
    }
  }
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return false;
  *out = from_double<T>(d);
  return true;
}

Result<Tensor> cast_to(const exec::KernelContext& ctx, const Tensor& x, DType to) {
  const DType from = x.dtype();
  if (from == to) return x;
  const bool from_ok = is_numeric_or_bool(from) || from == DType::kString;
  if (!from_ok) return unsupported_type(ctx, 0, from);
  if (!is_numeric_or_bool(to) && to != DType::kString)
    return ctx.error(Code::kUnsupported, "Cast to {} is not supported", dtype_name(to));
  if (from != DType::kString && to != DType::kString) return exec::cast_tensor(x, to);

  Tensor out(to, x.dims());
  if (to == DType::kString) {
    exec::visit_dtype(from, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) out.strings()[static_cast<size_t>(i)] = number_to_string(in[i]);
    });
    return out;
  }
  Status st;
  exec::visit_dtype(to, [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    for (int64_t i = 0; i < x.numel() && st.is_ok(); ++i) {
      const std::string& s = x.strings()[static_cast<size_t>(i)];
      if (!parse_number(s, &o[i]))
        st = ctx.input_error(Code::kInvalidModel, 0, "element {} \"{}\" is not a number", i, s);
    }
  });
  QONNX_RETURN_IF_ERROR(st);
  return out;
}

Status cast(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (!ctx.has_attr("to")) return ctx.error(Code::kInvalidModel, "Cast needs attribute 'to'");
  const int64_t to = ctx.attr_int("to", 0);
  if (to < 0 || to > INT32_MAX || !dtype_known(static_cast<int32_t>(to)) || to == 0)
    return ctx.error(Code::kUnsupported, "Cast to data type {} is not supported", to);
  QONNX_ASSIGN_OR_RETURN(Tensor out, cast_to(ctx, *x, static_cast<DType>(to)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status cast_like(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* like, ctx.required(1, "target_type"));
  QONNX_ASSIGN_OR_RETURN(Tensor out, cast_to(ctx, *x, like->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_cast_kernels(exec::KernelRegistry& r) {
  // Cast-6 took 'to' as an int (Cast-1 as a string); later versions only added types.
  r.add("", "Cast", 6, cast);
  r.add("", "CastLike", 15, cast_like);
}

}  // namespace qonnx::kernels
