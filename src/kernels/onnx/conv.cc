// Conv (1-D/2-D/3-D and beyond, groups, dilations, strides, pads, auto_pad, optional bias) and its
// integer forms ConvInteger and QLinearConv. Each (image, group) is an im2col matrix multiplied by
// the group's weights: in float an implicit GEMM that packs one block of that matrix at a time (1x1
// reads x in place, depthwise has its own path); integers and double build it whole.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/conv_depthwise.h"
#include "kernels/onnx/conv_integer.h"
#include "kernels/common/conv_util.h"
#include "kernels/common/depthwise_int.h"
#include "kernels/common/gemm_core.h"
#include "kernels/common/integer_form.h"
#include "kernels/isa/isa.h"
#include "kernels/common/quant_avx2.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/quantize_util.h"
#include "kernels/common/transpose.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

// Checks X dims (N, C, D1..Dn) against W dims (M, C/group, k1..kn) and the attributes.
Result<ConvShape> conv_shape(const exec::KernelContext& ctx, const ConvAttrs& attrs, const Dims& x, const Dims& w,
                             size_t x_in, size_t w_in) {
  if (x.size() < 3)
    return ctx.input_error(Code::kInvalidModel, x_in, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x));
  if (w.size() != x.size())
    return ctx.input_error(Code::kInvalidModel, w_in, "weight shape {} must have the input's rank {}",
                           dims_to_string(w), x.size());
  ConvShape s;
  s.batch = x[0];
  s.channels = x[1];
  s.filters = w[0];
  s.group = attrs.group;
  if (s.channels % s.group != 0 || w[1] * s.group != s.channels)
    return ctx.input_error(Code::kInvalidModel, w_in,
                           "weight shape {} expects {} input channels ({} per group x group {}), input has {}",
                           dims_to_string(w), w[1] * s.group, w[1], s.group, s.channels);
  if (s.filters % s.group != 0)
    return ctx.input_error(Code::kInvalidModel, w_in, "{} output channels are not divisible by group {}", s.filters,
                           s.group);
  const Dims in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  if (attrs.window.kernel_shape.given && attrs.window.kernel_shape.values != kernel)
    return ctx.error(Code::kInvalidModel, "kernel_shape {} does not match the weight's spatial dims {}",
                     dims_to_string(attrs.window.kernel_shape.values), dims_to_string(kernel));
  QONNX_ASSIGN_OR_RETURN(s.geo, window_geometry(ctx, attrs.window, in, kernel));
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
        next_index(o, g.out, last);
      }
      next_index(k, g.kernel, nd);
    }
  }
}

// One input channel per group (depthwise) by W's dims (M, C/group, k...): the layers prepack_conv gives
// a DepthwiseIntegerLayer.
bool one_channel_per_group(int64_t group, const Tensor& w) { return group > 1 && w.rank() >= 3 && w.dim(1) == 1; }

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
  // Per im2col row r = (channel, kernel offset): where its values come from, without divisions.
  struct ColRow {
    int64_t plane;     // the channel's offset in x
    int64_t row_base;  // ko * outer_count: its kernel row's entries in row_of
    int64_t shift;     // input column of output column 0 (kernel column * dilation - pad)
  };
  std::vector<ColRow> col_rows;
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
      next_index(o, g.out, last);
    }
    next_index(k, g.kernel, last);
  }
  const int64_t channels = s.channels / s.group;
  l.col_rows.reserve(static_cast<size_t>(channels * s.kernel_size));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kk = 0; kk < s.kernel_size; ++kk)
      l.col_rows.push_back({c * l.in_size, kk / l.kernel_w * l.outer_count, (kk % l.kernel_w) * l.dilation_w - l.pad_w});
  return l;
}

// dst[0, n) = src[0, n) for the short runs of a panel row (up to nr floats): fixed-size copies the
// compiler inlines, where std::copy would call memmove once per run.
inline void copy_run(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(float));
  for (; i < n; ++i) std::memcpy(dst + i, src + i, sizeof(float));
}

class Im2colSource final : public FloatPanelSource {
 public:
  Im2colSource(const float* x, const Im2colLayout& l) : x_(x), l_(l) {}  // x: the group's first channel

  const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                     int64_t* ld) const override {
    for (int64_t done = 0, j = j0; done < cols;) {  // runs of columns within one output row
      const int64_t oo = j / l_.out_w, ow = j - oo * l_.out_w, run = std::min(l_.out_w - ow, cols - done);
      for (int64_t r = p0; r < p0 + kc; ++r) {
        const Im2colLayout::ColRow& info = l_.col_rows[static_cast<size_t>(r)];
        const int64_t row = l_.row_of[static_cast<size_t>(info.row_base + oo)];
        float* d = scratch + (r - p0) * nr + done;
        if (row < 0) {
          for (int64_t t = 0; t < run; ++t) d[t] = 0.0f;
          continue;
        }
        const float* src = x_ + info.plane + row * l_.in_w;
        if (l_.stride_w == 1) {
          const int64_t i0 = ow + info.shift;  // input column of d[0]; d[lo, hi) lies inside the row
          const int64_t lo = std::clamp<int64_t>(-i0, 0, run), hi = std::clamp<int64_t>(l_.in_w - i0, lo, run);
          for (int64_t t = 0; t < lo; ++t) d[t] = 0.0f;
          copy_run(src + i0 + lo, d + lo, hi - lo);
          for (int64_t t = hi; t < run; ++t) d[t] = 0.0f;
        } else {
          for (int64_t t = 0; t < run; ++t) {
            const int64_t i = (ow + t) * l_.stride_w + info.shift;
            d[t] = (i >= 0 && i < l_.in_w) ? src[i] : 0.0f;
          }
        }
      }
      done += run;
      j += run;
    }
    *ld = nr;
    return scratch;
  }

 private:
  const float* x_;
  const Im2colLayout& l_;
};

// One input channel per group (depthwise, any channel multiplier), 2-D, unit width stride: the
// channel is copied once into a zero-padded plane, and each filter runs over it with the output row
// as vector lanes (depthwise_plane_f32), each output's fma chain in the im2col row order (kh, then
// kw) from 0, so the bits equal the general path's.
bool is_depthwise_2d(const ConvShape& s) {
  return s.channels == s.group && s.geo.rank() == 2 && s.geo.strides[1] == 1;
}

void depthwise_conv_2d(const ConvShape& s, const float* x, const float* w, float* y) {
  const WindowGeometry& g = s.geo;
  const int64_t mg = s.filters / s.group, kh_n = g.kernel[0], kw_n = g.kernel[1];
  const int64_t ph = g.pads_begin[0] + g.pads_end[0], pw = g.pads_begin[1] + g.pads_end[1];
  const int64_t padded_h = g.in[0] + ph, padded_w = g.in[1] + pw, out_h = g.out[0], out_w = g.out[1];
  exec::parallel_for(s.batch * s.group, mg * s.kernel_size * s.out_size, [&](int64_t u0, int64_t u1) {
    std::vector<float> padded(static_cast<size_t>(padded_h * padded_w), 0.0f);
    for (int64_t u = u0; u < u1; ++u) {  // u = (image, channel)
      const float* plane = x + u * s.in_size;
      for (int64_t r = 0; r < g.in[0]; ++r)
        std::copy(plane + r * g.in[1], plane + (r + 1) * g.in[1],
                  padded.data() + (r + g.pads_begin[0]) * padded_w + g.pads_begin[1]);
      const int64_t channel = u % s.group;
      float* yu = y + u * mg * s.out_size;  // filters channel * mg .. of image u / group
      const DepthwisePlane filter_input{padded.data(), padded_w, out_h, out_w, kh_n, kw_n, g.strides[0],
                                        g.dilations[0], g.dilations[1]};
      for (int64_t j = 0; j < mg; ++j)
        depthwise_plane_f32(filter_input, w + (channel * mg + j) * s.kernel_size, yu + j * s.out_size);
    }
  });
}

