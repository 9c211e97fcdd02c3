// MaxPool (with the optional Indices output), AveragePool, LpPool, GlobalAveragePool and GlobalMaxPool
// over N-D windows with strides, pads, dilations, auto_pad and ceil_mode.
#include <algorithm>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
#include "kernels/common/compute_type.h"
#include "kernels/common/conv_util.h"
#include "kernels/common/integer_form.h"
#include "kernels/common/transpose.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/threads.h"

namespace qonnx::kernels {
namespace {

// The input positions one window reads along one spatial dim: first, first + dilation, ... (count
// of them, all inside the input).
struct Span {
  int64_t first = 0, count = 0;
};

// Per spatial dim and output index, the span a window reads, and how many window positions fall
// inside the padded input (AveragePool's count_include_pad divisor).
struct PoolPlan {
  WindowGeometry geo;
  int64_t planes = 0, in_size = 1, out_size = 1;
  Dims out_dims;
  std::vector<std::vector<Span>> spans;              // [d][o_d]
  std::vector<std::vector<int64_t>> padded_count;    // [d][o_d]
};

Result<PoolPlan> pool_plan(const exec::KernelContext& ctx, const WindowAttrs& attrs, const Tensor& x) {
  if (x.rank() < 3)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x.dims()));
  const size_t nd = x.rank() - 2;
  QONNX_ASSIGN_OR_RETURN(Dims kernel, window_values(ctx, attrs.kernel_shape, "kernel_shape", nd, 1));
  PoolPlan p;
  const Dims in(x.dims().begin() + 2, x.dims().end());
  QONNX_ASSIGN_OR_RETURN(p.geo, window_geometry(ctx, attrs, in, kernel));
  const WindowGeometry& g = p.geo;
  p.planes = x.dim(0) * x.dim(1);
  p.out_dims = {x.dim(0), x.dim(1)};
  p.out_dims.insert(p.out_dims.end(), g.out.begin(), g.out.end());
  if (checked_numel(p.out_dims) < 0) return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(p.out_dims));
  p.spans.resize(nd);
  p.padded_count.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    p.in_size *= in[d];
    p.out_size *= g.out[d];
    const int64_t dil = g.dilations[d];
    // Window positions k in [0, kernel) read i = start + k * dil; count those in [0, in) and in
    // [-pads_begin, in + pads_end) (start >= -pads_begin always holds).
    auto positions_below = [&](int64_t start, int64_t limit) {
      return std::clamp<int64_t>((limit - start + dil - 1) / dil, 0, g.kernel[d]);
    };
    p.spans[d].reserve(static_cast<size_t>(g.out[d]));
    p.padded_count[d].reserve(static_cast<size_t>(g.out[d]));
    for (int64_t o = 0; o < g.out[d]; ++o) {
      const int64_t start = o * g.strides[d] - g.pads_begin[d];
      const int64_t k_lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
      const int64_t k_hi = start >= in[d] ? 0 : positions_below(start, in[d]);
      p.spans[d].push_back(Span{start + k_lo * dil, std::max<int64_t>(0, k_hi - k_lo)});
      p.padded_count[d].push_back(positions_below(start, in[d] + g.pads_end[d]));
    }
  }
  return p;
}

// Calls f(o, spans) for every output position o (row-major) with the spans of its window per dim.
template <typename F>
void for_each_window(const PoolPlan& p, F&& f) {
  const size_t nd = p.geo.rank();
  std::vector<int64_t> o(nd, 0);
  std::vector<Span> spans(nd);
  for (int64_t oo = 0; oo < p.out_size; ++oo) {
    for (size_t d = 0; d < nd; ++d) spans[d] = p.spans[d][static_cast<size_t>(o[d])];
    f(o, spans);
    for (size_t d = nd; d-- > 0;) {
      if (++o[d] < p.geo.out[d]) break;
      o[d] = 0;
    }
  }
}

