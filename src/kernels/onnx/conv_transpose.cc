// ConvTranspose (groups, dilations, strides, pads, output_padding, output_shape, auto_pad). Each
// (image, group) is a product W_g^T x X_g into columns (output channel, kernel offset) x input
// position, scattered and summed into the output (col2im).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/conv_util.h"
#include "kernels/common/gemm_core.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

struct TransposeShape {
  int64_t batch = 0, channels = 0, filters = 0, group = 1;
  // Output position o_d = i_d * strides[d] - pads_begin[d] + k_d * dilations[d] for input position i.
  WindowGeometry geo;  // in = input spatial dims, out = output spatial dims
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
  Dims out_dims;
};

// Python-style floor division by 2: the split of a (possibly negative) total padding.
int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Conv's attributes plus output_padding (values in [0, kMaxWindowAttr]) and output_shape.
struct ConvTransposeAttrs {
  ConvAttrs conv;
  WindowList output_padding;
  Dims output_shape;
};

Result<ConvTransposeAttrs> prepare_conv_transpose(const ir::Node& node, int64_t version) {
  ConvTransposeAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.conv, prepare_conv(node, version));
  QONNX_ASSIGN_OR_RETURN(a.output_padding, read_window_list(node, "output_padding", 0));
  QONNX_ASSIGN_OR_RETURN(a.output_shape, ints_attr(node, "output_shape"));
  return a;
}

Result<TransposeShape> transpose_shape(const exec::KernelContext& ctx, const ConvTransposeAttrs& attrs, const Tensor& x,
                                       const Tensor& w) {
  if (x.rank() < 3)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x.dims()));
  if (w.rank() != x.rank())
    return ctx.input_error(Code::kInvalidModel, 1, "weight shape {} must have the input's rank {}",
                           dims_to_string(w.dims()), x.rank());
  TransposeShape s;
  s.batch = x.dim(0);
  s.channels = x.dim(1);
  s.group = attrs.conv.group;
  if (w.dim(0) != s.channels || s.channels % s.group != 0)
    return ctx.input_error(Code::kInvalidModel, 1,
                           "weight shape {} expects {} input channels divisible by group {}, input has {}",
                           dims_to_string(w.dims()), w.dim(0), s.group, s.channels);
  s.filters = w.dim(1) * s.group;
  const size_t nd = x.rank() - 2;
  WindowGeometry& g = s.geo;
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  g.kernel.assign(w.dims().begin() + 2, w.dims().end());
  const WindowAttrs& window = attrs.conv.window;
  if (window.kernel_shape.given && window.kernel_shape.values != g.kernel)
    return ctx.error(Code::kInvalidModel, "kernel_shape {} does not match the weight's spatial dims {}",
                     dims_to_string(window.kernel_shape.values), dims_to_string(g.kernel));
  for (int64_t k : g.kernel)
    if (k < 1 || k > kMaxWindowAttr)
      return ctx.input_error(Code::kInvalidModel, 1, "kernel sizes {} must be in [1, {}]", dims_to_string(g.kernel),
                             kMaxWindowAttr);
  QONNX_ASSIGN_OR_RETURN(g.strides, window_values(ctx, window.strides, "strides", nd, 1));
  QONNX_ASSIGN_OR_RETURN(g.dilations, window_values(ctx, window.dilations, "dilations", nd, 1));
  QONNX_ASSIGN_OR_RETURN(Dims out_pad, window_values(ctx, attrs.output_padding, "output_padding", nd, 0));
  QONNX_ASSIGN_OR_RETURN(Dims pads, window_values(ctx, window.pads, "pads", 2 * nd, 0));
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(nd), pads.end());
  Dims out_shape = attrs.output_shape;
  if (out_shape.size() == nd + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != nd)
    return ctx.error(Code::kInvalidModel, "output_shape has {} values, expected {}", out_shape.size(), nd);
  g.out.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    // Size of the full (unpadded) output.
    const int64_t full = g.strides[d] * (g.in[d] - 1) + out_pad[d] + g.extent(d);
    const bool same = window.auto_pad == AutoPad::kSameUpper || window.auto_pad == AutoPad::kSameLower;
    if (!out_shape.empty() || same) {
      const int64_t target = !out_shape.empty() ? out_shape[d] : g.in[d] * g.strides[d];
      if (target < 0 || target > kMaxWindowAttr * kMaxWindowAttr)
        return ctx.error(Code::kInvalidModel, "output_shape {} is out of range", dims_to_string(out_shape));
      const int64_t total = full - target;
      g.pads_begin[d] = window.auto_pad == AutoPad::kSameUpper ? floor_half(total) : total - floor_half(total);
      g.pads_end[d] = total - g.pads_begin[d];
      g.out[d] = target;
    } else {
      if (window.auto_pad == AutoPad::kValid) g.pads_begin[d] = g.pads_end[d] = 0;
      g.out[d] = full - g.pads_begin[d] - g.pads_end[d];
      if (g.out[d] < 0)
        return ctx.error(Code::kInvalidModel, "pads {} leave no output in spatial dim {}", dims_to_string(pads), d);
    }
    s.in_size *= g.in[d];
    s.kernel_size *= g.kernel[d];
    s.out_size *= g.out[d];
  }
  s.out_dims = {s.batch, s.filters};
  s.out_dims.insert(s.out_dims.end(), g.out.begin(), g.out.end());
  if (checked_numel(s.out_dims) < 0 || checked_numel({s.filters / s.group, s.kernel_size, s.in_size}) < 0)
    return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(s.out_dims));
  return s;
}

