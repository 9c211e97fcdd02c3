// Slice, Pad, Trilu and ReverseSequence: index remapping on bytes, for every dtype.
#include <optional>

#include "qonnx/exec/dtype_dispatch.h"
#include "kernels/common/attr_check.h"
#include "kernels/common/axes.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// Optional 1-D integer input #i; `given` tells whether it was present.
Result<std::vector<int64_t>> optional_ints(const exec::KernelContext& ctx, size_t i, const char* what, bool* given) {
  const Tensor* t = ctx.input(i);
  *given = t != nullptr;
  if (!t) return std::vector<int64_t>{};
  auto v = read_ints(*t);
  if (!v || t->rank() > 1)
    return ctx.input_error(Code::kInvalidModel, i, "{} must be a 1-D int32/int64 tensor, got {} {}", what, dtype_name(t->dtype()),
                           dims_to_string(t->dims()));
  return *v;
}

// Slice-1..9 take starts, ends and axes as attributes; from 10 they (and steps) are inputs.
struct SliceAttrs {
  bool from_inputs;
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes;
};

template <bool FromInputs>
Result<SliceAttrs> prepare_slice(const ir::Node& node, int64_t) {
  SliceAttrs a{FromInputs, {}, {}, std::nullopt};
  if (FromInputs) return a;
  QONNX_ASSIGN_OR_RETURN(a.starts, ints_attr(node, "starts"));
  QONNX_ASSIGN_OR_RETURN(a.ends, ints_attr(node, "ends"));
  if (node.has_attr("axes")) {
    QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  }
  return a;
}

