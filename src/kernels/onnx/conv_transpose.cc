// ConvTranspose (groups, dilations, strides, pads, output_padding, output_shape, auto_pad). Each
// (image, group) is a product W_g^T x X_g into columns (output channel, kernel offset) x input
// position, scattered and summed into the output (col2im). Under --arith int, with quantized X and W,
// the same product and scatter run on the integers and round once (docs/arithmetic.md).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
#include "kernels/common/conv_util.h"
#include "kernels/common/gemm_core.h"
#include "kernels/common/integer_form.h"
#include "kernels/common/transpose.h"
#include "kernels/isa/isa.h"
#include "kernels/onnx/conv_integer.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#endif

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

// --- the integer path: X and W hold integers times scales. Each input position's products with W's
// columns (kernel offset, output channel) are exact int32 sums; each output gathers the products that land
// on it (exact integers), and is scaled once.
struct IntegerTranspose {
  // With dilation 1 along every strided dim, a ConvTranspose is one Conv over its input. Output o of a dim
  // with stride s, pad p and kernel K gathers inputs j - t at kernel offsets r + s t, where j = (o + p) div s
  // and its phase r = (o + p) mod s: a window of T = ceil(K / s) inputs, the same for every phase but for the
  // kernel offsets. The Conv's output channels are (group, phase, channel), each phase's kernel flipped and
  // padded to T taps with zero weights (W's integers as that Conv's (channels, T taps, C/group) rows), run by
  // the Conv's integer path, whose windows cost far less than gathering products when the channels are few;
  // its outputs (one per j and phase) are then interleaved into o. At stride 1 the Conv's outputs are the
  // ConvTranspose's. `columns` is then not made. A run whose pads would need negative Conv pads takes the float
  // path.
  std::optional<IntegerLayer> as_conv;
  Dims phases;        // per spatial dim: the stride (the phase count)
  Dims phase_kernel;  // per spatial dim: T
  // Per kernel offset of W (flat): its phase and its flipped tap in the phase's window (flat).
  std::vector<std::pair<int64_t, int64_t>> phase_taps;
  // Per group, W's integers as int8_gemm's right operand: C/group rows x (kernel offsets x M/group) columns
  // (W's (C, M/group, k...) with its two inner axes swapped, so that one kernel offset's channels are
  // side by side); the per-column offsets undo the activation bytes' shift.
  IntegerLayer columns;
  // The rounding of the gathered sums per output channel: scale double(x scale) * double(weight scale), the
  // bias, and zero offsets (the columns' offsets are added with their products).
  IntegerLayer outputs;
};

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Per kernel offset (flat, row-major), its phase (per dim k mod stride) and its tap in the phase's flipped
// window (per dim T - 1 - k div stride), both flat and row-major.
std::vector<std::pair<int64_t, int64_t>> phase_taps(const Dims& kernel, const Dims& strides, const Dims& phase_kernel) {
  const size_t nd = kernel.size();
  std::vector<std::pair<int64_t, int64_t>> taps;
  std::vector<int64_t> k(nd, 0);
  do {
    int64_t r = 0, u = 0;
    for (size_t d = 0; d < nd; ++d) {
      r = r * strides[d] + k[d] % strides[d];
      u = u * phase_kernel[d] + phase_kernel[d] - 1 - k[d] / strides[d];
    }
    taps.emplace_back(r, u);
  } while (next_index(k, kernel, nd));
  return taps;
}

