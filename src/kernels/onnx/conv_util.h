// Sliding-window geometry shared by Conv, ConvInteger, QLinearConv, ConvTranspose and the pooling
// ops, and the NCHW kernels other families reuse (the QONNX channels_last variants transpose to
// NCHW and run these; they also find them in the registry as ""::Conv, ::MaxPool,
// ::BatchNormalization). The kernels read the node's attributes only, never its domain, and take
// ctx.op_version() as a default-domain opset version (pass e.g. 13 when calling them directly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qonnx/exec/kernel.h"

namespace qonnx::kernels {

// Attribute values larger than this (strides, pads, dilations, kernel sizes) are rejected, which
// keeps every window computation far from int64 overflow.
constexpr int64_t kMaxWindowAttr = int64_t{1} << 24;

// Per spatial dim d: output position o reads input positions
// o * strides[d] - pads_begin[d] + j * dilations[d] for j in [0, kernel[d]).
struct WindowGeometry {
  Dims in, kernel, strides, dilations, pads_begin, pads_end, out;
  size_t rank() const { return in.size(); }
  int64_t extent(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

// Steps `index` to the next position in row-major order over its first `count` dims (each below
// limits[d]); false, with index all zeros again, after the last.
inline bool next_index(std::vector<int64_t>& index, const Dims& limits, size_t count) {
  for (size_t d = count; d-- > 0;) {
    if (++index[d] < limits[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Integer-list attribute `name` with one value per spatial dim (`count` values) in [lo, kMaxWindowAttr];
// `fallback` fills a missing attribute.
Result<Dims> window_attr(const exec::KernelContext& ctx, const std::string& name, size_t count, int64_t lo,
                         int64_t fallback);

// Reads strides, dilations, pads and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID) for input spatial
// dims `in` and window `kernel`, and computes the output dims (rounding down, or up with
// `ceil_mode`, where a window may not start in the end padding).
Result<WindowGeometry> window_geometry(const exec::KernelContext& ctx, const Dims& in, const Dims& kernel,
                                       bool ceil_mode);

// The registered NCHW kernels.
Status conv_kernel(exec::KernelContext& ctx);
Status max_pool_kernel(exec::KernelContext& ctx);
Status batch_normalization_kernel(exec::KernelContext& ctx);

// Conv on channels-last data, X (N, d..., C) and W (M, k..., C/group), without transposing X or Y:
// float, group 1 or depthwise with one filter per channel (false: not handled, the caller
// transposes). Every output has conv_kernel's bits.
Result<bool> conv_channels_last(exec::KernelContext& ctx);

}  // namespace qonnx::kernels
