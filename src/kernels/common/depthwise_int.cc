#include "kernels/common/depthwise_int.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "kernels/common/quant_avx2.h"
#include "kernels/common/transpose.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/threads.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#endif

namespace qonnx::kernels {
namespace {

constexpr int64_t kLanes = 16;  // outputs of a row per step of the vector path
constexpr int64_t kQuadBlock = 64;  // channels per step of the row-quad run (one zmm of bytes)
constexpr int64_t kMaxQuadRows = 16;  // kernel rows the row-quad run takes

int32_t low_weight(int32_t pair) { return static_cast<int16_t>(static_cast<uint32_t>(pair) & 0xffffu); }
int32_t high_weight(int32_t pair) { return static_cast<int16_t>(static_cast<uint32_t>(pair) >> 16); }

// One filter over a padded plane, n outputs per output row r: sums[r * n + i] = start + the sum over
// pairs p of plane[rows[r] + at[2p] + i] * low + plane[rows[r] + at[2p + 1] + i] * high. With start the
// filter's offset every partial sum is the taps' v * w so far plus lo * w for the rest: inside the bound
// make_depthwise_integer_layer checked.
void plane_sums_portable(const uint8_t* plane, const int64_t* rows, int64_t row_count, const int64_t* at,
                         int64_t pair_count, const int32_t* pairs, int32_t start, int64_t n, int32_t* sums) {
  for (int64_t r = 0; r < row_count; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* x = plane + rows[r] + i;
      int32_t s = start;
      for (int64_t p = 0; p < pair_count; ++p)
        s += x[at[2 * p]] * low_weight(pairs[p]) + x[at[2 * p + 1]] * high_weight(pairs[p]);
      sums[r * n + i] = s;
    }
}

// One filter's outputs: y[i] = scale_sum(sums[i], scale, bias) for i in [i0, n).
void scale_filter_portable(const int32_t* sums, int64_t i0, int64_t n, double scale, double bias, float* y) {
  for (int64_t i = i0; i < n; ++i) y[i] = scale_sum(sums[i], scale, bias);
}

#if QONNX_ISA_X86
// Two taps' bytes at 16 outputs, interleaved (tap a, tap b) into 16-bit lanes: vpmaddwd against the
// (low, high) weight pair gives a * low + b * high in each int32 lane, exactly.
__attribute__((target("avx2"))) inline void pair_products(const uint8_t* a, const uint8_t* b, __m256i w,
                                                          __m256i* acc_lo, __m256i* acc_hi) {
  const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(va, vb)), hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(va, vb));
  *acc_lo = _mm256_add_epi32(*acc_lo, _mm256_madd_epi16(lo, w));
  *acc_hi = _mm256_add_epi32(*acc_hi, _mm256_madd_epi16(hi, w));
}

// Whole blocks of 16 outputs: a row's last block reads up to 15 bytes past its taps' runs and writes up to
// 15 sums into the next row's (which that row then overwrites), so the plane and sums have that slack.
__attribute__((target("avx2"))) void plane_sums_avx2(const uint8_t* plane, const int64_t* rows, int64_t row_count,
                                                     const int64_t* at, int64_t pair_count, const int32_t* pairs,
                                                     int32_t start, int64_t n, int32_t* sums) {
  for (int64_t r = 0; r < row_count; ++r) {
    const uint8_t* x = plane + rows[r];
    for (int64_t i = 0; i < n; i += kLanes) {
      __m256i acc_lo = _mm256_set1_epi32(start), acc_hi = acc_lo;
      for (int64_t p = 0; p < pair_count; ++p) {
        pair_products(x + at[2 * p] + i, x + at[2 * p + 1] + i, _mm256_set1_epi32(pairs[p]), &acc_lo, &acc_hi);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + r * n + i), acc_lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + r * n + i + 8), acc_hi);
    }
  }
}

// scale_filter_portable four lanes at a time (each step rounds as the scalar one: no fusion).
__attribute__((target("avx2"))) void scale_filter_avx2(const int32_t* sums, int64_t n, double scale, double bias,
                                                       float* y) {
  int64_t i = 0;
  const __m256d s = _mm256_set1_pd(scale), b = _mm256_set1_pd(bias);
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums + i)));
    _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(v, s), b)));
  }
  scale_filter_portable(sums, i, n, scale, bias, y);
}
#endif