// Calls f(i) for every input offset of a window; `strides` are the element strides of the spatial
// dims and `counter` is scratch space of one entry per dim.
template <typename F>
void for_each_tap(const std::vector<Span>& spans, const Dims& dilations, const std::vector<int64_t>& strides,
                  std::vector<int64_t>& counter, F&& f) {
  const size_t last = spans.size() - 1;
  for (const Span& s : spans)
    if (s.count == 0) return;
  std::fill(counter.begin(), counter.end(), 0);
  while (true) {
    int64_t base = spans[last].first;
    for (size_t d = 0; d < last; ++d) base += (spans[d].first + counter[d] * dilations[d]) * strides[d];
    for (int64_t j = 0; j < spans[last].count; ++j) f(base + j * dilations[last]);
    size_t d = last;
    while (d-- > 0) {
      if (++counter[d] < spans[d].count) break;
      counter[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

std::vector<int64_t> row_major_strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

std::vector<int64_t> column_major_strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = 1; d < dims.size(); ++d) s[d] = s[d - 1] * dims[d - 1];
  return s;
}

template <typename T>
void max_pool_typed(const PoolPlan& p, const T* x, T* y, int64_t* indices, bool column_major) {
  const std::vector<int64_t> strides = row_major_strides(p.geo.in);
  const std::vector<int64_t> index_strides = column_major ? column_major_strides(p.geo.in) : strides;
  using C = Compute<T>;
  std::vector<int64_t> counter(p.geo.rank());
  for (int64_t plane = 0; plane < p.planes; ++plane) {
    const T* xp = x + plane * p.in_size;
    int64_t oo = 0;
    for_each_window(p, [&](const std::vector<int64_t>&, const std::vector<Span>& spans) {
      C best = std::numeric_limits<C>::lowest();
      if constexpr (std::is_floating_point_v<C>) best = -std::numeric_limits<C>::infinity();
      int64_t best_at = -1;
      for_each_tap(spans, p.geo.dilations, strides, counter, [&](int64_t i) {
        const C v = load(xp[i]);
        if (best_at < 0 || v > best) {
          best = v;
          best_at = i;
        }
      });
      y[plane * p.out_size + oo] = store<T>(best);
      if (indices) {
        // The index of the max in the flattened input, its spatial part in the storage order asked for.
        int64_t spatial = 0;
        if (best_at >= 0) {
          int64_t rest = best_at;
          for (size_t d = 0; d < strides.size(); ++d) {
            spatial += (rest / strides[d]) * index_strides[d];
            rest %= strides[d];
          }
        }
        indices[plane * p.out_size + oo] = plane * p.in_size + spatial;
      }
      ++oo;
    });
  }
}

// 1-D and 2-D float pooling, planes split between threads. Each output takes its window's taps inside
// the input in the general loops' order (rows, then columns): window.start on the first, window.add on
// each later one, window.finish at the end (an empty window finishes window.empty), so the bits are the
// general loops'. The columns whose window lies wholly inside the row run as one loop over the output
// row per tap, which the compiler vectorizes.
template <typename Window>
void pool_2d_f32(const PoolPlan& p, const float* x, float* y, const Window& window) {
  const bool one_d = p.geo.rank() == 1;
  const size_t w_dim = one_d ? 0 : 1;
  static const std::vector<Span> kOneRow{Span{0, 1}};
  static const std::vector<int64_t> kOneRowCount{1};
  const std::vector<Span>& row_spans = one_d ? kOneRow : p.spans[0];
  const std::vector<Span>& col_spans = p.spans[w_dim];
  const std::vector<int64_t>& row_padded = one_d ? kOneRowCount : p.padded_count[0];
  const std::vector<int64_t>& col_padded = p.padded_count[w_dim];
  const int64_t in_w = p.geo.in[w_dim], out_w = p.geo.out[w_dim], out_h = one_d ? 1 : p.geo.out[0];
  const int64_t kernel_w = p.geo.kernel[w_dim], stride_w = p.geo.strides[w_dim], dil_w = p.geo.dilations[w_dim];
  const int64_t dil_h = one_d ? 1 : p.geo.dilations[0], pad_w = p.geo.pads_begin[w_dim];
  // The full windows of a row: start >= 0 and start + (kernel_w - 1) * dil_w < in_w.
  int64_t full_lo = out_w, full_hi = out_w;
  for (int64_t ow = 0; ow < out_w; ++ow)
    if (col_spans[static_cast<size_t>(ow)].count == kernel_w) {
      if (full_lo == out_w) full_lo = ow;
      full_hi = ow + 1;
    }
  const int64_t window_taps = one_d ? kernel_w : p.geo.kernel[0] * kernel_w;
  exec::parallel_for(p.planes, p.out_size * window_taps, [&](int64_t q0, int64_t q1) {
    for (int64_t plane = q0; plane < q1; ++plane) {
      const float* xp = x + plane * p.in_size;
      float* yp = y + plane * p.out_size;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const Span rows = row_spans[static_cast<size_t>(oh)];
        const int64_t row_padded_count = row_padded[static_cast<size_t>(oh)];
        float* yr = yp + oh * out_w;
        auto one_window = [&](int64_t ow) {
          const Span cols = col_spans[static_cast<size_t>(ow)];
          const int64_t counts[2] = {rows.count * cols.count, row_padded_count * col_padded[static_cast<size_t>(ow)]};
          if (rows.count == 0 || cols.count == 0) return window.finish(window.empty, counts);
          float acc = 0;
          for (int64_t r = 0; r < rows.count; ++r) {
            const float* row = xp + (rows.first + r * dil_h) * in_w + cols.first;
            for (int64_t c = 0; c < cols.count; ++c)
              acc = r == 0 && c == 0 ? window.start(row[c * dil_w]) : window.add(acc, row[c * dil_w]);
          }
          return window.finish(acc, counts);
        };
        const bool rows_inside = rows.count > 0 && full_lo < full_hi;
        for (int64_t ow = 0; ow < out_w; ++ow) {
          if (rows_inside && ow == full_lo) ow = full_hi;
          if (ow < out_w) yr[ow] = one_window(ow);
        }
        if (!rows_inside) continue;
        float* out = yr + full_lo;
        const int64_t n = full_hi - full_lo;
        for (int64_t r = 0; r < rows.count; ++r) {
          const float* row = xp + (rows.first + r * dil_h) * in_w + full_lo * stride_w - pad_w;
          for (int64_t c = 0; c < kernel_w; ++c) {
            const float* tap = row + c * dil_w;
            if (r == 0 && c == 0) {
              for (int64_t i = 0; i < n; ++i) out[i] = window.start(tap[i * stride_w]);
            } else {
              for (int64_t i = 0; i < n; ++i) out[i] = window.add(out[i], tap[i * stride_w]);
            }
          }
        }
        const int64_t counts[2] = {rows.count * kernel_w, row_padded_count * col_padded[static_cast<size_t>(full_lo)]};
        for (int64_t i = 0; i < n; ++i) out[i] = window.finish(out[i], counts);
      }
    }
  });
}

// max_pool_typed's rule: the first tap, then every later one that is greater (NaN and ties come out
// the same); an empty window gives -inf.
struct MaxWindow {
  float empty = -std::numeric_limits<float>::infinity();
  static float start(float v) { return v; }
  static float add(float best, float v) { return v > best ? v : best; }
  static float finish(float best, const int64_t*) { return best; }
};

// average_pool_typed's rule: 0 plus each tap in turn, divided by the count of taps inside the input
// (counts[0]) or inside the padded input (counts[1]); an empty count gives 0.
struct AverageWindow {
  bool count_include_pad = false;
  float empty = 0;
  static float start(float v) { return 0.0f + v; }
  static float add(float sum, float v) { return sum + v; }
  float finish(float sum, const int64_t* counts) const {
    const int64_t count = counts[count_include_pad ? 1 : 0];
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
  }
};

// Sums tap(x) over each window and writes finish(sum, window index, spans) (AveragePool, LpPool).
template <typename T, typename Tap, typename Finish>
void sum_pool_typed(const PoolPlan& p, const T* x, T* y, Tap tap, Finish finish) {
  const std::vector<int64_t> strides = row_major_strides(p.geo.in);
  using C = Compute<T>;
  std::vector<int64_t> counter(p.geo.rank());
  for (int64_t plane = 0; plane < p.planes; ++plane) {
    const T* xp = x + plane * p.in_size;
    int64_t oo = 0;
    for_each_window(p, [&](const std::vector<int64_t>& o, const std::vector<Span>& spans) {
      C sum = 0;
      for_each_tap(spans, p.geo.dilations, strides, counter, [&](int64_t i) { sum += tap(load(xp[i])); });
      y[plane * p.out_size + oo] = store<T>(finish(sum, o, spans));
      ++oo;
    });
  }
}

template <typename T>
void average_pool_typed(const PoolPlan& p, const T* x, T* y, bool count_include_pad) {
  using C = Compute<T>;
  sum_pool_typed<T>(p, x, y, [](C v) { return v; }, [&](C sum, const std::vector<int64_t>& o, const std::vector<Span>& spans) {
    int64_t count = 1;
    for (size_t d = 0; d < spans.size(); ++d)
      count *= count_include_pad ? p.padded_count[d][static_cast<size_t>(o[d])] : spans[d].count;
    return count > 0 ? sum / static_cast<C>(count) : C(0);
  });
}

// LpPool: (sum over the window of |x|^p)^(1/p); padding adds nothing.
template <typename T>
void lp_pool_typed(const PoolPlan& p, const T* x, T* y, double power) {
  using C = Compute<T>;
  const C exponent = static_cast<C>(power);
  sum_pool_typed<T>(
      p, x, y, [exponent](C v) { return static_cast<C>(std::pow(std::fabs(v), exponent)); },
      [exponent](C sum, const std::vector<int64_t>&, const std::vector<Span>&) {
        return static_cast<C>(std::pow(sum, static_cast<C>(1) / exponent));
      });
}

// The window attributes of a pooling node (kernel_shape is required).
Result<PoolAttrs> prepare_pool_window(const ir::Node& node) {
  if (!node.has_attr("kernel_shape")) return Status(Code::kInvalidModel, "attribute kernel_shape is required");
  PoolAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.window, read_window_attrs(node, false));
  return a;
}

