#include "kernels/common/conv_util.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/common/attr_check.h"

namespace qonnx::kernels {

Result<WindowList> read_window_list(const ir::Node& node, const std::string& name, int64_t lo) {
  WindowList list;
  list.given = node.has_attr(name);
  if (!list.given) return list;
  QONNX_ASSIGN_OR_RETURN(list.values, ints_attr(node, name.c_str()));
  for (int64_t x : list.values)
    if (x < lo || x > kMaxWindowAttr)
      return Status(Code::kInvalidModel, fmt::format("attribute '{}': {} is out of range [{}, {}]", name,
                                                     dims_to_string(list.values), lo, kMaxWindowAttr));
  return list;
}

Result<WindowAttrs> read_window_attrs(const ir::Node& node, bool kernel_from_weights) {
  WindowAttrs a;
  if (kernel_from_weights) {
    a.kernel_shape.given = node.has_attr("kernel_shape");
    QONNX_ASSIGN_OR_RETURN(a.kernel_shape.values, ints_attr(node, "kernel_shape"));
  } else {
    QONNX_ASSIGN_OR_RETURN(a.kernel_shape, read_window_list(node, "kernel_shape", 1));
  }
  QONNX_ASSIGN_OR_RETURN(a.strides, read_window_list(node, "strides", 1));
  QONNX_ASSIGN_OR_RETURN(a.dilations, read_window_list(node, "dilations", 1));
  QONNX_ASSIGN_OR_RETURN(a.pads, read_window_list(node, "pads", 0));
  QONNX_ASSIGN_OR_RETURN(const std::string auto_pad, string_attr(node, "auto_pad", "NOTSET"));
  QONNX_RETURN_IF_ERROR(check_one_of("auto_pad", auto_pad, {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}));
  if (auto_pad == "SAME_UPPER") a.auto_pad = AutoPad::kSameUpper;
  else if (auto_pad == "SAME_LOWER") a.auto_pad = AutoPad::kSameLower;
  else if (auto_pad == "VALID") a.auto_pad = AutoPad::kValid;
  QONNX_ASSIGN_OR_RETURN(a.ceil_mode, flag_attr(node, "ceil_mode", false));
  return a;
}

Status reject_later_attrs(const ir::Node& node, int64_t version, std::initializer_list<const char*> names, int since) {
  for (const char* name : names)
    if (node.has_attr(name))
      return Status(Code::kInvalidModel,
                    fmt::format("attribute '{}': not an attribute of {}-{} ({} exist{} from {}-{} on)", name, node.op_type(),
                                version, fmt::join(names, " and "), names.size() == 1 ? "s" : "", node.op_type(), since));
  return Status::ok();
}

Result<Dims> window_values(const exec::KernelContext& ctx, const WindowList& list, const char* name, size_t count,
                           int64_t fallback) {
  if (!list.given) return Dims(count, fallback);
  if (list.values.size() != count)
    return ctx.error(Code::kInvalidModel, "attribute {} has {} values, expected {}", name, list.values.size(), count);
  return list.values;
}

Result<WindowGeometry> window_geometry(const exec::KernelContext& ctx, const WindowAttrs& attrs, const Dims& in,
                                       const Dims& kernel) {
  const size_t nd = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  for (int64_t k : kernel)
    if (k < 1 || k > kMaxWindowAttr)
      return ctx.error(Code::kInvalidModel, "kernel shape {} must have sizes in [1, {}]", dims_to_string(kernel),
                       kMaxWindowAttr);
  QONNX_ASSIGN_OR_RETURN(g.strides, window_values(ctx, attrs.strides, "strides", nd, 1));
  QONNX_ASSIGN_OR_RETURN(g.dilations, window_values(ctx, attrs.dilations, "dilations", nd, 1));
  QONNX_ASSIGN_OR_RETURN(Dims pads, window_values(ctx, attrs.pads, "pads", 2 * nd, 0));
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(nd), pads.end());
  g.out.resize(nd);
  const bool same_upper = attrs.auto_pad == AutoPad::kSameUpper, same_lower = attrs.auto_pad == AutoPad::kSameLower;
  for (size_t d = 0; d < nd; ++d) {
    const int64_t s = g.strides[d], ext = g.extent(d);
    if (same_upper || same_lower) {
      g.out[d] = (in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + ext - in[d]);
      g.pads_begin[d] = same_upper ? total / 2 : total - total / 2;
      g.pads_end[d] = total - g.pads_begin[d];
      continue;
    }
    if (attrs.auto_pad == AutoPad::kValid) g.pads_begin[d] = g.pads_end[d] = 0;
    const int64_t span = in[d] + g.pads_begin[d] + g.pads_end[d] - ext;
    if (span < 0)
      return ctx.error(Code::kInvalidModel, "window of extent {} (kernel {}, dilation {}) exceeds the padded input size {} in spatial dim {}",
                       ext, kernel[d], g.dilations[d], in[d] + g.pads_begin[d] + g.pads_end[d], d);
    g.out[d] = (attrs.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (attrs.ceil_mode && (g.out[d] - 1) * s >= in[d] + g.pads_begin[d]) --g.out[d];
  }
  return g;
}

}  // namespace qonnx::kernels
