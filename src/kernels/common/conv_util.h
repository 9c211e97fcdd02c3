// Sliding-window geometry shared by Conv, ConvInteger, QLinearConv, ConvTranspose and the pooling
// ops, and the NCHW kernels other families reuse (the QONNX channels_last variants transpose to
// NCHW and run these with their own plan-time state). Window attributes are read once per node at
// plan time (read_window_attrs); their counts depend on the input rank, so each run checks those.
#pragma once

#include <cstdint>
#include <initializer_list>
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

// An integer-list attribute as the node gives it (`given` false when absent).
struct WindowList {
  bool given = false;
  Dims values;
};

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// A window op's attributes, parsed once per node: kernel_shape (sizes in [1, kMaxWindowAttr]),
// strides and dilations (in [1, kMaxWindowAttr]), pads (in [0, kMaxWindowAttr]), auto_pad, ceil_mode.
struct WindowAttrs {
  WindowList kernel_shape, strides, dilations, pads;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

// Integer-list attribute `name` with values in [lo, kMaxWindowAttr] (error naming it otherwise).
Result<WindowList> read_window_list(const ir::Node& node, const std::string& name, int64_t lo);
// kernel_shape (unchecked when `kernel_from_weights`: Conv compares it with W's dims), strides,
// dilations, pads, auto_pad and ceil_mode of `node`.
Result<WindowAttrs> read_window_attrs(const ir::Node& node, bool kernel_from_weights);
// Error naming the first of `names` that `node` has: attributes its op has only from version `since`
// on (the node's is `version`).
Status reject_later_attrs(const ir::Node& node, int64_t version, std::initializer_list<const char*> names, int since);

// The list's values when given (there must be `count` of them), else `count` times `fallback`.
Result<Dims> window_values(const exec::KernelContext& ctx, const WindowList& list, const char* name, size_t count,
                           int64_t fallback);
// Applies strides, dilations, pads and auto_pad to input spatial dims `in` and window `kernel`, and
// computes the output dims (rounding down, or up with ceil_mode, where a window may not start in the
// end padding).
Result<WindowGeometry> window_geometry(const exec::KernelContext& ctx, const WindowAttrs& attrs, const Dims& in,
                                       const Dims& kernel);

// Conv, ConvInteger and QLinearConv: group (in [1, kMaxWindowAttr]) and the window.
struct ConvAttrs {
  int64_t group = 1;
  WindowAttrs window;
};
Result<ConvAttrs> prepare_conv(const ir::Node& node, int64_t version);

// MaxPool, AveragePool and LpPool: the window (kernel_shape required) and the op's own attributes.
struct PoolAttrs {
  WindowAttrs window;
  bool column_major_indices = false;  // MaxPool storage_order 1
  bool want_indices = false;          // MaxPool's Indices output is requested
  bool count_include_pad = false;     // AveragePool
  double power = 2;                   // LpPool p (a float before LpPool-2)
};
// MaxPool from version 10 on (every attribute).
Result<PoolAttrs> prepare_max_pool_10(const ir::Node& node, int64_t version);

// BatchNormalization: epsilon, momentum, training_mode (14 on) and whether spatial=0 (before 9)
// allows parameters per (channel, position).
struct BatchNormAttrs {
  float epsilon = 1e-5f, momentum = 0.9f;
  bool training = false;
  bool per_position_allowed = false;
};
// BatchNormalization-7/8 semantics (spatial honoured, no is_test), what channels_last runs.
Result<BatchNormAttrs> prepare_batch_norm_7(const ir::Node& node, int64_t version);

// The registered NCHW kernels.
Status conv_kernel(exec::KernelContext& ctx, const ConvAttrs& attrs);
Status max_pool_kernel(exec::KernelContext& ctx, const PoolAttrs& attrs);
Status batch_normalization_kernel(exec::KernelContext& ctx, const BatchNormAttrs& attrs);

// Conv on channels-last data, X (N, d..., C) and W (M, k..., C/group), without transposing X or Y:
// float, group 1 or depthwise with one filter per channel (false: not handled, the caller
// transposes). Every output has conv_kernel's bits.
Result<bool> conv_channels_last(exec::KernelContext& ctx, const ConvAttrs& attrs);
// Conv's plan-time integer path (docs/arithmetic.md), for the channels-first and channels-last kernels.
exec::PreparedState prepack_conv(const exec::PrepackContext& context);

}  // namespace qonnx::kernels
