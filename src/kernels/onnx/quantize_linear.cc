// QuantizeLinear, DequantizeLinear (per tensor from opset 10, per axis from 13) and
// DynamicQuantizeLinear. Q: y = saturate(rne(x / scale) + zero_point), the zero point added after
// rounding; DQ: y = (x - zero_point) * scale.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_util.h"
#include "kernels/qonnx/fast_kernels.h"
#include "kernels/qonnx/fast_math.h"
#include "kernels/qonnx/quant_avx2.h"
#include "kernels/qonnx/simd_dispatch.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/rounding.h"

namespace qonnx::kernels {
namespace {

// Where element e of x finds its scale and zero point: index (e / inner) % count.
struct ParamLayout {
  int64_t count = 1;
  int64_t inner = 1;
  int64_t index(int64_t e) const { return count == 1 ? 0 : (e / inner) % count; }
};

// Checks scale (input 1) and zero point (input 2, optional) against x and returns the layout:
// per tensor for one value, per axis for a 1-D tensor along `axis` (opset 13+).
Result<ParamLayout> param_layout(const exec::KernelContext& ctx, const Tensor& x, const Tensor& scale,
                                 const Tensor* zp) {
  if (ctx.op_version() >= 21 && ctx.attr_int("block_size", 0) != 0)
    return ctx.error(Code::kUnsupported, "blocked quantization (block_size) is not supported");
  if (!dtype_is_float(scale.dtype()))
    return ctx.input_error(Code::kInvalidModel, 1, "scale must be a float type, got {}", dtype_name(scale.dtype()));
  if (zp && zp->numel() != scale.numel())
    return ctx.input_error(Code::kInvalidModel, 2, "zero point shape {} differs from the scale's {}",
                           dims_to_string(zp->dims()), dims_to_string(scale.dims()));
  ParamLayout layout;
  if (scale.numel() == 1 && scale.rank() <= 1) return layout;
  if (ctx.op_version() < 13)
    return ctx.input_error(Code::kInvalidModel, 1, "scale must be a scalar before opset 13, got shape {}",
                           dims_to_string(scale.dims()));
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis >= rank)
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for input rank {}", axis, rank);
  if (axis < 0) axis += rank;
  if (scale.rank() != 1 || scale.numel() != x.dim(static_cast<size_t>(axis)))
    return ctx.input_error(Code::kInvalidModel, 1, "per-axis scale must be 1-D of length {} (axis {}), got shape {}",
                           x.dim(static_cast<size_t>(axis)), axis, dims_to_string(scale.dims()));
  layout.count = scale.numel();
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) layout.inner *= x.dim(d);
  return layout;
}

Result<std::vector<float>> float_values(const exec::KernelContext& ctx, size_t i, const Tensor& t) {
  if (!dtype_is_float(t.dtype()) && !dtype_is_integer(t.dtype()))
    return ctx.input_error(Code::kUnsupported, i, "type {} is not supported", dtype_name(t.dtype()));
  QONNX_ASSIGN_OR_RETURN(Tensor f, exec::cast_tensor(t, DType::kFloat));
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

// ---- the loops (also called by bench/ and tests/ through kernels/qonnx/fast_kernels.h) ----

// Calls run(offset, len, param_index, per_element) over the elements [0, n): per tensor one run; per
// axis with inner > 1 one run per (outer, channel) with the channel's parameters; per axis on the
// last dim (inner 1) one run per row of `count` elements whose parameters are s[0..count).
template <typename F>
void for_each_param_run(int64_t n, int64_t count, int64_t inner, F&& run) {
  if (count <= 1) {
    run(int64_t{0}, n, int64_t{0}, false);
  } else if (inner == 1) {
    for (int64_t e = 0; e < n; e += count) run(e, count, int64_t{0}, true);
  } else {
    for (int64_t e = 0, c = 0; e < n; e += inner, c = c + 1 == count ? 0 : c + 1) run(e, inner, c, false);
  }
}

// y = saturate(rne(x / s) + zp), NaN -> 0. The clamp to [lo - zp, hi - zp] before adding the
// (integral, small) zero point is exact, so this equals the double-precision reference formula.
template <typename T, bool kArray>
void quantize_run(const float* x, const float* s, const float* z, T* y, int64_t n) {
  const float s0 = s[0], z0 = z[0];
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  for (int64_t i = 0; i < n; ++i) {
    const float si = kArray ? s[i] : s0, zi = kArray ? z[i] : z0;
    const float q = fast::round_half_even_f(x[i] / si);
    float c = q > hi - zi ? hi - zi : q;
    c = c < lo - zi ? lo - zi : c;
    c = q == q ? c + zi : 0.0f;
    y[i] = static_cast<T>(static_cast<int32_t>(c));
  }
}

template <typename T, typename W, bool kArray>
void dequantize_run(const T* x, const float* s, const T* z, float* y, int64_t n) {
  const float s0 = s[0];
  const W z0 = static_cast<W>(z[0]);
  for (int64_t i = 0; i < n; ++i) {
    const float si = kArray ? s[i] : s0;
    const W zi = kArray ? static_cast<W>(z[i]) : z0;
    y[i] = static_cast<float>(static_cast<W>(x[i]) - zi) * si;
  }
}

}  // namespace

