// Quant / IntQuant and BipolarQuant (SEMANTICS.md section 1).
#include "qonnx/kernels/quant.h"

#include "qonnx/exec/broadcast.h"
#include "kernels/qonnx/params.h"
#include "kernels/qonnx/qonnx_kernels.h"

namespace qonnx::kernels {

Result<QuantParams> read_quant_params(const exec::KernelContext& ctx) {
  QuantParams p;
  QONNX_ASSIGN_OR_RETURN(p.scale, scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(p.zeropt, float_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(p.bits, bitwidth_input(ctx, 3, "bitwidth"));
  QONNX_ASSIGN_OR_RETURN(p.mode, rounding_attr(ctx, "ROUND"));
  p.is_signed = ctx.attr_int("signed", 1) != 0;
  p.narrow = ctx.attr_int("narrow", 0) != 0;
  return p;
}

namespace {

// Calls f(out_index, code, scale, zeropt) for every element of the broadcast shape `out_dims`.
template <typename F>
void for_each_code(const Dims& out_dims, const Tensor& x, const QuantParams& p, F&& f) {
  const IntRange range = quant_int_range(p.bits, p.is_signed, p.narrow);
  const float* xs = x.data<float>();
  const float* ss = p.scale.data<float>();
  const float* zs = p.zeropt.data<float>();
  exec::for_each_broadcast<3>(out_dims, {&x.dims(), &p.scale.dims(), &p.zeropt.dims()}, [&](int64_t o, const auto& off) {
    float s = ss[off[1]], z = zs[off[2]];
    f(o, quant_code(xs[off[0]], s, z, range, p), s, z);
  });
}

Status quant(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(Tensor x, float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(QuantParams p, read_quant_params(ctx));
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, broadcast_inputs(ctx, {{0, &x}, {1, &p.scale}, {2, &p.zeropt}}));
  Tensor y(DType::kFloat, out_dims);
  float* ys = y.data<float>();
  for_each_code(out_dims, x, p, [&](int64_t o, float q, float s, float z) { ys[o] = (q - z) * s; });
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

Result<Tensor> quant_codes(const exec::KernelContext& ctx, const Tensor& x, const QuantParams& p) {
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, broadcast_inputs(ctx, {{0, &x}, {1, &p.scale}, {2, &p.zeropt}}));
  Tensor codes(DType::kFloat, out_dims);
  float* cs = codes.data<float>();
  for_each_code(out_dims, x, p, [&](int64_t o, float q, float, float) { cs[o] = q; });
  return codes;
}

void register_quant_kernels(exec::KernelRegistry& r) {
  r.add_qonnx("Quant", 1, quant);
  r.add_qonnx("IntQuant", 1, quant);
  r.add_qonnx("BipolarQuant", 1, bipolar_quant);
}

}  // namespace qonnx::kernels