// Few filters per group (one or two tile strips), 2-D, unit width stride: im2col's rows would each be
// packed for only a few multiply-adds. Instead each output row gathers its kernel_h input rows of
// every channel, zero-padded, and every (channel, kernel row) is a kernel_w-deep tile over them (the
// kw rows overlap, row stride dilation_w), continuing each output's sum in the im2col row order
// (channel, kh, kw), so the bits equal the packed path's.
// How few: up to two tile strips with AVX2's 6 x 16 tiles (measured on an AVX2 CPU); with AVX-512's 8 x 32
// tiles the packed path is faster from about 4 filters on (measured 2026-12-02, 1 thread: 32 -> 16 filters
// at 112 x 112, 4.7 against 2.5 ms; 3 -> 1 filter at 224 x 224, 0.19 against 0.34 ms), so up to 4 there.
bool is_narrow_2d(const ConvShape& s) {
  const gemm_detail::FloatMicroKernel& mk = gemm_detail::float_micro();
  const int64_t most = mk.nr > 16 ? 4 : 2 * mk.mr;
  return s.geo.rank() == 2 && s.geo.strides[1] == 1 && s.filters / s.group <= most;
}

void narrow_conv_2d(const ConvShape& s, const float* x, const float* w, float* y) {
  const WindowGeometry& g = s.geo;
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, rows = cg * s.kernel_size;
  const int64_t kh_n = g.kernel[0], kw_n = g.kernel[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t pad_l = g.pads_begin[1], padded_w = g.in[1] + pad_l + g.pads_end[1];
  const gemm_detail::FloatMicroKernel& mk = gemm_detail::float_micro();
  // unit = (image, group, output row)
  exec::parallel_for(s.batch * s.group * out_h, mg * rows * out_w, [&](int64_t u0, int64_t u1) {
    std::vector<float> window(static_cast<size_t>(cg * kh_n * padded_w));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t oh = u % out_h, ng = u / out_h, group = ng % s.group;
      const float* xg = x + ng * cg * s.in_size;  // image ng / group, the group's first channel
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          float* dst = window.data() + (c * kh_n + kh) * padded_w;
          const int64_t ih = oh * g.strides[0] - g.pads_begin[0] + kh * g.dilations[0];
          if (ih < 0 || ih >= g.in[0]) {
            std::fill_n(dst, padded_w, 0.0f);
            continue;
          }
          std::fill_n(dst, pad_l, 0.0f);
          copy_run(xg + c * s.in_size + ih * g.in[1], dst + pad_l, g.in[1]);
          std::fill(dst + pad_l + g.in[1], dst + padded_w, 0.0f);
        }
      float* yu = y + ng * mg * s.out_size + oh * out_w;
      const float* wg = w + group * mg * rows;
      for (int64_t i0 = 0; i0 < mg; i0 += mk.mr)
        for (int64_t ow = 0; ow < out_w; ow += mk.nr) {
          const int tile_rows = static_cast<int>(std::min<int64_t>(mk.mr, mg - i0));
          const int cols = static_cast<int>(std::min<int64_t>(mk.nr, out_w - ow));
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < kh_n; ++kh)
              mk.tile[tile_rows - 1](kw_n, wg + i0 * rows + (c * kh_n + kh) * kw_n, rows,
                                     window.data() + (c * kh_n + kh) * padded_w + ow, g.dilations[1],
                                     yu + i0 * s.out_size + ow, s.out_size, cols, c > 0 || kh > 0);
        }
    }
  });
}

// Unit strides: the convolution on the zero-padded input's grid. With xp the padded channels (padded dims
// P_d, row-major strides q_d), output o reads xp at sum_d o_d * q_d + off(c, k), off(c, k) = c * |P| +
// sum_d k_d * dilation_d * q_d, so im2col row (c, k) is xp shifted by off(c, k), and a column panel of it is
// one contiguous run: its packing is a plain copy, with no bounds or padding checks. The GEMM runs over the
// grid positions j = sum_d o_d * q_d (the columns between rows, o_d past out_d, are computed and dropped);
// the values and the order of the sums are im2col's, so the bits are the packed path's.
struct PaddedGrid {
  int64_t padded_size = 1;  // |P|
  int64_t span = 0;         // grid positions from the first output to the last, inclusive
  std::vector<int64_t> offsets;  // per im2col row (channel, kernel offset)
};

PaddedGrid padded_grid(const ConvShape& s) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  PaddedGrid grid;
  std::vector<int64_t> q(nd, 1);
  for (size_t d = nd; d-- > 0;) {
    q[d] = grid.padded_size;
    grid.padded_size *= g.pads_begin[d] + g.in[d] + g.pads_end[d];
  }
  for (size_t d = 0; d < nd; ++d) grid.span += (g.out[d] - 1) * q[d];
  grid.span += 1;
  std::vector<int64_t> k(nd, 0);
  for (int64_t c = 0; c < s.channels / s.group; ++c) {
    do {
      int64_t off = c * grid.padded_size;
      for (size_t d = 0; d < nd; ++d) off += k[d] * g.dilations[d] * q[d];
      grid.offsets.push_back(off);
    } while (next_index(k, g.kernel, nd));
  }
  return grid;
}

// Worth it where the dropped grid columns are few (up to 1/8 of the outputs), and where its two buffers (the
// padded input and the grid's outputs) leave a memory limit (--max-memory) at least half free: the packed
// path needs neither.
bool unit_strides(const ConvShape& s) {
  for (int64_t stride : s.geo.strides)
    if (stride != 1) return false;
  return true;
}

bool use_padded_grid(const ConvShape& s, const PaddedGrid& grid) {
  if (grid.span * 8 > s.out_size * 9) return false;
  const uint64_t limit = memory_limit();
  const double bytes = 4.0 * static_cast<double>(s.batch) *
                       static_cast<double>(s.channels * grid.padded_size + s.filters * grid.span);
  return limit == 0 || static_cast<double>(memory_in_use()) + bytes <= static_cast<double>(limit) / 2;
}

class PaddedGridSource final : public FloatPanelSource {
 public:
  PaddedGridSource(const float* xp, const std::vector<int64_t>& offsets) : xp_(xp), offsets_(offsets) {}
  const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                     int64_t* ld) const override {
    for (int64_t r = p0; r < p0 + kc; ++r) copy_run(xp_ + offsets_[static_cast<size_t>(r)] + j0, scratch + (r - p0) * nr, cols);
    *ld = nr;
    return scratch;
  }

 private:
  const float* xp_;
  const std::vector<int64_t>& offsets_;
};