// MaxPool-1 has neither storage_order nor the Indices output (8), nor ceil_mode and dilations (10).
template <int Since>
Result<PoolAttrs> prepare_max_pool(const ir::Node& node, int64_t version) {
  if (Since < 8) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"storage_order"}, 8));
  if (Since < 10) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"ceil_mode", "dilations"}, 10));
  QONNX_ASSIGN_OR_RETURN(PoolAttrs a, prepare_pool_window(node));
  QONNX_ASSIGN_OR_RETURN(const int64_t storage_order, int_attr(node, "storage_order", 0));
  if (storage_order != 0 && storage_order != 1)
    return Status(Code::kInvalidModel, fmt::format("attribute 'storage_order': storage_order must be 0 or 1, got {}", storage_order));
  a.column_major_indices = storage_order == 1;
  a.want_indices = node.outputs().size() > 1 && node.outputs()[1] != nullptr;
  if (Since < 8 && a.want_indices)
    return Status(Code::kInvalidModel, fmt::format("MaxPool-{} has one output (Indices exists from MaxPool-8 on)", version));
  return a;
}

}  // namespace

Result<PoolAttrs> prepare_max_pool_10(const ir::Node& node, int64_t version) { return prepare_max_pool<10>(node, version); }

namespace {

// MaxPool on byte codes (exec::KernelContext::input_codes): codes u = v - lo of the input, channels-last
// (N, positions, C), into the output's the same way. With a positive scale v * s increases with v, so a
// window's largest float is the float of its largest code. false when a window holds no input element (its
// maximum is -inf, which no code stands for).
void max_bytes(uint8_t* __restrict dst, const uint8_t* __restrict src, int64_t n) {
  for (int64_t c = 0; c < n; ++c) dst[c] = std::max(dst[c], src[c]);
}

bool max_pool_codes(const PoolPlan& p, int64_t batch, int64_t channels, const uint8_t* in, uint8_t* out) {
  for (const auto& spans : p.spans)
    for (const Span& span : spans)
      if (span.count == 0) return false;
  const size_t nd = p.geo.rank(), last = nd - 1;
  std::vector<int64_t> in_strides(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * p.geo.in[d + 1];
  int64_t taps = 1;
  for (int64_t k : p.geo.kernel) taps *= k;
  // By output rows (every dim but the last fixed): the window's rows are found once per output row, and
  // along it each position's span comes from the plan, with no index arithmetic per position.
  const int64_t out_w = p.geo.out[last], rows = p.out_size / out_w, dilation = p.geo.dilations[last];
  exec::parallel_for(batch * rows, out_w * taps * channels, [&](int64_t u0, int64_t u1) {
    std::vector<int64_t> counter(nd);
    std::vector<Span> spans(nd);
    std::vector<int64_t> window_rows;  // the input position where each of the window's rows starts
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / rows, r = u % rows;
      for (int64_t rest = r, d = static_cast<int64_t>(last) - 1; d >= 0; --d) {
        spans[static_cast<size_t>(d)] = p.spans[static_cast<size_t>(d)][static_cast<size_t>(rest % p.geo.out[static_cast<size_t>(d)])];
        rest /= p.geo.out[static_cast<size_t>(d)];
      }
      spans[last] = Span{0, 1};
      window_rows.clear();
      for_each_tap(spans, p.geo.dilations, in_strides, counter, [&](int64_t i) { window_rows.push_back(i); });
      const uint8_t* image = in + n * p.in_size * channels;
      uint8_t* dst = out + (n * p.out_size + r * out_w) * channels;
      for (int64_t x = 0; x < out_w; ++x, dst += channels) {
        const Span span = p.spans[last][static_cast<size_t>(x)];
        bool first = true;
        for (const int64_t row : window_rows)
          for (int64_t j = 0; j < span.count; ++j) {
            const uint8_t* src = image + (row + span.first + j * dilation) * channels;
            if (first) {
              std::memcpy(dst, src, static_cast<size_t>(channels));
              first = false;
            } else {
              max_bytes(dst, src, channels);
            }
          }
      }
    }
  });
  return true;
}

// The floats (N, C, positions) that channels-last codes stand for: float32(v) * scale for v = u + lo,
// which is each element bit for bit (the codes were made only where that held). Per block of positions, the
// floats channels-last in cache, then written plane by plane in tiles.
void floats_from_codes(const uint8_t* codes, const ByteActivation& a, int64_t batch, int64_t channels, int64_t positions,
                       float* y) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (positions + kBlock - 1) / kBlock;
  const int32_t lo = static_cast<int32_t>(a.lo);  // in [-255, 0] (byte_activation)
  const float scale = a.scale;
  exec::parallel_for(batch * blocks, kBlock * channels, [&](int64_t u0, int64_t u1) {
    const auto rows = scratch<float>(kBlock * channels);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / blocks, p0 = u % blocks * kBlock, count = std::min(kBlock, positions - p0);
      const uint8_t* src = codes + (n * positions + p0) * channels;
      float* block = rows.get();
      for (int64_t e = 0; e < count * channels; ++e) block[e] = static_cast<float>(int32_t{src[e]} + lo) * scale;
      rows_to_planes(block, count, channels, y + n * channels * positions + p0, positions, batch * channels * positions * 4);
    }
  });
}