// Plan-time: as Conv's prepack, with W's scale per tensor or along axis 1 (W is (C, M/group, k...)).
exec::PreparedState prepack_conv_transpose(const exec::PrepackContext& c) {
  if (c.arithmetic != exec::Arithmetic::kInt) return nullptr;
  const Tensor* w = c.constant(1);
  const exec::IntegerForm* wf = c.form(1);
  auto note = [&](std::string text) { return float_path(c, std::move(text)); };
  if (!c.form(0) && !wf) return nullptr;  // a float layer: nothing to say
  if (!w || !wf) return note("W is not a constant with an integer form (a quantizer's output)");
  if (w->rank() < 3 || !(wf->per_tensor() || wf->axis == 1))
    return note("W's scale is not per tensor or per output channel (axis 1)");
  const auto x = byte_activation(c.form(0));
  if (!x) return note("X has no integer form with one scale and at most 256 values including 0");
  const int64_t group = static_cast<const ConvTransposeAttrs*>(c.prepared)->conv.group;
  const int64_t channels = w->dim(0), mg = w->dim(1);
  if (group < 1 || channels % group != 0 || mg < 1) return nullptr;  // the run reports it
  const ir::Value* bias_value = c.node->inputs().size() > 2 ? c.node->inputs()[2] : nullptr;
  const Tensor* bias = bias_value ? c.constant(2) : nullptr;
  if (bias_value && !bias) return note("the bias is not a constant");
  if (bias && (bias->dtype() != DType::kFloat || bias->numel() != group * mg))
    return note("the bias is not one float per output channel");
  std::vector<int8_t> stored;
  if (!int8_values(*w, *wf, &stored)) return note("W's integers do not fit int8");
  const int64_t cg = channels / group, taps = w->numel() / (channels * mg), columns = mg * taps;
  auto weight_scale = [&](int64_t j) { return wf->scales[wf->scales.size() == 1 ? 0 : static_cast<size_t>(j)]; };
  const WindowAttrs& window = static_cast<const ConvTransposeAttrs*>(c.prepared)->conv.window;
  const size_t nd = static_cast<size_t>(w->rank() - 2);
  const auto attr = [&](const WindowList& l, size_t d) { return l.values.size() == nd ? l.values[d] : 1; };
  bool phased = (!window.strides.given || window.strides.values.size() == nd) &&
                (!window.dilations.given || window.dilations.values.size() == nd);
  IntegerTranspose t;
  for (size_t d = 0; d < nd && phased; ++d) {
    phased = attr(window.strides, d) == 1 || attr(window.dilations, d) == 1;
    t.phases.push_back(attr(window.strides, d));
    t.phase_kernel.push_back((w->dim(d + 2) + t.phases.back() - 1) / t.phases.back());
  }
  if (phased) {
    const int64_t phases = checked_numel(t.phases), window_taps = checked_numel(t.phase_kernel);
    t.phase_taps = phase_taps(Dims(w->dims().begin() + 2, w->dims().end()), t.phases, t.phase_kernel);
    // The Conv's ((group, phase, channel), window tap, C/group) rows; taps no kernel offset lands on weigh 0.
    std::vector<int8_t> conv_values(static_cast<size_t>(group * phases * mg * window_taps * cg), 0);
    for (int64_t g = 0; g < group; ++g)
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t k = 0; k < taps; ++k) {
          const auto [r, u] = t.phase_taps[static_cast<size_t>(k)];
          for (int64_t ci = 0; ci < cg; ++ci)
            conv_values[static_cast<size_t>((((g * phases + r) * mg + m) * window_taps + u) * cg + ci)] =
                stored[static_cast<size_t>(((g * cg + ci) * mg + m) * taps + k)];
        }
    std::vector<float> scales;
    Tensor conv_bias = bias ? Tensor(DType::kFloat, {group * phases * mg}) : Tensor();
    for (int64_t o = 0; o < group * phases * mg; ++o) {
      scales.push_back(weight_scale(o % mg));
      if (bias) conv_bias.data<float>()[o] = bias->data<float>()[o / (phases * mg) * mg + o % mg];
    }
    std::string why;
    auto layer = make_integer_layer(*x, conv_values, group, window_taps * cg, phases * mg, true, scales,
                                    bias ? &conv_bias : nullptr, &why);
    if (!layer) return note(why);
    t.as_conv = std::move(layer);
    if (c.path_note)
      *c.path_note = integer_path_note(*t.as_conv) +
                     (phases == 1 ? std::string("; stride 1: as a Conv with the kernel flipped")
                                  : fmt::format("; strides {}: as a Conv with the kernel flipped, {} phases of output "
                                                "channels interleaved",
                                                dims_to_string(t.phases), phases));
    if (c.captured_inputs) *c.captured_inputs |= uint64_t{1} << 1;  // W lives on as its codes
    if (c.takes_epilogue) *c.takes_epilogue = true;
    if (c.reads_input_codes) *c.reads_input_codes = true;
    if (c.writes_output_codes) *c.writes_output_codes = true;
    return std::make_shared<const IntegerTranspose>(std::move(t));
  }
  std::vector<int8_t> values(stored.size());  // (C, taps, M/group)
  transpose_inner(stored.data(), values.data(), channels, mg, taps, 1);
  std::vector<float> column_scales;
  for (int64_t g = 0; g < group; ++g)
    for (int64_t k = 0; k < taps; ++k)
      for (int64_t j = 0; j < mg; ++j) column_scales.push_back(weight_scale(j));
  std::string why;
  auto layer = make_integer_layer(*x, values, group, cg, columns, false, column_scales, nullptr, &why);
  if (!layer) return note(why);
  // The scatter adds up to C/group x taps products per output.
  if (static_cast<double>(cg) * static_cast<double>(taps) * x->max_byte() * static_cast<double>(layer->max_abs_weight) >=
      2147483648.0)
    return note(fmt::format("{} products of {}-value activations times weights up to {} may overflow int32", cg * taps,
                            x->max_byte() + 1, layer->max_abs_weight));
  t.columns = std::move(*layer);
  t.outputs.x = *x;
  t.outputs.offset.assign(static_cast<size_t>(group * mg), 0);
  for (int64_t m = 0; m < group * mg; ++m) {
    t.outputs.scale.push_back(static_cast<double>(x->scale) * static_cast<double>(weight_scale(m % mg)));
    if (bias) t.outputs.bias.push_back(bias->data<float>()[m]);
  }
  if (c.path_note) *c.path_note = integer_path_note(t.columns);
  if (c.captured_inputs) *c.captured_inputs |= uint64_t{1} << 1;  // W lives on as its codes
  if (c.takes_epilogue) *c.takes_epilogue = true;
  if (c.reads_input_codes) *c.reads_input_codes = true;
  if (c.writes_output_codes) *c.writes_output_codes = true;
  return std::make_shared<const IntegerTranspose>(std::move(t));
}

