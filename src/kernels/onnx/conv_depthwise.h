// The float depthwise convolution's inner loops, with fused multiply-adds in tap order starting from 0
// (one rounding per term): the same sum conv_kernel forms for each output (its im2col row order).
#pragma once

#include <cstdint>

namespace qonnx::kernels {

// One filter over one zero-padded channel plane (row stride padded_w), unit width stride: y[oh * out_w +
// ow] = fma(w[t], x_t, ...) over the taps t = (kh, kw) in order starting from 0, x_t = plane[(oh * stride_h
// + kh * dilation_h) * padded_w + ow + kw * dilation_w] - the sum conv_kernel forms for that output.
struct DepthwisePlane {
  const float* plane;
  int64_t padded_w, out_h, out_w, kernel_h, kernel_w, stride_h, dilation_h, dilation_w;
};
void depthwise_plane_f32(const DepthwisePlane& p, const float* w, float* y);

// One output position on channels-last data: y[c] = fma(w[t][c], taps[t][c], ...) for t = 0 .. count-1.
// taps[t]: the input's C values at tap t (a row of zeros in the padding); w: (count, C).
void depthwise_position_f32(const float* const* taps, int64_t count, const float* w, int64_t channels, float* y);

}  // namespace qonnx::kernels
