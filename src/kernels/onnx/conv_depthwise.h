// One output position of a depthwise convolution on channels-last data, with fused multiply-adds in
// tap order: y[c] = fma(w[t][c], taps[t][c], ...) for t = 0 .. count-1 starting from 0 - the same
// sum conv_kernel forms for that output (its im2col row order, one rounding per term).
#pragma once

#include <cstdint>

namespace qonnx::kernels {

// taps[t]: the input's C values at tap t (a row of zeros in the padding); w: (count, C).
void depthwise_position_f32(const float* const* taps, int64_t count, const float* w, int64_t channels, float* y);

}  // namespace qonnx::kernels
