// The integer path of depthwise convolution (one input channel per group, any channel multiplier, any
// spatial rank, strides, dilations and pads; docs/arithmetic.md): byte activations times int8 weights
// summed exactly in int32 per output, then the integer path's one rounding. A GEMM of one column per
// group would waste the int8 GEMM's tiles, so the vector lanes run along an output row instead: vpmaddwd
// on 16-bit lanes takes two taps of 8 outputs at once (255 * 128 * 2 fits int32 easily), and the
// portable twin forms the same int32 sums, hence the same bits. Channels-first only: on channels-last
// data the float depthwise kernel (channels as lanes, no byte conversion or scaling pass) measured faster.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/conv_util.h"
#include "kernels/common/integer_form.h"
#include "qonnx/tensor.h"

namespace qonnx::kernels {

// Plan-time state: per filter f (output channel f, reading input channel f / multiplier) its taps'
// integers as int16 pairs, and the scaling of its exact sums.
struct DepthwiseIntegerLayer {
  ByteActivation x;
  int64_t filters = 0, taps = 0;
  // pairs[f * pair_count() + p]: taps 2p and 2p + 1 of filter f as one int32 (low, high int16; a missing
  // last tap weighs 0).
  std::vector<int32_t> pairs;
  // Per filter: x.lo * (sum of its weights), undoing the byte shift (inside int32: |x.lo| <= the max byte
  // and make_depthwise_integer_layer's bound).
  std::vector<int32_t> offset;
  int64_t max_abs_weight = 0;
  // A 2-D kernel's weights for the AVX-512 VNNI run (empty otherwise): kernel rows in groups of four
  // (`row_quads` groups, a missing row weighing 0), per (kernel column kx, group q) and channel c the four
  // rows' int8 weights side by side at ((kx * row_quads + q) * quad_channels + c) * 4, channels padded to
  // whole zmm blocks of 64 with weights 0.
  std::vector<int8_t> quad_weights;
  int64_t kernel_h = 0, kernel_w = 0, row_quads = 0, quad_channels = 0;
  // The rounding of the sums (which hold the offset already): per filter scale = double(x scale) *
  // double(weight scale) and bias (0 without a bias), offsets 0; for rows of channels, outputs_through.
  IntegerLayer rounding;
  int64_t pair_count() const { return (taps + 1) / 2; }
};

// The layer of `filters` filters over a kernel of dims `kernel` (taps = their product; `values` holds each
// filter's taps in row-major kernel order, filter-major), the weight scale per filter (`weight_scales`, or
// one value) and an optional constant bias per filter. nullopt with `why` set when an int32 sum could
// overflow.
std::optional<DepthwiseIntegerLayer> make_depthwise_integer_layer(const ByteActivation& x,
                                                                  const std::vector<int8_t>& values, int64_t filters,
                                                                  const Dims& kernel, const std::vector<float>& weight_scales,
                                                                  const Tensor* bias, std::string* why);

// A one-line description for PrepackContext::path_note.
std::string depthwise_integer_note(const DepthwiseIntegerLayer& layer);

// y (batch, filters, out...) = the depthwise convolution of x (batch, channels, in...) with geometry g,
// filters = channels * multiplier. false (y unspecified) when x holds a value its form does not describe
// (a NaN): the caller takes the float path. `epilogue` (may be null) is applied to each output plane.
// Byte codes (exec::KernelContext::input_codes): with `input_codes` (channels-last) x's floats are not read;
// with `out`, the output's codes under out->form are made into out->bytes, (N, positions, filters), and
// without out->floats y is left unwritten when they could all be made (out->made). With codes in or out and a
// channel multiplier of 1 the run is channels-last (channels as lanes, no byte transposes), else plane by
// plane; the sums are the same integers either way.
bool depthwise_integer_nchw(const DepthwiseIntegerLayer& layer, const WindowGeometry& g, int64_t batch,
                            int64_t channels, const float* x, float* y, const exec::Epilogue* epilogue = nullptr,
                            const uint8_t* input_codes = nullptr, OutputCodes* out = nullptr);

}  // namespace qonnx::kernels
