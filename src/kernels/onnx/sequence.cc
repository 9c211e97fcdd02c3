// Sequence ops (opset 11 onwards: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, ConcatFromSequence, SplitToSequence; SequenceMap from 17) and the
// Optional ops (15 onwards). Sequences and optionals are Tensor values of kind kSequence/kOptional
// (include/qonnx/tensor.h); their tensors are shared, never copied.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/axis.h"
#include "kernels/common/element_copy.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

// Longest sequence a kernel builds (SplitToSequence of a long axis, SequenceInsert in a loop).
constexpr size_t kMaxSequenceLength = size_t{1} << 24;

Result<const Tensor*> sequence_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (!t->is_sequence())
    return ctx.input_error(Code::kInvalidModel, i, "{} must be a sequence, got a {} value", what, t->type_string());
  return t;
}

Result<const Tensor*> tensor_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (!t->is_tensor())
    return ctx.input_error(Code::kInvalidModel, i, "{} must be a tensor, got a {} value", what, t->type_string());
  return t;
}

// A position input (int32 or int64 scalar) resolved against a sequence of `size`: [-size, size - 1],
// or [-size, size] when `insert`.
Result<int64_t> position(const exec::KernelContext& ctx, size_t i, int64_t size, bool insert) {
  const Tensor* p = ctx.input(i);
  if (!p) return insert ? size : size - 1;
  if (!p->is_tensor() || (p->dtype() != DType::kInt32 && p->dtype() != DType::kInt64) || p->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, i, "position must be one int32 or int64 value, got {} {}", p->type_string(),
                           dims_to_string(p->dims()));
  const int64_t pos = p->dtype() == DType::kInt32 ? int64_t{p->data<int32_t>()[0]} : p->data<int64_t>()[0];
  const int64_t hi = insert ? size : size - 1;
  if (pos < -size || pos > hi)
    return ctx.input_error(Code::kInvalidModel, i, "position {} is outside [{}, {}] for a sequence of {} tensors", pos, -size, hi, size);
  return pos < 0 ? pos + size : pos;
}

Status check_element(const exec::KernelContext& ctx, size_t i, const Tensor& seq, const Tensor& t) {
  if (seq.dtype() != DType::kUndefined && t.dtype() != seq.dtype())
    return ctx.input_error(Code::kInvalidModel, i, "a {} tensor cannot join a sequence of {} tensors", dtype_name(t.dtype()),
                           dtype_name(seq.dtype()));
  return Status::ok();
}

struct DtypeAttr {
  DType dtype = DType::kFloat;
};

Result<DtypeAttr> prepare_sequence_empty(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t code, int_attr(node, "dtype", static_cast<int64_t>(DType::kFloat)));
  if (code <= 0 || code > 22 || !dtype_known(static_cast<int32_t>(code)))
    return Status(Code::kInvalidModel, fmt::format("attribute 'dtype': {} is not a data type", code));
  return DtypeAttr{static_cast<DType>(code)};
}

Status sequence_empty(exec::KernelContext& ctx, const DtypeAttr& a) {
  ctx.set_output(0, Tensor::sequence(a.dtype, {}));
  return Status::ok();
}

Status sequence_construct(exec::KernelContext& ctx) {
  std::vector<Tensor> elements;
  DType dtype = DType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, tensor_input(ctx, i, "inputs"));
    if (i > 0 && t->dtype() != dtype)
      return ctx.input_error(Code::kInvalidModel, i, "is {}, input #0 is {}: a sequence holds one element type",
                             dtype_name(t->dtype()), dtype_name(dtype));
    dtype = t->dtype();
    elements.push_back(*t);
  }
  if (elements.empty()) return ctx.error(Code::kInvalidModel, "SequenceConstruct needs at least one input");
  ctx.set_output(0, Tensor::sequence(dtype, std::move(elements)));
  return Status::ok();
}

Status sequence_insert(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, tensor_input(ctx, 1, "tensor"));
  QONNX_RETURN_IF_ERROR(check_element(ctx, 1, *seq, *t));
  const auto& in = seq->elements();
  if (in.size() >= kMaxSequenceLength) return ctx.input_error(Code::kInvalidModel, 0, "the sequence is too long ({} tensors)", in.size());
  QONNX_ASSIGN_OR_RETURN(const int64_t pos, position(ctx, 2, static_cast<int64_t>(in.size()), true));
  std::vector<Tensor> out(in.begin(), in.end());
  out.insert(out.begin() + pos, *t);
  ctx.set_output(0, Tensor::sequence(t->dtype(), std::move(out)));
  return Status::ok();
}

