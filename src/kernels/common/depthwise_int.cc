#include "kernels/common/depthwise_int.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/exec/threads.h"

#if QONNX_ISA_X86
#include <immintrin.h>
#endif

namespace qonnx::kernels {
namespace {

constexpr int64_t kLanes = 16;  // outputs (or channels) per step of the vector path; rows are padded to it

int32_t low_weight(int32_t pair) { return static_cast<int16_t>(static_cast<uint32_t>(pair) & 0xffffu); }
int32_t high_weight(int32_t pair) { return static_cast<int16_t>(static_cast<uint32_t>(pair) >> 16); }

// One filter over a padded plane, n outputs per output row r: sums[r * n + i] = start + the sum over
// pairs p of plane[rows[r] + at[2p] + i] * low + plane[rows[r] + at[2p + 1] + i] * high.
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

// One position, all channels: sums[c] = sum over pairs p of taps[2p][c] * low + taps[2p + 1][c] * high of
// pairs[p * channels + c], for c in [c0, channels).
void position_sums_portable(const uint8_t* const* taps, int64_t pair_count, const int32_t* pairs, int64_t c0,
                            int64_t channels, int32_t* sums) {
  for (int64_t c = c0; c < channels; ++c) {
    int32_t s = 0;
    for (int64_t p = 0; p < pair_count; ++p) {
      const int32_t w = pairs[p * channels + c];
      s += taps[2 * p][c] * low_weight(w) + taps[2 * p + 1][c] * high_weight(w);
    }
    sums[c] = s;
  }
}

// One filter's outputs: y[i] = scale_sum(sums[i], scale, bias) for i in [i0, n).
void scale_filter_portable(const int32_t* sums, int64_t i0, int64_t n, double scale, double bias, float* y) {
  for (int64_t i = i0; i < n; ++i) y[i] = scale_sum(sums[i], scale, bias);
}

#if QONNX_ISA_X86
// Two taps' bytes at 16 outputs, interleaved (tap a, tap b) into 16-bit lanes: vpmaddwd against (low, high)
// weight pairs gives a * low + b * high in each int32 lane, exactly.
__attribute__((target("avx2"))) inline void pair_products(const uint8_t* a, const uint8_t* b, __m256i w_lo,
                                                          __m256i w_hi, __m256i* acc_lo, __m256i* acc_hi) {
  const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(va, vb)), hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(va, vb));
  *acc_lo = _mm256_add_epi32(*acc_lo, _mm256_madd_epi16(lo, w_lo));
  *acc_hi = _mm256_add_epi32(*acc_hi, _mm256_madd_epi16(hi, w_hi));
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
        const __m256i w = _mm256_set1_epi32(pairs[p]);
        pair_products(x + at[2 * p] + i, x + at[2 * p + 1] + i, w, w, &acc_lo, &acc_hi);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + r * n + i), acc_lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + r * n + i + 8), acc_hi);
    }
  }
}

// Whole blocks of 16 channels; the rest (no read past a tap's C bytes) on the portable loop.
__attribute__((target("avx2"))) void position_sums_avx2(const uint8_t* const* taps, int64_t pair_count,
                                                        const int32_t* pairs, int64_t channels, int32_t* sums) {
  int64_t c = 0;
  for (; c + kLanes <= channels; c += kLanes) {
    __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
    for (int64_t p = 0; p < pair_count; ++p) {
      const int32_t* w = pairs + p * channels + c;
      pair_products(taps[2 * p] + c, taps[2 * p + 1] + c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)),
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 8)), &acc_lo, &acc_hi);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c), acc_lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c + 8), acc_hi);
  }
  position_sums_portable(taps, pair_count, pairs, c, channels, sums);
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

void position_sums(bool simd, const uint8_t* const* taps, int64_t pair_count, const int32_t* pairs, int64_t channels,
                   int32_t* sums) {
#if QONNX_ISA_X86
  if (simd) return position_sums_avx2(taps, pair_count, pairs, channels, sums);
#endif
  position_sums_portable(taps, pair_count, pairs, 0, channels, sums);
}