bool vector_path() {
#if QONNX_ISA_X86
  return isa::current(isa::Family::kInt8) != isa::Isa::kPortable;
#else
  return false;
#endif
}

void plane_sums(bool simd, const uint8_t* plane, const int64_t* rows, int64_t row_count, const int64_t* at,
                int64_t pair_count, const int32_t* pairs, int32_t start, int64_t n, int32_t* sums) {
#if QONNX_ISA_X86
  if (simd) return plane_sums_avx2(plane, rows, row_count, at, pair_count, pairs, start, n, sums);
#endif
  plane_sums_portable(plane, rows, row_count, at, pair_count, pairs, start, n, sums);
}

void scale_filter(bool simd, const int32_t* sums, int64_t n, double scale, double bias, float* y) {
#if QONNX_ISA_X86
  if (simd) return scale_filter_avx2(sums, n, scale, bias, y);
#endif
  scale_filter_portable(sums, 0, n, scale, bias, y);
}

// A channel's plane padded in every spatial dim, the last dim stored as stride_w phases of phase_w bytes
// (phase q: padded columns q, q + stride_w, ...), so that every tap of consecutive outputs of a row is a
// contiguous run: tap t of the outputs of output row oo starts at out_row[oo] + tap[t]. A row (all dims
// but the last) is row_len = stride_w * phase_w bytes.
struct PaddedPlane {
  int64_t in_w = 1, out_w = 1, in_size = 1, pad_w = 0, stride_w = 1, phase_w = 1, bytes = 0;
  std::vector<int64_t> in_row;   // per input row (outer dims flattened): where it lies in the plane
  std::vector<int64_t> out_row;  // per output row: its outputs' window start
  std::vector<int64_t> tap;      // per tap in kernel order, then the odd last tap again (weighing 0)
};

PaddedPlane padded_plane(const WindowGeometry& g, int64_t taps) {
  const size_t nd = g.rank(), last = nd - 1;
  PaddedPlane pp;
  pp.in_w = g.in[last], pp.out_w = g.out[last], pp.pad_w = g.pads_begin[last], pp.stride_w = g.strides[last];
  pp.phase_w = (g.pads_begin[last] + g.in[last] + g.pads_end[last] + pp.stride_w - 1) / pp.stride_w;
  const int64_t row_len = pp.stride_w * pp.phase_w;
  // Row-major strides of the padded outer dims, in bytes.
  std::vector<int64_t> stride(nd, row_len);
  int64_t padded_rows = 1;
  for (size_t d = last; d-- > 0;) {
    stride[d] = padded_rows * row_len;
    padded_rows *= g.pads_begin[d] + g.in[d] + g.pads_end[d];
  }
  pp.bytes = padded_rows * row_len + kLanes;
  std::vector<int64_t> i(nd, 0);
  do {
    int64_t at = 0;
    for (size_t d = 0; d < last; ++d) at += (i[d] + g.pads_begin[d]) * stride[d];
    pp.in_row.push_back(at);
  } while (next_index(i, g.in, last));
  do {
    int64_t at = 0;
    for (size_t d = 0; d < last; ++d) at += i[d] * g.strides[d] * stride[d];
    pp.out_row.push_back(at);
  } while (next_index(i, g.out, last));
  do {
    int64_t at = 0;
    for (size_t d = 0; d < last; ++d) at += i[d] * g.dilations[d] * stride[d];
    const int64_t col = i[last] * g.dilations[last];
    pp.tap.push_back(at + col % pp.stride_w * pp.phase_w + col / pp.stride_w);
  } while (next_index(i, g.kernel, nd));
  if (taps % 2 == 1) pp.tap.push_back(pp.tap.back());
  pp.in_size = static_cast<int64_t>(pp.in_row.size()) * pp.in_w;
  return pp;
}

// DepthwiseIntegerLayer::quad_weights from `values` (filter-major, kernel_h x kernel_w taps each).
void pack_row_quads(const std::vector<int8_t>& values, int64_t kernel_h, int64_t kernel_w, DepthwiseIntegerLayer* layer) {
  layer->kernel_h = kernel_h, layer->kernel_w = kernel_w, layer->row_quads = (kernel_h + 3) / 4;
  layer->quad_channels = (layer->filters + kQuadBlock - 1) / kQuadBlock * kQuadBlock;
  layer->quad_weights.assign(static_cast<size_t>(kernel_w * layer->row_quads * layer->quad_channels * 4), 0);
  for (int64_t c = 0; c < layer->filters; ++c)
    for (int64_t ky = 0; ky < kernel_h; ++ky)
      for (int64_t kx = 0; kx < kernel_w; ++kx) {
        const int64_t at = ((kx * layer->row_quads + ky / 4) * layer->quad_channels + c) * 4 + ky % 4;
        layer->quad_weights[static_cast<size_t>(at)] = values[static_cast<size_t>((c * kernel_h + ky) * kernel_w + kx)];
      }
}

}  // namespace

