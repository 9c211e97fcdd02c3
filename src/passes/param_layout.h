// How a quantizer parameter tensor (scale, zero point) lies over its input X, and value tests on such
// float32 parameters: shared by the passes that rewrite quantizers (lower-quant, quant-act-to-multithreshold).
#pragma once

#include <cstdint>

#include "qonnx/tensor.h"

namespace qonnx::passes {

// How a scale tensor varies over X: per tensor, along exactly one axis of X, or otherwise.
struct Layout {
  bool per_tensor = false;
  bool one_axis = false;
  int64_t axis = 0;  // axis of X
  int64_t channels = 1;
};
Layout layout_of(const Tensor& t, int64_t x_rank);
// The layout when X's rank may be unknown (< 0): then only a one-element tensor has one.
Layout layout_for_rank(const Tensor& t, int64_t x_rank);

bool all_integral(const Tensor& t);
bool all_zero(const Tensor& t);
// Every element of the float32 tensor t equals v.
bool all_equal_to(const Tensor& t, float v);
// Every value of the float32 tensor t lies in [lo, hi].
bool all_within(const Tensor& t, double lo, double hi);
// A 1-D (or scalar) float32 copy of a per-tensor / one-axis parameter.
Tensor flatten_param(const Tensor& t, const Layout& l, int64_t channels);

}  // namespace qonnx::passes
