// Unary math: Neg Abs Sign Sqrt Reciprocal Exp Log Erf Floor Ceil Round and the trigonometric and
// hyperbolic functions. float16/bfloat16 go through float32; float32 stays float32 (as numpy).
#include <cmath>
#include <type_traits>

#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"

namespace qonnx::kernels {
namespace {

// Declares `Status name(ctx)` computing expr of `v` for the element types in `set`.
#define QONNX_UNARY(name, set, expr)                           \
  Status name(exec::KernelContext& ctx) {                      \
    return unary_kernel<set>(ctx, [](auto v) { return expr; }); \
  }

// Negation and absolute value wrap for the most negative integer, like numpy.
template <typename C>
C negate(C v) {
  if constexpr (kIsInt<C>) return static_cast<C>(Wrap<C>(0) - static_cast<Wrap<C>>(v));
  else return -v;
}

template <typename C>
C absolute(C v) {
  if constexpr (std::is_unsigned_v<C>) return v;
  else return v < 0 ? negate(v) : v;
}

// -1, 0 or 1; NaN stays NaN.
template <typename C>
C sign(C v) {
  if constexpr (is_float_storage_v<C>)
    if (std::isnan(v)) return v;
  return v > C(0) ? C(1) : (v < C(0) ? C(-1) : C(0));
}

// Nearest integer, ties to even, whatever the floating-point environment says.
template <typename C>
C round_ties_even(C v) {
  C r = std::round(v);  // ties away from zero
  if (std::fabs(r - v) == C(0.5)) r = C(2) * std::round(v * C(0.5));
  return r;
}

// float: MLAS's erf, as onnxruntime; double: std::erf.
template <typename C>
C erf_like_ort(C v) {
  if constexpr (std::is_same_v<C, float>) return ort::mlas_erf(v);
  else return std::erf(v);
}

QONNX_UNARY(neg, kFloats | kSignedInts, negate(v))
QONNX_UNARY(abs, kNumeric, absolute(v))
QONNX_UNARY(sign_kernel, kNumeric, sign(v))
QONNX_UNARY(sqrt, kFloats, std::sqrt(v))
QONNX_UNARY(reciprocal, kFloats, decltype(v)(1) / v)
QONNX_UNARY(exp, kFloats, std::exp(v))
QONNX_UNARY(log, kFloats, std::log(v))
// onnxruntime's erf is built on fused multiply-adds.
Status erf(exec::KernelContext& ctx) {
  return unary_kernel_fma<kFloats>(ctx, [](auto v) { return erf_like_ort(v); });
}
QONNX_UNARY(floor, kFloats, std::floor(v))
QONNX_UNARY(ceil, kFloats, std::ceil(v))
QONNX_UNARY(round, kFloats, round_ties_even(v))
QONNX_UNARY(sin, kFloats, std::sin(v))
QONNX_UNARY(cos, kFloats, std::cos(v))
QONNX_UNARY(tan, kFloats, std::tan(v))
QONNX_UNARY(asin, kFloats, std::asin(v))
QONNX_UNARY(acos, kFloats, std::acos(v))
QONNX_UNARY(atan, kFloats, std::atan(v))
QONNX_UNARY(sinh, kFloats, std::sinh(v))
QONNX_UNARY(cosh, kFloats, std::cosh(v))
QONNX_UNARY(asinh, kFloats, std::asinh(v))
QONNX_UNARY(acosh, kFloats, std::acosh(v))
QONNX_UNARY(atanh, kFloats, std::atanh(v))

#undef QONNX_UNARY

}  // namespace

void register_unary_kernels(exec::KernelRegistry& r) {
  // Version 1 also had `consumed_inputs` (an in-place hint, not read); 6 and 13 only widened the types.
  r.add("", "Neg", {1, exec::kNoUpperVersion}, neg);
  r.add("", "Abs", {1, exec::kNoUpperVersion}, abs);
  r.add("", "Sign", {9, exec::kNoUpperVersion}, sign_kernel);
  r.add("", "Sqrt", {1, exec::kNoUpperVersion}, sqrt);
  r.add("", "Reciprocal", {1, exec::kNoUpperVersion}, reciprocal);
  r.add("", "Exp", {1, exec::kNoUpperVersion}, exp);
  r.add("", "Log", {1, exec::kNoUpperVersion}, log);
  r.add("", "Erf", {9, exec::kNoUpperVersion}, erf);
  r.add("", "Floor", {1, exec::kNoUpperVersion}, floor);
  r.add("", "Ceil", {1, exec::kNoUpperVersion}, ceil);
  r.add("", "Round", {11, exec::kNoUpperVersion}, round);
  r.add("", "Sin", {7, exec::kNoUpperVersion}, sin);
  r.add("", "Cos", {7, exec::kNoUpperVersion}, cos);
  r.add("", "Tan", {7, exec::kNoUpperVersion}, tan);
  r.add("", "Asin", {7, exec::kNoUpperVersion}, asin);
  r.add("", "Acos", {7, exec::kNoUpperVersion}, acos);
  r.add("", "Atan", {7, exec::kNoUpperVersion}, atan);
  r.add("", "Sinh", {9, exec::kNoUpperVersion}, sinh);
  r.add("", "Cosh", {9, exec::kNoUpperVersion}, cosh);
  r.add("", "Asinh", {9, exec::kNoUpperVersion}, asinh);
  r.add("", "Acosh", {9, exec::kNoUpperVersion}, acosh);
  r.add("", "Atanh", {9, exec::kNoUpperVersion}, atanh);
}

}  // namespace qonnx::kernels
