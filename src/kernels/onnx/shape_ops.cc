// Shape and layout kernels: Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split, Shape, Size, Expand,
// Tile, DepthToSpace, SpaceToDepth (Transpose: transpose.cc). They move bytes only, so they serve every
// dtype.
#include <numeric>
#include <optional>

#include "qonnx/exec/broadcast.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/common/transpose.h"

namespace qonnx::kernels {
namespace {

// An integer list input (shape, axes, repeats, split) as int64 values.
Result<std::vector<int64_t>> int_list_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->rank() > 1) return ctx.input_error(Code::kInvalidModel, i, "{} must be 1-D, got shape {}", what, dims_to_string(t->dims()));
  auto v = read_ints(*t);
  if (!v) return ctx.input_error(Code::kInvalidModel, i, "{} must be int64 or int32, got {}", what, dtype_name(t->dtype()));
  return *v;
}

// Reshape's target: the `shape` attribute (1..4) or input #1 (5 on); a 0 copies the input's dim
// unless `allowzero` (14 on) is set.
enum class ReshapeForm { kAttribute, kInput, kInputAllowZero };
struct ReshapeAttrs {
  std::optional<std::vector<int64_t>> shape;  // kAttribute
  bool allow_zero = false;
};

template <ReshapeForm Form>
Result<ReshapeAttrs> prepare_reshape(const ir::Node& node, int64_t) {
  ReshapeAttrs a;
  if (Form == ReshapeForm::kAttribute) {
    if (!node.has_attr("shape")) return Status(Code::kInvalidModel, "attribute 'shape' is required");
    QONNX_ASSIGN_OR_RETURN(a.shape, ints_attr(node, "shape"));
  }
  if (Form == ReshapeForm::kInputAllowZero) {
    QONNX_ASSIGN_OR_RETURN(a.allow_zero, flag_attr(node, "allowzero", false));
  }
  return a;
}

Status reshape(exec::KernelContext& ctx, const ReshapeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  std::vector<int64_t> shape;
  if (attrs.shape) {
    shape = *attrs.shape;
  } else {
    QONNX_ASSIGN_OR_RETURN(shape, int_list_input(ctx, 1, "shape"));
  }
  const bool allow_zero = attrs.allow_zero;
  Dims out(shape.size());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0 && !allow_zero) {
      if (i >= x->rank())
        return ctx.input_error(Code::kInvalidModel, 1, "shape[{}] = 0 copies a dim the input {} does not have", i,
                               dims_to_string(x->dims()));
      d = x->dim(i);
    } else if (d == -1) {
      if (infer_at >= 0) return ctx.input_error(Code::kInvalidModel, 1, "shape has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    } else if (d < 0) {
      return ctx.input_error(Code::kInvalidModel, 1, "shape[{}] = {} is negative", i, d);
    }
    out[i] = d;
    if (d != 0 && known > INT64_MAX / d) return ctx.input_error(Code::kInvalidModel, 1, "shape overflows");
    known *= d;
  }
  if (infer_at >= 0) {
    if (known == 0)
      return ctx.input_error(Code::kInvalidModel, 1, "cannot infer the -1 dim when other dims are 0 (shape {})",
                             dims_to_string(shape));
    if (x->numel() % known != 0)
      return ctx.input_error(Code::kInvalidModel, 1, "cannot reshape {} to {}", dims_to_string(x->dims()),
                             dims_to_string(shape));
    out[static_cast<size_t>(infer_at)] = x->numel() / known;
  } else if (known != x->numel()) {
    return ctx.input_error(Code::kInvalidModel, 1, "cannot reshape {} ({} elements) to {} ({} elements)",
                           dims_to_string(x->dims()), x->numel(), dims_to_string(out), known);
  }
  ctx.set_output(0, x->reshaped(out));
  return Status::ok();
}

// An `axis` attribute with the op's default (Flatten 1; Concat-1..3 1, from 4 required).
struct AxisAttr {
  int64_t axis;
};

template <int64_t Default>
Result<AxisAttr> prepare_axis(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t axis, int_attr(node, "axis", Default));
  return AxisAttr{axis};
}

Result<AxisAttr> prepare_required_axis(const ir::Node& node, int64_t) {
  if (!node.has_attr("axis")) return Status(Code::kInvalidModel, "attribute 'axis' is required");
  QONNX_ASSIGN_OR_RETURN(const int64_t axis, int_attr(node, "axis", 0));
  return AxisAttr{axis};
}