// Where a (kernel index, input index) pair of one spatial dim puts its part of a product's place: `sums` is
// the dim's part of in * columns + tap * mg (the product's offset in the sums), `offset` of tap * mg (its
// column's offset); a product's place is the sum of its dims' parts.
struct Landing {
  int64_t sums = 0, offset = 0;
};
// Per spatial dim, the pairs that land on each output coordinate o (o = i * stride - pad_begin + k *
// dilation), as one list: those of o are entries[first[o]] .. entries[first[o + 1] - 1].
struct LandingList {
  std::vector<int64_t> first;
  std::vector<Landing> entries;
};

std::vector<LandingList> landing_lists(const WindowGeometry& g, int64_t columns, int64_t mg) {
  const size_t nd = g.rank();
  std::vector<int64_t> kernel_stride(nd, 1), in_stride(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) {
    kernel_stride[d] = kernel_stride[d + 1] * g.kernel[d + 1];
    in_stride[d] = in_stride[d + 1] * g.in[d + 1];
  }
  std::vector<LandingList> lists(nd);
  for (size_t d = 0; d < nd; ++d) {
    std::vector<std::vector<Landing>> by_output(static_cast<size_t>(g.out[d]));
    for (int64_t k = 0; k < g.kernel[d]; ++k)
      for (int64_t i = 0; i < g.in[d]; ++i) {
        const int64_t o = i * g.strides[d] - g.pads_begin[d] + k * g.dilations[d];
        if (o < 0 || o >= g.out[d]) continue;
        const int64_t tap = k * kernel_stride[d] * mg;
        by_output[static_cast<size_t>(o)].push_back({i * in_stride[d] * columns + tap, tap});
      }
    LandingList& list = lists[d];
    for (const auto& pairs : by_output) {
      list.first.push_back(static_cast<int64_t>(list.entries.size()));
      list.entries.insert(list.entries.end(), pairs.begin(), pairs.end());
    }
    list.first.push_back(static_cast<int64_t>(list.entries.size()));
  }
  return lists;
}