// Plan-time: a MaxPool without Indices on a byte form of positive scale takes and gives byte codes.
exec::PreparedState prepack_max_pool(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt || !c.prepared || static_cast<const PoolAttrs*>(c.prepared)->want_indices)
    return nullptr;
  const std::optional<ByteActivation> x = byte_activation(c.form(0));
  if (!x || !(x->scale > 0.0f)) return nullptr;
  if (c.reads_input_codes) *c.reads_input_codes = true;
  if (c.writes_output_codes) *c.writes_output_codes = true;
  return std::make_shared<const ByteActivation>(*x);
}

}  // namespace

Status max_pool_kernel(exec::KernelContext& ctx, const PoolAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(PoolPlan p, pool_plan(ctx, attrs.window, *x));
  const bool want_indices = attrs.want_indices;
  Tensor x_from_codes;
  if (const auto* form = static_cast<const ByteActivation*>(ctx.prepacked());
      form && ctx.input_codes() && x->dtype() == DType::kFloat && !want_indices) {
    const int64_t batch = x->dim(0), channels = x->dim(1);
    Tensor codes = Tensor::uninitialized(DType::kUInt8, {batch * p.out_size * channels});
    if (max_pool_codes(p, batch, channels, ctx.input_codes()->data<uint8_t>(), codes.data<uint8_t>())) {
      Tensor y = ctx.output_buffer(DType::kFloat, p.out_dims);
      if (ctx.output_floats_needed()) floats_from_codes(codes.data<uint8_t>(), *form, batch, channels, p.out_size, y.data<float>());
      ctx.set_output(0, std::move(y));
      if (ctx.output_codes_form()) ctx.set_output_codes(std::move(codes));
      return Status::ok();
    }
    // X's floats may not have been written: made from its codes for the float path.
    x_from_codes = Tensor::uninitialized(DType::kFloat, x->dims());
    floats_from_codes(ctx.input_codes()->data<uint8_t>(), *form, batch, channels, p.in_size, x_from_codes.data<float>());
    x = &x_from_codes;
  }
  if (!want_indices && x->dtype() == DType::kFloat && (p.geo.rank() == 1 || p.geo.rank() == 2)) {
    Tensor y = ctx.output_buffer(DType::kFloat, p.out_dims);  // every element written
    pool_2d_f32(p, x->data<float>(), y.data<float>(), MaxWindow{});
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  Tensor y(x->dtype(), p.out_dims);
  Tensor indices = want_indices ? Tensor(DType::kInt64, p.out_dims) : Tensor();
  bool supported = false;
  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_storage_v<T> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      max_pool_typed<T>(p, x->data<T>(), y.data<T>(), want_indices ? indices.data<int64_t>() : nullptr,
                        attrs.column_major_indices);
      supported = true;
    }
  });
  if (!supported)
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types, int8, uint8)",
                           dtype_name(x->dtype()));
  ctx.set_output(0, std::move(y));
  if (want_indices) ctx.set_output(1, std::move(indices));
  return Status::ok();
}