std::optional<DepthwiseIntegerLayer> make_depthwise_integer_layer(const ByteActivation& x,
                                                                  const std::vector<int8_t>& values, int64_t filters,
                                                                  const Dims& kernel,
                                                                  const std::vector<float>& weight_scales,
                                                                  const Tensor* bias, std::string* why) {
  DepthwiseIntegerLayer layer;
  int64_t taps = 1;
  for (int64_t k : kernel) taps *= k;
  layer.x = x, layer.filters = filters, layer.taps = taps;
  for (int8_t v : values) layer.max_abs_weight = std::max<int64_t>(layer.max_abs_weight, std::abs(int{v}));
  if (static_cast<double>(taps) * x.max_byte() * static_cast<double>(layer.max_abs_weight) >= 2147483648.0) {
    *why = fmt::format("{} taps of {}-value activations times weights up to {} may overflow int32", taps,
                       x.max_byte() + 1, layer.max_abs_weight);
    return std::nullopt;
  }
  if (weight_scales.size() != 1 && static_cast<int64_t>(weight_scales.size()) != filters) {
    *why = "the weight scales are not one per output channel";
    return std::nullopt;
  }
  if (bias && (bias->dtype() != DType::kFloat || bias->numel() != filters)) {
    *why = "the bias is not one float per output channel";
    return std::nullopt;
  }
  const int64_t pair_count = layer.pair_count();
  layer.pairs.assign(static_cast<size_t>(pair_count * filters), 0);
  for (int64_t f = 0; f < filters; ++f) {
    const int8_t* w = values.data() + f * taps;
    int64_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += w[t];
    for (int64_t p = 0; p < pair_count; ++p) {
      const uint32_t low = static_cast<uint16_t>(int16_t{w[2 * p]});
      const uint32_t high = 2 * p + 1 < taps ? static_cast<uint16_t>(int16_t{w[2 * p + 1]}) : 0u;
      layer.pairs[static_cast<size_t>(f * pair_count + p)] = static_cast<int32_t>(low | high << 16);
    }
    const float ws = weight_scales[weight_scales.size() == 1 ? 0 : static_cast<size_t>(f)];
    layer.rounding.scale.push_back(static_cast<double>(x.scale) * static_cast<double>(ws));
    layer.offset.push_back(static_cast<int32_t>(x.lo * sum));
    layer.rounding.bias.push_back(bias ? static_cast<double>(bias->data<float>()[f]) : 0.0);
  }
  layer.rounding.x = x;
  layer.rounding.offset.assign(static_cast<size_t>(filters), 0);
  if (kernel.size() == 2 && kernel[0] >= 2) pack_row_quads(values, kernel[0], kernel[1], &layer);
  return layer;
}

std::string depthwise_integer_note(const DepthwiseIntegerLayer& layer) {
  return fmt::format("integer: depthwise, activations in [{}, {}] x weights in [{}, {}], {} (int32 sums, one rounding)",
                     layer.x.lo, layer.x.hi, -layer.max_abs_weight, layer.max_abs_weight,
                     !vector_path() ? "portable"
                     : isa::current(isa::Family::kInt8) != isa::Isa::kAvx512 ? "avx2-madd16 taps in pairs"
                     : layer.quad_weights.empty() ? "avx512vnni (channels-last) / avx2-madd16 taps in pairs"
                                                  : "avx512vnni (channels-last: kernel rows in fours) / avx2-madd16 taps in pairs");
}

