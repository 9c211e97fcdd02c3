// Conv (1-D/2-D/3-D and beyond, groups, dilations, strides, pads, auto_pad, optional bias) and its
// integer forms ConvInteger and QLinearConv. Each (image, group) is an im2col matrix multiplied by
// the group's weights: in float an implicit GEMM that packs one block of that matrix at a time (1x1
// reads x in place, depthwise has its own path); integers and double build it whole.
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

// y (N, M, out...) += conv(x, w), products and sums in Acc; y starts zeroed. Integers and double: a
// full im2col per (image, group) and the generic GEMM.
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

// float convolution as an implicit GEMM: y_group (mg x out_size) = w_group (mg x rows) x col, where
// col (rows = cg * kernel_size, one column per output position) is never stored whole: the GEMM asks
// for one block of it at a time (kKc rows x one column panel) and Im2colSource writes that block
// from x. Row r of col is (channel r / kernel_size, kernel offset r % kernel_size), the weights' own
// order, so the result is the same as multiplying a full im2col.
struct Im2colLayout {
  int64_t kernel_size = 1, kernel_w = 1, in_size = 1, in_w = 1, out_w = 1, outer_count = 1;
  int64_t stride_w = 1, dilation_w = 1, pad_w = 0;
  // row_of[ko * outer_count + oo]: the input row (all dims but the last, flattened) read by kernel
  // row ko at output row oo, or -1 when that row lies in the padding.
  std::vector<int64_t> row_of;
};

Im2colLayout im2col_layout(const ConvShape& s) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank(), last = nd - 1;
  Im2colLayout l;
  l.kernel_size = s.kernel_size;
  l.kernel_w = g.kernel[last];
  l.in_size = s.in_size;
  l.in_w = g.in[last];
  l.out_w = g.out[last];
  l.outer_count = s.out_size / std::max<int64_t>(l.out_w, 1);
  l.stride_w = g.strides[last];
  l.dilation_w = g.dilations[last];
  l.pad_w = g.pads_begin[last];
  const int64_t kernel_outer = s.kernel_size / l.kernel_w;
  l.row_of.resize(static_cast<size_t>(kernel_outer * l.outer_count));
  std::vector<int64_t> k(nd, 0), o(nd, 0);
  for (int64_t ko = 0; ko < kernel_outer; ++ko) {
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oo = 0; oo < l.outer_count; ++oo) {
      int64_t row = 0;
      for (size_t d = 0; d < last && row >= 0; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
        row = (i < 0 || i >= g.in[d]) ? -1 : row * g.in[d] + i;
      }
      l.row_of[static_cast<size_t>(ko * l.outer_count + oo)] = row;
      for (size_t d = last; d-- > 0;) {
        if (++o[d] < g.out[d]) break;
        o[d] = 0;
      }
    }
    for (size_t d = last; d-- > 0;) {
      if (++k[d] < g.kernel[d]) break;
      k[d] = 0;
    }
  }
  return l;
}

class Im2colSource final : public FloatPanelSource {
 public:
  Im2colSource(const float* x, const Im2colLayout& l) : x_(x), l_(l) {}  // x: the group's first channel

  const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                     int64_t* ld) const override {
    for (int64_t r = p0; r < p0 + kc; ++r) {
      const int64_t c = r / l_.kernel_size, kk = r % l_.kernel_size;
      const int64_t ko = kk / l_.kernel_w, shift = (kk % l_.kernel_w) * l_.dilation_w - l_.pad_w;
      const float* plane = x_ + c * l_.in_size;
      const int64_t* rows = l_.row_of.data() + ko * l_.outer_count;
      float* dst = scratch + (r - p0) * nr;
      for (int64_t done = 0, j = j0; done < cols;) {  // runs of columns within one output row
        const int64_t oo = j / l_.out_w, ow = j - oo * l_.out_w, run = std::min(l_.out_w - ow, cols - done);
        float* d = dst + done;
        if (rows[oo] < 0) {
          std::fill_n(d, run, 0.0f);
        } else {
          const float* src = plane + rows[oo] * l_.in_w;
          if (l_.stride_w == 1) {
            const int64_t i0 = ow + shift;  // input column of d[0]; d[lo, hi) lies inside the row
            const int64_t lo = std::clamp<int64_t>(-i0, 0, run), hi = std::clamp<int64_t>(l_.in_w - i0, lo, run);
            std::fill_n(d, lo, 0.0f);
            std::copy(src + i0 + lo, src + i0 + hi, d + lo);
            std::fill(d + hi, d + run, 0.0f);
          } else {
            for (int64_t t = 0; t < run; ++t) {
              const int64_t i = (ow + t) * l_.stride_w + shift;
              d[t] = (i >= 0 && i < l_.in_w) ? src[i] : 0.0f;
            }
          }
        }
        done += run;
        j += run;
      }
    }
    *ld = nr;
    return scratch;
  }

 private:
  const float* x_;
  const Im2colLayout& l_;
};