Status flatten(exec::KernelContext& ctx, const AxisAttr& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = attrs.axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", attrs.axis, rank);
  int64_t outer = checked_numel(Dims(x->dims().begin(), x->dims().begin() + axis));
  int64_t inner = checked_numel(Dims(x->dims().begin() + axis, x->dims().end()));
  ctx.set_output(0, x->reshaped({outer, inner}));
  return Status::ok();
}

// Squeeze/Unsqueeze axes: the attribute (1..12) or input #1 (13 on).
struct AxesAttrs {
  std::optional<std::vector<int64_t>> axes;  // the attribute's, when given (1..12)
  bool from_input = false;
};

template <bool FromInput>
Result<AxesAttrs> prepare_axes(const ir::Node& node, int64_t) {
  AxesAttrs a;
  a.from_input = FromInput;
  if (!FromInput && node.has_attr("axes")) {
    QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  }
  return a;
}

// The axes of `attrs` or input #1; *given tells whether any were supplied.
Result<std::vector<int64_t>> axes_attr_or_input(const exec::KernelContext& ctx, const AxesAttrs& attrs, bool* given) {
  if (!attrs.from_input) {
    *given = attrs.axes.has_value();
    return attrs.axes.value_or(std::vector<int64_t>{});
  }
  *given = ctx.input(1) != nullptr;
  if (!*given) return std::vector<int64_t>{};
  return int_list_input(ctx, 1, "axes");
}

Status squeeze(exec::KernelContext& ctx, const AxesAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  bool given = false;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_attr_or_input(ctx, attrs, &given));
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<bool> drop(x->rank(), false);
  if (!given || axes.empty()) {
    for (size_t i = 0; i < x->rank(); ++i) drop[i] = x->dim(i) == 1;
  } else {
    if (!normalize_axes(&axes, rank))
      return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for rank {}", dims_to_string(axes), rank);
    for (int64_t a : axes) {
      if (x->dim(static_cast<size_t>(a)) != 1)
        return ctx.error(Code::kInvalidModel, "cannot squeeze axis {} of size {} (shape {})", a, x->dim(static_cast<size_t>(a)),
                         dims_to_string(x->dims()));
      drop[static_cast<size_t>(a)] = true;
    }
  }
  Dims out;
  for (size_t i = 0; i < x->rank(); ++i)
    if (!drop[i]) out.push_back(x->dim(i));
  ctx.set_output(0, x->reshaped(out));
  return Status::ok();
}

Status unsqueeze(exec::KernelContext& ctx, const AxesAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  bool given = false;
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_attr_or_input(ctx, attrs, &given));
  if (!given) return ctx.error(Code::kInvalidModel, "axes are required");
  const int64_t out_rank = static_cast<int64_t>(x->rank() + axes.size());
  if (!normalize_axes(&axes, out_rank))
    return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for output rank {}", dims_to_string(axes), out_rank);
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) inserted[static_cast<size_t>(a)] = true;
  Dims out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[static_cast<size_t>(i)] ? 1 : x->dim(next++));
  ctx.set_output(0, x->reshaped(out));
  return Status::ok();
}

