// QuantizeLinear, DequantizeLinear (per tensor from opset 10, per axis from 13, float8 from 19,
// int4/uint4 and blocked scales from 21) and DynamicQuantizeLinear. Q: y = saturate(rne(x / scale) + zero_point), the zero point added after
// rounding; DQ: y = (x - zero_point) * scale.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/integer_form.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/fast_math.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_linear.h"
#include "kernels/onnx/quantize_util.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/support/float8.h"
#include "qonnx/quant/rounding.h"

namespace qonnx::kernels {
namespace {

// Where element e of x finds its scale and zero point: per tensor (count 1), per axis (index
// (e / inner) % count) or, from opset 21, blocked (`block` consecutive indices along the axis share one).
struct ParamLayout {
  int64_t count = 1;
  int64_t inner = 1;
  int64_t block = 0;        // 0: not blocked
  int64_t axis_dim = 1;     // blocked: x's dim at the axis
  int64_t index(int64_t e) const {
    if (block == 0) return count == 1 ? 0 : (e / inner) % count;
    const int64_t blocks = count;  // scale's dim at the axis
    const int64_t outer = e / (axis_dim * inner), a = (e / inner) % axis_dim, i = e % inner;
    return (outer * blocks + a / block) * inner + i;
  }
};

// Checks scale (input 1) and zero point (input 2, optional) against x and returns the layout:
// per tensor for one value, per axis for a 1-D tensor along `axis` (opset 13+), blocked along
// `axis` when `block_size` is set (opset 21+: scale has x's rank, ceil(dim / block_size) at the axis).
Result<ParamLayout> param_layout(const exec::KernelContext& ctx, const Tensor& x, const Tensor& scale,
                                 const Tensor* zp, bool per_axis, int64_t axis_attr, int64_t block_size) {
  if (!dtype_is_float(scale.dtype()))
    return ctx.input_error(Code::kInvalidModel, 1, "scale must be a float type, got {}", dtype_name(scale.dtype()));
  if (zp && zp->dims() != scale.dims() && !(zp->numel() == 1 && scale.numel() == 1))
    return ctx.input_error(Code::kInvalidModel, 2, "zero point shape {} differs from the scale's {}",
                           dims_to_string(zp->dims()), dims_to_string(scale.dims()));
  ParamLayout layout;
  if (block_size < 0) return ctx.error(Code::kInvalidModel, "block_size must be >= 0, got {}", block_size);
  if (block_size == 0 && scale.numel() == 1 && scale.rank() <= 1) return layout;
  if (!per_axis)
    return ctx.input_error(Code::kInvalidModel, 1, "scale must be a scalar before opset 13, got shape {}",
                           dims_to_string(scale.dims()));
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = axis_attr;
  if (axis < -rank || axis >= rank)
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for input rank {}", axis, rank);
  if (axis < 0) axis += rank;
  const size_t ax = static_cast<size_t>(axis);
  for (size_t d = ax + 1; d < x.rank(); ++d) layout.inner *= x.dim(d);
  if (block_size > 0) {
    bool fits = scale.rank() == x.rank();
    for (size_t d = 0; fits && d < x.rank(); ++d)
      fits = d == ax ? scale.dim(d) == (x.dim(d) + block_size - 1) / block_size : scale.dim(d) == x.dim(d);
    if (!fits)
      return ctx.input_error(Code::kInvalidModel, 1, "blocked scale must have x's shape {} with ceil(dim / {}) at axis {}, got {}",
                             dims_to_string(x.dims()), block_size, axis, dims_to_string(scale.dims()));
    layout.block = block_size;
    layout.count = scale.dim(ax);
    layout.axis_dim = x.dim(ax);
    return layout;
  }
  if (scale.rank() != 1 || scale.numel() != x.dim(ax))
    return ctx.input_error(Code::kInvalidModel, 1, "per-axis scale must be 1-D of length {} (axis {}), got shape {}",
                           x.dim(ax), axis, dims_to_string(scale.dims()));
  layout.count = scale.numel();
  return layout;
}

Result<std::vector<float>> float_values(const exec::KernelContext& ctx, size_t i, const Tensor& t) {
  if (!dtype_is_float(t.dtype()) && !dtype_is_integer(t.dtype()) && !dtype_is_float8(t.dtype()))
    return ctx.input_error(Code::kUnsupported, i, "type {} is not supported", dtype_name(t.dtype()));
  QONNX_ASSIGN_OR_RETURN(Tensor f, exec::cast_tensor(t, DType::kFloat));
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

// ---- the loops (also called by bench/ and tests/ through kernels/onnx/quantize_linear.h) ----

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
      const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
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
      const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;  // int32 (int64 differences) stays portable
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

// What each opset's QuantizeLinear / DequantizeLinear adds: per-axis scales (13), float8 with
// `saturate` and float16/bfloat16 scales (19), int4/uint4/int16/uint16, `block_size` and
// QuantizeLinear's `output_dtype` (21). One registry entry per range, each with its own constants.
template <int kSince>
bool quantized_type_in_version(DType t) {
  if (t == DType::kInt8 || t == DType::kUInt8) return true;
  if (dtype_is_float8(t)) return kSince >= 19;
  // int16/uint16 were accepted before opset 21 too (onnxruntime's contrib ops); kept.
  if (t == DType::kInt16 || t == DType::kUInt16) return true;
  if (dtype_is_4bit(t)) return kSince >= 21;
  return false;
}

struct QdqAttrs {
  int64_t axis = 1;  // per-axis scales (13 on)
  bool saturate = true;
  int64_t block_size = 0;
  DType output_dtype = DType::kUndefined;  // QuantizeLinear-21 without a zero point
};

template <int kSince>
Result<QdqAttrs> prepare_qdq(const ir::Node& node, int64_t /*version*/) {
  QdqAttrs a;
  if constexpr (kSince >= 13) {
    QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 1));
  }
  if constexpr (kSince >= 19) {
    QONNX_ASSIGN_OR_RETURN(a.saturate, flag_attr(node, "saturate", true));
  }
  if constexpr (kSince >= 21) {
    QONNX_ASSIGN_OR_RETURN(a.block_size, int_attr(node, "block_size", 0));
    QONNX_ASSIGN_OR_RETURN(const int64_t out, int_attr(node, "output_dtype", 0));
    if (out != 0) {
      if (out < 0 || out > INT32_MAX || !dtype_known(static_cast<int32_t>(out)))
        return Status(Code::kInvalidModel, fmt::format("attribute 'output_dtype': {} is not a data type", out));
      a.output_dtype = static_cast<DType>(out);
    }
  }
  return a;
}

// Float scale and zero point per element of x (blocked and float8 paths, which are not on the fast loops).
Result<std::vector<float>> expand_params(const ParamLayout& layout, const std::vector<float>& values, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) out[static_cast<size_t>(e)] = values[static_cast<size_t>(layout.index(e))];
  return out;
}