// The places in the sums (one pair per dim, their parts added) of every product landing on output position o,
// into `places`, and of their columns' offsets into `offsets`; returns how many.
int64_t landing_places(const std::vector<LandingList>& lists, const std::vector<int64_t>& o, int64_t* places,
                       int64_t* offsets) {
  const size_t nd = lists.size();
  const auto range = [&](size_t d) {
    const LandingList& l = lists[d];
    const int64_t at = o[d];
    return std::make_pair(l.entries.data() + l.first[static_cast<size_t>(at)], l.entries.data() + l.first[static_cast<size_t>(at) + 1]);
  };
  int64_t count = 0;
  if (nd == 1) {
    const auto [a0, a1] = range(0);
    for (const Landing* a = a0; a != a1; ++a, ++count) places[count] = a->sums, offsets[count] = a->offset;
    return count;
  }
  if (nd == 2) {
    const auto [a0, a1] = range(0);
    const auto [b0, b1] = range(1);
    for (const Landing* a = a0; a != a1; ++a)
      for (const Landing* b = b0; b != b1; ++b, ++count)
        places[count] = a->sums + b->sums, offsets[count] = a->offset + b->offset;
    return count;
  }
  // Every combination of one landing pair per dim (an odometer over the dims' lists).
  std::vector<const Landing*> begin(nd), end(nd), at(nd);
  for (size_t d = 0; d < nd; ++d) {
    std::tie(begin[d], end[d]) = range(d);
    if (begin[d] == end[d]) return 0;
    at[d] = begin[d];
  }
  while (true) {
    int64_t place = 0, offset = 0;
    for (size_t d = 0; d < nd; ++d) place += at[d]->sums, offset += at[d]->offset;
    places[count] = place, offsets[count++] = offset;
    size_t d = nd;
    while (d-- > 0) {
      if (++at[d] != end[d]) break;
      at[d] = begin[d];
    }
    if (d == static_cast<size_t>(-1)) return count;
  }
}

// row[m] = the sum of sums[places[l] + m] (plus column_offset[offsets[l] + m] when column_offset is not null)
// over l < count, for m < mg: exact int32 adds, any order.
void add_landings_portable(const int32_t* sums, const int64_t* places, const int32_t* column_offset,
                           const int64_t* offsets, int64_t count, int64_t mg, int32_t* row) {
  std::fill_n(row, mg, 0);
  for (int64_t l = 0; l < count; ++l) {
    const int32_t* src = sums + places[l];
    for (int64_t m = 0; m < mg; ++m) row[m] += src[m];
    if (!column_offset) continue;
    const int32_t* off = column_offset + offsets[l];
    for (int64_t m = 0; m < mg; ++m) row[m] += off[m];
  }
}
#if QONNX_ISA_X86
// The same eight channels at a time, each chunk's sum kept in a register over every landing (the last chunk
// under a mask: no read past a product's mg channels).
__attribute__((target("avx2"))) void add_landings_avx2(const int32_t* sums, const int64_t* places,
                                                       const int32_t* column_offset, const int64_t* offsets,
                                                       int64_t count, int64_t mg, int32_t* row) {
  for (int64_t m0 = 0; m0 < mg; m0 += 8) {
    __m256i acc = _mm256_setzero_si256();
    if (mg - m0 >= 8) {
      for (int64_t l = 0; l < count; ++l)
        acc = _mm256_add_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + places[l] + m0)));
      if (column_offset)
        for (int64_t l = 0; l < count; ++l)
          acc = _mm256_add_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(column_offset + offsets[l] + m0)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + m0), acc);
    } else {
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(mg - m0)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      for (int64_t l = 0; l < count; ++l) acc = _mm256_add_epi32(acc, _mm256_maskload_epi32(sums + places[l] + m0, mask));
      if (column_offset)
        for (int64_t l = 0; l < count; ++l)
          acc = _mm256_add_epi32(acc, _mm256_maskload_epi32(column_offset + offsets[l] + m0, mask));
      _mm256_maskstore_epi32(row + m0, mask, acc);
    }
  }
}
#endif