void scale_filter(bool simd, const int32_t* sums, int64_t n, double scale, double bias, float* y) {
#if QONNX_ISA_X86
  if (simd) return scale_filter_avx2(sums, n, scale, bias, y);
#endif
  scale_filter_portable(sums, 0, n, scale, bias, y);
}

// One position's outputs, channel c's exact sum sums[c] + offset[c]: the integer path's rounding for runs
// of channels (IntegerLayer::outputs' AVX2 loop), the same bits.
void scale_channels(const DepthwiseIntegerLayer& layer, const int32_t* sums, float* y) {
  const int64_t done = isa::current(isa::Family::kQuant) == isa::Isa::kAvx2
                           ? avx2::scale_sums_run(sums, layer.offset.data(), layer.scale.data(), layer.bias.data(), y,
                                                  layer.filters)
                           : 0;
  for (int64_t c = done; c < layer.filters; ++c) {
    const size_t i = static_cast<size_t>(c);
    y[c] = scale_sum(int64_t{sums[c]} + layer.offset[i], layer.scale[i], layer.bias[i]);
  }
}

// The window in rows: a row is the last spatial dim, the other dims flattened. Output row oo and kernel
// row ko (all kernel dims but the last) read input row row_of[ko * out_rows + oo], or -1 in the padding.
struct RowPlan {
  int64_t in_w = 1, out_w = 1, in_rows = 1, out_rows = 1, kernel_w = 1, kernel_rows = 1;
  int64_t stride_w = 1, dilation_w = 1, pad_w = 0;
  std::vector<int64_t> row_of;
};

RowPlan row_plan(const WindowGeometry& g) {
  const size_t nd = g.rank(), last = nd - 1;
  RowPlan r;
  r.in_w = g.in[last], r.out_w = g.out[last], r.kernel_w = g.kernel[last];
  r.stride_w = g.strides[last], r.dilation_w = g.dilations[last], r.pad_w = g.pads_begin[last];
  for (size_t d = 0; d < last; ++d) {
    r.in_rows *= g.in[d];
    r.out_rows *= g.out[d];
    r.kernel_rows *= g.kernel[d];
  }
  r.row_of.resize(static_cast<size_t>(r.kernel_rows * r.out_rows));
  std::vector<int64_t> k(nd, 0), o(nd, 0);
  for (int64_t ko = 0; ko < r.kernel_rows; ++ko) {
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oo = 0; oo < r.out_rows; ++oo) {
      int64_t row = 0;
      for (size_t d = 0; d < last && row >= 0; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
        row = (i < 0 || i >= g.in[d]) ? -1 : row * g.in[d] + i;
      }
      r.row_of[static_cast<size_t>(ko * r.out_rows + oo)] = row;
      next_index(o, g.out, last);
    }
    next_index(k, g.kernel, last);
  }
  return r;
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

// taps[2p], taps[2p + 1] for the pairs: an odd last tap is paired with itself (its partner weighs 0).
void pair_up(std::vector<const uint8_t*>* taps, int64_t count) {
  if (count % 2 == 1) (*taps)[static_cast<size_t>(count)] = (*taps)[static_cast<size_t>(count - 1)];
}

}  // namespace

std::optional<DepthwiseIntegerLayer> make_depthwise_integer_layer(const ByteActivation& x,
                                                                  const std::vector<int8_t>& values, int64_t filters,
                                                                  int64_t taps, bool channels_last,
                                                                  const std::vector<float>& weight_scales,
                                                                  const Tensor* bias, std::string* why) {
  DepthwiseIntegerLayer layer;
  layer.x = x, layer.filters = filters, layer.taps = taps, layer.channels_last = channels_last;
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
      layer.pairs[static_cast<size_t>(channels_last ? p * filters + f : f * pair_count + p)] =
          static_cast<int32_t>(low | high << 16);
    }
    const float ws = weight_scales[weight_scales.size() == 1 ? 0 : static_cast<size_t>(f)];
    layer.scale.push_back(static_cast<double>(x.scale) * static_cast<double>(ws));
    layer.offset.push_back(static_cast<int32_t>(x.lo * sum));
    layer.bias.push_back(bias ? static_cast<double>(bias->data<float>()[f]) : 0.0);
  }
  return layer;
}