void conv_padded_grid_f32(const ConvShape& s, const PaddedGrid& grid, const float* x, const float* w, float* y) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, rows = cg * s.kernel_size;
  const int64_t count = s.batch * s.group;
  // The padded input of every item (image, group), then the grid outputs, then the outputs kept.
  Tensor padded(DType::kFloat, {count * cg * grid.padded_size});  // zeros: the padding
  Tensor grid_out = Tensor::uninitialized(DType::kFloat, {count * mg * grid.span});
  float* xp = padded.data<float>();
  float* yp = grid_out.data<float>();
  std::vector<int64_t> padded_dims(nd);
  for (size_t d = 0; d < nd; ++d) padded_dims[d] = g.pads_begin[d] + g.in[d] + g.pads_end[d];
  const int64_t in_w = g.in[nd - 1], in_rows = s.in_size / in_w, out_w = g.out[nd - 1], out_rows = s.out_size / out_w;
  // Where input row r (all dims but the last) starts in a padded channel, and grid row o of an output.
  auto row_start = [&](int64_t r, const Dims& extent, bool with_pads) {
    int64_t at = 0, stride = padded_dims[nd - 1];
    for (size_t d = nd - 1; d-- > 0;) {
      at += (r % extent[d] + (with_pads ? g.pads_begin[d] : 0)) * stride;
      r /= extent[d];
      stride *= padded_dims[d];
    }
    return at + (with_pads ? g.pads_begin[nd - 1] : 0);
  };
  exec::parallel_for(count * cg, s.in_size, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u)  // u = (image, channel)
      for (int64_t r = 0; r < in_rows; ++r)
        std::copy_n(x + u * s.in_size + r * in_w, in_w, xp + u * grid.padded_size + row_start(r, g.in, true));
  });
  float_gemm_many(count, [&](int64_t i) {
    struct Item {
      FloatGemm gemm;
      PaddedGridSource source;
    };
    Item item{FloatGemm(), PaddedGridSource(xp + i * cg * grid.padded_size, grid.offsets)};
    item.gemm.m = mg, item.gemm.n = grid.span, item.gemm.k = rows;
    item.gemm.a = w + (i % s.group) * mg * rows, item.gemm.lda = rows;
    item.gemm.c = yp + i * mg * grid.span, item.gemm.ldc = grid.span;
    return item;
  });
  exec::parallel_for(count * mg, s.out_size, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u)  // u = (item, filter): the same order as y's planes
      for (int64_t r = 0; r < out_rows; ++r)
        std::copy_n(yp + u * grid.span + row_start(r, g.out, false), out_w, y + u * s.out_size + r * out_w);
  });
}

// y = conv(x, w) in float (fused multiply-adds in the im2col row order, see gemm_core.h).
void conv_f32(const ConvShape& s, const float* x, const float* w, float* y) {
  if (s.out_size == 0 || s.filters == 0) return;
  if (is_depthwise_2d(s)) return depthwise_conv_2d(s, x, w, y);
  if (is_narrow_2d(s)) return narrow_conv_2d(s, x, w, y);
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
  if (unit_strides(s)) {  // (pointwise and empty convolutions returned above)
    const PaddedGrid grid = padded_grid(s);
    if (use_padded_grid(s, grid)) return conv_padded_grid_f32(s, grid, x, w, y);
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

// --- the integer path (docs/arithmetic.md): X and W hold integers times scales, the sums are exact.

}  // namespace

// Plan-time: W's integers packed per group when X's form has one scale and fits a byte, W's has one scale
// or one per output channel and its integers fit int8, and the bias (if any) is a constant. W's rows
// are its filters in stored order, so the channels-last Conv's (M, k..., C) weights pack the same way
// (its taps are gathered in that order).
exec::PreparedState prepack_conv(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt) return nullptr;
  const Tensor* w = c.constant(1);
  const exec::IntegerForm* wf = c.form(1);
  auto note = [&](std::string text) { return float_path(c, std::move(text)); };
  if (!c.form(0) && !wf) return nullptr;  // a float layer: nothing to say
  if (!w || !wf) return note("W is not a constant with an integer form (a quantizer's output)");
  if (w->rank() < 3 || !(wf->per_tensor() || wf->axis == 0)) return note("W's scale is not per tensor or per output channel");
  const auto x = byte_activation(c.form(0));
  if (!x) return note("X has no integer form with one scale and at most 256 values including 0");
  const int64_t group = static_cast<const ConvAttrs*>(c.prepared)->group;
  if (group != 1 && c.node->domain() == dialect::kChannelsLastDomain) return note("a channels-last Conv with groups");
  const ir::Value* bias_value = c.node->inputs().size() > 2 ? c.node->inputs()[2] : nullptr;
  if (bias_value && !c.constant(2)) return note("the bias is not a constant");
  std::vector<int8_t> values;
  if (!int8_values(*w, *wf, &values)) return note("W's integers do not fit int8");
  const int64_t filters = w->dim(0);
  if (group < 1 || filters % group != 0) return nullptr;  // the run reports it
  const int64_t k = w->numel() / std::max<int64_t>(filters, 1);
  std::string why;
  if (one_channel_per_group(group, *w) && c.node->domain() != dialect::kChannelsLastDomain) {
    // Its own kernel (a GEMM of one column per group would waste the int8 tiles). W stays in the plan as
    // floats too (C x k values) for a run the integer path cannot take.
    auto layer = make_depthwise_integer_layer(*x, values, filters, Dims(w->dims().begin() + 2, w->dims().end()), wf->scales,
                                              c.constant(2), &why);
    if (!layer) return note(why);
    if (c.path_note) *c.path_note = depthwise_integer_note(*layer);
    if (c.takes_epilogue) *c.takes_epilogue = true;
    if (c.reads_input_codes) *c.reads_input_codes = true;
    if (c.writes_output_codes) *c.writes_output_codes = true;
    return std::make_shared<const DepthwiseIntegerLayer>(std::move(*layer));
  }
  if (c.node->domain() != dialect::kChannelsLastDomain) {
    // (M, C/group, kernel offsets) -> (M, kernel offsets, C/group): the order the run gathers taps in.
    std::vector<int8_t> reordered(values.size());
    const int64_t taps = w->numel() / std::max<int64_t>(filters * w->dim(1), 1);
    transpose_inner(values.data(), reordered.data(), filters, w->dim(1), taps, 1);
    values = std::move(reordered);
  }
  auto layer = make_integer_layer(*x, values, group, k, filters / group, true, wf->scales, c.constant(2), &why);
  if (!layer) return note(why);
  if (c.path_note) *c.path_note = integer_path_note(*layer);
  if (c.captured_inputs) *c.captured_inputs |= uint64_t{1} << 1;  // W lives on as its codes
  if (c.takes_epilogue) *c.takes_epilogue = true;
  if (c.node->domain() != dialect::kChannelsLastDomain) {  // channels-first: byte codes in and out
    if (c.reads_input_codes) *c.reads_input_codes = true;
    if (c.writes_output_codes) *c.writes_output_codes = true;
  }
  return std::make_shared<const IntegerLayer>(std::move(*layer));
}

namespace {

Tensor conv_weights_from_codes(const ConvShape& s, const IntegerLayer& layer, const Dims& w_dims, bool channels_last);

}  // namespace

Result<ConvAttrs> prepare_conv(const ir::Node& node, int64_t) {
  ConvAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.group, int_attr(node, "group", 1));
  if (a.group < 1 || a.group > kMaxWindowAttr)
    return Status(Code::kInvalidModel, fmt::format("attribute 'group': group must be a positive integer, got {}", a.group));
  QONNX_ASSIGN_OR_RETURN(a.window, read_window_attrs(node, true));
  a.window.ceil_mode = false;  // not a Conv attribute
  return a;
}