namespace {

// AveragePool-1 has neither count_include_pad (7) nor ceil_mode (10) nor dilations (19).
template <int Since>
Result<PoolAttrs> prepare_average_pool(const ir::Node& node, int64_t version) {
  if (Since < 7) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"count_include_pad"}, 7));
  if (Since < 10) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"ceil_mode"}, 10));
  if (Since < 19) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"dilations"}, 19));
  QONNX_ASSIGN_OR_RETURN(PoolAttrs a, prepare_pool_window(node));
  QONNX_ASSIGN_OR_RETURN(a.count_include_pad, flag_attr(node, "count_include_pad", false));
  return a;
}

Status average_pool(exec::KernelContext& ctx, const PoolAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  QONNX_ASSIGN_OR_RETURN(PoolPlan p, pool_plan(ctx, attrs.window, *x));
  const bool count_include_pad = attrs.count_include_pad;
  if (x->dtype() == DType::kFloat && (p.geo.rank() == 1 || p.geo.rank() == 2)) {
    Tensor y = ctx.output_buffer(DType::kFloat, p.out_dims);  // every element written
    pool_2d_f32(p, x->data<float>(), y.data<float>(), AverageWindow{count_include_pad});
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  Tensor y(x->dtype(), p.out_dims);
  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_storage_v<T>) average_pool_typed<T>(p, x->data<T>(), y.data<T>(), count_include_pad);
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// LpPool-1 takes a float p, 2..17 an integer one; neither has ceil_mode/dilations (they came with
// 18; pool_plan's defaults hold there).
template <int Since>
Result<PoolAttrs> prepare_lp_pool(const ir::Node& node, int64_t version) {
  if (Since < 18) QONNX_RETURN_IF_ERROR(reject_later_attrs(node, version, {"ceil_mode", "dilations"}, 18));
  double power = 2;
  if (Since == 1) {
    QONNX_ASSIGN_OR_RETURN(const float p, float_attr(node, "p", 2.0f));
    power = p;
  } else {
    QONNX_ASSIGN_OR_RETURN(const int64_t p, int_attr(node, "p", 2));
    power = static_cast<double>(p);
  }
  if (!(power > 0)) return Status(Code::kInvalidModel, fmt::format("attribute 'p': p must be positive, got {}", power));
  QONNX_ASSIGN_OR_RETURN(PoolAttrs a, prepare_pool_window(node));
  a.power = power;
  return a;
}

Status lp_pool(exec::KernelContext& ctx, const PoolAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  const double power = attrs.power;
  QONNX_ASSIGN_OR_RETURN(PoolPlan p, pool_plan(ctx, attrs.window, *x));
  Tensor y(x->dtype(), p.out_dims);
  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_storage_v<T>) lp_pool_typed<T>(p, x->data<T>(), y.data<T>(), power);
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// Plan-time: a global pool of a byte form takes its input's byte codes (a max needs a positive scale, as
// MaxPool's).
template <bool kMax>
exec::PreparedState prepack_global_pool(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt) return nullptr;
  const std::optional<ByteActivation> x = byte_activation(c.form(0));
  if (!x || (kMax && !(x->scale > 0.0f))) return nullptr;
  if (c.reads_input_codes) *c.reads_input_codes = true;
  return std::make_shared<const ByteActivation>(*x);
}