template <int kSince>
Status quantize_linear(exec::KernelContext& ctx, const QdqAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "y_scale"));
  const Tensor* zp = ctx.input(2);
  DType out_type = zp ? zp->dtype() : attrs.output_dtype != DType::kUndefined ? attrs.output_dtype : DType::kUInt8;
  if (zp && attrs.output_dtype != DType::kUndefined && attrs.output_dtype != zp->dtype())
    return ctx.error(Code::kInvalidModel, "output_dtype {} differs from the zero point's type {}",
                     dtype_name(attrs.output_dtype), dtype_name(zp->dtype()));
  if (!quantized_type_in_version<kSince>(out_type))
    return ctx.error(Code::kUnsupported, "QuantizeLinear-{} to {} is not supported", kSince, dtype_name(out_type));
  QONNX_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(ctx, *x, *scale, zp, kSince >= 13, attrs.axis, attrs.block_size));
  if (!dtype_is_float(x->dtype()) && !dtype_is_integer(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported", dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> ss, float_values(ctx, 1, *scale));
  std::vector<float> zs;
  if (zp) {
    QONNX_ASSIGN_OR_RETURN(zs, float_values(ctx, 2, *zp));
  }
  Tensor out(out_type, x->dims());
  const int64_t n = x->numel();
  if (dtype_is_float8(out_type)) {
    // y = float8(x / scale), rounded half to even; ONNX requires a zero zero point here.
    for (float z : zs)
      if (z != 0.0f) return ctx.input_error(Code::kUnsupported, 2, "a float8 zero point must be 0, got {}", z);
    const float* xv = xf.data<float>();
    uint8_t* y = out.data<uint8_t>();
    for (int64_t e = 0; e < n; ++e) y[e] = float_to_float8(xv[e] / ss[static_cast<size_t>(layout.index(e))], out_type, attrs.saturate);
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  // 4-bit outputs run the 8-bit loop on the same bytes (one per element), then clamp to 4 bits:
  // clamping the 8-bit saturated value again equals saturating once to the 4-bit range.
  const DType loop_type = out_type == DType::kInt4 ? DType::kInt8 : out_type == DType::kUInt4 ? DType::kUInt8 : out_type;
  if (layout.block == 0) {
    quantize_linear_into(xf.data<float>(), n, ss.data(), zp ? zs.data() : nullptr, layout.count, layout.inner, loop_type,
                         out.raw());
  } else {
    QONNX_ASSIGN_OR_RETURN(std::vector<float> s_full, expand_params(layout, ss, n));
    std::vector<float> z_full;
    if (zp) {
      QONNX_ASSIGN_OR_RETURN(z_full, expand_params(layout, zs, n));
    }
    if (n > 0) quantize_linear_into(xf.data<float>(), n, s_full.data(), zp ? z_full.data() : nullptr, n, 1, loop_type, out.raw());
  }
  if (out_type == DType::kInt4)
    for (int64_t e = 0; e < n; ++e) out.data<int8_t>()[e] = std::clamp<int8_t>(out.data<int8_t>()[e], -8, 7);
  if (out_type == DType::kUInt4)
    for (int64_t e = 0; e < n; ++e) out.data<uint8_t>()[e] = std::min<uint8_t>(out.data<uint8_t>()[e], 15);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

template <int kSince>
Status dequantize_linear(exec::KernelContext& ctx, const QdqAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "x_scale"));
  const Tensor* zp = ctx.input(2);
  if (!quantized_type_in_version<kSince>(x->dtype()) && x->dtype() != DType::kInt32)
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported by DequantizeLinear-{}", dtype_name(x->dtype()), kSince);
  if (zp && zp->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, 2, "zero point type {} differs from x's {}", dtype_name(zp->dtype()),
                           dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(ParamLayout layout, param_layout(ctx, *x, *scale, zp, kSince >= 13, attrs.axis, attrs.block_size));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> ss, float_values(ctx, 1, *scale));
  const int64_t n = x->numel();
  Tensor y(DType::kFloat, x->dims());
  if (dtype_is_float8(x->dtype())) {
    // y = float(x) * scale; ONNX requires a zero zero point for float8.
    Tensor zf;
    if (zp) {
      QONNX_ASSIGN_OR_RETURN(zf, exec::cast_tensor(*zp, DType::kFloat));
    }
    for (int64_t i = 0; zp && i < zf.numel(); ++i)
      if (zf.data<float>()[i] != 0.0f)
        return ctx.input_error(Code::kUnsupported, 2, "a float8 zero point must be 0, got {}", zf.data<float>()[i]);
    const uint8_t* codes = x->data<uint8_t>();
    for (int64_t e = 0; e < n; ++e)
      y.data<float>()[e] = float8_to_float(codes[e], x->dtype()) * ss[static_cast<size_t>(layout.index(e))];
  } else {
    // 4-bit codes are stored one per byte, sign- or zero-extended: the 8-bit loop reads them as they are.
    const DType loop_type = x->dtype() == DType::kInt4 ? DType::kInt8 : x->dtype() == DType::kUInt4 ? DType::kUInt8 : x->dtype();
    if (layout.block == 0) {
      dequantize_linear_into(x->raw(), loop_type, n, ss.data(), zp ? zp->raw() : nullptr, layout.count, layout.inner,
                             y.data<float>());
    } else {
      QONNX_ASSIGN_OR_RETURN(std::vector<float> s_full, expand_params(layout, ss, n));
      Tensor z_full;
      if (zp) {
        z_full = Tensor(zp->dtype(), x->dims());
        const size_t es = dtype_size(zp->dtype());
        for (int64_t e = 0; e < n; ++e)
          std::memcpy(static_cast<uint8_t*>(z_full.raw()) + e * es, static_cast<const uint8_t*>(zp->raw()) + layout.index(e) * es, es);
      }
      if (n > 0)
        dequantize_linear_into(x->raw(), loop_type, n, s_full.data(), zp ? z_full.raw() : nullptr, n, 1, y.data<float>());
    }
  }
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
  if (scale != 0.0f) zero_point = quant::round_half_even(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  Tensor y(DType::kUInt8, x->dims());
  if (scale != 0.0f)
    store_saturated(&y, [&](int64_t e) {
      return static_cast<double>(quant::round_half_even(xv[e] / scale) + zero_point);
    });
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, Tensor::scalar<float>(DType::kFloat, scale));
  ctx.set_output(2, Tensor::scalar<uint8_t>(DType::kUInt8, static_cast<uint8_t>(zero_point)));
  return Status::ok();
}

// DequantizeLinear of 4/8/16-bit integers is float32(x - zero point) * scale with x - zero point exact:
// an integer form when scale and zero point are plan-time constants (one value, or one per index of axis).
std::vector<std::optional<exec::IntegerForm>> dequantize_linear_forms(const exec::PrepackContext& c) {
  std::vector<std::optional<exec::IntegerForm>> out(1);
  const auto& attrs = *static_cast<const QdqAttrs*>(c.prepared);
  const Tensor* scale = c.constant(1);
  const Tensor* zp = c.constant(2);
  if (!scale || (c.node->inputs().size() > 2 && c.node->inputs()[2] && !zp) || attrs.block_size != 0) return out;
  // x's type: its constant's, else the zero point's (the same by the op's type constraint), else declared.
  DType type = DType::kUndefined;
  if (const Tensor* x = c.constant(0)) {
    type = x->dtype();
  } else if (zp) {
    type = zp->dtype();
  } else if (const ir::Value* v = c.node->inputs()[0]; v && v->graph()) {
    if (auto t = v->graph()->type_of(v)) type = t->dtype;
  }
  int64_t qmin = 0, qmax = 0;
  switch (type) {
    case DType::kInt8: qmin = -128, qmax = 127; break;
    case DType::kUInt8: qmin = 0, qmax = 255; break;
    case DType::kInt16: qmin = -32768, qmax = 32767; break;
    case DType::kUInt16: qmin = 0, qmax = 65535; break;
    case DType::kInt4: qmin = -8, qmax = 7; break;
    case DType::kUInt4: qmin = 0, qmax = 15; break;
    default: return out;
  }
  if (scale->dtype() != DType::kFloat) return out;
  const int64_t rank = known_input_rank(c, 0);
  Tensor zero_point;
  if (zp) {
    auto zf = exec::cast_tensor(*zp, DType::kFloat);
    if (!zf.is_ok()) return out;
    zero_point = std::move(zf).value();
  }
  // A per-axis scale is 1-D along `axis`: give scaled_integer_form the broadcast layout it reads.
  auto along_axis = [&](const Tensor& t) -> std::optional<Tensor> {
    if (t.numel() == 1) return t;
    if (t.rank() != 1 || rank < 1) return std::nullopt;
    const int64_t axis = attrs.axis < 0 ? attrs.axis + rank : attrs.axis;
    if (axis < 0 || axis >= rank) return std::nullopt;
    Dims dims(static_cast<size_t>(rank - axis), 1);
    dims[0] = t.numel();
    return t.reshaped(dims);
  };
  auto s = along_axis(*scale);
  std::optional<Tensor> z = zero_point.defined() ? along_axis(zero_point) : std::optional<Tensor>(Tensor());
  if (!s || !z) return out;
  out[0] = scaled_integer_form(*s, *z, qmin, qmax, rank);
  return out;
}

template <int kSince>
void add_qdq(exec::KernelRegistry& r, int until) {
  r.add("", "QuantizeLinear", {kSince, until}, exec::typed_kernel<QdqAttrs, prepare_qdq<kSince>, quantize_linear<kSince>>());
  exec::Kernel dequantize = exec::typed_kernel<QdqAttrs, prepare_qdq<kSince>, dequantize_linear<kSince>>();
  dequantize.integer_forms = dequantize_linear_forms;
  r.add("", "DequantizeLinear", {kSince, until}, dequantize);
}

}  // namespace

void register_quantize_linear_kernels(exec::KernelRegistry& r) {
  add_qdq<10>(r, 12);
  add_qdq<13>(r, 18);
  add_qdq<19>(r, 20);
  add_qdq<21>(r, exec::kNoUpperVersion);
  r.add("", "DynamicQuantizeLinear", {11, exec::kNoUpperVersion}, dynamic_quantize_linear);
}

}  // namespace qonnx::kernels