Status slice(exec::KernelContext& ctx, const SliceAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (!attrs.from_inputs) {
    starts = attrs.starts;
    ends = attrs.ends;
    has_axes = attrs.axes.has_value();
    axes = attrs.axes.value_or(std::vector<int64_t>{});
  } else {
    bool given = false;
    QONNX_ASSIGN_OR_RETURN(starts, optional_ints(ctx, 1, "starts", &given));
    if (!given) return ctx.error(Code::kInvalidModel, "input #1 (starts) is required");
    QONNX_ASSIGN_OR_RETURN(ends, optional_ints(ctx, 2, "ends", &given));
    if (!given) return ctx.error(Code::kInvalidModel, "input #2 (ends) is required");
    QONNX_ASSIGN_OR_RETURN(axes, optional_ints(ctx, 3, "axes", &has_axes));
    QONNX_ASSIGN_OR_RETURN(steps, optional_ints(ctx, 4, "steps", &has_steps));
  }
  if (ends.size() != starts.size())
    return ctx.error(Code::kInvalidModel, "starts has {} entries but ends has {}", starts.size(), ends.size());
  if (!has_axes) {
    axes.resize(starts.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (!has_steps) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.error(Code::kInvalidModel, "starts, ends, axes and steps must have the same length ({}, {}, {}, {})", starts.size(),
                     ends.size(), axes.size(), steps.size());
  if (!normalize_axes(&axes, rank))
    return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for rank {}", dims_to_string(axes), rank);
  // Per axis: first element and step; untouched axes take everything.
  std::vector<int64_t> first(x->rank(), 0), step(x->rank(), 1);
  Dims out_dims = x->dims();
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    const int64_t d = x->dim(a), s = steps[i];
    if (s == 0) return ctx.error(Code::kInvalidModel, "steps must not be 0 (axis {})", axes[i]);
    // Negative bounds count from the end; then clamp to [0, d] going forward, [-1, d-1] going back.
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b = b < -d ? -1 : b + d;
    if (e < 0) e = e < -d ? -1 : e + d;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else {
      b = std::clamp<int64_t>(b, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    int64_t n = 0;
    if (s > 0 && e > b) n = (e - b - 1) / s + 1;
    if (s < 0 && b > e) n = (b - e - 1) / (-s) + 1;
    first[a] = b;
    step[a] = s;
    out_dims[a] = n;
  }
  const std::vector<int64_t> strides = row_major_strides(x->dims());
  std::vector<std::vector<int64_t>> tables(x->rank());
  for (size_t a = 0; a < x->rank(); ++a)
    for (int64_t c = 0; c < out_dims[a]; ++c) tables[a].push_back((first[a] + c * step[a]) * strides[a]);
  Tensor out(x->dtype(), out_dims);
  copy_by_axis_tables(*x, out, tables);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Source coordinate of padded position i (already shifted by the leading pad) along an axis of
// size d, or kOutside for constant padding.
int64_t pad_source(int64_t i, int64_t d, const std::string& mode) {
  if (i >= 0 && i < d) return i;
  if (mode == "edge") return i < 0 ? 0 : d - 1;
  if (mode == "wrap") return ((i % d) + d) % d;
  if (mode == "reflect") {
    if (d == 1) return 0;
    const int64_t period = 2 * (d - 1);
    int64_t m = ((i % period) + period) % period;
    return m < d ? m : period - m;
  }
  return kOutside;
}

// Pad's forms: pads and value as attributes (2..10), as inputs #1 and #2 (11..17), with the axes
// input #3 (18), and the wrap mode (19 on).
enum class PadForm { kAttributes, kInputs, kInputsAxes, kInputsAxesWrap };
struct PadAttrs {
  PadForm form;
  std::string mode;
  std::vector<int64_t> pads;  // kAttributes
  float value = 0.0f;         // kAttributes
};

template <PadForm Form>
Result<PadAttrs> prepare_pad(const ir::Node& node, int64_t) {
  PadAttrs a{Form, "constant", {}, 0.0f};
  QONNX_ASSIGN_OR_RETURN(a.mode, string_attr(node, "mode", "constant"));
  const bool wrap = Form == PadForm::kInputsAxesWrap;
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && !(a.mode == "wrap" && wrap))
    return Status(Code::kInvalidModel, fmt::format("mode '{}' is not constant, reflect, edge{}", a.mode, wrap ? " or wrap" : ""));
  if (Form == PadForm::kAttributes) {
    QONNX_ASSIGN_OR_RETURN(a.pads, ints_attr(node, "pads"));
    QONNX_ASSIGN_OR_RETURN(a.value, float_attr(node, "value", 0.0f));
  }
  return a;
}

Status pad(exec::KernelContext& ctx, const PadAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  const std::string& mode = attrs.mode;
  std::vector<int64_t> pads, axes;
  bool has_axes = false;
  Tensor fill;
  if (attrs.form == PadForm::kAttributes) {
    pads = attrs.pads;
    if (x->dtype() == DType::kString) return ctx.error(Code::kUnsupported, "Pad-2 on strings is not supported");
    QONNX_ASSIGN_OR_RETURN(fill, exec::cast_tensor(Tensor::scalar<float>(DType::kFloat, attrs.value), x->dtype()));
  } else {
    bool given = false;
    QONNX_ASSIGN_OR_RETURN(pads, optional_ints(ctx, 1, "pads", &given));
    if (!given) return ctx.error(Code::kInvalidModel, "input #1 (pads) is required");
    const Tensor* value = ctx.input(2);
    if (value) {
      if (value->numel() != 1)
        return ctx.input_error(Code::kInvalidModel, 2, "constant_value must hold one element, got shape {}", dims_to_string(value->dims()));
      if (value->dtype() != x->dtype())
        return ctx.input_error(Code::kInvalidModel, 2, "type {} differs from data's {}", dtype_name(value->dtype()), dtype_name(x->dtype()));
      fill = *value;
    } else {
      fill = Tensor(x->dtype(), {});  // zero (or "" for strings)
    }
    if (attrs.form != PadForm::kInputs) {
      QONNX_ASSIGN_OR_RETURN(axes, optional_ints(ctx, 3, "axes", &has_axes));
    }
  }
  if (!has_axes) {
    axes.resize(x->rank());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  }

  if (!normalize_axes(&axes, rank))
    return ctx.error(Code::kInvalidModel, "axes {} are out of range or repeated for rank {}", dims_to_string(axes), rank);
  if (pads.size() != 2 * axes.size())
    return ctx.error(Code::kInvalidModel, "pads has {} entries, expected {} (2 per padded axis)", pads.size(), 2 * axes.size());
  std::vector<int64_t> before(x->rank(), 0), after(x->rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[static_cast<size_t>(axes[i])] = pads[i];
    after[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  Dims out_dims(x->rank());
  for (size_t a = 0; a < x->rank(); ++a) {
    const int64_t d = x->dim(a), lo = before[a], hi = after[a];
    constexpr int64_t kLimit = int64_t{1} << 52;
    if (lo > kLimit || hi > kLimit || lo < -kLimit || hi < -kLimit || d + lo + hi < 0)
      return ctx.error(Code::kInvalidModel, "pads {} are invalid for shape {}", dims_to_string(pads), dims_to_string(x->dims()));
    out_dims[a] = d + lo + hi;
    if (d == 0 && out_dims[a] > 0 && mode != "constant")
      return ctx.error(Code::kInvalidModel, "{} padding of an empty axis {} is undefined", mode, a);
  }
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, x->dtype()));
  const std::vector<int64_t> strides = row_major_strides(x->dims());
  std::vector<std::vector<int64_t>> tables(x->rank());
  for (size_t a = 0; a < x->rank(); ++a) {
    for (int64_t c = 0; c < out_dims[a]; ++c) {
      const int64_t s = pad_source(c - before[a], x->dim(a), mode);
      tables[a].push_back(s == kOutside ? kOutside : s * strides[a]);
    }
  }
  Tensor out(x->dtype(), out_dims);
  copy_by_axis_tables(*x, out, tables, &fill);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Trilu's `upper` (default 1).
struct TriluAttrs {
  bool upper;
};

Result<TriluAttrs> prepare_trilu(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const bool upper, flag_attr(node, "upper", true));
  return TriluAttrs{upper};
}

Status trilu(exec::KernelContext& ctx, const TriluAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (x->rank() < 2) return ctx.input_error(Code::kInvalidModel, 0, "input must have rank >= 2, got {}", dims_to_string(x->dims()));
  if (x->dtype() == DType::kString) return ctx.error(Code::kUnsupported, "Trilu on strings is not supported");
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    auto v = read_ints(*kt);
    if (!v || v->size() != 1) return ctx.input_error(Code::kInvalidModel, 1, "k must be one int64 value");
    k = (*v)[0];
  }
  const bool upper = attrs.upper;
  const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
  // Clamp k so that j - i comparisons below cannot overflow.
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  Tensor out(x->dtype(), x->dims());  // zero-filled
  const ElementCopier copier(*x, out);
  const int64_t matrices = x->numel() == 0 ? 0 : x->numel() / (rows * cols);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t base = (m * rows + i) * cols;
      // upper keeps j >= i + k, lower keeps j <= i + k.
      const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      copier.copy_run(base + lo, base + lo, hi - lo);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

struct ReverseSequenceAttrs {
  int64_t batch_axis, time_axis;
};

Result<ReverseSequenceAttrs> prepare_reverse_sequence(const ir::Node& node, int64_t) {
  ReverseSequenceAttrs a{1, 0};
  QONNX_ASSIGN_OR_RETURN(a.batch_axis, int_attr(node, "batch_axis", 1));
  QONNX_ASSIGN_OR_RETURN(a.time_axis, int_attr(node, "time_axis", 0));
  if (!((a.batch_axis == 0 && a.time_axis == 1) || (a.batch_axis == 1 && a.time_axis == 0)))
    return Status(Code::kInvalidModel, fmt::format("attributes 'batch_axis'/'time_axis' must be 0/1 or 1/0, got {}/{}",
                                                   a.batch_axis, a.time_axis));
  return a;
}

Status reverse_sequence(exec::KernelContext& ctx, const ReverseSequenceAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* lens_t, ctx.required(1, "sequence_lens"));
  if (x->rank() < 2) return ctx.input_error(Code::kInvalidModel, 0, "input must have rank >= 2, got {}", dims_to_string(x->dims()));
  const int64_t batch_axis = attrs.batch_axis, time_axis = attrs.time_axis;
  const int64_t batch = x->dim(static_cast<size_t>(batch_axis)), time = x->dim(static_cast<size_t>(time_axis));
  auto lens = read_ints(*lens_t);
  if (!lens || lens_t->rank() != 1 || static_cast<int64_t>(lens->size()) != batch)
    return ctx.input_error(Code::kInvalidModel, 1, "sequence_lens must be a 1-D int64 tensor of {} entries", batch);
  for (int64_t l : *lens)
    if (l < 0 || l > time) return ctx.input_error(Code::kInvalidModel, 1, "sequence length {} is outside [0, {}]", l, time);
  const int64_t inner = x->numel() == 0 ? 0 : x->numel() / (batch * time);
  Tensor out(x->dtype(), x->dims());
  const ElementCopier copier(*x, out);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < time; ++t) {
      const int64_t src_t = t < (*lens)[static_cast<size_t>(b)] ? (*lens)[static_cast<size_t>(b)] - 1 - t : t;
      auto offset = [&](int64_t tt) { return (time_axis == 0 ? tt * batch + b : b * time + tt) * inner; };
      copier.copy_run(offset(t), offset(src_t), inner);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_slice_pad_kernels(exec::KernelRegistry& r) {
  r.add("", "Slice", {1, 9}, exec::typed_kernel<SliceAttrs, prepare_slice<false>, slice>());
  r.add("", "Slice", {10, exec::kNoUpperVersion}, exec::typed_kernel<SliceAttrs, prepare_slice<true>, slice>());
  r.add("", "Pad", {2, 10}, exec::typed_kernel<PadAttrs, prepare_pad<PadForm::kAttributes>, pad>());
  r.add("", "Pad", {11, 17}, exec::typed_kernel<PadAttrs, prepare_pad<PadForm::kInputs>, pad>());
  r.add("", "Pad", {18, 18}, exec::typed_kernel<PadAttrs, prepare_pad<PadForm::kInputsAxes>, pad>());
  r.add("", "Pad", {19, exec::kNoUpperVersion}, exec::typed_kernel<PadAttrs, prepare_pad<PadForm::kInputsAxesWrap>, pad>());
  r.add("", "Trilu", {14, exec::kNoUpperVersion}, exec::typed_kernel<TriluAttrs, prepare_trilu, trilu>());
  r.add("", "ReverseSequence", {10, exec::kNoUpperVersion},
        exec::typed_kernel<ReverseSequenceAttrs, prepare_reverse_sequence, reverse_sequence>());
}

}  // namespace qonnx::kernels