namespace {

constexpr int64_t kFusedWidth = 16;  // columns per row of a plane in the fused pass (AVX-512's 16 lanes)

// The fused pass over a plane's first multiple of kFusedWidth sums (which include the filter's offset):
// y = float(double(sum) * scale + bias) (scale_filter's rounding), the steps, and with `target` the codes
// into `codes`; clears *made when a code cannot be made. Returns the elements done.
int64_t fused_plane(const int32_t* sums, int64_t n, double scale, double bias, const std::vector<avx2::ElementwiseStep>& steps,
                    float* y, const avx2::CodeTarget* target, uint8_t* codes, bool* made) {
  const int64_t rows = n / kFusedWidth;
  if (rows == 0) return 0;
  int32_t zero[kFusedWidth] = {};
  double scales[kFusedWidth], biases[kFusedWidth];
  std::fill_n(scales, kFusedWidth, scale);
  std::fill_n(biases, kFusedWidth, bias);
  avx2::CodeTarget to;
  if (target) to = *target, to.u = codes;
  int bad = 0;
  avx2::RequantizeRows r;
  r.sums = sums, r.sums_ld = kFusedWidth, r.offset = zero, r.scale = scales, r.bias = biases;
  r.steps = steps.data(), r.step_count = static_cast<int>(steps.size());
  r.y = y, r.y_ld = kFusedWidth, r.codes = target ? &to : nullptr, r.codes_ld = kFusedWidth, r.bad = &bad;
  r.rows = rows, r.n = kFusedWidth;
  if (avx2::requantize_run(r) != kFusedWidth) return 0;  // not expected: every path does whole vectors
  if (bad) *made = false;
  return rows * kFusedWidth;
}

// One run of the layer over (image, channel) planes of input bytes (N, C, positions); with `out`, the
// output's codes made from each plane into `out_planes` (N, filters, positions).
void depthwise_planes(const DepthwiseIntegerLayer& layer, const PaddedPlane& pp, int64_t batch, int64_t channels,
                      const uint8_t* in, float* y, const exec::Epilogue* epilogue, OutputCodes* out,
                      uint8_t* out_planes) {
  const bool simd = vector_path();
  const int64_t row_count = static_cast<int64_t>(pp.out_row.size());
  const int64_t multiplier = layer.filters / channels, pair_count = layer.pair_count(), out_size = row_count * pp.out_w;
  const bool floats = !out || out->floats;
  // With a stepped epilogue on the vector path, each plane's rounding, epilogue and codes run in one pass
  // (avx2::requantize_run): the plane as rows of kFusedWidth columns that share the filter's scaling.
  std::vector<avx2::ElementwiseStep> steps;
  const bool fused = simd && isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2 && epilogue_steps(epilogue, &steps) &&
                     !steps.empty();
  std::optional<avx2::CodeTarget> target;
  if (out) target = code_target(out->form, nullptr);
  exec::parallel_for(batch * channels, multiplier * layer.taps * out_size, [&](int64_t u0, int64_t u1) {
    std::vector<uint8_t> plane(static_cast<size_t>(pp.bytes), layer.x.zero_byte());  // the padding stays the byte of 0
    const auto sums = scratch<int32_t>(out_size + kLanes);
    const auto unwritten = scratch<float>(floats ? 0 : out_size);  // a plane's floats when y is not written
    bool made = true;
    for (int64_t u = u0; u < u1; ++u) {  // u = (image, channel)
      const uint8_t* src = in + u * pp.in_size;
      for (size_t row = 0; row < pp.in_row.size(); ++row, src += pp.in_w) {
        uint8_t* dst = plane.data() + pp.in_row[row];
        if (pp.stride_w == 1) {
          std::memcpy(dst + pp.pad_w, src, static_cast<size_t>(pp.in_w));
        } else {
          for (int64_t q = 0; q < pp.stride_w; ++q) {  // padded column q + i * stride_w: input column that - pad_w
            uint8_t* phase = dst + q * pp.phase_w;
            int64_t i = q >= pp.pad_w ? 0 : (pp.pad_w - q + pp.stride_w - 1) / pp.stride_w;
            for (int64_t iw = q + i * pp.stride_w - pp.pad_w; iw < pp.in_w; iw += pp.stride_w, ++i) phase[i] = src[iw];
          }
        }
      }
      for (int64_t j = 0; j < multiplier; ++j) {
        const int64_t f = (u % channels) * multiplier + j;
        const size_t fi = static_cast<size_t>(f);
        plane_sums(simd, plane.data(), pp.out_row.data(), row_count, pp.tap.data(), pair_count,
                   layer.pairs.data() + f * pair_count, layer.offset[fi], pp.out_w, sums.get());
        const int64_t image = u / channels;
        float* plane_out = floats ? y + (image * layer.filters + f) * out_size : unwritten.get();
        uint8_t* plane_codes = out ? out_planes + (image * layer.filters + f) * out_size : nullptr;
        const double scale = layer.rounding.scale[fi], bias = layer.rounding.bias[fi];
        const int64_t done =
            fused ? fused_plane(sums.get(), out_size, scale, bias, steps, plane_out, target ? &*target : nullptr, plane_codes, &made)
                  : 0;
        scale_filter(simd, sums.get() + done, out_size - done, scale, bias, plane_out + done);
        if (epilogue) epilogue->apply(plane_out + done, out_size - done);
        if (!out) continue;
        made = activation_bytes_serial(plane_out + done, out_size - done, out->form, plane_codes + done) && made;
      }
    }
    if (!made) out->made.store(false, std::memory_order_relaxed);
  });
}

}  // namespace