Status conv_kernel(exec::KernelContext& ctx, const ConvAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(1, "W"));
  const Tensor* b = ctx.input(2);
  const DType dt = x->dtype();
  if (!dtype_is_float(dt))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(dt));
  if (w->dtype() != dt)
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from X's {}", dtype_name(w->dtype()),
                           dtype_name(dt));
  QONNX_ASSIGN_OR_RETURN(ConvShape s, conv_shape(ctx, attrs, x->dims(), w->dims(), 0, 1));
  QONNX_RETURN_IF_ERROR(check_bias(ctx, 2, b, s.filters, dt));
  if (dt == DType::kDouble) {
    Tensor y(dt, s.out_dims);
    conv_float<double>(s, x->data<double>(), w->data<double>(), b ? b->data<double>() : nullptr, y.data<double>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  Tensor w_from_codes;
  if (ctx.prepacked() && dt == DType::kFloat && one_channel_per_group(s.group, *w)) {
    // W stayed in the plan as floats: a run the integer path cannot take reads it.
    const auto* layer = static_cast<const DepthwiseIntegerLayer*>(ctx.prepacked());
    Tensor y = ctx.output_buffer(DType::kFloat, s.out_dims);
    const std::optional<ByteActivation> out_form = byte_activation(ctx.output_codes_form());
    Tensor codes = out_form ? Tensor::uninitialized(DType::kUInt8, {s.batch * s.out_size * s.filters}) : Tensor();
    OutputCodes out;
    if (out_form) out.form = *out_form, out.bytes = codes.data<uint8_t>(), out.floats = ctx.output_floats_needed();
    if (depthwise_integer_nchw(*layer, s.geo, s.batch, s.channels, x->data<float>(), y.data<float>(), ctx.epilogue(),
                               ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr, out_form ? &out : nullptr)) {
      ctx.set_output(0, std::move(y));
      ctx.epilogue_done();
      if (out_form && out.made.load(std::memory_order_relaxed)) ctx.set_output_codes(std::move(codes));
      return Status::ok();
    }
  } else if (const auto* layer = static_cast<const IntegerLayer*>(ctx.prepacked()); layer && dt == DType::kFloat) {
    Tensor y = ctx.output_buffer(DType::kFloat, s.out_dims);
    CodesIo io;
    io.input = ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr;
    io.output_form = ctx.output_codes_form();
    io.floats_needed = ctx.output_floats_needed();
    if (conv_integer_path(s, *layer, x->data<float>(), false, y.data<float>(), ctx.epilogue(), &io)) {
      ctx.set_output(0, std::move(y));
      ctx.epilogue_done();
      if (io.output.defined()) ctx.set_output_codes(std::move(io.output));
      return Status::ok();
    }
    if (!w->raw()) {  // the plan holds W as codes only (a streamed W comes with its values)
      w_from_codes = conv_weights_from_codes(s, *layer, w->dims(), false);
      w = &w_from_codes;
    }
  }
  // float, and float16 / bfloat16 computed in float.
  QONNX_ASSIGN_OR_RETURN(Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(Tensor wf, exec::cast_tensor(*w, DType::kFloat));
  Tensor bf;
  if (b) {
    QONNX_ASSIGN_OR_RETURN(bf, exec::cast_tensor(*b, DType::kFloat));
  }
  Tensor y = ctx.output_buffer(DType::kFloat, s.out_dims);  // conv_f32 writes every element
  conv_float<float>(s, xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr, y.data<float>());
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, dt));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

namespace {

// Channels-last float convolution as an implicit GEMM per block of output positions: the block's
// im2col columns are gathered from (N, d..., C) data in the channels-first row order (channel, kernel
// offset), the weights are the channels-first ones, so every output is the same fused sum as
// conv_f32's; the (filters x positions) block is then written transposed, with the bias.
constexpr int64_t kChannelsLastBlock = 256;  // output positions per block (a multiple of every nr)

class ChannelsLastIm2colSource final : public FloatPanelSource {
 public:
  // x: the image (positions x channels); offsets[kk * kChannelsLastBlock + j]: the input position read by
  // kernel offset kk at block column j, or -1 in the padding.
  ChannelsLastIm2colSource(const float* x, int64_t channels, int64_t kernel_size, const int64_t* offsets)
      : x_(x), channels_(channels), kernel_size_(kernel_size), offsets_(offsets) {}

  const float* panel(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* scratch, int64_t nr,
                     int64_t* ld) const override {
    for (int64_t r = p0; r < p0 + kc; ++r) {
      const int64_t c = r / kernel_size_, kk = r % kernel_size_;
      const int64_t* at = offsets_ + kk * kChannelsLastBlock + j0;
      const float* xc = x_ + c;
      float* dst = scratch + (r - p0) * nr;
      for (int64_t t = 0; t < cols; ++t) dst[t] = at[t] < 0 ? 0.0f : xc[at[t] * channels_];
    }
    *ld = nr;
    return scratch;
  }

 private:
  const float* x_;
  int64_t channels_, kernel_size_;
  const int64_t* offsets_;
};

// The offset of each kernel tap from the window's first position, for a window inside an input of spatial
// dims `dims` (the input's own, or its padded ones).
std::vector<int64_t> tap_offsets(const ConvShape& s, const Dims& dims) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  std::vector<int64_t> k(nd, 0), relative(static_cast<size_t>(s.kernel_size));
  for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
    int64_t at = 0;
    for (size_t d = 0; d < nd; ++d) at = at * dims[d] + k[d] * g.dilations[d];
    relative[static_cast<size_t>(kk)] = at;
    next_index(k, g.kernel, nd);
  }
  return relative;
}

// offsets (kernel_size x kChannelsLastBlock) for output positions [pos0, pos0 + count). A window
// wholly inside the input is its first position plus fixed tap offsets (`relative`, tap_offsets(s));
// only border windows check each tap. With `inside_first`, an inside window's taps are not written:
// inside_first[j] is its first position (the caller adds `relative`), -1 for a border window.
void channels_last_offsets(const ConvShape& s, const std::vector<int64_t>& relative, int64_t pos0, int64_t count,
                           int64_t* offsets, int64_t* inside_first = nullptr, bool border_taps = true) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  if (nd == 1) {  // Conv1d, the same offsets without the general loop's index vectors
    const int64_t stride = g.strides[0], pad = g.pads_begin[0], dilation = g.dilations[0], in = g.in[0];
    for (int64_t j = 0; j < count; ++j) {
      const int64_t first = (pos0 + j) * stride - pad;
      const bool inside = first >= 0 && first + g.extent(0) <= in;
      if (inside_first) inside_first[j] = inside ? first : -1;
      if ((inside && inside_first) || !border_taps) continue;
      for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
        const int64_t at = first + kk * dilation;
        offsets[kk * kChannelsLastBlock + j] = at < 0 || at >= in ? -1 : at;
      }
    }
    return;
  }
  std::vector<int64_t> o(nd), k(nd, 0), base(nd);
  for (int64_t rest = pos0, d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
    o[static_cast<size_t>(d)] = rest % g.out[static_cast<size_t>(d)];
    rest /= g.out[static_cast<size_t>(d)];
  }
  for (int64_t j = 0; j < count; ++j) {
    bool inside = true;
    int64_t first = 0;
    for (size_t d = 0; d < nd; ++d) {
      base[d] = o[d] * g.strides[d] - g.pads_begin[d];
      inside = inside && base[d] >= 0 && base[d] + g.extent(d) <= g.in[d];
      first = first * g.in[d] + base[d];
    }
    if (inside_first) inside_first[j] = inside ? first : -1;
    if ((inside && inside_first) || !border_taps) {
      next_index(o, g.out, nd);
      continue;
    }
    if (inside) {
      const int64_t* rel = relative.data();  // locals: the stores below may alias s and the vector
      const int64_t taps = s.kernel_size;
      for (int64_t kk = 0; kk < taps; ++kk) offsets[kk * kChannelsLastBlock + j] = first + rel[kk];
    } else {
      std::fill(k.begin(), k.end(), 0);
      for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
        int64_t at = 0;
        for (size_t d = 0; d < nd && at >= 0; ++d) {
          const int64_t i = base[d] + k[d] * g.dilations[d];
          at = (i < 0 || i >= g.in[d]) ? -1 : at * g.in[d] + i;
        }
        offsets[kk * kChannelsLastBlock + j] = at;
        next_index(k, g.kernel, nd);
      }
    }
    next_index(o, g.out, nd);
  }
}

// y (rows, filters) += bias per column.
void add_bias_channels_last(float* y, int64_t rows, int64_t filters, const float* bias) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t m = 0; m < filters; ++m) y[j * filters + m] += bias[m];
}

