// The qonnx.custom_op.channels_last domain: Conv, MaxPool and BatchNormalization on channels-last
// data. As qonnx's ChannelsLastWrappedOp: the data input (and for Conv also the weights, stored
// (M, k..., C/group)) is moved to channels-first, the default-domain kernel runs on the same node
// (same attributes), and the output is moved back to channels-last. Float Conv (group 1 or
// depthwise) and float MaxPool without Indices compute the same bits on the channels-last data
// directly, without the transposes.
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/common/conv_util.h"
#include "kernels/common/transpose.h"
#include "kernels/qonnx/qonnx_kernels.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {
namespace {

// qonnx runs these nodes in onnxruntime with the default-domain opset set to this domain's version
// (1 when the model does not import the domain). onnxruntime has these kernels from opset 7 on, and
// before 7 BatchNormalization defaulted to training mode, so the channels-first kernels run with
// their opset-7 semantics (for BatchNormalization: spatial honoured, no is_test; the registrations
// below prepare them so).

// Reads `t` as (outer, a, b) and returns it as (outer, b, a) with the given dims.
Tensor swap_inner_axes(const Tensor& t, int64_t outer, int64_t a, int64_t b, Dims out_dims) {
  Tensor out = Tensor::uninitialized(t.dtype(), std::move(out_dims));
  transpose_inner(t.raw(), out.raw(), outer, a, b, dtype_size(t.dtype()));
  return out;
}

int64_t spatial_size(const Dims& dims, size_t first, size_t last) {
  int64_t n = 1;
  for (size_t d = first; d < last; ++d) n *= dims[d];
  return n;
}

// (N, d1..., C) -> (N, C, d1...).
Tensor to_channels_first(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return swap_inner_axes(t, d[0], spatial_size(d, 1, d.size() - 1), d.back(), std::move(out));
}

// (N, C, d1...) -> (N, d1..., C).
Tensor to_channels_last(const Tensor& t) {
  const Dims& d = t.dims();
  Dims out{d[0]};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  return swap_inner_axes(t, d[0], d[1], spatial_size(d, 2, d.size()), std::move(out));
}

// Moves the first `transposed_inputs` inputs to channels-first, calls run_nchw on a context holding
// them (the default-domain kernel with this node's plan-time state) and moves its output back.
template <typename RunNchw>
Status run_channels_first(exec::KernelContext& ctx, size_t transposed_inputs, size_t min_rank, RunNchw&& run_nchw) {
  const std::string& op = ctx.node().op_type();
  if (ctx.num_outputs() != 1)
    return ctx.error(Code::kUnsupported, "channels_last {} supports exactly one output, the node has {}", op,
                     ctx.num_outputs());
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (x->rank() < min_rank)
    return ctx.input_error(Code::kInvalidModel, 0, "channels_last {} needs a rank >= {} (N, ..., C) tensor, got {}", op,
                           min_rank, dims_to_string(x->dims()));
  if (x->dtype() == DType::kString)
    return ctx.input_error(Code::kUnsupported, 0, "string tensors are not supported");

  std::vector<Tensor> channels_first;
  channels_first.reserve(transposed_inputs);
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* in = ctx.input(i);
    if (in && i < transposed_inputs) {
      if (in->rank() != x->rank() || in->dtype() == DType::kString)
        return ctx.input_error(Code::kInvalidModel, i, "channels_last {} needs a {}-d tensor like X, got {} {}", op,
                               x->rank(), dtype_name(in->dtype()), dims_to_string(in->dims()));
      channels_first.push_back(to_channels_first(*in));
      in = &channels_first.back();
    }
    inputs.push_back(in);
  }

  exec::KernelContext inner(ctx.node(), std::move(inputs));
  Status st = run_nchw(inner);
  if (!st.is_ok()) return st.with_context(fmt::format("channels_last {} on the channels-first data", op));
  const Tensor& y = inner.outputs()[0];
  if (!y.defined() || y.rank() < 2)
    return ctx.error(Code::kFailed, "the default-domain {} gave no channels-first output", op);
  ctx.set_output(0, to_channels_last(y));
  return Status::ok();
}

// Conv's weights are channels-last too: (M, k1..., C/group). Float group-1 and depthwise
// convolutions run on the channels-last data directly (same bits).
Status conv(exec::KernelContext& ctx, const ConvAttrs& attrs) {
  if (ctx.num_outputs() == 1) {
    QONNX_ASSIGN_OR_RETURN(bool done, conv_channels_last(ctx, attrs));
    if (done) return Status::ok();
  }
  return run_channels_first(ctx, 2, 3, [&](exec::KernelContext& nchw) { return conv_kernel(nchw, attrs); });
}