// Per output position, each tap's input position (-1 in the padding), taps rounded up to pairs (the odd last
// tap repeats, weighing 0): (out_size, 2 * pair_count).
std::vector<int32_t> tap_positions(const WindowGeometry& g, int64_t pair_count, int64_t out_size) {
  const size_t nd = g.rank();
  const int64_t stride = 2 * pair_count;
  std::vector<int32_t> at(static_cast<size_t>(out_size * stride));
  std::vector<int64_t> o(nd, 0), k(nd, 0);
  for (int64_t p = 0; p < out_size; ++p) {
    int32_t* row = at.data() + p * stride;
    std::fill(k.begin(), k.end(), 0);
    int64_t t = 0;
    do {
      int64_t in = 0;
      for (size_t d = 0; d < nd && in >= 0; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
        in = i < 0 || i >= g.in[d] ? -1 : in * g.in[d] + i;
      }
      row[t++] = static_cast<int32_t>(in);
    } while (next_index(k, g.kernel, nd));
    for (; t < stride; ++t) row[t] = row[t - 1];
    next_index(o, g.out, nd);
  }
  return at;
}

#if QONNX_ISA_X86
// One output position's sums for channels [from, channels - (channels - from) % 8): per pair of taps (their rows
// of channel bytes at tap[2p], tap[2p + 1]), the two taps' bytes as the low and high int16 of each channel's
// int32 lane, times the pair's weights (vpmaddwd: exact). Returns the end of those channels.
__attribute__((target("avx2"))) int64_t position_sums_avx2(const uint8_t* const* tap, int64_t pair_count,
                                                            const int32_t* pairs_by_channel, const int32_t* offset,
                                                            int64_t channels, int32_t* sums, int64_t from) {
  int64_t c = from;
  for (; c + 8 <= channels; c += 8) {
    __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(offset + c));
    const int32_t* w = pairs_by_channel + c;
    for (int64_t p = 0; p < pair_count; ++p, w += channels) {
      const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(tap[2 * p] + c)));
      const __m256i hi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(tap[2 * p + 1] + c)));
      const __m256i both = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(both, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c), acc);
  }
  return c;
}

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*, which -Wmaybe-uninitialized reports once inlined
// (GCC bug 105593, fixed in 13).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The same for channels [0, channels - channels % 16), 16 at a time: each pair's vpmaddwd and its addition
// in one vpdpwssd (AVX-512 VNNI; exact, as the int16 products and their int32 sums are).
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2"))) int64_t position_sums_avx512(
    const uint8_t* const* tap, int64_t pair_count, const int32_t* pairs_by_channel, const int32_t* offset, int64_t channels,
    int32_t* sums) {
  int64_t c = 0;
  for (; c + 16 <= channels; c += 16) {
    __m512i acc = _mm512_loadu_si512(offset + c);
    const int32_t* w = pairs_by_channel + c;
    for (int64_t p = 0; p < pair_count; ++p, w += channels) {
      const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tap[2 * p] + c)));
      const __m512i hi = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tap[2 * p + 1] + c)));
      acc = _mm512_dpwssd_epi32(acc, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)), _mm512_loadu_si512(w));
    }
    _mm512_storeu_si512(sums + c, acc);
  }
  return c;
}