void conv_channels_last_f32(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  const int64_t rows = s.channels * s.kernel_size, blocks = (s.out_size + kChannelsLastBlock - 1) / kChannelsLastBlock;
  const int64_t panels = float_gemm_panels(kChannelsLastBlock);
  const std::vector<int64_t> relative = tap_offsets(s, s.geo.in);
  exec::parallel_for(s.batch * blocks, s.filters * rows * kChannelsLastBlock, [&](int64_t u0, int64_t u1) {
    // Per share, from the tensor allocator (a std::vector's zeroing and the allocator's page faults cost
    // more than a small layer's block at 2 threads).
    const auto gemm_scratch = scratch<float>(float_gemm_scratch_floats());
    const auto block = scratch<float>(s.filters * kChannelsLastBlock);
    const auto offsets = scratch<int64_t>(s.kernel_size * kChannelsLastBlock);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / blocks, pos0 = (u % blocks) * kChannelsLastBlock;
      const int64_t count = std::min(kChannelsLastBlock, s.out_size - pos0);
      channels_last_offsets(s, relative, pos0, count, offsets.get());
      const ChannelsLastIm2colSource source(x + n * s.in_size * s.channels, s.channels, s.kernel_size, offsets.get());
      FloatGemm g;
      g.m = s.filters, g.n = count, g.k = rows, g.a = w, g.lda = rows, g.b = &source;
      g.c = block.get(), g.ldc = kChannelsLastBlock;
      float_gemm_block(g, 0, std::min(panels, float_gemm_panels(count)), gemm_scratch.get());
      float* yb = y + (n * s.out_size + pos0) * s.filters;
      transpose_inner_serial(block.get(), yb, s.filters, kChannelsLastBlock, count);
      if (bias) add_bias_channels_last(yb, count, s.filters, bias);
    }
  });
}

// Depthwise (one filter per channel) on channels-last data: each output position's taps are rows of
// C contiguous values, so the channels are the vector lanes. w: (kernel offsets, C).
void depthwise_channels_last_f32(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  const int64_t channels = s.channels, blocks = (s.out_size + kChannelsLastBlock - 1) / kChannelsLastBlock;
  const std::vector<float> zeros(static_cast<size_t>(channels), 0.0f);  // a tap in the padding
  const std::vector<int64_t> relative = tap_offsets(s, s.geo.in);
  exec::parallel_for(s.batch * blocks, kChannelsLastBlock * s.kernel_size * channels, [&](int64_t u0, int64_t u1) {
    const auto offsets = scratch<int64_t>(s.kernel_size * kChannelsLastBlock);
    std::vector<const float*> taps(static_cast<size_t>(s.kernel_size));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / blocks, pos0 = (u % blocks) * kChannelsLastBlock;
      const int64_t count = std::min(kChannelsLastBlock, s.out_size - pos0);
      channels_last_offsets(s, relative, pos0, count, offsets.get());
      const float* image = x + n * s.in_size * channels;
      for (int64_t j = 0; j < count; ++j) {
        for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
          const int64_t at = offsets[kk * kChannelsLastBlock + j];
          taps[static_cast<size_t>(kk)] = at < 0 ? zeros.data() : image + at * channels;
        }
        float* yp = y + (n * s.out_size + pos0 + j) * channels;
        depthwise_position_f32(taps.data(), s.kernel_size, w, channels, yp);
        if (bias) add_bias_channels_last(yp, 1, channels, bias);
      }
    }
  });
}

// The bytes of a border window at output position `pos` (one group, no dilation along the last dim) into
// `row`, in (kernel offset, channel) order: per kernel row the taps inside the image are one run of
// channels-last bytes, the others the byte of 0. `coord`: scratch of 2 * rank.
void border_row_runs(const ConvShape& s, const uint8_t* image, int64_t pos, uint8_t zero, std::vector<int64_t>& coord,
                     uint8_t* row) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank(), last = nd - 1;
  int64_t* o = coord.data();
  int64_t* k = coord.data() + nd;
  for (size_t d = nd; d-- > 0;) {
    o[d] = pos % g.out[d];
    pos /= g.out[d];
  }
  const int64_t channels = s.channels, kernel_w = g.kernel[last], run = kernel_w * channels;
  const int64_t col0 = o[last] * g.strides[last] - g.pads_begin[last];
  const int64_t t_lo = std::clamp<int64_t>(-col0, 0, kernel_w), t_hi = std::clamp<int64_t>(g.in[last] - col0, t_lo, kernel_w);
  std::fill(k, k + nd, 0);
  for (int64_t kr = 0; kr < s.kernel_size / kernel_w; ++kr, row += run) {
    int64_t at = 0;  // the input row (all dims but the last), or -1 in the padding
    for (size_t d = 0; d < last && at >= 0; ++d) {
      const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
      at = i < 0 || i >= g.in[d] ? -1 : at * g.in[d] + i;
    }
    if (at < 0 || t_hi == t_lo) {
      std::memset(row, zero, static_cast<size_t>(run));
    } else {
      std::memset(row, zero, static_cast<size_t>(t_lo * channels));
      std::memcpy(row + t_lo * channels, image + (at * g.in[last] + col0 + t_lo) * channels,
                  static_cast<size_t>((t_hi - t_lo) * channels));
      std::memset(row + t_hi * channels, zero, static_cast<size_t>((kernel_w - t_hi) * channels));
    }
    for (size_t d = last; d-- > 0;) {  // the next kernel row
      if (++k[d] < g.kernel[d]) break;
      k[d] = 0;
    }
  }
}

// A layer's activation bytes with the padding written out around each image (the byte of 0), so that every
// window lies inside: its taps sit at fixed offsets from its first byte, and the int8 GEMM reads each window
// in place wherever it starts. `bytes` is nhwc itself when the layer has no padding; else the images are
// padded by pad_rows, all before the layer (`bytes`) or one at a time by each thread into its own buffer.
struct PaddedImage {
  const uint8_t* bytes = nullptr;
  Dims dims;                   // the spatial dims with the padding
  std::vector<int64_t> pitch;  // per spatial dim: positions between neighbours along it
  int64_t image_bytes = 0, rows_per_image = 0;
  bool padded = false;
  Scratch<uint8_t> storage = scratch<uint8_t>(0);

  // windows[j] = image + the first byte of output position pos0 + j's window, for j < count.
  void window_starts(const WindowGeometry& g, int64_t pos0, int64_t count, int64_t channels, const uint8_t* image,
                     const uint8_t** windows) const {
    const size_t nd = g.rank();
    std::vector<int64_t> o(nd);
    for (size_t d = nd; d-- > 0;) {
      o[d] = pos0 % g.out[d];
      pos0 /= g.out[d];
    }
    const int64_t step = g.strides[nd - 1] * channels;  // along an output row
    for (int64_t j = 0; j < count;) {
      int64_t at = 0;
      for (size_t d = 0; d < nd; ++d) at += o[d] * g.strides[d] * pitch[d];
      at *= channels;
      for (int64_t x = o[nd - 1]; x < g.out[nd - 1] && j < count; ++x, ++j, at += step) windows[j] = image + at;
      o[nd - 1] = g.out[nd - 1] - 1;
      next_index(o, g.out, nd);
    }
  }

