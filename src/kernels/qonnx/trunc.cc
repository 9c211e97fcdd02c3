// Trunc v1 and v2 (SEMANTICS.md section 1). The version is the model's import of the node's
// domain; the input count has to agree with it.
#include <cmath>
#include <vector>

#include "qonnx/exec/broadcast.h"
#include "kernels/common/attr_check.h"
#include "kernels/qonnx/fast_kernels.h"
#include "kernels/common/fast_math.h"
#include "qonnx/quant/params.h"
#include "kernels/qonnx/qonnx_kernels.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/dialect/qonnx_dialect.h"

namespace qonnx::kernels {
namespace {

// Trunc v1 takes 5 inputs, v2 takes 6.
Status check_input_count(const exec::KernelContext& ctx, int version) {
  const size_t expected = version == 1 ? 5 : 6;
  if (ctx.num_inputs() == expected) return Status::ok();
  return ctx.error(Code::kInvalidModel,
                   "Trunc version {} takes {} inputs, got {} (Trunc v1 has X, scale, zeropt, in_bitwidth, "
                   "out_bitwidth; v2 adds out_scale and needs the domain imported at version 2)",
                   version, expected, ctx.num_inputs());
}

// v1 over one run: t = rne(x/s + z) / shift; y = (mode(t) - z) * s.
template <quant::RoundingMode M, bool kScalar>
void trunc_v1_run(const float* x, const float* s, const float* z, float shift, float* y, int64_t n) {
  const float s0 = s[0], z0 = z[0];
  for (int64_t i = 0; i < n; ++i) {
    const float si = kScalar ? s0 : s[i], zi = kScalar ? z0 : z[i];
    const float t = fast::round_half_even_f(x[i] / si + zi) / shift;
    y[i] = (fast::round_mode<M>(t) - zi) * si;
  }
}

// v2 over one run (k precomputed: one value when kScalar).
template <quant::RoundingMode M, bool kScalar>
void trunc_v2_run(const float* x, const float* s, const float* z, const float* so, const float* k, float lo, float hi,
                  float* y, int64_t n) {
  const float s0 = s[0], z0 = z[0], so0 = so[0], k0 = k[0];
  for (int64_t i = 0; i < n; ++i) {
    const float si = kScalar ? s0 : s[i], zi = kScalar ? z0 : z[i], soi = kScalar ? so0 : so[i];
    const float ki = kScalar ? k0 : k[i];
    float t = fast::round_half_even_f(x[i] / si + zi) / ki;
    t = t > hi ? hi : t;
    t = t < lo ? lo : t;
    y[i] = (fast::round_mode<M>(t) - zi / ki) * soi;
  }
}

}  // namespace

void trunc_v1_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, const Tensor& zeropt, int in_bits,
                   int out_bits, quant::RoundingMode mode, float* y) {
  const float shift = std::ldexp(1.0f, in_bits - out_bits);
  const float inv_shift = std::ldexp(1.0f, out_bits - in_bits);  // exact: |in_bits - out_bits| <= 31
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* zs = zeropt.data<float>();
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  fast::with_mode(mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    fast::parallel_for_each_run<3>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims()}, [&] {
      return [&, bx = fast::RunBuffer(), bs = fast::RunBuffer(),
              bz = fast::RunBuffer()](const fast::Run<3>& r) mutable {
        const bool vary = !(r.stride[0] == 1 && r.stride[1] == 0 && r.stride[2] == 0);
        const float* xo = vary ? fast::run_operand(xs, r.offset[0], r.stride[0], r.len, bx) : xs + r.offset[0];
        const float* so = vary ? fast::run_operand(ss, r.offset[1], r.stride[1], r.len, bs) : ss + r.offset[1];
        const float* zo = vary ? fast::run_operand(zs, r.offset[2], r.stride[2], r.len, bz) : zs + r.offset[2];
        float* yo = y + r.out_offset;
        const int64_t i = simd ? avx2::trunc_v1_run(M, xo, so, zo, vary, inv_shift, yo, r.len) : 0;
        if (vary) trunc_v1_run<M, false>(xo + i, so + i, zo + i, shift, yo + i, r.len - i);
        else trunc_v1_run<M, true>(xo + i, so, zo, shift, yo + i, r.len - i);
      };
    });
  });
}