namespace {

// The row-quad run's geometry: a 2-D depthwise layer on channels-last bytes (positions, channels).
struct QuadGeometry {
  int64_t in_h, in_w, out_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, channels;
  // Input columns one output row's segment of `outputs` positions reads.
  int64_t columns(int64_t outputs, int64_t kernel_w) const { return (outputs - 1) * stride_w + (kernel_w - 1) * dilation_w + 1; }
};

// The sums of output positions [pos0, pos0 + count) into rows of `channels` int32, 64 channels at a time
// with vpdpbusd (u8 x s8, four products per int32 lane: exact). Per input column of an output row segment,
// each group of four kernel rows' channel bytes is interleaved once into `columns` (four zmm: 16 channels'
// four bytes each) and read by every output whose window holds the column; the weights are the layer's
// quad_weights, the same four rows side by side. A vpermd before the byte interleave puts the channels
// back in order in the sums. A tap outside the image reads the zero point's byte, a missing fourth row
// anything (it weighs 0). `columns` holds g.columns(count, kernel_w) * row_quads * 256 bytes.
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2"))) void quad_block_sums_avx512(
    const DepthwiseIntegerLayer& layer, const QuadGeometry& g, const uint8_t* image, int64_t pos0, int64_t count,
    uint8_t* columns, int32_t* sums) {
  const int64_t C = g.channels, kh = layer.kernel_h, kw = layer.kernel_w, quads = layer.row_quads;
  const int64_t in_w = g.in_w, stride_w = g.stride_w, dilation_w = g.dilation_w;
  const __m512i zero_bytes = _mm512_set1_epi8(static_cast<char>(layer.x.zero_byte()));
  // Dword d = 4 * lane + slot takes source dword 4 * slot + lane (channels 16 * slot + 4 * lane + 0..3).
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const int64_t weight_step = layer.quad_channels * 4;  // bytes between (kx, q) weight sets
  const int64_t column_bytes = quads * 256, window_step = stride_w * column_bytes, tap_step = dilation_w * column_bytes;
  // Per kernel row of the segment's output row: its input row's bytes, null outside the image.
  const uint8_t* rows[kMaxQuadRows];
  for (int64_t p = pos0; p < pos0 + count;) {
    const int64_t oy = p / g.out_w, ox0 = p % g.out_w, ox1 = std::min(g.out_w, ox0 + (pos0 + count - p));
    const int64_t first_column = ox0 * stride_w - g.pad_left, column_count = g.columns(ox1 - ox0, kw);
    for (int64_t ky = 0; ky < quads * 4; ++ky) {
      const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
      rows[ky] = ky < kh && iy >= 0 && iy < g.in_h ? image + iy * in_w * C : nullptr;
    }
    int32_t* segment_sums = sums + (p - pos0) * C;
    for (int64_t c0 = 0; c0 < C; c0 += kQuadBlock) {
      const int64_t left = C - c0;
      const __mmask64 bytes_mask = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      uint8_t* col = columns;
      for (int64_t i = 0; i < column_count; ++i) {
        const int64_t ix = first_column + i;
        const bool column_inside = ix >= 0 && ix < in_w;
        for (int64_t q = 0; q < quads; ++q, col += 256) {
          __m512i r[4];
          for (int64_t k = 0; k < 4; ++k) {
            const uint8_t* row = rows[4 * q + k];
            r[k] = 4 * q + k >= kh ? _mm512_setzero_si512()
                   : !column_inside || !row
                       ? zero_bytes
                       : _mm512_permutexvar_epi32(order, _mm512_maskz_loadu_epi8(bytes_mask, row + ix * C + c0));
          }
          const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
          const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
          _mm512_storeu_si512(col, _mm512_unpacklo_epi16(lo01, lo23));
          _mm512_storeu_si512(col + 64, _mm512_unpackhi_epi16(lo01, lo23));
          _mm512_storeu_si512(col + 128, _mm512_unpacklo_epi16(hi01, hi23));
          _mm512_storeu_si512(col + 192, _mm512_unpackhi_epi16(hi01, hi23));
        }
      }
      const int8_t* weights = layer.quad_weights.data() + c0 * 4;
      const auto mask16 = [&](int64_t j) {
        return static_cast<__mmask16>((1u << std::clamp<int64_t>(left - 16 * j, 0, 16)) - 1);
      };
      const __mmask16 m0 = mask16(0), m1 = mask16(1), m2 = mask16(2), m3 = mask16(3);
      const int32_t* offset = layer.offset.data() + c0;
      const __m512i o0 = _mm512_maskz_loadu_epi32(m0, offset), o1 = _mm512_maskz_loadu_epi32(m1, offset + 16);
      const __m512i o2 = _mm512_maskz_loadu_epi32(m2, offset + 32), o3 = _mm512_maskz_loadu_epi32(m3, offset + 48);
      const uint8_t* window = columns;
      int32_t* out = segment_sums + c0;
      for (int64_t ox = ox0; ox < ox1; ++ox, window += window_step, out += C) {
        __m512i a0 = o0, a1 = o1, a2 = o2, a3 = o3;
        const uint8_t* tap = window;
        const int8_t* w = weights;
        for (int64_t kx = 0; kx < kw; ++kx, tap += tap_step) {
          const uint8_t* t = tap;
          for (int64_t q = 0; q < quads; ++q, t += 256, w += weight_step) {
            a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512(t), _mm512_loadu_si512(w));
            a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512(t + 64), _mm512_loadu_si512(w + 64));
            a2 = _mm512_dpbusd_epi32(a2, _mm512_loadu_si512(t + 128), _mm512_loadu_si512(w + 128));
            a3 = _mm512_dpbusd_epi32(a3, _mm512_loadu_si512(t + 192), _mm512_loadu_si512(w + 192));
          }
        }
        _mm512_mask_storeu_epi32(out, m0, a0);
        _mm512_mask_storeu_epi32(out + 16, m1, a1);
        _mm512_mask_storeu_epi32(out + 32, m2, a2);
        _mm512_mask_storeu_epi32(out + 48, m3, a3);
      }
    }
    p += ox1 - ox0;
  }
}

}  // namespace
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// The channels-last run (multiplier 1): nhwc (N, positions, C) bytes; blocks of output positions summed
// with the channels as lanes, then rounded, run through the epilogue and made codes as Conv's rows are.
void depthwise_nhwc(const DepthwiseIntegerLayer& layer, const WindowGeometry& g, int64_t batch, int64_t channels,
                    int64_t in_size, int64_t out_size, const uint8_t* nhwc, float* y, const exec::Epilogue* epilogue,
                    OutputCodes* out) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (out_size + kBlock - 1) / kBlock;
  const int64_t pair_count = layer.pair_count();
  const bool simd = vector_path();
  int64_t quad_columns = 0;  // > 0: the row-quad run, with that many input columns per segment at most
