// QuantAvgPool2d (FINN dialect): y = floor(rne(window sum) / 2^shift) with the sum in double in
// row-major window order; semantics, and how they relate to qonnx's float execution, in
// qonnx/quant/avg_pool.h. NCHW or NHWC (data_layout), float32 in and out.
#include <cmath>

#include "kernels/qonnx/qonnx_kernels.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/threads.h"
#include "qonnx/quant/avg_pool.h"
#include "qonnx/quant/rounding.h"

namespace qonnx::kernels {
namespace {

// Element strides of the N, C, H, W axes of a 4-D tensor stored in the given layout.
struct AxisStrides {
  int64_t n, c, h, w;
};

AxisStrides strides_of(bool channels_last, int64_t c, int64_t h, int64_t w) {
  if (channels_last) return {h * w * c, 1, w * c, c};
  return {c * h * w, h * w, w, 1};
}

struct QuantAvgPoolState {
  quant::AvgPoolParams params;
  int64_t shift;
};

Result<QuantAvgPoolState> prepare_quant_avg_pool(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const quant::AvgPoolParams p, quant::read_avg_pool_params(node));
  return QuantAvgPoolState{p, quant::avg_pool_shift(p)};
}

Status quant_avg_pool(exec::KernelContext& ctx, const QuantAvgPoolState& state) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "x"));
  const quant::AvgPoolParams& p = state.params;
  const char* layout = p.channels_last ? "NHWC" : "NCHW";
  if (x->dtype() != DType::kFloat)
    return ctx.input_error(Code::kUnsupported, 0, "x must be float, got {}", dtype_name(x->dtype()));
  if (x->rank() != 4)
    return ctx.input_error(Code::kInvalidModel, 0, "x must be 4-D ({}), got shape {}", layout, dims_to_string(x->dims()));
  const int64_t n = x->dim(0), c = x->dim(p.channels_last ? 3 : 1);
  const int64_t h = x->dim(p.channels_last ? 1 : 2), w = x->dim(p.channels_last ? 2 : 3);
  const int64_t oh = quant::avg_pool_output_dim(h, p.kernel, p.stride);
  const int64_t ow = quant::avg_pool_output_dim(w, p.kernel, p.stride);
  if (oh < 0 || ow < 0)
    return ctx.input_error(Code::kInvalidModel, 0, "x of shape {} ({}) is smaller than the {}x{} kernel",
                           dims_to_string(x->dims()), layout, p.kernel, p.kernel);
  const Dims out_dims = p.channels_last ? Dims{n, oh, ow, c} : Dims{n, c, oh, ow};
  Tensor y = ctx.output_buffer(DType::kFloat, out_dims);
  const AxisStrides in = strides_of(p.channels_last, c, h, w), out = strides_of(p.channels_last, c, oh, ow);
  const float* xs = x->data<float>();
  float* ys = y.data<float>();
  const int64_t k = p.kernel, s = p.stride, shift = state.shift;
  // One unit = one output row (n, c, oh) of ow windows.
  exec::parallel_for(n * c * oh, ow * k * k, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r / (c * oh), ch = r / oh % c, row = r % oh;
      for (int64_t col = 0; col < ow; ++col) {
        const float* window = xs + i * in.n + ch * in.c + row * s * in.h + col * s * in.w;
        double sum = 0.0;
        for (int64_t dy = 0; dy < k; ++dy)
          for (int64_t dx = 0; dx < k; ++dx) sum += static_cast<double>(window[dy * in.h + dx * in.w]);
        const double pooled = std::floor(std::ldexp(quant::round_half_even(sum), static_cast<int>(-shift)));
        ys[i * out.n + ch * out.c + row * out.h + col * out.w] = static_cast<float>(pooled);
      }
    }
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quant_avg_pool_kernels(exec::KernelRegistry& r) {
  add_general_op(r, dialect::kQuantAvgPool2dOp, {1, exec::kNoUpperVersion},
                 exec::typed_kernel<QuantAvgPoolState, prepare_quant_avg_pool, quant_avg_pool>());
}

}  // namespace qonnx::kernels
