// Vectorisable building blocks for the quantization kernels (Quant, BipolarQuant, Trunc,
// QuantizeLinear, DequantizeLinear). Private to the kernels.
//
// - Rounding: branch-free float32 versions of std::trunc/floor/ceil/round that return the same bits
//   as the libm functions for every input (NaN, +-inf, -0.0, subnormals, |t| >= 2^23 included), so
//   the mode formulas of rounding.h, written with them, give bit-identical results. They only use
//   float<->int32 conversions, compares and selects, which compilers vectorise on plain x86-64
//   (SSE2), whereas std::floor and friends are library calls there.
// - The rounding mode is a template parameter (dispatched once per kernel call, never per element).
// - for_each_run: numpy broadcasting walked as runs over the innermost (merged) dimension, with each
//   operand's stride along the run, so per-tensor and per-channel parameters are one scalar per run.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/threads.h"
#include "qonnx/quant/rounding.h"
#include "qonnx/tensor.h"

// Always inlined so that the loops using them stay free of calls (and vectorise). Note: with GCC 12
// these loops vectorise for the x86-64 baseline (SSE2) but not under -mavx2 / target_clones (the
// if-conversion gives up: "control flow in loop"). They are the portable path; quant_avx2.cc has the
// explicit AVX2 loops kernels/isa selects at run time.
#if defined(__GNUC__)
#define QONNX_FAST_INLINE inline __attribute__((always_inline))
#else
#define QONNX_FAST_INLINE inline
#endif

namespace qonnx::kernels::fast {

// std::trunc: |t| < 2^23 goes through int32 (exact), with the sign of t kept for zero results;
// anything else (already integral, inf, NaN) is returned as is.
QONNX_FAST_INLINE float trunc_f(float t) {
  const bool small = std::fabs(t) < 8388608.0f;
  const float r = std::copysign(static_cast<float>(static_cast<int32_t>(small ? t : 0.0f)), t);
  return small ? r : t;
}
QONNX_FAST_INLINE float floor_f(float t) {
  const float r = trunc_f(t);
  return r > t ? r - 1.0f : r;
}
QONNX_FAST_INLINE float ceil_f(float t) {
  const float r = trunc_f(t);
  return r < t ? r + 1.0f : r;
}
// std::round (ties away from zero). t - trunc(t) is exact for |t| < 2^23 and 0 beyond.
QONNX_FAST_INLINE float round_away_f(float t) {
  const float r = trunc_f(t);
  return std::fabs(t - r) >= 0.5f ? r + std::copysign(1.0f, t) : r;
}
// rounding.h's round_half_even, same formula.
QONNX_FAST_INLINE float round_half_even_f(float t) {
  const float r = round_away_f(t);
  const float even = 2.0f * round_away_f(t * 0.5f);
  return std::fabs(r - t) == 0.5f ? even : r;
}
QONNX_FAST_INLINE float sign_of_f(float t) { return t > 0.0f ? 1.0f : (t < 0.0f ? -1.0f : t); }

// rounding.h's apply_rounding with the mode fixed at compile time.
template <quant::RoundingMode M>
QONNX_FAST_INLINE float round_mode(float t) {
  if constexpr (M == quant::RoundingMode::kRound) return round_half_even_f(t);
  else if constexpr (M == quant::RoundingMode::kCeil) return ceil_f(t);
  else if constexpr (M == quant::RoundingMode::kFloor) return floor_f(t);
  else if constexpr (M == quant::RoundingMode::kUp) return sign_of_f(t) * ceil_f(std::fabs(t));
  else if constexpr (M == quant::RoundingMode::kDown) return trunc_f(t);
  else if constexpr (M == quant::RoundingMode::kHalfUp) return sign_of_f(t) * floor_f(std::fabs(t) + 0.5f);
  else return sign_of_f(t) * ceil_f(std::fabs(t) - 0.5f);
}

// Calls f(std::integral_constant<RoundingMode, mode>{}) once.
template <typename F>
decltype(auto) with_mode(quant::RoundingMode mode, F&& f) {
  switch (mode) {
    case quant::RoundingMode::kRound: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kRound>{});
    case quant::RoundingMode::kCeil: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kCeil>{});
    case quant::RoundingMode::kFloor: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kFloor>{});
    case quant::RoundingMode::kUp: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kUp>{});
    case quant::RoundingMode::kDown: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kDown>{});
    case quant::RoundingMode::kHalfUp: return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kHalfUp>{});
    case quant::RoundingMode::kHalfDown: break;
  }
  return f(std::integral_constant<quant::RoundingMode, quant::RoundingMode::kHalfDown>{});
}

// One contiguous stretch of the output: `len` elements from out_offset; operand k starts at
// offset[k] and advances by stride[k] (0 = broadcast along the run, 1 = contiguous, or other).
template <size_t N>
struct Run {
  int64_t out_offset;
  int64_t len;
  std::array<int64_t, N> offset;
  std::array<int64_t, N> stride;
};

