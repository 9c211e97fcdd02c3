// Quant / IntQuant and BipolarQuant (SEMANTICS.md section 1).
#include "qonnx/exec/broadcast.h"
#include "kernels/qonnx/params.h"
#include "kernels/qonnx/qonnx_kernels.h"

namespace qonnx::kernels {
namespace {

Status quant(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, float_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int bits, bitwidth_input(ctx, 3, "bitwidth"));
  QONNX_ASSIGN_OR_RETURN(RoundingMode mode, rounding_attr(ctx, "ROUND"));
  const bool is_signed = ctx.attr_int("signed", 1) != 0;
  const bool narrow = ctx.attr_int("narrow", 0) != 0;
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, broadcast_inputs(ctx, {{0, &x}, {1, &scale}, {2, &zeropt}}));

  Tensor y(DType::kFloat, out_dims);
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* zs = zeropt.data<float>();
  float* ys = y.data<float>();
  if (bits == 1 && is_signed) {
    exec::for_each_broadcast<3>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims()}, [&](int64_t o, const auto& off) {
      float s = ss[off[1]], z = zs[off[2]];
      float t = xs[off[0]] / s + z;
      float q = t >= 0.0f ? 1.0f : -1.0f;
      ys[o] = (q - z) * s;
    });
  } else {
    const IntRange range = quant_int_range(bits, is_signed, narrow);
    exec::for_each_broadcast<3>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims()}, [&](int64_t o, const auto& off) {
      float s = ss[off[1]], z = zs[off[2]];
      float t = xs[off[0]] / s + z;
      if (t > range.max) t = range.max;
      if (t < range.min) t = range.min;
      ys[o] = (apply_rounding(mode, t) - z) * s;
    });
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status bipolar_quant(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, broadcast_inputs(ctx, {{0, &x}, {1, &scale}}));
  Tensor y(DType::kFloat, out_dims);
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  float* ys = y.data<float>();
  exec::for_each_broadcast<2>(out_dims, {&x.dims(), &scale.dims()}, [&](int64_t o, const auto& off) {
    ys[o] = (xs[off[0]] >= 0.0f ? 1.0f : -1.0f) * ss[off[1]];
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quant_kernels(exec::KernelRegistry& r) {
  r.add_qonnx("Quant", 1, quant);
  r.add_qonnx("IntQuant", 1, quant);
  r.add_qonnx("BipolarQuant", 1, bipolar_quant);
}

}  // namespace qonnx::kernels