  // Padded rows [u0, u1) of the batch (a row: all dims but the last fixed; row u of image u / rows_per_image)
  // into out + (u - u0) * its bytes: the byte of 0 around the image row it holds.
  void pad_rows(const ConvShape& s, const uint8_t* nhwc, uint8_t zero, int64_t u0, int64_t u1, uint8_t* out) const {
    const WindowGeometry& g = s.geo;
    const size_t last = g.rank() - 1;
    const int64_t channels = s.channels, row_bytes = dims[last] * channels;
    const int64_t left = g.pads_begin[last] * channels, inside = g.in[last] * channels;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / rows_per_image;
      int64_t at = 0;  // the image row it holds, or -1
      for (int64_t rest = u % rows_per_image, stride = rows_per_image, d = 0; d < static_cast<int64_t>(last); ++d) {
        stride /= dims[static_cast<size_t>(d)];
        const int64_t i = rest / stride - g.pads_begin[static_cast<size_t>(d)];
        rest %= stride;
        at = at < 0 || i < 0 || i >= g.in[static_cast<size_t>(d)] ? -1 : at * g.in[static_cast<size_t>(d)] + i;
      }
      uint8_t* row = out + (u - u0) * row_bytes;
      if (at < 0) {
        std::memset(row, zero, static_cast<size_t>(row_bytes));
        continue;
      }
      std::memset(row, zero, static_cast<size_t>(left));
      std::memcpy(row + left, nhwc + (n * s.in_size + at * g.in[last]) * channels, static_cast<size_t>(inside));
      std::memset(row + left + inside, zero, static_cast<size_t>(row_bytes - left - inside));
    }
  }
};

// The padded layout of s's images; with `whole_batch` every image padded now (in parallel) into `bytes`.
PaddedImage padded_image(const ConvShape& s, const uint8_t* nhwc, uint8_t zero, bool whole_batch) {
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  PaddedImage r;
  r.dims.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    // The last window ends inside the stated padding; the max only guards it.
    r.dims[d] = std::max(g.in[d] + g.pads_begin[d] + g.pads_end[d], (g.out[d] - 1) * g.strides[d] + g.extent(d));
    r.padded = r.padded || r.dims[d] != g.in[d] || g.pads_begin[d] != 0;
  }
  r.pitch.assign(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) r.pitch[d] = r.pitch[d + 1] * r.dims[d + 1];
  const int64_t positions = r.pitch[0] * r.dims[0];
  r.image_bytes = positions * s.channels;
  r.rows_per_image = positions / r.dims[nd - 1];
  if (!r.padded) {
    r.bytes = nhwc;
    return r;
  }
  if (!whole_batch) return r;
  r.storage = scratch<uint8_t>(s.batch * r.image_bytes);
  uint8_t* out = r.storage.get();
  r.bytes = out;
  const int64_t row_bytes = r.dims[nd - 1] * s.channels;
  exec::parallel_for(s.batch * r.rows_per_image, row_bytes, [&](int64_t u0, int64_t u1) {
    r.pad_rows(s, nhwc, zero, u0, u1, out + u0 * row_bytes);
  });
  return r;
}

