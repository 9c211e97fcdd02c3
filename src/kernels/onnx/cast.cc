// Cast and CastLike between numbers, bool, float16/bfloat16, float8 (19), int4/uint4 (21) and strings.
// Numeric conversions are exec::cast_tensor's (C conversions, float -> int truncates and saturates,
// NaN -> 0; float8 rounds half to even and saturates unless `saturate` is 0). Strings
// parse as decimal or scientific numbers ("INF", "+INF", "-INF", "NaN" in any case); numbers
// print as the shortest text that reads back to the same value, with "NaN", "INF" and "-INF".
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
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

// The types each Cast version knows beyond numbers, bool and strings: float8 from 19, int4/uint4 from 21.
template <int kSince>
bool type_in_version(DType t) {
  if (dtype_is_float8(t)) return kSince >= 19;
  if (dtype_is_4bit(t)) return kSince >= 21;
  return is_numeric_or_bool(t) || t == DType::kString;
}

struct CastAttrs {
  DType to = DType::kUndefined;  // CastLike: unset, the second input's type
  bool saturate = true;          // float8 targets, from opset 19
};

template <int kSince>
Result<Tensor> cast_to(const exec::KernelContext& ctx, const Tensor& x, DType to, bool saturate) {
  const DType from = x.dtype();
  if (!type_in_version<kSince>(from)) return unsupported_type(ctx, 0, from);
  if (!type_in_version<kSince>(to))
    return ctx.error(Code::kUnsupported, "Cast-{} to {} is not supported", kSince, dtype_name(to));
  if (from == to) return x;
  if (from != DType::kString && to != DType::kString) return exec::cast_tensor(x, to, saturate);
  const DType number = from == DType::kString ? to : from;
  if (dtype_is_float8(number) || dtype_is_4bit(number))
    return ctx.error(Code::kUnsupported, "Cast between string and {} is not supported", dtype_name(number));

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

template <int kSince>
Result<CastAttrs> prepare_cast(const ir::Node& node, int64_t /*version*/) {
  CastAttrs a;
  if constexpr (kSince >= 19) {
    QONNX_ASSIGN_OR_RETURN(a.saturate, flag_attr(node, "saturate", true));
  }
  if (node.op_type() == "CastLike") return a;
  if (!node.has_attr("to")) return Status(Code::kInvalidModel, "Cast needs attribute 'to'");
  QONNX_ASSIGN_OR_RETURN(const int64_t to, int_attr(node, "to", 0));
  if (to <= 0 || to > INT32_MAX || !dtype_known(static_cast<int32_t>(to)))
    return Status(Code::kUnsupported, fmt::format("Cast to data type {} is not supported", to));
  a.to = static_cast<DType>(to);
  return a;
}

template <int kSince>
Status cast(exec::KernelContext& ctx, const CastAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  DType to = attrs.to;
  if (to == DType::kUndefined) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* like, ctx.required(1, "target_type"));
    to = like->dtype();
  }
  QONNX_ASSIGN_OR_RETURN(Tensor out, cast_to<kSince>(ctx, *x, to, attrs.saturate));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

template <int kSince>
void add_cast(exec::KernelRegistry& r, int until) {
  const exec::Kernel k = exec::typed_kernel<CastAttrs, prepare_cast<kSince>, cast<kSince>>();
  r.add("", "Cast", {std::max(kSince, 6), until}, k);
  if (until >= 15) r.add("", "CastLike", {std::max(kSince, 15), until}, k);
}

}  // namespace

void register_cast_kernels(exec::KernelRegistry& r) {
  // Cast-6 took 'to' as an int (Cast-1 as a string); later versions added types and `saturate`.
  add_cast<6>(r, 18);
  add_cast<19>(r, 20);
  add_cast<21>(r, exec::kNoUpperVersion);
}

}  // namespace qonnx::kernels