void quantize_linear_into(const float* x, int64_t n, const float* s, const float* zp, int64_t count, int64_t inner,
                          DType out_type, void* y) {
  std::vector<float> zeros;
  if (!zp) {
    zeros.assign(static_cast<size_t>(std::max<int64_t>(count, 1)), 0.0f);
    zp = zeros.data();
  }
  exec::visit_dtype(out_type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
                  std::is_same_v<T, uint16_t>) {
      T* yt = static_cast<T*>(y);
      const bool simd = simd_level() == SimdLevel::kAvx2;
      for_each_param_run(n, count, inner, [&](int64_t e, int64_t len, int64_t c, bool per_element) {
        const float* so = per_element ? s : s + c;
        const float* zo = per_element ? zp : zp + c;
        const int64_t i = simd ? avx2::quantize_linear_run<T>(x + e, so, zo, per_element, yt + e, len) : 0;
        if (per_element) quantize_run<T, true>(x + e + i, so + i, zo + i, yt + e + i, len - i);
        else quantize_run<T, false>(x + e + i, so, zo, yt + e + i, len - i);
      });
    }
  });
}

void dequantize_linear_into(const void* x, DType in_type, int64_t n, const float* s, const void* zp, int64_t count,
                            int64_t inner, float* y) {
  exec::visit_dtype(in_type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
                  std::is_same_v<T, uint16_t> || std::is_same_v<T, int32_t>) {
      // Differences of 8/16-bit values are exact in int32; int32 ones need 64 bits.
      using W = std::conditional_t<std::is_same_v<T, int32_t>, int64_t, int32_t>;
      const T* xt = static_cast<const T*>(x);
      std::vector<T> zeros;
      const T* zt = static_cast<const T*>(zp);
      if (!zt) {
        zeros.assign(static_cast<size_t>(std::max<int64_t>(count, 1)), T(0));
        zt = zeros.data();
      }
      const bool simd = simd_level() == SimdLevel::kAvx2;  // int32 (int64 differences) stays portable
      for_each_param_run(n, count, inner, [&](int64_t e, int64_t len, int64_t c, bool per_element) {
        const float* so = per_element ? s : s + c;
        const T* zo = per_element ? zt : zt + c;
        int64_t i = 0;
        if constexpr (!std::is_same_v<T, int32_t>)
          if (simd) i = avx2::dequantize_linear_run<T>(xt + e, so, zo, per_element, y + e, len);
        if (per_element) dequantize_run<T, W, true>(xt + e + i, so + i, zo + i, y + e + i, len - i);
        else dequantize_run<T, W, false>(xt + e + i, so, zo, y + e + i, len - i);
      });
    }
  });
}

namespace {

Status quantize_linear(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "y_scale"));
  const Tensor* zp = ctx.input(2);
  DType out_type = DType::kUInt8;
  if (zp) out_type = zp->dtype();
  else if (ctx.op_version() >= 21 && ctx.attr_int("output_dtype", 0) != 0)
    out_type = static_cast<DType>(ctx.attr_int("output_dtype", 0));
  if (!is_quantized_storage(out_type) || out_type == DType::kInt32)
    return ctx.error(Code::kUnsupported, "QuantizeLinear to {} is not supported (int8, uint8, int16, uint16)",
                     dtype_name(out_type));
  QONNX_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(ctx, *x, *scale, zp));
  // float32 x is read in place; other types are converted to float32 first (as before).
  if (!dtype_is_float(x->dtype()) && !dtype_is_integer(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported", dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> ss, float_values(ctx, 1, *scale));
  std::vector<float> zs;
  if (zp) {
    QONNX_ASSIGN_OR_RETURN(zs, float_values(ctx, 2, *zp));
  }
  Tensor out(out_type, x->dims());
  quantize_linear_into(xf.data<float>(), x->numel(), ss.data(), zp ? zs.data() : nullptr, layout.count, layout.inner,
                       out_type, out.raw());
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status dequantize_linear(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "x_scale"));
  const Tensor* zp = ctx.input(2);
  if (!is_quantized_storage(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (int8, uint8, int16, uint16, int32)",
                           dtype_name(x->dtype()));
  if (zp && zp->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, 2, "zero point type {} differs from x's {}", dtype_name(zp->dtype()),
                           dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(ctx, *x, *scale, zp));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> ss, float_values(ctx, 1, *scale));
  Tensor y(DType::kFloat, x->dims());
  dequantize_linear_into(x->raw(), x->dtype(), x->numel(), ss.data(), zp ? zp->raw() : nullptr, layout.count,
                         layout.inner, y.data<float>());
  // The output has the scale's type (float16 / bfloat16 scales from opset 19).
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, scale->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// uint8 quantization of x over [min(0, min x), max(0, max x)]. An all-zero (or empty) x has no
// range: scale 0, zero point 0 and y 0 rather than a division by zero.
Status dynamic_quantize_linear(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  if (x->dtype() != DType::kFloat)
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float)", dtype_name(x->dtype()));
  const float* xv = x->data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x->numel(); ++i) {
    lo = std::min(lo, xv[i]);
    hi = std::max(hi, xv[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  float zero_point = 0.0f;
  if (scale != 0.0f) zero_point = round_half_even(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  Tensor y(DType::kUInt8, x->dims());
  if (scale != 0.0f)
    store_saturated(&y, [&](int64_t e) {
      return static_cast<double>(round_half_even(xv[e] / scale) + zero_point);
    });
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, Tensor::scalar<float>(DType::kFloat, scale));
  ctx.set_output(2, Tensor::scalar<uint8_t>(DType::kUInt8, static_cast<uint8_t>(zero_point)));
  return Status::ok();
}

}  // namespace

// One entry per op: the kernels read the version for the per-axis (13) and blocked (21) forms.
void register_quantize_linear_kernels(exec::KernelRegistry& r) {
  r.add("", "QuantizeLinear", 10, quantize_linear);
  r.add("", "DequantizeLinear", 10, dequantize_linear);
  r.add("", "DynamicQuantizeLinear", 11, dynamic_quantize_linear);
}

}  // namespace qonnx::kernels