std::string depthwise_integer_note(const DepthwiseIntegerLayer& layer) {
  return fmt::format("integer: depthwise, activations in [{}, {}] x weights in [{}, {}], {} (int32 sums, one rounding)",
                     layer.x.lo, layer.x.hi, -layer.max_abs_weight, layer.max_abs_weight,
                     vector_path() ? "avx2-madd16 taps in pairs" : "portable");
}

bool depthwise_integer_nchw(const DepthwiseIntegerLayer& layer, const WindowGeometry& g, int64_t batch,
                            int64_t channels, const float* x, float* y) {
  const PaddedPlane pp = padded_plane(g, layer.taps);
  const int64_t elements = batch * channels * pp.in_size, row_count = static_cast<int64_t>(pp.out_row.size());
  const auto bytes = scratch<uint8_t>(elements);
  if (!activation_bytes(x, elements, layer.x, bytes.get())) return false;
  const bool simd = vector_path();
  const int64_t multiplier = layer.filters / channels, pair_count = layer.pair_count(), out_size = row_count * pp.out_w;
  exec::parallel_for(batch * channels, multiplier * layer.taps * out_size, [&](int64_t u0, int64_t u1) {
    std::vector<uint8_t> plane(static_cast<size_t>(pp.bytes), layer.x.zero_byte());  // the padding stays the byte of 0
    const auto sums = scratch<int32_t>(out_size + kLanes);
    for (int64_t u = u0; u < u1; ++u) {  // u = (image, channel)
      const uint8_t* src = bytes.get() + u * pp.in_size;
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
        scale_filter(simd, sums.get(), out_size, layer.scale[fi], layer.bias[fi],
                     y + ((u / channels) * layer.filters + f) * out_size);
      }
    }
  });
  return true;
}

bool depthwise_integer_nhwc(const DepthwiseIntegerLayer& layer, const WindowGeometry& g, int64_t batch,
                            int64_t channels, const float* x, float* y) {
  const RowPlan r = row_plan(g);
  const int64_t in_size = r.in_rows * r.in_w, out_size = r.out_rows * r.out_w, elements = batch * in_size * channels;
  const auto bytes = scratch<uint8_t>(elements);
  if (!activation_bytes(x, elements, layer.x, bytes.get())) return false;
  const bool simd = vector_path();
  const std::vector<uint8_t> zero_row(static_cast<size_t>(channels), layer.x.zero_byte());
  const int64_t pair_count = layer.pair_count();
  exec::parallel_for(batch * r.out_rows, r.out_w * layer.taps * channels, [&](int64_t u0, int64_t u1) {
    std::vector<const uint8_t*> taps(static_cast<size_t>(2 * pair_count));
    const auto sums = scratch<int32_t>(channels);
    for (int64_t u = u0; u < u1; ++u) {  // u = (image, output row)
      const int64_t n = u / r.out_rows, oo = u % r.out_rows;
      const uint8_t* image = bytes.get() + n * in_size * channels;
      for (int64_t ow = 0; ow < r.out_w; ++ow) {
        for (int64_t ko = 0, t = 0; ko < r.kernel_rows; ++ko) {
          const int64_t row = r.row_of[static_cast<size_t>(ko * r.out_rows + oo)];
          for (int64_t kw = 0; kw < r.kernel_w; ++kw, ++t) {
            const int64_t iw = ow * r.stride_w - r.pad_w + kw * r.dilation_w;
            const bool inside = row >= 0 && iw >= 0 && iw < r.in_w;
            taps[static_cast<size_t>(t)] = inside ? image + (row * r.in_w + iw) * channels : zero_row.data();
          }
        }
        pair_up(&taps, layer.taps);
        position_sums(simd, taps.data(), pair_count, layer.pairs.data(), channels, sums.get());
        scale_channels(layer, sums.get(), y + (n * out_size + oo * r.out_w + ow) * channels);
      }
    }
  });
  return true;
}

}  // namespace qonnx::kernels
