// Conv (1-D/2-D/3-D and beyond, groups, dilations, strides, pads, auto_pad, optional bias) and its
// integer forms ConvInteger and QLinearConv. Each (image, group) is an im2col matrix multiplied by
// the group's weights.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/onnx/conv_util.h"
#include "kernels/onnx/gemm_core.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_util.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

struct ConvShape {
  int64_t batch = 0, channels = 0, filters = 0, group = 1;
  WindowGeometry geo;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;  // products of the spatial dims
  Dims out_dims;
};

// Checks X (N, C, D1..Dn) against W (M, C/group, k1..kn) and the attributes.
Result<ConvShape> conv_shape(const exec::KernelContext& ctx, const Tensor& x, const Tensor& w, size_t x_in,
                             size_t w_in) {
  if (x.rank() < 3)
    return ctx.input_error(Code::kInvalidModel, x_in, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x.dims()));
  if (w.rank() != x.rank())
    return ctx.input_error(Code::kInvalidModel, w_in, "weight shape {} must have the input's rank {}",
                           dims_to_string(w.dims()), x.rank());
  ConvShape s;
  s.batch = x.dim(0);
  s.channels = x.dim(1);
  s.filters = w.dim(0);
  s.group = ctx.attr_int("group", 1);
  if (s.group < 1 || s.group > kMaxWindowAttr)
    return ctx.error(Code::kInvalidModel, "group must be a positive integer, got {}", s.group);
  if (s.channels % s.group != 0 || w.dim(1) * s.group != s.channels)
    return ctx.input_error(Code::kInvalidModel, w_in,
                           "weight shape {} expects {} input channels ({} per group x group {}), input has {}",
                           dims_to_string(w.dims()), w.dim(1) * s.group, w.dim(1), s.group, s.channels);
  if (s.filters % s.group != 0)
    return ctx.input_error(Code::kInvalidModel, w_in, "{} output channels are not divisible by group {}", s.filters,
                           s.group);
  const Dims in(x.dims().begin() + 2, x.dims().end()), kernel(w.dims().begin() + 2, w.dims().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    return ctx.error(Code::kInvalidModel, "kernel_shape {} does not match the weight's spatial dims {}",
                     dims_to_string(ctx.attr_ints("kernel_shape")), dims_to_string(kernel));
  QONNX_ASSIGN_OR_RETURN(s.geo, window_geometry(ctx, in, kernel, false));
  for (size_t d = 0; d < in.size(); ++d) {
    s.in_size *= in[d];
    s.kernel_size *= kernel[d];
    s.out_size *= s.geo.out[d];
  }
  s.out_dims = {s.batch, s.filters};
  s.out_dims.insert(s.out_dims.end(), s.geo.out.begin(), s.geo.out.end());
  if (checked_numel(s.out_dims) < 0 ||
      checked_numel({s.channels / s.group, s.kernel_size, s.out_size}) < 0)
    return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(s.out_dims));
  return s;
}

// Unpacks one group of `channels` input planes into rows (channel, kernel offset) x columns
// (output position); positions in the padding read 0.
template <typename T>
void im2col(const T* x, int64_t channels, const ConvShape& s, T* col) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank(), last = nd - 1;
  const int64_t out_w = g.out[last], in_w = g.in[last];
  const int64_t outer_count = s.out_size / std::max<int64_t>(out_w, 1);
  std::vector<int64_t> k(nd), o(nd);
  T* dst = col;
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = x + c * s.in_size;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oo = 0; oo < outer_count; ++oo) {
        // Row offset of the outer dims, or -1 when the window row lies in the padding.
        int64_t offset = 0;
        for (size_t d = 0; d < last && offset >= 0; ++d) {
          const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
          offset = (i < 0 || i >= g.in[d]) ? -1 : offset * g.in[d] + i;
        }
        if (offset < 0) {
          std::fill(dst, dst + out_w, T(0));
        } else {
          const T* row = plane + offset * in_w;
          const int64_t shift = k[last] * g.dilations[last] - g.pads_begin[last], step = g.strides[last];
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const int64_t i = ow * step + shift;
            dst[ow] = (i >= 0 && i < in_w) ? row[i] : T(0);
          }
        }
        dst += out_w;
        for (size_t d = last; d-- > 0;) {
          if (++o[d] < g.out[d]) break;
          o[d] = 0;
        }
      }
      for (size_t d = nd; d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
  }
}