void trunc_v2_into(const Dims& out_dims, const Tensor& x, const Tensor& scale, const Tensor& zeropt,
                   const Tensor& out_scale, quant::IntRange range, quant::RoundingMode mode, float* y) {
  const float* xs = x.data<float>();
  const float* ss = scale.data<float>();
  const float* zs = zeropt.data<float>();
  const float* os = out_scale.data<float>();
  const bool simd = isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2;
  fast::with_mode(mode, [&](auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    fast::parallel_for_each_run<4>(out_dims, {&x.dims(), &scale.dims(), &zeropt.dims(), &out_scale.dims()}, [&] {
      return [&, bx = fast::RunBuffer(), bs = fast::RunBuffer(), bz = fast::RunBuffer(),
              bo = fast::RunBuffer(), bk = std::vector<float>()](const fast::Run<4>& r) mutable {
        const bool vary = !(r.stride[0] == 1 && r.stride[1] == 0 && r.stride[2] == 0 && r.stride[3] == 0);
        const float* xo = vary ? fast::run_operand(xs, r.offset[0], r.stride[0], r.len, bx) : xs + r.offset[0];
        const float* so = vary ? fast::run_operand(ss, r.offset[1], r.stride[1], r.len, bs) : ss + r.offset[1];
        const float* zo = vary ? fast::run_operand(zs, r.offset[2], r.stride[2], r.len, bz) : zs + r.offset[2];
        const float* oo = vary ? fast::run_operand(os, r.offset[3], r.stride[3], r.len, bo) : os + r.offset[3];
        bk.resize(static_cast<size_t>(vary ? r.len : 1));
        for (size_t i = 0; i < bk.size(); ++i) bk[i] = quant::trunc_v2_step(oo[i], so[i]);
        const float* ko = bk.data();
        float* yo = y + r.out_offset;
        const int64_t i = simd ? avx2::trunc_v2_run(M, xo, so, zo, oo, ko, vary, range.min, range.max, yo, r.len) : 0;
        if (vary) trunc_v2_run<M, false>(xo + i, so + i, zo + i, oo + i, ko + i, range.min, range.max, yo + i, r.len - i);
        else trunc_v2_run<M, true>(xo + i, so, zo, oo, ko, range.min, range.max, yo + i, r.len - i);
      };
    });
  });
}

namespace {

// Trunc's attributes, parsed once per node (v1 reads only the rounding mode).
struct TruncAttrs {
  quant::RoundingMode mode;
  bool is_signed, narrow;
};

Result<TruncAttrs> trunc_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(quant::RoundingMode mode, quant::rounding_attr(node, "FLOOR"));
  QONNX_ASSIGN_OR_RETURN(const bool is_signed, flag_attr(node, "signed", true));
  QONNX_ASSIGN_OR_RETURN(const bool narrow, flag_attr(node, "narrow", false));
  return TruncAttrs{mode, is_signed, narrow};
}

Status trunc_v1(exec::KernelContext& ctx, const TruncAttrs& attrs) {
  QONNX_RETURN_IF_ERROR(check_input_count(ctx, 1));
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, quant::scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, quant::zero_point_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int in_bits, quant::bitwidth_input(ctx, 3, "in_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(int out_bits, quant::bitwidth_input(ctx, 4, "out_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(Dims out_dims, exec::broadcast_input_dims(ctx, {{0, &x}, {1, &scale}, {2, &zeropt}}));
  Tensor y(DType::kFloat, out_dims);
  trunc_v1_into(out_dims, x, scale, zeropt, in_bits, out_bits, attrs.mode, y.data<float>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status trunc_v2(exec::KernelContext& ctx, const TruncAttrs& attrs) {
  QONNX_RETURN_IF_ERROR(check_input_count(ctx, 2));
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(ctx, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor scale, quant::scale_input(ctx, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, quant::zero_point_input(ctx, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int in_bits, quant::bitwidth_input(ctx, 3, "in_bitwidth"));
  (void)in_bits;  // validated, otherwise unused in v2
  QONNX_ASSIGN_OR_RETURN(Tensor out_scale, quant::scale_input(ctx, 4, "out_scale"));
  QONNX_ASSIGN_OR_RETURN(int out_bits, quant::bitwidth_input(ctx, 5, "out_bitwidth"));
  const quant::IntRange range = quant::quant_int_range(out_bits, attrs.is_signed, attrs.narrow);
  QONNX_ASSIGN_OR_RETURN(Dims out_dims,
                         exec::broadcast_input_dims(ctx, {{0, &x}, {1, &scale}, {2, &zeropt}, {4, &out_scale}}));
  Tensor y(DType::kFloat, out_dims);
  trunc_v2_into(out_dims, x, scale, zeropt, out_scale, range, attrs.mode, y.data<float>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_trunc_kernels(exec::KernelRegistry& r) {
  const exec::Kernel v1 = exec::typed_kernel<TruncAttrs, trunc_attrs, trunc_v1>();
  const exec::Kernel v2 = exec::typed_kernel<TruncAttrs, trunc_attrs, trunc_v2>();
  for (const std::string& d : dialect::general_domain_spellings()) {
    r.add(d, dialect::kTruncOp, {1, 1}, v1);
    r.add(d, dialect::kTruncOp, {2, exec::kNoUpperVersion}, v2);
  }
  // The default domain's version is the ONNX opset, not QONNX's: Trunc there is always version 1.
  r.add("", dialect::kTruncOp, {1, exec::kNoUpperVersion}, v1);
}

}  // namespace qonnx::kernels