// n bytes from src to dst in fixed-size moves (16, 8 or 4 bytes, the last one overlapping the one before), no
// byte outside either run touched: the taps or kernel rows a window gathers, a few to a few dozen bytes each,
// without a library call per run.
inline void copy_bytes(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n >= 16) {
    for (int64_t i = 0; i + 16 < n; i += 16) std::memcpy(dst + i, src + i, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// The integer path of both layouts (docs/arithmetic.md). `nhwc` holds the activation bytes as (N,
// positions, C); each output position's taps, in (kernel offset, channel) order (the order prepack_conv
// packed W's integers in), are one int8 GEMM row per position and group (read in place from the image where
// the window lies inside it, else gathered), and the exact sums
// are scaled into y: channels-last (N, positions, M) or channels-first (N, M, positions). A block of
// positions goes through all three steps on one thread (one split of the work per layer, and the
// block's bytes and sums stay in cache); the sums are exact, so the block size changes no bit.
//
// With `codes` (channels-first only), the output's byte codes under codes->form are made from each block's
// floats into codes->bytes, (N, positions, M); a block that cannot make them (a NaN) clears codes->made, and
// without codes->floats the channels-first floats are not written (the caller runs again when codes fail).
//
// With `batch_groups` > 1, s is one group of a grouped Conv over the images (n, g) of its split input
// (split_groups): image n' = n * batch_groups + g takes group g's weights and writes where the grouped Conv's
// output channels of group g lie.
void conv_integer_nhwc(const ConvShape& s, const IntegerLayer& layer, const uint8_t* nhwc, bool channels_last, float* y,
                       const exec::Epilogue* epilogue, OutputCodes* codes = nullptr, int64_t batch_groups = 1) {
  const int64_t channels = s.channels, cg = channels / s.group, mg = s.filters / s.group, rows = s.kernel_size * cg;
  const int64_t out_filters = s.filters * batch_groups;  // the output's channels
  // Blocks of up to kChannelsLastBlock positions, smaller when that leaves a thread without work.
  const int64_t images = s.batch * s.group;
  const int64_t wanted_blocks = (4 * exec::threads() + images - 1) / images;
  const int64_t block_size = std::clamp<int64_t>(((s.out_size + wanted_blocks - 1) / wanted_blocks + 15) & ~int64_t{15}, 16,
                                                 kChannelsLastBlock);
  const int64_t blocks = (s.out_size + block_size - 1) / block_size;
  const bool in_place = s.group == 1 && is_pointwise(s);  // each position's row is its C input bytes
  const uint8_t zero = layer.x.zero_byte();
  const int64_t image_bytes = s.in_size * channels;
  // One group and no dilation along the last dim: a kernel row's taps and their channels lie side by
  // side in the image.
  const int64_t kernel_w = s.geo.kernel.back();
  const bool row_runs = s.group == 1 && s.geo.dilations.back() == 1 && kernel_w > 1;
  // Windows read in place from the padded image: a window's taps lie at fixed offsets from its first byte, so
  // the GEMM reads each window where it lies (windows overlapping), in slices of whole kernel rows (with
  // row_runs) or of a group's channels of single taps; nothing is gathered. Several slices need whole
  // k-groups of 4 in each, and are worth their loop from 16 bytes on.
  const std::vector<int64_t> relative = tap_offsets(s, s.geo.in);
  const int64_t slice_k = row_runs ? kernel_w * cg : cg, slice_count = rows / std::max<int64_t>(slice_k, 1);
  const bool rows_in_image = !in_place && (slice_count == 1 || (slice_k % 4 == 0 && slice_k >= 16));
  // Several slices read the padded image; one slice (a 1-D window, or one tap) reads inside windows from the
  // image itself and border windows gathered.
  const bool pad_images = rows_in_image && slice_count > 1;
  // Over a batch the padded images together leave the caches: each thread pads an image when it reaches it,
  // into a buffer of its own the GEMM then reads from cache (a thread starting inside an image pads it too;
  // with no more threads than images, no more memory than the whole padded batch).
  const bool pad_each = pad_images && s.batch > 1 && s.batch >= exec::threads();
  const PaddedImage padded = pad_images ? padded_image(s, nhwc, zero, !pad_each) : PaddedImage{};
  const bool pad_here = pad_each && padded.padded;
  std::vector<int64_t> slice_offsets(static_cast<size_t>(slice_count));
  if (pad_images) {
    const std::vector<int64_t> padded_relative = tap_offsets(s, padded.dims);
    for (int64_t sl = 0; sl < slice_count; ++sl)
      slice_offsets[static_cast<size_t>(sl)] = padded_relative[static_cast<size_t>(sl * slice_k / cg)] * channels;
  }
  const Int8Slices slices{slice_k, slice_offsets.data()};
  const Int8Slices* in_image = slice_count > 1 ? &slices : nullptr;
  std::vector<avx2::ElementwiseStep> steps;
  const bool stepped = epilogue_steps(epilogue, &steps);
  exec::parallel_for(images * blocks, block_size * rows * mg, [&](int64_t u0, int64_t u1) {
    const auto left = scratch<uint8_t>(in_place || pad_images ? 0 : block_size * rows);
    const auto own_padded = scratch<uint8_t>(pad_here ? padded.image_bytes : 0);
    int64_t padded_image_index = -1;  // the image in own_padded
    const auto sums = scratch<int32_t>(block_size * mg);
    const auto scaled = scratch<float>(channels_last ? 0 : block_size * mg);
    // Window offsets only where windows are gathered (a share's allocations add up at batch 1).
    const bool gathers = !in_place && !pad_images;
    const auto offsets = scratch<int64_t>(gathers ? s.kernel_size * kChannelsLastBlock : 0);
    const auto inside_first = scratch<int64_t>(gathers ? kChannelsLastBlock : 0);
    std::vector<int64_t> coord(gathers ? 2 * s.geo.rank() : 0);
    std::vector<const uint8_t*> windows(static_cast<size_t>(rows_in_image ? block_size : 0));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / (s.group * blocks), g = u / blocks % s.group, b = u % blocks;
      const int64_t pos0 = b * block_size, count = std::min(block_size, s.out_size - pos0);
      // The weights' group, and the output's image and first channel of this group.
      const int64_t wg = batch_groups > 1 ? n % batch_groups : g, out_n = n / batch_groups, channel0 = wg * mg;
      const uint8_t* image = nhwc + n * image_bytes;
      // Window j's taps into `row`, in (kernel offset, channel) order.
      const auto gather = [&](int64_t j, uint8_t* row) {
        const int64_t first = inside_first[j];
        if (first >= 0 && row_runs) {  // each kernel row's taps and channels: one run of bytes
          for (int64_t kk = 0; kk < s.kernel_size; kk += kernel_w)
            copy_bytes(row + kk * cg, image + (first + relative[static_cast<size_t>(kk)]) * channels, kernel_w * cg);
          return;
        }
        if (row_runs) {  // a border window: per kernel row, the part of its run inside the image, zeros around it
          border_row_runs(s, image, pos0 + j, zero, coord, row);
          return;
        }
        for (int64_t kk = 0; kk < s.kernel_size; ++kk) {
          const int64_t at = first >= 0 ? first + relative[static_cast<size_t>(kk)]
                                        : offsets[kk * kChannelsLastBlock + j];
          uint8_t* dst = row + kk * cg;
          // Few channels (a stem's 3): a fixed 16-byte copy, which the next taps overwrite, instead of
          // a call per tap; it must stay inside this row and inside the image.
          const bool wide = cg < 16 && kk * cg + 16 <= rows;
          if (at < 0) {
            std::memset(dst, zero, wide ? 16 : static_cast<size_t>(cg));
          } else {
            const int64_t from = at * channels + g * cg;
            if (wide && from + 16 <= image_bytes)
              std::memcpy(dst, image + from, 16);
            else
              copy_bytes(dst, image + from, cg);
          }
        }
      };
      if (in_place) {
        layer.group_sums(static_cast<size_t>(wg), count, image + pos0 * channels, rows, sums.get());
      } else if (rows_in_image) {
        if (pad_images) {
          if (pad_here && padded_image_index != n) {
            padded.pad_rows(s, nhwc, zero, n * padded.rows_per_image, (n + 1) * padded.rows_per_image, own_padded.get());
            padded_image_index = n;
          }
          const uint8_t* padded_bytes = pad_here ? own_padded.get() : padded.bytes + n * padded.image_bytes;
          padded.window_starts(s.geo, pos0, count, channels, padded_bytes + g * cg, windows.data());
        } else {
          channels_last_offsets(s, relative, pos0, count, offsets.get(), inside_first.get(), !row_runs);
          uint8_t* gathered = left.get();
          for (int64_t j = 0; j < count; ++j) {
            const int64_t first = inside_first[j];
            if (first >= 0) {
              windows[static_cast<size_t>(j)] = image + first * channels + g * cg;
            } else {
              gather(j, gathered);
              windows[static_cast<size_t>(j)] = gathered;
              gathered += rows;
            }
          }
        }
        layer.group_sums(static_cast<size_t>(wg), count, windows.data(), in_image, sums.get());
      } else {
        channels_last_offsets(s, relative, pos0, count, offsets.get(), inside_first.get(), !row_runs);
        for (int64_t j = 0; j < count; ++j) gather(j, left.get() + j * rows);
        layer.group_sums(static_cast<size_t>(wg), count, left.get(), rows, sums.get());
      }
      if (channels_last) {
        float* yn = y + (out_n * s.out_size + pos0) * out_filters + channel0;
        layer.outputs_through(sums.get(), count, mg, channel0, epilogue, stepped ? &steps : nullptr, yn, out_filters,
                              nullptr, nullptr, 0);
      } else {
        // Each position's channels scaled as one run, then written channel by channel from cache.
        float* yg = y + (out_n * out_filters + channel0) * s.out_size + pos0;
        // Rounding, epilogue and codes of the block's positions (rows of mg channels).
        uint8_t* bytes = codes ? codes->bytes + (out_n * s.out_size + pos0) * out_filters + channel0 : nullptr;
        if (!layer.outputs_through(sums.get(), count, mg, channel0, epilogue, stepped ? &steps : nullptr, scaled.get(), mg,
                                   codes ? &codes->form : nullptr, bytes, out_filters, !codes || codes->floats))
          codes->made.store(false, std::memory_order_relaxed);
        if (codes && !codes->floats) continue;
        rows_to_planes(scaled.get(), count, mg, yg, s.out_size, s.batch * s.filters * s.out_size * 4);
      }
    }
  });
}

}  // namespace

// A grouped Conv's windows of few channels per group (a tap's channels fewer than 16, or not whole groups of
// 4) are gathered tap by tap from the interleaved groups. With each group's channels split into an image of
// their own, a window's kernel rows are runs of bytes, read in place or copied whole: the bytes (N, positions,
// C) as (N, group, positions, C/group) into `storage`, and s as one group's Conv over N x group images.
// Returns null (nothing split) where the interleaved layout serves.
const uint8_t* split_groups(ConvShape* s, const uint8_t* nhwc, Scratch<uint8_t>& storage) {
  const int64_t group = s->group, cg = s->channels / group;
  if (group == 1 || (cg % 4 == 0 && cg >= 16)) return nullptr;
  const int64_t images = s->batch, positions = s->in_size, channels = s->channels;
  storage = scratch<uint8_t>(images * positions * channels);
  uint8_t* out = storage.get();
  exec::parallel_for(images * group, positions * cg, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const uint8_t* from = nhwc + (u / group) * positions * channels + (u % group) * cg;
      uint8_t* to = out + u * positions * cg;
      for (int64_t p = 0; p < positions; ++p) std::memcpy(to + p * cg, from + p * channels, static_cast<size_t>(cg));
    }
  });
  s->batch = images * group, s->channels = cg, s->filters /= group, s->group = 1;
  return out;
}

