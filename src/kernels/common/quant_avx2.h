// AVX2 loops of the quantization kernels, called only when isa::current(isa::Family::kQuant) is kAvx2 or above. Each one writes a
// prefix of its run (a multiple of 8 elements) and returns its length; the caller finishes the run
// with its portable loop, so every element gets the same bits on either path. Parameters (s, z, ...)
// are one value when `vary` is false, one per element otherwise. Private to the kernels.
#pragma once

#include <cstdint>

#include "qonnx/quant/rounding.h"

namespace qonnx::kernels::avx2 {

// A per-tensor Quant (not bipolar) and its activation bytes in one pass: y = (q - z) * s as quant_run
// computes it, and u = q - lo, the bytes activation_bytes_run would make from y under the Quant's own form
// (scale s, integers q - z in [lo - z, hi - z]) when 2^-100 <= s <= 2^100 (the caller's check; see
// requantize_run's QuantChain); a NaN lane gets the byte of 0 and sets *bad. y null: the bytes only.
int64_t quant_bytes_run(quant::RoundingMode mode, const float* x, float s, float z, float lo, float hi, float* y,
                        uint8_t* u, int* bad, int64_t n);

// Quant: t = x/s + z; q = bipolar ? (t >= 0 ? 1 : -1) : mode(clamp(t, lo, hi)); y = codes ? q : (q - z) * s.
int64_t quant_run(quant::RoundingMode mode, bool bipolar, bool codes, const float* x, const float* s, const float* z,
                  bool vary, float lo, float hi, float* y, int64_t n);
// BipolarQuant: y = (x >= 0 ? 1 : -1) * s.
int64_t bipolar_quant_run(const float* x, const float* s, bool vary, float* y, int64_t n);
// Trunc v1: y = (mode(rne(x/s + z) / shift) - z) * s, with inv_shift = 1/shift (a power of two).
int64_t trunc_v1_run(quant::RoundingMode mode, const float* x, const float* s, const float* z, bool vary, float inv_shift,
                     float* y, int64_t n);
// Trunc v2: t = clamp(rne(x/s + z) / k, lo, hi); y = (mode(t) - z/k) * so.
int64_t trunc_v2_run(quant::RoundingMode mode, const float* x, const float* s, const float* z, const float* so,
                     const float* k, bool vary, float lo, float hi, float* y, int64_t n);

// QuantizeLinear: y = saturate(rne(x/s) + z), NaN -> 0, for T = int8, uint8, int16, uint16.
template <typename T>
int64_t quantize_linear_run(const float* x, const float* s, const float* z, bool vary, T* y, int64_t n);
// DequantizeLinear: y = float(x - z) * s, for T = int8, uint8, int16, uint16.
template <typename T>
int64_t dequantize_linear_run(const T* x, const float* s, const T* z, bool vary, float* y, int64_t n);

// MultiThreshold in float32 against thresholds rounded up to float32 (see multithreshold.cc):
// y = scale * count_t(v >= thr[t]) + bias with the same `steps` thresholds for every element.
int64_t threshold_run(const float* v, const float* thr, int64_t steps, float scale, float bias, float* y, int64_t n);
// Same where element i has channel (first_channel + i) % channels, first_channel a multiple of
// period = gcd(8, channels), so that every vector of 8 elements starts at such a channel c, whose
// thresholds are the block at blocks[(c / period) * threshold_block_floats(steps)] (32-byte aligned):
// with t the thresholds of lane l's channel (c + l) % channels sorted ascending (NaN last), h = steps / 2
// and half = threshold_split_half(steps), float [r * 8 + l] of the block is t[h] for r = 0,
// t[r - 1] for r = 1..half and t[h + r - half] for r = half + 1..2 * half (NaN past either part's end).
inline int64_t threshold_split_half(int64_t steps) { return steps / 2; }  // the upper part is never longer
inline int64_t threshold_block_floats(int64_t steps) { return (1 + 2 * threshold_split_half(steps)) * 8; }
int64_t threshold_run_by_channel(const float* v, const float* blocks, int64_t channels, int64_t period,
                                 int64_t first_channel, int64_t steps, float scale, float bias, float* y, int64_t n);

// The integer path's activation bytes (integer_form.h activation_bytes): u = rne(t) - lo with
// t = x * inverse, for the elements whose t lies in [lo - 1, hi + 1] (else t = 0 is rounded); `bad` gets a
// non-zero value unless every rounded v is in [lo, hi] with v * scale == x.
int64_t activation_bytes_run(const float* x, float inverse, float scale, float lo, float hi, uint8_t* u, int* bad,
                             int64_t n);
// The integer path's weight integers (integer_form.h int8_values): v = rne(x * inverse) for the
// elements with |x * inverse| < 256 (else 0 is rounded), one scale and inverse, or one per element when
// `vary`; `bad` gets a non-zero value unless every v is in [-128, 127] with v * scale == x.
int64_t int8_values_run(const float* x, const float* scale, const float* inverse, bool vary, int8_t* out, int* bad,
                        int64_t n);
// dst[j * dst_ld + p] = src[p * src_ld + j] for p, j < 8: one 8 x 8 block of floats transposed (the
// integer path's channels-first outputs). `stream`: with non-temporal stores, dst and dst_ld 32-byte aligned,
// store_fence() before another thread reads them.
void transpose_8x8(const float* src, int64_t src_ld, float* dst, int64_t dst_ld, bool stream = false);
// Orders this thread's non-temporal stores before its later stores (sfence).
void store_fence();
// The integer path's one rounding (IntegerLayer::output) for n consecutive channels: y[j] =
// float32(double(sums[j] + offset[j]) * scale[j] + bias[j]) (bias null: 0), the int32 addition exact
// (the caller's bound).
int64_t scale_sums_run(const int32_t* sums, const int32_t* offset, const double* scale, const double* bias, float* y,
                       int64_t n);

// An elementwise node fused after the integer path's rounding (exec::Epilogue), as its kernel's AVX2 loop
// computes it: Relu; Quant with one scale and zero point (`bipolar`: a 1-bit signed Quant's +-1 codes);
// BipolarQuant with one scale.
struct ElementwiseStep {
  enum class Kind { kRelu, kQuant, kBipolarQuant };
  Kind kind = Kind::kRelu;
  quant::RoundingMode mode = quant::RoundingMode::kRound;
  bool bipolar = false;
  float scale = 1.0f, zero_point = 0.0f, lo = 0.0f, hi = 0.0f;
};
// Whether activation bytes of the form (scale, integers in [lo, hi]) are Quant step q's own codes minus its
// lowest code, made from them with no check: q's form (scale s, integers q - z) with 2^-100 <= s <= 2^100. Then
// y = (q - z) * s is a normal float or 0 and y * (1 / s) lies within 3 * 2^-24 * |q - z| < 1/2 of q - z, so the
// check would round it back to q - z, find it in range and recompute y exactly; only a NaN fails it.
inline bool own_quant_codes(const ElementwiseStep& q, float scale, float lo, float hi) {
  return q.kind == ElementwiseStep::Kind::kQuant && !q.bipolar && scale == q.scale &&
         double{lo} == double{q.lo} - q.zero_point && double{hi} == double{q.hi} - q.zero_point && q.scale >= 0x1p-100f &&
         q.scale <= 0x1p100f;
}

// Where requantize_run puts activation bytes, with activation_bytes_run's parameters.
struct CodeTarget {
  float inverse = 1.0f, scale = 1.0f, lo = 0.0f, hi = 0.0f;
  uint8_t* u = nullptr;
};
// The operands of requantize_run: `rows` rows of n channels (sums row i at sums + i * sums_ld, y at
// y + i * y_ld, codes at codes->u + i * codes_ld), the channels' offset, scale and bias (null: 0) shared by
// the rows.
struct RequantizeRows {
  const int32_t* sums = nullptr;
  int64_t sums_ld = 0;
  const int32_t* offset = nullptr;
  const double* scale = nullptr;
  const double* bias = nullptr;
  const ElementwiseStep* steps = nullptr;
  int step_count = 0;
  float* y = nullptr;
  int64_t y_ld = 0;
  const CodeTarget* codes = nullptr;  // null: no codes
  int64_t codes_ld = 0;
  int* bad = nullptr;  // made non-zero when a code cannot be made
  int64_t rows = 0, n = 0;
  // false: only the codes are wanted, and where the pass makes them straight from the chain's Quant (its own
  // form) it may leave y unwritten (y stays scratch the pass can use).
  bool floats = true;
};
// scale_sums_run's rounding, then the steps in order as quant_run, bipolar_quant_run and Relu compute them,
// into y, then with codes activation_bytes_run of y: 8 channels at a time in registers, the same operations
// in the same order as those loops run one after the other, so the same bits. Returns the channels done in
// every row: all of them, or a multiple of 8 when the last ones could not be done in registers.
int64_t requantize_run(const RequantizeRows& r);

}  // namespace qonnx::kernels::avx2