#if QONNX_ISA_X86
  const bool wide = isa::current(isa::Family::kInt8) == isa::Isa::kAvx512;
  // A 2-D kernel of two rows or more on AVX-512 VNNI: the row-quad run, unless an output row segment would
  // read more input columns than fit its scratch comfortably (a very large stride or dilation).
  QuadGeometry quad{};
  if (wide && !layer.quad_weights.empty() && g.rank() == 2 && layer.kernel_h <= kMaxQuadRows) {
    quad = {g.in[0], g.in[1], g.out[1], g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.pads_begin[0],
            g.pads_begin[1], channels};
    quad_columns = quad.columns(std::min(kBlock, g.out[1]), layer.kernel_w);
    if (quad_columns * layer.row_quads * 256 > (int64_t{1} << 18)) quad_columns = 0;
  }
#endif
  // The position by position run: per output position its taps' input positions, and per pair the channels'
  // weight pairs side by side (layer.pairs is filter-major).
  const bool by_position = quad_columns == 0;
  const std::vector<int32_t> at = by_position ? tap_positions(g, pair_count, out_size) : std::vector<int32_t>{};
  std::vector<int32_t> pairs_by_channel(static_cast<size_t>(by_position ? pair_count * channels : 0));
  for (int64_t c = 0; by_position && c < channels; ++c)
    for (int64_t p = 0; p < pair_count; ++p)
      pairs_by_channel[static_cast<size_t>(p * channels + c)] = layer.pairs[static_cast<size_t>(c * pair_count + p)];
  const std::vector<uint8_t> zeros(static_cast<size_t>(by_position ? channels + 8 : 0), layer.x.zero_byte());  // a tap in the padding
  std::vector<avx2::ElementwiseStep> steps;
  const bool stepped = epilogue_steps(epilogue, &steps);
  const bool floats = !out || out->floats;
  exec::parallel_for(batch * blocks, kBlock * channels * layer.taps, [&](int64_t u0, int64_t u1) {
    const auto sums = scratch<int32_t>(kBlock * channels);
    const auto scaled = scratch<float>(kBlock * channels);
    std::vector<const uint8_t*> tap(static_cast<size_t>(by_position ? 2 * pair_count : 0));
    const auto columns = scratch<uint8_t>(quad_columns * layer.row_quads * 256);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / blocks, pos0 = u % blocks * kBlock, count = std::min(kBlock, out_size - pos0);
      const uint8_t* image = nhwc + n * in_size * channels;
#if QONNX_ISA_X86
      if (!by_position) quad_block_sums_avx512(layer, quad, image, pos0, count, columns.get(), sums.get());
#endif
      for (int64_t j = 0; by_position && j < count; ++j) {
        const int32_t* taps_at = at.data() + (pos0 + j) * 2 * pair_count;
        for (size_t t = 0; t < tap.size(); ++t) tap[t] = taps_at[t] < 0 ? zeros.data() : image + int64_t{taps_at[t]} * channels;
        int32_t* row = sums.get() + j * channels;
        int64_t c = 0;
#if QONNX_ISA_X86
        if (wide) c = position_sums_avx512(tap.data(), pair_count, pairs_by_channel.data(), layer.offset.data(), channels, row);
        if (simd) c = position_sums_avx2(tap.data(), pair_count, pairs_by_channel.data(), layer.offset.data(), channels, row, c);
#endif
        for (; c < channels; ++c) {
          int32_t s = layer.offset[static_cast<size_t>(c)];
          for (int64_t t = 0; t < layer.taps; ++t) {
            const int32_t pair = layer.pairs[static_cast<size_t>(c * pair_count + t / 2)];
            const int32_t w = t % 2 == 0 ? static_cast<int16_t>(pair & 0xffff) : static_cast<int16_t>(pair >> 16);
            s += tap[static_cast<size_t>(t)][c] * w;
          }
          row[c] = s;
        }
      }
      uint8_t* bytes = out ? out->bytes + (n * out_size + pos0) * channels : nullptr;
      if (!layer.rounding.outputs_through(sums.get(), count, channels, 0, epilogue, stepped ? &steps : nullptr, scaled.get(),
                                          channels, out ? &out->form : nullptr, bytes, channels, floats))
        out->made.store(false, std::memory_order_relaxed);
      if (floats)
        rows_to_planes(scaled.get(), count, channels, y + n * channels * out_size + pos0, out_size, batch * channels * out_size * 4);
    }
  });
}