// y = the integer path's ConvTranspose of x, then `epilogue` (may be null); false (y untouched) when x holds
// a value its form does not describe (a NaN): the caller takes the float path. Per image and group, the
// exact products of every input position with W's columns (int8_gemm, (positions, columns)); then for each
// block of output positions, each output's channels gather their landing products (with their columns'
// offsets) into int32 rows in cache, which are rounded once, run through the epilogue and written
// channels-first. The gather adds the same integers the scatter did, so the sums (exact) and bits are the same.
//
// `given` (may be null): X's channels-last bytes as the producer made them (KernelContext::input_codes). With
// `codes`, the output's byte codes under codes->form are made too (channels-last, (N, positions, M)); a block
// that cannot make them clears codes->made, and without codes->floats y is not written.
bool conv_transpose_integer(const TransposeShape& s, const IntegerTranspose& t, const float* x, float* y,
                            const exec::Epilogue* epilogue, const uint8_t* given, OutputCodes* codes) {
  const IntegerLayer& layer = t.columns;
  const int64_t cg = s.channels / s.group, mg = s.filters / s.group, columns = layer.groups[0].n();
  Scratch<uint8_t> made_here = scratch<uint8_t>(0);
  const uint8_t* nhwc = channels_last_bytes(given, x, s.batch, s.channels, s.in_size, layer.x, made_here);
  if (!nhwc) return false;
  const WindowGeometry& g = s.geo;
  const size_t nd = g.rank();
  const std::vector<LandingList> lists = landing_lists(g, columns, mg);
  std::vector<avx2::ElementwiseStep> steps;
  const bool stepped = epilogue_steps(epilogue, &steps);
  constexpr int64_t kBlock = 64;  // output positions per block: their sums and floats stay in L1
  const int64_t blocks = (s.out_size + kBlock - 1) / kBlock;
  const auto add_landings =
#if QONNX_ISA_X86
      isa::current(isa::Family::kInt8) >= isa::Isa::kAvx2 ? add_landings_avx2 :
#endif
                                                          add_landings_portable;
  // Blocks b0..b1 of image n, group gi, from that image's sums.
  const auto run_blocks = [&](int64_t n, int64_t gi, const int32_t* sums, int64_t b0, int64_t b1) {
    // The columns' offsets (the activation bytes' shift), where there are any.
    const int32_t* offset = layer.offset.data() + gi * columns;
    if (std::all_of(offset, offset + columns, [](int32_t v) { return v == 0; })) offset = nullptr;
    const auto acc = scratch<int32_t>(kBlock * mg);
    const auto scaled = scratch<float>(kBlock * mg);
    std::vector<int64_t> places(static_cast<size_t>(s.kernel_size)), offsets(places.size());
    std::vector<int64_t> o(nd);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t pos0 = b * kBlock, count = std::min(kBlock, s.out_size - pos0);
      for (int64_t rest = pos0, d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
        o[static_cast<size_t>(d)] = rest % g.out[static_cast<size_t>(d)];
        rest /= g.out[static_cast<size_t>(d)];
      }
      for (int64_t p = 0; p < count; ++p) {
        const int64_t landings = landing_places(lists, o, places.data(), offsets.data());
        add_landings(sums, places.data(), offset, offsets.data(), landings, mg, acc.get() + p * mg);
        next_index(o, g.out, nd);
      }
      uint8_t* bytes = codes ? codes->bytes + (n * s.out_size + pos0) * s.filters + gi * mg : nullptr;
      if (!t.outputs.outputs_through(acc.get(), count, mg, gi * mg, epilogue, stepped ? &steps : nullptr, scaled.get(), mg,
                                     codes ? &codes->form : nullptr, bytes, s.filters, !codes || codes->floats))
        codes->made.store(false, std::memory_order_relaxed);
      if (codes && !codes->floats) continue;
      rows_to_planes(scaled.get(), count, mg, y + (n * s.filters + gi * mg) * s.out_size + pos0, s.out_size,
                     s.batch * s.filters * s.out_size * 4);
    }
  };
  const auto image_sums = [&](int64_t n, int64_t gi, int32_t* sums) {
    layer.group_sums(static_cast<size_t>(gi), s.in_size, nhwc + n * s.in_size * s.channels + gi * cg, s.channels, sums);
  };
  const int64_t images = s.batch * s.group;
  if (images >= exec::threads()) {
    // A share of whole images (and groups) per thread: each image's product and gather on one thread, no
    // hand-over between the two.
    exec::parallel_for(images, s.in_size * columns * cg + blocks * kBlock * mg * s.kernel_size, [&](int64_t u0, int64_t u1) {
      const auto sums = scratch<int32_t>(s.in_size * columns);
      for (int64_t u = u0; u < u1; ++u) {
        image_sums(u / s.group, u % s.group, sums.get());
        run_blocks(u / s.group, u % s.group, sums.get(), 0, blocks);
      }
    });
    return true;
  }
  const auto sums = scratch<int32_t>(s.in_size * columns);
  for (int64_t u = 0; u < images; ++u) {
    image_sums(u / s.group, u % s.group, sums.get());
    exec::parallel_for(blocks, kBlock * mg * s.kernel_size,
                       [&](int64_t b0, int64_t b1) { run_blocks(u / s.group, u % s.group, sums.get(), b0, b1); });
  }
  return true;
}