// Walks the elements [begin, end) of `out` (numpy broadcast of the inputs' dims; end < 0: to the
// last) as runs over the innermost dimension after merging adjacent dimensions that are laid out alike
// in every operand (a per-tensor parameter makes the whole tensor one run; a (C,1,1,1) scale on
// (C,K,H,W) gives C runs of K*H*W). The first and last run may be partial.
template <size_t N, typename F>
void for_each_run(const Dims& out, const std::array<const Dims*, N>& ins, F&& f, int64_t begin = 0, int64_t end = -1) {
  const int64_t total = checked_numel(out);
  if (end < 0 || end > total) end = total;
  if (begin >= end) return;
  std::array<std::vector<int64_t>, N> st;
  for (size_t k = 0; k < N; ++k) st[k] = exec::broadcast_strides(*ins[k], out);
  // Merge dims (skipping size-1 ones), innermost last.
  Dims md;
  std::array<std::vector<int64_t>, N> ms;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !md.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = ms[k].back() == st[k][d] * out[d];
    if (merge) {
      md.back() *= out[d];
      for (size_t k = 0; k < N; ++k) ms[k].back() = st[k][d];
    } else {
      md.push_back(out[d]);
      for (size_t k = 0; k < N; ++k) ms[k].push_back(st[k][d]);
    }
  }
  Run<N> run{};
  if (md.empty()) {  // a single element
    run.len = 1;
    f(run);
    return;
  }
  const size_t rank = md.size();
  const int64_t run_len = md[rank - 1];
  for (size_t k = 0; k < N; ++k) run.stride[k] = ms[k][rank - 1];
  // The outer counter and operand offsets of the run holding `begin`.
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, N> base{};
  for (int64_t r = begin / run_len, d = static_cast<int64_t>(rank) - 2; d >= 0 && r > 0; --d) {
    counter[static_cast<size_t>(d)] = r % md[static_cast<size_t>(d)];
    r /= md[static_cast<size_t>(d)];
    for (size_t k = 0; k < N; ++k) base[k] += counter[static_cast<size_t>(d)] * ms[k][static_cast<size_t>(d)];
  }
  for (int64_t o = begin; o < end;) {
    const int64_t within = o % run_len;
    run.out_offset = o;
    run.len = std::min(run_len - within, end - o);
    for (size_t k = 0; k < N; ++k) run.offset[k] = base[k] + within * run.stride[k];
    f(run);
    o += run.len;
    for (size_t d = rank - 1; d-- > 0;) {
      ++counter[d];
      for (size_t k = 0; k < N; ++k) base[k] += ms[k][d];
      if (counter[d] < md[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= ms[k][d] * md[d];
      counter[d] = 0;
    }
  }
}

// for_each_run over the whole of `out`, split between threads by element ranges: make_share() is
// called once per share and returns the callback for that share's runs (so that each share has its
// own scratch buffers).
template <size_t N, typename MakeShare>
void parallel_for_each_run(const Dims& out, const std::array<const Dims*, N>& ins, MakeShare&& make_share) {
  exec::parallel_for(checked_numel(out), 1, [&](int64_t begin, int64_t end) {
    for_each_run<N>(out, ins, make_share(), begin, end);
  });
}

// A run operand's scratch buffer, reused across runs. A broadcast operand (stride 0: a per-tensor zero
// point next to a per-channel scale) keeps its copy for the next run that reads the same element, with
// the same bits, over as many elements: one fill instead of one per run.
struct RunBuffer {
  std::vector<float> data;
  const float* splat = nullptr;  // the element `data` repeats, or null
  uint32_t splat_bits = 0;
};

// Operand k of a run as a contiguous pointer: the data itself when its stride is 1, otherwise the
// run's elements gathered into `buf`.
inline const float* run_operand(const float* base, int64_t offset, int64_t stride, int64_t len, RunBuffer& buf) {
  if (stride == 1) return base + offset;
  const float* first = base + offset;
  uint32_t bits;
  std::memcpy(&bits, first, sizeof bits);
  if (stride == 0 && buf.splat == first && buf.splat_bits == bits && buf.data.size() == static_cast<size_t>(len))
    return buf.data.data();
  buf.data.resize(static_cast<size_t>(len));
  if (stride == 0) {
    std::fill(buf.data.begin(), buf.data.end(), *first);
    buf.splat = first;
    buf.splat_bits = bits;
  } else {
    for (int64_t i = 0; i < len; ++i) buf.data[static_cast<size_t>(i)] = base[offset + i * stride];
    buf.splat = nullptr;
  }
  return buf.data.data();
}

}  // namespace qonnx::kernels::fast