Status sequence_at(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  if (!ctx.input(1)) return ctx.error(Code::kInvalidModel, "input #1 (position) is required");
  const auto& in = seq->elements();
  if (in.empty()) return ctx.input_error(Code::kInvalidModel, 0, "the sequence is empty");
  QONNX_ASSIGN_OR_RETURN(const int64_t pos, position(ctx, 1, static_cast<int64_t>(in.size()), false));
  ctx.set_output(0, in[static_cast<size_t>(pos)]);
  return Status::ok();
}

Status sequence_erase(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  const auto& in = seq->elements();
  if (in.empty()) return ctx.input_error(Code::kInvalidModel, 0, "cannot erase from an empty sequence");
  QONNX_ASSIGN_OR_RETURN(const int64_t pos, position(ctx, 1, static_cast<int64_t>(in.size()), false));
  std::vector<Tensor> out(in.begin(), in.end());
  out.erase(out.begin() + pos);
  ctx.set_output(0, Tensor::sequence(seq->dtype(), std::move(out)));
  return Status::ok();
}

Status sequence_length(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  ctx.set_output(0, Tensor::scalar<int64_t>(DType::kInt64, static_cast<int64_t>(seq->elements().size())));
  return Status::ok();
}

struct ConcatAttrs {
  int64_t axis = 0;
  bool new_axis = false;
};

Result<ConcatAttrs> prepare_concat_from_sequence(const ir::Node& node, int64_t) {
  ConcatAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.axis, node.attr<int64_t>("axis"));
  QONNX_ASSIGN_OR_RETURN(a.new_axis, flag_attr(node, "new_axis", false));
  return a;
}

// Concatenates (or, with new_axis, stacks) the sequence's tensors along `axis`.
Status concat_from_sequence(exec::KernelContext& ctx, const ConcatAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  const auto& in = seq->elements();
  if (in.empty()) return ctx.input_error(Code::kInvalidModel, 0, "cannot concatenate an empty sequence");
  const Tensor& first = in.front();
  const int64_t rank = static_cast<int64_t>(first.rank());
  int64_t axis = 0;
  if (!normalize_axis(a.axis, a.new_axis ? rank + 1 : rank, &axis))
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank-{} tensors{}", a.axis, rank, a.new_axis ? " (new_axis)" : "");
  // Every part as [outer, extent, inner] with the same outer and inner.
  Dims out_dims = first.dims();
  if (a.new_axis) out_dims.insert(out_dims.begin() + axis, 0);
  int64_t total = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor& t = in[k];
    bool same = t.rank() == first.rank() && t.dtype() == first.dtype();
    for (int64_t d = 0; same && d < rank; ++d)
      same = (!a.new_axis && d == axis) || t.dim(static_cast<size_t>(d)) == first.dim(static_cast<size_t>(d));
    if (!same)
      return ctx.input_error(Code::kInvalidModel, 0, "tensor #{} ({} {}) does not fit tensor #0 ({} {}) along axis {}", k,
                             dtype_name(t.dtype()), dims_to_string(t.dims()), dtype_name(first.dtype()),
                             dims_to_string(first.dims()), a.axis);
    total += a.new_axis ? 1 : t.dim(static_cast<size_t>(axis));
  }
  out_dims[static_cast<size_t>(axis)] = total;
  QONNX_RETURN_IF_ERROR(check_output_dims(ctx, out_dims, first.dtype()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < out_dims.size(); ++d) inner *= out_dims[d];
  Tensor out = Tensor::uninitialized(first.dtype(), out_dims);
  int64_t offset = 0;  // along the axis
  for (const Tensor& t : in) {
    const int64_t extent = a.new_axis ? 1 : t.dim(static_cast<size_t>(axis));
    ElementCopier copy(t, out);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < extent; ++e)
        copy.copy_run((o * total + offset + e) * inner, (o * extent + e) * inner, inner);
    offset += extent;
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

struct SplitAttrs {
  int64_t axis = 0;
  bool keepdims = true;
};

Result<SplitAttrs> prepare_split_to_sequence(const ir::Node& node, int64_t) {
  SplitAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", 0));
  QONNX_ASSIGN_OR_RETURN(a.keepdims, flag_attr(node, "keepdims", true));
  return a;
}

Status split_to_sequence(exec::KernelContext& ctx, const SplitAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = 0;
  if (!normalize_axis(a.axis, rank, &axis)) return ctx.error(Code::kInvalidModel, "axis {} is out of range for rank {}", a.axis, rank);
  const int64_t extent = x->dim(static_cast<size_t>(axis));
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (const Tensor* split = ctx.input(1)) {
    if (!split->is_tensor() || (split->dtype() != DType::kInt32 && split->dtype() != DType::kInt64) || split->rank() > 1)
      return ctx.input_error(Code::kInvalidModel, 1, "split must be an int32 or int64 scalar or 1-D tensor");
    auto at = [&](int64_t i) { return split->dtype() == DType::kInt32 ? int64_t{split->data<int32_t>()[i]} : split->data<int64_t>()[i]; };
    if (split->rank() == 0) {
      const int64_t chunk = at(0);
      if (chunk <= 0) return ctx.input_error(Code::kInvalidModel, 1, "split {} must be positive", chunk);
      if ((extent + chunk - 1) / chunk > static_cast<int64_t>(kMaxSequenceLength))
        return ctx.error(Code::kInvalidModel, "the split makes too many tensors ({})", (extent + chunk - 1) / chunk);
      for (int64_t done = 0; done < extent; done += chunk) sizes.push_back(std::min(chunk, extent - done));
    } else {
      int64_t sum = 0;
      for (int64_t i = 0; i < split->numel(); ++i) {
        if (at(i) < 0) return ctx.input_error(Code::kInvalidModel, 1, "split sizes must not be negative, got {}", at(i));
        sizes.push_back(at(i));
        sum += at(i);
        if (sum > extent || sizes.size() > kMaxSequenceLength) break;
      }
      if (sum != extent)
        return ctx.input_error(Code::kInvalidModel, 1, "split sizes add up to {}, the axis has {}", sum, extent);
    }
  } else {
    if (extent > static_cast<int64_t>(kMaxSequenceLength))
      return ctx.error(Code::kInvalidModel, "the split makes too many tensors ({})", extent);
    sizes.assign(static_cast<size_t>(extent), 1);
    squeeze = !a.keepdims;
  }
  if (sizes.size() > kMaxSequenceLength) return ctx.error(Code::kInvalidModel, "the split makes too many tensors ({})", sizes.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(static_cast<size_t>(d));
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x->dim(static_cast<size_t>(d));
  std::vector<Tensor> parts;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Dims dims = x->dims();
    dims[static_cast<size_t>(axis)] = size;
    Tensor part = Tensor::uninitialized(x->dtype(), dims);
    ElementCopier copy(*x, part);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < size; ++e)
        copy.copy_run((o * size + e) * inner, (o * extent + offset + e) * inner, inner);
    offset += size;
    if (squeeze) dims.erase(dims.begin() + axis);
    parts.push_back(squeeze ? part.reshaped(dims) : std::move(part));
  }
  ctx.set_output(0, Tensor::sequence(x->dtype(), std::move(parts)));
  return Status::ok();
}