// One input channel per group (depthwise, any channel multiplier), 2-D, unit width stride: the
// channel is copied once into a zero-padded plane, and for kernel row kh the window's columns
// kw = 0.. are rows of a matrix with row stride dilation_w over that plane, so each (kernel row,
// output row) is a kernel_w-deep GEMM tile with no im2col at all. The tiles continue each output's
// sum in the im2col row order (kh, then kw), so the bits equal the general path's.
bool is_depthwise_2d(const ConvShape& s) {
  return s.channels == s.group && s.geo.rank() == 2 && s.geo.strides[1] == 1;
}

void depthwise_conv_2d(const ConvShape& s, const float* x, const float* w, float* y) {
  const WindowGeometry& g = s.geo;
  const int64_t mg = s.filters / s.group, kh_n = g.kernel[0], kw_n = g.kernel[1];
  const int64_t ph = g.pads_begin[0] + g.pads_end[0], pw = g.pads_begin[1] + g.pads_end[1];
  const int64_t padded_h = g.in[0] + ph, padded_w = g.in[1] + pw, out_h = g.out[0], out_w = g.out[1];
  const gemm_detail::FloatMicroKernel& mk = gemm_detail::float_micro();
  exec::parallel_for(s.batch * s.group, mg * s.kernel_size * s.out_size, [&](int64_t u0, int64_t u1) {
    std::vector<float> padded(static_cast<size_t>(padded_h * padded_w), 0.0f);
    for (int64_t u = u0; u < u1; ++u) {  // u = (image, channel)
      const float* plane = x + u * s.in_size;
      for (int64_t r = 0; r < g.in[0]; ++r)
        std::copy(plane + r * g.in[1], plane + (r + 1) * g.in[1],
                  padded.data() + (r + g.pads_begin[0]) * padded_w + g.pads_begin[1]);
      const int64_t channel = u % s.group;
      float* yu = y + u * mg * s.out_size;  // filters channel * mg .. of image u / group
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t i0 = 0; i0 < mg; i0 += mk.mr)
          for (int64_t ow = 0; ow < out_w; ow += mk.nr)
            for (int64_t kh = 0; kh < kh_n; ++kh) {
              const int rows = static_cast<int>(std::min<int64_t>(mk.mr, mg - i0));
              const int cols = static_cast<int>(std::min<int64_t>(mk.nr, out_w - ow));
              const float* b = padded.data() + (oh * g.strides[0] + kh * g.dilations[0]) * padded_w + ow;
              mk.tile[rows - 1](kw_n, w + (channel * mg + i0) * s.kernel_size + kh * kw_n, s.kernel_size, b,
                                g.dilations[1], yu + i0 * s.out_size + oh * out_w + ow, s.out_size, cols, kh > 0);
            }
    }
  });
}

// y = conv(x, w) in float (fused multiply-adds in the im2col row order, see gemm_core.h).
void conv_f32(const ConvShape& s, const float* x, const float* w, float* y) {
  if (s.out_size == 0 || s.filters == 0) return;
  if (is_depthwise_2d(s)) return depthwise_conv_2d(s, x, w, y);
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, rows = cg * s.kernel_size;
  auto product = [&](int64_t i, auto b) {  // item i = (image i / group, group i % group)
    struct Item {
      FloatGemm gemm;
      decltype(b) source;
    };
    Item item{FloatGemm(), b};
    item.gemm.m = mg, item.gemm.n = s.out_size, item.gemm.k = rows;
    item.gemm.a = w + (i % s.group) * mg * rows, item.gemm.lda = rows;
    item.gemm.c = y + i * mg * s.out_size, item.gemm.ldc = s.out_size;
    return item;
  };
  const int64_t count = s.batch * s.group, group_in = cg * s.in_size;
  if (is_pointwise(s)) {  // 1x1: x itself is col
    float_gemm_many(count, [&](int64_t i) { return product(i, FloatRowMajorSource(x + i * group_in, s.in_size)); });
    return;
  }
  const Im2colLayout layout = im2col_layout(s);
  float_gemm_many(count, [&](int64_t i) { return product(i, Im2colSource(x + i * group_in, layout)); });
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
  if constexpr (std::is_same_v<T, float>)
    conv_f32(s, x, w, y);
  else
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
  QONNX_ASSIGN_OR_RETURN(Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(Tensor wf, exec::cast_tensor(*w, DType::kFloat));
  Tensor bf;
  if (b) {
    QONNX_ASSIGN_OR_RETURN(bf, exec::cast_tensor(*b, DType::kFloat));
  }
  Tensor y(DType::kFloat, s.out_dims);
  conv_float<float>(s, xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr, y.data<float>());
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, dt));
  ctx.set_output(0, std::move(out));
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
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(*x, DType::kInt32));
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
  QONNX_ASSIGN_OR_RETURN(Tensor zpi, exec::cast_tensor(*zp, DType::kInt32));
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