// The phase Conv (IntegerTranspose::as_conv) of a ConvTranspose of shape s: the same input, T taps per dim
// (dilated as the ConvTranspose along stride-1 dims), outputs j from first[d] = pad div stride on, padded so
// that its window j reads inputs j - T + 1 .. j (times the dilation); nullopt when that needs a negative pad.
struct PhaseConv {
  ConvShape conv;
  Dims first;
};
std::optional<PhaseConv> as_phase_conv(const TransposeShape& s, const IntegerTranspose& t) {
  PhaseConv p;
  ConvShape& c = p.conv;
  c.batch = s.batch, c.channels = s.channels, c.filters = s.filters * checked_numel(t.phases), c.group = s.group;
  c.in_size = s.in_size, c.kernel_size = checked_numel(t.phase_kernel);
  c.geo = s.geo;
  c.geo.kernel = t.phase_kernel;
  c.out_dims = {s.batch, c.filters};
  for (size_t d = 0; d < s.geo.rank(); ++d) {
    const int64_t stride = t.phases[d], pad = s.geo.pads_begin[d];
    c.geo.strides[d] = 1;
    if (stride > 1) c.geo.dilations[d] = 1;
    const int64_t reach = c.geo.extent(d) - 1, first = floor_div(pad, stride);
    c.geo.out[d] = floor_div(s.geo.out[d] - 1 + pad, stride) - first + 1;
    c.geo.pads_begin[d] = reach - first;
    c.geo.pads_end[d] = c.geo.out[d] - s.geo.in[d] - c.geo.pads_begin[d] + reach;
    if (c.geo.pads_begin[d] < 0 || c.geo.pads_end[d] < 0) return std::nullopt;
    c.out_size *= c.geo.out[d];
    c.out_dims.push_back(c.geo.out[d]);
    p.first.push_back(first);
  }
  return p;
}

// Per spatial dim and output coordinate o: the phase Conv's output j (from its first) and the phase that hold o.
struct PhaseIndex {
  std::vector<std::vector<int64_t>> j, r;
};
PhaseIndex phase_index(const TransposeShape& s, const IntegerTranspose& t, const PhaseConv& p) {
  PhaseIndex index;
  for (size_t d = 0; d < s.geo.rank(); ++d) {
    std::vector<int64_t> j, r;
    for (int64_t o = 0; o < s.geo.out[d]; ++o) {
      const int64_t q = floor_div(o + s.geo.pads_begin[d], t.phases[d]);
      j.push_back(q - p.first[d]);
      r.push_back(o + s.geo.pads_begin[d] - q * t.phases[d]);
    }
    index.j.push_back(std::move(j));
    index.r.push_back(std::move(r));
  }
  return index;
}