// SequenceMap: runs the body once per position of the input sequence; sequence inputs give the
// body their tensor at that position, tensor inputs are given whole; each body output is collected
// into an output sequence.
Status sequence_map(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0, "input_sequence"));
  const size_t n = seq->elements().size();
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, "additional_inputs"));
    if (t->is_optional()) return ctx.input_error(Code::kInvalidModel, i, "must be a tensor or a sequence, got {}", t->type_string());
    if (t->is_sequence() && t->elements().size() != n)
      return ctx.input_error(Code::kInvalidModel, i, "has {} tensors, input_sequence has {}", t->elements().size(), n);
  }
  std::vector<std::vector<Tensor>> outs(ctx.num_outputs());
  for (size_t pos = 0; pos < n; ++pos) {
    std::vector<Tensor> body_in;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      body_in.push_back(t->is_sequence() ? t->elements()[pos] : *t);
    }
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> res, ctx.run_body("body", body_in));
    if (res.size() != outs.size())
      return ctx.error(Code::kInvalidModel, "the body returns {} values, the node has {} outputs", res.size(), outs.size());
    for (size_t k = 0; k < res.size(); ++k) {
      if (!res[k].is_tensor())
        return ctx.error(Code::kInvalidModel, "body output #{} is a {} value, SequenceMap collects tensors", k, res[k].type_string());
      if (!outs[k].empty() && res[k].dtype() != outs[k].front().dtype())
        return ctx.error(Code::kInvalidModel, "body output #{} changes element type between iterations", k);
      outs[k].push_back(std::move(res[k]));
    }
  }
  // With no iteration the element type is the body output's declared one.
  const ir::Graph* body = ctx.node().body("body");
  for (size_t k = 0; k < outs.size(); ++k) {
    DType dtype = outs[k].empty() ? DType::kUndefined : outs[k].front().dtype();
    if (outs[k].empty() && body && k < body->outputs().size()) {
      auto type = body->type_of(body->outputs()[k]);
      if (type) dtype = type->dtype;
    }
    ctx.set_output(k, Tensor::sequence(dtype, std::move(outs[k])));
  }
  return Status::ok();
}