bool depthwise_integer_nchw(const DepthwiseIntegerLayer& layer, const WindowGeometry& g, int64_t batch,
                            int64_t channels, const float* x, float* y, const exec::Epilogue* epilogue,
                            const uint8_t* input_codes, OutputCodes* out) {
  int64_t in_size = 1, out_size = 1;
  for (size_t d = 0; d < g.rank(); ++d) in_size *= g.in[d], out_size *= g.out[d];
  // tap_positions holds input positions as int32.
  if (layer.filters == channels && (input_codes || out) && in_size < (int64_t{1} << 31)) {
    Scratch<uint8_t> made_here = scratch<uint8_t>(0);
    const uint8_t* nhwc = channels_last_bytes(input_codes, x, batch, channels, in_size, layer.x, made_here);
    if (!nhwc) return false;
    depthwise_nhwc(layer, g, batch, channels, in_size, out_size, nhwc, y, epilogue, out);
    // Codes that could not be made (a NaN): the floats, which were left unwritten.
    if (out && !out->made.load(std::memory_order_relaxed) && !out->floats)
      depthwise_nhwc(layer, g, batch, channels, in_size, out_size, nhwc, y, epilogue, nullptr);
    return true;
  }
  const PaddedPlane pp = padded_plane(g, layer.taps);
  const int64_t elements = batch * channels * pp.in_size;
  // The planes are channels-first: codes go through the byte transpose (a plane gathered from channels-last
  // data would read one byte per cache line).
  const auto bytes = scratch<uint8_t>(elements);
  if (input_codes)
    transpose_inner(input_codes, bytes.get(), batch, pp.in_size, channels, 1);
  else if (!activation_bytes(x, elements, layer.x, bytes.get()))
    return false;
  const auto out_planes = scratch<uint8_t>(out ? batch * layer.filters * out_size : 0);  // (N, filters, positions)
  depthwise_planes(layer, pp, batch, channels, bytes.get(), y, epilogue, out, out_planes.get());
  if (!out) return true;
  if (out->made.load(std::memory_order_relaxed))
    transpose_inner(out_planes.get(), out->bytes, batch, layer.filters, out_size, 1);
  else if (!out->floats)  // codes that could not be made (a NaN): the floats, which were left unwritten
    depthwise_planes(layer, pp, batch, channels, bytes.get(), y, epilogue, nullptr, nullptr);
  return true;
}

}  // namespace qonnx::kernels