// The global pool of channels-last codes (N, size, C) into y (N, C): each element's float is float32(u + lo)
// * scale, the value the codes stand for (floats_from_codes); the average sums them per channel in
// mlas_lane4_sum's order (lanes over whole groups of four positions, (l0 + l2) + (l1 + l3), then the rest),
// the channels side by side; the maximum is the float of the largest code (a positive scale).
template <bool kMax>
void global_pool_codes(const uint8_t* codes, const ByteActivation& a, int64_t batch, int64_t channels, int64_t size,
                       float* y) {
  const float scale = a.scale, lo = static_cast<float>(a.lo);
  exec::parallel_for(batch, size * channels, [&](int64_t n0, int64_t n1) {
    std::vector<float> lanes(static_cast<size_t>(4 * channels));
    std::vector<uint8_t> best(static_cast<size_t>(channels));
    for (int64_t n = n0; n < n1; ++n) {
      const uint8_t* image = codes + n * size * channels;
      float* out = y + n * channels;
      if constexpr (kMax) {
        std::copy_n(image, channels, best.data());
        for (int64_t p = 1; p < size; ++p)
          for (int64_t c = 0; c < channels; ++c) best[static_cast<size_t>(c)] = std::max(best[static_cast<size_t>(c)], image[p * channels + c]);
        for (int64_t c = 0; c < channels; ++c) out[c] = static_cast<float>(best[static_cast<size_t>(c)] + a.lo) * scale;
        continue;
      }
      std::fill(lanes.begin(), lanes.end(), 0.0f);
      const int64_t whole = size / 4 * 4;
      for (int64_t p = 0; p < whole; ++p) {
        float* lane = lanes.data() + (p % 4) * channels;
        const uint8_t* u = image + p * channels;
        for (int64_t c = 0; c < channels; ++c) lane[c] += (static_cast<float>(u[c]) + lo) * scale;
      }
      for (int64_t c = 0; c < channels; ++c)
        out[c] = (lanes[static_cast<size_t>(c)] + lanes[static_cast<size_t>(2 * channels + c)]) +
                 (lanes[static_cast<size_t>(channels + c)] + lanes[static_cast<size_t>(3 * channels + c)]);
      for (int64_t p = whole; p < size; ++p) {
        const uint8_t* u = image + p * channels;
        for (int64_t c = 0; c < channels; ++c) out[c] += (static_cast<float>(u[c]) + lo) * scale;
      }
      for (int64_t c = 0; c < channels; ++c) out[c] /= static_cast<float>(size);
    }
  });
}