bool is_pointwise(const ConvShape& s) {
  const WindowGeometry& g = s.geo;
  for (size_t d = 0; d < g.rank(); ++d)
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pads_begin[d] != 0 || g.pads_end[d] != 0) return false;
  return true;
}

// y (N, M, out...) += conv(x, w), products and sums in Acc; y starts zeroed.
template <typename T, typename Acc>
void conv_accumulate(const ConvShape& s, const T* x, const T* w, Acc* y) {
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, rows = cg * s.kernel_size;
  const bool pointwise = is_pointwise(s);
  std::vector<T> col(pointwise ? 0 : static_cast<size_t>(rows * s.out_size));
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const T* xg = x + (n * s.channels + g * cg) * s.in_size;
      const T* cols = xg;
      if (!pointwise) {
        im2col(xg, cg, s, col.data());
        cols = col.data();
      }
      gemm_accumulate<T, Acc>(mg, s.out_size, rows, w + g * mg * rows, rows, cols, s.out_size,
                              y + (n * s.filters + g * mg) * s.out_size, s.out_size);
    }
  }
}

// Bias B of shape (M), or an error.
Status check_bias(const exec::KernelContext& ctx, size_t i, const Tensor* b, int64_t filters, DType dtype) {
  if (!b) return Status::ok();
  if (b->dtype() != dtype)
    return ctx.input_error(Code::kInvalidModel, i, "type {} must be {}", dtype_name(b->dtype()), dtype_name(dtype));
  if (b->rank() != 1 || b->dim(0) != filters)
    return ctx.input_error(Code::kInvalidModel, i, "bias shape {} must be ({})", dims_to_string(b->dims()), filters);
  return Status::ok();
}

template <typename T>
void conv_float(const ConvShape& s, const T* x, const T* w, const T* bias, T* y) {
  conv_accumulate<T, T>(s, x, w, y);
  if (!bias) return;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t m = 0; m < s.filters; ++m) {
      T* plane = y + (n * s.filters + m) * s.out_size;
      for (int64_t i = 0; i < s.out_size; ++i) plane[i] += bias[m];
    }
}

}  // namespace

Status conv_kernel(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(1, "W"));
  const Tensor* b = ctx.input(2);
  const DType dt = x->dtype();
  if (!dtype_is_float(dt))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(dt));
  if (w->dtype() != dt)
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from X's {}", dtype_name(w->dtype()),
                           dtype_name(dt));
  QONNX_ASSIGN_OR_RETURN(ConvShape s, conv_shape(ctx, *x, *w, 0, 1));
  QONNX_RETURN_IF_ERROR(check_bias(ctx, 2, b, s.filters, dt));
  if (dt == DType::kDouble) {
    Tensor y(dt, s.out_dims);
    conv_float<double>(s, x->data<double>(), w->data<double>(), b ? b->data<double>() : nullptr, y.data<double>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  // float, and float16 / bfloat16 computed in float.
  Tensor xf = exec::cast_tensor(*x, DType::kFloat), wf = exec::cast_tensor(*w, DType::kFloat);
  Tensor bf = b ? exec::cast_tensor(*b, DType::kFloat) : Tensor();
  Tensor y(DType::kFloat, s.out_dims);
  conv_float<float>(s, xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr, y.data<float>());
  ctx.set_output(0, exec::cast_tensor(y, dt));
  return Status::ok();
}

namespace {

// x - zero_point as int32. The zero point is one value, or with `per_channel` one per entry of
// x's first dim (the weights' output channels).
Result<Tensor> minus_zero_point(const exec::KernelContext& ctx, size_t x_in, size_t zp_in, bool per_channel) {
  const Tensor* x = ctx.input(x_in);
  if (x->dtype() != DType::kInt8 && x->dtype() != DType::kUInt8)
    return ctx.input_error(Code::kUnsupported, x_in, "type {} is not supported (int8 or uint8)",
                           dtype_name(x->dtype()));
  Tensor out = exec::cast_tensor(*x, DType::kInt32);
  const Tensor* zp = ctx.input(zp_in);
  if (!zp) return out;
  if (zp->dtype() != x->dtype())
    return ctx.input_error(Code::kInvalidModel, zp_in, "zero point type {} differs from {}", dtype_name(zp->dtype()),
                           dtype_name(x->dtype()));
  const bool one = zp->numel() == 1 && zp->rank() <= 1;
  if (!one && !(per_channel && zp->rank() == 1 && zp->numel() == x->dim(0)))
    return ctx.input_error(Code::kInvalidModel, zp_in, "zero point shape {} must be a scalar{}",
                           dims_to_string(zp->dims()),
                           per_channel ? fmt::format(" or ({})", x->dim(0)) : std::string());
  Tensor zpi = exec::cast_tensor(*zp, DType::kInt32);
  const int64_t per = one || x->numel() == 0 ? x->numel() : x->numel() / x->dim(0);
  int32_t* v = out.data<int32_t>();
  for (int64_t i = 0; i < x->numel(); ++i) v[i] -= zpi.data<int32_t>()[i / per];
  return out;
}

// conv(x - x_zp, w - w_zp) in 64-bit integers, with the shape checks.
Result<std::vector<int64_t>> integer_conv(const exec::KernelContext& ctx, size_t x_in, size_t x_zp, size_t w_in,
                                          size_t w_zp, ConvShape* shape) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(x_in, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(w_in, "w"));
  QONNX_ASSIGN_OR_RETURN(*shape, conv_shape(ctx, *x, *w, x_in, w_in));
  QONNX_ASSIGN_OR_RETURN(Tensor xi, minus_zero_point(ctx, x_in, x_zp, false));
  QONNX_ASSIGN_OR_RETURN(Tensor wi, minus_zero_point(ctx, w_in, w_zp, true));
  std::vector<int64_t> acc(static_cast<size_t>(checked_numel(shape->out_dims)), 0);
  conv_accumulate<int32_t, int64_t>(*shape, xi.data<int32_t>(), wi.data<int32_t>(), acc.data());
  return acc;
}

Status conv_integer(exec::KernelContext& ctx) {
  ConvShape s;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, 0, 2, 1, 3, &s));
  Tensor y(DType::kInt32, s.out_dims);
  // int32 accumulation may wrap (as the spec allows); keep the low 32 bits.
  for (size_t i = 0; i < acc.size(); ++i) y.data<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// A float scale input: one value, or `count` values when `per_channel`.
