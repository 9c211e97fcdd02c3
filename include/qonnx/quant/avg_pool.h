// QuantAvgPool2d (FINN dialect; qonnx/custom_op/general/quantavgpool2d.py), the integer average pool
// of Brevitas' TruncAvgPool2d. Its attributes and the arithmetic kernels, lowering and the
// AveragePool+Trunc conversion share:
//
//   acc_bits = bit_length((2^ibits - 1) * kernel^2)              (qonnx's get_accum_size)
//   shift    = max(0, acc_bits - obits)                           (qonnx's get_shifts)
//   y        = floor(rne(sum of the kernel x kernel window) / 2^shift), as float32
//
// No padding; windows start every `stride` elements; out = floor((in - kernel) / stride) + 1.
// `signed` only names the output datatype (INTobits / UINTobits); the arithmetic ignores it, as qonnx's.
//
// The window sum is taken in double, in row-major window order, then rounded half to even: on integer
// inputs it is the exact integer sum as long as partial sums stay within 2^53. qonnx's numpy execution
// instead averages in float32 (onnxruntime's AveragePool), multiplies by kernel^2 (float32) and rounds.
// On integer inputs whose partial sums stay within 2^24 that is the exact sum while |sum| < 2^22 (two
// roundings of 2^-24 each), and beyond that only by luck when kernel^2 is not a power of two: with
// onnxruntime 1.30 the first sums that come out off by one are 6553605 (k=5), 6422533 (k=7) and
// 9437189 (k=3); for k = 2, 4, 8 the scaling is exact and only the float32 sum (beyond 2^24) can
// differ. The hardware (FINN's Pool: AccumBits = acc_bits, Size = shift) sums exactly, so the exact sum
// is the op's meaning; rounding the sum (not each input) is qonnx's, and makes a Div by a scale in front
// (near-integer inputs) harmless. NaN and infinities propagate (qonnx's int conversion makes
// arbitrary integers of them).
#pragma once

#include <cstdint>

#include "qonnx/support/status.h"

namespace qonnx::ir {
class Node;
}  // namespace qonnx::ir

namespace qonnx::quant {

struct AvgPoolParams {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t ibits = 1;
  int64_t obits = 1;
  bool is_signed = false;
  bool channels_last = false;  // data_layout NHWC (else NCHW)
};

// Largest ibits/obits accepted (the accumulator width then fits 128-bit arithmetic).
inline constexpr int64_t kAvgPoolMaxBits = 64;
// Largest kernel accepted (kernel^2 fits comfortably in the accumulator arithmetic).
inline constexpr int64_t kAvgPoolMaxKernel = 1 << 15;

// The node's attributes with qonnx's defaults (kernel, stride, ibits, obits 1; signed 0; data_layout
// NCHW), validated: kernel in [1, 2^15], stride >= 1, ibits in [0, 64], obits in [1, 64], data_layout
// NCHW or NHWC. Errors are kInvalidModel naming the attribute.
Result<AvgPoolParams> read_avg_pool_params(const ir::Node& node);

// bit_length((2^ibits - 1) * kernel^2); ibits in [0, 64], kernel in [1, 2^15].
int64_t avg_pool_accumulator_bits(int64_t ibits, int64_t kernel);
// max(0, avg_pool_accumulator_bits(ibits, kernel) - obits).
int64_t avg_pool_shift(const AvgPoolParams& p);

// floor((in - kernel) / stride) + 1; -1 when in < kernel.
int64_t avg_pool_output_dim(int64_t in, int64_t kernel, int64_t stride);

}  // namespace qonnx::quant