// Global pooling: one value per (N, C) plane, output shape (N, C, 1, ..., 1). The mean is the plane's
// sum divided by its size; float planes sum as onnxruntime's MLAS kernel does (ort::mlas_lane4_sum),
// double planes in order.
template <bool kMax>
Status global_pool(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (x->rank() < 3)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x->dims()));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  Dims out_dims(x->rank(), 1);
  out_dims[0] = x->dim(0);
  out_dims[1] = x->dim(1);
  const int64_t planes = x->dim(0) * x->dim(1);
  const int64_t size = planes == 0 ? 0 : x->numel() / planes;
  if (size == 0 && planes > 0)
    return ctx.input_error(Code::kInvalidModel, 0, "has an empty spatial extent {}", dims_to_string(x->dims()));
  if (const auto* form = static_cast<const ByteActivation*>(ctx.prepacked());
      form && ctx.input_codes() && x->dtype() == DType::kFloat) {
    Tensor y(DType::kFloat, out_dims);
    global_pool_codes<kMax>(ctx.input_codes()->data<uint8_t>(), *form, x->dim(0), x->dim(1), size, y.data<float>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  Tensor y(x->dtype(), out_dims);
  exec::visit_dtype(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_storage_v<T>) {
      using C = Compute<T>;
      const T* xv = x->data<T>();
      T* yv = y.data<T>();
      for (int64_t p = 0; p < planes; ++p) {
        const T* plane = xv + p * size;
        if constexpr (kMax) {
          C best = load(plane[0]);
          for (int64_t i = 1; i < size; ++i) best = std::max(best, load(plane[i]));
          yv[p] = store<T>(best);
        } else if constexpr (std::is_same_v<T, float>) {
          yv[p] = ort::mlas_lane4_sum(plane, size) / static_cast<float>(size);
        } else {
          C sum = 0;
          for (int64_t i = 0; i < size; ++i) sum += load(plane[i]);
          yv[p] = store<T>(sum / static_cast<C>(size));
        }
      }
    }
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_pool_kernels(exec::KernelRegistry& r) {
  // MaxPool-11 only reworded the padding, 12 added int8/uint8; AveragePool-11 reworded the padding.
  const auto with_codes = [](exec::Kernel k) {
    k.prepack = prepack_max_pool;
    return k;
  };
  r.add("", "MaxPool", {1, 7}, with_codes(exec::typed_kernel<PoolAttrs, prepare_max_pool<1>, max_pool_kernel>()));
  r.add("", "MaxPool", {8, 9}, with_codes(exec::typed_kernel<PoolAttrs, prepare_max_pool<8>, max_pool_kernel>()));
  r.add("", "MaxPool", {10, exec::kNoUpperVersion},
        with_codes(exec::typed_kernel<PoolAttrs, prepare_max_pool<10>, max_pool_kernel>()));
  r.add("", "AveragePool", {1, 6}, exec::typed_kernel<PoolAttrs, prepare_average_pool<1>, average_pool>());
  r.add("", "AveragePool", {7, 9}, exec::typed_kernel<PoolAttrs, prepare_average_pool<7>, average_pool>());
  r.add("", "AveragePool", {10, 18}, exec::typed_kernel<PoolAttrs, prepare_average_pool<10>, average_pool>());
  r.add("", "AveragePool", {19, exec::kNoUpperVersion}, exec::typed_kernel<PoolAttrs, prepare_average_pool<19>, average_pool>());
  r.add("", "LpPool", {1, 1}, exec::typed_kernel<PoolAttrs, prepare_lp_pool<1>, lp_pool>());
  r.add("", "LpPool", {2, 17}, exec::typed_kernel<PoolAttrs, prepare_lp_pool<2>, lp_pool>());
  r.add("", "LpPool", {18, exec::kNoUpperVersion}, exec::typed_kernel<PoolAttrs, prepare_lp_pool<18>, lp_pool>());
  exec::Kernel average{global_pool<false>, nullptr, {}}, maximum{global_pool<true>, nullptr, {}};
  average.prepack = prepack_global_pool<false>;
  maximum.prepack = prepack_global_pool<true>;
  r.add("", "GlobalAveragePool", {1, exec::kNoUpperVersion}, average);
  r.add("", "GlobalMaxPool", {1, exec::kNoUpperVersion}, maximum);
}

}  // namespace qonnx::kernels