// y (N, M, out...) from the phase Conv's outputs `phased` (N, (group, phase, M/group), j...): each output plane row
// by row, per phase of the last dim every stride-th output from consecutive j.
void interleave_floats(const TransposeShape& s, const IntegerTranspose& t, const PhaseConv& p, const PhaseIndex& index,
                       const float* phased, float* y) {
  const size_t nd = s.geo.rank(), last = nd - 1;
  const int64_t mg = s.filters / s.group, phases = checked_numel(t.phases), stride = t.phases[last];
  const int64_t out_w = s.geo.out[last], j_w = p.conv.geo.out[last], rows = s.out_size / std::max<int64_t>(out_w, 1);
  exec::parallel_for(s.batch * s.filters, s.out_size, [&](int64_t u0, int64_t u1) {
    std::vector<int64_t> o(nd, 0);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / s.filters, g = u % s.filters / mg, m = u % mg;
      const float* planes = phased + ((n * s.group + g) * phases * mg + m) * p.conv.out_size;
      float* plane = y + u * s.out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t row = 0; row < rows; ++row, next_index(o, s.geo.out, last)) {
        int64_t r_outer = 0, j_outer = 0;
        for (size_t d = 0; d < last; ++d) {
          r_outer = r_outer * t.phases[d] + index.r[d][static_cast<size_t>(o[d])];
          j_outer = j_outer * p.conv.geo.out[d] + index.j[d][static_cast<size_t>(o[d])];
        }
        float* dst_row = plane + row * out_w;
        const auto source = [&](int64_t o0) {
          const int64_t r = r_outer * stride + index.r[last][static_cast<size_t>(o0)];
          return planes + r * mg * p.conv.out_size + j_outer * j_w + index.j[last][static_cast<size_t>(o0)];
        };
        if (stride == 1) {
          std::memcpy(dst_row, source(0), static_cast<size_t>(out_w) * sizeof(float));
        } else if (stride == 2 && out_w >= 2) {  // the common case: two phases zipped (vectorizes)
          const float* a = source(0);
          const float* b = source(1);
          const int64_t pairs = out_w / 2;
          for (int64_t i = 0; i < pairs; ++i) dst_row[2 * i] = a[i], dst_row[2 * i + 1] = b[i];
          if (out_w % 2) dst_row[out_w - 1] = a[pairs];
        } else {
          for (int64_t o0 = 0; o0 < std::min(stride, out_w); ++o0) {
            const float* src = source(o0);
            const int64_t count = (out_w - o0 + stride - 1) / stride;
            for (int64_t i = 0; i < count; ++i) dst_row[o0 + i * stride] = src[i];
          }
        }
      }
    }
  });
}

