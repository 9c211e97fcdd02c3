// QuantizeLinear, DequantizeLinear (per tensor from opset 10, per axis from 13) and
// DynamicQuantizeLinear. Q: y = saturate(rne(x / scale) + zero_point), the zero point added after
// rounding; DQ: y = (x - zero_point) * scale.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_util.h"
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
  Tensor f = exec::cast_tensor(t, DType::kFloat);
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

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
  QONNX_ASSIGN_OR_RETURN(std::vector<float> xs, float_values(ctx, 0, *x));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> ss, float_values(ctx, 1, *scale));
  std::vector<float> zs(ss.size(), 0.0f);
  if (zp) {
    QONNX_ASSIGN_OR_RETURN(zs, float_values(ctx, 2, *zp));
  }
  Tensor out(out_type, x->dims());
  store_saturated(&out, [&](int64_t e) {
    const int64_t p = layout.index(e);
    return static_cast<double>(round_half_even(xs[static_cast<size_t>(e)] / ss[static_cast<size_t>(p)])) +
           static_cast<double>(zs[static_cast<size_t>(p)]);
  });
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
  Tensor xi = exec::cast_tensor(*x, DType::kInt64);
  const int64_t* xv = xi.data<int64_t>();
  std::vector<int64_t> zs(ss.size(), 0);
  if (zp) {
    Tensor zi = exec::cast_tensor(*zp, DType::kInt64);
    zs.assign(zi.data<int64_t>(), zi.data<int64_t>() + zi.numel());
  }
  Tensor y(DType::kFloat, x->dims());
  float* yv = y.data<float>();
  for (int64_t e = 0; e < x->numel(); ++e) {
    const size_t p = static_cast<size_t>(layout.index(e));
    yv[e] = static_cast<float>(xv[e] - zs[p]) * ss[p];
  }
  // The output has the scale's type (float16 / bfloat16 scales from opset 19).
  ctx.set_output(0, exec::cast_tensor(y, scale->dtype()));
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