// y_plane[channel][o] += cols[(channel, k)][i] for every input position i and kernel offset k that
// land inside the output.
template <typename T>
void col2im(const T* cols, int64_t channels, const TransposeShape& s, T* y) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank(), last = nd - 1;
  const int64_t in_w = g.in[last], out_w = g.out[last];
  const int64_t outer_count = s.in_size / std::max<int64_t>(in_w, 1);
  std::vector<int64_t> k(nd), i(nd);
  const T* src = cols;
  for (int64_t c = 0; c < channels; ++c) {
    T* plane = y + c * s.out_size;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
      std::fill(i.begin(), i.end(), 0);
      for (int64_t ii = 0; ii < outer_count; ++ii) {
        int64_t offset = 0;
        for (size_t d = 0; d < last && offset >= 0; ++d) {
          const int64_t o = i[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
          offset = (o < 0 || o >= g.out[d]) ? -1 : offset * g.out[d] + o;
        }
        if (offset >= 0) {
          T* row = plane + offset * out_w;
          const int64_t shift = k[last] * g.dilations[last] - g.pads_begin[last], step = g.strides[last];
          for (int64_t iw = 0; iw < in_w; ++iw) {
            const int64_t o = iw * step + shift;
            if (o >= 0 && o < out_w) row[o] += src[iw];
          }
        }
        src += in_w;
        for (size_t d = last; d-- > 0;) {
          if (++i[d] < g.in[d]) break;
          i[d] = 0;
        }
      }
      for (size_t d = nd; d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
  }
}

template <typename T>
void conv_transpose_compute(const TransposeShape& s, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, rows = mg * s.kernel_size;
  // Per group, W_g (cg x rows) transposed to rows x cg.
  std::vector<T> wt(static_cast<size_t>(s.group * rows * cg));
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t r = 0; r < rows; ++r)
        wt[static_cast<size_t>((g * rows + r) * cg + c)] = w[(g * cg + c) * rows + r];
  std::vector<T> cols(static_cast<size_t>(rows * s.in_size));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.group; ++g) {
      std::fill(cols.begin(), cols.end(), T(0));
      gemm_accumulate<T, T>(rows, s.in_size, cg, wt.data() + g * rows * cg, cg,
                            x + (n * s.channels + g * cg) * s.in_size, s.in_size, cols.data(), s.in_size);
      col2im(cols.data(), mg, s, y + (n * s.filters + g * mg) * s.out_size);
    }
  if (!bias) return;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t m = 0; m < s.filters; ++m) {
      T* plane = y + (n * s.filters + m) * s.out_size;
      for (int64_t i = 0; i < s.out_size; ++i) plane[i] += bias[m];
    }
}

Status conv_transpose(exec::KernelContext& ctx, const ConvTransposeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(1, "W"));
  const Tensor* b = ctx.input(2);
  const DType dt = x->dtype();
  if (!dtype_is_float(dt))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(dt));
  if (w->dtype() != dt)
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from X's {}", dtype_name(w->dtype()),
                           dtype_name(dt));
  QONNX_ASSIGN_OR_RETURN(TransposeShape s, transpose_shape(ctx, attrs, *x, *w));
  if (b && (b->dtype() != dt || b->rank() != 1 || b->dim(0) != s.filters))
    return ctx.input_error(Code::kInvalidModel, 2, "bias must be {} of shape ({}), got {} {}", dtype_name(dt),
                           s.filters, dtype_name(b->dtype()), dims_to_string(b->dims()));
  if (dt == DType::kDouble) {
    Tensor y(dt, s.out_dims);
    conv_transpose_compute<double>(s, x->data<double>(), w->data<double>(), b ? b->data<double>() : nullptr,
                                   y.data<double>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  QONNX_ASSIGN_OR_RETURN(Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(Tensor wf, exec::cast_tensor(*w, DType::kFloat));
  Tensor bf;
  if (b) {
    QONNX_ASSIGN_OR_RETURN(bf, exec::cast_tensor(*b, DType::kFloat));
  }
  Tensor y(DType::kFloat, s.out_dims);
  conv_transpose_compute<float>(s, xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr,
                                y.data<float>());
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, dt));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_conv_transpose_kernels(exec::KernelRegistry& r) {
  // ConvTranspose-11 only reworded the padding.
  r.add("", "ConvTranspose", {1, exec::kNoUpperVersion},
        exec::typed_kernel<ConvTransposeAttrs, prepare_conv_transpose, conv_transpose>());
}

}  // namespace qonnx::kernels
