// Trunc v1 and v2 (SEMANTICS.md section 1). The version is the model's import of the node's
// domain; the input count has to agree with it.
#include <cmath>

#include "qonnx/exec/broadcast.h"
#include "kernels/qonnx/params.h"
#include "kernels/qonnx/qonnx_kernels.h"

namespace qonnx::kernels {
namespace {

Status check_input_count(const exec::KernelContext& ctx, size_t expected) {
  if (ctx.num_inputs() == expected) return Status::ok();
  return ctx.error(Code::kInvalidModel,
                   "Trunc version {} takes {} inputs, got {} (Trunc v1 has X, scale, zeropt, in_bitwidth, "
                   "out_bitwidth; v2 adds out_scale and needs the domain imported at version 2)",
                   ctx.op_version(), expected, ctx.num_inputs());
}

Status trunc_v1(exec::KernelContext& ctx) {
  QONNX_RETURN_IF_ERROR(check_input_count(ctx, 5));
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, float_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int in_bits, bitwidth_input(ctx, 3, "in_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(int out_bits, bitwidth_input(ctx, 4, "out_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(RoundingMode mode, rounding_attr(ctx, "FLOOR"));
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, broadcast_inputs(ctx, {{0, &x}, {1, &scale}, {2, &zeropt}}));
  const float shift = std::ldexp(1.0f, in_bits - out_bits);
  Tensor y(DType::kFloat, out_dims);
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* zs = zeropt.data<float>();
  float* ys = y.data<float>();
  exec::for_each_broadcast<3>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims()}, [&](int64_t o, const auto& off) {
    float s = ss[off[1]], z = zs[off[2]];
    float t = round_half_even(xs[off[0]] / s + z) / shift;
    ys[o] = (apply_rounding(mode, t) - z) * s;
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status trunc_v2(exec::KernelContext& ctx) {
  QONNX_RETURN_IF_ERROR(check_input_count(ctx, 6));
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, float_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int in_bits, bitwidth_input(ctx, 3, "in_bitwidth"));
  (void)in_bits;  // validated, otherwise unused in v2
  QONNX_ASSIGN_OR_RETURN(Tensor out_scale, scale_input(ctx, 4, "out_scale"));
  QONNX_ASSIGN_OR_RETURN(int out_bits, bitwidth_input(ctx, 5, "out_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(RoundingMode mode, rounding_attr(ctx, "FLOOR"));
  const IntRange range = quant_int_range(out_bits, ctx.attr_int("signed", 1) != 0, ctx.attr_int("narrow", 0) != 0);
  QONNX_ASSIGN_OR_RETURN(Dims out_dims,
                         broadcast_inputs(ctx, {{0, &x}, {1, &scale}, {2, &zeropt}, {4, &out_scale}}));
  Tensor y(DType::kFloat, out_dims);
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* zs = zeropt.data<float>();
  const float* os = out_scale.data<float>();
  float* ys = y.data<float>();
  exec::for_each_broadcast<4>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims(), &out_scale.dims()},
                              [&](int64_t o, const auto& off) {
                                float s = ss[off[1]], z = zs[off[2]], so = os[off[3]];
                                float k = std::ldexp(1.0f, static_cast<int>(round_half_even(std::log2(so / s))));
                                float t = round_half_even(xs[off[0]] / s + z) / k;
                                if (t > range.max) t = range.max;
                                if (t < range.min) t = range.min;
                                ys[o] = (apply_rounding(mode, t) - z / k) * so;
                              });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_trunc_kernels(exec::KernelRegistry& r) {
  // The empty domain has no QONNX versioning: Trunc there is always version 1.
  r.add_qonnx("Trunc", 1, trunc_v1, /*also_default=*/true);
  for (const char* d : {"qonnx.custom_op.general", "finn.custom_op.general", "onnx.brevitas"}) r.add(d, "Trunc", 2, trunc_v2);
}

}  // namespace qonnx::kernels