Status concat(exec::KernelContext& ctx, const AxisAttr& attrs) {
  if (ctx.num_inputs() == 0) return ctx.error(Code::kInvalidModel, "Concat needs at least one input");
  QONNX_ASSIGN_OR_RETURN(const Tensor* first, ctx.required(0, "inputs"));
  const int64_t rank = static_cast<int64_t>(first->rank());
  int64_t axis = attrs.axis;
  if (rank == 0) return ctx.input_error(Code::kInvalidModel, 0, "Concat inputs must have rank >= 1");
  if (!normalize_axis(axis, rank, &axis)) return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", axis, rank);
  const size_t ax = static_cast<size_t>(axis);
  Dims out_dims = first->dims();
  out_dims[ax] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, "inputs"));
    if (t->dtype() != first->dtype())
      return ctx.input_error(Code::kInvalidModel, i, "type {} differs from input #0's {}", dtype_name(t->dtype()), dtype_name(first->dtype()));
    if (t->rank() != first->rank())
      return ctx.input_error(Code::kInvalidModel, i, "rank {} differs from input #0's {}", t->rank(), rank);
    for (size_t d = 0; d < t->rank(); ++d)
      if (d != ax && t->dim(d) != first->dim(d))
        return ctx.input_error(Code::kInvalidModel, i, "shape {} does not match input #0's {} outside axis {}",
                               dims_to_string(t->dims()), dims_to_string(first->dims()), axis);
    if (out_dims[ax] > INT64_MAX - t->dim(ax)) return ctx.error(Code::kInvalidModel, "concatenated axis overflows");
    out_dims[ax] += t->dim(ax);
  }
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, first->dtype()));
  Tensor out(first->dtype(), out_dims);
  const int64_t outer = checked_numel(Dims(out_dims.begin(), out_dims.begin() + axis));
  const int64_t inner = checked_numel(Dims(out_dims.begin() + axis + 1, out_dims.end()));
  const int64_t out_row = out_dims[ax] * inner;
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    const ElementCopier copier(*t, out);
    const int64_t row = t->dim(ax) * inner;
    for (int64_t o = 0; o < outer; ++o) copier.copy_run(o * out_row + offset, o * row, row);
    offset += row;
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Split's sizes: the `split` attribute (2..12), input #1 (13 on); without them equal parts (2..17) or
// `num_outputs` parts of ceil(dim / num_outputs), the last smaller (18 on).
enum class SplitForm { kAttribute, kInputOrEqual, kInputOrNumOutputs };
struct SplitAttrs {
  SplitForm form;
  int64_t axis;
  std::vector<int64_t> sizes;  // kAttribute
  std::optional<int64_t> num_outputs;
};

template <SplitForm Form>
Result<SplitAttrs> prepare_split(const ir::Node& node, int64_t) {
  SplitAttrs a{Form, 0, {}, std::nullopt};
  QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 0));
  if (Form == SplitForm::kAttribute) {
    QONNX_ASSIGN_OR_RETURN(a.sizes, ints_attr(node, "split"));
  }
  if (Form == SplitForm::kInputOrNumOutputs && node.has_attr("num_outputs")) {
    QONNX_ASSIGN_OR_RETURN(a.num_outputs, int_attr(node, "num_outputs", 0));
  }
  return a;
}

Status split(exec::KernelContext& ctx, const SplitAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = attrs.axis;
  if (!normalize_axis(axis, rank, &axis)) return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", axis, rank);
  const size_t ax = static_cast<size_t>(axis);
  const int64_t dim = x->dim(ax);
  const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t> sizes = attrs.sizes;
  if (attrs.form != SplitForm::kAttribute && ctx.input(1)) {
    QONNX_ASSIGN_OR_RETURN(sizes, int_list_input(ctx, 1, "split"));
  }
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != n_out)
      return ctx.error(Code::kInvalidModel, "split has {} entries for {} outputs", sizes.size(), n_out);
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > dim) return ctx.error(Code::kInvalidModel, "split size {} is invalid for axis size {}", s, dim);
      sum += s;
    }
    if (sum != dim) return ctx.error(Code::kInvalidModel, "split sizes {} do not sum to the axis size {}", dims_to_string(sizes), dim);
  } else if (attrs.form == SplitForm::kInputOrNumOutputs) {
    if (!attrs.num_outputs) return ctx.error(Code::kInvalidModel, "either input 'split' or attribute 'num_outputs' is required");
    const int64_t n = *attrs.num_outputs;
    if (n != n_out) return ctx.error(Code::kInvalidModel, "num_outputs {} differs from the node's {} outputs", n, n_out);
    const int64_t chunk = n > 0 ? (dim + n - 1) / n : 0;
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - k * chunk)));
  } else {
    if (n_out == 0 || dim % n_out != 0)
      return ctx.error(Code::kInvalidModel, "axis size {} does not split into {} equal parts", dim, n_out);
    sizes.assign(static_cast<size_t>(n_out), dim / n_out);
  }
  const int64_t outer = checked_numel(Dims(x->dims().begin(), x->dims().begin() + axis));
  const int64_t inner = checked_numel(Dims(x->dims().begin() + axis + 1, x->dims().end()));
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Dims d = x->dims();
    d[ax] = sizes[k];
    Tensor out(x->dtype(), d);
    const ElementCopier copier(*x, out);
    const int64_t row = sizes[k] * inner;
    for (int64_t o = 0; o < outer; ++o) copier.copy_run(o * row, o * dim * inner + offset, row);
    offset += row;
    ctx.set_output(k, std::move(out));
  }
  return Status::ok();
}