// Optional: wraps its input, or (no input) is an empty optional of the `type` attribute.
struct OptionalAttrs {
  bool has_type = false;
  ValueKind kind = ValueKind::kTensor;
  DType elem = DType::kUndefined;
};

Result<OptionalAttrs> prepare_optional(const ir::Node& node, int64_t) {
  OptionalAttrs a;
  if (node.has_attr("type")) {
    QONNX_ASSIGN_OR_RETURN(auto type, node.attr_value_type("type"));
    a.has_type = true;
    a.kind = type.first;
    a.elem = type.second;
  }
  return a;
}

Status optional_kernel(exec::KernelContext& ctx, const OptionalAttrs& a) {
  if (const Tensor* t = ctx.input(0)) {
    if (t->is_optional()) return ctx.input_error(Code::kInvalidModel, 0, "an optional cannot hold an optional");
    if (a.has_type && (t->kind() != a.kind || t->dtype() != a.elem))
      return ctx.input_error(Code::kInvalidModel, 0, "is a {} value, the 'type' attribute says otherwise", t->type_string());
    ctx.set_output(0, Tensor::optional_of(*t));
    return Status::ok();
  }
  if (!a.has_type) return ctx.error(Code::kInvalidModel, "an Optional without input needs the 'type' attribute");
  ctx.set_output(0, Tensor::optional_none(a.elem, a.kind == ValueKind::kSequence));
  return Status::ok();
}

// OptionalHasElement / OptionalGetElement. From 18 the input may be a tensor or a sequence (taken as
// a present value) and HasElement's input may be omitted (absent).
template <bool Since18>
Status optional_has_element(exec::KernelContext& ctx) {
  const Tensor* t = ctx.input(0);
  if (!t && !Since18) return ctx.error(Code::kInvalidModel, "input #0 (input) is required");
  if (t && !t->is_optional() && !Since18)
    return ctx.input_error(Code::kInvalidModel, 0, "must be an optional, got a {} value", t->type_string());
  const bool has = t && (!t->is_optional() || !t->elements().empty());
  ctx.set_output(0, Tensor::scalar<uint8_t>(DType::kBool, has ? 1 : 0));
  return Status::ok();
}

template <bool Since18>
Status optional_get_element(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(0, "input"));
  if (!t->is_optional()) {
    if (!Since18) return ctx.input_error(Code::kInvalidModel, 0, "must be an optional, got a {} value", t->type_string());
    ctx.set_output(0, *t);
    return Status::ok();
  }
  if (t->elements().empty()) return ctx.input_error(Code::kInvalidModel, 0, "the optional is empty");
  ctx.set_output(0, t->elements().front());
  return Status::ok();
}

exec::Kernel plain(exec::KernelFn fn) { return exec::with_containers(exec::Kernel{fn, nullptr, {}}); }

}  // namespace

void register_sequence_kernels(exec::KernelRegistry& r) {
  using exec::kNoUpperVersion;
  using exec::typed_kernel;
  using exec::with_containers;
  r.add("", "SequenceEmpty", {11, kNoUpperVersion}, with_containers(typed_kernel<DtypeAttr, prepare_sequence_empty, sequence_empty>()));
  r.add("", "SequenceConstruct", {11, kNoUpperVersion}, plain(sequence_construct));
  r.add("", "SequenceInsert", {11, kNoUpperVersion}, plain(sequence_insert));
  r.add("", "SequenceAt", {11, kNoUpperVersion}, plain(sequence_at));
  r.add("", "SequenceErase", {11, kNoUpperVersion}, plain(sequence_erase));
  r.add("", "SequenceLength", {11, kNoUpperVersion}, plain(sequence_length));
  r.add("", "ConcatFromSequence", {11, kNoUpperVersion},
        with_containers(typed_kernel<ConcatAttrs, prepare_concat_from_sequence, concat_from_sequence>()));
  r.add("", "SplitToSequence", {11, kNoUpperVersion},
        with_containers(typed_kernel<SplitAttrs, prepare_split_to_sequence, split_to_sequence>()));
  r.add("", "SequenceMap", {17, kNoUpperVersion}, plain(sequence_map));
  r.add("", "Optional", {15, kNoUpperVersion}, with_containers(typed_kernel<OptionalAttrs, prepare_optional, optional_kernel>()));
  r.add("", "OptionalHasElement", {15, 17}, plain(optional_has_element<false>));
  r.add("", "OptionalHasElement", {18, kNoUpperVersion}, plain(optional_has_element<true>));
  r.add("", "OptionalGetElement", {15, 17}, plain(optional_get_element<false>));
  r.add("", "OptionalGetElement", {18, kNoUpperVersion}, plain(optional_get_element<true>));
}

}  // namespace qonnx::kernels