Result<std::vector<float>> conv_scale(const exec::KernelContext& ctx, size_t i, bool per_channel, int64_t count) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* s, ctx.required(i, "scale"));
  if (s->dtype() != DType::kFloat)
    return ctx.input_error(Code::kInvalidModel, i, "scale must be float, got {}", dtype_name(s->dtype()));
  const bool one = s->numel() == 1 && s->rank() <= 1;
  if (!one && !(per_channel && s->rank() == 1 && s->numel() == count))
    return ctx.input_error(Code::kInvalidModel, i, "scale shape {} must be a scalar{}", dims_to_string(s->dims()),
                           per_channel ? fmt::format(" or ({})", count) : std::string());
  return std::vector<float>(s->data<float>(), s->data<float>() + s->numel());
}

Status qlinear_conv(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* y_zp, ctx.required(7, "y_zero_point"));
  if (!is_quantized_storage(y_zp->dtype()) || y_zp->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, 7, "must be one int8 or uint8 value, got {} {}",
                           dtype_name(y_zp->dtype()), dims_to_string(y_zp->dims()));
  ConvShape s;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, 0, 2, 3, 5, &s));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> x_scale, conv_scale(ctx, 1, false, 1));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> w_scale, conv_scale(ctx, 4, true, s.filters));
  QONNX_ASSIGN_OR_RETURN(std::vector<float> y_scale, conv_scale(ctx, 6, false, 1));
  const Tensor* bias = ctx.input(8);
  QONNX_RETURN_IF_ERROR(check_bias(ctx, 8, bias, s.filters, DType::kInt32));
  const double zp = exec::element_as_double(*y_zp, 0);
  Tensor y(y_zp->dtype(), s.out_dims);
  store_saturated(&y, [&](int64_t e) {
    const int64_t m = (e / s.out_size) % s.filters;
    const int64_t v = acc[static_cast<size_t>(e)] + (bias ? bias->data<int32_t>()[m] : 0);
    // The reference scales the int32 result by a float32 multiplier in double precision.
    const float mult = x_scale[0] * w_scale[w_scale.size() == 1 ? 0 : static_cast<size_t>(m)] / y_scale[0];
    return std::nearbyint(static_cast<double>(v) * static_cast<double>(mult)) + zp;
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_conv_kernels(exec::KernelRegistry& r) {
  r.add("", "Conv", 1, conv_kernel);
  r.add("", "ConvInteger", 10, conv_integer);
  r.add("", "QLinearConv", 10, qlinear_conv);
}

}  // namespace qonnx::kernels