// Shape-15 slices the shape by `start` and `end`; before 15 it is the whole shape.
struct ShapeAttrs {
  int64_t start = 0;
  std::optional<int64_t> end;  // default: the rank
};

template <bool Slice>
Result<ShapeAttrs> prepare_shape(const ir::Node& node, int64_t) {
  ShapeAttrs a;
  if (!Slice) return a;
  QONNX_ASSIGN_OR_RETURN(a.start, int_attr(node, "start", 0));
  if (node.has_attr("end")) {
    QONNX_ASSIGN_OR_RETURN(a.end, int_attr(node, "end", 0));
  }
  return a;
}

Status shape(exec::KernelContext& ctx, const ShapeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t start = attrs.start, end = attrs.end.value_or(rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  const int64_t n = std::max<int64_t>(0, end - start);
  Tensor out(DType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) out.data<int64_t>()[i] = x->dim(static_cast<size_t>(start + i));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status size(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  ctx.set_output(0, Tensor::scalar<int64_t>(DType::kInt64, x->numel()));
  return Status::ok();
}

Status expand(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, int_list_input(ctx, 1, "shape"));
  for (int64_t d : shape)
    if (d < 0) return ctx.input_error(Code::kInvalidModel, 1, "shape {} has a negative dim", dims_to_string(shape));
  Dims out_dims;
  if (!exec::broadcast_dims(x->dims(), shape, &out_dims))
    return ctx.input_error(Code::kInvalidModel, 1, "input shape {} does not broadcast to {}", dims_to_string(x->dims()),
                           dims_to_string(shape));
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  const std::vector<int64_t> strides = exec::broadcast_strides(x->dims(), out_dims);
  std::vector<std::vector<int64_t>> tables(out_dims.size());
  for (size_t a = 0; a < out_dims.size(); ++a)
    for (int64_t c = 0; c < out_dims[a]; ++c) tables[a].push_back(c * strides[a]);
  Tensor out(x->dtype(), out_dims);
  copy_by_axis_tables(*x, out, tables);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status tile(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, int_list_input(ctx, 1, "repeats"));
  if (repeats.size() != x->rank())
    return ctx.input_error(Code::kInvalidModel, 1, "repeats has {} entries for an input of rank {}", repeats.size(), x->rank());
  Dims out_dims(x->rank());
  for (size_t a = 0; a < x->rank(); ++a) {
    if (repeats[a] < 0) return ctx.input_error(Code::kInvalidModel, 1, "repeats {} has a negative entry", dims_to_string(repeats));
    if (x->dim(a) != 0 && repeats[a] > INT64_MAX / x->dim(a)) return ctx.input_error(Code::kInvalidModel, 1, "repeats overflow");
    out_dims[a] = x->dim(a) * repeats[a];
  }
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  const std::vector<int64_t> strides = row_major_strides(x->dims());
  std::vector<std::vector<int64_t>> tables(out_dims.size());
  for (size_t a = 0; a < out_dims.size(); ++a)
    for (int64_t c = 0; c < out_dims[a]; ++c) tables[a].push_back((c % x->dim(a)) * strides[a]);
  Tensor out(x->dtype(), out_dims);
  copy_by_axis_tables(*x, out, tables);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// DepthToSpace / SpaceToDepth: `blocksize`, and DepthToSpace's `mode` (DCR or CRD, from 11; DCR before).
struct BlockAttrs {
  int64_t blocksize;
  bool crd = false;
};

template <bool Mode>
Result<BlockAttrs> prepare_block(const ir::Node& node, int64_t) {
  BlockAttrs a{0};
  QONNX_ASSIGN_OR_RETURN(a.blocksize, int_attr(node, "blocksize", 0));
  if (a.blocksize <= 0)
    return Status(Code::kInvalidModel, fmt::format("attribute 'blocksize' must be positive, got {}", a.blocksize));
  if (Mode) {
    QONNX_ASSIGN_OR_RETURN(const std::string mode, string_attr(node, "mode", "DCR"));
    QONNX_RETURN_IF_ERROR(check_one_of("mode", mode, {"DCR", "CRD"}));
    a.crd = mode == "CRD";
  }
  return a;
}

// DepthToSpace / SpaceToDepth are a reshape to 6-D, a transpose and a reshape back.
Status depth_to_space(exec::KernelContext& ctx, const BlockAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const int64_t b = attrs.blocksize;
  if (x->rank() != 4) return ctx.input_error(Code::kInvalidModel, 0, "input must be 4-D, got {}", dims_to_string(x->dims()));
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (b > INT32_MAX || c % (b * b) != 0)
    return ctx.input_error(Code::kInvalidModel, 0, "channels {} are not divisible by blocksize^2 ({})", c, b);
  const int64_t c_out = c / (b * b);
  const Tensor t = attrs.crd ? transposed(x->reshaped({n, c_out, b, b, h, w}), {0, 1, 4, 2, 5, 3})
                             : transposed(x->reshaped({n, b, b, c_out, h, w}), {0, 3, 4, 1, 5, 2});
  ctx.set_output(0, t.reshaped({n, c_out, h * b, w * b}));
  return Status::ok();
}

Status space_to_depth(exec::KernelContext& ctx, const BlockAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const int64_t b = attrs.blocksize;
  if (x->rank() != 4) return ctx.input_error(Code::kInvalidModel, 0, "input must be 4-D, got {}", dims_to_string(x->dims()));
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (b > INT32_MAX || h % b != 0 || w % b != 0)
    return ctx.input_error(Code::kInvalidModel, 0, "spatial dims {}x{} are not divisible by blocksize {}", h, w, b);
  Tensor t = transposed(x->reshaped({n, c, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
  ctx.set_output(0, t.reshaped({n, c * b * b, h / b, w / b}));
  return Status::ok();
}

}  // namespace

void register_shape_kernels(exec::KernelRegistry& r) {
  using exec::typed_kernel;
  constexpr int kLatest = exec::kNoUpperVersion;
  r.add("", "Reshape", {1, 4}, typed_kernel<ReshapeAttrs, prepare_reshape<ReshapeForm::kAttribute>, reshape>());
  r.add("", "Reshape", {5, 13}, typed_kernel<ReshapeAttrs, prepare_reshape<ReshapeForm::kInput>, reshape>());
  r.add("", "Reshape", {14, kLatest}, typed_kernel<ReshapeAttrs, prepare_reshape<ReshapeForm::kInputAllowZero>, reshape>());
  r.add("", "Flatten", {1, kLatest}, typed_kernel<AxisAttr, prepare_axis<1>, flatten>());
  r.add("", "Squeeze", {1, 12}, typed_kernel<AxesAttrs, prepare_axes<false>, squeeze>());
  r.add("", "Squeeze", {13, kLatest}, typed_kernel<AxesAttrs, prepare_axes<true>, squeeze>());
  r.add("", "Unsqueeze", {1, 12}, typed_kernel<AxesAttrs, prepare_axes<false>, unsqueeze>());
  r.add("", "Unsqueeze", {13, kLatest}, typed_kernel<AxesAttrs, prepare_axes<true>, unsqueeze>());
  r.add("", "Concat", {1, 3}, typed_kernel<AxisAttr, prepare_axis<1>, concat>());
  r.add("", "Concat", {4, kLatest}, typed_kernel<AxisAttr, prepare_required_axis, concat>());
  // Split-1 (sizes as attribute or input #1) has no kernel.
  r.add("", "Split", {2, 12}, typed_kernel<SplitAttrs, prepare_split<SplitForm::kAttribute>, split>());
  r.add("", "Split", {13, 17}, typed_kernel<SplitAttrs, prepare_split<SplitForm::kInputOrEqual>, split>());
  r.add("", "Split", {18, kLatest}, typed_kernel<SplitAttrs, prepare_split<SplitForm::kInputOrNumOutputs>, split>());
  r.add("", "Shape", {1, 14}, typed_kernel<ShapeAttrs, prepare_shape<false>, shape>());
  r.add("", "Shape", {15, kLatest}, typed_kernel<ShapeAttrs, prepare_shape<true>, shape>());
  r.add("", "Size", {1, kLatest}, size);
  r.add("", "Expand", {8, kLatest}, expand);
  // Tile-1 (tiles and axis as inputs) has no kernel.
  r.add("", "Tile", {6, kLatest}, tile);
  r.add("", "DepthToSpace", {1, 10}, typed_kernel<BlockAttrs, prepare_block<false>, depth_to_space>());
  r.add("", "DepthToSpace", {11, kLatest}, typed_kernel<BlockAttrs, prepare_block<true>, depth_to_space>());
  r.add("", "SpaceToDepth", {1, kLatest}, typed_kernel<BlockAttrs, prepare_block<false>, space_to_depth>());
}

}  // namespace qonnx::kernels