bool conv_integer_path(const ConvShape& s, const IntegerLayer& layer, const float* x, bool channels_last, float* y,
                       const exec::Epilogue* epilogue, CodesIo* io) {
  if (s.batch == 0 || s.out_size == 0) return true;  // no output element
  const int64_t elements = s.batch * s.channels * s.in_size;
  ConvShape split = s;
  Scratch<uint8_t> split_storage = scratch<uint8_t>(0);
  // The run over `image` (the channels-last bytes), on its groups split when that serves.
  const auto run = [&](const uint8_t* image, bool last, OutputCodes* codes) {
    split = s;
    if (const uint8_t* groups = split_groups(&split, image, split_storage))
      conv_integer_nhwc(split, layer, groups, last, y, epilogue, codes, s.group);
    else
      conv_integer_nhwc(s, layer, image, last, y, epilogue, codes);
  };
  if (channels_last) {
    const auto bytes = scratch<uint8_t>(elements);
    if (!activation_bytes(x, elements, layer.x, bytes.get())) return false;
    run(bytes.get(), true, nullptr);
    return true;
  }
  // Channels-first: the input's codes as the producing layer made them (the bytes activation_bytes makes,
  // already channels-last), else made here.
  Scratch<uint8_t> made_here = scratch<uint8_t>(0);
  const uint8_t* image = channels_last_bytes(io ? io->input : nullptr, x, s.batch, s.channels, s.in_size, layer.x, made_here);
  if (!image) return false;
  const std::optional<ByteActivation> out_form = io ? byte_activation(io->output_form) : std::nullopt;
  if (!out_form) {
    run(image, false, nullptr);
    return true;
  }
  Tensor bytes = Tensor::uninitialized(DType::kUInt8, {s.batch * s.out_size * s.filters});
  OutputCodes codes;
  codes.form = *out_form, codes.bytes = bytes.data<uint8_t>(), codes.floats = io->floats_needed;
  run(image, false, &codes);
  if (codes.made.load(std::memory_order_relaxed)) {
    io->output = std::move(bytes);
    return true;
  }
  if (!codes.floats) run(image, false, nullptr);  // the floats were left unwritten
  return true;
}

namespace {

// W as the float tensor it came from, in its stored layout, for a run the integer path cannot take.
Tensor conv_weights_from_codes(const ConvShape& s, const IntegerLayer& layer, const Dims& w_dims, bool channels_last) {
  Tensor packed_order = layer.float_weights(w_dims, true);  // (M, kernel offsets, C/group)
  if (channels_last) return packed_order;
  Tensor w = Tensor::uninitialized(DType::kFloat, w_dims);
  transpose_inner(packed_order.data<float>(), w.data<float>(), s.filters, s.kernel_size, s.channels / s.group,
                  sizeof(float));
  return w;
}

}  // namespace

Result<bool> conv_channels_last(exec::KernelContext& ctx, const ConvAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(1, "W"));
  const Tensor* b = ctx.input(2);
  if (x->dtype() != DType::kFloat || w->dtype() != DType::kFloat || x->rank() < 3 || w->rank() != x->rank())
    return false;
  const int64_t group = attrs.group, channels = x->dims().back();
  const bool depthwise = group == channels && w->dim(0) == channels;
  if (group != 1 && !depthwise) return false;
  // The channels-first dims of X (N, C, d...) and W (M, C, k...).
  const auto channels_first = [](const Dims& d) {
    Dims out{d[0], d.back()};
    out.insert(out.end(), d.begin() + 1, d.end() - 1);
    return out;
  };
  QONNX_ASSIGN_OR_RETURN(ConvShape s, conv_shape(ctx, attrs, channels_first(x->dims()), channels_first(w->dims()), 0, 1));
  QONNX_RETURN_IF_ERROR(check_bias(ctx, 2, b, s.filters, DType::kFloat));
  Dims out{s.batch};
  out.insert(out.end(), s.geo.out.begin(), s.geo.out.end());
  out.push_back(s.filters);
  Tensor y = ctx.output_buffer(DType::kFloat, out);
  Tensor w_from_codes;
  if (const auto* layer = static_cast<const IntegerLayer*>(ctx.prepacked())) {
    if (y.numel() > 0 && conv_integer_path(s, *layer, x->data<float>(), true, y.data<float>(), ctx.epilogue())) {
      ctx.set_output(0, std::move(y));
      ctx.epilogue_done();
      return true;
    }
    if (!w->raw()) {  // the plan holds W as codes only (a streamed W comes with its values)
      w_from_codes = conv_weights_from_codes(s, *layer, w->dims(), true);
      w = &w_from_codes;
    }
  }
  if (y.numel() > 0 && depthwise) {
    // W (C, k..., 1) -> (k..., C): a tap's weights for all channels side by side.
    std::vector<float> wt(static_cast<size_t>(w->numel()));
    transpose_inner(w->data<float>(), wt.data(), 1, s.filters, s.kernel_size, sizeof(float));
    depthwise_channels_last_f32(s, x->data<float>(), wt.data(), b ? b->data<float>() : nullptr, y.data<float>());
  } else if (y.numel() > 0 && is_pointwise(s)) {
    // 1x1: Y (positions, M) = X (positions, C) W^T, in the sum order of the channels-first path (the
    // products are the same, fma commutes its factors), with the bias added afterwards as there.
    std::vector<float> wt(static_cast<size_t>(w->numel()));
    transpose_inner(w->data<float>(), wt.data(), 1, s.filters, s.channels, sizeof(float));
    const FloatRowMajorSource source(wt.data(), s.filters);
    FloatGemm g;
    g.m = s.batch * s.out_size, g.n = s.filters, g.k = s.channels, g.a = x->data<float>(), g.lda = s.channels;
    g.b = &source, g.c = y.data<float>(), g.ldc = s.filters;
    float_gemm(g);
    if (b) add_bias_channels_last(y.data<float>(), g.m, s.filters, b->data<float>());
  } else if (y.numel() > 0) {
    // W (M, k..., C) -> (M, C, k...): the im2col row order.
    std::vector<float> wf(static_cast<size_t>(w->numel()));
    transpose_inner(w->data<float>(), wf.data(), s.filters, s.kernel_size, s.channels, sizeof(float));
    conv_channels_last_f32(s, x->data<float>(), wf.data(), b ? b->data<float>() : nullptr, y.data<float>());
  }
  ctx.set_output(0, std::move(y));
  return true;
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
Result<std::vector<int64_t>> integer_conv(const exec::KernelContext& ctx, const ConvAttrs& attrs, size_t x_in,
                                          size_t x_zp, size_t w_in, size_t w_zp, ConvShape* shape) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(x_in, "x"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* w, ctx.required(w_in, "w"));
  QONNX_ASSIGN_OR_RETURN(*shape, conv_shape(ctx, attrs, x->dims(), w->dims(), x_in, w_in));
  QONNX_ASSIGN_OR_RETURN(Tensor xi, minus_zero_point(ctx, x_in, x_zp, false));
  QONNX_ASSIGN_OR_RETURN(Tensor wi, minus_zero_point(ctx, w_in, w_zp, true));
  std::vector<int64_t> acc(static_cast<size_t>(checked_numel(shape->out_dims)), 0);
  conv_accumulate<int32_t, int64_t>(*shape, xi.data<int32_t>(), wi.data<int32_t>(), acc.data());
  return acc;
}

Status conv_integer(exec::KernelContext& ctx, const ConvAttrs& attrs) {
  ConvShape s;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, attrs, 0, 2, 1, 3, &s));
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

Status qlinear_conv(exec::KernelContext& ctx, const ConvAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* y_zp, ctx.required(7, "y_zero_point"));
  if (!is_quantized_storage(y_zp->dtype()) || y_zp->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, 7, "must be one int8 or uint8 value, got {} {}",
                           dtype_name(y_zp->dtype()), dims_to_string(y_zp->dims()));
  ConvShape s;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> acc, integer_conv(ctx, attrs, 0, 2, 3, 5, &s));
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
  // Conv-11 only reworded the padding; ConvInteger and QLinearConv exist from 10.
  exec::Kernel conv = exec::typed_kernel<ConvAttrs, prepare_conv, conv_kernel>();
  conv.prepack = prepack_conv;
  r.add("", "Conv", {1, exec::kNoUpperVersion}, conv);
  r.add("", "ConvInteger", {10, exec::kNoUpperVersion}, exec::typed_kernel<ConvAttrs, prepare_conv, conv_integer>());
  r.add("", "QLinearConv", {10, exec::kNoUpperVersion}, exec::typed_kernel<ConvAttrs, prepare_conv, qlinear_conv>());
}

}  // namespace qonnx::kernels