// The input positions (flattened spatial offsets) of each output position's window, in the order
// the channels-first MaxPool visits them (row-major over the window, padding skipped).
std::vector<std::vector<int64_t>> pool_windows(const WindowGeometry& g) {
  const size_t nd = g.rank();
  int64_t out_size = 1;
  for (size_t d = 0; d < nd; ++d) out_size *= g.out[d];
  std::vector<std::vector<int64_t>> windows(static_cast<size_t>(out_size));
  std::vector<int64_t> o(nd, 0), k(nd, 0);
  for (auto& taps : windows) {
    for (bool more = true; more;) {  // k is all zeros again after its last position
      int64_t at = 0;
      for (size_t d = 0; d < nd && at >= 0; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
        at = (i < 0 || i >= g.in[d]) ? -1 : at * g.in[d] + i;
      }
      if (at >= 0) taps.push_back(at);
      more = next_index(k, g.kernel, nd);
    }
    next_index(o, g.out, nd);
  }
  return windows;
}

// MaxPool on float channels-last data without the Indices output, channels as the inner loop: the
// first tap of a window, then each later one where it is greater (NaN never is), -inf for a window
// wholly in the padding, as the channels-first kernel. Other cases: false.
Result<bool> max_pool_channels_last(exec::KernelContext& ctx, const PoolAttrs& attrs) {
  const Tensor* x = ctx.input(0);
  if (!x || x->dtype() != DType::kFloat || x->rank() < 3 || ctx.num_outputs() != 1) return false;
  const size_t nd = x->rank() - 2;
  const Dims in(x->dims().begin() + 1, x->dims().end() - 1);
  QONNX_ASSIGN_OR_RETURN(Dims kernel, window_values(ctx, attrs.window.kernel_shape, "kernel_shape", nd, 1));
  QONNX_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(ctx, attrs.window, in, kernel));
  Dims out_dims{x->dim(0)};
  out_dims.insert(out_dims.end(), g.out.begin(), g.out.end());
  out_dims.push_back(x->dims().back());
  if (checked_numel(out_dims) < 0) return false;
  const std::vector<std::vector<int64_t>> windows = pool_windows(g);
  const int64_t channels = x->dims().back(), out_size = static_cast<int64_t>(windows.size());
  const int64_t in_size = spatial_size(x->dims(), 1, x->rank() - 1);
  Tensor y = ctx.output_buffer(DType::kFloat, out_dims);
  const float* xs = x->data<float>();
  float* ys = y.data<float>();
  exec::parallel_for(x->dim(0) * out_size, channels * static_cast<int64_t>(kernel.size()), [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const std::vector<int64_t>& taps = windows[static_cast<size_t>(u % out_size)];
      const float* image = xs + u / out_size * in_size * channels;
      float* yu = ys + u * channels;
      if (taps.empty()) {
        std::fill_n(yu, channels, -std::numeric_limits<float>::infinity());
        continue;
      }
      std::copy_n(image + taps[0] * channels, channels, yu);
      for (size_t t = 1; t < taps.size(); ++t) {
        const float* v = image + taps[t] * channels;
        for (int64_t c = 0; c < channels; ++c) yu[c] = v[c] > yu[c] ? v[c] : yu[c];
      }
    }
  });
  ctx.set_output(0, std::move(y));
  return true;
}

Status max_pool(exec::KernelContext& ctx, const PoolAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(bool done, max_pool_channels_last(ctx, attrs));
  return done ? Status::ok()
              : run_channels_first(ctx, 1, 3, [&](exec::KernelContext& nchw) { return max_pool_kernel(nchw, attrs); });
}
Status batch_normalization(exec::KernelContext& ctx, const BatchNormAttrs& attrs) {
  return run_channels_first(ctx, 1, 2, [&](exec::KernelContext& nchw) { return batch_normalization_kernel(nchw, attrs); });
}

}  // namespace

void register_channels_last_kernels(exec::KernelRegistry& r) {
  const char* domain = dialect::kChannelsLastDomain;
  exec::Kernel conv_kernel = exec::typed_kernel<ConvAttrs, prepare_conv, conv>();
  conv_kernel.prepack = prepack_conv;
  r.add(domain, "Conv", {1, exec::kNoUpperVersion}, conv_kernel);
  r.add(domain, "MaxPool", {1, exec::kNoUpperVersion}, exec::typed_kernel<PoolAttrs, prepare_max_pool_10, max_pool>());
  r.set_integer_forms(domain, "MaxPool", exec::same_per_tensor_form);
  r.add(domain, "BatchNormalization", {1, exec::kNoUpperVersion},
        exec::typed_kernel<BatchNormAttrs, prepare_batch_norm_7, batch_normalization>());
}

}  // namespace qonnx::kernels