// The output's codes (N, out positions, M) from the phase Conv's (N, j positions, (group, phase, M/group)).
Tensor interleave_codes(exec::KernelContext& ctx, const TransposeShape& s, const IntegerTranspose& t, const PhaseConv& p,
                        const PhaseIndex& index, const uint8_t* phased) {
  Tensor codes = ctx.output_buffer(DType::kUInt8, {s.batch * s.out_size * s.filters});
  uint8_t* out = codes.data<uint8_t>();
  const size_t nd = s.geo.rank();
  const int64_t mg = s.filters / s.group, phases = checked_numel(t.phases);
  exec::parallel_for(s.batch, s.out_size * s.filters, [&](int64_t n0, int64_t n1) {
    std::vector<int64_t> o(nd, 0);
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t pos = 0; pos < s.out_size; ++pos, next_index(o, s.geo.out, nd)) {
        int64_t r = 0, j = 0;
        for (size_t d = 0; d < nd; ++d) {
          r = r * t.phases[d] + index.r[d][static_cast<size_t>(o[d])];
          j = j * p.conv.geo.out[d] + index.j[d][static_cast<size_t>(o[d])];
        }
        const uint8_t* src = phased + (n * p.conv.out_size + j) * p.conv.filters + r * mg;
        uint8_t* dst = out + (n * s.out_size + pos) * s.filters;
        for (int64_t g = 0; g < s.group; ++g) std::memcpy(dst + g * mg, src + g * phases * mg, static_cast<size_t>(mg));
      }
  });
  return codes;
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
  Tensor w_from_codes;
  const auto* t = static_cast<const IntegerTranspose*>(ctx.prepacked());
  if (t && t->as_conv && dt == DType::kFloat) {
    const std::optional<PhaseConv> pc = as_phase_conv(s, *t);
    if (pc) {
      // At stride 1 the phase Conv's outputs are the ConvTranspose's, in place.
      const bool direct = pc->conv.filters == s.filters;
      Tensor y = ctx.output_buffer(DType::kFloat, s.out_dims);
      const auto phased = scratch<float>(direct ? 0 : s.batch * pc->conv.filters * pc->conv.out_size);
      CodesIo io;
      io.input = ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr;
      io.output_form = ctx.output_codes_form();
      io.floats_needed = ctx.output_floats_needed();
      if (conv_integer_path(pc->conv, *t->as_conv, x->data<float>(), false, direct ? y.data<float>() : phased.get(),
                            ctx.epilogue(), &io)) {
        if (!direct && y.numel() > 0) {
          const PhaseIndex index = phase_index(s, *t, *pc);
          // The floats are left unwritten only when codes were made and nobody reads the floats.
          if (!io.output.defined() || io.floats_needed)
            interleave_floats(s, *t, *pc, index, phased.get(), y.data<float>());
          if (io.output.defined()) io.output = interleave_codes(ctx, s, *t, *pc, index, io.output.data<uint8_t>());
        }
        ctx.set_output(0, std::move(y));
        ctx.epilogue_done();
        if (io.output.defined()) ctx.set_output_codes(std::move(io.output));
        return Status::ok();
      }
    }
    if (!w->raw()) {  // the plan holds W as codes only: W from the phase Conv's rows
      const int64_t mg = w->dim(1), cg = w->dim(0) / s.group, taps = s.kernel_size;
      const int64_t phases = checked_numel(t->phases), window_taps = checked_numel(t->phase_kernel);
      const Tensor rows = t->as_conv->float_weights({s.filters * phases, window_taps, cg}, true);
      w_from_codes = Tensor::uninitialized(DType::kFloat, w->dims());
      const float* from = rows.data<float>();
      float* to = w_from_codes.data<float>();
      for (int64_t g = 0; g < s.group; ++g)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t m = 0; m < mg; ++m)
            for (int64_t k = 0; k < taps; ++k) {
              const auto [r, u] = t->phase_taps[static_cast<size_t>(k)];
              to[((g * cg + ci) * mg + m) * taps + k] = from[(((g * phases + r) * mg + m) * window_taps + u) * cg + ci];
            }
      w = &w_from_codes;
    }
  } else if (t && dt == DType::kFloat) {
    Tensor y = ctx.output_buffer(DType::kFloat, s.out_dims);
    const uint8_t* given = ctx.input_codes() ? ctx.input_codes()->data<uint8_t>() : nullptr;
    const std::optional<ByteActivation> out_form = byte_activation(ctx.output_codes_form());
    OutputCodes out;
    Tensor codes;
    if (out_form && y.numel() > 0) {
      codes = ctx.output_buffer(DType::kUInt8, {s.batch * s.out_size * s.filters});
      out.form = *out_form, out.bytes = codes.data<uint8_t>(), out.floats = ctx.output_floats_needed();
    }
    bool done = y.numel() == 0 ||
                conv_transpose_integer(s, *t, x->data<float>(), y.data<float>(), ctx.epilogue(), given, codes.defined() ? &out : nullptr);
    const bool with_codes = done && codes.defined() && out.made.load(std::memory_order_relaxed);
    // Codes that could not all be made (a NaN from a NaN bias): the floats, once more, if they were skipped.
    if (done && codes.defined() && !with_codes && !out.floats)
      done = conv_transpose_integer(s, *t, x->data<float>(), y.data<float>(), ctx.epilogue(), given, nullptr);
    if (done) {
      ctx.set_output(0, std::move(y));
      ctx.epilogue_done();
      if (with_codes) ctx.set_output_codes(std::move(codes));
      return Status::ok();
    }
    if (!w->raw()) {  // the plan holds W as codes only (a streamed W comes with its values)
      const int64_t mg = w->dim(1), taps = w->numel() / (w->dim(0) * std::max<int64_t>(mg, 1));
      const Tensor swapped = t->columns.float_weights({w->dim(0), taps, mg}, false);  // (C, taps, M/group)
      w_from_codes = Tensor::uninitialized(DType::kFloat, w->dims());
      transpose_inner(swapped.data<float>(), w_from_codes.data<float>(), w->dim(0), taps, mg, sizeof(float));
      w = &w_from_codes;
    }
  }
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
  exec::Kernel kernel = exec::typed_kernel<ConvTransposeAttrs, prepare_conv_transpose, conv_transpose>();
  kernel.prepack = prepack_conv_transpose;
  r.add("", "ConvTranspose", {1, exec::kNoUpperVersion}, kernel);
}

}  // namespace qonnx::kernels
