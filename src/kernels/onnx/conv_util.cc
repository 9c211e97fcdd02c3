#include "kernels/onnx/conv_util.h"

#include <algorithm>

namespace qonnx::kernels {

Result<Dims> window_attr(const exec::KernelContext& ctx, const std::string& name, size_t count, int64_t lo,
                         int64_t fallback) {
  if (!ctx.has_attr(name)) return Dims(count, fallback);
  Dims v = ctx.attr_ints(name);
  if (v.size() != count)
    return ctx.error(Code::kInvalidModel, "attribute {} has {} values, expected {}", name, v.size(), count);
  for (int64_t x : v)
    if (x < lo || x > kMaxWindowAttr)
      return ctx.error(Code::kInvalidModel, "attribute {} = {} is out of range [{}, {}]", name,
                       dims_to_string(v), lo, kMaxWindowAttr);
  return v;
}

Result<WindowGeometry> window_geometry(const exec::KernelContext& ctx, const Dims& in, const Dims& kernel,
                                       bool ceil_mode) {
  const size_t nd = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  for (int64_t k : kernel)
    if (k < 1 || k > kMaxWindowAttr)
      return ctx.error(Code::kInvalidModel, "kernel shape {} must have sizes in [1, {}]", dims_to_string(kernel),
                       kMaxWindowAttr);
  QONNX_ASSIGN_OR_RETURN(g.strides, window_attr(ctx, "strides", nd, 1, 1));
  QONNX_ASSIGN_OR_RETURN(g.dilations, window_attr(ctx, "dilations", nd, 1, 1));
  QONNX_ASSIGN_OR_RETURN(Dims pads, window_attr(ctx, "pads", 2 * nd, 0, 0));
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(nd), pads.end());
  g.out.resize(nd);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  const bool same_upper = auto_pad == "SAME_UPPER", same_lower = auto_pad == "SAME_LOWER";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && !same_upper && !same_lower)
    return ctx.error(Code::kInvalidModel, "auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                     auto_pad);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t s = g.strides[d], ext = g.extent(d);
    if (same_upper || same_lower) {
      g.out[d] = (in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + ext - in[d]);
      g.pads_begin[d] = same_upper ? total / 2 : total - total / 2;
      g.pads_end[d] = total - g.pads_begin[d];
      continue;
    }
    if (auto_pad == "VALID") g.pads_begin[d] = g.pads_end[d] = 0;
    const int64_t span = in[d] + g.pads_begin[d] + g.pads_end[d] - ext;
    if (span < 0)
      return ctx.error(Code::kInvalidModel, "window of extent {} (kernel {}, dilation {}) exceeds the padded input size {} in spatial dim {}",
                       ext, kernel[d], g.dilations[d], in[d] + g.pads_begin[d] + g.pads_end[d], d);
    g.out[d] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (g.out[d] - 1) * s >= in[d] + g.pads_begin[d]) --g.out[d];
  }
  return g;
}

}  // namespace qonnx::kernels
